package driver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// TestCompileEmptyModel compiles models with no operators and no tensors
// under the configurations that take different paths (in-place search,
// both schedules, every planner, external arenas, the rewritten model,
// the report): each is an empty plan that verifies, not a panic.
func TestCompileEmptyModel(t *testing.T) {
	tflm, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	m55, err := kernels.CPU("cortex-m55")
	require.NoError(t, err)
	withKernels := func(lib *kernels.Library) func(*driver.Config) {
		return func(c *driver.Config) { c.Kernels, c.Liveness.Kernels = lib, lib }
	}
	models := map[string]*graph.Model{
		"one empty subgraph":    {Version: tflite.SchemaVersion, Subgraphs: []graph.Subgraph{{}}},
		"with the empty buffer": {Version: tflite.SchemaVersion, Subgraphs: []graph.Subgraph{{}}, Buffers: []graph.Buffer{{}}},
		"two empty subgraphs":   {Version: tflite.SchemaVersion, Subgraphs: []graph.Subgraph{{}, {}}, Buffers: []graph.Buffer{{}}},
	}
	for _, tc := range []struct {
		name string
		set  func(*driver.Config)
	}{
		{"no kernels", func(*driver.Config) {}},
		{"tflm-reference", withKernels(tflm)},
		{"cmsis-nn", func(c *driver.Config) { withKernels(cmsis)(c); c.Target = m55 }},
		{"model schedule", func(c *driver.Config) { withKernels(tflm)(c); c.Schedule = driver.ScheduleModel }},
		{"tflm planner", func(c *driver.Config) { withKernels(tflm)(c); c.Plan.Planner = plan.PlannerTFLM }},
		{"linear planner", func(c *driver.Config) { withKernels(tflm)(c); c.Plan.Planner = "linear" }},
		{"external arenas", func(c *driver.Config) { withKernels(tflm)(c); c.Plan.External = []string{"*"} }},
		{"emit tflite and report", func(c *driver.Config) { withKernels(tflm)(c); c.EmitTFLite, c.Report = true, true }},
	} {
		for name, m := range models {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				data, err := tflite.Encode(m, tflite.EncodeOptions{})
				require.NoError(t, err)
				cfg := testConfig("empty")
				tc.set(&cfg)
				out, err := driver.Compile(context.Background(), data, cfg)
				require.NoError(t, err)
				assert.Empty(t, out.Plan.Allocs, "nothing to place")
				for _, a := range out.Plan.Arenas {
					assert.Zero(t, a.Size, "arena %s", a.Name)
				}
				assert.Len(t, out.Plan.Schedule.Order, len(m.Subgraphs))
				assert.Empty(t, verify.Plan(out.Model, out.PlanJSON))
				require.Len(t, out.CFiles, 2)
				if cfg.Report {
					assert.NotEmpty(t, out.Report)
				}
				if cfg.EmitTFLite {
					require.NotNil(t, out.TFLite)
					back, err := tflite.Load(out.TFLite.Data)
					require.NoError(t, err, "the rewritten model loads")
					assert.Len(t, back.Subgraphs, len(m.Subgraphs))
					again, err := driver.Compile(context.Background(), out.TFLite.Data, cfg)
					require.NoError(t, err, "the rewritten model compiles")
					assert.Empty(t, again.Plan.Allocs)
				}
			})
		}
	}
}
