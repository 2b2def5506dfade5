/* start.S - entry of the stub firmware (tests/driver/stub_fw/, a test
 * double of firmware/ for libloom's own tests): stack at the end of DTCM,
 * .bss cleared, a trap vector that reports the trap in TOHOST and parks. */
#include "loom/core_asm.h"
	.section .text.init
	.globl _start
_start:
	la sp, __stack_top
	la t0, __bss_start
	la t1, __bss_end
1:	bgeu t0, t1, 2f
	sw zero, 0(t0)
	addi t0, t0, 4
	j 1b
2:	la t0, trap
	csrw mtvec, t0
	call main
3:	wfi
	j 3b

	.align 2
trap:
	csrr t0, mcause
	slli t0, t0, 1
	ori t0, t0, 1
	li t1, LOOM_CORE_PERIPH_BASE + LOOM_CORE_REG_TOHOST
	sw t0, 0(t1)
4:	j 4b
