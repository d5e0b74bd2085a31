package traffic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/traffic"
)

// f32 returns a float32 tensor of n elements (4n bytes).
func f32(name string, n int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{n}, Size: int64(n) * 4}
}

func op(code graph.Opcode, in, out []graph.TensorID, called ...graph.SubgraphIndex) graph.Op {
	return graph.Op{Code: code, CodeName: "OP", Inputs: in, Outputs: out, Called: called}
}

func ids(v ...int) []graph.TensorID {
	out := make([]graph.TensorID, len(v))
	for i, x := range v {
		out[i] = graph.TensorID(x)
	}
	return out
}

func ref(s, t int) graph.TensorRef {
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(s), Tensor: graph.TensorID(t)}
}

// constant returns a float32 constant of n elements over buffer buf.
func constant(name string, n int32, buf graph.BufferIndex) graph.Tensor {
	c := f32(name, n)
	c.Buffer = buf
	return c
}

// chain: in(16 B) -> op0 -> a(40 B); op1(a, w 8 B) -> b(12 B);
// op2(b, w) -> out(4 B), an omitted optional input beside.
func chain() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 8)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{f32("in", 4), f32("a", 10), f32("b", 3), f32("out", 1), constant("w", 2, 1)},
			Inputs:  ids(0), Outputs: ids(3),
			Ops: []graph.Op{op(1, ids(0), ids(1)), op(1, ids(1, 4), ids(2)), op(1, ids(2, 4, -1), ids(3))},
		}},
	}
}

// reshapeModel: in(16 B) -> op0 -> a(16 B) -> RESHAPE(a, shape 4 B) ->
// r(16 B) -> op2 -> out(8 B).
func reshapeModel() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 4)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{f32("in", 4), f32("a", 4), f32("r", 4), f32("out", 2), constant("shape", 1, 1)},
			Inputs:  ids(0), Outputs: ids(3),
			Ops: []graph.Op{op(1, ids(0), ids(1)), op(graph.Reshape, ids(1, 4), ids(2)), op(1, ids(2), ids(3))},
		}},
	}
}

// whileModel: main runs WHILE(cond=1, body=2) twice on 4-byte values; the
// body's three operators and the condition's one each run once per WHILE.
func whileModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{f32("in", 1), f32("mid", 1), f32("out", 1)},
			Inputs:  ids(0), Outputs: ids(2),
			Ops: []graph.Op{op(graph.While, ids(0), ids(1), 1, 2), op(graph.While, ids(1), ids(2), 1, 2)},
		},
		{
			Tensors: []graph.Tensor{f32("c_in", 1), {Name: "c_out", Type: graph.Bool, Shape: []int32{1}, Size: 1}},
			Inputs:  ids(0), Outputs: ids(1),
			Ops: []graph.Op{op(1, ids(0), ids(1))},
		},
		{
			Tensors: []graph.Tensor{f32("b_in", 1), f32("t1", 2), f32("b_out", 1)},
			Inputs:  ids(0), Outputs: ids(2),
			Ops: []graph.Op{op(1, ids(0), ids(1)), op(1, ids(1), ids(2))},
		},
	}}
}

// callOnceModel: main runs CALL_ONCE(1), which writes a 12-byte state
// from a 20-byte constant, then reads the state once.
func callOnceModel() *graph.Model {
	state := f32("state", 3)
	state.IsVariable = true
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 20)}},
		Subgraphs: []graph.Subgraph{
			{
				Tensors: []graph.Tensor{f32("in", 2), f32("out", 2), state},
				Inputs:  ids(0), Outputs: ids(1),
				Ops: []graph.Op{op(graph.CallOnce, nil, nil, 1), op(1, ids(0, 2), ids(1))},
			},
			{
				Tensors: []graph.Tensor{constant("init", 5, 1), state},
				Ops:     []graph.Op{op(1, ids(0), ids(1))},
			},
		},
	}
}

// variableModel: VAR_HANDLE "v" -> h; READ_VARIABLE(h) -> x (8 B);
// op(x) -> y (8 B); ASSIGN_VARIABLE(h, y); READ_VARIABLE(h) -> z (8 B).
func variableModel() *graph.Model {
	vh := op(graph.VarHandle, nil, ids(0))
	vh.Resource = &graph.ResourceName{SharedName: "v", HasContainer: true}
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Name: "h", Type: graph.Resource, Shape: []int32{}}, f32("x", 2), f32("y", 2), f32("z", 2)},
		Outputs: ids(3),
		Ops: []graph.Op{vh, op(graph.ReadVariable, ids(0), ids(1)), op(1, ids(1), ids(2)),
			op(graph.AssignVariable, ids(0, 2), nil), op(graph.ReadVariable, ids(0), ids(3))},
	}}}
}

func TestEstimate(t *testing.T) {
	tests := []struct {
		name  string
		model *graph.Model
		opts  liveness.Options
		want  map[graph.TensorRef]traffic.Bytes
		once  map[graph.TensorRef]traffic.Bytes
		vars  []traffic.Bytes
	}{
		{name: "each operator reads its inputs and writes its outputs once; a constant read twice counts twice",
			model: chain(),
			want: map[graph.TensorRef]traffic.Bytes{
				ref(0, 0): {Read: 16}, ref(0, 1): {Read: 40, Written: 40}, ref(0, 2): {Read: 12, Written: 12},
				ref(0, 3): {Written: 4}, ref(0, 4): {Read: 16},
			}},
		{name: "an aliased RESHAPE moves none of its data's bytes, and reads its shape", model: reshapeModel(),
			want: map[graph.TensorRef]traffic.Bytes{
				ref(0, 0): {Read: 16}, ref(0, 1): {Written: 16}, ref(0, 2): {Read: 16}, ref(0, 3): {Written: 8}, ref(0, 4): {Read: 4},
			}},
		{name: "an unaliased RESHAPE copies", model: reshapeModel(), opts: liveness.Options{NoAlias: true},
			want: map[graph.TensorRef]traffic.Bytes{
				ref(0, 0): {Read: 16}, ref(0, 1): {Read: 16, Written: 16}, ref(0, 2): {Read: 16, Written: 16}, ref(0, 3): {Written: 8}, ref(0, 4): {Read: 4},
			}},
		{name: "a WHILE's subgraphs count once per run of the WHILE", model: whileModel(),
			want: map[graph.TensorRef]traffic.Bytes{
				ref(0, 0): {Read: 4}, ref(0, 1): {Read: 4, Written: 4}, ref(0, 2): {Written: 4},
				ref(1, 0): {Read: 8}, ref(1, 1): {Written: 2},
				ref(2, 0): {Read: 8}, ref(2, 1): {Read: 16, Written: 16}, ref(2, 2): {Written: 8},
			}},
		{name: "a CALL_ONCE's subgraph counts on the first inference only", model: callOnceModel(),
			want: map[graph.TensorRef]traffic.Bytes{ref(0, 0): {Read: 8}, ref(0, 2): {Read: 12}, ref(0, 1): {Written: 8}},
			once: map[graph.TensorRef]traffic.Bytes{ref(1, 0): {Read: 20}, ref(1, 1): {Written: 12}}},
		{name: "resource variables: read by READ_VARIABLE, written by ASSIGN_VARIABLE", model: variableModel(),
			want: map[graph.TensorRef]traffic.Bytes{
				ref(0, 1): {Read: 8, Written: 8}, ref(0, 2): {Read: 8, Written: 8}, ref(0, 3): {Written: 8},
			},
			vars: []traffic.Bytes{{Read: 16, Written: 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(tt.model, tt.opts)
			require.NoError(t, err)
			tr := traffic.Estimate(tt.model, lt)
			for _, lt := range lt.Tensors {
				assert.Equal(t, tt.want[lt.Ref], tr.Tensor(lt.Ref), "tensor %v per inference", lt.Ref)
				assert.Equal(t, tt.once[lt.Ref], tr.TensorOnce(lt.Ref), "tensor %v on the first inference", lt.Ref)
			}
			for i := range lt.Variables {
				assert.Equal(t, tt.vars[i], tr.Variable(i), "variable %d", i)
			}
			assert.Equal(t, len(tt.vars), len(lt.Variables))
		})
	}
}

// i8 returns an INT8 tensor of the shape; i32 an INT32 one.
func i8(name string, shape ...int32) graph.Tensor  { return typed(name, graph.Int8, 1, shape) }
func i32(name string, shape ...int32) graph.Tensor { return typed(name, graph.Int32, 4, shape) }

func typed(name string, ty graph.ElementType, elem int64, shape []int32) graph.Tensor {
	n := elem
	for _, d := range shape {
		n *= int64(d)
	}
	return graph.Tensor{Name: name, Type: ty, Shape: shape, Size: n}
}

// weighted returns a model of one operator code reading tensors in
// (0), filter (1) and bias (2), the last two constants, and writing out
// (3), with window w.
func weighted(code graph.Opcode, w *graph.Window, in, filter, bias, out graph.Tensor) *graph.Model {
	filter.Buffer, bias.Buffer = 1, 2
	o := op(code, ids(0, 1, 2), ids(3))
	o.Window = w
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, filter.Size)}, {Data: make([]byte, bias.Size)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{in, filter, bias, out},
			Inputs:  ids(0), Outputs: ids(3),
			Ops: []graph.Op{o},
		}},
	}
}

// TestEstimateRereads checks the operators whose kernels read an operand
// more than once per run, each figure worked out by hand from the loops
// of TFLM's reference kernels.
func TestEstimateRereads(t *testing.T) {
	valid1 := &graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	same2 := &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1}
	dilated := &graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 2, DilationH: 2, DepthMultiplier: 2}
	tests := []struct {
		name                  string
		model                 *graph.Model
		in, filter, bias, out traffic.Bytes
	}{
		{name: "CONV_2D VALID, 2 batches: 2x3x3 pixels each read the 24-byte filter and the 12-byte bias, and a 2x2x2 window of the input",
			// 18 pixels: filter 18*24, bias 18*12, input 18*8.
			model: weighted(graph.Conv2D, valid1, i8("in", 2, 4, 4, 2), i8("w", 3, 2, 2, 2), i32("b", 3), i8("out", 2, 3, 3, 3)),
			in:    traffic.Bytes{Read: 144}, filter: traffic.Bytes{Read: 432}, bias: traffic.Bytes{Read: 216}, out: traffic.Bytes{Written: 54}},
		{name: "CONV_2D SAME stride 2 over 5x5: the taps in the padding are not read",
			// Padding 1 before; output rows read 2, 3, 2 of the 3 filter
			// rows inside the image, columns alike: 7*7 = 49 taps, each one
			// byte of filter and one of input; 9 pixels read the bias.
			model: weighted(graph.Conv2D, same2, i8("in", 1, 5, 5, 1), i8("w", 1, 3, 3, 1), i32("b", 1), i8("out", 1, 3, 3, 1)),
			in:    traffic.Bytes{Read: 49}, filter: traffic.Bytes{Read: 49}, bias: traffic.Bytes{Read: 36}, out: traffic.Bytes{Written: 9}},
		{name: "CONV_2D SAME 3x3 over 2x2 (fewer outputs than taps): each pixel reads 2x2 taps",
			// Padding 1 before: each output row reads 2 of the 3 filter
			// rows, columns alike: 4 pixels of 4 taps.
			model: weighted(graph.Conv2D, &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1},
				i8("in", 1, 2, 2, 1), i8("w", 1, 3, 3, 1), i32("b", 1), i8("out", 1, 2, 2, 1)),
			in: traffic.Bytes{Read: 16}, filter: traffic.Bytes{Read: 16}, bias: traffic.Bytes{Read: 16}, out: traffic.Bytes{Written: 4}},
		{name: "DEPTHWISE_CONV_2D dilation 2, depth multiplier 2: 3x3 pixels each read the filter, the bias and a 2x2x2 window",
			// 5 + 1 - (2-1)*2 - 1 = 3 output rows and columns: 9 pixels;
			// filter 9*16, bias 9*16, input 9*4 taps*2 channels.
			model: weighted(graph.DepthwiseConv2D, dilated, i8("in", 1, 5, 5, 2), i8("w", 1, 2, 2, 4), i32("b", 4), i8("out", 1, 3, 3, 4)),
			in:    traffic.Bytes{Read: 72}, filter: traffic.Bytes{Read: 144}, bias: traffic.Bytes{Read: 144}, out: traffic.Bytes{Written: 36}},
		{name: "FULLY_CONNECTED reads its filter and bias once per batch row, its input once",
			model: weighted(9, nil, i8("in", 3, 8), i8("w", 4, 8), i32("b", 4), i8("out", 3, 4)),
			in:    traffic.Bytes{Read: 24}, filter: traffic.Bytes{Read: 96}, bias: traffic.Bytes{Read: 48}, out: traffic.Bytes{Written: 12}},
		{name: "a CONV_2D whose output is not the size TFLM computes counts each operand once",
			model: weighted(graph.Conv2D, valid1, i8("in", 1, 4, 4, 2), i8("w", 3, 2, 2, 2), i32("b", 3), i8("out", 1, 2, 2, 3)),
			in:    traffic.Bytes{Read: 32}, filter: traffic.Bytes{Read: 24}, bias: traffic.Bytes{Read: 12}, out: traffic.Bytes{Written: 12}},
		{name: "a CONV_2D without options counts each operand once",
			model: weighted(graph.Conv2D, nil, i8("in", 1, 4, 4, 2), i8("w", 3, 2, 2, 2), i32("b", 3), i8("out", 1, 3, 3, 3)),
			in:    traffic.Bytes{Read: 32}, filter: traffic.Bytes{Read: 24}, bias: traffic.Bytes{Read: 12}, out: traffic.Bytes{Written: 27}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(tt.model, liveness.Options{})
			require.NoError(t, err)
			tr := traffic.Estimate(tt.model, lt)
			for i, want := range []traffic.Bytes{tt.in, tt.filter, tt.bias, tt.out} {
				assert.Equal(t, want, tr.Tensor(ref(0, i)), "tensor %d", i)
			}
		})
	}
}
