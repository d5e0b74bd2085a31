//go:build unix

package zoo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/zoo"
)

// TestFindLinksAndSpecialFiles: a symbolic link to a model is found as the
// file it names (the main command compiles it); an entry named *.tflite
// that is no regular file, and a link to a folder, are listed with why
// they are skipped; other special files are passed over; a link loop
// around folders is not followed.
func TestFindLinksAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	write(t, dir, "real/one.tflite", model)
	write(t, dir, "real/notes.txt", []byte("not a model"))
	link := func(target, rel string) {
		t.Helper()
		require.NoError(t, os.Symlink(target, filepath.Join(dir, rel)))
	}
	link("real/one.tflite", "linked.tflite")
	link("real/one.tflite", "linked_by_identifier.bin")
	link("real/notes.txt", "notes_link.txt") // not a model: passed over
	link("missing.tflite", "broken.tflite")
	link("missing", "broken_other") // not named like a model: passed over
	link("loop_b.tflite", "loop_a.tflite")
	link("loop_a.tflite", "loop_b.tflite")
	link("real", "folder_link")
	link(".", "real/self") // a folder loop
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.tflite"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.bin"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "fifo.tflite"), filepath.Join(dir, "fifo_link.tflite")))

	got, err := zoo.Find([]string{dir})
	require.NoError(t, err)
	skips := map[string]string{}
	var compiled []string
	for _, m := range got {
		if m.Skip != "" {
			skips[m.Name] = m.Skip
			continue
		}
		compiled = append(compiled, m.Name)
		assert.Equal(t, int64(len(model)), m.Size, m.Name)
	}
	assert.Equal(t, []string{"linked", "linked_by_identifier", "real/one"}, compiled)
	tests := []struct{ name, why string }{
		{"broken", "a broken symbolic link"},
		{"loop_a", "a symbolic link loop"},
		{"loop_b", "a symbolic link loop"},
		{"folder_link", "a symbolic link to a folder"},
		{"real/self", "a symbolic link to a folder"},
		{"fifo", "not a regular file but a FIFO"},
		{"fifo_link", "a symbolic link to a FIFO"},
	}
	for _, tt := range tests {
		assert.Contains(t, skips[tt.name], tt.why, tt.name)
	}
	assert.Len(t, skips, len(tests))

	// Run passes the skipped over; Summarize lists them with the reason.
	var calls atomic.Int32
	results := zoo.Run(context.Background(), got, 2, func(_ context.Context, m zoo.Model) (*driver.Output, error) {
		calls.Add(1)
		return nil, errors.New("no compiler here")
	}, nil)
	assert.Equal(t, int32(len(compiled)), calls.Load())
	for _, r := range zoo.Summarize(results) {
		if why, ok := skips[r.Model]; ok {
			assert.Equal(t, zoo.Skipped, r.Status, r.Model)
			assert.Equal(t, why, r.Error, r.Model)
		} else {
			assert.Equal(t, zoo.Failed, r.Status, r.Model)
		}
	}

	// A root given as a link to a folder is searched.
	got, err = zoo.Find([]string{filepath.Join(dir, "folder_link")})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, zoo.Model{Path: filepath.Join(dir, "folder_link", "one.tflite"), Name: "one", Size: int64(len(model))}, got[0])
	assert.Equal(t, "self", got[1].Name)
	assert.NotEmpty(t, got[1].Skip)
}

// TestFindExclude: a folder to exclude (the zoo's output) is not searched,
// whether given by another path to it or nested in a root.
func TestFindExclude(t *testing.T) {
	dir := t.TempDir()
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	write(t, dir, "in/one.tflite", model)
	write(t, dir, "in/out/one/one.tflite", model) // what --emit-tflite wrote
	require.NoError(t, os.Symlink(filepath.Join(dir, "in", "out"), filepath.Join(dir, "out_link")))
	tests := []struct {
		name    string
		exclude []string
		want    []string
	}{
		{"nothing excluded", nil, []string{"one", "out/one/one"}},
		{"the output folder", []string{filepath.Join(dir, "in", "out")}, []string{"one"}},
		{"a relative spelling", []string{filepath.Join(dir, "in", "..", "in", "out") + "/"}, []string{"one"}},
		{"through a link", []string{filepath.Join(dir, "out_link")}, []string{"one"}},
		{"a folder not there yet", []string{filepath.Join(dir, "new")}, []string{"one", "out/one/one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := zoo.Find([]string{filepath.Join(dir, "in")}, tt.exclude...)
			require.NoError(t, err)
			var names []string
			for _, m := range got {
				names = append(names, m.Name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
}
