package order

import (
	"cmp"
	"slices"
)

// view is a part of a problem seen from its start: every operator of an
// earlier part has run, none of a later one has. A part is a segment of the
// structure, or a window of consecutive operators of an order. Its
// operators have local numbers 0..len(ops)-1, in an order that is legal.
type view struct {
	p     *problem
	st    *structure
	phase []int32 // phase[x] < k: x runs before the part; > k: after
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
	// touch[i] is what local operator i touches, seen from the segment.
	touch [][]vtouch
	// pairs[i] are its in-place pairs, as indexes into touch[i].
	pairs [][][2]int
	// nbufs is how many buffers the local operators touch; scans counts
	// the users state has looked at, the effort a search spends.
	nbufs int
	scans int64
}

// vtouch is a buffer a local operator (self) touches: whether it is
// started or needed outside the segment for certain (by an earlier or a
// later segment, or as a subgraph input or output), its local number
// (buf) and its local users, self among them (one list shared by all).
type vtouch struct {
	size          int64
	before, after bool
	buf, self     int32
	users         []int32
}

// ranSet is the local operators that have run: a set, and, when cnt is
// set, how many users of each local buffer have run, which answers state
// at once where the set makes it scan the users (orders walked from the
// start, like costs).
type ranSet struct {
	bits bitset
	cnt  []int32
}

// state says whether the buffer is started (a subgraph input, or touched
// by an operator that has run) and needed (an output, or touched by an
// operator that has not run, the one running now left out).
func (v *view) state(t *vtouch, ran ranSet) (started, needed bool) {
	started, needed = t.before, t.after
	if ran.cnt != nil {
		n := ran.cnt[t.buf]
		return started || n > 0, needed || int(n)+1 < len(t.users)
	}
	for _, u := range t.users {
		v.scans++
		if u == t.self {
			continue
		}
		if ran.bits.has(u) {
			started = true
		} else {
			needed = true
		}
		if started && needed {
			break
		}
	}
	return started, needed
}

// run records that local operator i has run in ran's counts.
func (v *view) run(i int32, ran ranSet) {
	ran.bits.set(i)
	for j := range v.touch[i] {
		ran.cnt[v.touch[i][j].buf]++
	}
}

// segmentView returns the view of segment k.
func segmentView(p *problem, st *structure, k int, local []int32) *view {
	return newView(p, st, st.segs[k], st.phase, int32(k), k == len(st.segs)-1, local)
}

// newView returns the view of the operators ops (listed in a legal order),
// which phase puts at k, the others before or after; last says no operator
// runs after them.
func newView(p *problem, st *structure, ops []int32, phase []int32, k int32, last bool, local []int32) *view {
	v := &view{p: p, st: st, phase: phase, k: k, ops: ops, local: local, last: last,
		preds: make([][]int32, len(ops)), succs: make([][]int32, len(ops)), lb: make([]int64, len(ops))}
	for i, x := range ops {
		local[x] = int32(i)
	}
	for i, x := range ops {
		for _, y := range p.preds[x] {
			if phase[y] == k {
				v.preds[i] = append(v.preds[i], local[y])
				v.succs[local[y]] = append(v.succs[local[y]], int32(i))
			}
		}
	}
	v.byLB = make([]int32, len(ops))
	v.refreshLB()
	v.touch, v.pairs = make([][]vtouch, len(ops)), make([][][2]int, len(ops))
	// Each buffer's users are sorted out once, not once per user: a
	// buffer a thousand operators read would cost a million.
	type lbuf struct {
		n             int32
		before, after bool
		users         []int32
	}
	var bufs []lbuf
	index := make(map[int32]int32)
	for i, x := range ops {
		for _, b := range p.touch[x] {
			n, ok := index[b]
			if !ok {
				buf := &p.bufs[b]
				lb := lbuf{n: int32(len(bufs)), before: buf.in, after: buf.out}
				for _, u := range buf.users {
					switch ph := phase[u]; {
					case ph < v.k:
						lb.before = true
					case ph > v.k:
						lb.after = true
					default:
						lb.users = append(lb.users, local[u])
					}
				}
				n = lb.n
				index[b] = n
				bufs = append(bufs, lb)
			}
			lb := &bufs[n]
			v.touch[i] = append(v.touch[i], vtouch{size: p.bufs[b].size, before: lb.before, after: lb.after,
				buf: n, self: int32(i), users: lb.users})
		}
		for _, pr := range p.pairs[x] {
			v.pairs[i] = append(v.pairs[i], [2]int{slices.Index(p.touch[x], int32(pr.in)), slices.Index(p.touch[x], int32(pr.out))})
		}
	}
	v.nbufs = len(bufs)
	for _, b := range p.bufs {
		started, rest := b.in, b.out
		for _, u := range b.users {
			if phase[u] < k {
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

// cost returns what running local operator i costs after the local
// operators in ran, with open bytes open, and the bytes open after it.
// remaining is how many local operators have not run, i included.
func (v *view) cost(i int32, ran ranSet, open int64, remaining int) (cost, after int64) {
	cost, after = open, open
	for j := range v.touch[i] {
		t := &v.touch[i][j]
		switch st, rest := v.state(t, ran); {
		case !st && rest:
			cost += t.size
			after += t.size
		case !st:
			cost += t.size
		case !rest:
			after -= t.size
		}
	}
	if len(v.pairs[i]) > 0 {
		cost -= v.inPlace(i, ran)
	}
	x := int(v.ops[i])
	cost += v.p.callee[x]
	if v.last && remaining == 1 {
		cost = v.p.lastCost(x, cost)
	}
	return cost, after
}

// inPlace returns the bytes local operator i saves by writing outputs over
// dying inputs after the local operators in ran, as liveness decides
// (inPlacePairs): pairs in order, the first that applies to an output
// wins, an input taken by an output that lives on takes no other.
func (v *view) inPlace(i int32, ran ranSet) int64 {
	var saved int64
	var taken, used []int
	for _, pr := range v.pairs[i] {
		if slices.Contains(taken, pr[1]) || slices.Contains(used, pr[0]) {
			continue
		}
		in, out := &v.touch[i][pr[0]], &v.touch[i][pr[1]]
		_, inNeeded := v.state(in, ran)
		outStarted, outNeeded := v.state(out, ran)
		if inNeeded || outStarted {
			continue
		}
		saved += out.size
		taken = append(taken, pr[1])
		if outNeeded {
			used = append(used, pr[0])
		}
	}
	return saved
}

// opensNothing reports whether every buffer local operator i starts dies
// at i, after the local operators in ran: running i early never keeps
// bytes live longer.
func (v *view) opensNothing(i int32, ran ranSet) bool {
	for j := range v.touch[i] {
		t := &v.touch[i][j]
		if t.before {
			continue
		}
		if st, rest := v.state(t, ran); !st && rest {
			return false
		}
	}
	return true
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
	ran := ranSet{bits: newBitset(len(v.ops)), cnt: make([]int32, v.nbufs)}
	open := v.open0
	out := make([]int64, len(v.ops))
	for n, i := range order {
		out[i], open = v.cost(i, ran, open, len(order)-n)
		v.run(i, ran)
	}
	return out
}

// peakOf returns the segment's peak on order (local numbers).
func (v *view) peakOf(order []int32) int64 {
	return slices.Max(append(v.costs(order), 0))
}
