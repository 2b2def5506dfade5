/* job.c - submission, completion and waiting (include/loom/loom.h,
 * docs/FIRMWARE.md "Jobs"). Submission writes the loom_job record at the
 * submission ring's tail, then the tail, then DOORBELL. Completions are
 * consumed at the completion ring's head after clearing HOST_IRQ_STATUS
 * (so a completion written meanwhile raises the line again), matched to
 * their job by id (a completion for a job not in flight is LOOM_EPROTO),
 * and kept until loom_wait/loom_poll reaps them. Waiting runs the device
 * until the interrupt, within the caller's cycle bound. */
#include "job.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "hwio.h"
#include "loom/isa.h"

#define INITIAL_RECS 64u
#define STUCK_ROUNDS 1000 /* runs in a row that advance no cycle: the interrupt line is stuck */

int loom_jobs_init(struct loom_jobs *j, struct loom_hwio *io, const struct loom_boot *boot)
{
	memset(j, 0, sizeof *j);
	j->io = io;
	j->boot = boot;
	j->next_id = j->lo = 1;
	j->cap = INITIAL_RECS;
	j->rec = calloc(j->cap, sizeof *j->rec);
	return j->rec ? 0 : -1;
}

void loom_jobs_fini(struct loom_jobs *j)
{
	free(j->rec);
	memset(j, 0, sizeof *j);
}

static struct loom_job_rec *rec_of(struct loom_jobs *j, uint64_t id)
{
	if (id < j->lo || id >= j->next_id)
		return NULL;
	struct loom_job_rec *r = &j->rec[id & (j->cap - 1)];
	return r->state == LOOM_REC_FREE ? NULL : r;
}

/* Room for one more record. */
static int recs_reserve(struct loom_jobs *j)
{
	if (j->next_id - j->lo < j->cap)
		return LOOM_OK;
	size_t ncap = 2 * j->cap;
	struct loom_job_rec *nr = calloc(ncap, sizeof *nr);
	if (!nr)
		return loom_hwio_fail(j->io, LOOM_ENOMEM, "loom_submit: out of host memory for job records");
	for (uint64_t id = j->lo; id < j->next_id; id++)
		nr[id & (ncap - 1)] = j->rec[id & (j->cap - 1)];
	free(j->rec);
	j->rec = nr;
	j->cap = ncap;
	return LOOM_OK;
}

static void rec_release(struct loom_jobs *j, struct loom_job_rec *r)
{
	r->state = LOOM_REC_FREE;
	while (j->lo < j->next_id && j->rec[j->lo & (j->cap - 1)].state == LOOM_REC_FREE)
		j->lo++;
}

void loom_jobs_lose_all(struct loom_jobs *j)
{
	uint64_t now = loom_hwio_cycles(j->io);
	for (uint64_t id = j->lo; id < j->next_id; id++) {
		struct loom_job_rec *r = &j->rec[id & (j->cap - 1)];
		if (r->state != LOOM_REC_PENDING)
			continue;
		r->state = LOOM_REC_DONE;
		r->res.status = LOOM_JOB_LOST;
		r->res.done_cycle = now;
	}
	j->inflight = 0;
}

void loom_jobs_rings_reset(struct loom_jobs *j)
{
	j->sq_tail = 0;
	j->cq_head = 0;
}

/* ---- completions ---- */

static int consume_one(struct loom_jobs *j, uint32_t slot, uint64_t now)
{
	const struct loom_boot *b = j->boot;
	loom_completion c;
	uint64_t a = b->cq_addr + sizeof(loom_ring_hdr) + (uint64_t)slot * sizeof c;
	int rc = loom_hwio_dram_read(j->io, a, &c, sizeof c);
	if (rc)
		return rc;
	uint64_t id = c.job_id_lo | (uint64_t)c.job_id_hi << 32;
	struct loom_job_rec *r = rec_of(j, id);
	if (!r || r->state != LOOM_REC_PENDING)
		return loom_hwio_fail(j->io, LOOM_EPROTO,
				      "completion ring slot %u: job id %llu is not in flight (%s; ids in flight start at "
				      "%llu, next %llu)",
				      slot, (unsigned long long)id, r ? "already completed" : "unknown",
				      (unsigned long long)j->lo, (unsigned long long)j->next_id);
	r->state = LOOM_REC_DONE;
	r->res.status = c.status;
	r->res.err_cause = c.err_cause;
	r->res.err_pc = c.err_pc;
	r->res.err_info = c.err_info;
	memcpy(r->res.ctr, c.ctr, sizeof r->res.ctr);
	memcpy(r->res.evt, c.evt, sizeof r->res.evt);
	r->res.fw_cycles = c.fw_cycles;
	r->res.fw_insns = c.fw_insns;
	r->res.done_cycle = now;
	j->inflight--;
	return LOOM_OK;
}

/* Consume every completion the firmware has written. */
static int reap(struct loom_jobs *j)
{
	const struct loom_boot *b = j->boot;
	if (!b->booted)
		return LOOM_OK;
	/* every bit: none but COMPLETION is expected after the boot, and one
	 * left set would hold the interrupt line high */
	loom_hwio_wr32(j->io, LOOM_REG_HOST_IRQ_STATUS, 0xffffffffu);
	uint32_t tail;
	int rc = loom_hwio_dram_read(j->io, b->cq_addr + offsetof(loom_ring_hdr, tail), &tail, sizeof tail);
	if (rc)
		return rc;
	if (tail - j->cq_head > b->entries)
		return loom_hwio_fail(j->io, LOOM_EPROTO, "completion ring: tail %u is more than %u entries past head %u",
				      tail, b->entries, j->cq_head);
	if (tail == j->cq_head)
		return LOOM_OK;
	uint64_t now = loom_hwio_cycles(j->io);
	for (; rc == LOOM_OK && j->cq_head != tail; j->cq_head++) {
		rc = consume_one(j, j->cq_head & (b->entries - 1), now);
		if (rc)
			break;
	}
	int wrc = loom_hwio_dram_write(j->io, b->cq_addr + offsetof(loom_ring_hdr, head), &j->cq_head,
				       sizeof j->cq_head);
	return rc ? rc : wrc;
}

/* Run the device for at most max cycles or until the interrupt.
 * *stuck counts runs in a row that advanced nothing. */
static int run_device(struct loom_jobs *j, uint64_t max, int *stuck, const char *what)
{
	int rc = loom_hwio_run(j->io, max, stuck, what);
	if (rc)
		return rc;
	if (*stuck > STUCK_ROUNDS)
		return loom_hwio_fail(j->io, LOOM_EHW, "%s: the interrupt line stays high (HOST_IRQ_STATUS %#x, IRQ_STATUS %#x)",
				      what, loom_hwio_rd32(j->io, LOOM_REG_HOST_IRQ_STATUS),
				      loom_hwio_rd32(j->io, LOOM_REG_IRQ_STATUS));
	return LOOM_OK;
}

/* ---- submission ---- */

int loom_job_add_window(loom_job_desc *job, const loom_bo *bo)
{
	if (!job || !bo || job->nwindows >= LOOM_FW_JOB_WINDOWS)
		return LOOM_EINVAL;
	job->win[job->nwindows].base = loom_bo_addr(bo);
	job->win[job->nwindows].size = loom_bo_size(bo);
	job->nwindows++;
	return LOOM_OK;
}

static int check_desc(struct loom_jobs *j, const loom_job_desc *job)
{
	uint64_t dram = loom_hwio_cfg(j->io)->dram_bytes;
	if (job->insn_addr % LOOM_INSN_BYTES)
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: insn_addr %#llx is not 32-byte aligned",
				      (unsigned long long)job->insn_addr);
	if (job->insn_addr >= dram)
		return loom_hwio_fail(j->io, LOOM_ERANGE, "loom_submit: insn_addr %#llx is outside the %llu-byte DRAM",
				      (unsigned long long)job->insn_addr, (unsigned long long)dram);
	if (job->flags & ~LOOM_JOB_F_TEST_HANG)
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: unknown job flags %#x", job->flags & ~LOOM_JOB_F_TEST_HANG);
	if ((job->flags & LOOM_JOB_F_TEST_HANG) && !(j->boot->reply.caps & LOOM_FW_CAP_TEST_HANG))
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: LOOM_JOB_F_TEST_HANG, but the firmware (caps %#x) "
				      "does not advertise LOOM_FW_CAP_TEST_HANG", j->boot->reply.caps);
	if (job->nwindows > LOOM_FW_JOB_WINDOWS)
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: %u windows, at most %u", job->nwindows,
				      LOOM_FW_JOB_WINDOWS);
	for (unsigned i = 0; i < job->nwindows; i++) {
		const loom_window *w = &job->win[i];
		if (!w->size)
			return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: window %u has size 0", i);
		if (w->base >= dram || w->size > dram - w->base)
			return loom_hwio_fail(j->io, LOOM_ERANGE, "loom_submit: window %u [%#llx, +%#llx) is outside the "
					      "%llu-byte DRAM", i, (unsigned long long)w->base,
					      (unsigned long long)w->size, (unsigned long long)dram);
	}
	return LOOM_OK;
}

/* A free slot in the submission ring (running the device with wait). */
static int await_slot(struct loom_jobs *j, int wait)
{
	const struct loom_boot *b = j->boot;
	uint64_t c0 = loom_hwio_cycles(j->io), bound = b->opts.submit_wait_cycles;
	int stuck = 0;
	for (;;) {
		int rc = reap(j);
		if (rc)
			return rc;
		uint32_t head;
		rc = loom_hwio_dram_read(j->io, b->sq_addr + offsetof(loom_ring_hdr, head), &head, sizeof head);
		if (rc)
			return rc;
		if (j->sq_tail - head > b->entries)
			return loom_hwio_fail(j->io, LOOM_EPROTO, "submission ring: head %u is more than %u entries behind tail %u",
					      head, b->entries, j->sq_tail);
		if (j->inflight < b->entries && j->sq_tail - head < b->entries)
			return LOOM_OK;
		if (!wait)
			return loom_hwio_fail(j->io, LOOM_EBUSY, "loom_submit: the ring is full (%u jobs in flight, %u entries)",
					      j->inflight, b->entries);
		uint64_t used = loom_hwio_cycles(j->io) - c0;
		if (used >= bound)
			return loom_hwio_fail(j->io, LOOM_ETIMEDOUT, "loom_submit: the ring stayed full for %llu cycles "
					      "(%u jobs in flight; firmware hung? loom_reset)",
					      (unsigned long long)used, j->inflight);
		rc = run_device(j, bound - used, &stuck, "loom_submit");
		if (rc)
			return rc;
	}
}

static int write_job(struct loom_jobs *j, const loom_job_desc *job, uint64_t id)
{
	const struct loom_boot *b = j->boot;
	loom_job rec;
	memset(&rec, 0, sizeof rec);
	rec.job_id_lo = (uint32_t)id;
	rec.job_id_hi = (uint32_t)(id >> 32);
	rec.insn_addr = (uint32_t)job->insn_addr;
	rec.flags = job->flags;
	rec.timeout_cycles = job->timeout_cycles;
	rec.nwindows = job->nwindows;
	for (unsigned i = 0; i < job->nwindows && i < LOOM_FW_JOB_WINDOWS; i++) {
		rec.win[i].base = (uint32_t)job->win[i].base;
		rec.win[i].size = (uint32_t)job->win[i].size;
	}
	uint64_t a = b->sq_addr + sizeof(loom_ring_hdr) + (uint64_t)(j->sq_tail & (b->entries - 1)) * sizeof rec;
	int rc = loom_hwio_dram_write(j->io, a, &rec, sizeof rec);
	if (rc)
		return rc;
	uint32_t tail = j->sq_tail + 1;
	rc = loom_hwio_dram_write(j->io, b->sq_addr + offsetof(loom_ring_hdr, tail), &tail, sizeof tail);
	if (rc)
		return rc;
	j->sq_tail = tail;
	loom_hwio_wr32(j->io, LOOM_REG_DOORBELL, 1);
	return LOOM_OK;
}

int loom_jobs_submit(struct loom_jobs *j, const loom_job_desc *job, unsigned flags, uint64_t *id)
{
	if (id)
		*id = 0;
	if (!j)
		return LOOM_EINVAL;
	if (!job || !id)
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: NULL %s", job ? "id" : "job");
	if (flags & ~(LOOM_SUBMIT_WAIT | LOOM_SUBMIT_UNCHECKED))
		return loom_hwio_fail(j->io, LOOM_EINVAL, "loom_submit: unknown submission flags %#x",
				      flags & ~(LOOM_SUBMIT_WAIT | LOOM_SUBMIT_UNCHECKED));
	int rc = flags & LOOM_SUBMIT_UNCHECKED ? LOOM_OK : check_desc(j, job);
	if (rc)
		return rc;
	if (!j->boot->booted)
		return loom_hwio_fail(j->io, LOOM_ESTATE, "loom_submit: the device is not booted (loom_boot)");
	rc = await_slot(j, (flags & LOOM_SUBMIT_WAIT) != 0);
	if (!rc)
		rc = recs_reserve(j);
	uint64_t nid = j->next_id;
	if (!rc)
		rc = write_job(j, job, nid);
	if (rc)
		return rc;
	struct loom_job_rec *r = &j->rec[nid & (j->cap - 1)];
	memset(r, 0, sizeof *r);
	r->state = LOOM_REC_PENDING;
	r->res.id = nid;
	r->res.submit_cycle = loom_hwio_cycles(j->io);
	j->next_id++;
	j->inflight++;
	*id = nid;
	return LOOM_OK;
}

/* ---- waiting ---- */

/* The completed record of id (the oldest completed one for LOOM_JOB_ANY). */
static struct loom_job_rec *find_done(struct loom_jobs *j, uint64_t id)
{
	if (id != LOOM_JOB_ANY) {
		struct loom_job_rec *r = rec_of(j, id);
		return r && r->state == LOOM_REC_DONE ? r : NULL;
	}
	for (uint64_t k = j->lo; k < j->next_id; k++) {
		struct loom_job_rec *r = &j->rec[k & (j->cap - 1)];
		if (r->state == LOOM_REC_DONE)
			return r;
	}
	return NULL;
}

static int check_id(struct loom_jobs *j, uint64_t id, const char *fn)
{
	if (id == LOOM_JOB_ANY ? j->lo == j->next_id : !rec_of(j, id))
		return id == LOOM_JOB_ANY
			       ? loom_hwio_fail(j->io, LOOM_ENOENT, "%s: no job in flight or completed", fn)
			       : loom_hwio_fail(j->io, LOOM_ENOENT,
						"%s: job %llu is not in flight or completed (never submitted, or "
						"already reaped)",
						fn, (unsigned long long)id);
	return LOOM_OK;
}

static int take(struct loom_jobs *j, struct loom_job_rec *r, loom_result *res)
{
	if (res)
		*res = r->res;
	rec_release(j, r);
	return LOOM_OK;
}

int loom_jobs_poll(struct loom_jobs *j, uint64_t id, loom_result *res)
{
	if (!j)
		return LOOM_EINVAL;
	int rc = check_id(j, id, "loom_poll");
	if (!rc)
		rc = reap(j);
	if (rc)
		return rc;
	struct loom_job_rec *r = find_done(j, id);
	if (!r)
		return loom_hwio_fail(j->io, LOOM_EAGAIN, "loom_poll: job %llu has not completed", (unsigned long long)id);
	return take(j, r, res);
}

int loom_jobs_wait(struct loom_jobs *j, uint64_t id, uint64_t timeout_cycles, loom_result *res)
{
	if (!j)
		return LOOM_EINVAL;
	int rc = check_id(j, id, "loom_wait");
	if (rc)
		return rc;
	uint64_t c0 = loom_hwio_cycles(j->io);
	int stuck = 0;
	for (;;) {
		rc = reap(j);
		if (rc)
			return rc;
		struct loom_job_rec *r = find_done(j, id);
		if (r)
			return take(j, r, res);
		if (!j->boot->booted)
			return loom_hwio_fail(j->io, LOOM_ESTATE, "loom_wait: the device is not booted");
		uint64_t used = loom_hwio_cycles(j->io) - c0;
		if (used >= timeout_cycles)
			return loom_hwio_fail(j->io, LOOM_ETIMEDOUT,
					      "loom_wait: job %llu not completed after %llu cycles (%u in flight, core pc "
					      "%#x, engine STATUS %#x)",
					      (unsigned long long)id, (unsigned long long)used, j->inflight,
					      loom_hwio_rd32(j->io, LOOM_REG_CORE_PC), loom_hwio_rd32(j->io, LOOM_REG_STATUS));
		rc = run_device(j, timeout_cycles - used, &stuck, "loom_wait");
		if (rc)
			return rc;
	}
}

const char *loom_job_status_name(uint32_t status)
{
	switch (status) {
	case LOOM_JOB_OK: return "OK";
	case LOOM_JOB_ENGINE_ERROR: return "ENGINE_ERROR";
	case LOOM_JOB_TIMEOUT: return "TIMEOUT";
	case LOOM_JOB_BAD_JOB: return "BAD_JOB";
	case LOOM_JOB_LOST: return "LOST";
	default: return "?";
	}
}
