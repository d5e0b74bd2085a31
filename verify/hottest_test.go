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
	// padded makes the FULLY_CONNECTED a CONV_2D, SAME, 2x2 over 4x4x2
	// into 4x4x4 (sizes kept): its 16 output pixels read the bias whole
	// (16 per byte), the filter at 49 of the 64 taps (the last row and
	// column of pixels have a tap row or column in the padding): 392
	// bytes, 12.25 per byte.
	padded := func(m *graph.Model) {
		sg := &m.Subgraphs[0]
		sg.Tensors[0].Shape = []int32{1, 4, 4, 2}
		sg.Tensors[1].Shape = []int32{4, 2, 2, 2}
		sg.Tensors[3].Shape = []int32{1, 4, 4, 4}
		sg.Ops[0].Code, sg.Ops[0].CodeName = graph.Conv2D, "CONV_2D"
		sg.Ops[0].Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	}
	runViolationCases(t, []violationCase{
		{name: "weights within the budget", model: "banks", edits: []edit{put("rules.1.hottest", 32)}},
		{name: "weights over the budget", model: "banks", edits: []edit{put("rules.1.hottest", 31)}, want: []Kind{RuleViolated}},
		{name: "bias left out but fits", model: "banks", edits: append(free, put("rules.1.hottest", 48)), want: []Kind{RuleViolated}},
		{name: "bias left out, as hot as weights, does not fit", model: "banks", edits: append(free, put("rules.1.hottest", 47))},
		{name: "bias left out, hotter than weights, fits in its place", model: "banks", mod: hotBias,
			edits: append(free, put("rules.1.hottest", 47)), want: []Kind{RuleViolated}},
		{name: "bias left out, read per pixel, hotter than the filter a padded convolution reads less", model: "banks", mod: padded,
			edits: append(free, put("rules.1.hottest", 47), put("schedule.0.name", "CONV_2D")), want: []Kind{RuleViolated}},
		{name: "hottest on a scratch rule", model: "banks", edits: []edit{put("rules.0.hottest", 64)}, want: []Kind{Malformed}},
		{name: "hottest negative", model: "banks", edits: []edit{put("rules.1.hottest", -1)}, want: []Kind{Malformed}},
		{name: "hottest where another rule puts every constant", model: "banks",
			edits: []edit{put("rules.1.hottest", 32), insert("rules.4", ruleJSON("class", "constant", "memory", "SRAM", "source", "MRAM"))},
			want:  []Kind{Malformed}},
		{name: "hottest where every constant is by default", model: "banks",
			edits: []edit{set("rules.1", map[string]any{"class": "constant", "memory": "MRAM", "hottest": 32})}, want: []Kind{Malformed}},
	})
}
