package emit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
)

// TestTFLMRuntimeKernelBuilds: <prefix>.tflm.cc, preprocessed as each
// compiler builds it for a CPU (g++ for the host, arm-none-eabi-g++ for a
// Cortex-M55, M4 and M3), with and without -DCMSIS_NN, picks the kernel
// build CMSIS-NN would run there, keeps that build's kernel data
// (TFLMKernelState, for the target's pointer size), and refuses with an
// #error naming the reason a build the plan was not made for. The plan's
// library is what sized its kernel scratch (plan.Plan.ScratchSource); the
// header's own check (kernelGuard) is left out, as with --no-in-place.
func TestTFLMRuntimeKernelBuilds(t *testing.T) {
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found")
	}
	include := filepath.Join(shared, "tflm", "include")
	m := readModel(t, "../testdata/models/hello_world_int8.tflite")
	p := buildPlan(t, m)
	type cpu struct {
		name  string
		cc    []string
		ptr   int64
		cmsis bool
	}
	host := []string{"g++"}
	m55 := []string{"arm-none-eabi-g++", "-mcpu=cortex-m55", "-mfpu=auto", "-mfloat-abi=hard", "-mthumb"}
	m4 := []string{"arm-none-eabi-g++", "-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard", "-mthumb"}
	m3 := []string{"arm-none-eabi-g++", "-mcpu=cortex-m3", "-mthumb"}
	hostRef, hostNN := cpu{"host", host, 8, false}, cpu{"host -DCMSIS_NN", host, 8, true}
	m55NN, m4NN, m3NN := cpu{"cortex-m55 -DCMSIS_NN", m55, 4, true}, cpu{"cortex-m4 -DCMSIS_NN", m4, 4, true}, cpu{"cortex-m3 -DCMSIS_NN", m3, 4, true}
	m4Ref := cpu{"cortex-m4", m4, 4, false}
	type build struct {
		cpu
		kernels string // the build picked ("tflm-reference", "cmsis-nn (mve)"); "" when refused
		error   string
	}
	tests := []struct {
		library, cpu string // plan.ScratchSource
		builds       []build
	}{
		{"tflm-reference", "", []build{{hostRef, "tflm-reference", ""}, {m4Ref, "tflm-reference", ""},
			{hostNN, "", "planned for tflm-reference, but this build defines CMSIS_NN"},
			{m55NN, "", "planned for tflm-reference, but this build defines CMSIS_NN"}}},
		{"cmsis-nn", "generic", []build{{hostNN, "cmsis-nn (portable)", ""}, {m3NN, "cmsis-nn (portable)", ""},
			{hostRef, "", "planned for cmsis-nn (portable), but this build links TFLM's reference kernels (it does not define CMSIS_NN)"},
			{m4NN, "", "planned for cmsis-nn (portable), but CMSIS-NN runs its dsp code in this build (ARM_MATH_DSP, from __ARM_FEATURE_DSP, without MVE)"},
			{m55NN, "", "planned for cmsis-nn (portable), but CMSIS-NN runs its mve code in this build (ARM_MATH_MVEI, from __ARM_FEATURE_MVE)"}}},
		{"cmsis-nn", "cortex-m55", []build{{m55NN, "cmsis-nn (mve)", ""},
			{m4NN, "", "planned for cmsis-nn (mve), but CMSIS-NN runs its dsp code in this build"},
			{hostNN, "", "planned for cmsis-nn (mve), but CMSIS-NN runs its portable code in this build (neither __ARM_FEATURE_DSP nor __ARM_FEATURE_MVE)"}}},
		{"cmsis-nn", "cortex-m4", []build{{m4NN, "cmsis-nn (dsp)", ""},
			{m55NN, "", "planned for cmsis-nn (dsp), but CMSIS-NN runs its mve code in this build"},
			{m3NN, "", "planned for cmsis-nn (dsp), but CMSIS-NN runs its portable code in this build"},
			{m4Ref, "", "planned for cmsis-nn (dsp), but this build links TFLM's reference kernels"}}},
		{"cmsis-nn", "", []build{{hostNN, "cmsis-nn (portable)", ""}, {m55NN, "cmsis-nn (mve)", ""}, {m4NN, "cmsis-nn (dsp)", ""},
			{hostRef, "", "planned for cmsis-nn, but this build links TFLM's reference kernels"}}},
		{"any", "", []build{{hostRef, "tflm-reference", ""}, {hostNN, "cmsis-nn (portable)", ""}, {m55NN, "cmsis-nn (mve)", ""},
			{m4NN, "cmsis-nn (dsp)", ""}, {m3NN, "cmsis-nn (portable)", ""}, {m4Ref, "tflm-reference", ""}}},
		{"any", "cortex-m4", []build{{m4Ref, "tflm-reference", ""}, {m4NN, "cmsis-nn (dsp)", ""},
			{m55NN, "", "planned for any (dsp), but CMSIS-NN runs its mve code in this build"}}},
	}
	for _, tt := range tests {
		t.Run(tt.library+"/"+tt.cpu, func(t *testing.T) {
			q := *p
			q.Kernels, q.KernelsPath = "", ""
			q.ScratchSource = plan.ScratchSource{Library: tt.library, CPU: tt.cpu}
			lib, err := emit.PlanKernels(&q)
			require.NoError(t, err)
			_, space := emit.PrepareSpace(&q)
			state, err := emit.TFLMKernelState(m, lib, space)
			require.NoError(t, err)
			files, err := emit.C(m, &q, emit.COptions{Prefix: "g", Runtime: emit.RuntimeTFLM})
			require.NoError(t, err)
			dir := t.TempDir()
			writeFiles(t, dir, files)
			// CMSIS-NN's type-specialised registration where the plan may
			// run CMSIS-NN (the reference build's header defines it as the
			// generic one).
			reg := "registrations[0] = tflite::Register_FULLY_CONNECTED();"
			if tt.library != kernels.TFLMReference {
				reg = "registrations[0] = tflite::Register_FULLY_CONNECTED_INT8();"
			}
			assert.Contains(t, string(files[2].Data), reg)
			for _, b := range tt.builds {
				if _, err := exec.LookPath(b.cc[0]); err != nil {
					t.Logf("%s not on PATH", b.cc[0])
					continue
				}
				args := append(append([]string{}, b.cc[1:]...), "-std=c++17", "-DTF_LITE_STATIC_MEMORY", "-I", include, "-E", "g.tflm.cc")
				if b.cmsis {
					args = append(args, "-DCMSIS_NN")
				}
				out, err := runOut(t, dir, b.cc[0], append(args, "-o", "g.ii")...)
				if b.error != "" {
					assert.Error(t, err, b.name)
					errs := regexp.MustCompile(`(?m)^g\.tflm\.cc:\d+:\d+: error: #error .*$`).FindAllString(out, -1)
					if assert.Len(t, errs, 1, "%s: one refusal", b.name) {
						assert.Contains(t, errs[0], " error: #error \"g.tflm.cc: "+b.error, b.name)
					}
					continue
				}
				require.NoError(t, err, "%s\n%.3000s", b.name, out)
				pre, err := os.ReadFile(filepath.Join(dir, "g.ii"))
				require.NoError(t, err)
				var want int64 = -1
				for _, s := range state {
					if s.Kernels.String() == b.kernels {
						want = s.CortexM
						if b.ptr == 8 {
							want = s.Host64
						}
					}
				}
				require.NotEqual(t, int64(-1), want, "%s: the plan is for %s", b.name, b.kernels)
				got := regexp.MustCompile(`constexpr size_t kKernelStateBytes = (\d+);`).FindAllStringSubmatch(string(pre), -1)
				require.Len(t, got, 1, "%s: one kKernelStateBytes survives the preprocessor", b.name)
				assert.Equal(t, strconv.FormatInt(want, 10), got[0][1], "%s: %s's kernel data", b.name, b.kernels)
				macros, err := runOut(t, dir, b.cc[0], append(args, "-dM")...)
				require.NoError(t, err)
				assert.Regexp(t, `(?m)^#define HELIAC_KERNEL_BUILD \d$`, macros, b.name)
			}
		})
	}
}

// TestTFLMKernelStateBuilds: the kernel data of each build the plan's
// library stands for, in the library's member order; CMSIS-NN's
// FULLY_CONNECTED keeps more than the reference kernel (OpData of 96 / 72
// bytes against 64 / 48), and on MVE also its kernel sums (an int32 per
// output channel: hello_world_int8's layers have 16, 16 and 1).
func TestTFLMKernelStateBuilds(t *testing.T) {
	m := readModel(t, "../testdata/models/hello_world_int8.tflite")
	all, err := kernels.Lookup(kernels.Any)
	require.NoError(t, err)
	got, err := emit.TFLMKernelState(m, all, 0)
	require.NoError(t, err)
	var names []string
	for _, b := range got {
		names = append(names, b.Kernels.String())
	}
	assert.Equal(t, []string{"tflm-reference", "cmsis-nn (portable)", "cmsis-nn (dsp)", "cmsis-nn (mve)"}, names)
	assert.Equal(t, [2]int64{144, 192}, [2]int64{got[0].CortexM, got[0].Host64}, "3 x OpDataFullyConnected")
	assert.Equal(t, [2]int64{240, 288}, [2]int64{got[1].CortexM, got[1].Host64}, "3 x CMSIS-NN's OpData")
	assert.Equal(t, got[1].CortexM, got[2].CortexM, "no kernel sums on DSP")
	assert.Equal(t, got[1].CortexM+64+64+16, got[3].CortexM, "kernel sums on MVE, each buffer aligned to 16")
	for _, b := range got {
		assert.Empty(t, b.Prepared, "%s: no space lent to Prepare, nothing kept in flash", b.Kernels)
	}

	// With room to prepare them, heliac computes the kernel sums (the
	// layers' filters are per-tensor quantized: no per-channel arrays) and
	// the MVE build keeps no more kernel data than the portable one.
	got, err = emit.TFLMKernelState(m, all, 1024)
	require.NoError(t, err)
	assert.Equal(t, got[1].CortexM, got[3].CortexM, "the kernel sums are kept in flash")
	assert.Empty(t, got[0].Prepared)
	if assert.Len(t, got[3].Prepared, 3) {
		assert.Equal(t, []int64{64, 64, 4}, []int64{got[3].Prepared[0].Bytes(), got[3].Prepared[1].Bytes(), got[3].Prepared[2].Bytes()})
		assert.Equal(t, int64(64+64+16), got[3].PreparedBytes())
		for i, p := range got[3].Prepared {
			assert.Equal(t, i, p.Op, "one buffer per layer")
			assert.Equal(t, 0, p.Request, "its first persistent request in Prepare")
			assert.Equal(t, kernels.TFLMKernelSums, p.Content)
		}
	}
	// Each layer's buffers are lent while it prepares, one layer at a time.
	got, err = emit.TFLMKernelState(m, all, 64)
	require.NoError(t, err)
	assert.Len(t, got[3].Prepared, 3, "64 bytes hold one layer's buffer at a time")
	got, err = emit.TFLMKernelState(m, all, 63)
	require.NoError(t, err)
	assert.Len(t, got[3].Prepared, 1, "63 bytes hold only the last layer's 4")
}

// TestTFLMKernelStateLSTM: CMSIS-NN's INT8 LSTM fills eight buffers of
// kernel sums in its Prepare, one per weight matrix; each moves to flash
// as its own array, in the order the kernel asks for them (the runtime
// checks each against the kernel's: a buffer given another's values fails
// init), and the reference kernel keeps none.
func TestTFLMKernelStateLSTM(t *testing.T) {
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found")
	}
	m := readModel(t, filepath.Join(shared, "corpus", "tflite-micro", "trained_lstm_int8.tflite"))
	all, err := kernels.Lookup(kernels.Any)
	require.NoError(t, err)
	got, err := emit.TFLMKernelState(m, all, 1024)
	require.NoError(t, err)
	assert.Empty(t, got[0].Prepared, "the reference LSTM keeps no sums")
	for _, b := range got[1:] {
		var lstm []emit.PreparedBuffer
		for _, p := range b.Prepared {
			if p.Op == 0 {
				lstm = append(lstm, p)
			}
		}
		require.Len(t, lstm, 8, "%s: eight sums of the LSTM (operator 0)", b.Kernels)
		for i, p := range lstm {
			assert.Equal(t, i, p.Request, "%s: in the kernel's order", b.Kernels)
			assert.Equal(t, i, p.Nth, "%s", b.Kernels)
			assert.Equal(t, kernels.TFLMKernelSums, p.Content)
			assert.Equal(t, int64(80), p.Bytes(), "20 cells")
		}
		assert.NotEqual(t, lstm[0].Values, lstm[1].Values, "the input and forget gates' weights differ")
	}

	p := buildPlan(t, m)
	p.Kernels, p.KernelsPath = "", ""
	p.ScratchSource = plan.ScratchSource{Library: kernels.Any}
	files, err := emit.C(m, p, emit.COptions{Prefix: "lstm", Runtime: emit.RuntimeTFLM})
	require.NoError(t, err)
	var cc string
	for _, f := range files {
		if filepath.Ext(f.Name) == ".cc" {
			cc = string(f.Data)
		}
	}
	rows := regexp.MustCompile(`\{0, (\d), (prepared_0_kernel_sums(?:_\d)?), 80\}`).FindAllStringSubmatch(cc, -1)
	require.Len(t, rows, 3*8, "eight kPrepared rows of the LSTM in each CMSIS-NN build")
	for i, r := range rows {
		name := "prepared_0_kernel_sums"
		if n := i % 8; n > 0 {
			name += "_" + strconv.Itoa(n)
		}
		assert.Equal(t, strconv.Itoa(i%8), r[1])
		assert.Equal(t, name, r[2], "request %s reads its own array", r[1])
	}
}
