package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// checkArenas puts each allocation in the arena its role and memory name,
// then checks every arena.
func (c *checker) checkArenas() {
	members := map[*arena][]*placed{}
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
	for _, list := range [][]arena{c.doc.scratch, c.doc.persistent, c.doc.constant} {
		for i := range list {
			if ps, ok := members[&list[i]]; ok {
				c.checkArena(&list[i], ps)
			}
		}
	}
}

// checkArena checks the allocations of one arena: bounds, alignment, every
// pair for overlap, and the arena's recorded sizes.
func (c *checker) checkArena(a *arena, ps []*placed) {
	desc := fmt.Sprintf("%s arena %q", a.role, a.memory)
	var top int64
	for _, p := range ps {
		end := addSat(p.offset, p.size)
		top = max(top, end)
		if p.offset < 0 || end > a.total {
			c.r.add(OutOfBounds, "%s at [%d, %d) lies outside [0, %d) of %s", c.name(p.ref), p.offset, end, a.total, desc)
		}
		if p.offset%c.doc.alignment != 0 {
			c.r.add(Misaligned, "%s at offset %d in %s is not a multiple of %d", c.name(p.ref), p.offset, desc, c.doc.alignment)
		}
	}
	for i, p := range ps {
		for _, q := range ps[i+1:] {
			c.checkPair(desc, p, q)
		}
	}
	if a.used != top {
		c.r.add(HeightMismatch, "%s: used is %d, but its highest tensor ends at %d", desc, a.used, top)
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

// checkPair reports two allocations of one arena that share a byte while
// both hold data: scratch tensors when their lifetimes share a step,
// persistent tensors always, constants unless they are one model buffer at
// one offset.
func (c *checker) checkPair(desc string, p, q *placed) {
	pEnd, qEnd := addSat(p.offset, p.size), addSat(q.offset, q.size)
	lo, hi := max(p.offset, q.offset), min(pEnd, qEnd)
	if lo >= hi {
		return
	}
	when := ""
	switch p.role {
	case roleScratch:
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

// checkPeak recomputes a scratch arena's lower bound, the largest sum over
// steps of its live tensors' sizes rounded up to the alignment, and checks
// total_size, lower_bound, peak_step and peak_tensors against it.
func (c *checker) checkPeak(a *arena, desc string, ps []*placed) {
	align := c.doc.alignment
	if a.total%align != 0 {
		c.r.add(HeightMismatch, "%s: total_size %d is not a multiple of the alignment %d", desc, a.total, align)
	}
	// at returns the aligned bytes and the tensors live at a step.
	at := func(step int64) (int64, []graph.TensorRef) {
		var sum int64
		var live []graph.TensorRef
		for _, p := range ps {
			if p.live != nil && p.live.start <= step && step <= p.live.end {
				sum = addSat(sum, addSat(p.size, align-1)/align*align)
				live = append(live, p.ref)
			}
		}
		return sum, live
	}
	// The sum only grows where a lifetime starts, so those steps suffice.
	var bound int64
	for _, p := range ps {
		if p.live != nil {
			sum, _ := at(p.live.start)
			bound = max(bound, sum)
		}
	}
	if a.lowerBound != bound {
		c.r.add(HeightMismatch, "%s: lower_bound is %d, but its tensors' peak is %d", desc, a.lowerBound, bound)
	}
	if a.peakStep < 0 || a.peakStep >= c.tl.steps {
		c.r.add(Malformed, "%s.peak_step: %d is not a step of the timeline 0..%d", a.path, a.peakStep, c.tl.steps-1)
		return
	}
	sum, live := at(a.peakStep)
	if sum != a.lowerBound {
		c.r.add(HeightMismatch, "%s: tensors live at peak_step %d take %d bytes, not lower_bound %d", desc, a.peakStep, sum, a.lowerBound)
	}
	if !sameRefs(live, a.peakTensors) {
		c.r.add(HeightMismatch, "%s: peak_tensors are %s, but %s are live at peak_step %d",
			desc, refList(a.peakTensors), refList(live), a.peakStep)
	}
}

func sameRefs(a, b []graph.TensorRef) bool {
	sorted := func(rs []graph.TensorRef) []graph.TensorRef {
		rs = slices.Clone(rs)
		slices.SortFunc(rs, func(x, y graph.TensorRef) int {
			switch {
			case less(x, y):
				return -1
			case less(y, x):
				return 1
			}
			return 0
		})
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
