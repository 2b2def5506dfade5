/* exec_req.c - inference requests (runtime/exec.h): K runs of one compiled
 * model in flight at once through the firmware's ring, as NPU runtimes do
 * with their infer requests. Request 0 runs on the exec's own DRAM image;
 * request r > 0 has its own copy of the per-run state [arena_base,
 * dram_end) (activation arena, MARK records, programs) at an offset that is
 * a multiple of 4 KiB, with its programs' DRAM address fields moved by that
 * offset; the const region stays shared. Each request keeps its own host
 * copies of the tensors a run writes and swaps them into the graph while
 * its host steps run. The scheduler: a request runs its host steps up to
 * its next NPU job and submits it; loom_exec_req_wait runs the device until
 * some job completes and continues that job's request at once.
 *
 * The host steps (CPU node, quantization, dequantization) repeat what
 * loom_exec_run does (runtime/exec.c), against the request's buffer and
 * addresses. */
#include "runtime/exec.h"
#include "runtime/exec_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/model.h"
#include "runtime/cpu_ops.h"
#include "loom/isa.h"

enum { REQ_IDLE = 0, REQ_JOB = 1, REQ_DONE = 2 };

#define REQ_ALIGN 4096u /* DMA bursts never cross 4 KiB: keep each copy's place within a page */

struct req {
	int state;
	uint32_t step;      /* the next step to run */
	uint64_t job;       /* the job in flight (REQ_JOB) */
	uint64_t job_wd;    /* its watchdog, in cycles */
	uint64_t finished;  /* order of finishing (REQ_DONE) */
	loom_bo *bo;        /* its own copy (r > 0); request 0 uses the exec's */
	uint64_t bo_addr;   /* DRAM address of the buffer's byte 0 */
	uint64_t reloc;     /* added to compiled addresses in [arena_base, dram_end) */
	loom_tensor *t;     /* its copies of the tensors a run writes (see mine) */
	loom_req_stats st;
};

struct loom_exec_reqs {
	loom_exec *e;
	loom_dev *dev;
	loom_model *m;
	loom_bo *ebo;        /* the exec's buffer: [m->base, m->dram_end) */
	unsigned k;
	struct req *r;
	unsigned char *mine; /* per graph tensor: 1 if a run writes it (per-request copy) */
	unsigned njobs;      /* jobs in flight (submitted, not yet reaped from the driver) */
	uint64_t wd_inflight; /* sum of their watchdogs */
	double host_hz;      /* host-time mode: device cycles per host second (0: off) */
	uint64_t off;        /* host-time mode: idle cycles added to the device clock */
	uint64_t host_free;  /* host-time mode: the cycle the host is free again */
	loom_result *stash;  /* host-time mode: completions reaped while the host was busy */
	unsigned nstash;
	uint64_t nfinished;
	int8_t *img;         /* conversion buffer */
	size_t img_bytes;
};

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t img_size(const loom_mtensor *mt) { return (size_t)mt->h * mt->w * mt->stride; }

uint64_t loom_exec_req_bytes(const loom_model *m)
{
	uint64_t n = (m->dram_end - m->arena_base) + m->arena_base % REQ_ALIGN;
	return (n + REQ_ALIGN - 1) & ~(uint64_t)(REQ_ALIGN - 1);
}

/* ------------------------------------------------------------------ setup */

/* the name of the layer holding instruction i, for messages */
static const char *insn_layer(const loom_model *m, uint32_t i)
{
	for (uint32_t l = 0; l < m->nlayers; l++)
		if (i >= m->layers[l].insn_first && i - m->layers[l].insn_first < m->layers[l].insn_count)
			return m->layers[l].name;
	return "?";
}

/* the windows of request q's jobs: the const region, its own state */
static uint32_t req_windows(const loom_model *m, const struct req *q, loom_window *w)
{
	uint32_t n = 0;
	if (m->arena_base > m->base)
		w[n++] = (loom_window){m->base, m->arena_base - m->base};
	w[n++] = (loom_window){m->arena_base + q->reloc, m->dram_end - m->arena_base};
	return n;
}

/* request r's programs: every DRAM address field inside [arena_base,
 * dram_end) moved by its offset, each instruction checked against its
 * windows (a span crossing from the const region into the arena can not be
 * moved); written into its buffer unless it is request 0 */
static int req_text(loom_exec_reqs *rq, unsigned r, char *err, size_t errlen)
{
	const loom_model *m = rq->m;
	struct req *q = &rq->r[r];
	loom_window w[2];
	uint32_t nw = req_windows(m, q, w);
	loom_windows win;
	memset(&win, 0, sizeof win);
	win.enable = 1;
	for (uint32_t i = 0; i < nw; i++)
		win.base[i] = (uint32_t)w[i].base, win.size[i] = (uint32_t)w[i].size;
	uint8_t *text = malloc((size_t)m->ninsn * LOOM_INSN_BYTES + 1);
	if (!text)
		return fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < m->ninsn; i++) {
		loom_insn in = m->insn[i];
		unsigned op = loom_insn_opcode(&in);
		enum loom_field f = op == LOOM_OP_LOAD    ? LOOM_F_LOAD_DRAM_ADDR
				    : op == LOOM_OP_STORE ? LOOM_F_STORE_DRAM_ADDR
				    : op == LOOM_OP_MARK  ? LOOM_F_MARK_DRAM_ADDR
							  : LOOM_F_COUNT;
		uint32_t a = f != LOOM_F_COUNT ? loom_insn_get(&in, f) : 0;
		if (f != LOOM_F_COUNT && a >= m->arena_base && a < m->dram_end &&
		    loom_insn_set(&in, f, (uint32_t)(a + q->reloc))) {
			free(text);
			return fail(err, errlen, "request %u: instruction %u (layer '%s'): %s 0x%x moved by 0x%llx is past 4 GiB",
				    r, i, insn_layer(m, i), loom_field_name(f), a, (unsigned long long)q->reloc);
		}
		uint32_t field = 0;
		unsigned e = loom_insn_check_win(&m->cfg, &win, &in, &field);
		if (e) {
			free(text);
			return fail(err, errlen,
				    "request %u: instruction %u (layer '%s'): %s (%s): its DRAM span must lie in the const "
				    "region or in the per-request state [0x%llx, 0x%llx) to be relocated",
				    r, i, insn_layer(m, i), loom_err_name(e), loom_field_name(field),
				    (unsigned long long)m->arena_base, (unsigned long long)m->dram_end);
		}
		for (int wd = 0; wd < LOOM_INSN_WORDS; wd++)
			for (int b = 0; b < 4; b++)
				text[(size_t)i * LOOM_INSN_BYTES + 4 * wd + b] = (uint8_t)(in.w[wd] >> (8 * b));
	}
	int rc = 0;
	if (r > 0)
		rc = loom_bo_write(q->bo, m->text_base + q->reloc - q->bo_addr, text, (size_t)m->ninsn * LOOM_INSN_BYTES);
	free(text);
	if (rc)
		return fail(err, errlen, "request %u: writing its programs: %s: %s", r, loom_strerror(rc),
			    loom_errmsg(rq->dev));
	return 0;
}

/* which tensors a run writes: graph inputs, CPU node outputs, dequantized
 * tensors; and no quantization into the shared const region */
static int find_mine(loom_exec_reqs *rq, char *err, size_t errlen)
{
	loom_model *m = rq->m;
	loom_graph *g = m->graph;
	rq->mine = calloc((size_t)g->ntensors + 1, 1);
	if (!rq->mine)
		return fail(err, errlen, "out of memory");
	for (int i = 0; i < g->ninputs; i++)
		rq->mine[g->inputs[i]] = 1;
	for (uint32_t s = 0; s < m->nsteps; s++) {
		const loom_step *st = &m->steps[s];
		if (st->kind == LOOM_STEP_CPU) {
			const loom_node *n = &g->nodes[st->node];
			for (int k = 0; k < n->noutputs; k++)
				if (n->outputs[k] >= 0)
					rq->mine[n->outputs[k]] = 1;
		} else if (st->kind == LOOM_STEP_DEQUANT) {
			rq->mine[st->tensor] = 1;
		}
		const loom_mtensor *mt = &m->mt[loom_step_dev(st)]; /* the image a (de)quantization moves */
		if ((st->kind == LOOM_STEP_QUANT || st->kind == LOOM_STEP_DEQUANT) &&
		    (mt->addr < m->arena_base || mt->addr + img_size(mt) > m->mark_base))
			return fail(err, errlen,
				    "step %u: tensor '%s' at 0x%llx is outside the activation arena: requests can not "
				    "have copies of it",
				    s, g->tensors[loom_step_dev(st)].name, (unsigned long long)mt->addr);
		if (st->kind == LOOM_STEP_QUANT || st->kind == LOOM_STEP_DEQUANT)
			if (img_size(mt) > rq->img_bytes)
				rq->img_bytes = img_size(mt);
	}
	return 0;
}

/* request r's DRAM: request 0 is the exec's image; others a buffer of
 * their own, placed so that the offset is a multiple of REQ_ALIGN */
static int req_alloc(loom_exec_reqs *rq, unsigned r, char *err, size_t errlen)
{
	loom_model *m = rq->m;
	struct req *q = &rq->r[r];
	if (r == 0) {
		q->bo_addr = m->base;
		return 0;
	}
	uint64_t bytes = loom_exec_req_bytes(m), image = m->dram_end - m->base;
	const loom_hwcfg *c = loom_dev_config(rq->dev);
	if (r == 1 && image + (uint64_t)(rq->k - 1) * bytes > c->dram_bytes) /* clearly too many: say so at once */
		return fail(err, errlen,
			    "%u requests in flight need the model's image (%llu KiB) and %u copies of its per-request "
			    "state (%llu KiB each: arena, MARK records, programs), more than the device DRAM (%u MiB) "
			    "holds: at most %llu requests",
			    rq->k, (unsigned long long)(image >> 10), rq->k - 1, (unsigned long long)(bytes >> 10),
			    c->dram_mib, (unsigned long long)((c->dram_bytes - image) / bytes + 1));
	int rc = loom_bo_alloc(rq->dev, bytes, REQ_ALIGN, &q->bo);
	if (rc)
		return fail(err, errlen,
			    "%u requests in flight: the device DRAM (%u MiB) holds the model's image (%llu KiB at "
			    "0x%llx) and only %u more copies of its per-request state (%llu KiB each: arena, MARK "
			    "records, programs), so at most %u requests, not %u (%s)",
			    rq->k, c->dram_mib, (unsigned long long)((m->dram_end - m->base) >> 10),
			    (unsigned long long)m->base, r - 1, (unsigned long long)(bytes >> 10), r, rq->k,
			    loom_strerror(rc));
	q->bo_addr = loom_bo_addr(q->bo);
	q->reloc = q->bo_addr + m->arena_base % REQ_ALIGN - m->arena_base;
	/* a fresh copy starts as the compiled image's per-run state (zeros
	 * where the arena has not been written) */
	uint64_t n = m->dram_end - m->arena_base;
	uint8_t *buf = calloc(1, (size_t)n + 1);
	if (!buf)
		return fail(err, errlen, "out of memory");
	rc = loom_bo_read(rq->ebo, m->arena_base - m->base, buf, (size_t)n);
	if (!rc)
		rc = loom_bo_write(q->bo, m->arena_base + q->reloc - q->bo_addr, buf, (size_t)n);
	free(buf);
	if (rc)
		return fail(err, errlen, "request %u: copying its state: %s: %s", r, loom_strerror(rc), loom_errmsg(rq->dev));
	return 0;
}

int loom_exec_new_requests(loom_exec *e, unsigned k, loom_exec_reqs **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!e || k < 1)
		return fail(err, errlen, "requests: %u requests asked for, at least 1 needed", k);
	loom_exec_reqs *rq = calloc(1, sizeof *rq);
	if (!rq)
		return fail(err, errlen, "out of memory");
	rq->e = e;
	rq->dev = loom_exec_dev(e);
	rq->m = loom_exec_model(e);
	rq->ebo = loom_exec_bo(e);
	rq->k = k;
	loom_graph *g = rq->m->graph;
	rq->r = calloc(k, sizeof *rq->r);
	rq->stash = calloc(k, sizeof *rq->stash);
	int rc = rq->r && rq->stash ? find_mine(rq, err, errlen) : fail(err, errlen, "out of memory");
	if (!rc && !(rq->img = malloc(rq->img_bytes + 1)))
		rc = fail(err, errlen, "out of memory");
	for (unsigned r = 0; !rc && r < k; r++) {
		struct req *q = &rq->r[r];
		if (!(q->t = calloc((size_t)g->ntensors + 1, sizeof *q->t)))
			rc = fail(err, errlen, "out of memory");
		for (int t = 0; !rc && t < g->ntensors; t++) {
			q->t[t] = g->tensors[t];
			q->t[t].data = NULL;
			q->t[t].cap = 0;
		}
		if (!rc)
			rc = req_alloc(rq, r, err, errlen);
		if (!rc)
			rc = req_text(rq, r, err, errlen);
	}
	if (rc) {
		loom_exec_reqs_free(rq);
		return -1;
	}
	*out = rq;
	return 0;
}

void loom_exec_reqs_free(loom_exec_reqs *rq)
{
	if (!rq)
		return;
	for (unsigned r = 0; rq->r && r < rq->k; r++) {
		struct req *q = &rq->r[r];
		if (q->state == REQ_JOB) /* its DMA must be over before the buffer goes */
			loom_wait(rq->dev, q->job, 4 * q->job_wd + 10000000, NULL);
		loom_bo_free(q->bo);
		for (int t = 0; q->t && t < rq->m->graph->ntensors; t++)
			if (rq->mine[t])
				free(q->t[t].data);
		free(q->t);
	}
	free(rq->r);
	free(rq->stash);
	free(rq->mine);
	free(rq->img);
	free(rq);
}

unsigned loom_exec_reqs_count(const loom_exec_reqs *rq) { return rq ? rq->k : 0; }

loom_tensor *loom_exec_req_tensor(loom_exec_reqs *rq, unsigned r, int t)
{
	if (!rq || r >= rq->k || t < 0 || t >= rq->m->graph->ntensors)
		return NULL;
	return rq->mine[t] ? &rq->r[r].t[t] : &rq->m->graph->tensors[t];
}

int loom_exec_req_busy(const loom_exec_reqs *rq, unsigned r) { return rq && r < rq->k && rq->r[r].state != REQ_IDLE; }

const loom_req_stats *loom_exec_req_stats(const loom_exec_reqs *rq, unsigned r)
{
	return rq && r < rq->k ? &rq->r[r].st : NULL;
}

/* ------------------------------------------------------------------ running */

/* exchange request r's tensors with the graph's (an involution: called
 * once before its host steps, once after) */
static void swap_tensors(loom_exec_reqs *rq, unsigned r)
{
	loom_graph *g = rq->m->graph;
	struct req *q = &rq->r[r];
	for (int t = 0; t < g->ntensors; t++)
		if (rq->mine[t]) {
			loom_tensor x = g->tensors[t];
			g->tensors[t] = q->t[t];
			q->t[t] = x;
		}
}

static int step_cpu(loom_exec_reqs *rq, unsigned r, uint32_t s, char *err, size_t errlen)
{
	loom_graph *g = rq->m->graph;
	loom_node *n = &g->nodes[rq->m->steps[s].node];
	const loom_cpu_op *op = loom_cpu_op_find(n->op_type, g->opset);
	if (!op)
		return fail(err, errlen, "request %u: step %u: node '%s' (%s, opset %lld): no CPU kernel", r, s, n->name,
			    n->op_type, (long long)g->opset);
	for (int k = 0; k < n->noutputs; k++) {
		loom_tensor *t = loom_node_out(g, n, k);
		if (t && !t->data && !(t->cap = 0, t->data = calloc(1, loom_tensor_bytes(t) + 1)))
			return fail(err, errlen, "out of memory");
	}
	for (int k = 0; k < n->ninputs; k++) {
		loom_tensor *t = loom_node_in(g, n, k);
		if (t && !t->data)
			return fail(err, errlen, "request %u: step %u: node '%s': input '%s' has no data", r, s, n->name,
				    t->name);
	}
	char msg[1024] = "";
	if (op->run(g, n, msg, sizeof msg))
		return fail(err, errlen, "request %u: step %u: %s", r, s, msg);
	return 0;
}

static int step_conv(loom_exec_reqs *rq, unsigned r, uint32_t s, char *err, size_t errlen)
{
	loom_model *m = rq->m;
	const loom_step *st = &m->steps[s];
	struct req *q = &rq->r[r];
	loom_tensor *t = &m->graph->tensors[st->tensor];
	const loom_mtensor *mt = &m->mt[loom_step_dev(st)];
	loom_bo *bo = r ? q->bo : rq->ebo;
	uint64_t off = mt->addr + q->reloc - q->bo_addr;
	size_t n = img_size(mt);
	int rc;
	if (st->kind == LOOM_STEP_QUANT) {
		if (!t->data)
			return fail(err, errlen, "request %u: step %u: tensor '%s' has no data to quantize", r, s, t->name);
		loom_step_quantize(m, st, t->data, rq->img);
		rc = loom_bo_write(bo, off, rq->img, n);
	} else {
		if (!t->data && !(t->cap = 0, t->data = calloc(1, loom_tensor_bytes(t) + 1)))
			return fail(err, errlen, "out of memory");
		rc = loom_bo_read(bo, off, rq->img, n);
		if (!rc)
			loom_mt_dequantize(t, mt, rq->img, t->data);
	}
	if (rc)
		return fail(err, errlen, "request %u: step %u: tensor '%s': %s", r, s, t->name, loom_strerror(rc));
	return 0;
}

static int submit(loom_exec_reqs *rq, unsigned r, const loom_step *st, char *err, size_t errlen)
{
	loom_model *m = rq->m;
	struct req *q = &rq->r[r];
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	jd.insn_addr = st->insn_addr + q->reloc;
	jd.nwindows = req_windows(m, q, jd.win);
	uint64_t est = 0; /* watchdog: 8x the planner's estimate plus a margin, as loom_exec_run */
	for (uint32_t l = st->layer; l < st->layer + st->nlayers; l++)
		est += m->layers[l].est_cycles;
	uint64_t wd = 8 * est + 1000000;
	jd.timeout_cycles = wd > 0xffffffffull ? 0xffffffffu : (uint32_t)wd;
	int rc = loom_submit(rq->dev, &jd, LOOM_SUBMIT_WAIT, &q->job);
	if (rc)
		return fail(err, errlen, "request %u: NPU job (layers %u..%u, from '%s'): %s: %s", r, st->layer,
			    st->layer + st->nlayers - 1, m->layers[st->layer].name, loom_strerror(rc), loom_errmsg(rq->dev));
	q->job_wd = wd;
	rq->njobs++;
	rq->wd_inflight += wd;
	q->state = REQ_JOB;
	return 0;
}

/* the device clock, with the idle cycles host-time mode added */
static uint64_t sys_now(const loom_exec_reqs *rq) { return loom_hw_cycles(loom_dev_hw(rq->dev)) + rq->off; }

/* the next completion from the driver (running the device at most
 * timeout cycles), its cycles on the clock of sys_now */
static int reap(loom_exec_reqs *rq, uint64_t timeout, loom_result *res)
{
	int rc = loom_wait(rq->dev, LOOM_JOB_ANY, timeout, res);
	if (rc)
		return rc;
	res->submit_cycle += rq->off; /* off only grows while no job is in flight */
	res->done_cycle += rq->off;
	for (unsigned r = 0; r < rq->k; r++)
		if (rq->r[r].state == REQ_JOB && rq->r[r].job == res->id) {
			rq->njobs--;
			rq->wd_inflight -= rq->r[r].job_wd;
		}
	return 0;
}

/* host-time mode: bring the device up to cycle t, the host's own time:
 * it runs the jobs in flight meanwhile (their completions wait in the
 * stash until the host is free), or, idle, skips ahead */
static int catch_up(loom_exec_reqs *rq, uint64_t t, char *err, size_t errlen)
{
	for (;;) {
		uint64_t now = sys_now(rq);
		if (now >= t)
			return 0;
		if (!rq->njobs) {
			rq->off += t - now;
			return 0;
		}
		loom_result res;
		int rc = reap(rq, t - now, &res);
		if (rc == LOOM_ETIMEDOUT)
			return 0;
		if (rc)
			return fail(err, errlen, "requests: running the device: %s: %s", loom_strerror(rc),
				    loom_errmsg(rq->dev));
		rq->stash[rq->nstash++] = res;
	}
}

/* request r's host steps from q->step up to its next NPU job (submitted)
 * or its end (REQ_DONE); the event that lets it go on happened at cycle at */
static int advance(loom_exec_reqs *rq, unsigned r, uint64_t at, char *err, size_t errlen)
{
	loom_model *m = rq->m;
	struct req *q = &rq->r[r];
	uint64_t begin = rq->host_free > at ? rq->host_free : at;
	double t0 = now_s();
	int rc = 0, npu = 0;
	swap_tensors(rq, r);
	while (!rc && q->step < m->nsteps && !(npu = m->steps[q->step].kind == LOOM_STEP_NPU)) {
		uint32_t s = q->step++;
		rc = m->steps[s].kind == LOOM_STEP_CPU ? step_cpu(rq, r, s, err, errlen) : step_conv(rq, r, s, err, errlen);
	}
	swap_tensors(rq, r);
	double t1 = now_s();
	q->st.host_s += t1 - t0;
	if (rq->host_hz > 0) {
		rq->host_free = begin + (uint64_t)((t1 - t0) * rq->host_hz + 0.5);
		if (!rc && npu)
			rc = catch_up(rq, rq->host_free, err, errlen);
	}
	if (!rc && npu)
		rc = submit(rq, r, &m->steps[q->step++], err, errlen);
	if (rc) {
		q->state = REQ_IDLE;
		return -1;
	}
	if (!npu) {
		q->state = REQ_DONE;
		q->finished = ++rq->nfinished;
		q->st.end_s = t1;
	}
	return 0;
}

int loom_exec_req_start(loom_exec_reqs *rq, unsigned r, char *err, size_t errlen)
{
	if (!rq || r >= rq->k)
		return fail(err, errlen, "request %u: no such request (%u)", r, rq ? rq->k : 0);
	struct req *q = &rq->r[r];
	if (q->state != REQ_IDLE)
		return fail(err, errlen, "request %u: already started", r);
	loom_graph *g = rq->m->graph;
	for (int i = 0; i < g->ninputs; i++)
		if (!loom_exec_req_tensor(rq, r, g->inputs[i])->data)
			return fail(err, errlen, "request %u: input '%s' has no data", r, g->tensors[g->inputs[i]].name);
	memset(&q->st, 0, sizeof q->st);
	q->st.start_s = now_s();
	q->step = 0;
	return advance(rq, r, sys_now(rq), err, errlen);
}

/* a completed job: its request's figures, then its next host steps */
static int job_done(loom_exec_reqs *rq, const loom_result *res, char *err, size_t errlen)
{
	unsigned r = 0;
	while (r < rq->k && !(rq->r[r].state == REQ_JOB && rq->r[r].job == res->id))
		r++;
	if (r == rq->k)
		return fail(err, errlen, "requests: job %llu completed, but no request submitted it",
			    (unsigned long long)res->id);
	struct req *q = &rq->r[r];
	const loom_step *st = &rq->m->steps[q->step - 1];
	q->state = REQ_IDLE;
	if (res->status != LOOM_JOB_OK)
		return fail(err, errlen, "request %u: NPU job (layers %u..%u, from '%s'): %s, cause %s at pc 0x%x info 0x%x",
			    r, st->layer, st->layer + st->nlayers - 1, rq->m->layers[st->layer].name,
			    loom_job_status_name(res->status), loom_err_name(res->err_cause), res->err_pc, res->err_info);
	if (!q->st.jobs++)
		q->st.first_submit = res->submit_cycle;
	q->st.last_done = res->done_cycle;
	q->st.job_cycles += res->done_cycle - res->submit_cycle;
	q->st.engine_cycles += res->ctr[LOOM_CTR_CYCLES];
	return advance(rq, r, res->done_cycle, err, errlen);
}

/* the finished request to return: r itself, or the first to finish */
static int finished(const loom_exec_reqs *rq, int r)
{
	if (r >= 0)
		return rq->r[r].state == REQ_DONE ? r : -1;
	int best = -1;
	for (unsigned i = 0; i < rq->k; i++)
		if (rq->r[i].state == REQ_DONE && (best < 0 || rq->r[i].finished < rq->r[best].finished))
			best = (int)i;
	return best;
}

int loom_exec_req_wait(loom_exec_reqs *rq, int r, unsigned *done, char *err, size_t errlen)
{
	if (!rq || r < LOOM_EXEC_REQ_ANY || (r >= 0 && (unsigned)r >= rq->k))
		return fail(err, errlen, "request %d: no such request (%u)", r, rq ? rq->k : 0);
	for (;;) {
		int f = finished(rq, r);
		if (f >= 0) {
			rq->r[f].state = REQ_IDLE;
			if (done)
				*done = (unsigned)f;
			return 0;
		}
		if (r >= 0 && rq->r[r].state != REQ_JOB)
			return fail(err, errlen, "request %d: not in flight", r);
		loom_result res;
		if (rq->nstash) { /* the oldest completion the busy host has not handled */
			res = rq->stash[0];
			memmove(rq->stash, rq->stash + 1, --rq->nstash * sizeof *rq->stash);
		} else if (!rq->njobs) {
			return fail(err, errlen, "requests: no request in flight");
		} else {
			int rc = reap(rq, 4 * rq->wd_inflight + 10000000, &res);
			if (rc)
				return fail(err, errlen, "requests: waiting for a job: %s: %s", loom_strerror(rc),
					    loom_errmsg(rq->dev));
		}
		if (job_done(rq, &res, err, errlen))
			return -1;
	}
}

int loom_exec_reqs_host_time(loom_exec_reqs *rq, double cycles_per_s)
{
	if (!rq || !(cycles_per_s >= 0) || rq->njobs || rq->nstash)
		return -1;
	rq->host_hz = cycles_per_s;
	return 0;
}
