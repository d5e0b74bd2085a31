package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenModule reads driver's golden output for a bundled model: the C
// module exactly as heliac emits it.
func goldenModule(t testing.TB, model string) (plan, header, source []byte) {
	t.Helper()
	dir := filepath.Join("..", "driver", "testdata", "golden", model)
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return data
	}
	return read("plan.json"), read(model + ".h"), read(model + ".c")
}

func TestCClean(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("..", "driver", "testdata", "golden"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		t.Run(d.Name(), func(t *testing.T) {
			got := C(goldenModule(t, d.Name()))
			assert.Nil(t, got, "%v", got)
		})
	}
}

// TestCMismatch changes one thing of call_once_mul's plan.json or C module
// and expects one CMismatch naming it.
func TestCMismatch(t *testing.T) {
	const P = "CALL_ONCE_MUL"
	tests := []struct {
		name          string
		file          string // "plan", "h" or "c"
		old, new      string
		want          string // a part of the one message expected
		extraMessages int
	}{
		{"plan hash macro", "h", `PLAN_HASH "a1c5`, `PLAN_HASH "b1c5`,
			`call_once_mul.h:20: CALL_ONCE_MUL_PLAN_HASH is "b1c5`, 0},
		{"plan hash of the source", "c", "; plan hash a1c5", "; plan hash b1c5",
			"call_once_mul.c:2: made for plan hash b1c5", 0},
		{"alignment", "h", P + "_ALIGNMENT 16u", P + "_ALIGNMENT 8u",
			"CALL_ONCE_MUL_ALIGNMENT is 8u, but plan.json's alignment is 16u", 0},
		{"arena size", "h", P + "_SCRATCH_SRAM_SIZE 48u", P + "_SCRATCH_SRAM_SIZE 32u",
			"CALL_ONCE_MUL_SCRATCH_SRAM_SIZE is 32u, but arenas[2].size is 48u", 0},
		{"arena numbering", "h", P + "_ARENA_SCRATCH_SRAM = 2,", P + "_ARENA_SCRATCH_SRAM = 1,",
			"CALL_ONCE_MUL_ARENA_SCRATCH_SRAM is 1, but arenas[2] is arena 2", 0},
		{"arena alignment", "c", "_Alignas(16) uint8_t call_once_mul_scratch_sram", "_Alignas(8) uint8_t call_once_mul_scratch_sram",
			"call_once_mul_scratch_sram is aligned to 8, but arenas[2].alignment is 16", 0},
		{"constant arena writable", "c", "_Alignas(16) const uint8_t call_once_mul_constant_flash", "_Alignas(16) uint8_t call_once_mul_constant_flash",
			"call_once_mul_constant_flash is const=false, but arenas[0] is a constant arena (const=true)", 0},
		{"tensor row", "c", "{0u, 0u, " + P + "_ARENA_SCRATCH_SRAM, 32u, 4u}", "{0u, 0u, " + P + "_ARENA_SCRATCH_SRAM, 16u, 4u}",
			"call_once_mul_tensors[0] is {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, 16u, 4u}, but tensor_allocs[0] gives {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, 32u, 4u}", 0},
		{"tensor row left out", "c", "\t{1u, 0u, " + P + "_ARENA_CONSTANT_FLASH, 0u, 4u}, /* [3] std.constant */\n", "",
			"table call_once_mul_tensors has 3 row(s), but tensor_allocs has 4 entries", 0},
		{"plan edited", "plan", `"offset": 32,`, `"offset": 48,`,
			"but tensor_allocs[0] gives {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, 48u, 4u}", 1},
		{"variable offset", "h", P + "_VARIABLE_0_OFFSET 0u", P + "_VARIABLE_0_OFFSET 4u",
			"CALL_ONCE_MUL_VARIABLE_0_OFFSET is 4u, but resource_variables[0]'s offset is 0u", 0},
		{"variable in another arena", "h", "(&call_once_mul_persistent_sram[CALL_ONCE_MUL_VARIABLE_0_OFFSET])", "(&call_once_mul_scratch_sram[CALL_ONCE_MUL_VARIABLE_0_OFFSET])",
			"CALL_ONCE_MUL_VARIABLE_0_DATA is (&call_once_mul_scratch_sram", 0},
		{"input index", "h", P + "_INPUT_0_INDEX 0u", P + "_INPUT_0_INDEX 1u",
			"CALL_ONCE_MUL_INPUT_0_OFFSET is 32u, but tensor_allocs[1]'s offset is 16u", 0},
		{"input index out of the table", "h", P + "_INPUT_0_INDEX 0u", P + "_INPUT_0_INDEX 4000000000u",
			"CALL_ONCE_MUL_INPUT_0_INDEX is 4000000000u, not a row of the 4-row tensor table", 0},
		{"a macro of nothing", "h", "#define " + P + "_KERNEL_SCRATCH_COUNT 0u\n", "#define " + P + "_KERNEL_SCRATCH_COUNT 0u\n#define " + P + "_VARIABLE_1_SIZE 4u\n",
			"CALL_ONCE_MUL_VARIABLE_1_SIZE describes nothing of the plan", 0},
		{"a macro given twice", "h", "#define " + P + "_ALIGNMENT 16u\n", "#define " + P + "_ALIGNMENT 16u\n#define " + P + "_ALIGNMENT 8u\n",
			"CALL_ONCE_MUL_ALIGNMENT is given twice", 0},
		{"accessor of another arena", "h", "\tcase CALL_ONCE_MUL_ARENA_SCRATCH_SRAM:\n\t\treturn &call_once_mul_scratch_sram[t->offset];\n\tdefault:\n\t\treturn NULL;\n\t}\n}\n\n#ifdef",
			"\tcase CALL_ONCE_MUL_ARENA_SCRATCH_SRAM:\n\t\treturn &call_once_mul_persistent_sram[t->offset];\n\tdefault:\n\t\treturn NULL;\n\t}\n}\n\n#ifdef",
			"case CALL_ONCE_MUL_ARENA_SCRATCH_SRAM returns bytes of call_once_mul_persistent_sram, not of call_once_mul_scratch_sram (arenas[2])", 0},
		{"no plan hash macro", "h", "#define " + P + "_PLAN_HASH", "#define " + P + "_PLAN_HAS",
			"header: want one #define <PREFIX>_PLAN_HASH, found 0 ()", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			files["plan"], files["h"], files["c"] = goldenModule(t, "call_once_mul")
			text := string(files[tt.file])
			require.Contains(t, text, tt.old)
			files[tt.file] = []byte(strings.Replace(text, tt.old, tt.new, 1))
			got := C(files["plan"], files["h"], files["c"])
			require.Len(t, got, 1+tt.extraMessages, "%v", got)
			assert.Equal(t, CMismatch, got[0].Kind)
			found := false
			for _, v := range got {
				found = found || strings.Contains(v.Msg, tt.want)
			}
			assert.True(t, found, "want a message containing %q, got %v", tt.want, got)
		})
	}
}

// FuzzC checks that C reads any header and source without panicking.
func FuzzC(f *testing.F) {
	plan, h, c := goldenModule(f, "call_once_mul")
	f.Add(h, c)
	f.Add([]byte("#define X_PLAN_HASH \"\"\ntypedef enum {\n} x_arena_t;\n#define X_INPUT_COUNT 99999999999u"), []byte("const t x_tensors[N] = {\n{1,\n"))
	f.Fuzz(func(t *testing.T, h, c []byte) {
		for _, v := range C(plan, h, c) {
			if v.Kind != CMismatch {
				t.Fatalf("%v", v)
			}
		}
	})
}
