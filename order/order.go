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

// DefaultTimeLimit is the wall-clock budget when Options.TimeLimit is 0.
const DefaultTimeLimit = 1500 * time.Millisecond

// DefaultWork is the work budget when Options.Work is 0: a little over
// twice what the hardest corpus model (dp_net, 2,338 operators) takes to
// be proven optimal (about 8,500), about half a second of search on it.
const DefaultWork = 20_000

// Options controls Schedule. The zero value schedules with defaults.
type Options struct {
	// Alignment is what each buffer's size is rounded up to before sizes
	// are summed, as plan places them: a power of two, or 0 for
	// DefaultAlignment.
	Alignment int64
	// InPlace, when set, says which outputs of an operator may take the
	// bytes of one of its inputs when that input dies at the operator, in
	// the order to try them: a kernel's contract that it reads each
	// element of the input before it writes the same element of the
	// output (kernels.Library.InPlace gives them). The cost model then
	// counts the output in the input's bytes, on liveness's terms (its
	// Options.Kernels): an output takes a dying input's bytes when both
	// are scratch tensors of one size, neither is a subgraph's input or
	// output (but see OverwriteInputs), the output has one writer and is
	// not a view, the operator runs once and calls no subgraph, the input's
	// buffer dies at the operator and the output's starts there; the first
	// pair that applies to an output wins, and an input taken by an output
	// that lives on takes no other. Pass the same contracts to liveness
	// (and the plan) as to Schedule, or Result's peaks are not the plan's.
	// Only writes exactly over the input are modelled: give Schedule a
	// library's ExactOnly contracts. Size-changing ones (PAD, a float
	// QUANTIZE), which liveness applies afterwards, make the plan's peak
	// differ from Result's.
	// nil means no operator writes in place.
	InPlace func(op graph.OpRef) []Pair
	// Copies, when set, gives the exact-overlap copy contracts of an
	// operator (kernels.Library.ExactOverlap): a slice's output over the
	// contiguous block of its input it copies, a concatenation's input in
	// its slot of the output. The cost model counts them as liveness does
	// with Options.ExactOverlap, as far as that does not depend on the
	// order (model.copies): a slice's output joins its input's buffer as a
	// view does, a concatenation's input (its own buffer) the output's
	// buffer. Liveness joins an input to its slot only where the in-place
	// writes it made for the order allow, so the plan's peak may differ
	// from Result's. nil means none.
	Copies func(op graph.OpRef) []Copy
	// OverwriteInputs lets an in-place output take the bytes of a main
	// subgraph input that is not also its output, as
	// liveness.Options.OverwriteInputs does.
	OverwriteInputs bool
	// Work is the search budget, counted in search steps (a state
	// expanded, a window tried, or 1,024 operators' costs evaluated or
	// buffer users looked at, so that a step's cost stays bounded on any
	// graph): when it runs out Schedule returns the best order found by
	// then. Counting work, not time, keeps the order the same on every
	// machine. 0 means DefaultWork; negative is an error.
	Work int64
	// TimeLimit is a wall-clock safety net: when it runs out before Work,
	// or the context's deadline comes first, Schedule returns the best
	// order found by then, and Result.TimedOut says the order may then
	// depend on the machine's speed. 0 means DefaultTimeLimit; negative is
	// an error.
	TimeLimit time.Duration
}

// Pair names an operand of an operator by position: Input indexes its
// Inputs, Output its Outputs.
type Pair struct{ Input, Output int }

// Copy is an exact-overlap copy contract of an operator (Options.Copies):
// operand positions, whether the input lies in the output (Slot: a
// concatenation) or the output in the input (a slice), and where the
// smaller starts in the larger, in bytes.
type Copy struct {
	Input, Output int
	Slot          bool
	Offset        int64
}

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
	// LowerBound, which a search that finishes raises to the optimum. It
	// is false when TimedOut: the order the clock left may differ from
	// run to run.
	// Legal means allowed by this package's rules (see the package doc),
	// a little stricter than verify's.
	Proven bool
	// Work is the work the search took, in Options.Work's units.
	Work int64
	// TimedOut says the search stopped on the wall clock (Options.TimeLimit
	// or the context) rather than on its work budget or by finishing: the
	// order may differ on a faster or slower machine.
	TimedOut bool
}

// Schedule returns an order of m's operators, per subgraph, that keeps the
// model's meaning (see deps) and makes the peak of live scratch bytes as
// small as it can find within the budget; never worse than the model's own
// order. It returns an error only for a model liveness.Analyze refuses (a
// call cycle, over the work limits, an index out of range) or bad options,
// never because time ran out. Its peaks do not count the groups a model's
// own offline plan fixes (liveness.HasOwnPlan, Ethos-U operands): such a
// model keeps its own order, which its plan was made for.
func Schedule(ctx context.Context, m *graph.Model, opts Options) (*Result, error) {
	align := opts.Alignment
	switch {
	case align == 0:
		align = DefaultAlignment
	case align < 0 || align&(align-1) != 0:
		return nil, fmt.Errorf("order: alignment %d is not a positive power of two", align)
	}
	work := opts.Work
	switch {
	case work < 0:
		return nil, fmt.Errorf("order: work budget %d is negative", work)
	case work == 0:
		work = DefaultWork
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
	b := &budget{ctx: ctx, deadline: deadline, limit: work}
	md, err := analyze(m, align)
	if err != nil {
		return nil, err
	}
	md.copies(opts.Copies)
	inPlace := md.inPlacePairs(opts.InPlace, opts.OverwriteInputs)
	fx := findEffects(md)
	n := len(m.Subgraphs)
	sol := &solver{md: md, fx: fx, b: b, inPlace: inPlace,
		order: make([][]graph.OpIndex, n), peak: make([]int64, n), bound: make([]int64, n)}
	for _, s := range md.post {
		sol.subgraph(s)
	}
	res := &Result{Order: sol.order, ModelPeak: md.peakOf(modelOrder(m), inPlace), Work: b.done, TimedOut: b.timedOut}
	res.Peak = md.settle(sol.order, inPlace)
	if res.Peak >= res.ModelPeak {
		res.Order, res.Peak = modelOrder(m), res.ModelPeak
	}
	for s := range m.Subgraphs {
		if md.entry[s] {
			res.LowerBound = max(res.LowerBound, sol.bound[s])
		}
	}
	// A search the clock stopped may have found an order at the bound,
	// but another run may find another: only a search that stopped on
	// its own terms proves its order.
	res.Proven = res.Peak <= res.LowerBound && !res.TimedOut
	return res, nil
}

// effortPerStep is how many units of effort (an operator's cost
// evaluated, a user of a buffer scanned, an operator of an order
// scanned) count as one step of Options.Work; clockEvery is how many
// units pass between readings of the clock.
const (
	effortPerStep = 1024
	clockEvery    = 4096
)

// budget is what the search may still spend: steps of Options.Work, each
// a state expanded, a window tried or effortPerStep units of effort, and
// the wall clock, read every clockEvery units. Counting the effort inside
// a step keeps a step's cost bounded whatever the model's shape (an
// operator that a thousand others may run beside costs a thousand times
// more to expand), so the work budget, not the clock, stops the search.
type budget struct {
	ctx      context.Context
	deadline time.Time
	limit    int64 // the steps allowed
	done     int64 // the steps taken
	effort   int64 // units not yet counted as a step
	clock    int64 // units since the clock was read
	timedOut bool
}

// stop counts a step and reports whether the search must stop.
func (b *budget) stop() bool { return b.spend(effortPerStep) }

// spend counts n units of effort and reports whether the search must stop:
// the work budget was spent before, or the clock has run out.
func (b *budget) spend(n int64) bool {
	if b.done >= b.limit || b.timedOut {
		return true
	}
	b.effort += n
	b.done += b.effort / effortPerStep
	b.effort %= effortPerStep
	if b.clock += n; b.clock >= clockEvery {
		b.clock = 0
		if b.ctx.Err() != nil || !time.Now().Before(b.deadline) {
			b.timedOut = true
		}
	}
	return b.timedOut
}

// out reports whether the search must stop, spending nothing.
func (b *budget) out() bool { return b.done >= b.limit || b.timedOut }

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
