package verify

import (
	"testing"

	"github.com/heliac/heliac/graph"
)

func refJSON(s, t int) map[string]any { return map[string]any{"subgraph": s, "tensor": t} }

// In testdata/alias.json, tensor_allocs are in, a, r, s, t, out (0..5), as
// are tensor_lifetimes; r and s alias a.
func TestPlanAliases(t *testing.T) {
	runViolationCases(t, []violationCase{
		{
			name: "RESHAPE then SQUEEZE share a's bytes while all three are live", model: "alias",
		},
		{
			name: "peak_tensors name the root when only a member is live", model: "alias",
			// ADD reads s twice, so a dies at the RESHAPE; its group lives on in s.
			mod: func(m *graph.Model) { m.Subgraphs[0].Ops[3].Inputs = ids(3, 3) },
			edits: []edit{set("tensor_lifetimes.0:1.end_op", 2),
				set("arena_usages.SRAM.lower_bound_without_aliases", 64)},
		},
		{
			name: "alias without a view operator", model: "alias",
			mod: func(m *graph.Model) {
				m.Subgraphs[0].Ops[1] = op("ADD", ids(1, 6), ids(2))
			},
			edits: []edit{set("schedule.1.name", "ADD")},
			// and a and r, one group but two values, share bytes while live
			want: []Kind{BadAlias, Overlap},
		},
		{
			// ADD(s, a) -> a writes a while it reads s, a view of a over
			// a's bytes (the tensor it wrote before, t, is now written by
			// nobody, read by FULLY_CONNECTED alone).
			name: "a view's bytes written by another operator as it reads the view", model: "alias",
			mod:  func(m *graph.Model) { m.Subgraphs[0].Ops[3].Outputs = ids(1) },
			want: []Kind{BadAlias},
		},
		{
			name: "alias at a different offset", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.binding.offset", 0)},
			want:  []Kind{BadAlias},
		},
		{
			name: "same bytes without alias_of overlap", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.alias_of", nil)},
			// and s's chain back to a now leaves the group at r
			want: []Kind{Overlap, BadAlias},
		},
		{
			name: "chain through a tensor outside the group", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.alias_of", nil), set("tensor_allocs.0:2.binding.offset", 0)},
			// and s, cut off from a's value, shares a's bytes while both live
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "alias_of names a member, not the root", model: "alias",
			edits: []edit{set("tensor_allocs.0:3.alias_of", refJSON(0, 2))},
			want:  []Kind{BadAlias},
		},
		{
			name: "tensor aliases itself", model: "alias",
			edits: []edit{set("tensor_allocs.0:1.alias_of", refJSON(0, 1))},
			want:  []Kind{BadAlias},
		},
		{
			name: "member is a subgraph output", model: "alias",
			mod: func(m *graph.Model) { m.Subgraphs[0].Outputs = ids(5, 3) },
			// and, as an output, s is used at the last step
			want: []Kind{BadAlias, UseOutsideLifetime},
		},
		{
			name: "alias_of names a tensor that does not exist", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.alias_of", refJSON(0, 99))},
			// r then stands alone on a's bytes, and breaks s's chain
			want: []Kind{Malformed, Overlap, BadAlias},
		},
		{
			name: "alias_of missing", model: "alias",
			edits: []edit{del("tensor_allocs.0:2.alias_of")},
			want:  []Kind{Malformed},
		},
		{
			name: "alias_of not an object", model: "alias",
			edits: []edit{set("tensor_allocs.0:2.alias_of", 1)},
			want:  []Kind{Malformed},
		},
		{
			name: "lower_bound counts every member", model: "alias",
			edits: []edit{set("arena_usages.SRAM.lower_bound", 96)},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "wrong lower_bound_without_aliases", model: "alias",
			edits: []edit{set("arena_usages.SRAM.lower_bound_without_aliases", 64)},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "lower_bound_without_aliases missing", model: "alias",
			edits: []edit{del("arena_usages.SRAM.lower_bound_without_aliases")},
			want:  []Kind{Malformed},
		},
		{
			name: "peak_tensors name a member instead of the root", model: "alias",
			edits: []edit{set("arena_usages.SRAM.peak_tensors.0", refJSON(0, 3))},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "peak_tensors name every live member", model: "alias",
			edits: []edit{insert("arena_usages.SRAM.peak_tensors.1", refJSON(0, 3))},
			want:  []Kind{HeightMismatch},
		},

		// alias_offset
		{
			name: "alias_offset on a root", model: "alias",
			edits: []edit{put("tensor_allocs.0:1.alias_offset", 16)},
			want:  []Kind{Malformed},
		},
		{
			name: "alias_offset 0 written out", model: "alias",
			edits: []edit{put("tensor_allocs.0:2.alias_offset", 0)},
			want:  []Kind{Malformed},
		},
		{
			name: "alias_offset not an integer", model: "alias",
			edits: []edit{put("tensor_allocs.0:2.alias_offset", "16")},
			want:  []Kind{Malformed},
		},
		{
			name: "a member off its root's offset plus its alias_offset", model: "alias",
			edits: []edit{put("tensor_allocs.0:2.alias_offset", 16)},
			// r is where a is, not 16 bytes in as declared; by the
			// declaration it is not a's bytes (so not a's value, and s,
			// which views it, not r's); the group spans 48 bytes, no more
			// than the arena's peak
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "a view over part of its input's bytes", model: "alias",
			// r (and s, which views it) moved 16 bytes into a: a and r
			// share [48, 64) while both live, and a view is its input's
			// bytes exactly, so nothing relates them.
			edits: append(arenaSet("arena_usages.SRAM", 0, "total_size", 80),
				put("tensor_allocs.0:2.alias_offset", 16), set("tensor_allocs.0:2.binding.offset", 48),
				put("tensor_allocs.0:3.alias_offset", 16), set("tensor_allocs.0:3.binding.offset", 48),
				set("arenas.0.used", 80), set("arena_usages.SRAM.used", 80), set("arena_usages.SRAM.lower_bound", 80)),
			want: []Kind{BadAlias, Overlap},
		},
		{
			name: "lower_bound counts a group's extent", model: "alias",
			// as above, with the bound of the group's 48 bytes
			edits: append(arenaSet("arena_usages.SRAM", 0, "total_size", 80),
				put("tensor_allocs.0:2.alias_offset", 16), set("tensor_allocs.0:2.binding.offset", 48),
				put("tensor_allocs.0:3.alias_offset", 16), set("tensor_allocs.0:3.binding.offset", 48),
				set("arenas.0.used", 80), set("arena_usages.SRAM.used", 80)),
			want: []Kind{BadAlias, Overlap, HeightMismatch},
		},

		// dynamic_shape
		{
			name: "dynamic_shape false", model: "alias",
			edits: []edit{set("tensor_allocs.0:0.dynamic_shape", false)},
			want:  []Kind{Malformed},
		},
		{
			name: "dynamic_shape not a boolean", model: "alias",
			edits: []edit{set("tensor_allocs.0:0.dynamic_shape", "yes")},
			want:  []Kind{Malformed},
		},
		{
			name: "dynamic_shape on a static tensor", model: "alias",
			edits: []edit{put("tensor_allocs.0:1.dynamic_shape", true)},
			want:  []Kind{Malformed},
		},
		{
			name: "dynamic_shape left out", model: "alias",
			edits: []edit{del("tensor_allocs.0:0.dynamic_shape")},
			want:  []Kind{Malformed},
		},

		// skipped_tensors
		{
			name: "zero-size tensor not skipped", model: "alias",
			edits: []edit{del("skipped_tensors.0")},
			want:  []Kind{Malformed},
		},
		{
			name: "skipped tensor that needs bytes", model: "alias",
			edits: []edit{del("tensor_allocs.0:5"), del("tensor_lifetimes.0:5"),
				insert("skipped_tensors.0", map[string]any{"subgraph": 0, "tensor": 5, "name": "out", "reason": "zero-size"})},
			want: []Kind{Unplaced},
		},
		{
			name: "skipped tensor also allocated", model: "alias",
			edits: []edit{insert("skipped_tensors.0", map[string]any{"subgraph": 0, "tensor": 5, "name": "out", "reason": "zero-size"})},
			want:  []Kind{Malformed},
		},
		{
			name: "unused tensor skipped", model: "alias",
			edits: []edit{insert("skipped_tensors.1", map[string]any{"subgraph": 0, "tensor": 7, "name": "unused", "reason": "zero-size"})},
			want:  []Kind{Malformed},
		},
		{
			name: "skipped twice", model: "alias",
			edits: []edit{insert("skipped_tensors.1", map[string]any{"subgraph": 0, "tensor": 6, "name": "shape", "reason": "zero-size"})},
			want:  []Kind{Malformed},
		},
		{
			name: "skipped for a reason that does not hold", model: "alias",
			edits: []edit{set("skipped_tensors.0.reason", reasonResource)},
			want:  []Kind{Malformed},
		},
		{
			name: "unknown skip reason", model: "alias",
			edits: []edit{set("skipped_tensors.0.reason", "empty")},
			want:  []Kind{Malformed},
		},
		{
			name: "skipped under another name", model: "alias",
			edits: []edit{set("skipped_tensors.0.name", "shape2")},
			want:  []Kind{Malformed},
		},
		{
			name: "skipped_tensors missing", model: "alias",
			edits: []edit{del("skipped_tensors")},
			want:  []Kind{Malformed},
		},
	})
}
