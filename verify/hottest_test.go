package verify

import (
	"testing"

	"github.com/heliac/heliac/graph"
)

// TestPlanHottest mutates testdata/banks.json's rule 1 (class constant
// staged into SRAM from MRAM), which takes weights (32 bytes, read once
// per inference by FULLY_CONNECTED: 1 byte read per byte); rule 2 pins
// bias (16 bytes, read once: 1 per byte) to MRAM.
func TestPlanHottest(t *testing.T) {
	// free lets rule 1 take bias too: bias, cold in MRAM, asks for the
	// default (MRAM, the constant bank) when rule 1 leaves it out.
	free := []edit{del("rules.2")}
	// hotBias makes ADD read bias as well: 32 bytes read per inference,
	// 2 per byte.
	hotBias := func(m *graph.Model) { m.Subgraphs[0].Ops[1].Inputs = ids(3, 4, 2) }
	runViolationCases(t, []violationCase{
		{name: "weights within the budget", model: "banks", edits: []edit{put("rules.1.hottest", 32)}},
		{name: "weights over the budget", model: "banks", edits: []edit{put("rules.1.hottest", 31)}, want: []Kind{RuleViolated}},
		{name: "bias left out but fits", model: "banks", edits: append(free, put("rules.1.hottest", 48)), want: []Kind{RuleViolated}},
		{name: "bias left out, as hot as weights, does not fit", model: "banks", edits: append(free, put("rules.1.hottest", 47))},
		{name: "bias left out, hotter than weights, fits in its place", model: "banks", mod: hotBias,
			edits: append(free, put("rules.1.hottest", 47)), want: []Kind{RuleViolated}},
		{name: "hottest on a scratch rule", model: "banks", edits: []edit{put("rules.0.hottest", 64)}, want: []Kind{Malformed}},
		{name: "hottest negative", model: "banks", edits: []edit{put("rules.1.hottest", -1)}, want: []Kind{Malformed}},
		{name: "hottest where another rule puts every constant", model: "banks",
			edits: []edit{put("rules.1.hottest", 32), insert("rules.4", ruleJSON("class", "constant", "memory", "SRAM", "source", "MRAM"))},
			want:  []Kind{Malformed}},
		{name: "hottest where every constant is by default", model: "banks",
			edits: []edit{set("rules.1", map[string]any{"class": "constant", "memory": "MRAM", "hottest": 32})}, want: []Kind{Malformed}},
	})
}
