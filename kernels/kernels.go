// Package kernels is what heliac knows of a kernel library's kernels, as
// data: for each operator, which of its outputs may be written over one of
// its inputs (an in-place contract), and the scratch buffers its kernel
// asks for (Scratch), read from the kernel's own source. Two libraries:
// TFLM's reference kernels (tflm-reference) and TFLM's CMSIS-NN kernels
// (cmsis-nn, whose scratch depends on the CPU: Target, CPU); a config can
// override any operator's scratch (WithScratch).
//
// Input: a library name and operators of a *graph.Model. Output: the
// contracts that apply to an operator, and its scratch requests. It imports graph only; liveness
// uses it to let an output share a dying input's bytes, and verify to
// accept such an overlap only where a contract allows it. Every contract
// is proven on a real runtime by the TFLM interop tests (driver), which run
// each corpus model with heliac's plan and compare its outputs bit for bit.
package kernels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// Overlap is how an output may lie over the input a contract names.
type Overlap uint8

// Overlaps.
const (
	// Exact: the output takes exactly the input's bytes. The kernel
	// writes output element i only after its last read of input element
	// i, at the same index, so input and output must have the same shape
	// and element size.
	Exact Overlap = iota + 1
	// End: the input lies in the last bytes of the output. The kernel is
	// a constant padding (PAD, PADV2: input 0 padded by the constant
	// int32 paddings of input 1): one forward sweep over the output's
	// elements that writes each either from the next input element, read
	// in order, or with the padding value. When output element k is
	// written, at most the padding elements written so far lie between
	// it and the next unread input element, so the input may start as
	// early as the padding written before its last element is copied
	// and as late as its end meeting the output's; both have one element
	// type.
	End
	// Start: the output lies at the start of the input. The kernel reads
	// input element i, then writes output element i, in one forward
	// loop, and output elements are smaller (QUANTIZE from FLOAT32 to
	// INT8: 1 byte at byte i over 4 bytes at byte 4i), so writing output
	// element i clobbers no input element after i. The output may start
	// up to one input element less one byte after the input does.
	Start
	// Sweep: the output sweeps forward over the input. The kernel is a
	// sliding window (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
	// MAX_POOL_2D) that writes its output forward, in flat index order
	// each element after reading its window (TFLM's reference kernels),
	// or a few whole pixels at a time (CMSIS-NN's: a pixelSchedule); the
	// input may start as early as the bytes each write lands on have been
	// read for the last time (windowPlacement, schedulePlacement), and
	// anywhere later.
	Sweep
	// Slot: an exact-overlap copy (copy.go). The input is produced in its
	// slot of the output (CONCATENATION): it starts Lo = Hi bytes into
	// the output, and the kernel copies it onto itself. The input's value
	// stays: it may be read after the operator.
	Slot
	// Block: an exact-overlap copy (copy.go). The output lies over the
	// contiguous block of the input it copies (SPLIT, SPLIT_V, SLICE,
	// STRIDED_SLICE): the input starts -Lo = -Hi bytes before the
	// output, and the kernel copies the block onto itself.
	Block
)

// ExactOverlapCopy reports whether the overlap relies on a copy whose
// source and destination are the same bytes (memcpy(p, p, n) or an
// element loop assigning each element to itself).
func (o Overlap) ExactOverlapCopy() bool { return o == Slot || o == Block }

// String names the overlap as plan.json does.
func (o Overlap) String() string {
	switch o {
	case Exact:
		return "exact"
	case End:
		return "end"
	case Start:
		return "start"
	case Sweep:
		return "sweep"
	case Slot:
		return "slot"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Overlap(%d)", int(o))
}

// Contract says that a kernel's output may be written over one of its
// inputs.
type Contract struct {
	Op      graph.Opcode
	Name    string // the operator's name, e.g. "ADD"
	Input   int    // operand position of the input written over
	Output  int    // operand position of the output that takes its bytes
	Overlap Overlap
	// Source is where in the library's source the kernel was read: the
	// file and the loop that makes the overlap safe.
	Source string
}

// String spells the contract out for messages and plan.json:
// "ADD output 0 over input 1 (exact)".
func (c Contract) String() string {
	return fmt.Sprintf("%s output %d over input %d (%s)", c.Name, c.Output, c.Input, c.Overlap)
}

// Library is what a plan may assume of the kernels that run a model: one
// kernel library built for one code path (TFLM's reference kernels, or
// TFLM's CMSIS-NN kernels compiled for a CPU's extensions), or a set of
// them (Any; CMSIS-NN before a CPU is chosen) of which the firmware may
// link any one. A set's contracts are those every member's contracts
// allow, with the windows they all allow; its scratch covers what each
// member asks for (Scratch).
type Library struct {
	Name string
	// isa is the code path a library's contracts and scratch were read
	// for, when onPath: CMSIS-NN chooses its kernels by the CPU's
	// extensions; a set on a path holds its members on that path.
	isa    ISA
	onPath bool
	// members are the libraries a set stands for; nil for one library.
	members []*Library
	// contracts are the in-place contracts with the rule that places
	// each input (InPlace).
	contracts map[graph.Opcode][]rule
	// copies are the exact-overlap copy contracts (Copies, ExactOverlap),
	// kept apart from contracts: the input does not die at the operator
	// and is not written over.
	copies map[graph.Opcode][]Contract
	// scratch and customScratch compute the scratch an operator asks
	// for, by builtin code and by custom operator name (see Scratch);
	// builtinScratch, by builtin name, are overrides (WithScratch) that
	// come before scratch.
	scratch        map[graph.Opcode]scratchRule
	customScratch  map[string]scratchRule
	builtinScratch map[string]scratchRule
	// overrides are the entries WithScratch added, for CheckOverrides.
	overrides []ScratchOverride
}

// rule is an in-place contract with the function that says, for one
// operator, where its input may lie.
type rule struct {
	Contract
	place placeFunc
}

// placeFunc returns the window [lo, hi] of the input's first byte
// relative to the output's, and whether the contract applies to the
// operator at all.
type placeFunc func(c placeCtx) (lo, hi int64, ok bool)

// placeCtx is what a placement rule reads: the operator, its subgraph,
// the input and output the contract names, and the code path.
type placeCtx struct {
	m       *graph.Model
	sg      *graph.Subgraph
	op      *graph.Op
	in, out *graph.Tensor
	isa     ISA
}

// placeBy returns the placement rule of the reference kernels' contracts
// of an overlap: Exact needs one layout; End, Start and Sweep are
// padPlacement, quantizePlacement and windowPlacement in TFLM's
// reference order (element by element).
func placeBy(o Overlap) placeFunc {
	switch o {
	case Exact:
		return func(c placeCtx) (int64, int64, bool) { return 0, 0, sameLayout(c.in, c.out) }
	case End:
		return func(c placeCtx) (int64, int64, bool) { return padPlacement(c.m, c.sg, c.op, c.in, c.out) }
	case Start:
		return func(c placeCtx) (int64, int64, bool) { return quantizePlacement(c.in, c.out) }
	case Sweep:
		return func(c placeCtx) (int64, int64, bool) {
			return windowPlacement(c.m, c.sg, c.op, c.in, c.out, elementOrder)
		}
	}
	return func(placeCtx) (int64, int64, bool) { return 0, 0, false }
}

// exactWhen is the placement rule of an Exact contract that applies only
// where when says the kernel runs the code the contract was read from.
func exactWhen(when func(placeCtx) bool) placeFunc {
	return func(c placeCtx) (int64, int64, bool) {
		if !when(c) {
			return 0, 0, false
		}
		return 0, 0, sameLayout(c.in, c.out)
	}
}

// add registers a contract placed by its overlap's reference rule.
func (l *Library) add(c Contract) { l.addRule(c, placeBy(c.Overlap)) }

// addRule registers a contract with its placement rule.
func (l *Library) addRule(c Contract, place placeFunc) {
	l.contracts[c.Op] = append(l.contracts[c.Op], rule{Contract: c, place: place})
}

// TFLMReference is the name of TensorFlow Lite Micro's reference kernels.
const TFLMReference = "tflm-reference"

// Names lists the libraries Lookup knows.
func Names() []string { return []string{Any, TFLMReference, CMSISNN} }

// Lookup returns the library with the given name: tflm-reference;
// cmsis-nn, the set of CMSIS-NN's code paths until On narrows it to one;
// any, the set of every library on every code path.
func Lookup(name string) (*Library, error) {
	switch name {
	case TFLMReference:
		return tflmReference, nil
	case CMSISNN:
		return cmsisSet(), nil
	case Any:
		return anySet(), nil
	}
	return nil, fmt.Errorf("kernels: unknown kernel library %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Contracts returns every contract of the library, by operator code and
// then input position; a set's are those every member has.
func (l *Library) Contracts() []Contract {
	if len(l.members) > 0 {
		return commonContracts(l.members)
	}
	var out []Contract
	for _, rs := range l.contracts {
		for _, r := range rs {
			out = append(out, r.Contract)
		}
	}
	slices.SortStableFunc(out, func(a, b Contract) int {
		if a.Op != b.Op {
			return int(a.Op - b.Op)
		}
		return a.Input - b.Input
	})
	return out
}

// ExactOnly returns the library with only its Exact contracts: the
// in-place writes that leave every size unchanged, which an order search
// can count as an output taking its input's bytes (order.Options.InPlace).
func (l *Library) ExactOnly() *Library {
	if l == nil {
		return nil
	}
	out := *l
	out.contracts = map[graph.Opcode][]rule{}
	for code, rs := range l.contracts {
		for _, r := range rs {
			if r.Overlap == Exact {
				out.contracts[code] = append(out.contracts[code], r)
			}
		}
	}
	if len(l.members) > 0 {
		out.members = make([]*Library, len(l.members))
		for i, m := range l.members {
			out.members[i] = m.ExactOnly()
		}
	}
	return &out
}

// Placement is a contract that applies to one operator, with where the
// input may lie relative to the output for the kernel to stay right.
type Placement struct {
	Contract
	// Lo and Hi bound, in bytes, the input's first byte relative to the
	// output's first byte: the kernel computes what it would with separate
	// buffers when the input starts d bytes after the output starts, for
	// every d in [Lo, Hi] (negative: before it). Exact gives [0, 0].
	Lo, Hi int64
}

// Allows reports whether the input may start d bytes after the output.
func (p Placement) Allows(d int64) bool { return p.Lo <= d && d <= p.Hi }

// InPlace returns the contracts of the library that apply to operator op
// of subgraph s of m, each with where the input may lie: for an Exact
// contract, the input and output exist and have the same shape and element
// size, and the input lies exactly over the output; for End, Start and
// Sweep, see padPlacement, quantizePlacement and windowPlacement. A set's
// are the contracts every member applies, each with the window all of
// them allow. Whether the input dies at the operator, and whether either
// is a subgraph's input or output, is for the caller to decide.
func (l *Library) InPlace(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) []Placement {
	if l == nil || m == nil || s < 0 || int(s) >= len(m.Subgraphs) || op == nil {
		return nil
	}
	if len(l.members) > 0 {
		lists := make([][]Placement, len(l.members))
		for i, mem := range l.members {
			lists[i] = mem.InPlace(m, s, op)
		}
		return intersect(lists)
	}
	sg := &m.Subgraphs[s]
	var out []Placement
	for _, r := range l.contracts[op.Code] {
		if r.Input >= len(op.Inputs) || r.Output >= len(op.Outputs) {
			continue
		}
		in, o := op.Inputs[r.Input], op.Outputs[r.Output]
		if in == graph.NoTensor || o == graph.NoTensor || in < 0 || o < 0 ||
			int(in) >= len(sg.Tensors) || int(o) >= len(sg.Tensors) || in == o {
			continue
		}
		if lo, hi, ok := r.place(placeCtx{m: m, sg: sg, op: op, in: &sg.Tensors[in], out: &sg.Tensors[o], isa: l.isa}); ok && lo <= hi {
			out = append(out, Placement{Contract: r.Contract, Lo: lo, Hi: hi})
		}
	}
	return out
}

// sameLayout reports whether two tensors have the same shape and element
// size, so that element i of one lies where element i of the other does.
func sameLayout(a, b *graph.Tensor) bool {
	return a.Type.Bits() == b.Type.Bits() && a.Type.Bits()%8 == 0 && slices.Equal(a.Shape, b.Shape) && a.Size == b.Size
}
