package verify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// convPair is x -> CONV_2D 3x3 (SAME, stride 1) -> a -> CONV_2D 3x3 (SAME,
// stride 1) -> y, every tensor [1,h,w,·]: x has cin channels, a and y
// cout (filters [cout,kh,kw,cin] and [cout,kh,kw,cout]), kh = kw = kernel. The
// convolutions are at version ver; int8 gives x, a and y the zero points
// -5, 2 and 1, else they are FLOAT32.
func convPair(h, w, cin, cout, kernel int32, ver int32, int8 bool) *graph.Model {
	typ := graph.Float32
	if int8 {
		typ = graph.Int8
	}
	act := func(name string, c int32, zp int64) graph.Tensor {
		t := tensor(name, typ, 1, h, w, c)
		if int8 {
			t.Quantization = &graph.Quantization{Scale: []float32{0.25}, ZeroPoint: []int64{zp}}
		}
		return t
	}
	wt := func(name string, c int32, buf graph.BufferIndex) graph.Tensor {
		return withBuffer(tensor(name, typ, cout, kernel, kernel, c), buf)
	}
	bias := func(name string, buf graph.BufferIndex) graph.Tensor {
		return withBuffer(tensor(name, graph.Int32, cout), buf)
	}
	win := func() *graph.Window {
		return &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	}
	opts := func() *graph.Options {
		return &graph.Options{Table: "Conv2DOptions", Fields: []graph.OptionField{{Name: "padding", Kind: graph.OptionInt, Int: 0}}}
	}
	n, el := int(cout*kernel*kernel), 1
	if !int8 {
		el = 4
	}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, el*n*int(cin))}, {Data: make([]byte, 4*cout)}, {Data: make([]byte, el*n*int(cout))},
			{Data: make([]byte, 4*cout)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{act("x", cin, -5), wt("w1", cin, 1), bias("b1", 2), act("a", cout, 2), wt("w2", cout, 3),
				bias("b2", 4), act("y", cout, 1)},
			Ops: []graph.Op{
				{Code: graph.Conv2D, CodeName: "CONV_2D", Version: ver, Inputs: ids(0, 1, 2), Outputs: ids(3), Window: win(), Options: opts()},
				{Code: graph.Conv2D, CodeName: "CONV_2D", Version: ver, Inputs: ids(3, 4, 5), Outputs: ids(6), Window: win(), Options: opts()},
			},
			Inputs:  ids(0),
			Outputs: ids(6),
		}},
	}
}

// opText renders an operator as "NAME(in, ...) -> out vN" by tensor
// names.
func opText(sg *graph.Subgraph, op *graph.Op) string {
	var in []string
	for _, t := range op.Inputs {
		in = append(in, sg.Tensors[t].Name)
	}
	var out []string
	for _, t := range op.Outputs {
		out = append(out, sg.Tensors[t].Name)
	}
	return fmt.Sprintf("%s(%s) -> %s v%d", op.CodeName, strings.Join(in, ", "), strings.Join(out, ", "), op.Version)
}

// cachedWant is a rebuild with cached halos worked out by hand.
type cachedWant struct {
	ops    []string           // opText of every operator, in order
	shapes map[string][]int32 // the new tensors computed at run time, by name
	consts map[string][]int32 // the new constants, by name
	order  []string           // every new tensor's name, in id order
}

// checkCached compares a rebuild with a hand-worked one: operators,
// tensors in order, shapes, constants (INT32, each its own new buffer, in
// order), quantization (each new run-time tensor's is that of the tensor
// it stands for, named before the first '/').
func checkCached(t *testing.T, orig, got *graph.Model, w cachedWant) {
	t.Helper()
	sg := &got.Subgraphs[0]
	var ops []string
	for i := range sg.Ops {
		ops = append(ops, opText(sg, &sg.Ops[i]))
	}
	assert.Equal(t, w.ops, ops)
	n := len(orig.Subgraphs[0].Tensors)
	var names []string
	for _, tt := range sg.Tensors[n:] {
		names = append(names, tt.Name)
	}
	assert.Equal(t, w.order, names)
	byName := map[string]graph.Tensor{}
	for _, tt := range orig.Subgraphs[0].Tensors {
		byName[tt.Name] = tt
	}
	nextBuf := graph.BufferIndex(len(orig.Buffers))
	for id := n; id < len(sg.Tensors); id++ {
		tt := &sg.Tensors[id]
		if vals, ok := w.consts[tt.Name]; ok {
			assert.Equal(t, nextBuf, tt.Buffer, "%s has the next new buffer", tt.Name)
			nextBuf++
			assert.Equal(t, vals, int32s(t, got, graph.TensorID(id)), tt.Name)
			assert.Nil(t, tt.Quantization, tt.Name)
			continue
		}
		shape, ok := w.shapes[tt.Name]
		require.True(t, ok, "unexpected tensor %s", tt.Name)
		assert.Equal(t, shape, tt.Shape, tt.Name)
		assert.Zero(t, tt.Buffer, tt.Name)
		like := byName[strings.Split(tt.Name, "/")[0]]
		assert.Equal(t, like.Type, tt.Type, tt.Name)
		assert.Equal(t, like.Quantization, tt.Quantization, tt.Name)
	}
	assert.Len(t, got.Buffers, int(nextBuf), "a buffer per new constant, no more")
}

// TestRebuildCached checks the rebuild of regions with cached halos
// against the construction of docs/stripes.md ("Halo rows") worked out by
// hand.
func TestRebuildCached(t *testing.T) {
	t.Run("three stripes, caches sliced", func(t *testing.T) {
		// x [1,6,4,2] -> 3x3 SAME (TFLM pads 1 row and column each side)
		// -> a [1,6,4,3] -> 3x3 SAME -> y [1,6,4,3], y's rows in stripes
		// [0,2) [2,4) [4,6). A 3x3 SAME reads rows [p-1, q+1) for output
		// rows [p, q).
		//   stripe 0: y [0,2) reads a [-1,3) -> need/new a [0,3), which
		//     reads x [-1,4): slice x [0,4), pad 1 on top.
		//   stripe 1: y [2,4) reads a [1,5): need a [1,5); stripe 0 held
		//     a up to row 3, so new a [3,5), cache a [1,3) (stripe 0's
		//     tensor holds [0,3): its rows 1..3). new a [3,5) reads x
		//     [2,6): slice, no row padding.
		//   stripe 2: y [4,6) reads a [3,7) -> need a [3,6), new [5,6),
		//     cache [3,5) (rows 2..4 of stripe 1's [1,5)). new a [5,6)
		//     reads x [4,7): slice x [4,6), pad 1 below.
		// MACs: a row of a is 4·3·3·3·2 = 216, of y 4·3·3·3·3 = 324;
		// 6 rows each, computed once: 3240, extra 0 (recomputing, a
		// would take 3+4+3 rows: extra 864).
		orig := convPair(6, 4, 2, 3, 3, 3, true)
		rec := stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 3,
			rows: [][2]int64{{0, 2}, {2, 4}, {4, 6}}, halo: graph.HaloCache, macs: 3240, extra: 0}
		got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
		require.Empty(t, bad)
		checkCached(t, orig, got, cachedWant{
			ops: []string{
				"STRIDED_SLICE(x, x/stripe0/slice/begin, x/stripe0/slice/end, x/stripe0/slice/strides) -> x/stripe0/slice v2",
				"PAD(x/stripe0/slice, x/stripe0/pad/paddings) -> x/stripe0/pad v2",
				"CONV_2D(x/stripe0/pad, w1, b1) -> a/stripe0 v3",
				"STRIDED_SLICE(a/stripe0, a/stripe1/cache/begin, a/stripe1/cache/end, a/stripe1/cache/strides) -> a/stripe1/cache v2",
				"PAD(a/stripe0, a/stripe0/pad/paddings) -> a/stripe0/pad v2",
				"CONV_2D(a/stripe0/pad, w2, b2) -> y/stripe0 v3",

				"STRIDED_SLICE(x, x/stripe1/slice/begin, x/stripe1/slice/end, x/stripe1/slice/strides) -> x/stripe1/slice v2",
				"PAD(x/stripe1/slice, x/stripe1/pad/paddings) -> x/stripe1/pad v2",
				"CONV_2D(x/stripe1/pad, w1, b1) -> a/stripe1/new v3",
				"CONCATENATION(a/stripe1/cache, a/stripe1/new) -> a/stripe1 v2",
				"STRIDED_SLICE(a/stripe1, a/stripe2/cache/begin, a/stripe2/cache/end, a/stripe2/cache/strides) -> a/stripe2/cache v2",
				"PAD(a/stripe1, a/stripe1/pad/paddings) -> a/stripe1/pad v2",
				"CONV_2D(a/stripe1/pad, w2, b2) -> y/stripe1 v3",

				"STRIDED_SLICE(x, x/stripe2/slice/begin, x/stripe2/slice/end, x/stripe2/slice/strides) -> x/stripe2/slice v2",
				"PAD(x/stripe2/slice, x/stripe2/pad/paddings) -> x/stripe2/pad v2",
				"CONV_2D(x/stripe2/pad, w1, b1) -> a/stripe2/new v3",
				"CONCATENATION(a/stripe2/cache, a/stripe2/new) -> a/stripe2 v2",
				"PAD(a/stripe2, a/stripe2/pad/paddings) -> a/stripe2/pad v2",
				"CONV_2D(a/stripe2/pad, w2, b2) -> y/stripe2 v3",

				"CONCATENATION(y/stripe0, y/stripe1, y/stripe2) -> y v2",
			},
			order: []string{
				"x/stripe0/slice/begin", "x/stripe0/slice/end", "x/stripe0/slice/strides", "x/stripe0/slice",
				"x/stripe0/pad/paddings", "x/stripe0/pad", "a/stripe0",
				"a/stripe1/cache/begin", "a/stripe1/cache/end", "a/stripe1/cache/strides", "a/stripe1/cache",
				"a/stripe0/pad/paddings", "a/stripe0/pad", "y/stripe0",
				"x/stripe1/slice/begin", "x/stripe1/slice/end", "x/stripe1/slice/strides", "x/stripe1/slice",
				"x/stripe1/pad/paddings", "x/stripe1/pad", "a/stripe1/new", "a/stripe1",
				"a/stripe2/cache/begin", "a/stripe2/cache/end", "a/stripe2/cache/strides", "a/stripe2/cache",
				"a/stripe1/pad/paddings", "a/stripe1/pad", "y/stripe1",
				"x/stripe2/slice/begin", "x/stripe2/slice/end", "x/stripe2/slice/strides", "x/stripe2/slice",
				"x/stripe2/pad/paddings", "x/stripe2/pad", "a/stripe2/new", "a/stripe2",
				"a/stripe2/pad/paddings", "a/stripe2/pad", "y/stripe2",
			},
			shapes: map[string][]int32{
				"x/stripe0/slice": {1, 4, 4, 2}, "x/stripe0/pad": {1, 5, 6, 2}, "a/stripe0": {1, 3, 4, 3},
				"a/stripe1/cache": {1, 2, 4, 3}, "a/stripe0/pad": {1, 4, 6, 3}, "y/stripe0": {1, 2, 4, 3},
				"x/stripe1/slice": {1, 4, 4, 2}, "x/stripe1/pad": {1, 4, 6, 2}, "a/stripe1/new": {1, 2, 4, 3},
				"a/stripe1": {1, 4, 4, 3}, "a/stripe2/cache": {1, 2, 4, 3}, "a/stripe1/pad": {1, 4, 6, 3}, "y/stripe1": {1, 2, 4, 3},
				"x/stripe2/slice": {1, 2, 4, 2}, "x/stripe2/pad": {1, 3, 6, 2}, "a/stripe2/new": {1, 1, 4, 3},
				"a/stripe2": {1, 3, 4, 3}, "a/stripe2/pad": {1, 4, 6, 3}, "y/stripe2": {1, 2, 4, 3},
			},
			consts: map[string][]int32{
				"x/stripe0/slice/begin": {0, 0, 0, 0}, "x/stripe0/slice/end": {1, 4, 4, 2}, "x/stripe0/slice/strides": {1, 1, 1, 1},
				"x/stripe0/pad/paddings": {0, 0, 1, 0, 1, 1, 0, 0},
				"a/stripe1/cache/begin":  {0, 1, 0, 0}, "a/stripe1/cache/end": {1, 3, 4, 3}, "a/stripe1/cache/strides": {1, 1, 1, 1},
				"a/stripe0/pad/paddings": {0, 0, 1, 0, 1, 1, 0, 0},
				"x/stripe1/slice/begin":  {0, 2, 0, 0}, "x/stripe1/slice/end": {1, 6, 4, 2}, "x/stripe1/slice/strides": {1, 1, 1, 1},
				"x/stripe1/pad/paddings": {0, 0, 0, 0, 1, 1, 0, 0},
				"a/stripe2/cache/begin":  {0, 2, 0, 0}, "a/stripe2/cache/end": {1, 4, 4, 3}, "a/stripe2/cache/strides": {1, 1, 1, 1},
				"a/stripe1/pad/paddings": {0, 0, 0, 0, 1, 1, 0, 0},
				"x/stripe2/slice/begin":  {0, 4, 0, 0}, "x/stripe2/slice/end": {1, 6, 4, 2}, "x/stripe2/slice/strides": {1, 1, 1, 1},
				"x/stripe2/pad/paddings": {0, 0, 0, 1, 1, 1, 0, 0},
				"a/stripe2/pad/paddings": {0, 0, 0, 1, 1, 1, 0, 0},
			},
		})
		sg := &got.Subgraphs[0]
		for _, op := range sg.Ops {
			switch op.CodeName {
			case "CONV_2D":
				assert.Equal(t, graph.PaddingValid, op.Window.Padding)
				assert.Equal(t, int64(graph.PaddingValid), op.Options.Int("padding"))
			case "CONCATENATION":
				assert.Equal(t, int64(1), op.Options.Int("axis"))
				assert.Equal(t, int64(0), op.Options.Int("fused_activation_function"))
			case "STRIDED_SLICE":
				for _, f := range []string{"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "offset"} {
					assert.Equal(t, int64(0), op.Options.Int(f))
				}
			}
		}
		assert.Equal(t, []int32{1, 0, 4, 3}, sg.Tensors[3].Shape, "a, now unused, has 0 rows")
		require.Len(t, got.Stripes, 1)
		assert.Equal(t, graph.HaloCache, got.Stripes[0].Halo)
		assert.Equal(t, [][2]int32{{0, 2}, {2, 4}, {4, 6}}, got.Stripes[0].Rows)

		// The same record recomputing: a takes 10 rows, 864 extra MACs.
		rec.halo, rec.extra = graph.HaloRecompute, 864
		re, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
		require.Empty(t, bad)
		// Stripe 1 recomputes a [1,5) from all of x [0,6) (no slice):
		// 5 + 4 + 5 operators and the concatenation.
		assert.Len(t, re.Subgraphs[0].Ops, 15, "recompute")
		assert.Equal(t, graph.HaloRecompute, re.Stripes[0].Halo)
	})
	t.Run("the whole tensor is the cache", func(t *testing.T) {
		// x [1,4,1,1] FLOAT32 -> 5x5 SAME (TFLM pads 2 rows and columns
		// each side) -> a -> 5x5 SAME -> y, rows [0,1) [1,4). Output
		// rows [p,q) read [p-2, q+2).
		//   stripe 0: y [0,1) reads a [-2,3): need/new a [0,3), which
		//     reads x [-2,5): all of x (no slice), pad 2 above, 1 below.
		//   stripe 1: y [1,4) reads a [-1,6): need a [0,4), new [3,4),
		//     cache [0,3): all of stripe 0's a, no slice. new a [3,4)
		//     reads x [1,6): slice [1,4), pad 2 below. y's copy reads all
		//     of a [0,4) with 1 row padding above, 2 below.
		// MACs: 25 a row of each conv, 4 rows each: 200; extra 0.
		orig := convPair(4, 1, 1, 1, 5, 1, false)
		rec := stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 2,
			rows: [][2]int64{{0, 1}, {1, 4}}, halo: graph.HaloCache, macs: 200, extra: 0}
		got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
		require.Empty(t, bad)
		checkCached(t, orig, got, cachedWant{
			ops: []string{
				"PAD(x, x/stripe0/pad/paddings) -> x/stripe0/pad v1",
				"CONV_2D(x/stripe0/pad, w1, b1) -> a/stripe0 v1",
				"PAD(a/stripe0, a/stripe0/pad/paddings) -> a/stripe0/pad v1",
				"CONV_2D(a/stripe0/pad, w2, b2) -> y/stripe0 v1",
				"STRIDED_SLICE(x, x/stripe1/slice/begin, x/stripe1/slice/end, x/stripe1/slice/strides) -> x/stripe1/slice v1",
				"PAD(x/stripe1/slice, x/stripe1/pad/paddings) -> x/stripe1/pad v1",
				"CONV_2D(x/stripe1/pad, w1, b1) -> a/stripe1/new v1",
				"CONCATENATION(a/stripe0, a/stripe1/new) -> a/stripe1 v1",
				"PAD(a/stripe1, a/stripe1/pad/paddings) -> a/stripe1/pad v1",
				"CONV_2D(a/stripe1/pad, w2, b2) -> y/stripe1 v1",
				"CONCATENATION(y/stripe0, y/stripe1) -> y v1",
			},
			order: []string{
				"x/stripe0/pad/paddings", "x/stripe0/pad", "a/stripe0", "a/stripe0/pad/paddings", "a/stripe0/pad", "y/stripe0",
				"x/stripe1/slice/begin", "x/stripe1/slice/end", "x/stripe1/slice/strides", "x/stripe1/slice",
				"x/stripe1/pad/paddings", "x/stripe1/pad", "a/stripe1/new", "a/stripe1", "a/stripe1/pad/paddings", "a/stripe1/pad",
				"y/stripe1",
			},
			shapes: map[string][]int32{
				"x/stripe0/pad": {1, 7, 5, 1}, "a/stripe0": {1, 3, 1, 1}, "a/stripe0/pad": {1, 5, 5, 1}, "y/stripe0": {1, 1, 1, 1},
				"x/stripe1/slice": {1, 3, 1, 1}, "x/stripe1/pad": {1, 5, 5, 1}, "a/stripe1/new": {1, 1, 1, 1}, "a/stripe1": {1, 4, 1, 1},
				"a/stripe1/pad": {1, 7, 5, 1}, "y/stripe1": {1, 3, 1, 1},
			},
			consts: map[string][]int32{
				"x/stripe0/pad/paddings": {0, 0, 2, 1, 2, 2, 0, 0},
				"a/stripe0/pad/paddings": {0, 0, 2, 0, 2, 2, 0, 0},
				"x/stripe1/slice/begin":  {0, 1, 0, 0}, "x/stripe1/slice/end": {1, 4, 1, 1}, "x/stripe1/slice/strides": {1, 1, 1, 1},
				"x/stripe1/pad/paddings": {0, 0, 0, 2, 2, 2, 0, 0},
				"a/stripe1/pad/paddings": {0, 0, 1, 2, 2, 2, 0, 0},
			},
		})
	})
}

// padConv is x [1,4,1,1] FLOAT32 -> PAD by 2 rows below -> p [1,6,1,1]
// -> CONV_2D 3x1 VALID -> y [1,4,1,1].
func padConv() *graph.Model {
	pads := []int32{0, 0, 0, 2, 0, 0, 0, 0}
	var data []byte
	for _, v := range pads {
		data = append(data, byte(v), 0, 0, 0)
	}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: data}, {Data: make([]byte, 12)}, {Data: make([]byte, 4)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("x", graph.Float32, 1, 4, 1, 1), withBuffer(tensor("paddings", graph.Int32, 4, 2), 1),
				tensor("p", graph.Float32, 1, 6, 1, 1), withBuffer(tensor("w", graph.Float32, 1, 3, 1, 1), 2),
				withBuffer(tensor("b", graph.Int32, 1), 3), tensor("y", graph.Float32, 1, 4, 1, 1)},
			Ops: []graph.Op{{Code: opPad, CodeName: "PAD", Inputs: ids(0, 1), Outputs: ids(2)},
				{Code: graph.Conv2D, CodeName: "CONV_2D", Inputs: ids(2, 3, 4), Outputs: ids(5),
					Window: &graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}},
			Inputs:  ids(0),
			Outputs: ids(5),
		}},
	}
}

// TestCachedRefusals: records a region with cached halos cannot take
// (worked out by hand, docs/stripes.md "Halo rows"), each a BadStripes
// naming the record, the stripe and the tensor; where the same rows
// recomputing can be built, recompute accepts them (with the extra MACs
// given).
func TestCachedRefusals(t *testing.T) {
	for name, tt := range map[string]struct {
		model      func() *graph.Model
		rec        stripeRec
		recomputed int64 // extra_macs recomputing; -1: recompute refuses too
		want       string
	}{
		// 5x5 SAME convs over 4 rows: output rows [p,q) read [p-2,q+2).
		// Stripe 1 (y [1,2)) needs a [0,4), all of a; stripe 2 (y [2,4))
		// needs a [0,4) again and would compute none of it.
		"a stripe computes no row of a tensor": {
			model: func() *graph.Model { return convPair(4, 1, 1, 1, 5, 1, false) },
			rec: stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 3,
				rows: [][2]int64{{0, 1}, {1, 2}, {2, 4}}, halo: graph.HaloCache, macs: 200},
			recomputed: (3 + 4 + 4 - 4) * 25,
			want: "stripes[0]: stripe 2 (rows [2,4) of 0:6 (y)) needs rows [0,4) of 0:3 (a), which stripe 1 computed (up to row 4): " +
				"with halo cache it would compute no row of it",
		},
		// Stripe 1 (y [3,4)) needs p [3,6), new p [5,6): PAD's bottom
		// padding only, which reads no row of x.
		"a stripe's new rows lie wholly in padding": {
			model: padConv,
			rec: stripeRec{path: "stripes[0]", input: 0, output: 5, ops: []graph.OpIndex{0, 1}, k: 2,
				rows: [][2]int64{{0, 3}, {3, 4}}, halo: graph.HaloCache, macs: 12},
			recomputed: 0,
			want:       "stripes[0]: stripe 1 (rows [3,4) of 0:5 (y)) reads no row of 0:0 (x) through op 0:0 (PAD)",
		},
		// MIRROR_PAD REFLECT by 2 rows: stripe 1 (y [4,8)) needs p
		// [4,10), new p [6,10): x [4,6) mirrored 2 below, of a 2-row
		// slice, where REFLECT reaches 1 deep.
		"a stripe's mirror deeper than its new rows": {
			model: func() *graph.Model { return mirrorModel(true) },
			rec: stripeRec{path: "stripes[0]", input: 0, output: 5, ops: []graph.OpIndex{0, 1}, k: 2,
				rows: [][2]int64{{0, 4}, {4, 8}}, halo: graph.HaloCache, macs: 8 * 4 * 3 * 3 * 3 * 2},
			recomputed: 0,
			want:       "stripes[0]: stripe 1 (rows [4,8) of 0:5 (y)) mirrors 0+2 rows of 2 rows of 0:0 (x) through op 0:0 (MIRROR_PAD)",
		},
		// The three-stripe chain of TestRebuildCached computes no row
		// twice: extra_macs 0, not recompute's 864.
		"extra_macs of recompute": {
			model: func() *graph.Model { return convPair(6, 4, 2, 3, 3, 3, true) },
			rec: stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 3,
				rows: [][2]int64{{0, 2}, {2, 4}, {4, 6}}, halo: graph.HaloCache, macs: 3240, extra: 864},
			recomputed: 864,
			want:       "stripes[0]: macs 3240 and extra_macs 864, but the region computes 3240 multiply-accumulates and its stripes 0 more",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, bad := rebuildModel(tt.model(), &planDoc{stripes: []stripeRec{tt.rec}})
			assert.Nil(t, got)
			require.Len(t, bad, 1)
			assert.Equal(t, BadStripes, bad[0].Kind)
			assert.Contains(t, bad[0].Msg, tt.want)

			rec := tt.rec
			rec.halo, rec.extra = graph.HaloRecompute, tt.recomputed
			_, bad = rebuildModel(tt.model(), &planDoc{stripes: []stripeRec{rec}})
			assert.Empty(t, bad, "recompute builds it")
		})
	}
	t.Run("SYMMETRIC mirrors 2 rows of a 2-row slice", func(t *testing.T) {
		rec := stripeRec{path: "stripes[0]", input: 0, output: 5, ops: []graph.OpIndex{0, 1}, k: 2,
			rows: [][2]int64{{0, 4}, {4, 8}}, halo: graph.HaloCache, macs: 8 * 4 * 3 * 3 * 3 * 2}
		got, bad := rebuildModel(mirrorModel(false), &planDoc{stripes: []stripeRec{rec}})
		require.Empty(t, bad)
		sg := &got.Subgraphs[0]
		var mp []*graph.Op
		for i := range sg.Ops {
			if sg.Ops[i].Code == opMirrorPad {
				mp = append(mp, &sg.Ops[i])
			}
		}
		require.Len(t, mp, 2)
		// Stripe 0: p [0,6) from x [0,4) and 2 rows above; stripe 1: new
		// p [6,10) from x [4,6) and 2 rows below.
		assert.Equal(t, []int32{0, 0, 2, 0, 1, 1, 0, 0}, int32s(t, got, mp[0].Inputs[1]))
		assert.Equal(t, []int32{0, 0, 0, 2, 1, 1, 0, 0}, int32s(t, got, mp[1].Inputs[1]))
		assert.Equal(t, "p/stripe1/new", sg.Tensors[mp[1].Outputs[0]].Name)
		assert.Equal(t, []int32{1, 4, 6, 2}, sg.Tensors[mp[1].Outputs[0]].Shape)
	})
}

// TestDecodeStripeHalo: plan.json's halo key, absent in older plans.
func TestDecodeStripeHalo(t *testing.T) {
	for name, tt := range map[string]struct {
		halo any // nil: no key
		want graph.Halo
		bad  string
	}{
		"absent":       {nil, graph.HaloRecompute, ""},
		"recompute":    {"recompute", graph.HaloRecompute, ""},
		"cache":        {"cache", graph.HaloCache, ""},
		"bogus":        {"cached", "", `stripes[0].halo: "cached" is not a halo; want "recompute" or "cache"`},
		"empty":        {"", "", `stripes[0].halo: "" is not a halo`},
		"not a string": {1, "", "stripes[0].halo: number 1, want a string"},
	} {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(readPlan(t, "chain"), &doc))
			entry := map[string]any{"subgraph": 0, "input": "0:0", "output": "0:3", "operators": []string{"0:0"}, "k": 2,
				"rows": [][2]int{{0, 1}, {1, 2}}, "macs": 0, "extra_macs": 0}
			if tt.halo != nil {
				entry["halo"] = tt.halo
			}
			doc["stripes"] = []any{entry}
			js, err := json.Marshal(doc)
			require.NoError(t, err)
			got, bad := decode(js)
			if tt.bad != "" {
				assert.Nil(t, got)
				require.Len(t, bad, 1)
				assert.Equal(t, Malformed, bad[0].Kind)
				assert.Contains(t, bad[0].Msg, tt.bad)
				return
			}
			require.Empty(t, bad)
			require.Len(t, got.stripes, 1)
			assert.Equal(t, tt.want, got.stripes[0].halo)
		})
	}
}

// TestRewriteCachedMutations breaks a correct rewrite with cached halos
// in the ways a faulty rewriter would: each is a RewriteMismatch naming
// the operator, tensor or record.
func TestRewriteCachedMutations(t *testing.T) {
	orig := convPair(6, 4, 2, 3, 3, 3, true)
	rec := stripeRec{path: "stripes[0]", input: 0, output: 6, ops: []graph.OpIndex{0, 1}, k: 3,
		rows: [][2]int64{{0, 2}, {2, 4}, {4, 6}}, halo: graph.HaloCache, macs: 3240}
	good, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
	require.Empty(t, bad)
	var r report
	compareModels(&r, good, cloneModel(good), nil, false)
	require.Empty(t, r, "a model equal to the rebuild")
	recomputed := func() *graph.Model {
		rec := rec
		rec.halo, rec.extra = graph.HaloRecompute, 864
		m, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
		require.Empty(t, bad)
		return m
	}
	// Operators of TestRebuildCached's listing: 3 is stripe 0's cache
	// of a, 9 stripe 1's concatenation of it with a's new rows.
	for name, tt := range map[string]struct {
		mutate func(m *graph.Model)
		want   string
	}{
		"the cache one row early": {func(m *graph.Model) {
			setInt32(m, good.Subgraphs[0].Ops[3].Inputs[1], 0, 0, 0, 0)
		}, "tensor 0:14 (a/stripe1/cache/begin): its constant data (16 bytes) is not the rebuild's (16 bytes): [0 0 0 0], the rebuild's [0 1 0 0]"},
		"cache and new rows swapped": {func(m *graph.Model) {
			in := m.Subgraphs[0].Ops[9].Inputs
			in[0], in[1] = in[1], in[0]
		}, "op 0:9 (CONCATENATION) reads [0:27 (a/stripe1/new), 0:17 (a/stripe1/cache)], the rebuild's [0:17 (a/stripe1/cache), 0:27 (a/stripe1/new)]"},
		"the record says recompute": {func(m *graph.Model) {
			m.Stripes = append([]graph.StripeRegion(nil), m.Stripes...)
			m.Stripes[0].Halo = graph.HaloRecompute
		}, "stripes[0]: the rewritten model records"},
		"the halo recomputed": {func(m *graph.Model) {
			re := recomputed()
			re.Stripes = m.Stripes
			*m = *re
		}, "subgraph 0 of the rewritten model has 15 operators, the rebuild 20"},
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
	t.Run("a record without halo is recompute's", func(t *testing.T) {
		re := recomputed()
		m := cloneModel(re)
		m.Stripes = append([]graph.StripeRegion(nil), m.Stripes...)
		m.Stripes[0].Halo = ""
		var r report
		compareModels(&r, re, m, nil, false)
		assert.Empty(t, r)
	})
}
