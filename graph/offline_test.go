package graph_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestReadOfflinePlanErrors: data that holds no offline plan is an error
// saying why; a plan reads back as written.
func TestReadOfflinePlanErrors(t *testing.T) {
	le := func(ws ...int32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(w))
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"too short", le(1, 1), "8 bytes, want 3 or more int32 words"},
		{"not whole words", append(le(1, 1, 0), 7), "13 bytes"},
		{"count and offsets disagree", le(1, 1, 3, 0, 16), "says 3 tensors, but holds 2 offsets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := graph.ReadOfflinePlan(tt.data)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	v, s, offs, err := graph.ReadOfflinePlan(le(0, 1, 2, -1, 32))
	require.NoError(t, err)
	assert.Equal(t, 0, v, "Vela writes version 0; TFLM ignores it")
	assert.Equal(t, 1, s)
	assert.Equal(t, []int32{-1, 32}, offs)
}
