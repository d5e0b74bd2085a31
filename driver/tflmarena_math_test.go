package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	"github.com/heliac/heliac/tflite/schema"
	"github.com/heliac/heliac/tflmarena"
)

// envOpSweep asks the one-operator arena tests (TestTFLMArenaMathOps,
// TestTFLMArenaShapeOps, TestTFLMArenaDecode) to run every variant on the
// emulated Cortex-M55 too (1-3 s a run under QEMU), not only their
// samples.
const envOpSweep = "HELIAC_OP_SWEEP"

// opRunners are the reference-kernel runners the one-operator arena
// tests prove their figures on: the host (host64) and the Cortex-M55.
var opRunners = []cmsisRunner{
	{name: "tflm_run", target: tflmarena.Host64},
	{name: "tflm_run_m55", target: tflmarena.CortexM, qemu: true},
}

// mathOpCI are the variants TestTFLMArenaMathOps runs on tflm_run_m55
// without envOpSweep: the kernels that allocate a persistent buffer
// over their temporaries, and the largest Init.
var mathOpCI = map[string]bool{"ADD_N_INT8": true, "LOG_SOFTMAX_INT8": true, "REDUCE_MAX_INT8": true, "ELU_INT8": true}

// builtin returns the schema's code of the builtin operator name (-1,
// which no model encodes, for a name the schema does not have).
func builtin(name string) graph.Opcode {
	if code, ok := schema.EnumValuesBuiltinOperator[name]; ok {
		return graph.Opcode(code)
	}
	return -1
}

// int32s sets a constant's int32 elements.
func (b *opModel) int32s(id graph.TensorID, vs ...int32) {
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	for i, v := range vs {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(v))
	}
}

// int64s sets a constant's int64 elements.
func (b *opModel) int64s(id graph.TensorID, vs ...int64) {
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	for i, v := range vs {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(v))
	}
}

// mathOpVariants are one-operator models of the elementwise, logical,
// reduction and arg operators (kernels/tflmtail_math.go), one per
// operator and type TFLM's reference kernel runs, so each path that
// allocates differently (INT8 OpData in Prepare, type-dependent
// temporaries) has a model.
func mathOpVariants() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	quant := func(ty graph.ElementType) *graph.Quantization {
		switch ty {
		case graph.Int8:
			return q(0.05, 3)
		case graph.Int16:
			return q(0.001, 0)
		}
		return nil
	}
	// unary: input and output of one type and shape.
	unary := func(name string, ty graph.ElementType, qi, qo *graph.Quantization, table string, fields map[string]int64) {
		variant(fmt.Sprintf("%s_%s", name, ty), func(b *opModel) {
			x := b.tensor(ty, qi, 2, 3, 5)
			o := b.tensor(ty, qo, 2, 3, 5)
			b.op(builtin(name), name, []graph.TensorID{x}, []graph.TensorID{o}, table, fields)
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	for _, name := range []string{"CEIL", "COS", "EXP", "FLOOR", "LOG", "ROUND", "SIN", "SQRT", "SQUARE"} {
		unary(name, graph.Float32, nil, nil, "", nil)
	}
	unary("LOGICAL_NOT", graph.Bool, nil, nil, "", nil)
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8} {
		unary("ELU", ty, quant(ty), quant(ty), "", nil)
		// elementwise.cc validate_input_func: INT8 input at or above its
		// zero point.
		qi := quant(ty)
		if ty == graph.Int8 {
			qi = q(0.05, -128)
		}
		unary("RSQRT", ty, qi, quant(ty), "", nil)
		var qo *graph.Quantization
		if ty == graph.Int8 {
			qo = q(16.0/256, 127) // log_softmax.cc CalculateOpData
		}
		unary("LOG_SOFTMAX", ty, quant(ty), qo, "", nil)
		qn := quant(ty)
		if ty == graph.Int8 {
			qn = q(1.0/128, 0)
		}
		unary("L2_NORMALIZATION", ty, quant(ty), qn, "L2NormOptions", nil)
	}
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8, graph.Int32, graph.Int64} {
		unary("ZEROS_LIKE", ty, quant(ty), quant(ty), "", nil)
	}

	// binary: two inputs and an output of one type and shape.
	binary := func(name string, ty graph.ElementType, broadcast bool) {
		suffix := ""
		if broadcast {
			suffix = "_broadcast"
		}
		variant(fmt.Sprintf("%s_%s%s", name, ty, suffix), func(b *opModel) {
			x := b.tensor(ty, quant(ty), 2, 3, 5)
			yShape := []int32{2, 3, 5}
			if broadcast {
				yShape = []int32{1, 5}
			}
			y := b.tensor(ty, quant(ty), yShape...)
			o := b.tensor(ty, quant(ty), 2, 3, 5)
			b.op(builtin(name), name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
		})
	}
	binary("FLOOR_DIV", graph.Float32, false)
	binary("FLOOR_MOD", graph.Float32, true)
	binary("LOGICAL_AND", graph.Bool, false)
	binary("LOGICAL_OR", graph.Bool, true)
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8, graph.Int16, graph.Int32} {
		binary("SQUARED_DIFFERENCE", ty, ty == graph.Int8)
	}

	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8} {
		variant("ADD_N_"+ty.String(), func(b *opModel) {
			var ins []graph.TensorID
			for range 3 {
				ins = append(ins, b.tensor(ty, quant(ty), 4, 6))
			}
			o := b.tensor(ty, q(0.15, 1), 4, 6)
			if ty != graph.Int8 {
				b.sg().Tensors[o].Quantization = nil
			}
			b.op(builtin("ADD_N"), "ADD_N", ins, []graph.TensorID{o}, "", nil)
			b.io(ins, []graph.TensorID{o})
		})
		for _, name := range []string{"ARG_MAX", "ARG_MIN"} {
			variant(name+"_"+ty.String(), func(b *opModel) {
				x := b.tensor(ty, quant(ty), 3, 7)
				axis := b.constant(graph.Int32, nil, 1)
				b.int32s(axis, 1)
				o := b.tensor(graph.Int32, nil, 3)
				table := map[string]string{"ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions"}[name]
				b.op(builtin(name), name, []graph.TensorID{x, axis}, []graph.TensorID{o}, table, map[string]int64{"output_type": int64(graph.Int32)})
				b.io([]graph.TensorID{x}, []graph.TensorID{o})
			})
		}
		variant("CUMSUM_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, quant(ty), 3, 7)
			axis := b.constant(graph.Int32, nil)
			b.int32s(axis, 1)
			o := b.tensor(ty, q(0.2, -1), 3, 7)
			if ty != graph.Int8 {
				b.sg().Tensors[o].Quantization = nil
			}
			b.op(builtin("CUMSUM"), "CUMSUM", []graph.TensorID{x, axis}, []graph.TensorID{o}, "CumsumOptions", map[string]int64{"reverse": 1})
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
		for _, name := range []string{"REDUCE_MAX", "REDUCE_MIN"} {
			variant(name+"_"+ty.String(), func(b *opModel) {
				x := b.tensor(ty, quant(ty), 2, 4, 6)
				axis := b.constant(graph.Int32, nil, 2)
				b.int32s(axis, 0, 2)
				o := b.tensor(ty, quant(ty), 4)
				b.op(builtin(name), name, []graph.TensorID{x, axis}, []graph.TensorID{o}, "ReducerOptions", nil)
				b.io([]graph.TensorID{x}, []graph.TensorID{o})
			})
		}
	}
	variant("REDUCE_ALL_BOOL", func(b *opModel) {
		x := b.tensor(graph.Bool, nil, 2, 4, 6)
		axis := b.constant(graph.Int32, nil, 1)
		b.int32s(axis, 1)
		o := b.tensor(graph.Bool, nil, 2, 1, 6)
		b.op(builtin("REDUCE_ALL"), "REDUCE_ALL", []graph.TensorID{x, axis}, []graph.TensorID{o}, "ReducerOptions", map[string]int64{"keep_dims": 1})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8, graph.Int16} {
		variant("PRELU_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, quant(ty), 1, 3, 4, 5)
			at := ty
			if ty == graph.Int16 {
				at = graph.Int8 // prelu_common.cc PreluPrepare
			}
			alpha := b.constant(at, quant(at), 1, 1, 5)
			if at == graph.Float32 {
				b.sg().Tensors[alpha].Quantization = nil
			}
			o := b.tensor(ty, quant(ty), 1, 3, 4, 5)
			b.op(builtin("PRELU"), "PRELU", []graph.TensorID{x, alpha}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
		variant("SELECT_V2_"+ty.String(), func(b *opModel) {
			c := b.tensor(graph.Bool, nil, 3, 1)
			x := b.tensor(ty, quant(ty), 3, 4)
			y := b.tensor(ty, quant(ty), 1, 4)
			o := b.tensor(ty, quant(ty), 3, 4)
			b.op(builtin("SELECT_V2"), "SELECT_V2", []graph.TensorID{c, x, y}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{c, x, y}, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{graph.Int32, graph.Int64} {
		variant("BROADCAST_ARGS_"+ty.String(), func(b *opModel) {
			// The first shape is all ones, so any second one broadcasts
			// (broadcast_args.h BroadcastArgs checks the rest).
			s1 := b.constant(ty, nil, 2)
			s2 := b.tensor(ty, nil, 2)
			if ty == graph.Int32 {
				b.int32s(s1, 1, 1)
			} else {
				b.int64s(s1, 1, 1)
			}
			o := b.tensor(ty, nil, 2)
			b.op(builtin("BROADCAST_ARGS"), "BROADCAST_ARGS", []graph.TensorID{s1, s2}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{s2}, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8} {
		variant("BROADCAST_TO_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, quant(ty), 1, 5)
			shape := b.constant(graph.Int32, nil, 3)
			b.int32s(shape, 2, 3, 5)
			o := b.tensor(ty, quant(ty), 2, 3, 5)
			b.op(builtin("BROADCAST_TO"), "BROADCAST_TO", []graph.TensorID{x, shape}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{graph.Float32, graph.Int8, graph.Int32} {
		variant("FILL_"+ty.String(), func(b *opModel) {
			dims := b.constant(graph.Int32, nil, 2)
			b.int32s(dims, 3, 5)
			v := b.tensor(ty, quant(ty))
			o := b.tensor(ty, quant(ty), 3, 5)
			b.op(builtin("FILL"), "FILL", []graph.TensorID{dims, v}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{v}, []graph.TensorID{o})
		})
	}
	return out
}

// compileOp compiles a one-operator model's bytes for runner r (the
// reference kernels, --emit-tflite) and returns the emitted model's file
// in dir and its figure with the runners' setup (planner outside the
// arena).
func compileOp(r cmsisRunner, data []byte, name, dir string) (string, tflmarena.Arena, error) {
	o := heliac.Options{Kernels: kernels.TFLMReference, TFLMTarget: r.target.Name, EmitTFLite: true, Version: "test"}
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
	file := filepath.Join(dir, r.name+"_"+name+".tflite")
	return file, a, os.WriteFile(file, out.TFLite.Data, 0o644)
}

// TestTFLMArenaMathOps proves the arena data of the elementwise,
// logical, reduction and arg operators (kernels/tflmtail_math.go) on
// one-operator models (mathOpVariants): on tflm_run (host64) every
// model, on tflm_run_m55 (cortex-m) mathOpCI's, or every model with
// HELIAC_OP_SWEEP=1. Each emitted model (--emit-tflite --kernels
// tflm-reference) runs with heliac's figure for the runners' setup
// (tflmarena.PlannerOutside), TFLM's head and tail are heliac's, it fails
// with 16 bytes less, and its outputs are the original model's. On
// host64, where 16 bytes of a kernel's temporaries can be overwritten
// harmlessly, a run at N-16 is logged rather than failed, as
// TestTFLMArenaKernelVariants does.
func TestTFLMArenaMathOps(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM on one-operator models; skipped with -short")
	}
	tflmrun.Require(t)
	sweep := os.Getenv(envOpSweep) != ""
	runners := opRunners
	all := mathOpVariants()
	tmp := t.TempDir()
	type result struct{ exact, lessRuns int }
	var mu sync.Mutex
	results := map[string]*result{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, r := range runners {
		tool := runnerTool(r.name, r.qemu)
		if tool == "" {
			t.Logf("%s (or qemu-system-arm) not found: not checked", r.name)
			continue
		}
		results[r.name] = &result{}
		for _, v := range all {
			if r.qemu && !sweep && !mathOpCI[v.name] {
				continue
			}
			data, err := tflite.Encode(opVariantsModel(v), tflite.EncodeOptions{})
			require.NoError(t, err, v.name)
			orig := filepath.Join(tmp, v.name+".tflite")
			require.NoError(t, os.WriteFile(orig, data, 0o644))
			file, a, err := compileOp(r, data, v.name, tmp)
			if err != nil {
				t.Errorf("%s on %s: %v", v.name, r.name, err)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				c := arenaCheck{model: v.name, what: "emitted", file: file, tool: tool, qemu: r.qemu, a: a}
				msg, o := c.run()
				lessRuns := false
				if !r.qemu && strings.HasSuffix(msg, "-16 runs too") {
					lessRuns = true
					msg = strings.TrimSuffix(strings.TrimSuffix(msg, fmt.Sprintf("arena %d-16 runs too", a.Bytes)), "; ")
				}
				limit := time.Minute
				ref, refOut := runOracle(context.Background(), tool, orig, 2*a.Bytes+64<<10, limit)
				var errs []string
				if msg != "" {
					errs = append(errs, msg)
				}
				if ref != ran {
					errs = append(errs, "the original model does not run: "+refOut["error"]+refOut["invoke.0"])
				} else if msg == "" {
					for k, val := range refOut {
						if strings.HasPrefix(k, "output.0.") && o[k] != val {
							errs = append(errs, k+" differs between the original and the emitted model")
						}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if len(errs) > 0 {
					t.Errorf("%s on %s (arena %d, head %d, tail %d): %s", v.name, r.name, a.Bytes, a.Head, a.Tail, strings.Join(errs, "; "))
					return
				}
				results[r.name].exact++
				if lessRuns {
					results[r.name].lessRuns++
					t.Logf("%s on %s: arena %d-16 runs too (host64)", v.name, r.name, a.Bytes)
				}
				t.Logf("%s on %s: exact at %d bytes (head %d, tail %d)", v.name, r.name, a.Bytes, a.Head, a.Tail)
			}()
		}
	}
	wg.Wait()
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%s: %d one-operator models run at heliac's figure with TFLM's head and tail (%d of them run at N-16 too)",
			n, results[n].exact, results[n].lessRuns)
	}
}

// TestTFLMArenaSaysWhatTFLMCannotRun checks that where TFLM's reference
// kernels cannot run a model (an operator type its kernel refuses, an
// operator it does not register), the compile's TFLM arena error says so
// rather than that the data is missing.
func TestTFLMArenaSaysWhatTFLMCannotRun(t *testing.T) {
	cases := []struct {
		name, want string
		add        func(b *opModel)
	}{
		{"EXP int8", "TFLM cannot run it: TFLM's EXP kernel takes input 0 of FLOAT32 only, not INT8 (exp.cc ExpPrepare)",
			func(b *opModel) {
				x := b.tensor(graph.Int8, q(0.1, 0), 2, 3)
				o := b.tensor(graph.Int8, q(0.1, 0), 2, 3)
				b.op(builtin("EXP"), "EXP", []graph.TensorID{x}, []graph.TensorID{o}, "", nil)
				b.io([]graph.TensorID{x}, []graph.TensorID{o})
			}},
		{"POW", "TFLM cannot run it: TFLM has no kernel for it (\"Didn't find op for builtin opcode 'POW'\")",
			func(b *opModel) {
				x := b.tensor(graph.Float32, nil, 2, 3)
				y := b.tensor(graph.Float32, nil, 2, 3)
				o := b.tensor(graph.Float32, nil, 2, 3)
				b.op(builtin("POW"), "POW", []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
				b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := tflite.Encode(opVariantsModel(opVariant{c.name, c.add}), tflite.EncodeOptions{})
			require.NoError(t, err)
			o := heliac.Options{Kernels: kernels.TFLMReference, TFLMTarget: tflmarena.CortexM.Name, EmitTFLite: true, Version: "test"}
			cfg, err := o.Config()
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			require.Error(t, out.TFLMArenaErr)
			require.Contains(t, out.TFLMArenaErr.Error(), c.want)
		})
	}
}
