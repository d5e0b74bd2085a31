package emit_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// tfliteC plans the bundled hello_world_int8 and returns its C module and
// the model's bytes as TFLiteC writes them.
func tfliteC(t *testing.T) (module, model emit.Files, data []byte) {
	t.Helper()
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	// Both headers carry the TFLM arena macros, one figure missing.
	meta := emit.Meta{ModelName: "hello_world_int8", Subgraphs: 1, Version: "test", TFLMTargets: []emit.TFLMTarget{
		{Target: "cortex-m", PointerSize: 4, Bytes: 1312}, {Target: "host64", PointerSize: 8, Reason: `a "quoted" reason\ ??( */`}}}
	module, err = emit.C(m, p, emit.COptions{Meta: meta})
	require.NoError(t, err)
	return module, emit.TFLiteC("hello_world_int8", m, p, meta, data), data
}

func TestTFLiteC(t *testing.T) {
	module, files, data := tfliteC(t)
	require.Len(t, files, 2)
	h, c := string(files[0].Data), string(files[1].Data)
	assert.Equal(t, "hello_world_int8.tflite.h", files[0].Name)
	assert.Equal(t, "hello_world_int8.tflite.c", files[1].Name)
	assert.NotContains(t, h, "#include \""+module[0].Name+"\"", "the model's header needs nothing of the C module")
	assert.Contains(t, h, "#define HELLO_WORLD_INT8_TFLITE_SIZE "+strconv.Itoa(len(data))+"u\n")
	assert.Contains(t, h, "#define HELLO_WORLD_INT8_TFLITE_ALIGNMENT 16u\n")
	assert.Contains(t, h, "extern const unsigned char hello_world_int8_tflite[HELLO_WORLD_INT8_TFLITE_SIZE];")
	assert.Contains(t, c, "HELLO_WORLD_INT8_ALIGNAS(HELLO_WORLD_INT8_TFLITE_ALIGNMENT) const unsigned char hello_world_int8_tflite[HELLO_WORLD_INT8_TFLITE_SIZE]")

	// The initializer holds the model's bytes, in order.
	body := c[strings.Index(c, "= {\n")+4 : strings.LastIndex(c, "};")]
	var got []byte
	for _, hex := range regexp.MustCompile(`0x([0-9a-f]{2}),`).FindAllStringSubmatch(body, -1) {
		b, err := strconv.ParseUint(hex[1], 16, 8)
		require.NoError(t, err)
		got = append(got, byte(b))
	}
	assert.Equal(t, data, got)

	// Both files carry the module's plan hash, as heliac's C files do.
	hash := regexp.MustCompile(`#define HELLO_WORLD_INT8_PLAN_HASH "([0-9a-f]+)"`).FindStringSubmatch(string(module[0].Data))
	require.NotNil(t, hash)
	for _, f := range files {
		assert.Contains(t, string(f.Data), "; plan hash "+hash[1]+". */\n", f.Name)
	}
}

// TestTFLiteCHeader: <prefix>.tflite.h's TFLM macros for each case of
// figures (both targets, one forced, none), resource variables, operators
// TFLM registers by method and custom ones it does not; and no usage
// comment names a macro the header leaves undefined.
func TestTFLiteCHeader(t *testing.T) {
	_, _, data := tfliteC(t)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	both := []emit.TFLMTarget{{Target: "cortex-m", PointerSize: 4, Bytes: 1312}, {Target: "host64", PointerSize: 8, Bytes: 1712}}
	forced := []emit.TFLMTarget{{Target: "cortex-m", PointerSize: 4, Reason: "heliac ran with --tflm-target host64"}, {Target: "host64", PointerSize: 8, Bytes: 1712}}
	none := []emit.TFLMTarget{{Target: "cortex-m", PointerSize: 4, Reason: `operator 0:1 CUSTOM:"MyOp": no kernel data`}, {Target: "host64", PointerSize: 8, Reason: "operator 0:1 CUSTOM:MyOp: no kernel data"}}
	ops := &graph.Model{Subgraphs: []graph.Subgraph{{Ops: []graph.Op{
		{Code: graph.VarHandle, CodeName: "VAR_HANDLE"}, {Code: graph.Custom, CustomName: "MyOp"}, {CodeName: "CONV_2D"},
		{CodeName: "CONV_2D"}, {Code: graph.Custom, CustomName: "SignalFramer"}, {Code: graph.VarHandle, CodeName: "VAR_HANDLE"},
		{CodeName: "NOT_A_TFLM_OP"},
	}}}}
	const arena32 = "#if UINTPTR_MAX == 0xFFFFFFFFu\n/* 32-bit pointers: cortex-m. */\n#define HW_TFLM_ARENA_SIZE 1312u\n#elif UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu\n"
	const arena64 = "#elif UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu\n/* 64-bit pointers: host64. */\n#define HW_TFLM_ARENA_SIZE 1712u\n#else\n"
	const usage = "tensor_arena[HW_TFLM_ARENA_SIZE]"
	for _, tc := range []struct {
		name       string
		targets    []emit.TFLMTarget
		vars       int
		model      *graph.Model
		want, deny []string
	}{
		{"both figures", both, 0, m, []string{arena32, arena64, usage, "#define HW_TFLM_RESOURCE_VARIABLES 0\n",
			"#define HW_TFLM_OP_COUNT 1u\n", "#define HW_TFLM_ADD_OPS(resolver) \\\n  do { \\\n    (resolver).AddFullyConnected(); \\\n  } while (0)\n"},
			[]string{"no TFLM arena size for host64", "no TFLM arena size for cortex-m", "#include \"hw.h\""}},
		{"forced host64", forced, 0, m, []string{arena64, usage,
			"#if UINTPTR_MAX == 0xFFFFFFFFu\n/* heliac gives no TFLM arena size for cortex-m (32-bit pointers): heliac ran with --tflm-target host64. Define HW_TFLM_REQUIRE_ARENA_SIZE to stop the build here. */\n" +
				"#if defined(HW_TFLM_REQUIRE_ARENA_SIZE)\n#error \"hw.tflite.h: no TFLM arena size for cortex-m (32-bit pointers): heliac ran with --tflm-target host64\"\n#endif\n"},
			[]string{"1312u"}},
		{"resource variables, custom and unknown operators", both, 2, ops, []string{"#define HW_TFLM_RESOURCE_VARIABLES 2\n",
			"#define HW_TFLM_OP_COUNT 4u\n", "(resolver).AddConv2D(); \\\n    (resolver).AddFramer(); \\\n    (resolver).AddVarHandle(); \\\n",
			"register each with resolver.AddCustom(name, registration): MyOp. */", "TFLM has no kernel for NOT_A_TFLM_OP: stock TFLM cannot run this model. */"},
			[]string{"AddConv2D(); \\\n    (resolver).AddConv2D()", "AddMyOp"}},
		{"no figure", none, 0, m, []string{"#error \"hw.tflite.h: no TFLM arena size for cortex-m (32-bit pointers): operator 0:1 CUSTOM:'MyOp': no kernel data\"",
			"MicroAllocator::Create(arena, size)"},
			[]string{usage, "#define HW_TFLM_ARENA_SIZE"}},
		{"no targets", nil, 0, m, []string{"heliac gives no TFLM arena size for this model. */", "#define HW_TFLM_OP_COUNT 1u\n"},
			[]string{"HW_TFLM_ARENA_SIZE", "HW_TFLM_RESOURCE_VARIABLES "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := emit.Meta{ModelName: "hw", Subgraphs: 1, Version: "test", TFLMTargets: tc.targets, TFLMResourceVariables: tc.vars}
			files := emit.TFLiteC("hw", tc.model, p, meta, data)
			h := string(files[0].Data)
			for _, w := range tc.want {
				assert.Contains(t, h, w)
			}
			for _, d := range tc.deny {
				assert.NotContains(t, h, d)
			}
			// Every HW_ macro a comment names is defined, or is the one
			// the application defines to require the size.
			defined := map[string]bool{"HW_TFLM_REQUIRE_ARENA_SIZE": true}
			for _, d := range regexp.MustCompile(`(?m)^#define (HW_\w+)`).FindAllStringSubmatch(h, -1) {
				defined[d[1]] = true
			}
			for _, c := range regexp.MustCompile(`(?s)/\*.*?\*/`).FindAllString(h, -1) {
				for _, name := range regexp.MustCompile(`HW_\w+`).FindAllString(c, -1) {
					assert.True(t, defined[name], "a comment names %s, which the header does not define:\n%s", name, c)
				}
			}
		})
	}
}

// TestTFLiteCCompiles compiles the model array with the C module under
// every C compiler configuration on PATH (Cortex-M55 and Cortex-M4 with
// arm-none-eabi-gcc, gcc and clang at C99 and C11; warnings as errors) and
// includes its header from C++.
func TestTFLiteCCompiles(t *testing.T) {
	module, files, _ := tfliteC(t)
	checkCompiles(t, append(emit.Files{files[0]}, append(module, files[1])...), false)
}
