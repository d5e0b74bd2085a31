package kernels

import (
	"maps"
	"sync"

	"github.com/heliac/heliac/graph"
)

// CMSISNN is the name of TFLM's kernels backed by Arm's CMSIS-NN library:
// tensorflow/lite/micro/kernels/cmsis_nn at tflite-micro 90b983c, with
// CMSIS-NN at 4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae, the commit TFLM
// pins (tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn_download.sh:41).
// Every rule below was read at those commits; CMSIS-NN paths are relative
// to its root.
const CMSISNN = "cmsis-nn"

// cmsisNNOps are the builtin operators TFLM's cmsis_nn directory replaces
// with kernels of its own (each file's Register_* functions); every
// other operator runs TFLM's reference kernel.
var cmsisNNOps = []graph.Opcode{
	0,                     // ADD, add.cc
	graph.AveragePool2D,   // pooling.cc
	graph.Conv2D,          // conv.cc
	graph.DepthwiseConv2D, // depthwise_conv.cc
	opFullyConnected,      // fully_connected.cc
	graph.MaxPool2D,       // pooling.cc
	18,                    // MUL, mul.cc
	25,                    // SOFTMAX, softmax.cc
	opSVDF,                // svdf.cc
	34,                    // PAD, pad.cc
	39,                    // TRANSPOSE, transpose.cc
	opLSTM,                // unidirectional_sequence_lstm.cc
	55,                    // MAXIMUM, maximum_minimum.cc
	57,                    // MINIMUM, maximum_minimum.cc
	60,                    // PADV2, pad.cc
	graph.TransposeConv,   // transpose_conv.cc
	opBatchMatmul,         // batch_matmul.cc
}

// opBatchMatmul is BATCH_MATMUL (schema.fbs, BuiltinOperator).
const opBatchMatmul graph.Opcode = 126

// cmsisLibs are CMSIS-NN on each code path (cmsisOn), built once each,
// after the package's init functions filled tflmReference.
var cmsisLibs = [...]func() *Library{
	sync.OnceValue(func() *Library { return newCMSISNN(NoDSP) }),
	sync.OnceValue(func() *Library { return newCMSISNN(DSP) }),
	sync.OnceValue(func() *Library { return newCMSISNN(MVE) }),
}

// cmsisOn returns CMSIS-NN on code path isa.
func cmsisOn(isa ISA) *Library {
	if int(isa) >= len(cmsisLibs) {
		isa = NoDSP
	}
	return cmsisLibs[isa]()
}

// newCMSISNN builds CMSIS-NN on one code path from the reference library:
// the operators CMSIS-NN kernels replace get CMSIS-NN's contracts
// (cmsisContracts: where a replaced kernel runs reference code, that
// code's contract) and scratch rules; the others keep the reference
// kernels' contracts and rules.
func newCMSISNN(isa ISA) *Library {
	l := &Library{Name: CMSISNN, isa: isa, onPath: true, contracts: maps.Clone(tflmReference.contracts), copies: tflmReference.copies,
		scratch: maps.Clone(tflmReference.scratch), customScratch: tflmReference.customScratch}
	for _, op := range cmsisNNOps {
		delete(l.contracts, op)
		delete(l.scratch, op)
	}
	cmsisContracts(l)
	l.scratch[graph.Conv2D] = cmsisConv
	l.scratch[graph.DepthwiseConv2D] = cmsisDepthwise
	l.scratch[opFullyConnected] = cmsisFullyConnected
	l.scratch[graph.AveragePool2D] = cmsisAveragePool
	l.scratch[opSVDF] = tflmReference.scratch[opSVDF]
	l.scratch[graph.TransposeConv] = cmsisTransposeConv
	l.scratch[opBatchMatmul] = cmsisBatchMatmul
	l.scratch[opLSTM] = cmsisLSTM
	return l
}

// dims is CMSIS-NN's cmsis_nn_dims: n, h, w, c.
type dims struct{ n, h, w, c int64 }

// convGeometry is what CMSIS-NN's size functions read of
// cmsis_nn_conv_params: strides, padding (as TFLM computes it:
// tensorflow/lite/kernels/padding.h, half the total, rounded down) and
// dilation.
type convGeometry struct{ strideW, strideH, padW, padH, dilW, dilH int64 }

// geometry reads an operator's window into a convGeometry for an input
// and output of the given heights and widths and a filter of fh × fw.
func geometry(w *graph.Window, in, out dims, fh, fw int64) convGeometry {
	g := convGeometry{strideW: int64(w.StrideW), strideH: int64(w.StrideH), dilW: int64(w.DilationW), dilH: int64(w.DilationH)}
	g.padH, _ = WindowPadding(w.Padding, in.h, fh, g.strideH, g.dilH, out.h)
	g.padW, _ = WindowPadding(w.Padding, in.w, fw, g.strideW, g.dilW, out.w)
	return g
}

// nhwc reads a rank-4 tensor's dimensions.
func nhwc(t *graph.Tensor) dims { return dims{dim(t, 0), dim(t, 1), dim(t, 2), dim(t, 3)} }

// cmsisConvS8 is arm_convolve_wrapper_s8_get_buffer_size
// (Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c
// 138-169, with its _dsp 198-223 and _mve 171-196 forms), built with GCC:
// a 1x1 convolution (no padding, unit dilation, in.c == filter c) needs
// none (the DSP fast path's buffer exists only under Arm Compiler 6,
// 43-51); a 1xN one (input and filter one row high, unit horizontal
// dilation, stride.w × in.c a multiple of 4) needs the general size except
// on MVE (cmsisConv1xNMVE; a stride of 0, which CMSIS-NN would divide by,
// gets the general size); the general path needs cmsisIm2col. in.c, not
// the filter's c, sizes grouped convolutions.
func cmsisConvS8(isa ISA, g convGeometry, in, f, out dims) int64 {
	if g.padW == 0 && g.padH == 0 && f.w == 1 && f.h == 1 && g.dilW == 1 && g.dilH == 1 && in.c == f.c {
		return 0
	}
	if in.h == 1 && g.dilW == 1 && f.h == 1 && (g.strideW*in.c)%4 == 0 && in.c == f.c && isa == MVE && g.strideW > 0 {
		if n, ok := cmsisConv1xNMVE(g, in, f, out); ok {
			return n
		}
	}
	return cmsisIm2col(isa, f.w*f.h*in.c)
}

// cmsisIm2col is arm_convolve_s8_get_buffer_size
// (arm_convolve_get_buffer_sizes_s8.c 84-104) for cols = fw × fh × in.c:
// two im2col columns of int16, cols rounded up to 4, without MVE; four
// columns of 16-byte lanes with it.
func cmsisIm2col(isa ISA, cols int64) int64 {
	if isa == MVE {
		return 4 * 16 * ((cols + 15) / 16)
	}
	return 4 * ((cols + 3) / 4 * 4)
}

// cmsisConv1xNMVE is arm_convolve_1_x_n_s8_get_buffer_size_mve
// (arm_convolve_get_buffer_sizes_s8.c 53-82): the larger of the left edge
// (filter width and left padding, in input channels) and the right edge;
// false when its count of padded and unpadded outputs does not add up, and
// the general size applies. Go's % truncates toward zero as C's does.
func cmsisConv1xNMVE(g convGeometry, in, f, out dims) (int64, bool) {
	total := (out.w-1)*g.strideW + f.w - in.w
	asym := total % 2
	var right, left int64
	if g.padW+asym != 0 {
		right = max(1, (g.padW+asym+g.strideW-1)/g.strideW)
	}
	if g.padW != 0 {
		left = max(1, (g.padW+g.strideW-1)/g.strideW)
	}
	if right+max(out.w-(right+left), 0)+left != out.w {
		return 0, false
	}
	padLeft := g.padW * in.c
	padRight := padLeft
	if asym != 0 {
		padRight = right * in.c
	}
	return max(f.w*in.c+padLeft, f.w*in.c-in.c+padRight), true
}

// cmsisConv is CONV_2D (tensorflow/lite/micro/kernels/cmsis_nn/conv.cc
// Prepare 45-180): INT8 input, with INT8 filters or packed INT4 ones
// (the s8 size either way, 154-156), asks for cmsisConvS8; INT16 input for
// arm_convolve_wrapper_s16_get_buffer_size (157-161;
// arm_convolve_get_buffer_sizes_s16.c 43-79: 4 × fh × fw × in.c without
// MVE, 64 per started 8 columns with it); each only when not 0 (164-169).
// FLOAT32 runs the reference kernel, which asks for nothing.
func cmsisConv(c scratchCtx) []int64 {
	inT, fT, outT := c.in(0), c.in(1), c.out()
	if inT == nil || fT == nil || outT == nil || c.op.Window == nil {
		return nil
	}
	in, out := nhwc(inT), nhwc(outT)
	f := dims{1, dim(fT, 1), dim(fT, 2), dim(fT, 3)}
	g := geometry(c.op.Window, in, out, f.h, f.w)
	var n int64
	switch {
	case inT.Type == graph.Int8 && (fT.Type == graph.Int8 || fT.Type == graph.Int4):
		n = cmsisConvS8(c.t.ISA, g, in, f, out)
	case inT.Type == graph.Int16:
		cols := in.c * f.w * f.h
		if c.t.ISA == MVE {
			n = 4 * 2 * 8 * ((cols + 7) / 8)
		} else {
			n = 4 * cols
		}
	}
	return positive(n)
}

// cmsisDepthwise is DEPTHWISE_CONV_2D (cmsis_nn/depthwise_conv.cc Prepare
// 58-201), for INT8 input only (140): with INT8 filters
// arm_depthwise_conv_wrapper_s8_get_buffer_size
// (Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c
// 88-116), with INT4 ones the _s4 form
// (arm_depthwise_conv_get_buffer_sizes_s4.c 52-66), requested when not 0
// (188-193). Both size the "opt" kernel, taken when in.c == out.c (a
// multiplier of 1), one batch and unit dilation: int16 columns of
// in.c × fw × fh on DSP (70-73), 4 × 124 × fw × fh on MVE (64-68), none
// without DSP for s8 but the DSP size for s4; s8 without MVE takes the 3x3
// kernel, which needs none, for a 3x3 filter padded by at most 1. On MVE,
// an s8 depthwise convolution with one input channel and more than one
// output channel (the threshold under GCC, Include/arm_nnsupportfunctions.h
// 83-87) runs as a convolution: its size plus the filter transposed
// (43-62). TFLM leaves that convolution's stride unset in Prepare (169-173);
// heliac uses the operator's, which the kernel runs with.
func cmsisDepthwise(c scratchCtx) []int64 {
	inT, fT, outT := c.in(0), c.in(1), c.out()
	if inT == nil || fT == nil || outT == nil || c.op.Window == nil || inT.Type != graph.Int8 {
		return nil
	}
	in, out := nhwc(inT), nhwc(outT)
	f := dims{1, dim(fT, 1), dim(fT, 2), out.c}
	g := geometry(c.op.Window, in, out, f.h, f.w)
	isa := c.t.ISA
	opt := in.c == out.c && in.n == 1 && g.dilW == 1 && g.dilH == 1
	var n int64
	switch fT.Type {
	case graph.Int8:
		if isa == MVE && in.c == 1 && out.c > 1 {
			conv := dims{f.c, f.h, f.w, f.n}
			n = cmsisConvS8(MVE, g, in, conv, out) + f.c*f.h*f.w*f.n
			break
		}
		switch {
		case !opt:
		case isa == MVE:
			n = 4 * 124 * f.w * f.h
		case f.w == 3 && f.h == 3 && g.padH <= 1 && g.padW <= 1:
		case isa == DSP:
			n = 2 * in.c * f.w * f.h
		}
	case graph.Int4:
		switch {
		case !opt:
		case isa == MVE:
			n = 4 * 124 * f.w * f.h
		default:
			n = 2 * in.c * f.w * f.h
		}
	}
	return positive(n)
}

// cmsisFullyConnected is FULLY_CONNECTED (cmsis_nn/fully_connected.cc
// Prepare 54-188) as TFLM builds it by default (KERNELS_OPTIMIZED_FOR_SPEED,
// tools/make/Makefile:89) with GCC. INT8 input and filters only (INT16 and
// INT4 filters ask for none, 124-127): an output of rank 3 or 4 whose
// accumulation depth is a multiple of 4 runs as a 1x1 convolution (128-147)
// and, with a per-tensor quantized filter (one scale), asks for an int32
// multiplier and shift per output channel (134-140) (the 1x1 kernel's own
// buffer exists only under Arm Compiler 6); otherwise
// arm_fully_connected_s8_get_buffer_size
// (Source/FullyConnectedFunctions/arm_fully_connected_get_buffer_sizes_s8.c
// 42-60: an int32 per output channel on MVE, none otherwise), which goes
// to persistent memory instead when the filter and bias are constant
// (153-170).
func cmsisFullyConnected(c scratchCtx) []int64 {
	inT, fT, outT := c.in(0), c.in(1), c.out()
	if inT == nil || fT == nil || outT == nil || inT.Type != graph.Int8 || fT.Type != graph.Int8 || len(fT.Shape) == 0 || len(outT.Shape) == 0 {
		return nil
	}
	accum := dim(fT, len(fT.Shape)-1)
	depth := dim(outT, len(outT.Shape)-1)
	if len(outT.Shape) > 2 && accum%4 == 0 {
		if q := fT.Quantization; q == nil || len(q.Scale) <= 1 {
			return []int64{8 * depth}
		}
		return nil
	}
	if c.t.ISA != MVE {
		return nil
	}
	bias := c.in(2)
	if c.m.HasData(fT) && (bias == nil || c.m.HasData(bias)) {
		return nil
	}
	return positive(4 * depth)
}

// cmsisAveragePool is AVERAGE_POOL_2D (cmsis_nn/pooling.cc AveragePrepare
// 160-197): for INT8 and INT16, arm_avgpool_s8/s16_get_buffer_size
// (Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c and _s16.c
// 42-67): an int32 per channel on DSP without MVE, none otherwise.
func cmsisAveragePool(c scratchCtx) []int64 {
	in, out := c.in(0), c.out()
	if in == nil || out == nil || (in.Type != graph.Int8 && in.Type != graph.Int16) || c.t.ISA != DSP {
		return nil
	}
	return positive(4 * dim(out, 3))
}

// cmsisTransposeConv is TRANSPOSE_CONV (cmsis_nn/transpose_conv.cc
// Prepare 157-300). INT8 input asks for two buffers, even empty ones
// (239-252): arm_transpose_conv_s8_get_buffer_size and
// arm_transpose_conv_s8_get_reverse_conv_buffer_size
// (Source/ConvolutionFunctions/arm_transpose_conv_get_buffer_sizes_s8.c
// 51-127). With strides of at most 2 and more than 16 input channels the
// kernel runs as a convolution over the upsampled input (the general
// convolution size of the input's channels) and the filter reversed (its
// elements); otherwise it accumulates int32 output rows: ((in.w − 1) ×
// stride.w + max(fw, stride.h)) × out.c × max(fh, stride.h) × 4, with
// stride.h in the width term as CMSIS-NN writes it, and no second buffer.
// INT16 input asks what the reference kernel asks (256-262, 131-140).
func cmsisTransposeConv(c scratchCtx) []int64 {
	fT, inT, outT := c.in(1), c.in(2), c.out()
	if fT == nil || inT == nil || outT == nil {
		return nil
	}
	switch inT.Type {
	case graph.Int16:
		return tflmReference.scratch[graph.TransposeConv](c)
	case graph.Int8:
	default:
		return nil
	}
	if c.op.Window == nil {
		return nil
	}
	in, out := nhwc(inT), nhwc(outT)
	f := dims{dim(fT, 0), dim(fT, 1), dim(fT, 2), dim(fT, 3)}
	sw, sh := int64(c.op.Window.StrideW), int64(c.op.Window.StrideH)
	if sw <= 2 && sh <= 2 && in.c > 16 {
		return []int64{cmsisIm2col(c.t.ISA, f.w*f.h*in.c), in.c * f.w * f.h * f.n}
	}
	return []int64{((in.w-1)*sw + max(f.w, sh)) * out.c * max(f.h, sh) * 4, 0}
}

// cmsisBatchMatmul is BATCH_MATMUL (cmsis_nn/batch_matmul.cc Prepare
// 189-335): for INT8, arm_fully_connected_s8_get_buffer_size of the
// output's last dimension (305-312): an int32 each on MVE, none
// otherwise.
func cmsisBatchMatmul(c scratchCtx) []int64 {
	in, out := c.in(0), c.out()
	if in == nil || out == nil || in.Type != graph.Int8 || c.t.ISA != MVE || len(out.Shape) == 0 {
		return nil
	}
	return positive(4 * dim(out, len(out.Shape)-1))
}

// cmsisLSTM is UNIDIRECTIONAL_SEQUENCE_LSTM
// (cmsis_nn/unidirectional_sequence_lstm.cc Prepare 335-422): with an
// INT16 cell state (INT8 or INT16 activations) three buffers of batch ×
// state int16 (396-407, 412-419), otherwise the reference kernel's four.
func cmsisLSTM(c scratchCtx) []int64 {
	state, cell := c.in(18), c.in(19)
	if state == nil || cell == nil {
		return nil
	}
	if cell.Type == graph.Int16 {
		n := flat(state) * 2
		return []int64{n, n, n}
	}
	return tflmReference.scratch[opLSTM](c)
}

// positive returns n as the one request, or none when it is not positive.
func positive(n int64) []int64 {
	if n <= 0 {
		return nil
	}
	return []int64{n}
}
