/* tflm_run's input fill and output lines (../shared/tools/src/tflm_run.cc),
 * in C for the Cortex-M55 programs of this example. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, numbered as TFLite's schema TensorType (and heliac's
 * <prefix>_type_t). */
enum {
	HARNESS_TYPE_FLOAT32 = 0,
	HARNESS_TYPE_FLOAT16 = 1,
	HARNESS_TYPE_STRING = 5,
	HARNESS_TYPE_BOOL = 6,
	HARNESS_TYPE_COMPLEX64 = 8,
	HARNESS_TYPE_FLOAT64 = 10,
	HARNESS_TYPE_COMPLEX128 = 11,
	HARNESS_TYPE_RESOURCE = 13,
	HARNESS_TYPE_VARIANT = 14,
	HARNESS_TYPE_BFLOAT16 = 18,
};

#define HARNESS_FNV_OFFSET 0xCBF29CE484222325ull

/* Program options, from the semihosting command line. */
struct harness_options {
	uint64_t seed;  /* --seed N, default 1 */
	int invokes;    /* --invokes K, default 3 */
	float range;    /* --float-range R, default 1 */
};

struct harness_options harness_options(void);

/* harness_input_stream is the generator state of input i in run k. */
uint64_t harness_input_stream(uint64_t seed, uint64_t k, uint64_t i);

/* harness_fill fills n bytes at p, of element type `type`, from generator g. */
void harness_fill(int type, uint8_t *p, size_t n, uint64_t *g, float range);

/* harness_type_name is the type's name as tflm_run prints it. */
const char *harness_type_name(int type);

uint64_t harness_fnv1a64(const void *data, size_t n, uint64_t h);

/* harness_output prints output i of run k (output.<k>.<i>=<fnv64> bytes=
 * type=) and folds the line into *digest. */
void harness_output(int k, size_t i, const void *data, size_t bytes, const char *type, uint64_t *digest);

/* harness_digest prints outputs_digest=. */
void harness_digest(uint64_t digest);

#ifdef __cplusplus
}
#endif

#endif
