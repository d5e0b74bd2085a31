package order

import (
	"slices"

	"github.com/heliac/heliac/graph"
)

// deps returns, for every operator of subgraph s, the operators that must
// run before it (each of a smaller index: the model's order is always a
// legal one). The rules are the verifier's (verify/schedule.go), some made
// stricter so that every order they allow is one verify accepts:
//
//   - an operator that writes a tensor (output or intermediate) and one
//     that reads or writes it keep the model's order; every access to a
//     stateful (is_variable) tensor counts as a write;
//   - operators that touch one resource variable keep the model's order:
//     an operator touches a variable when one of its inputs may carry a
//     handle of it, or a subgraph it calls (at any depth) holds an
//     operator that does;
//   - when any VAR_HANDLE has no container, all VAR_HANDLE operators keep
//     the model's order: TFLM gives such a handle the variable of its
//     shared_name it created first, as it prepares them
//     (liveness.Variable), and crashes on a handle with a container
//     prepared after one without has made a variable;
//   - two operators that call one subgraph (at any depth) keep the model's
//     order, since the callee's tensors and state are shared between runs;
//   - a CALL_ONCE runs after every operator the model lists before it and
//     before every operator it lists after it.
//
// The relation is given by few edges: each access waits for the last write
// and each write for the reads since, rather than every pair.
func deps(md *model, fx *effects, s graph.SubgraphIndex) [][]int32 {
	sg := &md.m.Subgraphs[s]
	n := len(sg.Ops)
	preds := make([][]int32, n)
	add := func(a, b int) {
		if a != b {
			preds[b] = append(preds[b], int32(a))
		}
	}
	type access struct {
		lastWrite int
		reads     []int
	}
	acc := make([]access, len(sg.Tensors))
	for t := range acc {
		acc[t].lastWrite = -1
	}
	lastVar := map[int]int{}  // variable -> last operator touching it
	lastCall := map[int]int{} // subgraph -> last operator calling it
	barrier := -1             // the last CALL_ONCE so far
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		writes := map[graph.TensorID]bool{}
		for _, list := range [][]graph.TensorID{op.Outputs, op.Intermediates} {
			for _, t := range list {
				if t != graph.NoTensor {
					writes[t] = true
				}
			}
		}
		seen := map[graph.TensorID]bool{}
		for _, t := range operands(op) {
			if seen[t] {
				continue
			}
			seen[t] = true
			a := &acc[t]
			if a.lastWrite >= 0 {
				add(a.lastWrite, oi)
			}
			if writes[t] || sg.Tensors[t].IsVariable {
				for _, r := range a.reads {
					add(r, oi)
				}
				a.lastWrite, a.reads = oi, a.reads[:0]
			} else {
				a.reads = append(a.reads, oi)
			}
		}
		for _, v := range fx.vars[s][oi] {
			if p, ok := lastVar[v]; ok {
				add(p, oi)
			}
			lastVar[v] = oi
		}
		for _, c := range fx.calls[s][oi] {
			if p, ok := lastCall[c]; ok {
				add(p, oi)
			}
			lastCall[c] = oi
		}
		if barrier >= 0 {
			add(barrier, oi)
		}
		if op.Code == graph.CallOnce {
			for p := barrier + 1; p < oi; p++ {
				add(p, oi)
			}
			barrier = oi
		}
	}
	for i := range preds {
		slices.Sort(preds[i])
		preds[i] = slices.Compact(preds[i])
	}
	return preds
}
