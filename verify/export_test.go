package verify

import "github.com/heliac/heliac/graph"

// PlanWork runs Plan and returns, with its violations, the steps its
// checks that relate allocations to one another took (checker.work).
func PlanWork(m *graph.Model, planJSON []byte) ([]Violation, int64) {
	doc, bad := decode(planJSON)
	if doc == nil {
		return bad, 0
	}
	return checkPlanWork(m, doc)
}
