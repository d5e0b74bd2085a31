package driver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
)

// The runtime harness (testdata/runtime, README.md there) runs a model
// through one backend, heliac's runtime or TFLM's MicroInterpreter, and
// prints tflm_run's output lines; the helpers here build it and compare
// what it prints with tflm_run's.

// runtimeHarnessDir holds the harness's sources.
var runtimeHarnessDir = filepath.Join("testdata", "runtime")

// harnessKit builds harness programs against one of TFLM's host libraries:
// compilers, TFLM's SDK, and the model-independent parts compiled once per
// test run and library (harness.o, debug_log.o and tflm_pch.h's precompiled
// header). At most two builds or runs go at a time, over all kits (the
// machine may have two cores).
type harnessKit struct {
	gcc, gxx string
	sdk      string   // ../shared/tflm
	lib      tflmLib  // the library programs link
	src      string   // absolute testdata/runtime
	objs     []string // harness.o, debug_log.o
	pch      string   // the precompiled tflm_pch.h, for -include
	sem      chan struct{}
}

// tflmLib is one of ../shared/tflm's prebuilt libraries
// (../shared/tflm/README.md): its directory under lib/, and whether code
// that includes TFLM's headers defines CMSIS_NN with it (only with the
// CMSIS-NN libraries).
type tflmLib struct {
	dir     string
	cmsisNN bool
}

// archive is the library's libtflm.a under sdk (../shared/tflm).
func (l tflmLib) archive(sdk string) string { return filepath.Join(sdk, "lib", l.dir, "libtflm.a") }

// The host libraries: TFLM's reference kernels (tflm_run's) and its CMSIS-NN
// kernels, their portable C (tflm_run_cmsis's).
var (
	hostReference = tflmLib{dir: "host-x86_64"}
	hostCMSISNN   = tflmLib{dir: "host-x86_64-cmsis-nn", cmsisNN: true}
)

// The kits are built once per test binary and library, on first need, in
// kitDir (removed by TestMain); kitSem bounds their builds and runs
// together.
var (
	kitMu  sync.Mutex
	kitDir string
	kits   = map[tflmLib]*kitOnce{}
	kitSem = make(chan struct{}, 2)
)

// kitOnce is one library's kit, built once.
type kitOnce struct {
	once sync.Once
	kit  *harnessKit
	err  error
}

// needHarnessKit returns the kit that links lib, built on first call, or
// skips t when gcc, g++ or the library is missing.
func needHarnessKit(t *testing.T, lib tflmLib) *harnessKit {
	t.Helper()
	gcc := needGCC(t)
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not on PATH")
	}
	shared := corpus.Require(t)
	sdk := filepath.Join(shared, "tflm")
	if _, err := os.Stat(lib.archive(sdk)); err != nil {
		t.Skipf("../shared/tflm/lib/%s/libtflm.a not found", lib.dir)
	}
	kitMu.Lock()
	k := kits[lib]
	if k == nil {
		k = &kitOnce{}
		kits[lib] = k
	}
	if kitDir == "" {
		if kitDir, err = os.MkdirTemp("", "heliac-harness-"); err != nil {
			kitMu.Unlock()
			require.NoError(t, err)
		}
	}
	root := kitDir
	kitMu.Unlock()
	k.once.Do(func() {
		var src string
		if src, k.err = filepath.Abs(runtimeHarnessDir); k.err != nil {
			return
		}
		dir := filepath.Join(root, lib.dir)
		if k.err = os.Mkdir(dir, 0o755); k.err != nil {
			return
		}
		k.kit, k.err = newHarnessKit(dir, gcc, gxx, sdk, src, lib)
	})
	require.NoError(t, k.err, "building the harness's fixed parts for %s", lib.dir)
	return k.kit
}

// newHarnessKit compiles the fixed parts into dir: the harness's C and the
// precompiled header, checked to be used (g++ -H marks it "!"); an
// unusable one is an error (-Winvalid-pch -Werror).
func newHarnessKit(dir, gcc, gxx, sdk, src string, lib tflmLib) (*harnessKit, error) {
	k := &harnessKit{gcc: gcc, gxx: gxx, sdk: sdk, lib: lib, src: src, sem: kitSem}
	for _, f := range []string{"harness.c", "debug_log.c"} {
		obj := filepath.Join(dir, strings.TrimSuffix(f, ".c")+".o")
		if err := k.run(dir, gcc, append(k.cFlags(), "-c", filepath.Join(src, f), "-o", obj)...); err != nil {
			return nil, err
		}
		k.objs = append(k.objs, obj)
	}
	h, err := os.ReadFile(filepath.Join(src, "tflm_pch.h"))
	if err != nil {
		return nil, err
	}
	pch := filepath.Join(dir, "tflm_pch.h")
	if err := os.WriteFile(pch, h, 0o644); err != nil {
		return nil, err
	}
	if err := k.run(dir, gxx, append(k.cxxFlags(), "-x", "c++-header", pch, "-o", pch+".gch")...); err != nil {
		return nil, err
	}
	k.pch = pch
	probe := filepath.Join(dir, "probe.cc")
	if err := os.WriteFile(probe, []byte("int probe;\n"), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(gxx, append(k.cxxFlags(), "-H", "-fsyntax-only", probe)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("! "+pch+".gch")) {
		return nil, fmt.Errorf("g++ does not use the precompiled %s.gch (%v):\n%.2000s", pch, err, out)
	}
	return k, nil
}

// removeHarnessKit removes the kits' directory, if one was built.
func removeHarnessKit() {
	if kitDir != "" {
		os.RemoveAll(kitDir)
	}
}

// cFlags are the flags of the harness's and the module's C; with a CMSIS-NN
// library -DCMSIS_NN, which the module's header checks against the plan's
// kernels (emit's kernelGuard).
func (k *harnessKit) cFlags() []string {
	flags := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", k.src}
	if k.lib.cmsisNN {
		flags = append(flags, "-DCMSIS_NN")
	}
	return flags
}

// cxxFlags are the flags of C++ that includes TFLM's headers
// (../shared/tflm/README.md), with -DCMSIS_NN for a CMSIS-NN library; its
// headers are system headers, so -Wextra judges only our code. -O1: the
// kernels (the library) are at -O2; the generated code only calls them,
// and compiles faster. Once the precompiled header is built, every compile
// includes it first.
func (k *harnessKit) cxxFlags() []string {
	flags := []string{"-std=c++17", "-O1", "-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY",
		"-Wall", "-Wextra", "-Werror", "-isystem", filepath.Join(k.sdk, "include"), "-I", k.src}
	if k.lib.cmsisNN {
		flags = append(flags, "-DCMSIS_NN")
	}
	if k.pch != "" {
		flags = append(flags, "-include", k.pch, "-Winvalid-pch")
	}
	return flags
}

// run runs a compiler in dir; the error carries its output.
func (k *harnessKit) run(dir, tool string, args ...string) error {
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(tool), strings.Join(args, " "), err, out)
	}
	return nil
}

// build compiles backend (a file of testdata/runtime) for the module
// whose files are in dir with C prefix prefix, with srcs (files in dir:
// .c, .cc, .S) and the fixed objects, into dir/harness. defines are
// extra -D flags of the backend.
func (k *harnessKit) build(dir, prefix, backend string, srcs, defines []string) (string, error) {
	k.sem <- struct{}{}
	defer func() { <-k.sem }()
	objs := slices.Clone(k.objs)
	def := append([]string{"-DHELIAC_PREFIX=" + prefix, "-I", dir}, defines...)
	for _, f := range append([]string{filepath.Join(k.src, backend)}, srcs...) {
		obj := filepath.Join(dir, filepath.Base(f)+".o")
		var err error
		switch filepath.Ext(f) {
		case ".cc":
			err = k.run(dir, k.gxx, append(append(k.cxxFlags(), def...), "-c", f, "-o", obj)...)
		case ".S":
			err = k.run(dir, k.gcc, "-c", f, "-o", obj)
		default:
			err = k.run(dir, k.gcc, append(append(k.cFlags(), def...), "-c", f, "-o", obj)...)
		}
		if err != nil {
			return "", err
		}
		objs = append(objs, obj)
	}
	exe := filepath.Join(dir, "harness")
	args := append(objs, k.lib.archive(k.sdk), "-lm", "-o", exe)
	return exe, k.run(dir, k.gxx, args...)
}

// runLines is what one run printed, in order, as key and value.
type runLines struct {
	keys   []string
	values map[string]string
}

func parseRunLines(out []byte) runLines {
	r := runLines{values: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			r.keys = append(r.keys, k)
			r.values[k] = v
		}
	}
	return r
}

// outputLines are the lines a run's outputs compare by: every
// output.<k>.<i>= line in order, then outputs_digest=.
func (r runLines) outputLines() []string {
	var out []string
	for _, k := range r.keys {
		if strings.HasPrefix(k, "output.") || k == "outputs_digest" {
			out = append(out, k+"="+r.values[k])
		}
	}
	return out
}

// error is what went wrong in a run that failed, or "".
func (r runLines) error() string {
	if r.values["status"] != "ok" {
		return "init: " + r.values["error"]
	}
	for _, k := range r.keys {
		if strings.HasPrefix(k, "invoke.") && r.values[k] != "ok" {
			return k + ": " + r.values["error"]
		}
	}
	return ""
}

// runHarness runs a harness program with seed and invokes; a run that does
// not end within limit is killed (a runtime looping on a bad plan).
func (k *harnessKit) runHarness(exe string, seed, invokes int, limit time.Duration) (runLines, error) {
	k.sem <- struct{}{}
	defer func() { <-k.sem }()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "--seed", strconv.Itoa(seed), "--invokes", strconv.Itoa(invokes))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := parseRunLines(stdout.Bytes())
	if ctx.Err() != nil {
		return r, fmt.Errorf("ran past %v", limit)
	}
	if err != nil && r.error() == "" {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 300 {
			tail = tail[len(tail)-300:]
		}
		return r, fmt.Errorf("%v: %s", err, tail)
	}
	return r, nil
}

// oracle runs tflm_run on the original model with seed and invokes.
func oracle(tool, model string, seed, invokes int, arena int64) (runLines, error) {
	res, err := tflmrun.Run(context.Background(), tool, model, tflmrun.Options{Seed: seed, Invokes: invokes, ArenaBytes: arena, Timeout: 2 * time.Minute})
	if err != nil {
		return runLines{}, err
	}
	r := runLines{values: res.Values}
	// tflm_run's lines in the order it prints them.
	outs, _ := strconv.Atoi(res.Values["outputs"])
	for k := 0; k < invokes; k++ {
		r.keys = append(r.keys, fmt.Sprintf("invoke.%d", k))
		for i := 0; i < outs; i++ {
			r.keys = append(r.keys, fmt.Sprintf("output.%d.%d", k, i))
		}
	}
	r.keys = append(r.keys, "status", "outputs_digest")
	return r, nil
}

// firstDifference compares two runs' output lines and returns the first
// that differs ("want X, got Y"), or "".
func firstDifference(want, got runLines) string {
	w, g := want.outputLines(), got.outputLines()
	for i := 0; i < len(w) || i < len(g); i++ {
		switch {
		case i >= len(g):
			return fmt.Sprintf("missing %s", w[i])
		case i >= len(w):
			return fmt.Sprintf("extra %s", g[i])
		case w[i] != g[i]:
			return fmt.Sprintf("want %s, got %s", w[i], g[i])
		}
	}
	return ""
}

// oracleArenas gives tflm_run an arena a little above what TFLM needs
// for each corpus model (../shared/bench/tflm-reference.tsv), keyed by
// emit.ModelName of its file (a bundled model's is its corpus model's):
// filling the default 512 MiB costs 0.3 s a run.
func oracleArenas(t *testing.T) map[string]int64 {
	dir := corpus.SharedDir()
	out := map[string]int64{}
	if dir == "" {
		return out
	}
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	for _, r := range rows {
		n, err := strconv.ParseInt(r["tflm_arena_used_bytes"], 10, 64)
		if r["status"] != "ok" || err != nil {
			continue
		}
		out[emit.ModelName(r["model"])] = 2*n + 64<<10
	}
	return out
}

// writeFiles writes files into dir and returns the sources among them.
func writeFiles(t *testing.T, dir string, files emit.Files) []string {
	var srcs []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
		switch filepath.Ext(f.Name) {
		case ".c", ".cc", ".S":
			srcs = append(srcs, p)
		}
	}
	return srcs
}

// resultTable collects one line per model and logs them sorted.
type resultTable struct {
	mu   sync.Mutex
	rows map[string]string
}

func (r *resultTable) set(model, result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rows == nil {
		r.rows = map[string]string{}
	}
	r.rows[model] = result
}

func (r *resultTable) log(t *testing.T, title string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.rows))
	for n := range r.rows {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d runs):\n", title, len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "  %-55s %s\n", n, r.rows[n])
	}
	t.Log(b.String())
}
