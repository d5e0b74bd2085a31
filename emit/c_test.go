package emit_test

import (
	"context"
	"fmt"
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

// tensor builds a graph tensor with its byte size filled in.
func tensor(name string, typ graph.ElementType, shape []int32, buf graph.BufferIndex) graph.Tensor {
	n, err := graph.ByteSize(typ, shape)
	if err != nil {
		panic(err)
	}
	return graph.Tensor{Name: name, Type: typ, Shape: shape, Buffer: buf, Size: n}
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(0xa0 + i)
	}
	return b
}

// denseModel is input -> FULLY_CONNECTED(weights, bias) -> hidden ->
// ADD(state) -> output, with a second tensor over the weights buffer and an
// odd-sized constant whose name needs sanitizing in C comments.
func denseModel() *graph.Model {
	state := tensor("state", graph.Int8, []int32{1, 4}, 0)
	state.IsVariable = true
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: seq(16)}, {Data: []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}}, {Data: []byte{9, 8, 7, 6, 5}}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("input", graph.Int8, []int32{1, 4}, 0),
				tensor("weights", graph.Int8, []int32{4, 4}, 1),
				tensor("bias", graph.Int32, []int32{4}, 2),
				tensor("hidden", graph.Int8, []int32{1, 4}, 0),
				state,
				tensor("output", graph.Int8, []int32{1, 4}, 0),
				tensor("weights_again", graph.Int8, []int32{4, 4}, 1),
				tensor("odd*/name /* é ??/", graph.Int8, []int32{5}, 3),
				tensor("result", graph.Int8, []int32{1, 4}, 0),
			},
			Ops: []graph.Op{
				{Code: 9, CodeName: "FULLY_CONNECTED", Inputs: []graph.TensorID{0, 1, 2}, Outputs: []graph.TensorID{3}},
				{Code: 0, CodeName: "ADD", Inputs: []graph.TensorID{3, 4}, Outputs: []graph.TensorID{5}},
				{Code: graph.Custom, CustomName: "MIX", Inputs: []graph.TensorID{5, 6, 7}, Outputs: []graph.TensorID{8}},
			},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{8, 5},
		}},
	}
}

// emptyModel has no tensor that needs memory: its only tensor is zero-sized.
func emptyModel() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("nothing", graph.Float32, []int32{0}, 0)},
			Ops:     []graph.Op{{Code: 22, CodeName: "RESHAPE", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{0}}},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{0},
		}},
	}
}

func buildPlan(t testing.TB, m *graph.Model) *plan.Plan {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	return p
}

func emitC(t testing.TB, m *graph.Model, p *plan.Plan, opts emit.COptions) (h, c string) {
	t.Helper()
	files, err := emit.C(m, p, opts)
	require.NoError(t, err)
	require.Len(t, files, 2)
	return string(files[0].Data), string(files[1].Data)
}

var defineRE = regexp.MustCompile(`(?m)^#define (\w+) (.+)$`)

// macros returns the header's object-like macros and their replacement text.
func macros(h string) map[string]string {
	out := map[string]string{}
	for _, m := range defineRE.FindAllStringSubmatch(h, -1) {
		out[m[1]] = m[2]
	}
	return out
}

var commentRE = regexp.MustCompile(`(?s)/\*.*?\*/`)

// arrayBytes parses back the initializer of the byte array sym in a .c file.
func arrayBytes(t *testing.T, c, sym string) []byte {
	t.Helper()
	i := strings.Index(c, " "+sym+"[")
	require.GreaterOrEqual(t, i, 0, "no array %s", sym)
	body := c[i:]
	start := strings.Index(body, "= {\n")
	end := strings.Index(body, "\n};")
	require.True(t, start >= 0 && end > start, "no initializer for %s", sym)
	var out []byte
	for _, f := range strings.Split(commentRE.ReplaceAllString(body[start+4:end], ""), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 0, 8)
		require.NoError(t, err, "element %q", f)
		out = append(out, byte(v))
	}
	return out
}

var rowRE = regexp.MustCompile(`(?m)^\t\{(\d+)u, (\d+)u, (\w+_ARENA_\w+), \w+_TYPE_\w+, \d+u, (\d+)u, (\d+)u, \d+u\},`)

// tableRow is one parsed entry of <prefix>_tensors.
type tableRow struct {
	ref          graph.TensorRef
	arena        string
	offset, size int64
}

func tableRows(c string) []tableRow {
	var out []tableRow
	for _, m := range rowRE.FindAllStringSubmatch(c, -1) {
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		out = append(out, tableRow{graph.TensorRef{Subgraph: graph.SubgraphIndex(n(1)), Tensor: graph.TensorID(n(2))}, m[3], n(4), n(5)})
	}
	return out
}

// arenaEnum is the C enumerator of plan arena a under prefix P.
func arenaEnum(P string, a plan.Arena) string {
	return fmt.Sprintf("%s_ARENA_%s_%s", P, strings.ToUpper(a.Role.String()), strings.ToUpper(a.Memory))
}

func TestCHeader(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	h, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense", Version: "test"}})
	defs := macros(h)
	require.NotEmpty(t, p.Allocs)

	assert.True(t, strings.HasPrefix(h, "/* Code generated by heliac. DO NOT EDIT. */\n"))
	assert.True(t, strings.HasPrefix(c, "/* Code generated by heliac. DO NOT EDIT. */\n"))
	assert.Contains(t, h, "heliac test")
	assert.Contains(t, h, "#ifndef DENSE_H\n#define DENSE_H\n")
	assert.Contains(t, h, "#include <stdint.h>\n")
	assert.Contains(t, h, "#include <stddef.h>\n")
	assert.Contains(t, h, "extern const dense_tensor_t dense_tensors[DENSE_TENSOR_COUNT];")
	assert.Contains(t, c, "#include \"dense.h\"\n")
	assert.NotContains(t, c, "main(")

	want := map[string]string{
		"DENSE_PLAN_HASH":    `"` + p.Hash() + `"`,
		"DENSE_ALIGNMENT":    "16u",
		"DENSE_TENSOR_COUNT": fmt.Sprintf("%du", len(p.Allocs)),
		"DENSE_INPUT_COUNT":  "1u",
		"DENSE_OUTPUT_COUNT": "2u",
	}
	for _, a := range p.Arenas {
		want[fmt.Sprintf("DENSE_%s_%s_SIZE", strings.ToUpper(a.Role.String()), a.Memory)] = fmt.Sprintf("%du", a.Size)
	}
	for i, ref := range []graph.TensorRef{{Tensor: 0}, {Tensor: 8}, {Tensor: 5}} {
		role, n := "INPUT", i
		if i > 0 {
			role, n = "OUTPUT", i-1
		}
		a, err := p.Allocation(plan.TensorIDOf(ref))
		require.NoError(t, err)
		name := fmt.Sprintf("DENSE_%s_%d", role, n)
		want[name+"_ARENA"] = arenaEnum("DENSE", *p.Arena(a.Arena))
		want[name+"_OFFSET"] = fmt.Sprintf("%du", a.Offset)
		want[name+"_SIZE"] = fmt.Sprintf("%du", a.Size)
		want[name+"_INDEX"] = fmt.Sprintf("%du", int(ref.Tensor)-countUnallocatedBefore(p, ref))
	}
	for k, v := range want {
		assert.Equal(t, v, defs[k], k)
	}
	for _, a := range p.Arenas {
		sym := "dense_" + a.Role.String() + "_" + strings.ToLower(a.Memory)
		assert.Contains(t, h, fmt.Sprintf("extern %suint8_t %s[", map[bool]string{true: "const "}[a.Role == liveness.Constant], sym))
		assert.Contains(t, c, fmt.Sprintf("DENSE_ALIGNAS(16) %suint8_t %s[", map[bool]string{true: "const "}[a.Role == liveness.Constant], sym))
	}
}

// countUnallocatedBefore counts tensors before ref that have no allocation,
// to turn a tensor id into a table index.
func countUnallocatedBefore(p *plan.Plan, ref graph.TensorRef) int {
	n := 0
	for id := graph.TensorID(0); id < ref.Tensor; id++ {
		if _, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Subgraph: ref.Subgraph, Tensor: id})); err != nil {
			n++
		}
	}
	return n
}

func TestCTableMatchesPlan(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	_, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	rows := tableRows(c)
	require.Len(t, rows, len(p.Allocs))
	for i, a := range p.Allocs {
		assert.Equal(t, tableRow{a.Ref, arenaEnum("DENSE", *p.Arena(a.Arena)), a.Offset, a.Size}, rows[i], "row %d", i)
	}
}

func TestCConstantBytes(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	_, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	var constants int
	for _, a := range p.Arenas {
		if a.Role != liveness.Constant {
			continue
		}
		constants++
		img := arrayBytes(t, c, "dense_constant_"+strings.ToLower(a.Memory))
		require.Len(t, img, int(a.Size), "the initializer spells out the whole arena")
		covered := make([]bool, len(img))
		for _, al := range p.Allocs {
			if p.Arena(al.Arena).Role != liveness.Constant {
				continue
			}
			data := m.Buffers[m.Tensor(al.Ref.Subgraph, al.Ref.Tensor).Buffer].Data
			assert.Equal(t, data, img[al.Offset:al.Offset+al.Size], "tensor %v at offset %d", al.Ref, al.Offset)
			for i := al.Offset; i < al.Offset+al.Size; i++ {
				covered[i] = true
			}
		}
		for i, b := range img {
			if !covered[i] {
				assert.Zero(t, b, "padding byte %d", i)
			}
		}
	}
	assert.Equal(t, 1, constants, "the dense model has one constant arena")
}

func TestCComments(t *testing.T) {
	m := denseModel()
	m.Subgraphs[0].Tensors[0].Name = "in*/put\n#error x"
	p := buildPlan(t, m)
	h, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense */ é"}})
	for name, text := range map[string]string{"h": h, "c": c} {
		for ln, line := range strings.Split(text, "\n") {
			assert.False(t, strings.HasPrefix(line, "#error x"), "%s:%d: a name became a directive", name, ln+1)
			for _, r := range line {
				if r > 0x7e || (r < 0x20 && r != '\t') {
					t.Errorf("%s:%d: byte %q outside printable ASCII: %s", name, ln+1, r, line)
				}
			}
			// Outside string literals, every "/*" is closed on its line and
			// no comment holds another "/*" or a trigraph.
			for _, cm := range regexp.MustCompile(`/\*.*?\*/`).FindAllString(line, -1) {
				inner := cm[2 : len(cm)-2]
				assert.NotContains(t, inner, "/*", "%s:%d", name, ln+1)
				assert.NotContains(t, inner, "??", "%s:%d", name, ln+1)
			}
		}
	}
	assert.Contains(t, c, `odd*\/name /\* \xc3\xa9 ?\?/`)
}

func TestCPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello_world_int8", "hello_world_int8"},
		{"Hello-World INT8", "hello_world_int8"},
		{"MobileNet v2 (1.0)", "mobilenet_v2_1_0"},
		{"3dnet", "m_3dnet"},
		{"__private__", "private"},
		{"a..b", "a_b"},
		{"modèle", "mod_le"},
		{"", "model"},
		{"---", "model"},
		{"2", "m_2"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, emit.CPrefix(tc.in))
		})
	}
}

func TestCExplicitPrefix(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	for _, tc := range []struct {
		name, prefix string
		err          string // "" for a valid prefix
	}{
		{"lower", "net", ""},
		{"mixed case", "MyNet2", ""},
		{"inner underscore", "my_net", ""},
		{"leading digit", "1net", "not a C identifier"},
		{"dash", "my-net", "not a C identifier"},
		{"space", "my net", "not a C identifier"},
		{"non-ASCII", "né", "not a C identifier"},
		{"leading underscore", "_net", "reserves"},
		{"double underscore", "my__net", "reserves"},
		{"trailing underscore", "net_", "reserves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := emit.C(m, p, emit.COptions{Prefix: tc.prefix, Meta: emit.Meta{ModelName: "ignored"}})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.True(t, strings.HasPrefix(err.Error(), "emit: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.prefix+".h", files[0].Name)
			assert.Equal(t, tc.prefix+".c", files[1].Name)
			P := strings.ToUpper(tc.prefix)
			assert.Contains(t, macros(string(files[0].Data)), P+"_TENSOR_COUNT")
			assert.Contains(t, string(files[0].Data), "extern const "+tc.prefix+"_tensor_t "+tc.prefix+"_tensors[")
		})
	}
}

func TestCDefaultPrefix(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	files, err := emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "Dense Net"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"dense_net.h", "dense_net.c"}, []string{files[0].Name, files[1].Name})
}

func TestCDeterministic(t *testing.T) {
	m := denseModel()
	opts := emit.COptions{Meta: emit.Meta{ModelName: "dense", Version: "test"}}
	a, err := emit.C(m, buildPlan(t, m), opts)
	require.NoError(t, err)
	b, err := emit.C(m, buildPlan(t, m), opts)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestCNoTensors(t *testing.T) {
	m := emptyModel()
	p := buildPlan(t, m)
	require.Empty(t, p.Allocs)
	h, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "empty"}})
	defs := macros(h)
	assert.Equal(t, "0u", defs["EMPTY_TENSOR_COUNT"])
	assert.Equal(t, "1u", defs["EMPTY_INPUT_COUNT"])
	assert.NotContains(t, defs, "EMPTY_INPUT_0_OFFSET", "an input that occupies no memory has no location")
	assert.Contains(t, h, "EMPTY_ARENA_COUNT = 0")
	assert.NotRegexp(t, `\w\[0u?\]`, h+c, "no zero-length arrays")
	assert.NotContains(t, c, "empty_tensors[")
}

// TestCStaged checks a constant arena copied from flash into SRAM: the
// image goes into a separate const array and stage_constants copies it.
func TestCStaged(t *testing.T) {
	m := denseModel()
	p := *buildPlan(t, m)
	p.Arenas = append([]plan.Arena(nil), p.Arenas...)
	staged := false
	for i := range p.Arenas {
		if a := &p.Arenas[i]; a.Role == liveness.Constant {
			a.Memory, a.Source, a.Name = "DTCM", "FLASH", "constant_dtcm"
			staged = true
		}
	}
	require.True(t, staged)
	p.Platform.Banks = append(slices.Clone(p.Platform.Banks), plan.Bank{Name: "DTCM", Writable: true})
	h, c := emitC(t, m, &p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	assert.Contains(t, h, "extern uint8_t dense_constant_dtcm[DENSE_CONSTANT_DTCM_SIZE];")
	assert.Contains(t, h, "extern const uint8_t dense_constant_dtcm_source[DENSE_CONSTANT_DTCM_SIZE];")
	assert.Contains(t, h, "void dense_hydrate(dense_arena_t arena, void *dst, const void *src, size_t size);")
	assert.Contains(t, c, "DENSE_WEAK void dense_hydrate(")
	assert.Contains(t, c, "\tdense_hydrate(DENSE_ARENA_CONSTANT_DTCM, dense_arena_base[DENSE_ARENA_CONSTANT_DTCM], dense_constant_dtcm_source, DENSE_CONSTANT_DTCM_SIZE);\n")
	assert.Contains(t, c, "#define DENSE_CONSTANT_DTCM_SOURCE_ATTR DENSE_PUT_IN_FLASH\n", "the image lies in the bank it is staged from")
	img := arrayBytes(t, c, "dense_constant_dtcm_source")
	assert.Equal(t, seq(16), img[:16])
}

func TestCErrors(t *testing.T) {
	m := denseModel()
	generic, err := plan.BuiltinPlatform("generic")
	require.NoError(t, err)
	arena := func(id int, name string, role liveness.Class, size int64) plan.Arena {
		return plan.Arena{ID: plan.ArenaID(id), Name: name, Role: role, Memory: "SRAM", Provider: plan.Owned, Size: size, Alignment: 16}
	}
	tensor := func(tn int, class liveness.Class, arena int, size, offset int64) plan.Alloc {
		return plan.Alloc{Key: plan.TensorKey(graph.TensorRef{Tensor: graph.TensorID(tn)}), Class: class, Arena: plan.ArenaID(arena), Size: size, Offset: offset}
	}
	shared := arena(0, "scratch_sram", liveness.Scratch, 16)
	shared.Provider = plan.Shared
	sharedConstant := arena(0, "constant_flash", liveness.Constant, 16)
	sharedConstant.Provider, sharedConstant.Memory, sharedConstant.SharedSize = plan.Shared, "FLASH", 16
	boundCold := arena(0, "constant_flash", liveness.Constant, 16)
	boundCold.Provider, boundCold.Memory = plan.Bound, "FLASH"
	misaligned := arena(0, "scratch_sram", liveness.Scratch, 16)
	misaligned.Alignment = 24
	overAligned := arena(0, "scratch_sram", liveness.Scratch, 1<<29)
	overAligned.Alignment = 1 << 29
	inPSRAM := arena(0, "scratch_psram", liveness.Scratch, 16)
	inPSRAM.Memory = "PSRAM"
	oddBanks := generic
	oddBanks.Banks = []plan.Bank{{Name: "SRAM", Writable: true}, {Name: "--", Writable: true}}
	twinBanks := generic
	twinBanks.Banks = []plan.Bank{{Name: "SRAM", Writable: true}, {Name: "ext-ram", Writable: true}, {Name: "EXT RAM", Writable: true}}
	for _, tc := range []struct {
		name string
		p    plan.Plan
		err  string
	}{
		{"arena over 4 GiB", plan.Plan{Alignment: 16, Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 1<<33)}},
			"32-bit"},
		{"tensor outside its arena", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 16)},
			Allocs: []plan.Alloc{tensor(0, liveness.Scratch, 0, 4, 16)}},
			"outside"},
		{"tensor in an unknown arena", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 16)},
			Allocs: []plan.Alloc{tensor(0, liveness.Scratch, 3, 4, 0)}},
			"in arena 3, which holds no bytes"},
		{"two arenas with one name", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 16), arena(1, "scratch_sram", liveness.Scratch, 16)}},
			"arenas 0 and 1 are both named scratch_sram"},
		{"two arenas with one id", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 16), arena(0, "scratch_dtcm", liveness.Scratch, 16)}},
			"two arenas have id 0"},
		{"a name C cannot use", plan.Plan{Alignment: 16, Arenas: []plan.Arena{arena(0, "Scratch SRAM", liveness.Scratch, 16)}},
			`name "Scratch SRAM" is not`},
		{"an alignment C cannot use", plan.Plan{Alignment: 16, Arenas: []plan.Arena{misaligned}},
			"alignment 24 is not a positive power of two"},
		{"an alignment past _Alignas", plan.Plan{Alignment: 16, Arenas: []plan.Arena{overAligned}},
			"emit: arena scratch_sram: alignment 536870912 is more than 268435456, the most C compilers accept in _Alignas"},
		{"an array 32-bit targets cannot declare", plan.Plan{Alignment: 16, Arenas: []plan.Arena{arena(0, "scratch_sram", liveness.Scratch, 1<<31)}},
			"emit: arena scratch_sram is 2147483648 bytes, more than 2147483647, the largest array a 32-bit target's C compiler accepts"},
		{"a shared arena smaller than itself", plan.Plan{Alignment: 16, Arenas: []plan.Arena{shared}},
			"emit: arena scratch_sram is shared as 0 bytes, fewer than its own 16"},
		{"a shared constant arena", plan.Plan{Alignment: 16, Arenas: []plan.Arena{sharedConstant}},
			"emit: arena constant_flash is shared between models, but only scratch arenas can be"},
		{"cold constants the application binds", plan.Plan{Alignment: 16, Arenas: []plan.Arena{boundCold}},
			"emit: arena constant_flash holds constants read where they lie; the application cannot bind it"},
		{"an arena in no bank", plan.Plan{Alignment: 16, Arenas: []plan.Arena{inPSRAM}},
			`emit: arena scratch_psram is in memory PSRAM, which is not a bank of platform "generic"`},
		{"a bank without a C name", plan.Plan{Alignment: 16, Platform: oddBanks},
			`emit: bank "--" gives no C name (it has no letter or digit); rename it in the platform file`},
		{"two banks with one C name", plan.Plan{Alignment: 16, Platform: twinBanks},
			"emit: dense.h would define DENSE_PUT_IN_EXT_RAM twice: an arena, bank or prefix gives a name the module already uses; rename the bank or give another --prefix"},
		{"an arena named like a part of the module", plan.Plan{Alignment: 16, Arenas: []plan.Arena{arena(0, "count", liveness.Scratch, 16)}},
			"emit: dense.h would define DENSE_ARENA_COUNT twice"},
		{"constant with wrong size", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "constant_flash", liveness.Constant, 32)},
			Allocs: []plan.Alloc{tensor(1, liveness.Constant, 0, 8, 0)}},
			"buffer holds 16"},
		{"constant without data", plan.Plan{Alignment: 16,
			Arenas: []plan.Arena{arena(0, "constant_flash", liveness.Constant, 16)},
			Allocs: []plan.Alloc{tensor(0, liveness.Constant, 0, 4, 0)}},
			"no data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.p.Platform.Banks == nil {
				tc.p.Platform = generic
			}
			_, err := emit.C(m, &tc.p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestCString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"MIX", `"MIX"`},
		{"TFLite_Detection_PostProcess", `"TFLite_Detection_PostProcess"`},
		{"a,b{c}", `"a\054b\173c\175"`},
		{`q"\?`, `"q\042\134\077"`},
		{"\x017", `"\0017"`}, // three octal digits, so the 7 stays a character
		{"/* é */", `"/\052 \303\251 \052/"`},
		{"", `""`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, c := emitC(t, customModel(tc.in), buildPlan(t, customModel(tc.in)), emit.COptions{Meta: emit.Meta{ModelName: "m"}})
			assert.Contains(t, c, "{0u, 0u, 32, "+tc.want+", ")
		})
	}
}

// customModel is one custom operator named name, from input to output.
func customModel(name string) *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("in", graph.Int8, []int32{4}, 0), tensor("out", graph.Int8, []int32{4}, 0)},
			Ops:     []graph.Op{{Code: graph.Custom, CustomName: name, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{1},
		}},
	}
}

var opRowRE = regexp.MustCompile(`(?m)^\t\{(\d+)u, (\d+)u, (-?\d+), (NULL|"[^"]*"), (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u, (\d+)u\},`)

// kernelRowRE matches a row of <prefix>_kernel_scratch: subgraph, op,
// index, arena, offset, size.
var kernelRowRE = regexp.MustCompile(`(?m)^\t\{(\d+)u, (\d+)u, (\d+)u, \w+, (\d+)u, (\d+)u\}, /\* \[\d+\]`)

// TestCSchedule reads the operator table back: one row per run of the
// plan's schedule, in order, whose operands are the tensor-table rows of
// the operator's tensors and whose span ends at the last run inside it.
func TestCSchedule(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "multi_subgraphs_while.tflite"))
	// Kernel scratch for the body's first operator and, given out of
	// order, two requests of the WHILE.
	p := buildPlanWith(t, m, plan.Options{KernelScratch: []plan.ScratchRequest{
		{Op: graph.OpRef{Subgraph: 2, Op: 0}, Size: 16}, {Op: graph.OpRef{Subgraph: 0, Op: 0}, Size: 32},
		{Op: graph.OpRef{Subgraph: 0, Op: 0}, Size: 8}}})
	_, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "w"}})
	rows := opRowRE.FindAllStringSubmatch(c, -1)
	kernelRows := kernelRowRE.FindAllStringSubmatch(c, -1)
	require.Len(t, kernelRows, 3)
	require.Len(t, rows, len(p.Schedule.Runs))
	pool := poolValues(t, c, "w_operands")
	calls := poolValues(t, c, "w_calls")
	tableRow := map[graph.TensorRef]int{}
	for i, r := range tableRows(c) {
		tableRow[r.ref] = i
	}
	n := func(s string) int { v, err := strconv.Atoi(s); require.NoError(t, err); return v }
	for i, run := range p.Schedule.Runs {
		r := rows[i]
		op := &m.Subgraphs[run.Op.Subgraph].Ops[run.Op.Op]
		assert.Equal(t, []int{int(run.Op.Subgraph), int(run.Op.Op), int(op.Code)}, []int{n(r[1]), n(r[2]), n(r[3])}, "row %d", i)
		var want []int
		for _, id := range op.Inputs {
			v, ok := tableRow[graph.TensorRef{Subgraph: run.Op.Subgraph, Tensor: id}]
			if !ok {
				v = 65535
			}
			want = append(want, v)
		}
		assert.Equal(t, want, pool[n(r[5]):n(r[5])+n(r[11])], "row %d inputs", i)
		var scratch []string
		for _, k := range kernelRows[n(r[10]) : n(r[10])+n(r[15])] {
			assert.Equal(t, []int{int(run.Op.Subgraph), int(run.Op.Op)}, []int{n(k[1]), n(k[2])}, "row %d scratch", i)
			scratch = append(scratch, k[3]+":"+k[5])
		}
		switch run.Op {
		case graph.OpRef{Subgraph: 0, Op: 0}:
			assert.Equal(t, []string{"0:32", "1:8"}, scratch, "the WHILE's requests, in order")
		case graph.OpRef{Subgraph: 2, Op: 0}:
			assert.Equal(t, []string{"0:16"}, scratch)
		default:
			assert.Empty(t, scratch, "row %d", i)
		}
		var called []int
		for _, s := range op.Called {
			called = append(called, int(s))
		}
		assert.Equal(t, called, append([]int(nil), calls[n(r[8]):n(r[8])+n(r[14])]...), "row %d calls", i)
		last := n(r[9])
		assert.GreaterOrEqual(t, last, i)
		assert.LessOrEqual(t, p.Schedule.Runs[last].Span.Last, run.Span.Last, "row %d: its last row runs inside it", i)
		if last+1 < len(p.Schedule.Runs) {
			assert.Greater(t, p.Schedule.Runs[last+1].Span.First, run.Span.Last, "row %d: the row after its last runs after it", i)
		}
	}
	assert.Contains(t, c, "{0u, 0u, 119, NULL, 13u, 16u, 19u, 0u, 4u,", "the WHILE of the main subgraph spans the rows of cond and body")
}

// poolValues parses back the values of a flat uint16 table of a .c file.
func poolValues(t *testing.T, c, sym string) []int {
	t.Helper()
	i := strings.Index(c, " "+sym+"[")
	if i < 0 {
		return nil
	}
	body := c[i:]
	body = body[strings.Index(body, "= {\n")+4 : strings.Index(body, "\n};")]
	var out []int
	for _, f := range strings.Split(commentRE.ReplaceAllString(body, ""), ",") {
		if f = strings.TrimSuffix(strings.TrimSpace(f), "u"); f != "" {
			v, err := strconv.Atoi(f)
			require.NoError(t, err, "element %q", f)
			out = append(out, v)
		}
	}
	return out
}

// TestCPlacement checks that every arena carries its bank's placement
// macro, defined from the platform's sections, and that constants in RAM
// the start-up code fills go to its init section.
func TestCPlacement(t *testing.T) {
	apollo510, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	apollo510.Banks[1].BootInit = true
	m := denseModel()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &apollo510,
		Rules: []plan.Rule{{Class: "constant", Memory: "SRAM"}, {Class: "persistent", Memory: "SRAM"}}})
	require.NoError(t, err)
	h, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	defs := macros(h)
	assert.Equal(t, `DENSE_SECTION(".bss")`, defs["DENSE_PUT_IN_DTCM"])
	assert.Equal(t, `DENSE_SECTION(".sram_bss")`, defs["DENSE_PUT_IN_SRAM"])
	assert.Equal(t, `DENSE_SECTION(".shared")`, defs["DENSE_PUT_IN_SRAM_INIT"])
	assert.Equal(t, `DENSE_SECTION(".rodata")`, defs["DENSE_PUT_IN_MRAM"])
	assert.NotContains(t, defs, "DENSE_PUT_IN_DTCM_INIT", "DTCM is not filled at boot")
	src := macros(c)
	assert.Equal(t, "DENSE_PUT_IN_DTCM", src["DENSE_SCRATCH_DTCM_ATTR"])
	assert.Equal(t, "DENSE_PUT_IN_SRAM", src["DENSE_PERSISTENT_SRAM_ATTR"])
	assert.Equal(t, "DENSE_PUT_IN_SRAM_INIT", src["DENSE_CONSTANT_SRAM_ATTR"], "constants in RAM filled at boot")
	assert.Contains(t, h, "#ifndef DENSE_PUT_IN_SRAM\n", "the application can override each")

	generic, _ := emitC(t, m, buildPlan(t, m), emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	assert.Contains(t, generic, "#define DENSE_PUT_IN_SRAM\n", "generic leaves placement to the toolchain")
}

// TestCExternal: an arena the application binds has no storage, its data
// macros go through the bound buffer, and the tables say it is external.
func TestCExternal(t *testing.T) {
	m := denseModel()
	h, c := emitC(t, m, buildPlanWith(t, m, plan.Options{External: []string{"scratch_sram"}}), emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	defs := macros(h)
	assert.Equal(t, "1", defs["DENSE_SCRATCH_SRAM_EXTERNAL"])
	assert.NotContains(t, defs, "DENSE_PERSISTENT_SRAM_EXTERNAL")
	assert.NotContains(t, h, "extern uint8_t dense_scratch_sram[")
	assert.Contains(t, h, "extern uint8_t dense_persistent_sram[")
	assert.NotContains(t, c, " dense_scratch_sram[")
	assert.Equal(t, "(dense_arena_data(DENSE_INPUT_0_ARENA) + DENSE_INPUT_0_OFFSET)", defs["DENSE_INPUT_0_DATA"])
	assert.Contains(t, c, "{DENSE_SCRATCH_SRAM_SIZE, 16u, DENSE_ROLE_SCRATCH, 1u}, /* [2] scratch_sram */")
	assert.Contains(t, c, "\tNULL, /* [2] scratch_sram: bound by dense_bind_arena */")
}

func buildPlanWith(t testing.TB, m *graph.Model, opts plan.Options) *plan.Plan {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, opts)
	require.NoError(t, err)
	return p
}

// TestCConstantsForms writes the dense model's constants in each form: the
// bytes are the same, in the .c, or in a binary file an assembler stub or
// #embed includes.
func TestCConstantsForms(t *testing.T) {
	m := denseModel()
	p := buildPlan(t, m)
	_, c := emitC(t, m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
	img := arrayBytes(t, c, "dense_constant_flash")

	incbin, err := emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: emit.ConstantsIncbin})
	require.NoError(t, err)
	var names []string
	for _, f := range incbin {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"dense.h", "dense.c", "dense.constants.S", "dense.constant_flash.bin"}, names)
	assert.Equal(t, img, incbin[3].Data)
	assert.Contains(t, string(incbin[2].Data), "dense_constant_flash:\n\t.incbin \"dense.constant_flash.bin\"\n\t.size dense_constant_flash, 48\n")
	assert.NotContains(t, string(incbin[1].Data), "uint8_t dense_constant_flash[")

	embed, err := emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: emit.ConstantsEmbed})
	require.NoError(t, err)
	require.Len(t, embed, 3)
	assert.Equal(t, img, embed[2].Data)
	assert.Contains(t, string(embed[1].Data), "dense_constant_flash[DENSE_CONSTANT_FLASH_SIZE] DENSE_CONSTANT_FLASH_ATTR = {\n#embed \"dense.constant_flash.bin\"\n};")

	_, err = emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}, Constants: "hex"})
	assert.EqualError(t, err, `emit: constants "hex" is not one of c, incbin, embed`)
}

// TestCIOMacros checks the type, scale and zero point of a quantized
// model's input and output.
func TestCIOMacros(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	h, _ := emitC(t, m, buildPlan(t, m), emit.COptions{Meta: emit.Meta{ModelName: "hello"}})
	defs := macros(h)
	in := m.Tensor(0, m.Subgraphs[0].Inputs[0])
	require.NotNil(t, in.Quantization)
	assert.Equal(t, "HELLO_TYPE_INT8", defs["HELLO_INPUT_0_TYPE"])
	scale, err := strconv.ParseFloat(strings.TrimSuffix(defs["HELLO_INPUT_0_SCALE"], "f"), 32)
	require.NoError(t, err)
	assert.Equal(t, in.Quantization.Scale[0], float32(scale), "the scale reads back exactly")
	assert.Equal(t, fmt.Sprintf("(%d)", in.Quantization.ZeroPoint[0]), defs["HELLO_INPUT_0_ZERO_POINT"])
	assert.Contains(t, h, "\tHELLO_TYPE_INT8 = 9,\n", "TFLite's number for INT8")
}
