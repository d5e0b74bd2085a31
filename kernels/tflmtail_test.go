package kernels

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
)

// tflmCTypes names the C++ type each table entry is the size of, for the
// entries whose type a header of ../shared/tflm/include declares (the
// rest are declared inside kernel .cc files, which ../shared does not
// hold; their sizes were read by compiling those files at tflmCommit).
var (
	tflmParamTypes = map[string]string{
		"ADD": "TfLiteAddParams", "AVERAGE_POOL_2D": "TfLitePoolParams", "MAX_POOL_2D": "TfLitePoolParams",
		"BATCH_MATMUL": "TfLiteBatchMatMulParams", "CALL_ONCE": "TfLiteCallOnceParams", "CAST": "TfLiteCastParams",
		"CONCATENATION": "TfLiteConcatenationParams", "CONV_2D": "TfLiteConvParams", "DEPTHWISE_CONV_2D": "TfLiteDepthwiseConvParams",
		"DIV": "TfLiteDivParams", "FULLY_CONNECTED": "TfLiteFullyConnectedParams", "GATHER": "TfLiteGatherParams",
		"MEAN": "TfLiteReducerParams", "SUM": "TfLiteReducerParams", "MUL": "TfLiteMulParams", "PACK": "TfLitePackParams",
		"RESHAPE": "TfLiteReshapeParams", "SHAPE": "TfLiteShapeParams", "SOFTMAX": "TfLiteSoftmaxParams",
		"SPLIT": "TfLiteSplitParams", "SPLIT_V": "TfLiteSplitVParams", "STRIDED_SLICE": "TfLiteStridedSliceParams",
		"SUB": "TfLiteSubParams", "SVDF": "TfLiteSVDFParams", "TRANSPOSE_CONV": "TfLiteTransposeConvParams",
		"UNIDIRECTIONAL_SEQUENCE_LSTM": "TfLiteUnidirectionalSequenceLSTMParams", "UNPACK": "TfLiteUnpackParams",
		"VAR_HANDLE": "TfLiteVarHandleParams", "WHILE": "TfLiteWhileParams",
		"IF": "TfLiteIfParams", "LEAKY_RELU": "TfLiteLeakyReluParams", "SQUEEZE": "TfLiteSqueezeParams",
	}
	tflmOpDataTypes = map[string]string{
		"ADD": "OpDataAdd", "AVERAGE_POOL_2D": "OpDataPooling", "MAX_POOL_2D": "OpDataPooling",
		"CONV_2D": "OpDataConv", "DEPTHWISE_CONV_2D": "OpDataConv", "DEQUANTIZE": "DequantizeOpData",
		"QUANTIZE": "OpDataQuantizeReference", "FULLY_CONNECTED": "OpDataFullyConnected", "LOGISTIC": "OpDataLogistic",
		"MEAN": "OpDataReduce", "SUM": "OpDataReduce", "MUL": "OpDataMul", "PAD": "OpData", "PADV2": "OpData",
		"SOFTMAX": "SoftmaxParams", "STRIDED_SLICE": "StridedSliceParams", "SUB": "OpDataSub", "SVDF": "OpDataSvdf",
		"UNIDIRECTIONAL_SEQUENCE_LSTM": "OpDataLSTM",
		"HARD_SWISH":                   "HardSwishParams", "LEAKY_RELU": "LeakyReluOpData", "RELU": "ReluOpData", "RELU6": "Relu6OpData",
	}
	tflmKernelHeaders = []string{
		"tensorflow/lite/c/builtin_op_data.h", "tensorflow/lite/kernels/internal/types.h",
		"tensorflow/lite/micro/kernels/conv.h", "tensorflow/lite/micro/kernels/fully_connected.h",
		"tensorflow/lite/micro/kernels/add.h", "tensorflow/lite/micro/kernels/pooling.h",
		"tensorflow/lite/micro/kernels/mul.h", "tensorflow/lite/micro/kernels/quantize.h",
		"tensorflow/lite/micro/kernels/logistic.h", "tensorflow/lite/micro/kernels/svdf.h",
		"tensorflow/lite/micro/kernels/lstm_shared.h", "tensorflow/lite/micro/kernels/dequantize.h",
		"tensorflow/lite/micro/kernels/activations.h", "tensorflow/lite/micro/kernels/leaky_relu.h",
		"tensorflow/lite/micro/kernels/sub.h", "tensorflow/lite/micro/kernels/reduce.h",
		"tensorflow/lite/micro/kernels/pad.h",
	}
)

// tflmCompilers are the compilers of ../shared/tflm's two libraries, with
// their flags (../shared/tflm/README.md), by pointer size.
var tflmCompilers = map[int64][]string{
	8: {"g++", "-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY"},
	4: {"arm-none-eabi-g++", "-mcpu=cortex-m55", "-mfpu=auto", "-mthumb", "-mfloat-abi=hard", "-std=c++17",
		"-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY"},
}

// compileAsserts compiles src (only its syntax and static_asserts) with
// the compiler for ptr-byte pointers against ../shared/tflm/include, or
// skips the test when the compiler or ../shared is missing.
func compileAsserts(t *testing.T, ptr int64, src string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the struct size checks (compiles TFLM's headers)")
	}
	dir := corpus.SharedDir()
	if dir == "" {
		t.Skip("../shared not found; skipping the struct size checks")
	}
	include := filepath.Join(dir, "tflm", "include")
	if _, err := os.Stat(include); err != nil {
		t.Skip("../shared/tflm/include not found; skipping the struct size checks")
	}
	cc := tflmCompilers[ptr]
	if _, err := exec.LookPath(cc[0]); err != nil {
		t.Skipf("%s not found; skipping the struct size checks", cc[0])
	}
	if out, err := exec.Command(cc[0], "-x", "c++", "-E", "-include", "cstddef", "/dev/null").CombinedOutput(); err != nil {
		t.Skipf("%s has no C++ library headers: %s", cc[0], out)
	}
	file := filepath.Join(t.TempDir(), "sizes.cc")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	args := append(append([]string{}, cc[1:]...), "-fsyntax-only", "-I", include, file)
	out, err := exec.Command(cc[0], args...).CombinedOutput()
	assert.NoError(t, err, "%s", out)
}

// TestTFLMSizesMatchHeaders compiles a static_assert for every builtin
// parameter struct and every header-declared kernel OpData the tables
// give, with g++ (host64) and arm-none-eabi-g++ (cortex-m).
func TestTFLMSizesMatchHeaders(t *testing.T) {
	for _, ptr := range []int64{8, 4} {
		t.Run(fmt.Sprint(ptr), func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for _, h := range append(tflmKernelHeaders, "tensorflow/lite/micro/kernels/batch_matmul.h") {
				fmt.Fprintf(&b, "#include %q\n", h)
			}
			b.WriteString("using namespace tflite;\n")
			fmt.Fprintf(&b, "static_assert(sizeof(QuantizationOpDataBatchMatmul) == %d, \"batchMatmulQuant\");\n", batchMatmulQuant)
			names := make([]string, 0, len(tflmParams))
			for n := range tflmParams {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				ty, ok := tflmParamTypes[n]
				require.True(t, ok, "%s: no C type named for its parameters", n)
				p := tflmParams[n]
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d && alignof(%s) == %d, %q);\n", ty, p[0].on(ptr), ty, p[1].on(ptr), n)
			}
			names = names[:0]
			for n := range tflmOpDataTypes {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				d, ok := tflmOpData[n]
				require.True(t, ok, "%s: no OpData size", n)
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d, %q);\n", tflmOpDataTypes[n], d.on(ptr), n)
			}
			compileAsserts(t, ptr, b.String())
		})
	}
}

// TestTFLMKernelSteps checks the Prepare steps of a convolution by hand:
// output, input, filter, two int32 arrays of the output channels, then
// input, filter, bias, output; and that custom operators are unknown.
func TestTFLMKernelSteps(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{
			{Name: "in", Type: graph.Int8, Shape: []int32{1, 8, 8, 3}},
			{Name: "w", Type: graph.Int8, Shape: []int32{16, 3, 3, 3}},
			{Name: "b", Type: graph.Int32, Shape: []int32{16}},
			{Name: "out", Type: graph.Int8, Shape: []int32{1, 8, 8, 16}},
		},
		Ops: []graph.Op{
			{Code: opConv, CodeName: "CONV_2D", Inputs: []graph.TensorID{0, 1, 2}, Outputs: []graph.TensorID{3}},
			{Code: graph.Custom, CustomName: "X", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{3}},
		},
	}}}
	k, ok := TFLM(m, 0, &m.Subgraphs[0].Ops[0], 4)
	require.True(t, ok)
	temp := func(id graph.TensorID) TFLMStep { return TFLMStep{Kind: TFLMTempTensor, Tensor: id} }
	persist := func(c TFLMContent) TFLMStep {
		return TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{Bytes: 64, Align: 16}, Content: c}
	}
	assert.Equal(t, []TFLMStep{temp(3), temp(0), temp(1), persist(TFLMMultipliers), persist(TFLMShifts), temp(0), temp(1), temp(2), temp(3)}, k.Prepare)
	// With FLOAT32 data the kernel allocates the arrays but never fills
	// them (conv_common.cc CalculateOpDataConv skips FLOAT32).
	for i := range m.Subgraphs[0].Tensors {
		m.Subgraphs[0].Tensors[i].Type = graph.Float32
	}
	kf, ok := TFLM(m, 0, &m.Subgraphs[0].Ops[0], 4)
	require.True(t, ok)
	assert.Equal(t, []TFLMStep{temp(3), temp(0), temp(1), persist(TFLMUnknown), persist(TFLMUnknown), temp(0), temp(1), temp(2), temp(3)}, kf.Prepare)
	assert.Equal(t, []TFLMAlloc{{28, 4}}, k.Params)
	assert.Equal(t, []TFLMAlloc{{56, 16}}, k.Init)
	k8, _ := TFLM(m, 0, &m.Subgraphs[0].Ops[0], 8)
	assert.Equal(t, []TFLMAlloc{{72, 16}}, k8.Init)
	_, ok = TFLM(m, 0, &m.Subgraphs[0].Ops[1], 4)
	assert.False(t, ok)
}
