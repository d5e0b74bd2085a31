package verify

import (
	"testing"

	"github.com/heliac/heliac/graph"
)

// In testdata/inplace.json, tensor_allocs are input, a, b, output (0..3);
// b is written over a by the RELU (operator 1, step 2) under
// tflm-reference's contract.
func TestPlanInPlace(t *testing.T) {
	const contract = "tensor_allocs.0:2.in_place.contract"
	runViolationCases(t, []violationCase{
		{name: "RELU writes b over a, which dies there", model: "inplace"},
		{
			name: "without the kernel library", model: "inplace",
			edits: []edit{del("kernels")},
			want:  []Kind{Malformed},
		},
		{
			name: "an unknown kernel library", model: "inplace",
			edits: []edit{set("kernels", "cmsis-nn-2099")},
			want:  []Kind{Malformed},
		},
		{
			name: "a contract spelled otherwise", model: "inplace",
			edits: []edit{set(contract, "RELU output 0 over input 0 (shifted)")},
			want:  []Kind{BadAlias},
		},
		{
			name: "an operator with no contract", model: "inplace",
			mod:  func(m *graph.Model) { m.Subgraphs[0].Ops[1].Code = 3 }, // CONV_2D
			want: []Kind{BadAlias},
		},
		{
			name: "shapes differ, so element i is not where it was", model: "inplace",
			mod: func(m *graph.Model) {
				m.Subgraphs[0].Tensors[2] = tensor("b", graph.Int8, 2, 16)
			},
			want: []Kind{BadAlias},
		},
		{
			name: "the input is read after the write", model: "inplace",
			// The last FULLY_CONNECTED reads a as well as b.
			mod:   func(m *graph.Model) { m.Subgraphs[0].Ops[2].Inputs = ids(2, 1) },
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 3), set("arena_usages.SRAM.lower_bound_without_aliases", 80)},
			// and a and b share bytes while both live at steps 2..3
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "the operator named does not write the tensor", model: "inplace",
			edits: []edit{set("tensor_allocs.0:2.in_place.operator", 0)},
			// and no write at the step a and b share relates them
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "the input named is not the operator's", model: "inplace",
			edits: []edit{set("tensor_allocs.0:2.in_place.input", 0)},
			// and no write over a's value relates a and b
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "in_place without alias_of", model: "inplace",
			edits: []edit{set("tensor_allocs.0:2.alias_of", nil)},
			want:  []Kind{Malformed, HeightMismatch, Overlap},
		},
		{
			name: "the same bytes without in_place", model: "inplace",
			edits: []edit{del("tensor_allocs.0:2.in_place")},
			// and nothing relates a and b, which share bytes at step 2
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "a model input written over without overwrite_inputs", model: "inplace",
			// RELU reads the model input, which a then is not: a is the
			// input, b writes over it.
			mod: func(m *graph.Model) {
				sg := &m.Subgraphs[0]
				sg.Inputs = ids(1)
				sg.Ops[0].Outputs = ids(0)
				sg.Ops[0].Inputs = ids(1)
			},
			want: []Kind{BadAlias, UseOutsideLifetime},
		},
	})
}

// In testdata/pad.json, tensor_allocs are in, a, paddings, b, c, out
// (0..5) and tensor_lifetimes in, a, b, c, out (0..4): PAD writes b over
// a, which lies at b's end (a at 80, b at 0, 144 bytes, alias_offset
// -80), and QUANTIZE writes c at the start of b (c at 0, 36 bytes): one
// alias group, one block of 144 bytes.
func TestPlanInPlaceOffsets(t *testing.T) {
	runViolationCases(t, []violationCase{
		{name: "PAD's input at its output's end, QUANTIZE's output at its input's start", model: "pad"},
		{
			name: "PAD's input at its output's start", model: "pad",
			// PadImpl would write padding over a's elements before it
			// copies them.
			edits: []edit{set("tensor_allocs.0:1.binding.offset", 0), del("tensor_allocs.0:3.alias_offset"), del("tensor_allocs.0:4.alias_offset")},
			want:  []Kind{BadAlias},
		},
		{
			name: "QUANTIZE's output toward its input's end", model: "pad",
			// c at 96: output element i lands on input element 24 + i/4,
			// not yet read.
			edits: []edit{set("tensor_allocs.0:4.binding.offset", 96), set("tensor_allocs.0:4.alias_offset", 16)},
			want:  []Kind{BadAlias},
		},
		{
			name: "a placement the contract allows, off the alignment", model: "pad",
			// b and c 4 bytes on: a starts 76 bytes into b, which PAD
			// allows, but no offset is a multiple of 16.
			edits: []edit{set("tensor_allocs.0:3.binding.offset", 4), set("tensor_allocs.0:3.alias_offset", -76),
				set("tensor_allocs.0:4.binding.offset", 4), set("tensor_allocs.0:4.alias_offset", -76)},
			want: []Kind{Misaligned},
		},
		{
			name: "alias_offset left out", model: "pad",
			edits: []edit{del("tensor_allocs.0:3.alias_offset")},
			// and by the declaration the block reaches from a to c's end
			want: []Kind{BadAlias, HeightMismatch},
		},
		{
			name: "alias_offset that does not match the bindings", model: "pad",
			edits: []edit{set("tensor_allocs.0:4.alias_offset", -64)},
			// and by it, c would not lie at its input's start
			want: []Kind{BadAlias},
		},
		{
			name: "the input declared live after a write over part of it", model: "pad",
			// a is live at step 3 while b, written over it at step 2,
			// holds [80, 144) too.
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 3), set("arena_usages.SRAM.lower_bound_without_aliases", 256)},
			want:  []Kind{Overlap},
		},
		{
			name: "the input read after a write over part of it", model: "pad",
			mod:   func(m *graph.Model) { m.Subgraphs[0].Ops[3].Inputs = ids(4, 1) },
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 4), set("arena_usages.SRAM.lower_bound_without_aliases", 256)},
			// a, live to step 4, widens the group there
			want: []Kind{BadAlias, Overlap, HeightMismatch},
		},
		{
			name: "lower_bound counting each member", model: "pad",
			edits: []edit{set("arena_usages.SRAM.lower_bound", 208)},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "PAD by a negative padding", model: "pad",
			// PadPrepare accepts it, but PadImpl then copies fewer input
			// elements: no contract.
			mod: func(m *graph.Model) {
				m.Buffers[1].Data[4*2] = 0xff // pads [[0 0] [-1 1] [0 1] [0 0]]
				for i := 1; i < 4; i++ {
					m.Buffers[1].Data[4*2+i] = 0xff
				}
				m.Buffers[1].Data[4*3] = 2
			},
			want: []Kind{BadAlias},
		},
	})
}
