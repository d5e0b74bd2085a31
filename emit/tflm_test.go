package emit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestPercent: a difference of a few bytes on a large arena never reads
// as no difference (a held-out model 16 B above TFLM's own read "+0.0%").
func TestPercent(t *testing.T) {
	tests := []struct {
		n, base   int64
		pct, diff string
	}{
		{1152016, 1152000, "+0.0014%", "+16 B (+0.0014%)"},
		{1151984, 1152000, "-0.0014%", "-16 B (-0.0014%)"},
		{1152000, 1152000, "+0.0%", "+0 B (+0.0%)"},
		{36880, 55296, "-33.3%", "-18416 B (-33.3%)"},
		{1312, 1280, "+2.5%", "+32 B (+2.5%)"},
		{1000500, 1000000, "+0.1%", "+500 B (+0.1%)"},
		{1000400, 1000000, "+0.04%", "+400 B (+0.04%)"},
		{5, 0, "-", "+5 B (-)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.pct, emit.Percent(tt.n, tt.base), "%d vs %d", tt.n, tt.base)
		assert.Equal(t, tt.diff, emit.Difference(tt.n, tt.base), "%d vs %d", tt.n, tt.base)
	}
}

// TestSummaryOverBoundNeverRoundsToZero: an arena 16 B over its bound
// of 1,152,000 B says so.
func TestSummaryOverBoundNeverRoundsToZero(t *testing.T) {
	p := &plan.Plan{Planner: plan.PlannerBest, Arenas: []plan.Arena{{Name: "scratch_sram", Role: liveness.Scratch, Memory: "SRAM",
		Size: 1152016, Used: 1152016, LowerBound: 1152000, Optimal: false}}}
	s := string(emit.Summary(&graph.Model{}, p))
	assert.Contains(t, s, "+0.0014%")
	assert.NotContains(t, s, "+0.0%")
}

// TestTFLMHeadsText: the summary's line gives both heads and the
// difference, and says whose placement the plan keeps instead of
// heliac's.
func TestTFLMHeadsText(t *testing.T) {
	h := emit.TFLMHeads{OwnHead: 55296, Head: 36880, Kept: "heliac"}
	assert.Equal(t, "arena head: TFLM's own planner 55296 B, heliac's plan 36880 B: -18416 B (-33.3%) "+
		"(tensors and kernel scratch; TFLM's persistent tail comes on top of both)", h.Text())
	h = emit.TFLMHeads{OwnHead: 1152000, Head: 1152000, Kept: "tflm", Discarded: 1152016}
	assert.Contains(t, h.Text(), "heliac's plan 1152000 B: the same")
	assert.Contains(t, h.Text(), "\n  kept TFLM's own placement (its greedy planner, the model's order, no in-place writes): "+
		"heliac's own placement needed 1152016 B, +16 B (+0.0014%)")
	h.Kept = "model"
	assert.Contains(t, h.Text(), "kept the model's own offline plan")
	// Kept for the whole tensor_arena, though heliac's head was smaller.
	h = emit.TFLMHeads{OwnHead: 1536, Head: 1536, Kept: "tflm", Discarded: 1248, DiscardedBytes: 13216,
		Target: "host64", Bytes: 13200, OwnBytes: 13200}
	assert.Contains(t, h.Text(), "\n  kept TFLM's own placement (its greedy planner, the model's order, no in-place writes): "+
		"with heliac's own placement (head 1248 B) TFLM needs a tensor_arena of 13216 B, +16 B (+0.1%) over the original model's under TFLM's own planner (13200 B)")
}

// TestReportLeadsWithTFLM: the report's first section compares the heads;
// without the comparison there is none.
func TestReportLeadsWithTFLM(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	p := buildPlan(t, m)
	meta := emit.Meta{ModelName: "hello"}
	r := string(emit.ReportWithTFLM(m, p, meta, &emit.TFLMHeads{OwnHead: 1280, Head: 1280, Kept: "tflm", Discarded: 1312}))
	assert.Contains(t, r, `<section id="tflm">`)
	assert.Less(t, strings.Index(r, `<section id="tflm">`), strings.Index(r, "<h2>Arenas</h2>"), "the report leads with it")
	assert.Contains(t, r, "<tr><td>TFLM's own planner</td><td>1280 B</td></tr>")
	assert.Contains(t, r, "<tr><td>difference</td><td>+0 B (+0.0%)</td></tr>")
	assert.Contains(t, r, "heliac&#39;s own placement needed 1312 B, +32 B (+2.5%)")
	assert.NotContains(t, string(emit.Report(m, p, meta)), `<section id="tflm">`)
	assert.NotContains(t, r, "whole tensor_arena", "not computed without --emit-tflite")

	whole := string(emit.ReportWithTFLM(m, p, meta, &emit.TFLMHeads{OwnHead: 1280, Head: 1024, Kept: "heliac",
		Target: "cortex-m", Bytes: 3056, OwnBytes: 3312}))
	assert.Contains(t, whole, "<th>whole tensor_arena (cortex-m)</th>")
	assert.Contains(t, whole, "<tr><td>TFLM's own planner</td><td>1280 B</td><td>3312 B</td></tr>")
	assert.Contains(t, whole, "<tr><td>heliac's plan</td><td>1024 B</td><td>3056 B</td></tr>")
	assert.Contains(t, whole, "<td>-256 B (-7.7%)</td></tr>")
}

// TestPatchesText: the summary's --patches line names each region, its
// stripes and rows, the extra operators and MACs, and the arenas before
// and after (TFLM's whole arena first); without stripes it says why.
func TestPatchesText(t *testing.T) {
	p := emit.Patches{
		Regions:  []graph.StripeRegion{{Subgraph: 0, Input: 3, Output: 9, Ops: []int{1, 2, 3}, Rows: [][2]int32{{0, 4}, {4, 8}}}},
		ExtraOps: 9, ExtraMACs: 500, ModelMACs: 10000, Cap: 0.1,
		HeadBefore: 2000, HeadAfter: 1000, ArenaBefore: 3000, ArenaAfter: 2400, Tried: 7,
	}
	assert.Equal(t, "--patches auto: 1 region(s) run stripe by stripe: 0:3 -> 0:9 (3 operator(s)) in 2 stripes of rows [0,4) [4,8)\n"+
		"  TFLM's whole tensor_arena 3000 -> 2400 B (-20.0%), heliac's arena (TFLM's head) 2000 -> 1000 B (-50.0%); "+
		"stripes cost +9 operator(s) and +500 MACs (+5.00% of 10000, cap 10%)", p.Text())
	none := emit.Patches{Cap: 0.1, Tried: 7}
	assert.Equal(t, "--patches auto: no stripes: none of 7 rewrite(s) tried lowers the arena within 10% extra MACs", none.Text())
	assert.Contains(t, (&emit.Patches{Cap: 0.1}).Text(), "no region of row-local operators")
	why := emit.Patches{Cap: 0.1, Reason: "TFLM's whole arena cannot be sized (x)"}
	assert.Equal(t, "--patches auto: no stripes: TFLM's whole arena cannot be sized (x)", why.Text())
}
