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

// TFLite builtin codes of the operators with offset contracts.
const (
	codePad      graph.Opcode = 34
	codeQuantize graph.Opcode = 114
)

// shaped returns a tensor of the given type and shape.
func shaped(name string, typ graph.ElementType, shape ...int32) graph.Tensor {
	size, err := graph.ByteSize(typ, shape)
	if err != nil {
		panic(err)
	}
	return graph.Tensor{Name: name, Type: typ, Shape: shape, Size: size}
}

// offsetGraph is in -> FC -> a -> PAD (by constant paddings p) -> b ->
// QUANTIZE -> c -> FC -> out, where a is FLOAT32 [1, 4, 4, 4], padded by
// one row and one column after (TensorFlow's stride-2 SAME) into b, [1,
// 5, 5, 4], and c is b quantized to INT8, with per case edits. PAD's input
// may start from 48 bytes after its output (the 3 padding elements
// written before a's last element, at (3, 3), is copied: 12 elements, 48
// bytes) to 144 (its end at the output's, 36 padding elements);
// QUANTIZE's from 3 bytes before its output to where it starts.
func offsetGraph(edit func(sg *graph.Subgraph)) *graph.Model {
	pads := []int32{0, 0, 0, 1, 0, 1, 0, 0}
	data := make([]byte, 4*len(pads))
	for i, p := range pads {
		data[4*i] = byte(p)
	}
	p := shaped("p", graph.Int32, 4, 2)
	p.Buffer = 1
	sg := graph.Subgraph{
		Tensors: []graph.Tensor{shaped("in", graph.Float32, 1, 4, 4, 4), shaped("a", graph.Float32, 1, 4, 4, 4), p,
			shaped("b", graph.Float32, 1, 5, 5, 4), shaped("c", graph.Int8, 1, 5, 5, 4), shaped("out", graph.Int8, 1, 5, 5, 4)},
		Inputs: ids(0), Outputs: ids(5),
		Ops: []graph.Op{
			op(codeFullyConnected, ids(0), ids(1)),
			op(codePad, ids(1, 2), ids(3)),
			op(codeQuantize, ids(3), ids(4)),
			op(codeFullyConnected, ids(4), ids(5)),
		},
	}
	if edit != nil {
		edit(&sg)
	}
	return &graph.Model{Buffers: []graph.Buffer{{}, {Data: data}}, Subgraphs: []graph.Subgraph{sg}}
}

// TestInPlaceOffsets: outputs whose contracts put their input elsewhere
// join its group at the largest offset of the alignment the contract
// allows, and the group's extent covers them.
func TestInPlaceOffsets(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	a := ref(0, 1)
	type member struct {
		aliasOf *graph.TensorRef
		offset  int64
	}
	tests := []struct {
		name    string
		edit    func(sg *graph.Subgraph)
		align   int64
		members map[int]member // tensor -> its group and offset
		extent  liveness.ByteRange
	}{
		{
			name: "aligned to 16: a at b's end, c at b's start", align: 16,
			members: map[int]member{3: {&a, -144}, 4: {&a, -144}},
			extent:  liveness.ByteRange{Lo: -144, Hi: 256},
		},
		{
			name: "aligned to 32: a as late in b as 32 allows", align: 32,
			members: map[int]member{3: {&a, -128}, 4: {&a, -128}},
			extent:  liveness.ByteRange{Lo: -128, Hi: 272},
		},
		{
			name: "aligned to 256: no multiple in 48..144, so PAD keeps its bytes", align: 256,
			members: map[int]member{3: {nil, 0}, 4: {&graph.TensorRef{Tensor: 3}, 0}},
			extent:  liveness.ByteRange{Lo: 0, Hi: 256},
		},
		{
			name: "alignment 0: the default, 16", align: 0,
			members: map[int]member{3: {&a, -144}, 4: {&a, -144}},
			extent:  liveness.ByteRange{Lo: -144, Hi: 256},
		},
		{
			name: "aligned to 1: the input at the output's end", align: 1,
			members: map[int]member{3: {&a, -144}, 4: {&a, -144}},
			extent:  liveness.ByteRange{Lo: -144, Hi: 256},
		},
		{
			name: "a read after PAD is not written over", align: 16,
			edit:    func(sg *graph.Subgraph) { sg.Ops[3].Inputs = ids(4, 1) },
			members: map[int]member{3: {nil, 0}, 4: {&graph.TensorRef{Tensor: 3}, 0}},
			extent:  liveness.ByteRange{Lo: 0, Hi: 256},
		},
		{
			name: "a model output is never written over its input", align: 16,
			edit:    func(sg *graph.Subgraph) { sg.Outputs = ids(5, 3) },
			members: map[int]member{3: {nil, 0}, 4: {nil, 0}},
			extent:  liveness.ByteRange{Lo: 0, Hi: 256},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(offsetGraph(tt.edit), liveness.Options{Kernels: lib, Alignment: tt.align})
			require.NoError(t, err)
			for tensor, want := range tt.members {
				got := lt.Lookup(ref(0, tensor))
				assert.Equal(t, want.aliasOf, got.AliasOf, "tensor %d's group", tensor)
				assert.Equal(t, want.offset, got.AliasOffset, "tensor %d's offset in its group", tensor)
				if want.aliasOf != nil {
					assert.NotNil(t, got.InPlace, "tensor %d is written in place", tensor)
				}
			}
			assert.Equal(t, tt.extent, lt.Lookup(a).Extent, "a's group")
		})
	}
	_, err = liveness.Analyze(offsetGraph(nil), liveness.Options{Kernels: lib, Alignment: -1})
	assert.EqualError(t, err, "liveness: alignment -1 is negative")
}
