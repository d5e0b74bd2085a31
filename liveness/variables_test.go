package liveness_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// handlesModel has one VAR_HANDLE per name, in order (handle i is tensor
// i), and through each handle i a READ_VARIABLE of a value of 4·(i+1)
// bytes, so a variable's size says which handles read it.
func handlesModel(names ...graph.ResourceName) *graph.Model {
	sg := graph.Subgraph{Inputs: ids(), Outputs: ids()}
	for i := range names {
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "h", Type: graph.Resource, Shape: []int32{}})
		r := names[i]
		vh := op(graph.VarHandle, ids(), ids(i))
		vh.Resource = &r
		sg.Ops = append(sg.Ops, vh)
	}
	for i := range names {
		sg.Tensors = append(sg.Tensors, f32("v", int32(i+1)))
		sg.Ops = append(sg.Ops, op(graph.ReadVariable, ids(i), ids(len(names)+i)))
		sg.Outputs = append(sg.Outputs, graph.TensorID(len(names)+i))
	}
	return &graph.Model{Subgraphs: []graph.Subgraph{sg}}
}

// TestVariableIdentity checks TFLM's rule as liveness.Variable states it:
// a handle without a container refers to every variable of its shared_name
// that a handle with a container names (TFLM 90b983c,
// micro_resource_variable.cc, FindId); and liveness.HandleNames names the
// same variables for each handle.
func TestVariableIdentity(t *testing.T) {
	in := func(c, n string) graph.ResourceName {
		return graph.ResourceName{Container: c, SharedName: n, HasContainer: true}
	}
	bare := func(n string) graph.ResourceName { return graph.ResourceName{SharedName: n} }
	type variable struct {
		name    graph.ResourceName
		size    int64
		handles []int
	}
	tests := []struct {
		name    string
		handles []graph.ResourceName
		want    []variable
	}{
		{"with and without a container: one variable", []graph.ResourceName{in("c", "x"), bare("x")},
			[]variable{{in("c", "x"), 8, []int{0, 1}}}},
		{"without a container first", []graph.ResourceName{bare("x"), in("c", "x")},
			[]variable{{in("c", "x"), 8, []int{0, 1}}}},
		{"container \"\" is a container", []graph.ResourceName{in("", "x"), bare("x")},
			[]variable{{in("", "x"), 8, []int{0, 1}}}},
		{"two containers: two variables, the handle without one refers to both", []graph.ResourceName{in("c", "x"), in("d", "x"), bare("x")},
			[]variable{{in("c", "x"), 12, []int{0, 2}}, {in("d", "x"), 12, []int{1, 2}}}},
		{"no container anywhere: one variable", []graph.ResourceName{bare("x"), bare("x")},
			[]variable{{bare("x"), 8, []int{0, 1}}}},
		{"other shared_names are other variables", []graph.ResourceName{in("c", "x"), bare("y")},
			[]variable{{in("c", "x"), 4, []int{0}}, {bare("y"), 8, []int{1}}}},
		{"unnamed handles name their own", []graph.ResourceName{{}, {}},
			[]variable{{bare("#0:0"), 4, []int{0}}, {bare("#0:1"), 8, []int{1}}}},
		{"an unnamed handle refers to the variables named \"\" in a container", []graph.ResourceName{in("c", ""), {}},
			[]variable{{in("c", ""), 8, []int{0, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := handlesModel(tt.handles...)
			lt, err := liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			// HandleNames says the same per handle.
			names := liveness.HandleNames(m)
			for i := range tt.handles {
				var want []graph.ResourceName
				for _, v := range tt.want {
					if slices.Contains(v.handles, i) {
						want = append(want, v.name)
					}
				}
				assert.Equal(t, want, names[graph.TensorRef{Tensor: graph.TensorID(i)}], "HandleNames of handle %d", i)
			}
			var got []variable
			for _, v := range lt.Variables {
				g := variable{name: v.Name, size: v.Size}
				for _, h := range v.Handles {
					g.handles = append(g.handles, int(h.Tensor))
				}
				got = append(got, g)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
