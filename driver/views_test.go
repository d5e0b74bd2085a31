package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// rewrittenViewModel is in -> ABS -> x -> RESHAPE -> v, then x written
// again (by LOGISTIC(x) -> x when ownInput, else by NEG(in) -> x), then
// ADD(v, x) -> out, which must read v as RESHAPE made it: x before the
// second write. With viewLast, RESHAPE runs after the second write
// instead, and v may share x's bytes.
func rewrittenViewModel(t *testing.T, ownInput, viewLast bool) []byte {
	t.Helper()
	f32 := func(name string, shape ...int32) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: shape, Size: 4 * 16}
	}
	op := func(name string, code graph.Opcode, in, out []graph.TensorID) graph.Op {
		return graph.Op{Code: code, CodeName: name, Version: 1, Inputs: in, Outputs: out}
	}
	second := op("LOGISTIC", 14, []graph.TensorID{1}, []graph.TensorID{1})
	if !ownInput {
		second = op("NEG", 59, []graph.TensorID{0}, []graph.TensorID{1})
	}
	m := &graph.Model{Version: 3, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 1, 16), f32("x", 1, 16), f32("v", 4, 4), f32("out", 4, 4)},
		Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{3},
		Ops: []graph.Op{
			op("ABS", 101, []graph.TensorID{0}, []graph.TensorID{1}),
			op("RESHAPE", graph.Reshape, []graph.TensorID{1}, []graph.TensorID{2}),
			second,
			op("ADD", 0, []graph.TensorID{2, 1}, []graph.TensorID{3}),
		},
	}}}
	if ops := m.Subgraphs[0].Ops; viewLast {
		ops[1], ops[2] = ops[2], ops[1]
	}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestViewOfRewrittenTensor compiles a view of a tensor written again
// while the view is still read: the plan gives the view bytes of its own;
// the plan that shares them (as heliac made it before the sharing rule)
// is refused by the verifier, naming the tensors and the writer; and,
// when ../shared/tools/tflm_run is there, TFLM computes the same outputs
// and intermediates with heliac's plan as with its own, over several
// seeds, and other ones with the shared bytes.
func TestViewOfRewrittenTensor(t *testing.T) {
	x, v := graph.TensorRef{Tensor: 1}, graph.TensorRef{Tensor: 2}
	for _, tc := range []struct {
		name     string
		ownInput bool
		writer   string
	}{
		{"op writes its own input", true, "op 0:2 (LOGISTIC)"},
		{"second writer", false, "op 0:2 (NEG)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := rewrittenViewModel(t, tc.ownInput, false)
			cfg := referenceConfig(t)
			cfg.ModelName, cfg.Version, cfg.EmitTFLite = "views", "test", true
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			a := out.Plan.Lookup(plan.TensorKey(v))
			require.NotNil(t, a)
			assert.Nil(t, a.AliasOf, "v is read after x is written again")

			// A view after the last write shares x's bytes, and verifies.
			after, err := driver.Compile(context.Background(), rewrittenViewModel(t, tc.ownInput, true), cfg)
			require.NoError(t, err)
			a = after.Plan.Lookup(plan.TensorKey(v))
			require.NotNil(t, a)
			assert.Equal(t, &x, a.AliasOf, "nothing writes x after the view")

			// The plan with v in x's group.
			lt, err := liveness.Analyze(out.Model, liveness.Options{Order: out.Lifetimes.Schedule.Order})
			require.NoError(t, err)
			lv, lx := lt.Lookup(v), lt.Lookup(x)
			require.Nil(t, lv.AliasOf)
			lv.AliasOf = &x
			lx.Group = liveness.Interval{First: min(lx.Group.First, lv.Live.First), Last: max(lx.Group.Last, lv.Live.Last)}
			bad, err := plan.Build(context.Background(), out.Model, lt, plan.Options{})
			require.NoError(t, err)
			js, err := emit.JSON(out.Model, bad, out.Meta)
			require.NoError(t, err)
			var found []string
			for _, viol := range verify.Plan(out.Model, js) {
				t.Log(viol)
				if viol.Kind == verify.BadAlias && strings.Contains(viol.Msg, "0:2 (v) shares bytes with 0:1 (x)") &&
					strings.Contains(viol.Msg, tc.writer) {
					found = append(found, viol.Msg)
				}
			}
			assert.Len(t, found, 1, "the verifier names v, x and the operator writing x")

			tool := tflmrun.Path()
			if tool == "" {
				t.Skip("../shared/tools/tflm_run is absent: TFLM not run")
			}
			dir := t.TempDir()
			orig, mine, shared := filepath.Join(dir, "orig.tflite"), filepath.Join(dir, "heliac.tflite"), filepath.Join(dir, "shared.tflite")
			require.NoError(t, os.WriteFile(orig, data, 0o644))
			require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
			op, err := emit.TFLMOfflinePlan(out.Model, bad)
			require.NoError(t, err)
			sharedData, _, err := tflite.SetMetadata(data, graph.OfflinePlanName, op.Data)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(shared, sharedData, 0o644))
			for seed := 1; seed <= 4; seed++ {
				run := func(path string) *tflmrun.Result {
					res, err := tflmrun.Run(context.Background(), tool, path, tflmrun.Options{Seed: seed, Invokes: interopInvokes,
						ArenaBytes: 64 << 10, Trace: true})
					require.NoError(t, err)
					require.True(t, res.OK(), "%s: %s", path, res.Error())
					return res
				}
				want, got, wrong := run(orig), run(mine), run(shared)
				assert.Equal(t, want.Outputs(), got.Outputs(), "seed %d: outputs with heliac's plan", seed)
				assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "seed %d: intermediates with heliac's plan", seed)
				assert.NotEqual(t, want.Outputs(), wrong.Outputs(), "seed %d: v sharing x's bytes changes what TFLM computes", seed)
			}
		})
	}
}
