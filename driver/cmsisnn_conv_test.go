package driver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
)

// tool returns the runner beside tflm_run, or "" when it (or, for the
// emulated ones, qemu-system-arm) is absent.
func (r cmsisRunner) tool() string {
	if tflmrun.Path() == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(tflmrun.Path()), r.name)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	if r.qemu && os.Getenv("QEMU") == "" {
		if _, err := exec.LookPath("qemu-system-arm"); err != nil {
			return ""
		}
	}
	return p
}

// library is CMSIS-NN on the runner's path.
func (r cmsisRunner) library(t *testing.T) *kernels.Library {
	t.Helper()
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	return lib.On(r.isa)
}

// convBranch is one convolution of the test model: its own model input,
// the CONV_2D, its own model output. fn is the CMSIS-NN function the
// portable and DSP paths run, mveFn MVE's; none the paths without a
// contract.
type convBranch struct {
	name        string
	act, filter graph.ElementType
	in          [4]int32
	outC        int32
	kH, kW      int32
	sH, sW, dil int32
	same        bool
	fn, mveFn   string
	none        []kernels.ISA
	input, out  graph.TensorID // set by convBranchModel
	outH, outW  int32
	conv        int // the operator
}

// convBranches exercise every function arm_convolve_wrapper_s8/_s4/_s16
// dispatches to, on shapes that are not multiples of 4 or 16, with
// padding, strides, dilation and two batches.
func convBranches() []convBranch {
	i8, i4, i16 := graph.Int8, graph.Int4, graph.Int16
	noDSP := []kernels.ISA{kernels.NoDSP, kernels.DSP}
	return []convBranch{
		{name: "1x1 stride 1, 2 channels", act: i8, filter: i8, in: [4]int32{1, 4, 6, 5}, outC: 2, kH: 1, kW: 1, sH: 1, sW: 1,
			fn: "arm_convolve_1x1_s8_fast", mveFn: "arm_convolve_1x1_s8_fast"},
		{name: "1x1 stride 1, 5 channels", act: i8, filter: i8, in: [4]int32{1, 3, 7, 6}, outC: 5, kH: 1, kW: 1, sH: 1, sW: 1,
			mveFn: "arm_convolve_1x1_s8_fast", none: noDSP},
		{name: "1x1 stride 1, batch 2", act: i8, filter: i8, in: [4]int32{2, 3, 4, 8}, outC: 7, kH: 1, kW: 1, sH: 1, sW: 1,
			mveFn: "arm_convolve_1x1_s8_fast", none: noDSP},
		{name: "1x1 stride 2", act: i8, filter: i8, in: [4]int32{1, 7, 9, 6}, outC: 7, kH: 1, kW: 1, sH: 2, sW: 2,
			fn: "arm_convolve_1x1_s8", mveFn: "arm_convolve_1x1_s8"},
		{name: "1x1 stride 2x1, batch 2", act: i8, filter: i8, in: [4]int32{2, 5, 6, 4}, outC: 3, kH: 1, kW: 1, sH: 2, sW: 1,
			fn: "arm_convolve_1x1_s8", mveFn: "arm_convolve_1x1_s8"},
		{name: "1x3 SAME", act: i8, filter: i8, in: [4]int32{1, 1, 16, 4}, outC: 3, kH: 1, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_1_x_n_s8"},
		{name: "1x4 VALID stride 2", act: i8, filter: i8, in: [4]int32{1, 1, 14, 6}, outC: 5, kH: 1, kW: 4, sH: 2, sW: 2,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_1_x_n_s8"},
		{name: "1x5 SAME, batch 2", act: i8, filter: i8, in: [4]int32{2, 1, 13, 4}, outC: 6, kH: 1, kW: 5, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_1_x_n_s8"},
		{name: "1x5 SAME over 3 columns, batch 2", act: i8, filter: i8, in: [4]int32{2, 1, 3, 4}, outC: 5, kH: 1, kW: 5, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_1_x_n_s8"},
		{name: "3x3 SAME", act: i8, filter: i8, in: [4]int32{1, 6, 7, 5}, outC: 6, kH: 3, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_s8"},
		{name: "3x3 VALID stride 2", act: i8, filter: i8, in: [4]int32{1, 9, 8, 3}, outC: 4, kH: 3, kW: 3, sH: 2, sW: 2,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_s8"},
		{name: "3x3 SAME dilation 2", act: i8, filter: i8, in: [4]int32{1, 7, 7, 4}, outC: 5, kH: 3, kW: 3, sH: 1, sW: 1, dil: 2, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_s8"},
		{name: "5x3 SAME stride 2x1, batch 2", act: i8, filter: i8, in: [4]int32{2, 5, 6, 3}, outC: 7, kH: 5, kW: 3, sH: 2, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_s8"},
		{name: "3x3 SAME, 17 channels into 19", act: i8, filter: i8, in: [4]int32{1, 4, 5, 17}, outC: 19, kH: 3, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s8", mveFn: "arm_convolve_s8"},
		{name: "INT16 3x3 SAME", act: i16, filter: i8, in: [4]int32{1, 5, 6, 3}, outC: 4, kH: 3, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s16", mveFn: "arm_convolve_s16"},
		{name: "INT16 1x1 stride 2", act: i16, filter: i8, in: [4]int32{1, 5, 4, 6}, outC: 5, kH: 1, kW: 1, sH: 2, sW: 2,
			fn: "arm_convolve_s16", mveFn: "arm_convolve_s16"},
		{name: "INT4 3x3 SAME, even columns", act: i8, filter: i4, in: [4]int32{1, 5, 5, 4}, outC: 6, kH: 3, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s4", mveFn: "arm_convolve_even_s4"},
		{name: "INT4 3x3 SAME, odd columns", act: i8, filter: i4, in: [4]int32{1, 5, 5, 3}, outC: 5, kH: 3, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s4", mveFn: "arm_convolve_s4"},
		{name: "INT4 1x1 stride 1, 4 channels", act: i8, filter: i4, in: [4]int32{1, 1, 7, 3}, outC: 4, kH: 1, kW: 1, sH: 1, sW: 1,
			fn: "arm_convolve_1x1_s4_fast", mveFn: "arm_convolve_1x1_s4_fast"},
		{name: "INT4 1x1 stride 2", act: i8, filter: i4, in: [4]int32{1, 7, 11, 5}, outC: 6, kH: 1, kW: 1, sH: 2, sW: 2,
			fn: "arm_convolve_1x1_s4", mveFn: "arm_convolve_1x1_s4"},
		{name: "INT4 1x3 SAME", act: i8, filter: i4, in: [4]int32{1, 1, 12, 4}, outC: 3, kH: 1, kW: 3, sH: 1, sW: 1, same: true,
			fn: "arm_convolve_s4", mveFn: "arm_convolve_1_x_n_s4"},
	}
}

// convBranchModel builds a model of the branches side by side, each with
// per-channel quantized filters (INT8, or INT4 packed two to a byte), its
// bias (INT32; INT64 with INT16 activations) and an output scale that
// keeps most outputs off the rails.
func convBranchModel(t *testing.T, bs []convBranch) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(41, 43))
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(tn graph.Tensor, data []byte) graph.TensorID {
		size, err := graph.ByteSize(tn.Type, tn.Shape)
		require.NoError(t, err)
		tn.Size = size
		if data != nil {
			m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
			tn.Buffer = graph.BufferIndex(len(m.Buffers) - 1)
		}
		sg.Tensors = append(sg.Tensors, tn)
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	for i := range bs {
		b := &bs[i]
		if b.dil == 0 {
			b.dil = 1
		}
		size := func(in, k, s int32) int32 {
			if b.same {
				return (in + s - 1) / s
			}
			return (in-((k-1)*b.dil+1))/s + 1
		}
		b.outH, b.outW = size(b.in[1], b.kH, b.sH), size(b.in[2], b.kW, b.sW)
		inScale, zero := float32(0.05), int64(-3)
		if b.act == graph.Int16 {
			inScale, zero = 0.001, 0
		}
		b.input = add(graph.Tensor{Name: fmt.Sprintf("in%d", i), Type: b.act, Shape: b.in[:],
			Quantization: &graph.Quantization{Scale: []float32{inScale}, ZeroPoint: []int64{zero}}}, nil)
		n := int(b.outC * b.kH * b.kW * b.in[3])
		weights := make([]byte, n)
		wq, bq := &graph.Quantization{}, &graph.Quantization{}
		bias := make([]byte, 0, 8*b.outC)
		for c := int32(0); c < b.outC; c++ {
			s := float32(1+r.IntN(8)) / 512
			if b.filter == graph.Int4 {
				s *= 16
			}
			wq.Scale, wq.ZeroPoint = append(wq.Scale, s), append(wq.ZeroPoint, 0)
			bq.Scale, bq.ZeroPoint = append(bq.Scale, inScale*s), append(bq.ZeroPoint, 0)
			if b.act == graph.Int16 {
				bias = binary.LittleEndian.AppendUint64(bias, uint64(int64(r.IntN(20001)-10000)))
			} else {
				bias = binary.LittleEndian.AppendUint32(bias, uint32(int32(r.IntN(2001)-1000)))
			}
		}
		if b.filter == graph.Int4 {
			weights = make([]byte, (n+1)/2)
			for j := range n {
				weights[j/2] |= byte(r.IntN(15)-7) & 0xf << (4 * (j % 2))
			}
		} else {
			for j := range weights {
				weights[j] = byte(int8(r.IntN(255) - 127))
			}
		}
		f := add(graph.Tensor{Name: fmt.Sprintf("w%d", i), Type: b.filter, Shape: []int32{b.outC, b.kH, b.kW, b.in[3]}, Quantization: wq}, weights)
		biasType := graph.Int32
		if b.act == graph.Int16 {
			biasType = graph.Int64
		}
		bt := add(graph.Tensor{Name: fmt.Sprintf("b%d", i), Type: biasType, Shape: []int32{b.outC}, Quantization: bq}, bias)
		// An output of about three standard deviations of the sums.
		taps := float64(b.kH * b.kW * b.in[3])
		outScale := float32(0.05 * math.Sqrt(taps))
		if b.act == graph.Int16 {
			outScale = float32(0.002 * math.Sqrt(taps))
		}
		if b.filter == graph.Int4 {
			outScale /= 2
		}
		b.out = add(graph.Tensor{Name: fmt.Sprintf("out%d", i), Type: b.act, Shape: []int32{b.in[0], b.outH, b.outW, b.outC},
			Quantization: &graph.Quantization{Scale: []float32{outScale}, ZeroPoint: []int64{zero / 3}}}, nil)
		w := &graph.Window{Padding: graph.PaddingValid, StrideH: b.sH, StrideW: b.sW, DilationH: b.dil, DilationW: b.dil}
		if b.same {
			w.Padding = graph.PaddingSame
		}
		b.conv = len(sg.Ops)
		sg.Ops = append(sg.Ops, graph.Op{Code: graph.Conv2D, Version: 1, Inputs: []graph.TensorID{b.input, f, bt},
			Outputs: []graph.TensorID{b.out}, Window: w})
		sg.Inputs, sg.Outputs = append(sg.Inputs, b.input), append(sg.Outputs, b.out)
	}
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// movedPair is a convolution whose input and output a run places by
// hand: the input d bytes after the output.
type movedPair struct {
	name    string
	conv    int
	in, out graph.TensorID
	pl      kernels.Placement
}

// placePairs writes to path the model data with plain's plan as its
// offline plan, except that each pair's output and input lie above every
// other tensor, the input d(pair) bytes after the output, each pair in a
// region of its own; it returns the arena the moved plan needs.
func placePairs(t *testing.T, data []byte, plain *driver.Output, pairs []movedPair, d func(movedPair) int64, path string) int64 {
	t.Helper()
	index := map[graph.TensorID]int{}
	var top int64
	for i, a := range plain.Plan.Allocs {
		if a.Kind == plan.TensorAlloc && a.Ref.Subgraph == 0 {
			index[a.Ref.Tensor] = i
		}
		top = max(top, a.Offset+a.Size)
	}
	offsets := map[int]int64{}
	at := (top+15)/16*16 + 16
	for _, p := range pairs {
		inIdx, okIn := index[p.in]
		outIdx, okOut := index[p.out]
		require.True(t, okIn && okOut, "%s: input and output are in the plan", p.name)
		in, out := plain.Plan.Allocs[inIdx], plain.Plan.Allocs[outIdx]
		dd := d(p)
		outAt := at + max(0, -dd)
		offsets[outIdx], offsets[inIdx] = outAt, outAt+dd
		at = (max(outAt+out.Size, outAt+dd+in.Size)+15)/16*16 + 16
	}
	writeMovedAll(t, data, plain, offsets, path)
	return at
}

// cmsisRun runs a runner on a model: two invocations of seed 1, every
// operator's outputs digested.
func cmsisRun(t *testing.T, tool, path string, arena int64) *tflmrun.Result {
	t.Helper()
	res, err := tflmrun.Run(context.Background(), tool, path, tflmrun.Options{Seed: 1, Invokes: 2, ArenaBytes: arena, Trace: true, Timeout: 120 * time.Second})
	require.NoError(t, err)
	return res
}

// traceOf returns the trace lines of tensor (subgraph 0), key=value,
// sorted.
func traceOf(res *tflmrun.Result, tensor graph.TensorID) []string {
	var out []string
	for k, v := range res.Values {
		parts := strings.Split(k, ".")
		if len(parts) == 5 && parts[0] == "trace" && parts[2] == "0" && parts[3] == strconv.Itoa(int(tensor)) {
			out = append(out, k+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// proveEdges is the proof on one runner: with every pair's input exactly
// Lo bytes after its output, the runner computes the original model's
// outputs and every operator's (want); with it 1, 2, 4 or 8 elements
// earlier, each pair's output differs. It returns the step, in elements,
// at which each pair bit (0: it did not; -1: Lo is the input's whole size
// before the output, so no earlier place overlaps it).
func proveEdges(t *testing.T, tool string, data []byte, plain *driver.Output, pairs []movedPair, want *tflmrun.Result, dir, tag string, arena int64) map[string]int64 {
	t.Helper()
	bit := map[string]int64{}
	if len(pairs) == 0 {
		return bit
	}
	path := filepath.Join(dir, tag+"-edge.tflite")
	top := placePairs(t, data, plain, pairs, func(p movedPair) int64 { return p.pl.Lo }, path)
	res := cmsisRun(t, tool, path, top+arena)
	require.True(t, res.OK(), "%s at Lo: %s", tag, res.Error())
	assert.Equal(t, want.Outputs(), res.Outputs(), "%s: outputs with every input at its window's Lo", tag)
	assert.Equal(t, want.Values["trace_digest"], res.Values["trace_digest"], "%s: every operator's outputs with every input at its window's Lo", tag)
	var left []movedPair
	for _, p := range pairs {
		if p.pl.Lo <= -plain.Model.Tensor(0, p.in).Size {
			bit[p.name] = -1
		} else {
			left = append(left, p)
		}
	}
	elem := func(p movedPair) int64 { return int64(max(plain.Model.Tensor(0, p.in).Type.Bits()/8, 1)) }
	for k := int64(1); k <= 8 && len(left) > 0; k *= 2 {
		path := filepath.Join(dir, fmt.Sprintf("%s-early%d.tflite", tag, k))
		top := placePairs(t, data, plain, left, func(p movedPair) int64 { return p.pl.Lo - k*elem(p) }, path)
		res := cmsisRun(t, tool, path, top+arena)
		var next []movedPair
		for _, p := range left {
			if !res.OK() || !slices.Equal(traceOf(want, p.out), traceOf(res, p.out)) {
				bit[p.name] = k
			} else {
				next = append(next, p)
			}
		}
		left = next
	}
	for _, p := range left {
		bit[p.name] = 0
	}
	return bit
}

// TestCMSISNNConvContracts proves CONV_2D's contracts under CMSIS-NN on
// real runtimes: TFLM built with CMSIS-NN for x86-64 (the portable C
// path), an emulated Cortex-M4F (DSP) and an emulated Cortex-M55 (MVE).
// On a model of 21 convolutions side by side, one for every function
// arm_convolve_wrapper_s8/_s4/_s16 dispatches to, and on corpus models'
// convolutions, each input placed exactly at its window's Lo gives the
// original model's outputs and every operator's outputs, and placed a
// few elements earlier changes the convolution's output (the proof
// bites); the paths without a contract are the ones the kernels say.
// Then heliac's own plans for each path, and for the default set of every
// library (any), run with their in-place writes and give the original's
// outputs.
func TestCMSISNNConvContracts(t *testing.T) {
	skipUnderRace(t)
	tflmrun.Require(t)
	if testing.Short() {
		t.Skip("runs TFLM's CMSIS-NN builds, two under QEMU; skipped with -short")
	}
	var runners []cmsisRunner
	tools := map[string]string{}
	for _, r := range cmsisRunners {
		if p := r.tool(); p != "" {
			runners = append(runners, r)
			tools[r.name] = p
		} else {
			t.Logf("%s (or qemu-system-arm) not found: its path is not checked", r.name)
		}
	}
	if len(runners) == 0 {
		t.Skip("no CMSIS-NN build of tflm_run in ../shared/tools")
	}
	t.Setenv("QEMU_TIMEOUT", "300")
	dir := t.TempDir()
	const arena = 256 << 10 // beyond the moved tensors: kernel scratch and TFLM's tail

	t.Run("branches", func(t *testing.T) {
		bs := convBranches()
		data := convBranchModel(t, bs)
		orig := filepath.Join(dir, "branches.tflite")
		require.NoError(t, os.WriteFile(orig, data, 0o644))
		cfg := driver.Config{ModelName: "branches", Version: "test", EmitTFLite: true}
		plain, err := driver.Compile(context.Background(), data, cfg)
		require.NoError(t, err)
		for _, r := range runners {
			t.Run(r.name, func(t *testing.T) {
				lib := r.library(t)
				var pairs []movedPair
				for _, b := range bs {
					ps := lib.InPlace(plain.Model, 0, &plain.Model.Subgraphs[0].Ops[b.conv])
					if slices.Contains(b.none, r.isa) {
						assert.Empty(t, ps, "%s: no contract on %s", b.name, r.isa.PathName())
						continue
					}
					require.Len(t, ps, 1, "%s: a contract on %s", b.name, r.isa.PathName())
					fn := b.fn
					if r.isa == kernels.MVE {
						fn = b.mveFn
					}
					assert.Contains(t, ps[0].Source, fn+".c ", "%s runs %s on %s", b.name, fn, r.isa.PathName())
					pairs = append(pairs, movedPair{name: b.name, conv: b.conv, in: b.input, out: b.out, pl: ps[0]})
				}
				want := cmsisRun(t, tools[r.name], orig, arena)
				require.True(t, want.OK(), "%s", want.Error())
				bit := proveEdges(t, tools[r.name], data, plain, pairs, want, dir, "branches-"+r.name, arena)
				for _, p := range pairs {
					t.Logf("%s: %s: input %d bytes after the output (Lo); %d element(s) earlier changes its output", r.name, p.name, p.pl.Lo, bit[p.name])
					assert.Positive(t, bit[p.name], "%s: the input up to 8 elements earlier than Lo must change the output", p.name)
				}
			})
		}
	})

	t.Run("corpus", func(t *testing.T) {
		want := map[string]bool{"mlperf-tiny/vww_96_int8.tflite": true, "tflite-micro/person_detect.tflite": true,
			"mlperf-tiny/kws_ref_model.tflite": true, "ambiq/cnn_s_quantized.tflite": true,
			"mlperf-tiny/pretrainedResnet_quant.tflite": true}
		found := 0
		inPlace := map[string]int{} // CONV_2D outputs written in place by heliac's plans for each runner's path
		for _, m := range tflmModels(t) {
			if !want[m.File] {
				continue
			}
			found++
			t.Run(m.File, func(t *testing.T) {
				data, err := os.ReadFile(m.Path)
				require.NoError(t, err)
				anyLib, err := kernels.Lookup(kernels.Any)
				require.NoError(t, err)
				anyOut, anyPath := emitTFLite(t, m, filepath.Join(dir), driver.Config{
					Liveness: liveness.Options{Kernels: anyLib, ExactOverlap: true}, Kernels: anyLib, Target: kernels.Target{PointerSize: 4}})
				anyPath2 := filepath.Join(dir, "any-"+filepath.Base(anyPath))
				require.NoError(t, os.Rename(anyPath, anyPath2))
				for _, r := range runners {
					t.Run(r.name, func(t *testing.T) {
						lib := r.library(t)
						target, err := kernels.CPU(r.cpu)
						require.NoError(t, err)
						cfg := driver.Config{Kernels: lib, Target: target, ModelName: "corpus", Version: "test", EmitTFLite: true}
						plain, err := driver.Compile(context.Background(), data, cfg)
						require.NoError(t, err)
						room := m.arenaBytes*2 + arena
						orig := cmsisRun(t, tools[r.name], m.Path, room)
						require.True(t, orig.OK(), "%s", orig.Error())
						// The convolutions placed by hand: those with a
						// contract whose input only they read, no two
						// sharing a tensor.
						sg := &plain.Model.Subgraphs[0]
						readers := map[graph.TensorID]int{}
						for _, op := range sg.Ops {
							for _, in := range op.Inputs {
								readers[in]++
							}
						}
						used := map[graph.TensorID]bool{}
						var pairs []movedPair
						for i := range sg.Ops {
							op := &sg.Ops[i]
							if op.Code != graph.Conv2D || len(pairs) == 8 {
								continue
							}
							ps := lib.InPlace(plain.Model, 0, op)
							in, out := op.Inputs[0], op.Outputs[0]
							if len(ps) != 1 || readers[in] != 1 || slices.Contains(sg.Outputs, in) || used[in] || used[out] {
								continue
							}
							used[in], used[out] = true, true
							pairs = append(pairs, movedPair{name: fmt.Sprintf("op %d", i), conv: i, in: in, out: out, pl: ps[0]})
						}
						bit := proveEdges(t, tools[r.name], data, plain, pairs, orig, dir, strings.ReplaceAll(m.File, "/", "_")+"-"+r.name, room)
						var bits []string
						for _, p := range pairs {
							bits = append(bits, fmt.Sprintf("%s Lo %d bit %d", p.name, p.pl.Lo, bit[p.name]))
						}
						t.Logf("%s on %s: %d convolution(s) at Lo: %s", m.File, r.name, len(pairs), strings.Join(bits, "; "))
						for _, p := range pairs {
							assert.NotZero(t, bit[p.name], "%s %s: the input up to 8 elements earlier than Lo must change the output", m.File, p.name)
						}

						// heliac's own plans: for this path, and for every
						// library on every path (the default).
						cfg.Liveness = liveness.Options{Kernels: lib, ExactOverlap: true}
						mine, path := emitTFLite(t, m, dir, cfg)
						for _, run := range []struct {
							what string
							out  *driver.Output
							path string
						}{{"cmsis-nn (" + r.isa.PathName() + ")", mine, path}, {"any", anyOut, anyPath2}} {
							res := cmsisRun(t, tools[r.name], run.path, room)
							require.True(t, res.OK(), "%s", res.Error())
							assert.Equal(t, orig.Outputs(), res.Outputs(), "%s: outputs with heliac's plan for %s", m.File, run.what)
							assert.Equal(t, orig.Values["trace_digest"], res.Values["trace_digest"], "%s: every operator's outputs with heliac's plan for %s", m.File, run.what)
							convs := 0
							for _, a := range run.out.Plan.Allocs {
								if a.InPlace != nil && a.InPlace.Contract.Op == graph.Conv2D {
									convs++
								}
							}
							t.Logf("%s on %s, heliac's plan for %s: %d CONV_2D output(s) written in place, scratch arena %d B",
								m.File, r.name, run.what, convs, run.out.TFLite.Offline.ArenaSize)
							if run.out == mine {
								inPlace[r.name] += convs
							}
						}
					})
				}
			})
		}
		assert.Equal(t, len(want), found, "the models are in the corpus TFLM runs")
		for _, r := range runners {
			assert.Positive(t, inPlace[r.name], "heliac's plans for %s write some CONV_2D output in place", r.isa.PathName())
		}
	})
}
