package emit_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

func helloRuntime(t *testing.T) (*graph.Model, emit.Files) {
	t.Helper()
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	return m, pipelineC(t, m, plan.Options{}, emit.COptions{Prefix: "hello_world_int8", Runtime: emit.RuntimeTFLM})
}

// With the runtime the set gains <prefix>.tflm.cc, the header the
// runtime's API and status codes after the others, and init ends in the
// runtime's start; without it the module is as before.
func TestTFLMRuntimeModule(t *testing.T) {
	_, files := helloRuntime(t)
	require.Len(t, files, 3)
	assert.Equal(t, []string{"hello_world_int8.h", "hello_world_int8.c", "hello_world_int8.tflm.cc"},
		[]string{files[0].Name, files[1].Name, files[2].Name})
	h, c := string(files[0].Data), string(files[1].Data)
	for i, s := range []string{"OK", "ERR_UNKNOWN_ARENA", "ERR_INTERNAL_ARENA", "ERR_NULL", "ERR_TOO_SMALL", "ERR_MISALIGNED",
		"ERR_UNBOUND", "ERR_KERNEL", "ERR_KERNEL_STATE", "ERR_SCRATCH", "ERR_NOT_INITIALIZED"} {
		assert.Regexp(t, `(?m)^\tHELLO_WORLD_INT8_`+s+` = `+strconv.Itoa(i)+`[, ]`, h)
	}
	assert.Contains(t, h, "hello_world_int8_status_t hello_world_int8_invoke(void);")
	assert.Contains(t, h, "const char *hello_world_int8_status_message(void);")
	init := c[strings.Index(c, "hello_world_int8_status_t hello_world_int8_init(void)"):]
	init = init[:strings.Index(init, "\n}\n")]
	assert.True(t, strings.HasSuffix(init, "\treturn hello_world_int8_runtime_start();"), init)

	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	plain := pipelineC(t, m, plan.Options{}, emit.COptions{Prefix: "hello_world_int8"})
	require.Len(t, plain, 2)
	assert.NotContains(t, string(plain[0].Data), "ERR_KERNEL")
	assert.NotContains(t, string(plain[0].Data), "_invoke")
}

// The runtime's tables: quantization exactly as the model gives it, the
// kernels' persistent budget per pointer size, operators in the plan's
// order.
func TestTFLMRuntimeTables(t *testing.T) {
	m, files := helloRuntime(t)
	cc := string(files[2].Data)

	// Every scale is the model's float32, bit for bit.
	re := regexp.MustCompile(`const FloatArray<1> scales_0_(\d+) = \{1, \{(\S+)f\}\};`)
	found := 0
	for _, sm := range re.FindAllStringSubmatch(cc, -1) {
		id, _ := strconv.Atoi(sm[1])
		v, err := strconv.ParseFloat(sm[2], 32)
		require.NoError(t, err, sm[2])
		assert.Equal(t, math.Float32bits(m.Subgraphs[0].Tensors[id].Quantization.Scale[0]), math.Float32bits(float32(v)), "tensor %d", id)
		found++
	}
	assert.Equal(t, len(m.Subgraphs[0].Tensors), found, "every tensor of hello_world_int8 is quantized")

	// Three FULLY_CONNECTED kernels keep an OpDataFullyConnected each
	// (sizeof 48 with 4-byte pointers, 64 with 8-byte ones; fully_connected.h
	// @90b983c) and nothing in Prepare for per-tensor quantization.
	assert.Contains(t, cc, "#if UINTPTR_MAX == 0xffffffffu\nconstexpr size_t kKernelStateBytes = 144;\n#else\nconstexpr size_t kKernelStateBytes = 192;\n#endif")

	// The operators run in the plan's order, whatever it is.
	p := buildPlan(t, m)
	slices.Reverse(p.Schedule.Order[0])
	files, err := emit.C(m, p, emit.COptions{Prefix: "hello_world_int8", Runtime: emit.RuntimeTFLM})
	require.NoError(t, err)
	assert.Contains(t, string(files[2].Data), "const int order_0[3] = {2, 1, 0};")
	assert.Contains(t, cc, "const int order_0[3] = {0, 1, 2};")
}

// An operator the runtime has no kernel for, and an unknown runtime, are
// errors naming them.
func TestTFLMRuntimeErrors(t *testing.T) {
	m := denseModel()
	_, err := emit.C(m, buildPlan(t, m), emit.COptions{Prefix: "hello_world_int8", Runtime: emit.RuntimeTFLM})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "operator 0:2 CUSTOM:MIX")
	_, err = emit.C(m, buildPlan(t, m), emit.COptions{Runtime: "tvm"})
	assert.ErrorContains(t, err, `unknown runtime "tvm"`)
}

// viewModel is RELU, then a view (op; EXPAND_DIMS with its axis, a
// constant), then RELU, on tensors of type typ; with onInput the view
// reads the model's input directly.
func viewModel(op string, typ graph.ElementType, onInput bool) *graph.Model {
	codes := map[string]graph.Opcode{"RESHAPE": 22, "SQUEEZE": 43, "EXPAND_DIMS": 70}
	shapes := map[string][]int32{"RESHAPE": {4}, "SQUEEZE": {4}, "EXPAND_DIMS": {1, 1, 4}}
	view := graph.Op{Code: codes[op], CodeName: op, Inputs: []graph.TensorID{1}, Outputs: []graph.TensorID{2}}
	if op == "EXPAND_DIMS" {
		view.Inputs = append(view.Inputs, 4)
	}
	ops := []graph.Op{
		{Code: 19, CodeName: "RELU", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
		view,
		{Code: 19, CodeName: "RELU", Inputs: []graph.TensorID{2}, Outputs: []graph.TensorID{3}},
	}
	if onInput {
		ops[0].Outputs[0] = 5
		ops[1].Inputs[0] = 0
	}
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: []byte{0, 0, 0, 0}}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("input", typ, []int32{1, 4}, 0),
				tensor("a", typ, []int32{1, 4}, 0),
				tensor("view", typ, shapes[op], 0),
				tensor("output", typ, []int32{1, 4}, 0),
				tensor("axis", graph.Int32, []int32{1}, 1),
				tensor("unread", typ, []int32{1, 4}, 0),
			},
			Ops:     ops,
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{3, 5},
		}},
	}
}

// A view whose output the plan lays on its input's bytes is left out of
// the invoke order when TFLM's Eval would do nothing there (tflm_views.go);
// its init and prepare still run (kOps keeps it). It runs when it has
// bytes of its own, and for a type its Eval refuses.
func TestTFLMRuntimeSkipsViews(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		typ     graph.ElementType
		onInput bool // the view reads the model's input, which liveness never aliases
		noAlias bool // liveness.Options.NoAlias
		order   string
		skipped string // the comment's list; "" for none
	}{
		{"reshape on its input", "RESHAPE", graph.Int8, false, false, "{0, 2}", "1 RESHAPE"},
		{"squeeze on its input", "SQUEEZE", graph.Float32, false, false, "{0, 2}", "1 SQUEEZE"},
		{"expand_dims on its input", "EXPAND_DIMS", graph.Int16, false, false, "{0, 2}", "1 EXPAND_DIMS"},
		{"expand_dims of int32: Eval fails", "EXPAND_DIMS", graph.Int32, false, false, "{0, 1, 2}", ""},
		{"reshape with bytes of its own", "RESHAPE", graph.Int8, false, true, "{0, 1, 2}", ""},
		{"reshape of the model's input", "RESHAPE", graph.Int8, true, false, "{0, 1, 2}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := viewModel(tt.op, tt.typ, tt.onInput)
			lt, err := liveness.Analyze(m, liveness.Options{NoAlias: tt.noAlias})
			require.NoError(t, err)
			p, err := plan.Build(context.Background(), m, lt, plan.Options{})
			require.NoError(t, err)
			files, err := emit.C(m, p, emit.COptions{Prefix: "v", Runtime: emit.RuntimeTFLM})
			require.NoError(t, err)
			cc := string(files[2].Data)
			n := strings.Count(tt.order, ",") + 1
			assert.Contains(t, cc, fmt.Sprintf("const int order_0[%d] = %s;", n, tt.order))
			assert.Regexp(t, fmt.Sprintf(`\{tensors_0, evals_0, inputs_0, outputs_0, order_0, 6, 1, 2, 3, %d, 0\}`, n), cc)
			if tt.skipped == "" {
				assert.NotContains(t, cc, "left out of order_0")
			} else {
				assert.Contains(t, cc, "left out of order_0: "+tt.skipped+".")
			}
			assert.Contains(t, cc, fmt.Sprintf("{\"%s\", ", tt.op), "kOps keeps the view")
		})
	}
}

// Each VAR_HANDLE row names its variable's kVariables row (the runtime
// maps TFLM's resource ids to the plan's variables through them; names
// cannot tell variables apart, TFLM's having neither container nor name
// at times), every other operator -1.
func TestTFLMRuntimeHandleRows(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "call_once_mul.tflite"))
	files := pipelineC(t, m, plan.Options{}, emit.COptions{Prefix: "com", Runtime: emit.RuntimeTFLM})
	cc := string(files[2].Data)
	assert.Contains(t, cc, "const VariableInfo kVariables[1] = {\n    {\"variable \\042Variable\\042\", 4},\n};")
	rows := regexp.MustCompile(`(?m)^    \{"([A-Z_]+)", .*, (-?\d+), \d+, \d+, (true|false), (true|false)\},$`).FindAllStringSubmatch(cc, -1)
	require.Len(t, rows, 7, "the operators of both subgraphs")
	handles := 0
	for _, r := range rows {
		if r[1] == "VAR_HANDLE" {
			handles++
			assert.Equal(t, []string{"0", "true"}, r[2:4], "%s", r[0])
		} else {
			assert.Equal(t, []string{"-1", "false"}, r[2:4], "%s", r[0])
		}
		assert.Equal(t, strconv.FormatBool(r[1] == "ASSIGN_VARIABLE"), r[4], "%s", r[0])
	}
	assert.Equal(t, 2, handles)
}
