// Package heliac is heliac's Go entry point: an ahead-of-time memory
// planner for TensorFlow Lite models on microcontrollers. Compile takes a
// model's bytes and Options and returns the plan (arenas and allocations,
// the operators' schedule) and the files a firmware build needs (C module,
// plan.json, optionally the model with TFLM's offline plan), verified by
// an independent checker. The heliac command is a thin layer over it: the
// same Options give the same bytes.
//
// Compile keeps no package state and may be called from several goroutines
// at once. Its result's types are those of the packages that make it:
// plan.Plan (arenas, allocations, schedule), emit.Files, graph.Model.
package heliac

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflmarena"
)

// Options says how to compile a model. The zero value compiles as the
// heliac command does with no flags: the generic platform, a plan for
// every kernel library on every code path of a Cortex-M (kernels.Any: the
// in-place writes they all allow, room for each one's scratch), the memory
// order, the best planner.
type Options struct {
	// Name names the model: the C prefix and file names derive from it
	// ("person_detect" gives person_detect.h). "" is "model".
	Name string
	// Prefix is the C identifier prefix; "" derives one from Name.
	Prefix string
	// Platform is a built-in platform by name (plan.BuiltinPlatformNames;
	// "" is generic), unless PlatformSpec gives one.
	Platform     string
	PlatformSpec *plan.Platform
	// Rules place tensors in banks; External names the arenas the
	// application binds ("*" for all it can). See plan.Options.
	Rules    []plan.Rule
	External []string
	// Kernels is the kernel library the model runs with ("" is
	// kernels.Any: every library on every code path), CPU the Cortex-M it
	// runs on (kernels.CPUs), which narrows it to that CPU's code path, and
	// KernelScratch overrides what the library says operators' kernels ask
	// for.
	Kernels       string
	CPU           string
	KernelScratch []kernels.ScratchOverride
	// Schedule is driver.ScheduleMemory ("") or driver.ScheduleModel.
	Schedule string
	// NoInPlace writes no output over its input; KeepInputs writes none
	// over a model input (by default an in-place output may take a model
	// input's bytes while its operator reads it, as TFLM's own planner
	// reuses an input's bytes once it is read: the application fills the
	// inputs before every run); NoAlias gives view operators' outputs
	// bytes of their own.
	NoInPlace  bool
	KeepInputs bool
	NoAlias    bool
	// OverwriteInputs is what inputs get by default now
	// (--overwrite-inputs, kept for compatibility): it changes nothing,
	// and contradicts KeepInputs.
	//
	// Deprecated: model inputs are overwritten unless KeepInputs is set.
	OverwriteInputs bool
	// ExactOverlap is "on" ("" too) or "off": whether a concatenation's
	// inputs may live in their slots of its output and a slice's output
	// over its input's block, which makes the copying kernel copy bytes
	// exactly onto themselves (memcpy(p, p, n); kernels/copy.go says why
	// that is allowed). Off for a libc whose memcpy mishandles it.
	ExactOverlap string
	// Planner is an offset allocator by name ("" is plan.PlannerBest) and
	// TimeLimit its search budget per scratch arena (0 is the default).
	Planner   string
	TimeLimit time.Duration
	// OneScratchBank plans every scratch allocation into one bank, the
	// fastest that holds them all, as TFLM's one tensor_arena needs
	// (plan.Options.OneScratchBank; --one-scratch-bank).
	OneScratchBank bool
	// Strict makes rules that select nothing and operators whose kernel
	// scratch is unknown errors.
	Strict bool
	// EmitTFLite also returns the model with the plan as TFLM's
	// OfflineMemoryAllocation metadata; Constants says how the C module
	// writes constant arenas ("" is emit.ConstantsC).
	EmitTFLite bool
	Constants  emit.Constants
	// TFLMTarget is the one target TFLM runs on: "cortex-m" or "host64".
	// It sizes TFLM's whole arena with EmitTFLite
	// (driver.Output.TFLMArena), and host64 plans the kernels'
	// pointer-sized scratch with 8-byte pointers. "" plans for cortex-m
	// and sizes the arena for both (driver.Output.TFLMArenaHost), the
	// headers picking the figure by pointer size.
	TFLMTarget string
	// Report also returns the plan as a self-contained HTML page
	// (Output.Report, <prefix>.report.html among the files).
	Report bool
	// Runtime "tflm" also writes <prefix>.tflm.cc, which runs the model
	// on the plan with the TFLM kernels Kernels names, whichever of them
	// the build links (emit.RuntimeTFLM); "" or "none" writes the plan's
	// tables alone.
	Runtime string
	// Patches "auto" runs regions of the model stripe by stripe where
	// that lowers TFLM's whole arena (docs/stripes.md; the rewritten model
	// is Output.Model, the given one Output.Original); "" or "off"
	// compiles the model as given. PatchMACs caps the stripes' extra
	// multiply-accumulates, a fraction of the model's (0.1 is 10 %); 0 is
	// driver.DefaultPatchMACs.
	Patches   string
	PatchMACs float64
	// Version is written into generated files ("" is "dev").
	Version string
}

// Compile plans model (the bytes of a .tflite file) as opts say and
// returns the result, verified: Output.Plan, Output.PlanJSON and
// Output.Files() (what to write). An error says what is wrong with the
// model or the options; a *plan.CapacityError when the model does not fit
// the platform's banks, a *driver.VerifyError when the plan failed the
// independent check (a heliac bug).
func Compile(ctx context.Context, model []byte, opts Options) (*driver.Output, error) {
	cfg, err := opts.Config()
	if err != nil {
		return nil, err
	}
	return driver.Compile(ctx, model, cfg)
}

// OptionError is an option Compile cannot use: an unknown name or a
// combination that makes no sense. The heliac command reports it as a
// usage error.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Config returns the driver.Config Compile runs with, or an *OptionError.
func (o Options) Config() (driver.Config, error) {
	bad := func(format string, a ...any) (driver.Config, error) {
		return driver.Config{}, &OptionError{fmt.Errorf(format, a...)}
	}
	name := o.Name
	if name == "" {
		name = "model"
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	cfg := driver.Config{ModelName: name, Prefix: o.Prefix, Version: version, Schedule: o.Schedule,
		EmitTFLite: o.EmitTFLite, Constants: o.Constants, Report: o.Report, TFLMTarget: o.TFLMTarget, Runtime: emit.Runtime(o.Runtime)}
	cfg.Plan = plan.Options{Planner: o.Planner, TimeLimit: o.TimeLimit, Rules: slices.Clone(o.Rules),
		External: slices.Clone(o.External), Strict: o.Strict, Platform: o.PlatformSpec, OneScratchBank: o.OneScratchBank}
	if o.PlatformSpec == nil && o.Platform != "" {
		p, err := plan.BuiltinPlatform(o.Platform)
		if err != nil {
			return driver.Config{}, &OptionError{err}
		}
		cfg.Plan.Platform = &p
	}
	libName := o.Kernels
	if libName == "" {
		// Every library on every code path: the runtime, too, runs
		// whichever the build links.
		libName = kernels.Any
	}
	lib, err := kernels.Lookup(libName)
	if err != nil {
		return bad("--kernels: %w", err)
	}
	if len(o.KernelScratch) > 0 {
		if lib, err = driver.WithScratch(lib, o.KernelScratch); err != nil {
			return driver.Config{}, err
		}
	}
	switch emit.Runtime(o.Runtime) {
	case "", emit.RuntimeNone:
	case emit.RuntimeTFLM:
	default:
		return bad("--runtime: unknown runtime %q (known: %s)", o.Runtime, strings.Join(emit.Runtimes(), ", "))
	}
	// The CPU: --cpu, else the platform's. It narrows the library to
	// the code path that CPU runs.
	cpu, cpuFrom := o.CPU, "--cpu"
	if cpu == "" && cfg.Plan.Platform != nil && cfg.Plan.Platform.CPU != "" {
		cpu, cpuFrom = cfg.Plan.Platform.CPU, fmt.Sprintf("platform %s's cpu", cfg.Plan.Platform.Name)
	}
	cfg.Target = kernels.CortexM
	// A 64-bit host runs the kernels' portable code (--cpu generic), and
	// its kernels ask for pointer-sized scratch (ADD_N) twice as large.
	pointer := cfg.Target.PointerSize
	if t, ok := tflmarena.TargetNamed(o.TFLMTarget); ok && t.PointerSize != pointer {
		if o.CPU != "" && o.CPU != kernels.GenericCPU {
			return bad("--cpu %s is a Cortex-M CPU; --tflm-target %s is a 64-bit host, which runs the kernels' portable code: --cpu %s",
				o.CPU, t.Name, kernels.GenericCPU)
		}
		cpu, cpuFrom, pointer = kernels.GenericCPU, "--tflm-target", t.PointerSize
	}
	if cpu != "" {
		if cfg.Target, err = kernels.CPU(cpu); err != nil {
			return bad("%s: %w", cpuFrom, err)
		}
		lib = lib.On(cfg.Target.ISA)
	}
	cfg.Target.PointerSize = pointer
	cfg.Kernels = lib
	cfg.Liveness.NoAlias = o.NoAlias
	if o.OverwriteInputs && o.KeepInputs {
		return bad("--overwrite-inputs (the default) and --keep-inputs contradict each other; give --keep-inputs alone to keep model inputs intact")
	}
	if !o.NoInPlace {
		cfg.Liveness.Kernels = lib
		cfg.Liveness.OverwriteInputs = !o.KeepInputs
		cfg.Liveness.ExactOverlap = o.ExactOverlap != "off"
	}
	switch o.Patches {
	case "", driver.PatchesOff, driver.PatchesAuto:
	default:
		return bad("--patches: unknown value %q (known: %s, %s)", o.Patches, driver.PatchesAuto, driver.PatchesOff)
	}
	if o.PatchMACs < 0 || o.PatchMACs > 1 || o.PatchMACs != o.PatchMACs {
		return bad("--patch-macs: %g is outside 0..1 (0..100%%)", o.PatchMACs)
	}
	cfg.Patches, cfg.PatchMACs = o.Patches, o.PatchMACs
	if o.ExactOverlap != "" && o.ExactOverlap != "on" && o.ExactOverlap != "off" {
		return bad("--exact-overlap: %q is neither on nor off", o.ExactOverlap)
	}
	if o.Schedule != "" && !slices.Contains(driver.Schedules(), o.Schedule) {
		return bad("--schedule: unknown schedule %q (known: %s)", o.Schedule, strings.Join(driver.Schedules(), ", "))
	}
	return cfg, nil
}
