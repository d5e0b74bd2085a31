// Package prepared computes, from a model's constants alone, the data
// TFLM's kernels compute in their Prepare and keep in persistent buffers
// (kernels.TFLMContent says which buffers), value for value as the
// kernels do at tflite-micro 90b983c with CMSIS-NN 4ab83cc. An
// ahead-of-time build keeps these values with the model's constants, in
// flash, instead of in RAM; heliac's runtime checks them against what
// the kernel computes when it prepares (emit/tflm_runtime.cc.in).
package prepared

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Values returns the int32 values of the nth (from 0) persistent buffer
// of content c that operator op of subgraph s of m fills in its Prepare,
// or an error saying why heliac cannot compute them (an operand missing,
// not constant, or a scale that gives no finite multiplier). Only
// UNIDIRECTIONAL_SEQUENCE_LSTM fills more than one buffer of a content.
func Values(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, c kernels.TFLMContent, nth int) ([]int32, error) {
	if m == nil || op == nil || s < 0 || int(s) >= len(m.Subgraphs) {
		return nil, fmt.Errorf("prepared: no such operator")
	}
	sg := &m.Subgraphs[s]
	switch c {
	case kernels.TFLMMultipliers, kernels.TFLMShifts:
		if nth != 0 {
			return nil, fmt.Errorf("prepared: %s fills one buffer of multipliers and one of shifts, not %d", op.Name(), nth+1)
		}
		mult, shift, err := perChannel(sg, op)
		if err != nil {
			return nil, err
		}
		if c == kernels.TFLMMultipliers {
			return mult, nil
		}
		return shift, nil
	case kernels.TFLMKernelSums:
		if op.Code != graph.Custom && op.CodeName == "UNIDIRECTIONAL_SEQUENCE_LSTM" {
			return lstmKernelSums(m, sg, op, nth)
		}
		if nth != 0 {
			return nil, fmt.Errorf("prepared: %s fills one buffer of kernel sums, not %d", op.Name(), nth+1)
		}
		return kernelSums(m, sg, op)
	}
	return nil, fmt.Errorf("prepared: %s: content %d is not computed from constants", op.Name(), c)
}

// operand returns input i of op, nil when it is absent.
func operand(sg *graph.Subgraph, ids []graph.TensorID, i int) *graph.Tensor {
	if i >= len(ids) || ids[i] < 0 || int(ids[i]) >= len(sg.Tensors) {
		return nil
	}
	return &sg.Tensors[ids[i]]
}

// filterIndex is the filter's input of the operators whose Prepare
// computes per-channel multipliers, and the filter dimension that counts
// their channels (kConvQuantizedDimension 0,
// kDepthwiseConvQuantizedDimension 3, kTransposeConvQuantizedDimension 0;
// FULLY_CONNECTED: one per filter scale, fully_connected_common.cc).
var filterIndex = map[string]struct{ input, input0, dim int }{
	"CONV_2D":           {input: 1, input0: 0, dim: 0},
	"DEPTHWISE_CONV_2D": {input: 1, input0: 0, dim: 3},
	"TRANSPOSE_CONV":    {input: 1, input0: 2, dim: 0},
	"FULLY_CONNECTED":   {input: 1, input0: 0, dim: -1},
}

// perChannel is the per-channel multipliers and shifts of
// PopulateConvolutionQuantizationParams (tensorflow/lite/kernels/
// kernel_util.cc), which the convolutions' CalculateOpData call, and of
// fully_connected_common.cc CalculateOpDataFullyConnected: for each
// channel, QuantizeMultiplier of the double input scale × filter scale /
// output scale, the filter's one scale broadcast over every channel when
// it has one (the fully connected kernel has a channel per scale).
func perChannel(sg *graph.Subgraph, op *graph.Op) (mult, shift []int32, err error) {
	f, ok := filterIndex[op.CodeName]
	if !ok || op.Code == graph.Custom {
		return nil, nil, fmt.Errorf("prepared: %s computes no per-channel multipliers", op.Name())
	}
	in, filter, out := operand(sg, op.Inputs, f.input0), operand(sg, op.Inputs, f.input), operand(sg, op.Outputs, 0)
	if in == nil || filter == nil || out == nil {
		return nil, nil, fmt.Errorf("prepared: %s: an operand is missing", op.Name())
	}
	for _, t := range []*graph.Tensor{in, filter, out} {
		if t.Quantization == nil || len(t.Quantization.Scale) == 0 {
			return nil, nil, fmt.Errorf("prepared: %s: tensor %q is not quantized", op.Name(), t.Name)
		}
	}
	scales := filter.Quantization.Scale
	channels := len(scales)
	if f.dim >= 0 {
		if f.dim >= len(filter.Shape) {
			return nil, nil, fmt.Errorf("prepared: %s: filter %q has rank %d", op.Name(), filter.Name, len(filter.Shape))
		}
		channels = int(filter.Shape[f.dim])
		if len(scales) > 1 && len(scales) != channels {
			return nil, nil, fmt.Errorf("prepared: %s: filter %q has %d scales for %d channels", op.Name(), filter.Name, len(scales), channels)
		}
	}
	inScale, outScale := float64(in.Quantization.Scale[0]), float64(out.Quantization.Scale[0])
	mult, shift = make([]int32, channels), make([]int32, channels)
	for i := range channels {
		s := scales[0]
		if len(scales) > 1 {
			s = scales[i]
		}
		effective := inScale * float64(s) / outScale
		if math.IsNaN(effective) || math.IsInf(effective, 0) {
			return nil, nil, fmt.Errorf("prepared: %s: channel %d: effective scale %v", op.Name(), i, effective)
		}
		mult[i], shift[i] = QuantizeMultiplier(effective)
	}
	return mult, shift, nil
}

// QuantizeMultiplier is tensorflow/lite/kernels/internal/
// quantization_util.cc QuantizeMultiplier as TFLM builds it (neither
// TFLITE_SINGLE_ROUNDING nor TFLITE_EMULATE_FLOAT): the significand of
// m in Q31, rounded half away from zero (TfLiteRound: std::round), and
// its exponent; 2^31 becomes 2^30 with the exponent one larger; an
// exponent below -31 flushes to zero.
func QuantizeMultiplier(m float64) (multiplier, shift int32) {
	if m == 0 {
		return 0, 0
	}
	q, exp := math.Frexp(m)
	fixed := int64(math.Round(q * (1 << 31)))
	if fixed == 1<<31 {
		fixed /= 2
		exp++
	}
	if exp < -31 {
		return 0, 0
	}
	return int32(fixed), int32(exp)
}

// kernelSums is what TFLM's CMSIS-NN kernels keep when they run
// arm_fully_connected_s8 with a constant filter and bias
// (tensorflow/lite/micro/kernels/cmsis_nn/fully_connected.cc Prepare,
// KERNELS_OPTIMIZED_FOR_SPEED: lhs_offset −input zero point, rhs_offset
// −filter zero point, the bias) or arm_svdf_s8 (svdf.cc
// CmsisNnPrepareSvdf: weights_feature, lhs_offset −input zero point,
// rhs_offset −activation state zero point, no bias): arm_vector_sum_s8
// (Source/FullyConnectedFunctions/arm_vector_sum_s8.c) over the weights'
// rows: the bias (or 0), plus, when lhs_offset is not 0, lhs_offset ×
// (the row's sum + its length × rhs_offset), in int32 arithmetic that
// wraps.
func kernelSums(m *graph.Model, sg *graph.Subgraph, op *graph.Op) ([]int32, error) {
	if op.Code == graph.Custom {
		return nil, fmt.Errorf("prepared: %s keeps no kernel sums", op.Name())
	}
	in, weights := operand(sg, op.Inputs, 0), operand(sg, op.Inputs, 1)
	var bias, rhsOf *graph.Tensor
	var rows int
	switch op.CodeName {
	case "FULLY_CONNECTED":
		bias, rhsOf = operand(sg, op.Inputs, 2), weights
		if out := operand(sg, op.Outputs, 0); out != nil && len(out.Shape) > 0 {
			rows = int(out.Shape[len(out.Shape)-1])
		}
	case "SVDF":
		rhsOf = operand(sg, op.Inputs, 4)
		if weights != nil && len(weights.Shape) > 0 {
			rows = int(weights.Shape[0])
		}
	default:
		return nil, fmt.Errorf("prepared: %s keeps no kernel sums", op.Name())
	}
	if in == nil || weights == nil || rhsOf == nil || len(weights.Shape) == 0 {
		return nil, fmt.Errorf("prepared: %s: an operand is missing", op.Name())
	}
	if weights.Type != graph.Int8 || !m.HasData(weights) || (bias != nil && (bias.Type != graph.Int32 || !m.HasData(bias))) {
		return nil, fmt.Errorf("prepared: %s: the weights or bias are not constants of the kernel's type", op.Name())
	}
	cols := int(weights.Shape[len(weights.Shape)-1])
	w := m.Buffers[weights.Buffer].Data
	if cols <= 0 || rows <= 0 || len(w) < rows*cols {
		return nil, fmt.Errorf("prepared: %s: weights %q hold %d bytes, not %d rows of %d", op.Name(), weights.Name, len(w), rows, cols)
	}
	sums, err := startSums(m, op, bias, rows)
	if err != nil {
		return nil, err
	}
	vectorSum(sums, w, cols, -zeroPoint(in), -zeroPoint(rhsOf))
	return sums, nil
}

// vectorSum adds to each of sums what arm_vector_sum_s8 adds to the bias
// it starts from, for the rows of cols int8s in w: when lhs is not 0,
// lhs × (the row's sum + cols × rhs), in int32 arithmetic that wraps.
func vectorSum(sums []int32, w []byte, cols int, lhs, rhs int32) {
	if lhs == 0 {
		return
	}
	for r := range sums {
		var sum int32
		for _, v := range w[r*cols : (r+1)*cols] {
			sum += int32(int8(v))
		}
		if rhs != 0 {
			sum += int32(cols) * rhs
		}
		sums[r] += sum * lhs
	}
}

// lstmSums lists, in the order CMSIS-NN's
// UNIDIRECTIONAL_SEQUENCE_LSTM allocates them
// (kernels/cmsis_nn/unidirectional_sequence_lstm.cc CMSIS_NN_PortOpData),
// the weights (input index) each of its eight kernel sums is over, the
// gate bias it starts from (-1: none), and whether its offset is the
// hidden state's rather than the input's.
var lstmSums = [8]struct {
	weights, bias int
	hidden        bool
}{
	{1, 12, false}, {2, 13, false}, {3, 14, false}, {4, 15, false}, // input to input, forget, cell, output gate
	{5, -1, true}, {6, -1, true}, {7, -1, true}, {8, -1, true}, // recurrent to input, forget, cell, output gate
}

// lstmKernelSums is the nth kernel sum of CMSIS-NN's INT8
// UNIDIRECTIONAL_SEQUENCE_LSTM (CMSIS_NN_PortOpData, the int32 case):
// arm_vector_sum_s8 over the weights' state_dimension rows (the output
// state's, input 18, last dimension) of input_dimension (the input's
// last dimension) or state_dimension columns, from the gate's bias, with
// lhs_offset the gate's input_offset (−the input's zero point,
// lstm_eval_common.cc CreateGateParams) or −output_offset of the hidden
// state multiplication (−the output state's zero point,
// PrepareGateParametersInteger), rhs_offset 0.
func lstmKernelSums(m *graph.Model, sg *graph.Subgraph, op *graph.Op, nth int) ([]int32, error) {
	if nth < 0 || nth >= len(lstmSums) {
		return nil, fmt.Errorf("prepared: %s fills 8 buffers of kernel sums, not %d", op.Name(), nth+1)
	}
	spec := lstmSums[nth]
	in, state, weights := operand(sg, op.Inputs, 0), operand(sg, op.Inputs, 18), operand(sg, op.Inputs, spec.weights)
	if in == nil || state == nil || weights == nil || len(in.Shape) == 0 || len(state.Shape) == 0 {
		return nil, fmt.Errorf("prepared: %s: an operand is missing", op.Name())
	}
	if in.Type != graph.Int8 || weights.Type != graph.Int8 || !m.HasData(weights) {
		return nil, fmt.Errorf("prepared: %s: the input or weights %q are not the int8 kernel's", op.Name(), weights.Name)
	}
	rows, cols, offsetOf := int(state.Shape[len(state.Shape)-1]), int(in.Shape[len(in.Shape)-1]), in
	if spec.hidden {
		cols, offsetOf = rows, state
	}
	w := m.Buffers[weights.Buffer].Data
	if cols <= 0 || rows <= 0 || len(w) < rows*cols {
		return nil, fmt.Errorf("prepared: %s: weights %q hold %d bytes, not %d rows of %d", op.Name(), weights.Name, len(w), rows, cols)
	}
	var bias *graph.Tensor
	if spec.bias >= 0 {
		if bias = operand(sg, op.Inputs, spec.bias); bias != nil && (bias.Type != graph.Int32 || !m.HasData(bias)) {
			return nil, fmt.Errorf("prepared: %s: bias %q is not an int32 constant", op.Name(), bias.Name)
		}
	}
	sums, err := startSums(m, op, bias, rows)
	if err != nil {
		return nil, err
	}
	vectorSum(sums, w, cols, -zeroPoint(offsetOf), 0)
	return sums, nil
}

// startSums is what arm_vector_sum_s8 starts rows sums from: the int32
// constant bias's values, or zeros for no bias (nil).
func startSums(m *graph.Model, op *graph.Op, bias *graph.Tensor, rows int) ([]int32, error) {
	sums := make([]int32, rows)
	if bias == nil {
		return sums, nil
	}
	b := m.Buffers[bias.Buffer].Data
	if len(b) < 4*rows {
		return nil, fmt.Errorf("prepared: %s: bias %q holds %d bytes, not %d int32s", op.Name(), bias.Name, len(b), rows)
	}
	for r := range sums {
		sums[r] = int32(binary.LittleEndian.Uint32(b[4*r:]))
	}
	return sums, nil
}

// zeroPoint is a tensor's params.zero_point in TFLM: its first zero
// point, 0 for none.
func zeroPoint(t *graph.Tensor) int32 {
	if t.Quantization == nil || len(t.Quantization.ZeroPoint) == 0 {
		return 0
	}
	return int32(t.Quantization.ZeroPoint[0])
}
