package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/plan"
)

const helloWorld = "../../testdata/models/hello_world_int8.tflite"

func runHeliac(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCompileFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want compileOptions
	}{
		{"defaults", []string{"m.tflite"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on"}},
		{"short out", []string{"m.tflite", "-o", "dir"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "dir", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on"}},
		{"all", []string{"--prefix", "kws", "-q", "--out=x", "m.tflite"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "x", prefix: "kws", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on", quiet: true}},
		{"planner alias", []string{"m.tflite", "--planner", "greedy"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "greedy", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on"}},
		{"planner linear", []string{"m.tflite", "--planner", "linear"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "linear", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on"}},
		{"in place", []string{"m.tflite", "--no-in-place"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on", noInPlace: true}},
		{"model inputs", []string{"m.tflite", "--overwrite-inputs"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on", overwriteIn: true}},
		{"keep inputs", []string{"m.tflite", "--keep-inputs"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on", keepInputs: true}},
		{"exact overlap off", []string{"m.tflite", "--exact-overlap", "off"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "off"}},
		{"model order", []string{"m.tflite", "--schedule", "model"}, compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "model", exactOverlap: "on"}},
		{"patches", []string{"m.tflite", "--patches", "auto", "--patch-macs", "5%"}, compileOptions{runtime: "none", patches: "auto", patchMACs: "5%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, constants: "c", kernels: "", schedule: "memory", exactOverlap: "on"}},
		{"the module's form", []string{"m.tflite", "--external-arenas", "--constants", "incbin"},
			compileOptions{runtime: "none", patches: "off", patchMACs: "10%", model: "m.tflite", outDir: "out", planner: "best", timeLimit: plan.DefaultTimeLimit, external: true, constants: "incbin", kernels: "", schedule: "memory", exactOverlap: "on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *compileOptions
			cmd := newRootCmd(func(o *compileOptions) error { got = o; return nil }, &bytes.Buffer{}, &bytes.Buffer{})
			cmd.SetArgs(tt.args)
			require.NoError(t, cmd.Execute())
			require.NotNil(t, got)
			got.stdout, got.stderr = nil, nil
			assert.Equal(t, []string{tt.want.model}, got.models)
			got.models = nil
			assert.Equal(t, tt.want, *got)
		})
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "bad.tflite")
	require.NoError(t, os.WriteFile(corrupt, []byte("0123TFL3garbage"), 0o644))
	tests := []struct {
		name    string
		args    []string
		code    int
		errPart string
	}{
		{"no model", nil, exitUsage, "expected one or more model files"},
		{"constants in no known form", []string{helloWorld, "-o", dir, "--constants", "hex"}, exitUsage, `--constants must be c, incbin or embed, got "hex"`},
		{"two models, one missing", []string{helloWorld, filepath.Join(dir, "b.tflite"), "-o", filepath.Join(dir, "two")}, exitFailure, "b.tflite: no such file"},
		{"two models and a prefix", []string{helloWorld, helloWorld, "--prefix", "x"}, exitUsage, "--prefix names one model's C symbols"},
		{"one model twice", []string{helloWorld, helloWorld, "-o", filepath.Join(dir, "twice")}, exitFailure, "would both be named hello_world_int8 in C"},
		{"unknown flag", []string{"--nope", helloWorld}, exitUsage, "unknown flag"},
		{"inspect without model", []string{"inspect"}, exitUsage, "inspect: expected one model file"},
		{"missing file", []string{filepath.Join(dir, "missing.tflite"), "-o", dir}, exitFailure, "missing.tflite: no such file"},
		{"corrupt model", []string{corrupt, "-o", filepath.Join(dir, "out")}, exitFailure, "compile " + corrupt + ": tflite:"},
		{"empty -o", []string{helloWorld, "-o", ""}, exitUsage, "-o is empty; give the directory to write the plan and C files into"},
		{"unknown schedule", []string{helloWorld, "--schedule", "fastest", "-o", filepath.Join(dir, "o3")}, exitUsage, `--schedule: unknown schedule "fastest" (known: memory, model)`},
		{"unknown patches", []string{helloWorld, "--patches", "on", "-o", filepath.Join(dir, "o4")}, exitUsage, `--patches: unknown value "on" (known: auto, off)`},
		{"patch MACs not a number", []string{helloWorld, "--patch-macs", "ten", "-o", filepath.Join(dir, "o5")}, exitUsage, `--patch-macs: "ten" is not a percentage (10%) or a fraction (0.1)`},
		{"patch MACs of none", []string{helloWorld, "--patches", "auto", "--patch-macs", "0%", "-o", filepath.Join(dir, "o6")}, exitUsage, "allows no extra multiply-accumulates"},
		{"unknown planner", []string{helloWorld, "--planner", "magic", "-o", filepath.Join(dir, "o2")}, exitUsage, `unknown planner "magic" (known: best, tflm, linear)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runHeliac(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stderr, tt.errPart)
			assert.True(t, strings.HasPrefix(stderr, "heliac: "), stderr)
		})
	}
	// A failed compile writes nothing.
	_, err := os.Stat(filepath.Join(dir, "out"))
	assert.True(t, os.IsNotExist(err), "corrupt model must not create the output directory")
}

func TestCompileWritesPlanAndSources(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runHeliac(helloWorld, "-o", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "scratch")
	assert.Contains(t, stdout, "lower bound")
	for _, f := range []string{"hello_world_int8.plan.json", "hello_world_int8.h", "hello_world_int8.c"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary files are left behind")
	var plan map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "hello_world_int8.plan.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &plan))
	for _, k := range []string{"tensor_allocs", "arena_usages", "persistent_arenas", "constant_arenas", "tensor_lifetimes"} {
		assert.Contains(t, plan, k)
	}

	code, stdout, _ = runHeliac(helloWorld, "-o", dir, "--prefix", "hw", "-q")
	require.Equal(t, exitOK, code)
	assert.Empty(t, stdout)
	assert.FileExists(t, filepath.Join(dir, "hw.h"))
}

func TestInspect(t *testing.T) {
	code, stdout, stderr := runHeliac("inspect", helloWorld)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "1 subgraph(s), 10 tensor(s), 3 operator(s)")
	assert.Contains(t, stdout, "FULLY_CONNECTED")

	code, stdout, stderr = runHeliac("inspect", "--json", helloWorld)
	require.Equal(t, exitOK, code, stderr)
	var m struct {
		Subgraphs []struct {
			Tensors   []json.RawMessage `json:"tensors"`
			Operators []json.RawMessage `json:"operators"`
		} `json:"subgraphs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &m))
	require.Len(t, m.Subgraphs, 1)
	assert.Len(t, m.Subgraphs[0].Tensors, 10)
	assert.Len(t, m.Subgraphs[0].Operators, 3)
}

// TestManners: --version names the version, completion scripts come for
// the usual shells, a model that does not fit exits 3 with one line
// first naming the bank and the details after it.
func TestManners(t *testing.T) {
	code, stdout, _ := runHeliac("--version")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `^heliac version \S+\n$`, stdout)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runHeliac("completion", shell)
		assert.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "heliac", shell)
		assert.Greater(t, len(stdout), 500, shell)
	}

	dir := t.TempDir()
	tiny := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(tiny, []byte("base: generic\nname: tiny\nbanks:\n  - name: SRAM\n    capacity: 16\n"), 0o644))
	code, stdout, stderr := runHeliac(helloWorld, "-o", filepath.Join(dir, "out"), "--platform-file", tiny)
	assert.Equal(t, exitNoFit, code, stderr)
	assert.Empty(t, stdout)
	first, _, _ := strings.Cut(stderr, "\n")
	assert.Regexp(t, `^heliac: compile .*hello_world_int8.tflite: .*SRAM`, first, "one line first, naming the bank")
	assert.NoDirExists(t, filepath.Join(dir, "out"), "nothing written")
}

// TestPanicIsABug: a panic in the main command (a heliac bug) is reported
// on one line with its stack after, exit code 4, not a crash.
func TestPanicIsABug(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runWith(func(*compileOptions) error { panic("boom") }, []string{helloWorld, "-o", t.TempDir()}, &stdout, &stderr)
	assert.Equal(t, exitVerify, code)
	first, _, _ := strings.Cut(stderr.String(), "\n")
	assert.Equal(t, "heliac: heliac bug: boom (please report it with the model and the command)", first)
	assert.Contains(t, stderr.String(), "goroutine")
}
