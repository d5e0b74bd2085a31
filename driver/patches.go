package driver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// What Config.Patches accepts.
const (
	// PatchesOff (or "") compiles the model as given.
	PatchesOff = "off"
	// PatchesAuto runs regions of the model stripe by stripe where that
	// lowers TFLM's whole arena (docs/stripes.md), under Config.PatchMACs.
	PatchesAuto = "auto"
)

// DefaultPatchMACs is the cap on the stripes' extra multiply-accumulates,
// a fraction of the whole model's, when Config.PatchMACs is 0.
const DefaultPatchMACs = 0.10

// maxStripes is the most stripes a region gets: TFLM's CONCATENATION
// takes at most kMaxInputNum = 10 inputs (concatenation.cc @90b983c).
const maxStripes = 10

// ParsePatchMACs reads a --patch-macs value: a percentage ("10%",
// "2.5%") or a plain fraction ("0.1"), of the whole model's
// multiply-accumulates, from 0 to 100 %.
func ParsePatchMACs(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v != v {
		return 0, fmt.Errorf("--patch-macs: %q is not a percentage (10%%) or a fraction (0.1)", s)
	}
	v /= scale
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("--patch-macs: %q is outside 0..100%%", s)
	}
	return v, nil
}

// Patches is what Config.Patches auto chose, cost and saved.
type Patches = emit.Patches

// checkPatches checks cfg's Patches and PatchMACs.
func checkPatches(cfg Config) error {
	switch cfg.Patches {
	case "", PatchesOff, PatchesAuto:
	default:
		return fmt.Errorf("unknown --patches %q (known: %s, %s)", cfg.Patches, PatchesAuto, PatchesOff)
	}
	if cfg.PatchMACs < 0 || cfg.PatchMACs > 1 || cfg.PatchMACs != cfg.PatchMACs {
		return fmt.Errorf("--patch-macs %g is outside 0..1 (0..100%%)", cfg.PatchMACs)
	}
	return nil
}

// patchWork is the order search's work budget when a candidate rewrite is
// evaluated: enough to find the stripes' own order, far below the final
// compile's.
const patchWork = 400

// confirmed is how many of the best candidates are planned in full.
const confirmed = 2

// candidate is one rewrite evaluated.
type candidate struct {
	regions []graph.StripeRegion // as Apply filled them
	m       *graph.Model
	s       *planned // the cheap plan quickScore made
	extra   int64
	score   int64 // the cheap evaluation: TFLM's whole arena with the plan's bound as head
}

// arenaOf is TFLM's whole arena for m with a head of head bytes on the
// config's TFLM target, or head alone (and false) when tflmarena cannot
// size it.
func arenaOf(m *graph.Model, head int64, cfg Config) (int64, bool) {
	t := tflmarena.CortexM
	if cfg.TFLMTarget != "" {
		if tt, ok := tflmarena.TargetNamed(cfg.TFLMTarget); ok {
			t = tt
		}
	}
	a, err := tflmarena.Compute(m, head, t, tflmarena.Kernels{Library: cfg.Kernels, CPU: cfg.Target})
	if err != nil {
		return head, false
	}
	return a.Bytes, true
}

// quickScore is the cheap evaluation of a model: a short order search,
// lifetimes, and the plan's lower bound under TFLM's greedy placement (no
// search), then TFLM's whole arena with that head. It returns the plan
// too.
func quickScore(ctx context.Context, m *graph.Model, cfg Config) (int64, *planned, error) {
	q := cfg
	q.ScheduleWork = patchWork
	q.Plan.Planner = quickPlanner
	s, err := planLoaded(ctx, m, q)
	if err != nil {
		return 0, nil, err
	}
	size, lb := s.p.ScratchTotals()
	if tracePatches != nil {
		tracePatches("  quick: greedy %d, lower bound %d", size, lb)
	}
	score, _ := arenaOf(m, size, cfg)
	return score, s, nil
}

// atPeak says whether one of r's intermediate tensors (the outputs of
// its operators but Output, which stripes keep whole) is live at s's
// scratch arena's peak: only then can striping r lower it. Tensor ids
// are the same in a model and its rewrites.
func atPeak(s *planned, r graph.StripeRegion) bool {
	arenas := scratchArenas(s.p)
	if len(arenas) != 1 {
		return false
	}
	step := arenas[0].PeakStep
	given, _ := s.given()
	sg := &given.Subgraphs[r.Subgraph]
	for _, i := range r.Ops {
		for _, t := range sg.Ops[i].Outputs {
			if t == r.Output || t < 0 {
				continue
			}
			a := s.p.Lookup(plan.Key{Kind: plan.TensorAlloc, Ref: graph.TensorRef{Subgraph: r.Subgraph, Tensor: t}})
			if a != nil && a.Live.First <= step && step <= a.Live.Last {
				return true
			}
		}
	}
	return false
}

// wholeBytes is what stays whole while r's stripes run: its input and
// its output. The smaller, the lower the peak a rewrite of r can reach.
func wholeBytes(m *graph.Model, r graph.StripeRegion) int64 {
	sg := &m.Subgraphs[r.Subgraph]
	return sg.Tensors[r.Input].Size + sg.Tensors[r.Output].Size
}

// quickPlanner is the planner of quickScore.
var quickPlanner = plan.PlannerBest

// tracePatches, when set (by tests), is told each rewrite evaluated.
var tracePatches func(format string, args ...any)

// maxTried is how many candidate regions, those holding the most bytes at
// the peak, each round of the choice tries with every stripe count.
const maxTried = 6

// maxRegions is the most regions the choice combines.
const maxRegions = 4

// maxEvals is the most rewrites the choice evaluates: each costs a cheap
// plan of the rewritten model (tens of milliseconds on MobileNetV2).
const maxEvals = 40

// coarseK are the stripe counts a region is first tried with; the
// neighbours of the best are tried next.
var coarseK = []int{2, 3, 4, 6, 8, 10}

// bestStripes returns the best of the rewrites that add region r, with
// even rows, to the regions chosen so far: r is tried with the stripe
// counts coarseK that the cap allows, then with the best one's
// neighbours. eval returns nil for a rewrite it cannot evaluate and a
// candidate without a model for one over the cap.
func bestStripes(m *graph.Model, chosen []graph.StripeRegion, r graph.StripeRegion, eval func([]graph.StripeRegion) *candidate) *candidate {
	h := outputHeight(m, r)
	tried := map[int]bool{}
	var best *candidate
	bestK, overK := 0, maxStripes+1
	try := func(k int) {
		if k < 2 || k > maxStripes || int32(k) > h || tried[k] || k >= overK {
			return
		}
		tried[k] = true
		r.Rows = stripe.EvenRows(h, k)
		regs := append(originalRegions(chosen), originalRegions([]graph.StripeRegion{r})...)
		slices.SortStableFunc(regs, func(a, b graph.StripeRegion) int {
			if a.Subgraph != b.Subgraph {
				return int(a.Subgraph) - int(b.Subgraph)
			}
			return a.Ops[0] - b.Ops[0]
		})
		c := eval(regs)
		switch {
		case c == nil:
		case c.m == nil: // over the cap; more stripes only add MACs
			overK = k
		case best == nil || c.score < best.score:
			best, bestK = c, k
		}
	}
	for _, k := range coarseK {
		try(k)
	}
	if best != nil {
		try(bestK - 1)
		try(bestK + 1)
	}
	return best
}

// choosePatches returns the rewrite of s's model that --patches auto
// picks: the regions, stripe counts and rows whose rewritten model heliac
// plans into the smallest whole TFLM arena, under the cap on extra MACs;
// nil when none is smaller than the model as given (s, planned as usual).
//
// It adds regions greedily: each round takes the candidates
// (stripe.Candidates of the model as given) whose intermediate tensors
// are live at the current plan's peak, tries each (the most bytes there
// first, at most maxTried) with every stripe count from 2 to 10 that the
// cap allows, even rows, together with the regions already chosen, and
// keeps the best if it lowers the cheap evaluation (quickScore). The best
// of the last rounds are then planned in full, and the smallest whole
// arena wins if it is smaller than the model's as given.
func (s *planned) choosePatches(ctx context.Context) (*planned, *Patches, error) {
	m, cfg := s.m, s.cfg
	capFrac := cfg.PatchMACs
	if capFrac == 0 {
		capFrac = DefaultPatchMACs
	}
	total := stripe.ModelMACs(m)
	info := &Patches{ModelMACs: total, Cap: capFrac}
	info.HeadBefore, _ = head(s.p)
	var sized bool
	info.ArenaBefore, sized = arenaOf(m, info.HeadBefore, cfg)
	if len(m.Subgraphs) == 0 || total == 0 || liveness.HasOwnPlan(m) {
		return nil, info, nil
	}
	budget := int64(capFrac * float64(total))
	all := stripe.Candidates(m)
	if len(all) == 0 {
		return nil, info, nil
	}
	base, bs, err := quickScore(ctx, m, cfg)
	if err != nil {
		return nil, info, nil
	}
	cur := &candidate{m: m, s: bs, score: base}
	// apply rewrites m with regions, or nil; over says it is over the cap.
	apply := func(regions []graph.StripeRegion) (rm *graph.Model, extra int64, over bool) {
		rm, err := stripe.Apply(m, regions)
		if err != nil {
			return nil, 0, false
		}
		for _, r := range rm.Stripes {
			extra += r.ExtraMACs
		}
		return rm, extra, extra > budget
	}
	eval := func(regions []graph.StripeRegion) *candidate {
		rm, extra, over := apply(regions)
		switch {
		case rm == nil:
			return nil
		case over:
			return &candidate{extra: extra}
		case info.Tried == maxEvals:
			return nil
		}
		info.Tried++
		sc, ps, err := quickScore(ctx, rm, cfg)
		if err != nil {
			return nil
		}
		ps.original = m
		if tracePatches != nil {
			for _, r := range rm.Stripes {
				tracePatches("  region %d -> %d ops %v k %d extra %d", r.Input, r.Output, r.Ops, r.K(), r.ExtraMACs)
			}
			tracePatches("  score %d (current %d)", sc, cur.score)
		}
		return &candidate{regions: rm.Stripes, m: rm, s: ps, extra: extra, score: sc}
	}
	var rounds []*candidate // the best of each round that lowered the score
	for len(cur.regions) < maxRegions {
		var try []graph.StripeRegion
		for _, r := range all {
			if len(r.Ops) < 2 || overlaps(cur.regions, r) || !atPeak(cur.s, r) {
				// One operator run in stripes keeps its input and output
				// whole: nothing to save, k more operators' tail to pay.
				continue
			}
			try = append(try, r)
		}
		// The least left whole first (input and output); of those, the
		// region of fewer operators, whose halos cost fewer MACs.
		slices.SortStableFunc(try, func(a, b graph.StripeRegion) int {
			if wa, wb := wholeBytes(m, a), wholeBytes(m, b); wa != wb {
				return cmpInt(wa, wb)
			}
			return len(a.Ops) - len(b.Ops)
		})
		if tracePatches != nil {
			for _, r := range try {
				tracePatches("candidate %d -> %d ops %v: %d bytes whole", r.Input, r.Output, r.Ops, wholeBytes(m, r))
			}
		}
		// The first maxTried that two stripes keep within the cap.
		var within []graph.StripeRegion
		for _, r := range try {
			if len(within) == maxTried {
				break
			}
			two := r
			two.Rows = stripe.EvenRows(outputHeight(m, r), 2)
			if outputHeight(m, r) < 2 {
				continue
			}
			if rm, _, over := apply(append(originalRegions(cur.regions), two)); rm != nil && !over {
				within = append(within, r)
			}
		}
		try = within
		var best *candidate
		for _, t := range try {
			if c := bestStripes(m, cur.regions, t, eval); c != nil && (best == nil || c.score < best.score) {
				best = c
			}
		}
		if best == nil || best.score >= cur.score {
			break
		}
		cur = best
		rounds = append(rounds, best)
	}
	if len(rounds) == 0 {
		return nil, info, nil
	}
	// Confirm the last rounds' choices with a full plan: the cheap
	// evaluation's bound is not always the placement's.
	var (
		bestS     *planned
		bestArena int64
		bestC     *candidate
	)
	for i := len(rounds) - 1; i >= 0 && i >= len(rounds)-confirmed; i-- {
		c := rounds[i]
		ps, err := planLoaded(ctx, c.m, cfg)
		if err != nil {
			continue
		}
		h, ok := head(ps.p)
		if !ok {
			continue
		}
		a, ok := arenaOf(c.m, h, cfg)
		if tracePatches != nil {
			size, lb := ps.p.ScratchTotals()
			tracePatches("finalist %v: head %d (size %d, lower bound %d), arena %d; quick score %d", c.regions[0].Ops, h, size, lb, a, c.score)
		}
		if ok != sized {
			continue
		}
		if bestS == nil || a < bestArena {
			bestS, bestArena, bestC = ps, a, c
		}
	}
	if bestS == nil || bestArena >= info.ArenaBefore {
		return nil, info, nil
	}
	info.Regions = bestC.m.Stripes
	info.ExtraMACs = bestC.extra
	info.ExtraOps = opCount(bestC.m) - opCount(m)
	info.HeadAfter, _ = head(bestS.p)
	info.ArenaAfter = bestArena
	if !sized {
		info.ArenaBefore, info.ArenaAfter = 0, 0
	}
	return bestS, info, nil
}

// originalRegions returns regions with only what Apply reads: the
// region and its rows.
func originalRegions(rs []graph.StripeRegion) []graph.StripeRegion {
	out := make([]graph.StripeRegion, len(rs))
	for i, r := range rs {
		out[i] = graph.StripeRegion{Subgraph: r.Subgraph, Input: r.Input, Output: r.Output, Ops: slices.Clone(r.Ops), Rows: slices.Clone(r.Rows)}
	}
	return out
}

// overlaps says whether r shares an operator with one of rs.
func overlaps(rs []graph.StripeRegion, r graph.StripeRegion) bool {
	for _, o := range rs {
		if o.Subgraph != r.Subgraph {
			continue
		}
		for _, i := range r.Ops {
			if slices.Contains(o.Ops, i) {
				return true
			}
		}
	}
	return false
}

// outputHeight is the height of r's output (NHWC).
func outputHeight(m *graph.Model, r graph.StripeRegion) int32 {
	t := &m.Subgraphs[r.Subgraph].Tensors[r.Output]
	if len(t.Shape) != 4 {
		return 0
	}
	return t.Shape[1]
}

func opCount(m *graph.Model) int {
	n := 0
	for _, sg := range m.Subgraphs {
		n += len(sg.Ops)
	}
	return n
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// withPatches is s (the model as given, planned) or, with Config.Patches
// auto, the rewritten model choosePatches picks, planned, ready for
// finish: its data the rewritten model encoded, the original kept for
// plan.json's sha256 and TFLM's comparison.
func (s *planned) withPatches(ctx context.Context) (*planned, *Patches, error) {
	if s.cfg.Patches != PatchesAuto {
		return s, nil, nil
	}
	r, info, err := s.choosePatches(ctx)
	if err != nil || r == nil {
		return s, info, err
	}
	data, err := tflite.Encode(forTFLM(s.m, r.m), tflite.EncodeOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("--patches auto: encode the rewritten model: %w", err)
	}
	r.data, r.original, r.originalData = data, s.m, s.data
	// TFLM's comparison stays with the model as given, what TFLM's own
	// planner does with it today.
	if s.tflm != nil {
		t := *s.tflm
		t.Head, t.Kept, t.Discarded, t.DiscardedBytes = info.HeadAfter, KeptHeliac, 0, 0
		r.tflm = &t
	}
	return r, info, nil
}

// forTFLM returns the rewritten model rm of m as the model file holds it:
// the regions' intermediate tensors of m, which the rewrite keeps at
// their ids though no operator reads or writes them any more, get a
// height of 0 (their shape stays in shape_signature). TFLM gives every
// non-constant tensor of non-zero size bytes in its head, even one no
// operator uses (micro_allocation_info.cc @90b983c: needs_allocating is
// bytes != 0, the lifetime kUninitializedLifetime; the greedy planner
// places it at 0), which would put a whole early activation back into
// TFLM's head; heliac's plan gives such tensors no bytes either way.
func forTFLM(m, rm *graph.Model) *graph.Model {
	used := map[graph.TensorRef]bool{}
	for si, sg := range rm.Subgraphs {
		mark := func(ts []graph.TensorID) {
			for _, t := range ts {
				used[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: t}] = true
			}
		}
		mark(sg.Inputs)
		mark(sg.Outputs)
		for _, op := range sg.Ops {
			mark(op.Inputs)
			mark(op.Outputs)
			mark(op.Intermediates)
		}
	}
	out := *rm
	out.Subgraphs = slices.Clone(rm.Subgraphs)
	cloned := map[graph.SubgraphIndex]bool{}
	for _, r := range rm.Stripes {
		for _, i := range r.Ops {
			for _, t := range m.Subgraphs[r.Subgraph].Ops[i].Outputs {
				ref := graph.TensorRef{Subgraph: r.Subgraph, Tensor: t}
				if t < 0 || t == r.Output || used[ref] {
					continue
				}
				sg := &out.Subgraphs[r.Subgraph]
				if !cloned[r.Subgraph] {
					sg.Tensors, cloned[r.Subgraph] = slices.Clone(sg.Tensors), true
				}
				tt := &sg.Tensors[t]
				if len(tt.Shape) != 4 || tt.IsVariable || rm.HasData(tt) {
					continue
				}
				if tt.ShapeSignature == nil {
					tt.ShapeSignature = slices.Clone(tt.Shape)
				}
				tt.Shape = slices.Clone(tt.Shape)
				tt.Shape[1], tt.Size = 0, 0
			}
		}
	}
	return &out
}
