/* fw.h - what the control-core firmware sees of the NPU, freestanding.
 *
 * Register offsets come from the X-macro files only (include/loom/regs.def
 * for the tensor engine, include/loom/core.def through core.h for the
 * core's memory map and peripheral); nothing here repeats an offset of
 * theirs; the CTRL/STATUS/IRQ bits and the counter block's base come
 * from include/loom/regs.h, which is freestanding.
 * Protocol: docs/FIRMWARE.md, include/loom/fw_abi.h. */
#ifndef LOOM_FW_H
#define LOOM_FW_H

#include <stdint.h>
#include "loom/core.h"
#include "loom/fw_abi.h"
#include "loom/regs.h"

/* the tensor engine's registers: FW_NPU_<NAME> = byte offset (regs.def) */
enum fw_npu_reg {
#define LOOM_REG(n, off, acc, doc) FW_NPU_##n = off,
#include "loom/regs.def"
#undef LOOM_REG
};

/* perf counters: FW_CTR_<NAME> = index (regs.def order) */
enum fw_ctr {
#define LOOM_CTR(n, idx, doc) FW_CTR_##n = idx,
#include "loom/regs.def"
#undef LOOM_CTR
	FW_CTR_COUNT
};
_Static_assert(FW_CTR_COUNT == LOOM_FW_CTRS, "loom_completion.ctr holds every regs.def counter");

/* energy event counters: FW_EVT_<NAME> = index (regs.def order) */
enum fw_evt {
#define LOOM_EVT(n, idx, doc) FW_EVT_##n = idx,
#include "loom/regs.def"
#undef LOOM_EVT
	FW_EVT_COUNT
};
_Static_assert(FW_EVT_COUNT == LOOM_FW_EVTS, "loom_completion.evt holds every regs.def event counter");

/* regs.h names under the firmware's prefix */
#define FW_NPU_CTR_BASE LOOM_REG_CTR_BASE /* counter i at CTR_BASE + 4*i */
#define FW_NPU_EVT_BASE LOOM_REG_EVT_BASE /* event counter i at EVT_BASE + 4*i */
#define FW_CTRL_START LOOM_CTRL_START
#define FW_CTRL_ABORT LOOM_CTRL_ABORT
#define FW_STATUS_BUSY LOOM_STATUS_BUSY
#define FW_IRQ_DONE LOOM_IRQ_DONE
#define FW_IRQ_ERROR LOOM_IRQ_ERROR
#define FW_INSN_ALIGN LOOM_INSN_BYTES /* INSN_BASE alignment */
/* the window registers are base/size pairs, 8 bytes apart, one per job window */
_Static_assert(FW_NPU_WIN1_BASE - FW_NPU_WIN0_BASE == 8 && FW_NPU_WIN0_SIZE - FW_NPU_WIN0_BASE == 4 &&
		       FW_NPU_WIN3_BASE - FW_NPU_WIN0_BASE == 8 * (LOOM_FW_JOB_WINDOWS - 1),
	       "WIN registers: one base/size pair per job window");
_Static_assert(FW_NPU_CTR_BASE + 4 * FW_CTR_COUNT <= FW_NPU_WIN_CTRL, "counter block below WIN_CTRL");
_Static_assert(FW_NPU_EVT_BASE > FW_NPU_WIN3_SIZE && FW_NPU_EVT_BASE + 4 * FW_EVT_COUNT <= 0x100,
	       "event counters between the DMA windows and the core's block at 0x100");

/* HW_BUS: dram_beat_bytes | dram_mib << 16 (regs.def) */
#define FW_HW_BUS_DRAM_MIB(v) ((v) >> 16)

/* mip / mie bits */
#define FW_MIP_MTIP (1u << 7)
#define FW_MIP_DOORBELL (1u << LOOM_CORE_IRQ_DOORBELL)
#define FW_MIP_ENGINE_DONE (1u << LOOM_CORE_IRQ_ENGINE_DONE)
#define FW_MIP_ENGINE_ERR (1u << LOOM_CORE_IRQ_ENGINE_ERR)

/* What the firmware reports after a trap (exception; it never enables
 * interrupts): MBOX_F2H0 = FW_CRASH_MAGIC, F2H1..3 = mcause, mepc, mtval,
 * and HOST_IRQ bit FW_HOST_IRQ_CRASH (fw_abi.h). */
#define FW_CRASH_MAGIC LOOM_FW_CRASH_MAGIC
#define FW_HOST_IRQ_CRASH LOOM_HOST_IRQ_CRASH

/* build options */
#ifndef LOOM_FW_VERSION
#define LOOM_FW_VERSION 0x00010000u /* major << 16 | minor << 8 | patch */
#endif
#ifndef LOOM_FW_TEST_HANG
#define LOOM_FW_TEST_HANG 1 /* honour LOOM_JOB_F_TEST_HANG (test builds) */
#endif
#define FW_DEFAULT_WATCHDOG 50000000u /* cycles, when neither job nor boot block sets one */

#endif
