package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// TestCorpusAgainstTFLM plans every model TFLM runs twice: with --planner
// tflm on TFLM's own lifetimes (no aliasing) the scratch arena must equal
// what TFLM's GreedyMemoryPlanner needs for the same tensors; with the
// default planner it must equal its lower bound.
func TestCorpusAgainstTFLM(t *testing.T) {
	dir := corpus.Require(t)
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	for _, r := range rows {
		if r["status"] != "ok" {
			continue
		}
		t.Run(r["model"], func(t *testing.T) {
			want, err := strconv.ParseInt(r["tflm_tensors_only_max_bytes"], 10, 64)
			require.NoError(t, err)
			data, err := os.ReadFile(filepath.Join(dir, "corpus", r["model"]))
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)

			lt, err := liveness.Analyze(m, liveness.Options{NoAlias: true})
			require.NoError(t, err)
			p, err := plan.Build(context.Background(), m, lt, plan.Options{Planner: plan.PlannerTFLM})
			require.NoError(t, err)
			got, _ := p.ScratchTotals()
			assert.Equal(t, want, got, "--planner tflm vs TFLM's planner")

			lt, err = liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			p, err = plan.Build(context.Background(), m, lt, plan.Options{})
			require.NoError(t, err)
			size, lb := p.ScratchTotals()
			assert.Equal(t, lb, size, "default planner reaches the lower bound")
			assert.LessOrEqual(t, size, want, "never worse than TFLM")
		})
	}
}
