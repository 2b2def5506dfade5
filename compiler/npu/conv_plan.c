/* conv_plan.c - the tile planner of CONV and GEMM layers
 * (loom_conv_plan_make): checks a layer against the configuration and picks
 * its tiling.
 *
 * It tries every tiling (distinct tile sizes, chunk sizes, blocks
 * per pass, weights resident or streamed) that fits SP, ACC and the field
 * widths and rates it with the closed form of the timing model
 * (common/timing.c, loom_est_conv; streamed weights count 1% more, as they
 * re-read every weight once per tile). The NPU_FINALISTS best rated are
 * emitted at 4 KiB-aligned addresses and their programs timed by the
 * timing model itself (common/tsim.h, as the RTL runs them): the fastest
 * is the plan, its cycles the plan's estimate. */
#include "compiler/npu/npu_internal.h"
#include "common/timing.h"

#include <math.h>
#include <stdlib.h>

int npu_layer_check(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, char *err, size_t len)
{
	memset(L, 0, sizeof *L);
	if (!p->h || !p->w || !p->cin || !p->cout)
		return npu_fail(err, len, "conv: h, w, cin and cout must be at least 1");
	if (p->kh < 1 || p->kh > 15 || p->kw < 1 || p->kw > 15)
		return npu_fail(err, len, "conv: kernel %ux%u outside 1..15", p->kh, p->kw);
	if (p->sh < 1 || p->sh > 15 || p->sw < 1 || p->sw > 15)
		return npu_fail(err, len, "conv: stride %ux%u outside 1..15", p->sh, p->sw);
	if (p->dh < 1 || p->dh > 15 || p->dw < 1 || p->dw > 15)
		return npu_fail(err, len, "conv: dilation %ux%u outside 1..15", p->dh, p->dw);
	L->R = cfg->array_rows;
	L->C = cfg->array_cols;
	L->raw = p->raw != 0;
	L->y = (dimg){p->h, 0, p->kh, p->sh, p->dh, p->pad_top, p->pad_bottom, (p->kh - 1) * p->dh + 1};
	L->x = (dimg){p->w, 0, p->kw, p->sw, p->dw, p->pad_left, p->pad_right, (p->kw - 1) * p->dw + 1};
	dimg *d[2] = {&L->y, &L->x};
	for (int i = 0; i < 2; i++) {
		if (d[i]->plo >= d[i]->ek || d[i]->phi >= d[i]->ek)
			return npu_fail(err, len, "conv: padding %u/%u must be smaller than the dilated kernel extent %u",
				    d[i]->plo, d[i]->phi, d[i]->ek);
		if (d[i]->in > 65535)
			return npu_fail(err, len, "conv: input size %u too large", d[i]->in);
		uint64_t span = (uint64_t)d[i]->in + d[i]->plo + d[i]->phi;
		if (span < d[i]->ek)
			return npu_fail(err, len, "conv: the padded input (%llu) is smaller than the kernel extent %u",
				    (unsigned long long)span, d[i]->ek);
		d[i]->out = (uint32_t)((span - d[i]->ek) / d[i]->s + 1);
	}
	L->cin = p->cin;
	L->cout = p->cout;
	L->kk = p->kh * p->kw;
	L->ncb = cdiv(p->cin, L->R);
	L->nob = cdiv(p->cout, L->C);
	L->in_stride = p->in_stride ? p->in_stride : (p->cin + 3) / 4 * 4;
	if (L->in_stride % 4 || L->in_stride < p->cin)
		return npu_fail(err, len, "conv: in_stride %u must be a multiple of 4 and >= cin %u", L->in_stride, p->cin);
	uint32_t omin = L->raw ? 4 * p->cout : (p->cout + 3) / 4 * 4;
	L->out_stride = p->out_stride ? p->out_stride : omin;
	if (L->out_stride % 4 || L->out_stride < omin)
		return npu_fail(err, len, "conv: out_stride %u must be a multiple of 4 and >= %u", L->out_stride, omin);
	if (!L->raw && p->clip_lo > p->clip_hi)
		return npu_fail(err, len, "conv: clip_lo %d > clip_hi %d", p->clip_lo, p->clip_hi);
	uint64_t inb = (uint64_t)p->h * p->w * L->in_stride, outb = (uint64_t)L->y.out * L->x.out * L->out_stride;
	uint64_t wb = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	if (inb > cfg->dram_bytes || outb > cfg->dram_bytes || wb > cfg->dram_bytes)
		return npu_fail(err, len, "conv: tensors larger than DRAM");
	return 0;
}

/* ------------------------------------------------------------------ */
/* planning */

/* Tries one candidate; 0 and *pl filled (with its cost) if it fits. */
static int try_cand(const loom_hwcfg *cfg, const layer *L, uint32_t g, uint32_t kc, uint32_t kyc, uint32_t th,
		    uint32_t tw, int wchunk, int force_barrier, loom_conv_plan *pl)
{
	const uint32_t C = L->C, KK = L->kk, KW = L->x.k;
	if (kc > 255 || kc > L->ncb || g > L->nob || th > L->y.out || tw > L->x.out || kyc > L->y.k)
		return -1;
	uint32_t nk = cdiv(L->ncb, kc), npass = cdiv(L->nob, g), nky = cdiv(L->y.k, kyc);
	/* resident weights are laid out [cb][ky][kx][c]: a MATMUL over a part
	 * of the kernel rows can only use them one channel block at a time */
	if (nky > 1 && !wchunk && kc != 1)
		return -1;
	uint32_t ih = dim_tin(&L->y, th), iw = dim_tin(&L->x, tw);
	if (ih > 4095 || iw > 4095)
		return -1;
	/* a MATMUL over kernel rows ky0.. starts ky0*dh input rows into the
	 * buffer and spans a whole buffer from there: keep that slack free */
	uint64_t slack = nky > 1 ? (uint64_t)(L->y.k - 1) * L->y.d * iw : 0;
	uint64_t al = (uint64_t)kc * ih * iw + slack;
	uint64_t wl = wchunk ? (uint64_t)g * kc * kyc * KW * C : (uint64_t)g * L->ncb * KK * C;
	uint64_t P = (uint64_t)th * tw, A = cfg->acc_lines;
	uint64_t need = nk * nky > 1 ? g : 1;
	uint64_t plines = L->raw ? 0 : 3ull * L->nob;
	int params_all = 1;
	if (plines + need * P > A) {
		params_all = 0;
		plines = L->raw ? 0 : 3ull * g;
		if (plines + need * P > A)
			return -1;
	}
	uint64_t nslots = (A - plines) / P;
	int chainable = params_all && !force_barrier;
	/* SP arrangement: weight region(s) from line 0, then the input buffers */
	uint64_t BL = cfg->sp_bank_lines, B = cfg->sp_banks, SL = cfg->sp_lines;
	int found = 0;
	uint32_t nwreg = 1;
	int nopts = 0;
	uint32_t wopts[2];
	if (wchunk)
		wopts[nopts++] = 2;
	else {
		if (npass > 1 && chainable)
			wopts[nopts++] = 2;
		wopts[nopts++] = 1;
	}
	for (int o = 0; o < nopts && !found; o++) {
		nwreg = wopts[o];
		uint64_t wt = nwreg * wl;
		uint64_t bw = (wt + BL - 1) / BL, ba = (al + BL - 1) / BL, bwa = (wt + al + BL - 1) / BL;
		if (bw + 2 * ba <= B) {
			/* weights, buffer 0, buffer 1 in disjoint banks */
			pl->act_sp[0] = (uint32_t)(bw * BL);
			pl->act_sp[1] = (uint32_t)((bw + ba) * BL);
			pl->banks = 3;
			found = 1;
		} else if (bwa + ba <= B) {
			/* buffer 0 shares the weights' banks, buffer 1 has its own */
			pl->act_sp[0] = (uint32_t)wt;
			pl->act_sp[1] = (uint32_t)(bwa * BL);
			pl->banks = 2;
			found = 1;
		} else if (bw + (2 * al + BL - 1) / BL <= B) {
			/* the two buffers share banks */
			pl->act_sp[0] = (uint32_t)(bw * BL);
			pl->act_sp[1] = (uint32_t)(bw * BL + al);
			pl->banks = 1;
			found = 1;
		} else if (wt + 2 * al <= SL) {
			pl->act_sp[0] = (uint32_t)wt;
			pl->act_sp[1] = (uint32_t)(wt + al);
			pl->banks = 0;
			found = 1;
		}
	}
	if (!found)
		return -1;
	pl->nwreg = nwreg;
	pl->wgt_sp[0] = 0;
	pl->wgt_sp[1] = nwreg == 2 ? (uint32_t)wl : 0;
	pl->wgt_lines = (uint32_t)wl;
	pl->act_lines = (uint32_t)al;
	pl->chained = npass == 1 || (chainable && (wchunk || nwreg == 2));
	pl->params_all = params_all;
	pl->th = th;
	pl->tw = tw;
	pl->ntiles = cdiv(L->y.out, th) * cdiv(L->x.out, tw);
	pl->kc = kc;
	pl->nk = nk;
	pl->kyc = kyc;
	pl->nky = nky;
	pl->g = g;
	pl->npass = npass;
	pl->wchunk = wchunk;
	pl->nslots = (uint32_t)(nslots > 65535 ? 65535 : nslots);
	pl->param_lines = (uint32_t)plines;
	pl->acc_slot0 = (uint32_t)plines;
	pl->slot_lines = (uint32_t)P;

	/* cost estimate (cycles): the timing model's (common/timing.h) */
	loom_timing tm;
	loom_timing_init(&tm, cfg, 0, 0);
	loom_conv_est e = {
		.oh = L->y.out, .ow = L->x.out, .ih = L->y.in, .iw = L->x.in,
		.ncb = L->ncb, .nob = L->nob, .kk = KK, .raw = L->raw,
		.tile_ih = ih, .tile_iw = iw, .ntiles = pl->ntiles, .nk = nk, .nky = nky, .npass = npass,
		.nslots = pl->nslots, .banks = pl->banks, .wchunk = wchunk, .chained = pl->chained,
		.th = th, .tw = tw, .cin = L->cin, .cout = L->cout, .in_stride = L->in_stride,
		.kh = L->y.k, .kw = L->x.k, .sh = L->y.s, .sw = L->x.s,
	};
	double total = loom_est_conv(&tm, &e);
	pl->est_cycles = (uint64_t)total;
	return 0;
}

/* the sizes and counts of a chosen tiling */
static void plan_finish(const layer *L, loom_conv_plan *pl)
{
	pl->oh = L->y.out;
	pl->ow = L->x.out;
	pl->ncb = L->ncb;
	pl->nob = L->nob;
	pl->in_stride = L->in_stride;
	pl->out_stride = L->out_stride;
	pl->in_bytes = (uint64_t)L->y.in * L->x.in * L->in_stride;
	pl->out_bytes = (uint64_t)pl->oh * pl->ow * L->out_stride;
	pl->wgt_bytes = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	pl->param_bytes = L->raw ? 0 : (uint64_t)L->nob * 3 * L->C * 4;
	pl->macs = (uint64_t)pl->oh * pl->ow * L->cout * L->cin * L->kk;
	pl->macs_issued = (uint64_t)pl->oh * pl->ow * L->ncb * L->kk * L->nob * L->R * L->C;
	pl->insns = 0;
}

/* the cycles of pl's program (at 4 KiB-aligned addresses) by the timing
 * model, MARK to MARK; 0 if it can not be emitted */
static uint64_t plan_cycles(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *L, loom_conv_plan *pl)
{
	uint64_t at[5], a = 0x10000, sz[5] = {pl->in_bytes, pl->wgt_bytes, pl->param_bytes, pl->out_bytes, 64};
	for (int i = 0; i < 5; i++) {
		at[i] = a;
		a = (a + sz[i] + 4095) / 4096 * 4096;
	}
	if (a > 0xffffffffull)
		return 0;
	loom_dram_layout lay = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[2], (uint32_t)at[3], (uint32_t)at[4], 0};
	loom_prog pr;
	loom_prog_init(&pr);
	char err[256];
	loom_conv_plan c = *pl;
	uint64_t cyc = npu_conv_emit(cfg, p, L, &c, &lay, &pr, err, sizeof err) ? 0
										: loom_prog_layer_cycles(cfg, pr.insn, pr.n, 1);
	loom_prog_free(&pr);
	return cyc;
}

/* c into the finalists fin[0..*n), kept in order of key (then fewer steps) */
static void finalist(loom_conv_plan *fin, double *key, int *n, const loom_conv_plan *c, double k)
{
	uint64_t sc = (uint64_t)c->ntiles * c->nk * c->nky * c->npass;
	int i = *n;
	while (i > 0) {
		const loom_conv_plan *b = &fin[i - 1];
		uint64_t sb = (uint64_t)b->ntiles * b->nk * b->nky * b->npass;
		if (key[i - 1] < k || (key[i - 1] == k && sb <= sc))
			break;
		i--;
	}
	if (i >= NPU_FINALISTS)
		return;
	int last = *n < NPU_FINALISTS ? *n : NPU_FINALISTS - 1;
	for (int j = last; j > i; j--) {
		fin[j] = fin[j - 1];
		key[j] = key[j - 1];
	}
	fin[i] = *c;
	key[i] = k;
	if (*n < NPU_FINALISTS)
		(*n)++;
}

int npu_conv_plan(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, loom_conv_plan *plan, char *err,
		      size_t len)
{
	if (npu_layer_check(cfg, p, L, err, len))
		return -1;
	const loom_conv_hints *h = p->hints;
	loom_conv_hints none;
	memset(&none, 0, sizeof none);
	if (!h)
		h = &none;
	enum { CAP = 512 };
	uint32_t *gs = malloc(4 * CAP * sizeof *gs);
	if (!gs)
		return npu_fail(err, len, "out of memory");
	uint32_t *kcs = gs + CAP, *ths = gs + 2 * CAP, *tws = gs + 3 * CAP;
	/* hints are clamped to the layer */
	int ng = npu_distinct_sizes(L->nob, 0xffffffffu, umin(h->g, L->nob), gs, CAP);
	int nkc = npu_distinct_sizes(L->ncb, 255, umin(umin(h->kc, L->ncb), 255), kcs, CAP);
	int nth = npu_distinct_sizes(L->y.out, 4095, umin(umin(h->th, L->y.out), 4095), ths, CAP);
	int ntw = npu_distinct_sizes(L->x.out, 4095, umin(umin(h->tw, L->x.out), 4095), tws, CAP);
	/* the best rated of each weight mode (resident, streamed) */
	loom_conv_plan fm[2][NPU_FINALISTS], c;
	double km[2][NPU_FINALISTS];
	int nm[2] = {0, 0};
	uint32_t kyh = umin(h->kyc, L->y.k);
	/* all kernel rows per MATMUL; chunks of kernel rows only when that fails */
	for (uint32_t kyc = kyh ? kyh : L->y.k; kyc >= 1 && !nm[0] && !nm[1]; kyc = kyh ? 0 : kyc - 1) {
		if (!kyh && kyc > 1 && cdiv(L->y.k, kyc - 1) == cdiv(L->y.k, kyc))
			continue; /* the same number of chunks with smaller ones */
		for (int wc = 0; wc < 2; wc++) {
			if (h->wchunk && wc != h->wchunk - 1)
				continue;
			for (int a = 0; a < ng; a++)
				for (int b = 0; b < nkc; b++)
					for (int t = 0; t < nth; t++)
						for (int u = 0; u < ntw; u++) {
							memset(&c, 0, sizeof c);
							if (try_cand(cfg, L, gs[a], kcs[b], kyc, ths[t], tws[u], wc,
								     h->barrier, &c))
								continue;
							/* streamed weights re-read every weight once
							 * per tile: only when clearly (1%) faster */
							finalist(fm[wc], km[wc], &nm[wc], &c,
								 (double)c.est_cycles * (wc ? 1.01 : 1));
						}
		}
	}
	free(gs);
	/* the finalists: the best rated overall, and the best of the other
	 * weight mode (the closed form is least sure between the two) */
	loom_conv_plan fin[NPU_FINALISTS];
	int nfin = 0, i0 = 0, i1 = 0;
	while (nfin < NPU_FINALISTS && (i0 < nm[0] || i1 < nm[1])) {
		int m1 = i0 >= nm[0] || (i1 < nm[1] && km[1][i1] < km[0][i0]);
		if (nfin == NPU_FINALISTS - 1 && nm[0] && nm[1] && !(m1 ? i0 : i1))
			m1 = !m1; /* the last place for the other mode's best */
		fin[nfin++] = m1 ? fm[1][i1++] : fm[0][i0++];
	}
	if (!nfin)
		return npu_fail(err, len,
			    "conv %ux%ux%u -> %u (k %ux%u): no tiling fits configuration %s (sp %u lines, acc %u lines)",
			    p->h, p->w, p->cin, p->cout, p->kh, p->kw, cfg->name, cfg->sp_lines, cfg->acc_lines);
	/* the finalists' programs timed: the fastest (the closed form's order
	 * breaks ties); its cycles are the estimate */
	int best = 0;
	uint64_t bc = 0;
	for (int i = 0; i < nfin; i++) {
		plan_finish(L, &fin[i]);
		uint64_t cyc = plan_cycles(cfg, p, L, &fin[i]);
		if (cyc && (!bc || cyc < bc)) {
			bc = cyc;
			best = i;
		}
	}
	if (bc)
		fin[best].est_cycles = bc;
	*plan = fin[best];
	return 0;
}

void loom_conv_init(loom_conv_params *p)
{
	memset(p, 0, sizeof *p);
	p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1;
	p->clip_lo = -128;
	p->clip_hi = 127;
}

int loom_conv_plan_make(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan, char *err,
			size_t errlen)
{
	layer L;
	return npu_conv_plan(cfg, p, &L, plan, err, errlen);
}
