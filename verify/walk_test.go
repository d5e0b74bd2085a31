package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
)

// spans returns the hull of each tensor's uses: the least lifetime that
// covers them.
func spans(tl *timeline) map[graph.TensorRef]span {
	out := map[graph.TensorRef]span{}
	for _, u := range tl.uses {
		s, ok := out[u.ref]
		if !ok {
			s = span{u.first, u.last}
		}
		out[u.ref] = span{min(s.first, u.first), max(s.last, u.last)}
	}
	return out
}

// callTwiceModel calls subgraph 1 from two operators and never calls
// subgraph 2, which is scheduled on its own after the main subgraph:
//
//	step:  0      1     2      3     4     5      6     7      8
//	main: inputs CALL              CALL
//	sub:              inputs NEG         inputs NEG
//	other:                                            inputs ABS
func callTwiceModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{tensor("x", graph.Int8, 4), tensor("y", graph.Int8, 4), tensor("z", graph.Int8, 4)},
			Ops: []graph.Op{
				op("CALL_ONCE", ids(0), ids(1), 1),
				op("CALL_ONCE", ids(1), ids(2), 1),
			},
			Inputs: ids(0), Outputs: ids(2),
		},
		{
			Tensors: []graph.Tensor{tensor("a", graph.Int8, 4), tensor("b", graph.Int8, 4)},
			Ops:     []graph.Op{op("NEG", ids(0), ids(1))},
			Inputs:  ids(0), Outputs: ids(1),
		},
		{
			Tensors: []graph.Tensor{tensor("p", graph.Int8, 4), tensor("q", graph.Int8, 4), tensor("unused", graph.Int8, 4)},
			Ops:     []graph.Op{op("ABS", ids(0), ids(1))},
			Inputs:  ids(0), Outputs: ids(1),
		},
	}}
}

func TestWalk(t *testing.T) {
	tests := []struct {
		name  string
		model *graph.Model
		steps int64
		want  map[graph.TensorRef]span
	}{
		{
			name: "a chain takes one step per op", model: chainModel(), steps: 4,
			want: map[graph.TensorRef]span{
				ref(0, 0): {0, 1}, ref(0, 1): {1, 2}, ref(0, 2): {2, 3}, ref(0, 3): {3, 3},
			},
		},
		{
			name: "WHILE schedules cond then body inside its span", model: whileModel(), steps: 8,
			want: map[graph.TensorRef]span{
				ref(0, 0): {0, 6}, ref(0, 1): {1, 7}, ref(0, 2): {7, 7},
				ref(1, 0): {2, 3}, ref(1, 1): {3, 3},
				ref(2, 0): {4, 5}, ref(2, 1): {5, 6}, ref(2, 2): {6, 6},
			},
		},
		{
			name: "a subgraph called twice is scheduled twice; an uncalled one comes last", model: callTwiceModel(), steps: 9,
			want: map[graph.TensorRef]span{
				ref(0, 0): {0, 3}, ref(0, 1): {1, 6}, ref(0, 2): {4, 6},
				ref(1, 0): {2, 6}, ref(1, 1): {3, 6},
				ref(2, 0): {7, 8}, ref(2, 1): {8, 8},
			},
		},
		{
			name: "an omitted optional input is no use", model: constantModel(), steps: 3,
			want: map[graph.TensorRef]span{
				ref(0, 0): {0, 1}, ref(0, 1): {1, 1}, ref(0, 2): {1, 1},
				ref(0, 3): {1, 2}, ref(0, 4): {2, 2}, ref(0, 5): {2, 2},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl, bad := walk(tt.model, inOrder(tt.model, nil))
			require.Empty(t, bad)
			assert.Equal(t, tt.steps, tl.steps)
			assert.Equal(t, tt.want, spans(tl))
		})
	}
}

func TestWalkErrors(t *testing.T) {
	cycle := callTwiceModel()
	cycle.Subgraphs[1].Ops[0].Called = []graph.SubgraphIndex{0}
	self := chainModel()
	self.Subgraphs[0].Ops[0].Called = []graph.SubgraphIndex{0}
	badCall := chainModel()
	badCall.Subgraphs[0].Ops[0].Called = []graph.SubgraphIndex{3}
	badTensor := chainModel()
	badTensor.Subgraphs[0].Outputs = ids(4)
	wide := &graph.Model{Subgraphs: []graph.Subgraph{{}, {
		Tensors: []graph.Tensor{tensor("x", graph.Int8, 4)},
		Ops:     []graph.Op{op("CONCATENATION", make([]graph.TensorID, 300), ids(0))},
	}}}
	for range 1000 {
		wide.Subgraphs[0].Ops = append(wide.Subgraphs[0].Ops, op("CALL_ONCE", nil, nil, 1))
	}
	long := &graph.Model{Subgraphs: make([]graph.Subgraph, 2)}
	for s := range long.Subgraphs {
		for range MaxSteps / 2 {
			long.Subgraphs[s].Ops = append(long.Subgraphs[s].Ops, op("NOP", nil, nil))
		}
	}
	tests := []struct {
		name  string
		model *graph.Model
		want  string
	}{
		{"no subgraphs", &graph.Model{}, "model has no subgraphs"},
		{"call cycle", cycle, "model: the calls form a cycle: subgraph 0 calls 1 calls 0"},
		{"subgraph calls itself", self, "model: the calls form a cycle: subgraph 0 calls 0"},
		{"called subgraph out of range", badCall, "model: op 0:0 (FULLY_CONNECTED) calls subgraph 3, which does not exist"},
		{"tensor out of range", badTensor, "model: output of subgraph 0 refers to tensor 0:4, which does not exist"},
		{"each subgraph calls the next twice, 20 deep", randmodel.CallChain(20, 2),
			"model: subgraph 7 takes 40957 steps, over the verifier's limit of 32768"},
		{"a wide operator called many times", wide, "model: subgraph 0 makes 301000 operand uses, over the verifier's limit of 131072"},
		{"entry subgraphs within the limit each, not together", long,
			"model: the entry subgraphs together takes 32770 steps, over the verifier's limit of 32768"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The model is checked before the schedule, which may be anything.
			tl, bad := walk(tt.model, inOrder(chainModel(), nil))
			assert.Nil(t, tl)
			assert.Equal(t, []Violation{{Malformed, tt.want}}, bad)
		})
	}
}

// TestWalkUsesGrowWithTheModel checks that the walk keeps one use per
// tensor and user, the hull of its steps, however often a subgraph runs:
// here the last subgraph of the chain runs 256 times, and the model has six
// pairs of a tensor and a user (main's input and output, its ADD's two
// tensors, the last subgraph's ADD's two).
func TestWalkUsesGrowWithTheModel(t *testing.T) {
	m := randmodel.CallChain(8, 2)
	tl, bad := walk(m, inOrder(m, nil))
	require.Empty(t, bad)
	assert.Len(t, tl.uses, 6)
	leaf := graph.TensorRef{Subgraph: 8, Tensor: 1}
	assert.Contains(t, tl.uses, use{ref: leaf, first: 18, last: tl.steps - 1, by: user{op: graph.OpRef{Subgraph: 8}}},
		"the leaf ADD's output, used from its first run to its last")
}
