package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// customOpModel writes in [1, 8] int8 -> CUSTOM MyOp -> out [1, 8] into
// dir and returns its path.
func customOpModel(t *testing.T, dir string) string {
	t.Helper()
	tensor := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Int8, Shape: []int32{1, 8}, Size: 8}
	}
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("in"), tensor("out")},
			Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{1},
			Ops: []graph.Op{{Code: graph.Custom, CustomName: "MyOp", Version: 1, Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}}},
		}}}
	return writeModel(t, filepath.Join(dir, "custom.tflite"), m)
}

// TestKernelScratchConfig: a config's kernel_scratch tells heliac what a
// custom operator's kernel asks for, so the plan holds it and --strict
// has nothing to refuse; a malformed entry is an error naming the file.
func TestKernelScratchConfig(t *testing.T) {
	dir := t.TempDir()
	model := customOpModel(t, dir)

	code, _, stderr := runHeliac(model, "-o", filepath.Join(dir, "strict"), "--strict")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "operator 0:0 (CUSTOM:MyOp) asks for kernel scratch its library has no rule for")

	cfg := filepath.Join(dir, "kernels.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - bytes: 100\n      - per_output_element: 4\n"), 0o644))
	out := filepath.Join(dir, "known")
	code, stdout, stderr := runHeliac(model, "-o", out, "--strict", "--config", cfg)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "kernel scratch: 2 buffer(s) for 1 operator(s), 132 B in all")
	var doc struct {
		KernelScratch []struct {
			Operator, Index int
			Size            int64
		} `json:"kernel_scratch"`
	}
	data, err := os.ReadFile(filepath.Join(out, "custom.plan.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.KernelScratch, 2)
	assert.Equal(t, int64(100), doc.KernelScratch[0].Size)
	assert.Equal(t, int64(32), doc.KernelScratch[1].Size)

	require.NoError(t, os.WriteFile(cfg, []byte("kernel_scratch:\n  - builtin: conv_2d\n"), 0o644))
	code, _, stderr = runHeliac(model, "-o", filepath.Join(dir, "bad"), "--config", cfg)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, cfg+`: kernels: kernel_scratch entry 1 (conv_2d, line 2): builtin "conv_2d" is not a builtin operator's name`)

	require.NoError(t, os.WriteFile(cfg, []byte("kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - byte: 100\n"), 0o644))
	code, _, stderr = runHeliac(model, "-o", filepath.Join(dir, "typo"), "--config", cfg)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "byte")
}

// TestKernelScratchMistakes: a kernel_scratch entry that can never apply
// is an error naming the entry and its line: a builtin TFLite does not
// have (with the name meant), an operand its operator lacks, a size that
// would overflow. One that matches no operator of this model is a warning
// in the summary and plan.json, and with --strict an error.
func TestKernelScratchMistakes(t *testing.T) {
	dir := t.TempDir()
	model := customOpModel(t, dir) // CUSTOM:MyOp, one input, one output
	tests := []struct {
		name   string
		config string
		strict bool
		want   string // on stderr, or on stdout when the compile succeeds
		ok     bool
	}{
		{"a misspelt builtin", "kernel_scratch:\n  - custom: MyOp\n  - builtin: FULLY_CONECTED\n    buffers: [{bytes: 4}]\n", false,
			"kernel_scratch entry 2 (FULLY_CONECTED, line 3): no TFLite builtin operator is named FULLY_CONECTED; did you mean FULLY_CONNECTED?", false},
		{"a name far from any builtin", "kernel_scratch:\n  - builtin: MY_VERY_OWN_OPERATOR\n", false,
			"kernel_scratch entry 1 (MY_VERY_OWN_OPERATOR, line 2): no TFLite builtin operator is named MY_VERY_OWN_OPERATOR\n", false},
		{"an input the operator lacks", "kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - bytes: 4\n      - per_input_element: 2\n        input: 3\n", false,
			"kernel_scratch entry 1 (CUSTOM:MyOp, line 2): buffer 2: input 3, but operator 0:0 (CUSTOM:MyOp) has 1 input(s)", false},
		{"an output the operator lacks", "kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - per_output_element: 1\n        output: 1\n", false,
			"kernel_scratch entry 1 (CUSTOM:MyOp, line 2): buffer 1: output 1, but operator 0:0 (CUSTOM:MyOp) has 1 output(s)", false},
		{"bytes that would overflow", "kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - bytes: 9223372036854775807\n", false,
			"kernel_scratch entry 1 (CUSTOM:MyOp, line 2): buffer 1: bytes 9223372036854775807 is more than 4294967295", false},
		{"no operator of this model", "kernel_scratch:\n  - custom: MyOp\n  - builtin: CONV_2D\n    buffers: [{bytes: 4}]\n", false,
			"warning: kernel_scratch entry 2 (CONV_2D, line 3) applies to no operator: no operator of the model is CONV_2D", true},
		{"no operator of this model, strict", "kernel_scratch:\n  - custom: MyOp\n  - builtin: CONV_2D\n", true,
			"kernel_scratch entry 2 (CONV_2D, line 3) applies to no operator: no operator of the model is CONV_2D (rules are strict)", false},
		{"replaced by a later entry, strict", "kernel_scratch:\n  - custom: MyOp\n  - custom: MyOp\n    buffers: [{bytes: 8}]\n", true,
			"kernel_scratch entry 1 (CUSTOM:MyOp, line 2) applies to no operator: kernel_scratch entry 2 (CUSTOM:MyOp, line 3) replaces it", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(dir, fmt.Sprintf("k%d.yaml", i))
			require.NoError(t, os.WriteFile(cfg, []byte(tt.config), 0o644))
			out := filepath.Join(dir, fmt.Sprintf("out%d", i))
			args := []string{model, "-o", out, "--config", cfg}
			if tt.strict {
				args = append(args, "--strict")
			}
			code, stdout, stderr := runHeliac(args...)
			if !tt.ok {
				assert.Equal(t, exitFailure, code, stdout)
				assert.Contains(t, stderr, tt.want)
				assert.NotContains(t, stderr, "negative")
				return
			}
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, tt.want)
			var doc struct {
				Unused []struct {
					Entry            int
					Operator, Reason string
				} `json:"unused_kernel_scratch"`
			}
			data, err := os.ReadFile(filepath.Join(out, "custom.plan.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &doc))
			require.Len(t, doc.Unused, 1)
			assert.Equal(t, 1, doc.Unused[0].Entry)
			assert.Equal(t, "CONV_2D", doc.Unused[0].Operator)
			assert.Equal(t, "no operator of the model is CONV_2D", doc.Unused[0].Reason)
		})
	}
}

// TestCPUFlag: --kernels cmsis-nn without --cpu plans for every CMSIS-NN
// code path, an unknown CPU is a usage error naming the known ones, a
// Cortex-M CPU does not go with a 64-bit host, and the plan records
// library, code path and CPU.
func TestCPUFlag(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runHeliac(helloWorld, "-o", filepath.Join(dir, "a"), "--kernels", "cmsis-nn")
	require.Equal(t, exitOK, code, stderr)
	data, err := os.ReadFile(filepath.Join(dir, "a", "hello_world_int8.plan.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"kernels": "cmsis-nn",`)
	assert.NotContains(t, string(data), `"kernels_path"`, "every code path")

	code, _, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "b"), "--kernels", "cmsis-nn", "--cpu", "cortex-a53")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `heliac: --cpu: kernels: unknown CPU "cortex-a53" (known: generic, cortex-m0, cortex-m0plus,`)

	code, _, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "b"), "--cpu", "cortex-m4", "--tflm-target", "host64")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "heliac: --cpu cortex-m4 is a Cortex-M CPU; --tflm-target host64 is a 64-bit host, which runs the kernels' portable code: --cpu generic")

	code, _, stderr = runHeliac(helloWorld, "-o", filepath.Join(dir, "g"), "--kernels", "cmsis-nn", "--cpu", "generic", "--tflm-target", "host64")
	require.Equal(t, exitOK, code, stderr)
	data, err = os.ReadFile(filepath.Join(dir, "g", "hello_world_int8.plan.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"kernels_path": "portable",`)

	out := filepath.Join(dir, "c")
	code, _, stderr = runHeliac(helloWorld, "-o", out, "--kernels", "cmsis-nn", "--cpu", "cortex-m55")
	require.Equal(t, exitOK, code, stderr)
	data, err = os.ReadFile(filepath.Join(out, "hello_world_int8.plan.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"kernels_path": "mve",`)
	var doc struct {
		Source struct{ Library, CPU string } `json:"kernel_scratch_source"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, "cmsis-nn", doc.Source.Library)
	assert.Equal(t, "cortex-m55", doc.Source.CPU)
}

// TestJSONSummary: --json prints the summary's figures as one JSON
// document that agrees with plan.json.
func TestJSONSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ks")
	code, stdout, stderr := runHeliac("../../testdata/models/keyword_scrambled_8bit.tflite", "-o", out, "--json")
	require.Equal(t, exitOK, code, stderr)
	var s struct {
		Steps  int
		Arenas []struct {
			Name             string
			Role             string
			Size             int64
			LowerBound       *int64 `json:"lower_bound"`
			TensorLowerBound *int64 `json:"tensor_lower_bound"`
		}
		KernelScratch int64 `json:"kernel_scratch"`
		Files         []string
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	data, err := os.ReadFile(filepath.Join(out, "keyword_scrambled_8bit.plan.json"))
	require.NoError(t, err)
	var doc struct {
		Model  struct{ Steps int }
		Arenas []struct {
			Name string
			Size int64
		}
		Usages map[string]struct {
			Arena      int
			LowerBound int64 `json:"lower_bound"`
		} `json:"arena_usages"`
		KernelScratch []struct{ Size int64 } `json:"kernel_scratch"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, doc.Model.Steps, s.Steps)
	require.Len(t, s.Arenas, len(doc.Arenas))
	for i, a := range doc.Arenas {
		assert.Equal(t, a.Name, s.Arenas[i].Name)
		assert.Equal(t, a.Size, s.Arenas[i].Size)
	}
	var total int64
	for _, k := range doc.KernelScratch {
		total += k.Size
	}
	assert.Equal(t, total, s.KernelScratch)
	require.Len(t, doc.Usages, 1)
	scratch := s.Arenas[doc.Usages["SRAM"].Arena]
	require.NotNil(t, scratch.LowerBound)
	assert.Equal(t, doc.Usages["SRAM"].LowerBound, *scratch.LowerBound)
	assert.Less(t, *scratch.TensorLowerBound, *scratch.LowerBound, "kernel scratch raises the bound")
	assert.Len(t, s.Files, 3)
}

// writeModel encodes m as a .tflite file at path and returns path.
func writeModel(t *testing.T, path string, m *graph.Model) string {
	t.Helper()
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// TestJSONError: with --json a failure prints an error object on stdout
// (what stderr says, and the exit code), for the main command and for
// inspect; without --json stdout stays empty.
func TestJSONError(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.tflite")
	for _, args := range [][]string{
		{missing, "-o", filepath.Join(dir, "out"), "--json"},
		{"inspect", missing, "--json"},
		{helloWorld, "-o", filepath.Join(dir, "out"), "--json", "--cpu", "cortex-a53"},
	} {
		code, stdout, stderr := runHeliac(args...)
		require.NotEqual(t, exitOK, code, "%v", args)
		var e struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &e), "%v: %q", args, stdout)
		assert.Equal(t, code, e.ExitCode, "%v", args)
		assert.Contains(t, stderr, "heliac: "+e.Error, "%v: the same message as stderr", args)
	}
	code, stdout, _ := runHeliac(missing, "-o", filepath.Join(dir, "out"))
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout, "without --json")
}
