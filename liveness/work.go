package liveness

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Limits on the work a model may ask for. A subgraph runs again on every
// call (see the package doc), so a few KB of acyclic calls (each subgraph
// calling the next twice, twenty deep) describe millions of operator runs;
// every later stage (the schedule in plan.json, the verifier's walk) grows
// with the timeline. Analyze computes what running the model costs before
// it schedules anything, and refuses a model over either limit.
//
// The limits are far above what real models need: the largest model of the
// reference corpus (tflite-micro's dp_net, about 2,300 operators) takes
// 2,339 steps and 7,666 operand uses.
const (
	// MaxSteps is the most steps the timeline may have.
	MaxSteps = 1 << 15
	// MaxUses is the most operand uses a model may make: every tensor an
	// operator run lists (inputs, outputs, intermediates) and every input
	// and output of every run of a subgraph.
	MaxUses = 1 << 17
	// MaxDepth is the deepest calls may nest.
	MaxDepth = 64
)

// work is what one run of a subgraph costs, the subgraphs it calls
// included.
type work struct {
	steps, uses int64
	depth       int // calls nested below the subgraph
}

// coster computes, once per subgraph, what running it costs.
type coster struct {
	m    *graph.Model
	done []*work
	busy []bool // on the current chain of calls
}

// checkWork returns an error naming the limit and the subgraph when running
// the model (its entry subgraphs, those marked false in called) takes more
// than MaxSteps steps or MaxUses operand uses, or nests calls deeper than
// MaxDepth.
func checkWork(m *graph.Model, called []bool) error {
	c := &coster{m: m, done: make([]*work, len(m.Subgraphs)), busy: make([]bool, len(m.Subgraphs))}
	var total work
	for s := range m.Subgraphs {
		if s != 0 && called[s] {
			continue
		}
		w, err := c.subgraph(graph.SubgraphIndex(s), 0)
		if err != nil {
			return err
		}
		total.steps += w.steps
		total.uses += w.uses
	}
	switch {
	case total.steps > MaxSteps:
		return fmt.Errorf("liveness: the model's entry subgraphs take %d steps together, over the limit of %d", total.steps, MaxSteps)
	case total.uses > MaxUses:
		return fmt.Errorf("liveness: the model's entry subgraphs make %d operand uses together, over the limit of %d", total.uses, MaxUses)
	}
	return nil
}

// subgraph returns what one run of s, reached through depth calls, costs,
// or an error naming s when it is over a limit. Every subgraph s calls is
// within the limits when s is costed, so the sums cannot overflow: they
// are at most the model's size times MaxUses.
func (c *coster) subgraph(s graph.SubgraphIndex, depth int) (work, error) {
	if w := c.done[s]; w != nil {
		return *w, nil
	}
	switch {
	case depth > MaxDepth:
		return work{}, fmt.Errorf("liveness: calls nest deeper than %d at %s", MaxDepth, c.name(s))
	case c.busy[s]:
		return work{}, fmt.Errorf("liveness: %s calls itself", c.name(s))
	}
	c.busy[s] = true
	defer func() { c.busy[s] = false }()
	sg := &c.m.Subgraphs[s]
	w := work{steps: 1, uses: int64(len(sg.Inputs) + len(sg.Outputs))}
	for _, op := range sg.Ops {
		w.steps++
		w.uses += int64(len(op.Inputs) + len(op.Outputs) + len(op.Intermediates))
		for _, callee := range op.Called {
			cw, err := c.subgraph(callee, depth+1)
			if err != nil {
				return work{}, err
			}
			w.steps += cw.steps
			w.uses += cw.uses
			w.depth = max(w.depth, cw.depth+1)
		}
	}
	const again = "with the subgraphs it calls, each run again on every call"
	switch {
	case w.depth > MaxDepth:
		return work{}, fmt.Errorf("liveness: calls nest %d deep below %s, over the limit of %d", w.depth, c.name(s), MaxDepth)
	case w.steps > MaxSteps:
		return work{}, fmt.Errorf("liveness: %s takes %d steps %s, over the limit of %d", c.name(s), w.steps, again, MaxSteps)
	case w.uses > MaxUses:
		return work{}, fmt.Errorf("liveness: %s makes %d operand uses %s, over the limit of %d", c.name(s), w.uses, again, MaxUses)
	}
	c.done[s] = &w
	return w, nil
}

// name spells out subgraph s for messages: `subgraph 3 ("body")`.
func (c *coster) name(s graph.SubgraphIndex) string {
	if n := c.m.Subgraphs[s].Name; n != "" {
		return fmt.Sprintf("subgraph %d (%q)", s, n)
	}
	return fmt.Sprintf("subgraph %d", s)
}
