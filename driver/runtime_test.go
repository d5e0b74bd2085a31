package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
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
	// multiBank plans it on runtimeBanks (runtimeBankRules) instead of
	// the generic platform.
	multiBank bool
}

// runtimeModels are the bundled models with -short, else every corpus
// model TFLM runs (status ok in ../shared/bench/tflm-reference.tsv); each
// on the generic platform (the CLI's default), and the bundled models
// and tflmArenaSubset's also on several banks with staged constants.
func runtimeModels(t *testing.T) []runtimeModel {
	var out []runtimeModel
	if testing.Short() {
		for _, f := range testModels(t) {
			out = append(out, runtimeModel{filepath.Base(f), f, false}, runtimeModel{filepath.Base(f), f, true})
		}
		return out
	}
	bundled := bundledNames(t)
	dir := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	for _, r := range rows {
		if r["status"] != "ok" {
			continue
		}
		m := runtimeModel{r["model"], filepath.Join(dir, "corpus", r["model"]), false}
		out = append(out, m)
		if bundled[emit.ModelName(m.name)] || tflmArenaSubset[m.name] {
			m.multiBank = true
			out = append(out, m)
		}
	}
	return out
}

// label names a model's run: its name, with "/multibank" on several banks.
func (m runtimeModel) label() string {
	if m.multiBank {
		return m.name + "/multibank"
	}
	return m.name
}

// runtimeBanks is a platform of two RAM banks and flash.
var runtimeBanks = &plan.Platform{Name: "banks", Banks: []plan.Bank{
	{Name: "DTCM", Writable: true}, {Name: "SRAM", Writable: true, Order: 1}, {Name: "FLASH", Order: 2}}}

// runtimeBankRules place m on runtimeBanks: scratch in DTCM, subgraph 0's
// outputs in SRAM, and every other constant with bytes (the first, the
// third, ...) staged from flash into SRAM, the rest read in place from
// flash.
func runtimeBankRules(m *graph.Model) []plan.Rule {
	rules := []plan.Rule{{Class: "scratch", Memory: "DTCM"}}
	sg := &m.Subgraphs[0]
	for _, id := range sg.Outputs {
		if id != graph.NoTensor && !m.HasData(&sg.Tensors[id]) && sg.Tensors[id].Size > 0 {
			rules = append(rules, plan.Rule{Tensor: fmt.Sprintf("0:%d", id), Memory: "SRAM"})
		}
	}
	n := 0
	for si := range m.Subgraphs {
		for id := range m.Subgraphs[si].Tensors {
			if tn := &m.Subgraphs[si].Tensors[id]; m.HasData(tn) && tn.Size > 0 {
				if n%2 == 0 {
					rules = append(rules, plan.Rule{Tensor: fmt.Sprintf("%d:%d", si, id), Memory: "SRAM", Source: "FLASH"})
				}
				n++
			}
		}
	}
	return rules
}

// runtimeKernels are the kernel options a runtime test plans with: the
// CLI's --kernels, --cpu and --tflm-target.
type runtimeKernels struct{ kernels, cpu, tflmTarget string }

// referenceKernels plan for TFLM's reference kernels on the host.
var referenceKernels = runtimeKernels{kernels: kernels.TFLMReference, tflmTarget: "host64"}

// runtimeConfig is the CLI's configuration with --runtime tflm and the
// kernel options k, for the host (64-bit pointers: tflm_run's and the host
// library's, whatever k's --tflm-target) and --constants incbin (hex
// initializers of megabytes compile slowly).
func runtimeConfig(t *testing.T, name string, k runtimeKernels) driver.Config {
	opts := heliac.Options{Name: emit.ModelName(name), Kernels: k.kernels, CPU: k.cpu, Constants: emit.ConstantsIncbin,
		TFLMTarget: k.tflmTarget, Runtime: string(emit.RuntimeTFLM), Version: "test"}
	cfg, err := opts.Config()
	require.NoError(t, err)
	cfg.Prefix = emit.CPrefix(emit.ModelName(name))
	cfg.Target.PointerSize = 8
	return cfg
}

// runtimeReferencePlans are the plans TestRuntimeBitExact runs under
// TFLM's reference kernels: one for them (--kernels tflm-reference), and
// the default (--kernels any), whose kernel-scratch rows are packed for
// several kernel builds and whose kernel data is sized for each, with
// "/any" after the model's label. bundled: make test runs the plan on the
// bundled models' corpus files besides every eighth corpus model.
var runtimeReferencePlans = []struct {
	suffix  string
	k       runtimeKernels
	bundled bool
}{
	{"", referenceKernels, false},
	{"/any", runtimeKernels{}, true},
}

// TestRuntimeBitExact is issue 22's first done-when check: for every
// corpus model TFLM runs (-short: the bundled models; make test: every
// eighth one, HELIAC_FULL_SWEEP=1 all), heliac's runtime
// (--runtime tflm, built for the host against ../shared/tflm) prints
// exactly tflm_run's output lines on the original model, for seeds 1..3
// with three invocations each, with each plan of runtimeReferencePlans
// (make test: the default plan on the bundled models' corpus files too);
// on the generic platform, and for some models (every bundled one) also
// on two RAM banks with staged and cold constants. It logs one line per
// model and plan: bit-exact, differs (the first differing line), or the
// compile, build or init error.
func TestRuntimeBitExact(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t, hostReference)
	arenas := oracleArenas(t)
	var table resultTable
	start := time.Now()
	full := os.Getenv(envFullSweep) != ""
	bundled := bundledNames(t)
	t.Run("models", func(t *testing.T) {
		for i, m := range runtimeModels(t) {
			eighth := full || testing.Short() || i%8 == 0 || !strings.Contains(m.path, string(filepath.Separator)+"corpus"+string(filepath.Separator))
			for _, p := range runtimeReferencePlans {
				// make test runs every eighth corpus model, and the default
				// plan on the bundled models' too; HELIAC_FULL_SWEEP=1 all.
				if !eighth && (!p.bundled || !bundled[emit.ModelName(m.name)] || m.multiBank) {
					continue
				}
				label := m.label() + p.suffix
				t.Run(label, func(t *testing.T) {
					t.Parallel()
					result, err := runtimeCheck(t, kit, tool, m, p.k, arenas[emit.ModelName(m.name)])
					table.set(label, result)
					if err != nil {
						t.Error(err)
					}
				})
			}
		}
	})
	table.log(t, fmt.Sprintf("heliac's runtime vs tflm_run, seeds %v x %d invocations, %v", runtimeSeeds, runtimeInvokes, time.Since(start).Round(time.Second)))
}

// compileRuntime compiles m with runtimeConfig for the kernels k (on
// runtimeBanks for a multi-bank run, checked to use them: scratch in DTCM,
// outputs in SRAM, a staged constant arena).
func compileRuntime(t *testing.T, m runtimeModel, k runtimeKernels) (driver.Config, *driver.Output, error) {
	data, err := os.ReadFile(m.path)
	require.NoError(t, err)
	cfg := runtimeConfig(t, m.name, k)
	if m.multiBank {
		g, err := tflite.Load(data)
		require.NoError(t, err)
		cfg.Plan.Platform, cfg.Plan.Rules = runtimeBanks, runtimeBankRules(g)
	}
	out, err := driver.Compile(context.Background(), data, cfg)
	if err != nil {
		return cfg, nil, err
	}
	if m.multiBank {
		used, staged := map[string]bool{}, false
		for _, a := range out.Plan.Arenas {
			used[a.Memory] = used[a.Memory] || a.Size > 0 && a.Role != liveness.Constant
			staged = staged || a.Size > 0 && a.Staged()
		}
		assert.True(t, used["DTCM"], "%s: scratch in DTCM", m.name)
		if slices.ContainsFunc(cfg.Plan.Rules, func(r plan.Rule) bool { return r.Tensor != "" && r.Source == "" }) {
			assert.True(t, used["SRAM"], "%s: outputs in SRAM", m.name)
		}
		if slices.ContainsFunc(cfg.Plan.Rules, func(r plan.Rule) bool { return r.Source != "" }) {
			assert.True(t, staged, "%s: a constant arena is staged", m.name)
		}
	}
	return cfg, out, nil
}

// runtimeCheck compiles m for the kernels k, builds it with kit and runs
// it against tool (tflm_run, or the runner of kit's library) and returns
// its table entry, with an error when it is not bit-exact.
func runtimeCheck(t *testing.T, kit *harnessKit, tool string, m runtimeModel, k runtimeKernels, arena int64) (string, error) {
	cfg, out, err := compileRuntime(t, m, k)
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
		require.Empty(t, want.error(), "%s runs %s", filepath.Base(tool), m.name)
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
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t, hostReference)
	models := []runtimeModel{}
	for _, f := range testModels(t) {
		switch filepath.Base(f) {
		case "hello_world_int8.tflite", "multi_subgraphs_while.tflite":
			models = append(models, runtimeModel{name: filepath.Base(f), path: f})
		}
	}
	if !testing.Short() {
		dir := corpus.Require(t)
		for _, f := range []string{"tflite-micro/audio_preprocessor_int8.tflite", "tflite-micro/person_detect.tflite",
			"tflite-micro/trained_lstm.tflite", "litert/add_shared_tensors.bin"} {
			models = append(models, runtimeModel{name: f, path: filepath.Join(dir, "corpus", f)})
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
			srcs := writeFiles(t, dir, emit.TFLiteC(cfg.Prefix, out.Model, out.Plan, out.Meta, data))
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
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t, hostReference)
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
			cfg := runtimeConfig(t, name, referenceKernels)
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

// TestRuntimeBrokenPlans is the proof that the comparison bites: the
// runtime's sources or the plan's tables changed on purpose make init fail
// with the status and message that say why, or make the outputs differ
// from tflm_run's; and a second init starts the model over. The harness
// as planned links nothing of TFLM's interpreter or allocator.
func TestRuntimeBrokenPlans(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("builds the runtime six times")
	}
	tool := tflmrun.Require(t)
	kit := needHarnessKit(t, hostReference)
	bundled := func(name string, multiBank bool) runtimeModel {
		return runtimeModel{name + ".tflite", filepath.Join("..", "testdata", "models", name+".tflite"), multiBank}
	}
	hello := bundled("hello_world_int8", false)
	want, err := oracle(tool, hello.path, 1, 2, 0)
	require.NoError(t, err)
	// build compiles m into a directory of t's, lets edit change its files
	// there, builds the harness with defines and runs it with seed 1 and
	// invokes.
	build := func(t *testing.T, m runtimeModel, edit func(dir, prefix string), invokes int, defines ...string) (string, runLines) {
		cfg, out, err := compileRuntime(t, m, referenceKernels)
		require.NoError(t, err)
		dir := t.TempDir()
		srcs := writeFiles(t, dir, out.CFiles)
		if edit != nil {
			edit(dir, cfg.Prefix)
		}
		exe, err := kit.build(dir, cfg.Prefix, "backend_heliac.c", srcs, defines)
		require.NoError(t, err)
		got, err := kit.runHarness(exe, 1, invokes, time.Minute)
		require.NoError(t, err)
		return exe, got
	}

	t.Run("as planned", func(t *testing.T) {
		t.Parallel()
		exe, got := build(t, bundled("hello_world_int8", true), nil, 2)
		assert.Empty(t, firstDifference(want, got))
		nm, err := exec.LookPath("nm")
		if err != nil {
			t.Skip("nm not on PATH")
		}
		syms, err := exec.Command(nm, "-C", exe).Output()
		require.NoError(t, err)
		assert.Contains(t, string(syms), "tflite::Register_FULLY_CONNECTED", "nm sees TFLM's symbols")
		for _, s := range []string{"tflite::MicroInterpreter", "tflite::MicroAllocator", "tflite::GetModel"} {
			assert.NotContains(t, string(syms), s, "nothing of TFLM's interpreter or allocator is linked")
		}
	})
	t.Run("init again", func(t *testing.T) {
		// call_once_mul's CALL_ONCE sets its resource variables on the
		// first invoke only: after an invoke, a second init must start the
		// model over (kernel data, variables), as TFLM's AllocateTensors
		// does, for the outputs to be tflm_run's.
		t.Parallel()
		m := bundled("call_once_mul", false)
		_, got := build(t, m, nil, 3, "-DHARNESS_INIT_TWICE")
		wantOnce, err := oracle(tool, m.path, 1, 3, 0)
		require.NoError(t, err)
		require.Empty(t, got.error())
		assert.Empty(t, firstDifference(wantOnce, got))
	})
	t.Run("kernel state 16 bytes short", func(t *testing.T) {
		t.Parallel()
		var need int
		_, got := build(t, hello, func(dir, prefix string) {
			re := regexp.MustCompile(`(?m)^#else\nconstexpr size_t kKernelStateBytes = (\d+);`)
			rewrite(t, filepath.Join(dir, prefix+emit.TFLMSuffix), re, func(m []string) string {
				need, _ = strconv.Atoi(m[1])
				return fmt.Sprintf("#else\nconstexpr size_t kKernelStateBytes = %d;", need-16)
			})
		}, 2)
		assert.NotZero(t, need)
		assert.Equal(t, "error", got.values["status"])
		assert.Contains(t, got.values["error"], "init: status 8: ", "ERR_KERNEL_STATE")
		assert.Contains(t, got.values["error"], "kernel data needs at least")
	})
	t.Run("overlapping tensors", func(t *testing.T) {
		// Tensors 7 and 8 are FULLY_CONNECTED 0:1's input and output:
		// give 8 the bytes of 7.
		t.Parallel()
		_, got := build(t, hello, func(dir, prefix string) {
			src := filepath.Join(dir, prefix+".c")
			b, err := os.ReadFile(src)
			require.NoError(t, err)
			row := regexp.MustCompile(`(?m)^\t\{0u, 7u, (\w+), \w+, \d+u, (\d+)u, `).FindSubmatch(b)
			require.NotNil(t, row)
			rewrite(t, src, regexp.MustCompile(`(?m)^\t\{0u, 8u, (\w+), (\w+), (\d+u), (\d+)u, `), func(m []string) string {
				return fmt.Sprintf("\t{0u, 8u, %s, %s, %s, %su, ", row[1], m[2], m[3], row[2])
			})
		}, 2)
		require.Empty(t, got.error())
		assert.NotEmpty(t, firstDifference(want, got))
	})
	t.Run("staged arena not hydrated", func(t *testing.T) {
		t.Parallel()
		_, got := build(t, bundled("hello_world_int8", true), nil, 2, "-DHARNESS_NO_HYDRATE")
		assert.NotEmpty(t, firstDifference(want, got))
	})
	t.Run("kernel scratch not as planned", func(t *testing.T) {
		t.Parallel()
		var asked int
		_, got := build(t, bundled("keyword_scrambled_8bit", false), func(dir, prefix string) {
			re := regexp.MustCompile(`(?m)^(\t\{\d+u, \d+u, \d+u, \w+, \d+u, )(\d+)u\}, /\* \[0\]`)
			rewrite(t, filepath.Join(dir, prefix+".c"), re, func(m []string) string {
				asked, _ = strconv.Atoi(m[2])
				return fmt.Sprintf("%s%du}, /* [0]", m[1], asked+4)
			})
		}, 1)
		assert.Equal(t, "error", got.values["status"])
		assert.Contains(t, got.values["error"], "init: status 9: ", "ERR_SCRATCH")
		assert.Regexp(t, fmt.Sprintf(`operator 0:\d+ SVDF: asks for %d bytes of scratch \(buffer 0\); the plan gives it %d`, asked, asked+4),
			got.values["error"])
	})
}

// rewrite replaces the first match of re in the file at path by repl (a
// function of the match's groups), failing when nothing matches.
func rewrite(t *testing.T, path string, re *regexp.Regexp, repl func(m []string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	loc := re.FindSubmatchIndex(b)
	require.NotNil(t, loc, "%s has no %s", path, re)
	var groups []string
	for i := 0; i < len(loc); i += 2 {
		groups = append(groups, string(b[loc[i]:loc[i+1]]))
	}
	out := append(append(append([]byte{}, b[:loc[0]]...), repl(groups)...), b[loc[1]:]...)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// bundledNames are the model names (emit.ModelName) of the bundled
// models, whose corpus files the runtime sweeps run in make test.
func bundledNames(t *testing.T) map[string]bool {
	names := map[string]bool{}
	for _, f := range testModels(t) {
		names[emit.ModelName(f)] = true
	}
	return names
}
