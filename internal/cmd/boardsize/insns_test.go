package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The plugin's file holds one qemu_insns= line; none, two (a file left
// from an earlier run: the plugin appends) or a bad number are errors.
func TestInsnCount(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       uint64
		err        string
	}{
		{name: "one line", file: "qemu_insns=13368452\n", want: 13368452},
		{name: "among other lines", file: "x=1\n  qemu_insns=7\n", want: 7},
		{name: "none", file: "status=ok\n", err: "no qemu_insns= line"},
		{name: "empty", file: "", err: "no qemu_insns= line"},
		{name: "appended twice", file: "qemu_insns=1\nqemu_insns=2\n", err: "more than one"},
		{name: "not a number", file: "qemu_insns=12x\n", err: "qemu_insns=12x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := insnCount(strings.NewReader(tc.file))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// One inference is N(K+1) - N(K); a second run no longer than the first
// is not a run of one more invocation.
func TestPerInference(t *testing.T) {
	// tflm_run_m55_cmsis on person_detect, ../shared/tools/README.md: N(1), N(2).
	got, err := insns{K: 13368452, K1: 19929329}.PerInference()
	require.NoError(t, err)
	assert.Equal(t, uint64(6560877), got)
	for _, c := range []insns{{K: 5, K1: 5}, {K: 6, K1: 5}} {
		_, err := c.PerInference()
		assert.Error(t, err, "%+v", c)
	}
}

// -insns-heliac and -insns-tflm read a pair of files each; one without
// the other, or a pair that is not two files, is a usage error.
func TestReadInsns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	k, k1 := write("k", "qemu_insns=100\n"), write("k1", "qemu_insns=250\n")
	c, err := readInsns(k + "," + k1)
	require.NoError(t, err)
	assert.Equal(t, insns{K: 100, K1: 250}, c)
	_, err = readInsns(k)
	assert.ErrorContains(t, err, "FILE_K,FILE_K1")
	_, err = readInsns(k + "," + filepath.Join(dir, "missing"))
	assert.Error(t, err)
	_, err = readInsns(k + "," + write("bad", "nothing\n"))
	assert.ErrorContains(t, err, "bad: no qemu_insns= line")

	err = run([]string{"-insns-heliac", k + "," + k1, "a.elf", "b.elf", "out", "plan.json"}, &strings.Builder{})
	assert.ErrorContains(t, err, "usage", "-insns-heliac without -insns-tflm")
}

// -ram reads START-END ranges, hexadecimal or decimal; a range that is
// not one, or ends before it starts, is an error.
func TestParseRAM(t *testing.T) {
	got, err := parseRAM("0x20000000-0x20200000,16-32")
	require.NoError(t, err)
	assert.Equal(t, [][2]uint64{{0x20000000, 0x20200000}, {16, 32}}, got)
	for _, bad := range []string{"", "0x20000000", "0x10-0x10", "x-1", "1-y"} {
		_, err := parseRAM(bad)
		assert.Error(t, err, bad)
	}
}

// -platform's banks name the arena sections: each section and init_section.
func TestArenaSections(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"../../../examples/cortex-m55/an547.yaml", ".ddr_bss .dtcm_bss .flash_rodata .isram_bss .sram_bss .sram_data"},
		{"../../../examples/cortex-m4/an386.yaml", ".psram_bss .ssram1_rodata .ssram2_bss .ssram3_bss .ssram3_data"},
	} {
		got, err := arenaSections(tc.file)
		require.NoError(t, err)
		var names []string
		for s := range got {
			names = append(names, s)
		}
		sort.Strings(names)
		assert.Equal(t, tc.want, strings.Join(names, " "), tc.file)
	}
}

// The plan's staged constant arenas (a cold one's source is its own
// memory) and its bank_traffic, in the plan's order.
func TestReadPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.plan.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "arenas": [
    {"role": "constant", "memory": "DTCM", "source_memory": "FLASH", "size": 432},
    {"role": "constant", "memory": "FLASH", "source_memory": "FLASH", "size": 1000},
    {"role": "scratch", "memory": "DTCM", "source_memory": null, "size": 32}
  ],
  "bank_traffic": [
    {"bank": "DTCM", "read": 453, "written": 33, "staging_written": 432},
    {"bank": "FLASH", "read": 7, "written": 0, "staging_read": 432}
  ]
}`), 0o644))
	got, err := readPlan(path)
	require.NoError(t, err)
	assert.Equal(t, planFigures{Staged: 432, Traffic: []bankTraffic{{"DTCM", 453, 33}, {"FLASH", 7, 0}}}, got)
}
