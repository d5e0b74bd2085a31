package liveness

import (
	"fmt"

	"github.com/heliac/heliac/graph"
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

// Tensor is the analysis of one tensor.
type Tensor struct {
	Ref   graph.TensorRef
	Class Class
	Size  int64 // bytes, before alignment
	// Live is the tensor's lifetime; meaningful for Scratch tensors and
	// for any tensor with Used set.
	Live Interval
	Used bool // some operator or subgraph boundary refers to the tensor
}

// Lifetimes is the result of Analyze. Tensors holds every tensor of the
// model, subgraph by subgraph in index order.
type Lifetimes struct {
	Steps   int // number of steps on the timeline
	Tensors []Tensor
	// OpSteps[s][i] is the span of operator i of subgraph s, covering the
	// subgraphs it calls; zero when the subgraph was never scheduled.
	OpSteps [][]Interval
	first   []int // index into Tensors of each subgraph's tensor 0
}

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

// Analyze computes the lifetime and class of every tensor of m.
func Analyze(m *graph.Model) (*Lifetimes, error) {
	a := &analyzer{m: m, lt: &Lifetimes{OpSteps: make([][]Interval, len(m.Subgraphs))}}
	for si, sg := range m.Subgraphs {
		a.lt.first = append(a.lt.first, len(a.lt.Tensors))
		a.lt.OpSteps[si] = make([]Interval, len(sg.Ops))
		for ti := range sg.Tensors {
			a.lt.Tensors = append(a.lt.Tensors, Tensor{
				Ref:  graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: graph.TensorID(ti)},
				Live: Interval{First: -1, Last: -1},
			})
		}
	}
	if len(m.Subgraphs) == 0 {
		return nil, fmt.Errorf("liveness: model has no subgraphs")
	}
	called := make([]bool, len(m.Subgraphs))
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				called[c] = true
			}
		}
	}
	if err := a.schedule(0, 0); err != nil {
		return nil, err
	}
	for si := 1; si < len(m.Subgraphs); si++ {
		if !called[si] {
			if err := a.schedule(graph.SubgraphIndex(si), 0); err != nil {
				return nil, err
			}
		}
	}
	a.lt.Steps = int(a.next)
	a.classify()
	return a.lt, nil
}

type analyzer struct {
	m    *graph.Model
	lt   *Lifetimes
	next Step
}

// maxDepth bounds call nesting; the loader rejects cycles, so this only
// guards against pathological but acyclic call chains.
const maxDepth = 64

// schedule places subgraph s on the timeline starting at a.next.
func (a *analyzer) schedule(s graph.SubgraphIndex, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("liveness: subgraphs nested deeper than %d calls at subgraph %d", maxDepth, s)
	}
	sg := &a.m.Subgraphs[s]
	inputStep := a.next
	a.next++
	for _, t := range sg.Inputs {
		a.write(s, t, inputStep)
	}
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		begin := a.next
		a.next++
		for _, c := range op.Called {
			if err := a.schedule(c, depth+1); err != nil {
				return err
			}
		}
		end := a.next - 1
		span := a.lt.OpSteps[s][oi]
		if span == (Interval{}) {
			a.lt.OpSteps[s][oi] = Interval{begin, end}
		} else {
			a.lt.OpSteps[s][oi] = hull(span, Interval{begin, end})
		}
		for _, t := range op.Inputs {
			if t != graph.NoTensor {
				a.read(s, t, begin, end)
			}
		}
		for _, t := range op.Outputs {
			a.write(s, t, begin)
			a.read(s, t, begin, end)
		}
		for _, t := range op.Intermediates {
			a.write(s, t, begin)
			a.read(s, t, begin, end)
		}
	}
	last := a.next - 1
	for _, t := range sg.Outputs {
		a.read(s, t, inputStep, last)
	}
	return nil
}

func hull(a, b Interval) Interval {
	return Interval{min(a.First, b.First), max(a.Last, b.Last)}
}

// write records that tensor t of subgraph s is written at step.
func (a *analyzer) write(s graph.SubgraphIndex, t graph.TensorID, step Step) {
	lt := a.lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: t})
	if !lt.Used || step < lt.Live.First {
		if !lt.Used {
			lt.Live.Last = step
		}
		lt.Live.First = step
	}
	lt.Used = true
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

// classify sets Class and Size of every tensor.
func (a *analyzer) classify() {
	for i := range a.lt.Tensors {
		lt := &a.lt.Tensors[i]
		t := a.m.Tensor(lt.Ref.Subgraph, lt.Ref.Tensor)
		lt.Size = t.Size
		switch {
		case !lt.Used || (t.Size == 0 && !a.m.HasData(t)) || t.Type == graph.Resource:
			lt.Class = Unallocated
		case t.IsVariable:
			// State, even when the model gives it initial data: TFLM keeps
			// variables in its persistent area and resets them to zero.
			lt.Class = Persistent
		case a.m.HasData(t):
			lt.Class = Constant
			lt.Size = int64(len(a.m.Buffers[t.Buffer].Data))
		default:
			lt.Class = Scratch
		}
	}
}
