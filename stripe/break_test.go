package stripe

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
)

// setInt32s gives tensor t of subgraph 0 new INT32 contents, in a new
// buffer.
func setInt32s(m *graph.Model, t graph.TensorID, v ...int32) {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
	}
	m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
	m.Subgraphs[0].Tensors[t].Buffer = graph.BufferIndex(len(m.Buffers) - 1)
}

func setRows(m *graph.Model, t graph.TensorID, rows int32) {
	ts := &m.Subgraphs[0].Tensors[t]
	ts.Shape = append([]int32(nil), ts.Shape...)
	ts.Shape[1] = rows
	size, err := graph.ByteSize(ts.Type, ts.Shape)
	if err != nil {
		panic(err)
	}
	ts.Size = size
}

// TestBreakStripes breaks the rewrite of the 3x3 SAME stride-2 conv of
// TestApplyGeometry on purpose, each time so that TFLM still accepts the
// model (shapes consistent), and shows that TFLM's outputs then differ
// from the original's: the proof of TestApplyBitExactTFLM would catch
// each mistake. The rewritten operators are
//
//	0 STRIDED_SLICE x rows [0,4)   1 PAD (1,0),(1,1)   2 CONV_2D -> y rows 0-2
//	3 STRIDED_SLICE x rows [3,7)   4 PAD (0,1),(1,1)   5 CONV_2D -> y rows 2-4
//	6 CONCATENATION
func TestBreakStripes(t *testing.T) {
	tool := tflmrun.Require(t)
	tc := geometryCases()[0]
	require.Equal(t, "conv 3x3 SAME stride 2", tc.name)
	cases := []struct {
		name   string
		mutate func(m *graph.Model)
	}{
		{"halo one row short", func(m *graph.Model) {
			// Stripe 0 reads x rows [0,3) and pads one more row at the
			// bottom instead of reading row 3.
			ops := m.Subgraphs[0].Ops
			setInt32s(m, ops[0].Inputs[2], 1, 3, 5, 2)
			setRows(m, ops[0].Outputs[0], 3)
			setInt32s(m, ops[1].Inputs[1], 0, 0, 1, 1, 1, 1, 0, 0)
		}},
		{"border padded with the wrong value", func(m *graph.Model) {
			// PADV2 with zero point + 1 instead of PAD (the input's zero
			// point, -3).
			sg := &m.Subgraphs[0]
			m.Buffers = append(m.Buffers, graph.Buffer{Data: []byte{0xfe}}) // -2
			sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "wrong", Type: graph.Int8, Shape: []int32{1}, Buffer: graph.BufferIndex(len(m.Buffers) - 1), Size: 1,
				Quantization: copyQuant(sg.Tensors[0].Quantization)})
			op := &sg.Ops[1]
			op.Code, op.CodeName = opPadV2, "PADV2"
			op.Options = &graph.Options{Table: "PadV2Options", Fields: []graph.OptionField{}}
			op.Inputs = append(append([]graph.TensorID(nil), op.Inputs...), graph.TensorID(len(sg.Tensors)-1))
		}},
		{"paddings shifted", func(m *graph.Model) {
			// Stripe 0 pads its top row at the bottom.
			setInt32s(m, m.Subgraphs[0].Ops[1].Inputs[1], 0, 0, 0, 1, 1, 1, 0, 0)
		}},
		{"slot one row off", func(m *graph.Model) {
			// Stripe 1 computes y rows 1-3 (reading x rows [1,6), no
			// padding in H) where rows 2-4 go.
			ops := m.Subgraphs[0].Ops
			setInt32s(m, ops[3].Inputs[1], 0, 1, 0, 0)
			setInt32s(m, ops[3].Inputs[2], 1, 6, 5, 2)
			setRows(m, ops[3].Outputs[0], 5)
			setInt32s(m, ops[4].Inputs[1], 0, 0, 0, 0, 1, 1, 0, 0)
		}},
	}
	m := tc.build(t)
	want, _ := tflmRun(t, tool, m)
	good, err := Apply(m, []graph.StripeRegion{tc.region(m)})
	require.NoError(t, err)
	got, _ := tflmRun(t, tool, good)
	require.Equal(t, want, got, "the unbroken rewrite is exact")
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			bad, err := Apply(m, []graph.StripeRegion{tc.region(m)})
			require.NoError(t, err)
			bc.mutate(bad)
			got, _ := tflmRun(t, tool, bad)
			assert.NotEqual(t, want, got, "TFLM's outputs should differ")
		})
	}
}

// TestBreakMirrorPad: the REFLECT case of TestApplyGeometry broken on
// purpose, shapes kept: a stripe's MIRROR_PAD run as SYMMETRIC (the edge
// row repeated), or stripe 1's slice one row lower (x rows [3,6) and a
// repeated last row, the rows it mirrors then off by one). TFLM's
// outputs differ each time. A stripe whose slice is too short to mirror
// from is refused by Apply, naming the operator.
func TestBreakMirrorPad(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	tc := mirrorCase("REFLECT", 0)
	m := tc.build(t)
	want, _ := tflmRun(t, tool, m)
	cases := []struct {
		name   string
		mutate func(m *graph.Model)
	}{
		{"stripe 0 mirrors SYMMETRIC", func(m *graph.Model) {
			op := &m.Subgraphs[0].Ops[1]
			op.Options = &graph.Options{Table: "MirrorPadOptions", Fields: []graph.OptionField{intField("mode", "MirrorPadMode", 1, true)}}
		}},
		{"stripe 1's slice one row low", func(m *graph.Model) {
			// Rows [3,6) of x mirrored by 3 below still make 6 rows.
			ops := m.Subgraphs[0].Ops
			setInt32s(m, ops[3].Inputs[1], 0, 3, 0, 0)
			setRows(m, ops[3].Outputs[0], 3)
			setInt32s(m, ops[4].Inputs[1], 0, 0, 0, 3, 1, 1, 0, 0)
		}},
	}
	good, err := Apply(m, []graph.StripeRegion{tc.region(m)})
	require.NoError(t, err)
	got, _ := tflmRun(t, tool, good)
	require.Equal(t, want, got, "the unbroken rewrite is exact")
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			bad, err := Apply(m, []graph.StripeRegion{tc.region(m)})
			require.NoError(t, err)
			bc.mutate(bad)
			got, _ := tflmRun(t, tool, bad)
			assert.NotEqual(t, want, got, "TFLM's outputs should differ")
		})
	}
	r := tc.region(m)
	r.Rows = EvenRows(8, 4) // stripe 0: p rows [0,4) mirror 2 rows of x [0,2)
	_, err = Apply(m, []graph.StripeRegion{r})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `operator 0 (MIRROR_PAD): the stripe of output rows [0,2) mirrors 2+0 rows of a slice of 2 rows of tensor 0 "x" (at most 1)`)
}

// TestBreakCachedHalos breaks the residual chain's rewrite with cached
// halos (cachedResidualOps) on purpose, shapes kept, and shows that
// TFLM's outputs then differ from the original's:
//
//	3  STRIDED_SLICE a/stripe0 rows [2,4) -> a/stripe1/cache
//	8  STRIDED_SLICE x rows [3,6) -> x/stripe1/slice (a's fresh rows [4,6))
//	11 CONCATENATION a/stripe1/cache, a/stripe1/new -> a/stripe1
func TestBreakCachedHalos(t *testing.T) {
	tool := tflmrun.Require(t)
	tc := geometryCases()[2]
	require.Equal(t, "chain with a residual ADD", tc.name)
	m := tc.build(t)
	r := tc.region(m)
	r.Halo = graph.HaloCache
	cases := []struct {
		name   string
		mutate func(m *graph.Model)
	}{
		{"cache one row off", func(m *graph.Model) {
			// a rows [1,3) of stripe 0's [0,4) instead of [2,4).
			op := m.Subgraphs[0].Ops[3]
			setInt32s(m, op.Inputs[1], 0, 1, 0, 0)
			setInt32s(m, op.Inputs[2], 1, 3, 4, 2)
		}},
		{"concatenation in the wrong order", func(m *graph.Model) {
			op := &m.Subgraphs[0].Ops[11]
			op.Inputs = []graph.TensorID{op.Inputs[1], op.Inputs[0]}
		}},
		{"fresh rows one row off", func(m *graph.Model) {
			// Stripe 1 computes a [3,5) (from x [2,5), padded below) where
			// a [4,6) goes.
			op := m.Subgraphs[0].Ops[8]
			setInt32s(m, op.Inputs[1], 0, 2, 0, 0)
			setInt32s(m, op.Inputs[2], 1, 5, 4, 2)
		}},
	}
	want, _ := tflmRun(t, tool, m)
	good, err := Apply(m, []graph.StripeRegion{r})
	require.NoError(t, err)
	require.Equal(t, cachedResidualOps, describe(good))
	got, _ := tflmRun(t, tool, good)
	require.Equal(t, want, got, "the unbroken rewrite is exact")
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			bad, err := Apply(m, []graph.StripeRegion{r})
			require.NoError(t, err)
			bc.mutate(bad)
			got, _ := tflmRun(t, tool, bad)
			assert.NotEqual(t, want, got, "TFLM's outputs should differ")
		})
	}
}
