/* gen_vec.c - the vector unit in the co-simulation program generator
 * (cosim/gen_internal.h): ELTWISE, POOL, DWCONV and LUT, their inputs,
 * LUT tables and DWCONV parameter blocks loaded first, destinations that
 * never overlap what they read except in place, results stored to DRAM,
 * and the block of one to three of them, each often on the previous one's
 * output. */
#include "cosim/gen_internal.h"

#include <string.h>

/* ---- vector unit (ELTWISE, POOL, DWCONV, LUT) ---- */

static int span_hit(const span *s, unsigned ns, uint32_t lo, uint32_t n)
{
	for (unsigned i = 0; i < ns; i++)
		if (s[i].n && lo < s[i].lo + s[i].n && s[i].lo < lo + n)
			return 1;
	return 0;
}

/* n SP lines overlapping none of s[0..ns). */
uint32_t gen_alloc_avoid(gen *g, uint32_t n, const span *s, unsigned ns)
{
	for (int k = 0; k < 12; k++) {
		uint32_t a = gen_line_alloc(g, 0, n);
		if (!span_hit(s, ns, a, n))
			return a;
	}
	/* first fit: the bottom or right after one of the spans */
	for (unsigned k = 0; k <= ns; k++) {
		uint32_t a = k == 0 ? g->sp_lo : s[k - 1].lo + s[k - 1].n;
		if (a >= g->sp_lo && a + n <= g->sp_hi && !span_hit(s, ns, a, n))
			return a;
	}
	gen_fail(g, "generator bug: no room for %u SP lines", n);
	return g->sp_lo;
}

uint8_t gen_rand_zp(gen *g) { return chance(g, 30) ? 0 : (uint8_t)r32(g); }

/* An int8 clamp range lo <= hi: full, ReLU-like from zp, or random. */
void gen_rand_clip(gen *g, uint8_t zp, uint32_t *lo, uint32_t *hi)
{
	int r = rbelow(g, 100);
	int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
	if (r < 35) {
		a = -128;
		b = 127;
	} else if (r < 55) {
		a = (int8_t)zp;
		b = 127;
	} else if (r < 62) {
		a = b = (int8_t)r32(g); /* a single value */
	}
	*lo = (uint8_t)(a < b ? a : b);
	*hi = (uint8_t)(a < b ? b : a);
}

/* Output shift: 0 and 31 often, else mostly a range that keeps the result
 * away from the clamps, sometimes anything. */
static uint32_t rand_shift(gen *g, uint32_t lo, uint32_t hi)
{
	int r = rbelow(g, 100);
	return r < 18 ? 0 : r < 30 ? 31 : r < 78 ? rrange(g, lo, hi) : rbelow(g, 32);
}

/* int32 output multiplier: mostly in [2^30, 2^31). */
static uint32_t rand_mult(gen *g)
{
	static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 1, 0xffffffffu, 0x40000000u, 0xc0000000u};
	int r = rbelow(g, 100);
	if (r < 72)
		return 0x40000000u + (r32(g) & 0x3fffffffu);
	if (r < 84)
		return edge[rbelow(g, sizeof edge / sizeof edge[0])];
	if (r < 92)
		return (uint32_t)-(int32_t)(0x40000000u + (r32(g) & 0x3fffffffu));
	return chance(g, 50) ? rbelow(g, 1u << 16) : r32(g);
}

/* int16 ELTWISE input multiplier. */
uint32_t gen_rand_m16(gen *g)
{
	static const int16_t edge[] = {0, 1, -1, 32767, -32768, 16384, -16384};
	int r = rbelow(g, 100);
	int16_t v = r < 30 ? edge[rbelow(g, sizeof edge / sizeof edge[0])] : r < 65 ? (int16_t)rbelow(g, 16385)
							      : (int16_t)r32(g);
	return (uint16_t)v;
}

/* Lines [at, at+n) written with random data by one or more LOADs. */
int gen_load_lines(gen *g, uint32_t at, uint32_t n)
{
	if (n > 1 && chance(g, 12)) {
		uint32_t k = rrange(g, 1, n - 1);
		return gen_load_lines(g, at, k) || gen_load_lines(g, at + k, n - k);
	}
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = gen_rand_rw_sp(g);
	if (n <= 4095 && chance(g, 35)) {
		gen_plane_xfer(g, &x, n, 1, 1, 1);
	} else {
		gen_rand_shape(g, n, x.n);
		x.padv = 0;
	}
	x.mem = at;
	return gen_load(g, &x, 25, NULL, NULL);
}

/* Bias (lines 0..3), multiplier (4..7) and shift bytes (8) of DWCONV
 * parameter blocks, one LOAD row per line. */
void gen_craft_dwparams(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	unsigned style = *(unsigned *)ctx, line = (unsigned)(rowidx % LOOM_DW_PARAM_LINES);
	if (line == 8) {
		for (uint32_t k = 0; k < n0; k++)
			row[k] = style == 0 ? (uint8_t)(rrange(g, 4, 14) | (chance(g, 30) ? 32u * rrange(g, 1, 7) : 0))
					    : (uint8_t)r32(g);
		return;
	}
	for (uint32_t k = 0; k < n0; k += 4) {
		uint32_t v;
		int r = rbelow(g, 100);
		if (line < 4) {
			static const uint32_t edge[] = {0x7fffffffu, 0x80000000u, 0x7ffff000u, 0x80000fffu,
							0x7fff0000u, 0x80010000u, 0, 0xffffffffu};
			v = r < 40 ? (uint32_t)((int32_t)rbelow(g, 1u << 13) - (1 << 12))
			    : r < 60 ? (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20))
			    : r < (style ? 70 : 85) ? r32(g)
			    : chance(g, 50) ? edge[rbelow(g, 8)]
			    : (chance(g, 50) ? 0x7fffffffu - rbelow(g, 1u << 16) : 0x80000000u + rbelow(g, 1u << 16));
		} else {
			v = rand_mult(g);
		}
		put32(row + k, v);
	}
}

static int vblock_live(const gen *g, const vblock *b)
{
	for (uint32_t k = 0; k < b->n; k++)
		if (g->sp[b->line + k].w != (uint32_t)b->insn + 2)
			return 0;
	return 1;
}

/* A live block of n lines that overlaps none of s, or -1. */
static long vblock_pick(gen *g, const vblock *v, unsigned nv, uint32_t n, const span *s, unsigned ns)
{
	if (!nv)
		return -1;
	unsigned st = rbelow(g, nv);
	for (unsigned i = 0; i < nv; i++) {
		const vblock *b = &v[(st + i) % nv];
		if (b->n == n && vblock_live(g, b) && !span_hit(s, ns, b->line, b->n))
			return (long)b->line;
	}
	return -1;
}

static void vblock_add(gen *g, vblock *v, unsigned *nv, uint32_t line, uint32_t n)
{
	vblock b = {line, n, g->p->ninsns - 1};
	if (*nv < 4)
		v[(*nv)++] = b;
	else
		v[rbelow(g, 4)] = b;
}

/* A LUT table (random bytes) avoiding s: a live one or a new LOAD. */
static int get_table(gen *g, const span *s, unsigned ns, uint32_t *line)
{
	uint32_t T = gen_lut_lines(g->cfg);
	long l = chance(g, 45) ? vblock_pick(g, g->tables, g->ntables, T, s, ns) : -1;
	if (l >= 0) {
		*line = (uint32_t)l;
		return 0;
	}
	*line = gen_alloc_avoid(g, T, s, ns);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 85) ? g->R / 4 : gen_rand_rw_sp(g);
	x.mem = *line;
	if (chance(g, 70)) {
		x.n[0] = T;
		x.n[1] = x.n[2] = 1;
	} else {
		gen_rand_shape(g, T, x.n);
	}
	if (gen_load(g, &x, 20, NULL, NULL))
		return -1;
	vblock_add(g, g->tables, &g->ntables, *line, T);
	return 0;
}

/* DWCONV parameters of ncb channel blocks avoiding s: live or a new LOAD. */
static int get_dwparams(gen *g, uint32_t ncb, const span *s, unsigned ns, uint32_t *line)
{
	uint32_t n = ncb * LOOM_DW_PARAM_LINES;
	long l = chance(g, 35) ? vblock_pick(g, g->dwparams, g->ndwparams, n, s, ns) : -1;
	if (l >= 0) {
		*line = (uint32_t)l;
		return 0;
	}
	*line = gen_alloc_avoid(g, n, s, ns);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 85) ? g->R / 4 : gen_rand_rw_sp(g);
	x.mem = *line;
	int r = rbelow(g, 3);
	x.n[0] = r == 0 ? n : LOOM_DW_PARAM_LINES;
	x.n[1] = r == 1 ? ncb : 1;
	x.n[2] = r == 2 ? ncb : 1;
	unsigned style = chance(g, 70) ? 0 : 1;
	if (gen_load(g, &x, 0, gen_craft_dwparams, &style))
		return -1;
	vblock_add(g, g->dwparams, &g->ndwparams, *line, n);
	return 0;
}

/* An ELTWISE or LUT of zero lines with otherwise random, legal fields:
 * range checks do not apply, the others do; it only moves tokens. */
loom_insn gen_token_vec(gen *g)
{
	loom_insn in;
	uint32_t lo, hi;
#define ADDR() (chance(g, 50) ? rbelow(g, g->cfg->sp_lines) : r32(g) & 0xffffffu)
	if (chance(g, 40)) {
		in = op(LOOM_OP_LUT);
		setf(g, &in, LOOM_F_LUT_SRC, ADDR());
		setf(g, &in, LOOM_F_LUT_DST, ADDR());
		setf(g, &in, LOOM_F_LUT_TABLE, ADDR());
		return in;
	}
	in = op(LOOM_OP_ELTWISE);
	unsigned fn = rbelow(g, 2);
	setf(g, &in, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &in, LOOM_F_ELTWISE_B_MODE, rbelow(g, 3));
	setf(g, &in, LOOM_F_ELTWISE_SHIFT, rbelow(g, 32));
	setf(g, &in, LOOM_F_ELTWISE_ZP_OUT, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_A, ADDR());
	setf(g, &in, LOOM_F_ELTWISE_ZP_A, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_B, ADDR());
	setf(g, &in, LOOM_F_ELTWISE_ZP_B, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_DST, ADDR());
	gen_rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
	int z = rbelow(g, 3); /* which of PLANES, PLANE_LINES is 0 (2: both) */
	setf(g, &in, LOOM_F_ELTWISE_PLANES, z == 1 ? (chance(g, 50) ? rrange(g, 1, 8) : r32(g) & 0xffff) : 0);
	setf(g, &in, LOOM_F_ELTWISE_PLANE_LINES, z == 0 ? (chance(g, 50) ? rrange(g, 1, 64) : r32(g) & 0xffffff) : 0);
	if (fn == LOOM_ELT_ADD) {
		setf(g, &in, LOOM_F_ELTWISE_MULT_A, gen_rand_m16(g));
		setf(g, &in, LOOM_F_ELTWISE_MULT_B, gen_rand_m16(g));
	}
	setf(g, &in, LOOM_F_ELTWISE_MULT, r32(g));
#undef ADDR
	return in;
}

/* Window sizes: POOL mostly 1..5, rarely up to 20; DWCONV 1..7, rarely 15. */
static uint32_t pick_vk(gen *g, int dw)
{
	int r = rbelow(g, 100);
	if (dw)
		return r < 88 ? rrange(g, 1, 7) : rrange(g, 8, 15);
	return r < 85 ? rrange(g, 1, 5) : rrange(g, 6, 20);
}

static uint32_t pick_vs(gen *g, int dw)
{
	int r = rbelow(g, 100);
	if (dw)
		return r < 95 ? rrange(g, 1, 3) : rrange(g, 4, 15);
	return r < 90 ? rrange(g, 1, 4) : rrange(g, 5, 16);
}

static uint32_t pick_vd(gen *g)
{
	int r = rbelow(g, 100);
	return r < 65 ? 1 : r < 85 ? 2 : r < 98 ? 3 : rrange(g, 4, 6);
}

/* Bounds of one POOL/DWCONV: input lines, vector taps*positions. */
static uint64_t vec_max_lines(const gen *g) { return umin(g->cfg->sp_lines / 4, 2048); }

/* POOL (dw = 0) or DWCONV (dw = 1) geometry from scratch. */
void gen_vec_geom(gen *g, geom *m, int dw)
{
	m->kw = pick_vk(g, dw);
	m->kh = pick_vk(g, dw);
	m->sw = pick_vs(g, dw);
	m->sh = pick_vs(g, dw);
	m->dw = pick_vd(g);
	m->dh = pick_vd(g);
	m->ncb = chance(g, 50) ? 1 : chance(g, 60) ? 2 : 3;
	m->ow = chance(g, 15) ? 1 : rrange(g, 1, chance(g, 70) ? 8 : 24);
	m->oh = chance(g, 25) ? 1 : rrange(g, 1, 8);
	int r = rbelow(g, 100);
	uint64_t max_lines = vec_max_lines(g), max_work = r < 70 ? 1500 : r < 95 ? 4000 : 10000;
	for (;;) {
		uint64_t inw = (uint64_t)(m->ow - 1) * m->sw + (uint64_t)(m->kw - 1) * m->dw + 3;
		uint64_t inh = (uint64_t)(m->oh - 1) * m->sh + (uint64_t)(m->kh - 1) * m->dh + 3;
		uint64_t work = (uint64_t)m->ncb * m->ow * m->oh * m->kw * m->kh;
		int lines_ok = m->ncb * inw * inh <= max_lines && (uint64_t)m->ncb * m->kw * m->kh <= max_lines;
		if (lines_ok && work <= max_work)
			break;
		if (!lines_ok && (m->sw > 4 || m->sh > 4)) {
			m->sw = umin(m->sw, 4);
			m->sh = umin(m->sh, 4);
		} else if (!lines_ok && (m->dw > 1 || m->dh > 1)) {
			m->dw = m->dh = 1;
		} else if (m->ncb > 1) {
			m->ncb--;
		} else if (m->ow > 1 && m->ow >= m->oh) {
			m->ow = (m->ow + 1) / 2;
		} else if (m->oh > 1) {
			m->oh--;
		} else if (!lines_ok && (m->sw > 1 || m->sh > 1)) {
			m->sw = m->sh = 1;
		} else if (m->kw > 1 && m->kw >= m->kh) {
			m->kw--;
		} else if (m->kh > 1) {
			m->kh--;
		} else {
			break;
		}
	}
	m->inw = (m->ow - 1) * m->sw + (m->kw - 1) * m->dw + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
	m->inh = (m->oh - 1) * m->sh + (m->kh - 1) * m->dh + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
}

/* One dimension of a window that fits an input of `in` lines. */
static void fit_dim(gen *g, int dw, uint32_t in, uint32_t *k, uint32_t *s, uint32_t *d, uint32_t *o)
{
	*k = umin(pick_vk(g, dw), in);
	*d = pick_vd(g);
	if (*k > 1 && (*k - 1) * *d + 1 > in)
		*d = umax(1, (in - 1) / (*k - 1));
	*s = pick_vs(g, dw);
	uint32_t max = (in - 1 - (*k - 1) * *d) / *s + 1;
	*o = chance(g, 65) ? max : rrange(g, 1, max);
}

/* POOL/DWCONV window and output for the given input tile (inw, inh, ncb). */
static void fit_window(gen *g, geom *m, int dw)
{
	fit_dim(g, dw, m->inw, &m->kw, &m->sw, &m->dw, &m->ow);
	fit_dim(g, dw, m->inh, &m->kh, &m->sh, &m->dh, &m->oh);
	while ((uint64_t)m->ncb * m->ow * m->oh * m->kw * m->kh > 3000) {
		if (m->ow > 1 && m->ow >= m->oh)
			m->ow = (m->ow + 1) / 2;
		else if (m->oh > 1)
			m->oh = (m->oh + 1) / 2;
		else if (m->kw > 1)
			m->kw--;
		else
			m->kh--;
	}
}

/* Emit the vector instruction K writing *o; store o to DRAM (SP bytes)
 * always (VF_STORE), never (VF_NOSTORE) or sometimes, maybe with the store
 * waiting for K through an early pop. */
int gen_vec_emit(gen *g, pend *K, const vout *o, unsigned flags)
{
	if (flags & VF_NOSTORE || (!(flags & VF_STORE) && chance(g, 45))) {
		gen_emit(g, K);
		return g->failed ? -1 : 0;
	}
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_SP;
	q.rw = gen_rand_rw_sp(g);
	q.count = o->n > 1 && chance(g, 25) ? rrange(g, 1, o->n) : o->n;
	q.mem = o->at + rbelow(g, o->n - q.count + 1);
	int early = chance(g, 40), rc;
	if (!early)
		gen_emit(g, K);
	rc = gen_store(g, &q, early, early ? K : NULL);
	if (!rc && chance(g, 10)) { /* twice: two readers */
		q.rw = gen_rand_rw_sp(g);
		rc = gen_store(g, &q, 0, NULL);
	}
	return rc;
}

static int vec_eltwise(gen *g, const vout *in, vout *out, unsigned flags)
{
	uint32_t planes, pl, w, h;
	if (in && (flags & VF_INPLACE || chance(g, 60))) {
		planes = in->ncb;
		w = in->w;
		h = in->h;
		pl = w * h;
	} else if (in) {
		planes = rrange(g, 1, umin(4, in->n));
		pl = rrange(g, 1, in->n / planes);
		w = pl;
		h = 1;
	} else {
		planes = chance(g, 40) ? 1 : chance(g, 85) ? rrange(g, 2, 4) : rrange(g, 5, 24);
		int r = rbelow(g, 100);
		pl = r < 25 ? rrange(g, 1, 15) : r < 40 ? 16u * rrange(g, 1, 4) : r < 85 ? rrange(g, 17, 80)
									      : rrange(g, 81, 400);
		while (planes * pl > 1024)
			pl = (pl + 1) / 2;
		w = pl;
		h = 1;
	}
	uint32_t n = planes * pl;
	unsigned fn = chance(g, 55) ? LOOM_ELT_ADD : LOOM_ELT_MUL, bm = rbelow(g, 3);
	uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
	int inplace = flags & VF_INPLACE || chance(g, 25);
	uint32_t a = in ? in->at + rbelow(g, in->n - n + 1) : gen_line_alloc(g, 0, n), b;
	span sp[2] = {{a, n}, {0, 0}};
	int r = rbelow(g, 100), fresh_b = 0;
	if (!inplace && bm == LOOM_BMODE_LINE && r < 12) {
		b = a; /* A op A */
	} else if (!inplace && bm != LOOM_BMODE_LINE && r < 20) {
		b = a + rbelow(g, n - nb + 1); /* B lines inside A */
	} else {
		b = inplace ? gen_alloc_avoid(g, nb, sp, 1) : gen_line_alloc(g, 0, nb);
		fresh_b = 1;
	}
	int bfirst = chance(g, 40);
	if (fresh_b && bfirst && gen_load_lines(g, b, nb))
		return -1;
	if (!in && gen_load_lines(g, a, n))
		return -1;
	if (fresh_b && !bfirst && gen_load_lines(g, b, nb))
		return -1;
	sp[1] = (span){b, nb};
	uint32_t dst = inplace ? a : gen_alloc_avoid(g, n, sp, 2);
	loom_insn e = op(LOOM_OP_ELTWISE);
	uint32_t lo, hi, zp = gen_rand_zp(g);
	setf(g, &e, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &e, LOOM_F_ELTWISE_B_MODE, bm);
	setf(g, &e, LOOM_F_ELTWISE_SHIFT, fn == LOOM_ELT_ADD ? rand_shift(g, 10, 20) : rand_shift(g, 3, 12));
	setf(g, &e, LOOM_F_ELTWISE_ZP_OUT, zp);
	setf(g, &e, LOOM_F_ELTWISE_SRC_A, a);
	setf(g, &e, LOOM_F_ELTWISE_ZP_A, gen_rand_zp(g));
	setf(g, &e, LOOM_F_ELTWISE_SRC_B, b);
	setf(g, &e, LOOM_F_ELTWISE_ZP_B, gen_rand_zp(g));
	setf(g, &e, LOOM_F_ELTWISE_DST, dst);
	gen_rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &e, LOOM_F_ELTWISE_CLIP_HI, hi);
	setf(g, &e, LOOM_F_ELTWISE_PLANE_LINES, pl);
	setf(g, &e, LOOM_F_ELTWISE_PLANES, planes);
	if (fn == LOOM_ELT_ADD) {
		uint32_t ma, mb;
		if (chance(g, 40)) { /* the compiler's form: the larger scale is 2^14 */
			ma = 16384;
			mb = rbelow(g, 16385);
			if (chance(g, 50)) {
				uint32_t t = ma;
				ma = mb;
				mb = t;
			}
		} else {
			ma = gen_rand_m16(g);
			mb = gen_rand_m16(g);
		}
		setf(g, &e, LOOM_F_ELTWISE_MULT_A, ma);
		setf(g, &e, LOOM_F_ELTWISE_MULT_B, mb);
	}
	setf(g, &e, LOOM_F_ELTWISE_MULT, chance(g, 4) ? 0x80000000u : rand_mult(g));
	*out = (vout){dst, n, w, h, planes};
	pend K = gen_mkpend(&e, LOOM_COSIM_DATA);
	return gen_vec_emit(g, &K, out, flags);
}

/* The input tile of a POOL/DWCONV: the previous output (as it is, or
 * reshaped as one channel block) with a window that fits, or a new tile. */
static int vec_tile(gen *g, const vout *in, geom *m, int dw, uint32_t *src)
{
	if (in) {
		if (chance(g, 55)) {
			m->inw = in->w;
			m->inh = in->h;
			m->ncb = in->ncb;
		} else {
			m->ncb = 1;
			m->inw = rrange(g, 1, umin(in->n, 24));
			m->inh = umin(in->n / m->inw, 4095);
		}
		fit_window(g, m, dw);
		*src = in->at + rbelow(g, in->n - m->ncb * m->inw * m->inh + 1);
		return 0;
	}
	gen_vec_geom(g, m, dw);
	*src = gen_line_alloc(g, 0, m->ncb * m->inw * m->inh);
	return gen_load_act(g, m, *src, 15);
}

static int vec_pool(gen *g, const vout *in, vout *out, unsigned flags)
{
	geom m;
	uint32_t src;
	if (vec_tile(g, in, &m, 0, &src))
		return -1;
	uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
	span sp = {src, nin};
	uint32_t dst = gen_alloc_avoid(g, nout, &sp, 1);
	unsigned avg = chance(g, 50);
	loom_insn e = op(LOOM_OP_POOL);
	uint32_t lo, hi, zp = avg ? gen_rand_zp(g) : 0;
	setf(g, &e, LOOM_F_POOL_FUNC, avg ? LOOM_POOL_AVG : LOOM_POOL_MAX);
	if (avg) {
		uint32_t taps = m.kw * m.kh, lg = 0;
		while ((1u << lg) < taps)
			lg++;
		if (chance(g, 50)) { /* an average: mult/2^31 * 2^-shift ~ 1/taps */
			setf(g, &e, LOOM_F_POOL_MULT, 0x40000000u + (r32(g) & 0x3fffffffu));
			setf(g, &e, LOOM_F_POOL_SHIFT, umin(31, lg + rbelow(g, 2)));
		} else {
			setf(g, &e, LOOM_F_POOL_MULT, rand_mult(g));
			setf(g, &e, LOOM_F_POOL_SHIFT, rand_shift(g, lg, lg + 4));
		}
		setf(g, &e, LOOM_F_POOL_ZP_OUT, zp);
		setf(g, &e, LOOM_F_POOL_ZP_IN, gen_rand_zp(g));
	}
	gen_rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_POOL_CLIP_LO, lo);
	setf(g, &e, LOOM_F_POOL_CLIP_HI, hi);
	setf(g, &e, LOOM_F_POOL_SRC, src);
	setf(g, &e, LOOM_F_POOL_DST, dst);
	setf(g, &e, LOOM_F_POOL_IN_W, m.inw);
	setf(g, &e, LOOM_F_POOL_IN_H, m.inh);
	setf(g, &e, LOOM_F_POOL_OUT_W, m.ow);
	setf(g, &e, LOOM_F_POOL_OUT_H, m.oh);
	setf(g, &e, LOOM_F_POOL_NCB, m.ncb);
	setf(g, &e, LOOM_F_POOL_KW, m.kw);
	setf(g, &e, LOOM_F_POOL_KH, m.kh);
	setf(g, &e, LOOM_F_POOL_SW, m.sw);
	setf(g, &e, LOOM_F_POOL_SH, m.sh);
	setf(g, &e, LOOM_F_POOL_DW, m.dw);
	setf(g, &e, LOOM_F_POOL_DH, m.dh);
	*out = (vout){dst, nout, m.ow, m.oh, m.ncb};
	pend K = gen_mkpend(&e, LOOM_COSIM_DATA);
	return gen_vec_emit(g, &K, out, flags);
}

static int vec_dwconv(gen *g, const vout *in, vout *out, unsigned flags)
{
	geom m;
	uint32_t src, wgt, par;
	if (vec_tile(g, in, &m, 1, &src))
		return -1;
	uint32_t nin = m.ncb * m.inw * m.inh, nw = m.ncb * m.kw * m.kh, nout = m.ncb * m.ow * m.oh;
	span sp[3] = {{src, nin}, {0, 0}, {0, 0}};
	int wfirst = chance(g, 50), wsrc = nin >= nw && chance(g, 8);
	if (wsrc) { /* the weights are lines of the input tile */
		wgt = src + rbelow(g, nin - nw + 1);
	} else {
		wgt = gen_line_alloc(g, 0, nw);
		if (wfirst && gen_load_lines(g, wgt, nw))
			return -1;
	}
	sp[1] = (span){wgt, nw};
	/* parameters loaded after the weights must not overwrite them */
	if (get_dwparams(g, m.ncb, sp, 2, &par))
		return -1;
	if (!wfirst && !wsrc && gen_load_lines(g, wgt, nw))
		return -1;
	sp[2] = (span){par, m.ncb * LOOM_DW_PARAM_LINES};
	/* loading the weights after the parameters could clobber these: only
	 * the destination has to avoid every input */
	uint32_t dst = gen_alloc_avoid(g, nout, sp, 3);
	loom_insn e = op(LOOM_OP_DWCONV);
	uint32_t lo, hi, zp = gen_rand_zp(g);
	setf(g, &e, LOOM_F_DWCONV_ZP_IN, gen_rand_zp(g));
	setf(g, &e, LOOM_F_DWCONV_ZP_OUT, zp);
	gen_rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_DWCONV_CLIP_LO, lo);
	setf(g, &e, LOOM_F_DWCONV_CLIP_HI, hi);
	setf(g, &e, LOOM_F_DWCONV_SRC, src);
	setf(g, &e, LOOM_F_DWCONV_WGT, wgt);
	setf(g, &e, LOOM_F_DWCONV_PARAM, par);
	setf(g, &e, LOOM_F_DWCONV_DST, dst);
	setf(g, &e, LOOM_F_DWCONV_NCB, m.ncb);
	setf(g, &e, LOOM_F_DWCONV_IN_W, m.inw);
	setf(g, &e, LOOM_F_DWCONV_IN_H, m.inh);
	setf(g, &e, LOOM_F_DWCONV_KW, m.kw);
	setf(g, &e, LOOM_F_DWCONV_KH, m.kh);
	setf(g, &e, LOOM_F_DWCONV_OUT_W, m.ow);
	setf(g, &e, LOOM_F_DWCONV_OUT_H, m.oh);
	setf(g, &e, LOOM_F_DWCONV_SW, m.sw);
	setf(g, &e, LOOM_F_DWCONV_SH, m.sh);
	setf(g, &e, LOOM_F_DWCONV_DW, m.dw);
	setf(g, &e, LOOM_F_DWCONV_DH, m.dh);
	*out = (vout){dst, nout, m.ow, m.oh, m.ncb};
	pend K = gen_mkpend(&e, LOOM_COSIM_DATA);
	return gen_vec_emit(g, &K, out, flags);
}

static int vec_lut(gen *g, const vout *in, vout *out, unsigned flags)
{
	uint32_t T = gen_lut_lines(g->cfg), n, src, tab, w, h, ncb;
	int inplace = flags & VF_INPLACE || chance(g, 30), self = 0;
	if (in) {
		int whole = flags & VF_INPLACE || chance(g, 60);
		n = whole ? in->n : rrange(g, 1, in->n);
		src = in->at + rbelow(g, in->n - n + 1);
		w = whole ? in->w : n;
		h = whole ? in->h : 1;
		ncb = whole ? in->ncb : 1;
	} else {
		int r = rbelow(g, 100);
		n = r < 30 ? rrange(g, 1, 16) : r < 45 ? 16u * rrange(g, 1, 4) : r < 85 ? rrange(g, 17, 100)
										     : rrange(g, 101, 400);
		src = gen_line_alloc(g, 0, n);
		w = n;
		h = ncb = 1;
		self = !inplace && chance(g, 6); /* the table translates itself */
	}
	span sp[2] = {{src, n}, {0, 0}};
	if (self) {
		n = rrange(g, 1, T);
		if (get_table(g, NULL, 0, &tab))
			return -1;
		src = tab + rbelow(g, T - n + 1);
		sp[0] = (span){src, n};
		w = n;
	} else {
		int tfirst = chance(g, 50);
		/* in place, the table may not overlap the lines written */
		if (tfirst && get_table(g, sp, inplace, &tab))
			return -1;
		if (!in && gen_load_lines(g, src, n))
			return -1;
		if (!tfirst && get_table(g, sp, inplace, &tab))
			return -1;
	}
	sp[1] = (span){tab, T};
	uint32_t dst = inplace ? src : gen_alloc_avoid(g, n, sp, 2);
	loom_insn e = op(LOOM_OP_LUT);
	setf(g, &e, LOOM_F_LUT_SRC, src);
	setf(g, &e, LOOM_F_LUT_DST, dst);
	setf(g, &e, LOOM_F_LUT_TABLE, tab);
	setf(g, &e, LOOM_F_LUT_LINES, n);
	*out = (vout){dst, n, w, h, ncb};
	pend K = gen_mkpend(&e, LOOM_COSIM_DATA);
	return gen_vec_emit(g, &K, out, flags);
}

/* In place over an existing tile (ELTWISE or LUT). */
int gen_vec_inplace(gen *g, uint32_t at, uint32_t w, uint32_t h, uint32_t ncb, unsigned flags)
{
	vout in = {at, w * h * ncb, w, h, ncb}, out;
	return chance(g, 50) ? vec_eltwise(g, &in, &out, VF_INPLACE | flags) : vec_lut(g, &in, &out, VF_INPLACE | flags);
}

/* One to three vector instructions, often each on the previous one's
 * output; the last one's output is stored, the others' sometimes. */
void gen_blk_vec(gen *g)
{
	unsigned k = chance(g, 50) ? 1 : chance(g, 60) ? 2 : 3;
	vout prev, out;
	int have = 0;
	for (unsigned i = 0; i < k && !g->failed && !g->full; i++) {
		const vout *in = have && chance(g, 60) ? &prev : NULL;
		unsigned flags = i + 1 == k ? VF_STORE : 0;
		int r = rbelow(g, 100), rc;
		if (r < 4) {
			loom_insn t = gen_token_vec(g);
			gen_emit_insn(g, &t, LOOM_COSIM_TOKEN);
			continue;
		}
		if (r < 34)
			rc = vec_eltwise(g, in, &out, flags);
		else if (r < 56)
			rc = vec_pool(g, in, &out, flags);
		else if (r < 78)
			rc = vec_dwconv(g, in, &out, flags);
		else
			rc = vec_lut(g, in, &out, flags);
		if (rc)
			return;
		prev = out;
		have = 1;
	}
}
