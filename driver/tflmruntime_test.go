package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	for id := range sg.Tensors {
		if tn := &sg.Tensors[id]; m.HasData(tn) && tn.Size > 0 {
			rules = append(rules, plan.Rule{Tensor: fmt.Sprintf("0:%d", id), Memory: "SRAM", Source: "FLASH"})
			break
		}
	}
	return rules
}

// buildRuntime compiles model with the TFLM runtime into dir and builds
// the host program tflm_main against TFLM's library.
func buildRuntime(t *testing.T, dir, modelPath string, multiBank bool) (*driver.Output, string) {
	t.Helper()
	include, lib, gxx := tflmLib(t)
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
	prefix := out.Prefix()
	main, err := filepath.Abs("testdata/tflm_main.cc")
	require.NoError(t, err)
	flags := []string{"-std=c++17", "-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY", "-O1", "-Wall", "-Wextra", "-Werror",
		"-isystem", include, "-I."}
	steps := [][]string{
		{"gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-c", prefix + ".c", "-o", "module.o"},
		append(append([]string{gxx}, flags...), "-c", cc, "-o", "runtime.o"),
		append(append([]string{gxx}, flags...), "-DPREFIX="+prefix, "-DUPREFIX="+strings.ToUpper(prefix),
			`-DMODULE_HEADER="`+prefix+`.h"`, "-c", main, "-o", "main.o"),
		{gxx, "main.o", "runtime.o", "module.o", lib, "-lm", "-o", "tflm_main"},
	}
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, b)
		}
	}
	return out, filepath.Join(dir, "tflm_main")
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
	models := []string{"hello_world_int8"}
	const invokes = 3
	for _, name := range models {
		for _, multi := range []bool{false, true} {
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
					assert.True(t, staged, "a constant arena is staged")
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
