package kernels

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// cmsisDir is where TFLM's CMSIS-NN kernels live, relative to the
// tflite-micro repository.
const cmsisDir = microDir + "cmsis_nn/"

// cmsisContracts registers, on l (CMSIS-NN on one code path, l.isa), the
// in-place contracts of the operators TFLM's cmsis_nn kernels replace.
// Each kernel dispatches by type (and shape) between CMSIS-NN's functions
// and TFLM's reference code; where it runs reference code, the reference
// contract holds, and the rule says when.
func cmsisContracts(l *Library) {
	float := func(c placeCtx) bool { return c.in.Type == graph.Float32 }
	referenceWhen(l, graph.Conv2D, float, cmsisDir+"conv.cc Eval (FLOAT32: reference_ops::Conv, lines 432-445)")
	referenceWhen(l, graph.DepthwiseConv2D, float, cmsisDir+"depthwise_conv.cc Eval (FLOAT32: reference_ops::DepthwiseConv, lines 392-404)")
	referenceWhen(l, graph.AveragePool2D, float, cmsisDir+"pooling.cc AverageEval (FLOAT32: AveragePoolingEvalFloat, lines 212-214)")
	referenceWhen(l, graph.MaxPool2D, float, cmsisDir+"pooling.cc MaxEval (FLOAT32: MaxPoolingEvalFloat, lines 273-275)")
	// ADD and MUL: FLOAT32 and INT32 run the reference kernels; INT8 and
	// INT16 run reference broadcasting (BroadcastAdd4DSlow,
	// BroadcastMul4DSlow: a loop over the output's indices in order) when
	// the inputs' shapes differ (ProcessBroadcastShapes), and CMSIS-NN's
	// elementwise functions otherwise.
	referenceArith := func(c placeCtx) bool {
		switch c.in.Type {
		case graph.Float32, graph.Int32:
			return true
		case graph.Int8, graph.Int16:
			return broadcasts(c.sg, c.op)
		}
		return false
	}
	referenceWhen(l, opAdd, referenceArith, cmsisDir+"add.cc EvalAdd (FLOAT32, INT32: reference_ops::Add or "+
		"BroadcastAdd4DSlow, lines 206-246), EvalAddQuantizedInt8/Int16 (broadcast: BroadcastAdd4DSlow, lines 136-143, 175-182)")
	referenceWhen(l, opMul, referenceArith, cmsisDir+"mul.cc Eval (INT32: EvalMulQuantizedReference, FLOAT32: "+
		"EvalMulFloatReference, lines 120-125), EvalQuantized (broadcast: BroadcastMul4DSlow, lines 50-67)")
	// PAD and PADV2: INT8 runs arm_pad_s8; FLOAT32 (PadImageStyle or
	// Pad), INT16 and INT32 (Pad) the reference PadImpl.
	referencePad := func(c placeCtx) bool {
		return c.in.Type == graph.Float32 || c.in.Type == graph.Int16 || c.in.Type == graph.Int32
	}
	referenceWhen(l, opPad, referencePad, cmsisDir+"pad.cc PadEval (FLOAT32, INT16, INT32: reference_ops::PadImageStyle or Pad, lines 88-127)")
	referenceWhen(l, opPadV2, referencePad, cmsisDir+"pad.cc PadEval (FLOAT32, INT16, INT32: reference_ops::PadImageStyle or Pad, lines 88-127)")
	// CMSIS-NN's own functions, read per code path.
	cmsisConvContracts(l)
	cmsisDepthwiseContracts(l)
	cmsisElementwiseContracts(l)
}

// referenceWhen registers, on l, the reference kernels' contracts of an
// operator, applying only where when says the CMSIS-NN kernel runs that
// reference code (source says where it does so).
func referenceWhen(l *Library, code graph.Opcode, when func(placeCtx) bool, source string) {
	for _, r := range tflmReference.contracts[code] {
		place := r.place
		c := r.Contract
		c.Source = tflmCommit + ": " + source + "; " + c.Source
		l.addRule(c, func(pc placeCtx) (int64, int64, bool) {
			if !when(pc) {
				return 0, 0, false
			}
			return place(pc)
		})
	}
}

// broadcasts reports whether a binary operator's two inputs have
// different shapes once extended to one rank with leading 1s: TFLM's
// ProcessBroadcastShapes (reference/process_broadcast_shapes.h 40-56)
// returns true then, and the kernels broadcast.
func broadcasts(sg *graph.Subgraph, op *graph.Op) bool {
	a, b := operand(sg, op.Inputs, 0), operand(sg, op.Inputs, 1)
	if a == nil || b == nil {
		return true
	}
	return !slices.Equal(extended(a.Shape, len(b.Shape)), extended(b.Shape, len(a.Shape)))
}

// extended returns shape with leading 1s up to rank n.
func extended(shape []int32, n int) []int32 {
	if len(shape) >= n {
		return shape
	}
	out := make([]int32, n-len(shape), n)
	for i := range out {
		out[i] = 1
	}
	return append(out, shape...)
}
