package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestByteSize(t *testing.T) {
	tests := []struct {
		name    string
		typ     ElementType
		shape   []int32
		want    int64
		wantErr string
	}{
		{"scalar", Float32, nil, 4, ""},
		{"matrix", Int8, []int32{3, 5}, 15, ""},
		{"zero dimension", Float32, []int32{4, 0, 2}, 0, ""},
		{"int4 packs two per byte", Int4, []int32{3}, 2, ""},
		{"string has no fixed size", String, []int32{4}, 0, ""},
		{"negative dimension", Float32, []int32{2, -1}, 0, "dimension 1 is -1"},
		{"overflow is caught before it wraps", Int8, []int32{1 << 20, 1 << 20, 1 << 24}, 0, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ByteSize(tt.typ, tt.shape)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestElementTypeString(t *testing.T) {
	assert.Equal(t, "INT8", Int8.String())
	assert.Equal(t, "TYPE_99", ElementType(99).String())
	assert.False(t, ElementType(-1).Valid())
}
