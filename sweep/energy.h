/* energy.h - energy per inference from a run's activity counters: the
 * events the hardware counts (MACS, DRAM bytes, and the energy event
 * counters of regs.def: scratchpad and accumulator line accesses, vector
 * lane folds, requantized values) times per-event energies derived from a
 * technology file (sweep/tech.h) and the configuration's macro sizes.
 * docs/DSE.md "Energy" gives the formulas and an example. */
#ifndef LOOM_SWEEP_ENERGY_H
#define LOOM_SWEEP_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwcfg.h"
#include "loom/loom.h"
#include "ir/model.h"
#include "runtime/exec.h"
#include "sweep/tech.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a run did, summed over its NPU jobs. */
typedef struct sweep_events {
	uint64_t macs;                    /* MACS (R*C per activation line streamed) */
	uint64_t dram_rd, dram_wr;        /* DRAM_RD_BYTES, DRAM_WR_BYTES */
	uint64_t sp_rd, sp_wr;            /* scratchpad lines read / written */
	uint64_t acc_rd, acc_wr;          /* accumulator lines read / written */
	uint64_t vec_lines;               /* lines folded into the vector unit's R lanes */
	uint64_t rq_values;               /* values requantized */
	uint64_t jobs;
} sweep_events;

/* Add one job's counters (a completion record: loom_result.ctr / .evt). */
void sweep_events_add_job(sweep_events *ev, const uint32_t ctr[LOOM_FW_CTRS], const uint32_t evt[LOOM_FW_EVTS]);
/* Add b's events to a. */
void sweep_events_add(sweep_events *a, const sweep_events *b);
/* Add the NPU jobs of m's last run (loom_exec_get_stats: its steps). */
void sweep_events_add_run(sweep_events *ev, const loom_model *m, const loom_exec_stats *st);

/* The energy of one 64-bit access of an SRAM macro of `bytes` bytes, pJ:
 * interpolated between the technology's 8 KB, 32 KB and 1 MB points
 * linearly in log(energy) over log(size), extended beyond them with the
 * slope of the nearest segment. */
double sweep_sram_e64(const sweep_tech *t, double bytes);

typedef struct sweep_energy {
	/* per event, pJ */
	double e_mac;          /* mul8 + add32 */
	double e_sp_line;      /* (8R / 64) * E64(scratchpad bank bytes) */
	double e_acc_line;     /* C lanes * (32 / 64) * E64(accumulator lane bytes) */
	double e_dram_byte;    /* dram64 / 8 */
	double e_vec_line;     /* R * (mul8 + add32) */
	double e_rq_value;     /* mul32 + 3 * add32 */
	/* the breakdown, pJ: total = mac + sram + dram + other */
	double mac, sram, dram, other;
	double sp, acc;        /* sram = sp + acc */
	double vec, rq;        /* other = vec + rq */
	double total;
} sweep_energy;

/* The energy of ev on configuration cfg. */
void sweep_energy_of(const sweep_tech *t, const loom_hwcfg *cfg, const sweep_events *ev, sweep_energy *out);

#ifdef __cplusplus
}
#endif

#endif
