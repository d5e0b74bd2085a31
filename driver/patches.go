package driver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// lowers heliac's arena (TFLM's head) without enlarging TFLM's whole
	// arena (docs/stripes.md), under Config.PatchMACs.
	PatchesAuto = "auto"
)

// DefaultPatchMACs is the cap on the stripes' extra multiply-accumulates,
// a fraction of the whole model's, when Config.PatchMACs is 0.
const DefaultPatchMACs = 0.10

// maxStripes is the most stripes a region gets: TFLM's CONCATENATION
// takes at most kMaxInputNum = 10 inputs (concatenation.cc @90b983c).
const maxStripes = stripe.MaxStripes

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

// quickTimeLimit is the placement search's time limit in quickScore.
// Most cheap plans prove their placement in milliseconds; one that
// cannot (style_transfer striped 10 times: 3591792 B against a bound of
// 3591168) would search to the limit, and a choice evaluates dozens.
const quickTimeLimit = 300 * time.Millisecond

// patchWork is the order search's work budget when a candidate rewrite is
// evaluated: enough to find the stripes' own order, far below the final
// compile's.
const patchWork = 400

// confirmed is how many of the last choices (the last round's and the
// uneven rows') are compared at the end, also with exact-overlap copies.
const confirmed = 2

// smallestArena returns the candidate of cs with the smallest whole
// arena, then the smallest head; nil when cs is empty.
func smallestArena(cs []*candidate) *candidate {
	var small *candidate
	for _, c := range cs {
		if small == nil || c.score < small.score || c.score == small.score && c.head < small.head {
			small = c
		}
	}
	return small
}

// candidate is one rewrite evaluated.
type candidate struct {
	regions []graph.StripeRegion // as Apply filled them
	m       *graph.Model
	s       *planned // the cheap plan quickScore made
	extra   int64
	head    int64 // the cheap evaluation: the plan's scratch arena (TFLM's head)
	score   int64 // TFLM's whole arena with that head
	fits    bool  // score is within the limit: no more than without stripes
}

// better says whether a is a better rewrite than b: a smaller cost, or
// the same cost and a smaller head. Whether each fits the whole arena's
// limit is the caller's.
func better(a, b *candidate) bool {
	return lessCost(a.head, a.score, b.head, b.score)
}

// cost is what the choice minimises: heliac's arena (the head) plus
// TFLM's whole arena with it (head and persistent tail). Both users count:
// one who runs heliac's plan, whose arena is the head, and one who gives
// TFLM its tensor_arena. A byte saved in the head counts twice, a byte
// of TFLM's tail once, so a stripe is worth it when it saves in the head
// at least half what its operators add to TFLM's tail
// (mobilenet_v2_quantized: 28 stripes have a head 57952 B smaller than 14,
// but a whole arena 100208 B larger; 14 are chosen).
func cost(head, score int64) int64 { return head + score }

// lessCost orders rewrites by cost, then by head.
func lessCost(ha, sa, hb, sb int64) bool {
	ca, cb := cost(ha, sa), cost(hb, sb)
	return ca < cb || ca == cb && ha < hb
}

// arenaOf is TFLM's whole arena for m with a head of head bytes on the
// config's TFLM target, or head alone (and false) when tflmarena cannot
// size it.
func arenaOf(m *graph.Model, head int64, cfg Config) (int64, bool) {
	a, err := arenaOn(m, head, cfg, primaryTFLMTarget(cfg))
	if err != nil {
		return head, false
	}
	return a, true
}

// arenaOn is TFLM's whole arena for m with a head of head bytes on target
// t, with the config's kernels (the largest over a set's members).
func arenaOn(m *graph.Model, head int64, cfg Config, t tflmarena.Target) (int64, error) {
	a, err := computeEach(m, head, t, tflmarena.Kernels{Library: cfg.Kernels, CPU: cfg.Target})
	return a.Bytes, err
}

// primaryTFLMTarget is the target the choice scores TFLM's whole arena
// on: --tflm-target's, or cortex-m.
func primaryTFLMTarget(cfg Config) tflmarena.Target {
	if t, ok := tflmarena.TargetNamed(cfg.TFLMTarget); ok {
		return t
	}
	return tflmarena.CortexM
}

// judgedTargets are the targets on which a rewrite must not enlarge TFLM's
// whole arena: --tflm-target's, or, when it names none, every target
// heliac sizes (a firmware may build the model for either; TFLM's tail
// differs between them).
func judgedTargets(cfg Config) []tflmarena.Target {
	if t, ok := tflmarena.TargetNamed(cfg.TFLMTarget); ok {
		return []tflmarena.Target{t}
	}
	return []tflmarena.Target{tflmarena.CortexM, tflmarena.Host64}
}

// wholeArenas is TFLM's whole arena for m with a head of head bytes on
// each of targets, in order, or an error naming what cannot be sized.
func wholeArenas(m *graph.Model, head int64, cfg Config, targets []tflmarena.Target) ([]int64, error) {
	out := make([]int64, len(targets))
	for i, t := range targets {
		a, err := arenaOn(m, head, cfg, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out[i] = a
	}
	return out, nil
}

// quickScore is the cheap evaluation of a model: its plan with the
// operators in each of the schedules given (ScheduleModel, or
// ScheduleMemory with a short search, patchWork; only the config's when
// it fixes the order), whichever has the smaller scratch arena (head),
// then the smaller whole TFLM arena with that head (score). It returns
// both and that plan, one as good as any. The model's order runs a rewrite's
// stripes one after the other, as the rewrite lists them; the order
// search, which counts exact in-place writes only, may start every
// stripe's padded rows early, where liveness's windowed in-place writes
// make them large. The placement counts, not the plan's lower bound,
// which on striped models can lie far below what it reaches.
func quickScore(ctx context.Context, m *graph.Model, cfg Config, schedules ...string) (hd, score int64, _ *planned, _ error) {
	var best *planned
	if cfg.Liveness.Order != nil || cfg.Schedule == ScheduleModel {
		schedules = []string{cfg.Schedule}
	}
	var firstErr error
	for _, sched := range schedules {
		q := cfg
		q.ScheduleWork, q.Schedule = patchWork, sched
		// The order search ends on its work budget, not the clock; the
		// placement search on quickTimeLimit, which only a plan that
		// cannot prove its bound reaches (then the choice may depend on
		// the machine's load, as any plan that hits its time limit).
		q.Plan.TimeLimit = quickTimeLimit
		start := time.Now()
		s, err := planLoaded(ctx, m, q)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		size, lb := s.p.ScratchTotals()
		sc, _ := arenaOf(m, size, cfg)
		if tracePatches != nil {
			tracePatches("  quick %s: size %d, lower bound %d, arena %d, %v", sched, size, lb, sc, time.Since(start))
		}
		if best == nil || size < hd || size == hd && sc < score {
			best, hd, score = s, size, sc
		}
	}
	if best == nil {
		return 0, 0, nil, firstErr
	}
	best.cfg = cfg
	return hd, score, best, nil
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

// tracePatches, when set (by tests), is told each rewrite evaluated.
var tracePatches func(format string, args ...any)

// maxTried is how many candidate regions, those holding the most bytes at
// the peak, each round of the choice tries with every stripe count.
const maxTried = 3

// maxRegions is the most regions the choice combines.
const maxRegions = 4

// maxEvals is the most rewrites the choice evaluates, and evalWork the
// most operators its cheap plans may hold in all (each rewrite is
// planned once or twice; a plan's cost grows with the operators, about
// 100 ms for MobileNetV2's 190 when striped): small models try many
// rewrites, MobileNetV2 about 18 (CPU 4.3 s with h/placement's second
// plan of each striped model).
const (
	maxEvals = 80
	evalWork = 3000
)

// coarseK are the stripe counts a region's peak is estimated with when
// the candidate regions are ranked (estimatePeak).
var coarseK = []int{2, 4, 7, 10}

// halos are the halo kinds the choice tries: cached first (no MACs
// computed twice), then recomputed (fewer operators for TFLM's tail).
var halos = []graph.Halo{graph.HaloCache, graph.HaloRecompute}

// climbSteps is how far bestStripes moves from its first stripe count to
// better neighbours.
const climbSteps = 3

// memoryOrderOps is the most operators a rewrite may have for every
// evaluation of it to plan the memory order too.
const memoryOrderOps = 200

// stripeCounts are the stripe counts bestStripes estimates: every one up
// to 10, sparser above.
var stripeCounts = []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 100}

// bestStripes returns the best of the rewrites that add region r, with
// even rows, to the regions chosen so far. For each halo, every stripe
// count of stripeCounts (up to maxStripes and r's output height) is
// estimated (estimate: the head; TFLM's tail sized at the fewest and most
// stripes and interpolated; recomputed halos only within the extra MACs
// budget); of those whose estimated whole arena may fit the limit, the one
// of the lowest estimated cost is planned, and where it does not fit,
// the largest stripe count below it that fits is searched for by
// bisection (more stripes: a lower head, a larger tail); then it moves
// to a better neighbour while there is one (climbSteps). eval returns nil for a rewrite it cannot evaluate and a
// candidate without a model for one over the MAC cap.
func bestStripes(m *graph.Model, chosen []graph.StripeRegion, r graph.StripeRegion, budget, limit int64,
	tail func([]graph.StripeRegion, int64) (int64, bool), eval func([]graph.StripeRegion) *candidate) *candidate {
	h := outputHeight(m, r)
	type trial struct {
		r          graph.StripeRegion
		head, tail int64 // estimated; tail 0 when unknown
	}
	var byHalo [][]trial
	for _, halo := range halos {
		var mine []trial
		for _, k := range stripeCounts {
			if k > maxStripes || int32(k) > h {
				break
			}
			t := r
			t.Rows, t.Halo = stripe.EvenRows(h, k), halo
			if e, _, ok := estimate(m, t, budget); ok {
				mine = append(mine, trial{r: t, head: e})
			}
		}
		// TFLM's tail grows about linearly with the stripes (each copies
		// the region's operators): sized at the fewest and the most
		// stripes, it is interpolated between.
		if n := len(mine); n > 1 {
			k0, k1 := mine[0].r.K(), mine[n-1].r.K()
			t0, ok0 := tail(withRegion(chosen, mine[0].r), mine[0].head)
			t1, ok1 := tail(withRegion(chosen, mine[n-1].r), mine[n-1].head)
			for i := range mine {
				if ok0 && ok1 {
					mine[i].tail = t0 + (t1-t0)*int64(mine[i].r.K()-k0)/int64(k1-k0)
				}
			}
		}
		// More stripes for no lower estimated head only add to TFLM's
		// tail (with even rows the largest stripe, which the estimate
		// follows, shrinks in steps): the fewest of each head are kept.
		front := mine[:0]
		for _, t := range mine {
			if len(front) == 0 || t.head < front[len(front)-1].head {
				front = append(front, t)
			}
		}
		byHalo = append(byHalo, front)
	}
	// A rewrite whose estimated head, less a quarter, and estimated tail
	// are over the limit is not planned: the estimate runs up to a third
	// over the plan (person_detect, 5 stripes: 31104 B estimated, 24784
	// planned).
	const margin = 0.75
	var best *candidate
	evaluated := map[int]*candidate{} // by key
	key := func(r graph.StripeRegion) int { return len(halos)*r.K() + slices.Index(halos, r.Halo) }
	try := func(t trial) *candidate {
		if c, ok := evaluated[key(t.r)]; ok {
			return c
		}
		if tracePatches != nil {
			tracePatches("  try k %d %s: estimated head %d, tail %d, limit %d", t.r.K(), t.r.Halo, t.head, t.tail, limit)
		}
		c := eval(withRegion(chosen, t.r))
		if c != nil && c.m == nil {
			c = nil
		}
		evaluated[key(t.r)] = c
		if c != nil && c.fits && (best == nil || better(c, best)) {
			best = c
		}
		return c
	}
	fits := func(c *candidate) bool { return c != nil && c.fits }
	for _, mine := range byHalo {
		var l []trial // ascending stripe counts, estimated within the limit
		for _, t := range mine {
			if t.tail == 0 || int64(margin*float64(t.head))+t.tail <= limit {
				l = append(l, t)
			}
		}
		if len(l) == 0 {
			continue
		}
		// The lowest estimated cost (cost); more stripes lower the head
		// and add to TFLM's tail, so where that one is over the limit the
		// largest stripe count below it within the limit is searched for
		// by bisection.
		low := 0
		if tracePatches != nil {
			for _, t := range l {
				tracePatches("  estimate k %d %s: head %d tail %d cost %d", t.r.K(), t.r.Halo, t.head, t.tail, cost(t.head, t.head+t.tail))
			}
		}
		for i, t := range l {
			if cost(t.head, t.head+t.tail) < cost(l[low].head, l[low].head+l[low].tail) {
				low = i
			}
		}
		at := low
		if !fits(try(l[low])) {
			lo, hi := -1, low
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if fits(try(l[mid])) {
					lo = mid
				} else {
					hi = mid
				}
			}
			if lo < 0 {
				continue
			}
			at = lo
		}
		// Then to a better neighbour while there is one: the estimates
		// are coarse.
		for range climbSteps {
			next := at
			for _, i := range []int{at - 1, at + 1} {
				if i < 0 || i >= len(l) {
					continue
				}
				if c := try(l[i]); fits(c) && better(c, evaluated[key(l[next].r)]) {
					next = i
				}
			}
			if next == at {
				break
			}
			at = next
		}
	}
	return best
}

// choosePatches returns the rewrite of s's model that --patches auto
// picks: the regions, stripe counts and rows whose rewritten model heliac
// plans into the smallest scratch arena (TFLM's head; ties: the smaller
// whole TFLM arena), under the cap on extra MACs and such that TFLM's
// whole arena (head and persistent tail: each operator copy adds its
// kernel data there) is no larger than without stripes: the stripes pay
// for themselves in the whole arena. It returns nil when no rewrite
// within both has a smaller head than the model as given (s, planned as
// usual).
//
// It adds regions greedily: each round takes the candidates
// (stripe.Candidates of the model as given) whose intermediate tensors
// are live at the current plan's peak, tries the maxTried of the lowest
// estimated peak (estimatePeak: stripe.Measure's rows, both halos, within
// the cap) with the stripe counts and halos bestStripes picks, even rows,
// together with the regions already chosen, and keeps the best if it lowers the cheap
// evaluation (quickScore); at most maxEvals rewrites are evaluated. Then
// unevenRows moves a row at the end stripes, of the last choice and of
// the rewrite of the smallest whole arena seen. These are compared, the
// last choices also with exact-overlap copies. Every step is counted, not
// timed: the choice is deterministic as long as no plan hits its time
// limit.
func (s *planned) choosePatches(ctx context.Context) (*planned, *Patches, error) {
	m, cfg := s.m, s.cfg
	capFrac := cfg.PatchMACs
	if capFrac == 0 {
		capFrac = DefaultPatchMACs
	}
	total := stripe.ModelMACs(m)
	info := &Patches{ModelMACs: total, Cap: capFrac}
	info.HeadBefore, _ = head(s.p)
	if len(m.Subgraphs) == 0 || total == 0 || liveness.HasOwnPlan(m) {
		return nil, info, nil
	}
	budget := int64(capFrac * float64(total))
	all := stripe.Candidates(m)
	if len(all) == 0 {
		return nil, info, nil
	}
	// Stripes add operators, and each adds its kernel's data to TFLM's
	// persistent tail: a rewrite is judged on TFLM's whole arena, on
	// every target the firmware may build for, so a model whose whole
	// arena cannot be sized is kept as given.
	targets := judgedTargets(cfg)
	before, err := wholeArenas(m, info.HeadBefore, cfg, targets)
	if err != nil {
		info.Reason = fmt.Sprintf("TFLM's whole arena cannot be sized (%v), and stripes add operators to TFLM's persistent tail: the model is kept as given", err)
		return nil, info, nil
	}
	info.ArenaBefore = before[0]
	// noLarger says a rewrite leaves TFLM's whole arena no larger than
	// before on every target.
	noLarger := func(rm *graph.Model, hd int64) bool {
		after, err := wholeArenas(rm, hd, cfg, targets)
		if err != nil {
			return false
		}
		for i := range after {
			if after[i] > before[i] {
				return false
			}
		}
		return true
	}
	// Halo rows cached first: no MACs computed twice, so deep regions
	// and many stripes stay within the cap; recomputed where a region
	// cannot cache (and for the finalists, whose fewer operators may
	// cost TFLM's tail less).
	for i := range all {
		all[i].Halo = graph.HaloCache
	}
	// The search plans without exact-overlap copies (always safe): the
	// stripes' outputs then get bytes of their own and the
	// concatenation copies them, which on MobileNetV2 packs smaller than
	// the stripes written into their slots (481344 B against 683664 for
	// the best rewrite found either way). The finalists try them too.
	scfg := cfg
	scfg.Liveness.ExactOverlap = false
	baseHead, base, bs, err := quickScore(ctx, m, scfg, ScheduleModel, ScheduleMemory)
	if err != nil {
		return nil, info, nil
	}
	// The stripes must pay for themselves in TFLM's whole arena: each
	// operator copy adds its kernel data to TFLM's persistent tail.
	limit := info.ArenaBefore
	cur := &candidate{m: m, s: bs, head: baseHead, score: base, fits: true}
	seen := baseHead // the smallest head seen
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
	// tail is what TFLM's whole arena for a rewrite adds to a head of
	// head bytes (its persistent tail, and the temporaries beyond the
	// head), without planning it.
	tail := func(regions []graph.StripeRegion, head int64) (int64, bool) {
		rm, err := stripe.Apply(m, regions)
		if err != nil {
			return 0, false
		}
		a, ok := arenaOf(rm, head, cfg)
		return a - head, ok
	}
	var pool []*candidate // every rewrite evaluated within the limit
	work := 0             // the operators planned so far (evalWork)
	eval := func(regions []graph.StripeRegion) *candidate {
		rm, extra, over := apply(regions)
		switch {
		case rm == nil:
			return nil
		case over:
			return &candidate{extra: extra}
		case info.Tried == maxEvals || work >= evalWork:
			return nil
		}
		info.Tried++
		work += opCount(rm)
		// The model's order, and the memory order too for a rewrite of
		// at most memoryOrderOps operators within a quarter of the best
		// seen, which it may beat (pretrainedResnet, 2 stripes: 146880 B
		// in the model's order, 124608 in the memory order); larger ones
		// only as finalists (below): each costs as much as the first.
		hd, sc, ps, err := quickScore(ctx, rm, scfg, ScheduleModel)
		if err != nil {
			return nil
		}
		if n := opCount(rm); n <= memoryOrderOps && hd <= seen+seen/4 && cfg.Liveness.Order == nil && cfg.Schedule != ScheduleModel {
			work += n
			if hd2, sc2, ps2, err := quickScore(ctx, rm, scfg, ScheduleMemory); err == nil && (hd2 < hd || hd2 == hd && sc2 < sc) {
				hd, sc, ps = hd2, sc2, ps2
			}
		}
		seen = min(seen, hd)
		ps.original = m
		if tracePatches != nil {
			for _, r := range rm.Stripes {
				tracePatches("  region %d -> %d ops %v k %d extra %d", r.Input, r.Output, r.Ops, r.K(), r.ExtraMACs)
			}
			tracePatches("  head %d arena %d (current %d, %d; limit %d)", hd, sc, cur.head, cur.score, limit)
		}
		c := &candidate{regions: rm.Stripes, m: rm, s: ps, extra: extra, head: hd, score: sc, fits: sc <= limit}
		if c.fits {
			pool = append(pool, c)
		}
		return c
	}
	var rounds []*candidate // the best of each round that lowered the head
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
		// The lowest estimated peak first (estimatePeak, over the stripe
		// counts and halos within the cap); of those, the region of fewer
		// operators, whose stripes cost TFLM's tail less.
		var used int64 // the extra MACs of the regions chosen so far
		for _, r := range cur.regions {
			used += r.ExtraMACs
		}
		est := map[int]int64{}
		var within []graph.StripeRegion
		for _, r := range try {
			if outputHeight(m, r) < 2 {
				continue
			}
			if e, ok := estimatePeak(m, r, budget-used); ok {
				est[len(within)] = e
				within = append(within, r)
			}
		}
		order := make([]int, len(within))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if est[a] != est[b] {
				return cmpInt(est[a], est[b])
			}
			return len(within[a].Ops) - len(within[b].Ops)
		})
		try = nil
		for _, i := range order {
			if tracePatches != nil {
				r := within[i]
				tracePatches("candidate %d -> %d ops %v: estimated peak %d", r.Input, r.Output, r.Ops, est[i])
			}
			if len(try) < maxTried {
				try = append(try, within[i])
			}
		}
		var best *candidate
		for _, t := range try {
			if c := bestStripes(m, cur.regions, t, budget-used, limit, tail, eval); c != nil && (best == nil || better(c, best)) {
				best = c
			}
		}
		if best == nil || !better(best, cur) {
			break
		}
		cur = best
		rounds = append(rounds, best)
	}
	if len(rounds) == 0 {
		return nil, info, nil
	}
	// The rewrite of the smallest whole arena first: the budget may end
	// in the uneven rows of the last choice.
	small := smallestArena(pool)
	var smallUneven *candidate
	if small != nil && small != cur {
		smallUneven = unevenRows(small, eval)
	}
	if c := unevenRows(cur, eval); c != nil {
		rounds = append(rounds, c)
	}
	// The last choices, and the rewrite of the smallest whole arena with
	// its best uneven rows: the cheap plans of striped models miss their
	// lower bound by up to a quarter, so the ranking by head is coarse, and
	// fewer stripes often place better (MobileNetV2: k 8 ranks first at
	// 535920 B; k 7, the smallest whole arena, places to 481344 B with
	// uneven rows).
	var final []*candidate
	for i := len(rounds) - 1; i >= 0 && i >= len(rounds)-confirmed; i-- {
		final = append(final, rounds[i])
	}
	if small != nil && !slices.Contains(final, small) {
		final = append(final, small)
	}
	if smallUneven != nil {
		final = append(final, smallUneven)
	}
	// Each with the other halo: recomputed halos add fewer operators to
	// TFLM's tail, cached ones fewer MACs and rows.
	for _, c := range slices.Clone(final) {
		other := graph.HaloRecompute
		if !slices.ContainsFunc(c.regions, func(r graph.StripeRegion) bool { return r.Cached() }) {
			other = graph.HaloCache
		}
		if o := eval(withHalo(c.regions, other)); o != nil && o.m != nil && o.fits {
			final = append(final, o)
		}
	}
	// The best of these, as the cheap evaluation planned them: a full
	// order search (DefaultWork) plans MobileNetV2's stripes no smaller,
	// and costs as much as ten cheap plans.
	var (
		bestS               *planned
		bestHead, bestArena int64
		bestC               *candidate
	)
	keep := func(c *candidate, ps *planned, hd, sc int64) {
		if sc <= limit && (bestS == nil || lessCost(hd, sc, bestHead, bestArena)) && noLarger(c.m, hd) {
			bestS, bestHead, bestArena, bestC = ps, hd, sc, c
		}
	}
	for i, c := range final {
		keep(c, c.s, c.head, c.score)
		last := i < min(len(rounds), confirmed)
		if last && cfg.Liveness.Order == nil && cfg.Schedule != ScheduleModel {
			if hd, sc, ps, err := quickScore(ctx, c.m, scfg, ScheduleMemory); err == nil {
				ps.original = m
				keep(c, ps, hd, sc)
			}
		}
		// The last choices with exact-overlap copies too, when the config
		// allows them (pretrainedResnet: 124608 B without, 111696 with);
		// not with cached halos, whose caches in their concatenations'
		// slots keep more bytes reserved (MobileNetV2, 28 stripes:
		// 345648 B without, 402112 with).
		cached := slices.ContainsFunc(c.regions, func(r graph.StripeRegion) bool { return r.Cached() })
		if cfg.Liveness.ExactOverlap && !cached && last {
			if hd, sc, ps, err := quickScore(ctx, c.m, cfg, ScheduleModel, ScheduleMemory); err == nil {
				ps.original = m
				if tracePatches != nil {
					tracePatches("  confirm: head %d arena %d; with exact-overlap copies %d %d", c.head, c.score, hd, sc)
				}
				keep(c, ps, hd, sc)
			}
		}
	}
	if bestS == nil || bestHead >= info.HeadBefore {
		return nil, info, nil
	}
	info.Regions = bestC.m.Stripes
	info.ExtraMACs = bestC.extra
	info.ExtraOps = opCount(bestC.m) - opCount(m)
	info.HeadAfter, _ = head(bestS.p)
	info.ArenaAfter = bestArena
	return bestS, info, nil
}

// unevenMoves are how many rows unevenRows moves across a boundary.
var unevenMoves = []int32{1, 2, 3}

// unevenPasses is how often unevenRows starts again from its best.
const unevenPasses = 3

// unevenRows tries c's regions with uneven stripes: one to three rows
// moved from an end stripe to its neighbour or back (the stripes at the
// image's borders read padding, not halo rows, so they may take more
// rows for the same peak), and again from the best found, up to
// unevenPasses times. It returns the best rewrite that lowers c's head
// (then whole arena) within the limit, or nil.
func unevenRows(c *candidate, eval func([]graph.StripeRegion) *candidate) *candidate {
	var best *candidate
	for range unevenPasses {
		from := c
		if best != nil {
			from = best
		}
		n := unevenPass(from, eval)
		if n == nil {
			break
		}
		best = n
	}
	return best
}

// unevenPass is one pass of unevenRows from c.
func unevenPass(c *candidate, eval func([]graph.StripeRegion) *candidate) *candidate {
	var best *candidate
	base := originalRegions(c.regions)
	for i := range base {
		k := len(base[i].Rows)
		moves := [][2]int{{0, 1}, {1, 0}, {k - 1, k - 2}, {k - 2, k - 1}}
		if k == 2 { // both ends share one boundary
			moves = moves[:2]
		}
		for _, d := range unevenMoves {
			for _, mv := range moves {
				from, to := mv[0], mv[1]
				regs := originalRegions(base)
				rows := regs[i].Rows
				if rows[from][1]-rows[from][0] <= d {
					continue
				}
				// Move d rows at the boundary between from and to.
				if from < to {
					rows[from][1] -= d
					rows[to][0] -= d
				} else {
					rows[from][0] += d
					rows[to][1] += d
				}
				n := eval(regs)
				if n == nil || n.m == nil || !n.fits || !better(n, c) {
					continue
				}
				if best == nil || better(n, best) {
					best = n
				}
			}
		}
	}
	return best
}

// originalRegions returns regions with only what Apply reads: the
// region and its rows.
func originalRegions(rs []graph.StripeRegion) []graph.StripeRegion {
	out := make([]graph.StripeRegion, len(rs))
	for i, r := range rs {
		out[i] = graph.StripeRegion{Subgraph: r.Subgraph, Input: r.Input, Output: r.Output, Ops: slices.Clone(r.Ops), Rows: slices.Clone(r.Rows), Halo: r.Halo}
	}
	return out
}

// withRegion returns the regions chosen and r, in model order.
func withRegion(chosen []graph.StripeRegion, r graph.StripeRegion) []graph.StripeRegion {
	regs := append(originalRegions(chosen), originalRegions([]graph.StripeRegion{r})...)
	slices.SortStableFunc(regs, func(a, b graph.StripeRegion) int {
		if a.Subgraph != b.Subgraph {
			return int(a.Subgraph) - int(b.Subgraph)
		}
		return a.Ops[0] - b.Ops[0]
	})
	return regs
}

// withHalo returns regions with every region's halo h.
func withHalo(rs []graph.StripeRegion, h graph.Halo) []graph.StripeRegion {
	out := originalRegions(rs)
	for i := range out {
		out[i].Halo = h
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

// estimatePeak is the lowest estimate (estimate) of a rewrite of region
// r over the stripe counts coarseK and maxStripes and both halos
// (recomputed only within extra MACs budget); false when none is a valid
// region.
func estimatePeak(m *graph.Model, r graph.StripeRegion, budget int64) (int64, bool) {
	h := outputHeight(m, r)
	best, ok := int64(0), false
	for _, k := range append(slices.Clone(coarseK), maxStripes) {
		if k > maxStripes || int32(k) > h {
			continue
		}
		for _, halo := range halos {
			t := r
			t.Rows, t.Halo = stripe.EvenRows(h, k), halo
			if e, _, valid := estimate(m, t, budget); valid && (!ok || e < best) {
				best, ok = e, true
			}
		}
	}
	return best, ok
}

// estimate is a cheap estimate of the peak of the rewrite of region r
// (with its rows and halo): what stays whole (input and output), plus
// the largest working set of one operator of one stripe (the rows its
// operands and output hold, stripe.Measure), plus, with cached halos, the
// caches alive from the stripe before. It returns the region as Measure
// fills it, and false when r is not a valid region or, with recomputed
// halos, its extra MACs exceed budget.
func estimate(m *graph.Model, r graph.StripeRegion, budget int64) (int64, graph.StripeRegion, bool) {
	sg := &m.Subgraphs[r.Subgraph]
	rowBytes := func(t graph.TensorID) int64 {
		ts := &sg.Tensors[t]
		if len(ts.Shape) != 4 || ts.Shape[1] == 0 {
			return 0
		}
		return ts.Size / int64(ts.Shape[1])
	}
	got, needs, err := stripe.Measure(m, r)
	if err != nil || !r.Cached() && got.ExtraMACs > budget {
		return 0, got, false
	}
	var work int64
	for j, need := range needs {
		var caches int64
		if r.Cached() && j > 0 {
			for id, rows := range need {
				if id == r.Input || id == r.Output {
					continue
				}
				if prev, ok := needs[j-1][id]; ok && prev[1] > rows[0] {
					caches += int64(prev[1]-rows[0]) * rowBytes(id)
				}
			}
		}
		for _, i := range r.Ops {
			op := &sg.Ops[i]
			var held int64
			for _, id := range append(slices.Clone(op.Inputs), op.Outputs...) {
				if rows, ok := need[id]; ok && id >= 0 {
					held += int64(rows[1]-rows[0]) * rowBytes(id)
				}
			}
			work = max(work, caches+held)
		}
	}
	return wholeBytes(m, r) + work, got, true
}
