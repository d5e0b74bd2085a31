package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestTFLMOneScratchBank: on the Apollo510, MobileNet V2's scratch (1.2 MB)
// does not fit the 512 KB DTCM, so the default plan spills into SRAM and
// --emit-tflite refuses it, naming --one-scratch-bank; with it, every
// scratch tensor lies in SRAM, the plan verifies (Compile checks it), and
// stock TFLM computes the same outputs from the emitted model as from the
// original.
func TestTFLMOneScratchBank(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("plans and runs MobileNet V2; skipped with -short")
	}
	var model tflmModel
	for _, m := range tflmModels(t) {
		if m.File == "coral/tf2_mobilenet_v2_1.0_224_ptq.tflite" {
			model = m
		}
	}
	require.NotEmpty(t, model.Path, "the corpus has MobileNet V2")
	data, err := os.ReadFile(model.Path)
	require.NoError(t, err)
	ap510, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	cfg := referenceConfig(t)
	cfg.ModelName, cfg.Version, cfg.EmitTFLite = "mobilenet", "test", true
	cfg.Plan.Platform = &ap510

	_, err = driver.Compile(context.Background(), data, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TFLM has one arena, but this plan puts scratch tensors in 2")
	assert.Contains(t, err.Error(), "--one-scratch-bank")

	cfg.Plan.OneScratchBank = true
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var banks []string
	for _, a := range out.Plan.Arenas {
		if a.Role == liveness.Scratch {
			banks = append(banks, a.Memory)
		}
	}
	assert.Equal(t, []string{"SRAM"}, banks, "one scratch arena, in the fastest bank that holds it")

	tool := tflmrun.Require(t)
	path := filepath.Join(t.TempDir(), "mobilenet.tflite")
	require.NoError(t, os.WriteFile(path, out.TFLite.Data, 0o644))
	orig := model.run(t, tool, model.Path, 1, false)
	mine := model.run(t, tool, path, 1, false)
	assert.Equal(t, orig.Outputs(), mine.Outputs(), "outputs with heliac's one-bank plan equal TFLM's own")
	assert.Equal(t, int64(out.TFLite.Offline.Planned), mine.Int("planner_offline_buffers"))
	assert.Equal(t, out.TFLite.Offline.ArenaSize, mine.Int("planner_max_bytes"), "the head is heliac's scratch arena")
}
