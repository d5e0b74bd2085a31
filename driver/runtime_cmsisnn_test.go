package driver_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
)

// cmsisRuntimeKernels are the plans TestRuntimeBitExactCMSISNN runs on
// TFLM's CMSIS-NN kernels: one for CMSIS-NN on the host's code path
// (portable C), whose scratch requests must match the plan's exactly, and
// the default plan for every kernel build on every code path (kernels.Any;
// with --tflm-target host64 it would be narrowed to the portable path),
// whose rows the requests are packed into.
var cmsisRuntimeKernels = []struct {
	name string
	k    runtimeKernels
}{
	{"cmsis-nn", runtimeKernels{kernels: kernels.CMSISNN, cpu: kernels.GenericCPU, tflmTarget: "host64"}},
	{"any", runtimeKernels{}},
}

// TestRuntimeBitExactCMSISNN is TestRuntimeBitExact on TFLM's CMSIS-NN
// kernels: heliac's runtime linked with ../shared/tflm's host CMSIS-NN
// library (-DCMSIS_NN; CMSIS-NN's portable C) prints exactly what
// tflm_run_cmsis (the same library under MicroInterpreter) prints on the
// original model, seeds 1..3 with three invocations each, with each plan
// of cmsisRuntimeKernels, on the generic platform: the kernels'
// persistent data sized for CMSIS-NN's portable path, their scratch
// requests given the plan's rows. -short runs the bundled models, make
// test their corpus files and, with the default plan, every eighth other
// corpus model TFLM runs, HELIAC_FULL_SWEEP=1 every one with both. It logs
// one line per model and plan.
func TestRuntimeBitExactCMSISNN(t *testing.T) {
	skipUnderRace(t)
	r := cmsisRunners[0]
	tool := tflmrun.RequireTool(t, r.name)
	kit := needHarnessKit(t, r.lib)
	arenas := oracleArenas(t)
	var table resultTable
	start := time.Now()
	full := os.Getenv(envFullSweep) != ""
	bundled := bundledNames(t)
	t.Run("models", func(t *testing.T) {
		i := 0
		for _, m := range runtimeModels(t) {
			if m.multiBank {
				continue
			}
			i++
			subset := !full && !testing.Short() && !bundled[emit.ModelName(m.name)]
			if subset && i%8 != 4 {
				// make test runs the bundled models' corpus files and every
				// eighth other corpus model (others than
				// TestRuntimeBitExact's); HELIAC_FULL_SWEEP=1 all.
				continue
			}
			for _, c := range cmsisRuntimeKernels {
				if subset && c.name != "any" {
					continue // the default plan alone on the eighths
				}
				label := m.label() + "/" + c.name
				t.Run(label, func(t *testing.T) {
					t.Parallel()
					result, err := runtimeCheck(t, kit, tool, m, c.k, arenas[emit.ModelName(m.name)])
					table.set(label, result)
					if err != nil {
						t.Error(err)
					}
				})
			}
		}
	})
	table.log(t, fmt.Sprintf("heliac's runtime on CMSIS-NN (%s) vs %s, seeds %v x %d invocations, %v",
		r.lib.dir, r.name, runtimeSeeds, runtimeInvokes, time.Since(start).Round(time.Second)))
}

// TestRuntimeCMSISNNBrokenPlans is the proof that the CMSIS-NN runtime
// runs CMSIS-NN and that its checks bite: the harness built against the
// host CMSIS-NN library links CMSIS-NN's kernels through the
// type-specialised registration; kernel data 16 bytes short of the
// figure heliac gives CMSIS-NN's portable build fails init with
// ERR_KERNEL_STATE (the figure is exact: each buffer is aligned to 16);
// per-channel multipliers heliac computed one off what the kernel
// computes fail init with ERR_KERNEL_STATE; the kernel left reading the
// bytes lent to its Prepare computes other outputs; and a plan for every
// build whose kernel-scratch row is 16 bytes short fails init with
// ERR_SCRATCH (a request packed into the rows finds no room).
func TestRuntimeCMSISNNBrokenPlans(t *testing.T) {
	skipUnderRace(t) // beside TestRuntimeBitExactCMSISNN, which builds the same kit
	if testing.Short() {
		t.Skip("builds the runtime three times")
	}
	r := cmsisRunners[0]
	tool := tflmrun.RequireTool(t, r.name)
	kit := needHarnessKit(t, r.lib)
	bundled := func(name string) runtimeModel {
		return runtimeModel{name: name + ".tflite", path: filepath.Join("..", "testdata", "models", name+".tflite")}
	}
	// build compiles m for k into a directory of t's, lets edit change its
	// files there, builds the harness and runs it with seed 1 and 2 invokes.
	build := func(t *testing.T, m runtimeModel, k runtimeKernels, edit func(dir, prefix string)) (string, runLines) {
		cfg, out, err := compileRuntime(t, m, k)
		require.NoError(t, err)
		dir := t.TempDir()
		srcs := writeFiles(t, dir, out.CFiles)
		if edit != nil {
			edit(dir, cfg.Prefix)
		}
		exe, err := kit.build(dir, cfg.Prefix, "backend_heliac.c", srcs, nil)
		require.NoError(t, err)
		got, err := kit.runHarness(exe, 1, 2, time.Minute)
		require.NoError(t, err)
		return exe, got
	}
	cmsis, all := cmsisRuntimeKernels[0].k, cmsisRuntimeKernels[1].k

	t.Run("as planned", func(t *testing.T) {
		t.Parallel()
		hello := bundled("hello_world_int8")
		exe, got := build(t, hello, cmsis, nil)
		want, err := oracle(tool, hello.path, 1, 2, 0)
		require.NoError(t, err)
		assert.Empty(t, firstDifference(want, got))
		nm, err := exec.LookPath("nm")
		if err != nil {
			t.Skip("nm not on PATH")
		}
		syms, err := exec.Command(nm, "-C", exe).Output()
		require.NoError(t, err)
		for _, s := range []string{"tflite::Register_FULLY_CONNECTED_INT8()", "arm_fully_connected_s8"} {
			assert.Contains(t, string(syms), s, "CMSIS-NN's kernel is linked")
		}
	})
	t.Run("kernel state 16 bytes short", func(t *testing.T) {
		t.Parallel()
		var need int
		_, got := build(t, bundled("hello_world_int8"), all, func(dir, prefix string) {
			// The portable build's figure for 8-byte pointers.
			re := regexp.MustCompile(`(?m)^(#elif HELIAC_KERNEL_BUILD == 1 .*\n#if UINTPTR_MAX == 0xffffffffu\nconstexpr size_t kKernelStateBytes = \d+;\n#else\nconstexpr size_t kKernelStateBytes = )(\d+);`)
			rewrite(t, filepath.Join(dir, prefix+emit.TFLMSuffix), re, func(m []string) string {
				need, _ = strconv.Atoi(m[2])
				return fmt.Sprintf("%s%d;", m[1], need-16)
			})
		})
		assert.NotZero(t, need)
		assert.Equal(t, "error", got.values["status"])
		assert.Contains(t, got.values["error"], "init: status 8: ", "ERR_KERNEL_STATE")
		assert.Contains(t, got.values["error"], fmt.Sprintf("kernel data needs at least %d bytes; the runtime keeps %d", need, need-16))
	})
	// micro_speech_quantized's DEPTHWISE_CONV_2D (operator 1) keeps
	// per-channel multipliers and shifts, which heliac computes
	// (kernels/prepared) and keeps out of kernel_state.
	speech := bundled("micro_speech_quantized")
	t.Run("prepared values other than the kernel's", func(t *testing.T) {
		t.Parallel()
		_, got := build(t, speech, cmsis, func(dir, prefix string) {
			re := regexp.MustCompile(`(?m)^(alignas\(16\) const int32_t prepared_\d+_multipliers\[\d+\] HELIAC_PREPARED_ATTR = \{\n\t)(-?\d+)`)
			rewrite(t, filepath.Join(dir, prefix+emit.TFLMSuffix), re, func(m []string) string {
				v, _ := strconv.Atoi(m[2])
				return fmt.Sprintf("%s%d", m[1], v+1)
			})
		})
		assert.Equal(t, "error", got.values["status"])
		assert.Contains(t, got.values["error"], "init: status 8: ", "ERR_KERNEL_STATE")
		assert.Regexp(t, `operator 0:\d+ DEPTHWISE_CONV_2D: prepare computed other values than heliac's in persistent buffer 0 \(\d+ bytes\)`,
			got.values["error"])
	})
	t.Run("prepared buffers not adopted", func(t *testing.T) {
		t.Parallel()
		// Without pointing the kernel at heliac's copies, it reads the
		// bytes lent to its Prepare, which init clears: the outputs
		// change, so the bit-exact runs rest on the copies.
		_, got := build(t, speech, cmsis, func(dir, prefix string) {
			re := regexp.MustCompile(`(?m)^\s*v = reinterpret_cast<uintptr_t>\(p\.values\) \+ \(v - lent\);\n`)
			rewrite(t, filepath.Join(dir, prefix+emit.TFLMSuffix), re, func([]string) string { return "" })
		})
		want, err := oracle(tool, speech.path, 1, 2, 0)
		require.NoError(t, err)
		assert.Equal(t, "ok", got.values["status"])
		assert.NotEmpty(t, firstDifference(want, got), "the kernel read the cleared bytes")
	})
	t.Run("kernel scratch row short", func(t *testing.T) {
		t.Parallel()
		var size int
		_, got := build(t, bundled("keyword_scrambled_8bit"), all, func(dir, prefix string) {
			re := regexp.MustCompile(`(?m)^(\t\{\d+u, \d+u, \d+u, \w+, \d+u, )(\d+)u\}, /\* \[0\]`)
			rewrite(t, filepath.Join(dir, prefix+".c"), re, func(m []string) string {
				size, _ = strconv.Atoi(m[2])
				return fmt.Sprintf("%s%du}, /* [0]", m[1], size-16)
			})
		})
		assert.NotZero(t, size)
		assert.Equal(t, "error", got.values["status"])
		assert.Contains(t, got.values["error"], "init: status 9: ", "ERR_SCRATCH")
		assert.Regexp(t, `operator 0:\d+ SVDF: asks for \d+ bytes of scratch \(buffer \d\); the plan's 2 buffer\(s\) for it hold no more`,
			got.values["error"])
	})
}
