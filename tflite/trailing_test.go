package tflite

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRewriteKeepsAppendedBytes: bytes appended to a model after its
// flatbuffer (and its data in the offset/size form) come out of Repack and
// SetMetadata byte for byte, last and 16-byte aligned; the model is
// otherwise rewritten as without them, and the output is a fixed point.
func TestRewriteKeepsAppendedBytes(t *testing.T) {
	m, err := Load(model(t, "hello_world_int8"))
	require.NoError(t, err)
	inline, err := Encode(m, EncodeOptions{})
	require.NoError(t, err)
	external, err := Encode(m, EncodeOptions{ExternalBuffers: true})
	require.NoError(t, err)
	pad16 := func(b []byte) []byte {
		return append(bytes.Clone(b), make([]byte, alignUp(int64(len(b)), 16)-int64(len(b)))...)
	}
	zipLike := []byte("PK\x03\x04 labels.txt\x00\x00 cat\ndog\n PK\x05\x06\x00\x00")
	zeroFirst := []byte("\x00\x00\x00\x07 appended after padding")
	tests := []struct {
		name     string
		model    []byte // without the appended bytes
		appended []byte
	}{
		{"right after the flatbuffer", inline, zipLike},
		{"after zero padding, starting with zeros", pad16(inline), zeroFirst},
		{"after external buffers", external, zipLike},
		{"after padded external buffers, starting with zeros", pad16(external), zeroFirst},
		{"one byte", inline, []byte{0xff}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append(bytes.Clone(tc.model), tc.appended...)
			plain, err := Repack(tc.model)
			require.NoError(t, err)
			out, err := Repack(in)
			require.NoError(t, err)
			checkSameModel(t, in, out)
			want := append(pad16(plain), tc.appended...)
			assert.True(t, bytes.Equal(want, out), "the model as without them, then the appended bytes 16-byte aligned")
			twice, err := Repack(out)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(out, twice), "Repack of its own output changes the bytes")

			payload := []byte{1, 0, 0, 0, 2, 0, 0, 0}
			md, _, err := SetMetadata(in, "OfflineMemoryAllocation", payload)
			require.NoError(t, err)
			require.True(t, bytes.HasSuffix(md, tc.appended), "SetMetadata keeps the appended bytes")
			assert.Zero(t, (len(md)-len(tc.appended))%16)
			got, err := Load(md)
			require.NoError(t, err)
			assert.True(t, hasMetadata(got, "OfflineMemoryAllocation", payload))
			again, _, err := SetMetadata(md, "OfflineMemoryAllocation", payload)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(md, again), "SetMetadata of its own output with the same data")
		})
	}

	// A model as a flatbuffers builder writes it, padding included, has
	// no appended bytes, in either form.
	for _, in := range testModels(t) {
		m, err := Load(in.data)
		require.NoError(t, err)
		for _, opts := range []EncodeOptions{{}, {ExternalBuffers: true}} {
			data, err := Encode(m, opts)
			require.NoError(t, err)
			for _, d := range [][]byte{in.data, data} {
				o, err := unpack(d)
				require.NoError(t, err)
				assert.Empty(t, o.trailing, "%s, %+v", in.name, opts)
			}
		}
	}
}

// zipStart returns where the ZIP appended to data starts, from its end of
// central directory record (with no comment) and its first central
// directory entry: the offset of the first file's local header.
func zipStart(t *testing.T, data []byte) int {
	t.Helper()
	eocd := len(data) - 22
	require.Equal(t, "PK\x05\x06", string(data[eocd:eocd+4]), "end of central directory")
	cd := int(binary.LittleEndian.Uint32(data[eocd+16:]))
	require.Equal(t, "PK\x01\x02", string(data[cd:cd+4]), "central directory entry")
	start := int(binary.LittleEndian.Uint32(data[cd+42:]))
	require.Equal(t, "PK\x03\x04", string(data[start:start+4]), "local file header")
	return start
}

// zipFiles reads every file of the ZIP at the end of data.
func zipFiles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	files := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		files[f.Name] = string(b)
	}
	return files
}

// The Coral MobileNet carries its labels as TFLite Metadata's associated
// file, a ZIP after the flatbuffer: SetMetadata keeps it byte for byte,
// and it still reads as a ZIP with the same files.
func TestSetMetadataKeepsAssociatedFiles(t *testing.T) {
	data, err := os.ReadFile(corpusPath(t, "coral/mobilenet_v1_0.25_128_quant.tflite"))
	require.NoError(t, err)
	files := zipFiles(t, data)
	require.Contains(t, files, "imagenet_labels.txt")
	tail := data[zipStart(t, data):]
	out, _, err := SetMetadata(data, "OfflineMemoryAllocation", []byte{0, 0, 0, 0, 16, 0, 0, 0})
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(out, tail), "the ZIP is kept byte for byte")
	assert.Equal(t, files, zipFiles(t, out))
	got, err := Load(out)
	require.NoError(t, err)
	want, err := Load(data)
	require.NoError(t, err)
	assert.Equal(t, len(want.Buffers)+1, len(got.Buffers))
}
