package validmodel

import (
	"math"

	"github.com/heliac/heliac/graph"
)

// TFLite builtin code of MIRROR_PAD (schema.fbs, BuiltinOperator).
const opMirrorPad graph.Opcode = 100

func init() { opNames[opMirrorPad] = "MIRROR_PAD" }

// cnnSegment adds, in the main subgraph, a chain of row-local operators
// on x when x is NHWC of batch 1: the early CNN layers the stripe rewrite
// runs stripe by stripe (docs/stripes.md). Now and then a PAD first makes
// the image taller; then CONV_2D and DEPTHWISE_CONV_2D (kernel 1 to 5,
// stride 1 or 2, dilation 1 or 2, SAME or VALID), PAD, PADV2, MIRROR_PAD
// (REFLECT or SYMMETRIC), pools without padding, activations and
// residual ADDs, in FLOAT32 or, a third of the time, in INT8 after a
// QUANTIZE (convolutions with per-channel filters). Every intermediate is
// read within the chain alone; the last value is a model output, read by
// nothing else. It draws from rs alone and adds nothing to the values
// the rest of the model reads, so the models of earlier seeds keep every
// operator they had.
func (s *sub) cnnSegment(x graph.TensorID) {
	r := s.g.rs
	sx := s.shape(x)
	if len(sx) != 4 || sx[0] != 1 || s.sg.Tensors[x].Type != graph.Float32 {
		return
	}
	c := &cnn{s: s, int8: r.Intn(3) == 0}
	v := x
	if c.int8 {
		q := c.quant(1)
		out := s.int8Tensor(sx, q)
		s.op(opQuantize, []graph.TensorID{x}, []graph.TensorID{out})
		v = out
		s.g.f.CNNInt8++
	}
	if r.Intn(2) == 0 {
		v = c.pad(v, 2+r.Intn(4))
	}
	chain := []graph.TensorID{v}
	for n := 2 + r.Intn(5); n > 0; n-- {
		var out graph.TensorID
		switch k := r.Intn(10); {
		case k < 3:
			out = c.conv(v)
		case k < 5:
			out = c.depthwise(v)
		case k < 6:
			out = c.pad(v, 3)
		case k < 7:
			out = c.pool(v)
		case k < 9:
			out = c.activation(v)
		default:
			out = c.residual(v, chain)
		}
		if out < 0 {
			continue
		}
		v = out
		chain = append(chain, v)
	}
	if c.int8 && r.Intn(2) == 0 {
		out := s.tensor(graph.Float32, s.shape(v))
		s.op(opDequantize, []graph.TensorID{v}, []graph.TensorID{out})
		v = out
	}
	if v == x {
		return
	}
	s.g.f.CNNSegments++
	s.copyOuts = append(s.copyOuts, v)
}

// cnn builds one segment: its type and draws.
type cnn struct {
	s    *sub
	int8 bool
}

// quant returns a random per-tensor quantization for values of about
// range magnitude.
func (c *cnn) quant(magnitude float32) *graph.Quantization {
	r := c.s.g.rs
	return quant(magnitude*float32(1+r.Intn(8))/128, int64(r.Intn(41)-20))
}

// like adds a tensor of v's type and the given shape, of quantization q
// (INT8; a fresh one when nil).
func (c *cnn) like(shape []int32, q *graph.Quantization) graph.TensorID {
	if !c.int8 {
		return c.s.tensor(graph.Float32, shape)
	}
	if q == nil {
		q = c.quant(1)
	}
	return c.s.int8Tensor(shape, &graph.Quantization{Scale: append([]float32{}, q.Scale...), ZeroPoint: append([]int64{}, q.ZeroPoint...)})
}

// weights adds a constant filter of the given shape: FLOAT32 in
// [-0.5, 0.5), or INT8 with a scale per channel of dimension dim (zero
// points 0, as TFLM's per-channel kernels require), and its bias of n
// channels (INT32 of scale input scale × filter scale).
func (c *cnn) weights(shape []int32, dim int, in graph.TensorID) (graph.TensorID, graph.TensorID) {
	s, r := c.s, c.s.g.rs
	n := shape[dim]
	if !c.int8 {
		return c.constF(shape), c.constF([]int32{n})
	}
	data := make([]byte, count(shape))
	for i := range data {
		data[i] = byte(int8(r.Intn(255) - 127))
	}
	wq := &graph.Quantization{QuantizedDim: int32(dim)}
	bq := &graph.Quantization{}
	inScale := s.sg.Tensors[in].Quantization.Scale[0]
	bias := make([]byte, 4*n)
	for i := int32(0); i < n; i++ {
		sc := float32(1+r.Intn(8)) / 512
		wq.Scale, wq.ZeroPoint = append(wq.Scale, sc), append(wq.ZeroPoint, 0)
		bq.Scale, bq.ZeroPoint = append(bq.Scale, inScale*sc), append(bq.ZeroPoint, 0)
		putU32(bias[4*i:], uint32(int32(r.Intn(2001)-1000)))
	}
	w := s.constant(graph.Int8, shape, data)
	s.sg.Tensors[w].Quantization = wq
	b := s.constant(graph.Int32, []int32{n}, bias)
	s.sg.Tensors[b].Quantization = bq
	return w, b
}

func (c *cnn) constF(shape []int32) graph.TensorID {
	n := count(shape)
	data := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		putU32(data[4*i:], math.Float32bits(c.s.g.rs.Float32()-0.5))
	}
	return c.s.constant(graph.Float32, shape, data)
}

// window draws a convolution's or pool's window over [1, h, w, ·]: its
// output height and width, or ok false when none fits.
func (c *cnn) window(h, w int32, pool bool) (win *graph.Window, kh, kw, oh, ow int32, ok bool) {
	r := c.s.g.rs
	kh, kw = int32(1+r.Intn(5)), int32(1+r.Intn(5))
	win = &graph.Window{Padding: graph.PaddingSame, StrideH: int32(1 + r.Intn(2)), StrideW: int32(1 + r.Intn(2)), DilationH: 1, DilationW: 1}
	if !pool {
		win.DilationH, win.DilationW = int32(1+r.Intn(2)), int32(1+r.Intn(2))
	}
	if pool || r.Intn(2) == 0 {
		win.Padding = graph.PaddingValid
	}
	eh, ew := (kh-1)*win.DilationH+1, (kw-1)*win.DilationW+1
	if win.Padding == graph.PaddingValid {
		if eh > h || ew > w {
			if pool {
				return nil, 0, 0, 0, 0, false
			}
			win.Padding = graph.PaddingSame
		} else {
			return win, kh, kw, (h-eh)/win.StrideH + 1, (w-ew)/win.StrideW + 1, true
		}
	}
	return win, kh, kw, (h + win.StrideH - 1) / win.StrideH, (w + win.StrideW - 1) / win.StrideW, true
}

func (c *cnn) conv(v graph.TensorID) graph.TensorID {
	s := c.s
	sv := s.shape(v)
	win, kh, kw, oh, ow, _ := c.window(sv[1], sv[2], false)
	oc := int32(1 + s.g.rs.Intn(4))
	w, b := c.weights([]int32{oc, kh, kw, sv[3]}, 0, v)
	out := c.like([]int32{1, oh, ow, oc}, nil)
	s.op(opConv, []graph.TensorID{v, w, b}, []graph.TensorID{out}).Window = win
	s.g.f.Windows++
	return out
}

func (c *cnn) depthwise(v graph.TensorID) graph.TensorID {
	s := c.s
	sv := s.shape(v)
	win, kh, kw, oh, ow, _ := c.window(sv[1], sv[2], false)
	win.DepthMultiplier = int32(1 + s.g.rs.Intn(2))
	oc := sv[3] * win.DepthMultiplier
	w, b := c.weights([]int32{1, kh, kw, oc}, 3, v)
	out := c.like([]int32{1, oh, ow, oc}, nil)
	s.op(opDepthwise, []graph.TensorID{v, w, b}, []graph.TensorID{out}).Window = win
	s.g.f.Windows++
	return out
}

// pool writes a MAX_POOL_2D or AVERAGE_POOL_2D without padding (VALID),
// or nothing (-1) when no window fits.
func (c *cnn) pool(v graph.TensorID) graph.TensorID {
	s := c.s
	sv := s.shape(v)
	win, kh, kw, oh, ow, ok := c.window(sv[1], sv[2], true)
	if !ok {
		return -1
	}
	win.FilterH, win.FilterW = kh, kw
	out := c.like([]int32{1, oh, ow, sv[3]}, s.sg.Tensors[v].Quantization)
	s.op([]graph.Opcode{opMaxPool, opAvgPool}[s.g.rs.Intn(2)], []graph.TensorID{v}, []graph.TensorID{out}).Window = win
	s.g.f.Windows++
	return out
}

// pad writes a PAD, PADV2 (FLOAT32) or MIRROR_PAD of rows and columns,
// each side up to most (MIRROR_PAD: as deep as TFLM mirrors).
func (c *cnn) pad(v graph.TensorID, most int) graph.TensorID {
	s, r := c.s, c.s.g.rs
	sv := s.shape(v)
	code := []graph.Opcode{opPad, opPadV2, opMirrorPad}[r.Intn(3)]
	if code == opPadV2 && c.int8 {
		code = opPad
	}
	reflect := r.Intn(2) == 0
	pads := make([]int32, 8)
	shape := append([]int32{}, sv...)
	for d := 1; d < 4; d++ {
		limit := int32(most)
		if d == 3 {
			limit = 1
		}
		if code == opMirrorPad {
			deep := sv[d]
			if reflect {
				deep--
			}
			limit = min(limit, deep)
		}
		for e := 0; e < 2; e++ {
			pads[2*d+e] = int32(r.Intn(int(limit) + 1))
			shape[d] += pads[2*d+e]
		}
	}
	ins := []graph.TensorID{v, s.constI32([]int32{4, 2}, pads...)}
	if code == opPadV2 {
		ins = append(ins, c.constF([]int32{1}))
	}
	out := c.like(shape, s.sg.Tensors[v].Quantization)
	op := s.op(code, ins, []graph.TensorID{out})
	if code == opMirrorPad {
		mode := int64(1) // SYMMETRIC
		if reflect {
			mode = 0
		}
		op.Options = &graph.Options{Table: "MirrorPadOptions", Fields: []graph.OptionField{{Name: "mode", Type: "MirrorPadMode", Kind: graph.OptionInt, Present: true, Int: mode}}}
	}
	s.g.f.Pads++
	return out
}

// activation writes RELU, RELU6, TANH, LOGISTIC or (FLOAT32) another
// unary operator of v.
func (c *cnn) activation(v graph.TensorID) graph.TensorID {
	s, r := c.s, c.s.g.rs
	sv := s.shape(v)
	if !c.int8 {
		out := s.tensor(graph.Float32, sv)
		s.op(unaryOps[r.Intn(len(unaryOps))], []graph.TensorID{v}, []graph.TensorID{out})
		return out
	}
	var out graph.TensorID
	switch r.Intn(4) {
	case 0:
		out = c.like(sv, quant(1.0/256, -128))
		s.op(opLogistic, []graph.TensorID{v}, []graph.TensorID{out})
	case 1:
		out = c.like(sv, quant(1.0/128, 0))
		s.op(opTanh, []graph.TensorID{v}, []graph.TensorID{out})
	default:
		out = c.like(sv, nil)
		s.op([]graph.Opcode{opRelu, opRelu6}[r.Intn(2)], []graph.TensorID{v}, []graph.TensorID{out})
	}
	return out
}

// residual writes ADD(v, u) for an earlier value u of the chain of v's
// shape, or of a new branch from v (an activation or a SAME convolution
// of stride 1 keeping the channels).
func (c *cnn) residual(v graph.TensorID, chain []graph.TensorID) graph.TensorID {
	s, r := c.s, c.s.g.rs
	sv := s.shape(v)
	var u graph.TensorID = -1
	for _, t := range chain[:len(chain)-1] {
		if sameShape(s.shape(t), sv) && r.Intn(2) == 0 {
			u = t
		}
	}
	if u < 0 {
		if r.Intn(2) == 0 {
			u = c.activation(v)
		} else {
			k := int32(1 + 2*r.Intn(3))
			win := &graph.Window{Padding: graph.PaddingSame, StrideH: 1, StrideW: 1, DilationH: int32(1 + r.Intn(2)), DilationW: 1}
			w, b := c.weights([]int32{sv[3], k, k, sv[3]}, 0, v)
			u = c.like(sv, nil)
			s.op(opConv, []graph.TensorID{v, w, b}, []graph.TensorID{u}).Window = win
			s.g.f.Windows++
		}
	}
	out := c.like(sv, nil)
	ins := []graph.TensorID{v, u}
	if r.Intn(2) == 0 {
		ins[0], ins[1] = u, v
	}
	s.op(opAdd, ins, []graph.TensorID{out})
	return out
}
