package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// assertHashRecomputed checks that the verifier, from plan.json alone,
// recomputes the hash the planner gave the plan.
func assertHashRecomputed(t *testing.T, out *driver.Output) {
	t.Helper()
	got, bad := verify.PlanHash(out.PlanJSON)
	require.Nil(t, bad)
	assert.Equal(t, out.Plan.Hash(), got, "verify.PlanHash and plan.Hash disagree")
}

// TestPlanHashRecomputed compares verify's recomputation of plan_hash with
// plan.Hash on every golden plan and every corpus model.
func TestPlanHashRecomputed(t *testing.T) {
	for _, f := range testModels(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			name := emit.ModelName(f)
			golden, err := os.ReadFile(filepath.Join(goldenDir, name, "plan.json"))
			require.NoError(t, err)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, testConfig(name))
			require.NoError(t, err)
			assertHashRecomputed(t, out)
			got, bad := verify.PlanHash(golden)
			require.Nil(t, bad)
			assert.Equal(t, out.Plan.Hash(), got, "the golden plan.json")
		})
	}
	if testing.Short() {
		return // TestCompileCorpus checks the corpus, which -short skips too
	}
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, testConfig(emit.ModelName(e.File)))
			require.NoError(t, err)
			assertHashRecomputed(t, out)
		})
	}
}

// TestVerifyPlanEditedToAnotherLayout edits a shipped plan.json to another
// layout that is safe in itself — two scratch tensors live together swap
// offsets — and expects `heliac verify` to see that plan_hash no longer
// matches and that the C sources describe the old layout; with plan_hash
// recomputed, it must still see the C.
func TestVerifyPlanEditedToAnotherLayout(t *testing.T) {
	model, err := os.ReadFile("../testdata/models/call_once_mul.tflite")
	require.NoError(t, err)
	golden := filepath.Join(goldenDir, "call_once_mul")
	files := map[string][]byte{"call_once_mul.tflite": model}
	const planFile = "call_once_mul" + driver.PlanSuffix
	for _, f := range []string{"plan.json", "call_once_mul.h", "call_once_mul.c"} {
		name := f
		if f == "plan.json" {
			name = planFile
		}
		files[name], err = os.ReadFile(filepath.Join(golden, f))
		require.NoError(t, err)
	}
	// 0:0 at 32 and 0:3 at 0, 4 bytes each, both live at step 8: swapped,
	// nothing overlaps and every figure of the arena stays the same.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(files[planFile], &doc))
	allocs := doc["tensor_allocs"].(map[string]any)
	offset := func(id string) map[string]any { return allocs[id].(map[string]any)["binding"].(map[string]any) }
	require.Equal(t, []any{32.0, 0.0}, []any{offset("0:0")["offset"], offset("0:3")["offset"]})
	offset("0:0")["offset"], offset("0:3")["offset"] = 0, 32
	edited, err := json.Marshal(doc)
	require.NoError(t, err)
	plan := string(edited)
	hash, bad := verify.PlanHash([]byte(plan))
	require.Nil(t, bad)
	rehashed := strings.Replace(plan, `"plan_hash":"a1c5`, `"plan_hash":"`+hash+`","old":"a1c5`, 1)
	require.NotEqual(t, plan, rehashed)

	write := func(t *testing.T, plan string) string {
		dir := t.TempDir()
		files[planFile] = []byte(plan)
		for f, data := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
		}
		return dir
	}
	t.Run("stale plan_hash", func(t *testing.T) {
		_, err := driver.VerifyPlanFile(write(t, plan), "")
		var ve *driver.VerifyError
		require.True(t, errors.As(err, &ve), "want a *driver.VerifyError, got %v", err)
		var kinds []string
		for _, v := range ve.Violations {
			kinds = append(kinds, v.Kind.String())
			t.Log(v)
		}
		// Two table rows and the input and output macros disagree.
		assert.Equal(t, []string{"HashMismatch", "CMismatch", "CMismatch", "CMismatch", "CMismatch"}, kinds)
	})
	t.Run("plan_hash recomputed", func(t *testing.T) {
		// The C files now carry another plan's hash: the set is not one
		// run's (exit 1), whether a run was killed or the plan edited.
		_, err := driver.VerifyPlanFile(write(t, rehashed), "")
		require.Error(t, err)
		var ve *driver.VerifyError
		assert.False(t, errors.As(err, &ve))
		assert.ErrorContains(t, err, "the files come from different runs of heliac")
	})
	t.Run("plan_hash recomputed, C checked alone", func(t *testing.T) {
		m, err := tflite.Load(model)
		require.NoError(t, err)
		v := verify.C(m, []byte(rehashed), verify.Module{Header: files["call_once_mul.h"], Source: files["call_once_mul.c"]})
		var kinds []string
		for _, x := range v {
			kinds = append(kinds, x.Kind.String())
		}
		assert.Equal(t, []string{"CMismatch", "CMismatch", "CMismatch", "CMismatch", "CMismatch", "CMismatch"}, kinds)
	})
}
