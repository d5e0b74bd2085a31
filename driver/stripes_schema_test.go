package driver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
)

// TestStripedPlanMatchesJSONSchema: plans of models compiled with
// --patches auto, whose stripes key docs/plan.schema.json describes,
// match the schema (magic_wand's stripes skip rows a VALID pool drops:
// negative extra_macs).
func TestStripedPlanMatchesJSONSchema(t *testing.T) {
	dir := corpus.Require(t)
	for _, f := range []string{"tflite-micro/person_detect.tflite", "tflite-micro/magic_wand.tflite"} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "corpus", f))
			require.NoError(t, err)
			cfg := testConfig("m")
			cfg.Liveness = referenceConfig(t).Liveness
			cfg.Kernels = referenceConfig(t).Kernels
			cfg.Patches = driver.PatchesAuto
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			require.NotEmpty(t, out.Model.Stripes, "%s is striped", f)
			var v map[string]any
			require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
			require.Contains(t, v, "stripes")
			c := loadSchema(t)
			c.check("$", v, c.root)
			require.Empty(t, c.errs)
		})
	}
}
