package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/internal/validmodel"
	"github.com/heliac/heliac/tflite"
)

// Environment variables of the differential test (make difftest sets
// them for its long run).
const (
	envDiffModels = "HELIAC_DIFF_MODELS" // how many models (default diffModels, or diffModelsShort with -short)
	envDiffTime   = "HELIAC_DIFF_TIME"   // run for this long instead (a Go duration, e.g. 30m)
	envDiffSeed   = "HELIAC_DIFF_SEED"   // the first model's seed (default 1)
	envDiffKeep   = "HELIAC_DIFF_KEEP"   // where failing models are kept (default a new directory under $TMPDIR)
)

// The number of models of a run without HELIAC_DIFF_MODELS: enough that
// each pattern of the generator comes up many times (under the race
// detector, which make test uses, compiling is about ten times slower).
const (
	diffModels      = 300
	diffModelsRace  = 100
	diffModelsShort = 15
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
	views     int // view outputs sharing their input's buffer
	moved     int // operators the memory order runs elsewhere than listed
	reordered int // models emitted with their operators reordered
	features  validmodel.Features
	keep      string // where failing models are kept, once one fails
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
	tally := &diffTally{}
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
					t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { differential(t, tool, seed, tally) })
				}
			}()
		}
		wg.Wait()
	})
	f := tally.features
	sort.Slice(tally.failed, func(i, j int) bool { return tally.failed[i] < tally.failed[j] })
	t.Logf("differential test: %d models from seed %d, %d failed %v\n"+
		"  heliac: %d tensors written in place, %d views sharing their input's buffer, %d operators moved by the memory order (%d models reordered)\n"+
		"  models: %d operators, %d writing their own input, %d second writers, %d views (%d read after their input is written again), "+
		"%d convolutions/pools, %d pads, %d broadcasts, %d VAR_HANDLEs (%d without a container; %d shared names with and without one), "+
		"%d is_variable tensors, %d CALL_ONCE, %d IF, %d WHILE, %d INT8 operators",
		tally.models, first, len(tally.failed), tally.failed,
		tally.inPlace, tally.views, tally.moved, tally.reordered,
		f.Ops, f.SelfWrites, f.SecondWriters, f.Views, f.StaleViews, f.Windows, f.Pads, f.Broadcasts,
		f.VarHandles, f.NoContainer, f.SharedNames, f.VarTensors, f.CallOnce, f.Ifs, f.Whiles, f.Int8)
}

// diffRegressionSeeds are seeds on which the differential test once found
// a bug, run by every run of the suite whatever its size (make test runs
// fewer models under the race detector):
//
//   - 240: the memory order prepared a VAR_HANDLE without a container
//     before one with a container, of another shared_name; TFLM crashes
//     (signal 11) on such a model.
var diffRegressionSeeds = []int64{240}

// TestDifferentialTFLMRegressions runs the differential test on
// diffRegressionSeeds.
func TestDifferentialTFLMRegressions(t *testing.T) {
	tool := tflmrun.Require(t)
	tally := &diffTally{}
	for _, seed := range diffRegressionSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { differential(t, tool, seed, tally) })
	}
}

// differential checks the model of one seed.
func differential(t *testing.T, tool string, seed int64, tally *diffTally) {
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

	cfg := defaultConfig(t)
	cfg.ModelName = fmt.Sprintf("diff_%d", seed)
	cfg.Version = "test"
	cfg.EmitTFLite = true
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
		case lt.AliasOf != nil:
			tally.views++
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
	diff, err := compareTFLM(tool, dir, orig, out.TFLite.Data, masked)
	require.NoError(t, err, "seed %d", seed)
	if strings.HasPrefix(diff, diffGenerator) {
		kept := tally.keepModels(t, seed, data, nil)
		t.Fatalf("seed %d: %s (kept in %s)", seed, diff, kept)
	}
	if diff != "" {
		kept := tally.keepModels(t, seed, data, out.TFLite.Data)
		t.Fatalf("seed %d: %s\n  models kept in %s (run %s --trace --invokes %d on seed%d.tflite and seed%d.heliac.tflite)\n  %s",
			seed, diff, kept, tool, interopInvokes, seed, seed, diagnose(t, tool, dir, data, cfg, masked))
	}
	failed = false
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
