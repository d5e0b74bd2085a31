package emit

import (
	"bytes"
	"fmt"

	"github.com/heliac/heliac/graph"
)

// stripeInfo says which stripe of which region a tensor of a rewritten
// model belongs to (graph.StripeRegion).
type stripeInfo struct {
	region, stripe int
	output         graph.TensorRef
	rows           [2]int32
	k              int
}

// label is the tensor's stripe as the report shows it: "stripe 2 of 4 of
// 0:7 (name), rows 28–56".
func (s stripeInfo) label(m *graph.Model) string {
	return fmt.Sprintf("stripe %d of %d of %v (%s), rows %d–%d", s.stripe+1, s.k, s.output,
		escapeName(m.Subgraphs[s.output.Subgraph].Tensors[s.output.Tensor].Name), s.rows[0], s.rows[1])
}

// stripeTensors finds, for each region of a rewritten model, the tensors
// each stripe computes: the inputs of the CONCATENATION that writes the
// region's output, in stripe order, and every non-constant tensor they
// are computed from back to the region's input (slices, pads, the copies
// of the region's intermediates). Nil for a model without stripes.
func stripeTensors(m *graph.Model) map[graph.TensorRef]stripeInfo {
	if len(m.Stripes) == 0 {
		return nil
	}
	out := map[graph.TensorRef]stripeInfo{}
	for ri, r := range m.Stripes {
		if int(r.Subgraph) >= len(m.Subgraphs) {
			continue
		}
		sg := &m.Subgraphs[r.Subgraph]
		producer := map[graph.TensorID]*graph.Op{}
		var cat *graph.Op
		for i := range sg.Ops {
			op := &sg.Ops[i]
			for _, t := range op.Outputs {
				producer[t] = op
				if t == r.Output && op.CodeName == "CONCATENATION" && len(op.Inputs) == len(r.Rows) {
					cat = op
				}
			}
		}
		if cat == nil {
			continue
		}
		for j, y := range cat.Inputs {
			info := stripeInfo{region: ri, stripe: j, output: graph.TensorRef{Subgraph: r.Subgraph, Tensor: r.Output}, rows: r.Rows[j], k: r.K()}
			todo := []graph.TensorID{y}
			for len(todo) > 0 {
				t := todo[len(todo)-1]
				todo = todo[:len(todo)-1]
				ref := graph.TensorRef{Subgraph: r.Subgraph, Tensor: t}
				if _, seen := out[ref]; seen || t == r.Input || t < 0 || int(t) >= len(sg.Tensors) || m.HasData(&sg.Tensors[t]) {
					continue
				}
				out[ref] = info
				if op := producer[t]; op != nil {
					todo = append(todo, op.Inputs...)
				}
			}
		}
	}
	return out
}

// reportStripes writes what --patches auto chose (p; nil without it):
// TFLM's whole tensor_arena and heliac's arena before and after, or why
// it kept the model as given; then the legend line of a rewritten model's
// regions: input, output, k, rows and the MACs the stripes compute again.
func reportStripes(b *bytes.Buffer, m *graph.Model, p *Patches) {
	if p != nil {
		if len(p.Regions) > 0 {
			fmt.Fprintf(b, "<p class=\"patches\">--patches auto: %s</p>\n", esc(p.ArenaText()))
		} else {
			fmt.Fprintf(b, "<p class=\"patches\">%s</p>\n", esc(p.Text()))
		}
	}
	if len(m.Stripes) == 0 {
		return
	}
	name := func(s graph.SubgraphIndex, t graph.TensorID) string {
		return fmt.Sprintf("%d:%d (%s)", s, t, escapeName(m.Subgraphs[s].Tensors[t].Name))
	}
	fmt.Fprintf(b, "<p class=\"stripes\">Run stripe by stripe (--patches):</p>\n<ul>\n")
	for _, r := range m.Stripes {
		pct := 0.0
		if r.MACs > 0 {
			pct = 100 * float64(r.ExtraMACs) / float64(r.MACs)
		}
		var rows bytes.Buffer
		for j, rw := range r.Rows {
			if j > 0 {
				rows.WriteString(", ")
			}
			fmt.Fprintf(&rows, "%d–%d", rw[0], rw[1])
		}
		fmt.Fprintf(b, "<li>%s → %s: %d operators in %d stripes (rows %s, halo rows %s), %d extra MACs (%.1f %% of the region's %d)</li>\n",
			esc(name(r.Subgraph, r.Input)), esc(name(r.Subgraph, r.Output)), len(r.Ops), r.K(), rows.String(), haloWord(r), r.ExtraMACs, pct, r.MACs)
	}
	fmt.Fprintf(b, "</ul>\n")
}

// haloWord says how r's stripes get their halo rows, for the report.
func haloWord(r graph.StripeRegion) string {
	if r.Cached() {
		return "cached"
	}
	return "recomputed"
}
