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
// Partial orders that ran the same operators count once. Every operator
// tried spends effort of b; when b runs out the beam narrows to one, a
// greedy completion, which may spend graceEffort more; when that runs out
// too, or the clock does, the best partial order so far is completed depth
// first (complete).
func (v *view) beam(width int, b *budget) ([]int32, int64) {
	m := len(v.ops)
	rng := rand.New(rand.NewPCG(uint64(m), 0x9e3779b97f4a7c15))
	zob := make([]uint64, m)
	for i := range zob {
		zob[i] = rng.Uint64()
	}
	var trail []trailStep
	words := len(newBitset(m))
	root := beamState{ran: newBitset(m), open: v.open0, trail: -1}
	for i := range m {
		if len(v.preds[i]) == 0 {
			root.ready = append(root.ready, int32(i))
		}
	}
	level := []beamState{root}
	// Each level's sets and ready lists live in two buffers reused level
	// after level.
	var bits, nextBits []uint64
	var ready, nextReady []int32
	seen := map[uint64]bool{}
	var kids []beamChild
	grace := int64(graceEffort)
	spend := func(n int64) (abandon bool) {
		if !b.spend(n) {
			return false
		}
		width = 1
		grace -= n
		return b.timedOut || grace < 0
	}
	for depth := range m {
		if b.out() {
			width = 1
		}
		kids = kids[:0]
		for pi := range level {
			s := &level[pi]
			for _, i := range s.ready {
				scans := v.scans
				c, after := v.cost(i, ranSet{bits: s.ran}, s.open, m-depth)
				if spend(1 + v.scans - scans) {
					return v.complete(trail, level[0])
				}
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
		kids = best(kids, 2*width+4)
		clear(seen)
		next := make([]beamState, 0, width)
		nextBits, nextReady = nextBits[:0], nextReady[:0]
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
			nextBits = append(nextBits, p.ran...)
			ran := bitset(nextBits[len(nextBits)-words:])
			ran.set(k.op)
			start := len(nextReady)
			for _, r := range p.ready {
				if r != k.op {
					nextReady = append(nextReady, r)
				}
			}
			for _, y := range v.succs[k.op] {
				if v.ready(y, ran) {
					nextReady = append(nextReady, y)
				}
			}
			next = append(next, beamState{g: k.g, open: k.after, trail: int32(len(trail) - 1), hash: k.hash, hpos: k.hpos})
			ns := &next[len(next)-1]
			ns.ready = nextReady[start:len(nextReady):len(nextReady)]
			slices.Sort(ns.ready)
		}
		// The buffers may have moved while growing: point into them now.
		for i := range next {
			next[i].ran = bitset(nextBits[i*words : (i+1)*words])
		}
		level = next
		bits, nextBits = nextBits, bits
		ready, nextReady = nextReady, ready
	}
	best := level[0]
	order := make([]int32, m)
	for t, n := best.trail, m-1; t >= 0; t, n = trail[t].parent, n-1 {
		order[n] = trail[t].op
	}
	return order, best.g
}

// graceEffort is the effort a beam may spend completing its order
// greedily once the budget has run out.
const graceEffort = 1 << 20

// complete returns the order that runs the operators of partial order s
// (on trail), then the others depth first from the last: each operator
// after the operators it waits for, the latest of them first, so that the
// others run just before it and a value is used soon after it is made (on
// a fan of parallel branches summed by a chain, each branch just before
// the sum that reads it, where the view's own order runs every branch
// first). It is legal and takes time linear in the view. It returns the
// order and its peak.
func (v *view) complete(trail []trailStep, s beamState) ([]int32, int64) {
	var order []int32
	for t := s.trail; t >= 0; t = trail[t].parent {
		order = append(order, trail[t].op)
	}
	slices.Reverse(order)
	done := s.ran.clone()
	type frame struct {
		op   int32
		next int // how many of its predecessors, latest first, it has visited
	}
	var stack []frame
	for root := int32(len(v.ops)) - 1; root >= 0; root-- {
		if done.has(root) {
			continue
		}
		done.set(root)
		stack = append(stack[:0], frame{root, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if ps := v.preds[f.op]; f.next < len(ps) {
				p := ps[len(ps)-1-f.next]
				f.next++
				if !done.has(p) {
					done.set(p)
					stack = append(stack, frame{p, 0})
				}
				continue
			}
			order = append(order, f.op)
			stack = stack[:len(stack)-1]
		}
	}
	return order, v.peakOf(order)
}

// compareChildren ranks candidates: by the larger of the peak so far and
// the largest lower bound left, then by the bytes left open, then by the
// peak so far; ties by parent and operator, so the search is deterministic.
func compareChildren(a, b *beamChild) int {
	return cmp.Or(cmp.Compare(a.f, b.f), cmp.Compare(a.after, b.after), cmp.Compare(a.g, b.g),
		cmp.Compare(a.parent, b.parent), cmp.Compare(a.op, b.op))
}

// best moves the n best of kids to its front, sorted, and returns them:
// a bounded heap rather than a sort of every candidate.
func best(kids []beamChild, n int) []beamChild {
	if len(kids) <= n {
		slices.SortFunc(kids, func(a, b beamChild) int { return compareChildren(&a, &b) })
		return kids
	}
	// kids[:n] is a max-heap of the best n so far.
	h := kids[:n]
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= n {
				return
			}
			if c+1 < n && compareChildren(&h[c+1], &h[c]) > 0 {
				c++
			}
			if compareChildren(&h[c], &h[i]) <= 0 {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := n; i < len(kids); i++ {
		if compareChildren(&kids[i], &h[0]) < 0 {
			h[0] = kids[i]
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b beamChild) int { return compareChildren(&a, &b) })
	return h
}
