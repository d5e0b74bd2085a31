package verify

import (
	"cmp"
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
	// groups holds, per alias group, its tensor members that the
	// timeline uses.
	groups map[key]*groupUses
}

// groupUses lists the tensor members of one alias group that the timeline
// uses, by their first use (then file order): member[i] (an index into
// checker.members) is first used at first[i], and last holds where each
// is used last.
type groupUses struct {
	member []int
	first  []int64
	last   *maxTree
}

// usedAcross returns, in file order, the members of group g used before
// step and after it.
func (ix *inPlaceIndex) usedAcross(g key, step int64) []int {
	gu := ix.groups[g]
	if gu == nil {
		return nil
	}
	k, _ := slices.BinarySearch(gu.first, step) // gu.first[:k] < step
	var out []int
	gu.last.above(k, step, func(i int) { out = append(out, gu.member[i]) })
	slices.Sort(out)
	return out
}

func (c *checker) inPlaceIndex() *inPlaceIndex {
	ix := &inPlaceIndex{runs: map[graph.OpRef]int{}, used: map[graph.TensorRef]span{}, groups: map[key]*groupUses{}}
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
	byGroup := map[key][]int{}
	var order []key
	for i, q := range c.members {
		if _, ok := ix.used[q.key.ref]; ok && q.key.kind == tensorKey {
			if byGroup[q.group] == nil {
				order = append(order, q.group)
			}
			byGroup[q.group] = append(byGroup[q.group], i)
		}
	}
	for _, g := range order {
		ms := byGroup[g]
		slices.SortStableFunc(ms, func(a, b int) int {
			return cmp.Compare(ix.used[c.members[a].key.ref].first, ix.used[c.members[b].key.ref].first)
		})
		gu := &groupUses{member: ms, first: make([]int64, len(ms)), last: newMaxTree(len(ms), &c.work)}
		for i, m := range ms {
			u := ix.used[c.members[m].key.ref]
			gu.first[i] = u.first
			gu.last.set(i, u.last)
		}
		ix.groups[g] = gu
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
//   - every other member of the group used before the operator's step that
//     shares bytes with the tensor is used last at that step: nothing reads
//     the bytes the write destroys (a member elsewhere in the group, such
//     as another input of a concatenation in its own slot, may live on).
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
	lib, err := kernels.Resolve(c.doc.kernels, c.doc.kernelsPath)
	if err != nil {
		c.r.add(Malformed, "%s.in_place: the plan's kernels %q (code path %q) is no library this verifier knows", p.path, c.doc.kernels, c.doc.kernelsPath)
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
	for _, i := range ix.usedAcross(p.group, step) {
		if q := c.members[i]; q != p && sharesBytes(q, p) {
			bad("%s, a member of its group, is used at step %d, after the write at step %d", q.what, ix.used[q.key.ref].last, step)
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
