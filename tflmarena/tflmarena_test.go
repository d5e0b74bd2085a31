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

// TestPlannerRecords: while it plans, TFLM's GreedyMemoryPlanner keeps a
// 40-byte record per buffer in the arena's free memory (aligned to 16
// at both ends): three buffers need 120 bytes there, so 128 free bytes
// plan them and 112 do not; what comes after may take that memory.
func TestPlannerRecords(t *testing.T) {
	steps := []step{{opPersistent, 64, 16}, {kind: opPlanner, bytes: 3}, {opPersistent, 64, 16}}
	for _, tc := range []struct {
		arena int64
		ok    bool
	}{{64 + 128, true}, {64 + 112, false}, {64 + 120, false}} {
		assert.Equal(t, tc.ok, replayOn(steps, tc.arena).ok, "arena %d", tc.arena)
	}
}
