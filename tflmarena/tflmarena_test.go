package tflmarena

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// TestRunReplaysTheAllocator checks the replay against hand-worked
// arenas: a persistent buffer takes the end of the arena aligned down, a
// temporary fails past the tail, a head resize needs the temporaries
// reset.
func TestRunReplaysTheAllocator(t *testing.T) {
	steps := []step{{opPersistent, 72, 8}, {opResize, 192, 8}, {opTemp, 64, 8}}
	ok, tail := run(steps, 336)
	assert.True(t, ok)
	assert.Equal(t, int64(72), tail)
	ok, _ = run(steps, 320) // 192 + 64 + 72 = 328 > 320
	assert.False(t, ok)
	ok, _ = run([]step{{opTemp, 16, 8}, {opResize, 16, 8}}, 1024)
	assert.False(t, ok, "a resize with temporaries outstanding fails, as ResizeBuffer does")
}

// TestComputeRefusesUnknownOperators: an operator the kernel data does not
// know is an error naming it, not a guess.
func TestComputeRefusesUnknownOperators(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Name: "a", Type: graph.Float32, Shape: []int32{1}, Size: 4}},
		Ops:     []graph.Op{{Code: graph.Custom, CustomName: "Mystery", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{0}}},
	}}}
	_, err := Compute(m, 16, Host64)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "custom Mystery")
}

// TestCorpusHostExact is the done-when check on the host for the original
// models: with the head TFLM's greedy planner uses (tflm_run's
// planner_max_bytes), heliac's host64 arena is exactly the smallest with
// which tflm_run allocates and invokes the model: N works, N-16 does not,
// and the tail is TFLM's.
func TestCorpusHostExact(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	runAt := func(file string, n int64) *tflmrun.Result {
		r, err := tflmrun.Run(context.Background(), tool, file, tflmrun.Options{Invokes: 1, ArenaBytes: n})
		require.NoError(t, err)
		return r
	}
	exact := 0
	for _, row := range rows {
		if row["status"] != "ok" {
			continue
		}
		name := row["model"]
		if testing.Short() && len(name)%4 != 0 {
			continue
		}
		file := filepath.Join(dir, "corpus", name)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err, name)
		ref := runAt(file, 0)
		require.True(t, ref.OK(), name)
		a, err := Compute(m, ref.Int("planner_max_bytes"), Host64)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		assert.Equal(t, ref.Int("tail_bytes"), a.Tail, "%s: tail", name)
		works, less := runAt(file, a.Bytes).OK(), runAt(file, a.Bytes-16).OK()
		if works && !less {
			exact++
		} else {
			t.Errorf("%s: arena %d: works %v, 16 bytes less works %v", name, a.Bytes, works, less)
		}
	}
	t.Logf("host64: %d models exact", exact)
}
