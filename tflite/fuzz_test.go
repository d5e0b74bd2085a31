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

// externalSeed names the test model that is also seeded in the
// offset/size buffer form.
const externalSeed = "hello_world_int8.tflite"

// fuzzSeeds returns testdata/models, externalSeed re-encoded with its
// buffers in the offset/size form (which no test model uses) and, when
// ../shared is present, the corpus models of at most maxFuzzSeed bytes.
func fuzzSeeds(tb testing.TB) []namedFile {
	var seeds []namedFile
	for _, m := range testModels(tb) {
		seeds = append(seeds, m)
		if m.name == externalSeed {
			g, err := Load(m.data)
			require.NoError(tb, err)
			ext, err := Encode(g, EncodeOptions{ExternalBuffers: true})
			require.NoError(tb, err)
			seeds = append(seeds, namedFile{name: "external_" + m.name, data: ext})
		}
	}
	if dir := corpus.SharedDir(); dir != "" {
		paths, _ := filepath.Glob(filepath.Join(dir, "corpus", "*", "*"))
		for _, p := range paths {
			if st, err := os.Stat(p); err != nil || st.Size() > maxFuzzSeed || filepath.Ext(p) == ".md" || filepath.Ext(p) == ".tsv" {
				continue
			}
			if data, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(filepath.Join(dir, "corpus"), p)
				seeds = append(seeds, namedFile{name: rel, data: data})
			}
		}
	}
	return seeds
}

// FuzzLoad feeds arbitrary bytes to load, which has no recover: any panic
// is a missed check in check.go, load.go or walk.go. A model that loads
// must keep the invariants the rest of heliac relies on. Seeds: fuzzSeeds.
func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.data)
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

// FuzzSetMetadata feeds arbitrary bytes to setMetadata, which has no
// recover: any panic is a check missing before the object API reads the
// model, or a bug in the rewrite. A model it accepts must come back as a
// model that loads, carries the entry with the data, and repacks to the
// same bytes. Seeds: fuzzSeeds, each with a small payload.
func FuzzSetMetadata(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.data, []byte{0, 0, 0, 0, 16, 0, 0, 0})
	}
	f.Fuzz(func(t *testing.T, data, payload []byte) {
		const name = "OfflineMemoryAllocation"
		out, _, err := setMetadata(data[:len(data):len(data)], name, payload)
		if err != nil {
			if out != nil {
				t.Fatalf("setMetadata returned a model and the error %v", err)
			}
			return
		}
		m, err := load(out)
		if err != nil {
			t.Fatalf("the rewritten model does not load: %v", err)
		}
		if !hasMetadata(m, name, payload) {
			t.Fatalf("the rewritten model lacks %s", name)
		}
		again, err := repack(out)
		if err != nil {
			t.Fatalf("the rewritten model does not repack: %v", err)
		}
		if string(again) != string(out) {
			t.Fatalf("repacking the rewritten model changes its bytes")
		}
	})
}
