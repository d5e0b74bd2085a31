/*
 * backend_heliac.c: the harness's heliac backend (harness.h): the model's C
 * module built with --runtime tflm (<prefix>.h, <prefix>.c and
 * <prefix>.tflm.cc, which runs TFLM's kernels in the plan's schedule).
 * init fills every scratch arena from the fill seed's stream (so a wrong
 * plan cannot hide behind zeroed memory; arena i from seed fill_seed + i),
 * binds a buffer of its own to every external arena, then calls
 * <prefix>_init() once; each invocation is <prefix>_invoke(). Inputs and
 * outputs are subgraph 0's, through the module's tables.
 *
 * Build: cc -DHELIAC_PREFIX=<prefix> [-DHELIAC_HEADER='"<prefix>.h"']
 *   -I <module dir> backend_heliac.c harness.c debug_log.c <module sources>
 * (the runtime's .tflm.cc with g++ and TFLM; see README.md). External
 * arenas take memory from malloc; define HARNESS_NO_MALLOC where there is
 * none (then the module must define every arena). Tests' variants:
 * -DHARNESS_NO_HYDRATE, -DHARNESS_INIT_TWICE (below).
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#define HARNESS_CAT_(a, b) a##b
#define HARNESS_CAT(a, b) HARNESS_CAT_(a, b)
#define HARNESS_STR_(x) #x
#define HARNESS_STR(x) HARNESS_STR_(x)
#ifndef HELIAC_HEADER
#define HELIAC_HEADER HARNESS_STR(HELIAC_PREFIX.h)
#endif
#include HELIAC_HEADER

/* The module's name for `name`: P(_init) is <prefix>_init. */
#define P(name) HARNESS_CAT(HELIAC_PREFIX, name)

/* HARNESS_NO_HYDRATE (a test's broken plan, for a module with staged
 * constants): the module's weak <prefix>_hydrate is replaced by one that
 * copies nothing, so staged arenas keep what RAM held. */
#ifdef HARNESS_NO_HYDRATE
void P(_hydrate)(P(_arena_t) arena, void *dst, const void *src, size_t size)
{
	(void)arena, (void)dst, (void)src, (void)size;
}
#endif

#define TENSOR_COUNT (sizeof(P(_tensors)) / sizeof(P(_tensors)[0]))
#define ARENA_COUNT (sizeof(P(_arenas)) / sizeof(P(_arenas)[0]))

/* The tensor-table row of operand `at` of <prefix>_operands, or
 * TENSOR_COUNT for none (an omitted tensor, or one without bytes). */
static size_t operand(size_t at)
{
	size_t t = P(_operands)[at];
	return t < TENSOR_COUNT ? t : TENSOR_COUNT;
}

static harness_tensor_t describe(size_t t, int writable)
{
	harness_tensor_t h = {NULL, 0, "NOTYPE"};
	if (t < TENSOR_COUNT) {
		h.data = writable ? (void *)P(_tensor_mutable_data)(t) : (void *)P(_tensor_data)(t);
		h.bytes = P(_tensors)[t].size;
		h.type = harness_schema_type_name(P(_tensors)[t].type);
	}
	return h;
}

static char message[1200];

/* Sets *error to "<what>: status <n>: <the module's message>". */
static void fail(const char **error, const char *what, int status)
{
	snprintf(message, sizeof(message), "%s: status %d: %s", what, status, P(_status_message)());
	*error = message;
}

int harness_backend_init(uint64_t fill_seed, const char **error)
{
	for (size_t a = 0; a < ARENA_COUNT; a++) {
		uint8_t *data = NULL;
		if (P(_arenas)[a].external) {
#ifdef HARNESS_NO_MALLOC
			snprintf(message, sizeof(message), "arena %u is external: build the module with its own arenas",
				 (unsigned)a);
			*error = message;
			return 1;
#else
			size_t align = P(_arenas)[a].alignment > 0 ? P(_arenas)[a].alignment : 1;
			uint8_t *raw = (uint8_t *)malloc(P(_arenas)[a].size + align);
			if (raw == NULL) {
				*error = "out of memory for an external arena";
				return 1;
			}
			data = raw + (align - (uintptr_t)raw % align) % align;
			int st = (int)P(_bind_arena)((P(_arena_t))a, data, P(_arenas)[a].size);
			if (st != 0) {
				fail(error, "bind", st);
				return 1;
			}
#endif
		} else {
			data = P(_arena_data)((P(_arena_t))a);
		}
		if (data != NULL && P(_arenas)[a].role == 1 /* scratch */) {
			harness_fill_arena(data, P(_arenas)[a].size, fill_seed + a);
		}
	}
	int st = (int)P(_init)();
	if (st != 0) {
		fail(error, "init", st);
		return 1;
	}
#ifdef HARNESS_INIT_TWICE
	/* A second init starts the model over (kernel data, variables, CALL_ONCE),
	 * as TFLM's AllocateTensors does: run it once on whatever its inputs hold,
	 * then init again; the outputs must still be tflm_run's. */
	if ((st = (int)P(_invoke)()) != 0) {
		fail(error, "invoke before the second init", st);
		return 1;
	}
	if ((st = (int)P(_init)()) != 0) {
		fail(error, "second init", st);
		return 1;
	}
#endif
	return 0;
}

size_t harness_backend_input_count(void)
{
	return P(_subgraphs)[0].input_count;
}

size_t harness_backend_output_count(void)
{
	return P(_subgraphs)[0].output_count;
}

harness_tensor_t harness_backend_input(size_t i)
{
	return describe(operand(P(_subgraphs)[0].inputs + i), 1);
}

harness_tensor_t harness_backend_output(size_t i)
{
	return describe(operand(P(_subgraphs)[0].outputs + i), 0);
}

int harness_backend_invoke(const char **error)
{
	int st = (int)P(_invoke)();
	if (st != 0) {
		fail(error, "invoke", st);
		return 1;
	}
	return 0;
}
