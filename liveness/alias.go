package liveness

import "github.com/heliac/heliac/graph"

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
