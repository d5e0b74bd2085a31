package order

import (
	"container/heap"
	"math/bits"
)

// Limits on the memory of one exact search: states are sets of operators
// that have run, kept until the search ends. A window of the improvement
// search (improve) gets fewer.
const (
	maxStates       = 1 << 19
	maxWords        = 1 << 22
	maxWindowStates = 1 << 16
)

// exactResult is what an exact search found.
type exactResult struct {
	order []int32 // nil when it found no order below the incumbent
	peak  int64
	// bound is a proven lower bound of the segment's optimal peak, or of
	// max(target, optimum) when the search stopped at target.
	bound int64
	done  bool // the search finished: order is optimal, or none beats ub
}

// exact searches v's orders best first for one with a peak below ub,
// treating every peak up to target as equally good, and gives up after
// creating states states. A state is the set of operators that have run;
// its cost is the least peak reaching it (all paths to a set leave the same
// bytes open, so the least peak dominates); its priority is the larger of
// that, the largest lower bound of an operator left, and target.
// Priorities never fall along a path, so the first complete state popped
// is optimal (or within target). An operator that may run, starts no
// buffer that outlives it, and costs no more than the state's priority
// runs next with no alternative tried: running it first never raises a
// later operator's cost. (Unless the view ends the subgraph and outputs no
// operator touches are live at its last step: then which operator runs
// last matters, and every one is tried.)
func (v *view) exact(target, ub int64, states int, b *budget) exactResult {
	m := len(v.ops)
	x := &exactSearch{v: v, m: m, w: (m + 63) / 64}
	x.table = make([]int32, 1024)
	root := x.add(newBitset(m), 0, v.open0, -1, -1, 0)
	x.prio[root] = max(v.h(x.bits(root)), target)
	heap.Push(x, entry{x.prio[root], 0, root})
	res := exactResult{bound: target}
	ran := newBitset(m)
	eagerOK := !v.last || v.p.tail == 0
	for x.Len() > 0 {
		if b.stop() || len(x.g) >= states || len(x.arena) >= maxWords {
			res.bound = max(res.bound, x.heap[0].prio)
			return res
		}
		e := heap.Pop(x).(entry)
		s := e.s
		if x.closed[s] || e.prio > x.prio[s] {
			continue
		}
		x.closed[s] = true
		prio := x.prio[s]
		res.bound = max(res.bound, prio)
		depth := int(x.depth[s])
		if depth == m {
			res.order, res.peak, res.done = x.path(s), x.g[s], true
			return res
		}
		copy(ran, x.bits(s))
		g, open := x.g[s], x.open[s]
		var kids []int32
		eager := int32(-1)
		first, scans := firstZero(ran), v.scans
		rs := ranSet{bits: ran}
		for i := first; i < m; i++ {
			if ran.has(int32(i)) || !v.ready(int32(i), ran) {
				continue
			}
			kids = append(kids, int32(i))
			if eagerOK && eager < 0 && v.opensNothing(int32(i), rs) {
				if c, _ := v.cost(int32(i), rs, open, m-depth); c <= prio {
					eager = int32(i)
				}
			}
		}
		if eager >= 0 {
			kids = []int32{eager}
		}
		for _, i := range kids {
			c, after := v.cost(i, rs, open, m-depth)
			ng := max(g, c)
			if ng >= ub {
				continue
			}
			ran.set(i)
			np := max(ng, v.h(ran), target)
			if np < ub {
				x.relax(ran, ng, after, s, i, depth+1, np)
			}
			ran[i>>6] &^= 1 << (uint(i) & 63)
		}
		// The state's step counted one expansion; what it looked at
		// beyond that is effort.
		b.spend(int64(m-first+len(kids)) + v.scans - scans)
	}
	res.done = true // no order beats ub: the incumbent is optimal
	res.bound = max(res.bound, ub)
	return res
}

func firstZero(b bitset) int {
	for i, w := range b {
		if w != ^uint64(0) {
			return i*64 + bits.TrailingZeros64(^w)
		}
	}
	return len(b) * 64
}

// exactSearch holds the states of one exact search; it is the heap of
// states waiting to be expanded.
type exactSearch struct {
	v     *view
	m, w  int
	arena []uint64 // the run operators of state i at [i*w, (i+1)*w)
	g     []int64
	open  []int64
	prio  []int64
	from  []int32 // the state it was reached from, -1 for the root
	op    []int32 // the operator run to reach it
	depth []int32
	// closed marks expanded states.
	closed []bool
	// table is an open-addressing hash set of states (index+1; 0 empty).
	table []int32
	heap  []entry
}

// entry is a state queued with its priority when queued; a state queued
// again with a better one leaves a stale entry behind.
type entry struct {
	prio  int64
	depth int32
	s     int32
}

func (x *exactSearch) bits(s int32) bitset { return x.arena[int(s)*x.w : int(s+1)*x.w] }

func hashBits(b bitset) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, w := range b {
		h = (h ^ w) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	return h
}

// find returns the state with the run set b, or -1, and the table slot
// where it is or would go.
func (x *exactSearch) find(b bitset) (int32, int) {
	mask := len(x.table) - 1
	for i := int(hashBits(b)) & mask; ; i = (i + 1) & mask {
		e := x.table[i]
		if e == 0 {
			return -1, i
		}
		if equalBits(x.bits(e-1), b) {
			return e - 1, i
		}
	}
}

func equalBits(a, b bitset) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (x *exactSearch) add(b bitset, g, open int64, from, op int32, depth int) int32 {
	s := int32(len(x.g))
	x.arena = append(x.arena, b...)
	x.g = append(x.g, g)
	x.open = append(x.open, open)
	x.prio = append(x.prio, 0)
	x.from = append(x.from, from)
	x.op = append(x.op, op)
	x.depth = append(x.depth, int32(depth))
	x.closed = append(x.closed, false)
	if 2*len(x.g) > len(x.table) {
		old := x.table
		x.table = make([]int32, 2*len(old))
		for _, e := range old {
			if e != 0 {
				_, slot := x.find(x.bits(e - 1))
				x.table[slot] = e
			}
		}
	}
	_, slot := x.find(b)
	x.table[slot] = s + 1
	return s
}

// relax records that the run set b is reached with peak g, and queues it
// when that is new or better.
func (x *exactSearch) relax(b bitset, g, open int64, from, op int32, depth int, prio int64) {
	s, _ := x.find(b)
	switch {
	case s < 0:
		s = x.add(b, g, open, from, op, depth)
	case x.closed[s] || x.g[s] <= g:
		return
	default:
		x.g[s], x.from[s], x.op[s] = g, from, op
	}
	x.prio[s] = prio
	heap.Push(x, entry{prio, int32(depth), s})
}

// path returns the order that reaches state s.
func (x *exactSearch) path(s int32) []int32 {
	order := make([]int32, x.depth[s])
	for ; x.from[s] >= 0; s = x.from[s] {
		order[x.depth[s]-1] = x.op[s]
	}
	return order
}

func (x *exactSearch) Len() int { return len(x.heap) }
func (x *exactSearch) Less(i, j int) bool {
	a, b := x.heap[i], x.heap[j]
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	if a.depth != b.depth {
		return a.depth > b.depth
	}
	return a.s < b.s
}
func (x *exactSearch) Swap(i, j int) { x.heap[i], x.heap[j] = x.heap[j], x.heap[i] }
func (x *exactSearch) Push(v any)    { x.heap = append(x.heap, v.(entry)) }
func (x *exactSearch) Pop() any {
	v := x.heap[len(x.heap)-1]
	x.heap = x.heap[:len(x.heap)-1]
	return v
}
