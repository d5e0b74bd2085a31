package tflite

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/tflite/schema"
)

// badDir holds malformed models, <case>.tflite, each beside <case>.err, the
// one-line error Load must return for it.
const badDir = "testdata/bad"

// updateEnv names the environment variable that rewrites expected files
// instead of comparing against them.
const updateEnv = "HELIAC_UPDATE"

func updating() bool { return os.Getenv(updateEnv) != "" }

// badCase makes the input of one expected-error case. The committed
// testdata/bad/<name>.tflite must equal make's output, so the inputs are
// reviewable as code here and as bytes there.
type badCase struct {
	name string
	make func(t *testing.T) []byte
}

var badCases = []badCase{
	{"empty", func(t *testing.T) []byte { return []byte{} }},
	{"too_short", func(t *testing.T) []byte { return model(t, "hello_world_int8")[:7] }},
	{"wrong_identifier", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		copy(d[4:8], "TFL2")
		return d
	}},
	{"root_offset_out_of_range", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, 0, uint32(len(d))+1000)
		return d
	}},
	{"no_subgraphs", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, vectorPos(t, root(d).Table(), 8), 0)
		return d
	}},
	{"vector_past_end", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, vectorPos(t, sub(t, d, 0).Table(), 4), 100000)
		return d
	}},
	{"string_past_end", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, vectorPos(t, tensor(t, d, 0, 3).Table(), 10), 1<<30)
		return d
	}},
	{"bad_vtable", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		tab := tensor(t, d, 0, 2).Table()
		putU32(d, int(tab.Pos), uint32(int32(-len(d)))) // vtable after the end
		return d
	}},
	{"tensor_buffer_out_of_range", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, fieldPos(t, tensor(t, d, 0, 4).Table(), 8), 99)
		return d
	}},
	{"unknown_tensor_type", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		d[fieldPos(t, tensor(t, d, 0, 7).Table(), 6)] = 100
		return d
	}},
	{"negative_dimension", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, elemPos(t, tensor(t, d, 0, 8).Table(), 4, 1, 4), uint32(0xfffffffc)) // -4
		return d
	}},
	{"huge_shape", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		tab := tensor(t, d, 0, 4).Table() // shape [16 16]
		putU32(d, elemPos(t, tab, 4, 0, 4), 1<<30)
		putU32(d, elemPos(t, tab, 4, 1, 4), 1<<30)
		return d
	}},
	{"constant_buffer_short", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, elemPos(t, tensor(t, d, 0, 3).Table(), 4, 0, 4), 17) // INT32 [16] over 64 bytes
		return d
	}},
	{"op_input_out_of_range", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, elemPos(t, op(t, d, 0, 1).Table(), 6, 2, 4), 42)
		return d
	}},
	{"opcode_index_out_of_range", func(t *testing.T) []byte {
		d := model(t, "multi_subgraphs_while")
		putU32(d, fieldPos(t, op(t, d, 2, 1).Table(), 4), 7)
		return d
	}},
	{"negative_builtin_code", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		var oc schema.OperatorCode
		require.True(t, root(d).OperatorCodes(&oc, 0))
		putU32(d, fieldPos(t, oc.Table(), 10), 0xfffffff9)
		d[fieldPos(t, oc.Table(), 4)] = 0xf9 // deprecated_builtin_code -7
		return d
	}},
	{"while_subgraph_out_of_range", func(t *testing.T) []byte {
		d := model(t, "multi_subgraphs_while")
		putU32(d, fieldPos(t, whileOptions(t, d), 6), 7) // body
		return d
	}},
	{"while_calls_main_subgraph", func(t *testing.T) []byte {
		d := model(t, "multi_subgraphs_while")
		putU32(d, fieldPos(t, whileOptions(t, d), 6), 0) // body
		return d
	}},
	{"subgraph_calls_itself", func(t *testing.T) []byte {
		// Point subgraph 1 (the WHILE's cond) at subgraph 0's operators,
		// so it holds a WHILE whose cond is subgraph 1 itself. Both
		// subgraphs have five tensors, so the operands stay in range.
		d := model(t, "multi_subgraphs_while")
		from := fieldPos(t, sub(t, d, 1).Table(), 10)
		to := vectorPos(t, sub(t, d, 0).Table(), 10)
		putU32(d, from, uint32(to-from))
		return d
	}},
	{"op_output_has_constant_data", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8")
		putU32(d, fieldPos(t, tensor(t, d, 0, 8).Table(), 8), 3) // op 1's output over dense_2's 16-byte weights
		return d
	}},
	{"shared_vector_bomb", func(t *testing.T) []byte { return sharedVectorBomb(1024) }},
	// Fields heliac does not read are checked too (walk.go).
	{"unread_options_outside", func(t *testing.T) []byte {
		d := model(t, "hello_world_int8") // FULLY_CONNECTED with FullyConnectedOptions
		putU32(d, fieldPos(t, op(t, d, 0, 0).Table(), 12), 1<<30)
		return d
	}},
	{"custom_options_past_end", func(t *testing.T) []byte {
		d := model(t, "audio_preprocessor_int8")
		for i := 0; ; i++ {
			if o := op(t, d, 0, i); o.CustomOptionsLength() > 0 {
				putU32(d, vectorPos(t, o.Table(), 14), 1<<20)
				return d
			}
		}
	}},
}

func TestBadFilesUpToDate(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range badCases {
		t.Run(c.name, func(t *testing.T) {
			require.False(t, seen[c.name], "duplicate case")
			seen[c.name] = true
			want := c.make(t)
			path := filepath.Join(badDir, c.name+".tflite")
			if updating() {
				require.NoError(t, os.MkdirAll(badDir, 0o755))
				require.NoError(t, os.WriteFile(path, want, 0o644))
				return
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err, "run with %s=1 to create it", updateEnv)
			assert.True(t, bytes.Equal(want, got), "%s differs from what its case makes; run with %s=1", path, updateEnv)
		})
	}
	// A file with no case is stale, as a golden without a model is.
	files, err := filepath.Glob(filepath.Join(badDir, "*.tflite"))
	require.NoError(t, err)
	for _, f := range files {
		assert.True(t, seen[strings.TrimSuffix(filepath.Base(f), ".tflite")], "%s has no case in badCases", f)
	}
}

func TestLoadBadFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(badDir, "*.tflite"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".tflite")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			_, err = load(data[:len(data):len(data)])
			require.Error(t, err, "malformed model loaded")
			got := err.Error()
			assert.NotContains(t, got, "\n")
			// Load, with its recover, must say the same.
			_, lerr := Load(data)
			require.Error(t, lerr)
			assert.Equal(t, got, lerr.Error(), "Load and load disagree")

			errPath := filepath.Join(badDir, name+".err")
			if updating() {
				require.NoError(t, os.WriteFile(errPath, []byte(got+"\n"), 0o644))
				return
			}
			want, err := os.ReadFile(errPath)
			require.NoError(t, err, "run with %s=1 to create it", updateEnv)
			assert.Equal(t, strings.TrimSuffix(string(want), "\n"), got)
		})
	}
}

// model returns a fresh copy of testdata/models/<name>.tflite.
func model(t *testing.T, name string) []byte {
	t.Helper()
	d, err := os.ReadFile(filepath.Join(modelsDir, name+".tflite"))
	require.NoError(t, err)
	return d
}

func putU32(d []byte, pos int, v uint32) { binary.LittleEndian.PutUint32(d[pos:], v) }

func root(d []byte) *schema.Model { return schema.GetRootAsModel(d, 0) }

func sub(t *testing.T, d []byte, i int) *schema.SubGraph {
	t.Helper()
	var sg schema.SubGraph
	require.True(t, root(d).Subgraphs(&sg, i))
	return &sg
}

func tensor(t *testing.T, d []byte, s, i int) *schema.Tensor {
	t.Helper()
	var tt schema.Tensor
	require.True(t, sub(t, d, s).Tensors(&tt, i))
	return &tt
}

func op(t *testing.T, d []byte, s, i int) *schema.Operator {
	t.Helper()
	var o schema.Operator
	require.True(t, sub(t, d, s).Operators(&o, i))
	return &o
}

// whileOptions returns the options table of the first WHILE of subgraph 0.
func whileOptions(t *testing.T, d []byte) flatbuffers.Table {
	t.Helper()
	for i := 0; i < sub(t, d, 0).OperatorsLength(); i++ {
		o := op(t, d, 0, i)
		if o.BuiltinOptionsType() == schema.BuiltinOptionsWhileOptions {
			var tab flatbuffers.Table
			require.True(t, o.BuiltinOptions(&tab))
			return tab
		}
	}
	t.Fatal("no WHILE in subgraph 0")
	return flatbuffers.Table{}
}

// fieldPos returns the position of the field at vtable offset vt, which
// must be present.
func fieldPos(t *testing.T, tab flatbuffers.Table, vt flatbuffers.VOffsetT) int {
	t.Helper()
	o := tab.Offset(vt)
	require.NotZero(t, o, "field %d absent", vt)
	return int(tab.Pos) + int(o)
}

// vectorPos returns the position of the length word of the vector or
// string at vtable offset vt.
func vectorPos(t *testing.T, tab flatbuffers.Table, vt flatbuffers.VOffsetT) int {
	t.Helper()
	p := fieldPos(t, tab, vt)
	return p + int(binary.LittleEndian.Uint32(tab.Bytes[p:]))
}

// elemPos returns the position of element j, of size bytes, of the vector
// at vtable offset vt.
func elemPos(t *testing.T, tab flatbuffers.Table, vt flatbuffers.VOffsetT, j, size int) int {
	t.Helper()
	p := vectorPos(t, tab, vt)
	require.Less(t, j, int(binary.LittleEndian.Uint32(tab.Bytes[p:])), "vector too short")
	return p + 4 + j*size
}

// sharedVectorBomb builds a model whose n tensors are all one table with
// an n-entry shape: a file of about 8n bytes that would load as n² shape
// entries.
func sharedVectorBomb(n int) []byte {
	b := flatbuffers.NewBuilder(0)
	schema.TensorStartShapeVector(b, n)
	for i := 0; i < n; i++ {
		b.PrependInt32(1)
	}
	shape := b.EndVector(n)
	schema.TensorStart(b)
	schema.TensorAddShape(b, shape)
	schema.TensorAddType(b, schema.TensorTypeINT8)
	tt := schema.TensorEnd(b)
	schema.SubGraphStartTensorsVector(b, n)
	for i := 0; i < n; i++ {
		b.PrependUOffsetT(tt)
	}
	tensors := b.EndVector(n)
	schema.SubGraphStart(b)
	schema.SubGraphAddTensors(b, tensors)
	sg := schema.SubGraphEnd(b)
	schema.ModelStartSubgraphsVector(b, 1)
	b.PrependUOffsetT(sg)
	subgraphs := b.EndVector(1)
	schema.BufferStart(b)
	empty := schema.BufferEnd(b)
	schema.ModelStartBuffersVector(b, 1)
	b.PrependUOffsetT(empty)
	buffers := b.EndVector(1)
	schema.ModelStart(b)
	schema.ModelAddVersion(b, 3)
	schema.ModelAddSubgraphs(b, subgraphs)
	schema.ModelAddBuffers(b, buffers)
	b.FinishWithFileIdentifier(schema.ModelEnd(b), []byte(Identifier))
	return b.FinishedBytes()
}

// A builtin code newer than the vendored schema is not corruption: the model
// loads and the operator is named by its number.
func TestUnknownBuiltinLoads(t *testing.T) {
	d := model(t, "hello_world_int8")
	var oc schema.OperatorCode
	require.True(t, root(d).OperatorCodes(&oc, 0))
	putU32(d, fieldPos(t, oc.Table(), 10), 5000)
	m, err := Load(d)
	require.NoError(t, err)
	assert.Equal(t, "BUILTIN_5000", m.Subgraphs[0].Ops[0].Name())
}
