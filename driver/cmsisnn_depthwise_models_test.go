package driver_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// dwBranch is one DEPTHWISE_CONV_2D of dwModel: activations of type act
// (INT8 or INT16), a filter of type filter (INT8, or INT4 with INT8),
// NHWC input n × h × w × c, a filter of fh × fw, multiplier mult, strides,
// dilations, SAME or VALID.
type dwBranch struct {
	name string
	// fromPrev reads the previous branch's output (of this branch's
	// input shape) rather than a model input of its own.
	fromPrev                           bool
	act, filter                        graph.ElementType
	n, h, w, c, fh, fw, mult           int32
	strideH, strideW, dilateH, dilateW int32
	same                               bool
}

// outHW is the output's height and width as TFLite computes them.
func (b dwBranch) outHW() (int32, int32) {
	size := func(in, f, s, d int32) int32 {
		if b.same {
			return (in + s - 1) / s
		}
		return (in + s - ((f-1)*d + 1)) / s
	}
	return size(b.h, b.fh, b.strideH, b.dilateH), size(b.w, b.fw, b.strideW, b.dilateW)
}

// dwModel is a model of independent branches, each a model input read by
// one DEPTHWISE_CONV_2D (per-channel quantized, with a bias) into a model
// output: placing one branch's input and output never touches another's;
// a branch fromPrev chains on the one before it instead.
func dwModel(t *testing.T, branches []dwBranch) []byte {
	t.Helper()
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(tn graph.Tensor) graph.TensorID {
		size, err := graph.ByteSize(tn.Type, tn.Shape)
		require.NoError(t, err)
		tn.Size = size
		sg.Tensors = append(sg.Tensors, tn)
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	constant := func(tn graph.Tensor, data []byte) graph.TensorID {
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		tn.Buffer = graph.BufferIndex(len(m.Buffers) - 1)
		return add(tn)
	}
	for i, b := range branches {
		oh, ow := b.outHW()
		require.Positive(t, oh, b.name)
		require.Positive(t, ow, b.name)
		oc := b.c * b.mult
		inQ := &graph.Quantization{Scale: []float32{0.05}, ZeroPoint: []int64{-3}}
		outQ := &graph.Quantization{Scale: []float32{0.08}, ZeroPoint: []int64{4}}
		biasType := graph.Int32
		if b.act == graph.Int16 {
			inQ = &graph.Quantization{Scale: []float32{1.0 / 1024}, ZeroPoint: []int64{0}}
			outQ = &graph.Quantization{Scale: []float32{1.0 / 512}, ZeroPoint: []int64{0}}
			biasType = graph.Int64
		}
		fq := &graph.Quantization{QuantizedDim: 3}
		bq := &graph.Quantization{}
		bias := make([]byte, 0, 8*oc)
		for k := range oc {
			s := float32(0.004 + 0.001*float64(k%5))
			if b.filter == graph.Int4 {
				s *= 16
			}
			fq.Scale, fq.ZeroPoint = append(fq.Scale, s), append(fq.ZeroPoint, 0)
			bq.Scale, bq.ZeroPoint = append(bq.Scale, s*inQ.Scale[0]), append(bq.ZeroPoint, 0)
			v := int64(math.Round(200 * math.Sin(float64(7*i+int(k)))))
			if biasType == graph.Int64 {
				bias = binary.LittleEndian.AppendUint64(bias, uint64(v))
			} else {
				bias = binary.LittleEndian.AppendUint32(bias, uint32(int32(v)))
			}
		}
		n := int(b.fh * b.fw * oc)
		var weights []byte
		if b.filter == graph.Int4 {
			weights = make([]byte, (n+1)/2) // two per byte, the first in the low nibble
			for j := range n {
				v := byte(int8(math.Round(7*math.Sin(float64(3*i+j)*1.3)))) & 0xf
				weights[j/2] |= v << (4 * (j % 2))
			}
		} else {
			weights = make([]byte, n)
			for j := range weights {
				weights[j] = byte(int8(math.Round(120 * math.Sin(float64(3*i+j)*1.3))))
			}
		}
		var in graph.TensorID
		if b.fromPrev {
			in = sg.Outputs[len(sg.Outputs)-1]
			require.Equal(t, []int32{b.n, b.h, b.w, b.c}, sg.Tensors[in].Shape, b.name)
			sg.Outputs = sg.Outputs[:len(sg.Outputs)-1]
			sg.Tensors[in].Quantization = inQ
		} else {
			in = add(graph.Tensor{Name: b.name + "/in", Type: b.act, Shape: []int32{b.n, b.h, b.w, b.c}, Quantization: inQ})
			sg.Inputs = append(sg.Inputs, in)
		}
		f := constant(graph.Tensor{Name: b.name + "/filter", Type: b.filter, Shape: []int32{1, b.fh, b.fw, oc}, Quantization: fq}, weights)
		bi := constant(graph.Tensor{Name: b.name + "/bias", Type: biasType, Shape: []int32{oc}, Quantization: bq}, bias)
		out := add(graph.Tensor{Name: b.name + "/out", Type: b.act, Shape: []int32{b.n, oh, ow, oc}, Quantization: outQ})
		w := &graph.Window{Padding: graph.PaddingValid, StrideW: b.strideW, StrideH: b.strideH, DilationW: b.dilateW,
			DilationH: b.dilateH, DepthMultiplier: b.mult}
		if b.same {
			w.Padding = graph.PaddingSame
		}
		sg.Ops = append(sg.Ops, graph.Op{Code: graph.DepthwiseConv2D, Version: 1, Inputs: []graph.TensorID{in, f, bi},
			Outputs: []graph.TensorID{out}, Window: w})
		sg.Outputs = append(sg.Outputs, out)
	}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// dwBranches exercise every function TFLM's cmsis_nn DEPTHWISE_CONV_2D
// reaches on the three code paths (kernels/cmsisnn_depthwise.go,
// dwDispatch): the 3x3 kernel (pad <= 1, channels not a multiple of 4,
// strides 2 and 3), "opt" (multiplier 1, other filters: the generic kernel
// without DSP, a pixel at a time on DSP, four pixels at a time on MVE, in
// blocks of 124 channels beyond 124), the generic kernel (multiplier 2,
// dilation, two batches), mult_4, MVE's convolutions of one input channel
// (im2col, 1x1 with unit and other strides, two batches; 1xN: dwOneByN)
// and INT16.
var dwBranches = []dwBranch{
	{name: "3x3_c6", act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 6, c: 6, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "3x3_s2_c8", act: graph.Int8, filter: graph.Int8, n: 1, h: 7, w: 7, c: 8, fh: 3, fw: 3, mult: 1, strideH: 2, strideW: 2, dilateH: 1, dilateW: 1, same: true},
	{name: "3x3_s3_c4", act: graph.Int8, filter: graph.Int8, n: 1, h: 1, w: 7, c: 4, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 3, dilateH: 1, dilateW: 1, same: true},
	{name: "opt_5x5_c20", act: graph.Int8, filter: graph.Int8, n: 1, h: 6, w: 6, c: 20, fh: 5, fw: 5, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "opt_1x1_s2_c4", act: graph.Int8, filter: graph.Int8, n: 1, h: 3, w: 8, c: 4, fh: 1, fw: 1, mult: 1, strideH: 2, strideW: 2, dilateH: 1, dilateW: 1},
	{name: "opt_1x3_c5", act: graph.Int8, filter: graph.Int8, n: 1, h: 4, w: 9, c: 5, fh: 1, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1},
	{name: "opt_blocks_c130", act: graph.Int8, filter: graph.Int8, n: 1, h: 3, w: 4, c: 130, fh: 2, fw: 2, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "3x3_blocks_c136", act: graph.Int8, filter: graph.Int8, n: 1, h: 4, w: 3, c: 136, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "mult2", act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 5, c: 5, fh: 3, fw: 3, mult: 2, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "mult4", act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 6, c: 3, fh: 3, fw: 3, mult: 4, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "dilation2", act: graph.Int8, filter: graph.Int8, n: 1, h: 7, w: 7, c: 4, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 2, dilateW: 2, same: true},
	{name: "batch2", act: graph.Int8, filter: graph.Int8, n: 2, h: 4, w: 5, c: 4, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "c1_3x3_s2_m8", act: graph.Int8, filter: graph.Int8, n: 1, h: 9, w: 9, c: 1, fh: 3, fw: 3, mult: 8, strideH: 2, strideW: 2, dilateH: 1, dilateW: 1, same: true},
	{name: "c1_1x1_m3", act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 6, c: 1, fh: 1, fw: 1, mult: 3, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1},
	{name: "c1_1x1_s2_m5", act: graph.Int8, filter: graph.Int8, n: 1, h: 6, w: 7, c: 1, fh: 1, fw: 1, mult: 5, strideH: 2, strideW: 2, dilateH: 1, dilateW: 1},
	{name: "c1_batch2_m2", act: graph.Int8, filter: graph.Int8, n: 2, h: 4, w: 4, c: 1, fh: 3, fw: 3, mult: 2, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "int16", act: graph.Int16, filter: graph.Int8, n: 1, h: 4, w: 5, c: 6, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
}

// dwOneByN is MVE's 1xN convolution of one input channel, a model of its
// own: TFLM's Prepare sizes its scratch with a stride it never set
// (cmsis_nn/depthwise_conv.cc 169-173), and CMSIS-NN's 1xN size function
// divides by that stride where the padding it derives from it is not 0
// (arm_convolve_get_buffer_sizes_s8.c 53-82). On tflm_run_m55_cmsis the
// stride apparently reads 0: 1x8 and 1x12 inputs with a 1x3 filter at
// stride 4 VALID stop with SIGFPE in AllocateTensors, this one (SAME,
// padding 0 either way) runs. A runner where the original model does not
// run skips it.
var dwOneByN = []dwBranch{
	{name: "c1_1xn_s4_m4", act: graph.Int8, filter: graph.Int8, n: 1, h: 1, w: 19, c: 1, fh: 1, fw: 3, mult: 4, strideH: 1, strideW: 4, dilateH: 1, dilateW: 1, same: true},
}

// dwInt4Branches are INT8 convolutions with INT4 filters, a model of
// their own: "opt" (a pixel at a time without MVE, four with it, blocks
// beyond 124 channels) and the generic s4 kernel (two outputs of one
// input channel at a time at multiplier 2).
var dwInt4Branches = []dwBranch{
	{name: "int4_opt_c6", act: graph.Int8, filter: graph.Int4, n: 1, h: 5, w: 5, c: 6, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "int4_mult2_c4", act: graph.Int8, filter: graph.Int4, n: 1, h: 4, w: 4, c: 4, fh: 3, fw: 3, mult: 2, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "int4_blocks_c130", act: graph.Int8, filter: graph.Int4, n: 1, h: 2, w: 3, c: 130, fh: 2, fw: 2, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1},
}

// dwChain is a chain of INT8 depthwise convolutions of several functions
// (3x3; "opt" 5x5; 3x3 stride 2; multiplier 2; 1x1), each reading the one
// before, for heliac's planner to write in place.
var dwChain = []dwBranch{
	{name: "chain_3x3", act: graph.Int8, filter: graph.Int8, n: 1, h: 10, w: 10, c: 8, fh: 3, fw: 3, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "chain_5x5", fromPrev: true, act: graph.Int8, filter: graph.Int8, n: 1, h: 10, w: 10, c: 8, fh: 5, fw: 5, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "chain_s2", fromPrev: true, act: graph.Int8, filter: graph.Int8, n: 1, h: 10, w: 10, c: 8, fh: 3, fw: 3, mult: 1, strideH: 2, strideW: 2, dilateH: 1, dilateW: 1, same: true},
	{name: "chain_m2", fromPrev: true, act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 5, c: 8, fh: 3, fw: 3, mult: 2, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1, same: true},
	{name: "chain_1x1", fromPrev: true, act: graph.Int8, filter: graph.Int8, n: 1, h: 5, w: 5, c: 16, fh: 1, fw: 1, mult: 1, strideH: 1, strideW: 1, dilateH: 1, dilateW: 1},
}
