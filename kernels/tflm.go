package kernels

import "github.com/heliac/heliac/graph"

// TFLite builtin operator codes the contracts name (schema.fbs,
// BuiltinOperator).
const (
	opAdd       graph.Opcode = 0
	opAvgPool   graph.Opcode = 1
	opConv      graph.Opcode = 3
	opDepthwise graph.Opcode = 4
	opMaxPool   graph.Opcode = 17
	opLogistic  graph.Opcode = 14
	opMul       graph.Opcode = 18
	opRelu      graph.Opcode = 19
	opRelu6     graph.Opcode = 21
	opSoftmax   graph.Opcode = 25
	opTanh      graph.Opcode = 28
	opPad       graph.Opcode = 34
	opSub       graph.Opcode = 41
	opMaximum   graph.Opcode = 55
	opMinimum   graph.Opcode = 57
	opPadV2     graph.Opcode = 60
	opLeakyRelu graph.Opcode = 98
	opQuantize  graph.Opcode = 114
	opHardSwish graph.Opcode = 117
)

// tflmCommit is the TensorFlow Lite Micro commit the contracts were read
// at: the one ../shared/bench and tools/tflm_run are built from.
const tflmCommit = "tflite-micro@90b983c"

// Paths of the kernel sources, relative to the tflite-micro repository.
const (
	refDir    = "tensorflow/lite/kernels/internal/reference/"
	intRefDir = refDir + "integer_ops/"
	microDir  = "tensorflow/lite/micro/kernels/"
)

// tflmReference holds TFLM's reference kernels' contracts. Each was read
// from the kernel's evaluation path for every type TFLM accepts where
// input and output have one element size: every exact one but SOFTMAX is
// a single loop over the flat index i that reads input element i (and, for
// binary operators, the other input at its broadcast index) and then
// writes output element i, reading no input element after the output
// element at its index is written (SOFTMAX reads each row whole before
// such a loop over the row). Broadcasting binary kernels
// (BroadcastAdd6DSlow and kin) walk the output's indices in order and read
// an input of the output's shape at the same index, so an input of the
// output's own shape may be written over whichever input broadcasts.
var tflmReference = &Library{Name: TFLMReference, contracts: map[graph.Opcode][]rule{}, copies: map[graph.Opcode][]Contract{}}

func init() {
	binary := func(op graph.Opcode, name, source string) {
		for in := 0; in < 2; in++ {
			tflmReference.add(Contract{Op: op, Name: name, Input: in, Output: 0, Overlap: Exact, Source: source})
		}
	}
	unary := func(op graph.Opcode, name, source string) {
		tflmReference.add(Contract{Op: op, Name: name, Input: 0, Output: 0, Overlap: Exact, Source: source})
	}
	binary(opAdd, "ADD", tflmCommit+": "+microDir+"add.cc EvalAdd/EvalAddQuantized; "+
		intRefDir+"add.h ElementWise (loop at line 70: output_data[i] = binary_func(input1_data[i], input2_data[i])); "+
		refDir+"add.h Add (line 42) and AddElementwise (line 63)")
	binary(opSub, "SUB", tflmCommit+": "+microDir+"sub.cc EvalSub/EvalSubQuantized; "+
		refDir+"sub.h SubElementwise (loop at line 131) and BroadcastSubCommon")
	binary(opMul, "MUL", tflmCommit+": "+microDir+"mul_common.cc EvalMulQuantizedReference/EvalMulFloatReference; "+
		intRefDir+"mul.h MulElementwise (loop at line 35); "+refDir+"mul.h (loops at lines 36, 62, 78)")
	unary(opRelu, "RELU", tflmCommit+": "+microDir+"activations_common.cc ReluFloat (loop at line 68); "+
		microDir+"activations.h ReluQuantized (loop at line 45)")
	unary(opRelu6, "RELU6", tflmCommit+": "+microDir+"activations_common.cc Relu6Float (loop at line 79); "+
		microDir+"activations.h Relu6Quantized (loop at line 73)")
	unary(opLogistic, "LOGISTIC", tflmCommit+": "+microDir+"logistic.cc LogisticEval; "+
		intRefDir+"logistic.h Logistic (loops at lines 37 and 82); "+refDir+"logistic.h Logistic (loops at lines 46, 74, 111)")
	unary(opTanh, "TANH", tflmCommit+": "+microDir+"tanh.cc TanhEval; "+
		intRefDir+"tanh.h Tanh (loops at lines 40 and 83); "+refDir+"tanh.h Tanh (loops at lines 34, 67, 73, 92)")
	unary(opHardSwish, "HARD_SWISH", tflmCommit+": "+microDir+"hard_swish.cc HardSwishEval; "+
		refDir+"hard_swish.h HardSwish (loops at lines 52 and 68)")
	unary(opLeakyRelu, "LEAKY_RELU", tflmCommit+": "+microDir+"leaky_relu_common.cc / leaky_relu.cc LeakyReluEval; "+
		refDir+"leaky_relu.h LeakyRelu (loop at line 30) and QuantizeLeakyRelu (loop at line 56)")
	// MAXIMUM and MINIMUM: every type TFLM takes (FLOAT32, INT8, INT16,
	// INT32, INT64) runs MaximumMinimumBroadcastSlow, one loop over the
	// flat index when the inputs' shapes are equal, else
	// BroadcastBinaryOpSimple, whose RunBinaryOp walks the output in order
	// and an input of the output's shape at the output's index (a
	// broadcast input through a zero stride, read once before the
	// innermost loop).
	minmax := func(op graph.Opcode, name, eval string) {
		binary(op, name, tflmCommit+": "+microDir+"maximum_minimum.cc "+eval+" and maximum_minimum.h TFLiteOperation "+
			"(lines 66-77); "+refDir+"maximum_minimum.h MaximumMinimumBroadcastSlow (loop at line 37: "+
			"output_data[i] = op(input1_data[i], input2_data[i])); "+refDir+"broadcast_loop.h RunBinaryOp "+
			"(innermost loops at lines 43, 49 and 55: output[i] = op(a[i], b[i]) or with a_0 or b_0 read before)")
	}
	minmax(opMaximum, "MAXIMUM", "Eval<kReference, MaximumOp> (lines 33-65, Register_MAXIMUM at 69-72)")
	minmax(opMinimum, "MINIMUM", "Eval<kReference, MinimumOp> (lines 33-65, Register_MINIMUM at 74-77)")
	// SOFTMAX with one element type for input and output (FLOAT32, INT8,
	// INT16; INT8 to INT16 has output elements twice the input's): each
	// row is read whole for its maximum (and, quantized, its sum) before
	// element i of the row is read again and output element i written;
	// the float and INT16 kernels keep the exponentials in the output and
	// then rewrite the row of the output alone. Rows follow one another.
	tflmReference.addRule(Contract{Op: opSoftmax, Name: "SOFTMAX", Input: 0, Output: 0, Overlap: Exact, Source: tflmCommit + ": " +
		microDir + "softmax.cc SoftmaxEval (lines 57-83) and SoftmaxQuantized (lines 32-55); " +
		refDir + "softmax.h Softmax for float (per row: maximum at lines 44-47, input_data read at 52 and " +
		"output_data written at 55, the output alone at 59-62), Softmax quantized (maximum at 95-98, sum at " +
		"100-113, read at 123-124, written at 140 or 145) and SoftmaxInt16 (maximum at 182-185, " +
		"SoftMaxCalculateExp reads input element c (line 155) for exp_results_Q015[c], the output, at 193-196; " +
		"the output alone at 219-229)"},
		exactWhen(func(c placeCtx) bool {
			t := c.in.Type
			return (t == graph.Float32 || t == graph.Int8 || t == graph.Int16) && c.out.Type == t
		}))
	// QUANTIZE from float is AffineQuantize, whose output is smaller than
	// its input: Exact's same element size leaves only requantization.
	unary(opQuantize, "QUANTIZE", tflmCommit+": "+microDir+"quantize_common.cc EvalQuantizeReference; "+
		refDir+"requantize.h Requantize (loops at lines 47 and 55)")

	// Overlaps with an offset (see End, Start, padPlacement and
	// quantizePlacement for the reasoning).
	//
	// PAD and PADV2 (constant padding) run PadEval for FLOAT32, INT8,
	// INT16 and INT32, every path through PadImpl with one element type T
	// for input and output (so a compiler must assume the two alias and
	// keep the loop's order): out_ptr steps through every output element
	// and in_ptr through the input, "*out_ptr++ = *in_ptr++" reading an
	// input element before writing over it; the padding value is read
	// once, before the loop. PadPrepare checks that the paddings are
	// constant and that every output dimension is its input dimension
	// plus its paddings. MIRROR_PAD reads its input backwards and has no
	// contract.
	pad := func(op graph.Opcode, name string) {
		tflmReference.add(Contract{Op: op, Name: name, Input: 0, Output: 0, Overlap: End, Source: tflmCommit + ": " +
			microDir + "pad.cc PadEval (line 28: PadImageStyle or Pad per type) and pad_common.cc PadPrepare " +
			"(lines 53-80: one type, constant paddings, output = input + paddings); " +
			refDir + "pad.h PadImpl (one forward sweep, lines 89-114: in_ptr and out_ptr at line 89, " +
			"*out_ptr++ = pad_value at line 106, *out_ptr++ = *in_ptr++ at line 108)"})
	}
	pad(opPad, "PAD")
	pad(opPadV2, "PADV2")
	// QUANTIZE from FLOAT32 to INT8 only: EvalQuantizeReference has no
	// FLOAT32 to UINT8 path at this commit (it returns an error), and an
	// INT16 output is not a character type, so a compiler may assume it
	// never aliases the float input and reorder reads after writes.
	tflmReference.add(Contract{Op: opQuantize, Name: "QUANTIZE", Input: 0, Output: 0, Overlap: Start, Source: tflmCommit + ": " +
		microDir + "quantize_common.cc EvalQuantizeReference (FLOAT32 to INT8 at lines 99-107); " +
		refDir + "quantize.h AffineQuantize (loop at line 43: input_data[i] read at line 44, " +
		"output_data[i] written at line 49)"})
	// Sliding windows: every type TFLM's reference kernels take with one
	// element type for input and output (INT8, INT16, FLOAT32; hybrid
	// convolutions are refused by TFLM) runs loops over batch, out_y,
	// out_x, then the output channel, reading the whole window of an
	// output element before writing it at Offset(output_shape, batch,
	// out_y, out_x, channel): the output is written in flat index order.
	sweep := func(op graph.Opcode, name, source string) {
		tflmReference.add(Contract{Op: op, Name: name, Input: 0, Output: 0, Overlap: Sweep, Source: tflmCommit + ": " + source})
	}
	sweep(opConv, "CONV_2D", microDir+"conv.cc ConvEval (reference_ops::Conv for FLOAT32, "+
		"reference_integer_ops::ConvPerChannel for INT8 and INT16); "+
		intRefDir+"conv.h ConvPerChannel (loops from line 72, output written at line 130; INT16 from line 184, "+
		"written at line 230); "+refDir+"conv.h Conv (loops from line 66, output written at line 102)")
	sweep(opDepthwise, "DEPTHWISE_CONV_2D", microDir+"depthwise_conv.cc DepthwiseConvEval "+
		"(reference_ops::DepthwiseConv, reference_integer_ops::DepthwiseConvPerChannel); "+
		intRefDir+"depthwise_conv.h DepthwiseConvPerChannel (loops from line 63, output channel "+
		"in_channel*depth_multiplier+m written at line 115; INT16 from line 160, written at line 200); "+
		refDir+"depthwiseconv_float.h DepthwiseConv (loops from line 56, written at line 86)")
	sweep(opAvgPool, "AVERAGE_POOL_2D", microDir+"pooling.cc AverageEval and pooling_common.cc "+
		"AveragePoolingEvalFloat/Quantized; "+intRefDir+"pooling.h AveragePool (loops from line 42, written "+
		"at line 77; INT16 from line 160, line 195); "+refDir+"pooling.h AveragePool (loops from line 42, line 73)")
	sweep(opMaxPool, "MAX_POOL_2D", microDir+"pooling.cc MaxEval and pooling_common.cc "+
		"MaxPoolingEvalFloat/Quantized; "+intRefDir+"pooling.h MaxPool (loops from line 105, written at "+
		"line 135; INT16 from line 223, line 253); "+refDir+"pooling.h MaxPool (loops from line 209, line 237)")
}
