package dsa

import (
	"cmp"
	"context"
	"fmt"
	"math"
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
// pass the naive checker, LowerBound <= Best <= Greedy <= Linear when
// nothing needs padding, and Greedy follows its stated rule.
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

			// Best's first heuristic is Greedy, indexed differently; Best
			// never does worse.
			in := newInstance(p, defaultLimits().pairs)
			pl := newPlacer(in)
			pl.place(context.Background(), greedyOrder32(p.Buffers), (*placer).firstFit)
			assert.Equal(t, g.Offsets, pl.off, "seed %d: Best's greedy", seed)
			lim := defaultLimits()
			lim.searchWork = 1 << 12 // the search rarely closes ragged gaps
			bst, err := best(context.Background(), p, lim)
			require.NoError(t, err, "seed %d", seed)
			requireValid(t, p, bst)
			assert.LessOrEqual(t, lb, bst.Height, "seed %d: lower bound", seed)
			assert.LessOrEqual(t, bst.Height, g.Height, "seed %d: best above greedy", seed)

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

// greedyOrder32 is greedyOrder without the zero-size buffers, as Best's
// placer takes it.
func greedyOrder32(bufs []Buffer) []int32 {
	var order []int32
	for _, i := range greedyOrder(bufs) {
		if bufs[i].Size > 0 {
			order = append(order, int32(i))
		}
	}
	return order
}

// tinyProblem returns a seeded random problem of at most 7 buffers, small
// enough to solve by brute force, with ragged sizes and alignments and now
// and then a pinned buffer.
func tinyProblem(seed uint64) Problem {
	r := rand.New(rand.NewPCG(seed, 1))
	var p Problem
	var pinTop int64
	for range 1 + r.IntN(7) {
		start := r.Int64N(6)
		b := Buffer{Start: start, End: start + 1 + r.Int64N(4), Size: 1 + r.Int64N(40)}
		b.Align = []int64{0, 1, 2, 4, 8, 3}[r.IntN(6)]
		if r.IntN(6) == 0 {
			off := alignUp(pinTop+r.Int64N(8), max(b.Align, 1))
			b.Fixed = &off
			pinTop = off + b.Size
		}
		p.Buffers = append(p.Buffers, b)
	}
	return p
}

// bruteForce returns the lowest height of any placement of p. Take an
// optimal placement and place its buffers again in order of offset, each
// at the lowest aligned offset clear of those placed before: none goes
// higher than it was. So the best over all orders of this first-fit rule
// is optimal, and bruteForce tries them all.
func bruteForce(p Problem) int64 {
	var pinned, free []int
	for i, b := range p.Buffers {
		if b.Fixed != nil {
			pinned = append(pinned, i)
		} else if b.Size > 0 {
			free = append(free, i)
		}
	}
	best := int64(math.MaxInt64)
	offs := make([]int64, len(p.Buffers))
	var permute func(k int)
	permute = func(k int) {
		if k == len(free) {
			for i := range offs {
				offs[i] = 0
			}
			placed := slices.Clone(pinned)
			for _, i := range pinned {
				offs[i] = *p.Buffers[i].Fixed
			}
			for _, i := range free {
				offs[i] = lowestClear(p, offs, placed, i)
				placed = append(placed, i)
			}
			var h int64
			for i, b := range p.Buffers {
				if b.Size > 0 {
					h = max(h, offs[i]+b.Size)
				}
			}
			best = min(best, h)
			return
		}
		for j := k; j < len(free); j++ {
			free[k], free[j] = free[j], free[k]
			permute(k + 1)
			free[k], free[j] = free[j], free[k]
		}
	}
	permute(0)
	return best
}

// lowestClear returns the lowest offset, a multiple of buffer i's
// alignment, where i shares no byte with a placed buffer live with it.
func lowestClear(p Problem, offs []int64, placed []int, i int) int64 {
	b := p.Buffers[i]
	align := max(b.Align, 1)
	for off := int64(0); ; off += align {
		clear := true
		for _, j := range placed {
			c := p.Buffers[j]
			if c.Size > 0 && b.Start < c.End && c.Start < b.End && off < offs[j]+c.Size && offs[j] < off+b.Size {
				clear = false
				break
			}
		}
		if clear {
			return off
		}
	}
}

// TestBestOptimal checks that Best finds the optimum of tiny problems, by
// brute force, and proves it (so it needs no deadline).
func TestBestOptimal(t *testing.T) {
	n := uint64(500)
	if testing.Short() || raceEnabled {
		n = 100
	}
	for seed := range n {
		p := tinyProblem(seed)
		s, err := Best(context.Background(), p)
		require.NoError(t, err, "seed %d", seed)
		requireValid(t, p, s)
		require.Equal(t, bruteForce(p), s.Height, "seed %d: %+v", seed, p.Buffers)
	}
}

// TestSearchDecides checks the exact search alone on tiny problems: with
// no limit it finds a placement no higher than H exactly when the optimum
// (by brute force) is at most H, and proves the rest infeasible.
func TestSearchDecides(t *testing.T) {
	for seed := range uint64(300) {
		p := tinyProblem(seed)
		in := newInstance(p, defaultLimits().pairs)
		sc := newSections(in, defaultLimits().members)
		opt := bruteForce(p)
		for h := opt - 3; h <= opt+2; h++ {
			for _, order := range []preorder{orderWAT, orderTAW, orderTWA} {
				s := newSearch(in, sc, order)
				r := s.run(h, math.MaxInt64, nil, nil)
				if h < opt {
					require.Equal(t, exhausted, r, "seed %d, height %d, %s", seed, h, order)
					continue
				}
				require.Equal(t, found, r, "seed %d, height %d, %s", seed, h, order)
				sol := Solution{Offsets: s.sol, Height: height(p.Buffers, s.sol)}
				requireValid(t, p, sol)
				require.LessOrEqual(t, sol.Height, h, "seed %d, %s", seed, order)
			}
		}
	}
}
