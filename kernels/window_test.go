package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// windowCase is one sliding-window operator: NHWC input and output shapes,
// and the window.
type windowCase struct {
	code                   graph.Opcode
	typ                    graph.ElementType
	batch, inH, inW, inC   int
	outC                   int // conv: output channels; dw: inC × multiplier
	filterH, filterW       int
	filterC                int // conv: input channels per group
	strideH, strideW       int
	dilationH, dilationW   int
	same                   bool
	outH, outW             int // computed by newWindowCase
	padH, padW, multiplier int
}

func (c windowCase) String() string {
	return fmt.Sprintf("%v %v in %dx%dx%dx%d out %dx%dx%d filter %dx%d/%d stride %dx%d dilation %dx%d same %t",
		c.code, c.typ, c.batch, c.inH, c.inW, c.inC, c.outH, c.outW, c.outC, c.filterH, c.filterW, c.filterC,
		c.strideH, c.strideW, c.dilationH, c.dilationW, c.same)
}

// geometry computes the output size and padding the way TFLM's padding.h
// does, written again here from its formulas.
func (c *windowCase) geometry() bool {
	size := func(in, f, s, d int) (int, int) {
		eff := (f-1)*d + 1
		out := (in + s - eff) / s
		if c.same {
			out = (in + s - 1) / s
		}
		pad := (out-1)*s + eff - in
		if pad < 0 {
			pad = 0
		}
		return out, pad / 2
	}
	c.outH, c.padH = size(c.inH, c.filterH, c.strideH, c.dilationH)
	c.outW, c.padW = size(c.inW, c.filterW, c.strideW, c.dilationW)
	return c.outH >= 1 && c.outW >= 1
}

// model builds the operator as a one-operator model.
func (c windowCase) model() (*graph.Model, graph.Op) {
	in := tensor(c.typ, int32(c.batch), int32(c.inH), int32(c.inW), int32(c.inC))
	out := tensor(c.typ, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC))
	w := &graph.Window{Padding: graph.PaddingValid, StrideW: int32(c.strideW), StrideH: int32(c.strideH),
		DilationW: int32(c.dilationW), DilationH: int32(c.dilationH)}
	if c.same {
		w.Padding = graph.PaddingSame
	}
	tensors := []graph.Tensor{in, out}
	filterType := graph.Int8 // with INT8 and INT16 activations
	if c.typ == graph.Float32 {
		filterType = graph.Float32
	}
	op := graph.Op{Code: c.code, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}, Window: w}
	switch c.code {
	case graph.Conv2D:
		tensors = append(tensors, tensor(filterType, int32(c.outC), int32(c.filterH), int32(c.filterW), int32(c.filterC)))
		op.Inputs = append(op.Inputs, 2)
	case graph.DepthwiseConv2D:
		tensors = append(tensors, tensor(filterType, 1, int32(c.filterH), int32(c.filterW), int32(c.outC)))
		op.Inputs = append(op.Inputs, 2)
		w.DepthMultiplier = int32(c.multiplier)
	default:
		w.FilterH, w.FilterW, w.DilationH, w.DilationW = int32(c.filterH), int32(c.filterW), 1, 1
	}
	m := &graph.Model{Subgraphs: []graph.Subgraph{{Tensors: tensors, Ops: []graph.Op{op}}}, Buffers: []graph.Buffer{{}}}
	return m, op
}

// firstClobberedRead runs the kernel's loops as TFLM's reference kernels
// do (batch, out_y, out_x, output channel; the window's taps in order)
// over one memory holding the output at byte 0 and the input at byte d,
// and returns the first input element read after a write landed on it,
// or -1. Writes mark bytes; every read of an input element checks its
// bytes.
func (c windowCase) firstClobberedRead(d int) int {
	e := int(c.typ.Bits() / 8)
	inElems := c.batch * c.inH * c.inW * c.inC
	written := map[int]bool{}
	read := func(elem int) bool {
		for b := 0; b < e; b++ {
			if written[d+elem*e+b] {
				return true
			}
		}
		return false
	}
	groups, perGroup := 1, c.outC
	if c.code == graph.Conv2D {
		groups = c.inC / c.filterC
		perGroup = c.outC / groups
	}
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				for k := 0; k < c.outC; k++ {
					for fy := 0; fy < c.filterH; fy++ {
						y := oy*c.strideH - c.padH + fy*c.dilationH
						for fx := 0; fx < c.filterW; fx++ {
							x := ox*c.strideW - c.padW + fx*c.dilationW
							if y < 0 || y >= c.inH || x < 0 || x >= c.inW {
								continue
							}
							var channels []int
							switch c.code {
							case graph.Conv2D:
								for ic := 0; ic < c.filterC; ic++ {
									channels = append(channels, k/perGroup*c.filterC+ic)
								}
							case graph.DepthwiseConv2D:
								channels = []int{k / c.multiplier}
							default:
								channels = []int{k}
							}
							for _, ch := range channels {
								elem := ((b*c.inH+y)*c.inW+x)*c.inC + ch
								if elem >= inElems {
									panic("input index out of range")
								}
								if read(elem) {
									return elem
								}
							}
						}
					}
					o := ((b*c.outH+oy)*c.outW+ox)*c.outC + k
					for i := 0; i < e; i++ {
						written[o*e+i] = true
					}
				}
			}
		}
	}
	return -1
}

// TestWindowPlacementAgainstTheKernelLoops: on random convolutions,
// depthwise convolutions and pools, the input at the contract's least
// offset is never read after the output is written over it, in a run of
// the kernel's loops, and one byte earlier it is: Lo is exact. Every later
// offset is safe too (checked at a few).
func TestWindowPlacementAgainstTheKernelLoops(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 23))
	codes := []graph.Opcode{graph.Conv2D, graph.DepthwiseConv2D, graph.AveragePool2D, graph.MaxPool2D}
	types := []graph.ElementType{graph.Int8, graph.Int16, graph.Float32}
	checked := map[graph.Opcode]int{}
	for n := 0; n < 400; n++ {
		c := windowCase{code: codes[n%len(codes)], typ: types[rng.IntN(len(types))], batch: 1 + rng.IntN(2),
			inH: 1 + rng.IntN(7), inW: 1 + rng.IntN(7), inC: 1 + rng.IntN(4),
			filterH: 1 + rng.IntN(3), filterW: 1 + rng.IntN(3), strideH: 1 + rng.IntN(3), strideW: 1 + rng.IntN(3),
			dilationH: 1, dilationW: 1, same: rng.IntN(2) == 0}
		switch c.code {
		case graph.Conv2D:
			c.dilationH, c.dilationW = 1+rng.IntN(2), 1+rng.IntN(2)
			groups := 1
			if c.inC%2 == 0 && rng.IntN(3) == 0 {
				groups = 2
			}
			c.filterC = c.inC / groups
			c.outC = groups * (1 + rng.IntN(3))
		case graph.DepthwiseConv2D:
			c.dilationH, c.dilationW = 1+rng.IntN(2), 1+rng.IntN(2)
			c.multiplier = 1 + rng.IntN(2)
			c.outC = c.inC * c.multiplier
		default:
			c.outC = c.inC
		}
		if !c.geometry() {
			continue
		}
		m, op := c.model()
		ps := lib.InPlace(m, 0, &op)
		require.Len(t, ps, 1, "%v", c)
		p := ps[0]
		assert.Equal(t, kernels.Sweep, p.Overlap)
		assert.Equal(t, m.Subgraphs[0].Tensors[1].Size, p.Hi, "%v", c)
		if p.Lo > -m.Subgraphs[0].Tensors[0].Size {
			assert.NotEqual(t, -1, c.firstClobberedRead(int(p.Lo)-1), "%v: one byte before Lo %d must clobber a read", c, p.Lo)
		}
		for _, d := range []int64{p.Lo, p.Lo + 1, (p.Lo + p.Hi) / 2, p.Hi} {
			if d >= p.Lo && d <= p.Hi {
				assert.Equal(t, -1, c.firstClobberedRead(int(d)), "%v: the input %d bytes after the output (Lo %d)", c, d, p.Lo)
			}
		}
		checked[c.code]++
	}
	for _, code := range codes {
		assert.Greater(t, checked[code], 40, "cases of %v", code)
	}
}

// TestWindowPlacementApplies lists where the contract does not apply.
func TestWindowPlacementApplies(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	base := windowCase{code: graph.Conv2D, typ: graph.Int8, batch: 1, inH: 4, inW: 4, inC: 2, outC: 3, filterH: 3, filterW: 3,
		filterC: 2, strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, same: true}
	require.True(t, base.geometry())
	tests := []struct {
		name   string
		change func(m *graph.Model, op *graph.Op)
	}{
		{"no options", func(m *graph.Model, op *graph.Op) { op.Window = nil }},
		{"a zero stride", func(m *graph.Model, op *graph.Op) { op.Window.StrideW = 0 }},
		{"an unknown padding", func(m *graph.Model, op *graph.Op) { op.Window.Padding = 7 }},
		{"an output of another size than TFLM computes", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[1] = tensor(graph.Int8, 1, 3, 4, 3)
		}},
		{"another output type", func(m *graph.Model, op *graph.Op) { m.Subgraphs[0].Tensors[1] = tensor(graph.Int16, 1, 4, 4, 3) }},
		{"a hybrid: float input, int8 output", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[0] = tensor(graph.Float32, 1, 4, 4, 2)
		}},
		{"rank 3", func(m *graph.Model, op *graph.Op) { m.Subgraphs[0].Tensors[0] = tensor(graph.Int8, 4, 4, 2) }},
		{"no filter", func(m *graph.Model, op *graph.Op) { op.Inputs = op.Inputs[:1] }},
		{"a hybrid: float activations, an int8 filter", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[0] = tensor(graph.Float32, 1, 4, 4, 2)
			m.Subgraphs[0].Tensors[1] = tensor(graph.Float32, 1, 4, 4, 3)
		}},
		{"a filter of other output channels", func(m *graph.Model, op *graph.Op) {
			m.Subgraphs[0].Tensors[2] = tensor(graph.Int8, 4, 3, 3, 2)
		}},
	}
	m, op := base.model()
	require.Len(t, lib.InPlace(m, 0, &op), 1, "the base case applies")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := base.model()
			tt.change(m, &op)
			assert.Empty(t, lib.InPlace(m, 0, &op))
		})
	}
}

// TestZeroStride: a convolution whose options leave the strides out (0,
// which the schema allows and TFLM pads as 0) gets scratch sizes and
// in-place placements on every library and code path, without a division
// by zero: an INT8 depthwise convolution and a 1xN convolution (CMSIS-NN's
// MVE 1xN size divides by the stride).
func TestZeroStride(t *testing.T) {
	win := &graph.Window{Padding: graph.PaddingSame, DilationW: 1, DilationH: 1}
	depthwise := tailOp{code: graph.DepthwiseConv2D, name: "DEPTHWISE_CONV_2D", tensors: []graph.Tensor{
		tt("in", graph.Int8, 1, 6, 6, 4), tt("w", graph.Int8, 1, 3, 3, 8), tt("b", graph.Int32, 8), tt("out", graph.Int8, 1, 6, 6, 8)},
		in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}, constant: []graph.TensorID{1, 2}}
	conv1xN := tailOp{code: graph.Conv2D, name: "CONV_2D", tensors: []graph.Tensor{
		tt("in", graph.Int8, 1, 1, 12, 4), tt("w", graph.Int8, 8, 1, 3, 4), tt("b", graph.Int32, 8), tt("out", graph.Int8, 1, 1, 12, 8)},
		in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}, constant: []graph.TensorID{1, 2}}
	for _, o := range []tailOp{depthwise, conv1xN} {
		m := o.model()
		m.Subgraphs[0].Ops[0].Window = win
		for _, name := range kernels.Names() {
			lib, err := kernels.Lookup(name)
			require.NoError(t, err)
			for _, isa := range kernels.Paths() {
				l := lib.On(isa)
				assert.NotPanics(t, func() {
					l.Scratch(m, 0, &m.Subgraphs[0].Ops[0], kernels.Target{PointerSize: 4, ISA: isa})
					l.InPlace(m, 0, &m.Subgraphs[0].Ops[0])
				}, "%s %s %s", o.name, l, isa)
			}
		}
	}
}
