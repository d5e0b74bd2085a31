package dsa

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// medium is TFLM's TestGreedyMedium: Greedy needs 90 bytes, 80 (the lower
// bound) suffice.
func medium() Problem {
	return Problem{Buffers: []Buffer{buf(0, 2, 10), buf(1, 3, 20), buf(2, 4, 30), buf(3, 5, 40), buf(0, 2, 50)}}
}

// twoAligned is two buffers of 3 bytes at multiples of 4, live together:
// the lower bound is 6, but no placement is lower than 7, and only Best's
// search proves it.
func twoAligned() Problem {
	return Problem{Buffers: []Buffer{{Start: 0, End: 2, Size: 3, Align: 4}, {Start: 0, End: 2, Size: 3, Align: 4}}}
}

// padded is a problem where alignment padding defeats the heuristics.
func padded() Problem {
	return Problem{Buffers: []Buffer{
		{Start: 0, End: 1, Size: 35, Align: 3}, buf(1, 2, 25), {Start: 2, End: 6, Size: 12, Align: 8},
		{Start: 3, End: 4, Size: 34, Align: 4}, buf(2, 6, 35), buf(5, 9, 5), buf(1, 3, 40),
	}}
}

// TestDeadlinePassed checks that running out of time is no failure: with a
// deadline already past, every strategy returns a valid placement (Best at
// least Greedy's), as it would with time to spare for Linear and Greedy.
func TestDeadlinePassed(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, tc := range []struct {
		name string
		p    Problem
	}{{"medium", medium()}, {"padded", padded()}, {"random", randomProblem(3, true)}} {
		name, p := tc.name, tc.p
		g, err := Greedy(context.Background(), p)
		require.NoError(t, err)
		for _, st := range strategies {
			t.Run(name+"/"+st.name, func(t *testing.T) {
				s, err := st.run(ctx, p)
				require.NoError(t, err)
				requireValid(t, p, s)
				assert.LessOrEqual(t, s.Height, max(g.Height, height(p.Buffers, linearOffsets(t, p))))
				if st.name != "Best" {
					want, err := st.run(context.Background(), p)
					require.NoError(t, err)
					assert.Equal(t, want, s, "the deadline changes nothing")
				}
			})
		}
	}
}

func linearOffsets(t *testing.T, p Problem) []int64 {
	s, err := Linear(context.Background(), p)
	require.NoError(t, err)
	return s.Offsets
}

// TestDeadlinePassedHardProblem checks Best on MiniMalloc's D, whose bound
// it cannot reach, when its time is already up: Greedy's placement or
// better, not proven optimal.
func TestDeadlinePassedHardProblem(t *testing.T) {
	p := readDSA(t)["D"]
	g, err := Greedy(context.Background(), p)
	require.NoError(t, err)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	s, err := Best(ctx, p)
	require.NoError(t, err)
	requireValid(t, p, s)
	assert.LessOrEqual(t, s.Height, g.Height)
	assert.False(t, s.Optimal)
}

// TestOptimal checks Solution.Optimal: set when the height meets the lower
// bound, or a higher bound Best's search proved, and only then.
func TestOptimal(t *testing.T) {
	tests := []struct {
		name    string
		run     Strategy
		p       Problem
		height  int64
		optimal bool
	}{
		{"Greedy above the bound", Greedy, medium(), 90, false},
		{"Best at the bound", Best, medium(), 80, true},
		{"Linear at the bound", Linear, Problem{Buffers: []Buffer{buf(0, 1, 4)}}, 4, true},
		{"Linear above the bound", Linear, Problem{Buffers: []Buffer{buf(0, 2, 4), buf(2, 4, 4)}}, 8, false},
		{"Best proves an optimum above LowerBound", Best, twoAligned(), 7, true},
		{"Greedy cannot", Greedy, twoAligned(), 7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.run(context.Background(), tt.p)
			require.NoError(t, err)
			assert.Equal(t, tt.height, s.Height)
			assert.Equal(t, tt.optimal, s.Optimal)
		})
	}
	assert.Equal(t, int64(6), LowerBound(twoAligned()))
}
