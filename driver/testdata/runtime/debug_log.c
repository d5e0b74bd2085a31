/*
 * debug_log.c: the platform hooks TFLM's libraries leave to the
 * application (../shared/tflm/README.md). Log text goes to stderr and is
 * also kept, from the last harness_log_reset on, for the backends' error=
 * lines (harness_log).
 */
#include <stdarg.h>
#include <stdio.h>

#include "debug_log.h"

static char log_text[1024];
static size_t log_len;

void DebugLog(const char *format, va_list args)
{
	char buf[512];
	vsnprintf(buf, sizeof(buf), format, args);
	fputs(buf, stderr);
	/* Messages end with "\r\n" (MicroPrintf): they are joined by " | ". */
	for (const char *c = buf; *c != '\0'; c++) {
		const char *add = *c == '\r' ? "" : *c == '\n' ? " | " : NULL;
		char one[2] = {*c, '\0'};
		for (const char *a = add != NULL ? add : one; *a != '\0' && log_len + 1 < sizeof(log_text); a++) {
			log_text[log_len++] = *a;
		}
	}
	log_text[log_len] = '\0';
}

int DebugVsnprintf(char *buffer, size_t buf_size, const char *format, va_list vlist)
{
	return vsnprintf(buffer, buf_size, format, vlist);
}

void harness_log_reset(void)
{
	log_len = 0;
	log_text[0] = '\0';
}

const char *harness_log(void)
{
	return log_text;
}
