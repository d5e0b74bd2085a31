package kernels

import "github.com/heliac/heliac/graph"

// windowPlacement returns where the input of a sliding-window operator
// (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D; input 0 into
// output 0) may start relative to its output, in bytes, for a Sweep
// contract: [Lo, Hi], and whether the contract applies at all.
//
// TFLM's reference kernels compute the output in one forward sweep over
// its flat NHWC index (batch, out_y, out_x, then the channel k), each
// element from the input window at its pixel, and write element k of a
// pixel after every read it needs. So, with the input starting D bytes
// after the output, writing output element e (bytes [e·eo, (e+1)·eo))
// clobbers nothing the kernel still reads exactly when
// (e+1)·eo <= D + m(e)·ei, where m(e) is the least input element any later
// output element reads (eo, ei: element sizes). Lo is the largest
// (e+1)·eo - m(e)·ei over the output; any D >= Lo is safe. Hi is the
// output's size: an input starting later shares no byte.
//
// The least element a pixel reads is at its window's first in-image row
// and column, at the first channel output element k reads: the channel
// group's first for a grouped convolution, k / depth_multiplier for a
// depthwise one, k for a pool. The window's geometry is TFLM's
// (tensorflow/lite/kernels/padding.h ComputePaddingHeightWidth and
// ComputeOutSize): the contract applies only where the output's shape is
// the one TFLM computes, with positive strides and dilations, input and
// output of one element type of INT8, INT16 or FLOAT32 (a type the
// compiler must assume may alias itself), a filter of a type TFLM takes
// with it (filterType), rank 4 and one batch count (slidingWindow).
//
// lag is the order the kernel writes in. elementOrder (0) is the
// reference kernels' above. A lag of n >= 1 pixels is a kernel that
// computes whole output pixels (every channel) in flat pixel order but
// may write any channel of pixel p while the windows of pixels p-n+1
// onward are still to be read, every input channel of them (im2col
// columns, rows of a matrix product, channel groups): with the input
// starting D bytes after the output, writing pixel p clobbers nothing
// still to be read exactly when (p+1)·outC·eo <= D + m(p-n+1)·ei, where
// m(q) is the least input element any pixel from q on reads (channel 0 of
// its window's first in-image row and column). Kernels whose writes
// follow another pattern give it as a pixel schedule (schedulePlacement).
func windowPlacement(m *graph.Model, sg *graph.Subgraph, op *graph.Op, in, out *graph.Tensor, lag int64) (lo, hi int64, ok bool) {
	w, ok := newSlidingWindow(m, sg, op, in, out)
	if !ok {
		return 0, 0, false
	}
	if lag > 0 {
		return schedulePlacement(w, lagOrder(lag))
	}
	const none = int64(1) << 62
	// Walk the output backwards keeping least, the least input element
	// read by the output elements after the current one.
	least := none
	lo = -none
	e := w.e
	for b := w.batches - 1; b >= 0; b-- {
		for oy := w.outH - 1; oy >= 0; oy-- {
			row := w.firstRow(oy)
			for ox := w.outW - 1; ox >= 0; ox-- {
				col := w.firstCol(ox)
				base := ((b*w.outH+oy)*w.outW + ox) * w.outC
				for k := w.outC - 1; k >= 0; k-- {
					if least != none {
						lo = max(lo, (base+k+1)*e-least*e)
					}
					if row >= 0 && col >= 0 {
						least = min(least, ((b*w.inH+row)*w.inW+col)*w.inC+w.firstChannel(k))
					}
				}
			}
		}
	}
	if lo == -none { // no element reads anything: nothing to clobber
		lo = -w.inSize
	}
	if lo >= w.outSize {
		return 0, 0, false
	}
	return lo, w.outSize, true
}

// slidingWindow is a sliding-window operator's geometry as TFLM computes
// it: NHWC input and output dimensions, the element size e (one for input
// and output), the filter's height and width, strides, dilations, the
// padding before the first row and column, and the first input channel
// output channel k reads.
type slidingWindow struct {
	batches, inH, inW, inC, outH, outW, outC, e int64
	filterH, filterW                            int64
	strideH, strideW, dilationH, dilationW      int64
	padH, padW                                  int64
	firstChannel                                func(k int64) int64
	inSize, outSize                             int64
}

// newSlidingWindow reads op's geometry for windowPlacement, and whether
// the contract can apply to it at all (see windowPlacement).
func newSlidingWindow(m *graph.Model, sg *graph.Subgraph, op *graph.Op, in, out *graph.Tensor) (*slidingWindow, bool) {
	win := op.Window
	if win == nil || win.StrideW < 1 || win.StrideH < 1 || win.DilationW < 1 || win.DilationH < 1 ||
		(win.Padding != graph.PaddingSame && win.Padding != graph.PaddingValid) {
		return nil, false
	}
	if in.Type != out.Type || (in.Type != graph.Int8 && in.Type != graph.Int16 && in.Type != graph.Float32) ||
		len(in.Shape) != 4 || len(out.Shape) != 4 || in.Shape[0] != out.Shape[0] {
		return nil, false
	}
	for _, d := range append(in.Shape[:4:4], out.Shape...) {
		if d < 1 {
			return nil, false
		}
	}
	w := &slidingWindow{batches: int64(in.Shape[0]), inH: int64(in.Shape[1]), inW: int64(in.Shape[2]), inC: int64(in.Shape[3]),
		outH: int64(out.Shape[1]), outW: int64(out.Shape[2]), outC: int64(out.Shape[3]), e: int64(in.Type.Bits() / 8),
		strideH: int64(win.StrideH), strideW: int64(win.StrideW), dilationH: int64(win.DilationH), dilationW: int64(win.DilationW),
		inSize: in.Size, outSize: out.Size}
	if in.Size != w.batches*w.inH*w.inW*w.inC*w.e || out.Size != w.batches*w.outH*w.outW*w.outC*w.e {
		return nil, false
	}
	switch op.Code {
	case graph.Conv2D, graph.DepthwiseConv2D:
		if len(op.Inputs) < 2 || op.Inputs[1] < 0 || int(op.Inputs[1]) >= len(sg.Tensors) {
			return nil, false
		}
		f := &sg.Tensors[op.Inputs[1]]
		if len(f.Shape) != 4 || f.Shape[1] < 1 || f.Shape[2] < 1 || f.Shape[3] < 1 || !filterType(in.Type, f.Type) {
			return nil, false
		}
		w.filterH, w.filterW = int64(f.Shape[1]), int64(f.Shape[2])
		if op.Code == graph.Conv2D {
			// ConvPerChannel / Conv: groups = input depth / filter input
			// depth; output channel k reads the input channels of group
			// k / (output depth / groups).
			fc := int64(f.Shape[3])
			if int64(f.Shape[0]) != w.outC || w.inC%fc != 0 || w.outC%(w.inC/fc) != 0 {
				return nil, false
			}
			perGroup := w.outC / (w.inC / fc)
			w.firstChannel = func(k int64) int64 { return k / perGroup * fc }
		} else {
			// DepthwiseConvPerChannel / DepthwiseConv: output channel
			// k = ic·depth_multiplier + m reads input channel ic.
			dm := int64(win.DepthMultiplier)
			if dm < 1 || w.outC != w.inC*dm || int64(f.Shape[3]) != w.outC {
				return nil, false
			}
			w.firstChannel = func(k int64) int64 { return k / dm }
		}
	default: // pools: channel k reads channel k
		w.filterH, w.filterW = int64(win.FilterH), int64(win.FilterW)
		if w.filterH < 1 || w.filterW < 1 || w.outC != w.inC {
			return nil, false
		}
		w.firstChannel = func(k int64) int64 { return k }
	}
	var okH, okW bool
	w.padH, okH = WindowPadding(win.Padding, w.inH, w.filterH, w.strideH, w.dilationH, w.outH)
	w.padW, okW = WindowPadding(win.Padding, w.inW, w.filterW, w.strideW, w.dilationW, w.outW)
	return w, okH && okW
}

// firstIn returns the first in-image coordinate of a window that starts
// at origin, of taps taps dilation apart, over size coordinates, or -1
// when none of its taps is in the image.
func firstIn(origin, size, taps, dilation int64) int64 {
	if origin >= 0 {
		if origin < size {
			return origin
		}
		return -1
	}
	t := (-origin + dilation - 1) / dilation
	if c := origin + t*dilation; t < taps && c < size {
		return c
	}
	return -1
}

// firstRow is the first input row output row oy reads, or -1.
func (w *slidingWindow) firstRow(oy int64) int64 {
	return firstIn(oy*w.strideH-w.padH, w.inH, w.filterH, w.dilationH)
}

// firstCol is the first input column output column ox reads, or -1.
func (w *slidingWindow) firstCol(ox int64) int64 {
	return firstIn(ox*w.strideW-w.padW, w.inW, w.filterW, w.dilationW)
}

// filterType reports whether TFLM's reference convolutions take a filter
// of type filter with activations of type act (conv.cc, depthwise_conv.cc
// Eval): FLOAT32 with FLOAT32, INT8 with INT8 or INT4, INT16 with INT8. A
// hybrid (FLOAT32 activations, INT8 filter) TFLM refuses, so no contract
// speaks for it.
func filterType(act, filter graph.ElementType) bool {
	switch act {
	case graph.Float32:
		return filter == graph.Float32
	case graph.Int8:
		return filter == graph.Int8 || filter == graph.Int4
	case graph.Int16:
		return filter == graph.Int8
	}
	return false
}

// WindowPadding returns the padding before the first output row (or
// column) as TFLM computes it (padding.h ComputePaddingWithOffset: half
// the total padding, rounded down), and whether out is the size
// ComputeOutSize gives. TFLM refuses a stride, dilation or filter below 1
// (ValidatePaddingArguments) and leaves the padding 0: so does this, and
// a model that leaves its strides out (0) is no division by zero.
func WindowPadding(p graph.Padding, in, filter, stride, dilation, out int64) (int64, bool) {
	if stride < 1 || dilation < 1 || filter < 1 || in < 0 {
		return 0, false
	}
	effective := (filter-1)*dilation + 1
	var want int64
	if p == graph.PaddingSame {
		want = (in + stride - 1) / stride
	} else {
		want = (in + stride - effective) / stride
	}
	if want != out {
		return 0, false
	}
	total := max((out-1)*stride+effective-in, 0)
	return total / 2, true
}

// elementOrder is windowPlacement's lag for a kernel that writes each
// output element right after reading its window, in flat index order.
const elementOrder = 0
