package dsa

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomProblem returns a seeded random problem of up to 40 buffers, a few
// of them pinned at offsets that cannot collide. When uniform, every size and
// pinned offset is a multiple of every alignment, so no strategy ever pads;
// otherwise sizes and alignments are ragged.
func randomProblem(seed uint64, uniform bool) Problem {
	r := rand.New(rand.NewPCG(seed, 0))
	unit := []int64{1, 4, 16}[r.IntN(3)]
	var p Problem
	var pinTop int64 // pinned buffers are stacked, so they never collide
	for range r.IntN(41) {
		start := r.Int64N(20)
		b := Buffer{Start: start, End: start + 1 + r.Int64N(8)}
		if uniform {
			b.Size = unit * r.Int64N(9) // includes zero-size buffers
			b.Align = []int64{0, 1, unit}[r.IntN(3)]
		} else {
			b.Size = r.Int64N(100)
			b.Align = []int64{0, 1, 2, 4, 8, 16, 3}[r.IntN(7)]
		}
		if r.IntN(8) == 0 {
			off := alignUp(pinTop+unit*r.Int64N(3), max(b.Align, 1)*unit)
			b.Fixed = &off
			pinTop = off + b.Size
		}
		p.Buffers = append(p.Buffers, b)
	}
	return p
}

func clone(p Problem) Problem {
	q := p
	q.Buffers = slices.Clone(p.Buffers)
	for i, b := range q.Buffers {
		if b.Fixed != nil {
			q.Buffers[i].Fixed = ptr(*b.Fixed)
		}
	}
	return q
}

// naiveGreedy is an independent statement of Greedy's rule: in Greedy's
// order, each buffer takes the lowest offset among 0 and the aligned ends of
// the buffers placed so far that it shares no byte with at a common step.
func naiveGreedy(p Problem) []int64 {
	offs := make([]int64, len(p.Buffers))
	var placed []int
	for i, b := range p.Buffers {
		if b.Fixed != nil {
			offs[i] = *b.Fixed
			placed = append(placed, i)
		}
	}
	var rest []int
	for i, b := range p.Buffers {
		if b.Fixed == nil {
			rest = append(rest, i)
		}
	}
	slices.Reverse(rest) // so that equal sizes keep higher index first
	slices.SortStableFunc(rest, func(i, j int) int { return cmp.Compare(p.Buffers[j].Size, p.Buffers[i].Size) })
	for _, i := range rest {
		b := p.Buffers[i]
		if b.Size == 0 {
			continue
		}
		cands := []int64{0}
		for _, j := range placed {
			cands = append(cands, alignUp(offs[j]+p.Buffers[j].Size, b.Align))
		}
		slices.Sort(cands)
		for _, c := range cands {
			ok := true
			for _, j := range placed {
				o := p.Buffers[j]
				if o.Size > 0 && b.Start < o.End && o.Start < b.End && c < offs[j]+o.Size && offs[j] < c+b.Size {
					ok = false
					break
				}
			}
			if ok {
				offs[i] = c
				break
			}
		}
		placed = append(placed, i)
	}
	return offs
}

// TestProperties checks every strategy on seeded random problems: solutions
// pass the naive checker, LowerBound <= Greedy <= Linear when nothing needs
// padding, and Greedy follows its stated rule.
func TestProperties(t *testing.T) {
	for seed := range uint64(400) {
		uniform := seed%2 == 0
		p := randomProblem(seed, uniform)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			lin, err := Linear(context.Background(), p)
			require.NoError(t, err, "seed %d", seed)
			requireValid(t, p, lin)
			g, err := Greedy(context.Background(), p)
			require.NoError(t, err, "seed %d", seed)
			requireValid(t, p, g)
			lb := LowerBound(p)
			assert.LessOrEqual(t, lb, g.Height, "seed %d: lower bound", seed)
			if uniform {
				assert.LessOrEqual(t, g.Height, lin.Height, "seed %d: greedy above linear", seed)
			}
			assert.Equal(t, naiveGreedy(p), g.Offsets, "seed %d: greedy rule", seed)

			// Squeezing capacity to the height still fits; one byte less does not.
			if g.Height > 0 {
				q := clone(p)
				q.Capacity = g.Height
				_, err = Greedy(context.Background(), q)
				require.NoError(t, err, "seed %d", seed)
				q.Capacity--
				_, err = Greedy(context.Background(), q)
				require.ErrorIs(t, err, ErrInfeasible, "seed %d", seed)
			}
		})
	}
}

// TestLowerBound checks LowerBound against a step-by-step count.
func TestLowerBound(t *testing.T) {
	for seed := range uint64(100) {
		p := randomProblem(seed, false)
		var want int64
		for step := int64(0); step < 30; step++ {
			var live int64
			for _, b := range p.Buffers {
				if b.Start <= step && step < b.End {
					live += b.Size
				}
			}
			want = max(want, live)
		}
		require.Equal(t, want, LowerBound(p), "seed %d", seed)
	}
}
