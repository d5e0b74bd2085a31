package plan

import (
	"testing"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/stretchr/testify/assert"
)

// tflmFixture is a one-operator scratch arena: two tensors live at the
// operator at the given offsets (16 bytes each) and the operator's kernel
// scratch of the given sizes at heliac's offsets.
func tflmFixture(tensorAt []int64, sizes, offsets []int64, arenaSize int64) (*placer, *Arena) {
	op := graph.OpRef{Subgraph: 0, Op: 0}
	p := &Plan{Schedule: liveness.Schedule{Order: [][]graph.OpIndex{{0}}, Steps: 1},
		Arenas: []Arena{{ID: 0, Role: liveness.Scratch, Alignment: 16, Size: arenaSize, Used: arenaSize}}}
	for i, off := range tensorAt {
		p.Allocs = append(p.Allocs, Alloc{Key: TensorKey(graph.TensorRef{Subgraph: 0, Tensor: graph.TensorID(i)}),
			Class: liveness.Scratch, Size: 16, Offset: off})
	}
	for i, n := range sizes {
		p.Allocs = append(p.Allocs, Alloc{Key: Key{Kind: KernelScratchAlloc, Op: op, Index: i},
			Class: liveness.Scratch, Size: n, Offset: offsets[i]})
	}
	return &placer{p: p}, &p.Arenas[0]
}

func scratchOffsets(p *Plan) []int64 {
	var out []int64
	for _, a := range p.Allocs {
		if a.Kind == KernelScratchAlloc {
			out = append(out, a.Offset)
		}
	}
	return out
}

// TestPlaceKernelScratchAsTFLM checks when heliac takes TFLM's placement of
// kernel scratch: whenever it costs nothing, and with
// Options.TFLMKernelScratch also when the arena must grow for it.
func TestPlaceKernelScratchAsTFLM(t *testing.T) {
	t.Run("same size, TFLM's offsets", func(t *testing.T) {
		// TFLM puts the 32-byte request first, just above the tensor at 0.
		pl, arena := tflmFixture([]int64{0}, []int64{16, 32}, []int64{16, 32}, 64)
		pl.placeKernelScratchAsTFLM(arena)
		assert.Equal(t, []int64{48, 16}, scratchOffsets(pl.p))
		assert.Equal(t, int64(64), arena.Size)
		assert.Zero(t, arena.TFLMGrowth)
	})
	// Two 160-byte gaps hold heliac's packing; TFLM's first fit, largest
	// first, needs 32 bytes more (dsa.TestAround).
	sizes := []int64{80, 64, 48, 48, 48, 32}
	heliac := []int64{0, 176, 80, 240, 288, 128}
	t.Run("TFLM needs more: heliac's kept", func(t *testing.T) {
		pl, arena := tflmFixture([]int64{160, 336}, sizes, heliac, 352)
		pl.placeKernelScratchAsTFLM(arena)
		assert.Equal(t, heliac, scratchOffsets(pl.p))
		assert.Equal(t, int64(352), arena.Size)
		assert.Zero(t, arena.TFLMGrowth)
	})
	t.Run("TFLM needs more: TFLM's asked for", func(t *testing.T) {
		pl, arena := tflmFixture([]int64{160, 336}, sizes, heliac, 352)
		pl.opts.TFLMKernelScratch = true
		arena.Optimal = true
		pl.placeKernelScratchAsTFLM(arena)
		assert.Equal(t, []int64{0, 80, 272, 224, 176, 352}, scratchOffsets(pl.p))
		assert.Equal(t, int64(384), arena.Size)
		assert.Equal(t, int64(384), arena.Used)
		assert.Equal(t, int64(32), arena.TFLMGrowth)
		assert.False(t, arena.Optimal)
	})
	t.Run("off the arena's alignment: heliac's kept", func(t *testing.T) {
		pl, arena := tflmFixture([]int64{0}, []int64{16, 32}, []int64{32, 64}, 96)
		arena.Alignment = 32
		pl.opts.TFLMKernelScratch = true
		pl.placeKernelScratchAsTFLM(arena)
		assert.Equal(t, []int64{32, 64}, scratchOffsets(pl.p))
	})
}
