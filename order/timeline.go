package order

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// peakOf returns the peak of live scratch bytes when the model runs in
// order, on liveness's timeline (see the liveness package doc): step 0 for
// the main subgraph's inputs, one step per operator, called subgraphs
// inside their caller's span, entry subgraphs one after another. A buffer
// (an alias group, or a tensor of its own) is live from the first step
// that writes or reads one of its tensors to the last that reads one; a
// tensor a subgraph called several times uses is live over the hull of its
// runs. This walk is the reference the search's cost model is checked
// against: it shares no code with it.
func (md *model) peakOf(order [][]graph.OpIndex, inPlace [][][]bufPair) int64 {
	m := md.m
	type span struct{ first, last int32 }
	live := make([][]span, len(m.Subgraphs))
	for si, sg := range m.Subgraphs {
		live[si] = make([]span, len(sg.Tensors))
		for t := range live[si] {
			live[si][t] = span{-1, -1}
		}
	}
	touch := func(s graph.SubgraphIndex, t graph.TensorID, first, last int32) {
		r := md.buf[s][t]
		if r < 0 {
			return
		}
		l := &live[s][r]
		if l.first < 0 {
			*l = span{first, last}
			return
		}
		l.first, l.last = min(l.first, first), max(l.last, last)
	}
	type run struct {
		op          graph.OpRef
		first, last int32
	}
	var runs []run // runs of operators with in-place pairs
	var next int32
	var schedule func(s graph.SubgraphIndex)
	schedule = func(s graph.SubgraphIndex) {
		sg := &m.Subgraphs[s]
		in := next
		next++
		for _, t := range sg.Inputs {
			if t != graph.NoTensor {
				touch(s, t, in, in)
			}
		}
		for _, oi := range order[s] {
			op := &sg.Ops[oi]
			begin := next
			next++
			for _, c := range op.Called {
				schedule(c)
			}
			for _, t := range operands(op) {
				touch(s, t, begin, next-1)
			}
			if inPlace != nil && len(inPlace[s][oi]) > 0 {
				runs = append(runs, run{graph.OpRef{Subgraph: s, Op: oi}, begin, next - 1})
			}
		}
		for _, t := range sg.Outputs {
			if t != graph.NoTensor {
				touch(s, t, next-1, next-1)
			}
		}
	}
	for s := range m.Subgraphs {
		if md.entry[s] {
			schedule(graph.SubgraphIndex(s))
		}
	}
	delta := make([]int64, next+1)
	for si := range m.Subgraphs {
		for t, l := range live[si] {
			if l.first >= 0 {
				delta[l.first] += md.size[si][t]
				delta[l.last+1] -= md.size[si][t]
			}
		}
	}
	// An output written over a dying input holds the input's bytes: count
	// the two once at the operator's step.
	for _, r := range runs {
		s := r.op.Subgraph
		var taken, used []graph.TensorID
		for _, p := range inPlace[s][r.op.Op] {
			li, lo := live[s][p.in], live[s][p.out]
			if slices.Contains(taken, p.out) || slices.Contains(used, p.in) || li.last != r.last || lo.first != r.first {
				continue
			}
			d := md.size[s][p.out]
			delta[r.first] -= d
			delta[r.last+1] += d
			taken = append(taken, p.out)
			if lo.last > r.last {
				used = append(used, p.in)
			}
		}
	}
	var cur, peak int64
	for _, d := range delta {
		cur += d
		peak = max(peak, cur)
	}
	return peak
}
