package emit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// The runtime (--runtime tflm) calls TFLM's kernel registrations itself,
// so for each operator it needs what TFLM's MicroInterpreter would hand the
// kernel: the registration MicroMutableOpResolver maps the operator to
// (tensorflow/lite/micro/micro_mutable_op_resolver.h @90b983c, one AddXxx
// per operator naming its Register_ function and its parse function), and
// the builtin_data that parse function builds from the operator's options
// (tensorflow/lite/core/api/flatbuffer_conversions.cc @90b983c, ParseXxx),
// or, for a custom operator, its custom options as custom_initial_data
// (tensorflow/lite/micro/micro_interpreter.cc @90b983c,
// PrepareNodeAndRegistrationDataFromFlatbuffer).
//
// Every parse function allocates its TfLite*Params with AllocatePOD, which
// value-initializes it (flatbuffer_conversions.h @90b983c), and reads the
// options through builtin_options_as_XxxOptions(), which is null when the
// operator has no options or options of another table; the fields it then
// leaves alone stay zero. So an operator without its options table gets
// the all-zero struct, and the initializers below start from zero.

// tflmOp says how TFLM's reference kernels run one operator. The params
// are builtin_data, which TfLiteNode holds as a non-const pointer: define
// them non-const. Custom aliases the model's bytes.
type tflmOp struct {
	Register   string   // C++ expression giving its TFLMRegistration, e.g. "tflite::Register_CONV_2D()"
	ParamsType string   // C++ type of builtin_data, e.g. "TfLiteConvParams"; "" when TFLM passes none (NULL)
	ParamsInit string   // its brace initializer: designated, in declaration order
	Custom     []byte   // custom_initial_data of a custom operator; nil otherwise
	Headers    []string // headers to #include for Register / ParamsType
}

// The headers that declare the registrations and the params structs.
const (
	microOpsHeader    = "tensorflow/lite/micro/kernels/micro_ops.h"
	builtinDataHeader = "tensorflow/lite/c/builtin_op_data.h"
	// opResolverHeader is the only header that declares
	// Register_DETECTION_POSTPROCESS; it is not warning-free under -Wextra
	// (unused parameters), so include it under
	// #pragma GCC diagnostic ignored "-Wunused-parameter".
	opResolverHeader   = "tensorflow/lite/micro/micro_mutable_op_resolver.h"
	signalRfftHeader   = "signal/micro/kernels/rfft.h"
	signalIrfftHeader  = "signal/micro/kernels/irfft.h"
	tflmRegisterPrefix = "tflite::Register_"
)

// tflmOpOf returns how TFLM's reference kernels run op, operator of
// subgraph si of m, or an error naming the operator when TFLM has no
// kernel for it or its parse function would refuse its options.
func tflmOpOf(m *graph.Model, si graph.SubgraphIndex, op *graph.Op) (tflmOp, error) {
	// op is one of m's operators; an operator from elsewhere is named
	// without its index.
	where := fmt.Sprintf("operator %d:? %s", si, op.Name())
	if sg := int(si); sg >= 0 && sg < len(m.Subgraphs) {
		ops := m.Subgraphs[sg].Ops
		for i := range ops {
			if &ops[i] == op {
				where = fmt.Sprintf("operator %d:%d %s", si, i, op.Name())
			}
		}
	}
	fail := func(format string, args ...any) (tflmOp, error) {
		return tflmOp{}, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if op.Code == graph.Custom {
		reg, ok := tflmCustom[op.CustomName]
		if !ok {
			return fail("TFLM has no kernel for it")
		}
		out := tflmOp{Register: reg.register, Headers: []string{reg.header}}
		if op.CustomOptions != nil {
			out.Custom = op.CustomOptions
		}
		return out, nil
	}
	k, ok := tflmBuiltins[op.CodeName]
	if !ok || op.CodeName == "" {
		return fail("TFLM has no kernel for it")
	}
	// micro_interpreter.cc @90b983c: a builtin operator with custom
	// options is refused ("Unsupported behavior: found builtin operator %s
	// with custom options").
	if op.CustomOptions != nil {
		return fail("TFLM refuses a builtin operator with custom options")
	}
	out := tflmOp{Register: tflmRegisterPrefix + op.CodeName + "()", Headers: []string{microOpsHeader}}
	if k.params == "" {
		return out, nil
	}
	p := newCParams(k.params)
	if o := op.Resolved(); o != nil && o.Table == k.table && k.parse != nil {
		if err := k.parse(o, p); err != nil {
			return fail("%v", err)
		}
	}
	init, err := p.init()
	if err != nil {
		return fail("%v", err)
	}
	out.ParamsType, out.ParamsInit = k.params, init
	out.Headers = append(out.Headers, builtinDataHeader)
	return out, nil
}

// tflmBuiltin is what MicroMutableOpResolver's AddXxx registers for one
// builtin operator: the registration is tflite::Register_<NAME>(), and
// parse, the parse function, fills params from the options table table.
// params "" is a parse function that allocates nothing (builtin_data
// stays NULL).
type tflmBuiltin struct {
	params string
	table  string
	parse  func(o *graph.Options, p *cParams) error
}

// tflmCustomKernel is a custom operator's registration as AddCustom
// registers it, and the header that declares it.
type tflmCustomKernel struct {
	register, header string
}

// noData is an operator whose parse function returns kTfLiteOk without
// allocating (ParseAbs, ParseAddN, ...).
var noData = tflmBuiltin{}

// tflmBuiltins maps each builtin operator MicroMutableOpResolver can
// register (micro_mutable_op_resolver.h @90b983c) to its parse function's
// work (flatbuffer_conversions.cc @90b983c; the function is named by each
// entry's comment).
var tflmBuiltins = map[string]tflmBuiltin{
	"ABS":             noData,                                                  // ParseAbs
	"ADD_N":           noData,                                                  // ParseAddN
	"ADD":             {"TfLiteAddParams", "AddOptions", parseAddSub},          // ParseAdd
	"ARG_MAX":         {"TfLiteArgMaxParams", "ArgMaxOptions", parseArgMinMax}, // ParseArgMax
	"ARG_MIN":         {"TfLiteArgMinParams", "ArgMinOptions", parseArgMinMax}, // ParseArgMin
	"ASSIGN_VARIABLE": noData,                                                  // ParseAssignVariable
	"AVERAGE_POOL_2D": {"TfLitePoolParams", "Pool2DOptions", parsePool},        // ParsePool
	"BATCH_MATMUL": {"TfLiteBatchMatMulParams", "BatchMatMulOptions", func(o *graph.Options, p *cParams) error { // ParseBatchMatMul
		p.setBool("adj_x", o.Bool("adj_x"))
		p.setBool("adj_y", o.Bool("adj_y"))
		p.setBool("asymmetric_quantize_inputs", o.Bool("asymmetric_quantize_inputs"))
		return nil
	}},
	"BATCH_TO_SPACE_ND": noData, // ParseBatchToSpaceNd
	"BROADCAST_ARGS":    noData, // ParseBroadcastArgs
	"BROADCAST_TO":      noData, // ParseBroadcastTo
	"CALL_ONCE": {"TfLiteCallOnceParams", "CallOnceOptions", func(o *graph.Options, p *cParams) error { // ParseCallOnce
		p.setInt("init_subgraph_index", o.Int("init_subgraph_index"))
		return nil
	}},
	"CAST": {"TfLiteCastParams", "CastOptions", func(o *graph.Options, p *cParams) error { // ParseCast
		if err := p.setTensorType("in_data_type", o.Int("in_data_type")); err != nil {
			return err
		}
		return p.setTensorType("out_data_type", o.Int("out_data_type"))
	}},
	"CEIL": noData, // ParseCeil
	"CONCATENATION": {"TfLiteConcatenationParams", "ConcatenationOptions", func(o *graph.Options, p *cParams) error { // ParseConcatenation
		p.setActivation(o.Int("fused_activation_function"))
		p.setInt("axis", o.Int("axis"))
		return nil
	}},
	"CONV_2D": {"TfLiteConvParams", "Conv2DOptions", func(o *graph.Options, p *cParams) error { // ParseConv2D
		p.setPadding(o.Int("padding"))
		p.setInt("stride_width", o.Int("stride_w"))
		p.setInt("stride_height", o.Int("stride_h"))
		p.setActivation(o.Int("fused_activation_function"))
		p.setInt("dilation_width_factor", o.Int("dilation_w_factor"))
		p.setInt("dilation_height_factor", o.Int("dilation_h_factor"))
		return p.setTensorType("quantized_bias_type", o.Int("quantized_bias_type"))
	}},
	"COS": noData, // ParseCos
	"CUMSUM": {"TfLiteCumsumParams", "CumsumOptions", func(o *graph.Options, p *cParams) error { // ParseCumsum
		p.setBool("exclusive", o.Bool("exclusive"))
		p.setBool("reverse", o.Bool("reverse"))
		return nil
	}},
	"DEPTH_TO_SPACE": {"TfLiteDepthToSpaceParams", "DepthToSpaceOptions", parseBlockSize}, // ParseDepthToSpace
	"DEPTHWISE_CONV_2D": {"TfLiteDepthwiseConvParams", "DepthwiseConv2DOptions", func(o *graph.Options, p *cParams) error { // ParseDepthwiseConv2D
		p.setPadding(o.Int("padding"))
		p.setInt("stride_width", o.Int("stride_w"))
		p.setInt("stride_height", o.Int("stride_h"))
		p.setInt("depth_multiplier", o.Int("depth_multiplier"))
		p.setActivation(o.Int("fused_activation_function"))
		p.setInt("dilation_width_factor", o.Int("dilation_w_factor"))
		p.setInt("dilation_height_factor", o.Int("dilation_h_factor"))
		return nil
	}},
	"DEQUANTIZE":           noData,                                          // ParseDequantize
	"DIV":                  {"TfLiteDivParams", "DivOptions", parseActOnly}, // ParseDiv
	"DYNAMIC_UPDATE_SLICE": noData,                                          // ParseDynamicUpdateSlice
	"ELU":                  noData,                                          // ParseElu
	"EMBEDDING_LOOKUP":     noData,                                          // ParseEmbeddingLookup
	"EQUAL":                noData,                                          // ParseEqual
	"EXP":                  noData,                                          // ParseExp
	"EXPAND_DIMS":          noData,                                          // ParseExpandDims
	"FILL":                 noData,                                          // ParseFill
	"FLOOR":                noData,                                          // ParseFloor
	"FLOOR_DIV":            noData,                                          // ParseFloorDiv
	"FLOOR_MOD":            noData,                                          // ParseFloorMod
	"FULLY_CONNECTED": {"TfLiteFullyConnectedParams", "FullyConnectedOptions", func(o *graph.Options, p *cParams) error { // ParseFullyConnected
		p.setActivation(o.Int("fused_activation_function"))
		p.setBool("keep_num_dims", o.Bool("keep_num_dims"))
		p.setBool("asymmetric_quantize_inputs", o.Bool("asymmetric_quantize_inputs"))
		if err := p.setTensorType("quantized_bias_type", o.Int("quantized_bias_type")); err != nil {
			return err
		}
		switch f := o.Int("weights_format"); f {
		case 0: // DEFAULT
			p.set("weights_format", "kTfLiteFullyConnectedWeightsFormatDefault")
		case 1: // SHUFFLED4x16INT8
			p.set("weights_format", "kTfLiteFullyConnectedWeightsFormatShuffled4x16Int8")
		default:
			return fmt.Errorf("TFLM refuses weights_format %d (Unhandled fully-connected weights format)", f)
		}
		return nil
	}},
	"GATHER": {"TfLiteGatherParams", "GatherOptions", func(o *graph.Options, p *cParams) error { // ParseGather
		p.setInt("axis", o.Int("axis"))
		p.setInt("batch_dims", o.Int("batch_dims"))
		return nil
	}},
	"GATHER_ND":     noData, // ParseGatherNd
	"GREATER":       noData, // ParseGreater
	"GREATER_EQUAL": noData, // ParseGreaterEqual
	"HARD_SWISH":    noData, // ParseHardSwish
	"IF": {"TfLiteIfParams", "IfOptions", func(o *graph.Options, p *cParams) error { // ParseIf
		p.setInt("then_subgraph_index", o.Int("then_subgraph_index"))
		p.setInt("else_subgraph_index", o.Int("else_subgraph_index"))
		return nil
	}},
	"L2_NORMALIZATION": {"TfLiteL2NormParams", "L2NormOptions", parseActOnly}, // ParseL2Normalization
	"L2_POOL_2D":       {"TfLitePoolParams", "Pool2DOptions", parsePool},      // ParsePool
	"LEAKY_RELU": {"TfLiteLeakyReluParams", "LeakyReluOptions", func(o *graph.Options, p *cParams) error { // ParseLeakyRelu
		p.setFloat("alpha", o.Float("alpha"))
		return nil
	}},
	"LESS":        noData,                                           // ParseLess
	"LESS_EQUAL":  noData,                                           // ParseLessEqual
	"LOG":         noData,                                           // ParseLog
	"LOGICAL_AND": noData,                                           // ParseLogicalAnd
	"LOGICAL_NOT": noData,                                           // ParseLogicalNot
	"LOGICAL_OR":  noData,                                           // ParseLogicalOr
	"LOGISTIC":    noData,                                           // ParseLogistic
	"LOG_SOFTMAX": noData,                                           // ParseLogSoftmax
	"MAXIMUM":     noData,                                           // ParseMaximum
	"MAX_POOL_2D": {"TfLitePoolParams", "Pool2DOptions", parsePool}, // ParsePool
	"MIRROR_PAD": {"TfLiteMirrorPaddingParams", "MirrorPadOptions", func(o *graph.Options, p *cParams) error { // ParseMirrorPad
		// ConvertMirrorPadding: REFLECT 0, SYMMETRIC 1, anything else unknown.
		switch o.Int("mode") {
		case 0:
			p.set("mode", "kTfLiteMirrorPaddingReflect")
		case 1:
			p.set("mode", "kTfLiteMirrorPaddingSymmetric")
		default:
			p.set("mode", "kTfLiteMirrorPaddingUnknown")
		}
		return nil
	}},
	"MEAN":      {"TfLiteReducerParams", "ReducerOptions", parseReducer}, // ParseReducer
	"MINIMUM":   noData,                                                  // ParseMinimum
	"MUL":       {"TfLiteMulParams", "MulOptions", parseActOnly},         // ParseMul: the activation only
	"NEG":       noData,                                                  // ParseNeg
	"NOT_EQUAL": noData,                                                  // ParseNotEqual
	"PACK": {"TfLitePackParams", "PackOptions", func(o *graph.Options, p *cParams) error { // ParsePack
		p.setInt("values_count", o.Int("values_count"))
		p.setInt("axis", o.Int("axis"))
		return nil
	}},
	"PAD":           noData,                                                  // ParsePad
	"PADV2":         noData,                                                  // ParsePadV2
	"PRELU":         noData,                                                  // ParsePrelu
	"QUANTIZE":      noData,                                                  // ParseQuantize
	"READ_VARIABLE": noData,                                                  // ParseReadVariable
	"REDUCE_ALL":    {"TfLiteReducerParams", "ReducerOptions", parseReducer}, // ParseReducer
	"REDUCE_MAX":    {"TfLiteReducerParams", "ReducerOptions", parseReducer}, // ParseReducer
	"REDUCE_MIN":    {"TfLiteReducerParams", "ReducerOptions", parseReducer}, // ParseReducer
	"RELU":          noData,                                                  // ParseRelu
	"RELU6":         noData,                                                  // ParseRelu6
	"RESHAPE": {"TfLiteReshapeParams", "ReshapeOptions", func(o *graph.Options, p *cParams) error { // ParseReshape
		return p.setArray(o.Field("new_shape"), "shape", "num_dimensions", 8)
	}},
	"RESIZE_BILINEAR":         {"TfLiteResizeBilinearParams", "ResizeBilinearOptions", parseResize},               // ParseResizeBilinear
	"RESIZE_NEAREST_NEIGHBOR": {"TfLiteResizeNearestNeighborParams", "ResizeNearestNeighborOptions", parseResize}, // ParseResizeNearestNeighbor
	"REVERSE_V2":              noData,                                                                             // ParseReverseV2
	"ROUND":                   noData,                                                                             // ParseRound
	"RSQRT":                   noData,                                                                             // ParseRsqrt
	"SELECT_V2":               noData,                                                                             // ParseSelectV2
	"SHAPE": {"TfLiteShapeParams", "ShapeOptions", func(o *graph.Options, p *cParams) error { // ParseShape
		return p.setTensorType("out_type", o.Int("out_type"))
	}},
	"SIN":   noData, // ParseSin
	"SLICE": noData, // ParseSlice
	"SOFTMAX": {"TfLiteSoftmaxParams", "SoftmaxOptions", func(o *graph.Options, p *cParams) error { // ParseSoftmax
		p.setFloat("beta", o.Float("beta"))
		return nil
	}},
	"SPACE_TO_BATCH_ND": noData,                                                              // ParseSpaceToBatchNd
	"SPACE_TO_DEPTH":    {"TfLiteSpaceToDepthParams", "SpaceToDepthOptions", parseBlockSize}, // ParseSpaceToDepth
	"SPLIT":             {"TfLiteSplitParams", "SplitOptions", parseNumSplits},               // ParseSplit
	"SPLIT_V":           {"TfLiteSplitVParams", "SplitVOptions", parseNumSplits},             // ParseSplitV
	"SQUEEZE": {"TfLiteSqueezeParams", "SqueezeOptions", func(o *graph.Options, p *cParams) error { // ParseSqueeze
		return p.setArray(o.Field("squeeze_dims"), "squeeze_dims", "num_squeeze_dims", 8)
	}},
	"SQRT":               noData, // ParseSqrt
	"SQUARE":             noData, // ParseSquare
	"SQUARED_DIFFERENCE": noData, // ParseSquaredDifference
	"STRIDED_SLICE": {"TfLiteStridedSliceParams", "StridedSliceOptions", func(o *graph.Options, p *cParams) error { // ParseStridedSlice
		for _, f := range []string{"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"} {
			p.setInt(f, o.Int(f))
		}
		p.setBool("offset", o.Bool("offset"))
		return nil
	}},
	"SUB": {"TfLiteSubParams", "SubOptions", parseAddSub},          // ParseSub
	"SUM": {"TfLiteReducerParams", "ReducerOptions", parseReducer}, // ParseReducer
	"SVDF": {"TfLiteSVDFParams", "SVDFOptions", func(o *graph.Options, p *cParams) error { // ParseSvdf
		p.setInt("rank", o.Int("rank"))
		p.setActivation(o.Int("fused_activation_function"))
		p.setBool("asymmetric_quantize_inputs", o.Bool("asymmetric_quantize_inputs"))
		return nil
	}},
	"TANH":      noData, // ParseTanh
	"TRANSPOSE": noData, // ParseTranspose
	"TRANSPOSE_CONV": {"TfLiteTransposeConvParams", "TransposeConvOptions", func(o *graph.Options, p *cParams) error { // ParseTransposeConv
		p.setPadding(o.Int("padding"))
		p.setInt("stride_width", o.Int("stride_w"))
		p.setInt("stride_height", o.Int("stride_h"))
		p.setActivation(o.Int("fused_activation_function"))
		return p.setTensorType("quantized_bias_type", o.Int("quantized_bias_type"))
	}},
	"UNIDIRECTIONAL_SEQUENCE_LSTM": {"TfLiteUnidirectionalSequenceLSTMParams", "UnidirectionalSequenceLSTMOptions", func(o *graph.Options, p *cParams) error { // ParseUnidirectionalSequenceLSTM
		p.setActivation(o.Int("fused_activation_function"))
		p.setFloat("cell_clip", o.Float("cell_clip"))
		p.setFloat("proj_clip", o.Float("proj_clip"))
		p.setBool("time_major", o.Bool("time_major"))
		p.setBool("asymmetric_quantize_inputs", o.Bool("asymmetric_quantize_inputs"))
		p.setBool("diagonal_recurrent_tensors", o.Bool("diagonal_recurrent_tensors"))
		return nil
	}},
	"UNPACK": {"TfLiteUnpackParams", "UnpackOptions", func(o *graph.Options, p *cParams) error { // ParseUnpack
		p.setInt("num", o.Int("num"))
		p.setInt("axis", o.Int("axis"))
		return nil
	}},
	"VAR_HANDLE": {"TfLiteVarHandleParams", "VarHandleOptions", func(o *graph.Options, p *cParams) error { // ParseVarHandle
		// A string the options leave out stays a null pointer.
		for _, name := range []string{"container", "shared_name"} {
			if f := o.Field(name); f != nil && f.Present {
				p.set(name, cppString(f.Str))
			}
		}
		return nil
	}},
	"WHILE": {"TfLiteWhileParams", "WhileOptions", func(o *graph.Options, p *cParams) error { // ParseWhile
		p.setInt("cond_subgraph_index", o.Int("cond_subgraph_index"))
		p.setInt("body_subgraph_index", o.Int("body_subgraph_index"))
		return nil
	}},
	"ZEROS_LIKE": noData, // ParseZerosLike
}

// tflmCustom maps the custom operators MicroMutableOpResolver can register
// (AddCustom's names, micro_mutable_op_resolver.h @90b983c) to their
// registrations; the signal library's (tflite::tflm_signal, declared in
// micro_ops.h, rfft.h and irfft.h) run audio_preprocessor models. Ethos-U's
// is left out: the reference build's Register_ETHOSU returns null
// (kernels/ethosu.cc @90b983c), so AddEthosU registers nothing.
var tflmCustom = map[string]tflmCustomKernel{
	"CIRCULAR_BUFFER":                     {"*tflite::Register_CIRCULAR_BUFFER()", microOpsHeader},
	"TFLM_DECODE":                         {"tflite::Register_DECODE()", microOpsHeader},
	"TFLite_Detection_PostProcess":        {"*tflite::Register_DETECTION_POSTPROCESS()", opResolverHeader},
	"SignalDelay":                         {"*tflite::tflm_signal::Register_DELAY()", microOpsHeader},
	"SignalEnergy":                        {"*tflite::tflm_signal::Register_ENERGY()", microOpsHeader},
	"SignalFftAutoScale":                  {"*tflite::tflm_signal::Register_FFT_AUTO_SCALE()", microOpsHeader},
	"SignalFilterBank":                    {"*tflite::tflm_signal::Register_FILTER_BANK()", microOpsHeader},
	"SignalFilterBankLog":                 {"*tflite::tflm_signal::Register_FILTER_BANK_LOG()", microOpsHeader},
	"SignalFilterBankSquareRoot":          {"*tflite::tflm_signal::Register_FILTER_BANK_SQUARE_ROOT()", microOpsHeader},
	"SignalFilterBankSpectralSubtraction": {"*tflite::tflm_signal::Register_FILTER_BANK_SPECTRAL_SUBTRACTION()", microOpsHeader},
	"SignalFramer":                        {"*tflite::tflm_signal::Register_FRAMER()", microOpsHeader},
	"SignalIrfft":                         {"*tflite::tflm_signal::Register_IRFFT()", signalIrfftHeader},
	"SignalOverlapAdd":                    {"*tflite::tflm_signal::Register_OVERLAP_ADD()", microOpsHeader},
	"SignalPCAN":                          {"*tflite::tflm_signal::Register_PCAN()", microOpsHeader},
	"SignalRfft":                          {"*tflite::tflm_signal::Register_RFFT()", signalRfftHeader},
	"SignalStacker":                       {"*tflite::tflm_signal::Register_STACKER()", microOpsHeader},
	"SignalWindow":                        {"*tflite::tflm_signal::Register_WINDOW()", microOpsHeader},
}

// Parse functions shared by several operators.

// parseAddSub is ParseAdd and ParseSub: activation and pot_scale_int16.
func parseAddSub(o *graph.Options, p *cParams) error {
	p.setActivation(o.Int("fused_activation_function"))
	p.setBool("pot_scale_int16", o.Bool("pot_scale_int16"))
	return nil
}

// parseActOnly is ParseDiv, ParseL2Normalization and ParseMul.
func parseActOnly(o *graph.Options, p *cParams) error {
	p.setActivation(o.Int("fused_activation_function"))
	return nil
}

// parseArgMinMax is ParseArgMax and ParseArgMin.
func parseArgMinMax(o *graph.Options, p *cParams) error {
	return p.setTensorType("output_type", o.Int("output_type"))
}

// parsePool is ParsePool (AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D); the
// struct's computed padding is the kernel's to fill.
func parsePool(o *graph.Options, p *cParams) error {
	p.setPadding(o.Int("padding"))
	p.setInt("stride_width", o.Int("stride_w"))
	p.setInt("stride_height", o.Int("stride_h"))
	p.setInt("filter_width", o.Int("filter_width"))
	p.setInt("filter_height", o.Int("filter_height"))
	p.setActivation(o.Int("fused_activation_function"))
	return nil
}

// parseReducer is ParseReducer (MEAN, SUM, REDUCE_*).
func parseReducer(o *graph.Options, p *cParams) error {
	p.setBool("keep_dims", o.Bool("keep_dims"))
	return nil
}

// parseResize is ParseResizeBilinear and ParseResizeNearestNeighbor.
func parseResize(o *graph.Options, p *cParams) error {
	p.setBool("align_corners", o.Bool("align_corners"))
	p.setBool("half_pixel_centers", o.Bool("half_pixel_centers"))
	return nil
}

// parseBlockSize is ParseDepthToSpace and ParseSpaceToDepth.
func parseBlockSize(o *graph.Options, p *cParams) error {
	p.setInt("block_size", o.Int("block_size"))
	return nil
}

// parseNumSplits is ParseSplit and ParseSplitV.
func parseNumSplits(o *graph.Options, p *cParams) error {
	p.setInt("num_splits", o.Int("num_splits"))
	return nil
}

// cField is one field of a TfLite*Params struct and the C++ spelling of its
// zero value.
type cField struct{ name, zero string }

// tflmParamsFields lists the fields of each params struct the parse
// functions fill, in declaration order
// (tensorflow/compiler/mlir/lite/core/c/builtin_op_data.h @90b983c, which
// tensorflow/lite/c/builtin_op_data.h includes).
var tflmParamsFields = map[string][]cField{
	"TfLiteAddParams":           {{"activation", "kTfLiteActNone"}, {"pot_scale_int16", "false"}},
	"TfLiteArgMaxParams":        {{"output_type", "kTfLiteNoType"}},
	"TfLiteArgMinParams":        {{"output_type", "kTfLiteNoType"}},
	"TfLiteBatchMatMulParams":   {{"adj_x", "false"}, {"adj_y", "false"}, {"asymmetric_quantize_inputs", "false"}},
	"TfLiteCallOnceParams":      {{"init_subgraph_index", "0"}},
	"TfLiteCastParams":          {{"in_data_type", "kTfLiteNoType"}, {"out_data_type", "kTfLiteNoType"}},
	"TfLiteConcatenationParams": {{"axis", "0"}, {"activation", "kTfLiteActNone"}},
	"TfLiteConvParams": {{"padding", "kTfLitePaddingUnknown"}, {"stride_width", "0"}, {"stride_height", "0"},
		{"activation", "kTfLiteActNone"}, {"dilation_width_factor", "0"}, {"dilation_height_factor", "0"},
		{"quantized_bias_type", "kTfLiteNoType"}},
	"TfLiteCumsumParams":       {{"exclusive", "false"}, {"reverse", "false"}},
	"TfLiteDepthToSpaceParams": {{"block_size", "0"}},
	"TfLiteDepthwiseConvParams": {{"padding", "kTfLitePaddingUnknown"}, {"stride_width", "0"}, {"stride_height", "0"},
		{"depth_multiplier", "0"}, {"activation", "kTfLiteActNone"}, {"dilation_width_factor", "0"},
		{"dilation_height_factor", "0"}},
	"TfLiteDivParams": {{"activation", "kTfLiteActNone"}},
	"TfLiteFullyConnectedParams": {{"activation", "kTfLiteActNone"}, {"weights_format", "kTfLiteFullyConnectedWeightsFormatDefault"},
		{"keep_num_dims", "false"}, {"asymmetric_quantize_inputs", "false"}, {"quantized_bias_type", "kTfLiteNoType"}},
	"TfLiteGatherParams":        {{"axis", "0"}, {"batch_dims", "0"}},
	"TfLiteIfParams":            {{"then_subgraph_index", "0"}, {"else_subgraph_index", "0"}},
	"TfLiteL2NormParams":        {{"activation", "kTfLiteActNone"}},
	"TfLiteLeakyReluParams":     {{"alpha", "0.0f"}},
	"TfLiteMirrorPaddingParams": {{"mode", "kTfLiteMirrorPaddingUnknown"}},
	"TfLiteMulParams":           {{"activation", "kTfLiteActNone"}},
	"TfLitePackParams":          {{"values_count", "0"}, {"axis", "0"}},
	"TfLitePoolParams": {{"padding", "kTfLitePaddingUnknown"}, {"stride_width", "0"}, {"stride_height", "0"},
		{"filter_width", "0"}, {"filter_height", "0"}, {"activation", "kTfLiteActNone"},
		{"computed", "{.padding = {.width = 0, .height = 0, .width_offset = 0, .height_offset = 0}}"}},
	"TfLiteReducerParams":               {{"keep_dims", "false"}},
	"TfLiteReshapeParams":               {{"shape", "{}"}, {"num_dimensions", "0"}},
	"TfLiteResizeBilinearParams":        {{"align_corners", "false"}, {"half_pixel_centers", "false"}},
	"TfLiteResizeNearestNeighborParams": {{"align_corners", "false"}, {"half_pixel_centers", "false"}},
	"TfLiteShapeParams":                 {{"out_type", "kTfLiteNoType"}},
	"TfLiteSoftmaxParams":               {{"beta", "0.0f"}},
	"TfLiteSpaceToDepthParams":          {{"block_size", "0"}},
	"TfLiteSplitParams":                 {{"num_splits", "0"}},
	"TfLiteSplitVParams":                {{"num_splits", "0"}},
	"TfLiteSqueezeParams":               {{"squeeze_dims", "{}"}, {"num_squeeze_dims", "0"}},
	"TfLiteStridedSliceParams": {{"begin_mask", "0"}, {"end_mask", "0"}, {"ellipsis_mask", "0"},
		{"new_axis_mask", "0"}, {"shrink_axis_mask", "0"}, {"offset", "false"}},
	"TfLiteSubParams":  {{"activation", "kTfLiteActNone"}, {"pot_scale_int16", "false"}},
	"TfLiteSVDFParams": {{"rank", "0"}, {"activation", "kTfLiteActNone"}, {"asymmetric_quantize_inputs", "false"}},
	"TfLiteTransposeConvParams": {{"padding", "kTfLitePaddingUnknown"}, {"stride_width", "0"}, {"stride_height", "0"},
		{"activation", "kTfLiteActNone"}, {"quantized_bias_type", "kTfLiteNoType"}},
	"TfLiteUnidirectionalSequenceLSTMParams": {{"activation", "kTfLiteActNone"}, {"cell_clip", "0.0f"}, {"proj_clip", "0.0f"},
		{"time_major", "false"}, {"asymmetric_quantize_inputs", "false"}, {"diagonal_recurrent_tensors", "false"}},
	"TfLiteUnpackParams":    {{"num", "0"}, {"axis", "0"}},
	"TfLiteVarHandleParams": {{"container", "nullptr"}, {"shared_name", "nullptr"}},
	"TfLiteWhileParams":     {{"cond_subgraph_index", "0"}, {"body_subgraph_index", "0"}},
}

// cParams is a params struct being filled: the C++ spelling of each field
// set so far; the others stay zero.
type cParams struct {
	typ  string
	vals map[string]string
	err  error
}

func newCParams(typ string) *cParams { return &cParams{typ: typ, vals: map[string]string{}} }

func (p *cParams) set(field, v string) {
	for _, f := range tflmParamsFields[p.typ] {
		if f.name == field {
			p.vals[field] = v
			return
		}
	}
	if p.err == nil {
		p.err = fmt.Errorf("heliac bug: %s has no field %s", p.typ, field)
	}
}

// setInt sets an int field, as the parse functions assign an int32 option.
func (p *cParams) setInt(field string, v int64) { p.set(field, strconv.FormatInt(int64(int32(v)), 10)) }

func (p *cParams) setBool(field string, v bool) { p.set(field, strconv.FormatBool(v)) }

func (p *cParams) setFloat(field string, v float64) { p.set(field, cppFloat(float32(v))) }

// setActivation is ConvertActivation: a value the enum does not name is
// kTfLiteActNone.
func (p *cParams) setActivation(v int64) {
	names := []string{"kTfLiteActNone", "kTfLiteActRelu", "kTfLiteActReluN1To1", "kTfLiteActRelu6", "kTfLiteActTanh", "kTfLiteActSignBit"}
	if v < 0 || v >= int64(len(names)) {
		v = 0
	}
	p.set("activation", names[v])
}

// setPadding is ConvertPadding: SAME 0, VALID 1, anything else unknown.
func (p *cParams) setPadding(v int64) {
	switch v {
	case 0:
		p.set("padding", "kTfLitePaddingSame")
	case 1:
		p.set("padding", "kTfLitePaddingValid")
	default:
		p.set("padding", "kTfLitePaddingUnknown")
	}
}

// tflmTensorTypes is ConvertTensorType: schema.fbs TensorType value ->
// TfLiteType; a value it does not list is an error.
var tflmTensorTypes = []string{
	"kTfLiteFloat32", "kTfLiteFloat16", "kTfLiteInt32", "kTfLiteUInt8", "kTfLiteInt64", "kTfLiteString",
	"kTfLiteBool", "kTfLiteInt16", "kTfLiteComplex64", "kTfLiteInt8", "kTfLiteFloat64", "kTfLiteComplex128",
	"kTfLiteUInt64", "kTfLiteResource", "kTfLiteVariant", "kTfLiteUInt32", "kTfLiteUInt16", "kTfLiteInt4",
	"kTfLiteBFloat16", "kTfLiteInt2", "kTfLiteUInt4", "kTfLiteFloat8E4M3FN", "kTfLiteFloat8E5M2",
}

func (p *cParams) setTensorType(field string, v int64) error {
	if v < 0 || v >= int64(len(tflmTensorTypes)) {
		return fmt.Errorf("TFLM refuses %s %d (Unsupported data type)", field, v)
	}
	p.set(field, tflmTensorTypes[v])
	return nil
}

// setArray is FlatBufferIntVectorToArray into an array of max int32s and
// its count: a vector the options leave out leaves both zero, a longer one
// is refused.
func (p *cParams) setArray(f *graph.OptionField, array, count string, max int) error {
	if f == nil || !f.Present {
		return nil
	}
	if len(f.Ints) > max {
		return fmt.Errorf("TFLM refuses %s of %d dimensions (Found too many dimensions), at most %d", f.Name, len(f.Ints), max)
	}
	vals := make([]string, len(f.Ints))
	for i, v := range f.Ints {
		vals[i] = strconv.FormatInt(int64(int32(v)), 10)
	}
	p.set(array, "{"+strings.Join(vals, ", ")+"}")
	p.setInt(count, int64(len(f.Ints)))
	return nil
}

// init is the designated initializer, every field in declaration order.
func (p *cParams) init() (string, error) {
	if p.err != nil {
		return "", p.err
	}
	fields := tflmParamsFields[p.typ]
	parts := make([]string, len(fields))
	for i, f := range fields {
		v, ok := p.vals[f.name]
		if !ok {
			v = f.zero
		}
		parts[i] = "." + f.name + " = " + v
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

// cppFloat spells a float exactly as a C++ float expression.
func cppFloat(v float32) string {
	switch {
	case math.IsNaN(float64(v)):
		return "__builtin_nanf(\"\")"
	case math.IsInf(float64(v), 1):
		return "__builtin_inff()"
	case math.IsInf(float64(v), -1):
		return "(-__builtin_inff())"
	}
	s := strconv.FormatFloat(float64(v), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s + "f"
}

// cppString spells s as a C++ string literal, byte for byte.
func cppString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '?':
			b.WriteString(`\?`) // no trigraphs
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
