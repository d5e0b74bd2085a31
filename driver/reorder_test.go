package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

// branchesModel is in -> RELU -> a, in -> TANH -> b, ADD(a, b) -> out: the
// two unary operators may run in either order.
func branchesModel(t *testing.T) []byte {
	t.Helper()
	f32 := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, 32}, Size: 128}
	}
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in"), f32("a"), f32("b"), f32("out")},
		Ops: []graph.Op{
			{Code: 19, Version: 1, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},   // RELU
			{Code: 28, Version: 1, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{2}},   // TANH
			{Code: 0, Version: 1, Inputs: []graph.TensorID{1, 2}, Outputs: []graph.TensorID{3}}, // ADD
		},
		Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{3},
	}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestEmitTFLiteWritesTheSchedulesOrder: a plan whose schedule runs a
// subgraph's operators in another order writes the model with its
// operators listed in that order (TFLM runs them as listed), the offline
// plan unchanged in form; TFLM computes the original's outputs with it.
func TestEmitTFLiteWritesTheSchedulesOrder(t *testing.T) {
	data := branchesModel(t)
	cfg := driver.Config{ModelName: "branches", Version: "test", EmitTFLite: true,
		Liveness: liveness.Options{Order: [][]graph.OpIndex{{1, 0, 2}}}}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	require.True(t, out.TFLite.Reordered)
	m, err := tflite.Load(out.TFLite.Data)
	require.NoError(t, err)
	var codes []graph.Opcode
	for _, op := range m.Subgraphs[0].Ops {
		codes = append(codes, op.Code)
	}
	assert.Equal(t, []graph.Opcode{28, 19, 0}, codes, "TANH, RELU, ADD")

	plain, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "branches", Version: "test", EmitTFLite: true})
	require.NoError(t, err)
	assert.False(t, plain.TFLite.Reordered, "the model's own order is kept as it is")

	tool := tflmrun.Require(t)
	dir := t.TempDir()
	orig, mine := filepath.Join(dir, "branches.tflite"), filepath.Join(dir, "branches.heliac.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
	opts := tflmrun.Options{Seed: 2, Invokes: interopInvokes, ArenaBytes: 64 << 10, Trace: true}
	want, err := tflmrun.Run(context.Background(), tool, orig, opts)
	require.NoError(t, err)
	got, err := tflmrun.Run(context.Background(), tool, mine, opts)
	require.NoError(t, err)
	require.True(t, got.OK(), "%s", got.Error())
	assert.Equal(t, want.Outputs(), got.Outputs())
	assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "the trace is keyed by tensor, so a reordered run compares")
	assert.Equal(t, int64(out.TFLite.Offline.Planned), got.Int("planner_offline_buffers"))
}
