package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// viewChain is in -> RELU -> a -> RESHAPE -> b -> SQUEEZE -> c -> RELU -> d
// -> RESHAPE -> out, with a also read by the last RELU and an EXPAND_DIMS of
// a into e whose size differs (a bad model, but a planner must not share).
func viewChain() *graph.Model {
	e := f32("e", 5)
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4), f32("a", 4), f32("b", 4), f32("c", 4), f32("d", 4), f32("out", 4), e},
		Inputs:  ids(0), Outputs: ids(5),
		Ops: []graph.Op{
			op(1, ids(0), ids(1)),
			op(graph.Reshape, ids(1), ids(2)),
			op(graph.Squeeze, ids(2), ids(3)),
			op(graph.ExpandDims, ids(1), ids(6)),
			op(1, ids(3, 1, 6), ids(4)),
			op(graph.Reshape, ids(4), ids(5)),
		},
	}}}
}

func TestAliases(t *testing.T) {
	lt, err := liveness.Analyze(viewChain(), liveness.Options{})
	require.NoError(t, err)
	a := ref(0, 1)
	tests := []struct {
		name    string
		tensor  int
		aliasOf *graph.TensorRef
	}{
		{"RESHAPE aliases its input", 2, &a},
		{"a chain of views joins the root", 3, &a},
		{"the root has a buffer of its own", 1, nil},
		{"different sizes never share", 6, nil},
		{"a model output keeps its own buffer", 5, nil},
		{"an ordinary operator output is not an alias", 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.aliasOf, lt.Lookup(ref(0, tt.tensor)).AliasOf)
		})
	}
	root := lt.Lookup(a)
	assert.Equal(t, liveness.Interval{1, 5}, root.Live)
	assert.Equal(t, liveness.Interval{1, 5}, root.Group, "the group spans a (1..5), b (2..3) and c (3..5)")
	assert.Equal(t, liveness.Interval{3, 5}, lt.Lookup(ref(0, 3)).Live, "members keep their own lifetimes")
}

func TestNoAlias(t *testing.T) {
	lt, err := liveness.Analyze(viewChain(), liveness.Options{NoAlias: true})
	require.NoError(t, err)
	for _, tn := range lt.Tensors {
		assert.Nil(t, tn.AliasOf, "%v", tn.Ref)
		assert.Equal(t, tn.Live, tn.Group)
	}
}

func TestAliasNeverJoinsSubgraphBoundaries(t *testing.T) {
	m := viewChain()
	m.Subgraphs[0].Inputs = ids(0, 2) // b becomes a model input too
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Nil(t, lt.Lookup(ref(0, 2)).AliasOf)
	assert.Nil(t, lt.Lookup(ref(0, 3)).AliasOf, "c's input b is a boundary tensor, so c stays apart too")
}

// rewrittenViewModel is in -> ABS -> x -> RESHAPE -> v, then second writes
// x again (LOGISTIC(x) -> x when ownInput, else NEG(in) -> x), then
// ADD(v, x) -> out: ADD must see v as RESHAPE made it, before the second
// write.
func rewrittenViewModel(ownInput bool) *graph.Model {
	second := op(14, ids(1), ids(1)) // LOGISTIC(x) -> x
	if !ownInput {
		second = op(59, ids(0), ids(1)) // NEG(in) -> x
	}
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4), f32("x", 4), f32("v", 4), f32("out", 4)},
		Inputs:  ids(0), Outputs: ids(3),
		Ops: []graph.Op{
			op(101, ids(0), ids(1)),
			op(graph.Reshape, ids(1), ids(2)),
			second,
			op(0, ids(2, 1), ids(3)),
		},
	}}}
}

// TestViewOfRewrittenTensor checks the sharing rule: a view never shares
// the bytes of a tensor written again after it, whether by a second
// operator or by one whose output is its own input; a view made after
// the last write still does.
func TestViewOfRewrittenTensor(t *testing.T) {
	for _, ownInput := range []bool{true, false} {
		t.Run(map[bool]string{true: "op writes its own input", false: "second writer"}[ownInput], func(t *testing.T) {
			m := rewrittenViewModel(ownInput)
			lt, err := liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			assert.Nil(t, lt.Lookup(ref(0, 2)).AliasOf, "v is read after x is written again")

			// The view after the second write may share x's bytes.
			ops := m.Subgraphs[0].Ops
			ops[1], ops[2] = ops[2], ops[1]
			lt, err = liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			x := ref(0, 1)
			assert.Equal(t, &x, lt.Lookup(ref(0, 2)).AliasOf, "nothing writes x after the view")
		})
	}
}

// TestRewrittenViewOutput: a view output that a second operator writes
// keeps bytes of its own, and so do views of it.
func TestRewrittenViewOutput(t *testing.T) {
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4), f32("x", 4), f32("v", 4), f32("w", 4), f32("out", 4)},
		Inputs:  ids(0), Outputs: ids(4),
		Ops: []graph.Op{
			op(101, ids(0), ids(1)),
			op(graph.Reshape, ids(1), ids(2)),
			op(14, ids(2), ids(2)), // LOGISTIC(v) -> v
			op(graph.Reshape, ids(2), ids(3)),
			op(0, ids(1, 3), ids(4)),
		},
	}}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Nil(t, lt.Lookup(ref(0, 2)).AliasOf, "v is written twice")
	v := ref(0, 2)
	assert.Equal(t, &v, lt.Lookup(ref(0, 3)).AliasOf, "w views v after v's last write")
}

// TestViewOfRewrittenTensorInBody: the rule holds in a called subgraph,
// here the body of a WHILE that main runs twice (each run writes the
// body's tensors afresh).
func TestViewOfRewrittenTensorInBody(t *testing.T) {
	body := rewrittenViewModel(true).Subgraphs[0]
	cond := graph.Subgraph{
		Tensors: []graph.Tensor{f32("arg", 4), {Name: "c", Type: graph.Bool, Shape: []int32{}, Size: 1}},
		Inputs:  ids(0), Outputs: ids(1),
		Ops: []graph.Op{op(58, ids(0, 0), ids(1))},
	}
	m := &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in", 4), f32("mid", 4), f32("out", 4)},
		Inputs:  ids(0), Outputs: ids(2),
		Ops: []graph.Op{op(graph.While, ids(0), ids(1), 1, 2), op(graph.While, ids(1), ids(2), 1, 2)},
	}, cond, body}}
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	assert.Nil(t, lt.Lookup(ref(2, 2)).AliasOf, "v is read after x is written again")
}
