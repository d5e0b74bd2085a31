package dsa

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bestDSA is the height Best must reach on each of MiniMalloc's challenging
// problems: the best MiniMalloc reports (shared/README.md), which is the
// lower bound, and so optimal, for all but D.
var bestDSA = map[string]int64{
	"A": 1048576, "B": 1048576, "C": 1039360, "D": 1038336,
	"E": 1048576, "F": 1048576, "H": 1048576, "K": 1048576,
}

// TestBestDSA runs Best on MiniMalloc's challenging set with a generous
// deadline, so that a loaded machine does not fail it, and logs how long it
// took: the target is under 5 s each on two cores. Under the race detector
// or -short it gives each half a second and checks only that the answer is
// valid and no worse than Greedy's.
func TestBestDSA(t *testing.T) {
	probs := readDSA(t)
	quick := testing.Short() || raceEnabled
	for _, name := range slices.Sorted(maps.Keys(probs)) {
		p := probs[name]
		t.Run(name, func(t *testing.T) {
			want, ok := bestDSA[name]
			require.True(t, ok, "no target height for %s", name)
			timeout := 20 * time.Second
			if quick {
				timeout = time.Second / 2
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			s, err := bestUntil(ctx, p, want)
			took := time.Since(start)
			require.NoError(t, err)
			requireValid(t, p, s)
			g, err := Greedy(context.Background(), p)
			require.NoError(t, err)
			assert.LessOrEqual(t, s.Height, g.Height, "above Greedy")
			t.Logf("%s: height %d, lower bound %d, target %d, in %v", name, s.Height, LowerBound(p), want, took)
			if !quick {
				assert.LessOrEqual(t, s.Height, want, "height")
			}
		})
	}
}

// bestUntil runs Best, but stops as soon as it reaches want (Best goes on
// to the deadline where the bound is out of reach, as it is for D): so it
// measures how long Best takes to get there.
func bestUntil(ctx context.Context, p Problem, want int64) (Solution, error) {
	lim := defaultLimits()
	lim.good = want
	return best(ctx, p, lim)
}

// TestBestReachesTFLMLowerBound runs Best on the buffers TFLM planned for
// every corpus model it runs. tflm-reference.tsv's minimalloc_peak (the
// optimum MiniMalloc proved) equals tflm_lower_bound, LowerBound over all
// the buffers, kernel scratch included, on every model: so Best must reach
// it on all the buffers, and LowerBound on the tensors alone.
func TestBestReachesTFLMLowerBound(t *testing.T) {
	dir := filepath.Join(corpus.Require(t), "bench")
	ref, err := corpus.ReadTSV(filepath.Join(dir, "tflm-reference.tsv"))
	require.NoError(t, err)
	var models, tensorOnlyBelow int
	var slowest time.Duration
	for _, row := range ref {
		if row["status"] != "ok" {
			continue
		}
		name := tflmCSVName(row["model"])
		models++
		t.Run(name, func(t *testing.T) {
			tb := readTFLMBuffers(t, filepath.Join(dir, "tflm-buffers", name))
			peak, err := strconv.ParseInt(row["minimalloc_peak"], 10, 64)
			require.NoError(t, err)
			require.Equal(t, row["tflm_lower_bound"], row["minimalloc_peak"], "minimalloc_peak")
			require.Equal(t, peak, LowerBound(tb.all), "minimalloc_peak is LowerBound of all buffers")
			if lb := LowerBound(tb.tensors); lb < peak {
				tensorOnlyBelow++
			}

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			all, err := Best(ctx, tb.all)
			require.NoError(t, err)
			requireValid(t, tb.all, all)
			assert.Equal(t, peak, all.Height, "all buffers")
			tensors, err := Best(ctx, tb.tensors)
			require.NoError(t, err)
			requireValid(t, tb.tensors, tensors)
			assert.Equal(t, LowerBound(tb.tensors), tensors.Height, "tensors only")
			slowest = max(slowest, time.Since(start))
		})
	}
	t.Logf("%d models; minimalloc_peak = LowerBound of all buffers on each, above that of the tensors alone on %d; slowest %v",
		models, tensorOnlyBelow, slowest)
}

// TestBestDeterministic runs Best twice with the same generous deadline on
// problems it solves to the lower bound and expects the same offsets.
func TestBestDeterministic(t *testing.T) {
	probs := readDSA(t)
	names := []string{"C", "K"}
	if !raceEnabled && !testing.Short() {
		names = append(names, "A", "F", "H")
	}
	for _, name := range names {
		p := probs[name]
		t.Run(name, func(t *testing.T) {
			var runs [2]Solution
			for k := range runs {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				s, err := Best(ctx, p)
				cancel()
				require.NoError(t, err)
				require.Equal(t, LowerBound(p), s.Height)
				runs[k] = s
			}
			assert.Equal(t, runs[0], runs[1])
		})
	}
}

// TestBestDeadline checks that Best returns soon after its deadline with a
// valid placement no worse than Greedy's, on a problem whose bound it
// cannot reach.
func TestBestDeadline(t *testing.T) {
	p := readDSA(t)["D"]
	g, err := Greedy(context.Background(), p)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Best(ctx, p)
	took := time.Since(start)
	require.NoError(t, err)
	requireValid(t, p, s)
	assert.LessOrEqual(t, s.Height, g.Height)
	assert.Less(t, took, 2*time.Second, "returned %v after a 200ms deadline", took)
}

// TestBestLimits checks Best's fallbacks on problems too big for it, by
// shrinking the limits: too many buffers live together gives Greedy's
// answer; too many buffers for the search, or too big sections, the best
// heuristic's.
func TestBestLimits(t *testing.T) {
	// Alignment padding defeats the heuristics here: they reach 92.
	p := Problem{Buffers: []Buffer{
		{Start: 0, End: 1, Size: 35, Align: 3}, buf(1, 2, 25), {Start: 2, End: 6, Size: 12, Align: 8},
		{Start: 3, End: 4, Size: 34, Align: 4}, buf(2, 6, 35), buf(5, 9, 5), buf(1, 3, 40),
	}}
	g, err := Greedy(context.Background(), p)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		change func(*limits)
		want   int64
	}{
		{"defaults", func(*limits) {}, 87},
		{"pairs", func(l *limits) { l.pairs = 1 }, g.Height},
		{"search buffers", func(l *limits) { l.searchBuffers = 6 }, 92},
		{"sections", func(l *limits) { l.members = 3 }, 92},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := defaultLimits()
			tc.change(&lim)
			s, err := best(context.Background(), p, lim)
			require.NoError(t, err)
			requireValid(t, p, s)
			assert.Equal(t, tc.want, s.Height)
		})
	}
	assert.Equal(t, int64(87), bruteForce(p))
}

// TestBestHopelessCapacity checks that a capacity below the lower bound
// fails at once, with the best heuristic placement.
func TestBestHopelessCapacity(t *testing.T) {
	p := readDSA(t)["D"]
	p.Capacity = LowerBound(p) - 1
	s, err := Best(context.Background(), p)
	require.ErrorIs(t, err, ErrInfeasible)
	requireValid(t, p, s)
	assert.Greater(t, s.Height, p.Capacity)
}
