/* compile.c - loom compile (compiler/compile.h): from an imported ONNX
 * graph to a loom_model (ir/model.h). This file is the pipeline and the
 * report; each stage has a file of its own (compile_internal.h):
 *  1. QDQ folding (quantize.c) and loom_simplify (passes.c): shapes,
 *     constant folding, Identity/Dropout, dead nodes, BatchNorm folding,
 *     the fusion table.
 *  2. Cross-layer equalization when asked, then calibration (quantize.c,
 *     calib.h) on --calib DIR, the caller's sample, or random inputs.
 *  3. Lowering (lower.c), node by node in topological order: a node goes to
 *     the NPU lowering its operator's row of runtime/ops.def names
 *     (lower_conv.c, lower_vec.c, lower_shape.c; docs/OPERATORS.md lists
 *     them, printed by loom ops) when its quantization is representable;
 *     otherwise (or with --keep-float) it stays a float CPU node, and the
 *     report says why. Activations are quantized per tensor (asymmetric
 *     int8 over the calibrated range, widened to contain 0), weights per
 *     output channel (symmetric), biases to int32 at scale s_in * s_w;
 *     requantization multipliers are s_in * s_w / s_out (< 1).
 *  4. Steps (plan.c): CPU nodes; QUANT / DEQUANT where a tensor crosses
 *     between host float and device int8; consecutive layers form one NPU
 *     job.
 *  5. Memory (here and plan.c): weights and parameters packed into the
 *     const region; activations placed in the arena by liveness (greedy,
 *     largest first, lowest address that no tensor alive at the same time
 *     uses).
 *  6. Emission (emit.c): each job's layers built with the NPU back end
 *     (compiler/npu/) at their final addresses, FINISH, loom_prog_verify.
 * No global state. */
#include "compiler/compile_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cc_fail(cc *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void cc_why(cc *c, int node, int where, const char *fmt, ...)
{
	if (!c->rep || node < 0 || node >= c->rep->nnodes)
		return;
	loom_node_report *r = &c->rep->nodes[node];
	r->where = where;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
}

/* node k (-1: none) was folded into node `into`'s layer: done, and reported */
const char *cc_refused(cc *c, const char *why)
{
	snprintf(c->why, sizeof c->why, "%s (%s)", why, c->err[0] ? c->err : "no reason given");
	return c->why;
}

void cc_fused(cc *c, int k, int into, const char *how)
{
	if (k < 0)
		return;
	c->lo.done[k] = 1;
	cc_why(c, k, LOOM_WHERE_FUSED, "into %s%s", c->g->nodes[into].name, how);
}

static uint64_t node_macs(loom_graph *g, const loom_node *n)
{
	loom_tensor *y = loom_node_out(g, n, 0);
	loom_tensor *w = loom_node_in(g, n, 1);
	if (!y || !w)
		return 0;
	if (!strcmp(n->op_type, "Conv") && w->rank >= 3) {
		uint64_t k = 1;
		for (int i = 1; i < w->rank; i++)
			k *= (uint64_t)w->dims[i];
		return (uint64_t)loom_tensor_numel(y) * k;
	}
	if ((!strcmp(n->op_type, "Gemm") || !strcmp(n->op_type, "MatMul")) && y->rank >= 1) {
		loom_tensor *a = loom_node_in(g, n, 0);
		if (!a || a->rank < 1)
			return 0;
		int64_t k = a->dims[a->rank - 1];
		if (!strcmp(n->op_type, "Gemm") && loom_attr_int(n, "transA", 0) && a->rank == 2)
			k = a->dims[0];
		return (uint64_t)loom_tensor_numel(y) * (uint64_t)k;
	}
	return 0;
}

void loom_compile_report_free(loom_compile_report *rep)
{
	if (!rep)
		return;
	free(rep->nodes);
	free(rep->layers);
	memset(rep, 0, sizeof *rep);
}

/* ------------------------------------------------------------------ driver */

static int in_list(const char *list, const char *name)
{
	if (!list)
		return 0;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e ? 1 : 0);
	}
	return 0;
}

/* the CPU graph: NPU nodes become LOOM_NPU_OP placeholders; constants no
 * CPU node reads lose their data */
static int make_cpu_graph(cc *c)
{
	loom_graph *g = c->g;
	int *is_cpu = calloc((size_t)g->nnodes + 1, sizeof *is_cpu);
	int *needed = calloc((size_t)g->ntensors + 1, sizeof *needed);
	if (!is_cpu || !needed) {
		free(is_cpu);
		free(needed);
		return cc_fail(c, "out of memory");
	}
	for (uint32_t s = 0; s < c->m->nsteps; s++)
		if (c->m->steps[s].kind == LOOM_STEP_CPU)
			is_cpu[c->m->steps[s].node] = 1;
	for (int i = 0; i < g->nnodes; i++) {
		loom_node *n = &g->nodes[i];
		if (is_cpu[i]) {
			for (int k = 0; k < n->ninputs; k++)
				if (n->inputs[k] >= 0)
					needed[n->inputs[k]] = 1;
			continue;
		}
		char *name = n->name;
		n->name = NULL;
		loom_node_clear(n);
		n->name = name;
		n->op_type = strdup(LOOM_NPU_OP);
		n->domain = strdup("");
		if (!n->op_type || !n->domain) {
			free(is_cpu);
			free(needed);
			return cc_fail(c, "out of memory");
		}
	}
	for (int i = 0; i < g->noutputs; i++)
		needed[g->outputs[i]] = 1;
	for (int t = 0; t < g->ntensors; t++)
		if (g->tensors[t].is_const && !needed[t]) {
			free(g->tensors[t].data);
			g->tensors[t].data = NULL;
		}
	free(is_cpu);
	free(needed);
	return 0;
}

static void cc_free(cc *c)
{
	free(c->ncons);
	free(c->prod);
	free(c->q.hasq);
	free(c->q.scale);
	free(c->q.zp);
	free(c->q.method);
	free(c->lo.alias);
	free(c->lo.on_host);
	free(c->lo.on_dev);
	free(c->lo.is_cdev);
	free(c->pl.tdef);
	free(c->pl.tlast);
	free(c->lo.keep);
	free(c->lo.done);
	free(c->lo.deferred);
	free(c->lo.ewroot);
	for (int i = 0; i < c->lo.nlw; i++)
		free(c->lo.lws[i].cbuf);
	free(c->lo.lws);
	free(c->pl.cregion);
	free(c->q.forced);
	for (int i = 0; i < c->lo.nraw; i++)
		free(c->lo.raws[i].sv);
	free(c->lo.raws);
	if (c->lo.memo != c->o->plans) /* not the caller's */
		loom_plan_memo_free(c->lo.memo);
	free(c->lo.xpads);
	loom_calib_free(c->q.own);
}

/* wall-clock and CPU (every thread's) seconds now */
typedef struct stamp {
	double wall, cpu;
} stamp;

static stamp stamp_now(void)
{
	struct timespec w, c;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	return (stamp){(double)w.tv_sec + w.tv_nsec * 1e-9, (double)c.tv_sec + c.tv_nsec * 1e-9};
}

/* the context's per-tensor and per-node arrays; consumers, producers and
 * --keep-float of every node */
static int cc_alloc(cc *c, loom_model *m)
{
	loom_graph *g = c->g;
	/* compact away nothing: the passes keep g->nodes dense */
	c->nt = g->ntensors;
	c->nn = g->nnodes;
	size_t nt = (size_t)c->nt + 1, nn = (size_t)c->nn + 1;
	c->ncons = calloc(nt, sizeof(int));
	c->prod = malloc(nt * sizeof(int));
	c->q.hasq = calloc(nt, sizeof(int));
	c->q.scale = calloc(nt, sizeof(float));
	c->q.zp = calloc(nt, sizeof(int32_t));
	c->lo.alias = malloc(nt * sizeof(int));
	c->lo.on_host = calloc(nt, sizeof(int));
	c->lo.on_dev = calloc(nt, sizeof(int));
	c->lo.is_cdev = calloc(nt, sizeof(int));
	c->pl.tdef = malloc(nt * sizeof(int));
	c->pl.tlast = malloc(nt * sizeof(int));
	c->lo.keep = calloc(nn, sizeof(int));
	c->lo.done = calloc(nn, sizeof(int));
	c->lo.deferred = calloc(nn, sizeof(int));
	c->lo.ewroot = calloc(nn, sizeof(int));
	m->mt = calloc(nt, sizeof *m->mt);
	c->lo.memo = c->o->plans ? c->o->plans : loom_plan_memo_new(c->cfg);
	loom_plan_memo_defer(c->lo.memo);
	loom_plan_memo_stats(c->lo.memo, &c->lo.hits0, &c->lo.misses0, &c->lo.timed0);
	if (c->rep)
		c->rep->nodes = calloc(nn, sizeof *c->rep->nodes);
	if (!c->ncons || !c->prod || !c->q.hasq || !c->q.scale || !c->q.zp || !c->lo.alias || !c->lo.on_host ||
	    !c->lo.on_dev || !c->lo.is_cdev || !c->pl.tdef || !c->pl.tlast || !c->lo.keep || !c->lo.done ||
	    !c->lo.deferred || !c->lo.ewroot || !m->mt || !c->lo.memo || (c->rep && !c->rep->nodes))
		return cc_fail(c, "out of memory");
	m->version = LOOM_MODEL_VERSION;
	m->cfg = *c->cfg;
	m->graph = g;
	c->m = m;
	for (int t = 0; t < c->nt; t++) {
		c->prod[t] = c->lo.alias[t] = c->pl.tdef[t] = c->pl.tlast[t] = -1;
	}
	for (int i = 0; i < c->nn; i++) {
		const loom_node *n = &g->nodes[i];
		for (int k = 0; k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				c->ncons[n->inputs[k]]++;
		for (int k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				c->prod[n->outputs[k]] = i;
		c->lo.keep[i] = in_list(c->o->keep_float, n->name);
	}
	for (int i = 0; i < g->noutputs; i++)
		c->ncons[g->outputs[i]]++;
	return 0;
}

/* every --keep-float name must be a node */
static int check_keep_float(cc *c)
{
	const char *p = c->o->keep_float;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = 0;
		for (int i = 0; i < c->nn && !found; i++)
			found = strlen(c->g->nodes[i].name) == len && !strncmp(c->g->nodes[i].name, p, len);
		if (!found && len)
			return cc_fail(c, "--keep-float: no node named '%.*s' (after simplification)", (int)len, p);
		p += len + (e ? 1 : 0);
	}
	return 0;
}

/* the report's node table before lowering; the QDQ pairs' quantization */
static void start_nodes(cc *c)
{
	loom_compile_report *rep = c->rep;
	if (rep) {
		rep->nnodes = c->nn;
		for (int i = 0; i < c->nn; i++) {
			snprintf(rep->nodes[i].name, sizeof rep->nodes[i].name, "%s", c->g->nodes[i].name);
			snprintf(rep->nodes[i].op_type, sizeof rep->nodes[i].op_type, "%s", c->g->nodes[i].op_type);
			rep->nodes[i].layer = -1;
			rep->nodes[i].macs = node_macs(c->g, &c->g->nodes[i]);
		}
	}
	for (int i = 0; i < c->q.nforced; i++)
		if (c->q.forced[i].t >= 0 && c->q.forced[i].t < c->nt) {
			c->q.scale[c->q.forced[i].t] = c->q.forced[i].scale;
			c->q.zp[c->q.forced[i].t] = c->q.forced[i].zp;
			c->q.hasq[c->q.forced[i].t] = 1;
		}
}

/* the model's layers; the const region: each layer's constants after the
 * eltwise constants the lowerings placed */
static int model_layers(cc *c)
{
	loom_model *m = c->m;
	m->nlayers = (uint32_t)c->lo.nlw;
	m->layers = calloc((size_t)c->lo.nlw + 1, sizeof *m->layers);
	if (!m->layers)
		return cc_fail(c, "out of memory");
	for (int i = 0; i < c->lo.nlw; i++) {
		lw *l = &c->lo.lws[i];
		loom_layer *L = &m->layers[i];
		L->kind = l->kind;
		L->name = strdup(c->g->nodes[l->node].name);
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
			L->nodes[k] = l->nodes[k];
		L->in[0] = l->in[0];
		L->in[1] = l->in[1];
		L->out = l->out;
		if (l->const_of >= 0) {
			l->const_off = L->const_off = c->lo.lws[l->const_of].const_off;
			continue;
		}
		uint64_t bytes = l->wbytes + l->pbytes;
		int64_t off = L->name ? const_alloc(c, bytes) : -1;
		if (off < 0)
			return cc_fail(c, "out of memory");
		if (bytes)
			memcpy(c->pl.cregion + off, l->cbuf, bytes);
		l->const_off = L->const_off = (uint64_t)off;
		L->const_bytes = bytes;
	}
	return 0;
}

/* the report's totals after emission, and each layer's kernel parameters */
static int finish_report(cc *c)
{
	loom_compile_report *rep = c->rep;
	if (!rep)
		return 0;
	rep->layers = calloc((size_t)c->lo.nlw + 1, sizeof *rep->layers);
	if (!rep->layers)
		return cc_fail(c, "out of memory");
	rep->nlayers = c->lo.nlw;
	for (int i = 0; i < c->lo.nlw; i++) {
		const lw *l = &c->lo.lws[i];
		loom_layer_kparams *k = &rep->layers[i];
		k->kind = l->kind;
		k->node = l->node;
		if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM)
			k->cp = l->cp;
		else
			k->vp = l->vp;
		k->cp.hints = NULL;
		k->vp.hints = NULL;
	}
	for (int i = 0; i < c->nn; i++) {
		loom_node_report *r = &rep->nodes[i];
		if (r->where == LOOM_WHERE_CPU) {
			rep->nodes_cpu++;
			rep->macs_cpu += r->macs;
		} else {
			rep->nodes_npu++;
			rep->macs_npu += r->macs;
		}
	}
	for (uint32_t i = 0; i < c->m->nlayers; i++)
		rep->est_cycles += c->m->layers[i].est_cycles;
	return 0;
}

/* QDQ folding and loom_simplify, with their report entries */
static int simplify(cc *c, loom_pass_stats *st)
{
	loom_compile_report *rep = c->rep;
	forced_q *forced = NULL;
	int nforced = 0, npairs = fold_qdq(c->g, &forced, &nforced);
	if (npairs < 0)
		return cc_fail(c, "out of memory");
	c->q.forced = forced;
	c->q.nforced = nforced;
	if (loom_simplify(c->g, st, c->err, c->errlen))
		return -1;
	if (rep) {
		rep->qdq_pairs = npairs;
		rep->nodes_onnx = st->nodes_before;
		rep->folded = st->folded;
		rep->identities_removed = st->identities_removed;
		rep->dead_removed = st->dead_removed;
		rep->bn_folded = st->bn_folded;
		rep->convs_trimmed = st->convs_trimmed;
		rep->muls_folded = st->muls_folded;
	}
	return 0;
}

int cc_threads(const cc *c)
{
	if (c->o->threads > 0)
		return c->o->threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* the layers' plans completed: every shape's candidate programs timed at
 * once on threads (compiler/npu/memo.c; lowering used only their sizes),
 * with est_first for the first layer of each job, then looked up again */
static int time_plans(cc *c)
{
	loom_model *m = c->m;
	for (uint32_t s = 0; s < m->nsteps; s++) {
		if (m->steps[s].kind != LOOM_STEP_NPU || (int)m->steps[s].layer >= c->lo.nlw)
			continue;
		const lw *l = &c->lo.lws[m->steps[s].layer];
		if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM)
			loom_plan_memo_want_first(c->lo.memo, &l->cp, NULL);
		else
			loom_plan_memo_want_first(c->lo.memo, NULL, &l->vp);
	}
	if (loom_plan_memo_time(c->lo.memo, cc_threads(c)))
		return cc_fail(c, "out of memory (planning)");
	for (int i = 0; i < c->lo.nlw; i++) {
		lw *l = &c->lo.lws[i];
		int rc = l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM
				 ? loom_plan_memo_conv(c->lo.memo, c->cfg, &l->cp, &l->cplan, c->err, c->errlen)
				 : loom_plan_memo_vec(c->lo.memo, c->cfg, &l->vp, &l->vplan, c->err, c->errlen);
		if (rc)
			return cc_fail(c, "layer %d: planning again: %.200s", i, c->err);
	}
	return 0;
}

/* from the lowered layers to the model: host tensors' int8 steps, layers,
 * const region, arena, emission, the CPU graph, options and source */
static int build_model(cc *c, stamp *emit)
{
	loom_graph *g = c->g;
	loom_model *m = c->m;
	const loom_compile_opts *o = c->o;
	/* tensors that stay on the host keep the int8 step they would have had
	 * (reports, tolerances of test runners); dev = 0 */
	for (int t = 0; t < c->nt; t++)
		if (!m->mt[t].dev && is_float_act(c, t) && !g->tensors[t].is_const && !quant_of(c, t)) {
			m->mt[t].scale = c->q.scale[t];
			m->mt[t].zp = c->q.zp[t];
		}
	if (model_layers(c))
		return -1;
	m->const_base = o->base ? o->base : DEFAULT_BASE;
	m->const_bytes = align64(c->pl.cbytes);
	m->arena_base = m->const_base + m->const_bytes;
	if (plan_arena(c))
		return -1;
	m->mark_base = m->arena_base + align64(m->arena_bytes);
	stamp t = stamp_now();
	if (cc_emit(c))
		return -1;
	stamp u = stamp_now();
	*emit = (stamp){u.wall - t.wall, u.cpu - t.cpu};
	m->consts = c->pl.cregion;
	c->pl.cregion = NULL;
	if (make_cpu_graph(c))
		return -1;
	m->options = strdup(o->options ? o->options : "");
	m->source = strdup(o->source ? o->source : (g->path ? g->path : ""));
	if (!m->options || !m->source)
		return cc_fail(c, "out of memory");
	return 0;
}

int loom_compile(loom_graph *g, const loom_hwcfg *cfg, const loom_compile_opts *o, loom_model **out,
		 loom_compile_report *rep, char *err, size_t errlen)
{
	stamp t[5], emit = {0, 0};
	t[0] = stamp_now();
	cc c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.cfg = cfg;
	c.o = o;
	c.rep = rep;
	c.err = err;
	c.errlen = errlen;
	*out = NULL;
	if (o->calib_out)
		*o->calib_out = NULL;
	if (rep)
		memset(rep, 0, sizeof *rep);
	loom_pass_stats st;
	memset(&st, 0, sizeof st);
	int rc = -1;
	loom_model *m = calloc(1, sizeof *m);
	if (!m) {
		cc_fail(&c, "out of memory");
		goto done;
	}
	if (simplify(&c, &st))
		goto done;
	t[1] = stamp_now();
	if (prepare_raw(&c) || prepare_xpack(&c)) {
		cc_fail(&c, "out of memory");
		goto done;
	}
	if (cc_alloc(&c, m) || check_keep_float(&c))
		goto done;
	start_nodes(&c);
	cc_equalize(&c);
	if (cc_calibrate(&c))
		goto done;
	t[2] = stamp_now();
	/* the planners' candidate programs timed on the other threads while
	 * this one lowers (compiler/npu/memo.c) */
	loom_plan_memo_background(c.lo.memo, cc_threads(&c) - 1);
	if (lower_all(&c))
		goto done;
	t[3] = stamp_now();
	uint64_t hits, misses, timed;
	loom_plan_memo_stats(c.lo.memo, &hits, &misses, &timed); /* the lowering's lookups */
	hits -= c.lo.hits0, misses -= c.lo.misses0;
	if (time_plans(&c))
		goto done;
	t[4] = stamp_now();
	if (build_model(&c, &emit))
		goto done;
	if (rep) {
		stamp e = stamp_now();
		rep->simplify_s = t[1].wall - t[0].wall, rep->simplify_cpu = t[1].cpu - t[0].cpu;
		rep->calib_s = t[2].wall - t[1].wall, rep->calib_cpu = t[2].cpu - t[1].cpu;
		rep->lower_s = t[3].wall - t[2].wall + e.wall - t[4].wall - emit.wall;
		rep->lower_cpu = t[3].cpu - t[2].cpu + e.cpu - t[4].cpu - emit.cpu;
		rep->plan_s = t[4].wall - t[3].wall, rep->plan_cpu = t[4].cpu - t[3].cpu;
		rep->emit_s = emit.wall, rep->emit_cpu = emit.cpu;
		rep->threads = cc_threads(&c);
		rep->plans_reused = hits;
		rep->shapes_planned = misses;
		loom_plan_memo_stats(c.lo.memo, &hits, &misses, &rep->programs_timed);
		rep->programs_timed -= c.lo.timed0;
	}
	if (finish_report(&c))
		goto done;
	if (o->calib_out) {
		*o->calib_out = c.q.own;
		c.q.own = NULL;
	}
	rc = 0;
done:
	cc_free(&c);
	loom_pass_stats_free(&st);
	if (rc) {
		if (m) {
			if (!m->graph)
				loom_graph_free(g);
			loom_model_free(m);
		} else {
			loom_graph_free(g);
		}
		if (rep)
			loom_compile_report_free(rep);
		return -1;
	}
	*out = m;
	return 0;
}
