package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
)

// memoryPlanCheck returns the command line of ../shared/tools/
// memoryplan_check.py, a checker written from heliaAOT's published
// MemoryPlan reference alone, or skips the test when it or python3 is
// absent.
func memoryPlanCheck(t *testing.T) []string {
	t.Helper()
	dir := corpus.SharedDir()
	if dir == "" {
		t.Skip("../shared not found; skipping heliaAOT's MemoryPlan check")
	}
	script := filepath.Join(dir, "tools", "memoryplan_check.py")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("%s not found; skipping heliaAOT's MemoryPlan check", script)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found; skipping heliaAOT's MemoryPlan check")
	}
	return []string{py, script}
}

// runMemoryPlanCheck runs the checker on files and returns its output and
// exit code.
func runMemoryPlanCheck(t *testing.T, files []string) (string, int) {
	t.Helper()
	argv := append(memoryPlanCheck(t), files...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

// TestMemoryPlanCheck compiles every bundled and corpus model for every
// built-in platform and checks each plan file with memoryplan_check.py, as
// a tool written against heliaAOT's MemoryPlan reads it; the golden plans
// (staged constants, arenas the application binds, kernel scratch) too.
func TestMemoryPlanCheck(t *testing.T) {
	skipUnderRace(t)
	memoryPlanCheck(t)
	models := testModels(t)
	if !testing.Short() {
		for _, e := range corpus.Manifest(t) {
			models = append(models, e.Path)
		}
	}
	type setup struct {
		name      string
		configure func(*driver.Config)
	}
	var setups []setup
	for _, name := range plan.BuiltinPlatformNames() {
		p, err := plan.BuiltinPlatform(name)
		require.NoError(t, err)
		setups = append(setups, setup{name, func(c *driver.Config) { c.Plan.Platform = &p }})
	}
	// Constants staged into RAM, arenas the application binds, kernel
	// scratch in the scratch arena.
	setups = append(setups, setup{"staged-bound-scratch", func(c *driver.Config) {
		c.Plan.Rules = []plan.Rule{{Class: "constant", Memory: "SRAM", Source: "FLASH"}}
		c.Plan.External = []string{"*"}
		c.Kernels, _ = kernels.Lookup(kernels.TFLMReference)
	}})
	dir := t.TempDir()
	var files []string
	for _, s := range setups {
		checked := 0
		for _, path := range models {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			cfg := testConfig(emit.ModelName(path))
			s.configure(&cfg)
			out, err := driver.Compile(context.Background(), data, cfg)
			var full *plan.CapacityError
			if errors.As(err, &full) {
				continue // the model does not fit this platform's banks
			}
			require.NoError(t, err, "%s on %s", path, s.name)
			file := filepath.Join(dir, fmt.Sprintf("%s.%s.plan.json", emit.ModelName(path), s.name))
			require.NoError(t, os.WriteFile(file, out.PlanJSON, 0o644))
			files = append(files, file)
			checked++
		}
		assert.NotZero(t, checked, "no model fits %s", s.name)
		t.Logf("%s: %d of %d models planned", s.name, checked, len(models))
	}
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*", "plan.json"))
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	files = append(files, goldens...)
	out, code := runMemoryPlanCheck(t, files)
	assert.Zero(t, code, "memoryplan_check.py:\n%s", out)
	assert.Equal(t, len(files), strings.Count(out, ": ok ("), "one ok line per plan file:\n%s", out)
}

// TestMemoryPlanCheckRefusesLists is the check's own control: a plan with
// heliac's former shapes (schema_version 3: the five maps as lists) fails
// it, so TestMemoryPlanCheck passing says something.
func TestMemoryPlanCheckRefusesLists(t *testing.T) {
	memoryPlanCheck(t)
	data, err := os.ReadFile(filepath.Join(goldenDir, "call_once_mul", "plan.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, k := range []string{"tensor_allocs", "arena_usages", "persistent_arenas", "constant_arenas", "tensor_lifetimes"} {
		m, ok := doc[k].(map[string]any)
		require.True(t, ok, "%s is an object", k)
		var list []any
		for _, v := range m {
			list = append(list, v)
		}
		doc[k] = list
	}
	old, err := json.Marshal(doc)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "v3.plan.json")
	require.NoError(t, os.WriteFile(file, old, 0o644))
	out, code := runMemoryPlanCheck(t, []string{file})
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "tensor_allocs: want a JSON object")
}

// TestTensorAllocsByAllocation reads each bundled model's tensor_allocs as
// heliaAOT's MemoryPlan does, by tensor id, and finds the same placement
// through plan.Allocation with that id; every tensor allocation of the
// plan has its entry.
func TestTensorAllocsByAllocation(t *testing.T) {
	type binding struct {
		Role         string  `json:"role"`
		Memory       string  `json:"memory"`
		Offset       int64   `json:"offset"`
		SourceMemory *string `json:"source_memory"`
	}
	for _, path := range testModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, testConfig(emit.ModelName(path)))
			require.NoError(t, err)
			var doc struct {
				TensorAllocs map[string]struct {
					Size    int64   `json:"size"`
					Binding binding `json:"binding"`
				} `json:"tensor_allocs"`
			}
			require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
			tensors := 0
			for _, a := range out.Plan.Allocs {
				if a.Kind == plan.TensorAlloc {
					tensors++
					assert.Contains(t, doc.TensorAllocs, string(plan.TensorIDOf(a.Ref)))
				}
			}
			assert.Len(t, doc.TensorAllocs, tensors)
			for id, e := range doc.TensorAllocs {
				a, err := out.Plan.Allocation(plan.TensorID(id))
				require.NoError(t, err, id)
				ar := out.Plan.Arena(a.Arena)
				require.NotNil(t, ar)
				assert.Equal(t, a.Offset, e.Binding.Offset, id)
				assert.Equal(t, a.Size, e.Size, id)
				assert.Equal(t, ar.Memory, e.Binding.Memory, id)
				assert.Equal(t, a.Class.String(), e.Binding.Role, id)
				if a.Class.String() == "constant" {
					require.NotNil(t, e.Binding.SourceMemory, "%s: a constant's source_memory is never null", id)
					assert.Equal(t, ar.Staged(), *e.Binding.SourceMemory != ar.Memory, "%s: staged exactly when its source is another memory", id)
				} else {
					assert.Nil(t, e.Binding.SourceMemory, id)
				}
			}
		})
	}
}
