package verify

import (
	"fmt"
	"slices"

	"github.com/heliac/heliac/graph"
)

// checkSharing checks the sharing rule (docs/plan-format.md, alias_of):
// members of an alias group share bytes, and a write to one writes every
// member over those bytes, so a member may share bytes with others only
// while nobody else writes them. For every read of a member m (by an
// operator, or as a subgraph output at the subgraph's end), in the order
// the plan's schedule runs m's subgraph: from the write that gave m its
// value (the last write of m before the read) to the read, no operator
// may write another member over bytes of m. A view operator writing its
// output over exactly its input's bytes, where both are members, writes
// nothing; an operator that writes a member in place over its input (its
// in_place entry) while reading m, where m holds the input's value, is
// checkInPlace's to judge; so are writes the model's own offline plan
// makes for an Ethos-U operator (ownWrite). A read before any write of m in a run (a value
// the model never gave) is left alone. A group lies in one subgraph, whose
// every run writes its tensors afresh, so one run in the schedule's order
// stands for all.
func (c *checker) checkSharing() {
	groups := map[key][]*member{}
	var roots []key
	for _, p := range c.members {
		if p.key.kind != tensorKey || p.role != roleScratch {
			continue
		}
		if groups[p.group] == nil {
			roots = append(roots, p.group)
		}
		groups[p.group] = append(groups[p.group], p)
	}
	for _, r := range roots {
		if ms := groups[r]; len(ms) > 1 {
			c.checkGroupSharing(ms)
		}
	}
}

// shareEvent is a write of a group member that writes its bytes: the
// position of its operator in the subgraph's order (-1: the subgraph's
// input step), the operator, and the member written.
type shareEvent struct {
	pos int
	op  graph.OpIndex // -1 at the input step
	q   *member
}

// checkGroupSharing checks the sharing rule for the members ms of one
// group.
func (c *checker) checkGroupSharing(ms []*member) {
	s := ms[0].key.ref.Subgraph
	if int(s) >= len(c.tl.order) || c.tl.order[s] == nil {
		return
	}
	order := c.tl.order[s]
	sg := &c.m.Subgraphs[s]
	pos := make([]int, len(sg.Ops))
	for i, oi := range order {
		pos[oi] = i
	}
	in := map[graph.TensorID]*member{}
	for _, p := range ms {
		if p.key.ref.Subgraph == s {
			in[p.key.ref.Tensor] = p
		}
	}
	// writes[t] are the positions writing member t (a view's write
	// included, which gives it its value); events are the writes of
	// bytes, by position.
	writes := map[graph.TensorID][]int{}
	var events []shareEvent
	for _, t := range sg.Inputs {
		if q := in[t]; q != nil {
			writes[t] = append(writes[t], -1)
			events = append(events, shareEvent{-1, -1, q})
		}
	}
	reads := map[graph.TensorID][]int{} // positions reading member t; len(order) for a subgraph output
	for _, t := range sg.Outputs {
		if in[t] != nil {
			reads[t] = append(reads[t], len(order))
		}
	}
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		at := pos[oi]
		for _, t := range op.Inputs {
			if t != graph.NoTensor && in[t] != nil {
				reads[t] = append(reads[t], at)
			}
		}
		for k, t := range slices.Concat(op.Outputs, op.Intermediates) {
			q := in[t]
			if q == nil {
				continue
			}
			writes[t] = append(writes[t], at)
			if k == 0 && len(op.Outputs) > 0 && isView(op.Code) && len(op.Inputs) > 0 && op.Inputs[0] != graph.NoTensor {
				if src := in[op.Inputs[0]]; src != nil && src.sameBytes(q) {
					continue // the view lies over its input's bytes: it writes nothing
				}
			}
			events = append(events, shareEvent{at, graph.OpIndex(oi), q})
		}
	}
	slices.SortStableFunc(events, func(a, b shareEvent) int { return a.pos - b.pos })
	type fault struct {
		m, q *member
		op   graph.OpIndex
	}
	seen := map[fault]bool{} // one message per member, writer and write
	for _, m := range ms {
		t := m.key.ref.Tensor
		if m.key.ref.Subgraph != s {
			continue
		}
		for _, r := range reads[t] {
			from := -2 // the last write of m before r
			for _, w := range writes[t] {
				if w < r {
					from = max(from, w)
				}
			}
			if from == -2 {
				continue
			}
			i, _ := slices.BinarySearchFunc(events, from+1, func(e shareEvent, p int) int { return e.pos - p })
			for ; i < len(events) && events[i].pos <= r; i++ {
				e := events[i]
				if e.q == m || !sharesBytes(m, e.q) || c.writesInPlaceOf(e, m, s, r, order) || c.ownWrite(e, m, s) || c.copiesOnto(e, m, s) || seen[fault{m, e.q, e.op}] {
					continue
				}
				seen[fault{m, e.q, e.op}] = true
				c.r.add(BadAlias, "%s shares bytes with %s, which %s writes %s: a member of an alias group may share bytes only while nobody else writes them",
					m.what, e.q.what, c.atPos(s, e.op), c.between(s, order, m, from, e.pos, r))
			}
		}
	}
}

// sharesBytes reports whether two members of one arena overlap.
func sharesBytes(p, q *member) bool {
	return p.arena == q.arena && max(p.offset, q.offset) < min(addSat(p.offset, p.size), addSat(q.offset, q.size))
}

// writesInPlaceOf reports whether e is the in-place write its in_place
// entry declares, by the operator at position r that reads m, where m
// holds the value of the input written over.
func (c *checker) writesInPlaceOf(e shareEvent, m *member, s graph.SubgraphIndex, r int, order []graph.OpIndex) bool {
	d := e.q.inPlace
	if e.pos != r || r >= len(order) || d == nil || d.op != (graph.OpRef{Subgraph: s, Op: e.op}) {
		return false
	}
	src := c.placed[d.input]
	return src != nil && (src == m || (src.class != nil && src.class == m.class))
}

// ownWrite reports whether e writes over m where the model's own offline
// plan puts them for an Ethos-U operator: ownShare at the steps of e's
// operator (one of them a scratch region, or e's operator an Ethos-U
// operator of both, its output over its input).
func (c *checker) ownWrite(e shareEvent, m *member, s graph.SubgraphIndex) bool {
	if e.op < 0 {
		return c.ownShare(m, e.q, -1, -1) // the input step: no operator's
	}
	sp, ran := c.tl.spans[graph.OpRef{Subgraph: s, Op: e.op}]
	return ran && c.ownShare(m, e.q, sp.first, sp.last)
}

// atPos names the operator at a position of a shareEvent.
func (c *checker) atPos(s graph.SubgraphIndex, op graph.OpIndex) string {
	if op < 0 {
		return fmt.Sprintf("the input step of subgraph %d", s)
	}
	return c.opName(graph.OpRef{Subgraph: s, Op: op})
}

// between says when a write at position w falls: after m got its value
// at position from, and before, or as, the read at position r.
func (c *checker) between(s graph.SubgraphIndex, order []graph.OpIndex, m *member, from, w, r int) string {
	gave := "the input step"
	if from >= 0 {
		gave = c.opName(graph.OpRef{Subgraph: s, Op: order[from]})
	}
	reader := fmt.Sprintf("the end of subgraph %d, whose output it is,", s)
	if r < len(order) {
		reader = c.opName(graph.OpRef{Subgraph: s, Op: order[r]})
	}
	if w == r {
		return fmt.Sprintf("after %s gives %s its value, as %s reads it (no in_place entry declares that write)", gave, m.what, reader)
	}
	return fmt.Sprintf("after %s gives %s its value and before %s reads it", gave, m.what, reader)
}
