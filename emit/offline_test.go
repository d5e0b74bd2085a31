package emit_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

func words(data []byte) []int32 {
	out := make([]int32, len(data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

func TestTFLMOfflinePlan(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	op, err := emit.TFLMOfflinePlan(m, p)
	require.NoError(t, err)
	w := words(op.Data)
	n := len(m.Subgraphs[0].Tensors)
	require.Len(t, w, 3+n)
	assert.Equal(t, []int32{1, 1, int32(n)}, w[:3], "version, subgraphs, tensors")
	planned := 0
	for ti := range m.Subgraphs[0].Tensors {
		a, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: graph.TensorID(ti)}))
		if err == nil && a.Class == liveness.Scratch {
			assert.Equal(t, int32(a.Offset), w[3+ti], "scratch tensor %d at its planned offset", ti)
			planned++
			continue
		}
		assert.Equal(t, int32(-1), w[3+ti], "tensor %d (constant, state or nothing) is TFLM's to place", ti)
	}
	assert.Equal(t, planned, op.Planned)
	assert.Zero(t, op.Deferred)
	s, _ := p.ScratchTotals()
	assert.Equal(t, s, op.ArenaSize)

	version, subgraphs, offsets, err := graph.ReadOfflinePlan(op.Data)
	require.NoError(t, err)
	assert.Equal(t, 1, version)
	assert.Equal(t, 1, subgraphs)
	assert.Equal(t, w[3:], offsets)
}

// TestTFLMOfflinePlanVariableLookup: TFLM finds a later subgraph's
// is_variable tensor i among subgraph 0's offsets, so subgraph 0's tensor i
// must stay TFLM's to place.
func TestTFLMOfflinePlanVariableLookup(t *testing.T) {
	state := tensor("state", graph.Int8, []int32{16}, 0)
	state.IsVariable = true
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{tensor("in", graph.Int8, []int32{16}, 0), tensor("out", graph.Int8, []int32{16}, 0)},
			Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{1},
			Ops: []graph.Op{{Code: graph.CallOnce, CodeName: "CALL_ONCE", Called: []graph.SubgraphIndex{1}},
				{Code: 0, CodeName: "ADD", Inputs: []graph.TensorID{0, 0}, Outputs: []graph.TensorID{1}}},
		},
		{
			Tensors: []graph.Tensor{tensor("x", graph.Int8, []int32{16}, 0), state},
			Ops:     []graph.Op{{Code: 0, CodeName: "ADD", Inputs: []graph.TensorID{1, 1}, Outputs: []graph.TensorID{0}}},
		},
	}}
	p := buildPlan(t, m)
	op, err := emit.TFLMOfflinePlan(m, p)
	require.NoError(t, err)
	w := words(op.Data)
	assert.Equal(t, []int32{1, 2, 4}, w[:3])
	assert.Equal(t, int32(-1), w[3+1], "subgraph 0's tensor 1 shares its index with subgraph 1's variable")
	assert.NotEqual(t, int32(-1), w[3+0])
	assert.NotEqual(t, int32(-1), w[3+2], "subgraph 1's scratch tensor")
	assert.Equal(t, int32(-1), w[3+3], "the variable is TFLM's")
	assert.Equal(t, 1, op.Deferred)
	assert.Equal(t, 2, op.Planned)
}

func TestTFLMOfflinePlanNeedsOneArena(t *testing.T) {
	m := denseModel()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	platform := plan.Platform{Name: "two", Banks: []plan.Bank{
		{Name: "DTCM", Writable: true, Capacity: 32}, {Name: "SRAM", Writable: true, Order: 1}, {Name: "FLASH"}}}
	p, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &platform})
	require.NoError(t, err)
	_, err = emit.TFLMOfflinePlan(m, p)
	assert.ErrorContains(t, err, "emit: TFLM has one arena, but this plan puts scratch tensors in 2: scratch_dtcm (DTCM), scratch_sram (SRAM)")
	assert.ErrorContains(t, err, "--one-scratch-bank", "the error names the way out")

	p, err = plan.Build(context.Background(), m, lt, plan.Options{Platform: &platform, OneScratchBank: true})
	require.NoError(t, err)
	op, err := emit.TFLMOfflinePlan(m, p)
	require.NoError(t, err, "with one scratch bank")
	assert.Equal(t, p.Arenas[len(p.Arenas)-1].Size, op.ArenaSize)
}
