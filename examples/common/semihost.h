/* Arm semihosting on the Cortex-M55 and the Cortex-M4 (BKPT 0xAB), as
 * QEMU's -semihosting serves it: the few calls the examples need. */
#ifndef SEMIHOST_H
#define SEMIHOST_H

#include <stddef.h>

/* semihost_write writes n bytes to the host's stdout (fd 1) or stderr (fd
 * 2); it returns the bytes not written. */
size_t semihost_write(int fd, const void *buf, size_t n);

/* semihost_cmdline copies the command line QEMU passes (-semihosting-config
 * arg=...) into buf, NUL-terminated; it returns 0 when there is none. */
int semihost_cmdline(char *buf, size_t size);

/* semihost_exit ends the emulation with status. */
__attribute__((noreturn)) void semihost_exit(int status);

#endif
