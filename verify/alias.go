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

// indexGroups sets the group of each tensor allocation: the root its
// alias_of leads to. A member joins the group it declares even when the
// alias is bad: checkAliases names the fault once, and the overlap and peak
// checks then agree with the plan's own bookkeeping instead of repeating
// it. Bytes the member holds outside the root's are still checked against
// every allocation of other groups.
func (c *checker) indexGroups() {
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
}

// checkAliases checks every alias_of (docs/plan-format.md): the member and
// its root are scratch tensors of one size at one arena and offset, neither
// is an input or output of a subgraph (with overwrite_inputs, the root may
// be a model input), the root is a root (its own alias_of is null), and a
// chain of view operators and in-place writes leads from the root to the
// member through members of the group; and every in_place entry
// (checkInPlace).
func (c *checker) checkAliases() {
	g := c.aliasGraph()
	var ip *inPlaceIndex
	for _, p := range c.members {
		if p.key.kind != tensorKey {
			continue
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
	case p.offset != r.offset:
		return fmt.Sprintf("it is at offset %d and the root at %d", p.offset, r.offset)
	case p.size != r.size:
		return fmt.Sprintf("it has %d bytes and the root %d", p.size, r.size)
	case g.boundary[p.key.ref]:
		return "it is an input or output of a subgraph"
	case g.boundary[root] && !(c.doc.overwriteInputs && g.mainInput[root]):
		return "the root is an input or output of a subgraph"
	case root.Subgraph != p.key.ref.Subgraph:
		return "they are in different subgraphs"
	}
	// Walk back from the member through view operators and in-place
	// writes, staying inside the group, until the root is reached.
	seen := map[graph.TensorRef]bool{}
	for cur := p.key.ref; cur != root; {
		seen[cur] = true
		next, found := graph.TensorRef{}, false
		back := g.views[cur]
		if q := c.placed[cur]; q != nil && q.inPlace != nil {
			back = append([]graph.TensorRef{q.inPlace.input}, back...)
		}
		for _, in := range back {
			q := c.placed[in]
			if !seen[in] && (in == root || (q != nil && q.aliasOf != nil && *q.aliasOf == root)) {
				next, found = in, true
				break
			}
		}
		if !found {
			if cur == p.key.ref {
				return "no view operator (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST) or in-place write turns a member of the group into it"
			}
			return "the chain of view operators and in-place writes back from it stops at " + c.name(cur)
		}
		cur = next
	}
	return ""
}
