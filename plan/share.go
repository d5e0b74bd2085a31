package plan

import (
	"fmt"
	"slices"

	"github.com/heliac/heliac/liveness"
)

// Share returns copies of several models' plans, meant for one firmware
// that runs one model at a time, in which the models' owned scratch arenas
// of one name ("scratch_sram") become one buffer: each is Shared, its
// module defines no storage for it (the set's shared module does, once,
// and binds it to every model), and SharedSize is that buffer's bytes, the
// largest of the arenas of the name. Persistent and constant arenas stay
// each model's own, as do scratch arenas the application binds (Bound).
// The input plans are not changed. Fewer than two plans share nothing.
func Share(plans []*Plan) ([]*Plan, error) {
	out := make([]*Plan, len(plans))
	size := map[string]int64{}
	users := map[string]int{}
	for _, p := range plans {
		if p == nil {
			return nil, fmt.Errorf("plan: share: a nil plan")
		}
		for _, a := range p.Arenas {
			if shareable(&a) {
				size[a.Name] = max(size[a.Name], a.Size)
				users[a.Name]++
			}
		}
	}
	for i, p := range plans {
		q := *p
		q.Arenas = slices.Clone(p.Arenas)
		if len(plans) > 1 {
			for k := range q.Arenas {
				if a := &q.Arenas[k]; shareable(a) {
					a.Provider, a.SharedSize = Shared, size[a.Name]
				}
			}
		}
		out[i] = &q
	}
	return out, nil
}

// shareable reports whether an arena can be one buffer with other models':
// a scratch arena the module owns.
func shareable(a *Arena) bool { return a.Role == liveness.Scratch && a.Provider == Owned }
