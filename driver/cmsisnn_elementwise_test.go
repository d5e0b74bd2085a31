package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// ewCase is one operator of elementwiseModel: it reads a model input of
// its own (the input its contract writes over, operand input) and writes
// a model output of its own, so each case can be placed apart from the
// others in one plan, and what one case's placement breaks shows in its
// own output alone.
type ewCase struct {
	name  string
	op    int // operator index
	input int // operand position of the input the contract names
}

// ewBuilder builds the INT8 or INT16 models of
// TestTFLMCMSISNNElementwise.
type ewBuilder struct {
	t   *testing.T
	m   *graph.Model
	sg  graph.Subgraph
	typ graph.ElementType
	// qIn quantizes model inputs (and what keeps its input's
	// quantization: pools, PAD, MAXIMUM, MINIMUM), qK ADD's and MUL's
	// constants, qOut their outputs.
	qIn, qK, qOut *graph.Quantization
}

// The builtin codes the models use besides the pools.
const (
	ewAdd, ewMul, ewSoftmax, ewPad, ewMaximum, ewMinimum, ewPadV2 graph.Opcode = 0, 18, 25, 34, 55, 57, 60
)

func newEWBuilder(t *testing.T, int16 bool) *ewBuilder {
	b := &ewBuilder{t: t, m: &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}, typ: graph.Int8,
		qIn: ewQuant(1.0/16, -3), qK: ewQuant(1.0/20, 7), qOut: ewQuant(1.0/12, 5)}
	if int16 {
		// TFLM's INT16 ADD, MUL and SOFTMAX take zero points of 0 only.
		b.typ, b.qIn, b.qK, b.qOut = graph.Int16, ewQuant(1.0/256, 0), ewQuant(1.0/300, 0), ewQuant(1.0/128, 0)
	}
	return b
}

func ewQuant(scale float32, zp int64) *graph.Quantization {
	return &graph.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zp}}
}

func (b *ewBuilder) tensor(name string, typ graph.ElementType, shape []int32, q *graph.Quantization, data []byte) graph.TensorID {
	size, err := graph.ByteSize(typ, shape)
	require.NoError(b.t, err)
	tn := graph.Tensor{Name: name, Type: typ, Shape: shape, Size: size, Quantization: q}
	if data != nil {
		b.m.Buffers = append(b.m.Buffers, graph.Buffer{Data: data})
		tn.Buffer = graph.BufferIndex(len(b.m.Buffers) - 1)
	}
	b.sg.Tensors = append(b.sg.Tensors, tn)
	return graph.TensorID(len(b.sg.Tensors) - 1)
}

// value adds a tensor of the model's type that an operator computes or
// the model is given.
func (b *ewBuilder) value(name string, shape []int32, q *graph.Quantization) graph.TensorID {
	return b.tensor(name, b.typ, shape, q, nil)
}

// constant adds a constant of the model's type, its bytes a fixed
// pattern.
func (b *ewBuilder) constant(name string, shape []int32, q *graph.Quantization) graph.TensorID {
	n, err := graph.ByteSize(b.typ, shape)
	require.NoError(b.t, err)
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*37 + len(name)*11 + i*i/7)
	}
	return b.tensor(name, b.typ, shape, q, data)
}

// op adds an operator writing a new tensor of outShape and returns it.
func (b *ewBuilder) op(name string, code graph.Opcode, inputs []graph.TensorID, outShape []int32, q *graph.Quantization,
	w *graph.Window, opts *graph.Options) graph.TensorID {
	out := b.value(name, outShape, q)
	b.sg.Ops = append(b.sg.Ops, graph.Op{Code: code, Version: 1, Inputs: inputs, Outputs: []graph.TensorID{out}, Window: w, Options: opts})
	return out
}

// binary is ADD, MUL, MAXIMUM or MINIMUM of a and a constant of kShape,
// a at operand position input.
func (b *ewBuilder) binary(name string, code graph.Opcode, input int, a graph.TensorID, kShape []int32) graph.TensorID {
	qa := b.sg.Tensors[a].Quantization
	k, q := b.constant(name+"_k", kShape, b.qK), b.qOut
	if code == ewMaximum || code == ewMinimum {
		// TFLM's MAXIMUM and MINIMUM compare raw values: one
		// quantization for all three.
		k, q = b.constant(name+"_k", kShape, qa), qa
	}
	inputs := []graph.TensorID{a, k}
	if input == 1 {
		inputs = []graph.TensorID{k, a}
	}
	return b.op(name, code, inputs, b.sg.Tensors[a].Shape, q, nil, nil)
}

// pool is a 3x3 SAME pool of a.
func (b *ewBuilder) pool(name string, code graph.Opcode, a graph.TensorID, stride int32) graph.TensorID {
	in := b.sg.Tensors[a].Shape
	out := []int32{in[0], (in[1] + stride - 1) / stride, (in[2] + stride - 1) / stride, in[3]}
	w := &graph.Window{Padding: graph.PaddingSame, StrideW: stride, StrideH: stride, DilationW: 1, DilationH: 1, FilterW: 3, FilterH: 3}
	return b.op(name, code, []graph.TensorID{a}, out, b.sg.Tensors[a].Quantization, w, nil)
}

// pad is PAD of a (PADV2 with a constant value) by pads, before and after
// each dimension.
func (b *ewBuilder) pad(name string, code graph.Opcode, a graph.TensorID, pads ...int32) graph.TensorID {
	in, q := b.sg.Tensors[a].Shape, b.sg.Tensors[a].Quantization
	out := slices.Clone(in)
	for i := range out {
		out[i] += pads[2*i] + pads[2*i+1]
	}
	data := make([]byte, 4*len(pads))
	for i, p := range pads {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(p))
	}
	inputs := []graph.TensorID{a, b.tensor(name+"_paddings", graph.Int32, []int32{int32(len(in)), 2}, nil, data)}
	if code == ewPadV2 {
		inputs = append(inputs, b.constant(name+"_value", []int32{}, q))
	}
	return b.op(name, code, inputs, out, q, nil, nil)
}

// softmax is SOFTMAX of a, beta 1, into the output quantization TFLM
// requires.
func (b *ewBuilder) softmax(name string, a graph.TensorID) graph.TensorID {
	q := ewQuant(1.0/256, -128)
	if b.typ == graph.Int16 {
		q = ewQuant(1.0/32768, 0)
	}
	beta := &graph.Options{Table: "SoftmaxOptions", Fields: []graph.OptionField{
		{Name: "beta", Type: "float", Kind: graph.OptionFloat, Present: true, Float: 1}}}
	return b.op(name, ewSoftmax, []graph.TensorID{a}, b.sg.Tensors[a].Shape, q, nil, beta)
}

func (b *ewBuilder) encode() []byte {
	b.m.Subgraphs = []graph.Subgraph{b.sg}
	data, err := tflite.Encode(b.m, tflite.EncodeOptions{})
	require.NoError(b.t, err)
	return data
}

// elementwiseModel builds, for INT8 (or INT16), one independent operator
// per contract of CMSIS-NN's elementwise, pooling and padding functions,
// each from a model input to a model output, on shapes that are no
// multiples of 4 or 16 (MVE's lanes, the DSP's words), so every tail runs:
//
//	INT8:  ADD and MUL over either input ([1,3,5,7]); AVERAGE_POOL_2D and
//	       MAX_POOL_2D 3x3 SAME, stride 1 on [1,5,7,19] and stride 2 on
//	       [1,7,9,3]; PAD of [1,3,4,5] at both edges of every dimension,
//	       PAD of [1,4,5,3] at both edges of height and width (rows
//	       copied whole), PADV2 of [5,7] with a constant; SOFTMAX of
//	       [1,3,37]; MAXIMUM and MINIMUM over either input, and MAXIMUM
//	       with the other input broadcast ([1,1,1,7]).
//	INT16: ADD, MUL, the four pools, SOFTMAX, MAXIMUM, MINIMUM and PAD
//	       (the last three CMSIS-NN's reference code).
func elementwiseModel(t *testing.T, int16 bool) ([]byte, []ewCase) {
	t.Helper()
	b := newEWBuilder(t, int16)
	var cases []ewCase
	one := func(name string, input int, shape []int32, apply func(a graph.TensorID) graph.TensorID) {
		a := b.value(name+"_in", shape, b.qIn)
		b.sg.Inputs = append(b.sg.Inputs, a)
		b.sg.Outputs = append(b.sg.Outputs, apply(a))
		cases = append(cases, ewCase{name: name, op: len(b.sg.Ops) - 1, input: input})
	}
	elems := []int32{1, 3, 5, 7}
	binaryCase := func(name string, code graph.Opcode, input int, kShape []int32) {
		one(name, input, elems, func(a graph.TensorID) graph.TensorID { return b.binary(name, code, input, a, kShape) })
	}
	poolCase := func(name string, code graph.Opcode, shape []int32, stride int32) {
		one(name, 0, shape, func(a graph.TensorID) graph.TensorID { return b.pool(name, code, a, stride) })
	}
	padCase := func(name string, code graph.Opcode, shape []int32, pads ...int32) {
		one(name, 0, shape, func(a graph.TensorID) graph.TensorID { return b.pad(name, code, a, pads...) })
	}
	binaryCase("add_in0", ewAdd, 0, elems)
	binaryCase("mul_in1", ewMul, 1, elems)
	if !int16 {
		binaryCase("add_in1", ewAdd, 1, elems)
		binaryCase("mul_in0", ewMul, 0, elems)
	}
	poolCase("avg_s1", graph.AveragePool2D, []int32{1, 5, 7, 19}, 1)
	poolCase("avg_s2", graph.AveragePool2D, []int32{1, 7, 9, 3}, 2)
	poolCase("max_s1", graph.MaxPool2D, []int32{1, 5, 7, 19}, 1)
	poolCase("max_s2", graph.MaxPool2D, []int32{1, 7, 9, 3}, 2)
	padCase("pad_all", ewPad, []int32{1, 3, 4, 5}, 1, 1, 1, 2, 2, 1, 1, 2)
	if !int16 {
		padCase("pad_rows", ewPad, []int32{1, 4, 5, 3}, 0, 0, 1, 2, 2, 1, 0, 0)
		padCase("padv2", ewPadV2, []int32{5, 7}, 1, 2, 0, 3)
	}
	one("softmax", 0, []int32{1, 3, 37}, func(a graph.TensorID) graph.TensorID { return b.softmax("softmax", a) })
	binaryCase("maximum_in0", ewMaximum, 0, elems)
	binaryCase("minimum_in1", ewMinimum, 1, elems)
	if !int16 {
		binaryCase("maximum_broadcast", ewMaximum, 0, []int32{1, 1, 1, 7})
	}
	return b.encode(), cases
}

// chainModel is the operators of elementwiseModel in one chain, each
// reading the one before, for heliac to plan in place by itself:
//
//	in [1,5,7,19] -> ADD -> MUL -> MAXIMUM -> MINIMUM -> AVERAGE_POOL_2D ->
//	MAX_POOL_2D -> PAD (every edge) -> MAX_POOL_2D stride 2 ->
//	AVERAGE_POOL_2D stride 2 -> SOFTMAX -> ADD -> out
func chainModel(t *testing.T, int16 bool) []byte {
	t.Helper()
	b := newEWBuilder(t, int16)
	shape := []int32{1, 5, 7, 19}
	x := b.value("in", shape, b.qIn)
	b.sg.Inputs = []graph.TensorID{x}
	x = b.binary("add", ewAdd, 0, x, shape)
	x = b.binary("mul", ewMul, 1, x, shape)
	x = b.binary("maximum", ewMaximum, 0, x, shape)
	x = b.binary("minimum", ewMinimum, 1, x, shape)
	x = b.pool("avg", graph.AveragePool2D, x, 1)
	x = b.pool("max", graph.MaxPool2D, x, 1)
	x = b.pad("pad", ewPad, x, 1, 1, 1, 2, 2, 1, 1, 2)
	x = b.pool("max_s2", graph.MaxPool2D, x, 2)
	x = b.pool("avg_s2", graph.AveragePool2D, x, 2)
	x = b.softmax("softmax", x)
	b.sg.Outputs = []graph.TensorID{b.binary("out", ewAdd, 0, x, b.sg.Tensors[x].Shape)}
	return b.encode()
}

// ewRunner is a TFLM build that runs the models, with the library (on its
// code path) and the target whose windows and scratch it has.
type ewRunner struct {
	name   string
	tool   string
	lib    *kernels.Library
	target kernels.Target
}

// ewRunners returns the runners of ../shared/tools there are: TFLM with
// CMSIS-NN on the host (portable C), on a Cortex-M4 (DSP) and a
// Cortex-M55 (MVE) under QEMU, and with its reference kernels on the host.
func ewRunners(t *testing.T) []ewRunner {
	t.Helper()
	ref := tflmrun.Require(t)
	refLib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	cpu := func(name string) kernels.Target {
		tg, err := kernels.CPU(name)
		require.NoError(t, err)
		return tg
	}
	all := []ewRunner{
		{tflmrun.CMSISNN, tflmrun.Tool(tflmrun.CMSISNN), cmsis.On(kernels.NoDSP), kernels.Target{CPU: kernels.GenericCPU, PointerSize: 8, ISA: kernels.NoDSP}},
		{tflmrun.M4CMSISNN, tflmrun.Tool(tflmrun.M4CMSISNN), cmsis.On(kernels.DSP), cpu("cortex-m4")},
		{tflmrun.M55CMSISNN, tflmrun.Tool(tflmrun.M55CMSISNN), cmsis.On(kernels.MVE), cpu("cortex-m55")},
		{"tflm_run", ref, refLib, kernels.Target{PointerSize: 8}},
	}
	var out []ewRunner
	for _, r := range all {
		if r.tool == "" {
			t.Logf("%s (or QEMU) not found: not checked", r.name)
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestTFLMCMSISNNElementwise proves the contracts of CMSIS-NN's
// elementwise, pooling and padding functions (kernels/cmsisnn_elementwise.go)
// and the reference kernels' SOFTMAX, MAXIMUM and MINIMUM on TFLM itself:
// on each runner, with each case's output placed by hand over its input at
// its library's window's edges (the input Lo, then Hi, bytes after the
// output's start), every output and every operator's output (the trace) is
// the original's; one element below Lo, a case's own output changes on
// some CMSIS-NN runner (and on tflm_run). arm_pad_s8's and
// arm_max_pool_s8/_s16's Lo come from memcpy's rule that its operands never
// overlap (the pool copies each window's first position into its output
// pixel), which the runners' memcpys (glibc, newlib, MVE's loop) forgive:
// for those the test logs what one element below Lo did and asserts, on
// every CMSIS-NN runner, the bite where the loops read what they wrote
// (the reference kernels' Lo, less one element). Heliac's own plan of
// chainModel for each library runs right too.
func TestTFLMCMSISNNElementwise(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM, some of it under QEMU; skipped with -short")
	}
	runners := ewRunners(t)
	// A wall-clock limit for each QEMU run (the wrappers' default is an
	// hour), so that a wedged run ends and takes QEMU with it.
	t.Setenv("QEMU_TIMEOUT", "300")
	dir := t.TempDir()
	refLib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	for _, int16 := range []bool{false, true} {
		name := map[bool]string{false: "int8", true: "int16"}[int16]
		data, cases := elementwiseModel(t, int16)
		chain := chainModel(t, int16)
		t.Run(name, func(t *testing.T) {
			// bit[case] lists the runners where a placement one element
			// below the window changed the case's own output.
			bit := map[string][]string{}
			for _, r := range runners {
				t.Run(r.name, func(t *testing.T) {
					for c, who := range ewRunOne(t, r, refLib, data, chain, cases, filepath.Join(dir, name+"-"+r.name)) {
						bit[c] = append(bit[c], who...)
					}
				})
			}
			cmsis := slices.ContainsFunc(runners, func(r ewRunner) bool { return r.lib.Name == kernels.CMSISNN })
			var lines []string
			for _, c := range cases {
				lines = append(lines, fmt.Sprintf("  %-18s bites on %s", c.name, strings.Join(bit[c.name], ", ")))
				assert.NotEmpty(t, bit[c.name], "%s: a placement one element below its window changes its output on some runner", c.name)
				if cmsis {
					assert.True(t, slices.ContainsFunc(bit[c.name], func(s string) bool { return strings.Contains(s, "cmsis") }),
						"%s: a placement below its window changes its output on some CMSIS-NN runner", c.name)
				}
			}
			t.Logf("%s: one element below the window\n%s", name, strings.Join(lines, "\n"))
		})
	}
}

// ewRunOne runs the cases of one model on one runner (see
// TestTFLMCMSISNNElementwise) and returns, per case, the placements
// below its window that changed its output there: "tflm_run_cmsis" one
// element below Lo, "tflm_run_cmsis (order)" one below the reference
// kernels' Lo.
func ewRunOne(t *testing.T, r ewRunner, refLib *kernels.Library, data, chain []byte, cases []ewCase, prefix string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	orig := prefix + ".tflite"
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	run := func(path string) *tflmrun.Result {
		res, err := tflmrun.Run(ctx, r.tool, path, tflmrun.Options{Seed: 1, Invokes: 2, ArenaBytes: 1 << 20, Trace: true, Timeout: 120 * time.Second})
		require.NoError(t, err)
		return res
	}
	want := run(orig)
	require.True(t, want.OK(), "%s", want.Error())

	cfg := driver.Config{ModelName: "elementwise", Version: "test", Kernels: r.lib, Target: r.target, EmitTFLite: true}
	plain, err := driver.Compile(ctx, data, cfg)
	require.NoError(t, err)
	m := plain.Model
	index := func(tn graph.TensorID) int {
		i := slices.IndexFunc(plain.Plan.Allocs, func(a plan.Alloc) bool { return a.Ref == graph.TensorRef{Tensor: tn} })
		require.GreaterOrEqual(t, i, 0, "tensor %d is placed", tn)
		return i
	}
	// Each case gets a region above every allocation: its output at
	// outAt, its input d bytes after it for d from below Lo to Hi.
	type slot struct {
		c  ewCase
		pl kernels.Placement
		// orderLo is the reference kernels' Lo where CMSIS-NN's is
		// larger (PAD, MAX_POOL_2D): below CMSIS-NN's Lo a memcpy's
		// operands overlap, below orderLo its loops read what they
		// wrote. Else Lo.
		orderLo             int64
		e, inSize, outSize  int64
		in, out             int
		outAt               int64
		inTensor, outTensor graph.TensorID
	}
	var top int64
	for _, a := range plain.Plan.Allocs {
		top = max(top, a.Offset+a.Size)
	}
	next := (top+15)/16*16 + 16
	var slots []slot
	for _, c := range cases {
		op := &m.Subgraphs[0].Ops[c.op]
		var pl *kernels.Placement
		for _, p := range r.lib.InPlace(m, 0, op) {
			if p.Input == c.input {
				pl = &p
			}
		}
		require.NotNil(t, pl, "%s: %s has a contract for %s", c.name, r.lib, op.Name())
		s := slot{c: c, pl: *pl, orderLo: pl.Lo, inTensor: op.Inputs[c.input], outTensor: op.Outputs[0]}
		for _, p := range refLib.InPlace(m, 0, op) {
			if p.Input == c.input && p.Overlap == pl.Overlap && p.Lo < pl.Lo {
				s.orderLo = p.Lo
			}
		}
		in, out := m.Tensor(0, s.inTensor), m.Tensor(0, s.outTensor)
		s.e, s.inSize, s.outSize = in.Type.Bits()/8, in.Size, out.Size
		s.in, s.out = index(s.inTensor), index(s.outTensor)
		below := max(0, s.e-s.orderLo)
		s.outAt = (next + below + 15) / 16 * 16
		next = (s.outAt+max(s.outSize, pl.Hi+s.inSize)+15)/16*16 + 16
		slots = append(slots, s)
	}
	// place runs TFLM with each case's input d(s) bytes after its output.
	place := func(tag string, d func(s slot) int64) *tflmrun.Result {
		offsets := map[int]int64{}
		for _, s := range slots {
			offsets[s.out], offsets[s.in] = s.outAt, s.outAt+d(s)
		}
		path := prefix + "." + tag + ".tflite"
		writeMovedAll(t, data, plain, offsets, path)
		res := run(path)
		require.True(t, res.OK(), "%s: %s", tag, res.Error())
		require.Equal(t, int64(plain.TFLite.Offline.Planned), res.Int("planner_offline_buffers"), "%s: TFLM takes every offset", tag)
		return res
	}
	// own reports whether a case's own output (its trace lines) differs
	// from the original's.
	own := func(res *tflmrun.Result, s slot) bool {
		for k, v := range want.Values {
			if strings.HasPrefix(k, "trace.") && strings.Contains(k, fmt.Sprintf(".0.%d.", s.outTensor)) && res.Values[k] != v {
				return true
			}
		}
		return false
	}
	for _, edge := range []struct {
		tag string
		d   func(s slot) int64
	}{{"lo", func(s slot) int64 { return s.pl.Lo }}, {"hi", func(s slot) int64 { return s.pl.Hi }}} {
		res := place(edge.tag, edge.d)
		assert.Equal(t, want.Outputs(), res.Outputs(), "every case's input %s bytes after its output", strings.ToUpper(edge.tag))
		assert.Equal(t, want.Values["trace_digest"], res.Values["trace_digest"], "every operator's output with each input at %s", edge.tag)
	}
	bit := map[string][]string{}
	below := place("below", func(s slot) int64 { return s.pl.Lo - s.e })
	var log []string
	for _, s := range slots {
		b := own(below, s)
		if b {
			bit[s.c.name] = append(bit[s.c.name], r.name)
		}
		log = append(log, fmt.Sprintf("  %-18s %-26s window [%d, %d]: at Lo - %d its output differs %t", s.c.name, s.pl.Contract, s.pl.Lo, s.pl.Hi, s.e, b))
	}
	if slices.ContainsFunc(slots, func(s slot) bool { return s.orderLo < s.pl.Lo }) {
		order := place("order", func(s slot) int64 {
			if s.orderLo < s.pl.Lo {
				return s.orderLo - s.e
			}
			return s.pl.Hi
		})
		for _, s := range slots {
			if s.orderLo < s.pl.Lo {
				b := own(order, s)
				assert.True(t, b, "%s: the input %d bytes after the output, where the loops read what they wrote, changes its output", s.c.name, s.orderLo-s.e)
				if b {
					bit[s.c.name] = append(bit[s.c.name], r.name+" (order)")
				}
				log = append(log, fmt.Sprintf("  %-18s from %d to %d a memcpy's operands overlap (undefined; computed right here: %t); at %d its output differs %t",
					s.c.name, s.orderLo, s.pl.Lo-1, !own(below, s), s.orderLo-s.e, b))
			}
		}
	}
	t.Logf("%s (%s):\n%s", r.name, r.lib, strings.Join(log, "\n"))

	ewOwnPlan(t, r, chain, prefix+".chain", run)
	return bit
}

// ewOwnPlan compiles the chain model with heliac's in-place plan for the
// runner's library (the model input written over too) and runs it there:
// every output and every operator's output is the original's.
func ewOwnPlan(t *testing.T, r ewRunner, chain []byte, prefix string, run func(path string) *tflmrun.Result) {
	t.Helper()
	orig := prefix + ".tflite"
	require.NoError(t, os.WriteFile(orig, chain, 0o644))
	want := run(orig)
	require.True(t, want.OK(), "%s", want.Error())
	cfg := driver.Config{ModelName: "chain", Version: "test", Kernels: r.lib, Target: r.target, EmitTFLite: true,
		Liveness: liveness.Options{Kernels: r.lib, ExactOverlap: true, OverwriteInputs: true}}
	mine, err := driver.Compile(context.Background(), chain, cfg)
	require.NoError(t, err)
	path := prefix + ".heliac.tflite"
	require.NoError(t, os.WriteFile(path, mine.TFLite.Data, 0o644))
	res := run(path)
	require.True(t, res.OK(), "%s", res.Error())
	assert.Equal(t, want.Outputs(), res.Outputs(), "outputs with heliac's plan")
	assert.Equal(t, want.Values["trace_digest"], res.Values["trace_digest"], "every operator's output with heliac's plan")
	var used []string
	for _, a := range mine.Plan.Allocs {
		if a.InPlace != nil {
			used = append(used, a.InPlace.Contract.String())
		}
	}
	cfg.Liveness.Kernels = nil
	plain, err := driver.Compile(context.Background(), chain, cfg)
	require.NoError(t, err)
	t.Logf("%s: heliac's plan of the chain writes %d outputs in place (%s); head %d B, %d B without",
		r.name, len(used), strings.Join(used, "; "), mine.TFLite.Offline.ArenaSize, plain.TFLite.Offline.ArenaSize)
	assert.NotEmpty(t, used, "heliac's plan writes some output in place")
}
