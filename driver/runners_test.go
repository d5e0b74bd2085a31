package driver_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/tflmrun"
)

// envFullSweep makes TestDefaultPlansOnEveryRunner run every corpus model
// on the emulated CPUs too, with two seeds (make cmsis-sweep sets it).
const envFullSweep = "HELIAC_FULL_SWEEP"

// qemuSweepModels are the corpus models make test runs on the emulated
// CPUs (each run costs seconds there): the convolutional ones whose
// plans CMSIS-NN's kernels once computed other outputs with, and two
// speech models.
var qemuSweepModels = []string{
	"tflite-micro/person_detect.tflite", "mlperf-tiny/vww_96_int8.tflite", "mlperf-tiny/kws_ref_model.tflite",
	"ambiq/resnet_v1_8_32_tfs_int8.tflite", "ambiq/cnn_s_quantized.tflite", "tflite-micro/micro_speech_quantized.tflite",
}

// m4ModelLimit is the largest model tflm_run_m4_cmsis's board holds
// (../shared/tools/README.md).
const m4ModelLimit = 4 << 20

// cliDefault is the configuration the heliac command compiles with when
// given no flag but --emit-tflite: a plan for every kernel library on every
// code path, TFLM's figures for a Cortex-M.
func cliDefault(t *testing.T, name string) driver.Config {
	t.Helper()
	cfg, err := heliac.Options{Name: name, Version: "test", EmitTFLite: true}.Config()
	require.NoError(t, err)
	return cfg
}

// TestDefaultPlansOnEveryRunner is the proof that the default plan holds
// for the kernels firmware links: every corpus model TFLM runs, compiled
// as the CLI compiles it by default (--emit-tflite), runs on stock TFLM
// with the reference kernels (tflm_run) and with CMSIS-NN's kernels on the
// host (tflm_run_cmsis, portable C) with outputs byte-identical to the
// original model's, seeds 1 and 2 of two invocations each; and TFLM's head
// with the plan is never larger than with its own planner on that runner
// (but for aboveOwn's exception). On the emulated Cortex-M4F
// (tflm_run_m4_cmsis, CMSIS-NN's DSP code) and Cortex-M55
// (tflm_run_m55_cmsis, MVE) it runs qemuSweepModels, one seed of two
// invocations; HELIAC_FULL_SWEEP=1 (make cmsis-sweep) runs every model
// there, seeds 1 and 2. It logs each runner's heads and their geometric
// mean ratio.
func TestDefaultPlansOnEveryRunner(t *testing.T) {
	skipUnderRace(t)
	tflmrun.Require(t)
	if testing.Short() {
		t.Skip("runs TFLM on every corpus model on four runners; skipped with -short")
	}
	full := os.Getenv(envFullSweep) == "1"
	dir := t.TempDir()
	models := tflmModels(t)
	emitted := map[string]string{}
	for _, m := range models {
		data, err := os.ReadFile(m.Path)
		require.NoError(t, err)
		out, err := driver.Compile(context.Background(), data, cliDefault(t, emit.ModelName(m.File)))
		require.NoError(t, err, m.File)
		path := filepath.Join(dir, strings.ReplaceAll(m.File, "/", "_")+".tflite")
		require.NoError(t, os.WriteFile(path, out.TFLite.Data, 0o644))
		emitted[m.File] = path
	}
	runners := []struct {
		name  string
		tool  string
		qemu  bool
		limit int64 // the largest model the board holds; 0: any
	}{
		{"tflm_run", tflmrun.Path(), false, 0},
		{tflmrun.CMSISNN, tflmrun.Tool(tflmrun.CMSISNN), false, 0},
		{tflmrun.M4CMSISNN, tflmrun.Tool(tflmrun.M4CMSISNN), true, m4ModelLimit},
		{tflmrun.M55CMSISNN, tflmrun.Tool(tflmrun.M55CMSISNN), true, 0},
	}
	for _, r := range runners {
		t.Run(r.name, func(t *testing.T) {
			if r.tool == "" {
				t.Skipf("%s not found (or qemu-system-arm not on PATH)", r.name)
			}
			seeds, invokes := []int{1, 2}, 2
			if r.qemu {
				seeds, invokes = []int{1}, 2
				if full {
					seeds = []int{1, 2}
				}
			}
			var mu sync.Mutex
			var rows []string
			var logSum float64
			n := 0
			t.Run("models", func(t *testing.T) {
				for _, m := range models {
					if r.qemu && !full && !slices.Contains(qemuSweepModels, m.File) {
						continue
					}
					if st, err := os.Stat(m.Path); err == nil && r.limit > 0 && st.Size() > r.limit {
						continue
					}
					t.Run(m.File, func(t *testing.T) {
						t.Parallel()
						opts := tflmrun.Options{Invokes: invokes, ArenaBytes: m.arenaBytes*2 + 256<<10, Timeout: 10 * time.Minute}
						var own, mine int64
						for _, seed := range seeds {
							opts.Seed = seed
							want, err := tflmrun.Run(context.Background(), r.tool, m.Path, opts)
							require.NoError(t, err)
							require.True(t, want.OK(), "the original: %s", want.Error())
							got, err := tflmrun.Run(context.Background(), r.tool, emitted[m.File], opts)
							require.NoError(t, err)
							require.True(t, got.OK(), "heliac's plan: %s", got.Error())
							if !outputsFromArena[m.File] {
								assert.Equal(t, want.Outputs(), got.Outputs(), "seed %d: outputs with heliac's default plan", seed)
							}
							own, mine = want.Int("planner_max_bytes"), got.Int("planner_max_bytes")
						}
						if _, known := aboveOwn[m.File+" tflm-reference"]; !(known && r.name == "tflm_run") {
							assert.LessOrEqual(t, mine, own, "TFLM's head with heliac's default plan")
						}
						mu.Lock()
						defer mu.Unlock()
						rows = append(rows, fmt.Sprintf("  %-56s own %9d  heliac %9d  %.3f", m.File, own, mine, float64(mine)/float64(own)))
						logSum += math.Log(float64(mine) / float64(own))
						n++
					})
				}
			})
			sort.Strings(rows)
			if n > 0 {
				t.Logf("%s: TFLM's head with heliac's default plan over its own, %d models: geometric mean %.3f\n%s",
					r.name, n, math.Exp(logSum/float64(n)), strings.Join(rows, "\n"))
			}
		})
	}
}
