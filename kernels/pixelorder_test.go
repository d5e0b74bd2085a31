package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestWindowPlacementLag pins windowPlacement's lag on a 1x1 convolution
// of 4 pixels of 2 channels into 2, worked out by hand: pixel q reads
// input elements 2q and 2q+1. Element order: channel 0 of pixel p (end
// 2p+1) before channel 1 reads pixel p again (2p): 1. Lag 1: pixel p (end
// 2p+2) while pixel p (2p) is still to be read: 2. Lag 2: while pixel p-1
// (2p-2) is: 4. Lag 4: pixel 3 (end 8) while pixel 0 is: 8, the output's
// size, so no overlap is left: no contract.
func TestWindowPlacementLag(t *testing.T) {
	in := graph.Tensor{Type: graph.Int8, Shape: []int32{1, 1, 4, 2}, Size: 8}
	out := in
	f := graph.Tensor{Type: graph.Int8, Shape: []int32{2, 1, 1, 2}, Size: 4}
	m := &graph.Model{Subgraphs: []graph.Subgraph{{Tensors: []graph.Tensor{in, out, f}}}}
	op := graph.Op{Code: graph.Conv2D, Inputs: []graph.TensorID{0, 2}, Outputs: []graph.TensorID{1},
		Window: &graph.Window{Padding: graph.PaddingValid, StrideH: 1, StrideW: 1, DilationH: 1, DilationW: 1}}
	sg := &m.Subgraphs[0]
	for _, tt := range []struct {
		lag, lo int64
		ok      bool
	}{{elementOrder, 1, true}, {1, 2, true}, {2, 4, true}, {3, 6, true}, {4, 0, false}} {
		lo, hi, ok := windowPlacement(m, sg, &op, &sg.Tensors[0], &sg.Tensors[1], tt.lag)
		require.Equal(t, tt.ok, ok, "lag %d", tt.lag)
		if ok {
			assert.Equal(t, tt.lo, lo, "lag %d", tt.lag)
			assert.Equal(t, int64(8), hi, "lag %d", tt.lag)
		}
	}
}

// TestColumns pins columns(n) on a 1x1 convolution of 5 pixels (one
// batch) of 2 channels into 1: pixel q reads elements 2q and 2q+1. One
// at a time: pixel 0 (end 1) before pixel 1 is read (2): -1. Two: pixels
// 0-1 (end 2) before pixel 2 (4): -2, pixels 2-3 (end 4) before 4 (8):
// -4. Four: pixels 0-3 (end 4) before pixel 4 (8): -4. Five: every write
// after every read, nothing constrains: the input's size before.
func TestColumns(t *testing.T) {
	w := &slidingWindow{batches: 1, inH: 1, inW: 5, inC: 2, outH: 1, outW: 5, outC: 1, e: 1, filterH: 1, filterW: 1,
		strideH: 1, strideW: 1, dilationH: 1, dilationW: 1, inSize: 10, outSize: 5}
	for n, want := range map[int64]int64{1: -1, 2: -2, 4: -4, 5: -10} {
		lo, hi, ok := schedulePlacement(w, columns(n))
		require.True(t, ok)
		assert.Equal(t, want, lo, "columns(%d)", n)
		assert.Equal(t, int64(5), hi)
	}
}
