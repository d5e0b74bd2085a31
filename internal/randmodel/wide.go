package randmodel

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Builtin operator codes of the schema the models below use.
const (
	opAdd  graph.Opcode = 0
	opRelu graph.Opcode = 19
	opTanh graph.Opcode = 28
)

// f32Tensor returns a float32 tensor of shape [1, n].
func f32Tensor(name string, n int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, n}, Size: 4 * int64(n)}
}

// single returns a model of one subgraph, main, with tensors and ops, its
// first tensor the input and its last the output.
func single(desc string, tensors []graph.Tensor, ops []graph.Op) *graph.Model {
	last := graph.TensorID(len(tensors) - 1)
	return &graph.Model{
		Version:     SchemaVersion,
		Description: desc,
		Buffers:     []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{Name: "main", Tensors: tensors, Ops: ops,
			Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{last}}},
		Signatures: []graph.Signature{{Key: "serving_default", Subgraph: 0,
			Inputs:  []graph.SignatureTensor{{Name: "x", Tensor: 0}},
			Outputs: []graph.SignatureTensor{{Name: "y", Tensor: last}}}},
	}
}

// unaryOp returns an operator of one input and one output.
func unaryOp(code graph.Opcode, name string, in, out graph.TensorID) graph.Op {
	return graph.Op{Code: code, CodeName: name, Version: 1, Inputs: []graph.TensorID{in},
		Outputs: []graph.TensorID{out}, Intermediates: []graph.TensorID{}}
}

// WideFan returns a model whose input feeds width parallel TANH operators
// (width at least 2), whose results a chain of width-1 ADDs sums: a wide,
// shallow graph whose legal orders the order search cannot enumerate. Every
// tensor is float32 [1, 4]. Like Generate's, the model is built as
// tflite.Load would return it.
func WideFan(width int) *graph.Model {
	tensors := []graph.Tensor{f32Tensor("x", 4)}
	var ops []graph.Op
	for i := range width {
		tensors = append(tensors, f32Tensor(fmt.Sprintf("t%d", i), 4))
		ops = append(ops, unaryOp(opTanh, "TANH", 0, graph.TensorID(i+1)))
	}
	sum := graph.TensorID(1)
	for i := 1; i < width; i++ {
		tensors = append(tensors, f32Tensor(fmt.Sprintf("s%d", i), 4))
		out := graph.TensorID(len(tensors) - 1)
		ops = append(ops, graph.Op{Code: opAdd, CodeName: "ADD", Version: 1,
			Inputs: []graph.TensorID{sum, graph.TensorID(i + 1)}, Outputs: []graph.TensorID{out},
			Intermediates: []graph.TensorID{}})
		sum = out
	}
	return single(fmt.Sprintf("heliac randmodel fan of %d TANH summed by ADDs", width), tensors, ops)
}

// ReluChain returns a model of n RELU operators in a chain (n at least 1),
// each reading the last's result: every one may write in place over its
// input. Every tensor is float32 [1, elems].
func ReluChain(n int, elems int32) *graph.Model {
	tensors := []graph.Tensor{f32Tensor("x", elems)}
	ops := make([]graph.Op, 0, n)
	for i := range n {
		tensors = append(tensors, f32Tensor(fmt.Sprintf("r%d", i), elems))
		ops = append(ops, unaryOp(opRelu, "RELU", graph.TensorID(i), graph.TensorID(i+1)))
	}
	return single(fmt.Sprintf("heliac randmodel chain of %d RELU", n), tensors, ops)
}
