package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/internal/validmodel"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
	"github.com/heliac/heliac/verify"
)

// HELIAC_DIFF_PATCHES=1 also runs the stripe differential
// (stripeDifferential) on every model of TestDifferentialTFLM; make
// difftest sets it with DIFF_PATCHES=1.
const envDiffPatches = "HELIAC_DIFF_PATCHES"

// The stripe differential's runs: input seeds and invocations of each,
// the rewrites tried per model, and how often a model also goes through
// the whole pipeline with --patches auto.
var stripeRunSeeds = []int{1, 2}

const (
	stripeInvokes       = 2
	stripeTries         = 4
	stripePipelineEvery = 3 // one model with candidates in this many
)

// stripeTally is what the stripe differential covered.
type stripeTally struct {
	models     int // models with candidate regions
	candidates int // candidate regions, all models
	rewrites   int // rewrites whose rebuild and TFLM outputs were compared
	regions    int // regions in them
	int8       int // of rewrites, those with an INT8 region
	cached     int // of rewrites, those with a region of cached halos
	grouped    int // of rewrites, those with a region of more than 10 stripes
	refused    map[string]int
	pipeline   int // models compiled with --patches auto --emit-tflite and compared
	striped    int // of which auto striped some region
}

func (st *stripeTally) text() string {
	refused := 0
	var rs []string
	for r, n := range st.refused {
		refused += n
		rs = append(rs, fmt.Sprintf("\n    %4d %s", n, r))
	}
	sort.Strings(rs)
	return fmt.Sprintf("stripes: %d models with %d candidate regions; %d rewrites (%d regions, %d with INT8, %d with cached halos, %d with more than 10 stripes) rebuilt by the verifier and run in TFLM; "+
		"%d models through --patches auto --emit-tflite (%d striped); %d rewrites stripe.Apply refused:%s",
		st.models, st.candidates, st.rewrites, st.regions, st.int8, st.cached, st.grouped, st.pipeline, st.striped, refused, strings.Join(rs, ""))
}

// randomRows splits h rows into k stripes at random cuts (uneven).
func randomRows(rng *rand.Rand, h int32, k int) [][2]int32 {
	cuts := rng.Perm(int(h) - 1)[:k-1]
	sort.Ints(cuts)
	rows := make([][2]int32, 0, k)
	start := int32(0)
	for _, c := range cuts {
		rows = append(rows, [2]int32{start, int32(c) + 1})
		start = int32(c) + 1
	}
	return append(rows, [2]int32{start, h})
}

// withStripes returns plan.json js with its "stripes" those of m (the
// record --patches writes), for verify.Rewrite.
func withStripes(t *testing.T, js []byte, m *graph.Model) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js, &doc))
	recs := []map[string]any{}
	for _, r := range m.Stripes {
		id := func(i int) string { return strconv.Itoa(int(r.Subgraph)) + ":" + strconv.Itoa(i) }
		ops := []string{}
		for _, o := range r.Ops {
			ops = append(ops, id(o))
		}
		recs = append(recs, map[string]any{"subgraph": r.Subgraph, "input": id(int(r.Input)), "output": id(int(r.Output)),
			"operators": ops, "k": r.K(), "rows": r.Rows, "halo": r.HaloKind(), "macs": r.MACs, "extra_macs": r.ExtraMACs})
	}
	raw, err := json.Marshal(recs)
	require.NoError(t, err)
	doc["stripes"] = raw
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// sharesOps says whether two regions of a subgraph share an operator.
func sharesOps(a, b graph.StripeRegion) bool {
	if a.Subgraph != b.Subgraph {
		return false
	}
	for _, i := range a.Ops {
		for _, j := range b.Ops {
			if i == j {
				return true
			}
		}
	}
	return false
}

// describeRegions names regions as a failure reports them.
func describeRegions(rs []graph.StripeRegion) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, " [subgraph %d, input %d, output %d, operators %v, rows %v, halo %s]", r.Subgraph, r.Input, r.Output, r.Ops, r.Rows, r.HaloKind())
	}
	return b.String()
}

// runOutputs runs a model file in tflm_run over stripeRunSeeds and
// returns the output lines of each seed.
func runOutputs(tool, path string) ([][]string, error) {
	var all [][]string
	for _, rs := range stripeRunSeeds {
		res, err := tflmrun.Run(context.Background(), tool, path,
			tflmrun.Options{Seed: rs, Invokes: stripeInvokes, ArenaBytes: diffArena, Timeout: 30 * time.Second})
		if err == nil && !res.OK() {
			err = fmt.Errorf("%s", res.Error())
		}
		if err != nil {
			return nil, err
		}
		all = append(all, res.Outputs())
	}
	return all, nil
}

// sameOutputs runs model data (written into dir as name) and returns the
// first difference of its outputs from want, or "".
func sameOutputs(tool, dir, name string, data []byte, want [][]string) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	got, err := runOutputs(tool, path)
	if err != nil {
		return fmt.Sprintf("TFLM does not run it: %v", err), nil
	}
	for i := range want {
		if d := diffLines(want[i], got[i]); d != "" {
			return fmt.Sprintf("outputs differ (--seed %d):\n%s", stripeRunSeeds[i], d), nil
		}
	}
	return "", nil
}

var refusalNumbers = regexp.MustCompile(`\b\d+\b`)

// stripeDifferential checks the stripe rewrite on the model m of seed
// (data, written at orig; js its plan.json, compiled without patches):
// for up to stripeTries random choices of candidate regions (one, now and
// then two), random rows (k 2 to 10, now and then up to 100 in groups;
// uneven cuts) and random halos (recomputed or cached), stripe.Apply's
// model must be the verifier's rebuild from m and the plan's stripes
// record (verify.Rewrite), and stock TFLM must give it byte-identical
// outputs over stripeRunSeeds, stripeInvokes invocations each. One model
// in stripePipelineEvery also compiles with --patches auto
// --emit-tflite (a random cap on the stripes' MACs) and the emitted
// model must give TFLM's outputs.
func stripeDifferential(t *testing.T, tool string, seed int64, m *graph.Model, data []byte, orig string, js []byte, tally *diffTally) {
	cands := stripe.Candidates(m)
	if len(cands) == 0 {
		return
	}
	var cs []graph.StripeRegion
	for _, c := range cands {
		if m.Tensor(c.Subgraph, c.Output).Shape[1] >= 2 {
			cs = append(cs, c)
		}
	}
	st := stripeTally{models: 1, candidates: len(cands), refused: map[string]int{}}
	defer func() {
		tally.mu.Lock()
		defer tally.mu.Unlock()
		s := &tally.stripes
		if s.refused == nil {
			s.refused = map[string]int{}
		}
		s.models += st.models
		s.candidates += st.candidates
		s.rewrites += st.rewrites
		s.regions += st.regions
		s.int8 += st.int8
		s.cached += st.cached
		s.grouped += st.grouped
		s.pipeline += st.pipeline
		s.striped += st.striped
		for r, n := range st.refused {
			s.refused[r] += n
		}
	}()
	want, err := runOutputs(tool, orig)
	require.NoError(t, err, "seed %d: TFLM runs the original", seed)
	dir := filepath.Dir(orig)
	rng := rand.New(rand.NewSource(seed))
	for try := 0; try < stripeTries && len(cs) > 0; try++ {
		var regions []graph.StripeRegion
		for n := 1 + rng.Intn(3)/2; n > 0; n-- {
			r := cs[rng.Intn(len(cs))]
			if len(regions) > 0 && sharesOps(regions[0], r) {
				break
			}
			h := m.Tensor(r.Subgraph, r.Output).Shape[1]
			most := min(10, h)
			if rng.Intn(4) == 0 {
				// More than 10 stripes: joined in groups.
				most = min(stripe.MaxStripes, h)
			}
			k := 2 + rng.Intn(int(most)-1)
			if rng.Intn(2) == 0 {
				r.Halo = graph.HaloCache
			}
			if rng.Intn(4) == 0 {
				r.Rows = stripe.EvenRows(h, k)
			} else {
				r.Rows = randomRows(rng, h, k)
			}
			regions = append(regions, r)
		}
		rw, err := stripe.Apply(m, regions)
		if err != nil {
			st.refused[refusalNumbers.ReplaceAllString(err.Error(), "N")]++
			continue
		}
		what := fmt.Sprintf("seed %d: regions%s", seed, describeRegions(rw.Stripes))
		if v := verify.Rewrite(m, rw, withStripes(t, js, rw)); len(v) > 0 {
			enc, _ := tflite.Encode(rw, tflite.EncodeOptions{})
			kept := tally.keepModels(t, seed, data, enc)
			t.Fatalf("%s: the verifier's rebuild differs from stripe.Apply (kept in %s): %v", what, kept, v)
		}
		enc, err := tflite.Encode(rw, tflite.EncodeOptions{})
		require.NoError(t, err, what)
		d, err := sameOutputs(tool, dir, "striped.tflite", enc, want)
		require.NoError(t, err, what)
		if d != "" {
			kept := tally.keepModels(t, seed, data, enc)
			t.Fatalf("%s: TFLM's outputs of the rewrite differ from the original's (kept in %s as seed%d.heliac.tflite): %s", what, kept, seed, d)
		}
		st.rewrites++
		st.regions += len(regions)
		for _, r := range regions {
			if m.Tensor(r.Subgraph, r.Output).Type == graph.Int8 || m.Tensor(r.Subgraph, r.Input).Type == graph.Int8 {
				st.int8++
				break
			}
		}
		if slices.ContainsFunc(regions, func(r graph.StripeRegion) bool { return r.Cached() }) {
			st.cached++
		}
		if slices.ContainsFunc(regions, func(r graph.StripeRegion) bool { return r.K() > 10 }) {
			st.grouped++
		}
	}
	if seed%stripePipelineEvery != 0 {
		return
	}
	cfg := referenceConfig(t)
	cfg.ModelName = fmt.Sprintf("stripes_%d", seed)
	cfg.Version = "test"
	cfg.EmitTFLite = true
	cfg.Patches = "auto"
	cfg.PatchMACs = []float64{0, 0.5, 1}[rng.Intn(3)]
	out, err := driver.Compile(context.Background(), data, cfg)
	if err != nil {
		kept := tally.keepModels(t, seed, data, nil)
		t.Fatalf("seed %d: heliac --patches auto (patch MACs %v) does not compile a valid model (kept in %s): %v", seed, cfg.PatchMACs, kept, err)
	}
	d, err := sameOutputs(tool, dir, "auto.tflite", out.TFLite.Data, want)
	require.NoError(t, err, "seed %d", seed)
	if d != "" {
		kept := tally.keepModels(t, seed, data, out.TFLite.Data)
		t.Fatalf("seed %d: --patches auto --emit-tflite (patch MACs %v; regions%s): %s (kept in %s)", seed, cfg.PatchMACs, describeRegions(out.Model.Stripes), d, kept)
	}
	st.pipeline++
	if len(out.Model.Stripes) > 0 {
		st.striped++
		wholeArenaNoLarger(t, tool, seed, data, cfg, filepath.Join(dir, "auto"))
	}
}

// wholeArenaNoLarger requires a model --patches auto striped (out, its
// emitted model at path, compiled from data with cfg) to leave TFLM's
// whole tensor_arena no larger than without stripes: heliac's figures on
// both targets, and stock TFLM (tool) allocating and running the striped
// model in the arena the model without stripes needs in tool's setup (its
// planner outside the arena). path names the files it writes.
func wholeArenaNoLarger(t *testing.T, tool string, seed int64, data []byte, cfg driver.Config, path string) {
	t.Helper()
	for _, target := range []tflmarena.Target{tflmarena.Host64, tflmarena.CortexM} {
		c := cfg
		c.TFLMTarget = target.Name
		striped, err := driver.Compile(context.Background(), data, c)
		require.NoError(t, err, "seed %d", seed)
		c.Patches = driver.PatchesOff
		off, err := driver.Compile(context.Background(), data, c)
		require.NoError(t, err, "seed %d", seed)
		require.NotNil(t, off.TFLMArena, "seed %d: stripes kept although TFLM's whole arena without them is unknown: %v", seed, off.TFLMArenaErr)
		require.NotNil(t, striped.TFLMArena, "seed %d", seed)
		require.LessOrEqual(t, striped.TFLMArena.Emitted.Bytes, off.TFLMArena.Emitted.Bytes,
			"seed %d: --patches auto grew TFLM's whole arena on %s", seed, target.Name)
		if target != tflmarena.Host64 || len(striped.Model.Stripes) == 0 {
			continue
		}
		file := path + ".host64.tflite"
		require.NoError(t, os.WriteFile(file, striped.TFLite.Data, 0o644))
		em, err := tflite.Load(off.TFLite.Data)
		require.NoError(t, err)
		a, err := tflmarena.ComputeSetup(em, off.TFLMArena.Emitted.Head, target, tflmarena.Kernels{Library: c.Kernels, CPU: c.Target}, tflmarena.PlannerOutside)
		require.NoError(t, err)
		got, o := runOracle(context.Background(), tool, file, a.Bytes, time.Minute)
		require.Equal(t, ran, got, "seed %d: the striped model does not run in the arena the model without stripes needs (%d B): %v", seed, a.Bytes, o["error"])
	}
}

// stripeDiffModels is how many models with candidate regions
// TestDifferentialStripes runs (-short or under the race detector:
// stripeDiffModelsShort).
const (
	stripeDiffModels      = 12
	stripeDiffModelsShort = 4
)

// TestDifferentialStripes is the stripe differential (stripeDifferential)
// on the first random valid models that have regions to stripe: every
// rewrite is the verifier's rebuild and TFLM's outputs of it are the
// original's. make difftest DIFF_PATCHES=1 runs it on every model of the
// long run.
func TestDifferentialStripes(t *testing.T) {
	tool := tflmrun.Require(t)
	n := stripeDiffModels
	if testing.Short() || raceEnabled {
		n = stripeDiffModelsShort
	}
	tally := &diffTally{}
	for seed := int64(1); seed <= 200 && tally.stripes.models < n; seed++ {
		m, _ := validmodel.Generate(seed)
		if len(stripe.Candidates(m)) == 0 {
			continue
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			data, err := tflite.Encode(m, tflite.EncodeOptions{})
			require.NoError(t, err)
			cfg := referenceConfig(t)
			cfg.ModelName, cfg.Version = fmt.Sprintf("stripes_%d", seed), "test"
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			orig := filepath.Join(t.TempDir(), "model.tflite")
			require.NoError(t, os.WriteFile(orig, data, 0o644))
			stripeDifferential(t, tool, seed, m, data, orig, out.PlanJSON, tally)
		})
	}
	t.Log(tally.stripes.text())
	require.NotZero(t, tally.stripes.rewrites, "no rewrite compared")
	require.NotZero(t, tally.stripes.pipeline, "no model through --patches auto")
}

// TestStripeRebuildPadWithoutOptions: a PAD written without options
// (TFLM reads PadOptions' defaults; validmodel writes none) is kept by
// stripe.Apply as it was, and the verifier's rebuild agrees: found by the
// stripe differential on seed 2 (a PAD outside the region), where
// verify.Rewrite dereferenced the missing options.
func TestStripeRebuildPadWithoutOptions(t *testing.T) {
	m, _ := validmodel.Generate(2)
	bare := false
	for _, op := range m.Subgraphs[0].Ops {
		bare = bare || op.Code == 34 && op.Options == nil // PAD
	}
	require.True(t, bare, "seed 2 has a PAD without options")
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	cfg := referenceConfig(t)
	cfg.ModelName, cfg.Version = "pad_no_options", "test"
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	n := 0
	for _, c := range stripe.Candidates(m) {
		h := m.Tensor(c.Subgraph, c.Output).Shape[1]
		if h < 2 {
			continue
		}
		c.Rows = stripe.EvenRows(h, 2)
		rw, err := stripe.Apply(m, []graph.StripeRegion{c})
		if err != nil {
			continue
		}
		n++
		require.Empty(t, verify.Rewrite(m, rw, withStripes(t, out.PlanJSON, rw)), "region%s", describeRegions(rw.Stripes))
	}
	require.NotZero(t, n, "seed 2 has a region to stripe")
}

// TestStripeRegionsOfTensorsWrittenTwice: regions over tensors written
// by two operators, found by the stripe differential, are refused alike
// by stripe.Apply and by the verifier's rebuild (given the record):
// seed 92, an operator of the region reads the value a tensor had before
// a later operator of the region writes it again (stripe.Apply read the
// region's input instead, or crashed, seed 1419; here that tensor is the
// output, which only the region's last operator may write); seed 780, an
// intermediate also written by an operator outside the region (the
// rewrite left it of height 0, which TFLM refuses as dynamic); seed
// 13774, the input written again between the region's operators (the
// stripes, run at the last, read the new value: outputs differed).
func TestStripeRegionsOfTensorsWrittenTwice(t *testing.T) {
	for _, c := range []struct {
		seed          int64
		region        graph.StripeRegion
		apply, verify string
	}{
		{92, graph.StripeRegion{Subgraph: 0, Input: 0, Output: 10, Ops: []int{13, 26}, Rows: [][2]int32{{0, 1}, {1, 5}, {5, 6}}},
			`output tensor 10 "t10" is also written by operator 13 (MINIMUM) of the region`, "op 0:13 (MINIMUM) reads 0:10 (t10) before op 0:26 (RELU) writes it"},
		{780, graph.StripeRegion{Subgraph: 2, Input: 0, Output: 2, Ops: []int{1, 2}, Rows: [][2]int32{{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 7}}},
			`operator 1 (MAXIMUM): output tensor 1 "t1" is also written outside the region, by operator 0 (MINIMUM)`, "op 2:0 (MINIMUM) outside the region writes too"},
		{13774, graph.StripeRegion{Subgraph: 0, Input: 2, Output: 19, Ops: []int{2, 6, 7, 8, 9}, Rows: [][2]int32{{0, 1}, {1, 2}}},
			`input tensor 2 "t2" is written again by operator 3 (TANH)`, "op 0:3 (TANH) writes 0:2 (t2), the input, between the region's operators"},
	} {
		t.Run(fmt.Sprintf("seed=%d", c.seed), func(t *testing.T) {
			m, _ := validmodel.Generate(c.seed)
			_, err := stripe.Apply(m, []graph.StripeRegion{c.region})
			require.ErrorContains(t, err, c.apply)
			data, err := tflite.Encode(m, tflite.EncodeOptions{})
			require.NoError(t, err)
			cfg := referenceConfig(t)
			cfg.ModelName, cfg.Version = "twice", "test"
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			rec := *m
			rec.Stripes = []graph.StripeRegion{c.region}
			v := verify.Rewrite(m, m, withStripes(t, out.PlanJSON, &rec))
			require.NotEmpty(t, v)
			require.Contains(t, fmt.Sprint(v), c.verify)
		})
	}
}
