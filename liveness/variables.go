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
type Variable struct {
	Name graph.ResourceName
	// Size is the largest value assigned to or read from the variable.
	Size int64
	// Handles are the resource tensors that refer to the variable: the
	// outputs of its VAR_HANDLE operators and any subgraph inputs or outputs
	// they are passed through.
	Handles []graph.TensorRef
}

// findVariables matches VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE
// operators across all subgraphs. A handle reaches other subgraphs through
// the operands and results of WHILE and IF (CALL_ONCE passes none); such
// flows are followed until nothing changes.
func findVariables(m *graph.Model) ([]Variable, error) {
	var vars []Variable
	byName := map[graph.ResourceName]int{}
	handle := map[graph.TensorRef]int{}
	for si, sg := range m.Subgraphs {
		for oi, op := range sg.Ops {
			if op.Code != graph.VarHandle || len(op.Outputs) != 1 {
				continue
			}
			name := graph.ResourceName{}
			if op.Resource != nil {
				name = *op.Resource
			}
			if name == (graph.ResourceName{}) {
				// An unnamed handle is a variable of its own.
				name.SharedName = fmt.Sprintf("#%d:%d", si, oi)
			}
			v, ok := byName[name]
			if !ok {
				v = len(vars)
				byName[name] = v
				vars = append(vars, Variable{Name: name})
			}
			handle[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[0]}] = v
		}
	}
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
			v, ok := handle[h]
			if !ok {
				return nil, fmt.Errorf("liveness: subgraphs[%d].operators[%d]: %s uses resource tensor %v, which no VAR_HANDLE produces",
					si, oi, op.Name(), h)
			}
			if value != graph.NoTensor {
				vars[v].Size = max(vars[v].Size, m.Tensor(s, value).Size)
			}
		}
	}
	for h, v := range handle {
		vars[v].Handles = append(vars[v].Handles, h)
	}
	for i := range vars {
		sortRefs(vars[i].Handles)
	}
	return vars, nil
}

// propagateHandles follows resource tensors into and out of called
// subgraphs: WHILE passes operand i to input i of cond and body and output i
// of body back to result i; IF passes operand i+1 to input i of each branch.
func propagateHandles(m *graph.Model, handle map[graph.TensorRef]int) {
	for changed := true; changed; {
		changed = false
		link := func(from, to graph.TensorRef) {
			if v, ok := handle[from]; ok {
				if _, seen := handle[to]; !seen {
					handle[to] = v
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
