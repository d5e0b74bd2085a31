package tflite

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite/schema"
)

// encodeForms are the two buffer layouts Encode writes.
var encodeForms = []struct {
	name string
	opts EncodeOptions
}{
	{"inline", EncodeOptions{}},
	{"external", EncodeOptions{ExternalBuffers: true}},
}

func TestEncodeRoundTripTestdata(t *testing.T) {
	for _, in := range testModels(t) {
		t.Run(in.name, func(t *testing.T) {
			m, err := Load(in.data)
			require.NoError(t, err)
			for _, f := range encodeForms {
				t.Run(f.name, func(t *testing.T) { roundTrip(t, m, f.opts) })
			}
		})
	}
}

func TestEncodeRoundTripCorpus(t *testing.T) {
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			m, err := Load(data)
			require.NoError(t, err)
			for _, f := range encodeForms {
				t.Run(f.name, func(t *testing.T) { roundTrip(t, m, f.opts) })
			}
		})
	}
}

func TestEncodeHandBuilt(t *testing.T) {
	for _, f := range encodeForms {
		t.Run(f.name, func(t *testing.T) {
			m := handModel()
			data := roundTrip(t, m, f.opts)

			// operator_codes: one entry per (code, custom name, version)
			// in first-use order; the old int8 field caps at 127.
			type key struct {
				code    schema.BuiltinOperator
				dep     int8
				custom  string
				version int32
			}
			var got []key
			root := schema.GetRootAsModel(data, 0)
			var oc schema.OperatorCode
			for i := 0; i < root.OperatorCodesLength(); i++ {
				require.True(t, root.OperatorCodes(&oc, i))
				got = append(got, key{oc.BuiltinCode(), oc.DeprecatedBuiltinCode(), string(oc.CustomCode()), oc.Version()})
			}
			assert.Equal(t, []key{
				{9, 9, "", 1},        // FULLY_CONNECTED v1, used twice
				{32, 32, "MyOp", 1},  // CUSTOM
				{119, 119, "", 1},    // WHILE
				{118, 118, "", 1},    // IF
				{129, 127, "", 1},    // CALL_ONCE
				{142, 127, "", 1},    // VAR_HANDLE
				{206, 127, "", 1},    // STABLEHLO_COMPOSITE
				{9, 9, "", 2},        // FULLY_CONNECTED v2
				{0, 0, "", 0},        // ADD v0: a version that is not the default 1
				{150, 127, "", 1},    // GELU
				{32, 32, "Other", 1}, // CUSTOM, another name
				{67, 67, "", 1},      // TRANSPOSE_CONV, with its window
			}, got)
		})
	}
}

// Encode writes a VAR_HANDLE's container when HasContainer says so, even
// an empty one, and leaves it out otherwise.
func TestEncodeContainer(t *testing.T) {
	data, err := Encode(handModel(), EncodeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []varHandle{{"c", true, "state"}, {"", false, "state"}, {"", true, "state"}}, varHandles(t, data))
}

// varHandle is what the options of a VAR_HANDLE operator hold.
type varHandle struct {
	container      string
	containerGiven bool
	shared         string
}

// varHandles returns the options of the VAR_HANDLE operators of subgraph 0
// of data, in order.
func varHandles(t *testing.T, data []byte) []varHandle {
	t.Helper()
	root := schema.GetRootAsModel(data, 0)
	var sg schema.SubGraph
	require.True(t, root.Subgraphs(&sg, 0))
	var got []varHandle
	var o schema.Operator
	for i := 0; i < sg.OperatorsLength(); i++ {
		require.True(t, sg.Operators(&o, i))
		var tab flatbuffers.Table
		if o.BuiltinOptionsType() != schema.BuiltinOptionsVarHandleOptions || !o.BuiltinOptions(&tab) {
			continue
		}
		var v schema.VarHandleOptions
		v.Init(tab.Bytes, tab.Pos)
		got = append(got, varHandle{string(v.Container()), v.Container() != nil, string(v.SharedName())})
	}
	return got
}

// roundTrip encodes m, loads the result and checks that it equals m
// (with every non-empty buffer External in the external form), that the
// buffers use the form asked for, and that encoding the loaded model again
// gives the same bytes. It returns the encoded file.
func roundTrip(t *testing.T, m *graph.Model, opts EncodeOptions) []byte {
	t.Helper()
	data, err := Encode(m, opts)
	require.NoError(t, err)
	got, err := load(data[:len(data):len(data)])
	require.NoError(t, err)
	require.NoError(t, checkInvariants(got, len(data)))

	want := *m
	want.Buffers = append([]graph.Buffer(nil), m.Buffers...)
	// An operator without Options is written with the options its Window,
	// Called or Resource imply, which Load reads back as Options; encoding
	// the loaded model again (below) must give the same bytes.
	want.Subgraphs = append([]graph.Subgraph(nil), m.Subgraphs...)
	for si := range want.Subgraphs {
		if si >= len(got.Subgraphs) || len(want.Subgraphs[si].Ops) == 0 || len(got.Subgraphs[si].Ops) != len(want.Subgraphs[si].Ops) {
			continue
		}
		ops := append([]graph.Op(nil), want.Subgraphs[si].Ops...)
		for oi := range ops {
			if ops[oi].Options == nil {
				ops[oi].Options = got.Subgraphs[si].Ops[oi].Options
			}
			if ops[oi].Options2 == nil {
				ops[oi].Options2 = got.Subgraphs[si].Ops[oi].Options2
			}
		}
		want.Subgraphs[si].Ops = ops
	}
	if opts.ExternalBuffers {
		for i := range want.Buffers {
			want.Buffers[i].External = len(want.Buffers[i].Data) > 0
		}
	}
	assert.Equal(t, &want, got)
	checkBufferForm(t, data, &want)

	again, err := Encode(got, opts)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, again), "encoding the loaded model changed the bytes")
	return data
}

// checkBufferForm inspects the Buffer tables of data: an external buffer
// has no data vector and a 16-byte aligned offset > 1 at which its bytes
// lie; an inline one has no offset and a 16-byte aligned data vector.
func checkBufferForm(t *testing.T, data []byte, m *graph.Model) {
	t.Helper()
	root := schema.GetRootAsModel(data, 0)
	require.Equal(t, len(m.Buffers), root.BuffersLength())
	var b schema.Buffer
	for i, want := range m.Buffers {
		require.True(t, root.Buffers(&b, i))
		n := len(want.Data)
		switch {
		case n == 0:
			assert.Zero(t, b.DataLength(), "buffers[%d]", i)
			assert.Zero(t, b.Offset(), "buffers[%d]", i)
		case want.External:
			assert.Zero(t, b.DataLength(), "buffers[%d]: external data vector", i)
			off, size := b.Offset(), b.Size()
			require.Greater(t, off, uint64(1), "buffers[%d]", i)
			assert.Zero(t, off%16, "buffers[%d]: offset %d not 16-byte aligned", i, off)
			require.Equal(t, uint64(n), size, "buffers[%d]", i)
			require.LessOrEqual(t, off+size, uint64(len(data)))
			assert.True(t, bytes.Equal(want.Data, data[off:off+size]), "buffers[%d]: data at offset", i)
		default:
			assert.Zero(t, b.Offset(), "buffers[%d]: inline buffer with an offset", i)
			tab := b.Table()
			start := tab.Vector(flatbuffers.UOffsetT(tab.Offset(4)))
			assert.Zero(t, start%16, "buffers[%d]: data at %d not 16-byte aligned", i, start)
		}
	}
}

func TestEncodeDeterministic(t *testing.T) {
	for _, in := range testModels(t) {
		m, err := Load(in.data)
		require.NoError(t, err)
		for _, f := range encodeForms {
			a, err := Encode(m, f.opts)
			require.NoError(t, err)
			b, err := Encode(m, f.opts)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(a, b), "%s %s: two encodings differ", in.name, f.name)
		}
	}
}

// Per-buffer External survives default options, so a model loaded from
// an offset/size file is written back in that form.
func TestEncodeKeepsExternalBuffers(t *testing.T) {
	m := handModel()
	m.Buffers[1].External = true
	data := roundTrip(t, m, EncodeOptions{})
	var b schema.Buffer
	require.True(t, schema.GetRootAsModel(data, 0).Buffers(&b, 1))
	assert.Zero(t, b.DataLength())
	assert.Greater(t, b.Offset(), uint64(1))
	require.True(t, schema.GetRootAsModel(data, 0).Buffers(&b, 2))
	assert.NotZero(t, b.DataLength(), "buffers[2] is not external and stays inline")
}

// An external buffer whose offset+size runs past the end of the file, as
// in a truncated download of a large model, is reported with its index,
// offset and size rather than read short.
func TestEncodeExternalBuffersLoad(t *testing.T) {
	m, err := Load(model(t, "hello_world_int8"))
	require.NoError(t, err)
	data, err := Encode(m, EncodeOptions{ExternalBuffers: true})
	require.NoError(t, err)

	// The last non-empty buffer's data ends the file.
	last := len(m.Buffers) - 1
	for len(m.Buffers[last].Data) == 0 {
		last--
	}
	var b schema.Buffer
	require.True(t, schema.GetRootAsModel(data, 0).Buffers(&b, last))
	off, size := b.Offset(), b.Size()
	require.Equal(t, uint64(len(data)), off+size)

	cut := data[: len(data)-1 : len(data)-1]
	_, err = Load(cut)
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("tflite: buffers[%d]: data at offset %d size %d lies outside the file (size %d)", last, off, size, len(cut)), err.Error())

	// Cutting before the data leaves the flatbuffer whole but the
	// external data missing.
	cut = data[:off:off]
	_, err = Load(cut)
	assert.ErrorContains(t, err, "lies outside the file")
}

func TestEncodeInvalid(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(m *graph.Model)
		wantErr string
	}{
		{"no subgraphs", func(m *graph.Model) { m.Subgraphs = nil },
			"tflite: encode: subgraphs: model has no subgraphs"},
		{"tensor buffer out of range", func(m *graph.Model) { m.Subgraphs[0].Tensors[3].Buffer = 9 },
			"tflite: encode: subgraphs[0].tensors[3].buffer: index 9 out of range [0, 5)"},
		{"unknown tensor type", func(m *graph.Model) { m.Subgraphs[1].Tensors[0].Type = 100 },
			"tflite: encode: subgraphs[1].tensors[0].type: unknown tensor type 100"},
		{"negative dimension", func(m *graph.Model) { m.Subgraphs[0].Tensors[0].Shape[1] = -4 },
			"tflite: encode: subgraphs[0].tensors[0].shape: dimension 1 is -4"},
		{"subgraph input out of range", func(m *graph.Model) { m.Subgraphs[2].Inputs[0] = 1 },
			"tflite: encode: subgraphs[2].inputs[0]: tensor index 1 out of range [0, 1)"},
		{"subgraph output omitted", func(m *graph.Model) { m.Subgraphs[0].Outputs[0] = graph.NoTensor },
			"tflite: encode: subgraphs[0].outputs[0]: tensor index -1 out of range [0, 11)"},
		{"op input out of range", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Inputs[1] = 11 },
			"tflite: encode: subgraphs[0].operators[0].inputs[1]: tensor index 11 out of range [0, 11)"},
		{"op input below -1", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Inputs[2] = -2 },
			"tflite: encode: subgraphs[0].operators[0].inputs[2]: tensor index -2 out of range [0, 11)"},
		{"op output omitted", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Outputs[0] = graph.NoTensor },
			"tflite: encode: subgraphs[0].operators[0].outputs[0]: tensor index -1 out of range [0, 11)"},
		{"intermediate out of range", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Intermediates[0] = 50 },
			"tflite: encode: subgraphs[0].operators[0].intermediates[0]: tensor index 50 out of range [0, 11)"},
		{"negative opcode", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Code = -7 },
			"tflite: encode: subgraphs[0].operators[0].opcode: negative builtin operator code -7"},
		{"WHILE without body", func(m *graph.Model) { m.Subgraphs[0].Ops[2].Called = m.Subgraphs[0].Ops[2].Called[:1] },
			"tflite: encode: subgraphs[0].operators[2].called: WHILE calls 1 subgraphs, want 2"},
		{"plain op calls a subgraph", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Called = []graph.SubgraphIndex{1} },
			"tflite: encode: subgraphs[0].operators[0].called: FULLY_CONNECTED calls 1 subgraphs, want 0"},
		{"called subgraph out of range", func(m *graph.Model) { m.Subgraphs[0].Ops[4].Called[0] = 4 },
			"tflite: encode: subgraphs[0].operators[4].called[0]: subgraph 4 out of range [0, 4)"},
		{"call of the main subgraph", func(m *graph.Model) { m.Subgraphs[0].Ops[3].Called[1] = 0 },
			"tflite: encode: subgraphs[0].operators[3]: IF calls the main subgraph 0"},
		{"recursive call", func(m *graph.Model) {
			m.Subgraphs[3].Ops = []graph.Op{{Code: graph.CallOnce, CodeName: "CALL_ONCE", Version: 1, Called: []graph.SubgraphIndex{3}}}
		}, "tflite: encode: subgraphs[3].operators[0]: CALL_ONCE calls subgraph 3 recursively"},
		{"resource on a plain op", func(m *graph.Model) { m.Subgraphs[0].Ops[0].Resource = &graph.ResourceName{} },
			"tflite: encode: subgraphs[0].operators[0].resource: FULLY_CONNECTED has a resource name, which only VAR_HANDLE can hold"},
		{"metadata buffer out of range", func(m *graph.Model) { m.Metadata[0].Buffer = 5 },
			"tflite: encode: metadata[0].buffer: index 5 out of range [0, 5)"},
		{"signature subgraph out of range", func(m *graph.Model) { m.Signatures[1].Subgraph = -1 },
			"tflite: encode: signature_defs[1].subgraph_index: index -1 out of range [0, 4)"},
		{"signature tensor out of range", func(m *graph.Model) { m.Signatures[0].Outputs[0].Tensor = 11 },
			"tflite: encode: signature_defs[0].outputs[0].tensor_index: index 11 out of range [0, 11)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := handModel()
			tt.mutate(m)
			data, err := Encode(m, EncodeOptions{})
			assert.Nil(t, data)
			assert.EqualError(t, err, tt.wantErr)
		})
	}
	_, err := Encode(nil, EncodeOptions{})
	assert.EqualError(t, err, "tflite: encode: nil model")
}

// handModel returns a model, in the form Load returns, that uses every
// part of graph.Model Encode writes: control flow (WHILE, IF, CALL_ONCE,
// STABLEHLO_COMPOSITE), VAR_HANDLE, custom operators, an omitted optional
// input, intermediates, codes above 127, variable tensors, shape
// signatures, per-channel and custom quantization, STRING data, metadata
// and signatures.
func handModel() *graph.Model {
	ids := func(v ...graph.TensorID) []graph.TensorID { return append([]graph.TensorID{}, v...) }
	shape := func(v ...int32) []int32 { return append([]int32{}, v...) }
	op := func(code graph.Opcode, version int32, in, out []graph.TensorID) graph.Op {
		return graph.Op{
			Code: code, CodeName: schema.EnumNamesBuiltinOperator[schema.BuiltinOperator(code)],
			Version: version, Inputs: in, Outputs: out, Intermediates: ids(),
		}
	}
	fc := op(9, 1, ids(0, 1, graph.NoTensor), ids(3))
	fc.Intermediates = ids(8)
	custom := op(graph.Custom, 1, ids(3), ids(7))
	custom.CustomName = "MyOp"
	while := op(graph.While, 1, ids(3), ids(3))
	while.Called = []graph.SubgraphIndex{1, 2}
	ifOp := op(graph.If, 1, ids(4, 3), ids(3))
	ifOp.Called = []graph.SubgraphIndex{2, 2}
	callOnce := op(graph.CallOnce, 1, ids(), ids())
	callOnce.Called = []graph.SubgraphIndex{3}
	varHandle := op(graph.VarHandle, 1, ids(), ids(5))
	varHandle.Resource = &graph.ResourceName{Container: "c", SharedName: "state", HasContainer: true}
	// A container left out differs from an empty one (TFLM reads the
	// first as any container).
	anyContainer := op(graph.VarHandle, 1, ids(), ids(9))
	anyContainer.Resource = &graph.ResourceName{SharedName: "state"}
	emptyContainer := op(graph.VarHandle, 1, ids(), ids(10))
	emptyContainer.Resource = &graph.ResourceName{SharedName: "state", HasContainer: true}
	composite := op(graph.StablehloComposite, 1, ids(3), ids(3))
	composite.Called = []graph.SubgraphIndex{3}
	other := op(graph.Custom, 1, ids(3), ids(3))
	other.CustomName = "Other"
	transposeConv := op(graph.TransposeConv, 1, ids(graph.NoTensor, 1, 0), ids(3))
	transposeConv.Window = &graph.Window{Padding: graph.PaddingValid, StrideW: 2, StrideH: 3, DilationW: 1, DilationH: 1}

	weights := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	// A STRING tensor's data: count, offsets, then the bytes ("a", "bc").
	strs := []byte{2, 0, 0, 0, 16, 0, 0, 0, 17, 0, 0, 0, 19, 0, 0, 0, 'a', 'b', 'c'}
	return &graph.Model{
		Version:     SchemaVersion,
		Description: "hand-built",
		Subgraphs: []graph.Subgraph{
			{
				Name: "main",
				Tensors: []graph.Tensor{
					{Name: "in", Type: graph.Int8, Shape: shape(1, 4), ShapeSignature: []int32{-1, 4}, Size: 4,
						Quantization: &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{-3}}},
					{Name: "w", Type: graph.Int8, Shape: shape(4, 4), Buffer: 1, Size: 16,
						Quantization: &graph.Quantization{Scale: []float32{0.1, 0.2, 0.3, 0.4}, ZeroPoint: []int64{0, 0, 0, 0}, QuantizedDim: 0}},
					{Name: "state", Type: graph.Float32, Shape: shape(4), IsVariable: true, Size: 16},
					{Name: "out", Type: graph.Int8, Shape: shape(1, 4), Size: 4},
					{Name: "cond", Type: graph.Bool, Shape: shape(), Size: 1},
					{Name: "handle", Type: graph.Resource, Shape: shape()},
					{Name: "words", Type: graph.String, Shape: shape(2), Buffer: 2, Size: int64(len(strs))},
					{Name: "custom_quant", Type: graph.Int8, Shape: shape(1, 2), Size: 2,
						Quantization: &graph.Quantization{Scale: []float32{}, ZeroPoint: []int64{}, QuantizedDim: 1, HasCustomQuant: true}},
					{Name: "", Type: graph.Int16, Shape: shape(4), Size: 8},
					{Name: "handle_any", Type: graph.Resource, Shape: shape()},
					{Name: "handle_empty", Type: graph.Resource, Shape: shape()},
				},
				Ops: []graph.Op{
					fc, custom, while, ifOp, callOnce, varHandle, composite,
					op(9, 2, ids(0, 1), ids(3)),
					op(0, 0, ids(3, 3), ids(3)), // ADD version 0
					op(150, 1, ids(3), ids(3)),  // GELU
					fc,
					other,
					transposeConv,
					anyContainer,
					emptyContainer,
				},
				Inputs:  ids(0),
				Outputs: ids(3),
			},
			{
				Name: "cond",
				Tensors: []graph.Tensor{
					{Name: "x", Type: graph.Int8, Shape: shape(1, 4), Size: 4},
					{Name: "c", Type: graph.Bool, Shape: shape(), Size: 1},
				},
				Ops: []graph.Op{}, Inputs: ids(0), Outputs: ids(1),
			},
			{
				Name:    "body",
				Tensors: []graph.Tensor{{Name: "x", Type: graph.Int8, Shape: shape(1, 4), Size: 4}},
				Ops:     []graph.Op{}, Inputs: ids(0), Outputs: ids(0),
			},
			{Tensors: []graph.Tensor{}, Ops: []graph.Op{}, Inputs: ids(), Outputs: ids()},
		},
		Buffers: []graph.Buffer{
			{},
			{Data: weights},
			{Data: strs},
			{Data: []byte("1.14.0\x00")},
			{Data: []byte{42}},
		},
		Metadata: []graph.Metadata{{Name: "min_runtime_version", Buffer: 3}, {Name: "", Buffer: 4}},
		Signatures: []graph.Signature{
			{Key: "serving_default", Subgraph: 0,
				Inputs:  []graph.SignatureTensor{{Name: "x", Tensor: 0}},
				Outputs: []graph.SignatureTensor{{Name: "y", Tensor: 3}}},
			{Key: "init", Subgraph: 3, Inputs: []graph.SignatureTensor{}, Outputs: []graph.SignatureTensor{}},
		},
	}
}
