package plan_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// twoRAMs has two writable banks and two read-only sources.
func twoRAMs() plan.Platform {
	return plan.Platform{Name: "two", Banks: []plan.Bank{
		{Name: "A", Writable: true, Order: 0},
		{Name: "B", Writable: true, Order: 1},
		{Name: "FLASH"},
		{Name: "QSPI"},
	}}
}

func TestRulesThatCannotHold(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	tests := []struct {
		name  string
		rules []plan.Rule
		want  string
		boot  bool // A is boot_init RAM, which may hold cold constants
	}{
		{"scratch in read-only memory", []plan.Rule{{Name: "a", Memory: "FLASH"}}, `rule 0: scratch tensor 0:1 "a" cannot live in read-only FLASH`, false},
		{"state in read-only memory", []plan.Rule{{Name: "state", Memory: "FLASH"}}, `rule 0: persistent tensor 0:8 "state" cannot live in read-only FLASH`, false},
		{"constant in RAM without staging", []plan.Rule{{Name: "w*", Memory: "A"}}, `rule 0: constant 0:5 "w": A is RAM; to place constants there, stage them: add source: FLASH`, false},
		{"two sources into one memory", []plan.Rule{{Class: "constant", Memory: "A", Source: "FLASH"}, {Name: "odd", Memory: "A", Source: "QSPI"}},
			"constants in A come from both FLASH and QSPI", false},
		{"cold and staged in one memory", []plan.Rule{{Name: "w*", Memory: "A"}, {Name: "odd", Memory: "A", Source: "FLASH"}},
			"constants in A come from both A itself (cold) and FLASH", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := twoRAMs()
			p.Banks[0].BootInit = tt.boot
			_, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &p, Rules: tt.rules})
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestTensorRuleMatchesByIndexNotSpelling(t *testing.T) {
	m := diamond()
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p := twoRAMs()
	pl, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &p, Rules: []plan.Rule{{Tensor: "0:01", Memory: "B"}}})
	require.NoError(t, err)
	a, err := pl.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 1}))
	require.NoError(t, err)
	assert.Equal(t, "B", pl.Arenas[a.Arena].Memory)
}

func TestValidateRules(t *testing.T) {
	ap510, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	const banks = `platform "apollo510" (banks: DTCM, SRAM, MRAM)`
	tests := []struct {
		name string
		rule plan.Rule
		p    plan.Platform // zero means apollo510
		err  string
	}{
		{"class scratch", plan.Rule{Class: "scratch", Memory: "DTCM"}, plan.Platform{}, ""},
		{"class persistent", plan.Rule{Class: "persistent", Memory: "SRAM"}, plan.Platform{}, ""},
		{"cold constants in MRAM", plan.Rule{Class: "constant", Memory: "MRAM"}, plan.Platform{}, ""},
		{"staged constants", plan.Rule{Class: "constant", Memory: "SRAM", Source: "MRAM"}, plan.Platform{}, ""},
		{"tensor", plan.Rule{Tensor: "2:140", Memory: "SRAM"}, plan.Platform{}, ""},
		{"staged tensor", plan.Rule{Tensor: "0:7", Memory: "DTCM", Source: "MRAM"}, plan.Platform{}, ""},
		{"name glob", plan.Rule{Name: "model/conv2d_[0-9]*/*", Memory: "SRAM"}, plan.Platform{}, ""},
		{"name in read-only bank (cold constants by name)", plan.Rule{Name: "*weights", Memory: "MRAM"}, plan.Platform{}, ""},

		{"no selector", plan.Rule{Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: give one of class, tensor or name`},
		{"two selectors", plan.Rule{Class: "scratch", Name: "x", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: give only one of class, tensor or name, not class and name`},
		{"three selectors", plan.Rule{Class: "scratch", Tensor: "0:1", Name: "x", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: give only one of class, tensor or name, not class and tensor and name`},
		{"unknown class", plan.Rule{Class: "Scratch", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: class "Scratch" is not scratch, persistent or constant`},
		{"class unallocated", plan.Rule{Class: "unallocated", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: class "unallocated" is not scratch, persistent or constant`},
		{"tensor without colon", plan.Rule{Tensor: "12", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: tensor "12" is not subgraph:tensor, e.g. "0:12"`},
		{"tensor negative", plan.Rule{Tensor: "0:-1", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: tensor "0:-1" is not subgraph:tensor, e.g. "0:12"`},
		{"tensor with spaces", plan.Rule{Tensor: "0: 1", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: tensor "0: 1" is not subgraph:tensor, e.g. "0:12"`},
		{"bad glob", plan.Rule{Name: "conv[", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: name "conv[" is not a valid glob: syntax error in pattern`},
		{"bad glob past the first mismatch", plan.Rule{Name: "y[", Memory: "SRAM"}, plan.Platform{},
			`plan: rule 0: name "y[" is not a valid glob: syntax error in pattern`},
		{"memory missing", plan.Rule{Class: "scratch"}, plan.Platform{},
			`plan: rule 0: memory is missing`},
		{"memory unknown", plan.Rule{Class: "scratch", Memory: "dtcm"}, plan.Platform{},
			`plan: rule 0: memory "dtcm" is not a bank of ` + banks},
		{"source for scratch", plan.Rule{Class: "scratch", Memory: "DTCM", Source: "MRAM"}, plan.Platform{},
			`plan: rule 0: source is only for constants, not class scratch`},
		{"source for persistent", plan.Rule{Class: "persistent", Memory: "DTCM", Source: "MRAM"}, plan.Platform{},
			`plan: rule 0: source is only for constants, not class persistent`},
		{"source unknown", plan.Rule{Class: "constant", Memory: "DTCM", Source: "FLASH"}, plan.Platform{},
			`plan: rule 0: source "FLASH" is not a bank of ` + banks},
		{"source writable", plan.Rule{Class: "constant", Memory: "DTCM", Source: "SRAM"}, plan.Platform{},
			`plan: rule 0: source "SRAM" is writable; constants are staged from a read-only bank`},
		{"staged into read-only", plan.Rule{Name: "w*", Memory: "MRAM", Source: "MRAM"}, plan.Platform{},
			`plan: rule 0: memory "MRAM" is read-only; staged constants are copied into a writable bank`},
		{"scratch in read-only", plan.Rule{Class: "scratch", Memory: "MRAM"}, plan.Platform{},
			`plan: rule 0: memory "MRAM" is read-only; scratch tensors need a writable bank`},
		{"persistent in read-only", plan.Rule{Class: "persistent", Memory: "MRAM"}, plan.Platform{},
			`plan: rule 0: memory "MRAM" is read-only; persistent tensors need a writable bank`},
		{"constants in RAM, not staged", plan.Rule{Class: "constant", Memory: "DTCM"}, plan.Platform{},
			`plan: constant rule 0: DTCM is RAM; to place constants there, stage them: add source: MRAM`},
		{"the hint names the constant bank", plan.Rule{Class: "constant", Memory: "SRAM"}, plan.Platform{Name: "b", Banks: []plan.Bank{
			{Name: "SRAM", Writable: true}, {Name: "FLASH"}, {Name: "QSPI"},
		}, ConstantBank: "QSPI"},
			`plan: constant rule 0: SRAM is RAM; to place constants there, stage them: add source: QSPI`},
		{"constants in RAM, nothing to stage from", plan.Rule{Class: "constant", Memory: "SRAM"}, plan.Platform{Name: "ram", Banks: []plan.Bank{
			{Name: "SRAM", Writable: true},
		}},
			`plan: constant rule 0: SRAM is RAM and platform "ram" has no read-only bank to stage constants from`},
		{"constants in RAM initialised at boot", plan.Rule{Class: "constant", Memory: "SRAM"}, plan.Platform{Banks: []plan.Bank{
			{Name: "SRAM", Writable: true, BootInit: true},
		}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			if p.Banks == nil {
				p = ap510
			}
			err := plan.ValidateRules([]plan.Rule{tt.rule}, p)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.err)
			}
		})
	}

	t.Run("every bad rule, by index", func(t *testing.T) {
		err := plan.ValidateRules([]plan.Rule{
			{Class: "scratch", Memory: "DTCM"},
			{Class: "scratch", Memory: "PSRAM"},
			{Class: "scratch", Memory: "SRAM"},
			{Class: "constant", Memory: "SRAM"},
		}, ap510)
		assert.EqualError(t, err,
			`plan: rule 1: memory "PSRAM" is not a bank of `+banks+"\n"+
				`plan: constant rule 3: SRAM is RAM; to place constants there, stage them: add source: MRAM`)
	})
}

func TestParseTensorRef(t *testing.T) {
	ref, err := plan.ParseTensorRef("2:140")
	require.NoError(t, err)
	assert.Equal(t, graph.TensorRef{Subgraph: 2, Tensor: 140}, ref)
	assert.Equal(t, "2:140", ref.String())
	for _, s := range []string{"", ":", "1:", ":1", "1", "1:2:3", "+1:2", "1:-2", "a:b", " 1:2", "1:99999999999999999999"} {
		_, err := plan.ParseTensorRef(s)
		assert.EqualError(t, err, `plan: tensor "`+s+`" is not subgraph:tensor`, s)
	}
}

func TestParseClass(t *testing.T) {
	for _, c := range []liveness.Class{liveness.Scratch, liveness.Persistent, liveness.Constant} {
		got, err := plan.ParseClass(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	_, err := plan.ParseClass("unallocated")
	assert.EqualError(t, err, `plan: class "unallocated" is not scratch, persistent or constant`)
}
