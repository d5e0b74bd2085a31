package driver_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// stripeModel is the shape of the stripe rewrite (docs/stripes.md): x =
// NEG(in) [1,10,8,4]; two row stripes of x with a halo, s1 rows [0,6) and
// s2 rows [4,10) (STRIDED_SLICE begin [0,r0,0,0] end [1,r1,8,4] strides
// 1); each through a 3x3 VALID convolution, [1,4,6,4]; y =
// CONCATENATION(y1, y2) on the rows, [1,8,6,4]; out = ABS(y).
func stripeModel(t *testing.T) []byte {
	t.Helper()
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(name string, shape ...int32) graph.TensorID {
		size, err := graph.ByteSize(graph.Float32, shape)
		require.NoError(t, err)
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: name, Type: graph.Float32, Shape: shape, Size: size})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	constant := func(name string, typ graph.ElementType, shape []int32, words []uint32) graph.TensorID {
		data := make([]byte, 4*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint32(data[4*i:], w)
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: name, Type: typ, Shape: shape, Buffer: graph.BufferIndex(len(m.Buffers) - 1), Size: int64(len(data))})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	ints := func(name string, v ...int32) graph.TensorID {
		w := make([]uint32, len(v))
		for i, x := range v {
			w[i] = uint32(x)
		}
		return constant(name, graph.Int32, []int32{int32(len(v))}, w)
	}
	floats := func(name string, seed float64, shape ...int32) graph.TensorID {
		n := int32(1)
		for _, d := range shape {
			n *= d
		}
		w := make([]uint32, n)
		for i := range w {
			w[i] = math.Float32bits(float32(0.3 * math.Sin(seed+1.3*float64(i))))
		}
		return constant(name, graph.Float32, shape, w)
	}
	const codeConcat, codeStridedSlice, codeNeg, codeAbs graph.Opcode = 2, 45, 59, 101
	in, x := add("in", 1, 10, 8, 4), add("x", 1, 10, 8, 4)
	sg.Ops = append(sg.Ops, graph.Op{Code: codeNeg, Version: 1, Inputs: []graph.TensorID{in}, Outputs: []graph.TensorID{x}})
	valid := graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	w, b := floats("w", 1, 4, 3, 3, 4), floats("b", 2, 4)
	var ys []graph.TensorID
	for k, rows := range [][2]int32{{0, 6}, {4, 10}} {
		s := add("s", 1, rows[1]-rows[0], 8, 4)
		sg.Ops = append(sg.Ops, graph.Op{Code: codeStridedSlice, Version: 1, Options: &graph.Options{Table: "StridedSliceOptions"},
			Inputs:  []graph.TensorID{x, ints("begin", 0, rows[0], 0, 0), ints("end", 1, rows[1], 8, 4), ints("strides", 1, 1, 1, 1)},
			Outputs: []graph.TensorID{s}})
		y := add([]string{"y1", "y2"}[k], 1, rows[1]-rows[0]-2, 6, 4)
		win := valid
		sg.Ops = append(sg.Ops, graph.Op{Code: graph.Conv2D, Version: 1, Window: &win, Inputs: []graph.TensorID{s, w, b}, Outputs: []graph.TensorID{y}})
		ys = append(ys, y)
	}
	y, out := add("y", 1, 8, 6, 4), add("out", 1, 8, 6, 4)
	sg.Ops = append(sg.Ops, graph.Op{Code: codeConcat, Version: 1, Inputs: ys, Outputs: []graph.TensorID{y},
		Options: &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Kind: graph.OptionInt, Int: 1, Present: true}}}})
	sg.Ops = append(sg.Ops, graph.Op{Code: codeAbs, Version: 1, Inputs: []graph.TensorID{y}, Outputs: []graph.TensorID{out}})
	sg.Inputs, sg.Outputs = []graph.TensorID{in}, []graph.TensorID{out}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestStripeShapeCopies: the stripe rewrite's row slices become views of
// x, and the stripes' outputs are produced in their slots of y, in the
// model's order and in the memory order.
func TestStripeShapeCopies(t *testing.T) {
	for _, sched := range []string{driver.ScheduleModel, driver.ScheduleMemory} {
		cfg := copiesConfig(t, true)
		cfg.Schedule = sched
		out, err := driver.Compile(context.Background(), stripeModel(t), cfg)
		require.NoError(t, err)
		require.Empty(t, verify.Plan(out.Model, out.PlanJSON))
		kinds := map[kernels.Overlap]int{}
		for _, a := range out.Plan.Allocs {
			if a.Kind == plan.TensorAlloc && a.Copy != nil {
				kinds[a.Copy.Contract.Overlap]++
				t.Logf("%s: %s", out.Model.Tensor(a.Ref.Subgraph, a.Ref.Tensor).Name, a.Copy.Contract)
			}
		}
		assert.Equal(t, 2, kinds[kernels.Block], "both row slices are views of x")
		assert.Equal(t, 2, kinds[kernels.Slot], "both stripes' outputs lie in their slots of y")
	}
}

// TestTFLMStripeShapeCopies: TFLM computes the stripe-shaped model's
// outputs byte for byte with heliac's plan (views and slots).
func TestTFLMStripeShapeCopies(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	data := stripeModel(t)
	orig := filepath.Join(dir, "stripe.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	out, err := driver.Compile(context.Background(), data, copiesConfig(t, true))
	require.NoError(t, err)
	mine := filepath.Join(dir, "stripe.heliac.tflite")
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
	for _, seed := range interopSeeds {
		opts := tflmrun.Options{Seed: seed, Invokes: interopInvokes, ArenaBytes: 64 << 10, Trace: true}
		want, err := tflmrun.Run(context.Background(), tool, orig, opts)
		require.NoError(t, err)
		got, err := tflmrun.Run(context.Background(), tool, mine, opts)
		require.NoError(t, err)
		require.True(t, want.OK() && got.OK())
		assert.Equal(t, want.Outputs(), got.Outputs(), "seed %d", seed)
		assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "seed %d: every intermediate", seed)
	}
}
