package kernels

import "github.com/heliac/heliac/graph"

// cmsisNNAt opens a citation of CMSIS-NN's sources at the commit TFLM pins
// (cmsisnn.go); paths after it are relative to CMSIS-NN's root.
const cmsisNNAt = "CMSIS-NN@4ab83cc: "

// cmsisElementwiseContracts registers, on l, the in-place contracts of
// ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, PAD, PADV2, SOFTMAX, MAXIMUM and
// MINIMUM where TFLM's cmsis_nn kernel runs CMSIS-NN's own functions. Each
// was read on the three code paths (#if ARM_MATH_MVEI, which MVE builds
// reach first although they define ARM_MATH_DSP too; #if ARM_MATH_DSP; the
// portable C), tails included; none of these functions takes a restrict
// pointer but arm_memcpy_s8, whose source and destination must then not
// overlap at all. Every window below holds on all three paths, so the
// rules do not read l.isa; where a path would allow more, the comment says
// so. CMSIS-NN's loops write through int8_t or int16_t pointers of the
// input's own type (or copy with memcpy), so a compiler must assume input
// and output alias and keep the order the source gives.
//
// No contract (read at the same commits):
//
//   - FULLY_CONNECTED (fully_connected.cc: arm_fully_connected_s8/_s16/_s4,
//     arm_fully_connected_per_channel_s8, arm_convolve_1x1_s8_fast when the
//     output has more than two dimensions, line 289) and BATCH_MATMUL
//     (batch_matmul.cc: arm_batch_matmul_s8/_s16): arm_nn_vec_mat_mult_t_s8
//     and kin (called once per input row, arm_fully_connected_s8.c 75-97)
//     compute one to four outputs of a row from the whole input row
//     (arm_nn_vec_mat_mult_t_s8.c, lhs read from its start again for each
//     group of rhs rows, e.g. lines 306 and 367), so an output row may lie
//     only over input rows already finished; with one row (a batch of one,
//     the usual fully connected layer) that is no overlap at all. BATCH_MATMUL
//     also reads the right-hand matrix whole for every left-hand row and
//     reads left-hand rows again when the right-hand side broadcasts
//     (arm_batch_matmul_s8.c 70-76, 117-120), and on MVE writes the vector
//     sums of its columns to scratch first.
//   - SVDF (svdf.cc: arm_svdf_s8, arm_svdf_state_s16_s8): the input is
//     read whole by the feature matrix product into the state
//     (arm_svdf_s8.c 125-150) before the output is written from scratch at
//     the end (258-283), so the output could lie anywhere over the input;
//     no overlap of heliac's (exact, end, start, sweep) says "anywhere",
//     the reference kernel was not read for it, and input and output are
//     a frame of a streaming model, tens of bytes. Left for an overlap of
//     its own.
//   - UNIDIRECTIONAL_SEQUENCE_LSTM (unidirectional_sequence_lstm.cc:
//     arm_lstm_unidirectional_s8/_s16): each step reads its input row four
//     times (one per gate, arm_nn_lstm_step_s8.c 60-91) and the previous
//     output row as the hidden state, then writes its output row
//     (96-104): a row sweep with rows of other sizes, which no overlap of
//     heliac's describes; the reference kernel (lstm_eval.h) keeps the
//     hidden state in a variable tensor and was not read for it.
//   - TRANSPOSE_CONV (transpose_conv.cc: arm_transpose_conv_wrapper_s8):
//     with stride 2 or less and enough input channels it runs
//     arm_convolve_s8 over the input upsampled by the stride
//     (arm_transpose_conv_wrapper_s8.c 73-139), reading each input pixel
//     for up to filter_h × filter_w output pixels, otherwise it scatters
//     each input row into a rolling buffer of output rows
//     (arm_transpose_conv_s8.c 118-212); the output is stride_h × stride_w
//     times the input and grows ahead of it on both paths.
//   - TRANSPOSE (transpose.cc: arm_transpose_s8 for INT8): it reads the
//     input in the permuted order (arm_transpose_s8.c 126-158, and a
//     gather on MVE, 76-100), so an output element may land on an input
//     element still to be read; a permutation that keeps the order (of
//     dimensions of size 1) is a reshape, and one dimension is
//     arm_memcpy_s8 (189), whose operands must not overlap.
//   - SOFTMAX from INT8 to INT16 (arm_softmax_s8_s16): output elements are
//     twice the input's, which no overlap of heliac's describes for a
//     kernel that reads each row three times.
func cmsisElementwiseContracts(l *Library) {
	// ADD and MUL with one shape for both inputs (add.cc
	// EvalAddQuantizedInt8/Int16, mul.cc EvalQuantized: the elementwise
	// functions when ProcessBroadcastShapes says no broadcast): either
	// input may be written over, as by the reference kernels. Each path
	// reads elements i (or a block of 2 or 4 from i, the same bytes of
	// the other input) of both inputs before it writes output element i
	// (that block), and reads no element before i afterwards.
	sameShapes := func(c placeCtx) bool {
		return (c.in.Type == graph.Int8 || c.in.Type == graph.Int16) && !broadcasts(c.sg, c.op)
	}
	add := cmsisDir + "add.cc EvalAddQuantizedInt8 (arm_elementwise_add_s8, lines 144-158) and EvalAddQuantizedInt16 " +
		"(arm_elementwise_add_s16, lines 183-196); " + cmsisNNAt +
		"Source/BasicMathFunctions/arm_elementwise_add_s8.c (MVE: 4 lanes of each input loaded at lines 79-80, " +
		"stored at 101; DSP: 4 elements read at 128-129, written at 194, the tail by the C loop; C: loop at 204-225, " +
		"read at 208-209, written at 221) and arm_elementwise_add_s16.c (MVE: loaded at 82-83, stored at 100; " +
		"DSP and C: 2 elements read at 115-116, written at 138, the odd tail at 147-159)"
	mul := cmsisDir + "mul.cc EvalQuantized (arm_elementwise_mul_s8 at lines 70-80, arm_elementwise_mul_s16 at 81-92); " +
		cmsisNNAt + "Source/BasicMathFunctions/arm_elementwise_mul_s8.c (MVE: loaded at lines 73 and 76, stored at 88; " +
		"DSP: 4 read at 116-117, written at 154, the tail by the C loop; C: loop at 164-181, read at 168-169, " +
		"written at 177) and arm_elementwise_mul_s16.c (MVE: loaded at 74-75, stored at 84; DSP and C: 2 read at " +
		"102-103, written at 129, the odd tail at 139-148)"
	for in := range 2 {
		l.addRule(Contract{Op: opAdd, Name: "ADD", Input: in, Output: 0, Overlap: Exact, Source: tflmCommit + ": " + add}, exactWhen(sameShapes))
		l.addRule(Contract{Op: opMul, Name: "MUL", Input: in, Output: 0, Overlap: Exact, Source: tflmCommit + ": " + mul}, exactWhen(sameShapes))
	}

	// AVERAGE_POOL_2D: each path writes a channel only after reading
	// its whole window, in flat output order: C channel by channel,
	// as the reference kernels do (so the reference window); DSP a
	// pixel's every channel after reading its whole window; MVE blocks
	// of 16 (int8) or 8 (int16) channels, each after reading its window.
	// On DSP and MVE a write comes after every read that the reference
	// order puts before it, so the reference window holds there too
	// (they would allow a little more).
	quantized := func(c placeCtx) bool { return c.in.Type == graph.Int8 || c.in.Type == graph.Int16 }
	l.addRule(Contract{Op: opAvgPool, Name: "AVERAGE_POOL_2D", Input: 0, Output: 0, Overlap: Sweep, Source: tflmCommit + ": " +
		cmsisDir + "pooling.cc AverageEvalQuantized (arm_avgpool_s8 and _s16, lines 95-107; padding from PoolingPrepare, " +
		"lines 58-59); " + cmsisNNAt + "Source/PoolingFunctions/arm_avgpool_s8.c (MVE: 16 channels at a time, window " +
		"read at lines 138-161, stored at 218; DSP: the pixel's window summed into scratch at 293-315, written by " +
		"scale_q31_to_q7_and_clamp at 323; C: per channel, window read at 349-359, written at 371) and " +
		"arm_avgpool_s16.c (MVE: 8 channels at a time, read at 135-150, stored at 186; DSP: 229-251, written at 259; " +
		"C: 293-300, written at 312)"}, windowWhen(quantized, elementOrder))
	// MAX_POOL_2D: every path copies the window's first in-image
	// position into the output pixel (arm_memcpy_s8 for int8, memcpy
	// for int16) and then compares each further position with it in
	// place, so the pixel is written before the rest of its window is
	// read: a lag of one pixel, whose memcpy's operands also never
	// overlap. clamp_output then rewrites the batch's output only.
	l.addRule(Contract{Op: opMaxPool, Name: "MAX_POOL_2D", Input: 0, Output: 0, Overlap: Sweep, Source: tflmCommit + ": " +
		cmsisDir + "pooling.cc MaxEvalQuantized (arm_max_pool_s8 and _s16, lines 131-143); " + cmsisNNAt +
		"Source/PoolingFunctions/arm_max_pool_s8.c (every path: the first position copied into the output pixel by " +
		"arm_memcpy_s8 at line 218, the others compared into it by compare_and_replace_if_larger_q7 at 223, " +
		"lines 34-95; clamp_output over the batch's output at 232) and arm_max_pool_s16.c (memcpy at 202, " +
		"compare_and_replace_if_larger at 207, clamp_output at 216); Include/arm_nnsupportfunctions.h " +
		"arm_memcpy_s8 (restrict operands, lines 1741-1756)"}, windowWhen(quantized, 1))

	// PAD and PADV2 (INT8): arm_pad_s8 sweeps its output forward as
	// PadImpl does, but copies the input a run at a time with
	// arm_memcpy_s8 (restrict: memcpy without MVE), so no run's source
	// may overlap its destination (cmsisPadPlacement).
	pad := func(op graph.Opcode, name string) {
		l.addRule(Contract{Op: op, Name: name, Input: 0, Output: 0, Overlap: End, Source: tflmCommit + ": " +
			cmsisDir + "pad.cc PadEvalInt8 (the last four dimensions, lines 51-66; arm_pad_s8 at 68-69); " + cmsisNNAt +
			"Source/PadFunctions/arm_pad_s8.c (one forward sweep, lines 68-110: padding by arm_memset_s8 at 68, 73, " +
			"78, 91, 98, 103, 107, 110; the input by arm_memcpy_s8, a row at a time at 82 when the channels are not " +
			"padded, else a pixel at a time at 94); Include/arm_nnsupportfunctions.h arm_memcpy_s8 (restrict " +
			"operands, lines 1741-1756) and arm_memset_s8 (1221-1237)"}, cmsisPadPlacement)
	}
	pad(opPad, "PAD")
	pad(opPadV2, "PADV2")

	// SOFTMAX: FLOAT32 runs the reference kernel.
	referenceWhen(l, opSoftmax, func(c placeCtx) bool { return c.in.Type == graph.Float32 },
		cmsisDir+"softmax.cc SoftmaxEval (FLOAT32: reference_ops::Softmax, lines 98-104)")
	// SOFTMAX (INT8 to INT8, INT16 to INT16): each row is read whole for
	// its maximum and its sum before element i is read again and
	// written over (arm_softmax_s16 writes its exponentials to the
	// output in the second pass, each right after reading input element
	// i); rows follow one another.
	l.addRule(Contract{Op: opSoftmax, Name: "SOFTMAX", Input: 0, Output: 0, Overlap: Exact, Source: tflmCommit + ": " +
		cmsisDir + "softmax.cc SoftmaxEval (INT8: arm_softmax_s8 at lines 107-113; INT16: arm_softmax_s16 at " +
		"129-135); " + cmsisNNAt + "Source/SoftmaxFunctions/arm_softmax_s8.c (MVE, unless GCC 12.2: per row, the " +
		"maximum at lines 107-113, the sum at 119-148, then 4 elements read at 159 and stored at 184, the tail read " +
		"at 191 and written at 197-201; DSP and C: arm_nn_softmax_common_s8 at 209) and " +
		"arm_nn_softmax_common_s8.c (int8 output: read at line 127, written at 133 or 137), arm_softmax_s16.c " +
		"(every path: read at line 70, the exponential written to the output at 82, the last pass over the output " +
		"alone at 105-111)"}, exactWhen(func(c placeCtx) bool { return quantized(c) && c.out.Type == c.in.Type }))

	// MAXIMUM and MINIMUM: types other than INT8 run the reference
	// kernel (TFLiteOperation).
	notInt8 := func(c placeCtx) bool { return c.in.Type != graph.Int8 }
	referenceWhen(l, opMaximum, notInt8, cmsisDir+"maximum_minimum.cc EvalMaximum (FLOAT32, INT16, INT32, INT64: "+
		"TFLiteOperation, lines 67-78)")
	referenceWhen(l, opMinimum, notInt8, cmsisDir+"maximum_minimum.cc EvalMinimum (FLOAT32, INT16, INT32, INT64: "+
		"TFLiteOperation, lines 153-164)")
	// INT8 (at most 4 dimensions, as FillVariableShape takes them):
	// without broadcasting one loop over both inputs; with it, the input
	// that has the output's shape is walked in step with the output
	// (every dimension in which it broadcasts is one in which the other
	// does not), and a scalar other input is read once before the loop.
	minmax := func(op graph.Opcode, name, eval, file, noBroadcast, scalar, lines string) {
		for in := range 2 {
			l.addRule(Contract{Op: op, Name: name, Input: in, Output: 0, Overlap: Exact, Source: tflmCommit + ": " +
				cmsisDir + "maximum_minimum.cc " + eval + "; " + cmsisNNAt + "Source/BasicMathFunctions/" + file +
				" (" + noBroadcast + "; " + scalar + "; " + lines + ")"}, exactWhen(cmsisMinMaxInt8))
		}
	}
	minmax(opMaximum, "MAXIMUM", "EvalMaximum (INT8: arm_maximum_s8, lines 57-66)", "arm_maximum_s8.c",
		"arm_max_no_broadcast_s8, lines 43-71: MVE loads at 51 and 53, stores at 56; C reads at 63-64, writes at 65",
		"arm_max_scalar_s8, 73-99: the scalar read once at 77 or 90",
		"broadcasting loops at 133-251, each pointer advanced with the output's")
	minmax(opMinimum, "MINIMUM", "EvalMinimum (INT8: arm_minimum_s8, lines 143-152)", "arm_minimum_s8.c",
		"arm_min_no_broadcast_s8, lines 44-72: MVE stores at 56; C writes at 65",
		"arm_min_scalar_s8, 74-100: the scalar read once before the loop",
		"broadcasting loops at 134-252, each pointer advanced with the output's")
}

// windowWhen is the rule of a Sweep contract of the given lag
// (windowPlacement) that applies only where when says so.
func windowWhen(when func(placeCtx) bool, lag int64) placeFunc {
	return func(c placeCtx) (int64, int64, bool) {
		if !when(c) {
			return 0, 0, false
		}
		return windowPlacement(c.m, c.sg, c.op, c.in, c.out, lag)
	}
}

// cmsisMinMaxInt8 reports whether TFLM's cmsis_nn MAXIMUM or MINIMUM runs
// CMSIS-NN's function: INT8, every operand of at most four dimensions.
func cmsisMinMaxInt8(c placeCtx) bool {
	if c.in.Type != graph.Int8 || c.out.Type != graph.Int8 {
		return false
	}
	for _, id := range append(c.op.Inputs[:len(c.op.Inputs):len(c.op.Inputs)], c.op.Outputs...) {
		t := operand(c.sg, []graph.TensorID{id}, 0)
		if t == nil || len(t.Shape) > 4 {
			return false
		}
	}
	return true
}

// cmsisPadPlacement is padPlacement for arm_pad_s8 (INT8, at most four
// dimensions: PadEvalInt8 passes arm_pad_s8 the last four and would drop a
// fifth). Its forward sweep writes padding and input elements where
// PadImpl does, but copies the input a run at a time with arm_memcpy_s8: a
// row (width × channels) when the channels are not padded, else one pixel's
// channels. Each copy's destination precedes its source by the padding
// written before the run, g; memcpy's operands must not overlap, so with
// the input o bytes after the output each run needs o >= g + run length
// (o = g would copy the last run onto itself, but an earlier run with less
// padding before it would then overlap its copy unless a whole run of
// padding lies between them; the window is kept one interval). g grows
// along the sweep, so the last run decides: Lo is padPlacement's (its g)
// plus one run. On MVE arm_memcpy_s8 is a forward loop of 16-byte loads
// and stores that would take any o >= g, but its operands are restrict all
// the same.
func cmsisPadPlacement(c placeCtx) (lo, hi int64, ok bool) {
	if c.in.Type != graph.Int8 || len(c.in.Shape) > 4 {
		return 0, 0, false
	}
	lo, hi, ok = padPlacement(c.m, c.sg, c.op, c.in, c.out)
	if !ok {
		return 0, 0, false
	}
	rank := len(c.in.Shape)
	last := func(t *graph.Tensor, i int) int64 { return int64(t.Shape[rank-1-i]) }
	run := last(c.in, 0)
	if rank >= 2 && last(c.out, 0) == last(c.in, 0) {
		run *= last(c.in, 1)
	}
	if lo += run; lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
