// TFLM's logging hooks, which its libraries leave to the platform
// (../shared/tflm/README.md): messages go to stderr through semihosting.
#include <cstdarg>
#include <cstdio>

extern "C" void DebugLog(const char* format, va_list args) {
  vfprintf(stderr, format, args);
}

extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format,
                              va_list args) {
  return vsnprintf(buf, n, format, args);
}
