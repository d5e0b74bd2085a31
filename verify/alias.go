package verify

import (
	"fmt"
	"slices"

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
	cw := &classWalk{class: map[*member]*member{}, mark: map[*member]int{}}
	for _, p := range c.members {
		if p.key.kind == tensorKey {
			p.class = c.classOf(p, cw)
		}
	}
	c.indexCopies()
}

// classWalk remembers, across classOf's calls, each member's class, so that
// a chain of n views costs n steps, not n²; mark numbers the call that
// last put a member on its path.
type classWalk struct {
	class map[*member]*member
	mark  map[*member]int
	call  int
}

// viewSource returns the member whose bytes cur views: the first input of
// a view operator writing cur that is a member of cur's group over the same
// bytes, or nil.
func (c *checker) viewSource(cur *member) *member {
	for _, in := range c.alias.views[cur.key.ref] {
		c.work++
		if q := c.placed[in]; q != nil && q.group == cur.group && q.sameBytes(cur) {
			return q
		}
	}
	return nil
}

// classOf follows p back through view operators (output 0 to input 0) to
// members of its group with the same arena, offset and size, and stops at
// the group's root, at a tensor written in place, where no view leads
// further, or at the first member it meets again: the member whose write
// put p's value in p's bytes. A view writes nothing, so every member on
// the way holds that value in the same bytes.
//
// Each step depends on the member alone, so every member on the path gets
// its class at once (cw): those before the point where the path ends or
// joins a path walked before get that class, and those on a cycle get
// themselves (the walk from each stops where it started).
func (c *checker) classOf(p *member, cw *classWalk) *member {
	cw.call++
	var path []*member
	var class *member
	cycle := -1
	for cur := p; ; {
		c.work++
		if k, ok := cw.class[cur]; ok {
			class = k
			break
		}
		if cw.mark[cur] == cw.call {
			class, cycle = cur, slices.Index(path, cur)
			break
		}
		if cur.aliasOf == nil || cur.inPlace != nil {
			class = cur
			break
		}
		cw.mark[cur] = cw.call
		path = append(path, cur)
		next := c.viewSource(cur)
		if next == nil {
			class = cur
			break
		}
		cur = next
	}
	if len(path) == 0 {
		return class
	}
	for i, q := range path {
		cw.class[q] = class
		if cycle >= 0 && i >= cycle {
			cw.class[q] = q
		}
	}
	return cw.class[p]
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
	return c.writtenOver(p, q, first, last) || c.writtenOver(q, p, first, last) || c.copyRelated(p, q)
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
	reach := &rootWalk{ok: map[[2]graph.TensorRef]bool{}, mark: map[graph.TensorRef]int{}}
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
		if why := c.badAlias(g, reach, p, root); why != "" {
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

// rootWalk remembers, across badAlias's calls, the tensors whose chain of
// view operators and in-place writes leads back to a root (ok, keyed by
// tensor and root), so that a chain of n members costs n steps, not n²;
// mark numbers the call that last put a tensor on its path.
type rootWalk struct {
	ok   map[[2]graph.TensorRef]bool
	mark map[graph.TensorRef]int
	call int
}

// reachesRoot reports whether the walk back from p through view operators
// and in-place writes reaches root, taking at each tensor the step
// badAlias's walk takes when it has met no tensor twice: the in-place
// input when it is in the group, else the first view input in the group
// over exactly its bytes. When it does, badAlias's walk takes the same
// path (it differs only by skipping tensors it has met, and this path meets
// none twice), so p may alias root. false means only that badAlias must
// walk itself: the chain breaks, or meets a tensor twice.
func (c *checker) reachesRoot(g *aliasGraph, rw *rootWalk, p *member, root graph.TensorRef) bool {
	rw.call++
	inGroup := func(in graph.TensorRef) bool {
		q := c.placed[in]
		return in == root || (q != nil && q.aliasOf != nil && *q.aliasOf == root)
	}
	var path []graph.TensorRef
	for cur := p.key.ref; cur != root && !rw.ok[[2]graph.TensorRef{cur, root}]; {
		c.work++
		if rw.mark[cur] == rw.call {
			return false
		}
		rw.mark[cur] = rw.call
		path = append(path, cur)
		cm := c.placed[cur]
		next, found := graph.TensorRef{}, false
		if cm != nil && cm.inPlace != nil && inGroup(cm.inPlace.input) {
			next, found = cm.inPlace.input, true
		}
		for _, in := range g.views[cur] {
			c.work++
			if found || !inGroup(in) {
				continue
			}
			if q := c.placed[in]; cm != nil && q != nil && !q.sameBytes(cm) {
				continue
			}
			next, found = in, true
		}
		if !found {
			return false
		}
		cur = next
	}
	for _, t := range path {
		rw.ok[[2]graph.TensorRef{t, root}] = true
	}
	return true
}

// badAlias returns why p may not alias root, or "" when it may.
func (c *checker) badAlias(g *aliasGraph, rw *rootWalk, p *member, root graph.TensorRef) string {
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
	if c.reachesRoot(g, rw, p, root) || c.connected(p, root) {
		return ""
	}
	seen := map[graph.TensorRef]bool{}
	for cur := p.key.ref; cur != root; {
		c.work++
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
