package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflmarena"
)

// TestTFLiteCRunsInTFLM builds the README's TFLM program (the block after
// "<!-- README example: tflm -->") as it stands, with only
// <prefix>.tflite.h and <prefix>.tflite.c from heliac, for corpus models
// compiled as `heliac model.tflite --emit-tflite` compiles them:
// person_detect, and vad_v2, whose VAR_HANDLE operators need the resource
// variables the header counts. On x86-64 (g++ against ../shared/tflm's
// host library) it allocates and invokes with exactly
// MODEL_TFLM_ARENA_SIZE, the host64 figure (Output.TFLMArenaHost), and
// fails to allocate with 16 bytes less; cross-compiled with
// arm-none-eabi-g++ for the Cortex-M55, the macro is the cortex-m figure
// (Output.TFLMArena), which a static_assert checks, and on QEMU's
// Cortex-M55 the program runs with it and fails with 16 bytes less
// (runOnM55; make test builds person_detect's for the M55,
// HELIAC_FULL_SWEEP=1 both).
func TestTFLiteCRunsInTFLM(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("builds TFLM programs for two models on the host and the Cortex-M55; skipped with -short")
	}
	tflm, lib, gxx, gcc := needHostTFLM(t, "host-x86_64")
	example := readmeExample(t, "README.md", "tflm")
	const arena = "tensor_arena[MODEL_TFLM_ARENA_SIZE]"
	require.Equal(t, 1, strings.Count(example, arena), "the example sizes its arena with the header's macro")
	armGxx, _ := exec.LookPath("arm-none-eabi-g++")
	for _, model := range []string{"tflite-micro/person_detect", "esphome-mww/vad_v2"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(corpus.SharedDir(), "corpus", model+".tflite"))
			if os.IsNotExist(err) {
				t.Skipf("%s not in the corpus", model)
			}
			require.NoError(t, err)
			cfg, err := heliac.Options{Name: "model", EmitTFLite: true, Version: "test"}.Config()
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			require.NotNil(t, out.TFLMArena, "%v", out.TFLMArenaErr)
			require.NotNil(t, out.TFLMArenaHost)
			dir := t.TempDir()
			for _, f := range out.TFLite.C {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.cc"), []byte(example), 0o644))
			less := strings.Replace(example, arena, "tensor_arena[MODEL_TFLM_ARENA_SIZE - 16]", 1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "less.cc"), []byte(less), 0o644))

			run(t, dir, gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "model.tflite.c", "-o", "model.o")
			// The figure is the largest of the kernel builds the plan
			// holds for on a host (TFLM's reference kernels, CMSIS-NN's
			// portable code): it runs on each, and the one that sets it
			// fails with 16 bytes less.
			n := out.TFLMArenaHost.Emitted.Bytes
			for _, build := range []struct{ lib, define, kernels string }{
				{lib, "-DHELIAC_REFERENCE_KERNELS", kernels.TFLMReference},
				{filepath.Join(tflm, "lib", "host-x86_64-cmsis-nn", "libtflm.a"), "-DCMSIS_NN", kernels.CMSISNN + " (portable)"},
			} {
				flags := []string{"-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY", build.define, "-Wall", "-Werror", "-I", filepath.Join(tflm, "include"), "-I."}
				main, short := "main_"+build.define[2:], "less_"+build.define[2:]
				run(t, dir, gxx, append(flags, "main.cc", "model.o", build.lib, "-lm", "-o", main)...)
				assert.Equal(t, fmt.Sprintf("ran with a %d-byte tensor_arena\n", n), run(t, dir, filepath.Join(dir, main)),
					"%s allocates and invokes the model with the header's host64 figure", build.kernels)
				if build.kernels != out.TFLMArenaHost.Kernels {
					continue
				}
				run(t, dir, gxx, append(flags, "less.cc", "model.o", build.lib, "-lm", "-o", short)...)
				cmd := exec.Command(filepath.Join(dir, short))
				var stderr strings.Builder
				cmd.Stderr = &stderr
				got, err := cmd.Output()
				assert.Error(t, err, "%s, an arena of %d B", build.kernels, n-16)
				assert.Empty(t, string(got))
				assert.NotEmpty(t, stderr.String(), "TFLM says why it could not allocate")
			}
			vars := tflmarena.ResourceVariables(out.Model)
			assert.Contains(t, string(out.TFLite.C[0].Data), fmt.Sprintf("#define MODEL_TFLM_RESOURCE_VARIABLES %d\n", vars))
			t.Logf("%s: host64 %d B (set by %s), cortex-m %d B (set by %s), %d resource variable(s)", model, n, out.TFLMArenaHost.Kernels, out.TFLMArena.Emitted.Bytes, out.TFLMArena.Kernels, vars)

			if armGxx == "" {
				t.Log("arm-none-eabi-g++ not on PATH: the 32-bit figure is not checked")
				return
			}
			if model != "tflite-micro/person_detect" && os.Getenv(envFullSweep) == "" {
				t.Log("the Cortex-M55 build of this model runs with HELIAC_FULL_SWEEP=1 (make test: person_detect's)")
				return
			}
			check := example + fmt.Sprintf("\nstatic_assert(sizeof(void*) == 4 && MODEL_TFLM_ARENA_SIZE == %du, \"the cortex-m figure\");\n",
				out.TFLMArena.Emitted.Bytes)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "m55.cc"), []byte(check), 0o644))
			run(t, dir, armGxx, "-mcpu=cortex-m55", "-mfpu=auto", "-mthumb", "-mfloat-abi=hard", "-std=c++17", "-fno-rtti",
				"-fno-exceptions", "-DTF_LITE_STATIC_MEMORY", "-Wall", "-Werror", "-I", filepath.Join(tflm, "include"), "-I.", "-c", "m55.cc")
			runOnM55(t, dir, tflm, armGxx, out.TFLMArena)
		})
	}
}

// runOnM55 runs the README's program (main.cc, and less.cc with 16 bytes
// less, in dir beside model.tflite.c) on QEMU's MPS3 AN547, a Cortex-M55,
// with the start-up code and linker script of ../shared/tflm/check/m55
// (semihosting: QEMU's exit status is the program's), when qemu-system-arm
// is on PATH: it allocates and invokes with the header's 32-bit figure a
// (the cortex-m one) on TFLM's reference kernels and on its CMSIS-NN
// kernels (MVE), and the build that sets the figure fails with 16 bytes
// less.
func runOnM55(t *testing.T, dir, tflm, armGxx string, a *driver.TFLMArenas) {
	t.Helper()
	qemu, err := exec.LookPath("qemu-system-arm")
	if err != nil {
		t.Log("qemu-system-arm not on PATH: the program does not run on the Cortex-M55")
		return
	}
	armGcc := strings.TrimSuffix(armGxx, "g++") + "gcc"
	arch := []string{"-mcpu=cortex-m55", "-mfpu=auto", "-mthumb", "-mfloat-abi=hard"}
	board := filepath.Join(tflm, "check", "m55")
	run(t, dir, armGcc, append(arch, "-std=c17", "-O2", "-c", filepath.Join(board, "platform.c"), "-o", "platform.o")...)
	run(t, dir, armGcc, append(arch, "-std=c11", "-Wall", "-Werror", "-c", "model.tflite.c", "-o", "model_m55.o")...)
	for _, build := range []struct{ lib, define, kernels string }{
		{"cortex-m55", "-DHELIAC_REFERENCE_KERNELS", kernels.TFLMReference},
		{"cortex-m55-cmsis-nn", "-DCMSIS_NN", kernels.CMSISNN + " (mve)"},
	} {
		srcs := []string{"main.cc"}
		if build.kernels == a.Kernels {
			srcs = append(srcs, "less.cc")
		}
		for _, src := range srcs {
			elf := strings.TrimSuffix(src, ".cc") + "_" + build.lib + ".elf"
			run(t, dir, armGxx, append(arch, "-std=c++17", "-O2", "-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY", build.define,
				"-I", filepath.Join(tflm, "include"), "-I.", "--specs=rdimon.specs", "-nostartfiles", "-T", filepath.Join(board, "an547.ld"),
				"-Wl,--gc-sections", "platform.o", src, "model_m55.o", filepath.Join(tflm, "lib", build.lib, "libtflm.a"), "-lm", "-o", elf)...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, qemu, "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "null",
				"-semihosting", "-kernel", filepath.Join(dir, elf))
			cmd.Dir = dir
			got, err := cmd.Output()
			cancel()
			if src == "main.cc" {
				assert.NoError(t, err, "%s on the Cortex-M55", build.kernels)
				assert.Equal(t, fmt.Sprintf("ran with a %d-byte tensor_arena\n", a.Emitted.Bytes), string(got),
					"%s allocates and invokes the model on the Cortex-M55 with the header's cortex-m figure", build.kernels)
			} else {
				assert.Error(t, err, "%s on the Cortex-M55, an arena of %d B", build.kernels, a.Emitted.Bytes-16)
			}
		}
	}
}

// sizedMain runs hello_world_int8 from its C array with an arena of
// argv[1] bytes.
const sizedMain = `
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "hello_world_int8.tflite.h"

extern "C" void DebugLog(const char*, va_list) {}
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format, va_list args) {
  return vsnprintf(buf, n, format, args);
}

alignas(16) static uint8_t arena[1 << 16];

int main(int argc, char** argv) {
  size_t n = argc > 1 ? strtoul(argv[1], nullptr, 10) : 0;
  if (n > sizeof arena) return 2;
  const tflite::Model* model = tflite::GetModel(hello_world_int8_tflite);
  tflite::MicroMutableOpResolver<1> resolver;
  resolver.AddFullyConnected();
  tflite::MicroInterpreter interpreter(model, resolver, arena, n);
  bool allocated = interpreter.AllocateTensors() == kTfLiteOk;
  std::printf("allocated %d\n", allocated);
  if (!allocated) return 1;
  bool invoked = interpreter.Invoke() == kTfLiteOk;
  std::printf("invoked %d\n", invoked);
  return invoked ? 0 : 1;
}
`

// needHostTFLM returns ../shared/tflm, its host library of the given
// build ("host-x86_64", "host-x86_64-cmsis-nn"), g++ and gcc, or skips the
// test when one is absent.
func needHostTFLM(t *testing.T, build string) (tflm, lib, gxx, gcc string) {
	t.Helper()
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found; skipping the TFLM build")
	}
	tflm = filepath.Join(shared, "tflm")
	lib = filepath.Join(tflm, "lib", build, "libtflm.a")
	for _, p := range []string{filepath.Join(tflm, "include"), lib} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not found; skipping the TFLM build", p)
		}
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not on PATH")
	}
	return tflm, lib, gxx, needGCC(t)
}
