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
	f := a.boundaryFacts()
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
				f.boundary[in] || f.boundary[out] || f.writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			r := a.root(in)
			if r == out {
				continue
			}
			a.join(out, r, ti.AliasOffset)
		}
	}
}

// boundaryFacts is what the alias passes need to know of the model's
// tensors: which are a subgraph's inputs or outputs, which are inputs of
// the main subgraph and not its outputs, and how many operators write
// each.
type boundaryFacts struct {
	boundary, mainInput map[graph.TensorRef]bool
	writers             map[graph.TensorRef]int
}

func (a *analyzer) boundaryFacts() boundaryFacts {
	f := boundaryFacts{boundary: map[graph.TensorRef]bool{}, mainInput: map[graph.TensorRef]bool{}, writers: map[graph.TensorRef]int{}}
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, t := range sg.Inputs {
			f.boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			if si == 0 {
				f.mainInput[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			}
		}
		for _, t := range sg.Outputs {
			f.boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			delete(f.mainInput, graph.TensorRef{Subgraph: s, Tensor: t})
		}
		for _, op := range sg.Ops {
			for _, t := range op.Outputs {
				f.writers[graph.TensorRef{Subgraph: s, Tensor: t}]++
			}
		}
	}
	return f
}

// root returns the root of r's alias group (r itself when it has none).
func (a *analyzer) root(r graph.TensorRef) graph.TensorRef {
	for {
		t := a.lt.Lookup(r)
		if t.AliasOf == nil {
			return r
		}
		r = *t.AliasOf
	}
}

// join makes out, a tensor in no group (but perhaps the root of members
// of its own, which follow it), a member of root r's group, its first
// byte off bytes from r's. The group's lifetime and extent grow to cover
// out and its members.
func (a *analyzer) join(out, r graph.TensorRef, off int64) {
	to, rt := a.lt.Lookup(out), a.lt.Lookup(r)
	rt.Group = hull(rt.Group, to.Group)
	rt.Extent = hullBytes(rt.Extent, to.Extent.Shift(off))
	to.AliasOf, to.AliasOffset = &r, off
	for i := range a.lt.Tensors {
		if m := &a.lt.Tensors[i]; m.AliasOf != nil && *m.AliasOf == out {
			m.AliasOf = &r
			m.AliasOffset += off
		}
	}
	to.Group, to.Extent = to.Live, ByteRange{off, off + to.Size}
}

// inPlace joins an operator's output to the alias group of an input it
// may be written over under a contract of lib, when that is safe:
//
//   - both are scratch tensors, and the contract applies (for Exact, the
//     same shape and element size);
//   - the contract lets the input lie at a multiple of align bytes from
//     the output (the largest such offset is taken: PAD's input as far
//     toward the end of its output as it may go);
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
func (a *analyzer) inPlace(lib *kernels.Library, overwrite bool, align int64) {
	f := a.boundaryFacts()
	runs := map[graph.OpRef]int{}
	for _, r := range a.lt.Schedule.Runs {
		runs[r.Op]++
	}
	for _, run := range a.lt.Schedule.Runs {
		s := run.Op.Subgraph
		op := &a.m.Subgraphs[s].Ops[run.Op.Op]
		if runs[run.Op] != 1 || len(op.Called) > 0 || run.Span.First != run.Span.Last {
			continue
		}
		step := run.Span.First
		taken := map[int]bool{}
		for _, p := range lib.InPlace(a.m, s, op) {
			if taken[p.Output] {
				continue
			}
			in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[p.Input]}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[p.Output]}
			ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
			d, ok := placeInput(p, align)
			if !ok || ti.Class != Scratch || to.Class != Scratch ||
				(f.boundary[in] && !(overwrite && f.mainInput[in])) || f.boundary[out] ||
				f.writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			r := a.root(in)
			if r == out || a.lt.Lookup(r).Group.Last > step || to.Live.First != step {
				continue
			}
			// The input starts d bytes after the output does.
			a.join(out, r, ti.AliasOffset-d)
			to.InPlace = &InPlace{Op: run.Op, Input: in, Contract: p.Contract}
			taken[p.Output] = true
		}
	}
}

// placeInput returns where p's input is to start relative to its output's
// start: the largest multiple of align (positive) that p allows, and
// whether p allows one.
func placeInput(p kernels.Placement, align int64) (int64, bool) {
	d := p.Hi / align * align
	if d > p.Hi { // Hi negative, not a multiple: division rounded up
		d -= align
	}
	return d, p.Allows(d)
}
