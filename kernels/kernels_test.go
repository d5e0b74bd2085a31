package kernels_test

import (
	"encoding/binary"
	"fmt"
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
	lib, err = kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	assert.Equal(t, kernels.CMSISNN, lib.Name)
	_, err = kernels.Lookup("arc-mli")
	assert.EqualError(t, err, `kernels: unknown kernel library "arc-mli" (known: any, tflm-reference, cmsis-nn)`)
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
		assert.Contains(t, []kernels.Overlap{kernels.Exact, kernels.End, kernels.Start, kernels.Sweep}, c.Overlap)
	}
}

func TestOverlapNames(t *testing.T) {
	for o, want := range map[kernels.Overlap]string{kernels.Exact: "exact", kernels.End: "end", kernels.Start: "start", kernels.Sweep: "sweep", 0: "Overlap(0)"} {
		assert.Equal(t, want, o.String())
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
		{"QUANTIZE float to int8: the output at the input's start",
			[]graph.Tensor{tensor(graph.Float32, 1, 8), tensor(graph.Int8, 1, 8)},
			graph.Op{Code: quantize, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
			[]string{"QUANTIZE output 0 over input 0 (start) [-3, 0]"}},
		{"QUANTIZE float to int16: no character type, so no contract",
			[]graph.Tensor{tensor(graph.Float32, 1, 8), tensor(graph.Int16, 1, 8)},
			graph.Op{Code: quantize, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, nil},
		{"QUANTIZE float to uint8: TFLM has no such path",
			[]graph.Tensor{tensor(graph.Float32, 1, 8), tensor(graph.Uint8, 1, 8)},
			graph.Op{Code: quantize, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}, nil},
		{"QUANTIZE float to int8 of another element count",
			[]graph.Tensor{tensor(graph.Float32, 1, 8), tensor(graph.Int8, 1, 32)},
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
				if c.Overlap == kernels.Exact {
					got = append(got, c.String())
					assert.Equal(t, [2]int64{0, 0}, [2]int64{c.Lo, c.Hi}, "an exact contract puts the input over the output")
					continue
				}
				got = append(got, fmt.Sprintf("%s [%d, %d]", c, c.Lo, c.Hi))
			}
			assert.Equal(t, tt.want, got)
		})
	}
	var none *kernels.Library
	assert.Nil(t, none.InPlace(&graph.Model{Subgraphs: []graph.Subgraph{{}}}, 0, &graph.Op{}), "no library, no contracts")
	assert.Nil(t, lib.InPlace(&graph.Model{}, 0, &graph.Op{}), "no such subgraph")
}

// padModel is PAD (or, with v2, PADV2 with a constant value) of in into
// out by the paddings pads, a constant of the given type and shape.
func padModel(in, out graph.Tensor, v2 bool, padType graph.ElementType, padShape []int32, pads ...int32) (*graph.Model, graph.Op) {
	data := make([]byte, 4*len(pads))
	for i, p := range pads {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(p))
	}
	pt := tensor(padType, padShape...)
	pt.Buffer = 1
	tensors := []graph.Tensor{in, pt, out}
	op := graph.Op{Code: 34, Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}}
	buffers := []graph.Buffer{{}, {Data: data}}
	if v2 {
		value := tensor(in.Type)
		value.Buffer = 2
		tensors = append(tensors, value)
		buffers = append(buffers, graph.Buffer{Data: make([]byte, in.Size/max(int64(len(in.Shape)), 1))})
		op.Code, op.Inputs = 60, append(op.Inputs, 3)
	}
	return &graph.Model{Buffers: buffers, Subgraphs: []graph.Subgraph{{Tensors: tensors}}}, op
}

// TestInPlacePad: PAD's input may start no earlier than the padding
// PadImpl writes before it copies the input's last element, and end no
// later than the output.
func TestInPlacePad(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	tests := []struct {
		name     string
		in, out  graph.Tensor
		v2       bool
		padType  graph.ElementType
		padShape []int32
		pads     []int32
		want     []string
	}{
		{"a row and a column after, TensorFlow's stride-2 SAME",
			tensor(graph.Int8, 1, 2, 2, 1), tensor(graph.Int8, 1, 3, 3, 1), false, graph.Int32, []int32{4, 2},
			[]int32{0, 0, 0, 1, 0, 1, 0, 0},
			// P written before the last input element (1,1) at 4: the
			// column after row 0; the input ends where the output does.
			[]string{"PAD output 0 over input 0 (end) [1, 5]"}},
		{"one all around, float",
			tensor(graph.Float32, 2, 2), tensor(graph.Float32, 4, 4), false, graph.Int32, []int32{2, 2},
			[]int32{1, 1, 1, 1},
			// The last input element goes to (2,2) = 10: 7 padding
			// elements before it, 28 bytes; 12 padding elements in all.
			[]string{"PAD output 0 over input 0 (end) [28, 48]"}},
		{"rows after the last: the input may start where the output does",
			tensor(graph.Int16, 2, 3), tensor(graph.Int16, 4, 3), false, graph.Int32, []int32{2, 2},
			[]int32{0, 2, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [0, 12]"}},
		{"PADV2 with a constant value",
			tensor(graph.Int8, 1, 2, 2, 1), tensor(graph.Int8, 1, 3, 3, 1), true, graph.Int32, []int32{4, 2},
			[]int32{0, 0, 0, 1, 0, 1, 0, 0},
			[]string{"PADV2 output 0 over input 0 (end) [1, 5]"}},
		{"no padding at all",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 4), false, graph.Int32, []int32{2, 2},
			[]int32{0, 0, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [0, 0]"}},
		{"a negative padding: PadImpl would not copy every input element",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 4), false, graph.Int32, []int32{2, 2},
			[]int32{0, 0, -1, 1}, nil},
		{"INT64 paddings, which TFLM reads as int32",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 5), false, graph.Int64, []int32{2, 2},
			[]int32{0, 0, 0, 0, 0, 0, 1, 0}, nil},
		{"an output that is not the input plus its paddings",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 6), false, graph.Int32, []int32{2, 2},
			[]int32{0, 0, 0, 1}, nil},
		{"another element type",
			tensor(graph.Int8, 1, 4), tensor(graph.Int16, 1, 5), false, graph.Int32, []int32{2, 2},
			[]int32{0, 0, 0, 1}, nil},
		{"another rank",
			tensor(graph.Int8, 4), tensor(graph.Int8, 1, 5), false, graph.Int32, []int32{2, 2},
			[]int32{0, 0, 0, 1}, nil},
		{"paddings of another shape but rank × 2 elements, as PadPrepare asks",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 5), false, graph.Int32, []int32{4},
			[]int32{0, 0, 0, 1}, []string{"PAD output 0 over input 0 (end) [0, 1]"}},
		{"paddings of another element count",
			tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 5), false, graph.Int32, []int32{3},
			[]int32{0, 0, 1}, nil},
		{"six dimensions, more than PadImpl takes",
			tensor(graph.Int8, 1, 1, 1, 1, 1, 4), tensor(graph.Int8, 1, 1, 1, 1, 1, 5), false, graph.Int32, []int32{6, 2},
			[]int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := padModel(tt.in, tt.out, tt.v2, tt.padType, tt.padShape, tt.pads...)
			var got []string
			for _, c := range lib.InPlace(m, 0, &op) {
				got = append(got, fmt.Sprintf("%s [%d, %d]", c, c.Lo, c.Hi))
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("paddings that are not constant", func(t *testing.T) {
		m, op := padModel(tensor(graph.Int8, 1, 4), tensor(graph.Int8, 1, 5), false, graph.Int32, []int32{2, 2}, 0, 0, 0, 1)
		m.Subgraphs[0].Tensors[1].Buffer = 0
		assert.Empty(t, lib.InPlace(m, 0, &op))
	})
}

// TestPlacementAllows: a placement allows exactly the offsets from Lo to
// Hi.
func TestPlacementAllows(t *testing.T) {
	p := kernels.Placement{Lo: -3, Hi: 0}
	for d, want := range map[int64]bool{-4: false, -3: true, 0: true, 1: false} {
		assert.Equal(t, want, p.Allows(d), "%d", d)
	}
}

func TestExactOnly(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	exact := lib.ExactOnly()
	var want []kernels.Contract
	for _, c := range lib.Contracts() {
		if c.Overlap == kernels.Exact {
			want = append(want, c)
		}
	}
	assert.Equal(t, want, exact.Contracts())
	assert.Less(t, len(want), len(lib.Contracts()), "the library has contracts that are not exact")
	assert.Nil(t, (*kernels.Library)(nil).ExactOnly())
}
