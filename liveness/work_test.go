package liveness_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/liveness"
)

// flat returns a model whose entry subgraphs (main, and the others, which
// nothing calls) each run ops operators.
func flat(entries, ops int) *graph.Model {
	m := &graph.Model{}
	for range entries {
		sg := graph.Subgraph{Tensors: []graph.Tensor{f32("x", 1)}}
		for range ops {
			sg.Ops = append(sg.Ops, op(1, ids(0), ids(0)))
		}
		m.Subgraphs = append(m.Subgraphs, sg)
	}
	return m
}

// fanIn returns a model whose main runs subgraph 1 calls times; subgraph 1
// runs one operator with n inputs.
func fanIn(calls, n int) *graph.Model {
	wide := op(1, make([]graph.TensorID, n), ids(0))
	m := &graph.Model{Subgraphs: []graph.Subgraph{{}, {Tensors: []graph.Tensor{f32("x", 1)}, Ops: []graph.Op{wide}}}}
	for range calls {
		m.Subgraphs[0].Ops = append(m.Subgraphs[0].Ops, op(graph.CallOnce, nil, nil, 1))
	}
	return m
}

// nested returns a model of depth+1 subgraphs, each calling the next once.
func nested(depth int) *graph.Model {
	m := &graph.Model{}
	for i := range depth + 1 {
		sg := graph.Subgraph{}
		if i < depth {
			sg.Ops = []graph.Op{op(graph.CallOnce, nil, nil, graph.SubgraphIndex(i+1))}
		}
		m.Subgraphs = append(m.Subgraphs, sg)
	}
	return m
}

func TestWorkLimits(t *testing.T) {
	selfCall := nested(2)
	selfCall.Subgraphs[2].Ops = []graph.Op{op(graph.CallOnce, nil, nil, 1)}
	tests := []struct {
		name  string
		model *graph.Model
		steps int    // when the model is within the limits
		err   string // otherwise
	}{
		{name: "a timeline of exactly MaxSteps steps", model: flat(1, liveness.MaxSteps-1), steps: liveness.MaxSteps},
		{name: "calls nested MaxDepth deep", model: nested(liveness.MaxDepth), steps: 2*liveness.MaxDepth + 1},
		{name: "each subgraph calls the next twice, 20 deep", model: randmodel.CallChain(20, 2),
			err: `liveness: subgraph 7 ("level7") takes 40957 steps with the subgraphs it calls, each run again on every call, over the limit of 32768`},
		{name: "one step too many", model: flat(1, liveness.MaxSteps),
			err: "liveness: subgraph 0 takes 32769 steps with the subgraphs it calls, each run again on every call, over the limit of 32768"},
		{name: "entry subgraphs within the limit each, not together", model: flat(2, liveness.MaxSteps/2),
			err: "liveness: the model's entry subgraphs take 32770 steps together, over the limit of 32768"},
		{name: "a wide operator called many times", model: fanIn(1000, 300),
			err: "liveness: subgraph 0 makes 301000 operand uses with the subgraphs it calls, each run again on every call, over the limit of 131072"},
		{name: "calls nested too deep", model: nested(liveness.MaxDepth + 1),
			err: "liveness: calls nest deeper than 64 at subgraph 65"},
		{name: "a call cycle", model: selfCall, err: "liveness: subgraph 1 calls itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(tt.model, liveness.Options{})
			check := liveness.CheckLimits(tt.model)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				assert.EqualError(t, check, tt.err, "CheckLimits")
				return
			}
			require.NoError(t, err)
			assert.NoError(t, check, "CheckLimits")
			assert.Equal(t, tt.steps, lt.Schedule.Steps)
		})
	}
}

// TestWorkLimitComesFirst checks that a model over a limit is refused
// before anything grows with its timeline: the call chain describes about
// five million steps, and Analyze allocates no more than the model's size.
func TestWorkLimitComesFirst(t *testing.T) {
	m := randmodel.CallChain(20, 2)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := liveness.Analyze(m, liveness.Options{})
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated before the error")
}
