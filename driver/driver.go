// Package driver runs heliac's pipeline and nothing else: load the model,
// compute lifetimes, plan, emit plan.json and C sources, and verify the
// emitted plan independently.
//
// Compile's input is the bytes of a .tflite file and a Config; its output
// is *Output, holding every stage's result and naming the set of files it
// is written as (Output.Files). Compile does no file I/O; cmd/heliac reads
// the model and writes the files. VerifyPlanFile re-checks a shipped plan:
// it reads the plan file and model file it is given, the start of the C
// files of the plan's set and (to find the model by its sha256) .tflite and
// .bin files near the plan, but writes nothing; CheckReplace reads what a
// set would replace.
package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
	"github.com/heliac/heliac/verify"
)

// Config controls Compile.
type Config struct {
	ModelName string // base name of the model file without extension; names the C prefix
	Prefix    string // C identifier prefix; "" derives one from ModelName
	Version   string // heliac's version, written into generated files
	Liveness  liveness.Options
	// Schedule chooses the order operators run in when Liveness.Order is
	// nil: ScheduleMemory (or "") the order with the lowest peak of live
	// scratch bytes that package order finds, ScheduleModel the model's.
	Schedule string
	// ScheduleWork is the order search's work budget (order.Options.Work);
	// 0 is order.DefaultWork.
	ScheduleWork int64
	// Kernels is the kernel library that runs the model: the scratch each
	// operator's kernel asks for (kernels.Library.Scratch) is planned in
	// the scratch arena, unless Plan.KernelScratch already lists requests.
	// nil plans none. Liveness.Kernels, which may be nil, only decides
	// in-place writes.
	Kernels *kernels.Library
	// Target is the machine the kernels run on; the zero value is
	// kernels.CortexM.
	Target   kernels.Target
	Plan     plan.Options
	NoVerify bool // skip the final independent verification
	// EmitTFLite also writes the model with the plan's scratch offsets as
	// TFLM's OfflineMemoryAllocation metadata (Output.TFLite).
	EmitTFLite bool
	// Constants says how the C module writes constant arenas' bytes
	// (emit.Constants); "" is plain C.
	Constants emit.Constants
	// Report also renders the plan as an HTML page (Output.Report).
	Report bool
	// TFLMTarget is the target of Output.TFLMArena (tflmarena.TargetNamed);
	// "" is tflmarena.CortexM, with Output.TFLMArenaHost beside it.
	TFLMTarget string
	// Runtime emit.RuntimeTFLM also writes <prefix>.tflm.cc (emit.COptions.Runtime).
	Runtime emit.Runtime
	// Patches PatchesAuto runs regions of the model stripe by stripe
	// where that lowers TFLM's whole arena (Output.Patches says what it
	// chose); PatchesOff or "" compiles the model as given.
	Patches string
	// PatchMACs caps the stripes' extra multiply-accumulates, a fraction
	// of the whole model's (0.1 is 10 %); 0 is DefaultPatchMACs.
	PatchMACs float64
}

// The schedules Config.Schedule names.
const (
	ScheduleMemory = liveness.OrderMemory
	ScheduleModel  = liveness.OrderModel
)

// Schedules lists the schedules Config.Schedule accepts.
func Schedules() []string { return []string{ScheduleMemory, ScheduleModel} }

// Output holds the results of every stage of Compile.
type Output struct {
	// Model is the model planned: with Config.Patches auto the rewritten
	// model when stripes were applied (its Stripes set), else the model
	// as given.
	Model *graph.Model
	// Original is the model as given.
	Original *graph.Model
	// Patches says what Config.Patches auto chose, cost and saved; nil
	// without it.
	Patches   *Patches
	Lifetimes *liveness.Lifetimes
	Plan      *plan.Plan
	Meta      emit.Meta
	PlanJSON  []byte
	CFiles    emit.Files
	// TFLite is set with Config.EmitTFLite.
	TFLite *TFLiteOutput
	// Report is the plan as an HTML page (emit.Report), with Config.Report.
	Report []byte
	// Order is the order search's result with the memory schedule (nil
	// otherwise): its peaks count exact in-place writes only, so the
	// plan's bound may be lower still.
	Order *order.Result
	// TFLM compares the plan with what TFLM's own planner needs for the
	// model; nil where the comparison means nothing (see TFLM).
	TFLM *TFLM
	// TFLMArena is TFLM's whole arena for the emitted model and for the
	// original under TFLM's own planner, with Config.EmitTFLite; nil when
	// it cannot be computed, and TFLMArenaErr says why.
	TFLMArena    *TFLMArenas
	TFLMArenaErr error
	// TFLMArenaHost is TFLM's whole arena on tflmarena.Host64 for the
	// model emitted, computed beside TFLMArena's cortex-m figure when
	// Config.TFLMTarget is "" (nil otherwise, or when it cannot be
	// computed: Meta.TFLMTargets says why). The headers pick between the
	// two by pointer size.
	TFLMArenaHost *TFLMArenas
	// TFLMRefusals are why stock TFLM will not run the model as given
	// (kernels.TFLMRefusals): the plan is sound, and of no use to TFLM
	// until the model changes. Empty when no check refuses it.
	TFLMRefusals []kernels.Refusal
}

// TFLiteOutput is the input model with the plan written in as TFLM's
// offline memory plan.
type TFLiteOutput struct {
	Data    []byte
	Offline *emit.OfflinePlan
	// Replaced says the model already carried OfflineMemoryAllocation
	// metadata (Vela writes one), which the plan replaced.
	Replaced bool
	// Reordered says the model's operators are listed in the plan's
	// schedule order, which differs from the input's.
	Reordered bool
	// C is Data as a C array for firmware: <prefix>.tflite.h and
	// <prefix>.tflite.c (emit.TFLiteC).
	C emit.Files
}

// VerifyError reports that the emitted plan failed independent
// verification: a heliac bug, never a problem with the model.
type VerifyError struct {
	Violations []verify.Violation
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verify: plan has %d violation(s)", len(e.Violations))
	for i, v := range e.Violations {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s", v)
	}
	return b.String()
}

// Compile runs the whole pipeline on one model.
func Compile(ctx context.Context, data []byte, cfg Config) (*Output, error) {
	if err := checkPatches(cfg); err != nil {
		return nil, err
	}
	s, err := planModel(ctx, data, cfg)
	var ce *plan.CapacityError
	if errors.As(err, &ce) {
		return fitFirst(ctx, data, cfg, ce)
	}
	if err != nil {
		return nil, err
	}
	r, info, err := s.withPatches(ctx)
	if err != nil {
		return nil, err
	}
	if r == s {
		out, err := s.finish()
		if out != nil {
			out.setPatches(info, cfg)
		}
		return out, err
	}
	striped, err := r.finish()
	if err != nil {
		return nil, err
	}
	if striped.TFLMArena == nil && !cfg.EmitTFLite {
		// No figure to judge the finished model by: choosePatches
		// judged the rewrite on TFLM's whole arena (wholeArenas).
		striped.setPatches(info, cfg)
		return striped, nil
	}
	// The finished rewrite, judged as the user will see it: never a
	// larger tensor_arena than heliac's plan of the model as given, nor
	// than TFLM needs for it under its own planner.
	out, err := s.finish()
	if err != nil {
		return nil, err
	}
	why := stripesLarger(striped.TFLMArena, out.TFLMArena, striped.TFLMArenaErr)
	if why == "" && out.TFLMArenaHost != nil {
		// Both targets' figures, when the header carries both.
		why = stripesLarger(striped.TFLMArenaHost, out.TFLMArenaHost, fmt.Errorf("no host64 figure"))
	}
	if why == "" {
		striped.setPatches(info, cfg)
		return striped, nil
	}
	out.setPatches(&Patches{ModelMACs: info.ModelMACs, Cap: info.Cap, HeadBefore: info.HeadBefore, ArenaBefore: info.ArenaBefore,
		Tried: info.Tried, Reason: why}, cfg)
	return out, nil
}

// setPatches records what --patches auto chose (nil without it) and, with
// --report, writes the report again to state it.
func (o *Output) setPatches(p *Patches, cfg Config) {
	o.Patches = p
	if cfg.Report && p != nil {
		o.Report = emit.ReportWithTFLM(o.Model, o.Plan, o.Meta, o.TFLMHeads())
	}
}

// stripesLarger says why the striped model's TFLM arenas (striped, or
// the error that kept them from being sized) are not kept against the
// model as given's (given), or "" when the stripes are kept: TFLM's whole
// tensor_arena no larger than with heliac's plan of the model as given and
// than TFLM's own planner's for it.
func stripesLarger(striped, given *TFLMArenas, err error) string {
	switch {
	case striped == nil:
		return fmt.Sprintf("TFLM's whole arena with the stripes cannot be sized (%v): the model is kept as given", err)
	case given != nil && striped.Emitted.Bytes > given.Emitted.Bytes:
		return fmt.Sprintf("the stripes lower heliac's arena but TFLM's whole tensor_arena would grow %d -> %d B (%s): the model is kept as given",
			given.Emitted.Bytes, striped.Emitted.Bytes, striped.Target)
	case striped.Emitted.Bytes > striped.Original.Bytes:
		return fmt.Sprintf("with the stripes TFLM's whole tensor_arena (%d B) would exceed what TFLM's own planner needs for the model as given (%d B, %s): the model is kept as given",
			striped.Emitted.Bytes, striped.Original.Bytes, striped.Target)
	}
	return ""
}

// planned is a model planned and not yet emitted.
type planned struct {
	data []byte
	cfg  Config
	m    *graph.Model
	lt   *liveness.Lifetimes
	p    *plan.Plan
	ord  *order.Result
	tflm *TFLM
	// theirs is TFLM's own placement of the model (tflmConfig), kept by
	// againstTFLM where finish may still prefer it (keepTFLMArena).
	theirs *planned
	// original and originalData are the model as given when m is its
	// rewrite (Config.Patches); nil otherwise.
	original     *graph.Model
	originalData []byte
}

// given returns the model as given and its bytes.
func (s *planned) given() (*graph.Model, []byte) {
	if s.original != nil {
		return s.original, s.originalData
	}
	return s.m, s.data
}

// planModel loads, orders and plans a model, and compares the plan with
// TFLM's own (againstTFLM), keeping TFLM's where heliac's needs more.
func planModel(ctx context.Context, data []byte, cfg Config) (*planned, error) {
	m, err := tflite.Load(data)
	if err != nil {
		return nil, err
	}
	s, err := planLoaded(ctx, m, cfg)
	if err != nil {
		return nil, err
	}
	s.data = data
	s.againstTFLM(ctx)
	return s, nil
}

// planLoaded orders and plans a loaded model.
func planLoaded(ctx context.Context, m *graph.Model, cfg Config) (*planned, error) {
	// The config's kernel_scratch entries against the model's operators,
	// before any work: one naming an operand its operator lacks fails.
	unusedOverrides, err := cfg.Kernels.CheckOverrides(m)
	if err != nil {
		return nil, err
	}
	lopts := cfg.Liveness
	if lopts.Alignment == 0 {
		// In-place outputs that lie elsewhere than exactly over their
		// input keep every offset the plan gives aligned.
		if lopts.Alignment, err = plan.ScratchAlignment(cfg.Plan); err != nil {
			return nil, err
		}
	}
	var ord *order.Result
	if lopts.Order == nil {
		switch cfg.Schedule {
		case "", ScheduleMemory:
			if liveness.HasOwnPlan(m) {
				// The model's own offline plan, which some of its
				// operators rely on, was made for the model's order.
				break
			}
			// Analyze's checks of the model's size first, with its messages.
			if err := liveness.CheckLimits(m); err != nil {
				return nil, err
			}
			if ord, err = memoryOrder(ctx, m, lopts, cfg.ScheduleWork); err != nil {
				return nil, err
			}
			lopts.Order, lopts.Ordering = ord.Order, liveness.Ordering{Strategy: liveness.OrderMemory, Proven: ord.Proven, TimedOut: ord.TimedOut}
		case ScheduleModel:
		default:
			return nil, fmt.Errorf("unknown schedule %q (known: %s)", cfg.Schedule, strings.Join(Schedules(), ", "))
		}
	}
	lt, err := liveness.Analyze(m, lopts)
	if err != nil {
		return nil, err
	}
	popts := cfg.Plan
	popts.TFLMKernelScratch = popts.TFLMKernelScratch || cfg.EmitTFLite
	if cfg.Kernels != nil && popts.KernelScratch == nil {
		popts.KernelScratch, popts.UnknownScratch = scratchRequests(m, cfg.Kernels, cfg.Target)
		popts.ScratchSource = plan.ScratchSource{Library: cfg.Kernels.Name, CPU: cfg.Target.CPU}
	}
	for _, u := range unusedOverrides {
		popts.UnusedOverrides = append(popts.UnusedOverrides, plan.UnusedOverride{Entry: u.Entry, Operator: u.Operator, Line: u.Line, Reason: u.Reason})
	}
	p, err := plan.Build(ctx, m, lt, popts)
	if err != nil {
		return nil, err
	}
	if size, lb := p.ScratchTotals(); len(m.Stripes) > 0 && lopts.Kernels != nil && !lopts.BlockCost && size > lb {
		// A model run stripe by stripe whose placement misses its bound
		// is planned again with the in-place writes chosen for a
		// rectangle allocator (liveness.Options.BlockCost), and the
		// smaller scratch kept: a stripe's chain of in-place writes
		// drifts, and the stripe's output, live until the concatenation,
		// keeps the chain's extent though its bytes live at each step
		// are few. That plan's groups are short rectangles, which TFLM's
		// greedy planner packs at their bound, or nearly, in a few
		// milliseconds and with an answer that depends on nothing but the
		// model (Best's search would take its time limit where it cannot
		// prove the bound).
		bopts := lopts
		bopts.BlockCost = true
		bpopts := popts
		bpopts.Planner = plan.PlannerTFLM
		if blt, err := liveness.Analyze(m, bopts); err == nil {
			if bp, err := plan.Build(ctx, m, blt, bpopts); err == nil {
				if bsize, _ := bp.ScratchTotals(); bsize < size {
					lt, p = blt, bp
				}
			}
		}
	}
	if size, lb := p.ScratchTotals(); lt.OverwriteInputs && size > lb {
		// In-place writes over model inputs (the default) lower the bound
		// or leave it, but an input's alias group can make the placement
		// harder: one that misses its bound is planned again with the
		// inputs kept (--keep-inputs), and the smaller scratch kept
		// (mlperf-tiny/pretrainedResnet: 133632 B over inputs, 133248 B,
		// its bound, without).
		kopts := lopts
		kopts.OverwriteInputs = false
		if klt, err := liveness.Analyze(m, kopts); err == nil {
			if kp, err := plan.Build(ctx, m, klt, popts); err == nil {
				if ksize, _ := kp.ScratchTotals(); ksize < size {
					lt, p = klt, kp
				}
			}
		}
	}
	return &planned{cfg: cfg, m: m, lt: lt, p: p, ord: ord}, nil
}

// finish emits a planned model, verifies what it emitted and adds the
// report and the rewritten model when asked.
func (s *planned) finish() (*Output, error) {
	data, cfg, m := s.data, s.cfg, s.m
	orig, origData := s.given()
	meta := emit.Meta{
		ModelName:   cfg.ModelName,
		ModelSHA256: sha256Hex(origData),
		Subgraphs:   len(m.Subgraphs),
		Version:     cfg.Version,
	}
	// The model for TFLM first: its whole arena goes into plan.json and
	// the C header.
	var (
		tfl        *TFLiteOutput
		arenas     *TFLMArenas
		arenasErr  error
		otherArena *TFLMArenas
	)
	if cfg.EmitTFLite {
		target := tflmarena.CortexM
		if cfg.TFLMTarget != "" {
			var ok bool
			if target, ok = tflmarena.TargetNamed(cfg.TFLMTarget); !ok {
				return nil, fmt.Errorf("unknown TFLM target %q (known: %s, %s)", cfg.TFLMTarget, tflmarena.CortexM.Name, tflmarena.Host64.Name)
			}
		}
		var err error
		if tfl, err = withOfflinePlan(data, m, s.p, s.planInfo()); err != nil {
			return nil, err
		}
		// The kernels' share of TFLM's tail is the build's library's
		// (kernels.Library.TFLMArena, on cfg.Target's CPU for CMSIS-NN);
		// an operator without data is an error naming it.
		k := tflmarena.Kernels{Library: cfg.Kernels, CPU: cfg.Target}
		if arenas, arenasErr = tflmArenas(context.Background(), orig, m, s.p, tfl, target, k); arenas != nil {
			// Never a larger tensor_arena than the original's.
			tfl, arenas = s.keepTFLMArena(tfl, arenas, target, k)
			meta.TFLMArena = &emit.TFLMArena{Target: arenas.Target, Bytes: arenas.Emitted.Bytes}
		}
		// The headers size the arena for every pointer size heliac
		// knows: the other target's figure on the model emitted.
		var other *TFLMArenas
		var otherErr error
		if cfg.TFLMTarget == "" {
			other, otherErr = s.tflmArenasHost(orig, tfl, k)
		}
		meta.TFLMTargets = tflmTargets(target, arenas, arenasErr, other, otherErr, cfg.TFLMTarget)
		meta.TFLMResourceVariables = tflmarena.ResourceVariables(m)
		otherArena = other
	}
	lt, p, ord := s.lt, s.p, s.ord
	// The JSON and the C only read the model and the plan: write them at
	// once.
	var (
		files emit.Files
		cErr  error
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		files, cErr = emit.C(m, p, emit.COptions{Prefix: cfg.Prefix, Meta: meta, Constants: cfg.Constants, Runtime: cfg.Runtime})
	}()
	js, err := emit.JSON(m, p, meta)
	<-done
	if err != nil {
		return nil, err
	}
	if cErr != nil {
		return nil, cErr
	}
	out := &Output{Model: m, Original: orig, Lifetimes: lt, Plan: p, Meta: meta, PlanJSON: js, CFiles: files, Order: ord, TFLM: s.tflm,
		TFLMRefusals: kernels.TFLMRefusals(orig)}
	if !cfg.NoVerify {
		if v := verifyOutput(s.rewrittenFrom(), m, js, cModule(files)); len(v) > 0 {
			return out, &VerifyError{Violations: v}
		}
	}
	out.TFLite, out.TFLMArena, out.TFLMArenaErr = tfl, arenas, arenasErr
	out.TFLMArenaHost = otherArena
	if cfg.Report {
		out.Report = emit.ReportWithTFLM(m, p, meta, out.TFLMHeads())
	}
	if tfl != nil {
		tfl.C = emit.TFLiteC(out.Prefix(), m, p, meta, tfl.Data)
	}
	return out, nil
}

// scratchRequests returns the scratch every operator of m asks for under
// lib on target t, in subgraph and operator order (a request of 0 bytes
// takes none), and the operators whose requests lib cannot know.
func scratchRequests(m *graph.Model, lib *kernels.Library, t kernels.Target) ([]plan.ScratchRequest, []graph.OpRef) {
	if t == (kernels.Target{}) {
		t = kernels.CortexM
	}
	var reqs []plan.ScratchRequest
	var unknown []graph.OpRef
	for si := range m.Subgraphs {
		for oi := range m.Subgraphs[si].Ops {
			ref := graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}
			sizes, known := lib.Scratch(m, ref.Subgraph, &m.Subgraphs[si].Ops[oi], t)
			if !known {
				unknown = append(unknown, ref)
			}
			for _, n := range sizes {
				if n > 0 {
					reqs = append(reqs, plan.ScratchRequest{Op: ref, Size: n})
				}
			}
		}
	}
	return reqs, unknown
}

// memoryOrder searches for the order of m's operators with the lowest
// peak of live scratch bytes, counting as in-place writes the exact
// contracts of lopts's kernel library (sizes rounded to lopts.Alignment),
// and, with lopts.ExactOverlap, its exact-overlap copies.
func memoryOrder(ctx context.Context, m *graph.Model, lopts liveness.Options, work int64) (*order.Result, error) {
	opts := order.Options{Alignment: lopts.Alignment, OverwriteInputs: lopts.OverwriteInputs, Work: work}
	if lib := lopts.Kernels.ExactOnly(); lib != nil {
		opts.InPlace = func(o graph.OpRef) []order.Pair {
			var pairs []order.Pair
			for _, p := range lib.InPlace(m, o.Subgraph, &m.Subgraphs[o.Subgraph].Ops[o.Op]) {
				pairs = append(pairs, order.Pair{Input: p.Input, Output: p.Output})
			}
			return pairs
		}
	}
	if lopts.ExactOverlap && !lopts.NoAlias && lopts.Kernels != nil {
		lib := lopts.Kernels
		opts.Copies = func(o graph.OpRef) []order.Copy {
			var cs []order.Copy
			for _, p := range lib.ExactOverlap(m, o.Subgraph, &m.Subgraphs[o.Subgraph].Ops[o.Op]) {
				cs = append(cs, order.Copy{Input: p.Input, Output: p.Output, Slot: p.Overlap == kernels.Slot, Offset: max(p.Lo, -p.Lo)})
			}
			return cs
		}
	}
	return order.Schedule(ctx, m, opts)
}

// planInfo is what a model written with s's plan records about it
// (emit.PlanInfo), but the plan's hash.
func (s *planned) planInfo() *emit.PlanInfo {
	i := &emit.PlanInfo{Generator: "heliac " + s.cfg.Version, TFLMTarget: s.cfg.TFLMTarget}
	if i.TFLMTarget == "" {
		i.TFLMTarget = tflmarena.CortexM.Name
	}
	if lib := s.cfg.Kernels; lib != nil {
		i.Kernels, i.KernelsPath = lib.Name, lib.PathName()
		for _, mem := range lib.Members() {
			i.Builds = append(i.Builds, mem.String())
		}
	}
	return i
}

// withOfflinePlan writes p's scratch offsets into the model as TFLM's
// offline memory plan and, when the plan's schedule runs a subgraph's
// operators in another order than the model lists them, lists them in
// the schedule's order (TFLM runs them as listed); nothing else of the
// model changes.
//
// It also records what the plan was made for (info, graph.PlanInfoName),
// with p's hash, unless info is nil.
func withOfflinePlan(data []byte, m *graph.Model, p *plan.Plan, info *emit.PlanInfo) (*TFLiteOutput, error) {
	op, err := emit.TFLMOfflinePlan(m, p)
	if err != nil {
		return nil, err
	}
	if info != nil {
		i := *info
		i.PlanHash = p.Hash()
		if data, _, err = tflite.SetMetadata(data, graph.PlanInfoName, i.Bytes()); err != nil {
			return nil, err
		}
	}
	var order [][]int
	if p.Schedule.Moved() > 0 {
		order = make([][]int, len(p.Schedule.Order))
		for s, ops := range p.Schedule.Order {
			for _, o := range ops {
				order[s] = append(order[s], int(o))
			}
		}
	}
	b, replaced, err := tflite.SetMetadataAndOrder(data, graph.OfflinePlanName, op.Data, order)
	if err != nil {
		return nil, err
	}
	return &TFLiteOutput{Data: b, Offline: op, Replaced: replaced, Reordered: order != nil}, nil
}
