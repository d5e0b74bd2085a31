package order

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// problem is one subgraph's scheduling problem in the cost model: which
// operators must precede which, and the buffers they touch.
type problem struct {
	n     int
	preds [][]int32 // preds[x]: operators that must run before x
	succs [][]int32
	bufs  []buffer
	// touch[x] lists the buffers operator x reads or writes, each once.
	touch [][]int32
	// callee[x] is the peak of the subgraphs x runs (the largest; they run
	// one after another inside x's span).
	callee []int64
	calls  []bool // x runs subgraphs
	// pairs[x] are x's in-place pairs, as buffer indexes.
	pairs [][]bufPair
	// inStep is the bytes live at the subgraph's input step.
	inStep int64
	// tail is the bytes of outputs no operator touches, live at the
	// subgraph's last step only.
	tail int64
	// uses is how many buffers the operators touch, summed.
	uses int
}

// buffer is one scratch buffer of a subgraph: a tensor, or an alias group.
type buffer struct {
	size  int64
	users []int32 // operators that touch it, ascending
	// in and out say it holds a subgraph input (live from the input step)
	// or output (live to the last step).
	in, out bool
}

// newProblem builds subgraph s's problem; callee[c] is the peak of each
// subgraph s calls, already scheduled.
func newProblem(md *model, fx *effects, s graph.SubgraphIndex, calleePeak []int64, inPlace [][]bufPair) *problem {
	sg := &md.m.Subgraphs[s]
	n := len(sg.Ops)
	p := &problem{n: n, preds: deps(md, fx, s), succs: make([][]int32, n), touch: make([][]int32, n),
		callee: make([]int64, n), calls: make([]bool, n), pairs: make([][]bufPair, n)}
	for x, ps := range p.preds {
		for _, y := range ps {
			p.succs[y] = append(p.succs[y], int32(x))
		}
	}
	index := map[graph.TensorID]int32{}
	bufOf := func(t graph.TensorID) int32 {
		r := md.buf[s][t]
		if r < 0 {
			return -1
		}
		b, ok := index[r]
		if !ok {
			b = int32(len(p.bufs))
			index[r] = b
			p.bufs = append(p.bufs, buffer{size: md.size[s][r]})
		}
		return b
	}
	for _, t := range sg.Inputs {
		if t != graph.NoTensor {
			if b := bufOf(t); b >= 0 {
				p.bufs[b].in = true
			}
		}
	}
	for _, t := range sg.Outputs {
		if t != graph.NoTensor {
			if b := bufOf(t); b >= 0 {
				p.bufs[b].out = true
			}
		}
	}
	for x := range sg.Ops {
		op := &sg.Ops[x]
		for _, t := range operands(op) {
			if b := bufOf(t); b >= 0 && !slices.Contains(p.touch[x], b) {
				p.touch[x] = append(p.touch[x], b)
				p.bufs[b].users = append(p.bufs[b].users, int32(x))
				p.uses++
			}
		}
		for _, c := range op.Called {
			p.callee[x] = max(p.callee[x], calleePeak[c])
			p.calls[x] = true
		}
		if inPlace != nil {
			for _, pr := range inPlace[x] {
				p.pairs[x] = append(p.pairs[x], bufPair{graph.TensorID(index[pr.in]), graph.TensorID(index[pr.out])})
			}
		}
	}
	for _, b := range p.bufs {
		switch {
		case b.in:
			p.inStep += b.size
		case b.out && len(b.users) == 0:
			p.tail += b.size
		}
	}
	if n == 0 {
		p.inStep += p.tail
		p.tail = 0
	}
	return p
}

// peakOf returns the subgraph's peak in the cost model on order (a legal
// order of its operators), with callees at their given peaks.
func (p *problem) peakOf(st *structure, order []int32) int64 {
	v := newView(p, st, order, make([]int32, p.n), 0, true, make([]int32, p.n))
	_, peak := v.positionCosts()
	return max(peak, p.inStep)
}

// lastCost adds the tail to the cost of the last operator: the outputs no
// operator touches are live at the subgraph's last step. When the operator
// runs subgraphs that step is its callees' last, so this counts the tail
// beside the operator's own bytes only, a lower bound of the step's.
func (p *problem) lastCost(x int, cost int64) int64 {
	if p.tail == 0 {
		return cost
	}
	if !p.calls[x] {
		return cost + p.tail
	}
	return max(cost, cost-p.callee[x]+p.tail)
}
