package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
)

// runtimeSeeds and runtimeInvokes: every model runs with each seed, each
// run invoking it runtimeInvokes times (state carries over).
var (
	runtimeSeeds   = []int{1, 2, 3}
	runtimeInvokes = 3
)

// runtimeModel is a model the runtime tests run.
type runtimeModel struct {
	name string // the corpus file, or the bundled model's base name
	path string
}

// runtimeModels are the bundled models with -short, else every corpus
// model TFLM runs (status ok in ../shared/bench/tflm-reference.tsv).
func runtimeModels(t *testing.T) []runtimeModel {
	var out []runtimeModel
	if testing.Short() {
		for _, f := range testModels(t) {
			out = append(out, runtimeModel{filepath.Base(f), f})
		}
		return out
	}
	dir := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	for _, r := range rows {
		if r["status"] == "ok" {
			out = append(out, runtimeModel{r["model"], filepath.Join(dir, "corpus", r["model"])})
		}
	}
	return out
}

// runtimeConfig is the CLI's configuration with --runtime tflm for the
// host (64-bit pointers: tflm_run's and the host library's) and
// --constants incbin (hex initializers of megabytes compile slowly).
func runtimeConfig(t *testing.T, name string) driver.Config {
	opts := heliac.Options{Name: emit.ModelName(name), Kernels: "tflm-reference", Constants: emit.ConstantsIncbin,
		TFLMTarget: "host64", Runtime: string(emit.RuntimeTFLM), Version: "test"}
	cfg, err := opts.Config()
	require.NoError(t, err)
	cfg.Prefix = emit.CPrefix(emit.ModelName(name))
	cfg.Target.PointerSize = 8
	return cfg
}

// TestRuntimeBitExact is issue 22's first done-when check: for every
// corpus model TFLM runs (-short: the bundled models), heliac's runtime
// (--runtime tflm, built for the host against ../shared/tflm) prints
// exactly tflm_run's output lines on the original model, for seeds 1..3
// with three invocations each. It logs one line per model: bit-exact,
// differs (the first differing line), or the build or init error.
func TestRuntimeBitExact(t *testing.T) {
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t)
	arenas := oracleArenas(t)
	var table resultTable
	start := time.Now()
	t.Run("models", func(t *testing.T) {
		for _, m := range runtimeModels(t) {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				result, err := runtimeCheck(t, kit, tool, m, arenas[emit.ModelName(m.name)])
				table.set(m.name, result)
				if err != nil {
					t.Error(err)
				}
			})
		}
	})
	table.log(t, fmt.Sprintf("heliac's runtime vs tflm_run, seeds %v x %d invocations, %v", runtimeSeeds, runtimeInvokes, time.Since(start).Round(time.Second)))
}

// runtimeCheck compiles, builds and runs one model against tflm_run and
// returns its table entry, with an error when it is not bit-exact.
func runtimeCheck(t *testing.T, kit *harnessKit, tool string, m runtimeModel, arena int64) (string, error) {
	data, err := os.ReadFile(m.path)
	require.NoError(t, err)
	cfg := runtimeConfig(t, m.name)
	out, err := driver.Compile(context.Background(), data, cfg)
	if err != nil {
		return "compile error: " + oneLine(err.Error()), err
	}
	dir := t.TempDir()
	srcs := writeFiles(t, dir, out.CFiles)
	exe, err := kit.build(dir, cfg.Prefix, "backend_heliac.c", srcs, nil)
	if err != nil {
		return "build error: " + firstErrorLine(err.Error()), err
	}
	for _, seed := range runtimeSeeds {
		want, err := oracle(tool, m.path, seed, runtimeInvokes, arena)
		require.NoError(t, err)
		require.Empty(t, want.error(), "tflm_run runs %s", m.name)
		got, err := kit.runHarness(exe, seed, runtimeInvokes, time.Minute)
		if err != nil {
			return "run error: " + oneLine(err.Error()), err
		}
		if e := got.error(); e != "" {
			return "error: " + oneLine(e), fmt.Errorf("seed %d: %s", seed, e)
		}
		if d := firstDifference(want, got); d != "" {
			if fillDependent[m.name] {
				return "differs (reads a tensor nothing writes: depends on the arena's contents): " + d, nil
			}
			return fmt.Sprintf("differs, seed %d: %s", seed, d), fmt.Errorf("seed %d: %s", seed, d)
		}
	}
	return "bit-exact", nil
}

// TestRuntimeHarnessTFLMBackend checks the harness itself: built with its
// TFLM backend (TFLM's MicroInterpreter running the original model from
// the C array heliac writes), it prints exactly tflm_run's output lines
// for seeds 1..3: -short on an int8 model and a float one with control
// flow, else also on int16 inputs (the signal library), a CNN, an LSTM
// and the model whose outputs depend on the arena's contents (the backend
// fills its arena as tflm_run does).
func TestRuntimeHarnessTFLMBackend(t *testing.T) {
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t)
	models := []runtimeModel{}
	for _, f := range testModels(t) {
		switch filepath.Base(f) {
		case "hello_world_int8.tflite", "multi_subgraphs_while.tflite":
			models = append(models, runtimeModel{filepath.Base(f), f})
		}
	}
	if !testing.Short() {
		dir := corpus.Require(t)
		for _, f := range []string{"tflite-micro/audio_preprocessor_int8.tflite", "tflite-micro/person_detect.tflite",
			"tflite-micro/trained_lstm.tflite", "litert/add_shared_tensors.bin"} {
			models = append(models, runtimeModel{f, filepath.Join(dir, "corpus", f)})
		}
	}
	arenas := oracleArenas(t)
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(m.path)
			require.NoError(t, err)
			cfg := testConfig(emit.ModelName(m.name))
			cfg.Prefix = emit.CPrefix(emit.ModelName(m.name))
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			dir := t.TempDir()
			writeFiles(t, dir, out.CFiles[:1]) // the header: the array's header includes it
			srcs := writeFiles(t, dir, emit.TFLiteC(cfg.Prefix, out.Plan, out.Meta, data))
			exe, err := kit.build(dir, cfg.Prefix, "backend_tflm.cc", srcs, nil)
			require.NoError(t, err)
			for _, seed := range runtimeSeeds {
				want, err := oracle(tool, m.path, seed, runtimeInvokes, arenas[emit.ModelName(m.name)])
				require.NoError(t, err)
				got, err := kit.runHarness(exe, seed, runtimeInvokes, time.Minute)
				require.NoError(t, err)
				require.Empty(t, got.error())
				assert.Empty(t, firstDifference(want, got), "%s seed %d", m.name, seed)
				assert.NotEmpty(t, got.outputLines())
			}
		})
	}
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

// firstErrorLine picks the compiler's first "error:" line from a build
// failure, or its first line.
func firstErrorLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "error:") || strings.Contains(l, "undefined reference") {
			return strings.TrimSpace(l)
		}
	}
	return oneLine(s)
}

// TestRuntimeSeesAClobber is the test of the test: each bundled model's
// plan corrupted so that an operator's output lands on a tensor read
// after the write (clobber, as TestTFLMSeesAClobber does), emitted
// without the verifier, then run by heliac's runtime. Outputs that differ
// from tflm_run's for some seed, or a failed run, show that the
// comparison sees a broken plan; it must on some model. Outputs can hide a
// clobber (they saturate, or the clobbered value is not used again the
// way the plan says): those models are logged, not failed.
func TestRuntimeSeesAClobber(t *testing.T) {
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t)
	arenas := oracleArenas(t)
	var (
		table resultTable
		mu    sync.Mutex
		bites int
	)
	bit := func(name, result string) {
		mu.Lock()
		defer mu.Unlock()
		bites++
		table.set(name, result)
	}
	t.Run("models", func(t *testing.T) {
		for _, f := range testModels(t) {
			name := filepath.Base(f)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			cfg := runtimeConfig(t, name)
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			bad, what, readLater := clobber(out.Model, out.Plan)
			if bad == nil || !readLater {
				table.set(name, "nothing to clobber")
				continue
			}
			growArenas(bad)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				files, err := emit.C(out.Model, bad, emit.COptions{Prefix: cfg.Prefix, Meta: out.Meta, Constants: cfg.Constants, Runtime: cfg.Runtime})
				require.NoError(t, err, "emit writes what it is given; only the verifier would refuse it")
				dir := t.TempDir()
				exe, err := kit.build(dir, cfg.Prefix, "backend_heliac.c", writeFiles(t, dir, files), nil)
				require.NoError(t, err)
				for _, seed := range runtimeSeeds {
					want, err := oracle(tool, f, seed, runtimeInvokes, arenas[emit.ModelName(name)])
					require.NoError(t, err)
					got, err := kit.runHarness(exe, seed, runtimeInvokes, time.Minute)
					switch {
					case err != nil:
						bit(name, what+": run failed: "+oneLine(err.Error()))
						return
					case got.error() != "":
						bit(name, what+": "+oneLine(got.error()))
						return
					}
					if d := firstDifference(want, got); d != "" {
						bit(name, fmt.Sprintf("%s: seed %d %s", what, seed, d))
						return
					}
				}
				table.set(name, what+": outputs unchanged (hidden)")
			})
		}
	})
	table.log(t, "heliac's runtime on a clobbered plan")
	assert.NotZero(t, bites, "a clobbered plan changes the runtime's outputs on some bundled model")
}
