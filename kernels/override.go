package kernels

import (
	"fmt"
	"maps"
	"math"
	"regexp"

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
// default to 0, and a missing operand counts no elements. A buffer of 0
// bytes asks for nothing.
type ScratchOverride struct {
	Builtin string          `yaml:"builtin"`
	Custom  string          `yaml:"custom"`
	Buffers []ScratchBuffer `yaml:"buffers"`
}

// ScratchBuffer is one buffer of a ScratchOverride.
type ScratchBuffer struct {
	Bytes            int64 `yaml:"bytes"`
	PerInputElement  int64 `yaml:"per_input_element"`
	Input            int   `yaml:"input"`
	PerOutputElement int64 `yaml:"per_output_element"`
	Output           int   `yaml:"output"`
}

// builtinName is how TFLite spells a builtin operator (BuiltinOperator in
// schema.fbs): upper-case letters, digits and underscores.
var builtinName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// WithScratch returns a copy of the library whose scratch rules for the
// overridden operators are the overrides' (a later entry for the same
// operator wins); its contracts are the library's. An entry names exactly
// one of builtin (not "CUSTOM") and custom, and no value is negative;
// otherwise it returns an error naming the entry.
func (l *Library) WithScratch(overrides []ScratchOverride) (*Library, error) {
	out := *l
	out.customScratch = maps.Clone(l.customScratch)
	out.builtinScratch = maps.Clone(l.builtinScratch)
	if out.customScratch == nil {
		out.customScratch = map[string]scratchRule{}
	}
	if out.builtinScratch == nil {
		out.builtinScratch = map[string]scratchRule{}
	}
	for i, o := range overrides {
		what := fmt.Sprintf("kernel_scratch entry %d", i+1)
		switch {
		case (o.Builtin == "") == (o.Custom == ""):
			return nil, fmt.Errorf("kernels: %s: give either builtin or custom", what)
		case o.Builtin != "" && (!builtinName.MatchString(o.Builtin) || o.Builtin == "CUSTOM"):
			return nil, fmt.Errorf("kernels: %s: builtin %q is not a builtin operator's name (such as CONV_2D)", what, o.Builtin)
		}
		for k, b := range o.Buffers {
			if b.Bytes < 0 || b.PerInputElement < 0 || b.PerOutputElement < 0 || b.Input < 0 || b.Output < 0 {
				return nil, fmt.Errorf("kernels: %s (%s%s): buffer %d: sizes and operand positions must not be negative",
					what, o.Builtin, o.Custom, k+1)
			}
		}
		rule := overrideRule(o.Buffers)
		if o.Custom != "" {
			out.customScratch[o.Custom] = rule
		} else {
			out.builtinScratch[o.Builtin] = rule
		}
	}
	return &out, nil
}

// maxOverrideBytes caps what an override asks for, so that a huge tensor
// times a factor cannot overflow; plan rejects so large a buffer anyway.
const maxOverrideBytes = math.MaxInt64 / 4

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

// addScaled returns n + k×elems, capped at maxOverrideBytes.
func addScaled(n, k, elems int64) int64 {
	if k == 0 || elems == 0 {
		return n
	}
	if elems > (maxOverrideBytes-n)/k {
		return maxOverrideBytes
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
