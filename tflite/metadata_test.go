package tflite

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite/schema"
)

// TestSetMetadataAppendsAndReplaces, on every model: a new name appends an
// entry and a buffer and changes nothing else; setting it again replaces
// the data in that same buffer. Both are deterministic and 16-byte aligned.
func TestSetMetadataAppendsAndReplaces(t *testing.T) {
	const name = "heliac_test"
	first := []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}
	second := []byte{9, 8, 7, 6}
	for _, in := range rewriteInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			out, replaced, err := SetMetadata(in.data, name, first)
			require.NoError(t, err)
			assert.False(t, replaced)
			checkAlignment(t, out)
			again, _, err := SetMetadata(in.data, name, first)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(out, again), "two SetMetadata of one input differ")

			want := decode(t, in.data)
			want.m.Buffers = append(want.m.Buffers, &schema.BufferT{Data: first})
			want.m.Metadata = append(want.m.Metadata, &schema.MetadataT{Name: name, Buffer: uint32(len(want.m.Buffers) - 1)})
			assert.Equal(t, want, decode(t, out), "object API")

			wantG, err := Load(in.data)
			require.NoError(t, err)
			wantG.Buffers = append(wantG.Buffers, graph.Buffer{Data: first})
			wantG.Metadata = append(wantG.Metadata, graph.Metadata{Name: name, Buffer: graph.BufferIndex(len(wantG.Buffers) - 1)})
			gotG, err := Load(out)
			require.NoError(t, err)
			assert.Equal(t, wantG, gotG, "Load")

			out2, replaced, err := SetMetadata(out, name, second)
			require.NoError(t, err)
			assert.True(t, replaced)
			checkAlignment(t, out2)
			want.m.Buffers[len(want.m.Buffers)-1].Data = second
			assert.Equal(t, want, decode(t, out2), "object API after replacing")
		})
	}
}

// Vela writes an OfflineMemoryAllocation of its own; SetMetadata replaces
// it in place, in the buffer Vela gave it.
func TestSetMetadataReplacesVela(t *testing.T) {
	data, err := os.ReadFile(corpusPath(t, "tflite-micro/person_detect_vela.tflite"))
	require.NoError(t, err)
	want := decode(t, data)
	idx := -1
	for i, md := range want.m.Metadata {
		if md.Name == "OfflineMemoryAllocation" {
			idx = i
		}
	}
	require.NotEqual(t, -1, idx, "no OfflineMemoryAllocation in the Vela model")
	plan := []byte{0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	out, replaced, err := SetMetadata(data, "OfflineMemoryAllocation", plan)
	require.NoError(t, err)
	assert.True(t, replaced)
	checkAlignment(t, out)

	want.m.Buffers[want.m.Metadata[idx].Buffer].Data = plan
	got := decode(t, out)
	assert.Equal(t, want, got)
	assert.Len(t, got.m.Buffers, len(want.m.Buffers), "the old buffer is reused")
}

// TestSetMetadataBuffers: which buffer the data goes to when the entry's
// old buffer is shared, is buffer 0, is external or has duplicates.
func TestSetMetadataBuffers(t *testing.T) {
	data := []byte{4, 3, 2, 1}
	tests := []struct {
		name     string
		external bool                   // encode with EncodeOptions.ExternalBuffers
		mutate   func(m *graph.Model)   // before encoding
		edit     func(m *schema.ModelT) // after encoding, in the object API
		set      string                 // the entry to set
		replaced bool                   // SetMetadata's answer
		buffers  []graph.Buffer         // all buffers afterwards
		metadata []graph.Metadata       // all entries afterwards
	}{
		{name: "new name appends", set: "OfflineMemoryAllocation",
			buffers:  handBuffers(4, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 3), md("", 4), md("OfflineMemoryAllocation", 5)}},
		{name: "own buffer is reused", set: "min_runtime_version", replaced: true,
			buffers:  replaceBuffer(handBuffers(4), 3, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 3), md("", 4)}},

		{name: "buffer of a tensor is kept", set: "min_runtime_version", replaced: true,
			mutate:   func(m *graph.Model) { m.Metadata[0].Buffer = 1 },
			buffers:  handBuffers(4, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 5), md("", 4)}},
		{name: "buffer 0 is kept empty", set: "min_runtime_version", replaced: true,
			mutate:   func(m *graph.Model) { m.Metadata[0].Buffer = 0 },
			buffers:  handBuffers(4, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 5), md("", 4)}},
		{name: "buffer of another entry is kept", set: "min_runtime_version", replaced: true,
			mutate:   func(m *graph.Model) { m.Metadata[1].Name, m.Metadata[1].Buffer = "x", 3 },
			buffers:  handBuffers(4, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 5), md("x", 3)}},
		{name: "buffer in metadata_buffer is kept", set: "min_runtime_version", replaced: true,
			edit:     func(m *schema.ModelT) { m.MetadataBuffer = []int32{3} },
			buffers:  handBuffers(4, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 5), md("", 4)}},
		{name: "duplicates share the data, a freed buffer is emptied", set: "dup", replaced: true,
			mutate: func(m *graph.Model) {
				m.Metadata = []graph.Metadata{md("dup", 4), md("min_runtime_version", 2), md("dup", 3)}
			},
			buffers:  replaceBuffer(replaceBuffer(handBuffers(4), 4, graph.Buffer{Data: data}), 3, graph.Buffer{}),
			metadata: []graph.Metadata{md("dup", 4), md("min_runtime_version", 2), md("dup", 4)}},
		{name: "external buffer becomes inline", external: true, set: "min_runtime_version", replaced: true,
			buffers:  replaceBuffer(handBuffers(4), 3, graph.Buffer{Data: data}),
			metadata: []graph.Metadata{md("min_runtime_version", 3), md("", 4)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := handModel()
			if tt.mutate != nil {
				tt.mutate(m)
			}
			in, err := Encode(m, EncodeOptions{ExternalBuffers: tt.external})
			require.NoError(t, err)
			if tt.edit != nil {
				o, err := unpack(in)
				require.NoError(t, err)
				tt.edit(o.m)
				in, err = o.pack()
				require.NoError(t, err)
			}
			out, replaced, err := SetMetadata(in, tt.set, data)
			require.NoError(t, err)
			assert.Equal(t, tt.replaced, replaced)
			checkAlignment(t, out)
			got, err := Load(out)
			require.NoError(t, err)
			if tt.external {
				for i := range tt.buffers {
					tt.buffers[i].External = i != 3 && len(tt.buffers[i].Data) > 0
				}
			}
			assert.Equal(t, tt.buffers, got.Buffers)
			assert.Equal(t, tt.metadata, got.Metadata)
			// Tensors and everything else are untouched.
			want, err := Load(in)
			require.NoError(t, err)
			assert.Equal(t, want.Subgraphs, got.Subgraphs)
			assert.Equal(t, want.Signatures, got.Signatures)
		})
	}
}

// handBuffers returns handModel's buffers 0 to n, followed by more.
func handBuffers(n int, more ...graph.Buffer) []graph.Buffer {
	return append(append([]graph.Buffer(nil), handModel().Buffers[:n+1]...), more...)
}

func md(name string, buffer graph.BufferIndex) graph.Metadata {
	return graph.Metadata{Name: name, Buffer: buffer}
}

func replaceBuffer(bs []graph.Buffer, i int, b graph.Buffer) []graph.Buffer {
	bs[i] = b
	return bs
}

func TestSetMetadataErrors(t *testing.T) {
	good := model(t, "hello_world_int8")
	tests := []struct {
		name, md string
		data     []byte
		wantErr  string
	}{
		{"empty name", "", good, "tflite: set metadata: empty name"},
		{"not a model", "x", []byte("not a flatbuffer at all"), `tflite: not a TFLite model: file identifier is "a fl", want "TFL3"`},
		{"truncated", "x", good[:100], "tflite: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, replaced, err := SetMetadata(tt.data, tt.md, []byte{1})
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Nil(t, out)
			assert.False(t, replaced)
		})
	}
}

// TestSetMetadataAndOrder, on every model: each subgraph's operators come
// out reversed and everything else as SetMetadata writes it; a nil order
// is SetMetadata; an order that is not a permutation is refused.
func TestSetMetadataAndOrder(t *testing.T) {
	const name = "heliac_test"
	data := []byte{1, 0, 0, 0}
	for _, in := range rewriteInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			plain, _, err := SetMetadata(in.data, name, data)
			require.NoError(t, err)
			same, _, err := SetMetadataAndOrder(in.data, name, data, nil)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(plain, same), "a nil order changes nothing")

			want, err := Load(plain)
			require.NoError(t, err)
			order := make([][]int, len(want.Subgraphs))
			for si := range want.Subgraphs {
				ops := want.Subgraphs[si].Ops
				for i := len(ops) - 1; i >= 0; i-- {
					order[si] = append(order[si], i)
				}
				slices.Reverse(ops)
			}
			out, _, err := SetMetadataAndOrder(in.data, name, data, order)
			require.NoError(t, err)
			checkAlignment(t, out)
			got, err := Load(out)
			require.NoError(t, err)
			assert.Equal(t, want, got, "the operators reversed, nothing else changed")
		})
	}
	in := rewriteInputs(t)[0]
	m, err := Load(in.data)
	require.NoError(t, err)
	bad := make([][]int, len(m.Subgraphs))
	for si := range bad {
		bad[si] = make([]int, len(m.Subgraphs[si].Ops)) // all zeros
	}
	if len(bad[0]) > 1 {
		_, _, err = SetMetadataAndOrder(in.data, name, data, bad)
		assert.ErrorContains(t, err, "does not list each operator once")
	}
	_, _, err = SetMetadataAndOrder(in.data, name, data, [][]int{})
	assert.ErrorContains(t, err, "the order lists 0 subgraphs")
}
