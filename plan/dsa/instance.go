package dsa

import (
	"cmp"
	"math"
	"slices"
)

// instance is a problem prepared for Best: its buffers of non-zero size split
// into free and pinned ones, and for each buffer the others live with it.
// Indices are those of Problem.Buffers, as int32 to halve the index's size.
type instance struct {
	bufs   []Buffer
	free   []int32 // unpinned buffers of non-zero size, ascending
	pinned []int32 // pinned buffers of non-zero size, ascending
	// adjacency in compressed rows: the non-empty buffers live with buffer
	// i at a common step are adj[adjAt[i]:adjAt[i+1]].
	adj   []int32
	adjAt []int
}

// event is a buffer's start or end on the time line. Ends sort before starts
// at the same step, since steps are half-open.
type event struct {
	step  int64
	start bool
	idx   int32
}

// events returns the starts and ends of the non-empty buffers, in time
// order, ties by index.
func events(bufs []Buffer) []event {
	ev := make([]event, 0, 2*len(bufs))
	for i, b := range bufs {
		if b.Size > 0 {
			ev = append(ev, event{b.Start, true, int32(i)}, event{b.End, false, int32(i)})
		}
	}
	slices.SortFunc(ev, func(x, y event) int {
		if c := cmp.Compare(x.step, y.step); c != 0 {
			return c
		}
		if x.start != y.start {
			if x.start {
				return 1
			}
			return -1
		}
		return cmp.Compare(x.idx, y.idx)
	})
	return ev
}

// newInstance indexes p, or returns nil if more than maxPairs pairs of
// buffers are live together.
func newInstance(p Problem, maxPairs int) *instance {
	if len(p.Buffers) > math.MaxInt32 {
		return nil
	}
	in := &instance{bufs: p.Buffers}
	for i, b := range p.Buffers {
		switch {
		case b.Size == 0:
		case b.Fixed != nil:
			in.pinned = append(in.pinned, int32(i))
		default:
			in.free = append(in.free, int32(i))
		}
	}
	ev := events(p.Buffers)
	// First pass: count each buffer's neighbours.
	deg := make([]int, len(p.Buffers)+1)
	var act active
	act.init(len(p.Buffers))
	pairs := 0
	for _, e := range ev {
		if !e.start {
			act.remove(e.idx)
			continue
		}
		pairs += len(act.list)
		if pairs > maxPairs {
			return nil
		}
		deg[e.idx] += len(act.list)
		for _, j := range act.list {
			deg[j]++
		}
		act.add(e.idx)
	}
	in.adjAt = make([]int, len(p.Buffers)+1)
	for i := range p.Buffers {
		in.adjAt[i+1] = in.adjAt[i] + deg[i]
	}
	// Second pass: fill the rows.
	in.adj = make([]int32, in.adjAt[len(p.Buffers)])
	fill := slices.Clone(in.adjAt[:len(p.Buffers)])
	for _, e := range ev {
		if !e.start {
			act.remove(e.idx)
			continue
		}
		for _, j := range act.list {
			in.adj[fill[e.idx]] = j
			fill[e.idx]++
			in.adj[fill[j]] = e.idx
			fill[j]++
		}
		act.add(e.idx)
	}
	return in
}

// neighbours returns the non-empty buffers live with buffer i.
func (in *instance) neighbours(i int32) []int32 {
	return in.adj[in.adjAt[i]:in.adjAt[i+1]]
}

// active is the set of buffers live during a sweep, with O(1) add and
// remove. Removal moves the last member into the gap, so the order of list
// depends only on the sequence of operations.
type active struct {
	list []int32
	pos  []int32
}

func (a *active) init(n int) { a.pos = make([]int32, n) }

func (a *active) add(i int32) {
	a.pos[i] = int32(len(a.list))
	a.list = append(a.list, i)
}

func (a *active) remove(i int32) {
	k := a.pos[i]
	last := a.list[len(a.list)-1]
	a.list[k] = last
	a.pos[last] = k
	a.list = a.list[:len(a.list)-1]
}
