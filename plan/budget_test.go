package plan_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestBuildTimeBudget checks that the time limit is a budget: far too
// short, every planner still places the diamond (the default one proving
// its optimum with its heuristics, the others ignoring the limit), and each
// scratch arena says whether its size is proven optimal.
func TestBuildTimeBudget(t *testing.T) {
	tests := []struct {
		planner string
		optimal bool
	}{
		{"best", true},
		{"tflm", true},
		{"linear", false},
	}
	for _, tt := range tests {
		t.Run(tt.planner, func(t *testing.T) {
			p := build(t, diamond(), plan.Options{Planner: tt.planner, TimeLimit: time.Nanosecond})
			a := arena(t, p, liveness.Scratch)
			assert.Equal(t, tt.optimal, a.Optimal)
			assert.Zero(t, a.TimedOut, "proven, or placed without a search")
		})
	}
}

func TestBuildNegativeTimeLimit(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	_, err = plan.Build(context.Background(), m, lt, plan.Options{TimeLimit: -time.Second})
	assert.EqualError(t, err, "plan: time limit -1s is negative")
}
