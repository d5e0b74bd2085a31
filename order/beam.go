package order

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// beamState is one partial order of a beam: the local operators that have
// run, in the order the trail gives.
type beamState struct {
	ran   bitset
	g     int64   // the peak so far
	open  int64   // bytes open now
	trail int32   // the last step of its order in beam.trail, -1 for none
	ready []int32 // local operators that may run next, ascending
	hash  uint64  // Zobrist hash of ran
	hpos  int     // index in view.byLB of the first operator not run
}

// beamChild is a candidate successor of a beam state.
type beamChild struct {
	parent   int32
	op       int32
	g, after int64
	f        int64 // max(g, the largest lb left)
	hash     uint64
	hpos     int
}

// trailStep is one step of a partial order, linked to the one before.
type trailStep struct{ parent, op int32 }

// beam returns an order of v's operators and its peak, found by beam
// search: from every partial order of the beam it tries each operator that
// may run next and keeps the width best, ranked by the larger of the peak
// so far and the largest lower bound left, then by the bytes left open.
// Partial orders that ran the same operators count once. When stop says
// so the beam narrows to one, a greedy completion.
func (v *view) beam(width int, stop func() bool) ([]int32, int64) {
	m := len(v.ops)
	rng := rand.New(rand.NewPCG(uint64(m), 0x9e3779b97f4a7c15))
	zob := make([]uint64, m)
	for i := range zob {
		zob[i] = rng.Uint64()
	}
	var trail []trailStep
	root := beamState{ran: newBitset(m), open: v.open0, trail: -1}
	for i := range m {
		if len(v.preds[i]) == 0 {
			root.ready = append(root.ready, int32(i))
		}
	}
	level := []beamState{root}
	seen := map[uint64]bool{}
	var kids []beamChild
	for depth := range m {
		if stop() {
			width = 1
		}
		kids = kids[:0]
		for pi := range level {
			s := &level[pi]
			for _, i := range s.ready {
				c, after := v.cost(i, s.ran, s.open, m-depth)
				k := beamChild{parent: int32(pi), op: i, g: max(s.g, c), after: after, hash: s.hash ^ zob[i], hpos: s.hpos}
				for k.hpos < m && (v.byLB[k.hpos] == i || s.ran.has(v.byLB[k.hpos])) {
					k.hpos++
				}
				k.f = k.g
				if k.hpos < m {
					k.f = max(k.g, v.lb[v.byLB[k.hpos]])
				}
				kids = append(kids, k)
			}
		}
		slices.SortFunc(kids, func(a, b beamChild) int {
			return cmp.Or(cmp.Compare(a.f, b.f), cmp.Compare(a.after, b.after), cmp.Compare(a.g, b.g),
				cmp.Compare(a.parent, b.parent), cmp.Compare(a.op, b.op))
		})
		clear(seen)
		next := make([]beamState, 0, width)
		for _, k := range kids {
			if len(next) == width {
				break
			}
			if seen[k.hash] {
				continue
			}
			seen[k.hash] = true
			p := &level[k.parent]
			trail = append(trail, trailStep{parent: p.trail, op: k.op})
			ns := beamState{ran: slices.Clone(p.ran), g: k.g, open: k.after, trail: int32(len(trail) - 1),
				hash: k.hash, hpos: k.hpos}
			ns.ran.set(k.op)
			for _, r := range p.ready {
				if r != k.op {
					ns.ready = append(ns.ready, r)
				}
			}
			for _, y := range v.succs[k.op] {
				if v.ready(y, ns.ran) {
					ns.ready = append(ns.ready, y)
				}
			}
			slices.Sort(ns.ready)
			next = append(next, ns)
		}
		level = next
	}
	best := level[0]
	order := make([]int32, m)
	for t, n := best.trail, m-1; t >= 0; t, n = trail[t].parent, n-1 {
		order[n] = trail[t].op
	}
	return order, best.g
}
