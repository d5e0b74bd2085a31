package order

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/heliac/heliac/graph"
)

// DefaultAlignment is the alignment sizes are rounded up to when
// Options.Alignment is 0: plan's default (plan.DefaultAlignment).
const DefaultAlignment = 16

// DefaultTimeLimit is the search budget when Options.TimeLimit is 0.
const DefaultTimeLimit = 500 * time.Millisecond

// Options controls Schedule. The zero value schedules with defaults.
type Options struct {
	// Alignment is what each buffer's size is rounded up to before sizes
	// are summed, as plan places them: a power of two, or 0 for
	// DefaultAlignment.
	Alignment int64
	// InPlace, when set, says which outputs of an operator may take the
	// bytes of one of its inputs when that input dies at the operator: a
	// kernel's contract that it reads each element of the input before it
	// writes the same element of the output. The cost model then counts
	// such a pair once while the operator runs. Pairs that cannot share
	// (an operand that is not scratch, a subgraph input or output, an
	// operator that runs subgraphs, an operand in two pairs) are ignored.
	// liveness and plan know nothing of it: with InPlace set, Result's
	// peaks are the cost model's, not those of a plan of the order. nil
	// means no operator shares.
	InPlace func(op graph.OpRef) []Pair
	// TimeLimit is the search budget; when it runs out, or the context's
	// deadline comes first, Schedule returns the best order found by then.
	// 0 means DefaultTimeLimit; negative is an error.
	TimeLimit time.Duration
}

// Pair names an operand of an operator by position: Input indexes its
// Inputs, Output its Outputs.
type Pair struct{ Input, Output int }

// Result is the order Schedule chose and what it knows of its quality.
// Peaks are bytes of live scratch tensors, each size rounded up to the
// alignment, an alias group counted once, at the busiest step of the
// timeline (see the liveness package doc): the lower bound plan reports
// for the scratch arena when every scratch tensor shares one.
type Result struct {
	// Order lists, for each subgraph, its operators in the order they run:
	// a permutation of their indexes that keeps the model's meaning. It is
	// the model's own order when no order found is better.
	Order [][]graph.OpIndex
	// Peak is the peak of Order.
	Peak int64
	// ModelPeak is the peak of the model's own order.
	ModelPeak int64
	// LowerBound is a peak no legal order (as Proven says) goes below; see
	// the package doc's Search.
	LowerBound int64
	// Proven says no legal order has a lower peak than Order: Peak equals
	// LowerBound, which a search that finishes raises to the optimum.
	// Legal means allowed by this package's rules (see the package doc),
	// a little stricter than verify's.
	Proven bool
}

// Schedule returns an order of m's operators, per subgraph, that keeps the
// model's meaning (see deps) and makes the peak of live scratch bytes as
// small as it can find within the budget; never worse than the model's own
// order. It returns an error only for a model liveness.Analyze refuses (a
// call cycle, over the work limits, an index out of range) or bad options,
// never because time ran out.
func Schedule(ctx context.Context, m *graph.Model, opts Options) (*Result, error) {
	align := opts.Alignment
	switch {
	case align == 0:
		align = DefaultAlignment
	case align < 0 || align&(align-1) != 0:
		return nil, fmt.Errorf("order: alignment %d is not a positive power of two", align)
	}
	limit := opts.TimeLimit
	switch {
	case limit < 0:
		return nil, fmt.Errorf("order: time limit %v is negative", limit)
	case limit == 0:
		limit = DefaultTimeLimit
	}
	deadline := time.Now().Add(limit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	stop := func() bool { return ctx.Err() != nil || !time.Now().Before(deadline) }
	md, err := analyze(m, align)
	if err != nil {
		return nil, err
	}
	inPlace := md.inPlacePairs(opts.InPlace)
	fx := findEffects(md)
	n := len(m.Subgraphs)
	sol := &solver{md: md, fx: fx, stop: stop, inPlace: inPlace,
		order: make([][]graph.OpIndex, n), peak: make([]int64, n), bound: make([]int64, n)}
	for _, s := range md.post {
		sol.subgraph(s)
	}
	res := &Result{Order: sol.order, ModelPeak: md.peakOf(modelOrder(m), inPlace)}
	res.Peak = md.settle(sol.order, inPlace)
	if res.Peak >= res.ModelPeak {
		res.Order, res.Peak = modelOrder(m), res.ModelPeak
	}
	for s := range m.Subgraphs {
		if md.entry[s] {
			res.LowerBound = max(res.LowerBound, sol.bound[s])
		}
	}
	res.Proven = res.Peak <= res.LowerBound
	return res, nil
}

// settle returns the peak of order on the timeline. When a subgraph runs
// more than once the cost model leaves out what its tensors hold between
// runs, so an order it prefers can measure worse than the model's: then,
// subgraph by subgraph, settle puts back the model's order wherever that
// measures better (changing order in place).
func (md *model) settle(order [][]graph.OpIndex, inPlace [][][]bufPair) int64 {
	peak := md.peakOf(order, inPlace)
	if !slices.ContainsFunc(md.runs, func(n int) bool { return n > 1 }) {
		return peak
	}
	models := modelOrder(md.m)
	for _, s := range md.post {
		mine, model := order[s], models[s]
		if slices.Equal(mine, model) {
			continue
		}
		order[s] = model
		if p := md.peakOf(order, inPlace); p < peak {
			peak = p
			continue
		}
		order[s] = mine
	}
	return peak
}

func modelOrder(m *graph.Model) [][]graph.OpIndex {
	order := make([][]graph.OpIndex, len(m.Subgraphs))
	for s, sg := range m.Subgraphs {
		order[s] = make([]graph.OpIndex, len(sg.Ops))
		for i := range order[s] {
			order[s][i] = graph.OpIndex(i)
		}
	}
	return order
}

// inPlacePairs asks hook for every operator's pairs and keeps those whose
// operands can share bytes, as buffer roots.
func (md *model) inPlacePairs(hook func(graph.OpRef) []Pair) [][][]bufPair {
	if hook == nil {
		return nil
	}
	out := make([][][]bufPair, len(md.m.Subgraphs))
	for si, sg := range md.m.Subgraphs {
		boundary := map[graph.TensorID]bool{}
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				if t != graph.NoTensor && md.buf[si][t] >= 0 {
					boundary[md.buf[si][t]] = true
				}
			}
		}
		out[si] = make([][]bufPair, len(sg.Ops))
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			if len(op.Called) > 0 {
				continue
			}
			var used []graph.TensorID
			for _, pr := range hook(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}) {
				if pr.Input < 0 || pr.Input >= len(op.Inputs) || pr.Output < 0 || pr.Output >= len(op.Outputs) ||
					op.Inputs[pr.Input] == graph.NoTensor || op.Outputs[pr.Output] == graph.NoTensor {
					continue
				}
				in, o := md.buf[si][op.Inputs[pr.Input]], md.buf[si][op.Outputs[pr.Output]]
				if in < 0 || o < 0 || in == o || boundary[in] || boundary[o] || slices.Contains(used, in) || slices.Contains(used, o) {
					continue
				}
				used = append(used, in, o)
				out[si][oi] = append(out[si][oi], bufPair{in, o})
			}
		}
	}
	return out
}
