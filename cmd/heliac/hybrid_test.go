package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
)

// writeHybrid writes a hybrid model: a FULLY_CONNECTED of FLOAT32
// activations with INT8 weights, then a float one, into dir.
func writeHybrid(t *testing.T, dir string) string {
	t.Helper()
	q := &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{0}}
	m := &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 16)}, {Data: make([]byte, 64)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				{Name: "input", Type: graph.Float32, Shape: []int32{1, 4}},
				{Name: "dense/weights", Type: graph.Int8, Shape: []int32{4, 4}, Buffer: 1, Quantization: q},
				{Name: "hidden", Type: graph.Float32, Shape: []int32{1, 4}},
				{Name: "head/weights", Type: graph.Float32, Shape: []int32{4, 4}, Buffer: 2},
				{Name: "output", Type: graph.Float32, Shape: []int32{1, 4}},
			},
			Ops: []graph.Op{
				{Code: 9, Version: 1, Inputs: []graph.TensorID{0, 1, graph.NoTensor}, Outputs: []graph.TensorID{2}},
				{Code: 9, Version: 1, Inputs: []graph.TensorID{2, 3, graph.NoTensor}, Outputs: []graph.TensorID{4}},
			},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{4},
		}},
	}
	return writeModel(t, filepath.Join(dir, "hybrid.tflite"), m)
}

// TestWarnsOnHybridModels: a model TFLM's kernels refuse (FLOAT32
// activations, INT8 weights) still plans, with a warning in the summary
// that names the operator, its tensors and TFLM's source, and in --json's
// warnings; a model of one type throughout gets none.
func TestWarnsOnHybridModels(t *testing.T) {
	dir := t.TempDir()
	model := writeHybrid(t, dir)
	code, stdout, stderr := runHeliac(model, "-o", filepath.Join(dir, "out"), "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	want := `TFLM will not run this model: op 0:0 FULLY_CONNECTED: reads FLOAT32 activation 0:0 "input" (FLOAT32) with weights 0:1 "dense/weights" (INT8): TFLM's kernels refuse it`
	assert.Contains(t, stdout, "  warning: "+want)
	assert.Contains(t, stdout, "tensorflow/lite/micro/kernels/fully_connected.cc:59-66")
	assert.Contains(t, stdout, "of no use to stock TFLM until the model changes")
	assert.NotContains(t, stdout, "op 0:1", "the float operator is not hybrid")
	assert.Empty(t, stderr)

	code, stdout, stderr = runHeliac(model, "-o", filepath.Join(dir, "out"), "--json")
	require.Equal(t, exitOK, code, stderr)
	var doc struct{ Warnings []string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	if assert.Len(t, doc.Warnings, 1) {
		assert.True(t, strings.HasPrefix(doc.Warnings[0], want), doc.Warnings[0])
	}

	code, stdout, stderr = runHeliac(model, "-o", filepath.Join(dir, "out"), "-q")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout+stderr, "--quiet prints nothing on success")

	code, stdout, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "hello"), "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout+stderr, "warning", "an int8 model is not hybrid")
	code, stdout, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "hello"), "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"warnings": []`)

	tool := tflmrun.Require(t)
	res, err := tflmrun.Run(context.Background(), tool, model, tflmrun.Options{ArenaBytes: 64 << 10})
	require.NoError(t, err)
	assert.False(t, res.OK(), "stock TFLM refuses the model the warning names")
	assert.Contains(t, res.Error(), "Input type: FLOAT32 with filter type: INT8 not supported.")
}

// TestWarnsOnUint8Models: a TF1-style UINT8 corpus model, which stock TFLM
// refuses (../shared/bench/tflm-reference.tsv), gets the warning in the
// summary and in zoo's tflm_runs column.
func TestWarnsOnUint8Models(t *testing.T) {
	shared := corpus.Require(t)
	model := filepath.Join(shared, "corpus", "coral", "split_concat.tflite")
	dir := t.TempDir()
	code, stdout, stderr := runHeliac(model, "-o", filepath.Join(dir, "out"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `  warning: TFLM will not run this model: op 0:0 CONCATENATION: its input "input1" is UINT8; `+
		`TFLM's kernel takes FLOAT32, INT8, INT16, INT32, INT64 or BOOL (tflite-micro@90b983c: tensorflow/lite/micro/kernels/concatenation.cc:148-151 (ConcatenationPrepare))`)

	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for _, m := range []string{model, helloWorld} {
		data, err := os.ReadFile(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in, filepath.Base(m)), data, 0o644))
	}
	code, _, stderr = runHeliac("zoo", in, "-o", filepath.Join(dir, "zoo"), "-j", "1", "-q")
	require.Equal(t, exitOK, code, stderr)
	csv, err := os.ReadFile(filepath.Join(dir, "zoo", "summary.csv"))
	require.NoError(t, err)
	assert.Contains(t, string(csv), `,false,"op 0:0 CONCATENATION: its input ""input1"" is UINT8;`)
	assert.Regexp(t, `\nhello_world_int8,[^\n]*,true,\n`, string(csv), "TFLM runs it")
}
