package order_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
)

// copiesModel is in [1,4] -> FC -> x [1,32]; s1, s2 = the halves of x by
// STRIDED_SLICE (views of x's blocks); a = FC(s1) [1,64], b = FC(s2) [1,64];
// y = CONCATENATION(a, b) [1,128] (a and b in their slots); out = FC(y).
func copiesModel() *graph.Model {
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{}}}
	sg := &m.Subgraphs[0]
	f32 := func(name string, n int32) graph.TensorID {
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, n}, Size: 4 * int64(n)})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	ints := func(v ...int32) graph.TensorID {
		data := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "k", Type: graph.Int32, Shape: []int32{int32(len(v))},
			Buffer: graph.BufferIndex(len(m.Buffers) - 1), Size: int64(len(data))})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	op := func(code graph.Opcode, opts *graph.Options, out graph.TensorID, in ...graph.TensorID) {
		sg.Ops = append(sg.Ops, graph.Op{Code: code, CodeName: "OP", Inputs: in, Outputs: []graph.TensorID{out}, Options: opts})
	}
	const fc, concat, stridedSlice graph.Opcode = 9, 2, 45
	in, x := f32("in", 4), f32("x", 32)
	op(fc, nil, x, in)
	s1, s2 := f32("s1", 16), f32("s2", 16)
	ss := &graph.Options{Table: "StridedSliceOptions"}
	op(stridedSlice, ss, s1, x, ints(0, 0), ints(1, 16), ints(1, 1))
	op(stridedSlice, ss, s2, x, ints(0, 16), ints(1, 32), ints(1, 1))
	a, b, y, out := f32("a", 64), f32("b", 64), f32("y", 128), f32("out", 4)
	op(fc, nil, a, s1)
	op(fc, nil, b, s2)
	op(concat, &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Kind: graph.OptionInt, Int: 1, Present: true}}}, y, a, b)
	op(fc, nil, out, y)
	sg.Inputs, sg.Outputs = []graph.TensorID{in}, []graph.TensorID{out}
	return m
}

// TestScheduleCountsCopies: with Copies, the search counts the slices as
// views of x and a, b in y's bytes, as liveness with ExactOverlap does: its
// peak is liveness's, and below the peak without.
func TestScheduleCountsCopies(t *testing.T) {
	m := copiesModel()
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	copies := func(o graph.OpRef) []order.Copy {
		var cs []order.Copy
		for _, p := range lib.ExactOverlap(m, o.Subgraph, &m.Subgraphs[o.Subgraph].Ops[o.Op]) {
			cs = append(cs, order.Copy{Input: p.Input, Output: p.Output, Slot: p.Overlap == kernels.Slot, Offset: max(p.Lo, -p.Lo)})
		}
		return cs
	}
	with := schedule(t, m, order.Options{Copies: copies})
	without := schedule(t, m, order.Options{})
	live := livePeak(t, m, liveness.Options{Order: with.Order, Kernels: lib.ExactOnly(), ExactOverlap: true}, order.DefaultAlignment)
	assert.Equal(t, live, with.Peak, "the search's peak is liveness's")
	assert.Less(t, with.Peak, without.Peak)
	// x (128 bytes) while its views live, with y (512) from a's write on:
	// a and b never take bytes of their own; without, a, b and y (1024).
	assert.Equal(t, int64(128+512), with.Peak)
	assert.Equal(t, int64(1024), without.Peak)
}
