// The reference: the same model under TFLM's MicroInterpreter on the same
// board (startup.c, an547.ld), with TFLM's own memory planner, for `make
// measure`. It prints arena_used_bytes and the same output lines as main.c
// (harness.c), so its outputs compare with tflm_run_m55's as well.
//
// The model is the original .tflite, linked in by model_data.S; the op
// resolver registers only the model's operators (resolver.inc, from
// resolver.py), as a firmware would.
#include <cstdint>
#include <cstdio>

#include "harness.h"
#include "resolver.inc"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

#ifndef TF_LITE_STATIC_MEMORY
#error "TFLM's libraries are built with TF_LITE_STATIC_MEMORY"
#endif

#ifndef REF_ARENA_BYTES
#define REF_ARENA_BYTES (16u << 20)
#endif

extern "C" const unsigned char model_tflite[];

namespace {

// The arena lives in DDR (.ddr_bss, not part of the flash image): RAM is
// measured as what TFLM uses of it, arena_used_bytes.
alignas(16) uint8_t arena[REF_ARENA_BYTES] __attribute__((section(".ddr_bss")));

bool AddOps(tflite::MicroMutableOpResolver<REF_OP_COUNT>& r) { REF_ADD_OPS(r); }

// SchemaType is t's element type numbered as the schema's TensorType, as
// harness_fill takes it; integer types all fill as raw bytes.
int SchemaType(TfLiteType t) {
  switch (t) {
    case kTfLiteFloat32: return HARNESS_TYPE_FLOAT32;
    case kTfLiteFloat16: return HARNESS_TYPE_FLOAT16;
    case kTfLiteString: return HARNESS_TYPE_STRING;
    case kTfLiteBool: return HARNESS_TYPE_BOOL;
    case kTfLiteComplex64: return HARNESS_TYPE_COMPLEX64;
    case kTfLiteFloat64: return HARNESS_TYPE_FLOAT64;
    case kTfLiteComplex128: return HARNESS_TYPE_COMPLEX128;
    case kTfLiteResource: return HARNESS_TYPE_RESOURCE;
    case kTfLiteVariant: return HARNESS_TYPE_VARIANT;
    case kTfLiteBFloat16: return HARNESS_TYPE_BFLOAT16;
    default: return -1;  // raw bytes
  }
}

}  // namespace

int main() {
  struct harness_options o = harness_options();
  static tflite::MicroMutableOpResolver<REF_OP_COUNT> resolver;
  if (!AddOps(resolver)) {
    printf("status=error\nerror=op resolver\n");
    return 1;
  }
  // Resource variables as tflm_run sets them up: one per VAR_HANDLE
  // operator, from the arena's tail, when the model has any.
  tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(arena, sizeof arena);
  tflite::MicroResourceVariables* variables =
      REF_VAR_HANDLES > 0 ? tflite::MicroResourceVariables::Create(allocator, REF_VAR_HANDLES)
                          : nullptr;
  static tflite::MicroInterpreter interpreter(tflite::GetModel(model_tflite), resolver, allocator,
                                              variables);
  if (interpreter.AllocateTensors() != kTfLiteOk) {
    printf("status=error\nerror=AllocateTensors failed\n");
    return 1;
  }
  printf("status=ok\narena_used_bytes=%u\nseed=%lu\ninvokes=%d\ninputs=%u\noutputs=%u\n",
         static_cast<unsigned>(interpreter.arena_used_bytes()),
         static_cast<unsigned long>(o.seed), o.invokes,
         static_cast<unsigned>(interpreter.inputs_size()),
         static_cast<unsigned>(interpreter.outputs_size()));
  uint64_t digest = HARNESS_FNV_OFFSET;
  for (int k = 0; k < o.invokes; ++k) {
    for (size_t i = 0; i < interpreter.inputs_size(); ++i) {
      TfLiteTensor* t = interpreter.input(i);
      uint64_t g = harness_input_stream(o.seed, k, i);
      if (t != nullptr && t->data.raw != nullptr) {
        harness_fill(SchemaType(t->type), reinterpret_cast<uint8_t*>(t->data.raw), t->bytes, &g,
                     o.range);
      }
    }
    if (interpreter.Invoke() != kTfLiteOk) {
      printf("invoke.%d=error\nerror=Invoke failed\n", k);
      return 1;
    }
    printf("invoke.%d=ok\n", k);
    for (size_t i = 0; i < interpreter.outputs_size(); ++i) {
      TfLiteTensor* t = interpreter.output(i);
      harness_output(k, i, t ? t->data.raw : nullptr, t && t->data.raw ? t->bytes : 0,
                     t ? TfLiteTypeGetName(t->type) : "NOTYPE", &digest);
    }
  }
  harness_digest(digest);
  return 0;
}
