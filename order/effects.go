package order

import (
	"fmt"
	"maps"
	"slices"

	"github.com/heliac/heliac/graph"
)

// effects are what operators do beyond the tensors they list: the
// resource variables they touch and the subgraphs they run, each at any
// depth of calls.
type effects struct {
	// vars[s][op] lists, sorted, the variables operator op of subgraph s
	// touches: one of its inputs may carry a handle of the variable, or a
	// subgraph it runs holds an operator that touches it. When a handle
	// without a container exists, every VAR_HANDLE operator touches one
	// more, so that they keep their order (see findEffects).
	vars [][][]int
	// calls[s][op] lists, sorted, the subgraphs the operator runs, itself
	// or through its callees.
	calls [][][]int
}

// findEffects resolves resource variables by the rule liveness.Variable
// states (TFLM's, made static: a handle with a container names the
// variable of its (container, shared_name); one without is a handle of
// every such variable of its shared_name, or, when there is none, names
// the variable of its shared_name without a container, or its own when the
// shared_name is empty too) and follows handles through control flow more
// widely than verify does, so that every operator verify sees touching a
// variable touches it here too.
func findEffects(md *model) *effects {
	m := md.m
	carry := map[graph.TensorRef]map[int]bool{}
	names := map[graph.ResourceName]int{}
	contained := map[string][]int{} // shared_name → the variables with a container
	type handle struct {
		op     graph.OpRef
		ref    graph.TensorRef
		name   graph.ResourceName // "#subgraph:op" for an unnamed handle
		shared string             // the shared_name the model gives
	}
	var handles []handle
	for si, sg := range m.Subgraphs {
		for oi, op := range sg.Ops {
			if op.Code != graph.VarHandle || len(op.Outputs) == 0 || op.Outputs[0] == graph.NoTensor {
				continue
			}
			var name graph.ResourceName
			if op.Resource != nil {
				name = *op.Resource
			}
			shared := name.SharedName
			if name == (graph.ResourceName{}) {
				name.SharedName = fmt.Sprintf("#%d:%d", si, oi)
			}
			handles = append(handles, handle{graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)},
				graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[0]}, name, shared})
			if _, ok := names[name]; !ok && name.HasContainer {
				names[name] = len(names)
				contained[name.SharedName] = append(contained[name.SharedName], names[name])
			}
		}
	}
	for _, h := range handles {
		if !h.name.HasContainer && len(contained[h.shared]) > 0 {
			for _, v := range contained[h.shared] {
				addCarrier(carry, h.ref, v)
			}
			continue
		}
		v, ok := names[h.name]
		if !ok {
			v = len(names)
			names[h.name] = v
		}
		addCarrier(carry, h.ref, v)
	}
	// Which variable TFLM gives a handle without a container depends on
	// the order the VAR_HANDLE operators are prepared, which is the order
	// they run in; and once a handle without a container has made a
	// variable, TFLM crashes on any handle with a container prepared after
	// it (FindId compares containers with strcmp, the new variable's being
	// null). So when any handle lacks a container, every VAR_HANDLE keeps
	// the model's order, as if they all touched one more variable.
	prepared := map[graph.OpRef]int{}
	if slices.ContainsFunc(handles, func(h handle) bool { return !h.name.HasContainer }) {
		for _, h := range handles {
			prepared[h.op] = len(names)
		}
	}
	if len(names) > 0 {
		for passHandles(m, carry) {
		}
	}
	fx := &effects{vars: make([][][]int, len(m.Subgraphs)), calls: make([][][]int, len(m.Subgraphs))}
	subVars := make([]map[int]bool, len(m.Subgraphs))
	subCalls := make([]map[int]bool, len(m.Subgraphs))
	for _, s := range md.post { // callees first
		sg := &m.Subgraphs[s]
		fx.vars[s] = make([][]int, len(sg.Ops))
		fx.calls[s] = make([][]int, len(sg.Ops))
		subVars[s], subCalls[s] = map[int]bool{}, map[int]bool{}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			vars, calls := map[int]bool{}, map[int]bool{}
			if v, ok := prepared[graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}]; ok {
				vars[v] = true
			}
			for _, t := range op.Inputs {
				if t != graph.NoTensor {
					maps.Copy(vars, carry[graph.TensorRef{Subgraph: s, Tensor: t}])
				}
			}
			for _, c := range op.Called {
				calls[int(c)] = true
				maps.Copy(calls, subCalls[c])
				maps.Copy(vars, subVars[c])
			}
			fx.vars[s][oi] = slices.Sorted(maps.Keys(vars))
			fx.calls[s][oi] = slices.Sorted(maps.Keys(calls))
			maps.Copy(subVars[s], vars)
			maps.Copy(subCalls[s], calls)
		}
	}
	return fx
}

func addCarrier(carry map[graph.TensorRef]map[int]bool, r graph.TensorRef, v int) bool {
	if carry[r] == nil {
		carry[r] = map[int]bool{}
	}
	if carry[r][v] {
		return false
	}
	carry[r][v] = true
	return true
}

// passHandles passes handles once through every operator that calls
// subgraphs, and reports whether any tensor gained a variable. Operand i
// (i+1 for IF, whose operand 0 is the condition) reaches input i of each
// callee, output i of each callee reaches result i; for WHILE also output i
// of each callee reaches input i of each callee (the next iteration) and
// operand i reaches result i (no iteration at all).
func passHandles(m *graph.Model, carry map[graph.TensorRef]map[int]bool) bool {
	changed := false
	pass := func(from, to graph.TensorRef) {
		for v := range carry[from] {
			changed = addCarrier(carry, to, v) || changed
		}
	}
	for si, sg := range m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, op := range sg.Ops {
			if len(op.Called) == 0 {
				continue
			}
			skip := 0
			if op.Code == graph.If {
				skip = 1
			}
			for _, c := range op.Called {
				callee := &m.Subgraphs[c]
				for i := skip; i < len(op.Inputs); i++ {
					if op.Inputs[i] != graph.NoTensor && i-skip < len(callee.Inputs) && callee.Inputs[i-skip] != graph.NoTensor {
						pass(graph.TensorRef{Subgraph: s, Tensor: op.Inputs[i]}, graph.TensorRef{Subgraph: c, Tensor: callee.Inputs[i-skip]})
					}
				}
				for i, out := range callee.Outputs {
					if out == graph.NoTensor {
						continue
					}
					from := graph.TensorRef{Subgraph: c, Tensor: out}
					if i < len(op.Outputs) && op.Outputs[i] != graph.NoTensor {
						pass(from, graph.TensorRef{Subgraph: s, Tensor: op.Outputs[i]})
					}
					if op.Code != graph.While {
						continue
					}
					for _, d := range op.Called {
						if ins := m.Subgraphs[d].Inputs; i < len(ins) && ins[i] != graph.NoTensor {
							pass(from, graph.TensorRef{Subgraph: d, Tensor: ins[i]})
						}
					}
				}
			}
			if op.Code == graph.While {
				for i := 0; i < len(op.Inputs) && i < len(op.Outputs); i++ {
					if op.Inputs[i] != graph.NoTensor && op.Outputs[i] != graph.NoTensor {
						pass(graph.TensorRef{Subgraph: s, Tensor: op.Inputs[i]}, graph.TensorRef{Subgraph: s, Tensor: op.Outputs[i]})
					}
				}
			}
		}
	}
	return changed
}
