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
/* The headers of the type-specialised registrations the runtime names where
 * the plan is for TFLM's CMSIS-NN kernels (emit/tflm_cmsisnn.go). */
#include "tensorflow/lite/micro/kernels/add.h"
#include "tensorflow/lite/micro/kernels/batch_matmul.h"
#include "tensorflow/lite/micro/kernels/conv.h"
#include "tensorflow/lite/micro/kernels/depthwise_conv.h"
#include "tensorflow/lite/micro/kernels/fully_connected.h"
#include "tensorflow/lite/micro/kernels/maximum_minimum.h"
#include "tensorflow/lite/micro/kernels/mul.h"
#include "tensorflow/lite/micro/kernels/pad.h"
#include "tensorflow/lite/micro/kernels/pooling.h"
#include "tensorflow/lite/micro/kernels/softmax.h"
#include "tensorflow/lite/micro/kernels/svdf.h"
#include "tensorflow/lite/micro/kernels/transpose.h"
#include "tensorflow/lite/micro/kernels/transpose_conv.h"
#pragma GCC diagnostic pop

#endif /* HARNESS_TFLM_PCH_H */
