package verify

import (
	"fmt"
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Exact-overlap copies (docs/plan-format.md, exact_overlap_copy). A
// tensor_allocs entry with exact_overlap_copy says its tensor shares
// bytes with another operand of a copying kernel that then copies them
// exactly onto themselves: a concatenation's input in its slot of the
// output (kernels.Slot), a slice's output over the contiguous block of its
// input it copies (kernels.Block). The contract and where it puts the
// tensor come from the plan's kernel library (kernels.Library.ExactOverlap),
// computed here from the model: the tensor must lie exactly there, not one
// byte off. Such a copy writes every byte with the value it holds, so:
//
//   - members joined by valid copies (the smaller inside the larger, at the
//     contract's offset) and views hold, where they overlap, one value
//     when they have a common container (copyRelated): they may share
//     bytes while both live (checkPair), and a copying kernel's write of
//     one is no clobber of the other (checkSharing);
//   - every other write still is: an input written after a view of its
//     block, or anything else written over a slot while its input lives.

// copyIndex is what the copy checks need, built once (indexCopies).
type copyIndex struct {
	// bad are the faults of exact_overlap_copy entries, reported by
	// checkAliases.
	bad []string
	// up maps the class of each tensor that a valid entry puts inside
	// another to the classes of the tensors it lies in.
	up map[*member][]*member
	// writes holds the copying writes that copy bytes onto themselves:
	// an operator and the member it writes (a slice's output, a
	// concatenation's output).
	writes map[copyWrite]bool
	// groups marks the alias groups that hold a valid copy.
	groups map[key]bool
	// parent is a union-find over members joined by views, in-place
	// writes and valid copies, for groups that hold a copy (connected).
	parent map[*member]*member
}

type copyWrite struct {
	op graph.OpRef
	q  *member
}

// indexCopies checks every exact_overlap_copy entry against the model and
// the plan's kernel library, and indexes the valid ones.
func (c *checker) indexCopies() {
	ci := &copyIndex{up: map[*member][]*member{}, writes: map[copyWrite]bool{}, groups: map[key]bool{}, parent: map[*member]*member{}}
	c.copies = ci
	var lib *kernels.Library
	for _, p := range c.members {
		if p.key.kind != tensorKey || p.copy == nil {
			continue
		}
		if lib == nil {
			l, err := kernels.Resolve(c.doc.kernels, c.doc.kernelsPath)
			if err != nil {
				ci.bad = append(ci.bad, fmt.Sprintf("%s.exact_overlap_copy: the plan's kernels %q (code path %q) is no library this verifier knows", p.path, c.doc.kernels, c.doc.kernelsPath))
				continue
			}
			lib = l
		}
		w, kind, why := c.checkCopy(lib, p)
		if why != "" {
			d := p.copy
			ci.bad = append(ci.bad, fmt.Sprintf("%s is copied exactly onto itself by op %d:%d with %v, but %s", p.what, d.op.Subgraph, d.op.Op, d.with, why))
			continue
		}
		ci.up[p.class] = append(ci.up[p.class], w.class)
		if kind == kernels.Slot {
			ci.writes[copyWrite{p.copy.op, w}] = true
		} else {
			ci.writes[copyWrite{p.copy.op, p}] = true
		}
		ci.groups[p.group] = true
	}
	if len(ci.groups) == 0 {
		return
	}
	find := func(x *member) *member {
		for ci.parent[x] != nil && ci.parent[x] != x {
			if g := ci.parent[ci.parent[x]]; g != nil {
				ci.parent[x] = g
			}
			x = ci.parent[x]
		}
		return x
	}
	union := func(a, b *member) {
		if ra, rb := find(a), find(b); ra != rb {
			ci.parent[ra] = rb
		}
	}
	for _, p := range c.members {
		if p.key.kind != tensorKey || p.aliasOf == nil || !ci.groups[p.group] {
			continue
		}
		if p.class != nil && p.class != p {
			union(p, p.class)
		}
		if p.inPlace != nil {
			if in := c.placed[p.inPlace.input]; in != nil && in.group == p.group {
				union(p, in)
			}
		}
		if p.copy != nil {
			if w := c.placed[p.copy.with]; w != nil && slices.Contains(ci.up[p.class], w.class) {
				union(p, w)
			}
		}
	}
}

// connected reports whether p and root are joined by views, in-place
// writes and valid copies, in a group that holds a copy.
func (c *checker) connected(p *member, root graph.TensorRef) bool {
	ci := c.copies
	r := c.placed[root]
	if ci == nil || r == nil || !ci.groups[p.group] {
		return false
	}
	find := func(x *member) *member {
		for ci.parent[x] != nil && ci.parent[x] != x {
			x = ci.parent[x]
		}
		return x
	}
	return find(p) == find(r)
}

// checkCopy returns the member p's exact_overlap_copy entry names and the
// contract's overlap, or why the entry is wrong.
func (c *checker) checkCopy(lib *kernels.Library, p *member) (*member, kernels.Overlap, string) {
	d := p.copy
	s := p.key.ref.Subgraph
	if d.op.Subgraph != s || d.op.Op < 0 || int(d.op.Op) >= len(c.m.Subgraphs[s].Ops) {
		return nil, 0, "the operator is not one of the tensor's subgraph"
	}
	w := c.placed[d.with]
	if w == nil {
		return nil, 0, "the other operand has no allocation"
	}
	op := &c.m.Subgraphs[s].Ops[d.op.Op]
	var pl *kernels.Placement
	for _, k := range lib.ExactOverlap(c.m, s, op) {
		if k.String() != d.contract {
			continue
		}
		in, out := op.Inputs[k.Input], op.Outputs[k.Output]
		if (k.Overlap == kernels.Slot && in == p.key.ref.Tensor && out == d.with.Tensor) ||
			(k.Overlap == kernels.Block && out == p.key.ref.Tensor && in == d.with.Tensor) {
			pl = &k
			break
		}
	}
	g := c.alias
	switch {
	case pl == nil:
		return nil, 0, fmt.Sprintf("no exact-overlap contract of %s lets %s copy them so (the entry says %q)", lib.Name, op.Name(), d.contract)
	case p.aliasOf == nil:
		return nil, 0, "alias_of is null: the tensor is no member of the other's alias group"
	case w.group != p.group:
		return nil, 0, "the other operand is in another alias group"
	case w.arena != p.arena:
		return nil, 0, fmt.Sprintf("it is in arena %d and the other in arena %d", p.arena, w.arena)
	case p.role != roleScratch || w.role != roleScratch:
		return nil, 0, "only scratch tensors share bytes"
	case g.boundary[p.key.ref] || g.boundary[d.with]:
		return nil, 0, "an input or output of a subgraph keeps bytes of its own"
	}
	in, out := p, w // the input starts pl.Lo bytes after the output
	if pl.Overlap == kernels.Block {
		in, out = w, p
	}
	if d := in.offset - out.offset; d != pl.Lo {
		what := "its slot of the output"
		if pl.Overlap == kernels.Block {
			what = "the block of the input it copies"
		}
		return nil, 0, fmt.Sprintf("the input starts %d bytes after the output, and %s puts it %d bytes after (%s): "+
			"the copy would overlap its source partly", d, what, pl.Lo, pl.Contract)
	}
	return w, pl.Overlap, ""
}

// checkCopies reports the faults indexCopies found.
func (c *checker) checkCopies() {
	if c.copies == nil {
		return
	}
	for _, b := range c.copies.bad {
		c.r.add(BadAlias, "%s", b)
	}
}

// copyRelated reports whether p and q hold one value where they overlap
// because valid copies put both inside a common tensor (or one inside the
// other): their classes have a common container.
func (c *checker) copyRelated(p, q *member) bool {
	ci := c.copies
	if ci == nil || len(ci.up) == 0 || p.class == nil || q.class == nil || !ci.groups[p.group] || p.group != q.group {
		return false
	}
	anc := map[*member]bool{}
	for todo := []*member{p.class}; len(todo) > 0; {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		c.work++
		if anc[x] {
			continue
		}
		anc[x] = true
		todo = append(todo, ci.up[x]...)
	}
	seen := map[*member]bool{}
	for todo := []*member{q.class}; len(todo) > 0; {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		c.work++
		if anc[x] {
			return true
		}
		if seen[x] {
			continue
		}
		seen[x] = true
		todo = append(todo, ci.up[x]...)
	}
	return false
}

// copiesOnto reports whether the write e, by a copying kernel, copies its
// member's bytes exactly onto themselves and m holds, where they overlap,
// the value it writes.
func (c *checker) copiesOnto(e shareEvent, m *member, s graph.SubgraphIndex) bool {
	ci := c.copies
	if ci == nil || e.op < 0 || !ci.writes[copyWrite{graph.OpRef{Subgraph: s, Op: e.op}, e.q}] {
		return false
	}
	return c.copyRelated(m, e.q)
}
