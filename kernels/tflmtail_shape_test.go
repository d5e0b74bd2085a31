package kernels

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/flexbuf"
)

// tflmShapeParamTypes names the C type of each tflmShapeParams entry.
var tflmShapeParamTypes = map[string]string{
	"DEPTH_TO_SPACE": "TfLiteDepthToSpaceParams", "SPACE_TO_DEPTH": "TfLiteSpaceToDepthParams",
	"L2_POOL_2D": "TfLitePoolParams", "MIRROR_PAD": "TfLiteMirrorPaddingParams",
	"RESIZE_BILINEAR": "TfLiteResizeBilinearParams", "RESIZE_NEAREST_NEIGHBOR": "TfLiteResizeNearestNeighborParams",
}

// TestTFLMShapeSizesMatchHeaders compiles a static_assert for every
// header-declared struct of tflmtail_shape.go with g++ (host64) and
// arm-none-eabi-g++ (cortex-m). The structs declared in kernel .cc files
// (embedding_lookup.cc OpData, detection_postprocess.cc OpData,
// mirror_pad.cc OpDataMirrorPad, the signal kernels' parameters) are not
// in ../shared/tflm/include; their sizes were checked by compiling each
// kernel file at tflmCommit with a static_assert appended, with both
// compilers.
func TestTFLMShapeSizesMatchHeaders(t *testing.T) {
	for _, ptr := range []int64{8, 4} {
		t.Run(fmt.Sprint(ptr), func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for _, h := range []string{"tensorflow/lite/c/builtin_op_data.h", "tensorflow/lite/kernels/internal/types.h",
				"tensorflow/lite/micro/kernels/circular_buffer.h", "signal/src/circular_buffer.h"} {
				fmt.Fprintf(&b, "#include %q\n", h)
			}
			names := make([]string, 0, len(tflmShapeParams))
			for n := range tflmShapeParams {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				ty, ok := tflmShapeParamTypes[n]
				require.True(t, ok, "%s: no C type named for its parameters", n)
				p := tflmShapeParams[n]
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d && alignof(%s) == %d, %q);\n", ty, p[0].on(ptr), ty, p[1].on(ptr), n)
			}
			for ty, size := range map[string]pair{
				"tflite::SpaceToBatchParams":          tflmShapeOpData["SPACE_TO_BATCH_ND"],
				"tflite::OpDataCircularBuffer":        circularBufferOpData,
				"tflite::tflm_signal::CircularBuffer": signalCircularBuffer,
			} {
				fmt.Fprintf(&b, "static_assert(sizeof(%s) == %d, %q);\n", ty, size.on(ptr), ty)
			}
			compileAsserts(t, ptr, b.String())
		})
	}
}

// TestTFLMShapeKernels checks kernels.TFLM by hand on a few operators:
// the steps, sizes from shapes and custom options, and refusals.
func TestTFLMShapeKernels(t *testing.T) {
	opts := func(es ...flexbuf.Entry) []byte {
		b, err := flexbuf.EncodeMap(es)
		require.NoError(t, err)
		return b
	}
	tensors := []graph.Tensor{
		{Type: graph.Float32, Shape: []int32{1, 4, 4, 8}},       // 0
		{Type: graph.Float32, Shape: []int32{1, 8, 8, 2}},       // 1
		{Type: graph.Int32, Shape: []int32{2}, Buffer: 1},       // 2 constant size
		{Type: graph.Int32, Shape: []int32{2}},                  // 3 size input
		{Type: graph.Int16, Shape: []int32{3, 40}},              // 4
		{Type: graph.Int16, Shape: []int32{3, 40}},              // 5
		{Type: graph.Int16, Shape: []int32{2, 4, 16}},           // 6
		{Type: graph.Int16, Shape: []int32{2, 32}},              // 7
		{Type: graph.Int8, Shape: []int32{1, 4, 4, 8}},          // 8
		{Type: graph.Float32, Shape: []int32{1, 10, 4}},         // 9 boxes
		{Type: graph.Float32, Shape: []int32{1, 10, 3}},         // 10 classes
		{Type: graph.Float32, Shape: []int32{10, 4}, Buffer: 1}, // 11 anchors
		{Type: graph.Float32, Shape: []int32{1, 3, 4}},          // 12
		{Type: graph.Int32, Shape: []int32{3}},                  // 13
	}
	m := &graph.Model{Buffers: []graph.Buffer{{}, {Data: make([]byte, 8)}}, Subgraphs: []graph.Subgraph{{Tensors: tensors}}}
	temp := func(id graph.TensorID) TFLMStep { return TFLMStep{Kind: TFLMTempTensor, Tensor: id} }
	persist := func(n int64) TFLMStep {
		return TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{Bytes: n, Align: 16}}
	}
	ids := func(v ...graph.TensorID) []graph.TensorID { return v }
	cases := []struct {
		name    string
		op      graph.Op
		ptr     int64
		params  []TFLMAlloc
		init    []TFLMAlloc
		prepare []TFLMStep
		refused string
	}{
		{name: "depth_to_space", op: graph.Op{Code: 5, CodeName: "DEPTH_TO_SPACE", Inputs: ids(0), Outputs: ids(1)}, ptr: 8,
			params: []TFLMAlloc{{4, 4}}, prepare: []TFLMStep{temp(0), temp(1), persist(20)}},
		{name: "depth_to_space int16", op: graph.Op{Code: 5, CodeName: "DEPTH_TO_SPACE", Inputs: ids(4), Outputs: ids(5)}, ptr: 8,
			refused: "its Prepare refuses an output of type INT16"},
		{name: "resize bilinear", op: graph.Op{Code: 23, CodeName: "RESIZE_BILINEAR", Inputs: ids(0, 2), Outputs: ids(1)}, ptr: 4,
			params: []TFLMAlloc{{2, 1}}, prepare: []TFLMStep{temp(0), temp(2), temp(1)}},
		{name: "resize size not constant", op: graph.Op{Code: 97, CodeName: "RESIZE_NEAREST_NEIGHBOR", Inputs: ids(0, 3), Outputs: ids(1)}, ptr: 4,
			refused: "its Prepare refuses a size that is not constant"},
		{name: "mirror pad", op: graph.Op{Code: 100, CodeName: "MIRROR_PAD", Inputs: ids(8, 13), Outputs: ids(8)}, ptr: 4,
			params: []TFLMAlloc{{1, 1}}, init: []TFLMAlloc{{20, 16}}, prepare: []TFLMStep{temp(8), temp(13), temp(8)}},
		{name: "embedding lookup", op: graph.Op{Code: 7, CodeName: "EMBEDDING_LOOKUP", Inputs: ids(13, 9), Outputs: ids(12)}, ptr: 4,
			prepare: []TFLMStep{temp(13), temp(9), temp(12), persist(16), persist(8)}},
		{name: "delay", op: graph.Op{Code: graph.Custom, CustomName: "SignalDelay", Inputs: ids(4), Outputs: ids(5),
			CustomOptions: opts(flexbuf.Entry{Key: "delay_length", Value: 7})}, ptr: 4,
			init:    []TFLMAlloc{{20, 16}},
			prepare: []TFLMStep{temp(4), temp(5), persist(12), persist(12), persist(24 + 4*47), persist(24 + 4*47), persist(24 + 4*47)}},
		{name: "framer", op: graph.Op{Code: graph.Custom, CustomName: "SignalFramer", Inputs: ids(7), Outputs: ids(6, 3),
			CustomOptions: opts(flexbuf.Entry{Key: "frame_size", Value: 25}, flexbuf.Entry{Key: "frame_step", Value: 8}, flexbuf.Entry{Key: "prefill", Value: false})}, ptr: 8,
			init:    []TFLMAlloc{{40, 16}},
			prepare: []TFLMStep{temp(7), temp(6), temp(3), persist(16), persist(16), persist(40 + 4*32), persist(40 + 4*32)}},
		{name: "framer int32", op: graph.Op{Code: graph.Custom, CustomName: "SignalFramer", Inputs: ids(13), Outputs: ids(6, 3),
			CustomOptions: opts(flexbuf.Entry{Key: "frame_size", Value: 1})}, ptr: 8, refused: "its Prepare refuses an input of type INT32"},
		{name: "stacker", op: graph.Op{Code: graph.Custom, CustomName: "SignalStacker", Inputs: ids(4), Outputs: ids(5, 3),
			CustomOptions: opts(flexbuf.Entry{Key: "num_channels", Value: 10}, flexbuf.Entry{Key: "stacker_left_context", Value: 1},
				flexbuf.Entry{Key: "stacker_right_context", Value: 2}, flexbuf.Entry{Key: "stacker_step", Value: 1})}, ptr: 4,
			init: []TFLMAlloc{{36, 16}, {24 + 4*40, 16}}, prepare: []TFLMStep{temp(4), temp(5), temp(3)}},
		{name: "overlap add", op: graph.Op{Code: graph.Custom, CustomName: "SignalOverlapAdd", Inputs: ids(6), Outputs: ids(7),
			CustomOptions: opts(flexbuf.Entry{Key: "T", Value: int(graph.Int16)}, flexbuf.Entry{Key: "frame_step", Value: 8})}, ptr: 8,
			init: []TFLMAlloc{{32, 16}}, prepare: []TFLMStep{temp(6), temp(7), persist(16), persist(32), persist(32)}},
		{name: "detection", op: graph.Op{Code: graph.Custom, CustomName: "TFLite_Detection_PostProcess", Inputs: ids(9, 10, 11), Outputs: ids(12, 13, 13, 13),
			CustomOptions: opts(flexbuf.Entry{Key: "max_detections", Value: 3}, flexbuf.Entry{Key: "num_classes", Value: 2})}, ptr: 8,
			init: []TFLMAlloc{{112, 16}}, prepare: []TFLMStep{temp(9), temp(10), temp(11)}},
		{name: "detection without options", op: graph.Op{Code: graph.Custom, CustomName: "TFLite_Detection_PostProcess", Inputs: ids(9, 10, 11), Outputs: ids(12, 13, 13, 13)}, ptr: 8,
			refused: "its Init reads custom options, which are not a FlexBuffers map (flexbuf: 0-byte buffer)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m.Subgraphs[0].Ops = []graph.Op{c.op}
			k, ok := TFLM(m, 0, &m.Subgraphs[0].Ops[0], c.ptr)
			require.True(t, ok)
			assert.Equal(t, c.refused, k.Refused)
			if c.refused != "" {
				return
			}
			assert.Equal(t, c.params, k.Params)
			assert.Equal(t, c.init, k.Init)
			assert.Equal(t, c.prepare, k.Prepare)
		})
	}
	// The detection scratch: 10 boxes, 3 classes per box, 3 detections,
	// 2 classes.
	m.Subgraphs[0].Ops = []graph.Op{cases[len(cases)-2].op}
	lib, err := Lookup(TFLMReference)
	require.NoError(t, err)
	req, ok := lib.Scratch(m, 0, &m.Subgraphs[0].Ops[0], Target{PointerSize: 8})
	require.True(t, ok)
	assert.Equal(t, []int64{10, 160, 120, 40, 40, 120, 120, 40, 120, 120, 120}, req)
}
