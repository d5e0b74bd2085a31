package cortexm55_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// corpusModels are the corpus models the example runs besides the bundled
// ones: CNNs, audio (keyword spotting, wake word and voice activity, the
// last two streaming through resource variables), LSTMs and control flow,
// each quick under QEMU. All are models TFLM runs
// (../shared/bench/tflm-reference.tsv).
var corpusModels = []string{
	"ambiq/cnn_s_quantized.tflite",              // CNN, keyword spotting
	"mlperf-tiny/kws_ref_model.tflite",          // DS-CNN, keyword spotting
	"mlperf-tiny/pretrainedResnet_quant.tflite", // ResNet-8, image classification
	"tflite-micro/person_detect.tflite",         // MobileNet, person detection
	"tflite-micro/magic_wand.tflite",            // float CNN, gestures
	"esphome-mww/okay_nabu_v2.tflite",           // streaming wake word (resource variables)
	"esphome-mww/vad_v2.tflite",                 // streaming voice activity (resource variables)
	"tflite-micro/trained_lstm_int8.tflite",     // UNIDIRECTIONAL_SEQUENCE_LSTM
	"ambiq-nnse/LSTM_8x8bit.tflite",             // unrolled LSTM, speech enhancement
	"coral/keras_lstm_mnist_ptq.tflite",         // LSTM
	"mlperf-tiny/ad01_int8.tflite",              // autoencoder, anomaly detection
	"litert/multi_subgraphs_while.bin",          // WHILE
	"litert/call_once_mul.bin",                  // CALL_ONCE
}

// ciModels are the corpus models make test runs, with both kernel builds:
// a voice activity detector streaming through resource variables, with
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED for CMSIS-NN (the bundled
// models bring WHILE and CALL_ONCE, TestTFLiteCRunsInTFLM person_detect on
// the M55). HELIAC_FULL_SWEEP=1 or HELIAC_M55_MEASURE (make full-sweep,
// make bench-m55) run every one of corpusModels.
var ciModels = map[string]bool{"esphome-mww/vad_v2.tflite": true}

// shortModels run under -short.
var shortModels = map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true}

// seeds are the input seeds each model runs with, 3 invocations each.
var seeds = []int{1, 2}

// refModels are the models on which the harness over TFLM's
// MicroInterpreter (ref.elf) is checked against tflm_run_m55: the check of
// the harness itself on the board. The measured models build ref.elf too,
// for the flash and RAM figures.
var refModels = map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true}

// stagedModels also run with rules.py's rules (RULES=rules.py: every other
// small constant staged into SRAM from FLASH, the rest cold), so that the
// staging path runs too; the default rules (stage-none.yaml) stage none.
// make test stages the first only; make bench-m55 (measureEnv) all.
var stagedModels = map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
	"tflite-micro/person_detect.tflite": true}

// measuredModels are the models make test measures (make measure: flash
// and RAM against TFLM's MicroInterpreter, which builds ref.elf): one of
// each kind, to keep CI's minutes; make bench-m55 (measureEnv) measures
// every model, and both require heliac's program below TFLM on each.
var measuredModels = map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
	"tflite-micro/person_detect.tflite": true, "esphome-mww/vad_v2.tflite": true, "mlperf-tiny/kws_ref_model.tflite": true,
	"tflite-micro/trained_lstm_int8.tflite": true}

// measureEnv, set to a file's path, makes TestQEMU write every model's
// flash, RAM and instructions per inference against TFLM's
// MicroInterpreter (internal/cmd/m55size), with each kernel build, to the
// file (model=<name> and make measure's lines, per model and build:
// m55size -table prints them); make bench-m55 sets it. The test measures
// every model anyway.
const measureEnv = "HELIAC_M55_MEASURE"

// kernelBuild is one of TFLM's kernel builds the example links (its
// Makefile's KERNELS) and the runner, the same build under tflm_run,
// whose lines heliac's program must print.
type kernelBuild struct {
	name   string // KERNELS=
	lib    string // under ../shared/tflm/lib
	runner string // under ../shared/tools
}

// kernelBuilds are the builds every model runs with: TFLM's reference
// kernels, and CMSIS-NN's (their MVE code on the M55: heliac plans with
// --kernels cmsis-nn --cpu cortex-m55).
var kernelBuilds = []kernelBuild{
	{name: "reference", lib: "cortex-m55", runner: "tflm_run_m55"},
	{name: "cmsis-nn", lib: "cortex-m55-cmsis-nn", runner: "tflm_run_m55_cmsis"},
}

// env is what every model's build needs, found once: the heliac binary,
// the kernel builds there are libraries and runners for, and the
// model-independent objects (fixed) and TFLM's precompiled headers (pch,
// one per build) built once for all models.
type env struct {
	shared, heliac string
	builds         []kernelBuild
	fixed, pch     string
}

func setup(t *testing.T) env {
	t.Helper()
	shared := corpus.Require(t)
	for _, tool := range []string{"arm-none-eabi-g++", "qemu-system-arm", "make", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH", tool)
		}
	}
	e := env{shared: shared}
	for i, b := range kernelBuilds {
		missing := ""
		for _, p := range []string{filepath.Join(shared, "tools", b.runner), filepath.Join(shared, "tflm", "lib", b.lib, "libtflm.a")} {
			if _, err := os.Stat(p); err != nil {
				missing = p
			}
		}
		switch {
		case missing == "":
			e.builds = append(e.builds, b)
		case i == 0:
			t.Skipf("%s not found", missing)
		default:
			t.Logf("KERNELS=%s not run: %s not found", b.name, missing)
		}
	}
	e.heliac = filepath.Join(t.TempDir(), "heliac")
	build := exec.Command("go", "build", "-o", e.heliac, "./cmd/heliac")
	build.Dir = filepath.Join("..", "..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	e.fixed = t.TempDir()
	e.pch = filepath.Join(e.fixed, "tflm_pch.h")
	var objs []string
	for _, o := range []string{"startup.o", "syscalls.o", "debug_log.o", "harness.o"} {
		objs = append(objs, filepath.Join(e.fixed, o))
	}
	_, err = e.make(t, "", e.fixed, nil, objs...)
	require.NoError(t, err)
	for _, b := range e.builds {
		_, err = e.make(t, "", e.fixed, nil, "KERNELS="+b.name, "pch")
		require.NoError(t, err)
	}
	return e
}

// make runs the example's Makefile for one model into dir.
func (e env) make(t *testing.T, model, dir string, args []string, targets ...string) ([]byte, error) {
	t.Helper()
	argv := append([]string{"-s", "-C", "..", "MODEL=" + model, "OUT=" + dir, "HELIAC=" + e.heliac,
		"TFLM_DIR=" + filepath.Join(e.shared, "tflm"), "TIMEOUT=240", "FIXED=" + e.fixed, "PCH=" + e.pch,
		"ARGS=" + strings.Join(args, " ")}, targets...)
	cmd := exec.Command("make", argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("make %s: %w\n%s\n%s", strings.Join(targets, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), err
}

// results keeps the key=value lines that must match tflm_run's: each
// run's status, every output's digest, and the digest over them.
func results(out []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "invoke.") || strings.HasPrefix(l, "output.") || strings.HasPrefix(l, "outputs_digest=") || strings.HasPrefix(l, "error=") {
			lines = append(lines, l)
		}
	}
	return lines
}

// want runs the build's runner (tflm_run_m55, tflm_run_m55_cmsis) on the
// original model.
func (e env) want(t *testing.T, b kernelBuild, model string, seed int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e.shared, "tools", b.runner), "--seed", strconv.Itoa(seed), "--invokes", "3",
		"--arena-bytes", strconv.Itoa(16<<20), model)
	out, err := cmd.Output()
	require.NoError(t, err, "%s %s: %s", b.runner, model, out)
	return results(out)
}

// firstError returns the error= line of a program's output, or "".
func firstError(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if e, ok := strings.CutPrefix(l, "error="); ok {
			return e
		}
	}
	return "no error= line"
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(s, "\n", "\n      ")
}

// planArenas reads the plan's arenas: role, memory and source memory.
func planArenas(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p struct {
		Arenas []map[string]any `json:"arenas"`
	}
	require.NoError(t, json.Unmarshal(data, &p))
	return p.Arenas
}

// placed reports which placements the plan has: "scratch in DTCM",
// "staged SRAM<-FLASH", "cold FLASH".
func placed(arenas []map[string]any) map[string]bool {
	got := map[string]bool{}
	for _, a := range arenas {
		role, mem, src := a["role"], a["memory"], a["source_memory"]
		switch {
		case role == "scratch" && mem == "DTCM":
			got["scratch in DTCM"] = true
		case role == "constant" && mem == "SRAM" && src == "FLASH":
			got["staged SRAM<-FLASH"] = true
		case role == "constant" && mem == "FLASH":
			got["cold FLASH"] = true
		}
	}
	return got
}

// TestQEMU builds the example for the bundled models and a set of corpus
// models, each planned on the AN547's banks with the default rules
// (stage-none.yaml: scratch in DTCM, every constant cold in FLASH), with
// each of TFLM's kernel builds (KERNELS=reference, KERNELS=cmsis-nn), runs
// it under QEMU and compares every output line of the harness
// (driver/testdata/runtime) on heliac's module with the build's runner
// (tflm_run_m55, tflm_run_m55_cmsis) on the original model (two seeds,
// three invocations). The harness on TFLM's MicroInterpreter, on the same
// start-up code, linker script and kernels, must match the runner too
// (refModels). make measure must show heliac's program below TFLM's
// MicroInterpreter in flash and in RAM on every model it measures
// (measuredModels; every model with HELIAC_M55_MEASURE, make bench-m55),
// name the rules file and the kernels, and count instructions per
// inference for both; the figures are logged, and written with
// HELIAC_M55_MEASURE. stagedModels run again with constants staged into
// SRAM (RULES=rules.py, reference kernels), bit-exact too. The example's
// own main.c must run as well.
func TestQEMU(t *testing.T) {
	skipUnderRace(t)
	figuresPath := os.Getenv(measureEnv)
	measure := figuresPath != ""
	figures := &verdicts{m: map[string]string{}}
	e := setup(t)
	bundled, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	var models []string
	for _, m := range bundled {
		if !testing.Short() || shortModels[filepath.Base(m)] {
			abs, err := filepath.Abs(m)
			require.NoError(t, err)
			models = append(models, abs)
		}
	}
	if !testing.Short() {
		for _, m := range corpusModels {
			if measure || os.Getenv("HELIAC_FULL_SWEEP") != "" || ciModels[m] {
				models = append(models, filepath.Join(e.shared, "corpus", m))
			}
		}
	}
	report := &verdicts{m: map[string]string{}}
	// The models build and run two at a time (QEMU and the compilers are
	// single-threaded); the group returns when all have finished.
	t.Run("models", func(t *testing.T) {
		for _, model := range models {
			name := strings.TrimPrefix(model, filepath.Join(e.shared, "corpus")+"/")
			if strings.HasPrefix(name, "/") {
				name = filepath.Base(name)
			}
			for i, b := range e.builds {
				// The figures sort by model, then in kernelBuilds' order.
				key := fmt.Sprintf("%s %d %s", name, i, b.name)
				t.Run(b.name+"/"+name, func(t *testing.T) {
					t.Parallel()
					if fig := e.runModel(t, b, model, name, report, measure); fig != nil {
						figures.set(key, string(fig))
					}
				})
			}
		}
	})
	t.Logf("per model:\n%s", report)
	if measure {
		var out strings.Builder
		for _, key := range figures.names() {
			fmt.Fprintf(&out, "model=%s\n%s\n", strings.Fields(key)[0], figures.m[key])
		}
		require.NoError(t, os.WriteFile(figuresPath, []byte(out.String()), 0o644))
	}
}

// runModel is TestQEMU on one model with one kernel build; it returns
// make measure's lines when it measures the model.
func (e env) runModel(t *testing.T, b kernelBuild, model, name string, report *verdicts, measure bool) []byte {
	verdict := b.name + "/" + name
	report.set(verdict, "error")
	dir := t.TempDir()
	mk := func(dir string, args []string, targets ...string) ([]byte, error) {
		return e.make(t, model, dir, args, append([]string{"KERNELS=" + b.name}, targets...)...)
	}
	args := []string{"--seed", strconv.Itoa(seeds[0]), "--invokes", "3"}
	ref := refModels[name]
	measured := measure || measuredModels[name]
	targets := []string{"all", filepath.Join(dir, "check.elf")}
	if ref || measured {
		targets = append(targets, filepath.Join(dir, "ref.elf"))
	}
	_, err := mk(dir, args, targets...)
	if err != nil && strings.Contains(err.Error(), "TFLM has no kernel for it in this build of heliac") {
		// The runtime's operator table (emit/tflm_ops.go) does not
		// cover the model yet: nothing of this example to test.
		report.set(verdict, "skipped: heliac's runtime has no kernel for one of its operators")
		t.Skip(err)
	}
	require.NoError(t, err)

	got := placed(planArenas(t, filepath.Join(dir, "gen", "model.plan.json")))
	assert.True(t, got["scratch in DTCM"], "no scratch arena in DTCM: %v", got)
	assert.False(t, got["staged SRAM<-FLASH"], "the default rules stage no constant: %v", got)

	_, err = mk(dir, nil, "run")
	require.NoError(t, err, "the example's main.c")

	exact := true
	for i, seed := range seeds {
		args := []string{"--seed", strconv.Itoa(seed), "--invokes", "3"}
		want := e.want(t, b, model, seed)
		if i == 0 && ref {
			refOut, err := mk(dir, args, "check-ref")
			require.NoError(t, err)
			require.Equal(t, want, results(refOut), "TFLM's MicroInterpreter on the example's board differs from %s", b.runner)
		}
		out, err := mk(dir, args, "check")
		if err != nil {
			t.Log(err)
			report.set(verdict, "error: "+firstError(out))
			t.Fail()
			return nil
		}
		exact = assert.Equal(t, want, results(out), "seed %d: heliac's program differs from %s", seed, b.runner) && exact
	}
	report.set(verdict, map[bool]string{true: "bit-exact", false: "differs"}[exact])
	var fig []byte
	if measured {
		out, err := mk(dir, nil, "measure")
		require.NoError(t, err)
		fig = bytes.TrimSpace(out)
		report.add(verdict, "\n"+indent(string(fig)))
		belowTFLM(t, b, fig)
	}

	if b.name == "reference" && stagedModels[name] && (measure || name == "hello_world_int8.tflite") {
		staged := filepath.Join(dir, "staged")
		_, err := mk(staged, nil, "RULES=rules.py", filepath.Join(staged, "check.elf"))
		require.NoError(t, err)
		got := placed(planArenas(t, filepath.Join(staged, "gen", "model.plan.json")))
		rules, err := os.ReadFile(filepath.Join(staged, "gen", "rules.yaml"))
		require.NoError(t, err)
		require.Contains(t, string(rules), "tensor:", "rules.py stages some constant")
		assert.True(t, got["staged SRAM<-FLASH"], "RULES=rules.py: no constants staged into SRAM: %v", got)
		if !bytes.Contains(rules, []byte("# cold: 0\n")) {
			assert.True(t, got["cold FLASH"], "RULES=rules.py: no cold constants in FLASH: %v", got)
		}
		args := []string{"--seed", strconv.Itoa(seeds[0]), "--invokes", "3"}
		out, err := mk(staged, args, "RULES=rules.py", "check")
		require.NoError(t, err)
		if !assert.Equal(t, e.want(t, b, model, seeds[0]), results(out), "RULES=rules.py: heliac's program differs from %s", b.runner) {
			report.set(verdict, "differs with RULES=rules.py")
		}
	}
	return fig
}

// figureValues reads make measure's lines: each line's first key=value.
func figureValues(fig []byte) map[string]string {
	values := map[string]string{}
	for _, line := range strings.Split(string(fig), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if k, v, ok := strings.Cut(f[0], "="); ok {
				values[k] = v
			}
		}
	}
	return values
}

// belowTFLM checks make measure's figures: the rules file it names is the
// default (stage-none.yaml), the kernels the build's, heliac's program
// needs less flash and less RAM than TFLM's MicroInterpreter, and both
// programs' instructions per inference were counted.
func belowTFLM(t *testing.T, b kernelBuild, fig []byte) {
	t.Helper()
	values := figureValues(fig)
	assert.Equal(t, "stage-none.yaml", filepath.Base(values["rules"]), "make measure names the default rules:\n%s", fig)
	assert.Equal(t, b.name, values["kernels"], "make measure names the kernels:\n%s", fig)
	n := func(k string) int64 {
		v, err := strconv.ParseInt(values[k], 10, 64)
		require.NoError(t, err, "%s in:\n%s", k, fig)
		return v
	}
	assert.Less(t, n("flash_bytes.heliac"), n("flash_bytes.tflm"), "flash above TFLM's:\n%s", fig)
	assert.Less(t, n("ram_bytes.heliac"), n("ram_bytes.tflm"), "RAM above TFLM's:\n%s", fig)
	assert.Positive(t, n("insns_per_inference.heliac"), "heliac's instructions per inference:\n%s", fig)
	assert.Positive(t, n("insns_per_inference.tflm"), "TFLM's instructions per inference:\n%s", fig)
}

// verdicts collects each model's verdict from parallel subtests.
type verdicts struct {
	mu sync.Mutex
	m  map[string]string
}

func (v *verdicts) set(name, s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m[name] = s
}

func (v *verdicts) add(name, s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m[name] += s
}

// names are the models, sorted.
func (v *verdicts) names() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	names := make([]string, 0, len(v.m))
	for n := range v.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// String lists the verdicts by model name.
func (v *verdicts) String() string {
	names := v.names()
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-45s %s\n", n, v.m[n])
	}
	return b.String()
}
