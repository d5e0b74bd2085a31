package verify

import (
	"cmp"
	"math"
	"slices"
)

// maxTree is a segment tree over positions 0..n-1 holding a value each
// (math.MinInt64 for none): it finds, among the first k positions, every
// one whose value exceeds a threshold in time proportional to those found
// (times log n), so that checks relating allocations by their spans stay
// near-linear instead of trying every pair.
type maxTree struct {
	n    int
	max  []int64 // max[1] is the root; node i has children 2i and 2i+1
	work *int64  // counts the nodes visited
}

func newMaxTree(n int, work *int64) *maxTree {
	size := 1
	for size < n {
		size *= 2
	}
	t := &maxTree{n: size, max: make([]int64, 2*size), work: work}
	for i := range t.max {
		t.max[i] = math.MinInt64
	}
	return t
}

// set gives position i the value v.
func (t *maxTree) set(i int, v int64) {
	i += t.n
	t.max[i] = v
	for i /= 2; i >= 1; i /= 2 {
		*t.work++
		t.max[i] = max(t.max[2*i], t.max[2*i+1])
	}
}

// above calls f with every position below k whose value exceeds v, in
// ascending order.
func (t *maxTree) above(k int, v int64, f func(i int)) {
	t.visit(1, 0, t.n, k, v, f)
}

func (t *maxTree) visit(node, lo, hi, k int, v int64, f func(i int)) {
	*t.work++
	if lo >= k || t.max[node] <= v {
		return
	}
	if hi-lo == 1 {
		f(lo)
		return
	}
	mid := (lo + hi) / 2
	t.visit(2*node, lo, mid, k, v, f)
	t.visit(2*node+1, mid, hi, k, v, f)
}

// pairKey says which allocations of an arena never overlap by rule
// whatever bytes they share: those of one key. In a scratch arena, members
// of one class (they hold one value, see related); in a constant arena,
// tensors of one model buffer at one offset. Other allocations have a key
// of their own.
type pairKey struct {
	class *member
	buf   int64
	off   int64
	own   int // 1 + the allocation's index, for a key of its own
}

func pairKeyOf(role string, p *member, i int) pairKey {
	switch {
	case role == roleScratch && p.class != nil:
		return pairKey{class: p.class}
	case role == roleConstant && p.t != nil:
		return pairKey{buf: int64(p.t.Buffer), off: p.offset, own: -1}
	}
	return pairKey{own: i + 1}
}

// cluster is the allocations of an arena with one key over the same bytes
// [lo, hi): the pair sweep tries a cluster as a whole.
type cluster struct {
	key    pairKey
	lo, hi int64
	active []int // the allocations (indexes into ps) live now
}

// overlapPairs returns, sorted, every pair i < j of allocations in ps that
// checkPair may report: they share a byte and, in a scratch arena, a step,
// and their keys differ. It sweeps over steps with the allocations live
// so far in a tree over their byte ranges, so its work grows with the
// allocations and the pairs found, not with every pair (a scratch arena's
// allocations that share bytes are few at any step). A scratch allocation
// with a lifetime that ends before it starts is paired with every other,
// as checkPair would compare them.
func (c *checker) overlapPairs(role string, ps []*member) [][2]int {
	type entry struct {
		i          int
		start, end int64
		cl         *cluster
	}
	var pairs [][2]int
	var entries []entry
	type clusterID struct {
		key    pairKey
		lo, hi int64
	}
	byKey := map[clusterID]*cluster{}
	var clusters []*cluster
	for i, p := range ps {
		start, end := int64(0), int64(0)
		if role == roleScratch {
			if p.live == nil {
				continue
			}
			start, end = p.live.start, p.live.end
			if start > end {
				for j := range ps {
					c.work++
					if j != i {
						pairs = append(pairs, [2]int{min(i, j), max(i, j)})
					}
				}
				continue
			}
		}
		lo, hi := p.offset, addSat(p.offset, p.size)
		if lo >= hi {
			continue // shares no byte with anything
		}
		k := pairKeyOf(role, p, i)
		id := clusterID{k, lo, hi}
		cl := byKey[id]
		if cl == nil {
			cl = &cluster{key: k, lo: lo, hi: hi}
			byKey[id] = cl
			clusters = append(clusters, cl)
		}
		entries = append(entries, entry{i, start, end, cl})
	}
	// The tree's positions are the clusters by their first byte.
	slices.SortStableFunc(clusters, func(a, b *cluster) int { return cmp.Compare(a.lo, b.lo) })
	los := make([]int64, len(clusters))
	at := map[*cluster]int{}
	for n, cl := range clusters {
		los[n], at[cl] = cl.lo, n
	}
	tree := newMaxTree(len(clusters), &c.work)
	byStart := slices.Clone(entries)
	slices.SortStableFunc(byStart, func(a, b entry) int { return cmp.Compare(a.start, b.start) })
	byEnd := entries
	slices.SortStableFunc(byEnd, func(a, b entry) int { return cmp.Compare(a.end, b.end) })
	pos := make([]int, len(ps)) // where each live allocation is in its cluster's active list
	gone := 0
	for _, e := range byStart {
		for ; gone < len(byEnd) && byEnd[gone].end < e.start; gone++ {
			x := byEnd[gone]
			cl := x.cl
			n := pos[x.i]
			last := cl.active[len(cl.active)-1]
			cl.active[n], pos[last] = last, n
			cl.active = cl.active[:len(cl.active)-1]
			if len(cl.active) == 0 {
				tree.set(at[cl], math.MinInt64)
			}
		}
		k, _ := slices.BinarySearch(los, e.cl.hi) // los[:k] < hi
		tree.above(k, e.cl.lo, func(n int) {
			cl := clusters[n]
			if cl.key == e.cl.key {
				return
			}
			for _, j := range cl.active {
				c.work++
				pairs = append(pairs, [2]int{min(e.i, j), max(e.i, j)})
			}
		})
		cl := e.cl
		pos[e.i] = len(cl.active)
		cl.active = append(cl.active, e.i)
		if len(cl.active) == 1 {
			tree.set(at[cl], cl.hi)
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return slices.Compact(pairs)
}

// intHeap is a heap of ints, the least by less first, without the boxing
// of container/heap.
type intHeap struct {
	ids  []int
	less func(x, y int) bool
}

func (h *intHeap) len() int { return len(h.ids) }
func (h *intHeap) top() int { return h.ids[0] }

func (h *intHeap) push(x int) {
	h.ids = append(h.ids, x)
	for i := len(h.ids) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.ids[i], h.ids[p]) {
			break
		}
		h.ids[i], h.ids[p] = h.ids[p], h.ids[i]
		i = p
	}
}

func (h *intHeap) pop() {
	n := len(h.ids) - 1
	h.ids[0] = h.ids[n]
	h.ids = h.ids[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(h.ids[c+1], h.ids[c]) {
			c++
		}
		if !h.less(h.ids[c], h.ids[i]) {
			return
		}
		h.ids[i], h.ids[c] = h.ids[c], h.ids[i]
		i = c
	}
}
