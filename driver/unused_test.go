package driver_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/plan"
)

// TestUnusedRulesInPlanJSON checks that rules that select nothing reach
// plan.json's unused_rules, which the schema accepts and the verifier
// ignores (the plan verifies clean), and that a plan without such rules has
// no unused_rules key.
func TestUnusedRulesInPlanJSON(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	cfg := testConfig("hello_world_int8")
	cfg.Plan.Rules = []plan.Rule{{Tensor: "0:99", Memory: "SRAM"}, {Tensor: "0:1", Memory: "FLASH"}, {Name: "nope*", Memory: "SRAM"}}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.Equal(t, []any{
		map[string]any{"rule": 0.0, "reason": "subgraph 0 has 10 tensor(s)"},
		map[string]any{"rule": 2.0, "reason": "no tensor's name matches"},
	}, v["unused_rules"])
	c := loadSchema(t)
	c.check("$", any(v), c.root)
	assert.Empty(t, c.errs)

	cfg.Plan.Rules = cfg.Plan.Rules[1:2]
	out, err = driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	v = nil
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.NotContains(t, v, "unused_rules")
}

// TestUnusedExternalInPlanJSON checks that an external_arenas glob that
// binds nothing reaches plan.json's unused_external_arenas (which the
// schema accepts) and the summary, and that --strict refuses it.
func TestUnusedExternalInPlanJSON(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	cfg := testConfig("hello_world_int8")
	cfg.Plan.External = []string{"scratch_*", "nope_*"}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.Equal(t, []any{"nope_*"}, v["unused_external_arenas"])
	c := loadSchema(t)
	c.check("$", any(v), c.root)
	assert.Empty(t, c.errs)
	assert.Contains(t, string(emit.Summary(out.Model, out.Plan)), `warning: external arena glob "nope_*" binds no arena`)

	cfg.Plan.Strict = true
	_, err = driver.Compile(context.Background(), data, cfg)
	require.ErrorContains(t, err, `external arena glob "nope_*" binds no arena`)
}
