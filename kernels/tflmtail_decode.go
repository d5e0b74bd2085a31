package kernels

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// TFLM's reference kernel data (see tflmtail.go) for the custom operator
// TFLM_DECODE (micro_mutable_op_resolver.h AddDecode), which decompresses
// constant tensors. Files are relative to tensorflow/lite/micro/kernels at
// tflmCommit. The operator takes pairs of inputs — encoded data and an
// ancillary tensor whose first 16 bytes are the Decode Common Metadata
// (DCM, decode_state.h) — and has one output per pair. decode.cc
// Register_DECODE has no Init (and, a custom operator, no parser data);
// its Prepare takes, in order:
//
//   - a persistent array of num_outputs DecodeState pointers;
//   - for each pair i: temporary TfLiteTensors of input 2i, input 2i+1
//     and output i (freed only at the end of the operator's Prepare:
//     DeallocateTempTfLiteTensor releases nothing, ResetTempAllocations
//     does), then the DecodeState of the DCM's type
//     (decode_state.cc CreateDecodeState{LUT,Prune,Huffman}: a persistent
//     buffer of its sizeof), then its Setup, which for Prune copies
//     per-channel zero points into a persistent buffer.
//
// SetOutputTensorData asks MicroContext::AllocateDecompressionMemory for
// the output; it returns nullptr unless the application gave the
// interpreter decompression memory (MicroInterpreter::
// SetDecompressionMemory, micro_context.cc), which the runners and
// heliac's figure do not: the output is then planned as any tensor.

// DCM layout (decode_state.h DecodeState, decode_state_lut.h,
// decode_state_prune.h, decode_state_huffman.h).
const (
	// dcmBytes is DecodeState::kDcmSizeInBytes: the metadata before the
	// type's tables.
	dcmBytes = 16
	// dcmType and dcmVersion are kDcmDecodeTypeOffset and
	// kDcmVersionOffset; dcmTypeVersion is each type's kDcmVersionOffset
	// (4 for LUT, Prune and Huffman).
	dcmType, dcmVersion, dcmTypeVersion = 0, 1, 4
	// dcmHuffmanTableSize is DecodeStateHuffman::kDcmTableSizeOffset;
	// bit 0 (kDcmTableSize32BitsMask) selects 32-bit table elements.
	dcmHuffmanTableSize = 5
)

// The decode types (decode_state.h kDcmTypeLUT, kDcmTypeHuffman,
// kDcmTypePrune, kDcmTypeCustom).
const (
	dcmLUT     = 0
	dcmHuffman = 1
	dcmPrune   = 2
	dcmCustom  = 127
)

// decodeStateBytes are sizeof(DecodeStateLut), sizeof(DecodeStatePrune)
// and sizeof(DecodeStateHuffman) (decode_state_lut.h, decode_state_prune.h,
// decode_state_huffman.h: a vtable pointer, DecodeState's context_ and
// micro_profiler_, then each type's members), {host64, cortex-m};
// tflmtail_decode_test.go compiles them.
var decodeStateBytes = map[byte]pair{
	dcmLUT:     {72, 36},
	dcmPrune:   {80, 40},
	dcmHuffman: {56, 28},
}

// decodeOutputTypes are the output types each type's Decode writes
// (decode_state_lut.cc DecodeStateLut::Decode, decode_state_prune.cc
// DecodeStatePrune::Decode, decode_state_huffman.cc
// DecodeStateHuffman::Decode); any other fails the first Invoke.
var decodeOutputTypes = map[byte][]graph.ElementType{
	dcmLUT:     {graph.Bool, graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64},
	dcmPrune:   {graph.Bool, graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64},
	dcmHuffman: {graph.Int8, graph.Int16},
}

// tflmDecode is kernels.TFLM for TFLM_DECODE. Where decode.cc Prepare, a
// DecodeState's Setup or Decode fails, the kernel's Refused says why.
func tflmDecode(m *graph.Model, sg *graph.Subgraph, op *graph.Op, ptr int64) TFLMKernel {
	var k TFLMKernel
	persist := func(bytes int64) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}})
	}
	temp := func(id graph.TensorID) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: id})
	}
	nIn, nOut := len(op.Inputs), len(op.Outputs)
	// decode.cc Prepare: TF_LITE_ENSURE(num_outputs > 0),
	// TF_LITE_ENSURE_EQ(num_inputs, num_outputs * 2).
	if nOut == 0 || nIn != 2*nOut {
		k.Refused = fmt.Sprintf("its Prepare needs two inputs per output and at least one output (%d inputs, %d outputs)", nIn, nOut)
		return k
	}
	persist(int64(nOut) * ptr) // decode.cc Prepare: num_outputs * sizeof(DecodeState*)
	for i := 0; i < nIn; i += 2 {
		in, anc, out := operand(sg, op.Inputs, i), operand(sg, op.Inputs, i+1), operand(sg, op.Outputs, i/2)
		// AllocateTemp{Input,Output}Tensor returns nullptr for an
		// omitted operand: "failed to allocate ... tensor".
		switch {
		case in == nil:
			k.Refused = fmt.Sprintf("its Prepare fails on input %d: omitted", i)
			return k
		case anc == nil:
			k.Refused = fmt.Sprintf("its Prepare fails on input %d: omitted", i+1)
			return k
		case out == nil:
			k.Refused = fmt.Sprintf("its Prepare fails on output %d: omitted", i/2)
			return k
		}
		temp(op.Inputs[i])
		temp(op.Inputs[i+1])
		temp(op.Outputs[i/2])
		// TF_LITE_ENSURE(IsConstantTensor(input)), and of the ancillary.
		data := constantData(m, in)
		dcm := constantData(m, anc)
		if data == nil || dcm == nil {
			k.Refused = fmt.Sprintf("its Prepare refuses inputs %d and %d unless both are constant", i, i+1)
			return k
		}
		if len(dcm) < dcmBytes {
			// Every type's Setup reads the 16-byte DCM; TFLM would read
			// past the tensor's data.
			k.Refused = fmt.Sprintf("its Prepare reads a %d-byte DCM from input %d, which holds %d bytes", dcmBytes, i+1, len(dcm))
			return k
		}
		if v := dcm[dcmVersion]; v != 1 {
			k.Refused = fmt.Sprintf("its Prepare refuses DCM version %d of input %d (version %d != 1)", v, i+1, v)
			return k
		}
		ty := dcm[dcmType]
		size, ok := decodeStateBytes[ty]
		if !ok {
			if ty == dcmCustom {
				k.Refused = fmt.Sprintf("its Prepare refuses the custom decode type of input %d (Custom decode type not yet supported)", i+1)
			} else {
				k.Refused = fmt.Sprintf("its Prepare refuses decode type %d of input %d (unsupported decode type)", ty, i+1)
			}
			return k
		}
		persist(size.on(ptr)) // decode_state.cc CreateDecodeState{LUT,Prune,Huffman}
		zp, why := decodeSetup(ty, dcm, out)
		if why != "" {
			k.Refused = fmt.Sprintf("its Prepare refuses output %d: %s", i/2, why)
			return k
		}
		if zp > 0 {
			persist(zp)
		}
		if !decodeWrites(ty, out.Type) {
			k.Refused = fmt.Sprintf("its Eval refuses output %d of type %s", i/2, out.Type)
			return k
		}
	}
	return k
}

// decodeSetup is what a DecodeState's Setup checks and allocates for
// output out from the DCM dcm: the bytes of the persistent buffer it
// takes (0 for none), or why it fails.
func decodeSetup(ty byte, dcm []byte, out *graph.Tensor) (int64, string) {
	// Each Setup: "unsupported version" unless the type's version is 1.
	if v := dcm[dcmTypeVersion]; v != 1 {
		return 0, fmt.Sprintf("its DCM's type version is %d, not 1", v)
	}
	// TFLM's temporary tensor has affine quantization when the tensor
	// has scales and zero points (micro_allocator.cc
	// InitializeTfLiteTensorFromFlatbuffer); it has one zero point per
	// scale.
	q := out.Quantization
	quantized := q != nil && len(q.Scale) > 0 && len(q.ZeroPoint) > 0
	switch ty {
	case dcmLUT, dcmPrune:
		// decode_state_lut.cc DecodeStateLut::Setup and
		// decode_state_prune.cc DecodeStatePrune::Setup: the channel
		// axis is the first, or the last with more than one channel.
		if !quantized {
			return 0, ""
		}
		channels := int64(len(q.Scale))
		if !(int(q.QuantizedDim) == len(out.Shape)-1 && channels > 1) && q.QuantizedDim != 0 {
			return 0, fmt.Sprintf("unsupported quantization axis %d", q.QuantizedDim)
		}
		if ty == dcmLUT {
			return 0, ""
		}
		// DecodeStatePrune::Setup: non-zero zero points only on INT8,
		// then copied (one int8 per channel) when there are several
		// channels.
		nonZero := false
		for c := range channels {
			zp := q.ZeroPoint[0]
			if len(q.ZeroPoint) == len(q.Scale) {
				zp = q.ZeroPoint[c]
			}
			nonZero = nonZero || int32(zp) != 0
		}
		if nonZero && out.Type != graph.Int8 {
			return 0, "All zero-points must be zero"
		}
		if nonZero && channels > 1 {
			return channels, ""
		}
		return 0, ""
	case dcmHuffman:
		// decode_state_huffman.cc DecodeStateHuffman::Setup: 16-bit
		// tables decode INT8 only.
		if dcm[dcmHuffmanTableSize]&1 == 0 && out.Type != graph.Int8 {
			return 0, fmt.Sprintf("a 16-bit Huffman table decodes INT8 only, not %s", out.Type)
		}
	}
	return 0, ""
}

// decodeWrites reports whether type ty's Decode writes an output of type
// t.
func decodeWrites(ty byte, t graph.ElementType) bool {
	for _, ok := range decodeOutputTypes[ty] {
		if ok == t {
			return true
		}
	}
	return false
}

// constantData is t's constant data, nil when t is not constant (TFLM's
// kTfLiteMmapRo: a buffer with data, micro_allocator.cc
// InitializeTfLiteTensorFromFlatbuffer).
func constantData(m *graph.Model, t *graph.Tensor) []byte {
	if t == nil || t.Buffer <= 0 || int(t.Buffer) >= len(m.Buffers) || len(m.Buffers[t.Buffer].Data) == 0 {
		return nil
	}
	return m.Buffers[t.Buffer].Data
}
