package kernels_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

func tensor(typ graph.ElementType, shape ...int32) graph.Tensor {
	size, err := graph.ByteSize(typ, shape)
	if err != nil {
		panic(err)
	}
	return graph.Tensor{Type: typ, Shape: shape, Size: size}
}

func TestLookup(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	assert.Equal(t, kernels.TFLMReference, lib.Name)
	_, err = kernels.Lookup("cmsis-nn")
	assert.EqualError(t, err, `kernels: unknown kernel library "cmsis-nn" (known: tflm-reference)`)
}

// TestContractsCiteTheirSource: every contract names the pinned TFLM
// commit and a kernel file it was read from.
func TestContractsCiteTheirSource(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	require.NotEmpty(t, lib.Contracts())
	for _, c := range lib.Contracts() {
		assert.True(t, strings.HasPrefix(c.Source, "tflite-micro@90b983c: "), "%s: %s", c, c.Source)
		assert.Contains(t, c.Source, "tensorflow/lite/", "%s cites a kernel file", c)
		assert.Equal(t, kernels.Exact, c.Overlap)
	}
}

func TestInPlace(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	const add, relu, quantize, conv graph.Opcode = 0, 19, 114, 3
	tests := []struct {
		name    string
		tensors []graph.Tensor
		op      graph.Op
		want    []string
	}{
		{"ADD: either input of the output's shape",
			[]graph.Tensor{tensor(graph.Int8, 1, 8), tensor(graph.Int8, 1, 8), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: add, Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}},
			[]string{"ADD output 0 over input 0 (exact)", "ADD output 0 over input 1 (exact)"}},
		{"ADD: not the input that broadcasts",
			[]graph.Tensor{tensor(graph.Int8, 1, 8), tensor(graph.Int8, 1, 1), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: add, Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}},
			[]string{"ADD output 0 over input 0 (exact)"}},
		{"RELU: same size, other shape",
			[]graph.Tensor{tensor(graph.Float32, 2, 4), tensor(graph.Float32, 1, 8)},
			graph.Op{Code: relu, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, nil},
		{"QUANTIZE int8 to uint8: same element size",
			[]graph.Tensor{tensor(graph.Int8, 1, 8), tensor(graph.Uint8, 1, 8)},
			graph.Op{Code: quantize, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
			[]string{"QUANTIZE output 0 over input 0 (exact)"}},
		{"QUANTIZE float to int8: the output is smaller",
			[]graph.Tensor{tensor(graph.Float32, 1, 8), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: quantize, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, nil},
		{"an operator with no contract",
			[]graph.Tensor{tensor(graph.Int8, 1, 8), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: conv, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, nil},
		{"an omitted input",
			[]graph.Tensor{tensor(graph.Int8, 1, 8), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: add, Inputs: []graph.TensorID{graph.NoTensor, 0}, Outputs: []graph.TensorID{1}},
			[]string{"ADD output 0 over input 1 (exact)"}},
		{"the output is the input",
			[]graph.Tensor{tensor(graph.Int8, 1, 8)},
			graph.Op{Code: relu, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{0}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &graph.Model{Subgraphs: []graph.Subgraph{{Tensors: tt.tensors}}}
			var got []string
			for _, c := range lib.InPlace(m, 0, &tt.op) {
				got = append(got, c.String())
				assert.Equal(t, [2]int64{0, 0}, [2]int64{c.Lo, c.Hi}, "an exact contract puts the input over the output")
			}
			assert.Equal(t, tt.want, got)
		})
	}
	var none *kernels.Library
	assert.Nil(t, none.InPlace(&graph.Model{Subgraphs: []graph.Subgraph{{}}}, 0, &graph.Op{}), "no library, no contracts")
	assert.Nil(t, lib.InPlace(&graph.Model{}, 0, &graph.Op{}), "no such subgraph")
}
