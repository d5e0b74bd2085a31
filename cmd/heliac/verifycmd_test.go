package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifyCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := runHeliac("verify", helloWorld, dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "plan.json: ok")

	// Put every scratch tensor at offset 0: live tensors now overlap.
	js, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	require.NoError(t, err)
	bad := strings.ReplaceAll(string(js), `"offset": 16,`, `"offset": 0,`)
	require.NotEqual(t, string(js), bad, "the plan has a tensor at offset 16")
	badPath := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(badPath, []byte(bad), 0o644))
	code, _, stderr = runHeliac("verify", helloWorld, badPath)
	assert.Equal(t, exitVerify, code)
	assert.Contains(t, stderr, "Overlap")

	code, _, stderr = runHeliac("verify", "../../testdata/models/micro_speech_quantized.tflite", dir)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "sha256")

	code, _, stderr = runHeliac("verify")
	assert.Equal(t, exitUsage, code, stderr)

	// Without a model, verify finds it beside the plan by its sha256.
	code, _, stderr = runHeliac("verify", dir)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "no model with sha256")
	model, err := os.ReadFile(helloWorld)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "renamed.tflite"), model, 0o644))
	code, stdout, stderr = runHeliac("verify", dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "plan.json: ok")
}
