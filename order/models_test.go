package order_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// checkResult checks r, made in mode mo, against liveness and verify: its
// peaks are those of liveness's lifetimes on its order and on the model's,
// its order is one verify accepts (compiled with the fast planner:
// placement is not what is checked), and its figures are in order.
func checkResult(t *testing.T, name string, data []byte, m *graph.Model, mo mode, r *order.Result) {
	t.Helper()
	name += " (" + mo.name + ")"
	assert.Equal(t, livePeak(t, m, mo.liveness(r.Order), order.DefaultAlignment), r.Peak, "%s: Peak against liveness", name)
	assert.Equal(t, livePeak(t, m, mo.liveness(nil), order.DefaultAlignment), r.ModelPeak, "%s: ModelPeak against liveness", name)
	assert.LessOrEqual(t, r.Peak, r.ModelPeak, name)
	assert.LessOrEqual(t, r.LowerBound, r.Peak, name)
	checkLegal(t, name, data, m, mo.liveness(r.Order))
}

// checkLegal compiles the model in opts.Order, which runs the verifier on
// the plan (its BadSchedule rules, and its in-place rules when opts has
// kernels), and checks what verify does not: every CALL_ONCE keeps its
// place among its subgraph's operators.
func checkLegal(t *testing.T, name string, data []byte, m *graph.Model, opts liveness.Options) {
	t.Helper()
	if data == nil {
		var err error
		data, err = tflite.Encode(m, tflite.EncodeOptions{})
		require.NoError(t, err, name)
	}
	_, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "order", Version: "test",
		Liveness: opts, Plan: plan.Options{Planner: plan.PlannerTFLM}})
	require.NoError(t, err, "%s: the order does not compile and verify", name)
	ord := opts.Order
	for s, sg := range m.Subgraphs {
		for pos, oi := range ord[s] {
			if sg.Ops[oi].Code != graph.CallOnce {
				continue
			}
			for _, other := range ord[s][:pos] {
				assert.Less(t, other, oi, "%s: op %d:%d runs before CALL_ONCE %d:%d, which the model lists first", name, s, other, s, oi)
			}
			for _, other := range ord[s][pos+1:] {
				assert.Greater(t, other, oi, "%s: op %d:%d runs after CALL_ONCE %d:%d, which the model lists after", name, s, other, s, oi)
			}
		}
	}
}

// checkModes schedules m in every mode and checks each result.
func checkModes(t *testing.T, name string, data []byte, m *graph.Model) {
	t.Helper()
	for _, mo := range modes(t) {
		checkResult(t, name, data, m, mo, schedule(t, m, mo.options(m)))
	}
}

// TestBundledModels schedules every model of testdata/models.
func TestBundledModels(t *testing.T) {
	for _, nm := range bundledModels(t) {
		t.Run(nm.name, func(t *testing.T) {
			checkModes(t, nm.name, nm.data, load(t, nm.data))
		})
	}
}

// TestCorpusModels schedules every model of the shared corpus.
func TestCorpusModels(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the corpus takes seconds, a minute under the race detector")
	}
	for _, nm := range corpusModels(t) {
		t.Run(nm.name, func(t *testing.T) {
			m := load(t, nm.data)
			if liveness.HasOwnPlan(m) {
				t.Skip("the model's own offline plan fixes some offsets (Ethos-U), which order does not model: the driver runs such a model in its own order")
			}
			checkModes(t, nm.name, nm.data, m)
		})
	}
}
