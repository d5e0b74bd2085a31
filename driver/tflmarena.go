package driver

import (
	"context"
	"fmt"

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
type TFLMArenas struct {
	// Target is the target the figures are for (tflmarena.Target.Name).
	Target string
	// Kernels names the kernel library the figures are for
	// (kernels.Library.Name). The reference kernels' figures are checked
	// on stock TFLM; CMSIS-NN's come from its sources only, as no
	// CMSIS-NN build of TFLM runs here.
	Kernels string
	// CPU is the CPU the kernels' data is for (kernels.Target.CPU: the
	// build's --cpu on cortex-m; "" for a host build or a library whose
	// data does not depend on it).
	CPU string
	// Emitted is the model heliac writes with --emit-tflite, its head
	// the plan's offline plan (TFLM's own placement where Output.TFLM
	// says it was kept).
	Emitted tflmarena.Arena
	// Original is the input model with TFLM's own planner: its head
	// heliac's emulation of TFLM's GreedyMemoryPlanner on TFLM's
	// lifetimes, the model's operator order and the kernels' scratch.
	Original tflmarena.Arena
}

// tflmArenas computes TFLMArenas for out on target t; an error says why
// it cannot (an operator the kernel data does not know, a model that
// already carries its own offline plan).
func tflmArenas(ctx context.Context, m *graph.Model, tfl *TFLiteOutput, t tflmarena.Target, k tflmarena.Kernels) (*TFLMArenas, error) {
	em, err := tflmEmitted(tfl, t, k)
	if err != nil {
		return nil, err
	}
	head, err := tflmOwnHead(ctx, m, t, k)
	if err != nil {
		return nil, err
	}
	orig, err := tflmarena.Compute(m, head, t, k)
	if err != nil {
		return nil, err
	}
	name := kernels.TFLMReference
	if k.Library != nil {
		name = k.Library.Name
	}
	a := &TFLMArenas{Target: t.Name, Kernels: name, Emitted: em, Original: orig}
	if name != kernels.TFLMReference {
		a.CPU = k.Target(t).CPU
	}
	return a, nil
}

// tflmEmitted is TFLM's whole arena for the model heliac emitted, tfl.
func tflmEmitted(tfl *TFLiteOutput, t tflmarena.Target, k tflmarena.Kernels) (tflmarena.Arena, error) {
	emitted, err := tflite.Load(tfl.Data)
	if err != nil {
		return tflmarena.Arena{}, err
	}
	return tflmarena.Compute(emitted, tfl.Offline.ArenaSize, t, k)
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
