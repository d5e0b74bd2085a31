package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// isView reports whether an operator only reinterprets its first input, so
// that its first output may share that input's bytes.
func isView(code graph.Opcode) bool {
	switch code {
	case graph.Reshape, graph.Squeeze, graph.ExpandDims, graph.Bitcast:
		return true
	}
	return false
}

// aliasGraph is what the alias rules need to know of the model, computed
// once per run.
type aliasGraph struct {
	// views maps output 0 of each view operator to its input 0, within
	// one subgraph.
	views map[graph.TensorRef][]graph.TensorRef
	// boundary holds every input and output of every subgraph.
	boundary map[graph.TensorRef]bool
	// mainInput holds the main subgraph's inputs that are not also its
	// outputs: with overwrite_inputs, in-place outputs may take them.
	mainInput map[graph.TensorRef]bool
}

func (c *checker) aliasGraph() *aliasGraph {
	g := &aliasGraph{views: map[graph.TensorRef][]graph.TensorRef{}, boundary: map[graph.TensorRef]bool{},
		mainInput: map[graph.TensorRef]bool{}}
	if len(c.m.Subgraphs) > 0 {
		for _, t := range c.m.Subgraphs[0].Inputs {
			g.mainInput[graph.TensorRef{Tensor: t}] = true
		}
		for _, t := range c.m.Subgraphs[0].Outputs {
			delete(g.mainInput, graph.TensorRef{Tensor: t})
		}
	}
	for si := range c.m.Subgraphs {
		sg := &c.m.Subgraphs[si]
		s := graph.SubgraphIndex(si)
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				g.boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			}
		}
		for _, op := range sg.Ops {
			if !isView(op.Code) || len(op.Inputs) == 0 || len(op.Outputs) == 0 ||
				op.Inputs[0] == graph.NoTensor || op.Outputs[0] == graph.NoTensor {
				continue
			}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[0]}
			g.views[out] = append(g.views[out], graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]})
		}
	}
	return g
}

// indexGroups sets the group of each tensor allocation, the root its
// alias_of leads to, and its class (member.class). A member joins the
// group it declares even when the alias is bad: checkAliases names the
// fault, and the peak checks then agree with the plan's own bookkeeping
// instead of repeating it. Members of one group are still checked pair by
// pair for bytes they share while both live (checkPair), and bytes a
// member holds outside the group's against every allocation of other
// groups.
func (c *checker) indexGroups() {
	c.alias = c.aliasGraph()
	for _, p := range c.members {
		if p.key.kind != tensorKey || p.aliasOf == nil {
			continue
		}
		if c.tensor(*p.aliasOf) == nil {
			c.r.add(Malformed, "%s.alias_of: tensor %v does not exist", p.path, *p.aliasOf)
			continue
		}
		p.group = tensorKeyOf(c.groupRoot(*p.aliasOf))
	}
	for _, p := range c.members {
		if p.key.kind == tensorKey {
			p.class = c.classOf(p)
		}
	}
}

// classOf follows p back through view operators (output 0 to input 0) to
// members of its group with the same arena, offset and size, and stops at
// the group's root, at a tensor written in place, or where no view leads
// further: the member whose write put p's value in p's bytes. A view
// writes nothing, so every member on the way holds that value in the same
// bytes.
func (c *checker) classOf(p *member) *member {
	seen := map[*member]bool{}
	cur := p
	for !seen[cur] && cur.aliasOf != nil && cur.inPlace == nil {
		seen[cur] = true
		var next *member
		for _, in := range c.alias.views[cur.key.ref] {
			if q := c.placed[in]; q != nil && q.group == cur.group && q.sameBytes(cur) {
				next = q
				break
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	return cur
}

// sameBytes reports whether two members of one alias group are declared
// over the same bytes: the same alias_offset and size. badAlias checks
// that each lies at its root's offset plus its alias_offset.
func (p *member) sameBytes(q *member) bool {
	return p.offsetInGroup() == q.offsetInGroup() && p.size == q.size
}

// groupOffset returns where p lies by its group's bookkeeping: its root's
// offset plus its alias_offset, or, without a root, its own offset.
func (c *checker) groupOffset(p *member) int64 {
	if p.aliasOf == nil || p.key.kind != tensorKey {
		return p.offset
	}
	if r := c.placed[p.group.ref]; r != nil && r.arena == p.arena {
		return addSat(r.offset, p.offsetInGroup())
	}
	return p.offset
}

// related reports whether two members of one alias group may share bytes
// over the steps first..last, where both are live: they hold one value
// (one class), or one's value was written in place over the other's by an
// operator at a step s, and s is the only step both are live at (the
// contract and the input's death there are checkInPlace's).
func (c *checker) related(p, q *member, first, last int64) bool {
	if (p.class != nil && p.class == q.class) || c.ownShare(p, q, first, last) {
		return true
	}
	return c.writtenOver(p, q, first, last) || c.writtenOver(q, p, first, last)
}

// writtenOver reports whether q's class was written in place over a
// member of p's class by an operator whose step is first, and last.
func (c *checker) writtenOver(p, q *member, first, last int64) bool {
	w := q.class
	if w == nil || w.inPlace == nil || p.class == nil {
		return false
	}
	in := c.placed[w.inPlace.input]
	if in == nil || in.class != p.class {
		return false
	}
	sp, ran := c.tl.spans[w.inPlace.op]
	return ran && first == sp.first && last == sp.first
}

// checkAliases checks every alias_of (docs/plan-format.md): the member and
// its root are scratch tensors of one arena, the member at the root's
// offset plus its alias_offset, neither is an input or output of a
// subgraph (with overwrite_inputs, the root may be a model input), the
// root is a root (its own alias_of is null), and a chain of view
// operators (each output over exactly its input's bytes) and in-place
// writes leads from the root to the member through members of the group;
// and every in_place entry (checkInPlace).
func (c *checker) checkAliases() {
	g := c.alias
	var ip *inPlaceIndex
	for _, p := range c.members {
		if p.key.kind != tensorKey {
			continue
		}
		if p.aliasOffset != nil && (p.aliasOf == nil || *p.aliasOffset == 0) {
			c.r.add(Malformed, "%s.alias_offset: %d; the key is present only for a member of an alias group, and not 0",
				p.path, *p.aliasOffset)
		}
		if p.inPlace != nil {
			if ip == nil {
				ip = c.inPlaceIndex()
			}
			c.checkInPlace(g, ip, p)
		}
		if p.aliasOf == nil || c.tensor(*p.aliasOf) == nil {
			continue
		}
		root := *p.aliasOf
		if why := c.badAlias(g, p, root); why != "" {
			c.r.add(BadAlias, "%s aliases %s, but %s", p.what, c.name(root), why)
		}
	}
}

// groupRoot follows alias_of from r to a tensor whose alias_of is null, or
// on a cycle, to where it closes, so that a member naming another member
// still joins that member's group.
func (c *checker) groupRoot(r graph.TensorRef) graph.TensorRef {
	seen := map[graph.TensorRef]bool{}
	for !seen[r] {
		seen[r] = true
		q := c.placed[r]
		if q == nil || q.aliasOf == nil {
			break
		}
		r = *q.aliasOf
	}
	return r
}

// badAlias returns why p may not alias root, or "" when it may.
func (c *checker) badAlias(g *aliasGraph, p *member, root graph.TensorRef) string {
	r := c.placed[root]
	switch {
	case root == p.key.ref:
		return "a tensor cannot alias itself"
	case r == nil:
		return "the root has no allocation"
	case r.aliasOf != nil:
		return "the root is not a group root: it aliases " + r.aliasOf.String()
	case p.role != roleScratch || r.role != roleScratch:
		return fmt.Sprintf("only scratch tensors alias, and they are %s and %s", p.role, r.role)
	case p.arena != r.arena:
		return fmt.Sprintf("it is in arena %d and the root in arena %d", p.arena, r.arena)
	case p.memory != r.memory:
		return fmt.Sprintf("it is in memory %q and the root in %q", p.memory, r.memory)
	case p.offset != r.offset && p.aliasOffset == nil:
		return fmt.Sprintf("it is at offset %d and the root at %d", p.offset, r.offset)
	case p.offset != addSat(r.offset, p.offsetInGroup()):
		return fmt.Sprintf("it is at offset %d, and the root at %d plus its alias_offset %d is %d",
			p.offset, r.offset, p.offsetInGroup(), addSat(r.offset, p.offsetInGroup()))
	case c.ownTogether(p, r):
		return "" // the model's own offline plan puts them so (checkOwnPlan)
	case g.boundary[p.key.ref]:
		return "it is an input or output of a subgraph"
	case g.boundary[root] && !(c.doc.overwriteInputs && g.mainInput[root]):
		return "the root is an input or output of a subgraph"
	case root.Subgraph != p.key.ref.Subgraph:
		return "they are in different subgraphs"
	}
	// Walk back from the member through view operators (whose output
	// lies over exactly its input's bytes) and in-place writes (whose
	// placement checkInPlace checks), staying inside the group, until the
	// root is reached.
	seen := map[graph.TensorRef]bool{}
	for cur := p.key.ref; cur != root; {
		seen[cur] = true
		next, found, moved := graph.TensorRef{}, false, ""
		cm := c.placed[cur]
		inGroup := func(in graph.TensorRef) bool {
			q := c.placed[in]
			return !seen[in] && (in == root || (q != nil && q.aliasOf != nil && *q.aliasOf == root))
		}
		if cm != nil && cm.inPlace != nil && inGroup(cm.inPlace.input) {
			next, found = cm.inPlace.input, true
		}
		for _, in := range g.views[cur] {
			if found || !inGroup(in) {
				continue
			}
			if q := c.placed[in]; cm != nil && q != nil && !q.sameBytes(cm) {
				moved = c.name(in)
				continue
			}
			next, found = in, true
		}
		switch {
		case !found && moved != "" && cur == p.key.ref:
			return fmt.Sprintf("it is a view of %s, but not over exactly its bytes (the same alias_offset and size)", moved)
		case !found && moved != "":
			return fmt.Sprintf("the chain back from it reaches %s, a view of %s but not over exactly its bytes (the same alias_offset and size)",
				c.name(cur), moved)
		case !found && cur == p.key.ref:
			return "no view operator (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST) or in-place write turns a member of the group into it"
		case !found:
			return "the chain of view operators and in-place writes back from it stops at " + c.name(cur)
		}
		cur = next
	}
	return ""
}
