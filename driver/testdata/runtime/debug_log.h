/* debug_log.h: TFLM's platform log hooks (debug_log.c) and what TFLM
 * logged since the last harness_log_reset. */
#ifndef HARNESS_DEBUG_LOG_H
#define HARNESS_DEBUG_LOG_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void DebugLog(const char *format, va_list args);
int DebugVsnprintf(char *buffer, size_t buf_size, const char *format, va_list vlist);

/* Forgets what was logged. */
void harness_log_reset(void);

/* What TFLM logged since the last reset, messages joined by " | " (the
 * first 1 KiB). */
const char *harness_log(void);

#ifdef __cplusplus
}
#endif

#endif
