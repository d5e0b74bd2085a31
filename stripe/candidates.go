package stripe

import (
	"sort"

	"github.com/heliac/heliac/graph"
)

// Candidates returns the regions of m that may be striped, with Rows
// empty: the caller picks k and the rows. For every tensor Y written by a
// row-local operator, and every tensor X that a chain of row-local
// operators leads from to Y (where the chain starts: a subgraph input or
// the output of another operator, or any tensor inside the chain), the
// region is every operator on a path from X to Y: side branches such as a
// residual ADD whose operands both come from X or the region are in it.
// A pair whose operators do not form a valid region (an intermediate
// tensor read outside it, an operand from elsewhere, ...) gives none, and
// so does a region that two even stripes cannot cover. Regions are
// ordered by subgraph, then by the operator writing Y, then from the
// largest (earliest first operator) down. A model that is already a
// stripe rewrite (Model.Stripes set) offers none.
func Candidates(m *graph.Model) []graph.StripeRegion {
	var out []graph.StripeRegion
	if m == nil || len(m.Stripes) > 0 {
		return nil
	}
	for s := range m.Subgraphs {
		g := analyze(m, graph.SubgraphIndex(s))
		ops := m.Subgraphs[s].Ops
		local := make([]bool, len(ops))
		for i := range ops {
			local[i] = kindOf(ops[i].Code) != notRowLocal && len(ops[i].Outputs) == 1 && ops[i].Outputs[0] >= 0
		}
		for yi := range ops {
			if !local[yi] {
				continue
			}
			y := ops[yi].Outputs[0]
			if t := g.tensor(y); len(t.Shape) != 4 || t.Shape[0] != 1 || t.Shape[1] < 2 || t.IsVariable {
				continue
			}
			// A: the row-local operators Y depends on through row-local
			// operators; xs: the tensors they read (the possible X).
			anc := map[int]bool{yi: true}
			stack := []int{yi}
			var xs []graph.TensorID
			seenX := map[graph.TensorID]bool{}
			for len(stack) > 0 {
				i := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, t := range ops[i].Inputs {
					if t == graph.NoTensor || g.constant(t) {
						continue
					}
					if !seenX[t] {
						seenX[t] = true
						xs = append(xs, t)
					}
					if p := g.producer[t]; p >= 0 && local[p] && !anc[p] {
						anc[p] = true
						stack = append(stack, p)
					}
				}
			}
			var found []graph.StripeRegion
			for _, x := range xs {
				// R: the operators of A on a path from X.
				inR := map[int]bool{}
				var rops []int
				frontier := []graph.TensorID{x}
				for len(frontier) > 0 {
					t := frontier[len(frontier)-1]
					frontier = frontier[:len(frontier)-1]
					for _, c := range g.consumers[t] {
						if anc[c] && !inR[c] {
							inR[c] = true
							rops = append(rops, c)
							frontier = append(frontier, ops[c].Outputs[0])
						}
					}
				}
				if !inR[yi] {
					continue
				}
				sort.Ints(rops)
				r := graph.StripeRegion{Subgraph: graph.SubgraphIndex(s), Input: x, Output: y, Ops: rops}
				reg, err := check(g, r)
				if err != nil {
					continue
				}
				ok := true
				for _, rows := range EvenRows(g.tensor(y).Shape[1], 2) {
					if _, err := reg.rows(span{rows[0], rows[1]}, nil, 0); err != nil {
						ok = false
					}
				}
				if ok {
					found = append(found, r)
				}
			}
			sort.SliceStable(found, func(a, b int) bool {
				if found[a].Ops[0] != found[b].Ops[0] {
					return found[a].Ops[0] < found[b].Ops[0]
				}
				return len(found[a].Ops) > len(found[b].Ops)
			})
			out = append(out, found...)
		}
	}
	return out
}
