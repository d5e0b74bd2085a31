package kernels

import (
	"fmt"
	"slices"
	"sync"

	"github.com/heliac/heliac/graph"
)

// Any is the name of the set of every kernel library heliac models, on
// every code path: TFLM's reference kernels and TFLM's CMSIS-NN kernels
// on the portable C path (Cortex-M0/M0+/M3/M23, and any host), the DSP
// path (Cortex-M4/M7/M33/M35P) and the MVE path (Cortex-M55/M85). A plan
// for it computes the model's outputs whichever of them the firmware
// links; On narrows it to the libraries a CPU runs.
const Any = "any"

// Paths lists the code paths a library may be built for, as On takes
// them.
func Paths() []ISA { return []ISA{NoDSP, DSP, MVE} }

// PathName names a code path as plan.json, the emitted model's metadata
// and --cpu's help do: "portable", "dsp", "mve".
func (i ISA) PathName() string {
	switch i {
	case NoDSP:
		return "portable"
	case DSP:
		return "dsp"
	case MVE:
		return "mve"
	}
	return fmt.Sprintf("isa%d", int(i))
}

// ParsePath returns the code path PathName names.
func ParsePath(name string) (ISA, error) {
	for _, i := range Paths() {
		if i.PathName() == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("kernels: unknown code path %q (known: portable, dsp, mve)", name)
}

// Resolve returns the library a plan names: Lookup(name), narrowed to
// the code path path names (PathName) unless path is "".
func Resolve(name, path string) (*Library, error) {
	l, err := Lookup(name)
	if err != nil || path == "" {
		return l, err
	}
	isa, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	return l.On(isa), nil
}

// Path returns the code path the library was narrowed to (On), and
// whether it was: a library whose kernels do not depend on the path
// (tflm-reference) has none.
func (l *Library) Path() (ISA, bool) {
	if l == nil {
		return 0, false
	}
	return l.isa, l.onPath
}

// PathName is the library's code path's PathName, or "" when it has
// none.
func (l *Library) PathName() string {
	if isa, ok := l.Path(); ok {
		return isa.PathName()
	}
	return ""
}

// String names the library and its code path for messages:
// "cmsis-nn (mve)", "any (portable)", "tflm-reference".
func (l *Library) String() string {
	if l == nil {
		return "no kernel library"
	}
	if p := l.PathName(); p != "" {
		return l.Name + " (" + p + ")"
	}
	return l.Name
}

// Members returns the libraries, each on one code path, that the library
// stands for: a set's members, or the library itself.
func (l *Library) Members() []*Library {
	if l == nil {
		return nil
	}
	if len(l.members) > 0 {
		return slices.Clone(l.members)
	}
	return []*Library{l}
}

// On returns the library narrowed to code path isa: CMSIS-NN's kernels
// and scratch for that path; for a set, its members that a CPU of that
// path runs (any: the reference kernels and CMSIS-NN on isa). A library
// whose kernels do not depend on the path is returned as it is. The
// library's scratch overrides (WithScratch) carry over.
func (l *Library) On(isa ISA) *Library {
	if l == nil {
		return nil
	}
	var base *Library
	switch {
	case len(l.members) > 0:
		var ms []*Library
		for _, m := range l.members {
			if n := m.On(isa); !slices.Contains(ms, n) {
				ms = append(ms, n)
			}
		}
		if len(ms) == 1 {
			base = ms[0]
		} else {
			set := *l
			set.members, set.isa, set.onPath = ms, isa, true
			return &set
		}
	case l.Name == CMSISNN:
		base = cmsisOn(isa)
	default:
		return l
	}
	if len(l.overrides) == 0 && l.builtinScratch == nil {
		return base
	}
	out := *base
	out.customScratch, out.builtinScratch, out.overrides = l.customScratch, l.builtinScratch, l.overrides
	return &out
}

// newSet returns the set of members named name. Its exact-overlap copies
// and custom operators' scratch are the reference kernels' (no library
// heliac models replaces them).
func newSet(name string, members ...*Library) *Library {
	return &Library{Name: name, members: members, contracts: map[graph.Opcode][]rule{}, copies: tflmReference.copies,
		customScratch: tflmReference.customScratch}
}

// cmsisSet is CMSIS-NN on every code path, until On picks one.
var cmsisSet = sync.OnceValue(func() *Library {
	return newSet(CMSISNN, cmsisOn(NoDSP), cmsisOn(DSP), cmsisOn(MVE))
})

// anySet is every library on every code path.
var anySet = sync.OnceValue(func() *Library {
	return newSet(Any, tflmReference, cmsisOn(NoDSP), cmsisOn(DSP), cmsisOn(MVE))
})

// intersect returns the placements that every list has, matched by
// input, output and overlap, each with the window all of them allow; a
// pair whose windows do not meet is dropped.
func intersect(lists [][]Placement) []Placement {
	if len(lists) == 0 {
		return nil
	}
	out := slices.Clone(lists[0])
	for _, list := range lists[1:] {
		var next []Placement
		for _, p := range out {
			i := slices.IndexFunc(list, func(q Placement) bool {
				return q.Input == p.Input && q.Output == p.Output && q.Overlap == p.Overlap
			})
			if i < 0 {
				continue
			}
			if lo, hi := max(p.Lo, list[i].Lo), min(p.Hi, list[i].Hi); lo <= hi {
				p.Lo, p.Hi = lo, hi
				next = append(next, p)
			}
		}
		out = next
	}
	return out
}

// commonContracts returns the first member's contracts that every other
// member has too (same operator, operands and overlap).
func commonContracts(members []*Library) []Contract {
	var out []Contract
	for _, c := range members[0].Contracts() {
		all := true
		for _, m := range members[1:] {
			all = all && slices.ContainsFunc(m.Contracts(), func(d Contract) bool {
				return d.Op == c.Op && d.Input == c.Input && d.Output == c.Output && d.Overlap == c.Overlap
			})
		}
		if all {
			out = append(out, c)
		}
	}
	return out
}

// setScratch is Scratch for a set: the members' requests when they all
// ask for the same, else one buffer as large as the most any member's
// requests take in TFLM's arena (each rounded up to TFLM's 16-byte
// buffer alignment). TFLM's greedy planner places an operator's requests,
// largest first, each at the start of the lowest gap it fits among the
// buffers live at the operator: in a gap that holds that buffer, every
// member's requests fit, so no member's head exceeds the plan's arena.
func (l *Library) setScratch(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, t Target) ([]int64, bool) {
	var first []int64
	same := true
	var most int64
	for i, mem := range l.members {
		sizes, ok := mem.Scratch(m, s, op, t)
		if !ok {
			return nil, false
		}
		if i == 0 {
			first = sizes
		} else if !slices.Equal(first, sizes) {
			same = false
		}
		var sum int64
		for _, n := range sizes {
			if n > 0 {
				sum += (n + 15) &^ 15
			}
		}
		most = max(most, sum)
	}
	if same {
		return first, true
	}
	return positive(most), true
}
