package order

import (
	"math/bits"
	"slices"

	"github.com/heliac/heliac/graph"
)

// bitset is a set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}
func (b bitset) clone() bitset { return append(bitset(nil), b...) }
func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// maxClosure is the most operators a subgraph may have for Schedule to
// compute which operators precede which (two bitsets of n² bits). Larger
// subgraphs get a weaker bound, one segment and no exact search.
const maxClosure = 8192

// structure is what the dependencies imply, order-independently.
type structure struct {
	// anc[x] and desc[x] are the operators that run before, and after, x
	// in every legal order; nil when the subgraph is over maxClosure.
	anc, desc []bitset
	// phase[x] numbers the segment x belongs to. A cut operator (one
	// every other operator runs before or after) is a segment of its
	// own; the operators between two cuts form one. Every legal order runs
	// the segments one after another, so each is searched on its own.
	phase []int32
	// segs lists each segment's operators in model order, by phase.
	segs [][]int32
	// static[x] is the bytes live while x runs in every legal order, not
	// counting x's callees: what x touches (less the in-place savings x
	// may get) and the buffers that must be open across it.
	static []int64
	// lbBase[x] is a bound of the same bytes: static[x], or more once
	// cutBound has looked at x.
	lbBase []int64
	// endBytes is the bytes live at the subgraph's last step in every
	// order: its outputs.
	endBytes int64
}

func analyzeStructure(p *problem) *structure {
	st := &structure{phase: make([]int32, p.n), lbBase: make([]int64, p.n)}
	for _, b := range p.bufs {
		if b.out {
			st.endBytes += b.size
		}
	}
	for x := range p.n {
		for _, b := range p.touch[x] {
			st.lbBase[x] += p.bufs[b].size
		}
	}
	if p.n > maxClosure {
		st.segs = [][]int32{make([]int32, p.n)}
		for x := range p.n {
			st.segs[0][x] = int32(x)
		}
		st.discounts(p)
		st.static = slices.Clone(st.lbBase)
		return st
	}
	st.anc, st.desc = make([]bitset, p.n), make([]bitset, p.n)
	for x := range p.n { // preds have smaller indices
		st.anc[x] = newBitset(p.n)
		for _, y := range p.preds[x] {
			st.anc[x].or(st.anc[y])
			st.anc[x].set(y)
		}
	}
	for x := p.n - 1; x >= 0; x-- {
		st.desc[x] = newBitset(p.n)
		for _, y := range p.succs[x] {
			st.desc[x].or(st.desc[y])
			st.desc[x].set(y)
		}
	}
	st.crossing(p)
	st.discounts(p)
	st.segment(p)
	st.static = slices.Clone(st.lbBase)
	return st
}

// crossing adds to lbBase[x] every buffer x does not touch that is open
// across x in every order: started before x (a subgraph input, or touched
// by an operator before x) and needed after it (an output, or touched by
// an operator after x).
func (st *structure) crossing(p *problem) {
	after, before := newBitset(p.n), newBitset(p.n)
	for _, b := range p.bufs {
		clear(after)
		clear(before)
		for _, u := range b.users {
			after.or(st.desc[u])
			before.or(st.anc[u])
		}
		for i := range after {
			w := ^uint64(0)
			if !b.in {
				w &= after[i]
			}
			if !b.out {
				w &= before[i]
			}
			if i == len(after)-1 && p.n%64 != 0 {
				w &= 1<<(uint(p.n)%64) - 1
			}
			for w != 0 {
				x := int32(i*64 + bits.TrailingZeros64(w))
				w &= w - 1
				if !containsUser(b.users, x) {
					st.lbBase[x] += b.size
				}
			}
		}
	}
}

func containsUser(users []int32, x int32) bool {
	for _, u := range users {
		if u == x {
			return true
		}
	}
	return false
}

// discounts takes from lbBase[x] the most in-place savings x may get in
// some order: the size of every output that a pair may let start in an
// input's bytes (its input may die at x unless another user must run after
// x, the output start there unless another user must run before; without
// the closure, every pair may apply).
func (st *structure) discounts(p *problem) {
	for x := range p.n {
		var outs []graph.TensorID
		for _, pr := range p.pairs[x] {
			bi, bo := &p.bufs[pr.in], &p.bufs[pr.out]
			if slices.Contains(outs, pr.out) || bi.out || bo.in {
				continue
			}
			// Without the closure every pair may apply; with it, stop at
			// the first user that rules the pair out (an input read by
			// thousands would otherwise cost thousands per reader).
			ok := true
			for _, u := range bi.users {
				if !ok || st.desc == nil {
					break
				}
				ok = !st.desc[x].has(u)
			}
			for _, u := range bo.users {
				if !ok || st.anc == nil {
					break
				}
				ok = !st.anc[x].has(u)
			}
			if ok {
				outs = append(outs, pr.out)
				st.lbBase[x] -= bo.size
			}
		}
	}
}

// segment finds the cut operators and numbers the segments: the
// operators with j cut operators before them are in phase 2j, the j-th cut
// operator (from 1) is phase 2j-1.
func (st *structure) segment(p *problem) {
	cutsBefore := make([]int32, p.n)
	cut := make([]bool, p.n)
	for x := range p.n {
		cut[x] = st.anc[x].count()+st.desc[x].count() == p.n-1
	}
	for x := range p.n {
		var c int32
		for w := range st.anc[x] {
			for v := st.anc[x][w]; v != 0; v &= v - 1 {
				if cut[w*64+bits.TrailingZeros64(v)] {
					c++
				}
			}
		}
		cutsBefore[x] = c
		st.phase[x] = 2 * c
		if cut[x] {
			st.phase[x] = 2*c + 1
		}
	}
	var maxPhase int32
	for _, ph := range st.phase {
		maxPhase = max(maxPhase, ph)
	}
	byPhase := make([][]int32, maxPhase+1)
	for x, ph := range st.phase {
		byPhase[ph] = append(byPhase[ph], int32(x))
	}
	for _, ops := range byPhase {
		if len(ops) > 0 {
			st.segs = append(st.segs, ops)
		}
	}
	// Renumber phases densely, in segment order.
	for i, ops := range st.segs {
		for _, x := range ops {
			st.phase[x] = int32(i)
		}
	}
}
