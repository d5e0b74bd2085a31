package tflite

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite/schema"
)

// TestLoadDamagedNoPanic loads truncated and bit-flipped variants of every
// test and corpus model with load, which has no recover: a panic fails the
// whole test binary and points at a missed check. Errors are expected;
// a variant that still loads must keep the model invariants.
func TestLoadDamagedNoPanic(t *testing.T) {
	inputs := testModels(t)
	if corpus.SharedDir() != "" {
		for _, e := range corpus.Manifest(t) {
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			inputs = append(inputs, namedFile{name: e.File, data: data})
		}
	}
	// Every prefix of files up to allLengths bytes; spreadLengths prefixes
	// of larger ones, with every prefix of their first allLengths bytes.
	allLengths, spreadLengths, flips := 4096, 200, 300
	if testing.Short() || raceEnabled {
		allLengths, spreadLengths, flips = 512, 40, 40
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			t.Run("truncated", func(t *testing.T) {
				for _, n := range prefixLengths(len(in.data), allLengths, spreadLengths) {
					// Cap the slice too, so a read past n panics rather
					// than quietly reading the rest of the file.
					loadChecked(t, in.data[:n:n], "prefix of %d bytes", n)
				}
			})
			t.Run("flipped", func(t *testing.T) {
				eachFlip(in.name, in.data, flips, func(data []byte, what string) {
					loadChecked(t, data, "%s", what)
				})
			})
		})
	}
}

// eachFlip calls try with n variants of data, each with one to three
// bytes changed, mostly in flatbuffer tables, vectors and offsets, now
// and then anywhere, buffer contents included. The variants are seeded
// from name; what describes one for an error message. data is not changed.
func eachFlip(name string, data []byte, n int, try func(variant []byte, what string)) {
	data = append([]byte(nil), data...)
	structural := structuralBytes(data)
	h := fnv.New64a()
	h.Write([]byte(name))
	seed := int64(h.Sum64())
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		pick := func() int {
			if len(structural) > 0 && rng.Intn(4) != 0 {
				return structural[rng.Intn(len(structural))]
			}
			return rng.Intn(len(data))
		}
		k := 1 + rng.Intn(3)
		pos, old := make([]int, k), make([]byte, k)
		for j := range pos {
			pos[j] = pick()
			old[j] = data[pos[j]]
			if rng.Intn(2) == 0 {
				data[pos[j]] ^= 1 << rng.Intn(8)
			} else {
				data[pos[j]] = byte(rng.Intn(256))
			}
		}
		try(data, fmt.Sprintf("seed %d, variant %d: bytes %v changed", seed, i, pos))
		for j := k - 1; j >= 0; j-- {
			data[pos[j]] = old[j]
		}
	}
}

// loadChecked loads data and, when that succeeds, checks the model's
// invariants; a panic in load is deliberately not recovered.
func loadChecked(t *testing.T, data []byte, format string, args ...any) {
	t.Helper()
	m, err := load(data)
	if err != nil {
		return
	}
	if err := checkInvariants(m, len(data)); err != nil {
		t.Errorf(format+": loaded model breaks an invariant: %v", append(args, err)...)
	}
}

// prefixLengths returns every length below min(size, all) and spread
// lengths evenly over the rest, in increasing order without repeats.
func prefixLengths(size, all, spread int) []int {
	var out []int
	for n := 0; n < size && n < all; n++ {
		out = append(out, n)
	}
	if size <= all {
		return out
	}
	for i := 0; i < spread; i++ {
		n := all + int(int64(size-all)*int64(i)/int64(spread))
		if n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return out
}

// structuralBytes lists the positions of data outside the contents of
// its constant buffers: tables, vtables, vectors, strings and offsets.
// It returns nil when data does not load.
func structuralBytes(data []byte) []int {
	if _, err := load(data); err != nil {
		return nil
	}
	inData := make([]bool, len(data))
	model := schema.GetRootAsModel(data, 0)
	var b schema.Buffer
	for i := 0; i < model.BuffersLength(); i++ {
		model.Buffers(&b, i)
		tab := b.Table()
		if o := tab.Offset(4); o != 0 {
			start := int(tab.Vector(flatbuffers.UOffsetT(o)))
			for p := start; p < start+b.DataLength(); p++ {
				inData[p] = true
			}
		}
	}
	var out []int
	for p, d := range inData {
		if !d {
			out = append(out, p)
		}
	}
	return out
}

// TestSetMetadataDamagedNoPanic feeds truncated and bit-flipped variants
// of the test models and the small corpus models to setMetadata, which
// has no recover. A variant it accepts must give a model that loads, with
// the entry set.
func TestSetMetadataDamagedNoPanic(t *testing.T) {
	inputs := fuzzSeeds(t)
	prefixes, flips := 60, 100
	if testing.Short() || raceEnabled {
		prefixes, flips = 15, 25
	}
	payload := []byte{1, 0, 0, 0, 0, 1, 0, 0}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			try := func(data []byte, what string) {
				out, _, err := setMetadata(data, "OfflineMemoryAllocation", payload)
				if err != nil {
					return
				}
				m, err := load(out)
				if err != nil {
					t.Errorf("%s: the rewritten model does not load: %v", what, err)
					return
				}
				if !hasMetadata(m, "OfflineMemoryAllocation", payload) {
					t.Errorf("%s: the rewritten model lacks the entry", what)
				}
			}
			for i := 0; i < prefixes; i++ {
				n := len(in.data) * i / prefixes
				try(in.data[:n:n], fmt.Sprintf("prefix of %d bytes", n))
			}
			eachFlip(in.name, in.data, flips, try)
		})
	}
}

// hasMetadata reports whether m has an entry name holding data.
func hasMetadata(m *graph.Model, name string, data []byte) bool {
	for _, md := range m.Metadata {
		if md.Name == name && bytes.Equal(m.Buffers[md.Buffer].Data, data) {
			return true
		}
	}
	return false
}
