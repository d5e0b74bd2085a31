/* The smallest complete program over heliac's C module with --runtime tflm
 * (generated with --prefix model, see Makefile): init, fill the inputs,
 * invoke, print the outputs. Every failure is printed with the runtime's
 * message, which names the operator. The test's comparison with
 * tflm_run uses the harness instead (make check). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

/* tensor returns the tensor-table row of input (out == 0) or output i of
 * the main subgraph, or MODEL_NO_TENSOR. */
static uint16_t tensor(int out, size_t i)
{
	const model_subgraph_t *s = &model_subgraphs[0];
	return model_operands[(out ? s->outputs : s->inputs) + i];
}

/* fill gives an input a value that changes from run to run, so the outputs
 * do too: 0.5 * run in every float32 element, else every byte 32 * run. */
static void fill(uint16_t t, int run)
{
	uint8_t *p = model_tensor_mutable_data(t);
	size_t i, n = model_tensors[t].size;
	if (model_tensors[t].type == MODEL_TYPE_FLOAT32) {
		const float x = 0.5f * (float)run;
		for (i = 0; i + 4 <= n; i += 4) {
			memcpy(p + i, &x, 4);
		}
	} else {
		memset(p, 32 * run, n);
	}
}

/* show prints an output's first few elements. */
static void show(size_t out, uint16_t t)
{
	const uint8_t *p = model_tensor_data(t);
	size_t i, n = model_tensors[t].size;
	printf("  output %u (%u bytes):", (unsigned)out, (unsigned)n);
	for (i = 0; i < 8; i++) {
		switch (model_tensors[t].type) {
		case MODEL_TYPE_INT8:
			if (i < n) printf(" %d", (int)(int8_t)p[i]);
			break;
		case MODEL_TYPE_UINT8:
		case MODEL_TYPE_BOOL:
			if (i < n) printf(" %u", (unsigned)p[i]);
			break;
		case MODEL_TYPE_INT16:
			if (2 * i + 2 <= n) {
				int16_t v;
				memcpy(&v, p + 2 * i, 2);
				printf(" %d", (int)v);
			}
			break;
		case MODEL_TYPE_INT32:
			if (4 * i + 4 <= n) {
				int32_t v;
				memcpy(&v, p + 4 * i, 4);
				printf(" %ld", (long)v);
			}
			break;
		case MODEL_TYPE_FLOAT32:
			if (4 * i + 4 <= n) {
				float v;
				memcpy(&v, p + 4 * i, 4);
				float a = v < 0 ? -v : v;
				printf(" %s%d.%03d", v < 0 ? "-" : "", (int)a, (int)(a * 1000) % 1000);
			}
			break;
		default:
			if (i < n) printf(" 0x%02x", (unsigned)p[i]);
		}
	}
	printf("%s\n", n > 8 ? " ..." : "");
}

int main(int argc, char **argv)
{
	size_t i;
	int run;
	(void)argc, (void)argv;
	if (model_init() != MODEL_OK) {
		printf("init failed: %s\n", model_status_message());
		return 1;
	}
	printf("model initialized: plan %s\n", MODEL_PLAN_HASH);
	for (run = 0; run < 3; run++) {
		for (i = 0; i < model_subgraphs[0].input_count; i++) {
			if (tensor(0, i) != MODEL_NO_TENSOR) {
				fill(tensor(0, i), run);
			}
		}
		if (model_invoke() != MODEL_OK) {
			printf("run %d failed: %s\n", run, model_status_message());
			return 1;
		}
		printf("run %d: %u output(s)\n", run, (unsigned)model_subgraphs[0].output_count);
		for (i = 0; i < model_subgraphs[0].output_count; i++) {
			if (tensor(1, i) != MODEL_NO_TENSOR) {
				show(i, tensor(1, i));
			}
		}
	}
	return 0;
}
