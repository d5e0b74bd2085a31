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

// aliasModel reshapes and squeezes a, so that r and s may share a's bytes;
// ADD reads a again after both views. The RESHAPE's shape operand is empty
// and takes no bytes; the input has a dynamic batch dimension; unused, empty
// too, is never used.
//
//	step:  0      1    2        3       4    5
//	       inputs FC   RESHAPE  SQUEEZE ADD  FC
//	in     [========]
//	a             [=====================]
//	r                  [==========]
//	s                           [=======]
//	t                                   [=======]
//	out                                      [==]
func aliasModel() *graph.Model {
	in := tensor("in", graph.Int8, 1, 16)
	in.ShapeSignature = []int32{-1, 16}
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{
			in,
			tensor("a", graph.Int8, 1, 32),
			tensor("r", graph.Int8, 1, 1, 32),
			tensor("s", graph.Int8, 32),
			tensor("t", graph.Int8, 1, 32),
			tensor("out", graph.Int8, 1, 16),
			tensor("shape", graph.Int32, 0),
			tensor("unused", graph.Int8, 0),
		},
		Ops: []graph.Op{
			op("FULLY_CONNECTED", ids(0), ids(1)),
			withCode(op("RESHAPE", ids(1, 6), ids(2)), graph.Reshape),
			withCode(op("SQUEEZE", ids(2), ids(3)), graph.Squeeze),
			op("ADD", ids(3, 1), ids(4)),
			op("FULLY_CONNECTED", ids(4), ids(5)),
		},
		Inputs:  ids(0),
		Outputs: ids(5),
	}}}
}

func withCode(o graph.Op, code graph.Opcode) graph.Op {
	o.Code = code
	return o
}

func resource(name string) graph.Tensor { return tensor(name, graph.Resource) }

func varHandle(out graph.TensorID, container, shared string) graph.Op {
	o := withCode(op("VAR_HANDLE", nil, ids(out)), graph.VarHandle)
	o.Resource = &graph.ResourceName{Container: container, SharedName: shared}
	return o
}

// varHandleIn is varHandle with a container, perhaps "" (varHandle's has
// none).
func varHandleIn(out graph.TensorID, container, shared string) graph.Op {
	o := varHandle(out, container, shared)
	o.Resource.HasContainer = true
	return o
}

func readVariable(handle, value graph.TensorID) graph.Op {
	return withCode(op("READ_VARIABLE", ids(handle), ids(value)), graph.ReadVariable)
}

func assignVariable(handle, value graph.TensorID) graph.Op {
	return withCode(op("ASSIGN_VARIABLE", ids(handle, value), nil), graph.AssignVariable)
}

// resourceModel keeps two resource variables: "state", whose handle a WHILE
// loop carries through its cond and body and back out, and an IF passes to
// both branches; and one whose VAR_HANDLE names nothing, so it is "#0:1".
// The largest value of "state" is the 48 bytes the then branch assigns.
// acc is is_variable state in the persistent arena beside the variables;
// the string input takes no bytes.
//
//	subgraph 0 main:  VAR_HANDLE state → h; VAR_HANDLE → h2;
//	                  ASSIGN_VARIABLE(h2, x); WHILE(x, h) → (y, h_out);
//	                  READ_VARIABLE(h_out) → v; IF(flag, h_out); ADD(y, acc) → z
//	subgraph 1 cond:  (c_x, c_h) LESS(c_x, c_x) → c_out
//	subgraph 2 body:  (b_x, b_h) READ_VARIABLE(b_h) → b_v; ADD(b_x, b_x) → b_y;
//	                  ASSIGN_VARIABLE(b_h, b_v) → (b_y, b_h)
//	subgraph 3 then:  (t_h) FILL → t_z; ASSIGN_VARIABLE(t_h, t_z)
//	subgraph 4 else:  (e_h)
func resourceModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Name: "main",
			Tensors: []graph.Tensor{
				tensor("x", graph.Int32, 4),
				resource("h"),
				resource("h2"),
				tensor("v", graph.Int32, 8),
				resource("h_out"),
				tensor("y", graph.Int32, 4),
				tensor("flag", graph.Bool),
				tensor("name", graph.String),
				variable(tensor("acc", graph.Int32, 4)),
				tensor("z", graph.Int32, 4),
			},
			Ops: []graph.Op{
				varHandle(1, "", "state"),
				varHandle(2, "", ""),
				assignVariable(2, 0),
				withCode(op("WHILE", ids(0, 1), ids(5, 4), 1, 2), graph.While),
				readVariable(4, 3),
				withCode(op("IF", ids(6, 4), nil, 3, 4), graph.If),
				op("ADD", ids(5, 8), ids(9)),
			},
			Inputs:  ids(0, 6, 7),
			Outputs: ids(3, 9),
		},
		{
			Name:    "cond",
			Tensors: []graph.Tensor{tensor("c_x", graph.Int32, 4), resource("c_h"), tensor("c_out", graph.Bool)},
			Ops:     []graph.Op{op("LESS", ids(0, 0), ids(2))},
			Inputs:  ids(0, 1),
			Outputs: ids(2),
		},
		{
			Name: "body",
			Tensors: []graph.Tensor{
				tensor("b_x", graph.Int32, 4), resource("b_h"),
				tensor("b_v", graph.Int32, 8), tensor("b_y", graph.Int32, 4),
			},
			Ops: []graph.Op{
				readVariable(1, 2),
				op("ADD", ids(0, 0), ids(3)),
				assignVariable(1, 2),
			},
			Inputs:  ids(0, 1),
			Outputs: ids(3, 1),
		},
		{
			Name:    "then",
			Tensors: []graph.Tensor{resource("t_h"), tensor("t_z", graph.Int32, 12)},
			Ops:     []graph.Op{op("FILL", nil, ids(1)), assignVariable(0, 1)},
			Inputs:  ids(0),
		},
		{
			Name:    "else",
			Tensors: []graph.Tensor{resource("e_h")},
			Inputs:  ids(0),
		},
	}}
}

// banksModel runs on a platform of two writable banks, DTCM (96 bytes,
// 32-byte alignment) before SRAM (256 bytes), and read-only MRAM. Its plan,
// testdata/banks.json, puts scratch in DTCM by a class rule, where a
// spills to SRAM; stages the weights from MRAM into SRAM; keeps bias cold
// in MRAM by a name rule and pins out to SRAM by a tensor rule. state is
// in DTCM by default.
//
//	step:   0      1    2    3
//	        inputs FC   ADD  RELU
//	in      [=========]
//	a              [=======]
//	b                   [=======]
//	out                      [==]
func banksModel() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 32)}, {Data: make([]byte, 16)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("in", graph.Int8, 32),
				withBuffer(tensor("weights", graph.Int8, 32), 1),
				withBuffer(tensor("bias", graph.Int32, 4), 2),
				tensor("a", graph.Int8, 64),
				variable(tensor("state", graph.Int8, 16)),
				tensor("b", graph.Int8, 32),
				tensor("out", graph.Int8, 16),
			},
			Ops: []graph.Op{
				op("FULLY_CONNECTED", ids(0, 1, 2), ids(3)),
				op("ADD", ids(3, 4), ids(5)),
				op("RELU", ids(5), ids(6)),
			},
			Inputs:  ids(0),
			Outputs: ids(6),
		}},
	}
}

// inPlaceModel is chainModel whose RELU (TFLite code 19) writes b over a,
// as TFLM's reference RELU may (testdata/inplace.json):
//
//	step:    0      1     2     3
//	input  [===========]
//	a             [===========]
//	b (a's bytes)       [===========]
//	output                    [=====]
func inPlaceModel() *graph.Model {
	m := chainModel()
	m.Subgraphs[0].Ops[1].Code = 19
	return m
}

// padModel writes PAD's output over its input, which lies at the output's
// end, and QUANTIZE's (from FLOAT32 to INT8) at the start of its input
// (testdata/pad.json): a, b and c are one alias group rooted at a, one
// block of b's 144 bytes, b starting 80 bytes before a and c where b does.
// PAD pads a, [1, 2, 2, 4], by a row and a column after, so its input may
// start 16 to 80 bytes after its output; QUANTIZE's input 3 bytes before
// its output to where it starts.
//
//	step:    0      1    2    3        4
//	         inputs FC   PAD  QUANTIZE FC
//	in       [========]
//	a               [======]
//	b (over a)           [=======]
//	c (in b)                  [=======]
//	out                                [=]
func padModel() *graph.Model {
	pads := make([]byte, 32)
	for _, i := range []int{3, 5} { // pads [[0 0] [0 1] [0 1] [0 0]]
		pads[4*i] = 1
	}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: pads}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("in", graph.Float32, 1, 4),
				tensor("a", graph.Float32, 1, 2, 2, 4),
				withBuffer(tensor("paddings", graph.Int32, 4, 2), 1),
				tensor("b", graph.Float32, 1, 3, 3, 4),
				tensor("c", graph.Int8, 1, 3, 3, 4),
				tensor("out", graph.Int8, 1, 4),
			},
			Ops: []graph.Op{
				withCode(op("FULLY_CONNECTED", ids(0), ids(1)), 9),
				withCode(op("PAD", ids(1, 2), ids(3)), 34),
				withCode(op("QUANTIZE", ids(3), ids(4)), 114),
				withCode(op("FULLY_CONNECTED", ids(4), ids(5)), 9),
			},
			Inputs:  ids(0),
			Outputs: ids(5),
		}},
	}
}

var models = map[string]func() *graph.Model{
	"pad":      padModel,
	"inplace":  inPlaceModel,
	"banks":    banksModel,
	"chain":    chainModel,
	"while":    whileModel,
	"variable": variableModel,
	"constant": constantModel,
	"alias":    aliasModel,
	"resource": resourceModel,
}

func mustModel(name string) *graph.Model {
	f, ok := models[name]
	if !ok {
		panic(fmt.Sprintf("no test model %q", name))
	}
	return f()
}

func ref(s, t int) graph.TensorRef {
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(s), Tensor: graph.TensorID(t)}
}
