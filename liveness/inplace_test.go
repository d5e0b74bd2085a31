package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// TFLite builtin codes of the operators these tests use.
const (
	codeAdd            graph.Opcode = 0
	codeFullyConnected graph.Opcode = 9
	codeRelu           graph.Opcode = 19
)

// inPlaceGraph is in -> FC -> a -> RELU -> b -> ADD(b, c) -> d -> FC ->
// out, with c = FC(in) and, per case, edits.
func inPlaceGraph(edit func(sg *graph.Subgraph)) *graph.Model {
	sg := graph.Subgraph{
		Tensors: []graph.Tensor{f32("in", 4), f32("a", 4), f32("b", 4), f32("c", 4), f32("d", 4), f32("out", 4)},
		Inputs:  ids(0), Outputs: ids(5),
		Ops: []graph.Op{
			op(codeFullyConnected, ids(0), ids(1)),
			op(codeFullyConnected, ids(0), ids(3)),
			op(codeRelu, ids(1), ids(2)),
			op(codeAdd, ids(2, 3), ids(4)),
			op(codeFullyConnected, ids(4), ids(5)),
		},
	}
	if edit != nil {
		edit(&sg)
	}
	return &graph.Model{Subgraphs: []graph.Subgraph{sg}}
}

func TestInPlace(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	a, b, c, in := ref(0, 1), ref(0, 2), ref(0, 3), ref(0, 0)
	tests := []struct {
		name      string
		edit      func(sg *graph.Subgraph)
		overwrite bool
		want      map[int]*graph.TensorRef // tensor -> AliasOf
		inputs    map[int]graph.TensorRef  // tensor -> the input it was written over
	}{
		{
			name:   "RELU over a, then ADD over b: one group rooted at a",
			want:   map[int]*graph.TensorRef{2: &a, 4: &a, 3: nil, 1: nil, 5: nil},
			inputs: map[int]graph.TensorRef{2: a, 4: b},
		},
		{
			name: "an input read later is not written over",
			edit: func(sg *graph.Subgraph) { sg.Ops[4].Inputs = ids(4, 1) }, // the last FC reads a too
			// RELU may not write over a; ADD may write over b (dies there).
			want:   map[int]*graph.TensorRef{2: nil, 4: &b},
			inputs: map[int]graph.TensorRef{4: b},
		},
		{
			name:   "ADD takes its second input when the first lives on",
			edit:   func(sg *graph.Subgraph) { sg.Ops[4].Inputs = ids(4, 2) }, // the last FC reads b too
			want:   map[int]*graph.TensorRef{2: &a, 4: &c},
			inputs: map[int]graph.TensorRef{2: a, 4: c},
		},
		{
			name: "shapes differ: no contract applies",
			edit: func(sg *graph.Subgraph) {
				sg.Tensors[2] = graph.Tensor{Name: "b", Type: graph.Float32, Shape: []int32{2, 2}, Size: 16}
			},
			want: map[int]*graph.TensorRef{2: nil},
		},
		{
			name: "a model output is never written in place",
			edit: func(sg *graph.Subgraph) { sg.Outputs = ids(5, 2) },
			want: map[int]*graph.TensorRef{2: nil},
		},
		{
			name: "a model input only with OverwriteInputs",
			edit: func(sg *graph.Subgraph) {
				sg.Ops[2].Inputs = ids(0)
				sg.Ops[0].Inputs = ids(3)
				sg.Ops[1].Inputs = ids(0)
			},
			// RELU reads in (also read by op 1, which runs before it).
			want: map[int]*graph.TensorRef{2: nil},
		},
		{
			name: "a model input with OverwriteInputs",
			edit: func(sg *graph.Subgraph) {
				sg.Ops[2].Inputs = ids(0)
				sg.Ops[0].Inputs = ids(3)
				sg.Ops[1].Inputs = ids(0)
			},
			overwrite: true,
			want:      map[int]*graph.TensorRef{2: &in},
			inputs:    map[int]graph.TensorRef{2: in},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(inPlaceGraph(tt.edit), liveness.Options{Kernels: lib, OverwriteInputs: tt.overwrite})
			require.NoError(t, err)
			for tensor, want := range tt.want {
				got := lt.Lookup(ref(0, tensor))
				assert.Equal(t, want, got.AliasOf, "tensor %d's alias_of", tensor)
				if input, ok := tt.inputs[tensor]; ok {
					require.NotNil(t, got.InPlace, "tensor %d is written in place", tensor)
					assert.Equal(t, input, got.InPlace.Input)
				} else {
					assert.Nil(t, got.InPlace, "tensor %d is not written in place", tensor)
				}
			}
			assert.Equal(t, kernels.TFLMReference, lt.Kernels)
		})
	}
}

// TestInPlaceGroupSpan: a group written in place lives from its root's
// first step to its last member's last, with no gap, and without a kernel
// library nothing is written in place.
func TestInPlaceGroupSpan(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	lt, err := liveness.Analyze(inPlaceGraph(nil), liveness.Options{Kernels: lib})
	require.NoError(t, err)
	root := lt.Lookup(ref(0, 1))
	assert.Equal(t, liveness.Interval{First: 1, Last: 3}, root.Live)
	assert.Equal(t, liveness.Interval{First: 1, Last: 5}, root.Group, "a (1..3), b (3..4), d (4..5)")

	plain, err := liveness.Analyze(inPlaceGraph(nil), liveness.Options{})
	require.NoError(t, err)
	for _, tn := range plain.Tensors {
		assert.Nil(t, tn.InPlace)
		assert.Nil(t, tn.AliasOf)
	}
	assert.Empty(t, plain.Kernels)
}
