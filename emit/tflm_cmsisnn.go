package emit

import "github.com/heliac/heliac/graph"

// TFLM's CMSIS-NN kernels (tensorflow/lite/micro/kernels/cmsis_nn @90b983c)
// also register type-specialised kernels, Register_CONV_2D_INT8() and the
// like: the generic kernel's Init and Prepare with an Eval that runs one
// type's code, so that a firmware links only that code. Their headers
// (tensorflow/lite/micro/kernels/<op>.h) declare them under
// #if defined(CMSIS_NN) and, without CMSIS_NN, define them inline as the
// generic registration: a runtime that names them compiles against the
// reference kernels too, and runs the generic kernel there.
//
// A specialised registration is used only where its Eval runs exactly the
// code the generic Eval's dispatch picks for the operator's types, read in
// each cmsis_nn/<op>.cc; where they differ, the generic one stays:
//   - CONV_2D with INT16 input: EvalInt16x8 picks its accumulator from the
//     params' quantized_bias_type when there is no bias, Eval always
//     int32, so only with a bias.
//   - SOFTMAX with INT8 input: Eval runs the int8-to-int16 code for any
//     output but INT8, so INT8_INT16 only for an INT16 output.
//   - TRANSPOSE with INT8 input: TransposeEvalInt8 refuses a permutation of
//     more than 4 dimensions, which Eval ignores, so only up to 4.
//   - UNIDIRECTIONAL_SEQUENCE_LSTM: never. Its INT8 and INT16 Evals check
//     (TFLITE_DCHECK, live in TFLM's libraries) that the weights are INT16,
//     where Eval runs INT8 weights only.
//   - MUL INT16 and PADV2: mul.h and pad.h declare no such registration.

// cmsisSpecialised is one operator's type-specialised registrations: the
// header that declares them, and the rule that picks one for an operator
// (the suffix after Register_<NAME>_, "" for the generic one).
type cmsisSpecialised struct {
	header string
	pick   func(o cmsisOperands) string
}

// cmsisOperands reads an operator's operand types.
type cmsisOperands struct {
	sg *graph.Subgraph
	op *graph.Op
}

// in is the type of input i, or -1 when it is absent.
func (o cmsisOperands) in(i int) graph.ElementType { return o.typeOf(o.op.Inputs, i) }

// out is the type of output 0, or -1.
func (o cmsisOperands) out() graph.ElementType { return o.typeOf(o.op.Outputs, 0) }

func (o cmsisOperands) typeOf(ids []graph.TensorID, i int) graph.ElementType {
	if t := o.tensor(ids, i); t != nil {
		return t.Type
	}
	return -1
}

func (o cmsisOperands) tensor(ids []graph.TensorID, i int) *graph.Tensor {
	if i >= len(ids) || ids[i] < 0 || int(ids[i]) >= len(o.sg.Tensors) {
		return nil
	}
	return &o.sg.Tensors[ids[i]]
}

// both returns suffix when input i and the output are of type t.
func (o cmsisOperands) both(i int, t graph.ElementType, suffix string) string {
	if o.in(i) == t && o.out() == t {
		return suffix
	}
	return ""
}

// conv picks CONV_2D's, DEPTHWISE_CONV_2D's and FULLY_CONNECTED's
// registration: their Evals run INT8 input by the filter's type (INT8 or
// packed INT4: EvalInt8, EvalInt4) and INT16 input as EvalInt16 does
// (with INT8 filters). withBias: the INT16 one only with a bias (CONV_2D's
// EvalInt16x8 reads the params' quantized_bias_type without one, Eval does
// not).
func conv(withBias bool) func(o cmsisOperands) string {
	return func(o cmsisOperands) string {
		if o.in(0) != o.out() {
			return ""
		}
		switch {
		case o.in(0) == graph.Int8 && o.in(1) == graph.Int8:
			return "INT8"
		case o.in(0) == graph.Int8 && o.in(1) == graph.Int4:
			return "INT4"
		case o.in(0) == graph.Int16 && o.in(1) == graph.Int8 && (!withBias || o.tensor(o.op.Inputs, 2) != nil):
			return "INT16"
		}
		return ""
	}
}

// intTypes picks by input 0 (and the output, of the same type): INT8 and
// INT16 where the header declares both.
func intTypes(int16 bool) func(o cmsisOperands) string {
	return func(o cmsisOperands) string {
		if s := o.both(0, graph.Int8, "INT8"); s != "" {
			return s
		}
		if int16 {
			return o.both(0, graph.Int16, "INT16")
		}
		return ""
	}
}

const kernelsDir = "tensorflow/lite/micro/kernels/"

// cmsisSpecialisations maps the builtin operators whose CMSIS-NN kernels
// TFLM registers by type to their rules (cmsis_nn/<file>.cc @90b983c,
// Register_*).
var cmsisSpecialisations = map[string]cmsisSpecialised{
	"ADD":               {kernelsDir + "add.h", intTypes(true)},              // add.cc EvalAdd: EvalAddQuantized by the output's type
	"CONV_2D":           {kernelsDir + "conv.h", conv(true)},                 // conv.cc Eval, EvalInt8, EvalInt4, EvalInt16x8
	"DEPTHWISE_CONV_2D": {kernelsDir + "depthwise_conv.h", conv(false)},      // depthwise_conv.cc Eval, EvalInt8, EvalInt4, EvalInt16x8
	"FULLY_CONNECTED":   {kernelsDir + "fully_connected.h", conv(false)},     // fully_connected.cc Eval, EvalInt8, EvalInt4, EvalInt16
	"MUL":               {kernelsDir + "mul.h", intTypes(false)},             // mul.cc Eval: EvalQuantized for INT8
	"MAXIMUM":           {kernelsDir + "maximum_minimum.h", intTypes(false)}, // maximum_minimum.cc EvalMaximum: arm_maximum_s8 for an INT8 output
	"MINIMUM":           {kernelsDir + "maximum_minimum.h", intTypes(false)}, // EvalMinimum: arm_minimum_s8
	"PAD":               {kernelsDir + "pad.h", intTypes(false)},             // pad.cc PadEval: PadEvalInt8
	"AVERAGE_POOL_2D":   {kernelsDir + "pooling.h", intTypes(true)},          // pooling.cc AverageEval: AverageEvalQuantized
	"MAX_POOL_2D":       {kernelsDir + "pooling.h", intTypes(true)},          // pooling.cc MaxEval: MaxEvalQuantized
	"BATCH_MATMUL":      {kernelsDir + "batch_matmul.h", intTypes(true)},     // batch_matmul.cc Eval: EvalInt8, EvalInt16
	"SOFTMAX": {kernelsDir + "softmax.h", func(o cmsisOperands) string { // softmax.cc SoftmaxEval
		switch {
		case o.in(0) == graph.Int8 && o.out() == graph.Int8:
			return "INT8"
		case o.in(0) == graph.Int8 && o.out() == graph.Int16:
			return "INT8_INT16"
		case o.in(0) == graph.Int16 && o.out() == graph.Int16:
			return "INT16"
		}
		return ""
	}},
	"SVDF": {kernelsDir + "svdf.h", func(o cmsisOperands) string { // svdf.cc EvalSvdf: EvalIntegerSVDF for INT8 and INT16 time weights
		if t := o.in(2); t == graph.Int8 || t == graph.Int16 {
			return "INT8"
		}
		return ""
	}},
	"TRANSPOSE": {kernelsDir + "transpose.h", func(o cmsisOperands) string { // transpose.cc TransposeEval: TransposeEvalInt8
		perm := o.tensor(o.op.Inputs, 1)
		if perm == nil || len(perm.Shape) != 1 || perm.Shape[0] > 4 {
			return ""
		}
		return o.both(0, graph.Int8, "INT8")
	}},
	"TRANSPOSE_CONV": {kernelsDir + "transpose_conv.h", func(o cmsisOperands) string { // transpose_conv.cc Eval: EvalQuantizedPerChannel for INT8
		return o.both(2, graph.Int8, "INT8")
	}},
}

// cmsisRegistration returns the type-specialised registration of
// operator op of subgraph sg, and the header that declares it, where
// cmsisSpecialisations allows one; ok false otherwise.
func cmsisRegistration(sg *graph.Subgraph, op *graph.Op) (register, header string, ok bool) {
	if op.Code == graph.Custom {
		return "", "", false
	}
	s, found := cmsisSpecialisations[op.CodeName]
	if !found {
		return "", "", false
	}
	suffix := s.pick(cmsisOperands{sg, op})
	if suffix == "" {
		return "", "", false
	}
	return tflmRegisterPrefix + op.CodeName + "_" + suffix + "()", s.header, true
}
