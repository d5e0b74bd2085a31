package driver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/plan"
)

// readmeExample returns the fenced block that follows the
// "<!-- README example: name -->" marker in doc (README.md or a file of
// docs/, from the repository's root), so the tests build exactly what the
// documentation shows.
func readmeExample(t *testing.T, doc, name string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", doc))
	require.NoError(t, err)
	re := regexp.MustCompile("(?s)<!-- README example: " + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)```")
	m := re.FindSubmatch(readme)
	require.NotNil(t, m, "%s has no example %q", doc, name)
	return string(m[1])
}

// writeModule compiles a bundled model with cfg and writes its C files
// into dir, returning the output.
func writeModule(t *testing.T, dir, model string, cfg driver.Config) *driver.Output {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", model+".tflite"))
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	for _, f := range out.CFiles {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
	return out
}

// TestCReadmeExample builds docs/c-integration.md's example with the
// module `heliac testdata/models/hello_world_int8.tflite --external-arenas`
// writes, as the README says to (C99, warnings as errors), and runs it:
// it binds its arena, initialises the module, quantizes its input and
// walks the schedule.
func TestCReadmeExample(t *testing.T) {
	gcc := needGCC(t)
	dir := t.TempDir()
	cfg := testConfig("hello_world_int8")
	cfg.Plan.External = []string{"*"}
	out := writeModule(t, dir, "hello_world_int8", cfg)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(readmeExample(t, "docs/c-integration.md", "main.c")), 0o644))

	run(t, dir, gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I.", "-o", "example", "main.c", "hello_world_int8.c")
	got := run(t, dir, filepath.Join(dir, "example"))

	var ops []string
	for _, r := range out.Plan.Schedule.Runs {
		op := out.Model.Subgraphs[r.Op.Subgraph].Ops[r.Op.Op]
		ops = append(ops, "subgraph "+strconv.Itoa(int(r.Op.Subgraph))+" operator "+strconv.Itoa(int(r.Op.Op))+
			": builtin "+strconv.Itoa(int(op.Code))+", "+strconv.Itoa(len(op.Inputs))+" input(s), "+strconv.Itoa(len(op.Outputs))+" output(s)")
	}
	require.NotEmpty(t, ops)
	want := strings.Join(ops, "\n") + "\nplan " + out.Plan.Hash() + "\n"
	assert.Equal(t, want, got, "the example prints the schedule in order and the plan's hash")
}

// TestCReadmeLinkerScript links a module for apollo510 with
// docs/c-integration.md's
// GNU ld script and checks, from the linked ELF's symbols, that each arena
// lies in its bank's memory: scratch in DTCM (.bss), a staged constant
// arena in SRAM (.sram_bss), its image and the cold constants in MRAM
// (.rodata), and constants in RAM filled at boot in SRAM (.shared, loaded
// from MRAM).
func TestCReadmeLinkerScript(t *testing.T) {
	cc, err := exec.LookPath("arm-none-eabi-gcc")
	if err != nil {
		t.Skip("arm-none-eabi-gcc not on PATH")
	}
	nm, err := exec.LookPath("arm-none-eabi-nm")
	if err != nil {
		t.Skip("arm-none-eabi-nm not on PATH")
	}
	script := readmeExample(t, "docs/c-integration.md", "apollo510.ld")
	regions := ldRegions(t, script)
	for _, name := range []string{"DTCM", "SRAM", "MRAM"} {
		require.Contains(t, regions, name, "the README's script names every apollo510 bank")
	}

	apollo510, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	bootInit := apollo510
	bootInit.Banks = slices.Clone(apollo510.Banks)
	bootInit.Banks[1].BootInit = true
	for _, tc := range []struct {
		name     string
		platform plan.Platform
		rules    []plan.Rule
		want     map[string]string // symbol → memory
	}{
		{"cold constants", apollo510, nil, map[string]string{
			"hello_world_int8_scratch_dtcm": "DTCM", "hello_world_int8_constant_mram": "MRAM"}},
		{"staged constants", apollo510, []plan.Rule{{Class: "constant", Memory: "SRAM", Source: "MRAM"}}, map[string]string{
			"hello_world_int8_scratch_dtcm": "DTCM", "hello_world_int8_constant_sram": "SRAM", "hello_world_int8_constant_sram_source": "MRAM"}},
		{"constants filled at boot", bootInit, []plan.Rule{{Class: "constant", Memory: "SRAM"}}, map[string]string{
			"hello_world_int8_scratch_dtcm": "DTCM", "hello_world_int8_constant_sram": "SRAM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := testConfig("hello_world_int8")
			cfg.Plan.Platform = &tc.platform
			cfg.Plan.Rules = tc.rules
			writeModule(t, dir, "hello_world_int8", cfg)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "apollo510.ld"), []byte(script), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(linkMain), 0o644))
			run(t, dir, cc, "-mcpu=cortex-m55", "-mthumb", "-Os", "-std=c11", "-Wall", "-Wextra", "-Werror",
				"-nostartfiles", "-Wl,--entry=reset", "-Wl,--no-warn-rwx-segments", "-T", "apollo510.ld",
				"-I.", "-o", "fw.elf", "main.c", "hello_world_int8.c")
			symbols := elfSymbols(t, dir, nm, "fw.elf")
			for sym, mem := range tc.want {
				addr, ok := symbols[sym]
				require.True(t, ok, "fw.elf has no symbol %s", sym)
				r := regions[mem]
				assert.True(t, addr >= r.origin && addr < r.origin+r.length,
					"%s at %#x is not in %s [%#x, %#x)", sym, addr, mem, r.origin, r.origin+r.length)
			}
		})
	}
}

// linkMain is the least a firmware needs around the module to link:
// an entry point that runs init.
const linkMain = `#include "hello_world_int8.h"

void reset(void);
void reset(void)
{
	(void)hello_world_int8_init();
	for (;;) {
	}
}
`

// ldRegion is a MEMORY region of a GNU ld script.
type ldRegion struct{ origin, length uint64 }

// ldRegions reads the MEMORY regions of a GNU ld script (ORIGIN in hex,
// LENGTH in K).
func ldRegions(t *testing.T, script string) map[string]ldRegion {
	t.Helper()
	re := regexp.MustCompile(`(\w+)\s*\([a-z]+\)\s*:\s*ORIGIN\s*=\s*0x([0-9A-Fa-f]+)\s*,\s*LENGTH\s*=\s*(\d+)K`)
	out := map[string]ldRegion{}
	for _, m := range re.FindAllStringSubmatch(script, -1) {
		origin, err := strconv.ParseUint(m[2], 16, 64)
		require.NoError(t, err)
		kib, err := strconv.ParseUint(m[3], 10, 64)
		require.NoError(t, err)
		out[m[1]] = ldRegion{origin, kib * 1024}
	}
	return out
}

// elfSymbols returns the addresses of an ELF's symbols, by name.
func elfSymbols(t *testing.T, dir, nm, elf string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, line := range strings.Split(run(t, dir, nm, elf), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		require.NoError(t, err)
		out[f[2]] = addr
	}
	return out
}

// run runs a command in dir and returns its standard output, failing the
// test with its output when it fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
