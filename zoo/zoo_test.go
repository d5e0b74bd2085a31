package zoo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/zoo"
)

// write creates dir/rel with data.
func write(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	path := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestFind finds *.tflite files and TFLite flatbuffers of other names,
// recursively, names them by their path below the folder, and refuses two
// of one name.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	write(t, dir, "a/one.tflite", model)
	write(t, dir, "b/two.bin", model)          // a flatbuffer by its identifier
	write(t, dir, "b/notes.txt", []byte("hi")) // not a model
	write(t, dir, "b/short.bin", []byte("TFL"))
	write(t, dir, "c.TFLITE", []byte("garbage")) // by its name: found, fails to compile later
	got, err := zoo.Find([]string{dir})
	require.NoError(t, err)
	size := int64(len(model))
	assert.Equal(t, []zoo.Model{
		{Path: filepath.Join(dir, "a/one.tflite"), Name: "a/one", Size: size},
		{Path: filepath.Join(dir, "b/two.bin"), Name: "b/two", Size: size},
		{Path: filepath.Join(dir, "c.TFLITE"), Name: "c", Size: 7},
	}, got)

	// Several roots: each folder's models under its own name; a file as itself.
	other := t.TempDir()
	write(t, other, "one.tflite", model)
	got, err = zoo.Find([]string{filepath.Join(dir, "a"), other, filepath.Join(dir, "b/two.bin")})
	require.NoError(t, err)
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	assert.ElementsMatch(t, []string{"a/one", filepath.Base(other) + "/one", "two"}, names)
	assert.IsNonDecreasing(t, names, "sorted by name")

	write(t, dir, "a/one.bin", model)
	_, err = zoo.Find([]string{dir})
	require.ErrorContains(t, err, "would both write the folder a/one")
	_, err = zoo.Find([]string{filepath.Join(dir, "missing")})
	require.Error(t, err)
}

// TestRun compiles models in parallel, keeps going past a failure, returns
// results in the models' order and reports each as it finishes.
func TestRun(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	models := []zoo.Model{{Path: "a", Name: "a"}, {Path: "bad", Name: "bad"}, {Path: "c", Name: "c"}}
	var running, most atomic.Int32
	compile := func(ctx context.Context, m zoo.Model) (*driver.Output, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			old := most.Load()
			if n <= old || most.CompareAndSwap(old, n) {
				break
			}
		}
		if m.Name == "bad" {
			return nil, errors.New("corrupt model\nwith details")
		}
		// c for TFLM: its row has TFLM's whole arena too.
		return driver.Compile(ctx, data, driver.Config{ModelName: m.Name, EmitTFLite: m.Name == "c"})
	}
	var seen []string
	results := zoo.Run(context.Background(), models, 2, compile, func(r zoo.Result) { seen = append(seen, r.Model.Name) })
	require.Len(t, results, 3)
	assert.ElementsMatch(t, []string{"a", "bad", "c"}, seen)
	assert.LessOrEqual(t, most.Load(), int32(2), "at most -j at once")
	for i, r := range results {
		assert.Equal(t, models[i], r.Model)
	}
	require.Error(t, results[1].Err)
	require.NotNil(t, results[0].Output)
	require.NotNil(t, results[2].Output)

	rows := zoo.Summarize(results)
	assert.Equal(t, zoo.OK, rows[0].Status)
	assert.Equal(t, zoo.Failed, rows[1].Status)
	assert.Equal(t, "corrupt model", rows[1].Error, "the error's first line")
	var bound, arena int64
	for _, a := range results[0].Output.Plan.Arenas {
		if a.Role.String() == "scratch" {
			bound, arena = bound+a.LowerBound, arena+a.Size
		}
	}
	assert.Equal(t, bound, rows[0].Bound)
	assert.Equal(t, arena, rows[0].Arena)
	assert.Equal(t, results[0].Output.Plan.Schedule.Steps, rows[0].Steps)
	assert.Equal(t, len(results[0].Output.Plan.Arenas), rows[0].Arenas)
	own := results[0].Output.TFLM
	require.NotNil(t, own, "one scratch arena: compared with TFLM's")
	assert.Equal(t, own.OwnHead, rows[0].TFLMOwnHead)
	assert.Equal(t, arena-own.OwnHead, rows[0].VsTFLM, "the plan's head minus TFLM's own")
	assert.Equal(t, own.Kept, rows[0].Kept)

	csv := string(zoo.CSV(rows))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "model,path,status,error,steps,arenas,bound,arena,over_bound,kernel_scratch,milliseconds,timed_out,"+
		"tflm_own_head,vs_tflm,vs_tflm_percent,kept,tflm_target,tflm_arena_bytes,tflm_own_arena_bytes,"+
		"stripe_k,extra_macs,extra_macs_percent,tflm_runs,tflm_refuses", lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "bad,bad,failed,corrupt model,0,0,0,0,0.00,0,"), lines[2])
	assert.True(t, strings.HasSuffix(lines[2], ",false,,,,,,,,,,,,"), "no TFLM or stripe figures for a failed model: %s", lines[2])
	assert.True(t, strings.HasSuffix(lines[1], fmt.Sprintf(",%d,%d,%.4f,%s,,,,,,,true,", rows[0].TFLMOwnHead, rows[0].VsTFLM, rows[0].VsTFLMPercent, rows[0].Kept)),
		"no whole arena without --emit-tflite: %s", lines[1])
	whole := results[2].Output.TFLMArena
	require.NotNil(t, whole, "c was compiled for TFLM")
	assert.Equal(t, whole.Emitted.Bytes, rows[2].TFLMArenaBytes)
	assert.Equal(t, whole.Original.Bytes, rows[2].TFLMOwnArenaBytes)
	assert.Positive(t, rows[2].TFLMArenaBytes)
	assert.True(t, strings.HasSuffix(lines[3], fmt.Sprintf(",%s,%d,%d,,,,true,", whole.Target, whole.Emitted.Bytes, whole.Original.Bytes)), lines[3])
	js, err := zoo.JSON(rows)
	require.NoError(t, err)
	var doc struct{ Models []zoo.Row }
	require.NoError(t, json.Unmarshal(js, &doc))
	assert.Equal(t, rows, doc.Models)
}

// TestRunLargestFirst: with one goroutine, models start in order of
// descending size, ties in their order; results stay in the models' order.
func TestRunLargestFirst(t *testing.T) {
	models := []zoo.Model{{Name: "a", Size: 1}, {Name: "b", Size: 30}, {Name: "c", Size: 2}, {Name: "d", Size: 30}}
	var started []string
	results := zoo.Run(context.Background(), models, 1, func(ctx context.Context, m zoo.Model) (*driver.Output, error) {
		started = append(started, m.Name)
		return nil, errors.New("no compiler here")
	}, nil)
	assert.Equal(t, []string{"b", "d", "c", "a"}, started)
	for i, r := range results {
		assert.Equal(t, models[i], r.Model)
	}
}

// TestRunCanceled: models not started when ctx is canceled get its error.
func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	models := []zoo.Model{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	results := zoo.Run(ctx, models, 1, func(ctx context.Context, m zoo.Model) (*driver.Output, error) {
		cancel()
		return nil, nil
	}, nil)
	require.Len(t, results, 3)
	assert.ErrorIs(t, results[2].Err, context.Canceled)
}

// TestRunRecoversPanic: a compile that panics is that model's failure, a
// *PanicError with the value and the stack, and the others finish.
func TestRunRecoversPanic(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	models := []zoo.Model{{Name: "a"}, {Name: "boom"}, {Name: "c"}}
	for _, jobs := range []int{1, 2} {
		results := zoo.Run(context.Background(), models, jobs, func(ctx context.Context, m zoo.Model) (*driver.Output, error) {
			if m.Name == "boom" {
				var zero int
				_ = 1 / zero // a runtime error, as a heliac bug would raise
			}
			return driver.Compile(ctx, data, driver.Config{ModelName: m.Name})
		}, nil)
		require.Len(t, results, 3)
		var pe *zoo.PanicError
		require.ErrorAs(t, results[1].Err, &pe)
		assert.Nil(t, results[1].Output)
		assert.Contains(t, fmt.Sprint(pe.Value), "integer divide by zero")
		assert.Contains(t, string(pe.Stack), "zoo_test.go", "the stack reaches the panic")
		rows := zoo.Summarize(results)
		assert.Equal(t, []string{zoo.OK, zoo.Failed, zoo.OK}, []string{rows[0].Status, rows[1].Status, rows[2].Status})
		assert.Contains(t, rows[1].Error, "heliac bug")
		assert.Contains(t, rows[1].Error, "integer divide by zero")
	}
}

// TestSummarizeStripes: a model compiled stripe by stripe gets its
// regions' k, the extra MACs and their share of the original model's MACs
// (the rewritten model's less the extra) in the last three columns.
func TestSummarizeStripes(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "m"})
	require.NoError(t, err)
	// A rewritten model in miniature: one CONV_2D of 2x2x3 output, 1x1
	// filter over 4 channels (48 MACs), whose stripes computed 8 again:
	// 8 of the original's 40.
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Shape: []int32{1, 2, 2, 4}}, {Shape: []int32{3, 1, 1, 4}}, {Shape: []int32{1, 2, 2, 3}}},
		Ops:     []graph.Op{{Code: graph.Conv2D, CodeName: "CONV_2D", Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}}},
	}}, Stripes: []graph.StripeRegion{{Rows: [][2]int32{{0, 1}, {1, 2}}, ExtraMACs: 5}, {Rows: [][2]int32{{0, 1}, {1, 2}, {2, 3}}, ExtraMACs: 3}}}
	striped := *out
	striped.Model = m
	rows := zoo.Summarize([]zoo.Result{{Model: zoo.Model{Name: "plain"}, Output: out}, {Model: zoo.Model{Name: "striped"}, Output: &striped}})
	assert.Empty(t, rows[0].StripeK)
	assert.Equal(t, []int{2, 3}, rows[1].StripeK)
	assert.Equal(t, int64(8), rows[1].ExtraMACs)
	assert.InDelta(t, 20.0, rows[1].ExtraMACsPercent, 1e-9)
	lines := strings.Split(strings.TrimSpace(string(zoo.CSV(rows))), "\n")
	assert.True(t, strings.HasSuffix(lines[1], ",,,,true,"), lines[1])
	assert.True(t, strings.HasSuffix(lines[2], ",2+3,8,20.00,true,"), lines[2])
	js, err := zoo.JSON(rows)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"stripe_k": [
        2,
        3
      ],
      "extra_macs": 8,
      "extra_macs_percent": 20`)
	assert.Equal(t, 1, strings.Count(string(js), "stripe_k"), "omitted for the plain model")
}

// TestSummarizeTFLMRefuses: a model stock TFLM will not run (a UINT8
// CONV_2D) is ok, with tflm_runs false and the first reason and how many
// more in tflm_refuses; one TFLM runs has tflm_runs true.
func TestSummarizeTFLMRefuses(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "m"})
	require.NoError(t, err)
	require.Empty(t, out.TFLMRefusals, "TFLM runs hello_world")
	refused := *out
	refused.TFLMRefusals = []kernels.Refusal{
		{Op: graph.OpRef{Op: 2}, Name: "CONV_2D", Tensor: graph.NoTensor, Reason: `its input "x" is UINT8`, Source: "conv_common.cc"},
		{Op: graph.OpRef{Op: 3}, Name: "CONV_2D", Tensor: graph.NoTensor, Reason: `its input "y" is UINT8`, Source: "conv_common.cc"},
	}
	rows := zoo.Summarize([]zoo.Result{{Model: zoo.Model{Name: "runs"}, Output: out}, {Model: zoo.Model{Name: "uint8"}, Output: &refused}})
	require.NotNil(t, rows[0].TFLMRuns)
	require.NotNil(t, rows[1].TFLMRuns)
	assert.True(t, *rows[0].TFLMRuns)
	assert.Empty(t, rows[0].TFLMRefuses)
	assert.False(t, *rows[1].TFLMRuns)
	assert.Equal(t, `op 0:2 CONV_2D: its input "x" is UINT8 (conv_common.cc) (and 1 more)`, rows[1].TFLMRefuses)
	lines := strings.Split(strings.TrimSpace(string(zoo.CSV(rows))), "\n")
	assert.True(t, strings.HasSuffix(lines[1], ",true,"), lines[1])
	assert.True(t, strings.HasSuffix(lines[2], `,false,"op 0:2 CONV_2D: its input ""x"" is UINT8 (conv_common.cc) (and 1 more)"`), lines[2])
	js, err := zoo.JSON(rows)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"tflm_runs": false,
      "tflm_refuses": "op 0:2 CONV_2D`)
}
