package plan_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/verify"
)

// board is a platform of two writable banks, DTCM (dtcm bytes; 0 means
// unlimited) before unlimited SRAM, and read-only FLASH.
func board(dtcm int64) plan.Platform {
	return plan.Platform{Name: "board", Banks: []plan.Bank{
		{Name: "DTCM", Capacity: dtcm, Writable: true, Order: 0},
		{Name: "SRAM", Writable: true, Order: 1},
		{Name: "FLASH", Order: 2},
	}}
}

// tryPlace plans m on p under rules.
func tryPlace(t *testing.T, m *graph.Model, p plan.Platform, rules ...plan.Rule) (*plan.Plan, error) {
	t.Helper()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	return plan.Build(context.Background(), m, lt, plan.Options{Platform: &p, Rules: rules})
}

// place plans m on p under rules, and checks that the plan it writes
// verifies clean.
func place(t *testing.T, m *graph.Model, p plan.Platform, rules ...plan.Rule) *plan.Plan {
	t.Helper()
	pl, err := tryPlace(t, m, p, rules...)
	require.NoError(t, err)
	js, err := emit.JSON(m, pl, emit.Meta{ModelName: "test", Subgraphs: len(m.Subgraphs), Version: "test"})
	require.NoError(t, err)
	assert.Empty(t, verify.Plan(m, js), "plan.json verifies clean")
	return pl
}

// memoryOf returns the bank tensor 0:tn lives in.
func memoryOf(t *testing.T, p *plan.Plan, tn int) string {
	t.Helper()
	a, err := p.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: graph.TensorID(tn)}))
	require.NoError(t, err)
	return p.Arena(a.Arena).Memory
}

// arenaIn returns the arena of kind in memory.
func arenaIn(t *testing.T, p *plan.Plan, kind liveness.Class, memory string) plan.Arena {
	t.Helper()
	for _, a := range p.Arenas {
		if a.Role == kind && a.Memory == memory {
			return a
		}
	}
	t.Fatalf("no %s arena in %s", kind, memory)
	return plan.Arena{}
}

// In diamond(), the scratch tensors are in (0, 48 B aligned), a (1, 112 B),
// b (2, 32 B), c (3, 16 B) and out (4, 16 B); step 1 is the peak, with in,
// a and b live (192 B). state (8) is a 16-byte variable.

func TestPlaceSpillsScratchToTheNextBank(t *testing.T) {
	// DTCM keeps 16 bytes for state, leaving 112 for scratch: too few for
	// the 192 live at step 1. a, the largest there, moves to SRAM.
	p := place(t, diamond(), board(128))
	require.Len(t, p.Spills, 1)
	sp := p.Spills[0]
	assert.Equal(t, graph.TensorRef{Tensor: 1}, sp.Ref)
	assert.Equal(t, "a", sp.Name)
	assert.Equal(t, "DTCM", sp.From)
	assert.Equal(t, "SRAM", sp.To)
	assert.Contains(t, sp.Reason, "DTCM full")
	assert.Equal(t, "SRAM", memoryOf(t, p, 1))
	for _, tn := range []int{0, 2, 3, 4, 8} {
		assert.Equal(t, "DTCM", memoryOf(t, p, tn), "tensor %d", tn)
	}
	d := arenaIn(t, p, liveness.Scratch, "DTCM")
	assert.Equal(t, int64(128), d.Capacity)
	assert.LessOrEqual(t, d.Size+arenaIn(t, p, liveness.Persistent, "DTCM").Size, int64(128))
	assert.Equal(t, int64(0), arenaIn(t, p, liveness.Scratch, "SRAM").Capacity)
}

func TestPlaceUnlimitedBankNeverSpills(t *testing.T) {
	p := place(t, diamond(), board(0))
	assert.Empty(t, p.Spills)
	for _, tn := range []int{0, 1, 2, 3, 4, 8} {
		assert.Equal(t, "DTCM", memoryOf(t, p, tn), "tensor %d", tn)
	}
}

func TestPlacePinnedTensorNeverSpills(t *testing.T) {
	t.Run("it stays and others move", func(t *testing.T) {
		p := place(t, diamond(), board(128), plan.Rule{Name: "a", Memory: "DTCM"})
		assert.Equal(t, "DTCM", memoryOf(t, p, 1))
		require.NotEmpty(t, p.Spills)
		for _, sp := range p.Spills {
			assert.NotEqual(t, "a", sp.Name)
		}
	})
	t.Run("it does not fit", func(t *testing.T) {
		// 96 - 16 for state leaves 80 bytes: a (112 aligned) is pinned
		// there by index, everything else moves away, and a still does
		// not fit.
		_, err := tryPlace(t, diamond(), board(96), plan.Rule{Tensor: "0:1", Memory: "DTCM"})
		var ce *plan.CapacityError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "DTCM", ce.Bank)
		assert.Equal(t, int64(112), ce.Need)
		assert.Equal(t, int64(80), ce.Have)
		assert.Equal(t, []string{`0:1 "a" (100 B)`}, ce.Tensors)
		assert.Contains(t, err.Error(), `plan: bank "DTCM": need 112 bytes at step`)
	})
	t.Run("the last bank is full too", func(t *testing.T) {
		p := board(96)
		p.Banks[1].Capacity = 64 // SRAM
		_, err := tryPlace(t, diamond(), p)
		var ce *plan.CapacityError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, "SRAM", ce.Bank)
		assert.Equal(t, int64(64), ce.Have)
		assert.Greater(t, ce.Need, ce.Have)
	})
}

func TestPlaceStagedConstants(t *testing.T) {
	// w and w_again share buffer 1; odd has buffer 2.
	p := place(t, diamond(), board(0),
		plan.Rule{Class: "constant", Memory: "SRAM", Source: "FLASH"},
		plan.Rule{Name: "odd", Memory: "FLASH"})
	staged := arenaIn(t, p, liveness.Constant, "SRAM")
	assert.True(t, staged.Staged())
	assert.Equal(t, "FLASH", staged.Source)
	assert.Equal(t, int64(12), staged.Used, "w and w_again share one copy")
	assert.Equal(t, int64(16), staged.Size)
	cold := arenaIn(t, p, liveness.Constant, "FLASH")
	assert.False(t, cold.Staged())
	assert.Empty(t, cold.Source, "a cold arena is read where it lies")
	assert.Equal(t, "SRAM", memoryOf(t, p, 5))
	assert.Equal(t, "SRAM", memoryOf(t, p, 6))
	assert.Equal(t, "FLASH", memoryOf(t, p, 7))

	t.Run("the copy counts against its bank, the image against the source", func(t *testing.T) {
		pf := board(0)
		pf.Banks[2].Capacity = 8 // FLASH: the 16-byte image does not fit
		_, err := tryPlace(t, diamond(), pf, plan.Rule{Class: "constant", Memory: "SRAM", Source: "FLASH"})
		var ce *plan.CapacityError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "FLASH", ce.Bank)
		assert.Equal(t, int64(8), ce.Have)
	})
}

func TestPlaceRulePrecedence(t *testing.T) {
	three := plan.Platform{Name: "three", Banks: []plan.Bank{
		{Name: "A", Writable: true, Order: 0},
		{Name: "B", Writable: true, Order: 1},
		{Name: "C", Writable: true, Order: 2},
		{Name: "FLASH"},
	}}
	tests := []struct {
		name  string
		rules []plan.Rule
		want  map[int]string // tensor -> memory
	}{
		{"defaults", nil,
			map[int]string{0: "A", 1: "A", 2: "A", 5: "FLASH", 8: "A"}},
		{"class rule", []plan.Rule{{Class: "scratch", Memory: "B"}},
			map[int]string{0: "B", 1: "B", 2: "B", 5: "FLASH", 8: "A"}},
		{"tensor rule beats a later class rule", []plan.Rule{{Tensor: "0:1", Memory: "C"}, {Class: "scratch", Memory: "B"}},
			map[int]string{0: "B", 1: "C", 2: "B"}},
		{"tensor rule beats an earlier class rule", []plan.Rule{{Class: "scratch", Memory: "B"}, {Tensor: "0:1", Memory: "C"}},
			map[int]string{0: "B", 1: "C", 2: "B"}},
		{"name rule beats a class rule", []plan.Rule{{Name: "[ab]", Memory: "C"}, {Class: "scratch", Memory: "B"}},
			map[int]string{0: "B", 1: "C", 2: "C", 3: "B"}},
		{"later class rule wins", []plan.Rule{{Class: "scratch", Memory: "B"}, {Class: "scratch", Memory: "C"}},
			map[int]string{0: "C", 1: "C", 4: "C"}},
		{"later name rule wins over a tensor rule", []plan.Rule{{Tensor: "0:1", Memory: "C"}, {Name: "a", Memory: "B"}},
			map[int]string{0: "A", 1: "B"}},
		{"later tensor rule wins over a name rule", []plan.Rule{{Name: "a", Memory: "B"}, {Tensor: "0:1", Memory: "C"}},
			map[int]string{0: "A", 1: "C"}},
		{"persistent class rule", []plan.Rule{{Class: "persistent", Memory: "C"}},
			map[int]string{0: "A", 8: "C"}},
		{"constant rule", []plan.Rule{{Class: "constant", Memory: "B", Source: "FLASH"}},
			map[int]string{5: "B", 7: "B", 0: "A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := place(t, diamond(), three, tt.rules...)
			assert.Empty(t, p.Spills)
			for tn, mem := range tt.want {
				assert.Equal(t, mem, memoryOf(t, p, tn), "tensor %d", tn)
			}
			assert.Equal(t, tt.rules, p.Rules)
		})
	}
}

// twoStates is diamond() with a second, 32-byte state tensor that the last
// operator reads.
func twoStates() *graph.Model {
	m := diamond()
	sg := &m.Subgraphs[0]
	v := f32("state2", 8, 0)
	v.IsVariable = true
	sg.Tensors = append(sg.Tensors, v)
	sg.Ops[2].Inputs = append(sg.Ops[2].Inputs, 9)
	return m
}

func TestPlacePersistentSpill(t *testing.T) {
	// DTCM holds state (16 B); state2 (32 B) does not fit beside it.
	p := place(t, twoStates(), board(32))
	assert.Equal(t, "DTCM", memoryOf(t, p, 8))
	assert.Equal(t, "SRAM", memoryOf(t, p, 9))
	var got *plan.Spill
	for i := range p.Spills {
		if p.Spills[i].Name == "state2" {
			got = &p.Spills[i]
		}
	}
	require.NotNil(t, got, "spills: %+v", p.Spills)
	assert.Equal(t, "DTCM", got.From)
	assert.Equal(t, "SRAM", got.To)
	assert.Contains(t, got.Reason, "persistent")
	assert.Equal(t, int64(16), arenaIn(t, p, liveness.Persistent, "DTCM").Size)
	assert.Equal(t, int64(32), arenaIn(t, p, liveness.Persistent, "SRAM").Size)

	t.Run("pinned persistent tensor", func(t *testing.T) {
		_, err := tryPlace(t, twoStates(), board(32), plan.Rule{Name: "state2", Memory: "DTCM"})
		var ce *plan.CapacityError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "DTCM", ce.Bank)
		assert.Equal(t, int64(48), ce.Need)
		assert.Equal(t, int64(32), ce.Have)
	})
}

// resourceModel keeps one resource variable, "state": ASSIGN_VARIABLE
// writes x (16 B) through handle h, READ_VARIABLE reads it into y.
func resourceModel() *graph.Model {
	h := graph.Tensor{Name: "h", Type: graph.Resource}
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{f32("x", 4, 0), h, f32("y", 4, 0)},
			Inputs:  ids(0),
			Outputs: ids(2),
			Ops: []graph.Op{
				{Code: graph.VarHandle, CodeName: "VAR_HANDLE", Outputs: ids(1), Resource: &graph.ResourceName{SharedName: "state"}},
				{Code: graph.AssignVariable, CodeName: "ASSIGN_VARIABLE", Inputs: ids(1, 0)},
				{Code: graph.ReadVariable, CodeName: "READ_VARIABLE", Inputs: ids(1), Outputs: ids(2)},
			},
		}},
	}
}

func TestPlaceResourceVariables(t *testing.T) {
	tests := []struct {
		name  string
		dtcm  int64
		rules []plan.Rule
		want  string
	}{
		{"first writable bank", 0, nil, "DTCM"},
		{"by the persistent class rule", 0, []plan.Rule{{Class: "persistent", Memory: "SRAM"}}, "SRAM"},
		{"the later persistent rule", 0, []plan.Rule{{Class: "persistent", Memory: "SRAM"}, {Class: "persistent", Memory: "DTCM"}}, "DTCM"},
		{"spilled when full", 8, nil, "SRAM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := place(t, resourceModel(), board(tt.dtcm), tt.rules...)
			var vars []plan.Alloc
			for _, a := range p.Allocs {
				if a.Kind == plan.VariableAlloc {
					vars = append(vars, a)
				}
			}
			require.Len(t, vars, 1)
			v := vars[0]
			assert.Equal(t, "state", v.Variable.SharedName)
			assert.Equal(t, liveness.Persistent, v.Class)
			assert.Equal(t, int64(16), v.Size)
			a := p.Arena(v.Arena)
			assert.Equal(t, liveness.Persistent, a.Role)
			assert.Equal(t, tt.want, a.Memory)
			assert.GreaterOrEqual(t, a.Size, v.Offset+v.Size)
		})
	}
}
