package plan_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/verify"
)

// oneBank plans diamond() on board(dtcm) with OneScratchBank under rules.
func oneBank(t *testing.T, dtcm int64, rules ...plan.Rule) (*plan.Plan, error) {
	t.Helper()
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	b := board(dtcm)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &b, Rules: rules, OneScratchBank: true})
	if err != nil {
		return nil, err
	}
	js, err := emit.JSON(m, p, emit.Meta{ModelName: "test", Subgraphs: len(m.Subgraphs), Version: "test"})
	require.NoError(t, err)
	assert.Empty(t, verify.Plan(m, js), "plan.json verifies clean")
	return p, nil
}

// scratchMemories lists the banks of the plan's scratch arenas.
func scratchMemories(p *plan.Plan) []string {
	var out []string
	for _, a := range p.Arenas {
		if a.Role == liveness.Scratch {
			out = append(out, a.Memory)
		}
	}
	return out
}

func TestOneScratchBank(t *testing.T) {
	scratchRule := func(memory string) plan.Rule { return plan.Rule{Class: "scratch", Memory: memory} }
	for _, tc := range []struct {
		name  string
		dtcm  int64
		rules []plan.Rule
		want  string // the one scratch bank
	}{
		// DTCM keeps 16 B for state: 112 B left, fewer than the 192 B
		// live at step 1, so everything goes to SRAM, nothing spills.
		{name: "the fastest bank is too small", dtcm: 128, want: "SRAM"},
		{name: "the fastest bank holds them all", dtcm: 1024, want: "DTCM"},
		{name: "a class rule names the bank", dtcm: 1024, rules: []plan.Rule{scratchRule("SRAM")}, want: "SRAM"},
		{name: "a tensor rule names the bank", dtcm: 1024, rules: []plan.Rule{{Tensor: "0:1", Memory: "SRAM"}}, want: "SRAM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := oneBank(t, tc.dtcm, tc.rules...)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, scratchMemories(p))
			assert.Empty(t, p.Spills)
			for _, tn := range []int{0, 1, 2, 3, 4} {
				assert.Equal(t, tc.want, memoryOf(t, p, tn), "tensor 0:%d", tn)
			}
			assert.Equal(t, scratchRule(tc.want), p.Rules[len(p.Rules)-1], "the plan records the bank as a rule")
		})
	}
}

func TestOneScratchBankErrors(t *testing.T) {
	_, err := oneBank(t, 128, plan.Rule{Class: "scratch", Memory: "DTCM"})
	var ce *plan.CapacityError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.ErrorContains(t, err, "plan: one scratch bank: no bank holds every scratch allocation (DTCM needs 192 B, has 112)")

	_, err = oneBank(t, 1024, plan.Rule{Tensor: "0:1", Memory: "SRAM"}, plan.Rule{Tensor: "0:2", Memory: "DTCM"})
	assert.EqualError(t, err, "plan: one scratch bank: the rules put scratch tensors in DTCM and SRAM; with one scratch bank, name one")
}
