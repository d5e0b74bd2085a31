package verify

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// Reasons a skipped_tensors entry may give, as plan.json spells them.
const (
	reasonZeroSize = "zero-size"
	reasonResource = "resource handle"
	reasonString   = "run-time string: size unknown ahead of time"
)

// noBytes returns every reason for which a tensor takes no bytes: a zero
// dimension, a resource handle, or a STRING tensor without constant data,
// whose size only the firmware knows.
func (c *checker) noBytes(t *graph.Tensor) []string {
	var why []string
	if slices.Contains(t.Shape, 0) && !c.m.HasData(t) {
		why = append(why, reasonZeroSize)
	}
	if t.Type == graph.Resource {
		why = append(why, reasonResource)
	}
	if t.Type == graph.String && !c.m.HasData(t) {
		why = append(why, reasonString)
	}
	return why
}

// indexSkipped maps each tensor that skipped_tensors names once, in
// (subgraph, tensor) order, to its entry.
func (c *checker) indexSkipped() {
	c.skips = map[graph.TensorRef]*skipped{}
	order := c.orderOf("skipped tensors")
	for i := range c.doc.skipped {
		s := &c.doc.skipped[i]
		order(s.path, s.ref)
		switch {
		case c.tensor(s.ref) == nil:
			c.r.add(Malformed, "%s: tensor %v does not exist", s.path, s.ref)
		case c.skips[s.ref] != nil:
			c.r.add(Malformed, "%s: %s is skipped twice", s.path, c.name(s.ref))
		default:
			c.skips[s.ref] = s
		}
	}
}

// checkSkipped checks skipped_tensors: each entry names a tensor that the
// timeline uses, that has no allocation, and that takes no bytes for the
// reason given. A skipped tensor that does need bytes is left to
// checkUnplaced. Conversely, every used tensor that takes no bytes for one
// of the three reasons must be listed.
func (c *checker) checkSkipped() {
	used := c.used()
	for i := range c.doc.skipped {
		s := &c.doc.skipped[i]
		if c.skips[s.ref] != s {
			continue // reported by indexSkipped
		}
		t := c.tensor(s.ref)
		if s.name != t.Name {
			c.r.add(Malformed, "%s: name %s, but %v is named %s", s.path, shown(s.name), s.ref, shown(t.Name))
		}
		switch s.reason {
		case reasonZeroSize, reasonResource, reasonString:
		default:
			c.r.add(Malformed, "%s.reason: unknown reason %q", s.path, s.reason)
			continue
		}
		switch {
		case !used[s.ref]:
			c.r.add(Malformed, "%s: %s is skipped, but nothing uses it", s.path, c.name(s.ref))
		case c.placed[s.ref] != nil:
			c.r.add(Malformed, "%s: %s is skipped, but also allocated at %s", s.path, c.name(s.ref), c.placed[s.ref].path)
		case c.role(t) != "":
			// Needs bytes: checkUnplaced reports it.
		case !slices.Contains(c.noBytes(t), s.reason):
			c.r.add(Malformed, "%s: %s is skipped as %q, but has type %s and shape %v",
				s.path, c.name(s.ref), s.reason, t.Type, t.Shape)
		}
	}
	seen := map[graph.TensorRef]bool{}
	for _, x := range c.tl.uses {
		t := c.tensor(x.ref)
		if seen[x.ref] || c.skips[x.ref] != nil || c.placed[x.ref] != nil || c.role(t) != "" {
			continue
		}
		seen[x.ref] = true
		if why := c.noBytes(t); len(why) > 0 {
			c.r.add(Malformed, "%s, used by %s, takes no bytes (%s) but is not in skipped_tensors", c.name(x.ref), c.where(x), why[0])
		}
	}
}
