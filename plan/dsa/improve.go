package dsa

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// maxLimit caps the work limit of one search.
const maxLimit = 1 << 40

// improve runs step 2 of Best in rounds. Each round has a work limit,
// doubling from round to round, and runs two things side by side: the
// searches at the bound, one preorder after another, and a bisection
// between the bound and the best height. When both are over their outcomes
// are merged, a placement at the bound from the first winning, so the
// answer does not depend on how the two were scheduled. It returns when the
// best height is the bound (or the bound is proven to be the best height),
// when ctx is done, or, without a deadline, once the rounds have cost
// budget.
func (b *bester) improve(ctx context.Context, sc *sections, budget int64) {
	_, hasDeadline := ctx.Deadline()
	atBound, bisecting := newSearches(b.in, sc), newSearches(b.in, sc)
	var spent int64
	for limit := int64(4 * len(b.in.free)); ; limit = min(2*limit, maxLimit) {
		var stopBisect atomic.Bool
		var bis bisection
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			bis = b.bisect(ctx, bisecting, limit, &stopBisect)
		}()
		r, k, _, cost := roundRobin(ctx, atBound, b.lo, limit, nil)
		if r == found {
			stopBisect.Store(true)
		}
		wg.Wait()
		if r == found {
			b.offer(atBound[k].sol)
			return
		}
		if r == exhausted {
			b.lo += b.grain
		}
		b.lo = max(b.lo, bis.lo)
		if bis.sol != nil {
			b.offer(bis.sol)
		}
		spent += cost + bis.cost
		if b.done() || ctx.Err() != nil || !hasDeadline && spent >= budget {
			return
		}
	}
}

// bisection is the outcome of one round's bisection: the lowest placement
// it found (nil if none beat the best), the bound it proved, and the cost
// it spent.
type bisection struct {
	sol  []int64
	lo   int64
	cost int64
}

// bisect looks for a placement below the best height, probing heights
// between the bound and the best with work limit limit/8, until it has
// spent as much as the searches at the bound may. A probe that finds a
// placement lowers the top of the range to its height; one that proves no
// placement fits raises the bound above its height; one that gives up
// raises the bottom of the range for the rest of the round. (Probe heights
// are multiples of the grain: no other height can be the best.)
func (b *bester) bisect(ctx context.Context, searches []*search, limit int64, stop *atomic.Bool) bisection {
	out := bisection{lo: b.lo}
	best, softLo := b.best.Height, b.lo+b.grain // the bound itself is probed beside
	sub := max(limit/8, int64(4*len(b.in.free)))
	for budget := int64(len(searches)) * limit; budget > 0 && softLo < best; {
		h := softLo + (best-softLo)/b.grain/2*b.grain
		r, k, work, cost := roundRobin(ctx, searches, h, sub, stop)
		budget -= work
		out.cost += cost
		switch r {
		case found:
			out.sol = slices.Clone(searches[k].sol)
			if best = height(b.in.bufs, out.sol); best <= max(out.lo, b.good) {
				return out
			}
		case exhausted:
			out.lo, softLo = h+b.grain, h+b.grain
		case aborted:
			if stop.Load() || ctx.Err() != nil {
				return out
			}
			softLo = h + b.grain
		}
	}
	return out
}

// newSearches returns a search for each of MiniMalloc's preorders.
func newSearches(in *instance, sc *sections) []*search {
	var s []*search
	for _, o := range []preorder{orderWAT, orderTAW, orderTWA} {
		s = append(s, newSearch(in, sc, o))
	}
	return s
}

// roundRobin asks each search in turn whether the buffers fit under height
// within limit work, as MiniMalloc takes turns with its orders. It returns
// the first answer that is not aborted, the index of the search that gave
// it, and the work and cost spent.
func roundRobin(ctx context.Context, searches []*search, height, limit int64, stop *atomic.Bool) (outcome, int, int64, int64) {
	var work, cost int64
	for k, s := range searches {
		r := s.run(height, limit, ctx.Done(), stop)
		work += min(s.work, limit)
		cost += s.cost()
		if r != aborted {
			return r, k, work, cost
		}
	}
	return aborted, -1, work, cost
}
