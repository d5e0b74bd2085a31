package tflmarena

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestRunReplaysTheAllocator checks the replay against hand-worked
// arenas: a persistent buffer takes the end of the arena aligned down, a
// temporary fails past the tail, a head resize needs the temporaries
// reset.
func TestRunReplaysTheAllocator(t *testing.T) {
	steps := []step{{opPersistent, 72, 8}, {opResize, 192, 8}, {opTemp, 64, 8}}
	ok, tail := run(steps, 336)
	assert.True(t, ok)
	assert.Equal(t, int64(72), tail)
	ok, _ = run(steps, 320) // 192 + 64 + 72 = 328 > 320
	assert.False(t, ok)
	ok, _ = run([]step{{opTemp, 16, 8}, {opResize, 16, 8}}, 1024)
	assert.False(t, ok, "a resize with temporaries outstanding fails, as ResizeBuffer does")
}

// TestComputeRefusesUnknownOperators: an operator the kernel data does not
// know is an error naming it, not a guess.
func TestComputeRefusesUnknownOperators(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Name: "a", Type: graph.Float32, Shape: []int32{1}, Size: 4}},
		Ops:     []graph.Op{{Code: graph.Custom, CustomName: "Mystery", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{0}}},
	}}}
	_, err := Compute(m, 16, Host64, Kernels{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "custom Mystery")
}

// TestPlannerReadable: the planner's arrays (40 bytes per buffer it could
// hold, buffer_offsets_ last) survive the persistent buffers allocated
// after planning only when the arena leaves room above them.
func TestPlannerReadable(t *testing.T) {
	steps := []step{{opPersistent, 64, 16}, {kind: opPlanner, bytes: 1}, {opPersistent, 64, 16}}
	small := replayOn(steps, 192) // 128 free: 3 buffers, arrays up to 36*3+4 = 112 > 64
	assert.True(t, small.ok)
	assert.False(t, small.plannerReadable)
	large := replayOn(steps, 2048) // 1920 free: 48 buffers, arrays up to 1732 <= 1920-64
	assert.True(t, large.ok)
	assert.True(t, large.plannerReadable)
}
