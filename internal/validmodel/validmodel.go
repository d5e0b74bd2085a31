// Package validmodel generates random models that stock TensorFlow Lite
// Micro (reference kernels, commit 90b983c) allocates and invokes: the
// input of the differential test, which runs each model and heliac's
// --emit-tflite rewrite of it in ../shared/tools/tflm_run and compares
// every output and every operator's output.
//
// Unlike internal/randmodel, whose models are well formed but need not
// run (any type, any shape), every operator here gets the types, shapes,
// constant operands and options its TFLM kernel's Prepare checks, and the
// model is built to stress the memory planner: tensors written by two
// operators, operators writing their own input, views (RESHAPE, SQUEEZE,
// EXPAND_DIMS, BITCAST) of tensors written again later, broadcasting,
// padding, convolution and pooling chains, resource variables reached by
// handles with and without a container, is_variable tensors, CALL_ONCE,
// IF and WHILE, and row-local CNN chains (cnnSegment) for the stripe
// rewrite. Models are mostly FLOAT32: TFLM's float kernels are
// deterministic, so two runs compare bit for bit.
//
// The output is a graph.Model, which tflite.Encode writes. Encode writes
// only the operator options graph.Op holds (windows, called subgraphs,
// resource names), so every other operator runs with TFLM's default
// options: no fused activation, CONCATENATION on axis 0, SQUEEZE of every
// dimension of size 1, FULLY_CONNECTED without keep_num_dims. The
// generator keeps to those.
//
// It imports graph alone.
package validmodel

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/heliac/heliac/graph"
)

// TFLite builtin operator codes (schema.fbs, BuiltinOperator).
const (
	opAdd            graph.Opcode = 0
	opAvgPool        graph.Opcode = 1
	opConcat         graph.Opcode = 2
	opConv           graph.Opcode = 3
	opDepthwise      graph.Opcode = 4
	opDequantize     graph.Opcode = 6
	opFullyConn      graph.Opcode = 9
	opLogistic       graph.Opcode = 14
	opMaxPool        graph.Opcode = 17
	opMul            graph.Opcode = 18
	opRelu           graph.Opcode = 19
	opRelu6          graph.Opcode = 21
	opReshape        graph.Opcode = 22
	opTanh           graph.Opcode = 28
	opPad            graph.Opcode = 34
	opSub            graph.Opcode = 41
	opSqueeze        graph.Opcode = 43
	opMaximum        graph.Opcode = 55
	opMinimum        graph.Opcode = 57
	opLess           graph.Opcode = 58
	opNeg            graph.Opcode = 59
	opPadV2          graph.Opcode = 60
	opGreater        graph.Opcode = 61
	opExpandDims     graph.Opcode = 70
	opLeakyRelu      graph.Opcode = 98
	opAbs            graph.Opcode = 101
	opQuantize       graph.Opcode = 114
	opHardSwish      graph.Opcode = 117
	opIf             graph.Opcode = 118
	opWhile          graph.Opcode = 119
	opCallOnce       graph.Opcode = 129
	opVarHandle      graph.Opcode = 142
	opReadVariable   graph.Opcode = 143
	opAssignVariable graph.Opcode = 144
)

var opNames = map[graph.Opcode]string{
	opAdd: "ADD", opAvgPool: "AVERAGE_POOL_2D", opConcat: "CONCATENATION", opConv: "CONV_2D",
	opDepthwise: "DEPTHWISE_CONV_2D", opDequantize: "DEQUANTIZE", opQuantize: "QUANTIZE", opFullyConn: "FULLY_CONNECTED", opLogistic: "LOGISTIC",
	opMaxPool: "MAX_POOL_2D", opMul: "MUL", opRelu: "RELU", opRelu6: "RELU6", opReshape: "RESHAPE",
	opTanh: "TANH", opPad: "PAD", opSub: "SUB", opSqueeze: "SQUEEZE", opMaximum: "MAXIMUM",
	opMinimum: "MINIMUM", opLess: "LESS", opNeg: "NEG", opPadV2: "PADV2", opGreater: "GREATER",
	opExpandDims: "EXPAND_DIMS", opLeakyRelu: "LEAKY_RELU", opAbs: "ABS", opHardSwish: "HARD_SWISH",
	opIf: "IF", opWhile: "WHILE", opCallOnce: "CALL_ONCE", opVarHandle: "VAR_HANDLE",
	opReadVariable: "READ_VARIABLE", opAssignVariable: "ASSIGN_VARIABLE",
}

// unaryOps are elementwise FLOAT32 operators of one input whose output has
// the input's shape.
var unaryOps = []graph.Opcode{opRelu, opRelu6, opTanh, opLogistic, opAbs, opNeg, opLeakyRelu, opHardSwish}

// binaryOps are elementwise FLOAT32 operators of two inputs that
// broadcast (up to 4 dimensions in every TFLM kernel here).
var binaryOps = []graph.Opcode{opAdd, opSub, opMul, opMaximum, opMinimum}

// Features counts what a generated model contains, for coverage reports.
type Features struct {
	Ops           int // operators, every subgraph
	SelfWrites    int // operators that write one of their own inputs
	SecondWriters int // operators that write a tensor another operator wrote before
	Views         int // RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST
	StaleViews    int // views whose input is written again while the view is still read
	Windows       int // CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D
	Pads          int
	Broadcasts    int // binary operators whose inputs differ in shape
	VarHandles    int
	NoContainer   int // VAR_HANDLEs without a container
	SharedNames   int // shared names reached by handles with and without a container
	VarTensors    int // is_variable tensors
	Int8          int // INT8 operators (QUANTIZE to INT8 and after it, up to DEQUANTIZE)
	CallOnce      int
	Ifs, Whiles   int
	// Slices counts STRIDED_SLICE, SLICE and SPLIT operators, of which
	// BlockSlices copy one contiguous block of their input per output;
	// Concats counts CONCATENATIONs of such slices' results (copies).
	Slices, BlockSlices, Concats int
	// CNNSegments counts the row-local CNN chains of cnnSegment (the
	// stripe rewrite's regions), CNNInt8 those of INT8.
	CNNSegments, CNNInt8 int
}

// Add adds o's counts to f.
func (f *Features) Add(o Features) {
	f.Ops += o.Ops
	f.SelfWrites += o.SelfWrites
	f.SecondWriters += o.SecondWriters
	f.Views += o.Views
	f.StaleViews += o.StaleViews
	f.Windows += o.Windows
	f.Pads += o.Pads
	f.Broadcasts += o.Broadcasts
	f.VarHandles += o.VarHandles
	f.NoContainer += o.NoContainer
	f.SharedNames += o.SharedNames
	f.VarTensors += o.VarTensors
	f.Int8 += o.Int8
	f.CallOnce += o.CallOnce
	f.Ifs += o.Ifs
	f.Whiles += o.Whiles
	f.Slices += o.Slices
	f.BlockSlices += o.BlockSlices
	f.Concats += o.Concats
	f.CNNSegments += o.CNNSegments
	f.CNNInt8 += o.CNNInt8
}

// Generate returns the model of seed: the same seed gives the same model.
func Generate(seed int64) (*graph.Model, Features) {
	g := &gen{r: rand.New(rand.NewSource(seed)), rc: rand.New(rand.NewSource(seed ^ 0x5eed_c0b1)),
		rs: rand.New(rand.NewSource(seed ^ 0x571e_9e5)), m: &graph.Model{Version: 3, Buffers: []graph.Buffer{{}},
			Description: fmt.Sprintf("validmodel seed %d", seed)}}
	g.main()
	g.f.Ops = 0
	for _, sg := range g.m.Subgraphs {
		g.f.Ops += len(sg.Ops)
	}
	return g.m, g.f
}

type gen struct {
	r *rand.Rand
	// rc draws the exact-overlap copy patterns (copies), apart from r so
	// that adding them left every other draw, and so the models of
	// earlier seeds (diffRegressionSeeds), as they were.
	rc *rand.Rand
	// rs draws the row-local CNN segments (cnnSegment), apart from r and
	// rc for the same reason.
	rs *rand.Rand
	m  *graph.Model
	f  Features
}

// variable is one resource variable's shared name and shape.
type variable struct {
	name  string
	shape []int32
}

// sub builds one subgraph.
type sub struct {
	g   *gen
	sg  graph.Subgraph
	idx graph.SubgraphIndex
	// vals are the FLOAT32 tensors operators may read.
	vals []graph.TensorID
	// written marks tensors an operator of this subgraph wrote: they may
	// be written again.
	written map[graph.TensorID]bool
	// scalar is a FLOAT32 [1] input that drives control flow, or -1.
	scalar graph.TensorID
	// copyOuts are the outputs of copies' patterns and of cnnSegment,
	// made model outputs.
	copyOuts []graph.TensorID
}

func (g *gen) newSub() *sub {
	idx := graph.SubgraphIndex(len(g.m.Subgraphs))
	g.m.Subgraphs = append(g.m.Subgraphs, graph.Subgraph{})
	return &sub{g: g, idx: idx, written: map[graph.TensorID]bool{}, scalar: -1}
}

func (s *sub) finish() { s.g.m.Subgraphs[s.idx] = s.sg }

func elemSize(t graph.ElementType) int64 {
	switch t {
	case graph.Bool, graph.Int8:
		return 1
	case graph.Resource:
		return 0
	}
	return 4
}

func count(shape []int32) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

func (s *sub) tensor(typ graph.ElementType, shape []int32) graph.TensorID {
	id := graph.TensorID(len(s.sg.Tensors))
	s.sg.Tensors = append(s.sg.Tensors, graph.Tensor{Name: fmt.Sprintf("t%d", id), Type: typ,
		Shape: append([]int32{}, shape...), Size: count(shape) * elemSize(typ)})
	return id
}

func (s *sub) shape(id graph.TensorID) []int32 { return s.sg.Tensors[id].Shape }

func (s *sub) constant(typ graph.ElementType, shape []int32, data []byte) graph.TensorID {
	id := s.tensor(typ, shape)
	s.sg.Tensors[id].Buffer = graph.BufferIndex(len(s.g.m.Buffers))
	s.g.m.Buffers = append(s.g.m.Buffers, graph.Buffer{Data: data})
	return id
}

func (s *sub) constF(shape []int32, lo, hi float32) graph.TensorID {
	n := count(shape)
	data := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		putU32(data[4*i:], math.Float32bits(lo+(hi-lo)*s.g.r.Float32()))
	}
	return s.constant(graph.Float32, shape, data)
}

func (s *sub) constI32(shape []int32, v ...int32) graph.TensorID {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		putU32(data[4*i:], uint32(x))
	}
	return s.constant(graph.Int32, shape, data)
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func (s *sub) op(code graph.Opcode, ins, outs []graph.TensorID) *graph.Op {
	for _, o := range outs {
		if s.written[o] {
			s.g.f.SecondWriters++
		}
		for _, in := range ins {
			if in == o {
				s.g.f.SelfWrites++
				break
			}
		}
	}
	s.sg.Ops = append(s.sg.Ops, graph.Op{Code: code, CodeName: opNames[code], Version: 1, Inputs: ins, Outputs: outs})
	for _, o := range outs {
		s.written[o] = true
	}
	return &s.sg.Ops[len(s.sg.Ops)-1]
}

func (s *sub) pick() graph.TensorID { return s.vals[s.g.r.Intn(len(s.vals))] }

// pickWhere returns a random value ok accepts, or -1.
func (s *sub) pickWhere(ok func(graph.TensorID) bool) graph.TensorID {
	var c []graph.TensorID
	for _, v := range s.vals {
		if ok(v) {
			c = append(c, v)
		}
	}
	if len(c) == 0 {
		return -1
	}
	return c[s.g.r.Intn(len(c))]
}

func sameShape(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s *sub) add(v graph.TensorID) graph.TensorID {
	for _, x := range s.vals {
		if x == v {
			return v
		}
	}
	s.vals = append(s.vals, v)
	return v
}

// unary writes a unary operator of x into a new tensor.
func (s *sub) unary(x graph.TensorID) graph.TensorID {
	out := s.tensor(graph.Float32, s.shape(x))
	s.op(unaryOps[s.g.r.Intn(len(unaryOps))], []graph.TensorID{x}, []graph.TensorID{out})
	return s.add(out)
}

// overwritable returns a value an operator of this subgraph wrote, or -1.
func (s *sub) overwritable() graph.TensorID {
	return s.pickWhere(func(v graph.TensorID) bool { return s.written[v] })
}

// overwrite writes t again: an operator of t itself (LOGISTIC(t) -> t), or
// of another value of its shape.
func (s *sub) overwrite(t graph.TensorID) {
	if s.g.r.Intn(2) == 0 {
		s.op(unaryOps[s.g.r.Intn(len(unaryOps))], []graph.TensorID{t}, []graph.TensorID{t})
		return
	}
	x := s.pickWhere(func(v graph.TensorID) bool { return sameShape(s.shape(v), s.shape(t)) })
	if s.g.r.Intn(2) == 0 {
		s.op(unaryOps[s.g.r.Intn(len(unaryOps))], []graph.TensorID{x}, []graph.TensorID{t})
		return
	}
	y := s.pickWhere(func(v graph.TensorID) bool { return sameShape(s.shape(v), s.shape(t)) })
	s.op(binaryOps[s.g.r.Intn(len(binaryOps))], []graph.TensorID{x, y}, []graph.TensorID{t})
}

// binary writes a binary operator of x and a second operand: another value
// of x's shape, x itself, or a constant x's shape broadcasts with.
func (s *sub) binary(x graph.TensorID, broadcast bool) graph.TensorID {
	code := binaryOps[s.g.r.Intn(len(binaryOps))]
	sx := s.shape(x)
	var y graph.TensorID
	if broadcast && len(sx) <= 4 && s.g.r.Intn(2) == 0 {
		// A constant whose dimensions are x's or 1, possibly of lower
		// rank (trailing dimensions).
		rank := len(sx) - s.g.r.Intn(len(sx)+1)
		shape := make([]int32, rank)
		for i := range shape {
			shape[i] = sx[len(sx)-rank+i]
			if s.g.r.Intn(2) == 0 {
				shape[i] = 1
			}
		}
		y = s.constF(shape, -1, 1)
		if !sameShape(shape, sx) {
			s.g.f.Broadcasts++
		}
	} else {
		y = s.pickWhere(func(v graph.TensorID) bool { return sameShape(s.shape(v), sx) })
	}
	ins := []graph.TensorID{x, y}
	if s.g.r.Intn(2) == 0 {
		ins[0], ins[1] = y, x
	}
	out := s.tensor(graph.Float32, sx)
	s.op(code, ins, []graph.TensorID{out})
	return s.add(out)
}

// view writes a view of x (RESHAPE, SQUEEZE or EXPAND_DIMS) and returns
// it. TFLM at 90b983c registers no BITCAST kernel, so a model with one
// does not run there.
func (s *sub) view(x graph.TensorID) graph.TensorID {
	sx := s.shape(x)
	s.g.f.Views++
	ones := 0
	for _, d := range sx {
		if d == 1 {
			ones++
		}
	}
	switch k := s.g.r.Intn(3); {
	case k == 1 && ones > 0 && ones < len(sx):
		var shape []int32
		for _, d := range sx {
			if d != 1 {
				shape = append(shape, d)
			}
		}
		out := s.tensor(graph.Float32, shape)
		s.op(opSqueeze, []graph.TensorID{x}, []graph.TensorID{out})
		return out
	case k == 2 && len(sx) < 4:
		axis := s.g.r.Intn(len(sx) + 1)
		shape := append(append(append([]int32{}, sx[:axis]...), 1), sx[axis:]...)
		out := s.tensor(graph.Float32, shape)
		s.op(opExpandDims, []graph.TensorID{x, s.constI32([]int32{1}, int32(axis))}, []graph.TensorID{out})
		return out
	}
	shape := s.reshape(sx)
	out := s.tensor(graph.Float32, shape)
	s.op(opReshape, []graph.TensorID{x, s.constI32([]int32{int32(len(shape))}, shape...)}, []graph.TensorID{out})
	return out
}

// reshape returns another shape of as many elements, of rank 1 to 4.
func (s *sub) reshape(sx []int32) []int32 {
	n := int32(count(sx))
	switch s.g.r.Intn(3) {
	case 0:
		return []int32{n}
	case 1:
		return []int32{1, n}
	}
	// Split n into up to 4 factors.
	var shape []int32
	rest := n
	for len(shape) < 3 && rest > 1 {
		var divs []int32
		for d := int32(2); d <= rest; d++ {
			if rest%d == 0 {
				divs = append(divs, d)
			}
		}
		d := divs[s.g.r.Intn(len(divs))]
		shape = append(shape, d)
		rest /= d
		if s.g.r.Intn(3) == 0 {
			break
		}
	}
	if rest > 1 || len(shape) == 0 {
		shape = append(shape, rest)
	}
	s.g.r.Shuffle(len(shape), func(i, j int) { shape[i], shape[j] = shape[j], shape[i] })
	return shape
}

// staleView writes a view of a tensor t that is then written again, and
// then reads the view: the view must still hold t's old value.
func (s *sub) staleView() bool {
	t := s.overwritable()
	if t < 0 {
		return false
	}
	v := s.view(t)
	s.overwrite(t)
	s.g.f.StaleViews++
	if s.sg.Tensors[v].Type != graph.Float32 {
		return true
	}
	s.add(s.unary(v))
	return true
}

func (s *sub) pad(x graph.TensorID) graph.TensorID {
	sx := s.shape(x)
	pads := make([]int32, 2*len(sx))
	shape := append([]int32{}, sx...)
	for i := range pads {
		pads[i] = int32(s.g.r.Intn(3))
		shape[i/2] += pads[i]
	}
	ins := []graph.TensorID{x, s.constI32([]int32{int32(len(sx)), 2}, pads...)}
	code := opPad
	if s.g.r.Intn(2) == 0 {
		code = opPadV2
		ins = append(ins, s.constF([]int32{1}, -1, 1))
	}
	out := s.tensor(graph.Float32, shape)
	s.op(code, ins, []graph.TensorID{out})
	s.g.f.Pads++
	return s.add(out)
}

// window writes a convolution or pool of a [N, H, W, C] value.
func (s *sub) window(x graph.TensorID) graph.TensorID {
	sx := s.shape(x)
	h, w, c := sx[1], sx[2], sx[3]
	kh, kw := int32(1+s.g.r.Intn(3)), int32(1+s.g.r.Intn(3))
	win := &graph.Window{Padding: graph.PaddingSame, StrideH: int32(1 + s.g.r.Intn(2)), StrideW: int32(1 + s.g.r.Intn(2)),
		DilationH: 1, DilationW: 1}
	if s.g.r.Intn(2) == 0 && kh <= h && kw <= w {
		win.Padding = graph.PaddingValid
	}
	oh, ow := (h+win.StrideH-1)/win.StrideH, (w+win.StrideW-1)/win.StrideW
	if win.Padding == graph.PaddingValid {
		oh, ow = (h-kh)/win.StrideH+1, (w-kw)/win.StrideW+1
	}
	var code graph.Opcode
	var ins []graph.TensorID
	oc := c
	switch s.g.r.Intn(4) {
	case 0:
		code = opConv
		oc = int32(1 + s.g.r.Intn(4))
		ins = []graph.TensorID{x, s.constF([]int32{oc, kh, kw, c}, -0.5, 0.5), s.constF([]int32{oc}, -0.5, 0.5)}
	case 1:
		code = opDepthwise
		mult := int32(1 + s.g.r.Intn(2))
		oc = c * mult
		win.DepthMultiplier = mult
		ins = []graph.TensorID{x, s.constF([]int32{1, kh, kw, oc}, -0.5, 0.5), s.constF([]int32{oc}, -0.5, 0.5)}
	case 2:
		code = opAvgPool
		win.FilterH, win.FilterW = kh, kw
		ins = []graph.TensorID{x}
	default:
		code = opMaxPool
		win.FilterH, win.FilterW = kh, kw
		ins = []graph.TensorID{x}
	}
	out := s.tensor(graph.Float32, []int32{sx[0], oh, ow, oc})
	s.op(code, ins, []graph.TensorID{out}).Window = win
	s.g.f.Windows++
	return s.add(out)
}

func (s *sub) fullyConnected(x graph.TensorID) graph.TensorID {
	sx := s.shape(x)
	k := sx[len(sx)-1]
	batch := int32(count(sx)) / k
	units := int32(1 + s.g.r.Intn(6))
	out := s.tensor(graph.Float32, []int32{batch, units})
	s.op(opFullyConn, []graph.TensorID{x, s.constF([]int32{units, k}, -0.5, 0.5), s.constF([]int32{units}, -0.5, 0.5)},
		[]graph.TensorID{out})
	return s.add(out)
}

func (s *sub) concat(x graph.TensorID) graph.TensorID {
	sx := s.shape(x)
	ins := []graph.TensorID{x}
	shape := append([]int32{}, sx...)
	for n := 1 + s.g.r.Intn(2); n > 0; n-- {
		y := s.pickWhere(func(v graph.TensorID) bool {
			sv := s.shape(v)
			return len(sv) == len(sx) && sameShape(sv[1:], sx[1:])
		})
		ins = append(ins, y)
		shape[0] += s.shape(y)[0]
	}
	out := s.tensor(graph.Float32, shape)
	s.op(opConcat, ins, []graph.TensorID{out})
	return s.add(out)
}

// quant returns a tensor's quantization: scale and zero point.
func quant(scale float32, zero int64) *graph.Quantization {
	return &graph.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zero}}
}

// int8Tensor adds an INT8 tensor of the given quantization.
func (s *sub) int8Tensor(shape []int32, q *graph.Quantization) graph.TensorID {
	id := s.tensor(graph.Int8, shape)
	s.sg.Tensors[id].Quantization = q
	return id
}

func (s *sub) randQuant() *graph.Quantization {
	return quant(float32(1+s.g.r.Intn(8))/64, int64(s.g.r.Intn(41)-20))
}

// int8Segment quantizes x to INT8, runs a few INT8 operators on it (each
// with the quantization TFLM's kernel accepts: LOGISTIC and TANH have
// fixed output scales, pools keep their input's) and dequantizes the
// result back to FLOAT32.
func (s *sub) int8Segment(x graph.TensorID) graph.TensorID {
	r := s.g.r
	q := s.int8Tensor(s.shape(x), s.randQuant())
	s.op(opQuantize, []graph.TensorID{x}, []graph.TensorID{q})
	vals := []graph.TensorID{q}
	n := 1 + r.Intn(4)
	s.g.f.Int8 += n + 2
	for ; n > 0; n-- {
		v := vals[r.Intn(len(vals))]
		sv, qv := s.shape(v), s.sg.Tensors[v].Quantization
		var out graph.TensorID
		switch k := r.Intn(8); {
		case k == 0:
			out = s.int8Tensor(sv, s.randQuant())
			s.op([]graph.Opcode{opRelu, opRelu6}[r.Intn(2)], []graph.TensorID{v}, []graph.TensorID{out})
		case k == 1:
			out = s.int8Tensor(sv, quant(1.0/256, -128))
			s.op(opLogistic, []graph.TensorID{v}, []graph.TensorID{out})
		case k == 2:
			out = s.int8Tensor(sv, quant(1.0/128, 0))
			s.op(opTanh, []graph.TensorID{v}, []graph.TensorID{out})
		case k == 3:
			// Requantization, which heliac may write in place.
			out = s.int8Tensor(sv, s.randQuant())
			s.op(opQuantize, []graph.TensorID{v}, []graph.TensorID{out})
		case k == 4 && len(sv) == 4:
			win := &graph.Window{Padding: graph.PaddingSame, StrideH: int32(1 + r.Intn(2)), StrideW: int32(1 + r.Intn(2)),
				DilationH: 1, DilationW: 1, FilterH: int32(1 + r.Intn(2)), FilterW: int32(1 + r.Intn(2))}
			oh, ow := (sv[1]+win.StrideH-1)/win.StrideH, (sv[2]+win.StrideW-1)/win.StrideW
			out = s.int8Tensor([]int32{sv[0], oh, ow, sv[3]}, qv)
			s.op([]graph.Opcode{opMaxPool, opAvgPool}[r.Intn(2)], []graph.TensorID{v}, []graph.TensorID{out}).Window = win
			s.g.f.Windows++
		case k == 5:
			shape := s.reshape(sv)
			out = s.int8Tensor(shape, qv)
			s.op(opReshape, []graph.TensorID{v, s.constI32([]int32{int32(len(shape))}, shape...)}, []graph.TensorID{out})
			s.g.f.Views++
		case k == 6 && v != q:
			// Written over itself.
			s.op(opRelu, []graph.TensorID{v}, []graph.TensorID{v})
			continue
		default:
			var w graph.TensorID = v
			for _, c := range vals {
				if sameShape(s.shape(c), sv) && r.Intn(2) == 0 {
					w = c
				}
			}
			out = s.int8Tensor(sv, s.randQuant())
			s.op([]graph.Opcode{opAdd, opSub, opMul}[r.Intn(3)], []graph.TensorID{v, w}, []graph.TensorID{out})
		}
		vals = append(vals, out)
	}
	last := vals[len(vals)-1]
	out := s.tensor(graph.Float32, s.shape(last))
	s.op(opDequantize, []graph.TensorID{last}, []graph.TensorID{out})
	return s.add(out)
}

// step adds one random operator (or a short pattern of them) reading the
// subgraph's values. shapeKeeping keeps to operators whose output has as
// many elements as their input, for control-flow bodies.
func (s *sub) step(shapeKeeping bool) {
	r := s.g.r
	x := s.pick()
	sx := s.shape(x)
	if s.idx == 0 && s.g.rc.Intn(8) == 0 {
		s.copies(x)
	}
	if s.idx == 0 && s.g.rs.Intn(4) == 0 {
		s.cnnSegment(x)
	}
	k := r.Intn(100)
	switch {
	case k < 15:
		s.unary(x)
	case k < 30:
		s.binary(x, !shapeKeeping)
	case k < 38:
		if t := s.overwritable(); t >= 0 {
			s.overwrite(t)
		} else {
			s.unary(x)
		}
	case k < 50:
		if !s.staleView() {
			s.unary(x)
		}
	case k < 58:
		v := s.view(x)
		if s.sg.Tensors[v].Type == graph.Float32 {
			s.add(v)
		}
	case shapeKeeping:
		s.unary(x)
	case k < 66:
		s.pad(x)
	case k < 80 && len(sx) == 4:
		y := s.window(x)
		for r.Intn(2) == 0 {
			y = s.window(y)
		}
	case k < 86:
		s.fullyConnected(x)
	case k < 92:
		s.concat(x)
	case k < 97:
		s.int8Segment(x)
	default:
		s.binary(x, true)
	}
}

// main builds subgraph 0 and the subgraphs it calls.
func (g *gen) main() {
	r := g.r
	s := g.newSub()
	h, w, c := int32(2+r.Intn(6)), int32(2+r.Intn(6)), int32(1+r.Intn(4))
	x0 := s.tensor(graph.Float32, []int32{1, h, w, c})
	s.sg.Inputs = append(s.sg.Inputs, x0)
	s.add(x0)
	if r.Intn(2) == 0 {
		x1 := s.tensor(graph.Float32, []int32{1, h, w, c})
		s.sg.Inputs = append(s.sg.Inputs, x1)
		s.add(x1)
	}
	if r.Intn(2) == 0 {
		s.scalar = s.tensor(graph.Float32, []int32{1})
		s.sg.Inputs = append(s.sg.Inputs, s.scalar)
	}
	vars := g.variables(s, x0)
	var state []graph.TensorID
	if r.Intn(3) == 0 {
		// An is_variable tensor: persistent state across invocations.
		st := s.tensor(graph.Float32, s.shape(x0))
		s.sg.Tensors[st].IsVariable = true
		state = append(state, st)
		g.f.VarTensors++
	}
	steps := 6 + r.Intn(12)
	for i := 0; i < steps; i++ {
		switch k := r.Intn(100); {
		case k < 12 && len(vars) > 0:
			vars[r.Intn(len(vars))].access(s)
		case k < 18 && len(state) > 0:
			g.stateStep(s, state[r.Intn(len(state))], x0)
		case k < 23 && s.scalar >= 0:
			g.ifOp(s)
		case k < 28 && s.scalar >= 0:
			g.whileOp(s)
		default:
			s.step(false)
		}
	}
	for _, v := range vars {
		v.finish(s)
	}
	for _, st := range state {
		if !s.written[st] {
			g.stateStep(s, st, x0)
		}
	}
	// Outputs: the last value, and a few others written in this
	// subgraph.
	outs := map[graph.TensorID]bool{}
	last := s.vals[len(s.vals)-1]
	if s.written[last] {
		outs[last] = true
	}
	var cands []graph.TensorID
	for _, v := range s.vals {
		if s.written[v] && !s.sg.Tensors[v].IsVariable {
			cands = append(cands, v)
		}
	}
	for n := 1 + r.Intn(3); n > 0 && len(cands) > 0; n-- {
		outs[cands[r.Intn(len(cands))]] = true
	}
	if len(outs) == 0 {
		outs[s.unary(x0)] = true
	}
	for _, o := range s.copyOuts {
		outs[o] = true
	}
	for id := range s.sg.Tensors {
		if outs[graph.TensorID(id)] {
			s.sg.Outputs = append(s.sg.Outputs, graph.TensorID(id))
		}
	}
	s.finish()
}

// stateStep reads and writes an is_variable tensor: state = f(state, x)
// written over itself, or from another value, then read.
func (g *gen) stateStep(s *sub, st, x graph.TensorID) {
	if g.r.Intn(2) == 0 {
		s.op(binaryOps[g.r.Intn(len(binaryOps))], []graph.TensorID{st, x}, []graph.TensorID{st})
	} else {
		s.op(opTanh, []graph.TensorID{x}, []graph.TensorID{st})
	}
	s.add(s.unary(st))
}

// resVar is a resource variable of the main subgraph: its handles there
// (one per container, "" for none), and whether each has been assigned.
type resVar struct {
	variable
	handles  []graph.TensorID
	assigned map[graph.TensorID]bool
	// named and unnamed say whether some handle, in any subgraph, has a
	// container and whether some has none.
	named, unnamed bool
}

// containers a generated handle may name.
var containers = []string{"c0", "c1"}

// variables declares the main subgraph's resource variables. TFLM
// (micro_resource_variable.cc FindId at 90b983c) matches a handle with no
// container to a variable of its shared name in any container, and
// compares containers with strcmp, so once a variable was made by a handle
// with no container no handle with one may follow: every handle with a
// container is made first, at the top of subgraph 0 (TFLM prepares
// subgraph 0's operators in order, then the other subgraphs'); handles with
// none are made later, and in the CALL_ONCE initializer. Every handle
// assigns its variable, so that TFLM allocates every variable a handle can
// reach before any read.
func (g *gen) variables(s *sub, x0 graph.TensorID) []*resVar {
	r := g.r
	n := r.Intn(3)
	if n == 0 {
		return nil
	}
	var vars []*resVar
	for i := 0; i < n; i++ {
		v := &resVar{variable: variable{name: fmt.Sprintf("v%d", i), shape: s.shape(x0)}, assigned: map[graph.TensorID]bool{}}
		for _, c := range containers {
			if r.Intn(2) == 0 {
				v.handles = append(v.handles, s.handle(c, v.name))
				v.named = true
			}
		}
		if r.Intn(3) > 0 || len(v.handles) == 0 {
			// Made after every handle with a container; see access.
			v.handles = append(v.handles, -1)
			v.unnamed = true
		}
		vars = append(vars, v)
	}
	if r.Intn(2) == 0 {
		g.callOnce(s, vars)
	}
	for _, v := range vars {
		if v.named && v.unnamed {
			g.f.SharedNames++
		}
	}
	return vars
}

// handle writes a VAR_HANDLE operator.
func (s *sub) handle(container, name string) graph.TensorID {
	h := s.tensor(graph.Resource, []int32{})
	s.op(opVarHandle, nil, []graph.TensorID{h}).Resource = &graph.ResourceName{Container: container, SharedName: name, HasContainer: container != ""}
	s.g.f.VarHandles++
	if container == "" {
		s.g.f.NoContainer++
	}
	return h
}

// callOnce writes a CALL_ONCE whose initializer assigns constants to
// some variables through handles with no container.
func (g *gen) callOnce(s *sub, vars []*resVar) {
	init := g.newSub()
	for _, v := range vars {
		if g.r.Intn(3) == 0 {
			continue
		}
		h := init.handle("", v.name)
		v.unnamed = true
		init.op(opAssignVariable, []graph.TensorID{h, init.constF(v.shape, -1, 1)}, nil)
	}
	init.finish()
	s.op(opCallOnce, nil, nil).Called = []graph.SubgraphIndex{init.idx}
	g.f.CallOnce++
}

// access reads or assigns the variable through one of its handles.
func (v *resVar) access(s *sub) {
	i := s.g.r.Intn(len(v.handles))
	if v.handles[i] < 0 {
		v.handles[i] = s.handle("", v.name)
	}
	h := v.handles[i]
	if s.g.r.Intn(2) == 0 {
		out := s.tensor(graph.Float32, v.shape)
		s.op(opReadVariable, []graph.TensorID{h}, []graph.TensorID{out})
		s.add(out)
		return
	}
	x := s.pickWhere(func(t graph.TensorID) bool { return sameShape(s.shape(t), v.shape) })
	s.op(opAssignVariable, []graph.TensorID{h, x}, nil)
	v.assigned[h] = true
}

// finish assigns the variable through every handle that has not.
func (v *resVar) finish(s *sub) {
	for i, h := range v.handles {
		if h < 0 {
			h = s.handle("", v.name)
			v.handles[i] = h
		}
		if v.assigned[h] {
			continue
		}
		x := s.pickWhere(func(t graph.TensorID) bool { return sameShape(s.shape(t), v.shape) })
		s.op(opAssignVariable, []graph.TensorID{h, x}, nil)
		v.assigned[h] = true
	}
}

// body fills a called subgraph whose inputs have the given shapes and
// whose outputs have the shapes of the inputs from first on.
func (g *gen) body(ins [][]int32, first int) *sub {
	b := g.newSub()
	for _, sh := range ins {
		id := b.tensor(graph.Float32, sh)
		b.sg.Inputs = append(b.sg.Inputs, id)
		b.add(id)
	}
	for n := 1 + g.r.Intn(4); n > 0; n-- {
		b.step(true)
	}
	for _, sh := range ins[first:] {
		// Any value of as many elements, viewed in the output's
		// shape, then one operator into the output.
		v := b.pickWhere(func(t graph.TensorID) bool { return count(b.shape(t)) == count(sh) })
		if !sameShape(b.shape(v), sh) {
			nv := b.tensor(graph.Float32, sh)
			b.op(opReshape, []graph.TensorID{v, b.constI32([]int32{int32(len(sh))}, sh...)}, []graph.TensorID{nv})
			v = nv
		}
		out := b.tensor(graph.Float32, sh)
		b.op(unaryOps[g.r.Intn(len(unaryOps))], []graph.TensorID{v}, []graph.TensorID{out})
		b.sg.Outputs = append(b.sg.Outputs, out)
	}
	return b
}

// ifOp writes IF(scalar > c, operands...) with two random branches.
func (g *gen) ifOp(s *sub) {
	cond := s.tensor(graph.Bool, []int32{1})
	s.op(opGreater, []graph.TensorID{s.scalar, s.constF([]int32{1}, -0.5, 0.5)}, []graph.TensorID{cond})
	operands := []graph.TensorID{s.pick()}
	if g.r.Intn(2) == 0 {
		operands = append(operands, s.pick())
	}
	var shapes [][]int32
	for _, o := range operands {
		shapes = append(shapes, s.shape(o))
	}
	then := g.body(shapes, 0)
	then.finish()
	els := g.body(shapes, 0)
	els.finish()
	var outs []graph.TensorID
	for _, sh := range shapes {
		outs = append(outs, s.tensor(graph.Float32, sh))
	}
	s.op(opIf, append([]graph.TensorID{cond}, operands...), outs).Called = []graph.SubgraphIndex{then.idx, els.idx}
	for _, o := range outs {
		s.add(o)
	}
	g.f.Ifs++
}

// whileOp writes WHILE(i = scalar, x) that runs while i < limit, adding 1
// to i and a random body to x: two or three iterations, by the input.
func (g *gen) whileOp(s *sub) {
	x := s.pick()
	shapes := [][]int32{{1}, s.shape(x)}
	cond := g.newSub()
	ci, cx := cond.tensor(graph.Float32, []int32{1}), cond.tensor(graph.Float32, shapes[1])
	cond.sg.Inputs = []graph.TensorID{ci, cx}
	less := cond.tensor(graph.Bool, []int32{1})
	cond.op(opLess, []graph.TensorID{ci, cond.constF([]int32{1}, 1.5, 2.5)}, []graph.TensorID{less})
	cond.sg.Outputs = []graph.TensorID{less}
	cond.finish()
	body := g.body(shapes, 1)
	bi := body.sg.Inputs[0]
	ni := body.tensor(graph.Float32, []int32{1})
	body.op(opAdd, []graph.TensorID{bi, body.constF([]int32{1}, 1, 1)}, []graph.TensorID{ni})
	body.sg.Outputs = append([]graph.TensorID{ni}, body.sg.Outputs...)
	body.finish()
	oi, ox := s.tensor(graph.Float32, []int32{1}), s.tensor(graph.Float32, shapes[1])
	s.op(opWhile, []graph.TensorID{s.scalar, x}, []graph.TensorID{oi, ox}).Called = []graph.SubgraphIndex{cond.idx, body.idx}
	s.add(ox)
	g.f.Whiles++
}

// TFLite builtin codes of the slicing operators copies uses.
const (
	opStridedSlice graph.Opcode = 45
	opSplit        graph.Opcode = 49
	opSlice        graph.Opcode = 65
)

func init() {
	opNames[opStridedSlice], opNames[opSplit], opNames[opSlice] = "STRIDED_SLICE", "SPLIT", "SLICE"
}

// copies adds, in the main subgraph, a pattern of the operators the
// exact-overlap copy contracts are about, drawing from rc alone: slices of
// x (STRIDED_SLICE with strides 1, SLICE, SPLIT) along its first
// dimension that is not 1 (each output then one contiguous block of x, so
// heliac may make it a view) or, now and then, along its last dimension
// (no block unless the earlier dimensions are all 1); an elementwise
// operator on each; and a CONCATENATION of the results along the sliced
// axis (its inputs then fit their slots of its output), whose result
// (after ABS) is a model output. None of it is read by the rest of the
// model, whose values and draws stay as they were.
func (s *sub) copies(x graph.TensorID) {
	r := s.g.rc
	sx := s.shape(x)
	rank := len(sx)
	if rank == 0 || rank > 4 {
		return
	}
	axis := 0
	for axis < rank-1 && sx[axis] == 1 {
		axis++
	}
	if r.Intn(6) == 0 {
		axis = rank - 1
	}
	n := sx[axis]
	if n < 2 {
		return
	}
	block := true
	for d := range axis {
		block = block && sx[d] == 1
	}
	// Up to three row ranges [lo, hi) along axis, in order, overlapping
	// now and then (halo rows, as the stripe rewrite slices).
	var ranges [][2]int32
	kind := r.Intn(3)
	parts := int32(2 + r.Intn(2))
	if n%parts != 0 {
		parts = n // rows one by one, within CONCATENATION's 10 inputs
	}
	if kind == 2 && parts > 10 {
		kind = 0
	}
	if kind == 2 { // SPLIT into equal parts
		for i := range parts {
			ranges = append(ranges, [2]int32{i * n / parts, (i + 1) * n / parts})
		}
	} else {
		cut := 1 + int32(r.Intn(int(n-1)))
		halo := int32(r.Intn(2))
		ranges = [][2]int32{{0, min(cut+halo, n)}, {cut, n}}
	}
	shapeOf := func(rg [2]int32) []int32 {
		sh := append([]int32{}, sx...)
		sh[axis] = rg[1] - rg[0]
		return sh
	}
	var outs []graph.TensorID
	switch kind {
	case 2:
		for _, rg := range ranges {
			outs = append(outs, s.tensor(graph.Float32, shapeOf(rg)))
		}
		s.op(opSplit, []graph.TensorID{s.constI32([]int32{}, int32(axis)), x}, outs).Options =
			&graph.Options{Table: "SplitOptions", Fields: []graph.OptionField{{Name: "num_splits", Kind: graph.OptionInt, Present: true, Int: int64(len(ranges))}}}
	default:
		for _, rg := range ranges {
			o := s.tensor(graph.Float32, shapeOf(rg))
			begin, end := make([]int32, rank), append([]int32{}, sx...)
			begin[axis], end[axis] = rg[0], rg[1]
			if kind == 0 {
				s.op(opStridedSlice, []graph.TensorID{x, s.constI32([]int32{int32(rank)}, begin...), s.constI32([]int32{int32(rank)}, end...),
					s.constI32([]int32{int32(rank)}, ones(rank)...)}, []graph.TensorID{o}).Options = &graph.Options{Table: "StridedSliceOptions"}
			} else {
				size := shapeOf(rg)
				if r.Intn(2) == 0 && rg[1] == n {
					size[axis] = -1
				}
				s.op(opSlice, []graph.TensorID{x, s.constI32([]int32{int32(rank)}, begin...), s.constI32([]int32{int32(rank)}, size...)},
					[]graph.TensorID{o})
			}
			outs = append(outs, o)
		}
	}
	ops := len(ranges)
	if kind == 2 {
		ops = 1
	}
	s.g.f.Slices += ops
	if block {
		s.g.f.BlockSlices += ops
	}
	var results []graph.TensorID
	var total int32
	for _, o := range outs {
		u := s.tensor(graph.Float32, s.shape(o))
		s.op(unaryOps[r.Intn(len(unaryOps))], []graph.TensorID{o}, []graph.TensorID{u})
		results = append(results, u)
		total += s.shape(o)[axis]
	}
	sh := append([]int32{}, sx...)
	sh[axis] = total
	y := s.tensor(graph.Float32, sh)
	ax := int64(axis)
	if r.Intn(2) == 0 {
		ax -= int64(rank) // a negative axis, as TFLM resolves it
	}
	s.op(opConcat, results, []graph.TensorID{y}).Options = &graph.Options{Table: "ConcatenationOptions",
		Fields: []graph.OptionField{{Name: "axis", Kind: graph.OptionInt, Present: true, Int: ax}}}
	s.g.f.Concats++
	out := s.tensor(graph.Float32, sh)
	s.op(opAbs, []graph.TensorID{y}, []graph.TensorID{out})
	s.copyOuts = append(s.copyOuts, out)
}

func ones(n int) []int32 {
	v := make([]int32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
