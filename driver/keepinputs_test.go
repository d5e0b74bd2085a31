package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
)

// TestOverwriteInputsNeverLarger: the default, in-place writes over model
// inputs, never gives a larger scratch arena than --keep-inputs: on the
// corpus models where it changes the arena (measured with heliac zoo both
// ways), smaller on four, and on pretrainedResnet, where writing over its
// input leaves the placement 384 B above the bound, the inputs kept
// (overwrite_inputs false in the plan) at the bound.
func TestOverwriteInputsNeverLarger(t *testing.T) {
	skipUnderRace(t)
	shared := corpus.Require(t)
	for _, tc := range []struct {
		model   string
		smaller bool // the default is strictly smaller
	}{
		{"mlperf-tiny/pretrainedResnet.tflite", false},
		{"litert/fc_qat.bin", true},
		{"tflite-micro/magic_wand.tflite", true},
		{"coral/keras_lstm_mnist_ptq.tflite", true},
	} {
		t.Run(tc.model, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(shared, "corpus", tc.model))
			require.NoError(t, err)
			compile := func(o heliac.Options) *driver.Output {
				cfg, err := o.Config()
				require.NoError(t, err)
				out, err := driver.Compile(context.Background(), data, cfg)
				require.NoError(t, err)
				return out
			}
			over, keep := compile(heliac.Options{}), compile(heliac.Options{KeepInputs: true})
			o, lb := over.Plan.ScratchTotals()
			k, _ := keep.Plan.ScratchTotals()
			assert.False(t, keep.Lifetimes.OverwriteInputs)
			if tc.smaller {
				assert.Less(t, o, k)
				assert.True(t, over.Lifetimes.OverwriteInputs)
				return
			}
			assert.Equal(t, k, o)
			assert.Equal(t, lb, o, "at the bound")
			assert.False(t, over.Lifetimes.OverwriteInputs, "the plan with the inputs kept")
		})
	}
}
