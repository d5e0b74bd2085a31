package driver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
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
const confirmed = 3

// candidate is one rewrite evaluated.
type candidate struct {
	regions []graph.StripeRegion
	m       *graph.Model
	extra   int64
	score   int64 // the cheap evaluation: TFLM's whole arena with the plan's bound as head
}

// arenaOf is TFLM's whole arena for m with a head of head bytes on the
// config's TFLM target, or head alone when tflmarena cannot size it.
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
// search), then TFLM's whole arena with that head.
func quickScore(ctx context.Context, m *graph.Model, cfg Config) (int64, error) {
	q := cfg
	q.ScheduleWork = patchWork
	q.Plan.Planner = plan.PlannerTFLM
	q.Plan.TimeLimit = 0
	s, err := planLoaded(ctx, m, q)
	if err != nil {
		return 0, err
	}
	_, lb := s.p.ScratchTotals()
	score, _ := arenaOf(m, lb, cfg)
	return score, nil
}

// choosePatches returns the rewrite of s's model that --patches auto
// picks: the regions, stripe counts and rows whose rewritten model heliac
// plans into the smallest whole TFLM arena, under the cap on extra MACs;
// nil when none is smaller than the model as given (s, planned as usual).
// The candidates are ranked by quickScore, the best few planned in full.
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
	if len(m.Subgraphs) == 0 || total == 0 {
		return nil, info, nil
	}
	budget := int64(capFrac * float64(total))
	base, err := quickScore(ctx, m, cfg)
	if err != nil {
		return nil, info, nil
	}
	eval := func(regions []graph.StripeRegion) *candidate {
		info.Tried++
		rm, err := stripe.Apply(m, regions)
		if err != nil {
			return nil
		}
		var extra int64
		for _, r := range rm.Stripes {
			extra += r.ExtraMACs
		}
		if extra > budget {
			return &candidate{extra: extra}
		}
		sc, err := quickScore(ctx, rm, cfg)
		if err != nil {
			return nil
		}
		return &candidate{regions: rm.Stripes, m: rm, extra: extra, score: sc}
	}
	// Each region alone, every stripe count the cap allows.
	cands := stripe.Candidates(m)
	var singles []*candidate
	for _, r := range cands {
		if len(r.Ops) < 2 {
			// One operator run in stripes keeps its input and output
			// whole: nothing to save, k more operators' tail to pay.
			continue
		}
		h := outputHeight(m, r)
		var best *candidate
		for k := 2; k <= maxStripes && int32(k) <= h; k++ {
			r.Rows = stripe.EvenRows(h, k)
			c := eval([]graph.StripeRegion{r})
			if c == nil {
				continue
			}
			if c.m == nil { // over the cap; more stripes only add MACs
				break
			}
			if best == nil || c.score < best.score {
				best = c
			}
		}
		if best != nil && best.score < base {
			singles = append(singles, best)
		}
	}
	if len(singles) == 0 {
		return nil, info, nil
	}
	slices.SortStableFunc(singles, func(a, b *candidate) int { return cmpInt(a.score, b.score) })
	// More regions, greedily, while one more lowers the score.
	chosen := singles[0]
	for {
		var next *candidate
		for _, c := range singles[1:] {
			if overlaps(chosen.regions, c.regions[0]) {
				continue
			}
			regs := append(slices.Clone(originalRegions(chosen.regions)), originalRegions(c.regions)...)
			slices.SortStableFunc(regs, func(a, b graph.StripeRegion) int { return a.Ops[0] - b.Ops[0] })
			n := eval(regs)
			if n == nil || n.m == nil || n.score >= chosen.score {
				continue
			}
			if next == nil || n.score < next.score {
				next = n
			}
		}
		if next == nil {
			break
		}
		chosen = next
	}
	// Confirm the best few with a full plan.
	finalists := []*candidate{chosen}
	for _, c := range singles {
		if len(finalists) == confirmed {
			break
		}
		if c != chosen {
			finalists = append(finalists, c)
		}
	}
	var (
		bestS     *planned
		bestArena int64
		bestC     *candidate
	)
	for _, c := range finalists {
		ps, err := planLoaded(ctx, c.m, cfg)
		if err != nil {
			continue
		}
		h, ok := head(ps.p)
		if !ok {
			continue
		}
		a, ok := arenaOf(c.m, h, cfg)
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
	data, err := tflite.Encode(r.m, tflite.EncodeOptions{})
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
