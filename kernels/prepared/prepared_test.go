package prepared_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/kernels/prepared"
)

// TestQuantizeMultiplier checks QuantizeMultiplier on values worked out
// by hand from its definition: m = q × 2^shift with q in [0.5, 1), the
// multiplier round(q × 2^31).
func TestQuantizeMultiplier(t *testing.T) {
	tests := []struct {
		name        string
		m           float64
		mult, shift int32
	}{
		{"zero", 0, 0, 0},
		{"a half", 0.5, 1 << 30, 0},
		{"one", 1, 1 << 30, 1},
		{"three quarters", 0.75, 3 << 29, 0},
		{"three eighths", 0.375, 3 << 29, -1},
		{"negative", -0.75, -(3 << 29), 0},
		// q = 1 - 2^-33 rounds to 2^31: halved, the exponent one larger.
		{"rounds up to 2^31", 1 - math.Ldexp(1, -33), 1 << 30, 1},
		// 2^-32 = 0.5 × 2^-31: the exponent -31 is kept.
		{"smallest kept", math.Ldexp(1, -32), 1 << 30, -31},
		// 2^-33 = 0.5 × 2^-32: below -31, flushed to zero.
		{"flushed", math.Ldexp(1, -33), 0, 0},
		// 0.1 = 0.8 × 2^-3; 0.8 × 2^31 = 1717986918.4 rounds down.
		{"a tenth", 0.1, 1717986918, -3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mult, shift := prepared.QuantizeMultiplier(tt.m)
			assert.Equal(t, tt.mult, mult, "multiplier")
			assert.Equal(t, tt.shift, shift, "shift")
		})
	}
}

// quant is a tensor's quantization with the given scales and zero point.
func quant(zp int64, scales ...float32) *graph.Quantization {
	return &graph.Quantization{Scale: scales, ZeroPoint: []int64{zp}}
}

func int32s(xs ...int32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// model is a one-operator model over tensors in, filter, bias, out
// (buffers 1 and 2 hold the filter and the bias).
func model(code string, filter graph.Tensor, filterData []byte, bias []int32, inScale, outScale float32, inZP int64) (*graph.Model, *graph.Op) {
	m := &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: filterData}, {Data: int32s(bias...)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				{Name: "in", Type: graph.Int8, Shape: []int32{1, 3}, Quantization: quant(inZP, inScale)},
				filter,
				{Name: "bias", Type: graph.Int32, Shape: []int32{int32(len(bias))}, Buffer: 2},
				{Name: "out", Type: graph.Int8, Shape: []int32{1, int32(len(bias))}, Quantization: quant(0, outScale)},
			},
			Ops: []graph.Op{{CodeName: code, Inputs: []graph.TensorID{0, 1, 2}, Outputs: []graph.TensorID{3}}},
		}},
	}
	return m, &m.Subgraphs[0].Ops[0]
}

func TestPerChannel(t *testing.T) {
	tests := []struct {
		name        string
		code        string
		shape       []int32
		scales      []float32
		mult, shift []int32
	}{
		// 0.5 × 0.25 / 0.125 = 1 = 0.5 × 2^1, for each of 2 channels.
		{"conv, one scale broadcast", "CONV_2D", []int32{2, 1, 1, 3}, []float32{0.25}, []int32{1 << 30, 1 << 30}, []int32{1, 1}},
		// 0.5 × {0.25, 0.1875} / 0.125 = {1, 0.75}.
		{"conv, a scale per channel", "CONV_2D", []int32{2, 1, 1, 3}, []float32{0.25, 0.1875}, []int32{1 << 30, 3 << 29}, []int32{1, 0}},
		// Depthwise counts channels in dimension 3.
		{"depthwise", "DEPTHWISE_CONV_2D", []int32{1, 1, 1, 3}, []float32{0.0625}, []int32{1 << 30, 1 << 30, 1 << 30}, []int32{-1, -1, -1}},
		// Fully connected: a channel per scale.
		{"fully connected", "FULLY_CONNECTED", []int32{2, 3}, []float32{0.125, 0.25}, []int32{1 << 30, 1 << 30}, []int32{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := graph.Tensor{Name: "w", Type: graph.Int8, Shape: tt.shape, Buffer: 1, Quantization: &graph.Quantization{Scale: tt.scales}}
			m, op := model(tt.code, f, make([]byte, 64), []int32{0, 0}, 0.5, 0.125, 0)
			mult, err := prepared.Values(m, 0, op, kernels.TFLMMultipliers, 0)
			require.NoError(t, err)
			shift, err := prepared.Values(m, 0, op, kernels.TFLMShifts, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.mult, mult)
			assert.Equal(t, tt.shift, shift)
		})
	}
}

func TestKernelSums(t *testing.T) {
	// Rows {1, 2, 3} and {-4, 5, -128}: sums 6 and -127.
	w := []byte{1, 2, 3, 0xfc, 5, 0x80}
	f := graph.Tensor{Name: "w", Type: graph.Int8, Shape: []int32{2, 3}, Buffer: 1, Quantization: quant(0, 1)}
	tests := []struct {
		name string
		inZP int64
		want []int32
	}{
		// lhs_offset 3: bias + 3 × sum.
		{"input zero point -3", -3, []int32{10 + 18, -20 - 381}},
		// lhs_offset 0: the bias alone.
		{"input zero point 0", 0, []int32{10, -20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := model("FULLY_CONNECTED", f, w, []int32{10, -20}, 1, 1, tt.inZP)
			got, err := prepared.Values(m, 0, op, kernels.TFLMKernelSums, 0)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestKernelSumsSVDF: SVDF's sums are over weights_feature (input 1), with
// the activation state's (input 4) offset per element and no bias.
func TestKernelSumsSVDF(t *testing.T) {
	m := &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: []byte{1, 2, 3, 0xfc, 5, 0x80}}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				{Name: "in", Type: graph.Int8, Shape: []int32{1, 3}, Quantization: quant(-3, 1)},
				{Name: "weights_feature", Type: graph.Int8, Shape: []int32{2, 3}, Buffer: 1, Quantization: quant(0, 1)},
				{Name: "weights_time", Type: graph.Int8, Shape: []int32{2, 4}},
				{Name: "state", Type: graph.Int8, Shape: []int32{1, 8}, IsVariable: true, Quantization: quant(1, 1)},
				{Name: "out", Type: graph.Int8, Shape: []int32{1, 2}, Quantization: quant(0, 1)},
			},
			Ops: []graph.Op{{CodeName: "SVDF", Inputs: []graph.TensorID{0, 1, 2, -1, 3}, Outputs: []graph.TensorID{4}}},
		}},
	}
	got, err := prepared.Values(m, 0, &m.Subgraphs[0].Ops[0], kernels.TFLMKernelSums, 0)
	require.NoError(t, err)
	// lhs_offset 3, rhs_offset -1: 3 × (6 − 3) and 3 × (−127 − 3).
	assert.Equal(t, []int32{9, -390}, got)
}

func TestValuesRefuses(t *testing.T) {
	f := graph.Tensor{Name: "w", Type: graph.Int8, Shape: []int32{2, 3}, Buffer: 1, Quantization: quant(0, 1)}
	m, op := model("FULLY_CONNECTED", f, []byte{1, 2, 3, 4, 5, 6}, []int32{0, 0}, 1, 0, 0)
	_, err := prepared.Values(m, 0, op, kernels.TFLMMultipliers, 0)
	assert.ErrorContains(t, err, "effective scale", "an output scale of 0 gives no multiplier")
	_, err = prepared.Values(m, 0, op, kernels.TFLMUnknown, 0)
	assert.ErrorContains(t, err, "not computed from constants")
	m.Subgraphs[0].Tensors[1].Buffer = 0 // the filter is not constant
	_, err = prepared.Values(m, 0, op, kernels.TFLMKernelSums, 0)
	assert.ErrorContains(t, err, "not constants")
}

// TestKernelSumsLSTM: CMSIS-NN's INT8 LSTM keeps eight sums, in the order
// it allocates them: the four input-to-gate weights' rows from the gate's
// bias times −the input's zero point, then the four recurrent weights'
// rows, no bias, times −the output state's zero point.
func TestKernelSumsLSTM(t *testing.T) {
	// Input weights rows {1, 2, 3} and {-4, 5, -128}: sums 6 and -127;
	// recurrent rows {1, -1} and {127, 2}: sums 0 and 129.
	m := &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: []byte{1, 2, 3, 0xfc, 5, 0x80}}, {Data: []byte{1, 0xff, 127, 2}},
			{Data: int32s(10, -20)}, {Data: int32s(1, 1)}, {Data: int32s(0, 0)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				{Name: "in", Type: graph.Int8, Shape: []int32{1, 1, 3}, Quantization: quant(-3, 1)},
				{Name: "w_in", Type: graph.Int8, Shape: []int32{2, 3}, Buffer: 1, Quantization: quant(0, 1)},
				{Name: "w_rec", Type: graph.Int8, Shape: []int32{2, 2}, Buffer: 2, Quantization: quant(0, 1)},
				{Name: "b_input", Type: graph.Int32, Shape: []int32{2}, Buffer: 3},
				{Name: "b_forget", Type: graph.Int32, Shape: []int32{2}, Buffer: 4},
				{Name: "b_cell", Type: graph.Int32, Shape: []int32{2}, Buffer: 5},
				{Name: "output_state", Type: graph.Int8, Shape: []int32{1, 2}, IsVariable: true, Quantization: quant(5, 1)},
				{Name: "cell_state", Type: graph.Int16, Shape: []int32{1, 2}, IsVariable: true, Quantization: quant(0, 1)},
				{Name: "out", Type: graph.Int8, Shape: []int32{1, 1, 2}, Quantization: quant(0, 1)},
			},
			Ops: []graph.Op{{CodeName: "UNIDIRECTIONAL_SEQUENCE_LSTM",
				// 0 input; 1-4 input weights; 5-8 recurrent weights; 9-11
				// peepholes; 12-15 gate biases (the output gate's absent);
				// 16-17 projection; 18 output state; 19 cell state.
				Inputs:  []graph.TensorID{0, 1, 1, 1, 1, 2, 2, 2, 2, -1, -1, -1, 3, 4, 5, -1, -1, -1, 6, 7, -1, -1, -1, -1},
				Outputs: []graph.TensorID{8}}},
		}},
	}
	op := &m.Subgraphs[0].Ops[0]
	want := [][]int32{
		{10 + 18, -20 - 381}, {1 + 18, 1 - 381}, {18, -381}, {18, -381}, // 3 × {6, -127} on the biases
		{0, -645}, {0, -645}, {0, -645}, {0, -645}, // -5 × {0, 129}
	}
	for nth, w := range want {
		got, err := prepared.Values(m, 0, op, kernels.TFLMKernelSums, nth)
		require.NoError(t, err, "sums %d", nth)
		assert.Equal(t, w, got, "sums %d", nth)
	}
	_, err := prepared.Values(m, 0, op, kernels.TFLMKernelSums, 8)
	assert.ErrorContains(t, err, "8 buffers")
	m.Subgraphs[0].Tensors[0].Type = graph.Int16 // the int64 sums: not computed
	_, err = prepared.Values(m, 0, op, kernels.TFLMKernelSums, 0)
	assert.ErrorContains(t, err, "not the int8 kernel's")
}
