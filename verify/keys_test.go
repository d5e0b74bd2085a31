package verify

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dupLine returns data with the first line that starts with prefix (after
// its indentation), an object's member, written twice.
func dupLine(t *testing.T, data []byte, prefix string) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), prefix) {
			first := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), ",") + ",\n"
			return []byte(strings.Join(slices.Insert(lines, i, first), ""))
		}
	}
	t.Fatalf("no line starts with %s", prefix)
	return nil
}

// slowPath spells the generator with an escape, which fastJSON leaves to
// encoding/json: the same document, read on decode's other path.
func slowPath(t *testing.T, data []byte) []byte {
	t.Helper()
	out := bytes.Replace(data, []byte(`"generator": "heliac test"`), []byte(`"generator": "heliac\u0020test"`), 1)
	require.NotEqual(t, data, out)
	_, dup, ok := fastJSON(out)
	require.False(t, ok)
	require.Nil(t, dup)
	return out
}

// TestPlanV4Shape: the five heliaAOT maps of schema_version 4, keyed by
// tensor id and by memory, and what their keys and entries must agree on
// (docs/plan-format.md; issue 20).
func TestPlanV4Shape(t *testing.T) {
	const twice = "is given twice; the keys of a JSON object are unique"
	tests := []struct {
		name  string
		model string
		raw   func(t *testing.T, data []byte) []byte // the plan's text, when set
		edits []edit                                 // else these edits of it
		want  []Violation
	}{
		// duplicate keys
		{
			name: "a tensor id given twice", model: "chain",
			raw:  func(t *testing.T, d []byte) []byte { return dupLine(t, d, `"0:1": { "subgraph"`) },
			want: []Violation{{Malformed, `tensor_allocs: key "0:1" ` + twice}},
		},
		{
			name: "a tensor id given twice, read by encoding/json", model: "chain",
			raw:  func(t *testing.T, d []byte) []byte { return slowPath(t, dupLine(t, d, `"0:1": { "subgraph"`)) },
			want: []Violation{{Malformed, `tensor_allocs: key "0:1" ` + twice}},
		},
		{
			name: "a lifetime given twice", model: "chain",
			raw:  func(t *testing.T, d []byte) []byte { return dupLine(t, d, `"0:1": { "start_op"`) },
			want: []Violation{{Malformed, `tensor_lifetimes: key "0:1" ` + twice}},
		},
		{
			name: "a memory given twice", model: "constant",
			raw:  func(t *testing.T, d []byte) []byte { return dupLine(t, d, `"FLASH": { "arena"`) },
			want: []Violation{{Malformed, `constant_arenas: key "FLASH" ` + twice}},
		},
		{
			name: "a memory given twice, read by encoding/json", model: "constant",
			raw:  func(t *testing.T, d []byte) []byte { return slowPath(t, dupLine(t, d, `"FLASH": { "arena"`)) },
			want: []Violation{{Malformed, `constant_arenas: key "FLASH" ` + twice}},
		},
		{
			name: "a top-level key given twice", model: "chain",
			raw:  func(t *testing.T, d []byte) []byte { return slowPath(t, dupLine(t, d, `"alignment"`)) },
			want: []Violation{{Malformed, `plan.json: key "alignment" ` + twice}},
		},
		{
			name: "a key of a binding given twice", model: "chain",
			raw: func(t *testing.T, d []byte) []byte {
				return bytes.Replace(d, []byte(`"offset": 32,`), []byte(`"offset": 32, "offset": 0,`), 1)
			},
			want: []Violation{{Malformed, `tensor_allocs["0:1"].binding: key "offset" ` + twice}},
		},

		// tensor ids
		{
			name: "a tensor id with a leading zero", model: "chain",
			edits: []edit{rekey("tensor_allocs.0:3", "00:3")},
			want: []Violation{{Malformed, `tensor_allocs: key "00:3" is not a tensor id ` +
				`("<subgraph>:<tensor>", both decimal without sign or leading zeros)`}},
		},
		{
			name: "a negative tensor id", model: "chain",
			edits: []edit{rekey("tensor_allocs.0:3", "0:-1")},
			want: []Violation{{Malformed, `tensor_allocs: key "0:-1" is not a tensor id ` +
				`("<subgraph>:<tensor>", both decimal without sign or leading zeros)`}},
		},
		{
			name: "a tensor id that is a name", model: "chain",
			edits: []edit{rekey("tensor_lifetimes.0:3", "a")},
			want: []Violation{{Malformed, `tensor_lifetimes: key "a" is not a tensor id ` +
				`("<subgraph>:<tensor>", both decimal without sign or leading zeros)`}},
		},
		{
			name: "an entry of another tensor than its key's", model: "chain",
			edits: []edit{set("tensor_allocs.0:3.tensor", 2)},
			want:  []Violation{{Malformed, `tensor_allocs["0:3"]: subgraph 0 and tensor 2, but its key is the id of tensor 0:3`}},
		},
		{
			name: "an entry moved to another tensor's key", model: "chain",
			edits: []edit{rekey("tensor_allocs.0:3", "0:7")},
			want:  []Violation{{Malformed, `tensor_allocs["0:7"]: subgraph 0 and tensor 3, but its key is the id of tensor 0:7`}},
		},
		{
			name: "a lifetime of an id tensor_allocs does not have", model: "chain",
			edits: []edit{put("tensor_lifetimes.0:9", map[string]any{"start_op": 0, "end_op": 1})},
			want: []Violation{{Malformed,
				`tensor_lifetimes["0:9"]: tensor_allocs has no entry of id "0:9"; a lifetime is a scratch tensor allocation's`}},
		},
		{
			name: "a lifetime of a constant", model: "constant",
			edits: []edit{put("tensor_lifetimes.0:1", map[string]any{"start_op": 0, "end_op": 1})},
			want:  []Violation{{Malformed, `tensor_lifetimes["0:1"]: 0:1 (weights) has a lifetime but no scratch allocation`}},
		},
		{
			name: "tensor_allocs as an array", model: "chain",
			edits: []edit{set("tensor_allocs", []any{})},
			want:  []Violation{{Malformed, `tensor_allocs: an array, want an object`}},
		},

		// one map entry per arena, under its memory
		{
			name: "an arena without its map entry", model: "chain",
			edits: []edit{del("arena_usages.SRAM")},
			want:  []Violation{{Malformed, `arenas[0]: scratch arena "scratch_sram" has no entry arena_usages["SRAM"]`}},
		},
		{
			name: "an entry under another memory than its arena's", model: "constant",
			edits: []edit{rekey("constant_arenas.FLASH", "SRAM"), set("constant_arenas.SRAM.memory", "SRAM")},
			want: []Violation{
				{Malformed, `constant_arenas["SRAM"]: arena 1 (constant_flash) is in "FLASH"; want its entry under that memory`},
				{Malformed, `arenas[1]: constant arena "constant_flash" has no entry constant_arenas["FLASH"]`},
			},
		},
		{
			name: "an entry whose memory is not its key", model: "constant",
			edits: []edit{rekey("constant_arenas.FLASH", "SRAM")},
			want: []Violation{
				{Malformed, `constant_arenas["SRAM"].memory: "FLASH", but the entry is under "SRAM"; want its key`},
				{Malformed, `arenas[1]: constant arena "constant_flash" has no entry constant_arenas["FLASH"]`},
			},
		},
		{
			name: "two scratch arenas in one memory", model: "chain",
			edits: twoScratchArenas(),
			want: []Violation{{Malformed,
				`arenas[1]: a second scratch arena in "SRAM" (the first is arenas[0]); arena_usages keys arenas by memory, one per memory`}},
		},
		// a scratch arena under a read-only bank: banks_test.go's "scratch in flash"

		// single source, cold iff source == memory
		{
			name: "a cold constant arena with a null source", model: "constant",
			edits: []edit{set("arenas.1.source_memory", nil), set("tensor_allocs.0:1.binding.source_memory", nil),
				set("tensor_allocs.0:2.binding.source_memory", nil), set("tensor_allocs.0:4.binding.source_memory", nil)},
			want: []Violation{{Malformed, `arenas[1]: a constant arena has source_memory null; ` +
				`want its memory "FLASH" when cold, the bank it is copied from when staged`}},
		},
		{
			name: "a cold constant binding with a null source", model: "constant",
			edits: []edit{set("tensor_allocs.0:2.binding.source_memory", nil)},
			want:  []Violation{{Malformed, `tensor_allocs["0:2"]: binding.source_memory is null, but arena "constant_flash" has "FLASH"`}},
		},
		{
			name: "a staged binding with another source than its arena's", model: "banks",
			edits: []edit{set("tensor_allocs.0:1.binding.source_memory", "SRAM")},
			want: []Violation{
				{Malformed, `tensor_allocs["0:1"]: binding.source_memory is "SRAM", but arena "constant_sram" has "MRAM"`},
				{RuleViolated, `0:1 (weights) has source_memory "SRAM", but asks for "SRAM" staged from "MRAM" (rules[1])`},
			},
		},
		{
			name: "constant_arenas with another source than its arena's", model: "banks",
			edits: []edit{set("constant_arenas.SRAM.source_memory", "DTCM")},
			want:  []Violation{{Malformed, `constant_arenas["SRAM"]: source_memory "DTCM", but arena "constant_sram" has "MRAM"`}},
		},
		{
			name: "a staged arena's mode cold", model: "banks",
			edits: []edit{set("constant_arenas.SRAM.mode", "cold")},
			want: []Violation{{Malformed, `constant_arenas["SRAM"]: mode "cold" with source_memory "MRAM" in "SRAM"; ` +
				`want "staged" (cold exactly when the source is the memory)`}},
		},
		{
			name: "a cold arena's mode staged", model: "constant",
			edits: []edit{set("constant_arenas.FLASH.mode", "staged")},
			want: []Violation{{Malformed, `constant_arenas["FLASH"]: mode "staged" with source_memory "FLASH" in "FLASH"; ` +
				`want "cold" (cold exactly when the source is the memory)`}},
		},
		{
			name: "a scratch binding with a source", model: "chain",
			edits: []edit{set("tensor_allocs.0:1.binding.source_memory", "SRAM")},
			want:  []Violation{{Malformed, `tensor_allocs["0:1"]: scratch tensor 0:1 (a) has source_memory "SRAM"`}},
		},
		{
			name: "a persistent binding with a source", model: "variable",
			edits: []edit{set("tensor_allocs.0:1.binding.source_memory", "SRAM")},
			want:  []Violation{{Malformed, `tensor_allocs["0:1"]: persistent tensor 0:1 (state) has source_memory "SRAM"`}},
		},
		{
			name: "a persistent arena with a source", model: "variable",
			edits: []edit{set("arenas.1.source_memory", "SRAM")},
			want:  []Violation{{Malformed, `arenas[1]: a persistent arena has source_memory "SRAM"; only constant arenas have one`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := readPlan(t, tt.model)
			if tt.raw != nil {
				data = tt.raw(t, data)
			} else {
				data = applyEdits(t, data, tt.edits)
			}
			assert.Equal(t, tt.want, Plan(mustModel(tt.model), data))
		})
	}
}

// TestPlanV3Refused: a plan of schema_version 3 (its maps arrays) is
// refused for its version alone, with what to do about it.
func TestPlanV3Refused(t *testing.T) {
	got := Plan(mustModel("chain"), readPlan(t, "chain.v3"))
	assert.Equal(t, []Violation{{Malformed,
		"plan.json: schema_version is 3, but this verifier reads version 4; compile the model again to write one"}}, got)
}

// TestPlanKeyOrder: a reader must not depend on the order of an object's
// keys. With tensor_allocs and tensor_lifetimes written in reverse, and
// the resource plan's keys of subgraphs 0 to 3 in any order, the plan is
// as clean and hashes as before: the verifier reads the entries by
// (subgraph, tensor) whatever the file's order.
func TestPlanKeyOrder(t *testing.T) {
	for _, name := range []string{"resource", "while", "banks"} {
		t.Run(name, func(t *testing.T) {
			data := readPlan(t, name)
			reversed := reverseEntries(t, reverseEntries(t, data, "tensor_allocs"), "tensor_lifetimes")
			require.NotEqual(t, data, reversed)
			assert.Nil(t, Plan(mustModel(name), reversed))
			want, bad := PlanHash(data)
			require.Nil(t, bad)
			got, bad := PlanHash(reversed)
			require.Nil(t, bad)
			assert.Equal(t, want, got)
		})
	}
}

// reverseEntries reverses the lines of the entries of a map written one
// per line in testdata's layout.
func reverseEntries(t *testing.T, data []byte, key string) []byte {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, `  "`+key+`": {`)
	require.NotEqual(t, -1, start, key)
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "    ") {
		end++
	}
	entries := slices.Clone(lines[start+1 : end])
	for i := range entries {
		entries[i] = strings.TrimSuffix(entries[i], ",")
	}
	slices.Reverse(entries)
	for i := range entries[:len(entries)-1] {
		entries[i] += ","
	}
	copy(lines[start+1:end], entries)
	out := []byte(strings.Join(lines, "\n"))
	require.True(t, json.Valid(out), key)
	return out
}

// TestCKeyOrder: the C tables' rows follow tensor_allocs by (subgraph,
// tensor) numerically, not the file's key order: a golden plan with its
// keys re-ordered as encoding/json writes a map ("0:10" before "0:2")
// still checks clean against its C module.
func TestCKeyOrder(t *testing.T) {
	g := readGolden(t, "keyword_scrambled_8bit")
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(g.files["plan.json"]))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	allocs, ok := doc["tensor_allocs"].(map[string]any)
	require.True(t, ok, "tensor_allocs is an object")
	require.Contains(t, allocs, "0:10", "a plan with ten tensors or more")
	sorted, err := json.Marshal(doc)
	require.NoError(t, err)
	require.Less(t, bytes.Index(sorted, []byte(`"0:10":`)), bytes.Index(sorted, []byte(`"0:2":`)))
	g.files["plan.json"] = sorted
	assert.Nil(t, g.check())
}

// TestDuplicateKey: fastJSON and the token pass of decode's slow path
// find the first key given twice in one object, and name the object as
// the verifier's messages name entries.
func TestDuplicateKey(t *testing.T) {
	tests := []struct {
		doc  string
		want *dupKey // nil: none
	}{
		{`{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]}`, nil},
		{`{"a": 1, "a": 1}`, &dupKey{"", "a"}},
		{`{"a": {"b": [0, {"c": 1, "c": 2}]}}`, &dupKey{"a.b[1]", "c"}},
		{`[{}, [{"x": {}, "x": []}]]`, &dupKey{"[1][0]", "x"}},
		{`{"tensor_allocs": {"0:1": {"binding": {"offset": 0, "offset": 16}}}}`, &dupKey{`tensor_allocs["0:1"].binding`, "offset"}},
		{`{"arena_usages": {"SRAM": {}, "DTCM": {}, "SRAM": {}}}`, &dupKey{"arena_usages", "SRAM"}},
		{`{"a": {"k": 1, "k": 2}, "b": {"j": 1, "j": 2}}`, &dupKey{"a", "k"}},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			_, dup, ok := fastJSON([]byte(tt.doc))
			assert.Equal(t, tt.want, dup, "fastJSON")
			assert.Equal(t, tt.want == nil, ok, "fastJSON reads it")
			assert.Equal(t, tt.want, duplicateKey([]byte(tt.doc)), "token pass")
		})
	}
}
