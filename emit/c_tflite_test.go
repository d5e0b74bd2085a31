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
	meta := emit.Meta{ModelName: "hello_world_int8", Subgraphs: 1, Version: "test"}
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
	assert.Contains(t, h, "#include \""+module[0].Name+"\"", "one header gives the model and the module's macros")
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

// TestTFLiteCCompiles compiles the model array with the C module under
// every C compiler configuration on PATH (Cortex-M55 and Cortex-M4 with
// arm-none-eabi-gcc, gcc and clang at C99 and C11; warnings as errors) and
// includes its header from C++.
func TestTFLiteCCompiles(t *testing.T) {
	module, files, _ := tfliteC(t)
	checkCompiles(t, append(emit.Files{files[0]}, append(module, files[1])...), false)
}
