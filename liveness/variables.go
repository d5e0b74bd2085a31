package liveness

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/heliac/heliac/graph"
)

// Variable is one resource variable: the state that VAR_HANDLE names by
// (container, shared_name), ASSIGN_VARIABLE writes and READ_VARIABLE reads.
// It needs one persistent buffer of Size bytes, zeroed at start-up, that
// survives between invocations. The handle tensors themselves take no
// arena bytes.
//
// Which variable a handle names is TFLM's rule, made static (TFLM 90b983c:
// kernels/var_handle.cc asks micro_resource_variable.cc's
// CreateIdIfNoneFound for an id when the handle is prepared, and FindId
// matches a handle without a container to the first variable created with
// its shared_name, in any container, and one with a container to that
// container's only). Which variable TFLM finds for a handle without a
// container thus depends on the order handles are prepared, and heliac
// reorders operators, so heliac's rule is never narrower than any such
// order gives:
//
//   - Handles with a container name one variable per (container,
//     shared_name); "" is a container like any other.
//   - A handle without a container is a handle of every one of those
//     variables with its shared_name: each access through it reads or
//     assigns any of them, so it keeps its order with all their accesses
//     and their sizes cover its values.
//   - Only when no handle with a container has its shared_name does a
//     handle without one name a variable of its own kind: one per
//     shared_name (container absent), or, when the shared_name is empty
//     too, one per handle ("#subgraph:op").
//
// order and verify apply the same rule, verify on its own.
type Variable struct {
	Name graph.ResourceName
	// Size is the largest value assigned to or read from the variable.
	Size int64
	// Handles are the resource tensors that refer to the variable: the
	// outputs of its VAR_HANDLE operators and any subgraph inputs or outputs
	// they are passed through. A handle without a container may refer to
	// several variables, and is listed by each.
	Handles []graph.TensorRef
}

// resolveHandles names the variables of the VAR_HANDLE operators of m, by
// the rule of Variable, in the order of the first VAR_HANDLE that refers
// to each, and returns for each handle tensor the indices of the variables
// it refers to.
func resolveHandles(m *graph.Model) ([]Variable, map[graph.TensorRef][]int) {
	// names returns the name of the variable a VAR_HANDLE operator names,
	// "#subgraph:op" when unnamed, and the shared_name the model gives.
	names := func(op *graph.Op, si, oi int) (graph.ResourceName, string) {
		var n graph.ResourceName
		if op.Resource != nil {
			n = *op.Resource
		}
		shared := n.SharedName
		if n == (graph.ResourceName{}) {
			n.SharedName = fmt.Sprintf("#%d:%d", si, oi)
		}
		return n, shared
	}
	isHandle := func(op *graph.Op) bool { return op.Code == graph.VarHandle && len(op.Outputs) == 1 }
	contained := map[string][]graph.ResourceName{} // shared_name → the names with a container, in model order
	for si, sg := range m.Subgraphs {
		for oi := range sg.Ops {
			if !isHandle(&sg.Ops[oi]) {
				continue
			}
			if n, shared := names(&sg.Ops[oi], si, oi); n.HasContainer && !slices.Contains(contained[shared], n) {
				contained[shared] = append(contained[shared], n)
			}
		}
	}
	var vars []Variable
	byName := map[graph.ResourceName]int{}
	handle := map[graph.TensorRef][]int{}
	for si, sg := range m.Subgraphs {
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			if !isHandle(op) {
				continue
			}
			n, shared := names(op, si, oi)
			refers := []graph.ResourceName{n}
			if c := contained[shared]; !n.HasContainer && len(c) > 0 {
				refers = c
			}
			h := graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[0]}
			for _, r := range refers {
				v, ok := byName[r]
				if !ok {
					v = len(vars)
					byName[r] = v
					vars = append(vars, Variable{Name: r})
				}
				handle[h] = addVar(handle[h], v)
			}
		}
	}
	return vars, handle
}

// HandleNames gives, for the output of each VAR_HANDLE operator of m, the
// names of the variables it refers to by Variable's rule: one name, or
// several for a handle
// without a container whose shared_name handles with a container also
// name. An operator without options names its own variable, called
// "#subgraph:op".
func HandleNames(m *graph.Model) map[graph.TensorRef][]graph.ResourceName {
	vars, handle := resolveHandles(m)
	out := make(map[graph.TensorRef][]graph.ResourceName, len(handle))
	for h, vs := range handle {
		for _, v := range vs {
			out[h] = append(out[h], vars[v].Name)
		}
	}
	return out
}

// addVar adds v to the set vs, kept as a slice.
func addVar(vs []int, v int) []int {
	if slices.Contains(vs, v) {
		return vs
	}
	return append(vs, v)
}

// findVariables matches VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE
// operators across all subgraphs. A handle reaches other subgraphs through
// the operands and results of WHILE and IF (CALL_ONCE passes none); such
// flows are followed until nothing changes.
func findVariables(m *graph.Model) ([]Variable, error) {
	vars, handle := resolveHandles(m)
	if len(vars) == 0 {
		return nil, nil
	}
	propagateHandles(m, handle)
	for si, sg := range m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for oi, op := range sg.Ops {
			var value graph.TensorID
			switch {
			case op.Code == graph.AssignVariable && len(op.Inputs) >= 2:
				value = op.Inputs[1]
			case op.Code == graph.ReadVariable && len(op.Inputs) >= 1 && len(op.Outputs) >= 1:
				value = op.Outputs[0]
			default:
				continue
			}
			h := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]}
			vs, ok := handle[h]
			if !ok {
				return nil, fmt.Errorf("liveness: subgraphs[%d].operators[%d]: %s uses resource tensor %v, which no VAR_HANDLE produces",
					si, oi, op.Name(), h)
			}
			if value != graph.NoTensor {
				for _, v := range vs {
					vars[v].Size = max(vars[v].Size, m.Tensor(s, value).Size)
				}
			}
		}
	}
	for h, vs := range handle {
		for _, v := range vs {
			vars[v].Handles = append(vars[v].Handles, h)
		}
	}
	for i := range vars {
		sortRefs(vars[i].Handles)
	}
	return vars, nil
}

// propagateHandles follows resource tensors into and out of called
// subgraphs: WHILE passes operand i to input i of cond and body and output i
// of body back to result i; IF passes operand i+1 to input i of each branch.
func propagateHandles(m *graph.Model, handle map[graph.TensorRef][]int) {
	for changed := true; changed; {
		changed = false
		link := func(from, to graph.TensorRef) {
			for _, v := range handle[from] {
				if !slices.Contains(handle[to], v) {
					handle[to] = append(handle[to], v)
					changed = true
				}
			}
		}
		for si, sg := range m.Subgraphs {
			s := graph.SubgraphIndex(si)
			for _, op := range sg.Ops {
				skip := 0
				if op.Code == graph.If {
					skip = 1
				}
				if op.Code != graph.While && op.Code != graph.If {
					continue
				}
				for _, c := range op.Called {
					callee := &m.Subgraphs[c]
					for i := skip; i < len(op.Inputs) && i-skip < len(callee.Inputs); i++ {
						if op.Inputs[i] != graph.NoTensor {
							link(graph.TensorRef{Subgraph: s, Tensor: op.Inputs[i]}, graph.TensorRef{Subgraph: c, Tensor: callee.Inputs[i-skip]})
						}
					}
					for i := 0; i < len(op.Outputs) && i < len(callee.Outputs); i++ {
						link(graph.TensorRef{Subgraph: c, Tensor: callee.Outputs[i]}, graph.TensorRef{Subgraph: s, Tensor: op.Outputs[i]})
					}
				}
			}
		}
	}
}

func sortRefs(r []graph.TensorRef) {
	slices.SortFunc(r, func(a, b graph.TensorRef) int {
		if c := cmp.Compare(a.Subgraph, b.Subgraph); c != 0 {
			return c
		}
		return cmp.Compare(a.Tensor, b.Tensor)
	})
}
