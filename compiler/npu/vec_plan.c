/* vec_plan.c - the tile planner of the vector-unit layers (POOL, DWCONV,
 * ELTWISE, LUT; loom_vec_plan_make): every tiling that fits is rated by
 * the closed form of the timing model (common/timing.c, loom_est_vec); the
 * best rated and the best of each buffer scheme are emitted and their
 * programs timed by the timing model itself (common/tsim.h): npu_choose's
 * rule (the fewest DRAM bytes within NPU_CYCLE_TOL_PERMIL of the fastest)
 * picks the plan, its cycles the plan's estimate. */
#include "compiler/npu/npu_internal.h"
#include "common/timing.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* vector-unit layers: POOL, DWCONV, ELTWISE, LUT
 *
 * Program shape. The output is cut into tiles of th x tw pixels (the input
 * tile is its window, padding included, laid out [cb][y][x] like a MATMUL's)
 * and the channels into chunks of kc blocks of R channels. A step s is one
 * (tile, chunk): LOAD(s) brings its input (ELTWISE: the a tile, then the b
 * tile) into input buffer s % nbuf, one vector instruction writes output
 * buffer s % nbuf, STORE(s) writes the output to DRAM. ELTWISE and LUT may
 * instead write in place over the a tile (half the SP, so larger tiles).
 * Constants (DWCONV weights and parameter blocks, the LUT table, ELTWISE
 * per-channel b) are loaded once, before LOAD(0), and stay resident.
 *
 * Tokens, out of place (nbuf = 1 or 2; program order LOAD(0..nbuf-2), then
 * per step LOAD(s+nbuf-1), COMPUTE(s), STORE(s)):
 *   LOAD(s)     first insn pops C->L when s >= nbuf; last pushes L->C.
 *   COMPUTE(s)  pops L->C; pops S->C when s >= nbuf (STORE(s-nbuf) has
 *               read output buffer s % nbuf); pushes C->L when LOAD(s+nbuf)
 *               exists; pushes C->S.
 *   STORE(s)    first pops C->S; last pushes S->C when COMPUTE(s+nbuf) exists.
 * In place (nbuf = 2; program order LOAD(0), LOAD(1), then per step
 * COMPUTE(s), LOAD(s+1) for s >= 1, STORE(s)): buffer s % 2 is free for
 * LOAD(s+2) once STORE(s) is done, so when LOAD(s+2) exists, STORE(s)
 * pushes S->C and COMPUTE(s+1) pops it and pushes the C->L that LOAD(s+2)
 * pops (every COMPUTE pops L->C and pushes C->S, every STORE pops C->S).
 * Every pop follows its push in program order; the counters are zero at the
 * layer's closing MARK. */

void loom_vec_init(loom_vec_params *p, int kind)
{
	memset(p, 0, sizeof *p);
	p->kind = kind;
	p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1;
	p->clip_lo = -128;
	p->clip_hi = 127;
}

const char *const npu_vec_names[] = {"pool", "dwconv", "eltwise", "lut"};

int npu_vlayer_check(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, char *err, size_t len)
{
	memset(V, 0, sizeof *V);
	if (p->kind < LOOM_VEC_POOL || p->kind > LOOM_VEC_LUT)
		return npu_fail(err, len, "vec: unknown layer kind %d", p->kind);
	const char *nm = npu_vec_names[p->kind];
	V->kind = p->kind;
	if (!p->h || !p->w || !p->c)
		return npu_fail(err, len, "%s: h, w and c must be at least 1", nm);
	if (p->h > 65535 || p->w > 65535)
		return npu_fail(err, len, "%s: input size %ux%u too large", nm, p->h, p->w);
	uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
	if (p->kind == LOOM_VEC_POOL || p->kind == LOOM_VEC_DWCONV) {
		uint32_t kmax = p->kind == LOOM_VEC_POOL ? 255 : 15;
		if (p->kh < 1 || p->kh > kmax || p->kw < 1 || p->kw > kmax)
			return npu_fail(err, len, "%s: window %ux%u outside 1..%u", nm, p->kh, p->kw, kmax);
		if (p->sh < 1 || p->sh > kmax || p->sw < 1 || p->sw > kmax)
			return npu_fail(err, len, "%s: stride %ux%u outside 1..%u", nm, p->sh, p->sw, kmax);
		if (p->dh < 1 || p->dh > 15 || p->dw < 1 || p->dw > 15)
			return npu_fail(err, len, "%s: dilation %ux%u outside 1..15", nm, p->dh, p->dw);
		kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
		pt = p->pad_top, pb = p->pad_bottom, pl = p->pad_left, pr = p->pad_right;
	}
	V->y = (dimg){p->h, 0, kh, sh, dh, pt, pb, (kh - 1) * dh + 1};
	V->x = (dimg){p->w, 0, kw, sw, dw, pl, pr, (kw - 1) * dw + 1};
	dimg *d[2] = {&V->y, &V->x};
	/* a 1x1 DWCONV may pad by any amount: a padded copy (Pad, conv stems) */
	int copy = p->kind == LOOM_VEC_DWCONV && kh == 1 && kw == 1 && sh == 1 && sw == 1;
	for (int i = 0; i < 2; i++) {
		if (!copy && (d[i]->plo >= d[i]->ek || d[i]->phi >= d[i]->ek))
			return npu_fail(err, len, "%s: padding %u/%u must be smaller than the dilated window extent %u", nm,
				    d[i]->plo, d[i]->phi, d[i]->ek);
		uint64_t span = (uint64_t)d[i]->in + d[i]->plo + d[i]->phi;
		if (span < d[i]->ek)
			return npu_fail(err, len, "%s: the padded input (%llu) is smaller than the window extent %u", nm,
				    (unsigned long long)span, d[i]->ek);
		d[i]->out = (uint32_t)((span - d[i]->ek) / d[i]->s + 1);
	}
	V->R = cfg->array_rows;
	V->c = p->c;
	V->cbytes = round4(p->c);
	V->ncb = cdiv(p->c, V->R);
	V->lastb = V->cbytes - (V->ncb - 1) * V->R;
	V->kk = kh * kw;
	V->in_stride = p->in_stride ? p->in_stride : V->cbytes;
	V->out_stride = p->out_stride ? p->out_stride : V->cbytes;
	V->in2_stride = p->in2_stride ? p->in2_stride : V->cbytes;
	if (V->in_stride % 4 || V->in_stride < p->c)
		return npu_fail(err, len, "%s: in_stride %u must be a multiple of 4 and >= c %u", nm, V->in_stride, p->c);
	if (V->out_stride % 4 || V->out_stride < p->c)
		return npu_fail(err, len, "%s: out_stride %u must be a multiple of 4 and >= c %u", nm, V->out_stride, p->c);
	if (p->clip_lo > p->clip_hi)
		return npu_fail(err, len, "%s: clip_lo %d > clip_hi %d", nm, p->clip_lo, p->clip_hi);
	int requant = 0;
	switch (p->kind) {
	case LOOM_VEC_POOL:
		if (p->func != LOOM_POOL_MAX && p->func != LOOM_POOL_AVG)
			return npu_fail(err, len, "pool: func %d is neither MAX nor AVG", p->func);
		requant = p->func == LOOM_POOL_AVG;
		break;
	case LOOM_VEC_DWCONV:
		V->wlines = V->ncb * V->kk;
		V->const_lines = V->wlines + LOOM_DW_PARAM_LINES * V->ncb;
		break;
	case LOOM_VEC_ELTWISE:
		if (p->func != LOOM_ELT_ADD && p->func != LOOM_ELT_MUL)
			return npu_fail(err, len, "eltwise: func %d is neither ADD nor MUL", p->func);
		if (p->bcast != LOOM_BCAST_NONE && p->bcast != LOOM_BCAST_CHANNEL)
			return npu_fail(err, len, "eltwise: bcast %d unknown", p->bcast);
		if (p->func == LOOM_ELT_ADD && (p->mult_a < INT16_MIN || p->mult_a > INT16_MAX ||
						p->mult_b < INT16_MIN || p->mult_b > INT16_MAX))
			return npu_fail(err, len, "eltwise: mult_a %d / mult_b %d outside int16", p->mult_a, p->mult_b);
		if (p->bcast == LOOM_BCAST_NONE && (V->in2_stride % 4 || V->in2_stride < p->c))
			return npu_fail(err, len, "eltwise: in2_stride %u must be a multiple of 4 and >= c %u",
				    V->in2_stride, p->c);
		V->full_b = p->bcast == LOOM_BCAST_NONE;
		if (!V->full_b)
			V->const_lines = V->ncb;
		requant = 1;
		break;
	default: /* LUT */
		V->const_lines = cdiv(LOOM_LUT_ENTRIES, V->R);
		break;
	}
	if (requant && (p->shift < 0 || p->shift > 31))
		return npu_fail(err, len, "%s: shift %d outside 0..31", nm, p->shift);
	uint64_t inb = (uint64_t)p->h * p->w * V->in_stride, outb = (uint64_t)V->y.out * V->x.out * V->out_stride;
	if (inb > cfg->dram_bytes || outb > cfg->dram_bytes ||
	    (V->full_b && (uint64_t)p->h * p->w * V->in2_stride > cfg->dram_bytes))
		return npu_fail(err, len, "%s: tensors larger than DRAM", nm);
	return 0;
}

static int vec_try(const loom_hwcfg *cfg, const vlayer *V, uint32_t th, uint32_t tw, uint32_t kc, int nbuf,
		   int inplace, loom_vec_plan *pl)
{
	if (!kc || kc > 255 || kc > V->ncb || !th || th > V->y.out || !tw || tw > V->x.out || th > 4095 || tw > 4095)
		return -1;
	if (inplace && nbuf != 2)
		return -1;
	uint32_t ih = dim_tin(&V->y, th), iw = dim_tin(&V->x, tw);
	if (ih > 4095 || iw > 4095)
		return -1;
	uint64_t P = (uint64_t)th * tw;
	if ((uint64_t)kc * P > 0xffffffu)
		return -1; /* ELTWISE.PLANE_LINES, LUT.LINES */
	uint64_t inl = (uint64_t)kc * ih * iw + (V->full_b ? kc * P : 0);
	uint64_t outl = inplace ? 0 : kc * P;
	uint64_t BL = cfg->sp_bank_lines, SL = cfg->sp_lines;
	/* buffers in0, in1, out0, out1 each from a bank boundary, the constants
	 * after them; or, when that does not fit, all packed */
	uint64_t reg[4], at[4];
	int nreg = 0;
	for (int b = 0; b < nbuf; b++)
		reg[nreg++] = inl;
	if (!inplace)
		for (int b = 0; b < nbuf; b++)
			reg[nreg++] = outl;
	int found = 0;
	for (int aligned = 1; aligned >= 0 && !found; aligned--) {
		uint64_t pos = 0;
		for (int i = 0; i < nreg; i++) {
			if (aligned)
				pos = (pos + BL - 1) / BL * BL;
			at[i] = pos;
			pos += reg[i];
		}
		if (pos + V->const_lines <= SL) {
			found = 1;
			pl->banks = aligned;
			pl->const_sp = (uint32_t)pos;
		}
	}
	if (!found)
		return -1;
	for (int b = 0; b < 2; b++) {
		pl->in_sp[b] = (uint32_t)at[b % nbuf];
		pl->out_sp[b] = inplace ? pl->in_sp[b] : (uint32_t)at[nbuf + b % nbuf];
	}
	pl->in_lines = (uint32_t)inl;
	pl->out_lines = (uint32_t)(inplace ? kc * P : outl);
	pl->const_lines = V->const_lines;
	pl->th = th;
	pl->tw = tw;
	pl->ntiles = cdiv(V->y.out, th) * cdiv(V->x.out, tw);
	pl->kc = kc;
	pl->nk = cdiv(V->ncb, kc);
	pl->nsteps = pl->ntiles * pl->nk;
	pl->nbuf = nbuf;
	pl->inplace = inplace;

	/* cost (cycles): the timing model's (common/timing.h) */
	static const unsigned opcode[] = {
		[LOOM_VEC_POOL] = LOOM_OP_POOL, [LOOM_VEC_DWCONV] = LOOM_OP_DWCONV,
		[LOOM_VEC_ELTWISE] = LOOM_OP_ELTWISE, [LOOM_VEC_LUT] = LOOM_OP_LUT,
	};
	loom_timing tm;
	loom_timing_init(&tm, cfg, 0, 0);
	loom_vec_est e = {
		.opcode = opcode[V->kind], .oh = V->y.out, .ow = V->x.out, .ih = V->y.in, .iw = V->x.in,
		.ncb = V->ncb, .kk = V->kk, .const_lines = V->const_lines, .full_b = V->full_b,
		.tile_ih = ih, .tile_iw = iw, .ntiles = pl->ntiles, .nk = pl->nk, .nbuf = nbuf,
		.inplace = inplace, .banks = pl->banks, .c = V->c, .in_stride = V->in_stride,
		.out_stride = V->out_stride, .kw = V->x.k, .sw = V->x.s,
	};
	double total = loom_est_vec(&tm, &e);
	pl->est_cycles = (uint64_t)total;
	return 0;
}

/* the sizes of a chosen tiling */
static void vplan_finish(const loom_vec_params *p, const vlayer *V, loom_vec_plan *pl)
{
	pl->oh = V->y.out;
	pl->ow = V->x.out;
	pl->ncb = V->ncb;
	pl->in_stride = V->in_stride;
	pl->in2_stride = V->full_b ? V->in2_stride : 0;
	pl->out_stride = V->out_stride;
	pl->in_bytes = (uint64_t)p->h * p->w * V->in_stride;
	pl->in2_bytes = p->kind != LOOM_VEC_ELTWISE ? 0 : V->full_b ? (uint64_t)p->h * p->w * V->in2_stride : V->cbytes;
	pl->out_bytes = (uint64_t)pl->oh * pl->ow * V->out_stride;
	pl->const_bytes = p->kind == LOOM_VEC_DWCONV || p->kind == LOOM_VEC_LUT ? (uint64_t)V->const_lines * V->R : 0;
	pl->insns = 0;
	pl->dram_rd_est = npu_vec_rd_bytes(V, pl);
	pl->dram_wr_est = npu_vec_wr_bytes(V, pl);
}

/* the cycles of pl's program (at 4 KiB-aligned addresses, plus the
 * input's and output's known offsets: a channel slice's rows straddle DRAM
 * beats as they will) by the timing model, MARK to MARK (first: from the
 * job's START); 0 if it can not be emitted */
uint64_t npu_vec_cycles(const loom_hwcfg *cfg, const loom_vec_params *p, const vlayer *V, const loom_vec_plan *pl,
			int first)
{
	uint64_t at[5], a = 0x10000, sz[5] = {pl->in_bytes, pl->in2_bytes, pl->const_bytes, pl->out_bytes, 64};
	for (int i = 0; i < 5; i++) {
		at[i] = a + (i == 0 ? p->in_align % 64 / 4 * 4 : i == 3 ? p->out_align % 64 / 4 * 4 : 0);
		a = (at[i] + sz[i] + 4095) / 4096 * 4096;
	}
	if (a > 0xffffffffull)
		return 0;
	loom_vec_layout lay = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[2], (uint32_t)at[3], (uint32_t)at[4], 0};
	loom_prog pr;
	loom_prog_init(&pr);
	char err[256];
	loom_vec_plan c = *pl;
	uint64_t cyc = npu_vec_emit(cfg, p, V, &c, &lay, &pr, err, sizeof err) ? 0
										: loom_prog_layer_cycles(cfg, pr.insn, pr.n, !first);
	loom_prog_free(&pr);
	return cyc;
}

/* c into the finalists fin[0..*n), kept in order of estimate (then fewer steps) */
static void vfinalist(loom_vec_plan *fin, int *n, const loom_vec_plan *c)
{
	int i = *n;
	while (i > 0 && (fin[i - 1].est_cycles > c->est_cycles ||
			 (fin[i - 1].est_cycles == c->est_cycles && fin[i - 1].nsteps > c->nsteps)))
		i--;
	if (i >= NPU_FINALISTS)
		return;
	int last = *n < NPU_FINALISTS ? *n : NPU_FINALISTS - 1;
	for (int j = last; j > i; j--)
		fin[j] = fin[j - 1];
	fin[i] = *c;
	if (*n < NPU_FINALISTS)
		(*n)++;
}

int npu_vec_flat(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_params *f)
{
	uint32_t R = cfg->array_rows, st = (p->c + 3) / 4 * 4;
	if (!p->flat || ((p->kind != LOOM_VEC_ELTWISE || p->bcast != LOOM_BCAST_NONE) && p->kind != LOOM_VEC_LUT))
		return -1;
	uint32_t in = p->in_stride ? p->in_stride : st, out = p->out_stride ? p->out_stride : st;
	uint32_t in2 = p->in2_stride ? p->in2_stride : st;
	if (in != st || out != st || (p->kind == LOOM_VEC_ELTWISE && in2 != st) || p->in_align || p->out_align)
		return -1;
	uint64_t lines = (uint64_t)p->h * p->w * st;
	if (!R || lines % R)
		return -1;
	lines /= R;
	uint32_t w = lines < 4095 ? (uint32_t)lines : 4095;
	while (w > 1 && lines % w)
		w--;
	if (!w || lines / w > 65535)
		return -1;
	*f = *p;
	f->flat = 0;
	f->h = (uint32_t)(lines / w), f->w = w, f->c = R;
	f->in_stride = f->out_stride = R;
	f->in2_stride = p->kind == LOOM_VEC_ELTWISE ? R : 0;
	return 0;
}

int npu_vec_finalists(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, loom_vec_plan *fin, int *n,
		      char *err, size_t len)
{
	if (npu_vlayer_check(cfg, p, V, err, len))
		return -1;
	const loom_vec_hints *h = p->hints;
	loom_vec_hints none;
	memset(&none, 0, sizeof none);
	if (!h)
		h = &none;
	enum { CAP = 512 };
	uint32_t *ths = malloc(3 * CAP * sizeof *ths);
	if (!ths)
		return npu_fail(err, len, "out of memory");
	uint32_t *tws = ths + CAP, *kcs = ths + 2 * CAP;
	int nth = npu_distinct_sizes(V->y.out, 4095, umin(umin(h->th, V->y.out), 4095), ths, CAP);
	int ntw = npu_distinct_sizes(V->x.out, 4095, umin(umin(h->tw, V->x.out), 4095), tws, CAP);
	int nkc = npu_distinct_sizes(V->ncb, 255, umin(umin(h->kc, V->ncb), 255), kcs, CAP);
	int can_inplace = V->kind == LOOM_VEC_ELTWISE || V->kind == LOOM_VEC_LUT;
	/* the best rated overall, and the best of each buffer scheme (two
	 * buffers, in place, one buffer: the closed form is least sure there) */
	loom_vec_plan c;
	int nfin = 0, have[3] = {0, 0, 0};
	loom_vec_plan mode[3];
	for (int nbuf = 2; nbuf >= 1; nbuf--) {
		if (h->nbuf && nbuf != h->nbuf)
			continue;
		for (int ip = 0; ip <= 1; ip++) {
			if (ip && !can_inplace)
				continue;
			if (h->inplace && ip != h->inplace - 1)
				continue;
			for (int a = 0; a < nth; a++)
				for (int b = 0; b < ntw; b++)
					for (int k = 0; k < nkc; k++) {
						if (!npu_tiles_load(&V->y, ths[a]) || !npu_tiles_load(&V->x, tws[b]))
							continue;
						memset(&c, 0, sizeof c);
						if (vec_try(cfg, V, ths[a], tws[b], kcs[k], nbuf, ip, &c))
							continue;
						vfinalist(fin, &nfin, &c);
						int md = nbuf == 1 ? 2 : ip;
						if (!have[md] || c.est_cycles < mode[md].est_cycles) {
							mode[md] = c;
							have[md] = 1;
						}
					}
		}
	}
	free(ths);
	if (!nfin)
		return npu_fail(err, len, "%s %ux%ux%u (window %ux%u): no tiling fits configuration %s (sp %u lines)",
			    npu_vec_names[p->kind], p->h, p->w, p->c, V->y.k, V->x.k, cfg->name, cfg->sp_lines);
	for (int md = 0; md < 3; md++) {
		int dup = 0;
		for (int i = 0; i < nfin; i++)
			dup |= have[md] && !memcmp(&fin[i], &mode[md], sizeof mode[md]);
		if (have[md] && !dup)
			fin[nfin++] = mode[md];
	}
	for (int i = 0; i < nfin; i++)
		vplan_finish(p, V, &fin[i]);
	*n = nfin;
	return 0;
}

/* est_first of the chosen tiling pl of p (or of its view): its program
 * timed from the job's START (the rated plan: its rating) */
static uint64_t vec_first(const loom_hwcfg *cfg, const loom_vec_params *p, const vlayer *V, const loom_vec_plan *pl)
{
	if (p->hints && p->hints->rated)
		return pl->est_cycles;
	uint64_t first = npu_vec_cycles(cfg, p, V, pl, 1);
	return first ? first : pl->est_cycles;
}

/* the best tiling of one view of a layer: the finalists' programs timed,
 * npu_choose's pick, its cycles the estimate (none timed, or rated: the
 * best rated, fin[0]); with first, est_first too (else 0) */
static int vec_plan_one(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, int first, loom_vec_plan *plan,
			char *err, size_t len)
{
	loom_vec_plan fin[NPU_VEC_FINALISTS];
	uint64_t cyc[NPU_VEC_FINALISTS], by[NPU_VEC_FINALISTS];
	int nfin;
	if (npu_vec_finalists(cfg, p, V, fin, &nfin, err, len))
		return -1;
	if (p->hints && p->hints->rated) {
		fin[0].est_first = fin[0].est_cycles;
		*plan = fin[0];
		return 0;
	}
	for (int i = 0; i < nfin; i++) {
		cyc[i] = npu_vec_cycles(cfg, p, V, &fin[i], 0);
		by[i] = fin[i].dram_rd_est + fin[i].dram_wr_est;
	}
	int best = npu_choose(cyc, by, nfin);
	if (best >= 0)
		fin[best].est_cycles = cyc[best];
	else
		best = 0;
	if (first)
		fin[best].est_first = vec_first(cfg, p, V, &fin[best]);
	*plan = fin[best];
	return 0;
}

int npu_vec_prefer_flat(const loom_vec_plan *pl, const loom_vec_plan *pf)
{
	uint64_t cyc[2] = {pl->est_cycles, pf->est_cycles};
	uint64_t by[2] = {pl->dram_rd_est + pl->dram_wr_est, pf->dram_rd_est + pf->dram_wr_est};
	return npu_choose(cyc, by, 2) == 1;
}

/* the best tiling of p, and of its flat view when p asks for it */
int npu_vec_plan(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, int first, loom_vec_plan *plan,
		 char *err, size_t len)
{
	if (vec_plan_one(cfg, p, V, first, plan, err, len))
		return -1;
	loom_vec_params f;
	vlayer Vf;
	loom_vec_plan pf;
	char e2[8];
	if (!npu_vec_flat(cfg, p, &f) && !vec_plan_one(cfg, &f, &Vf, first, &pf, e2, sizeof e2) &&
	    npu_vec_prefer_flat(plan, &pf)) {
		*V = Vf;
		*plan = pf;
		plan->flat = 1;
	}
	return 0;
}

int loom_vec_plan_make(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan, char *err,
		       size_t errlen)
{
	vlayer V;
	return npu_vec_plan(cfg, p, &V, 1, plan, err, errlen);
}

uint64_t loom_vec_plan_first(const loom_hwcfg *cfg, const loom_vec_params *p, const loom_vec_plan *plan)
{
	vlayer V;
	loom_vec_params f;
	char err[256];
	const loom_vec_params *q = p;
	if (plan->flat) { /* the flat view's plan */
		if (npu_vec_flat(cfg, p, &f))
			return plan->est_cycles;
		q = &f;
	}
	if (npu_vlayer_check(cfg, q, &V, err, sizeof err))
		return plan->est_cycles;
	return vec_first(cfg, q, &V, plan);
}

uint64_t loom_vec_plan_sp_lines(const loom_vec_plan *pl)
{
	return (uint64_t)(pl->in_lines + pl->out_lines) * (uint32_t)pl->nbuf + pl->const_lines;
}
