package verify

import (
	"testing"

	"github.com/heliac/heliac/graph"
)

// In testdata/inplace.json, tensor_allocs are input, a, b, output (0..3);
// b is written over a by the RELU (operator 1, step 2) under
// tflm-reference's contract.
func TestPlanInPlace(t *testing.T) {
	const contract = "tensor_allocs.2.in_place.contract"
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
			edits: []edit{set("tensor_lifetimes.1.end_op", 3), set("arena_usages.0.lower_bound_without_aliases", 80)},
			// and a and b share bytes while both live at steps 2..3
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "the operator named does not write the tensor", model: "inplace",
			edits: []edit{set("tensor_allocs.2.in_place.operator", 0)},
			// and no write at the step a and b share relates them
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "the input named is not the operator's", model: "inplace",
			edits: []edit{set("tensor_allocs.2.in_place.input", 0)},
			// and no write over a's value relates a and b
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "in_place without alias_of", model: "inplace",
			edits: []edit{set("tensor_allocs.2.alias_of", nil)},
			want:  []Kind{Malformed, HeightMismatch, Overlap},
		},
		{
			name: "the same bytes without in_place", model: "inplace",
			edits: []edit{del("tensor_allocs.2.in_place")},
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
