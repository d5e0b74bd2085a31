package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// twoHandleModel reads a resource variable through a VAR_HANDLE with
// container "c" and assigns it through one without a container, of the
// same shared_name, which TFLM takes for the same variable (TFLM 90b983c,
// micro_resource_variable.cc, FindId):
//
//	0 VAR_HANDLE c/state -> h1       4 RELU in1 -> a                 (16x16)
//	1 VAR_HANDLE state   -> h2       5 RELU a -> b                   (16x16)
//	2 READ_VARIABLE h1 -> old (16)   6 SLICE b, [0 0], [1 16] -> s   (1x16)
//	3 ASSIGN_VARIABLE h2, in0 (16)   7 ADD old, s -> out             (1x16)
//
// Each invocation adds the previous one's in0 to a row of b. Assigning
// first and reading last keeps both in0 and old out of the RELUs' span,
// which is what a memory order that took the two handles for two variables
// did; with one variable, one of them is live there.
func twoHandleModel(t *testing.T) []byte {
	t.Helper()
	f32 := func(name string, shape ...int32) graph.Tensor {
		size, err := graph.ByteSize(graph.Float32, shape)
		require.NoError(t, err)
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: shape, Size: size}
	}
	res := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Resource, Shape: []int32{}}
	}
	ids := func(v ...graph.TensorID) []graph.TensorID { return append([]graph.TensorID{}, v...) }
	op := func(code graph.Opcode, in, out []graph.TensorID) graph.Op {
		return graph.Op{Code: code, Version: 1, Inputs: in, Outputs: out, Intermediates: ids()}
	}
	const add, relu, slice = graph.Opcode(0), graph.Opcode(19), graph.Opcode(65) // schema.fbs, BuiltinOperator
	h1, h2 := op(graph.VarHandle, ids(), ids(2)), op(graph.VarHandle, ids(), ids(3))
	h1.Resource = &graph.ResourceName{Container: "c", SharedName: "state", HasContainer: true}
	h2.Resource = &graph.ResourceName{SharedName: "state"}
	begin, size := graph.Tensor{Name: "begin", Type: graph.Int32, Shape: []int32{2}, Buffer: 1, Size: 8},
		graph.Tensor{Name: "size", Type: graph.Int32, Shape: []int32{2}, Buffer: 2, Size: 8}
	m := &graph.Model{
		Version: tflite.SchemaVersion,
		Subgraphs: []graph.Subgraph{{
			Name: "main",
			Tensors: []graph.Tensor{f32("in0", 16), f32("in1", 16, 16), res("h1"), res("h2"), f32("old", 16),
				f32("a", 16, 16), f32("b", 16, 16), begin, size, f32("s", 1, 16), f32("out", 1, 16)},
			Ops: []graph.Op{
				h1, h2,
				op(graph.ReadVariable, ids(2), ids(4)),
				op(graph.AssignVariable, ids(3, 0), ids()),
				op(relu, ids(1), ids(5)),
				op(relu, ids(5), ids(6)),
				op(slice, ids(6, 7, 8), ids(9)),
				op(add, ids(4, 9), ids(10)),
			},
			Inputs: ids(0, 1), Outputs: ids(10),
		}},
		Buffers: []graph.Buffer{{}, {Data: []byte{0, 0, 0, 0, 0, 0, 0, 0}}, {Data: []byte{1, 0, 0, 0, 16, 0, 0, 0}}},
	}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestVariableAcrossContainers compiles twoHandleModel with --emit-tflite:
// the read stays before the assignment, the handle without a container
// stays without one, and stock TFLM computes the same outputs with
// heliac's model as with the original, over three invocations.
func TestVariableAcrossContainers(t *testing.T) {
	data := twoHandleModel(t)
	cfg := referenceConfig(t)
	cfg.ModelName, cfg.Version, cfg.EmitTFLite = "two_handles", "test", true
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	order := out.Plan.Schedule.Order[0]
	assert.Less(t, slices.Index(order, 2), slices.Index(order, 3), "READ_VARIABLE runs before ASSIGN_VARIABLE: %v", order)

	emitted, err := tflite.Load(out.TFLite.Data)
	require.NoError(t, err)
	var names []graph.ResourceName
	for _, op := range emitted.Subgraphs[0].Ops {
		if op.Resource != nil {
			names = append(names, *op.Resource)
		}
	}
	assert.ElementsMatch(t, []graph.ResourceName{{Container: "c", SharedName: "state", HasContainer: true}, {SharedName: "state"}}, names)

	tool := tflmrun.Require(t)
	dir := t.TempDir()
	orig, mine := filepath.Join(dir, "orig.tflite"), filepath.Join(dir, "heliac.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
	for _, seed := range interopSeeds {
		opts := tflmrun.Options{Seed: seed, Invokes: interopInvokes, ArenaBytes: 1 << 20}
		want, err := tflmrun.Run(context.Background(), tool, orig, opts)
		require.NoError(t, err)
		require.True(t, want.OK(), "the original model: %s", want.Error())
		got, err := tflmrun.Run(context.Background(), tool, mine, opts)
		require.NoError(t, err)
		require.True(t, got.OK(), "heliac's model: %s", got.Error())
		assert.Equal(t, want.Outputs(), got.Outputs(), "seed %d", seed)
	}
}
