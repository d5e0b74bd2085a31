package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestOfflineOffsets: with Options.Offline, PlannerTFLM keeps each named
// tensor at its offset and places the others around them, as TFLM does
// with a model's own offline plan; other planners and banks of limited
// capacity refuse them.
func TestOfflineOffsets(t *testing.T) {
	m := diamond()
	ref := func(i int) graph.TensorRef { return graph.TensorRef{Tensor: graph.TensorID(i)} }
	// b (32 B, live at steps 1-3) at 400: the others fit below it, as
	// they would without it.
	p := build(t, m, plan.Options{Planner: plan.PlannerTFLM, Offline: map[graph.TensorRef]int64{ref(2): 400}})
	b := p.Lookup(plan.TensorKey(ref(2)))
	require.NotNil(t, b)
	assert.Equal(t, int64(400), b.Offset)
	s := arena(t, p, liveness.Scratch)
	assert.Equal(t, int64(432), s.Size, "the pinned tensor's end")
	for _, a := range p.Allocs {
		if a.Class == liveness.Scratch && a.Key != b.Key {
			assert.LessOrEqual(t, a.Offset+a.Size, int64(400), "%v placed below the pinned tensor", a.Key)
		}
	}

	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	_, err = plan.Build(context.Background(), m, lt, plan.Options{Offline: map[graph.TensorRef]int64{ref(2): 400}})
	assert.EqualError(t, err, "plan: offline offsets are kept by planner tflm only, not best")
	g, err := plan.BuiltinPlatform("generic")
	require.NoError(t, err)
	for i := range g.Banks {
		if g.Banks[i].Writable {
			g.Banks[i].Capacity = 4096
		}
	}
	_, err = plan.Build(context.Background(), m, lt, plan.Options{Planner: plan.PlannerTFLM, Platform: &g,
		Offline: map[graph.TensorRef]int64{ref(2): 400}})
	assert.ErrorContains(t, err, "the model's own offline offsets are kept in a bank of unlimited capacity only")
	_, err = plan.Build(context.Background(), m, lt, plan.Options{Planner: plan.PlannerTFLM, Offline: map[graph.TensorRef]int64{ref(2): 8}})
	assert.ErrorContains(t, err, "not a multiple of alignment 16")
}
