package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Roles of a tensor allocation, as plan.json spells them.
const (
	roleScratch    = "scratch"
	rolePersistent = "persistent"
	roleConstant   = "constant"
)

// Plan checks planJSON, a plan.json (docs/plan-format.md), against the model
// it was made for, and returns every violation found, or nil when the plan
// is clean. See the package doc for the rules.
func Plan(m *graph.Model, planJSON []byte) []Violation {
	c := &checker{m: m}
	if m == nil {
		c.r.add(Malformed, "model is nil")
		return c.r
	}
	tl, err := walk(m)
	if err != nil {
		c.r.add(Malformed, "%v", err)
		return c.r
	}
	doc, bad := decode(planJSON)
	c.r = append(c.r, bad...)
	if doc == nil {
		return c.r
	}
	c.doc, c.tl = doc, tl
	c.checkHeader()
	c.checkPlatform()
	c.placeTensors()
	c.checkSkipped()
	c.checkUnplaced()
	c.attachLifetimes()
	c.checkUses()
	c.checkAliases()
	c.checkVariables()
	c.checkArenas()
	c.checkBanks()
	c.checkRules()
	c.checkSpills()
	if len(c.r) == 0 {
		return nil
	}
	return c.r
}

// checker holds one run of Plan.
type checker struct {
	m   *graph.Model
	doc *planDoc
	tl  *timeline
	r   report
	// placed maps each tensor to its allocation, for allocations that
	// name an existing tensor once.
	placed map[graph.TensorRef]*placed
	order  []*placed // placed, in file order
	// skips maps each tensor skipped_tensors names once to its entry.
	skips map[graph.TensorRef]*skipped
	// banks maps each bank name to its platform entry (the first, when
	// a name is given twice); writable lists the writable banks in
	// allocation order.
	banks    map[string]*bank
	writable []*bank
	rulesOK  bool // every rule is well formed; set by checkRules
}

// placed is an allocation of an existing tensor.
type placed struct {
	alloc
	t    *graph.Tensor
	size int64     // the tensor's real byte size, used for every range check
	live *lifetime // scratch only; nil when plan.json gives none
	// group is the root of the tensor's alias group: alias_of, or the
	// tensor itself. Set by checkAliases.
	group graph.TensorRef
}

// name formats a tensor as "subgraph:tensor (name)".
func (c *checker) name(r graph.TensorRef) string {
	return fmt.Sprintf("%d:%d (%s)", r.Subgraph, r.Tensor, c.m.Subgraphs[r.Subgraph].Tensors[r.Tensor].Name)
}

// tensor returns the tensor r names, or nil when there is none.
func (c *checker) tensor(r graph.TensorRef) *graph.Tensor {
	if r.Subgraph < 0 || int(r.Subgraph) >= len(c.m.Subgraphs) {
		return nil
	}
	ts := c.m.Subgraphs[r.Subgraph].Tensors
	if r.Tensor < 0 || int(r.Tensor) >= len(ts) {
		return nil
	}
	return &ts[r.Tensor]
}

func (c *checker) checkHeader() {
	if c.doc.subgraphs != int64(len(c.m.Subgraphs)) {
		c.r.add(Malformed, "plan.json: model.subgraphs is %d, the model has %d", c.doc.subgraphs, len(c.m.Subgraphs))
	}
	if c.doc.steps != c.tl.steps {
		c.r.add(Malformed, "plan.json: model.steps is %d, the model's timeline has %d", c.doc.steps, c.tl.steps)
	}
	if c.doc.alignment < 1 {
		c.r.add(Malformed, "plan.json: alignment %d is not positive", c.doc.alignment)
		c.doc.alignment = 1
	}
}

// used reports the tensors the timeline uses.
func (c *checker) used() map[graph.TensorRef]bool {
	u := map[graph.TensorRef]bool{}
	for _, x := range c.tl.uses {
		u[x.ref] = true
	}
	return u
}

// role returns the role a used tensor's allocation must have, or "" when
// the tensor needs no bytes: is_variable state is persistent (TFLM places
// variables in its persistent area even when their buffer has data), data
// in a model buffer is constant, everything else is scratch.
func (c *checker) role(t *graph.Tensor) string {
	switch {
	case t.Type == graph.Resource || (t.Size <= 0 && !c.m.HasData(t)):
		return ""
	case t.IsVariable:
		return rolePersistent
	case c.m.HasData(t):
		return roleConstant
	}
	return roleScratch
}

// size returns a tensor's byte size: its buffer's length for constants, its
// Size otherwise.
func (c *checker) size(t *graph.Tensor) int64 {
	if !t.IsVariable && c.m.HasData(t) {
		return int64(len(c.m.Buffers[t.Buffer].Data))
	}
	return t.Size
}

func less(a, b graph.TensorRef) bool {
	return a.Subgraph < b.Subgraph || (a.Subgraph == b.Subgraph && a.Tensor < b.Tensor)
}

// placeTensors checks each allocation against its tensor.
func (c *checker) placeTensors() {
	c.placed = map[graph.TensorRef]*placed{}
	used := c.used()
	var prev *alloc
	for i := range c.doc.allocs {
		a := &c.doc.allocs[i]
		if prev != nil && !less(prev.ref, a.ref) && prev.ref != a.ref {
			c.r.add(Malformed, "%s: tensor %v comes after %v; allocations must be ordered by (subgraph, tensor)", a.path, a.ref, prev.ref)
		}
		prev = a
		t := c.tensor(a.ref)
		if t == nil {
			c.r.add(Malformed, "%s: tensor %v does not exist", a.path, a.ref)
			continue
		}
		if c.placed[a.ref] != nil {
			c.r.add(Malformed, "%s: %s is allocated twice", a.path, c.name(a.ref))
			continue
		}
		p := &placed{alloc: *a, t: t, size: c.size(t)}
		c.placed[a.ref] = p
		c.order = append(c.order, p)
		if a.name != t.Name {
			c.r.add(Malformed, "%s: name %q, but %v is named %q", a.path, a.name, a.ref, t.Name)
		}
		if a.size != p.size {
			c.r.add(Malformed, "%s: %s has size %d in the plan, but %d bytes", a.path, c.name(a.ref), a.size, p.size)
		}
		c.checkDynamic(a, t)
		switch a.role {
		case roleScratch, rolePersistent, roleConstant:
		default:
			c.r.add(Malformed, "%s: unknown role %q", a.path, a.role)
			continue
		}
		if a.source != nil && a.role != roleConstant {
			c.r.add(Malformed, "%s: %s tensor %s has source_memory %q", a.path, a.role, c.name(a.ref), *a.source)
		}
		want := c.role(t)
		if !used[a.ref] {
			want = ""
		}
		switch {
		case want == "":
			c.r.add(WrongClass, "%s is placed as %s, but needs no bytes (unused, empty or a resource)", c.name(a.ref), a.role)
		case want != a.role:
			c.r.add(WrongClass, "%s is placed as %s, but is %s", c.name(a.ref), a.role, want)
		}
	}
}

// checkDynamic checks dynamic_shape: present, and true, exactly when the
// tensor's shape_signature has an unknown dimension.
func (c *checker) checkDynamic(a *alloc, t *graph.Tensor) {
	switch {
	case a.dynamic != nil && !*a.dynamic:
		c.r.add(Malformed, "%s.dynamic_shape: false; the key is present only when true", a.path)
	case a.dynamic != nil && !t.IsDynamic():
		c.r.add(Malformed, "%s: %s has dynamic_shape, but its shape_signature %v has no unknown dimension", a.path, c.name(a.ref), t.ShapeSignature)
	case a.dynamic == nil && t.IsDynamic():
		c.r.add(Malformed, "%s: %s has shape_signature %v, but no dynamic_shape", a.path, c.name(a.ref), t.ShapeSignature)
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
			c.r.add(Unplaced, "%s (%s, %d bytes), used by %s, is skipped as %q, but needs bytes", c.name(x.ref), c.role(t), c.size(t), x.where, s.reason)
			continue
		}
		c.r.add(Unplaced, "%s (%s, %d bytes), used by %s, has no allocation", c.name(x.ref), c.role(t), c.size(t), x.where)
	}
}

// attachLifetimes pairs each scratch allocation with its lifetime.
func (c *checker) attachLifetimes() {
	var prev *lifetime
	for i := range c.doc.lifetimes {
		l := &c.doc.lifetimes[i]
		if prev != nil && !less(prev.ref, l.ref) && prev.ref != l.ref {
			c.r.add(Malformed, "%s: tensor %v comes after %v; lifetimes must be ordered by (subgraph, tensor)", l.path, l.ref, prev.ref)
		}
		prev = l
		p := c.placed[l.ref]
		switch {
		case c.tensor(l.ref) == nil:
			c.r.add(Malformed, "%s: tensor %v does not exist", l.path, l.ref)
		case p == nil || p.role != roleScratch:
			c.r.add(Malformed, "%s: %s has a lifetime but no scratch allocation", l.path, c.name(l.ref))
		case p.live != nil:
			c.r.add(Malformed, "%s: %s has a second lifetime", l.path, c.name(l.ref))
		case l.start < 0 || l.start > l.end || l.end >= c.tl.steps:
			c.r.add(Malformed, "%s: %s lives over steps %d..%d, not inside the timeline 0..%d",
				l.path, c.name(l.ref), l.start, l.end, c.tl.steps-1)
		default:
			p.live = l
		}
	}
	for _, p := range c.order {
		if p.role == roleScratch && p.live == nil && !c.hasLifetimeEntry(p.ref) {
			c.r.add(Malformed, "%s: scratch tensor %s has no tensor_lifetimes entry", p.path, c.name(p.ref))
		}
	}
}

func (c *checker) hasLifetimeEntry(r graph.TensorRef) bool {
	for _, l := range c.doc.lifetimes {
		if l.ref == r {
			return true
		}
	}
	return false
}

// checkUses reports every use of a scratch tensor outside its lifetime,
// once per tensor and user.
func (c *checker) checkUses() {
	type key struct {
		ref   graph.TensorRef
		where string
	}
	seen := map[key]bool{}
	for _, x := range c.tl.uses {
		p := c.placed[x.ref]
		if p == nil || p.role != roleScratch || p.live == nil {
			continue
		}
		if p.live.start <= x.first && x.last <= p.live.end {
			continue
		}
		k := key{x.ref, x.where}
		if seen[k] {
			continue
		}
		seen[k] = true
		c.r.add(UseOutsideLifetime, "%s is used by %s at steps %d..%d, outside its lifetime %d..%d",
			c.name(x.ref), x.where, x.first, x.last, p.live.start, p.live.end)
	}
}
