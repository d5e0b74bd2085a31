package driver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/verify"
)

// TestLimitsAgree checks that the verifier walks every timeline the planner
// makes, and refuses the same models: the two keep limits of their own,
// since they share no code.
func TestLimitsAgree(t *testing.T) {
	assert.Equal(t, liveness.MaxSteps, verify.MaxSteps)
	assert.Equal(t, liveness.MaxUses, verify.MaxUses)
}
