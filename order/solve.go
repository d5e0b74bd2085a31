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

// search orders each segment of p, best first by beam search, then exactly
// where time allows, the segments with the highest peaks first. It returns
// each segment's order (as operators of the subgraph) and peak, and a lower
// bound of p's optimal peak.
func (sv *solver) search(p *problem, st *structure) (orders [][]int32, peaks []int64, bound int64) {
	local := make([]int32, p.n)
	views := make([]*view, len(st.segs))
	locals := make([][]int32, len(st.segs))
	peaks = make([]int64, len(st.segs))
	bound = p.inStep
	for k := range st.segs {
		v := newView(p, st, k, local)
		views[k] = v
		for _, lb := range v.lb {
			bound = max(bound, lb)
		}
		model := make([]int32, len(v.ops))
		for i := range model {
			model[i] = int32(i)
		}
		locals[k], peaks[k] = model, v.peakOf(model)
		if peaks[k] <= bound {
			continue // nothing to gain yet; the exact pass looks again
		}
		if o, pk := v.beam(beamWidth, sv.stop); pk < peaks[k] {
			locals[k], peaks[k] = o, pk
		}
	}
	bound = max(bound, st.endBytes)
	byPeak := make([]int, len(st.segs))
	for k := range byPeak {
		byPeak[k] = k
	}
	slices.SortStableFunc(byPeak, func(a, b int) int { return cmp.Compare(peaks[b], peaks[a]) })
	if st.anc != nil {
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
