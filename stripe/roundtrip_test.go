package stripe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// TestApplyEncodeRoundTrip: the rewritten model encodes, and loads back
// equal (but for Stripes, which the file does not carry).
func TestApplyEncodeRoundTrip(t *testing.T) {
	for _, tc := range geometryCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			out, err := Apply(m, []graph.StripeRegion{tc.region(m)})
			require.NoError(t, err)
			p, err := tflite.Encode(out, tflite.EncodeOptions{})
			require.NoError(t, err)
			back, err := tflite.Load(p)
			require.NoError(t, err)
			want := *out
			want.Stripes = nil
			assert.Equal(t, &want, back)
		})
	}
}

// TestApplyLeavesModel: Apply changes nothing of the model it is given.
func TestApplyLeavesModel(t *testing.T) {
	for _, tc := range geometryCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			before := tc.build(t)
			regs := []graph.StripeRegion{tc.region(m)}
			_, err := Apply(m, regs)
			require.NoError(t, err)
			assert.Equal(t, before, m)
		})
	}
}
