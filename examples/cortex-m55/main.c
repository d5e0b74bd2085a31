/* Runs a model through heliac's C module on the Cortex-M55: init, then
 * --invokes runs, each with inputs filled as ../shared/tools/tflm_run fills
 * them, printing a digest of every output in tflm_run's key=value lines
 * (harness.c), so the two compare line by line. The module is generated
 * with --prefix model (Makefile).
 *
 * Options come from the semihosting command line (QEMU's
 * -semihosting-config arg=...): --seed N, --invokes K, --float-range R. */
#include <stdint.h>
#include <stdio.h>

#include "harness.h"
#include "model.h"

/* operand returns the tensor-table index of input (out == 0) or output i
 * of the main subgraph, or MODEL_NO_TENSOR. */
static uint16_t operand(int out, size_t i)
{
	const model_subgraph_t *s = &model_subgraphs[0];
	return model_operands[(out ? s->outputs : s->inputs) + i];
}

int main(void)
{
	struct harness_options o = harness_options();
	uint64_t digest = HARNESS_FNV_OFFSET;
	model_status_t st;
	size_t i;
	int k;

	st = model_init();
	if (st != MODEL_OK) {
#ifdef HELIAC_RUNTIME_TFLM
		printf("status=error\nerror=init: %s\n", model_status_message());
#else
		printf("status=error\nerror=init: status %d\n", (int)st);
#endif
		return 1;
	}
	printf("status=ok\nseed=%lu\ninvokes=%d\ninputs=%u\noutputs=%u\n",
	       (unsigned long)o.seed, o.invokes,
	       (unsigned)model_subgraphs[0].input_count, (unsigned)model_subgraphs[0].output_count);
	for (k = 0; k < o.invokes; k++) {
		for (i = 0; i < model_subgraphs[0].input_count; i++) {
			uint16_t t = operand(0, i);
			uint64_t g = harness_input_stream(o.seed, (uint64_t)k, i);
			if (t != MODEL_NO_TENSOR) {
				harness_fill(model_tensors[t].type, model_tensor_mutable_data(t), model_tensors[t].size, &g, o.range);
			}
		}
#ifdef HELIAC_RUNTIME_TFLM
		st = model_invoke();
		if (st != MODEL_OK) {
			printf("invoke.%d=error\nerror=%s\n", k, model_status_message());
			return 1;
		}
#endif
		printf("invoke.%d=ok\n", k);
		for (i = 0; i < model_subgraphs[0].output_count; i++) {
			uint16_t t = operand(1, i);
			const uint8_t *data = t == MODEL_NO_TENSOR ? NULL : model_tensor_data(t);
			size_t bytes = data == NULL ? 0 : model_tensors[t].size;
			harness_output(k, i, data, bytes,
				       t == MODEL_NO_TENSOR ? "NOTYPE" : harness_type_name(model_tensors[t].type), &digest);
		}
	}
	harness_digest(digest);
	return 0;
}
