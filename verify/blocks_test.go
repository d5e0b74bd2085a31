package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBlocks(t *testing.T) {
	tests := []struct {
		name     string
		blocks   []Block
		capacity int64
		want     []Kind
	}{
		{name: "empty", blocks: nil},
		{name: "single block", blocks: []Block{{Start: 0, End: 3, Size: 16, Offset: 0, Align: 16}}, capacity: 16},
		{
			name:   "touching intervals at one offset",
			blocks: []Block{{Start: 0, End: 2, Size: 16}, {Start: 2, End: 4, Size: 16}},
		},
		{
			name:   "touching bytes at one time",
			blocks: []Block{{Start: 0, End: 4, Size: 16}, {Start: 0, End: 4, Size: 16, Offset: 16}},
		},
		{
			name:   "overlap in time and space",
			blocks: []Block{{Start: 0, End: 3, Size: 16}, {Start: 2, End: 4, Size: 16, Offset: 8}},
			want:   []Kind{Overlap},
		},
		{
			name:   "one block inside another",
			blocks: []Block{{Start: 0, End: 10, Size: 64}, {Start: 4, End: 5, Size: 8, Offset: 16}},
			want:   []Kind{Overlap},
		},
		{
			name:   "zero-size block overlaps nothing",
			blocks: []Block{{Start: 0, End: 10, Size: 64}, {Start: 4, End: 5, Size: 0, Offset: 16}},
		},
		{
			name:   "misaligned offset",
			blocks: []Block{{Start: 0, End: 1, Size: 16, Offset: 8, Align: 16}},
			want:   []Kind{Misaligned},
		},
		{
			name:   "alignment 0 and 1 allow any offset",
			blocks: []Block{{Start: 0, End: 1, Size: 1, Offset: 7, Align: 0}, {Start: 0, End: 1, Size: 1, Offset: 9, Align: 1}},
		},
		{
			name:     "capacity exceeded",
			blocks:   []Block{{Start: 0, End: 1, Size: 32}, {Start: 0, End: 1, Size: 32, Offset: 32}},
			capacity: 48,
			want:     []Kind{OutOfBounds},
		},
		{
			name:     "exactly at capacity",
			blocks:   []Block{{Start: 0, End: 1, Size: 32}, {Start: 0, End: 1, Size: 16, Offset: 32}},
			capacity: 48,
		},
		{
			name:   "capacity 0 is unbounded",
			blocks: []Block{{Start: 0, End: 1, Size: 32, Offset: 1 << 40}},
		},
		{
			name:   "negative offset",
			blocks: []Block{{Start: 0, End: 1, Size: 16, Offset: -16}},
			want:   []Kind{OutOfBounds},
		},
		{
			name:     "offset near the int64 limit does not wrap",
			blocks:   []Block{{Start: 0, End: 1, Size: 16, Offset: 1<<63 - 8}, {Start: 0, End: 1, Size: 16}},
			capacity: 1 << 40,
			want:     []Kind{OutOfBounds},
		},
		{
			name:   "negative size",
			blocks: []Block{{Start: 0, End: 1, Size: -1}},
			want:   []Kind{Malformed},
		},
		{
			name:   "end before start",
			blocks: []Block{{Start: 3, End: 1, Size: 16}},
			want:   []Kind{Malformed},
		},
		{
			name:   "negative alignment",
			blocks: []Block{{Start: 0, End: 1, Size: 16, Align: -16}},
			want:   []Kind{Malformed},
		},
		{
			name:     "negative capacity",
			blocks:   []Block{{Start: 0, End: 1, Size: 16}},
			capacity: -1,
			want:     []Kind{Malformed},
		},
		{
			name: "every violation is reported",
			blocks: []Block{
				{Start: 0, End: 2, Size: 16, Offset: 0, Align: 16},
				{Start: 1, End: 3, Size: 16, Offset: 8, Align: 16},
				{Start: 0, End: 1, Size: 16, Offset: 96, Align: 16},
			},
			capacity: 64,
			want:     []Kind{Overlap, OutOfBounds, Misaligned},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Blocks(tt.blocks, tt.capacity)
			if len(tt.want) == 0 {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, sortedKinds(tt.want), kindsOf(got), "%v", got)
		})
	}
}

func TestBlocksMessage(t *testing.T) {
	got := Blocks([]Block{{Start: 0, End: 3, Size: 16}, {Start: 2, End: 4, Size: 16, Offset: 8}}, 0)
	assert.Equal(t, []Violation{{Overlap, "blocks 0 and 1 share steps [2, 3) and bytes [8, 16)"}}, got)
}
