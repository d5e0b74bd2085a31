package traffic

import (
	"math"
	"math/bits"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// opFullyConnected is FULLY_CONNECTED's builtin code (schema.fbs,
// BuiltinOperator), which graph does not name.
const opFullyConnected graph.Opcode = 9

// operandReads returns the bytes one run of op (in subgraph sg) reads of
// its input operand k, whose bytes are n: n times repeats' fraction,
// rounded down, at most math.MaxInt64.
func operandReads(sg *graph.Subgraph, op *graph.Op, k int, n int64) int64 {
	num, den := repeats(sg, op, k)
	return mulDiv(n, num, den)
}

// repeats returns how many times one run of op reads the bytes of its
// input operand k, as the fraction num/den: 1 for every operand but
// these, where the loops of TFLM's reference kernels give the count
// exactly from the shapes (tflite-micro 90b983c):
//
//   - CONV_2D (tensorflow/lite/kernels/internal/reference/integer_ops/conv.h,
//     ConvPerChannel; reference/conv.h Conv for FLOAT32) and
//     DEPTHWISE_CONV_2D (integer_ops/depthwise_conv.h,
//     DepthwiseConvPerChannel; reference/depthwiseconv_float.h) loop over
//     batch, out_y and out_x, and for each output pixel over the whole
//     filter and bias: the filter is read once per output pixel, less the
//     taps that fall in the padding (the loops skip them, `if
//     (!is_point_inside_image) continue`), the bias once per output pixel.
//     Their input is counted as each pixel's window read once, the taps
//     inside the image: about filter_h*filter_w/(stride_h*stride_w) times.
//     The reference kernels load a window element again for every output
//     channel it feeds (conv.h's out_channel loop, depthwise_conv.h's
//     depth multiplier); that is left out, so the input's figure stays a
//     lower bound.
//   - FULLY_CONNECTED (integer_ops/fully_connected.h,
//     FullyConnectedPerChannel; reference/fully_connected.h for FLOAT32)
//     reads its filter and bias once per batch row (the output's flat size
//     over its last dimension); its input is counted once.
//
// An operator whose shapes or options do not fit these loops (not 4-D, no
// window, an output size TFLM's padding does not give) counts 1.
func repeats(sg *graph.Subgraph, op *graph.Op, k int) (num, den int64) {
	switch op.Code {
	case graph.Conv2D, graph.DepthwiseConv2D:
		if k <= 2 {
			if num, den, ok := windowRepeats(sg, op, k); ok {
				return num, den
			}
		}
	case opFullyConnected:
		if k == 1 || k == 2 {
			if rows, ok := batchRows(sg, op); ok {
				return rows, 1
			}
		}
	}
	return 1, 1
}

// windowRepeats is repeats for operand k (0 input, 1 filter, 2 bias) of a
// CONV_2D or DEPTHWISE_CONV_2D; false when the shapes do not fit.
func windowRepeats(sg *graph.Subgraph, op *graph.Op, k int) (num, den int64, ok bool) {
	w := op.Window
	in, filter, out := shape(sg, op.Inputs, 0), shape(sg, op.Inputs, 1), shape(sg, op.Outputs, 0)
	if w == nil || len(in) != 4 || len(filter) != 4 || len(out) != 4 || in[0] != out[0] {
		return 0, 0, false
	}
	batches, inH, inW, outH, outW := int64(out[0]), int64(in[1]), int64(in[2]), int64(out[1]), int64(out[2])
	fh, fw := int64(filter[1]), int64(filter[2])
	padH, okH := kernels.WindowPadding(w.Padding, inH, fh, int64(w.StrideH), int64(w.DilationH), outH)
	padW, okW := kernels.WindowPadding(w.Padding, inW, fw, int64(w.StrideW), int64(w.DilationW), outW)
	if !okH || !okW || inH*inW == 0 || batches < 0 {
		return 0, 0, false
	}
	// Taps inside the image, over every output pixel: the rows' and the
	// columns' counts multiply, as the test is on each separately.
	taps := satMul(taps(inH, fh, int64(w.StrideH), int64(w.DilationH), padH, outH),
		taps(inW, fw, int64(w.StrideW), int64(w.DilationW), padW, outW))
	switch k {
	case 0:
		return taps, inH * inW, true
	case 1:
		return satMul(batches, taps), fh * fw, true
	default:
		return satMul(batches, satMul(outH, outW)), 1, true
	}
}

// taps returns, over the out positions of one axis, the filter taps
// inside [0, in): tap f of position o reads o*stride - pad + f*dilation.
// It loops over the shorter of the filter and the output.
func taps(in, filter, stride, dilation, pad, out int64) int64 {
	var n int64
	if filter <= out {
		for f := range filter {
			// o*stride in [pad - f*dilation, in - 1 + pad - f*dilation].
			lo := max(ceilDiv(pad-f*dilation, stride), 0)
			hi := min(floorDiv(in-1+pad-f*dilation, stride), out-1)
			n += max(hi-lo+1, 0)
		}
		return n
	}
	for o := range out {
		// f*dilation in [pad - o*stride, in - 1 + pad - o*stride].
		lo := max(ceilDiv(pad-o*stride, dilation), 0)
		hi := min(floorDiv(in-1+pad-o*stride, dilation), filter-1)
		n += max(hi-lo+1, 0)
	}
	return n
}

// batchRows returns FULLY_CONNECTED's batch rows: its output's flat size
// over its last dimension (reference fully_connected.h's batches,
// FlatSizeSkipDim of the last); false when the output has no depth.
func batchRows(sg *graph.Subgraph, op *graph.Op) (int64, bool) {
	out := shape(sg, op.Outputs, 0)
	if len(out) == 0 || out[len(out)-1] <= 0 {
		return 0, false
	}
	rows := int64(1)
	for _, d := range out[:len(out)-1] {
		if d < 0 {
			return 0, false
		}
		rows = satMul(rows, int64(d))
	}
	return rows, true
}

// shape is the shape of operand i of ids; nil when there is none.
func shape(sg *graph.Subgraph, ids []graph.TensorID, i int) []int32 {
	if i >= len(ids) || ids[i] < 0 || int(ids[i]) >= len(sg.Tensors) {
		return nil
	}
	return sg.Tensors[ids[i]].Shape
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// satMul is a*b for a, b >= 0, at most math.MaxInt64.
func satMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// mulDiv is n*num/den rounded down for n, num >= 0 and den > 0, at most
// math.MaxInt64; n when den is not positive.
func mulDiv(n, num, den int64) int64 {
	if den <= 0 || n < 0 || num < 0 {
		return n
	}
	hi, lo := bits.Mul64(uint64(n), uint64(num))
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
