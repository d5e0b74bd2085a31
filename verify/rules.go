package verify

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// want is where the rules put a tensor.
type want struct {
	memory string
	source string // staged constants: the bank copied from; else ""
	pinned bool   // by a tensor or name rule: it never spills
	by     string // "rules[3]", or "default"
}

func (w want) String() string {
	s := fmt.Sprintf("%q", w.memory)
	if w.source != "" {
		s += fmt.Sprintf(" staged from %q", w.source)
	}
	return s + " (" + w.by + ")"
}

// parseRef parses "subgraph:tensor", two decimal indices.
func parseRef(s string) (graph.TensorRef, bool) {
	sg, t, ok := strings.Cut(s, ":")
	digits := func(x string) bool { return x != "" && strings.Trim(x, "0123456789") == "" }
	if !ok || !digits(sg) || !digits(t) {
		return graph.TensorRef{}, false
	}
	a, errA := strconv.ParseInt(sg, 10, 32)
	b, errB := strconv.ParseInt(t, 10, 32)
	if errA != nil || errB != nil {
		return graph.TensorRef{}, false
	}
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(a), Tensor: graph.TensorID(b)}, true
}

// checkRuleList checks each rule on its own: one selector, a known class,
// a tensor as subgraph:tensor, a valid glob, banks of the platform, and a
// source only where constants may match. It reports whether all are fine;
// the rule checks run only then, as a bad rule says nothing reliable about
// where tensors should be.
func (c *checker) checkRuleList() bool {
	ok := true
	bad := func(r *rule, format string, args ...any) {
		c.r.add(Malformed, "%s: "+format, append([]any{r.path}, args...)...)
		ok = false
	}
	for i := range c.doc.rules {
		r := &c.doc.rules[i]
		var sel []string
		for _, s := range []struct{ key, value string }{{"class", r.class}, {"tensor", r.tensor}, {"name", r.name}} {
			if s.value != "" {
				sel = append(sel, s.key)
			}
		}
		if len(sel) != 1 {
			bad(r, "give exactly one of class, tensor and name, not %d (%s)", len(sel), strings.Join(sel, ", "))
			continue
		}
		switch {
		case r.class != "":
			if r.class != roleScratch && r.class != rolePersistent && r.class != roleConstant {
				bad(r, "class %q is not scratch, persistent or constant", r.class)
			} else if r.source != "" && r.class != roleConstant {
				bad(r, "source %q on a %s rule; only constants are staged", r.source, r.class)
			}
		case r.tensor != "":
			if _, isRef := parseRef(r.tensor); !isRef {
				bad(r, "tensor %q is not subgraph:tensor", r.tensor)
			}
		default:
			if _, err := path.Match(r.name, ""); err != nil {
				bad(r, "name %q is not a valid glob: %v", r.name, err)
			}
		}
		switch {
		case r.hottest < 0:
			bad(r, "hottest %d is negative", r.hottest)
		case r.hottest > 0 && r.class != roleConstant:
			bad(r, "hottest on a rule that is not class constant")
		case r.hottest > 0 && r.source == "" && r.memory == c.constBank():
			bad(r, "hottest keeps constants cold in %q, where every constant is by default", r.memory)
		case r.hottest > 0:
			for j := range c.doc.rules {
				if o := &c.doc.rules[j]; j != i && o.class == r.class && o.memory == r.memory && o.source == r.source {
					bad(r, "hottest puts constants where %s puts every constant: which it takes cannot be told", o.path)
					break
				}
			}
		}
		if !c.knownBank(r.path, "memory", r.memory) {
			ok = false
		}
		if r.source != "" && !c.knownBank(r.path, "source", r.source) {
			ok = false
		}
	}
	return ok
}

// rank is 2 when r names tensor allocation p (by index or name), 1 when
// it names p's class, 0 otherwise. Resource variables and kernel scratch
// are placed by class rules only.
func rank(r *rule, p *member) int {
	switch {
	case r.tensor != "":
		if ref, ok := parseRef(r.tensor); ok && p.key.kind == tensorKey && ref == p.key.ref {
			return 2
		}
	case r.name != "":
		if p.key.kind == tensorKey {
			if ok, _ := path.Match(r.name, p.t.Name); ok {
				return 2
			}
		}
	case r.class != "":
		if r.class == p.role {
			return 1
		}
	}
	return 0
}

// wantOf returns where the rules put p. By default scratch and persistent
// allocations go to the first writable bank and constants, cold, to the
// constant bank. A rule naming the tensor beats one naming its class;
// among rules of one rank the later wins. A rule with hottest speaks only
// for the constants the plan places as it says (checkHottest checks that
// they are the hottest); for the others the rules below it decide.
func (c *checker) wantOf(p *member) want {
	w := want{by: "default"}
	if p.role == roleConstant {
		w.memory = c.constBank()
	} else if len(c.writable) > 0 {
		w.memory = c.writable[0].name
	}
	best := 0
	for i := range c.doc.rules {
		r := &c.doc.rules[i]
		rk := rank(r, p)
		if rk == 0 || rk < best || r.hottest > 0 && !r.takes(p) {
			continue
		}
		best = rk
		w = want{memory: r.memory, pinned: rk == 2, by: r.path}
		if p.role == roleConstant {
			w.source = r.source
		}
	}
	return w
}

// checkRules checks that every allocation is where the rules put it (an
// alias group as its root): a tensor a tensor or name rule names is in
// exactly that memory; any other allocation is in the memory its class
// rule or the default asks for, or spills records its moves (checkSpills
// checks those); a constant is staged from exactly the source its rule
// gives.
func (c *checker) checkRules() {
	if !c.rulesOK {
		return
	}
	spilled := map[key]bool{}
	for _, s := range c.doc.spills {
		spilled[s.key] = true
	}
	for _, p := range c.members {
		if !c.ruleChecked(p) || c.banks[p.memory] == nil {
			continue // an unknown memory is Malformed already
		}
		w := c.wantOf(p)
		moved := p.memory != w.memory
		switch {
		case moved && w.pinned:
			c.r.add(RuleViolated, "%s is in %q, but %s pins it to %q", p.what, p.memory, w.by, w.memory)
			continue
		case moved && !spilled[p.key]:
			c.r.add(RuleViolated, "%s is in %q, but asks for %s, and spills records no move", p.what, p.memory, w)
			continue
		}
		// The source is checked once the memory is right; an unknown
		// one is Malformed already.
		if src := p.stagedFrom(); p.role == roleConstant && src != w.source && (src == "" || c.banks[src] != nil) {
			c.r.add(RuleViolated, "%s has source_memory %s, but asks for %s", p.what, strOrNull(p.source), w)
		}
	}
}

// ruleChecked reports whether the rules apply to p itself: it has the role
// its kind and tensor give (else WrongClass says so already) and is not a
// member of an alias group with a placed root (members follow their root,
// and checkAliases checks they share its memory).
func (c *checker) ruleChecked(p *member) bool {
	switch p.key.kind {
	case tensorKey:
		if p.role != c.role(p.t) {
			return false
		}
	case variableKey:
		return p.role == rolePersistent
	case scratchKey:
		return p.role == roleScratch
	}
	return p.group == p.key || c.byKey[p.group] == nil
}

// checkSpills checks every spills entry: it names an allocation (the root,
// for an alias group) by its name, and moves it from a writable bank to a
// later one; and the entries of one allocation, in file order, lead from
// the memory its rules ask for to the memory it is in, each starting where
// the one before ended. A tensor a rule pins never spills.
func (c *checker) checkSpills() {
	byKey := map[key][]*spill{}
	for i := range c.doc.spills {
		s := &c.doc.spills[i]
		if s.key.kind == tensorKey && c.tensor(s.key.ref) == nil {
			c.r.add(Malformed, "%s: tensor %v does not exist", s.path, s.key.ref)
			continue
		}
		p := c.byKey[s.key]
		switch {
		case p == nil:
			c.r.add(Malformed, "%s: %s has no allocation", s.path, c.describe(s.key))
			continue
		case s.name != c.spillName(p):
			c.r.add(Malformed, "%s: name %s, but %s is named %s", s.path, shown(s.name), p.what, shown(c.spillName(p)))
		}
		switch {
		case p.group != p.key && c.byKey[p.group] != nil:
			c.r.add(Malformed, "%s: %s is a member of the alias group of %s, which spills in its place", s.path, p.what, c.byKey[p.group].what)
			continue
		case !c.ruleChecked(p):
			continue // its role is wrong, and reported
		}
		from, to := c.writableRank(s.from), c.writableRank(s.to)
		switch {
		case from < 0 || to < 0:
			c.r.add(Malformed, "%s: %s moves from %q to %q, but spills move between writable banks", s.path, p.what, s.from, s.to)
			continue
		case to <= from:
			c.r.add(Malformed, "%s: %s moves from %q to %q, which does not come after it in allocation order", s.path, p.what, s.from, s.to)
			continue
		}
		byKey[s.key] = append(byKey[s.key], s)
	}
	if !c.rulesOK {
		return
	}
	for _, p := range c.members {
		chain := byKey[p.key]
		if len(chain) == 0 || c.byKey[p.key] != p {
			continue
		}
		w := c.wantOf(p)
		if w.pinned {
			c.r.add(Malformed, "%s: %s spills, but %s pins it to %q", chain[0].path, p.what, w.by, w.memory)
			continue
		}
		at := w.memory
		for _, s := range chain {
			if s.from != at {
				c.r.add(Malformed, "%s: %s moves from %q, but it was in %q (it asks for %s)", s.path, p.what, s.from, at, w)
			}
			at = s.to
		}
		if at != p.memory {
			c.r.add(Malformed, "%s: %s ends in %q after its spills, but is in %q", chain[len(chain)-1].path, p.what, at, p.memory)
		}
	}
}

// spillName is the name a spills entry gives an allocation: the tensor's
// name, the variable's shared_name, the kernel scratch entry's name.
func (c *checker) spillName(p *member) string {
	switch p.key.kind {
	case tensorKey:
		return p.t.Name
	case variableKey:
		return p.key.variable.shared
	}
	return p.name
}

// describe names an allocation key that may not resolve.
func (c *checker) describe(k key) string {
	if k.kind == tensorKey {
		return c.name(k.ref)
	}
	return k.String()
}
