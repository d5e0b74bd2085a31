package kernels

import (
	"encoding/binary"

	"github.com/heliac/heliac/graph"
)

// maxPadRank is the most dimensions TFLM's PAD accepts
// (PadKernelMaxDimensionCount).
const maxPadRank = 5

// padPlacement returns where the input of a constant padding (op: input
// in padded by the paddings of input 1 into out) may start relative to
// the output, in bytes, for an End contract: [Lo, Hi], and whether the
// contract applies at all.
//
// PadImpl writes output elements k = 0, 1, … in order, each the next
// unread input element or the padding value; input element j is copied
// to output element c(j), the j-th non-padding position, so c(j) - j
// padding elements precede it. With the input starting o elements after
// the output, writing output element k clobbers input element k - o,
// which has been read when k - o < the number of elements read so far.
// That holds for every k exactly when o >= c(j) - j for every j, whose
// largest value is at the last input element: Lo = c(N-1) - (N-1)
// elements. The input ends no later than the output: Hi = (output
// elements - N) elements.
//
// The contract applies only where TFLM's PadPrepare accepts the operator
// and PadImpl then copies every input element exactly once: one element
// type of whole bytes, input and output of one rank of at most 5, the
// paddings a constant INT32 tensor of rank × 2 elements (PadPrepare reads
// them as int32 whatever their type), none negative (PadImpl would skip
// or repeat input elements), and each output dimension its input
// dimension plus its two paddings.
func padPlacement(m *graph.Model, sg *graph.Subgraph, op *graph.Op, in, out *graph.Tensor) (lo, hi int64, ok bool) {
	if len(op.Inputs) < 2 || op.Inputs[1] < 0 || int(op.Inputs[1]) >= len(sg.Tensors) {
		return 0, 0, false
	}
	pads := &sg.Tensors[op.Inputs[1]]
	bits := in.Type.Bits()
	rank := len(in.Shape)
	if in.Type != out.Type || bits == 0 || bits%8 != 0 || rank == 0 || rank > maxPadRank || len(out.Shape) != rank ||
		pads.Type != graph.Int32 || pads.IsVariable || !m.HasData(pads) {
		return 0, 0, false
	}
	data := m.Buffers[pads.Buffer].Data
	if len(data) != 4*2*rank || elements(pads.Shape) != int64(2*rank) {
		return 0, 0, false
	}
	// Extend to five dimensions, as PadImpl does: leading 1s, no padding.
	var inDims, outDims, before [maxPadRank]int64
	for d := range maxPadRank {
		inDims[d], outDims[d] = 1, 1
	}
	for i := range rank {
		d := maxPadRank - rank + i
		l := int64(int32(binary.LittleEndian.Uint32(data[8*i:])))
		r := int64(int32(binary.LittleEndian.Uint32(data[8*i+4:])))
		inDims[d], outDims[d], before[d] = int64(in.Shape[i]), int64(out.Shape[i]), l
		if l < 0 || r < 0 || inDims[d] < 1 || outDims[d] != inDims[d]+l+r {
			return 0, 0, false
		}
	}
	e := bits / 8
	nIn, nOut := product(inDims[:]), product(outDims[:])
	if in.Size != nIn*e || out.Size != nOut*e {
		return 0, 0, false
	}
	// The output position of the last input element, whose index in
	// every dimension is its padding before plus its input extent less 1.
	var last, stride int64 = 0, 1
	for d := maxPadRank - 1; d >= 0; d-- {
		last += (before[d] + inDims[d] - 1) * stride
		stride *= outDims[d]
	}
	return (last - (nIn - 1)) * e, (nOut - nIn) * e, true
}

// quantizePlacement returns where the input of QUANTIZE from FLOAT32 to
// INT8 may start relative to its output, in bytes, for a Start contract,
// and whether the contract applies. AffineQuantize reads input element i
// (bytes [4i, 4i+4)) before it writes output element i (1 byte); with the
// output starting x bytes into the input, that write lands in input
// element (x+i)/4, already read when (x+i)/4 <= i, for every i exactly
// when x <= 3. The output starts no earlier than the input: x in [0, 3],
// so the input starts -3 to 0 bytes after the output. Both must have one
// element count (AffineQuantize's MatchingFlatSize).
func quantizePlacement(in, out *graph.Tensor) (lo, hi int64, ok bool) {
	if in.Type != graph.Float32 || out.Type != graph.Int8 || out.Size == 0 || in.Size != 4*out.Size ||
		elements(in.Shape) != out.Size || elements(out.Shape) != out.Size {
		return 0, 0, false
	}
	return -3, 0, true
}

// elements returns the number of elements of a shape (1 for a scalar),
// or -1 when a dimension is negative.
func elements(shape []int32) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		n *= int64(d)
	}
	return n
}

func product(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}
