package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// tailOp is a one-operator model for the TFLM-arena data: tensors, the
// operator's code and operands, and which tensors hold constant data.
type tailOp struct {
	code     graph.Opcode
	name     string
	tensors  []graph.Tensor
	in, out  []graph.TensorID
	constant []graph.TensorID
}

func (o tailOp) model() *graph.Model {
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{Tensors: append([]graph.Tensor(nil), o.tensors...),
		Ops: []graph.Op{{Code: o.code, CodeName: o.name, Inputs: o.in, Outputs: o.out}}}}}
	for _, id := range o.constant {
		m.Buffers = append(m.Buffers, graph.Buffer{Data: []byte{1}})
		m.Subgraphs[0].Tensors[id].Buffer = graph.BufferIndex(len(m.Buffers) - 1)
	}
	return m
}

// persistent and temps read a kernel's Prepare: its persistent buffers'
// bytes in order, and how many temporary tensors it takes.
func persistent(k kernels.TFLMKernel) []int64 {
	var out []int64
	for _, s := range k.Prepare {
		if s.Kind == kernels.TFLMPersistent {
			out = append(out, s.Alloc.Bytes)
		}
	}
	return out
}

func temps(k kernels.TFLMKernel) int {
	n := 0
	for _, s := range k.Prepare {
		if s.Kind == kernels.TFLMTempTensor {
			n++
		}
	}
	return n
}

func cpu(t *testing.T, name string) kernels.Target {
	t.Helper()
	c, err := kernels.CPU(name)
	require.NoError(t, err)
	return c
}

func tt(name string, ty graph.ElementType, shape ...int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: ty, Shape: shape}
}

func perChannel(t graph.Tensor, n int) graph.Tensor {
	q := &graph.Quantization{}
	for range n {
		q.Scale = append(q.Scale, 0.5)
		q.ZeroPoint = append(q.ZeroPoint, 0)
	}
	t.Quantization = q
	return t
}

// TestCMSISNNTFLMArenaSteps: what TFLM's CMSIS-NN kernels take from the
// arena in Prepare, and how it scales with the model and the CPU (the
// expected bytes follow from each kernel's rule: an int32 per output
// channel, per filter, per state unit...).
func TestCMSISNNTFLMArenaSteps(t *testing.T) {
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	m55, m4, m0, host := cpu(t, "cortex-m55"), cpu(t, "cortex-m4"), cpu(t, "cortex-m0"), kernels.Target{PointerSize: 8}
	conv := func(ty graph.ElementType, c int32) tailOp {
		return tailOp{code: graph.Conv2D, name: "CONV_2D", tensors: []graph.Tensor{
			tt("in", ty, 1, 8, 8, 3), tt("w", ty, c, 3, 3, 3), tt("b", graph.Int32, c), tt("out", ty, 1, 8, 8, c)},
			in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}, constant: []graph.TensorID{1, 2}}
	}
	depthwise := func(ty graph.ElementType, c int32) tailOp {
		return tailOp{code: graph.DepthwiseConv2D, name: "DEPTHWISE_CONV_2D", tensors: []graph.Tensor{
			tt("in", ty, 1, 8, 8, c), tt("w", ty, 1, 3, 3, c), tt("b", graph.Int32, c), tt("out", ty, 1, 8, 8, c)},
			in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}, constant: []graph.TensorID{1, 2}}
	}
	fc := func(ty graph.ElementType, depth, accum int32, outShape []int32, constant ...graph.TensorID) tailOp {
		return tailOp{code: 9, name: "FULLY_CONNECTED", tensors: []graph.Tensor{
			tt("in", ty, 2, accum), tt("w", ty, depth, accum), tt("b", graph.Int32, depth), tt("out", ty, outShape...)},
			in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}, constant: constant}
	}
	fcPerChannel := fc(graph.Int8, 10, 6, []int32{2, 10}, 1, 2)
	fcPerChannel.tensors[1] = perChannel(fcPerChannel.tensors[1], 10)
	svdf := func(ty graph.ElementType, filters int32) tailOp {
		return tailOp{code: 27, name: "SVDF", tensors: []graph.Tensor{
			tt("in", ty, 1, 16), tt("wf", ty, filters, 16), tt("wt", ty, filters, 4), tt("b", graph.Int32, filters),
			{Name: "state", Type: ty, Shape: []int32{1, 4 * filters}, IsVariable: true}, tt("out", ty, 1, filters)},
			in: []graph.TensorID{0, 1, 2, 3, 4}, out: []graph.TensorID{5}, constant: []graph.TensorID{1, 2, 3}}
	}
	softmax := func(ty graph.ElementType) tailOp {
		return tailOp{code: 25, name: "SOFTMAX", tensors: []graph.Tensor{tt("in", ty, 1, 10), tt("out", ty, 1, 10)},
			in: []graph.TensorID{0}, out: []graph.TensorID{1}}
	}
	pool := func(code graph.Opcode, name string) tailOp {
		return tailOp{code: code, name: name, tensors: []graph.Tensor{tt("in", graph.Int8, 1, 8, 8, 4), tt("out", graph.Int8, 1, 4, 4, 4)},
			in: []graph.TensorID{0}, out: []graph.TensorID{1}}
	}
	transposeConv := func(ty graph.ElementType, c int32) tailOp {
		return tailOp{code: graph.TransposeConv, name: "TRANSPOSE_CONV", tensors: []graph.Tensor{
			tt("shape", graph.Int32, 4), tt("w", ty, c, 3, 3, 4), tt("in", ty, 1, 4, 4, 4), tt("out", ty, 1, 8, 8, c)},
			in: []graph.TensorID{0, 1, 2, -1}, out: []graph.TensorID{3}, constant: []graph.TensorID{0, 1}}
	}
	lstm := func(act, cell graph.ElementType, units int32) tailOp {
		o := tailOp{code: 44, name: "UNIDIRECTIONAL_SEQUENCE_LSTM", out: []graph.TensorID{24}}
		for i := range 24 {
			o.tensors = append(o.tensors, tt("t", act, 1, units))
			o.in = append(o.in, graph.TensorID(i))
		}
		o.tensors[18].IsVariable, o.tensors[19].Type = true, cell
		o.tensors = append(o.tensors, tt("out", act, 1, 3, units))
		return o
	}
	batchMatmul := func(ty graph.ElementType) tailOp {
		return tailOp{code: 126, name: "BATCH_MATMUL", tensors: []graph.Tensor{
			tt("lhs", ty, 1, 4, 6), tt("rhs", ty, 1, 6, 5), tt("out", ty, 1, 4, 5)},
			in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}}
	}
	cases := []struct {
		name   string
		op     tailOp
		target kernels.Target
		temps  int
		want   []int64 // persistent buffers of Prepare
	}{
		{"conv int8: multiplier and shift per output channel", conv(graph.Int8, 16), m55, 7, []int64{4 * 16, 4 * 16}},
		{"conv int8, twice the channels", conv(graph.Int8, 32), m55, 7, []int64{4 * 32, 4 * 32}},
		{"conv float: no per-channel arrays", conv(graph.Float32, 16), m55, 7, nil},
		{"depthwise int8: per channel of the filter's last dimension", depthwise(graph.Int8, 24), m4, 7, []int64{4 * 24, 4 * 24}},
		{"depthwise float", depthwise(graph.Float32, 24), m4, 7, nil},
		{"fully connected int8 on MVE: kernel sums, an int32 per output", fc(graph.Int8, 10, 6, []int32{2, 10}, 1, 2), m55, 4, []int64{4 * 10}},
		{"fully connected int8 on MVE, 20 outputs", fc(graph.Int8, 20, 6, []int32{2, 20}, 1, 2), m55, 4, []int64{4 * 20}},
		{"fully connected int8 on DSP: none", fc(graph.Int8, 10, 6, []int32{2, 10}, 1, 2), m4, 4, nil},
		{"fully connected int8 without extensions: none", fc(graph.Int8, 10, 6, []int32{2, 10}, 1, 2), m0, 4, nil},
		{"fully connected int8 on a host build: none", fc(graph.Int8, 10, 6, []int32{2, 10}, 1, 2), host, 4, nil},
		{"fully connected int8 on MVE, filter not constant: scratch instead", fc(graph.Int8, 10, 6, []int32{2, 10}, 2), m55, 4, nil},
		{"fully connected int8 on MVE as a 1x1 convolution: none", fc(graph.Int8, 10, 8, []int32{1, 2, 10}, 1, 2), m55, 4, nil},
		{"fully connected per-channel int8: multiplier and shift per scale, then kernel sums", fcPerChannel, m55, 4, []int64{4 * 10, 4 * 10, 4 * 10}},
		{"svdf int8 on MVE: kernel sums, an int32 per filter", svdf(graph.Int8, 8), m55, 6, []int64{4 * 8}},
		{"svdf int8 on MVE, 12 filters", svdf(graph.Int8, 12), m55, 6, []int64{4 * 12}},
		{"svdf int8 on DSP: none", svdf(graph.Int8, 8), m4, 6, nil},
		{"softmax int16: two lookup tables", softmax(graph.Int16), m55, 2, []int64{1026, 1026}},
		{"softmax int8", softmax(graph.Int8), m55, 2, nil},
		{"average pool: input and output twice", pool(graph.AveragePool2D, "AVERAGE_POOL_2D"), m4, 4, nil},
		{"max pool", pool(graph.MaxPool2D, "MAX_POOL_2D"), m4, 2, nil},
		{"transpose conv int8", transposeConv(graph.Int8, 6), m55, 6, []int64{4 * 6, 4 * 6}},
		{"transpose conv float: the arrays all the same, fewer temporaries", transposeConv(graph.Float32, 6), m55, 3, []int64{4 * 6, 4 * 6}},
		{"lstm int8 with int16 cell: eight int32 kernel sums per unit", lstm(graph.Int8, graph.Int16, 5), m55, 25, []int64{20, 20, 20, 20, 20, 20, 20, 20}},
		{"lstm int16: eight int64 kernel sums per unit", lstm(graph.Int16, graph.Int16, 5), m55, 25, []int64{40, 40, 40, 40, 40, 40, 40, 40}},
		{"lstm float", lstm(graph.Float32, graph.Float32, 5), m55, 25, nil},
		{"batch matmul float: transposed rhs (struct, dims, data), output dims", batchMatmul(graph.Float32), m55, 3, []int64{12, 4 + 4*3, 4 * 30, 4 + 4*3}},
		{"batch matmul int8: bytes of int8, then the quantization", batchMatmul(graph.Int8), m55, 3, []int64{12, 4 + 4*3, 30, 4 + 4*3, 28}},
		{"batch matmul on host64: a larger TfLiteEvalTensor", batchMatmul(graph.Float32), host, 3, []int64{24, 4 + 4*3, 4 * 30, 4 + 4*3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.op.model()
			k, ok := lib.On(c.target.ISA).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], c.target)
			require.True(t, ok)
			assert.Equal(t, c.want, persistent(k))
			assert.Equal(t, c.temps, temps(k))
			require.Len(t, k.Init, 1)
			assert.Equal(t, int64(16), k.Init[0].Align)
		})
	}
}

// TestCMSISNNTFLMArenaFallsBack: operators whose CMSIS-NN registration
// keeps the reference kernel's Init and Prepare (MUL, PAD, TRANSPOSE,
// MAXIMUM...) and operators CMSIS-NN does not replace take what the
// reference kernels take; the kernels CMSIS-NN replaces with an OpData
// of their own (which holds the reference one and more) take more at
// Init.
func TestCMSISNNTFLMArenaFallsBack(t *testing.T) {
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	two := []graph.Tensor{tt("a", graph.Int8, 1, 4), tt("b", graph.Int8, 1, 4), tt("c", graph.Int8, 1, 4)}
	for _, o := range []tailOp{
		{code: 18, name: "MUL", tensors: two, in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}},
		{code: 55, name: "MAXIMUM", tensors: two, in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}},
		{code: 39, name: "TRANSPOSE", tensors: two, in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}},
		{code: 34, name: "PAD", tensors: two, in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}},
		{code: graph.Reshape, name: "RESHAPE", tensors: two, in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}},
	} {
		m := o.model()
		for _, ptr := range []int64{4, 8} {
			got, ok := lib.On(kernels.MVE).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.Target{PointerSize: ptr, ISA: kernels.MVE})
			require.True(t, ok, o.name)
			want, ok := ref.TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.Target{PointerSize: ptr})
			require.True(t, ok, o.name)
			assert.Equal(t, want, got, o.name)
		}
	}
	conv := tailOp{code: graph.Conv2D, name: "CONV_2D", tensors: []graph.Tensor{
		tt("in", graph.Int8, 1, 8, 8, 3), tt("w", graph.Int8, 4, 3, 3, 3), tt("b", graph.Int32, 4), tt("out", graph.Int8, 1, 8, 8, 4)},
		in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}}
	m := conv.model()
	for _, ptr := range []int64{4, 8} {
		got, ok := lib.On(kernels.NoDSP).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.Target{PointerSize: ptr})
		require.True(t, ok)
		want, _ := ref.TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.Target{PointerSize: ptr})
		assert.Greater(t, got.Init[0].Bytes, want.Init[0].Bytes, "pointer size %d", ptr)
		assert.Equal(t, want.Params, got.Params, "the parser is the same")
	}
}

// TestCMSISNNTFLMArenaUnknown: an operator the data cannot size is
// refused, not guessed.
func TestCMSISNNTFLMArenaUnknown(t *testing.T) {
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	bm := tailOp{code: 126, name: "BATCH_MATMUL", tensors: []graph.Tensor{
		tt("lhs", graph.Int32, 1, 4, 6), tt("rhs", graph.Int32, 1, 6, 5), tt("out", graph.Int32, 1, 4, 5)},
		in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}}
	m := bm.model()
	_, ok := lib.On(kernels.NoDSP).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.CortexM)
	assert.False(t, ok, "INT32 batch matmul")
	_, ok = lib.TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.CortexM)
	assert.False(t, ok, "a set of code paths: each member has its own")
	m.Subgraphs[0].Ops[0] = graph.Op{Code: graph.Custom, CustomName: "Mystery", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{2}}
	_, ok = lib.On(kernels.NoDSP).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.CortexM)
	assert.False(t, ok, "unknown custom operator")
	_, ok = (&kernels.Library{Name: "other"}).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], kernels.CortexM)
	assert.False(t, ok, "unknown library")
}

// TestTFLMReferenceFullyConnectedAndSoftmax: the reference kernels call
// the same CalculateOpDataFullyConnected and CalculateSoftmaxParams as
// the CMSIS-NN ones, so a per-channel quantized FULLY_CONNECTED keeps an
// int32 multiplier and shift per scale, and an INT16 SOFTMAX two lookup
// tables, under either library.
func TestTFLMReferenceFullyConnectedAndSoftmax(t *testing.T) {
	fc := func(in graph.ElementType, scales int) tailOp {
		w := tt("w", graph.Int8, 10, 6)
		if in == graph.Float32 {
			w.Type = graph.Float32
		}
		if scales > 0 {
			w = perChannel(w, scales)
		}
		return tailOp{code: 9, name: "FULLY_CONNECTED", tensors: []graph.Tensor{tt("in", in, 2, 6), w, tt("b", graph.Int32, 10), tt("out", in, 2, 10)},
			in: []graph.TensorID{0, 1, 2}, out: []graph.TensorID{3}}
	}
	softmax := func(ty graph.ElementType) tailOp {
		return tailOp{code: 25, name: "SOFTMAX", tensors: []graph.Tensor{tt("in", ty, 1, 10), tt("out", ty, 1, 10)},
			in: []graph.TensorID{0}, out: []graph.TensorID{1}}
	}
	cases := []struct {
		name string
		op   tailOp
		want []int64
	}{
		{"per-channel int8, 10 scales", fc(graph.Int8, 10), []int64{40, 40}},
		{"per-channel int16, 10 scales", fc(graph.Int16, 10), []int64{40, 40}},
		{"per-tensor int8", fc(graph.Int8, 1), nil},
		{"float", fc(graph.Float32, 0), nil},
		{"softmax int16", softmax(graph.Int16), []int64{1026, 1026}},
		{"softmax int8", softmax(graph.Int8), nil},
	}
	for _, name := range []string{kernels.TFLMReference, kernels.CMSISNN} {
		lib, err := kernels.Lookup(name)
		require.NoError(t, err)
		for _, c := range cases {
			m := c.op.model()
			k, ok := lib.On(kernels.DSP).TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], cpu(t, "cortex-m4"))
			require.True(t, ok, "%s %s", name, c.name)
			assert.Equal(t, c.want, persistent(k), "%s %s", name, c.name)
		}
	}
}

// TestTFLMBatchMatmulTransposes: BATCH_MATMUL's Prepare keeps a
// transposed copy (a TfLiteEvalTensor, its dims, its data) of the LHS when
// adj_x is set and of the RHS unless adj_y is, then the output's dims;
// INT8 and INT16 keep a quantization struct, first under the reference
// kernels, last under CMSIS-NN's.
func TestTFLMBatchMatmulTransposes(t *testing.T) {
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	op := func(ty graph.ElementType, adjX, adjY bool) tailOp {
		lhs, rhs := tt("lhs", ty, 1, 4, 6), tt("rhs", ty, 1, 6, 5)
		if adjX {
			lhs = tt("lhs", ty, 1, 6, 4)
		}
		if adjY {
			rhs = tt("rhs", ty, 1, 5, 6)
		}
		return tailOp{code: 126, name: "BATCH_MATMUL", tensors: []graph.Tensor{lhs, rhs, tt("out", ty, 1, 4, 5)},
			in: []graph.TensorID{0, 1}, out: []graph.TensorID{2}}
	}
	flag := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	const ev, dims = 12, 4 + 4*3 // cortex-m TfLiteEvalTensor; a rank-3 TfLiteIntArray
	cases := []struct {
		name       string
		ty         graph.ElementType
		adjX, adjY bool
		ref, cmsis []int64
	}{
		{"float: the RHS", graph.Float32, false, false, []int64{ev, dims, 4 * 30, dims}, []int64{ev, dims, 4 * 30, dims}},
		{"float adj_x: the LHS, then the RHS", graph.Float32, true, false,
			[]int64{ev, dims, 4 * 24, ev, dims, 4 * 30, dims}, []int64{ev, dims, 4 * 24, ev, dims, 4 * 30, dims}},
		{"float adj_y: neither", graph.Float32, false, true, []int64{dims}, []int64{dims}},
		{"float adj_x and adj_y: the LHS", graph.Float32, true, true, []int64{ev, dims, 4 * 24, dims}, []int64{ev, dims, 4 * 24, dims}},
		{"int8: the quantization first or last", graph.Int8, false, false, []int64{28, ev, dims, 30, dims}, []int64{ev, dims, 30, dims, 28}},
		{"int16 adj_x and adj_y", graph.Int16, true, true, []int64{28, ev, dims, 2 * 24, dims}, []int64{ev, dims, 2 * 24, dims, 28}},
	}
	for _, c := range cases {
		m := op(c.ty, c.adjX, c.adjY).model()
		m.Subgraphs[0].Ops[0].Options = &graph.Options{Table: "BatchMatMulOptions", Fields: []graph.OptionField{
			{Name: "adj_x", Kind: graph.OptionInt, Present: true, Int: flag(c.adjX)},
			{Name: "adj_y", Kind: graph.OptionInt, Present: true, Int: flag(c.adjY)}}}
		for _, l := range []struct {
			lib  *kernels.Library
			want []int64
		}{{ref, c.ref}, {cmsis.On(kernels.MVE), c.cmsis}} {
			k, ok := l.lib.TFLMArena(m, 0, &m.Subgraphs[0].Ops[0], cpu(t, "cortex-m55"))
			require.True(t, ok, "%s %s", l.lib, c.name)
			assert.Equal(t, l.want, persistent(k), "%s %s", l.lib, c.name)
			assert.Equal(t, 3, temps(k), "%s %s", l.lib, c.name)
		}
	}
}
