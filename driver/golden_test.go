package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
)

// goldenDir holds, per bundled model, the files heliac emits for it. Set
// HELIAC_UPDATE=1 (make golden) to rewrite them; review their diffs like code.
const goldenDir = "testdata/golden"

func TestGolden(t *testing.T) {
	update := os.Getenv("HELIAC_UPDATE") != ""
	models := map[string]bool{}
	for _, f := range testModels(t) {
		name := emit.ModelName(f)
		models[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, testConfig(name))
			require.NoError(t, err)
			files := map[string][]byte{"plan.json": out.PlanJSON}
			for _, cf := range out.CFiles {
				files[cf.Name] = cf.Data
			}
			dir := filepath.Join(goldenDir, name)
			if update {
				require.NoError(t, os.RemoveAll(dir))
				require.NoError(t, os.MkdirAll(dir, 0o755))
				for n, d := range files {
					require.NoError(t, os.WriteFile(filepath.Join(dir, n), d, 0o644))
				}
				return
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err, "no golden files for %s; run make golden", name)
			assert.Len(t, entries, len(files), "golden files in %s", dir)
			for n, d := range files {
				want, err := os.ReadFile(filepath.Join(dir, n))
				if !assert.NoError(t, err, "run make golden") {
					continue
				}
				assert.Equal(t, string(want), string(d), "%s differs from its golden file; run make golden and review the diff", n)
			}
		})
	}
	// A golden directory whose model is gone is stale.
	entries, err := os.ReadDir(goldenDir)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	for _, e := range entries {
		if !models[e.Name()] {
			if update {
				require.NoError(t, os.RemoveAll(filepath.Join(goldenDir, e.Name())))
				continue
			}
			t.Errorf("stale golden directory %s: its model is not in testdata/models", e.Name())
		}
	}
}
