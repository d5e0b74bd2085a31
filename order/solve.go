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
	b       *budget
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
	modelPeak := p.peakOf(st, model)
	best, peak, target := sv.search(p, st)

	// A bound that holds whatever order the callees run in (lbBase leaves
	// callees out).
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

// search orders p's operators segment by segment: by beam search first;
// then, when the peak is above the lower bound (raised by cutBound for the
// costliest operators), by improving the whole order window by window
// (improve); then exactly, segment by segment, the highest peaks first,
// while time allows. It returns the order, its peak and a lower bound of
// p's optimal peak.
func (sv *solver) search(p *problem, st *structure) (order []int32, peak, bound int64) {
	local := make([]int32, p.n)
	views := make([]*view, len(st.segs))
	locals := make([][]int32, len(st.segs))
	peaks := make([]int64, len(st.segs))
	bound = max(p.inStep, st.endBytes)
	for k := range st.segs {
		views[k] = segmentView(p, st, k, local)
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
		if o, pk := v.beam(beamWidth, sv.b); pk < peaks[k] {
			locals[k], peaks[k] = o, pk
		}
	}
	top := func() int64 { return slices.Max(append(peaks, 0)) }
	if st.anc != nil && top() > bound {
		bound = sv.cutBounds(p, st, views, locals, bound)
	}
	if st.anc != nil && top() > bound && !sv.b.stop() {
		var whole []int32
		for k, v := range views {
			for _, l := range locals[k] {
				whole = append(whole, v.ops[l])
			}
		}
		whole, _ = sv.improve(p, st, whole, bound)
		// Segments stay contiguous in every legal order: split it again.
		for k := range locals {
			locals[k] = locals[k][:0]
		}
		for _, x := range whole {
			k := st.phase[x]
			locals[k] = append(locals[k], local[x])
		}
		for k, v := range views {
			peaks[k] = v.peakOf(locals[k])
		}
	}
	if st.anc != nil {
		byPeak := make([]int, len(st.segs))
		for k := range byPeak {
			byPeak[k] = k
		}
		slices.SortStableFunc(byPeak, func(a, b int) int { return cmp.Compare(peaks[b], peaks[a]) })
		for _, k := range byPeak {
			if peaks[k] <= bound || sv.b.stop() {
				continue
			}
			r := views[k].exact(bound, peaks[k], maxStates, sv.b)
			if r.order != nil {
				locals[k], peaks[k] = r.order, r.peak
			}
			bound = max(bound, r.bound)
			if r.done {
				bound = max(bound, peaks[k])
			}
		}
	}
	for k, v := range views {
		for _, l := range locals[k] {
			order = append(order, v.ops[l])
		}
		peak = max(peak, peaks[k])
	}
	return order, max(peak, p.inStep), bound
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
		if oc.cost <= bound || sv.b.stop() {
			break
		}
		x := oc.x
		sv.b.spend(int64(p.uses)) // a cut bound looks at every buffer's users
		cut := st.cutBound(p, int(x), &f, oc.cost-p.callee[x])
		st.lbBase[x] = max(st.lbBase[x], cut)
		bound = max(bound, cut+p.callee[x])
	}
	for _, v := range views {
		v.refreshLB()
	}
	return bound
}
