package driver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// scratchModel is in [1, 4, 4, 8] int8 -> MEAN over axes 1, 2 -> m
// [1, 1, 1, 8] -> CUSTOM MyOp -> out: MEAN's kernel asks for an int32
// accumulator per output element, the input's rank and the axes; MyOp's
// requests are unknown.
func scratchModel(t *testing.T) []byte {
	t.Helper()
	tensor := func(name string, typ graph.ElementType, shape ...int32) graph.Tensor {
		size, err := graph.ByteSize(typ, shape)
		require.NoError(t, err)
		return graph.Tensor{Name: name, Type: typ, Shape: shape, Size: size}
	}
	axes := tensor("axes", graph.Int32, 2)
	axes.Buffer = 1
	m := &graph.Model{Version: tflite.SchemaVersion,
		Buffers: []graph.Buffer{{}, {Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("in", graph.Int8, 1, 4, 4, 8), axes, tensor("m", graph.Int8, 1, 1, 1, 8), tensor("out", graph.Int8, 1, 1, 1, 8)},
			Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{3},
			Ops: []graph.Op{
				{Code: 40, Version: 1, Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}},
				{Code: graph.Custom, CustomName: "MyOp", Version: 1, Inputs: []graph.TensorID{2}, Outputs: []graph.TensorID{3}},
			},
		}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestKernelScratchPlanned: with a kernel library, every request its
// kernels make is planned (live while its operator runs, verified, in
// plan.json and the C module), and an operator whose requests it cannot
// know is listed, or with Strict fails the compile.
func TestKernelScratchPlanned(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	data := scratchModel(t)
	cfg := driver.Config{ModelName: "scratch", Version: "test", Kernels: lib}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var sizes []int64
	for _, a := range out.Plan.Allocs {
		if a.Kind == plan.KernelScratchAlloc {
			assert.Equal(t, graph.OpRef{Op: 0}, a.Op, "MEAN owns them")
			assert.Equal(t, out.Plan.Schedule.Span(a.Op), a.Live)
			sizes = append(sizes, a.Size)
		}
	}
	assert.Equal(t, []int64{4 * 8, 4 * 4, 4 * 2}, sizes, "accumulator, rank, axes")
	assert.Equal(t, []graph.OpRef{{Op: 1}}, out.Plan.UnknownScratch)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.Equal(t, []any{map[string]any{"subgraph": 0.0, "operator": 1.0, "name": "CUSTOM:MyOp"}}, v["unknown_kernel_scratch"])
	c := loadSchema(t)
	c.check("$", any(v), c.root)
	assert.Empty(t, c.errs, "plan.json against docs/plan.schema.json")
	summary := string(emit.Summary(out.Model, out.Plan))
	assert.Contains(t, summary, "warning: op 0:1 CUSTOM:MyOp may ask for kernel scratch its kernel library has no rule for")

	cfg.Plan.Strict = true
	_, err = driver.Compile(context.Background(), data, cfg)
	assert.EqualError(t, err, "plan: operator 0:1 (CUSTOM:MyOp) asks for kernel scratch its library has no rule for (rules are strict)")

	none, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "scratch", Version: "test"})
	require.NoError(t, err)
	assert.Empty(t, none.Plan.UnknownScratch, "without a library, nothing is planned or listed")
	for _, a := range none.Plan.Allocs {
		assert.NotEqual(t, plan.KernelScratchAlloc, a.Kind)
	}
}

// TestKernelScratchAtBound compiles every corpus model TFLM runs as the
// CLI does with --emit-tflite (kernel scratch on tflm_run's 64-bit
// pointers) and expects the scratch arena, tensors and kernel scratch
// together, no larger than what TFLM's own planner needs for the same
// buffers, at its lower bound, and with every kernel scratch buffer where
// TFLM's planner will put it at no extra cost. Under TFLM's own rules (no
// in-place writes) every arena meets its bound; with them, alias groups
// are rigid shapes whose bound need not be reachable, and an arena above
// it must still be smaller than under TFLM's rules.
func TestKernelScratchAtBound(t *testing.T) {
	var withScratch, below, above int
	for _, m := range tflmModels(t) {
		t.Run(m.File, func(t *testing.T) {
			rules := defaultConfig(t)
			rules.Liveness.Kernels = nil
			base, _ := emitTFLite(t, m, t.TempDir(), rules)
			out, _ := emitTFLite(t, m, t.TempDir(), defaultConfig(t))
			baseArena, arena := soleScratch(t, base.Plan), soleScratch(t, out.Plan)

			assert.Equal(t, baseArena.LowerBound, baseArena.Size, "TFLM's rules: arena at its lower bound, kernel scratch included")
			assert.LessOrEqual(t, arena.Size, m.plannerMax, "arena vs TFLM's planner")
			assert.LessOrEqual(t, baseArena.Size, m.plannerMax, "TFLM's rules: arena vs TFLM's planner")
			assert.Zero(t, arena.TFLMGrowth, "TFLM's placement of kernel scratch costs nothing")
			assert.Zero(t, baseArena.TFLMGrowth, "TFLM's rules: TFLM's placement of kernel scratch costs nothing")
			if arena.Size != arena.LowerBound {
				above++
				assert.Less(t, arena.Size, baseArena.Size, "in place, above the bound: still below TFLM's rules")
			}
			if arena.TensorLowerBound != arena.LowerBound {
				withScratch++
			}
			if arena.Size < m.plannerMax {
				below++
			}
		})
	}
	t.Logf("kernel scratch raises the lower bound of %d models; the arena is smaller than TFLM's planner needs on %d; "+
		"%d in-place arena(s) above their bound", withScratch, below, above)
}

// soleScratch returns a plan's one scratch arena.
func soleScratch(t *testing.T, p *plan.Plan) *plan.Arena {
	t.Helper()
	var arena *plan.Arena
	for i := range p.Arenas {
		if a := &p.Arenas[i]; a.Role == liveness.Scratch {
			require.Nil(t, arena, "one scratch arena")
			arena = a
		}
	}
	require.NotNil(t, arena)
	return arena
}
