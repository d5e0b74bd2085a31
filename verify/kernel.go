package verify

import "fmt"

// indexKernelScratch makes a member of each kernel_scratch entry whose
// operator exists.
func (c *checker) indexKernelScratch() {
	for i := range c.doc.kernel {
		e := &c.doc.kernel[i]
		if c.operator(e.op) == nil {
			c.r.add(Malformed, "%s: op %v does not exist", e.path, e.op)
			continue
		}
		mb := &member{path: e.path, key: key{kind: scratchKey, op: e.op, index: e.index},
			what: fmt.Sprintf("%s scratch %d", c.opName(e.op), e.index), binding: e.binding, size: e.size, declared: e.size,
			name: e.name}
		mb.group = mb.key
		if c.onTimeline(e.start, e.end) {
			mb.live = &lifetime{path: e.path, start: e.start, end: e.end}
		} else {
			c.r.add(Malformed, "%s: %s lives over steps %d..%d, not inside the timeline 0..%d",
				e.path, mb.what, e.start, e.end, c.tl.steps-1)
		}
		c.addMember(mb)
	}
}

// checkKernelScratch checks each kernel scratch buffer: a scratch
// allocation of a positive size, with an index that is not negative, live
// exactly while its operator runs (every run of it, when its subgraph runs
// more than once).
func (c *checker) checkKernelScratch() {
	for _, p := range c.members {
		if p.key.kind != scratchKey {
			continue
		}
		if p.role != roleScratch {
			c.r.add(WrongClass, "%s is placed as %s; kernel scratch is scratch", p.what, p.role)
		}
		if p.source != nil {
			c.r.add(Malformed, "%s: kernel scratch has source_memory %q", p.path, *p.source)
		}
		if p.size <= 0 || p.key.index < 0 {
			c.r.add(Malformed, "%s: %s has size %d and index %d; both must be positive, the index may be 0", p.path, p.what, p.size, p.key.index)
		}
		if p.live == nil {
			continue
		}
		sp, ran := c.tl.spans[p.key.op]
		switch {
		case !ran:
			c.r.add(Malformed, "%s: %s, but its operator never runs", p.path, p.what)
		case p.live.start > sp.first || p.live.end < sp.last:
			c.r.add(UseOutsideLifetime, "%s lives over steps %d..%d, but its operator runs over steps %d..%d",
				p.what, p.live.start, p.live.end, sp.first, sp.last)
		case p.live.start != sp.first || p.live.end != sp.last:
			c.r.add(Malformed, "%s: %s lives over steps %d..%d, longer than its operator runs (%d..%d)",
				p.path, p.what, p.live.start, p.live.end, sp.first, sp.last)
		}
	}
}
