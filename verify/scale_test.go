package verify_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// TestWorkNearLinear checks that the verifier's checks relating
// allocations to one another (alias chains, in-place writes, overlapping
// pairs, group widths) grow near-linearly with the plan: on chains of
// RELUs written in place (one alias group of n members, each written over
// the last), on the same chains without in-place writes (n allocations in
// one arena) and on a wide fan, four times the operators take at most
// six times the work (n log n allows about five; trying every pair, or
// walking every chain from every member, takes sixteen). The work is a
// count, so the test times nothing.
func TestWorkNearLinear(t *testing.T) {
	const n = 1000
	tests := []struct {
		name  string
		model func(n int) *graph.Model
		opts  heliac.Options
	}{
		{"in-place chain", func(n int) *graph.Model { return randmodel.ReluChain(n, 4) }, heliac.Options{}},
		{"chain", func(n int) *graph.Model { return randmodel.ReluChain(n, 4) }, heliac.Options{NoInPlace: true}},
		{"wide fan", func(n int) *graph.Model { return randmodel.WideFan(n / 2) }, heliac.Options{Schedule: "model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := func(n int) int64 {
				data, err := tflite.Encode(tt.model(n), tflite.EncodeOptions{})
				require.NoError(t, err)
				out, err := heliac.Compile(context.Background(), data, tt.opts)
				require.NoError(t, err)
				v, w := verify.PlanWork(out.Model, out.PlanJSON)
				require.Empty(t, v)
				require.Positive(t, w)
				return w
			}
			small, large := work(n), work(4*n)
			t.Logf("work %d at %d operators, %d at %d", small, n, large, 4*n)
			assert.LessOrEqual(t, large, 6*small)
		})
	}
}
