package order_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// Opcodes the hand-built models use besides graph's.
const (
	add  graph.Opcode = 0
	relu graph.Opcode = 19
	less graph.Opcode = 58
)

// b is an INT8 tensor of n bytes.
func b(name string, n int32) graph.Tensor {
	return graph.Tensor{Name: name, Type: graph.Int8, Shape: []int32{n}, Size: int64(n)}
}

func ids(v ...int) []graph.TensorID {
	out := make([]graph.TensorID, len(v))
	for i, x := range v {
		out[i] = graph.TensorID(x)
	}
	return out
}

func op(code graph.Opcode, in, out []graph.TensorID, called ...graph.SubgraphIndex) graph.Op {
	if in == nil {
		in = []graph.TensorID{}
	}
	if out == nil {
		out = []graph.TensorID{}
	}
	return graph.Op{Code: code, Version: 1, Inputs: in, Outputs: out, Intermediates: []graph.TensorID{}, Called: called}
}

// roundTrip writes m as a .tflite and reads it back, so that it is the
// model Load gives (names, empty lists) and compiles as it is.
func roundTrip(t *testing.T, m *graph.Model) ([]byte, *graph.Model) {
	t.Helper()
	if len(m.Buffers) == 0 {
		m.Buffers = []graph.Buffer{{}}
	}
	m.Version = 3
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data, load(t, data)
}

// diamond is in -> op0 -> a1 (32) -> op1 -> a2 (32) and in -> op2 -> b1
// (64) -> op3 -> b2 (8), joined by op4 into out. The model order runs the
// a branch first and holds a2 while b1 is live (112 bytes at op2); running
// the b branch, whose result is small, first peaks at 88 (op3: in, b1, b2).
func diamond() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 16), b("a1", 32), b("a2", 32), b("b1", 64), b("b2", 8), b("out", 8)},
		Inputs:  ids(0), Outputs: ids(5),
		Ops: []graph.Op{op(relu, ids(0), ids(1)), op(relu, ids(1), ids(2)), op(relu, ids(0), ids(3)),
			op(relu, ids(3), ids(4)), op(add, ids(2, 4), ids(5))},
	}}}
}

// stateModel holds big (64 bytes, read from state by op0) until op6; op3
// reads the state again, and the operators after it depend on op3. With
// op0 run late (after op5) the peak would be 80; kept before op3, big is
// live across op4 and op5 (u, 64 bytes): 136; the model order also holds it
// across op1 (t): 144.
func stateModel() *graph.Model {
	s := b("s", 8)
	s.IsVariable = true
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 16), s, b("big", 64), b("t", 64), b("x", 8), b("z", 8), b("u", 64), b("y", 8), b("out", 8)},
		Inputs:  ids(0), Outputs: ids(8),
		Ops: []graph.Op{
			op(relu, ids(1), ids(2)),
			op(relu, ids(0), ids(3)),
			op(relu, ids(3), ids(4)),
			op(add, ids(4, 1), ids(5)),
			op(relu, ids(5), ids(6)),
			op(relu, ids(6), ids(7)),
			op(add, ids(2, 7), ids(8)),
		},
	}}}
}

// variableModel is stateModel with a resource variable: op1 reads it into
// big, op4 assigns it, op5 reads it again (into u). The reads and the
// assignment keep their order, so big is live across op5 and op6: 136.
func variableModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 16), {Name: "h", Type: graph.Resource, Shape: []int32{}}, b("big", 64),
			b("t", 64), b("x", 8), b("u", 64), b("y", 8), b("out", 8)},
		Inputs: ids(0), Outputs: ids(7),
		Ops: []graph.Op{
			{Code: graph.VarHandle, Version: 1, Inputs: []graph.TensorID{}, Outputs: ids(1), Intermediates: []graph.TensorID{},
				Resource: &graph.ResourceName{SharedName: "state"}},
			op(graph.ReadVariable, ids(1), ids(2)),
			op(relu, ids(0), ids(3)),
			op(relu, ids(3), ids(4)),
			op(graph.AssignVariable, ids(1, 4), nil),
			op(graph.ReadVariable, ids(1), ids(5)),
			op(relu, ids(5), ids(6)),
			op(add, ids(2, 6), ids(7)),
		},
	}}}
}

// twoHandleModel is variableModel with a second VAR_HANDLE (op1, tensor 8)
// of the same shared_name: op2 and op6 read through the first handle,
// named read, op5 assigns through the second, named assign.
func twoHandleModel(read, assign graph.ResourceName) *graph.Model {
	m := variableModel()
	sg := &m.Subgraphs[0]
	sg.Ops[0].Resource = &read
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "h2", Type: graph.Resource, Shape: []int32{}})
	second := sg.Ops[0]
	second.Outputs, second.Resource = ids(8), &assign
	sg.Ops = slices.Insert(sg.Ops, 1, second)
	sg.Ops[5].Inputs = ids(8, 4) // ASSIGN_VARIABLE
	return m
}

// whileModel runs WHILE over in (16 bytes): cond is a LESS, body is the
// diamond with a 16-byte result. Main holds in and out (32 bytes) over the
// WHILE's span, so its peak is 32 plus the body's: 144 in model order, 120
// with the body's b branch first.
func whileModel() *graph.Model {
	body := diamond().Subgraphs[0]
	body.Tensors[5] = b("out", 16)
	return &graph.Model{Subgraphs: []graph.Subgraph{
		{Tensors: []graph.Tensor{b("in", 16), b("out", 16)}, Inputs: ids(0), Outputs: ids(1),
			Ops: []graph.Op{op(graph.While, ids(0), ids(1), 1, 2)}},
		{Tensors: []graph.Tensor{b("x", 16), {Name: "c", Type: graph.Bool, Shape: []int32{1}, Size: 1}}, Inputs: ids(0), Outputs: ids(1),
			Ops: []graph.Op{op(less, ids(0, 0), ids(1))}},
		body,
	}}
}

func TestHandBuilt(t *testing.T) {
	stateful := b("state", 8)
	stateful.IsVariable = true
	callOnce := diamond()
	callOnce.Subgraphs[0].Ops = append([]graph.Op{op(graph.CallOnce, nil, nil, 1)}, callOnce.Subgraphs[0].Ops...)
	callOnce.Subgraphs = append(callOnce.Subgraphs, graph.Subgraph{Tensors: []graph.Tensor{b("k", 4)},
		Inputs: []graph.TensorID{}, Outputs: []graph.TensorID{}, Ops: []graph.Op{op(relu, ids(0), ids(0))}})
	tests := []struct {
		name      string
		model     *graph.Model
		order     [][]graph.OpIndex  // nil: not pinned
		before    [][2]graph.OpIndex // pairs of main's operators that must keep their order
		peak      int64
		modelPeak int64
	}{
		{
			name:  "diamond: the branch with the small result first",
			model: diamond(), order: [][]graph.OpIndex{{2, 3, 0, 1, 4}}, peak: 88, modelPeak: 112,
		},
		{
			name: "a chain has one order",
			model: &graph.Model{Subgraphs: []graph.Subgraph{{
				Tensors: []graph.Tensor{b("in", 16), b("a", 64), b("b", 32), b("out", 8)}, Inputs: ids(0), Outputs: ids(3),
				Ops: []graph.Op{op(relu, ids(0), ids(1)), op(relu, ids(1), ids(2)), op(relu, ids(2), ids(3))},
			}}},
			order: [][]graph.OpIndex{{0, 1, 2}}, peak: 96, modelPeak: 96,
		},
		{
			name:  "a resource variable is read, assigned and read in the model's order",
			model: variableModel(), before: [][2]graph.OpIndex{{1, 4}, {4, 5}}, peak: 136, modelPeak: 144,
		},
		// TFLM takes a handle without a container for a variable of its
		// shared_name in any container: one variable, whose reads and
		// assignment keep their order.
		{
			name:   "reads through a handle with a container, assigned through one without",
			model:  twoHandleModel(graph.ResourceName{Container: "c", SharedName: "state", HasContainer: true}, graph.ResourceName{SharedName: "state"}),
			before: [][2]graph.OpIndex{{2, 5}, {5, 6}}, peak: 136, modelPeak: 144,
		},
		{
			name:   "reads through a handle without a container, assigned through one with",
			model:  twoHandleModel(graph.ResourceName{SharedName: "state"}, graph.ResourceName{Container: "c", SharedName: "state", HasContainer: true}),
			before: [][2]graph.OpIndex{{2, 5}, {5, 6}}, peak: 136, modelPeak: 144,
		},
		{
			name:  "two reads of a stateful tensor keep their order",
			model: stateModel(), order: [][]graph.OpIndex{{1, 2, 0, 3, 4, 5, 6}}, peak: 136, modelPeak: 144,
		},
		{
			name:  "CALL_ONCE stays first",
			model: callOnce, order: [][]graph.OpIndex{{0, 3, 4, 1, 2, 5}, {0}}, peak: 88, modelPeak: 112,
		},
		{
			name:  "a WHILE body is ordered on its own, inside the WHILE",
			model: whileModel(), order: [][]graph.OpIndex{{0}, {0}, {2, 3, 0, 1, 4}}, peak: 120, modelPeak: 144,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, m := roundTrip(t, tt.model)
			r := schedule(t, m, order.Options{Alignment: 1})
			if tt.order != nil {
				assert.Equal(t, tt.order, r.Order)
			}
			for _, pair := range tt.before {
				assert.Less(t, slices.Index(r.Order[0], pair[0]), slices.Index(r.Order[0], pair[1]), "op %d runs before op %d", pair[0], pair[1])
			}
			assert.Equal(t, tt.peak, r.Peak, "Peak")
			assert.Equal(t, tt.modelPeak, r.ModelPeak, "ModelPeak")
			assert.True(t, r.Proven, "Proven")
			assert.Equal(t, tt.peak, r.LowerBound, "LowerBound")
			assert.Equal(t, r.Peak, livePeak(t, m, liveness.Options{Order: r.Order}, 1), "Peak against liveness")
			assert.Equal(t, r.ModelPeak, livePeak(t, m, liveness.Options{}, 1), "ModelPeak against liveness")
			checkLegal(t, tt.name, data, m, liveness.Options{Order: r.Order})
		})
	}
}

// inPlaceModel is in -> op0 -> a (64); op1 turns a into b (64 bytes, an
// element-wise kernel that may overwrite a); op2 reads a into c (8); op3
// joins b and c. In the model order a is still needed after op1, so it
// cannot hand its bytes to b: op2 holds a, b and c (136). Running op2
// first lets a die at op1.
func inPlaceModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 16), b("a", 64), b("b", 64), b("c", 8), b("out", 8)},
		Inputs:  ids(0), Outputs: ids(4),
		Ops: []graph.Op{op(relu, ids(0), ids(1)), op(relu, ids(1), ids(2)), op(relu, ids(1), ids(3)), op(add, ids(2, 3), ids(4))},
	}}}
}

func TestInPlace(t *testing.T) {
	data, m := roundTrip(t, inPlaceModel())
	onOp1 := func(o graph.OpRef) []order.Pair {
		if o == (graph.OpRef{Subgraph: 0, Op: 1}) {
			return []order.Pair{{Input: 0, Output: 0}}
		}
		return nil
	}
	tests := []struct {
		name      string
		hook      func(graph.OpRef) []order.Pair
		order     []graph.OpIndex
		peak      int64
		modelPeak int64
	}{
		{"no pairs: every order peaks at op2 or op1", nil, []graph.OpIndex{0, 1, 2, 3}, 136, 136},
		{"a pair makes the order that lets a die at op1 best", onOp1, []graph.OpIndex{0, 2, 1, 3}, 80, 136},
		{"pairs that cannot share are ignored", func(o graph.OpRef) []order.Pair {
			switch o.Op {
			case 0: // in is the subgraph's input
				return []order.Pair{{Input: 0, Output: 0}}
			case 1: // out of range, and a in two pairs
				return []order.Pair{{Input: 5, Output: 0}, {Input: 0, Output: -1}, {Input: 0, Output: 0}, {Input: 0, Output: 0}}
			case 3: // out is the subgraph's output
				return []order.Pair{{Input: 1, Output: 0}}
			}
			return nil
		}, []graph.OpIndex{0, 2, 1, 3}, 80, 136},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := schedule(t, m, order.Options{Alignment: 1, InPlace: tt.hook})
			assert.Equal(t, [][]graph.OpIndex{tt.order}, r.Order)
			assert.Equal(t, tt.peak, r.Peak)
			assert.Equal(t, tt.modelPeak, r.ModelPeak)
			assert.True(t, r.Proven)
			checkLegal(t, tt.name, data, m, liveness.Options{Order: r.Order})
		})
	}
}

// TestOverwriteInputs: in (64 bytes) -> RELU -> a (64) -> RELU -> out (8).
// Under TFLM's contracts a may take in's bytes only when model inputs may
// be written over, and liveness agrees.
func TestOverwriteInputs(t *testing.T) {
	data, m := roundTrip(t, &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 64), b("a", 64), b("out", 8)}, Inputs: ids(0), Outputs: ids(2),
		Ops: []graph.Op{op(relu, ids(0), ids(1)), op(relu, ids(1), ids(2))},
	}}})
	for _, mo := range modes(t) {
		t.Run(mo.name, func(t *testing.T) {
			opts := mo.options(m)
			opts.Alignment = 1
			r := schedule(t, m, opts)
			want := map[string]int64{"plain": 128, "in place": 128, "in place over inputs": 72}[mo.name]
			assert.Equal(t, want, r.Peak)
			assert.Equal(t, want, livePeak(t, m, mo.liveness(r.Order), 1))
			assert.True(t, r.Proven)
			checkLegal(t, mo.name, data, m, mo.liveness(r.Order))
		})
	}
}

// TestCompileWithOrder plans the diamond in the order Schedule gives: the
// scratch arena's lower bound is Result.Peak (alignment 16).
func TestCompileWithOrder(t *testing.T) {
	_, m := roundTrip(t, diamond())
	r := schedule(t, m, order.Options{})
	lt, err := liveness.Analyze(m, liveness.Options{Order: r.Order})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	_, lb := p.ScratchTotals()
	assert.Equal(t, r.Peak, lb)
	assert.Less(t, r.Peak, r.ModelPeak)
}

func TestOptions(t *testing.T) {
	_, m := roundTrip(t, diamond())
	for _, tt := range []struct {
		name string
		opts order.Options
		want string
	}{
		{"alignment not a power of two", order.Options{Alignment: 12}, "order: alignment 12 is not a positive power of two"},
		{"negative alignment", order.Options{Alignment: -16}, "order: alignment -16 is not a positive power of two"},
		{"negative time limit", order.Options{TimeLimit: -time.Second}, "order: time limit -1s is negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := order.Schedule(context.Background(), m, tt.opts)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestBadModels(t *testing.T) {
	cycle := diamond()
	cycle.Subgraphs[0].Ops[0].Called = []graph.SubgraphIndex{0}
	for _, tt := range []struct {
		name  string
		model *graph.Model
		want  string
	}{
		{"no subgraphs", &graph.Model{}, "order: model has no subgraphs"},
		{"a call cycle", cycle, "order: subgraph 0 calls itself"},
		{"a tensor out of range", &graph.Model{Subgraphs: []graph.Subgraph{{Ops: []graph.Op{op(relu, ids(3), nil)}}}},
			"order: subgraphs[0].operators[0]: tensor 3 out of range [0, 0)"},
		{"a callee out of range", &graph.Model{Subgraphs: []graph.Subgraph{{Ops: []graph.Op{op(graph.CallOnce, nil, nil, 4)}}}},
			"order: subgraphs[0].operators[0]: calls subgraph 4, out of range [0, 1)"},
		{"over the work limits", randmodel.CallChain(20, 2),
			"order: subgraph 7 takes 40957 steps with the subgraphs it calls, each run again on every call, over the limit of 32768"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := order.Schedule(context.Background(), tt.model, order.Options{})
			assert.EqualError(t, err, tt.want)
		})
	}
}

// TestBudget: with no time left Schedule still returns a legal order, no
// worse than the model's, and no error.
func TestBudget(t *testing.T) {
	data, m := roundTrip(t, diamond())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := order.Schedule(ctx, m, order.Options{})
	require.NoError(t, err)
	assert.LessOrEqual(t, r.Peak, r.ModelPeak)
	assert.LessOrEqual(t, r.LowerBound, r.Peak)
	checkLegal(t, "cancelled", data, m, liveness.Options{Order: r.Order})

	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	r, err = order.Schedule(ctx, m, order.Options{})
	require.NoError(t, err)
	checkLegal(t, "past deadline", data, m, liveness.Options{Order: r.Order})
}

// TestDeterministic schedules the same models twice.
func TestDeterministic(t *testing.T) {
	for _, nm := range bundledModels(t) {
		m := load(t, nm.data)
		a, b := schedule(t, m, order.Options{}), schedule(t, m, order.Options{})
		assert.Equal(t, a, b, nm.name)
	}
}

// TestSharedFigures keeps order's copies of other packages' figures equal
// to them.
func TestSharedFigures(t *testing.T) {
	assert.Equal(t, int64(plan.DefaultAlignment), int64(order.DefaultAlignment))
}

// rewrites is in -> ABS -> x -> RESHAPE -> v, LOGISTIC(x) -> x (an
// operator writing its own input), ABS(v) -> w, TANH(in) -> x (a second
// writer), ADD(w, x) -> out: x is written three times, read between the
// writes, and viewed before the second.
func rewrites() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{b("in", 16), b("x", 16), b("v", 16), b("w", 16), b("out", 16)},
		Inputs:  ids(0), Outputs: ids(4),
		Ops: []graph.Op{
			op(101, ids(0), ids(1)),
			op(graph.Reshape, ids(1), ids(2)),
			op(14, ids(1), ids(1)),
			op(101, ids(2), ids(3)),
			op(28, ids(0), ids(1)),
			op(add, ids(3, 1), ids(4)),
		},
	}}}
}

// TestRewrittenTensorOrders runs every permutation of a model that writes
// a tensor several times: the orders that keep every write of a tensor in
// the model's order with every other access to it (write after read,
// after write, read after write), checked naively here, compile and
// verify, views and all; every other order is refused (BadSchedule); and
// Schedule returns a legal one, in every mode.
func TestRewrittenTensorOrders(t *testing.T) {
	data, m := roundTrip(t, rewrites())
	ops := m.Subgraphs[0].Ops
	touches := func(o graph.Op, x graph.TensorID) (reads, writes bool) {
		return slices.Contains(o.Inputs, x), slices.Contains(o.Outputs, x)
	}
	legal := func(order []graph.OpIndex) bool {
		for i, a := range order {
			for _, b := range order[i+1:] {
				if a < b {
					continue
				}
				for x := range m.Subgraphs[0].Tensors {
					ra, wa := touches(ops[a], graph.TensorID(x))
					rb, wb := touches(ops[b], graph.TensorID(x))
					if (wa && (rb || wb)) || (wb && ra) {
						return false
					}
				}
			}
		}
		return true
	}
	var perms [][]graph.OpIndex
	var rec func(cur []graph.OpIndex, left []graph.OpIndex)
	rec = func(cur, left []graph.OpIndex) {
		if len(left) == 0 {
			perms = append(perms, slices.Clone(cur))
			return
		}
		for i, x := range left {
			rec(append(cur, x), slices.Concat(left[:i], left[i+1:]))
		}
	}
	rec(nil, []graph.OpIndex{0, 1, 2, 3, 4, 5})
	nLegal := 0
	for _, order := range perms {
		_, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "rewrites", Version: "test",
			Liveness: liveness.Options{Order: [][]graph.OpIndex{order}}, Plan: plan.Options{Planner: plan.PlannerTFLM}})
		if legal(order) {
			nLegal++
			assert.NoError(t, err, "order %v keeps every access to a written tensor in the model's order", order)
			continue
		}
		var ve *driver.VerifyError
		if assert.ErrorAs(t, err, &ve, "order %v", order) {
			for _, v := range ve.Violations {
				assert.Equal(t, verify.BadSchedule, v.Kind, "order %v: %v", order, v)
			}
		}
	}
	assert.Equal(t, 3, nLegal, "ABS(v) may run before LOGISTIC(x) -> x, between it and TANH(in) -> x, or after both; nothing else moves")
	for _, mo := range modes(t) {
		r, err := order.Schedule(context.Background(), m, mo.options(m))
		require.NoError(t, err)
		checkResult(t, "rewrites", data, m, mo, r)
		assert.True(t, legal(r.Order[0]), "%s: %v", mo.name, r.Order[0])
	}
}
