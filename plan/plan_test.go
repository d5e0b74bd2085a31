package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/verify"
)

func f32(name string, n int32, buf graph.BufferIndex) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{n}, Size: int64(n) * 4, Buffer: buf}
}

func ids(v ...int) []graph.TensorID {
	out := make([]graph.TensorID, len(v))
	for i, x := range v {
		out[i] = graph.TensorID(x)
	}
	return out
}

// diamond: in(40 B) -> op0 -> a(100 B), b(20 B); op1(a) -> c(8 B);
// op2(b, c, w) -> out(4 B). Two constants share buffer 1; one variable.
func diamond() *graph.Model {
	v := f32("state", 3, 0)
	v.IsVariable = true
	return &graph.Model{
		Buffers: []graph.Buffer{{}, {Data: make([]byte, 12)}, {Data: make([]byte, 5)}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				f32("in", 10, 0), f32("a", 25, 0), f32("b", 5, 0), f32("c", 2, 0), f32("out", 1, 0),
				f32("w", 3, 1), f32("w_again", 3, 1), {Name: "odd", Type: graph.Int8, Shape: []int32{5}, Size: 5, Buffer: 2}, v,
			},
			Inputs:  ids(0),
			Outputs: ids(4),
			Ops: []graph.Op{
				{Code: 1, Inputs: ids(0), Outputs: ids(1, 2)},
				{Code: 1, Inputs: ids(1, 5, 7), Outputs: ids(3)},
				{Code: 1, Inputs: ids(2, 3, 6, 8), Outputs: ids(4)},
			},
		}},
	}
}

func build(t *testing.T, m *graph.Model, opts plan.Options) *plan.Plan {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, opts)
	require.NoError(t, err)
	return p
}

func arena(t *testing.T, p *plan.Plan, kind liveness.Class) plan.Arena {
	t.Helper()
	for _, a := range p.Arenas {
		if a.Role == kind {
			return a
		}
	}
	t.Fatalf("no %s arena", kind)
	return plan.Arena{}
}

func TestBuildDiamond(t *testing.T) {
	p := build(t, diamond(), plan.Options{})
	// Live sets (aligned): step 0 {in 48}; step 1 {in 48, a 112, b 32} = 192;
	// step 2 {a, b, c 16} = 160; step 3 {b, c, out 16} = 64.
	s := arena(t, p, liveness.Scratch)
	assert.Equal(t, int64(192), s.LowerBound)
	assert.Equal(t, liveness.Step(1), s.PeakStep)
	assert.ElementsMatch(t, []plan.Key{plan.TensorKey(graph.TensorRef{Tensor: 0}), plan.TensorKey(graph.TensorRef{Tensor: 1}),
		plan.TensorKey(graph.TensorRef{Tensor: 2})}, s.Peak)
	assert.Equal(t, s.LowerBound, s.Size, "greedy reaches the bound on this graph")
	assert.Equal(t, "SRAM", s.Memory)

	c := arena(t, p, liveness.Constant)
	w, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 5}))
	require.NoError(t, err)
	w2, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 6}))
	require.NoError(t, err)
	assert.Equal(t, w.Offset, w2.Offset, "tensors over one buffer share its bytes")
	odd, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 7}))
	require.NoError(t, err)
	assert.Equal(t, int64(16), odd.Offset)
	assert.Equal(t, int64(21), c.Used)
	assert.Equal(t, int64(32), c.Size)
	assert.Equal(t, "FLASH", c.Memory)
	assert.False(t, c.Staged())

	pers := arena(t, p, liveness.Persistent)
	assert.Equal(t, int64(16), pers.Size)

	assert.Len(t, p.Hash(), 64)
}

func TestAllocationByTensorID(t *testing.T) {
	m := diamond()
	sg := &m.Subgraphs[0]
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "empty", Type: graph.Float32, Shape: []int32{0}})
	sg.Ops[2].Inputs = append(sg.Ops[2].Inputs, graph.TensorID(len(sg.Tensors)-1))
	p := build(t, m, plan.Options{})
	tests := []struct {
		id     plan.TensorID
		name   string // the allocation found, or
		reason string // the UnknownTensorError's reason
	}{
		{"0:1", "a", ""},
		{"0:7", "odd", ""},
		{"0:8", "state", ""},
		{"0:9", "", "zero-size"},
		{"0:42", "", "no such tensor"},
		{"1:0", "", "no such tensor"},
		{"00:1", "", "not a tensor id"},
		{"0:+1", "", "not a tensor id"},
		{"1", "", "not a tensor id"},
		{"", "", "not a tensor id"},
	}
	for _, tt := range tests {
		t.Run(string(tt.id), func(t *testing.T) {
			a, err := p.Allocation(tt.id)
			if tt.reason == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.name, a.Name)
				assert.Equal(t, tt.id, plan.TensorIDOf(a.Ref), "the id names the tensor it finds")
				return
			}
			var unknown *plan.UnknownTensorError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tt.id, unknown.ID)
			assert.Equal(t, tt.reason, unknown.Reason)
			assert.Nil(t, a)
		})
	}
}

func TestTensorIDRoundTrip(t *testing.T) {
	for _, ref := range []graph.TensorRef{{}, {Subgraph: 0, Tensor: 12}, {Subgraph: 3, Tensor: 1000000}} {
		back, err := plan.ParseTensorID(plan.TensorIDOf(ref))
		require.NoError(t, err)
		assert.Equal(t, ref, back)
	}
	assert.Equal(t, plan.TensorID("2:7"), plan.TensorIDOf(graph.TensorRef{Subgraph: 2, Tensor: 7}))
}

func TestBuildScratchPassesBlocksVerifier(t *testing.T) {
	for _, align := range []int64{1, 4, 16, 64} {
		p := build(t, diamond(), plan.Options{Alignment: align})
		var blocks []verify.Block
		for _, a := range p.Allocs {
			if a.Class == liveness.Scratch {
				blocks = append(blocks, verify.Block{Start: int64(a.Live.First), End: int64(a.Live.Last) + 1,
					Size: a.Size, Offset: a.Offset, Align: align})
			}
		}
		assert.Empty(t, verify.Blocks(blocks, arena(t, p, liveness.Scratch).Size), "alignment %d", align)
	}
}

func TestBuildOptionsErrors(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	tests := []struct {
		name string
		opts plan.Options
		want string
	}{
		{"alignment not a power of two", plan.Options{Alignment: 12}, "alignment 12 is not a positive power of two"},
		{"negative alignment", plan.Options{Alignment: -16}, "alignment -16"},
		{"alignment C cannot say", plan.Options{Alignment: 1 << 30}, "plan: alignment 1073741824 is more than 268435456, the most C compilers accept in _Alignas"},
		{"unknown planner", plan.Options{Planner: "magic"}, `plan: unknown planner "magic" (known: best, tflm, linear)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plan.Build(context.Background(), m, lt, tt.opts)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// TestBuildPlannerNames checks that Options.Planner takes every name in
// dsa's registry and that the plan records the canonical one.
func TestBuildPlannerNames(t *testing.T) {
	tests := []struct {
		planner, want string
	}{
		{"", "best"},
		{"best", "best"},
		{"tflm", "tflm"},
		{"greedy", "tflm"},
		{"linear", "linear"},
	}
	bestSize := arena(t, build(t, diamond(), plan.Options{}), liveness.Scratch).Size
	for _, tt := range tests {
		t.Run("planner="+tt.planner, func(t *testing.T) {
			p := build(t, diamond(), plan.Options{Planner: tt.planner})
			assert.Equal(t, tt.want, p.Planner)
			assert.GreaterOrEqual(t, arena(t, p, liveness.Scratch).Size, bestSize)
		})
	}
}

func TestHashChangesWithLayout(t *testing.T) {
	a := build(t, diamond(), plan.Options{})
	b := build(t, diamond(), plan.Options{Alignment: 64})
	assert.Equal(t, a.Hash(), build(t, diamond(), plan.Options{}).Hash())
	assert.NotEqual(t, a.Hash(), b.Hash())
}
