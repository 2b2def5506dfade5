/* job.h - jobs and rings of libloom (driver/job.c; docs/FIRMWARE.md
 * "Jobs"): the host's side of the submission ring (producer) and the
 * completion ring (consumer), and the record of every job from its
 * submission until loom_wait/loom_poll reaps it. Records live in a
 * circular table indexed by job id (ids are dense and only grow), so
 * matching a completion to its job is one lookup. The rings are the ones
 * the boot placed (boot.h), read through the device's struct loom_hwio
 * (hwio.h); the entry points of include/loom/loom.h that take a loom_dev
 * reach here from dev.c, with j NULL when the device is. Internal to
 * driver/. */
#ifndef LOOM_DRIVER_JOB_H
#define LOOM_DRIVER_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

struct loom_hwio;
struct loom_boot;

enum { LOOM_REC_FREE = 0, LOOM_REC_PENDING = 1, LOOM_REC_DONE = 2 };

struct loom_job_rec {
	int state;          /* LOOM_REC_* */
	loom_result res;    /* id and submit_cycle from submission, the rest at completion */
};

struct loom_jobs {
	struct loom_hwio *io;         /* the device's registers, DRAM and error message */
	const struct loom_boot *boot; /* the rings, whether the device is booted */
	uint64_t next_id;   /* the id of the next submission (ids start at 1) */
	uint64_t lo;        /* the lowest id not yet reaped (== next_id: none) */
	struct loom_job_rec *rec; /* id's record at rec[id & (cap - 1)], lo <= id < next_id */
	size_t cap;         /* a power of two */
	unsigned inflight;  /* records PENDING: submitted, completion not yet consumed */
	uint32_t sq_tail;   /* host copy of the submission ring's tail */
	uint32_t cq_head;   /* host copy of the completion ring's head */
};

/* -1: out of memory */
int loom_jobs_init(struct loom_jobs *j, struct loom_hwio *io, const struct loom_boot *boot);
void loom_jobs_fini(struct loom_jobs *j);
/* Every job in flight completes with LOOM_JOB_LOST (before a reboot). */
void loom_jobs_lose_all(struct loom_jobs *j);
/* Fresh rings: host indices back to 0 (the boot zeroed the headers). */
void loom_jobs_rings_reset(struct loom_jobs *j);

/* loom_submit, loom_poll, loom_wait */
int loom_jobs_submit(struct loom_jobs *j, const loom_job_desc *job, unsigned flags, uint64_t *id);
int loom_jobs_poll(struct loom_jobs *j, uint64_t id, loom_result *res);
int loom_jobs_wait(struct loom_jobs *j, uint64_t id, uint64_t timeout_cycles, loom_result *res);

#endif
