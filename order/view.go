package order

import (
	"cmp"
	"slices"
)

// view is one segment of a problem seen from its start: every operator of
// an earlier segment has run, none of a later one has. Its operators have
// local numbers 0..len(ops)-1, in model order.
type view struct {
	p     *problem
	st    *structure
	k     int32
	ops   []int32 // local -> operator of the subgraph
	local []int32 // operator -> local number, for operators of this segment
	preds [][]int32
	succs [][]int32
	open0 int64 // bytes open when the segment starts
	last  bool  // the segment ends the subgraph: its last operator gets the tail
	// lb[i] is what local operator i costs in every order; byLB lists the
	// local operators by lb, largest first.
	lb   []int64
	byLB []int32
}

func newView(p *problem, st *structure, k int, local []int32) *view {
	ops := st.segs[k]
	v := &view{p: p, st: st, k: int32(k), ops: ops, local: local, last: k == len(st.segs)-1,
		preds: make([][]int32, len(ops)), succs: make([][]int32, len(ops)), lb: make([]int64, len(ops))}
	for i, x := range ops {
		local[x] = int32(i)
	}
	for i, x := range ops {
		for _, y := range p.preds[x] {
			if st.phase[y] == v.k {
				v.preds[i] = append(v.preds[i], local[y])
				v.succs[local[y]] = append(v.succs[local[y]], int32(i))
			}
		}
	}
	v.byLB = make([]int32, len(ops))
	v.refreshLB()
	for _, b := range p.bufs {
		started, rest := b.in, b.out
		for _, u := range b.users {
			if st.phase[u] < v.k {
				started = true
			} else {
				rest = true
			}
		}
		if started && rest {
			v.open0 += b.size
		}
	}
	return v
}

// refreshLB sets lb and byLB from the structure's lbBase.
func (v *view) refreshLB() {
	for i, x := range v.ops {
		v.lb[i] = v.st.lbBase[x] + v.p.callee[x]
		v.byLB[i] = int32(i)
	}
	slices.SortStableFunc(v.byLB, func(a, b int32) int { return cmp.Compare(v.lb[b], v.lb[a]) })
}

// doneFunc returns whether an operator of the subgraph has run when the
// local operators in ran have.
func (v *view) doneFunc(ran bitset) func(int32) bool {
	return func(u int32) bool {
		ph := v.st.phase[u]
		return ph < v.k || ph == v.k && ran.has(v.local[u])
	}
}

// cost returns what running local operator i costs after the local
// operators in ran, with open bytes open, and the bytes open after it.
// remaining is how many local operators have not run, i included.
func (v *view) cost(i int32, ran bitset, open int64, remaining int) (cost, after int64) {
	x := int(v.ops[i])
	cost, after = v.p.opCost(x, open, v.doneFunc(ran))
	if v.last && remaining == 1 {
		cost = v.p.lastCost(x, cost)
	}
	return cost, after
}

// ready reports whether every local predecessor of i has run.
func (v *view) ready(i int32, ran bitset) bool {
	for _, y := range v.preds[i] {
		if !ran.has(y) {
			return false
		}
	}
	return true
}

// h returns the largest lb of a local operator that has not run: a lower
// bound of every completion.
func (v *view) h(ran bitset) int64 {
	for _, i := range v.byLB {
		if !ran.has(i) {
			return v.lb[i]
		}
	}
	return 0
}

// costs returns what each local operator costs on order (local numbers),
// indexed by local number.
func (v *view) costs(order []int32) []int64 {
	ran := newBitset(len(v.ops))
	open := v.open0
	out := make([]int64, len(v.ops))
	for n, i := range order {
		out[i], open = v.cost(i, ran, open, len(order)-n)
		ran.set(i)
	}
	return out
}

// peakOf returns the segment's peak on order (local numbers).
func (v *view) peakOf(order []int32) int64 {
	return slices.Max(append(v.costs(order), 0))
}
