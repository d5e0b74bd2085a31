package plan

import (
	"context"
	"fmt"
	"sort"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan/dsa"
)

// DefaultAlignment is the byte alignment of every tensor offset, as TFLM
// uses for its arena.
const DefaultAlignment = 16

// Default memory names of the generic platform.
const (
	MemorySRAM  = "SRAM"
	MemoryFlash = "FLASH"
)

// Planners selectable by Options.Planner.
const (
	PlannerGreedy = "greedy" // size-descending first fit, as TFLM's GreedyMemoryPlanner
)

// Options controls Build. The zero value plans with defaults.
type Options struct {
	Alignment int64  // 0 means DefaultAlignment
	Planner   string // "" means PlannerGreedy
}

func (o Options) withDefaults() (Options, error) {
	if o.Alignment == 0 {
		o.Alignment = DefaultAlignment
	}
	if o.Alignment < 1 || o.Alignment&(o.Alignment-1) != 0 {
		return o, fmt.Errorf("plan: alignment %d is not a positive power of two", o.Alignment)
	}
	if o.Planner == "" {
		o.Planner = PlannerGreedy
	}
	if o.Planner != PlannerGreedy {
		return o, fmt.Errorf("plan: unknown planner %q (known: %s)", o.Planner, PlannerGreedy)
	}
	return o, nil
}

// Build places every tensor of m that occupies bytes.
func Build(ctx context.Context, m *graph.Model, lt *liveness.Lifetimes, opts Options) (*Plan, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Plan{Planner: opts.Planner, Alignment: opts.Alignment, Steps: lt.Steps, index: map[graph.TensorRef]int{}}
	var scratch, persistent, constant []int
	for _, t := range lt.Tensors {
		if t.Class == liveness.Unallocated && t.Used {
			p.Skipped = append(p.Skipped, Skipped{Ref: t.Ref, Name: m.Tensor(t.Ref.Subgraph, t.Ref.Tensor).Name, Reason: t.Note})
		}
		var list *[]int
		switch t.Class {
		case liveness.Scratch:
			list = &scratch
		case liveness.Persistent:
			list = &persistent
		case liveness.Constant:
			list = &constant
		default:
			continue
		}
		*list = append(*list, len(p.Allocs))
		p.index[t.Ref] = len(p.Allocs)
		p.Allocs = append(p.Allocs, Alloc{
			Ref: t.Ref, Name: m.Tensor(t.Ref.Subgraph, t.Ref.Tensor).Name,
			Class: t.Class, Size: t.Size, Live: t.Live, AliasOf: t.AliasOf, Dynamic: t.Dynamic,
		})
	}
	if err := p.placeScratch(ctx, lt, scratch); err != nil {
		return nil, err
	}
	p.placeSequential(PersistentArena, MemorySRAM, persistent, nil)
	p.placeVariables(lt.Variables)
	p.placeSequential(ConstantArena, MemoryFlash, constant, func(a *Alloc) graph.BufferIndex {
		return m.Tensor(a.Ref.Subgraph, a.Ref.Tensor).Buffer
	})
	return p, nil
}

func (p *Plan) alignUp(n int64) int64 { return (n + p.Alignment - 1) &^ (p.Alignment - 1) }

// toBuffers turns scratch allocations into allocator buffers, one per
// alias group root, live over the group's lifetime. Lifetimes are inclusive
// [First, Last] steps, as TFLM's first_created/last_used; dsa buffers are
// half-open, so End = Last + 1. This is the only place the two conventions
// meet.
func (p *Plan) toBuffers(lt *liveness.Lifetimes, roots []int) dsa.Problem {
	prob := dsa.Problem{Buffers: make([]dsa.Buffer, len(roots))}
	for i, id := range roots {
		a := &p.Allocs[id]
		live := lt.Lookup(a.Ref).Group
		prob.Buffers[i] = dsa.Buffer{
			Start: int64(live.First),
			End:   int64(live.Last) + 1,
			Size:  p.alignUp(a.Size),
			Align: p.Alignment,
		}
	}
	return prob
}

func (p *Plan) placeScratch(ctx context.Context, lt *liveness.Lifetimes, ids []int) error {
	if len(ids) == 0 {
		return nil
	}
	var roots, members []int
	for _, id := range ids {
		if p.Allocs[id].AliasOf == nil {
			roots = append(roots, id)
		} else {
			members = append(members, id)
		}
	}
	prob := p.toBuffers(lt, roots)
	sol, err := dsa.Greedy(ctx, prob)
	if err != nil {
		return fmt.Errorf("plan: scratch arena in %s: %w", MemorySRAM, err)
	}
	arena := Arena{Kind: ScratchArena, Memory: MemorySRAM, Alignment: p.Alignment}
	for i, id := range roots {
		a := &p.Allocs[id]
		a.Arena = len(p.Arenas)
		a.Offset = sol.Offsets[i]
		arena.Used = max(arena.Used, a.Offset+a.Size)
	}
	for _, id := range members {
		a := &p.Allocs[id]
		root := &p.Allocs[p.index[*a.AliasOf]]
		a.Arena, a.Offset = root.Arena, root.Offset
	}
	arena.Size = p.alignUp(arena.Used)
	arena.LowerBound, arena.PeakStep, arena.PeakTensors = p.peak(prob, roots)
	all := make([]dsa.Buffer, len(ids))
	for i, id := range ids {
		a := &p.Allocs[id]
		all[i] = dsa.Buffer{Start: int64(a.Live.First), End: int64(a.Live.Last) + 1, Size: p.alignUp(a.Size)}
	}
	arena.UnaliasedLowerBound = dsa.LowerBound(dsa.Problem{Buffers: all})
	p.Arenas = append(p.Arenas, arena)
	return nil
}

// peak returns the largest sum of buffer sizes live at one step (the
// problem's lower bound), the first step reaching it, and the tensors
// (buffer i is allocation ids[i]) live there.
func (p *Plan) peak(prob dsa.Problem, ids []int) (int64, liveness.Step, []graph.TensorRef) {
	type event struct {
		step  int64
		delta int64
	}
	var ev []event
	for _, b := range prob.Buffers {
		ev = append(ev, event{b.Start, b.Size}, event{b.End, -b.Size})
	}
	sort.Slice(ev, func(i, j int) bool {
		if ev[i].step != ev[j].step {
			return ev[i].step < ev[j].step
		}
		return ev[i].delta < ev[j].delta
	})
	var live, best, bestStep int64
	for _, e := range ev {
		live += e.delta
		if live > best {
			best, bestStep = live, e.step
		}
	}
	var at []graph.TensorRef
	for i, b := range prob.Buffers {
		if b.Start <= bestStep && bestStep < b.End {
			at = append(at, p.Allocs[ids[i]].Ref)
		}
	}
	return best, liveness.Step(bestStep), at
}

// placeVariables appends resource variables to the persistent arena (made
// if there is none), each at the next aligned offset.
func (p *Plan) placeVariables(vars []liveness.Variable) {
	ai := -1
	for i, a := range p.Arenas {
		if a.Kind == PersistentArena && a.Memory == MemorySRAM {
			ai = i
		}
	}
	for _, v := range vars {
		if v.Size == 0 {
			continue
		}
		if ai < 0 {
			ai = len(p.Arenas)
			p.Arenas = append(p.Arenas, Arena{Kind: PersistentArena, Memory: MemorySRAM, Alignment: p.Alignment})
		}
		a := &p.Arenas[ai]
		off := a.Size
		p.Variables = append(p.Variables, VariableAlloc{Name: v.Name, Size: v.Size, Arena: ai, Offset: off,
			Handles: append([]graph.TensorRef(nil), v.Handles...)})
		a.Used = off + v.Size
		a.Size = p.alignUp(a.Used)
		a.LowerBound = a.Size
	}
}

// placeSequential packs allocations one after another at aligned offsets.
// When key is given, allocations with the same key share one offset (two
// constant tensors over one model buffer).
func (p *Plan) placeSequential(kind ArenaKind, memory string, ids []int, key func(*Alloc) graph.BufferIndex) {
	if len(ids) == 0 {
		return
	}
	arena := Arena{Kind: kind, Memory: memory, Alignment: p.Alignment}
	if kind == ConstantArena {
		arena.SourceMemory = memory
	}
	seen := map[graph.BufferIndex]int64{}
	var next int64
	for _, id := range ids {
		a := &p.Allocs[id]
		a.Arena = len(p.Arenas)
		if key != nil {
			if off, ok := seen[key(a)]; ok {
				a.Offset = off
				continue
			}
		}
		a.Offset = next
		if key != nil {
			seen[key(a)] = next
		}
		next = p.alignUp(next + a.Size)
		arena.Used = a.Offset + a.Size
	}
	arena.Size = p.alignUp(arena.Used)
	arena.LowerBound = next
	p.Arenas = append(p.Arenas, arena)
}
