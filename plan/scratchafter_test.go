package plan_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// TestScratchAfterTensors: with Options.ScratchAfterTensors the tensors lie
// where they lie with no kernel scratch at all, and the scratch goes
// around them as TFLM's planner puts it; Plan.TFLMHead gives TFLM's head
// for other requests around the same tensors (none: the tensors' own
// extent). Placed together, a request of an early operator may push the
// tensors up instead.
func TestScratchAfterTensors(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	build := func(o plan.Options) *plan.Plan {
		p, err := plan.Build(context.Background(), m, lt, o)
		require.NoError(t, err)
		return p
	}
	offsets := func(p *plan.Plan) map[graph.TensorRef]int64 {
		out := map[graph.TensorRef]int64{}
		for _, a := range p.Allocs {
			if a.Kind == plan.TensorAlloc && a.Class == liveness.Scratch {
				out[a.Ref] = a.Offset
			}
		}
		return out
	}
	alone := build(plan.Options{})
	size, _ := alone.ScratchTotals()
	reqs := []plan.ScratchRequest{{Op: graph.OpRef{Subgraph: 0, Op: 1}, Size: 64}}
	after := build(plan.Options{KernelScratch: reqs, ScratchAfterTensors: true})
	assert.Equal(t, offsets(alone), offsets(after), "the tensors where they lie without scratch")
	head, ok := after.TFLMHead(nil)
	require.True(t, ok)
	assert.Equal(t, size, head, "no request: TFLM's head is the tensors' extent")
	head, ok = after.TFLMHead(reqs)
	require.True(t, ok)
	afterSize, _ := after.ScratchTotals()
	assert.Equal(t, afterSize, head, "the plan's own requests lie where TFLM puts them")
	assert.Greater(t, afterSize, size, "the 64-byte request does not fit between the tensors live with it")
	for _, between := range []bool{false, true} {
		p := build(plan.Options{KernelScratch: reqs, ScratchAfterTensors: true, ScratchBetweenTensors: between})
		js, err := emit.JSON(m, p, emit.Meta{ModelName: "test", Subgraphs: len(m.Subgraphs), Version: "test"})
		require.NoError(t, err)
		assert.Empty(t, verify.Plan(m, js), "between %t: plan.json verifies clean", between)
	}
}
