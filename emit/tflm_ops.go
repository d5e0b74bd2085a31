package emit

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// This is a stub: helper "ops" of issue 22 writes the full table in this
// file (same name), with every builtin's parameters from graph.Op.Options.
// Until then it knows the few operators the runtime's tests use, and only
// parameters it can tell without the operator's options.

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
	const ops = "tensorflow/lite/micro/kernels/micro_ops.h"
	switch op.CodeName {
	case "FULLY_CONNECTED":
		// The stub cannot read the options: activation NONE, which clamps
		// as RELU does when the output's zero point is the type's minimum
		// (hello_world_int8's hidden layers).
		return tflmOp{Register: "tflite::Register_FULLY_CONNECTED()", ParamsType: "TfLiteFullyConnectedParams",
			ParamsInit: "{.activation = kTfLiteActNone, .weights_format = kTfLiteFullyConnectedWeightsFormatDefault, " +
				".keep_num_dims = false, .asymmetric_quantize_inputs = false, .quantized_bias_type = kTfLiteNoType}",
			Headers: []string{ops}}, nil
	}
	return tflmOp{}, fmt.Errorf("operator %d:%s %s: TFLM has no kernel for it in this build of heliac", si, "?", op.Name())
}
