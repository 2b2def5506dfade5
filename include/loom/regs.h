/* regs.h - C names of the NPU's MMIO registers (include/loom/regs.def) and
 * the bits of CTRL, STATUS and IRQ_STATUS/IRQ_MASK. Freestanding: the host
 * side includes it through isa.h, the firmware (firmware/fw.h) directly, so
 * no register constant exists twice. */
#ifndef LOOM_REGS_H
#define LOOM_REGS_H

enum loom_reg {
#define LOOM_REG(n, off, acc, doc) LOOM_REG_##n = off,
#include "loom/regs.def"
#undef LOOM_REG
};
/* perf counter i reads at LOOM_REG_CTR_BASE + 4*i */
#define LOOM_REG_CTR_BASE 0x040u

enum loom_ctr {
#define LOOM_CTR(n, idx, doc) LOOM_CTR_##n = idx,
#include "loom/regs.def"
#undef LOOM_CTR
	LOOM_CTR_COUNT
};

/* energy event counter i reads at LOOM_REG_EVT_BASE + 4*i (room for 16) */
#define LOOM_REG_EVT_BASE 0x0c0u

enum loom_evt {
#define LOOM_EVT(n, idx, doc) LOOM_EVT_##n = idx,
#include "loom/regs.def"
#undef LOOM_EVT
	LOOM_EVT_COUNT
};

/* CTRL / STATUS / IRQ bits */
#define LOOM_CTRL_START 0x1u
#define LOOM_CTRL_ABORT 0x2u
#define LOOM_STATUS_BUSY 0x1u
#define LOOM_STATUS_DONE 0x2u
#define LOOM_STATUS_ERROR 0x4u
#define LOOM_IRQ_DONE 0x1u
#define LOOM_IRQ_ERROR 0x2u

/* an instruction's size: INSN_BASE must be a multiple of it */
#define LOOM_INSN_BYTES 32

#endif
