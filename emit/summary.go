package emit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// Summary renders a short human-readable table of the plan's arenas: each
// arena's size and, for scratch arenas, its lower bound and the step and
// tensors that set it.
func Summary(m *graph.Model, p *plan.Plan) []byte {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "  arena\tmemory\tbytes\tlower bound\tover bound\tbank capacity\n")
	for _, a := range p.Arenas {
		kind := a.Role.String()
		if a.Role == liveness.Constant {
			if a.Staged() {
				kind += " (staged from " + a.Source + ")"
			} else {
				kind += " (cold)"
			}
		}
		lb, over := "-", "-"
		if a.Role == liveness.Scratch {
			lb = fmt.Sprint(a.LowerBound)
			if a.LowerBound > 0 {
				over = Percent(a.Size, a.LowerBound)
			}
		}
		capacity := "unlimited"
		if a.Capacity > 0 {
			capacity = fmt.Sprint(a.Capacity)
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\t%s\t%s\n", kind, a.Memory, a.Size, lb, over, capacity)
	}
	w.Flush()
	for _, a := range p.Arenas {
		if a.Role != liveness.Scratch {
			continue
		}
		fmt.Fprintf(&buf, "  %s %s peaks at step %d with %d live tensor(s):", a.Role, a.Memory, a.PeakStep, len(a.Peak))
		for i, k := range a.Peak {
			if i == 6 {
				fmt.Fprintf(&buf, " …")
				break
			}
			al := p.Lookup(k)
			size := ""
			if al != nil {
				size = fmt.Sprintf("(%d B)", al.Size)
				if _, block := p.Block(k); block != al.Size {
					size = fmt.Sprintf("(%d B; its alias group %d B)", al.Size, block)
				}
			}
			switch {
			case al == nil:
				fmt.Fprintf(&buf, " %s", keyText(k))
			case al.Name != "":
				fmt.Fprintf(&buf, " %s %s %s", keyText(k), quoted(al.Name), size)
			default:
				fmt.Fprintf(&buf, " %s %s", keyText(k), size)
			}
		}
		buf.WriteByte('\n')
		if note := unproven(p, &a); note != "" {
			fmt.Fprintf(&buf, "  %s %s: %s\n", a.Role, a.Memory, note)
		}
		if saved := a.UnaliasedLowerBound - a.LowerBound; saved > 0 {
			views, inPlace, own, copies := countAliases(p)
			var parts []string
			if views > 0 || own+inPlace+copies == 0 {
				parts = append(parts, fmt.Sprintf("%d view(s) share their input's buffer", views))
			}
			if own > 0 {
				parts = append(parts, fmt.Sprintf("%d tensor(s) share bytes where the model's own offline plan puts them", own))
			}
			if inPlace > 0 {
				parts = append(parts, fmt.Sprintf("%d output(s) are written over a dying input (%s contracts)", inPlace, kernelsText(p)))
			}
			if copies > 0 {
				parts = append(parts, fmt.Sprintf("%d slice output(s) or concatenation input(s) lie over the bytes their kernel copies (exact-overlap copies, --exact-overlap)", copies))
			}
			how := strings.Join(parts, ", ")
			fmt.Fprintf(&buf, "  aliasing: %s; lower bound %d B without aliasing, %d B with (%d B saved)\n",
				how, a.UnaliasedLowerBound, a.LowerBound, saved)
		}
	}
	if text := ownPlanText(p); text != "" {
		fmt.Fprintf(&buf, "  %s\n", text)
	}
	fmt.Fprintf(&buf, "  schedule: %s\n", scheduleText(p.Schedule))
	if text := trafficText(p); text != "" {
		fmt.Fprintf(&buf, "  %s\n", text)
	}
	if p.Kernels == kernelsAny {
		fmt.Fprintf(&buf, "  kernels: %s: the plan holds for %s; --cpu, or --kernels, narrows it\n", kernelsText(p), anyBuilds(p.KernelsPath))
	}
	for i, sp := range p.Spills {
		if i == 8 {
			fmt.Fprintf(&buf, "  … and %d more spilled tensor(s) (see plan.json spills)\n", len(p.Spills)-i)
			break
		}
		fmt.Fprintf(&buf, "  spilled %s %s from %s to %s: %s\n", keyText(sp.Key), quoted(sp.Name), sp.From, sp.To, sp.Reason)
	}
	for _, u := range p.UnusedRules {
		fmt.Fprintf(&buf, "  warning: %s\n", escapeName(u.Describe(p.Rules)))
	}
	for _, pat := range p.UnusedExternal {
		fmt.Fprintf(&buf, "  warning: %s\n", escapeName(p.DescribeUnusedExternal(pat)))
	}
	for _, u := range p.UnusedOverrides {
		fmt.Fprintf(&buf, "  warning: %s (--strict makes this an error)\n", escapeName(u.Describe()))
	}
	for _, o := range p.UnknownScratch {
		fmt.Fprintf(&buf, "  warning: op %v %s may ask for kernel scratch its kernel library has no rule for; the plan leaves it out (--strict makes this an error)\n",
			o, escapeName(m.Subgraphs[o.Subgraph].Ops[o.Op].Name()))
	}
	count := map[plan.AllocKind]int{}
	size := map[plan.AllocKind]int64{}
	dynamic := 0
	for _, a := range p.Allocs {
		count[a.Kind]++
		size[a.Kind] += a.Size
		if a.Dynamic {
			dynamic++
		}
	}
	if n := count[plan.VariableAlloc]; n > 0 {
		fmt.Fprintf(&buf, "  %d resource variable(s), %d B, in the persistent arena\n", n, size[plan.VariableAlloc])
	}
	kernelScratchText(&buf, p)
	if dynamic > 0 {
		fmt.Fprintf(&buf, "  note: %d tensor(s) have a dynamic dimension (shape_signature -1); planned with their concrete shapes\n", dynamic)
	}
	reasons := map[string]int{}
	var order []string
	for _, sk := range p.Skipped {
		if reasons[sk.Reason] == 0 {
			order = append(order, sk.Reason)
		}
		reasons[sk.Reason]++
	}
	for _, r := range order {
		fmt.Fprintf(&buf, "  note: %d used tensor(s) take no bytes: %s\n", reasons[r], r)
	}
	return buf.Bytes()
}

// kernelScratchText writes, when kernels ask for scratch, how much and
// what it costs each scratch arena: its lower bound for tensors alone and
// with kernel scratch, and any bytes added to lie where TFLM places it.
func kernelScratchText(buf *bytes.Buffer, p *plan.Plan) {
	n, ops, bytes := p.KernelScratch()
	if n == 0 {
		return
	}
	source := ""
	if src := p.ScratchSource; src.Library != "" {
		source = " (" + src.Library
		if src.CPU != "" {
			source += " on " + src.CPU
		}
		source += ")"
	}
	fmt.Fprintf(buf, "  kernel scratch: %d buffer(s) for %d operator(s), %d B in all%s\n", n, ops, bytes, source)
	for _, a := range p.Arenas {
		if a.Role != liveness.Scratch || a.TensorLowerBound == a.LowerBound && a.TFLMGrowth == 0 {
			continue
		}
		fmt.Fprintf(buf, "  %s %s: lower bound %d B for tensors alone, %d B with kernel scratch (+%d B); arena %d B\n",
			a.Role, a.Memory, a.TensorLowerBound, a.LowerBound, a.LowerBound-a.TensorLowerBound, a.Size)
		if a.TFLMGrowth > 0 {
			fmt.Fprintf(buf, "  %s %s: %d B more than heliac's own placement needs, so that kernel scratch lies where TFLM's planner puts it (--emit-tflite)\n",
				a.Role, a.Memory, a.TFLMGrowth)
		}
	}
}

// keyText formats an allocation key as plan.Key does, with a resource
// variable's names escaped as every name is.
func keyText(k plan.Key) string {
	if k.Kind != plan.VariableAlloc {
		return k.String()
	}
	if k.Variable.Container != "" {
		return fmt.Sprintf("variable %s in container %s", quoted(k.Variable.SharedName), quoted(k.Variable.Container))
	}
	return "variable " + quoted(k.Variable.SharedName)
}

// countAliases counts the tensors that share their group root's bytes:
// views, outputs written in place, tensors kept where the model's own
// offline plan puts them, and tensors that rely on an exact-overlap copy.
func countAliases(p *plan.Plan) (views, inPlace, own, copies int) {
	for _, a := range p.Allocs {
		switch {
		case a.InPlace != nil:
			inPlace++
		case a.OwnPlan != nil && a.AliasOf != nil:
			own++
		case a.Copy != nil:
			copies++
		case a.AliasOf != nil:
			views++
		}
	}
	return views, inPlace, own, copies
}

// ownPlanText says how many tensors keep the model's own relative offsets
// and for which operators (liveness.OwnPlan), or "" when none do.
func ownPlanText(p *plan.Plan) string {
	tensors, ops := 0, 0
	seen := map[graph.OpRef]bool{}
	var names []string
	for _, a := range p.Allocs {
		o := a.OwnPlan
		if o == nil {
			continue
		}
		tensors++
		if !seen[o.Op] {
			seen[o.Op] = true
			ops += o.Ops
			if !slices.Contains(names, o.Operator) {
				names = append(names, o.Operator)
			}
		}
	}
	if tensors == 0 {
		return ""
	}
	text := fmt.Sprintf("kept %d tensor(s) at the model's own relative offsets (its %s) for %d %s operator(s): "+
		"the kernel addresses them relative to the operator's scratch tensor", tensors, graph.OfflinePlanName, ops,
		escapeName(strings.Join(names, ", ")))
	if p.Schedule.Ordering.Strategy == liveness.OrderModel {
		text += "; the operators run in the model's order, which that plan was made for"
	}
	return text
}

// unproven says why the default planner did not prove a scratch arena's
// size optimal, or "" when it did (or another planner, which does not
// try, placed it).
func unproven(p *plan.Plan, a *plan.Arena) string {
	switch {
	case a.Optimal || p.Planner != plan.PlannerBest:
		return ""
	case a.TimedOut > 0:
		return fmt.Sprintf("bound not proven: search stopped after %v, with the best placement found by then (raise --time-limit to search longer)", a.TimedOut)
	}
	return "bound not proven: too many buffers for the exact search, placed by heuristics"
}

// scheduleText says how a schedule's order was chosen and how far it
// departs from the model's.
func scheduleText(sc liveness.Schedule) string {
	o := sc.Ordering
	text := o.Strategy + " order"
	switch o.Strategy {
	case liveness.OrderModel:
		return text + " (operators run as the model lists them)"
	case liveness.OrderMemory:
		switch {
		case o.Proven:
			text += ", proven optimal"
		case o.TimedOut:
			text += ", not proven optimal (the search stopped on its wall-clock safety net, as on a loaded machine: another run may choose another order)"
		default:
			text += ", not proven optimal (the search stopped on its budget)"
		}
	}
	moved, total := sc.Moved(), 0
	for _, ops := range sc.Order {
		total += len(ops)
	}
	if moved == 0 {
		return text + "; the model's own order"
	}
	return fmt.Sprintf("%s; %d of %d operator(s) run at another place than the model lists them", text, moved, total)
}

// Patches is what --patches auto chose for a model (driver.Patches), what
// it cost and what it saved, as the summary shows it.
type Patches struct {
	// Regions are the regions run stripe by stripe (the rewritten
	// model's Stripes); empty when no rewrite lowered the arena under
	// the cap.
	Regions []graph.StripeRegion
	// ExtraOps is how many more operators the rewritten model has.
	ExtraOps int
	// ExtraMACs are the stripes' multiply-accumulates on top of the
	// original model's ModelMACs.
	ExtraMACs, ModelMACs int64
	// Cap is the cap on ExtraMACs, a fraction of ModelMACs.
	Cap float64
	// HeadBefore and HeadAfter are heliac's scratch arena (TFLM's head
	// with --emit-tflite) for the model as given and the rewritten one.
	HeadBefore, HeadAfter int64
	// ArenaBefore and ArenaAfter are TFLM's whole tensor_arena (head and
	// TFLM's persistent tail, package tflmarena) with heliac's plan of the
	// model as given and of the rewritten one; 0 when not computed.
	ArenaBefore, ArenaAfter int64
	// Tried is how many rewrites the choice evaluated.
	Tried int
	// Reason says why the model is kept as given when the choice could
	// not judge a rewrite (TFLM's whole arena not sized); "" otherwise.
	Reason string
	// Fit says the model as given does not fit the platform and the
	// stripes were chosen to make it fit; "" otherwise.
	Fit string
}

// ExtraPercent is ExtraMACs as a percentage of ModelMACs.
func (p *Patches) ExtraPercent() float64 {
	if p.ModelMACs == 0 {
		return 0
	}
	return 100 * float64(p.ExtraMACs) / float64(p.ModelMACs)
}

// Text is the summary's line: the regions and their stripes, the extra
// operators and MACs, and the arenas before and after; or why there are
// none.
func (p *Patches) Text() string {
	if len(p.Regions) == 0 && p.Reason != "" {
		return "--patches auto: no stripes: " + p.Reason
	}
	if len(p.Regions) == 0 && p.Tried == 0 {
		return fmt.Sprintf("--patches auto: no stripes: no region of row-local operators holding the arena's peak fits %.3g%% extra MACs", 100*p.Cap)
	}
	if len(p.Regions) == 0 {
		return fmt.Sprintf("--patches auto: no stripes: none of %d rewrite(s) tried lowers the arena within %.3g%% extra MACs", p.Tried, 100*p.Cap)
	}
	var b strings.Builder
	if p.Fit != "" {
		fmt.Fprintf(&b, "--patches auto: %s\n  ", p.Fit)
	}
	fmt.Fprintf(&b, "--patches auto: %d region(s) run stripe by stripe:", len(p.Regions))
	for i, r := range p.Regions {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %d:%d -> %d:%d (%d operator(s)) in %d stripes of rows", r.Subgraph, r.Input, r.Subgraph, r.Output, len(r.Ops), r.K())
		for _, rows := range r.Rows {
			fmt.Fprintf(&b, " [%d,%d)", rows[0], rows[1])
		}
		if r.Cached() {
			b.WriteString(", halo rows cached")
		}
	}
	b.WriteString("\n  ")
	b.WriteString(p.ArenaText())
	return b.String()
}

// ArenaText is what the stripes chosen cost and save, TFLM's whole
// tensor_arena first (what a rewrite is judged on), then heliac's arena
// (TFLM's head), then the extra operators and MACs.
func (p *Patches) ArenaText() string {
	var b strings.Builder
	if p.ArenaBefore > 0 {
		fmt.Fprintf(&b, "TFLM's whole tensor_arena %d -> %d B (%s), ", p.ArenaBefore, p.ArenaAfter, Percent(p.ArenaAfter, p.ArenaBefore))
	}
	fmt.Fprintf(&b, "heliac's arena (TFLM's head) %d -> %d B (%s); stripes cost %+d operator(s) and %+d MACs (%+.2f%% of %d, cap %.3g%%)",
		p.HeadBefore, p.HeadAfter, Percent(p.HeadAfter, p.HeadBefore), p.ExtraOps, p.ExtraMACs, p.ExtraPercent(), p.ModelMACs, 100*p.Cap)
	return b.String()
}

// trafficText says what each bank moves per inference (plan.BankTraffic:
// an estimate, see package traffic), and the staging copy made once: "traffic
// per inference (read/written, an estimate): DTCM 453/33 B, FLASH 420/0
// B; staging once: 432 B MRAM -> DTCM".
func trafficText(p *plan.Plan) string {
	var per, staged, from []string
	for _, b := range p.BankTraffic() {
		if b.PerInference.Total() > 0 {
			per = append(per, fmt.Sprintf("%s %d/%d B", b.Bank, b.PerInference.Read, b.PerInference.Written))
		}
		if b.Staging.Written > 0 {
			staged = append(staged, fmt.Sprintf("%d B into %s", b.Staging.Written, b.Bank))
		}
		if b.Staging.Read > 0 {
			from = append(from, b.Bank)
		}
	}
	if len(per) == 0 {
		return ""
	}
	text := "traffic per inference (read/written, an estimate): " + strings.Join(per, ", ")
	if len(staged) > 0 {
		text += "; staging once: " + strings.Join(staged, ", ") + " from " + strings.Join(from, ", ")
	}
	return text
}
