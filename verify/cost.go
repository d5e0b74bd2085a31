package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// The most steps and operand uses the verifier walks. A subgraph runs again
// on every call, so a small model of acyclic calls can describe millions of
// operator runs; walk refuses such a model as Malformed before it walks.
// The planner refuses the same models with limits of its own (liveness),
// which a driver test keeps equal to these.
const (
	// MaxSteps is the most steps the timeline may have.
	MaxSteps = 1 << 15
	// MaxUses is the most operand uses: every tensor an operator run lists
	// (inputs, outputs, intermediates) and every input and output of every
	// run of a subgraph.
	MaxUses = 1 << 17
)

// cost is what one run of a subgraph costs, the subgraphs it calls
// included.
type cost struct{ steps, uses int64 }

// tooCostly returns why running m (subgraph 0 and the others called marks
// false) takes more than MaxSteps steps or MaxUses operand uses, naming the
// first subgraph over a limit, or "" when it does not. The calls must form
// no cycle.
func tooCostly(m *graph.Model, called []bool) string {
	k := &coster{m: m, costs: make([]*cost, len(m.Subgraphs))}
	var total cost
	for s := range m.Subgraphs {
		if s != 0 && called[s] {
			continue
		}
		c, why := k.of(graph.SubgraphIndex(s))
		if why != "" {
			return why
		}
		total.steps, total.uses = total.steps+c.steps, total.uses+c.uses
	}
	return overLimit("the entry subgraphs together", total)
}

// coster costs each subgraph once.
type coster struct {
	m     *graph.Model
	costs []*cost
}

// of returns what one run of s costs, or why s or a subgraph it calls is
// over a limit. Every callee is within the limits when s is costed, so the
// sums stay below the model's size times MaxUses.
func (k *coster) of(s graph.SubgraphIndex) (cost, string) {
	if c := k.costs[s]; c != nil {
		return *c, ""
	}
	sg := &k.m.Subgraphs[s]
	c := cost{steps: 1, uses: int64(len(sg.Inputs) + len(sg.Outputs))}
	for _, op := range sg.Ops {
		c.steps++
		c.uses += int64(len(op.Inputs) + len(op.Outputs) + len(op.Intermediates))
		for _, callee := range op.Called {
			cc, why := k.of(callee)
			if why != "" {
				return cost{}, why
			}
			c.steps, c.uses = c.steps+cc.steps, c.uses+cc.uses
		}
	}
	if why := overLimit(fmt.Sprintf("subgraph %d", s), c); why != "" {
		return cost{}, why
	}
	k.costs[s] = &c
	return c, ""
}

// overLimit says which limit c is over, or "" when it is within both.
func overLimit(what string, c cost) string {
	switch {
	case c.steps > MaxSteps:
		return fmt.Sprintf("model: %s takes %d steps, over the verifier's limit of %d", what, c.steps, MaxSteps)
	case c.uses > MaxUses:
		return fmt.Sprintf("model: %s makes %d operand uses, over the verifier's limit of %d", what, c.uses, MaxUses)
	}
	return ""
}
