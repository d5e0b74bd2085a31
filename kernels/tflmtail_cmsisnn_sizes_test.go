package kernels

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmsisLayouts are the CMSIS-NN kernels' Init structs as
// tensorflow/lite/micro/kernels/cmsis_nn/*.cc declare them at tflmCommit
// (KERNELS_OPTIMIZED_FOR_SPEED), spelled with the header types they hold,
// so that CI, which has ../shared/tflm's headers but not the cmsis_nn
// sources, can compile their sizes. UNIDIRECTIONAL_SEQUENCE_LSTM's holds
// CMSIS-NN's cmsis_nn_lstm_params, which no header here declares: its
// size was compiled from the sources only (tflmtail_cmsisnn.go).
var cmsisLayouts = map[string]string{
	"ADD": "struct { bool requires_broadcast; int input1_shift, input2_shift; int32_t output_activation_min, output_activation_max;" +
		" int32_t input1_multiplier, input2_multiplier, output_multiplier; int output_shift, left_shift;" +
		" int32_t input1_offset, input2_offset, output_offset; float output_activation_min_f32, output_activation_max_f32; }", // add.cc OpData
	"AVERAGE_POOL_2D": "struct { OpDataPooling reference_op_data; int buffer_idx; }", // pooling.cc OpData
	"MAX_POOL_2D":     "struct { OpDataPooling reference_op_data; int buffer_idx; }",
	"BATCH_MATMUL": "struct { OpDataBatchMatmul reference_op_data; struct { int32_t n, h, w, c; } output_shape;" +
		" int buffer_idx; }", // batch_matmul.cc OpData; the inner struct is cmsis_nn_dims (Include/arm_nn_types.h)
	"CONV_2D":           "struct { OpDataConv reference_op_data; int buffer_idx; }", // conv.cc OpData
	"DEPTHWISE_CONV_2D": "struct { OpDataConv reference_op_data; int buffer_idx; }", // depthwise_conv.cc OpData
	"FULLY_CONNECTED": "struct { OpDataFullyConnected reference_op_data; int buffer_conv_1x1_idx; int buffer_idx;" +
		" int32_t* kernel_sums; int32_t batches, accum_depth, output_depth; }", // fully_connected.cc OpData
	"SOFTMAX": "struct { SoftmaxParams softmax_params; int32_t num_rows, row_size; }", // softmax.cc CMSISNNSoftmaxParams
	"SVDF": "struct { int32_t effective_scale_1_a, effective_scale_2_a; int effective_scale_1_b, effective_scale_2_b;" +
		" int scratch_tensor_index, scratch_output_tensor_index; int input_zero_point, output_zero_point," +
		" activation_state_zero_point; int32_t* kernel_sums; }", // svdf.cc CmsisNnOpDataSvdf
	"TRANSPOSE_CONV": "struct { ConvParams params; int scratch_buffer_index, scratch_buffer_output_index," +
		" bias_converted_buffer_index; int32_t* per_channel_output_multiplier; int32_t* per_channel_output_shift; }", // transpose_conv.cc OpData
}

// TestCMSISNNOpDataMatchesLayouts compiles, with g++ (host64) and
// arm-none-eabi-g++ (cortex-m), a static_assert that each CMSIS-NN
// kernel's Init size in the data is the size of its struct's layout.
func TestCMSISNNOpDataMatchesLayouts(t *testing.T) {
	for _, ptr := range []int64{8, 4} {
		t.Run(fmt.Sprint(ptr), func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for _, h := range append(tflmKernelHeaders, "tensorflow/lite/micro/kernels/batch_matmul.h") {
				fmt.Fprintf(&b, "#include %q\n", h)
			}
			b.WriteString("#include <cstdint>\nusing namespace tflite;\n")
			names := make([]string, 0, len(cmsisLayouts))
			for n := range cmsisLayouts {
				names = append(names, n)
			}
			sort.Strings(names)
			for i, n := range names {
				d, ok := cmsisOpData[n]
				require.True(t, ok, "%s: no OpData size", n)
				fmt.Fprintf(&b, "typedef %s layout%d;\nstatic_assert(sizeof(layout%d) == %d, %q);\n", cmsisLayouts[n], i, i, d.on(ptr), n)
			}
			compileAsserts(t, ptr, b.String())
		})
	}
}
