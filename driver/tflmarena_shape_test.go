package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/flexbuf"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// TFLite builtin codes (schema.fbs) of the shape, spatial and gather
// operators.
const (
	bDepthToSpace       graph.Opcode = 5
	bEmbeddingLookup    graph.Opcode = 7
	bL2Pool             graph.Opcode = 12
	bResizeBilinear     graph.Opcode = 23
	bSpaceToDepth       graph.Opcode = 26
	bBatchToSpace       graph.Opcode = 37
	bSpaceToBatch       graph.Opcode = 38
	bSlice              graph.Opcode = 65
	bResizeNearest      graph.Opcode = 97
	bMirrorPad          graph.Opcode = 100
	bReverseV2          graph.Opcode = 105
	bGatherND           graph.Opcode = 107
	bDynamicUpdateSlice graph.Opcode = 151
)

// ints adds a constant tensor of type ty (INT32 or INT64) holding vals.
func (b *opModel) ints(ty graph.ElementType, shape []int32, vals ...int64) graph.TensorID {
	id := b.constant(ty, nil, shape...)
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	for i, v := range vals {
		if ty == graph.Int64 {
			binary.LittleEndian.PutUint64(data[8*i:], uint64(v))
		} else {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(int32(v)))
		}
	}
	return id
}

// positive adds a constant FLOAT32 tensor of values in (0.5, 1.5).
func (b *opModel) positive(shape ...int32) graph.TensorID {
	id := b.constant(graph.Float32, nil, shape...)
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	for i := 0; i < len(data); i += 4 {
		binary.LittleEndian.PutUint32(data[i:], math.Float32bits(0.5+b.r.Float32()))
	}
	return id
}

// custom adds a custom operator with FlexBuffers options.
func (b *opModel) custom(name string, ins, outs []graph.TensorID, opts ...flexbuf.Entry) {
	op := b.op(graph.Custom, "CUSTOM", ins, outs, "", nil)
	op.CustomName = name
	if len(opts) > 0 {
		data, err := flexbuf.EncodeMap(opts)
		if err != nil {
			panic(err) // the entries below are fixed
		}
		op.CustomOptions = data
	}
}

// shapeVariants are one-operator models of the shape, spatial, gather
// and signal operators' kernels (kernels/tflmtail_shape.go): each type
// path the kernel accepts where it allocates differently (FLOAT32, INT8,
// and the others a kernel names), and options that change its buffers.
func shapeVariants() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	f32, i8, i16, i32, i64 := graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64
	qa := func(ty graph.ElementType) *graph.Quantization {
		switch ty {
		case i8:
			return q(0.05, 3)
		case i16:
			return q(0.001, 0)
		}
		return nil
	}
	unary := func(code graph.Opcode, name string, ty graph.ElementType, in, outShape []int32, table string, fields map[string]int64, consts func(b *opModel) []graph.TensorID) func(b *opModel) {
		return func(b *opModel) {
			x := b.tensor(ty, qa(ty), in...)
			ins := []graph.TensorID{x}
			if consts != nil {
				ins = append(ins, consts(b)...)
			}
			o := b.tensor(ty, qa(ty), outShape...)
			b.op(code, name, ins, []graph.TensorID{o}, table, fields)
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		}
	}
	for _, ty := range []graph.ElementType{f32, i8} {
		variant("batch_to_space_nd_"+ty.String(), unary(bBatchToSpace, "BATCH_TO_SPACE_ND", ty, []int32{4, 2, 2, 1}, []int32{1, 4, 4, 1}, "", nil,
			func(b *opModel) []graph.TensorID {
				return []graph.TensorID{b.ints(i32, []int32{2}, 2, 2), b.ints(i32, []int32{2, 2}, 0, 0, 0, 0)}
			}))
		variant("space_to_batch_nd_"+ty.String(), unary(bSpaceToBatch, "SPACE_TO_BATCH_ND", ty, []int32{1, 4, 4, 1}, []int32{4, 2, 2, 1}, "", nil,
			func(b *opModel) []graph.TensorID {
				return []graph.TensorID{b.ints(i32, []int32{2}, 2, 2), b.ints(i32, []int32{2, 2}, 0, 0, 0, 0)}
			}))
		variant("depth_to_space_"+ty.String(), unary(bDepthToSpace, "DEPTH_TO_SPACE", ty, []int32{1, 2, 2, 8}, []int32{1, 4, 4, 2},
			"DepthToSpaceOptions", map[string]int64{"block_size": 2}, nil))
		variant("space_to_depth_"+ty.String(), unary(bSpaceToDepth, "SPACE_TO_DEPTH", ty, []int32{1, 4, 4, 2}, []int32{1, 2, 2, 8},
			"SpaceToDepthOptions", map[string]int64{"block_size": 2}, nil))
		for _, mode := range []int64{0, 1} {
			variant(fmt.Sprintf("mirror_pad_%s_mode%d", ty, mode), unary(bMirrorPad, "MIRROR_PAD", ty, []int32{1, 3, 3, 2}, []int32{1, 5, 5, 2},
				"MirrorPadOptions", map[string]int64{"mode": mode}, func(b *opModel) []graph.TensorID {
					return []graph.TensorID{b.ints(i32, []int32{4, 2}, 0, 0, 1, 1, 1, 1, 0, 0)}
				}))
		}
		variant("resize_bilinear_"+ty.String(), unary(bResizeBilinear, "RESIZE_BILINEAR", ty, []int32{1, 2, 2, 3}, []int32{1, 4, 4, 3},
			"ResizeBilinearOptions", map[string]int64{"half_pixel_centers": 1}, func(b *opModel) []graph.TensorID {
				return []graph.TensorID{b.ints(i32, []int32{2}, 4, 4)}
			}))
		variant("resize_nearest_neighbor_"+ty.String(), unary(bResizeNearest, "RESIZE_NEAREST_NEIGHBOR", ty, []int32{1, 2, 2, 3}, []int32{1, 4, 4, 3},
			"ResizeNearestNeighborOptions", map[string]int64{"align_corners": 1}, func(b *opModel) []graph.TensorID {
				return []graph.TensorID{b.ints(i32, []int32{2}, 4, 4)}
			}))
		for _, idx := range []graph.ElementType{i32, i64} {
			variant(fmt.Sprintf("slice_%s_%s", ty, idx), unary(bSlice, "SLICE", ty, []int32{3, 4}, []int32{2, 3}, "", nil,
				func(b *opModel) []graph.TensorID {
					return []graph.TensorID{b.ints(idx, []int32{2}, 1, 0), b.ints(idx, []int32{2}, 2, 3)}
				}))
			variant(fmt.Sprintf("dynamic_update_slice_%s_%s", ty, idx), func(b *opModel) {
				x := b.tensor(ty, qa(ty), 4, 4)
				u := b.tensor(ty, qa(ty), 2, 2)
				o := b.tensor(ty, qa(ty), 4, 4)
				b.op(bDynamicUpdateSlice, "DYNAMIC_UPDATE_SLICE", []graph.TensorID{x, u, b.ints(idx, []int32{2}, 1, 2)}, []graph.TensorID{o}, "", nil)
				b.io([]graph.TensorID{x, u}, []graph.TensorID{o})
			})
		}
		variant("gather_nd_"+ty.String(), func(b *opModel) {
			p := b.tensor(ty, qa(ty), 3, 4)
			o := b.tensor(ty, qa(ty), 2, 4)
			b.op(bGatherND, "GATHER_ND", []graph.TensorID{p, b.ints(i32, []int32{2, 1}, 2, 0)}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{p}, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{f32, i8, i16} {
		variant("reverse_v2_"+ty.String(), unary(bReverseV2, "REVERSE_V2", ty, []int32{2, 3, 4}, []int32{2, 3, 4}, "", nil,
			func(b *opModel) []graph.TensorID { return []graph.TensorID{b.ints(i32, []int32{1}, 1)} }))
	}
	for _, tys := range [][2]graph.ElementType{{f32, f32}, {i8, f32}, {i8, i8}} {
		variant(fmt.Sprintf("embedding_lookup_%s_%s", tys[0], tys[1]), func(b *opModel) {
			// embedding_lookup.cc CalculateOpData: INT8 values to FLOAT32
			// need a zero point of 0.
			qv := q(0.05, 0)
			if tys[0] == f32 {
				qv = nil
			}
			v := b.tensor(tys[0], qv, 4, 3, 2)
			qo := qv
			if tys[1] == f32 {
				qo = nil
			}
			o := b.tensor(tys[1], qo, 3, 3, 2)
			b.op(bEmbeddingLookup, "EMBEDDING_LOOKUP", []graph.TensorID{b.ints(i32, []int32{3}, 3, 0, 2), v}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{v}, []graph.TensorID{o})
		})
	}
	variant("l2_pool_2d_FLOAT32", unary(bL2Pool, "L2_POOL_2D", f32, []int32{1, 4, 4, 3}, []int32{1, 2, 2, 3}, "Pool2DOptions",
		map[string]int64{"padding": int64(graph.PaddingValid), "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2}, nil))

	// Custom operators.
	for _, regular := range []bool{false, true} {
		variant(fmt.Sprintf("detection_postprocess_regular%d", bool01(regular)), func(b *opModel) {
			boxes := b.tensor(f32, nil, 1, 10, 4)
			scores := b.tensor(f32, nil, 1, 10, 4)
			anchors := b.positive(10, 4)
			det := int32(3)
			outs := []graph.TensorID{b.tensor(f32, nil, 1, det, 4), b.tensor(f32, nil, 1, det), b.tensor(f32, nil, 1, det), b.tensor(f32, nil, 1)}
			b.custom("TFLite_Detection_PostProcess", []graph.TensorID{boxes, scores, anchors}, outs,
				flexbuf.Entry{Key: "max_detections", Value: int(det)}, flexbuf.Entry{Key: "max_classes_per_detection", Value: 1},
				flexbuf.Entry{Key: "detections_per_class", Value: 5}, flexbuf.Entry{Key: "use_regular_nms", Value: regular},
				flexbuf.Entry{Key: "nms_score_threshold", Value: float32(-1e9)}, flexbuf.Entry{Key: "nms_iou_threshold", Value: float32(0.5)},
				flexbuf.Entry{Key: "num_classes", Value: 3}, flexbuf.Entry{Key: "y_scale", Value: float32(10)}, flexbuf.Entry{Key: "x_scale", Value: float32(10)},
				flexbuf.Entry{Key: "h_scale", Value: float32(5)}, flexbuf.Entry{Key: "w_scale", Value: float32(5)})
			b.io([]graph.TensorID{boxes, scores}, outs)
		})
	}
	variant("circular_buffer_INT8", func(b *opModel) {
		x := b.tensor(i8, q(0.05, 3), 1, 1, 1, 8)
		o := b.tensor(i8, q(0.05, 3), 1, 5, 1, 8)
		b.custom("CIRCULAR_BUFFER", []graph.TensorID{x}, []graph.TensorID{o}, flexbuf.Entry{Key: "cycles_max", Value: 1})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_delay", func(b *opModel) {
		x := b.tensor(i16, nil, 3, 40)
		o := b.tensor(i16, nil, 3, 40)
		b.custom("SignalDelay", []graph.TensorID{x}, []graph.TensorID{o}, flexbuf.Entry{Key: "delay_length", Value: 7})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("signal_framer", func(b *opModel) {
		x := b.tensor(i16, nil, 2, 32)
		o := b.tensor(i16, nil, 2, 4, 25)
		valid := b.tensor(graph.Bool, nil)
		b.custom("SignalFramer", []graph.TensorID{x}, []graph.TensorID{o, valid},
			flexbuf.Entry{Key: "frame_size", Value: 25}, flexbuf.Entry{Key: "frame_step", Value: 8}, flexbuf.Entry{Key: "prefill", Value: true})
		b.io([]graph.TensorID{x}, []graph.TensorID{o, valid})
	})
	variant("signal_stacker", func(b *opModel) {
		x := b.tensor(i16, nil, 10)
		o := b.tensor(i16, nil, 40)
		valid := b.tensor(graph.Bool, nil)
		b.custom("SignalStacker", []graph.TensorID{x}, []graph.TensorID{o, valid},
			flexbuf.Entry{Key: "num_channels", Value: 10}, flexbuf.Entry{Key: "stacker_left_context", Value: 1},
			flexbuf.Entry{Key: "stacker_right_context", Value: 2}, flexbuf.Entry{Key: "stacker_step", Value: 1})
		b.io([]graph.TensorID{x}, []graph.TensorID{o, valid})
	})
	for _, ty := range []graph.ElementType{i16, f32} {
		variant("signal_overlap_add_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, nil, 2, 4, 16)
			o := b.tensor(ty, nil, 2, 16)
			b.custom("SignalOverlapAdd", []graph.TensorID{x}, []graph.TensorID{o},
				flexbuf.Entry{Key: "T", Value: int(ty)}, flexbuf.Entry{Key: "frame_step", Value: 4})
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{i16, i32, f32} {
		variant("signal_irfft_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, nil, 2, 18)
			o := b.tensor(ty, nil, 2, 16)
			b.custom("SignalIrfft", []graph.TensorID{x}, []graph.TensorID{o},
				flexbuf.Entry{Key: "T", Value: int(ty)}, flexbuf.Entry{Key: "fft_length", Value: 16})
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	return out
}

// shapeRefused are variants whose kernel's Prepare (or Init) refuses the
// operator: heliac says TFLM cannot run them, and TFLM fails to allocate
// them at any arena.
func shapeRefused() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	f32, i8, i16 := graph.Float32, graph.Int8, graph.Int16
	variant("l2_pool_2d_INT8", func(b *opModel) {
		x := b.tensor(i8, q(0.05, 0), 1, 4, 4, 3)
		o := b.tensor(i8, q(0.05, 0), 1, 2, 2, 3)
		b.op(bL2Pool, "L2_POOL_2D", []graph.TensorID{x}, []graph.TensorID{o}, "Pool2DOptions",
			map[string]int64{"padding": int64(graph.PaddingValid), "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("depth_to_space_INT16", func(b *opModel) {
		x := b.tensor(i16, q(0.001, 0), 1, 2, 2, 8)
		o := b.tensor(i16, q(0.001, 0), 1, 4, 4, 2)
		b.op(bDepthToSpace, "DEPTH_TO_SPACE", []graph.TensorID{x}, []graph.TensorID{o}, "DepthToSpaceOptions", map[string]int64{"block_size": 2})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("resize_bilinear_size_input", func(b *opModel) {
		x := b.tensor(f32, nil, 1, 2, 2, 3)
		s := b.tensor(graph.Int32, nil, 2)
		o := b.tensor(f32, nil, 1, 4, 4, 3)
		b.op(bResizeBilinear, "RESIZE_BILINEAR", []graph.TensorID{x, s}, []graph.TensorID{o}, "", nil)
		b.io([]graph.TensorID{x, s}, []graph.TensorID{o})
	})
	variant("gather_nd_INT16", func(b *opModel) {
		p := b.tensor(i16, q(0.001, 0), 3, 4)
		o := b.tensor(i16, q(0.001, 0), 2, 4)
		b.op(bGatherND, "GATHER_ND", []graph.TensorID{p, b.ints(graph.Int32, []int32{2, 1}, 2, 0)}, []graph.TensorID{o}, "", nil)
		b.io([]graph.TensorID{p}, []graph.TensorID{o})
	})
	variant("signal_delay_FLOAT32", func(b *opModel) {
		x := b.tensor(f32, nil, 3, 40)
		o := b.tensor(f32, nil, 3, 40)
		b.custom("SignalDelay", []graph.TensorID{x}, []graph.TensorID{o}, flexbuf.Entry{Key: "delay_length", Value: 7})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	return out
}

// shapeCompile compiles the model in data for runner r and writes the
// emitted model beside; it returns the file and the figure (planner
// outside the arena, as the runners build it).
func shapeCompile(dir string, r cmsisRunner, data []byte, name string) (string, tflmarena.Arena, error) {
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
	a, err := tflmarena.ComputeSetup(em, out.TFLMArena.Emitted.Head, r.target, tflmarena.Kernels{Library: cfg.Kernels}, tflmarena.PlannerOutside)
	if err != nil {
		return "", tflmarena.Arena{}, err
	}
	file := filepath.Join(dir, r.name+"_"+name+".tflite")
	return file, a, os.WriteFile(file, out.TFLite.Data, 0o644)
}

// shapeM55Sample are the variants TestTFLMArenaShapeOps runs on
// tflm_run_m55 in make test; HELIAC_OP_SWEEP=1 runs every one.
var shapeM55Sample = map[string]bool{"embedding_lookup_INT8_FLOAT32": true, "signal_framer": true}

// TestTFLMArenaShapeOps proves the shape, spatial, gather and signal
// kernels' arena data (kernels/tflmtail_shape.go) one operator at a
// time: each variant's model, emitted by heliac (--emit-tflite --kernels
// tflm-reference), runs on tflm_run with heliac's host64 figure N and
// fails at N-16, TFLM's head and tail are heliac's, and its outputs are
// the original model's. On tflm_run_m55 (QEMU, seconds a run) it checks
// shapeM55Sample, or every variant with HELIAC_OP_SWEEP=1. The refused
// variants (shapeRefused) get no figure, with the reason, and TFLM
// refuses them too.
func TestTFLMArenaShapeOps(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM; skipped with -short")
	}
	tflmrun.Require(t)
	sweep := os.Getenv(envOpSweep) != ""
	runners := opRunners
	dir := t.TempDir()
	for _, r := range runners {
		tool := runnerTool(r.name, r.qemu)
		if tool == "" {
			t.Logf("%s (or qemu-system-arm) not found: not checked", r.name)
			continue
		}
		for _, v := range shapeVariants() {
			if r.qemu && !sweep && !shapeM55Sample[v.name] {
				continue
			}
			t.Run(r.name+"/"+v.name, func(t *testing.T) {
				data, err := tflite.Encode(opVariantsModel(v), tflite.EncodeOptions{})
				require.NoError(t, err)
				orig := filepath.Join(dir, r.name+"_orig_"+v.name+".tflite")
				require.NoError(t, os.WriteFile(orig, data, 0o644))
				file, a, err := shapeCompile(dir, r, data, v.name)
				require.NoError(t, err)
				c := arenaCheck{model: v.name, what: "emitted", file: file, tool: tool, qemu: r.qemu, a: a}
				msg, o := c.run()
				if msg == fmt.Sprintf("arena %d-16 runs too", a.Bytes) && r.target.PointerSize == 8 {
					// As in TestTFLMArenaKernelVariants: the kernel's
					// persistent buffer (the output's dims, OpData) lands
					// on the last 16 bytes of its live temporaries (an
					// output's zero-point array), which TFLM does not
					// read again; tflmarena keeps it above them.
					t.Logf("%s on %s: arena %d-16 runs too (a persistent buffer over the kernel's temporaries, harmless here)", v.name, r.name, a.Bytes)
					msg = ""
				}
				if msg != "" {
					t.Errorf("%s on %s: %s", v.name, r.name, msg)
					return
				}
				ref, refOut := runOracle(context.Background(), tool, orig, 2*a.Bytes+64<<10, time.Minute)
				require.Equal(t, ran, ref, "the original model does not run: %s", refOut["error"])
				for k, val := range refOut {
					if strings.HasPrefix(k, "output.0.") && o[k] != val {
						t.Errorf("%s: %s differs between the original and the emitted model", r.name, k)
					}
				}
				t.Logf("%s on %s: exact at %d bytes (head %d, tail %d)", v.name, r.name, a.Bytes, a.Head, a.Tail)
			})
		}
		if r.qemu {
			continue
		}
		for _, v := range shapeRefused() {
			t.Run(r.name+"/refused/"+v.name, func(t *testing.T) {
				data, err := tflite.Encode(opVariantsModel(v), tflite.EncodeOptions{})
				require.NoError(t, err)
				_, _, err = shapeCompile(dir, r, data, v.name)
				require.Error(t, err)
				require.Contains(t, err.Error(), "TFLM cannot run it")
				orig := filepath.Join(dir, "refused_"+v.name+".tflite")
				require.NoError(t, os.WriteFile(orig, data, 0o644))
				_, o := runOracle(context.Background(), tool, orig, 1<<20, time.Minute)
				require.Equal(t, "error", o["status"], "TFLM runs it: %v", o)
				require.Contains(t, o["error"], "failed to prepare")
				t.Logf("%s: heliac: %v; TFLM: %s", v.name, err, o["error"])
			})
		}
	}
}
