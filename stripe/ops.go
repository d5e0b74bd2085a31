package stripe

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// TFLite builtin codes the rewrite reads or writes (schema.fbs,
// BuiltinOperator) beyond the few graph names.
const (
	opAdd               graph.Opcode = 0
	opConcatenation     graph.Opcode = 2
	opDequantize        graph.Opcode = 6
	opFloor             graph.Opcode = 8
	opLogistic          graph.Opcode = 14
	opMul               graph.Opcode = 18
	opRelu              graph.Opcode = 19
	opReluN1To1         graph.Opcode = 20
	opRelu6             graph.Opcode = 21
	opTanh              graph.Opcode = 28
	opPad               graph.Opcode = 34
	opSub               graph.Opcode = 41
	opStridedSlice      graph.Opcode = 45
	opMaximum           graph.Opcode = 55
	opMinimum           graph.Opcode = 57
	opNeg               graph.Opcode = 59
	opPadV2             graph.Opcode = 60
	opLeakyRelu         graph.Opcode = 98
	opSquaredDifference graph.Opcode = 99
	opMirrorPad         graph.Opcode = 100
	opAbs               graph.Opcode = 101
	opCeil              graph.Opcode = 104
	opElu               graph.Opcode = 111
	opQuantize          graph.Opcode = 114
	opRound             graph.Opcode = 116
	opHardSwish         graph.Opcode = 117
	opRelu0To1          graph.Opcode = 152
)

// elementwise are the operators whose output row r depends on row r of
// each non-constant operand alone (docs/stripes.md, "Row-local operators").
var elementwise = map[graph.Opcode]bool{
	opAdd: true, opSub: true, opMul: true, opMaximum: true, opMinimum: true,
	opSquaredDifference: true, opRelu: true, opRelu6: true, opReluN1To1: true,
	opRelu0To1: true, opLeakyRelu: true, opHardSwish: true, opElu: true,
	opLogistic: true, opTanh: true, opQuantize: true, opDequantize: true,
	opAbs: true, opNeg: true, opFloor: true, opCeil: true, opRound: true,
}

// kind says how an operator maps its output rows to its inputs' rows.
type kind int8

const (
	notRowLocal kind = iota
	convLike         // CONV_2D, DEPTHWISE_CONV_2D
	pool             // AVERAGE_POOL_2D, MAX_POOL_2D with TFLM padding 0
	pad              // PAD, PADV2, MIRROR_PAD
	elementwiseOp
)

func kindOf(code graph.Opcode) kind {
	switch {
	case code == graph.Conv2D || code == graph.DepthwiseConv2D:
		return convLike
	case code == graph.AveragePool2D || code == graph.MaxPool2D:
		return pool
	case code == opPad || code == opPadV2 || code == opMirrorPad:
		return pad
	case elementwise[code]:
		return elementwiseOp
	}
	return notRowLocal
}

// window is an operator's geometry along one axis: stride, effective
// kernel extent ((k-1)*dilation+1) and TFLM's leading padding.
type window struct {
	stride, extent, pad int32
}

// windows returns the height and width windows of a conv-like operator or
// pool. The padding is TFLM's: ComputePaddingHeightWidth in
// tensorflow/lite/kernels/padding.h @90b983c, total = max((out-1)*s + K -
// in, 0), leading = total/2 (0 for VALID, where total is never positive).
func windows(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) (h, w window, err error) {
	wn := op.Window
	if wn == nil {
		return h, w, fmt.Errorf("%s has no window options", op.Name())
	}
	in := m.Tensor(s, op.Inputs[0])
	out := m.Tensor(s, op.Outputs[0])
	var kh, kw int32
	if kindOf(op.Code) == convLike {
		if len(op.Inputs) < 2 || op.Inputs[1] == graph.NoTensor {
			return h, w, fmt.Errorf("%s has no filter", op.Name())
		}
		f := m.Tensor(s, op.Inputs[1])
		if len(f.Shape) != 4 {
			return h, w, fmt.Errorf("%s's filter %q has rank %d, not 4", op.Name(), f.Name, len(f.Shape))
		}
		kh, kw = f.Shape[1], f.Shape[2]
	} else {
		kh, kw = wn.FilterH, wn.FilterW
	}
	dh, dw := max(wn.DilationH, 1), max(wn.DilationW, 1)
	if wn.StrideH < 1 || wn.StrideW < 1 || kh < 1 || kw < 1 {
		return h, w, fmt.Errorf("%s has stride %dx%d and window %dx%d", op.Name(), wn.StrideH, wn.StrideW, kh, kw)
	}
	h = window{stride: wn.StrideH, extent: (kh-1)*dh + 1}
	w = window{stride: wn.StrideW, extent: (kw-1)*dw + 1}
	for _, a := range []struct {
		win     *window
		in, out int32
		axis    string
	}{{&h, in.Shape[1], out.Shape[1], "height"}, {&w, in.Shape[2], out.Shape[2], "width"}} {
		want := outSize(wn.Padding, a.in, a.win.extent, a.win.stride)
		if a.out != want {
			return h, w, fmt.Errorf("%s's output %q has %s %d where TFLM computes %d", op.Name(), out.Name, a.axis, a.out, want)
		}
		if total := (a.out-1)*a.win.stride + a.win.extent - a.in; total > 0 {
			a.win.pad = total / 2
		}
	}
	return h, w, nil
}

// outSize is TFLM's ComputeOutSize (padding.h @90b983c).
func outSize(p graph.Padding, in, extent, stride int32) int32 {
	if p == graph.PaddingSame {
		return (in + stride - 1) / stride
	}
	return (in + stride - extent) / stride
}

// trailing returns the padding a conv-like operator needs after the input
// along one axis: max(0, (out-1)*s + K - in - leading).
func (w window) trailing(in, out int32) int32 {
	return max(0, (out-1)*w.stride+w.extent-in-w.pad)
}

// mirrorOffset is TFLM's offset of a MIRROR_PAD: 1 for REFLECT (the edge
// row is not repeated), 0 for SYMMETRIC. TFLM takes REFLECT only from a
// MirrorPadOptions table whose mode is REFLECT (schema default 0); without
// the table its params stay zero (kTfLiteMirrorPaddingUnknown), which
// MirrorPadPrepare treats as SYMMETRIC (offset = mode != Reflect ? 0 : 1):
// flatbuffer_conversions.cc ParseMirrorPad and ConvertMirrorPadding,
// kernels/mirror_pad.cc MirrorPadPrepare @90b983c.
func mirrorOffset(op *graph.Op) int32 {
	if op.Options == nil || op.Options.Table != "MirrorPadOptions" {
		return 0
	}
	if f := op.Options.Field("mode"); f != nil && f.Int != 0 {
		return 0
	}
	return 1
}
