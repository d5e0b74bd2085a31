package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifyArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want verifyOptions
	}{
		{"plan only", []string{"out"}, verifyOptions{plan: "out"}},
		{"model and plan", []string{"m.tflite", "out/plan.json"}, verifyOptions{model: "m.tflite", plan: "out/plan.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *verifyOptions
			cmd := newVerifyCmd(func(o *verifyOptions) error { got = o; return nil }, &bytes.Buffer{})
			cmd.SetArgs(tt.args)
			require.NoError(t, cmd.Execute())
			require.NotNil(t, got)
			got.stdout = nil
			assert.Equal(t, tt.want, *got)
		})
	}
}

// TestVerifyCommand checks verify's exit codes and output; driver's tests
// cover how the plan and model are found and checked.
func TestVerifyCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q")
	require.Equal(t, exitOK, code, stderr)
	js, err := os.ReadFile(filepath.Join(dir, "hello_world_int8.plan.json"))
	require.NoError(t, err)

	// Every scratch tensor at offset 0: live tensors now overlap.
	bad := strings.ReplaceAll(string(js), `"offset": 16,`, `"offset": 0,`)
	require.NotEqual(t, string(js), bad, "the plan has a tensor at offset 16")
	badPath := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(badPath, []byte(bad), 0o644))
	unnamed := regexp.MustCompile(`"sha256": "[0-9a-f]{64}"`).ReplaceAllString(string(js), `"sha256": ""`)
	require.NotEqual(t, string(js), unnamed, "the plan records the model's sha256")
	unnamedPath := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(unnamedPath, []byte(unnamed), 0o644))

	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		errPart string
	}{
		{"ok", []string{"verify", helloWorld, dir}, exitOK, filepath.Join(dir, "hello_world_int8.plan.json") + ": ok\n", ""},
		{"violations", []string{"verify", helloWorld, badPath}, exitVerify, "", "Overlap"},
		{"another model", []string{"verify", "../../testdata/models/micro_speech_quantized.tflite", dir}, exitFailure, "", "sha256"},
		{"no model beside the plan", []string{"verify", dir}, exitFailure, "", "no model with sha256"},
		{"plan names no model", []string{"verify", unnamedPath}, exitUsage, "", "names no model sha256; give the model"},
		{"no arguments", []string{"verify"}, exitUsage, "", "verify: expected [model] and a plan, got 0 argument(s)"},
		{"missing plan", []string{"verify", helloWorld, filepath.Join(dir, "nope.json")}, exitFailure, "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runHeliac(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.stdout, stdout)
			assert.Contains(t, stderr, tt.errPart)
		})
	}

	// Found beside the plan by its sha256.
	model, err := os.ReadFile(helloWorld)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "renamed.tflite"), model, 0o644))
	code, stdout, stderr := runHeliac("verify", dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, filepath.Join(dir, "hello_world_int8.plan.json")+": ok\n", stdout)
}

// TestVerifySets checks verify on directories of sets: a set whose files
// come from two runs fails (exit 1), a directory of several plans needs the
// plan named when the model is given, and each failing plan gets its line.
func TestVerifySets(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q")
	require.Equal(t, exitOK, code, stderr)
	linear := filepath.Join(root, "linear")
	code, _, stderr = runHeliac(helloWorld, "-o", linear, "-q", "--planner", "linear")
	require.Equal(t, exitOK, code, stderr)
	plan := filepath.Join(dir, "hello_world_int8.plan.json")

	// A run killed between renames: the new source beside the old plan.
	src, err := os.ReadFile(filepath.Join(linear, "hello_world_int8.c"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello_world_int8.c"), src, 0o644))
	code, stdout, stderr := runHeliac("verify", helloWorld, dir)
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, `^heliac: verify: \S+/out/hello_world_int8.c has plan hash [0-9a-f]{64}, but \S+/out/hello_world_int8.plan.json has [0-9a-f]{64}: `+
		`the files come from different runs of heliac; run heliac again to write the set whole\n$`, stderr)

	// Two plans: the model given must come with the plan's name.
	code, _, stderr = runHeliac(microSpeech, "-o", dir, "-q")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runHeliac("verify", helloWorld, dir)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "heliac: verify: "+dir+" holds 2 plan files; name the one made for "+helloWorld+"\n", stderr)

	// Without the model, each plan is verified and each failure reported.
	code, stdout, stderr = runHeliac("verify", dir)
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if assert.Len(t, lines, 2, stderr) {
		assert.Contains(t, lines[0], "heliac: verify: "+filepath.Join(dir, "hello_world_int8.c")+" has plan hash")
		assert.Contains(t, lines[1], "heliac: verify: no model with sha256")
	}
	code, stdout, stderr = runHeliac("verify", helloWorld, plan)
	assert.Equal(t, exitFailure, code, "the mixed set, named")
	assert.Empty(t, stdout, stderr)
}

// TestEmittedPlanInfo: the model --emit-tflite writes says what its plan
// was made for (the kernels, code path and builds, the TFLM target, the
// plan's hash); inspect prints it, verify checks it against the plan and
// prints it, and a model written for other kernels beside the plan is a
// violation (exit 4).
func TestEmittedPlanInfo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	code, _, stderr := runHeliac(helloWorld, "-o", a, "--emit-tflite", "--platform", "apollo510", "--one-scratch-bank")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr := runHeliac("inspect", filepath.Join(a, "hello_world_int8.tflite"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "heliac plan (heliac_plan): planned by heliac dev for kernels any (mve): tflm-reference, cmsis-nn (mve); TFLM target cortex-m; plan ")
	code, stdout, stderr = runHeliac("verify", helloWorld, a)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "hello_world_int8.tflite: ok, planned for kernels any (mve): tflm-reference; cmsis-nn (mve); TFLM target cortex-m; plan ")

	code, _, stderr = runHeliac(helloWorld, "-o", b, "--emit-tflite", "--kernels", "tflm-reference", "--tflm-target", "host64")
	require.Equal(t, exitOK, code, stderr)
	data, err := os.ReadFile(filepath.Join(b, "hello_world_int8.tflite"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, "hello_world_int8.tflite"), data, 0o644))
	code, _, stderr = runHeliac("verify", helloWorld, a)
	assert.Equal(t, exitVerify, code)
	assert.Contains(t, stderr, `ModelMismatch: hello_world_int8.tflite: metadata "heliac_plan" records kernels "tflm-reference", but the plan's is "any"`)
}
