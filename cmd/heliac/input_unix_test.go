//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputFiles gives every command that reads a file a FIFO, a device and
// a file over the size limit: each must refuse it at once with one line
// naming the cause, never block or read without end.
func TestInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.tflite")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	huge := filepath.Join(dir, "huge.tflite") // sparse: no disk space used
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(256<<20+1))
	require.NoError(t, f.Close())
	out := filepath.Join(dir, "out")
	code, _, stderr := runHeliac(helloWorld, "-o", out, "-q")
	require.Equal(t, exitOK, code, stderr)
	plan := filepath.Join(out, "hello_world_int8.plan.json")

	tests := []struct {
		name string
		args []string
		want string // stderr
	}{
		{"compile a FIFO", []string{fifo, "-o", out}, "heliac: read " + fifo + ": a FIFO, not a regular file; give the model as a file\n"},
		{"compile /dev/zero", []string{"/dev/zero", "-o", out}, "heliac: read /dev/zero: a character device, not a regular file; give the model as a file\n"},
		{"compile a huge file", []string{huge, "-o", out}, "heliac: read " + huge + ": larger than 256 MiB, the most heliac reads of a model\n"},
		{"compile a directory", []string{dir, "-o", out}, "heliac: read " + dir + ": a directory, not a regular file; give the model as a file\n"},
		{"inspect /dev/zero", []string{"inspect", "/dev/zero"}, "heliac: read /dev/zero: a character device, not a regular file; give the model as a file\n"},
		{"config /dev/zero", []string{helloWorld, "-o", out, "--config", "/dev/zero"}, "heliac: read /dev/zero: a character device, not a regular file; give the config file as a file\n"},
		{"platform file a FIFO", []string{helloWorld, "-o", out, "--platform-file", fifo}, "heliac: read " + fifo + ": a FIFO, not a regular file; give the platform file as a file\n"},
		{"pack /dev/zero", []string{"pack", "/dev/zero"}, "heliac: read /dev/zero: a character device, not a regular file; give the CSV problem as a file\n"},
		{"verify with the model a FIFO", []string{"verify", fifo, plan}, "heliac: read " + fifo + ": a FIFO, not a regular file; give the model as a file\n"},
		{"verify a FIFO plan", []string{"verify", helloWorld, fifo}, "heliac: read " + fifo + ": a FIFO, not a regular file; give the plan as a file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var stderr string
			done := make(chan struct{})
			go func() { code, _, stderr = runHeliac(tt.args...); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("heliac blocked")
			}
			assert.Equal(t, exitFailure, code)
			assert.Equal(t, tt.want, stderr)
		})
	}
}
