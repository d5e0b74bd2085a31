package kernels

import (
	"encoding/binary"
	"slices"

	"github.com/heliac/heliac/graph"
)

// Exact-overlap copies. A kernel that only copies bytes (CONCATENATION,
// SPLIT, SPLIT_V, SLICE, STRIDED_SLICE) may be given a source and a
// destination that are the same bytes: each input of a concatenation
// produced in its slot of the output (Slot), each output of a slice lying
// over the block of its input it copies (Block). The kernel then copies
// every byte onto itself, memcpy(p, p, n) or an element loop assigning
// each element to itself, and every byte keeps the value it holds.
//
// An element loop doing so is well-defined C++. memcpy with exactly
// overlapping operands is, by the letter of C11 (7.24.2.1), undefined,
// but both compilers TFLM is built with require it to work and emit it
// themselves for struct self-assignment: GCC documents it in
// gcc/doc/standards.texi (since PR middle-end/32667: "memcpy ... must
// also handle the case where the source and destination are the same"
// i.e. exact overlap), and LLVM's LangRef says of llvm.memcpy that its
// source and destination "must either be equal or non-overlapping". So an
// exact overlap (same address, same length) is allowed; any partial
// overlap stays forbidden, and Options switch these contracts off for a
// libc that differs (liveness.Options.ExactOverlap).

// TFLite builtin operator codes of the copying kernels (schema.fbs).
const (
	opConcatenation graph.Opcode = 2
	opStridedSlice  graph.Opcode = 45
	opSplit         graph.Opcode = 49
	opSlice         graph.Opcode = 65
	opSplitV        graph.Opcode = 102
)

// maxConcatInputs is TFLM's kMaxInputNum: ConcatenationPrepare refuses
// more inputs.
const maxConcatInputs = 10

// maxSliceRank is the most dimensions TFLM's SLICE and STRIDED_SLICE take
// (kMaxDim in slice.cc; the reference StridedSlice's 5-D path).
const maxSliceRank = 5

// Copies returns the library's exact-overlap copy contracts (Slot and
// Block), by operator code then position. Their Input or Output is -1
// where the contract names every position (a concatenation's inputs, a
// split's outputs); ExactOverlap gives the positions of one operator.
func (l *Library) Copies() []Contract {
	var out []Contract
	for _, cs := range l.copies {
		out = append(out, cs...)
	}
	slices.SortStableFunc(out, func(a, b Contract) int { return int(a.Op - b.Op) })
	return out
}

// ExactOverlap returns the exact-overlap copy contracts that apply to
// operator op of subgraph s of m, one placement per input (Slot) or output
// (Block), with Lo = Hi: the only place the input may start relative to
// the output, in bytes. A Slot input starts Lo >= 0 bytes into the
// output; a Block output starts -Lo >= 0 bytes into its input. Nothing is
// returned when a block is not one contiguous run of bytes, when the
// kernel would do more than copy bytes, or when an operand is missing or
// repeated. Whether the tensors are scratch, written once, and the like is
// for the caller to decide.
func (l *Library) ExactOverlap(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) []Placement {
	if l == nil || m == nil || s < 0 || int(s) >= len(m.Subgraphs) || op == nil || len(l.copies[op.Code]) == 0 {
		return nil
	}
	sg := &m.Subgraphs[s]
	c := l.copies[op.Code][0]
	var offs []int64 // byte offset of each input's slot (Slot) or output's block (Block)
	var ok bool
	switch op.Code {
	case opConcatenation:
		offs, ok = concatSlots(sg, op)
	case opSplit:
		offs, ok = splitBlocks(m, sg, op, 1, 0)
	case opSplitV:
		offs, ok = splitBlocks(m, sg, op, 0, 2)
	case opSlice:
		offs, ok = sliceBlock(m, sg, op)
	case opStridedSlice:
		offs, ok = stridedSliceBlock(m, sg, op)
	}
	if !ok {
		return nil
	}
	var out []Placement
	for k, off := range offs {
		p := Placement{Contract: c, Lo: off, Hi: off}
		if c.Overlap == Slot {
			p.Input, p.Output = k, 0
		} else {
			p.Input, p.Output, p.Lo, p.Hi = c.Input, k, -off, -off
		}
		out = append(out, p)
	}
	return out
}

// tensorAt returns operand t of sg, or nil when it is absent or out of
// range.
func tensorAt(sg *graph.Subgraph, t graph.TensorID) *graph.Tensor {
	if t == graph.NoTensor || t < 0 || int(t) >= len(sg.Tensors) {
		return nil
	}
	return &sg.Tensors[t]
}

// byteElems returns a tensor's element size in bytes and its element
// count, checking that its size is their product; ok is false otherwise
// (a sub-byte type, a negative dimension).
func byteElems(t *graph.Tensor) (e, n int64, ok bool) {
	bits := t.Type.Bits()
	n = elements(t.Shape)
	if bits == 0 || bits%8 != 0 || n < 0 || t.Size != n*bits/8 {
		return 0, 0, false
	}
	return bits / 8, n, true
}

// concatSlots returns where each input of a CONCATENATION lies in its
// output, in bytes, when the kernel is one memcpy per input.
//
// tensorflow/lite/micro/kernels/concatenation.cc @90b983c:
// ConcatenationPrepare requires every input of the output's type (BOOL,
// FLOAT32, INT8, INT16, INT32, INT64), no fused activation, at most
// kMaxInputNum = 10 inputs, and for INT8 the output's scale and zero
// point (no rescaling: "a restriction we introduced to Int8 kernels");
// the axis is resolved by CalculatePositiveAxis (a negative axis counts
// from the output's rank). EvalUnquantized<T> calls
// reference_ops::Concatenation
// (tensorflow/lite/kernels/internal/reference/concatenation.h @90b983c,
// lines 64-71): for k < outer_size (the product of the output's
// dimensions before the axis), for each input in order,
// memcpy(output_ptr, input_ptr + k * copy_size, copy_size * sizeof(T)).
// With outer_size 1 that is one memcpy per input, of the whole input, to
// the output bytes after the inputs before it: input i's slot. Produced
// in its slot, input i is copied exactly onto itself.
func concatSlots(sg *graph.Subgraph, op *graph.Op) ([]int64, bool) {
	if len(op.Inputs) == 0 || len(op.Inputs) > maxConcatInputs || len(op.Outputs) != 1 {
		return nil, false
	}
	out := tensorAt(sg, op.Outputs[0])
	if out == nil {
		return nil, false
	}
	opts := op.Resolved()
	if opts.Int("fused_activation_function") != 0 {
		return nil, false
	}
	switch out.Type {
	case graph.Bool, graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64:
	default:
		return nil, false
	}
	e, n, ok := byteElems(out)
	rank := len(out.Shape)
	if !ok || rank == 0 {
		return nil, false
	}
	axis := int(opts.Int("axis"))
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return nil, false
	}
	for d := range axis {
		if out.Shape[d] != 1 {
			return nil, false
		}
	}
	var offs []int64
	var at int64
	seen := map[graph.TensorID]bool{}
	for _, t := range op.Inputs {
		in := tensorAt(sg, t)
		if in == nil || seen[t] || t == op.Outputs[0] || in.Type != out.Type || len(in.Shape) != rank || !sameQuant(in, out) {
			return nil, false
		}
		seen[t] = true
		for d := range rank {
			if d != axis && in.Shape[d] != out.Shape[d] {
				return nil, false
			}
		}
		_, ni, ok := byteElems(in)
		if !ok {
			return nil, false
		}
		offs = append(offs, at*e)
		at += ni
	}
	if at != n {
		return nil, false
	}
	return offs, true
}

// sameQuant reports whether two tensors have one scale and zero point
// (both unquantized counts as one).
func sameQuant(a, b *graph.Tensor) bool {
	qa, qb := a.Quantization, b.Quantization
	if qa == nil || qb == nil {
		return (qa == nil || len(qa.Scale) == 0) && (qb == nil || len(qb.Scale) == 0)
	}
	return slices.Equal(qa.Scale, qb.Scale) && slices.Equal(qa.ZeroPoint, qb.ZeroPoint)
}

// constInts returns the values of a constant INT32 or INT64 vector.
func constInts(m *graph.Model, t *graph.Tensor) ([]int64, bool) {
	if t == nil || t.IsVariable || !m.HasData(t) {
		return nil, false
	}
	data := m.Buffers[t.Buffer].Data
	n := elements(t.Shape)
	var out []int64
	switch {
	case t.Type == graph.Int32 && int64(len(data)) == 4*n:
		for i := range n {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(data[4*i:]))))
		}
	case t.Type == graph.Int64 && int64(len(data)) == 8*n:
		for i := range n {
			out = append(out, int64(binary.LittleEndian.Uint64(data[8*i:])))
		}
	default:
		return nil, false
	}
	return out, true
}

// splitBlocks returns where each output of a SPLIT (data input 1, axis
// input 0) or SPLIT_V (data input 0, axis input 2) lies in the input, in
// bytes, when every output is one contiguous block of it.
//
// tensorflow/lite/micro/kernels/split.cc and split_v.cc @90b983c: Prepare
// requires a constant axis; Eval reads it as int32, adds the input's rank
// when negative, and SplitImpl<T> (FLOAT32, INT8, INT16, INT32) is an
// element loop (split.cc lines 56-64, split_v.cc lines 58-68): for k <
// outer_size (the product of the input's dimensions before the axis), for
// each output in order, output_ptr[j] = input_ptr[j] for j < copy_size,
// input_ptr advancing by copy_size. With outer_size 1, output i is the
// input's elements after those of the outputs before it: one contiguous
// block, and an output lying over it assigns each element to itself.
func splitBlocks(m *graph.Model, sg *graph.Subgraph, op *graph.Op, data, axisAt int) ([]int64, bool) {
	if len(op.Inputs) <= max(data, axisAt) || len(op.Outputs) == 0 {
		return nil, false
	}
	in, at := tensorAt(sg, op.Inputs[data]), tensorAt(sg, op.Inputs[axisAt])
	if in == nil || at == nil || at.Type != graph.Int32 {
		return nil, false
	}
	axes, ok := constInts(m, at)
	if !ok || len(axes) == 0 {
		return nil, false
	}
	switch in.Type {
	case graph.Float32, graph.Int8, graph.Int16, graph.Int32:
	default:
		return nil, false
	}
	e, n, ok := byteElems(in)
	rank := len(in.Shape)
	axis := int(axes[0])
	if axis < 0 {
		axis += rank
	}
	if !ok || axis < 0 || axis >= rank {
		return nil, false
	}
	for d := range axis {
		if in.Shape[d] != 1 {
			return nil, false
		}
	}
	var offs []int64
	var pos int64
	seen := map[graph.TensorID]bool{}
	for _, t := range op.Outputs {
		out := tensorAt(sg, t)
		if out == nil || seen[t] || t == op.Inputs[data] || out.Type != in.Type || len(out.Shape) != rank {
			return nil, false
		}
		seen[t] = true
		for d := range rank {
			if d != axis && out.Shape[d] != in.Shape[d] {
				return nil, false
			}
		}
		_, no, ok := byteElems(out)
		if !ok {
			return nil, false
		}
		offs = append(offs, pos*e)
		pos += no
	}
	if pos != n {
		return nil, false
	}
	return offs, true
}

// blockOffset returns where the block [begin[d], end[d]) of a tensor of
// the given shape starts, in elements, and how many elements it holds,
// when it is one contiguous run of the tensor's row-major elements: every
// dimension before some k spans one index, dimension k any range, every
// dimension after k the whole. ok is false otherwise, or when a range is
// empty or outside the shape.
func blockOffset(shape []int32, begin, end []int64) (off, n int64, ok bool) {
	k := -1 // the last dimension that does not span one index
	for d := range shape {
		if begin[d] < 0 || end[d] > int64(shape[d]) || begin[d] >= end[d] {
			return 0, 0, false
		}
		if end[d]-begin[d] != 1 {
			k = d
			break
		}
	}
	if k >= 0 {
		for d := k + 1; d < len(shape); d++ {
			if begin[d] != 0 || end[d] != int64(shape[d]) {
				return 0, 0, false
			}
		}
	}
	stride := int64(1)
	n = 1
	for d := len(shape) - 1; d >= 0; d-- {
		off += begin[d] * stride
		n *= end[d] - begin[d]
		stride *= int64(shape[d])
	}
	return off, n, true
}

// sliceBlock returns where the output of a SLICE lies in its input, in
// bytes, when it is one contiguous block of it.
//
// tensorflow/lite/micro/kernels/slice.cc @90b983c: SliceEval reads begin
// and size (INT32 or INT64, one element per input dimension, padded to
// kMaxDim = 5 with begin 0, size 1) and calls reference_ops::Slice
// (tensorflow/lite/kernels/internal/reference/slice.h @90b983c): a size of
// -1 runs to the dimension's end; an element loop over the output's flat
// index that writes each element (SequentialTensorWriter::Write, an
// assignment) from the input element at begin + its coordinates. For a
// contiguous block, output element j is input element off + j: lying over
// it, each element is assigned to itself. begin and size must be
// constants here (heliac plans ahead of time).
func sliceBlock(m *graph.Model, sg *graph.Subgraph, op *graph.Op) ([]int64, bool) {
	if len(op.Inputs) != 3 || len(op.Outputs) != 1 {
		return nil, false
	}
	in, out := tensorAt(sg, op.Inputs[0]), tensorAt(sg, op.Outputs[0])
	if in == nil || out == nil || op.Inputs[0] == op.Outputs[0] || in.Type != out.Type || len(in.Shape) > maxSliceRank {
		return nil, false
	}
	begin, ok1 := constInts(m, tensorAt(sg, op.Inputs[1]))
	size, ok2 := constInts(m, tensorAt(sg, op.Inputs[2]))
	if !ok1 || !ok2 || len(begin) != len(in.Shape) || len(size) != len(in.Shape) {
		return nil, false
	}
	end := make([]int64, len(begin))
	for d := range begin {
		end[d] = begin[d] + size[d]
		if size[d] == -1 {
			end[d] = int64(in.Shape[d])
		}
	}
	return blockBytes(in, out, begin, end)
}

// blockBytes returns, as one offset, where the block [begin, end) of in
// starts in bytes, when the block is contiguous and out holds exactly its
// elements.
func blockBytes(in, out *graph.Tensor, begin, end []int64) ([]int64, bool) {
	e, _, ok := byteElems(in)
	_, no, ok2 := byteElems(out)
	if !ok || !ok2 {
		return nil, false
	}
	off, n, ok := blockOffset(in.Shape, begin, end)
	if !ok || n != no {
		return nil, false
	}
	return []int64{off * e}, true
}

// stridedSliceBlock returns where the output of a STRIDED_SLICE lies in
// its input, in bytes, when every stride is 1 and the slice is one
// contiguous block.
//
// tensorflow/lite/micro/kernels/strided_slice_common.cc @90b983c:
// StridedSlicePrepare requires constant begin, end and strides (read as
// int32); BuildStridedSliceParams keeps begin_mask, end_mask and
// shrink_axis_mask and sets ellipsis_mask and new_axis_mask to 0 (and
// leaves offset false). strided_slice.cc StridedSliceEval calls
// reference_ops::StridedSlice
// (tensorflow/lite/kernels/internal/reference/strided_slice.h @90b983c):
// an element loop over the output in order (SequentialTensorWriter::Write
// at line 119, an assignment) from the input element at the start of each
// axis (strided_slice_logic.h StartForAxis: a set begin_mask bit starts at
// 0; a negative index counts from the end; clamped to the dimension) plus
// stride times the count, up to StopForAxis (end_mask: the dimension; a
// shrunk axis: one index). With strides 1 and a contiguous block, output
// element j is input element off + j. A model that sets ellipsis_mask,
// new_axis_mask or offset is left alone.
func stridedSliceBlock(m *graph.Model, sg *graph.Subgraph, op *graph.Op) ([]int64, bool) {
	if len(op.Inputs) != 4 || len(op.Outputs) != 1 {
		return nil, false
	}
	in, out := tensorAt(sg, op.Inputs[0]), tensorAt(sg, op.Outputs[0])
	if in == nil || out == nil || op.Inputs[0] == op.Outputs[0] || in.Type != out.Type || len(in.Shape) == 0 || len(in.Shape) > maxSliceRank {
		return nil, false
	}
	rank := len(in.Shape)
	var vals [3][]int64
	for i := range vals {
		t := tensorAt(sg, op.Inputs[1+i])
		v, ok := constInts(m, t)
		if !ok || t.Type != graph.Int32 || len(v) != rank {
			return nil, false
		}
		vals[i] = v
	}
	o := op.Resolved()
	if o.Int("ellipsis_mask") != 0 || o.Int("new_axis_mask") != 0 || o.Bool("offset") {
		return nil, false
	}
	beginMask, endMask, shrink := o.Int("begin_mask"), o.Int("end_mask"), o.Int("shrink_axis_mask")
	begin, end := make([]int64, rank), make([]int64, rank)
	for d := range rank {
		if vals[2][d] != 1 {
			return nil, false
		}
		dim := int64(in.Shape[d])
		b := vals[0][d]
		if b < 0 {
			b += dim
		}
		b = min(max(b, 0), dim)
		if beginMask&(1<<d) != 0 {
			b = 0
		}
		x := vals[1][d]
		if x < 0 {
			x += dim
		}
		x = min(max(x, 0), dim)
		if endMask&(1<<d) != 0 {
			x = dim
		}
		if shrink&(1<<d) != 0 {
			x = b + 1
		}
		begin[d], end[d] = b, x
	}
	return blockBytes(in, out, begin, end)
}

func init() {
	// Exact-overlap copies: see concatSlots, splitBlocks, sliceBlock and
	// stridedSliceBlock for each kernel's loop, and the top of this file
	// for why an exact overlap is allowed.
	cp := func(op graph.Opcode, name string, in, out int, o Overlap, source string) {
		tflmReference.copies[op] = []Contract{{Op: op, Name: name, Input: in, Output: out, Overlap: o,
			Source: tflmCommit + ": " + source + "; exact overlap: gcc/doc/standards.texi (PR middle-end/32667), " +
				"LLVM LangRef llvm.memcpy (source and destination equal or non-overlapping)"}}
	}
	cp(opConcatenation, "CONCATENATION", -1, 0, Slot, microDir+"concatenation.cc ConcatenationPrepare (one type, "+
		"INT8 scale and zero point equal, kMaxInputNum 10), EvalUnquantized; "+refDir+
		"concatenation.h Concatenation (memcpy per input and outer index, lines 64-71)")
	cp(opSplit, "SPLIT", 1, -1, Block, microDir+"split.cc SplitImpl (element loop output_ptr[j] = input_ptr[j], lines 56-64)")
	cp(opSplitV, "SPLIT_V", 0, -1, Block, microDir+"split_v.cc SplitImpl (element loop output_ptr[j] = input_ptr[j], lines 58-68)")
	cp(opSlice, "SLICE", 0, 0, Block, microDir+"slice.cc SliceEval; "+refDir+
		"slice.h Slice (element loop over the output, SequentialTensorWriter::Write)")
	cp(opStridedSlice, "STRIDED_SLICE", 0, 0, Block, microDir+"strided_slice_common.cc BuildStridedSliceParams, "+
		"strided_slice.cc StridedSliceEval; "+refDir+"strided_slice.h StridedSlice (element loop over the output, "+
		"SequentialTensorWriter::Write)")
}
