package stripe

import "github.com/heliac/heliac/graph"

// OpMACs returns the multiply-accumulates of one operator of subgraph s
// (docs/stripes.md, "MACs"): CONV_2D outH*outW*Cout*kh*kw*Cin/groups (the
// filter's last dimension), DEPTHWISE_CONV_2D outH*outW*Cout*kh*kw, 0 for
// every other operator.
func OpMACs(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) int64 {
	if op.Code != graph.Conv2D && op.Code != graph.DepthwiseConv2D {
		return 0
	}
	if len(op.Inputs) < 2 || len(op.Outputs) < 1 || op.Inputs[1] < 0 || op.Outputs[0] < 0 {
		return 0
	}
	f := m.Tensor(s, op.Inputs[1]).Shape
	o := m.Tensor(s, op.Outputs[0]).Shape
	if len(f) != 4 || len(o) != 4 {
		return 0
	}
	n := int64(o[1]) * int64(o[2]) * int64(o[3]) * int64(f[1]) * int64(f[2])
	if op.Code == graph.Conv2D {
		n *= int64(f[3])
	}
	return n
}

// ModelMACs returns the multiply-accumulates of every operator of every
// subgraph of m, each counted once.
func ModelMACs(m *graph.Model) int64 {
	var n int64
	for s := range m.Subgraphs {
		for i := range m.Subgraphs[s].Ops {
			n += OpMACs(m, graph.SubgraphIndex(s), &m.Subgraphs[s].Ops[i])
		}
	}
	return n
}
