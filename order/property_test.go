package order_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/tflite"
)

// propSeeds is how many seeds TestRandomModels runs of each preset.
var propSeeds = map[string]int64{"default": 150, "large": 50, "deep": 50, "long": 50}

// TestRandomModels schedules random models (internal/randmodel, written
// with tflite.Encode and read back) in every mode (plain, and with TFLM's
// in-place contracts): every order must verify, its peaks must be
// liveness's, and Peak <= ModelPeak, LowerBound <= Peak. Rerun one failure
// with go test ./order -run 'TestRandomModels/default/seed=22$'.
func TestRandomModels(t *testing.T) {
	for _, p := range randmodel.Presets() {
		n := propSeeds[p.Name]
		if testing.Short() || raceEnabled {
			n /= 10
		}
		for seed := range n {
			name := fmt.Sprintf("%s/seed=%d", p.Name, seed)
			t.Run(name, func(t *testing.T) {
				data, err := tflite.Encode(randmodel.Generate(seed, p.Config), tflite.EncodeOptions{})
				require.NoError(t, err)
				checkModes(t, name, data, load(t, data))
			})
		}
	}
}
