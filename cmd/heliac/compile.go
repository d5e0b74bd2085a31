package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/config"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflmarena"
)

type compileOptions struct {
	model        string
	models       []string // every model given; model is the first
	outDir       string
	prefix       string
	planner      string
	timeLimit    time.Duration
	platform     string
	platformFile string
	configFile   string
	noAlias      bool
	kernels      string
	cpu          string
	schedule     string
	noInPlace    bool
	exactOverlap string
	overwriteIn  bool
	keepInputs   bool
	strict       bool
	emitTFLite   bool
	oneBank      bool
	tflmTarget   string
	report       bool
	external     bool
	constants    string
	runtime      string
	patches      string
	patchMACs    string
	force        bool
	quiet        bool
	json         bool
	stdout       io.Writer
	stderr       io.Writer
}

func addCompileFlags(cmd *cobra.Command, opts *compileOptions) {
	f := cmd.Flags()
	f.StringVarP(&opts.outDir, "out", "o", "out", "directory to write <prefix>.plan.json and the C sources into")
	f.StringVar(&opts.prefix, "prefix", "", "prefix of every C name (default: derived from the model file name)")
	f.StringVar(&opts.planner, "planner", plan.PlannerBest, "offset allocator: "+strategyHelp())
	durationFlag(f, &opts.timeLimit, "time-limit", plan.DefaultTimeLimit,
		"search budget per scratch arena for --planner best; when it runs out, the best placement found by then is used")
	f.StringVar(&opts.platform, "platform", "", "built-in platform: "+strings.Join(plan.BuiltinPlatformNames(), ", ")+" (default generic)")
	f.StringVar(&opts.platformFile, "platform-file", "", "platform description (YAML or JSON); overrides --config's platform")
	f.StringVar(&opts.configFile, "config", "", "config file (YAML or JSON) with a platform and placement rules")
	f.BoolVar(&opts.noAlias, "no-alias", false, "give view operators' outputs (RESHAPE, SQUEEZE, ...) buffers of their own")
	f.StringVar(&opts.kernels, "kernels", "",
		"kernel library the model runs with, whose contracts say which outputs may be written over a dying input and whose rules size its kernels' scratch: "+
			"any (default: the plan holds for TFLM's reference kernels and for CMSIS-NN on every code path the CPU may run), tflm-reference or cmsis-nn")
	f.StringVar(&opts.cpu, "cpu", "",
		"CPU the kernels run on, which picks CMSIS-NN's code path (portable C, DSP or MVE) and its scratch sizes (default: the platform's, else every path; generic with --tflm-target host64): "+strings.Join(kernels.CPUs(), ", "))
	f.StringVar(&opts.schedule, "schedule", driver.ScheduleMemory,
		"operator order: memory (the order with the lowest peak of live scratch bytes the search finds within its work budget) or model (the order the model lists them in)")
	f.BoolVar(&opts.noInPlace, "no-in-place", false, "write no operator's output over its input (give every output buffer bytes of its own)")
	f.StringVar(&opts.exactOverlap, "exact-overlap", "on",
		"on or off: let a concatenation's inputs live in their slots of its output, and a slice's output over its input's block, so the kernel copies bytes exactly onto themselves (memcpy(p, p, n), which GCC and LLVM require to work); off for an unusual libc")
	f.BoolVar(&opts.keepInputs, "keep-inputs", false,
		"write no output over a model input (by default an in-place output may take a model input's bytes while its operator reads it, "+
			"as TFLM's own planner reuses an input's bytes once it is read: the application fills the inputs before every run)")
	f.BoolVar(&opts.overwriteIn, "overwrite-inputs", false, "the default; accepted for compatibility")
	_ = f.MarkHidden("overwrite-inputs")
	f.BoolVar(&opts.strict, "strict", false, "fail when a tensor or name rule of --config selects nothing, or an operator may ask for kernel scratch the library has no rule for (by default a warning)")
	f.BoolVar(&opts.report, "report", false, "also write DIR/<prefix>.report.html: the plan as one self-contained page (memory maps, arenas, peaks)")
	f.BoolVar(&opts.emitTFLite, "emit-tflite", false, "also write DIR/<prefix>.tflite: the model with the plan as TFLM's OfflineMemoryAllocation metadata")
	f.BoolVar(&opts.oneBank, "one-scratch-bank", false,
		"plan every scratch tensor and kernel scratch buffer into one bank, the fastest that holds them all, as TFLM's one tensor_arena needs (for --emit-tflite on a platform of several RAM banks)")
	f.StringVar(&opts.tflmTarget, "tflm-target", "",
		"the one target TFLM runs on: cortex-m (32-bit) or host64 (which runs CMSIS-NN's portable code: --cpu generic); sizes TFLM's whole arena with --emit-tflite (TFLM "+tflmarena.Commit+", for each kernel build of --kernels) and the kernels' pointer-sized scratch (default: plan for cortex-m and size the arena for both, the headers picking the figure by pointer size)")
	f.BoolVar(&opts.external, "external-arenas", false,
		"emit no storage for scratch, persistent and staged constant arenas: the application binds its own buffers (<prefix>_bind_arena); the config's external_arenas names some")
	f.StringVar(&opts.runtime, "runtime", string(emit.RuntimeNone),
		"none, or tflm: also write DIR/<prefix>.tflm.cc, C++ that runs the model on the plan with the TFLM kernels of --kernels (<prefix>_invoke; with any, whichever build the application links: reference or CMSIS-NN; docs/c-module.md)")
	f.StringVar(&opts.constants, "constants", string(emit.ConstantsC), "how the C module writes constant arenas: "+constantsHelp())
	f.StringVar(&opts.patches, "patches", driver.PatchesOff,
		"auto: run the early layers stripe by stripe where that lowers TFLM's whole arena (extra operators and multiply-accumulates; docs/stripes.md); off: the model as given")
	f.StringVar(&opts.patchMACs, "patch-macs", "10%",
		"with --patches auto, the most extra multiply-accumulates the stripes may add, of the whole model's: a percentage (10%) or a fraction (0.1)")
	f.BoolVar(&opts.force, "force", false, "replace files of the set's names that another model's run, or not heliac, wrote (never the input model)")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "print nothing on success")
	f.BoolVar(&opts.json, "json", false, "print the summary as JSON on stdout (arenas with their bounds, kernel scratch, files written)")
}

func runCompile(ctx context.Context, opts *compileOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(opts.models) > 1 {
		return runCompileSet(ctx, opts)
	}
	data, err := inputfile.Read(opts.model, inputfile.Model)
	if err != nil {
		return err
	}
	cfg, err := compileConfig(opts)
	if err != nil {
		return err
	}
	cfg.ModelName = emit.ModelName(opts.model)
	out, err := driver.Compile(ctx, data, cfg)
	if err != nil {
		return fmt.Errorf("compile %s: %w", opts.model, err)
	}
	files := out.Files()
	if err := writeOutput(opts, cfg.ModelName, files); err != nil {
		return fmt.Errorf("compile %s: %w", opts.model, err)
	}
	switch {
	case opts.quiet:
	case opts.json:
		return printJSONSummary(opts, out, files)
	default:
		printSummary(opts, out, files)
	}
	return nil
}

// compileConfig turns the compile flags, and the config file they name,
// into the heliac.Options every model is compiled with and the
// driver.Config they give; the caller names the model (ModelName).
func compileConfig(opts *compileOptions) (driver.Config, error) {
	var po plan.Options
	file, err := loadConfig(opts, &po)
	if err != nil {
		return driver.Config{}, err
	}
	o := heliac.Options{Prefix: opts.prefix, PlatformSpec: po.Platform, Rules: po.Rules, External: po.External,
		Kernels: opts.kernels, CPU: opts.cpu, KernelScratch: file.KernelScratch, Schedule: opts.schedule,
		NoInPlace: opts.noInPlace, KeepInputs: opts.keepInputs, NoAlias: opts.noAlias, ExactOverlap: opts.exactOverlap,
		Planner: opts.planner, TimeLimit: opts.timeLimit, Strict: opts.strict,
		Patches:    opts.patches,
		EmitTFLite: opts.emitTFLite, OneScratchBank: opts.oneBank, TFLMTarget: opts.tflmTarget, Report: opts.report, Constants: emit.Constants(opts.constants), Runtime: opts.runtime, Version: heliacVersion()}
	if opts.external {
		o.External = append(o.External, "*")
	}
	if opts.overwriteIn && opts.keepInputs {
		// --overwrite-inputs is the default, kept for compatibility.
		return driver.Config{}, &usageError{errors.New("--overwrite-inputs (the default) and --keep-inputs contradict each other; give --keep-inputs alone to keep model inputs intact")}
	}
	if opts.patchMACs != "" {
		if o.PatchMACs, err = driver.ParsePatchMACs(opts.patchMACs); err != nil {
			return driver.Config{}, &usageError{err}
		}
		if o.PatchMACs == 0 {
			return driver.Config{}, &usageError{fmt.Errorf("--patch-macs: %q allows no extra multiply-accumulates, and every stripe recomputes some; use --patches off", opts.patchMACs)}
		}
	}
	cfg, err := o.Config()
	if _, ok := tflmarena.TargetNamed(opts.tflmTarget); !ok && opts.tflmTarget != "" {
		return cfg, &usageError{fmt.Errorf("unknown --tflm-target %q (known: %s, %s)", opts.tflmTarget, tflmarena.CortexM.Name, tflmarena.Host64.Name)}
	}
	var oe *heliac.OptionError
	switch {
	case errors.As(err, &oe):
		return cfg, &usageError{err}
	case err != nil: // a kernel_scratch entry of the config file
		return cfg, fmt.Errorf("%s: %w", opts.configFile, err)
	}
	return cfg, nil
}

// writeOutput writes the set files of the model named name into -o: never
// over the input, and over files another model's run or not heliac wrote
// only with --force.
func writeOutput(opts *compileOptions, name string, files emit.Files) error {
	if err := refuseInput(opts.model, "model", opts.outDir, files, "choose another -o or --prefix"); err != nil {
		return err
	}
	if !opts.force {
		if err := driver.CheckReplace(opts.outDir, name, files); err != nil {
			return fmt.Errorf("%w; give this model another --prefix or -o, or replace the file with --force", err)
		}
	}
	obsolete, err := driver.Obsolete(opts.outDir, files)
	if err != nil {
		return err
	}
	in, err := os.Stat(opts.model)
	if err != nil {
		return err
	}
	obsolete = slices.DeleteFunc(obsolete, func(name string) bool {
		st, err := os.Stat(filepath.Join(opts.outDir, name))
		return err == nil && os.SameFile(in, st) // never the input
	})
	return writeSet(opts.outDir, files, obsolete, opts.model)
}

// printSummary prints what was planned and written.
func printSummary(opts *compileOptions, out *driver.Output, files emit.Files) {
	tensors := 0
	for _, a := range out.Plan.Allocs {
		if a.Kind == plan.TensorAlloc {
			tensors++
		}
	}
	fmt.Fprintf(opts.stdout, "heliac %s: %d subgraph(s), %d step(s), %d tensor(s) placed\n",
		opts.model, len(out.Model.Subgraphs), out.Plan.Schedule.Steps, tensors)
	opts.stdout.Write(emit.Summary(out.Model, out.Plan))
	printRefusals(opts.stdout, out)
	if h := out.TFLMHeads(); h != nil {
		fmt.Fprintf(opts.stdout, "  %s\n", h.Text())
	}
	if out.Patches != nil {
		fmt.Fprintf(opts.stdout, "  %s\n", out.Patches.Text())
	}
	if t := out.TFLite; t != nil {
		if a := out.TFLMArena; a != nil {
			e, o := a.Emitted, a.Original
			sized := a.Kernels
			if len(a.Members) > 0 {
				sized = fmt.Sprintf("with any of the %d kernel builds the plan is for; sized for %s", len(a.Members), a.Kernels)
			}
			fmt.Fprintf(opts.stdout, "  %s: %d tensor(s) at the plan's offsets (%s metadata%s); TFLM (%s, %s, %s) needs a tensor_arena of "+
				"%d bytes: head %d (tensors and kernel scratch) + persistent tail %d + %d for temporaries and alignment\n",
				out.Prefix()+".tflite", t.Offline.Planned, graph.OfflinePlanName, map[bool]string{true: ", replacing the model's own"}[t.Replaced],
				tflmarena.Commit, a.Target, sized, e.Bytes, e.Head, e.Tail, e.Bytes-e.Head-e.Tail)
			fmt.Fprintf(opts.stdout, "  TFLM's own planner on the original model: %d bytes (head %d, tail %d); %+d B (%+.1f%%) with heliac's plan\n",
				o.Bytes, o.Head, o.Tail, e.Bytes-o.Bytes, 100*float64(e.Bytes-o.Bytes)/float64(o.Bytes))
			for _, m := range a.Members {
				fmt.Fprintf(opts.stdout, "    %-20s %7d bytes (head %d, tail %d); TFLM's own planner on the original: %d (head %d)\n",
					m.Kernels+":", m.Emitted.Bytes, m.Emitted.Head, m.Emitted.Tail, m.Original.Bytes, m.Original.Head)
			}
		} else if re := (*tflmarena.RefusedError)(nil); errors.As(out.TFLMArenaErr, &re) {
			fmt.Fprintf(opts.stdout, "  %s: %d tensor(s) at the plan's offsets (%s metadata%s); no tensor_arena figure: TFLM (%s) cannot run this model: "+
				"operator %d:%d %s: %s\n", out.Prefix()+".tflite", t.Offline.Planned, graph.OfflinePlanName,
				map[bool]string{true: ", replacing the model's own"}[t.Replaced], tflmarena.Commit, re.Subgraph, re.Op, re.Name, re.Why)
		} else {
			fmt.Fprintf(opts.stdout, "  %s: %d tensor(s) at the plan's offsets (%s metadata%s); give the interpreter an arena of "+
				"%d bytes for them and the kernels' scratch, plus TFLM's persistent tail (not computed: %v)\n",
				out.Prefix()+".tflite", t.Offline.Planned, graph.OfflinePlanName, map[bool]string{true: ", replacing the model's own"}[t.Replaced],
				t.Offline.ArenaSize, out.TFLMArenaErr)
		}
		if ts := out.Meta.TFLMTargets; len(ts) > 0 {
			var each []string
			for _, a := range ts {
				if a.Bytes > 0 {
					each = append(each, fmt.Sprintf("%d B on %s (%d-bit)", a.Bytes, a.Target, 8*a.PointerSize))
				} else {
					each = append(each, fmt.Sprintf("none on %s (%d-bit)", a.Target, 8*a.PointerSize))
				}
			}
			fmt.Fprintf(opts.stdout, "  %s: %s_TFLM_ARENA_SIZE %s, picked by pointer size; for an application's MicroInterpreter (its planner in the arena) with %d resource variable(s)\n",
				out.Prefix()+".tflite.h", strings.ToUpper(out.Prefix()), strings.Join(each, ", "), out.Meta.TFLMResourceVariables)
		}
		if t.Reordered {
			fmt.Fprintf(opts.stdout, "  note: its operators are listed in the plan's schedule order, which TFLM runs them in\n")
		}
		if t.Offline.Deferred > 0 {
			fmt.Fprintf(opts.stdout, "  note: %d tensor(s) left to TFLM: TFLM looks up a later subgraph's is_variable tensors among subgraph 0's offsets\n",
				t.Offline.Deferred)
		}
	}
	if opts.runtime == string(emit.RuntimeTFLM) {
		if lib, err := emit.PlanKernels(out.Plan); err == nil {
			_, space := emit.PrepareSpace(out.Plan)
			if builds, err := emit.TFLMKernelState(out.Model, lib, space); err == nil {
				fmt.Fprintf(opts.stdout, "  %s: %s\n", out.Prefix()+emit.TFLMSuffix, emit.TFLMRuntimeText(builds))
			}
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Join(opts.outDir, f.Name)
	}
	fmt.Fprintf(opts.stdout, "wrote %s\n", strings.Join(names, ", "))
}

// maxRefusals is how many of TFLM's refusals the summary lists; --json
// lists them all.
const maxRefusals = 8

// refusalText is a warning line of the summary for one of TFLM's refusals,
// the operator's name escaped as every name from the model (its reason
// quotes the tensors' names as Go does).
func refusalText(r kernels.Refusal) string {
	r.Name = emit.EscapeName(r.Name)
	return "TFLM will not run this model: " + r.String()
}

// printRefusals prints why stock TFLM will not run the model
// (driver.Output.TFLMRefusals), as the summary's warnings.
func printRefusals(w io.Writer, out *driver.Output) {
	for i, r := range out.TFLMRefusals {
		if i == maxRefusals {
			fmt.Fprintf(w, "  … and %d more reason(s) TFLM will not run it (--json lists them in warnings)\n", len(out.TFLMRefusals)-i)
			break
		}
		fmt.Fprintf(w, "  warning: %s\n", refusalText(r))
	}
	if len(out.TFLMRefusals) > 0 {
		fmt.Fprintf(w, "  the plan is sound, and of no use to stock TFLM until the model changes (an int8 model quantized throughout runs)\n")
	}
}

// refuseInput returns an error when writing files into dir would replace
// the input file, a what, under its own name or another (a hard or symbolic
// link). hint says what to change.
func refuseInput(input, what, dir string, files emit.Files, hint string) error {
	in, err := os.Stat(input)
	if err != nil {
		return err
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f.Name)); err == nil && os.SameFile(in, st) {
			return fmt.Errorf("writing %s would replace the input %s; %s", filepath.Join(dir, f.Name), what, hint)
		}
	}
	return nil
}

// loadConfig reads --config and fills the platform and rules of po from
// it, --platform-file and --platform; a flag beats the config file's
// platform. It returns the config file (empty without --config).
func loadConfig(opts *compileOptions, po *plan.Options) (config.File, error) {
	if opts.platform != "" && opts.platformFile != "" {
		return config.File{}, &usageError{fmt.Errorf("use --platform or --platform-file, not both")}
	}
	var f config.File
	if opts.configFile != "" {
		var err error
		if f, err = config.Read(opts.configFile); err != nil {
			return f, err
		}
	}
	var chosen *plan.Platform
	switch {
	case opts.platformFile != "":
		p, err := config.ReadPlatform(opts.platformFile)
		if err != nil {
			return f, err
		}
		chosen = &p
	case opts.platform != "":
		p, err := plan.BuiltinPlatform(opts.platform)
		if err != nil {
			return f, &usageError{err}
		}
		chosen = &p
	}
	o := f.Options(chosen)
	po.Platform, po.Rules, po.External = o.Platform, o.Rules, o.External
	return f, nil
}

// checkCompileFlags checks the compile flags that need no file: the
// planner, the time limit and the constants' form.
func checkCompileFlags(opts *compileOptions) error {
	if _, err := lookupStrategy("unknown planner", opts.planner); err != nil {
		return err
	}
	if err := checkTimeLimit(opts.timeLimit); err != nil {
		return &usageError{err}
	}
	if err := checkConstants(opts.constants); err != nil {
		return &usageError{err}
	}
	return nil
}

// constantsHelp lists the values of --constants.
func constantsHelp() string {
	return "c (a hex initializer in <prefix>.c, the default), incbin (binary files and an assembler stub, " +
		"<prefix>.constants.S, for GNU as and clang) or embed (binary files and C23 #embed)"
}

// checkConstants rejects a --constants value emit does not know.
func checkConstants(c string) error {
	for _, n := range emit.ConstantsNames {
		if emit.Constants(c) == n {
			return nil
		}
	}
	return fmt.Errorf("--constants must be c, incbin or embed, got %q", c)
}

// checkTimeLimit rejects a --time-limit that leaves no time to search.
func checkTimeLimit(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--time-limit must be positive, got %v", d)
	}
	return nil
}
