// Command bench prints heliac's figures on the shared corpus: for every
// model, the scratch arena heliac plans, its lower bound, what TFLM's
// planner needs for the same tensors, and the planning time; then, for the
// hard allocation instances in bench/dsa, the height each strategy reaches.
// Run it with `make bench`. It is a report, not a test: nothing fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/plan/dsa"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

func main() {
	shared := flag.String("shared", corpus.SharedDir(), "path of the shared reference directory")
	onlyPatches := flag.Bool("patches-only", false, "print only the --patches auto table")
	onlyKernels := flag.Bool("kernels-only", false, "print only the table of heads per kernel library and code path")
	flag.Parse()
	if *shared == "" {
		fmt.Fprintln(os.Stderr, "bench: ../shared not found; set -shared or HELIAC_SHARED")
		os.Exit(1)
	}
	if *onlyKernels {
		if err := kernelHeads(*shared); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *onlyPatches {
		if err := patches(*shared); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := models(*shared); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := kernelHeads(*shared); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := patches(*shared); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := tflmArenas(*shared); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := instances(*shared); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Println()
	if err := synthetics(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func models(shared string) error {
	manifest, tflm, err := readCorpus(shared)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	tool := tflmrun.Path()
	lib, err := kernels.Lookup(kernels.TFLMReference)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "model\tTFLM's bound\theliac's bound\theliac\theliac/TFLM bound\trelaxations\tschedule\t--planner tflm\tTFLM ref\tTFLM/heliac\tTFLM head, heliac plan\tkernel scratch\theliac total\tTFLM head\tms\t")
	var sumHeliac, sumTFLM int64
	var logRatio float64
	ratios := 0
	for _, row := range manifest {
		file := row["file"]
		data, err := os.ReadFile(filepath.Join(shared, "corpus", file))
		if err != nil {
			return err
		}
		// heliac's default compile, as the CLI runs it (order, plan, C,
		// verification), with the model rewritten for TFLM.
		start := time.Now()
		out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: emit.ModelName(file), EmitTFLite: true,
			Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}})
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			fmt.Fprintf(w, "%s\terror: %v\t\t\t\t\t\t\t\n", file, err)
			continue
		}
		m, p := out.Model, out.Plan
		size, lb := p.ScratchTotals()
		// TFLM's bound: the peak of live bytes under TFLM's rules (every
		// operand of an operator live while it runs, the model's order),
		// views aliased as heliac always does.
		ltRules, err := liveness.Analyze(m, liveness.Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		pRules, err := plan.Build(context.Background(), m, ltRules, plan.Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		_, tflmBound := pRules.ScratchTotals()
		vsBound := "-"
		if tflmBound > 0 {
			vsBound = fmt.Sprintf("%.3f", float64(size)/float64(tflmBound))
			logRatio += math.Log(float64(size) / float64(tflmBound))
			ratios++
		}
		inPlace := 0
		for _, a := range p.Allocs {
			if a.InPlace != nil {
				inPlace++
			}
		}
		var relaxations []string
		if inPlace > 0 {
			relaxations = append(relaxations, fmt.Sprintf("in-place %d", inPlace))
		}
		if moved := p.Schedule.Moved(); moved > 0 {
			relaxations = append(relaxations, fmt.Sprintf("order %d", moved))
		}
		relaxed := "-"
		if len(relaxations) > 0 {
			relaxed = strings.Join(relaxations, ", ")
		}
		schedule := p.Schedule.Ordering.Strategy
		if out.Order != nil {
			schedule += map[bool]string{true: ", proven", false: ", not proven"}[out.Order.Proven]
		}
		// TFLM's planner on TFLM's own lifetimes (no aliasing).
		ltNoAlias, err := liveness.Analyze(m, liveness.Options{NoAlias: true})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		pt, err := plan.Build(context.Background(), m, ltNoAlias, plan.Options{Planner: plan.PlannerTFLM})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		tflmPlanner, _ := pt.ScratchTotals()
		tf, vs, withPlan := "-", "-", "-"
		if r, ok := tflm[file]; ok && r["status"] == "ok" && tool != "" {
			withPlan = tflmHead(tool, file, out.TFLite.Data, r)
		}
		if r, ok := tflm[file]; ok && r["status"] == "ok" {
			t, _ := strconv.ParseInt(r["tflm_tensors_only_max_bytes"], 10, 64)
			tf = fmt.Sprint(t)
			if size > 0 {
				vs = fmt.Sprintf("%.3f", float64(t)/float64(size))
			}
			sumHeliac += size
			sumTFLM += t
		}
		// With the kernels' scratch planned too, as the CLI does (on this
		// machine's pointer size, as TFLM's head was measured).
		whole, err := driver.Compile(context.Background(), data, driver.Config{ModelName: emit.ModelName(file),
			Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}, Kernels: lib, Target: kernels.Target{PointerSize: 8}})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		total, _ := whole.Plan.ScratchTotals()
		var scratchSum int64
		for _, a := range whole.Plan.Allocs {
			if a.Kind == plan.KernelScratchAlloc {
				scratchSum += a.Size
			}
		}
		scratchBytes := "-"
		if scratchSum > 0 {
			scratchBytes = fmt.Sprint(scratchSum)
		}
		tflmHead := "-"
		if r, ok := tflm[file]; ok && r["status"] == "ok" {
			tflmHead = r["tflm_planner_max_bytes"]
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%.2f\t\n", file, tflmBound, lb, size, vsBound, relaxed,
			schedule, tflmPlanner, tf, vs, withPlan, scratchBytes, total, tflmHead, ms)
	}
	w.Flush()
	if ratios > 0 {
		fmt.Printf("\ngeometric mean of heliac's arena over TFLM's bound: %.4f over %d models\n", math.Exp(logRatio/float64(ratios)), ratios)
	}
	fmt.Printf("TFLM's bound: the peak of live bytes under TFLM's rules (every operand live while its operator runs,\n" +
		"operators in the model's order); heliac's bound: the same with the relaxations heliac applies (in-place:\n" +
		"outputs written over dying inputs under tflm-reference's contracts; order: operators run elsewhere than the\n" +
		"model lists them, by the memory schedule, proven optimal or not); ms: heliac's default compile (load, order,\n" +
		"plan, C, verification, the model rewritten for TFLM); kernel scratch: the bytes the kernels ask for\n" +
		"(tflm-reference); heliac total: the scratch arena with them planned too; TFLM head: TFLM's own plan's head\n" +
		"(tensors and kernel scratch)\n")
	fmt.Printf("\nmodels TFLM runs: heliac %d bytes of scratch arena in total, TFLM %d\n", sumHeliac, sumTFLM)
	if tool == "" {
		fmt.Printf("(tflm_run not found: no \"TFLM head, heliac plan\" figures)\n")
	} else {
		fmt.Printf("TFLM head, heliac plan: TFLM's arena head (planner_max_bytes, kernel scratch included) running heliac's\n" +
			"plan (--emit-tflite), as tflm_run measures it; '*' where outputs differ from TFLM's own plan\n")
	}
	fmt.Println()
	return nil
}

// tflmHead runs the model with heliac's plan written in (--emit-tflite) on
// TFLM and returns its arena head, marked '*' when the outputs differ from
// TFLM's own plan's.
func tflmHead(tool, file string, rewritten []byte, ref map[string]string) string {
	f, err := os.CreateTemp("", "heliac-bench-*.tflite")
	if err != nil {
		return "error"
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(rewritten)
	if cerr := f.Close(); werr != nil || cerr != nil {
		return "error"
	}
	used, _ := strconv.ParseInt(ref["tflm_arena_used_bytes"], 10, 64)
	opts := tflmrun.Options{Seed: 1, ArenaBytes: used*2 + 64<<10}
	mine, err := tflmrun.Run(context.Background(), tool, f.Name(), opts)
	if err != nil || !mine.OK() {
		return "error"
	}
	orig, err := tflmrun.Run(context.Background(), tool, filepath.Join(corpus.SharedDir(), "corpus", file), opts)
	mark := ""
	if err != nil || !orig.OK() || !slices.Equal(orig.Outputs(), mine.Outputs()) {
		mark = "*"
	}
	return fmt.Sprint(mine.Int("planner_max_bytes")) + mark
}

// miniMallocBest are the best heights MiniMalloc reached on bench/dsa, as
// shared/README.md reports them (D: lower capacities timed out at 60 s).
var miniMallocBest = map[string]int64{
	"A": 1048576, "B": 1048576, "C": 1039360, "D": 1038336,
	"E": 1048576, "F": 1048576, "H": 1048576, "K": 1048576,
}

// dsaBudget is the time limit Best gets per instance, as heliac pack's
// default.
const dsaBudget = plan.DefaultTimeLimit

func instances(shared string) error {
	files, err := filepath.Glob(filepath.Join(shared, "bench", "dsa", "*.csv"))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "instance\tbuffers\tlower bound\tTFLM greedy\tbest\tbest/LB\tMiniMalloc best\tbest ms\t")
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		p, _, err := dsa.ReadCSV(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		g, err := dsa.Greedy(context.Background(), p)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), dsaBudget)
		start := time.Now()
		b, err := dsa.Best(ctx, p)
		ms := float64(time.Since(start).Microseconds()) / 1000
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		lb := dsa.LowerBound(p)
		name := strings.SplitN(filepath.Base(f), ".", 2)[0]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%.3f\t%d\t%.0f\t\n", name, len(p.Buffers), lb, g.Height, b.Height,
			float64(b.Height)/float64(lb), miniMallocBest[name], ms)
	}
	return w.Flush()
}

// tflmArenas prints TFLM's whole tensor_arena (package tflmarena: head,
// persistent tail and allocation's temporaries) for every corpus model
// TFLM runs, on the original model with TFLM's own planner and on the
// model heliac emits (--emit-tflite, the CLI's defaults), on cortex-m and
// host64, with the geometric mean of emitted over original.
func tflmArenas(shared string) error {
	ref, err := corpus.ReadTSV(filepath.Join(shared, "bench", "tflm-reference.tsv"))
	if err != nil {
		return err
	}
	lib, err := kernels.Lookup(kernels.TFLMReference)
	if err != nil {
		return err
	}
	fmt.Println("\nTFLM's whole tensor_arena (" + tflmarena.Commit + ", reference kernels): the original model with TFLM's own planner vs the model heliac emits")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "model\tcortex-m own\tcortex-m heliac\theliac/own\thost64 own\thost64 heliac\theliac/own\thead own\thead heliac\t")
	var logs [2]float64
	n := 0
	for _, r := range ref {
		if r["status"] != "ok" {
			continue
		}
		file := r["model"]
		data, err := os.ReadFile(filepath.Join(shared, "corpus", file))
		if err != nil {
			return err
		}
		out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: emit.ModelName(file), EmitTFLite: true,
			Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}, Kernels: lib, TFLMTarget: tflmarena.Host64.Name})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if out.TFLMArena == nil {
			fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t(%v)\n", file, out.TFLMArenaErr)
			continue
		}
		host := out.TFLMArena
		em, err := tflite.Load(out.TFLite.Data)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		cmE, err := tflmarena.Compute(em, host.Emitted.Head, tflmarena.CortexM, tflmarena.Kernels{})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		cmO, err := tflmarena.Compute(out.Model, host.Original.Head, tflmarena.CortexM, tflmarena.Kernels{})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		rc := float64(cmE.Bytes) / float64(cmO.Bytes)
		rh := float64(host.Emitted.Bytes) / float64(host.Original.Bytes)
		logs[0] += math.Log(rc)
		logs[1] += math.Log(rh)
		n++
		fmt.Fprintf(w, "%s\t%d\t%d\t%.3f\t%d\t%d\t%.3f\t%d\t%d\t\n", file, cmO.Bytes, cmE.Bytes, rc,
			host.Original.Bytes, host.Emitted.Bytes, rh, host.Original.Head, host.Emitted.Head)
	}
	w.Flush()
	if n > 0 {
		fmt.Printf("geometric mean of heliac's whole arena over TFLM's own, %d models: cortex-m %.4f, host64 %.4f\n",
			n, math.Exp(logs[0]/float64(n)), math.Exp(logs[1]/float64(n)))
	}
	return nil
}

// tflmBound is TFLM's bound for m: the peak of live bytes under TFLM's
// rules (every operand of an operator live while it runs, the model's
// order), views aliased as heliac always does, with the kernels' scratch
// of lib on target t.
func tflmBound(m *graph.Model, lib *kernels.Library, t kernels.Target) (int64, error) {
	lt, err := liveness.Analyze(m, liveness.Options{})
	if err != nil {
		return 0, err
	}
	var reqs []plan.ScratchRequest
	for si := range m.Subgraphs {
		for oi := range m.Subgraphs[si].Ops {
			ref := graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}
			sizes, _ := lib.Scratch(m, ref.Subgraph, &m.Subgraphs[si].Ops[oi], t)
			for _, n := range sizes {
				if n > 0 {
					reqs = append(reqs, plan.ScratchRequest{Op: ref, Size: n})
				}
			}
		}
	}
	p, err := plan.Build(context.Background(), m, lt, plan.Options{KernelScratch: reqs})
	if err != nil {
		return 0, err
	}
	_, b := p.ScratchTotals()
	return b, nil
}

// patches prints what --patches auto does to every corpus model: heliac's
// arena over TFLM's bound of the model as given, without and with
// stripes, the stripes' k and extra MACs, and TFLM's whole arena
// (arena_used_bytes, tflm_run) for the original model and for the model
// --patches auto --emit-tflite writes.
func patches(shared string) error {
	manifest, tflm, err := readCorpus(shared)
	if err != nil {
		return err
	}
	lib, err := kernels.Lookup(kernels.TFLMReference)
	if err != nil {
		return err
	}
	tool := tflmrun.Path()
	host := kernels.Target{PointerSize: 8}
	fmt.Println("--patches auto: heliac's arena over TFLM's bound of the model as given, kernel scratch counted on both sides, without and with stripes; TFLM's whole arena (tflm_run arena_used_bytes, host) for the original and the --patches auto --emit-tflite model; k ends in c where halo rows are cached")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "model	TFLM's bound	heliac off	off/bound	heliac auto	auto/bound	k	extra MACs	TFLM arena original	TFLM arena auto	auto/original	ms	")
	var logs [2]float64
	n, striped := 0, 0
	var arenaLogs float64
	arenas := 0
	for _, row := range manifest {
		file := row["file"]
		data, err := os.ReadFile(filepath.Join(shared, "corpus", file))
		if err != nil {
			return err
		}
		start := time.Now()
		// As the CLI compiles with --patches auto --emit-tflite
		// --tflm-target host64 (tflm_run's target): exact-overlap copies
		// on, the kernels' scratch planned, on 8-byte pointers.
		out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: emit.ModelName(file), EmitTFLite: true,
			Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}, Kernels: lib, Target: host, Patches: driver.PatchesAuto, TFLMTarget: tflmarena.Host64.Name})
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			fmt.Fprintf(w, "%s\terror: %v\t\t\t\t\t\t\t\t\t\t\n", file, err)
			continue
		}
		bound, err := tflmBound(out.Original, lib, host)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		after, _ := out.Plan.ScratchTotals()
		before := after
		k, extra := "-", "-"
		if p := out.Patches; p != nil && len(p.Regions) > 0 {
			before = p.HeadBefore
			var ks []string
			for _, r := range p.Regions {
				k := fmt.Sprint(r.K())
				if r.Cached() {
					k += "c" // halo rows cached
				}
				ks = append(ks, k)
			}
			k, extra = strings.Join(ks, ","), fmt.Sprintf("%.2f%%", p.ExtraPercent())
			striped++
		}
		offR, onR := "-", "-"
		if bound > 0 && before > 0 && after > 0 {
			offR, onR = fmt.Sprintf("%.3f", float64(before)/float64(bound)), fmt.Sprintf("%.3f", float64(after)/float64(bound))
			logs[0] += math.Log(float64(before) / float64(bound))
			logs[1] += math.Log(float64(after) / float64(bound))
			n++
		}
		origArena, autoArena, arenaR := "-", "-", "-"
		if r, ok := tflm[file]; ok && r["status"] == "ok" && tool != "" {
			o, a, same := arenaUsed(tool, file, out.TFLite.Data, r)
			if o > 0 && a > 0 {
				origArena, autoArena = fmt.Sprint(o), fmt.Sprint(a)
				if !same {
					autoArena += "*"
				}
				arenaR = fmt.Sprintf("%.3f", float64(a)/float64(o))
				arenaLogs += math.Log(float64(a) / float64(o))
				arenas++
			}
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t\n", file, bound, before, offR, after, onR, k, extra,
			origArena, autoArena, arenaR, ms)
	}
	w.Flush()
	if n > 0 {
		fmt.Printf("geometric mean of heliac's arena over TFLM's bound, %d models: %.4f without stripes, %.4f with --patches auto (%d model(s) striped)\n",
			n, math.Exp(logs[0]/float64(n)), math.Exp(logs[1]/float64(n)), striped)
	}
	if arenas > 0 {
		fmt.Printf("geometric mean of TFLM's whole arena, --patches auto model over the original, %d models: %.4f ('*' where outputs differ)\n",
			arenas, math.Exp(arenaLogs/float64(arenas)))
	}
	fmt.Println()
	return nil
}

// arenaUsed runs the original model and the rewritten one on TFLM (seed
// 1) and returns both arena_used_bytes and whether their outputs agree.
func arenaUsed(tool, file string, rewritten []byte, ref map[string]string) (orig, mine int64, same bool) {
	f, err := os.CreateTemp("", "heliac-bench-*.tflite")
	if err != nil {
		return 0, 0, false
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(rewritten)
	if cerr := f.Close(); werr != nil || cerr != nil {
		return 0, 0, false
	}
	used, _ := strconv.ParseInt(ref["tflm_arena_used_bytes"], 10, 64)
	opts := tflmrun.Options{Seed: 1, ArenaBytes: used*2 + 64<<10}
	m, err := tflmrun.Run(context.Background(), tool, f.Name(), opts)
	if err != nil || !m.OK() {
		return 0, 0, false
	}
	o, err := tflmrun.Run(context.Background(), tool, filepath.Join(corpus.SharedDir(), "corpus", file), opts)
	if err != nil || !o.OK() {
		return 0, 0, false
	}
	return o.Int("arena_used_bytes"), m.Int("arena_used_bytes"), slices.Equal(o.Outputs(), m.Outputs())
}

// readCorpus reads the corpus's MANIFEST and TFLM's reference figures
// (bench/tflm-reference.tsv) by model file.
func readCorpus(shared string) (manifest []map[string]string, tflm map[string]map[string]string, err error) {
	if manifest, err = corpus.ReadTSV(filepath.Join(shared, "corpus", "MANIFEST.tsv")); err != nil {
		return nil, nil, err
	}
	ref, err := corpus.ReadTSV(filepath.Join(shared, "bench", "tflm-reference.tsv"))
	if err != nil {
		return nil, nil, err
	}
	tflm = map[string]map[string]string{}
	for _, r := range ref {
		tflm[r["model"]] = r
	}
	return manifest, tflm, nil
}
