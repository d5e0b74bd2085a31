package stripe

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Measure checks region r (with its Rows) as Apply does and returns what
// Apply would record, without building the model: r with MACs and
// ExtraMACs filled, and for each stripe the rows [start, end) that it
// holds of each tensor of the region computed at run time (X: the rows
// its operators read, although the stripe reads them from X whole; the
// intermediates: the rows its tensor of them holds, which with cached
// halos are the rows taken from the stripe before and those its copy
// computes; Y: the stripe's rows). ExtraMACs counts the rows the copies
// compute: with r.Halo graph.HaloCache it is 0 or negative.
// It is much cheaper than Apply, for a caller that weighs many regions.
func Measure(m *graph.Model, r graph.StripeRegion) (graph.StripeRegion, []map[graph.TensorID][2]int32, error) {
	if m == nil {
		return r, nil, fmt.Errorf("stripe: nil model")
	}
	if r.Subgraph < 0 || int(r.Subgraph) >= len(m.Subgraphs) {
		return r, nil, fmt.Errorf("stripe: subgraph %d out of range", r.Subgraph)
	}
	g := analyze(m, r.Subgraph)
	reg, err := check(g, r)
	if err == nil {
		err = reg.checkRows()
	}
	if err != nil {
		return r, nil, fmt.Errorf("stripe: region (subgraph %d, %d -> %d): %v", r.Subgraph, r.Input, r.Output, err)
	}
	r.MACs = 0
	perRow := map[int]int64{} // an operator's MACs per output row
	for _, i := range r.Ops {
		op := g.op(i)
		n := OpMACs(m, r.Subgraph, op)
		r.MACs += n
		perRow[i] = n / int64(g.tensor(op.Outputs[0]).Shape[1])
	}
	plan, err := reg.stripes()
	if err != nil {
		return r, nil, fmt.Errorf("stripe: region (subgraph %d, %d -> %d): %v", r.Subgraph, r.Input, r.Output, err)
	}
	var copies int64
	needs := make([]map[graph.TensorID][2]int32, len(plan))
	for j, sr := range plan {
		needs[j] = make(map[graph.TensorID][2]int32, len(sr.need))
		for t, s := range sr.need {
			needs[j][t] = [2]int32{s.a, s.b}
		}
		for _, i := range r.Ops {
			q := sr.fresh[g.op(i).Outputs[0]]
			copies += perRow[i] * int64(q.b-q.a)
		}
	}
	r.ExtraMACs = copies - r.MACs
	return r, needs, nil
}
