/* exec.h - running a compiled model (ir/model.h) on a device
 * through libloom (runtime/exec.c): the model's DRAM image (constants and
 * programs) is written once into a buffer object at its compiled address;
 * each run walks the steps: CPU nodes on the float kernels, quantization of
 * host tensors into their device images, NPU jobs through the firmware's
 * ring, dequantization back. Per layer, the MARK records give the device
 * cycles and counters (the per-layer profile); per step, the host time and
 * an NPU job's completion record (the timeline). */
#ifndef LOOM_EXEC_H
#define LOOM_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"
#include "ir/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_layer_prof {
	uint64_t cycles;         /* device cycles of the layer (MARK to MARK) */
	uint64_t macs;           /* MACS counter (R*C per streamed line) */
	uint64_t dram_rd, dram_wr;
	uint32_t ctr[LOOM_FW_CTRS]; /* every counter of the layer's MARK record minus the previous
				       record's (the job's START: 0), in regs.def order: CYCLES,
				       BUSY_LOAD/COMPUTE/STORE, STALL_LOAD/COMPUTE/STORE, ...,
				       BANK_CONFLICTS, INSNS; MACS_LO/HI hold the words of macs */
	uint64_t start;          /* the previous record's CYCLES: the layer's first cycle,
				    counted from its job's START */
	uint32_t step;           /* the step (NPU job) that ran it */
} loom_layer_prof;

/* What each step of the last run took: host time for all, and for an NPU
 * job its completion record and device cycles (loom_result). */
typedef struct loom_step_prof {
	double host_s;           /* host seconds (an NPU job: simulating it) */
	uint64_t submit_cycle;   /* NPU: device cycle of the submission */
	uint64_t done_cycle;     /* NPU: device cycle the driver saw the completion */
	uint64_t start_cycle;    /* NPU: device cycle of the engine's START when
				    loom_exec_locate_starts is on, else 0 */
	uint32_t ctr[LOOM_FW_CTRS]; /* NPU: the job's counters (regs.def order) */
	uint32_t fw_cycles, fw_insns; /* NPU: the control core's cycles and instructions for it */
} loom_step_prof;

typedef struct loom_exec_stats {
	uint64_t jobs;
	uint64_t npu_cycles;     /* sum of the jobs' device cycles (submit to completion) */
	uint64_t engine_cycles;  /* sum of the jobs' engine CYCLES counters */
	double cpu_s;            /* host seconds in CPU nodes */
	double conv_s;           /* host seconds quantizing / dequantizing */
	double npu_s;            /* host seconds in NPU jobs (simulation) */
	loom_layer_prof *layers; /* nlayers entries, of the last run */
	loom_step_prof *steps;   /* nsteps entries, of the last run */
} loom_exec_stats;

typedef struct loom_exec loom_exec;

/* Prepare dev (booted, firmware loaded) for m: checks the configuration,
 * allocates [m->base, m->dram_end) and writes constants and programs.
 * m stays owned by the caller and must outlive the exec. */
int loom_exec_new(loom_dev *dev, loom_model *m, loom_exec **out, char *err, size_t errlen);
/* Run once: the data of every graph input must be in
 * m->graph->tensors[m->graph->inputs[i]].data (loom_tensor_set_data); the
 * outputs are left in the graph output tensors' data. 0, or -1 + message
 * naming the step (job status and error cause for an NPU job). */
int loom_exec_run(loom_exec *e, char *err, size_t errlen);
const loom_exec_stats *loom_exec_get_stats(const loom_exec *e);
/* on: find each NPU job's START in device cycles (loom_step_prof.start_cycle,
 * for timelines and waveform windows): after submitting, the device runs in
 * short slices until the engine is busy, which leaves its timing unchanged.
 * Only for jobs run one at a time. */
void loom_exec_locate_starts(loom_exec *e, int on);
void loom_exec_free(loom_exec *e);

#ifdef __cplusplus
}
#endif
#endif
