package tflmarena

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// TestFrameworkSizesMatchHeaders compiles a static_assert for every
// framework struct size and alignment of the table against
// ../shared/tflm/include, with g++ (host64) and arm-none-eabi-g++
// (cortex-m; flags of ../shared/tflm/README.md). Two types are not
// visible from outside TFLM: MicroBuiltinDataAllocator (in
// micro_allocator.cc's anonymous namespace) and MicroResourceVariable (a
// private member of MicroResourceVariables); they are checked through
// classes with the same members.
func TestFrameworkSizesMatchHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the struct size checks (compiles TFLM's headers)")
	}
	dir := corpus.SharedDir()
	if dir == "" {
		t.Skip("../shared not found; skipping the struct size checks")
	}
	include := filepath.Join(dir, "tflm", "include")
	if _, err := os.Stat(include); err != nil {
		t.Skip("../shared/tflm/include not found; skipping the struct size checks")
	}
	compilers := map[int][]string{
		0: {"g++", "-std=c++17", "-fno-rtti", "-DTF_LITE_STATIC_MEMORY"},
		1: {"arm-none-eabi-g++", "-mcpu=cortex-m55", "-mfpu=auto", "-mthumb", "-mfloat-abi=hard", "-std=c++17",
			"-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY"},
	}
	for i, target := range []Target{Host64, CortexM} {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			cc := compilers[i]
			if _, err := exec.LookPath(cc[0]); err != nil {
				t.Skipf("%s not found; skipping the struct size checks", cc[0])
			}
			if out, err := exec.Command(cc[0], "-x", "c++", "-E", "-include", "cstddef", "/dev/null").CombinedOutput(); err != nil {
				t.Skipf("%s has no C++ library headers: %s", cc[0], out)
			}
			fw := framework[i]
			src := `#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_allocation_info.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/micro/arena_allocator/single_arena_buffer_allocator.h"
#include "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h"
#include "tensorflow/lite/core/api/flatbuffer_conversions.h"
using namespace tflite;
class BuiltinDataAllocatorLike : public BuiltinDataAllocator {
 public:
  void* Allocate(size_t, size_t) override { return nullptr; }
  void Deallocate(void*) override {}
  IPersistentBufferAllocator* persistent;
};
struct ResourceVariableLike { const char* container; const char* shared_name; void* resource_buffer; size_t bytes; int8_t default_value; };
`
			for _, c := range []struct {
				ty string
				sz [2]int64
			}{
				{"SingleArenaBufferAllocator", fw.singleArena}, {"MicroAllocator", fw.microAllocator},
				{"BuiltinDataAllocatorLike", fw.builtinDataAllocator}, {"SubgraphAllocations", fw.subgraphAllocations},
				{"TfLiteEvalTensor", fw.evalTensor}, {"NodeAndRegistration", fw.nodeAndRegistration},
				{"TfLiteTensor", fw.tfLiteTensor}, {"TfLiteAffineQuantization", fw.affineQuantization},
				{"ScratchBufferHandle", fw.scratchHandle}, {"internal::ScratchBufferRequest", fw.scratchRequest},
				{"AllocationInfo", fw.allocationInfo}, {"MicroResourceVariables", fw.resourceVariables},
				{"ResourceVariableLike", fw.resourceVariable}, {"size_t", fw.sizeT}, {"GreedyMemoryPlanner", fw.greedyPlanner},
				{"void*", [2]int64{target.PointerSize, target.PointerSize}},
			} {
				src += fmt.Sprintf("static_assert(sizeof(%s) == %d && alignof(%s) == %d, %q);\n", c.ty, c.sz[0], c.ty, c.sz[1], c.ty)
			}
			// per_buffer_size() is private: its parts, BufferRequirements
			// (private, four ints), three ints and a ListEntry.
			src += fmt.Sprintf("static_assert(4*sizeof(int) + 3*sizeof(int) + sizeof(GreedyMemoryPlanner::ListEntry) == %d, \"per_buffer_size\");\n", plannerBytesPerBuffer)
			file := filepath.Join(t.TempDir(), "sizes.cc")
			require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
			args := append(append([]string{}, cc[1:]...), "-fsyntax-only", "-I", include, file)
			out, err := exec.Command(cc[0], args...).CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
}
