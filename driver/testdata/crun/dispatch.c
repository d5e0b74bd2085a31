/*
 * dispatch.c: a checking dispatcher for heliac's C module, the test
 * program driver/crun_test.go builds against each model's module.
 *
 * It drives "kernels" only through the module's tables, in the order
 * <p>_operators gives, as a runtime would: at each operator it checks that
 * every input still holds exactly the bytes its producer wrote (constants:
 * the model's bytes, read from the expectations file; staged constants:
 * after <p>_init hydrated them), then writes a pattern of its own into each
 * output. Control flow follows the plan's timeline: a control-flow
 * operator's called subgraphs run inside it, their inputs are written
 * (copied in) when entered and their outputs read at their end; the
 * operator's own inputs and outputs are live over its whole span, so they
 * are checked again at its end. A view operator (RESHAPE, SQUEEZE,
 * EXPAND_DIMS, BITCAST) whose output is its input's bytes writes nothing,
 * as such a kernel would; so does a copying operator (CONCATENATION,
 * SPLIT, SPLIT_V, SLICE, STRIDED_SLICE) where the plan lays the bytes it
 * copies over themselves (an exact-overlap copy, kernels/copy.go): an
 * output inside an input's bytes keeps them, an output holding inputs
 * inside it keeps theirs and gets a pattern elsewhere. An operator's kernel scratch buffers
 * (<p>_kernel_scratch rows scratch..scratch+scratch_count, reached through
 * <p>_kernel_scratch_data) are filled when it starts, before its inputs
 * are checked again, and must still hold what it wrote when its outputs
 * are written and at the end of its span. The model runs twice:
 * persistent state carries over, scratch does not.
 *
 * Build: cc -DPREFIX=<prefix> -DUPREFIX=<PREFIX> -DMODULE_HEADER='"<prefix>.h"'
 * [-DEXTERNAL] [-DSTAGED=<staged arenas>] dispatch.c <module sources>
 * Run:   ./dispatch EXPECT, where EXPECT holds per tensor-table row its name
 * and, for a constant, its bytes (little-endian u32 lengths):
 *        "HLC1" rows { name_len name data_len data }
 * Exit 0 when every check passed; 1, naming each tensor that does not hold
 * what it should, when one failed; 2 when the module or the file is wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODULE_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(PREFIX, name)
#define M(name) CAT(UPREFIX, name)

typedef F(_tensor_t) tensor_t;
typedef F(_operator_t) operator_t;
typedef F(_subgraph_t) subgraph_t;

#if M(_TENSOR_COUNT) > 0
#define TENSORS F(_tensors)
#else
static const tensor_t *const TENSORS = NULL;
#endif
#if M(_OPERAND_COUNT) > 0
#define OPERANDS F(_operands)
#else
static const uint16_t *const OPERANDS = NULL;
#endif
#if M(_CALL_COUNT) > 0
#define CALLS F(_calls)
#else
static const uint16_t *const CALLS = NULL;
#endif
#if M(_OPERATOR_COUNT) > 0
#define OPERATORS F(_operators)
#else
static const operator_t *const OPERATORS = NULL;
#endif

enum { VIEW_RESHAPE = 22, VIEW_SQUEEZE = 43, VIEW_EXPAND_DIMS = 70, VIEW_BITCAST = 159 };
enum { COPY_CONCATENATION = 2, COPY_STRIDED_SLICE = 45, COPY_SPLIT = 49, COPY_SLICE = 65, COPY_SPLIT_V = 102 };

static uint8_t **shadow; /* per row: the bytes it must hold */
static int *known;       /* per row: shadow is set (written, or a constant or state) */
static long *writer;     /* per row: the run that wrote it; -1 before the first run */
static char **names;
static unsigned long gen;
static size_t runs, checks, unchecked;
static int fails;

static void die(const char *what)
{
	printf("ERROR: %s\n", what);
	exit(2);
}

static uint8_t pattern(size_t row, unsigned long g, size_t i)
{
	uint32_t x = (uint32_t)(row * 0x9E3779B1u) ^ (uint32_t)(g * 0x85EBCA77u) ^ (uint32_t)(i * 0xC2B2AE3Du);
	x ^= x >> 15;
	x *= 0x2C1B3C6Du;
	x ^= x >> 12;
	return (uint8_t)(x >> 24);
}

static const char *op_name(size_t run)
{
	static char buf[64];
	const operator_t *op = &OPERATORS[run];
	if (op->custom != NULL) {
		return op->custom;
	}
	sprintf(buf, "builtin %ld", (long)op->builtin);
	return buf;
}

/* check reports a row that does not hold its shadow bytes. */
static void check(size_t run, const char *when, const char *what, size_t k, uint16_t row)
{
	const tensor_t *t;
	const uint8_t *p;
	size_t i;
	if (row == M(_NO_TENSOR)) {
		return;
	}
	if (row >= M(_TENSOR_COUNT)) {
		die("an operand names no row of the tensor table");
	}
	if (!known[row]) {
		unchecked++; /* read before anything wrote it: no bytes to expect */
		return;
	}
	checks++;
	t = &TENSORS[row];
	p = F(_tensor_data)(row);
	for (i = 0; i < t->size; i++) {
		if (p[i] != shadow[row][i]) {
			break;
		}
	}
	if (i == t->size) {
		return;
	}
	if (++fails <= 10) {
		char by[64];
		uint8_t role = F(_arenas)[t->arena].role;
		if (writer[row] >= 0) {
			sprintf(by, "run %ld", writer[row]);
		} else if (role == M(_ROLE_CONSTANT)) {
			sprintf(by, "the model");
		} else if (role == M(_ROLE_PERSISTENT)) {
			sprintf(by, "init (zeros)");
		} else {
			sprintf(by, "the application");
		}
		printf("FAIL: run %zu (op %u:%u %s) %s: %s %zu, tensor %u:%u \"%s\" (row %u), does not hold the bytes %s wrote: "
		       "byte %zu is 0x%02x, want 0x%02x\n",
		       run, (unsigned)OPERATORS[run].subgraph, (unsigned)OPERATORS[run].op, op_name(run), when, what, k,
		       (unsigned)t->subgraph, (unsigned)t->tensor, names[row], (unsigned)row, by, i, p[i], shadow[row][i]);
	}
}

/* scratch fills (fill) or checks the kernel scratch of row `run` of the
 * schedule with a pattern of its own, as its kernel would use it. */
static void scratch(size_t run, int fill, const char *when)
{
#if M(_KERNEL_SCRATCH_COUNT) > 0
	const operator_t *op = &OPERATORS[run];
	size_t k, i;
	for (k = op->scratch; k < (size_t)op->scratch + op->scratch_count; k++) {
		uint8_t *p = F(_kernel_scratch_data)(k);
		size_t n = F(_kernel_scratch)[k].size;
		if (k >= M(_KERNEL_SCRATCH_COUNT) || p == NULL) {
			die("an operator's kernel scratch row has no bytes");
		}
		if (F(_kernel_scratch)[k].subgraph != op->subgraph || F(_kernel_scratch)[k].op != op->op) {
			die("an operator's kernel scratch row belongs to another operator");
		}
		for (i = 0; i < n; i++) {
			uint8_t want = pattern(k + 0x8000u, (unsigned long)run, i);
			if (fill) {
				p[i] = want;
				continue;
			}
			if (p[i] != want) {
				if (++fails <= 10) {
					printf("FAIL: run %zu (op %u:%u %s) %s: kernel scratch %zu (row %zu) does not hold what the kernel wrote: "
					       "byte %zu is 0x%02x, want 0x%02x\n",
					       run, (unsigned)op->subgraph, (unsigned)op->op, op_name(run), when,
					       k - op->scratch, k, i, p[i], want);
				}
				break;
			}
		}
		checks += !fill;
	}
#else
	(void)run;
	(void)fill;
	(void)when;
#endif
}

/* put writes a new pattern into a row, as its producer, run. */
static void put(long run, uint16_t row)
{
	uint8_t *p;
	size_t i;
	if (row == M(_NO_TENSOR)) {
		return;
	}
	p = F(_tensor_mutable_data)(row);
	if (p == NULL) {
		return; /* a read-only constant */
	}
	gen++;
	for (i = 0; i < TENSORS[row].size; i++) {
		p[i] = shadow[row][i] = pattern(row, gen, i);
	}
	known[row] = 1;
	writer[row] = run;
}

/* view reports whether output out of operator op is its input's bytes. */
static int view(const operator_t *op, uint16_t out)
{
	uint16_t in;
	if (op->builtin != VIEW_RESHAPE && op->builtin != VIEW_SQUEEZE && op->builtin != VIEW_EXPAND_DIMS && op->builtin != VIEW_BITCAST) {
		return 0;
	}
	if (op->input_count == 0 || out == M(_NO_TENSOR)) {
		return 0;
	}
	in = OPERANDS[op->inputs];
	if (in == M(_NO_TENSOR)) {
		return 0;
	}
	return TENSORS[in].arena == TENSORS[out].arena && TENSORS[in].offset == TENSORS[out].offset && TENSORS[in].size == TENSORS[out].size;
}

/* within reports whether row a's bytes lie inside row b's. */
static int within(uint16_t a, uint16_t b)
{
	const tensor_t *x = &TENSORS[a], *y = &TENSORS[b];
	return x->arena == y->arena && x->offset >= y->offset && x->offset + x->size <= y->offset + y->size;
}

/* copying reports whether operator op only copies bytes from its inputs
 * to its outputs. */
static int copying(const operator_t *op)
{
	if (op->custom != NULL) {
		return 0;
	}
	switch (op->builtin) {
	case COPY_CONCATENATION:
	case COPY_STRIDED_SLICE:
	case COPY_SPLIT:
	case COPY_SLICE:
	case COPY_SPLIT_V:
		return 1;
	}
	return 0;
}

/* copy_output writes output out of a copying operator, run, as its kernel
 * would where the plan lays bytes it copies over themselves: an output
 * inside an input's bytes holds them already; an output holding inputs
 * inside it keeps their bytes and gets a pattern elsewhere. */
static void copy_output(long run, const operator_t *op, uint16_t out)
{
	size_t k;
	uint8_t *p;
	if (out == M(_NO_TENSOR)) {
		return;
	}
	for (k = 0; k < op->input_count; k++) {
		uint16_t in = OPERANDS[op->inputs + k];
		if (in != M(_NO_TENSOR) && in != out && known[in] && within(out, in)) {
			memcpy(shadow[out], shadow[in] + (TENSORS[out].offset - TENSORS[in].offset), TENSORS[out].size);
			known[out] = 1;
			writer[out] = run;
			return;
		}
	}
	put(run, out);
	p = F(_tensor_mutable_data)(out);
	if (p == NULL) {
		return;
	}
	for (k = 0; k < op->input_count; k++) {
		uint16_t in = OPERANDS[op->inputs + k];
		if (in != M(_NO_TENSOR) && in != out && known[in] && within(in, out)) {
			size_t off = TENSORS[in].offset - TENSORS[out].offset;
			memcpy(p + off, shadow[in], TENSORS[in].size);
			memcpy(shadow[out] + off, shadow[in], TENSORS[in].size);
		}
	}
}

static size_t run_subgraph(uint16_t s, size_t row, long caller);

/* run_operator runs row `run` of the schedule and returns the row after
 * its span. */
static size_t run_operator(size_t run)
{
	const operator_t *op = &OPERATORS[run];
	size_t k, next = run + 1;
	runs++;
	for (k = 0; k < op->input_count; k++) {
		check(run, "at its start", "input", k, OPERANDS[op->inputs + k]);
	}
	if (op->scratch_count > 0) {
		scratch(run, 1, NULL);
		for (k = 0; k < op->input_count; k++) {
			check(run, "after its kernel scratch was written", "input", k, OPERANDS[op->inputs + k]);
		}
	}
	for (k = 0; k < op->input_count; k++) {
		uint16_t in = OPERANDS[op->inputs + k];
		if (in != M(_NO_TENSOR) && F(_arenas)[TENSORS[in].arena].role == M(_ROLE_PERSISTENT)) {
			put((long)run, in); /* state: the kernel updates it */
		}
	}
	for (k = 0; k < op->output_count; k++) {
		uint16_t out = OPERANDS[op->outputs + k];
		if (k == 0 && view(op, out)) {
			uint16_t in = OPERANDS[op->inputs];
			known[out] = known[in];
			writer[out] = writer[in];
			memcpy(shadow[out], shadow[in], TENSORS[out].size);
			continue;
		}
		if (copying(op)) {
			copy_output((long)run, op, out);
			continue;
		}
		put((long)run, out);
	}
	for (k = 0; k < op->intermediate_count; k++) {
		put((long)run, OPERANDS[op->intermediates + k]);
	}
	scratch(run, 0, "after writing its outputs");
	for (k = 0; k < op->call_count; k++) {
		next = run_subgraph(CALLS[op->calls + k], next, (long)run);
	}
	if (next != (size_t)op->last + 1) {
		die("a control-flow operator's called subgraphs do not end at its last row");
	}
	if (op->call_count > 0) {
		scratch(run, 0, "at the end of its span");
		for (k = 0; k < op->input_count; k++) {
			check(run, "at the end of its span", "input", k, OPERANDS[op->inputs + k]);
		}
		for (k = 0; k < op->output_count; k++) {
			check(run, "at the end of its span", "output", k, OPERANDS[op->outputs + k]);
		}
	}
	return next;
}

/* run_subgraph runs subgraph s from row `row`: its inputs are written
 * when it is entered (by caller, -1 for the application), its operators
 * run, and its outputs are read at its end. */
static size_t run_subgraph(uint16_t s, size_t row, long caller)
{
	const subgraph_t *sg;
	size_t k, n;
	if (s >= M(_SUBGRAPH_COUNT)) {
		die("a subgraph index out of range");
	}
	sg = &F(_subgraphs)[s];
	for (k = 0; k < sg->input_count; k++) {
		put(caller, OPERANDS[sg->inputs + k]);
	}
	for (n = 0; n < sg->operator_count; n++) {
		if (row >= M(_OPERATOR_COUNT) || OPERATORS[row].subgraph != s) {
			die("a subgraph's operators are not the rows that follow its entry");
		}
		row = run_operator(row);
	}
	for (k = 0; k < sg->output_count; k++) {
		size_t last = row > 0 ? row - 1 : 0;
		check(last, "at its subgraph's end", "subgraph output", k, OPERANDS[sg->outputs + k]);
	}
	return row;
}

static uint32_t read_u32(FILE *f)
{
	unsigned char b[4];
	if (fread(b, 1, 4, f) != 4) {
		die("short expectations file");
	}
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void *read_n(FILE *f, size_t n)
{
	void *p = calloc(n + 1, 1);
	if (p == NULL || fread(p, 1, n, f) != n) {
		die("short expectations file");
	}
	return p;
}

#ifdef STAGED
static int hydrated;

/* A strong definition replaces the module's weak one, as an application's
 * DMA copy would. */
void F(_hydrate)(F(_arena_t) arena, void *dst, const void *src, size_t size)
{
	if (F(_arenas)[arena].role != M(_ROLE_CONSTANT) || size != F(_arenas)[arena].size) {
		die("hydrate: not a staged constant arena");
	}
	hydrated++;
	memcpy(dst, src, size);
}
#endif

#ifdef EXTERNAL
/* bind gives every external arena a buffer of its own, full of junk,
 * after checking what bind says of bad ones. */
static void bind(void)
{
	size_t a;
	if (F(_bind_arena)(M(_ARENA_COUNT), NULL, 0) != M(_ERR_UNKNOWN_ARENA)) {
		die("bind: an unknown arena");
	}
	for (a = 0; a < (size_t)M(_ARENA_COUNT); a++) {
		const F(_arena_info_t) *info = &F(_arenas)[a];
		F(_arena_t) id = (F(_arena_t))a;
		uint8_t *raw, *buf;
		if (!info->external) {
			if (F(_bind_arena)(id, &raw, sizeof raw) != M(_ERR_INTERNAL_ARENA)) {
				die("bind: an internal arena");
			}
			continue;
		}
		raw = malloc(info->size + 2u * info->alignment);
		if (raw == NULL) {
			die("out of memory");
		}
		buf = raw + (info->alignment - (uintptr_t)raw % info->alignment) % info->alignment;
		memset(buf, 0xa5, info->size);
		if (F(_bind_arena)(id, NULL, info->size) != M(_ERR_NULL) ||
		    F(_bind_arena)(id, buf, info->size - 1u) != M(_ERR_TOO_SMALL) ||
		    (info->alignment > 1u && F(_bind_arena)(id, buf + 1, info->size) != M(_ERR_MISALIGNED))) {
			die("bind: a bad buffer");
		}
		if (F(_init)() != M(_ERR_UNBOUND)) {
			die("init: an external arena is not bound");
		}
		if (F(_bind_arena)(id, buf, info->size) != M(_OK)) {
			die("bind: a good buffer");
		}
	}
}
#endif

int main(int argc, char **argv)
{
	FILE *f = NULL;
	size_t i, a, row, inv;
	if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) {
		die("usage: dispatch EXPECT");
	}
	{
		char magic[4];
		if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "HLC1", 4) != 0 || read_u32(f) != M(_TENSOR_COUNT)) {
			die("the expectations file is not for this module");
		}
	}
	shadow = calloc(M(_TENSOR_COUNT) + 1, sizeof *shadow);
	known = calloc(M(_TENSOR_COUNT) + 1, sizeof *known);
	writer = calloc(M(_TENSOR_COUNT) + 1, sizeof *writer);
	names = calloc(M(_TENSOR_COUNT) + 1, sizeof *names);
	for (row = 0; row < M(_TENSOR_COUNT); row++) {
		uint32_t n = read_u32(f);
		names[row] = read_n(f, n);
		n = read_u32(f);
		shadow[row] = calloc(TENSORS[row].size + 1u, 1);
		writer[row] = -1;
		if (n > 0) {
			uint8_t *data = read_n(f, n);
			if (n != TENSORS[row].size) {
				die("a constant's size is not its row's");
			}
			memcpy(shadow[row], data, n);
			known[row] = 1;
			free(data);
		}
	}
	fclose(f);

	/* Junk in every arena the module defines, so that nothing passes for
	 * having started at zero. */
	for (a = 0; a < (size_t)M(_ARENA_COUNT); a++) {
		uint8_t *base = F(_arena_data)((F(_arena_t))a);
		if (base != NULL) {
			memset(base, 0x5a, F(_arenas)[a].size);
		}
	}
#ifdef EXTERNAL
	bind();
#endif
	if (F(_init)() != M(_OK)) {
		die("init");
	}
#ifdef STAGED
	if (hydrated != STAGED) {
		die("init: the staged arenas were not hydrated once each");
	}
#endif
	for (a = 0; a < (size_t)M(_ARENA_COUNT); a++) {
		const uint8_t *base = F(_arena_data)((F(_arena_t))a);
		if (F(_arenas)[a].role != M(_ROLE_PERSISTENT)) {
			continue;
		}
		for (i = 0; i < F(_arenas)[a].size; i++) {
			if (base[i] != 0) {
				die("init: a persistent arena is not zeroed");
			}
		}
	}
	for (row = 0; row < M(_TENSOR_COUNT); row++) {
		if (F(_arenas)[TENSORS[row].arena].role == M(_ROLE_PERSISTENT)) {
			known[row] = 1; /* zeroed by init: shadow is zeros */
		}
	}
	for (inv = 0; inv < 2; inv++) {
		for (row = 0; row < M(_TENSOR_COUNT); row++) {
			if (F(_arenas)[TENSORS[row].arena].role == M(_ROLE_SCRATCH)) {
				known[row] = 0; /* scratch does not outlive an invocation */
				writer[row] = -1;
			}
		}
		row = 0;
		while (row < M(_OPERATOR_COUNT)) {
			row = run_subgraph(OPERATORS[row].subgraph, row, -1);
		}
	}
	if (fails > 0) {
		printf("FAIL: %d tensor(s) did not hold their bytes\n", fails);
		return 1;
	}
	printf("ok: %zu operator runs, %zu checks, %zu reads of tensors nothing wrote\n", runs, checks, unchecked);
	return 0;
}
