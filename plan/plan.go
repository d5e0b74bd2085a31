// Package plan places every tensor of a model in an arena: scratch tensors
// in a scratch arena whose offsets are chosen by an allocator so that
// tensors live at the same step never share bytes, is_variable state in a
// persistent arena, and constant data in a constant arena.
//
// Input: *graph.Model and its *liveness.Lifetimes. Output: *Plan, a new
// value; neither input is changed. Offsets come from plan/dsa, which knows
// buffers rather than tensors; toBuffers is the one place lifetimes become
// buffers. Platforms and rules come in Options, which Build checks
// (Platform.Validate, ValidateRules); package config reads them from files.
// It must not import emit, verify or config, nor any package outside heliac
// and the standard library.
package plan

import (
	"fmt"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// ArenaKind says what an arena holds.
type ArenaKind uint8

// Arena kinds. The zero ArenaKind is invalid.
const (
	ScratchArena    ArenaKind = iota + 1 // activations; reused across steps
	PersistentArena                      // state kept between invocations
	ConstantArena                        // weights
)

var arenaKindNames = [...]string{ScratchArena: "scratch", PersistentArena: "persistent", ConstantArena: "constant"}

// String returns the kind's lower-case name.
func (k ArenaKind) String() string {
	if k == 0 || int(k) >= len(arenaKindNames) {
		return fmt.Sprintf("ArenaKind(%d)", int(k))
	}
	return arenaKindNames[k]
}

// Arena is one contiguous block of memory. Sizes and offsets are bytes.
type Arena struct {
	Kind   ArenaKind
	Memory string // the bank the arena lives in at run time
	// Size is the bytes reserved: Used rounded up to Alignment.
	Size int64
	// Used is the end of the highest tensor in the arena.
	Used      int64
	Alignment int64
	// Capacity is the bank's capacity (0: unlimited), shared by every
	// arena in the bank.
	Capacity int64
	// LowerBound is, for a scratch arena, the peak over steps of live
	// tensors' aligned sizes: no placement can use less. For other arenas
	// it is the sum of their tensors' aligned sizes.
	LowerBound int64
	// PeakStep is a step at which a scratch arena's LowerBound is reached,
	// and PeakTensors the tensors live there.
	PeakStep    liveness.Step
	PeakTensors []graph.TensorRef
	// UnaliasedLowerBound is, for a scratch arena, the lower bound if no
	// tensor shared its input's buffer; minus LowerBound, it is what
	// aliasing saves.
	UnaliasedLowerBound int64
	// SourceMemory is, for a constant arena, where the data comes from;
	// Staged says it is copied from there into Memory before the first run
	// (otherwise the arena is cold and read in place).
	SourceMemory string
	Staged       bool
}

// Alloc is the placement of one tensor that occupies bytes.
type Alloc struct {
	Ref    graph.TensorRef
	Name   string
	Class  liveness.Class
	Size   int64 // the tensor's bytes before alignment
	Arena  int   // index into Plan.Arenas
	Offset int64 // from the start of the arena
	Live   liveness.Interval
	// AliasOf names the tensor whose bytes this one shares (same arena,
	// offset and size); nil when the tensor has a buffer of its own.
	AliasOf *graph.TensorRef
	// Dynamic is set when the tensor's shape signature has an unknown
	// dimension; it is planned with the model's concrete shape.
	Dynamic bool
}

// VariableAlloc is the placement of one resource variable in a persistent
// arena.
type VariableAlloc struct {
	Name    graph.ResourceName
	Size    int64
	Arena   int
	Offset  int64
	Handles []graph.TensorRef
}

// Skipped is a tensor that an operator uses but that has no bytes in the
// plan, with the reason.
type Skipped struct {
	Ref    graph.TensorRef
	Name   string
	Reason string
}

// Plan is a complete memory plan. It is a new value built by Build and is
// not changed afterwards.
type Plan struct {
	Planner   string
	Alignment int64
	Steps     int
	Arenas    []Arena
	Allocs    []Alloc // ordered by (subgraph, tensor)
	Variables []VariableAlloc
	// Skipped lists used tensors that take no bytes and why (zero-size,
	// resource handles, run-time strings), in (subgraph, tensor) order.
	Skipped []Skipped
	// Spills lists tensors placed in a later bank than they asked for.
	Spills []Spill
	// Platform is the set of banks the plan was made for, and Rules the
	// placement rules it honours.
	Platform Platform
	Rules    []Rule
	index    map[graph.TensorRef]int
}

// ScratchTotals returns the summed sizes and lower bounds of the plan's
// scratch arenas.
func (p *Plan) ScratchTotals() (size, lowerBound int64) {
	for _, a := range p.Arenas {
		if a.Kind == ScratchArena {
			size += a.Size
			lowerBound += a.LowerBound
		}
	}
	return size, lowerBound
}

// Allocation returns the placement of a tensor, or an error when the tensor
// is unknown or occupies no bytes.
func (p *Plan) Allocation(ref graph.TensorRef) (*Alloc, error) {
	i, ok := p.index[ref]
	if !ok {
		return nil, fmt.Errorf("plan: tensor %v has no allocation", ref)
	}
	return &p.Allocs[i], nil
}

// Spill records a tensor placed in a later bank than it asked for because
// its bank was full.
type Spill struct {
	Ref    graph.TensorRef
	Name   string
	From   string
	To     string
	Reason string
}
