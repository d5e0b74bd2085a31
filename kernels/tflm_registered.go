package kernels

import (
	"github.com/heliac/heliac/graph"
)

// tflmRegistered are the operators TFLM's MicroMutableOpResolver can
// register at tflmCommit (tensorflow/lite/micro/micro_mutable_op_resolver.h:
// the AddBuiltin of each Add* method), by schema name; an operator not
// here has no kernel in TFLM. tflm_registered_test.go checks the list
// against ../shared/tflm's header.
var tflmRegistered = map[string]bool{}

// tflmRegisteredCustom are the custom operators it registers (AddCustom),
// by custom name; AddEthosU registers "ethos-u" only in an Ethos-U build,
// so it is left out.
var tflmRegisteredCustom = map[string]bool{}

func init() {
	for _, n := range []string{"ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D",
		"BATCH_MATMUL", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST", "CEIL",
		"CONCATENATION", "CONV_2D", "COS", "CUMSUM", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE", "DIV",
		"DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP", "EXPAND_DIMS", "FILL", "FLOOR",
		"FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER", "GATHER_ND", "GREATER", "GREATER_EQUAL",
		"HARD_SWISH", "IF", "L2_NORMALIZATION", "L2_POOL_2D", "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG",
		"LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR", "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN",
		"MINIMUM", "MIRROR_PAD", "MUL", "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE",
		"READ_VARIABLE", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE", "RESIZE_BILINEAR",
		"RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2", "SHAPE", "SIN", "SLICE",
		"SOFTMAX", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "SQRT", "SQUARE",
		"SQUARED_DIFFERENCE", "SQUEEZE", "STRIDED_SLICE", "SUB", "SUM", "SVDF", "TANH", "TRANSPOSE",
		"TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK", "VAR_HANDLE", "WHILE", "ZEROS_LIKE"} {
		tflmRegistered[n] = true
	}
	for _, n := range []string{"CIRCULAR_BUFFER", "SignalDelay", "SignalEnergy", "SignalFftAutoScale",
		"SignalFilterBank", "SignalFilterBankLog", "SignalFilterBankSpectralSubtraction",
		"SignalFilterBankSquareRoot", "SignalFramer", "SignalIrfft", "SignalOverlapAdd", "SignalPCAN",
		"SignalRfft", "SignalStacker", "SignalWindow", "TFLM_DECODE", "TFLite_Detection_PostProcess"} {
		tflmRegisteredCustom[n] = true
	}
}

// TFLMRefusal says why TFLM's reference kernels cannot run operator op
// of subgraph s of m whatever the arena (opRefusal, TFLMRefusals' check
// of one operator, with its source), or "" when TFLM runs it or no check
// says otherwise. tflmarena reports no arena figure for such an operator.
func TFLMRefusal(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) string {
	if m == nil || op == nil || s < 0 || int(s) >= len(m.Subgraphs) {
		return ""
	}
	ref := graph.OpRef{Subgraph: s, Op: -1}
	for i := range m.Subgraphs[s].Ops {
		if &m.Subgraphs[s].Ops[i] == op {
			ref.Op = graph.OpIndex(i)
		}
	}
	hybrid := map[graph.OpRef]HybridOp{}
	if ref.Op >= 0 {
		for _, h := range Hybrid(m) {
			if h.Op == ref {
				hybrid[ref] = h
			}
		}
	}
	reason, source := opRefusal(m, ref, op, hybrid)
	if reason != "" && source != "" && source != dataSource {
		return reason + " (" + source + ")"
	}
	return reason
}
