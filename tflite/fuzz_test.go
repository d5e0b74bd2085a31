package tflite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// maxFuzzSeed bounds the corpus models used as fuzz seeds: mutating
// megabyte inputs costs the fuzzer throughput without reaching new code.
const maxFuzzSeed = 64 << 10

// externalSeed names the test model that FuzzLoad also seeds in the
// offset/size buffer form.
const externalSeed = "hello_world_int8.tflite"

// FuzzLoad feeds arbitrary bytes to load, which has no recover: any panic
// is a missed check in check.go or load.go. A model that loads must keep
// the invariants the rest of heliac relies on.
//
// Seeds are testdata/models, externalSeed re-encoded with its buffers in
// the offset/size form (which no test model uses) and, when ../shared is
// present, the corpus models of at most maxFuzzSeed bytes.
func FuzzLoad(f *testing.F) {
	for _, m := range testModels(f) {
		f.Add(m.data)
		if m.name == externalSeed {
			g, err := Load(m.data)
			require.NoError(f, err)
			ext, err := Encode(g, EncodeOptions{ExternalBuffers: true})
			require.NoError(f, err)
			f.Add(ext)
		}
	}
	if dir := corpus.SharedDir(); dir != "" {
		paths, _ := filepath.Glob(filepath.Join(dir, "corpus", "*", "*"))
		for _, p := range paths {
			if st, err := os.Stat(p); err != nil || st.Size() > maxFuzzSeed || filepath.Ext(p) == ".md" || filepath.Ext(p) == ".tsv" {
				continue
			}
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A full slice expression, so that reading past len(data) panics
		// instead of quietly using spare capacity.
		m, err := load(data[:len(data):len(data)])
		if err != nil {
			if m != nil {
				t.Fatalf("load returned a model and the error %v", err)
			}
			return
		}
		if err := checkInvariants(m, len(data)); err != nil {
			t.Fatalf("loaded model breaks an invariant: %v", err)
		}
	})
}
