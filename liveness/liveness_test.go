package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// f32 returns a float32 tensor of n elements.
func f32(name string, n int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{n}, Size: int64(n) * 4}
}

func op(code graph.Opcode, in, out []graph.TensorID, called ...graph.SubgraphIndex) graph.Op {
	return graph.Op{Code: code, CodeName: "OP", Inputs: in, Outputs: out, Called: called}
}

func ids(v ...int) []graph.TensorID {
	out := make([]graph.TensorID, len(v))
	for i, x := range v {
		out[i] = graph.TensorID(x)
	}
	return out
}

// chain is in -> op0 -> a -> op1 -> b -> op2 -> out, with a constant weight
// read by op1, a variable read by op2, an output nobody reads from op0 and a
// tensor nothing refers to.
func chain() *graph.Model {
	w := f32("w", 4)
	w.Buffer = 1
	v := f32("state", 4)
	v.IsVariable = true
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 16)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{f32("in", 4), f32("a", 4), f32("b", 4), f32("out", 4), w, v, f32("dangling", 4), f32("unused", 4)},
			Inputs:  ids(0),
			Outputs: ids(3),
			Ops: []graph.Op{
				op(1, ids(0), ids(1, 6)),
				op(1, ids(1, 4, -1), ids(2)),
				op(1, ids(2, 5), ids(3)),
			},
		}},
	}
}

func TestChain(t *testing.T) {
	lt, err := liveness.Analyze(chain(), liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, lt.Schedule.Steps, "inputs step plus three operators")
	tests := []struct {
		name  string
		id    int
		class liveness.Class
		live  liveness.Interval
	}{
		{"a model input lives from step 0 to its last reader", 0, liveness.Scratch, liveness.Interval{0, 1}},
		{"an intermediate lives from writer to reader", 1, liveness.Scratch, liveness.Interval{1, 2}},
		{"a model output lives to the last step", 3, liveness.Scratch, liveness.Interval{3, 3}},
		{"an output never consumed lives one step", 6, liveness.Scratch, liveness.Interval{1, 1}},
		{"a tensor with data is constant", 4, liveness.Constant, liveness.Interval{2, 2}},
		{"is_variable is persistent", 5, liveness.Persistent, liveness.Interval{3, 3}},
		{"a tensor nothing refers to takes no bytes", 7, liveness.Unallocated, liveness.Interval{-1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lt.Lookup(graph.TensorRef{Subgraph: 0, Tensor: graph.TensorID(tt.id)})
			require.NotNil(t, got)
			assert.Equal(t, tt.class, got.Class)
			assert.Equal(t, tt.live, got.Live)
		})
	}
	assert.Nil(t, lt.Lookup(graph.TensorRef{Subgraph: 0, Tensor: 8}))
	assert.Nil(t, lt.Lookup(graph.TensorRef{Subgraph: 1, Tensor: 0}))
	assert.Nil(t, lt.Lookup(graph.TensorRef{Subgraph: 0, Tensor: -1}))
}

// whileModel is the picture in the package doc: main runs WHILE(cond=1,
// body=2) on its input.
func whileModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{f32("in", 1), f32("out", 1)},
			Inputs:  ids(0), Outputs: ids(1),
			Ops: []graph.Op{op(graph.While, ids(0), ids(1), 1, 2)},
		},
		{
			Tensors: []graph.Tensor{f32("c_in", 1), {Name: "c_out", Type: graph.Bool, Shape: []int32{1}, Size: 1}},
			Inputs:  ids(0), Outputs: ids(1),
			Ops: []graph.Op{op(1, ids(0), ids(1))},
		},
		{
			Tensors: []graph.Tensor{f32("b_in", 1), f32("t1", 1), f32("t2", 1), f32("b_out", 1)},
			Inputs:  ids(0), Outputs: ids(3),
			Ops: []graph.Op{op(1, ids(0), ids(1)), op(1, ids(1), ids(2)), op(1, ids(2), ids(3))},
		},
	}}
}

func TestWhileNestsCalledSubgraphs(t *testing.T) {
	lt, err := liveness.Analyze(whileModel(), liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, 8, lt.Schedule.Steps)
	want := map[graph.TensorRef]liveness.Interval{
		{Subgraph: 0, Tensor: 0}: {0, 7}, // read by WHILE over its whole span
		{Subgraph: 0, Tensor: 1}: {1, 7},
		{Subgraph: 1, Tensor: 0}: {2, 3},
		{Subgraph: 1, Tensor: 1}: {3, 3},
		{Subgraph: 2, Tensor: 0}: {4, 5},
		{Subgraph: 2, Tensor: 1}: {5, 6},
		{Subgraph: 2, Tensor: 2}: {6, 7},
		{Subgraph: 2, Tensor: 3}: {7, 7},
	}
	for ref, live := range want {
		got := lt.Lookup(ref)
		require.NotNil(t, got, "%v", ref)
		assert.Equal(t, live, got.Live, "tensor %v", ref)
		assert.Equal(t, liveness.Scratch, got.Class, "tensor %v", ref)
	}
	assert.Equal(t, liveness.Interval{1, 7}, lt.Schedule.Span(graph.OpRef{Subgraph: 0, Op: 0}), "WHILE spans its callees")
}

func TestUncalledSubgraphRunsAfterMain(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{
		{Tensors: []graph.Tensor{f32("x", 1), f32("y", 1)}, Inputs: ids(0), Outputs: ids(1), Ops: []graph.Op{op(1, ids(0), ids(1))}},
		{Tensors: []graph.Tensor{f32("p", 1), f32("q", 1)}, Inputs: ids(0), Outputs: ids(1), Ops: []graph.Op{op(1, ids(0), ids(1))}},
	}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, lt.Schedule.Steps)
	assert.Equal(t, liveness.Interval{2, 3}, lt.Lookup(graph.TensorRef{Subgraph: 1, Tensor: 0}).Live)
	assert.Equal(t, liveness.Interval{3, 3}, lt.Lookup(graph.TensorRef{Subgraph: 1, Tensor: 1}).Live)
	assert.False(t, lt.Lookup(graph.TensorRef{Subgraph: 0, Tensor: 1}).Live.Overlaps(lt.Lookup(graph.TensorRef{Subgraph: 1, Tensor: 0}).Live))
}

func TestResourceAndZeroSizeTakeNoBytes(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Name: "handle", Type: graph.Resource}, {Name: "empty", Type: graph.Float32, Shape: []int32{0}}, f32("out", 1)},
		Outputs: ids(2),
		Ops:     []graph.Op{op(graph.VarHandle, nil, ids(0)), op(1, ids(0, 1), ids(2))},
	}}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, liveness.Unallocated, lt.Lookup(graph.TensorRef{Tensor: 0}).Class)
	assert.Equal(t, liveness.Unallocated, lt.Lookup(graph.TensorRef{Tensor: 1}).Class)
	assert.Equal(t, liveness.Scratch, lt.Lookup(graph.TensorRef{Tensor: 2}).Class)
}

func TestClassString(t *testing.T) {
	assert.Equal(t, "scratch", liveness.Scratch.String())
	assert.Equal(t, "Class(0)", liveness.Class(0).String())
}

// A subgraph called by two operators runs twice; a tensor it writes but
// never reads must stay live across both calls' writes.
func TestSubgraphCalledTwice(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{f32("x", 1), f32("y", 1), f32("z", 1)},
			Inputs:  ids(0), Outputs: ids(2),
			Ops: []graph.Op{
				op(graph.CallOnce, nil, nil, 1), // step 1, callee at 2..3
				op(1, ids(0), ids(1)),           // step 4
				op(graph.CallOnce, nil, nil, 1), // step 5, callee at 6..7
				op(1, ids(1), ids(2)),           // step 8
			},
		},
		{
			Tensors: []graph.Tensor{f32("once", 1), f32("never_read", 1)},
			Ops:     []graph.Op{op(1, nil, ids(0, 1))},
		},
	}}
	// The callee's op writes "never_read" at steps 3 and 7.
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, 9, lt.Schedule.Steps)
	assert.Equal(t, liveness.Interval{3, 7}, lt.Lookup(graph.TensorRef{Subgraph: 1, Tensor: 1}).Live)
	assert.Equal(t, liveness.Interval{5, 7}, lt.Schedule.Span(graph.OpRef{Subgraph: 0, Op: 2}))
}
