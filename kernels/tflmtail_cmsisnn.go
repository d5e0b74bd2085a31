package kernels

import "github.com/heliac/heliac/graph"

// What TFLM's CMSIS-NN kernels take from the arena while a model is
// allocated (the counterpart of TFLM for the reference kernels): read in
// tensorflow/lite/micro/kernels/cmsis_nn at tflite-micro 90b983c, with
// CMSIS-NN at the commit CMSISNN names, as TFLM builds them by default
// (KERNELS_OPTIMIZED_FOR_SPEED). The OpData sizes were compiled: each
// cmsis_nn/*.cc with CMSIS-NN's Include directory, -DCMSIS_NN
// -DKERNELS_OPTIMIZED_FOR_SPEED -DTF_LITE_STATIC_MEMORY, against
// ../shared/tflm/include, printing sizeof of its Init struct with g++
// (host64) and arm-none-eabi-g++ -mcpu=cortex-m55 -mfloat-abi=hard
// (cortex-m; no member depends on the CPU's extensions, and the
// Cortex-M4's sizes are the M55's). TestCMSISNNOpDataMatchesLayouts
// compiles the structs' layouts; the whole figure is checked on TFLM's
// CMSIS-NN builds, one per code path (../shared/tools tflm_run_cmsis:
// portable C on x86-64; tflm_run_m4_cmsis: DSP; tflm_run_m55_cmsis: MVE),
// by the driver's TestTFLMArenaExactCMSISNN (every corpus model TFLM runs)
// and TestTFLMArenaKernelVariants (kernel variants no corpus model has).

// cmsisOpData are the bytes each CMSIS-NN kernel's Init asks
// AllocatePersistentBuffer for, {host64, cortex-m}: sizeof the struct
// named, compiled as above.
var cmsisOpData = map[string]pair{
	"ADD":                          {60, 60},    // cmsis_nn/add.cc InitAdd: OpData
	"AVERAGE_POOL_2D":              {36, 36},    // cmsis_nn/pooling.cc Init: OpData
	"MAX_POOL_2D":                  {36, 36},    // cmsis_nn/pooling.cc Init: OpData
	"BATCH_MATMUL":                 {56, 36},    // cmsis_nn/batch_matmul.cc Init: OpData
	"CONV_2D":                      {80, 60},    // cmsis_nn/conv.cc Init: OpData
	"DEPTHWISE_CONV_2D":            {80, 60},    // cmsis_nn/depthwise_conv.cc Init: OpData
	"FULLY_CONNECTED":              {96, 72},    // cmsis_nn/fully_connected.cc Init: OpData
	"SOFTMAX":                      {88, 64},    // cmsis_nn/softmax.cc Init: CMSISNNSoftmaxParams
	"SVDF":                         {48, 40},    // cmsis_nn/svdf.cc Init: CmsisNnOpDataSvdf
	"TRANSPOSE_CONV":               {88, 76},    // cmsis_nn/transpose_conv.cc Init: OpData
	"UNIDIRECTIONAL_SEQUENCE_LSTM": {1008, 912}, // cmsis_nn/unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmInit: OpData
}

// TFLMArena returns what operator op of subgraph s of m takes from TFLM's
// arena under library l's kernels on t (t.PointerSize 8: host64, 4: a
// Cortex-M; t.ISA where the CMSIS-NN kernels' data depends on the CPU),
// and whether the data knows the operator. A nil library is TFLM's
// reference kernels (TFLM).
func (l *Library) TFLMArena(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, t Target) (TFLMKernel, bool) {
	switch {
	case l == nil || l.Name == TFLMReference:
		return TFLM(m, s, op, t.PointerSize)
	case l.Name == CMSISNN && len(l.members) == 0:
		if l.onPath {
			t.ISA = l.isa
		}
		return cmsisTFLM(m, s, op, t)
	}
	return TFLMKernel{}, false
}

// cmsisReplaced says whether TFLM's cmsis_nn directory replaces op's
// kernel.
func cmsisReplaced(op *graph.Op) bool {
	if op.Code == graph.Custom {
		return false
	}
	for _, c := range cmsisNNOps {
		if op.Code == c {
			return true
		}
	}
	return false
}

// cmsisTFLM is TFLMArena for the CMSIS-NN kernels. MUL, PAD, PADV2,
// TRANSPOSE, MAXIMUM and MINIMUM register the reference kernels' Init and
// Prepare (cmsis_nn/mul.cc MulInit, MulPrepare; pad.cc PadInit,
// PadPrepare; transpose.cc TransposePrepare; maximum_minimum.cc none) and
// so take what those take; operators CMSIS-NN does not replace run the
// reference kernels.
func cmsisTFLM(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, t Target) (TFLMKernel, bool) {
	ptr := t.PointerSize
	d, ok := cmsisOpData[op.CodeName]
	if !cmsisReplaced(op) || !ok {
		return TFLM(m, s, op, ptr)
	}
	if m == nil || s < 0 || int(s) >= len(m.Subgraphs) || (ptr != 4 && ptr != 8) {
		return TFLMKernel{}, false
	}
	sg := &m.Subgraphs[s]
	var k TFLMKernel
	// The parser is the same for every kernel library.
	if p, ok := tflmParams[op.CodeName]; ok {
		k.Params = []TFLMAlloc{{p[0].on(ptr), p[1].on(ptr)}}
	}
	k.Init = []TFLMAlloc{{d.on(ptr), tflmArenaAlign}}
	in, out := op.Inputs, op.Outputs
	temp := func(ids []graph.TensorID, i int) {
		if i < len(ids) && ids[i] >= 0 {
			k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: ids[i]})
		}
	}
	persistOf := func(bytes int64, c TFLMContent) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}, Content: c})
	}
	persist := func(bytes int64) { persistOf(bytes, TFLMUnknown) }
	intArray := func(rank int) int64 { return 4 + 4*int64(rank) } // TfLiteIntArrayGetSizeInBytes
	typeOf := func(ids []graph.TensorID, i int) graph.ElementType {
		if t := operand(sg, ids, i); t != nil {
			return t.Type
		}
		return -1
	}
	quantized := func(ty graph.ElementType) bool { return ty == graph.Int8 || ty == graph.Int16 }
	switch op.CodeName {
	case "ADD":
		// add.cc PrepareAdd: input 1, input 2, output (its
		// CalculateOpData takes nothing from the arena).
		temp(in, 0)
		temp(in, 1)
		temp(out, 0)
	case "CONV_2D", "DEPTHWISE_CONV_2D":
		// conv.cc Prepare / depthwise_conv.cc Prepare: input, filter,
		// output (conv asks for the bias among the outputs, index 2, so
		// it is never allocated), for INT8 and INT16 an int32 multiplier
		// and shift per output channel (the filter's dimension 0 for
		// conv, 3 for depthwise), then conv_common.cc CalculateOpDataConv
		// / depthwise_conv_common.cc CalculateOpDataDepthwiseConv: input,
		// filter, bias, output.
		channels := 0
		if op.CodeName == "DEPTHWISE_CONV_2D" {
			channels = 3
		}
		temp(in, 0)
		temp(in, 1)
		temp(out, 0)
		if quantized(typeOf(in, 0)) {
			c := 4 * dim(operand(sg, in, 1), channels)
			persistOf(c, TFLMMultipliers)
			persistOf(c, TFLMShifts)
		}
		temp(in, 0)
		temp(in, 1)
		temp(in, 2)
		temp(out, 0)
	case "FULLY_CONNECTED":
		// fully_connected.cc Prepare: input, filter, bias, output; then
		// fully_connected_common.cc CalculateOpDataFullyConnected: with a
		// per-channel quantized filter (more than one scale) an int32
		// multiplier and shift per scale; then, for INT8 input and
		// filter not run as a 1x1 convolution (an output of rank 3 or 4
		// with an accumulation depth a multiple of 4), the kernel sums
		// (arm_fully_connected_s8_get_buffer_size: an int32 per output
		// channel on MVE, none otherwise) go to a persistent buffer when
		// the filter and bias are constant (KERNELS_OPTIMIZED_FOR_SPEED).
		temp(in, 0)
		temp(in, 1)
		temp(in, 2)
		temp(out, 0)
		inT, fT, oT := operand(sg, in, 0), operand(sg, in, 1), operand(sg, out, 0)
		if inT == nil || fT == nil || oT == nil || len(fT.Shape) == 0 || len(oT.Shape) == 0 {
			return k, false
		}
		k.Prepare = append(k.Prepare, fcPerChannel(sg, op)...)
		accum, depth := dim(fT, len(fT.Shape)-1), dim(oT, len(oT.Shape)-1)
		conv1x1 := len(oT.Shape) > 2 && accum%4 == 0
		bias := operand(sg, in, 2)
		if inT.Type == graph.Int8 && fT.Type == graph.Int8 && !conv1x1 && t.ISA == MVE && depth > 0 &&
			m.HasData(fT) && (bias == nil || m.HasData(bias)) {
			persistOf(4*depth, TFLMKernelSums)
		}
	case "AVERAGE_POOL_2D":
		// pooling.cc AveragePrepare: pooling_common.cc PoolingPrepare
		// (input, output), then input and output again.
		temp(in, 0)
		temp(out, 0)
		temp(in, 0)
		temp(out, 0)
	case "MAX_POOL_2D":
		// pooling.cc MaxPrepare: PoolingPrepare.
		temp(in, 0)
		temp(out, 0)
	case "SOFTMAX":
		// softmax.cc Prepare: input, output, then softmax_common.cc
		// CalculateSoftmaxParams: InitializeLutForInt16, for INT16 input,
		// the exp and 1/(1+x) tables.
		temp(in, 0)
		temp(out, 0)
		for _, n := range softmaxLUTs(sg, op) {
			persist(n)
		}
	case "SVDF":
		// svdf.cc CmsisNnPrepareSvdf: input, feature weights, time
		// weights, bias, activation state, output; for INT8 the kernel
		// sums (arm_svdf_s8_get_buffer_size,
		// Source/SVDFunctions/arm_svdf_get_buffer_sizes_s8.c: an int32
		// per filter on MVE, none otherwise) in a persistent buffer.
		for i := range 5 {
			temp(in, i)
		}
		temp(out, 0)
		if typeOf(in, 0) == graph.Int8 && t.ISA == MVE {
			if n := dim(operand(sg, in, 1), 0); n > 0 {
				persistOf(4*n, TFLMKernelSums)
			}
		}
	case "TRANSPOSE_CONV":
		// transpose_conv.cc Prepare (inputs: 0 output shape, 1 filter, 2
		// input, 3 bias): output, input, filter, the per-channel arrays
		// (filter dimension 0) whatever the type, then CalculateOpData,
		// for all but FLOAT32: input, filter, bias, output.
		temp(out, 0)
		temp(in, 2)
		temp(in, 1)
		// The arrays are filled only for other types than FLOAT32.
		c, filled := 4*dim(operand(sg, in, 1), 0), typeOf(in, 2) != graph.Float32
		for _, what := range []TFLMContent{TFLMMultipliers, TFLMShifts} {
			if !filled {
				what = TFLMUnknown
			}
			persistOf(c, what)
		}
		if filled {
			temp(in, 2)
			temp(in, 1)
			temp(in, 3)
			temp(out, 0)
		}
	case "BATCH_MATMUL":
		// batch_matmul.cc Prepare: lhs, rhs, output; the transposed
		// operands (batchMatmulTransposes: the LHS with adj_x, the RHS
		// without adj_y); the output's dims (batch_matmul_common.cc
		// ReshapeOutputTensor: CreateWritableTensorDimsWithCopy); then,
		// when neither input is FLOAT32, the quantization struct.
		temp(in, 0)
		temp(in, 1)
		temp(out, 0)
		lhs, rhs, o := operand(sg, in, 0), operand(sg, in, 1), operand(sg, out, 0)
		if lhs == nil || rhs == nil || o == nil || (lhs.Type != graph.Float32 && !quantized(lhs.Type)) {
			return k, false
		}
		tr, ok := batchMatmulTransposes(sg, op, ptr)
		if !ok {
			return k, false
		}
		for _, n := range tr {
			persist(n)
		}
		persist(intArray(len(o.Shape)))
		if lhs.Type != graph.Float32 && rhs.Type != graph.Float32 {
			persist(batchMatmulQuant)
		}
	case "UNIDIRECTIONAL_SEQUENCE_LSTM":
		// unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmPrepare:
		// LstmTensors (every input, the output); with an INT16 cell state
		// (input 19) and INT8 or INT16 activations, CMSIS_NN_PortOpData's
		// eight kernel sums of state_dimension (the output state's, input
		// 18, last dimension) int32s (INT8) or int64s (INT16).
		for i := range in {
			temp(in, i)
		}
		temp(out, 0)
		// The int32 sums (INT8) are computed from constants alone; heliac
		// computes them too (kernels/prepared), not yet the int64 ones.
		if typeOf(in, 19) == graph.Int16 {
			size, what := int64(0), TFLMUnknown
			switch typeOf(in, 0) {
			case graph.Int8:
				size, what = 4, TFLMKernelSums
			case graph.Int16:
				size = 8
			}
			if h := operand(sg, in, 18); size > 0 && h != nil && len(h.Shape) > 0 {
				for range 8 {
					persistOf(size*dim(h, len(h.Shape)-1), what)
				}
			}
		}
	default:
		return k, false
	}
	return k, true
}
