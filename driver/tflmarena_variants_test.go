package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// opModel builds a small model around one kernel's variant, for checking
// what that kernel takes from TFLM's arena where no corpus model has it.
type opModel struct {
	m   *graph.Model
	r   *rand.Rand
	cur graph.SubgraphIndex // the subgraph being built (subgraph)
}

func newOpModel(seed int64) *opModel {
	return &opModel{m: &graph.Model{Version: 3, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{Name: "main"}}},
		r: rand.New(rand.NewSource(seed))}
}

func (b *opModel) sg() *graph.Subgraph { return &b.m.Subgraphs[b.cur] }

// subgraph adds a subgraph, builds it with build (the methods below add
// to it meanwhile) and returns its index.
func (b *opModel) subgraph(name string, build func()) graph.SubgraphIndex {
	prev := b.cur
	b.cur = graph.SubgraphIndex(len(b.m.Subgraphs))
	b.m.Subgraphs = append(b.m.Subgraphs, graph.Subgraph{Name: name})
	build()
	s := b.cur
	b.cur = prev
	return s
}

// q is a per-tensor quantization; qc one with a scale per channel along
// dim.
func q(scale float32, zero int64) *graph.Quantization {
	return &graph.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zero}}
}

func qc(n int, dim int32) *graph.Quantization {
	out := &graph.Quantization{QuantizedDim: dim}
	for i := range n {
		out.Scale = append(out.Scale, 0.01+0.001*float32(i))
		out.ZeroPoint = append(out.ZeroPoint, 0)
	}
	return out
}

// tensor adds an activation tensor.
func (b *opModel) tensor(ty graph.ElementType, qu *graph.Quantization, shape ...int32) graph.TensorID {
	sg := b.sg()
	id := graph.TensorID(len(sg.Tensors))
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: fmt.Sprintf("t%d", id), Type: ty, Shape: shape, Quantization: qu})
	return id
}

// constant adds a constant tensor of random small values.
func (b *opModel) constant(ty graph.ElementType, qu *graph.Quantization, shape ...int32) graph.TensorID {
	id := b.tensor(ty, qu, shape...)
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	data := make([]byte, (n*ty.Bits()+7)/8)
	switch ty {
	case graph.Float32:
		for i := int64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(0x3c000000+b.r.Intn(0x1000000))) // about 0.01
		}
	case graph.Int32, graph.Int64:
		w := ty.Bits() / 8
		for i := int64(0); i < n; i++ {
			v := uint64(b.r.Intn(200) - 100)
			for k := int64(0); k < w; k++ {
				data[w*i+k] = byte(v >> (8 * k))
			}
		}
	default:
		b.r.Read(data)
	}
	b.sg().Tensors[id].Buffer = graph.BufferIndex(len(b.m.Buffers))
	b.m.Buffers = append(b.m.Buffers, graph.Buffer{Data: data})
	return id
}

// op adds an operator; options are the fields of its options table, by
// schema name (integers and bools).
func (b *opModel) op(code graph.Opcode, name string, ins, outs []graph.TensorID, table string, fields map[string]int64) *graph.Op {
	sg := b.sg()
	op := graph.Op{Code: code, CodeName: name, Version: 1, Inputs: ins, Outputs: outs}
	if table != "" {
		op.Options = &graph.Options{Table: table}
		for k, v := range fields {
			op.Options.Fields = append(op.Options.Fields, graph.OptionField{Name: k, Kind: graph.OptionInt, Present: true, Int: v})
		}
	}
	sg.Ops = append(sg.Ops, op)
	return &sg.Ops[len(sg.Ops)-1]
}

// io adds graph inputs and outputs.
func (b *opModel) io(ins, outs []graph.TensorID) {
	b.sg().Inputs = append(b.sg().Inputs, ins...)
	b.sg().Outputs = append(b.sg().Outputs, outs...)
}

// TFLite builtin codes (schema.fbs) of the operators built here.
const (
	bAdd           graph.Opcode = 0
	bAvgPool       graph.Opcode = 1
	bConv          graph.Opcode = 3
	bDepthwise     graph.Opcode = 4
	bFullyConn     graph.Opcode = 9
	bMaxPool       graph.Opcode = 17
	bMul           graph.Opcode = 18
	bSoftmax       graph.Opcode = 25
	bSVDF          graph.Opcode = 27
	bTransposeConv graph.Opcode = 67
	bBatchMatmul   graph.Opcode = 126
)

// opVariant is a kernel variant: add builds its operator, its operands
// and their graph inputs and outputs into a model.
type opVariant struct {
	name string
	add  func(b *opModel)
}

// opVariantsModel returns a model of the variants given, each on its
// own inputs.
func opVariantsModel(vs ...opVariant) *graph.Model {
	b := newOpModel(1)
	for _, v := range vs {
		v.add(b)
	}
	return b.m
}

// opVariants are kernel variants no corpus model has: BATCH_MATMUL of
// each type with transposed operands and constant or variable RHS;
// FULLY_CONNECTED on INT8 (constant filter: MVE kernel sums; a filter
// that is an input: scratch instead; per channel; a rank-3 output, run as
// a 1x1 convolution), INT16 and with an INT4 filter; convolutions and
// depthwise convolutions on INT16, with INT4 filters, one input channel,
// a multiplier, 1xN, a stride, 5x5; TRANSPOSE_CONV on INT8 (run as a
// convolution, or by rows) and INT16; SOFTMAX on INT16 and INT8 to
// INT16 (lookup tables); pools, ADD and MUL on INT16; SVDF on FLOAT32.
// (A rank-3 FULLY_CONNECTED with a per-tensor filter asks for a scratch
// buffer whose handle cmsis_nn/fully_connected.cc 309 requires to be at
// least 4, so it runs only after four other scratch buffers: left out.)
func opVariants() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	i8, i16 := graph.Int8, graph.Int16
	// activation quantizes activations of type ty (INT16: zero points 0,
	// as the kernels require), in and out.
	activation := func(ty graph.ElementType) (in, out *graph.Quantization) {
		switch ty {
		case i8:
			return q(0.05, 3), q(0.2, -2)
		case i16:
			return q(0.001, 0), q(0.004, 0)
		}
		return nil, nil
	}

	for _, ty := range []graph.ElementType{graph.Float32, i8, i16} {
		for _, adj := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, constRHS := range []bool{false, true} {
				variant(fmt.Sprintf("batch_matmul_%s_adj%d%d_const%d", ty, bool01(adj[0]), bool01(adj[1]), bool01(constRHS)), func(b *opModel) {
					qa, qo := activation(ty)
					lhsShape, rhsShape := []int32{2, 3, 4}, []int32{2, 4, 5}
					if adj[0] {
						lhsShape = []int32{2, 4, 3}
					}
					if adj[1] {
						rhsShape = []int32{2, 5, 4}
					}
					lhs := b.tensor(ty, qa, lhsShape...)
					ins := []graph.TensorID{lhs}
					var rhs graph.TensorID
					if constRHS {
						rhs = b.constant(ty, qa, rhsShape...)
					} else {
						rhs = b.tensor(ty, qa, rhsShape...)
						ins = append(ins, rhs)
					}
					o := b.tensor(ty, qo, 2, 3, 5)
					b.op(bBatchMatmul, "BATCH_MATMUL", []graph.TensorID{lhs, rhs}, []graph.TensorID{o}, "BatchMatMulOptions",
						map[string]int64{"adj_x": bool01(adj[0]), "adj_y": bool01(adj[1])})
					b.io(ins, []graph.TensorID{o})
				})
			}
		}
	}

	fc := func(name string, in, filter graph.ElementType, outRank int, perChannel, constFilter bool, bias graph.ElementType) {
		variant(name, func(b *opModel) {
			qa, qo := activation(in)
			qf := q(0.01, 0)
			if perChannel {
				qf = qc(6, 0)
			}
			shape, oshape := []int32{4, 8}, []int32{4, 6}
			if outRank == 3 {
				shape, oshape = []int32{2, 2, 8}, []int32{2, 2, 6}
			}
			x := b.tensor(in, qa, shape...)
			ins := []graph.TensorID{x}
			var f graph.TensorID
			if constFilter {
				f = b.constant(filter, qf, 6, 8)
			} else {
				f = b.tensor(filter, qf, 6, 8)
				ins = append(ins, f)
			}
			bi := b.constant(bias, nil, 6)
			o := b.tensor(in, qo, oshape...)
			b.op(bFullyConn, "FULLY_CONNECTED", []graph.TensorID{x, f, bi}, []graph.TensorID{o}, "FullyConnectedOptions",
				map[string]int64{"keep_num_dims": bool01(outRank == 3)})
			b.io(ins, []graph.TensorID{o})
		})
	}
	fc("fc_int8_const", i8, i8, 2, false, true, graph.Int32)
	fc("fc_int8_filter_input", i8, i8, 2, false, false, graph.Int32)
	fc("fc_int8_per_channel", i8, i8, 2, true, true, graph.Int32)
	fc("fc_int8_rank3_per_channel", i8, i8, 3, true, true, graph.Int32)
	fc("fc_int16", i16, i8, 2, false, true, graph.Int64)
	fc("fc_int8_int4", i8, graph.Int4, 2, false, true, graph.Int32)

	conv := func(name string, code graph.Opcode, in, filter graph.ElementType, h, w, c, oc, k, stride int32) {
		variant(name, func(b *opModel) {
			qa, qo := activation(in)
			bias := graph.Int32
			if in == i16 {
				bias = graph.Int64
			}
			x := b.tensor(in, qa, 1, h, w, c)
			var f graph.TensorID
			opName := "CONV_2D"
			if code == bDepthwise {
				opName = "DEPTHWISE_CONV_2D"
				f = b.constant(filter, qc(int(oc), 3), 1, k, k, oc)
			} else {
				f = b.constant(filter, qc(int(oc), 0), oc, 1, k, c)
			}
			bi := b.constant(bias, nil, oc)
			o := b.tensor(in, qo, 1, (h+stride-1)/stride, (w+stride-1)/stride, oc)
			op := b.op(code, opName, []graph.TensorID{x, f, bi}, []graph.TensorID{o}, "", nil)
			op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: stride, StrideH: stride, DilationW: 1, DilationH: 1}
			if code == bDepthwise {
				op.Window.DepthMultiplier = oc / c
			}
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	conv("conv_int16", bConv, i16, i8, 6, 6, 4, 8, 3, 1)
	conv("conv_int8_int4", bConv, i8, graph.Int4, 6, 6, 4, 8, 3, 1)
	conv("conv_int8_1xn", bConv, i8, i8, 1, 12, 4, 8, 3, 1)
	conv("conv_int8_stride2", bConv, i8, i8, 8, 8, 3, 8, 3, 2)
	conv("depthwise_int16", bDepthwise, i16, i8, 6, 6, 4, 4, 3, 1)
	conv("depthwise_int8_int4", bDepthwise, i8, graph.Int4, 6, 6, 4, 4, 3, 1)
	conv("depthwise_int8_one_channel", bDepthwise, i8, i8, 6, 6, 1, 8, 3, 1)
	conv("depthwise_int8_multiplier2", bDepthwise, i8, i8, 6, 6, 4, 8, 3, 1)
	conv("depthwise_int8_5x5", bDepthwise, i8, i8, 8, 8, 4, 4, 5, 1)

	tconv := func(name string, in graph.ElementType, c, oc, stride int32) {
		variant(name, func(b *opModel) {
			qa, qo := activation(in)
			bias := graph.Int32
			if in == i16 {
				bias = graph.Int64
			}
			x := b.tensor(in, qa, 1, 4, 4, c)
			f := b.constant(i8, qc(int(oc), 0), oc, 3, 3, c)
			bi := b.constant(bias, nil, oc)
			oh := 4 * stride
			shape := b.constant(graph.Int32, nil, 4)
			data := b.m.Buffers[b.sg().Tensors[shape].Buffer].Data
			for i, d := range []int32{1, oh, oh, oc} {
				binary.LittleEndian.PutUint32(data[4*i:], uint32(d))
			}
			o := b.tensor(in, qo, 1, oh, oh, oc)
			op := b.op(bTransposeConv, "TRANSPOSE_CONV", []graph.TensorID{shape, f, x, bi}, []graph.TensorID{o}, "", nil)
			op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: stride, StrideH: stride, DilationW: 1, DilationH: 1}
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	tconv("transpose_conv_int8_conv", i8, 20, 4, 2)
	tconv("transpose_conv_int8_rows", i8, 4, 4, 3)
	tconv("transpose_conv_int16", i16, 4, 4, 2)

	for _, tys := range [][2]graph.ElementType{{i16, i16}, {i8, i16}} {
		variant(fmt.Sprintf("softmax_%s_%s", tys[0], tys[1]), func(b *opModel) {
			// softmax_common.cc 89-105: the output scales and zero points
			// the kernels accept.
			qi, qo := q(0.05, 3), q(1.0/65536, -32768)
			if tys[0] == i16 {
				qi, qo = q(0.001, 0), q(1.0/32768, 0)
			}
			x := b.tensor(tys[0], qi, 2, 10)
			o := b.tensor(tys[1], qo, 2, 10)
			b.op(bSoftmax, "SOFTMAX", []graph.TensorID{x}, []graph.TensorID{o}, "", nil).Options = &graph.Options{Table: "SoftmaxOptions",
				Fields: []graph.OptionField{{Name: "beta", Kind: graph.OptionFloat, Present: true, Float: 1}}}
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}

	for _, code := range []graph.Opcode{bAvgPool, bMaxPool} {
		name := map[graph.Opcode]string{bAvgPool: "AVERAGE_POOL_2D", bMaxPool: "MAX_POOL_2D"}[code]
		variant(name+"_int16", func(b *opModel) {
			x := b.tensor(i16, q(0.001, 0), 1, 6, 6, 5)
			o := b.tensor(i16, q(0.001, 0), 1, 3, 3, 5)
			op := b.op(code, name, []graph.TensorID{x}, []graph.TensorID{o}, "", nil)
			op.Window = &graph.Window{Padding: graph.PaddingValid, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, FilterW: 2, FilterH: 2}
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	for _, code := range []graph.Opcode{bAdd, bMul} {
		name := map[graph.Opcode]string{bAdd: "ADD", bMul: "MUL"}[code]
		variant(name+"_int16", func(b *opModel) {
			x := b.tensor(i16, q(0.001, 0), 2, 7)
			y := b.tensor(i16, q(0.002, 0), 2, 7)
			o := b.tensor(i16, q(0.004, 0), 2, 7)
			b.op(code, name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
		})
	}

	variant("svdf_float", func(b *opModel) {
		x := b.tensor(graph.Float32, nil, 1, 8)
		wf := b.constant(graph.Float32, nil, 6, 8)
		wt := b.constant(graph.Float32, nil, 6, 4)
		bi := b.constant(graph.Float32, nil, 3)
		st := b.tensor(graph.Float32, nil, 1, 24)
		b.sg().Tensors[st].IsVariable = true
		o := b.tensor(graph.Float32, nil, 1, 3)
		b.op(bSVDF, "SVDF", []graph.TensorID{x, wf, wt, bi, st}, []graph.TensorID{o}, "SVDFOptions", map[string]int64{"rank": 2})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	return out
}

func bool01(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestTFLMArenaKernelVariants checks the kernel data of variants no
// corpus model has (opVariants) on each runner: TFLM's reference kernels
// on tflm_run (host64) and tflm_run_m55, CMSIS-NN on tflm_run_cmsis
// (portable C), tflm_run_m4_cmsis (DSP) and tflm_run_m55_cmsis (MVE). One
// model holds every variant, each on its own inputs: heliac's emitted
// model runs with exactly its figure (planner outside the arena, as the
// runners build it) and fails with 16 bytes less, TFLM's head and
// persistent tail are heliac's (the tail sums every variant's Init and
// Prepare buffers), and its outputs are the original model's on that
// runner. When a check fails, each variant is run alone to name the ones
// whose head or tail differ.
func TestTFLMArenaKernelVariants(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs a model on five TFLM builds, three of them emulated; skipped with -short")
	}
	tflmrun.Require(t)
	runners := append([]cmsisRunner{
		{name: "tflm_run", target: tflmarena.Host64},
		{name: "tflm_run_m55", target: tflmarena.CortexM, qemu: true},
	}, cmsisRunners...)
	all := opVariants()
	data, err := tflite.Encode(opVariantsModel(all...), tflite.EncodeOptions{})
	require.NoError(t, err)
	tmp := t.TempDir()
	orig := filepath.Join(tmp, "variants.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	// compile returns the emitted model's file and its figure on r.
	compile := func(r cmsisRunner, data []byte, name string) (string, tflmarena.Arena, error) {
		o := heliac.Options{Kernels: kernels.TFLMReference, TFLMTarget: r.target.Name, EmitTFLite: true, Version: "test"}
		if r.cpu != "" {
			o.Kernels, o.CPU = kernels.CMSISNN, r.cpu
		}
		cfg, err := o.Config()
		if err != nil {
			return "", tflmarena.Arena{}, err
		}
		cfg.ModelName = name
		out, err := driver.Compile(context.Background(), data, cfg)
		if err != nil {
			return "", tflmarena.Arena{}, err
		}
		if out.TFLMArenaErr != nil {
			return "", tflmarena.Arena{}, out.TFLMArenaErr
		}
		em, err := tflite.Load(out.TFLite.Data)
		if err != nil {
			return "", tflmarena.Arena{}, err
		}
		a, err := tflmarena.ComputeSetup(em, out.TFLMArena.Emitted.Head, r.target, tflmarena.Kernels{Library: cfg.Kernels, CPU: cfg.Target},
			tflmarena.PlannerOutside)
		if err != nil {
			return "", tflmarena.Arena{}, err
		}
		file := filepath.Join(tmp, r.name+"_"+name+".tflite")
		return file, a, os.WriteFile(file, out.TFLite.Data, 0o644)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	alone := func(r cmsisRunner, tool, name string) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		var v opVariant
		for _, w := range all {
			if w.name == name {
				v = w
			}
		}
		d, err := tflite.Encode(opVariantsModel(v), tflite.EncodeOptions{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		f, a, err := compile(r, d, name)
		if err != nil {
			t.Errorf("%s on %s: %v", name, r.name, err)
			return
		}
		at, o := runOracle(context.Background(), tool, f, a.Bytes, time.Minute)
		less, _ := runOracle(context.Background(), tool, f, a.Bytes-16, time.Minute)
		switch {
		case at != ran:
			t.Errorf("%s alone on %s: arena %d does not run: %s", name, r.name, a.Bytes, o["error"])
		case less == ran && r.target.PointerSize == 4:
			t.Errorf("%s alone on %s: arena %d-16 runs too", name, r.name, a.Bytes)
		case less == ran:
			t.Logf("%s alone on %s: arena %d-16 runs too (on host64 16 bytes of the kernel's temporaries can be overwritten harmlessly here)", name, r.name, a.Bytes)
		}
	}
	for _, r := range runners {
		tool := runnerTool(r.name, r.qemu)
		if tool == "" {
			t.Logf("%s (or qemu-system-arm) not found: not checked", r.name)
			continue
		}
		// Alone, these need most while a kernel's Prepare allocates
		// persistent buffers over its live temporaries.
		for _, name := range []string{"batch_matmul_INT8_adj00_const0", "softmax_INT16_INT16", "fc_int8_per_channel"} {
			wg.Add(1)
			go alone(r, tool, name)
		}
		file, a, err := compile(r, data, "variants")
		require.NoError(t, err, r.name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := arenaCheck{model: "variants", what: "emitted", file: file, tool: tool, qemu: r.qemu, a: a}
			msg, o := c.run()
			ref, refOut := runOracle(context.Background(), tool, orig, 2*a.Bytes+64<<10, time.Minute)
			if ref != ran {
				t.Errorf("%s: the original model does not run: %s", r.name, refOut["error"])
			} else if msg == "" {
				for k, v := range refOut {
					if strings.HasPrefix(k, "output.0.") && o[k] != v {
						t.Errorf("%s: %s differs between the original and the emitted model", r.name, k)
					}
				}
			}
			if msg == "" {
				t.Logf("%d kernel variants on %s: exact at %d bytes (head %d, tail %d)", len(all), r.name, a.Bytes, a.Head, a.Tail)
				return
			}
			t.Errorf("%d kernel variants on %s: %s", len(all), r.name, msg)
			// Name the variants whose head or tail differ.
			for _, v := range all {
				d, err := tflite.Encode(opVariantsModel(v), tflite.EncodeOptions{})
				if err != nil {
					t.Errorf("%s: %v", v.name, err)
					continue
				}
				f, a, err := compile(r, d, v.name)
				if err != nil {
					t.Errorf("  %s alone on %s: %v", v.name, r.name, err)
				} else if at, o := runOracle(context.Background(), tool, f, 2*a.Bytes+64<<10, time.Minute); at != ran {
					t.Errorf("  %s alone on %s does not run: %s", v.name, r.name, o["error"])
				} else if o["planner_max_bytes"] != itoa(a.Head) || o["tail_bytes"] != itoa(a.Tail) {
					t.Errorf("  %s alone on %s: head %s tail %s, heliac says %d and %d", v.name, r.name, o["planner_max_bytes"], o["tail_bytes"], a.Head, a.Tail)
				}
			}
		}()
	}
	wg.Wait()
}
