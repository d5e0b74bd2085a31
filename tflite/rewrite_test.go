package tflite

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite/schema"
)

// decoded is a model in the object API with the data it stores after the
// flatbuffer (the offset/size form) resolved: external maps the path of
// each such buffer or custom options to its bytes, and the offsets in m,
// which only say where the bytes were, are set to 0.
type decoded struct {
	m        *schema.ModelT
	external map[string][]byte
	// absent counts, per table type and field, the strings data leaves
	// out; the vectors it leaves out are nil in m (markAbsent).
	absent map[string]int
}

// decode unpacks data, which load must accept, with the generated UnPack.
func decode(t *testing.T, data []byte) decoded {
	t.Helper()
	_, err := load(data)
	require.NoError(t, err)
	fb := schema.GetRootAsModel(data, 0)
	d := decoded{m: fb.UnPack(), external: map[string][]byte{}, absent: map[string]int{}}
	absent := map[fieldRef]bool{}
	markAbsent(fb.Table(), tfliteSchema().tables["Model"], reflect.ValueOf(d.m), absent)
	for ref := range absent {
		d.absent[fmt.Sprintf("%T.%d", ref.table, ref.field)]++
	}
	for i, b := range d.m.Buffers {
		if b.Offset > 1 {
			d.external[fmt.Sprintf("buffers[%d]", i)] = data[b.Offset : b.Offset+b.Size]
			b.Offset = 0
		}
	}
	for si, sg := range d.m.Subgraphs {
		for oi, op := range sg.Operators {
			if off := op.LargeCustomOptionsOffset; off > 1 {
				d.external[fmt.Sprintf("subgraphs[%d].operators[%d]", si, oi)] = data[off : off+op.LargeCustomOptionsSize]
				op.LargeCustomOptionsOffset = 0
			}
		}
	}
	return d
}

// rewriteInputs returns testdata/models and, when ../shared is present,
// every corpus model.
func rewriteInputs(t *testing.T) []namedFile {
	inputs := testModels(t)
	if corpus.SharedDir() == "" {
		t.Log("../shared not found; rewriting testdata/models only")
		return inputs
	}
	for _, e := range corpus.Manifest(t) {
		data, err := os.ReadFile(e.Path)
		require.NoError(t, err)
		inputs = append(inputs, namedFile{name: e.File, data: data})
	}
	return inputs
}

// TestRepack: decode → Repack → decode is deep-equal at the object-API
// level, every string and vector absent from the input absent from the
// output and every other present, Load reads the same graph.Model, every force_align holds, and
// the bytes are deterministic and a fixed point of Repack.
func TestRepack(t *testing.T) {
	for _, in := range rewriteInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			out, err := Repack(in.data)
			require.NoError(t, err)
			checkSameModel(t, in.data, out)
			checkAlignment(t, out)

			again, err := Repack(in.data)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(out, again), "two Repacks of one input differ")
			twice, err := Repack(out)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(out, twice), "Repack of its own output changes the bytes")
		})
	}
}

// checkSameModel checks that out decodes to what in decodes to, at the
// object-API level and as Load reads it.
func checkSameModel(t *testing.T, in, out []byte) {
	t.Helper()
	want, err := load(in)
	require.NoError(t, err)
	got, err := load(out)
	require.NoError(t, err)
	assert.Equal(t, want, got, "Load")
	assert.Equal(t, decode(t, in), decode(t, out), "object API")
}

// A model in the offset/size form of models over 2 GiB, as Encode writes
// it, keeps that form: the data follows the new flatbuffer, 16-byte
// aligned, at offsets rewritten to point to it.
func TestRepackExternalBuffers(t *testing.T) {
	for _, in := range testModels(t) {
		t.Run(in.name, func(t *testing.T) {
			m, err := Load(in.data)
			require.NoError(t, err)
			ext, err := Encode(m, EncodeOptions{ExternalBuffers: true})
			require.NoError(t, err)
			out, err := Repack(ext)
			require.NoError(t, err)
			checkSameModel(t, ext, out)
			checkAlignment(t, out)
			got, err := Load(out)
			require.NoError(t, err)
			for i, b := range got.Buffers {
				assert.Equal(t, len(b.Data) > 0, b.External, "buffers[%d]", i)
			}

			// The metadata SetMetadata adds is inline; the rest stays
			// external.
			md, _, err := SetMetadata(ext, "OfflineMemoryAllocation", []byte{1, 0, 0, 0, 2, 0, 0, 0})
			require.NoError(t, err)
			checkAlignment(t, md)
			got, err = Load(md)
			require.NoError(t, err)
			last := len(got.Buffers) - 1
			assert.Equal(t, graph.Buffer{Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}, got.Buffers[last])
			for i, b := range got.Buffers[:last] {
				assert.Equal(t, len(b.Data) > 0, b.External, "buffers[%d]", i)
			}
		})
	}
}

// External data keeps the alignment it had in the input, up to a page,
// and its order.
func TestRepackExternalAlignment(t *testing.T) {
	m, err := Load(model(t, "hello_world_int8"))
	require.NoError(t, err)
	ext, err := Encode(m, EncodeOptions{ExternalBuffers: true})
	require.NoError(t, err)
	o, err := unpack(ext)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(o.external), 3)
	// Pretend the input had them at these offsets, in this order.
	inputOffsets := []uint64{1 << 20, 1<<20 + 64 + 32, 1<<21 + 4096}
	wantAlign := []uint64{4096, 32, 4096}
	for i := range o.external {
		o.external[i].offset = inputOffsets[min(i, 2)] + uint64(i)*(1<<22)
	}
	out, err := o.pack()
	require.NoError(t, err)
	root := schema.GetRootAsModel(out, 0)
	var buf schema.Buffer
	prev := uint64(0)
	for i, e := range o.external {
		require.True(t, root.Buffers(&buf, e.buffer))
		off := buf.Offset()
		assert.Zero(t, off%wantAlign[min(i, 2)], "external[%d] at %d", i, off)
		assert.Greater(t, off, prev, "external[%d] out of order", i)
		prev = off
		assert.Equal(t, e.data, out[off:off+buf.Size()])
	}
	checkSameModel(t, ext, out)
}

// Large custom options in the offset/size form survive too.
func TestRepackLargeCustomOptions(t *testing.T) {
	data := model(t, "audio_preprocessor_int8")
	o, err := unpack(data)
	require.NoError(t, err)
	moved := map[string][]byte{}
	for si, sg := range o.m.Subgraphs {
		for oi, op := range sg.Operators {
			if op.CustomOptions == nil {
				continue
			}
			o.external = append(o.external, externalData{buffer: -1, sg: si, op: oi, data: op.CustomOptions, offset: 16})
			moved[fmt.Sprintf("subgraphs[%d].operators[%d]", si, oi)] = op.CustomOptions
			op.LargeCustomOptionsSize = uint64(len(op.CustomOptions))
			op.CustomOptions = nil
		}
	}
	require.NotEmpty(t, moved)
	large, err := o.pack()
	require.NoError(t, err)

	// The file as written: offsets past the flatbuffer, aligned, bytes there.
	root := schema.GetRootAsModel(large, 0)
	var sg schema.SubGraph
	var op schema.Operator
	require.True(t, root.Subgraphs(&sg, 0))
	for i := 0; i < sg.OperatorsLength(); i++ {
		require.True(t, sg.Operators(&op, i))
		want, ok := moved[fmt.Sprintf("subgraphs[0].operators[%d]", i)]
		if !ok {
			continue
		}
		off, size := op.LargeCustomOptionsOffset(), op.LargeCustomOptionsSize()
		assert.Zero(t, off%16, "operators[%d]: offset %d", i, off)
		assert.Zero(t, op.CustomOptionsLength(), "operators[%d]", i)
		assert.Equal(t, want, large[off:off+size], "operators[%d]", i)
	}
	assert.Equal(t, moved, decode(t, large).external)

	out, err := Repack(large)
	require.NoError(t, err)
	checkSameModel(t, large, out)

	// Custom options that run past the end of the file are reported.
	_, err = Repack(large[: len(large)-1 : len(large)-1])
	assert.ErrorContains(t, err, "large_custom_options_offset: custom options at offset")
}

// The rewrite keeps a VAR_HANDLE without a container without one, and one
// with container "" with it: TFLM reads the first as any container and
// the second as the container named "" (TFLM 90b983c,
// micro_resource_variable.cc, FindId). It used to write every absent
// string as "".
func TestRewriteKeepsAbsentContainer(t *testing.T) {
	in, err := Encode(handModel(), EncodeOptions{})
	require.NoError(t, err)
	want := varHandles(t, in)
	require.Equal(t, []varHandle{{"c", true, "state"}, {"", false, "state"}, {"", true, "state"}}, want)
	order := make([][]int, len(handModel().Subgraphs))
	for s, sg := range handModel().Subgraphs {
		for i := range sg.Ops {
			order[s] = append(order[s], len(sg.Ops)-1-i)
		}
	}
	reversed := append([]varHandle(nil), want...)
	slices.Reverse(reversed)
	for _, tc := range []struct {
		name    string
		rewrite func() ([]byte, error)
		want    []varHandle
	}{
		{"Repack", func() ([]byte, error) { return Repack(in) }, want},
		{"SetMetadata", func() ([]byte, error) { out, _, err := SetMetadata(in, "x", []byte{1}); return out, err }, want},
		{"SetMetadataAndOrder", func() ([]byte, error) {
			out, _, err := SetMetadataAndOrder(in, "x", []byte{1}, order)
			return out, err
		}, reversed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.rewrite()
			require.NoError(t, err)
			assert.Equal(t, tc.want, varHandles(t, out))
			_, err = Load(out)
			require.NoError(t, err)
		})
	}
}

// What the object API would drop is refused rather than dropped.
func TestRepackRefusesUnknown(t *testing.T) {
	t.Run("union type", func(t *testing.T) {
		d := model(t, "hello_world_int8")
		o := op(t, d, 0, 0)
		require.Equal(t, schema.BuiltinOptionsFullyConnectedOptions, o.BuiltinOptionsType())
		d[fieldPos(t, o.Table(), 10)] = 250
		_, err := Load(d)
		require.NoError(t, err, "Load does not read FULLY_CONNECTED's options")
		_, err = Repack(d)
		assert.EqualError(t, err, "tflite: subgraphs[0].operators[0].builtin_options: BuiltinOptions type 250 is unknown to the schema (revision 3d); rewriting the model would drop it")
	})
	t.Run("field", func(t *testing.T) {
		o, err := unpack(model(t, "hello_world_int8"))
		require.NoError(t, err)
		m := o.m
		b := flatbuffers.NewBuilder(0)
		s := tfliteSchema()
		p := &packer{b: b, s: s, absent: o.absent}
		field := func(name string) *fbsField {
			for _, f := range s.tables["Model"].live() {
				if f.name == name {
					return f
				}
			}
			t.Fatalf("Model.%s not in the schema", name)
			return nil
		}
		codes := p.vector(reflect.ValueOf(m.OperatorCodes), field("operator_codes"))
		subgraphs := p.vector(reflect.ValueOf(m.Subgraphs), field("subgraphs"))
		buffers := p.vector(reflect.ValueOf(m.Buffers), field("buffers"))
		b.StartObject(12) // Model has 10 fields
		schema.ModelAddVersion(b, m.Version)
		schema.ModelAddOperatorCodes(b, codes)
		schema.ModelAddSubgraphs(b, subgraphs)
		schema.ModelAddBuffers(b, buffers)
		b.PrependUint32Slot(11, 7, 0)
		b.FinishWithFileIdentifier(b.EndObject(), []byte(Identifier))
		d := b.FinishedBytes()
		_, err = Load(d)
		require.NoError(t, err, "Load reads models of newer schemas")
		_, _, err = SetMetadata(d, "x", nil)
		assert.ErrorContains(t, err, "tflite: model: field 11 is unknown to the schema (revision 3d); rewriting the model would drop it")
	})
}

// Deprecated fields, which the bindings cannot read, are left out; no
// TFLite runtime sees them either.
func TestRepackDropsDeprecated(t *testing.T) {
	data, err := os.ReadFile(corpusPath(t, "coral/keras_lstm_mnist_ptq.tflite"))
	require.NoError(t, err)
	const deprecatedTag = 10 // SignatureDef.deprecated_tag
	var sd schema.SignatureDef
	require.True(t, root(data).SignatureDefs(&sd, 0))
	tab := sd.Table()
	require.NotZero(t, tab.Offset(deprecatedTag))
	out, err := Repack(data)
	require.NoError(t, err)
	require.True(t, root(out).SignatureDefs(&sd, 0))
	tab = sd.Table()
	assert.Zero(t, tab.Offset(deprecatedTag))
	checkSameModel(t, data, out)
}

// corpusPath returns the path of a corpus model, skipping without ../shared.
func corpusPath(t *testing.T, file string) string {
	for _, e := range corpus.Manifest(t) {
		if e.File == file {
			return e.Path
		}
	}
	t.Fatalf("%s not in the corpus manifest", file)
	return ""
}
