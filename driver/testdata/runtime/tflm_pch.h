/*
 * tflm_pch.h: every header heliac's runtime (<prefix>.tflm.cc, emit/c_tflm.go
 * and emit/tflm_ops.go) and backend_tflm.cc include, so that one precompiled
 * header serves them all. The tests compile it once per run, with exactly the
 * flags of the code that uses it (g++ -x c++-header), and pass
 * -include tflm_pch.h -Winvalid-pch to every C++ compile: parsing TFLM's
 * headers is most of a runtime's compile time. Nothing needs it: without the
 * .gch, each source still includes what it uses.
 */
#ifndef HARNESS_TFLM_PCH_H
#define HARNESS_TFLM_PCH_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "signal/micro/kernels/irfft.h"
#include "signal/micro/kernels/rfft.h"
#include "tensorflow/compiler/mlir/lite/schema/schema_utils.h"
#include "tensorflow/lite/c/builtin_op_data.h"
#include "tensorflow/lite/c/common.h"
#include "tensorflow/lite/micro/kernels/micro_ops.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_common.h"
#include "tensorflow/lite/micro/micro_context.h"
#include "tensorflow/lite/micro/micro_graph.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_resource_variable.h"
#include "tensorflow/lite/schema/schema_generated.h"
#pragma GCC diagnostic pop

#endif /* HARNESS_TFLM_PCH_H */
