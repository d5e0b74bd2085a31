package dsa

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pinned(off, start, end, size int64) Buffer {
	return Buffer{Start: start, End: end, Size: size, Fixed: &off}
}

// TestAround places online buffers around pinned ones as TFLM's planner
// does, with expectations worked out by hand.
func TestAround(t *testing.T) {
	tests := []struct {
		name    string
		bufs    []Buffer
		offsets []int64
		height  int64
	}{{
		// Two pinned tensors share bytes at step 0 (an output written over
		// its input); Greedy refuses them, TFLM and Around do not. The
		// online buffer goes above both.
		name:    "overlapping pinned buffers",
		bufs:    []Buffer{pinned(0, 0, 1, 32), pinned(16, 0, 2, 32), {Start: 0, End: 1, Size: 16}},
		offsets: []int64{0, 16, 48},
		height:  64,
	}, {
		// Equal sizes go in reverse order: the later buffer takes the
		// lower gap.
		name:    "ties in reverse order",
		bufs:    []Buffer{pinned(16, 0, 1, 16), {Start: 0, End: 1, Size: 16}, {Start: 0, End: 1, Size: 16}},
		offsets: []int64{16, 32, 0},
		height:  48,
	}, {
		// First fit, largest first, is not optimal: two 160-byte gaps
		// hold 80+48+32 and 64+48+48, but 80 and 64 fill the first, the
		// three 48s the second, and 32 goes on top.
		name: "first fit decreasing misses the packing",
		bufs: []Buffer{pinned(160, 0, 1, 16), pinned(336, 0, 1, 16),
			{Start: 0, End: 1, Size: 80}, {Start: 0, End: 1, Size: 64}, {Start: 0, End: 1, Size: 48},
			{Start: 0, End: 1, Size: 48}, {Start: 0, End: 1, Size: 48}, {Start: 0, End: 1, Size: 32}},
		offsets: []int64{160, 336, 0, 80, 272, 224, 176, 352},
		height:  384,
	}, {
		// A pinned buffer not live with the online one leaves its bytes
		// free.
		name:    "dead pinned buffer",
		bufs:    []Buffer{pinned(0, 0, 1, 64), {Start: 1, End: 2, Size: 32}},
		offsets: []int64{0, 0},
		height:  64,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Around(Problem{Buffers: tc.bufs})
			require.NoError(t, err)
			assert.Equal(t, tc.offsets, s.Offsets)
			assert.Equal(t, tc.height, s.Height)
		})
	}
	_, err := Greedy(context.Background(), Problem{Buffers: tests[0].bufs})
	require.ErrorIs(t, err, ErrInfeasible, "Greedy checks pinned buffers")
	_, err = Around(Problem{Buffers: []Buffer{{Start: 0, End: 1, Size: -1}}})
	require.Error(t, err, "Around validates")
}
