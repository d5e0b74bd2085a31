package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// runnerTool returns the runner called name beside tflm_run, or "" when
// it (or, for a board, QEMU) is not there.
func runnerTool(name string, qemu bool) string {
	if tflmrun.Path() == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(tflmrun.Path()), name)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	if qemu && os.Getenv("QEMU") == "" {
		if _, err := exec.LookPath("qemu-system-arm"); err != nil {
			return ""
		}
	}
	return p
}

// m4Board is what tflm_run_m4_cmsis's board holds (its README): model
// files up to 4 MiB, and arenas up to about 12 MiB beside them.
const (
	m4BoardModel = 4 << 20
	m4BoardArena = 12 << 20
)

// arenaCheck is one figure to check on one runner: the model file runs
// with an arena of a.Bytes, and does not with 16 bytes less (TFLM fails
// to allocate it; where a kernel's Prepare would put a persistent buffer
// over its temporaries, TFLM fails or crashes on them).
type arenaCheck struct {
	model, what, file, tool string
	a                       tflmarena.Arena
	// qemu: the runner is an emulated board.
	qemu bool
	// suffices: only check that the model runs with a.Bytes (a figure
	// for several libraries, at least this one's).
	suffices bool
}

// run runs c and returns what went wrong ("" when nothing did) and the
// outputs of the run at a.Bytes.
func (c arenaCheck) run() (string, map[string]string) {
	n := c.a.Bytes
	limit := 10*time.Second + time.Duration(n>>16)*time.Second
	if c.qemu {
		limit = 20*time.Second + time.Duration(n>>14)*time.Second
	}
	at, o := runOracle(context.Background(), c.tool, c.file, n, limit)
	var errs []string
	switch {
	case at != ran:
		errs = append(errs, fmt.Sprintf("arena %d does not run: %s%s", n, o["error"], o["invoke.0"]))
	case c.suffices:
		return "", o
	default:
		// Piece by piece: the head TFLM planned and its persistent tail.
		if o["planner_max_bytes"] != itoa(c.a.Head) {
			errs = append(errs, fmt.Sprintf("head %s, heliac says %d", o["planner_max_bytes"], c.a.Head))
		}
		if o["tail_bytes"] != itoa(c.a.Tail) {
			errs = append(errs, fmt.Sprintf("tail %s, heliac says %d", o["tail_bytes"], c.a.Tail))
		}
	}
	if less, _ := runOracle(context.Background(), c.tool, c.file, n-16, limit); less == ran {
		errs = append(errs, fmt.Sprintf("arena %d-16 runs too", n))
	}
	return strings.Join(errs, "; "), o
}

// TestTFLMArenaExactCMSISNN is issue 32's done-when check: TFLM's whole
// arena with its CMSIS-NN kernels, on each of CMSIS-NN's code paths. For
// every corpus model TFLM runs, compiled with --kernels cmsis-nn
// --emit-tflite for each runner's CPU and target (--cpu generic
// --tflm-target host64 on tflm_run_cmsis, --cpu cortex-m4 on
// tflm_run_m4_cmsis, --cpu cortex-m55 on tflm_run_m55_cmsis): the
// emitted model runs with exactly heliac's figure and fails to allocate
// with 16 bytes less, with the original model's outputs on that runner;
// the original model under TFLM's own planner likewise; and the runner's
// head and tail are heliac's. The runners keep their planner outside the
// arena, so the figures checked are tflmarena.PlannerOutside's, replayed
// from the Output's heads.
//
// For a handful of models it also checks the default kernels (any): each
// member library's figures are exact on the runner of its code path, and
// the top-level figure (the largest) runs on every runner of the target:
// tflm_run_m55 (reference), tflm_run_m4_cmsis and tflm_run_m55_cmsis on
// cortex-m, tflm_run and tflm_run_cmsis on host64.
//
// QEMU runs take seconds: the runs go to two workers while the main
// goroutine compiles. Boards absent (or QEMU) are logged and skipped.
func TestTFLMArenaExactCMSISNN(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs every TFLM-run corpus model on three CMSIS-NN runners, two of them emulated; skipped with -short")
	}
	tflmrun.Require(t)
	start := time.Now()
	models := tflmModels(t)
	var runners []cmsisRunner
	tools := map[string]string{}
	for _, r := range cmsisRunners {
		if tools[r.name] = runnerTool(r.name, r.qemu); tools[r.name] == "" {
			t.Logf("%s (or qemu-system-arm) not found: cmsis-nn --cpu %s not checked", r.name, r.cpu)
			continue
		}
		runners = append(runners, r)
	}
	if len(runners) == 0 {
		t.Skip("no CMSIS-NN runner")
	}
	tmp := t.TempDir()

	var (
		mu          sync.Mutex
		exact       = map[string]int{} // runner -> figures checked exact
		checked     = map[string]int{}
		outs        = map[outputsOf]map[string]string{}
		jobs        = make(chan func(), 64)
		runTime     = map[string]time.Duration{} // runner -> time its runs took
		compileTime time.Duration
		wg          sync.WaitGroup
	)
	for range 2 {
		go func() {
			for j := range jobs {
				j()
				wg.Done()
			}
		}()
	}
	// Every run reports before the test ends, even one that stops early.
	defer func() {
		wg.Wait()
		close(jobs)
	}()
	check := func(runner string, c arenaCheck, outputs bool) {
		wg.Add(1)
		jobs <- func() {
			t0 := time.Now()
			msg, o := c.run()
			mu.Lock()
			defer mu.Unlock()
			runTime[runner] += time.Since(t0)
			checked[runner]++
			if msg != "" {
				t.Errorf("%s %s on %s: %s", c.model, c.what, runner, msg)
				return
			}
			exact[runner]++
			if outputs {
				outs[outputsOf{runner, c.model, c.what}] = o
			}
		}
	}
	// compile compiles m as o says, with --emit-tflite, and returns the
	// Output, the emitted model (also written to a file) and the Config.
	compile := func(m tflmModel, o heliac.Options) (*driver.Output, *graph.Model, string, driver.Config) {
		t0 := time.Now()
		defer func() { compileTime += time.Since(t0) }()
		data, err := os.ReadFile(m.Path)
		require.NoError(t, err)
		o.EmitTFLite, o.Version = true, "test"
		cfg, err := o.Config()
		require.NoError(t, err)
		cfg.ModelName = emit.ModelName(m.File)
		out, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err, m.File)
		require.NoError(t, out.TFLMArenaErr, m.File)
		em, err := tflite.Load(out.TFLite.Data)
		require.NoError(t, err)
		file := filepath.Join(tmp, fmt.Sprintf("%s_%s_%s_%s", o.TFLMTarget, o.CPU, o.Kernels, strings.ReplaceAll(m.File, "/", "_")))
		require.NoError(t, os.WriteFile(file, out.TFLite.Data, 0o644))
		return out, em, file, cfg
	}
	outside := func(m *graph.Model, head int64, target tflmarena.Target, k tflmarena.Kernels) tflmarena.Arena {
		a, err := tflmarena.ComputeSetup(m, head, target, k, tflmarena.PlannerOutside)
		require.NoError(t, err)
		return a
	}

	// make test checks the emulated boards on a subset (each run takes
	// QEMU seconds); HELIAC_FULL_SWEEP=1 (make cmsis-sweep) every model.
	full := os.Getenv(envFullSweep) == "1"
	for _, m := range models {
		for _, r := range runners {
			if r.qemu && !full && !tflmArenaSubset[m.File] && !slices.Contains(qemuSweepModels, m.File) {
				continue
			}
			if st, err := os.Stat(m.Path); err == nil && r.name == "tflm_run_m4_cmsis" && st.Size() > m4BoardModel {
				t.Logf("%s: larger than %s's board holds", m.File, r.name)
				continue
			}
			out, em, file, cfg := compile(m, heliac.Options{Kernels: kernels.CMSISNN, CPU: r.cpu, TFLMTarget: r.target.Name})
			k := tflmarena.Kernels{Library: cfg.Kernels, CPU: cfg.Target}
			a := out.TFLMArena
			for _, c := range []arenaCheck{
				{model: m.File, what: "original", file: m.Path, a: outside(out.Model, a.Original.Head, r.target, k)},
				{model: m.File, what: "emitted", file: file, a: outside(em, a.Emitted.Head, r.target, k)},
			} {
				if r.name == "tflm_run_m4_cmsis" && c.a.Bytes > m4BoardArena {
					t.Logf("%s %s: arena %d is more than %s's board holds", m.File, c.what, c.a.Bytes, r.name)
					continue
				}
				c.tool, c.qemu = tools[r.name], r.qemu
				check(r.name, c, true)
			}
		}
	}
	anyChecked := checkAnyArenas(t, check, compile, outside)
	wg.Wait()

	// The emitted model computes the original's outputs on each runner
	// (float kernels round differently on each target: compare on one).
	for key, o := range outs {
		what, ok := strings.CutSuffix(key.what, "original")
		emitted := key
		emitted.what = what + "emitted"
		e, found := outs[emitted]
		if !ok || !found || fillDependent[key.model] {
			continue
		}
		for k, v := range o {
			if strings.HasPrefix(k, "output.0.") && e[k] != v {
				t.Errorf("%s %son %s: %s differs between the original and the emitted model", key.model, what, key.runner, k)
			}
		}
	}
	names := make([]string, 0, len(checked))
	for n := range checked {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%s: %d of %d figures exact (runs %s)", n, exact[n], checked[n], runTime[n].Round(time.Second))
	}
	t.Logf("default kernels (any) checked on %d models; compiles %s; wall time %s", anyChecked,
		compileTime.Round(time.Second), time.Since(start).Round(time.Second))
}

// outputsOf names a run whose outputs TestTFLMArenaExactCMSISNN compares:
// the runner, the model and what ran ("original", "emitted",
// "any/<library>/original"...).
type outputsOf struct{ runner, model, what string }

// anyModels are the models the default kernels' figures are checked on:
// ones whose kernels differ between the libraries in scratch (kws),
// kernel sums (ad01, keyword_scrambled's SVDF), LSTM and OpData.
var anyModels = map[string]bool{
	"mlperf-tiny/kws_ref_model.tflite": true, "mlperf-tiny/ad01_int8.tflite": true,
	"tflite-micro/keyword_scrambled.tflite": true, "tflite-micro/trained_lstm_int8.tflite": true,
	"tflite-micro/person_detect.tflite": true,
}

// checkAnyArenas checks the default kernels' (any) figures on anyModels,
// on cortex-m and host64, and returns how many models it checked.
func checkAnyArenas(t *testing.T, check func(string, arenaCheck, bool),
	compile func(tflmModel, heliac.Options) (*driver.Output, *graph.Model, string, driver.Config),
	outside func(*graph.Model, int64, tflmarena.Target, tflmarena.Kernels) tflmarena.Arena) int {
	// The runner of each member library on each target (none for
	// CMSIS-NN's portable code on cortex-m).
	type member struct{ target, kernels string }
	runnerOf := map[member]cmsisRunner{
		{"cortex-m", "tflm-reference"}:    {name: "tflm_run_m55", qemu: true},
		{"cortex-m", "cmsis-nn (dsp)"}:    {name: "tflm_run_m4_cmsis", qemu: true},
		{"cortex-m", "cmsis-nn (mve)"}:    {name: "tflm_run_m55_cmsis", qemu: true},
		{"host64", "tflm-reference"}:      {name: "tflm_run"},
		{"host64", "cmsis-nn (portable)"}: {name: "tflm_run_cmsis"},
	}
	n := 0
	for _, m := range tflmModels(t) {
		if !anyModels[m.File] {
			continue
		}
		n++
		for _, target := range []tflmarena.Target{tflmarena.CortexM, tflmarena.Host64} {
			out, em, file, cfg := compile(m, heliac.Options{TFLMTarget: target.Name})
			libs := cfg.Kernels.Members()
			a := out.TFLMArena
			require.Len(t, a.Members, len(libs), "%s: one figure per library of %s", m.File, cfg.Kernels)
			var top tflmarena.Arena
			var tools []arenaCheck
			for i, lib := range libs {
				k := tflmarena.Kernels{Library: lib, CPU: cfg.Target}
				if isa, ok := lib.Path(); ok {
					k.CPU.ISA = isa
				}
				require.Equal(t, lib.String(), a.Members[i].Kernels)
				mine := outside(em, a.Members[i].Emitted.Head, target, k)
				if mine.Bytes > top.Bytes {
					top = mine
				}
				r, ok := runnerOf[member{target.Name, lib.String()}]
				tool := runnerTool(r.name, r.qemu)
				if !ok || tool == "" {
					continue
				}
				what := "any/" + lib.String()
				check(r.name, arenaCheck{model: m.File, what: what + "/original", file: m.Path, tool: tool, qemu: r.qemu,
					a: outside(out.Model, a.Members[i].Original.Head, target, k)}, true)
				check(r.name, arenaCheck{model: m.File, what: what + "/emitted", file: file, tool: tool, qemu: r.qemu, a: mine}, true)
				tools = append(tools, arenaCheck{model: m.File, what: "any/top", file: file, tool: tool, qemu: r.qemu})
			}
			require.GreaterOrEqual(t, a.Emitted.Bytes, top.Bytes, "%s: the top-level figure is the largest member's", m.File)
			// The top-level figure suffices on every runner.
			for _, c := range tools {
				c.a, c.suffices = top, true
				check(filepath.Base(c.tool), c, false)
			}
		}
	}
	return n
}

// TestTFLMArenaInArenaCMSISNN: the figure the summary, plan.json and the
// C header give is for an application's MicroInterpreter, whose
// GreedyMemoryPlanner lives in the arena (tflmarena.PlannerInArena), not
// for the runners' setup. With --kernels cmsis-nn --cpu generic
// --tflm-target host64 it is exact on TFLM's CMSIS-NN library for x86-64
// (../shared/tflm/lib/host-x86_64-cmsis-nn, built with -DCMSIS_NN):
// hello_world_int8 from its C array allocates and invokes with exactly
// <PREFIX>_TFLM_ARENA_SIZE and fails to allocate with 16 bytes less.
func TestTFLMArenaInArenaCMSISNN(t *testing.T) {
	tflm, lib, gxx, gcc := needHostTFLM(t, "host-x86_64-cmsis-nn")
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	require.NoError(t, err)
	cfg, err := heliac.Options{Kernels: kernels.CMSISNN, CPU: kernels.GenericCPU, TFLMTarget: tflmarena.Host64.Name,
		EmitTFLite: true, Version: "test"}.Config()
	require.NoError(t, err)
	cfg.ModelName = "hello_world_int8"
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	require.NotNil(t, out.TFLMArena, "%v", out.TFLMArenaErr)
	for _, f := range out.Files() {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
	n := out.TFLMArena.Emitted.Bytes
	require.Contains(t, string(out.CFiles[0].Data), fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %du", n))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sized.cc"), []byte(sizedMain), 0o644))
	run(t, dir, gcc, "-std=c11", "-DCMSIS_NN", "-c", "hello_world_int8.tflite.c", "-o", "model.o")
	run(t, dir, gxx, "-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY", "-DCMSIS_NN", "-Wall", "-Werror",
		"-I", filepath.Join(tflm, "include"), "-I.", "sized.cc", "model.o", lib, "-lm", "-o", "sized")
	assert.Equal(t, "allocated 1\ninvoked 1\n", run(t, dir, filepath.Join(dir, "sized"), strconv.FormatInt(n, 10)))
	less, err := exec.Command(filepath.Join(dir, "sized"), strconv.FormatInt(n-16, 10)).Output()
	assert.Error(t, err, "an arena of %d B", n-16)
	assert.Equal(t, "allocated 0\n", string(less))
	t.Logf("hello_world_int8, cmsis-nn (portable), host64, planner in the arena: %d B (head %d, tail %d)",
		n, out.TFLMArena.Emitted.Head, out.TFLMArena.Emitted.Tail)
}
