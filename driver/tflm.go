package driver

import (
	"context"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
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
	if theirs < mine && (planner == "" || planner == plan.PlannerBest) && s.cfg.Liveness.Order == nil {
		cmp.Kept, cmp.Head, cmp.Discarded = KeptTFLM, theirs, mine
		if len(t.cfg.Plan.Offline) > 0 {
			cmp.Kept = KeptModel
		}
		s.lt, s.p, s.ord = t.lt, t.p, nil
	} else if (planner == "" || planner == plan.PlannerBest) && s.cfg.Liveness.Order == nil {
		s.theirs = t
	}
	s.tflm = cmp
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
	ttfl, err := withOfflinePlan(s.data, s.m, theirs.p)
	if err != nil {
		return tfl, a
	}
	em, err := tflmEmitted(ttfl, t, k)
	if err != nil || em.Bytes >= a.Emitted.Bytes {
		return tfl, a
	}
	cmp := *s.tflm
	cmp.Kept, cmp.Head, cmp.Discarded, cmp.DiscardedBytes = KeptTFLM, h, s.tflm.Head, a.Emitted.Bytes
	if len(theirs.cfg.Plan.Offline) > 0 {
		cmp.Kept = KeptModel
	}
	s.tflm, s.lt, s.p, s.ord = &cmp, theirs.lt, theirs.p, nil
	na := *a
	na.Emitted = em
	return ttfl, &na
}

// TFLMHeads is o.TFLM as the summary and the report show it, or nil.
func (o *Output) TFLMHeads() *emit.TFLMHeads {
	t := o.TFLM
	if t == nil {
		return nil
	}
	h := &emit.TFLMHeads{OwnHead: t.OwnHead, Head: t.Head, Kept: t.Kept, Discarded: t.Discarded, DiscardedBytes: t.DiscardedBytes}
	if a := o.TFLMArena; a != nil {
		h.Target, h.Bytes, h.OwnBytes = a.Target, a.Emitted.Bytes, a.Original.Bytes
	}
	return h
}
