package plan

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/heliac/heliac/liveness"
)

// checkExternal checks the forms of Options.External: each a valid
// path.Match glob, not empty.
func checkExternal(patterns []string) error {
	for i, pat := range patterns {
		if pat == "" {
			return fmt.Errorf("plan: external arena %d is empty; give an arena name or a glob such as \"scratch_*\"", i)
		}
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("plan: external arena %q is not a valid glob: %v", pat, err)
		}
	}
	return nil
}

// bindExternal makes Bound every arena whose name matches a pattern of
// Options.External, so that the C module defines no storage for it and
// the application binds a buffer of its own. A cold constant arena holds
// the model's weights, which the module defines (in a read-only bank, or
// in RAM the start-up code fills): a name given exactly that names one is
// an error, and a glob passes it by. A name given exactly (without '*',
// '?' or '[') must name an arena of the plan. A glob that binds nothing
// (persistent_* on a model without state, or a typo) goes to
// Plan.UnusedExternal, an error when strict; "*", which --external-arenas
// gives, binds whatever the model has and is never reported.
func bindExternal(p *Plan, patterns []string, strict bool) error {
	var unused []error
	for _, pat := range patterns {
		literal := !strings.ContainsAny(pat, `*?[\`)
		found, bound := false, false
		for i := range p.Arenas {
			a := &p.Arenas[i]
			if ok, _ := path.Match(pat, a.Name); !ok {
				continue
			}
			found = true
			if a.Role == liveness.Constant && !a.Staged() {
				if literal {
					return fmt.Errorf("plan: external arena %q is a cold constant arena: its bytes are the model's weights, "+
						"which the C module defines; bind scratch, persistent or staged constant arenas", pat)
				}
				continue
			}
			a.Provider, bound = Bound, true
		}
		switch {
		case literal && !found:
			return fmt.Errorf("plan: external arena %q names no arena of the plan (arenas: %s); fix external_arenas in the config",
				pat, p.arenaNames())
		case !bound && pat != "*":
			p.UnusedExternal = append(p.UnusedExternal, pat)
			unused = append(unused, fmt.Errorf("plan: %s (rules are strict)", p.DescribeUnusedExternal(pat)))
		}
	}
	if strict {
		return errors.Join(unused...)
	}
	return nil
}

// DescribeUnusedExternal says why an external_arenas glob of the plan
// binds nothing, naming the arenas it could have bound.
func (p *Plan) DescribeUnusedExternal(pat string) string {
	return fmt.Sprintf("external arena glob %q binds no arena: it matches no scratch, persistent or staged constant arena (arenas: %s)",
		pat, p.arenaNames())
}

// arenaNames lists the plan's arena names for messages.
func (p *Plan) arenaNames() string {
	names := make([]string, len(p.Arenas))
	for i, a := range p.Arenas {
		names[i] = a.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
