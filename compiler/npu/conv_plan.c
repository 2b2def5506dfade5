/* conv_plan.c - the tile planner of CONV and GEMM layers
 * (loom_conv_plan_make): checks a layer against the configuration and picks
 * its tiling.
 *
 * It tries every tiling (distinct tile sizes, chunk sizes, blocks
 * per pass, weights resident or streamed) that fits SP, ACC and the field
 * widths and rates it with the closed form of the timing model
 * (common/timing.c, loom_est_conv; streamed weights count 1% more, as they
 * re-read every weight once per tile). The NPU_FINALISTS best rated, and
 * the tiling that moves the fewest DRAM bytes among those rated within
 * NPU_LEAN_RATING_TOL of the best, are emitted at 4 KiB-aligned addresses
 * and their programs timed by the timing model itself (common/tsim.h, as
 * the RTL runs them): npu_choose's rule (the fewest DRAM bytes within
 * NPU_CYCLE_TOL_PERMIL of the fastest) picks the plan, its cycles the
 * plan's estimate. loom_conv_plan_make_n runs one search for many
 * configurations of one array size. */
#include "compiler/npu/npu_internal.h"
#include "common/timing.h"

#include <math.h>
#include <stdlib.h>

/* the first packed position of the last row that reaches past the row
 * (nv: none) */
static uint32_t xover_of(const loom_conv_params *p, uint32_t T, uint32_t nv)
{
	if (p->w < T)
		return 0;
	uint32_t v = (p->w - T) / p->sw + 1;
	return v < nv ? v : nv;
}

/* the pixels per line L (checked, unpacked) can pack, 0: none (loom_conv_xpack) */
static uint32_t xpack_of(const layer *L, const loom_conv_params *p)
{
	if (p->pad_left || p->pad_right || p->dw != 1 || p->kw < 2 || L->ncb != 1 || L->R % L->in_stride)
		return 0;
	uint32_t T = L->R / L->in_stride;
	if (T < 2 || T % p->sw || T / p->sw > 15)
		return 0;
	uint32_t G = cdiv(p->kw, T), nv = L->x.out + (G - 1) * (T / p->sw);
	if (nv > 65535 || (xover_of(p, T, nv) < nv && (p->pad_top || p->pad_bottom)))
		return 0;
	return T;
}

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
	L->res = p->res != 0;
	L->ppb = L->res ? LOOM_RESADD_PARAM_LINES : 3;
	if (L->res && (L->raw || L->C > L->R))
		return npu_fail(err, len, "conv: a fused residual add needs an int8 output and array_cols <= "
			    "array_rows (a STORE row must fit an SP line)");
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
	L->xstep = L->in_stride;
	L->ystep = p->w * L->in_stride;
	L->in_bytes = inb;
	L->kk_macs = L->kk;
	uint32_t T = p->xpack ? xpack_of(L, p) : 0;
	if (T) {
		/* position v: pixels sw*v .. sw*v+T-1; output ox reads positions
		 * ox + g*T/sw, g < G */
		uint32_t G = cdiv(p->kw, T), d = T / p->sw, nv = L->x.out + (G - 1) * d;
		L->xpack = T;
		L->pstride = L->in_stride;
		L->xover = xover_of(p, T, nv);
		L->xstep = p->sw * L->in_stride;
		L->x = (dimg){nv, L->x.out, G, 1, d, 0, 0, (G - 1) * d + 1};
		L->in_stride = L->R;
		L->kk = p->kh * G;
	}
	return 0;
}

uint32_t loom_conv_xpack(const loom_hwcfg *cfg, const loom_conv_params *p)
{
	loom_conv_params q = *p;
	q.xpack = 1;
	layer L;
	char err[8];
	return npu_layer_check(cfg, &q, &L, err, sizeof err) ? 0 : L.xpack;
}

/* ------------------------------------------------------------------ */
/* planning */

/* A candidate tiling's geometry: what does not depend on the scratchpad,
 * the accumulator or the DRAM (only on the layer and the array size). */
typedef struct cgeo {
	uint32_t g, kc, kyc, th, tw;
	int wchunk;
	uint32_t nk, npass, nky, ih, iw, ntiles;
	uint64_t al, wl, P, need;
} cgeo;

/* the candidate sizes of a layer and what each implies on its own (the
 * search's loops take them from here rather than dividing again) */
typedef struct csizes {
	int ng, nkc, nth, ntw;
	uint32_t *gs, *kcs, *ths, *tws;
	uint32_t *npass, *nk, *ih, *nty, *iw, *ntx;
} csizes;

/* 0 and *c, or -1 when the candidate breaks a field width or the layout */
static int cand_geo(const layer *L, const csizes *z, int a, int b, uint32_t kyc, uint32_t nky, int t, int u, int wchunk,
		    cgeo *c)
{
	const uint32_t C = L->C, KK = L->kk, KW = L->x.k;
	uint32_t g = z->gs[a], kc = z->kcs[b], th = z->ths[t], tw = z->tws[u];
	if (kc > 255 || kc > L->ncb || g > L->nob || th > L->y.out || tw > L->x.out || kyc > L->y.k)
		return -1;
	uint32_t nk = z->nk[b], npass = z->npass[a];
	/* resident weights are laid out [cb][ky][kx][c]: a MATMUL over a part
	 * of the kernel rows can only use them one channel block at a time */
	if (nky > 1 && !wchunk && kc != 1)
		return -1;
	uint32_t ih = z->ih[t], iw = z->iw[u];
	if (ih > 4095 || iw > 4095)
		return -1;
	/* a MATMUL over kernel rows ky0.. starts ky0*dh input rows into the
	 * buffer and spans a whole buffer from there: keep that slack free */
	uint64_t slack = nky > 1 ? (uint64_t)(L->y.k - 1) * L->y.d * iw : 0;
	c->g = g, c->kc = kc, c->kyc = kyc, c->th = th, c->tw = tw, c->wchunk = wchunk;
	c->nk = nk, c->npass = npass, c->nky = nky, c->ih = ih, c->iw = iw;
	c->ntiles = z->nty[t] * z->ntx[u];
	c->al = (uint64_t)kc * ih * iw + slack;
	c->wl = wchunk ? (uint64_t)g * kc * kyc * KW * C : (uint64_t)g * L->ncb * KK * C;
	c->P = (uint64_t)th * tw;
	c->need = nk * nky > 1 ? g : 1;
	return 0;
}

/* what a candidate becomes on one configuration: its SP arrangement and
 * ACC slots */
typedef struct cfit {
	uint32_t act_sp[2], wgt_sp1, nwreg, plines, nslots, res_sp, nres;
	int banks, params_all, chained;
} cfit;

/* Candidate c on cfg: 0 and *f, or -1 when it does not fit SP and ACC. */
static int cand_fit(const loom_hwcfg *cfg, unsigned lg, const layer *L, const cgeo *c, int force_barrier, cfit *f)
{
	uint64_t A = cfg->acc_lines, P = c->P, need = c->need, al = c->al, wl = c->wl;
	uint64_t plines = L->raw ? 0 : (uint64_t)L->ppb * L->nob;
	int params_all = 1;
	if (plines + need * P > A) {
		params_all = 0;
		plines = L->raw ? 0 : (uint64_t)L->ppb * c->g;
		if (plines + need * P > A)
			return -1;
	}
	/* A <= 65536 lines and P < 2^24 (hwcfg.c, the 4095 field limits): a 32-bit division */
	uint64_t nslots = (uint32_t)(A - plines) / (uint32_t)P;
	int chainable = params_all && !force_barrier;
	/* SP arrangement: weight region(s) from line 0, then the input buffers;
	 * BL = 2^lg (a power of two, hwcfg.c): divisions by shifts */
	uint64_t BL = cfg->sp_bank_lines, B = cfg->sp_banks, SL = cfg->sp_lines;
	/* res: 3 + ceil(nslots / gmin) residual regions of g tiles at the top
	 * of SP (gmin: the fewest blocks of a pass), so a LOAD writing one
	 * comes after the STOREs that read it (conv_emit.c); the other regions
	 * in the banks below them */
	uint64_t gmin = L->nob - (uint64_t)(c->npass - 1) * c->g, nres = 0;
	if (L->res) {
		nres = 3 + ((nslots > 65535 ? 65535 : nslots) + gmin - 1) / gmin;
		if (nres * c->g * P > SL)
			return -1;
	}
	SL -= nres * c->g * P;
	B = SL >> lg;
	int found = 0;
	uint32_t nwreg = 1;
	int nopts = 0;
	uint32_t wopts[2];
	if (c->wchunk)
		wopts[nopts++] = 2;
	else {
		if (c->npass > 1 && chainable)
			wopts[nopts++] = 2;
		wopts[nopts++] = 1;
	}
	for (int o = 0; o < nopts && !found; o++) {
		nwreg = wopts[o];
		uint64_t wt = nwreg * wl;
		uint64_t bw = (wt + BL - 1) >> lg, ba = (al + BL - 1) >> lg, bwa = (wt + al + BL - 1) >> lg;
		uint64_t bw1 = (wl + BL - 1) >> lg;
		found = 1;
		f->wgt_sp1 = (uint32_t)wl;
		if (nwreg == 2 && 2 * bw1 + 2 * ba <= B) {
			/* each weight region, buffer 0, buffer 1 in banks of its
			 * own: the load writing one weight region never waits for
			 * the array's reads of the other */
			f->wgt_sp1 = (uint32_t)(bw1 * BL);
			f->act_sp[0] = (uint32_t)(2 * bw1 * BL);
			f->act_sp[1] = (uint32_t)((2 * bw1 + ba) * BL);
			f->banks = 4;
		} else if (bw + 2 * ba <= B) {
			/* weights, buffer 0, buffer 1 in disjoint banks */
			f->act_sp[0] = (uint32_t)(bw * BL);
			f->act_sp[1] = (uint32_t)((bw + ba) * BL);
			f->banks = 3;
		} else if (bwa + ba <= B) {
			/* buffer 0 shares the weights' banks, buffer 1 has its own */
			f->act_sp[0] = (uint32_t)wt;
			f->act_sp[1] = (uint32_t)(bwa * BL);
			f->banks = 2;
		} else if (bw + ((2 * al + BL - 1) >> lg) <= B) {
			/* the two buffers share banks */
			f->act_sp[0] = (uint32_t)(bw * BL);
			f->act_sp[1] = (uint32_t)(bw * BL + al);
			f->banks = 1;
		} else if (wt + 2 * al <= SL) {
			f->act_sp[0] = (uint32_t)wt;
			f->act_sp[1] = (uint32_t)(wt + al);
			f->banks = 0;
		} else {
			found = 0;
		}
	}
	if (!found)
		return -1;
	f->nwreg = nwreg;
	f->res_sp = (uint32_t)SL;
	f->nres = (uint32_t)nres;
	f->plines = (uint32_t)plines;
	f->nslots = (uint32_t)(nslots > 65535 ? 65535 : nslots);
	f->params_all = params_all;
	f->chained = c->npass == 1 || (chainable && (c->wchunk || nwreg == 2));
	return 0;
}

/* the plan of candidate c as fitted (f), but its cost */
static void cand_plan(const cgeo *c, const cfit *f, loom_conv_plan *pl)
{
	pl->act_sp[0] = f->act_sp[0];
	pl->act_sp[1] = f->act_sp[1];
	pl->banks = f->banks;
	pl->nwreg = f->nwreg;
	pl->wgt_sp[0] = 0;
	pl->wgt_sp[1] = f->nwreg == 2 ? f->wgt_sp1 : 0;
	pl->wgt_lines = (uint32_t)c->wl;
	pl->act_lines = (uint32_t)c->al;
	pl->chained = f->chained;
	pl->params_all = f->params_all;
	pl->th = c->th;
	pl->tw = c->tw;
	pl->ntiles = c->ntiles;
	pl->kc = c->kc;
	pl->nk = c->nk;
	pl->kyc = c->kyc;
	pl->nky = c->nky;
	pl->g = c->g;
	pl->npass = c->npass;
	pl->wchunk = c->wchunk;
	pl->nslots = f->nslots;
	pl->param_lines = f->plines;
	pl->res_sp = f->res_sp;
	pl->nres = f->nres;
	pl->acc_slot0 = f->plines;
	pl->slot_lines = (uint32_t)c->P;
}

enum { LEAN_CAP = 16 };

/* the search's state for one configuration */
typedef struct csearch {
	const loom_hwcfg *cfg;
	unsigned lg;              /* log2 of the scratchpad's lines per bank */
	loom_timing tm;
	int tm_same;              /* index of the first configuration with the same timing */
	/* the best rated of each weight mode (resident, streamed), in order */
	loom_conv_plan fin[2][NPU_FINALISTS];
	double key[2][NPU_FINALISTS];
	int nfin[2];
	int done;                 /* found a tiling at an earlier kernel-row chunk size */
	/* the lean candidates: the Pareto front of rating (key) and DRAM bytes
	 * among those rated within NPU_LEAN_RATING_TOL of the best rating */
	struct lean {
		loom_conv_plan plan;
		double key;       /* its rating */
		uint64_t bytes;   /* its DRAM bytes */
	} lean[LEAN_CAP];
	int nlean;
} csearch;

/* the best rating (key) of x's finalists so far, 0 when none */
static double best_key(const csearch *x)
{
	double b = x->nfin[0] ? x->key[0][0] : 0;
	if (x->nfin[1] && (!x->nfin[0] || x->key[1][0] < b))
		b = x->key[1][0];
	return b;
}

/* 1 when a candidate rated key (or more) moving by DRAM bytes is no lean
 * candidate: beyond the tolerance of the best rating, or dominated by one
 * on the front (rated no worse and moving no more bytes) */
static int lean_useless(const csearch *x, double key, uint64_t by)
{
	double b = best_key(x);
	if (b > 0 && key > b * (1 + NPU_LEAN_RATING_TOL))
		return 1;
	for (int i = 0; i < x->nlean; i++)
		if (x->lean[i].key <= key && x->lean[i].bytes <= by)
			return 1;
	return 0;
}

/* candidate c (fitted as f, rated key, by DRAM bytes) onto x's lean front:
 * the entries it dominates and those now beyond the tolerance leave; a full
 * front drops its entry of the most bytes (the best rated: a finalist) */
static void lean_add(csearch *x, const cgeo *c, const cfit *f, uint64_t est, double key, uint64_t by)
{
	if (lean_useless(x, key, by))
		return;
	double lim = best_key(x) * (1 + NPU_LEAN_RATING_TOL);
	int m = 0;
	for (int i = 0; i < x->nlean; i++) {
		if ((key <= x->lean[i].key && by <= x->lean[i].bytes) || x->lean[i].key > lim)
			continue;
		x->lean[m++] = x->lean[i];
	}
	if (m == LEAN_CAP) {
		int w = 0;
		for (int i = 1; i < m; i++)
			if (x->lean[i].bytes > x->lean[w].bytes)
				w = i;
		m--;
		memmove(&x->lean[w], &x->lean[w + 1], (size_t)(m - w) * sizeof x->lean[0]);
	}
	memset(&x->lean[m], 0, sizeof x->lean[m]);
	cand_plan(c, f, &x->lean[m].plan);
	x->lean[m].plan.est_cycles = est;
	x->lean[m].key = key;
	x->lean[m].bytes = by;
	x->nlean = m + 1;
}

/* candidate c (fitted as f, rated est, sc steps) into x's finalists of
 * its weight mode, kept in order of rating (then fewer steps) */
static void finalist(csearch *x, const cgeo *c, const cfit *f, uint64_t est, uint64_t sc)
{
	int wc = c->wchunk, n = x->nfin[wc], i = n;
	double k = (double)est * (wc ? 1.01 : 1);
	loom_conv_plan *fin = x->fin[wc];
	while (i > 0) {
		const loom_conv_plan *b = &fin[i - 1];
		uint64_t sb = (uint64_t)b->ntiles * b->nk * b->nky * b->npass;
		if (x->key[wc][i - 1] < k || (x->key[wc][i - 1] == k && sb <= sc))
			break;
		i--;
	}
	if (i >= NPU_FINALISTS)
		return;
	int last = n < NPU_FINALISTS ? n : NPU_FINALISTS - 1;
	for (int j = last; j > i; j--) {
		fin[j] = fin[j - 1];
		x->key[wc][j] = x->key[wc][j - 1];
	}
	memset(&fin[i], 0, sizeof fin[i]);
	cand_plan(c, f, &fin[i]);
	fin[i].est_cycles = est;
	x->key[wc][i] = k;
	if (n < NPU_FINALISTS)
		x->nfin[wc]++;
}

/* one evaluation of the timing model for the current candidate */
typedef struct ccost {
	int tm_same, banks, chained;
	uint32_t nslots;
	double cost;
} ccost;

/* candidate c for every configuration still searching. The timing model
 * sees the layer, the candidate, and of the configuration its timing and
 * the fit's banks, slots and chaining only (the cost inputs below): the
 * configurations that agree on those share one evaluation (dist[]). */
static void cand_all(const layer *L, const cgeo *c, int barrier, csearch *cs, int n, ccost *dist)
{
	loom_conv_est e = {
		.oh = L->y.out, .ow = L->x.out, .ih = L->y.in, .iw = L->x.in,
		.ncb = L->ncb, .nob = L->nob, .kk = L->kk, .raw = L->raw,
		.tile_ih = c->ih, .tile_iw = c->iw, .ntiles = c->ntiles, .nk = c->nk, .nky = c->nky, .npass = c->npass,
		.wchunk = c->wchunk, .th = c->th, .tw = c->tw, .cin = L->cin, .cout = L->cout,
		.in_stride = L->in_stride, .kh = L->y.k, .kw = L->x.k, .sh = L->y.s, .sw = L->x.s,
		.xpack = L->xpack != 0,
	};
	uint64_t sc = (uint64_t)c->ntiles * c->nk * c->nky * c->npass;
	int nd = 0;
	double wf = c->wchunk ? 1.01 : 1;
	/* the DRAM bytes it moves depend on the geometry alone */
	loom_conv_plan gp;
	memset(&gp, 0, sizeof gp);
	gp.kc = c->kc, gp.th = c->th, gp.tw = c->tw, gp.npass = c->npass, gp.nky = c->nky;
	gp.wchunk = c->wchunk, gp.ntiles = c->ntiles, gp.oh = L->y.out, gp.ow = L->x.out;
	uint64_t by = npu_conv_rd_bytes(L, &gp) + npu_conv_wr_bytes(L, &gp);
	for (int k = 0; k < n; k++) {
		csearch *x = &cs[k];
		cfit f;
		if (x->done)
			continue;
		/* no place among full finalists even at the rating's lower bound
		 * (margins for rounding and the rating's truncation) */
		if (x->nfin[c->wchunk] == NPU_FINALISTS) {
			double lo = (loom_est_conv_floor(&x->tm, &e) * (1 - 1e-9) - 1) * wf;
			if (lo > x->key[c->wchunk][NPU_FINALISTS - 1] * (1 + 1e-9) && lean_useless(x, lo * (1 - 1e-9), by))
				continue;
		}
		if (cand_fit(x->cfg, x->lg, L, c, barrier, &f))
			continue;
		int d = 0;
		while (d < nd && (dist[d].tm_same != x->tm_same || dist[d].nslots != f.nslots ||
				  dist[d].banks != f.banks || dist[d].chained != f.chained))
			d++;
		if (d == nd) {
			e.nslots = f.nslots, e.banks = f.banks, e.chained = f.chained;
			dist[nd++] = (ccost){x->tm_same, f.banks, f.chained, f.nslots, loom_est_conv(&x->tm, &e)};
		}
		uint64_t est = (uint64_t)dist[d].cost;
		/* streamed weights re-read every weight once per tile: only
		 * when clearly (1%) faster */
		finalist(x, c, &f, est, sc);
		lean_add(x, c, &f, est, (double)est * wf, by);
	}
}

/* the best tiling of each configuration (every one with L's array size):
 * plans[k] and rc[k] (0, or -1 with the message in err when none fits) */
static int conv_search(const loom_conv_params *p, const layer *L, csearch *cs, int n)
{
	for (int k = 0; k < n; k++)
		for (cs[k].lg = 0; (1ull << cs[k].lg) < cs[k].cfg->sp_bank_lines; cs[k].lg++)
			;
	const loom_conv_hints *h = p->hints;
	loom_conv_hints none;
	memset(&none, 0, sizeof none);
	if (!h)
		h = &none;
	enum { CAP = 512 };
	uint32_t *gs = malloc(10 * CAP * sizeof *gs);
	ccost *dist = malloc(((size_t)n + 1) * sizeof *dist);
	if (!gs || !dist) {
		free(gs);
		free(dist);
		return -1;
	}
	csizes z = {.gs = gs, .kcs = gs + CAP, .ths = gs + 2 * CAP, .tws = gs + 3 * CAP, .npass = gs + 4 * CAP,
		    .nk = gs + 5 * CAP, .ih = gs + 6 * CAP, .nty = gs + 7 * CAP, .iw = gs + 8 * CAP, .ntx = gs + 9 * CAP};
	/* hints are clamped to the layer */
	z.ng = npu_distinct_sizes(L->nob, 0xffffffffu, umin(h->g, L->nob), z.gs, CAP);
	z.nkc = npu_distinct_sizes(L->ncb, 255, umin(umin(h->kc, L->ncb), 255), z.kcs, CAP);
	z.nth = npu_distinct_sizes(L->y.out, 4095, umin(umin(h->th, L->y.out), 4095), z.ths, CAP);
	z.ntw = npu_distinct_sizes(L->x.out, 4095, umin(umin(h->tw, L->x.out), 4095), z.tws, CAP);
	for (int a = 0; a < z.ng; a++)
		z.npass[a] = cdiv(L->nob, z.gs[a]);
	for (int b = 0; b < z.nkc; b++)
		z.nk[b] = cdiv(L->ncb, z.kcs[b]);
	for (int t = 0; t < z.nth; t++)
		z.ih[t] = dim_tin(&L->y, z.ths[t]), z.nty[t] = cdiv(L->y.out, z.ths[t]);
	for (int u = 0; u < z.ntw; u++)
		z.iw[u] = dim_tin(&L->x, z.tws[u]), z.ntx[u] = cdiv(L->x.out, z.tws[u]);
	uint32_t kyh = umin(h->kyc, L->y.k);
	/* all kernel rows per MATMUL; chunks of kernel rows only when that fails */
	for (uint32_t kyc = kyh ? kyh : L->y.k; kyc >= 1; kyc = kyh ? 0 : kyc - 1) {
		int searching = 0;
		for (int k = 0; k < n; k++)
			searching |= !(cs[k].done = cs[k].nfin[0] || cs[k].nfin[1]);
		if (!searching)
			break;
		if (!kyh && kyc > 1 && cdiv(L->y.k, kyc - 1) == cdiv(L->y.k, kyc))
			continue; /* the same number of chunks with smaller ones */
		uint32_t nky = cdiv(L->y.k, kyc);
		for (int wc = 0; wc < 2; wc++) {
			if (h->wchunk && wc != h->wchunk - 1)
				continue;
			for (int a = 0; a < z.ng; a++)
				for (int b = 0; b < z.nkc; b++)
					for (int t = 0; t < z.nth; t++)
						for (int u = 0; u < z.ntw; u++) {
							cgeo c;
							if (!cand_geo(L, &z, a, b, kyc, nky, t, u, wc, &c))
								cand_all(L, &c, h->barrier, cs, n, dist);
						}
		}
	}
	free(gs);
	free(dist);
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
	pl->in_bytes = L->in_bytes;
	pl->out_bytes = (uint64_t)pl->oh * pl->ow * L->out_stride;
	pl->wgt_bytes = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	pl->param_bytes = L->raw ? 0 : (uint64_t)L->nob * L->ppb * L->C * 4;
	pl->macs = (uint64_t)pl->oh * pl->ow * L->cout * L->cin * L->kk_macs;
	pl->macs_issued = (uint64_t)pl->oh * pl->ow * L->ncb * L->kk * L->nob * L->R * L->C;
	pl->insns = 0;
	pl->dram_rd_est = npu_conv_rd_bytes(L, pl);
	pl->dram_wr_est = npu_conv_wr_bytes(L, pl);
}

/* the cycles of pl's program (at 4 KiB-aligned addresses) by the timing
 * model, MARK to MARK (first: from the job's START); 0 if it can not be
 * emitted */
uint64_t npu_conv_cycles(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *L, const loom_conv_plan *pl,
			 int first)
{
	uint64_t at[6], a = 0x10000, sz[6] = {pl->in_bytes, pl->wgt_bytes, pl->param_bytes, pl->out_bytes, 64,
						L->res ? pl->out_bytes : 0};
	for (int i = 0; i < 6; i++) {
		at[i] = a;
		a = (a + sz[i] + 4095) / 4096 * 4096;
	}
	if (a > 0xffffffffull)
		return 0;
	loom_dram_layout lay = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[2], (uint32_t)at[3], (uint32_t)at[4], 0,
				(uint32_t)at[5]};
	loom_prog pr;
	loom_prog_init(&pr);
	char err[256];
	loom_conv_plan c = *pl;
	uint64_t cyc = npu_conv_emit(cfg, p, L, &c, &lay, &pr, err, sizeof err) ? 0
										: loom_prog_layer_cycles(cfg, pr.insn, pr.n, !first);
	loom_prog_free(&pr);
	return cyc;
}

/* est_first of the chosen tiling pl: its program timed from the job's
 * START (the rated plan: its rating) */
static uint64_t conv_first(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *L, const loom_conv_plan *pl)
{
	if (p->hints && p->hints->rated)
		return pl->est_cycles;
	uint64_t first = npu_conv_cycles(cfg, p, L, pl, 1);
	return first ? first : pl->est_cycles;
}

/* the finalists of one configuration's search, finished: the best rated
 * overall, and the best of the other weight mode (where the closed form is
 * least sure); fin[0..*n), or -1 when no tiling fits */
static int conv_finalists(const loom_conv_params *p, const layer *L, const csearch *x, loom_conv_plan *fin, int *n,
			  char *err, size_t len)
{
	const int *nm = x->nfin;
	int nfin = 0, i0 = 0, i1 = 0;
	while (nfin < NPU_FINALISTS && (i0 < nm[0] || i1 < nm[1])) {
		int m1 = i0 >= nm[0] || (i1 < nm[1] && x->key[1][i1] < x->key[0][i0]);
		if (nfin == NPU_FINALISTS - 1 && nm[0] && nm[1] && !(m1 ? i0 : i1))
			m1 = !m1; /* the last place for the other mode's best */
		fin[nfin++] = m1 ? x->fin[1][i1++] : x->fin[0][i0++];
	}
	/* the leanest within the rating's tolerance (the fewer bytes, then the
	 * better rated, then the earlier), unless it is a finalist already */
	double lim = best_key(x) * (1 + NPU_LEAN_RATING_TOL);
	int ln = -1;
	for (int i = 0; i < x->nlean; i++)
		if (x->lean[i].key <= lim &&
		    (ln < 0 || x->lean[i].bytes < x->lean[ln].bytes ||
		     (x->lean[i].bytes == x->lean[ln].bytes && x->lean[i].key < x->lean[ln].key)))
			ln = i;
	int dup = ln < 0;
	for (int i = 0; i < nfin && !dup; i++)
		dup = !memcmp(&fin[i], &x->lean[ln].plan, sizeof fin[i]);
	if (!dup)
		fin[nfin++] = x->lean[ln].plan;
	if (!nfin)
		return npu_fail(err, len,
			    "conv %ux%ux%u -> %u (k %ux%u): no tiling fits configuration %s (sp %u lines, acc %u lines)",
			    p->h, p->w, p->cin, p->cout, p->kh, p->kw, x->cfg->name, x->cfg->sp_lines, x->cfg->acc_lines);
	for (int i = 0; i < nfin; i++)
		plan_finish(L, &fin[i]);
	*n = nfin;
	return 0;
}

int npu_choose(const uint64_t *cyc, const uint64_t *bytes, int n)
{
	int f = -1;
	for (int i = 0; i < n; i++)
		if (cyc[i] && (f < 0 || cyc[i] < cyc[f]))
			f = i;
	int best = f;
	for (int i = 0; f >= 0 && i < n; i++) {
		/* cycles < 2^53: no overflow */
		if (!cyc[i] || cyc[i] * 1000 > cyc[f] * (1000 + NPU_CYCLE_TOL_PERMIL))
			continue;
		if (bytes[i] < bytes[best] || (bytes[i] == bytes[best] && cyc[i] < cyc[best]))
			best = i;
	}
	return best;
}

/* the chosen tiling of one configuration's search, completed: the
 * finalists timed by the timing model; npu_choose's pick, its cycles the
 * estimate (none timed: the best rated, its rating); with first, est_first
 * too (else 0) */
static int conv_finish(const loom_conv_params *p, const layer *L, const csearch *x, int first, loom_conv_plan *plan,
		       char *err, size_t len)
{
	loom_conv_plan fin[NPU_CONV_FINALISTS];
	uint64_t cyc[NPU_CONV_FINALISTS], by[NPU_CONV_FINALISTS];
	int nfin;
	if (conv_finalists(p, L, x, fin, &nfin, err, len))
		return -1;
	if (p->hints && p->hints->rated) { /* the best rated, fin[0] */
		fin[0].est_first = fin[0].est_cycles;
		*plan = fin[0];
		return 0;
	}
	for (int i = 0; i < nfin; i++) {
		cyc[i] = npu_conv_cycles(x->cfg, p, L, &fin[i], 0);
		by[i] = fin[i].dram_rd_est + fin[i].dram_wr_est;
	}
	int best = npu_choose(cyc, by, nfin);
	if (best >= 0)
		fin[best].est_cycles = cyc[best];
	else
		best = 0;
	if (first)
		fin[best].est_first = conv_first(x->cfg, p, L, &fin[best]);
	*plan = fin[best];
	return 0;
}

int npu_conv_plan(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, int first, loom_conv_plan *plan,
		  char *err, size_t len)
{
	if (npu_layer_check(cfg, p, L, err, len))
		return -1;
	csearch cs;
	memset(&cs, 0, sizeof cs);
	cs.cfg = cfg;
	loom_timing_init(&cs.tm, cfg, 0, 0);
	if (conv_search(p, L, &cs, 1))
		return npu_fail(err, len, "out of memory");
	return conv_finish(p, L, &cs, first, plan, err, len);
}

int loom_conv_plan_make_n(const loom_hwcfg *const *cfgs, int n, const loom_conv_params *p, loom_conv_plan *plans,
			  int *rc, char *err, size_t errlen)
{
	layer L0;
	int first = 1, ret = 0;
	csearch *cs = calloc((size_t)n + 1, sizeof *cs);
	int *idx = calloc((size_t)n + 1, sizeof *idx);
	if (!cs || !idx) {
		free(cs);
		free(idx);
		return npu_fail(err, errlen, "out of memory");
	}
	/* the configurations whose layer checks pass; they must share the array size */
	int m = 0;
	for (int k = 0; k < n; k++) {
		layer L;
		char e2[256];
		rc[k] = npu_layer_check(cfgs[k], p, &L, e2, sizeof e2);
		if (rc[k]) {
			if (!ret++)
				snprintf(err, errlen, "%s", e2);
			continue;
		}
		if (first)
			L0 = L, first = 0;
		if (L.R != L0.R || L.C != L0.C) {
			free(cs);
			free(idx);
			return npu_fail(err, errlen, "loom_conv_plan_make_n: configurations of different array sizes");
		}
		cs[m].cfg = cfgs[k];
		loom_timing_init(&cs[m].tm, cfgs[k], 0, 0);
		cs[m].tm_same = m;
		for (int j = 0; j < m; j++)
			if (!memcmp(&cs[j].tm, &cs[m].tm, sizeof cs[m].tm)) {
				cs[m].tm_same = cs[j].tm_same;
				break;
			}
		idx[m++] = k;
	}
	if (m && conv_search(p, &L0, cs, m)) {
		free(cs);
		free(idx);
		return npu_fail(err, errlen, "out of memory");
	}
	for (int j = 0; j < m; j++) {
		char e2[256];
		rc[idx[j]] = conv_finish(p, &L0, &cs[j], 1, &plans[idx[j]], e2, sizeof e2);
		if (rc[idx[j]] && !ret++)
			snprintf(err, errlen, "%s", e2);
	}
	free(cs);
	free(idx);
	return ret ? -1 : 0;
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
	return npu_conv_plan(cfg, p, &L, 1, plan, err, errlen);
}

int npu_conv_finalists(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, loom_conv_plan *fin, int *n,
		       char *err, size_t len)
{
	if (npu_layer_check(cfg, p, L, err, len))
		return -1;
	csearch cs;
	memset(&cs, 0, sizeof cs);
	cs.cfg = cfg;
	loom_timing_init(&cs.tm, cfg, 0, 0);
	if (conv_search(p, L, &cs, 1))
		return npu_fail(err, len, "out of memory");
	return conv_finalists(p, L, &cs, fin, n, err, len);
}

uint64_t loom_conv_plan_first(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_conv_plan *plan)
{
	layer L;
	char err[256];
	if (npu_layer_check(cfg, p, &L, err, sizeof err))
		return plan->est_cycles;
	return conv_first(cfg, p, &L, plan);
}

uint64_t loom_conv_plan_sp_lines(const loom_conv_plan *pl)
{
	return (uint64_t)pl->wgt_lines * pl->nwreg + 2ull * pl->act_lines + (uint64_t)pl->nres * pl->g * pl->slot_lines;
}
