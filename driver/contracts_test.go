package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
//	LOGISTIC -> ADD(., k6) -> ADD(k5, .) -> PAD (to [3, 69]) ->
//	PADV2 (to [4, 70]) -> QUANTIZE (to int8) -> QUANTIZE (int8, another
//	scale) -> DEQUANTIZE -> out
//	out -> RESHAPE -> RELU -> CONV_2D -> DEPTHWISE_CONV_2D ->
//	AVERAGE_POOL_2D -> MAX_POOL_2D -> out_img
//	in2 -> ADD(in2, k11) -> MAXIMUM(., k12) -> MAXIMUM(k13, .) ->
//	MINIMUM(., k14) -> MINIMUM(k15, .) -> SOFTMAX -> ADD(., k16) -> out_s
//
// The first ADD reads the model input (written over only with
// --overwrite-inputs), and DEQUANTIZE has no contract. PAD pads a row
// before and after and 2 columns before and 3 after, so its input may
// start from 284 bytes into its output (the padding written before the
// input's last element) to its end, 572 bytes; PADV2 pads a row and a
// column after (8 to 292 bytes); QUANTIZE from float writes its output at
// the start of its input.
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
		codePad, codePadV2                                                  graph.Opcode = 34, 60
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
	paddings := func(name string, pads ...int32) graph.TensorID {
		data := make([]byte, 4*len(pads))
		for i, p := range pads {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(p))
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		return add(graph.Tensor{Name: name, Type: graph.Int32, Shape: []int32{2, 2}, Buffer: graph.BufferIndex(len(m.Buffers) - 1)})
	}
	padded := []int32{4, 70}
	pad := add(graph.Tensor{Name: "pad", Type: graph.Float32, Shape: []int32{3, 69}})
	op(codePad, []graph.TensorID{prev, paddings("p0", 1, 1, 2, 3)}, pad)
	m.Buffers = append(m.Buffers, graph.Buffer{Data: binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.625))})
	value0 := add(graph.Tensor{Name: "pad_value", Type: graph.Float32, Shape: []int32{}, Buffer: graph.BufferIndex(len(m.Buffers) - 1)})
	pad2 := add(graph.Tensor{Name: "pad2", Type: graph.Float32, Shape: padded})
	op(codePadV2, []graph.TensorID{pad, paddings("p1", 0, 1, 0, 1), value0}, pad2)
	q0 := add(graph.Tensor{Name: "q0", Type: graph.Int8, Shape: padded,
		Quantization: &graph.Quantization{Scale: []float32{1.0 / 64}, ZeroPoint: []int64{-3}}})
	op(codeQuantize, []graph.TensorID{pad2}, q0)
	q1 := add(graph.Tensor{Name: "q1", Type: graph.Int8, Shape: padded,
		Quantization: &graph.Quantization{Scale: []float32{1.0 / 50}, ZeroPoint: []int64{5}}})
	op(codeQuantize, []graph.TensorID{q0}, q1)
	out := add(graph.Tensor{Name: "out", Type: graph.Float32, Shape: padded})
	op(codeDequantize, []graph.TensorID{q1}, out)

	// The sliding windows, after the rest: out viewed as [1, 4, 70, 1]
	// -> RELU -> CONV_2D 3x3 SAME (to 4 channels) -> DEPTHWISE_CONV_2D
	// 3x3 SAME -> AVERAGE_POOL_2D 3x3 SAME -> MAX_POOL_2D 2x2 VALID ->
	// out_img. out is a model output, so the view gets bytes of its own.
	weights := func(name string, seed float64, shape ...int32) graph.TensorID {
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		data := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(0.3*math.Sin(seed+1.7*float64(i)))))
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		return add(graph.Tensor{Name: name, Type: graph.Float32, Shape: shape, Buffer: graph.BufferIndex(len(m.Buffers) - 1)})
	}
	window := func(code graph.Opcode, in graph.TensorID, name string, shape []int32, w graph.Window, extra ...graph.TensorID) graph.TensorID {
		o := add(graph.Tensor{Name: name, Type: graph.Float32, Shape: shape})
		sg.Ops = append(sg.Ops, graph.Op{Code: code, Version: 1, Inputs: append([]graph.TensorID{in}, extra...),
			Outputs: []graph.TensorID{o}, Window: &w})
		return o
	}
	const codeReshape graph.Opcode = 22
	view := add(graph.Tensor{Name: "img", Type: graph.Float32, Shape: []int32{1, 4, 70, 1}})
	m.Buffers = append(m.Buffers, graph.Buffer{Data: []byte{1, 0, 0, 0, 4, 0, 0, 0, 70, 0, 0, 0, 1, 0, 0, 0}})
	newShape := add(graph.Tensor{Name: "img_shape", Type: graph.Int32, Shape: []int32{4}, Buffer: graph.BufferIndex(len(m.Buffers) - 1)})
	op(codeReshape, []graph.TensorID{out, newShape}, view)
	relu := add(graph.Tensor{Name: "img_relu", Type: graph.Float32, Shape: []int32{1, 4, 70, 1}})
	op(codeRelu, []graph.TensorID{view}, relu)
	img := []int32{1, 4, 70, 4}
	same := graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	conv := window(graph.Conv2D, relu, "conv", img, same, weights("conv_w", 7, 4, 3, 3, 1), weights("conv_b", 8, 4))
	dw := same
	dw.DepthMultiplier = 1
	depthwise := window(graph.DepthwiseConv2D, conv, "depthwise", img, dw, weights("dw_w", 9, 1, 3, 3, 4), weights("dw_b", 10, 4))
	avg := same
	avg.FilterW, avg.FilterH = 3, 3
	avgPool := window(graph.AveragePool2D, depthwise, "avg_pool", img, avg)
	maxp := graph.Window{Padding: graph.PaddingValid, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, FilterW: 2, FilterH: 2}
	outImg := window(graph.MaxPool2D, avgPool, "max_pool", []int32{1, 3, 69, 4}, maxp)

	// A second input for the rest: in2 -> ADD(in2, k11) -> MAXIMUM(., k12)
	// -> MAXIMUM(k13, .) -> MINIMUM(., k14) -> MINIMUM(k15, .) -> SOFTMAX
	// -> ADD(., k16) -> out_s.
	const codeSoftmax, codeMaximum, codeMinimum graph.Opcode = 25, 55, 57
	in2 := value("in2")
	sg.Inputs = append(sg.Inputs, in2)
	prev = in2
	step("s_add", codeAdd, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k11", 11)} })
	step("s_max0", codeMaximum, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k12", 12)} })
	step("s_max1", codeMaximum, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{constant("k13", 13), p} })
	step("s_min0", codeMinimum, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k14", 14)} })
	step("s_min1", codeMinimum, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{constant("k15", 15), p} })
	step("s_softmax", codeSoftmax, unary)
	sg.Ops[len(sg.Ops)-1].Options = &graph.Options{Table: "SoftmaxOptions", Fields: []graph.OptionField{
		{Name: "beta", Type: "float", Kind: graph.OptionFloat, Present: true, Float: 1}}}
	step("out_s", codeAdd, func(p graph.TensorID) []graph.TensorID { return []graph.TensorID{p, constant("k16", 16)} })
	sg.Outputs = []graph.TensorID{out, outImg, prev}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// writeMoved writes to path the model data with out's plan as its offline
// plan, except that allocation i lies at offset (the arenas grown to hold
// it). The tests of the proof use it to put an in-place write where its
// contract does not let it lie.
func writeMoved(t *testing.T, data []byte, out *driver.Output, i int, offset int64, path string) {
	t.Helper()
	writeMovedAll(t, data, out, map[int]int64{i: offset}, path)
}

// writeMovedAll is writeMoved for several allocations: index to offset.
func writeMovedAll(t *testing.T, data []byte, out *driver.Output, offsets map[int]int64, path string) {
	t.Helper()
	bad := *out.Plan
	bad.Allocs = slices.Clone(out.Plan.Allocs)
	for i, off := range offsets {
		bad.Allocs[i].Offset = off
	}
	growArenas(&bad)
	op, err := emit.TFLMOfflinePlan(out.Model, &bad)
	require.NoError(t, err)
	moved, _, err := tflite.SetMetadata(data, graph.OfflinePlanName, op.Data)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, moved, 0o644))
}

// forbiddenOffset is where allocation a's in-place write, under placement
// pl over input in, may not lie, and says where that is: an exact write
// one element past its input, PAD's output with its input at its start
// rather than its end, QUANTIZE's output at the end of its input rather
// than its start, a sliding window's output one element later than its
// contract's earliest (the contract's exact edge).
func forbiddenOffset(m *graph.Model, a plan.Alloc, in *plan.Alloc, pl kernels.Placement) (int64, string) {
	switch pl.Overlap {
	case kernels.End:
		return in.Offset, "with its input at its start"
	case kernels.Start:
		return in.Offset + in.Size - a.Size, "at the end of its input"
	case kernels.Sweep:
		step := int64(max(m.Tensor(in.Ref.Subgraph, in.Ref.Tensor).Type.Bits()/8, 1))
		return in.Offset - pl.Lo + step, "one element later than the contract's earliest"
	}
	tn := m.Tensor(a.Ref.Subgraph, a.Ref.Tensor)
	return a.Offset + max(tn.Type.Bits()/8, 1), "one element past its input"
}

// placementOf returns the placement under which allocation a is written
// in place.
func placementOf(t *testing.T, lib *kernels.Library, m *graph.Model, a plan.Alloc) kernels.Placement {
	t.Helper()
	require.NotNil(t, a.InPlace)
	for _, p := range lib.InPlace(m, a.Ref.Subgraph, &m.Subgraphs[a.Ref.Subgraph].Ops[a.InPlace.Op.Op]) {
		if p.Contract == a.InPlace.Contract {
			return p
		}
	}
	require.Fail(t, "no placement", "%v", a.InPlace.Contract)
	return kernels.Placement{}
}

// TestTFLMContractsModel runs contractsModel in TFLM with heliac's
// in-place plan: the outputs are TFLM's own; every contract of
// tflm-reference is used; and each write moved to where its contract
// does not let it lie makes TFLM compute something else (the test of the
// proof): an exact write one element past its input, PAD's output with
// its input at its start rather than its end, QUANTIZE's output at the
// end of its input rather than its start.
func TestTFLMContractsModel(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	data := contractsModel(t)
	orig := filepath.Join(dir, "contracts.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	cfg := referenceConfig(t)
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
		if c.Overlap == kernels.Sweep {
			continue // below
		}
		t.Run(c.String(), func(t *testing.T) {
			i, ok := used[c.String()]
			require.True(t, ok, "the model uses the contract")
			a := out.Plan.Allocs[i]
			tn := out.Model.Tensor(a.Ref.Subgraph, a.Ref.Tensor)
			in := out.Plan.Lookup(plan.TensorKey(a.InPlace.Input))
			require.NotNil(t, in)
			// moved runs TFLM with a's write at offset instead and
			// reports whether the outputs and a's own trace differ.
			moved := func(offset int64, name string) (outputs, own bool) {
				path := filepath.Join(dir, name+"-"+tn.Name+".tflite")
				writeMoved(t, data, out, i, offset, path)
				res := runTFLM(path)
				outputs = !res.OK() || !slices.Equal(want.Outputs(), res.Outputs())
				for k, v := range want.Values {
					if strings.HasPrefix(k, "trace.") && strings.Contains(k, fmt.Sprintf(".%d.%d.", a.Ref.Subgraph, a.Ref.Tensor)) {
						own = own || res.Values[k] != v
					}
				}
				return outputs, own
			}
			pl := placementOf(t, lib, out.Model, a)
			offset, where := forbiddenOffset(out.Model, a, in, pl)
			outputs, own := moved(offset, "shifted")
			t.Logf("%s moved %s: outputs differ %t, its own trace differs %t", tn.Name, where, outputs, own)
			assert.True(t, outputs, "a write moved %s must change TFLM's outputs", where)
			if c.Overlap == kernels.Exact {
				return
			}
			assert.True(t, own, "a write moved %s must change what the operator computes", where)
			// The contract's edge: the input as early in the output as
			// the contract lets it start is still right in TFLM; one
			// input element earlier is not. (QUANTIZE's output one byte
			// earlier clobbers only the low byte of input element 1, a
			// float's least mantissa bits, before it is read: wrong, but
			// too little to change an int8.)
			step := max(out.Model.Tensor(in.Ref.Subgraph, in.Ref.Tensor).Type.Bits()/8, 1)
			outputs, own = moved(in.Offset-pl.Lo, "edge")
			assert.False(t, outputs || own, "the input %d bytes after the output's start, the contract's least", pl.Lo)
			outputs, own = moved(in.Offset-(pl.Lo-step), "past-edge")
			t.Logf("%s with its input %d bytes after its start: right; %d bytes: outputs differ %t, its own trace differs %t",
				tn.Name, pl.Lo, pl.Lo-step, outputs, own)
			assert.True(t, own, "the input one element earlier than the contract lets it start must change what the operator computes")
		})
	}

	// Sliding windows: whether heliac's policy joins them depends on the
	// peak (a chain of them rarely pays in one block), so each is placed
	// here by hand, on the plan without in-place writes, its input and
	// output moved above everything else: the input Lo bytes after the
	// output's start (the contract's least) gives TFLM's own outputs; one
	// element less changes what the operator computes.
	plainCfg := cfg
	plainCfg.Liveness.Kernels = nil
	plainOut, err := driver.Compile(context.Background(), data, plainCfg)
	require.NoError(t, err)
	for _, c := range lib.Contracts() {
		if c.Overlap != kernels.Sweep {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			m := plainOut.Model
			var opIdx = -1
			var pl kernels.Placement
			for oi := range m.Subgraphs[0].Ops {
				for _, p := range lib.InPlace(m, 0, &m.Subgraphs[0].Ops[oi]) {
					if p.Contract == c {
						opIdx, pl = oi, p
					}
				}
			}
			require.NotEqual(t, -1, opIdx, "the model has an operator the contract applies to")
			o := &m.Subgraphs[0].Ops[opIdx]
			index := func(tn graph.TensorID) int {
				for i, a := range plainOut.Plan.Allocs {
					if a.Ref == (graph.TensorRef{Tensor: tn}) {
						return i
					}
				}
				require.Fail(t, "not placed", "tensor %d", tn)
				return -1
			}
			inIdx, outIdx := index(o.Inputs[0]), index(o.Outputs[0])
			var top int64
			for _, a := range plainOut.Plan.Allocs {
				top = max(top, a.Offset+a.Size)
			}
			step := int64(max(m.Tensor(0, o.Inputs[0]).Type.Bits()/8, 1))
			outAt := (top+15)/16*16 + 16 + max(0, step-pl.Lo)
			name := m.Tensor(0, o.Outputs[0]).Name
			run := func(d int64, tag string) (outputs, own bool) {
				path := filepath.Join(dir, tag+"-"+name+".tflite")
				writeMovedAll(t, data, plainOut, map[int]int64{outIdx: outAt, inIdx: outAt + d}, path)
				res := runTFLM(path)
				outputs = !res.OK() || !slices.Equal(want.Outputs(), res.Outputs())
				for k, v := range want.Values {
					if strings.HasPrefix(k, "trace.") && strings.Contains(k, fmt.Sprintf(".0.%d.", o.Outputs[0])) {
						own = own || res.Values[k] != v
					}
				}
				return outputs, own
			}
			outputs, own := run(pl.Hi, "apart")
			assert.False(t, outputs || own, "input and output apart, above the rest")
			outputs, own = run(pl.Lo, "edge")
			assert.False(t, outputs || own, "the input %d bytes after the output's start, the contract's least", pl.Lo)
			outputs, own = run(pl.Lo-step, "past-edge")
			t.Logf("%s with its input %d bytes after its start: right; %d bytes: outputs differ %t, its own trace differs %t",
				name, pl.Lo, pl.Lo-step, outputs, own)
			assert.True(t, own, "the input one element earlier than the contract lets it start must change what the operator computes")
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

// padModel is in -> ADD(in, k0) -> a -> PAD(a, paddings) -> b ->
// ADD(b, k1) -> out in FLOAT32, or, with int8, in -> QUANTIZE -> a ->
// PAD -> b -> DEQUANTIZE -> out, a of the given shape padded by pads
// (before and after, per dimension).
func padModel(t *testing.T, int8 bool, shape []int32, pads []int32) []byte {
	t.Helper()
	padded := slices.Clone(shape)
	for i := range padded {
		padded[i] += pads[2*i] + pads[2*i+1]
	}
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(tn graph.Tensor) graph.TensorID {
		size, err := graph.ByteSize(tn.Type, tn.Shape)
		require.NoError(t, err)
		tn.Size = size
		sg.Tensors = append(sg.Tensors, tn)
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	buffer := func(data []byte) graph.BufferIndex {
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		return graph.BufferIndex(len(m.Buffers) - 1)
	}
	constant := func(shape []int32, seed float64) graph.TensorID {
		n, err := graph.ByteSize(graph.Float32, shape)
		require.NoError(t, err)
		data := make([]byte, n)
		for i := range n / 4 {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(math.Sin(seed+float64(i)))+1.5))
		}
		return add(graph.Tensor{Name: fmt.Sprintf("k%g", seed), Type: graph.Float32, Shape: shape, Buffer: buffer(data)})
	}
	op := func(code graph.Opcode, in []graph.TensorID, out graph.TensorID) {
		sg.Ops = append(sg.Ops, graph.Op{Code: code, Version: 1, Inputs: in, Outputs: []graph.TensorID{out}})
	}
	const codeAdd, codePad, codeQuantize, codeDequantize graph.Opcode = 0, 34, 114, 6
	typ := graph.Float32
	var q *graph.Quantization
	if int8 {
		typ, q = graph.Int8, &graph.Quantization{Scale: []float32{1.0 / 32}, ZeroPoint: []int64{-7}}
	}
	in := add(graph.Tensor{Name: "in", Type: graph.Float32, Shape: shape})
	a := add(graph.Tensor{Name: "a", Type: typ, Shape: shape, Quantization: q})
	b := add(graph.Tensor{Name: "b", Type: typ, Shape: padded, Quantization: q})
	out := add(graph.Tensor{Name: "out", Type: graph.Float32, Shape: padded})
	data := make([]byte, 4*len(pads))
	for i, p := range pads {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(p))
	}
	p := add(graph.Tensor{Name: "paddings", Type: graph.Int32, Shape: []int32{int32(len(shape)), 2}, Buffer: buffer(data)})
	if int8 {
		op(codeQuantize, []graph.TensorID{in}, a)
		op(codePad, []graph.TensorID{a, p}, b)
		op(codeDequantize, []graph.TensorID{b}, out)
	} else {
		op(codeAdd, []graph.TensorID{in, constant(shape, 0)}, a)
		op(codePad, []graph.TensorID{a, p}, b)
		op(codeAdd, []graph.TensorID{b, constant(padded, 1)}, out)
	}
	sg.Inputs, sg.Outputs = []graph.TensorID{in}, []graph.TensorID{out}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestTFLMPadEdges proves PAD's contract on shapes and paddings drawn at
// random (a fixed seed): with heliac's plan TFLM computes its own outputs;
// with PAD's input moved to the earliest byte of the output the contract
// allows (Lo), every tensor is still TFLM's own; one input element
// earlier, PAD's output is not (when Lo is not 0, so earlier lies inside
// the output).
func TestTFLMPadEdges(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 16 {
		rank := 1 + r.IntN(4)
		shape := make([]int32, rank)
		pads := make([]int32, 2*rank)
		for i := range shape {
			shape[i] = 1 + r.Int32N(5)
			pads[2*i], pads[2*i+1] = r.Int32N(3), r.Int32N(3)
		}
		int8 := n%2 == 1
		name := fmt.Sprintf("%d-%v-%v-int8=%t", n, shape, pads, int8)
		t.Run(name, func(t *testing.T) {
			data := padModel(t, int8, shape, pads)
			cfg := referenceConfig(t)
			cfg.ModelName, cfg.Version, cfg.EmitTFLite = "pad", "test", true
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			run := func(file string, model []byte) *tflmrun.Result {
				path := filepath.Join(dir, fmt.Sprintf("%d-%s.tflite", n, file))
				require.NoError(t, os.WriteFile(path, model, 0o644))
				res, err := tflmrun.Run(context.Background(), tool, path, tflmrun.Options{Seed: 3, Invokes: 1, ArenaBytes: 64 << 10, Trace: true})
				require.NoError(t, err)
				require.True(t, res.OK(), "%s", res.Error())
				return res
			}
			want := run("orig", data)
			got := run("heliac", out.TFLite.Data)
			assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "every tensor with heliac's plan")

			bRef := graph.TensorRef{Tensor: 2}
			b := out.Plan.Lookup(plan.TensorKey(bRef))
			require.NotNil(t, b)
			sg := &out.Model.Subgraphs[0]
			pl := lib(t).InPlace(out.Model, 0, &sg.Ops[1])
			require.Len(t, pl, 1)
			if b.InPlace == nil {
				t.Skipf("PAD is not written in place: its input may start %d..%d bytes into its output, no multiple of 16", pl[0].Lo, pl[0].Hi)
			}
			e := max(sg.Tensors[1].Type.Bits()/8, 1)
			// moved runs TFLM with a starting d bytes into b (a moves
			// inside b's block, so nothing else is in the way).
			moved := func(d int64) (same, bSame bool) {
				bad := *out.Plan
				bad.Allocs = slices.Clone(out.Plan.Allocs)
				a := &bad.Allocs[slices.IndexFunc(bad.Allocs, func(al plan.Alloc) bool { return al.Ref == graph.TensorRef{Tensor: 1} })]
				a.Offset = b.Offset + d
				op, err := emit.TFLMOfflinePlan(out.Model, &bad)
				require.NoError(t, err)
				model, _, err := tflite.SetMetadata(data, graph.OfflinePlanName, op.Data)
				require.NoError(t, err)
				res := run(fmt.Sprintf("d%d", d), model)
				key := "trace.0.0.2.0"
				require.Contains(t, want.Values, key)
				return res.Values["trace_digest"] == want.Values["trace_digest"], res.Values[key] == want.Values[key]
			}
			same, _ := moved(pl[0].Lo)
			assert.True(t, same, "a %d bytes into b, the contract's least, computes TFLM's own", pl[0].Lo)
			if pl[0].Lo > 0 {
				_, bSame := moved(pl[0].Lo - e)
				assert.False(t, bSame, "a %d bytes into b, one element earlier than the contract allows, changes b", pl[0].Lo-e)
			}
			t.Logf("input may start %d..%d bytes into the output; planned at %d", pl[0].Lo, pl[0].Hi, out.Plan.Allocs[1].Offset-b.Offset)
		})
	}
}

func lib(t *testing.T) *kernels.Library {
	t.Helper()
	l, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	return l
}
