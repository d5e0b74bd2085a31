package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/order"
)

// TestWideFanStopsOnItsBudget schedules a wide fan (one input, 2,000
// parallel TANH, summed by a chain of ADDs): so many operators may run
// next at every step that a search counting only its states and levels
// spent minutes. The work budget must stop it, not the clock (given a
// minute, far more than the budget takes), at the same order every time.
func TestWideFanStopsOnItsBudget(t *testing.T) {
	m := randmodel.WideFan(2000)
	opts := order.Options{Work: order.DefaultWork, TimeLimit: time.Minute}
	r, err := order.Schedule(context.Background(), m, opts)
	require.NoError(t, err)
	assert.False(t, r.TimedOut, "the search stopped on the clock, not its work budget")
	assert.LessOrEqual(t, r.Work, opts.Work+64, "the work spent, give or take one scan of the order")
	assert.LessOrEqual(t, r.Peak, r.ModelPeak)
	assert.LessOrEqual(t, r.LowerBound, r.Peak)
	assert.Equal(t, r.Peak <= r.LowerBound, r.Proven)

	again, err := order.Schedule(context.Background(), m, opts)
	require.NoError(t, err)
	assert.Equal(t, r.Order, again.Order, "the work budget gives the same order every time")
}

// TestWorkBudgetIsRespected gives the search on the wide fan budgets of
// several sizes: each is spent, give or take, and none runs to the clock.
func TestWorkBudgetIsRespected(t *testing.T) {
	m := randmodel.WideFan(1000)
	for _, work := range []int64{50, 500, 5000} {
		r, err := order.Schedule(context.Background(), m, order.Options{Work: work, TimeLimit: time.Minute})
		require.NoError(t, err)
		assert.False(t, r.TimedOut, "work %d", work)
		assert.LessOrEqual(t, r.Work, work+64, "work %d", work)
		assert.GreaterOrEqual(t, r.Work, work, "work %d: the fan takes more than the budget", work)
	}
}

// TestTimedOutIsNotProven stops the search on the wide fan by the clock
// at once: the order it returns may be one at its lower bound, but another
// run could return another, so it is not reported proven (the verifier
// refuses a proven order that timed out).
func TestTimedOutIsNotProven(t *testing.T) {
	r, err := order.Schedule(context.Background(), randmodel.WideFan(1000), order.Options{TimeLimit: time.Nanosecond})
	require.NoError(t, err)
	assert.True(t, r.TimedOut)
	assert.False(t, r.Proven)
	assert.LessOrEqual(t, r.Peak, r.ModelPeak)
}
