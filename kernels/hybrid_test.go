package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// hybridModel has one operator of the given code reading tensors of the
// given types, in input order (graph.NoTensor where a type is -1).
func hybridModel(code graph.Opcode, name string, types ...graph.ElementType) *graph.Model {
	sg := graph.Subgraph{}
	op := graph.Op{Code: code, CodeName: name}
	for i, ty := range types {
		if ty < 0 {
			op.Inputs = append(op.Inputs, graph.NoTensor)
			continue
		}
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: string(rune('a' + i)), Type: ty, Shape: []int32{4}})
		op.Inputs = append(op.Inputs, graph.TensorID(len(sg.Tensors)-1))
	}
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "out", Type: types[0], Shape: []int32{4}})
	op.Outputs = []graph.TensorID{graph.TensorID(len(sg.Tensors) - 1)}
	sg.Ops = []graph.Op{op}
	return &graph.Model{Subgraphs: []graph.Subgraph{sg}}
}

func TestHybrid(t *testing.T) {
	f32, i8, i4, i32 := graph.Float32, graph.Int8, graph.Int4, graph.Int32
	const none = graph.ElementType(-1)
	for _, tc := range []struct {
		name     string
		model    *graph.Model
		weights  []graph.TensorID // nil: not hybrid
		misreads bool
		source   string
	}{
		{"float FC with int8 weights", hybridModel(9, "FULLY_CONNECTED", f32, i8, f32), []graph.TensorID{1}, false, "fully_connected.cc"},
		{"int8 FC", hybridModel(9, "FULLY_CONNECTED", i8, i8, i32), nil, false, ""},
		{"float FC", hybridModel(9, "FULLY_CONNECTED", f32, f32, f32), nil, false, ""},
		{"float conv with int4 weights", hybridModel(3, "CONV_2D", f32, i4, f32), []graph.TensorID{1}, false, "conv_common.cc"},
		{"float depthwise with int8 weights", hybridModel(4, "DEPTHWISE_CONV_2D", f32, i8), []graph.TensorID{1}, false, "depthwise_conv_common.cc"},
		{"transpose conv reads its input third", hybridModel(67, "TRANSPOSE_CONV", i32, i8, f32), []graph.TensorID{1}, false, "transpose_conv.cc"},
		{"transpose conv of int8", hybridModel(67, "TRANSPOSE_CONV", i32, i8, i8), nil, false, ""},
		{"float SVDF with int8 feature weights", hybridModel(27, "SVDF", f32, i8, f32), []graph.TensorID{1}, false, "svdf_common.cc"},
		{"float batch matmul with int8 rhs", hybridModel(126, "BATCH_MATMUL", f32, i8), []graph.TensorID{1}, false, "batch_matmul.cc"},
		{"float LSTM with int8 weights and no input gate",
			hybridModel(44, "UNIDIRECTIONAL_SEQUENCE_LSTM", f32, none, i8, i8, i8, none, i8, i8, i8), []graph.TensorID{1, 2, 3, 4, 5, 6}, true, "unidirectional_sequence_lstm.cc"},
		{"float ADD of int8", hybridModel(0, "ADD", f32, i8), nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kernels.Hybrid(tc.model)
			if tc.weights == nil {
				assert.Empty(t, got)
				return
			}
			if assert.Len(t, got, 1) {
				h := got[0]
				assert.Equal(t, graph.OpRef{}, h.Op)
				assert.Equal(t, tc.weights, h.Weights)
				assert.Equal(t, tc.misreads, h.Misreads)
				assert.Contains(t, h.Source, "tflite-micro@90b983c: tensorflow/lite/micro/kernels/"+tc.source)
				assert.Equal(t, graph.Float32, tc.model.Subgraphs[0].Tensors[h.Input].Type)
			}
		})
	}
}

func TestHybridDescribe(t *testing.T) {
	m := hybridModel(9, "FULLY_CONNECTED", graph.Float32, graph.Int8, graph.Float32)
	got := kernels.Hybrid(m)
	if assert.Len(t, got, 1) {
		assert.Equal(t, `op 0:0 FULLY_CONNECTED reads FLOAT32 activation 0:0 "a" (FLOAT32) with weights 0:1 "b" (INT8): `+
			`TFLM's kernels refuse it ("Hybrid models are not supported on TFLite Micro." or the like) (`+got[0].Source+`)`, got[0].Describe(m))
	}
}
