package verify

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// convChain is X [1,8,8,2] -> CONV_2D 3x3 SAME stride 1 -> A [1,8,8,4]
// -> DEPTHWISE_CONV_2D 3x3 SAME stride 2 -> B [1,4,4,4] -> RELU -> Y
// [1,4,4,4] -> FULLY_CONNECTED -> out, all int8 (X's zero point -5).
func convChain() *graph.Model {
	q := func(zp int64) *graph.Quantization {
		return &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{zp}}
	}
	x := tensor("x", graph.Int8, 1, 8, 8, 2)
	x.Quantization = q(-5)
	a := tensor("a", graph.Int8, 1, 8, 8, 4)
	a.Quantization = q(3)
	bt := tensor("b", graph.Int8, 1, 4, 4, 4)
	bt.Quantization = q(1)
	y := tensor("y", graph.Int8, 1, 4, 4, 4)
	y.Quantization = q(1)
	m := &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 4*3*3*2)}, {Data: make([]byte, 16)}, {Data: make([]byte, 3*3*4)},
			{Data: make([]byte, 16)}, {Data: make([]byte, 64*4)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				x,
				withBuffer(tensor("w1", graph.Int8, 4, 3, 3, 2), 1),
				withBuffer(tensor("b1", graph.Int32, 4), 2),
				a,
				withBuffer(tensor("w2", graph.Int8, 1, 3, 3, 4), 3),
				withBuffer(tensor("b2", graph.Int32, 4), 4),
				bt,
				y,
				withBuffer(tensor("fc", graph.Int8, 4, 64), 5),
				tensor("out", graph.Int8, 1, 4),
			},
			Ops: []graph.Op{
				{Code: graph.Conv2D, CodeName: "CONV_2D", Inputs: ids(0, 1, 2), Outputs: ids(3),
					Window:  &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1},
					Options: &graph.Options{Table: "Conv2DOptions", Fields: []graph.OptionField{{Name: "padding", Kind: graph.OptionInt, Int: 0}}}},
				{Code: graph.DepthwiseConv2D, CodeName: "DEPTHWISE_CONV_2D", Inputs: ids(3, 4, 5), Outputs: ids(6),
					Window: &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, DepthMultiplier: 2}},
				{Code: 19, CodeName: "RELU", Inputs: ids(6), Outputs: ids(7)},
				{Code: 9, CodeName: "FULLY_CONNECTED", Inputs: ids(7, 8), Outputs: ids(9)},
			},
			Inputs:  ids(0),
			Outputs: ids(9),
		}},
	}
	return m
}

func convChainRecord() stripeRec {
	return stripeRec{path: "stripes[0]", input: 0, output: 7, ops: []graph.OpIndex{0, 1, 2}, k: 2,
		rows: [][2]int64{{0, 2}, {2, 4}}, macs: 8*8*4*3*3*2 + 4*4*4*9, extra: 8 * 4 * 3 * 3 * 2} // row 4 of a, computed by both stripes
}

func int32s(t *testing.T, m *graph.Model, id graph.TensorID) []int32 {
	tt := &m.Subgraphs[0].Tensors[id]
	require.Equal(t, graph.Int32, tt.Type, tt.Name)
	d := m.Buffers[tt.Buffer].Data
	out := make([]int32, len(d)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(d[4*i:]))
	}
	return out
}

// TestRebuildConvChain checks the rebuild against the construction
// worked out by hand (docs/stripes.md): conv 3x3 SAME stride 1 pads one
// row and column on each side (TFLM's padding 1); the depthwise 3x3
// stride 2 on 8 rows has total padding 1, so 0 on top and one column on
// the right. Stripe 0 (Y rows 0-1) needs B 0-1, A 0-4 (rows 0..4 of the
// depthwise's window), X -1..5 (clipped 0..5, one row of top padding);
// stripe 1 (Y rows 2-3) needs A 4..8 (clipped 4..7, one row of bottom
// padding), X 3..8 (clipped 3..7, one row of bottom padding).
func TestRebuildConvChain(t *testing.T) {
	orig := convChain()
	got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{convChainRecord()}})
	require.Empty(t, bad)
	assert.Empty(t, orig.Stripes, "the original is not changed")
	assert.Len(t, orig.Subgraphs[0].Ops, 4)
	sg := got.Subgraphs[0]
	var names []string
	for _, op := range sg.Ops {
		names = append(names, op.CodeName)
	}
	assert.Equal(t, []string{
		"STRIDED_SLICE", "PAD", "CONV_2D", "PAD", "DEPTHWISE_CONV_2D", "RELU",
		"STRIDED_SLICE", "PAD", "CONV_2D", "PAD", "DEPTHWISE_CONV_2D", "RELU",
		"CONCATENATION", "FULLY_CONNECTED"}, names)
	shape := func(id graph.TensorID) []int32 { return sg.Tensors[id].Shape }
	type want struct {
		sliceBegin, sliceEnd []int32
		pad1, pad2           []int32
		a, y                 []int32
	}
	for j, w := range []want{
		{[]int32{0, 0, 0, 0}, []int32{1, 6, 8, 2}, []int32{0, 0, 1, 0, 1, 1, 0, 0}, []int32{0, 0, 0, 0, 0, 1, 0, 0},
			[]int32{1, 5, 8, 4}, []int32{1, 2, 4, 4}},
		{[]int32{0, 3, 0, 0}, []int32{1, 8, 8, 2}, []int32{0, 0, 0, 1, 1, 1, 0, 0}, []int32{0, 0, 0, 1, 0, 1, 0, 0},
			[]int32{1, 4, 8, 4}, []int32{1, 2, 4, 4}},
	} {
		ops := sg.Ops[6*j : 6*j+6]
		assert.Equal(t, graph.TensorID(0), ops[0].Inputs[0], "stripe %d slices x itself", j)
		assert.Equal(t, w.sliceBegin, int32s(t, got, ops[0].Inputs[1]), "stripe %d begin", j)
		assert.Equal(t, w.sliceEnd, int32s(t, got, ops[0].Inputs[2]), "stripe %d end", j)
		assert.Equal(t, []int32{1, 1, 1, 1}, int32s(t, got, ops[0].Inputs[3]))
		assert.Equal(t, w.pad1, int32s(t, got, ops[1].Inputs[1]), "stripe %d conv's pad", j)
		assert.Equal(t, int64(-5), sg.Tensors[ops[1].Outputs[0]].Quantization.ZeroPoint[0], "padded with x's zero point")
		assert.Equal(t, ids(ops[1].Outputs[0], 1, 2), ops[2].Inputs, "the conv copy reads the original weights")
		assert.Equal(t, graph.PaddingValid, ops[2].Window.Padding)
		assert.Equal(t, int64(graph.PaddingValid), ops[2].Options.Int("padding"))
		assert.Equal(t, graph.PaddingSame, orig.Subgraphs[0].Ops[0].Window.Padding, "the original keeps SAME")
		assert.Equal(t, w.a, shape(ops[2].Outputs[0]))
		assert.Equal(t, ops[2].Outputs[0], ops[3].Inputs[0], "stripe %d: a's rows are all the depthwise needs, no slice", j)
		assert.Equal(t, w.pad2, int32s(t, got, ops[3].Inputs[1]), "stripe %d depthwise's pad", j)
		assert.Equal(t, ids(ops[3].Outputs[0], 4, 5), ops[4].Inputs)
		assert.Equal(t, w.y, shape(ops[5].Outputs[0]))
		assert.Equal(t, "y/stripe"+string(rune('0'+j)), sg.Tensors[ops[5].Outputs[0]].Name)
	}
	for _, i := range []int{0, 1, 3, 6, 7, 9, 12} {
		assert.Equal(t, int32(2), sg.Ops[i].Version, "op %d (%s) over INT8 tensors: version 2", i, sg.Ops[i].CodeName)
	}
	cat := sg.Ops[12]
	assert.Equal(t, ids(sg.Ops[5].Outputs[0], sg.Ops[11].Outputs[0]), cat.Inputs)
	assert.Equal(t, ids(7), cat.Outputs)
	assert.Equal(t, int64(1), cat.Options.Int("axis"))
	assert.Equal(t, ids(7, 8), sg.Ops[13].Inputs, "the consumer of y is kept")
	require.Len(t, got.Stripes, 1)
	assert.Equal(t, [][2]int32{{0, 2}, {2, 4}}, got.Stripes[0].Rows)
	// Every original tensor keeps its id; the region's intermediates a
	// and b with 0 rows (docs/stripes.md).
	wantT := slices.Clone(orig.Subgraphs[0].Tensors)
	for _, id := range []graph.TensorID{3, 6} {
		sh := wantT[id].Shape
		wantT[id].Shape, wantT[id].Size = []int32{1, 0, sh[2], sh[3]}, 0
	}
	assert.Equal(t, wantT, sg.Tensors[:len(orig.Subgraphs[0].Tensors)])
}

// TestStripeRecordViolations breaks the record one way at a time: each is
// a BadStripes naming what is wrong.
func TestStripeRecordViolations(t *testing.T) {
	for name, tt := range map[string]struct {
		mutate func(m *graph.Model, r *stripeRec)
		want   string
	}{
		"rows overlap":      {func(_ *graph.Model, r *stripeRec) { r.rows = [][2]int64{{0, 3}, {2, 4}} }, "rows[1] is [2,4)"},
		"rows leave a gap":  {func(_ *graph.Model, r *stripeRec) { r.rows = [][2]int64{{0, 1}, {2, 4}} }, "rows[1] is [2,4)"},
		"rows short of Y":   {func(_ *graph.Model, r *stripeRec) { r.rows = [][2]int64{{0, 1}, {1, 3}} }, "end at row 3"},
		"one stripe":        {func(_ *graph.Model, r *stripeRec) { r.rows, r.k = [][2]int64{{0, 4}}, 1 }, "k is 1"},
		"101 stripes":       {func(_ *graph.Model, r *stripeRec) { r.rows, r.k = make([][2]int64, 101), 101 }, "k is 101; a region has 2 to 100"},
		"k differs":         {func(_ *graph.Model, r *stripeRec) { r.k = 3 }, "rows lists 2"},
		"wrong macs":        {func(_ *graph.Model, r *stripeRec) { r.macs++ }, "macs 5185"},
		"wrong extra macs":  {func(_ *graph.Model, r *stripeRec) { r.extra = 0 }, "extra_macs 0"},
		"not row-local":     {func(_ *graph.Model, r *stripeRec) { r.ops, r.output = []graph.OpIndex{0, 1, 2, 3}, 9 }, "rank 4"},
		"ops not ascending": {func(_ *graph.Model, r *stripeRec) { r.ops = []graph.OpIndex{1, 0, 2} }, "not ascending"},
		"input is not read": {func(_ *graph.Model, r *stripeRec) { r.ops = []graph.OpIndex{1, 2} }, "0:3 (a), which is neither"},
		"intermediate read outside": {func(m *graph.Model, r *stripeRec) {
			m.Subgraphs[0].Ops[3].Inputs = ids(6, 8)
		}, "0:6 (b), which op 0:3 (FULLY_CONNECTED) outside"},
		"intermediate is an output": {func(m *graph.Model, r *stripeRec) {
			m.Subgraphs[0].Outputs = ids(9, 3)
		}, "0:3 (a), a subgraph input/output"},
		"pool with padding": {func(m *graph.Model, r *stripeRec) {
			op := &m.Subgraphs[0].Ops[1]
			op.Code, op.CodeName, op.Inputs = graph.MaxPool2D, "MAX_POOL_2D", ids(3)
			op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, FilterW: 4, FilterH: 4}
		}, "not 0"},
		"pool overhanging the last row": {func(m *graph.Model, r *stripeRec) {
			// TFLM's leading padding is 0 but its total is 1: a stripe's
			// SAME copy would be padded again.
			op := &m.Subgraphs[0].Ops[1]
			op.Code, op.CodeName, op.Inputs = graph.MaxPool2D, "MAX_POOL_2D", ids(3)
			op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, FilterW: 3, FilterH: 3}
		}, "not 0"},
		"constant varies along rows": {func(m *graph.Model, r *stripeRec) {
			op := &m.Subgraphs[0].Ops[2]
			op.Code, op.CodeName, op.Inputs = 0, "ADD", ids(6, 4)
		}, "varies along the rows"},
	} {
		t.Run(name, func(t *testing.T) {
			m := convChain()
			rec := convChainRecord()
			tt.mutate(m, &rec)
			got, bad := rebuildModel(m, &planDoc{stripes: []stripeRec{rec}})
			assert.Nil(t, got)
			require.NotEmpty(t, bad)
			assert.Equal(t, BadStripes, bad[0].Kind, "%v", bad)
			assert.Contains(t, bad[0].Msg, tt.want)
		})
	}
	t.Run("rewritten model given", func(t *testing.T) {
		m := convChain()
		m.Stripes = []graph.StripeRegion{{}}
		_, bad := rebuildModel(m, &planDoc{stripes: []stripeRec{convChainRecord()}})
		assert.Equal(t, []Kind{Malformed}, kindsOf(bad))
	})
}

// cloneModel copies a model deeply enough to change its operators,
// tensors and buffers.
func cloneModel(m *graph.Model) *graph.Model {
	c := *m
	c.Buffers = slices.Clone(m.Buffers)
	c.Subgraphs = slices.Clone(m.Subgraphs)
	for s := range c.Subgraphs {
		sg := &c.Subgraphs[s]
		sg.Tensors = slices.Clone(sg.Tensors)
		sg.Ops = slices.Clone(sg.Ops)
		for i := range sg.Ops {
			sg.Ops[i].Inputs = slices.Clone(sg.Ops[i].Inputs)
		}
	}
	return &c
}

// setInt32 replaces the data of a constant INT32 tensor of subgraph 0.
func setInt32(m *graph.Model, id graph.TensorID, vals ...int32) {
	var d []byte
	for _, v := range vals {
		d = binary.LittleEndian.AppendUint32(d, uint32(v))
	}
	m.Buffers = append(m.Buffers, graph.Buffer{Data: d})
	m.Subgraphs[0].Tensors[id].Buffer = graph.BufferIndex(len(m.Buffers) - 1)
}

// TestRewriteMutations breaks a correct rewrite of convChain in the ways
// a faulty rewriter would, where every size may still fit: each is a
// RewriteMismatch naming the operator or tensor.
func TestRewriteMutations(t *testing.T) {
	orig := convChain()
	doc := &planDoc{stripes: []stripeRec{convChainRecord()}}
	good, bad := rebuildModel(orig, doc)
	require.Empty(t, bad)
	var r report
	compareModels(&r, good, cloneModel(good), nil, false)
	require.Empty(t, r, "a model equal to the rebuild")
	sg := good.Subgraphs[0]
	for name, tt := range map[string]struct {
		mutate func(m *graph.Model)
		want   string
	}{
		"halo one row short": {func(m *graph.Model) {
			setInt32(m, sg.Ops[6].Inputs[2], 1, 7, 8, 2) // stripe 1's slice of x ends a row early
		}, "x/stripe1/slice/end): its constant data"},
		"border padded on the wrong side": {func(m *graph.Model) {
			setInt32(m, sg.Ops[1].Inputs[1], 0, 0, 0, 1, 1, 1, 0, 0)
		}, "x/stripe0/pad/paddings"},
		"border padded with the wrong value": {func(m *graph.Model) {
			pad := &m.Subgraphs[0].Tensors[sg.Ops[1].Outputs[0]]
			pad.Quantization = &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{0}}
		}, "x/stripe0/pad): quantization"},
		"a copy reads other weights": {func(m *graph.Model) {
			m.Subgraphs[0].Ops[8].Inputs[1] = 4
		}, "op 0:8 (CONV_2D) reads"},
		"stripes concatenated out of order": {func(m *graph.Model) {
			cat := &m.Subgraphs[0].Ops[12]
			cat.Inputs[0], cat.Inputs[1] = cat.Inputs[1], cat.Inputs[0]
		}, "op 0:12 (CONCATENATION) reads"},
		"concatenation along the wrong axis": {func(m *graph.Model) {
			m.Subgraphs[0].Ops[12].Options = &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Int: 2}}}
		}, "option axis is 2"},
		"copy keeps SAME padding": {func(m *graph.Model) {
			m.Subgraphs[0].Ops[2].Options = orig.Subgraphs[0].Ops[0].Options
		}, "op 0:2 (CONV_2D): options field padding"},
		"a stripe one row taller": {func(m *graph.Model) {
			m.Subgraphs[0].Tensors[sg.Ops[5].Outputs[0]].Shape = []int32{1, 3, 4, 4}
		}, "y/stripe0) is"},
		"a new operator at version 1 over INT8": {func(m *graph.Model) {
			m.Subgraphs[0].Ops[0].Version = 1 // stripe 0's STRIDED_SLICE of x (INT8): version 2
		}, "op 0:0 (STRIDED_SLICE): version 1, the rebuild's 2"},
		"an operator left out": {func(m *graph.Model) {
			m.Subgraphs[0].Ops = slices.Delete(m.Subgraphs[0].Ops, 3, 4)
		}, "13 operators, the rebuild 14"},
	} {
		t.Run(name, func(t *testing.T) {
			m := cloneModel(good)
			tt.mutate(m)
			var r report
			compareModels(&r, good, m, nil, false)
			require.NotEmpty(t, r)
			assert.Equal(t, RewriteMismatch, r[0].Kind)
			var msgs []string
			for _, v := range r {
				msgs = append(msgs, v.Msg)
			}
			assert.Contains(t, strings.Join(msgs, "\n"), tt.want)
		})
	}
}

// FuzzStripeRecord feeds arbitrary records over convChain to the
// rebuild, halos recomputed or cached, which must never panic: it either
// reports BadStripes or builds a model whose every operator's tensors
// exist and have rows.
func FuzzStripeRecord(f *testing.F) {
	f.Add(int64(0), int64(7), uint8(0b111), int64(2), int64(0), int64(2), int64(4), int64(5184), int64(576), false)
	f.Add(int64(3), int64(6), uint8(0b010), int64(3), int64(0), int64(1), int64(4), int64(0), int64(0), false)
	f.Add(int64(0), int64(7), uint8(0b111), int64(2), int64(0), int64(2), int64(4), int64(5184), int64(0), true)
	f.Fuzz(func(t *testing.T, in, out int64, ops uint8, k, r0, r1, r2, macs, extra int64, cache bool) {
		rec := stripeRec{path: "stripes[0]", input: graph.TensorID(in), output: graph.TensorID(out), k: k, macs: macs, extra: extra}
		if cache {
			rec.halo = graph.HaloCache
		}
		for i := range 4 {
			if ops&(1<<i) != 0 {
				rec.ops = append(rec.ops, graph.OpIndex(i))
			}
		}
		rec.rows = [][2]int64{{r0, r1}, {r1, r2}}
		got, bad := rebuildModel(convChain(), &planDoc{stripes: []stripeRec{rec}})
		if got == nil {
			require.NotEmpty(t, bad)
			assert.Equal(t, BadStripes, bad[0].Kind)
			return
		}
		sg := got.Subgraphs[0]
		for _, op := range sg.Ops {
			for _, id := range append(slices.Clone(op.Inputs), op.Outputs...) {
				require.Less(t, int(id), len(sg.Tensors))
				if sh := sg.Tensors[id].Shape; len(sh) == 4 {
					require.Positive(t, sh[1], sg.Tensors[id].Name)
				}
			}
		}
	})
}

// TestRewriteFileForm: the model read back from the .tflite lists its
// operators in the plan's schedule order and gives the region's unused
// intermediates a height of 0; RewriteFile accepts both and nothing more
// (a used tensor of height 0, an order that is not the schedule's).
func TestRewriteFileForm(t *testing.T) {
	orig := convChain()
	rec := convChainRecord()
	good, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
	require.Empty(t, bad)
	n := len(good.Subgraphs[0].Ops)
	// The schedule runs stripe 1 before stripe 0.
	var order []graph.OpIndex
	for i := 6; i < 12; i++ {
		order = append(order, graph.OpIndex(i))
	}
	for i := 0; i < 6; i++ {
		order = append(order, graph.OpIndex(i))
	}
	order = append(order, 12, 13)
	file := cloneModel(good)
	file.Stripes = nil
	for i, o := range order {
		file.Subgraphs[0].Ops[i] = good.Subgraphs[0].Ops[o]
	}
	a := &file.Subgraphs[0].Tensors[3] // the conv's output, an intermediate of the region
	a.Shape, a.ShapeSignature = []int32{1, 0, 8, 4}, []int32{1, 8, 8, 4}
	var r report
	compareModels(&r, good, file, [][]graph.OpIndex{order}, true)
	assert.Empty(t, r)

	r = nil
	compareModels(&r, good, file, [][]graph.OpIndex{identity(n)}, true)
	assert.NotEmpty(t, r, "not in the schedule's order")

	used := cloneModel(file)
	used.Subgraphs[0].Tensors[7].Shape = []int32{1, 0, 4, 4} // y, which the concatenation writes
	r = nil
	compareModels(&r, good, used, [][]graph.OpIndex{order}, true)
	require.NotEmpty(t, r)
	assert.Contains(t, r[0].Msg, "tensor 0:7 (y) is INT8 [1 0 4 4]")

	// The rebuild itself gives the intermediates 0 rows (docs/stripes.md),
	// as stripe.Apply does: a model that keeps one whole differs.
	assert.Equal(t, []int32{1, 0, 8, 4}, good.Subgraphs[0].Tensors[3].Shape)
	assert.Zero(t, good.Subgraphs[0].Tensors[3].Size)
	whole := cloneModel(good)
	whole.Subgraphs[0].Tensors[3].Shape = []int32{1, 8, 8, 4}
	r = nil
	compareModels(&r, good, whole, nil, false)
	require.NotEmpty(t, r, "an intermediate left whole")
	assert.Contains(t, r[0].Msg, "tensor 0:3")
}

// mirrorModel: x 6x4 -> MIRROR_PAD by 2 rows and 1 column each side ->
// p 10x6 -> conv 3x3 VALID -> y 8x4; REFLECT when reflect, else no
// options (TFLM then mirrors SYMMETRIC).
func mirrorModel(reflect bool) *graph.Model {
	q := &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{-3}}
	x := tensor("x", graph.Int8, 1, 6, 4, 2)
	x.Quantization = q
	p := tensor("p", graph.Int8, 1, 10, 6, 2)
	p.Quantization = q
	y := tensor("y", graph.Int8, 1, 8, 4, 3)
	y.Quantization = q
	pads := make([]byte, 32)
	for i, v := range []uint32{0, 0, 2, 2, 1, 1, 0, 0} {
		binary.LittleEndian.PutUint32(pads[4*i:], v)
	}
	mp := graph.Op{Code: opMirrorPad, CodeName: "MIRROR_PAD", Inputs: ids(0, 1), Outputs: ids(2)}
	if reflect {
		mp.Options = &graph.Options{Table: "MirrorPadOptions", Fields: []graph.OptionField{{Name: "mode", Kind: graph.OptionInt, Int: 0}}}
	}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: pads}, {Data: make([]byte, 3*3*3*2)}, {Data: make([]byte, 12)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{x, withBuffer(tensor("paddings", graph.Int32, 4, 2), 1), p,
				withBuffer(tensor("w", graph.Int8, 3, 3, 3, 2), 2), withBuffer(tensor("b", graph.Int32, 3), 3), y},
			Ops: []graph.Op{mp,
				{Code: graph.Conv2D, CodeName: "CONV_2D", Inputs: ids(2, 3, 4), Outputs: ids(5),
					Window: &graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}},
			Inputs:  ids(0),
			Outputs: ids(5),
		}},
	}
}

// TestRebuildMirrorPad: worked out by hand (docs/stripes.md, MIRROR_PAD).
// In 2 stripes, stripe 0 (y rows 0-3) reads p [0,6): x rows [0,4)
// mirrored 2 rows on top; stripe 1 (y rows 4-7) reads p [4,10): x rows
// [2,6) mirrored 2 below; the copies keep the options. In 4 stripes,
// stripe 0 (y rows 0-1) would mirror 2 rows of a 2-row slice: REFLECT
// reaches 1 deep, a BadStripes; SYMMETRIC 2, accepted.
func TestRebuildMirrorPad(t *testing.T) {
	rec := stripeRec{path: "stripes[0]", input: 0, output: 5, ops: []graph.OpIndex{0, 1}, k: 2,
		rows: [][2]int64{{0, 4}, {4, 8}}, macs: 8 * 4 * 3 * 3 * 3 * 2}
	orig := mirrorModel(true)
	got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
	require.Empty(t, bad)
	sg := got.Subgraphs[0]
	require.Len(t, sg.Ops, 7)
	for j, w := range []struct{ begin, end, pads []int32 }{
		{[]int32{0, 0, 0, 0}, []int32{1, 4, 4, 2}, []int32{0, 0, 2, 0, 1, 1, 0, 0}},
		{[]int32{0, 2, 0, 0}, []int32{1, 6, 4, 2}, []int32{0, 0, 0, 2, 1, 1, 0, 0}},
	} {
		ops := sg.Ops[3*j : 3*j+3]
		assert.Equal(t, "STRIDED_SLICE", ops[0].CodeName)
		assert.Equal(t, w.begin, int32s(t, got, ops[0].Inputs[1]), "stripe %d begin", j)
		assert.Equal(t, w.end, int32s(t, got, ops[0].Inputs[2]), "stripe %d end", j)
		assert.Equal(t, opMirrorPad, ops[1].Code)
		assert.Equal(t, orig.Subgraphs[0].Ops[0].Options, ops[1].Options, "the mode is kept")
		assert.Equal(t, w.pads, int32s(t, got, ops[1].Inputs[1]), "stripe %d paddings", j)
		assert.Equal(t, []int32{1, 6, 6, 2}, sg.Tensors[ops[1].Outputs[0]].Shape)
		assert.Equal(t, []int32{1, 4, 4, 3}, sg.Tensors[ops[2].Outputs[0]].Shape)
	}
	rec.rows, rec.k = [][2]int64{{0, 2}, {2, 4}, {4, 6}, {6, 8}}, 4
	rec.extra = 0
	_, bad = rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
	require.NotEmpty(t, bad)
	assert.Contains(t, bad[0].Msg, "mirrors 2+0 rows of 2 rows of 0:0 (x)")
	_, bad = rebuildModel(mirrorModel(false), &planDoc{stripes: []stripeRec{rec}})
	assert.Empty(t, bad, "SYMMETRIC mirrors a 2-row slice 2 deep")
}
