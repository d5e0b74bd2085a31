// Package tflmarena computes the whole tensor_arena TensorFlow Lite Micro
// needs for a model: the smallest arena (a multiple of 16 bytes, 16-byte
// aligned) with which TFLM's MicroInterpreter (reference kernels, one
// resource-variable slot per VAR_HANDLE) allocates the model, built as an
// application builds it from an arena — MicroInterpreter(model, resolver,
// arena, size, ...), whose MicroAllocator::Create puts its
// GreedyMemoryPlanner in the arena (PlannerInArena) — or as
// ../shared/tools/tflm_run builds it, with the planner outside
// (PlannerOutside).
//
// It replays what TFLM takes from the arena, in TFLM's order, against a
// model of TFLM's SingleArenaBufferAllocator (a head growing up from the
// start, temporaries above it, a persistent tail growing down from the
// end), and finds the smallest arena with which no step fails. The steps
// (tflite-micro 90b983c): MicroAllocator::Create and
// MicroResourceVariables::Create; MicroAllocator::StartModelAllocation
// (the builtin-data allocator, the scratch-request buffer, the
// SubgraphAllocations, eval tensors and node arrays);
// MicroInterpreter::PrepareNodeAndRegistrationDataFromFlatbuffer (builtin
// parameters); every kernel's Init, then every kernel's Prepare
// (temporary TfLiteTensors, persistent buffers, scratch requests) each
// followed by MicroAllocator::FinishPrepareNodeAllocations;
// MicroAllocator::FinishModelAllocation (scratch handles,
// CommitStaticMemoryPlan: AllocationInfo, variable tensors, the planner's
// working memory, the head); the input and output TfLiteTensors of
// MicroInterpreter::AllocateTensors. One rule is stricter than TFLM's
// checks: a persistent buffer a kernel's Prepare allocates while its
// temporary tensors are live must not land on them (TFLM lets it, then
// reads the temporaries back corrupted; see replayOn). Framework struct
// sizes are below; kernels' are package kernels' (kernels.Library.TFLMArena:
// TFLM's reference or CMSIS-NN kernels) and kernels.Library.Scratch.
package tflmarena

import (
	"fmt"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// Commit is the TFLM commit the data was read at.
const Commit = "tflite-micro@90b983c"

// Target is a machine TFLM runs on, as far as its arena is concerned.
type Target struct {
	// Name is how --tflm-target names it.
	Name string
	// PointerSize is sizeof(void*) and sizeof(size_t).
	PointerSize int64
}

// Targets heliac knows.
var (
	// CortexM is 32-bit Arm (arm-none-eabi, Cortex-M55 as tflm_run_m55).
	CortexM = Target{Name: "cortex-m", PointerSize: 4}
	// Host64 is a 64-bit host (x86-64 Linux as tflm_run).
	Host64 = Target{Name: "host64", PointerSize: 8}
)

// TargetNamed returns the target called name, or false.
func TargetNamed(name string) (Target, bool) {
	for _, t := range []Target{CortexM, Host64} {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// structs are sizeof and alignof of TFLM's framework types on host64 and
// cortex-m, at Commit (checked by this package's tests with g++ and
// arm-none-eabi-g++ against ../shared/tflm/include).
type structs struct {
	singleArena, microAllocator, builtinDataAllocator, subgraphAllocations,
	evalTensor, nodeAndRegistration, tfLiteTensor, affineQuantization,
	scratchHandle, scratchRequest, allocationInfo, resourceVariables,
	resourceVariable, sizeT, greedyPlanner [2]int64
}

// Setup is how the application builds TFLM's allocator.
type Setup uint8

// Setups.
const (
	// PlannerInArena: MicroInterpreter(model, resolver, tensor_arena,
	// size, ...), as the README's example and most firmware build it.
	// MicroAllocator::Create(uint8_t*, size_t) (micro_allocator.cc)
	// creates the SingleArenaBufferAllocator, then CreateMemoryPlanner
	// puts a GreedyMemoryPlanner in the arena's tail, then the
	// MicroAllocator.
	PlannerInArena Setup = iota
	// PlannerOutside: MicroAllocator::Create(SingleArenaBufferAllocator*,
	// planner) with the planner the application's own, as
	// ../shared/tools/tflm_run builds it (its RecordingGreedyPlanner is a
	// static object).
	PlannerOutside
)

var framework = [2]structs{
	{ // host64
		singleArena:          [2]int64{72, 8}, // arena_allocator/single_arena_buffer_allocator.h
		microAllocator:       [2]int64{72, 8}, // micro_allocator.h
		builtinDataAllocator: [2]int64{16, 8}, // micro_allocator.cc MicroBuiltinDataAllocator: vtable + a pointer
		subgraphAllocations:  [2]int64{16, 8}, // micro_allocator.h
		evalTensor:           [2]int64{24, 8}, // tensorflow/lite/core/c/common.h TfLiteEvalTensor
		nodeAndRegistration:  [2]int64{64, 8}, // micro_allocator.h NodeAndRegistration
		tfLiteTensor:         [2]int64{64, 8}, // common.h TfLiteTensor under TF_LITE_STATIC_MEMORY
		affineQuantization:   [2]int64{24, 8}, // common.h TfLiteAffineQuantization
		scratchHandle:        [2]int64{8, 8},  // micro_allocator.h ScratchBufferHandle
		scratchRequest:       [2]int64{16, 8}, // micro_allocator.h internal::ScratchBufferRequest
		allocationInfo:       [2]int64{32, 8}, // micro_allocation_info.h AllocationInfo
		resourceVariables:    [2]int64{16, 8}, // micro_resource_variable.h MicroResourceVariables
		resourceVariable:     [2]int64{40, 8}, // micro_resource_variable.h MicroResourceVariable
		sizeT:                [2]int64{8, 8},
		greedyPlanner:        [2]int64{72, 8}, // memory_planner/greedy_memory_planner.h GreedyMemoryPlanner
	},
	{ // cortex-m
		singleArena:          [2]int64{36, 4},
		microAllocator:       [2]int64{36, 4},
		builtinDataAllocator: [2]int64{8, 4},
		subgraphAllocations:  [2]int64{8, 4},
		evalTensor:           [2]int64{12, 4},
		nodeAndRegistration:  [2]int64{32, 4},
		tfLiteTensor:         [2]int64{32, 4},
		affineQuantization:   [2]int64{12, 4},
		scratchHandle:        [2]int64{4, 4},
		scratchRequest:       [2]int64{12, 4},
		allocationInfo:       [2]int64{24, 4},
		resourceVariables:    [2]int64{12, 4},
		resourceVariable:     [2]int64{20, 4},
		sizeT:                [2]int64{4, 4},
		greedyPlanner:        [2]int64{44, 4},
	},
}

const (
	// arenaAlign is MicroArenaBufferAlignment() (micro_arena_constants.h).
	arenaAlign = 16
	// maxScratchPerOp is kMaxScratchBuffersPerOp (micro_allocator.cc).
	maxScratchPerOp = 12
	// plannerBytesPerBuffer is GreedyMemoryPlanner::per_buffer_size()
	// (greedy_memory_planner.h): a BufferRequirements (4 ints), three
	// ints and a ListEntry (3 ints); the same on both targets.
	plannerBytesPerBuffer = 40
)

// Arena is TFLM's whole arena for a model.
type Arena struct {
	// Target is the target it is for.
	Target string
	// Bytes is the smallest tensor_arena with which TFLM allocates the
	// model: a multiple of 16.
	Bytes int64
	// Head is the head section: the memory plan (tensors and kernel
	// scratch).
	Head int64
	// Tail is TFLM's persistent section once the model is allocated.
	Tail int64
}

// op is one allocator call replayed.
type opKind int8

const (
	opPersistent opKind = iota // AllocatePersistentBuffer
	// opPersistentOverTemps is AllocatePersistentBuffer in a kernel's
	// Prepare, while its temporary TfLiteTensors are live.
	opPersistentOverTemps
	opTemp    // AllocateTemp
	opReset   // ResetTempAllocations
	opResize  // ResizeBuffer of the head (also Reserve...)
	opPlanner // GetAvailableMemory + the planner's working memory
)

type step struct {
	kind         opKind
	bytes, align int64
}

// Compute returns TFLM's whole arena for m on target t when the memory
// plan's head is head bytes (TFLM's planner_max_bytes: heliac's offline
// plan's arena for a model heliac emitted, or TFLM's own planner's for the
// original). It returns an error for an operator the kernel data does not
// know (custom operators, kernels not in package kernels' TFLM data).
//
// The figure is for PlannerInArena, the usual setup; ComputeSetup gives
// either.
func Compute(m *graph.Model, head int64, t Target, k Kernels) (Arena, error) {
	return ComputeSetup(m, head, t, k, PlannerInArena)
}

// Kernels is the kernel build whose data the replay uses: what each
// kernel takes from the arena (kernels.Library.TFLMArena) and the scratch
// it asks for (kernels.Library.Scratch). The zero value is TFLM's
// reference kernels.
type Kernels struct {
	// Library is the kernel library; nil is TFLM's reference kernels.
	Library *kernels.Library
	// CPU is the Cortex-M the library is built for on the cortex-m
	// target (CMSIS-NN's data depends on its extensions); a host64
	// build has none.
	CPU kernels.Target
}

// Target is the kernels.Target k's data is read for on t.
func (k Kernels) Target(t Target) kernels.Target {
	if t.PointerSize != 4 {
		return kernels.Target{PointerSize: t.PointerSize}
	}
	kt := k.CPU
	kt.PointerSize = 4
	return kt
}

// ComputeSetup is Compute for an allocator built as setup says.
func ComputeSetup(m *graph.Model, head int64, t Target, k Kernels, setup Setup) (Arena, error) {
	steps, err := replay(m, head, t, k, setup)
	if err != nil {
		return Arena{}, err
	}
	// The smallest arena that works: every step needs at most the whole
	// arena, so the sum of persistent bytes, the head and every temporary
	// bounds it; scan up from the largest single need.
	lo := int64(16)
	var sum int64 = head
	for _, s := range steps {
		sum += s.bytes + s.align
		if s.kind == opPlanner {
			sum += s.bytes
		}
	}
	hi := (sum + 2*arenaAlign + 15) &^ 15
	if ok, _ := run(steps, hi); !ok {
		return Arena{}, fmt.Errorf("tflmarena: no arena up to %d bytes holds the model", hi)
	}
	// Binary search for a working size, then walk down while the next
	// smaller size works too, so the answer is one TFLM's arena allocator
	// accepts while 16 bytes less fails.
	for lo < hi {
		mid := ((lo + hi) / 2) &^ 15
		if mid <= lo {
			mid = lo
		}
		if ok, _ := run(steps, mid); ok {
			hi = mid
		} else {
			lo = mid + 16
		}
	}
	for hi > 16 {
		if ok, _ := run(steps, hi-16); !ok {
			break
		}
		hi -= 16
	}
	r := replayOn(steps, hi)
	return Arena{Target: t.Name, Bytes: hi, Head: head, Tail: r.tail}, nil
}

// base is where the replay puts the arena: any 16-byte aligned address
// large enough that no step's arithmetic goes below zero.
const base = int64(1) << 40

func alignUp(x, a int64) int64   { return (x + a - 1) / a * a }
func alignDown(x, a int64) int64 { return x / a * a }

// run replays steps on an arena of n bytes, as SingleArenaBufferAllocator
// does; it returns whether every step succeeded and the persistent bytes
// at the end.
func run(steps []step, n int64) (bool, int64) {
	r := replayOn(steps, n)
	return r.ok, r.tail
}

// replayed is what one replay found.
type replayed struct {
	ok   bool
	tail int64 // persistent bytes at the end
}

func replayOn(steps []step, n int64) replayed {
	bufHead, bufTail := int64(base), base+n
	head, temp, tail := bufHead, bufHead, bufTail
	for _, s := range steps {
		switch s.kind {
		case opPersistent, opPersistentOverTemps:
			// SingleArenaBufferAllocator::AllocatePersistentBuffer fails
			// only below the head. In a kernel's Prepare a buffer that
			// lands on the kernel's live temporaries (between the head
			// and temp) succeeds, but the kernel then writes it over
			// them (per-channel arrays, lookup tables, kernel sums, a
			// resource variable's memset) and TFLM reads a temporary
			// TfLiteTensor back corrupted: ResetTempAllocations'
			// checksum fails, a kernel's type check fails or TFLM
			// crashes (BATCH_MATMUL, INT16 SOFTMAX and per-channel
			// FULLY_CONNECTED models on tflm_run_cmsis, 16 to 64 bytes
			// below what this rule gives). So the replay keeps such a
			// buffer above them: the figure is the smallest arena that
			// corrupts nothing, at most a few bytes above one TFLM
			// survives by luck (a buffer over a temporary's zero-point
			// array, or over transposed data Prepare does not write
			// yet). Elsewhere the temporaries below are
			// not read again after a persistent buffer lands on them
			// (CommitStaticMemoryPlan's AllocateVariables comes before
			// InitializeAllocationInfo fills its temporary array).
			r := alignDown(tail-s.bytes, s.align)
			if r < head || (s.kind == opPersistentOverTemps && r < temp) {
				return replayed{}
			}
			tail = r
		case opTemp:
			r := alignUp(temp, s.align)
			// available_memory = tail_ - aligned_result is a size_t:
			// past the tail it wraps and the check passes.
			if r <= tail && tail-r < s.bytes {
				return replayed{}
			}
			temp = r + s.bytes
		case opReset:
			temp = head
		case opResize:
			r := alignUp(bufHead, s.align)
			if head != temp || tail-r < s.bytes {
				return replayed{}
			}
			head = r + s.bytes
			temp = head
		case opPlanner:
			// CommitStaticMemoryPlan: the planner gets all that is
			// left (GetAvailableMemory, aligned), and AddBuffer fails
			// past remaining / per_buffer_size buffers.
			start := alignUp(temp, arenaAlign)
			avail := alignDown(tail, arenaAlign) - start
			// The planner's records live in that memory only while it
			// plans: the persistent buffers after it may take it.
			if avail < 0 || avail/plannerBytesPerBuffer < s.bytes {
				return replayed{}
			}
		}
	}
	return replayed{ok: true, tail: bufTail - tail}
}

// replay lists TFLM's allocator calls for m.
func replay(m *graph.Model, head int64, t Target, kl Kernels, setup Setup) ([]step, error) {
	if m == nil || len(m.Subgraphs) == 0 {
		return nil, fmt.Errorf("tflmarena: no model")
	}
	if t.PointerSize != 4 && t.PointerSize != 8 {
		return nil, fmt.Errorf("tflmarena: target %q: pointer size %d", t.Name, t.PointerSize)
	}
	fw := framework[0]
	if t.PointerSize == 4 {
		fw = framework[1]
	}
	var steps []step
	p := func(bytes, align int64) { steps = append(steps, step{opPersistent, bytes, align}) }
	tmp := func(bytes, align int64) { steps = append(steps, step{opTemp, bytes, align}) }
	resize := func(bytes, align int64) { steps = append(steps, step{opResize, bytes, align}) }
	sz := func(s [2]int64, n int64) (int64, int64) { return s[0] * n, s[1] }

	// The kernels' data, before anything is replayed, so an unknown
	// operator is refused at once.
	type opData struct {
		k       kernels.TFLMKernel
		scratch int
	}
	data := make([][]opData, len(m.Subgraphs))
	lib := kl.Library
	if lib == nil {
		var err error
		if lib, err = kernels.Lookup(kernels.TFLMReference); err != nil {
			return nil, err
		}
	}
	kt := kl.Target(t)
	for s := range m.Subgraphs {
		sg := &m.Subgraphs[s]
		for i := range sg.Ops {
			op := &sg.Ops[i]
			if why := kernels.TFLMRefusal(m, graph.SubgraphIndex(s), op); why != "" {
				return nil, &RefusedError{Subgraph: s, Op: i, Name: opName(op), Why: why}
			}
			k, ok := lib.TFLMArena(m, graph.SubgraphIndex(s), op, kt)
			if !ok {
				return nil, fmt.Errorf("tflmarena: subgraph %d operator %d (%s): no data on what TFLM's %s kernel takes from the arena", s, i, opName(op), lib.Name)
			}
			req, _ := lib.Scratch(m, graph.SubgraphIndex(s), op, kt)
			data[s] = append(data[s], opData{k, len(req)})
		}
	}

	// MicroAllocator::Create: the arena allocator, with PlannerInArena
	// the GreedyMemoryPlanner (CreateMemoryPlanner), then the
	// MicroAllocator.
	p(fw.singleArena[0], fw.singleArena[1])
	if setup == PlannerInArena {
		p(fw.greedyPlanner[0], fw.greedyPlanner[1])
	}
	p(fw.microAllocator[0], fw.microAllocator[1])
	// MicroResourceVariables::Create (micro_resource_variable.cc): one
	// slot per VAR_HANDLE operator, as tflm_run.
	varHandles := ResourceVariables(m)
	if varHandles > 0 {
		p(fw.resourceVariables[0], arenaAlign)
		p(fw.resourceVariable[0]*int64(varHandles), arenaAlign)
	}
	// StartModelAllocation.
	p(fw.builtinDataAllocator[0], fw.builtinDataAllocator[1])
	reqBytes, reqAlign := sz(fw.scratchRequest, maxScratchPerOp)
	resize(reqBytes, reqAlign) // InitScratchBufferData
	p(sz(fw.subgraphAllocations, int64(len(m.Subgraphs))))
	for _, sg := range m.Subgraphs {
		p(sz(fw.evalTensor, int64(len(sg.Tensors))))
	}
	for _, sg := range m.Subgraphs {
		p(sz(fw.nodeAndRegistration, int64(len(sg.Ops))))
	}
	// Builtin parameters, then every Init.
	for s := range data {
		for _, d := range data[s] {
			for _, a := range d.k.Params {
				p(a.Bytes, a.Align)
			}
		}
	}
	for s := range data {
		for _, d := range data[s] {
			for _, a := range d.k.Init {
				p(a.Bytes, a.Align)
			}
		}
	}
	// Every Prepare.
	tensorTemp := func(tn *graph.Tensor, alloc func(int64, int64)) {
		alloc(fw.tfLiteTensor[0], fw.tfLiteTensor[1])
		if q := tn.Quantization; q != nil && len(q.Scale) > 0 && len(q.ZeroPoint) > 0 {
			alloc(fw.affineQuantization[0], fw.affineQuantization[1])
			alloc(4+4*int64(len(q.Scale)), 4) // TfLiteIntArray of zero points
		}
	}
	resources := resourceIDs(m)
	assigned := map[int]bool{}
	scratch := 0
	for s := range data {
		sg := &m.Subgraphs[s]
		for i, d := range data[s] {
			for _, st := range d.k.Prepare {
				switch st.Kind {
				case kernels.TFLMTempTensor:
					if int(st.Tensor) >= len(sg.Tensors) {
						return nil, fmt.Errorf("tflmarena: subgraph %d operator %d: tensor %d out of range", s, i, st.Tensor)
					}
					tensorTemp(&sg.Tensors[st.Tensor], tmp)
				case kernels.TFLMPersistent:
					steps = append(steps, step{opPersistentOverTemps, st.Alloc.Bytes, st.Alloc.Align})
				}
			}
			if d.k.AssignResource && len(sg.Ops[i].Inputs) > 1 {
				if id, ok := resources[graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: graph.OpIndex(i)}]; ok && !assigned[id] {
					assigned[id] = true
					if v := sg.Ops[i].Inputs[1]; v >= 0 && int(v) < len(sg.Tensors) {
						steps = append(steps, step{opPersistentOverTemps, sg.Tensors[v].Size, arenaAlign})
					}
				}
			}
			scratch += d.scratch
			// FinishPrepareNodeAllocations.
			steps = append(steps, step{kind: opReset})
			b, a := sz(fw.scratchRequest, int64(scratch+maxScratchPerOp))
			resize(b, a)
		}
	}
	// FinishModelAllocation: the scratch handles, then
	// CommitStaticMemoryPlan.
	if scratch > 0 {
		p(sz(fw.scratchHandle, int64(scratch)))
	}
	nTensors := 0
	for _, sg := range m.Subgraphs {
		nTensors += len(sg.Tensors)
	}
	tmp(sz(fw.sizeT, int64(len(m.Subgraphs))))
	tmp(sz(fw.allocationInfo, int64(nTensors+scratch)))
	offline := offlineOffsets(m)
	buffers := scratch
	for s, sg := range m.Subgraphs {
		for i, tn := range sg.Tensors {
			hasData := tn.Buffer > 0 && int(tn.Buffer) < len(m.Buffers) && len(m.Buffers[tn.Buffer].Data) > 0
			if tn.IsVariable {
				// AllocateVariables looks the offset up by the index
				// within the subgraph.
				if offline == nil || i >= len(offline) || offline[i] == -1 {
					p(alignUp(tn.Size, 1), arenaAlign)
				}
			}
			// AllocationInfoBuilder::InitializeAllocationInfo.
			off := int32(-1)
			if offline != nil {
				if g := globalIndex(m, s, i); g < len(offline) {
					off = offline[g]
				}
			}
			switch {
			case off != -1 && !hasData:
				buffers++
			case !hasData && !tn.IsVariable && tn.Size != 0:
				buffers++
			}
		}
	}
	steps = append(steps, step{kind: opPlanner, bytes: int64(buffers)})
	steps = append(steps, step{kind: opReset})
	resize(0, 1)             // DeallocateResizableBuffer
	resize(head, arenaAlign) // ReserveNonPersistentOverlayMemory
	// AllocateTensors: the input and output TfLiteTensors.
	sg0 := &m.Subgraphs[0]
	for _, ids := range [][]graph.TensorID{sg0.Inputs, sg0.Outputs} {
		p(t.PointerSize*int64(len(ids)), arenaAlign)
		for _, id := range ids {
			if id >= 0 && int(id) < len(sg0.Tensors) {
				tensorTemp(&sg0.Tensors[id], p)
			}
		}
	}
	return steps, nil
}

// RefusedError says TFLM cannot run the model whatever its arena: an
// operator it registers no kernel for, or whose kernel refuses it
// (kernels.TFLMRefusal), so no tensor_arena figure means anything.
type RefusedError struct {
	Subgraph, Op int
	Name         string // the operator's name ("custom " and its name for a custom one)
	Why          string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("tflmarena: subgraph %d operator %d (%s): TFLM cannot run it: %s", e.Subgraph, e.Op, e.Name, e.Why)
}

// opName names op in errors: its builtin name or "custom <name>".
func opName(op *graph.Op) string {
	if op.Code == graph.Custom {
		return "custom " + op.CustomName
	}
	return op.CodeName
}

// globalIndex is tensor i of subgraph s counted over all subgraphs.
func globalIndex(m *graph.Model, s, i int) int {
	g := i
	for k := 0; k < s; k++ {
		g += len(m.Subgraphs[k].Tensors)
	}
	return g
}

// offlineOffsets returns the model's OfflineMemoryAllocation offsets, or
// nil (micro_allocation_info.cc GetOfflinePlannedOffsets).
func offlineOffsets(m *graph.Model) []int32 {
	for _, md := range m.Metadata {
		if md.Name != graph.OfflinePlanName || md.Buffer < 0 || int(md.Buffer) >= len(m.Buffers) {
			continue
		}
		if _, _, offs, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data); err == nil {
			return offs
		}
	}
	return nil
}

// ResourceVariables is the num_variables the figures assume the
// application passes to MicroResourceVariables::Create
// (micro_resource_variable.cc @90b983c, Create): one slot per VAR_HANDLE
// operator of m, as tflm_run creates them; 0 for a model without.
func ResourceVariables(m *graph.Model) int {
	n := 0
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			if op.Code == graph.VarHandle {
				n++
			}
		}
	}
	return n
}

// resourceIDs maps each ASSIGN_VARIABLE to the resource variable it
// assigns: the VAR_HANDLE that produces its input 0, resources told apart
// by container and shared name (MicroResourceVariables::
// CreateIdIfNoneFound).
func resourceIDs(m *graph.Model) map[graph.OpRef]int {
	ids := map[graph.OpRef]int{}
	names := map[[2]string]int{}
	for s, sg := range m.Subgraphs {
		producer := map[graph.TensorID]*graph.Op{}
		for i := range sg.Ops {
			for _, o := range sg.Ops[i].Outputs {
				producer[o] = &sg.Ops[i]
			}
		}
		for i, op := range sg.Ops {
			if op.Code != graph.AssignVariable || len(op.Inputs) == 0 {
				continue
			}
			vh := producer[op.Inputs[0]]
			if vh == nil || vh.Code != graph.VarHandle {
				continue
			}
			key := [2]string{}
			if vh.Resource != nil {
				key = [2]string{vh.Resource.Container, vh.Resource.SharedName}
			}
			id, ok := names[key]
			if !ok {
				id = len(names)
				names[key] = id
			}
			ids[graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: graph.OpIndex(i)}] = id
		}
	}
	return ids
}
