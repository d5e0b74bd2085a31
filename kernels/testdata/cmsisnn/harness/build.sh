#!/usr/bin/env bash
# Regenerates ../requests.csv: the scratch requests TFLM's cmsis_nn kernels make, computed by
# CMSIS-NN's own *_get_buffer_size* functions (CMSIS-NN 4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae,
# the commit tflite-micro 90b983c pins in tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn_download.sh).
#
#   CMSISNN=/path/to/CMSIS-NN-at-that-commit ./build.sh
#
# The buffer-size sources are compiled with the host gcc six times:
#   variant none : no ARM_MATH_* macro          (Cortex-M0/M0+/M3)
#   variant dsp  : -DARM_MATH_DSP=1             (Cortex-M4/M7/M33: __ARM_FEATURE_DSP==1)
#   variant mve  : -DARM_MATH_DSP=1 + ARM_MATH_MVEI (Cortex-M55/M85: both features; see below)
# each for compiler gcc (as is) and "armclang" (emulated by -D__ARMCC_VERSION=6010050, the only
# way the size code looks at the compiler). Each build's global symbols get a prefix
# (<variant>_<compiler>_) so all six can be linked into one program with harness.c, which
# restates the TFLM side (which dimensions each kernel passes, when and in what order it asks).
# requests.csv keeps what TFLM builds by default: gcc, KERNELS_OPTIMIZED_FOR_SPEED.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CMSISNN="${CMSISNN:?set CMSISNN to a CMSIS-NN checkout at 4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

SRCS=(
  Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c
  Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s16.c
  Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s4.c
  Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c
  Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s16.c
  Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s4.c
  Source/ConvolutionFunctions/arm_transpose_conv_get_buffer_sizes_s8.c
  Source/FullyConnectedFunctions/arm_fully_connected_get_buffer_sizes_s8.c
  Source/FullyConnectedFunctions/arm_fully_connected_get_buffer_sizes_s16.c
  Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c
  Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s16.c
  Source/SVDFunctions/arm_svdf_get_buffer_sizes_s8.c
)

declare -A VFLAGS=(
  [none]=""
  [dsp]="-DARM_MATH_DSP=1"
  [mve]="-DARM_MATH_DSP=1 -DHARNESS_MVEI=1"
)
declare -A CFLAGS_C=(
  [gcc]=""
  [armclang]="-D__ARMCC_VERSION=6010050"
)

# -Wno-implicit-function-declaration: unused static-inline DSP helpers in arm_nnsupportfunctions.h
# name Arm intrinsics; they are never emitted (checked below: no undefined symbols remain).
COMMON="-std=c99 -O1 -fno-stack-protector -fno-pic -Wall -Wno-implicit-function-declaration -I$CMSISNN/Include"
for v in none dsp mve; do
  for c in gcc armclang; do
    tag="${v}_${c}"
    objs=()
    for s in "${SRCS[@]}"; do
      o="$OUT/${tag}_$(basename "$s" .c).o"
      # ARM_MATH_MVEI is defined only AFTER the (include-guarded) CMSIS-NN headers were read: the
      # headers' MVEI-only parts are inline-asm/intrinsic helpers (arm_nnsupportfunctions.h:1223,
      # 1743, 1770) that a host compiler cannot parse, and they declare nothing the size code uses.
      # The size source itself is then compiled with ARM_MATH_MVEI defined.
      w="$OUT/${tag}_$(basename "$s" .c)_tu.c"
      {
        echo '#include "arm_nnfunctions.h"'
        echo '#include "arm_nnsupportfunctions.h"'
        echo '#include "Internal/arm_nn_compiler.h"'
        echo '#if defined(HARNESS_MVEI)'
        echo '#define ARM_MATH_MVEI 1'
        echo '#endif'
        echo "#include \"$CMSISNN/$s\""
      } > "$w"
      # shellcheck disable=SC2086
      gcc $COMMON ${VFLAGS[$v]} ${CFLAGS_C[$c]} -c "$w" -o "$o"
      objs+=("$o")
    done
    ld -r -o "$OUT/${tag}.o" "${objs[@]}"
    if [ -n "$(nm -u "$OUT/${tag}.o")" ]; then
      echo "undefined symbols in $tag:" >&2; nm -u "$OUT/${tag}.o" >&2; exit 1
    fi
    nm --defined-only -g "$OUT/${tag}.o" | awk -v p="${tag}_" '{print $3" "p$3}' > "$OUT/${tag}.syms"
    objcopy --redefine-syms="$OUT/${tag}.syms" "$OUT/${tag}.o" "$OUT/${tag}_pfx.o"
  done
done

gcc -std=c99 -O1 -Wall -Wextra -I"$CMSISNN/Include" "$HERE/harness.c" "$OUT"/*_pfx.o -o "$OUT/harness"
"$OUT/harness" check | tail -3 >&2
"$OUT/harness" tflm | awk -F, -v OFS=, '
  NR == 1 { print "op", "types", "variant", "case", "params", "requests", "note"; next }
  $4 == "gcc" && ($5 == "any" || $5 == "SPEED") { print $1, $2, $3, $6, $7, $8, $10 }
' > "$HERE/../requests.csv"
echo "$(($(wc -l < "$HERE/../requests.csv") - 1)) rows in requests.csv"
