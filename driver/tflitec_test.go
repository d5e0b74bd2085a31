package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
)

// tflmMain completes the README's TFLM example into a program: the
// logging hooks TFLM's library leaves to the platform
// (../shared/tflm/README.md), and a main that runs the model once and says
// whether the model array is aligned.
const tflmMain = `
#include <cstdarg>
#include <cstdio>
#include <cstdint>

extern "C" void DebugLog(const char* format, va_list args) { vfprintf(stderr, format, args); }
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format, va_list args) {
  return vsnprintf(buf, n, format, args);
}

int main() {
  std::printf("aligned %d\n", static_cast<int>(reinterpret_cast<uintptr_t>(hello_world_int8_tflite) % 16 == 0));
  TfLiteStatus s = run_model();
  std::printf("status %d\n", static_cast<int>(s));
  return s == kTfLiteOk ? 0 : 1;
}
`

// TestTFLiteCRunsInTFLM builds the README's TFLM example as it stands
// against the emitted model's C array (hello_world_int8 with
// --emit-tflite), with the host g++ and the prebuilt TFLM of ../shared/tflm,
// and runs it: TFLM allocates the model from the array and invokes it once.
// Until the module header gives <PREFIX>_TFLM_ARENA_SIZE, the test defines
// it as heliac's head plus 16 KiB for TFLM's tail; once it does, the
// program runs on x86-64, so the figure must be the host's (64-bit
// pointers: TFLM's tail is larger there than on a Cortex-M).
func TestTFLiteCRunsInTFLM(t *testing.T) {
	tflm, lib, gxx, gcc := needHostTFLM(t, "host-x86_64")

	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	require.NoError(t, err)
	cfg := referenceConfig(t)
	// The example runs here, on x86-64: the header's arena size is for host64.
	cfg.ModelName, cfg.Version, cfg.EmitTFLite, cfg.TFLMTarget = "hello_world_int8", "test", true, "host64"
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	for _, f := range out.Files() {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
	example := readmeExample(t, "tflm")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "example.cc"), []byte(example+tflmMain), 0o644))
	require.NotNil(t, out.TFLMArena)
	require.Contains(t, string(out.CFiles[0].Data), fmt.Sprintf("#define HELLO_WORLD_INT8_TFLM_ARENA_SIZE %d", out.TFLMArena.Emitted.Bytes),
		"the module header gives TFLM's whole arena, exactly")
	var defs []string
	run(t, dir, gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "hello_world_int8.tflite.c", "-o", "model.o")
	run(t, dir, gxx, append(append([]string{"-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY", "-Wall", "-Werror"}, defs...),
		"-I", filepath.Join(tflm, "include"), "-I.", "example.cc", "model.o", lib, "-lm", "-o", "example")...)
	got := run(t, dir, filepath.Join(dir, "example"))
	assert.Equal(t, "aligned 1\nstatus 0\n", got, "TFLM allocates and invokes the model from its C array")

	// The figure is exact for that setup (the planner in the arena): 16
	// bytes less and AllocateTensors fails.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sized.cc"), []byte(sizedMain), 0o644))
	run(t, dir, gxx, "-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY", "-Wall", "-Werror",
		"-I", filepath.Join(tflm, "include"), "-I.", "sized.cc", "model.o", lib, "-lm", "-o", "sized")
	n := out.TFLMArena.Emitted.Bytes
	assert.Equal(t, "allocated 1\ninvoked 1\n", run(t, dir, filepath.Join(dir, "sized"), strconv.FormatInt(n, 10)))
	less, err := exec.Command(filepath.Join(dir, "sized"), strconv.FormatInt(n-16, 10)).Output()
	assert.Error(t, err, "an arena of %d B", n-16)
	assert.Equal(t, "allocated 0\n", string(less))
}

// sizedMain runs the README's TFLM lines with an arena of argv[1] bytes.
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
