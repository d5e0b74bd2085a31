package plan

import (
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
// an error, and a glob passes it by. A name given
// exactly (without '*', '?' or '[') must name an arena of the plan; a glob
// may match none (persistent_* on a model without state).
func bindExternal(p *Plan, patterns []string) error {
	for _, pat := range patterns {
		literal := !strings.ContainsAny(pat, `*?[\`)
		found := false
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
			a.Provider = Bound
		}
		if literal && !found {
			return fmt.Errorf("plan: external arena %q names no arena of the plan (arenas: %s); fix external_arenas in the config",
				pat, p.arenaNames())
		}
	}
	return nil
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
