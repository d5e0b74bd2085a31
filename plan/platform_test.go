package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/plan"
)

func TestValidate(t *testing.T) {
	ok := plan.Bank{Name: "SRAM", Writable: true}
	tests := []struct {
		name string
		p    plan.Platform
		err  string
	}{
		{"one writable bank", plan.Platform{Banks: []plan.Bank{ok}}, ""},
		{"alignments", plan.Platform{Banks: []plan.Bank{
			{Name: "A", Writable: true, Alignment: 0},
			{Name: "B", Writable: true, Alignment: 1},
			{Name: "C", Writable: true, Alignment: 64},
		}}, ""},
		{"empty name", plan.Platform{Banks: []plan.Bank{ok, {Writable: true}}},
			`plan: bank 1: name is empty`},
		{"a name that would reach a terminal raw", plan.Platform{Banks: []plan.Bank{ok, {Name: "S\x1b[2JRAM", Writable: true}}},
			`plan: bank 1: name "S\x1b[2JRAM" is not printable UTF-8`},
		{"a name that is not UTF-8", plan.Platform{Banks: []plan.Bank{ok, {Name: "\xff", Writable: true}}},
			`plan: bank 1: name "\xff" is not printable UTF-8`},
		{"a platform name with a newline", plan.Platform{Name: "a\nb", Banks: []plan.Bank{ok}},
			`plan: platform name "a\nb" is not printable UTF-8`},
		{"duplicate name", plan.Platform{Banks: []plan.Bank{ok, {Name: "FLASH"}, ok}},
			`plan: bank "SRAM": defined twice (banks 0 and 2)`},
		{"negative capacity", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Capacity: -4}}},
			`plan: bank "SRAM": capacity -4 is negative`},
		{"alignment not a power of two", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Alignment: 24}}},
			`plan: bank "SRAM": alignment 24 is not 0 or a power of two`},
		{"negative alignment", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Alignment: -8}}},
			`plan: bank "SRAM": alignment -8 is not 0 or a power of two`},
		{"the largest alignment C takes", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Alignment: plan.MaxAlignment}}}, ""},
		{"an alignment C cannot say", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Alignment: 1 << 30}}},
			`plan: bank "SRAM": alignment 1073741824 is more than 268435456, the most C compilers accept in _Alignas`},
		{"just past it", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Alignment: 2 * plan.MaxAlignment}}},
			`plan: bank "SRAM": alignment 536870912 is more than 268435456, the most C compilers accept in _Alignas`},
		{"sections", plan.Platform{Banks: []plan.Bank{
			{Name: "SRAM", Writable: true, Section: ".sram_bss", InitSection: ".shared"},
			{Name: "MRAM", Section: ".rodata.weights-2"},
		}}, ""},
		{"a section C and linker scripts cannot take as it is", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Section: ".sram bss"}}},
			`plan: bank "SRAM": section ".sram bss" may hold only ASCII letters, digits, '.', '_' and '-'`},
		{"a section that would end a C string", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, InitSection: `.data")`}}},
			`plan: bank "SRAM": init_section ".data\")" may hold only ASCII letters, digits, '.', '_' and '-'`},
		{"a section too long", plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true, Section: "." + strings.Repeat("b", 128)}}},
			`plan: bank "SRAM": section "` + "." + strings.Repeat("b", 128) + `" is 129 bytes long, more than 128`},
		{"no writable bank", plan.Platform{Name: "rom-only", Banks: []plan.Bank{{Name: "FLASH"}}},
			`plan: platform "rom-only" has no writable bank`},
		{"no banks", plan.Platform{}, `plan: the platform has no writable bank`},
		{"constant bank unknown", plan.Platform{Name: "b", Banks: []plan.Bank{ok, {Name: "FLASH"}}, ConstantBank: "MRAM"},
			`plan: constant_bank "MRAM" is not a bank of platform "b" (banks: SRAM, FLASH)`},
		{"constant bank writable", plan.Platform{Banks: []plan.Bank{ok}, ConstantBank: "SRAM"},
			`plan: constant_bank "SRAM" is writable; cold constants need a read-only bank`},
		{"every problem, one a line", plan.Platform{Banks: []plan.Bank{
			{Name: "X", Capacity: -1, Alignment: 3},
			{Name: "X"},
		}, ConstantBank: "Y"},
			"plan: bank \"X\": capacity -1 is negative\n" +
				"plan: bank \"X\": alignment 3 is not 0 or a power of two\n" +
				"plan: bank \"X\": defined twice (banks 0 and 1)\n" +
				"plan: the platform has no writable bank\n" +
				"plan: constant_bank \"Y\" is not a bank of the platform (banks: X, X)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.err)
			}
		})
	}
}
