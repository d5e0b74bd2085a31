package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestShare: the models' owned scratch arenas of one name become one
// buffer the size of the largest; persistent, constant and bound arenas
// stay each model's; the plans given are not changed; one plan alone
// shares nothing.
func TestShare(t *testing.T) {
	big := build(t, diamond(), plan.Options{})
	small := diamond()
	small.Subgraphs[0].Tensors[1] = f32("a", 2, 0) // a smaller activation: a smaller scratch arena
	little := build(t, small, plan.Options{})
	bound := build(t, diamond(), plan.Options{External: []string{"scratch_*"}})
	bigScratch, littleScratch := arena(t, big, liveness.Scratch), arena(t, little, liveness.Scratch)
	require.Greater(t, bigScratch.Size, littleScratch.Size)

	shared, err := plan.Share([]*plan.Plan{big, little, bound})
	require.NoError(t, err)
	require.Len(t, shared, 3)
	for i, p := range shared[:2] {
		s := arena(t, p, liveness.Scratch)
		assert.Equal(t, plan.Shared, s.Provider, "plan %d", i)
		assert.Equal(t, bigScratch.Size, s.SharedSize, "plan %d: the largest", i)
		for _, role := range []liveness.Class{liveness.Persistent, liveness.Constant} {
			a := arena(t, p, role)
			assert.Equal(t, plan.Owned, a.Provider, "plan %d %s", i, role)
			assert.Zero(t, a.SharedSize)
		}
	}
	assert.Equal(t, littleScratch.Size, arena(t, shared[1], liveness.Scratch).Size, "its own size stays")
	assert.Equal(t, plan.Bound, arena(t, shared[2], liveness.Scratch).Provider, "the application's arena is not shared")
	assert.Equal(t, plan.Owned, arena(t, big, liveness.Scratch).Provider, "the input is not changed")
	assert.NotEqual(t, big.Hash(), shared[0].Hash(), "sharing is part of the plan")

	alone, err := plan.Share([]*plan.Plan{big})
	require.NoError(t, err)
	assert.Equal(t, plan.Owned, arena(t, alone[0], liveness.Scratch).Provider)
	_, err = plan.Share([]*plan.Plan{big, nil})
	require.Error(t, err)
}
