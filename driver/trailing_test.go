package driver_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// zipTail returns the ZIP appended to a model: from its first file's local
// header, which the first entry of the central directory names (the end
// of central directory record has no comment), to the end.
func zipTail(t *testing.T, data []byte) []byte {
	t.Helper()
	eocd := len(data) - 22
	require.Equal(t, "PK\x05\x06", string(data[eocd:eocd+4]), "end of central directory")
	cd := int(binary.LittleEndian.Uint32(data[eocd+16:]))
	require.Equal(t, "PK\x01\x02", string(data[cd:cd+4]), "central directory entry")
	start := int(binary.LittleEndian.Uint32(data[cd+42:]))
	require.Equal(t, "PK\x03\x04", string(data[start:start+4]), "local file header")
	return data[start:]
}

// unzip reads every file of the ZIP at the end of data.
func unzip(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		require.NoError(t, err)
		files[f.Name], err = io.ReadAll(r)
		require.NoError(t, err)
	}
	return files
}

// TestEmitTFLiteKeepsAssociatedFiles: two Coral MobileNets carry their
// labels as TFLite Metadata's associated file, a ZIP after the flatbuffer.
// The model --emit-tflite writes ends with the same bytes, reads as a ZIP
// of the same files, loads, compiles and verifies; stock TFLM (when
// tflm_run is there, on the model it runs) computes what it computes on
// the input.
func TestEmitTFLiteKeepsAssociatedFiles(t *testing.T) {
	paths := map[string]string{}
	for _, e := range corpus.Manifest(t) {
		paths[e.File] = e.Path
	}
	for _, tc := range []struct {
		file string
		tflm bool // TFLM runs it (bench/tflm-reference.tsv)
	}{
		{"coral/mobilenet_v1_0.25_128_quant.tflite", false}, // uint8: "Hybrid models are not supported"
		{"coral/tf2_mobilenet_v2_1.0_224_ptq.tflite", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := paths[tc.file]
			require.NotEmpty(t, path, "%s is in the manifest", tc.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			tail := zipTail(t, data)
			files := unzip(t, data)
			require.NotEmpty(t, files)

			cfg := referenceConfig(t)
			cfg.ModelName, cfg.Version, cfg.EmitTFLite = "mobilenet", "test", true
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			emitted := out.TFLite.Data
			assert.True(t, bytes.HasSuffix(emitted, tail), "the emitted model ends with the input's ZIP, byte for byte")
			assert.Equal(t, files, unzip(t, emitted))

			m, err := tflite.Load(emitted)
			require.NoError(t, err)
			assert.Equal(t, len(out.Model.Subgraphs[0].Ops), len(m.Subgraphs[0].Ops))
			cfg.EmitTFLite = false
			again, err := driver.Compile(context.Background(), emitted, cfg)
			require.NoError(t, err, "the emitted model compiles and verifies")
			assert.Equal(t, len(out.Plan.Allocs), len(again.Plan.Allocs))

			tool := tflmrun.Path()
			if !tc.tflm || tool == "" || testing.Short() {
				return // TFLM takes seconds on a MobileNet V2
			}
			mine := filepath.Join(t.TempDir(), "mobilenet.tflite")
			require.NoError(t, os.WriteFile(mine, emitted, 0o644))
			var outputs [][]string
			for _, p := range []string{path, mine} {
				res, err := tflmrun.Run(context.Background(), tool, p, tflmrun.Options{Seed: 1, Invokes: 1, ArenaBytes: 8 << 20})
				require.NoError(t, err)
				require.True(t, res.OK(), "%s: %s", p, res.Error())
				outputs = append(outputs, res.Outputs())
				if p == mine {
					assert.Equal(t, int64(out.TFLite.Offline.Planned), res.Int("planner_offline_buffers"), "TFLM takes heliac's offsets")
				}
			}
			assert.Equal(t, outputs[0], outputs[1], "TFLM's outputs with heliac's plan")
		})
	}
}
