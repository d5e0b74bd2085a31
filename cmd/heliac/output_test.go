package main

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
)

// readDir returns every file in dir with its contents.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(data)
	}
	return files
}

// failRename makes the n-th call of rename fail (counting from 1) until
// the test ends, and returns how many calls there were.
func failRename(t *testing.T, n int) *int {
	t.Helper()
	calls := 0
	rename = func(from, to string) error {
		calls++
		if calls == n {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("injected failure")}
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })
	return &calls
}

// TestWriteSetFailure makes each rename of writing a set fail in turn: the
// directory must then hold the previous set exactly, with no temporary
// files, whether there was a previous set, and files of the user's, or not.
func TestWriteSetFailure(t *testing.T) {
	previous := emit.Files{{Name: "m.h", Data: []byte("old h")}, {Name: "m.c", Data: []byte("old c")}, {Name: "m.plan.json", Data: []byte("old plan")}}
	next := emit.Files{{Name: "m.h", Data: []byte("new h")}, {Name: "m.c", Data: []byte("new c")},
		{Name: "m.tflite", Data: []byte("new model")}, {Name: "m.plan.json", Data: []byte("new plan")}}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{name: "no previous set", setup: func(*testing.T, string) {}},
		{name: "previous set and a file of the user's", setup: func(t *testing.T, dir string) {
			require.NoError(t, writeSet(dir, previous, nil, ""))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for n := 1; ; n++ {
				dir := filepath.Join(t.TempDir(), "out")
				tt.setup(t, dir)
				before := readDir(t, dir)
				calls := failRename(t, n)
				err := writeSet(dir, next, nil, "")
				rename = os.Rename
				if *calls < n {
					require.NoError(t, err, "no rename failed")
					want := before
					for _, f := range next {
						want[f.Name] = string(f.Data)
					}
					assert.Equal(t, want, readDir(t, dir), "the new set replaced the old one, with no temporary files")
					assert.Greater(t, n, len(next), "every rename was tried")
					break
				}
				require.ErrorContains(t, err, "injected failure", "rename %d", n)
				assert.Equal(t, before, readDir(t, dir), "rename %d failed: the previous set is intact, with no temporary files", n)
			}
		})
	}
}

// TestWriteSetRemovesStaleFiles puts in the directory what killed runs
// leave behind, and files that only look like it: the next run of the set
// removes the former, and only them.
func TestWriteSetRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	stale := []string{
		".m.h.heliac-123", ".m.plan.json.heliac-4294967295", ".m.c.heliac-0", // temporary or moved-aside files
		".plan.json.837261", ".m.c.99", // as heliac named its temporary files before
	}
	kept := []string{
		".other.c.heliac-123",                             // another set's
		".m.h.heliac-12a", ".m.h.heliac-", "m.h.heliac-1", // not heliac's naming
		".m.h.bak", ".notes.txt", "notes.txt", ".m.h.1.tmp",
	}
	for _, name := range append(append([]string{}, stale...), kept...) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644))
	}
	require.NoError(t, writeSet(dir, emit.Files{{Name: "m.h", Data: []byte("h")}, {Name: "m.c", Data: []byte("c")}, {Name: "m.plan.json", Data: []byte("{}")}}, nil, ""))

	var got []string
	for name := range readDir(t, dir) {
		got = append(got, name)
	}
	want := append([]string{"m.h", "m.c", "m.plan.json"}, kept...)
	sort.Strings(got)
	sort.Strings(want)
	assert.Equal(t, want, got)
}

// TestWriteSetKeepsTheInput: a stale-looking file that is the input stays.
func TestWriteSetKeepsTheInput(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, ".m.c.heliac-1")
	require.NoError(t, os.WriteFile(input, []byte("model"), 0o644))
	require.NoError(t, writeSet(dir, emit.Files{{Name: "m.c", Data: []byte("c")}}, nil, input))
	assert.FileExists(t, input)
}
