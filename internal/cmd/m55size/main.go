// Command m55size prints the flash, RAM and instructions per inference a
// model needs on the Cortex-M55 example (examples/cortex-m55): heliac's
// program against the same model under TFLM's MicroInterpreter, both the
// harness of driver/testdata/runtime over the same start-up code, linker
// script and TFLM kernel build.
//
//	m55size [-insns-heliac K,K1 -insns-tflm K,K1] HELIAC.elf TFLM.elf TFLM_RUN_OUTPUT PLAN.json
//
// TFLM_RUN_OUTPUT is what tflm_run_m55 (tflm_run_m55_cmsis for CMSIS-NN)
// printed for the model (its arena_used_bytes= line: the arena TFLM needs
// with those kernels on this core, their persistent data among it); PLAN.json is
// heliac's plan (its staged constant arenas). Flash is every allocated
// section with contents: code, read-only data, constants and the load
// images of initialised RAM. RAM is every allocated section in the board's
// RAM (DTCM, SRAM, ISRAM, DDR): for heliac its arenas (the sections of its
// banks) plus the program's .data and .bss (the runtime's own state among
// them); for TFLM arena_used_bytes plus the program's .data and .bss less
// the arena buffer (g_arena). Staged constants are RAM heliac spends by
// choice (copies of flash for speed): the figure without them is printed
// too. Stack and heap are the same start-up code's in both and are left
// out. Figures are printed, never judged.
//
// Instructions: -insns-heliac and -insns-tflm name, for each program, the
// files QEMU's plugin insn_count.so wrote (qemu_insns=N, the guest
// instructions of a whole run) for a run with K invocations and one with
// K+1, everything else the same; one inference is N(K+1) - N(K), the
// harness's input fill and output digest included (the same code in both
// programs). Instructions, not cycles: QEMU models no pipeline or wait
// states.
//
//	m55size -table FIGURES
//
// prints a table, one row per model and kernel build, of FIGURES: blocks of
// a model=<name> line followed by what make measure printed for it, the
// first form's lines and kernels= (TestQEMU writes them with
// HELIAC_M55_MEASURE=FIGURES; make bench-m55).
package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ramRanges are an547.ld's RAM regions, [start, end).
var ramRanges = [][2]uint64{
	{0x01000000, 0x01200000}, // SRAM
	{0x20000000, 0x20080000}, // DTCM
	{0x21000000, 0x21400000}, // ISRAM
	{0x60000000, 0x70000000}, // DDR
}

// arenaSections are the sections of heliac's banks (an547.yaml).
var arenaSections = map[string]bool{".dtcm_bss": true, ".sram_bss": true, ".sram_data": true, ".isram_bss": true, ".ddr_bss": true}

// sizes is one program's figures.
type sizes struct {
	Flash   uint64 // allocated sections with contents
	Arenas  uint64 // heliac: its banks' sections; TFLM: arena_used_bytes
	Program uint64 // RAM of the rest: .data, .bss (TFLM's less its arena buffer)
	Data    uint64 // of Program, what .data holds (initialised from flash)
}

func (s sizes) RAM() uint64 { return s.Arenas + s.Program }

func inRAM(addr uint64) bool {
	for _, r := range ramRanges {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// measure reads an ELF's figures. For the reference (ref true), the
// symbol whose name holds "g_arena" is TFLM's arena buffer: its bytes count
// as arenaBytes, what TFLM uses of it.
func measure(path string, ref bool, arenaBytes uint64) (sizes, error) {
	f, err := elf.Open(path)
	if err != nil {
		return sizes{}, err
	}
	defer f.Close()
	var s sizes
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if sec.Type != elf.SHT_NOBITS {
			s.Flash += sec.Size
		}
		switch {
		case !inRAM(sec.Addr):
		case !ref && arenaSections[sec.Name]:
			s.Arenas += sec.Size
		default:
			s.Program += sec.Size
			if sec.Name == ".data" {
				s.Data += sec.Size
			}
		}
	}
	if !ref {
		return s, nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return sizes{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, sym := range syms {
		if strings.Contains(sym.Name, "g_arena") && elf.ST_TYPE(sym.Info) == elf.STT_OBJECT && inRAM(sym.Value) {
			s.Program -= sym.Size
			s.Arenas = arenaBytes
			return s, nil
		}
	}
	return sizes{}, fmt.Errorf("%s: no arena symbol (g_arena)", path)
}

// stagedBytes sums the plan's staged constant arenas: constants copied
// from their source bank into another (a cold arena's source is its own
// memory).
func stagedBytes(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var p struct {
		Arenas []struct {
			Role   string `json:"role"`
			Memory string `json:"memory"`
			Source string `json:"source_memory"`
			Size   uint64 `json:"size"`
		} `json:"arenas"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var n uint64
	for _, a := range p.Arenas {
		if a.Role == "constant" && a.Source != "" && a.Source != a.Memory {
			n += a.Size
		}
	}
	return n, nil
}

// arenaUsed reads arena_used_bytes= from the reference's output.
func arenaUsed(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "arena_used_bytes="); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no arena_used_bytes= line (did the reference run?)")
}

func pct(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", (float64(a)/float64(b)-1)*100)
}

// figureRow is one model's figures, from the first form's lines.
type figureRow struct {
	model  string
	values map[string]string // each line's first key=value
	fields map[string]string // the others, keyed "<first key> <key>"
}

// readFigures reads the blocks of a figures file.
func readFigures(r io.Reader) ([]figureRow, error) {
	var rows []figureRow
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		first := ""
		for _, kv := range strings.Fields(line) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			if k == "model" {
				rows = append(rows, figureRow{model: v, values: map[string]string{}, fields: map[string]string{}})
				break
			}
			if len(rows) == 0 {
				return nil, fmt.Errorf("%q before the first model= line", line)
			}
			row := rows[len(rows)-1]
			if first == "" {
				row.values[k] = v
				first = k
			} else {
				row.fields[first+" "+k] = v
			}
		}
	}
	return rows, sc.Err()
}

// table prints the figures of every model as a Markdown table.
func table(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := readFigures(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintln(w, "| model | kernels | flash heliac | flash TFLM | RAM heliac (arenas + program) | RAM TFLM (arena_used + program) | staged | instructions per inference heliac | TFLM |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		n := func(k string) uint64 {
			v, _ := strconv.ParseUint(r.values[k], 10, 64)
			return v
		}
		kernels := r.values["kernels"]
		if kernels == "" {
			kernels = "-"
		}
		insns := func(who string) string {
			if r.values["insns_per_inference."+who] == "" {
				return "-"
			}
			return grouped(n("insns_per_inference." + who))
		}
		heliacInsns := insns("heliac")
		if heliacInsns != "-" {
			heliacInsns += " (" + pct2(n("insns_per_inference.heliac"), n("insns_per_inference.tflm")) + ")"
		}
		app, ref := n("ram_bytes.heliac"), n("ram_bytes.tflm")
		fmt.Fprintf(w, "| %s | %s | %d (%s) | %d | %d (%s; %s + %s) | %d (%s + %s) | %d | %s | %s |\n", r.model, kernels,
			n("flash_bytes.heliac"), pct(n("flash_bytes.heliac"), n("flash_bytes.tflm")), n("flash_bytes.tflm"),
			app, pct(app, ref), r.fields["ram_bytes.heliac arenas"], r.fields["ram_bytes.heliac program"],
			ref, r.fields["ram_bytes.tflm arena_used"], r.fields["ram_bytes.tflm program"],
			n("staged_constant_bytes.heliac"), heliacInsns, insns("tflm"))
	}
	return nil
}

// pct2 is pct to a hundredth of a percent: instruction counts differ by less.
func pct2(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", (float64(a)/float64(b)-1)*100)
}

// grouped writes n with its digits in groups of three: 6,684,527.
func grouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

const usage = "usage: m55size [-insns-heliac FILE_K,FILE_K1 -insns-tflm FILE_K,FILE_K1] HELIAC.elf TFLM.elf TFLM_RUN_OUTPUT PLAN.json, or m55size -table FIGURES"

func run(args []string, w io.Writer) error {
	if len(args) == 2 && args[0] == "-table" {
		return table(args[1], w)
	}
	fs := flag.NewFlagSet("m55size", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	insnsHeliac := fs.String("insns-heliac", "", "insn_count.so's files of heliac's program run with K and K+1 invocations")
	insnsTFLM := fs.String("insns-tflm", "", "the same of TFLM's program")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	args = fs.Args()
	if len(args) != 4 || (*insnsHeliac == "") != (*insnsTFLM == "") {
		return errors.New(usage)
	}
	out, err := os.Open(args[2])
	if err != nil {
		return err
	}
	defer out.Close()
	used, err := arenaUsed(out)
	if err != nil {
		return fmt.Errorf("%s: %w", args[2], err)
	}
	app, err := measure(args[0], false, 0)
	if err != nil {
		return err
	}
	ref, err := measure(args[1], true, used)
	if err != nil {
		return err
	}
	staged, err := stagedBytes(args[3])
	if err != nil {
		return err
	}
	var counts [2]insns
	var per [2]uint64
	if *insnsHeliac != "" {
		for i, files := range []string{*insnsHeliac, *insnsTFLM} {
			if counts[i], err = readInsns(files); err != nil {
				return err
			}
			if per[i], err = counts[i].PerInference(); err != nil {
				return fmt.Errorf("%s: %w", files, err)
			}
		}
	}
	fmt.Fprintf(w, "flash_bytes.heliac=%d\nflash_bytes.tflm=%d\nflash_vs_tflm=%s\n", app.Flash, ref.Flash, pct(app.Flash, ref.Flash))
	fmt.Fprintf(w, "ram_bytes.heliac=%d arenas=%d program=%d data=%d\n", app.RAM(), app.Arenas, app.Program, app.Data)
	fmt.Fprintf(w, "ram_bytes.tflm=%d arena_used=%d program=%d data=%d\nram_vs_tflm=%s\n", ref.RAM(), ref.Arenas, ref.Program, ref.Data, pct(app.RAM(), ref.RAM()))
	fmt.Fprintf(w, "staged_constant_bytes.heliac=%d\nram_vs_tflm_unstaged=%s\n", staged, pct(app.RAM()-staged, ref.RAM()))
	if *insnsHeliac != "" {
		for i, who := range []string{"heliac", "tflm"} {
			fmt.Fprintf(w, "insns_per_inference.%s=%d n_k=%d n_k1=%d\n", who, per[i], counts[i].K, counts[i].K1)
		}
		fmt.Fprintf(w, "insns_vs_tflm=%s\n", pct(per[0], per[1]))
	}
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "m55size:", err)
		os.Exit(1)
	}
}
