// backend_tflm.cc: the harness's TFLM backend (harness.h): the model, as
// the C array heliac writes (<prefix>.tflite.h/.c, emit.TFLiteC), run by
// TFLM's own MicroInterpreter with TFLM's planner in one arena, the way a
// firmware uses TFLM. It checks the harness against tflm_run, and is the
// TFLM side of the Cortex-M55 flash and RAM comparison.
//
// Build (host): g++ -std=c++17 -fno-rtti -fno-exceptions
//   -DTF_LITE_STATIC_MEMORY -I ../shared/tflm/include -I <module dir>
//   -DHELIAC_PREFIX=<prefix> [-DHARNESS_TFLM_ARENA_BYTES=N]
//   [-DHARNESS_TFLM_OPS='"ops.h"'] backend_tflm.cc harness.c debug_log.c
//   <prefix>.tflite.c ../shared/tflm/lib/host-x86_64/libtflm.a -lm
//
//   HELIAC_PREFIX             the C module's prefix: the model array is
//                             <prefix>_tflite, declared in
//                             HELIAC_TFLITE_HEADER (default "<prefix>.tflite.h")
//   HARNESS_TFLM_ARENA_BYTES  the tensor arena (default 32 MiB); it is
//                             filled from the fill seed's stream first
//   HARNESS_TFLM_OPS          a header defining
//                             void harness_add_ops(tflite::MicroMutableOpResolver<HARNESS_TFLM_MAX_OPS>&)
//                             that registers only the model's operators (a
//                             firmware's build); default every operator
//                             TFLM has, as tflm_run registers them
//
// Resource variables are set up as tflm_run does: one slot per VAR_HANDLE
// operator, from the arena, when the model has any.
#include <cstdint>
#include <cstring>

#include "tensorflow/compiler/mlir/lite/schema/schema_utils.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"

#include "debug_log.h"
#include "harness.h"

#ifndef TF_LITE_STATIC_MEMORY
#error "TFLM's libraries are built with TF_LITE_STATIC_MEMORY: define it"
#endif

#define HARNESS_CAT_(a, b) a##b
#define HARNESS_CAT(a, b) HARNESS_CAT_(a, b)
#define HARNESS_STR_(x) #x
#define HARNESS_STR(x) HARNESS_STR_(x)
#ifndef HELIAC_TFLITE_HEADER
#define HELIAC_TFLITE_HEADER HARNESS_STR(HELIAC_PREFIX.tflite.h)
#endif
#include HELIAC_TFLITE_HEADER
#define MODEL_DATA HARNESS_CAT(HELIAC_PREFIX, _tflite)

#ifndef HARNESS_TFLM_ARENA_BYTES
#define HARNESS_TFLM_ARENA_BYTES (32u << 20)
#endif
#ifndef HARNESS_TFLM_MAX_OPS
#define HARNESS_TFLM_MAX_OPS 128
#endif

using Resolver = tflite::MicroMutableOpResolver<HARNESS_TFLM_MAX_OPS>;

#ifdef HARNESS_TFLM_OPS
#include HARNESS_TFLM_OPS
#else
namespace {
// Every builtin and signal-library operator of TFLM's reference build.
void harness_add_ops(Resolver &r) {
  r.AddAbs(); r.AddAdd(); r.AddAddN(); r.AddArgMax(); r.AddArgMin();
  r.AddAssignVariable(); r.AddAveragePool2D(); r.AddBatchMatMul();
  r.AddBatchToSpaceNd(); r.AddBroadcastArgs(); r.AddBroadcastTo();
  r.AddCallOnce(); r.AddCast(); r.AddCeil(); r.AddCircularBuffer();
  r.AddConcatenation(); r.AddConv2D(); r.AddCos(); r.AddCumSum();
  r.AddDecode(); r.AddDelay(); r.AddDepthToSpace(); r.AddDepthwiseConv2D();
  r.AddDequantize(); r.AddDetectionPostprocess(); r.AddDiv();
  r.AddDynamicUpdateSlice(); r.AddElu(); r.AddEmbeddingLookup();
  r.AddEnergy(); r.AddEqual(); r.AddEthosU(); r.AddExp(); r.AddExpandDims();
  r.AddFftAutoScale(); r.AddFill(); r.AddFilterBank(); r.AddFilterBankLog();
  r.AddFilterBankSpectralSubtraction(); r.AddFilterBankSquareRoot();
  r.AddFloor(); r.AddFloorDiv(); r.AddFloorMod(); r.AddFramer();
  r.AddFullyConnected(); r.AddGather(); r.AddGatherNd(); r.AddGreater();
  r.AddGreaterEqual(); r.AddHardSwish(); r.AddIf(); r.AddIrfft();
  r.AddL2Normalization(); r.AddL2Pool2D(); r.AddLeakyRelu(); r.AddLess();
  r.AddLessEqual(); r.AddLog(); r.AddLogSoftmax(); r.AddLogicalAnd();
  r.AddLogicalNot(); r.AddLogicalOr(); r.AddLogistic(); r.AddMaxPool2D();
  r.AddMaximum(); r.AddMean(); r.AddMinimum(); r.AddMirrorPad(); r.AddMul();
  r.AddNeg(); r.AddNotEqual(); r.AddOverlapAdd(); r.AddPCAN(); r.AddPack();
  r.AddPad(); r.AddPadV2(); r.AddPrelu(); r.AddQuantize();
  r.AddReadVariable(); r.AddReduceAll(); r.AddReduceMax(); r.AddReduceMin();
  r.AddRelu(); r.AddRelu6(); r.AddReshape(); r.AddResizeBilinear();
  r.AddResizeNearestNeighbor(); r.AddReverseV2(); r.AddRfft(); r.AddRound();
  r.AddRsqrt(); r.AddSelectV2(); r.AddShape(); r.AddSin(); r.AddSlice();
  r.AddSoftmax(); r.AddSpaceToBatchNd(); r.AddSpaceToDepth(); r.AddSplit();
  r.AddSplitV(); r.AddSqrt(); r.AddSquare(); r.AddSquaredDifference();
  r.AddSqueeze(); r.AddStacker(); r.AddStridedSlice(); r.AddSub();
  r.AddSum(); r.AddSvdf(); r.AddTanh(); r.AddTranspose();
  r.AddTransposeConv(); r.AddUnidirectionalSequenceLSTM(); r.AddUnpack();
  r.AddVarHandle(); r.AddWhile(); r.AddWindow(); r.AddZerosLike();
}
}  // namespace
#endif

namespace {

alignas(16) uint8_t g_arena[HARNESS_TFLM_ARENA_BYTES];
tflite::MicroInterpreter *g_interpreter = nullptr;

// How many VAR_HANDLE operators the model's subgraphs have.
int CountVarHandles(const tflite::Model *model) {
  int n = 0;
  const auto *codes = model->operator_codes();
  const auto *subgraphs = model->subgraphs();
  for (size_t s = 0; codes != nullptr && subgraphs != nullptr && s < subgraphs->size(); ++s) {
    const auto *ops = subgraphs->Get(s)->operators();
    for (size_t o = 0; ops != nullptr && o < ops->size(); ++o) {
      const uint32_t c = ops->Get(o)->opcode_index();
      if (c < codes->size() &&
          tflite::GetBuiltinCode(codes->Get(c)) == tflite::BuiltinOperator_VAR_HANDLE) {
        ++n;
      }
    }
  }
  return n;
}

// The name tflm_run prints for a TfLiteType.
const char *TypeName(TfLiteType type) {
  switch (type) {
    case kTfLiteNoType: return "NOTYPE";
    case kTfLiteFloat32: return "FLOAT32";
    case kTfLiteUInt16: return "UINT16";
    case kTfLiteInt16: return "INT16";
    case kTfLiteInt32: return "INT32";
    case kTfLiteUInt32: return "UINT32";
    case kTfLiteUInt8: return "UINT8";
    case kTfLiteInt8: return "INT8";
    case kTfLiteInt64: return "INT64";
    case kTfLiteUInt64: return "UINT64";
    case kTfLiteBool: return "BOOL";
    case kTfLiteComplex64: return "COMPLEX64";
    case kTfLiteComplex128: return "COMPLEX128";
    case kTfLiteString: return "STRING";
    case kTfLiteFloat16: return "FLOAT16";
    case kTfLiteBFloat16: return "BFLOAT16";
    case kTfLiteFloat64: return "FLOAT64";
    case kTfLiteResource: return "RESOURCE";
    case kTfLiteVariant: return "VARIANT";
    case kTfLiteInt4: return "INT4";
    case kTfLiteInt2: return "INT2";
    case kTfLiteUInt4: return "UINT4";
    case kTfLiteFloat8E4M3FN: return "FLOAT8_E4M3FN";
    case kTfLiteFloat8E5M2: return "FLOAT8_E5M2";
  }
  return "UNKNOWN";
}

harness_tensor_t Describe(TfLiteTensor *t) {
  harness_tensor_t h = {nullptr, 0, "NOTYPE"};
  if (t != nullptr) {
    h.data = t->data.raw;
    h.bytes = t->bytes;
    h.type = TypeName(t->type);
  }
  return h;
}

}  // namespace

extern "C" int harness_backend_init(uint64_t fill_seed, const char **error) {
  harness_fill_arena(g_arena, sizeof(g_arena), fill_seed);
  harness_log_reset();
  const tflite::Model *model = tflite::GetModel(MODEL_DATA);
  static Resolver resolver;
  harness_add_ops(resolver);
  tflite::MicroAllocator *allocator = tflite::MicroAllocator::Create(g_arena, sizeof(g_arena));
  if (allocator == nullptr) {
    *error = "cannot create TFLM's allocator in the arena";
    return 1;
  }
  const int variables = CountVarHandles(model);
  tflite::MicroResourceVariables *rv =
      variables > 0 ? tflite::MicroResourceVariables::Create(allocator, variables) : nullptr;
  static tflite::MicroInterpreter interpreter(model, resolver, allocator, rv);
  if (interpreter.initialization_status() != kTfLiteOk || interpreter.AllocateTensors() != kTfLiteOk) {
    *error = harness_log();
    return 1;
  }
  g_interpreter = &interpreter;
  return 0;
}

extern "C" size_t harness_backend_input_count(void) { return g_interpreter->inputs_size(); }

extern "C" size_t harness_backend_output_count(void) { return g_interpreter->outputs_size(); }

extern "C" harness_tensor_t harness_backend_input(size_t i) { return Describe(g_interpreter->input(i)); }

extern "C" harness_tensor_t harness_backend_output(size_t i) { return Describe(g_interpreter->output(i)); }

extern "C" int harness_backend_invoke(const char **error) {
  harness_log_reset();
  if (g_interpreter->Invoke() != kTfLiteOk) {
    *error = harness_log();
    return 1;
  }
  return 0;
}
