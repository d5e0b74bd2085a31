package kernels_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
)

func TestTFLMRefusals(t *testing.T) {
	f32, i8, u8, i16, i32 := graph.Float32, graph.Int8, graph.Uint8, graph.Int16, graph.Int32
	const none = graph.ElementType(-1)
	withName := func(m *graph.Model, custom string) *graph.Model {
		m.Subgraphs[0].Ops[0].CustomName = custom
		return m
	}
	svdf := func(units int32) *graph.Model {
		m := hybridModel(27, "SVDF", i8, i8, i16, i32, i16)
		sg := &m.Subgraphs[0]
		sg.Tensors[1].Shape = []int32{6, 4}
		sg.Tensors[5].Shape = []int32{1, units}
		sg.Ops[0].Options = &graph.Options{Table: "SVDFOptions", Fields: []graph.OptionField{{Name: "rank", Int: 1}}}
		return m
	}
	lstm := func(extra ...graph.ElementType) *graph.Model {
		types := []graph.ElementType{f32, none, f32, f32, f32, none, f32, f32, f32, none, none, none, none, f32, f32, f32, none, none, f32, f32}
		return hybridModel(44, "UNIDIRECTIONAL_SEQUENCE_LSTM", append(types, extra...)...)
	}
	for _, tc := range []struct {
		name   string
		model  *graph.Model
		reason string // "" when TFLM runs it
		source string
	}{
		{"int8 conv", hybridModel(3, "CONV_2D", i8, i8, i32), "", ""},
		{"uint8 conv", hybridModel(3, "CONV_2D", u8, u8, i32), `its input "a" is UINT8; TFLM's kernel takes FLOAT32, INT16 or INT8`, "conv_common.cc:159-165"},
		{"uint8 depthwise", hybridModel(4, "DEPTHWISE_CONV_2D", u8, u8, i32), "is UINT8", "depthwise_conv.cc"},
		{"uint8 fully connected", hybridModel(9, "FULLY_CONNECTED", u8, u8), "is UINT8", "fully_connected.cc"},
		{"uint8 concatenation", hybridModel(2, "CONCATENATION", u8, u8), "is UINT8", "concatenation.cc:148-151"},
		{"int32 concatenation", hybridModel(2, "CONCATENATION", i32, i32), "", ""},
		{"uint8 average pool", hybridModel(1, "AVERAGE_POOL_2D", u8), "is UINT8", "pooling_common.cc"},
		{"uint8 max pool", hybridModel(17, "MAX_POOL_2D", u8), "is UINT8", "pooling_common.cc"},
		{"uint8 softmax", hybridModel(25, "SOFTMAX", u8), "is UINT8", "softmax_common.cc"},
		{"uint8 reshape", hybridModel(22, "RESHAPE", u8, i32), "", ""},
		{"uint8 quantize", hybridModel(114, "QUANTIZE", u8), "", ""},
		{"hybrid fully connected", hybridModel(9, "FULLY_CONNECTED", f32, i8, f32), `reads FLOAT32 activation 0:0 "a" (FLOAT32) with weights 0:1 "b" (INT8)`, "fully_connected.cc:59-66"},
		{"int16 by int8 batch matmul", hybridModel(126, "BATCH_MATMUL", i16, i8), `its inputs "a" (INT16) and "b" (INT8) differ in type`, "batch_matmul.cc:191-201"},
		{"int8 batch matmul", hybridModel(126, "BATCH_MATMUL", i8, i8), "", ""},
		{"unregistered builtin", hybridModel(48, "TOPK_V2", f32, i32), `TFLM has no kernel for it ("Didn't find op for builtin opcode 'TOPK_V2'")`, "micro_op_resolver.cc"},
		{"unknown builtin", hybridModel(250, "", f32), "Didn't find op for builtin opcode 'BUILTIN_250'", "micro_op_resolver.cc"},
		{"unknown custom", withName(hybridModel(graph.Custom, "", i8), "edgetpu-custom-op"), `custom operator "edgetpu-custom-op"`, "GetRegistrationFromOpCode"},
		{"ethos-u", withName(hybridModel(graph.Custom, "", i8), "ethos-u"), `only a TFLM build for an Ethos-U NPU runs it`, "ethosu.cc:23"},
		{"detection postprocess without options", withName(hybridModel(graph.Custom, "", f32), "TFLite_Detection_PostProcess"),
			"its Init reads custom options, which are not a FlexBuffers map", ""},
		{"svdf of matching units", svdf(6), "", ""},
		{"svdf of wrong units", svdf(4), `its output "out" has 4 units where its 6 filters of rank 1 give 6`, "svdf_common.cc"},
		{"plain lstm", lstm(), "", ""},
		{"lstm with layer norm", lstm(none, f32), `optional input(s) 21 "v"`, "lstm_eval.cc:89-101"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kernels.TFLMRefusals(tc.model)
			if tc.reason == "" {
				assert.Empty(t, got)
				return
			}
			if assert.Len(t, got, 1) {
				r := got[0]
				assert.Equal(t, graph.OpRef{}, r.Op)
				assert.Equal(t, graph.NoTensor, r.Tensor)
				assert.Equal(t, tc.model.Subgraphs[0].Ops[0].Name(), r.Name)
				assert.Contains(t, r.Reason, tc.reason)
				assert.Contains(t, r.Source, "tflite-micro@90b983c: ")
				assert.Contains(t, r.Source, tc.source)
				assert.Equal(t, "op 0:0 "+r.Name+": "+r.Reason+" ("+r.Source+")", r.String())
			}
		})
	}
}

// TestTFLMRefusesStringTensors: a STRING tensor is refused once, named by
// the first operator that reads it, and the operators are checked too.
func TestTFLMRefusesStringTensors(t *testing.T) {
	m := hybridModel(3, "CONV_2D", graph.Uint8, graph.String)
	got := kernels.TFLMRefusals(m)
	if assert.Len(t, got, 2) {
		assert.Equal(t, graph.TensorID(1), got[0].Tensor)
		assert.Equal(t, "CONV_2D", got[0].Name)
		assert.Equal(t, `tensor 0:1: "b" is of type STRING, which TFLM cannot size: AllocateTensors fails without a message (`+got[0].Source+`)`, got[0].String())
		assert.Contains(t, got[0].Source, "memory_helpers.cc")
		assert.Equal(t, graph.NoTensor, got[1].Tensor)
		assert.Contains(t, got[1].Reason, "is UINT8")
	}
}

// TestTFLMRefusalsMatchTFLM: every corpus model stock TFLM refuses
// (../shared/bench/tflm-reference.tsv, status error) has a refusal, and
// none that it runs has one.
func TestTFLMRefusalsMatchTFLM(t *testing.T) {
	shared := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(shared, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	refused := 0
	for _, row := range rows {
		t.Run(row["model"], func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(shared, "corpus", row["model"]))
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			got := kernels.TFLMRefusals(m)
			if row["status"] == "ok" {
				assert.Empty(t, got, "TFLM runs it")
				return
			}
			refused++
			if assert.NotEmpty(t, got, "TFLM refuses it: %s", row["unsupported_or_error"]) {
				t.Logf("%s: %v (TFLM: %s)", row["model"], got[0], row["unsupported_or_error"])
			}
		})
	}
	assert.GreaterOrEqual(t, refused, 19, "the corpus models TFLM refuses")
}

// TestTFLMOpListsSorted keeps the exported lists usable for a diff.
func TestTFLMOpListsSorted(t *testing.T) {
	for _, l := range [][]string{kernels.TFLMBuiltinOps(), kernels.TFLMCustomOps()} {
		assert.IsNonDecreasing(t, l)
		assert.NotEmpty(t, l)
	}
	assert.Contains(t, kernels.TFLMBuiltinOps(), "CONV_2D")
	assert.NotContains(t, kernels.TFLMBuiltinOps(), "LSTM", "TFLM runs UNIDIRECTIONAL_SEQUENCE_LSTM only")
}
