// Command boardsize prints the flash, RAM and instructions per inference a
// model needs on an example board (examples/cortex-m55, examples/cortex-m4):
// heliac's program against the same model under TFLM's MicroInterpreter,
// both the harness of driver/testdata/runtime over the same start-up code,
// linker script and TFLM kernel build.
//
//	boardsize -ram RANGES -platform PLATFORM [-insns-heliac K,K1 -insns-tflm K,K1] HELIAC.elf TFLM.elf TFLM_RUN_OUTPUT PLAN.json
//
// RANGES are the board's RAM, START-END ranges (hexadecimal or decimal,
// END exclusive) joined by commas, as the board's linker script has them;
// PLATFORM is heliac's platform file for the board, whose banks' sections
// (section, init_section) are heliac's arenas. TFLM_RUN_OUTPUT is what the
// board's runner (tflm_run_m55, tflm_run_m4, or their _cmsis builds for
// CMSIS-NN) printed for the model (its arena_used_bytes= line: the arena
// TFLM needs with those kernels on this core, their persistent data among
// it); PLAN.json is heliac's plan (its staged constant arenas, and its
// bank_traffic, printed as traffic.BANK=READ/WRITTEN: heliac's estimate of
// the bytes each bank reads and writes per inference). Flash is
// every allocated section with contents: code, read-only data, constants
// and the load images of initialised RAM. RAM is every allocated section
// in RANGES: for heliac its arenas (the sections of its banks) plus the
// program's .data and .bss (the runtime's own state among them); for TFLM
// arena_used_bytes plus the program's .data and .bss less the arena buffer
// (g_arena). Staged constants are RAM heliac spends by choice (copies of
// flash for speed): the figure without them is printed too. Stack and heap
// are the same start-up code's in both and are left out. Figures are
// printed, never judged.
//
// Instructions: -insns-heliac and -insns-tflm name, for each program, the
// files QEMU's plugin insn_count.so wrote (qemu_insns=N, the guest
// instructions of a whole run) for a run with K invocations and one with
// K+1, everything else the same; one inference is N(K+1) - N(K), the
// harness's input fill and output digest included (the same code in both
// programs). Instructions, not cycles: QEMU models no pipeline or wait
// states.
//
//	boardsize -table FIGURES
//
// prints a table, one row per model and kernel build, of FIGURES: blocks of
// a model=<name> line followed by what make measure printed for it, the
// first form's lines and kernels= (the examples' TestQEMU writes them with
// HELIAC_M55_MEASURE=FIGURES or HELIAC_M4_MEASURE=FIGURES; make bench-m55,
// make bench-m4); below it, per kernel build, the geometric mean of
// heliac's instructions per inference over TFLM's, and every row where
// heliac's program is not below TFLM's in instructions, RAM or flash.
package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/heliac/heliac/config"
)

// board is what the figures need to know of a board: its RAM, [start,
// end) ranges, and the sections of heliac's banks.
type board struct {
	ram    [][2]uint64
	arenas map[string]bool
}

// parseRAM reads -ram's START-END,... ranges.
func parseRAM(s string) ([][2]uint64, error) {
	var out [][2]uint64
	for _, r := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(strings.TrimSpace(r), "-")
		if !ok {
			return nil, fmt.Errorf("-ram %q: want START-END ranges joined by commas", s)
		}
		a, err := strconv.ParseUint(lo, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("-ram %q: %w", s, err)
		}
		b, err := strconv.ParseUint(hi, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("-ram %q: %w", s, err)
		}
		if b <= a {
			return nil, fmt.Errorf("-ram %q: range %s ends before it starts", s, r)
		}
		out = append(out, [2]uint64{a, b})
	}
	return out, nil
}

// arenaSections reads the platform file's banks: the sections heliac's C
// module puts their arenas in.
func arenaSections(path string) (map[string]bool, error) {
	p, err := config.ReadPlatform(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, b := range p.Banks {
		for _, s := range []string{b.Section, b.InitSection} {
			if s != "" {
				out[s] = true
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no bank names a section", path)
	}
	return out, nil
}

// sizes is one program's figures.
type sizes struct {
	Flash   uint64 // allocated sections with contents
	Arenas  uint64 // heliac: its banks' sections; TFLM: arena_used_bytes
	Program uint64 // RAM of the rest: .data, .bss (TFLM's less its arena buffer)
	Data    uint64 // of Program, what .data holds (initialised from flash)
}

func (s sizes) RAM() uint64 { return s.Arenas + s.Program }

func (b board) inRAM(addr uint64) bool {
	for _, r := range b.ram {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// measure reads an ELF's figures. For the reference (ref true), the
// symbol whose name holds "g_arena" is TFLM's arena buffer: its bytes count
// as arenaBytes, what TFLM uses of it.
func (b board) measure(path string, ref bool, arenaBytes uint64) (sizes, error) {
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
		case !b.inRAM(sec.Addr):
		case !ref && b.arenas[sec.Name]:
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
		if strings.Contains(sym.Name, "g_arena") && elf.ST_TYPE(sym.Info) == elf.STT_OBJECT && b.inRAM(sym.Value) {
			s.Program -= sym.Size
			s.Arenas = arenaBytes
			return s, nil
		}
	}
	return sizes{}, fmt.Errorf("%s: no arena symbol (g_arena)", path)
}

// planFigures is what boardsize reads of heliac's plan.json.
type planFigures struct {
	// Staged sums the staged constant arenas: constants copied from their
	// source bank into another (a cold arena's source is its own memory).
	Staged uint64
	// Traffic is bank_traffic: each bank's bytes read and written per
	// inference (heliac's estimate), in the platform's order.
	Traffic []bankTraffic
}

// bankTraffic is one entry of plan.json's bank_traffic.
type bankTraffic struct {
	Bank    string `json:"bank"`
	Read    uint64 `json:"read"`
	Written uint64 `json:"written"`
}

// readPlan reads the staged constant bytes and bank_traffic of the
// plan.json at path.
func readPlan(path string) (planFigures, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return planFigures{}, err
	}
	var p struct {
		Arenas []struct {
			Role   string `json:"role"`
			Memory string `json:"memory"`
			Source string `json:"source_memory"`
			Size   uint64 `json:"size"`
		} `json:"arenas"`
		BankTraffic []bankTraffic `json:"bank_traffic"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return planFigures{}, fmt.Errorf("%s: %w", path, err)
	}
	f := planFigures{Traffic: p.BankTraffic}
	for _, a := range p.Arenas {
		if a.Role == "constant" && a.Source != "" && a.Source != a.Memory {
			f.Staged += a.Size
		}
	}
	return f, nil
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
		n, kernels := r.number, r.kernels()
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
	summary(rows, w)
	return nil
}

// summary prints, below the table, per kernel build the geometric mean of
// heliac's instructions per inference over TFLM's, then every row where
// heliac's program is not below TFLM's in instructions, RAM or flash.
func summary(rows []figureRow, w io.Writer) {
	type mean struct {
		logSum float64
		n      int
	}
	means := map[string]*mean{}
	var builds, notBelow []string
	for _, r := range rows {
		n, kernels := r.number, r.kernels()
		if means[kernels] == nil {
			means[kernels] = &mean{}
			builds = append(builds, kernels)
		}
		var not []string
		for _, c := range []struct{ what, key string }{
			{"instructions", "insns_per_inference"}, {"RAM", "ram_bytes"}, {"flash", "flash_bytes"},
		} {
			h, t := n(c.key+".heliac"), n(c.key+".tflm")
			if r.values[c.key+".heliac"] == "" || t == 0 {
				continue
			}
			if c.key == "insns_per_inference" {
				means[kernels].logSum += math.Log(float64(h) / float64(t))
				means[kernels].n++
			}
			if h >= t {
				not = append(not, fmt.Sprintf("%s %s vs %s (%s)", c.what, grouped(h), grouped(t), pct2(h, t)))
			}
		}
		if len(not) > 0 {
			notBelow = append(notBelow, fmt.Sprintf("%s (%s): %s", r.model, kernels, strings.Join(not, ", ")))
		}
	}
	fmt.Fprintln(w)
	for _, k := range builds {
		if m := means[k]; m.n > 0 {
			g := math.Exp(m.logSum / float64(m.n))
			fmt.Fprintf(w, "geometric mean of heliac/TFLM instructions per inference, kernels %s: %.4f (%+.2f%%) over %d models\n", k, g, (g-1)*100, m.n)
		}
	}
	if len(notBelow) == 0 {
		fmt.Fprintln(w, "heliac below TFLM in instructions, RAM and flash on every model")
	}
	for _, l := range notBelow {
		fmt.Fprintln(w, "not below TFLM: "+l)
	}
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

const usage = "usage: boardsize -ram START-END,... -platform PLATFORM [-insns-heliac FILE_K,FILE_K1 -insns-tflm FILE_K,FILE_K1] HELIAC.elf TFLM.elf TFLM_RUN_OUTPUT PLAN.json, or boardsize -table FIGURES"

func run(args []string, w io.Writer) error {
	if len(args) == 2 && args[0] == "-table" {
		return table(args[1], w)
	}
	fs := flag.NewFlagSet("boardsize", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	insnsHeliac := fs.String("insns-heliac", "", "insn_count.so's files of heliac's program run with K and K+1 invocations")
	insnsTFLM := fs.String("insns-tflm", "", "the same of TFLM's program")
	ram := fs.String("ram", "", "the board's RAM: START-END ranges joined by commas")
	platform := fs.String("platform", "", "heliac's platform file for the board")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	args = fs.Args()
	if len(args) != 4 || (*insnsHeliac == "") != (*insnsTFLM == "") || *ram == "" || *platform == "" {
		return errors.New(usage)
	}
	var b board
	var err error
	if b.ram, err = parseRAM(*ram); err != nil {
		return err
	}
	if b.arenas, err = arenaSections(*platform); err != nil {
		return err
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
	app, err := b.measure(args[0], false, 0)
	if err != nil {
		return err
	}
	ref, err := b.measure(args[1], true, used)
	if err != nil {
		return err
	}
	plan, err := readPlan(args[3])
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
	fmt.Fprintf(w, "staged_constant_bytes.heliac=%d\nram_vs_tflm_unstaged=%s\n", plan.Staged, pct(app.RAM()-plan.Staged, ref.RAM()))
	for _, t := range plan.Traffic {
		fmt.Fprintf(w, "traffic.%s=%d/%d\n", t.Bank, t.Read, t.Written)
	}
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
		fmt.Fprintln(os.Stderr, "boardsize:", err)
		os.Exit(1)
	}
}

// number is the row's value of key k as an unsigned number, 0 when absent.
func (r figureRow) number(k string) uint64 {
	v, _ := strconv.ParseUint(r.values[k], 10, 64)
	return v
}

// kernels names the row's kernel build, "-" when it names none.
func (r figureRow) kernels() string {
	if k := r.values["kernels"]; k != "" {
		return k
	}
	return "-"
}
