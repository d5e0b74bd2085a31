package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// TestWithScratch: overrides replace or add an operator's rule, by
// builtin name or custom code, and leave the library they came from as
// it was.
func TestWithScratch(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	over, err := lib.WithScratch([]kernels.ScratchOverride{
		{Custom: "MyOp", Buffers: []kernels.ScratchBuffer{{Bytes: 1024}, {PerOutputElement: 4}, {Bytes: 8, PerInputElement: 2, Input: 1}, {}}},
		{Builtin: "MEAN", Buffers: []kernels.ScratchBuffer{{Bytes: 100}}},
		{Builtin: "MEAN", Buffers: []kernels.ScratchBuffer{{Bytes: 64}}}, // a later entry wins
		{Builtin: "CONV_2D"},
		{Custom: "Huge", Buffers: []kernels.ScratchBuffer{{Bytes: kernels.MaxOverrideBytes, PerOutputElement: kernels.MaxOverrideBytes}}},
	})
	require.NoError(t, err)
	meanTensors := []graph.Tensor{tensor(graph.Int8, 1, 7, 7, 64), tensor(graph.Int32, 2), tensor(graph.Int8, 1, 1, 1, 64)}
	int4Conv := []graph.Tensor{tensor(graph.Int8, 1, 4, 4, 2), tensor(graph.Int4, 3, 3, 3, 2), tensor(graph.Int8, 1, 4, 4, 3)}
	custom := []graph.Tensor{tensor(graph.Int8, 4), tensor(graph.Int16, 3, 5), tensor(graph.Int8, 2, 3)}
	tests := []struct {
		name       string
		code       graph.Opcode
		codeName   string
		custom     string
		ts         []graph.Tensor
		in         []graph.TensorID
		want, base []int64
		baseKnown  bool
	}{
		{"a custom operator the library does not know", graph.Custom, "", "MyOp", custom, []graph.TensorID{0, 1},
			[]int64{1024, 24, 8 + 2*15, 0}, nil, false},
		{"a builtin's rule replaced", 40, "MEAN", "", meanTensors, []graph.TensorID{0, 1}, []int64{64}, []int64{256, 16, 8}, true},
		{"a builtin that asks for nothing", 3, "CONV_2D", "", int4Conv, []graph.TensorID{0, 1}, []int64{}, []int64{54}, true},
		{"the largest values", graph.Custom, "", "Huge", custom, []graph.TensorID{0}, []int64{7 * kernels.MaxOverrideBytes}, nil, false},
		{"another operator keeps the library's rule", 82, "REDUCE_MAX", "", []graph.Tensor{tensor(graph.Int8, 2, 3), tensor(graph.Int32, 1), tensor(graph.Int8, 2)},
			[]graph.TensorID{0, 1}, []int64{8, 4}, []int64{8, 4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := scratchModel(tt.code, tt.custom, tt.ts, tt.in, graph.TensorID(len(tt.ts)-1))
			op.CodeName = tt.codeName
			got, known := over.Scratch(m, 0, op, kernels.CortexM)
			assert.True(t, known)
			assert.Equal(t, tt.want, got)
			base, baseKnown := lib.Scratch(m, 0, op, kernels.CortexM)
			assert.Equal(t, tt.baseKnown, baseKnown, "the library itself is unchanged")
			assert.Equal(t, tt.base, base, "the library itself is unchanged")
		})
	}
}

// TestWithScratchErrors: a malformed entry is an error naming it.
func TestWithScratchErrors(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	tests := []struct {
		name string
		o    kernels.ScratchOverride
		want string
	}{
		{"neither builtin nor custom", kernels.ScratchOverride{}, "entry 2: give either builtin or custom"},
		{"both", kernels.ScratchOverride{Builtin: "MEAN", Custom: "X"}, "entry 2: give either builtin or custom"},
		{"a lower-case builtin", kernels.ScratchOverride{Builtin: "mean"}, `builtin "mean" is not a builtin operator's name`},
		{"CUSTOM as a builtin", kernels.ScratchOverride{Builtin: "CUSTOM"}, `builtin "CUSTOM" is not`},
		{"a negative size", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{}, {Bytes: -1}}}, "entry 2 (CUSTOM:X): buffer 2: sizes and operand positions must not be negative"},
		{"a negative operand", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{Input: -1}}}, "buffer 1: sizes and operand positions must not be negative"},
		{"bytes past the bound", kernels.ScratchOverride{Custom: "X", Line: 7, Buffers: []kernels.ScratchBuffer{{Bytes: 9223372036854775807}}},
			"kernel_scratch entry 2 (CUSTOM:X, line 7): buffer 1: bytes 9223372036854775807 is more than 4294967295"},
		{"a factor past the bound", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{PerInputElement: 1 << 32}}},
			"buffer 1: per_input_element 4294967296 is more than 4294967295"},
		{"an output factor past the bound", kernels.ScratchOverride{Builtin: "ADD", Buffers: []kernels.ScratchBuffer{{PerOutputElement: 1 << 62}}},
			"kernel_scratch entry 2 (ADD): buffer 1: per_output_element 4611686018427387904 is more than 4294967295"},
		{"an operand position past any operator's", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{PerInputElement: 1, Input: 1 << 20}}},
			"operand position 1048576 is more than any operator has"},
		{"an input without its factor", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{Bytes: 4, Input: 2}}},
			"buffer 1: input 2 is given without per_input_element"},
		{"an output without its factor", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{Output: 1}}},
			"buffer 1: output 1 is given without per_output_element"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lib.WithScratch([]kernels.ScratchOverride{{Custom: "Fine"}, tt.o})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestCheckOverrides: against a model, an entry that names an operand its
// operator lacks, or asks it for more than MaxOverrideBytes, is an error
// naming the entry, the buffer and the operator; entries that match no
// operator, or that a later entry replaces, are unused, with why.
func TestCheckOverrides(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	// Operator 0 is ADD (two inputs, one output), operator 1 CUSTOM:MyOp
	// over a tensor of 2^39 elements.
	m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{tensor(graph.Int8, 4), tensor(graph.Int8, 4), tensor(graph.Int8, 4), tensor(graph.Int8, 1<<20, 1<<19)},
		Ops: []graph.Op{
			{Code: 0, CodeName: "ADD", Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}},
			{Code: graph.Custom, CustomName: "MyOp", Inputs: []graph.TensorID{3}, Outputs: []graph.TensorID{2}},
		},
	}}}
	tests := []struct {
		name      string
		overrides []kernels.ScratchOverride
		unused    []kernels.UnusedOverride
		err       string
	}{
		{"every entry applies", []kernels.ScratchOverride{
			{Builtin: "ADD", Buffers: []kernels.ScratchBuffer{{PerInputElement: 2, Input: 1}, {PerOutputElement: 1}}},
			{Custom: "MyOp", Buffers: []kernels.ScratchBuffer{{Bytes: 64}}},
		}, nil, ""},
		{"an input past the operator's", []kernels.ScratchOverride{
			{Builtin: "ADD", Line: 4, Buffers: []kernels.ScratchBuffer{{Bytes: 1}, {PerInputElement: 1, Input: 2}}},
		}, nil, "kernel_scratch entry 1 (ADD, line 4): buffer 2: input 2, but operator 0:0 (ADD) has 2 input(s)"},
		{"an output past the operator's", []kernels.ScratchOverride{
			{Custom: "MyOp", Buffers: []kernels.ScratchBuffer{{PerOutputElement: 1, Output: 1}}},
		}, nil, "kernel_scratch entry 1 (CUSTOM:MyOp): buffer 1: output 1, but operator 0:1 (CUSTOM:MyOp) has 1 output(s)"},
		{"more bytes than the bound", []kernels.ScratchOverride{
			{Custom: "MyOp", Buffers: []kernels.ScratchBuffer{{PerInputElement: 1}}},
		}, nil, "kernel_scratch entry 1 (CUSTOM:MyOp): buffer 1: asks operator 0:1 (CUSTOM:MyOp) for more than 4294967295 bytes"},
		{"no such operator, and one replaced", []kernels.ScratchOverride{
			{Builtin: "CONV_2D", Line: 3},
			{Custom: "Other"},
			{Builtin: "ADD", Buffers: []kernels.ScratchBuffer{{Bytes: 8}}},
			{Builtin: "ADD", Line: 9},
		}, []kernels.UnusedOverride{
			{Entry: 0, Operator: "CONV_2D", Line: 3, Reason: "no operator of the model is CONV_2D"},
			{Entry: 1, Operator: "CUSTOM:Other", Reason: "no operator of the model is CUSTOM:Other"},
			{Entry: 2, Operator: "ADD", Reason: "kernel_scratch entry 4 (ADD, line 9) replaces it"},
		}, ""},
		{"a builtin does not match a custom operator of its name", []kernels.ScratchOverride{{Builtin: "MYOP"}},
			[]kernels.UnusedOverride{{Entry: 0, Operator: "MYOP", Reason: "no operator of the model is MYOP"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			over, err := lib.WithScratch(tt.overrides)
			require.NoError(t, err)
			assert.Equal(t, tt.overrides, over.Overrides())
			unused, err := over.CheckOverrides(m)
			if tt.err != "" {
				require.EqualError(t, err, "kernels: "+tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.unused, unused)
		})
	}
}
