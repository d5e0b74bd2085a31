// Package exampletest runs an example board (examples/cortex-m55,
// examples/cortex-m4) under QEMU for the boards' tests: it builds each
// model with the board's Makefile (../common/board.mk's targets), with each
// of TFLM's kernel builds, and compares the harness's lines on heliac's
// module with the board's runner on the original model; it checks the
// plan's placement on the board's banks, runs make measure against TFLM's
// MicroInterpreter and collects the figures. Input: a Board (the board's
// banks, runners and model lists); output: subtests and their verdicts. It
// imports no heliac package but internal/corpus (the reference material).
package exampletest

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

// CorpusModels are the corpus models the examples run besides the bundled
// ones: CNNs, audio (keyword spotting, wake word and voice activity, the
// last two streaming through resource variables), LSTMs and control flow,
// each quick under QEMU and small enough for either board. All are models
// TFLM runs (../shared/bench/tflm-reference.tsv).
var CorpusModels = []string{
	"ambiq/cnn_s_quantized.tflite",                 // CNN, keyword spotting
	"mlperf-tiny/kws_ref_model.tflite",             // DS-CNN, keyword spotting
	"mlperf-tiny/pretrainedResnet_quant.tflite",    // ResNet-8, image classification
	"tflite-micro/person_detect.tflite",            // MobileNet, person detection
	"tflite-micro/magic_wand.tflite",               // float CNN, gestures
	"esphome-mww/okay_nabu_v2.tflite",              // streaming wake word (resource variables)
	"esphome-mww/vad_v2.tflite",                    // streaming voice activity (resource variables)
	"tflite-micro/trained_lstm_int8.tflite",        // UNIDIRECTIONAL_SEQUENCE_LSTM
	"ambiq-nnse/LSTM_8x8bit.tflite",                // unrolled LSTM, speech enhancement
	"coral/keras_lstm_mnist_ptq.tflite",            // LSTM
	"mlperf-tiny/ad01_int8.tflite",                 // autoencoder, anomaly detection
	"litert/multi_subgraphs_while.bin",             // WHILE
	"litert/call_once_mul.bin",                     // CALL_ONCE
	"mlperf-tiny/vww_96_int8.tflite",               // MobileNet, visual wake words
	"mlperf-tiny/ad01_fp32.tflite",                 // float autoencoder, anomaly detection
	"tflite-micro/keyword_scrambled.tflite",        // keyword spotting, int16 activations
	"tflite-micro/audio_preprocessor_float.tflite", // audio front end, float
	"tflite-micro/seanet_conv10.tflite",            // SEANet convolution, audio
	"tflite-micro/seanet_transpose_conv0.tflite",   // SEANet TRANSPOSE_CONV, audio
	"tflite-micro/trained_lstm.tflite",             // float UNIDIRECTIONAL_SEQUENCE_LSTM
	"go-tflite/text_classification.tflite",         // embedding and pooling, text
	"tflite-micro/model_runner_model.tflite",       // small CNN
	"litert/fc_qat.bin",                            // FULLY_CONNECTED, quantization-aware
	"go-tflite/iris.tflite",                        // float MLP
}

// seeds are the input seeds each model runs with, 3 invocations each.
var seeds = []int{1, 2}

// Board is one example board as its test runs it.
type Board struct {
	// Builds are TFLM's kernel builds every model runs with; the first
	// is required (the test skips without its library or runner), the
	// others run when theirs are there.
	Builds []KernelBuild
	// RefArenaBytes is the arena the runner gets (--arena-bytes), as the
	// board's Makefile gives its reference (REF_ARENA_BYTES).
	RefArenaBytes int
	// Scratch is the bank scratch arenas go to; Stage the bank rules.py
	// stages constants into; Image the read-only bank constants are read
	// from in place (the board's flash).
	Scratch, Stage, Image string
	// MeasureEnv, set to a file's path, makes Run write every model's
	// flash, RAM and instructions per inference against TFLM's
	// MicroInterpreter (internal/cmd/boardsize), with each kernel build,
	// to the file (model=<name> and make measure's lines, per model and
	// build: boardsize -table prints them); the root Makefile's bench
	// target for the board sets it. Run measures every model then.
	MeasureEnv string
	// CorpusModels run with HELIAC_FULL_SWEEP=1 or MeasureEnv, as every
	// bundled model does; CIModels, of them, always (make test);
	// ShortModels (bundled) alone under -short and, with CIModels, in make
	// test.
	CorpusModels []string
	// Excluded are CorpusModels the board does not run, each with the
	// reason (a model that does not fit its banks, say).
	Excluded              map[string]string
	CIModels, ShortModels map[string]bool
	// RefModels are the models on which the harness over TFLM's
	// MicroInterpreter (ref.elf) is checked against the runner: the check
	// of the harness itself on the board.
	RefModels map[string]bool
	// StagedModels also run with rules.py's rules (RULES=rules.py), with
	// the first kernel build: hello_world_int8 always, all with
	// MeasureEnv.
	StagedModels map[string]bool
	// MeasuredModels run make measure (every model with MeasureEnv).
	MeasuredModels map[string]bool
}

// KernelBuild is one of TFLM's kernel builds the example links (its
// Makefile's KERNELS) and the runner, the same build under tflm_run,
// whose lines heliac's program must print.
type KernelBuild struct {
	Name   string // KERNELS=
	Lib    string // under ../shared/tflm/lib
	Runner string // under ../shared/tools
}

// env is what every model's build needs, found once: the heliac binary,
// the kernel builds there are libraries and runners for, and the
// model-independent objects (fixed) and TFLM's precompiled headers (pch,
// one per build) built once for all models.
type env struct {
	Board
	shared, heliac string
	builds         []KernelBuild
	fixed, pch     string
}

func setup(t *testing.T, board Board) env {
	t.Helper()
	shared := corpus.Require(t)
	for _, tool := range []string{"arm-none-eabi-g++", "qemu-system-arm", "make", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH", tool)
		}
	}
	e := env{Board: board, shared: shared}
	for i, b := range board.Builds {
		missing := ""
		for _, p := range []string{filepath.Join(shared, "tools", b.Runner), filepath.Join(shared, "tflm", "lib", b.Lib, "libtflm.a")} {
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
			t.Logf("KERNELS=%s not run: %s not found", b.Name, missing)
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
		_, err = e.make(t, "", e.fixed, nil, "KERNELS="+b.Name, "pch")
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

// want runs the build's runner (tflm_run_m55, tflm_run_m4_cmsis, ...) on
// the original model.
func (e env) want(t *testing.T, b KernelBuild, model string, seed int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(e.shared, "tools", b.Runner), "--seed", strconv.Itoa(seed), "--invokes", "3",
		"--arena-bytes", strconv.Itoa(e.RefArenaBytes), model)
	out, err := cmd.Output()
	require.NoError(t, err, "%s %s: %s", b.Runner, model, out)
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

// Placements the plan may have.
const (
	scratchPlaced = "scratch in the scratch bank"
	stagedPlaced  = "staged into the stage bank from the image"
	coldPlaced    = "cold in the image"
)

// placed reports which placements the plan has on the board's banks.
func (b Board) placed(arenas []map[string]any) map[string]bool {
	got := map[string]bool{}
	for _, a := range arenas {
		role, mem, src := a["role"], a["memory"], a["source_memory"]
		switch {
		case role == "scratch" && mem == b.Scratch:
			got[scratchPlaced] = true
		case role == "constant" && mem == b.Stage && src == b.Image:
			got[stagedPlaced] = true
		case role == "constant" && mem == b.Image:
			got[coldPlaced] = true
		}
	}
	return got
}

// Run is the board's TestQEMU (see examples/cortex-m55/test): it builds
// the example for the bundled models and the board's corpus models, each
// planned on the board's banks with the default rules (stage-none.yaml:
// scratch in the scratch bank, every constant cold in the image), with
// each kernel build, runs it under QEMU and compares every output line of
// the harness (driver/testdata/runtime) on heliac's module with the
// build's runner on the original model (two seeds, three invocations).
// The harness on TFLM's MicroInterpreter, on the same start-up code,
// linker script and kernels, must match the runner too (RefModels). make
// measure must show heliac's program below TFLM's MicroInterpreter in
// flash and in RAM on every model it measures (MeasuredModels; every
// model with MeasureEnv), name the rules file and the kernels, and count
// instructions per inference for both; the figures are logged, and
// written with MeasureEnv. StagedModels run again with constants staged
// (RULES=rules.py, the first kernel build), bit-exact too. The example's
// own main.c must run as well. The caller skips under the race detector.
// Run runs from the board's test folder (examples/<board>/test): the
// board's Makefile is in .., the repository at ../../...
func Run(t *testing.T, board Board) {
	figuresPath := os.Getenv(board.MeasureEnv)
	measure := figuresPath != ""
	figures := &verdicts{m: map[string]string{}}
	e := setup(t, board)
	bundled, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	var models []string
	// Every bundled model with HELIAC_FULL_SWEEP=1 or MeasureEnv; make
	// test and -short run ShortModels of them (make test's 15 minutes hold
	// two boards, two kernel builds each, on a few models).
	whole := measure || os.Getenv("HELIAC_FULL_SWEEP") != ""
	for _, m := range bundled {
		if whole || e.ShortModels[filepath.Base(m)] {
			abs, err := filepath.Abs(m)
			require.NoError(t, err)
			models = append(models, abs)
		}
	}
	if !testing.Short() {
		for _, m := range e.CorpusModels {
			if reason, ok := e.Excluded[m]; ok {
				t.Logf("%s not run on this board: %s", m, reason)
				continue
			}
			if whole || e.CIModels[m] {
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
				// The figures sort by model, then in KernelBuilds' order.
				key := fmt.Sprintf("%s %d %s", name, i, b.Name)
				t.Run(b.Name+"/"+name, func(t *testing.T) {
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
func (e env) runModel(t *testing.T, b KernelBuild, model, name string, report *verdicts, measure bool) []byte {
	verdict := b.Name + "/" + name
	report.set(verdict, "error")
	dir := t.TempDir()
	mk := func(dir string, args []string, targets ...string) ([]byte, error) {
		return e.make(t, model, dir, args, append([]string{"KERNELS=" + b.Name}, targets...)...)
	}
	args := []string{"--seed", strconv.Itoa(seeds[0]), "--invokes", "3"}
	ref := e.RefModels[name]
	measured := measure || e.MeasuredModels[name]
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

	got := e.placed(planArenas(t, filepath.Join(dir, "gen", "model.plan.json")))
	assert.True(t, got[scratchPlaced], "no scratch arena in %s: %v", e.Scratch, got)
	assert.False(t, got[stagedPlaced], "the default rules stage no constant: %v", got)

	_, err = mk(dir, nil, "run")
	require.NoError(t, err, "the example's main.c")

	exact := true
	for i, seed := range seeds {
		args := []string{"--seed", strconv.Itoa(seed), "--invokes", "3"}
		want := e.want(t, b, model, seed)
		if i == 0 && ref {
			refOut, err := mk(dir, args, "check-ref")
			require.NoError(t, err)
			require.Equal(t, want, results(refOut), "TFLM's MicroInterpreter on the example's board differs from %s", b.Runner)
		}
		out, err := mk(dir, args, "check")
		if err != nil {
			t.Log(err)
			report.set(verdict, "error: "+firstError(out))
			t.Fail()
			return nil
		}
		exact = assert.Equal(t, want, results(out), "seed %d: heliac's program differs from %s", seed, b.Runner) && exact
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

	if b.Name == e.Builds[0].Name && e.StagedModels[name] && (measure || name == "hello_world_int8.tflite") {
		staged := filepath.Join(dir, "staged")
		_, err := mk(staged, nil, "RULES=rules.py", filepath.Join(staged, "check.elf"))
		require.NoError(t, err)
		got := e.placed(planArenas(t, filepath.Join(staged, "gen", "model.plan.json")))
		rules, err := os.ReadFile(filepath.Join(staged, "gen", "rules.yaml"))
		require.NoError(t, err)
		require.Contains(t, string(rules), "tensor:", "rules.py stages some constant")
		assert.True(t, got[stagedPlaced], "RULES=rules.py: no constants staged into %s from %s: %v", e.Stage, e.Image, got)
		if !bytes.Contains(rules, []byte("# cold: 0\n")) {
			assert.True(t, got[coldPlaced], "RULES=rules.py: no cold constants in %s: %v", e.Image, got)
		}
		args := []string{"--seed", strconv.Itoa(seeds[0]), "--invokes", "3"}
		out, err := mk(staged, args, "RULES=rules.py", "check")
		require.NoError(t, err)
		if !assert.Equal(t, e.want(t, b, model, seeds[0]), results(out), "RULES=rules.py: heliac's program differs from %s", b.Runner) {
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
func belowTFLM(t *testing.T, b KernelBuild, fig []byte) {
	t.Helper()
	values := figureValues(fig)
	assert.Equal(t, "stage-none.yaml", filepath.Base(values["rules"]), "make measure names the default rules:\n%s", fig)
	assert.Equal(t, b.Name, values["kernels"], "make measure names the kernels:\n%s", fig)
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
