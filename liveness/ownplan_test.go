package liveness_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// offlinePlan returns OfflineMemoryAllocation data for one subgraph with
// the given offsets (version 0, as Vela writes it).
func offlinePlan(offs ...int32) []byte {
	words := append([]int32{0, 1, int32(len(offs))}, offs...)
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(w))
	}
	return b
}

// velaGraph is x -> ETHOS-U(cmd, w, scratch, fast, x) -> mid -> RELU ->
// mid2 -> RESHAPE -> v, and mid2 -> ETHOS-U(cmd, w, scratch, fast, mid2)
// -> y: two NPU operators sharing one scratch, a CPU operator between
// them, and a view of an NPU input; offs is the model's offline plan.
func velaGraph(offs []byte) *graph.Model {
	cmd, w := f32("cmd", 4), f32("w", 4)
	cmd.Buffer, w.Buffer = 1, 1
	ethos := func(in, out int) graph.Op {
		return graph.Op{Code: graph.Custom, CustomName: "ethos-u", Inputs: ids(1, 2, 3, 4, in), Outputs: ids(out)}
	}
	return &graph.Model{
		Buffers:  []graph.Buffer{{}, {Data: make([]byte, 16)}, {Data: offs}},
		Metadata: []graph.Metadata{{Name: "OfflineMemoryAllocation", Buffer: 2}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{f32("x", 16), cmd, w, f32("scratch", 256), f32("fast", 256),
				f32("mid", 8), f32("mid2", 8), f32("y", 2), f32("v", 8)},
			Inputs: ids(0), Outputs: ids(7, 8),
			Ops: []graph.Op{ethos(0, 5), op(1, ids(5), ids(6)), op(graph.Reshape, ids(6), ids(8)), ethos(6, 7)},
		}},
	}
}

// TestOwnPlan: the operands of both NPU operators form one group rooted at
// their scratch, each at its offline offset minus the scratch's, whatever
// aliasing and in-place options say; the view of an NPU input stays out;
// operands the model's plan leaves to TFLM, and models whose plan TFLM
// would refuse, keep nothing.
func TestOwnPlan(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	scratch := ref(0, 3)
	tests := []struct {
		name string
		offs []byte
		opts liveness.Options
		// want maps each member to its AliasOffset (the root: 0).
		want map[int]int64
	}{
		{"vela plan", offlinePlan(1024, -1, -1, 64, 64, 0, 512, 0, -1), liveness.Options{},
			map[int]int64{0: 960, 3: 0, 4: 0, 5: -64, 6: 448, 7: -64}},
		{"in place and no views", offlinePlan(1024, -1, -1, 64, 64, 0, 512, 0, -1), liveness.Options{NoAlias: true, Kernels: lib},
			map[int]int64{0: 960, 3: 0, 4: 0, 5: -64, 6: 448, 7: -64}},
		{"an operand left to TFLM", offlinePlan(-1, -1, -1, 0, 0, 0, 512, 0, -1), liveness.Options{},
			map[int]int64{3: 0, 4: 0, 5: 0, 6: 512, 7: 0}},
		{"scratch left to TFLM", offlinePlan(0, -1, -1, -1, 0, 0, 512, 0, -1), liveness.Options{}, map[int]int64{}},
		{"tensor count not the model's", offlinePlan(0, -1, -1, 0, 0, 0, 512, 0), liveness.Options{}, map[int]int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lt, err := liveness.Analyze(velaGraph(tc.offs), tc.opts)
			require.NoError(t, err)
			got := map[int]int64{}
			var group liveness.Interval
			for i := range 9 {
				tt := lt.Lookup(ref(0, i))
				if tt.OwnPlan == nil {
					assert.False(t, tt.AliasOf != nil && *tt.AliasOf == scratch, "tensor %d joins the group without OwnPlan", i)
					continue
				}
				assert.Equal(t, graph.OpRef{}, tt.OwnPlan.Op, "tensor %d: the first NPU operator", i)
				assert.Equal(t, "CUSTOM:ethos-u", tt.OwnPlan.Operator)
				assert.Equal(t, 2, tt.OwnPlan.Ops, "tensor %d: one group for both operators", i)
				assert.Nil(t, tt.InPlace)
				if i == 3 {
					assert.Nil(t, tt.AliasOf, "the scratch is the root")
					group = tt.Group
				} else {
					require.NotNil(t, tt.AliasOf, "tensor %d", i)
					assert.Equal(t, scratch, *tt.AliasOf, "tensor %d", i)
				}
				got[i] = tt.AliasOffset
			}
			assert.Equal(t, tc.want, got)
			if len(tc.want) > 0 {
				first := liveness.Step(1) // mid is written at step 1
				if _, ok := tc.want[0]; ok {
					first = 0 // x, a model input
				}
				assert.Equal(t, liveness.Interval{First: first, Last: 4}, group, "the members' lifetimes together")
			}
		})
	}
}
