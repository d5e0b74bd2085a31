package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
)

// opsArena is the arena tflm_run gets for a one-operator model: far more
// than any needs, and quick to fill.
const opsArena = 4 << 20

// runtimeOpsSample are the models TestRuntimeEveryOperator runs in make
// test, one of each family but signal's (the corpus's audio preprocessors
// run the signal library there): a kernel with a persistent buffer over
// its temporaries (math), a custom operator with FlexBuffers options and
// several scratch requests (shape), every kernel variant in one model
// (kernel), three decode pairs (decode), and two resource variables of
// one name (core); with the default plan alone, but for the kernel
// variants (true: the plan for TFLM's reference kernels too, whose
// scratch requests must match its rows exactly; TestRuntimeBitExact runs
// that plan on corpus models). HELIAC_OP_SWEEP=1 runs every model with
// every plan.
var runtimeOpsSample = map[string]bool{"LOG_SOFTMAX_INT8": false, "detection_postprocess_regular0": false,
	"kernel_variants_together": true, "decode_three_pairs": false, "VARIABLE_two_containers_FLOAT32": false}

// runtimeOpsExcluded are operators MicroMutableOpResolver has an AddXxx
// for that no one-operator model has, and why: only what TFLM itself
// cannot run in these builds. kernels.TFLMCustomOps leaves them out
// already; the entries say why, for a reader who finds AddEthosU there.
var runtimeOpsExcluded = map[string]string{
	// kernels/ethosu.cc @90b983c: outside an Ethos-U build
	// Register_ETHOSU returns null, and AddEthosU registers nothing
	// (micro_mutable_op_resolver.h); ../shared's libraries and runners are
	// such builds.
	"CUSTOM:ethos-u": "no Ethos-U build: Register_ETHOSU is null and AddEthosU registers nothing",
}

// runtimeOpsPlans are the plans TestRuntimeEveryOperator makes of each
// model: the default (--kernels any, its kernel-scratch rows packed for
// every build), built against both host libraries, and one for TFLM's
// reference kernels, built against the reference library.
var runtimeOpsPlans = []struct {
	name  string
	k     runtimeKernels
	cmsis bool // also built against the host CMSIS-NN library
}{
	{"any", runtimeKernels{}, true},
	{"tflm-reference", referenceKernels, false},
}

// TestRuntimeEveryOperator is issue 34's done-when check on one-operator
// models: every model of oneOpModels that TFLM runs, compiled with
// --runtime tflm for each plan of runtimeOpsPlans and built with the
// harness, prints exactly what tflm_run prints on the original model
// (seeds 1..3, three invocations each), and the default plan built
// against the host CMSIS-NN library exactly what tflm_run_cmsis prints. A
// model TFLM runs that the runtime refuses fails the test. make test runs
// runtimeOpsSample (with the plans it says); HELIAC_OP_SWEEP=1 every
// model, and then every operator TFLM registers (but
// runtimeOpsExcluded's) must have run bit-exact on some model under both
// libraries (TestOneOpModelsCoverEveryOperator checks the list itself).
// It logs one line per model and plan, and the counts.
func TestRuntimeEveryOperator(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("builds the runtime for one-operator models; skipped with -short")
	}
	r := &opsRun{tool: tflmrun.Require(t), dir: t.TempDir(), exact: map[string]map[string]int{}, counts: map[string]int{}}
	r.ref = needHarnessKit(t, hostReference)
	if r.cmsisTool = runnerTool(cmsisRunners[0].name, false); r.cmsisTool != "" {
		r.cmsis = needHarnessKit(t, hostCMSISNN)
	} else {
		t.Logf("%s not found: the CMSIS-NN builds are not checked", cmsisRunners[0].name)
	}
	sweep := os.Getenv(envOpSweep) != ""
	start := time.Now()
	all := oneOpModels()
	var models atomic.Int64
	t.Run("models", func(t *testing.T) {
		for _, m := range all {
			both, sampled := runtimeOpsSample[m.name]
			if !sweep && !sampled {
				continue
			}
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				models.Add(1)
				r.check(t, m, sweep || both)
			})
		}
	})
	r.table.log(t, fmt.Sprintf("heliac's runtime on %d one-operator models vs tflm_run and tflm_run_cmsis, seeds %v x %d invocations, %v",
		models.Load(), runtimeSeeds, runtimeInvokes, time.Since(start).Round(time.Second)))
	libs := []string{"reference"}
	if r.cmsis != nil {
		libs = append(libs, "cmsis-nn")
	}
	for _, lib := range libs {
		t.Logf("%s: %d runs bit-exact, %d failed", lib, r.counts[lib+" bit-exact"], r.counts[lib+" failed"])
	}
	if !sweep || t.Failed() || models.Load() < int64(len(all)) {
		return // make test, or -run chose some
	}
	var missing []string
	covered := 0
	for _, o := range registeredOps() {
		if runtimeOpsExcluded[o] != "" {
			continue
		}
		covered++
		for _, lib := range libs {
			if r.exact[o][lib] == 0 {
				missing = append(missing, o+" ("+lib+")")
			}
		}
	}
	assert.Empty(t, missing, "operators TFLM registers that no one-operator model ran bit-exact")
	t.Logf("%d operators TFLM registers (of %d builtin and %d custom) each ran bit-exact on some one-operator model with %v; left out: %v",
		covered, len(kernels.TFLMBuiltinOps()), len(kernels.TFLMCustomOps()), libs, runtimeOpsExcluded)
}

// opsRun is one TestRuntimeEveryOperator: its runners and kits (cmsis nil
// without tflm_run_cmsis), where it writes models, and what it found.
type opsRun struct {
	tool, cmsisTool string
	ref, cmsis      *harnessKit
	dir             string
	table           resultTable
	mu              sync.Mutex
	exact           map[string]map[string]int // operator -> library -> runs bit-exact
	counts          map[string]int            // "<library> bit-exact" or "<library> failed" -> runs
}

// check runs m: the original on the runners, then each plan of
// runtimeOpsPlans (the default one alone unless every) built against each
// library it is for.
func (r *opsRun) check(t *testing.T, m oneOpModel, every bool) {
	data, err := tflite.Encode(m.m, tflite.EncodeOptions{})
	require.NoError(t, err)
	orig := filepath.Join(r.dir, m.family+"_"+m.name+".tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	want, why := oracleRuns(r.tool, orig)
	if why != "" {
		r.table.set(m.name, "tflm_run: "+why)
		t.Fatalf("tflm_run does not run %s (a builder's mistake): %s", m.name, why)
	}
	var wantCMSIS []runLines
	if r.cmsis != nil {
		if wantCMSIS, why = oracleRuns(r.cmsisTool, orig); why != "" {
			r.table.set(m.name+"/cmsis-nn", "tflm_run_cmsis: "+why)
			t.Logf("%s does not run %s: %s", cmsisRunners[0].name, m.name, why)
		}
	}
	ops := modelOps(m)
	for _, p := range runtimeOpsPlans {
		if !every && p.name != "any" {
			continue
		}
		cfg := runtimeConfig(t, m.name, p.k)
		out, err := driver.Compile(context.Background(), data, cfg)
		if err != nil {
			r.table.set(m.name+"/"+p.name, "compile error: "+oneLine(err.Error()))
			r.tally(ops, "reference", false)
			t.Errorf("TFLM runs it; the runtime refuses it (plan %s): %v", p.name, err)
			continue
		}
		builds := []opsBuild{{"reference", r.ref, want}}
		if p.cmsis && r.cmsis != nil && wantCMSIS != nil {
			builds = append(builds, opsBuild{"cmsis-nn", r.cmsis, wantCMSIS})
		}
		for _, b := range builds {
			label := m.name + "/" + p.name
			if b.lib != "reference" {
				label += "/" + b.lib
			}
			result, err := runBuilt(t, b.kit, cfg.Prefix, out, b.want)
			r.table.set(label, result)
			r.tally(ops, b.lib, err == nil)
			if err != nil {
				t.Errorf("plan %s, %s kernels: %v", p.name, b.lib, err)
			}
		}
	}
}

// opsBuild is a plan's build against one library: the kit that builds it
// and the lines its runner printed for the original model.
type opsBuild struct {
	lib  string
	kit  *harnessKit
	want []runLines
}

// tally counts a run of a model of ops on lib.
func (r *opsRun) tally(ops []string, lib string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.counts[lib+" failed"]++
		return
	}
	r.counts[lib+" bit-exact"]++
	for _, o := range ops {
		if r.exact[o] == nil {
			r.exact[o] = map[string]int{}
		}
		r.exact[o][lib]++
	}
}

// registeredOps are the operators TFLM registers, as graph.Op.Name spells
// them: the builtins, then "CUSTOM:" and each custom operator's name.
func registeredOps() []string {
	out := kernels.TFLMBuiltinOps()
	for _, c := range kernels.TFLMCustomOps() {
		out = append(out, "CUSTOM:"+c)
	}
	return out
}

// modelOps are the operators of m's model, each once, sorted.
func modelOps(m oneOpModel) []string {
	var out []string
	for _, sg := range m.m.Subgraphs {
		for i := range sg.Ops {
			if n := sg.Ops[i].Name(); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// oracleRuns runs tool on model for each of runtimeSeeds, or says why it
// does not run it.
func oracleRuns(tool, model string) ([]runLines, string) {
	var out []runLines
	for _, seed := range runtimeSeeds {
		r, err := oracle(tool, model, seed, runtimeInvokes, opsArena)
		if err != nil {
			return nil, oneLine(err.Error())
		}
		if e := r.error(); e != "" {
			return nil, e
		}
		out = append(out, r)
	}
	return out, ""
}

// runBuilt builds the module out (C prefix prefix) with kit in a
// directory of t's and runs it for each of runtimeSeeds against want
// (oracleRuns'): its table entry, with an error when it is not bit-exact.
func runBuilt(t *testing.T, kit *harnessKit, prefix string, out *driver.Output, want []runLines) (string, error) {
	dir := t.TempDir()
	exe, err := kit.build(dir, prefix, "backend_heliac.c", writeFiles(t, dir, out.CFiles), nil)
	if err != nil {
		return "build error: " + firstErrorLine(err.Error()), err
	}
	for i, seed := range runtimeSeeds {
		got, err := kit.runHarness(exe, seed, runtimeInvokes, time.Minute)
		if err != nil {
			return "run error: " + oneLine(err.Error()), err
		}
		if e := got.error(); e != "" {
			return "error: " + oneLine(e), fmt.Errorf("seed %d: %s", seed, e)
		}
		if d := firstDifference(want[i], got); d != "" {
			return fmt.Sprintf("differs, seed %d: %s", seed, d), fmt.Errorf("seed %d: %s", seed, d)
		}
	}
	return "bit-exact", nil
}

// TestOneOpModelsCoverEveryOperator checks that the one-operator models
// hold every operator TFLM registers (kernels.TFLMBuiltinOps and
// TFLMCustomOps) but runtimeOpsExcluded's, so that
// TestRuntimeEveryOperator's sweep runs each, that their names are
// unique, and that runtimeOpsSample names models of each family.
func TestOneOpModelsCoverEveryOperator(t *testing.T) {
	seen := map[string]bool{}
	names := map[string]bool{}
	for _, m := range oneOpModels() {
		assert.False(t, names[m.name], "two one-operator models are named %s", m.name)
		names[m.name] = true
		for _, o := range modelOps(m) {
			seen[o] = true
		}
	}
	var missing []string
	for _, o := range registeredOps() {
		if !seen[o] && runtimeOpsExcluded[o] == "" {
			missing = append(missing, o)
		}
	}
	assert.Empty(t, missing, "operators TFLM registers that no one-operator model has (and runtimeOpsExcluded does not list)")
	for o, why := range runtimeOpsExcluded {
		assert.NotEmpty(t, why, "runtimeOpsExcluded says why it leaves out %s", o)
		assert.False(t, seen[o], "a one-operator model has %s, which runtimeOpsExcluded leaves out", o)
	}
	families := map[string]bool{}
	for _, m := range oneOpModels() {
		if _, ok := runtimeOpsSample[m.name]; ok {
			families[m.family] = true
		}
	}
	for n := range runtimeOpsSample {
		assert.True(t, names[n], "runtimeOpsSample names %s, which is no one-operator model", n)
	}
	for _, f := range oneOpFamilies {
		assert.True(t, families[f.name] || f.name == "signal", "runtimeOpsSample has a model of family %s", f.name)
	}
}
