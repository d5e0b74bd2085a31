// Package plan places everything of a model that needs memory in arenas:
// scratch tensors and kernel scratch in a scratch arena whose offsets are
// chosen by an allocator so that allocations live at the same step never
// share bytes, is_variable state and resource variables in a persistent
// arena, and constant data in a constant arena.
//
// Input: *graph.Model and its *liveness.Lifetimes (whose Schedule gives
// every step). Output: *Plan, a new value; neither input is changed.
// Offsets come from plan/dsa, which knows buffers rather than allocations;
// buffer is the one place lifetimes become dsa buffers. Platforms
// and rules come in Options, which Build checks (Platform.Validate,
// ValidateRules); package config reads them from files. It must not import
// emit, verify or config, nor any package outside heliac and the standard
// library.
//
// The plan is two lists of values. An Arena is one block of memory with an
// identity (ID, and a Name usable in C), a role, a memory bank and a
// provider. An Alloc is one thing that occupies bytes, of one of three
// kinds (a tensor, a resource variable, a kernel's scratch buffer), with its
// lifetime, arena, offset and size. A new kind of allocation is a new
// AllocKind, not a new list.
package plan

import (
	"fmt"
	"time"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/traffic"
)

// ArenaID identifies an arena within a plan.
type ArenaID int

// Provider says who provides an arena's bytes.
type Provider uint8

// Providers. The zero Provider is invalid.
const (
	// Owned arenas are defined by heliac's C module.
	Owned Provider = iota + 1
	// Bound arenas are buffers the application binds at run time.
	Bound
	// Shared arenas are one buffer shared between several models' plans,
	// identified across them by the arena's Name (Share): the set's shared
	// module defines it, sized to the largest (Arena.SharedSize), and
	// binds it to each model as a Bound arena is bound.
	Shared
)

var providerNames = [...]string{Owned: "owned", Bound: "bound", Shared: "shared"}

// String returns the provider's lower-case name, as plan.json spells it.
func (p Provider) String() string {
	if p == 0 || int(p) >= len(providerNames) {
		return fmt.Sprintf("Provider(%d)", int(p))
	}
	return providerNames[p]
}

// Arena is one contiguous block of memory. Sizes and offsets are bytes.
type Arena struct {
	ID ArenaID
	// Name is unique in the plan and a C identifier part (lower-case
	// letters, digits and single underscores, such as "scratch_sram");
	// emitted C names the arena <prefix>_<Name>.
	Name string
	// Role is the class of what the arena holds: Scratch (reused across
	// steps), Persistent (kept between invocations) or Constant.
	Role liveness.Class
	// Memory is the bank the arena lives in at run time.
	Memory string
	// Source is, for a staged constant arena, the read-only bank its image
	// is copied from into Memory before the first run; "" for every other
	// arena (a cold constant arena is read where it lies).
	Source   string
	Provider Provider
	// Size is the bytes reserved: Used rounded up to Alignment.
	Size int64
	// Used is the end of the highest allocation in the arena.
	Used      int64
	Alignment int64
	// SharedSize is, for a Shared arena, the bytes of the buffer it is:
	// the largest of the arenas of its name over the plans that share it.
	SharedSize int64
	// Capacity is the bank's capacity (0: unlimited), shared by every
	// arena in the bank.
	Capacity int64
	// LowerBound is, for a scratch arena, the peak over steps of live
	// allocations' aligned sizes: no placement can use less. For other
	// arenas it is the sum of their allocations' aligned sizes.
	LowerBound int64
	// TensorLowerBound is, for a scratch arena, its lower bound without
	// kernel scratch: what its tensors alone need (LowerBound when no
	// kernel asks for scratch).
	TensorLowerBound int64
	// PeakStep is a step at which a scratch arena's LowerBound is reached,
	// and Peak the allocations live there (an alias group by its root).
	PeakStep liveness.Step
	Peak     []Key
	// UnaliasedLowerBound is, for a scratch arena, the lower bound if no
	// tensor shared its input's buffer; minus LowerBound, it is what
	// aliasing saves.
	UnaliasedLowerBound int64
	// Optimal says, for a scratch arena, that the planner proved no
	// placement of its allocations lower (dsa.Solution.Optimal): the
	// height meets LowerBound, or a higher bound the search proved.
	Optimal bool
	// TFLMGrowth is, for a scratch arena, the bytes it grew so that its
	// kernel scratch lies where TFLM's planner puts it
	// (Options.TFLMKernelScratch); 0 when heliac's holes were where TFLM
	// looks, or nothing asked.
	TFLMGrowth int64
	// TimedOut is, for a scratch arena whose planner searched
	// (PlannerBest) and ran out of Options.TimeLimit before proving its
	// height optimal, that limit; 0 otherwise. The placement is then the
	// best found in that time.
	TimedOut time.Duration
}

// Staged reports whether the arena is a constant arena copied from Source
// into Memory before the first run.
func (a *Arena) Staged() bool { return a.Role == liveness.Constant && a.Source != "" }

// AllocKind says what an allocation holds.
type AllocKind uint8

// Allocation kinds. The zero AllocKind is invalid.
const (
	// TensorAlloc is a tensor of the model.
	TensorAlloc AllocKind = iota + 1
	// VariableAlloc is a resource variable: VAR_HANDLE operators with one
	// container and shared_name, read and assigned through their handles.
	VariableAlloc
	// KernelScratchAlloc is a scratch buffer a kernel asks for, owned by
	// one operator and live while it runs.
	KernelScratchAlloc
)

var allocKindNames = [...]string{TensorAlloc: "tensor", VariableAlloc: "variable", KernelScratchAlloc: "kernel_scratch"}

// String returns the kind's name, as plan.json spells it.
func (k AllocKind) String() string {
	if k == 0 || int(k) >= len(allocKindNames) {
		return fmt.Sprintf("AllocKind(%d)", int(k))
	}
	return allocKindNames[k]
}

// Key identifies an allocation within a plan. Kind says which of the other
// fields do.
type Key struct {
	Kind AllocKind
	// Ref is the tensor of a TensorAlloc.
	Ref graph.TensorRef
	// Variable names the resource variable of a VariableAlloc.
	Variable graph.ResourceName
	// Op is the operator that owns a KernelScratchAlloc, and Index which
	// of its requests it is.
	Op    graph.OpRef
	Index int
}

// String formats the key for messages: "0:12" for a tensor, `variable
// "state"` for a resource variable, "op 0:3 scratch 1" for kernel scratch.
func (k Key) String() string {
	switch k.Kind {
	case TensorAlloc:
		return k.Ref.String()
	case VariableAlloc:
		if k.Variable.Container != "" {
			return fmt.Sprintf("variable %q in container %q", k.Variable.SharedName, k.Variable.Container)
		}
		return fmt.Sprintf("variable %q", k.Variable.SharedName)
	case KernelScratchAlloc:
		return fmt.Sprintf("op %v scratch %d", k.Op, k.Index)
	}
	return fmt.Sprintf("%v allocation", k.Kind)
}

// TensorKey returns the key of a tensor's allocation.
func TensorKey(ref graph.TensorRef) Key { return Key{Kind: TensorAlloc, Ref: ref} }

// Alloc is one allocation: something that occupies bytes of an arena.
type Alloc struct {
	Key
	// Name is the tensor's name, the variable's shared_name, or, for
	// kernel scratch, the operator's name and the request's index.
	Name string
	// Class is the class of memory the allocation needs; it is the Role
	// of its arena. Kernel scratch is Scratch; resource variables are
	// Persistent.
	Class  liveness.Class
	Size   int64 // bytes, before alignment
	Arena  ArenaID
	Offset int64 // from the start of the arena
	// Live is when the allocation holds data: a scratch tensor's
	// lifetime, a kernel scratch buffer's operator span, every step for
	// persistent allocations. Constants are read where their readers run.
	Live liveness.Interval
	// AliasOf names the root of the alias group whose bytes this tensor
	// shares (same arena); nil when it has a buffer of its own. A group is
	// placed as one block covering every member (liveness.Tensor.Extent).
	AliasOf *graph.TensorRef
	// AliasOffset is where an alias member's first byte lies relative to
	// its root's: Offset is the root's Offset plus AliasOffset. It is 0
	// for views and exact in-place writes, which have the root's offset
	// and size.
	AliasOffset int64
	// InPlace is set when the tensor takes those bytes by being written
	// over an input of its operator, under a kernel contract.
	InPlace *liveness.InPlace
	// Copy is set when the tensor shares bytes with another operand of a
	// copying kernel that then copies them exactly onto themselves (an
	// exact-overlap copy contract): the plan relies on memcpy(p, p, n).
	Copy *liveness.Copy
	// OwnPlan is set when the tensor keeps the offset from its group's
	// root that the model's own offline plan gives it, because an
	// operator's kernel addresses the group's members relative to one
	// another (liveness.OwnPlan): the root's too.
	OwnPlan *liveness.OwnPlan
	// Dynamic is set when a tensor's shape signature has an unknown
	// dimension; it is planned with the model's concrete shape.
	Dynamic bool
	// Handles are, for a resource variable, the resource tensors that
	// refer to it.
	Handles []graph.TensorRef
	// Traffic is the bytes the allocation's readers and writers move per
	// inference (package traffic's estimate, a lower bound; zero for
	// kernel scratch, whose use the plan does not know).
	Traffic traffic.Bytes
}

// ScratchSource names the kernel library whose rules sized a plan's kernel
// scratch, and the CPU they were sized for ("" when the library's sizes
// do not depend on one).
type ScratchSource struct {
	Library string
	CPU     string
}

// ScratchRequest is a kernel's request for scratch bytes while its operator
// runs. Requests of one operator are numbered in the order given.
type ScratchRequest struct {
	Op   graph.OpRef
	Size int64
}

// Skipped is a tensor that an operator uses but that has no bytes in the
// plan, with the reason.
type Skipped struct {
	Ref    graph.TensorRef
	Name   string
	Reason string
}

// Spill records an allocation placed in a later bank than it asked for
// because its bank was full.
type Spill struct {
	Key
	Name   string
	From   string
	To     string
	Reason string
}

// Plan is a complete memory plan. It is a new value built by Build and is
// not changed afterwards.
type Plan struct {
	Planner   string
	Alignment int64
	// Schedule is the order operators run in and the steps it gives them;
	// every lifetime in the plan is on its timeline.
	Schedule liveness.Schedule
	Arenas   []Arena
	// Allocs lists tensors in (subgraph, tensor) order, then resource
	// variables in order of first appearance, then kernel scratch by
	// operator in (subgraph, operator) order, each operator's requests in
	// the order made.
	Allocs []Alloc
	// Skipped lists used tensors that take no bytes and why (zero-size,
	// resource handles, run-time strings), in (subgraph, tensor) order.
	Skipped []Skipped
	// Spills lists allocations placed in a later bank than they asked for.
	Spills []Spill
	// UnusedRules lists the tensor and name rules that select nothing, in
	// rule order (see Options.Strict).
	UnusedRules []UnusedRule
	// UnusedExternal lists the globs of Options.External that bind no
	// arena, in their order (see Options.Strict). "*" is never listed.
	UnusedExternal []string
	// UnknownScratch lists the operators whose kernel scratch is not in
	// the plan because their library has no rule for them
	// (Options.UnknownScratch).
	UnknownScratch []graph.OpRef
	// UnusedOverrides lists the config's kernel_scratch entries that apply
	// to no operator (Options.UnusedOverrides).
	UnusedOverrides []UnusedOverride
	// ScratchSource says which library and CPU sized the kernel scratch
	// (Options.ScratchSource); zero when no library was asked.
	ScratchSource ScratchSource
	// Kernels names the kernel library whose contracts InPlace
	// allocations follow ("" when none was given), KernelsPath its code
	// path ("" for none), and OverwriteInputs says model inputs may be
	// written over (liveness.Options).
	Kernels         string
	KernelsPath     string
	OverwriteInputs bool
	// Platform is the set of banks the plan was made for, and Rules the
	// placement rules it honours.
	Platform Platform
	Rules    []Rule
	// tensors and others map keys to indices into Allocs: tensors, the
	// many, by their reference; the few others by their whole key.
	tensors map[graph.TensorRef]int
	others  map[Key]int
}

// ScratchTotals returns the summed sizes and lower bounds of the plan's
// scratch arenas.
func (p *Plan) ScratchTotals() (size, lowerBound int64) {
	for _, a := range p.Arenas {
		if a.Role == liveness.Scratch {
			size += a.Size
			lowerBound += a.LowerBound
		}
	}
	return size, lowerBound
}

// KernelScratch returns how many kernel scratch buffers the plan holds,
// for how many operators, and their bytes (before alignment).
func (p *Plan) KernelScratch() (buffers, operators int, bytes int64) {
	ops := map[graph.OpRef]bool{}
	for _, a := range p.Allocs {
		if a.Kind == KernelScratchAlloc {
			buffers++
			bytes += a.Size
			ops[a.Op] = true
		}
	}
	return buffers, len(ops), bytes
}

// Arena returns the arena with the given ID, or nil when there is none.
func (p *Plan) Arena(id ArenaID) *Arena {
	for i := range p.Arenas {
		if p.Arenas[i].ID == id {
			return &p.Arenas[i]
		}
	}
	return nil
}

// Lookup returns the allocation with the given key, or nil when nothing of
// the plan has that key.
func (p *Plan) Lookup(k Key) *Alloc {
	i, ok := p.others[k]
	if k.Kind == TensorAlloc {
		i, ok = p.tensors[k.Ref]
	}
	if !ok {
		return nil
	}
	return &p.Allocs[i]
}

// add appends an allocation and indexes it by its key.
func (p *Plan) add(a Alloc) {
	if a.Kind == TensorAlloc {
		p.tensors[a.Ref] = len(p.Allocs)
	} else {
		p.others[a.Key] = len(p.Allocs)
	}
	p.Allocs = append(p.Allocs, a)
}

// Block returns the bytes a scratch allocation's buffer covers in its
// arena: for the root of an alias group, from its lowest member's first
// byte to its highest member's end (the block the group was placed as);
// for any other allocation, its own bytes.
func (p *Plan) Block(k Key) (offset, size int64) {
	a := p.Lookup(k)
	if a == nil {
		return 0, 0
	}
	lo, hi := a.Offset, a.Offset+a.Size
	if a.Kind == TensorAlloc && a.AliasOf == nil {
		for _, m := range p.Allocs {
			if m.AliasOf != nil && *m.AliasOf == a.Ref {
				lo, hi = min(lo, m.Offset), max(hi, m.Offset+m.Size)
			}
		}
	}
	return lo, hi - lo
}

// TensorID names a tensor of a model in plan.json's heliaAOT maps
// (tensor_allocs, tensor_lifetimes): "<subgraph>:<tensor>", both decimal
// without sign or leading zeros, such as "0:12". It is stable (the model's
// own indices) and unique across subgraphs, and spelled as a rule's tensor
// selector is.
type TensorID string

// TensorIDOf returns the id of a tensor.
func TensorIDOf(ref graph.TensorRef) TensorID { return TensorID(ref.String()) }

// ParseTensorID returns the tensor an id names, or an error when id is not
// spelled as TensorIDOf spells one.
func ParseTensorID(id TensorID) (graph.TensorRef, error) {
	ref, err := ParseTensorRef(string(id))
	if err != nil || TensorIDOf(ref) != id {
		return graph.TensorRef{}, fmt.Errorf("plan: %q is not a tensor id (subgraph:tensor in decimal, as \"0:12\")", string(id))
	}
	return ref, nil
}

// UnknownTensorError is the error of Allocation for an id that names no
// tensor allocation: one that is not a tensor id, names no tensor of the
// plan, or names a tensor that takes no bytes.
type UnknownTensorError struct {
	ID TensorID
	// Reason says why: the skipped_tensors reason of a tensor that takes no
	// bytes ("zero-size", "resource handle", ...), "not a tensor id", or
	// "no such tensor".
	Reason string
}

func (e *UnknownTensorError) Error() string {
	return fmt.Sprintf("plan: tensor %q has no allocation: %s", string(e.ID), e.Reason)
}

// Allocation returns the allocation of the tensor id names, as heliaAOT's
// MemoryPlan.get_allocation does, or an *UnknownTensorError.
func (p *Plan) Allocation(id TensorID) (*Alloc, error) {
	ref, err := ParseTensorID(id)
	if err != nil {
		return nil, &UnknownTensorError{ID: id, Reason: "not a tensor id"}
	}
	if a := p.Lookup(TensorKey(ref)); a != nil {
		return a, nil
	}
	for _, s := range p.Skipped {
		if s.Ref == ref {
			return nil, &UnknownTensorError{ID: id, Reason: s.Reason}
		}
	}
	return nil, &UnknownTensorError{ID: id, Reason: "no such tensor"}
}
