package liveness_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// Codes of the copying operators these tests use.
const (
	codeConcat graph.Opcode = 2
	codeSlice  graph.Opcode = 65
)

// row is a float32 tensor of shape [1, n].
func row(name string, n int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, n}, Size: int64(n) * 4}
}

// concatGraph is in -> FC -> a [1,4], in -> FC -> b [1,8], CONCATENATION
// (a, b) on axis 1 -> y [1,12] -> FC -> out, with edits.
func concatGraph(edit func(m *graph.Model, sg *graph.Subgraph)) *graph.Model {
	cat := op(codeConcat, ids(1, 2), ids(3))
	cat.Options = &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Kind: graph.OptionInt, Int: 1, Present: true}}}
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{row("in", 4), row("a", 4), row("b", 8), row("y", 12), row("out", 4)},
		Inputs:  ids(0), Outputs: ids(4),
		Ops: []graph.Op{
			op(codeFullyConnected, ids(0), ids(1)),
			op(codeFullyConnected, ids(0), ids(2)),
			cat,
			op(codeFullyConnected, ids(3), ids(4)),
		},
	}}}
	if edit != nil {
		edit(m, &m.Subgraphs[0])
	}
	return m
}

// constInt32 appends a constant INT32 vector to m and returns its id.
func constInt32(m *graph.Model, sg *graph.Subgraph, v ...int32) graph.TensorID {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
	}
	m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "k", Type: graph.Int32, Shape: []int32{int32(len(v))},
		Buffer: graph.BufferIndex(len(m.Buffers) - 1), Size: int64(len(data))})
	return graph.TensorID(len(sg.Tensors) - 1)
}

func TestExactOverlapCopies(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	y := ref(0, 3)
	type at struct {
		root *graph.TensorRef
		off  int64
	}
	tests := []struct {
		name string
		edit func(m *graph.Model, sg *graph.Subgraph)
		off  bool // ExactOverlap off
		want map[int]at
	}{
		{name: "each input in its slot", want: map[int]at{1: {&y, 0}, 2: {&y, 16}, 3: {nil, 0}}},
		{name: "off: every input keeps its own bytes", off: true, want: map[int]at{1: {nil, 0}, 2: {nil, 0}}},
		{name: "an input read after the concatenation keeps its slot (its value stays)",
			edit: func(_ *graph.Model, sg *graph.Subgraph) { sg.Ops[3].Inputs = ids(3, 1) },
			want: map[int]at{1: {&y, 0}, 2: {&y, 16}}},
		{name: "a model output keeps its own bytes",
			edit: func(_ *graph.Model, sg *graph.Subgraph) { sg.Outputs = ids(4, 1) },
			want: map[int]at{1: {nil, 0}, 2: {&y, 16}}},
		{name: "the same tensor twice: no slot", edit: func(_ *graph.Model, sg *graph.Subgraph) {
			sg.Ops[2].Inputs = ids(2, 2)
			sg.Tensors[3] = row("y", 16)
		}, want: map[int]at{1: {nil, 0}, 2: {nil, 0}}},
		{name: "a slot off the alignment: not taken", edit: func(_ *graph.Model, sg *graph.Subgraph) {
			sg.Tensors[1], sg.Tensors[3] = row("a", 3), row("y", 11)
		}, want: map[int]at{1: {&y, 0}, 2: {nil, 0}}},
		{name: "an in-place write into the output while an input lives: that input keeps its own bytes",
			edit: func(_ *graph.Model, sg *graph.Subgraph) {
				// y -> RELU -> z (in place over y) -> FC(z, b) -> out.
				sg.Tensors = append(sg.Tensors, row("z", 12))
				sg.Ops[3].Inputs = ids(5, 2)
				sg.Ops = append(sg.Ops[:3], append([]graph.Op{op(codeRelu, ids(3), ids(5))}, sg.Ops[3:]...)...)
			}, want: map[int]at{1: {&y, 0}, 2: {nil, 0}, 5: {&y, 0}}},
		{name: "an input's own group that overflows its slot: not moved",
			edit: func(m *graph.Model, sg *graph.Subgraph) {
				// a = SLICE(p)[4:8] of p [1,8] written by FC: a's group is p's.
				p := graph.TensorID(len(sg.Tensors))
				sg.Tensors = append(sg.Tensors, row("p", 8))
				slice := op(codeSlice, ids(int(p), int(constInt32(m, sg, 0, 4)), int(constInt32(m, sg, 1, 4))), ids(1))
				sg.Ops[0].Outputs = []graph.TensorID{p}
				sg.Ops = append(sg.Ops[:1], append([]graph.Op{slice}, sg.Ops[1:]...)...)
			}, want: map[int]at{1: {&graph.TensorRef{Tensor: 5}, 16}, 2: {&y, 16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(concatGraph(tt.edit), liveness.Options{Kernels: lib, ExactOverlap: !tt.off})
			require.NoError(t, err)
			for id, w := range tt.want {
				got := lt.Lookup(ref(0, id))
				assert.Equal(t, w.root, got.AliasOf, "tensor %d's root", id)
				assert.Equal(t, w.off, got.AliasOffset, "tensor %d's offset", id)
				if w.root != nil && got.InPlace == nil {
					require.NotNil(t, got.Copy, "tensor %d relies on an exact-overlap copy", id)
					assert.True(t, got.Copy.Contract.Overlap.ExactOverlapCopy())
				}
				if w.root == nil {
					assert.Nil(t, got.Copy)
				}
			}
		})
	}
}
