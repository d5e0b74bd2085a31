package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestUnusedRules checks that every tensor or name rule that selects
// nothing is reported with why, and that class rules never are.
func TestUnusedRules(t *testing.T) {
	m := diamond()
	m.Subgraphs[0].Tensors = append(m.Subgraphs[0].Tensors, f32("spare", 4, 0)) // 0:9, used by nothing
	tests := []struct {
		name  string
		rules []plan.Rule
		want  []plan.UnusedRule
	}{
		{"rules that select tensors", []plan.Rule{{Tensor: "0:1", Memory: "SRAM"}, {Name: "w*", Memory: "FLASH"}}, nil},
		{"a tensor past the end", []plan.Rule{{Tensor: "0:10", Memory: "SRAM"}},
			[]plan.UnusedRule{{Rule: 0, Reason: "subgraph 0 has 10 tensor(s)"}}},
		{"a subgraph past the end", []plan.Rule{{Class: "scratch", Memory: "SRAM"}, {Tensor: "2:0", Memory: "SRAM"}},
			[]plan.UnusedRule{{Rule: 1, Reason: "the model has 1 subgraph(s)"}}},
		{"a tensor that takes no bytes", []plan.Rule{{Tensor: "0:9", Memory: "SRAM"}},
			[]plan.UnusedRule{{Rule: 0, Reason: `tensor 0:9 "spare": it takes no bytes (unused)`}}},
		{"a glob that matches no name", []plan.Rule{{Name: "model/big*", Memory: "SRAM"}},
			[]plan.UnusedRule{{Rule: 0, Reason: "no tensor's name matches"}}},
		{"a glob that matches only tensors without bytes", []plan.Rule{{Name: "spa*", Memory: "SRAM"}},
			[]plan.UnusedRule{{Rule: 0, Reason: "the tensors whose names match take no bytes"}}},
		{"a class the model lacks is a policy, not a mistake", []plan.Rule{{Class: "persistent", Memory: "SRAM"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, m, plan.Options{Rules: tt.rules})
			assert.Equal(t, tt.want, p.UnusedRules)
		})
	}
}

// TestStrictRules checks that with Options.Strict a rule that selects
// nothing fails the plan, each such rule on a line of its own.
func TestStrictRules(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	rules := []plan.Rule{{Tensor: "0:10", Memory: "SRAM"}, {Tensor: "0:1", Memory: "SRAM"}, {Name: "nope", Memory: "SRAM"}}
	_, err = plan.Build(context.Background(), m, lt, plan.Options{Rules: rules, Strict: true})
	assert.EqualError(t, err, `plan: rule 0 (tensor "0:10") selects nothing: subgraph 0 has 9 tensor(s) (rules are strict)`+"\n"+
		`plan: rule 2 (name "nope") selects nothing: no tensor's name matches (rules are strict)`)

	p, err := plan.Build(context.Background(), m, lt, plan.Options{Rules: rules[1:2], Strict: true})
	require.NoError(t, err)
	assert.Empty(t, p.UnusedRules)
}
