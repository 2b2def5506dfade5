/* eval.c - one design point of one model, analytically (sweep.h): each NPU
 * layer of the model's preparation (prep.c) re-planned for the point's
 * configuration by the compiler's tile planners (loom_conv_plan_make,
 * loom_vec_plan_make), whose costs are the one timing model's
 * (common/timing.c). A full `loom compile` for the point gives the same
 * estimate per layer (tests/unit/test_sweep.c): the planners see the same
 * kernel parameters, and nothing else of the lowering depends on the
 * configuration, except where a planner finds no tiling: such a layer's
 * nodes run on the CPU (the compile does the same) and the point is
 * reported as a fallback.
 *
 * Layers whose kernel parameters differ only in their quantization (zero
 * points, clamps, multipliers, which no planner looks at) are planned once
 * per point: ResNet-50 has 72 layers of 30 shapes.
 *
 * Energy events (sweep/energy.h): each NPU layer's program is emitted for
 * the point (loom_build_conv with the chosen tiling as hints, so no second
 * search; loom_build_vec, which plans as loom_vec_plan_make does) and its
 * instructions counted by common/events.c, the counts the C model and the
 * RTL make when the program runs; MACS is the plan's macs_issued, the DRAM
 * bytes the plan's (loads and stores, without instruction fetch and MARK
 * records). */
#include "sweep/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/events.h"
#include "common/timing.h"

const char *const sweep_status_name[] = {"ok", "fallback", "invalid", "error", "missing"};

void sweep_result_free(sweep_result *r)
{
	free(r->layers);
	memset(r, 0, sizeof *r);
}

/* the parameters the planners look at (quantization cleared) */
static loom_layer_kparams shape_of(const loom_layer_kparams *k)
{
	loom_layer_kparams s = *k;
	s.node = 0;
	s.cp.in_zp = s.cp.out_zp = 0;
	s.cp.clip_lo = -128, s.cp.clip_hi = 127;
	s.cp.hints = NULL; /* set per point by rated() */
	s.vp.in_zp = s.vp.in2_zp = s.vp.out_zp = 0;
	s.vp.clip_lo = -128, s.vp.clip_hi = 127;
	s.vp.mult = s.vp.shift = s.vp.mult_a = s.vp.mult_b = 0;
	s.vp.hints = NULL;
	return s;
}

static int is_array(int kind) { return kind == LOOM_LAYER_CONV || kind == LOOM_LAYER_GEMM; }

/* the events of prog's instructions (common/events.c) into ev */
static void prog_events(const loom_hwcfg *cfg, const loom_prog *pr, sweep_events *ev)
{
	uint64_t e[LOOM_EVT_COUNT] = {0};
	for (size_t i = 0; i < pr->n; i++)
		loom_insn_events(cfg->array_rows, cfg->array_cols, cfg->vec_macs, &pr->insn[i], e);
	ev->sp_rd = e[LOOM_EVT_SP_RD];
	ev->sp_wr = e[LOOM_EVT_SP_WR];
	ev->acc_rd = e[LOOM_EVT_ACC_RD];
	ev->acc_wr = e[LOOM_EVT_ACC_WR];
	ev->vec_lines = e[LOOM_EVT_VEC_LINES];
	ev->rq_values = e[LOOM_EVT_RQ_VALUES];
}

static int same_conv_plan(const loom_conv_plan *a, const loom_conv_plan *b)
{
	return a->th == b->th && a->tw == b->tw && a->kc == b->kc && a->g == b->g && a->kyc == b->kyc &&
	       a->wchunk == b->wchunk && a->chained == b->chained && a->nslots == b->nslots && a->banks == b->banks &&
	       a->dram_rd_est == b->dram_rd_est && a->dram_wr_est == b->dram_wr_est;
}

/* the events of a CONV / GEMM layer's program for plan pl: emitted with pl's
 * tiling as hints (one candidate, no search, not timed again: rated);
 * should the hints lead to another tiling, emitted as a compile emits it
 * (the planner's own search) */
static void conv_events(const loom_hwcfg *cfg, const loom_layer_kparams *k, const loom_conv_plan *pl, sweep_lres *o)
{
	loom_conv_hints h = {.th = pl->th, .tw = pl->tw, .kc = pl->kc, .g = pl->g, .wchunk = pl->wchunk ? 2 : 1,
			     .barrier = !pl->chained, .kyc = pl->kyc, .rated = 1};
	loom_conv_params cp = k->cp;
	loom_dram_layout lay;
	loom_conv_plan got;
	loom_prog pr;
	char err[256];
	memset(&lay, 0, sizeof lay);
	loom_prog_init(&pr);
	cp.hints = &h;
	int rc = loom_build_conv(cfg, &cp, &lay, &pr, &got, err, sizeof err);
	if (rc || !same_conv_plan(&got, pl)) {
		loom_prog_free(&pr);
		loom_prog_init(&pr);
		cp.hints = NULL;
		rc = loom_build_conv(cfg, &cp, &lay, &pr, &got, err, sizeof err);
	}
	if (!rc)
		prog_events(cfg, &pr, &o->ev);
	loom_prog_free(&pr);
	o->ev.macs = pl->macs_issued;
	o->ev.dram_rd = pl->dram_rd_est;
	o->ev.dram_wr = pl->dram_wr_est;
}

/* a CONV / GEMM layer's numbers from its plan */
static void conv_numbers(const loom_hwcfg *cfg, const loom_layer_kparams *k, const loom_conv_plan *pl,
			 sweep_lres *o)
{
	loom_timing tm;
	loom_timing_init(&tm, cfg, 0, 0);
	double chunks = (double)pl->nk * pl->nky;
	double folds = (double)pl->ncb * k->cp.kh * k->cp.kw / chunks, P = (double)pl->oh * pl->ow / pl->ntiles;
	o->npu = 1;
	o->cycles = pl->est_cycles;
	o->cycles_first = pl->est_first;
	o->macs = pl->macs;
	o->macs_issued = pl->macs_issued;
	o->busy = (uint64_t)((double)pl->nob * pl->ntiles * chunks * loom_cyc_matmul(&tm, folds, P));
	o->rd_wgt = pl->wgt_bytes * (pl->wchunk ? pl->ntiles : 1) + pl->param_bytes;
	o->rd_in = pl->dram_rd_est - o->rd_wgt;
	o->wr = pl->dram_wr_est;
	o->sp_bytes = loom_conv_plan_sp_lines(pl) * cfg->sp_line_bytes;
	o->acc_upd = (uint64_t)pl->oh * pl->ow * k->cp.cout * pl->nk * pl->nky;
	o->sram_wgt = pl->wgt_bytes * pl->ntiles;
	o->tile_h = pl->th, o->tile_w = pl->tw, o->tile_c = pl->kc * cfg->array_rows;
	conv_events(cfg, k, pl, o);
}

/* a vector-unit layer planned for cfg into *o: 0, or -1 with the planner's
 * reason; its program emitted for the events (the build plans as
 * loom_vec_plan_make does) */
static int plan_vec(const loom_hwcfg *cfg, const loom_layer_kparams *k, sweep_lres *o, char *why, size_t len)
{
	loom_vec_plan pl;
	loom_vec_layout lay;
	loom_prog pr;
	memset(&lay, 0, sizeof lay);
	loom_prog_init(&pr);
	if (loom_build_vec(cfg, &k->vp, &lay, &pr, &pl, why, len)) {
		loom_prog_free(&pr);
		return -1;
	}
	prog_events(cfg, &pr, &o->ev);
	loom_prog_free(&pr);
	o->ev.dram_rd = pl.dram_rd_est;
	o->ev.dram_wr = pl.dram_wr_est;
	o->npu = 1;
	o->cycles = pl.est_cycles;
	o->cycles_first = pl.est_first;
	o->macs = k->kind == LOOM_LAYER_DWCONV ? (uint64_t)pl.oh * pl.ow * k->vp.c * k->vp.kh * k->vp.kw : 0;
	o->rd_wgt = pl.const_bytes + (k->vp.kind == LOOM_VEC_ELTWISE && k->vp.bcast ? pl.in2_bytes : 0);
	o->rd_in = pl.dram_rd_est - o->rd_wgt;
	o->wr = pl.dram_wr_est;
	o->sp_bytes = loom_vec_plan_sp_lines(&pl) * cfg->sp_line_bytes;
	o->tile_h = pl.th, o->tile_w = pl.tw, o->tile_c = pl.kc * cfg->array_rows;
	return 0;
}

/* every parameter the same but the accumulator's size */
static int same_but_acc(const loom_hwcfg *a, const loom_hwcfg *b)
{
	int same = 1;
#define LOOM_HWPARAM(nm, sv, lo, hi, doc) same &= !strcmp(#nm, "acc_bytes") || a->nm == b->nm;
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	return same;
}

/* layer i of the model at every point: *o[k] (rtl_cycles -1, npu 0 when
 * it has no tiling, why[k] then); the CONV and GEMM searches shared
 * (loom_conv_plan_make_n) */
static int plan_layer(const sweep_point *const *pts, int n, const loom_layer_kparams *k0, int timed, sweep_lres **o,
		      int i, char (*why)[256])
{
	/* the closed form's best rated tiling, or (timed) the compile's choice */
	static const loom_conv_hints crated = {.rated = 1};
	static const loom_vec_hints vrated = {.rated = 1};
	loom_layer_kparams kk = *k0;
	const loom_layer_kparams *k = &kk;
	kk.cp.hints = timed ? NULL : &crated;
	kk.vp.hints = timed ? NULL : &vrated;
	for (int j = 0; j < n; j++) {
		memset(&o[j][i], 0, sizeof o[j][i]);
		o[j][i].kind = k->kind;
		o[j][i].rtl_cycles = -1;
	}
	if (!is_array(k->kind)) {
		/* the vector unit's planner never looks at the accumulator: points
		 * that differ in it alone share the plan */
		for (int j = 0; j < n; j++) {
			int d = 0;
			while (d < j && !same_but_acc(&pts[d]->cfg, &pts[j]->cfg))
				d++;
			if (d < j) {
				o[j][i] = o[d][i];
				snprintf(why[j], sizeof why[j], "%s", why[d]);
			} else {
				plan_vec(&pts[j]->cfg, k, &o[j][i], why[j], sizeof why[j]);
			}
		}
		return 0;
	}
	const loom_hwcfg **cfgs = calloc((size_t)n + 1, sizeof *cfgs);
	loom_conv_plan *pl = malloc((size_t)n * sizeof *pl);
	int *rc = malloc((size_t)n * sizeof *rc);
	char err[256];
	if (!cfgs || !pl || !rc) {
		free(cfgs);
		free(pl);
		free(rc);
		return -1;
	}
	for (int j = 0; j < n; j++)
		cfgs[j] = &pts[j]->cfg;
	loom_conv_plan_make_n(cfgs, n, &k->cp, pl, rc, err, sizeof err);
	for (int j = 0; j < n; j++) {
		if (!rc[j])
			conv_numbers(cfgs[j], k, &pl[j], &o[j][i]);
		else /* this point's own message */
			loom_conv_plan_make(cfgs[j], &k->cp, &pl[j], why[j], sizeof why[j]);
	}
	free(cfgs);
	free(pl);
	free(rc);
	return 0;
}

/* the totals of r from its layers and the nodes' placement */
static void totals(const sweep_spec *s, const sweep_prep *p, const loom_hwcfg *cfg, const int *where,
		   sweep_result *r)
{
	for (int i = 0; i < p->nnodes; i++) {
		if (where[i] == LOOM_WHERE_CPU) {
			r->nodes_cpu++;
			r->macs_cpu += p->nodes[i].macs;
		} else {
			r->nodes_npu++;
			r->macs_npu += p->nodes[i].macs;
		}
	}
	for (int i = 0; i < p->nlayers; i++) {
		sweep_lres *l = &r->layers[i];
		if (!l->npu)
			continue;
		/* a job starts where the compile started one, and after a layer
		 * that runs on the CPU here */
		if (p->layers[i].job_start || (i > 0 && !r->layers[i - 1].npu))
			l->cycles = l->cycles_first;
		r->cycles += l->cycles;
		sweep_events_add(&r->ev, &l->ev);
		r->rd += l->rd_in + l->rd_wgt;
		r->wr += l->wr;
		if (is_array(l->kind))
			r->macs_array += l->macs;
		if (l->sp_bytes > r->sp_peak)
			r->sp_peak = l->sp_bytes;
	}
	double peak = (double)cfg->array_rows * cfg->array_cols;
	r->util = r->cycles ? (double)r->macs_array / ((double)r->cycles * peak) : 0;
	r->latency_ms = (double)r->cycles / (s->clock_mhz * 1e3);
	r->ips = r->cycles ? 1e3 / r->latency_ms : 0;
}

/* fallback and DRAM check, the status of r */
static void verdict(const sweep_prep *p, const loom_hwcfg *cfg, const char *first, sweep_result *r)
{
	if (r->nfallback) {
		r->status = SWEEP_FALLBACK;
		snprintf(r->reason, sizeof r->reason, "%d layer%s without a tiling on the CPU, first %s", r->nfallback,
			 r->nfallback == 1 ? "" : "s", first);
	}
	if (p->dram_bytes > cfg->dram_bytes) {
		r->status = SWEEP_ERROR;
		snprintf(r->reason, sizeof r->reason,
			 "the model's weights and activations need %llu bytes of device DRAM, the configuration has %llu",
			 (unsigned long long)p->dram_bytes, (unsigned long long)cfg->dram_bytes);
	}
}

int sweep_eval_n(const sweep_spec *s, const sweep_prep *p, const sweep_point *const *pts, int n, sweep_result *rs)
{
	int nl = p->nlayers, rc = -1;
	loom_layer_kparams *shapes = calloc((size_t)nl + 1, sizeof *shapes);
	int *where = calloc((size_t)p->nnodes + 1, sizeof *where);
	sweep_lres **o = calloc((size_t)n + 1, sizeof *o);
	char(*why)[256] = calloc((size_t)n + 1, sizeof *why), (*first)[320] = calloc((size_t)n + 1, sizeof *first);
	for (int j = 0; j < n; j++) {
		memset(&rs[j], 0, sizeof rs[j]);
		rs[j].rtl_cycles = rs[j].rtl_device_cycles = -1;
		rs[j].nlayers = nl;
		rs[j].layers = calloc((size_t)nl + 1, sizeof *rs[j].layers);
	}
	if (!shapes || !where || !o || !why || !first)
		goto out;
	for (int j = 0; j < n; j++)
		if (!(o[j] = rs[j].layers))
			goto out;
	for (int i = 0; i < nl; i++) {
		shapes[i] = shape_of(&p->layers[i].k);
		int d = 0;
		while (d < i && memcmp(&shapes[d], &shapes[i], sizeof shapes[i]))
			d++;
		if (d < i) {
			for (int j = 0; j < n; j++)
				o[j][i] = o[j][d];
		} else if (plan_layer(pts, n, &p->layers[i].k, s->timed, o, i, why)) {
			goto out;
		}
		for (int j = 0; j < n; j++)
			if (!o[j][i].npu && !rs[j].nfallback++)
				snprintf(first[j], sizeof first[j], "%.60s: %.250s", p->layers[i].name,
					 d < i ? "no tiling fits (as the same layer before)" : why[j]);
	}
	for (int j = 0; j < n; j++) {
		/* the nodes of layers without a tiling run on the CPU */
		for (int i = 0; i < p->nnodes; i++)
			where[i] = p->nodes[i].where;
		for (int i = 0; i < nl; i++)
			for (int k = 0; !o[j][i].npu && k < LOOM_LAYER_MAX_NODES; k++)
				if (p->layers[i].nodes[k] >= 0)
					where[p->layers[i].nodes[k]] = LOOM_WHERE_CPU;
		totals(s, p, &pts[j]->cfg, where, &rs[j]);
		verdict(p, &pts[j]->cfg, first[j], &rs[j]);
	}
	rc = 0;
out:
	if (rc)
		for (int j = 0; j < n; j++)
			sweep_result_free(&rs[j]);
	free(shapes);
	free(where);
	free(o);
	free(why);
	free(first);
	return rc;
}

int sweep_same_group(const loom_hwcfg *a, const loom_hwcfg *b)
{
	return a->array_rows == b->array_rows && a->array_cols == b->array_cols &&
	       a->dram_beat_bytes == b->dram_beat_bytes && a->dram_latency == b->dram_latency &&
	       a->dram_bw == b->dram_bw && a->dma_outstanding == b->dma_outstanding &&
	       a->dma_wr_outstanding == b->dma_wr_outstanding && a->vec_macs == b->vec_macs;
}

int sweep_eval(const sweep_spec *s, const sweep_prep *p, const sweep_point *pt, sweep_result *r)
{
	return sweep_eval_n(s, p, &pt, 1, r);
}
