package kernels_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// dwCase is a depthwise convolution (windowCase) with its filter type:
// INT8 activations take INT8 or INT4 filters, INT16 ones INT8.
type dwCase struct {
	windowCase
	int4 bool
}

func (c dwCase) String() string {
	if c.int4 {
		return c.windowCase.String() + " int4 filter"
	}
	return c.windowCase.String()
}

// newDW is a depthwise convolution of type typ: batch × inH × inW × inC
// in, a filter of fh × fw, multiplier mult, strides, dilations, SAME or
// VALID.
func newDW(typ graph.ElementType, batch, inH, inW, inC, fh, fw, mult, sh, sw, dh, dw int, same bool) dwCase {
	c := dwCase{windowCase: windowCase{code: graph.DepthwiseConv2D, typ: typ, batch: batch, inH: inH, inW: inW, inC: inC,
		outC: inC * mult, filterH: fh, filterW: fw, strideH: sh, strideW: sw, dilationH: dh, dilationW: dw, same: same,
		multiplier: mult}}
	if !c.geometry() {
		panic(fmt.Sprintf("no output: %v", c))
	}
	return c
}

func (c dwCase) model() (*graph.Model, graph.Op) {
	m, op := c.windowCase.model()
	if c.int4 {
		m.Subgraphs[0].Tensors[2] = tensor(graph.Int4, 1, int32(c.filterH), int32(c.filterW), int32(c.outC))
	}
	return m, op
}

// dwPlace returns the one placement lib gives c's operator, and its
// window.
func dwPlace(t *testing.T, lib *kernels.Library, c dwCase) (kernels.Placement, bool) {
	t.Helper()
	m, op := c.model()
	ps := lib.InPlace(m, 0, &op)
	require.LessOrEqual(t, len(ps), 1, "%v on %v", c, lib)
	if len(ps) == 0 {
		return kernels.Placement{}, false
	}
	return ps[0], true
}

// TestCMSISNNDepthwiseWindows: windows worked out by hand, on each code
// path, with the function each runs (named in its contract's source), and
// the windows of the reference kernels and of every path at once (any).
func TestCMSISNNDepthwiseWindows(t *testing.T) {
	type window struct {
		fn     string
		lo, hi int64
	}
	tests := []struct {
		name string
		c    dwCase
		// none, dsp, mve: each path's function and window; ref: the
		// reference kernels' window; any: every library's at once.
		none, dsp, mve window
		ref, any       [2]int64
	}{
		{
			// 1x4x2, 1x1 filter, stride 2: pixel p reads input pixel
			// 2p. Element order (reference, generic): output element 0
			// before channel 1 of input pixel 0 is read, so Lo 0. DSP:
			// pixel 0 written after its window is copied; the next
			// read is input pixel 2 (bytes 4, 5), so pixel 0's bytes
			// may end there: D = 2 - 4 = -2. MVE: both pixels in one
			// group of four, copied before anything is written: any D
			// at or after -8 (the input's size).
			name: "1x1 stride 2", c: newDW(graph.Int8, 1, 1, 4, 2, 1, 1, 1, 1, 2, 1, 1, false),
			none: window{"depthwise_conv_s8_generic", 0, 4}, dsp: window{"arm_depthwise_conv_s8_opt (DSP", -2, 4},
			mve: window{"arm_depthwise_conv_s8_opt (MVE", -8, 4}, ref: [2]int64{0, 4}, any: [2]int64{0, 4},
		},
		{
			// One input channel, multiplier 2, 1x1: on MVE a 1x1
			// convolution whose three rows (input bytes 0, 1, 2) are
			// leftovers of the matrix product: row q read for each
			// output channel, then pixel q's 2 bytes written. Row 1's
			// bytes 2-3 must not reach input byte 2: D >= 4 - 2 = 2.
			// The reference writes pixel 2's channel 0 (byte 5) before
			// reading input byte 2 again for channel 1: D >= 3.
			name: "one channel 1x1, 3 rows", c: newDW(graph.Int8, 1, 1, 3, 1, 1, 1, 2, 1, 1, 1, 1, false),
			none: window{"depthwise_conv_s8_generic", 3, 6}, dsp: window{"depthwise_conv_s8_generic", 3, 6},
			mve: window{"arm_convolve_1x1_s8_fast", 2, 6}, ref: [2]int64{3, 6}, any: [2]int64{3, 6},
		},
		{
			// Five rows: rows 0-3 a group of four, read again for
			// channel 1 after channel 0 of pixels 0-3 (bytes 0, 2, 4,
			// 6) is written: byte 6 must stay before input byte 0, D >=
			// 7; then row 4, read for each channel.
			name: "one channel 1x1, 5 rows", c: newDW(graph.Int8, 1, 1, 5, 1, 1, 1, 2, 1, 1, 1, 1, false),
			none: window{"depthwise_conv_s8_generic", 5, 10}, dsp: window{"depthwise_conv_s8_generic", 5, 10},
			mve: window{"arm_convolve_1x1_s8_fast", 7, 10}, ref: [2]int64{5, 10}, any: [2]int64{7, 10},
		},
		{
			// 130 channels, 1x3 SAME over 4 pixels: on MVE two blocks
			// (124 + 6 channels), each copying all four windows before
			// writing, so one block alone allows any D; with two, D must
			// be a multiple of 130, and the first at or after the
			// reference's Lo (130: pixel 0's last byte before pixel 1's
			// window, from input pixel 0, is read) is the point.
			name: "two channel blocks", c: newDW(graph.Int8, 1, 1, 4, 130, 1, 3, 1, 1, 1, 1, 1, true),
			none: window{"depthwise_conv_s8_generic", 130, 520}, dsp: window{"arm_depthwise_conv_s8_opt (DSP", 130, 520},
			mve: window{"arm_depthwise_conv_s8_opt (MVE", 130, 130}, ref: [2]int64{130, 520}, any: [2]int64{130, 130},
		},
		{
			// One input channel, 1x3 filter, multiplier 4, stride 4,
			// SAME over 9 pixels (3 outputs, padding 1 before): on MVE
			// 1xN: pixel 0 from a copy of input [0, 3), pixel 1 from
			// the input's bytes [3, 6) by the matrix product, pixel 2
			// from a copy of [7, 9). Pixel 0's bytes [0, 4) must stay
			// before input byte 3 (D >= 1); pixel 1's [4, 8) before 7.
			// Elsewhere mult_4: the four outputs of a pixel after one
			// read of its window, the same bounds. The reference reads
			// the window again for each output: pixel 1's third byte
			// (7) is written before its window (from input byte 3) is
			// read for the fourth: D >= 4.
			name: "one channel 1xN", c: newDW(graph.Int8, 1, 1, 9, 1, 1, 3, 4, 1, 4, 1, 1, true),
			none: window{"depthwise_conv_s8_mult_4", 1, 12}, dsp: window{"depthwise_conv_s8_mult_4", 1, 12},
			mve: window{"arm_convolve_1_x_n_s8", 1, 12}, ref: [2]int64{4, 12}, any: [2]int64{4, 12},
		},
		{
			// 3x3 SAME over 2x2x3 (channels not a multiple of 4): the
			// 3x3 kernel without MVE (leftover channels one at a time),
			// the reference's window: every pixel's window starts at
			// input element 0, so pixel (1,0)'s last byte (9) is written
			// before pixel (1,1) reads it: D >= 9. MVE: one group of
			// four pixels, all read first.
			name: "3x3 SAME, 3 channels", c: newDW(graph.Int8, 1, 2, 2, 3, 3, 3, 1, 1, 1, 1, 1, true),
			none: window{"arm_depthwise_conv_3x3_s8", 9, 12}, dsp: window{"arm_depthwise_conv_3x3_s8", 9, 12},
			mve: window{"arm_depthwise_conv_s8_opt (MVE", -12, 12}, ref: [2]int64{9, 12}, any: [2]int64{9, 12},
		},
		{
			// 3x3 SAME, stride 3 across a 1x7x4 row: three pixels whose
			// windows start at input pixels 0, 2 and 5 (elements 0, 8,
			// 20). The 3x3 kernel writes a pixel's four channels after
			// reading all four: pixel 0's bytes [0, 4) must stay before
			// element 8, D >= -4. The reference writes channel 0 before
			// reading channel 1 of the same input pixel: D >= 0. MVE: one
			// group of three pixels, read before anything is written.
			name: "3x3 stride 3", c: newDW(graph.Int8, 1, 1, 7, 4, 3, 3, 1, 1, 3, 1, 1, true),
			none: window{"arm_depthwise_conv_3x3_s8", -4, 12}, dsp: window{"arm_depthwise_conv_3x3_s8", -4, 12},
			mve: window{"arm_depthwise_conv_s8_opt (MVE", -28, 12}, ref: [2]int64{0, 12}, any: [2]int64{0, 12},
		},
		{
			// INT4 filters, multiplier 1: the s4 "opt" kernel copies
			// each pixel's window without MVE too (unlike s8's, which
			// falls back to the generic kernel without DSP). 1x2 VALID
			// over 1x3x2: pixel p reads input pixels p, p+1; pixel 0's
			// bytes [0, 2) before pixel 1's window (input byte 2): D >= 0,
			// as the reference's (each element right before the next
			// channel's read).
			name: "int4 opt", c: dwCase{windowCase: newDW(graph.Int8, 1, 1, 3, 2, 1, 2, 1, 1, 1, 1, 1, false).windowCase, int4: true},
			none: window{"arm_depthwise_conv_s4_opt (without MVE", 0, 4}, dsp: window{"arm_depthwise_conv_s4_opt (without MVE", 0, 4},
			mve: window{"arm_depthwise_conv_s4_opt (MVE", -6, 4}, ref: [2]int64{0, 4}, any: [2]int64{0, 4},
		},
		{
			// INT16: the generic s16 kernel everywhere, the reference's
			// window in bytes (elements of 2): each element written
			// right before the next one's window is read, from the
			// next element on.
			name: "int16", c: newDW(graph.Int16, 1, 1, 3, 2, 1, 2, 1, 1, 1, 1, 1, false),
			none: window{"depthwise_conv_s16_generic_s16", 0, 8}, dsp: window{"depthwise_conv_s16_generic_s16", 0, 8},
			mve: window{"depthwise_conv_s16_generic_s16", 0, 8}, ref: [2]int64{0, 8}, any: [2]int64{0, 8},
		},
		{
			// Two batches: the generic kernel on every path (the "opt"
			// kernels take one batch), the reference's window.
			name: "two batches", c: newDW(graph.Int8, 2, 1, 3, 2, 1, 2, 1, 1, 1, 1, 1, false),
			none: window{"depthwise_conv_s8_generic", 0, 8}, dsp: window{"depthwise_conv_s8_generic", 0, 8},
			mve: window{"depthwise_conv_s8_generic", 0, 8}, ref: [2]int64{0, 8}, any: [2]int64{0, 8},
		},
	}
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	anyLib, err := kernels.Lookup(kernels.Any)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for isa, w := range map[kernels.ISA]window{kernels.NoDSP: tt.none, kernels.DSP: tt.dsp, kernels.MVE: tt.mve} {
				p, ok := dwPlace(t, cmsis.On(isa), tt.c)
				require.True(t, ok, "%v", isa)
				assert.Equal(t, [2]int64{w.lo, w.hi}, [2]int64{p.Lo, p.Hi}, "%v", isa)
				assert.Contains(t, p.Source, w.fn, "%v", isa)
			}
			p, ok := dwPlace(t, ref, tt.c)
			require.True(t, ok)
			assert.Equal(t, tt.ref, [2]int64{p.Lo, p.Hi}, "tflm-reference")
			p, ok = dwPlace(t, anyLib, tt.c)
			require.True(t, ok)
			assert.Equal(t, tt.any, [2]int64{p.Lo, p.Hi}, "any")
		})
	}
}

// TestCMSISNNDepthwiseApplies: on no code path does cmsis-nn give a
// depthwise convolution a window where the reference kernels' rule does
// not apply; FLOAT32 keeps the reference kernel's window (TFLM's cmsis_nn
// kernel runs the reference code), through one rule.
func TestCMSISNNDepthwiseApplies(t *testing.T) {
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	base := newDW(graph.Int8, 1, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, true)
	tests := []struct {
		name   string
		change func(m *graph.Model, op *graph.Op)
	}{
		{"no options", func(m *graph.Model, op *graph.Op) { op.Window = nil }},
		{"a zero stride", func(m *graph.Model, op *graph.Op) { op.Window.StrideW = 0 }},
		{"an output of another size than TFLM computes", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[1] = tensor(graph.Int8, 1, 3, 4, 2)
		}},
		{"a multiplier the channels do not match", func(m *graph.Model, op *graph.Op) { op.Window.DepthMultiplier = 2 }},
		{"another output type", func(m *graph.Model, op *graph.Op) { m.Subgraphs[0].Tensors[1] = tensor(graph.Int16, 1, 4, 4, 2) }},
		{"a hybrid: float activations, an int8 filter", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[0] = tensor(graph.Float32, 1, 4, 4, 2)
			m.Subgraphs[0].Tensors[1] = tensor(graph.Float32, 1, 4, 4, 2)
		}},
		{"INT16 with an INT4 filter", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[0] = tensor(graph.Int16, 1, 4, 4, 2)
			m.Subgraphs[0].Tensors[1] = tensor(graph.Int16, 1, 4, 4, 2)
			m.Subgraphs[0].Tensors[2] = tensor(graph.Int4, 1, 3, 3, 2)
		}},
		{"rank 3", func(m *graph.Model, op *graph.Op) { m.Subgraphs[0].Tensors[0] = tensor(graph.Int8, 4, 4, 2) }},
		{"no filter", func(m *graph.Model, op *graph.Op) { op.Inputs = op.Inputs[:1] }},
		{"a filter of rank 3", func(m *graph.Model, op *graph.Op) { m.Subgraphs[0].Tensors[2] = tensor(graph.Int8, 3, 3, 2) }},
	}
	for _, isa := range kernels.Paths() {
		lib := cmsis.On(isa)
		m, op := base.model()
		require.Len(t, lib.InPlace(m, 0, &op), 1, "the base case applies on %v", isa)
		for _, tt := range tests {
			t.Run(isa.PathName()+"/"+tt.name, func(t *testing.T) {
				m, op := base.model()
				tt.change(m, &op)
				assert.Empty(t, lib.InPlace(m, 0, &op))
			})
		}
		t.Run(isa.PathName()+"/FLOAT32", func(t *testing.T) {
			c := newDW(graph.Float32, 1, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, true)
			p, ok := dwPlace(t, lib, c)
			require.True(t, ok)
			ref, ok := dwPlace(t, tflmRef(t), c)
			require.True(t, ok)
			assert.Equal(t, [2]int64{ref.Lo, ref.Hi}, [2]int64{p.Lo, p.Hi})
			assert.Contains(t, p.Source, "reference_ops::DepthwiseConv")
		})
	}
}

func tflmRef(t *testing.T) *kernels.Library {
	t.Helper()
	l, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	return l
}
