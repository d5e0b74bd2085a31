package verify

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// inOrder is the schedule that runs each subgraph s's operators in the
// order order[s] (the model's order where order has no entry), each callee
// right after its caller and uncalled subgraphs after the main one, with
// the steps that order gives.
func inOrder(m *graph.Model, order map[graph.SubgraphIndex][]graph.OpIndex) []run {
	var runs []run
	next := int64(0)
	called := map[graph.SubgraphIndex]bool{}
	for _, sg := range m.Subgraphs {
		for _, o := range sg.Ops {
			for _, c := range o.Called {
				called[c] = true
			}
		}
	}
	var sub func(s graph.SubgraphIndex)
	sub = func(s graph.SubgraphIndex) {
		next++ // the inputs' step
		ops := order[s]
		if ops == nil {
			for oi := range m.Subgraphs[s].Ops {
				ops = append(ops, graph.OpIndex(oi))
			}
		}
		for _, oi := range ops {
			o := m.Subgraphs[s].Ops[oi]
			i := len(runs)
			runs = append(runs, run{path: fmt.Sprintf("schedule[%d]", i), op: graph.OpRef{Subgraph: s, Op: oi}, name: o.Name(), start: next})
			next++
			for _, c := range o.Called {
				sub(c)
			}
			runs[i].end = next - 1
		}
	}
	sub(0)
	for s := 1; s < len(m.Subgraphs); s++ {
		if !called[graph.SubgraphIndex(s)] {
			sub(graph.SubgraphIndex(s))
		}
	}
	return runs
}

// scheduleViolations walks m on runs and, when the walk completes, checks
// the schedule's order rules.
func scheduleViolations(m *graph.Model, runs []run) []Violation {
	tl, bad := walk(m, runs)
	if tl == nil {
		return bad
	}
	r := report(bad)
	c := &checker{m: m, tl: tl, r: &r}
	c.vars = c.resolveVariables()
	c.checkSchedule()
	return r
}

// containerModel has two VAR_HANDLEs of shared_name "state", one with
// container "c" and one without, and reads the variable (op 2) through the
// first when readWithContainer, else the second, and assigns it (op 3)
// through the other.
func containerModel(readWithContainer bool) *graph.Model {
	m := twoContainerModel()
	m.Subgraphs[0].Ops[1].Resource = &graph.ResourceName{SharedName: "state"}
	if !readWithContainer {
		ops := m.Subgraphs[0].Ops
		ops[0].Outputs, ops[1].Outputs = ops[1].Outputs, ops[0].Outputs
	}
	return m
}

// otherNameModel is twoContainerModel with the second handle naming
// "other" in no container: two variables, but TFLM must prepare the handle
// with a container first.
func otherNameModel() *graph.Model {
	m := twoContainerModel()
	m.Subgraphs[0].Ops[1].Resource = &graph.ResourceName{SharedName: "other"}
	return m
}

// twoContainerModel is containerModel with the second handle in container
// "d": two variables, so the read and the assignment may run in any order.
func twoContainerModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Name:    "main",
		Tensors: []graph.Tensor{tensor("x", graph.Int32, 4), resource("h"), resource("h2"), tensor("v", graph.Int32, 4)},
		Ops: []graph.Op{
			varHandleIn(1, "c", "state"),
			varHandleIn(2, "d", "state"),
			readVariable(1, 3),
			assignVariable(2, 0),
		},
		Inputs: ids(0), Outputs: ids(3),
	}}}
}

// independentModel runs two operators that share nothing but their input:
// either order is fine.
func independentModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{tensor("in", graph.Int8, 4), tensor("a", graph.Int8, 4), tensor("b", graph.Int8, 4)},
		Ops:     []graph.Op{op("ABS", ids(0), ids(1)), op("NEG", ids(0), ids(2))},
		Inputs:  ids(0), Outputs: ids(1, 2),
	}}}
}

// overwriteModel reads t in op 0, then op 1 writes it again, as an in-place
// kernel would.
func overwriteModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{tensor("in", graph.Int8, 4), tensor("t", graph.Int8, 4), tensor("out", graph.Int8, 4)},
		Ops:     []graph.Op{op("ABS", ids(1), ids(2)), op("NEG", ids(0), ids(1))},
		Inputs:  ids(0), Outputs: ids(2),
	}}}
}

// statefulModel reads an is_variable tensor in two operators that do not
// otherwise depend on each other.
func statefulModel() *graph.Model {
	return &graph.Model{Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{tensor("in", graph.Int8, 4), variable(tensor("state", graph.Int8, 4)),
			tensor("a", graph.Int8, 4), tensor("b", graph.Int8, 4)},
		Ops:    []graph.Op{op("SVDF", ids(0, 1), ids(2)), op("SVDF", ids(0, 1), ids(3))},
		Inputs: ids(0), Outputs: ids(2, 3),
	}}}
}

// twiceCalledPair calls subgraph 1, two independent operators, twice.
func twiceCalledPair() *graph.Model {
	m := &graph.Model{Subgraphs: []graph.Subgraph{
		{
			Tensors: []graph.Tensor{tensor("x", graph.Int8, 4)},
			Ops:     []graph.Op{op("CALL_ONCE", nil, nil, 1), op("CALL_ONCE", nil, nil, 1), op("ABS", ids(0), ids(0))},
		},
		independentModel().Subgraphs[0],
	}}
	m.Subgraphs[1].Inputs, m.Subgraphs[1].Outputs = nil, nil
	return m
}

func order(ops ...graph.OpIndex) []graph.OpIndex { return ops }

// TestScheduleRules breaks each rule of a valid schedule once and checks
// the message; the valid schedules pass.
func TestScheduleRules(t *testing.T) {
	chain := inOrder(chainModel(), nil)
	while := inOrder(whileModel(), nil)
	tests := []struct {
		name  string
		model *graph.Model
		runs  []run
		want  []Violation
	}{
		{name: "the model's order", model: chainModel(), runs: chain},
		{name: "independent operators in either order", model: independentModel(),
			runs: inOrder(independentModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0)})},
		{name: "callees nested in their caller", model: whileModel(), runs: while},
		{
			name: "every operator once: one left out", model: chainModel(), runs: chain[:2],
			want: []Violation{{BadSchedule, "the schedule ends before subgraph 0 has run op 0:2 (FULLY_CONNECTED)"}},
		},
		{
			name: "every operator once: one twice", model: chainModel(),
			runs: []run{chain[0], chain[1], {path: "schedule[2]", op: graph.OpRef{Op: 1}, name: "RELU", start: 3, end: 3}},
			want: []Violation{{BadSchedule, "schedule[2]: op 0:1 runs twice in one run of subgraph 0, before op 0:2 (FULLY_CONNECTED)"}},
		},
		{
			name: "every operator once: one that does not exist", model: chainModel(),
			runs: []run{chain[0], chain[1], {path: "schedule[2]", op: graph.OpRef{Op: 5}, name: "RELU", start: 3, end: 3}},
			want: []Violation{{BadSchedule, "schedule[2]: op 0:5 does not exist"}},
		},
		{
			name: "every operator once: more runs than the model has", model: chainModel(),
			runs: append(inOrder(chainModel(), nil), run{path: "schedule[3]", op: graph.OpRef{Op: 2}, name: "FULLY_CONNECTED", start: 4, end: 4}),
			want: []Violation{{BadSchedule, "schedule[3]: op 0:2 runs after every subgraph has run all its operators"}},
		},
		{
			name: "callees inside their caller", model: whileModel(),
			// ABS runs right after WHILE, before the loop's subgraphs
			runs: []run{while[0], while[4], while[1], while[2], while[3]},
			want: []Violation{{BadSchedule, "schedule[4]: op 0:1 runs before subgraph 1, which op 0:0 (WHILE) calls and which must run inside it, has run op 1:0 (LESS)"}},
		},
		{
			name: "steps as the order gives them", model: chainModel(),
			runs: []run{chain[0], {path: "schedule[1]", op: graph.OpRef{Op: 1}, name: "RELU", start: 2, end: 3}, chain[2]},
			want: []Violation{{BadSchedule, "schedule[1]: op 0:1 (RELU) runs over steps 2..3, not 2..2 as the schedule's order gives"}},
		},
		{
			name: "one order per subgraph", model: twiceCalledPair(),
			runs: func() []run {
				r := inOrder(twiceCalledPair(), nil)
				// The second call runs NEG before ABS.
				r[4].op.Op, r[4].name, r[5].op.Op, r[5].name = 1, "NEG", 0, "ABS"
				return r
			}(),
			want: []Violation{{BadSchedule, "subgraph 1 runs its operators in the order [0 1] on one call and [1 0] on another; a subgraph has one order"}},
		},
		{
			name: "inputs produced before they are read", model: chainModel(),
			runs: inOrder(chainModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0, 2)}),
			want: []Violation{{BadSchedule, "op 0:1 (RELU) runs before op 0:0 (FULLY_CONNECTED), but the model writes 0:1 (a) there first"}},
		},
		{
			name: "inputs read before they are overwritten", model: overwriteModel(),
			runs: inOrder(overwriteModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0)}),
			want: []Violation{{BadSchedule, "op 0:1 (NEG) runs before op 0:0 (ABS), but the model reads 0:1 (t) there before it is written"}},
		},
		{
			name: "stateful tensors in model order", model: statefulModel(),
			runs: inOrder(statefulModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0)}),
			want: []Violation{{BadSchedule, "op 0:1 (SVDF) runs before op 0:0 (SVDF), but the model accesses stateful 0:1 (state) there first"}},
		},
		{
			name: "resource variables in model order", model: resourceModel(),
			// IF, whose then branch assigns state, before READ_VARIABLE
			runs: inOrder(resourceModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(0, 1, 2, 3, 5, 4, 6)}),
			want: []Violation{{BadSchedule, `op 0:5 (IF) runs before op 0:4 (READ_VARIABLE), but the model reads and assigns resource variable "state" there first`}},
		},
		// TFLM takes a handle without a container for a variable of its
		// shared_name in any container (micro_resource_variable.cc, FindId).
		{
			name: "a read through a handle with a container, assigned through one without", model: containerModel(true),
			runs: inOrder(containerModel(true), map[graph.SubgraphIndex][]graph.OpIndex{0: order(0, 1, 3, 2)}),
			want: []Violation{{BadSchedule, `op 0:3 (ASSIGN_VARIABLE) runs before op 0:2 (READ_VARIABLE), but the model reads and assigns resource variable "state" in container "c" there first`}},
		},
		{
			name: "a read through a handle without a container, assigned through one with", model: containerModel(false),
			runs: inOrder(containerModel(false), map[graph.SubgraphIndex][]graph.OpIndex{0: order(0, 1, 3, 2)}),
			want: []Violation{{BadSchedule, `op 0:3 (ASSIGN_VARIABLE) runs before op 0:2 (READ_VARIABLE), but the model reads and assigns resource variable "state" in container "c" there first`}},
		},
		{
			name: "handles of a shared_name that one without a container has, in model order", model: containerModel(true),
			runs: inOrder(containerModel(true), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0, 2, 3)}),
			want: []Violation{{BadSchedule, `op 0:1 (VAR_HANDLE) runs before op 0:0 (VAR_HANDLE), but VAR_HANDLE operators keep the model's order when one has no container (op 0:1 (VAR_HANDLE)): TFLM resolves such a handle, and crashes on a later one with a container, by the order it prepares them`}},
		},
		{
			// TFLM crashes when a handle with a container is prepared after
			// one without made a variable, whatever their shared_names.
			name: "a handle with a container moved after one without, of another shared_name", model: otherNameModel(),
			runs: inOrder(otherNameModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0, 3, 2)}),
			want: []Violation{{BadSchedule, `op 0:1 (VAR_HANDLE) runs before op 0:0 (VAR_HANDLE), but VAR_HANDLE operators keep the model's order when one has no container (op 0:1 (VAR_HANDLE)): TFLM resolves such a handle, and crashes on a later one with a container, by the order it prepares them`}},
		},
		{
			name: "handles in two containers name two variables", model: twoContainerModel(),
			runs: inOrder(twoContainerModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0, 3, 2)}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scheduleViolations(tt.model, tt.runs)
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestOrderingRules checks the ordering object against the schedule: a
// "model" order must be the model's, only a "memory" order can be proven,
// and only an unproven "memory" order can have stopped on the wall clock.
func TestOrderingRules(t *testing.T) {
	swapped := inOrder(independentModel(), map[graph.SubgraphIndex][]graph.OpIndex{0: order(1, 0)})
	straight := inOrder(independentModel(), nil)
	tests := []struct {
		name     string
		strategy string
		proven   bool
		timedOut bool
		runs     []run
		want     []Violation
	}{
		{name: "the model's order", strategy: "model", runs: straight},
		{name: "a proven memory order", strategy: "memory", proven: true, runs: swapped},
		{name: "a memory order that is the model's", strategy: "memory", runs: straight},
		{name: "a given order", strategy: "given", runs: swapped},
		{name: "a model order that is not the model's", strategy: "model", runs: swapped,
			want: []Violation{{BadSchedule, `ordering: strategy is "model", but subgraph 0 runs its operators in the order [1 0]`}}},
		{name: "an unknown strategy", strategy: "fastest", runs: straight,
			want: []Violation{{Malformed, `ordering: strategy is "fastest", not one of model, memory, given`}}},
		{name: "a proven given order", strategy: "given", proven: true, runs: swapped,
			want: []Violation{{Malformed, `ordering: a "given" order cannot be proven optimal`}}},
		{name: "a memory order the wall clock stopped", strategy: "memory", timedOut: true, runs: swapped},
		{name: "a model order the wall clock stopped", strategy: "model", timedOut: true, runs: straight,
			want: []Violation{{Malformed, `ordering: a "model" order (proven optimal false) cannot have stopped on the wall clock; only an unproven memory order can`}}},
		{name: "a proven order the wall clock stopped", strategy: "memory", proven: true, timedOut: true, runs: swapped,
			want: []Violation{{Malformed, `ordering: a "memory" order (proven optimal true) cannot have stopped on the wall clock; only an unproven memory order can`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := independentModel()
			tl, bad := walk(m, tt.runs)
			require.Empty(t, bad)
			r := report(nil)
			c := &checker{m: m, tl: tl, r: &r, doc: &planDoc{strategy: tt.strategy, proven: tt.proven, timedOut: tt.timedOut}}
			c.checkOrdering()
			if len(tt.want) == 0 {
				assert.Empty(t, r)
				return
			}
			assert.Equal(t, tt.want, []Violation(r))
		})
	}
}
