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

// twoRAMs has two writable banks and two read-only sources.
func twoRAMs() plan.Platform {
	return plan.Platform{Name: "two", Banks: []plan.Bank{
		{Name: "A", Writable: true, Order: 0},
		{Name: "B", Writable: true, Order: 1},
		{Name: "FLASH"},
		{Name: "QSPI"},
	}}
}

func TestRulesThatCannotHold(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	tests := []struct {
		name  string
		rules []plan.Rule
		want  string
	}{
		{"scratch in read-only memory", []plan.Rule{{Name: "a", Memory: "FLASH"}}, `rule 0: scratch tensor 0:1 "a" cannot live in read-only FLASH`},
		{"state in read-only memory", []plan.Rule{{Name: "state", Memory: "FLASH"}}, `rule 0: persistent tensor 0:8 "state" cannot live in read-only FLASH`},
		{"constant in RAM without staging", []plan.Rule{{Name: "w*", Memory: "A"}}, `rule 0: constant 0:5 "w": A is RAM; to place constants there, stage them: add source: FLASH`},
		{"two sources into one memory", []plan.Rule{{Class: "constant", Memory: "A", Source: "FLASH"}, {Name: "odd", Memory: "A", Source: "QSPI"}},
			"constants are staged into A from both FLASH and QSPI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := twoRAMs()
			_, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &p, Rules: tt.rules})
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestTensorRuleMatchesByIndexNotSpelling(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p := twoRAMs()
	pl, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &p, Rules: []plan.Rule{{Tensor: "0:01", Memory: "B"}}})
	require.NoError(t, err)
	a, err := pl.Allocation(graph.TensorRef{Tensor: 1})
	require.NoError(t, err)
	assert.Equal(t, "B", pl.Arenas[a.Arena].Memory)
}
