package liveness

import (
	"fmt"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Step is a point on the model's timeline (see the package doc).
type Step int

// Class says what kind of memory a tensor needs.
type Class uint8

// Tensor classes. The zero Class is invalid.
const (
	Constant    Class = iota + 1 // data in the model's buffer; read-only
	Persistent                   // is_variable state kept between invocations
	Scratch                      // activations and model inputs/outputs
	Unallocated                  // needs no arena bytes
)

var classNames = [...]string{Constant: "constant", Persistent: "persistent", Scratch: "scratch", Unallocated: "unallocated"}

// String returns the class's lower-case name.
func (c Class) String() string {
	if c == 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Interval is an inclusive range of steps [First, Last].
type Interval struct {
	First, Last Step
}

// Overlaps reports whether two intervals share a step.
func (a Interval) Overlaps(b Interval) bool { return a.First <= b.Last && b.First <= a.Last }

// ByteRange is a half-open range of bytes [Lo, Hi), relative to a point
// its user names.
type ByteRange struct {
	Lo, Hi int64
}

// Size returns the range's length in bytes.
func (r ByteRange) Size() int64 { return r.Hi - r.Lo }

// Shift returns the range moved by d bytes.
func (r ByteRange) Shift(d int64) ByteRange { return ByteRange{r.Lo + d, r.Hi + d} }

// hullBytes returns the smallest range covering a and b.
func hullBytes(a, b ByteRange) ByteRange { return ByteRange{min(a.Lo, b.Lo), max(a.Hi, b.Hi)} }

// Tensor is the analysis of one tensor.
type Tensor struct {
	Ref   graph.TensorRef
	Class Class
	Size  int64 // bytes, before alignment
	// Live is the tensor's lifetime; meaningful for Scratch tensors and
	// for any tensor with Used set.
	Live Interval
	Used bool // some operator or subgraph boundary refers to the tensor
	// Note says why an Unallocated tensor takes no bytes.
	Note string
	// Dynamic is set when the tensor's shape signature has an unknown
	// dimension: it is planned with the concrete shape the model gives.
	Dynamic bool
	// AliasOf, when set, names the tensor whose buffer this one shares (the
	// root of its alias group): the output of RESHAPE, SQUEEZE, EXPAND_DIMS
	// or BITCAST reinterprets its input's bytes. The root's Group is the
	// union of its members' lifetimes.
	AliasOf *graph.TensorRef
	// AliasOffset is, for a member of an alias group, where its first byte
	// lies relative to the first byte of the group's root (negative: before
	// it). It is 0 for views and exact in-place writes, which take their
	// input's bytes exactly; an in-place write whose contract puts the
	// input elsewhere in the output (or the output elsewhere in the input)
	// gives another offset, a multiple of Options.Alignment.
	AliasOffset int64
	// Group is, for the root of an alias group, the union of its members'
	// lifetimes (Live of every member lies inside it); for other tensors it
	// equals Live.
	Group Interval
	// Extent is, for the root of an alias group, the bytes its members
	// cover, relative to the root's first byte: the group is one block of
	// Extent.Size() bytes, live over Group, and the root lies -Extent.Lo
	// bytes into it. For other tensors it is the tensor's own bytes,
	// [AliasOffset, AliasOffset+Size).
	Extent ByteRange
	// InPlace is set on an alias group member that takes its bytes by
	// being written over an input of its operator, under a kernel
	// contract, rather than by reinterpreting them (a view). The input and
	// every member that held its value are dead after that operator.
	InPlace *InPlace
	// OwnPlan is set on every member (the root too) of a group whose
	// offsets from one another are the model's own offline plan's, because
	// an operator's kernel addresses them relative to one another (see
	// OwnPlan). View and in-place groups never take such a tensor.
	OwnPlan *OwnPlan
	// Copy is set on an alias group member that shares bytes with
	// another operand of a copying kernel under an exact-overlap contract
	// (kernels.Slot, kernels.Block): a concatenation's input produced in
	// its slot of the output, or a slice's output lying over the block of
	// its input it copies. The kernel then copies those bytes onto
	// themselves (copies.go).
	Copy *Copy
}

// Copy says that a tensor lies over other bytes of its group that a
// copying kernel copies it from or to, exactly onto itself.
type Copy struct {
	Op graph.OpRef // the copying operator
	// With is the other operand: for Slot, the concatenation's output
	// the tensor (an input) lies in; for Block, the input the tensor (an
	// output) lies over.
	With graph.TensorRef
	// Contract is the exact-overlap contract, with the tensor's and
	// With's operand positions.
	Contract kernels.Contract
}

// InPlace says that an operator writes a tensor over one of its inputs.
type InPlace struct {
	Op       graph.OpRef     // the operator, which runs once
	Input    graph.TensorRef // the input written over
	Contract kernels.Contract
}

// Reasons an Unallocated tensor takes no bytes (Tensor.Note).
const (
	NoteUnused   = "unused"
	NoteEmpty    = "zero-size"
	NoteResource = "resource handle"
	NoteString   = "run-time string: size unknown ahead of time"
)

// Lifetimes is the result of Analyze. Tensors holds every tensor of the
// model, subgraph by subgraph in index order.
type Lifetimes struct {
	// Schedule is the order operators run in; every step number here
	// derives from it.
	Schedule Schedule
	Tensors  []Tensor
	// Variables are the model's resource variables, in order of first
	// appearance.
	Variables []Variable
	// Kernels names the kernel library whose contracts let tensors be
	// written in place ("" for none: Options.Kernels was nil), KernelsPath
	// its code path (kernels.Library.PathName; "" for none), and
	// OverwriteInputs repeats Options.OverwriteInputs.
	Kernels         string
	KernelsPath     string
	OverwriteInputs bool
	first           []int // index into Tensors of each subgraph's tensor 0
}

// Options controls Analyze. The zero value is the default.
type Options struct {
	// NoAlias keeps view operators' outputs in buffers of their own.
	NoAlias bool
	// Kernels, when set, is the kernel library whose in-place contracts
	// let an operator's output take the bytes of an input that dies there
	// (see inPlace); nil means none.
	Kernels *kernels.Library
	// ExactOverlap lets the exact-overlap copy contracts of Kernels
	// (kernels.Library.ExactOverlap) make a concatenation's inputs live
	// in their slots of its output and a slice's output a view of its
	// input's block: the kernel then copies bytes exactly onto themselves
	// (memcpy(p, p, n)). Off, no plan relies on such a copy.
	ExactOverlap bool
	// BlockCost chooses the in-place writes by the peak of alias groups
	// as blocks, each group's whole extent over its whole lifetime, as a
	// rectangle allocator (plan/dsa) places them, instead of by each
	// group's bytes live at each step. Groups then stay short and narrow:
	// on a model run stripe by stripe, a stripe's chain of in-place writes
	// drifts, and a stripe's output, which lives until the concatenation,
	// would keep the whole chain's extent reserved (see inPlace).
	BlockCost bool
	// OverwriteInputs lets an in-place output take the bytes of a model
	// input (an input of the main subgraph that is not also an output):
	// the application must then refill the inputs before every run.
	OverwriteInputs bool
	// Alignment is the byte alignment of every offset the plan will give
	// (plan.ScratchAlignment): an in-place output whose contract lets its
	// input lie elsewhere than exactly over it is placed a multiple of
	// Alignment bytes from that input, so that both stay aligned wherever
	// the group lies. 0 means DefaultAlignment.
	Alignment int64
	// Order, when set, is the order operators run in (see
	// Schedule.Order); nil means the order the model lists them in.
	// Analyze checks only that it lists every operator once; whether it
	// respects the model's data dependencies is for its maker, and
	// verify, to check.
	Order [][]graph.OpIndex
	// Ordering says how Order was chosen, for the record (Schedule.Ordering):
	// its Strategy is OrderModel without an Order and OrderGiven when
	// left empty with one.
	Ordering Ordering
}

// DefaultAlignment is the alignment Options.Alignment defaults to: plan's
// default alignment (plan.DefaultAlignment, TFLM's), which a test of plan
// keeps equal to it.
const DefaultAlignment = 16

// Lookup returns the analysis of a tensor, or nil for an unknown reference.
func (l *Lifetimes) Lookup(r graph.TensorRef) *Tensor {
	if r.Subgraph < 0 || int(r.Subgraph) >= len(l.first) {
		return nil
	}
	i := l.first[r.Subgraph] + int(r.Tensor)
	end := len(l.Tensors)
	if int(r.Subgraph)+1 < len(l.first) {
		end = l.first[r.Subgraph+1]
	}
	if r.Tensor < 0 || i >= end {
		return nil
	}
	return &l.Tensors[i]
}

// CheckLimits returns the error Analyze would for a model over MaxSteps,
// MaxUses or MaxDepth (naming the limit and the subgraph), and nil for one
// within them: for a caller that does other work on the model before
// Analyze (an order search) and wants Analyze's checks and messages first.
func CheckLimits(m *graph.Model) error {
	if len(m.Subgraphs) == 0 {
		return fmt.Errorf("liveness: model has no subgraphs")
	}
	return checkWork(m, calledSubgraphs(m))
}

// calledSubgraphs marks the subgraphs some operator calls.
func calledSubgraphs(m *graph.Model) []bool {
	called := make([]bool, len(m.Subgraphs))
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				called[c] = true
			}
		}
	}
	return called
}

// Analyze computes the schedule of m, then the lifetime and class of every
// tensor on that schedule's timeline. It first checks, in time linear in
// the model's size, that running the model stays within MaxSteps, MaxUses
// and MaxDepth, and returns an error naming the limit and the subgraph
// otherwise.
func Analyze(m *graph.Model, opts Options) (*Lifetimes, error) {
	if len(m.Subgraphs) == 0 {
		return nil, fmt.Errorf("liveness: model has no subgraphs")
	}
	switch {
	case opts.Alignment < 0:
		return nil, fmt.Errorf("liveness: alignment %d is negative", opts.Alignment)
	case opts.Alignment == 0:
		opts.Alignment = DefaultAlignment
	}
	called := calledSubgraphs(m)
	if err := checkWork(m, called); err != nil {
		return nil, err
	}
	order, ordering := opts.Order, opts.Ordering
	switch {
	case order == nil:
		order, ordering = ModelOrder(m), Ordering{Strategy: OrderModel}
	case ordering.Strategy == "":
		ordering.Strategy = OrderGiven
	}
	switch ordering.Strategy {
	case OrderModel, OrderMemory, OrderGiven:
	default:
		return nil, fmt.Errorf("liveness: unknown ordering strategy %q (known: %s, %s, %s)", ordering.Strategy, OrderModel, OrderMemory, OrderGiven)
	}
	if ordering.Proven && ordering.Strategy != OrderMemory {
		return nil, fmt.Errorf("liveness: only a %s order can be proven optimal, not a %s one", OrderMemory, ordering.Strategy)
	}
	if opts.Order != nil {
		if err := checkOrder(m, order); err != nil {
			return nil, err
		}
	}
	ops := 0
	for _, sg := range m.Subgraphs {
		ops += len(sg.Ops)
	}
	a := &analyzer{m: m, lt: &Lifetimes{Schedule: Schedule{Order: order, Ordering: ordering, spans: make([][]Interval, len(m.Subgraphs)),
		Runs: make([]Run, 0, ops)}}}
	for si, sg := range m.Subgraphs {
		a.lt.first = append(a.lt.first, len(a.lt.Tensors))
		a.lt.Schedule.spans[si] = make([]Interval, len(sg.Ops))
		for ti := range sg.Tensors {
			a.lt.Tensors = append(a.lt.Tensors, Tensor{
				Ref:  graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: graph.TensorID(ti)},
				Live: Interval{First: -1, Last: -1},
			})
		}
	}
	a.schedule(0)
	for si := 1; si < len(m.Subgraphs); si++ {
		if !called[si] {
			a.schedule(graph.SubgraphIndex(si))
		}
	}
	a.lt.Schedule.Steps = int(a.next)
	a.classify()
	vars, err := findVariables(m)
	if err != nil {
		return nil, err
	}
	a.lt.Variables = vars
	for i := range a.lt.Tensors {
		t := &a.lt.Tensors[i]
		t.Group, t.Extent = t.Live, ByteRange{0, t.Size}
	}
	a.ownPlan()
	var copies *kernels.Library
	if opts.ExactOverlap && !opts.NoAlias {
		copies = opts.Kernels
	}
	if !opts.NoAlias {
		a.alias(copies, opts.Alignment)
	}
	if opts.Kernels != nil {
		a.lt.Kernels, a.lt.KernelsPath, a.lt.OverwriteInputs = opts.Kernels.Name, opts.Kernels.PathName(), opts.OverwriteInputs
		a.blockCost = opts.BlockCost
		a.inPlace(opts.Kernels, opts.OverwriteInputs, opts.Alignment)
	}
	if copies != nil {
		a.slots(copies, opts.Alignment)
	}
	return a.lt, nil
}

type analyzer struct {
	m    *graph.Model
	lt   *Lifetimes
	next Step
	// members lists, by root, the indexes in lt.Tensors of each alias
	// group's members (indexMembers, join).
	members map[graph.TensorRef][]int
	// blockCost is Options.BlockCost.
	blockCost bool
}

// schedule places subgraph s on the timeline starting at a.next, running
// its operators in the schedule's order. checkWork has bounded the steps
// and the nesting of calls.
func (a *analyzer) schedule(s graph.SubgraphIndex) {
	sg := &a.m.Subgraphs[s]
	sc := &a.lt.Schedule
	inputStep := a.next
	a.next++
	for _, t := range sg.Inputs {
		a.write(s, t, inputStep)
	}
	for _, oi := range sc.Order[s] {
		op := &sg.Ops[oi]
		begin := a.next
		a.next++
		run := len(sc.Runs)
		sc.Runs = append(sc.Runs, Run{Op: graph.OpRef{Subgraph: s, Op: oi}})
		for _, c := range op.Called {
			a.schedule(c)
		}
		span := Interval{begin, a.next - 1}
		sc.Runs[run].Span = span
		if prev := sc.spans[s][oi]; prev != (Interval{}) {
			span = hull(prev, span)
		}
		sc.spans[s][oi] = span
		for _, t := range op.Inputs {
			if t != graph.NoTensor {
				a.read(s, t, begin, a.next-1)
			}
		}
		for _, t := range op.Outputs {
			a.write(s, t, begin)
			a.read(s, t, begin, a.next-1)
		}
		for _, t := range op.Intermediates {
			a.write(s, t, begin)
			a.read(s, t, begin, a.next-1)
		}
	}
	last := a.next - 1
	for _, t := range sg.Outputs {
		a.read(s, t, last, last)
	}
}

func hull(a, b Interval) Interval {
	return Interval{min(a.First, b.First), max(a.Last, b.Last)}
}

// write records that tensor t of subgraph s is written at step.
// A subgraph scheduled more than once (called by several operators, or
// nested in one that is) writes its tensors again at each call, so the
// lifetime grows to cover every write.
func (a *analyzer) write(s graph.SubgraphIndex, t graph.TensorID, step Step) {
	lt := a.lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: t})
	if !lt.Used {
		lt.Live = Interval{step, step}
		lt.Used = true
		return
	}
	lt.Live = hull(lt.Live, Interval{step, step})
}

// read records that tensor t of subgraph s is used over [first, last]. A
// tensor read before any write (a constant, or a value read but never
// produced) becomes live at the first read.
func (a *analyzer) read(s graph.SubgraphIndex, t graph.TensorID, first, last Step) {
	lt := a.lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: t})
	if !lt.Used {
		lt.Live = Interval{first, last}
		lt.Used = true
		return
	}
	lt.Live = hull(lt.Live, Interval{lt.Live.First, last})
}

// classify sets Class, Size, Note and Dynamic of every tensor.
func (a *analyzer) classify() {
	for i := range a.lt.Tensors {
		lt := &a.lt.Tensors[i]
		t := a.m.Tensor(lt.Ref.Subgraph, lt.Ref.Tensor)
		lt.Size = t.Size
		lt.Dynamic = t.IsDynamic()
		hasData := a.m.HasData(t)
		switch {
		case !lt.Used:
			lt.Class, lt.Note = Unallocated, NoteUnused
		case t.Type == graph.Resource:
			lt.Class, lt.Note = Unallocated, NoteResource
		case t.Type == graph.String && !hasData:
			lt.Class, lt.Note = Unallocated, NoteString
		case t.Size == 0 && !hasData:
			lt.Class, lt.Note = Unallocated, NoteEmpty
		case t.IsVariable:
			// State, even when the model gives it initial data: TFLM keeps
			// variables in its persistent area and resets them to zero.
			lt.Class = Persistent
		case hasData:
			lt.Class = Constant
			lt.Size = int64(len(a.m.Buffers[t.Buffer].Data))
		default:
			lt.Class = Scratch
		}
	}
}
