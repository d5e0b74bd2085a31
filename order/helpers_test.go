package order_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
	"github.com/heliac/heliac/tflite"
)

// livePeak returns the peak of live scratch bytes of m from liveness's
// lifetimes under opts: each alias group (views and in-place outputs) once
// over its Group, each size rounded up to align.
func livePeak(t testing.TB, m *graph.Model, opts liveness.Options, align int64) int64 {
	t.Helper()
	lt, err := liveness.Analyze(m, opts)
	require.NoError(t, err)
	delta := make([]int64, lt.Schedule.Steps+1)
	for _, tn := range lt.Tensors {
		if tn.Class != liveness.Scratch || tn.AliasOf != nil {
			continue
		}
		size := (tn.Size + align - 1) / align * align
		delta[tn.Group.First] += size
		delta[tn.Group.Last+1] -= size
	}
	var cur, peak int64
	for _, d := range delta {
		cur += d
		peak = max(peak, cur)
	}
	return peak
}

// mode is how a test runs Schedule and liveness alike: with no in-place
// outputs, or with a kernel library's contracts (and model inputs written
// over, or not).
type mode struct {
	name      string
	kernels   *kernels.Library
	overwrite bool
}

// modes returns the modes the model tests sweep: plain, and TFLM's
// reference kernels with and without --overwrite-inputs.
func modes(t testing.TB) []mode {
	t.Helper()
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	// The search counts exact in-place writes only (see Options.InPlace).
	lib = lib.ExactOnly()
	return []mode{{name: "plain"}, {name: "in place", kernels: lib}, {name: "in place over inputs", kernels: lib, overwrite: true}}
}

// options returns Schedule's options in mode mo: the library's contracts
// as InPlace pairs.
func (mo mode) options(m *graph.Model) order.Options {
	opts := order.Options{OverwriteInputs: mo.overwrite}
	if mo.kernels != nil {
		opts.InPlace = func(o graph.OpRef) []order.Pair {
			var out []order.Pair
			for _, p := range mo.kernels.InPlace(m, o.Subgraph, &m.Subgraphs[o.Subgraph].Ops[o.Op]) {
				out = append(out, order.Pair{Input: p.Input, Output: p.Output})
			}
			return out
		}
	}
	return opts
}

// liveness returns liveness's options in mode mo for ord.
func (mo mode) liveness(ord [][]graph.OpIndex) liveness.Options {
	return liveness.Options{Order: ord, Kernels: mo.kernels, OverwriteInputs: mo.overwrite}
}

// namedModel is a model and the name tests report it by.
type namedModel struct {
	name string
	data []byte
}

// bundledModels returns the models of testdata/models.
func bundledModels(t testing.TB) []namedModel {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var out []namedModel
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		out = append(out, namedModel{strings.TrimSuffix(filepath.Base(p), ".tflite"), data})
	}
	return out
}

// corpusModels returns the models of the shared corpus that load, or skips
// the test when it is absent.
func corpusModels(t testing.TB) []namedModel {
	t.Helper()
	var out []namedModel
	for _, e := range corpus.Manifest(t) {
		data, err := os.ReadFile(e.Path)
		require.NoError(t, err)
		out = append(out, namedModel{e.File, data})
	}
	return out
}

func load(t testing.TB, data []byte) *graph.Model {
	t.Helper()
	m, err := tflite.Load(data)
	require.NoError(t, err)
	return m
}

func schedule(t testing.TB, m *graph.Model, opts order.Options) *order.Result {
	t.Helper()
	r, err := order.Schedule(context.Background(), m, opts)
	require.NoError(t, err)
	return r
}
