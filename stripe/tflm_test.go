package stripe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	arena      [2]int64
	ops        int
	extra, all int64
}

// TestApplyBitExactTFLM is the proof: stock TFLM (tflm_run, reference
// kernels, TFLM's own planner) computes byte-identical outputs on the
// rewritten model and the original, for several regions and stripe
// counts of every model, seeds 1..3, two invocations each, with halos
// recomputed and cached. -short runs the hand-built models and two small
// corpus models.
func TestApplyBitExactTFLM(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	// The hand-built models of TestApplyGeometry, their regions as there,
	// with halos recomputed and cached (a region of one operator has no
	// intermediate to cache: the same model), and those of TestApplyCached
	// with their own rows too.
	type handCase struct {
		name   string
		build  func(t *testing.T) *graph.Model
		region func(m *graph.Model) graph.StripeRegion
		own    bool // try the region's own rows, not only EvenRows
	}
	var hand []handCase
	for _, tc := range geometryCases() {
		hand = append(hand, handCase{tc.name, tc.build, tc.region, false})
	}
	for _, tc := range cacheCases() {
		hand = append(hand, handCase{"cached " + tc.name, tc.build, tc.region, true})
	}
	for _, tc := range hand {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			want, _ := tflmRun(t, tool, m)
			r := tc.region(m)
			h := m.Tensor(0, r.Output).Shape[1]
			var rows [][][2]int32
			if tc.own {
				rows = append(rows, r.Rows)
			}
			handK := []int{2, 3, 4, 7, 10}
			if os.Getenv("HELIAC_STRIPE_PROOF") != "full" && os.Getenv("HELIAC_FULL_SWEEP") == "" {
				handK = []int{3, 7} // make test; make stripe-proof or make full-sweep: every k
			}
			for _, k := range handK {
				if int32(k) <= h {
					rows = append(rows, EvenRows(h, k))
				}
			}
			cached := 0
			for _, rr := range rows {
				for _, halo := range proofHalos(r) {
					r.Rows, r.Halo = rr, halo
					out, err := Apply(m, []graph.StripeRegion{r})
					if err != nil {
						t.Logf("rows %v, halo %q: %v", rr, halo, err)
						continue
					}
					if halo == graph.HaloCache {
						cached++
					}
					got, _ := tflmRun(t, tool, out)
					assert.Equal(t, want, got, "rows %v, halo %q", rr, halo)
				}
			}
			if tc.own {
				assert.Positive(t, cached, "no rows of the region could be striped with cached halos")
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
	allK := []int{2, 3, 4, 7, 10}
	regionsPer := 4
	// The whole proof takes minutes (the MobileNetV2 224s take seconds a
	// run); `make stripe-proof` runs it (HELIAC_STRIPE_PROOF=full). make
	// test runs fewer regions and stripe counts, and leaves the 224s to
	// driver's TestPatchesAutoTFLM, which runs their chosen rewrite.
	full := os.Getenv("HELIAC_STRIPE_PROOF") == "full"
	if !full {
		allK, regionsPer = []int{7}, 1
	}
	if testing.Short() || !full && os.Getenv("HELIAC_FULL_SWEEP") == "" {
		// make test: -short's models; make stripe-proof or make
		// full-sweep: the proof models.
		models = []string{filepath.Join("..", "testdata", "models", "micro_speech_quantized.tflite")}
		if d := corpus.SharedDir(); d != "" {
			models = append(models, filepath.Join(d, "corpus", "tflite-micro/magic_wand.tflite"))
		}
		allK, regionsPer = []int{3}, 1
	}
	var results []proofResult
	for _, path := range models {
		name := strings.TrimPrefix(path, corpus.SharedDir()+"/corpus/")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			if !full && !testing.Short() && ModelMACs(m) > 100_000_000 {
				t.Skip("a 224 MobileNetV2: make stripe-proof (HELIAC_STRIPE_PROOF=full) runs it")
			}
			per := regionsPer
			if ModelMACs(m) > 100_000_000 && per > 2 {
				per = 2 // the MobileNetV2 224s take seconds a run
			}
			regions := pickRegions(m, per)
			if len(regions) == 0 {
				t.Skip("no candidate regions")
			}
			want, arena := tflmRun(t, tool, m)
			// Each trial: regions with rows; the first region gets every k,
			// the others two each, and one trial stripes two disjoint
			// regions at once.
			var trials [][]graph.StripeRegion
			for i, r := range regions {
				ks := allK
				if i > 0 && len(allK) > 2 {
					ks = []int{allK[i%len(allK)], allK[(i+2)%len(allK)]}
				}
				h := m.Tensor(r.Subgraph, r.Output).Shape[1]
				for _, k := range ks {
					if int32(k) <= h {
						r.Rows = EvenRows(h, k)
						trials = append(trials, []graph.StripeRegion{r})
					}
				}
			}
			if !testing.Short() {
				if pair := disjointPair(m); pair != nil {
					trials = append(trials, pair)
				}
				// The region and k a choice would take: the lowest
				// livePeak within 10 % extra MACs.
				if low := lowPeakTrials(m); len(low) > 0 {
					trials = append(trials, []graph.StripeRegion{low[0].r})
				}
			}
			// Cached halos: every trial in the full proof; make test and
			// -short only the first len(allK) trials (the first region's,
			// the deepest at the largest output, with each k). Regions of
			// one operator build the same model either way.
			cacheTrials := len(trials)
			if !full {
				cacheTrials = min(cacheTrials, len(allK))
			}
			applied := 0
			for n, regs := range trials {
				halos := []graph.Halo{""}
				if n < cacheTrials {
					halos = proofHalos(regs...)
				}
				for _, halo := range halos {
					regs := withHalo(regs, halo)
					out, err := Apply(m, regs)
					desc := ""
					for _, r := range regs {
						desc += fmt.Sprintf("[%d ops %d..%d, tensor %d -> %d, k=%d, %s]", len(r.Ops), r.Ops[0], r.Ops[len(r.Ops)-1], r.Input, r.Output, len(r.Rows), r.HaloKind())
					}
					if err != nil {
						t.Logf("%s: %v", desc, err)
						continue
					}
					applied++
					got, arenaNew := tflmRun(t, tool, out)
					assert.Equal(t, want, got, "%s: outputs differ", desc)
					var extra int64
					for _, r := range regs {
						extra += r.ExtraMACs
					}
					results = append(results, proofResult{model: name, region: desc, arena: [2]int64{arena, arenaNew},
						ops: len(out.Subgraphs[0].Ops) - len(m.Subgraphs[0].Ops), extra: extra, all: ModelMACs(m)})
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
		t.Logf("%s: %s: arena %d -> %d, %+d ops, extra MACs %.1f%%", r.model, r.region, r.arena[0], r.arena[1], r.ops, pct)
	}
}

// proofHalos are the halos the proof tries on regions: recomputed, and
// cached when some region has an intermediate tensor (more than one
// operator; with one, both build the same model).
func proofHalos(regs ...graph.StripeRegion) []graph.Halo {
	for _, r := range regs {
		if len(r.Ops) > 1 {
			return []graph.Halo{"", graph.HaloCache}
		}
	}
	return []graph.Halo{""}
}

// withHalo returns a copy of regs with Halo h.
func withHalo(regs []graph.StripeRegion, h graph.Halo) []graph.StripeRegion {
	out := append([]graph.StripeRegion(nil), regs...)
	for i := range out {
		out[i].Halo = h
	}
	return out
}

// disjointPair returns two regions of m's candidates (the first and the
// last of the list that share no operator and work with k = 4 together),
// or nil.
func disjointPair(m *graph.Model) []graph.StripeRegion {
	c := Candidates(m)
	tries := 0
	for i := 0; i < len(c); i++ {
		for j := len(c) - 1; j > i; j-- {
			a, b := c[i], c[j]
			ha, hb := m.Tensor(a.Subgraph, a.Output).Shape[1], m.Tensor(b.Subgraph, b.Output).Shape[1]
			if ha < 4 || hb < 4 {
				continue
			}
			overlap := false
			for _, x := range a.Ops {
				for _, y := range b.Ops {
					overlap = overlap || x == y
				}
			}
			if overlap {
				continue
			}
			if tries++; tries > 50 {
				return nil
			}
			a.Rows, b.Rows = EvenRows(ha, 4), EvenRows(hb, 4)
			if _, err := Apply(m, []graph.StripeRegion{a, b}); err == nil {
				return []graph.StripeRegion{a, b}
			}
		}
	}
	return nil
}

// skipUnderRace skips a corpus sweep under the race detector: the proof
// runs tflm_run some hundred times, which the detector does not see into,
// and finds nothing there that the package's own tests under -race miss.
// `make test` runs it again without -race (SWEEPS in the Makefile; the
// driver's TestSweepsListed keeps that list whole).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a corpus sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}

// groupModels are hand-built models with room for more than 10 stripes:
// a residual chain, x (60 rows) -> CONV_2D 3x3 SAME -> a -> DEPTHWISE
// 3x3 SAME -> b, y = b + a; and a stride-2 pair, x (80 rows) -> CONV_2D
// 3x3 SAME -> a -> CONV_2D 3x3 SAME stride 2 -> y (40 rows).
func groupModels() []struct {
	name   string
	build  func(t *testing.T) *graph.Model
	region graph.StripeRegion
} {
	return []struct {
		name   string
		build  func(t *testing.T) *graph.Model
		region graph.StripeRegion
	}{
		{"residual chain", func(t *testing.T) *graph.Model {
			b := newMB()
			x := b.act("x", []int32{1, 60, 3, 2}, -3)
			a := b.conv("a", x, []int32{1, 60, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
			bb := b.conv("b", a, []int32{1, 60, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), true)
			y := b.act("y", []int32{1, 60, 3, 2}, 1)
			b.op(opAdd, nil, []graph.TensorID{bb, a}, y)
			return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
		}, graph.StripeRegion{Input: 0, Output: 7, Ops: []int{0, 1, 2}}},
		{"stride-2 pair", func(t *testing.T) *graph.Model {
			b := newMB()
			x := b.act("x", []int32{1, 80, 4, 2}, -3)
			a := b.conv("a", x, []int32{1, 80, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
			y := b.conv("y", a, []int32{1, 40, 2, 3}, 3, 3, same(graph.PaddingSame, 2, 2), false)
			return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
		}, graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}}},
	}
}

// groupConcats counts the CONCATENATIONs of subgraph 0 that write a
// group tensor ("<Y>/group<n>").
func groupConcats(m *graph.Model) int {
	n := 0
	for _, op := range m.Subgraphs[0].Ops {
		if op.Code == opConcatenation && strings.Contains(m.Subgraphs[0].Tensors[op.Outputs[0]].Name, "/group") {
			n++
		}
	}
	return n
}

// TestApplyGroupsBitExactTFLM: stock TFLM computes byte-identical outputs
// on models whose regions run in more than 10 stripes, joined in groups
// (docs/stripes.md, "More than 10 stripes: groups"), as on the originals,
// seeds 1..3, two invocations each: the hand-built groupModels with k in
// {11, 13, 20}, and the largest region of two small corpus models (INT8
// person_detect, FLOAT32 pretrainedResnet) with k in {12, 16}, halos
// recomputed and cached. A few seconds: it runs under the race detector
// too; -short runs the hand-built models.
func TestApplyGroupsBitExactTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	type trial struct {
		k    int
		halo graph.Halo
	}
	// run stripes region r of m with each trial's k and halo, the rows
	// as EvenRows splits them; with cached halos, a last stripe of
	// lastCached rows when lastCached > 0 (and the others even).
	run := func(t *testing.T, m *graph.Model, r graph.StripeRegion, trials []trial, lastCached int32) {
		want, _ := tflmRun(t, tool, m)
		h := m.Tensor(r.Subgraph, r.Output).Shape[1]
		for _, tr := range trials {
			r.Rows, r.Halo = EvenRows(h, tr.k), tr.halo
			if tr.halo == graph.HaloCache && lastCached > 0 {
				r.Rows = append(EvenRows(h-lastCached, tr.k-1), [2]int32{h - lastCached, h})
			}
			regs := []graph.StripeRegion{r}
			out, err := Apply(m, regs)
			require.NoError(t, err, "k=%d, halo %q", tr.k, tr.halo)
			require.Equal(t, (tr.k+9)/10, groupConcats(out), "k=%d: group concatenations", tr.k)
			got, _ := tflmRun(t, tool, out)
			assert.Equal(t, want, got, "k=%d, halo %q: outputs differ", tr.k, tr.halo)
			t.Logf("k=%d, halo %q, rows %v: %d operators (%d before), extra MACs %d of %d", tr.k, r.HaloKind(), r.Rows, len(out.Subgraphs[0].Ops), len(m.Subgraphs[0].Ops), regs[0].ExtraMACs, regs[0].MACs)
		}
	}
	both := func(ks ...int) []trial {
		var out []trial
		for _, k := range ks {
			out = append(out, trial{k, graph.HaloRecompute}, trial{k, graph.HaloCache})
		}
		return out
	}
	for _, tc := range groupModels() {
		t.Run(tc.name, func(t *testing.T) {
			run(t, tc.build(t), tc.region, both(11, 13, 20), 0)
		})
	}
	d := corpus.SharedDir()
	for _, tc := range []struct {
		model      string
		lastCached int32
	}{
		{"tflite-micro/person_detect.tflite", 0},
		// Its first block (three 3x3 convolutions to a residual ADD)
		// with even stripes of 2 rows: stripe k-2 already holds the last
		// rows of the first convolution's output, so cached halos are
		// refused for the last stripe; with a last stripe of 4 rows they
		// are not.
		{"mlperf-tiny/pretrainedResnet.tflite", 4},
	} {
		t.Run(tc.model, func(t *testing.T) {
			if d == "" {
				t.Skip("../shared absent: no corpus")
			}
			if testing.Short() {
				t.Skip("-short: the hand-built models only")
			}
			data, err := os.ReadFile(filepath.Join(d, "corpus", tc.model))
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			regs := pickRegions(m, 1)
			require.NotEmpty(t, regs)
			r := regs[0]
			t.Logf("region: operators %v, tensor %d -> %d", r.Ops, r.Input, r.Output)
			run(t, m, r, both(12, 16), tc.lastCached)
		})
	}
}
