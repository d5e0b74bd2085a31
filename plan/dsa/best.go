package dsa

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
)

// Best is the default strategy: it reaches the lower bound wherever it can
// and otherwise returns the lowest placement it finds. The package doc lists
// its steps and how well they do.
//
// Best stops as soon as it meets the bound (LowerBound, or more when pinned
// buffers force it, or when its search proves no lower height fits), which
// proves the placement optimal and sets Solution.Optimal. Otherwise it uses
// all the time ctx allows; without a deadline it stops after a fixed amount
// of search work, so that its answer depends only on p. With a deadline the
// answer depends on how far the search got: a tighter or busier budget can
// give a taller, but always valid, placement, never one above Greedy's.
// Ties break by index, the orders are fixed and searches are limited by
// counted work, not time, so two runs that get as far give the same
// offsets. Best always completes Greedy's placement, even after the
// deadline has passed, so running out of time never fails; only a canceled
// ctx makes it return ctx's error.
func Best(ctx context.Context, p Problem) (Solution, error) {
	return best(ctx, p, defaultLimits())
}

// limits bounds the work and memory Best spends.
type limits struct {
	pairs         int   // pairs of buffers live together; above it, Greedy alone
	searchBuffers int   // free buffers the search takes on
	members       int   // entries in the search's sections
	searchWork    int64 // search work without a deadline
	good          int64 // for tests: stop at this height as if at the bound
}

func defaultLimits() limits {
	return limits{
		pairs:         1 << 23, // 32 MiB of index
		searchBuffers: 4096,
		members:       1 << 24, // 64 MiB
		searchWork:    1 << 20,
	}
}

func best(ctx context.Context, p Problem, lim limits) (Solution, error) {
	if err := Validate(p); err != nil {
		return Solution{}, err
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return Solution{}, err
	}
	if _, err := pin(p.Buffers, make([]int64, len(p.Buffers))); err != nil {
		return Solution{}, err
	}
	in := newInstance(p, lim.pairs)
	if in == nil {
		return Greedy(ctx, p)
	}
	g := in.grain()
	b := &bester{in: in, lo: alignUp(in.bound(), g), grain: g, good: lim.good}
	if err := b.heuristics(ctx); err != nil {
		return Solution{}, err
	}
	hopeless := p.Capacity > 0 && p.Capacity < b.lo
	if !b.done() && !hopeless && len(in.free) <= lim.searchBuffers && ctx.Err() == nil {
		if sc := newSections(in, lim.members); sc != nil {
			b.improve(ctx, sc, lim.searchWork)
		}
	}
	b.best.Optimal = b.best.Height <= b.lo
	return fit(p, b.best)
}

// bester holds Best's progress: the lowest placement so far and a height
// below which there is none.
type bester struct {
	in    *instance
	best  Solution
	lo    int64
	grain int64 // every height Best can find is a multiple of grain
	good  int64 // limits.good
}

// done reports whether the best height is as low as Best wants.
func (b *bester) done() bool {
	return b.best.Height <= max(b.lo, b.good)
}

// bound returns a height no placement can beat: the largest of LowerBound,
// the tops of the pinned buffers, and the lowest top each free buffer can
// have beside the pinned ones.
func (in *instance) bound() int64 {
	lb := LowerBound(Problem{Buffers: in.bufs})
	for _, i := range in.pinned {
		lb = max(lb, *in.bufs[i].Fixed+in.bufs[i].Size)
	}
	if len(in.pinned) > 0 {
		for _, i := range in.free {
			lb = max(lb, clearOfPinned(in, i, 0)+in.bufs[i].Size)
		}
	}
	return lb
}

// grain returns the greatest common divisor of the sizes, alignments and
// pinned offsets. Every offset the heuristics and the search give is 0, a
// pinned offset, or the end of a buffer rounded up to an alignment, so it is
// a multiple of the grain, and so is every height they find. Pushing the
// buffers of any placement down as far as they go gives such offsets, so
// the lowest height is a multiple of the grain too.
func (in *instance) grain() int64 {
	var g int64
	for _, b := range in.bufs {
		if b.Size == 0 {
			continue
		}
		g = gcd(g, b.Size)
		if b.Align > 1 {
			g = gcd(g, b.Align)
		}
		if b.Fixed != nil {
			g = gcd(g, *b.Fixed)
		}
	}
	return max(g, 1)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// offer keeps offsets if they are lower than the best so far, and reports
// whether Best is done.
func (b *bester) offer(offsets []int64) bool {
	h := height(b.in.bufs, offsets)
	if b.best.Offsets == nil || h < b.best.Height {
		b.best = Solution{Offsets: slices.Clone(offsets), Height: h}
	}
	return b.done()
}

// heuristics runs step 1 of Best, on as many goroutines as GOMAXPROCS
// allows. It keeps the lowest placement, ties going to the earlier
// heuristic, so the answer does not depend on scheduling; once one reaches
// the bound, later ones are skipped. Greedy's placement runs whatever ctx's
// deadline, so there is always one; the heuristics fail only if ctx is
// canceled.
func (b *bester) heuristics(ctx context.Context) error {
	in := b.in
	always, cancel := untimed(ctx)
	defer cancel()
	greedy := make([]int32, 0, len(in.free))
	for _, i := range greedyOrder(in.bufs) {
		if in.bufs[i].Size > 0 {
			greedy = append(greedy, int32(i))
		}
	}
	jobs := []func(*placer) int64{func(pl *placer) int64 { return pl.place(always, greedy, (*placer).firstFit) }}
	orders := in.heuristicOrders()
	for _, o := range orders {
		rank := rankOf(len(in.bufs), o)
		jobs = append(jobs, func(pl *placer) int64 { return pl.skyline(ctx, rank) })
	}
	for _, o := range orders {
		jobs = append(jobs,
			func(pl *placer) int64 { return pl.place(ctx, o, (*placer).firstFit) },
			func(pl *placer) int64 { return pl.place(ctx, o, (*placer).bestFit) })
	}

	results := make([][]int64, len(jobs)) // nil: not run, or ctx done
	var mu sync.Mutex
	next, last := 0, len(jobs)-1 // jobs after last are skipped
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pl := newPlacer(in)
			for {
				mu.Lock()
				k, skip := next, next > last
				next++
				mu.Unlock()
				if skip {
					return
				}
				if jobs[k](pl) < 0 {
					continue
				}
				results[k] = slices.Clone(pl.off)
				if height(in.bufs, pl.off) <= b.lo {
					mu.Lock()
					last = min(last, k)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if results[0] == nil {
		return ctx.Err()
	}
	for _, r := range results {
		if r != nil {
			b.offer(r)
		}
	}
	return nil
}
