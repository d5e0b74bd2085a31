package plan

import (
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan/dsa"
)

// tflmBufferAlignment is the multiple TFLM rounds every buffer of its
// arena up to (kBufferAlignment, tensorflow/lite/micro/memory_helpers.h at
// tflite-micro 90b983c).
const tflmBufferAlignment = 16

// placeKernelScratchAsTFLM moves each kernel scratch buffer of a scratch
// arena to where TFLM's planner puts it when it runs the model with the
// arena's tensors as an offline plan (--emit-tflite): TFLM keeps the
// offline offsets and places the buffers its kernels request itself
// (GreedyMemoryPlanner, dsa.Around): largest first, equal sizes in reverse
// order of request, each in the lowest gap among the buffers live at its
// operator. The plan then says where TFLM's kernels find their scratch,
// and TFLM's arena head is the plan's arena.
//
// The move is made when it leaves the arena no larger and every offset on
// the arena's alignment. Otherwise heliac's own placement stays, unless
// Options.TFLMKernelScratch asks for TFLM's anyway: the arena then grows
// to hold it, and Arena.TFLMGrowth records by how much.
func (pl *placer) placeKernelScratchAsTFLM(arena *Arena) {
	var prob dsa.Problem
	var tensors, requests []int
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Arena != arena.ID || a.Class != liveness.Scratch {
			continue
		}
		switch a.Kind {
		case TensorAlloc:
			tensors = append(tensors, i)
		case KernelScratchAlloc:
			requests = append(requests, i)
		}
	}
	if len(requests) == 0 {
		return
	}
	// TFLM's operators ask in the order they are prepared: subgraph by
	// subgraph, each in the order it runs, and each operator's requests
	// in turn.
	position := map[graph.OpRef]int{}
	for s, ops := range pl.p.Schedule.Order {
		for pos, oi := range ops {
			position[graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: oi}] = pos
		}
	}
	slices.SortStableFunc(requests, func(i, j int) int {
		a, b := &pl.p.Allocs[i], &pl.p.Allocs[j]
		if a.Op.Subgraph != b.Op.Subgraph {
			return int(a.Op.Subgraph - b.Op.Subgraph)
		}
		if pa, pb := position[a.Op], position[b.Op]; pa != pb {
			return pa - pb
		}
		return a.Index - b.Index
	})
	for _, id := range tensors {
		a := &pl.p.Allocs[id]
		off := a.Offset
		b := buffer(a.Live, a.Size, tflmBufferAlignment)
		b.Align, b.Fixed = 0, &off
		prob.Buffers = append(prob.Buffers, b)
	}
	for _, id := range requests {
		b := buffer(pl.p.Allocs[id].Live, pl.p.Allocs[id].Size, tflmBufferAlignment)
		b.Align = 0
		prob.Buffers = append(prob.Buffers, b)
	}
	sol, err := dsa.Around(prob)
	if err != nil {
		return // cannot happen for a plan Build made; keep heliac's placement
	}
	used := int64(0)
	aligned := true
	offsets := sol.Offsets[len(tensors):]
	for i := range pl.p.Allocs {
		if a := &pl.p.Allocs[i]; a.Arena == arena.ID && a.Class == liveness.Scratch && a.Kind != KernelScratchAlloc {
			used = max(used, a.Offset+a.Size)
		}
	}
	for k, id := range requests {
		used = max(used, offsets[k]+pl.p.Allocs[id].Size)
		aligned = aligned && offsets[k]%max(arena.Alignment, 1) == 0
	}
	size := alignTo(used, arena.Alignment)
	if !aligned || (size > arena.Size && !pl.opts.TFLMKernelScratch) {
		return
	}
	for k, id := range requests {
		pl.p.Allocs[id].Offset = offsets[k]
	}
	if size > arena.Size {
		arena.TFLMGrowth = size - arena.Size
		arena.Optimal = false
	}
	arena.Used, arena.Size = used, size
}

// TFLMHead returns TFLM's arena head when TFLM runs the plan as an offline
// plan (--emit-tflite: its one scratch arena's tensors at their offsets)
// and its kernels ask for reqs rather than the plan's kernel scratch:
// TFLM places each request itself, as placeKernelScratchAsTFLM replays
// it, and the head is the end of the last buffer, each rounded up to
// TFLM's 16-byte buffer alignment. A plan for a set of kernel libraries
// (kernels.Any) reserves, per operator, room for every member's requests;
// this is one member's head. It returns false for a plan without exactly
// one scratch arena.
func (p *Plan) TFLMHead(reqs []ScratchRequest) (int64, bool) {
	var arena *Arena
	for i := range p.Arenas {
		if p.Arenas[i].Role == liveness.Scratch {
			if arena != nil {
				return 0, false
			}
			arena = &p.Arenas[i]
		}
	}
	if arena == nil {
		return 0, false
	}
	var prob dsa.Problem
	head := int64(0)
	for i := range p.Allocs {
		a := &p.Allocs[i]
		if a.Arena != arena.ID || a.Class != liveness.Scratch || a.Kind == KernelScratchAlloc {
			continue
		}
		off := a.Offset
		b := buffer(a.Live, a.Size, tflmBufferAlignment)
		b.Align, b.Fixed = 0, &off
		prob.Buffers = append(prob.Buffers, b)
		head = max(head, off+b.Size)
	}
	tensors := len(prob.Buffers)
	// TFLM's operators ask in the order they are prepared: subgraph by
	// subgraph, each in the order it runs, each operator's requests in
	// turn.
	position := map[graph.OpRef]int{}
	for s, ops := range p.Schedule.Order {
		for pos, oi := range ops {
			position[graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: oi}] = pos
		}
	}
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b ScratchRequest) int {
		if a.Op.Subgraph != b.Op.Subgraph {
			return int(a.Op.Subgraph - b.Op.Subgraph)
		}
		return position[a.Op] - position[b.Op]
	})
	for _, r := range reqs {
		span := p.Schedule.Span(r.Op)
		if span == (liveness.Interval{}) || r.Size <= 0 {
			continue
		}
		b := buffer(span, r.Size, tflmBufferAlignment)
		b.Align = 0
		prob.Buffers = append(prob.Buffers, b)
	}
	if len(prob.Buffers) == tensors {
		return head, true
	}
	sol, err := dsa.Around(prob)
	if err != nil {
		return 0, false
	}
	for k := tensors; k < len(prob.Buffers); k++ {
		head = max(head, sol.Offsets[k]+prob.Buffers[k].Size)
	}
	return head, true
}
