package dsa

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readDSA reads MiniMalloc's challenging benchmark problems from the shared
// directory, keyed by file letter. Capacity is left 0: Greedy does not fit
// their 1 MiB capacity, and the benchmark reports how far it is above it.
func readDSA(tb testing.TB) map[string]Problem {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(corpus.Require(tb), "bench", "dsa", "*.csv"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	out := map[string]Problem{}
	for _, f := range files {
		r, err := os.Open(f)
		require.NoError(tb, err)
		p, _, err := ReadCSV(r)
		r.Close()
		require.NoError(tb, err, f)
		out[strings.SplitN(filepath.Base(f), ".", 2)[0]] = p
	}
	return out
}

// TestGreedyDSA pins Greedy's heights on MiniMalloc's challenging set to the
// figures TFLM's GreedyMemoryPlanner gives (shared/README.md).
func TestGreedyDSA(t *testing.T) {
	want := map[string]struct{ lower, greedy int64 }{
		"A": {1048576, 1352704},
		"B": {1048576, 1412096},
		"C": {1039360, 1417216},
		"D": {986112, 1301504},
		"E": {1048576, 1435648},
		"F": {1048576, 1348608},
		"H": {1048576, 1444864},
		"K": {1048576, 1339392},
	}
	probs := readDSA(t)
	for _, name := range slices.Sorted(maps.Keys(probs)) {
		p := probs[name]
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			require.True(t, ok, "no reference figures for %s", name)
			s, err := Greedy(context.Background(), p)
			require.NoError(t, err)
			requireValid(t, p, s)
			assert.Equal(t, w.lower, LowerBound(p), "lower bound")
			assert.Equal(t, w.greedy, s.Height, "height")
		})
	}
}

// BenchmarkGreedyDSA times Greedy on MiniMalloc's challenging set and reports
// the height it reaches next to the lower bound.
func BenchmarkGreedyDSA(b *testing.B) {
	probs := readDSA(b)
	for _, name := range slices.Sorted(maps.Keys(probs)) {
		p := probs[name]
		b.Run(name, func(b *testing.B) {
			var s Solution
			for b.Loop() {
				var err error
				if s, err = Greedy(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.Height), "height")
			b.ReportMetric(float64(LowerBound(p)), "lowerbound")
			b.ReportMetric(float64(s.Height)/float64(LowerBound(p)), "height/lb")
		})
	}
}
