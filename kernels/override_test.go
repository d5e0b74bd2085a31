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
		{Custom: "Huge", Buffers: []kernels.ScratchBuffer{{Bytes: 1, PerOutputElement: 1 << 62}}},
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
		{"a size capped, not overflowed", graph.Custom, "", "Huge", custom, []graph.TensorID{0}, []int64{1<<63/4 - 1}, nil, false},
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
		{"a negative size", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{}, {Bytes: -1}}}, "entry 2 (X): buffer 2: sizes and operand positions must not be negative"},
		{"a negative operand", kernels.ScratchOverride{Custom: "X", Buffers: []kernels.ScratchBuffer{{Input: -1}}}, "buffer 1: sizes and operand positions must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lib.WithScratch([]kernels.ScratchOverride{{Custom: "Fine"}, tt.o})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
