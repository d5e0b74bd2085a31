package emit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestStripesInPlanJSON checks plan.json's stripes key: absent for a model
// without stripes, the record (ids as "s:i") for one with.
func TestStripesInPlanJSON(t *testing.T) {
	m := denseModel()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	js, err := emit.JSON(m, p, emit.Meta{ModelName: "dense", Version: "test"})
	require.NoError(t, err)
	assert.NotContains(t, string(js), `"stripes"`)

	striped := *m
	striped.Stripes = []graph.StripeRegion{{Subgraph: 0, Input: 0, Output: 2, Ops: []int{0, 1}, Rows: [][2]int32{{0, 3}, {3, 5}},
		MACs: 1000, ExtraMACs: 40}}
	js, err = emit.JSON(&striped, p, emit.Meta{ModelName: "dense", Version: "test"})
	require.NoError(t, err)
	var v struct {
		Stripes []map[string]any `json:"stripes"`
	}
	require.NoError(t, json.Unmarshal(js, &v))
	assert.Equal(t, []map[string]any{{"subgraph": 0.0, "input": "0:0", "output": "0:2", "operators": []any{"0:0", "0:1"},
		"k": 2.0, "rows": []any{[]any{0.0, 3.0}, []any{3.0, 5.0}}, "halo": "recompute", "macs": 1000.0, "extra_macs": 40.0}}, v.Stripes)

	striped.Stripes[0].Halo = graph.HaloCache
	js, err = emit.JSON(&striped, p, emit.Meta{ModelName: "dense", Version: "test"})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &v))
	assert.Equal(t, "cache", v.Stripes[0]["halo"], "cached halos are recorded")
}

// stripedModel is a rewritten model in miniature: x [1,4,2,1] is sliced
// into rows 0-2 and 2-4, each slice goes through RELU into a stripe of y,
// and a CONCATENATION joins the stripes into y, which a region records.
func stripedModel() *graph.Model {
	t := func(name string, h int32) graph.Tensor { return tensor(name, graph.Int8, []int32{1, h, 2, 1}, 0) }
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{t("x", 4), t("x/stripe0/slice", 2), t("y/stripe0", 2), t("x/stripe1/slice", 2), t("y/stripe1", 2), t("y", 4)},
			Ops: []graph.Op{
				{Code: 45, CodeName: "STRIDED_SLICE", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
				{Code: 19, CodeName: "RELU", Inputs: []graph.TensorID{1}, Outputs: []graph.TensorID{2}},
				{Code: 45, CodeName: "STRIDED_SLICE", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{3}},
				{Code: 19, CodeName: "RELU", Inputs: []graph.TensorID{3}, Outputs: []graph.TensorID{4}},
				{Code: 2, CodeName: "CONCATENATION", Inputs: []graph.TensorID{2, 4}, Outputs: []graph.TensorID{5}},
			},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{5},
		}},
		Stripes: []graph.StripeRegion{{Input: 0, Output: 5, Ops: []int{0}, Rows: [][2]int32{{0, 2}, {2, 4}}, MACs: 200, ExtraMACs: 20}},
	}
}

// TestReportShowsStripes checks the report map of a rewritten model: each
// stripe's tensors are boxes of class stripe whose detail names the
// stripe, and a legend lists the region.
func TestReportShowsStripes(t *testing.T) {
	m := stripedModel()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	html := string(emit.Report(m, p, emit.Meta{ModelName: "striped"}))
	assert.Contains(t, html, `<span class="stripe"></span>stripe`)
	assert.Contains(t, html, "<li>0:0 (x) → 0:5 (y): 1 operators in 2 stripes (rows 0–2, 2–4, halo rows recomputed), 20 extra MACs (10.0 % of the region's 200)</li>")
	details := map[string]string{}
	for _, r := range rectRE.FindAllStringSubmatch(html, -1) {
		name, _, _ := strings.Cut(r[4], ": ")
		details[name] = r[0]
	}
	for id, want := range map[string]string{"0:1 x/stripe0/slice": "stripe 1 of 2 of 0:5 (y), rows 0–2", "0:2 y/stripe0": "stripe 1 of 2",
		"0:3 x/stripe1/slice": "stripe 2 of 2 of 0:5 (y), rows 2–4", "0:4 y/stripe1": "stripe 2 of 2"} {
		assert.Contains(t, details[id], `class="alloc stripe"`, id)
		assert.Contains(t, details[id], want, id)
	}
	for _, id := range []string{"0:0 x", "0:5 y"} {
		assert.NotContains(t, details[id], "stripe", "%s is the region's own", id)
	}
	assert.Contains(t, html, "<li>0:2 y/stripe0: 4 B, stripe 1 of 2 of 0:5 (y), rows 0–2</li>", "the peak's list names the stripe")
	plain := string(emit.Report(denseModel(), p, emit.Meta{ModelName: "dense"}))
	assert.NotContains(t, plain, `class="stripe"`, "no legend without stripes")
}

// TestCHeaderListsStripes checks the C header's banner of a rewritten
// model: one line per region with X, Y, k, rows and the extra MACs;
// nothing for a model without stripes.
func TestCHeaderListsStripes(t *testing.T) {
	for _, m := range []*graph.Model{stripedModel(), denseModel()} {
		lt, err := liveness.Analyze(m, liveness.Options{})
		require.NoError(t, err)
		p, err := plan.Build(context.Background(), m, lt, plan.Options{})
		require.NoError(t, err)
		files, err := emit.C(m, p, emit.COptions{Prefix: "net"})
		require.NoError(t, err)
		h := string(files[0].Data)
		if m.Stripes == nil {
			assert.NotContains(t, h, "stripe")
			continue
		}
		assert.Contains(t, h, " * Run stripe by stripe (--patches): the model was rewritten, and tensor and\n"+
			" * operator indices are the rewritten model's (--emit-tflite writes it):\n"+
			" * - X 0:0 (x) -> Y 0:5 (y): 1 operators, k = 2, Y rows 0-2, 2-4;\n"+
			" *   20 extra MACs (10.0 % of the region's 200).\n")
	}
}
