package randmodel

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// CallChain returns a small, acyclic but hostile model: subgraph i (for i
// below depth) runs subgraph i+1 with calls CALL_ONCE operators, and the
// last subgraph adds two tensors. A called subgraph runs again on every
// call, so the model runs the last subgraph calls^depth times: with calls 2
// and depth 20 a model of a few KB describes about two million operator
// runs. Main also has an input, an output and an ADD between them, so the
// model has scratch tensors to plan.
//
// Like Generate's, the model is built as tflite.Load would return it.
func CallChain(depth, calls int) *graph.Model {
	f32 := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, 4}, Size: 16}
	}
	ids := func(v ...graph.TensorID) []graph.TensorID { return append([]graph.TensorID{}, v...) }
	add := graph.Op{Code: 0, CodeName: "ADD", Version: 1, Inputs: ids(0, 0), Outputs: ids(1), Intermediates: ids()}
	m := &graph.Model{
		Version:     SchemaVersion,
		Description: fmt.Sprintf("heliac randmodel call chain %d deep, %d calls each", depth, calls),
		Buffers:     []graph.Buffer{{}},
	}
	for i := 0; i <= depth; i++ {
		sg := graph.Subgraph{Name: fmt.Sprintf("level%d", i), Tensors: []graph.Tensor{}, Ops: []graph.Op{},
			Inputs: ids(), Outputs: ids()}
		if i == 0 {
			sg.Name = "main"
			sg.Inputs, sg.Outputs = ids(0), ids(1)
		}
		if i == 0 || i == depth {
			sg.Tensors = []graph.Tensor{f32("x"), f32("y")}
			sg.Ops = append(sg.Ops, add)
		}
		for range calls {
			if i < depth {
				sg.Ops = append(sg.Ops, graph.Op{Code: graph.CallOnce, CodeName: "CALL_ONCE", Version: 1,
					Inputs: ids(), Outputs: ids(), Intermediates: ids(), Called: []graph.SubgraphIndex{graph.SubgraphIndex(i + 1)}})
			}
		}
		m.Subgraphs = append(m.Subgraphs, sg)
	}
	m.Signatures = []graph.Signature{{Key: "serving_default", Subgraph: 0,
		Inputs:  []graph.SignatureTensor{{Name: "x", Tensor: 0}},
		Outputs: []graph.SignatureTensor{{Name: "y", Tensor: 1}}}}
	withOptions(m)
	return m
}
