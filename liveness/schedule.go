package liveness

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Schedule is the order a model's operators run in and the steps that order
// gives them. Analyze builds it first and derives every step number of the
// Lifetimes from it, so a pass that reorders operators changes the order and
// nothing else.
//
// Order is the input: for each subgraph, its operators in the order they run.
// Runs and Steps follow from it by the timeline rules of the package doc.
type Schedule struct {
	// Order[s] lists the operators of subgraph s in the order they run,
	// each exactly once. ModelOrder gives the order the model lists them in.
	Order [][]graph.OpIndex
	// Runs lists every run of an operator in step order. An operator of a
	// subgraph that is called twice (by two operators, or from inside a
	// subgraph that is) runs twice.
	Runs []Run
	// Steps is the number of steps on the timeline.
	Steps int
	// Ordering says how Order was chosen (Options.Ordering, completed).
	Ordering Ordering
	// spans[s][i] is the hull of the spans of operator i of subgraph s.
	spans [][]Interval
}

// Moved counts the operators Order runs at another position than the model
// lists them in (0: the model's own order).
func (sc *Schedule) Moved() int {
	moved := 0
	for _, ops := range sc.Order {
		for i, oi := range ops {
			if int(oi) != i {
				moved++
			}
		}
	}
	return moved
}

// Ordering records how a schedule's operator order was chosen.
type Ordering struct {
	// Strategy is OrderModel for the model's own order, OrderMemory for an
	// order chosen to lower the peak of live scratch bytes, OrderGiven for
	// an order the caller gave without saying how it was chosen.
	Strategy string
	// Proven says the order is proven to have the lowest peak of any legal
	// order, as its maker counts it (OrderMemory only).
	Proven bool
	// TimedOut says the search stopped on its wall-clock safety net rather
	// than its work budget (OrderMemory only, as on a heavily loaded
	// machine): another run may choose another order.
	TimedOut bool
}

// The strategies an Ordering names.
const (
	OrderModel  = "model"
	OrderMemory = "memory"
	OrderGiven  = "given"
)

// Run is one run of an operator.
type Run struct {
	Op graph.OpRef
	// Span runs from the operator's own step to the last step of the
	// subgraphs it calls (its own step alone when it calls none).
	Span Interval
}

// ModelOrder returns, for each subgraph of m, its operators in the order the
// model lists them: the order TFLite runs them in.
func ModelOrder(m *graph.Model) [][]graph.OpIndex {
	order := make([][]graph.OpIndex, len(m.Subgraphs))
	for si, sg := range m.Subgraphs {
		order[si] = make([]graph.OpIndex, len(sg.Ops))
		for i := range sg.Ops {
			order[si][i] = graph.OpIndex(i)
		}
	}
	return order
}

// Span returns the steps operator op runs over: the hull of its runs when it
// runs more than once, and the zero Interval when it never runs (its
// subgraph is never scheduled) or does not exist.
func (s *Schedule) Span(op graph.OpRef) Interval {
	if op.Subgraph < 0 || int(op.Subgraph) >= len(s.spans) {
		return Interval{}
	}
	spans := s.spans[op.Subgraph]
	if op.Op < 0 || int(op.Op) >= len(spans) {
		return Interval{}
	}
	return spans[op.Op]
}

// checkOrder reports why order is not a schedule of m: it must list, for
// every subgraph, each of its operators exactly once.
func checkOrder(m *graph.Model, order [][]graph.OpIndex) error {
	if len(order) != len(m.Subgraphs) {
		return fmt.Errorf("liveness: the order lists %d subgraphs, the model has %d", len(order), len(m.Subgraphs))
	}
	for si, ops := range order {
		n := len(m.Subgraphs[si].Ops)
		if len(ops) != n {
			return fmt.Errorf("liveness: the order of subgraph %d lists %d operators, the subgraph has %d", si, len(ops), n)
		}
		seen := make([]bool, n)
		for _, oi := range ops {
			switch {
			case oi < 0 || int(oi) >= n:
				return fmt.Errorf("liveness: the order of subgraph %d lists operator %d, which does not exist", si, oi)
			case seen[oi]:
				return fmt.Errorf("liveness: the order of subgraph %d lists operator %d twice", si, oi)
			}
			seen[oi] = true
		}
	}
	return nil
}
