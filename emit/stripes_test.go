package emit_test

import (
	"context"
	"encoding/json"
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
		"k": 2.0, "rows": []any{[]any{0.0, 3.0}, []any{3.0, 5.0}}, "macs": 1000.0, "extra_macs": 40.0}}, v.Stripes)
}
