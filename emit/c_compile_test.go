package emit_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// cWarnings are the warnings generated C must compile clean under.
var cWarnings = []string{
	"-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion", "-Wsign-conversion",
	"-Wshadow", "-Wcast-qual", "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wredundant-decls", "-Wundef",
}

// cCompiler is one compiler configuration the generated sources are
// checked with.
type cCompiler struct {
	name string
	cmd  string
	args []string // before the warnings
}

// cCompilers is the matrix of the issue: gcc and clang at C99 and C11, and
// arm-none-eabi-gcc for a Cortex-M55 and a Cortex-M4 at -Os. The firmware
// targets come first: a big plain-C source is compiled by the first
// compiler found only.
var cCompilers = []cCompiler{
	{"arm-m55", "arm-none-eabi-gcc", []string{"-mcpu=cortex-m55", "-mthumb", "-Os", "-std=c11"}},
	{"arm-m4", "arm-none-eabi-gcc", []string{"-mcpu=cortex-m4", "-mthumb", "-Os", "-std=c99"}},
	{"gcc-c99", "gcc", []string{"-std=c99", "-O0"}},
	{"gcc-c11", "gcc", []string{"-std=c11", "-O0"}},
	{"clang-c99", "clang", []string{"-std=c99", "-O0"}},
	{"clang-c11", "clang", []string{"-std=c11", "-O0"}},
}

// cxxCompilers check that the header is usable from C++ (TFLM is C++).
var cxxCompilers = []cCompiler{
	{"g++", "g++", []string{"-std=c++11"}},
	{"clang++", "clang++", []string{"-std=c++11"}},
}

// readModel loads a model file.
func readModel(t testing.TB, path string) *graph.Model {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	return m
}

// compileModelC runs the pipeline on a model file and returns its C files.
func compileModelC(t testing.TB, path string, opts emit.COptions) emit.Files {
	t.Helper()
	return pipelineC(t, readModel(t, path), plan.Options{}, opts)
}

// pipelineC plans m and returns its C module.
func pipelineC(t testing.TB, m *graph.Model, po plan.Options, opts emit.COptions) emit.Files {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, po)
	require.NoError(t, err)
	files, err := emit.C(m, p, opts)
	require.NoError(t, err)
	return files
}

func writeFiles(t testing.TB, dir string, files emit.Files) {
	t.Helper()
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
}

// run runs a command in dir and fails the test with its output on error.
func run(t testing.TB, dir, cmd string, args ...string) {
	t.Helper()
	if out, err := runOut(t, dir, cmd, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", cmd, strings.Join(args, " "), err, out)
	}
}

// runOut runs a command in dir and returns its output and error.
func runOut(t testing.TB, dir, cmd string, args ...string) (string, error) {
	t.Helper()
	c := exec.Command(cmd, args...)
	c.Dir = dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	t.Logf("%s %s: %v", cmd, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String(), err
}

// bigC is the size of a generated .c above which the corpus test writes
// the model's constants as binary files (emit.ConstantsIncbin) for the
// compiler matrix, and compiles the plain-C form with one compiler only: a
// few models carry megabytes of weights, and C compilers take several CPU
// seconds per megabyte of initializer.
const bigC = 1 << 20

// sources returns the files of a module a compiler takes: the .c and, when
// constants are binary files, the assembler stub.
func sources(files emit.Files) []string {
	var out []string
	for _, f := range files[1:] {
		if strings.HasSuffix(f.Name, ".c") || strings.HasSuffix(f.Name, ".S") {
			out = append(out, f.Name)
		}
	}
	return out
}

// checkCompiles writes files to a fresh directory and compiles the module
// with every C compiler configuration on PATH (only the first one found
// when just is set), and a C++ file including the header with every C++
// compiler, in parallel subtests.
func checkCompiles(t *testing.T, files emit.Files, just bool) {
	dir := t.TempDir()
	writeFiles(t, dir, files)
	h := files[0].Name
	cxx := "include_" + strings.TrimSuffix(h, ".h") + ".cpp"
	require.NoError(t, os.WriteFile(filepath.Join(dir, cxx), []byte("#include \""+h+"\"\n"), 0o644))
	found := false
	for _, cc := range cCompilers {
		t.Run(cc.name, func(t *testing.T) {
			if _, err := exec.LookPath(cc.cmd); err != nil {
				t.Skipf("%s not on PATH", cc.cmd)
			}
			if just && found {
				t.Skipf("%s is %d bytes; compiled with one compiler only (HELIAC_C_ALL=1 compiles it with all)", files[1].Name, len(files[1].Data))
			}
			found = true
			t.Parallel()
			for _, src := range sources(files) {
				obj := strings.TrimSuffix(src, filepath.Ext(src)) + "." + cc.name + ".o"
				args := append(slices.Clone(cc.args), cWarnings...)
				if strings.HasSuffix(src, ".S") {
					args = slices.Clone(cc.args[:len(cc.args)-1]) // no -std for the assembler
				}
				run(t, dir, cc.cmd, append(args, "-c", src, "-o", obj)...)
			}
		})
	}
	for _, cc := range cxxCompilers {
		t.Run(cc.name, func(t *testing.T) {
			if _, err := exec.LookPath(cc.cmd); err != nil {
				t.Skipf("%s not on PATH", cc.cmd)
			}
			t.Parallel()
			run(t, dir, cc.cmd, append(slices.Clone(cc.args),
				"-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion", "-Wsign-conversion", "-Wshadow", "-Wcast-qual",
				"-Wold-style-cast", "-fsyntax-only", cxx)...)
		})
	}
}

// stagedPlatform is generic with a second RAM, DTCM, that constants are
// staged into from FLASH by stagedRules.
func stagedPlatform() *plan.Platform {
	return &plan.Platform{Name: "staged", Banks: []plan.Bank{
		{Name: "SRAM", Writable: true}, {Name: "DTCM", Writable: true, Order: 1}, {Name: "FLASH", Order: 2}}}
}

var stagedRules = []plan.Rule{{Class: "constant", Memory: "DTCM", Source: "FLASH"}}

// TestCCompilesInline compiles the C for the inline unit-test models, and
// for the dense model with its constants staged into another RAM, with
// external arenas, with constants as binary files, on a platform with
// sections, with kernel scratch, and with two scratch arenas in one memory.
func TestCCompilesInline(t *testing.T) {
	apollo510, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	bootInit := apollo510
	bootInit.Banks = slices.Clone(apollo510.Banks)
	bootInit.Banks[1].BootInit = true // SRAM: constants in .shared, filled at boot
	kernelScratch := []plan.ScratchRequest{{Op: graph.OpRef{Op: 0}, Size: 48}, {Op: graph.OpRef{Op: 1}, Size: 8}}
	// twoScratchArenas moves the dense model's output into a second scratch
	// arena in the same memory.
	twoScratchArenas := func(t *testing.T) emit.Files {
		m := denseModel()
		p := *buildPlan(t, m)
		p.Arenas = append(p.Arenas, plan.Arena{ID: 99, Name: "scratch_sram_2", Role: liveness.Scratch, Memory: "SRAM",
			Provider: plan.Owned, Size: 16, Used: 4, Alignment: 16})
		p.Allocs = append([]plan.Alloc(nil), p.Allocs...)
		for i := range p.Allocs {
			if a := &p.Allocs[i]; a.Kind == plan.TensorAlloc && a.Ref.Tensor == 5 {
				a.Arena, a.Offset = 99, 0
			}
		}
		files, err := emit.C(m, &p, emit.COptions{Meta: emit.Meta{ModelName: "dense_two_arenas"}})
		require.NoError(t, err)
		require.Contains(t, string(files[0].Data), "extern uint8_t dense_two_arenas_scratch_sram_2[DENSE_TWO_ARENAS_SCRATCH_SRAM_2_SIZE];")
		return files
	}
	// largestAlignment places the dense model's scratch and state in a
	// bank of the largest alignment plan accepts (its constants 4 KiB
	// apart: at that alignment emit refuses the padding, see
	// TestCAlignmentPadding).
	largestAlignment := func(t *testing.T) emit.Files {
		platform := plan.Platform{Name: "aligned", Banks: []plan.Bank{
			{Name: "SRAM", Writable: true, Alignment: plan.MaxAlignment}, {Name: "FLASH", Alignment: 1 << 12}}}
		files := pipelineC(t, denseModel(), plan.Options{Platform: &platform}, emit.COptions{Meta: emit.Meta{ModelName: "dense_aligned"}})
		require.Contains(t, string(files[1].Data), "DENSE_ALIGNED_ALIGNAS(268435456)")
		return files
	}
	dense := func(name string, po plan.Options, mode emit.Constants) func(t *testing.T) emit.Files {
		return func(t *testing.T) emit.Files {
			return pipelineC(t, denseModel(), po, emit.COptions{Meta: emit.Meta{ModelName: name}, Constants: mode})
		}
	}
	for _, tc := range []struct {
		name  string
		files func(t *testing.T) emit.Files
	}{
		{"dense", dense("dense", plan.Options{}, "")},
		{"empty", func(t *testing.T) emit.Files {
			return pipelineC(t, emptyModel(), plan.Options{}, emit.COptions{Meta: emit.Meta{ModelName: "empty"}})
		}},
		{"no tensors, no operators", func(t *testing.T) emit.Files {
			return pipelineC(t, &graph.Model{Subgraphs: []graph.Subgraph{{}, {}}}, plan.Options{}, emit.COptions{Meta: emit.Meta{ModelName: "nothing"}})
		}},
		{"empty with external arenas", func(t *testing.T) emit.Files {
			return pipelineC(t, emptyModel(), plan.Options{External: []string{"*"}}, emit.COptions{Meta: emit.Meta{ModelName: "empty_ext"}})
		}},
		{"staged", dense("dense_staged", plan.Options{Platform: stagedPlatform(), Rules: stagedRules}, "")},
		{"staged, external, incbin", dense("dense_staged_ext", plan.Options{Platform: stagedPlatform(), Rules: stagedRules,
			External: []string{"*"}}, emit.ConstantsIncbin)},
		{"external", dense("dense_ext", plan.Options{External: []string{"*"}}, "")},
		{"incbin", dense("dense_incbin", plan.Options{}, emit.ConstantsIncbin)},
		{"apollo510 sections", dense("dense_apollo510", plan.Options{Platform: &apollo510}, emit.ConstantsIncbin)},
		{"constants in RAM filled at boot", dense("dense_boot", plan.Options{Platform: &bootInit,
			Rules: []plan.Rule{{Class: "constant", Memory: "SRAM"}}}, "")},
		{"kernel scratch", dense("dense_kernel_scratch", plan.Options{KernelScratch: kernelScratch}, "")},
		{"two scratch arenas in one memory", twoScratchArenas},
		{"the largest alignment", largestAlignment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkCompiles(t, tc.files(t), false)
		})
	}
}

// TestCCompilesTestdata compiles the C for every model in testdata/models.
func TestCCompilesTestdata(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(emit.ModelName(path), func(t *testing.T) {
			t.Parallel()
			checkCompiles(t, compileModelC(t, path, emit.COptions{Meta: emit.Meta{ModelName: emit.ModelName(path), Version: "test"}}), false)
		})
	}
}

// TestCCompilesCorpus compiles the C for every model of the shared corpus
// with the whole matrix; skipped with -short. A model whose plain C would
// exceed bigC goes through the matrix with its constants as binary files
// (incbin), and its plain C through one compiler unless HELIAC_C_ALL=1.
func TestCCompilesCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("compiling the corpus takes a while; skipped with -short")
	}
	all := os.Getenv("HELIAC_C_ALL") != ""
	every := all || os.Getenv("HELIAC_FULL_SWEEP") != ""
	for i, e := range corpus.Manifest(t) {
		if !every && i%3 != 0 {
			continue // make test: every third model; HELIAC_FULL_SWEEP=1 or HELIAC_C_ALL=1 all
		}
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			// Corpus names repeat across sources; the path keeps prefixes apart.
			meta := emit.Meta{ModelName: strings.TrimSuffix(e.File, filepath.Ext(e.File)), Version: "test"}
			m := readModel(t, e.Path)
			files := pipelineC(t, m, plan.Options{}, emit.COptions{Meta: meta})
			if len(files[1].Data) <= bigC {
				checkCompiles(t, files, false)
				return
			}
			t.Run("c", func(t *testing.T) { checkCompiles(t, files, !all) })
			t.Run("incbin", func(t *testing.T) {
				checkCompiles(t, pipelineC(t, m, plan.Options{}, emit.COptions{Meta: meta, Constants: emit.ConstantsIncbin}), false)
			})
		})
	}
}

// twoModelsMain links two models' modules into one program: their names
// must not collide, each must hold its own constants, and, with external
// arenas, bind must say what is wrong with a buffer before init takes it.
const twoModelsMain = `#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hello_world_int8.h"
#include "dense.h"

static int bad;

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL: %s\n", what);
		bad++;
	}
}

/* Buffers for external arenas: aligned to the largest alignment of either. */
static DENSE_ALIGNAS(16) uint8_t buffers[8][4096];

/* bind binds every external arena of a module to a buffer; internal ones
 * must say so. */
#define BIND(P, p, first) do { \
	size_t a_; \
	for (a_ = 0; a_ < (size_t)P##_ARENA_COUNT; a_++) { \
		p##_status_t s_ = p##_bind_arena((p##_arena_t)a_, buffers[(first) + a_], sizeof buffers[0]); \
		check(s_ == (p##_arenas[a_].external ? P##_OK : P##_ERR_INTERNAL_ARENA), #p ": bind"); \
	} \
} while (0)

int main(void)
{
	size_t i;
	check(strcmp(HELLO_WORLD_INT8_PLAN_HASH, DENSE_PLAN_HASH) != 0, "plan hashes differ");
#ifdef DENSE_SCRATCH_SRAM_EXTERNAL
	check(dense_init() == DENSE_ERR_UNBOUND, "dense: init before bind");
	check(dense_bind_arena(DENSE_ARENA_COUNT, buffers[0], sizeof buffers[0]) == DENSE_ERR_UNKNOWN_ARENA, "dense: unknown arena");
	check(dense_bind_arena(DENSE_ARENA_SCRATCH_SRAM, NULL, sizeof buffers[0]) == DENSE_ERR_NULL, "dense: null");
	check(dense_bind_arena(DENSE_ARENA_SCRATCH_SRAM, buffers[0], DENSE_SCRATCH_SRAM_SIZE - 1u) == DENSE_ERR_TOO_SMALL, "dense: too small");
	check(dense_bind_arena(DENSE_ARENA_SCRATCH_SRAM, buffers[0] + 1, DENSE_SCRATCH_SRAM_SIZE) == DENSE_ERR_MISALIGNED, "dense: misaligned");
	check(dense_bind_arena(DENSE_ARENA_CONSTANT_FLASH, buffers[0], sizeof buffers[0]) == DENSE_ERR_INTERNAL_ARENA, "dense: constants are the module's");
	check(dense_arena_data(DENSE_ARENA_SCRATCH_SRAM) == NULL, "dense: unbound");
#else
	check(dense_bind_arena(DENSE_ARENA_SCRATCH_SRAM, buffers[0], sizeof buffers[0]) == DENSE_ERR_INTERNAL_ARENA, "dense: internal arena");
#endif
	BIND(HELLO_WORLD_INT8, hello_world_int8, 0);
	BIND(DENSE, dense, 4);
	check(hello_world_int8_init() == HELLO_WORLD_INT8_OK, "hello: init");
	check(dense_init() == DENSE_OK, "dense: init");
	check(HELLO_WORLD_INT8_INPUT_0_DATA == hello_world_int8_tensor_mutable_data(HELLO_WORLD_INT8_INPUT_0_INDEX), "hello input pointer");
	check(DENSE_OUTPUT_0_DATA == dense_tensor_mutable_data(DENSE_OUTPUT_0_INDEX), "dense output pointer");
	check((uintptr_t)dense_tensor_data(DENSE_INPUT_0_INDEX) % DENSE_ALIGNMENT == 0, "dense input aligned");
	check(dense_tensor_data(DENSE_TENSOR_COUNT) == NULL, "index out of range");
	check(dense_operators[2].builtin == 32 && strcmp(dense_operators[2].custom, "MIX") == 0, "dense custom operator");
	for (i = 0; i < DENSE_TENSOR_COUNT; i++) {
		const uint8_t *p = dense_tensor_data(i);
		check(p != NULL, "every dense tensor has bytes");
		if (dense_tensors[i].arena == DENSE_ARENA_CONSTANT_FLASH) {
			check(dense_tensor_mutable_data(i) == NULL, "constants are read-only");
			if (dense_tensors[i].tensor == 1) {
				check(p[0] == 0xa0 && p[15] == 0xaf, "dense weights");
			}
		}
		if (dense_tensors[i].arena == DENSE_ARENA_PERSISTENT_SRAM) {
			check(p[0] == 0 && p[3] == 0, "dense state is zeroed");
		}
	}
	return bad;
}
`

// TestCCompilesTwoModelsLink links two models' modules and a main that uses
// both headers into one program, which must have no duplicate symbols, and
// runs it: with the arenas the modules define, and with arenas the
// application binds (whose status codes it checks).
func TestCCompilesTwoModelsLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		external []string
		mode     emit.Constants
	}{
		{"internal arenas", nil, ""},
		{"external arenas", []string{"*"}, emit.ConstantsIncbin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			po := plan.Options{External: tc.external}
			a := pipelineC(t, readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite")), po,
				emit.COptions{Meta: emit.Meta{ModelName: "hello_world_int8"}, Constants: tc.mode})
			b := pipelineC(t, denseModel(), po, emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: tc.mode})
			writeFiles(t, dir, a)
			writeFiles(t, dir, b)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(twoModelsMain), 0o644))
			for _, cc := range []cCompiler{cCompilers[2], cCompilers[5]} { // gcc C99, clang C11
				if _, err := exec.LookPath(cc.cmd); err != nil {
					t.Logf("%s not on PATH", cc.cmd)
					continue
				}
				exe := "both_" + cc.name
				args := append(append(slices.Clone(cc.args), cWarnings...), "-o", exe, "main.c")
				run(t, dir, cc.cmd, append(append(args, sources(a)...), sources(b)...)...)
				run(t, dir, filepath.Join(dir, exe))
			}
		})
	}
}

// c23Compilers are the compilers with #embed (C23) that modules written
// with emit.ConstantsEmbed are checked with, when on PATH (.ci/run
// installs clang-19).
var c23Compilers = []cCompiler{
	{"clang-19-c23", "clang-19", []string{"-std=c23", "-O0"}},
	{"gcc-15-c23", "gcc-15", []string{"-std=c23", "-O0"}},
}

// embedMain initialises the module (which hydrates staged arenas from
// their #embed'ed images).
const embedMain = `#include "%[1]s.h"

int main(void)
{
	return %[1]s_init() == %[2]s_OK ? 0 : 1;
}
`

// TestCCompilesEmbed compiles modules whose constants are #embed'ed with
// each C23 compiler on PATH, under the warnings of the matrix, and runs a
// program that initialises them. (The checking dispatcher of the driver's
// tests checks the bytes.)
func TestCCompilesEmbed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files func(t *testing.T) emit.Files
	}{
		{"dense", func(t *testing.T) emit.Files {
			return pipelineC(t, denseModel(), plan.Options{}, emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: emit.ConstantsEmbed})
		}},
		{"dense staged", func(t *testing.T) emit.Files {
			return pipelineC(t, denseModel(), plan.Options{Platform: stagedPlatform(), Rules: stagedRules},
				emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: emit.ConstantsEmbed})
		}},
		{"hello_world_int8", func(t *testing.T) emit.Files {
			return compileModelC(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"),
				emit.COptions{Meta: emit.Meta{ModelName: "hello_world_int8"}, Constants: emit.ConstantsEmbed})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files(t)
			prefix := strings.TrimSuffix(files[0].Name, ".h")
			main := fmt.Sprintf(embedMain, prefix, strings.ToUpper(prefix))
			for _, cc := range c23Compilers {
				t.Run(cc.name, func(t *testing.T) {
					if _, err := exec.LookPath(cc.cmd); err != nil {
						t.Skipf("%s not on PATH", cc.cmd)
					}
					dir := t.TempDir()
					writeFiles(t, dir, files)
					require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644))
					args := append(append(slices.Clone(cc.args), cWarnings...), "-o", "embed", "main.c")
					run(t, dir, cc.cmd, append(args, sources(files)...)...)
					run(t, dir, filepath.Join(dir, "embed"))
				})
			}
		})
	}
}

// skipUnderRace skips a corpus sweep under the race detector: heliac once
// per model, then the C compilers. The detector slows it and finds nothing
// the package's other tests under -race do not; `make test` runs it again
// without -race (SWEEPS in the Makefile; driver's TestSweepsListed keeps
// that list complete).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a corpus sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}
