package verify

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

func TestResolveVariables(t *testing.T) {
	c := &checker{m: resourceModel()}
	vars := c.resolveVariables()
	require.Len(t, vars, 2)

	state := vars[0]
	assert.Equal(t, varKey{"", "state"}, state.key)
	// VAR_HANDLE output, WHILE result, cond and body inputs, both IF branches.
	assert.Equal(t, []graph.TensorRef{ref(0, 1), ref(0, 4), ref(1, 1), ref(2, 1), ref(3, 0), ref(4, 0)},
		slices.SortedFunc(maps.Keys(state.handles), cmpRef))
	assert.Equal(t, int64(48), state.need)
	assert.Equal(t, "op 3:1 (ASSIGN_VARIABLE) writes", state.needBy)
	assert.Equal(t, ref(3, 0), state.needVia)

	unnamed := vars[1]
	assert.Equal(t, varKey{"", "#0:1"}, unnamed.key)
	assert.Equal(t, []graph.TensorRef{ref(0, 2)}, slices.SortedFunc(maps.Keys(unnamed.handles), cmpRef))
	assert.Equal(t, int64(16), unnamed.need)
}

// TestResolveAcrossContainers checks TFLM's rule (micro_resource_variable.cc,
// FindId, at TFLM 90b983c): a handle without a container is a handle of
// every variable of its shared_name in a container, and counts for each
// one's size.
func TestResolveAcrossContainers(t *testing.T) {
	type want struct {
		key     varKey
		handles []graph.TensorRef
		need    int64
	}
	tests := []struct {
		name    string
		handles []graph.Op
		want    []want
	}{
		{"with and without a container", []graph.Op{varHandleIn(0, "c", "x"), varHandle(1, "", "x")},
			[]want{{varKey{"c", "x"}, []graph.TensorRef{ref(0, 0), ref(0, 1)}, 8}}},
		{"two containers", []graph.Op{varHandle(0, "", "x"), varHandleIn(1, "c", "x"), varHandleIn(2, "d", "x")},
			[]want{{varKey{"c", "x"}, []graph.TensorRef{ref(0, 0), ref(0, 1)}, 8}, {varKey{"d", "x"}, []graph.TensorRef{ref(0, 0), ref(0, 2)}, 12}}},
		{"container \"\"", []graph.Op{varHandleIn(0, "", "x"), varHandle(1, "", "x")},
			[]want{{varKey{"", "x"}, []graph.TensorRef{ref(0, 0), ref(0, 1)}, 8}}},
		{"no container", []graph.Op{varHandle(0, "", "x"), varHandle(1, "", "x")},
			[]want{{varKey{"", "x"}, []graph.TensorRef{ref(0, 0), ref(0, 1)}, 8}}},
		{"unnamed, beside a variable named \"\" in a container", []graph.Op{varHandleIn(0, "c", ""), varHandle(1, "", "")},
			[]want{{varKey{"c", ""}, []graph.TensorRef{ref(0, 0), ref(0, 1)}, 8}}},
		{"unnamed", []graph.Op{varHandle(0, "", ""), varHandle(1, "", "")},
			[]want{{varKey{"", "#0:0"}, []graph.TensorRef{ref(0, 0)}, 4}, {varKey{"", "#0:1"}, []graph.TensorRef{ref(0, 1)}, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Handle i reads a value of 4·(i+1) bytes.
			sg := graph.Subgraph{Name: "main"}
			for range tt.handles {
				sg.Tensors = append(sg.Tensors, resource("h"))
			}
			sg.Ops = tt.handles
			for i := range tt.handles {
				v := graph.TensorID(len(sg.Tensors))
				sg.Tensors = append(sg.Tensors, tensor("v", graph.Int32, int32(i+1)))
				sg.Ops = append(sg.Ops, readVariable(graph.TensorID(i), v))
				sg.Outputs = append(sg.Outputs, v)
			}
			c := &checker{m: &graph.Model{Subgraphs: []graph.Subgraph{sg}}}
			var got []want
			for _, v := range c.resolveVariables() {
				got = append(got, want{v.key, slices.SortedFunc(maps.Keys(v.handles), cmpRef), v.need})
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// In testdata/resource.json, resource_variables are "state" at [16, 64)
// and "#0:1" at [64, 80), beside acc (tensor_allocs.4) at [0, 16) of the
// persistent arena; state's handles are 0:1, 0:4, 1:1, 2:1, 3:0, 4:0, and
// skipped_tensors are h, h2, h_out, name, c_h, b_h, t_h, e_h.
func TestPlanResourceVariables(t *testing.T) {
	unnamed := map[string]any{"container": "", "shared_name": "#0:1", "size": 16, "arena": 1, "memory": "SRAM", "offset": 64,
		"handles": []any{refJSON(0, 2)}}
	runViolationCases(t, []violationCase{
		{
			name: "variable overlaps a persistent tensor", model: "resource",
			edits: []edit{set("resource_variables.0.offset", 0)},
			want:  []Kind{Overlap},
		},
		{
			name: "variables overlap", model: "resource",
			edits: join([]edit{set("resource_variables.1.offset", 48)}, arenaSet("persistent_arenas.SRAM", 1, "used", 64)),
			want:  []Kind{Overlap},
		},
		{
			name: "variable too small for its largest value", model: "resource",
			edits: []edit{set("resource_variables.0.size", 32)},
			want:  []Kind{OutOfBounds},
		},
		{
			name: "variable larger than its largest value", model: "resource",
			edits: join([]edit{set("resource_variables.1.size", 32)},
				arenaSet("persistent_arenas.SRAM", 1, "used", 96), arenaSet("persistent_arenas.SRAM", 1, "total_size", 96)),
			want: []Kind{Malformed},
		},
		{
			name: "missing variable", model: "resource",
			edits: []edit{del("resource_variables.0")},
			want:  []Kind{Unplaced},
		},
		{
			name: "unnamed VAR_HANDLE under another name", model: "resource",
			edits: []edit{set("resource_variables.1.shared_name", "#0:2")},
			want:  []Kind{Malformed, Unplaced},
		},
		{
			name: "variable listed twice", model: "resource",
			edits: []edit{insert("resource_variables.2", unnamed)},
			want:  []Kind{Malformed}, // allocated twice; the copy takes no further part
		},
		{
			name: "WHILE result left out of the handles", model: "resource",
			edits: []edit{del("resource_variables.0.handles.1")},
			want:  []Kind{Malformed},
		},
		{
			name: "else branch input left out of the handles", model: "resource",
			edits: []edit{del("resource_variables.0.handles.5")},
			want:  []Kind{Malformed},
		},
		{
			name: "another variable's handle listed", model: "resource",
			edits: []edit{insert("resource_variables.0.handles.0", refJSON(0, 2))},
			want:  []Kind{Malformed},
		},
		{
			name: "handle listed twice", model: "resource",
			edits: []edit{insert("resource_variables.0.handles.0", refJSON(0, 1))},
			want:  []Kind{Malformed},
		},
		{
			name: "variable past the arena's end", model: "resource",
			edits: []edit{set("resource_variables.1.offset", 80)},
			want:  []Kind{OutOfBounds, HeightMismatch}, // used no longer matches
		},
		{
			name: "variable misaligned", model: "resource",
			edits: join([]edit{set("resource_variables.1.offset", 72)},
				arenaSet("persistent_arenas.SRAM", 1, "used", 88), arenaSet("persistent_arenas.SRAM", 1, "total_size", 96)),
			want: []Kind{Misaligned},
		},
		{
			name: "persistent used leaves out the variables", model: "resource",
			edits: arenaSet("persistent_arenas.SRAM", 1, "used", 16),
			want:  []Kind{HeightMismatch},
		},
		{
			name: "variable in a memory without a persistent arena", model: "resource",
			edits: []edit{set("resource_variables.1.memory", "DRAM")},
			want:  []Kind{Malformed, HeightMismatch},
		},
		{
			name: "two VAR_HANDLEs with one name are one variable", model: "resource",
			mod: func(m *graph.Model) {
				m.Subgraphs[0].Ops[1].Resource = &graph.ResourceName{SharedName: "state"}
			},
			// "#0:1" no longer exists, and state's handles leave out h2
			want: []Kind{Malformed},
		},
		{
			name: "the container tells variables apart", model: "resource",
			mod: func(m *graph.Model) {
				m.Subgraphs[0].Ops[1].Resource = &graph.ResourceName{Container: "c", SharedName: "state"}
			},
			want: []Kind{Malformed, Unplaced},
		},
		{
			name: "resource_variables missing", model: "resource",
			edits: []edit{del("resource_variables")},
			want:  []Kind{Malformed},
		},

		// skipped_tensors
		{
			name: "resource handle placed", model: "resource",
			edits: []edit{put("tensor_allocs.0:1", scratchAlloc(0, 1, "h", 0, 0))},
			// needs no bytes; skipped as well; a scratch tensor without a lifetime
			want: []Kind{WrongClass, Malformed},
		},
		{
			name: "resource handle not skipped", model: "resource",
			edits: []edit{del("skipped_tensors.0")},
			want:  []Kind{Malformed},
		},
		{
			name: "run-time string not skipped", model: "resource",
			edits: []edit{del("skipped_tensors.3")},
			want:  []Kind{Malformed},
		},
		{
			name: "run-time string skipped as zero-size", model: "resource",
			edits: []edit{set("skipped_tensors.3.reason", reasonZeroSize)},
			want:  []Kind{Malformed},
		},
		{
			name: "string with constant data needs bytes", model: "resource",
			mod: func(m *graph.Model) {
				m.Buffers = []graph.Buffer{{}, {Data: []byte("hello")}}
				m.Subgraphs[0].Tensors[7].Buffer = 1
			},
			want: []Kind{Unplaced},
		},
	})
}
