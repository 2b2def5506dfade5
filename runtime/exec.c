/* exec.c - running a compiled model through libloom (runtime/exec.h): the
 * model's DRAM image, its steps (CPU nodes, quantization, NPU jobs), the
 * per-layer profile from the MARK records, the per-step records (host time,
 * an NPU job's completion and, on request, the device cycle of its START). */
#include "runtime/exec.h"
#include "runtime/exec_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/model.h"
#include "runtime/cpu_ops.h"
#include "loom/isa.h"
#include "loom/regs.h"

/* ------------------------------------------------------------------ exec */

struct loom_exec {
	loom_dev *dev;
	loom_model *m;
	loom_bo *bo;
	loom_exec_stats st;
	int locate;         /* loom_exec_locate_starts */
	int8_t *img;        /* conversion buffer (largest device image) */
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

int loom_exec_new(loom_dev *dev, loom_model *m, loom_exec **out, char *err, size_t errlen)
{
	*out = NULL;
	if (loom_model_check_cfg(m, loom_dev_config(dev), err, errlen))
		return -1;
	loom_exec *e = calloc(1, sizeof *e);
	if (!e)
		return fail(err, errlen, "out of memory");
	e->dev = dev;
	e->m = m;
	e->st.layers = calloc(m->nlayers + 1, sizeof *e->st.layers);
	e->st.steps = calloc(m->nsteps + 1, sizeof *e->st.steps);
	for (int t = 0; t < m->graph->ntensors; t++)
		if (m->mt[t].dev && img_size(&m->mt[t]) > e->img_bytes)
			e->img_bytes = img_size(&m->mt[t]);
	e->img = malloc(e->img_bytes + 1);
	if (!e->st.layers || !e->st.steps || !e->img) {
		loom_exec_free(e);
		return fail(err, errlen, "out of memory");
	}
	int rc = loom_bo_alloc_at(dev, m->base, m->dram_end - m->base, &e->bo);
	if (rc) {
		fail(err, errlen, "device DRAM [0x%llx, 0x%llx) for the model: %s: %s", (unsigned long long)m->base,
		     (unsigned long long)m->dram_end, loom_strerror(rc), loom_errmsg(dev));
		loom_exec_free(e);
		return -1;
	}
	/* constants, then the programs as little-endian words */
	rc = m->const_bytes ? loom_bo_write(e->bo, m->const_base - m->base, m->consts, m->const_bytes) : 0;
	uint8_t *text = malloc((size_t)m->ninsn * LOOM_INSN_BYTES + 1);
	if (!rc && text) {
		for (uint32_t i = 0; i < m->ninsn; i++)
			for (int w = 0; w < LOOM_INSN_WORDS; w++)
				for (int b = 0; b < 4; b++)
					text[(size_t)i * LOOM_INSN_BYTES + 4 * w + b] = (uint8_t)(m->insn[i].w[w] >> (8 * b));
		rc = loom_bo_write(e->bo, m->text_base - m->base, text, (size_t)m->ninsn * LOOM_INSN_BYTES);
	}
	free(text);
	if (rc || !text) {
		fail(err, errlen, "writing the model into device DRAM: %s", text ? loom_strerror(rc) : "out of memory");
		loom_exec_free(e);
		return -1;
	}
	*out = e;
	return 0;
}

void loom_exec_free(loom_exec *e)
{
	if (!e)
		return;
	loom_bo_free(e->bo);
	free(e->img);
	free(e->st.layers);
	free(e->st.steps);
	free(e);
}

const loom_exec_stats *loom_exec_get_stats(const loom_exec *e) { return &e->st; }

void loom_exec_locate_starts(loom_exec *e, int on) { e->locate = on; }

/* The device cycle at which the engine STARTs the job just submitted: run
 * the device in slices of 16 cycles, each stopping at the interrupt as the
 * driver's own wait does (the device's cycles are the same as without this),
 * until STATUS.BUSY; CYCLES has then counted since START. 0 when the job
 * ended first (fewer cycles than a slice), the interrupt came or bound passed. */
static uint64_t locate_start(loom_exec *e, uint64_t bound)
{
	loom_hw *hw = loom_dev_hw(e->dev);
	uint64_t c0 = loom_hw_cycles(hw);
	while (loom_hw_cycles(hw) - c0 < bound) {
		if (loom_hw_mmio_read(hw, LOOM_REG_STATUS) & LOOM_STATUS_BUSY)
			return loom_hw_cycles(hw) - loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4u * LOOM_CTR_CYCLES);
		if (loom_hw_irq(hw) || loom_hw_run(hw, 16) != LOOM_HW_TIMEOUT)
			return 0;
	}
	return 0;
}

/* The job's layers from their MARK records (counters since the job's START). */
static void read_marks(loom_exec *e, const loom_step *st)
{
	loom_model *m = e->m;
	uint32_t prev[LOOM_MARK_BYTES / 4];
	memset(prev, 0, sizeof prev);
	for (uint32_t l = st->layer; l < st->layer + st->nlayers; l++) {
		uint32_t rec[LOOM_MARK_BYTES / 4];
		uint8_t raw[LOOM_MARK_BYTES];
		if (loom_bo_read(e->bo, m->mark_base - m->base + (uint64_t)LOOM_MARK_BYTES * l, raw, sizeof raw))
			break;
		for (unsigned i = 0; i < LOOM_MARK_BYTES / 4; i++)
			rec[i] = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 | (uint32_t)raw[4 * i + 2] << 16 |
				 (uint32_t)raw[4 * i + 3] << 24;
		loom_layer_prof *p = &e->st.layers[l];
		const uint32_t *c = rec + 1, *q = prev + 1;
		p->cycles = c[LOOM_CTR_CYCLES] - q[LOOM_CTR_CYCLES];
		uint64_t mc = (uint64_t)c[LOOM_CTR_MACS_HI] << 32 | c[LOOM_CTR_MACS_LO];
		uint64_t mq = (uint64_t)q[LOOM_CTR_MACS_HI] << 32 | q[LOOM_CTR_MACS_LO];
		p->macs = mc - mq;
		p->dram_rd = c[LOOM_CTR_DRAM_RD_BYTES] - q[LOOM_CTR_DRAM_RD_BYTES];
		p->dram_wr = c[LOOM_CTR_DRAM_WR_BYTES] - q[LOOM_CTR_DRAM_WR_BYTES];
		for (unsigned i = 0; i < LOOM_FW_CTRS; i++)
			p->ctr[i] = c[i] - q[i];
		p->ctr[LOOM_CTR_MACS_LO] = (uint32_t)p->macs;
		p->ctr[LOOM_CTR_MACS_HI] = (uint32_t)(p->macs >> 32);
		p->start = q[LOOM_CTR_CYCLES];
		p->step = (uint32_t)(st - m->steps);
		memcpy(prev, rec, sizeof prev);
	}
}

/* the job's completion in its step record */
static void record_job(loom_exec *e, const loom_step *st, const loom_result *r, uint64_t start)
{
	loom_step_prof *sp = &e->st.steps[st - e->m->steps];
	sp->submit_cycle = r->submit_cycle;
	sp->done_cycle = r->done_cycle;
	sp->start_cycle = start;
	memcpy(sp->ctr, r->ctr, sizeof sp->ctr);
	memcpy(sp->evt, r->evt, sizeof sp->evt);
	sp->fw_cycles = r->fw_cycles;
	sp->fw_insns = r->fw_insns;
}

static int run_npu(loom_exec *e, const loom_step *st, char *err, size_t errlen)
{
	loom_model *m = e->m;
	loom_job_desc jd;
	memset(&jd, 0, sizeof jd);
	jd.insn_addr = st->insn_addr;
	jd.nwindows = 1;
	jd.win[0].base = m->base;
	jd.win[0].size = m->dram_end - m->base;
	/* watchdog: 8x the planner's estimate plus a margin */
	uint64_t est = 0;
	for (uint32_t l = st->layer; l < st->layer + st->nlayers; l++)
		est += m->layers[l].est_cycles;
	uint64_t wd = 8 * est + 1000000;
	jd.timeout_cycles = wd > 0xffffffffull ? 0xffffffffu : (uint32_t)wd;
	uint64_t id;
	int rc = loom_submit(e->dev, &jd, LOOM_SUBMIT_WAIT, &id);
	loom_result r;
	uint64_t start = !rc && e->locate ? locate_start(e, wd) : 0;
	if (!rc)
		rc = loom_wait(e->dev, id, 4 * wd + 10000000, &r);
	const char *first = m->layers[st->layer].name;
	if (rc)
		return fail(err, errlen, "NPU job (layers %u..%u, from '%s'): %s: %s", st->layer,
			    st->layer + st->nlayers - 1, first, loom_strerror(rc), loom_errmsg(e->dev));
	if (r.status != LOOM_JOB_OK)
		return fail(err, errlen, "NPU job (layers %u..%u, from '%s'): %s, cause %s at pc 0x%x info 0x%x", st->layer,
			    st->layer + st->nlayers - 1, first, loom_job_status_name(r.status),
			    loom_err_name(r.err_cause), r.err_pc, r.err_info);
	e->st.jobs++;
	e->st.npu_cycles += r.done_cycle - r.submit_cycle;
	e->st.engine_cycles += r.ctr[LOOM_CTR_CYCLES];
	record_job(e, st, &r, start);
	read_marks(e, st);
	return 0;
}

int loom_exec_run(loom_exec *e, char *err, size_t errlen)
{
	loom_model *m = e->m;
	loom_graph *g = m->graph;
	for (int i = 0; i < g->ninputs; i++)
		if (!g->tensors[g->inputs[i]].data)
			return fail(err, errlen, "input '%s' has no data", g->tensors[g->inputs[i]].name);
	for (uint32_t s = 0; s < m->nsteps; s++) {
		const loom_step *st = &m->steps[s];
		double t0 = now_s();
		if (st->kind == LOOM_STEP_CPU) {
			loom_node *n = &g->nodes[st->node];
			const loom_cpu_op *op = loom_cpu_op_find(n->op_type, g->opset);
			if (!op)
				return fail(err, errlen, "step %u: node '%s' (%s, opset %lld): no CPU kernel", s, n->name,
					    n->op_type, (long long)g->opset);
			for (int k = 0; k < n->noutputs; k++) {
				loom_tensor *t = loom_node_out(g, n, k);
				if (t && !t->data && !(t->cap = 0, t->data = calloc(1, loom_tensor_bytes(t) + 1)))
					return fail(err, errlen, "out of memory");
			}
			for (int k = 0; k < n->ninputs; k++) {
				loom_tensor *t = loom_node_in(g, n, k);
				if (t && !t->data)
					return fail(err, errlen, "step %u: node '%s': input '%s' has no data", s, n->name,
						    t->name);
			}
			if (op->run(g, n, err, errlen))
				return -1;
			e->st.cpu_s += now_s() - t0;
		} else if (st->kind == LOOM_STEP_QUANT || st->kind == LOOM_STEP_DEQUANT) {
			loom_tensor *t = &g->tensors[st->tensor];
			const loom_mtensor *mt = &m->mt[loom_step_dev(st)];
			size_t n = img_size(mt);
			int rc;
			if (st->kind == LOOM_STEP_QUANT) {
				if (!t->data)
					return fail(err, errlen, "step %u: tensor '%s' has no data to quantize", s, t->name);
				loom_step_quantize(m, st, t->data, e->img);
				rc = loom_bo_write(e->bo, mt->addr - m->base, e->img, n);
			} else {
				if (!t->data && !(t->cap = 0, t->data = calloc(1, loom_tensor_bytes(t) + 1)))
					return fail(err, errlen, "out of memory");
				rc = loom_bo_read(e->bo, mt->addr - m->base, e->img, n);
				if (!rc)
					loom_mt_dequantize(t, mt, e->img, t->data);
			}
			if (rc)
				return fail(err, errlen, "step %u: tensor '%s': %s", s, t->name, loom_strerror(rc));
			e->st.conv_s += now_s() - t0;
		} else {
			if (run_npu(e, st, err, errlen))
				return -1;
			e->st.npu_s += now_s() - t0;
		}
		e->st.steps[s].host_s = now_s() - t0;
	}
	return 0;
}

/* ------------------------------------------------- for runtime/exec_req.c */

loom_dev *loom_exec_dev(const loom_exec *e) { return e->dev; }
loom_model *loom_exec_model(const loom_exec *e) { return e->m; }
loom_bo *loom_exec_bo(const loom_exec *e) { return e->bo; }
