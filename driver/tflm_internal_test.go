//go:build !race

// A corpus sweep, built only without the race detector: `make test` runs
// it in its second step (SWEEPS in the Makefile; driver's TestSweepsListed).

package driver

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

// TestTFLMPlansVerify: the plan againstTFLM would keep, TFLM's own
// placement (the model's offline offsets pinned where it carries them, as
// on person_detect_vela), is emitted and verified like any other on every
// corpus model, with and without --emit-tflite.
func TestTFLMPlansVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every corpus model twice; skipped with -short")
	}
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	pinned := 0
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			for _, emit := range []bool{false, true} {
				cfg := tflmConfig(m, Config{ModelName: "m", Version: "test", Kernels: lib, EmitTFLite: emit})
				if emit && len(cfg.Plan.Offline) > 0 {
					pinned++
				}
				s, err := planLoaded(context.Background(), m, cfg)
				require.NoError(t, err)
				s.data = data
				_, err = s.finish()
				assert.NoError(t, err, "--emit-tflite %t", emit)
			}
		})
	}
	assert.NotZero(t, pinned, "a corpus model carries its own offline plan")
}

// BenchmarkAgainstTFLM measures what the comparison with TFLM's own plan
// costs (againstTFLM: one more liveness analysis and greedy placement)
// beside the default compile, on the largest corpus models.
func BenchmarkAgainstTFLM(b *testing.B) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(b, err)
	for _, file := range []string{"tflite-micro/dp_net.tflite", "coral/tf2_mobilenet_v2_1.0_224_ptq.tflite",
		"tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite"} {
		data, err := os.ReadFile(corpus.Require(b) + "/corpus/" + file)
		require.NoError(b, err)
		cfg := Config{ModelName: "m", Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}, Kernels: lib, EmitTFLite: true}
		b.Run(file+"/compile", func(b *testing.B) {
			for b.Loop() {
				_, err := Compile(context.Background(), data, cfg)
				require.NoError(b, err)
			}
		})
		m, err := tflite.Load(data)
		require.NoError(b, err)
		b.Run(file+"/tflm", func(b *testing.B) {
			for b.Loop() {
				_, err := planLoaded(context.Background(), m, tflmConfig(m, cfg))
				require.NoError(b, err)
			}
		})
	}
}
