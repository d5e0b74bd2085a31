package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// use is one place on the timeline where a tensor must be live: over the
// inclusive steps [first, last].
type use struct {
	ref         graph.TensorRef
	first, last int64
	where       string // "op 0:1 (ADD)", "input of subgraph 1", ...
}

// timeline is the model's schedule as the verifier computes it.
type timeline struct {
	steps int64 // number of steps
	uses  []use // in schedule order
}

// maxSteps bounds the timeline, so that a model whose subgraphs call each
// other many times over cannot exhaust memory.
const maxSteps = 1 << 24

// walk schedules the model (docs/plan-format.md): step 0 holds the main
// subgraph's inputs and each operator takes the next step. An operator that
// calls subgraphs schedules each callee inside itself, again on every call:
// the callee's inputs take one step, then each of its operators one step.
// The operator's span runs from its own step to the last step of its
// callees, and its inputs, outputs and intermediates are used over the whole
// span. A subgraph's inputs are used at its input step and its outputs at
// its last step. Subgraphs no operator calls follow the main one, each on
// its own, in index order.
//
// The error describes a model the loader should have rejected: a call
// cycle, an index out of range, or an absurdly long timeline.
func walk(m *graph.Model) (*timeline, error) {
	if len(m.Subgraphs) == 0 {
		return nil, fmt.Errorf("model has no subgraphs")
	}
	w := &walker{m: m, tl: &timeline{}}
	called := make([]bool, len(m.Subgraphs))
	for si := range m.Subgraphs {
		for oi, op := range m.Subgraphs[si].Ops {
			for _, c := range op.Called {
				if c < 0 || int(c) >= len(m.Subgraphs) {
					return nil, fmt.Errorf("model: op %d:%d (%s) calls subgraph %d, which does not exist", si, oi, op.Name(), c)
				}
				called[c] = true
			}
		}
	}
	if err := w.subgraph(0, 0); err != nil {
		return nil, err
	}
	for si := 1; si < len(m.Subgraphs); si++ {
		if !called[si] {
			if err := w.subgraph(graph.SubgraphIndex(si), 0); err != nil {
				return nil, err
			}
		}
	}
	w.tl.steps = w.next
	return w.tl, nil
}

type walker struct {
	m    *graph.Model
	tl   *timeline
	next int64 // the next free step
}

func (w *walker) subgraph(s graph.SubgraphIndex, depth int) error {
	if depth >= len(w.m.Subgraphs) {
		return fmt.Errorf("model: subgraph %d is nested %d calls deep, so the calls form a cycle", s, depth)
	}
	if w.next > maxSteps {
		return fmt.Errorf("model: timeline is longer than %d steps", maxSteps)
	}
	sg := &w.m.Subgraphs[s]
	in := w.next
	w.next++
	for _, t := range sg.Inputs {
		if err := w.use(s, t, in, in, fmt.Sprintf("input of subgraph %d", s)); err != nil {
			return err
		}
	}
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		begin := w.next
		w.next++
		for _, c := range op.Called {
			if err := w.subgraph(c, depth+1); err != nil {
				return err
			}
		}
		end := w.next - 1
		where := fmt.Sprintf("op %d:%d (%s)", s, oi, op.Name())
		for _, list := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
			for _, t := range list {
				if err := w.use(s, t, begin, end, where); err != nil {
					return err
				}
			}
		}
	}
	last := w.next - 1
	for _, t := range sg.Outputs {
		if err := w.use(s, t, last, last, fmt.Sprintf("output of subgraph %d", s)); err != nil {
			return err
		}
	}
	return nil
}

// use records that tensor t of subgraph s is used over [first, last].
// Omitted optional tensors are skipped.
func (w *walker) use(s graph.SubgraphIndex, t graph.TensorID, first, last int64, where string) error {
	if t == graph.NoTensor {
		return nil
	}
	if t < 0 || int(t) >= len(w.m.Subgraphs[s].Tensors) {
		return fmt.Errorf("model: %s refers to tensor %d:%d, which does not exist", where, s, t)
	}
	w.tl.uses = append(w.tl.uses, use{ref: graph.TensorRef{Subgraph: s, Tensor: t}, first: first, last: last, where: where})
	return nil
}
