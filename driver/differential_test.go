package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// each pattern of the generator comes up many times.
const (
	diffModels      = 300
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
	if testing.Short() {
		n = diffModelsShort
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
	t.Run("models", func(t *testing.T) {
		for i := 0; i < n; i++ {
			if !deadline.IsZero() && time.Now().After(deadline) {
				break
			}
			seed := first + int64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				differential(t, tool, seed, tally)
			})
		}
	})
	f := tally.features
	sort.Slice(tally.failed, func(i, j int) bool { return tally.failed[i] < tally.failed[j] })
	t.Logf("differential test: %d models from seed %d, %d failed %v\n"+
		"  heliac: %d tensors written in place, %d views sharing their input's buffer, %d operators moved by the memory order (%d models reordered)\n"+
		"  models: %d operators, %d writing their own input, %d second writers, %d views (%d read after their input is written again), "+
		"%d convolutions/pools, %d pads, %d broadcasts, %d VAR_HANDLEs (%d without a container; %d shared names with and without one), "+
		"%d is_variable tensors, %d CALL_ONCE, %d IF, %d WHILE",
		tally.models, first, len(tally.failed), tally.failed,
		tally.inPlace, tally.views, tally.moved, tally.reordered,
		f.Ops, f.SelfWrites, f.SecondWriters, f.Views, f.StaleViews, f.Windows, f.Pads, f.Broadcasts,
		f.VarHandles, f.NoContainer, f.SharedNames, f.VarTensors, f.CallOnce, f.Ifs, f.Whiles)
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
		dir := keepModels(t, seed, data, nil)
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
	orig, mine := filepath.Join(dir, "model.tflite"), filepath.Join(dir, "heliac.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
	masked := resourceTensors(m)
	for _, rs := range diffRunSeeds {
		opts := tflmrun.Options{Seed: rs, Invokes: interopInvokes, ArenaBytes: diffArena, Trace: true, Timeout: 30 * time.Second}
		want, err := tflmrun.Run(context.Background(), tool, orig, opts)
		require.NoError(t, err, "seed %d", seed)
		if !want.OK() {
			kept := keepModels(t, seed, data, nil)
			t.Fatalf("seed %d: generator bug: TFLM does not run the generated model (kept in %s): %s", seed, kept, want.Error())
		}
		got, err := tflmrun.Run(context.Background(), tool, mine, opts)
		if err == nil && !got.OK() {
			err = fmt.Errorf("%s", got.Error())
		}
		if err != nil {
			kept := keepModels(t, seed, data, out.TFLite.Data)
			t.Fatalf("seed %d: TFLM does not run heliac's model (run seed %d; models kept in %s): %v", seed, rs, kept, err)
		}
		if diff := diffLines(want.Outputs(), got.Outputs()); diff != "" {
			kept := keepModels(t, seed, data, out.TFLite.Data)
			t.Fatalf("seed %d: outputs differ with heliac's plan (run %s --trace --seed %d --invokes %d on both models in %s):\n%s",
				seed, tool, rs, interopInvokes, kept, diff)
		}
		if diff := diffLines(traceLines(want, masked), traceLines(got, masked)); diff != "" {
			kept := keepModels(t, seed, data, out.TFLite.Data)
			t.Fatalf("seed %d: the trace differs with heliac's plan (run %s --trace --seed %d --invokes %d on both models in %s):\n%s",
				seed, tool, rs, interopInvokes, kept, diff)
		}
	}
	failed = false
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
	return b.String()
}

// keepModels writes a failing seed's model (and heliac's, when given) to
// HELIAC_DIFF_KEEP or a new directory that outlives the test, and returns
// the directory.
func keepModels(t *testing.T, seed int64, orig, mine []byte) string {
	t.Helper()
	dir := os.Getenv(envDiffKeep)
	if dir == "" {
		var err error
		dir, err = os.MkdirTemp("", "heliac-diff-")
		require.NoError(t, err)
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	base := filepath.Join(dir, fmt.Sprintf("seed%d", seed))
	require.NoError(t, os.WriteFile(base+".tflite", orig, 0o644))
	if mine != nil {
		require.NoError(t, os.WriteFile(base+".heliac.tflite", mine, 0o644))
	}
	return dir
}
