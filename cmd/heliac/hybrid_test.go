package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
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
// activations, INT8 weights) still plans, with a warning on stderr that
// names the operator, its tensors and TFLM's source; a model of one type
// throughout gets none.
func TestWarnsOnHybridModels(t *testing.T) {
	dir := t.TempDir()
	model := writeHybrid(t, dir)
	code, stdout, stderr := runHeliac(model, "-o", filepath.Join(dir, "out"), "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, `heliac: warning: `+model+`: op 0:0 FULLY_CONNECTED reads FLOAT32 activation 0:0 "input" (FLOAT32) with weights 0:1 "dense/weights" (INT8): TFLM's kernels refuse it`)
	assert.Contains(t, stderr, "tensorflow/lite/micro/kernels/fully_connected.cc:59-66")
	assert.NotContains(t, stderr, "op 0:1", "the float operator is not hybrid")
	assert.NotContains(t, stdout, "warning")

	code, _, stderr = runHeliac(model, "-o", filepath.Join(dir, "out"), "-q")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "--quiet prints nothing on success")

	code, _, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "hello"), "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "warning", "an int8 model is not hybrid")

	tool := tflmrun.Require(t)
	res, err := tflmrun.Run(context.Background(), tool, model, tflmrun.Options{ArenaBytes: 64 << 10})
	require.NoError(t, err)
	assert.False(t, res.OK(), "stock TFLM refuses the model the warning names")
	assert.Contains(t, res.Error(), "Input type: FLOAT32 with filter type: INT8 not supported.")
}
