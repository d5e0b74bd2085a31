package kernels

import (
	"fmt"

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

// TFLMRefusal is the one place that says why TFLM's reference kernels
// cannot run operator op
// of subgraph s of m whatever the arena: TFLM registers no kernel for it,
// or its kernel's Prepare or Eval refuses the operands' types (or needs
// constant an operand that is not), so TFLM fails to allocate or invoke
// the model. It is "" when TFLM runs the operator or the data does not
// say. TFLM reports no arena data for an operator TFLM refuses.
func TFLMRefusal(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) string {
	if m == nil || op == nil || s < 0 || int(s) >= len(m.Subgraphs) {
		return ""
	}
	switch {
	case op.Code == graph.Custom && op.CustomName == "ethos-u":
		return "ethos-u runs on an Arm Ethos-U NPU (micro_mutable_op_resolver.h AddEthosU registers it only in an Ethos-U build)"
	case op.Code == graph.Custom && !tflmRegisteredCustom[op.CustomName]:
		return fmt.Sprintf("TFLM registers no custom operator %q (micro_mutable_op_resolver.h at %s)", op.CustomName, tflmCommit)
	case op.Code != graph.Custom && op.CodeName != "" && !tflmRegistered[op.CodeName]:
		return fmt.Sprintf("TFLM registers no kernel for %s (micro_mutable_op_resolver.h at %s)", op.CodeName, tflmCommit)
	case op.Code == graph.Custom:
		// A registered custom operator: its kernel data's Refused (the
		// shape kernels' options and types, TFLM_DECODE's DCM).
		if k, ok := TFLM(m, s, op, 8); ok {
			return k.Refused
		}
		return ""
	}
	if why := tflmMathRefusal(m, &m.Subgraphs[s], op); why != "" {
		return why
	}
	if k, ok := TFLM(m, s, op, 8); ok && k.Refused != "" {
		return k.Refused
	}
	return ""
}
