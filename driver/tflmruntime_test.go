package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// tflmLib returns ../shared/tflm (headers and the host library) and g++,
// or skips the test.
func tflmLib(t *testing.T) (include, lib, gxx string) {
	t.Helper()
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found; skipping the TFLM runtime tests")
	}
	include = filepath.Join(shared, "tflm", "include")
	lib = filepath.Join(shared, "tflm", "lib", "host-x86_64", "libtflm.a")
	if _, err := os.Stat(lib); err != nil {
		t.Skip("../shared/tflm has no host library; skipping the TFLM runtime tests")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found; skipping the TFLM runtime tests")
	}
	return include, lib, gxx
}

// runtimePlatform has two writable banks and flash, so that a model's
// tensors lie in two banks and a constant arena is staged from flash.
func runtimePlatform() *plan.Platform {
	return &plan.Platform{Name: "two-banks", Banks: []plan.Bank{
		{Name: "DTCM", Writable: true, Order: 0},
		{Name: "SRAM", Writable: true, Order: 1},
		{Name: "FLASH"},
	}}
}

// runtimeRules put subgraph 0's outputs in SRAM (scratch stays in DTCM)
// and stage its first constant from flash into SRAM.
func runtimeRules(m *graph.Model) []plan.Rule {
	rules := []plan.Rule{{Class: "scratch", Memory: "DTCM"}}
	sg := &m.Subgraphs[0]
	for _, id := range sg.Outputs {
		if id != graph.NoTensor && !m.HasData(&sg.Tensors[id]) && sg.Tensors[id].Size > 0 {
			rules = append(rules, plan.Rule{Tensor: fmt.Sprintf("0:%d", id), Memory: "SRAM"})
		}
	}
	for si := range m.Subgraphs {
		for id, tn := range m.Subgraphs[si].Tensors {
			if m.HasData(&tn) && tn.Size > 0 {
				return append(rules, plan.Rule{Tensor: fmt.Sprintf("%d:%d", si, id), Memory: "SRAM", Source: "FLASH"})
			}
		}
	}
	return rules
}

// buildRuntime compiles model with the TFLM runtime into dir and builds
// the host program tflm_main against TFLM's library.
func buildRuntime(t *testing.T, dir, modelPath string, multiBank bool) (*driver.Output, string) {
	t.Helper()
	out := writeRuntime(t, dir, modelPath, multiBank)
	return out, buildMain(t, dir, out.Prefix(), "")
}

// writeRuntime compiles model with the TFLM runtime and writes its set
// into dir.
func writeRuntime(t *testing.T, dir, modelPath string, multiBank bool) *driver.Output {
	t.Helper()
	data, err := os.ReadFile(modelPath)
	require.NoError(t, err)
	klib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	name := strings.TrimSuffix(filepath.Base(modelPath), ".tflite")
	cfg := driver.Config{ModelName: name, Version: "test", Kernels: klib, Runtime: emit.RuntimeTFLM}
	cfg.Liveness.Kernels = klib
	if multiBank {
		m, err := tflite.Load(data)
		require.NoError(t, err)
		cfg.Plan.Platform = runtimePlatform()
		cfg.Plan.Rules = runtimeRules(m)
	}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	files := out.Files()
	var cc string
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
		if strings.HasSuffix(f.Name, emit.TFLMSuffix) {
			cc = f.Name
		}
	}
	require.NotEmpty(t, cc, "the set lists %s", emit.TFLMSuffix)
	return out
}

// buildMain builds the host program tflm_main in dir from the set of
// prefix there, with extra defines for it, and returns its path.
func buildMain(t *testing.T, dir, prefix, define string) string {
	t.Helper()
	include, lib, gxx := tflmLib(t)
	cc := prefix + emit.TFLMSuffix
	main, err := filepath.Abs("testdata/tflm_main.cc")
	require.NoError(t, err)
	flags := []string{"-std=c++17", "-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY", "-O1", "-Wall", "-Wextra", "-Werror",
		"-isystem", include, "-I."}
	defines := []string{"-DPREFIX=" + prefix, "-DUPREFIX=" + strings.ToUpper(prefix), `-DMODULE_HEADER="` + prefix + `.h"`}
	if define != "" {
		defines = append(defines, "-D"+define)
	}
	steps := [][]string{
		{"gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-c", prefix + ".c", "-o", "module.o"},
		append(append([]string{gxx}, flags...), "-c", cc, "-o", "runtime.o"),
		append(append(append([]string{gxx}, flags...), defines...), "-c", main, "-o", "main.o"),
		{gxx, "main.o", "runtime.o", "module.o", lib, "-lm", "-o", "tflm_main"},
	}
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, b)
		}
	}
	return filepath.Join(dir, "tflm_main")
}

// runMain runs the host program and returns its output.<k>.<i> lines.
func runMain(t *testing.T, prog string, seed, invokes int) []string {
	t.Helper()
	b, err := exec.Command(prog, fmt.Sprint(seed), fmt.Sprint(invokes)).CombinedOutput()
	require.NoError(t, err, "%s", b)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "output.") {
			lines = append(lines, l)
		}
	}
	return lines
}

// oracleOutputs runs tflm_run on the original model and returns its
// output lines without the type.
func oracleOutputs(t *testing.T, tool, model string, seed, invokes int) []string {
	t.Helper()
	r, err := tflmrun.Run(context.Background(), tool, model, tflmrun.Options{Seed: seed, Invokes: invokes})
	require.NoError(t, err)
	require.True(t, r.OK(), "tflm_run: %s", r.Error())
	var lines []string
	for _, l := range r.Outputs() {
		l, _, _ = strings.Cut(l, " type=")
		lines = append(lines, l)
	}
	return lines
}

// The runtime heliac writes with --runtime tflm runs each bundled model
// on its plan with TFLM's reference kernels and computes what TFLM's own
// interpreter computes on the original model, byte for byte, over several
// invocations (state carried across them), on one bank and on two banks
// with a staged constant arena.
func TestTFLMRuntimeMatchesTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	tflmLib(t)
	// Every bundled model the runtime knows the operators of
	// (emit/tflm_ops.go), on two banks; hello_world_int8 also on one.
	models := []string{"hello_world_int8", "micro_speech_quantized", "keyword_scrambled_8bit", "call_once_mul", "multi_subgraphs_while", "zero_size_constant"}
	if testing.Short() {
		models = models[:1]
	}
	const invokes = 3
	for _, name := range models {
		for _, multi := range []bool{false, true} {
			if !multi && name != models[0] {
				continue
			}
			t.Run(fmt.Sprintf("%s/multibank=%t", name, multi), func(t *testing.T) {
				model := filepath.Join("..", "testdata", "models", name+".tflite")
				out, prog := buildRuntime(t, t.TempDir(), model, multi)
				if multi {
					writable := map[string]bool{}
					staged := false
					for _, a := range out.Plan.Arenas {
						if a.Size > 0 && (a.Memory == "DTCM" || a.Memory == "SRAM") {
							writable[a.Memory] = true
						}
						staged = staged || a.Size > 0 && a.Staged()
					}
					assert.Len(t, writable, 2, "tensors lie in both writable banks")
					if r := out.Plan.Rules; r[len(r)-1].Source != "" {
						assert.True(t, staged, "a constant arena is staged")
					}
				}
				for _, seed := range []int{1, 7} {
					want := oracleOutputs(t, tool, model, seed, invokes)
					got := runMain(t, prog, seed, invokes)
					assert.Equal(t, want, got, "seed %d", seed)
				}
			})
		}
	}
}

// runMainStatus runs the host program and returns its exit code and output.
func runMainStatus(t *testing.T, prog string, seed, invokes int) (int, string) {
	t.Helper()
	b, err := exec.Command(prog, fmt.Sprint(seed), fmt.Sprint(invokes)).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(b)
	}
	require.NoError(t, err)
	return 0, string(b)
}

// rewrite replaces the first match of re in dir/name by repl (a function
// of the match), failing when nothing matches.
func rewrite(t *testing.T, path string, re *regexp.Regexp, repl func(m []string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	loc := re.FindSubmatchIndex(b)
	require.NotNil(t, loc, "%s has no %s", path, re)
	var groups []string
	for i := 0; i < len(loc); i += 2 {
		groups = append(groups, string(b[loc[i]:loc[i+1]]))
	}
	out := append(append(append([]byte{}, b[:loc[0]]...), repl(groups)...), b[loc[1]:]...)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// Breaking the plan on purpose makes the runtime's init fail or its
// outputs differ from TFLM's: the comparison above proves something.
func TestTFLMRuntimeBrokenPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the runtime five times")
	}
	tool := tflmrun.Require(t)
	tflmLib(t)
	hello := filepath.Join("..", "testdata", "models", "hello_world_int8.tflite")
	want := oracleOutputs(t, tool, hello, 1, 2)

	t.Run("as planned", func(t *testing.T) {
		dir := t.TempDir()
		out := writeRuntime(t, dir, hello, true)
		prog := buildMain(t, dir, out.Prefix(), "")
		assert.Equal(t, want, runMain(t, prog, 1, 2))
		// Nothing of TFLM's interpreter or allocator is linked.
		if nm, err := exec.LookPath("nm"); err == nil {
			syms, err := exec.Command(nm, "-C", prog).Output()
			require.NoError(t, err)
			for _, s := range []string{"tflite::MicroInterpreter", "tflite::MicroAllocator", "tflite::GetModel"} {
				assert.NotContains(t, string(syms), s)
			}
		}
	})
	t.Run("init again", func(t *testing.T) {
		// call_once_mul's CALL_ONCE sets its resource variables on the
		// first invoke only: a second init starts the model over (kernel
		// data, variables), as TFLM's AllocateTensors does.
		dir := t.TempDir()
		model := filepath.Join("..", "testdata", "models", "call_once_mul.tflite")
		out := writeRuntime(t, dir, model, false)
		b, err := exec.Command(buildMain(t, dir, out.Prefix(), ""), "3", "3", "again").CombinedOutput()
		require.NoError(t, err, "%s", b)
		var first, again []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if rest, ok := strings.CutPrefix(l, "again."); ok {
				again = append(again, rest)
			} else if strings.HasPrefix(l, "output.") {
				first = append(first, l)
			}
		}
		assert.Equal(t, oracleOutputs(t, tool, model, 3, 3), first)
		assert.Equal(t, first, again)
	})
	t.Run("kernel state too small", func(t *testing.T) {
		dir := t.TempDir()
		out := writeRuntime(t, dir, hello, false)
		re := regexp.MustCompile(`(?m)^#else\nconstexpr size_t kKernelStateBytes = (\d+);`)
		var need string
		rewrite(t, filepath.Join(dir, out.Prefix()+emit.TFLMSuffix), re, func(m []string) string {
			need = m[1]
			n, _ := strconv.Atoi(m[1])
			return fmt.Sprintf("#else\nconstexpr size_t kKernelStateBytes = %d;", n-16)
		})
		code, text := runMainStatus(t, buildMain(t, dir, out.Prefix(), ""), 1, 2)
		assert.Equal(t, 1, code)
		assert.Contains(t, text, "init=8\n", "ERR_KERNEL_STATE")
		assert.Contains(t, text, "kernel data needs at least")
		assert.NotEqual(t, "0", need)
	})
	t.Run("overlapping tensors", func(t *testing.T) {
		dir := t.TempDir()
		out := writeRuntime(t, dir, hello, false)
		// Tensors 7 and 8 are FULLY_CONNECTED 0:1's input and output:
		// give 8 the bytes of 7.
		src := filepath.Join(dir, out.Prefix()+".c")
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		row := regexp.MustCompile(`(?m)^\t\{0u, 7u, (\w+), \w+, \d+u, (\d+)u, `).FindSubmatch(b)
		require.NotNil(t, row)
		rewrite(t, src, regexp.MustCompile(`(?m)^\t\{0u, 8u, (\w+), (\w+), (\d+u), (\d+)u, `), func(m []string) string {
			return fmt.Sprintf("\t{0u, 8u, %s, %s, %s, %su, ", row[1], m[2], m[3], row[2])
		})
		code, text := runMainStatus(t, buildMain(t, dir, out.Prefix(), ""), 1, 2)
		require.Equal(t, 0, code, text)
		assert.NotEqual(t, want, runMain(t, filepath.Join(dir, "tflm_main"), 1, 2))
	})
	t.Run("staged arena not hydrated", func(t *testing.T) {
		dir := t.TempDir()
		out := writeRuntime(t, dir, hello, true)
		prog := buildMain(t, dir, out.Prefix(), "NO_HYDRATE")
		assert.NotEqual(t, want, runMain(t, prog, 1, 2))
	})
	t.Run("kernel scratch not as planned", func(t *testing.T) {
		kws := filepath.Join("..", "testdata", "models", "keyword_scrambled_8bit.tflite")
		dir := t.TempDir()
		out := writeRuntime(t, dir, kws, false)
		var asked string
		rewrite(t, filepath.Join(dir, out.Prefix()+".c"), regexp.MustCompile(`(?m)^(\t\{\d+u, \d+u, \d+u, \w+, \d+u, )(\d+)u\}, /\* \[0\]`),
			func(m []string) string {
				asked = m[2]
				n, _ := strconv.Atoi(m[2])
				return fmt.Sprintf("%s%du}, /* [0]", m[1], n+4)
			})
		code, text := runMainStatus(t, buildMain(t, dir, out.Prefix(), ""), 1, 1)
		assert.Equal(t, 1, code)
		assert.Contains(t, text, "init=9\n", "ERR_SCRATCH")
		n, _ := strconv.Atoi(asked)
		assert.Regexp(t, fmt.Sprintf(`error=operator 0:\d+ SVDF: asks for %d bytes of scratch \(buffer 0\); the plan gives it %d`, n, n+4), text)
	})
}
