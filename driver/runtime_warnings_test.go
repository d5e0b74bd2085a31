package driver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
)

// runtimeCompiler is a C++ compiler the generated runtime must build
// warning-free with, and whether that build defines CMSIS_NN.
type runtimeCompiler struct {
	name  string
	cmd   []string // the compiler and its CPU flags
	cmsis bool
}

var (
	hostGxx   = runtimeCompiler{"g++", []string{"g++"}, false}
	m55Gxx    = runtimeCompiler{"arm-none-eabi-g++ cortex-m55", []string{"arm-none-eabi-g++", "-mcpu=cortex-m55", "-mfpu=auto", "-mfloat-abi=hard", "-mthumb"}, false}
	m55GxxCMS = runtimeCompiler{"arm-none-eabi-g++ cortex-m55 -DCMSIS_NN", m55Gxx.cmd, true}
)

// scratchHandleRE is the runtime's count of scratch requests.
var scratchHandleRE = regexp.MustCompile(`(?m)^constexpr size_t kScratchHandleCount = (\d+);$`)

// TestRuntimeCompilesWarningFree compiles <prefix>.tflm.cc as a firmware
// build does (-O2, where GCC's range analysis runs and -Warray-bounds
// sees through the runtime's tables) with -Wall -Wextra -Werror: for a
// model whose kernels ask for no scratch (kScratchHandleCount 0), and
// for one whose kernels do, on a plan for one kernel build (requests take
// exact rows) and on one for any (requests packed into rows). The runtime
// tests (TestRuntimeBitExact) compile it at -O1 only.
func TestRuntimeCompilesWarningFree(t *testing.T) {
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found")
	}
	include := filepath.Join(shared, "tflm", "include")
	tests := []struct {
		name, model, kernels, cpu string
		scratch                   bool // the plan's kernels ask for scratch
		compilers                 []runtimeCompiler
	}{
		{"no scratch", "hello_world_int8", kernels.TFLMReference, "", false, []runtimeCompiler{hostGxx, m55Gxx}},
		{"no scratch, cmsis-nn", "hello_world_int8", kernels.CMSISNN, "cortex-m55", false, []runtimeCompiler{m55GxxCMS}},
		{"exact scratch", "keyword_scrambled_8bit", kernels.TFLMReference, "", true, []runtimeCompiler{hostGxx, m55Gxx}},
		{"packed scratch", "keyword_scrambled_8bit", kernels.Any, "", true, []runtimeCompiler{hostGxx, m55GxxCMS}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := heliac.Options{Name: tt.model, Kernels: tt.kernels, CPU: tt.cpu, Runtime: string(emit.RuntimeTFLM), Version: "test"}
			cfg, err := opts.Config()
			require.NoError(t, err)
			cfg.Prefix = "model"
			data, err := os.ReadFile(filepath.Join("..", "testdata", "models", tt.model+".tflite"))
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			dir := t.TempDir()
			var cc []byte
			for _, f := range out.CFiles {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
				if f.Name == "model.tflm.cc" {
					cc = f.Data
				}
			}
			m := scratchHandleRE.FindSubmatch(cc)
			require.NotNil(t, m, "model.tflm.cc has no kScratchHandleCount")
			require.Equal(t, tt.scratch, string(m[1]) != "0", "kScratchHandleCount = %s", m[1])
			for _, c := range tt.compilers {
				if _, err := exec.LookPath(c.cmd[0]); err != nil {
					t.Logf("%s not on PATH", c.cmd[0])
					continue
				}
				args := append(slices.Clone(c.cmd[1:]), "-std=c++17", "-O2", "-fno-rtti", "-fno-exceptions",
					"-fno-threadsafe-statics", "-DTF_LITE_STATIC_MEMORY", "-Wall", "-Wextra", "-Werror",
					"-isystem", include, "-I.", "-c", "model.tflm.cc", "-o", "model.tflm.o")
				if c.cmsis {
					args = append(args, "-DCMSIS_NN")
				}
				run(t, dir, c.cmd[0], args...)
			}
		})
	}
}
