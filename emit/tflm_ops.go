package emit

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// This is a stub: helper "ops" of issue 22 writes the full table in this
// file (same name), with every builtin's parameters from graph.Op.Options.
// Until then it knows the operators the runtime's tests use, with the
// parameters the graph gives without options (windows, called subgraphs,
// resource names); a fused activation is taken as NONE, which clamps as
// RELU does when the output's zero point is its type's minimum (the
// bundled models' hidden layers).

// tflmOp says how TFLM's reference kernels run one operator.
type tflmOp struct {
	Register   string   // C++ expression giving its TFLMRegistration, e.g. "tflite::Register_CONV_2D()"
	ParamsType string   // C++ type of builtin_data, e.g. "TfLiteConvParams"; "" when TFLM passes none (NULL)
	ParamsInit string   // its brace initializer: designated, in declaration order
	Custom     []byte   // custom_initial_data of a custom operator; nil otherwise
	Headers    []string // headers to #include for Register / ParamsType
}

// tflmOpOf returns how TFLM runs operator op of subgraph si of m.
func tflmOpOf(m *graph.Model, si graph.SubgraphIndex, op *graph.Op) (tflmOp, error) {
	k := tflmOp{Register: "tflite::Register_" + op.CodeName + "()", Headers: []string{"tensorflow/lite/micro/kernels/micro_ops.h"}}
	called := func(i int) int {
		if i < len(op.Called) {
			return int(op.Called[i])
		}
		return -1
	}
	switch op.CodeName {
	case "FULLY_CONNECTED":
		k.ParamsType = "TfLiteFullyConnectedParams"
		k.ParamsInit = "{.activation = kTfLiteActNone, .weights_format = kTfLiteFullyConnectedWeightsFormatDefault, " +
			".keep_num_dims = false, .asymmetric_quantize_inputs = false, .quantized_bias_type = kTfLiteNoType}"
	case "CONV_2D", "DEPTHWISE_CONV_2D":
		w := op.Window
		if w == nil {
			return k, fmt.Errorf("operator %d:%d %s: no options", si, opIndex(m, si, op), op.Name())
		}
		pad := "kTfLitePaddingSame"
		if w.Padding == graph.PaddingValid {
			pad = "kTfLitePaddingValid"
		}
		if op.CodeName == "CONV_2D" {
			k.ParamsType = "TfLiteConvParams"
			k.ParamsInit = fmt.Sprintf("{.padding = %s, .stride_width = %d, .stride_height = %d, .activation = kTfLiteActNone, "+
				".dilation_width_factor = %d, .dilation_height_factor = %d, .quantized_bias_type = kTfLiteNoType}",
				pad, w.StrideW, w.StrideH, w.DilationW, w.DilationH)
			break
		}
		k.ParamsType = "TfLiteDepthwiseConvParams"
		k.ParamsInit = fmt.Sprintf("{.padding = %s, .stride_width = %d, .stride_height = %d, .depth_multiplier = %d, "+
			".activation = kTfLiteActNone, .dilation_width_factor = %d, .dilation_height_factor = %d}",
			pad, w.StrideW, w.StrideH, w.DepthMultiplier, w.DilationW, w.DilationH)
	case "RESHAPE":
		// The reference kernel takes the shape from the output tensor.
		k.ParamsType, k.ParamsInit = "TfLiteReshapeParams", "{}"
	case "SOFTMAX":
		k.ParamsType, k.ParamsInit = "TfLiteSoftmaxParams", "{.beta = 1.0f}"
	case "ADD":
		k.ParamsType, k.ParamsInit = "TfLiteAddParams", "{.activation = kTfLiteActNone, .pot_scale_int16 = true}"
	case "MUL":
		k.ParamsType, k.ParamsInit = "TfLiteMulParams", "{.activation = kTfLiteActNone}"
	case "WHILE":
		k.ParamsType = "TfLiteWhileParams"
		k.ParamsInit = fmt.Sprintf("{.cond_subgraph_index = %d, .body_subgraph_index = %d}", called(0), called(1))
	case "IF":
		k.ParamsType = "TfLiteIfParams"
		k.ParamsInit = fmt.Sprintf("{.then_subgraph_index = %d, .else_subgraph_index = %d}", called(0), called(1))
	case "CALL_ONCE":
		k.ParamsType = "TfLiteCallOnceParams"
		k.ParamsInit = fmt.Sprintf("{.init_subgraph_index = %d}", called(0))
	case "VAR_HANDLE":
		r := op.Resource
		if r == nil {
			return k, fmt.Errorf("operator %d:%d %s: no options", si, opIndex(m, si, op), op.Name())
		}
		container := "nullptr"
		if r.HasContainer {
			container = cString(r.Container)
		}
		k.ParamsType = "TfLiteVarHandleParams"
		k.ParamsInit = fmt.Sprintf("{.container = %s, .shared_name = %s}", container, cString(r.SharedName))
	case "SVDF":
		// rank = filters / units: weights_feature is [filters, input],
		// the output [batch, units].
		sg := &m.Subgraphs[si]
		rank := 0
		if len(op.Inputs) > 1 && len(op.Outputs) > 0 && op.Inputs[1] >= 0 && op.Outputs[0] >= 0 {
			wf, out := sg.Tensors[op.Inputs[1]].Shape, sg.Tensors[op.Outputs[0]].Shape
			if len(wf) == 2 && len(out) == 2 && out[1] > 0 {
				rank = int(wf[0] / out[1])
			}
		}
		k.ParamsType = "TfLiteSVDFParams"
		k.ParamsInit = fmt.Sprintf("{.rank = %d, .activation = %s, .asymmetric_quantize_inputs = false}", rank, svdfActivation)
	case "ASSIGN_VARIABLE", "READ_VARIABLE", "LESS", "QUANTIZE":
	default:
		return tflmOp{}, fmt.Errorf("operator %d:%d %s: TFLM has no kernel for it in this build of heliac", si, opIndex(m, si, op), op.Name())
	}
	return k, nil
}

// opIndex returns op's index in subgraph si, or -1.
func opIndex(m *graph.Model, si graph.SubgraphIndex, op *graph.Op) int {
	for i := range m.Subgraphs[si].Ops {
		if &m.Subgraphs[si].Ops[i] == op {
			return i
		}
	}
	return -1
}

// svdfActivation is the stub's guess at SVDF's fused activation.
var svdfActivation = "kTfLiteActRelu"
