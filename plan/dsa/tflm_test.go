package dsa

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tflmBuffers is one bench/tflm-buffers/*.csv file: the buffers TFLM handed
// its GreedyMemoryPlanner for one model, and the offsets it chose.
type tflmBuffers struct {
	all, tensors Problem
	offsets      []int64 // TFLM's offset for each buffer of all
}

// readTFLMBuffers converts TFLM's inclusive scopes to half-open steps.
func readTFLMBuffers(t *testing.T, path string) tflmBuffers {
	rows, err := corpus.ReadCSV(path)
	require.NoError(t, err)
	var tb tflmBuffers
	for i, r := range rows {
		num := func(col string) int64 {
			v, err := strconv.ParseInt(r[col], 10, 64)
			require.NoError(t, err, "%s row %d column %s", path, i, col)
			return v
		}
		b := Buffer{Start: num("first_op"), End: num("last_op") + 1, Size: num("size_bytes"), Align: 16}
		if off := num("offline_offset"); off >= 0 {
			b.Fixed = &off
		}
		tb.all.Buffers = append(tb.all.Buffers, b)
		tb.offsets = append(tb.offsets, num("tflm_offset"))
		if r["kind"] == "tensor" {
			tb.tensors.Buffers = append(tb.tensors.Buffers, b)
		}
	}
	return tb
}

// tflmCSVName maps a model path in tflm-reference.tsv to its file in
// bench/tflm-buffers: "litert/fc_qat.bin" -> "litert_fc_qat.csv".
func tflmCSVName(model string) string {
	name := strings.TrimSuffix(model, ".bin")
	name = strings.TrimSuffix(name, ".tflite")
	return strings.ReplaceAll(name, "/", "_") + ".csv"
}

// TestGreedyMatchesTFLM runs Greedy on exactly the buffers TFLM planned for
// every corpus model it runs, and expects TFLM's arena heights (with and
// without kernel scratch) and TFLM's offsets; so does Around.
func TestGreedyMatchesTFLM(t *testing.T) {
	dir := filepath.Join(corpus.Require(t), "bench")
	ref, err := corpus.ReadTSV(filepath.Join(dir, "tflm-reference.tsv"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "tflm-buffers", "*.csv"))
	require.NoError(t, err)
	unmatched := map[string]bool{}
	for _, f := range files {
		unmatched[filepath.Base(f)] = true
	}
	var models, heights, exact, buffers, same int
	for _, row := range ref {
		if row["status"] != "ok" {
			continue
		}
		name := tflmCSVName(row["model"])
		delete(unmatched, name)
		models++
		t.Run(name, func(t *testing.T) {
			tb := readTFLMBuffers(t, filepath.Join(dir, "tflm-buffers", name))
			all, err := Greedy(context.Background(), tb.all)
			require.NoError(t, err)
			requireValid(t, tb.all, all)
			tensors, err := Greedy(context.Background(), tb.tensors)
			require.NoError(t, err)
			requireValid(t, tb.tensors, tensors)

			n := 0
			for i, off := range all.Offsets {
				if off == tb.offsets[i] {
					n++
				}
			}
			buffers += len(all.Offsets)
			same += n
			if n == len(all.Offsets) {
				exact++
			}
			hOK := assert.Equal(t, row["tflm_planner_max_bytes"], itoa(all.Height), "height, all buffers")
			hOK = assert.Equal(t, row["tflm_tensors_only_max_bytes"], itoa(tensors.Height), "height, tensors only") && hOK
			if hOK {
				heights++
			}
			assert.Equal(t, tb.offsets, all.Offsets, "offsets: %d of %d match TFLM", n, len(all.Offsets))
			around, err := Around(tb.all)
			require.NoError(t, err)
			assert.Equal(t, tb.offsets, around.Offsets, "Around's offsets")
			assert.Equal(t, row["tflm_lower_bound"], itoa(LowerBound(tb.all)), "lower bound")
		})
	}
	assert.Empty(t, unmatched, "CSV files with no ok row in tflm-reference.tsv")
	t.Logf("%d models: %d match both TFLM heights, %d match every offset (%d of %d buffers)",
		models, heights, exact, same, buffers)
}
