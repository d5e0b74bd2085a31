package kernels

import (
	"fmt"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/flexbuf"
)

// TFLM's reference kernels' arena data (see tflmtail.go) for the shape,
// spatial, gather and signal operators: BATCH_TO_SPACE_ND,
// SPACE_TO_BATCH_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH, DYNAMIC_UPDATE_SLICE,
// EMBEDDING_LOOKUP, GATHER_ND, L2_POOL_2D, MIRROR_PAD, RESIZE_BILINEAR,
// RESIZE_NEAREST_NEIGHBOR, REVERSE_V2, SLICE, and the custom operators
// TFLite_Detection_PostProcess, CIRCULAR_BUFFER, SignalDelay,
// SignalFramer, SignalIrfft, SignalOverlapAdd and SignalStacker. Files are
// relative to tensorflow/lite/micro/kernels (signal/micro/kernels for the
// signal library) at tflmCommit; the parsers are
// tensorflow/lite/core/api/flatbuffer_conversions.cc.

// tflmShapeParams are the builtin parameters the parsers keep, as
// tflmParams: {sizeof host64, cortex-m}, {alignof host64, cortex-m}. The
// other operators' parsers (ParseBatchToSpaceNd, ParseSpaceToBatchNd,
// ParseDynamicUpdateSlice, ParseEmbeddingLookup, ParseGatherNd,
// ParseReverseV2, ParseSlice) allocate nothing.
var tflmShapeParams = map[string][2]pair{
	"DEPTH_TO_SPACE":          {{4, 4}, {4, 4}},   // ParseDepthToSpace: TfLiteDepthToSpaceParams
	"SPACE_TO_DEPTH":          {{4, 4}, {4, 4}},   // ParseSpaceToDepth: TfLiteSpaceToDepthParams
	"L2_POOL_2D":              {{40, 40}, {4, 4}}, // ParsePool (micro_mutable_op_resolver.h AddL2Pool2D): TfLitePoolParams
	"MIRROR_PAD":              {{4, 1}, {4, 1}},   // ParseMirrorPad: TfLiteMirrorPaddingParams (an enum)
	"RESIZE_BILINEAR":         {{2, 2}, {1, 1}},   // ParseResizeBilinear: TfLiteResizeBilinearParams
	"RESIZE_NEAREST_NEIGHBOR": {{2, 2}, {1, 1}},   // ParseResizeNearestNeighbor: TfLiteResizeNearestNeighborParams
}

// tflmShapeOpData are the Init buffers (sizeof on host64, cortex-m).
var tflmShapeOpData = map[string]pair{
	"SPACE_TO_BATCH_ND": {4, 4},   // space_to_batch_nd.cc SpaceToBatchNDInit: SpaceToBatchParams (kernels/internal/types.h)
	"MIRROR_PAD":        {20, 20}, // mirror_pad.cc MirrorPadInit: OpDataMirrorPad (there: five ints)
}

// tflmShapeOperands are the temporary operands each Prepare allocates, in
// order, as tflmPrepareOperands.
var tflmShapeOperands = map[string][]string{
	"BATCH_TO_SPACE_ND":       {"i0", "o0"},             // batch_to_space_nd.cc BatchToSpaceNDPrepare
	"SPACE_TO_BATCH_ND":       {"i0", "o0"},             // space_to_batch_nd.cc SpaceToBatchNDPrepare
	"DEPTH_TO_SPACE":          {"i0", "o0"},             // depth_to_space.cc CalculateOpData, then the output's dims
	"SPACE_TO_DEPTH":          {"i0", "o0"},             // space_to_depth.cc Prepare, then the output's dims
	"DYNAMIC_UPDATE_SLICE":    {"i0", "i1", "i2", "o0"}, // dynamic_update_slice.cc Prepare
	"EMBEDDING_LOOKUP":        {"i0", "i1", "o0"},       // embedding_lookup.cc EmbeddingLookUpPrepare, then dims and OpData
	"GATHER_ND":               {"i0", "i1", "o0"},       // gather_nd.cc GatherNdPrepare, then the output's dims
	"L2_POOL_2D":              {"o0", "i0"},             // l2_pool_2d.cc L2Prepare, then the output's dims
	"MIRROR_PAD":              {"i0", "i1", "o0"},       // mirror_pad.cc MirrorPadPrepare (scratch: scratch.go)
	"RESIZE_BILINEAR":         {"i0", "i1", "o0"},       // resize_bilinear.cc ResizeBilinearPrepare
	"RESIZE_NEAREST_NEIGHBOR": {"i0", "i1", "o0"},       // resize_nearest_neighbor.cc ResizeNearestNeighborPrepare
	"REVERSE_V2":              {"i0", "i1", "o0"},       // reverse.cc ReverseV2Prepare
	"SLICE":                   {"i0", "i1", "i2", "o0"}, // slice.cc SlicePrepare
	// Custom operators.
	"CIRCULAR_BUFFER":              {"i0", "o0"},       // circular_buffer_common.cc CircularBufferPrepare
	"TFLite_Detection_PostProcess": {"i0", "i1", "i2"}, // detection_postprocess.cc DetectionPostProcessPrepare
	"SignalDelay":                  {"i0", "o0"},       // delay.cc DelayPrepare, then its state
	"SignalFramer":                 {"i0", "o0", "o1"}, // framer.cc FramerPrepare, then its state
	"SignalIrfft":                  {"i0", "o0"},       // irfft.cc IrfftPrepare
	"SignalOverlapAdd":             {"i0", "o0"},       // overlap_add.cc OverlapAddPrepare, then its state
	"SignalStacker":                {"i0", "o0", "o1"}, // stacker.cc StackerPrepare
}

// Sizes of structs declared in kernel .cc files, {host64, cortex-m}
// (tflmtail_shape_test.go compiles each kernel file with a static_assert).
var (
	// embedding_lookup.cc OpData: a float and a size_t.
	embeddingLookupOpData = pair{16, 8}
	// detection_postprocess.cc OpData.
	detectionOpData = pair{112, 112}
	// circular_buffer.h OpDataCircularBuffer: two ints.
	circularBufferOpData = pair{8, 8}
	// delay.cc TFLMSignalFrontendDelayParams.
	signalDelayParams = pair{32, 20}
	// framer.cc TFLMSignalFramerParams.
	signalFramerParams = pair{40, 28}
	// overlap_add.cc TFLMSignalOverlapAddParams<T> (the same for each T).
	signalOverlapAddParams = pair{32, 24}
	// stacker.cc TFLMSignalStackerParams.
	signalStackerParams = pair{56, 36}
	// irfft.cc TfLiteAudioFrontendIrfftParams.
	signalIrfftParams = pair{32, 24}
	// signal/src/irfft_float.cc IrfftFloatState: an int32 and a pointer.
	irfftFloatState = pair{16, 8}
	// signal/src/circular_buffer.h CircularBuffer.
	signalCircularBuffer = pair{40, 24}
)

// tflmShapeRefusals: what each Prepare refuses, checked before the data
// is given (TFLM's AllocateTensors fails on such a model, so no arena
// runs it). nil when it accepts the operator.
func tflmShapeRefusal(m *graph.Model, sg *graph.Subgraph, op *graph.Op, name string) error {
	ty := func(ids []graph.TensorID, i int) graph.ElementType {
		if t := operand(sg, ids, i); t != nil {
			return t.Type
		}
		return -1
	}
	in, out := op.Inputs, op.Outputs
	oneOf := func(what string, t graph.ElementType, ok ...graph.ElementType) error {
		for _, o := range ok {
			if t == o {
				return nil
			}
		}
		return fmt.Errorf("its Prepare refuses %s of type %s", what, t)
	}
	constant := func(i int) bool {
		t := operand(sg, in, i)
		return t != nil && t.Buffer > 0 && int(t.Buffer) < len(m.Buffers) && len(m.Buffers[t.Buffer].Data) > 0
	}
	f32, i8, i16, i32, i64 := graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64
	switch name {
	case "DEPTH_TO_SPACE", "SPACE_TO_DEPTH":
		// depth_to_space.cc CalculateOpData, space_to_depth.cc Prepare.
		return oneOf("an output", ty(out, 0), f32, i8)
	case "DYNAMIC_UPDATE_SLICE":
		return oneOf("start indices", ty(in, 2), i32, i64) // dynamic_update_slice.cc Prepare
	case "EMBEDDING_LOOKUP":
		// embedding_lookup.cc EmbeddingLookUpPrepare.
		if err := oneOf("lookups", ty(in, 0), i32); err != nil {
			return err
		}
		if err := oneOf("values", ty(in, 1), f32, i8); err != nil {
			return err
		}
		if ty(in, 1) == f32 {
			return oneOf("an output (FLOAT32 values)", ty(out, 0), f32)
		}
		return oneOf("an output", ty(out, 0), f32, i8)
	case "GATHER_ND":
		// gather_nd.cc GatherNdPrepare.
		if err := oneOf("params", ty(in, 0), f32, i8); err != nil {
			return err
		}
		return oneOf("indices", ty(in, 1), i32)
	case "L2_POOL_2D":
		return oneOf("an input", ty(in, 0), f32) // l2_pool_2d.cc L2Prepare
	case "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR":
		// resize_bilinear.cc ResizeBilinearPrepare,
		// resize_nearest_neighbor.cc ResizeNearestNeighborPrepare.
		if err := oneOf("a size", ty(in, 1), i32); err != nil {
			return err
		}
		if !constant(1) {
			return fmt.Errorf("its Prepare refuses a size that is not constant")
		}
		if o := op.Resolved(); name == "RESIZE_BILINEAR" && o != nil && o.Bool("half_pixel_centers") && o.Bool("align_corners") {
			return fmt.Errorf("its Prepare refuses half_pixel_centers with align_corners")
		}
	case "REVERSE_V2":
		// reverse.cc ReverseV2Prepare.
		if err := oneOf("an input", ty(in, 0), i32, f32, graph.Uint8, i8, i16, i64, graph.Bool); err != nil {
			return err
		}
		return oneOf("an axis", ty(in, 1), i32)
	case "CIRCULAR_BUFFER":
		return oneOf("an input", ty(in, 0), i8) // circular_buffer_common.cc CircularBufferPrepare
	case "SignalDelay", "SignalStacker":
		return oneOf("an input", ty(in, 0), i16) // delay.cc DelayPrepare, stacker.cc StackerPrepare
	case "SignalFramer":
		return oneOf("an input", ty(in, 0), i16) // framer.cc FramerPrepare
	}
	return nil
}

// tflmShape is kernels.TFLM for the operators of this file; mine is false
// for the others. ok false with mine is an operator whose data cannot be
// given (its custom options unreadable).
func tflmShape(m *graph.Model, sg *graph.Subgraph, op *graph.Op, ptr int64) (k TFLMKernel, ok, mine bool) {
	name := op.CodeName
	if op.Code == graph.Custom {
		name = op.CustomName
	}
	order, mine := tflmShapeOperands[name]
	if !mine {
		return k, false, false
	}
	if err := tflmShapeRefusal(m, sg, op, name); err != nil {
		k.Refused = err.Error()
		return k, true, true
	}
	if op.Code != graph.Custom {
		if p, ok := tflmShapeParams[name]; ok {
			k.Params = []TFLMAlloc{{p[0].on(ptr), p[1].on(ptr)}}
		}
		if d, ok := tflmShapeOpData[name]; ok {
			k.Init = []TFLMAlloc{{d.on(ptr), tflmArenaAlign}}
		}
	}
	for _, o := range order {
		ids := op.Inputs
		if o[0] == 'o' {
			ids = op.Outputs
		}
		if i := int(o[1] - '0'); i < len(ids) && ids[i] >= 0 {
			k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: ids[i]})
		}
	}
	init := func(bytes int64) { k.Init = append(k.Init, TFLMAlloc{bytes, tflmArenaAlign}) }
	persist := func(bytes int64) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}})
	}
	rank := func(ids []graph.TensorID, i int) int64 {
		if t := operand(sg, ids, i); t != nil {
			return int64(len(t.Shape))
		}
		return 0
	}
	// kernel_util.cc CreateWritableTensorDimsWithCopy: the output's dims,
	// TfLiteIntArrayGetSizeInBytes of its rank.
	outputDims := func() { persist(4 + 4*rank(op.Outputs, 0)) }
	lastDim := func(t *graph.Tensor) int64 {
		if t == nil || len(t.Shape) == 0 {
			return 0
		}
		return int64(t.Shape[len(t.Shape)-1])
	}
	in0 := operand(sg, op.Inputs, 0)
	// signal/src/circular_buffer.cc CircularBufferGetNeededMemory: the
	// struct and two int16 per element of capacity.
	circular := func(capacity int64) int64 { return signalCircularBuffer.on(ptr) + 2*2*capacity }
	var opts flexbuf.Map
	if op.Code == graph.Custom && name != "CIRCULAR_BUFFER" {
		var err error
		if opts, err = flexbuf.ReadMap(op.CustomOptions); err != nil {
			// Each Init reads its options; TFLM reads garbage.
			k.Refused = fmt.Sprintf("its Init reads custom options, which are not a FlexBuffers map (%v)", err)
			return k, true, true
		}
	}
	at := func(i int) int64 {
		v, err := opts.At(i)
		if err != nil {
			ok = false
		}
		return v.Int()
	}
	key := func(name string) flexbuf.Value {
		v, _, err := opts.Get(name)
		if err != nil {
			ok = false
		}
		return v
	}
	ok = true
	switch name {
	case "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "GATHER_ND", "L2_POOL_2D":
		outputDims()
	case "EMBEDDING_LOOKUP":
		// embedding_lookup.cc EmbeddingLookUpPrepare: the output's dims,
		// then CalculateOpData's OpData.
		outputDims()
		persist(embeddingLookupOpData.on(ptr))
	case "CIRCULAR_BUFFER":
		init(circularBufferOpData.on(ptr)) // circular_buffer.cc CircularBufferInit
	case "TFLite_Detection_PostProcess":
		init(detectionOpData.on(ptr)) // detection_postprocess.cc DetectionPostProcessInit
	case "SignalDelay":
		// delay.cc DelayInit: the parameters (delay_length, value 0);
		// DelayPrepare: a pointer per outer row twice, then per row a
		// circular buffer of the innermost dimension + delay_length.
		init(signalDelayParams.on(ptr))
		frame := lastDim(in0)
		if frame <= 0 {
			return k, false, true
		}
		outer := flat(in0) / frame
		persist(outer * ptr)
		persist(outer * ptr)
		capacity := frame + at(0)
		for range outer {
			persist(circular(capacity))
		}
	case "SignalFramer":
		// framer.cc FramerInit: the parameters (frame_size 0, frame_step
		// 1); FramerPrepare: a pointer per outer row twice, then per row
		// a circular buffer of frame_size rounded up to frame_step.
		init(signalFramerParams.on(ptr))
		size, step, inner := at(0), at(1), lastDim(in0)
		if step <= 0 || inner <= 0 || size < 0 {
			return k, false, true
		}
		outer := flat(in0) / inner
		persist(outer * ptr)
		persist(outer * ptr)
		for range outer {
			persist(circular((size + step - 1) / step * step))
		}
	case "SignalStacker":
		// stacker.cc StackerInit: the parameters, then a circular
		// buffer of num_channels × (left + right context + 1).
		init(signalStackerParams.on(ptr))
		init(circular(at(0) * (at(1) + at(2) + 1)))
	case "SignalOverlapAdd":
		// overlap_add.cc OverlapAddInitAll (T: INT16 or FLOAT32),
		// OverlapAddInit: the parameters; OverlapAddPrepare: a pointer
		// per outer row, then frame_size T per row (frame_size the
		// input's innermost dimension, n_frames the next).
		t := graph.ElementType(key("T").Int())
		if t != graph.Int16 && t != graph.Float32 {
			k.Refused = fmt.Sprintf("its Init refuses T %s", t)
			return k, true, true
		}
		if in0 == nil || in0.Type != t {
			k.Refused = "its Prepare refuses an input whose type is not T"
			return k, true, true
		}
		init(signalOverlapAddParams.on(ptr))
		if len(in0.Shape) < 2 {
			return k, false, true
		}
		frame, frames := lastDim(in0), int64(in0.Shape[len(in0.Shape)-2])
		if frame*frames <= 0 {
			return k, false, true
		}
		outer := flat(in0) / (frame * frames)
		persist(outer * ptr)
		for range outer {
			persist(frame * int64(t.Bits()/8))
		}
	case "SignalIrfft":
		// irfft.cc IrfftInitAll (T: INT16, INT32 or FLOAT32), IrfftInit:
		// the parameters, then Irfft<T>GetNeededMemory(fft_length,
		// value 1) (signal/src/irfft_*.cc): KISS FFT's inverse real
		// state, for FLOAT32 after an IrfftFloatState.
		t := graph.ElementType(key("T").Int())
		var cpx int64
		switch t {
		case graph.Int16:
			cpx = 4
		case graph.Int32, graph.Float32:
			cpx = 8
		default:
			k.Refused = fmt.Sprintf("its Init refuses T %s", t)
			return k, true, true
		}
		if in0 == nil || in0.Type != t {
			k.Refused = "its Prepare refuses an input whose type is not T"
			return k, true, true
		}
		init(signalIrfftParams.on(ptr))
		state := kissFFTRBytes(at(1), cpx, ptr)
		if state <= 0 {
			return k, false, true
		}
		if t == graph.Float32 {
			state += irfftFloatState.on(ptr)
		}
		init(state)
	}
	return k, ok, true
}

// kissFFTRBytes is kiss_fftr_alloc's memory for an fft_length-point real
// transform with cpx-byte complex values (third_party kissfft
// tools/kiss_fftr.c kiss_fftr_alloc, as the signal library builds it; see
// tflmSignal's SignalRfft): struct kiss_fftr_state (three pointers), the
// half-length complex FFT's state (kiss_fft.c kiss_fft_alloc: two ints,
// 2 × MAXFACTORS (32) ints and nfft complexes), then 3/2 × nfft
// complexes; nfft is fft_length/2. 0 for a length it cannot take.
func kissFFTRBytes(fftLength, cpx, ptr int64) int64 {
	half := fftLength / 2
	if fftLength <= 0 || fftLength%2 != 0 || half <= 0 {
		return 0
	}
	state := (8 + 4*64 + cpx + 3) / 4 * 4
	return 3*ptr + state + cpx*(half-1) + cpx*(half*3/2)
}

// detectionPostprocessScratch is what detection_postprocess.cc
// DetectionPostProcessPrepare requests, in order: with num_boxes the box
// encodings' dimension 1, max_detections and num_classes from the custom
// options, num_boxes bytes, num_boxes × 4 floats, the class predictions'
// dims 1 × 2 floats, two of num_boxes floats, two of max_detections ×
// num_boxes floats, num_boxes ints, max_detections × num_boxes ints, then
// max(num_classes, max_detections) × num_boxes ints and min(num_boxes,
// max_detections) × num_boxes ints. nil when the options cannot be read
// (TFLM cannot run the operator then: see tflmShapeRefusal).
func detectionPostprocessScratch(c scratchCtx) []int64 {
	opts, err := flexbuf.ReadMap(c.op.CustomOptions)
	if err != nil {
		return nil
	}
	get := func(k string) int64 {
		v, _, _ := opts.Get(k)
		return v.Int()
	}
	boxes, classes := c.in(0), c.in(1)
	if len(dim1(boxes)) == 0 || len(dim1(classes)) < 2 {
		return nil
	}
	n := dim1(boxes)[0]
	maxDet, numClasses := get("max_detections"), get("num_classes")
	return []int64{
		n, n * 4 * 4, dim1(classes)[0] * dim1(classes)[1] * 4,
		n * 4, n * 4, maxDet * n * 4, maxDet * n * 4, n * 4, maxDet * n * 4,
		max(numClasses, maxDet) * n * 4, min(n, maxDet) * n * 4,
	}
}

// dim1 returns t's dimensions from 1 on.
func dim1(t *graph.Tensor) []int64 {
	if t == nil || len(t.Shape) < 2 {
		return nil
	}
	out := make([]int64, 0, len(t.Shape)-1)
	for _, d := range t.Shape[1:] {
		out = append(out, int64(d))
	}
	return out
}
