package plan

import (
	"errors"
	"fmt"
	"path"
)

// UnusedRule is a tensor or name rule that selects no allocation of the
// model: a tensor that does not exist or takes no bytes, a glob that
// matches no tensor that does. Such a rule is almost always a mistake (a
// stale index, a typo in a name), so Build reports it, and with
// Options.Strict refuses it. Class rules state a policy for whatever the
// model has of a class and are never reported.
type UnusedRule struct {
	Rule   int    // index into Plan.Rules
	Reason string // why it selects nothing: "subgraph 0 has 40 tensors"
}

// Describe spells the entry out for rules, the plan's:
// `rule 2 (name "big*") selects nothing: no tensor's name matches`.
func (u UnusedRule) Describe(rules []Rule) string {
	sel := ""
	if u.Rule >= 0 && u.Rule < len(rules) {
		r := rules[u.Rule]
		if r.Tensor != "" {
			sel = fmt.Sprintf(" (tensor %q)", r.Tensor)
		} else {
			sel = fmt.Sprintf(" (name %q)", r.Name)
		}
	}
	return fmt.Sprintf("rule %d%s selects nothing: %s", u.Rule, sel, u.Reason)
}

// UnusedOverride is an entry of the config's kernel_scratch that applies
// to no operator of the model: no operator has its name, or a later entry
// for the same operator replaces it (kernels.Library.CheckOverrides). Like
// an unused rule, Build reports it, and with Options.Strict refuses it.
type UnusedOverride struct {
	Entry    int    // index into the config's kernel_scratch
	Operator string // the operator it names: "CONV_2D", "CUSTOM:MyOp"
	Line     int    // its line in the config file; 0 when unknown
	Reason   string // "no operator of the model is CONV_2D"
}

// Describe spells the entry out for messages:
// `kernel_scratch entry 2 (CONV_2D, line 7) applies to no operator: no
// operator of the model is CONV_2D`.
func (u UnusedOverride) Describe() string {
	where := ""
	if u.Line > 0 {
		where = fmt.Sprintf(", line %d", u.Line)
	}
	return fmt.Sprintf("kernel_scratch entry %d (%s%s) applies to no operator: %s", u.Entry+1, u.Operator, where, u.Reason)
}

// unusedRules returns the tensor and name rules that matched no
// allocation (matched[i] is false) and why; with Options.Strict, an error
// naming each of them, one a line.
func (pl *placer) unusedRules(matched []bool) ([]UnusedRule, error) {
	var out []UnusedRule
	for i, r := range pl.opts.Rules {
		if matched[i] || r.Class != "" {
			continue
		}
		out = append(out, UnusedRule{Rule: i, Reason: pl.whyUnused(r)})
	}
	if !pl.opts.Strict || len(out) == 0 {
		return out, nil
	}
	errs := make([]error, len(out))
	for i, u := range out {
		errs[i] = fmt.Errorf("plan: %s (rules are strict)", u.Describe(pl.opts.Rules))
	}
	return nil, errors.Join(errs...)
}

// whyUnused says why a tensor or name rule selects no allocation.
func (pl *placer) whyUnused(r Rule) string {
	if r.Name != "" {
		for si := range pl.m.Subgraphs {
			for _, t := range pl.m.Subgraphs[si].Tensors {
				if ok, _ := path.Match(r.Name, t.Name); ok {
					return "the tensors whose names match take no bytes"
				}
			}
		}
		return "no tensor's name matches"
	}
	ref, err := ParseTensorRef(r.Tensor)
	switch {
	case err != nil:
		return err.Error()
	case int(ref.Subgraph) >= len(pl.m.Subgraphs):
		return fmt.Sprintf("the model has %d subgraph(s)", len(pl.m.Subgraphs))
	case int(ref.Tensor) >= len(pl.m.Subgraphs[ref.Subgraph].Tensors):
		return fmt.Sprintf("subgraph %d has %d tensor(s)", ref.Subgraph, len(pl.m.Subgraphs[ref.Subgraph].Tensors))
	}
	why := "it takes no bytes"
	if lt := pl.lt.Lookup(ref); lt != nil && lt.Note != "" {
		why += " (" + lt.Note + ")"
	}
	return fmt.Sprintf("tensor %v %q: %s", ref, pl.m.Tensor(ref.Subgraph, ref.Tensor).Name, why)
}
