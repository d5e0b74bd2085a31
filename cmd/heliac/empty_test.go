package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/zoo"
)

// emptyModel writes a model of one subgraph with no tensors and no
// operators into dir.
func emptyModel(t *testing.T, dir string) string {
	t.Helper()
	data, err := tflite.Encode(&graph.Model{Version: tflite.SchemaVersion, Subgraphs: []graph.Subgraph{{}}}, tflite.EncodeOptions{})
	require.NoError(t, err)
	path := filepath.Join(dir, "empty.tflite")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// TestCompileEmptyModel: a model with nothing to plan compiles to an empty
// plan, with every output, and its set verifies.
func TestCompileEmptyModel(t *testing.T) {
	model := emptyModel(t, t.TempDir())
	out := t.TempDir()
	code, stdout, stderr := runHeliac(model, "-o", out, "--emit-tflite", "--report")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "0 tensor(s) placed")
	for _, f := range []string{"empty.h", "empty.c", "empty.plan.json", "empty.tflite", "empty.report.html"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	code, _, stderr = runHeliac("verify", model, filepath.Join(out, "empty.plan.json"))
	assert.Equal(t, exitOK, code, stderr)
	code, _, stderr = runHeliac("inspect", filepath.Join(out, "empty.tflite"))
	assert.Equal(t, exitOK, code, stderr)
}

// TestZooPanic: a model whose compile panics (a heliac bug) is that
// model's failure, named a heliac bug with the panic's value in the
// summary and its stack on stderr; the other models, the empty one among
// them, compile and the summary files are written.
func TestZooPanic(t *testing.T) {
	dir := copyModels(t)
	emptyModel(t, dir)
	zooCompile = func(ctx context.Context, data []byte, c driver.Config) (*driver.Output, error) {
		if c.ModelName == "hello_world_int8" {
			panic("injected bug")
		}
		return driver.Compile(ctx, data, c)
	}
	t.Cleanup(func() { zooCompile = driver.Compile })
	out := filepath.Join(t.TempDir(), "zoo")
	code, stdout, stderr := runHeliac("zoo", dir, "-o", out, "-j", "2")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "hello_world_int8.tflite: heliac bug: the compile panicked: injected bug")
	assert.Contains(t, stderr, "goroutine ", "the stack")
	assert.Contains(t, stdout, "failed hello_world_int8: heliac bug")
	rows := readSummary(t, out)
	require.Len(t, rows, 8)
	for _, r := range rows {
		if r.Model == "hello_world_int8" {
			assert.Equal(t, zoo.Failed, r.Status)
			assert.Contains(t, r.Error, "heliac bug")
			assert.Contains(t, r.Error, "injected bug")
			continue
		}
		assert.Equal(t, zoo.OK, r.Status, r.Model)
		assert.Empty(t, r.Error, r.Model)
	}
	csv, err := os.ReadFile(filepath.Join(out, "summary.csv"))
	require.NoError(t, err)
	assert.Equal(t, 9, strings.Count(string(csv), "\n"), "a header and a line per model")
	assert.Contains(t, string(csv), "empty,")
}

// TestSummaryTFLMCannotRun: for a model TFLM cannot run (RANK, which TFLM
// registers no kernel for), --emit-tflite's summary gives no tensor_arena
// figure and says why, naming the operator.
func TestSummaryTFLMCannotRun(t *testing.T) {
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{{Name: "x", Type: graph.Float32, Shape: []int32{1, 4}}, {Name: "rank", Type: graph.Int32, Shape: []int32{}}},
		Ops:     []graph.Op{{Code: 110, CodeName: "RANK", Version: 1, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}},
		Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{1},
	}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	model := filepath.Join(dir, "rank.tflite")
	require.NoError(t, os.WriteFile(model, data, 0o644))
	code, stdout, stderr := runHeliac(model, "-o", t.TempDir(), "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "no tensor_arena figure: TFLM (tflite-micro@90b983c) cannot run this model: operator 0:0 RANK: TFLM has no kernel for it (\"Didn't find op for builtin opcode 'RANK'\")")
}

// TestREADMECommands runs the README's first commands (the block after
// "<!-- README commands -->"): make build and make test are targets of
// the Makefile, and the line that runs bin/heliac on a bundled model
// runs, from the checkout's root, with the output the README promises.
func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "<!-- README commands -->\n```sh\n")
	require.True(t, ok, "README.md has its commands block")
	block, _, _ = strings.Cut(block, "```")
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	var ran bool
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		f := strings.Fields(cmd)
		switch {
		case len(f) == 2 && f[0] == "make":
			assert.Contains(t, string(mk), "\n"+f[1]+":", "the Makefile has the README's target %q", f[1])
		case len(f) > 1 && f[0] == "bin/heliac":
			args := f[1:]
			for i, a := range args {
				if strings.HasPrefix(a, "testdata/") {
					args[i] = filepath.Join("..", "..", a)
				}
				if a == "-o" {
					args[i+1] = t.TempDir()
				}
			}
			code, stdout, stderr := runHeliac(args...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "hello_world_int8.tflite.h")
			ran = true
		default:
			t.Errorf("README command %q: the test does not know how to check it", line)
		}
	}
	assert.True(t, ran, "the README runs heliac on a bundled model")
}
