package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/kernels"
)

// kernelBuild is a kernel library on a code path, as the CLI names it.
type kernelBuild struct {
	column      string // the table's column
	member      string // kernels.Library.String of the build
	kernels     string // --kernels
	cpu         string // --cpu
	tflmTarget  string // --tflm-target
	description string
}

// kernelBuilds are the builds the table compares: TFLM's reference
// kernels, and CMSIS-NN's portable C (on a host, as tflm_run_cmsis runs
// it), DSP (Cortex-M4, tflm_run_m4_cmsis) and MVE (Cortex-M55,
// tflm_run_m55_cmsis) code.
var kernelBuilds = []kernelBuild{
	{"reference", kernels.TFLMReference, kernels.TFLMReference, "", "", "--kernels tflm-reference"},
	{"portable", "cmsis-nn (portable)", kernels.CMSISNN, kernels.GenericCPU, "host64", "--kernels cmsis-nn --cpu generic --tflm-target host64"},
	{"dsp", "cmsis-nn (dsp)", kernels.CMSISNN, "cortex-m4", "", "--kernels cmsis-nn --cpu cortex-m4"},
	{"mve", "cmsis-nn (mve)", kernels.CMSISNN, "cortex-m55", "", "--kernels cmsis-nn --cpu cortex-m55"},
}

// kernelHeads prints, for every corpus model TFLM runs, heliac's head over
// TFLM's own head for each kernel build: planned for that build alone
// (--kernels, --cpu), and with the default plan (every build at once, as
// TFLM running it with that build's scratch places it), with their
// geometric means. TFLM's own heads are heliac's replay of TFLM's planner
// with that build's scratch, which the runners measure the same
// (driver's TestDefaultPlansOnEveryRunner, TestTFLMArenaExact).
func kernelHeads(shared string) error {
	manifest, tflm, err := readCorpus(shared)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "model\t"
	for _, b := range kernelBuilds {
		head += b.column + ": TFLM\theliac\t"
	}
	for _, b := range kernelBuilds {
		head += "default/" + b.column + "\t"
	}
	fmt.Fprintln(w, head)
	logs := make([]float64, 2*len(kernelBuilds))
	n := 0
	for _, row := range manifest {
		file := row["file"]
		if r, ok := tflm[file]; !ok || r["status"] != "ok" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(shared, "corpus", file))
		if err != nil {
			return err
		}
		line := file + "\t"
		ratios := make([]float64, 0, 2*len(kernelBuilds))
		for _, b := range kernelBuilds {
			out, err := compileWith(data, file, heliac.Options{Kernels: b.kernels, CPU: b.cpu, TFLMTarget: b.tflmTarget})
			if err != nil || out.TFLM == nil {
				return fmt.Errorf("%s, %s: no comparison with TFLM: %v", file, b.description, err)
			}
			line += fmt.Sprintf("%d\t%d\t", out.TFLM.OwnHead, out.TFLM.Head)
			ratios = append(ratios, float64(out.TFLM.Head)/float64(out.TFLM.OwnHead))
		}
		def, err := compileWith(data, file, heliac.Options{})
		if err != nil || def.TFLM == nil {
			return fmt.Errorf("%s, the default plan: no comparison with TFLM: %v", file, err)
		}
		for _, b := range kernelBuilds {
			r := math.NaN()
			for _, m := range def.TFLM.Members {
				if m.Kernels == b.member {
					r = float64(m.Head) / float64(m.OwnHead)
				}
			}
			line += fmt.Sprintf("%.3f\t", r)
			ratios = append(ratios, r)
		}
		fmt.Fprintln(w, line)
		for i, r := range ratios {
			logs[i] += math.Log(r)
		}
		n++
	}
	w.Flush()
	fmt.Printf("\nheads per kernel build, %d corpus models TFLM runs: heliac's head over TFLM's own with the same kernels, geometric mean\n", n)
	for i, b := range kernelBuilds {
		fmt.Printf("  %-10s planned for it (%s): %.4f; the default plan: %.4f\n", b.column, b.description,
			math.Exp(logs[i]/float64(n)), math.Exp(logs[len(kernelBuilds)+i]/float64(n)))
	}
	fmt.Printf("TFLM: TFLM's own planner's head with the build's kernels (tensors and kernel scratch); heliac: heliac's plan\n" +
		"for that build alone; default/<build>: TFLM's head running the default plan (made for every build at once)\n" +
		"with that build's kernels, over TFLM's own\n\n")
	return nil
}

// compileWith compiles a model as the CLI does with opts.
func compileWith(data []byte, file string, opts heliac.Options) (*driver.Output, error) {
	opts.Name, opts.Version = emit.ModelName(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))), "bench"
	cfg, err := opts.Config()
	if err != nil {
		return nil, err
	}
	return driver.Compile(context.Background(), data, cfg)
}
