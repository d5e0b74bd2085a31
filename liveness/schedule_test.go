package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

func TestScheduleRunsInStepOrder(t *testing.T) {
	lt, err := liveness.Analyze(whileModel(), liveness.Options{})
	require.NoError(t, err)
	assert.Equal(t, liveness.ModelOrder(whileModel()), lt.Schedule.Order)
	run := func(s, o int, first, last liveness.Step) liveness.Run {
		return liveness.Run{Op: graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: graph.OpIndex(o)}, Span: liveness.Interval{First: first, Last: last}}
	}
	// Step 0: main's inputs; WHILE at 1 holds cond (inputs 2, LESS 3) and
	// body (inputs 4, three operators 5..7).
	assert.Equal(t, []liveness.Run{
		run(0, 0, 1, 7),
		run(1, 0, 3, 3),
		run(2, 0, 5, 5), run(2, 1, 6, 6), run(2, 2, 7, 7),
	}, lt.Schedule.Runs)
	assert.Equal(t, liveness.Interval{}, lt.Schedule.Span(graph.OpRef{Subgraph: 3, Op: 0}), "no such subgraph")
	assert.Equal(t, liveness.Interval{}, lt.Schedule.Span(graph.OpRef{Subgraph: 2, Op: 3}), "no such operator")
}

func TestScheduleRunsASubgraphOncePerCall(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{f32("in", 1), f32("mid", 1), f32("out", 1)},
			Inputs:  ids(0), Outputs: ids(2),
			Ops: []graph.Op{op(graph.CallOnce, nil, nil, 1), op(1, ids(0), ids(1)), op(graph.CallOnce, nil, nil, 1), op(1, ids(1), ids(2))},
		},
		{Ops: []graph.Op{op(1, nil, nil)}},
	}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	var ops []graph.OpRef
	for _, r := range lt.Schedule.Runs {
		ops = append(ops, r.Op)
	}
	at := func(s, o int) graph.OpRef { return graph.OpRef{Subgraph: graph.SubgraphIndex(s), Op: graph.OpIndex(o)} }
	assert.Equal(t, []graph.OpRef{at(0, 0), at(1, 0), at(0, 1), at(0, 2), at(1, 0), at(0, 3)}, ops)
	assert.Equal(t, liveness.Interval{First: 3, Last: 7}, lt.Schedule.Span(graph.OpRef{Subgraph: 1, Op: 0}), "the hull of both runs")
}

// diamond is in -> op0 -> a, in -> op1 -> b, (a, b) -> op2 -> out: op0 and
// op1 may run in either order.
func diamond() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4), f32("a", 4), f32("b", 4), f32("out", 4)},
		Inputs:  ids(0), Outputs: ids(3),
		Ops: []graph.Op{op(1, ids(0), ids(1)), op(1, ids(0), ids(2)), op(1, ids(1, 2), ids(3))},
	}}}
}

func TestOrderGivesTheSteps(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{Order: [][]graph.OpIndex{{1, 0, 2}}})
	require.NoError(t, err)
	assert.Equal(t, [][]graph.OpIndex{{1, 0, 2}}, lt.Schedule.Order)
	assert.Equal(t, liveness.Interval{First: 1, Last: 1}, lt.Schedule.Span(graph.OpRef{Op: 1}), "op1 runs first")
	assert.Equal(t, liveness.Interval{First: 2, Last: 2}, lt.Schedule.Span(graph.OpRef{Op: 0}))
	live := func(tn int) liveness.Interval { return lt.Lookup(graph.TensorRef{Tensor: graph.TensorID(tn)}).Live }
	assert.Equal(t, liveness.Interval{First: 2, Last: 3}, live(1), "a is written by op0, now at step 2")
	assert.Equal(t, liveness.Interval{First: 1, Last: 3}, live(2), "b is written by op1, now at step 1")
	assert.Equal(t, liveness.Interval{First: 0, Last: 2}, live(0))
}

func TestOrderMustListEveryOperatorOnce(t *testing.T) {
	tests := []struct {
		name  string
		order [][]graph.OpIndex
		want  string
	}{
		{"too few subgraphs", [][]graph.OpIndex{}, "the order lists 0 subgraphs, the model has 1"},
		{"an operator left out", [][]graph.OpIndex{{0, 1}}, "the order of subgraph 0 lists 2 operators, the subgraph has 3"},
		{"an operator twice", [][]graph.OpIndex{{0, 1, 1}}, "the order of subgraph 0 lists operator 1 twice"},
		{"no such operator", [][]graph.OpIndex{{0, 1, 3}}, "the order of subgraph 0 lists operator 3, which does not exist"},
		{"negative", [][]graph.OpIndex{{0, -1, 2}}, "the order of subgraph 0 lists operator -1, which does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := liveness.Analyze(diamond(), liveness.Options{Order: tt.order})
			assert.ErrorContains(t, err, "liveness: "+tt.want)
		})
	}
}

func TestOrderingIsRecorded(t *testing.T) {
	swapped := [][]graph.OpIndex{{1, 0, 2}}
	tests := []struct {
		name string
		opts liveness.Options
		want liveness.Ordering
		err  string
	}{
		{"no order is the model's", liveness.Options{}, liveness.Ordering{Strategy: liveness.OrderModel}, ""},
		{"the model's even when said otherwise", liveness.Options{Ordering: liveness.Ordering{Strategy: liveness.OrderMemory}},
			liveness.Ordering{Strategy: liveness.OrderModel}, ""},
		{"an order without a strategy is given", liveness.Options{Order: swapped}, liveness.Ordering{Strategy: liveness.OrderGiven}, ""},
		{"a proven memory order", liveness.Options{Order: swapped, Ordering: liveness.Ordering{Strategy: liveness.OrderMemory, Proven: true}},
			liveness.Ordering{Strategy: liveness.OrderMemory, Proven: true}, ""},
		{"an unknown strategy", liveness.Options{Order: swapped, Ordering: liveness.Ordering{Strategy: "fastest"}},
			liveness.Ordering{}, `unknown ordering strategy "fastest"`},
		{"a proven given order", liveness.Options{Order: swapped, Ordering: liveness.Ordering{Proven: true}},
			liveness.Ordering{}, "only a memory order can be proven optimal, not a given one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt, err := liveness.Analyze(diamond(), tt.opts)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, lt.Schedule.Ordering)
		})
	}
}

func TestScheduleMoved(t *testing.T) {
	for _, tt := range []struct {
		order [][]graph.OpIndex
		want  int
	}{{nil, 0}, {[][]graph.OpIndex{{0, 1, 2}}, 0}, {[][]graph.OpIndex{{1, 0, 2}}, 2}} {
		lt, err := liveness.Analyze(diamond(), liveness.Options{Order: tt.order})
		require.NoError(t, err)
		assert.Equal(t, tt.want, lt.Schedule.Moved(), "%v", tt.order)
	}
}
