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
	uint32_t evt[LOOM_FW_EVTS]; /* NPU: the job's energy event counters (regs.def order) */
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

/* ---- inference requests: several runs of one model in flight (runtime/exec_req.c)
 *
 * A compiled model has absolute DRAM addresses. K requests get K copies of
 * the per-run state: request 0 uses the exec's own arena, MARK records and
 * programs at the compiled addresses; request r > 0 gets its own copy of
 * [arena_base, dram_end) in a buffer object of its own, its programs'
 * LOAD.DRAM_ADDR, STORE.DRAM_ADDR and MARK.DRAM_ADDR fields that point
 * there moved by the copy's offset (a multiple of 4 KiB, so every DMA burst
 * splits as in the original); the const region stays shared (read-only).
 * Each request also has its own host copy of the tensors a run writes
 * (graph inputs, CPU node outputs, dequantized tensors). Each job gets two
 * DMA windows, the const region and its request's copy, so a job can not
 * reach another request's state.
 *
 * Start an inference on an idle request (loom_exec_req_start: its host
 * steps up to its first NPU job, which is submitted), then
 * loom_exec_req_wait runs the device; whenever a request's job completes
 * its next host steps run at once (CPU nodes, (de)quantization) and its
 * next job is submitted, so the firmware's ring always holds the other
 * requests' jobs while one request's host work runs. Do not call
 * loom_exec_run while a request is in flight (request 0 shares its DRAM). */
typedef struct loom_exec_reqs loom_exec_reqs;

/* One inference of a request (the last one it finished). Cycles are the
 * backend's clock (loom_hw_cycles), which stands still while the host
 * works: host time never appears in them, unless host-time mode is on
 * (loom_exec_reqs_host_time). */
typedef struct loom_req_stats {
	uint64_t jobs;          /* NPU jobs the inference ran */
	uint64_t first_submit;  /* device cycle its first job was submitted */
	uint64_t last_done;     /* device cycle the driver saw its last job complete */
	uint64_t job_cycles;    /* sum of its jobs' submit-to-completion cycles */
	uint64_t engine_cycles; /* sum of its jobs' engine CYCLES counters */
	double host_s;          /* host seconds in its CPU nodes and (de)quantization */
	double start_s, end_s;  /* host monotonic clock at start and at finish */
} loom_req_stats;

#define LOOM_EXEC_REQ_ANY (-1)

/* K (>= 1) requests over e: allocates and writes K - 1 copies of the
 * per-run DRAM state. -1 + message when the device DRAM can not hold them
 * (naming how many fit), when a program's DRAM span crosses between the
 * const region and the arena, or out of memory. e must outlive the
 * requests. */
int loom_exec_new_requests(loom_exec *e, unsigned k, loom_exec_reqs **out, char *err, size_t errlen);
/* Waits for jobs still in flight (bounded by their watchdogs), then frees. NULL is ignored. */
void loom_exec_reqs_free(loom_exec_reqs *rq);
unsigned loom_exec_reqs_count(const loom_exec_reqs *rq);
/* Request r's copy of graph tensor t: put a graph input's data here
 * (loom_tensor_set_data) before starting, read the outputs after the
 * request finished. Tensors no run writes (constants) are the graph's own.
 * NULL for a bad r or t. Valid until the next call on rq. */
loom_tensor *loom_exec_req_tensor(loom_exec_reqs *rq, unsigned r, int t);
/* Start an inference on idle request r: its host steps up to its first NPU
 * job, which is submitted (a model without NPU jobs finishes here). -1 +
 * message naming the request and the step. */
int loom_exec_req_start(loom_exec_reqs *rq, unsigned r, char *err, size_t errlen);
/* Run until request r (LOOM_EXEC_REQ_ANY: the first of the started ones)
 * has finished its inference, advancing every request whose job completes
 * on the way; *done (may be NULL) = the finished request, idle again. -1 +
 * message (a failed job names its request, layers and error cause; the
 * request is idle again; nothing started: "no request in flight"). */
int loom_exec_req_wait(loom_exec_reqs *rq, int r, unsigned *done, char *err, size_t errlen);
/* 1 while request r is started and not yet returned by loom_exec_req_wait */
int loom_exec_req_busy(const loom_exec_reqs *rq, unsigned r);
const loom_req_stats *loom_exec_req_stats(const loom_exec_reqs *rq, unsigned r);
/* Host-time mode (cycles_per_s > 0; 0 turns it off): the host's own work
 * (CPU nodes, (de)quantization, timed on the host's wall clock) is put on
 * the device clock at cycles_per_s, as on a system whose host runs beside
 * the NPU: before a request submits its next job the device runs on for
 * the time the host just spent (other requests' jobs progress, their
 * completions wait until the host is free), and an idle device skips
 * ahead. The stats' cycles then include the host's time; runs are no
 * longer reproducible. -1 while jobs are in flight. */
int loom_exec_reqs_host_time(loom_exec_reqs *rq, double cycles_per_s);
/* Bytes of device DRAM one more request takes (its copy of the arena, MARK
 * records and programs, with the 4 KiB alignment). */
uint64_t loom_exec_req_bytes(const loom_model *m);

#ifdef __cplusplus
}
#endif
#endif
