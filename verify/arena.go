package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// checkArenas puts each allocation in the arena its role and memory name,
// and each resource variable in the persistent arena of its memory, then
// checks every arena.
func (c *checker) checkArenas() {
	members := map[*arena][]*placed{}
	vars := map[*arena][]*varEntry{}
	lookup := map[string]map[string]*arena{}
	for _, list := range [][]arena{c.doc.scratch, c.doc.persistent, c.doc.constant} {
		for i := range list {
			a := &list[i]
			if lookup[a.role] == nil {
				lookup[a.role] = map[string]*arena{}
			}
			if first := lookup[a.role][a.memory]; first != nil {
				c.r.add(Malformed, "%s: second %s arena in memory %q (the first is %s)", a.path, a.role, a.memory, first.path)
				continue
			}
			lookup[a.role][a.memory] = a
			members[a] = nil
			if a.total < 0 || a.used < 0 {
				c.r.add(Malformed, "%s: total_size %d and used %d must not be negative", a.path, a.total, a.used)
			}
		}
	}
	for _, p := range c.order {
		switch p.role {
		case roleScratch, rolePersistent, roleConstant:
		default:
			continue // reported already
		}
		a := lookup[p.role][p.memory]
		if a == nil {
			c.r.add(Malformed, "%s: %s has no %s arena in memory %q", p.path, c.name(p.ref), p.role, p.memory)
			continue
		}
		members[a] = append(members[a], p)
	}
	for i := range c.doc.variables {
		v := &c.doc.variables[i]
		a := lookup[rolePersistent][v.memory]
		switch {
		case v.size < 0:
			c.r.add(Malformed, "%s: size %d is negative", v.path, v.size)
		case a == nil:
			c.r.add(Malformed, "%s: %s has no persistent arena in memory %q", v.path, v.key(), v.memory)
		default:
			vars[a] = append(vars[a], v)
		}
	}
	for _, list := range [][]arena{c.doc.scratch, c.doc.persistent, c.doc.constant} {
		for i := range list {
			if ps, ok := members[&list[i]]; ok {
				c.checkArena(&list[i], ps, vars[&list[i]])
			}
		}
	}
}

// checkArena checks the allocations of one arena: bounds, alignment, every
// pair for overlap, and the arena's recorded sizes. vs are the resource
// variables of a persistent arena.
func (c *checker) checkArena(a *arena, ps []*placed, vs []*varEntry) {
	desc := fmt.Sprintf("%s arena %q", a.role, a.memory)
	var top int64
	for _, p := range ps {
		top = max(top, c.checkRange(a, desc, c.name(p.ref), p.offset, p.size))
	}
	for _, v := range vs {
		top = max(top, c.checkRange(a, desc, v.key().String(), v.offset, v.size))
	}
	for i, p := range ps {
		for _, q := range ps[i+1:] {
			c.checkPair(desc, p, q)
		}
	}
	for i, v := range vs {
		for _, p := range ps {
			c.checkBytes(desc, v.key().String(), v.offset, v.size, c.name(p.ref), p.offset, p.size)
		}
		for _, w := range vs[i+1:] {
			c.checkBytes(desc, v.key().String(), v.offset, v.size, w.key().String(), w.offset, w.size)
		}
	}
	if a.used != top {
		c.r.add(HeightMismatch, "%s: used is %d, but its highest allocation ends at %d", desc, a.used, top)
	}
	if a.total < a.used {
		c.r.add(HeightMismatch, "%s: total_size %d is less than used %d", desc, a.total, a.used)
	}
	switch a.role {
	case roleScratch:
		c.checkPeak(a, desc, ps)
	case roleConstant:
		c.checkStaging(a, desc, ps)
	}
}

// checkRange reports bytes [offset, offset+size) of what that lie outside
// the arena or start off the alignment, and returns where they end.
func (c *checker) checkRange(a *arena, desc, what string, offset, size int64) int64 {
	end := addSat(offset, size)
	if offset < 0 || end > a.total {
		c.r.add(OutOfBounds, "%s at [%d, %d) lies outside [0, %d) of %s", what, offset, end, a.total, desc)
	}
	if align := c.alignOf(a.memory); offset%align != 0 {
		c.r.add(Misaligned, "%s at offset %d in %s is not a multiple of %d", what, offset, desc, align)
	}
	return end
}

// checkBytes reports two persistent allocations, which are live at every
// step, that share a byte.
func (c *checker) checkBytes(desc, p string, pOff, pSize int64, q string, qOff, qSize int64) {
	pEnd, qEnd := addSat(pOff, pSize), addSat(qOff, qSize)
	if lo, hi := max(pOff, qOff), min(pEnd, qEnd); lo < hi {
		c.r.add(Overlap, "%s at [%d, %d) and %s at [%d, %d) share bytes [%d, %d) of %s",
			p, pOff, pEnd, q, qOff, qEnd, lo, hi, desc)
	}
}

// checkPair reports two allocations of one arena that share a byte while
// both hold data: scratch tensors of different alias groups when their
// lifetimes share a step, persistent tensors always, constants unless they
// are one model buffer at one offset.
func (c *checker) checkPair(desc string, p, q *placed) {
	pEnd, qEnd := addSat(p.offset, p.size), addSat(q.offset, q.size)
	lo, hi := max(p.offset, q.offset), min(pEnd, qEnd)
	if lo >= hi {
		return
	}
	when := ""
	switch p.role {
	case roleScratch:
		if p.group == q.group {
			return // one buffer; checkAliases checks the group
		}
		if p.live == nil || q.live == nil || p.live.start > q.live.end || q.live.start > p.live.end {
			return
		}
		when = fmt.Sprintf(", both live at steps %d..%d", max(p.live.start, q.live.start), min(p.live.end, q.live.end))
	case roleConstant:
		if p.t.Buffer == q.t.Buffer && p.offset == q.offset {
			return
		}
	}
	c.r.add(Overlap, "%s at [%d, %d) and %s at [%d, %d) share bytes [%d, %d) of %s%s",
		c.name(p.ref), p.offset, pEnd, c.name(q.ref), q.offset, qEnd, lo, hi, desc, when)
}

// buffer is one alias group of a scratch arena: its members share one
// offset, and it holds bytes at every step where one of them is live.
type buffer struct {
	root    graph.TensorRef
	size    int64 // rounded up to the alignment
	members []*placed
}

func (b *buffer) liveAt(step int64) bool {
	for _, p := range b.members {
		if p.live != nil && p.live.start <= step && step <= p.live.end {
			return true
		}
	}
	return false
}

// peakOf returns the largest sum over steps of the live buffers' sizes. The
// sum only grows where a lifetime starts, so those steps suffice.
func peakOf(bufs []*buffer) int64 {
	var peak int64
	for _, b := range bufs {
		for _, p := range b.members {
			if p.live != nil {
				sum, _ := liveSum(bufs, p.live.start)
				peak = max(peak, sum)
			}
		}
	}
	return peak
}

// liveSum returns the bytes of the buffers live at step, and their roots.
func liveSum(bufs []*buffer, step int64) (int64, []graph.TensorRef) {
	var sum int64
	var roots []graph.TensorRef
	for _, b := range bufs {
		if b.liveAt(step) {
			sum = addSat(sum, b.size)
			roots = append(roots, b.root)
		}
	}
	return sum, roots
}

// checkPeak recomputes a scratch arena's lower bounds, the largest sum over
// steps of its live buffers' sizes rounded up to the arena's alignment (the
// plan's and its bank's): with each alias group one buffer, live over the
// union of its members' lifetimes (lower_bound), and with every tensor a
// buffer of its own (lower_bound_without_aliases). It checks total_size,
// both bounds, peak_step and peak_tensors, which must name the root of
// every group live at peak_step.
func (c *checker) checkPeak(a *arena, desc string, ps []*placed) {
	align := c.alignOf(a.memory)
	if a.total%align != 0 {
		c.r.add(HeightMismatch, "%s: total_size %d is not a multiple of the alignment %d", desc, a.total, align)
	}
	aligned := func(n int64) int64 { return addSat(n, align-1) / align * align }
	var alone, grouped []*buffer
	byRoot := map[graph.TensorRef]*buffer{}
	for _, p := range ps {
		alone = append(alone, &buffer{root: p.ref, size: aligned(p.size), members: []*placed{p}})
		b := byRoot[p.group]
		if b == nil {
			b = &buffer{root: p.group}
			byRoot[p.group] = b
			grouped = append(grouped, b)
		}
		b.size = max(b.size, aligned(p.size))
		b.members = append(b.members, p)
	}
	if bound := peakOf(grouped); a.lowerBound != bound {
		c.r.add(HeightMismatch, "%s: lower_bound is %d, but its buffers' peak is %d", desc, a.lowerBound, bound)
	}
	if bound := peakOf(alone); a.noAliases != bound {
		c.r.add(HeightMismatch, "%s: lower_bound_without_aliases is %d, but its tensors' peak is %d", desc, a.noAliases, bound)
	}
	if a.peakStep < 0 || a.peakStep >= c.tl.steps {
		c.r.add(Malformed, "%s.peak_step: %d is not a step of the timeline 0..%d", a.path, a.peakStep, c.tl.steps-1)
		return
	}
	sum, live := liveSum(grouped, a.peakStep)
	if sum != a.lowerBound {
		c.r.add(HeightMismatch, "%s: buffers live at peak_step %d take %d bytes, not lower_bound %d", desc, a.peakStep, sum, a.lowerBound)
	}
	if !sameRefs(live, a.peakTensors) {
		c.r.add(HeightMismatch, "%s: peak_tensors are %s, but the buffers live at peak_step %d are %s",
			desc, refList(a.peakTensors), a.peakStep, refList(live))
	}
}

func sameRefs(a, b []graph.TensorRef) bool {
	sorted := func(rs []graph.TensorRef) []graph.TensorRef {
		rs = slices.Clone(rs)
		slices.SortFunc(rs, cmpRef)
		return rs
	}
	return slices.Equal(sorted(a), sorted(b))
}

func refList(rs []graph.TensorRef) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// checkStaging checks a constant arena's mode and that its tensors name the
// memory their data is staged from.
func (c *checker) checkStaging(a *arena, desc string, ps []*placed) {
	var want *string
	switch a.mode {
	case "cold":
	case "staged":
		want = &a.source
	default:
		c.r.add(Malformed, "%s.mode: %q, want \"cold\" or \"staged\"", a.path, a.mode)
		return
	}
	for _, p := range ps {
		if (p.source == nil) != (want == nil) || (want != nil && *p.source != *want) {
			c.r.add(Malformed, "%s: binding.source_memory is %s, but %s is %s", p.path, strOrNull(p.source), desc, a.mode)
		}
	}
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}
