package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editRaw applies edits to a plan and keeps its plan_hash, unlike
// applyEdits.
func editRaw(t *testing.T, data []byte, edits ...edit) []byte {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, e := range edits {
		doc = e(t, doc)
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// TestPlanHashCovers checks which fields plan_hash covers: the layout
// (arenas, allocations, the operator order) changes it; names, figures
// derived from the layout and the generator do not.
func TestPlanHashCovers(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		edits   []edit
		changes bool
	}{
		{"alignment", "chain", []edit{set("alignment", 32)}, true},
		{"arena size", "chain", []edit{set("arenas.0.size", 80)}, true},
		{"arena alignment", "chain", []edit{set("arenas.0.alignment", 32)}, true},
		{"arena name", "chain", []edit{set("arenas.0.name", "fast")}, true},
		{"arena provider", "chain", []edit{set("arenas.0.provider", "bound")}, true},
		{"arena memory", "chain", []edit{set("arenas.0.memory", "DTCM")}, true},
		{"staged", "constant", []edit{set("arenas.1.source_memory", "MRAM")}, true},
		{"tensor offset", "chain", []edit{set("tensor_allocs.0:1.binding.offset", 0)}, true},
		{"tensor arena", "chain", []edit{set("tensor_allocs.0:1.binding.arena", 1)}, true},
		{"tensor size", "chain", []edit{set("tensor_allocs.0:1.size", 16)}, true},
		{"alias", "alias", []edit{set("tensor_allocs.0:2.alias_of", nil)}, true},
		{"alias offset", "alias", []edit{put("tensor_allocs.0:2.alias_offset", 16)}, true},
		{"variable name", "resource", []edit{set("resource_variables.0.shared_name", `st\xffate`)}, true},
		{"variable offset", "resource", []edit{set("resource_variables.0.offset", 0)}, true},
		{"kernel scratch", "chain", []edit{insert("kernel_scratch.0", kernelScratchJSON(1, 64, 2, 2))}, true},
		{"operator order", "chain", []edit{set("schedule.0.operator", 1), set("schedule.1.operator", 0)}, true},
		{"tensor name", "chain", []edit{set("tensor_allocs.0:1.name", "renamed")}, false},
		{"lifetime", "chain", []edit{set("tensor_lifetimes.0:0.end_op", 3)}, false},
		{"lower bound", "chain", []edit{set("arena_usages.SRAM.lower_bound", 1)}, false},
		{"generator", "chain", []edit{set("generator", "other")}, false},
		{"plan_hash itself", "chain", []edit{set("plan_hash", "")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := readPlan(t, tt.model)
			before, bad := PlanHash(data)
			require.Nil(t, bad)
			after, bad := PlanHash(editRaw(t, data, tt.edits...))
			require.Nil(t, bad)
			assert.Equal(t, tt.changes, before != after)
		})
	}
}

func TestPlanHashMismatch(t *testing.T) {
	data := readPlan(t, "chain")
	want, _ := PlanHash(data)
	for name, hash := range map[string]string{"empty": "", "stale": strings.Repeat("0", 64)} {
		t.Run(name, func(t *testing.T) {
			got := Plan(mustModel("chain"), editRaw(t, data, set("plan_hash", hash)))
			assert.Equal(t, []Violation{{HashMismatch, `plan_hash: "` + hash + `", but the plan's arenas, allocations and ` +
				`schedule hash to ` + want + `; the plan was changed after it was written`}}, got)
		})
	}
}

func TestDefaultArenaName(t *testing.T) {
	for _, tt := range []struct{ role, memory, want string }{
		{"scratch", "SRAM", "scratch_sram"},
		{"constant", "ext-PSRAM (8 MB)", "constant_ext_psram_8_mb"},
		{"persistent", "__x__y__", "persistent_x_y"},
		{"scratch", "ÿ\xff", "scratch"},
		{"scratch", "", "scratch"},
	} {
		assert.Equal(t, tt.want, defaultArenaName(tt.role, tt.memory), "%q", tt.memory)
	}
}

// TestHashArenaSource: plan_hash's arena line gives src=<source_memory>
// (empty when null) and staged=true only for a constant arena copied from
// another bank, so a schema_version 4 cold arena (its own source) hashes
// as version 3's (a null source, then written as its memory) did.
func TestHashArenaSource(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tt := range []struct {
		name string
		a    arenaRec
		want string
	}{
		{"scratch", arenaRec{id: 0, role: roleScratch, memory: "SRAM", name: "scratch_sram", provider: "owned", size: 64, alignment: 16},
			"arena 0 scratch SRAM size=64 align=16 src= staged=false\n"},
		{"cold", arenaRec{id: 1, role: roleConstant, memory: "FLASH", source: str("FLASH"), name: "constant_flash", provider: "owned", size: 80, alignment: 16},
			"arena 1 constant FLASH size=80 align=16 src=FLASH staged=false\n"},
		{"staged", arenaRec{id: 3, role: roleConstant, memory: "SRAM", source: str("MRAM"), name: "constant_sram", provider: "owned", size: 32, alignment: 16},
			"arena 3 constant SRAM size=32 align=16 src=MRAM staged=true\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			hashArena(&b, tt.a)
			assert.Equal(t, tt.want, b.String())
		})
	}
}
