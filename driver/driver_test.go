package driver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
)

// testConfig is the fixed configuration of golden and corpus runs; version
// "test" keeps a release from churning every golden file.
func testConfig(name string) driver.Config {
	return driver.Config{ModelName: name, Version: "test"}
}

// TestCompileCorpus runs every corpus model end to end; Compile verifies
// each plan independently and fails on any violation.
func TestCompileCorpus(t *testing.T) {
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, testConfig(emit.ModelName(e.File)))
			require.NoError(t, err)
			var plan map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out.PlanJSON, &plan))
			for _, k := range []string{"tensor_allocs", "arena_usages", "persistent_arenas", "constant_arenas", "tensor_lifetimes"} {
				assert.Contains(t, plan, k)
			}
			require.Len(t, out.CFiles, 2)
		})
	}
}

func testModels(t *testing.T) []string {
	files, err := filepath.Glob("../testdata/models/*.tflite")
	require.NoError(t, err)
	require.NotEmpty(t, files, "testdata/models holds the bundled models")
	return files
}

// TestDeterministic compiles each bundled model twice and expects the same
// bytes.
func TestDeterministic(t *testing.T) {
	for _, f := range testModels(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			a, err := driver.Compile(context.Background(), data, testConfig(emit.ModelName(f)))
			require.NoError(t, err)
			b, err := driver.Compile(context.Background(), data, testConfig(emit.ModelName(f)))
			require.NoError(t, err)
			assert.Equal(t, a.PlanJSON, b.PlanJSON)
			assert.Equal(t, a.CFiles, b.CFiles)
		})
	}
}

func TestCompileRejectsCorruptModel(t *testing.T) {
	out, err := driver.Compile(context.Background(), []byte("\x10\x00\x00\x00TFL3\x00\x00"), testConfig("bad"))
	assert.Nil(t, out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tflite:")
}
