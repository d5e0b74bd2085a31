package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/internal/validmodel"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// Environment variables of the differential test (make difftest sets
// them for its long run).
const (
	envDiffModels = "HELIAC_DIFF_MODELS" // how many models (default diffModels, or diffModelsShort with -short)
	envDiffTime   = "HELIAC_DIFF_TIME"   // run for this long instead (a Go duration, e.g. 30m)
	envDiffSeed   = "HELIAC_DIFF_SEED"   // the first model's seed (default 1)
	envDiffKeep   = "HELIAC_DIFF_KEEP"   // where failing models are kept (default a new directory under $TMPDIR)
	// HELIAC_DIFF_RUNTIME=1 also runs each model through heliac's
	// runtime (diffRuntime); make difftest sets it with DIFF_RUNTIME=1.
	envDiffRuntime = "HELIAC_DIFF_RUNTIME"
)

// The number of models of a run without HELIAC_DIFF_MODELS: enough that
// each pattern of the generator comes up many times (under the race
// detector, which make test uses, compiling is about ten times slower).
const (
	diffModels      = 300
	diffModelsRace  = 50
	diffModelsShort = 15
)

// The number of models TestDifferentialRuntime runs through heliac's
// runtime (each is compiled with g++ and linked against TFLM: seconds).
const (
	diffRuntimeModels      = 25 // HELIAC_FULL_SWEEP=1
	diffRuntimeModelsCI    = 3  // make test
	diffRuntimeModelsShort = 4
)

// diffRunSeeds are the input seeds every generated model runs with, each
// for interopInvokes invocations so that state carries over.
var diffRunSeeds = []int{1, 2, 3}

// diffArena is tflm_run's arena for a generated model: far above what any
// needs, far below the default's cost of filling 512 MiB.
const diffArena = 4 << 20

// diffTally is what a run of the differential test covered.
type diffTally struct {
	mu        sync.Mutex
	models    int
	failed    []int64
	inPlace   int // tensors written in place over an input
	overInput int // of those, written over a model input (the default; not with --keep-inputs)
	views     int // view outputs sharing their input's buffer
	blocks    int // of views, slice outputs over their input's block (kernels.Block)
	slots     int // concatenation inputs in their slots of its output (kernels.Slot)
	moved     int // operators the memory order runs elsewhere than listed
	reordered int // models emitted with their operators reordered
	features  validmodel.Features
	keep      string // where failing models are kept, once one fails
	// runtime counts, per diffRuntimeKit name, the models whose outputs
	// heliac's runtime printed and compared; runtimeNotRun those its
	// runner did not run over all the runtime's seeds and invocations.
	runtime, runtimeNotRun map[string]int
	// cmsis counts the models also run on tflm_run_cmsis (the default
	// plan, and one for --kernels cmsis-nn --cpu generic).
	cmsis int
	// stripes is what the stripe differential covered
	// (HELIAC_DIFF_PATCHES, stripeDifferential).
	stripes stripeTally
}

// TestDifferentialTFLM is heliac's differential test against stock TFLM:
// random valid models (internal/validmodel) are compiled as the CLI
// compiles by default with --emit-tflite, and the original and the
// emitted model run in tflm_run over several seeds and invocations; their
// outputs and the digests of every operator's outputs (the trace, keyed by
// tensor, so a reordered model compares) must be equal. A model TFLM does
// not run as generated is a generator bug; one heliac does not compile is
// a heliac bug. Failing models are kept with the command that shows the
// difference. make difftest runs it long (HELIAC_DIFF_MODELS,
// HELIAC_DIFF_TIME, HELIAC_DIFF_SEED).
func TestDifferentialTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	n := diffModels
	switch {
	case testing.Short():
		n = diffModelsShort
	case raceEnabled:
		n = diffModelsRace
	}
	var kits []diffRuntimeKit
	if os.Getenv(envDiffRuntime) == "1" {
		kits = diffRuntimeKits(t, tool)
	}
	runDifferential(t, tool, kits, n)
}

// TestDifferentialRuntime is the differential test through heliac's
// runtime: a few random valid models (-short: diffRuntimeModelsShort,
// else diffRuntimeModels; HELIAC_DIFF_* as for TestDifferentialTFLM) run
// as TestDifferentialTFLM runs them, and also compiled with --runtime
// tflm, built with the harness and run over the same seeds and
// invocations: its output lines must be tflm_run's on the original
// (diffRuntime). make difftest DIFF_RUNTIME=1 runs it long.
func TestDifferentialRuntime(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	kits := diffRuntimeKits(t, tool)
	n := diffRuntimeModelsCI
	switch {
	case testing.Short():
		n = diffRuntimeModelsShort
	case os.Getenv(envFullSweep) != "":
		n = diffRuntimeModels
	}
	runDifferential(t, tool, kits, n)
}

// diffRuntimeKit is one way the differential test runs heliac's runtime:
// the plan's kernel options, the harness built against a kernel library,
// and the runner (that library under TFLM's MicroInterpreter) whose
// outputs the runtime must print.
type diffRuntimeKit struct {
	name    string
	kernels runtimeKernels
	kit     *harnessKit
	tool    string
}

// diffRuntimeKits are the runtime's runs of each model: the reference
// kernels' plan against tflm_run (tool), and, where ../shared has the host
// CMSIS-NN library and tflm_run_cmsis, the default plan linked with
// CMSIS-NN's portable kernels against tflm_run_cmsis (its per-channel
// multipliers and kernel sums computed by heliac and checked at init).
func diffRuntimeKits(t *testing.T, tool string) []diffRuntimeKit {
	kits := []diffRuntimeKit{{name: "reference", kernels: referenceKernels, kit: needHarnessKit(t, hostReference), tool: tool}}
	cmsis := tflmrun.Tool(cmsisRunners[0].name)
	if cmsis == "" {
		return kits
	}
	if _, err := os.Stat(hostCMSISNN.archive(filepath.Join(corpus.SharedDir(), "tflm"))); err != nil {
		return kits
	}
	return append(kits, diffRuntimeKit{name: "CMSIS-NN", kernels: runtimeKernels{}, kit: needHarnessKit(t, hostCMSISNN), tool: cmsis})
}

// runDifferential runs the differential test on n models (or as the
// HELIAC_DIFF_* variables say), through heliac's runtime too with each of
// kits, and logs the tally.
func runDifferential(t *testing.T, tool string, kits []diffRuntimeKit, n int) {
	if s := os.Getenv(envDiffModels); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, envDiffModels)
		n = v
	}
	var deadline time.Time
	if s := os.Getenv(envDiffTime); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, envDiffTime)
		deadline = time.Now().Add(d)
		if os.Getenv(envDiffModels) == "" {
			n = 1 << 30
		}
	}
	first := int64(1)
	if s := os.Getenv(envDiffSeed); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, envDiffSeed)
		first = v
	}
	tally := &diffTally{runtime: map[string]int{}, runtimeNotRun: map[string]int{}}
	// Workers take seeds in turn until n models ran or the time is up
	// (parallel subtests would all be started before any ran).
	var next sync.Mutex
	i := 0
	take := func() (int64, bool) {
		next.Lock()
		defer next.Unlock()
		if i >= n || (!deadline.IsZero() && time.Now().After(deadline)) {
			return 0, false
		}
		i++
		return first + int64(i-1), true
	}
	t.Run("models", func(t *testing.T) {
		var wg sync.WaitGroup
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seed, ok := take(); ok; seed, ok = take() {
					t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { differential(t, tool, kits, seed, tally) })
				}
			}()
		}
		wg.Wait()
	})
	f := tally.features
	sort.Slice(tally.failed, func(i, j int) bool { return tally.failed[i] < tally.failed[j] })
	t.Logf("differential test: %d models from seed %d, %d failed %v; %d of them also on %s (the default plan and --kernels cmsis-nn --cpu generic)\n"+
		"  heliac: %d tensors written in place (%d over a model input: the default, --keep-inputs on one model in three), %d views sharing their input's buffer (%d slices' blocks, %d concatenation inputs in their slots: exact-overlap copies), %d operators moved by the memory order (%d models reordered)\n"+
		"  models: %d operators, %d writing their own input, %d second writers, %d views (%d read after their input is written again), "+
		"%d convolutions/pools, %d pads, %d broadcasts, %d VAR_HANDLEs (%d without a container; %d shared names with and without one), "+
		"%d is_variable tensors, %d CALL_ONCE, %d IF, %d WHILE, %d INT8 operators, "+
		"%d slices (%d of contiguous blocks), %d concatenations of their results, %d row-local CNN segments (%d INT8)",
		tally.models, first, len(tally.failed), tally.failed, tally.cmsis, tflmrun.CMSISNN,
		tally.inPlace, tally.overInput, tally.views, tally.blocks, tally.slots, tally.moved, tally.reordered,
		f.Ops, f.SelfWrites, f.SecondWriters, f.Views, f.StaleViews, f.Windows, f.Pads, f.Broadcasts,
		f.VarHandles, f.NoContainer, f.SharedNames, f.VarTensors, f.CallOnce, f.Ifs, f.Whiles, f.Int8,
		f.Slices, f.BlockSlices, f.Concats, f.CNNSegments, f.CNNInt8)
	if os.Getenv(envDiffPatches) == "1" {
		t.Log(tally.stripes.text())
	}
	for _, k := range kits {
		t.Logf("heliac's runtime with the %s kernels: %d models compared with %s's outputs, %d skipped (%s fails on them with some seed)",
			k.name, tally.runtime[k.name], filepath.Base(k.tool), tally.runtimeNotRun[k.name], filepath.Base(k.tool))
	}
}

// diffRegressionSeeds are seeds on which the differential test once found
// a bug, run by every run of the suite whatever its size (make test runs
// fewer models under the race detector):
//
//   - 240: the memory order prepared a VAR_HANDLE without a container
//     before one with a container, of another shared_name; TFLM crashes
//     (signal 11) on such a model.
//   - 113: a plan for every kernel build, its tensors placed before the
//     kernel scratch (plan.Options.ScratchAfterTensors), recorded as its
//     lower bound the peak of its in-place groups' whole blocks, 32 bytes
//     above the bytes they hold (the verifier's HeightMismatch).
//   - 4000119: an alias group with two members over the same bytes whose
//     lifetimes leave a gap; the plan's shapes merged them over the gap,
//     and its lower bound (2,992 B) exceeded the bytes live (2,848 B).
//     Heliac refused the model (exit 4) with every kernel library, the
//     reference kernels included, since before this session.
var diffRegressionSeeds = []int64{240, 113, 4000119}

// TestDifferentialTFLMRegressions runs the differential test on
// diffRegressionSeeds.
func TestDifferentialTFLMRegressions(t *testing.T) {
	tool := tflmrun.Require(t)
	tally := &diffTally{runtime: map[string]int{}, runtimeNotRun: map[string]int{}}
	for _, seed := range diffRegressionSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { differential(t, tool, nil, seed, tally) })
	}
}

// differential checks the model of one seed, through heliac's runtime
// too with each of kits.
func differential(t *testing.T, tool string, kits []diffRuntimeKit, seed int64, tally *diffTally) {
	m, features := validmodel.Generate(seed)
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err, "seed %d: encode", seed)
	failed := true
	defer func() {
		tally.mu.Lock()
		defer tally.mu.Unlock()
		tally.models++
		tally.features.Add(features)
		if failed {
			tally.failed = append(tally.failed, seed)
		}
	}()

	// The CLI's default (--kernels any: a plan every kernel library
	// computes the outputs with), here on tflm_run's 64-bit pointers, whose
	// in-place writes may take model inputs' bytes: tflm_run fills the
	// inputs before every invocation, as such a plan requires. One model
	// in three with --keep-inputs.
	cfg := diffConfig(t, seed, "", "")
	out, err := driver.Compile(context.Background(), data, cfg)
	if err != nil {
		dir := tally.keepModels(t, seed, data, nil)
		t.Fatalf("seed %d: heliac does not compile a valid model (kept in %s): %v", seed, dir, err)
	}
	tally.mu.Lock()
	for _, lt := range out.Lifetimes.Tensors {
		switch {
		case lt.InPlace != nil:
			tally.inPlace++
			if lt.InPlace.Input.Subgraph == 0 && slices.Contains(m.Subgraphs[0].Inputs, lt.InPlace.Input.Tensor) {
				tally.overInput++
			}
		case lt.AliasOf != nil:
			tally.views++
		}
		if lt.Copy != nil && lt.Copy.Contract.Overlap == kernels.Block {
			tally.blocks++
		}
		if lt.Copy != nil && lt.Copy.Contract.Overlap == kernels.Slot {
			tally.slots++
		}
	}
	tally.moved += out.Lifetimes.Schedule.Moved()
	if out.TFLite.Reordered {
		tally.reordered++
	}
	tally.mu.Unlock()

	dir := t.TempDir()
	orig := filepath.Join(dir, "model.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	masked := resourceTensors(m)
	// The default plan on the reference kernels and on CMSIS-NN's
	// portable C, then a plan for CMSIS-NN's portable path alone
	// (--kernels cmsis-nn --cpu generic --tflm-target host64) on it.
	runs := []diffRun{{tool, cfg, out}}
	if cmsis := tflmrun.Tool(tflmrun.CMSISNN); cmsis != "" {
		ccfg := diffConfig(t, seed, kernels.CMSISNN, kernels.GenericCPU)
		cout, err := driver.Compile(context.Background(), data, ccfg)
		if err != nil {
			dir := tally.keepModels(t, seed, data, nil)
			t.Fatalf("seed %d: heliac --kernels cmsis-nn --cpu generic does not compile a valid model (kept in %s): %v", seed, dir, err)
		}
		runs = append(runs, diffRun{cmsis, cfg, out}, diffRun{cmsis, ccfg, cout})
		tally.mu.Lock()
		tally.cmsis++
		tally.mu.Unlock()
	}
	for _, r := range runs {
		diff, err := compareTFLM(r.tool, dir, orig, r.out.TFLite.Data, masked)
		require.NoError(t, err, "seed %d", seed)
		if strings.HasPrefix(diff, diffGenerator) {
			kept := tally.keepModels(t, seed, data, nil)
			t.Fatalf("seed %d: %s: %s (kept in %s)", seed, filepath.Base(r.tool), diff, kept)
		}
		if diff != "" {
			kept := tally.keepModels(t, seed, data, r.out.TFLite.Data)
			t.Fatalf("seed %d: %s, kernels %s: %s\n  models kept in %s (run %s --trace --invokes %d on seed%d.tflite and seed%d.heliac.tflite)\n  %s",
				seed, filepath.Base(r.tool), r.cfg.Kernels, diff, kept, r.tool, interopInvokes, seed, seed, diagnose(t, r.tool, dir, data, r.cfg, masked))
		}
	}
	for _, k := range kits {
		diffRuntime(t, k, seed, data, orig, tally)
	}
	if os.Getenv(envDiffPatches) == "1" {
		stripeDifferential(t, tool, seed, m, data, orig, out.PlanJSON, tally)
	}
	failed = false
}

// diffRun is one comparison of the differential test: a runner, and the
// model heliac emitted with a configuration.
type diffRun struct {
	tool string
	cfg  driver.Config
	out  *driver.Output
}

// diffConfig is the CLI's configuration for a generated model: --emit-tflite
// with the kernels and CPU named ("" for the defaults), kernel scratch on
// tflm_run's 64-bit pointers, and --keep-inputs on one seed in three.
func diffConfig(t *testing.T, seed int64, kernelsName, cpu string) driver.Config {
	t.Helper()
	opts := heliac.Options{Name: fmt.Sprintf("diff_%d", seed), Version: "test", EmitTFLite: true, Kernels: kernelsName, CPU: cpu,
		KeepInputs: seed%3 == 0}
	if cpu == kernels.GenericCPU {
		opts.TFLMTarget = tflmarena.Host64.Name
	}
	cfg, err := opts.Config()
	require.NoError(t, err)
	cfg.Target.PointerSize = 8
	return cfg
}

// diffRuntime compiles a model (data, written at orig) that TFLM runs with
// --runtime tflm for the host and k's kernels, builds it with k's harness
// and requires its output lines to be k's runner's on the original for
// each of diffRunSeeds, interopInvokes invocations each.
func diffRuntime(t *testing.T, k diffRuntimeKit, seed int64, data []byte, orig string, tally *diffTally) {
	name := fmt.Sprintf("diff_%d", seed)
	cfg := runtimeConfig(t, name, k.kernels)
	kit, tool := k.kit, k.tool
	out, err := driver.Compile(context.Background(), data, cfg)
	if err != nil {
		// The runtime refuses only what TFLM cannot run (issue 34).
		kept := tally.keepModels(t, seed, data, nil)
		t.Fatalf("seed %d: heliac does not compile --runtime tflm for a model TFLM runs (kept in %s): %v", seed, kept, err)
	}
	dir := t.TempDir()
	exe, err := kit.build(dir, cfg.Prefix, "backend_heliac.c", writeFiles(t, dir, out.CFiles), nil)
	if err != nil {
		kept := tally.keepModels(t, seed, data, nil)
		t.Fatalf("seed %d: the runtime does not build (kept in %s): %s", seed, kept, firstErrorLine(err.Error()))
	}
	for _, rs := range diffRunSeeds {
		want, err := oracle(tool, orig, rs, interopInvokes, diffArena)
		require.NoError(t, err, "seed %d", seed)
		if e := want.error(); e != "" {
			tally.mu.Lock()
			tally.runtimeNotRun[k.name]++
			tally.mu.Unlock()
			return
		}
		got, err := kit.runHarness(exe, rs, interopInvokes, time.Minute)
		if err == nil && got.error() != "" {
			err = fmt.Errorf("%s", got.error())
		}
		if err != nil {
			kept := tally.keepModels(t, seed, data, nil)
			t.Fatalf("seed %d: heliac's runtime with the %s kernels fails where %s runs (--seed %d; kept in %s): %v", seed, k.name, filepath.Base(tool), rs, kept, err)
		}
		if d := firstDifference(want, got); d != "" {
			kept := tally.keepModels(t, seed, data, nil)
			t.Fatalf("seed %d: heliac's runtime with the %s kernels differs from %s (--seed %d; kept in %s): %s", seed, k.name, filepath.Base(tool), rs, kept, d)
		}
	}
	tally.mu.Lock()
	tally.runtime[k.name]++
	tally.mu.Unlock()
}

// diffGenerator starts compareTFLM's report of an original model TFLM
// does not run.
const diffGenerator = "generator bug"

// compareTFLM runs the original model and heliac's (written into dir) in
// tflm_run over diffRunSeeds and returns the first difference, or "".
func compareTFLM(tool, dir, orig string, heliac []byte, masked map[string]bool) (string, error) {
	mine := filepath.Join(dir, "heliac.tflite")
	if err := os.WriteFile(mine, heliac, 0o644); err != nil {
		return "", err
	}
	for _, rs := range diffRunSeeds {
		opts := tflmrun.Options{Seed: rs, Invokes: interopInvokes, ArenaBytes: diffArena, Trace: true, Timeout: 30 * time.Second}
		want, err := tflmrun.Run(context.Background(), tool, orig, opts)
		if err != nil {
			return "", err
		}
		if !want.OK() {
			return fmt.Sprintf("%s: TFLM does not run the generated model: %s", diffGenerator, want.Error()), nil
		}
		got, err := tflmrun.Run(context.Background(), tool, mine, opts)
		if err == nil && !got.OK() {
			err = fmt.Errorf("%s", got.Error())
		}
		if err != nil {
			return fmt.Sprintf("TFLM does not run heliac's model (--seed %d): %v", rs, err), nil
		}
		if d := diffLines(want.Outputs(), got.Outputs()); d != "" {
			return fmt.Sprintf("outputs differ with heliac's plan (--seed %d):\n%s", rs, d), nil
		}
		if d := diffLines(traceLines(want, masked), traceLines(got, masked)); d != "" {
			return fmt.Sprintf("the trace differs with heliac's plan (--seed %d):\n%s", rs, d), nil
		}
	}
	return "", nil
}

// diagnose compiles a failing model again without views sharing their
// input's buffer, and in the model's own operator order, and says which
// makes TFLM's runs agree: a hint at the cause for whoever reads the
// failure.
func diagnose(t *testing.T, tool, dir string, data []byte, cfg driver.Config, masked map[string]bool) string {
	t.Helper()
	orig := filepath.Join(dir, "model.tflite")
	agrees := func(change func(*driver.Config)) bool {
		c := cfg
		change(&c)
		out, err := driver.Compile(context.Background(), data, c)
		if err != nil {
			return false
		}
		d, err := compareTFLM(tool, dir, orig, out.TFLite.Data, masked)
		return err == nil && d == ""
	}
	noAlias := agrees(func(c *driver.Config) { c.Liveness.NoAlias = true })
	model := agrees(func(c *driver.Config) { c.Schedule = driver.ScheduleModel })
	both := agrees(func(c *driver.Config) { c.Liveness.NoAlias = true; c.Schedule = driver.ScheduleModel })
	switch {
	case noAlias && model:
		return "hint: the runs agree with views in buffers of their own (Liveness.NoAlias) and, apart, in the model's operator order"
	case noAlias:
		return "hint: the runs agree with views in buffers of their own (Liveness.NoAlias): a view shares bytes that change while it is read"
	case model:
		return "hint: the runs agree in the model's operator order (ScheduleModel): the memory order moved an operator it must not"
	case both:
		return "hint: the runs agree only with views in buffers of their own and in the model's operator order"
	}
	return "hint: the runs differ even with views in buffers of their own and in the model's order: not the plan's aliasing or order (the emitted model itself?)"
}

// resourceTensors returns the trace key prefixes ("<subgraph>.<tensor>.")
// of RESOURCE tensors: a handle holds the variable's index in TFLM's
// table, which follows the order TFLM prepares VAR_HANDLEs in, which a
// reordered model may change.
func resourceTensors(m *graph.Model) map[string]bool {
	out := map[string]bool{}
	for s, sg := range m.Subgraphs {
		for i, tn := range sg.Tensors {
			if tn.Type == graph.Resource {
				out[fmt.Sprintf("%d.%d.", s, i)] = true
			}
		}
	}
	return out
}

// traceLines returns a run's "trace.<k>.<subgraph>.<tensor>.<n>=digest"
// lines, sorted, but those of masked tensors.
func traceLines(r *tflmrun.Result, masked map[string]bool) []string {
	var out []string
	for k, v := range r.Values {
		rest, ok := strings.CutPrefix(k, "trace.")
		if !ok {
			continue
		}
		if _, key, ok := strings.Cut(rest, "."); ok {
			parts := strings.SplitN(key, ".", 3)
			if len(parts) == 3 && masked[parts[0]+"."+parts[1]+"."] {
				continue
			}
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// diffLines returns the first few lines in which two sorted lists of
// key=value lines differ, or "" when they are equal.
func diffLines(want, got []string) string {
	wm, gm := map[string]string{}, map[string]string{}
	var keys []string
	for _, l := range want {
		k, v, _ := strings.Cut(l, "=")
		wm[k] = v
		keys = append(keys, k)
	}
	for _, l := range got {
		k, v, _ := strings.Cut(l, "=")
		gm[k] = v
		if _, ok := wm[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	n := 0
	for _, k := range keys {
		w, wok := wm[k]
		g, gok := gm[k]
		if wok && gok && w == g {
			continue
		}
		if n == 8 {
			b.WriteString("  …\n")
			break
		}
		n++
		switch {
		case !gok:
			fmt.Fprintf(&b, "  %s: TFLM's plan %s, heliac's: absent\n", k, w)
		case !wok:
			fmt.Fprintf(&b, "  %s: TFLM's plan: absent, heliac's %s\n", k, g)
		default:
			fmt.Fprintf(&b, "  %s: TFLM's plan %s, heliac's %s\n", k, w, g)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// keepModels writes a failing seed's model (and heliac's, when given) to
// HELIAC_DIFF_KEEP or a directory of the run that outlives the test, and
// returns the directory.
func (tally *diffTally) keepModels(t *testing.T, seed int64, orig, mine []byte) string {
	t.Helper()
	tally.mu.Lock()
	if tally.keep == "" {
		tally.keep = os.Getenv(envDiffKeep)
		if tally.keep == "" {
			dir, err := os.MkdirTemp("", "heliac-diff-")
			if err != nil {
				tally.mu.Unlock()
				t.Fatal(err)
			}
			tally.keep = dir
		}
	}
	dir := tally.keep
	tally.mu.Unlock()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	base := filepath.Join(dir, fmt.Sprintf("seed%d", seed))
	require.NoError(t, os.WriteFile(base+".tflite", orig, 0o644))
	if mine != nil {
		require.NoError(t, os.WriteFile(base+".heliac.tflite", mine, 0o644))
	}
	return dir
}
