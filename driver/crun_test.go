package driver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// The checking dispatcher (testdata/crun/dispatch.c) runs each model's C
// module as a runtime would, through its tables alone, and checks at every
// operator that each input holds the bytes its producer wrote.

// dispatchSource is the dispatcher, built against each module.
var dispatchSource = filepath.Join("testdata", "crun", "dispatch.c")

// crunMode is a form of the module the dispatcher runs.
type crunMode struct {
	name   string
	config func(*driver.Config)
	c23    bool // the module needs a C23 compiler (#embed)
	// bundledOnly runs the mode on the bundled models only: #embed
	// changes how constants are spelled, not the plan, and the corpus
	// runs the other three modes.
	bundledOnly bool
}

// crunModes: the arenas the module defines (constants as C, unless the
// source would be big), arenas the application binds, and constants
// staged into another RAM by init (through a strong hydrate the
// dispatcher defines), and constants #embed'ed (C23) from binary files.
var crunModes = []crunMode{
	{"internal", func(*driver.Config) {}, false, false},
	{"external", func(c *driver.Config) {
		c.Plan.External = []string{"*"}
		c.Constants = emit.ConstantsIncbin
	}, false, false},
	{"staged", func(c *driver.Config) {
		c.Plan.Platform = &plan.Platform{Name: "staged", Banks: []plan.Bank{
			{Name: "SRAM", Writable: true}, {Name: "DTCM", Writable: true, Order: 1}, {Name: "FLASH", Order: 2}}}
		c.Plan.Rules = []plan.Rule{{Class: "constant", Memory: "DTCM", Source: "FLASH"}}
		c.Constants = emit.ConstantsIncbin
	}, false, false},
	{"embed", func(c *driver.Config) { c.Constants = emit.ConstantsEmbed }, true, true},
}

// bigSource is the size of a .c above which the dispatcher's module is
// written with incbin: compilers take seconds per megabyte of hex.
const bigSource = 1 << 20

// crunModel is a model the dispatcher runs.
type crunModel struct {
	name, path string
	bundled    bool // from testdata/models
}

// crunModels are the bundled models, and with the shared corpus and
// without -short every corpus model.
func crunModels(t *testing.T) []crunModel {
	var out []crunModel
	for _, f := range testModels(t) {
		out = append(out, crunModel{emit.ModelName(f), f, true})
	}
	if testing.Short() || corpus.SharedDir() == "" {
		return out
	}
	for _, e := range corpus.Manifest(t) {
		out = append(out, crunModel{strings.TrimSuffix(e.File, filepath.Ext(e.File)), e.Path, false})
	}
	return out
}

// dispatchCompiler is a C compiler and standard the dispatcher is built
// with.
type dispatchCompiler struct{ cmd, std string }

// c23Compilers are compilers with #embed, the first on PATH building
// modules that need it.
var c23Compilers = []string{"clang-19", "clang-20", "clang-21", "clang-22", "gcc-15"}

// needC23 returns a C23 compiler with #embed or skips the test.
func needC23(t *testing.T) dispatchCompiler {
	t.Helper()
	for _, name := range c23Compilers {
		if path, err := exec.LookPath(name); err == nil {
			return dispatchCompiler{path, "-std=c23"}
		}
	}
	t.Skipf("no compiler with #embed on PATH (%s)", strings.Join(c23Compilers, ", "))
	return dispatchCompiler{}
}

// needGCC returns gcc's path or skips the test.
func needGCC(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not on PATH")
	}
	return gcc
}

// TestDispatcherRunsEveryModel builds the dispatcher against every model's
// module in every mode and runs it: every input of every operator must
// hold the bytes its producer wrote.
func TestDispatcherRunsEveryModel(t *testing.T) {
	skipUnderRace(t)
	gcc := dispatchCompiler{needGCC(t), "-std=c11"}
	for _, cm := range crunModels(t) {
		t.Run(cm.name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(cm.path)
			require.NoError(t, err)
			for _, mode := range crunModes {
				t.Run(mode.name, func(t *testing.T) {
					if mode.bundledOnly && !cm.bundled {
						t.Skip("run on the bundled models only")
					}
					cc := gcc
					if mode.c23 {
						cc = needC23(t)
					}
					cfg := testConfig(cm.name)
					cfg.Prefix = emit.CPrefix(cm.name)
					def := referenceConfig(t) // outputs written in place and kernel scratch planned, as the CLI plans
					cfg.Liveness, cfg.Kernels, cfg.Target = def.Liveness, def.Kernels, def.Target
					mode.config(&cfg)
					out, err := driver.Compile(context.Background(), data, cfg)
					require.NoError(t, err, "the module is verified before it runs")
					files := out.CFiles
					if cfg.Constants == "" && len(files[1].Data) > bigSource {
						files, err = emit.C(out.Model, out.Plan, emit.COptions{Prefix: cfg.Prefix, Meta: out.Meta, Constants: emit.ConstantsIncbin})
						require.NoError(t, err)
					}
					res := runDispatcher(t, cc, out.Model, out.Plan, files)
					require.Equal(t, 0, res.code, "%s", res.out)
					assert.Regexp(t, `^ok: \d+ operator runs, \d+ checks`, res.out)
					t.Log(strings.TrimSpace(res.out))
				})
			}
		})
	}
}

// TestDispatcherSeesAClobber is the test of the test: a plan corrupted so
// that an operator's output is written onto a tensor live across it and
// read later (clobber, as TFLM's interop test corrupts plans), emitted
// without the verifier, must make the dispatcher fail, naming the tensor.
func TestDispatcherSeesAClobber(t *testing.T) {
	skipUnderRace(t)
	gcc := dispatchCompiler{needGCC(t), "-std=c11"}
	seen := 0
	for _, cm := range crunModels(t) {
		data, err := os.ReadFile(cm.path)
		require.NoError(t, err)
		cfg := testConfig(cm.name)
		cfg.Prefix = emit.CPrefix(cm.name)
		out, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err)
		bad, what, readLater := clobber(out.Model, out.Plan)
		if bad == nil || !readLater {
			continue // nothing to clobber, or a write in place that a kernel survives
		}
		seen++
		growArenas(bad)
		t.Run(cm.name, func(t *testing.T) {
			files, err := emit.C(out.Model, bad, emit.COptions{Prefix: cfg.Prefix, Meta: out.Meta, Constants: emit.ConstantsIncbin})
			require.NoError(t, err, "emit writes what it is given; only the verifier would refuse it")
			res := runDispatcher(t, gcc, out.Model, bad, files)
			require.Equal(t, 1, res.code, "%s: the dispatcher must fail\n%s", what, res.out)
			first, _, _ := strings.Cut(res.out, "\n")
			named := regexp.MustCompile(`tensor (\d+:\d+) `).FindStringSubmatch(first)
			require.NotNil(t, named, "the failure names a tensor: %s", first)
			assert.Contains(t, clobbered(out.Plan, bad), named[1], "%s; the dispatcher said: %s", what, first)
			t.Logf("%s: %s", what, first)
		})
	}
	assert.NotZero(t, seen, "some model has a tensor to clobber")
}

// growArenas makes every arena of q (whose Arenas it copies) large enough
// for its allocations: a tensor moved onto a smaller one may reach past
// the end, which emit refuses before any overlap is seen.
func growArenas(q *plan.Plan) {
	q.Arenas = slices.Clone(q.Arenas)
	for i := range q.Arenas {
		a := &q.Arenas[i]
		for _, al := range q.Allocs {
			if al.Arena == a.ID && al.Offset+al.Size > a.Size {
				a.Size = (al.Offset + al.Size + a.Alignment - 1) / a.Alignment * a.Alignment
			}
		}
	}
}

// clobbered returns the tensors a corrupted plan q makes share bytes while
// live (refs as "s:t"): the moved allocation and each it now overlaps.
func clobbered(p, q *plan.Plan) []string {
	var out []string
	for i, a := range q.Allocs {
		if a.Offset == p.Allocs[i].Offset {
			continue
		}
		out = append(out, a.Ref.String())
		for _, b := range q.Allocs {
			if b.Key != a.Key && b.Arena == a.Arena && b.Offset < a.Offset+a.Size && a.Offset < b.Offset+b.Size && b.Live.Overlaps(a.Live) {
				out = append(out, b.Ref.String())
			}
		}
	}
	return out
}

// dispatchResult is how a run of the dispatcher ended.
type dispatchResult struct {
	code int
	out  string
}

// runDispatcher writes the module and the expectations file into a fresh
// directory, builds the dispatcher against the module and runs it.
func runDispatcher(t *testing.T, cc dispatchCompiler, m *graph.Model, p *plan.Plan, files emit.Files) dispatchResult {
	t.Helper()
	dir := t.TempDir()
	var srcs []string
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
		if strings.HasSuffix(f.Name, ".c") || strings.HasSuffix(f.Name, ".S") {
			srcs = append(srcs, f.Name)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "expect.bin"), expectations(t, m, p), 0o644))
	dispatch, err := filepath.Abs(dispatchSource)
	require.NoError(t, err)
	prefix := strings.TrimSuffix(files[0].Name, ".h")
	args := []string{cc.std, "-O1", "-Wall", "-Wextra", "-Werror", "-I.",
		"-DPREFIX=" + prefix, "-DUPREFIX=" + strings.ToUpper(prefix), `-DMODULE_HEADER="` + files[0].Name + `"`}
	staged := 0
	for _, a := range p.Arenas {
		switch {
		case a.Size == 0:
		case a.Provider == plan.Bound && !slices.Contains(args, "-DEXTERNAL"):
			args = append(args, "-DEXTERNAL")
		}
		if a.Size > 0 && a.Staged() {
			staged++
		}
	}
	if staged > 0 {
		args = append(args, fmt.Sprintf("-DSTAGED=%d", staged))
	}
	build := exec.Command(cc.cmd, append(append(args, "-o", "dispatch", dispatch), srcs...)...)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the dispatcher: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(dir, "dispatch"), "expect.bin")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	require.NotEqual(t, 2, code, "the dispatcher could not run the module: %s", out.String())
	return dispatchResult{code: code, out: out.String()}
}

// expectations writes what the dispatcher reads beside the module, from
// the model and the plan, not from the C: per row of the tensor table (the
// plan's tensors in (subgraph, tensor) order) its name and, for a
// constant, the model's bytes.
func expectations(t *testing.T, m *graph.Model, p *plan.Plan) []byte {
	t.Helper()
	var rows []*plan.Alloc
	for i := range p.Allocs {
		if p.Allocs[i].Kind == plan.TensorAlloc {
			rows = append(rows, &p.Allocs[i])
		}
	}
	slices.SortStableFunc(rows, func(a, b *plan.Alloc) int {
		if a.Ref.Subgraph != b.Ref.Subgraph {
			return int(a.Ref.Subgraph - b.Ref.Subgraph)
		}
		return int(a.Ref.Tensor - b.Ref.Tensor)
	})
	var b bytes.Buffer
	u32 := func(n int) { require.NoError(t, binary.Write(&b, binary.LittleEndian, uint32(n))) }
	b.WriteString("HLC1")
	u32(len(rows))
	for _, r := range rows {
		tn := m.Tensor(r.Ref.Subgraph, r.Ref.Tensor)
		u32(len(tn.Name))
		b.WriteString(tn.Name)
		if r.Class != liveness.Constant {
			u32(0)
			continue
		}
		data := m.Buffers[tn.Buffer].Data
		u32(len(data))
		b.Write(data)
	}
	return b.Bytes()
}

// TestDispatcherSeesAScratchClobber is the test of the test for kernel
// scratch: a plan corrupted so that an operator's kernel scratch lies on
// one of its inputs (the first scratch buffer of each operator with an
// input in the scratch arena), emitted without the verifier, must make
// the dispatcher fail at that operator, after its scratch was written.
func TestDispatcherSeesAScratchClobber(t *testing.T) {
	gcc := dispatchCompiler{needGCC(t), "-std=c11"}
	data, err := os.ReadFile("../testdata/models/keyword_scrambled_8bit.tflite")
	require.NoError(t, err)
	cfg := testConfig("keyword_scrambled_8bit")
	cfg.Prefix = "ks"
	def := referenceConfig(t)
	cfg.Kernels, cfg.Target = def.Kernels, def.Target
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var bad *plan.Plan
	var victim *plan.Alloc
	for i, a := range out.Plan.Allocs {
		if a.Kind != plan.KernelScratchAlloc {
			continue
		}
		op := &out.Model.Subgraphs[a.Op.Subgraph].Ops[a.Op.Op]
		for _, in := range op.Inputs {
			v := out.Plan.Lookup(plan.TensorKey(graph.TensorRef{Subgraph: a.Op.Subgraph, Tensor: in}))
			if v != nil && v.Class == liveness.Scratch && v.Arena == a.Arena {
				q := *out.Plan
				q.Allocs = slices.Clone(out.Plan.Allocs)
				q.Allocs[i].Offset = v.Offset
				bad, victim = &q, v
				break
			}
		}
		if bad != nil {
			break
		}
	}
	require.NotNil(t, bad, "an operator with kernel scratch reads a scratch tensor")
	growArenas(bad)
	files, err := emit.C(out.Model, bad, emit.COptions{Prefix: cfg.Prefix, Meta: out.Meta, Constants: emit.ConstantsIncbin})
	require.NoError(t, err)
	res := runDispatcher(t, gcc, out.Model, bad, files)
	require.Equal(t, 1, res.code, "the dispatcher must fail\n%s", res.out)
	first, _, _ := strings.Cut(res.out, "\n")
	assert.Contains(t, first, "after its kernel scratch was written")
	assert.Contains(t, first, fmt.Sprintf("tensor %v ", victim.Ref))
	t.Log(first)
}

// TestSharedScratchDispatcher compiles three bundled models as one set:
// their scratch arenas become one buffer the size of the largest, every
// plan verifies, and one program runs each model in turn on that buffer
// (the first again after the others wrote over it), through the set's
// shared module, with the checking dispatcher: every input of every
// operator holds what its producer wrote.
func TestSharedScratchDispatcher(t *testing.T) {
	gcc := needGCC(t)
	names := []string{"keyword_scrambled_8bit", "hello_world_int8", "micro_speech_quantized"}
	var models []driver.Model
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "models", name+".tflite"))
		require.NoError(t, err)
		cfg := testConfig(name)
		def := referenceConfig(t)
		cfg.Liveness, cfg.Kernels, cfg.Target = def.Liveness, def.Kernels, def.Target
		models = append(models, driver.Model{Data: data, Config: cfg})
	}
	set, err := driver.CompileSet(context.Background(), models)
	require.NoError(t, err, "every plan verifies")
	require.Len(t, set.Outputs, 3)
	var largest int64
	for _, o := range set.Outputs {
		for _, a := range o.Plan.Arenas {
			if a.Role == liveness.Scratch {
				largest = max(largest, a.Size)
			}
		}
	}
	for _, o := range set.Outputs {
		for _, a := range o.Plan.Arenas {
			want := plan.Owned
			if a.Role == liveness.Scratch {
				want = plan.Shared
				assert.Equal(t, largest, a.SharedSize, "%s %s", o.Prefix(), a.Name)
			}
			assert.Equal(t, want, a.Provider, "%s %s", o.Prefix(), a.Name)
		}
		assert.Contains(t, string(o.PlanJSON), fmt.Sprintf(`"shared_size": %d`, largest))
	}
	require.Len(t, set.Shared, 2)
	assert.Contains(t, string(set.Shared[0].Data), fmt.Sprintf("#define HELIAC_SHARED_SCRATCH_SRAM_SIZE %du", largest))

	dir := t.TempDir()
	write := func(f emit.File) { require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644)) }
	srcs := []string{"heliac_shared.c", "main.c"}
	for _, f := range set.Shared {
		write(f)
	}
	dispatch, err := filepath.Abs(dispatchSource)
	require.NoError(t, err)
	var decls, calls strings.Builder
	for i, o := range set.Outputs {
		for _, f := range o.CFiles {
			write(f)
		}
		srcs = append(srcs, o.Prefix()+".c")
		expect := fmt.Sprintf("expect_%d.bin", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, expect), expectations(t, o.Model, o.Plan), 0o644))
		obj := fmt.Sprintf("dispatch_%d.o", i)
		build := exec.Command(gcc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I.", "-c",
			"-DPREFIX="+o.Prefix(), "-DUPREFIX="+strings.ToUpper(o.Prefix()), `-DMODULE_HEADER="`+o.Prefix()+`.h"`,
			fmt.Sprintf("-Dmain=dispatch_%d", i), "-o", obj, dispatch)
		build.Dir = dir
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
		srcs = append(srcs, obj)
		fmt.Fprintf(&decls, "int dispatch_%d(int argc, char **argv);\nstatic char *args_%d[] = {\"dispatch\", \"%s\", NULL};\n", i, i, expect)
		fmt.Fprintf(&calls, "\tif (dispatch_%d(2, args_%d) != 0) {\n\t\treturn 1;\n\t}\n", i, i)
	}
	main := "#include <stddef.h>\n#include <stdio.h>\n#include \"heliac_shared.h\"\n" + decls.String() +
		"int main(void)\n{\n\tint r = heliac_shared_bind();\n\tif (r != 0) {\n\t\tprintf(\"ERROR: heliac_shared_bind: %d\\n\", r);\n\t\treturn 2;\n\t}\n" +
		calls.String() + "\tif (dispatch_0(2, args_0) != 0) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644))
	build := exec.Command(gcc, append([]string{"-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I.", "-o", "set"}, srcs...)...)
	build.Dir = dir
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	run := exec.Command(filepath.Join(dir, "set"))
	run.Dir = dir
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, 4, strings.Count(string(out), "ok: "), "each model ran, the first twice:\n%s", out)
	t.Log(strings.TrimSpace(string(out)))
}
