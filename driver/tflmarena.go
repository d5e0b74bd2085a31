package driver

import (
	"context"
	"fmt"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// TFLMArenas is TensorFlow Lite Micro's whole tensor_arena (package
// tflmarena, tflite-micro 90b983c, the build's kernels) on one target: the
// smallest arena, a multiple of 16, with which TFLM's MicroInterpreter
// allocates the model, for heliac's emitted model and for the original
// model under TFLM's own GreedyMemoryPlanner. Each is its head (the
// memory plan: tensors and kernel scratch) and TFLM's persistent tail,
// plus the temporaries allocation needs beyond them (Bytes ≥ Head + Tail).
//
// For a plan made for a set of kernel libraries (kernels.Any: the
// firmware may link any of them), Members holds each member's figures on
// the target and the top-level figures are those of the member whose
// emitted model needs the largest arena: the arena that suffices for
// every member.
type TFLMArenas struct {
	// Target is the target the figures are for (tflmarena.Target.Name).
	Target string
	// Kernels names the kernel library the figures are for, with its
	// code path (kernels.Library.String: "cmsis-nn (mve)").
	Kernels string
	// CPU is the CPU the kernels' data is for (kernels.Target.CPU: the
	// build's --cpu on cortex-m; "" for a host build or a library whose
	// data does not depend on it).
	CPU string
	// Emitted is the model heliac writes with --emit-tflite, its head
	// the plan's offline plan with the kernels' scratch placed by TFLM
	// (TFLM's own placement where Output.TFLM says it was kept).
	Emitted tflmarena.Arena
	// Original is the input model with TFLM's own planner: its head
	// heliac's emulation of TFLM's GreedyMemoryPlanner on TFLM's
	// lifetimes, the model's operator order and the kernels' scratch.
	Original tflmarena.Arena
	// Members are the figures of each library of a set, in the set's
	// order; nil for one library.
	Members []TFLMArenas
}

// tflmArenas computes TFLMArenas for the model planned as m by p and
// emitted as tfl, from orig, on target t; an error says why it cannot (an
// operator the kernel data does not know, a model that already carries
// its own offline plan).
func tflmArenas(ctx context.Context, orig, m *graph.Model, p *plan.Plan, tfl *TFLiteOutput, t tflmarena.Target, k tflmarena.Kernels) (*TFLMArenas, error) {
	members := k.Library.Members()
	if len(members) <= 1 {
		return tflmArenasOf(ctx, orig, tfl, tfl.Offline.ArenaSize, t, k)
	}
	return tflmArenasEach(ctx, orig, m, p, tfl, t, k)
}

// tflmArenasEach is tflmArenas with each library's head TFLM's
// placement of that library's scratch requests on t around the plan's
// tensors (plan.Plan.TFLMHead), as for a plan made for a set of
// libraries or for another pointer size (kernels ask for pointer-sized
// scratch). Members stays nil for one library.
func tflmArenasEach(ctx context.Context, orig, m *graph.Model, p *plan.Plan, tfl *TFLiteOutput, t tflmarena.Target, k tflmarena.Kernels) (*TFLMArenas, error) {
	var top *TFLMArenas
	var all []TFLMArenas
	for _, mk := range memberKernels(k) {
		mem := mk.Library
		if mem == nil {
			var err error
			if mem, err = kernels.Lookup(kernels.TFLMReference); err != nil {
				return nil, err
			}
		}
		reqs, _ := scratchRequests(m, mem, mk.Target(t))
		head, ok := p.TFLMHead(reqs)
		if !ok {
			return nil, fmt.Errorf("the plan has no single scratch arena for TFLM's one tensor_arena")
		}
		a, err := tflmArenasOf(ctx, orig, tfl, head, t, mk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mem, err)
		}
		all = append(all, *a)
		if top == nil || a.Emitted.Bytes > top.Emitted.Bytes {
			top = a
		}
	}
	out := *top
	if len(all) > 1 {
		out.Members = all
	}
	return &out, nil
}

// tflmArenasHost is TFLMArenas on tflmarena.Host64 for the model emitted
// as tfl from a plan made for cortex-m (k its kernels there): a 64-bit
// host runs CMSIS-NN's portable code (TFLM's x86-64 build of its CMSIS-NN
// kernels), so the figure is for the plan's libraries on that path; a
// plan for another code path of CMSIS-NN has none.
func (s *planned) tflmArenasHost(orig *graph.Model, tfl *TFLiteOutput, k tflmarena.Kernels) (*TFLMArenas, error) {
	lib := k.Library
	if isa, ok := lib.Path(); ok && isa != kernels.NoDSP {
		return nil, fmt.Errorf("the plan is for kernels %s, and a 64-bit host runs CMSIS-NN's portable code: run heliac with --tflm-target %s for a plan and figure for it",
			lib, tflmarena.Host64.Name)
	}
	hk := tflmarena.Kernels{Library: lib.On(kernels.NoDSP), CPU: kernels.Target{CPU: kernels.GenericCPU, PointerSize: tflmarena.Host64.PointerSize}}
	return tflmArenasEach(context.Background(), orig, s.m, s.p, tfl, tflmarena.Host64, hk)
}

// tflmTargets is emit.Meta.TFLMTargets: the figure on target (a, or aErr
// why none) and on the other target heliac knows (other, or otherErr;
// both nil when --tflm-target forced forced one), by pointer size.
func tflmTargets(target tflmarena.Target, a *TFLMArenas, aErr error, other *TFLMArenas, otherErr error, forced string) []emit.TFLMTarget {
	entry := func(t tflmarena.Target, a *TFLMArenas, err error) emit.TFLMTarget {
		e := emit.TFLMTarget{Target: t.Name, PointerSize: t.PointerSize}
		switch {
		case a != nil:
			e.Bytes = a.Emitted.Bytes
		case err != nil:
			e.Reason = err.Error()
		default:
			e.Reason = fmt.Sprintf("heliac ran with --tflm-target %s; run it without --tflm-target for a figure on every target", forced)
		}
		return e
	}
	o := tflmarena.Host64
	if target.PointerSize == o.PointerSize {
		o = tflmarena.CortexM
	}
	out := []emit.TFLMTarget{entry(target, a, aErr), entry(o, other, otherErr)}
	if out[0].PointerSize > out[1].PointerSize {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// memberKernels returns k for each library k's library stands for, each
// with its own code path.
func memberKernels(k tflmarena.Kernels) []tflmarena.Kernels {
	var out []tflmarena.Kernels
	for _, mem := range k.Library.Members() {
		mk := tflmarena.Kernels{Library: mem, CPU: k.CPU}
		if isa, ok := mem.Path(); ok {
			mk.CPU.ISA = isa
		}
		out = append(out, mk)
	}
	if len(out) == 0 {
		out = append(out, k)
	}
	return out
}

// computeEach is tflmarena.Compute for every library k stands for, with
// head as each one's head: the largest arena of them.
func computeEach(m *graph.Model, head int64, t tflmarena.Target, k tflmarena.Kernels) (tflmarena.Arena, error) {
	var most tflmarena.Arena
	for _, mk := range memberKernels(k) {
		a, err := tflmarena.Compute(m, head, t, mk)
		if err != nil {
			return tflmarena.Arena{}, err
		}
		if a.Bytes > most.Bytes {
			most = a
		}
	}
	return most, nil
}

// tflmArenasOf is TFLMArenas for one kernel library: the emitted model
// tfl whose head, with the library's scratch placed by TFLM, is head.
func tflmArenasOf(ctx context.Context, m *graph.Model, tfl *TFLiteOutput, head int64, t tflmarena.Target, k tflmarena.Kernels) (*TFLMArenas, error) {
	em, err := tflmEmitted(tfl, head, t, k)
	if err != nil {
		return nil, err
	}
	own, err := tflmOwnHead(ctx, m, t, k)
	if err != nil {
		return nil, err
	}
	orig, err := tflmarena.Compute(m, own, t, k)
	if err != nil {
		return nil, err
	}
	a := &TFLMArenas{Target: t.Name, Kernels: kernels.TFLMReference, Emitted: em, Original: orig}
	if k.Library != nil {
		a.Kernels = k.Library.String()
		if k.Library.Name != kernels.TFLMReference {
			a.CPU = k.Target(t).CPU
		}
	}
	return a, nil
}

// tflmEmitted is TFLM's whole arena for the model heliac emitted, tfl,
// whose head is head.
func tflmEmitted(tfl *TFLiteOutput, head int64, t tflmarena.Target, k tflmarena.Kernels) (tflmarena.Arena, error) {
	emitted, err := tflite.Load(tfl.Data)
	if err != nil {
		return tflmarena.Arena{}, err
	}
	return tflmarena.Compute(emitted, head, t, k)
}

// tflmOwnHead is the head TFLM's GreedyMemoryPlanner gives the input
// model: every tensor in a buffer of its own over TFLM's lifetimes, the
// model's order, the kernels' scratch requests on t.
func tflmOwnHead(ctx context.Context, m *graph.Model, t tflmarena.Target, k tflmarena.Kernels) (int64, error) {
	if liveness.HasOwnPlan(m) {
		return 0, fmt.Errorf("the model carries its own offline plan")
	}
	lib := k.Library
	if lib == nil {
		var err error
		if lib, err = kernels.Lookup(kernels.TFLMReference); err != nil {
			return 0, err
		}
	}
	lt, err := liveness.Analyze(m, liveness.Options{NoAlias: true})
	if err != nil {
		return 0, err
	}
	reqs, _ := scratchRequests(m, lib, k.Target(t))
	p, err := plan.Build(ctx, m, lt, plan.Options{Planner: plan.PlannerTFLM, KernelScratch: reqs})
	if err != nil {
		return 0, err
	}
	size, _ := p.ScratchTotals()
	return size, nil
}
