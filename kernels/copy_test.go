package kernels_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Builtin codes and tables of the copying operators.
const (
	codeConcat       graph.Opcode = 2
	codeStridedSlice graph.Opcode = 45
	codeSplit        graph.Opcode = 49
	codeSlice        graph.Opcode = 65
	codeSplitV       graph.Opcode = 102
)

// copyModel builds one subgraph of the given tensors (int8 unless a
// constant) and one operator.
type copyModel struct {
	m  *graph.Model
	sg *graph.Subgraph
}

func newCopyModel() *copyModel {
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{}}}
	return &copyModel{m: m, sg: &m.Subgraphs[0]}
}

func (c *copyModel) act(shape ...int32) graph.TensorID {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	c.sg.Tensors = append(c.sg.Tensors, graph.Tensor{Name: "t", Type: graph.Int8, Shape: shape, Size: n,
		Quantization: &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{-3}}})
	return graph.TensorID(len(c.sg.Tensors) - 1)
}

func (c *copyModel) ints(v ...int32) graph.TensorID {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
	}
	c.m.Buffers = append(c.m.Buffers, graph.Buffer{Data: data})
	c.sg.Tensors = append(c.sg.Tensors, graph.Tensor{Name: "k", Type: graph.Int32, Shape: []int32{int32(len(v))},
		Buffer: graph.BufferIndex(len(c.m.Buffers) - 1), Size: int64(len(data))})
	return graph.TensorID(len(c.sg.Tensors) - 1)
}

func intOpts(table string, kv ...any) *graph.Options {
	o := &graph.Options{Table: table}
	for i := 0; i < len(kv); i += 2 {
		o.Fields = append(o.Fields, graph.OptionField{Name: kv[i].(string), Kind: graph.OptionInt, Present: true, Int: int64(kv[i+1].(int))})
	}
	return o
}

func (c *copyModel) op(code graph.Opcode, opts *graph.Options, in []graph.TensorID, out ...graph.TensorID) []kernels.Placement {
	lib, _ := kernels.Lookup(kernels.TFLMReference)
	op := graph.Op{Code: code, Inputs: in, Outputs: out, Options: opts}
	c.sg.Ops = append(c.sg.Ops, op)
	return lib.ExactOverlap(c.m, 0, &c.sg.Ops[len(c.sg.Ops)-1])
}

// offsets lists each placement's Lo (checking Lo == Hi) by operand.
func offsets(t *testing.T, ps []kernels.Placement) map[[2]int]int64 {
	t.Helper()
	out := map[[2]int]int64{}
	for _, p := range ps {
		require.Equal(t, p.Lo, p.Hi, "an exact-overlap copy has one place")
		require.True(t, p.Overlap.ExactOverlapCopy())
		out[[2]int{p.Input, p.Output}] = p.Lo
	}
	return out
}

func TestConcatenationSlots(t *testing.T) {
	// Rows of an image (axis 1, batch 1): each input is a whole block.
	c := newCopyModel()
	a, b, y := c.act(1, 3, 4, 2), c.act(1, 5, 4, 2), c.act(1, 8, 4, 2)
	assert.Equal(t, map[[2]int]int64{{0, 0}: 0, {1, 0}: 24}, offsets(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 1), ids(a, b), y)))
	// The same, axis -3 (resolved against the output's rank, as TFLM's
	// CalculatePositiveAxis does).
	assert.Equal(t, map[[2]int]int64{{0, 0}: 0, {1, 0}: 24}, offsets(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", -3), ids(a, b), y)))
	// Channels of a 1x3x4 image: 12 runs per input, no one block.
	c = newCopyModel()
	a, b, y = c.act(1, 3, 4, 2), c.act(1, 3, 4, 1), c.act(1, 3, 4, 3)
	assert.Empty(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 3), ids(a, b), y), "dimensions before the axis are not all 1")
	// Channels of a 1x1x1 image are one block each.
	c = newCopyModel()
	a, b, y = c.act(1, 1, 1, 2), c.act(1, 1, 1, 5), c.act(1, 1, 1, 7)
	assert.Equal(t, map[[2]int]int64{{0, 0}: 0, {1, 0}: 2}, offsets(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", -1), ids(a, b), y)))
	// The same tensor twice would need two slots.
	assert.Empty(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 3), ids(a, a), c.act(1, 1, 1, 4)))
	// A fused activation is not a copy.
	assert.Empty(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 3, "fused_activation_function", 1), ids(a, b), y))
	// INT8 with another scale: TFLM refuses it (no rescaling path).
	c.sg.Tensors[b].Quantization = &graph.Quantization{Scale: []float32{0.25}, ZeroPoint: []int64{-3}}
	assert.Empty(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 3), ids(a, b), y))
	// More than kMaxInputNum = 10 inputs.
	c = newCopyModel()
	var ins []graph.TensorID
	for range 11 {
		ins = append(ins, c.act(1, 1))
	}
	assert.Empty(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 1), ins, c.act(1, 11)))
	assert.Len(t, c.op(codeConcat, intOpts("ConcatenationOptions", "axis", 1), ins[:10], c.act(1, 10)), 10)
}

func TestSliceBlocks(t *testing.T) {
	c := newCopyModel()
	x := c.act(1, 6, 4, 2) // 48 bytes, rows of 8
	// SPLIT along rows: axis input 0, data input 1.
	o1, o2, o3 := c.act(1, 2, 4, 2), c.act(1, 2, 4, 2), c.act(1, 2, 4, 2)
	assert.Equal(t, map[[2]int]int64{{1, 0}: 0, {1, 1}: -16, {1, 2}: -32}, offsets(t, c.op(codeSplit, nil, ids(c.ints(1), x), o1, o2, o3)))
	// SPLIT along channels: 24 runs per output.
	assert.Empty(t, c.op(codeSplit, nil, ids(c.ints(3), x), c.act(1, 6, 4, 1), c.act(1, 6, 4, 1)))
	// SPLIT_V: data 0, sizes 1, axis 2 (negative: counts from the rank).
	v1, v2 := c.act(1, 1, 4, 2), c.act(1, 5, 4, 2)
	assert.Equal(t, map[[2]int]int64{{0, 0}: 0, {0, 1}: -8}, offsets(t, c.op(codeSplitV, nil, ids(x, c.ints(1, 5), c.ints(-3)), v1, v2)))
	// SLICE rows 2..5 whole: a block at row 2; size -1 runs to the end.
	assert.Equal(t, map[[2]int]int64{{0, 0}: -16}, offsets(t, c.op(codeSlice, nil, ids(x, c.ints(0, 2, 0, 0), c.ints(1, 3, -1, -1)), c.act(1, 3, 4, 2))))
	// SLICE of one row's middle columns: one run, still a block.
	assert.Equal(t, map[[2]int]int64{{0, 0}: -(3*8 + 1*2)}, offsets(t, c.op(codeSlice, nil, ids(x, c.ints(0, 3, 1, 0), c.ints(1, 1, 2, 2)), c.act(1, 1, 2, 2))))
	// SLICE of two rows' middle columns: two runs.
	assert.Empty(t, c.op(codeSlice, nil, ids(x, c.ints(0, 2, 1, 0), c.ints(1, 2, 2, 2)), c.act(1, 2, 2, 2)))
	// The stripe rewrite's row slice: begin [0,r0,0,0], end [1,r1,W,C],
	// strides 1.
	ss := intOpts("StridedSliceOptions")
	assert.Equal(t, map[[2]int]int64{{0, 0}: -8}, offsets(t, c.op(codeStridedSlice, ss,
		ids(x, c.ints(0, 1, 0, 0), c.ints(1, 4, 4, 2), c.ints(1, 1, 1, 1)), c.act(1, 3, 4, 2))))
	// Negative indices and masks, as StartForAxis/StopForAxis read them.
	assert.Equal(t, map[[2]int]int64{{0, 0}: -32}, offsets(t, c.op(codeStridedSlice, intOpts("StridedSliceOptions", "begin_mask", 1, "end_mask", 14),
		ids(x, c.ints(7, -2, 0, 0), c.ints(1, 0, 0, 0), c.ints(1, 1, 1, 1)), c.act(1, 2, 4, 2))))
	// A shrunk axis: row 5 alone, 3-D output.
	assert.Equal(t, map[[2]int]int64{{0, 0}: -40}, offsets(t, c.op(codeStridedSlice, intOpts("StridedSliceOptions", "shrink_axis_mask", 2),
		ids(x, c.ints(0, 5, 0, 0), c.ints(1, 6, 4, 2), c.ints(1, 1, 1, 1)), c.act(1, 4, 2))))
	// Stride 2 is no block; nor are two rows' first columns.
	assert.Empty(t, c.op(codeStridedSlice, ss, ids(x, c.ints(0, 0, 0, 0), c.ints(1, 6, 4, 2), c.ints(1, 2, 1, 1)), c.act(1, 3, 4, 2)))
	assert.Empty(t, c.op(codeStridedSlice, ss, ids(x, c.ints(0, 0, 0, 0), c.ints(1, 2, 2, 2), c.ints(1, 1, 1, 1)), c.act(1, 2, 2, 2)))
	// An output whose size is not the block's.
	assert.Empty(t, c.op(codeStridedSlice, ss, ids(x, c.ints(0, 1, 0, 0), c.ints(1, 4, 4, 2), c.ints(1, 1, 1, 1)), c.act(1, 2, 4, 2)))
}

func TestCopiesCiteTheirSource(t *testing.T) {
	for _, name := range kernels.Names() {
		lib, err := kernels.Lookup(name)
		require.NoError(t, err)
		cs := lib.Copies()
		require.Len(t, cs, 5, name)
		for _, c := range cs {
			assert.True(t, c.Overlap.ExactOverlapCopy())
			assert.Contains(t, c.Source, "@90b983c")
			assert.Contains(t, c.Source, "PR middle-end/32667")
			assert.Contains(t, c.Source, "llvm.memcpy")
		}
	}
}

func ids(v ...graph.TensorID) []graph.TensorID { return v }
