package order

// cutBound returns the fewest bytes that can be live while operator x runs
// (its callees left out), over every state a legal order can be in when x
// runs: a set S of operators that have run, holding every operator that
// must run before x and none that must run after. What x touches is live
// whatever S is (less the in-place savings it may get), and so is a buffer
// started before x and needed after it for certain; every other buffer is
// live when S splits it: it is started (a subgraph input, or a user in S)
// and needed (an output, or a user outside S). The least such cost is a
// minimum cut, the buffers hyperedges (Lawler's construction) and the
// ordering constraints edges no cut may cross. The answer is at least
// static[x]; limit caps the search (the answer is then limit).
func (st *structure) cutBound(p *problem, x int, f *flowNet, limit int64) int64 {
	base := st.static[x]
	if base >= limit {
		return base
	}
	anc, desc := st.anc[x], st.desc[x]
	free := func(u int32) bool { return int(u) != x && !anc.has(u) && !desc.has(u) }
	// Nodes 0 and 1 are the source (S) and the sink; then free operators.
	f.reset(2)
	node := make([]int32, p.n)
	for u := range int32(p.n) {
		node[u] = -1
		if free(u) {
			node[u] = f.node()
		}
	}
	if len(f.head) == 2 {
		return base
	}
	for u, nu := range node {
		if nu < 0 {
			continue
		}
		for _, y := range p.preds[u] {
			if ny := node[y]; ny >= 0 {
				f.edge(nu, ny, inf) // u in S needs its predecessors in S
			}
		}
	}
	touched := make(map[int32]bool, len(p.touch[x]))
	for _, b := range p.touch[x] {
		touched[b] = true
	}
	for bi := range p.bufs {
		b := &p.bufs[bi]
		if touched[int32(bi)] {
			continue
		}
		started, needed := b.in, b.out
		var users []int32
		for _, u := range b.users {
			switch {
			case anc.has(u):
				started = true
			case desc.has(u):
				needed = true
			default:
				users = append(users, node[u])
			}
		}
		switch {
		case started && needed || len(users) == 0:
			// Counted in static, or never live at x.
		case started:
			c := f.node()
			f.edge(0, c, b.size)
			for _, nu := range users {
				f.edge(c, nu, inf) // a user outside S keeps it needed
			}
		case needed:
			c := f.node()
			f.edge(c, 1, b.size)
			for _, nu := range users {
				f.edge(nu, c, inf) // a user in S has started it
			}
		default:
			a, c := f.node(), f.node()
			f.edge(a, c, b.size)
			for _, nu := range users {
				f.edge(nu, a, inf)
				f.edge(c, nu, inf)
			}
		}
	}
	return base + f.maxFlow(limit-base)
}
