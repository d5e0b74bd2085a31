package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func bankJSON(name string, capacity int, writable bool, order int) map[string]any {
	return map[string]any{"name": name, "capacity": capacity, "writable": writable, "alignment": 0, "order": order}
}

func ruleJSON(kv ...string) map[string]any {
	r := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		r[kv[i]] = kv[i+1]
	}
	return r
}

func spillJSON(tensor int, name, from, to string) map[string]any {
	return map[string]any{"subgraph": 0, "tensor": tensor, "name": name, "from": from, "to": to, "reason": "full"}
}

func variableSpillJSON(shared, from, to string) map[string]any {
	return map[string]any{"container": "", "shared_name": shared, "name": shared, "from": from, "to": to, "reason": "full"}
}

// In testdata/banks.json, tensor_allocs are in, weights, bias, a, state, b,
// out (0..6); arena_usages are DTCM then SRAM; constant_arenas are the
// staged weights in SRAM, then the cold bias in MRAM; platform.banks are
// DTCM, SRAM, MRAM; rules are class scratch → DTCM, class constant → SRAM
// from MRAM, name bias → MRAM, tensor 0:6 → SRAM; spills.0 moves a from
// DTCM to SRAM.
func TestPlanBanks(t *testing.T) {
	// chainTo moves the chain plan's scratch arena and every allocation
	// in it to memory.
	chainTo := func(memory string) []edit {
		es := arenaSet("arena_usages.SRAM", 0, "memory", memory)
		for _, id := range []string{"0:0", "0:1", "0:2", "0:3"} {
			es = append(es, set("tensor_allocs."+id+".binding.memory", memory))
		}
		return es
	}
	// constantsTo moves the constant plan's cold constant arena and every
	// allocation in it to memory, its source with it.
	constantsTo := func(memory string) []edit {
		es := append(arenaSet("constant_arenas.FLASH", 1, "memory", memory),
			set("constant_arenas."+memory+".source_memory", memory), set("arenas.1.source_memory", memory))
		for _, id := range []string{"0:1", "0:2", "0:4"} {
			es = append(es, set("tensor_allocs."+id+".binding.memory", memory), set("tensor_allocs."+id+".binding.source_memory", memory))
		}
		return es
	}
	runViolationCases(t, []violationCase{
		// capacity
		{
			name: "bank over capacity", model: "banks",
			edits: []edit{set("platform.banks.0.capacity", 48), set("arena_usages.DTCM.capacity", 48)},
			want:  []Kind{OverCapacity},
		},
		{
			name: "staged source counts in its bank", model: "banks",
			edits: []edit{set("platform.banks.2.capacity", 40)}, // 32 staged + 16 cold
			want:  []Kind{OverCapacity},
		},
		{
			name: "exactly full", model: "banks",
			edits: []edit{set("platform.banks.0.capacity", 64), set("arena_usages.DTCM.capacity", 64)},
		},
		{
			name: "unlimited bank", model: "banks",
			edits: []edit{set("platform.banks.1.capacity", 0), set("arena_usages.SRAM.capacity", 0)},
		},
		{
			name: "arena_usages capacity is not the bank's", model: "banks",
			edits: []edit{set("arena_usages.SRAM.capacity", 0)},
			want:  []Kind{Malformed},
		},
		{
			name: "wrong fragmentation", model: "banks",
			edits: []edit{set("arena_usages.DTCM.fragmentation", 0.5)},
			want:  []Kind{HeightMismatch},
		},

		// banks of the platform
		{
			name: "memory not in the platform", model: "banks",
			// the MRAM arena, the staged source, bias's binding and two rules
			edits: []edit{del("platform.banks.2")},
			want:  []Kind{Malformed},
		},
		{
			name: "bank given twice", model: "banks",
			edits: []edit{insert("platform.banks.3", bankJSON("SRAM", 0, true, 5))},
			want:  []Kind{Malformed},
		},
		{
			name: "negative capacity", model: "banks",
			edits: []edit{set("platform.banks.2.capacity", -1)},
			want:  []Kind{Malformed},
		},
		{
			name: "bank alignment not a power of two", model: "banks",
			edits: []edit{set("platform.banks.1.alignment", 24)},
			want:  []Kind{Malformed},
		},
		{
			name: "constant_bank is writable", model: "banks",
			edits: []edit{put("platform.constant_bank", "SRAM")},
			want:  []Kind{Malformed},
		},

		// class placement by bank
		{
			name: "scratch in a read-only bank", model: "chain",
			edits: append(chainTo("FLASH"), set("rules", []any{ruleJSON("name", "*", "memory", "FLASH")})),
			want:  []Kind{WrongClass, Malformed}, // arena_usages has a read-only key
		},
		{
			name: "persistent in a read-only bank", model: "variable",
			edits: join(arenaSet("persistent_arenas.SRAM", 1, "memory", "FLASH"), []edit{set("tensor_allocs.0:1.binding.memory", "FLASH"),
				set("tensor_allocs.0:3.binding.memory", "FLASH"), set("rules", []any{ruleJSON("class", "persistent", "memory", "FLASH")})}),
			want: []Kind{WrongClass, Malformed}, // persistent_arenas has a read-only key
		},
		{
			name: "cold constants in RAM", model: "constant",
			edits: append(constantsTo("SRAM"), set("rules", []any{ruleJSON("class", "constant", "memory", "SRAM")})),
			want:  []Kind{WrongClass},
		},
		{
			name: "cold constants in RAM initialised at boot", model: "constant",
			edits: append(constantsTo("SRAM"), set("rules", []any{ruleJSON("class", "constant", "memory", "SRAM")}),
				put("platform.banks.0.boot_init", true)),
		},
		{
			name: "cold arena with another source", model: "constant",
			edits: []edit{set("constant_arenas.FLASH.source_memory", "SRAM")},
			want:  []Kind{Malformed},
		},
		{
			name: "staged from a writable bank", model: "banks",
			edits: []edit{set("arenas.3.source_memory", "DTCM"), set("constant_arenas.SRAM.source_memory", "DTCM"),
				set("tensor_allocs.0:1.binding.source_memory", "DTCM"), set("rules.1.source", "DTCM")},
			want: []Kind{WrongClass},
		},

		// bank alignment
		{
			name: "offset off the bank's alignment", model: "banks",
			edits: join([]edit{set("tensor_allocs.0:5.binding.offset", 16), set("arena_usages.DTCM.fragmentation", 0.5)},
				arenaSet("arena_usages.DTCM", 0, "used", 48), arenaSet("arena_usages.DTCM", 0, "total_size", 64)),
			want: []Kind{Misaligned},
		},
		{
			name: "persistent offset off the bank's alignment", model: "banks",
			edits: join([]edit{set("tensor_allocs.0:4.binding.offset", 16)}, arenaSet("persistent_arenas.DTCM", 2, "used", 32)),
			want:  []Kind{Misaligned},
		},
		{
			name: "total_size off the bank's alignment", model: "banks",
			edits: join(arenaSet("arena_usages.DTCM", 0, "total_size", 48), []edit{set("arena_usages.DTCM.fragmentation", 0.3333)}),
			want:  []Kind{HeightMismatch},
		},

		// rules
		{
			name: "pinned tensor elsewhere", model: "banks",
			edits: []edit{set("rules.3.memory", "DTCM")},
			want:  []Kind{RuleViolated},
		},
		{
			name: "later name rule beats an earlier tensor rule", model: "banks",
			edits: []edit{insert("rules.4", ruleJSON("name", "out", "memory", "DTCM"))},
			want:  []Kind{RuleViolated},
		},
		{
			name: "tensor rule beats a later class rule", model: "banks",
			edits: []edit{set("rules", []any{
				ruleJSON("tensor", "0:6", "memory", "SRAM"),
				ruleJSON("class", "scratch", "memory", "DTCM"),
				ruleJSON("name", "bias", "memory", "MRAM"),
				ruleJSON("class", "constant", "memory", "SRAM", "source", "MRAM"),
			})},
		},
		{
			name: "later class rule beats an earlier one", model: "banks",
			// in and b now ask for SRAM; a's spill starts in the wrong bank
			edits: []edit{insert("rules.4", ruleJSON("class", "scratch", "memory", "SRAM"))},
			want:  []Kind{RuleViolated, Malformed},
		},
		{
			name: "class-rule tensor elsewhere without a spill", model: "banks",
			edits: []edit{del("spills.0")},
			want:  []Kind{RuleViolated},
		},
		{
			name: "default tensor elsewhere without a spill", model: "banks",
			edits: []edit{insert("rules.4", ruleJSON("class", "persistent", "memory", "SRAM"))},
			want:  []Kind{RuleViolated},
		},
		{
			name: "pinned constant elsewhere", model: "banks",
			// weights asks for cold MRAM, bias for SRAM staged from MRAM
			edits: []edit{set("rules.2.name", "weights")},
			want:  []Kind{RuleViolated},
		},
		{
			name: "staged from another source", model: "banks",
			edits: []edit{set("rules.1", ruleJSON("class", "constant", "memory", "SRAM"))},
			want:  []Kind{RuleViolated},
		},
		{
			name: "constant_bank is the default for constants", model: "constant",
			edits: []edit{insert("platform.banks.2", bankJSON("QSPI", 0, false, 2)), put("platform.constant_bank", "QSPI")},
			want:  []Kind{RuleViolated},
		},
		{
			name: "rule with two selectors", model: "banks",
			edits: []edit{put("rules.0.tensor", "0:0")},
			want:  []Kind{Malformed},
		},
		{
			name: "rule memory not in the platform", model: "banks",
			edits: []edit{set("rules.3.memory", "PSRAM")},
			want:  []Kind{Malformed},
		},
		{
			name: "rule with an unknown class", model: "banks",
			edits: []edit{set("rules.0.class", "heap")},
			want:  []Kind{Malformed},
		},
		{
			name: "rule with a bad tensor", model: "banks",
			edits: []edit{set("rules.3.tensor", "0:-6")},
			want:  []Kind{Malformed},
		},
		{
			name: "rule with a bad glob", model: "banks",
			edits: []edit{set("rules.2.name", "bias[")},
			want:  []Kind{Malformed},
		},
		{
			name: "rule without memory", model: "banks",
			edits: []edit{del("rules.0.memory")},
			want:  []Kind{Malformed},
		},
		{
			name: "alias member follows its root", model: "alias",
			edits: []edit{insert("platform.banks.2", bankJSON("DTCM", 0, true, 1)),
				set("rules", []any{ruleJSON("name", "r", "memory", "DTCM")})},
		},
		{
			name: "alias root elsewhere", model: "alias",
			edits: []edit{insert("platform.banks.2", bankJSON("DTCM", 0, true, 1)),
				set("rules", []any{ruleJSON("name", "a", "memory", "DTCM")})},
			want: []Kind{RuleViolated},
		},
		{
			name: "variables in an earlier bank than their rule's", model: "resource",
			edits: []edit{insert("platform.banks.2", bankJSON("PSRAM", 0, true, 2)),
				set("rules", []any{ruleJSON("class", "persistent", "memory", "PSRAM")})},
			want: []Kind{RuleViolated},
		},
		{
			name: "variables in a later bank than their rule's, spilled", model: "resource",
			edits: []edit{insert("platform.banks.0", bankJSON("DTCM", 0, true, -1)),
				set("rules", []any{ruleJSON("class", "scratch", "memory", "SRAM"), ruleJSON("tensor", "0:8", "memory", "SRAM")}),
				set("spills", []any{variableSpillJSON("state", "DTCM", "SRAM"), variableSpillJSON("#0:1", "DTCM", "SRAM")})},
		},
		{
			name: "variables in a later bank than their rule's without a spill", model: "resource",
			edits: []edit{insert("platform.banks.0", bankJSON("DTCM", 0, true, -1)),
				set("rules", []any{ruleJSON("class", "scratch", "memory", "SRAM"), ruleJSON("tensor", "0:8", "memory", "SRAM")})},
			want: []Kind{RuleViolated},
		},

		// spills
		{
			name: "spill of a tensor that did not move", model: "banks",
			edits: []edit{insert("spills.1", spillJSON(5, "b", "DTCM", "SRAM"))},
			want:  []Kind{Malformed},
		},
		{
			name: "spill of a pinned tensor", model: "banks",
			edits: []edit{insert("spills.1", spillJSON(6, "out", "DTCM", "SRAM"))},
			want:  []Kind{Malformed},
		},
		{
			name: "spill to a read-only bank", model: "banks",
			edits: []edit{set("spills.0.to", "MRAM")},
			want:  []Kind{Malformed},
		},
		{
			name: "spill backwards", model: "banks",
			edits: []edit{set("spills.0.from", "SRAM"), set("spills.0.to", "DTCM")},
			want:  []Kind{Malformed},
		},
		{
			name: "spill of a tensor that does not exist", model: "banks",
			edits: []edit{insert("spills.1", spillJSON(9, "ghost", "DTCM", "SRAM"))},
			want:  []Kind{Malformed},
		},
		{
			name: "spill under another name", model: "banks",
			edits: []edit{set("spills.0.name", "b")},
			want:  []Kind{Malformed},
		},
		{
			name: "spill of an unallocated tensor", model: "constant",
			edits: []edit{insert("platform.banks.1", bankJSON("PSRAM", 0, true, 1)),
				set("spills", []any{spillJSON(6, "dead", "SRAM", "PSRAM")})},
			want: []Kind{Malformed},
		},
		{
			name: "spill of an alias member", model: "alias",
			edits: []edit{insert("platform.banks.2", bankJSON("DTCM", 0, true, 1)),
				set("spills", []any{spillJSON(2, "r", "SRAM", "DTCM")})},
			want: []Kind{Malformed},
		},
		{
			name: "spills through several banks", model: "banks",
			edits: twoHops(),
		},
		{
			name: "spills skip a hop", model: "banks",
			edits: append(twoHops(), del("spills.2")), // a ends in DTCM, but is in SRAM
			want:  []Kind{Malformed},
		},
		{
			name: "spills out of order", model: "banks",
			edits: append(twoHops(), set("spills.1", spillJSON(3, "a", "DTCM", "SRAM")), set("spills.2", spillJSON(3, "a", "ITCM", "DTCM"))),
			want:  []Kind{Malformed},
		},
	})
}

// twoHops puts a 16-byte ITCM before DTCM and scratch there by rule, so
// that in, a, b and state (by default) spill from it to DTCM, and a on to
// SRAM. spills are in ITCM→DTCM, a ITCM→DTCM, a DTCM→SRAM, b, state.
func twoHops() []edit {
	return []edit{
		insert("platform.banks.0", bankJSON("ITCM", 16, true, -1)),
		set("rules.0.memory", "ITCM"),
		set("spills", []any{
			spillJSON(0, "in", "ITCM", "DTCM"),
			spillJSON(3, "a", "ITCM", "DTCM"),
			spillJSON(3, "a", "DTCM", "SRAM"),
			spillJSON(5, "b", "ITCM", "DTCM"),
			spillJSON(4, "state", "ITCM", "DTCM"),
		}),
	}
}

func TestPlanBankMessages(t *testing.T) {
	tests := []struct {
		name  string
		model string
		edits []edit
		want  []Violation
	}{
		{
			name: "over capacity", model: "banks",
			edits: []edit{set("platform.banks.0.capacity", 48), set("arena_usages.DTCM.capacity", 48)},
			want: []Violation{
				{OverCapacity, `bank "DTCM": its arenas take 64 bytes (scratch 32 + persistent 32), but its capacity is 48`},
			},
		},
		{
			name: "pinned", model: "banks",
			edits: []edit{set("rules.3.memory", "DTCM")},
			want: []Violation{
				{RuleViolated, `0:6 (out) is in "SRAM", but rules[3] pins it to "DTCM"`},
			},
		},
		{
			name: "no spill", model: "banks",
			edits: []edit{del("spills.0")},
			want: []Violation{
				{RuleViolated, `0:3 (a) is in "SRAM", but asks for "DTCM" (rules[0]), and spills records no move`},
			},
		},
		{
			name: "bogus spill", model: "banks",
			edits: []edit{insert("spills.1", spillJSON(5, "b", "DTCM", "SRAM"))},
			want: []Violation{
				{Malformed, `spills[1]: 0:5 (b) ends in "SRAM" after its spills, but is in "DTCM"`},
			},
		},
		{
			name: "scratch in flash", model: "chain",
			edits: []edit{set("platform.banks.1.writable", true), set("platform.banks.0.writable", false)},
			want: []Violation{
				{Malformed, `arena_usages["SRAM"]: "SRAM" is a read-only bank; arena_usages holds arenas of writable banks`},
				{WrongClass, `arenas[0]: scratch arena in read-only bank "SRAM"`},
				{RuleViolated, `0:0 (input) is in "SRAM", but asks for "FLASH" (default), and spills records no move`},
				{RuleViolated, `0:1 (a) is in "SRAM", but asks for "FLASH" (default), and spills records no move`},
				{RuleViolated, `0:2 (b) is in "SRAM", but asks for "FLASH" (default), and spills records no move`},
				{RuleViolated, `0:3 (output) is in "SRAM", but asks for "FLASH" (default), and spills records no move`},
			},
		},
		{
			name: "variable", model: "resource",
			edits: []edit{insert("platform.banks.2", bankJSON("PSRAM", 0, true, 2)),
				set("rules", []any{ruleJSON("class", "persistent", "memory", "PSRAM"), ruleJSON("name", "acc", "memory", "SRAM")})},
			want: []Violation{
				{RuleViolated, `resource variable "state" is in "SRAM", but asks for "PSRAM" (rules[0]), and spills records no move`},
				{RuleViolated, `resource variable "#0:1" is in "SRAM", but asks for "PSRAM" (rules[0]), and spills records no move`},
			},
		},
		{
			name: "unknown bank", model: "banks",
			edits: []edit{set("rules.3.memory", "PSRAM")},
			want: []Violation{
				{Malformed, `rules[3]: memory "PSRAM" is not a bank of platform "board" (banks: DTCM, SRAM, MRAM)`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(mustModel(tt.model), applyEdits(t, readPlan(t, tt.model), tt.edits))
			assert.Equal(t, tt.want, got)
		})
	}
}
