/*
 * Host harness: calls the CMSIS-NN *_get_buffer_size* functions (compiled six times by build.sh,
 * symbols prefixed <variant>_<compiler>_) and prints CSV.
 *
 *   harness raw    -> expected.csv       function,variant,compiler,case,path,params,bytes
 *   harness tflm   -> expected_tflm.csv  ordered scratch requests of the TFLM cmsis_nn kernels
 *   harness check  -> compares the explicit host-callable *_dsp / *_mve functions (taken from the
 *                     'none' build) with the generic function compiled for that variant.
 *
 * Only CMSIS-NN's public type header is included; the TFLM-side logic (which dims are passed, the
 * conditions and order of requests) is re-stated here from reading the kernels (tensorflow/lite/micro/
 * kernels/cmsis_nn at tflite-micro 90b983c); kernels/cmsisnn.go cites the lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm_nn_types.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

typedef const cmsis_nn_conv_params CP;
typedef const cmsis_nn_dw_conv_params DWP;
typedef const cmsis_nn_transpose_conv_params TCP;
typedef const cmsis_nn_dims D;

/* generic (variant chosen by macros at compile time) */
#define GENERIC(X)                                                                   \
    X(arm_convolve_wrapper_s8_get_buffer_size, (CP *, D *, D *, D *))                \
    X(arm_convolve_s8_get_buffer_size, (D *, D *))                                   \
    X(arm_convolve_1x1_s8_fast_get_buffer_size, (D *))                               \
    X(arm_convolve_1_x_n_s8_get_buffer_size, (CP *, D *, D *, D *))                  \
    X(arm_convolve_wrapper_s16_get_buffer_size, (CP *, D *, D *, D *))               \
    X(arm_convolve_s16_get_buffer_size, (D *, D *))                                  \
    X(arm_convolve_wrapper_s4_get_buffer_size, (CP *, D *, D *, D *))                \
    X(arm_convolve_s4_get_buffer_size, (D *, D *))                                   \
    X(arm_depthwise_conv_wrapper_s8_get_buffer_size, (DWP *, D *, D *, D *))         \
    X(arm_depthwise_conv_s8_opt_get_buffer_size, (D *, D *))                         \
    X(arm_depthwise_conv_wrapper_s4_get_buffer_size, (DWP *, D *, D *, D *))         \
    X(arm_depthwise_conv_wrapper_s16_get_buffer_size, (DWP *, D *, D *, D *))        \
    X(arm_depthwise_conv_fast_s16_get_buffer_size, (D *, D *))                       \
    X(arm_transpose_conv_s8_get_buffer_size, (TCP *, D *, D *, D *))                 \
    X(arm_transpose_conv_s8_get_reverse_conv_buffer_size, (TCP *, D *, D *))         \
    X(arm_fully_connected_s8_get_buffer_size, (D *))                                 \
    X(arm_fully_connected_s16_get_buffer_size, (D *))                                \
    X(arm_avgpool_s8_get_buffer_size, (const int, const int))                        \
    X(arm_avgpool_s16_get_buffer_size, (const int, const int))                       \
    X(arm_svdf_s8_get_buffer_size, (D *))

/* explicit host-callable variants */
#define EXPLICIT(X)                                                                  \
    X(arm_convolve_wrapper_s8_get_buffer_size_dsp, (CP *, D *, D *, D *))            \
    X(arm_convolve_wrapper_s8_get_buffer_size_mve, (CP *, D *, D *, D *))            \
    X(arm_convolve_wrapper_s16_get_buffer_size_dsp, (CP *, D *, D *, D *))           \
    X(arm_convolve_wrapper_s16_get_buffer_size_mve, (CP *, D *, D *, D *))           \
    X(arm_convolve_wrapper_s4_get_buffer_size_dsp, (CP *, D *, D *, D *))            \
    X(arm_convolve_wrapper_s4_get_buffer_size_mve, (CP *, D *, D *, D *))            \
    X(arm_depthwise_conv_wrapper_s8_get_buffer_size_dsp, (DWP *, D *, D *, D *))     \
    X(arm_depthwise_conv_wrapper_s8_get_buffer_size_mve, (DWP *, D *, D *, D *))     \
    X(arm_depthwise_conv_wrapper_s4_get_buffer_size_dsp, (DWP *, D *, D *, D *))     \
    X(arm_depthwise_conv_wrapper_s4_get_buffer_size_mve, (DWP *, D *, D *, D *))     \
    X(arm_depthwise_conv_wrapper_s16_get_buffer_size_dsp, (DWP *, D *, D *, D *))    \
    X(arm_depthwise_conv_wrapper_s16_get_buffer_size_mve, (DWP *, D *, D *, D *))    \
    X(arm_transpose_conv_s8_get_buffer_size_mve, (TCP *, D *, D *, D *))             \
    X(arm_fully_connected_s8_get_buffer_size_dsp, (D *))                             \
    X(arm_fully_connected_s8_get_buffer_size_mve, (D *))                             \
    X(arm_fully_connected_s16_get_buffer_size_dsp, (D *))                            \
    X(arm_fully_connected_s16_get_buffer_size_mve, (D *))                            \
    X(arm_avgpool_s8_get_buffer_size_dsp, (const int, const int))                    \
    X(arm_avgpool_s8_get_buffer_size_mve, (const int, const int))                    \
    X(arm_avgpool_s16_get_buffer_size_dsp, (const int, const int))                   \
    X(arm_avgpool_s16_get_buffer_size_mve, (const int, const int))                   \
    X(arm_svdf_s8_get_buffer_size_dsp, (D *))                                        \
    X(arm_svdf_s8_get_buffer_size_mve, (D *))

#define ALLF(X) GENERIC(X) EXPLICIT(X)

#define X_DECL(name, args) extern int32_t CAT(PFX, name) args;
#define PFX none_gcc_
ALLF(X_DECL)
#undef PFX
#define PFX dsp_gcc_
ALLF(X_DECL)
#undef PFX
#define PFX mve_gcc_
ALLF(X_DECL)
#undef PFX
#define PFX none_armclang_
ALLF(X_DECL)
#undef PFX
#define PFX dsp_armclang_
ALLF(X_DECL)
#undef PFX
#define PFX mve_armclang_
ALLF(X_DECL)
#undef PFX

typedef struct
{
    const char *variant;
    const char *compiler;
#define X_FIELD(name, args) int32_t(*name) args;
    ALLF(X_FIELD)
} api_t;

#define X_INIT(name, args) CAT(PFX, name),
static const api_t APIS[6] = {
#define PFX none_gcc_
    {"none", "gcc", ALLF(X_INIT)},
#undef PFX
#define PFX dsp_gcc_
    {"dsp", "gcc", ALLF(X_INIT)},
#undef PFX
#define PFX mve_gcc_
    {"mve", "gcc", ALLF(X_INIT)},
#undef PFX
#define PFX none_armclang_
    {"none", "armclang", ALLF(X_INIT)},
#undef PFX
#define PFX dsp_armclang_
    {"dsp", "armclang", ALLF(X_INIT)},
#undef PFX
#define PFX mve_armclang_
    {"mve", "armclang", ALLF(X_INIT)},
#undef PFX
};

/* ------------------------------------------------------------------------------------------ */
/* TFLM-style output size / padding (tensorflow/lite/kernels/padding.h semantics, restated).   */
enum
{
    VALID = 0,
    SAME = 1
};
static void out_pad(int in, int f, int s, int d, int same, int *out, int *pad)
{
    const int eff = (f - 1) * d + 1;
    const int o = same ? (in + s - 1) / s : (in + s - eff) / s;
    int total = (o - 1) * s + eff - in;
    if (total < 0)
        total = 0;
    *out = o;
    *pad = total / 2;
}

/* ------------------------------------------------------------------------------------------ */
/* Conv cases                                                                                  */
typedef struct
{
    const char *name;
    int n, ih, iw, ic, fh, fw, fc, oc, sh, sw, dh, dw, same;
} conv_case_t;

static const conv_case_t CONV[] = {
    /* name                n  ih  iw  ic fh fw fc  oc sh sw dh dw same */
    {"gen_3x3_c3", 1, 16, 16, 3, 3, 3, 3, 8, 1, 1, 1, 1, SAME},
    {"gen_3x3_c5", 1, 16, 16, 5, 3, 3, 5, 8, 1, 1, 1, 1, SAME},
    {"gen_3x3_c16", 1, 16, 16, 16, 3, 3, 16, 32, 1, 1, 1, 1, SAME},
    {"gen_3x3_c17_s2", 1, 15, 15, 17, 3, 3, 17, 8, 2, 2, 1, 1, SAME},
    {"gen_5x5_c8_valid_s2", 1, 20, 20, 8, 5, 5, 8, 4, 2, 2, 1, 1, VALID},
    {"gen_3x3_c32_b2", 2, 8, 8, 32, 3, 3, 32, 16, 1, 1, 1, 1, SAME},
    {"gen_7x1_c1", 1, 49, 10, 1, 7, 1, 1, 8, 1, 1, 1, 1, SAME},
    {"1x1_s1_c3", 1, 8, 8, 3, 1, 1, 3, 16, 1, 1, 1, 1, VALID},
    {"1x1_s1_c5", 1, 8, 8, 5, 1, 1, 5, 16, 1, 1, 1, 1, SAME},
    {"1x1_s1_c17", 1, 8, 8, 17, 1, 1, 17, 16, 1, 1, 1, 1, VALID},
    {"1x1_s1_c64", 1, 7, 7, 64, 1, 1, 64, 128, 1, 1, 1, 1, VALID},
    {"1x1_s2_c16", 1, 8, 8, 16, 1, 1, 16, 32, 2, 2, 1, 1, VALID},
    {"1x1_s2_c5_same", 1, 9, 9, 5, 1, 1, 5, 8, 2, 2, 1, 1, SAME},
    {"1x1_grouped_c16_g2", 1, 8, 8, 16, 1, 1, 8, 16, 1, 1, 1, 1, VALID},
    {"1xN_fw3_c4_same", 1, 1, 32, 4, 1, 3, 4, 8, 1, 1, 1, 1, SAME},
    {"1xN_fw3_c8_valid", 1, 1, 32, 8, 1, 3, 8, 8, 1, 1, 1, 1, VALID},
    {"1xN_fw5_c16_s2_same", 1, 1, 32, 16, 1, 5, 16, 8, 2, 2, 1, 1, SAME},
    {"1xN_fw4_c4_s1_same_asym", 1, 1, 10, 4, 1, 4, 4, 4, 1, 1, 1, 1, SAME},
    {"1xN_fw3_c2_s2_same", 1, 1, 16, 2, 1, 3, 2, 4, 2, 2, 1, 1, SAME},
    {"1xN_fw3_c5_not1xN", 1, 1, 32, 5, 1, 3, 5, 8, 1, 1, 1, 1, SAME},
    {"1xN_fw3_c4_w1_mvefallback", 1, 1, 1, 4, 1, 3, 4, 8, 1, 1, 1, 1, SAME},
    {"1xN_fw3_c4_dilw2", 1, 1, 32, 4, 1, 3, 4, 8, 1, 1, 1, 2, SAME},
    {"dil2_3x3_c8", 1, 16, 16, 8, 3, 3, 8, 8, 1, 1, 2, 2, SAME},
    {"dil2_1x1_c8", 1, 8, 8, 8, 1, 1, 8, 8, 1, 1, 2, 2, VALID},
    {"dil2_3x3_c3_valid", 1, 16, 16, 3, 3, 3, 3, 4, 1, 1, 2, 2, VALID},
};
#define NCONV (sizeof(CONV) / sizeof(CONV[0]))

static void conv_setup(const conv_case_t *c, cmsis_nn_conv_params *cp, cmsis_nn_dims *in, cmsis_nn_dims *f,
                       cmsis_nn_dims *out)
{
    int oh, ow, ph, pw;
    out_pad(c->ih, c->fh, c->sh, c->dh, c->same, &oh, &ph);
    out_pad(c->iw, c->fw, c->sw, c->dw, c->same, &ow, &pw);
    memset(cp, 0, sizeof(*cp));
    cp->input_offset = 128; /* -zero_point; does not influence any size function */
    cp->output_offset = -128;
    cp->stride.h = c->sh;
    cp->stride.w = c->sw;
    cp->dilation.h = c->dh;
    cp->dilation.w = c->dw;
    cp->padding.h = ph;
    cp->padding.w = pw;
    cp->activation.min = -128;
    cp->activation.max = 127;
    /* exactly as tflite/micro/kernels/cmsis_nn/conv.cc Prepare fills them */
    *in = (cmsis_nn_dims){c->n, c->ih, c->iw, c->ic};
    *f = (cmsis_nn_dims){1, c->fh, c->fw, c->fc};
    *out = (cmsis_nn_dims){c->n, oh, ow, c->oc};
}

static void conv_params_str(const conv_case_t *c, char *buf, size_t len)
{
    cmsis_nn_conv_params cp;
    cmsis_nn_dims in, f, out;
    conv_setup(c, &cp, &in, &f, &out);
    snprintf(buf, len,
             "n=%d;ih=%d;iw=%d;ic=%d;fh=%d;fw=%d;fc=%d;oh=%d;ow=%d;oc=%d;sh=%d;sw=%d;ph=%d;pw=%d;dh=%d;dw=%d;padding=%s",
             in.n, in.h, in.w, in.c, f.h, f.w, f.c, out.h, out.w, out.c, cp.stride.h, cp.stride.w, cp.padding.h,
             cp.padding.w, cp.dilation.h, cp.dilation.w, c->same ? "SAME" : "VALID");
}

/* which kernel arm_convolve_wrapper_s8/s4 runs (restated dispatch, for the 'path' column) */
static const char *conv_path(const cmsis_nn_conv_params *cp, const cmsis_nn_dims *in, const cmsis_nn_dims *f)
{
    const int is1x1 = cp->padding.w == 0 && cp->padding.h == 0 && f->w == 1 && f->h == 1 && cp->dilation.w == 1 &&
        cp->dilation.h == 1 && in->c == f->c;
    if (is1x1)
        return (cp->stride.w == 1 && cp->stride.h == 1) ? "1x1_fast" : "1x1";
    if (in->h == 1 && cp->dilation.w == 1 && f->h == 1 && (cp->stride.w * in->c) % 4 == 0 && in->c == f->c)
        return "1xN";
    return "general";
}

/* ------------------------------------------------------------------------------------------ */
/* Depthwise cases                                                                             */
typedef struct
{
    const char *name;
    int n, ih, iw, ic, mult, fh, fw, sh, sw, dh, dw, same;
    int pad_override; /* -1: computed; >=0: force padding.h = padding.w = value (not reachable from TFLM) */
} dw_case_t;

static const dw_case_t DW[] = {
    /* name                    n ih iw  ic mult fh fw sh sw dh dw same pad */
    {"m1_3x3_c8_same", 1, 16, 16, 8, 1, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"m1_3x3_c8_valid", 1, 16, 16, 8, 1, 3, 3, 1, 1, 1, 1, VALID, -1},
    {"m1_3x3_c17_s2_same", 1, 16, 16, 17, 1, 3, 3, 2, 2, 1, 1, SAME, -1},
    {"m1_3x3_c3_pad2_forced", 1, 16, 16, 3, 1, 3, 3, 1, 1, 1, 1, VALID, 2},
    {"m1_5x5_c8_same", 1, 16, 16, 8, 1, 5, 5, 1, 1, 1, 1, SAME, -1},
    {"m1_5x5_c3_valid", 1, 16, 16, 3, 1, 5, 5, 1, 1, 1, 1, VALID, -1},
    {"m1_7x7_c17_same", 1, 14, 14, 17, 1, 7, 7, 1, 1, 1, 1, SAME, -1},
    {"m1_3x3_c200_same", 1, 8, 8, 200, 1, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"m1_1x1_c32", 1, 8, 8, 32, 1, 1, 1, 1, 1, 1, 1, VALID, -1},
    {"m1_3x3_c8_dil2", 1, 16, 16, 8, 1, 3, 3, 1, 1, 2, 2, SAME, -1},
    {"m1_5x5_c8_batch2", 2, 16, 16, 8, 1, 5, 5, 1, 1, 1, 1, SAME, -1},
    {"m2_3x3_c8", 1, 16, 16, 8, 2, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"m4_5x5_c5", 1, 16, 16, 5, 4, 5, 5, 1, 1, 1, 1, SAME, -1},
    {"c1_m1_3x3", 1, 16, 16, 1, 1, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m2_3x3", 1, 16, 16, 1, 2, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m8_3x3", 1, 16, 16, 1, 8, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m9_3x3", 1, 16, 16, 1, 9, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m16_3x3", 1, 16, 16, 1, 16, 3, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m16_1x1", 1, 16, 16, 1, 16, 1, 1, 1, 1, 1, 1, VALID, -1},
    {"c1_m32_5x5_s2", 1, 32, 32, 1, 32, 5, 5, 2, 2, 1, 1, SAME, -1},
    {"c1_m16_h1_1x3_s1", 1, 1, 32, 1, 16, 1, 3, 1, 1, 1, 1, SAME, -1},
    {"c1_m16_h1_1x3_s4", 1, 1, 32, 1, 16, 1, 3, 4, 4, 1, 1, SAME, -1},
};
#define NDW (sizeof(DW) / sizeof(DW[0]))

static void dw_setup(const dw_case_t *c, cmsis_nn_dw_conv_params *p, cmsis_nn_dims *in, cmsis_nn_dims *f,
                     cmsis_nn_dims *out)
{
    int oh, ow, ph, pw;
    out_pad(c->ih, c->fh, c->sh, c->dh, c->same, &oh, &ph);
    out_pad(c->iw, c->fw, c->sw, c->dw, c->same, &ow, &pw);
    if (c->pad_override >= 0)
        ph = pw = c->pad_override;
    memset(p, 0, sizeof(*p));
    /* TFLM's depthwise Prepare sets ONLY padding and dilation; stride, ch_mult, offsets and
       activation are left uninitialised. Here they get the values Eval would use. */
    p->padding.h = ph;
    p->padding.w = pw;
    p->dilation.h = c->dh;
    p->dilation.w = c->dw;
    p->stride.h = c->sh;
    p->stride.w = c->sw;
    p->ch_mult = c->mult;
    p->input_offset = 128;
    p->output_offset = -128;
    p->activation.min = -128;
    p->activation.max = 127;
    *in = (cmsis_nn_dims){c->n, c->ih, c->iw, c->ic};
    *f = (cmsis_nn_dims){1, c->fh, c->fw, c->ic * c->mult};
    *out = (cmsis_nn_dims){c->n, oh, ow, c->ic * c->mult};
}

static void dw_params_str(const dw_case_t *c, char *buf, size_t len)
{
    cmsis_nn_dw_conv_params p;
    cmsis_nn_dims in, f, out;
    dw_setup(c, &p, &in, &f, &out);
    snprintf(buf, len,
             "n=%d;ih=%d;iw=%d;ic=%d;ch_mult=%d;fh=%d;fw=%d;oh=%d;ow=%d;oc=%d;sh=%d;sw=%d;ph=%d;pw=%d;dh=%d;dw=%d;padding=%s%s",
             in.n, in.h, in.w, in.c, c->mult, f.h, f.w, out.h, out.w, out.c, p.stride.h, p.stride.w, p.padding.h,
             p.padding.w, p.dilation.h, p.dilation.w, c->same ? "SAME" : "VALID",
             c->pad_override >= 0 ? ";pad_forced=1" : "");
}

static int dw_threshold(const char *compiler) { return strcmp(compiler, "armclang") == 0 ? 8 : 1; }

static const char *dw_s8_path(const api_t *a, const cmsis_nn_dw_conv_params *p, const cmsis_nn_dims *in,
                              const cmsis_nn_dims *f, const cmsis_nn_dims *out)
{
    const int mve = strcmp(a->variant, "mve") == 0;
    if (mve && in->c == 1 && out->c > dw_threshold(a->compiler))
        return "to_conv";
    if (p->ch_mult == 1 && in->n == 1 && p->dilation.w == 1 && p->dilation.h == 1)
    {
        if (!mve && f->w == 3 && f->h == 3 && p->padding.h <= 1 && p->padding.w <= 1)
            return "3x3";
        return "opt";
    }
    return "generic";
}

/* ------------------------------------------------------------------------------------------ */
/* Transpose conv cases (dims filled as tflite/micro/kernels/cmsis_nn/transpose_conv.cc Prepare) */
typedef struct
{
    const char *name;
    int n, ih, iw, ic, fh, fw, oc, sh, sw, same;
} tc_case_t;

static const tc_case_t TC[] = {
    {"c8_3x3_s2_same", 1, 8, 8, 8, 3, 3, 8, 2, 2, SAME},
    {"c16_4x4_s2_same", 1, 8, 8, 16, 4, 4, 8, 2, 2, SAME},
    {"c17_3x3_s2_same", 1, 8, 8, 17, 3, 3, 8, 2, 2, SAME},
    {"c32_3x3_s1_same", 1, 8, 8, 32, 3, 3, 16, 1, 1, SAME},
    {"c32_4x4_s2_same", 1, 8, 8, 32, 4, 4, 16, 2, 2, SAME},
    {"c32_3x3_s3_valid", 1, 8, 8, 32, 3, 3, 16, 3, 3, VALID},
    {"c64_2x2_s2_valid", 1, 4, 4, 64, 2, 2, 32, 2, 2, VALID},
    {"c3_5x5_s1_valid", 1, 10, 10, 3, 5, 5, 5, 1, 1, VALID},
    {"c24_3x3_s2x1_same", 1, 6, 10, 24, 3, 3, 4, 2, 1, SAME},
    {"c24_1x5_s1x3_same", 1, 6, 10, 24, 1, 5, 4, 1, 3, SAME},
    {"c8_3x1_s3x1_same_sh_gt_fw", 1, 6, 10, 8, 3, 1, 4, 3, 1, SAME},
};
#define NTC (sizeof(TC) / sizeof(TC[0]))

static void tc_setup(const tc_case_t *c, cmsis_nn_transpose_conv_params *p, cmsis_nn_dims *in, cmsis_nn_dims *f,
                     cmsis_nn_dims *out, int *ohp, int *owp)
{
    /* transpose conv output = input * stride for SAME, (input-1)*stride + filter for VALID */
    const int oh = c->same ? c->ih * c->sh : (c->ih - 1) * c->sh + c->fh;
    const int ow = c->same ? c->iw * c->sw : (c->iw - 1) * c->sw + c->fw;
    memset(p, 0, sizeof(*p));
    /* TFLM Prepare sets ONLY stride.w/stride.h; the size functions read nothing else. */
    p->stride.h = c->sh;
    p->stride.w = c->sw;
    *in = (cmsis_nn_dims){c->n, c->ih, c->iw, c->ic};
    *f = (cmsis_nn_dims){c->oc, c->fh, c->fw, c->ic};
    *out = (cmsis_nn_dims){c->n, oh, ow, c->oc};
    *ohp = oh;
    *owp = ow;
}

static void tc_params_str(const tc_case_t *c, char *buf, size_t len)
{
    cmsis_nn_transpose_conv_params p;
    cmsis_nn_dims in, f, out;
    int oh, ow;
    tc_setup(c, &p, &in, &f, &out, &oh, &ow);
    snprintf(buf, len, "n=%d;ih=%d;iw=%d;ic=%d;fh=%d;fw=%d;oh=%d;ow=%d;oc=%d;sh=%d;sw=%d;padding=%s", in.n, in.h,
             in.w, in.c, f.h, f.w, out.h, out.w, out.c, c->sh, c->sw, c->same ? "SAME" : "VALID");
}

/* ------------------------------------------------------------------------------------------ */
static const int FC_OUT[] = {1, 3, 10, 17, 64, 1000};
static const int FC1X1_ACCUM[] = {4, 16, 17, 64, 100, 1024};
static const int POOL[][2] = {{1, 8}, {7, 1}, {16, 3}, {4, 17}, {10, 64}, {1, 1280}};
static const int SVDF_NF[] = {1, 8, 64, 100};

static void row(const char *fn, const api_t *a, const char *cs, const char *path, const char *params, int32_t b)
{
    printf("%s,%s,%s,%s,%s,%s,%d\n", fn, a->variant, a->compiler, cs, path, params, (int)b);
}

/* armclang rows are printed only for the functions whose result can depend on the compiler
   (__ARMCC_VERSION in arm_convolve_get_buffer_sizes_s8.c:45 and arm_nnsupportfunctions.h:83).
   For all others the 'check' mode asserts gcc == armclang. */
static int want(const api_t *a, int compiler_dependent)
{
    return strcmp(a->compiler, "gcc") == 0 || compiler_dependent;
}

static void raw(void)
{
    char params[512];
    printf("function,variant,compiler,case,path,params,bytes\n");
    for (int ai = 0; ai < 6; ai++)
    {
        const api_t *a = &APIS[ai];
        for (size_t i = 0; i < NCONV; i++)
        {
            cmsis_nn_conv_params cp;
            cmsis_nn_dims in, f, out;
            conv_setup(&CONV[i], &cp, &in, &f, &out);
            conv_params_str(&CONV[i], params, sizeof(params));
            const char *path = conv_path(&cp, &in, &f);
            if (want(a, 1))
                row("arm_convolve_wrapper_s8_get_buffer_size", a, CONV[i].name, path, params,
                    a->arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out));
            if (want(a, 0))
            {
                row("arm_convolve_wrapper_s16_get_buffer_size", a, CONV[i].name, "general(s16)", params,
                    a->arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out));
                /* s4: MVE wrapper additionally runs arm_convolve_even_s4 when fh*fw*ic is even */
                const char *p4 = path;
                if (strcmp(path, "general") == 0 && strcmp(a->variant, "mve") == 0 &&
                    ((f.h * f.w * in.c) & 1) == 0)
                    p4 = "general_even_s4";
                row("arm_convolve_wrapper_s4_get_buffer_size", a, CONV[i].name, p4, params,
                    a->arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out));
            }
        }
        /* a few direct sub-function rows */
        for (size_t i = 0; i < NCONV; i++)
        {
            cmsis_nn_conv_params cp;
            cmsis_nn_dims in, f, out;
            conv_setup(&CONV[i], &cp, &in, &f, &out);
            conv_params_str(&CONV[i], params, sizeof(params));
            if (strncmp(CONV[i].name, "1xN", 3) == 0 && want(a, 0))
                row("arm_convolve_1_x_n_s8_get_buffer_size", a, CONV[i].name, "1xN(direct)", params,
                    a->arm_convolve_1_x_n_s8_get_buffer_size(&cp, &in, &f, &out));
            if (strncmp(CONV[i].name, "gen_", 4) == 0 && want(a, 0))
                row("arm_convolve_s8_get_buffer_size", a, CONV[i].name, "general(direct)", params,
                    a->arm_convolve_s8_get_buffer_size(&in, &f));
        }
        for (size_t i = 0; i < sizeof(FC1X1_ACCUM) / sizeof(FC1X1_ACCUM[0]); i++)
        {
            /* as fully_connected.cc Prepare fills it: n=batches, h=w=1, c=accum_depth */
            cmsis_nn_dims in = {2, 1, 1, FC1X1_ACCUM[i]};
            snprintf(params, sizeof(params), "n=%d;ic=%d", in.n, in.c);
            char cs[32];
            snprintf(cs, sizeof(cs), "c%d", in.c);
            if (want(a, 1))
                row("arm_convolve_1x1_s8_fast_get_buffer_size", a, cs, "1x1_fast(direct)", params,
                    a->arm_convolve_1x1_s8_fast_get_buffer_size(&in));
        }
        for (size_t i = 0; i < NDW; i++)
        {
            cmsis_nn_dw_conv_params p;
            cmsis_nn_dims in, f, out;
            dw_setup(&DW[i], &p, &in, &f, &out);
            dw_params_str(&DW[i], params, sizeof(params));
            if (want(a, 1))
                row("arm_depthwise_conv_wrapper_s8_get_buffer_size", a, DW[i].name, dw_s8_path(a, &p, &in, &f, &out),
                    params, a->arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &in, &f, &out));
            if (want(a, 0))
            {
                const int opt = p.ch_mult == 1 && in.n == 1 && p.dilation.w == 1 && p.dilation.h == 1;
                row("arm_depthwise_conv_wrapper_s4_get_buffer_size", a, DW[i].name, opt ? "opt" : "generic", params,
                    a->arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out));
                const int fast16 = p.ch_mult == 1 && p.dilation.w == 1 && p.dilation.h == 1 && f.w * f.h < 512;
                row("arm_depthwise_conv_wrapper_s16_get_buffer_size", a, DW[i].name, fast16 ? "fast_s16" : "s16",
                    params, a->arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out));
            }
        }
        if (want(a, 0))
        {
            /* s16 fast path limit fw*fh < 512 */
            cmsis_nn_dw_conv_params p = {0};
            p.ch_mult = 1;
            p.dilation.h = p.dilation.w = 1;
            p.stride.h = p.stride.w = 1;
            cmsis_nn_dims in = {1, 32, 32, 4}, f = {1, 23, 23, 4}, out = {1, 10, 10, 4};
            row("arm_depthwise_conv_wrapper_s16_get_buffer_size", a, "m1_23x23_c4_valid", "s16",
                "n=1;ih=32;iw=32;ic=4;ch_mult=1;fh=23;fw=23;oh=10;ow=10;oc=4;sh=1;sw=1;ph=0;pw=0;dh=1;dw=1;padding=VALID",
                a->arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out));
            f.h = 22;
            f.w = 23;
            out.h = 11;
            row("arm_depthwise_conv_wrapper_s16_get_buffer_size", a, "m1_22x23_c4_valid", "fast_s16",
                "n=1;ih=32;iw=32;ic=4;ch_mult=1;fh=22;fw=23;oh=11;ow=10;oc=4;sh=1;sw=1;ph=0;pw=0;dh=1;dw=1;padding=VALID",
                a->arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out));
        }
        for (size_t i = 0; i < NTC && want(a, 0); i++)
        {
            cmsis_nn_transpose_conv_params p;
            cmsis_nn_dims in, f, out;
            int oh, ow;
            tc_setup(&TC[i], &p, &in, &f, &out, &oh, &ow);
            tc_params_str(&TC[i], params, sizeof(params));
            const int rev = p.stride.w <= 2 && p.stride.h <= 2 && in.c > 16;
            row("arm_transpose_conv_s8_get_buffer_size", a, TC[i].name, rev ? "reverse_conv" : "col2im", params,
                a->arm_transpose_conv_s8_get_buffer_size(&p, &in, &f, &out));
            row("arm_transpose_conv_s8_get_reverse_conv_buffer_size", a, TC[i].name, rev ? "reverse_conv" : "col2im",
                params, a->arm_transpose_conv_s8_get_reverse_conv_buffer_size(&p, &in, &f));
        }
        for (size_t i = 0; i < sizeof(FC_OUT) / sizeof(FC_OUT[0]) && want(a, 0); i++)
        {
            /* fully_connected.cc: filter_dims = {n=accum_depth, h=1, w=1, c=output_depth} */
            cmsis_nn_dims f = {64, 1, 1, FC_OUT[i]};
            char cs[32];
            snprintf(cs, sizeof(cs), "out%d", FC_OUT[i]);
            snprintf(params, sizeof(params), "accum=%d;out_depth=%d", f.n, f.c);
            row("arm_fully_connected_s8_get_buffer_size", a, cs, "-", params,
                a->arm_fully_connected_s8_get_buffer_size(&f));
            row("arm_fully_connected_s16_get_buffer_size", a, cs, "-", params,
                a->arm_fully_connected_s16_get_buffer_size(&f));
        }
        for (size_t i = 0; i < sizeof(POOL) / sizeof(POOL[0]) && want(a, 0); i++)
        {
            char cs[32];
            snprintf(cs, sizeof(cs), "ow%d_c%d", POOL[i][0], POOL[i][1]);
            snprintf(params, sizeof(params), "out_w=%d;depth=%d", POOL[i][0], POOL[i][1]);
            row("arm_avgpool_s8_get_buffer_size", a, cs, "-", params,
                a->arm_avgpool_s8_get_buffer_size(POOL[i][0], POOL[i][1]));
            row("arm_avgpool_s16_get_buffer_size", a, cs, "-", params,
                a->arm_avgpool_s16_get_buffer_size(POOL[i][0], POOL[i][1]));
        }
        for (size_t i = 0; i < sizeof(SVDF_NF) / sizeof(SVDF_NF[0]) && want(a, 0); i++)
        {
            /* svdf.cc: weights_feature_dims.n = num_filters, .h = input_size (other fields unset) */
            cmsis_nn_dims f = {SVDF_NF[i], 40, 0, 0};
            char cs[32];
            snprintf(cs, sizeof(cs), "nf%d", SVDF_NF[i]);
            snprintf(params, sizeof(params), "num_filters=%d;input_size=%d", f.n, f.h);
            row("arm_svdf_s8_get_buffer_size", a, cs, "-", params, a->arm_svdf_s8_get_buffer_size(&f));
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* TFLM-level: ordered list of RequestScratchBufferInArena sizes                              */
typedef struct
{
    int n;
    int32_t b[8];
} reqs_t;
static void push(reqs_t *r, int32_t b) { r->b[r->n++] = b; }

static void trow(const char *op, const char *types, const api_t *a, const char *build, const char *cs,
                 const char *params, const reqs_t *r, const char *note)
{
    printf("%s,%s,%s,%s,%s,%s,%s,", op, types, a->variant, a->compiler, build, cs, params);
    for (int i = 0; i < r->n; i++)
        printf("%s%d", i ? "|" : "", (int)r->b[i]);
    printf(",%d,%s\n", r->n, note);
}

static void tflm(void)
{
    char params[512];
    printf("op,types,variant,compiler,build,case,params,requests,count,note\n");
    for (int ai = 0; ai < 6; ai++)
    {
        const api_t *a = &APIS[ai];
        const int mve = strcmp(a->variant, "mve") == 0;
        /* CONV_2D: conv.cc Prepare 45-180 */
        for (size_t i = 0; i < NCONV; i++)
        {
            cmsis_nn_conv_params cp;
            cmsis_nn_dims in, f, out;
            conv_setup(&CONV[i], &cp, &in, &f, &out);
            conv_params_str(&CONV[i], params, sizeof(params));
            reqs_t r = {0};
            int32_t s = a->arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out);
            if (s > 0)
                push(&r, s);
            trow("CONV_2D", "in=int8;filter=int8", a, "any", CONV[i].name, params, &r, "");
            /* int4 filter: TFLM still calls the s8 size function (conv.cc:154-156) */
            int32_t s4 = a->arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out);
            char note[96];
            snprintf(note, sizeof(note), "s4 wrapper itself would ask %d", (int)s4);
            trow("CONV_2D", "in=int8;filter=int4", a, "any", CONV[i].name, params, &r, note);
            reqs_t r16 = {0};
            s = a->arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out);
            if (s > 0)
                push(&r16, s);
            trow("CONV_2D", "in=int16;filter=int8", a, "any", CONV[i].name, params, &r16, "");
            reqs_t rf = {0};
            if (ai == 0)
                trow("CONV_2D", "in=float32;filter=float32", a, "any", CONV[i].name, params, &rf, "no request");
        }
        /* DEPTHWISE_CONV_2D: depthwise_conv.cc Prepare 58-201 */
        for (size_t i = 0; i < NDW; i++)
        {
            if (DW[i].pad_override >= 0)
                continue; /* not reachable from a TFLite model */
            cmsis_nn_dw_conv_params p;
            cmsis_nn_dims in, f, out;
            dw_setup(&DW[i], &p, &in, &f, &out);
            dw_params_str(&DW[i], params, sizeof(params));
            const char *note = "";
            if (mve && in.c == 1 && out.c > dw_threshold(a->compiler) && in.h == 1 && f.h == 1)
                note = "UNDEFINED in TFLM: size reads stride which Prepare leaves uninitialised (value shown uses the op stride)";
            else if (mve && in.c == 1 && out.c > dw_threshold(a->compiler))
                note = "to_conv path (reads uninitialised stride but result does not depend on it here)";
            reqs_t r = {0};
            int32_t s = a->arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &in, &f, &out);
            if (s > 0)
                push(&r, s);
            trow("DEPTHWISE_CONV_2D", "in=int8;filter=int8", a, "any", DW[i].name, params, &r, note);
            reqs_t r4 = {0};
            s = a->arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out);
            if (s > 0)
                push(&r4, s);
            trow("DEPTHWISE_CONV_2D", "in=int8;filter=int4", a, "any", DW[i].name, params, &r4, "");
            reqs_t r16 = {0};
            trow("DEPTHWISE_CONV_2D", "in=int16;filter=int8", a, "any", DW[i].name, params, &r16,
                 "no request; Eval calls arm_depthwise_conv_s16 with ctx.buf=NULL");
        }
        /* FULLY_CONNECTED: fully_connected.cc Prepare 54-188 */
        {
            struct
            {
                const char *name;
                int batches, accum, out_depth, out_rank, per_channel, const_w;
            } FC[] = {
                {"rank2_accum64_out10", 1, 64, 10, 2, 0, 1}, {"rank2_accum30_out17", 4, 30, 17, 2, 0, 1},
                {"rank2_accum64_out10_pc", 1, 64, 10, 2, 1, 1}, {"rank2_accum64_out10_nonconstW", 1, 64, 10, 2, 0, 0},
                {"rank3_accum64_out10", 5, 64, 10, 3, 0, 1},   {"rank3_accum64_out10_pc", 5, 64, 10, 3, 1, 1},
                {"rank3_accum30_out10", 5, 30, 10, 3, 0, 1},   {"rank4_accum100_out7", 6, 100, 7, 4, 0, 1},
            };
            for (size_t i = 0; i < sizeof(FC) / sizeof(FC[0]); i++)
            {
                snprintf(params, sizeof(params), "batches=%d;accum=%d;out_depth=%d;out_rank=%d;per_channel=%d;const_filter_and_bias=%d",
                         FC[i].batches, FC[i].accum, FC[i].out_depth, FC[i].out_rank, FC[i].per_channel, FC[i].const_w);
                cmsis_nn_dims fd = {FC[i].accum, 1, 1, FC[i].out_depth};
                const char *builds[2] = {"SPEED", "SIZE"};
                for (int b = 0; b < 2; b++)
                {
                    reqs_t r = {0};
                    const char *note = "";
                    if (FC[i].out_rank > 2 && FC[i].accum % 4 == 0)
                    {
                        if (!FC[i].per_channel)
                            push(&r, FC[i].out_depth * 8);
                        cmsis_nn_dims in = {FC[i].batches, 1, 1, FC[i].accum};
                        int32_t s = a->arm_convolve_1x1_s8_fast_get_buffer_size(&in);
                        if (s > 0)
                            push(&r, s);
                        note = "conv1x1 path";
                    }
                    else
                    {
                        int32_t s = a->arm_fully_connected_s8_get_buffer_size(&fd);
                        if (s > 0 && b == 0 && FC[i].const_w)
                        {
                            note = "kernel sums in persistent buffer instead";
                            s = 0;
                        }
                        if (s > 0)
                            push(&r, s);
                    }
                    trow("FULLY_CONNECTED", "in=int8;filter=int8", a, builds[b], FC[i].name, params, &r, note);
                }
                reqs_t r0 = {0};
                int32_t s16 = a->arm_fully_connected_s16_get_buffer_size(&fd);
                if (s16 > 0)
                    push(&r0, s16);
                trow("FULLY_CONNECTED", "in=int16;filter=int8", a, "any", FC[i].name, params, &r0, "");
                reqs_t r4 = {0};
                trow("FULLY_CONNECTED", "in=int8;filter=int4", a, "any", FC[i].name, params, &r4, "no request");
            }
        }
        /* AVERAGE_POOL_2D: pooling.cc AveragePrepare 160-197 */
        for (size_t i = 0; i < sizeof(POOL) / sizeof(POOL[0]); i++)
        {
            char cs[32];
            snprintf(cs, sizeof(cs), "ow%d_c%d", POOL[i][0], POOL[i][1]);
            snprintf(params, sizeof(params), "out_w=%d;depth=%d", POOL[i][0], POOL[i][1]);
            reqs_t r = {0}, r16 = {0};
            int32_t s = a->arm_avgpool_s8_get_buffer_size(POOL[i][0], POOL[i][1]);
            if (s > 0)
                push(&r, s);
            s = a->arm_avgpool_s16_get_buffer_size(POOL[i][0], POOL[i][1]);
            if (s > 0)
                push(&r16, s);
            trow("AVERAGE_POOL_2D", "in=int8", a, "any", cs, params, &r, "");
            trow("AVERAGE_POOL_2D", "in=int16", a, "any", cs, params, &r16, "");
        }
        /* SVDF: svdf.cc CmsisNnPrepareSvdf 59-247 */
        {
            const int S[][4] = {{1, 40, 64, 1}, {2, 16, 8, 2}, {1, 10, 100, 4}};
            for (size_t i = 0; i < 3; i++)
            {
                const int batch = S[i][0], input_size = S[i][1], nf = S[i][2], rank = S[i][3];
                char cs[48];
                snprintf(cs, sizeof(cs), "b%d_nf%d_rank%d", batch, nf, rank);
                snprintf(params, sizeof(params), "batch=%d;input_size=%d;num_filters=%d;rank=%d;num_units=%d", batch,
                         input_size, nf, rank, nf / rank);
                cmsis_nn_dims wf = {nf, input_size, 0, 0};
                for (int b = 0; b < 2; b++)
                {
                    reqs_t r = {0};
                    push(&r, batch * nf * 4);
                    push(&r, batch * (nf / rank) * 4);
                    int32_t s = a->arm_svdf_s8_get_buffer_size(&wf);
                    const char *note = "";
                    if (s > 0 && b == 1)
                        push(&r, s);
                    else if (s > 0)
                        note = "kernel sums in persistent buffer instead (weights_feature must be constant)";
                    trow("SVDF", "in=int8", a, b == 0 ? "SPEED" : "SIZE", cs, params, &r, note);
                }
                reqs_t rf = {0};
                push(&rf, batch * nf * 4);
                trow("SVDF", "in=float32", a, "any", cs, params, &rf, "");
            }
        }
        /* TRANSPOSE_CONV: transpose_conv.cc Prepare 157-300 */
        for (size_t i = 0; i < NTC; i++)
        {
            cmsis_nn_transpose_conv_params p;
            cmsis_nn_dims in, f, out;
            int oh, ow;
            tc_setup(&TC[i], &p, &in, &f, &out, &oh, &ow);
            tc_params_str(&TC[i], params, sizeof(params));
            reqs_t r = {0};
            push(&r, a->arm_transpose_conv_s8_get_buffer_size(&p, &in, &f, &out));
            push(&r, a->arm_transpose_conv_s8_get_reverse_conv_buffer_size(&p, &in, &f));
            trow("TRANSPOSE_CONV", "in=int8;filter=int8", a, "any", TC[i].name, params, &r,
                 "both requests always made (even 0 bytes)");
            reqs_t r16 = {0};
            push(&r16, out.n * oh * ow * out.c * 8);
            trow("TRANSPOSE_CONV", "in=int16;filter=int8;bias=int64|none", a, "any", TC[i].name, params, &r16, "");
            push(&r16, out.c * 8);
            trow("TRANSPOSE_CONV", "in=int16;filter=int8;bias=int16", a, "any", TC[i].name, params, &r16, "");
        }
        /* BATCH_MATMUL: batch_matmul.cc Prepare 189-335 */
        {
            const int BM[][3] = {{4, 1, 16}, {3, 2, 8}, {2, 3, 33}}; /* output rank, adj_y, last output dim */
            for (size_t i = 0; i < 3; i++)
            {
                char cs[48];
                snprintf(cs, sizeof(cs), "rank%d_N%d", BM[i][0], BM[i][2]);
                snprintf(params, sizeof(params), "out_rank=%d;out_last_dim=%d", BM[i][0], BM[i][2]);
                cmsis_nn_dims od = {1, 1, 1, BM[i][2]};
                reqs_t r = {0};
                int32_t s = a->arm_fully_connected_s8_get_buffer_size(&od);
                if (s > 0)
                    push(&r, s);
                trow("BATCH_MATMUL", "in=int8", a, "any", cs, params, &r, "");
                reqs_t r0 = {0};
                trow("BATCH_MATMUL", "in=int16", a, "any", cs, params, &r0, "no request");
            }
        }
        /* UNIDIRECTIONAL_SEQUENCE_LSTM: unidirectional_sequence_lstm.cc Prepare 335-422 */
        {
            const int L[][2] = {{1, 16}, {3, 20}};
            for (size_t i = 0; i < 2; i++)
            {
                char cs[48];
                snprintf(cs, sizeof(cs), "b%d_state%d", L[i][0], L[i][1]);
                snprintf(params, sizeof(params), "batch=%d;state_dim=%d", L[i][0], L[i][1]);
                reqs_t r = {0}, rf = {0};
                for (int k = 0; k < 3; k++)
                    push(&r, L[i][0] * L[i][1] * 2);
                for (int k = 0; k < 4; k++)
                    push(&rf, L[i][0] * L[i][1] * 4);
                trow("UNIDIRECTIONAL_SEQUENCE_LSTM", "in=int8;cell=int16", a, "any", cs, params, &r, "");
                trow("UNIDIRECTIONAL_SEQUENCE_LSTM", "in=int16;cell=int16", a, "any", cs, params, &r, "");
                trow("UNIDIRECTIONAL_SEQUENCE_LSTM", "in=float32;cell=float32", a, "any", cs, params, &rf, "");
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
static int mism = 0, checks = 0;
static void cmp(const char *what, const char *cs, const char *compiler, int32_t generic, int32_t explicit_)
{
    checks++;
    if (generic != explicit_)
    {
        mism++;
        printf("MISMATCH %s case=%s compiler=%s generic=%d explicit=%d\n", what, cs, compiler, (int)generic,
               (int)explicit_);
    }
}

static void check(void)
{
    for (int c = 0; c < 2; c++)
    {
        const api_t *none = &APIS[c * 3 + 0], *dsp = &APIS[c * 3 + 1], *mve = &APIS[c * 3 + 2];
        const char *cc = none->compiler;
        for (size_t i = 0; i < NCONV; i++)
        {
            cmsis_nn_conv_params cp;
            cmsis_nn_dims in, f, out;
            conv_setup(&CONV[i], &cp, &in, &f, &out);
            const char *n = CONV[i].name;
            cmp("conv_wrapper_s8 dsp", n, cc, dsp->arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s8_get_buffer_size_dsp(&cp, &in, &f, &out));
            cmp("conv_wrapper_s8 mve", n, cc, mve->arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s8_get_buffer_size_mve(&cp, &in, &f, &out));
            cmp("conv_wrapper_s16 dsp", n, cc, dsp->arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s16_get_buffer_size_dsp(&cp, &in, &f, &out));
            cmp("conv_wrapper_s16 mve", n, cc, mve->arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s16_get_buffer_size_mve(&cp, &in, &f, &out));
            cmp("conv_wrapper_s4 dsp", n, cc, dsp->arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s4_get_buffer_size_dsp(&cp, &in, &f, &out));
            cmp("conv_wrapper_s4 mve", n, cc, mve->arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out),
                none->arm_convolve_wrapper_s4_get_buffer_size_mve(&cp, &in, &f, &out));
            /* compiler independence of everything but conv_wrapper_s8 */
            if (c == 1)
                for (int v = 0; v < 3; v++)
                {
                    cmp("conv_wrapper_s16 gcc-vs-armclang", n, APIS[v].variant,
                        APIS[v].arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out),
                        APIS[3 + v].arm_convolve_wrapper_s16_get_buffer_size(&cp, &in, &f, &out));
                    cmp("conv_wrapper_s4 gcc-vs-armclang", n, APIS[v].variant,
                        APIS[v].arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out),
                        APIS[3 + v].arm_convolve_wrapper_s4_get_buffer_size(&cp, &in, &f, &out));
                }
        }
        for (size_t i = 0; i < NDW; i++)
        {
            cmsis_nn_dw_conv_params p;
            cmsis_nn_dims in, f, out;
            dw_setup(&DW[i], &p, &in, &f, &out);
            const char *n = DW[i].name;
            cmp("dw_wrapper_s8 dsp", n, cc, dsp->arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s8_get_buffer_size_dsp(&p, &in, &f, &out));
            cmp("dw_wrapper_s8 mve", n, cc, mve->arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s8_get_buffer_size_mve(&p, &in, &f, &out));
            cmp("dw_wrapper_s4 dsp", n, cc, dsp->arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s4_get_buffer_size_dsp(&p, &in, &f, &out));
            cmp("dw_wrapper_s4 mve", n, cc, mve->arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s4_get_buffer_size_mve(&p, &in, &f, &out));
            cmp("dw_wrapper_s16 dsp", n, cc, dsp->arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s16_get_buffer_size_dsp(&p, &in, &f, &out));
            cmp("dw_wrapper_s16 mve", n, cc, mve->arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out),
                none->arm_depthwise_conv_wrapper_s16_get_buffer_size_mve(&p, &in, &f, &out));
            if (c == 1)
                for (int v = 0; v < 3; v++)
                {
                    cmp("dw_wrapper_s4 gcc-vs-armclang", n, APIS[v].variant,
                        APIS[v].arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out),
                        APIS[3 + v].arm_depthwise_conv_wrapper_s4_get_buffer_size(&p, &in, &f, &out));
                    cmp("dw_wrapper_s16 gcc-vs-armclang", n, APIS[v].variant,
                        APIS[v].arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out),
                        APIS[3 + v].arm_depthwise_conv_wrapper_s16_get_buffer_size(&p, &in, &f, &out));
                }
        }
        for (size_t i = 0; i < NTC; i++)
        {
            cmsis_nn_transpose_conv_params p;
            cmsis_nn_dims in, f, out;
            int oh, ow;
            tc_setup(&TC[i], &p, &in, &f, &out, &oh, &ow);
            cmp("transpose_conv_s8 mve", TC[i].name, cc, mve->arm_transpose_conv_s8_get_buffer_size(&p, &in, &f, &out),
                none->arm_transpose_conv_s8_get_buffer_size_mve(&p, &in, &f, &out));
        }
        for (size_t i = 0; i < sizeof(FC_OUT) / sizeof(FC_OUT[0]); i++)
        {
            cmsis_nn_dims fd = {64, 1, 1, FC_OUT[i]};
            cmp("fc_s8 dsp", "fc", cc, dsp->arm_fully_connected_s8_get_buffer_size(&fd),
                none->arm_fully_connected_s8_get_buffer_size_dsp(&fd));
            cmp("fc_s8 mve", "fc", cc, mve->arm_fully_connected_s8_get_buffer_size(&fd),
                none->arm_fully_connected_s8_get_buffer_size_mve(&fd));
            cmp("fc_s16 dsp", "fc", cc, dsp->arm_fully_connected_s16_get_buffer_size(&fd),
                none->arm_fully_connected_s16_get_buffer_size_dsp(&fd));
            cmp("fc_s16 mve", "fc", cc, mve->arm_fully_connected_s16_get_buffer_size(&fd),
                none->arm_fully_connected_s16_get_buffer_size_mve(&fd));
            cmp("svdf dsp", "svdf", cc, dsp->arm_svdf_s8_get_buffer_size(&fd),
                none->arm_svdf_s8_get_buffer_size_dsp(&fd));
            cmp("svdf mve", "svdf", cc, mve->arm_svdf_s8_get_buffer_size(&fd),
                none->arm_svdf_s8_get_buffer_size_mve(&fd));
        }
        for (size_t i = 0; i < sizeof(POOL) / sizeof(POOL[0]); i++)
        {
            cmp("avgpool_s8 dsp", "pool", cc, dsp->arm_avgpool_s8_get_buffer_size(POOL[i][0], POOL[i][1]),
                none->arm_avgpool_s8_get_buffer_size_dsp(POOL[i][0], POOL[i][1]));
            cmp("avgpool_s8 mve", "pool", cc, mve->arm_avgpool_s8_get_buffer_size(POOL[i][0], POOL[i][1]),
                none->arm_avgpool_s8_get_buffer_size_mve(POOL[i][0], POOL[i][1]));
            cmp("avgpool_s16 dsp", "pool", cc, dsp->arm_avgpool_s16_get_buffer_size(POOL[i][0], POOL[i][1]),
                none->arm_avgpool_s16_get_buffer_size_dsp(POOL[i][0], POOL[i][1]));
            cmp("avgpool_s16 mve", "pool", cc, mve->arm_avgpool_s16_get_buffer_size(POOL[i][0], POOL[i][1]),
                none->arm_avgpool_s16_get_buffer_size_mve(POOL[i][0], POOL[i][1]));
        }
    }
    printf("checked %d pairs, %d mismatches\n", checks, mism);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "tflm") == 0)
        tflm();
    else if (argc > 1 && strcmp(argv[1], "check") == 0)
        check();
    else
        raw();
    return 0;
}
