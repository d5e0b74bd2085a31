package emit

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflite/schema"
)

// Option fields as a model gives them; opAsLoaded fills in the rest.
func oInt(name string, v int64) graph.OptionField {
	return graph.OptionField{Name: name, Kind: graph.OptionInt, Int: v, Present: true}
}
func oFloat(name string, v float64) graph.OptionField {
	return graph.OptionField{Name: name, Kind: graph.OptionFloat, Float: v, Present: true}
}
func oInts(name string, v ...int64) graph.OptionField {
	return graph.OptionField{Name: name, Kind: graph.OptionInts, Ints: append([]int64{}, v...), Present: true}
}
func oStr(name, v string) graph.OptionField {
	return graph.OptionField{Name: name, Kind: graph.OptionString, Str: v, Present: true}
}

// opAsLoaded returns operator code (a schema.fbs BuiltinOperator name, or
// "CUSTOM:name") with the options table table holding fields ("" for
// none) and custom options custom, as tflite.Load reads it back from a
// model tflite.Encode writes: every field of the table, the schema's
// defaults for those not given.
func opAsLoaded(t *testing.T, code, table string, custom []byte, fields ...graph.OptionField) (*graph.Model, *graph.Op) {
	t.Helper()
	op := graph.Op{Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}, Version: 1, CustomOptions: custom}
	if len(code) > 7 && code[:7] == "CUSTOM:" {
		op.Code, op.CustomName = graph.Custom, code[7:]
	} else {
		c, ok := schema.EnumValuesBuiltinOperator[code]
		require.True(t, ok, code)
		op.Code = graph.Opcode(c)
	}
	if table != "" {
		op.Options = &graph.Options{Table: table, Fields: fields}
	}
	tensor := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, 4}, Size: 16}
	}
	// Control flow calls subgraph 1, which does nothing.
	switch op.Code {
	case graph.CallOnce:
		op.Called = []graph.SubgraphIndex{1}
	case graph.If, graph.While:
		op.Called = []graph.SubgraphIndex{1, 1}
	}
	m := &graph.Model{Version: 3, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{tensor("in"), tensor("out")}, Ops: []graph.Op{op},
		Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
		{Tensors: []graph.Tensor{}, Ops: []graph.Op{}, Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{}}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	got, err := tflite.Load(data)
	require.NoError(t, err)
	return got, &got.Subgraphs[0].Ops[0]
}

// TestTFLMOpsTable checks the mapping of options to builtin data for the
// operators whose parse functions do more than copy a field, with the
// values read off flatbuffer_conversions.cc @90b983c (ParseXxx) and
// builtin_op_data.h's declaration order, and the schema defaults of
// schema.fbs where a field is left out.
func TestTFLMOpsTable(t *testing.T) {
	tests := []struct {
		name, code, table string
		fields            []graph.OptionField
		params, init      string
	}{
		// ParseReshape: new_shape copied with its length; left out, both stay 0.
		{"reshape", "RESHAPE", "ReshapeOptions", []graph.OptionField{oInts("new_shape", 1, -1, 4)},
			"TfLiteReshapeParams", "{.shape = {1, -1, 4}, .num_dimensions = 3}"},
		{"reshape no new_shape", "RESHAPE", "ReshapeOptions", nil,
			"TfLiteReshapeParams", "{.shape = {}, .num_dimensions = 0}"},
		{"reshape empty new_shape", "RESHAPE", "ReshapeOptions", []graph.OptionField{oInts("new_shape")},
			"TfLiteReshapeParams", "{.shape = {}, .num_dimensions = 0}"},
		{"reshape 8 dims", "RESHAPE", "ReshapeOptions", []graph.OptionField{oInts("new_shape", 1, 2, 3, 4, 5, 6, 7, 8)},
			"TfLiteReshapeParams", "{.shape = {1, 2, 3, 4, 5, 6, 7, 8}, .num_dimensions = 8}"},
		// ParseSqueeze.
		{"squeeze", "SQUEEZE", "SqueezeOptions", []graph.OptionField{oInts("squeeze_dims", 0, 2)},
			"TfLiteSqueezeParams", "{.squeeze_dims = {0, 2}, .num_squeeze_dims = 2}"},
		{"squeeze none", "SQUEEZE", "SqueezeOptions", nil,
			"TfLiteSqueezeParams", "{.squeeze_dims = {}, .num_squeeze_dims = 0}"},
		// ParseStridedSlice: the five masks and offset.
		{"strided slice", "STRIDED_SLICE", "StridedSliceOptions", []graph.OptionField{oInt("begin_mask", 1), oInt("end_mask", 2),
			oInt("ellipsis_mask", 4), oInt("new_axis_mask", 8), oInt("shrink_axis_mask", 16), oInt("offset", 1)},
			"TfLiteStridedSliceParams", "{.begin_mask = 1, .end_mask = 2, .ellipsis_mask = 4, .new_axis_mask = 8, .shrink_axis_mask = 16, .offset = true}"},
		// ParseConv2D: ConvertPadding (VALID 1), ConvertActivation (RELU6 3),
		// dilation defaults 1, quantized_bias_type default FLOAT32 (0) ->
		// kTfLiteFloat32.
		{"conv", "CONV_2D", "Conv2DOptions", []graph.OptionField{oInt("padding", 1), oInt("stride_w", 2), oInt("stride_h", 3), oInt("fused_activation_function", 3)},
			"TfLiteConvParams", "{.padding = kTfLitePaddingValid, .stride_width = 2, .stride_height = 3, .activation = kTfLiteActRelu6, .dilation_width_factor = 1, .dilation_height_factor = 1, .quantized_bias_type = kTfLiteFloat32}"},
		{"conv dilated int8 bias", "CONV_2D", "Conv2DOptions", []graph.OptionField{oInt("stride_w", 1), oInt("stride_h", 1), oInt("dilation_w_factor", 2), oInt("dilation_h_factor", 4), oInt("quantized_bias_type", 9)},
			"TfLiteConvParams", "{.padding = kTfLitePaddingSame, .stride_width = 1, .stride_height = 1, .activation = kTfLiteActNone, .dilation_width_factor = 2, .dilation_height_factor = 4, .quantized_bias_type = kTfLiteInt8}"},
		// Absent options: the value-initialized struct.
		{"conv no options", "CONV_2D", "", nil,
			"TfLiteConvParams", "{.padding = kTfLitePaddingUnknown, .stride_width = 0, .stride_height = 0, .activation = kTfLiteActNone, .dilation_width_factor = 0, .dilation_height_factor = 0, .quantized_bias_type = kTfLiteNoType}"},
		// builtin_options_as_Conv2DOptions() is null for another table.
		{"conv other table", "CONV_2D", "Pool2DOptions", []graph.OptionField{oInt("padding", 1), oInt("stride_w", 2)},
			"TfLiteConvParams", "{.padding = kTfLitePaddingUnknown, .stride_width = 0, .stride_height = 0, .activation = kTfLiteActNone, .dilation_width_factor = 0, .dilation_height_factor = 0, .quantized_bias_type = kTfLiteNoType}"},
		// ParseDepthwiseConv2D.
		{"depthwise", "DEPTHWISE_CONV_2D", "DepthwiseConv2DOptions", []graph.OptionField{oInt("padding", 0), oInt("stride_w", 1), oInt("stride_h", 2),
			oInt("depth_multiplier", 2), oInt("fused_activation_function", 1), oInt("dilation_w_factor", 3)},
			"TfLiteDepthwiseConvParams", "{.padding = kTfLitePaddingSame, .stride_width = 1, .stride_height = 2, .depth_multiplier = 2, .activation = kTfLiteActRelu, .dilation_width_factor = 3, .dilation_height_factor = 1}"},
		// ParseFullyConnected: weights_format SHUFFLED4x16INT8 (1); an
		// activation the enum does not name is kTfLiteActNone.
		{"fully connected", "FULLY_CONNECTED", "FullyConnectedOptions", []graph.OptionField{oInt("fused_activation_function", 2), oInt("weights_format", 1), oInt("keep_num_dims", 1)},
			"TfLiteFullyConnectedParams", "{.activation = kTfLiteActReluN1To1, .weights_format = kTfLiteFullyConnectedWeightsFormatShuffled4x16Int8, .keep_num_dims = true, .asymmetric_quantize_inputs = false, .quantized_bias_type = kTfLiteFloat32}"},
		{"fully connected odd activation", "FULLY_CONNECTED", "FullyConnectedOptions", []graph.OptionField{oInt("fused_activation_function", 9), oInt("asymmetric_quantize_inputs", 1), oInt("quantized_bias_type", 2)},
			"TfLiteFullyConnectedParams", "{.activation = kTfLiteActNone, .weights_format = kTfLiteFullyConnectedWeightsFormatDefault, .keep_num_dims = false, .asymmetric_quantize_inputs = true, .quantized_bias_type = kTfLiteInt32}"},
		// ParseUnidirectionalSequenceLSTM.
		{"sequence lstm", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UnidirectionalSequenceLSTMOptions", []graph.OptionField{oInt("fused_activation_function", 4),
			oFloat("cell_clip", 10), oFloat("proj_clip", 0.5), oInt("time_major", 1), oInt("diagonal_recurrent_tensors", 1)},
			"TfLiteUnidirectionalSequenceLSTMParams", "{.activation = kTfLiteActTanh, .cell_clip = 10.0f, .proj_clip = 0.5f, .time_major = true, .asymmetric_quantize_inputs = false, .diagonal_recurrent_tensors = true}"},
		// ParseSvdf.
		{"svdf", "SVDF", "SVDFOptions", []graph.OptionField{oInt("rank", 2), oInt("fused_activation_function", 1), oInt("asymmetric_quantize_inputs", 1)},
			"TfLiteSVDFParams", "{.rank = 2, .activation = kTfLiteActRelu, .asymmetric_quantize_inputs = true}"},
		// ParseConcatenation: axis first in the struct.
		{"concatenation", "CONCATENATION", "ConcatenationOptions", []graph.OptionField{oInt("axis", -1), oInt("fused_activation_function", 1)},
			"TfLiteConcatenationParams", "{.axis = -1, .activation = kTfLiteActRelu}"},
		// ParsePack, ParseUnpack.
		{"pack", "PACK", "PackOptions", []graph.OptionField{oInt("values_count", 3), oInt("axis", 1)},
			"TfLitePackParams", "{.values_count = 3, .axis = 1}"},
		{"unpack", "UNPACK", "UnpackOptions", []graph.OptionField{oInt("num", 4), oInt("axis", -1)},
			"TfLiteUnpackParams", "{.num = 4, .axis = -1}"},
		// ParseSoftmax.
		{"softmax", "SOFTMAX", "SoftmaxOptions", []graph.OptionField{oFloat("beta", 0.5)},
			"TfLiteSoftmaxParams", "{.beta = 0.5f}"},
		{"softmax tiny beta", "SOFTMAX", "SoftmaxOptions", []graph.OptionField{oFloat("beta", 1e-8)},
			"TfLiteSoftmaxParams", "{.beta = 1e-08f}"},
		// ParseL2Normalization.
		{"l2 norm", "L2_NORMALIZATION", "L2NormOptions", []graph.OptionField{oInt("fused_activation_function", 1)},
			"TfLiteL2NormParams", "{.activation = kTfLiteActRelu}"},
		// ParseSplit, ParseSplitV.
		{"split", "SPLIT", "SplitOptions", []graph.OptionField{oInt("num_splits", 3)}, "TfLiteSplitParams", "{.num_splits = 3}"},
		{"split v", "SPLIT_V", "SplitVOptions", []graph.OptionField{oInt("num_splits", 2)}, "TfLiteSplitVParams", "{.num_splits = 2}"},
		// ParseGather: axis and batch_dims; both 0 without options.
		{"gather", "GATHER", "GatherOptions", []graph.OptionField{oInt("axis", 1), oInt("batch_dims", 1)},
			"TfLiteGatherParams", "{.axis = 1, .batch_dims = 1}"},
		{"gather no options", "GATHER", "", nil, "TfLiteGatherParams", "{.axis = 0, .batch_dims = 0}"},
		// ParseReducer.
		{"mean", "MEAN", "ReducerOptions", []graph.OptionField{oInt("keep_dims", 1)}, "TfLiteReducerParams", "{.keep_dims = true}"},
		{"sum", "SUM", "ReducerOptions", nil, "TfLiteReducerParams", "{.keep_dims = false}"},
		{"reduce max", "REDUCE_MAX", "ReducerOptions", []graph.OptionField{oInt("keep_dims", 1)}, "TfLiteReducerParams", "{.keep_dims = true}"},
		// ParseAdd, ParseSub: pot_scale_int16 defaults to true in the
		// schema; ParseMul has only the activation.
		{"add", "ADD", "AddOptions", []graph.OptionField{oInt("fused_activation_function", 1)},
			"TfLiteAddParams", "{.activation = kTfLiteActRelu, .pot_scale_int16 = true}"},
		{"add pot off", "ADD", "AddOptions", []graph.OptionField{oInt("pot_scale_int16", 0)},
			"TfLiteAddParams", "{.activation = kTfLiteActNone, .pot_scale_int16 = false}"},
		{"add no options", "ADD", "", nil, "TfLiteAddParams", "{.activation = kTfLiteActNone, .pot_scale_int16 = false}"},
		{"sub", "SUB", "SubOptions", []graph.OptionField{oInt("fused_activation_function", 3)},
			"TfLiteSubParams", "{.activation = kTfLiteActRelu6, .pot_scale_int16 = true}"},
		{"mul", "MUL", "MulOptions", []graph.OptionField{oInt("fused_activation_function", 5)},
			"TfLiteMulParams", "{.activation = kTfLiteActSignBit}"},
		// ParseResizeBilinear, ParseResizeNearestNeighbor.
		{"resize bilinear", "RESIZE_BILINEAR", "ResizeBilinearOptions", []graph.OptionField{oInt("align_corners", 1)},
			"TfLiteResizeBilinearParams", "{.align_corners = true, .half_pixel_centers = false}"},
		{"resize nearest", "RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", []graph.OptionField{oInt("half_pixel_centers", 1)},
			"TfLiteResizeNearestNeighborParams", "{.align_corners = false, .half_pixel_centers = true}"},
		// ParseTransposeConv: no dilation in its struct.
		{"transpose conv", "TRANSPOSE_CONV", "TransposeConvOptions", []graph.OptionField{oInt("padding", 0), oInt("stride_w", 2), oInt("stride_h", 2)},
			"TfLiteTransposeConvParams", "{.padding = kTfLitePaddingSame, .stride_width = 2, .stride_height = 2, .activation = kTfLiteActNone, .quantized_bias_type = kTfLiteFloat32}"},
		// ParsePool; the computed padding is the kernel's.
		{"max pool", "MAX_POOL_2D", "Pool2DOptions", []graph.OptionField{oInt("padding", 1), oInt("stride_w", 2), oInt("stride_h", 2), oInt("filter_width", 3), oInt("filter_height", 3)},
			"TfLitePoolParams", "{.padding = kTfLitePaddingValid, .stride_width = 2, .stride_height = 2, .filter_width = 3, .filter_height = 3, .activation = kTfLiteActNone, .computed = {.padding = {.width = 0, .height = 0, .width_offset = 0, .height_offset = 0}}}"},
		// ParseMirrorPad: ConvertMirrorPadding (SYMMETRIC 1).
		{"mirror pad", "MIRROR_PAD", "MirrorPadOptions", []graph.OptionField{oInt("mode", 1)}, "TfLiteMirrorPaddingParams", "{.mode = kTfLiteMirrorPaddingSymmetric}"},
		// ParseCast: ConvertTensorType (INT8 9, UINT8 3).
		{"cast", "CAST", "CastOptions", []graph.OptionField{oInt("in_data_type", 9), oInt("out_data_type", 3)},
			"TfLiteCastParams", "{.in_data_type = kTfLiteInt8, .out_data_type = kTfLiteUInt8}"},
		// ParseLeakyRelu.
		{"leaky relu", "LEAKY_RELU", "LeakyReluOptions", []graph.OptionField{oFloat("alpha", 0.2)}, "TfLiteLeakyReluParams", "{.alpha = 0.2f}"},
		// ParseVarHandle: a string left out stays null.
		{"var handle", "VAR_HANDLE", "VarHandleOptions", []graph.OptionField{oStr("shared_name", `a"b\?`)},
			"TfLiteVarHandleParams", `{.container = nullptr, .shared_name = "a\"b\\\?"}`},
		{"var handle empty container", "VAR_HANDLE", "VarHandleOptions", []graph.OptionField{oStr("container", "")},
			"TfLiteVarHandleParams", `{.container = "", .shared_name = nullptr}`},
		// Parse functions that allocate nothing: builtin_data stays NULL.
		{"abs", "ABS", "", nil, "", ""},
		{"relu", "RELU", "", nil, "", ""},
		{"pad", "PAD", "PadOptions", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := opAsLoaded(t, tt.code, tt.table, nil, tt.fields...)
			got, err := tflmOpOf(m, 0, op)
			require.NoError(t, err)
			assert.Equal(t, "tflite::Register_"+tt.code+"()", got.Register)
			assert.Equal(t, tt.params, got.ParamsType)
			assert.Equal(t, tt.init, got.ParamsInit)
			assert.Nil(t, got.Custom)
			assert.Contains(t, got.Headers, "tensorflow/lite/micro/kernels/micro_ops.h")
			if tt.params != "" {
				assert.Contains(t, got.Headers, "tensorflow/lite/c/builtin_op_data.h")
			}
		})
	}
}

// TestTFLMOpsCustom checks custom operators: the registration
// AddCustom registers under the name, the custom options as they are.
func TestTFLMOpsCustom(t *testing.T) {
	m, op := opAsLoaded(t, "CUSTOM:SignalRfft", "", []byte{1, 2, 3})
	got, err := tflmOpOf(m, 0, op)
	require.NoError(t, err)
	assert.Equal(t, tflmOp{Register: "*tflite::tflm_signal::Register_RFFT()", Custom: []byte{1, 2, 3},
		Headers: []string{"signal/micro/kernels/rfft.h"}}, got)

	m, op = opAsLoaded(t, "CUSTOM:TFLite_Detection_PostProcess", "", nil)
	got, err = tflmOpOf(m, 0, op)
	require.NoError(t, err)
	assert.Equal(t, "*tflite::Register_DETECTION_POSTPROCESS()", got.Register)
	assert.Nil(t, got.Custom)
	assert.Empty(t, got.ParamsType)
}

// TestTFLMOpsRefused checks the operators TFLM would not run, each error
// naming the operator.
func TestTFLMOpsRefused(t *testing.T) {
	tests := []struct {
		name, code, table string
		custom            []byte
		fields            []graph.OptionField
		want              string
	}{
		{"no kernel", "TOPK_V2", "", nil, nil, "operator 0:0 TOPK_V2: TFLM has no kernel for it"},
		{"lrn", "LOCAL_RESPONSE_NORMALIZATION", "LocalResponseNormalizationOptions", nil, []graph.OptionField{oInt("radius", 2)},
			"operator 0:0 LOCAL_RESPONSE_NORMALIZATION: TFLM has no kernel for it"},
		{"lstm", "LSTM", "", nil, nil, "operator 0:0 LSTM: TFLM has no kernel for it"},
		{"unknown custom", "CUSTOM:FOO", "", nil, nil, "operator 0:0 CUSTOM:FOO: TFLM has no kernel for it"},
		{"ethos-u", "CUSTOM:ethos-u", "", []byte{1}, nil, "operator 0:0 CUSTOM:ethos-u: TFLM has no kernel for it"},
		{"builtin with custom options", "ADD", "", []byte{}, nil,
			"operator 0:0 ADD: TFLM refuses a builtin operator with custom options"},
		{"reshape 9 dims", "RESHAPE", "ReshapeOptions", nil, []graph.OptionField{oInts("new_shape", 1, 1, 1, 1, 1, 1, 1, 1, 1)},
			"operator 0:0 RESHAPE: TFLM refuses new_shape of 9 dimensions (Found too many dimensions), at most 8"},
		{"weights format", "FULLY_CONNECTED", "FullyConnectedOptions", nil, []graph.OptionField{oInt("weights_format", 2)},
			"operator 0:0 FULLY_CONNECTED: TFLM refuses weights_format 2 (Unhandled fully-connected weights format)"},
		{"tensor type", "CAST", "CastOptions", nil, []graph.OptionField{oInt("out_data_type", 40)},
			"operator 0:0 CAST: TFLM refuses out_data_type 40 (Unsupported data type)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := opAsLoaded(t, tt.code, tt.table, tt.custom, tt.fields...)
			_, err := tflmOpOf(m, 0, op)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// TestTFLMOpsEveryKernelCompiles maps every operator the table knows,
// without options and with the options of the table tests, and compiles
// and links them all: each params struct's initializer names all its
// fields in declaration order (g++ -Wextra -Werror refuses a missing or
// misplaced one) and each registration exists in TFLM's library.
func TestTFLMOpsEveryKernelCompiles(t *testing.T) {
	var src strings.Builder
	src.WriteString("#include <cstdarg>\n#include <cstdio>\n")
	headers := map[string]bool{}
	var body strings.Builder
	n := 0
	add := func(got tflmOp) {
		for _, h := range got.Headers {
			headers[h] = true
		}
		fmt.Fprintf(&body, "  { TFLMRegistration r = %s; n += r.invoke != nullptr; }\n", got.Register)
		if got.ParamsType != "" {
			fmt.Fprintf(&body, "  { static %s p%d = %s; n += use(&p%d); }\n", got.ParamsType, n, got.ParamsInit, n)
		}
		n++
	}
	var names []string
	for name := range tflmBuiltins {
		names = append(names, name)
	}
	for name := range tflmCustom {
		names = append(names, "CUSTOM:"+name)
	}
	sort.Strings(names)
	for _, name := range names {
		m, op := opAsLoaded(t, name, "", nil)
		got, err := tflmOpOf(m, 0, op)
		require.NoError(t, err, name)
		add(got)
	}
	for _, name := range []string{"VAR_HANDLE", "SQUEEZE", "RESHAPE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "SOFTMAX", "LEAKY_RELU"} {
		table := map[string]string{"VAR_HANDLE": "VarHandleOptions", "SQUEEZE": "SqueezeOptions", "RESHAPE": "ReshapeOptions",
			"UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions", "SOFTMAX": "SoftmaxOptions", "LEAKY_RELU": "LeakyReluOptions"}[name]
		fields := map[string][]graph.OptionField{
			"VAR_HANDLE":                   {oStr("container", "c\x01\"?"), oStr("shared_name", "s")},
			"SQUEEZE":                      {oInts("squeeze_dims", 0, 1, 2, 3, 4, 5, 6, 7)},
			"RESHAPE":                      {oInts("new_shape", -1, 2)},
			"UNIDIRECTIONAL_SEQUENCE_LSTM": {oFloat("cell_clip", 1e30), oFloat("proj_clip", -3)},
			"SOFTMAX":                      {oFloat("beta", 1e-40)},
			"LEAKY_RELU":                   {oFloat("alpha", 3)},
		}[name]
		m, op := opAsLoaded(t, name, table, nil, fields...)
		got, err := tflmOpOf(m, 0, op)
		require.NoError(t, err, name)
		add(got)
	}
	var hs []string
	for h := range headers {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		if h == opResolverHeader {
			// Not warning-free under -Wextra (unused parameters).
			fmt.Fprintf(&src, "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n#include %q\n#pragma GCC diagnostic pop\n", h)
			continue
		}
		fmt.Fprintf(&src, "#include %q\n", h)
	}
	src.WriteString("static int use(const volatile void *p) { return p != nullptr; }\nint touch(void) {\n  int n = 0;\n")
	src.WriteString(body.String())
	src.WriteString("  return n;\n}\n")
	src.WriteString(`extern "C" void DebugLog(const char* format, va_list args) { vfprintf(stderr, format, args); }
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format, va_list args) { return vsnprintf(buf, n, format, args); }
int main() { return touch() > 0 ? 0 : 1; }
`)
	compileAndLink(t, src.String(), "host-x86_64")
}
