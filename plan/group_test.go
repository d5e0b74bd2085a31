package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// groupChain is in (16 B) -> a (32 B) -> b (64 B) -> c (16 B), one
// operator each, with b made by hand a member of a's alias group that
// starts off bytes before a (liveness would do so for an in-place write
// whose contract puts its input elsewhere in its output):
//
//	step:  0    1    2    3
//	in   [=======]
//	a         [=======]
//	b              [=======]
//	c                   [==]
func groupChain(t *testing.T, off int64) (*graph.Model, *liveness.Lifetimes) {
	t.Helper()
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4, 0), f32("a", 8, 0), f32("b", 16, 0), f32("c", 4, 0)},
		Inputs:  ids(0), Outputs: ids(3),
		Ops: []graph.Op{
			{Code: 1, Inputs: ids(0), Outputs: ids(1)},
			{Code: 1, Inputs: ids(1), Outputs: ids(2)},
			{Code: 1, Inputs: ids(2), Outputs: ids(3)},
		},
	}}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	a, b := lt.Lookup(graph.TensorRef{Tensor: 1}), lt.Lookup(graph.TensorRef{Tensor: 2})
	root := a.Ref
	b.AliasOf, b.AliasOffset = &root, off
	a.Group = liveness.Interval{First: a.Live.First, Last: b.Live.Last}
	a.Extent = liveness.ByteRange{Lo: min(0, off), Hi: max(a.Size, off+b.Size)}
	b.Extent = liveness.ByteRange{Lo: off, Hi: off + b.Size}
	return m, lt
}

// TestPlaceGroupWithOffsets: an alias group whose members lie at offsets
// from its root is placed rigidly, every member at the root's offset plus
// its own, but holds at each step only the bytes of its members live
// there: the lower bound counts, per step, the hull of those (and the
// group's whole span, when wider), other tensors may use the group's
// bytes while no member holds them, and the bound is reached.
func TestPlaceGroupWithOffsets(t *testing.T) {
	tests := []struct {
		name  string
		off   int64
		bound int64 // by hand: the widest step
	}{
		// step 2: a and b, [-32, 32); step 3: b and c, 64 + 16
		{"b starts 32 bytes before a: a at b's end", -32, 80},
		// step 3: b and c, 64 + 16
		{"b starts where a does", 0, 80},
		// step 2: a and b, [0, 80); step 3: b and c, 64 + 16
		{"b starts 16 bytes after a: the group runs past a", 16, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, lt := groupChain(t, tt.off)
			p, err := plan.Build(context.Background(), m, lt, plan.Options{})
			require.NoError(t, err)
			s := arena(t, p, liveness.Scratch)
			assert.Equal(t, tt.bound, s.LowerBound)
			a, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 1}))
			require.NoError(t, err)
			b, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 2}))
			require.NoError(t, err)
			assert.Equal(t, a.Offset+tt.off, b.Offset, "a member lies at its root's offset plus its own")
			assert.Equal(t, tt.off, b.AliasOffset)
			ext := lt.Lookup(graph.TensorRef{Tensor: 1}).Extent
			off, size := p.Block(plan.TensorKey(a.Ref))
			assert.Equal(t, [2]int64{a.Offset + ext.Lo, ext.Size()}, [2]int64{off, size}, "the root's block is its group's extent")
			off, size = p.Block(plan.TensorKey(b.Ref))
			assert.Equal(t, [2]int64{b.Offset, b.Size}, [2]int64{off, size}, "a member's block is its own bytes")
			for i, x := range p.Allocs {
				for _, y := range p.Allocs[i+1:] {
					if x.Arena != s.ID || y.Arena != s.ID || (x.AliasOf != nil && *x.AliasOf == y.Ref) || (y.AliasOf != nil && *y.AliasOf == x.Ref) {
						continue
					}
					if x.Live.Overlaps(y.Live) {
						assert.True(t, x.Offset+x.Size <= y.Offset || y.Offset+y.Size <= x.Offset, "%v and %v share bytes while live", x.Ref, y.Ref)
					}
				}
			}
			assert.Equal(t, s.LowerBound, s.Size, "the bound is reached")
		})
	}
}

// TestPlaceGroupOffsetAligned: a member whose offset from its root is not
// a multiple of the arena's alignment would be misaligned wherever the
// group lies, so Build refuses it (liveness.Options.Alignment must be
// plan.ScratchAlignment).
func TestPlaceGroupOffsetAligned(t *testing.T) {
	m, lt := groupChain(t, -8)
	_, err := plan.Build(context.Background(), m, lt, plan.Options{})
	assert.EqualError(t, err, `plan: tensor 0:2 "b" lies -8 bytes from its alias group's root 0:1, not a multiple of `+
		`the alignment 16 of arena "scratch_sram" (liveness.Options.Alignment must be a multiple of plan.ScratchAlignment)`)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{Alignment: 8})
	require.NoError(t, err)
	b, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 2}))
	require.NoError(t, err)
	assert.Zero(t, b.Offset%8)
}

func TestScratchAlignment(t *testing.T) {
	assert.Equal(t, int64(plan.DefaultAlignment), int64(liveness.DefaultAlignment), "liveness aligns in-place offsets as plan aligns offsets")
	wide := board(0)
	wide.Banks[1].Alignment = 64
	tests := []struct {
		name string
		opts plan.Options
		want int64
	}{
		{"the default", plan.Options{}, plan.DefaultAlignment},
		{"the plan's", plan.Options{Alignment: 32}, 32},
		{"a writable bank's, when larger", plan.Options{Platform: &wide}, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ScratchAlignment(tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := plan.ScratchAlignment(plan.Options{Alignment: 3})
	assert.Error(t, err)
}
