package verify

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
)

func TestUnescapeName(t *testing.T) {
	tests := []struct {
		name, text, raw string
		ok              bool
	}{
		{"plain", "dense/MatMul:0", "dense/MatMul:0", true},
		{"utf-8", "größe_ÿ", "größe_ÿ", true},
		{"backslash", `a\\b`, `a\b`, true},
		{"invalid byte", `a\xffb`, "a\xffb", true},
		{"control", `\x1b[2J\x0a`, "\x1b[2J\n", true},
		{"C1 control", `\xc2\x9b`, "\u009b", true},
		{"right-to-left override", `in\xe2\x80\xaegpj`, "in\u202egpj", true},
		{"zero width space", `a\xe2\x80\x8bb`, "a\u200bb", true},
		{"raw right-to-left override", "in\u202egpj", "", false},
		{"raw isolate", "\u2066", "", false},
		{"lone backslash", `a\b`, "", false},
		{"backslash at the end", `a\`, "", false},
		{"short escape", `\xf`, "", false},
		{"upper-case hex", `\xFF`, "", false},
		{"escape of a plain byte", `\x41`, "", false},
		{"escape of valid UTF-8", `\xc3\xbf`, "", false},
		{"raw control character", "a\x1b", "", false},
		{"raw C1 control", "\u0085", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, ok := unescapeName(tt.text)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.raw, raw)
			}
		})
	}
}

// FuzzNames checks that every byte string is written as valid UTF-8
// without control characters, and read back to the same bytes.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"", "a", `\`, `\xff`, "\xff", "\x1b[31m", "\u009b", "\xed\xa0\x80", "ÿ\ufffd", "\u202e", "\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text := escapeName(s)
		if !utf8.ValidString(text) {
			t.Fatalf("escapeName(%q) = %q is not UTF-8", s, text)
		}
		for _, r := range text {
			if r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("escapeName(%q) = %q holds control character %U", s, text, r)
			}
		}
		raw, ok := unescapeName(text)
		if !ok || raw != s {
			t.Fatalf("unescapeName(escapeName(%q)) = %q, %v", s, raw, ok)
		}
	})
}

// renameVariable renames every VAR_HANDLE of shared_name from to to.
func renameVariable(from, to string) func(*graph.Model) {
	return func(m *graph.Model) {
		for si := range m.Subgraphs {
			for oi := range m.Subgraphs[si].Ops {
				if r := m.Subgraphs[si].Ops[oi].Resource; r != nil && r.SharedName == from {
					m.Subgraphs[si].Ops[oi].Resource = &graph.ResourceName{Container: r.Container, SharedName: to}
				}
			}
		}
	}
}

// TestPlanNames checks names that are not valid UTF-8 or hold control
// characters: escaped as docs/plan-format.md says, they match the model's
// bytes; written any other way, they do not.
func TestPlanNames(t *testing.T) {
	renameTensor := func(m *graph.Model) { m.Subgraphs[0].Tensors[1].Name = "a\xff\x1b[2J\\" }
	customOp := func(m *graph.Model) {
		op := &m.Subgraphs[0].Ops[0]
		op.Code, op.CodeName, op.CustomName = graph.Custom, "", "my\xffop\n"
	}
	runViolationCases(t, []violationCase{
		{name: "tensor name escaped", model: "chain", mod: renameTensor,
			edits: []edit{set("tensor_allocs.0:1.name", `a\xff\x1b[2J\\`)}},
		{name: "tensor name with a raw control character", model: "chain", mod: renameTensor,
			edits: []edit{set("tensor_allocs.0:1.name", "a\ufffd\x1b[2J\\")},
			want:  []Kind{Malformed}},
		{name: "tensor name decoded lossily", model: "chain", mod: renameTensor,
			edits: []edit{set("tensor_allocs.0:1.name", `a\ufffd\x1b[2J\\`)},
			want:  []Kind{Malformed}},
		{name: "tensor name with its backslash not doubled", model: "chain", mod: renameTensor,
			edits: []edit{set("tensor_allocs.0:1.name", `a\xff\x1b[2J\`)},
			want:  []Kind{Malformed}},
		{name: "custom operator escaped", model: "chain", mod: customOp,
			edits: []edit{set("schedule.0.name", `CUSTOM:my\xffop\x0a`)}},
		{name: "custom operator decoded lossily", model: "chain", mod: customOp,
			edits: []edit{set("schedule.0.name", "CUSTOM:my\ufffdop ")},
			want:  []Kind{Malformed}},
		{name: "variable escaped", model: "resource", mod: renameVariable("state", "st\xffate\x00"),
			edits: []edit{set("resource_variables.0.shared_name", `st\xffate\x00`)}},
		{name: "variable decoded lossily", model: "resource", mod: renameVariable("state", "st\xffate"),
			edits: []edit{set("resource_variables.0.shared_name", "st\ufffdate")},
			want:  []Kind{Malformed, Unplaced}},
	})
}

// TestPlanMessagesEscapeNames checks that a message names the model's
// bytes as plan.json writes them, on one line.
func TestPlanMessagesEscapeNames(t *testing.T) {
	m := chainModel()
	m.Subgraphs[0].Tensors[1].Name = "a\xff\n\x1b[2J"
	got := Plan(m, readPlan(t, "chain"))
	assert.Equal(t, []Violation{
		{Malformed, `tensor_allocs["0:1"]: name "a", but 0:1 is named "a\xff\x0a\x1b[2J"`},
	}, got)
}
