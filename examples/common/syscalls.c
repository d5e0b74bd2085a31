/* newlib's system calls over Arm semihosting (see the Arm "Semihosting for
 * AArch32 and AArch64" specification, v2): stdout and stderr go to the
 * host's console, exit ends QEMU with the program's status, the heap
 * grows from the linker script's `end` up to its __heap_limit, below the
 * stack (the AN547's DTCM, the AN386's SSRAM2). Link with --specs=nano.specs
 * -nostartfiles. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "semihost.h"

enum {
	SYS_OPEN = 0x01,
	SYS_WRITE = 0x05,
	SYS_GET_CMDLINE = 0x15,
	SYS_EXIT_EXTENDED = 0x20,
	ADP_STOPPED_APPLICATION_EXIT = 0x20026,
};

static int call(int op, void *arg)
{
	register int r0 __asm__("r0") = op;
	register void *r1 __asm__("r1") = arg;
	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

/* The host's handles of ":tt" opened for writing (stdout) and appending
 * (stderr), opened on first use; -1 until then. */
static int console[3] = {-1, -1, -1};

static int handle(int fd)
{
	if (fd != 1 && fd != 2) {
		return -1;
	}
	if (console[fd] < 0) {
		/* Mode 4 is "w", 8 is "a": the specification's :tt convention. */
		uintptr_t args[3] = {(uintptr_t)":tt", fd == 1 ? 4 : 8, 3};
		console[fd] = call(SYS_OPEN, args);
	}
	return console[fd];
}

size_t semihost_write(int fd, const void *buf, size_t n)
{
	uintptr_t args[3];
	int h = handle(fd);
	if (h < 0) {
		return n;
	}
	args[0] = (uintptr_t)h;
	args[1] = (uintptr_t)buf;
	args[2] = n;
	return (size_t)call(SYS_WRITE, args);
}

int semihost_cmdline(char *buf, size_t size)
{
	uintptr_t args[2] = {(uintptr_t)buf, size};
	if (size == 0 || call(SYS_GET_CMDLINE, args) != 0) {
		return 0;
	}
	buf[args[1] < size ? args[1] : size - 1] = 0;
	return 1;
}

void semihost_exit(int status)
{
	uintptr_t args[2] = {ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)status};
	call(SYS_EXIT_EXTENDED, args);
	for (;;) {
	}
}

int _write(int fd, const char *buf, int n)
{
	size_t left = semihost_write(fd, buf, (size_t)n);
	if (left == (size_t)n && n > 0) {
		errno = EIO;
		return -1;
	}
	return n - (int)left;
}

void _exit(int status)
{
	semihost_exit(status);
}

void *_sbrk(ptrdiff_t incr)
{
	extern char end, __heap_limit;
	static char *brk = &end;
	char *old = brk;
	if (incr > &__heap_limit - brk) {
		errno = ENOMEM;
		return (void *)-1;
	}
	brk += incr;
	return old;
}

/* The rest: no files, no input, one process. */
int _read(int fd, char *buf, int n)
{
	(void)fd, (void)buf, (void)n;
	return 0;
}

int _close(int fd)
{
	(void)fd;
	return -1;
}

int _lseek(int fd, int off, int whence)
{
	(void)fd, (void)off, (void)whence;
	return 0;
}

int _fstat(int fd, struct stat *st)
{
	(void)fd;
	st->st_mode = S_IFCHR;
	return 0;
}

int _isatty(int fd)
{
	return fd >= 0 && fd <= 2;
}

int _getpid(void)
{
	return 1;
}

int _kill(int pid, int sig)
{
	(void)pid, (void)sig;
	errno = EINVAL;
	return -1;
}
