package order

import "github.com/heliac/heliac/graph"

// copies joins buffers under exact-overlap copy contracts (Options.Copies)
// as liveness does (liveness/copies.go), on the terms that do not depend
// on the order, operators in model order: a slice's output joins its
// input's buffer on the view rule (both scratch, neither a subgraph's
// input or output, the output written once and its own buffer, every
// writer of the input's buffer before the slice, the block a multiple of
// the alignment from the input); then a concatenation's input, its own
// buffer of its own size, scratch, no subgraph's input or output, written
// once, its slot a multiple of the alignment, joins the output's buffer
// (the output its own buffer, written once, no subgraph's input or
// output).
func (md *model) copies(hook func(graph.OpRef) []Copy) {
	if hook == nil {
		return
	}
	m := md.m
	for si, sg := range m.Subgraphs {
		boundary := map[graph.TensorID]bool{}
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				boundary[t] = true
			}
		}
		writers, lastWrite := writes(&sg)
		buf := md.buf[si]
		merge := func(from, to graph.TensorID) {
			for t := range buf {
				if buf[t] == from {
					buf[t] = to
				}
			}
		}
		ok := func(t graph.TensorID) bool {
			return t != graph.NoTensor && t >= 0 && int(t) < len(buf) && buf[t] >= 0 && !boundary[t]
		}
		for _, slot := range []bool{false, true} {
			for oi := range sg.Ops {
				op := &sg.Ops[oi]
				for _, c := range hook(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}) {
					if c.Slot != slot || c.Input < 0 || c.Input >= len(op.Inputs) || c.Output < 0 || c.Output >= len(op.Outputs) ||
						c.Offset%max(md.align, 1) != 0 {
						continue
					}
					in, out := op.Inputs[c.Input], op.Outputs[c.Output]
					if in == out || !ok(in) || !ok(out) || writers[out] != 1 || buf[out] != out {
						continue
					}
					if !slot {
						r := buf[in]
						if w, seen := lastWrite[r]; r == out || (seen && w > oi) {
							continue
						}
						merge(out, r)
						continue
					}
					if buf[in] != in || writers[in] != 1 || md.runs[si] != 1 || len(op.Called) > 0 {
						continue
					}
					merge(in, out)
				}
			}
		}
	}
}
