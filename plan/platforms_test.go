package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/plan"
)

func TestBuiltinPlatformsValidate(t *testing.T) {
	names := plan.BuiltinPlatformNames()
	assert.Equal(t, []string{"apollo330p", "apollo3p", "apollo4l", "apollo4p", "apollo510", "generic"}, names)
	assert.Contains(t, names, plan.DefaultPlatform)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := plan.BuiltinPlatform(name)
			require.NoError(t, err)
			assert.Equal(t, name, p.Name)
			assert.NoError(t, p.Validate())
			assert.NoError(t, plan.ValidateRules(nil, p))
			cb, ok := p.ConstBank()
			if assert.True(t, ok, "a built-in platform has a bank for cold constants") {
				assert.False(t, cb.Writable)
			}
			assert.NotEmpty(t, p.WritableBanks())
		})
	}
}

// TestBuiltinPlatformFigures pins the published sizes; platforms.go says
// where each comes from.
func TestBuiltinPlatformFigures(t *testing.T) {
	const k = 1024
	rw := func(name string, capacity int64, order int, section, init string) plan.Bank {
		return plan.Bank{Name: name, Capacity: capacity, Writable: true, Order: order, Section: section, InitSection: init}
	}
	ro := func(name string, capacity int64, order int, section string) plan.Bank {
		return plan.Bank{Name: name, Capacity: capacity, Order: order, Section: section}
	}
	tests := []struct {
		name  string
		banks []plan.Bank
		cb    string
		cpu   string
	}{
		// generic leaves placement to the toolchain's defaults.
		{"generic", []plan.Bank{rw("SRAM", 0, 0, "", ""), ro("FLASH", 0, 1, "")}, "", ""},
		// The sections of Ambiq's nsx-ambiq-sdk linker scripts (platforms.go).
		{"apollo3p", []plan.Bank{rw("TCM", 64*k, 0, ".tcm_bss", ".tcm"), rw("SRAM", 704*k, 1, ".bss", ".data"),
			ro("FLASH", 2048*k, 2, ".rodata")}, "FLASH", "cortex-m4"},
		{"apollo4l", []plan.Bank{rw("TCM", 384*k, 0, ".bss", ".data"), rw("SRAM", 1024*k, 1, ".sram_bss", ".shared"),
			ro("MRAM", 2048*k, 2, ".rodata")}, "MRAM", "cortex-m4"},
		{"apollo4p", []plan.Bank{rw("TCM", 384*k, 0, ".bss", ".data"), rw("SRAM", 2432*k, 1, ".sram_bss", ".shared"),
			ro("MRAM", 2048*k, 2, ".rodata")}, "MRAM", "cortex-m4"},
		{"apollo510", []plan.Bank{rw("DTCM", 512*k, 0, ".bss", ".data"), rw("SRAM", 3072*k, 1, ".sram_bss", ".shared"),
			ro("MRAM", 4096*k, 2, ".rodata")}, "MRAM", "cortex-m55"},
		{"apollo330p", []plan.Bank{rw("DTCM", 256*k, 0, ".bss", ".data"), rw("SRAM", 1792*k, 1, ".sram_bss", ".shared"),
			ro("MRAM", 2048*k, 2, ".rodata")}, "MRAM", "cortex-m55"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.BuiltinPlatform(tt.name)
			require.NoError(t, err)
			assert.Equal(t, plan.Platform{Name: tt.name, Banks: tt.banks, ConstantBank: tt.cb, CPU: tt.cpu}, p)
		})
	}
}

func TestBuiltinPlatformName(t *testing.T) {
	want, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	for _, name := range []string{"APOLLO510", "Apollo510", "aPoLlO510"} {
		got, err := plan.BuiltinPlatform(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}

	_, err = plan.BuiltinPlatform("apollo9")
	assert.EqualError(t, err, `plan: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`)
	_, err = plan.BuiltinPlatform("")
	assert.EqualError(t, err, `plan: unknown platform "" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`)
}

func TestBuiltinPlatformIsACopy(t *testing.T) {
	p, err := plan.BuiltinPlatform("generic")
	require.NoError(t, err)
	p.Banks[0].Capacity = 1
	p.Banks = append(p.Banks, plan.Bank{Name: "X"})
	again, err := plan.BuiltinPlatform("generic")
	require.NoError(t, err)
	assert.Equal(t, int64(0), again.Banks[0].Capacity)
	assert.Len(t, again.Banks, 2)
}

func TestPlatformBanks(t *testing.T) {
	p := plan.Platform{Banks: []plan.Bank{
		{Name: "FLASH"},
		{Name: "SRAM", Writable: true, Order: 1},
		{Name: "PSRAM", Writable: true, Order: 2},
		{Name: "DTCM", Writable: true, Order: 1},
		{Name: "MRAM"},
		{Name: "ITCM", Writable: true, Order: 0},
	}}

	b, ok := p.Bank("PSRAM")
	assert.True(t, ok)
	assert.Equal(t, p.Banks[2], b)
	_, ok = p.Bank("psram")
	assert.False(t, ok, "bank names are compared with case")

	var order []string
	for _, b := range p.WritableBanks() {
		order = append(order, b.Name)
	}
	assert.Equal(t, []string{"ITCM", "SRAM", "DTCM", "PSRAM"}, order, "by Order, ties by position")
	assert.Equal(t, "FLASH", p.Banks[0].Name, "WritableBanks leaves Banks alone")

	cb, ok := p.ConstBank()
	assert.True(t, ok)
	assert.Equal(t, "FLASH", cb.Name, "the first read-only bank")
	p.ConstantBank = "MRAM"
	cb, ok = p.ConstBank()
	assert.True(t, ok)
	assert.Equal(t, "MRAM", cb.Name)
	p.ConstantBank = "NOPE"
	_, ok = p.ConstBank()
	assert.False(t, ok)

	_, ok = plan.Platform{Banks: []plan.Bank{{Name: "SRAM", Writable: true}}}.ConstBank()
	assert.False(t, ok)
	assert.Empty(t, plan.Platform{}.WritableBanks())
}
