package order

import (
	"cmp"
	"slices"

	"github.com/heliac/heliac/graph"
)

// beamWidth is the beam search's width.
const beamWidth = 16

// solver schedules subgraphs one at a time, callees first.
type solver struct {
	md      *model
	fx      *effects
	stop    func() bool
	inPlace [][][]bufPair
	// order, peak and bound hold, per subgraph scheduled so far, its
	// order, its peak in the cost model with its callees' orders, and a
	// lower bound of the peak of any order of it and its callees.
	order [][]graph.OpIndex
	peak  []int64
	bound []int64
}

// subgraph schedules subgraph s, whose callees are scheduled.
func (sv *solver) subgraph(s graph.SubgraphIndex) {
	var pairs [][]bufPair
	if sv.inPlace != nil {
		pairs = sv.inPlace[s]
	}
	p := newProblem(sv.md, sv.fx, s, sv.peak, pairs)
	st := analyzeStructure(p)
	model := make([]int32, p.n)
	for i := range model {
		model[i] = int32(i)
	}
	modelPeak := p.peakOf(model)

	// A bound that holds whatever order the callees run in.
	static := max(p.inStep, st.endBytes)
	sg := &sv.md.m.Subgraphs[s]
	calleesProven := true
	for x := range p.n {
		var callee int64
		for _, c := range sg.Ops[x].Called {
			callee = max(callee, sv.bound[c])
			calleesProven = calleesProven && sv.bound[c] >= sv.peak[c]
		}
		static = max(static, st.lbBase[x]+callee)
	}

	orders, peaks, target := sv.search(p, st)
	best := make([]int32, 0, p.n)
	for _, o := range orders {
		best = append(best, o...)
	}
	peak := p.inStep
	for _, pk := range peaks {
		peak = max(peak, pk)
	}
	sv.bound[s] = static
	if calleesProven {
		sv.bound[s] = max(static, target)
	}
	if peak >= modelPeak {
		best, peak = model, modelPeak
	}
	sv.peak[s] = peak
	sv.order[s] = make([]graph.OpIndex, p.n)
	for i, x := range best {
		sv.order[s][i] = graph.OpIndex(x)
	}
}

// search orders each segment of p: by beam search, then exactly where time
// allows, the segments with the highest peaks first. Before the exact
// search it raises the lower bound of the operators that cost most in the
// best order so far with cutBound. It returns each segment's order (as
// operators of the subgraph) and peak, and a lower bound of p's optimal
// peak.
func (sv *solver) search(p *problem, st *structure) (orders [][]int32, peaks []int64, bound int64) {
	local := make([]int32, p.n)
	views := make([]*view, len(st.segs))
	locals := make([][]int32, len(st.segs))
	peaks = make([]int64, len(st.segs))
	bound = max(p.inStep, st.endBytes)
	for k := range st.segs {
		views[k] = newView(p, st, k, local)
		bound = max(bound, slices.Max(views[k].lb))
	}
	for k, v := range views {
		model := make([]int32, len(v.ops))
		for i := range model {
			model[i] = int32(i)
		}
		locals[k], peaks[k] = model, v.peakOf(model)
		if peaks[k] <= bound {
			continue // nothing to gain
		}
		if o, pk := v.beam(beamWidth, sv.stop); pk < peaks[k] {
			locals[k], peaks[k] = o, pk
		}
	}
	if st.anc != nil {
		bound = sv.cutBounds(p, st, views, locals, bound)
		byPeak := make([]int, len(st.segs))
		for k := range byPeak {
			byPeak[k] = k
		}
		slices.SortStableFunc(byPeak, func(a, b int) int { return cmp.Compare(peaks[b], peaks[a]) })
		for _, k := range byPeak {
			if peaks[k] <= bound || sv.stop() {
				continue
			}
			r := views[k].exact(bound, peaks[k], sv.stop)
			if r.order != nil {
				locals[k], peaks[k] = r.order, r.peak
			}
			bound = max(bound, r.bound)
			if r.done {
				bound = max(bound, peaks[k])
			}
		}
	}
	orders = make([][]int32, len(st.segs))
	for k, v := range views {
		orders[k] = make([]int32, len(locals[k]))
		for i, l := range locals[k] {
			orders[k][i] = v.ops[l]
		}
	}
	return orders, peaks, bound
}

// cutBounds raises lbBase with cutBound for the operators that cost more
// than bound in the best orders so far (locals), costliest first, and
// returns the raised bound. An operator costs at least its cut bound in
// every order, so one that costs no more than the bound cannot raise it.
func (sv *solver) cutBounds(p *problem, st *structure, views []*view, locals [][]int32, bound int64) int64 {
	type opCost struct {
		x    int32
		cost int64
	}
	var costly []opCost
	for k, v := range views {
		for i, c := range v.costs(locals[k]) {
			if c > bound {
				costly = append(costly, opCost{v.ops[i], c})
			}
		}
	}
	slices.SortStableFunc(costly, func(a, b opCost) int { return cmp.Compare(b.cost, a.cost) })
	var f flowNet
	for _, oc := range costly {
		if oc.cost <= bound || sv.stop() {
			break
		}
		x := oc.x
		cut := st.cutBound(p, int(x), &f, oc.cost-p.callee[x])
		st.lbBase[x] = max(st.lbBase[x], cut)
		bound = max(bound, cut+p.callee[x])
	}
	for _, v := range views {
		v.refreshLB()
	}
	return bound
}
