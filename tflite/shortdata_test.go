package tflite

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestShortData checks constants against their shapes: data shorter than
// the shape needs is refused by Encode and by Load (testdata/bad/
// constant_buffer_short); packed sub-byte data, longer data, zero-size
// shapes, STRING data and tensors without data load.
func TestShortData(t *testing.T) {
	tests := []struct {
		name    string
		typ     graph.ElementType
		shape   []int32
		data    int
		wantErr string
	}{
		{"exact", graph.Int32, []int32{4}, 16, ""},
		{"short", graph.Int32, []int32{4}, 12,
			"tflite: encode: subgraphs[0].tensors[0]: buffer 1 holds 12 bytes, but the INT32 shape [4] needs 16"},
		{"INT4 packed, odd count", graph.Int4, []int32{3}, 2, ""},
		{"INT4 short", graph.Int4, []int32{2, 2}, 1,
			"tflite: encode: subgraphs[0].tensors[0]: buffer 1 holds 1 bytes, but the INT4 shape [2 2] needs 2"},
		{"INT4 one element a byte", graph.Int4, []int32{4}, 4, ""},
		{"longer than the shape", graph.Int8, []int32{4}, 8, ""},
		{"zero-size", graph.Int8, []int32{0, 4}, 4, ""},
		{"STRING", graph.String, []int32{2}, 3, ""},
		{"no data", graph.Int8, []int32{4}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size, err := graph.ByteSize(tt.typ, tt.shape)
			require.NoError(t, err)
			if tt.typ.Bits() == 0 {
				size = int64(tt.data)
			}
			m := &graph.Model{
				Version: SchemaVersion,
				Buffers: []graph.Buffer{{}, {Data: make([]byte, tt.data)}},
				Subgraphs: []graph.Subgraph{{Name: "main", Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{0},
					Ops: []graph.Op{}, Tensors: []graph.Tensor{{Name: "c", Type: tt.typ, Shape: tt.shape, Buffer: 1, Size: size}}}},
			}
			data, err := Encode(m, EncodeOptions{})
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			got, err := Load(data)
			require.NoError(t, err)
			assert.Equal(t, size, got.Subgraphs[0].Tensors[0].Size)
		})
	}
}
