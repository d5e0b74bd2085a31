package stripe

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// mb builds a small int8 model by hand, then normalises it through
// tflite.Encode and Load as a model read from a file would be.
type mb struct {
	m    graph.Model
	seed uint32
}

func newMB() *mb {
	return &mb{m: graph.Model{Version: tflite.SchemaVersion, Subgraphs: []graph.Subgraph{{Name: "main"}}, Buffers: []graph.Buffer{{}}}}
}

func (b *mb) sg() *graph.Subgraph { return &b.m.Subgraphs[0] }

func (b *mb) add(t graph.Tensor) graph.TensorID {
	size, err := graph.ByteSize(t.Type, t.Shape)
	if err != nil {
		panic(err)
	}
	t.Size = size
	b.sg().Tensors = append(b.sg().Tensors, t)
	return graph.TensorID(len(b.sg().Tensors) - 1)
}

// act adds an int8 activation with the given zero point.
func (b *mb) act(name string, shape []int32, zp int64) graph.TensorID {
	return b.add(graph.Tensor{Name: name, Type: graph.Int8, Shape: shape,
		Quantization: &graph.Quantization{Scale: []float32{0.05}, ZeroPoint: []int64{zp}}})
}

func (b *mb) data(p []byte) graph.BufferIndex {
	b.m.Buffers = append(b.m.Buffers, graph.Buffer{Data: p})
	return graph.BufferIndex(len(b.m.Buffers) - 1)
}

// rnd is a small deterministic byte stream for weights.
func (b *mb) rnd() byte {
	b.seed = b.seed*1664525 + 1013904223
	return byte(b.seed >> 24)
}

// weights adds an int8 filter of the given shape with pseudo-random data.
func (b *mb) weights(name string, shape []int32) graph.TensorID {
	n := int32(1)
	for _, d := range shape {
		n *= d
	}
	p := make([]byte, n)
	for i := range p {
		p[i] = b.rnd()
	}
	return b.add(graph.Tensor{Name: name, Type: graph.Int8, Shape: shape, Buffer: b.data(p),
		Quantization: &graph.Quantization{Scale: []float32{0.02}, ZeroPoint: []int64{0}}})
}

// bias adds an int32 bias of n channels.
func (b *mb) bias(name string, n int32) graph.TensorID {
	p := make([]byte, 4*n)
	for i := int32(0); i < n; i++ {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(int32(b.rnd())-128)*7)
	}
	return b.add(graph.Tensor{Name: name, Type: graph.Int32, Shape: []int32{n}, Buffer: b.data(p),
		Quantization: &graph.Quantization{Scale: []float32{0.001}, ZeroPoint: []int64{0}}})
}

func (b *mb) int32s(name string, shape []int32, v ...int32) graph.TensorID {
	p := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(x))
	}
	return b.add(graph.Tensor{Name: name, Type: graph.Int32, Shape: shape, Buffer: b.data(p)})
}

func (b *mb) op(code graph.Opcode, w *graph.Window, in []graph.TensorID, out graph.TensorID) {
	b.sg().Ops = append(b.sg().Ops, graph.Op{Code: code, Version: 1, Inputs: in, Outputs: []graph.TensorID{out}, Window: w})
}

// conv adds a CONV_2D (depthwise when dw) from in to a new tensor.
func (b *mb) conv(name string, in graph.TensorID, out []int32, kh, kw int32, w graph.Window, dw bool) graph.TensorID {
	cin := b.sg().Tensors[in].Shape[3]
	cout := out[3]
	o := b.act(name, out, 5)
	code := graph.Conv2D
	fs := []int32{cout, kh, kw, cin}
	if dw {
		code, fs = graph.DepthwiseConv2D, []int32{1, kh, kw, cout}
		w.DepthMultiplier = cout / cin
	}
	w.DilationH, w.DilationW = max(w.DilationH, 1), max(w.DilationW, 1)
	f := b.weights(name+"/w", fs)
	bi := b.bias(name+"/b", cout)
	b.op(code, &w, []graph.TensorID{in, f, bi}, o)
	return o
}

// model finishes the model with its inputs and outputs and returns it as
// Load reads it back.
func (b *mb) model(t *testing.T, in, out []graph.TensorID) *graph.Model {
	t.Helper()
	b.sg().Inputs, b.sg().Outputs = in, out
	p, err := tflite.Encode(&b.m, tflite.EncodeOptions{})
	require.NoError(t, err)
	m, err := tflite.Load(p)
	require.NoError(t, err)
	return m
}

func same(p graph.Padding, sh, sw int32) graph.Window {
	return graph.Window{Padding: p, StrideH: sh, StrideW: sw}
}
