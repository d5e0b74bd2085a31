package dsa

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buf is a shorthand for an unaligned, unpinned buffer.
func buf(start, end, size int64) Buffer { return Buffer{Start: start, End: end, Size: size} }

// result is what one strategy should return for a case.
type result struct {
	offsets    []int64
	height     int64
	infeasible bool
}

var infeasible = result{infeasible: true}

// TestCases runs MiniMalloc's case list, plus TFLM's planner tests, under
// every strategy. TFLM's tests give inclusive last steps; End is last+1.
func TestCases(t *testing.T) {
	cases := []struct {
		name         string
		p            Problem
		linear, grdy result
		best         int64 // the optimum Best must reach; -1: infeasible
	}{
		{"empty", Problem{},
			result{[]int64{}, 0, false}, result{[]int64{}, 0, false}, 0},
		{"single buffer", Problem{Buffers: []Buffer{buf(0, 1, 4)}},
			result{[]int64{0}, 4, false}, result{[]int64{0}, 4, false}, 4},
		{"touching ends share bytes", Problem{Buffers: []Buffer{buf(0, 2, 4), buf(2, 4, 4)}},
			result{[]int64{0, 4}, 8, false}, result{[]int64{0, 0}, 4, false}, 4},
		{"overlap in time, equal sizes: higher index first", Problem{Buffers: []Buffer{buf(0, 2, 4), buf(1, 3, 4)}},
			result{[]int64{0, 4}, 8, false}, result{[]int64{4, 0}, 8, false}, 8},
		{"alignment", Problem{Buffers: []Buffer{buf(0, 2, 3), {Start: 1, End: 3, Size: 4, Align: 8}}},
			result{[]int64{0, 8}, 12, false}, result{[]int64{4, 0}, 7, false}, 7},
		{"alignment pads above a buffer", Problem{Buffers: []Buffer{buf(0, 1, 5), {Start: 0, End: 1, Size: 4, Align: 4}}},
			result{[]int64{0, 8}, 12, false}, result{[]int64{0, 8}, 12, false}, 9},
		{"fixed offset", Problem{Buffers: []Buffer{{Start: 0, End: 2, Size: 4, Fixed: ptr(8)}, buf(1, 3, 4)}},
			result{[]int64{8, 12}, 16, false}, result{[]int64{8, 0}, 12, false}, 12},
		{"fills the first gap", Problem{Buffers: []Buffer{{Start: 0, End: 4, Size: 4, Fixed: ptr(10)}, buf(0, 4, 6), buf(0, 4, 2)}},
			result{[]int64{10, 14, 20}, 22, false}, result{[]int64{10, 0, 6}, 14, false}, 14},
		{"gap too small: goes on top", Problem{Buffers: []Buffer{{Start: 0, End: 4, Size: 4, Fixed: ptr(10)}, buf(0, 4, 6), buf(0, 4, 5)}},
			result{[]int64{10, 14, 20}, 25, false}, result{[]int64{10, 0, 14}, 19, false}, 19},
		{"zero-size", Problem{Buffers: []Buffer{buf(0, 4, 8), buf(1, 2, 0), buf(3, 1, 0)}},
			result{[]int64{0, 0, 0}, 8, false}, result{[]int64{0, 0, 0}, 8, false}, 8},
		{"zero-size pinned", Problem{Buffers: []Buffer{buf(0, 4, 8), {Start: 1, End: 2, Fixed: ptr(100)}}},
			result{[]int64{0, 100}, 8, false}, result{[]int64{0, 100}, 8, false}, 8},
		{"pinned apart in time share bytes", Problem{Buffers: []Buffer{{Start: 0, End: 2, Size: 8, Fixed: ptr(0)}, {Start: 2, End: 4, Size: 8, Fixed: ptr(0)}}},
			result{[]int64{0, 0}, 8, false}, result{[]int64{0, 0}, 8, false}, 8},
		{"pinned collide", Problem{Buffers: []Buffer{{Start: 0, End: 2, Size: 8, Fixed: ptr(0)}, {Start: 1, End: 3, Size: 8, Fixed: ptr(4)}}},
			infeasible, infeasible, -1},
		{"infeasible with capacity", Problem{Buffers: []Buffer{buf(0, 2, 8), buf(1, 3, 8)}, Capacity: 12},
			infeasible, infeasible, -1},
		{"exactly at capacity", Problem{Buffers: []Buffer{buf(0, 2, 8), buf(1, 3, 8)}, Capacity: 16},
			result{[]int64{0, 8}, 16, false}, result{[]int64{8, 0}, 16, false}, 16},
		{"only reuse fits", Problem{Buffers: []Buffer{buf(0, 1, 8), buf(1, 2, 8)}, Capacity: 8},
			infeasible, result{[]int64{0, 0}, 8, false}, 8},
		{"pinned above capacity", Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: 4, Fixed: ptr(8)}}, Capacity: 10},
			infeasible, infeasible, -1},
		{"TFLM TestGreedyBasics", Problem{Buffers: []Buffer{buf(0, 2, 10), buf(2, 4, 20)}},
			result{[]int64{0, 10}, 30, false}, result{[]int64{0, 0}, 20, false}, 20},
		{"TFLM TestGreedyMedium", Problem{Buffers: []Buffer{buf(0, 2, 10), buf(1, 3, 20), buf(2, 4, 30), buf(3, 5, 40), buf(0, 2, 50)}},
			result{[]int64{0, 10, 30, 60, 100}, 150, false}, result{[]int64{50, 70, 40, 0, 0}, 90, false}, 80},
		{"TFLM TestOverlapCase", Problem{Buffers: []Buffer{buf(0, 2, 100), buf(2, 4, 50), buf(1, 3, 20)}},
			result{[]int64{0, 100, 150}, 170, false}, result{[]int64{0, 0, 100}, 120, false}, 120},
	}
	for _, tc := range cases {
		for _, st := range strategies {
			want, ok := map[string]result{"Linear": tc.linear, "Greedy": tc.grdy}[st.name]
			if !ok { // Best: the optimum, at whatever offsets
				want = result{height: tc.best, infeasible: tc.best < 0}
			}
			t.Run(tc.name+"/"+st.name, func(t *testing.T) {
				s, err := st.run(context.Background(), tc.p)
				if want.infeasible {
					require.ErrorIs(t, err, ErrInfeasible)
					return
				}
				require.NoError(t, err)
				requireValid(t, tc.p, s)
				if want.offsets != nil {
					assert.Equal(t, want.offsets, s.Offsets, "offsets")
				}
				assert.Equal(t, want.height, s.Height, "height")
				assert.LessOrEqual(t, LowerBound(tc.p), s.Height)
			})
		}
	}
}

// TestGreedyMediumLowerBound pins the optimum of TFLM's TestGreedyMedium:
// greedy needs 90 bytes where 80 suffice.
func TestGreedyMediumLowerBound(t *testing.T) {
	p := Problem{Buffers: []Buffer{buf(0, 2, 10), buf(1, 3, 20), buf(2, 4, 30), buf(3, 5, 40), buf(0, 2, 50)}}
	assert.Equal(t, int64(80), LowerBound(p))
}

// TestGreedyPersonDetection is TFLM's TestPersonDetectionModel: the 250 KB
// MobileNet's buffers must pack below their sum of 241027 bytes.
func TestGreedyPersonDetection(t *testing.T) {
	sizes := []int64{9216, 3, 256, 2304, 2304, 2304, 1152, 4608, 4608, 4608, 4608, 4608, 4608, 4608,
		4608, 4608, 4608, 4608, 2304, 9216, 9216, 9216, 4608, 18432, 18432, 18432, 9216, 36864, 18432, 18432}
	firsts := []int64{0, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
		15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	var p Problem
	for i, size := range sizes {
		last := firsts[i] + 1
		if i == 0 {
			last = 29
		}
		p.Buffers = append(p.Buffers, buf(firsts[i], last+1, size))
	}
	s, err := Greedy(context.Background(), p)
	require.NoError(t, err)
	requireValid(t, p, s)
	assert.Less(t, s.Height, int64(241027))
	assert.LessOrEqual(t, LowerBound(p), s.Height)
}

// TestCapacityError checks that a height above capacity still returns the
// whole solution, and says how much was needed.
func TestCapacityError(t *testing.T) {
	p := Problem{Buffers: []Buffer{buf(0, 2, 8), buf(1, 3, 8)}, Capacity: 12}
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			s, err := st.run(context.Background(), p)
			require.ErrorIs(t, err, ErrInfeasible)
			assert.EqualError(t, err, "dsa: infeasible: need 16 bytes, capacity 12")
			requireValid(t, p, s)
		})
	}
}

// TestCanceled checks that strategies stop when their context is done.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			_, err := st.run(ctx, Problem{Buffers: []Buffer{buf(0, 1, 1)}})
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

// TestDeterministic runs each strategy twice on a problem full of ties and
// checks the answers agree and the input is unchanged.
func TestDeterministic(t *testing.T) {
	p := randomProblem(7, true)
	for i := range p.Buffers {
		p.Buffers[i].Size = 16 * int64(1+i%3)
	}
	before := clone(p)
	for _, st := range strategies {
		t.Run(st.name, func(t *testing.T) {
			a, err := st.run(context.Background(), p)
			require.NoError(t, err)
			b, err := st.run(context.Background(), p)
			require.NoError(t, err)
			assert.Equal(t, a, b)
			assert.Equal(t, before, p, "input changed")
		})
	}
}

// TestValidate checks that malformed input is rejected by Validate and by
// every strategy with an error naming the buffer, and that it is not
// ErrInfeasible.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		p    Problem
		err  string // "" for valid
	}{
		{"valid", Problem{Buffers: []Buffer{buf(0, 1, 4), {Start: 0, End: 1, Size: 4, Align: 1, Fixed: ptr(8)}}}, ""},
		{"zero-size with no steps", Problem{Buffers: []Buffer{buf(3, 1, 0), buf(2, 2, 0)}}, ""},
		{"negative capacity", Problem{Capacity: -1}, "dsa: capacity -1 is negative"},
		{"negative size", Problem{Buffers: []Buffer{buf(0, 1, 4), buf(0, 1, -5)}}, "dsa: buffer 1: size -5 is negative"},
		{"end equals start", Problem{Buffers: []Buffer{buf(2, 2, 4)}}, "dsa: buffer 0: end 2 is not after start 2"},
		{"end before start", Problem{Buffers: []Buffer{buf(0, 1, 1), buf(0, 1, 1), buf(5, 3, 1)}}, "dsa: buffer 2: end 3 is not after start 5"},
		{"negative alignment", Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: 1, Align: -4}}}, "dsa: buffer 0: alignment -4 is negative"},
		{"negative pinned offset", Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: 1, Fixed: ptr(-8)}}}, "dsa: buffer 0: pinned offset -8 is negative"},
		{"misaligned pinned offset", Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: 1, Align: 16, Fixed: ptr(8)}}}, "dsa: buffer 0: pinned offset 8 is not a multiple of alignment 16"},
		{"overflow", Problem{Buffers: []Buffer{buf(0, 1, math.MaxInt64/2), buf(0, 1, math.MaxInt64/2), buf(0, 1, 2)}}, "dsa: buffer 2: total size overflows int64"},
		{"pinned overflow", Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: 2, Fixed: ptr(math.MaxInt64 - 1)}}}, "dsa: buffer 0: total size overflows int64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.p)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.err)
			for _, st := range strategies {
				_, err := st.run(context.Background(), tc.p)
				assert.EqualError(t, err, tc.err, st.name)
				assert.NotErrorIs(t, err, ErrInfeasible, st.name)
			}
		})
	}
}
