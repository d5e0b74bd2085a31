package driver_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/heliac/heliac/graph"
)

// coreOpVariants are one-operator models of the builtin operators the
// arena tests' families leave out (the corpus runs them, so their arena
// data is proven there), and FLOAT32 and INT8 models of the operators
// those families have only in other types: each type TFLM's reference
// kernel takes where the kernel, or CMSIS-NN's, runs another path. The
// quantization is what each kernel's Prepare accepts
// (tensorflow/lite/micro/kernels @90b983c, cited per variant). Control
// flow and resource variables need a few operators and subgraphs: WHILE,
// IF and CALL_ONCE call subgraphs of one or two operators, and the
// resource variables are VAR_HANDLE, ASSIGN_VARIABLE and READ_VARIABLE
// together.
func coreOpVariants() []opVariant {
	var out []opVariant
	variant := func(name string, add func(b *opModel)) { out = append(out, opVariant{name, add}) }
	f32, i8, i16, i32, i64, bl := graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Bool
	qa := func(ty graph.ElementType) *graph.Quantization {
		switch ty {
		case i8:
			return q(0.05, 3)
		case i16:
			return q(0.001, 0)
		}
		return nil
	}
	// unary is an operator of input x (shape in, type ty, quantization
	// qi), constants from consts, and one output (type oty, quantization
	// qo).
	unary := func(vname, name string, ty, oty graph.ElementType, qi, qo *graph.Quantization, in, outShape []int32,
		opts *graph.Options, consts ...func(b *opModel) graph.TensorID) {
		variant(vname, func(b *opModel) {
			x := b.tensor(ty, qi, in...)
			ins := []graph.TensorID{x}
			for _, c := range consts {
				ins = append(ins, c(b))
			}
			o := b.tensor(oty, qo, outShape...)
			b.op(builtin(name), name, ins, []graph.TensorID{o}, "", nil).Options = opts
			b.io([]graph.TensorID{x}, []graph.TensorID{o})
		})
	}
	same := func(name string, ty graph.ElementType, opts *graph.Options, consts ...func(b *opModel) graph.TensorID) {
		unary(fmt.Sprintf("%s_%s", name, ty), name, ty, ty, qa(ty), qa(ty), []int32{2, 3, 5}, []int32{2, 3, 5}, opts, consts...)
	}
	ints := func(ty graph.ElementType, shape []int32, vals ...int64) func(b *opModel) graph.TensorID {
		return func(b *opModel) graph.TensorID { return b.ints(ty, shape, vals...) }
	}

	// Activations: elementwise.cc (ABS: FLOAT32, INT8, INT16), neg.cc
	// (FLOAT32 only), activations.cc (RELU, RELU6), hard_swish.cc,
	// leaky_relu.cc.
	for _, ty := range []graph.ElementType{f32, i8, i16} {
		same("ABS", ty, nil)
		same("LEAKY_RELU", ty, floatOptions("LeakyReluOptions", "alpha", 0.2))
	}
	same("NEG", f32, nil)
	for _, ty := range []graph.ElementType{f32, i8} {
		same("RELU", ty, nil)
		same("RELU6", ty, nil)
		same("HARD_SWISH", ty, nil) // hard_swish_common.cc 68: scale_in/128 <= scale_out
	}
	// logistic_common.cc 45-48, tanh.cc 63-100: INT8 output scales 1/256
	// (zero point -128) and 1/128; INT16 zero points 0, a power-of-two
	// input scale of 2^-12 and the output's 2^-15.
	for _, name := range []string{"LOGISTIC", "TANH"} {
		same(name, f32, nil)
		qo := q(1.0/128, 0)
		if name == "LOGISTIC" {
			qo = q(1.0/256, -128)
		}
		unary(name+"_INT8", name, i8, i8, q(0.05, 3), qo, []int32{2, 3, 5}, []int32{2, 3, 5}, nil)
		unary(name+"_INT16", name, i16, i16, q(1.0/4096, 0), q(1.0/32768, 0), []int32{2, 3, 5}, []int32{2, 3, 5}, nil)
	}

	// Conversions: dequantize_common.cc 43-46, quantize_common.cc 57-75,
	// cast.cc 57-105.
	for _, ty := range []graph.ElementType{i8, i16} {
		unary("DEQUANTIZE_"+ty.String(), "DEQUANTIZE", ty, f32, qa(ty), nil, []int32{2, 7}, []int32{2, 7}, nil)
		unary("QUANTIZE_FLOAT32_"+ty.String(), "QUANTIZE", f32, ty, nil, qa(ty), []int32{2, 7}, []int32{2, 7}, nil)
	}
	unary("QUANTIZE_INT8_INT8", "QUANTIZE", i8, i8, q(0.05, 3), q(0.1, -5), []int32{2, 7}, []int32{2, 7}, nil)
	unary("QUANTIZE_INT16_INT8", "QUANTIZE", i16, i8, q(0.001, 0), q(0.05, 0), []int32{2, 7}, []int32{2, 7}, nil)
	for _, c := range [][2]graph.ElementType{{f32, i32}, {i8, f32}, {i32, i16}, {bl, i32}} {
		unary(fmt.Sprintf("CAST_%s_%s", c[0], c[1]), "CAST", c[0], c[1], nil, nil, []int32{2, 7}, []int32{2, 7}, nil)
	}

	// Binary arithmetic: sub.cc (FLOAT32, INT8, INT16 with zero points 0),
	// add.cc and mul.cc (INT16 is the kernel family's), div.cc (FLOAT32,
	// INT32, INT8; the divisor a constant without zeros),
	// maximum_minimum.cc.
	binary := func(name string, ty graph.ElementType, broadcast, constY bool) {
		suffix := ""
		if broadcast {
			suffix = "_broadcast"
		}
		variant(fmt.Sprintf("%s_%s%s", name, ty, suffix), func(b *opModel) {
			var ins []graph.TensorID
			var x graph.TensorID
			if name == "DIV" && ty == i8 {
				// The dividend a constant too: a zero one (an element at
				// its zero point) leaves no headroom, and TFLM aborts
				// (kernels/internal/reference/div.h DivElementwise:
				// gemmlowp's RoundingDivideByPOT asserts exponent <= 31).
				x = b.nonZero(ty, qa(ty), 2, 3, 5)
			} else {
				x = b.tensor(ty, qa(ty), 2, 3, 5)
				ins = append(ins, x)
			}
			yShape := []int32{2, 3, 5}
			if broadcast {
				yShape = []int32{3, 1}
			}
			var y graph.TensorID
			if constY {
				y = b.nonZero(ty, qa(ty), yShape...)
			} else {
				y = b.tensor(ty, qa(ty), yShape...)
				ins = append(ins, y)
			}
			qo := qa(ty)
			if ty == i8 {
				qo = q(0.1, -1)
			}
			o := b.tensor(ty, qo, 2, 3, 5)
			b.op(builtin(name), name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
			b.io(ins, []graph.TensorID{o})
		})
	}
	for _, ty := range []graph.ElementType{f32, i8} {
		binary("ADD", ty, ty == i8, false)
		binary("MUL", ty, ty == f32, false)
		binary("SUB", ty, ty == i8, false)
		binary("DIV", ty, ty == f32, true)
	}
	binary("SUB", i16, false, false)
	binary("DIV", i32, false, true)
	for _, name := range []string{"MAXIMUM", "MINIMUM"} {
		for _, ty := range []graph.ElementType{f32, i8, i16, i32} {
			variant(fmt.Sprintf("%s_%s", name, ty), func(b *opModel) {
				// maximum_minimum.cc: one quantization for all three.
				x := b.tensor(ty, qa(ty), 2, 3, 5)
				y := b.tensor(ty, qa(ty), 1, 5)
				o := b.tensor(ty, qa(ty), 2, 3, 5)
				b.op(builtin(name), name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
				b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
			})
		}
	}

	// Comparisons: comparisons.cc, BOOL, FLOAT32, INT32, INT64 and INT8
	// (rescaled to a common scale in Prepare).
	cmp := []struct {
		name string
		ty   graph.ElementType
	}{{"EQUAL", i32}, {"EQUAL", bl}, {"NOT_EQUAL", i8}, {"NOT_EQUAL", i64}, {"GREATER", f32}, {"GREATER", i8},
		{"GREATER_EQUAL", i32}, {"LESS", f32}, {"LESS", i8}, {"LESS_EQUAL", i64}}
	for _, c := range cmp {
		variant(fmt.Sprintf("%s_%s", c.name, c.ty), func(b *opModel) {
			x := b.tensor(c.ty, qa(c.ty), 3, 4)
			qy := qa(c.ty)
			if c.ty == i8 {
				qy = q(0.07, -4)
			}
			y := b.tensor(c.ty, qy, 1, 4)
			o := b.tensor(bl, nil, 3, 4)
			b.op(builtin(c.name), c.name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
			b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
		})
	}

	// Reductions: reduce.cc, reduce_common.cc (MEAN: FLOAT32, INT8,
	// INT16; SUM: FLOAT32, INT8, INT16 with temporaries in Prepare).
	for _, name := range []string{"MEAN", "SUM"} {
		for _, ty := range []graph.ElementType{f32, i8, i16} {
			for _, keep := range []bool{false, true} {
				if keep && ty != i8 {
					continue
				}
				oshape := []int32{4}
				if keep {
					oshape = []int32{1, 4, 1}
				}
				qo := qa(ty)
				if ty == i8 {
					qo = q(0.2, -3) // a requantized output
				}
				unary(fmt.Sprintf("%s_%s_keep%d", name, ty, bool01(keep)), name, ty, ty, qa(ty), qo, []int32{2, 4, 6}, oshape,
					intOptions("ReducerOptions", map[string]int64{"keep_dims": bool01(keep)}), ints(i32, []int32{2}, 0, 2))
			}
		}
	}

	// Shapes and copies: reshape.cc, expand_dims.cc, squeeze.cc, shape.cc,
	// concatenation.cc (one quantization for all), pack.cc, unpack.cc,
	// split.cc, split_v.cc, pad.cc, strided_slice.cc, transpose.cc,
	// gather.cc.
	for _, ty := range []graph.ElementType{f32, i8} {
		unary("RESHAPE_shape_input_"+ty.String(), "RESHAPE", ty, ty, qa(ty), qa(ty), []int32{2, 3, 4}, []int32{6, 4}, nil,
			ints(i32, []int32{2}, 6, -1))
		unary("EXPAND_DIMS_"+ty.String(), "EXPAND_DIMS", ty, ty, qa(ty), qa(ty), []int32{3, 4}, []int32{3, 1, 4}, nil, ints(i32, []int32{1}, 1))
		unary("PAD_"+ty.String(), "PAD", ty, ty, qa(ty), qa(ty), []int32{1, 3, 3, 2}, []int32{1, 5, 6, 2}, nil,
			ints(i32, []int32{4, 2}, 0, 0, 1, 1, 2, 1, 0, 0))
		unary("PADV2_"+ty.String(), "PADV2", ty, ty, qa(ty), qa(ty), []int32{1, 3, 3, 2}, []int32{1, 5, 6, 2}, nil,
			ints(i32, []int32{4, 2}, 0, 0, 1, 1, 2, 1, 0, 0), func(b *opModel) graph.TensorID { return b.constant(ty, qa(ty)) })
		unary("STRIDED_SLICE_"+ty.String(), "STRIDED_SLICE", ty, ty, qa(ty), qa(ty), []int32{4, 6}, []int32{3, 3},
			intOptions("StridedSliceOptions", map[string]int64{"end_mask": 1}),
			ints(i32, []int32{2}, 1, 1), ints(i32, []int32{2}, 3, 6), ints(i32, []int32{2}, 1, 2))
		unary("TRANSPOSE_"+ty.String(), "TRANSPOSE", ty, ty, qa(ty), qa(ty), []int32{2, 3, 4}, []int32{4, 2, 3}, nil,
			ints(i32, []int32{3}, 2, 0, 1))
		unary("GATHER_"+ty.String(), "GATHER", ty, ty, qa(ty), qa(ty), []int32{3, 5}, []int32{3, 4},
			intOptions("GatherOptions", map[string]int64{"axis": 1}), ints(i32, []int32{4}, 4, 0, 2, 2))
		variant("CONCATENATION_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, qa(ty), 2, 3)
			y := b.tensor(ty, qa(ty), 2, 5)
			o := b.tensor(ty, qa(ty), 2, 8)
			b.op(builtin("CONCATENATION"), "CONCATENATION", []graph.TensorID{x, y}, []graph.TensorID{o}, "ConcatenationOptions",
				map[string]int64{"axis": 1})
			b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
		})
		variant("PACK_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, qa(ty), 3, 4)
			y := b.tensor(ty, qa(ty), 3, 4)
			o := b.tensor(ty, qa(ty), 3, 2, 4)
			b.op(builtin("PACK"), "PACK", []graph.TensorID{x, y}, []graph.TensorID{o}, "PackOptions",
				map[string]int64{"values_count": 2, "axis": 1})
			b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
		})
		variant("UNPACK_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, qa(ty), 3, 2, 4)
			o1 := b.tensor(ty, qa(ty), 3, 4)
			o2 := b.tensor(ty, qa(ty), 3, 4)
			b.op(builtin("UNPACK"), "UNPACK", []graph.TensorID{x}, []graph.TensorID{o1, o2}, "UnpackOptions",
				map[string]int64{"num": 2, "axis": 1})
			b.io([]graph.TensorID{x}, []graph.TensorID{o1, o2})
		})
		variant("SPLIT_"+ty.String(), func(b *opModel) {
			axis := b.ints(i32, nil, 1)
			x := b.tensor(ty, qa(ty), 2, 6)
			o1 := b.tensor(ty, qa(ty), 2, 3)
			o2 := b.tensor(ty, qa(ty), 2, 3)
			b.op(builtin("SPLIT"), "SPLIT", []graph.TensorID{axis, x}, []graph.TensorID{o1, o2}, "SplitOptions",
				map[string]int64{"num_splits": 2})
			b.io([]graph.TensorID{x}, []graph.TensorID{o1, o2})
		})
		variant("SPLIT_V_"+ty.String(), func(b *opModel) {
			x := b.tensor(ty, qa(ty), 2, 6)
			sizes := b.ints(i32, []int32{3}, 1, -1, 2)
			axis := b.ints(i32, nil, 1)
			var outs []graph.TensorID
			for _, n := range []int32{1, 3, 2} {
				outs = append(outs, b.tensor(ty, qa(ty), 2, n))
			}
			b.op(builtin("SPLIT_V"), "SPLIT_V", []graph.TensorID{x, sizes, axis}, outs, "SplitVOptions",
				map[string]int64{"num_splits": 3})
			b.io([]graph.TensorID{x}, outs)
		})
	}
	variant("RESHAPE_options_FLOAT32", func(b *opModel) {
		x := b.tensor(f32, nil, 2, 3, 4)
		o := b.tensor(f32, nil, 4, 6)
		b.op(builtin("RESHAPE"), "RESHAPE", []graph.TensorID{x}, []graph.TensorID{o}, "", nil).Options = &graph.Options{Table: "ReshapeOptions",
			Fields: []graph.OptionField{{Name: "new_shape", Type: "[int]", Kind: graph.OptionInts, Present: true, Ints: []int64{4, 6}}}}
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("SQUEEZE_FLOAT32", func(b *opModel) {
		x := b.tensor(f32, nil, 1, 3, 1, 4)
		o := b.tensor(f32, nil, 3, 4)
		b.op(builtin("SQUEEZE"), "SQUEEZE", []graph.TensorID{x}, []graph.TensorID{o}, "", nil).Options = &graph.Options{Table: "SqueezeOptions",
			Fields: []graph.OptionField{{Name: "squeeze_dims", Type: "[int]", Kind: graph.OptionInts, Present: true, Ints: []int64{0, 2}}}}
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	// shape.cc ShapeEval: an INT32 output only.
	unary("SHAPE_FLOAT32", "SHAPE", f32, i32, nil, nil, []int32{2, 3, 4}, []int32{3}, intOptions("ShapeOptions", map[string]int64{"out_type": int64(i32)}))

	// The window and matrix kernels on the types the kernel variants
	// leave out: conv.cc, depthwise_conv.cc, fully_connected.cc,
	// pooling.cc, softmax.cc (INT8 output scale 1/256, zero point -128:
	// softmax_common.cc 89-105).
	for _, ty := range []graph.ElementType{f32, i8} {
		for _, code := range []graph.Opcode{bConv, bDepthwise} {
			name := map[graph.Opcode]string{bConv: "CONV_2D", bDepthwise: "DEPTHWISE_CONV_2D"}[code]
			variant(name+"_"+ty.String(), func(b *opModel) {
				x := b.tensor(ty, qa(ty), 1, 6, 6, 3)
				var f, bi graph.TensorID
				qf, qo := qc(6, 0), q(0.2, -2)
				if code == bDepthwise {
					qf = qc(6, 3)
				}
				if ty == f32 {
					qf, qo = nil, nil
				}
				if code == bDepthwise {
					f = b.constant(ty, qf, 1, 3, 3, 6)
				} else {
					f = b.constant(ty, qf, 6, 3, 3, 3)
				}
				bt := i32
				if ty == f32 {
					bt = f32
				}
				bi = b.constant(bt, nil, 6)
				o := b.tensor(ty, qo, 1, 3, 3, 6)
				op := b.op(code, name, []graph.TensorID{x, f, bi}, []graph.TensorID{o}, "", nil)
				op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1}
				if code == bDepthwise {
					op.Window.DepthMultiplier = 2
				}
				b.io([]graph.TensorID{x}, []graph.TensorID{o})
			})
		}
		for _, code := range []graph.Opcode{bAvgPool, bMaxPool} {
			name := map[graph.Opcode]string{bAvgPool: "AVERAGE_POOL_2D", bMaxPool: "MAX_POOL_2D"}[code]
			variant(name+"_"+ty.String(), func(b *opModel) {
				x := b.tensor(ty, qa(ty), 1, 6, 6, 5)
				o := b.tensor(ty, qa(ty), 1, 3, 3, 5)
				op := b.op(code, name, []graph.TensorID{x}, []graph.TensorID{o}, "", nil)
				op.Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1, FilterW: 3, FilterH: 3}
				b.io([]graph.TensorID{x}, []graph.TensorID{o})
			})
		}
		qo := q(1.0/256, -128)
		if ty == f32 {
			qo = nil
		}
		unary("SOFTMAX_"+ty.String(), "SOFTMAX", ty, ty, qa(ty), qo, []int32{2, 10}, []int32{2, 10}, floatOptions("SoftmaxOptions", "beta", 1))
	}
	variant("FULLY_CONNECTED_FLOAT32", func(b *opModel) {
		x := b.tensor(f32, nil, 4, 8)
		f := b.constant(f32, nil, 6, 8)
		bi := b.constant(f32, nil, 6)
		o := b.tensor(f32, nil, 4, 6)
		b.op(bFullyConn, "FULLY_CONNECTED", []graph.TensorID{x, f, bi}, []graph.TensorID{o}, "FullyConnectedOptions",
			map[string]int64{"fused_activation_function": 1})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("UNIDIRECTIONAL_SEQUENCE_LSTM_FLOAT32", func(b *opModel) {
		// lstm_eval.cc 52-101: FLOAT32 throughout, every gate, no
		// peephole, projection or layer norm; the states are variables.
		const batch, steps, in, cell = 2, 3, 5, 4
		x := b.tensor(f32, nil, batch, steps, in)
		ins := make([]graph.TensorID, 24)
		for i := range ins {
			ins[i] = graph.NoTensor
		}
		ins[0] = x
		for i := 1; i <= 4; i++ {
			ins[i] = b.constant(f32, nil, cell, in)
		}
		for i := 5; i <= 8; i++ {
			ins[i] = b.constant(f32, nil, cell, cell)
		}
		for i := 12; i <= 15; i++ {
			ins[i] = b.constant(f32, nil, cell)
		}
		ins[18] = b.tensor(f32, nil, batch, cell)
		ins[19] = b.tensor(f32, nil, batch, cell)
		b.sg().Tensors[ins[18]].IsVariable = true
		b.sg().Tensors[ins[19]].IsVariable = true
		o := b.tensor(f32, nil, batch, steps, cell)
		b.op(builtin("UNIDIRECTIONAL_SEQUENCE_LSTM"), "UNIDIRECTIONAL_SEQUENCE_LSTM", ins, []graph.TensorID{o},
			"UnidirectionalSequenceLSTMOptions", map[string]int64{"fused_activation_function": 4})
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})

	// Control flow: while.cc, if.cc (a BOOL condition of one element,
	// the branches' inputs and outputs the operator's).
	variant("WHILE_FLOAT32", func(b *opModel) {
		// while (i < 4) { i += 1; x = x * x + x }, from a constant i = 0.
		args := func() (graph.TensorID, graph.TensorID) {
			i := b.tensor(i32, nil)
			x := b.tensor(f32, nil, 2, 3)
			return i, x
		}
		cond := b.subgraph("cond", func() {
			i, x := args()
			c := b.tensor(bl, nil)
			b.op(builtin("LESS"), "LESS", []graph.TensorID{i, b.ints(i32, nil, 4)}, []graph.TensorID{c}, "", nil)
			b.io([]graph.TensorID{i, x}, []graph.TensorID{c})
		})
		body := b.subgraph("body", func() {
			i, x := args()
			i2 := b.tensor(i32, nil)
			sq := b.tensor(f32, nil, 2, 3)
			x2 := b.tensor(f32, nil, 2, 3)
			b.op(builtin("ADD"), "ADD", []graph.TensorID{i, b.ints(i32, nil, 1)}, []graph.TensorID{i2}, "", nil)
			b.op(builtin("MUL"), "MUL", []graph.TensorID{x, x}, []graph.TensorID{sq}, "", nil)
			b.op(builtin("ADD"), "ADD", []graph.TensorID{sq, x}, []graph.TensorID{x2}, "", nil)
			b.io([]graph.TensorID{i, x}, []graph.TensorID{i2, x2})
		})
		i0 := b.ints(i32, nil, 0)
		x := b.tensor(f32, nil, 2, 3)
		oi, ox := b.tensor(i32, nil), b.tensor(f32, nil, 2, 3)
		b.op(builtin("WHILE"), "WHILE", []graph.TensorID{i0, x}, []graph.TensorID{oi, ox}, "", nil).Called = []graph.SubgraphIndex{cond, body}
		b.io([]graph.TensorID{x}, []graph.TensorID{oi, ox})
	})
	variant("IF_INT8", func(b *opModel) {
		branch := func(name string) graph.SubgraphIndex {
			return b.subgraph(name, func() {
				x := b.tensor(i8, qa(i8), 2, 3)
				y := b.tensor(i8, qa(i8), 2, 3)
				o := b.tensor(i8, q(0.1, -1), 2, 3)
				b.op(builtin(name), name, []graph.TensorID{x, y}, []graph.TensorID{o}, "", nil)
				b.io([]graph.TensorID{x, y}, []graph.TensorID{o})
			})
		}
		then, els := branch("ADD"), branch("SUB")
		c := b.tensor(bl, nil, 1)
		x := b.tensor(i8, qa(i8), 2, 3)
		y := b.tensor(i8, qa(i8), 2, 3)
		o := b.tensor(i8, q(0.1, -1), 2, 3)
		b.op(builtin("IF"), "IF", []graph.TensorID{c, x, y}, []graph.TensorID{o}, "", nil).Called = []graph.SubgraphIndex{then, els}
		b.io([]graph.TensorID{c, x, y}, []graph.TensorID{o})
	})

	// Resource variables: var_handle.cc, assign_variable.cc (its Prepare
	// allocates the variable), read_variable.cc, call_once.cc (no inputs
	// or outputs; runs its subgraph on the first invocation only).
	handle := func(b *opModel, name string) graph.TensorID {
		h := b.tensor(graph.Resource, nil)
		b.op(graph.VarHandle, "VAR_HANDLE", nil, []graph.TensorID{h}, "", nil).Resource = &graph.ResourceName{SharedName: name}
		return h
	}
	variant("VARIABLE_accumulate_FLOAT32", func(b *opModel) {
		// v = v + x, output v: the state carries over invocations.
		h := handle(b, "acc")
		x := b.tensor(f32, nil, 2, 3)
		v := b.tensor(f32, nil, 2, 3)
		o := b.tensor(f32, nil, 2, 3)
		b.op(graph.ReadVariable, "READ_VARIABLE", []graph.TensorID{h}, []graph.TensorID{v}, "", nil)
		b.op(builtin("ADD"), "ADD", []graph.TensorID{v, x}, []graph.TensorID{o}, "", nil)
		b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{h, o}, nil, "", nil)
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("VARIABLE_two_containers_FLOAT32", func(b *opModel) {
		// Two variables of one shared_name in two containers
		// (micro_resource_variable.cc FindId tells them apart): a takes
		// the input, b keeps the sum of a's values so far.
		name := func(c string) *graph.ResourceName {
			return &graph.ResourceName{Container: c, SharedName: "v", HasContainer: true}
		}
		ha, hb := b.tensor(graph.Resource, nil), b.tensor(graph.Resource, nil)
		b.op(graph.VarHandle, "VAR_HANDLE", nil, []graph.TensorID{ha}, "", nil).Resource = name("a")
		b.op(graph.VarHandle, "VAR_HANDLE", nil, []graph.TensorID{hb}, "", nil).Resource = name("b")
		x := b.tensor(f32, nil, 2, 3)
		va, vb := b.tensor(f32, nil, 2, 3), b.tensor(f32, nil, 2, 3)
		o := b.tensor(f32, nil, 2, 3)
		b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{ha, x}, nil, "", nil)
		b.op(graph.ReadVariable, "READ_VARIABLE", []graph.TensorID{ha}, []graph.TensorID{va}, "", nil)
		b.op(graph.ReadVariable, "READ_VARIABLE", []graph.TensorID{hb}, []graph.TensorID{vb}, "", nil)
		b.op(builtin("ADD"), "ADD", []graph.TensorID{va, vb}, []graph.TensorID{o}, "", nil)
		b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{hb, o}, nil, "", nil)
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("VARIABLE_unnamed_INT8", func(b *opModel) {
		// A VAR_HANDLE without options: TFLM's variable has neither a
		// container nor a shared_name (flatbuffer_conversions.cc
		// ParseVarHandle leaves both null); one such handle is all
		// micro_resource_variable.cc FindId can tell apart.
		h := b.tensor(graph.Resource, nil)
		b.op(graph.VarHandle, "VAR_HANDLE", nil, []graph.TensorID{h}, "", nil)
		x := b.tensor(i8, qa(i8), 4)
		v := b.tensor(i8, qa(i8), 4)
		o := b.tensor(i8, qa(i8), 4)
		b.op(graph.ReadVariable, "READ_VARIABLE", []graph.TensorID{h}, []graph.TensorID{v}, "", nil)
		b.op(builtin("MAXIMUM"), "MAXIMUM", []graph.TensorID{v, x}, []graph.TensorID{o}, "", nil)
		b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{h, o}, nil, "", nil)
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	variant("CALL_ONCE_INT8", func(b *opModel) {
		// The first invocation sets v from a constant; each multiplies it
		// by the input.
		init := b.subgraph("init", func() {
			h := handle(b, "v")
			b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{h, b.constant(i8, qa(i8), 3, 4)}, nil, "", nil)
		})
		b.op(graph.CallOnce, "CALL_ONCE", nil, nil, "", nil).Called = []graph.SubgraphIndex{init}
		h := handle(b, "v")
		x := b.tensor(i8, qa(i8), 3, 4)
		v := b.tensor(i8, qa(i8), 3, 4)
		o := b.tensor(i8, q(0.1, -1), 3, 4)
		b.op(graph.ReadVariable, "READ_VARIABLE", []graph.TensorID{h}, []graph.TensorID{v}, "", nil)
		b.op(builtin("MUL"), "MUL", []graph.TensorID{v, x}, []graph.TensorID{o}, "", nil)
		b.op(graph.AssignVariable, "ASSIGN_VARIABLE", []graph.TensorID{h, o}, nil, "", nil)
		b.io([]graph.TensorID{x}, []graph.TensorID{o})
	})
	return out
}

// intOptions is an options table of integer fields.
func intOptions(table string, fields map[string]int64) *graph.Options {
	o := &graph.Options{Table: table}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		o.Fields = append(o.Fields, graph.OptionField{Name: k, Kind: graph.OptionInt, Present: true, Int: fields[k]})
	}
	return o
}

// floatOptions is an options table of one float field.
func floatOptions(table, field string, v float64) *graph.Options {
	return &graph.Options{Table: table, Fields: []graph.OptionField{{Name: field, Kind: graph.OptionFloat, Present: true, Float: v}}}
}

// nonZero adds a constant of type ty with no element that is zero (or
// its zero point): a divisor.
func (b *opModel) nonZero(ty graph.ElementType, qu *graph.Quantization, shape ...int32) graph.TensorID {
	id := b.constant(ty, qu, shape...)
	data := b.m.Buffers[b.sg().Tensors[id].Buffer].Data
	switch ty {
	case graph.Int8:
		for i := range data {
			data[i] = byte(10 + b.r.Intn(100)) // well above zero point 3
		}
	case graph.Int32:
		for i := 0; i < len(data); i += 4 {
			data[i], data[i+1], data[i+2], data[i+3] = byte(1+b.r.Intn(50)), 0, 0, 0
		}
	}
	return id
}
