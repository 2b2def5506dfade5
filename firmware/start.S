/* start.S - reset entry and trap vector of the Loom control-core firmware
 * (docs/FIRMWARE.md "Loading and boot", docs/CONTROL.md).
 *
 * _start (at 0, the reset pc): stack pointer at the end of DTCM, .bss
 * cleared, mtvec = fw_trap, then main() (which never returns).
 *
 * fw_trap: the firmware never sets mstatus.MIE, so only an exception gets
 * here. It masks every interrupt (mie = 0, so the final WFI sleeps for
 * good), takes a fresh stack (the old one may be what faulted) and hands
 * mcause, mepc, mtval to fw_crash() in main.c, which reports them in
 * MBOX_F2H1..3 with MBOX_F2H0 = the crash code, raises the host interrupt
 * and parks in WFI. The register addresses live in C (core.def), not here.
 */
	.section .text.init, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
	la	sp, __stack_top
	la	t0, __bss_start
	la	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sw	zero, 0(t0)
	addi	t0, t0, 4
	j	1b
2:	la	t0, fw_trap
	csrw	mtvec, t0
	call	main
	/* main does not return; if it did, report it like a trap (mcause 0,
	 * mepc = here) */
	auipc	a1, 0
	li	a0, 0
	li	a2, 0
	j	3f
	.size _start, . - _start

	.align 2
	.globl fw_trap
	.type fw_trap, @function
fw_trap:
	csrw	mie, zero
	csrr	a0, mcause
	csrr	a1, mepc
	csrr	a2, mtval
3:	la	sp, __stack_top
	j	fw_crash
	.size fw_trap, . - fw_trap
