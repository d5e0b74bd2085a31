package kernels

import "github.com/heliac/heliac/graph"

// What TFLM's reference kernels take from the arena while a model is
// allocated, besides their scratch requests: the builtin parameters the
// op resolver's parser copies into the persistent tail, each kernel's Init
// buffer (its OpData), and the steps of its Prepare (temporary
// TfLiteTensors of its operands and persistent buffers such as
// per-channel multipliers), in the order the kernel makes them. Package
// tflmarena replays them against TFLM's arena allocator.
//
// Every size is data read at tflmCommit and checked against the compilers
// (tflmarena's tests compile static_asserts against ../shared/tflm with
// g++ for host64 and arm-none-eabi-g++ for cortex-m). A size is given for
// both targets: {host64, cortex-m}.

// TFLMAlloc is one buffer taken from the arena: its bytes and the
// alignment asked for.
type TFLMAlloc struct {
	Bytes, Align int64
}

// TFLMStepKind says what one step of a kernel's Prepare takes.
type TFLMStepKind int8

const (
	// TFLMTempTensor is MicroContext::AllocateTempInputTensor or
	// AllocateTempOutputTensor: a temporary TfLiteTensor for Tensor, with
	// its quantization when it has one (tflmarena sizes it).
	TFLMTempTensor TFLMStepKind = iota
	// TFLMPersistent is a persistent buffer of Alloc's size.
	TFLMPersistent
)

// TFLMContent says what a persistent buffer of a kernel's Prepare holds
// when the kernel computes it from the model's constants alone, so that
// an ahead-of-time build can compute it once and keep it with the
// constants (package kernels/prepared computes it).
type TFLMContent int8

const (
	// TFLMUnknown is a buffer heliac does not compute: the kernel fills it
	// from more than constants, later, or not at all.
	TFLMUnknown TFLMContent = iota
	// TFLMMultipliers is an int32 per output channel:
	// PopulateConvolutionQuantizationParams's (kernel_util.cc) or
	// CalculateOpDataFullyConnected's per_channel_output_multiplier,
	// QuantizeMultiplier of input scale × filter scale / output scale.
	TFLMMultipliers
	// TFLMShifts is the shift QuantizeMultiplier gives beside each
	// multiplier: per_channel_output_shift.
	TFLMShifts
	// TFLMKernelSums is an int32 per output channel of CMSIS-NN's fully
	// connected kernel, per filter of its SVDF kernel, or per cell of
	// each of its INT8 LSTM's eight weight matrices: arm_vector_sum_s8
	// of the weights' row, plus the weights' offset per element, times
	// the input offset, plus the bias.
	TFLMKernelSums
)

// TFLMStep is one allocation of a kernel's Prepare.
type TFLMStep struct {
	Kind    TFLMStepKind
	Tensor  graph.TensorID // TFLMTempTensor
	Alloc   TFLMAlloc      // TFLMPersistent
	Content TFLMContent    // TFLMPersistent: what the kernel fills it with
}

// TFLMKernel is what one operator's kernel takes from TFLM's arena.
type TFLMKernel struct {
	// Params is the builtin data the parser allocates (none for custom
	// operators and for builtins whose parser keeps none).
	Params []TFLMAlloc
	// Init is what the kernel's Init allocates.
	Init []TFLMAlloc
	// Prepare is the kernel's Prepare, in order.
	Prepare []TFLMStep
	// AssignResource is set for ASSIGN_VARIABLE: its Prepare allocates the
	// resource variable's buffer (Prepare's input 1 bytes) the first time
	// the variable is assigned; tflmarena knows which variable.
	AssignResource bool
	// Refused, when not empty, says why TFLM's kernel refuses the
	// operator (its Init or Prepare fails: no arena runs the model);
	// TFLMRefusal, which also knows the operators TFLM does not register
	// and the types its kernels refuse, is where callers ask.
	Refused string
}

// pair is a size or alignment on host64 and cortex-m.
type pair [2]int64

func (p pair) on(ptr int64) int64 {
	if ptr == 4 {
		return p[1]
	}
	return p[0]
}

// tflmArenaAlign is MicroArenaBufferAlignment() (micro_arena_constants.h):
// what MicroContext::AllocatePersistentBuffer aligns to.
const tflmArenaAlign = 16

// tflmParams are sizeof and alignof of the builtin parameter structs
// (tensorflow/lite/core/c/builtin_op_data.h at tflmCommit) that each
// operator's parser (tensorflow/lite/core/api/flatbuffer_conversions.cc,
// Parse<Op>: SafeBuiltinDataAllocator::Allocate<T>) keeps; the enums are
// one byte on cortex-m (arm-none-eabi's short enums). Each entry is
// {sizeof on host64, cortex-m}, {alignof on host64, cortex-m}.
var tflmParams = map[string][2]pair{
	"ADD":                          {{8, 2}, {4, 1}},
	"AVERAGE_POOL_2D":              {{40, 40}, {4, 4}},
	"MAX_POOL_2D":                  {{40, 40}, {4, 4}},
	"BATCH_MATMUL":                 {{3, 3}, {1, 1}},
	"CALL_ONCE":                    {{4, 4}, {4, 4}},
	"CAST":                         {{8, 2}, {4, 1}},
	"CONCATENATION":                {{8, 8}, {4, 4}},
	"CONV_2D":                      {{28, 28}, {4, 4}},
	"DEPTHWISE_CONV_2D":            {{28, 28}, {4, 4}},
	"DIV":                          {{4, 1}, {4, 1}},
	"FULLY_CONNECTED":              {{16, 5}, {4, 1}},
	"GATHER":                       {{8, 8}, {4, 4}},
	"IF":                           {{8, 8}, {4, 4}},
	"LEAKY_RELU":                   {{4, 4}, {4, 4}},
	"MEAN":                         {{1, 1}, {1, 1}},
	"SUM":                          {{1, 1}, {1, 1}},
	"MUL":                          {{4, 1}, {4, 1}},
	"PACK":                         {{8, 8}, {4, 4}},
	"RESHAPE":                      {{36, 36}, {4, 4}},
	"SHAPE":                        {{4, 1}, {4, 1}},
	"SOFTMAX":                      {{4, 4}, {4, 4}},
	"SPLIT":                        {{4, 4}, {4, 4}},
	"SPLIT_V":                      {{4, 4}, {4, 4}},
	"SQUEEZE":                      {{36, 36}, {4, 4}},
	"STRIDED_SLICE":                {{24, 24}, {4, 4}},
	"SUB":                          {{8, 2}, {4, 1}},
	"SVDF":                         {{12, 8}, {4, 4}},
	"TRANSPOSE_CONV":               {{20, 16}, {4, 4}},
	"UNIDIRECTIONAL_SEQUENCE_LSTM": {{16, 16}, {4, 4}},
	"UNPACK":                       {{8, 8}, {4, 4}},
	"VAR_HANDLE":                   {{16, 8}, {8, 4}},
	"WHILE":                        {{8, 8}, {4, 4}},
}

// tflmOpData are the bytes each kernel's Init asks
// TfLiteContext::AllocatePersistentBuffer for (aligned to 16), on
// host64 and cortex-m: sizeof the struct named, at tflmCommit.
var tflmOpData = map[string]pair{
	"ADD":                          {60, 60},   // add.cc AddInit: OpDataAdd (add.h)
	"ABS":                          {28, 28},   // elementwise.cc ElementWiseAbsRsqrtInit: OpDataAbsRsqrt (there; TfLiteQuantizationType is an int in C++)
	"AVERAGE_POOL_2D":              {32, 32},   // pooling.cc Init: OpDataPooling (pooling.h)
	"MAX_POOL_2D":                  {32, 32},   // pooling.cc Init: OpDataPooling
	"BATCH_MATMUL":                 {32, 16},   // batch_matmul.cc BatchMatMulInit: OpDataBatchMatmul
	"CALL_ONCE":                    {8, 8},     // call_once.cc Init: OpData
	"CONCATENATION":                {40, 24},   // concatenation.cc Init: OpData
	"CONV_2D":                      {72, 56},   // conv_common.cc ConvInit: OpDataConv (conv.h)
	"DEPTHWISE_CONV_2D":            {72, 56},   // depthwise_conv.cc Init: OpDataConv
	"TRANSPOSE_CONV":               {80, 72},   // transpose_conv.cc Init: OpData
	"DEQUANTIZE":                   {32, 32},   // dequantize.cc DequantizeInit: DequantizeOpData (dequantize.h)
	"QUANTIZE":                     {32, 32},   // quantize.cc Init: OpDataQuantizeReference (quantize.h)
	"DIV":                          {28, 28},   // div.cc Init: OpDataDiv
	"FULLY_CONNECTED":              {64, 48},   // fully_connected.cc Init: OpDataFullyConnected (fully_connected.h)
	"HARD_SWISH":                   {20, 20},   // hard_swish.cc HardSwishInit: HardSwishParams (types.h)
	"IF":                           {8, 8},     // if.cc IfInit: OpData (there: two ints)
	"LEAKY_RELU":                   {24, 24},   // leaky_relu.cc LeakyReluInit: LeakyReluOpData (leaky_relu.h)
	"LESS":                         {32, 32},   // comparisons.cc Init: OpData
	"LESS_EQUAL":                   {32, 32},   // comparisons.cc Init: OpData
	"GREATER":                      {32, 32},   // comparisons.cc Init: OpData
	"GREATER_EQUAL":                {32, 32},   // comparisons.cc Init: OpData
	"EQUAL":                        {32, 32},   // comparisons.cc Init: OpData
	"NOT_EQUAL":                    {32, 32},   // comparisons.cc Init: OpData
	"LOGISTIC":                     {16, 16},   // logistic.cc LogisticInit: OpDataLogistic (logistic.h)
	"TANH":                         {16, 16},   // tanh.cc TanhInit: OpData
	"MEAN":                         {44, 44},   // reduce.cc InitReduce: OpDataReduce (reduce.h)
	"SUM":                          {44, 44},   // reduce.cc InitReduce: OpDataReduce
	"MUL":                          {36, 36},   // mul_common.cc MulInit: OpDataMul (mul.h)
	"PAD":                          {56, 56},   // pad_common.cc PadInit: OpData (pad.h)
	"PADV2":                        {56, 56},   // pad_common.cc PadInit: OpData (pad.h)
	"RELU":                         {28, 28},   // activations.cc ReluInit: ReluOpData (activations.h)
	"RELU6":                        {8, 8},     // activations.cc Relu6Init: Relu6OpData (activations.h)
	"SOFTMAX":                      {80, 56},   // softmax_common.cc SoftmaxInit: SoftmaxParams (kernels/internal/types.h)
	"STRIDED_SLICE":                {84, 84},   // strided_slice_common.cc StridedSliceInit: StridedSliceParams (types.h)
	"SUB":                          {52, 52},   // sub.cc SubInit: OpDataSub (sub.h)
	"SVDF":                         {36, 36},   // svdf.cc InitSvdf: OpDataSvdf (svdf.h)
	"UNIDIRECTIONAL_SEQUENCE_LSTM": {688, 688}, // unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmInit: OpDataLSTM (lstm_shared.h)
	"VAR_HANDLE":                   {4, 4},     // var_handle.cc Init: OpData
	"WHILE":                        {8, 8},     // while.cc Init: OpData
}

// tflmPrepareOperands lists, for kernels whose Prepare takes only
// temporary operand tensors, which operands it allocates and in what
// order: "i<k>" input k, "o<k>" output k, "in*" every input in turn (read
// from each kernel's Prepare at tflmCommit; an omitted optional operand is
// skipped, as AllocateTempInputTensor returns nullptr without allocating).
var tflmPrepareOperands = map[string][]string{
	"ADD":                          {"i0", "i1", "o0"},                   // add_common.cc AddPrepare
	"SUB":                          {"i0", "i1", "o0"},                   // sub_common.cc SubPrepare
	"MUL":                          {"i0", "i1", "o0"},                   // mul_common.cc MulPrepare
	"DIV":                          {"i0", "i1", "o0"},                   // div.cc Prepare
	"AVERAGE_POOL_2D":              {"i0", "o0"},                         // pooling_common.cc PoolingPrepare
	"MAX_POOL_2D":                  {"i0", "o0"},                         // pooling_common.cc PoolingPrepare
	"CAST":                         {"i0", "o0"},                         // cast.cc Prepare
	"CONCATENATION":                {"i0", "o0", "in*"},                  // concatenation.cc Prepare
	"DEQUANTIZE":                   {"i0", "o0"},                         // dequantize_common.cc DequantizePrepare
	"QUANTIZE":                     {"i0", "o0"},                         // quantize_common.cc PrepareQuantizeReference
	"LESS":                         {"i0", "i1"},                         // comparisons.cc Prepare
	"LESS_EQUAL":                   {"i0", "i1"},                         // comparisons.cc Prepare
	"GREATER":                      {"i0", "i1"},                         // comparisons.cc Prepare
	"GREATER_EQUAL":                {"i0", "i1"},                         // comparisons.cc Prepare
	"EQUAL":                        {"i0", "i1"},                         // comparisons.cc Prepare
	"NOT_EQUAL":                    {"i0", "i1"},                         // comparisons.cc Prepare
	"LOGISTIC":                     {"i0", "o0"},                         // logistic_common.cc LogisticPrepare
	"TANH":                         {"i0", "i0", "o0"},                   // tanh.cc TanhPrepare, then CalculateArithmeticOpData
	"MEAN":                         {"i0", "o0", "i1", "i0", "i1", "o0"}, // reduce_common.cc PrepareMeanOrSumHelper, then PrepareSimple
	"SUM":                          {"i0", "o0", "i1", "i0", "i1", "o0"}, // reduce_common.cc PrepareMeanOrSumHelper, then PrepareSimple
	"PAD":                          {"i0", "i1", "o0"},                   // pad_common.cc PadPrepare
	"PADV2":                        {"i0", "i1", "i2", "o0"},             // pad_common.cc PadPrepare
	"READ_VARIABLE":                {"i0"},                               // read_variable.cc Prepare
	"RESHAPE":                      {"i0", "o0"},                         // reshape_common.cc PrepareReshapeReference
	"SPLIT":                        {"i0"},                               // split.cc Prepare (the axis)
	"SPLIT_V":                      {"i2"},                               // split_v.cc Prepare (the axis)
	"STRIDED_SLICE":                {"i0", "i1", "i2", "i3", "o0"},       // strided_slice_common.cc CalculateOpData
	"SVDF":                         {"i0", "i1", "i2", "i3", "i4", "o0"}, // svdf_common.cc PrepareSvdf
	"TRANSPOSE":                    {"i0", "i1", "o0"},                   // transpose.cc TransposePrepare
	"UNIDIRECTIONAL_SEQUENCE_LSTM": {"in*", "o0"},                        // unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmPrepare
	"RELU":                         {"i0", "o0"},                         // activations_common.cc ReluPrepare
	"RELU6":                        {"i0"},                               // activations_common.cc Relu6Prepare
	"LEAKY_RELU":                   {"i0", "o0"},                         // leaky_relu_common.cc CalculateOpDataLeakyRelu
	"HARD_SWISH":                   {"i0", "o0"},                         // hard_swish_common.cc HardSwishPrepare
	"ABS":                          {"i0", "o0"},                         // elementwise.cc PrepareAbsRsqrt
	"SQUEEZE":                      {"i0", "o0"},                         // squeeze.cc SqueezeContext
	"EXPAND_DIMS":                  {"i0", "i1", "o0"},                   // expand_dims.cc ExpandDimsPrepare
	"IF":                           {"i0"},                               // if.cc IfPrepare (the condition)
	// Kernels whose Prepare takes nothing from the arena.
	"CALL_ONCE": nil, "WHILE": nil, "VAR_HANDLE": nil, "PACK": nil, "UNPACK": nil,
	"SHAPE": nil, "MAXIMUM": nil, "MINIMUM": nil,
	"NEG": nil, // neg.cc: no Init, no Prepare
}

// TFLM returns what operator op of subgraph s of m takes from TFLM's
// arena under the reference kernels on a target with ptr-byte pointers
// (8: host64, 4: cortex-m), and whether the data knows the operator.
func TFLM(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, ptr int64) (TFLMKernel, bool) {
	var k TFLMKernel
	if m == nil || op == nil || s < 0 || int(s) >= len(m.Subgraphs) || (ptr != 4 && ptr != 8) {
		return k, false
	}
	sg := &m.Subgraphs[s]
	name := op.CodeName
	if k, ok, mine := tflmShape(m, sg, op, ptr); mine {
		return k, ok
	}
	if op.Code == graph.Custom && op.CustomName == "TFLM_DECODE" {
		return tflmDecode(m, sg, op, ptr), true // tflmtail_decode.go
	}
	if op.Code == graph.Custom {
		return tflmSignal(sg, op, ptr)
	}
	if k, ok, handled := tflmMath(m, sg, op, ptr); handled {
		return k, ok
	}
	if p, ok := tflmParams[name]; ok {
		k.Params = []TFLMAlloc{{p[0].on(ptr), p[1].on(ptr)}}
	}
	if d, ok := tflmOpData[name]; ok {
		k.Init = []TFLMAlloc{{d.on(ptr), tflmArenaAlign}}
	}
	temp := func(ids []graph.TensorID, i int) {
		if i < len(ids) && ids[i] >= 0 {
			k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: ids[i]})
		}
	}
	persist := func(bytes int64) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}})
	}
	// perChannel is a multiplier and a shift array of bytes each; the
	// kernel fills them only for quantized data (CalculateOpData* skip
	// FLOAT32), so only then is their content known.
	perChannel := func(bytes int64, filled bool) {
		for _, c := range []TFLMContent{TFLMMultipliers, TFLMShifts} {
			if !filled {
				c = TFLMUnknown
			}
			k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}, Content: c})
		}
	}
	quantized := func(ids []graph.TensorID, i int) bool {
		t := operand(sg, ids, i)
		return t != nil && (t.Type == graph.Int8 || t.Type == graph.Int16)
	}
	lastDim := func(ids []graph.TensorID, i int) int64 {
		t := operand(sg, ids, i)
		if t == nil || len(t.Shape) == 0 {
			return 0
		}
		return int64(t.Shape[len(t.Shape)-1])
	}
	intArray := func(rank int) int64 { return 4 + 4*int64(rank) } // TfLiteIntArrayGetSizeInBytes
	switch name {
	case "CONV_2D", "DEPTHWISE_CONV_2D":
		// conv_common.cc ConvPrepare / depthwise_conv_common.cc
		// DepthwiseConvPrepare: output, input, filter, then
		// per_channel_output_multiplier and _shift (an int32 per output
		// channel), then CalculateOpData{Conv,DepthwiseConv}: input,
		// filter, bias, output.
		in, out := op.Inputs, op.Outputs
		temp(out, 0)
		temp(in, 0)
		temp(in, 1)
		c := 4 * lastDim(out, 0)
		perChannel(c, quantized(in, 0))
		temp(in, 0)
		temp(in, 1)
		temp(in, 2)
		temp(out, 0)
		return k, true
	case "TRANSPOSE_CONV":
		// transpose_conv.cc TransposeConvPrepare: output, input, filter,
		// the per-channel arrays, then CalculateOpData: input, filter,
		// bias, output (inputs: 0 output shape, 1 filter, 2 input, 3 bias).
		in, out := op.Inputs, op.Outputs
		temp(out, 0)
		temp(in, 2)
		temp(in, 1)
		c := 4 * lastDim(out, 0)
		perChannel(c, quantized(in, 2))
		temp(in, 2)
		temp(in, 1)
		temp(in, 3)
		temp(out, 0)
		return k, true
	case "GATHER":
		// gather.cc Prepare: input, positions, output, then
		// kernel_util.cc CreateWritableTensorDimsWithCopy of the output.
		temp(op.Inputs, 0)
		temp(op.Inputs, 1)
		temp(op.Outputs, 0)
		if t := operand(sg, op.Outputs, 0); t != nil {
			persist(intArray(len(t.Shape)))
		}
		return k, true
	case "BATCH_MATMUL":
		// batch_matmul.cc BatchMatMulPrepare: lhs, rhs, output
		// (PrepareOpContext), then InitializeTemporaries: for INT8 and
		// INT16 the quantization struct, then the transposed operands
		// (batchMatmulTransposes), then the output's dims
		// (batch_matmul_common.cc ReshapeOutputTensor:
		// CreateWritableTensorDimsWithCopy).
		temp(op.Inputs, 0)
		temp(op.Inputs, 1)
		temp(op.Outputs, 0)
		lhs, o := operand(sg, op.Inputs, 0), operand(sg, op.Outputs, 0)
		if lhs == nil || o == nil {
			return k, false
		}
		switch lhs.Type {
		case graph.Float32:
		case graph.Int8, graph.Int16:
			persist(batchMatmulQuant)
		default:
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
		return k, true
	case "FULLY_CONNECTED":
		// fully_connected.cc FullyConnectedPrepare: input, filter, bias,
		// output, then fully_connected_common.cc
		// CalculateOpDataFullyConnected: the per-channel arrays.
		temp(op.Inputs, 0)
		temp(op.Inputs, 1)
		temp(op.Inputs, 2)
		temp(op.Outputs, 0)
		k.Prepare = append(k.Prepare, fcPerChannel(sg, op)...)
		return k, true
	case "SOFTMAX":
		// softmax_common.cc SoftmaxPrepare: input, output, then
		// CalculateSoftmaxParams: the INT16 lookup tables.
		temp(op.Inputs, 0)
		temp(op.Outputs, 0)
		for _, n := range softmaxLUTs(sg, op) {
			persist(n)
		}
		return k, true
	case "ASSIGN_VARIABLE":
		// assign_variable.cc Prepare: the value (input 1), then
		// MicroResourceVariables::Allocate.
		temp(op.Inputs, 1)
		k.AssignResource = true
		return k, true
	}
	order, ok := tflmPrepareOperands[name]
	if !ok {
		return k, false
	}
	for _, o := range order {
		switch {
		case o == "in*":
			for i := range op.Inputs {
				temp(op.Inputs, i)
			}
		case o[0] == 'i':
			temp(op.Inputs, int(o[1]-'0'))
		case o[0] == 'o':
			temp(op.Outputs, int(o[1]-'0'))
		}
	}
	return k, true
}

// tflmSignalOperands are the temporary operands of the signal library's
// kernels' Prepare (signal/micro/kernels at tflmCommit), in order.
var tflmSignalOperands = map[string][]string{
	"SignalWindow":                        {"i0", "i1", "o0"},       // window.cc WindowPrepare
	"SignalFftAutoScale":                  {"i0", "o0", "o1"},       // fft_auto_scale_common.cc FftAutoScalePrepare
	"SignalRfft":                          {"i0", "o0"},             // rfft.cc RfftPrepare
	"SignalEnergy":                        {"i0", "o0"},             // energy.cc EnergyPrepare
	"SignalFilterBank":                    {"in*", "o0"},            // filter_bank.cc FilterBankPrepare: its six inputs, the output
	"SignalFilterBankSquareRoot":          {"i0", "i1", "o0"},       // filter_bank_square_root_common.cc FilterBankSquareRootPrepare
	"SignalFilterBankSpectralSubtraction": {"i0", "o0", "o1"},       // filter_bank_spectral_subtraction.cc FilterBankSpectralSubtractionPrepare
	"SignalPCAN":                          {"i0", "i1", "i2", "o0"}, // pcan.cc PcanPrepare
	"SignalFilterBankLog":                 {"i0", "o0"},             // filter_bank_log.cc FilterBankLogPrepare
}

// tflmSignal is TFLM's signal-library kernels' data: custom operators,
// no builtin parameters; each Init allocates its parameters (sizeof on
// host64 and cortex-m, compiled at tflmCommit) and some a buffer sized
// from the options, which the operands' shapes give here.
func tflmSignal(sg *graph.Subgraph, op *graph.Op, ptr int64) (TFLMKernel, bool) {
	var k TFLMKernel
	order, ok := tflmSignalOperands[op.CustomName]
	if !ok {
		return k, false
	}
	init := func(bytes int64) { k.Init = append(k.Init, TFLMAlloc{bytes, tflmArenaAlign}) }
	outDim := func(i int) int64 {
		t := operand(sg, op.Outputs, i)
		if t == nil || len(t.Shape) == 0 {
			return 0
		}
		return int64(t.Shape[len(t.Shape)-1])
	}
	switch op.CustomName {
	case "SignalWindow", "SignalEnergy", "SignalFilterBankLog":
		// window.cc WindowInit: TFLMSignalWindowParams; energy.cc
		// EnergyInit: TFLMSignalEnergyParams; filter_bank_log.cc
		// FilterBankLogInit: TFLMSignalLogParams.
		init(8)
	case "SignalPCAN":
		init(4) // pcan.cc PcanInit: TfLitePcanParams
	case "SignalFilterBank":
		// filter_bank.cc FilterBankInit: TFLMSignalFilterBankParams, then
		// a uint64 work area of num_channels + 1 (the output's channels).
		init(pair{64, 36}.on(ptr))
		init(8 * (outDim(0) + 1))
	case "SignalFilterBankSpectralSubtraction":
		// filter_bank_spectral_subtraction.cc
		// FilterBankSpectralSubtractionInit: the parameters, then a
		// uint32 noise estimate per channel.
		init(pair{56, 44}.on(ptr))
		init(4 * outDim(0))
	case "SignalRfft":
		// rfft.cc RfftInit: TfLiteAudioFrontendRfftParams<T>, then the
		// KISS FFT state (signal/src/rfft_*.cc Rfft*GetNeededMemory:
		// kiss_fftr_alloc of fft_length, tools/kiss_fftr.c, with
		// kiss_fft_alloc of half of it, kiss_fft.c): struct
		// kiss_fftr_state (three pointers) + struct kiss_fft_state (two
		// ints, 2*MAXFACTORS ints, one complex) + nfft/2 - 1 complexes +
		// 3/2 * nfft/2 complexes. The output holds fft_length/2 + 1
		// complexes, interleaved.
		in := operand(sg, op.Inputs, 0)
		if in == nil {
			return k, false
		}
		cpx := 2 * max(in.Type.Bits()/8, 1)
		half := (flat(operand(sg, op.Outputs, 0))/2 - 1) // fft_length / 2
		if half <= 0 {
			return k, false
		}
		state := (8 + 4*64 + cpx + 3) / 4 * 4
		init(pair{48, 32}.on(ptr))
		init(3*ptr + state + cpx*(half-1) + cpx*(half*3/2))
	}
	for _, o := range order {
		switch {
		case o == "in*":
			for i := range op.Inputs {
				if op.Inputs[i] >= 0 {
					k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: op.Inputs[i]})
				}
			}
		case o[0] == 'i', o[0] == 'o':
			ids := op.Inputs
			if o[0] == 'o' {
				ids = op.Outputs
			}
			if i := int(o[1] - '0'); i < len(ids) && ids[i] >= 0 {
				k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: ids[i]})
			}
		}
	}
	return k, true
}

// batchMatmulQuant is sizeof(QuantizationOpDataBatchMatmul)
// (kernels/batch_matmul.h), 28 on both targets (tflmtail_test.go compiles
// it).
const batchMatmulQuant = 28

// batchMatmulTransposes is what BATCH_MATMUL's Prepare allocates for the
// operands it transposes (both kernel libraries: batch_matmul.cc
// InitializeTemporaries and cmsis_nn/batch_matmul.cc Prepare), in order:
// the LHS when adj_x is set, the RHS unless adj_y is (TFLM transposes the
// RHS by default); for each, AllocInitTransposeTensorFromTfLiteTensor's
// TfLiteEvalTensor, its dims (TfLiteIntArrayGetSizeInBytes of its rank)
// and its data (its elements × TfLiteTypeGetSize). false for an operand
// missing or of a type the kernels do not take.
func batchMatmulTransposes(sg *graph.Subgraph, op *graph.Op, ptr int64) ([]int64, bool) {
	var out []int64
	o := op.Resolved()
	for i, transposed := range []bool{o.Bool("adj_x"), !o.Bool("adj_y")} {
		if !transposed {
			continue
		}
		t := operand(sg, op.Inputs, i)
		if t == nil {
			return nil, false
		}
		var size int64
		switch t.Type {
		case graph.Float32:
			size = 4
		case graph.Int16:
			size = 2
		case graph.Int8:
			size = 1
		default:
			return nil, false
		}
		out = append(out, pair{24, 12}.on(ptr), 4+4*int64(len(t.Shape)), flat(t)*size)
	}
	return out, true
}

// fcPerChannel is what fully_connected_common.cc
// CalculateOpDataFullyConnected allocates (both kernel libraries call
// it): for a quantized input and a filter with more than one scale, an
// int32 multiplier and shift per scale, which it fills at once.
func fcPerChannel(sg *graph.Subgraph, op *graph.Op) []TFLMStep {
	in, f := operand(sg, op.Inputs, 0), operand(sg, op.Inputs, 1)
	if in == nil || f == nil || in.Type == graph.Float32 || f.Quantization == nil || len(f.Quantization.Scale) <= 1 {
		return nil
	}
	a := TFLMAlloc{4 * int64(len(f.Quantization.Scale)), tflmArenaAlign}
	return []TFLMStep{{Kind: TFLMPersistent, Alloc: a, Content: TFLMMultipliers}, {Kind: TFLMPersistent, Alloc: a, Content: TFLMShifts}}
}

// int16LUT is the bytes of each INT16 softmax lookup table:
// sizeof(int16_t) × LUTSize<int16_t>() (kernels/internal/common.h: 513,
// compiled at tflmCommit).
const int16LUT = 2 * 513

// softmaxLUTs is what softmax_common.cc InitializeLutForInt16 allocates
// (both kernel libraries call it): for INT16 input, the exp and
// 1/(1+x) tables.
func softmaxLUTs(sg *graph.Subgraph, op *graph.Op) []int64 {
	if in := operand(sg, op.Inputs, 0); in != nil && in.Type == graph.Int16 {
		return []int64{int16LUT, int16LUT}
	}
	return nil
}
