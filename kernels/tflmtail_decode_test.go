package kernels

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestTFLMDecodeSizesMatchHeaders compiles a static_assert for each
// DecodeState's sizeof with g++ (host64) and arm-none-eabi-g++ (cortex-m).
func TestTFLMDecodeSizesMatchHeaders(t *testing.T) {
	types := map[byte]string{dcmLUT: "tflite::DecodeStateLut", dcmPrune: "tflite::DecodeStatePrune", dcmHuffman: "tflite::DecodeStateHuffman"}
	for _, ptr := range []int64{8, 4} {
		t.Run(fmt.Sprint(ptr), func(t *testing.T) {
			t.Parallel()
			src := "#include \"tensorflow/lite/micro/kernels/decode_state_lut.h\"\n" +
				"#include \"tensorflow/lite/micro/kernels/decode_state_prune.h\"\n" +
				"#include \"tensorflow/lite/micro/kernels/decode_state_huffman.h\"\n" +
				fmt.Sprintf("static_assert(sizeof(tflite::DecodeState*) == %d, \"pointer\");\n", ptr)
			for ty, name := range types {
				src += fmt.Sprintf("static_assert(sizeof(%s) == %d, %q);\n", name, decodeStateBytes[ty].on(ptr), name)
			}
			compileAsserts(t, ptr, src)
		})
	}
}

// TestTFLMDecode checks kernels.TFLM and TFLMRefusal on TFLM_DECODE by
// hand: the steps per pair, Prune's zero points, and each refusal.
func TestTFLMDecode(t *testing.T) {
	dcm := func(ty, version, typeVersion, b5 byte) []byte {
		d := make([]byte, 16+8)
		d[0], d[1], d[4], d[5] = ty, version, typeVersion, b5
		return d
	}
	u8 := func(buf graph.BufferIndex) graph.Tensor {
		return graph.Tensor{Type: graph.Uint8, Shape: []int32{24}, Buffer: buf}
	}
	qc := func(zp ...int64) *graph.Quantization {
		q := &graph.Quantization{ZeroPoint: zp}
		for range zp {
			q.Scale = append(q.Scale, 0.1)
		}
		return q
	}
	buffers := []graph.Buffer{{}, {Data: make([]byte, 24)},
		{Data: dcm(dcmLUT, 1, 1, 4)},     // 2
		{Data: dcm(dcmPrune, 1, 1, 0)},   // 3
		{Data: dcm(dcmHuffman, 1, 1, 0)}, // 4 16-bit table
		{Data: dcm(dcmCustom, 1, 1, 0)},  // 5
		{Data: dcm(dcmLUT, 2, 1, 4)},     // 6
		{Data: dcm(dcmLUT, 1, 3, 4)},     // 7
		{Data: make([]byte, 8)},          // 8
		{Data: dcm(9, 1, 1, 0)},          // 9
	}
	tensors := []graph.Tensor{
		u8(1), u8(2), u8(3), u8(4), u8(5), u8(6), u8(7), u8(8), u8(9), // 0-8: data, DCMs
		{Type: graph.Int8, Shape: []int32{4, 6}, Quantization: qc(0, 1, 0, 2)},                                                                               // 9
		{Type: graph.Float32, Shape: []int32{4, 6}},                                                                                                          // 10
		{Type: graph.Int16, Shape: []int32{4, 6}, Quantization: qc(0, 1, 0, 2)},                                                                              // 11
		{Type: graph.Int8, Shape: []int32{4, 6, 1}, Quantization: &graph.Quantization{QuantizedDim: 1, Scale: []float32{1, 1, 1, 1}, ZeroPoint: []int64{0}}}, // 12
		{Type: graph.Uint8, Shape: []int32{4, 6}},                                                                                                            // 13
		{Type: graph.Uint8, Shape: []int32{24}},                                                                                                              // 14 not constant
	}
	m := &graph.Model{Buffers: buffers, Subgraphs: []graph.Subgraph{{Tensors: tensors}}}
	temp := func(id graph.TensorID) TFLMStep { return TFLMStep{Kind: TFLMTempTensor, Tensor: id} }
	persist := func(n int64) TFLMStep { return TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{Bytes: n, Align: 16}} }
	ids := func(v ...graph.TensorID) []graph.TensorID { return v }
	cases := []struct {
		name    string
		ins     []graph.TensorID
		outs    []graph.TensorID
		ptr     int64
		prepare []TFLMStep
		refused string
	}{
		{name: "lut", ins: ids(0, 1), outs: ids(10), ptr: 8, prepare: []TFLMStep{persist(8), temp(0), temp(1), temp(10), persist(72)}},
		{name: "lut cortex-m", ins: ids(0, 1), outs: ids(10), ptr: 4, prepare: []TFLMStep{persist(4), temp(0), temp(1), temp(10), persist(36)}},
		{name: "two pairs", ins: ids(0, 1, 0, 3), outs: ids(10, 9), ptr: 4,
			prepare: []TFLMStep{persist(8), temp(0), temp(1), temp(10), persist(36), temp(0), temp(3), temp(9), persist(28)}},
		{name: "prune zero points", ins: ids(0, 2), outs: ids(9), ptr: 8, prepare: []TFLMStep{persist(8), temp(0), temp(2), temp(9), persist(80), persist(4)}},
		{name: "prune float", ins: ids(0, 2), outs: ids(10), ptr: 4, prepare: []TFLMStep{persist(4), temp(0), temp(2), temp(10), persist(40)}},
		{name: "prune int16 zero points", ins: ids(0, 2), outs: ids(11), ptr: 8, refused: "its Prepare refuses output 0: All zero-points must be zero"},
		{name: "huffman 16-bit int16", ins: ids(0, 3), outs: ids(11), ptr: 8, refused: "its Prepare refuses output 0: a 16-bit Huffman table decodes INT8 only, not INT16"},
		{name: "custom type", ins: ids(0, 4), outs: ids(9), ptr: 8, refused: "its Prepare refuses the custom decode type of input 1 (Custom decode type not yet supported)"},
		{name: "unknown type", ins: ids(0, 8), outs: ids(9), ptr: 8, refused: "its Prepare refuses decode type 9 of input 1 (unsupported decode type)"},
		{name: "version", ins: ids(0, 5), outs: ids(9), ptr: 8, refused: "its Prepare refuses DCM version 2 of input 1 (version 2 != 1)"},
		{name: "type version", ins: ids(0, 6), outs: ids(9), ptr: 8, refused: "its Prepare refuses output 0: its DCM's type version is 3, not 1"},
		{name: "short DCM", ins: ids(0, 7), outs: ids(9), ptr: 8, refused: "its Prepare reads a 16-byte DCM from input 1, which holds 8 bytes"},
		{name: "axis", ins: ids(0, 1), outs: ids(12), ptr: 8, refused: "its Prepare refuses output 0: unsupported quantization axis 1"},
		{name: "uint8 output", ins: ids(0, 1), outs: ids(13), ptr: 8, refused: "its Eval refuses output 0 of type UINT8"},
		{name: "input not constant", ins: ids(14, 1), outs: ids(9), ptr: 8, refused: "its Prepare refuses inputs 0 and 1 unless both are constant"},
		{name: "odd inputs", ins: ids(0, 1, 0), outs: ids(9), ptr: 8, refused: "its Prepare needs two inputs per output and at least one output (3 inputs, 1 outputs)"},
		{name: "omitted", ins: ids(0, -1), outs: ids(9), ptr: 8, refused: "its Prepare fails on input 1: omitted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m.Subgraphs[0].Ops = []graph.Op{{Code: graph.Custom, CustomName: "TFLM_DECODE", Version: 1, Inputs: c.ins, Outputs: c.outs}}
			op := &m.Subgraphs[0].Ops[0]
			k, ok := TFLM(m, 0, op, c.ptr)
			require.True(t, ok)
			assert.Equal(t, c.refused, k.Refused)
			assert.Equal(t, c.refused, TFLMRefusal(m, 0, op))
			if c.refused == "" {
				assert.Empty(t, k.Params)
				assert.Empty(t, k.Init)
				assert.Equal(t, c.prepare, k.Prepare)
			}
		})
	}
}
