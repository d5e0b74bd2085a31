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
	"github.com/heliac/heliac/kernels"
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

// TestUnusedOverridesInPlanJSON checks that kernel_scratch entries that
// apply to no operator reach plan.json's unused_kernel_scratch (which the
// schema accepts, and the verifier ignores) and the summary, that --strict
// refuses them, and that a builtin TFLite does not have is refused at
// once with the name meant.
func TestUnusedOverridesInPlanJSON(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	cfg := testConfig("hello_world_int8")
	cfg.Kernels, err = driver.WithScratch(referenceConfig(t).Kernels, []kernels.ScratchOverride{
		{Builtin: "FULLY_CONNECTED", Buffers: []kernels.ScratchBuffer{{Bytes: 16}}},
		{Builtin: "CONV_2D", Line: 5},
	})
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.Equal(t, []any{map[string]any{"entry": 1.0, "operator": "CONV_2D", "reason": "no operator of the model is CONV_2D"}},
		v["unused_kernel_scratch"])
	c := loadSchema(t)
	c.check("$", any(v), c.root)
	assert.Empty(t, c.errs)
	assert.Contains(t, string(emit.Summary(out.Model, out.Plan)),
		"warning: kernel_scratch entry 2 (CONV_2D, line 5) applies to no operator: no operator of the model is CONV_2D")

	cfg.Plan.Strict = true
	_, err = driver.Compile(context.Background(), data, cfg)
	require.EqualError(t, err, "plan: kernel_scratch entry 2 (CONV_2D, line 5) applies to no operator: no operator of the model is CONV_2D (rules are strict)")

	_, err = driver.WithScratch(cfg.Kernels, []kernels.ScratchOverride{{Builtin: "DEPTHWISE_CONV2D", Line: 3}})
	require.EqualError(t, err, "kernels: kernel_scratch entry 1 (DEPTHWISE_CONV2D, line 3): no TFLite builtin operator is named DEPTHWISE_CONV2D; did you mean DEPTHWISE_CONV_2D?")
}
