package driver

import (
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/verify"
)

// verifyOutput checks a compile's plan and C module independently of the
// planner. For a model rewritten stripe by stripe (m.Stripes set), the
// verifier is given the original, rebuilds the rewrite from the plan's
// stripes record with its own code and checks the plan and the C module
// against that rebuild; then it checks that m, the model heliac emits,
// is that rebuild operator by operator (verify.Rewrite).
func verifyOutput(original, m *graph.Model, planJSON []byte, mod verify.Module) []verify.Violation {
	if len(m.Stripes) == 0 {
		return verify.PlanAndC(m, planJSON, mod)
	}
	if original == nil {
		return []verify.Violation{{Kind: verify.Malformed, Msg: "the model is a stripe rewrite, but the original it was rewritten from is not known"}}
	}
	if v := verify.PlanAndC(original, planJSON, mod); len(v) > 0 {
		return v
	}
	return verify.Rewrite(original, m, planJSON)
}

// rewrittenFrom is the model s was rewritten from, nil when s.m is the
// model as loaded.
func (s *planned) rewrittenFrom() *graph.Model {
	return s.original
}
