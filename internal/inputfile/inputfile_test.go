//go:build unix

package inputfile_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/inputfile"
)

// TestRead reads each kind of path with a limit of 8 bytes. Nothing may
// block: a FIFO with no writer is refused before it is opened.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	require.NoError(t, os.WriteFile(path("small"), []byte("12345678"), 0o644))
	require.NoError(t, os.WriteFile(path("large"), []byte("123456789"), 0o644))
	require.NoError(t, syscall.Mkfifo(path("fifo.tflite"), 0o644))
	require.NoError(t, os.Symlink(path("small"), path("link")))
	require.NoError(t, os.Symlink(path("fifo.tflite"), path("fifo-link")))
	require.NoError(t, os.Mkdir(path("dir.tflite"), 0o755))
	kind := inputfile.Kind{Name: "model", Max: 8}

	tests := []struct {
		name, path string
		want       string // the contents; "" when an error is expected
		err        string // the whole message
		errIs      error
	}{
		{name: "regular file at the limit", path: path("small"), want: "12345678"},
		{name: "symbolic link to a regular file", path: path("link"), want: "12345678"},
		{name: "over the limit", path: path("large"), err: "read DIR/large: larger than 8 bytes, the most heliac reads of a model"},
		{name: "FIFO", path: path("fifo.tflite"), err: "read DIR/fifo.tflite: a FIFO, not a regular file; give the model as a file"},
		{name: "link to a FIFO", path: path("fifo-link"), err: "read DIR/fifo-link: a FIFO, not a regular file; give the model as a file"},
		{name: "directory", path: path("dir.tflite"), err: "read DIR/dir.tflite: a directory, not a regular file; give the model as a file"},
		{name: "device", path: "/dev/zero", err: "read /dev/zero: a character device, not a regular file; give the model as a file"},
		{name: "missing", path: path("missing"), errIs: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); tt.errIs == nil && err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			var data []byte
			var err error
			done := make(chan struct{})
			go func() { data, err = inputfile.Read(tt.path, kind); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked")
			}
			switch {
			case tt.errIs != nil:
				assert.ErrorIs(t, err, tt.errIs)
			case tt.err != "":
				assert.EqualError(t, err, strings.Replace(tt.err, "DIR", dir, 1))
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(data))
			}
		})
	}
}

// TestHead reads the start of a file of any size, and of regular files
// only.
func TestHead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.c")
	require.NoError(t, os.WriteFile(big, []byte("123456789"), 0o644))
	fifo := filepath.Join(dir, "fifo.c")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	kind := inputfile.Kind{Name: "C file", Max: 2}

	data, err := inputfile.Head(big, kind, 4)
	require.NoError(t, err)
	assert.Equal(t, "1234", string(data))
	data, err = inputfile.Head(big, kind, 100)
	require.NoError(t, err)
	assert.Equal(t, "123456789", string(data))
	_, err = inputfile.Head(fifo, kind, 4)
	assert.EqualError(t, err, "read "+fifo+": a FIFO, not a regular file; give the C file as a file")
}
