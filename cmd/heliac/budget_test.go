package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/plan/dsa"
	"github.com/heliac/heliac/tflite"
)

// modelOf returns a model whose scratch tensors are p's buffers: tensor i
// has Buffers[i].Size bytes and lives over the buffer's steps, renumbered
// in order (the step after main's inputs' is the first). Each step runs one
// operator that writes the tensors starting there and reads those that end
// there.
func modelOf(p dsa.Problem) *graph.Model {
	var ends []int64
	for _, b := range p.Buffers {
		ends = append(ends, b.Start, b.End)
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	step := func(v int64) int { i, _ := slices.BinarySearch(ends, v); return i }
	ops := make([]graph.Op, len(ends)-1)
	for k := range ops {
		ops[k] = graph.Op{Code: 0, CodeName: "ADD", Version: 1, Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{}, Intermediates: []graph.TensorID{}}
	}
	sg := graph.Subgraph{Name: "main", Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{}}
	for i, b := range p.Buffers {
		id := graph.TensorID(i)
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "t", Type: graph.Int8, Shape: []int32{int32(b.Size)}, Size: b.Size})
		first, last := step(b.Start), step(b.End)-1
		ops[first].Outputs = append(ops[first].Outputs, id)
		if last > first {
			ops[last].Inputs = append(ops[last].Inputs, id)
		}
	}
	sg.Ops = ops
	return &graph.Model{Version: 3, Subgraphs: []graph.Subgraph{sg}, Buffers: []graph.Buffer{{}}}
}

// TestTimeBudget checks that running out of time is not a failure: with
// --time-limit far too short, compile and pack give their best valid
// placement, say the bound is not proven, and other planners ignore the
// budget; a budget that is not positive is a usage error.
func TestTimeBudget(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.csv")
	require.NoError(t, os.WriteFile(in, []byte(staircase), 0o644))
	out := filepath.Join(dir, "out")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a regular expression
		stderr string
	}{
		{"pack: best out of time", []string{"pack", in, "--time-limit", "1ns"}, exitOK, `^height=90 lower_bound=90 buffers=5 seconds=[0-9.]+ optimal=true\n$`, ""},
		{"pack: tflm ignores the budget", []string{"pack", in, "--strategy", "tflm", "--time-limit", "1ns"}, exitOK, `^height=90 .* optimal=true\n$`, ""},
		{"pack: linear too", []string{"pack", in, "--strategy", "linear", "--time-limit", "1ns"}, exitOK, `^height=150 .* optimal=false\n$`, ""},
		{"pack: zero", []string{"pack", in, "--time-limit", "0"}, exitUsage, "", "heliac: pack: --time-limit must be positive, got 0s\n"},
		{"pack: negative", []string{"pack", in, "--time-limit", "-1s"}, exitUsage, "", "heliac: pack: --time-limit must be positive, got -1s\n"},
		{"pack: negative capacity", []string{"pack", in, "--capacity", "-1"}, exitUsage, "", "heliac: pack: --capacity must be 0 (unbounded) or more, got -1\n"},
		{"compile: best out of time", []string{helloWorld, "-o", out, "--time-limit", "1ns"}, exitOK, `scratch +SRAM +32 +32 `, ""},
		{"compile: tflm ignores the budget", []string{helloWorld, "-o", out, "--planner", "tflm", "--time-limit", "1ns"}, exitOK, `scratch +SRAM +32 +32 `, ""},
		{"compile: zero", []string{helloWorld, "-o", out, "--time-limit", "0"}, exitUsage, "", "heliac: --time-limit must be positive, got 0s\n"},
		{"compile: negative", []string{helloWorld, "-o", out, "--time-limit", "-3s"}, exitUsage, "", "heliac: --time-limit must be positive, got -3s\n"},
		{"compile: no unit", []string{helloWorld, "-o", out, "--time-limit", "5"}, exitUsage, "",
			"heliac: invalid argument \"5\" for \"--time-limit\" flag: 5 has no unit: write 5s for seconds or 5ms for milliseconds\n"},
		{"pack: not a duration", []string{"pack", in, "--time-limit", "soon"}, exitUsage, "",
			"heliac: invalid argument \"soon\" for \"--time-limit\" flag: soon is not a duration (such as 2s, 500ms or 1m30s)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runHeliac(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Regexp(t, regexp.MustCompile(tt.stdout), stdout)
			assert.Equal(t, tt.stderr, stderr)
		})
	}
}

// TestTimeBudgetHardProblem plans a model whose scratch tensors are
// MiniMalloc's problem D, whose bound Best cannot reach, with 10ms to
// search: the compile succeeds and the summary says the bound is not
// proven and why; pack says so too.
func TestTimeBudgetHardProblem(t *testing.T) {
	csv := filepath.Join(corpus.Require(t), "bench", "dsa", "D.1048576.csv")
	f, err := os.Open(csv)
	require.NoError(t, err)
	p, _, err := dsa.ReadCSV(f)
	f.Close()
	require.NoError(t, err)
	data, err := tflite.Encode(modelOf(p), tflite.EncodeOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	model := filepath.Join(dir, "d.tflite")
	require.NoError(t, os.WriteFile(model, data, 0o644))

	code, stdout, stderr := runHeliac(model, "-o", filepath.Join(dir, "out"), "--time-limit", "10ms")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "  scratch SRAM: bound not proven: search stopped after 10ms, with the best placement found by then "+
		"(raise --time-limit to search longer)\n")

	code, stdout, stderr = runHeliac("pack", csv, "--time-limit", "1ns")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^height=\d+ lower_bound=986112 buffers=213 seconds=[0-9.]+ optimal=false\n$`, stdout)
}
