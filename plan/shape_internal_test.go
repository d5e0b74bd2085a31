package plan

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// TestPlaceShapesProperties places random rigid shapes and checks what
// placeShapes promises: origins are multiples of the alignment, no unit
// reaches below 0, rectangles of different units never share a byte while
// both are live, the height is the highest rectangle's top, and no lower
// than shapePeak's bound where that is a bound: where a unit's rectangles
// live at one step leave no gap between them (so the hull is their
// union), as an alias group's do (an input and the output written over it
// overlap or meet).
func TestPlaceShapesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	bounded := 0
	for n := 0; n < 300; n++ {
		const align = 16
		units := make([][]shapeRect, 1+rng.IntN(8))
		for i := range units {
			for k := 0; k < 1+rng.IntN(3); k++ {
				start := int64(rng.IntN(10))
				lo := int64(rng.IntN(9)-4) * align
				units[i] = append(units[i], shapeRect{start: start, end: start + 1 + int64(rng.IntN(4)),
					lo: lo, hi: lo + int64(1+rng.IntN(6))*align})
			}
		}
		origins, height := placeShapes(units, align)
		require.Len(t, origins, len(units))
		var top int64
		for i, u := range units {
			assert.Zero(t, origins[i]%align, "origin %d aligned", i)
			for _, r := range u {
				assert.GreaterOrEqual(t, origins[i]+r.lo, int64(0), "unit %d above 0", i)
				top = max(top, origins[i]+r.hi)
				for j := i + 1; j < len(units); j++ {
					for _, q := range units[j] {
						if r.start < q.end && q.start < r.end {
							a0, a1 := origins[i]+r.lo, origins[i]+r.hi
							b0, b1 := origins[j]+q.lo, origins[j]+q.hi
							assert.True(t, a1 <= b0 || b1 <= a0, "case %d: units %d and %d overlap while live", n, i, j)
						}
					}
				}
			}
		}
		assert.Equal(t, top, height)
		if !gaps(units) {
			lb, _ := shapePeak(units)
			assert.GreaterOrEqual(t, height, lb, "case %d", n)
			bounded++
		}
	}
	assert.Greater(t, bounded, 100, "cases whose bound is checked")
}

// TestShapePeakByHand: a group holds, at each step, the hull of its live
// rectangles; the bound is the widest step, or the widest span.
func TestShapePeakByHand(t *testing.T) {
	// One group: [0, 32) over steps 0-1, [-32, 32) over steps 1-2; another
	// [0, 16) over step 2. Step 1: 64; step 2: 64 + 16.
	units := [][]shapeRect{
		{{start: 0, end: 2, lo: 0, hi: 32}, {start: 1, end: 3, lo: -32, hi: 32}},
		{{start: 2, end: 3, lo: 0, hi: 16}},
	}
	lb, step := shapePeak(units)
	assert.Equal(t, int64(80), lb)
	assert.Equal(t, int64(2), step)
	// A group whose rectangles never live together still spans them all.
	lb, _ = shapePeak([][]shapeRect{{{start: 0, end: 1, lo: 0, hi: 16}, {start: 1, end: 2, lo: 64, hi: 80}}})
	assert.Equal(t, int64(80), lb)
}

// gaps reports whether some unit has rectangles live at one step whose
// union is not one range.
func gaps(units [][]shapeRect) bool {
	for _, u := range units {
		for s := int64(0); s < 16; s++ {
			var live []shapeRect
			for _, r := range u {
				if r.start <= s && s < r.end {
					live = append(live, r)
				}
			}
			slices.SortFunc(live, func(a, b shapeRect) int { return int(a.lo - b.lo) })
			for i := 1; i < len(live); i++ {
				reach := live[0].hi
				for _, q := range live[:i] {
					reach = max(reach, q.hi)
				}
				if live[i].lo > reach {
					return true
				}
			}
		}
	}
	return false
}

// TestShapesKeepLifetimeGaps: two members of an alias group over the same
// bytes whose lifetimes neither overlap nor meet stay two rectangles, so
// the group holds nothing between them (as the verifier counts it); they
// were once merged into one rectangle over the gap, and the plan's lower
// bound exceeded the verifier's (the differential test's seed 4000119).
func TestShapesKeepLifetimeGaps(t *testing.T) {
	root := graph.TensorRef{Subgraph: 0, Tensor: 0}
	p := &Plan{tensors: map[graph.TensorRef]int{root: 0}}
	p.Allocs = []Alloc{
		{Key: TensorKey(root), Class: liveness.Scratch, Size: 32, Live: liveness.Interval{First: 1, Last: 3}},
		{Key: TensorKey(graph.TensorRef{Subgraph: 0, Tensor: 1}), Class: liveness.Scratch, Size: 32, AliasOf: &root,
			Live: liveness.Interval{First: 8, Last: 9}},
		{Key: TensorKey(graph.TensorRef{Subgraph: 0, Tensor: 2}), Class: liveness.Scratch, Size: 32, AliasOf: &root,
			Live: liveness.Interval{First: 4, Last: 5}},
	}
	pl := &placer{p: p}
	units, shaped, n := pl.shapes([]int{0}, 16)
	assert.True(t, shaped)
	assert.Equal(t, 2, n, "steps 1-5 meet and merge; 8-9 stand apart")
	assert.Equal(t, []shapeRect{{start: 1, end: 6, lo: 0, hi: 32}, {start: 8, end: 10, lo: 0, hi: 32}}, units[0])
	other := []shapeRect{{start: 6, end: 8, lo: 0, hi: 48}}
	lb, step := shapePeak([][]shapeRect{units[0], other})
	assert.Equal(t, int64(48), lb, "the other buffer alone at steps 6-7")
	assert.Equal(t, int64(6), step)
}
