/*
 * harness.h: the interface between the runtime harness (harness.c) and its
 * two backends, which run one model each:
 *
 *   backend_heliac.c  heliac's C module with --runtime tflm (<p>.h, <p>.c,
 *                     <p>.tflm.cc): <p>_init() once, <p>_invoke() per run;
 *   backend_tflm.cc   the same model under TFLM's MicroInterpreter (the
 *                     model as a C array, <p>.tflite.h/.c).
 *
 * harness.c fills every input of subgraph 0 and digests every output as
 * ../shared/tools/tflm_run does (src/tflm_run.cc), so the two print
 * output.<k>.<i>= and outputs_digest= lines that compare with tflm_run's
 * line by line. See README.md beside this file for how to build and run it.
 *
 * Portable C99 (plus the backends' C++17): nothing beyond the C standard
 * library's stdio, stdlib and string, so it builds for arm-none-eabi too.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One input or output tensor: its bytes and its TFLite type's name as
 * tflm_run prints it ("INT8", "FLOAT32", ...). */
typedef struct {
	void *data;
	size_t bytes;
	const char *type;
} harness_tensor_t;

/* Prepares the model: binds and fills its RAM from fill_seed's byte stream
 * (harness_fill_arena) where the backend has an arena to fill, then
 * initializes it. Returns 0, or nonzero with *error set to why not. */
int harness_backend_init(uint64_t fill_seed, const char **error);

/* The model's inputs and outputs (subgraph 0), after a successful init. */
size_t harness_backend_input_count(void);
size_t harness_backend_output_count(void);
harness_tensor_t harness_backend_input(size_t i);
harness_tensor_t harness_backend_output(size_t i);

/* Runs the model once. Returns 0, or nonzero with *error set to why not. */
int harness_backend_invoke(const char **error);

/* Fills p[0..n) with the byte stream tflm_run fills its arena with for
 * fill_seed (byte j of the buffer = byte j of the stream). */
void harness_fill_arena(uint8_t *p, size_t n, uint64_t fill_seed);

/* The name tflm_run prints for a TFLite schema TensorType number
 * (tflite::TensorType, as heliac's tables give it), or "UNKNOWN". */
const char *harness_schema_type_name(int type);

#ifdef __cplusplus
}
#endif

#endif /* HARNESS_H */
