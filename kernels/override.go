package kernels

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// ScratchOverride says what one operator's kernel asks for when the
// library's own rule is wrong or missing: a custom operator the library
// does not know, or a builtin whose kernel the application replaced. It
// is data, read from a config file (kernel_scratch):
//
//	kernel_scratch:
//	  - custom: MyFilter          # a custom operator, by its custom code
//	    buffers:
//	      - bytes: 1024           # a fixed size
//	      - per_output_element: 4 # output 0's element count × 4
//	  - builtin: CONV_2D          # a builtin, as heliac inspect names it
//	    buffers: []               # asks for nothing
//
// Each buffer asks for bytes + per_input_element × (input's element count)
// + per_output_element × (output's element count); the operand positions
// default to 0, and a missing operand (an omitted optional input) counts
// no elements. A buffer of 0 bytes asks for nothing. Each value is at most
// MaxOverrideBytes, and what a buffer asks for of an operator too
// (CheckOverrides).
type ScratchOverride struct {
	Builtin string          `yaml:"builtin"`
	Custom  string          `yaml:"custom"`
	Buffers []ScratchBuffer `yaml:"buffers"`
	// Line is the entry's line in the config file, for messages; 0 when
	// unknown.
	Line int `yaml:"-"`
}

// ScratchBuffer is one buffer of a ScratchOverride.
type ScratchBuffer struct {
	Bytes            int64 `yaml:"bytes"`
	PerInputElement  int64 `yaml:"per_input_element"`
	Input            int   `yaml:"input"`
	PerOutputElement int64 `yaml:"per_output_element"`
	Output           int   `yaml:"output"`
}

// MaxOverrideBytes bounds the values of a ScratchBuffer and what it asks
// for of an operator: the C module's kernel scratch table holds sizes and
// offsets as uint32_t.
const MaxOverrideBytes = math.MaxUint32

// maxOperand bounds an operand position: no operator has so many.
const maxOperand = 1 << 16

// Describe names the entry, the index-th (from 0) of its list, for
// messages: "kernel_scratch entry 2 (CONV_2D, line 7)",
// "kernel_scratch entry 1 (CUSTOM:MyOp)".
func (o ScratchOverride) Describe(index int) string {
	var parts []string
	if (o.Builtin == "") != (o.Custom == "") {
		parts = append(parts, o.Operator())
	}
	if o.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", o.Line))
	}
	s := fmt.Sprintf("kernel_scratch entry %d", index+1)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// Operator is the name of the operator the entry overrides, as
// graph.Op.Name spells it: "CONV_2D", "CUSTOM:MyOp".
func (o ScratchOverride) Operator() string {
	if o.Custom != "" {
		return "CUSTOM:" + o.Custom
	}
	return o.Builtin
}

// builtinName is how TFLite spells a builtin operator (BuiltinOperator in
// schema.fbs): upper-case letters, digits and underscores.
var builtinName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// CheckScratchOverrides checks entries on their own, as WithScratch does:
// each names exactly one of builtin (spelled as TFLite spells builtins,
// not "CUSTOM") and custom; no value is negative or above its bound
// (MaxOverrideBytes for sizes); an operand position is given only with
// its factor. The error names the entry (Describe) and, for a buffer, its
// position from 1.
func CheckScratchOverrides(overrides []ScratchOverride) error {
	for i, o := range overrides {
		what := o.Describe(i)
		switch {
		case (o.Builtin == "") == (o.Custom == ""):
			return fmt.Errorf("kernels: %s: give either builtin or custom", what)
		case o.Builtin != "" && (!builtinName.MatchString(o.Builtin) || o.Builtin == "CUSTOM"):
			return fmt.Errorf("kernels: %s: builtin %q is not a builtin operator's name (such as CONV_2D)", what, o.Builtin)
		}
		for k, b := range o.Buffers {
			buf := fmt.Sprintf("kernels: %s: buffer %d", what, k+1)
			switch {
			case b.Bytes < 0 || b.PerInputElement < 0 || b.PerOutputElement < 0 || b.Input < 0 || b.Output < 0:
				return fmt.Errorf("%s: sizes and operand positions must not be negative", buf)
			case b.Bytes > MaxOverrideBytes:
				return fmt.Errorf("%s: bytes %d is more than %d", buf, b.Bytes, int64(MaxOverrideBytes))
			case b.PerInputElement > MaxOverrideBytes:
				return fmt.Errorf("%s: per_input_element %d is more than %d", buf, b.PerInputElement, int64(MaxOverrideBytes))
			case b.PerOutputElement > MaxOverrideBytes:
				return fmt.Errorf("%s: per_output_element %d is more than %d", buf, b.PerOutputElement, int64(MaxOverrideBytes))
			case b.Input >= maxOperand || b.Output >= maxOperand:
				return fmt.Errorf("%s: operand position %d is more than any operator has", buf, max(b.Input, b.Output))
			case b.Input > 0 && b.PerInputElement == 0:
				return fmt.Errorf("%s: input %d is given without per_input_element, so it counts for nothing", buf, b.Input)
			case b.Output > 0 && b.PerOutputElement == 0:
				return fmt.Errorf("%s: output %d is given without per_output_element, so it counts for nothing", buf, b.Output)
			}
		}
	}
	return nil
}

// WithScratch returns a copy of the library whose scratch rules for the
// overridden operators are the overrides' (a later entry for the same
// operator wins); its contracts are the library's. The entries must pass
// CheckScratchOverrides; otherwise it returns that error. The library
// keeps the entries for CheckOverrides.
func (l *Library) WithScratch(overrides []ScratchOverride) (*Library, error) {
	if err := CheckScratchOverrides(overrides); err != nil {
		return nil, err
	}
	out := *l
	out.customScratch = maps.Clone(l.customScratch)
	out.builtinScratch = maps.Clone(l.builtinScratch)
	if out.customScratch == nil {
		out.customScratch = map[string]scratchRule{}
	}
	if out.builtinScratch == nil {
		out.builtinScratch = map[string]scratchRule{}
	}
	for _, o := range overrides {
		rule := overrideRule(o.Buffers)
		if o.Custom != "" {
			out.customScratch[o.Custom] = rule
		} else {
			out.builtinScratch[o.Builtin] = rule
		}
	}
	out.overrides = append(slices.Clip(l.overrides), overrides...)
	return &out, nil
}

// Overrides returns the entries WithScratch added, in order.
func (l *Library) Overrides() []ScratchOverride {
	if l == nil {
		return nil
	}
	return slices.Clone(l.overrides)
}

// UnusedOverride is an override entry that applies to no operator of a
// model: none has its name, or a later entry for the same operator
// replaces it.
type UnusedOverride struct {
	Entry    int    // index into Overrides
	Operator string // ScratchOverride.Operator
	Line     int    // ScratchOverride.Line
	Reason   string // "no operator of the model is CONV_2D"
}

// CheckOverrides checks the library's overrides against model m: an
// entry that applies to an operator must name only operands it has, and
// ask of it for at most MaxOverrideBytes per buffer; otherwise it returns
// an error naming the entry, the buffer and the operator. The entries that
// apply to no operator come back as unused, in order.
func (l *Library) CheckOverrides(m *graph.Model) ([]UnusedOverride, error) {
	overrides := l.Overrides()
	var unused []UnusedOverride
	for i, o := range overrides {
		if j := slices.IndexFunc(overrides[i+1:], func(p ScratchOverride) bool { return p.Operator() == o.Operator() }); j >= 0 {
			unused = append(unused, UnusedOverride{Entry: i, Operator: o.Operator(), Line: o.Line,
				Reason: fmt.Sprintf("%s replaces it", overrides[i+1+j].Describe(i+1+j))})
			continue
		}
		applied := false
		for si := range m.Subgraphs {
			sg := &m.Subgraphs[si]
			for oi := range sg.Ops {
				op := &sg.Ops[oi]
				if !o.appliesTo(op) {
					continue
				}
				applied = true
				ref := graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}
				if err := checkOverrideOn(o, i, sg, op, ref); err != nil {
					return nil, err
				}
			}
		}
		if !applied {
			unused = append(unused, UnusedOverride{Entry: i, Operator: o.Operator(), Line: o.Line,
				Reason: fmt.Sprintf("no operator of the model is %s", o.Operator())})
		}
	}
	return unused, nil
}

// appliesTo reports whether the entry names op, as Scratch looks rules up.
func (o ScratchOverride) appliesTo(op *graph.Op) bool {
	if op.Code == graph.Custom {
		return o.Custom != "" && op.CustomName == o.Custom
	}
	return o.Builtin != "" && op.CodeName == o.Builtin
}

// checkOverrideOn checks entry o (the i-th) against operator op of sg.
func checkOverrideOn(o ScratchOverride, i int, sg *graph.Subgraph, op *graph.Op, ref graph.OpRef) error {
	for k, b := range o.Buffers {
		buf := fmt.Sprintf("kernels: %s: buffer %d", o.Describe(i), k+1)
		switch {
		case b.PerInputElement > 0 && b.Input >= len(op.Inputs):
			return fmt.Errorf("%s: input %d, but operator %v (%s) has %d input(s)", buf, b.Input, ref, op.Name(), len(op.Inputs))
		case b.PerOutputElement > 0 && b.Output >= len(op.Outputs):
			return fmt.Errorf("%s: output %d, but operator %v (%s) has %d output(s)", buf, b.Output, ref, op.Name(), len(op.Outputs))
		}
		n := addScaled(b.Bytes, b.PerInputElement, flat(operand(sg, op.Inputs, b.Input)))
		n = addScaled(n, b.PerOutputElement, flat(operand(sg, op.Outputs, b.Output)))
		if n > MaxOverrideBytes {
			return fmt.Errorf("%s: asks operator %v (%s) for more than %d bytes", buf, ref, op.Name(), int64(MaxOverrideBytes))
		}
	}
	return nil
}

// overrideCap caps what an override asks for, so that a huge tensor
// times a factor cannot overflow; CheckOverrides refuses more than
// MaxOverrideBytes.
const overrideCap = math.MaxInt64 / 4

// overrideRule is the scratch rule of an override's buffers.
func overrideRule(bufs []ScratchBuffer) scratchRule {
	bufs = append([]ScratchBuffer(nil), bufs...)
	return func(c scratchCtx) []int64 {
		out := make([]int64, 0, len(bufs))
		for _, b := range bufs {
			n := b.Bytes
			n = addScaled(n, b.PerInputElement, flat(operand(c.sg, c.op.Inputs, b.Input)))
			n = addScaled(n, b.PerOutputElement, flat(operand(c.sg, c.op.Outputs, b.Output)))
			out = append(out, n)
		}
		return out
	}
}

// addScaled returns n + k×elems, capped at overrideCap.
func addScaled(n, k, elems int64) int64 {
	if k == 0 || elems <= 0 {
		return n
	}
	if elems > (overrideCap-n)/k {
		return overrideCap
	}
	return n + k*elems
}

// operand returns the tensor at position i of ids, or nil when there is
// none.
func operand(sg *graph.Subgraph, ids []graph.TensorID, i int) *graph.Tensor {
	if i < 0 || i >= len(ids) || ids[i] < 0 || int(ids[i]) >= len(sg.Tensors) {
		return nil
	}
	return &sg.Tensors[ids[i]]
}
