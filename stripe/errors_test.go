package stripe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

func TestApplyErrors(t *testing.T) {
	relu := graph.Opcode(19)
	// chain: x -> conv a -> conv b; a also read by a RELU outside (c).
	chain := func(t *testing.T) *graph.Model {
		b := newMB()
		x := b.act("x", []int32{1, 6, 4, 2}, -3)
		a := b.conv("a", x, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)  // 1
		bb := b.conv("b", a, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false) // 4
		c := b.act("c", []int32{1, 6, 4, 2}, -3)                                              // 7
		b.op(relu, nil, []graph.TensorID{a}, c)
		return b.model(t, []graph.TensorID{x}, []graph.TensorID{bb, c})
	}
	// padded: x 2 rows -> PAD 3 rows on top -> p 5 rows -> RELU -> y.
	padded := func(t *testing.T) *graph.Model {
		b := newMB()
		x := b.act("x", []int32{1, 2, 3, 1}, -3)
		pd := b.int32s("paddings", []int32{4, 2}, 0, 0, 3, 0, 0, 0, 0, 0)
		p := b.act("p", []int32{1, 5, 3, 1}, -3)
		b.op(34, nil, []graph.TensorID{x, pd}, p)
		y := b.act("y", []int32{1, 5, 3, 1}, -3)
		b.op(relu, nil, []graph.TensorID{p}, y)
		return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
	}
	// others: x -> RESHAPE -> r -> conv y; z (an input) ADD y -> s; a SAME
	// 3x3 average pool of x -> v; ADD(x, constant varying along H) -> w;
	// a uint8 input u -> RELU -> ur.
	others := func(t *testing.T) *graph.Model {
		b := newMB()
		x := b.act("x", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 0
		shape := b.int32s("shape", []int32{4}, 1, 4, 4, 2)                                                                                                                       // 1
		r := b.act("r", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 2
		b.op(graph.Reshape, nil, []graph.TensorID{x, shape}, r)                                                                                                                  // op 0
		y := b.conv("y", r, []int32{1, 4, 4, 2}, 1, 1, same(graph.PaddingValid, 1, 1), false)                                                                                    // 3; op 1
		z := b.act("z", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 6
		s := b.act("s", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 7
		b.op(0, nil, []graph.TensorID{y, z}, s)                                                                                                                                  // op 2
		v := b.act("v", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 8
		b.op(graph.AveragePool2D, &graph.Window{Padding: graph.PaddingSame, StrideH: 1, StrideW: 1, FilterH: 3, FilterW: 3, DilationH: 1, DilationW: 1}, []graph.TensorID{x}, v) // op 3
		k := b.weights("k", []int32{1, 4, 1, 2})                                                                                                                                 // 9
		w := b.act("w", []int32{1, 4, 4, 2}, -3)                                                                                                                                 // 10
		b.op(0, nil, []graph.TensorID{x, k}, w)                                                                                                                                  // op 4
		u := b.add(graph.Tensor{Name: "u", Type: graph.Uint8, Shape: []int32{1, 4, 4, 2},
			Quantization: &graph.Quantization{Scale: []float32{0.05}, ZeroPoint: []int64{128}}}) // 11
		ur := b.add(graph.Tensor{Name: "ur", Type: graph.Uint8, Shape: []int32{1, 4, 4, 2},
			Quantization: &graph.Quantization{Scale: []float32{0.05}, ZeroPoint: []int64{128}}}) // 12
		b.op(relu, nil, []graph.TensorID{u}, ur) // op 5
		// A SAME 3x3 stride-2 max pool of x: TFLM's leading padding is 0
		// but its window overhangs the last row and column (total 1).
		mp := b.act("mp", []int32{1, 2, 2, 2}, -3)                                                                                                                            // 13
		b.op(graph.MaxPool2D, &graph.Window{Padding: graph.PaddingSame, StrideH: 2, StrideW: 2, FilterH: 3, FilterW: 3, DilationH: 1, DilationW: 1}, []graph.TensorID{x}, mp) // op 6
		return b.model(t, []graph.TensorID{x, z, u}, []graph.TensorID{s, v, w, ur, mp})
	}
	// twice: x -> RELU -> y, x -> RELU6 -> y (both write y).
	twice := func(t *testing.T) *graph.Model {
		b := newMB()
		x := b.act("x", []int32{1, 6, 4, 2}, -3)
		y := b.act("y", []int32{1, 6, 4, 2}, -3)
		b.op(relu, nil, []graph.TensorID{x}, y)
		b.op(21, nil, []graph.TensorID{x}, y)
		return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
	}
	two := [][2]int32{{0, 3}, {3, 6}}
	cases := []struct {
		name    string
		build   func(t *testing.T) *graph.Model
		regions []graph.StripeRegion
		want    string
	}{
		{"not row-local", others, []graph.StripeRegion{{Input: 0, Output: 3, Ops: []int{0, 1}, Rows: [][2]int32{{0, 2}, {2, 4}}}},
			`operator 0 (RESHAPE): not a row-local operator`},
		{"intermediate used outside", chain, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: two}},
			`operator 0 (CONV_2D): output tensor 1 "a" is used outside the region, by operator 2 (RELU)`},
		{"operand from outside", others, []graph.StripeRegion{{Input: 3, Output: 7, Ops: []int{2}, Rows: [][2]int32{{0, 2}, {2, 4}}}},
			`operator 2 (ADD): input tensor 6 "z" is neither the region's input nor written in the region`},
		{"pool padded", others, []graph.StripeRegion{{Input: 0, Output: 8, Ops: []int{3}, Rows: [][2]int32{{0, 2}, {2, 4}}}},
			`operator 3 (AVERAGE_POOL_2D): TFLM pads it by 1+1 rows and 1+1 columns`},
		{"pool overhanging", others, []graph.StripeRegion{{Input: 0, Output: 13, Ops: []int{6}, Rows: [][2]int32{{0, 1}, {1, 2}}}},
			`operator 6 (MAX_POOL_2D): TFLM pads it by 0+1 rows and 0+1 columns`},
		{"constant varying along H", others, []graph.StripeRegion{{Input: 0, Output: 10, Ops: []int{4}, Rows: [][2]int32{{0, 2}, {2, 4}}}},
			`operator 4 (ADD): constant input 1 tensor 9 "k" of shape [1 4 1 2] varies along the rows`},
		{"uint8", others, []graph.StripeRegion{{Input: 11, Output: 12, Ops: []int{5}, Rows: [][2]int32{{0, 2}, {2, 4}}}},
			`tensor 12 "ur" is UINT8, a type TFLM's STRIDED_SLICE, PAD and CONCATENATION do not all take`},
		{"101 stripes", padded, []graph.StripeRegion{{Input: 0, Output: 3, Ops: []int{0, 1}, Rows: EvenRows(101, 101)}},
			`101 stripes, not between 2 and 100: TFLM's CONCATENATION takes at most 10 inputs, so the stripes are joined in at most 10 groups of at most 10`},
		{"1 stripe", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 6}}}},
			`1 stripes, not between 2 and 100`},
		{"gap", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 2}, {3, 6}}}},
			`stripe 1 has rows [3,6): the stripes must cover output tensor 1 "a"'s 6 rows once`},
		{"overlap", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 3}, {2, 6}}}},
			`stripe 1 has rows [2,6)`},
		{"short", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 3}, {3, 5}}}},
			`the stripes end at row 5, not at output tensor 1 "a"'s height 6`},
		{"empty stripe", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 3}, {3, 3}, {3, 6}}}},
			`stripe 1 has rows [3,3)`},
		{"stripe in the padding", padded, []graph.StripeRegion{{Input: 0, Output: 3, Ops: []int{0, 1}, Rows: [][2]int32{{0, 2}, {2, 5}}}},
			`stripe 0 (rows [0,2)): operator 0 (PAD): the stripe of output rows [0,2) reads no real row of tensor 0 "x" (it would need rows [-3,-1) of 2)`},
		{"output not written", chain, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{0}, Rows: two}},
			`output tensor 4 "b" is not written by an operator of the region`},
		{"output not written last", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0, 1}, Rows: two}},
			`output tensor 1 "a" is written by operator 0 (CONV_2D), not by the region's last operator 1`},
		{"output written twice", twice, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0, 1}, Rows: two}},
			`output tensor 1 "y" is also written by operator 0 (RELU) of the region; only the region's last operator may write it`},
		{"input written in the region", chain, []graph.StripeRegion{{Input: 1, Output: 4, Ops: []int{0, 1}, Rows: two}},
			`input tensor 1 "a" is written by operator 0 (CONV_2D) of the region`},
		{"operators not ascending", chain, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{1, 0}, Rows: two}},
			`operators not ascending and distinct`},
		{"operator out of range", chain, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{0, 9}, Rows: two}},
			`operator 9 out of range`},
		{"no operators", chain, []graph.StripeRegion{{Input: 0, Output: 4, Rows: two}}, `no operators`},
		{"subgraph", chain, []graph.StripeRegion{{Subgraph: 1, Input: 0, Output: 4, Ops: []int{0}, Rows: two}}, `subgraph 1 out of range`},
		{"regions overlap", chain, []graph.StripeRegion{{Input: 0, Output: 1, Ops: []int{0}, Rows: two}, {Input: 0, Output: 1, Ops: []int{0}, Rows: two}},
			`region 1: operator 0 (CONV_2D) is also in region 0`},
		{"not NHWC", chain, []graph.StripeRegion{{Input: 2, Output: 1, Ops: []int{0}, Rows: two}},
			`tensor 2 "a/w": shape [2 3 3 2] is not NHWC of batch 1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			before := tc.build(t)
			out, err := Apply(m, tc.regions)
			assert.Nil(t, out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, m, "the model is unchanged")
		})
	}
}

func TestApplyRewrittenModel(t *testing.T) {
	tc := geometryCases()[0]
	m := tc.build(t)
	out, err := Apply(m, []graph.StripeRegion{tc.region(m)})
	require.NoError(t, err)
	_, err = Apply(out, []graph.StripeRegion{tc.region(m)})
	assert.ErrorContains(t, err, "already a stripe rewrite")
	assert.Empty(t, Candidates(out))
}
