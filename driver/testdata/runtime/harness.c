/*
 * harness.c: runs a model through one backend (harness.h) as
 * ../shared/tools/tflm_run runs it, and prints the lines tflm_run prints for
 * its inputs and outputs, so the two compare line by line:
 *
 *   status=ok                     (or status=error and error=<why>; exit 1)
 *   seed=<N>
 *   fill_seed=<N>                 (only when it is not the seed)
 *   float_range=<R>               (only when it is not 1)
 *   invokes=<K>
 *   inputs=<n>
 *   outputs=<n>
 *   invoke.<k>=ok                 (or invoke.<k>=error and error=<why>; exit 1)
 *   output.<k>.<i>=<FNV-1a-64 of the output's bytes, 16 hex digits> bytes=<n> type=<TYPE>
 *   outputs_digest=<FNV-1a-64 over every output line, '\n' included>
 *
 * Inputs: before invocation k, input i of subgraph 0 is filled from the
 * splitmix64 stream Mix(Mix(Mix(seed) ^ k) ^ i), Mix(x) being one
 * splitmix64 step from state x: integer types (and packed int4/int2,
 * float8) as the stream's little-endian bytes; FLOAT32/COMPLEX64 as
 * floats uniform in [-1, 1) from 24 random bits, FLOAT64/COMPLEX128 from 53,
 * times the float range R when R != 1; FLOAT16/BFLOAT16 as random bits
 * whose all-ones exponent loses its top bit; BOOL as 0/1; STRING,
 * RESOURCE, VARIANT and NOTYPE inputs untouched. State carries across the
 * K invocations. The backend's arenas are filled first with the stream of
 * Mix(fill_seed ^ "arena") (tflm_run's arena fill).
 *
 * Options (argv; each also a -D default for targets without a command
 * line): --seed N (HARNESS_SEED, 1), --fill-seed N (HARNESS_FILL_SEED,
 * the seed), --invokes K (HARNESS_INVOKES, 3), --float-range R
 * (HARNESS_FLOAT_RANGE, 1.0f). --quiet is accepted and ignored (tflm_run's
 * flag). With HARNESS_NO_ARGV, main takes no arguments (a platform whose
 * start-up code calls main() so) and the defaults hold. Exit status: 0 ok,
 * 1 init or invoke failed, 2 usage.
 *
 * Written from tflm_run's description (src/tflm_run.cc, README.md); numbers
 * are formatted by hand, as newlib-nano's printf has no 64-bit integers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef HARNESS_SEED
#define HARNESS_SEED 1u
#endif
#ifndef HARNESS_INVOKES
#define HARNESS_INVOKES 3
#endif
#ifndef HARNESS_FLOAT_RANGE
#define HARNESS_FLOAT_RANGE 1.0f
#endif

/* splitmix64 (Steele, Lea and Flood 2014). */
static uint64_t next64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t mix(uint64_t x)
{
	return next64(&x);
}

/* Little-endian bytes of consecutive stream values; the last value's low
 * bytes end the buffer. */
static void fill_bytes(uint64_t *state, uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint64_t v = next64(state);
		for (int b = 0; b < 8 && i < n; b++, i++) {
			p[i] = (uint8_t)(v >> (8 * b));
		}
	}
}

void harness_fill_arena(uint8_t *p, size_t n, uint64_t fill_seed)
{
	uint64_t state = mix(fill_seed ^ 0x00000061726E6561ull); /* "arena" */
	fill_bytes(&state, p, n);
}

/* Uniform in [-1, 1), exactly representable: 24 random bits. */
static float uniform_f32(uint64_t *state)
{
	return (float)(int32_t)(next64(state) >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* Uniform in [-1, 1): 53 random bits. */
static double uniform_f64(uint64_t *state)
{
	return (double)(next64(state) >> 11) * (1.0 / 4503599627370496.0) - 1.0;
}

static int is(const char *type, const char *name)
{
	return strcmp(type, name) == 0;
}

/* Fills one input as tflm_run's FillInput does. */
static void fill_input(harness_tensor_t t, uint64_t *state, float range)
{
	uint8_t *p = (uint8_t *)t.data;
	size_t n = t.bytes;
	if (p == NULL || n == 0) {
		return;
	}
	if (is(t.type, "FLOAT32") || is(t.type, "COMPLEX64")) {
		for (size_t i = 0; i + 4 <= n; i += 4) {
			float v = uniform_f32(state);
			if (range != 1.0f) {
				v *= range;
			}
			memcpy(p + i, &v, 4);
		}
	} else if (is(t.type, "FLOAT64") || is(t.type, "COMPLEX128")) {
		for (size_t i = 0; i + 8 <= n; i += 8) {
			double v = uniform_f64(state);
			if (range != 1.0f) {
				v *= range;
			}
			memcpy(p + i, &v, 8);
		}
	} else if (is(t.type, "FLOAT16") || is(t.type, "BFLOAT16")) {
		uint16_t exp_mask = is(t.type, "FLOAT16") ? 0x7C00 : 0x7F80;
		for (size_t i = 0; i + 2 <= n; i += 2) {
			uint16_t h = (uint16_t)next64(state);
			if ((h & exp_mask) == exp_mask) {
				h &= 0xBFFF;
			}
			memcpy(p + i, &h, 2);
		}
	} else if (is(t.type, "BOOL")) {
		for (size_t i = 0; i < n; i++) {
			p[i] = (uint8_t)(next64(state) & 1);
		}
	} else if (is(t.type, "STRING") || is(t.type, "RESOURCE") || is(t.type, "VARIANT") ||
		   is(t.type, "NOTYPE")) {
		/* not filled */
	} else {
		fill_bytes(state, p, n);
	}
}

/* FNV-1a, 64 bit, continuing from h. */
static uint64_t fnv1a64(const void *data, size_t n, uint64_t h)
{
	const uint8_t *p = (const uint8_t *)data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001B3ull;
	}
	return h;
}

#define FNV_OFFSET 0xCBF29CE484222325ull

/* Appends v in decimal to s. */
static char *put_dec(char *s, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0) {
		*s++ = tmp[--n];
	}
	*s = '\0';
	return s;
}

/* Appends v as 16 lower-case hex digits to s. */
static char *put_hex16(char *s, uint64_t v)
{
	for (int i = 15; i >= 0; i--) {
		*s++ = "0123456789abcdef"[(v >> (4 * i)) & 15];
	}
	*s = '\0';
	return s;
}

static char *put_str(char *s, const char *t)
{
	while (*t != '\0') {
		*s++ = *t++;
	}
	*s = '\0';
	return s;
}

/* Prints key=<decimal>. */
static void print_u64(const char *key, uint64_t v)
{
	char line[96];
	char *s = put_str(line, key);
	s = put_str(s, "=");
	s = put_dec(s, v);
	put_str(s, "\n");
	fputs(line, stdout);
}

/* Prints an error on one line (newlines and tabs become spaces). */
static void print_error(const char *what, const char *msg)
{
	fputs(what, stdout);
	fputs("\nerror=", stdout);
	for (const char *c = msg != NULL && *msg != '\0' ? msg : "failed"; *c != '\0'; c++) {
		putchar(*c == '\n' || *c == '\r' || *c == '\t' ? ' ' : *c);
	}
	putchar('\n');
}

static void usage(void)
{
	fputs("usage: harness [--seed N] [--fill-seed N] [--invokes K] [--float-range R]\n", stderr);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end = NULL;
	if (s == NULL || *s == '\0' || *s == '-') {
		return 0;
	}
	*v = (uint64_t)strtoull(s, &end, 0);
	return end != NULL && *end == '\0';
}

static int harness_main(int argc, char **argv)
{
	uint64_t seed = HARNESS_SEED;
#ifdef HARNESS_FILL_SEED
	uint64_t fill_seed = HARNESS_FILL_SEED;
	int fill_seed_set = 1;
#else
	uint64_t fill_seed = 0;
	int fill_seed_set = 0;
#endif
	uint64_t invokes = HARNESS_INVOKES;
	float range = HARNESS_FLOAT_RANGE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--quiet") == 0) {
			continue;
		}
		if (v == NULL) {
			usage();
			return 2;
		}
		i++;
		if (strcmp(a, "--seed") == 0 && parse_u64(v, &seed)) {
		} else if (strcmp(a, "--fill-seed") == 0 && parse_u64(v, &fill_seed)) {
			fill_seed_set = 1;
		} else if (strcmp(a, "--invokes") == 0 && parse_u64(v, &invokes) && invokes <= 1000000) {
		} else if (strcmp(a, "--float-range") == 0) {
			char *end = NULL;
			range = strtof(v, &end);
			if (end == NULL || *end != '\0' || !(range > 0) || range > 1e30f) {
				usage();
				return 2;
			}
		} else {
			usage();
			return 2;
		}
	}
	if (!fill_seed_set) {
		fill_seed = seed;
	}

	const char *error = NULL;
	if (harness_backend_init(fill_seed, &error) != 0) {
		print_error("status=error", error);
		return 1;
	}
	const size_t n_in = harness_backend_input_count();
	const size_t n_out = harness_backend_output_count();
	fputs("status=ok\n", stdout);
	print_u64("seed", seed);
	if (fill_seed != seed) {
		print_u64("fill_seed", fill_seed);
	}
	if (range != 1.0f) {
		printf("float_range=%.9g\n", (double)range);
	}
	print_u64("invokes", invokes);
	print_u64("inputs", n_in);
	print_u64("outputs", n_out);
	fflush(stdout);

	uint64_t digest = FNV_OFFSET;
	for (uint64_t k = 0; k < invokes; k++) {
		for (size_t i = 0; i < n_in; i++) {
			uint64_t state = mix(mix(mix(seed) ^ k) ^ i);
			fill_input(harness_backend_input(i), &state, range);
		}
		char line[160];
		char *s = put_str(line, "invoke.");
		s = put_dec(s, k);
		if (harness_backend_invoke(&error) != 0) {
			put_str(s, "=error");
			print_error(line, error);
			return 1;
		}
		put_str(s, "=ok\n");
		fputs(line, stdout);
		for (size_t i = 0; i < n_out; i++) {
			harness_tensor_t t = harness_backend_output(i);
			size_t bytes = t.data != NULL ? t.bytes : 0;
			s = put_str(line, "output.");
			s = put_dec(s, k);
			s = put_str(s, ".");
			s = put_dec(s, i);
			s = put_str(s, "=");
			s = put_hex16(s, fnv1a64(t.data, bytes, FNV_OFFSET));
			s = put_str(s, " bytes=");
			s = put_dec(s, bytes);
			s = put_str(s, " type=");
			s = put_str(s, t.type);
			put_str(s, "\n");
			digest = fnv1a64(line, strlen(line), digest);
			fputs(line, stdout);
		}
		fflush(stdout);
	}
	char line[64];
	put_str(put_hex16(put_str(line, "outputs_digest="), digest), "\n");
	fputs(line, stdout);
	fflush(stdout);
	return 0;
}

#ifdef HARNESS_NO_ARGV
int main(void)
{
	return harness_main(0, NULL);
}
#else
int main(int argc, char **argv)
{
	return harness_main(argc, argv);
}
#endif

const char *harness_schema_type_name(int type)
{
	static const char *const names[] = {
		"FLOAT32", "FLOAT16", "INT32",	"UINT8",      "INT64",	  "STRING", "BOOL",	    "INT16",
		"COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64",	  "RESOURCE", "VARIANT", "UINT32",
		"UINT16", "INT4",	"BFLOAT16", "INT2",	      "UINT4",	  "FLOAT8_E4M3FN", "FLOAT8_E5M2",
	};
	if (type < 0 || (size_t)type >= sizeof(names) / sizeof(names[0])) {
		return "UNKNOWN";
	}
	return names[type];
}
