//go:build unix

package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
)

// TestVerifyNeverOpensAFIFO puts FIFOs where verify looks for files: a
// model, a C file of the set and the plan itself. Opening one would block
// until a writer came; verify must pass over them or refuse them.
func TestVerifyNeverOpensAFIFO(t *testing.T) {
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), model, testConfig("hello_world_int8"))
	require.NoError(t, err)
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	plan := filepath.Join(dir, "hello_world_int8.plan.json")
	require.NoError(t, os.WriteFile(plan, out.PlanJSON, 0o644))
	for _, fifo := range []string{"out/hello_world_int8.tflite", "out/a.tflite", "b.bin", "fifo.plan.json"} {
		require.NoError(t, syscall.Mkfifo(filepath.Join(root, fifo), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "z.tflite"), model, 0o644))
	t.Chdir(root)

	verify := func(plan string) (r *driver.VerifyReport, err error) {
		done := make(chan struct{})
		go func() { r, err = driver.VerifyPlanFile(plan, ""); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("verify blocked on a FIFO")
		}
		return r, err
	}
	r, err := verify(plan)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "z.tflite"), r.Model)

	_, err = verify(filepath.Join(root, "fifo.plan.json"))
	assert.EqualError(t, err, "read "+filepath.Join(root, "fifo.plan.json")+": a FIFO, not a regular file; give the plan as a file")

	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "hello_world_int8.h"), 0o644))
	_, err = verify(plan)
	assert.EqualError(t, err, "read "+filepath.Join(dir, "hello_world_int8.h")+": a FIFO, not a regular file; give the C file as a file")
}
