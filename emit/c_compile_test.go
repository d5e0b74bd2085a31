package emit_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// cCompiler is one compiler the generated sources are checked with.
type cCompiler struct {
	name string
	cmd  string
	args []string // before the warnings
}

// The firmware target comes first: big sources are compiled by the first
// compiler found only.
var cCompilers = []cCompiler{
	{"arm-none-eabi-gcc", "arm-none-eabi-gcc", []string{"-mcpu=cortex-m4", "-mthumb", "-std=c11", "-O0"}},
	{"gcc", "gcc", []string{"-std=c11", "-O0"}},
	{"clang", "clang", []string{"-std=c11", "-O0"}},
}

// cxxCompilers check that the header is usable from C++ (TFLM is C++).
var cxxCompilers = []cCompiler{
	{"g++", "g++", []string{"-std=c++11"}},
	{"clang++", "clang++", []string{"-std=c++11"}},
}

// compileModelC runs the pipeline on a model file and returns its C files.
func compileModelC(t testing.TB, path string, meta emit.Meta) emit.Files {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	return pipelineC(t, m, meta)
}

func pipelineC(t testing.TB, m *graph.Model, meta emit.Meta) emit.Files {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	files, err := emit.C(m, p, emit.COptions{Meta: meta})
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
	c := exec.Command(cmd, args...)
	c.Dir = dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	t.Logf("%s %s: %v", cmd, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cmd, strings.Join(args, " "), err, out.String())
	}
}

// bigC is the size of a generated .c above which the corpus test compiles it
// with one C compiler only: a few models carry megabytes of weights, and C
// compilers take several CPU seconds per megabyte of initializer.
const bigC = 1 << 20

// checkCompiles writes files to a fresh directory and compiles the .c with
// every C compiler on PATH (only the first one found when just is set), and a
// C++ file including the header with every C++ compiler, in parallel
// subtests.
func checkCompiles(t *testing.T, files emit.Files, just bool) {
	dir := t.TempDir()
	writeFiles(t, dir, files)
	h, c := files[0].Name, files[1].Name
	cxx := "include_" + strings.TrimSuffix(h, ".h") + ".cpp"
	require.NoError(t, os.WriteFile(filepath.Join(dir, cxx), []byte("#include \""+h+"\"\n"), 0o644))
	found := false
	for _, cc := range cCompilers {
		t.Run(cc.name, func(t *testing.T) {
			if _, err := exec.LookPath(cc.cmd); err != nil {
				t.Skipf("%s not on PATH", cc.cmd)
			}
			if just && found {
				t.Skipf("%s is %d bytes; compiled with one compiler only (HELIAC_C_ALL=1 compiles it with all)", c, len(files[1].Data))
			}
			found = true
			t.Parallel()
			obj := strings.TrimSuffix(c, ".c") + "." + cc.name + ".o"
			run(t, dir, cc.cmd, append(append(append([]string{}, cc.args...), cWarnings...), "-c", c, "-o", obj)...)
		})
	}
	for _, cc := range cxxCompilers {
		t.Run(cc.name, func(t *testing.T) {
			if _, err := exec.LookPath(cc.cmd); err != nil {
				t.Skipf("%s not on PATH", cc.cmd)
			}
			t.Parallel()
			run(t, dir, cc.cmd, append(append([]string{}, cc.args...),
				"-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion", "-Wsign-conversion", "-Wshadow", "-Wcast-qual",
				"-Wold-style-cast", "-fsyntax-only", cxx)...)
		})
	}
}

// TestCCompilesInline compiles the C for the inline unit-test models, and
// for the dense model with its constants staged into SRAM, with kernel
// scratch, and with two scratch arenas in one memory.
func TestCCompilesInline(t *testing.T) {
	staged := func(t *testing.T) emit.Files {
		m := denseModel()
		p := *buildPlan(t, m)
		p.Arenas = append([]plan.Arena(nil), p.Arenas...)
		for i := range p.Arenas {
			if a := &p.Arenas[i]; a.Role == liveness.Constant {
				a.Memory, a.Source, a.Name = "DTCM", "FLASH", "constant_dtcm"
			}
		}
		files, err := emit.C(m, &p, emit.COptions{Meta: emit.Meta{ModelName: "dense_staged"}})
		require.NoError(t, err)
		return files
	}
	kernelScratch := func(t *testing.T) emit.Files {
		m := denseModel()
		lt, err := liveness.Analyze(m, liveness.Options{})
		require.NoError(t, err)
		p, err := plan.Build(context.Background(), m, lt, plan.Options{KernelScratch: []plan.ScratchRequest{
			{Op: graph.OpRef{Op: 0}, Size: 48}, {Op: graph.OpRef{Op: 1}, Size: 8}}})
		require.NoError(t, err)
		files, err := emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense_kernel_scratch"}})
		require.NoError(t, err)
		return files
	}
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
		m := denseModel()
		lt, err := liveness.Analyze(m, liveness.Options{})
		require.NoError(t, err)
		platform := plan.Platform{Name: "aligned", Banks: []plan.Bank{
			{Name: "SRAM", Writable: true, Alignment: plan.MaxAlignment}, {Name: "FLASH", Alignment: 1 << 12}}}
		p, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &platform})
		require.NoError(t, err)
		files, err := emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense_aligned"}})
		require.NoError(t, err)
		require.Contains(t, string(files[1].Data), "_Alignas(268435456)")
		return files
	}
	for _, tc := range []struct {
		name  string
		files func(t *testing.T) emit.Files
	}{
		{"dense", func(t *testing.T) emit.Files { return pipelineC(t, denseModel(), emit.Meta{ModelName: "dense"}) }},
		{"empty", func(t *testing.T) emit.Files { return pipelineC(t, emptyModel(), emit.Meta{ModelName: "empty"}) }},
		{"staged", staged},
		{"kernel scratch", kernelScratch},
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
			checkCompiles(t, compileModelC(t, path, emit.Meta{ModelName: emit.ModelName(path), Version: "test"}), false)
		})
	}
}

// TestCCompilesCorpus compiles the C for every model of the shared corpus,
// about 20 MB of weights; skipped with -short. Sources over bigC go through
// one compiler unless HELIAC_C_ALL=1.
func TestCCompilesCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling the corpus takes a while; skipped with -short")
	}
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			// Corpus names repeat across sources; the path keeps prefixes apart.
			name := strings.TrimSuffix(e.File, filepath.Ext(e.File))
			files := compileModelC(t, e.Path, emit.Meta{ModelName: name, Version: "test"})
			checkCompiles(t, files, len(files[1].Data) > bigC && os.Getenv("HELIAC_C_ALL") == "")
		})
	}
}

// TestCCompilesTwoModelsLink links two models' modules and a main that uses
// both headers into one program, which must have no duplicate symbols, and
// runs it.
func TestCCompilesTwoModelsLink(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not on PATH")
	}
	dir := t.TempDir()
	a := compileModelC(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"), emit.Meta{ModelName: "hello_world_int8"})
	b := pipelineC(t, denseModel(), emit.Meta{ModelName: "dense"})
	writeFiles(t, dir, a)
	writeFiles(t, dir, b)
	main := `#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hello_world_int8.h"
#include "dense.h"

static int check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL: %s\n", what);
	}
	return ok ? 0 : 1;
}

int main(void)
{
	int bad = 0;
	size_t i;
	bad += check(strcmp(HELLO_WORLD_INT8_PLAN_HASH, DENSE_PLAN_HASH) != 0, "plan hashes differ");
	bad += check(HELLO_WORLD_INT8_INPUT_0_DATA == hello_world_int8_tensor_mutable_data(HELLO_WORLD_INT8_INPUT_0_INDEX), "hello input pointer");
	bad += check(DENSE_OUTPUT_0_DATA == dense_tensor_mutable_data(DENSE_OUTPUT_0_INDEX), "dense output pointer");
	bad += check((uintptr_t)dense_scratch_sram % DENSE_ALIGNMENT == 0, "dense scratch aligned");
	bad += check((uintptr_t)hello_world_int8_constant_flash % HELLO_WORLD_INT8_ALIGNMENT == 0, "hello constants aligned");
	bad += check(dense_tensor_data(DENSE_TENSOR_COUNT) == NULL, "index out of range");
	for (i = 0; i < DENSE_TENSOR_COUNT; i++) {
		const uint8_t *p = dense_tensor_data(i);
		bad += check(p != NULL, "every dense tensor has bytes");
		if (dense_tensors[i].arena == DENSE_ARENA_CONSTANT_FLASH) {
			bad += check(dense_tensor_mutable_data(i) == NULL, "constants are read-only");
			if (dense_tensors[i].tensor == 1) {
				bad += check(p[0] == 0xa0 && p[15] == 0xaf, "dense weights");
			}
		}
	}
	return bad;
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644))
	args := append([]string{"-std=c11", "-O0"}, cWarnings...)
	run(t, dir, gcc, append(args, "-o", "both", "main.c", a[1].Name, b[1].Name)...)
	run(t, dir, filepath.Join(dir, "both"))
}
