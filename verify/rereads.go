package verify

import (
	"math"
	"math/big"

	"github.com/heliac/heliac/graph"
)

// readBytes returns the bytes one run of op (in subgraph sg) reads of its
// input k, whose bytes are size, as docs/plan-format.md's bank_traffic
// counts them: once, but for the operands whose kernels read them again
// (TFLM's reference kernels' loops, worked out here on their own):
// CONV_2D and DEPTHWISE_CONV_2D read their filter (operand 1) once per
// output pixel, less the taps outside the image, their bias (2) once per
// output pixel and their input (0) once per pixel's window;
// FULLY_CONNECTED reads its filter and bias once per row of its output.
// Rounded down, at most math.MaxInt64.
func readBytes(sg *graph.Subgraph, op *graph.Op, k int, size int64) int64 {
	var num, den int64 = 1, 1
	shape := func(ids []graph.TensorID, i int) []int32 {
		if i < len(ids) && ids[i] >= 0 && int(ids[i]) < len(sg.Tensors) {
			return sg.Tensors[ids[i]].Shape
		}
		return nil
	}
	switch {
	case (op.Code == graph.Conv2D || op.Code == graph.DepthwiseConv2D) && k <= 2:
		in, f, out, w := shape(op.Inputs, 0), shape(op.Inputs, 1), shape(op.Outputs, 0), op.Window
		if w == nil || len(in) != 4 || len(f) != 4 || len(out) != 4 || in[0] != out[0] {
			break
		}
		rows, okH := insideTaps(int64(in[1]), int64(f[1]), int64(w.StrideH), int64(w.DilationH), int64(out[1]), w.Padding)
		cols, okW := insideTaps(int64(in[2]), int64(f[2]), int64(w.StrideW), int64(w.DilationW), int64(out[2]), w.Padding)
		if !okH || !okW || in[1] == 0 || in[2] == 0 {
			break
		}
		switch k {
		case 0: // per batch, each inside tap reads one pixel's channels
			num, den = rows*cols, int64(in[1])*int64(in[2])
		case 1: // per batch, each inside tap reads the filter's (y, x) slice
			num, den = int64(out[0])*rows*cols, int64(f[1])*int64(f[2])
		case 2:
			num = int64(out[0]) * int64(out[1]) * int64(out[2])
		}
	case op.Code == 9 && (k == 1 || k == 2): // FULLY_CONNECTED
		out := shape(op.Outputs, 0)
		if len(out) == 0 || out[len(out)-1] <= 0 {
			break
		}
		num = 1
		for _, d := range out[:len(out)-1] {
			num *= int64(d)
		}
	}
	r := new(big.Int).Mul(big.NewInt(size), big.NewInt(num))
	r.Quo(r, big.NewInt(den))
	if !r.IsInt64() || num < 0 || den <= 0 {
		return math.MaxInt64
	}
	return r.Int64()
}

// insideTaps returns, summed over the out positions of one axis, the
// filter taps that read inside [0, in), with TFLM's padding (padding.h:
// ComputeOutSize, ComputePaddingWithOffset, half the total before); false
// when out is not the size TFLM computes or an argument is below 1.
func insideTaps(in, filter, stride, dilation, out int64, p graph.Padding) (int64, bool) {
	if stride < 1 || dilation < 1 || filter < 1 || in < 0 {
		return 0, false
	}
	span := dilation*(filter-1) + 1
	want := (in - span + stride) / stride
	if p == graph.PaddingSame {
		want = (in + stride - 1) / stride
	}
	if want != out {
		return 0, false
	}
	before := max((out-1)*stride+span-in, 0) / 2
	var n int64
	for f := range filter {
		for o := range out {
			if y := o*stride - before + f*dilation; y >= 0 && y < in {
				n++
			}
		}
	}
	return n, true
}
