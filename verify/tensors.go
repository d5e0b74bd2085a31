package verify

import "github.com/heliac/heliac/graph"

// indexTensors makes a member of each tensor_allocs entry that names an
// existing tensor, in (subgraph, tensor) order. Each names another
// tensor: decode checked that an entry's tensor is its key's.
func (c *checker) indexTensors() {
	c.placed = map[graph.TensorRef]*member{}
	c.byKey = map[key]*member{}
	for i := range c.doc.allocs {
		a := &c.doc.allocs[i]
		t := c.tensor(a.ref)
		if t == nil {
			c.r.add(Malformed, "%s: tensor %v does not exist", a.path, a.ref)
			continue
		}
		mb := &member{path: a.path, key: tensorKeyOf(a.ref), what: c.name(a.ref), binding: a.binding, size: c.size(t), declared: a.size,
			t: t, aliasOf: a.aliasOf, aliasOffset: a.aliasOffset, inPlace: a.inPlace, copy: a.copy, dynamic: a.dynamic, name: a.name}
		mb.group = mb.key
		c.placed[a.ref] = mb
		c.addMember(mb)
	}
}

// indexLifetimes pairs each scratch tensor with its tensor_lifetimes
// entry: every key of tensor_lifetimes is the id of a scratch tensor's
// tensor_allocs entry, and every scratch tensor has one.
func (c *checker) indexLifetimes() {
	listed := map[graph.TensorRef]bool{}
	allocated := map[graph.TensorRef]bool{}
	for _, a := range c.doc.allocs {
		allocated[a.ref] = true
	}
	for i := range c.doc.lifetimes {
		l := &c.doc.lifetimes[i]
		listed[l.ref] = true
		p := c.placed[l.ref]
		switch {
		case !allocated[l.ref]:
			c.r.add(Malformed, "%s: tensor_allocs has no entry of id \"%d:%d\"; a lifetime is a scratch tensor allocation's", l.path, l.ref.Subgraph, l.ref.Tensor)
		case p == nil:
			// The tensor_allocs entry is reported.
		case p.role != roleScratch:
			c.r.add(Malformed, "%s: %s has a lifetime but no scratch allocation", l.path, c.name(l.ref))
		case !c.onTimeline(l.start, l.end):
			c.r.add(Malformed, "%s: %s lives over steps %d..%d, not inside the timeline 0..%d",
				l.path, c.name(l.ref), l.start, l.end, c.tl.steps-1)
		default:
			p.live = l
		}
	}
	for _, a := range c.doc.allocs {
		if p := c.placed[a.ref]; p != nil && p.role == roleScratch && !listed[a.ref] {
			c.r.add(Malformed, "%s: scratch tensor %s has no tensor_lifetimes entry", a.path, c.name(a.ref))
		}
	}
}

// onTimeline reports whether the steps start..end are an interval of the
// timeline.
func (c *checker) onTimeline(start, end int64) bool {
	return start >= 0 && start <= end && end < c.tl.steps
}

// checkTensors checks each tensor allocation against its tensor: name,
// size, dynamic_shape and role.
func (c *checker) checkTensors() {
	used := c.used()
	for _, p := range c.members {
		if p.key.kind != tensorKey {
			continue
		}
		if p.name != p.t.Name {
			c.r.add(Malformed, "%s: name %s, but %v is named %s", p.path, shown(p.name), p.key.ref, shown(p.t.Name))
		}
		if p.declared != p.size {
			c.r.add(Malformed, "%s: %s has size %d in the plan, but %d bytes", p.path, p.what, p.declared, p.size)
		}
		c.checkDynamic(p)
		if !knownRole(p.role) {
			c.r.add(Malformed, "%s: unknown role %q", p.path, p.role)
			continue
		}
		if p.source != nil && p.role != roleConstant {
			c.r.add(Malformed, "%s: %s tensor %s has source_memory %q", p.path, p.role, p.what, *p.source)
		}
		want := c.role(p.t)
		if !used[p.key.ref] {
			want = ""
		}
		switch {
		case want == "":
			c.r.add(WrongClass, "%s is placed as %s, but needs no bytes (unused, empty or a resource)", p.what, p.role)
		case want != p.role:
			c.r.add(WrongClass, "%s is placed as %s, but is %s", p.what, p.role, want)
		}
	}
}

func knownRole(role string) bool {
	return role == roleScratch || role == rolePersistent || role == roleConstant
}

// checkDynamic checks dynamic_shape: present, and true, exactly when the
// tensor's shape_signature has an unknown dimension.
func (c *checker) checkDynamic(p *member) {
	switch {
	case p.dynamic != nil && !*p.dynamic:
		c.r.add(Malformed, "%s.dynamic_shape: false; the key is present only when true", p.path)
	case p.dynamic != nil && !p.t.IsDynamic():
		c.r.add(Malformed, "%s: %s has dynamic_shape, but its shape_signature %v has no unknown dimension", p.path, p.what, p.t.ShapeSignature)
	case p.dynamic == nil && p.t.IsDynamic():
		c.r.add(Malformed, "%s: %s has shape_signature %v, but no dynamic_shape", p.path, p.what, p.t.ShapeSignature)
	}
}

// checkUnplaced reports every used tensor that needs bytes and has no
// allocation, whether or not skipped_tensors lists it.
func (c *checker) checkUnplaced() {
	seen := map[graph.TensorRef]bool{}
	for _, x := range c.tl.uses {
		if seen[x.ref] {
			continue
		}
		seen[x.ref] = true
		t := c.tensor(x.ref)
		if c.role(t) == "" || c.placed[x.ref] != nil {
			continue
		}
		if s := c.skips[x.ref]; s != nil {
			c.r.add(Unplaced, "%s (%s, %d bytes), used by %s, is skipped as %q, but needs bytes", c.name(x.ref), c.role(t), c.size(t), c.where(x), s.reason)
			continue
		}
		c.r.add(Unplaced, "%s (%s, %d bytes), used by %s, has no allocation", c.name(x.ref), c.role(t), c.size(t), c.where(x))
	}
}

// checkUses reports every use of a scratch tensor outside its lifetime,
// once per tensor and user.
func (c *checker) checkUses() {
	type userOf struct {
		ref graph.TensorRef
		by  user
	}
	seen := map[userOf]bool{}
	for _, x := range c.tl.uses {
		p := c.placed[x.ref]
		if p == nil || p.role != roleScratch || p.live == nil {
			continue
		}
		if p.live.start <= x.first && x.last <= p.live.end {
			continue
		}
		k := userOf{x.ref, x.by}
		if seen[k] {
			continue
		}
		seen[k] = true
		c.r.add(UseOutsideLifetime, "%s is used by %s at steps %d..%d, outside its lifetime %d..%d",
			p.what, c.where(x), x.first, x.last, p.live.start, p.live.end)
	}
}

// orderOf returns a function to call on each entry of a list that must be
// ordered by (subgraph, tensor); it reports an entry that comes after a
// later tensor's.
func (c *checker) orderOf(list string) func(path string, ref graph.TensorRef) {
	var prev *graph.TensorRef
	return func(path string, ref graph.TensorRef) {
		if prev != nil && less(ref, *prev) {
			c.r.add(Malformed, "%s: tensor %v comes after %v; %s must be ordered by (subgraph, tensor)", path, ref, *prev, list)
		}
		prev = &ref
	}
}
