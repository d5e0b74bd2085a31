package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStrict checks --strict: by default a rule that selects nothing is a
// warning and the plan is written; with --strict it fails the compile
// (exit 1, a config problem) naming the rule, and nothing is written.
func TestStrict(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("rules:\n  - {tensor: \"0:99\", memory: SRAM}\n  - {name: \"serving_default_*\", memory: SRAM}\n"), 0o644))

	out := filepath.Join(dir, "warn")
	code, stdout, stderr := runHeliac(helloWorld, "--config", cfg, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "\n  warning: rule 0 (tensor \"0:99\") selects nothing: subgraph 0 has 10 tensor(s)\n")
	assert.NotContains(t, stdout, "rule 1")
	assert.FileExists(t, filepath.Join(out, "hello_world_int8.plan.json"))

	out = filepath.Join(dir, "strict")
	code, stdout, stderr = runHeliac(helloWorld, "--config", cfg, "-o", out, "--strict")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "heliac: compile "+helloWorld+": plan: rule 0 (tensor \"0:99\") selects nothing: subgraph 0 has 10 tensor(s) (rules are strict)\n", stderr)
	assert.NoDirExists(t, out)
}

func TestStrictFlag(t *testing.T) {
	var got *compileOptions
	cmd := newRootCmd(func(o *compileOptions) error { got = o; return nil }, &bytes.Buffer{}, &bytes.Buffer{})
	cmd.SetArgs([]string{"m.tflite", "--strict"})
	require.NoError(t, cmd.Execute())
	assert.True(t, got.strict)
}
