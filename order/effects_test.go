package order

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestHandleOrder checks that VAR_HANDLE operators keep the model's order
// exactly when their shared_name has a handle without a container: TFLM
// gives that handle the variable it creates first, in the order it
// prepares the operators.
func TestHandleOrder(t *testing.T) {
	in := func(c string) graph.ResourceName {
		return graph.ResourceName{Container: c, SharedName: "x", HasContainer: true}
	}
	tests := []struct {
		name    string
		handles []graph.ResourceName
		ordered bool
	}{
		{"two containers", []graph.ResourceName{in("c"), in("d")}, false},
		{"two containers and a handle without one", []graph.ResourceName{in("c"), in("d"), {SharedName: "x"}}, true},
		{"without a container first", []graph.ResourceName{{SharedName: "x"}, in("c")}, true},
		// TFLM reads a shared_name left out as none, and "" as a name;
		// verify cannot tell them apart, so unnamed handles keep their
		// order too.
		{"unnamed", []graph.ResourceName{{}, {}}, true},
		// Once a handle without a container has made a variable, TFLM
		// crashes on a handle with a container prepared after it, whatever
		// its shared_name (FindId's strcmp of a null container).
		{"with a container and without, of other shared_names", []graph.ResourceName{in("c"), {SharedName: "y"}, {Container: "d", SharedName: "z", HasContainer: true}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sg := graph.Subgraph{Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{}}
			for i := range tt.handles {
				sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "h", Type: graph.Resource, Shape: []int32{}})
				sg.Ops = append(sg.Ops, graph.Op{Code: graph.VarHandle, CodeName: "VAR_HANDLE", Inputs: []graph.TensorID{},
					Outputs: []graph.TensorID{graph.TensorID(i)}, Resource: &tt.handles[i]})
			}
			m := &graph.Model{Subgraphs: []graph.Subgraph{sg}}
			md, err := analyze(m, DefaultAlignment)
			require.NoError(t, err)
			preds := deps(md, findEffects(md), 0)
			for i := 1; i < len(preds); i++ {
				if tt.ordered {
					assert.Equal(t, []int32{int32(i - 1)}, preds[i], "VAR_HANDLE %d waits for the one before", i)
				} else {
					assert.Empty(t, preds[i], "VAR_HANDLE %d", i)
				}
			}
		})
	}
}
