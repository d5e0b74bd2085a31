package liveness

import (
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// viewOps are the operators whose output is their first input's bytes
// reinterpreted, so output and input can share one buffer.
var viewOps = map[graph.Opcode]bool{
	graph.Reshape:    true,
	graph.Squeeze:    true,
	graph.ExpandDims: true,
	graph.Bitcast:    true,
}

// alias joins the output of each view operator to its input's buffer when
// that is safe:
//
//   - both are scratch tensors of the same byte size;
//   - neither is an input or output of any subgraph: the caller owns model
//     inputs and outputs, and control-flow kernels copy subgraph inputs and
//     outputs, so those keep buffers of their own;
//   - the output has no other writer.
//
// Members of a group share the root's buffer; the root's Group becomes the
// union of the members' lifetimes.
func (a *analyzer) alias() {
	boundary := map[graph.TensorRef]bool{}
	writers := map[graph.TensorRef]int{}
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, t := range sg.Inputs {
			boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
		}
		for _, t := range sg.Outputs {
			boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
		}
		for _, op := range sg.Ops {
			for _, t := range op.Outputs {
				writers[graph.TensorRef{Subgraph: s, Tensor: t}]++
			}
		}
	}
	root := func(r graph.TensorRef) graph.TensorRef {
		for {
			t := a.lt.Lookup(r)
			if t.AliasOf == nil {
				return r
			}
			r = *t.AliasOf
		}
	}
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, op := range sg.Ops {
			if !viewOps[op.Code] || len(op.Inputs) == 0 || len(op.Outputs) != 1 || op.Inputs[0] == graph.NoTensor {
				continue
			}
			in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[0]}
			ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
			if in == out || ti.Class != Scratch || to.Class != Scratch || ti.Size != to.Size ||
				boundary[in] || boundary[out] || writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			r := root(in)
			if r == out {
				continue
			}
			rt := a.lt.Lookup(r)
			rt.Group = hull(rt.Group, to.Group)
			to.AliasOf = &r
			// out may already be the root of members of its own.
			for i := range a.lt.Tensors {
				if m := &a.lt.Tensors[i]; m.AliasOf != nil && *m.AliasOf == out {
					m.AliasOf = &r
				}
			}
			to.Group = to.Live
		}
	}
}

// inPlace joins an operator's output to the alias group of an input it
// may be written over under a contract of lib, when that is safe:
//
//   - both are scratch tensors of the same size (the contract checks
//     shape and element size);
//   - neither is an input or output of any subgraph, except that with
//     overwrite a main-subgraph input that is not also an output may be
//     written over;
//   - the output has no other writer and is in no group yet (it may be the
//     root of views of its own, which follow it);
//   - the operator runs once and calls no subgraph;
//   - every member of the input's group is dead after the operator: its
//     group's lifetime ends at the operator's step.
//
// Operators are taken in the order they run, so a chain of in-place
// operators forms one group. The first contract that applies to an
// output wins.
func (a *analyzer) inPlace(lib *kernels.Library, overwrite bool) {
	boundary := map[graph.TensorRef]bool{}
	writers := map[graph.TensorRef]int{}
	mainInput := map[graph.TensorRef]bool{}
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, t := range sg.Inputs {
			boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			if si == 0 {
				mainInput[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			}
		}
		for _, t := range sg.Outputs {
			boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			delete(mainInput, graph.TensorRef{Subgraph: s, Tensor: t})
		}
		for _, op := range sg.Ops {
			for _, t := range op.Outputs {
				writers[graph.TensorRef{Subgraph: s, Tensor: t}]++
			}
		}
	}
	runs := map[graph.OpRef]int{}
	for _, r := range a.lt.Schedule.Runs {
		runs[r.Op]++
	}
	root := func(r graph.TensorRef) graph.TensorRef {
		for {
			t := a.lt.Lookup(r)
			if t.AliasOf == nil {
				return r
			}
			r = *t.AliasOf
		}
	}
	for _, run := range a.lt.Schedule.Runs {
		sg := &a.m.Subgraphs[run.Op.Subgraph]
		op := &sg.Ops[run.Op.Op]
		if runs[run.Op] != 1 || len(op.Called) > 0 || run.Span.First != run.Span.Last {
			continue
		}
		step := run.Span.First
		taken := map[int]bool{}
		for _, c := range lib.InPlace(sg, op) {
			if taken[c.Output] {
				continue
			}
			s := run.Op.Subgraph
			in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[c.Input]}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[c.Output]}
			ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
			if ti.Class != Scratch || to.Class != Scratch || ti.Size != to.Size ||
				(boundary[in] && !(overwrite && mainInput[in])) || boundary[out] ||
				writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			r := root(in)
			rt := a.lt.Lookup(r)
			if r == out || rt.Group.Last > step || to.Live.First != step {
				continue
			}
			rt.Group = hull(rt.Group, to.Group)
			to.AliasOf = &r
			to.InPlace = &InPlace{Op: run.Op, Input: in, Contract: c}
			for i := range a.lt.Tensors {
				if m := &a.lt.Tensors[i]; m.AliasOf != nil && *m.AliasOf == out {
					m.AliasOf = &r
				}
			}
			to.Group = to.Live
			taken[c.Output] = true
		}
	}
}
