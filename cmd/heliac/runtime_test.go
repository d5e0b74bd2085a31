package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --runtime tflm adds <prefix>.tflm.cc to the set and the summary; a run
// without it removes the one an earlier run wrote, so the directory holds
// one set.
func TestRuntimeWritesAndRemovesTheRuntime(t *testing.T) {
	dir := t.TempDir()
	cc := filepath.Join(dir, "hello_world_int8.tflm.cc")
	code, stdout, stderr := runHeliac(helloWorld, "-o", dir, "--runtime", "tflm", "--kernels", "tflm-reference")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, cc)
	// Three FULLY_CONNECTED kernels keep an OpDataFullyConnected each: 48
	// bytes with 4-byte pointers, 64 with 8-byte ones (fully_connected.h).
	assert.Contains(t, stdout, "hello_world_int8.tflm.cc: runs the model with TFLM's reference kernels on the plan; "+
		"their persistent data: 144 bytes on Cortex-M, 192 on a 64-bit host, besides the arenas")
	data, err := os.ReadFile(cc)
	require.NoError(t, err)
	assert.Contains(t, string(data), "hello_world_int8_invoke(void)")

	code, stdout, stderr = runHeliac(helloWorld, "-o", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, cc)
	_, err = os.Stat(cc)
	assert.True(t, os.IsNotExist(err), "the runtime of the earlier run is gone")
}

func TestRuntimeFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown", []string{"--runtime", "tvm"}, `unknown runtime "tvm" (known: none, tflm)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runHeliac(append([]string{helloWorld, "-o", dir}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tt.want)
			_, err := os.Stat(filepath.Join(dir, "hello_world_int8.plan.json"))
			assert.True(t, os.IsNotExist(err), "nothing is written")
		})
	}
}

// The runtime runs the kernels the plan is for, and the summary says
// which and what they keep: by default whichever build the application
// links, each with its figures (CMSIS-NN's FULLY_CONNECTED keeps a larger
// OpData, and on MVE its kernel sums too, of which those that fit in the
// bytes lent to Prepare, here the last layer's 4, heliac computes and
// keeps in flash, saving one 16-byte persistent buffer); with --kernels
// cmsis-nn and a CPU, that CPU's code.
func TestRuntimeKernels(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "hello_world_int8.tflm.cc: runs the model on the plan with whichever of its kernel builds the application links; " +
			"their persistent data, besides the arenas: tflm-reference 144 B on Cortex-M, 192 on a 64-bit host; " +
			"cmsis-nn (portable) 240 B on Cortex-M, 288 on a 64-bit host; cmsis-nn (dsp) 240 B on Cortex-M; cmsis-nn (mve) 368 B on Cortex-M (and 16 computed by heliac, in flash)"},
		{"cmsis-nn on the M55", []string{"--kernels", "cmsis-nn", "--cpu", "cortex-m55"},
			"hello_world_int8.tflm.cc: runs the model with TFLM's CMSIS-NN kernels (their mve code) on the plan; " +
				"their persistent data: 368 bytes on Cortex-M (and 16 computed by heliac, in flash), besides the arenas"},
		{"cmsis-nn on a host", []string{"--kernels", "cmsis-nn", "--tflm-target", "host64"},
			"runs the model with TFLM's CMSIS-NN kernels (their portable code) on the plan; their persistent data: 240 bytes on Cortex-M, 288 on a 64-bit host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runHeliac(append([]string{helloWorld, "-o", t.TempDir(), "--runtime", "tflm"}, tt.args...)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, tt.want)
		})
	}
}

// A <prefix>.tflm.cc heliac did not write is neither replaced nor removed.
func TestRuntimeLeavesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	cc := filepath.Join(dir, "hello_world_int8.tflm.cc")
	mine := []byte("// my own runtime\n")
	require.NoError(t, os.WriteFile(cc, mine, 0o644))
	code, _, stderr := runHeliac(helloWorld, "-o", dir, "--runtime", "tflm")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "hello_world_int8.tflm.cc is not a C file heliac wrote")
	code, _, stderr = runHeliac(helloWorld, "-o", dir)
	require.Equal(t, exitOK, code, stderr)
	got, err := os.ReadFile(cc)
	require.NoError(t, err)
	assert.Equal(t, mine, got)
}
