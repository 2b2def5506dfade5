/* gen_tensor.c - the tensor-engine work of the co-simulation program
 * generator (cosim/gen_internal.h): LOADs from random DRAM views, STOREs
 * into guarded output regions, crafted ACC data and requantization
 * parameters, MATMUL geometry, and the blocks built from them
 * (convolutions, double/triple-buffered pipelines, SP copies, ACC round
 * trips, independent loads). */
#include "cosim/gen_internal.h"

#include <string.h>

/* ---- data movement helpers ---- */

/* Random strides for rows of n0 bytes over extents n[0..2]; returns the
 * DRAM extent. overlap: rows may overlap (reads only, or rare stores). */
static uint64_t rand_strides(gen *g, const uint32_t n[3], uint32_t n0, int overlap, uint32_t s[3])
{
	int order[3] = {0, 1, 2};
	for (int i = 2; i > 0; i--) {
		int j = (int)rbelow(g, (uint32_t)i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	uint64_t span = n0; /* bytes covered by the dims placed so far */
	for (int k = 0; k < 3; k++) {
		int d = order[k];
		if (n[d] <= 1) {
			s[d] = chance(g, 50) ? (uint32_t)span : chance(g, 50) ? 0 : r32(g) & ~3u;
			continue;
		}
		uint64_t st;
		if (overlap && k == 0 && chance(g, 40))
			st = 4u * rbelow(g, n0 / 4 + 1);
		else if (chance(g, 55))
			st = span;
		else if (chance(g, 85))
			st = span + 4u * rbelow(g, 8);
		else
			st = span + 4u * rbelow(g, 1024);
		if ((n[d] - 1) * st + span > 65536)
			st = span;
		s[d] = (uint32_t)st;
		span = (n[d] - 1) * st + span;
	}
	uint64_t ext = n0;
	for (int d = 0; d < 3; d++)
		ext += (uint64_t)(n[d] ? n[d] - 1 : 0) * s[d];
	return ext;
}

/* Split a line count into n1*n2*n3 with n1, n2 < 4096, n3 < 256. */
void gen_rand_shape(gen *g, uint32_t count, uint32_t n[3])
{
	uint32_t div[64], nd = 0;
	for (uint32_t d = 1; d <= count && nd < 64; d++)
		if (count % d == 0)
			div[nd++] = d;
	n[0] = count;
	n[1] = n[2] = 1;
	if (chance(g, 35) || count == 1)
		return;
	uint32_t a = div[rbelow(g, nd)], rest = count / a;
	uint32_t nd2 = 0;
	for (uint32_t d = 1; d <= rest && nd2 < 64; d++)
		if (rest % d == 0)
			div[nd2++] = d;
	uint32_t b = div[rbelow(g, nd2)];
	n[0] = a;
	n[1] = b;
	n[2] = rest / b;
	if (n[2] > 255 || n[0] > 4095 || n[1] > 4095) {
		n[0] = count;
		n[1] = n[2] = 1;
	}
}

/* A region holding (or able to hold) every row of a transfer: a new one,
 * or (reuse) an existing INPUT/OUTPUT region that the extent fits in. */
static int pick_dram(gen *g, uint64_t ext, int reuse_pct, int allow_input, uint64_t *addr)
{
	loom_cosim_prog *p = g->p;
	if (ext > 0xfffffff0u)
		return -1;
	if (chance(g, reuse_pct) && p->nregions) {
		long start = rbelow(g, (uint32_t)p->nregions);
		for (size_t k = 0; k < p->nregions; k++) {
			const loom_cosim_region *r = &p->regions[(start + k) % p->nregions];
			if (r->kind != LOOM_COSIM_OUTPUT && !(allow_input && r->kind == LOOM_COSIM_INPUT))
				continue;
			if (r->len < ext)
				continue;
			*addr = r->addr + 4u * rbelow(g, (uint32_t)((r->len - ext) / 4 + 1));
			return 0;
		}
	}
	long r = gen_region_new(g, LOOM_COSIM_INPUT, (uint32_t)ext, 4);
	if (r < 0)
		return -1;
	*addr = p->regions[r].addr;
	return (int)r + 1; /* > 0: a new region */
}

static uint32_t xfer_lines(const xfer *x)
{
	return x->n[2] * (x->pad[0] + x->n[1] + x->pad[1]) * (x->pad[2] + x->n[0] + x->pad[3]);
}

/* Emit (or return in *out without emitting) a LOAD of x from a random DRAM
 * view; craft writes meaningful data into new regions. */
static int build_load(gen *g, const xfer *x, int reuse_pct, craft_fn craft, void *cctx, loom_insn *out)
{
	uint32_t s[3], n0 = 4 * x->rw;
	uint64_t ext = rand_strides(g, x->n, n0, 1, s), a;
	int nr = pick_dram(g, ext, craft ? 0 : reuse_pct, 1, &a);
	if (nr < 0)
		return -1;
	if (nr > 0 && craft) {
		loom_cosim_region *r = &g->p->regions[nr - 1];
		uint64_t row = 0;
		for (uint32_t i3 = 0; i3 < x->n[2]; i3++)
			for (uint32_t i2 = 0; i2 < x->n[1]; i2++)
				for (uint32_t i1 = 0; i1 < x->n[0]; i1++, row++)
					craft(g, r->init + (a - r->addr) + (uint64_t)i3 * s[2] + (uint64_t)i2 * s[1] +
							 (uint64_t)i1 * s[0],
					      n0, row, cctx);
	}
	loom_insn in = op(LOOM_OP_LOAD);
	setf(g, &in, LOOM_F_LOAD_TARGET, (uint32_t)x->acc);
	setf(g, &in, LOOM_F_LOAD_PAD_VALUE, x->acc ? 0 : x->padv);
	setf(g, &in, LOOM_F_LOAD_ROW_WORDS, x->rw);
	setf(g, &in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)a);
	setf(g, &in, LOOM_F_LOAD_MEM_ADDR, x->mem);
	setf(g, &in, LOOM_F_LOAD_STRIDE1, s[0]);
	setf(g, &in, LOOM_F_LOAD_STRIDE2, s[1]);
	setf(g, &in, LOOM_F_LOAD_STRIDE3, s[2]);
	setf(g, &in, LOOM_F_LOAD_N1, x->n[0]);
	setf(g, &in, LOOM_F_LOAD_N2, x->n[1]);
	setf(g, &in, LOOM_F_LOAD_N3, x->n[2]);
	setf(g, &in, LOOM_F_LOAD_PAD_TOP, x->pad[0]);
	setf(g, &in, LOOM_F_LOAD_PAD_BOTTOM, x->pad[1]);
	setf(g, &in, LOOM_F_LOAD_PAD_LEFT, x->pad[2]);
	setf(g, &in, LOOM_F_LOAD_PAD_RIGHT, x->pad[3]);
	*out = in;
	return 0;
}

int gen_load(gen *g, const xfer *x, int reuse_pct, craft_fn craft, void *cctx)
{
	loom_insn in;
	if (build_load(g, x, reuse_pct, craft, cctx, &in))
		return -1;
	gen_emit_insn(g, &in, LOOM_COSIM_DATA);
	return 0;
}

uint32_t gen_rand_rw_sp(gen *g) { return chance(g, 65) ? g->R / 4 : rrange(g, 1, g->R / 4); }
static uint32_t rand_rw_acc(gen *g) { return chance(g, 60) ? g->C : rrange(g, 1, g->C); }

/* Lines [mem, mem+lines) as one plane with random padding; lines must be
 * pl+n1+pr wide: w x h = lines given by the caller. */
void gen_plane_xfer(gen *g, xfer *x, uint32_t w, uint32_t h, uint32_t planes, int pads)
{
	x->pad[0] = pads && h > 1 && chance(g, 50) ? rbelow(g, umin(2, h - 1) + 1) : 0;
	x->pad[1] = pads && h - x->pad[0] > 1 && chance(g, 50) ? rbelow(g, umin(2, h - 1 - x->pad[0]) + 1) : 0;
	x->pad[2] = pads && w > 1 && chance(g, 50) ? rbelow(g, umin(2, w - 1) + 1) : 0;
	x->pad[3] = pads && w - x->pad[2] > 1 && chance(g, 50) ? rbelow(g, umin(2, w - 1 - x->pad[2]) + 1) : 0;
	x->n[0] = w - x->pad[2] - x->pad[3];
	x->n[1] = h - x->pad[0] - x->pad[1];
	x->n[2] = planes;
	x->padv = chance(g, 30) ? 0 : (uint8_t)r32(g);
}

int gen_store(gen *g, const stq *q, int early_with_k, pend *K)
{
	uint32_t n[3], s[3], n0 = 4 * q->rw;
	gen_rand_shape(g, q->count, n);
	if (q->src == LOOM_MEM_ACC_RESADD && n[2] > 1) { /* one plane: N3 is the residual's step */
		n[0] = q->count;
		n[1] = n[2] = 1;
	}
	uint64_t ext = rand_strides(g, n, n0, chance(g, 8), s), a;
	int r = rbelow(g, 100);
	int res;
	if (r < 70) {
		/* guard bytes around the rows: a write past a row shows up */
		uint32_t pre = chance(g, 50) ? 4u * rbelow(g, 17) : 0, post = chance(g, 50) ? 4u * rbelow(g, 17) : 0;
		long ri = gen_region_new(g, LOOM_COSIM_OUTPUT, (uint32_t)ext + pre + post, 4);
		if (ri < 0) {
			if (early_with_k && K)
				gen_emit(g, K);
			return -1;
		}
		a = g->p->regions[ri].addr + pre;
		res = 0;
	} else {
		res = pick_dram(g, ext, 100, r >= 85, &a);
		if (res < 0) {
			if (early_with_k && K)
				gen_emit(g, K);
			return -1;
		}
		if (res > 0)
			g->p->regions[res - 1].kind = LOOM_COSIM_OUTPUT;
	}
	loom_insn in = op(LOOM_OP_STORE);
	setf(g, &in, LOOM_F_STORE_SOURCE, q->src);
	setf(g, &in, LOOM_F_STORE_ROW_WORDS, q->rw);
	setf(g, &in, LOOM_F_STORE_DRAM_ADDR, (uint32_t)a);
	setf(g, &in, LOOM_F_STORE_MEM_ADDR, q->mem);
	setf(g, &in, LOOM_F_STORE_STRIDE1, s[0]);
	setf(g, &in, LOOM_F_STORE_STRIDE2, s[1]);
	setf(g, &in, LOOM_F_STORE_STRIDE3, s[2]);
	setf(g, &in, LOOM_F_STORE_N1, n[0]);
	setf(g, &in, LOOM_F_STORE_N2, n[1]);
	setf(g, &in, LOOM_F_STORE_N3, n[2]);
	if (q->src == LOOM_MEM_ACC_RESADD) {
		setf(g, &in, LOOM_F_STORE_STRIDE3, q->res);
		setf(g, &in, LOOM_F_STORE_N3, q->rstep);
	}
	if (q->src >= LOOM_MEM_ACC_REQUANT) {
		setf(g, &in, LOOM_F_STORE_PARAM_ADDR, q->param);
		setf(g, &in, LOOM_F_STORE_ZERO_POINT, (uint8_t)q->zp);
		setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)q->lo);
		setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)q->hi);
	}
	pend p = gen_mkpend(&in, LOOM_COSIM_DATA);
	if (early_with_k && K)
		gen_emit2(g, K, &p);
	else
		gen_emit(g, &p);
	return 0;
}

/* ---- crafted data ---- */

static uint32_t acc_value(gen *g)
{
	static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 0xffffffffu, 1, 0x80000001u, 0x7ffffffeu};
	int r = rbelow(g, 100);
	if (r < 45)
		return r32(g);
	if (r < 80)
		return (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20));
	return edge[rbelow(g, sizeof edge / sizeof edge[0])];
}

static void craft_acc(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	(void)rowidx;
	(void)ctx;
	for (uint32_t k = 0; k < n0; k += 4)
		put32(row + k, acc_value(g));
}

/* word w of a random ELTWISE ADD parameter line (docs/ISA.md, STORE SOURCE 3):
 * MULT, MULT_A | MULT_B, the zero points and SHIFT, the clamp; style 1 also
 * sets the ignored bits */
static uint32_t eltadd_word(gen *g, uint32_t w, unsigned style)
{
	int r = rbelow(g, 100);
	switch (w) {
	case 0:
		return r < 80 ? 0x40000000u + (r32(g) & 0x3fffffffu) : r < 90 ? r32(g)
		       : (uint32_t[]){0x80000000u, 0x7fffffffu, 0, 1}[rbelow(g, 4)];
	case 1: {
		uint32_t ma = r < 50 ? 16384 : r < 80 ? rbelow(g, 16385) : r32(g) & 0xffffu;
		uint32_t mb = chance(g, 70) ? rbelow(g, 16385) : r32(g) & 0xffffu;
		return chance(g, 50) ? ma | mb << 16 : mb | ma << 16;
	}
	case 2: {
		uint32_t sh = r < 70 ? rrange(g, 10, 18) : rbelow(g, 32);
		return (r32(g) & 0xffffffu) | sh << 24 | (style ? r32(g) & 0xe0000000u : 0);
	}
	default: {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		uint32_t lo = (uint8_t)(a < b ? a : b), hi = (uint8_t)(a < b ? b : a);
		if (r < 35)
			lo = 0x80, hi = 0x7f;
		else if (r < 40) /* lo > hi: requant's order decides */
			lo = (uint8_t)(a < b ? b : a), hi = (uint8_t)(a < b ? a : b);
		return lo | hi << 8 | (style ? r32(g) & 0xffff0000u : 0);
	}
	}
}

void gen_craft_params(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	unsigned style = *(unsigned *)ctx; /* 0: sensible scales, 1: wild */
	for (uint32_t k = 0; k < n0; k += 4) {
		uint32_t v;
		int r = rbelow(g, 100);
		if (rowidx == 0) { /* bias */
			static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 0xffffffffu};
			v = r < 45 ? (uint32_t)((int32_t)rbelow(g, 1u << 13) - (1 << 12))
			    : r < 70 ? (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20))
			    : r < 88 ? r32(g) : edge[rbelow(g, 4)];
		} else if (rowidx == 1) { /* multiplier */
			static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 1, 0xffffffffu, 0x40000000u};
			v = r < (style ? 55 : 88) ? 0x40000000u + (r32(g) & 0x3fffffffu)
			    : r < (style ? 75 : 95) ? edge[rbelow(g, 6)]
			    : r < 90 ? (uint32_t)-(int32_t)(0x40000000u + (r32(g) & 0x3fffffffu)) : r32(g);
		} else if (rowidx == 2) { /* shift */
			v = style == 0 ? (r < 80 ? rrange(g, 4, 14) : r < 90 ? 0 : 31)
			    : r < 50 ? rbelow(g, 32) : r < 70 ? (rbelow(g, 2) ? 0 : 31) : r32(g);
		} else { /* STORE SOURCE 3: the ELTWISE ADD's words (past word 3: ignored) */
			v = k / 4 < LOOM_RESADD_WORDS ? eltadd_word(g, k / 4, style) : r32(g);
		}
		put32(row + k, v);
	}
}

/* ACC line of a bias/multiplier/shift triple: a live one or a new LOAD. */
static int get_params(gen *g, uint32_t *line)
{
	for (unsigned i = 0; i < g->nparams && chance(g, 60); i++) {
		ptriple *t = &g->params[(i + rbelow(g, g->nparams)) % g->nparams];
		int live = 1;
		for (uint32_t k = 0; k < 3; k++)
			live &= g->acc[t->line + k].w == (uint32_t)t->insn + 2;
		if (live) {
			*line = t->line;
			return 0;
		}
	}
	xfer x;
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = chance(g, 75) ? g->C : rrange(g, 1, g->C);
	x.mem = gen_line_alloc(g, 1, 3);
	if (chance(g, 60)) {
		x.n[0] = 3;
		x.n[1] = x.n[2] = 1;
	} else {
		x.n[0] = 1;
		x.n[1] = 3;
		x.n[2] = 1;
	}
	unsigned style = chance(g, 70) ? 0 : 1;
	if (gen_load(g, &x, 0, gen_craft_params, &style))
		return -1;
	ptriple t = {x.mem, g->p->ninsns - 1};
	if (g->nparams < 8)
		g->params[g->nparams++] = t;
	else
		g->params[rbelow(g, 8)] = t;
	*line = x.mem;
	return 0;
}

void gen_rand_requant(gen *g, stq *q)
{
	q->zp = (int8_t)(chance(g, 30) ? 0 : r32(g));
	int r = rbelow(g, 100);
	if (r < 30) {
		q->lo = -128;
		q->hi = 127;
	} else if (r < 50) {
		q->lo = q->zp; /* ReLU */
		q->hi = 127;
	} else if (r < 60) {
		int hi = q->zp + (int)rbelow(g, 60); /* ReLU6-like */
		q->lo = q->zp;
		q->hi = (int8_t)(hi > 127 ? 127 : hi);
	} else {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		q->lo = a < b ? a : b;
		q->hi = a < b ? b : a;
	}
}

/* SOURCE 3's inputs: 4 new parameter lines (a LOAD of crafted rows), n
 * new SP lines of residual (a LOAD, maybe padded; the store reads every
 * step-th) */
static int get_resadd(gen *g, uint32_t n, uint32_t *param, uint32_t *res)
{
	xfer x;
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = chance(g, 85) ? g->C : rrange(g, 1, g->C);
	x.mem = gen_line_alloc(g, 1, LOOM_RESADD_PARAM_LINES);
	x.n[0] = LOOM_RESADD_PARAM_LINES;
	x.n[1] = x.n[2] = 1;
	if (chance(g, 40)) {
		x.n[0] = 1;
		x.n[1] = LOOM_RESADD_PARAM_LINES;
	}
	unsigned style = chance(g, 70) ? 0 : 1;
	if (gen_load(g, &x, 0, gen_craft_params, &style))
		return -1;
	*param = x.mem;
	memset(&x, 0, sizeof x);
	x.rw = gen_rand_rw_sp(g);
	x.mem = gen_line_alloc(g, 0, n);
	gen_plane_xfer(g, &x, n, 1, 1, 1);
	if (gen_load(g, &x, 30, NULL, NULL))
		return -1;
	*res = x.mem;
	return 0;
}

/* A store of ACC tile lines [tile, tile+P): raw, requantized, or
 * requantized plus a residual (SOURCE 3). */
static int store_acc(gen *g, uint32_t tile, uint32_t P, int early, pend *K)
{
	stq q;
	memset(&q, 0, sizeof q);
	uint32_t a = 0, n = P;
	if (P > 1 && chance(g, 30)) {
		a = rbelow(g, P);
		n = rrange(g, 1, P - a);
	}
	q.mem = tile + a;
	q.count = n;
	if (chance(g, 40)) {
		q.src = LOOM_MEM_ACC;
		q.rw = rand_rw_acc(g);
	} else if (n <= 1000 && 4 * n <= (g->sp_hi - g->sp_lo) / 2 && chance(g, 45)) {
		uint32_t lim = umin(g->R, g->C) / 4;
		q.src = LOOM_MEM_ACC_RESADD;
		q.rw = chance(g, 60) ? lim : rrange(g, 1, lim);
		q.rstep = chance(g, 60) ? 1 : rrange(g, 2, 4);
		if (get_resadd(g, (n - 1) * q.rstep + 1, &q.param, &q.res)) {
			if (early && K)
				gen_emit(g, K);
			return -1;
		}
		gen_rand_requant(g, &q);
	} else {
		q.src = LOOM_MEM_ACC_REQUANT;
		q.rw = chance(g, 60) ? g->C / 4 : rrange(g, 1, g->C / 4);
		if (get_params(g, &q.param)) {
			if (early && K)
				gen_emit(g, K);
			return -1;
		}
		gen_rand_requant(g, &q);
	}
	return gen_store(g, &q, early, K);
}

/* ---- MATMUL geometry ---- */

/* Kernel, stride, dilation: mostly small, rarely up to the 4-bit maximum. */
static uint32_t pick_k(gen *g)
{
	int r = rbelow(g, 100);
	return r < 45 ? 1 : r < 65 ? 2 : r < 90 ? 3 : r < 98 ? rrange(g, 4, 6) : rrange(g, 7, 15);
}

static uint32_t pick_s(gen *g)
{
	int r = rbelow(g, 100);
	return r < 60 ? 1 : r < 88 ? 2 : r < 97 ? 3 : rrange(g, 4, 15);
}

static uint32_t pick_d(gen *g)
{
	int r = rbelow(g, 100);
	return r < 75 ? 1 : r < 92 ? 2 : r < 97 ? 3 : rrange(g, 4, 15);
}

void gen_rand_geom(gen *g, geom *m, int gemm, uint64_t max_cycles)
{
	uint32_t R = g->R, C = g->C, fill = R + C + 1, P;
	int mode = rbelow(g, 3);
	P = mode == 0 ? rrange(g, 1, R - 1) : mode == 1 ? rrange(g, fill, fill + 2 * R) : rrange(g, 1, 2 * fill);
	if (gemm) {
		m->kw = m->kh = m->sw = m->sh = m->dw = m->dh = 1;
		m->oh = 1;
		m->ow = P;
	} else {
		m->kw = pick_k(g);
		m->kh = pick_k(g);
		m->sw = pick_s(g);
		m->sh = pick_s(g);
		m->dw = pick_d(g);
		m->dh = pick_d(g);
		m->oh = chance(g, 25) ? 1 : rrange(g, 1, umin(P, 9));
		m->ow = umax(1, P / m->oh);
	}
	m->ncb = chance(g, 50) ? 1 : chance(g, 70) ? 2 : 3;
	/* activation and weight lines stay well inside the scratchpad */
	uint64_t max_lines = umin(g->cfg->sp_lines / 4, 3072);
	for (;;) {
		uint64_t f = (uint64_t)m->ncb * m->kh * m->kw, p = (uint64_t)m->ow * m->oh;
		uint64_t inw = (uint64_t)(m->ow - 1) * m->sw + (uint64_t)(m->kw - 1) * m->dw + 3;
		uint64_t inh = (uint64_t)(m->oh - 1) * m->sh + (uint64_t)(m->kh - 1) * m->dh + 3;
		int lines_ok = m->ncb * inw * inh <= max_lines && f * C <= max_lines;
		if (lines_ok && f * (p > fill ? p : fill) <= max_cycles)
			break;
		if (!lines_ok && (m->sw > 3 || m->sh > 3 || m->dw > 3 || m->dh > 3)) {
			m->sw = umin(m->sw, 3);
			m->sh = umin(m->sh, 3);
			m->dw = umin(m->dw, 2);
			m->dh = umin(m->dh, 2);
		} else if (!lines_ok && m->oh > 1 && m->sh > 1) {
			m->sh = 1;
		} else if (!lines_ok && m->ow > 8 && m->sw > 1) {
			m->sw = 1;
		} else if (m->ncb > 1)
			m->ncb--;
		else if (m->kh > 1)
			m->kh--;
		else if (m->kw > 1)
			m->kw--;
		else if (m->oh > 1)
			m->oh--;
		else if (m->ow > 1)
			m->ow /= 2;
		else
			break;
	}
	m->inw = (m->ow - 1) * m->sw + (m->kw - 1) * m->dw + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
	m->inh = (m->oh - 1) * m->sh + (m->kh - 1) * m->dh + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
}

loom_insn gen_mk_matmul(gen *g, const geom *m, uint32_t ncb, uint32_t act, uint32_t wgt, uint32_t acc, int accum)
{
	loom_insn in = op(LOOM_OP_MATMUL);
	setf(g, &in, LOOM_F_MATMUL_ACCUMULATE, (uint32_t)accum);
	setf(g, &in, LOOM_F_MATMUL_ACT_ADDR, act);
	setf(g, &in, LOOM_F_MATMUL_WGT_ADDR, wgt);
	setf(g, &in, LOOM_F_MATMUL_ACC_ADDR, acc);
	setf(g, &in, LOOM_F_MATMUL_IN_W, m->inw);
	setf(g, &in, LOOM_F_MATMUL_IN_H, m->inh);
	setf(g, &in, LOOM_F_MATMUL_OUT_W, m->ow);
	setf(g, &in, LOOM_F_MATMUL_OUT_H, m->oh);
	setf(g, &in, LOOM_F_MATMUL_NCB, ncb);
	setf(g, &in, LOOM_F_MATMUL_KW, m->kw);
	setf(g, &in, LOOM_F_MATMUL_KH, m->kh);
	setf(g, &in, LOOM_F_MATMUL_SW, m->sw);
	setf(g, &in, LOOM_F_MATMUL_SH, m->sh);
	setf(g, &in, LOOM_F_MATMUL_DW, m->dw);
	setf(g, &in, LOOM_F_MATMUL_DH, m->dh);
	return in;
}

/* The activation tile [cb][y][x] of m at act: one LOAD or one per plane. */
int gen_load_act(gen *g, const geom *m, uint32_t act, int reuse_pct)
{
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = gen_rand_rw_sp(g);
	if (m->ncb > 1 && chance(g, 40)) {
		for (uint32_t cb = 0; cb < m->ncb; cb++) {
			gen_plane_xfer(g, &x, m->inw, m->inh, 1, 1);
			x.mem = act + cb * m->inh * m->inw;
			if (gen_load(g, &x, reuse_pct, NULL, NULL))
				return -1;
		}
		return 0;
	}
	gen_plane_xfer(g, &x, m->inw, m->inh, m->ncb, 1);
	x.mem = act;
	return gen_load(g, &x, reuse_pct, NULL, NULL);
}

/* Weights of m at wgt: NCB*KH*KW folds of C lines. */
static int load_wgt(gen *g, const geom *m, uint32_t ncb, uint32_t wgt)
{
	uint32_t C = g->C, folds = ncb * m->kh * m->kw;
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 80) ? g->R / 4 : gen_rand_rw_sp(g);
	x.mem = wgt;
	int r = rbelow(g, 100);
	if (r < 30 && folds <= 12) { /* one LOAD per fold: a burst of loads */
		for (uint32_t f = 0; f < folds; f++) {
			x.n[0] = C;
			x.n[1] = x.n[2] = 1;
			x.mem = wgt + f * C;
			if (gen_load(g, &x, 10, NULL, NULL))
				return -1;
		}
		return 0;
	}
	if (r < 45 && folds <= 255 && C > 1) { /* padded columns */
		x.pad[3] = rrange(g, 1, umin(3, C - 1));
		x.n[0] = C - x.pad[3];
		x.n[1] = 1;
		x.n[2] = folds;
		x.padv = (uint8_t)r32(g);
	} else if (r < 75 && folds * C <= 4095) {
		x.n[0] = folds * C;
		x.n[1] = x.n[2] = 1;
	} else {
		x.n[0] = C;
		x.n[1] = m->kh * m->kw;
		x.n[2] = ncb;
	}
	return gen_load(g, &x, 10, NULL, NULL);
}

/* ---- blocks ---- */

void gen_blk_conv(gen *g)
{
	geom m;
	gen_rand_geom(g, &m, chance(g, 35), 6000);
	uint32_t C = g->C, P = m.ow * m.oh, plane = m.inh * m.inw;
	uint32_t act = gen_line_alloc(g, 0, m.ncb * plane), wl = m.ncb * m.kh * m.kw * C;
	/* rarely the weights are lines of the activation tile itself */
	int alias = m.ncb * plane >= wl && chance(g, 6);
	uint32_t wgt = alias ? act + rbelow(g, m.ncb * plane - wl + 1) : gen_line_alloc(g, 0, wl);
	int twice = chance(g, 12);
	uint32_t wgt2 = twice ? gen_line_alloc(g, 0, wl) : 0;
	if (alias) {
		if (gen_load_act(g, &m, act, 15))
			return;
	} else if (chance(g, 50)) {
		if (load_wgt(g, &m, m.ncb, wgt) || gen_load_act(g, &m, act, 15))
			return;
	} else if (gen_load_act(g, &m, act, 15) || load_wgt(g, &m, m.ncb, wgt)) {
		return;
	}
	if (twice && load_wgt(g, &m, m.ncb, wgt2))
		return;
	/* sometimes the vector unit rewrites the activations in place first */
	if (!alias && chance(g, 10) && gen_vec_inplace(g, act, m.inw, m.inh, m.ncb, VF_NOSTORE))
		return;
	uint32_t tile = gen_line_alloc(g, 1, P);
	int mode = rbelow(g, 100), accum = 0;
	if (mode < 25) { /* a bias tile, then accumulate */
		xfer x;
		memset(&x, 0, sizeof x);
		x.acc = 1;
		x.rw = rand_rw_acc(g);
		gen_plane_xfer(g, &x, m.ow, m.oh, 1, chance(g, 30));
		x.padv = 0;
		x.mem = tile;
		if (gen_load(g, &x, 0, craft_acc, NULL))
			return;
		accum = 1;
	}
	loom_insn mm;
	if (mode >= 25 && mode < 45 && m.ncb > 1) { /* one MATMUL per channel block */
		for (uint32_t cb = 0; cb < m.ncb; cb++) {
			mm = gen_mk_matmul(g, &m, 1, act + cb * plane, wgt + cb * m.kh * m.kw * C, tile, cb > 0 || accum);
			gen_emit_insn(g, &mm, LOOM_COSIM_DATA);
		}
	} else {
		mm = gen_mk_matmul(g, &m, m.ncb, act, wgt, tile, accum);
		if (mode >= 45 && mode < 60) { /* again, accumulating */
			gen_emit_insn(g, &mm, LOOM_COSIM_DATA);
			setf(g, &mm, LOOM_F_MATMUL_ACCUMULATE, 1);
		}
		pend K = gen_mkpend(&mm, LOOM_COSIM_DATA);
		if (store_acc(g, tile, P, 1, &K))
			return;
	}
	if (chance(g, 35) && store_acc(g, tile, P, 0, NULL))
		return;
	if (twice) {
		uint32_t tile2 = gen_line_alloc(g, 1, P);
		mm = gen_mk_matmul(g, &m, m.ncb, act, wgt2, tile2, 0);
		gen_emit_insn(g, &mm, LOOM_COSIM_DATA);
		if (store_acc(g, tile2, P, 0, NULL))
			return;
	}
	/* sometimes the vector unit rewrites the tile the array has read */
	if (chance(g, 8) && gen_vec_inplace(g, act, m.inw, m.inh, m.ncb, 0))
		return;
	if (chance(g, 15)) { /* the activation tile back out */
		stq q;
		memset(&q, 0, sizeof q);
		q.src = LOOM_MEM_SP;
		q.rw = gen_rand_rw_sp(g);
		q.count = rrange(g, 1, umin(64, m.ncb * plane));
		q.mem = act + rbelow(g, m.ncb * plane - q.count + 1);
		gen_store(g, &q, 0, NULL);
	}
}

/* Double/triple-buffered tiles: LOAD(t+nb) reuses the buffer of MATMUL(t),
 * STORE(t) reads the ACC tile MATMUL(t+no) overwrites. */
void gen_blk_pipeline(gen *g)
{
	geom m;
	gen_rand_geom(g, &m, chance(g, 60), 2500);
	uint32_t C = g->C, P = m.ow * m.oh, A = m.ncb * m.inh * m.inw;
	uint32_t T = rrange(g, 2, 6), nb = rrange(g, 1, 3), no = rrange(g, 1, 2);
	uint32_t abuf[3], obuf[2];
	for (uint32_t i = 0; i < nb; i++)
		abuf[i] = gen_line_alloc(g, 0, A);
	for (uint32_t i = 0; i < no; i++)
		obuf[i] = gen_line_alloc(g, 1, P);
	uint32_t wgt = gen_line_alloc(g, 0, m.ncb * m.kh * m.kw * C);
	if (load_wgt(g, &m, m.ncb, wgt))
		return;
	uint32_t param = 0;
	int requant = chance(g, 50);
	if (requant && get_params(g, &param))
		return;
	stq sq;
	memset(&sq, 0, sizeof sq);
	sq.src = requant ? LOOM_MEM_ACC_REQUANT : LOOM_MEM_ACC;
	sq.rw = requant ? (chance(g, 60) ? C / 4 : rrange(g, 1, C / 4)) : rand_rw_acc(g);
	sq.param = param;
	gen_rand_requant(g, &sq);
	if (!requant)
		sq.zp = sq.lo = sq.hi = 0;
	sq.count = P;
	for (uint32_t t = 0; t < umin(nb, T); t++)
		if (gen_load_act(g, &m, abuf[t % nb], 10))
			return;
	for (uint32_t t = 0; t < T && !g->failed && !g->full; t++) {
		loom_insn mm = gen_mk_matmul(g, &m, m.ncb, abuf[t % nb], wgt, obuf[t % no], 0);
		pend K = gen_mkpend(&mm, LOOM_COSIM_DATA);
		sq.mem = obuf[t % no];
		int nextload = t + nb < T;
		int r = rbelow(g, 3);
		if (r == 0 && nextload) {
			/* LOAD(t+nb) may go before MATMUL(t), waiting for it */
			xfer x;
			memset(&x, 0, sizeof x);
			x.rw = gen_rand_rw_sp(g);
			gen_plane_xfer(g, &x, m.inw, m.inh, m.ncb, 1);
			x.mem = abuf[t % nb];
			loom_insn li;
			if (build_load(g, &x, 10, NULL, NULL, &li)) {
				gen_emit(g, &K);
				return;
			}
			pend I = gen_mkpend(&li, LOOM_COSIM_DATA);
			gen_emit2(g, &K, &I);
			if (gen_store(g, &sq, 0, NULL))
				return;
		} else if (r == 1) {
			if (gen_store(g, &sq, 1, &K))
				return;
			if (nextload && gen_load_act(g, &m, abuf[t % nb], 10))
				return;
		} else {
			int loadfirst = chance(g, 50);
			gen_emit(g, &K);
			if (loadfirst && nextload && gen_load_act(g, &m, abuf[t % nb], 10))
				return;
			if (gen_store(g, &sq, 0, NULL))
				return;
			if (!loadfirst && nextload && gen_load_act(g, &m, abuf[t % nb], 10))
				return;
		}
	}
}

/* SP lines in, SP bytes out: the load -> store ordering goes through the
 * compute queue (sync MATMULs). */
void gen_blk_copy(gen *g, int readback)
{
	uint32_t w = rrange(g, 1, 12), h = rrange(g, 1, 6), planes = rrange(g, 1, 3);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = gen_rand_rw_sp(g);
	gen_plane_xfer(g, &x, w, h, planes, chance(g, 50));
	uint32_t lines = xfer_lines(&x);
	x.mem = gen_line_alloc(g, 0, lines);
	if (gen_load(g, &x, readback ? 100 : 20, NULL, NULL))
		return;
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_SP;
	q.rw = gen_rand_rw_sp(g);
	q.count = chance(g, 60) ? lines : rrange(g, 1, lines);
	q.mem = x.mem + rbelow(g, lines - q.count + 1);
	gen_store(g, &q, 0, NULL);
}

void gen_blk_acc(gen *g)
{
	uint32_t w = rrange(g, 1, 10), h = rrange(g, 1, 5);
	xfer x;
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = rand_rw_acc(g);
	gen_plane_xfer(g, &x, w, h, 1, chance(g, 30));
	x.padv = 0;
	uint32_t lines = xfer_lines(&x);
	x.mem = gen_line_alloc(g, 1, lines);
	if (gen_load(g, &x, 0, chance(g, 70) ? craft_acc : NULL, NULL))
		return;
	if (store_acc(g, x.mem, lines, 0, NULL))
		return;
	if (chance(g, 30))
		store_acc(g, x.mem, lines, 0, NULL);
}

/* Loads nothing reads: they run alongside whatever else is in flight. */
void gen_blk_indep(gen *g)
{
	/* sometimes a burst longer than the load queue */
	unsigned n = chance(g, 25) ? rrange(g, LOOM_QUEUE_DEPTH + 1, LOOM_QUEUE_DEPTH + 6) : rrange(g, 1, 3);
	for (unsigned i = 0; i < n; i++) {
		xfer x;
		memset(&x, 0, sizeof x);
		x.acc = chance(g, 30);
		x.rw = x.acc ? rand_rw_acc(g) : gen_rand_rw_sp(g);
		gen_plane_xfer(g, &x, rrange(g, 1, 16), rrange(g, 1, 4), 1, !x.acc);
		if (x.acc)
			x.padv = 0;
		x.mem = gen_line_alloc(g, x.acc, xfer_lines(&x));
		if (gen_load(g, &x, 30, NULL, NULL))
			return;
	}
}
