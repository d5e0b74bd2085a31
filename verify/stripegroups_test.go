package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestStripeGroups: the groups a region of k stripes is joined in
// (docs/stripes.md, "More than 10 stripes: groups"), worked out by hand:
// g = ceil(k/10) groups, the first k mod g one stripe larger.
func TestStripeGroups(t *testing.T) {
	for _, tt := range []struct {
		k    int
		want [][2]int
	}{
		{2, nil},
		{10, nil},
		{11, [][2]int{{0, 5}, {6, 10}}},                                         // 6 + 5
		{12, [][2]int{{0, 5}, {6, 11}}},                                         // 6 + 6
		{16, [][2]int{{0, 7}, {8, 15}}},                                         // 8 + 8
		{20, [][2]int{{0, 9}, {10, 19}}},                                        // 10 + 10
		{21, [][2]int{{0, 6}, {7, 13}, {14, 20}}},                               // 7 + 7 + 7
		{23, [][2]int{{0, 7}, {8, 15}, {16, 22}}},                               // 8 + 8 + 7
		{31, [][2]int{{0, 7}, {8, 15}, {16, 23}, {24, 30}}},                     // 8 + 8 + 8 + 7
		{41, [][2]int{{0, 8}, {9, 16}, {17, 24}, {25, 32}, {33, 40}}},           // 9 + 8 + 8 + 8 + 8
		{50, [][2]int{{0, 9}, {10, 19}, {20, 29}, {30, 39}, {40, 49}}},          // 5 x 10
		{51, [][2]int{{0, 8}, {9, 17}, {18, 26}, {27, 34}, {35, 42}, {43, 50}}}, // 9 + 9 + 9 + 8 + 8 + 8
	} {
		assert.Equal(t, tt.want, stripeGroups(tt.k), "k %d", tt.k)
	}
	// k 99: 10 groups, 9 of 10 stripes and the last of 9; k 100: 10 of 10.
	for k, last := range map[int][2]int{99: {90, 98}, 100: {90, 99}} {
		g := stripeGroups(k)
		require.Len(t, g, 10, "k %d", k)
		for n := range 9 {
			assert.Equal(t, [2]int{10 * n, 10*n + 9}, g[n], "k %d group %d", k, n)
		}
		assert.Equal(t, last, g[9], "k %d", k)
	}
	// Every k from 11 to 100: consecutive groups covering the stripes
	// once, each of 5 to 10 stripes (the page's "at least 5"), sizes
	// never growing and differing by at most one.
	for k := 11; k <= maxStripes; k++ {
		g := stripeGroups(k)
		assert.Len(t, g, (k+9)/10, "k %d", k)
		next := 0
		for n, r := range g {
			size := r[1] - r[0] + 1
			assert.Equal(t, next, r[0], "k %d group %d", k, n)
			assert.True(t, size >= 5 && size <= 10, "k %d group %d has %d stripes", k, n, size)
			assert.True(t, size-(g[len(g)-1][1]-g[len(g)-1][0]+1) <= 1, "k %d group %d", k, n)
			if n > 0 {
				assert.LessOrEqual(t, size, g[n-1][1]-g[n-1][0]+1, "k %d group %d", k, n)
			}
			next = r[1] + 1
		}
		assert.Equal(t, k, next, "k %d: the groups cover every stripe", k)
	}
}

// reluModel is x [1,h,2,1] INT8 (zero point -5) -> RELU -> y (zero point
// 1), whose stripes slice one row each without padding.
func reluModel(h int32) *graph.Model {
	x := tensor("x", graph.Int8, 1, h, 2, 1)
	x.Quantization = &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{-5}}
	y := tensor("y", graph.Int8, 1, h, 2, 1)
	y.Quantization = &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{1}}
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{x, y},
			Ops:     []graph.Op{{Code: 19, CodeName: "RELU", Version: 1, Inputs: ids(0), Outputs: ids(1)}},
			Inputs:  ids(0),
			Outputs: ids(1),
		}},
	}
}

// reluRecord is the record of reluModel's RELU in the given rows.
func reluRecord(rows [][2]int64, halo graph.Halo) stripeRec {
	return stripeRec{path: "stripes[0]", input: 0, output: 1, ops: []graph.OpIndex{0}, k: int64(len(rows)), rows: rows, halo: halo}
}

// thirteenRows are 13 rows in 11 stripes: two of 2 rows, then nine of 1.
var thirteenRows = [][2]int64{{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}, {11, 12}, {12, 13}}

// TestRebuildGroupsEleven: 11 stripes of a 13-row RELU, worked out by
// hand. Groups: 6 + 5 stripes, group 0 (stripes 0-5) rows [0,8), group
// 1 (stripes 6-10) rows [8,13). Stripe j slices its rows of x (begin
// [0,a,0,0], end [1,b,2,1]) and the RELU copy writes y/stripe<j>; group
// 0's CONCATENATION follows stripe 5's RELU, its tensor y/group0
// y/stripe5; group 1's follows stripe 10's; the last CONCATENATION joins
// the two groups into y. Everything new is over INT8: version 2. With
// cached halos (the region has no intermediate tensor) it is the same.
func TestRebuildGroupsEleven(t *testing.T) {
	for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
		t.Run(string(halo), func(t *testing.T) {
			orig := reluModel(13)
			got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{reluRecord(thirteenRows, halo)}})
			require.Empty(t, bad)
			w := cachedWant{shapes: map[string][]int32{}, consts: map[string][]int32{}}
			for j, r := range thirteenRows {
				x := fmt.Sprintf("x/stripe%d/slice", j)
				y := fmt.Sprintf("y/stripe%d", j)
				w.ops = append(w.ops,
					fmt.Sprintf("STRIDED_SLICE(x, %[1]s/begin, %[1]s/end, %[1]s/strides) -> %[1]s v2", x),
					fmt.Sprintf("RELU(%s) -> %s v1", x, y))
				w.order = append(w.order, x+"/begin", x+"/end", x+"/strides", x, y)
				w.consts[x+"/begin"] = []int32{0, int32(r[0]), 0, 0}
				w.consts[x+"/end"] = []int32{1, int32(r[1]), 2, 1}
				w.consts[x+"/strides"] = []int32{1, 1, 1, 1}
				w.shapes[x] = []int32{1, int32(r[1] - r[0]), 2, 1}
				w.shapes[y] = []int32{1, int32(r[1] - r[0]), 2, 1}
				switch j {
				case 5:
					w.ops = append(w.ops, "CONCATENATION(y/stripe0, y/stripe1, y/stripe2, y/stripe3, y/stripe4, y/stripe5) -> y/group0 v2")
					w.order = append(w.order, "y/group0")
				case 10:
					w.ops = append(w.ops, "CONCATENATION(y/stripe6, y/stripe7, y/stripe8, y/stripe9, y/stripe10) -> y/group1 v2",
						"CONCATENATION(y/group0, y/group1) -> y v2")
					w.order = append(w.order, "y/group1")
				}
			}
			w.shapes["y/group0"] = []int32{1, 8, 2, 1}
			w.shapes["y/group1"] = []int32{1, 5, 2, 1}
			checkCached(t, orig, got, w)
			sg := &got.Subgraphs[0]
			final := sg.Ops[len(sg.Ops)-1]
			assert.Equal(t, int64(1), final.Options.Int("axis"))
			assert.Equal(t, int64(0), final.Options.Int("fused_activation_function"))
			for _, n := range []int{12, 23} {
				assert.Equal(t, final.Options, sg.Ops[n].Options, "group concatenation %d: options as the final one's", n)
			}
			assert.Equal(t, ids(1), sg.Outputs, "y keeps its id")
			require.Len(t, got.Stripes, 1)
			assert.Equal(t, rows32(thirteenRows), got.Stripes[0].Rows)
			assert.Equal(t, halo, got.Stripes[0].Halo)
		})
	}
}

// twentyOneStripes worked out by hand: x [1,42,1,1] FLOAT32 -> 3x3 SAME
// -> a -> 3x3 SAME -> y [1,42,1,1] (convPair), y in 21 stripes of 2 rows,
// halos cached. A 3x3 SAME reads rows [p-1, q+1) for output rows [p,q),
// and on width 1 TFLM pads one column on each side.
//
//	stripe 0: y [0,2) needs a [0,3) (all new), which reads x [-1,4):
//	  slice x [0,4), pad 1 on top. The next stripe's cache of a is
//	  [1,3): rows 1..3 of a/stripe0.
//	stripe j in 1..19: y [2j,2j+2) needs a [2j-1,2j+3); the stripe
//	  before held a up to row 2j+1: cache [2j-1,2j+1), new a
//	  [2j+1,2j+3), which reads x [2j,2j+4) (no row padding). The next
//	  cache, [2j+1,2j+3), is rows 2..4 of a/stripe<j>'s four.
//	stripe 20: y [40,42) needs a [39,42), new a [41,42), which reads x
//	  [40,43): slice [40,42), pad 1 below; a padded 1 below too.
//
// Groups: 7 + 7 + 7 stripes, each of 14 rows, after stripes 6, 13 and
// 20. FLOAT32: every new operator at version 1; the convolutions keep
// version 3. MACs: 9 a row of each convolution, 42 rows each: 756, no
// extra.
func twentyOneStripes() cachedWant {
	w := cachedWant{shapes: map[string][]int32{}, consts: map[string][]int32{}}
	for j := range 21 {
		xs, xp := fmt.Sprintf("x/stripe%d/slice", j), fmt.Sprintf("x/stripe%d/pad", j)
		ap, y := fmt.Sprintf("a/stripe%d/pad", j), fmt.Sprintf("y/stripe%d", j)
		a := fmt.Sprintf("a/stripe%d", j)
		cache := fmt.Sprintf("a/stripe%d/cache", j+1)
		xLo, xHi := int32(2*j), int32(2*j+4) // x rows the new rows of a read
		xPad := []int32{0, 0, 0, 0, 1, 1, 0, 0}
		aPad := []int32{0, 0, 0, 0, 1, 1, 0, 0}
		aRows, newRows := int32(4), int32(2)
		switch j {
		case 0:
			xLo, xPad[2], aPad[2], aRows, newRows = 0, 1, 1, 3, 3
		case 20:
			xHi, xPad[3], aPad[3], aRows, newRows = 42, 1, 1, 3, 1
		}
		w.ops = append(w.ops,
			fmt.Sprintf("STRIDED_SLICE(x, %[1]s/begin, %[1]s/end, %[1]s/strides) -> %[1]s v1", xs),
			fmt.Sprintf("PAD(%[1]s, %[2]s/paddings) -> %[2]s v1", xs, xp))
		w.order = append(w.order, xs+"/begin", xs+"/end", xs+"/strides", xs, xp+"/paddings", xp)
		w.consts[xs+"/begin"] = []int32{0, xLo, 0, 0}
		w.consts[xs+"/end"] = []int32{1, xHi, 1, 1}
		w.consts[xs+"/strides"] = []int32{1, 1, 1, 1}
		w.consts[xp+"/paddings"] = xPad
		w.shapes[xs] = []int32{1, xHi - xLo, 1, 1}
		w.shapes[xp] = []int32{1, xHi - xLo + xPad[2] + xPad[3], 3, 1}
		if j == 0 {
			w.ops = append(w.ops, fmt.Sprintf("CONV_2D(%s, w1, b1) -> %s v3", xp, a))
			w.order = append(w.order, a)
		} else {
			w.ops = append(w.ops, fmt.Sprintf("CONV_2D(%s, w1, b1) -> %s/new v3", xp, a),
				fmt.Sprintf("CONCATENATION(%[1]s/cache, %[1]s/new) -> %[1]s v1", a))
			w.order = append(w.order, a+"/new", a)
			w.shapes[a+"/new"] = []int32{1, newRows, 1, 1}
		}
		w.shapes[a] = []int32{1, aRows, 1, 1}
		if j < 20 {
			begin := int32(2) // rows 2..4 of the four a/stripe<j> holds
			if j == 0 {
				begin = 1 // rows 1..3 of a/stripe0's three
			}
			w.ops = append(w.ops, fmt.Sprintf("STRIDED_SLICE(%[1]s, %[2]s/begin, %[2]s/end, %[2]s/strides) -> %[2]s v1", a, cache))
			w.order = append(w.order, cache+"/begin", cache+"/end", cache+"/strides", cache)
			w.consts[cache+"/begin"] = []int32{0, begin, 0, 0}
			w.consts[cache+"/end"] = []int32{1, begin + 2, 1, 1}
			w.consts[cache+"/strides"] = []int32{1, 1, 1, 1}
			w.shapes[cache] = []int32{1, 2, 1, 1}
		}
		w.ops = append(w.ops, fmt.Sprintf("PAD(%[1]s, %[2]s/paddings) -> %[2]s v1", a, ap),
			fmt.Sprintf("CONV_2D(%s, w2, b2) -> %s v3", ap, y))
		w.order = append(w.order, ap+"/paddings", ap, y)
		w.consts[ap+"/paddings"] = aPad
		w.shapes[ap] = []int32{1, 4, 3, 1}
		w.shapes[y] = []int32{1, 2, 1, 1}
		switch j {
		case 6:
			w.ops = append(w.ops, "CONCATENATION(y/stripe0, y/stripe1, y/stripe2, y/stripe3, y/stripe4, y/stripe5, y/stripe6) -> y/group0 v1")
			w.order = append(w.order, "y/group0")
		case 13:
			w.ops = append(w.ops, "CONCATENATION(y/stripe7, y/stripe8, y/stripe9, y/stripe10, y/stripe11, y/stripe12, y/stripe13) -> y/group1 v1")
			w.order = append(w.order, "y/group1")
		case 20:
			w.ops = append(w.ops,
				"CONCATENATION(y/stripe14, y/stripe15, y/stripe16, y/stripe17, y/stripe18, y/stripe19, y/stripe20) -> y/group2 v1",
				"CONCATENATION(y/group0, y/group1, y/group2) -> y v1")
			w.order = append(w.order, "y/group2")
		}
	}
	for n := range 3 {
		w.shapes[fmt.Sprintf("y/group%d", n)] = []int32{1, 14, 1, 1}
	}
	return w
}

// twentyOneRecord is the record of twentyOneStripes.
func twentyOneRecord() stripeRec {
	rows := make([][2]int64, 21)
	for j := range rows {
		rows[j] = [2]int64{int64(2 * j), int64(2*j + 2)}
	}
	return stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 21, rows: rows, halo: graph.HaloCache,
		macs: 756}
}

// TestRebuildGroupsTwentyOne: 21 stripes with cached halos, worked out
// by hand (twentyOneStripes); the same rows recomputing take the same
// groups at the same places.
func TestRebuildGroupsTwentyOne(t *testing.T) {
	orig := convPair(42, 1, 1, 1, 3, 3, false)
	got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{twentyOneRecord()}})
	require.Empty(t, bad)
	checkCached(t, orig, got, twentyOneStripes())

	// Recomputing, stripe j (1..19) computes a [2j-1,2j+3), four rows,
	// stripes 0 and 20 three: 82 rows of a for its 42, 40·9 extra MACs.
	// Each stripe: slice x, pad, conv, pad, conv (a/stripe<j> is all
	// the second conv reads): 5 operators; 105 + 3 groups + 1.
	rec := twentyOneRecord()
	rec.halo, rec.extra = graph.HaloRecompute, 360
	re, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
	require.Empty(t, bad)
	sg := &re.Subgraphs[0]
	require.Len(t, sg.Ops, 109)
	var concats []string
	for i := range sg.Ops {
		if sg.Ops[i].Code == opConcatenation {
			concats = append(concats, fmt.Sprintf("%d: %s", i, opText(sg, &sg.Ops[i])))
		}
	}
	assert.Equal(t, []string{
		"35: CONCATENATION(y/stripe0, y/stripe1, y/stripe2, y/stripe3, y/stripe4, y/stripe5, y/stripe6) -> y/group0 v1",
		"71: CONCATENATION(y/stripe7, y/stripe8, y/stripe9, y/stripe10, y/stripe11, y/stripe12, y/stripe13) -> y/group1 v1",
		"107: CONCATENATION(y/stripe14, y/stripe15, y/stripe16, y/stripe17, y/stripe18, y/stripe19, y/stripe20) -> y/group2 v1",
		"108: CONCATENATION(y/group0, y/group1, y/group2) -> y v1",
	}, concats)
	// y/group<n> is appended right after y/stripe<j1>, before stripe
	// j1+1's first constant.
	for _, j1 := range []int{6, 13} {
		at := slices.IndexFunc(sg.Tensors, func(t graph.Tensor) bool { return t.Name == fmt.Sprintf("y/stripe%d", j1) })
		require.Positive(t, at)
		assert.Equal(t, fmt.Sprintf("y/group%d", j1/7), sg.Tensors[at+1].Name)
		assert.Equal(t, fmt.Sprintf("x/stripe%d/slice/begin", j1+1), sg.Tensors[at+2].Name)
	}
	assert.Equal(t, "y/group2", sg.Tensors[len(sg.Tensors)-1].Name)
}

// TestRebuildGroupsLimits: 100 stripes (10 groups of 10) are built; 101
// are refused, naming the limit; 99 take 9 groups of 10 and one of 9.
func TestRebuildGroupsLimits(t *testing.T) {
	rows := func(k int) [][2]int64 {
		out := make([][2]int64, k)
		for j := range out {
			out[j] = [2]int64{int64(j), int64(j + 1)}
		}
		return out
	}
	got, bad := rebuildModel(reluModel(100), &planDoc{stripes: []stripeRec{reluRecord(rows(100), graph.HaloRecompute)}})
	require.Empty(t, bad)
	sg := &got.Subgraphs[0]
	require.Len(t, sg.Ops, 100*2+10+1)
	final := sg.Ops[len(sg.Ops)-1]
	require.Len(t, final.Inputs, 10)
	for n, in := range final.Inputs {
		assert.Equal(t, fmt.Sprintf("y/group%d", n), sg.Tensors[in].Name)
		assert.Equal(t, []int32{1, 10, 2, 1}, sg.Tensors[in].Shape)
		assert.Equal(t, graph.OpIndex(21*n+20), graph.OpIndex(slices.IndexFunc(sg.Ops, func(op graph.Op) bool {
			return op.Outputs[0] == in
		})), "group %d follows stripe %d's RELU", n, 10*n+9)
	}

	got, bad = rebuildModel(reluModel(99), &planDoc{stripes: []stripeRec{reluRecord(rows(99), graph.HaloCache)}})
	require.Empty(t, bad)
	sg = &got.Subgraphs[0]
	final = sg.Ops[len(sg.Ops)-1]
	require.Len(t, final.Inputs, 10)
	assert.Equal(t, []int32{1, 10, 2, 1}, sg.Tensors[final.Inputs[8]].Shape)
	assert.Equal(t, []int32{1, 9, 2, 1}, sg.Tensors[final.Inputs[9]].Shape)
	assert.Len(t, sg.Ops[len(sg.Ops)-2].Inputs, 9, "the last group joins stripes 90-98")

	for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
		got, bad = rebuildModel(reluModel(101), &planDoc{stripes: []stripeRec{reluRecord(rows(101), halo)}})
		assert.Nil(t, got)
		require.Len(t, bad, 1)
		assert.Equal(t, BadStripes, bad[0].Kind)
		assert.Equal(t, "stripes[0]: k is 101; a region has 2 to 100 stripes (more than 10 are joined in groups of at most 10: "+
			"TFLM's CONCATENATION takes at most 10 inputs)", bad[0].Msg)
	}
}

// TestRewriteGroupsMutations breaks correct rewrites with groups (11
// stripes recomputed, 21 cached) in the ways a faulty rewriter would:
// each is a RewriteMismatch naming the operator or tensor.
func TestRewriteGroupsMutations(t *testing.T) {
	eleven, bad := rebuildModel(reluModel(13), &planDoc{stripes: []stripeRec{reluRecord(thirteenRows, graph.HaloRecompute)}})
	require.Empty(t, bad)
	twentyOne, bad := rebuildModel(convPair(42, 1, 1, 1, 3, 3, false), &planDoc{stripes: []stripeRec{twentyOneRecord()}})
	require.Empty(t, bad)
	// eleven: op 12 is group 0's CONCATENATION (after stripe 5's RELU,
	// op 11), op 23 group 1's, op 24 the final one. Tensors: 2 of the
	// original, then 5 per stripe; y/stripe<j> is 2+5j+4 (+1 from
	// stripe 6 on, after y/group0 at 32).
	el := &eleven.Subgraphs[0]
	require.Equal(t, "y/group0", el.Tensors[el.Ops[12].Outputs[0]].Name)
	require.Equal(t, "y/group1", el.Tensors[el.Ops[23].Outputs[0]].Name)
	// twentyOne: group 0's CONCATENATION is op 48 (stripe 0's 6
	// operators, stripes 1-6's 7 each: 0..47), group 1's 98 (stripes
	// 7-13: 49..97), group 2's 147, the final one 148.
	tw := &twentyOne.Subgraphs[0]
	require.Equal(t, "y/group0", tw.Tensors[tw.Ops[48].Outputs[0]].Name)
	require.Equal(t, "y/group1", tw.Tensors[tw.Ops[98].Outputs[0]].Name)
	require.Equal(t, "y/group2", tw.Tensors[tw.Ops[147].Outputs[0]].Name)
	require.Len(t, tw.Ops, 149)
	for name, tt := range map[string]struct {
		good   *graph.Model
		mutate func(m *graph.Model)
		want   string
	}{
		"a group misses a stripe": {eleven, func(m *graph.Model) {
			op := &m.Subgraphs[0].Ops[12]
			op.Inputs = slices.Delete(op.Inputs, 3, 4)
		}, "op 0:12 (CONCATENATION) reads [0:6 (y/stripe0), 0:11 (y/stripe1), 0:16 (y/stripe2), 0:26 (y/stripe4), 0:31 (y/stripe5)], " +
			"the rebuild's [0:6 (y/stripe0), 0:11 (y/stripe1), 0:16 (y/stripe2), 0:21 (y/stripe3), 0:26 (y/stripe4), 0:31 (y/stripe5)]"},
		"stripes out of order in a group": {eleven, func(m *graph.Model) {
			in := m.Subgraphs[0].Ops[23].Inputs
			in[1], in[2] = in[2], in[1]
		}, "op 0:23 (CONCATENATION) reads [0:37 (y/stripe6), 0:47 (y/stripe8), 0:42 (y/stripe7), 0:52 (y/stripe9), 0:57 (y/stripe10)], " +
			"the rebuild's [0:37 (y/stripe6), 0:42 (y/stripe7), 0:47 (y/stripe8), 0:52 (y/stripe9), 0:57 (y/stripe10)]"},
		"groups out of order": {eleven, func(m *graph.Model) {
			in := m.Subgraphs[0].Ops[24].Inputs
			in[0], in[1] = in[1], in[0]
		}, "op 0:24 (CONCATENATION) reads [0:58 (y/group1), 0:32 (y/group0)], the rebuild's [0:32 (y/group0), 0:58 (y/group1)]"},
		"a stripe in the wrong group": {eleven, func(m *graph.Model) {
			// 7 + 4 instead of 6 + 5.
			ops := m.Subgraphs[0].Ops
			six := ops[23].Inputs[0]
			ops[12].Inputs = append(slices.Clone(ops[12].Inputs), six)
			ops[23].Inputs = slices.Clone(ops[23].Inputs[1:])
		}, "op 0:12 (CONCATENATION) reads"},
		"a group tensor a row short": {eleven, func(m *graph.Model) {
			m.Subgraphs[0].Tensors[32].Shape = []int32{1, 7, 2, 1}
		}, "tensor 0:32 (y/group0) is INT8 [1 7 2 1]"},
		"a group concatenation at version 1 over INT8": {eleven, func(m *graph.Model) {
			m.Subgraphs[0].Ops[12].Version = 1
		}, "op 0:12 (CONCATENATION): version 1, the rebuild's 2"},
		"a group concatenated along the wrong axis": {eleven, func(m *graph.Model) {
			m.Subgraphs[0].Ops[23].Options = &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Int: 2}}}
		}, "op 0:23 (CONCATENATION): option axis is 2"},
		"one concatenation of 11 stripes": {eleven, func(m *graph.Model) {
			sg := &m.Subgraphs[0]
			var stripes []graph.TensorID
			for _, n := range []int{12, 23} {
				stripes = append(stripes, sg.Ops[n].Inputs...)
			}
			sg.Ops = slices.Delete(slices.Clone(sg.Ops), 23, 24)
			sg.Ops = slices.Delete(sg.Ops, 12, 13)
			sg.Ops[len(sg.Ops)-1].Inputs = stripes
		}, "subgraph 0 of the rewritten model has 23 operators, the rebuild 25"},
		"cached: a group misses its last stripe": {twentyOne, func(m *graph.Model) {
			op := &m.Subgraphs[0].Ops[48]
			op.Inputs = op.Inputs[:6]
		}, "op 0:48 (CONCATENATION) reads"},
		"cached: stripes out of order in a group": {twentyOne, func(m *graph.Model) {
			in := m.Subgraphs[0].Ops[98].Inputs
			in[0], in[6] = in[6], in[0]
		}, "op 0:98 (CONCATENATION) reads [0:"},
		"cached: a group concatenation after the next stripe's first operator": {twentyOne, func(m *graph.Model) {
			ops := m.Subgraphs[0].Ops
			ops[48], ops[49] = ops[49], ops[48]
		}, "op 0:48 (STRIDED_SLICE): the rebuild has CONCATENATION here"},
	} {
		t.Run(name, func(t *testing.T) {
			m := cloneModel(tt.good)
			tt.mutate(m)
			var r report
			compareModels(&r, tt.good, m, nil, false)
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

// TestOutputWrittenByLastOnly: a region whose first operator also
// writes Y (RELU and RELU6 both x -> y) is refused: each stripe would
// have two tensors of Y, and the concatenation (with 6 stripes, 12
// inputs; with 12, groups of 12 and 12) would join more than the k
// stripes (docs/stripes.md: Y is written by the last operator).
func TestOutputWrittenByLastOnly(t *testing.T) {
	for _, k := range []int{2, 6, 12} {
		m := reluModel(12)
		sg := &m.Subgraphs[0]
		sg.Ops = append(sg.Ops, graph.Op{Code: 21, CodeName: "RELU6", Version: 1, Inputs: ids(0), Outputs: ids(1)})
		rows := make([][2]int64, k)
		for j := range rows {
			rows[j] = [2]int64{int64(j * 12 / k), int64((j + 1) * 12 / k)}
		}
		rec := reluRecord(rows, graph.HaloRecompute)
		rec.ops = []graph.OpIndex{0, 1}
		got, bad := rebuildModel(m, &planDoc{stripes: []stripeRec{rec}})
		assert.Nil(t, got, "k %d", k)
		require.Len(t, bad, 1, "k %d", k)
		assert.Equal(t, BadStripes, bad[0].Kind)
		assert.Equal(t, "stripes[0]: op 0:0 (RELU) writes 0:1 (y), the output, but only the region's last operator (op 0:1 (RELU6)) may",
			bad[0].Msg)
	}
}
