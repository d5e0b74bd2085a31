/* The input fill and output lines of ../shared/tools/tflm_run, shared by
 * main.c (heliac's module) and ref.cc (TFLM's MicroInterpreter) so that
 * both print lines that compare with tflm_run_m55's. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "semihost.h"

/* splitmix64 (Steele, Lea and Flood 2014), the generator tflm_run uses. */
static uint64_t next(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t mix(uint64_t x)
{
	return next(&x);
}

/* The state of input i's stream in run k: Mix(Mix(Mix(seed) ^ k) ^ i). */
uint64_t harness_input_stream(uint64_t seed, uint64_t k, uint64_t i)
{
	return mix(mix(mix(seed) ^ k) ^ i);
}

static void fill_bytes(uint64_t *g, uint8_t *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = next(g);
		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = next(g);
		for (; i < n; i++, v >>= 8) {
			p[i] = (uint8_t)v;
		}
	}
}

/* harness_fill writes input bytes of type `type`, as tflm_run's FillInput: floats
 * uniform in [-range, range), booleans 0 or 1, other types random bytes. */
void harness_fill(int type, uint8_t *p, size_t n, uint64_t *g, float range)
{
	size_t i;
	switch (type) {
	case HARNESS_TYPE_FLOAT32:
	case HARNESS_TYPE_COMPLEX64:
		for (i = 0; i + 4 <= n; i += 4) {
			float v = (float)(int32_t)(next(g) >> 40) * (1.0f / 8388608.0f) - 1.0f;
			if (range != 1.0f) {
				v *= range;
			}
			memcpy(p + i, &v, 4);
		}
		break;
	case HARNESS_TYPE_FLOAT64:
	case HARNESS_TYPE_COMPLEX128:
		for (i = 0; i + 8 <= n; i += 8) {
			double v = (double)(next(g) >> 11) * (1.0 / 4503599627370496.0) - 1.0;
			if (range != 1.0f) {
				v *= range;
			}
			memcpy(p + i, &v, 8);
		}
		break;
	case HARNESS_TYPE_FLOAT16:
	case HARNESS_TYPE_BFLOAT16: {
		uint16_t exp = type == HARNESS_TYPE_FLOAT16 ? 0x7C00 : 0x7F80;
		for (i = 0; i + 2 <= n; i += 2) {
			uint16_t h = (uint16_t)next(g);
			if ((h & exp) == exp) {
				h &= 0xBFFF;
			}
			memcpy(p + i, &h, 2);
		}
		break;
	}
	case HARNESS_TYPE_BOOL:
		for (i = 0; i < n; i++) {
			p[i] = (uint8_t)(next(g) & 1);
		}
		break;
	case HARNESS_TYPE_STRING:
	case HARNESS_TYPE_RESOURCE:
	case HARNESS_TYPE_VARIANT:
		break;
	default:
		fill_bytes(g, p, n);
	}
}

uint64_t harness_fnv1a64(const void *data, size_t n, uint64_t h)
{
	const uint8_t *p = data;
	size_t i;
	for (i = 0; i < n; i++) {
		h = (h ^ p[i]) * 0x100000001B3ull;
	}
	return h;
}

/* hex16 writes v as 16 lower-case hex digits and a NUL (newlib-nano's
 * printf has no long long). */
static char *hex16(uint64_t v, char buf[17])
{
	int i;
	for (i = 15; i >= 0; i--, v >>= 4) {
		buf[i] = "0123456789abcdef"[v & 15];
	}
	buf[16] = 0;
	return buf;
}

/* Names of the element types, as tflm_run prints them. */
const char *harness_type_name(int type)
{
	static const char *const names[] = {
		"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL",
		"INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64",
		"RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16",
		"INT2", "UINT4", "FLOAT8_E4M3FN", "FLOAT8_E5M2",
	};
	return type >= 0 && (size_t)type < sizeof names / sizeof names[0] ? names[type] : "UNKNOWN";
}

/* harness_options reads the semihosting command line (SYS_GET_CMDLINE): the
 * program's name, then --seed N, --invokes K, --float-range R. */
struct harness_options harness_options(void)
{
	static char line[256];
	struct harness_options o = {1, 3, 1.0f};
	char *argv[16], *save = NULL;
	int argc = 0, i;
	if (!semihost_cmdline(line, sizeof line)) {
		return o;
	}
	for (argv[0] = strtok_r(line, " ", &save); argv[argc] != NULL && argc < 15;) {
		argv[++argc] = strtok_r(NULL, " ", &save);
	}
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--seed") == 0) {
			o.seed = strtoull(argv[i + 1], NULL, 0);
		} else if (strcmp(argv[i], "--invokes") == 0) {
			o.invokes = atoi(argv[i + 1]);
		} else if (strcmp(argv[i], "--float-range") == 0) {
			o.range = strtof(argv[i + 1], NULL);
		} else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
		}
	}
	return o;
}

void harness_output(int k, size_t i, const void *data, size_t bytes, const char *type, uint64_t *digest)
{
	char line[160], hex[17];
	snprintf(line, sizeof line, "output.%d.%u=%s bytes=%u type=%s\n", k, (unsigned)i,
		 hex16(harness_fnv1a64(data, bytes, HARNESS_FNV_OFFSET), hex), (unsigned)bytes, type);
	*digest = harness_fnv1a64(line, strlen(line), *digest);
	fputs(line, stdout);
}

void harness_digest(uint64_t digest)
{
	char hex[17];
	printf("outputs_digest=%s\n", hex16(digest, hex));
}
