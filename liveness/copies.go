package liveness

import (
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Exact-overlap copies (Options.ExactOverlap; the contracts and why an
// exact overlap is allowed: kernels/copy.go). A copying kernel whose
// source and destination are the same bytes writes every byte with the
// value it already holds, so its write is no clobber under the sharing
// rule (alias.go): it changes no member's value. Every other writer is
// kept off the group's members while they live, as for views:
//
//   - a slice's output (Block) joins its input's group over the block it
//     copies, by the view rule: every writer of the group's root comes
//     before the slice in the model's order, the output has no other
//     writer (blockViews);
//   - a concatenation's inputs (Slot) join its output's group in their
//     slots, after the in-place pass (slots): each input's own group (the
//     views and in-place writes ending in it, and slices of it) fits in
//     its slot and is written only before the concatenation, and every
//     member of it is dead before any in-place write into the output's
//     group. An input read after the concatenation keeps its value: the
//     concatenation wrote the same bytes onto it.

// blockViews joins the outputs of operator oi of subgraph s that are
// contiguous blocks of its input to the input's group (see alias and
// the top of this file). lastWrite is the last operator writing each
// tensor of s, in model order.
func (a *analyzer) blockViews(lib *kernels.Library, f boundaryFacts, lastWrite map[graph.TensorID]int, s graph.SubgraphIndex, oi int, align int64) {
	op := &a.m.Subgraphs[s].Ops[oi]
	for _, p := range lib.ExactOverlap(a.m, s, op) {
		if p.Overlap != kernels.Block {
			continue
		}
		in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[p.Input]}
		out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[p.Output]}
		ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
		off := ti.AliasOffset - p.Lo // the output's first byte, from the root's
		if in == out || ti.Class != Scratch || to.Class != Scratch || ti.OwnPlan != nil || to.OwnPlan != nil ||
			f.boundary[in] || f.boundary[out] || f.writers[out] != 1 || to.AliasOf != nil || off%align != 0 {
			continue
		}
		r := a.root(in)
		if w, ok := lastWrite[r.Tensor]; r == out || (ok && w > oi) {
			continue
		}
		a.join(out, r, off)
		c := p.Contract
		to.Copy = &Copy{Op: graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}, With: in, Contract: c}
	}
}

// slots puts the inputs of each concatenation with Slot contracts in
// their slots of its output, where the rule at the top of this file
// allows: the output becomes the root of a group holding each input's
// group at the input's slot.
func (a *analyzer) slots(lib *kernels.Library, align int64) {
	f := a.boundaryFacts()
	a.indexMembers()
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
		ps := lib.ExactOverlap(a.m, s, op)
		if len(ps) == 0 || ps[0].Overlap != kernels.Slot {
			continue
		}
		step := run.Span.First
		y := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[0]}
		ty := a.lt.Lookup(y)
		if ty.Class != Scratch || ty.OwnPlan != nil || f.boundary[y] || f.writers[y] != 1 || ty.AliasOf != nil || ty.Live.First != step {
			continue
		}
		for _, p := range ps {
			x := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[p.Input]}
			tx := a.lt.Lookup(x)
			r := a.root(x)
			if r == y || tx.Class != Scratch || tx.Size != a.m.Tensor(s, x.Tensor).Size {
				continue
			}
			// The input's group, from its root: where the root goes in
			// the output's group, and whether the group may move there.
			off := p.Lo - tx.AliasOffset
			rt := a.lt.Lookup(r)
			if off%align != 0 || rt.Extent.Lo < tx.AliasOffset || rt.Extent.Hi > tx.AliasOffset+tx.Size ||
				!a.slotMovable(f, r, step) || rt.Group.Last >= a.firstInPlaceWrite(y) {
				continue
			}
			a.join(r, y, off)
			c := p.Contract
			tx.Copy = &Copy{Op: run.Op, With: y, Contract: c}
		}
	}
}

// slotMovable reports whether the group rooted at r may move into a
// concatenation's output written at step: every member is a scratch
// tensor of no subgraph's boundary and of no own plan, written by at most
// one operator, and the root and every member written in place get their
// values before step (views and slices write nothing new).
func (a *analyzer) slotMovable(f boundaryFacts, r graph.TensorRef, step Step) bool {
	ms := append([]*Tensor{a.lt.Lookup(r)}, nil...)
	for _, i := range a.members[r] {
		ms = append(ms, &a.lt.Tensors[i])
	}
	for k, t := range ms {
		if t.Class != Scratch || t.OwnPlan != nil || f.boundary[t.Ref] || f.writers[t.Ref] > 1 {
			return false
		}
		if (k == 0 || t.InPlace != nil) && (f.writers[t.Ref] != 1 || t.Live.First >= step) {
			return false
		}
	}
	return true
}

// firstInPlaceWrite returns the first step at which a member of the group
// rooted at y is written in place (over y or a member), or a step past
// the timeline when none is.
func (a *analyzer) firstInPlaceWrite(y graph.TensorRef) Step {
	first := Step(a.lt.Schedule.Steps + 1)
	for _, i := range a.members[y] {
		if t := &a.lt.Tensors[i]; t.InPlace != nil {
			first = min(first, t.Live.First)
		}
	}
	return first
}
