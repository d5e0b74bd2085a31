package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestExternal binds arenas by name and by glob: the arenas matched are
// Bound, every other stays Owned, and cold constants are never bound.
func TestExternal(t *testing.T) {
	staged := plan.Platform{Name: "staged", Banks: []plan.Bank{
		{Name: "SRAM", Writable: true}, {Name: "DTCM", Writable: true, Order: 1}, {Name: "FLASH", Order: 2}}}
	stagedRules := []plan.Rule{{Class: "constant", Memory: "DTCM", Source: "FLASH"}}
	tests := []struct {
		name     string
		external []string
		platform *plan.Platform
		rules    []plan.Rule
		strict   bool
		bound    []string // the arenas Bound, in plan order
		unused   []string // Plan.UnusedExternal
		err      string
	}{
		{name: "none", bound: nil},
		{name: "every arena it can bind", external: []string{"*"}, bound: []string{"persistent_sram", "scratch_sram"}},
		{name: "one by name", external: []string{"scratch_sram"}, bound: []string{"scratch_sram"}},
		{name: "a glob", external: []string{"persistent_*"}, bound: []string{"persistent_sram"}},
		{name: "a glob that matches nothing", external: []string{"*_psram"}, bound: nil, unused: []string{"*_psram"}},
		{name: "a glob that matches only cold constants", external: []string{"constant_*", "scratch_*"},
			bound: []string{"scratch_sram"}, unused: []string{"constant_*"}},
		{name: "a glob that matches nothing, strict", external: []string{"scratch_*", "*_psram", "x?"}, strict: true,
			err: `plan: external arena glob "*_psram" binds no arena: it matches no scratch, persistent or staged constant arena (arenas: constant_flash, persistent_sram, scratch_sram) (rules are strict)` + "\n" +
				`plan: external arena glob "x?" binds no arena: it matches no scratch, persistent or staged constant arena (arenas: constant_flash, persistent_sram, scratch_sram) (rules are strict)`},
		{name: "every arena, strict", external: []string{"*"}, strict: true, bound: []string{"persistent_sram", "scratch_sram"}},
		{name: "a staged constant arena", external: []string{"constant_dtcm"}, platform: &staged, rules: stagedRules,
			bound: []string{"constant_dtcm"}},
		{name: "every arena with staged constants", external: []string{"*"}, platform: &staged, rules: stagedRules,
			bound: []string{"constant_dtcm", "persistent_sram", "scratch_sram"}},
		{name: "a cold constant arena by name", external: []string{"constant_flash"},
			err: `plan: external arena "constant_flash" is a cold constant arena: its bytes are the model's weights, which the C module defines; bind scratch, persistent or staged constant arenas`},
		{name: "a name that is no arena", external: []string{"scratch_psram"},
			err: `plan: external arena "scratch_psram" names no arena of the plan (arenas: constant_flash, persistent_sram, scratch_sram); fix external_arenas in the config`},
		{name: "an empty name", external: []string{""},
			err: `plan: external arena 0 is empty; give an arena name or a glob such as "scratch_*"`},
		{name: "a bad glob", external: []string{"scratch_["},
			err: `plan: external arena "scratch_[" is not a valid glob: syntax error in pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := diamond()
			lt, err := liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			p, err := plan.Build(context.Background(), m, lt, plan.Options{External: tt.external, Platform: tt.platform, Rules: tt.rules, Strict: tt.strict})
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var bound []string
			for _, a := range p.Arenas {
				switch a.Provider {
				case plan.Bound:
					bound = append(bound, a.Name)
				case plan.Owned:
				default:
					t.Errorf("arena %s: provider %v", a.Name, a.Provider)
				}
			}
			assert.ElementsMatch(t, tt.bound, bound)
			assert.Equal(t, tt.unused, p.UnusedExternal)
		})
	}
}

// TestExternalChangesTheHash: a bound arena is part of the layout the
// plan hash covers, so a module built for owned arenas is not taken for
// one whose application binds them.
func TestExternalChangesTheHash(t *testing.T) {
	owned := build(t, diamond(), plan.Options{})
	bound := build(t, diamond(), plan.Options{External: []string{"scratch_sram"}})
	assert.NotEqual(t, owned.Hash(), bound.Hash())
}
