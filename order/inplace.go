package order

import "github.com/heliac/heliac/graph"

// bufPair is an in-place pair: the output may take the input's bytes when
// the input dies where the output starts. In model it holds tensor ids of
// buffer roots (the output is one); in problem, buffer indexes.
type bufPair struct{ in, out graph.TensorID }

// inPlacePairs asks hook for every operator's pairs and keeps, in order,
// those liveness could apply whatever the order (liveness/alias.go,
// inPlace): both operands scratch tensors of one size; the input no
// subgraph's input or output, unless overwrite lets it be a main input
// that is not an output; the output no subgraph's input or output, written
// once, not a view of another tensor; the operator runs once and calls no
// subgraph. Whether the input dies and the output starts at the operator
// depends on the order: the cost model and the timeline decide (applyPairs).
func (md *model) inPlacePairs(hook func(graph.OpRef) []Pair, overwrite bool) [][][]bufPair {
	if hook == nil {
		return nil
	}
	out := make([][][]bufPair, len(md.m.Subgraphs))
	for si, sg := range md.m.Subgraphs {
		out[si] = make([][]bufPair, len(sg.Ops))
		if md.runs[si] != 1 {
			continue
		}
		boundary, mainInput := map[graph.TensorID]bool{}, map[graph.TensorID]bool{}
		for _, t := range sg.Inputs {
			boundary[t] = true
			mainInput[t] = si == 0
		}
		for _, t := range sg.Outputs {
			boundary[t] = true
			mainInput[t] = false
		}
		writers := map[graph.TensorID]int{}
		for _, op := range sg.Ops {
			for _, t := range op.Outputs {
				writers[t]++
			}
		}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			if len(op.Called) > 0 {
				continue
			}
			for _, pr := range hook(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}) {
				if pr.Input < 0 || pr.Input >= len(op.Inputs) || pr.Output < 0 || pr.Output >= len(op.Outputs) {
					continue
				}
				in, o := op.Inputs[pr.Input], op.Outputs[pr.Output]
				if in == graph.NoTensor || o == graph.NoTensor {
					continue
				}
				root := md.buf[si][in]
				if root < 0 || md.buf[si][o] != o || root == o || sg.Tensors[in].Size != sg.Tensors[o].Size ||
					boundary[in] && !(overwrite && mainInput[in]) || boundary[o] || writers[o] != 1 {
					continue
				}
				out[si][oi] = append(out[si][oi], bufPair{root, o})
			}
		}
	}
	return out
}
