package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// kernelScratchJSON is a kernel_scratch entry of the chain model's RELU
// (op 0:1, step 2) in the scratch arena.
func kernelScratchJSON(op, offset, start, end int) map[string]any {
	return map[string]any{"subgraph": 0, "operator": op, "index": 0, "name": "RELU scratch 0", "size": 16,
		"binding":  map[string]any{"role": "scratch", "arena": 0, "memory": "SRAM", "offset": offset, "source_memory": nil},
		"start_op": start, "end_op": end}
}

// withKernelScratch adds 16 bytes of kernel scratch for RELU to the chain
// plan, above a and b, which are live with it at step 2: the arena and its
// lower bound grow to 80 bytes.
func withKernelScratch(edits ...edit) []edit {
	return join([]edit{
		insert("kernel_scratch.0", kernelScratchJSON(1, 64, 2, 2)),
		set("arena_usages.SRAM.lower_bound", 80), set("arena_usages.SRAM.lower_bound_without_aliases", 80),
		set("arena_usages.SRAM.peak_tensors", []any{refJSON(0, 1), refJSON(0, 2),
			map[string]any{"subgraph": 0, "operator": 1, "index": 0}}),
	}, arenaSet("arena_usages.SRAM", 0, "total_size", 80), arenaSet("arena_usages.SRAM", 0, "used", 80), edits)
}

// twoScratchArenas splits the chain plan's scratch arena in two, both in
// SRAM: input and a stay in arena 0, b and output move to arena 1, which
// arena_usages, keyed by memory, cannot hold.
func twoScratchArenas(edits ...edit) []edit {
	return join([]edit{
		insert("arenas.1", map[string]any{"id": 1, "name": "scratch_sram_2", "role": "scratch", "memory": "SRAM",
			"source_memory": nil, "provider": "owned", "size": 48, "used": 48, "alignment": 16}),
		set("arenas.0.used", 64), set("arenas.0.size", 64),
		set("tensor_allocs.0:2.binding.arena", 1), set("tensor_allocs.0:2.binding.offset", 0),
		set("tensor_allocs.0:3.binding.arena", 1), set("tensor_allocs.0:3.binding.offset", 32),
		set("arena_usages.SRAM.lower_bound", 48), set("arena_usages.SRAM.lower_bound_without_aliases", 48),
		set("arena_usages.SRAM.fragmentation", 0.25), set("arena_usages.SRAM.peak_step", 1),
		set("arena_usages.SRAM.peak_tensors", []any{refJSON(0, 0), refJSON(0, 1)}),
	}, edits)
}

func TestPlanArenas(t *testing.T) {
	runViolationCases(t, []violationCase{
		{name: "two scratch arenas in one memory", model: "chain", edits: twoScratchArenas(), want: []Kind{Malformed}},
		{
			name: "two scratch arenas in one memory, the second overlapping", model: "chain",
			edits: twoScratchArenas(set("tensor_allocs.0:3.binding.offset", 16)),
			want:  []Kind{Malformed, Overlap, HeightMismatch},
		},
		{name: "an arena the application binds", model: "chain", edits: []edit{set("arenas.0.provider", "bound")}},
		{name: "an arena shared between models", model: "chain", edits: []edit{set("arenas.0.provider", "shared"), put("arenas.0.shared_size", 96)}},
		{
			name: "a shared arena smaller than itself", model: "chain",
			edits: []edit{set("arenas.0.provider", "shared"), put("arenas.0.shared_size", 32)},
			want:  []Kind{HeightMismatch},
		},
		{
			name: "a shared constant arena", model: "constant",
			edits: []edit{set("arenas.1.provider", "shared"), put("arenas.1.shared_size", 4096)},
			want:  []Kind{Malformed},
		},
		{
			name: "a shared size on an owned arena", model: "chain",
			edits: []edit{put("arenas.0.shared_size", 96)},
			want:  []Kind{Malformed},
		},
		{
			name: "two arenas with one id", model: "constant",
			edits: []edit{set("arenas.1.id", 0)},
			want:  []Kind{Malformed},
		},
		{
			name: "two arenas with one name", model: "constant",
			edits: []edit{set("arenas.1.name", "scratch_sram")},
			want:  []Kind{Malformed},
		},
		{
			name: "an allocation in an unknown arena", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.arena", 7)},
			want:  []Kind{Malformed},
		},
		{
			name: "a heliaAOT entry for an unknown arena", model: "chain",
			edits: []edit{set("arena_usages.SRAM.arena", 3)},
			want:  []Kind{Malformed},
		},
		{
			name: "a heliaAOT entry in the list of another role", model: "constant",
			edits: []edit{set("constant_arenas.FLASH.arena", 0)},
			want:  []Kind{Malformed},
		},
		{
			name: "a binding in another memory than its arena", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.memory", "FLASH")},
			want:  []Kind{Malformed, RuleViolated},
		},
		{
			name: "an arena name C cannot use", model: "chain",
			edits: []edit{set("arenas.0.name", "Scratch SRAM")},
			want:  []Kind{Malformed},
		},
		{
			name: "an unknown provider", model: "chain",
			edits: []edit{set("arenas.0.provider", "heap")},
			want:  []Kind{Malformed},
		},
		{
			name: "an arena alignment that is not the bank's", model: "chain",
			edits: []edit{set("arenas.0.alignment", 8)},
			want:  []Kind{Malformed},
		},
		{
			name: "a source_memory on a scratch arena", model: "chain",
			edits: []edit{set("arenas.0.source_memory", "FLASH")},
			want:  []Kind{Malformed},
		},

		// kernel scratch
		{name: "kernel scratch", model: "chain", edits: withKernelScratch()},
		{
			name: "kernel scratch over a live tensor", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.binding.offset", 48)),
			want:  []Kind{Overlap, HeightMismatch},
		},
		{
			name: "kernel scratch outside its operator's steps", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.start_op", 3), set("kernel_scratch.0.end_op", 3)),
			want:  []Kind{UseOutsideLifetime, HeightMismatch},
		},
		{
			name: "kernel scratch longer than its operator", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.start_op", 1)),
			want:  []Kind{Malformed},
		},
		{
			name: "kernel scratch of an operator that does not exist", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.operator", 9)),
			want:  []Kind{Malformed, HeightMismatch},
		},
		{
			name: "kernel scratch in an unknown arena", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.binding.arena", 4)),
			want:  []Kind{Malformed, HeightMismatch},
		},
		{
			name: "kernel scratch as persistent", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.binding.role", "persistent")),
			want:  []Kind{WrongClass, Malformed, HeightMismatch},
		},
		{
			name: "kernel scratch left out of peak_tensors", model: "chain",
			edits: withKernelScratch(del("arena_usages.SRAM.peak_tensors.2")),
			want:  []Kind{HeightMismatch},
		},
		{
			name: "kernel scratch twice", model: "chain",
			edits: withKernelScratch(insert("kernel_scratch.1", kernelScratchJSON(1, 64, 2, 2))),
			want:  []Kind{Malformed},
		},

		// schedule
		{
			name: "schedule out of dependency order", model: "chain",
			edits: []edit{set("schedule.0.operator", 1), set("schedule.0.name", "RELU"),
				set("schedule.1.operator", 0), set("schedule.1.name", "FULLY_CONNECTED")},
			// and a and input are used outside the lifetimes the model's order gave them
			want: []Kind{BadSchedule, UseOutsideLifetime},
		},
		{
			name: "schedule missing an operator", model: "chain",
			edits: []edit{del("schedule.2")},
			want:  []Kind{BadSchedule},
		},
		{
			name: "schedule entry under another name", model: "chain",
			edits: []edit{set("schedule.1.name", "ADD")},
			want:  []Kind{Malformed},
		},
	})
}

func TestPlanArenaMessages(t *testing.T) {
	tests := []struct {
		name  string
		model string
		edits []edit
		want  []Violation
	}{
		{
			name: "two arenas with one id", model: "constant",
			edits: []edit{set("arenas.1.id", 0)},
			want: []Violation{
				{Malformed, `arenas[1]: id 0 is already arenas[0]'s; two arenas cannot share an id`},
				{Malformed, `constant_arenas["FLASH"].arena: arena 1 is not in arenas`},
				{Malformed, `tensor_allocs["0:1"]: 0:1 (weights) is in arena 1, which arenas does not list`},
				{Malformed, `tensor_allocs["0:2"]: 0:2 (bias) is in arena 1, which arenas does not list`},
				{Malformed, `tensor_allocs["0:4"]: 0:4 (weights_again) is in arena 1, which arenas does not list`},
			},
		},
		{
			name: "an allocation in an unknown arena", model: "chain",
			edits: []edit{set("tensor_allocs.0:0.binding.arena", 7)},
			want: []Violation{
				{Malformed, `tensor_allocs["0:0"]: 0:0 (input) is in arena 7, which arenas does not list`},
			},
		},
		{
			name: "kernel scratch outside its operator's steps", model: "chain",
			edits: withKernelScratch(set("kernel_scratch.0.start_op", 3), set("kernel_scratch.0.end_op", 3)),
			want: []Violation{
				{UseOutsideLifetime, `op 0:1 (RELU) scratch 0 lives over steps 3..3, but its operator runs over steps 2..2`},
				{HeightMismatch, `scratch arena "scratch_sram": lower_bound is 80, but its buffers' peak is 64`},
				{HeightMismatch, `scratch arena "scratch_sram": lower_bound_without_aliases is 80, but its allocations' peak is 64`},
				{HeightMismatch, `scratch arena "scratch_sram": buffers live at peak_step 2 take 64 bytes, not lower_bound 80`},
				{HeightMismatch, `scratch arena "scratch_sram": peak_tensors are [0:1 0:2 op 0:1 scratch 0], but the buffers live at peak_step 2 are [0:1 0:2]`},
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
