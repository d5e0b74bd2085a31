package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// scratchModel is in [1, 4, 4, 8] int8 -> MEAN over axes 1, 2 -> m
// [1, 1, 1, 8] -> CUSTOM MyOp -> out: MEAN's kernel asks for an int32
// accumulator per output element, the input's rank and the axes; MyOp's
// requests are unknown.
func scratchModel(t *testing.T) []byte {
	t.Helper()
	tensor := func(name string, typ graph.ElementType, shape ...int32) graph.Tensor {
		size, err := graph.ByteSize(typ, shape)
		require.NoError(t, err)
		return graph.Tensor{Name: name, Type: typ, Shape: shape, Size: size}
	}
	axes := tensor("axes", graph.Int32, 2)
	axes.Buffer = 1
	m := &graph.Model{Version: tflite.SchemaVersion,
		Buffers: []graph.Buffer{{}, {Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{tensor("in", graph.Int8, 1, 4, 4, 8), axes, tensor("m", graph.Int8, 1, 1, 1, 8), tensor("out", graph.Int8, 1, 1, 1, 8)},
			Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{3},
			Ops: []graph.Op{
				{Code: 40, Version: 1, Inputs: []graph.TensorID{0, 1}, Outputs: []graph.TensorID{2}},
				{Code: graph.Custom, CustomName: "MyOp", Version: 1, Inputs: []graph.TensorID{2}, Outputs: []graph.TensorID{3}},
			},
		}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// TestKernelScratchPlanned: with a kernel library, every request its
// kernels make is planned (live while its operator runs, verified, in
// plan.json and the C module), and an operator whose requests it cannot
// know is listed, or with Strict fails the compile.
func TestKernelScratchPlanned(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	data := scratchModel(t)
	cfg := driver.Config{ModelName: "scratch", Version: "test", Kernels: lib}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	var sizes []int64
	for _, a := range out.Plan.Allocs {
		if a.Kind == plan.KernelScratchAlloc {
			assert.Equal(t, graph.OpRef{Op: 0}, a.Op, "MEAN owns them")
			assert.Equal(t, out.Plan.Schedule.Span(a.Op), a.Live)
			sizes = append(sizes, a.Size)
		}
	}
	assert.Equal(t, []int64{4 * 8, 4 * 4, 4 * 2}, sizes, "accumulator, rank, axes")
	assert.Equal(t, []graph.OpRef{{Op: 1}}, out.Plan.UnknownScratch)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
	assert.Equal(t, []any{map[string]any{"subgraph": 0.0, "operator": 1.0, "name": "CUSTOM:MyOp"}}, v["unknown_kernel_scratch"])
	c := loadSchema(t)
	c.check("$", any(v), c.root)
	assert.Empty(t, c.errs, "plan.json against docs/plan.schema.json")
	summary := string(emit.Summary(out.Model, out.Plan))
	assert.Contains(t, summary, "warning: op 0:1 CUSTOM:MyOp may ask for kernel scratch its kernel library has no rule for")

	cfg.Plan.Strict = true
	_, err = driver.Compile(context.Background(), data, cfg)
	assert.EqualError(t, err, "plan: operator 0:1 (CUSTOM:MyOp) asks for kernel scratch its library has no rule for (rules are strict)")

	none, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "scratch", Version: "test"})
	require.NoError(t, err)
	assert.Empty(t, none.Plan.UnknownScratch, "without a library, nothing is planned or listed")
	for _, a := range none.Plan.Allocs {
		assert.NotEqual(t, plan.KernelScratchAlloc, a.Kind)
	}
}

// TestKernelScratchAtBound compiles every corpus model TFLM runs as the
// CLI does with --emit-tflite (kernel scratch on tflm_run's 64-bit
// pointers) and expects the scratch arena, tensors and kernel scratch
// together, no larger than what TFLM's own planner needs for the same
// buffers, at its lower bound, and with every kernel scratch buffer where
// TFLM's planner will put it at no extra cost. Under TFLM's own rules (no
// in-place writes) every arena meets its bound; with them, alias groups
// are rigid shapes whose bound need not be reachable, and an arena above
// it must still be smaller than under TFLM's rules.
func TestKernelScratchAtBound(t *testing.T) {
	skipUnderRace(t)
	var withScratch, below, above int
	for _, m := range tflmModels(t) {
		t.Run(m.File, func(t *testing.T) {
			rules := referenceConfig(t)
			rules.Liveness.Kernels = nil
			base, _ := emitTFLite(t, m, t.TempDir(), rules)
			out, _ := emitTFLite(t, m, t.TempDir(), referenceConfig(t))
			baseArena, arena := soleScratch(t, base.Plan), soleScratch(t, out.Plan)

			assert.Equal(t, baseArena.LowerBound, baseArena.Size, "TFLM's rules: arena at its lower bound, kernel scratch included")
			assert.LessOrEqual(t, arena.Size, m.plannerMax, "arena vs TFLM's planner")
			assert.LessOrEqual(t, baseArena.Size, m.plannerMax, "TFLM's rules: arena vs TFLM's planner")
			assert.Zero(t, arena.TFLMGrowth, "TFLM's placement of kernel scratch costs nothing")
			assert.Zero(t, baseArena.TFLMGrowth, "TFLM's rules: TFLM's placement of kernel scratch costs nothing")
			if arena.Size != arena.LowerBound {
				above++
				assert.Less(t, arena.Size, baseArena.Size, "in place, above the bound: still below TFLM's rules")
			}
			if arena.TensorLowerBound != arena.LowerBound {
				withScratch++
			}
			if arena.Size < m.plannerMax {
				below++
			}
		})
	}
	t.Logf("kernel scratch raises the lower bound of %d models; the arena is smaller than TFLM's planner needs on %d; "+
		"%d in-place arena(s) above their bound", withScratch, below, above)
}

// soleScratch returns a plan's one scratch arena.
func soleScratch(t *testing.T, p *plan.Plan) *plan.Arena {
	t.Helper()
	var arena *plan.Arena
	for i := range p.Arenas {
		if a := &p.Arenas[i]; a.Role == liveness.Scratch {
			require.Nil(t, arena, "one scratch arena")
			arena = a
		}
	}
	require.NotNil(t, arena)
	return arena
}

// TestCMSISNNCorpus compiles every corpus model TFLM runs with cmsis-nn
// for a CPU of each extension: every plan verifies (kernel scratch
// included), plan.json names the library and CPU, and the summary counts
// exactly the kernel scratch plan.json lists. The sizes themselves are
// checked against CMSIS-NN's functions in kernels (TestCMSISNNScratch).
func TestCMSISNNCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("compiles every TFLM-run corpus model three times; skipped with -short")
	}
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	withScratch := map[string]int{}
	for _, cpu := range []string{"cortex-m0", "cortex-m4", "cortex-m55"} {
		target, err := kernels.CPU(cpu)
		require.NoError(t, err)
		for _, m := range tflmModels(t) {
			t.Run(cpu+"/"+m.File, func(t *testing.T) {
				data, err := os.ReadFile(m.Path)
				require.NoError(t, err)
				out, err := driver.Compile(context.Background(), data,
					driver.Config{Liveness: liveness.Options{Kernels: lib}, Kernels: lib, Target: target})
				require.NoError(t, err)
				var doc struct {
					Source        struct{ Library, CPU string }           `json:"kernel_scratch_source"`
					Kernels       string                                  `json:"kernels"`
					KernelScratch []struct{ Operator, Index, Size int64 } `json:"kernel_scratch"`
				}
				require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
				assert.Equal(t, kernels.CMSISNN, doc.Source.Library)
				assert.Equal(t, cpu, doc.Source.CPU)
				assert.Equal(t, kernels.CMSISNN, doc.Kernels)
				summary := string(emit.Summary(out.Model, out.Plan))
				if len(doc.KernelScratch) == 0 {
					assert.NotContains(t, summary, "kernel scratch:")
					return
				}
				withScratch[cpu]++
				var total int64
				ops := map[int64]bool{}
				for _, k := range doc.KernelScratch {
					total += k.Size
					ops[k.Operator] = true
				}
				assert.Contains(t, summary, fmt.Sprintf("kernel scratch: %d buffer(s) for %d operator(s), %d B in all (cmsis-nn on %s)\n",
					len(doc.KernelScratch), len(ops), total, cpu))
			})
		}
	}
	t.Logf("models whose CMSIS-NN kernels ask for scratch: %v", withScratch)
}

// TestControlFlowScratch: kernel scratch of a control-flow operator
// (here a WHILE given scratch by a config override) lives while its
// condition and body run, so no tensor of theirs shares its bytes; the
// body's own operators' scratch lives only at their steps.
func TestControlFlowScratch(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/multi_subgraphs_while.tflite")
	require.NoError(t, err)
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	lib, err := ref.WithScratch([]kernels.ScratchOverride{
		{Builtin: "WHILE", Buffers: []kernels.ScratchBuffer{{Bytes: 64}}},
		{Builtin: "ADD", Buffers: []kernels.ScratchBuffer{{Bytes: 32}}},
	})
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, driver.Config{Kernels: lib})
	require.NoError(t, err, "the plan verifies")
	sc := out.Plan.Schedule
	var while, body []plan.Alloc
	for _, a := range out.Plan.Allocs {
		switch {
		case a.Kind != plan.KernelScratchAlloc:
		case a.Op.Subgraph == 0:
			while = append(while, a)
		default:
			body = append(body, a)
		}
	}
	require.Len(t, while, 1)
	require.NotEmpty(t, body)
	span := sc.Span(graph.OpRef{Subgraph: 0, Op: 0})
	assert.Equal(t, span, while[0].Live)
	for si := 1; si < len(out.Model.Subgraphs); si++ {
		for oi := range out.Model.Subgraphs[si].Ops {
			s := sc.Span(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)})
			assert.True(t, span.First < s.First && s.Last <= span.Last, "op %d:%d %v inside WHILE's %v", si, oi, s, span)
		}
	}
	for _, a := range body {
		assert.Equal(t, sc.Span(a.Op), a.Live)
		assert.Less(t, a.Live.Last-a.Live.First, span.Last-span.First, "a body operator's scratch lives only while it runs")
	}
}

// TestCompileSetCorpus compiles every corpus model as one set: every plan
// verifies with its scratch arena shared, the buffer the largest of them,
// and the shared module binds each model.
func TestCompileSetCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("compiles the whole corpus as one set; skipped with -short")
	}
	var models []driver.Model
	for _, e := range corpus.Manifest(t) {
		data, err := os.ReadFile(e.Path)
		require.NoError(t, err)
		cfg := referenceConfig(t)
		cfg.ModelName = emit.ModelName(e.File)
		cfg.Version = "test"
		models = append(models, driver.Model{Data: data, Config: cfg})
	}
	set, err := driver.CompileSet(context.Background(), models)
	require.NoError(t, err, "every plan verifies")
	require.Len(t, set.Outputs, len(models))
	var largest, apart int64
	for _, o := range set.Outputs {
		s := soleScratch(t, o.Plan)
		largest, apart = max(largest, s.Size), apart+s.Size
	}
	for _, o := range set.Outputs {
		s := soleScratch(t, o.Plan)
		assert.Equal(t, plan.Shared, s.Provider, o.Prefix())
		assert.Equal(t, largest, s.SharedSize, o.Prefix())
	}
	require.Len(t, set.Shared, 2)
	assert.Equal(t, len(models), strings.Count(string(set.Shared[1].Data), "_bind_arena("), "one binding per model")
	t.Logf("%d models share one scratch buffer of %d B instead of %d B apart", len(models), largest, apart)
}
