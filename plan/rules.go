package plan

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// Rule places the tensors that one selector matches in a bank. Exactly one
// of Class, Tensor and Name is set. Package config reads rules from files.
type Rule struct {
	// Class selects every tensor of a class: scratch, persistent or
	// constant.
	Class string `json:"class,omitempty" yaml:"class,omitempty"`
	// Tensor selects one tensor as "subgraph:tensor", e.g. "0:12".
	Tensor string `json:"tensor,omitempty" yaml:"tensor,omitempty"`
	// Name selects the tensors whose name matches a path.Match glob; as in
	// path.Match, '*' does not match '/'.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Memory is the bank the tensors live in at run time.
	Memory string `json:"memory" yaml:"memory"`
	// Source, for constants only, is the read-only bank their data is
	// copied from into Memory before the first run (staging).
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
	// Hottest, on a constant class rule, is a byte budget: the rule takes
	// only the constants with the most bytes read per inference per byte
	// (package traffic's estimate), hottest first, as long as their bytes
	// in the rule's arena (each rounded up to the bank's alignment; one
	// copy per model buffer) stay within it; the others go where the
	// rules before it, or the default, put them. 0: every constant.
	Hottest int64 `json:"hottest,omitempty" yaml:"hottest,omitempty"`
}

// ValidateRules checks rules against p: each has exactly one selector; a
// class is scratch, persistent or constant; a tensor parses as
// subgraph:tensor; a name is a valid glob; memory names a bank of p; source
// is given only to constant, tensor or name rules and names a read-only
// bank of p, memory then being writable; scratch and persistent rules name
// a writable bank; and a constant rule without source names a read-only bank
// or RAM that BootInit says is initialised at boot; hottest is not
// negative, and only on a constant class rule that no other constant class
// rule shares its memory and source with (the plan could not tell the
// constants it takes from the other rule's). Rule numbers in the
// errors are indices into rules. It reports every bad rule, one a line.
func ValidateRules(rules []Rule, p Platform) error {
	return validateRules(rules, &p)
}

// ValidateRuleForms checks what ValidateRules checks without a platform:
// the selector, class, tensor and glob of each rule, that memory is given,
// and that source is not given to scratch or persistent rules. It is for
// rules whose platform is not known yet.
func ValidateRuleForms(rules []Rule) error {
	return validateRules(rules, nil)
}

// validateRules checks rules; with a nil platform, only what needs none.
func validateRules(rules []Rule, p *Platform) error {
	var errs []error
	for i, r := range rules {
		if err := checkRule(i, r, p); err != nil {
			errs = append(errs, err)
			continue
		}
		if r.Hottest <= 0 {
			continue
		}
		for j, o := range rules {
			if j != i && o.Class == r.Class && o.Memory == r.Memory && o.Source == r.Source {
				errs = append(errs, fmt.Errorf("plan: rule %d: hottest puts constants in %s%s as rule %d does for every constant; drop one, or send rule %d's elsewhere",
					i, r.Memory, sourceText(r.Source), j, j))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// sourceText is " staged from <source>", or "" for a cold placement.
func sourceText(source string) string {
	if source == "" {
		return ""
	}
	return " staged from " + source
}

func checkRule(i int, r Rule, p *Platform) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("plan: rule %d: "+format, append([]any{i}, args...)...)
	}
	var sel []string
	for _, s := range []struct{ key, value string }{{"class", r.Class}, {"tensor", r.Tensor}, {"name", r.Name}} {
		if s.value != "" {
			sel = append(sel, s.key)
		}
	}
	switch len(sel) {
	case 0:
		return fail("give one of class, tensor or name")
	case 1:
	default:
		return fail("give only one of class, tensor or name, not %s", strings.Join(sel, " and "))
	}
	var class liveness.Class
	switch {
	case r.Class != "":
		c, err := ParseClass(r.Class)
		if err != nil {
			return fail("class %q is not scratch, persistent or constant", r.Class)
		}
		class = c
	case r.Tensor != "":
		if _, err := ParseTensorRef(r.Tensor); err != nil {
			return fail("tensor %q is not subgraph:tensor, e.g. \"0:12\"", r.Tensor)
		}
	default:
		if _, err := path.Match(r.Name, "x"); err != nil {
			return fail("name %q is not a valid glob: %v", r.Name, err)
		}
	}
	if r.Memory == "" {
		return fail("memory is missing")
	}
	switch {
	case r.Hottest < 0:
		return fail("hottest %d is negative; give a budget in bytes", r.Hottest)
	case r.Hottest > 0 && class != liveness.Constant:
		return fail("hottest is only for class: constant rules (the hottest constants up to a budget in bytes)")
	}
	if r.Source != "" && class != 0 && class != liveness.Constant {
		return fail("source is only for constants, not class %s", r.Class)
	}
	if p == nil {
		return nil
	}
	mem, ok := p.Bank(r.Memory)
	if !ok {
		return fail("memory %q is not a bank of %s (banks: %s)", r.Memory, p.describe(), p.bankNames())
	}
	if cb, ok := p.ConstBank(); ok && r.Hottest > 0 && r.Source == "" && r.Memory == cb.Name {
		return fail("hottest keeps constants cold in %s, where every constant is by default; give memory a faster bank", r.Memory)
	}
	if r.Source != "" {
		src, ok := p.Bank(r.Source)
		switch {
		case !ok:
			return fail("source %q is not a bank of %s (banks: %s)", r.Source, p.describe(), p.bankNames())
		case src.Writable:
			return fail("source %q is writable; constants are staged from a read-only bank", r.Source)
		case !mem.Writable:
			return fail("memory %q is read-only; staged constants are copied into a writable bank", r.Memory)
		}
		return nil
	}
	if !mem.Writable && (class == liveness.Scratch || class == liveness.Persistent) {
		return fail("memory %q is read-only; %s tensors need a writable bank", r.Memory, r.Class)
	}
	if class == liveness.Constant && mem.Writable && !mem.BootInit {
		if cb, ok := p.ConstBank(); ok {
			return fmt.Errorf("plan: constant rule %d: %s is RAM; to place constants there, stage them: add source: %s", i, r.Memory, cb.Name)
		}
		return fmt.Errorf("plan: constant rule %d: %s is RAM and %s has no read-only bank to stage constants from", i, r.Memory, p.describe())
	}
	return nil
}

// ParseClass returns the tensor class a rule names: scratch, persistent or
// constant.
func ParseClass(s string) (liveness.Class, error) {
	for _, c := range []liveness.Class{liveness.Scratch, liveness.Persistent, liveness.Constant} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("plan: class %q is not scratch, persistent or constant", s)
}

// ParseTensorRef parses "subgraph:tensor", two decimal indices.
func ParseTensorRef(s string) (graph.TensorRef, error) {
	sg, t, ok := strings.Cut(s, ":")
	a, okA := parseIndex(sg)
	b, okB := parseIndex(t)
	if !ok || !okA || !okB {
		return graph.TensorRef{}, fmt.Errorf("plan: tensor %q is not subgraph:tensor", s)
	}
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(a), Tensor: graph.TensorID(b)}, nil
}

func parseIndex(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
