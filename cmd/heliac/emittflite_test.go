package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

func TestEmitTFLite(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runHeliac(helloWorld, "-o", dir, "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "hello_world_int8.tflite: 4 tensor(s) at the plan's offsets (OfflineMemoryAllocation metadata)")
	assert.Contains(t, stdout, filepath.Join(dir, "hello_world_int8.tflite"))
	data, err := os.ReadFile(filepath.Join(dir, "hello_world_int8.tflite"))
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	found := false
	for _, md := range m.Metadata {
		if md.Name == graph.OfflinePlanName {
			found = true
			_, _, offsets, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data)
			require.NoError(t, err)
			assert.Len(t, offsets, len(m.Subgraphs[0].Tensors))
		}
	}
	assert.True(t, found, "the written model carries the offline plan")

	code, _, _ = runHeliac(helloWorld, "-o", dir, "--emit-tflite", "-q")
	require.Equal(t, exitOK, code)
	again, err := os.ReadFile(filepath.Join(dir, "hello_world_int8.tflite"))
	require.NoError(t, err)
	assert.Equal(t, data, again, "the same model and options write the same bytes")
}

func TestEmitTFLiteNeverReplacesTheInput(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "hello_world_int8.tflite")
	orig, err := os.ReadFile(helloWorld)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(model, orig, 0o644))
	code, _, stderr := runHeliac(model, "-o", dir, "--emit-tflite")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "would replace the input model; choose another -o or --prefix")
	after, err := os.ReadFile(model)
	require.NoError(t, err)
	assert.Equal(t, orig, after)
	_, err = os.Stat(filepath.Join(dir, "hello_world_int8.plan.json"))
	assert.True(t, os.IsNotExist(err), "nothing is written")
}

func TestEmitTFLiteNeedsOneArena(t *testing.T) {
	dir := t.TempDir()
	platform := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(platform, []byte(strings.Join([]string{
		"name: tiny",
		"banks:",
		"  - {name: DTCM, capacity: 16, writable: true, order: 0}",
		"  - {name: SRAM, writable: true, order: 1}",
		"  - {name: FLASH}",
	}, "\n")), 0o644))
	code, _, stderr := runHeliac(helloWorld, "-o", filepath.Join(dir, "out"), "--emit-tflite", "--platform-file", platform)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "TFLM has one arena, but this plan puts scratch tensors in 2")
	assert.Contains(t, stderr, "--one-scratch-bank", "the error names the flag that gives one arena")

	code, stdout, stderr := runHeliac(helloWorld, "-o", filepath.Join(dir, "out"), "--emit-tflite", "--platform-file", platform, "--one-scratch-bank")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `scratch +SRAM `, stdout, "every scratch tensor in the one bank that holds them all")
	assert.NotContains(t, stdout, "DTCM ")
}

// TestEmitTFLiteTFLMArena: the summary, --json and --tflm-target give
// TFLM's whole arena; an unknown target is a usage error.
func TestEmitTFLiteTFLMArena(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runHeliac(helloWorld, "-o", dir, "--emit-tflite")
	require.Equal(t, exitOK, code, stderr)
	// By default the figure suffices for every kernel build the plan is
	// for, and the summary says which sized it and lists each.
	assert.Contains(t, stdout, "TFLM (tflite-micro@90b983c, cortex-m, with any of the 4 kernel builds the plan is for; sized for cmsis-nn (mve)) needs a tensor_arena of ")
	assert.Contains(t, stdout, "TFLM's own planner on the original model: ")
	for _, k := range []string{"tflm-reference:", "cmsis-nn (portable):", "cmsis-nn (dsp):", "cmsis-nn (mve):"} {
		assert.Contains(t, stdout, "    "+k)
	}
	code, stdout, stderr = runHeliac(helloWorld, "-o", dir, "--emit-tflite", "--kernels", "tflm-reference", "--force")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "TFLM (tflite-micro@90b983c, cortex-m, tflm-reference) needs a tensor_arena of ")
	// A CMSIS-NN build gets the figure from the CMSIS-NN kernels' data,
	// checked on TFLM's CMSIS-NN builds like the reference kernels' (the
	// driver's TestTFLMArenaExactCMSISNN): no note says otherwise.
	code, stdout, stderr = runHeliac(helloWorld, "-o", dir, "--emit-tflite", "--kernels", "cmsis-nn", "--cpu", "cortex-m55", "--force")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "TFLM (tflite-micro@90b983c, cortex-m, cmsis-nn (mve)) needs a tensor_arena of ")
	assert.NotContains(t, stdout, "not checked on a runtime")
	code, stdout, stderr = runHeliac(helloWorld, "-o", dir, "--emit-tflite", "--json", "--tflm-target", "host64", "--force")
	require.Equal(t, exitOK, code, stderr)
	var s struct {
		TFLite struct {
			Target string `json:"tflm_target"`
			Bytes  int64  `json:"tflm_arena_bytes"`
			Head   int64  `json:"tflm_head_bytes"`
			Tail   int64  `json:"tflm_tail_bytes"`
			Own    int64  `json:"tflm_own_arena_bytes"`
		} `json:"tflite"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	assert.Equal(t, "host64", s.TFLite.Target)
	assert.GreaterOrEqual(t, s.TFLite.Bytes, s.TFLite.Head+s.TFLite.Tail)
	assert.Positive(t, s.TFLite.Tail)
	assert.Positive(t, s.TFLite.Own)
	code, _, stderr = runHeliac(helloWorld, "-o", dir, "--emit-tflite", "--tflm-target", "riscv", "--force")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown --tflm-target "riscv"`)
}
