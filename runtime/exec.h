/* exec.h - running a compiled model (ir/model.h) on a device
 * through libloom (runtime/exec.c): the model's DRAM image (constants and
 * programs) is written once into a buffer object at its compiled address;
 * each run walks the steps: CPU nodes on the float kernels, quantization of
 * host tensors into their device images, NPU jobs through the firmware's
 * ring, dequantization back. Per layer, the MARK records give the device
 * cycles and counters (the per-layer profile). */
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
} loom_layer_prof;

typedef struct loom_exec_stats {
	uint64_t jobs;
	uint64_t npu_cycles;     /* sum of the jobs' device cycles (submit to completion) */
	uint64_t engine_cycles;  /* sum of the jobs' engine CYCLES counters */
	double cpu_s;            /* host seconds in CPU nodes */
	double conv_s;           /* host seconds quantizing / dequantizing */
	double npu_s;            /* host seconds in NPU jobs (simulation) */
	loom_layer_prof *layers; /* nlayers entries, of the last run */
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
void loom_exec_free(loom_exec *e);

#ifdef __cplusplus
}
#endif
#endif
