package emit

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// offlineVersion is the version word of the format TFLM reads.
const offlineVersion = 1

// onlinePlanned is the offset that tells TFLM to place a tensor itself.
const onlinePlanned = -1

// OfflinePlan is a plan's scratch tensor offsets in the form TensorFlow Lite
// Micro reads from a model's OfflineMemoryAllocation metadata: little-endian
// int32 words, the version (1), the number of subgraphs, the number of
// tensors over all subgraphs, then one offset per tensor of every subgraph
// in order, -1 where TFLM should place the tensor itself.
//
// Every scratch tensor heliac planned gets its offset in the plan's one
// scratch arena, alias members their root's. TFLM keeps the rest: constants
// (it reads them where they lie), is_variable tensors (it puts them in its
// persistent tail section; heliac's persistent arena is not TFLM's), resource
// variables, and kernel scratch (it places the buffers its kernels request
// around the offline tensors).
//
// TFLM looks up whether an is_variable tensor has an offline offset by its
// index within its own subgraph, not over all subgraphs (MicroAllocator::
// AllocateVariables, tflite-micro 90b983c). So when a later subgraph holds
// an is_variable tensor at index i, tensor i of subgraph 0 is left to TFLM
// too: given an offset, it would make TFLM skip that variable. Deferred
// counts such tensors.
type OfflinePlan struct {
	Data []byte
	// Planned counts the tensors given an offset; TFLM reports them as
	// offline-planned buffers.
	Planned int
	// Deferred counts scratch tensors left to TFLM because of the
	// variable lookup above.
	Deferred int
	// ArenaSize is the bytes of the scratch arena the offsets lie in: the
	// head section TFLM needs for them.
	ArenaSize int64
}

// TFLMOfflinePlan returns the offline plan TFLM reads for p. TFLM has one
// arena, so every scratch tensor of p must lie in one scratch arena;
// otherwise, or when an offset does not fit TFLM's int32 words, it returns
// an error that says so.
func TFLMOfflinePlan(m *graph.Model, p *plan.Plan) (*OfflinePlan, error) {
	arena, err := soleScratchArena(p)
	if err != nil {
		return nil, err
	}
	first := make([]int, len(m.Subgraphs)) // global index of each subgraph's tensor 0
	total := 0
	for si, sg := range m.Subgraphs {
		first[si] = total
		total += len(sg.Tensors)
	}
	offsets := make([]int32, total)
	for i := range offsets {
		offsets[i] = onlinePlanned
	}
	own := map[graph.TensorRef]*liveness.OwnPlan{}
	out := &OfflinePlan{}
	if arena != nil {
		out.ArenaSize = arena.Size
	}
	for _, a := range p.Allocs {
		if a.Kind != plan.TensorAlloc || a.Class != liveness.Scratch {
			continue
		}
		r := a.Ref
		if r.Subgraph < 0 || int(r.Subgraph) >= len(m.Subgraphs) || r.Tensor < 0 || int(r.Tensor) >= len(m.Subgraphs[r.Subgraph].Tensors) {
			return nil, fmt.Errorf("emit: offline plan: tensor %v is not in the model", r)
		}
		if a.Offset < 0 || a.Offset > math.MaxInt32 {
			return nil, fmt.Errorf("emit: offline plan: tensor %v %s at offset %d does not fit TFLM's int32 offsets", r, quoted(a.Name), a.Offset)
		}
		offsets[first[r.Subgraph]+int(r.Tensor)] = int32(a.Offset)
		out.Planned++
		if a.OwnPlan != nil {
			own[r] = a.OwnPlan
		}
	}
	for si := 1; si < len(m.Subgraphs); si++ {
		for ti, t := range m.Subgraphs[si].Tensors {
			if t.IsVariable && ti < len(m.Subgraphs[0].Tensors) && offsets[ti] != onlinePlanned {
				if o := own[graph.TensorRef{Tensor: graph.TensorID(ti)}]; o != nil {
					return nil, fmt.Errorf("emit: offline plan: tensor 0:%d must keep its offset for operator %v (%s), but given one, "+
						"TFLM would not allocate is_variable tensor %d:%d (it looks variables up by their index in subgraph 0)",
						ti, o.Op, escapeName(o.Operator), si, ti)
				}
				offsets[ti] = onlinePlanned
				out.Planned--
				out.Deferred++
			}
		}
	}
	words := append([]int32{offlineVersion, int32(len(m.Subgraphs)), int32(total)}, offsets...)
	out.Data = make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(out.Data[4*i:], uint32(w))
	}
	return out, nil
}

// soleScratchArena returns the plan's one scratch arena that holds tensors,
// nil when none does, or an error when several do.
func soleScratchArena(p *plan.Plan) (*plan.Arena, error) {
	var found []*plan.Arena
	seen := map[plan.ArenaID]bool{}
	for _, a := range p.Allocs {
		if a.Kind != plan.TensorAlloc || a.Class != liveness.Scratch || seen[a.Arena] {
			continue
		}
		seen[a.Arena] = true
		ar := p.Arena(a.Arena)
		if ar == nil {
			return nil, fmt.Errorf("emit: offline plan: tensor %v is in arena %d, which the plan does not have", a.Ref, a.Arena)
		}
		found = append(found, ar)
	}
	if len(found) > 1 {
		var where []string
		for _, a := range found {
			where = append(where, fmt.Sprintf("%s (%s)", a.Name, a.Memory))
		}
		return nil, fmt.Errorf("emit: TFLM has one arena, but this plan puts scratch tensors in %d: %s; "+
			"plan them into one bank with --one-scratch-bank: the fastest bank that holds them all",
			len(found), strings.Join(where, ", "))
	}
	if len(found) == 0 {
		return nil, nil
	}
	return found[0], nil
}
