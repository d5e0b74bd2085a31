package driver

import (
	"context"
	"slices"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflmarena"
)

// TFLM compares a plan with what TensorFlow Lite Micro's own planner
// needs for the same model: the head of TFLM's arena, where its
// GreedyMemoryPlanner puts the tensors and the kernels' scratch (TFLM's
// persistent tail comes on top of both). It is computed where TFLM's one
// arena can be compared with the plan's: a plan with at most one scratch
// arena, of at most TFLMLimit allocations. It costs one more liveness
// analysis and greedy placement of the model (plan.PlannerTFLM).
type TFLM struct {
	// OwnHead is TFLM's head when TFLM plans the model itself: its
	// greedy planner, the operators in the model's order, every operand
	// of an operator live while it runs, no view sharing its input's
	// bytes, and the kernels' scratch of Config.Kernels on Config.Target;
	// tensors that the model's own offline plan (OfflineMemoryAllocation,
	// as Vela writes) places kept at its offsets, as TFLM keeps them.
	OwnHead int64
	// Head is the plan's: its scratch arena, which is TFLM's head when
	// TFLM runs the plan (--emit-tflite).
	Head int64
	// Kept says whose placement the plan is: KeptHeliac, or, where
	// heliac's own needed more than TFLM's, KeptTFLM or KeptModel.
	Kept string
	// Discarded is the head heliac's own placement needed, when it was
	// not kept.
	Discarded int64
	// DiscardedBytes is TFLM's whole tensor_arena (TFLMArenas.Emitted)
	// with heliac's own placement, when that placement was not kept
	// because the model emitted with it needed a larger tensor_arena than
	// the original under TFLM's own planner, though its head was smaller
	// (see Output.TFLMArena); 0 when the head decided.
	DiscardedBytes int64
	// Members compares, for a plan made for a set of kernel libraries
	// (kernels.Any), each library's head: TFLM's own with that library's
	// scratch, and TFLM's when it runs the plan and places that library's
	// scratch itself (plan.Plan.TFLMHead). OwnHead is then the largest
	// member's own head and Head the plan's arena, which holds every
	// member's scratch. Nil for one library.
	Members []TFLMMember
}

// TFLMMember is one kernel library's heads (TFLM.Members).
type TFLMMember struct {
	Kernels string // kernels.Library.String: "cmsis-nn (mve)"
	OwnHead int64
	Head    int64
}

// What TFLM.Kept says.
const (
	// KeptHeliac: heliac's own plan, no larger than TFLM's.
	KeptHeliac = "heliac"
	// KeptTFLM: TFLM's own placement (plan.PlannerTFLM, the model's
	// order, TFLM's lifetimes), which needed less than heliac's: a
	// smaller head, or with --emit-tflite a tensor_arena no larger than
	// the original's where heliac's emitted model needed a larger one.
	KeptTFLM = "tflm"
	// KeptModel: the model's own offline plan, TFLM placing what it
	// leaves out, which needed less than heliac's.
	KeptModel = "model"
)

// Saving is how many bytes the plan's head saves over TFLM's own:
// OwnHead - Head (negative if the plan needs more).
func (t *TFLM) Saving() int64 { return t.OwnHead - t.Head }

// tflmConfig is cfg as TFLM plans a model itself: the model's order,
// no view and no output sharing an input's bytes, TFLM's greedy planner,
// the kernels' scratch as cfg asks, and the model's own offline offsets
// kept where it carries them.
func tflmConfig(m *graph.Model, cfg Config) Config {
	t := cfg
	t.Schedule = ScheduleModel
	t.Liveness = liveness.Options{NoAlias: true}
	t.Plan.Planner = plan.PlannerTFLM
	t.Plan.ScratchAfterTensors, t.Plan.ScratchBetweenTensors = false, false
	t.Plan.Offline = nil
	if offs := liveness.OwnOffsets(m); offs != nil {
		t.Plan.Offline = map[graph.TensorRef]int64{}
		base := 0
		for si, sg := range m.Subgraphs {
			for ti := range sg.Tensors {
				if off := offs[base+ti]; off >= 0 {
					t.Plan.Offline[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: graph.TensorID(ti)}] = off
				}
			}
			base += len(sg.Tensors)
		}
	}
	return t
}

// scratchArenas returns p's scratch arenas.
func scratchArenas(p *plan.Plan) []*plan.Arena {
	var out []*plan.Arena
	for i := range p.Arenas {
		if p.Arenas[i].Role == liveness.Scratch {
			out = append(out, &p.Arenas[i])
		}
	}
	return out
}

// head returns the size of a plan's one scratch arena (0 without one), and
// false when it has several.
func head(p *plan.Plan) (int64, bool) {
	switch a := scratchArenas(p); len(a) {
	case 0:
		return 0, true
	case 1:
		return a[0].Size, true
	}
	return 0, false
}

// TFLMLimit is the most scratch allocations a plan may hold for Compile
// to compare it with TFLM's (Output.TFLM): TFLM's greedy planner, which
// the comparison runs (dsa.Greedy), takes time quadratic in them, and on
// a model at heliac's limits (32,765 tensors) it would double the
// compile. Every corpus model holds fewer than a thousand.
const TFLMLimit = 4096

// againstTFLM plans the model as TFLM's own planner does and records the
// comparison (s.tflm). Where heliac's plan needs more than TFLM's and
// heliac chose the placement (the default planner, its own order), it
// keeps TFLM's instead: one plan like any other, emitted and verified as
// heliac's would be. Where heliac's is kept and chosen by heliac, TFLM's
// stays in s.theirs for finish, which keeps it when the emitted model's
// whole TFLM arena is larger than the original's (keepTFLMArena). Where TFLM's plan cannot be made (a platform whose
// bank cannot hold it, an offline plan off the arena's alignment) or
// heliac's plan has several scratch arenas or more than TFLMLimit scratch
// allocations, s.tflm stays nil.
func (s *planned) againstTFLM(ctx context.Context) {
	mine, ok := head(s.p)
	if !ok {
		return
	}
	n := 0
	for _, a := range s.p.Allocs {
		if a.Class == liveness.Scratch {
			n++
		}
	}
	if n > TFLMLimit {
		return
	}
	t, err := planLoaded(ctx, s.m, tflmConfig(s.m, s.cfg))
	if err != nil {
		return
	}
	theirs, ok := head(t.p)
	if !ok {
		return
	}
	own := theirs
	if a := scratchArenas(t.p); len(a) == 1 {
		// TFLM's own placement; the bytes added so that kernel scratch
		// lies where TFLM puts it around offline offsets are not TFLM's.
		own -= a[0].TFLMGrowth
	}
	cmp := &TFLM{OwnHead: own, Head: mine, Kept: KeptHeliac}
	planner := s.cfg.Plan.Planner
	chosen := (planner == "" || planner == plan.PlannerBest) && s.cfg.Liveness.Order == nil
	if members := s.cfg.Kernels.Members(); len(members) > 1 {
		owns, ownPlans, ok := s.ownHeads(ctx, members)
		if !ok {
			return
		}
		if cmp.Members, ok = memberHeads(s.m, s.p, s.cfg.Target, members, owns); !ok {
			return
		}
		cmp.OwnHead = slices.Max(owns)
		if chosen && worseThanOwn(cmp.Members) {
			// Tensors placed above room only another member's scratch
			// needs stay there under this one: place the tensors first
			// and the scratch around them, and failing that keep TFLM's
			// placement (with room for every member's scratch).
			for _, between := range []bool{false, true} {
				acfg := s.cfg
				acfg.Plan.ScratchAfterTensors, acfg.Plan.ScratchBetweenTensors = true, between
				if a, err := planLoaded(ctx, s.m, acfg); err == nil {
					if ah, ok := head(a.p); ok {
						if am, ok := memberHeads(s.m, a.p, s.cfg.Target, members, owns); ok && !worseThanOwn(am) {
							s.lt, s.p, s.ord = a.lt, a.p, a.ord
							cmp.Head, cmp.Members, mine = ah, am, ah
							break
						}
					}
				}
			}
		}
		if chosen && worseThanOwn(cmp.Members) {
			// TFLM's own placement: with room for every member's
			// scratch, or, with its tensors where TFLM puts them for one
			// member, room for the others' around them.
			for _, c := range append([]*planned{t}, ownPlans...) {
				if c != t {
					if m, ok := memberHeads(s.m, c.p, s.cfg.Target, members, owns); !ok || worseThanOwn(m) {
						continue
					}
					if c = s.pinned(ctx, c.p); c == nil {
						continue
					}
				}
				if tm, ok := memberHeads(s.m, c.p, s.cfg.Target, members, owns); ok && !worseThanOwn(tm) {
					h, _ := head(c.p)
					cmp.Kept, cmp.Head, cmp.Discarded, cmp.Members = KeptTFLM, h, mine, tm
					s.lt, s.p, s.ord = c.lt, c.p, nil
					s.tflm = cmp
					return
				}
			}
		}
		if theirs < mine && chosen && !worseThanOwn(cmp.Members) {
			// TFLM's smaller placement only where it is no worse for
			// any member either.
			tm, ok := memberHeads(s.m, t.p, s.cfg.Target, members, owns)
			if !ok || worseThanOwn(tm) {
				s.tflm = cmp
				return
			}
			cmp.Members = tm
		}
	}
	if theirs < mine && chosen {
		cmp.Kept, cmp.Head, cmp.Discarded = KeptTFLM, theirs, mine
		if len(t.cfg.Plan.Offline) > 0 {
			cmp.Kept = KeptModel
		}
		s.lt, s.p, s.ord = t.lt, t.p, nil
	} else if chosen {
		s.theirs = t
	}
	s.tflm = cmp
}

// memberTarget is target on member's code path.
func memberTarget(target kernels.Target, member *kernels.Library) kernels.Target {
	if target == (kernels.Target{}) {
		target = kernels.CortexM
	}
	if isa, ok := member.Path(); ok {
		target.ISA = isa
	}
	return target
}

// ownHeads returns, for each member library, TFLM's own head on the model
// with that library's scratch (as TFLM.OwnHead for one library) and TFLM's
// placement; false when one cannot be computed.
func (s *planned) ownHeads(ctx context.Context, members []*kernels.Library) ([]int64, []*planned, bool) {
	var out []int64
	var plans []*planned
	for _, mem := range members {
		cfg := s.cfg
		cfg.Kernels, cfg.Target = mem, memberTarget(s.cfg.Target, mem)
		cfg.Plan.KernelScratch = nil
		t, err := planLoaded(ctx, s.m, tflmConfig(s.m, cfg))
		if err != nil {
			return nil, nil, false
		}
		own, ok := head(t.p)
		if !ok {
			return nil, nil, false
		}
		if a := scratchArenas(t.p); len(a) == 1 {
			own -= a[0].TFLMGrowth
		}
		out = append(out, own)
		plans = append(plans, t)
	}
	return out, plans, true
}

// pinned plans the model as TFLM would with its scratch tensors pinned
// where p puts them and s's kernels' scratch placed around them, or nil
// when it cannot (the model's own offline plan, several arenas).
func (s *planned) pinned(ctx context.Context, p *plan.Plan) *planned {
	if liveness.HasOwnPlan(s.m) {
		return nil
	}
	cfg := tflmConfig(s.m, s.cfg)
	cfg.Plan.Offline = map[graph.TensorRef]int64{}
	for _, a := range p.Allocs {
		if a.Kind == plan.TensorAlloc && a.Class == liveness.Scratch && a.AliasOf == nil {
			cfg.Plan.Offline[a.Ref] = a.Offset
		}
	}
	t, err := planLoaded(ctx, s.m, cfg)
	if err != nil {
		return nil
	}
	return t
}

// memberHeads compares, for each member library, TFLM's own head on m
// (owns) with TFLM's head running p and placing that library's scratch
// (TFLM.Members); false when a head cannot be computed.
func memberHeads(m *graph.Model, p *plan.Plan, target kernels.Target, members []*kernels.Library, owns []int64) ([]TFLMMember, bool) {
	var out []TFLMMember
	for i, mem := range members {
		reqs, _ := scratchRequests(m, mem, memberTarget(target, mem))
		h, ok := p.TFLMHead(reqs)
		if !ok {
			return nil, false
		}
		out = append(out, TFLMMember{Kernels: mem.String(), OwnHead: owns[i], Head: h})
	}
	return out, true
}

// worseThanOwn reports whether some member's head running the plan is
// larger than TFLM's own.
func worseThanOwn(ms []TFLMMember) bool {
	for _, m := range ms {
		if m.Head > m.OwnHead {
			return true
		}
	}
	return false
}

// keepTFLMArena keeps TFLM's own placement (s.theirs) instead of heliac's
// when the model heliac emits needs a larger tensor_arena than the
// original under TFLM's own planner (a.Emitted.Bytes > a.Original.Bytes)
// and the model emitted with TFLM's placement needs less than heliac's.
// Heliac's head is no larger there, but TFLM's persistent tail can be:
// TFLM allocates each operator's builtin parameters and kernel data in
// the order the model lists the operators, each aligned, so the schedule
// heliac writes the operators in changes the alignment padding between
// them (esphome-mww/vad_v2 on host64: +16 B). A model of a set of
// several (CompileSet), whose scratch is already shared, keeps its plan.
// It returns the emitted model and arenas to use; when it switched, s.p
// and s.tflm describe TFLM's placement. The plan's other outputs are not
// made yet.
func (s *planned) keepTFLMArena(tfl *TFLiteOutput, a *TFLMArenas, t tflmarena.Target, k tflmarena.Kernels) (*TFLiteOutput, *TFLMArenas) {
	theirs := s.theirs
	if theirs == nil || s.tflm == nil || s.tflm.Kept != KeptHeliac || a.Emitted.Bytes <= a.Original.Bytes {
		return tfl, a
	}
	h, ok := head(theirs.p)
	if !ok {
		return tfl, a
	}
	ttfl, err := withOfflinePlan(s.data, s.m, theirs.p, s.planInfo())
	if err != nil {
		return tfl, a
	}
	orig, _ := s.given()
	ta, err := tflmArenas(context.Background(), orig, s.m, theirs.p, ttfl, t, k)
	if err != nil || ta.Emitted.Bytes >= a.Emitted.Bytes {
		return tfl, a
	}
	cmp := *s.tflm
	cmp.Kept, cmp.Head, cmp.Discarded, cmp.DiscardedBytes = KeptTFLM, h, s.tflm.Head, a.Emitted.Bytes
	if len(theirs.cfg.Plan.Offline) > 0 {
		cmp.Kept = KeptModel
	}
	s.tflm, s.lt, s.p, s.ord = &cmp, theirs.lt, theirs.p, nil
	return ttfl, ta
}

// TFLMHeads is o.TFLM as the summary and the report show it, or nil.
func (o *Output) TFLMHeads() *emit.TFLMHeads {
	t := o.TFLM
	if t == nil {
		return nil
	}
	h := &emit.TFLMHeads{OwnHead: t.OwnHead, Head: t.Head, Kept: t.Kept, Discarded: t.Discarded, DiscardedBytes: t.DiscardedBytes, Patches: o.Patches}
	for _, m := range t.Members {
		h.Members = append(h.Members, emit.TFLMMemberHeads{Kernels: m.Kernels, OwnHead: m.OwnHead, Head: m.Head})
	}
	if a := o.TFLMArena; a != nil {
		h.Target, h.Bytes, h.OwnBytes = a.Target, a.Emitted.Bytes, a.Original.Bytes
	}
	return h
}
