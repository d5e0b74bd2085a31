package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// edges is one subgraph holding every edge case the package doc defines.
func edges() *graph.Model {
	str := graph.Tensor{Name: "text", Type: graph.String, Shape: []int32{1}}
	constStr := graph.Tensor{Name: "vocab", Type: graph.String, Shape: []int32{2}, Buffer: 2, Size: 6}
	dyn := f32("dyn", 4)
	dyn.ShapeSignature = []int32{-1}
	emptyConst := graph.Tensor{Name: "empty_const", Type: graph.Int32, Shape: []int32{0}, Buffer: 1}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {}, {Data: []byte("ab\x00cd\x00")}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				f32("through", 4), // 0: model input and output
				f32("orphan", 4),  // 1: read, never written
				str,               // 2: run-time string
				constStr,          // 3: constant string
				dyn,               // 4: dynamic shape
				emptyConst,        // 5: zero-size constant, empty buffer
				f32("out", 4),     // 6
			},
			Inputs:  ids(0),
			Outputs: ids(0, 6),
			Ops: []graph.Op{
				op(1, ids(0, 2, 3), ids(4)),
				op(1, ids(1, 4, 5, -1), ids(6)),
				op(1, ids(6), nil),
			},
		}},
	}
}

func TestEdgeCases(t *testing.T) {
	lt, err := liveness.Analyze(edges(), liveness.Options{})
	require.NoError(t, err)
	tests := []struct {
		name    string
		tensor  int
		class   liveness.Class
		live    liveness.Interval
		note    string
		dynamic bool
	}{
		{"a model input that is also an output lives over the whole run", 0, liveness.Scratch, liveness.Interval{0, 3}, "", false},
		{"a tensor read but never written is live from its first read", 1, liveness.Scratch, liveness.Interval{2, 2}, "", false},
		{"a run-time string has no static size", 2, liveness.Unallocated, liveness.Interval{1, 1}, liveness.NoteString, false},
		{"a constant string is its buffer's bytes", 3, liveness.Constant, liveness.Interval{1, 1}, "", false},
		{"a dynamic shape is planned with its concrete shape", 4, liveness.Scratch, liveness.Interval{1, 2}, "", true},
		{"a zero-size constant with an empty buffer takes no bytes", 5, liveness.Unallocated, liveness.Interval{2, 2}, liveness.NoteEmpty, false},
		{"a model output read by a later operator lives to the last step", 6, liveness.Scratch, liveness.Interval{2, 3}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lt.Lookup(ref(0, tt.tensor))
			assert.Equal(t, tt.class, got.Class)
			assert.Equal(t, tt.live, got.Live)
			assert.Equal(t, tt.note, got.Note)
			assert.Equal(t, tt.dynamic, got.Dynamic)
		})
	}
	assert.Equal(t, int64(6), lt.Lookup(ref(0, 3)).Size)
}

// TestEmptyModel analyzes a model with no tensors and no operators, with
// and without a kernel library's in-place writes: one step per subgraph's
// inputs, no lifetimes, no panic.
func TestEmptyModel(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	for _, k := range []*kernels.Library{nil, lib} {
		for _, subgraphs := range []int{1, 2} {
			m := &graph.Model{Subgraphs: make([]graph.Subgraph, subgraphs)}
			lt, err := liveness.Analyze(m, liveness.Options{Kernels: k})
			require.NoError(t, err)
			assert.Empty(t, lt.Schedule.Runs)
			assert.Len(t, lt.Schedule.Order, subgraphs)
			assert.Equal(t, subgraphs, lt.Schedule.Steps, "each subgraph's inputs take a step")
		}
	}
}
