/* rv_iss.h - the instruction-set simulator of the Loom control core
 * (cmodel/rv_iss.c): RV32IM + Zicsr, machine mode only, exactly as
 * docs/CONTROL.md specifies (CSR set, traps, interrupts, WFI), so that the
 * firmware ELF that runs on the RTL core (rtl/npu_cpu.sv) runs unchanged on
 * the C model.
 *
 * The ISS owns the architectural state (struct rv_iss, all fields public)
 * and nothing else: memory, the local peripheral and the interrupt lines are
 * the embedder's, reached through struct rv_iss_bus. No global state; any
 * number of instances.
 *
 * Memory: every access goes through the bus callbacks, which return 0 for
 * success and nonzero for an access fault (the ISS then raises the trap).
 * The ISS checks natural alignment itself before calling load/store (a
 * misaligned access never reaches the bus); fetch is only called with a
 * 4-byte-aligned address. load returns the `size` bytes (1, 2, 4) at addr,
 * little-endian, zero-extended; store writes the low `size` bytes of val.
 * Which addresses fault (the memory map of CONTROL.md, word-only access to
 * NPU and PERIPH, fetch only from the TCMs) is the bus's business.
 *
 * Interrupts: the `irq` callback returns the level of the external mip bits
 * (bit 7 MTIP = mtime >= mtimecmp, bits 16..18 the local lines of core.def
 * LOOM_CORE_IRQ; other bits are ignored). It is sampled once at the start
 * of every step; the sampled value is what an interrupt check, WFI and a
 * CSR read of mip see during that step. NULL: no interrupt line is ever set.
 * mtime is the ISS's cycle count (iss->cycle): a peripheral model reads it
 * from there.
 *
 * Steps: rv_iss_step() does one of
 *   - wait in WFI: nothing pending and enabled (mip & mie == 0) after a WFI;
 *   - take an interrupt: mstatus.MIE and mip & mie != 0; the highest set bit
 *     wins (18 > 17 > 16 > 7), mcause = 0x80000000 | bit, mepc = pc (the
 *     instruction not yet executed), mtval = 0; no instruction runs;
 *   - run the instruction at pc, which either retires or raises an exception
 *     (mepc = its pc, mcause, mtval per CONTROL.md; it does not retire and
 *     leaves no other effect: rd, memory and CSRs other than the trap CSRs
 *     are unchanged).
 * A WFI retires at once (pc = the next instruction); if mip & mie is 0 it
 * then leaves iss->wfi set and the following steps wait until mip & mie != 0
 * (whatever mstatus.MIE says). The step that sees the wake-up clears wfi and
 * goes on in the same step: it takes the interrupt if MIE is set (mepc = the
 * instruction after the WFI), else runs that instruction.
 *
 * Cycle model (an estimate, not the RTL's exact timing; it drives
 * iss->cycle = mcycle = mtime):
 *   ALU, LUI, AUIPC, CSR, FENCE, FENCE.I, WFI, branch not taken   1
 *   load, store                                                    2
 *   taken branch, JAL, JALR, MRET                                  2
 *   MUL, MULH, MULHSU, MULHU                                       3
 *   DIV, DIVU, REM, REMU                                           34
 *   a step waiting in WFI                                          1
 *   an instruction that raises an exception (ECALL, EBREAK,
 *   illegal, misaligned, access fault), instead of its own cost    2
 *   taking an interrupt                                            2
 * mcycle/cycle and minstret/instret read in an instruction give the counts
 * before that instruction. iss->instret counts retired instructions (not
 * trapping ones; a WFI counts once).
 */
#ifndef LOOM_RV_ISS_H
#define LOOM_RV_ISS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mip/mie bits of the external interrupt lines the ISS knows */
#define RV_MIP_MTIP 0x00000080u
#define RV_MIP_LOCAL 0x00070000u /* bits 16..18, core.def LOOM_CORE_IRQ */
#define RV_MIP_MASK (RV_MIP_MTIP | RV_MIP_LOCAL)

#define RV_MSTATUS_MIE 0x00000008u
#define RV_MSTATUS_MPIE 0x00000080u
#define RV_MSTATUS_MPP 0x00001800u /* always reads 3 (M) */

#define RV_MISA 0x40001100u /* RV32, I, M */

/* mcause of the exceptions (interrupts: 0x80000000 | mip bit) */
enum rv_cause {
	RV_CAUSE_INSN_MISALIGNED = 0,
	RV_CAUSE_INSN_FAULT = 1,
	RV_CAUSE_ILLEGAL = 2,
	RV_CAUSE_BREAKPOINT = 3,
	RV_CAUSE_LOAD_MISALIGNED = 4,
	RV_CAUSE_LOAD_FAULT = 5,
	RV_CAUSE_STORE_MISALIGNED = 6,
	RV_CAUSE_STORE_FAULT = 7,
	RV_CAUSE_ECALL_M = 11,
};
#define RV_CAUSE_IRQ 0x80000000u

/* what rv_iss_step() did */
enum rv_iss_status {
	RV_ISS_RAN = 0,  /* an instruction retired (a WFI too, even if it now waits) */
	RV_ISS_TRAP = 1, /* an instruction raised an exception; the trap was taken */
	RV_ISS_IRQ = 2,  /* an interrupt was taken; no instruction ran */
	RV_ISS_WFI = 3,  /* waiting in WFI: one cycle passed, nothing else happened */
};

struct rv_iss_bus {
	int (*load)(void *ctx, uint32_t addr, unsigned size, uint32_t *val);
	int (*store)(void *ctx, uint32_t addr, unsigned size, uint32_t val);
	int (*fetch)(void *ctx, uint32_t addr, uint32_t *insn);
	uint32_t (*irq)(void *ctx); /* may be NULL */
};

struct rv_iss {
	uint32_t x[32]; /* x[0] is always 0 */
	uint32_t pc;

	/* CSRs, stored as they read (only the writable bits can be nonzero) */
	uint32_t mstatus; /* MIE, MPIE; MPP is added on read */
	uint32_t mie;
	uint32_t mtvec;
	uint32_t mscratch;
	uint32_t mepc;
	uint32_t mcause;
	uint32_t mtval;
	uint32_t mip; /* external lines as sampled at the start of the last step */

	uint64_t cycle;   /* mcycle, mtime: cycles since reset (see cycle model) */
	uint64_t instret; /* minstret: instructions retired since reset */
	int wfi;          /* waiting in WFI */
	int halt;         /* rv_iss_run() returns when set (by a bus callback or
			   * the embedder; the ISS only clears it at reset) */

	struct rv_iss_bus bus;
	void *ctx; /* passed to every bus callback */
};

/* Set the bus and its context, then reset. */
void rv_iss_init(struct rv_iss *iss, const struct rv_iss_bus *bus, void *ctx);

/* Reset: pc = 0, every register, CSR and counter 0, wfi and halt 0. */
void rv_iss_reset(struct rv_iss *iss);

/* One step (see above); returns an enum rv_iss_status. */
int rv_iss_step(struct rv_iss *iss);

/* Step until max_steps steps have run or iss->halt is set (checked before
 * every step); returns the number of steps run. */
uint64_t rv_iss_run(struct rv_iss *iss, uint64_t max_steps);

/* Read CSR csr as the instruction would (no side effects); -1 if it does not
 * exist. For tests and debugging. */
int rv_iss_csr_read(const struct rv_iss *iss, uint32_t csr, uint32_t *val);

#ifdef __cplusplus
}
#endif

#endif
