package verify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

func readPlan(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	return data
}

// kindsOf returns the distinct kinds of vs, sorted.
func kindsOf(vs []Violation) []Kind {
	var ks []Kind
	for _, v := range vs {
		ks = append(ks, v.Kind)
	}
	return sortedKinds(ks)
}

func sortedKinds(ks []Kind) []Kind {
	ks = slices.Clone(ks)
	slices.Sort(ks)
	return slices.Compact(ks)
}

// edit is one change to a decoded plan.json, addressed by a dotted path of
// object keys and array indices ("tensor_allocs.2.binding.offset").
type edit func(t *testing.T, doc any) any

// walkTo returns the container holding the last element of path, and that
// element's key.
func walkTo(t *testing.T, doc any, path string) (any, string) {
	t.Helper()
	keys := strings.Split(path, ".")
	cur := doc
	for _, k := range keys[:len(keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			require.Contains(t, c, k, path)
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			require.NoError(t, err, path)
			require.Less(t, i, len(c), path)
			cur = c[i]
		default:
			t.Fatalf("%s: cannot index %T", path, cur)
		}
	}
	return cur, keys[len(keys)-1]
}

// set replaces the value at path.
func set(path string, v any) edit {
	return func(t *testing.T, doc any) any {
		c, k := walkTo(t, doc, path)
		switch c := c.(type) {
		case map[string]any:
			require.Contains(t, c, k, path)
			c[k] = v
		case []any:
			i, err := strconv.Atoi(k)
			require.NoError(t, err, path)
			c[i] = v
		}
		return doc
	}
}

// put sets an object key at path, which need not exist yet.
func put(path string, v any) edit {
	return func(t *testing.T, doc any) any {
		c, k := walkTo(t, doc, path)
		m, ok := c.(map[string]any)
		require.True(t, ok, path)
		m[k] = v
		return doc
	}
}

// del removes the object key or array element at path.
func del(path string) edit {
	return func(t *testing.T, doc any) any {
		parent, k := walkTo(t, doc, path)
		switch c := parent.(type) {
		case map[string]any:
			require.Contains(t, c, k, path)
			delete(c, k)
		case []any:
			i, err := strconv.Atoi(k)
			require.NoError(t, err, path)
			dir, _, _ := strings.Cut(path, "."+k)
			set(dir, slices.Delete(c, i, i+1))(t, doc)
		}
		return doc
	}
}

// insert puts v into the array at path before the given index.
func insert(path string, v any) edit {
	return func(t *testing.T, doc any) any {
		parent, k := walkTo(t, doc, path)
		c, ok := parent.([]any)
		require.True(t, ok, path)
		i, err := strconv.Atoi(k)
		require.NoError(t, err, path)
		dir := strings.TrimSuffix(path, "."+k)
		return set(dir, slices.Insert(c, i, v))(t, doc)
	}
}

// applyEdits applies edits to a plan and, unless an edit changed
// plan_hash, gives it the hash of its new fields, so that each case shows
// the violation its edit causes rather than a HashMismatch too.
func applyEdits(t *testing.T, data []byte, edits []edit) []byte {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal(data, &doc))
	top, _ := doc.(map[string]any)
	before := top["plan_hash"]
	for _, e := range edits {
		doc = e(t, doc)
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	if top, _ := doc.(map[string]any); top != nil && top["plan_hash"] == before {
		if h, bad := PlanHash(out); bad == nil {
			top["plan_hash"] = h
			out, err = json.Marshal(doc)
			require.NoError(t, err)
		}
	}
	return out
}

func scratchAlloc(s, tn int, name string, size, offset int) map[string]any {
	return map[string]any{"subgraph": s, "tensor": tn, "name": name, "size": size,
		"binding":  map[string]any{"role": "scratch", "arena": 0, "memory": "SRAM", "offset": offset, "source_memory": nil},
		"alias_of": nil}
}

// arenaSet sets a figure of arena id both in arenas and in its heliaAOT
// entry view ("arena_usages.SRAM"), which repeats it: field is the view's
// key (total_size, used or memory; a new memory moves the view to that
// key).
func arenaSet(view string, id int, field string, v any) []edit {
	key := map[string]string{"total_size": "size", "used": "used", "memory": "memory"}[field]
	if field == "memory" {
		return []edit{set(fmt.Sprintf("arenas.%d.memory", id), v), rekey(view, v.(string)), set(view[:strings.LastIndex(view, ".")+1]+v.(string)+".memory", v)}
	}
	return []edit{set(fmt.Sprintf("arenas.%d.%s", id, key), v), set(view+"."+field, v)}
}

// rekey moves the entry at path to the key to of the same object.
func rekey(path, to string) edit {
	return func(t *testing.T, doc any) any {
		parent, k := walkTo(t, doc, path)
		m, ok := parent.(map[string]any)
		require.True(t, ok, path)
		require.Contains(t, m, k, path)
		m[to] = m[k]
		delete(m, k)
		return doc
	}
}

// join concatenates edit lists.
func join(lists ...[]edit) []edit {
	var out []edit
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestPlanClean(t *testing.T) {
	for _, name := range []string{"chain", "while", "variable", "constant", "alias", "resource", "banks"} {
		t.Run(name, func(t *testing.T) {
			got := Plan(mustModel(name), readPlan(t, name))
			assert.Nil(t, got, "%v", got)
		})
	}
}

// violationCase is one named change to a clean plan, or to its model, and
// the distinct kinds of violation it must cause.
type violationCase struct {
	name  string
	model string             // a key of models, and the plan in testdata/<model>.json
	mod   func(*graph.Model) // changes the model when set
	edits []edit             // applied to the clean plan
	raw   string             // replaces the plan when set
	want  []Kind             // the distinct kinds expected
}

func runViolationCases(t *testing.T, tests []violationCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := readPlan(t, tt.model)
			if tt.raw != "" {
				data = []byte(tt.raw)
			} else {
				data = applyEdits(t, data, tt.edits)
			}
			m := mustModel(tt.model)
			if tt.mod != nil {
				tt.mod(m)
			}
			got := Plan(m, data)
			for _, v := range got {
				t.Log(v)
			}
			if len(tt.want) == 0 {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, sortedKinds(tt.want), kindsOf(got))
		})
	}
}

func TestPlanViolations(t *testing.T) {
	runViolationCases(t, []violationCase{
		// chain
		{
			name: "two live tensors overlap", model: "chain",
			edits: []edit{set("tensor_allocs.0:2.binding.offset", 32)},
			want:  []Kind{Overlap},
		},
		{
			name: "negative offset", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.offset", -16)},
			want:  []Kind{OutOfBounds},
		},
		{
			name: "offset past total_size", model: "chain",
			edits: []edit{set("tensor_allocs.0:3.binding.offset", 64)},
			want:  []Kind{OutOfBounds, HeightMismatch}, // used no longer matches either
		},
		{
			name: "total_size below used", model: "chain",
			edits: arenaSet("arena_usages.SRAM", 0, "total_size", 48),
			want:  []Kind{OutOfBounds, HeightMismatch},
		},
		{
			name: "arena_usages disagrees with arenas", model: "chain",
			edits: []edit{set("arena_usages.SRAM.total_size", 48)},
			want:  []Kind{Malformed},
		},
		{
			name: "misaligned offset", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.offset", 8)},
			want:  []Kind{Misaligned},
		},
		{
			name: "lifetime ends before the last read", model: "chain",
			edits: []edit{set("tensor_lifetimes.0:0.end_op", 0)},
			want:  []Kind{UseOutsideLifetime},
		},
		{
			name: "lifetime starts after the write", model: "chain",
			edits: []edit{set("tensor_lifetimes.0:1.start_op", 2)},
			want:  []Kind{UseOutsideLifetime},
		},
		{
			name: "lifetime past the timeline", model: "chain",
			edits: []edit{set("tensor_lifetimes.0:3.end_op", 4)},
			want:  []Kind{Malformed},
		},
		{
			name: "missing alloc", model: "chain",
			edits: []edit{del("tensor_allocs.0:3"), del("tensor_lifetimes.0:3")},
			want:  []Kind{Unplaced},
		},
		{
			name: "missing lifetime", model: "chain",
			edits: []edit{del("tensor_lifetimes.0:3")},
			want:  []Kind{Malformed},
		},
		{
			name: "used mismatch", model: "chain",
			edits: arenaSet("arena_usages.SRAM", 0, "used", 48),
			want:  []Kind{HeightMismatch},
		},
		{
			name: "total_size not a multiple of the alignment", model: "chain",
			edits: join(arenaSet("arena_usages.SRAM", 0, "total_size", 72), []edit{set("arena_usages.SRAM.fragmentation", 0.1111)}),
			want:  []Kind{HeightMismatch},
		},
		{
			name: "wrong lower_bound", model: "chain",
			edits: []edit{set("arena_usages.SRAM.lower_bound", 48)},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "wrong peak_tensors", model: "chain",
			edits: []edit{del("arena_usages.SRAM.peak_tensors.1")},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "size differs from the tensor's", model: "chain",
			edits: []edit{set("tensor_allocs.0:1.size", 16)},
			want:  []Kind{Malformed},
		},
		{
			name: "name differs from the tensor's", model: "chain",
			edits: []edit{set("tensor_allocs.0:1.name", "z")},
			want:  []Kind{Malformed},
		},
		{
			name: "unknown memory", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.memory", "DRAM")},
			want:  []Kind{Malformed},
		},
		{
			name: "unknown role", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.role", "heap")},
			want:  []Kind{Malformed},
		},
		{
			name: "tensor does not exist", model: "chain",
			edits: []edit{put("tensor_allocs.0:99", scratchAlloc(0, 99, "ghost", 16, 0))},
			want:  []Kind{Malformed},
		},
		{name: "garbage JSON", model: "chain", raw: "not json", want: []Kind{Malformed}},
		{name: "truncated JSON", model: "chain", raw: `{"schema_version": 1, "tensor_allocs": [`, want: []Kind{Malformed}},
		{name: "trailing data", model: "chain", raw: `{} {}`, want: []Kind{Malformed}},
		{name: "not an object", model: "chain", raw: `[]`, want: []Kind{Malformed}},
		{
			name: "missing key", model: "chain",
			edits: []edit{del("alignment")},
			want:  []Kind{Malformed},
		},
		{
			name: "missing nested key", model: "chain",
			edits: []edit{del("model.steps")},
			want:  []Kind{Malformed},
		},
		{
			name: "mistyped key", model: "chain",
			edits: []edit{set("tensor_allocs", "none")},
			want:  []Kind{Malformed},
		},
		{
			name: "alloc without an offset is dropped", model: "chain",
			edits: []edit{del("tensor_allocs.0:1.binding.offset")},
			want:  []Kind{Malformed}, // and nothing that follows from leaving it out
		},
		{
			name: "fractional offset", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.offset", 0.5)},
			want:  []Kind{Malformed},
		},
		{
			name: "schema_version 1", model: "chain",
			edits: []edit{set("schema_version", 1)},
			want:  []Kind{Malformed},
		},
		{
			name: "steps differ from the model's", model: "chain",
			edits: []edit{set("model.steps", 5)},
			want:  []Kind{Malformed},
		},
		{
			name: "zero alignment", model: "chain",
			edits: []edit{set("alignment", 0)},
			want:  []Kind{Malformed},
		},

		// while
		{
			name: "WHILE output dies before its reader", model: "while",
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 6)},
			want:  []Kind{UseOutsideLifetime},
		},
		{
			name: "WHILE input dies inside the loop body", model: "while",
			edits: []edit{set("tensor_lifetimes.0:0.end_op", 5)},
			want:  []Kind{UseOutsideLifetime},
		},
		{
			name: "body tensor overlaps a live caller tensor", model: "while",
			edits: []edit{set("tensor_allocs.2:0.binding.offset", 16)},
			want:  []Kind{Overlap},
		},
		{
			name: "cond and body tensors may share bytes", model: "while",
			edits: []edit{set("tensor_allocs.1:1.binding.offset", 32), set("tensor_allocs.1:0.binding.offset", 48)},
			want:  nil,
		},
		{
			name: "cond input unplaced", model: "while",
			edits: []edit{del("tensor_allocs.1:0"), del("tensor_lifetimes.1:0"),
				set("arena_usages.SRAM.peak_step", 5),
				set("arena_usages.SRAM.peak_tensors", []any{
					map[string]any{"subgraph": 0, "tensor": 0}, map[string]any{"subgraph": 0, "tensor": 1},
					map[string]any{"subgraph": 2, "tensor": 0}, map[string]any{"subgraph": 2, "tensor": 1},
				})},
			want: []Kind{Unplaced},
		},

		// variable
		{
			name: "persistent tensors overlap", model: "variable",
			edits: []edit{set("tensor_allocs.0:1.binding.offset", 16)},
			want:  []Kind{Overlap},
		},
		{
			name: "persistent arena too small", model: "variable",
			edits: arenaSet("persistent_arenas.SRAM", 1, "total_size", 32),
			want:  []Kind{OutOfBounds, HeightMismatch},
		},
		{
			name: "persistent used mismatch", model: "variable",
			edits: arenaSet("persistent_arenas.SRAM", 1, "used", 32),
			want:  []Kind{HeightMismatch},
		},
		{
			name: "persistent offset misaligned", model: "variable",
			// state at [40, 56) above state2 at [0, 32), heights to match
			edits: join([]edit{set("tensor_allocs.0:1.binding.offset", 40), set("tensor_allocs.0:3.binding.offset", 0)},
				arenaSet("persistent_arenas.SRAM", 1, "used", 56), arenaSet("persistent_arenas.SRAM", 1, "total_size", 64)),
			want: []Kind{Misaligned},
		},
		{
			name: "variable placed as scratch", model: "variable",
			edits: []edit{set("tensor_allocs.0:1.binding.role", "scratch")},
			want:  []Kind{WrongClass, Malformed}, // a scratch tensor needs a lifetime
		},
		{
			name: "persistent tensor unplaced", model: "variable",
			edits: []edit{del("tensor_allocs.0:1")},
			want:  []Kind{Unplaced},
		},

		// constant
		{
			name: "constants overlap", model: "constant",
			edits: []edit{set("tensor_allocs.0:2.binding.offset", 16)},
			want:  []Kind{Overlap},
		},
		{
			name: "constant unplaced", model: "constant",
			edits: []edit{del("tensor_allocs.0:2")},
			want:  []Kind{Unplaced},
		},
		{
			name: "constant size is not its buffer's", model: "constant",
			edits: []edit{set("tensor_allocs.0:1.size", 16)},
			want:  []Kind{Malformed},
		},
		{
			name: "unused constant placed", model: "constant",
			edits: []edit{put("tensor_allocs.0:6", map[string]any{
				"subgraph": 0, "tensor": 6, "name": "dead", "size": 64,
				"binding":  map[string]any{"role": "constant", "arena": 1, "memory": "FLASH", "offset": 16, "source_memory": "FLASH"},
				"alias_of": nil,
			})},
			want: []Kind{WrongClass},
		},
		{
			name: "constant placed as scratch", model: "constant",
			edits: []edit{set("tensor_allocs.0:1.binding.role", "scratch")},
			want:  []Kind{WrongClass, Malformed}, // and FLASH holds no scratch arena
		},
		{
			name: "scratch tensor placed as constant", model: "constant",
			edits: []edit{set("tensor_allocs.0:0.binding.role", "constant")},
			// SRAM holds no constant arena, and the scratch arena's peak
			// no longer counts the input.
			want: []Kind{WrongClass, HeightMismatch, Malformed},
		},
		{
			name: "a cold arena's mode staged", model: "constant",
			edits: []edit{set("constant_arenas.FLASH.mode", "staged")},
			want:  []Kind{Malformed}, // its source is its memory
		},
	})
}

func TestPlanMessages(t *testing.T) {
	tests := []struct {
		name  string
		model string
		edits []edit
		want  []Violation
	}{
		{
			name: "overlap", model: "chain",
			edits: []edit{set("tensor_allocs.0:2.binding.offset", 32)},
			want: []Violation{
				{Overlap, `0:1 (a) at [32, 64) and 0:2 (b) at [32, 64) share bytes [32, 64) of scratch arena "scratch_sram", both live at steps 2..2`},
				{Overlap, `0:2 (b) at [32, 64) and 0:3 (output) at [32, 48) share bytes [32, 48) of scratch arena "scratch_sram", both live at steps 3..3`},
			},
		},
		{
			name: "use outside lifetime", model: "while",
			edits: []edit{set("tensor_lifetimes.0:0.end_op", 5)},
			want: []Violation{
				{UseOutsideLifetime, `0:0 (x) is used by op 0:0 (WHILE) at steps 1..6, outside its lifetime 0..5`},
			},
		},
		{
			name: "unplaced", model: "constant",
			edits: []edit{del("tensor_allocs.0:2")},
			want: []Violation{
				{Unplaced, `0:2 (bias) (constant, 16 bytes), used by op 0:0 (FULLY_CONNECTED), has no allocation`},
			},
		},
		{
			name: "alias at another offset", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.binding.offset", 0)},
			want: []Violation{
				{BadAlias, `0:2 (r) aliases 0:1 (a), but it is at offset 0 and the root at 32`},
			},
		},
		{
			name: "a lifetime that outlives an in-place write over it", model: "inplace",
			// a is declared live at step 3, after RELU wrote b over it.
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 3), set("arena_usages.SRAM.lower_bound_without_aliases", 80)},
			want: []Violation{
				{Overlap, `0:1 (a) at [16, 48) and 0:2 (b) at [16, 48) share bytes [16, 48) of scratch arena "scratch_sram", ` +
					`both live at steps 2..3, members of one alias group that no view or in-place write relates there`},
			},
		},
		{
			name: "variable too small", model: "resource",
			edits: []edit{set("resource_variables.0.size", 32)},
			want: []Violation{
				{OutOfBounds, `resource variable "state" holds 32 bytes, but op 3:1 (ASSIGN_VARIABLE) writes 48 bytes through 3:0 (t_h)`},
			},
		},
		{
			name: "variable overlaps a persistent tensor", model: "resource",
			edits: []edit{set("resource_variables.0.offset", 0)},
			want: []Violation{
				{Overlap, `0:8 (acc) at [0, 16) and resource variable "state" at [0, 48) share bytes [0, 16) of persistent arena "persistent_sram"`},
			},
		},
		{
			name: "skipped tensor that needs bytes", model: "alias",
			edits: []edit{del("tensor_allocs.0:5"), del("tensor_lifetimes.0:5"),
				insert("skipped_tensors.0", map[string]any{"subgraph": 0, "tensor": 5, "name": "out", "reason": "zero-size"})},
			want: []Violation{
				{Unplaced, `0:5 (out) (scratch, 16 bytes), used by op 0:4 (FULLY_CONNECTED), is skipped as "zero-size", but needs bytes`},
			},
		},
		{
			name: "missing key", model: "chain",
			edits: []edit{del("tensor_allocs.0:1.binding.offset"), set("tensor_allocs.0:1.size", "32")},
			want: []Violation{
				{Malformed, `tensor_allocs["0:1"].size: string "32", want an integer`},
				{Malformed, `tensor_allocs["0:1"].binding: missing key "offset"`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(mustModel(tt.model), applyEdits(t, readPlan(t, tt.model), tt.edits))
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestPlanVariableWithData: TFLM keeps is_variable tensors in its
// persistent area even when their buffer holds initial data, so such a
// tensor must be placed as persistent, with its shape's size.
func TestPlanVariableWithData(t *testing.T) {
	m := variableModel()
	m.Buffers = []graph.Buffer{{}, {Data: make([]byte, 16)}}
	m.Subgraphs[0].Tensors[1].Buffer = 1
	assert.Nil(t, Plan(m, readPlan(t, "variable")))
}

func TestPlanBadModel(t *testing.T) {
	cycle := chainModel()
	cycle.Subgraphs[0].Ops[1].Called = []graph.SubgraphIndex{0}
	missing := chainModel()
	missing.Subgraphs[0].Ops[1].Inputs = ids(7)
	for name, m := range map[string]*graph.Model{
		"nil model":    nil,
		"no subgraphs": {},
		"call cycle":   cycle,
		"tensor index": missing,
	} {
		t.Run(name, func(t *testing.T) {
			got := Plan(m, readPlan(t, "chain"))
			assert.Equal(t, []Kind{Malformed}, kindsOf(got), "%v", got)
		})
	}
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "Kind(0)", Kind(0).String())
	assert.Equal(t, "Overlap", Overlap.String())
	assert.Equal(t, "Malformed", Malformed.String())
	assert.Equal(t, "BadAlias", BadAlias.String())
	assert.Equal(t, "OverCapacity", OverCapacity.String())
	assert.Equal(t, "RuleViolated", RuleViolated.String())
	assert.Equal(t, "BadSchedule", BadSchedule.String())
	assert.Equal(t, "HashMismatch", HashMismatch.String())
	assert.Equal(t, "CMismatch", CMismatch.String())
	assert.Equal(t, "OwnOffset", OwnOffset.String())
	assert.Equal(t, "BadStripes", BadStripes.String())
	assert.Equal(t, "RewriteMismatch", RewriteMismatch.String())
	assert.Equal(t, "ModelMismatch", ModelMismatch.String())
	assert.Equal(t, "Kind(19)", Kind(19).String())
	assert.Equal(t, "Unplaced: 0:1 (a) has no allocation", Violation{Unplaced, "0:1 (a) has no allocation"}.String())
}
