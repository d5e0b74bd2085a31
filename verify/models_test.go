package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// The tiny models of the tests. Each has a hand-written plan in
// testdata/<name>.json that verifies clean.

// tensor builds a tensor with its Size computed from type and shape.
func tensor(name string, typ graph.ElementType, shape ...int32) graph.Tensor {
	size, err := graph.ByteSize(typ, shape)
	if err != nil {
		panic(err)
	}
	return graph.Tensor{Name: name, Type: typ, Shape: shape, Size: size}
}

func withBuffer(t graph.Tensor, b graph.BufferIndex) graph.Tensor {
	t.Buffer = b
	return t
}

func variable(t graph.Tensor) graph.Tensor {
	t.IsVariable = true
	return t
}

func op(name string, in, out []graph.TensorID, called ...graph.SubgraphIndex) graph.Op {
	return graph.Op{CodeName: name, Inputs: in, Outputs: out, Called: called}
}

func ids(ts ...graph.TensorID) []graph.TensorID { return ts }

// chainModel is three operators in a row:
//
//	step:    0      1     2     3
//	input  [===========]
//	a             [===========]
//	b                   [===========]
//	output                    [=====]
func chainModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{
			tensor("input", graph.Int8, 1, 16),
			tensor("a", graph.Int8, 1, 32),
			tensor("b", graph.Int8, 1, 32),
			tensor("output", graph.Int8, 1, 16),
		},
		Ops: []graph.Op{
			op("FULLY_CONNECTED", ids(0), ids(1)),
			op("RELU", ids(1), ids(2)),
			op("FULLY_CONNECTED", ids(2), ids(3)),
		},
		Inputs:  ids(0),
		Outputs: ids(3),
	}}}
}

// whileModel is a WHILE loop with cond and body subgraphs, scheduled as in
// the liveness package doc:
//
//	step:   0      1     2      3     4      5    6    7
//	main: inputs WHILE ............................... ABS
//	cond:              inputs LESS
//	body:                           inputs ADD  MUL
func whileModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Name: "main",
			Tensors: []graph.Tensor{
				tensor("x", graph.Int32, 4),
				tensor("y", graph.Int32, 4),
				tensor("out", graph.Int32, 4),
			},
			Ops: []graph.Op{
				op("WHILE", ids(0), ids(1), 1, 2),
				op("ABS", ids(1), ids(2)),
			},
			Inputs:  ids(0),
			Outputs: ids(2),
		},
		{
			Name: "cond",
			Tensors: []graph.Tensor{
				tensor("cond_x", graph.Int32, 4),
				tensor("cond_out", graph.Bool, 4),
			},
			Ops:     []graph.Op{op("LESS", ids(0, 0), ids(1))},
			Inputs:  ids(0),
			Outputs: ids(1),
		},
		{
			Name: "body",
			Tensors: []graph.Tensor{
				tensor("body_x", graph.Int32, 4),
				tensor("body_tmp", graph.Int32, 4),
				tensor("body_out", graph.Int32, 4),
			},
			Ops: []graph.Op{
				op("ADD", ids(0, 0), ids(1)),
				op("MUL", ids(1, 1), ids(2)),
			},
			Inputs:  ids(0),
			Outputs: ids(2),
		},
	}}
}

// variableModel reads two is_variable state tensors, which live in the
// persistent arena.
func variableModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{
			tensor("in", graph.Int8, 16),
			variable(tensor("state", graph.Int8, 16)),
			tensor("mid", graph.Int8, 16),
			variable(tensor("state2", graph.Int8, 32)),
			tensor("out", graph.Int8, 16),
		},
		Ops: []graph.Op{
			op("ADD", ids(0, 1), ids(2)),
			op("MUL", ids(2, 3), ids(4)),
		},
		Inputs:  ids(0),
		Outputs: ids(4),
	}}}
}

// constantModel has weights and a bias in model buffers; weights_again
// shares the weights' buffer and dead, which shares it too, is never used.
// The second operator leaves its optional bias out.
func constantModel() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 64)}, {Data: make([]byte, 16)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("in", graph.Int8, 1, 16),
				withBuffer(tensor("weights", graph.Int8, 4, 16), 1),
				withBuffer(tensor("bias", graph.Int32, 4), 2),
				tensor("mid", graph.Int8, 1, 16),
				withBuffer(tensor("weights_again", graph.Int8, 4, 16), 1),
				tensor("out", graph.Int8, 1, 16),
				withBuffer(tensor("dead", graph.Int8, 4, 16), 1),
			},
			Ops: []graph.Op{
				op("FULLY_CONNECTED", ids(0, 1, 2), ids(3)),
				op("FULLY_CONNECTED", ids(3, 4, graph.NoTensor), ids(5)),
			},
			Inputs:  ids(0),
			Outputs: ids(5),
		}},
	}
}

var models = map[string]func() *graph.Model{
	"chain":    chainModel,
	"while":    whileModel,
	"variable": variableModel,
	"constant": constantModel,
}

func mustModel(name string) *graph.Model {
	f, ok := models[name]
	if !ok {
		panic(fmt.Sprintf("no test model %q", name))
	}
	return f()
}
