package verify

import (
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// inPlaceIndex is what the in-place checks need of the timeline, built
// once per run: how often each operator runs, and the hull of the steps
// each tensor is used at.
type inPlaceIndex struct {
	runs map[graph.OpRef]int
	used map[graph.TensorRef]span
}

func (c *checker) inPlaceIndex() *inPlaceIndex {
	ix := &inPlaceIndex{runs: map[graph.OpRef]int{}, used: map[graph.TensorRef]span{}}
	for _, r := range c.doc.schedule {
		ix.runs[r.op]++
	}
	for _, u := range c.tl.uses {
		s, ok := ix.used[u.ref]
		if !ok {
			ix.used[u.ref] = span{u.first, u.last}
			continue
		}
		ix.used[u.ref] = span{min(s.first, u.first), max(s.last, u.last)}
	}
	return ix
}

// checkInPlace checks a tensor that its in_place entry says an operator
// writes over one of its inputs (docs/plan-format.md, in_place):
//
//   - the plan names a known kernel library, whose contract, spelled as
//     the entry spells it, lets that operator write the tensor, at its
//     output position, over the input, at its input position (the
//     contract's own conditions, such as the same shape, hold);
//   - the input is a member of the tensor's alias group (its root or a
//     member with the same alias_of) in its arena, starting where the
//     contract lets it start relative to the tensor (exactly at its start
//     for an exact contract), and not an input or output of a subgraph
//     unless overwrite_inputs allows a model input;
//   - the operator runs once and calls no subgraph;
//   - every other member of the group used before the operator's step is
//     used last at that step: nothing reads the bytes the write destroys.
func (c *checker) checkInPlace(g *aliasGraph, ix *inPlaceIndex, p *member) {
	d := p.inPlace
	bad := func(format string, args ...any) {
		c.r.add(BadAlias, "%s is written in place of %v by op %d:%d, but "+format,
			append([]any{p.what, d.input, d.op.Subgraph, d.op.Op}, args...)...)
	}
	if p.aliasOf == nil {
		c.r.add(Malformed, "%s.in_place: a tensor written in place is a member of its input's alias group, but alias_of is null", p.path)
		return
	}
	lib, err := kernels.Lookup(c.doc.kernels)
	if err != nil {
		c.r.add(Malformed, "%s.in_place: the plan's kernels %q is no library this verifier knows", p.path, c.doc.kernels)
		return
	}
	if d.op.Subgraph != p.key.ref.Subgraph || d.op.Op < 0 || int(d.op.Op) >= len(c.m.Subgraphs[d.op.Subgraph].Ops) {
		bad("the operator is not one of the tensor's subgraph")
		return
	}
	sg := &c.m.Subgraphs[d.op.Subgraph]
	op := &sg.Ops[d.op.Op]
	ins := positions(op.Inputs, d.input.Tensor)
	outs := positions(op.Outputs, p.key.ref.Tensor)
	if len(ins) == 0 || len(outs) == 0 {
		bad("the operator does not read the input and write the tensor")
		return
	}
	var placements []kernels.Placement
	for _, k := range lib.InPlace(c.m, d.op.Subgraph, op) {
		if slices.Contains(ins, k.Input) && slices.Contains(outs, k.Output) && k.String() == d.contract {
			placements = append(placements, k)
		}
	}
	if len(placements) == 0 {
		bad("no contract of %s lets %s write it so (the entry says %q)", lib.Name, op.Name(), d.contract)
		return
	}
	in := c.placed[d.input]
	switch {
	case in == nil || (d.input != *p.aliasOf && (in.aliasOf == nil || *in.aliasOf != *p.aliasOf)):
		bad("the input is not a member of the tensor's alias group")
		return
	case in.arena != p.arena:
		bad("the input is in arena %d and the tensor in arena %d", in.arena, p.arena)
		return
	case !slices.ContainsFunc(placements, func(k kernels.Placement) bool { return k.Allows(in.offset - p.offset) }):
		k := placements[0]
		bad("the input starts %d bytes after the tensor does, and the contract lets it start %d to %d bytes after",
			in.offset-p.offset, k.Lo, k.Hi)
		return
	case g.boundary[d.input] && !(c.doc.overwriteInputs && g.mainInput[d.input]):
		bad("the input is an input or output of a subgraph (a model input only with overwrite_inputs)")
		return
	case ix.runs[d.op] != 1 || len(op.Called) > 0:
		bad("the operator runs %d times or calls subgraphs; only an operator that runs once, calling none, writes in place", ix.runs[d.op])
		return
	}
	step := c.tl.spans[d.op].first
	for _, q := range c.members {
		if q == p || q.key.kind != tensorKey || q.group != p.group {
			continue
		}
		if u, ok := ix.used[q.key.ref]; ok && u.first < step && u.last > step {
			bad("%s, a member of its group, is used at step %d, after the write at step %d", q.what, u.last, step)
		}
	}
}

// positions returns where t stands in list.
func positions(list []graph.TensorID, t graph.TensorID) []int {
	var out []int
	for i, x := range list {
		if x == t {
			out = append(out, i)
		}
	}
	return out
}
