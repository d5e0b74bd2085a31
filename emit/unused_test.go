package emit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestUnusedRulesReported checks that a rule that selects nothing is a
// warning line in the summary and an unused_rules entry in plan.json.
func TestUnusedRulesReported(t *testing.T) {
	m := denseModel()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	rules := []plan.Rule{{Name: "weights", Memory: "FLASH"}, {Name: "model/big*", Memory: "SRAM"}}
	p, err := plan.Build(context.Background(), m, lt, plan.Options{Rules: rules})
	require.NoError(t, err)

	assert.Contains(t, string(emit.Summary(m, p)), "\n  warning: rule 1 (name \"model/big*\") selects nothing: no tensor's name matches\n")
	js, err := emit.JSON(m, p, emit.Meta{ModelName: "dense", Version: "test"})
	require.NoError(t, err)
	var v struct {
		UnusedRules []map[string]any `json:"unused_rules"`
	}
	require.NoError(t, json.Unmarshal(js, &v))
	assert.Equal(t, []map[string]any{{"rule": 1.0, "reason": "no tensor's name matches"}}, v.UnusedRules)
}
