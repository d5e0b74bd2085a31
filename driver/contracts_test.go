package driver_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// contractsModel is a float model made to exercise, one after another,
// every in-place contract of tflm-reference on [1, 64] tensors, each
// output written over an input that dies there:
//
//	in -> ADD(in, k0) -> RELU -> RELU6 -> SUB(., k1) -> SUB(k2, .) ->
//	MUL(., k3) -> MUL(k4, .) -> LEAKY_RELU -> HARD_SWISH -> TANH ->
//	LOGISTIC -> ADD(., k6) -> ADD(k5, .) -> QUANTIZE (to int8) -> QUANTIZE (int8, another
//	scale) -> DEQUANTIZE -> out
//
// The first ADD reads the model input (written over only with
// --overwrite-inputs), and QUANTIZE from float and DEQUANTIZE change the
// element size, so they have no contract.
func contractsModel(t *testing.T) []byte {
	t.Helper()
	shape := []int32{1, 64}
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(tn graph.Tensor) graph.TensorID {
		if tn.Shape == nil {
			tn.Shape = shape
		}
		size, err := graph.ByteSize(tn.Type, tn.Shape)
		require.NoError(t, err)
		tn.Size = size
		sg.Tensors = append(sg.Tensors, tn)
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	constant := func(name string, seed float64) graph.TensorID {
		data := make([]byte, 4*64)
		for i := range 64 {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(math.Sin(seed+float64(i)))))
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		return add(graph.Tensor{Name: name, Type: graph.Float32, Buffer: graph.BufferIndex(len(m.Buffers) - 1)})
	}
	value := func(name string) graph.TensorID { return add(graph.Tensor{Name: name, Type: graph.Float32}) }
	op := func(code graph.Opcode, in []graph.TensorID, out graph.TensorID) {
		sg.Ops = append(sg.Ops, graph.Op{Code: code, Version: 1, Inputs: in, Outputs: []graph.TensorID{out}})
	}
	const (
		codeAdd, codeLogistic, codeMul, codeRelu, codeRelu6, codeTanh       graph.Opcode = 0, 14, 18, 19, 21, 28
		codeSub, codeLeakyRelu, codeQuantize, codeHardSwish, codeDequantize graph.Opcode = 41, 98, 114, 117, 6
	)
	in := value("in")
	sg.Inputs = []graph.TensorID{in}
	prev := in
	step := func(name string, code graph.Opcode, inputs func(prev graph.TensorID) []graph.TensorID) {
		out := value(name)
		op(code, inputs(prev), out)
		prev = out
	}
	unary := func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p} }
	step("add", codeAdd, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k0", 0)} })
	step("relu", codeRelu, unary)
	step("relu6", codeRelu6, unary)
	step("sub0", codeSub, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k1", 1)} })
	step("sub1", codeSub, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{constant("k2", 2), p} })
	step("mul0", codeMul, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k3", 3)} })
	step("mul1", codeMul, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{constant("k4", 4), p} })
	step("leaky_relu", codeLeakyRelu, unary)
	step("hard_swish", codeHardSwish, unary)
	step("tanh", codeTanh, unary)
	step("logistic", codeLogistic, unary)
	step("add0", codeAdd, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k6", 6)} })
	step("add1", codeAdd, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{constant("k5", 5), p} })
	q0 := add(graph.Tensor{Name: "q0", Type: graph.Int8, Quantization: &graph.Quantization{Scale: []float32{1.0 / 64}, ZeroPoint: []int64{-3}}})
	op(codeQuantize, []graph.TensorID{prev}, q0)
	q1 := add(graph.Tensor{Name: "q1", Type: graph.Int8, Quantization: &graph.Quantization{Scale: []float32{1.0 / 50}, ZeroPoint: []int64{5}}})
	op(codeQuantize, []graph.TensorID{q0}, q1)
	out := value("out")
	op(codeDequantize, []graph.TensorID{q1}, out)
	sg.Outputs = []graph.TensorID{out}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// writeShifted writes to path the model data with out's plan as its
// offline plan, except that allocation i is moved one element past where
// it was (the arenas grown to hold it): the kernel that writes it in place
// then writes output element k over input element k+1 before reading it.
func writeShifted(t *testing.T, data []byte, out *driver.Output, i int, path string) {
	t.Helper()
	bad := *out.Plan
	bad.Allocs = slices.Clone(out.Plan.Allocs)
	a := &bad.Allocs[i]
	tn := out.Model.Tensor(a.Ref.Subgraph, a.Ref.Tensor)
	a.Offset += max(tn.Type.Bits()/8, 1)
	growArenas(&bad)
	op, err := emit.TFLMOfflinePlan(out.Model, &bad)
	require.NoError(t, err)
	shifted, _, err := tflite.SetMetadata(data, emit.OfflinePlanName, op.Data)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, shifted, 0o644))
}

// TestTFLMContractsModel runs contractsModel in TFLM with heliac's
// in-place plan: the outputs are TFLM's own; every contract of
// tflm-reference is used; and each write moved one element past its input
// makes TFLM compute something else (the test of the proof).
func TestTFLMContractsModel(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	data := contractsModel(t)
	orig := filepath.Join(dir, "contracts.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	cfg := defaultConfig(t)
	cfg.ModelName, cfg.Version, cfg.EmitTFLite = "contracts", "test", true
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	mine := filepath.Join(dir, "contracts.heliac.tflite")
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))

	opts := tflmrun.Options{Seed: 1, Invokes: interopInvokes, ArenaBytes: 64 << 10, Trace: true}
	runTFLM := func(path string) *tflmrun.Result {
		res, err := tflmrun.Run(context.Background(), tool, path, opts)
		require.NoError(t, err)
		return res
	}
	want := runTFLM(orig)
	require.True(t, want.OK(), "%s", want.Error())
	got := runTFLM(mine)
	require.True(t, got.OK(), "%s", got.Error())
	assert.Equal(t, want.Outputs(), got.Outputs(), "outputs with heliac's in-place plan")
	assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "every intermediate with heliac's in-place plan")

	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	used := map[string]int{} // contract -> allocation
	for i, a := range out.Plan.Allocs {
		if a.InPlace != nil {
			used[a.InPlace.Contract.String()] = i
		}
	}
	for _, c := range lib.Contracts() {
		t.Run(c.String(), func(t *testing.T) {
			i, ok := used[c.String()]
			require.True(t, ok, "the model uses the contract")
			tn := out.Model.Tensor(out.Plan.Allocs[i].Ref.Subgraph, out.Plan.Allocs[i].Ref.Tensor)
			path := filepath.Join(dir, "shifted-"+tn.Name+".tflite")
			writeShifted(t, data, out, i, path)
			res := runTFLM(path)
			outputs := !res.OK() || !slices.Equal(want.Outputs(), res.Outputs())
			trace := want.Values["trace_digest"] != res.Values["trace_digest"]
			t.Logf("%s moved one element past its input: outputs differ %t, trace differs %t", tn.Name, outputs, trace)
			assert.True(t, outputs, "a write one element past its input must change TFLM's outputs")
		})
	}

	// With --overwrite-inputs the first ADD writes over the model input,
	// which tflm_run fills again before every invocation.
	cfg.Liveness.OverwriteInputs = true
	over, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	first := over.Plan.Lookup(plan.TensorKey(graph.TensorRef{Tensor: over.Model.Subgraphs[0].Ops[0].Outputs[0]}))
	require.NotNil(t, first)
	require.NotNil(t, first.InPlace, "the first ADD writes over the model input")
	assert.Equal(t, graph.TensorRef{Tensor: 0}, first.InPlace.Input)
	path := filepath.Join(dir, "contracts.overwrite.tflite")
	require.NoError(t, os.WriteFile(path, over.TFLite.Data, 0o644))
	res := runTFLM(path)
	assert.Equal(t, want.Outputs(), res.Outputs(), "outputs with the model input written over")
}
