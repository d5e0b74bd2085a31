package kernels

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// tflmMathParamTypes and tflmMathOpDataTypes name the C++ type each entry
// of tflmtail_math.go's tables is the size of.
var (
	tflmMathParamTypes = map[string]string{
		"ARG_MAX": "TfLiteArgMaxParams", "ARG_MIN": "TfLiteArgMinParams", "CUMSUM": "TfLiteCumsumParams",
		"L2_NORMALIZATION": "TfLiteL2NormParams", "REDUCE_MAX": "TfLiteReducerParams", "REDUCE_MIN": "TfLiteReducerParams",
		"REDUCE_ALL": "TfLiteReducerParams",
	}
	tflmMathOpDataTypes = map[string]string{
		"ELU": "EluOpData", "L2_NORMALIZATION": "L2NormalizationParams", "PRELU": "PreluParams",
		"REDUCE_MAX": "OpDataReduce", "REDUCE_MIN": "OpDataReduce", "REDUCE_ALL": "OpDataReduce",
		"RSQRT": "OpDataAbsRsqrt", "SELECT_V2": "SelectOpData", "SQUARED_DIFFERENCE": "SquaredDifferenceOpData",
	}
)

// tflmMathLocalStructs restates the members of the OpData structs these
// kernels declare in their .cc files (which ../shared/tflm does not
// hold), at tflmCommit, so the compilers lay them out.
const tflmMathLocalStructs = `
struct EluOpData { int8_t table[256]; };                                   // elu.cc OpData
struct SelectOpData { bool requires_broadcast; };                           // select.cc OpData
struct SquaredDifferenceOpData { bool requires_broadcast; ArithmeticParams arithmetic_params; }; // squared_difference.cc OpData
struct OpDataAbsRsqrt { int32_t multiplier; int shift; int input_offset; int output_offset; bool needs_rescale;
  TfLiteQuantizationType input_quantization_type; TfLiteType input_type; }; // elementwise.cc OpDataAbsRsqrt
struct AddNOpData { int32_t output_activation_min, output_activation_max, input_offset, output_offset,
  input_multiplier, output_multiplier; int input_shift, output_shift, left_shift, scratch_index; }; // add_n.cc OpData
struct CumSumOpData { int32_t output_activation_min, output_activation_max, input_offset, output_offset,
  input_multiplier, output_multiplier; int input_shift, output_shift, left_shift; };      // cumsum.cc OpData
struct LogSoftmaxOpData { int32_t input_multiplier, input_left_shift, reverse_scaling_divisor,
  reverse_scaling_right_shift; int diff_min; size_t outer_size; size_t depth; };          // log_softmax.cc LogSoftmaxOpData
`

// TestTFLMMathSizesMatchHeaders compiles a static_assert for every
// parameter struct and OpData of tflmtail_math.go, with g++ (host64) and
// arm-none-eabi-g++ (cortex-m).
func TestTFLMMathSizesMatchHeaders(t *testing.T) {
	for _, ptr := range []int64{8, 4} {
		t.Run(fmt.Sprint(ptr), func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for _, h := range []string{"tensorflow/lite/c/builtin_op_data.h", "tensorflow/lite/kernels/internal/types.h",
				"tensorflow/lite/micro/kernels/reduce.h"} {
				fmt.Fprintf(&b, "#include %q\n", h)
			}
			b.WriteString("#include <cstddef>\n#include <cstdint>\nusing namespace tflite;\n" + tflmMathLocalStructs)
			names := make([]string, 0, len(tflmMathParams))
			for n := range tflmMathParams {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				ty, ok := tflmMathParamTypes[n]
				require.True(t, ok, "%s: no C type named for its parameters", n)
				p := tflmMathParams[n]
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d && alignof(%s) == %d, %q);\n", ty, p[0].on(ptr), ty, p[1].on(ptr), n)
			}
			names = names[:0]
			for n := range tflmMathOpData {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				ty, ok := tflmMathOpDataTypes[n]
				require.True(t, ok, "%s: no C type named for its OpData", n)
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d, %q);\n", ty, tflmMathOpData[n].on(ptr), n)
			}
			for ty, p := range map[string]pair{"AddNOpData": addNOpData, "CumSumOpData": cumsumOpData, "LogSoftmaxOpData": logSoftmaxOpData} {
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d, %q);\n", ty, p.on(ptr), ty)
			}
			// ABS shares RSQRT's Init (tflmtail.go).
			fmt.Fprintf(&b, "static_assert(sizeof(OpDataAbsRsqrt) == %d, \"ABS\");\n", tflmOpData["ABS"].on(ptr))
			compileAsserts(t, ptr, b.String())
		})
	}
}

// TestTFLMMathKernels checks a few operators' steps by hand, and that a
// type TFLM refuses, or an operator it does not register, has no data
// and says why.
func TestTFLMMathKernels(t *testing.T) {
	tensors := []graph.Tensor{
		{Name: "x", Type: graph.Int8, Shape: []int32{2, 5}, Quantization: &graph.Quantization{Scale: []float32{0.1}, ZeroPoint: []int64{0}}},
		{Name: "y", Type: graph.Int8, Shape: []int32{2, 5}, Quantization: &graph.Quantization{Scale: []float32{0.1}, ZeroPoint: []int64{0}}},
		{Name: "axis", Type: graph.Int32, Shape: []int32{1}, Buffer: 1},
		{Name: "o", Type: graph.Int8, Shape: []int32{2}, Quantization: &graph.Quantization{Scale: []float32{0.1}, ZeroPoint: []int64{0}}},
		{Name: "f", Type: graph.Float32, Shape: []int32{2, 5}},
		{Name: "fo", Type: graph.Float32, Shape: []int32{2, 5}},
		{Name: "z", Type: graph.Int8, Shape: []int32{2, 5}, Quantization: &graph.Quantization{Scale: []float32{0.1}, ZeroPoint: []int64{0}}},
	}
	m := &graph.Model{Buffers: []graph.Buffer{{}, {Data: []byte{1, 0, 0, 0}}}, Subgraphs: []graph.Subgraph{{Tensors: tensors}}}
	temp := func(id graph.TensorID) TFLMStep { return TFLMStep{Kind: TFLMTempTensor, Tensor: id} }
	persist := func(n int64) TFLMStep { return TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{Bytes: n, Align: 16}} }
	cases := []struct {
		name    string
		op      graph.Op
		ptr     int64
		want    TFLMKernel
		refusal string
	}{
		{"add_n int8", graph.Op{CodeName: "ADD_N", Inputs: []graph.TensorID{0, 1, 6}, Outputs: []graph.TensorID{6}}, 4,
			TFLMKernel{Prepare: []TFLMStep{temp(0), temp(6), temp(1), temp(6), persist(40)}}, ""},
		{"add_n float", graph.Op{CodeName: "ADD_N", Inputs: []graph.TensorID{4, 4}, Outputs: []graph.TensorID{5}}, 8,
			TFLMKernel{Prepare: []TFLMStep{temp(4), temp(5), temp(4)}}, ""},
		{"reduce_max int8", graph.Op{CodeName: "REDUCE_MAX", Inputs: []graph.TensorID{0, 2}, Outputs: []graph.TensorID{3}}, 8,
			TFLMKernel{Params: []TFLMAlloc{{1, 1}}, Init: []TFLMAlloc{{44, 16}},
				Prepare: []TFLMStep{temp(0), temp(2), temp(3), temp(0), temp(3), temp(2)}}, ""},
		{"reduce_min float", graph.Op{CodeName: "REDUCE_MIN", Inputs: []graph.TensorID{4, 2}, Outputs: []graph.TensorID{5}}, 4,
			TFLMKernel{Params: []TFLMAlloc{{1, 1}}, Init: []TFLMAlloc{{44, 16}},
				Prepare: []TFLMStep{temp(4), temp(2), temp(4), temp(5), temp(2)}}, ""},
		{"log_softmax float", graph.Op{CodeName: "LOG_SOFTMAX", Inputs: []graph.TensorID{4}, Outputs: []graph.TensorID{5}}, 8,
			TFLMKernel{Prepare: []TFLMStep{temp(4), temp(5)}}, ""},
		{"rsqrt cortex-m", graph.Op{CodeName: "RSQRT", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, 4,
			TFLMKernel{Init: []TFLMAlloc{{28, 16}}, Prepare: []TFLMStep{temp(0), temp(1)}}, ""},
		{"arg_max", graph.Op{CodeName: "ARG_MAX", Inputs: []graph.TensorID{4, 2}, Outputs: []graph.TensorID{2}}, 4,
			TFLMKernel{Params: []TFLMAlloc{{1, 1}}}, ""},
		{"exp int8 refused", graph.Op{CodeName: "EXP", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, 8,
			TFLMKernel{}, "TFLM's EXP kernel takes input 0 of FLOAT32 only, not INT8 (exp.cc ExpPrepare)"},
		{"log_softmax int8 output scale refused", graph.Op{CodeName: "LOG_SOFTMAX", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, 8,
			TFLMKernel{}, "TFLM's LOG_SOFTMAX kernel takes an INT8 output of scale 1/16 and zero point 127 only (log_softmax.cc CalculateOpData)"},
		{"fill variable dims refused", graph.Op{CodeName: "FILL", Inputs: []graph.TensorID{0, 4}, Outputs: []graph.TensorID{5}}, 8,
			TFLMKernel{}, "TFLM's FILL kernel takes a constant input 0 only (fill.cc FillPrepare)"},
		{"pow unregistered", graph.Op{Code: 92, CodeName: "POW", Inputs: []graph.TensorID{4, 4}, Outputs: []graph.TensorID{5}}, 8,
			TFLMKernel{}, `TFLM has no kernel for it ("Didn't find op for builtin opcode 'POW'") (tflite-micro@90b983c: tensorflow/lite/micro/micro_op_resolver.cc:24-54 (GetRegistrationFromOpCode), tensorflow/lite/micro/micro_interpreter.cc:126-133 (PrepareNodeAndRegistrationDataFromFlatbuffer))`},
		{"custom unregistered", graph.Op{Code: graph.Custom, CustomName: "Foo", Inputs: []graph.TensorID{4}, Outputs: []graph.TensorID{5}}, 8,
			TFLMKernel{}, `TFLM has no kernel for custom operator "Foo" ("Failed to get registration from op code CUSTOM") (tflite-micro@90b983c: tensorflow/lite/micro/micro_op_resolver.cc:24-54 (GetRegistrationFromOpCode), tensorflow/lite/micro/micro_interpreter.cc:126-133 (PrepareNodeAndRegistrationDataFromFlatbuffer))`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sg := &m.Subgraphs[0]
			sg.Ops = []graph.Op{c.op}
			k, ok := TFLM(m, 0, &sg.Ops[0], c.ptr)
			assert.Equal(t, c.refusal == "", ok)
			assert.Equal(t, c.want, k)
			assert.Equal(t, c.refusal, TFLMRefusal(m, 0, &sg.Ops[0]))
		})
	}
}
