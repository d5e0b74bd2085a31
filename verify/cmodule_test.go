package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// goldenSet is driver's golden output for a bundled model: the model, the
// plan and the C module exactly as heliac emits them.
type goldenSet struct {
	model *graph.Model
	files map[string][]byte // by base name; the plan is "plan.json"
	name  string            // the model's name, the C prefix
}

// readGolden reads driver/testdata/golden/<dir>; a variant's dir is
// <model>+<variant>.
func readGolden(t testing.TB, dir string) goldenSet {
	t.Helper()
	name, _, _ := strings.Cut(dir, "+")
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", name+".tflite"))
	require.NoError(t, err)
	m, err := tflite.Load(data) // test code only: the verifier itself reads no flatbuffer
	require.NoError(t, err)
	g := goldenSet{model: m, files: map[string][]byte{}, name: name}
	entries, err := os.ReadDir(filepath.Join("..", "driver", "testdata", "golden", dir))
	require.NoError(t, err)
	for _, e := range entries {
		g.files[e.Name()], err = os.ReadFile(filepath.Join("..", "driver", "testdata", "golden", dir, e.Name()))
		require.NoError(t, err)
	}
	return g
}

// module is the C module of the set's files.
func (g goldenSet) module() Module {
	mod := Module{Header: g.files[g.name+".h"], Source: g.files[g.name+".c"], Stub: g.files[g.name+".constants.S"]}
	for n, d := range g.files {
		if strings.HasSuffix(n, ".bin") {
			if mod.Blobs == nil {
				mod.Blobs = map[string][]byte{}
			}
			mod.Blobs[n] = d
		}
	}
	return mod
}

func (g goldenSet) check() []Violation { return C(g.model, g.files["plan.json"], g.module()) }

func TestCClean(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("..", "driver", "testdata", "golden"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	variants := 0
	for _, d := range dirs {
		if strings.Contains(d.Name(), "+") {
			variants++
		}
		t.Run(d.Name(), func(t *testing.T) {
			got := readGolden(t, d.Name()).check()
			assert.Nil(t, got, "%v", got)
		})
	}
	assert.NotZero(t, variants, "the goldens include other forms of the module")
}

// TestCMismatch changes one thing of a golden plan.json, C module or
// binary file of constants and expects the violations it names.
func TestCMismatch(t *testing.T) {
	const (
		P   = "CALL_ONCE_MUL"
		ext = "call_once_mul+apollo510-external-incbin"
		emb = "hello_world_int8+staged-embed"
	)
	tests := []struct {
		name          string
		dir           string // "" is call_once_mul
		file          string // a file of the set
		old, new      string
		want          string // a part of the one message expected
		extraMessages int
	}{
		{"plan hash macro", "", "call_once_mul.h", `PLAN_HASH "a1c5`, `PLAN_HASH "b1c5`,
			`call_once_mul.h:23: CALL_ONCE_MUL_PLAN_HASH is "b1c5`, 0},
		{"plan hash of the source", "", "call_once_mul.c", "; plan hash a1c5", "; plan hash b1c5",
			"call_once_mul.c:2: made for plan hash b1c5", 0},
		{"plan hash of the stub", ext, "call_once_mul.constants.S", "; plan hash 9bcc", "; plan hash 0bcc",
			"call_once_mul.constants.S:2: made for plan hash 0bcc", 0},
		{"alignment", "", "call_once_mul.h", P + "_ALIGNMENT 16u", P + "_ALIGNMENT 8u",
			"CALL_ONCE_MUL_ALIGNMENT is 8u, but plan.json's alignment is 16u", 0},
		{"operator count", "", "call_once_mul.h", P + "_OPERATOR_COUNT 7u", P + "_OPERATOR_COUNT 6u",
			"CALL_ONCE_MUL_OPERATOR_COUNT is 6u, but the number of schedule entries is 7u", 0},
		{"arena size", "", "call_once_mul.h", P + "_SCRATCH_SRAM_SIZE 48u", P + "_SCRATCH_SRAM_SIZE 32u",
			"CALL_ONCE_MUL_SCRATCH_SRAM_SIZE is 32u, but arenas[2].size is 48u", 0},
		{"arena numbering", "", "call_once_mul.h", P + "_ARENA_SCRATCH_SRAM = 2,", P + "_ARENA_SCRATCH_SRAM = 1,",
			"CALL_ONCE_MUL_ARENA_SCRATCH_SRAM is 1, want 2", 0},
		{"a status code", "", "call_once_mul.h", P + "_ERR_NULL = 3,", P + "_ERR_NULL = 4,",
			"CALL_ONCE_MUL_ERR_NULL is 4, want 3", 0},
		{"an element type", "", "call_once_mul.h", P + "_TYPE_INT8 = 9,", P + "_TYPE_INT8 = 8,",
			"CALL_ONCE_MUL_TYPE_INT8 is 8, want 9", 0},
		{"arena alignment", "", "call_once_mul.c", "CALL_ONCE_MUL_ALIGNAS(16) uint8_t call_once_mul_scratch_sram", "CALL_ONCE_MUL_ALIGNAS(8) uint8_t call_once_mul_scratch_sram",
			"call_once_mul_scratch_sram is aligned to 8, but arenas[2].alignment is 16", 0},
		{"constant arena writable", "", "call_once_mul.c", "CALL_ONCE_MUL_ALIGNAS(16) const uint8_t call_once_mul_constant_flash", "CALL_ONCE_MUL_ALIGNAS(16) uint8_t call_once_mul_constant_flash",
			"call_once_mul_constant_flash is const=false, but arenas[0] is a constant arena (const=true)", 0},
		{"a constant byte", "", "call_once_mul.c", "\t0x00,0x00,0x00,0x40,\n", "\t0x00,0x00,0x00,0x41,\n",
			"call_once_mul.c: byte 3 of call_once_mul_constant_flash is 0x41, but the model gives 0x40: byte 3 of tensor 1:0 (tensor_allocs[\"1:0\"])", 0},
		{"padding", "", "call_once_mul.c", "\t0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,\n", "\t0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x01,\n",
			"byte 15 of call_once_mul_constant_flash is 0x01, but the model gives 0x00: padding, which must be 0", 0},
		{"a byte of a binary file", ext, "call_once_mul.constant_mram.bin", "\x00\x00\x00\x40", "\x00\x00\x00\x42",
			"call_once_mul.constant_mram.bin: byte 3 of call_once_mul_constant_mram is 0x42", 0},
		{"a stub's section", ext, "call_once_mul.constants.S", `.section ".rodata", "a"`, `.section ".data", "a"`,
			"call_once_mul_constant_mram is in section .data, but its bank places it in .rodata", 0},
		{"an embedded file", emb, "hello_world_int8.c", `#embed "hello_world_int8.constant_dtcm.bin"`, `#embed "other.bin"`,
			"hello_world_int8_constant_dtcm_source embeds other.bin, want hello_world_int8.constant_dtcm.bin", 0},
		{"placement of a bank", ext, "call_once_mul.h", `#define CALL_ONCE_MUL_PUT_IN_DTCM CALL_ONCE_MUL_SECTION(".bss")`,
			`#define CALL_ONCE_MUL_PUT_IN_DTCM CALL_ONCE_MUL_SECTION(".sram_bss")`,
			`CALL_ONCE_MUL_PUT_IN_DTCM is CALL_ONCE_MUL_SECTION(".sram_bss"), but platform.banks[0].section is CALL_ONCE_MUL_SECTION(".bss")`, 0},
		{"an arena in another bank's section", "", "call_once_mul.c", "#define CALL_ONCE_MUL_SCRATCH_SRAM_ATTR CALL_ONCE_MUL_PUT_IN_SRAM",
			"#define CALL_ONCE_MUL_SCRATCH_SRAM_ATTR CALL_ONCE_MUL_PUT_IN_FLASH",
			"CALL_ONCE_MUL_SCRATCH_SRAM_ATTR is CALL_ONCE_MUL_PUT_IN_FLASH, but arenas[2] is in memory SRAM, placed by CALL_ONCE_MUL_PUT_IN_SRAM", 0},
		{"an external arena given storage", ext, "call_once_mul.c", "const call_once_mul_arena_info_t call_once_mul_arenas",
			"CALL_ONCE_MUL_ALIGNAS(16) uint8_t call_once_mul_scratch_dtcm[CALL_ONCE_MUL_SCRATCH_DTCM_SIZE] CALL_ONCE_MUL_SCRATCH_DTCM_ATTR;\nconst call_once_mul_arena_info_t call_once_mul_arenas",
			"call_once_mul_scratch_dtcm is defined, but arenas[2] is bound by the application", 0},
		{"an external arena said internal", ext, "call_once_mul.c", "{CALL_ONCE_MUL_SCRATCH_DTCM_SIZE, 16u, CALL_ONCE_MUL_ROLE_SCRATCH, 1u}",
			"{CALL_ONCE_MUL_SCRATCH_DTCM_SIZE, 16u, CALL_ONCE_MUL_ROLE_SCRATCH, 0u}",
			"call_once_mul_arenas[2] is {CALL_ONCE_MUL_SCRATCH_DTCM_SIZE, 16u, CALL_ONCE_MUL_ROLE_SCRATCH, 0u}, but arenas[2] gives {CALL_ONCE_MUL_SCRATCH_DTCM_SIZE, 16u, CALL_ONCE_MUL_ROLE_SCRATCH, 1u}", 0},
		{"an external arena's base", ext, "call_once_mul.c", "\tNULL, /* [2] scratch_dtcm: bound by call_once_mul_bind_arena */",
			"\tcall_once_mul_scratch_dtcm, /* [2] scratch_dtcm */",
			"call_once_mul_arena_base[2] is call_once_mul_scratch_dtcm, but arenas[2] wants NULL", 0},
		{"an external arena's data macro", ext, "call_once_mul.h", "(call_once_mul_arena_data(CALL_ONCE_MUL_INPUT_0_ARENA) + CALL_ONCE_MUL_INPUT_0_OFFSET)",
			"(&call_once_mul_scratch_dtcm[CALL_ONCE_MUL_INPUT_0_OFFSET])", "CALL_ONCE_MUL_INPUT_0_DATA is (&call_once_mul_scratch_dtcm", 0},
		{"a staged arena not hydrated", emb, "hello_world_int8.c", "\thello_world_int8_hydrate(HELLO_WORLD_INT8_ARENA_CONSTANT_DTCM, hello_world_int8_arena_base[HELLO_WORLD_INT8_ARENA_CONSTANT_DTCM], hello_world_int8_constant_dtcm_source, HELLO_WORLD_INT8_CONSTANT_DTCM_SIZE);\n", "",
			"hello_world_int8.c: init hydrates {}, but the plan's staged arenas want", 0},
		{"tensor row", "", "call_once_mul.c", "{0u, 0u, " + P + "_ARENA_SCRATCH_SRAM, " + P + "_TYPE_FLOAT32, 0u, 32u, 4u, 0u}", "{0u, 0u, " + P + "_ARENA_SCRATCH_SRAM, " + P + "_TYPE_FLOAT32, 0u, 16u, 4u, 0u}",
			"call_once_mul_tensors[0] is {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, CALL_ONCE_MUL_TYPE_FLOAT32, 0u, 16u, 4u, 0u}, but tensor_allocs[\"0:0\"] gives {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, CALL_ONCE_MUL_TYPE_FLOAT32, 0u, 32u, 4u, 0u}", 0},
		{"a tensor's type", "", "call_once_mul.c", "{1u, 0u, " + P + "_ARENA_CONSTANT_FLASH, " + P + "_TYPE_FLOAT32,", "{1u, 0u, " + P + "_ARENA_CONSTANT_FLASH, " + P + "_TYPE_INT32,",
			"call_once_mul_tensors[3] is {1u, 0u, CALL_ONCE_MUL_ARENA_CONSTANT_FLASH, CALL_ONCE_MUL_TYPE_INT32", 0},
		{"a tensor's dimension", "hello_world_int8", "hello_world_int8.c", "\t1, 1, /* [0] tensor 0:0 */", "\t1, 2, /* [0] tensor 0:0 */",
			"hello_world_int8_dims[1] is 2, but dimension 1 of tensor 0:0 (tensor_allocs[\"0:0\"]) is 1", 0},
		{"tensor row left out", "", "call_once_mul.c", "\t{1u, 0u, " + P + "_ARENA_CONSTANT_FLASH, " + P + "_TYPE_FLOAT32, 0u, 0u, 4u, 0u}, /* [3] std.constant */\n", "",
			"table call_once_mul_tensors has 3 row(s), but tensor_allocs has 4 entries", 0},
		{"plan edited", "", "plan.json", `"offset": 32,`, `"offset": 48,`,
			"but tensor_allocs[\"0:0\"] gives {0u, 0u, CALL_ONCE_MUL_ARENA_SCRATCH_SRAM, CALL_ONCE_MUL_TYPE_FLOAT32, 0u, 48u, 4u, 0u}", 1},
		{"an operator's code", "", "call_once_mul.c", "{0u, 4u, 18, NULL,", "{0u, 4u, 19, NULL,",
			"call_once_mul_operators[6] is {0u, 4u, 19, NULL, 6u, 0u, 0u}, but schedule[6] (subgraph, op, builtin, custom, last, scratch, scratch_count) gives {0u, 4u, 18, NULL, 6u, 0u, 0u}", 0},
		{"an operator's kernel scratch rows", "keyword_scrambled_8bit+kernel-scratch", "keyword_scrambled_8bit.c",
			"{0u, 3u, 27, NULL, 14u, 19u, 20u, 0u, 3u, 2u, 5u, 1u, 0u, 0u, 2u}", "{0u, 3u, 27, NULL, 14u, 19u, 20u, 0u, 3u, 1u, 5u, 1u, 0u, 0u, 2u}",
			"keyword_scrambled_8bit_operators[3] is {0u, 3u, 27, NULL, 3u, 1u, 2u}, but schedule[3] (subgraph, op, builtin, custom, last, scratch, scratch_count) gives {0u, 3u, 27, NULL, 3u, 2u, 2u}", 0},
		{"an operator's kernel scratch count", "keyword_scrambled_8bit+kernel-scratch", "keyword_scrambled_8bit.c",
			"{0u, 3u, 27, NULL, 14u, 19u, 20u, 0u, 3u, 2u, 5u, 1u, 0u, 0u, 2u}", "{0u, 3u, 27, NULL, 14u, 19u, 20u, 0u, 3u, 2u, 5u, 1u, 0u, 0u, 0u}",
			"gives {0u, 3u, 27, NULL, 3u, 2u, 2u}", 0},
		{"operators out of order", "", "call_once_mul.c", "{0u, 1u, 142, NULL, 5u, 5u, 6u, 1u, 3u,", "{0u, 2u, 142, NULL, 5u, 5u, 6u, 1u, 3u,",
			"call_once_mul_operators[3] is {0u, 2u, 142, NULL, 3u, 0u, 0u}, but schedule[3]", 0},
		{"a control-flow operator's span", "", "call_once_mul.c", "{0u, 0u, 129, NULL, 2u, 2u, 2u, 0u, 2u,", "{0u, 0u, 129, NULL, 2u, 2u, 2u, 0u, 1u,",
			"call_once_mul_operators[0] is {0u, 0u, 129, NULL, 1u, 0u, 0u}", 0},
		{"an operand", "", "call_once_mul.c", "\t1u, 0u, /* [10] 0:4 MUL inputs */", "\t0u, 1u, /* [10] 0:4 MUL inputs */",
			"call_once_mul_operators[6] inputs are {0u, 1u}, but the model gives {1u, 0u}", 0},
		{"a called subgraph", "", "call_once_mul.c", "\t1u, /* [0] 0:0 CALL_ONCE runs */", "\t0u, /* [0] 0:0 CALL_ONCE runs */",
			"call_once_mul_operators[0] called subgraphs are {0u}, but the model gives {1u}", 0},
		{"variable offset", "", "call_once_mul.h", P + "_VARIABLE_0_OFFSET 0u", P + "_VARIABLE_0_OFFSET 4u",
			"CALL_ONCE_MUL_VARIABLE_0_OFFSET is 4u, but resource_variables[0]'s offset is 0u", 0},
		{"variable in another arena", "", "call_once_mul.h", "(&call_once_mul_persistent_sram[CALL_ONCE_MUL_VARIABLE_0_OFFSET])", "(&call_once_mul_scratch_sram[CALL_ONCE_MUL_VARIABLE_0_OFFSET])",
			"CALL_ONCE_MUL_VARIABLE_0_DATA is (&call_once_mul_scratch_sram", 0},
		{"input index", "", "call_once_mul.h", P + "_INPUT_0_INDEX 0u", P + "_INPUT_0_INDEX 1u",
			"CALL_ONCE_MUL_INPUT_0_INDEX is 1u, but the row of tensor 0:0, tensor_allocs[\"0:0\"] is 0u", 0},
		{"an input's scale", "hello_world_int8", "hello_world_int8.h", "INPUT_0_SCALE 0.024480116f", "INPUT_0_SCALE 0.02448012f",
			"HELLO_WORLD_INT8_INPUT_0_SCALE is 0.02448012f, but tensor 0:0's scale is 0.024480116", 0},
		{"an output's zero point", "hello_world_int8", "hello_world_int8.h", "OUTPUT_0_ZERO_POINT 5", "OUTPUT_0_ZERO_POINT 4",
			"HELLO_WORLD_INT8_OUTPUT_0_ZERO_POINT is 4, but tensor 0:9's zero point is 5", 0},
		{"a macro of nothing", "", "call_once_mul.h", "#define " + P + "_KERNEL_SCRATCH_COUNT 0u\n", "#define " + P + "_KERNEL_SCRATCH_COUNT 0u\n#define " + P + "_VARIABLE_1_SIZE 4u\n",
			"CALL_ONCE_MUL_VARIABLE_1_SIZE describes nothing of the plan", 0},
		{"a macro given twice", "", "call_once_mul.h", "#define " + P + "_ALIGNMENT 16u\n", "#define " + P + "_ALIGNMENT 16u\n#define " + P + "_ALIGNMENT 8u\n",
			"CALL_ONCE_MUL_ALIGNMENT is given twice", 0},
		{"no plan hash macro", "", "call_once_mul.h", "#define " + P + "_PLAN_HASH", "#define " + P + "_PLAN_HAS",
			"header: want one #define <PREFIX>_PLAN_HASH, found 0 ()", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				dir = "call_once_mul"
			}
			g := readGolden(t, dir)
			text := string(g.files[tt.file])
			require.Contains(t, text, tt.old)
			g.files[tt.file] = []byte(strings.Replace(text, tt.old, tt.new, 1))
			got := g.check()
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

// TestCMissingBinaryFile: a module whose constants are binary files is
// checked against the files beside it; one that is missing is named.
func TestCMissingBinaryFile(t *testing.T) {
	g := readGolden(t, "call_once_mul+apollo510-external-incbin")
	delete(g.files, "call_once_mul.constant_mram.bin")
	got := g.check()
	require.Len(t, got, 1, "%v", got)
	assert.Contains(t, got[0].Msg, "no binary file call_once_mul.constant_mram.bin beside the module")
}

// FuzzC checks that C reads any header and source without panicking.
func FuzzC(f *testing.F) {
	g := readGolden(f, "call_once_mul")
	mod := g.module()
	f.Add(mod.Header, mod.Source)
	f.Add([]byte("#define X_PLAN_HASH \"\"\ntypedef enum {\n} x_arena_t;\n#define X_INPUT_COUNT 99999999999u"), []byte("const t x_tensors[N] = {\n{1,\n"))
	f.Add([]byte("#define X_PLAN_HASH \"\"\ntypedef enum {\n} x_arena_t;\n"), []byte("const t x_operators[N] = {\n{0u, 0u, 1, NULL, 9999999u, 1u, 1u, 1u, 1u, 0u, 4u, 1u, 1u, 1u, 0u},\n"))
	f.Fuzz(func(t *testing.T, h, c []byte) {
		for _, v := range C(g.model, g.files["plan.json"], Module{Header: h, Source: c}) {
			if v.Kind != CMismatch {
				t.Fatalf("%v", v)
			}
		}
	})
}
