package dsa

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTestdata runs every strategy on each testdata/*.csv problem and pins
// the heights. A file without an entry here fails, so none goes stale.
func TestTestdata(t *testing.T) {
	want := map[string]struct{ lower, linear, greedy, best int64 }{
		"tiny.csv":           {48, 96, 48, 48},     // the picture in doc.go
		"tflm_medium.csv":    {80, 150, 90, 80},    // TFLM's TestGreedyMedium, inclusive "end" column
		"aligned_pinned.csv": {212, 272, 224, 212}, // alignment, a pinned buffer, empty offsets
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.csv"))
	require.NoError(t, err)
	require.Len(t, files, len(want))
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			require.True(t, ok, "no expected heights for %s", name)
			r, err := os.Open(f)
			require.NoError(t, err)
			defer r.Close()
			p, _, err := ReadCSV(r)
			require.NoError(t, err)
			assert.Equal(t, w.lower, LowerBound(p), "lower bound")
			for _, st := range strategies {
				s, err := st.run(context.Background(), p)
				require.NoError(t, err, st.name)
				requireValid(t, p, s)
				assert.Equal(t, map[string]int64{"Linear": w.linear, "Greedy": w.greedy, "Best": w.best}[st.name], s.Height, st.name)
			}
		})
	}
}
