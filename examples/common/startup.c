/* Start-up code for the example boards: QEMU's -M mps3-an547 (Cortex-M55,
 * Armv8.1-M) with ../cortex-m55/an547.ld and -M mps2-an386 (Cortex-M4F,
 * Armv7E-M) with ../cortex-m4/an386.ld. The linker script gives the
 * vector table's place (.vectors, where the core reads it at reset),
 * __stack_top, and the copy and zero tables.
 *
 * At reset: turn on the FPU (and the M55's MVE: CPACR, CP10 and CP11 full
 * access, as the hard-float TFLM libraries need), copy every initialised
 * RAM section from its load image in the program's image (the AN547's
 * QSPI flash, the AN386's SSRAM1) and zero .bss (the linker script's copy
 * and zero tables), turn on the configurable fault handlers,
 * run C++ constructors, then exit through Arm semihosting with main's
 * return value. main's arguments are the semihosting command line (QEMU's
 * -semihosting-config arg=...), split at spaces. A fault prints its status registers and exits 99. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semihost.h"

extern int main(int argc, char **argv);
extern void __libc_init_array(void);
extern uint32_t __stack_top;
extern const uint32_t __copy_table_start[], __copy_table_end[];
extern const uint32_t __zero_table_start[], __zero_table_end[];

/* What crti, crtn and crtbegin would give (we link with -nostartfiles). */
void _init(void) {}
void _fini(void) {}
void *__dso_handle = &__dso_handle;

#define REG32(a) (*(volatile uint32_t *)(a))
#define SCB_CPACR REG32(0xE000ED88u)
#define SCB_SHCSR REG32(0xE000ED24u)
#define SCB_CFSR REG32(0xE000ED28u)
#define SCB_HFSR REG32(0xE000ED2Cu)
#define SCB_MMFAR REG32(0xE000ED34u)
#define SCB_BFAR REG32(0xE000ED38u)

void Fault_Handler(void)
{
	fprintf(stderr, "fault: CFSR=0x%08lx HFSR=0x%08lx MMFAR=0x%08lx BFAR=0x%08lx\n",
		(unsigned long)SCB_CFSR, (unsigned long)SCB_HFSR,
		(unsigned long)SCB_MMFAR, (unsigned long)SCB_BFAR);
	semihost_exit(99);
}

/* c_start runs with the FPU on: compiled code may use it from here. */
/* args splits the semihosting command line into argv; argc is 0 when there
 * is none. */
static int args(char **argv, int max)
{
	static char line[256];
	int argc = 0;
	char *p = line;
	if (!semihost_cmdline(line, sizeof line)) {
		return 0;
	}
	while (*p != 0 && argc < max - 1) {
		while (*p == ' ') {
			*p++ = 0;
		}
		if (*p == 0) {
			break;
		}
		argv[argc++] = p;
		while (*p != 0 && *p != ' ') {
			p++;
		}
	}
	argv[argc] = NULL;
	return argc;
}

__attribute__((noreturn, used)) static void c_start(void)
{
	static char *argv[32];
	const uint32_t *t;
	for (t = __copy_table_start; t < __copy_table_end; t += 3) {
		memcpy((void *)t[1], (const void *)t[0], (size_t)(t[2] - t[1]));
	}
	for (t = __zero_table_start; t < __zero_table_end; t += 2) {
		memset((void *)t[0], 0, (size_t)(t[1] - t[0]));
	}
	SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18); /* MemManage, BusFault, UsageFault */
	__libc_init_array();
	exit(main(args(argv, 32), argv));
}

/* The FPU must be on before any compiled code runs: GCC may keep values in
 * floating-point registers anywhere, so this part is assembly. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
	__asm__ volatile(
		"ldr r0, =0xE000ED88\n" /* CPACR */
		"ldr r1, [r0]\n"
		"orr r1, r1, #(0xF << 20)\n" /* CP10, CP11: full access */
		"str r1, [r0]\n"
		"dsb\n"
		"isb\n"
		"b c_start\n");
}

typedef void (*handler_t)(void);

/* The first 16 entries of the vector table (the core's exceptions); the
 * example uses no interrupts. Entry 7 is the M55's SecureFault and
 * reserved on Armv7E-M, where it is never taken. */
__attribute__((section(".vectors"), used)) const handler_t vectors[16] = {
	(handler_t)(uintptr_t)&__stack_top,
	Reset_Handler,
	Fault_Handler, /* NMI */
	Fault_Handler, /* HardFault */
	Fault_Handler, /* MemManage */
	Fault_Handler, /* BusFault */
	Fault_Handler, /* UsageFault */
	Fault_Handler, /* SecureFault */
	0, 0, 0,
	Fault_Handler, /* SVCall */
	Fault_Handler, /* DebugMonitor */
	0,
	Fault_Handler, /* PendSV */
	Fault_Handler, /* SysTick */
};
