package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/zoo"
)

// copyModels copies the bundled models into a new folder and returns it.
func copyModels(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("../../testdata/models/*.tflite")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
	}
	return dir
}

func readSummary(t *testing.T, out string) []zoo.Row {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	var doc struct{ Models []zoo.Row }
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc.Models
}

// TestZoo compiles the bundled models and a corrupt one: it goes past the
// failure (exit 1, the error in the summary), writes every other model's
// folder, a plain line per model when not on a terminal, and leaves a
// failed model's previous folder as it was.
func TestZoo(t *testing.T) {
	dir := copyModels(t)
	out := filepath.Join(t.TempDir(), "zoo")
	code, stdout, stderr := runHeliac("zoo", dir, "-o", out, "-j", "2")
	require.Equal(t, exitOK, code, stderr)
	rows := readSummary(t, out)
	require.Len(t, rows, 7)
	for _, r := range rows {
		assert.Equal(t, zoo.OK, r.Status, r.Model)
		assert.FileExists(t, filepath.Join(out, r.Model, r.Model+".plan.json"))
		assert.Contains(t, stdout, "ok "+r.Model+": scratch arena ")
	}
	assert.Contains(t, stdout, "zoo: 7 model(s), 0 failed, in ")
	before, err := os.ReadFile(filepath.Join(out, "hello_world_int8", "hello_world_int8.plan.json"))
	require.NoError(t, err)

	// hello_world_int8 turns corrupt; a new model is corrupt from the start.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello_world_int8.tflite"), []byte("not a model"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.tflite"), []byte("12345678"), 0o644))
	code, stdout, stderr = runHeliac("zoo", dir, "-o", out)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "heliac: zoo: 2 of 8 model(s) failed; their errors are in summary.csv\n", stderr)
	rows = readSummary(t, out)
	require.Len(t, rows, 8)
	failed := map[string]string{}
	for _, r := range rows {
		if r.Status == zoo.Failed {
			failed[r.Model] = r.Error
		}
	}
	require.Len(t, failed, 2)
	assert.Contains(t, failed["hello_world_int8"], "hello_world_int8.tflite")
	assert.Contains(t, stdout, "failed broken: ")
	after, err := os.ReadFile(filepath.Join(out, "hello_world_int8", "hello_world_int8.plan.json"))
	require.NoError(t, err)
	assert.Equal(t, before, after, "a failed model's previous folder is left as it was")
	assert.NoDirExists(t, filepath.Join(out, "broken"))
	csv, err := os.ReadFile(filepath.Join(out, "summary.csv"))
	require.NoError(t, err)
	assert.Equal(t, 9, strings.Count(string(csv), "\n"), "a header and a line per model")
}

// TestZooUsage: the zoo's mistakes are usage errors.
func TestZooUsage(t *testing.T) {
	dir := copyModels(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", []string{"zoo"}, "expected one or more folders or model files"},
		{"no jobs", []string{"zoo", dir, "-j", "0"}, "-j must be 1 or more, got 0"},
		{"a prefix", []string{"zoo", dir, "--prefix", "x"}, "--prefix names one model's C symbols"},
		{"a bad flag", []string{"zoo", dir, "--kernels", "nope"}, `unknown kernel library "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runHeliac(tt.args...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tt.want)
		})
	}
	code, _, stderr := runHeliac("zoo", t.TempDir(), "-o", t.TempDir())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "zoo: no model under")
}

// TestZooCorpus compiles the whole corpus with the zoo (and --report) and
// expects every model's figures to be those of compiling it alone with the
// same flags, and its report to draw a box per allocation,
// as make bench does, unless a search stopped on its wall clock in either
// (a loaded machine can stop dp_net's order search). A corpus sweep: the
// zoo's concurrency meets the race detector in the zoo package's tests and
// TestZoo*, on a few models.
func TestZooCorpus(t *testing.T) {
	skipUnderRace(t)
	shared := corpus.Require(t)
	if testing.Short() {
		t.Skip("compiles the whole corpus; skipped with -short")
	}
	out := t.TempDir()
	code, stdout, stderr := runHeliac("zoo", filepath.Join(shared, "corpus"), "-o", out, "-q", "--report")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	rows := readSummary(t, out)
	require.Len(t, rows, len(corpus.Manifest(t)))
	opts := &compileOptions{}
	cmd := newRootCmd(func(o *compileOptions) error { opts = o; return nil }, &strings.Builder{}, &strings.Builder{})
	cmd.SetArgs([]string{"m.tflite"})
	require.NoError(t, cmd.Execute())
	cfg, err := compileConfig(opts)
	require.NoError(t, err)
	timedOut := 0
	defer func() { assert.Less(t, timedOut, 5, "models whose search stopped on the wall clock") }()
	for _, r := range rows {
		data, err := os.ReadFile(r.Path)
		require.NoError(t, err)
		c := cfg
		c.ModelName = emit.ModelName(r.Path)
		one, err := driver.Compile(context.Background(), data, c)
		require.NoError(t, err, r.Model)
		alone := zoo.Summarize([]zoo.Result{{Output: one}})[0]
		assert.Equal(t, zoo.OK, r.Status, r.Model)
		if r.TimedOut || alone.TimedOut {
			t.Logf("%s: a search stopped on its wall clock (zoo %v, alone %v); figures not compared", r.Model, r.TimedOut, alone.TimedOut)
			timedOut++
			continue
		}
		assert.Equal(t, []int64{int64(alone.Steps), int64(alone.Arenas), alone.Bound, alone.Arena, alone.KernelScratch},
			[]int64{int64(r.Steps), int64(r.Arenas), r.Bound, r.Arena, r.KernelScratch}, r.Model)
		// Its report draws a box per allocation with bytes.
		report, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(r.Model), one.Prefix()+driver.ReportSuffix))
		require.NoError(t, err, r.Model)
		boxes := 0
		for _, a := range one.Plan.Allocs {
			if a.Size > 0 {
				boxes++
			}
		}
		assert.Equal(t, boxes, strings.Count(string(report), `<rect class="alloc `), "%s: boxes in its report", r.Model)
	}
}

// skipUnderRace skips a corpus sweep under the race detector; `make test`
// runs it again without -race (the Makefile's SWEEPS, which driver's
// TestSweepsListed keeps whole).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a corpus sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}
