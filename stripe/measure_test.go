package stripe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite"
)

func TestMeasure(t *testing.T) {
	// The residual chain of TestApplyGeometry: stripe 0 (y rows 0-3) holds
	// x [0,5), a [0,4), b and y [0,3); stripe 1 x [1,6), a [2,6), b and
	// y [3,6) (worked out there).
	tc := geometryCases()[2]
	require.Equal(t, "chain with a residual ADD", tc.name)
	m := tc.build(t)
	r, needs, err := Measure(m, tc.region(m))
	require.NoError(t, err)
	assert.Equal(t, tc.macs, r.MACs)
	assert.Equal(t, tc.extra, r.ExtraMACs)
	assert.Equal(t, []map[graph.TensorID][2]int32{
		{0: {0, 5}, 1: {0, 4}, 4: {0, 3}, 7: {0, 3}},
		{0: {1, 6}, 1: {2, 6}, 4: {3, 6}, 7: {3, 6}},
	}, needs)

	// With cached halos each stripe holds the same rows of a, of which
	// stripe 1 computes [4,6) only; x: the rows its operators read
	// (a [4,6) reads x [3,7), the ADD x [3,6)).
	cached := tc.region(m)
	cached.Halo = graph.HaloCache
	r, needs, err = Measure(m, cached)
	require.NoError(t, err)
	assert.Equal(t, tc.macs, r.MACs)
	assert.Equal(t, int64(0), r.ExtraMACs)
	assert.Equal(t, []map[graph.TensorID][2]int32{
		{0: {0, 5}, 1: {0, 4}, 4: {0, 3}, 7: {0, 3}},
		{0: {3, 6}, 1: {2, 6}, 4: {3, 6}, 7: {3, 6}},
	}, needs)

	bad := tc.region(m)
	bad.Rows = [][2]int32{{0, 2}, {3, 6}}
	_, _, err = Measure(m, bad)
	assert.ErrorContains(t, err, "stripe 1 has rows [3,6)")
}

// TestMeasureMatchesApply: on every geometry case and on candidates of a
// corpus model with k from 2 to 10, halos recomputed and cached, Measure
// gives Apply's MACs and ExtraMACs, and accepts what Apply accepts.
func TestMeasureMatchesApply(t *testing.T) {
	type item struct {
		m *graph.Model
		r graph.StripeRegion
	}
	var items []item
	for _, tc := range geometryCases() {
		m := tc.build(t)
		items = append(items, item{m, tc.region(m)})
	}
	if dir := corpus.SharedDir(); dir != "" {
		data, err := os.ReadFile(filepath.Join(dir, "corpus", "tflite-micro/custom_model_rf_keras.tflite"))
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err)
		c := Candidates(m)
		if testing.Short() {
			c = c[:min(len(c), 30)]
		}
		for _, r := range c {
			h := m.Tensor(r.Subgraph, r.Output).Shape[1]
			for k := 2; k <= maxConcatInputs && int32(k) <= h; k++ {
				r.Rows = EvenRows(h, k)
				items = append(items, item{m, r})
			}
			// More than 10 stripes, joined in groups.
			for _, k := range []int{16, 37, MaxStripes} {
				if int32(k) <= h {
					r.Rows = EvenRows(h, k)
					items = append(items, item{m, r})
				}
			}
		}
	}
	for _, tc := range cacheCases() {
		m := tc.build(t)
		items = append(items, item{m, tc.region(m)})
	}
	for _, tc := range groupModels() {
		m := tc.build(t)
		r := tc.region
		for _, k := range []int{11, 13, 20} {
			r.Rows = EvenRows(m.Tensor(0, r.Output).Shape[1], k)
			items = append(items, item{m, r})
		}
	}
	n := len(items)
	for _, it := range items[:n] {
		it.r.Halo = graph.HaloCache
		items = append(items, it)
	}
	cached := 0
	for _, it := range items {
		regs := []graph.StripeRegion{it.r}
		_, errApply := Apply(it.m, regs)
		got, _, errMeasure := Measure(it.m, it.r)
		require.Equal(t, errApply == nil, errMeasure == nil, "region %+v: Apply %v, Measure %v", it.r, errApply, errMeasure)
		if errApply == nil {
			if it.r.Cached() {
				cached++
				assert.LessOrEqual(t, got.ExtraMACs, int64(0), "region %+v", it.r)
			}
			assert.Equal(t, regs[0].MACs, got.MACs, "region %+v", it.r)
			assert.Equal(t, regs[0].ExtraMACs, got.ExtraMACs, "region %+v", it.r)
		}
	}
	assert.Positive(t, cached)
}
