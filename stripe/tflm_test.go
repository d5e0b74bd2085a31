package stripe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// proofSeeds and proofInvokes: every model runs with seeds 1..3, two
// invocations each, in stock TFLM (tflm_run, reference kernels).
var proofSeeds = []int{1, 2, 3}

const proofInvokes = 2

// proofArena is the arena tflm_run gets: enough for every model tried
// (the largest, a MobileNetV2 224 striped, needs about 12 MB), and far
// quicker to fill than the tool's default 512 MiB.
const proofArena = 64 << 20

// tflmRun encodes m, runs it in tflm_run with each seed and returns the
// output digest lines of every run and the arena TFLM used.
func tflmRun(t *testing.T, tool string, m *graph.Model) ([]string, int64) {
	t.Helper()
	p, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	f, err := os.CreateTemp(t.TempDir(), "*.tflite")
	require.NoError(t, err)
	_, err = f.Write(p)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	var lines []string
	arena := int64(-1)
	for _, seed := range proofSeeds {
		res, err := tflmrun.Run(context.Background(), tool, f.Name(), tflmrun.Options{Seed: seed, Invokes: proofInvokes, ArenaBytes: proofArena})
		require.NoError(t, err)
		require.True(t, res.OK(), "tflm_run: %s", res.Error())
		for _, l := range res.Outputs() {
			lines = append(lines, fmt.Sprintf("seed %d %s", seed, l))
		}
		arena = res.Int("arena_used_bytes")
	}
	return lines, arena
}

// proofModels are the corpus models (under ../shared/corpus) whose
// stripes TFLM runs, and the bundled ones (testdata/models).
var proofModels = []string{
	"tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite",
	"coral/tf2_mobilenet_v2_1.0_224_ptq.tflite",
	"tflite-micro/custom_model_rf_keras.tflite",
	"tflite-micro/person_detect.tflite",
	"ambiq/cnn_s_quantized.tflite",
	"ambiq/resnet_v1_8_32_tfs_int8.tflite",
	"mlperf-tiny/pretrainedResnet.tflite",
	"mlperf-tiny/pretrainedResnet_quant.tflite",
	"mlperf-tiny/pretrainedResnet_large_int8.tflite",
	"tflite-micro/magic_wand.tflite",
	"mlperf-tiny/vww_96_int8.tflite",
	"mlperf-tiny/vww_96_float.tflite",
	"ambiq/vww_96_int8_aligned.tflite",
	"mlperf-tiny/kws_ref_model.tflite",
	"tflite-micro/model_runner_model.tflite",
}

// pickRegions chooses, deterministically, a few of m's candidates: up to
// n spread evenly over the list, and the largest region ending at the
// largest output (the peak layers).
func pickRegions(m *graph.Model, n int) []graph.StripeRegion {
	c := Candidates(m)
	if len(c) == 0 {
		return nil
	}
	best := 0
	size := func(r graph.StripeRegion) int64 { return m.Tensor(r.Subgraph, r.Output).Size }
	for i, r := range c {
		if size(r) > size(c[best]) || size(r) == size(c[best]) && len(r.Ops) > len(c[best].Ops) {
			best = i
		}
	}
	picked := []graph.StripeRegion{c[best]}
	seen := map[int]bool{best: true}
	for j := 0; j < n-1 && j < len(c); j++ {
		i := j * len(c) / max(n-1, 1)
		if !seen[i] {
			seen[i] = true
			picked = append(picked, c[i])
		}
	}
	return picked
}

type proofResult struct {
	model      string
	region     string
	k          int
	arena      [2]int64
	ops        int
	extra, all int64
}

// TestApplyBitExactTFLM is the proof: stock TFLM (tflm_run, reference
// kernels, TFLM's own planner) computes byte-identical outputs on the
// rewritten model and the original, for several regions and stripe
// counts of every model, seeds 1..3, two invocations each. -short runs
// the hand-built models and two small corpus models.
func TestApplyBitExactTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	// The hand-built models of TestApplyGeometry, their regions as there.
	for _, tc := range geometryCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			want, _ := tflmRun(t, tool, m)
			r := tc.region(m)
			h := m.Tensor(0, r.Output).Shape[1]
			for _, k := range []int{2, 3, 4, 7, 10} {
				if int32(k) > h {
					continue
				}
				r.Rows = EvenRows(h, k)
				out, err := Apply(m, []graph.StripeRegion{r})
				if err != nil {
					t.Logf("k=%d: %v", k, err)
					continue
				}
				got, _ := tflmRun(t, tool, out)
				assert.Equal(t, want, got, "k=%d", k)
			}
		})
	}
	var models []string
	if d := corpus.SharedDir(); d != "" {
		for _, f := range proofModels {
			models = append(models, filepath.Join(d, "corpus", f))
		}
	}
	bundled, _ := filepath.Glob(filepath.Join("..", "testdata", "models", "*.tflite"))
	models = append(models, bundled...)
	ks := []int{2, 3, 4, 7, 10}
	regionsPer := 4
	if testing.Short() {
		models = []string{filepath.Join("..", "testdata", "models", "micro_speech_quantized.tflite")}
		if d := corpus.SharedDir(); d != "" {
			models = append(models, filepath.Join(d, "corpus", "tflite-micro/magic_wand.tflite"))
		}
		ks, regionsPer = []int{3}, 1
	}
	var mu sync.Mutex
	var results []proofResult
	for _, path := range models {
		name := strings.TrimPrefix(path, corpus.SharedDir()+"/corpus/")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			regions := pickRegions(m, regionsPer)
			if len(regions) == 0 {
				t.Skip("no candidate regions")
			}
			want, arena := tflmRun(t, tool, m)
			applied := 0
			for _, r := range regions {
				h := m.Tensor(r.Subgraph, r.Output).Shape[1]
				for _, k := range ks {
					if int32(k) > h {
						continue
					}
					r.Rows = EvenRows(h, k)
					regs := []graph.StripeRegion{r}
					out, err := Apply(m, regs)
					if err != nil {
						t.Logf("ops %v k=%d: %v", r.Ops, k, err)
						continue
					}
					applied++
					got, arenaNew := tflmRun(t, tool, out)
					desc := fmt.Sprintf("%d ops %d..%d, tensor %d -> %d", len(r.Ops), r.Ops[0], r.Ops[len(r.Ops)-1], r.Input, r.Output)
					assert.Equal(t, want, got, "%s, k=%d: outputs differ", desc, k)
					mu.Lock()
					results = append(results, proofResult{model: name, region: desc, k: k, arena: [2]int64{arena, arenaNew},
						ops: len(out.Subgraphs[r.Subgraph].Ops) - len(m.Subgraphs[r.Subgraph].Ops), extra: regs[0].ExtraMACs, all: ModelMACs(m)})
					mu.Unlock()
				}
			}
			assert.Positive(t, applied, "no region of the model could be striped")
		})
	}
	sort.SliceStable(results, func(a, b int) bool { return results[a].model < results[b].model })
	for _, r := range results {
		pct := 0.0
		if r.all > 0 {
			pct = 100 * float64(r.extra) / float64(r.all)
		}
		t.Logf("%s: %s k=%d: arena %d -> %d, +%d ops, extra MACs %.1f%%", r.model, r.region, r.k, r.arena[0], r.arena[1], r.ops, pct)
	}
}
