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
	js, err := os.ReadFile(filepath.Join(dir, "plan.json"))
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
		{"ok", []string{"verify", helloWorld, dir}, exitOK, filepath.Join(dir, "plan.json") + ": ok\n", ""},
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
	assert.Equal(t, filepath.Join(dir, "plan.json")+": ok\n", stdout)
}
