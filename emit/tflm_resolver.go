package emit

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// tflmResolverBuiltins maps each builtin operator to the
// MicroMutableOpResolver method that registers it with its default
// registration (tensorflow/lite/micro/micro_mutable_op_resolver.h
// @90b983c, class MicroMutableOpResolver: each AddXxx calls
// AddBuiltin(BuiltinOperator_<NAME>, ...)). TestResolverMethods checks
// the table against that header.
var tflmResolverBuiltins = map[string]string{
	"ABS":                          "AddAbs",
	"ADD":                          "AddAdd",
	"ADD_N":                        "AddAddN",
	"ARG_MAX":                      "AddArgMax",
	"ARG_MIN":                      "AddArgMin",
	"ASSIGN_VARIABLE":              "AddAssignVariable",
	"AVERAGE_POOL_2D":              "AddAveragePool2D",
	"BATCH_MATMUL":                 "AddBatchMatMul",
	"BATCH_TO_SPACE_ND":            "AddBatchToSpaceNd",
	"BROADCAST_ARGS":               "AddBroadcastArgs",
	"BROADCAST_TO":                 "AddBroadcastTo",
	"CALL_ONCE":                    "AddCallOnce",
	"CAST":                         "AddCast",
	"CEIL":                         "AddCeil",
	"CONCATENATION":                "AddConcatenation",
	"CONV_2D":                      "AddConv2D",
	"COS":                          "AddCos",
	"CUMSUM":                       "AddCumSum",
	"DEPTHWISE_CONV_2D":            "AddDepthwiseConv2D",
	"DEPTH_TO_SPACE":               "AddDepthToSpace",
	"DEQUANTIZE":                   "AddDequantize",
	"DIV":                          "AddDiv",
	"DYNAMIC_UPDATE_SLICE":         "AddDynamicUpdateSlice",
	"ELU":                          "AddElu",
	"EMBEDDING_LOOKUP":             "AddEmbeddingLookup",
	"EQUAL":                        "AddEqual",
	"EXP":                          "AddExp",
	"EXPAND_DIMS":                  "AddExpandDims",
	"FILL":                         "AddFill",
	"FLOOR":                        "AddFloor",
	"FLOOR_DIV":                    "AddFloorDiv",
	"FLOOR_MOD":                    "AddFloorMod",
	"FULLY_CONNECTED":              "AddFullyConnected",
	"GATHER":                       "AddGather",
	"GATHER_ND":                    "AddGatherNd",
	"GREATER":                      "AddGreater",
	"GREATER_EQUAL":                "AddGreaterEqual",
	"HARD_SWISH":                   "AddHardSwish",
	"IF":                           "AddIf",
	"L2_NORMALIZATION":             "AddL2Normalization",
	"L2_POOL_2D":                   "AddL2Pool2D",
	"LEAKY_RELU":                   "AddLeakyRelu",
	"LESS":                         "AddLess",
	"LESS_EQUAL":                   "AddLessEqual",
	"LOG":                          "AddLog",
	"LOGICAL_AND":                  "AddLogicalAnd",
	"LOGICAL_NOT":                  "AddLogicalNot",
	"LOGICAL_OR":                   "AddLogicalOr",
	"LOGISTIC":                     "AddLogistic",
	"LOG_SOFTMAX":                  "AddLogSoftmax",
	"MAXIMUM":                      "AddMaximum",
	"MAX_POOL_2D":                  "AddMaxPool2D",
	"MEAN":                         "AddMean",
	"MINIMUM":                      "AddMinimum",
	"MIRROR_PAD":                   "AddMirrorPad",
	"MUL":                          "AddMul",
	"NEG":                          "AddNeg",
	"NOT_EQUAL":                    "AddNotEqual",
	"PACK":                         "AddPack",
	"PAD":                          "AddPad",
	"PADV2":                        "AddPadV2",
	"PRELU":                        "AddPrelu",
	"QUANTIZE":                     "AddQuantize",
	"READ_VARIABLE":                "AddReadVariable",
	"REDUCE_ALL":                   "AddReduceAll",
	"REDUCE_MAX":                   "AddReduceMax",
	"REDUCE_MIN":                   "AddReduceMin",
	"RELU":                         "AddRelu",
	"RELU6":                        "AddRelu6",
	"RESHAPE":                      "AddReshape",
	"RESIZE_BILINEAR":              "AddResizeBilinear",
	"RESIZE_NEAREST_NEIGHBOR":      "AddResizeNearestNeighbor",
	"REVERSE_V2":                   "AddReverseV2",
	"ROUND":                        "AddRound",
	"RSQRT":                        "AddRsqrt",
	"SELECT_V2":                    "AddSelectV2",
	"SHAPE":                        "AddShape",
	"SIN":                          "AddSin",
	"SLICE":                        "AddSlice",
	"SOFTMAX":                      "AddSoftmax",
	"SPACE_TO_BATCH_ND":            "AddSpaceToBatchNd",
	"SPACE_TO_DEPTH":               "AddSpaceToDepth",
	"SPLIT":                        "AddSplit",
	"SPLIT_V":                      "AddSplitV",
	"SQRT":                         "AddSqrt",
	"SQUARE":                       "AddSquare",
	"SQUARED_DIFFERENCE":           "AddSquaredDifference",
	"SQUEEZE":                      "AddSqueeze",
	"STRIDED_SLICE":                "AddStridedSlice",
	"SUB":                          "AddSub",
	"SUM":                          "AddSum",
	"SVDF":                         "AddSvdf",
	"TANH":                         "AddTanh",
	"TRANSPOSE":                    "AddTranspose",
	"TRANSPOSE_CONV":               "AddTransposeConv",
	"UNIDIRECTIONAL_SEQUENCE_LSTM": "AddUnidirectionalSequenceLSTM",
	"UNPACK":                       "AddUnpack",
	"VAR_HANDLE":                   "AddVarHandle",
	"WHILE":                        "AddWhile",
	"ZEROS_LIKE":                   "AddZerosLike",
}

// tflmResolverCustom maps each custom operator MicroMutableOpResolver
// registers by name to its method (micro_mutable_op_resolver.h @90b983c:
// each AddXxx calls AddCustom("<name>", ...)). AddEthosU is left out: the
// reference build's Register_ETHOSU returns null (kernels/ethosu.cc
// @90b983c), so it registers nothing.
var tflmResolverCustom = map[string]string{
	"CIRCULAR_BUFFER":                     "AddCircularBuffer",
	"SignalDelay":                         "AddDelay",
	"SignalEnergy":                        "AddEnergy",
	"SignalFftAutoScale":                  "AddFftAutoScale",
	"SignalFilterBank":                    "AddFilterBank",
	"SignalFilterBankLog":                 "AddFilterBankLog",
	"SignalFilterBankSpectralSubtraction": "AddFilterBankSpectralSubtraction",
	"SignalFilterBankSquareRoot":          "AddFilterBankSquareRoot",
	"SignalFramer":                        "AddFramer",
	"SignalIrfft":                         "AddIrfft",
	"SignalOverlapAdd":                    "AddOverlapAdd",
	"SignalPCAN":                          "AddPCAN",
	"SignalRfft":                          "AddRfft",
	"SignalStacker":                       "AddStacker",
	"SignalWindow":                        "AddWindow",
	"TFLM_DECODE":                         "AddDecode",
	"TFLite_Detection_PostProcess":        "AddDetectionPostprocess",
}

// tflmResolver is how a MicroMutableOpResolver registers a model's
// operators: one AddXxx call per distinct operator, sorted; the custom
// operators it has no method for (the application registers them with
// AddCustom) and the builtin operators TFLM has no kernel for.
type tflmResolver struct {
	Methods []string
	Custom  []string
	Missing []string
}

// Count is the number of registrations the model needs: the methods and
// the application's custom operators (MicroMutableOpResolver's tOpCount).
func (r tflmResolver) Count() int { return len(r.Methods) + len(r.Custom) }

// tflmResolverOf returns how m's operators, in every subgraph, are
// registered. Each operator is registered once: MicroMutableOpResolver
// refuses a second AddBuiltin or AddCustom of the same operator
// (micro_mutable_op_resolver.h @90b983c, AddBuiltin and AddCustom).
func tflmResolverOf(m *graph.Model) tflmResolver {
	var r tflmResolver
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, sg := range m.Subgraphs {
		for i := range sg.Ops {
			op := &sg.Ops[i]
			switch {
			case op.Code == graph.Custom:
				if meth, ok := tflmResolverCustom[op.CustomName]; ok {
					add(&r.Methods, meth)
				} else {
					add(&r.Custom, op.CustomName)
				}
			case tflmResolverBuiltins[op.CodeName] != "":
				add(&r.Methods, tflmResolverBuiltins[op.CodeName])
			default:
				add(&r.Missing, op.Name())
			}
		}
	}
	slices.Sort(r.Methods)
	slices.Sort(r.Custom)
	slices.Sort(r.Missing)
	return r
}
