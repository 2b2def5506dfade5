/* fw_check.c - build-time check (compiled with -fsyntax-only, never linked)
 * that the constants firmware/fw.h repeats from isa.h still match it, and
 * that fw.h's X-macro expansions agree with isa.h's. */
#include "loom/isa.h"
#include "fw.h"

#define SAME(a, b) _Static_assert((long)(a) == (long)(b), #a " == " #b)
SAME(FW_NPU_CTR_BASE, LOOM_REG_CTR_BASE);
SAME(FW_CTRL_START, LOOM_CTRL_START);
SAME(FW_CTRL_ABORT, LOOM_CTRL_ABORT);
SAME(FW_STATUS_BUSY, LOOM_STATUS_BUSY);
SAME(FW_IRQ_DONE, LOOM_IRQ_DONE);
SAME(FW_IRQ_ERROR, LOOM_IRQ_ERROR);
SAME(FW_INSN_ALIGN, LOOM_INSN_BYTES);
SAME(FW_CTR_COUNT, LOOM_CTR_COUNT);
SAME(FW_NPU_WIN3_SIZE, LOOM_REG_WIN3_SIZE);
/* the window registers are base/size pairs, 8 bytes apart, one per job window */
SAME(FW_NPU_WIN1_BASE - FW_NPU_WIN0_BASE, 8);
SAME(FW_NPU_WIN3_BASE - FW_NPU_WIN0_BASE, 8 * (LOOM_FW_JOB_WINDOWS - 1));
SAME(FW_NPU_WIN0_SIZE - FW_NPU_WIN0_BASE, 4);
/* the counters fit below the next register */
_Static_assert(FW_NPU_CTR_BASE + 4 * FW_CTR_COUNT <= FW_NPU_WIN_CTRL, "counter block");
