//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/zoo"
)

// TestZooRerunInsideInput: with -o inside the input folder and
// --emit-tflite, a rerun compiles the same models as the first run, not
// the models the first run wrote.
func TestZooRerunInsideInput(t *testing.T) {
	dir := copyModels(t)
	out := filepath.Join(dir, "out")
	var first []string
	for run := range 3 {
		code, _, stderr := runHeliac("zoo", dir, "-o", out, "--emit-tflite", "-j", "2")
		require.Equal(t, exitOK, code, "run %d: %s", run, stderr)
		var names []string
		for _, r := range readSummary(t, out) {
			names = append(names, r.Model)
		}
		if run == 0 {
			first = names
			require.Len(t, first, 7)
			continue
		}
		assert.Equal(t, first, names, "run %d", run)
	}
	assert.NoDirExists(t, filepath.Join(out, "out"))
}

// TestZooLinksAndSkipped: a symbolic link to a model is compiled, as the
// main command compiles it; a FIFO named *.tflite, a broken link and a link
// loop are listed as skipped with why, in the summary and the lines, and
// do not fail the run.
func TestZooLinksAndSkipped(t *testing.T) {
	dir := t.TempDir()
	model, err := filepath.Abs("../../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(model, filepath.Join(dir, "linked.tflite")))
	require.NoError(t, os.Symlink("nowhere.tflite", filepath.Join(dir, "broken.tflite")))
	require.NoError(t, os.Symlink("loop.tflite", filepath.Join(dir, "loop.tflite")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.tflite"), 0o644))
	out := filepath.Join(t.TempDir(), "zoo")

	code, stdout, stderr := runHeliac("zoo", dir, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	rows := readSummary(t, out)
	status := map[string]zoo.Row{}
	for _, r := range rows {
		status[r.Model] = r
	}
	require.Len(t, status, 4)
	assert.Equal(t, zoo.OK, status["linked"].Status)
	assert.FileExists(t, filepath.Join(out, "linked", "linked.plan.json"))
	for name, why := range map[string]string{"broken": "broken symbolic link", "loop": "symbolic link loop", "fifo": "FIFO"} {
		assert.Equal(t, zoo.Skipped, status[name].Status, name)
		assert.Contains(t, status[name].Error, why, name)
		assert.Contains(t, stdout, "skipped "+name+": ", name)
		assert.NoDirExists(t, filepath.Join(out, name))
	}
	assert.Contains(t, stdout, "zoo: 1 model(s), 0 failed, 3 skipped, in ")
}
