package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// dwRunner is a CMSIS-NN build of tflm_run this machine has
// (cmsisRunners) with its tool.
type dwRunner struct {
	cmsisRunner
	tool string
}

// dwRunners returns the CMSIS-NN builds of tflm_run this machine has (the
// emulated ones need qemu-system-arm), or skips the test when it has none.
func dwRunners(t *testing.T) []dwRunner {
	t.Helper()
	var out []dwRunner
	for _, r := range cmsisRunners {
		if p := r.tool(); p != "" {
			out = append(out, dwRunner{r, p})
		} else {
			t.Logf("%s (or qemu-system-arm) not found: the %s path is not run", r.name, r.isa.PathName())
		}
	}
	if len(out) == 0 {
		t.Skip("no CMSIS-NN build of tflm_run in ../shared/tools")
	}
	return out
}

// dwPair is a depthwise convolution of a planned model: its operator, the
// allocations of its input and output, and its window on a code path.
type dwPair struct {
	op                 int
	in, out            int // indexes of plan.Allocs
	inTensor, outTensr graph.TensorID
	name               string
	inSize             int64
	pl                 kernels.Placement
}

// dwPairs finds the depthwise convolutions of out's model (planned in
// the model's order) whose input dies there (no later operator reads it,
// and it is no model output) and lies in the output's arena, each with
// the window lib gives it (one; the test fails otherwise).
func dwPairs(t *testing.T, out *driver.Output, lib *kernels.Library) []dwPair {
	t.Helper()
	m := out.Model
	readLater := func(oi int, id graph.TensorID) bool {
		if slices.Contains(m.Subgraphs[0].Outputs, id) {
			return true
		}
		for _, op := range m.Subgraphs[0].Ops[oi+1:] {
			if slices.Contains(op.Inputs, id) {
				return true
			}
		}
		return false
	}
	index := func(id graph.TensorID) int {
		return slices.IndexFunc(out.Plan.Allocs, func(a plan.Alloc) bool { return a.Key == plan.TensorKey(graph.TensorRef{Tensor: id}) })
	}
	var pairs []dwPair
	for oi := range m.Subgraphs[0].Ops {
		op := &m.Subgraphs[0].Ops[oi]
		if op.Code != graph.DepthwiseConv2D {
			continue
		}
		in, o := index(op.Inputs[0]), index(op.Outputs[0])
		require.True(t, in >= 0 && o >= 0, "op %d: input and output planned", oi)
		if out.Plan.Allocs[in].Arena != out.Plan.Allocs[o].Arena || readLater(oi, op.Inputs[0]) {
			continue
		}
		var pl []kernels.Placement
		for _, p := range lib.InPlace(m, 0, op) {
			if p.Op == graph.DepthwiseConv2D {
				pl = append(pl, p)
			}
		}
		require.Len(t, pl, 1, "op %d: one window on %v", oi, lib)
		pairs = append(pairs, dwPair{op: oi, in: in, out: o, inTensor: op.Inputs[0], outTensr: op.Outputs[0],
			name: m.Tensor(0, op.Outputs[0]).Name, inSize: out.Plan.Allocs[in].Size, pl: pl[0]})
	}
	return pairs
}

// placed returns offsets (allocation index to offset) that move each pair
// to bytes of its own above everything p places: its output at a 16-byte
// boundary and its input d[i] bytes after the output's start; and the
// arena's new top.
func placed(p *plan.Plan, pairs []dwPair, d []int64) (map[int]int64, int64) {
	var top int64
	for _, a := range p.Allocs {
		top = max(top, a.Offset+a.Size)
	}
	offsets := map[int]int64{}
	for i, pr := range pairs {
		in, out := p.Allocs[pr.in], p.Allocs[pr.out]
		base := (top+15)/16*16 + 16 + max(0, -d[i])
		offsets[pr.out], offsets[pr.in] = base, base+d[i]
		top = max(base+out.Size, base+d[i]+in.Size)
	}
	return offsets, top
}

// ownTraceDiffers reports whether an operator's output tensor (subgraph 0)
// has another digest in got than in want, in any invocation.
func ownTraceDiffers(want, got *tflmrun.Result, tensor graph.TensorID) bool {
	for k, v := range want.Values {
		parts := strings.Split(k, ".")
		if len(parts) == 5 && parts[0] == "trace" && parts[2] == "0" && parts[3] == fmt.Sprint(tensor) && got.Values[k] != v {
			return true
		}
	}
	return false
}

// dwCorpus are the corpus models with INT8 depthwise convolutions that the
// emulated runners run in well under a second: every geometry of
// person_detect and vww_96 (3x3, stride 2, 128 and 256 channels: MVE's
// channel blocks), micro_speech's one input channel (MVE: a convolution),
// kws's 25x5x64 and okay_nabu's 1-wide VALID filters on a streaming model.
var dwCorpus = []string{"tflite-micro/person_detect.tflite", "mlperf-tiny/vww_96_int8.tflite",
	"tflite-micro/micro_speech_quantized.tflite", "mlperf-tiny/kws_ref_model.tflite", "esphome-mww/okay_nabu_v2.tflite"}

// TestCMSISNNDepthwiseContracts proves the DEPTHWISE_CONV_2D contracts of
// cmsis-nn on each code path on TFLM built with CMSIS-NN for it (host C,
// Cortex-M4 DSP, Cortex-M55 MVE): on hand-built models that reach every
// function (dwBranches, dwInt4Branches) and on the corpus models of
// dwCorpus, each depthwise convolution's input placed exactly at its
// window's Lo after its output (every operator of a model at once, each
// pair in bytes of its own) gives the original model's outputs and every
// operator's output digest (--trace), bit for bit; and moved a little
// earlier (1, 2, 4, ... bytes before Lo, until it shows) the operator
// computes something else: the windows are not loose. A one-point window
// (MVE's channel blocks) is tried a byte before its point.
func TestCMSISNNDepthwiseContracts(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM with CMSIS-NN on the host and under QEMU; skipped with -short")
	}
	runners := dwRunners(t)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	tflmRef, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	type model struct {
		name     string
		data     []byte
		oneByOne bool // bites one operator at a time (its inputs are other operators' outputs)
	}
	models := []model{{"branches", dwModel(t, dwBranches), false}, {"1xn", dwModel(t, dwOneByN), false},
		{"int4", dwModel(t, dwInt4Branches), false}}
	if shared := corpus.SharedDir(); shared != "" {
		for _, f := range dwCorpus {
			data, err := os.ReadFile(filepath.Join(shared, "corpus", f))
			require.NoError(t, err)
			models = append(models, model{f, data, true})
		}
	}
	dir := t.TempDir()
	var report []string
	for _, md := range models {
		cfg := referenceConfig(t)
		cfg.Liveness.Kernels = nil          // every tensor in bytes of its own; the pairs are placed by hand
		cfg.Schedule = driver.ScheduleModel // the offline plan goes into the model as it is
		cfg.ModelName, cfg.Version = "dw", "test"
		plain, err := driver.Compile(context.Background(), md.data, cfg)
		require.NoError(t, err, md.name)
		base := strings.NewReplacer("/", "_", ".tflite", "").Replace(md.name)
		orig := filepath.Join(dir, base+".tflite")
		require.NoError(t, os.WriteFile(orig, md.data, 0o644))
		for _, r := range runners {
			t.Run(base+"/"+r.name, func(t *testing.T) {
				pairs := dwPairs(t, plain, cmsis.On(r.isa))
				require.NotEmpty(t, pairs)
				var top int64
				for _, a := range plain.Plan.Allocs {
					top = max(top, a.Offset+a.Size)
				}
				arena := top
				for _, p := range pairs {
					arena += plain.Plan.Allocs[p.in].Size + plain.Plan.Allocs[p.out].Size + 48
				}
				arena += 256 << 10 // CMSIS-NN's scratch, TFLM's persistent tail
				run := func(path string, invokes int) *tflmrun.Result {
					res, err := tflmrun.Run(context.Background(), r.tool, path,
						tflmrun.Options{Seed: 1, Invokes: invokes, ArenaBytes: arena, Trace: true})
					require.NoError(t, err)
					return res
				}
				want := run(orig, 2)
				if !want.OK() {
					report = append(report, fmt.Sprintf("%s %s: TFLM does not run the model: %s", md.name, r.isa.PathName(), want.Error()))
					t.Skipf("TFLM does not run %s here: %s", md.name, want.Error())
				}
				// moved writes the plan with the given pairs' inputs d
				// bytes after their outputs and runs it.
				moved := func(tag string, which []dwPair, d []int64, invokes int) *tflmrun.Result {
					offsets, _ := placed(plain.Plan, which, d)
					path := filepath.Join(dir, fmt.Sprintf("%s.%s.%s.tflite", base, r.name, tag))
					writeMovedAll(t, md.data, plain, offsets, path)
					return run(path, invokes)
				}
				los := make([]int64, len(pairs))
				for i, p := range pairs {
					los[i] = p.pl.Lo
				}
				got := moved("lo", pairs, los, 2)
				require.True(t, got.OK(), "%s at Lo: %s", md.name, got.Error())
				assert.Equal(t, want.Outputs(), got.Outputs(), "outputs with every input at its window's Lo")
				assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "every operator's output with every input at its window's Lo")

				// Bites: a little before Lo, doubling until the operator's
				// own output differs or the input no longer meets it.
				bitAt := make([]int64, len(pairs))
				groups := [][]int{}
				if md.oneByOne {
					seen := map[string]bool{} // one operator per geometry and window
					for i, p := range pairs {
						key := fmt.Sprint(plain.Model.Tensor(0, p.inTensor).Shape, plain.Model.Tensor(0, p.outTensr).Shape,
							*plain.Model.Subgraphs[0].Ops[p.op].Window, p.pl.Lo, p.pl.Hi)
						if !seen[key] {
							seen[key] = true
							groups = append(groups, []int{i})
						}
					}
				} else {
					all := make([]int, len(pairs))
					for i := range all {
						all[i] = i
					}
					groups = append(groups, all)
				}
				for _, g := range groups {
					for k := int64(1); ; k *= 2 {
						var which []dwPair
						var d []int64
						var idx []int
						for _, i := range g {
							if bitAt[i] == 0 && pairs[i].pl.Lo-k > -pairs[i].inSize {
								which, d, idx = append(which, pairs[i]), append(d, pairs[i].pl.Lo-k), append(idx, i)
							}
						}
						if len(which) == 0 {
							break
						}
						res := moved(fmt.Sprintf("bite%d-%d", g[0], k), which, d, 1)
						for j, i := range idx {
							if !res.OK() || ownTraceDiffers(want, res, which[j].outTensr) {
								bitAt[i] = k
							}
						}
					}
				}
				// A one-point window (MVE's channel blocks) is no interval:
				// a byte after the point, a block's writes land on channels
				// another block has still to read.
				above := map[int]bool{}
				for _, g := range groups {
					var which []dwPair
					var d []int64
					var idx []int
					for _, i := range g {
						if p := pairs[i]; p.pl.Lo == p.pl.Hi {
							which, d, idx = append(which, p), append(d, p.pl.Lo+1), append(idx, i)
						}
					}
					if len(which) == 0 {
						continue
					}
					res := moved(fmt.Sprintf("above%d", g[0]), which, d, 1)
					for j, i := range idx {
						above[i] = !res.OK() || ownTraceDiffers(want, res, which[j].outTensr)
						if !md.oneByOne {
							assert.True(t, above[i], "%s: the input a byte after its window's one point %d must change its output", which[j].name, which[j].pl.Lo)
						}
					}
				}
				refLo := map[int]int64{} // the reference kernels' Lo, for the report
				for _, p := range dwPairs(t, plain, tflmRef) {
					refLo[p.op] = p.pl.Lo
				}
				for i, p := range pairs {
					line := fmt.Sprintf("%s %s %s: window [%d, %d] (reference Lo %d)", md.name, r.isa.PathName(), p.name,
						p.pl.Lo, p.pl.Hi, refLo[p.op])
					if v, ok := above[i]; ok {
						line += fmt.Sprintf(" (a byte after the point changes its output: %t)", v)
					}
					switch {
					case bitAt[i] > 0:
						line += fmt.Sprintf(", %d byte(s) before Lo changes its output", bitAt[i])
					case p.pl.Lo <= -p.inSize+1:
						line += " (nothing before Lo meets the input)"
					case md.oneByOne && !slices.ContainsFunc(groups, func(g []int) bool { return g[0] == i }):
						line += " (same geometry as another: not moved)"
					default:
						line += ", no bite"
						assert.Fail(t, "no bite", "%s: the input before Lo %d must change what the operator computes", p.name, p.pl.Lo)
					}
					report = append(report, line)
				}
			})
		}
	}
	t.Logf("%d window(s):\n%s", len(report), strings.Join(report, "\n"))
}

// TestCMSISNNDepthwisePlans runs heliac's own plans, with the windows of
// the depthwise contracts in them, on TFLM built with CMSIS-NN: each model
// of TestCMSISNNDepthwiseContracts (the hand-built ones writing over model
// inputs, the default, as their depthwise inputs are model inputs; the
// corpus ones with --keep-inputs, as they were measured) planned
// for the default library (any: every library on every path) runs on
// every runner, and planned for cmsis-nn on a runner's CPU runs on that
// runner, each with the original model's outputs and every operator's
// output digest; the depthwise outputs heliac wrote over their inputs are
// counted.
func TestCMSISNNDepthwisePlans(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("runs TFLM with CMSIS-NN on the host and under QEMU; skipped with -short")
	}
	runners := dwRunners(t)
	type model struct {
		name      string
		data      []byte
		overwrite bool
	}
	models := []model{{"branches", dwModel(t, dwBranches), true}, {"1xn", dwModel(t, dwOneByN), true},
		{"int4", dwModel(t, dwInt4Branches), true}, {"chain", dwModel(t, dwChain), true}}
	for _, f := range dwCorpus {
		data, err := os.ReadFile(filepath.Join(corpus.SharedDir(), "corpus", f))
		require.NoError(t, err)
		models = append(models, model{f, data, false})
	}
	dir := t.TempDir()
	var report []string
	for _, md := range models {
		base := strings.NewReplacer("/", "_", ".tflite", "").Replace(md.name)
		orig := filepath.Join(dir, base+".tflite")
		require.NoError(t, os.WriteFile(orig, md.data, 0o644))
		// compile plans md for a library and CPU as the CLI does with
		// --emit-tflite, writes the model with the plan, and counts its
		// depthwise outputs written in place.
		compile := func(t *testing.T, lib, cpu string) (string, int64, int) {
			cfg, err := heliac.Options{Name: base, Kernels: lib, CPU: cpu, KeepInputs: !md.overwrite, EmitTFLite: true,
				Version: "test"}.Config()
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), md.data, cfg)
			require.NoError(t, err)
			path := filepath.Join(dir, fmt.Sprintf("%s.%s%s.tflite", base, lib, cpu))
			require.NoError(t, os.WriteFile(path, out.TFLite.Data, 0o644))
			inPlace := 0
			for _, a := range out.Plan.Allocs {
				if a.InPlace != nil && a.InPlace.Contract.Op == graph.DepthwiseConv2D {
					inPlace++
				}
			}
			var scratch int64 // the scratch arenas' bytes: the plan's head
			for _, a := range out.Plan.Arenas {
				if a.Role == liveness.Scratch {
					scratch += a.Size
				}
			}
			return path, scratch, inPlace
		}
		anyPath, anyHead, anyInPlace := "", int64(0), 0
		for _, r := range runners {
			t.Run(base+"/"+r.name, func(t *testing.T) {
				if anyPath == "" {
					anyPath, anyHead, anyInPlace = compile(t, kernels.Any, "")
				}
				own, ownHead, ownInPlace := compile(t, kernels.CMSISNN, r.cpu)
				run := func(path string) *tflmrun.Result {
					res, err := tflmrun.Run(context.Background(), r.tool, path,
						tflmrun.Options{Seed: 2, Invokes: 2, ArenaBytes: 2*max(anyHead, ownHead) + 256<<10, Trace: true})
					require.NoError(t, err)
					return res
				}
				want := run(orig)
				if !want.OK() {
					report = append(report, fmt.Sprintf("%s on %s: TFLM does not run the model: %s", md.name, r.name, want.Error()))
					t.Skipf("TFLM does not run %s here: %s", md.name, want.Error())
				}
				for _, p := range []struct {
					name    string
					path    string
					head    int64
					inPlace int
				}{{"any", anyPath, anyHead, anyInPlace}, {"cmsis-nn --cpu " + r.cpu, own, ownHead, ownInPlace}} {
					got := run(p.path)
					require.True(t, got.OK(), "%s planned for %s: %s", md.name, p.name, got.Error())
					assert.Equal(t, want.Outputs(), got.Outputs(), "%s planned for %s", md.name, p.name)
					assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "%s planned for %s: every operator's output", md.name, p.name)
					report = append(report, fmt.Sprintf("%s on %s, planned for %s: %d depthwise output(s) in place, head %d B",
						md.name, r.name, p.name, p.inPlace, p.head))
				}
			})
		}
	}
	t.Logf("\n%s", strings.Join(report, "\n"))
}
