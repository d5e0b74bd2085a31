package order_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/order"
)

// TestWideFanStopsOnItsBudget schedules a wide fan (one input, 2,000
// parallel TANH, summed by a chain of ADDs): so many operators may run
// next at every step that a search counting only its states and levels
// spent minutes. The work budget must stop it, not the clock (given a
// minute, far more than the budget takes), at the same order every time.
func TestWideFanStopsOnItsBudget(t *testing.T) {
	m := randmodel.WideFan(2000)
	opts := order.Options{Work: order.DefaultWork, TimeLimit: time.Minute}
	r, err := order.Schedule(context.Background(), m, opts)
	require.NoError(t, err)
	assert.False(t, r.TimedOut, "the search stopped on the clock, not its work budget")
	assert.LessOrEqual(t, r.Work, opts.Work+64, "the work spent, give or take one scan of the order")
	assert.LessOrEqual(t, r.Peak, r.ModelPeak)
	assert.LessOrEqual(t, r.LowerBound, r.Peak)
	assert.Equal(t, r.Peak <= r.LowerBound, r.Proven)

	again, err := order.Schedule(context.Background(), m, opts)
	require.NoError(t, err)
	assert.Equal(t, r.Order, again.Order, "the work budget gives the same order every time")
}

// TestWorkBudgetIsRespected gives the search on the wide fan budgets of
// several sizes: each is spent, give or take, and none runs to the clock.
func TestWorkBudgetIsRespected(t *testing.T) {
	m := randmodel.WideFan(1000)
	for _, work := range []int64{50, 500, 5000} {
		r, err := order.Schedule(context.Background(), m, order.Options{Work: work, TimeLimit: time.Minute})
		require.NoError(t, err)
		assert.False(t, r.TimedOut, "work %d", work)
		assert.LessOrEqual(t, r.Work, work+64, "work %d", work)
		assert.GreaterOrEqual(t, r.Work, work, "work %d: the fan takes more than the budget", work)
	}
}

// twoBranches is x -> A0 (1 KiB) -> A1 -> ... -> A{n-1} and likewise B,
// listed interleaved (A0, B0, A1, B1, ...), then an ADD of both ends into
// 1,088 bytes: the model's order holds both kilobytes at once, running one
// branch first does not, and then the ADD's step is the peak, which the
// static lower bound sees, so the search's first order is at the bound.
func twoBranches(n int) *graph.Model {
	sg := graph.Subgraph{Tensors: []graph.Tensor{b("x", 16)}, Inputs: ids(0)}
	last := [2]graph.TensorID{0, 0}
	for i := range n {
		for br := range 2 {
			size := int32(16)
			if i == 0 {
				size = 1024
			}
			out := graph.TensorID(len(sg.Tensors))
			sg.Tensors = append(sg.Tensors, b(fmt.Sprintf("%c%d", 'a'+br, i), size))
			sg.Ops = append(sg.Ops, op(relu, []graph.TensorID{last[br]}, []graph.TensorID{out}))
			last[br] = out
		}
	}
	out := graph.TensorID(len(sg.Tensors))
	sg.Tensors = append(sg.Tensors, b("y", 1088))
	sg.Ops = append(sg.Ops, op(add, []graph.TensorID{last[0], last[1]}, []graph.TensorID{out}))
	sg.Outputs = ids(int(out))
	return &graph.Model{Subgraphs: []graph.Subgraph{sg}}
}

// TestTimedOutIsNeverProven stops the search by the clock at once on a
// model whose best order it finds at its lower bound: another run could
// still return another order, so it is not reported proven (the verifier
// refuses a proven order that timed out, exit 4).
func TestTimedOutIsNeverProven(t *testing.T) {
	m := twoBranches(200)
	r, err := order.Schedule(context.Background(), m, order.Options{TimeLimit: time.Nanosecond})
	require.NoError(t, err)
	assert.True(t, r.TimedOut)
	assert.False(t, r.Proven)

	r, err = order.Schedule(context.Background(), m, order.Options{TimeLimit: time.Minute})
	require.NoError(t, err)
	assert.Less(t, r.Peak, r.ModelPeak, "the search helps")
	assert.True(t, r.Proven, "given time, the search proves its order")
}

// TestWideFanOrder checks the order the search gives wide fans once its
// budget has run out: the partial order completed depth first runs each
// TANH just before the ADD that reads it, so a few values are live at a
// time, where the model's order holds every TANH's output at once.
func TestWideFanOrder(t *testing.T) {
	for _, width := range []int{1000, 10000} {
		r, err := order.Schedule(context.Background(), randmodel.WideFan(width), order.Options{TimeLimit: time.Minute})
		require.NoError(t, err)
		assert.Equal(t, int64(16*width+16), r.ModelPeak, "width %d: the input, every TANH's output and a sum", width)
		assert.LessOrEqual(t, r.Peak, int64(4*16), "width %d: the input, a sum, a TANH's output and the next sum", width)
	}
}
