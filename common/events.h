/* events.h - the energy event counts of one tensor-engine instruction
 * (regs.def LOOM_EVT: scratchpad and accumulator line accesses, vector
 * lane folds, requantized values), as the RTL counts them. The one place
 * these counts are written: the C model adds them per instruction it
 * executes (so its EVT registers equal the RTL's), and an analytical
 * energy estimate can sum them over a program without running it.
 * docs/ISA.md "Energy event counters", docs/DSE.md "Energy". */
#ifndef LOOM_COMMON_EVENTS_H
#define LOOM_COMMON_EVENTS_H

#include <stdint.h>

#include "loom/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add the events of `in` (already checked: loom_insn_check) on an array of
 * R rows and C columns with M multipliers a vector lane (vec_macs; 0 is
 * taken as 1) to ev[LOOM_EVT_COUNT]. Opcodes without scratchpad or
 * accumulator traffic (MARK, FINISH) add nothing. */
void loom_insn_events(uint32_t R, uint32_t C, uint32_t M, const loom_insn *in, uint64_t ev[LOOM_EVT_COUNT]);

#ifdef __cplusplus
}
#endif

#endif
