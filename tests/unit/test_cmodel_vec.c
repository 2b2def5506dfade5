/* test_cmodel_vec.c - the C model's vector unit (ELTWISE, POOL, DWCONV,
 * LUT), half of test_cmodel (test_cmodel.h): every decoder check in its
 * order (loom_insn_check and the C model's ERR_*), reserved bits,
 * disassembly, results against hand-computed values, the cycle estimate,
 * and the token traffic between the vector unit and the other queues. */
#include "check.h"
#include "test_cmodel.h"
#include "common/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct elt {
	unsigned fn, bm, shift;
	uint32_t a, b, dst, planes, pl;
	int8_t zpa, zpb, zp, lo, hi;
	int16_t ma, mb;
	int32_t mult;
};

static loom_insn eltwise(const struct elt *e, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_ELTWISE, deps);
	setf(&in, LOOM_F_ELTWISE_FUNC, e->fn);
	setf(&in, LOOM_F_ELTWISE_B_MODE, e->bm);
	setf(&in, LOOM_F_ELTWISE_SHIFT, e->shift);
	setf(&in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)e->zp);
	setf(&in, LOOM_F_ELTWISE_SRC_A, e->a);
	setf(&in, LOOM_F_ELTWISE_ZP_A, (uint8_t)e->zpa);
	setf(&in, LOOM_F_ELTWISE_SRC_B, e->b);
	setf(&in, LOOM_F_ELTWISE_ZP_B, (uint8_t)e->zpb);
	setf(&in, LOOM_F_ELTWISE_DST, e->dst);
	setf(&in, LOOM_F_ELTWISE_CLIP_LO, (uint8_t)e->lo);
	setf(&in, LOOM_F_ELTWISE_PLANE_LINES, e->pl);
	setf(&in, LOOM_F_ELTWISE_CLIP_HI, (uint8_t)e->hi);
	setf(&in, LOOM_F_ELTWISE_PLANES, e->planes);
	setf(&in, LOOM_F_ELTWISE_MULT_A, (uint16_t)e->ma);
	setf(&in, LOOM_F_ELTWISE_MULT_B, (uint16_t)e->mb);
	setf(&in, LOOM_F_ELTWISE_MULT, (uint32_t)e->mult);
	return in;
}

struct win {
	uint32_t src, dst, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh;
	int8_t zpi, zp, lo, hi;
	/* POOL */
	unsigned fn, shift;
	int32_t mult;
	/* DWCONV */
	uint32_t wgt, par;
};

static loom_insn pool(const struct win *w, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_POOL, deps);
	setf(&in, LOOM_F_POOL_FUNC, w->fn);
	setf(&in, LOOM_F_POOL_SHIFT, w->shift);
	setf(&in, LOOM_F_POOL_ZP_OUT, (uint8_t)w->zp);
	setf(&in, LOOM_F_POOL_SRC, w->src);
	setf(&in, LOOM_F_POOL_ZP_IN, (uint8_t)w->zpi);
	setf(&in, LOOM_F_POOL_DST, w->dst);
	setf(&in, LOOM_F_POOL_CLIP_LO, (uint8_t)w->lo);
	setf(&in, LOOM_F_POOL_CLIP_HI, (uint8_t)w->hi);
	setf(&in, LOOM_F_POOL_IN_W, w->inw);
	setf(&in, LOOM_F_POOL_IN_H, w->inh);
	setf(&in, LOOM_F_POOL_OUT_W, w->ow);
	setf(&in, LOOM_F_POOL_OUT_H, w->oh);
	setf(&in, LOOM_F_POOL_NCB, w->ncb);
	setf(&in, LOOM_F_POOL_KW, w->kw);
	setf(&in, LOOM_F_POOL_KH, w->kh);
	setf(&in, LOOM_F_POOL_SW, w->sw);
	setf(&in, LOOM_F_POOL_SH, w->sh);
	setf(&in, LOOM_F_POOL_DW, w->dw);
	setf(&in, LOOM_F_POOL_DH, w->dh);
	setf(&in, LOOM_F_POOL_MULT, (uint32_t)w->mult);
	return in;
}

static loom_insn dwconv(const struct win *w, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_DWCONV, deps);
	setf(&in, LOOM_F_DWCONV_ZP_IN, (uint8_t)w->zpi);
	setf(&in, LOOM_F_DWCONV_ZP_OUT, (uint8_t)w->zp);
	setf(&in, LOOM_F_DWCONV_SRC, w->src);
	setf(&in, LOOM_F_DWCONV_CLIP_LO, (uint8_t)w->lo);
	setf(&in, LOOM_F_DWCONV_WGT, w->wgt);
	setf(&in, LOOM_F_DWCONV_CLIP_HI, (uint8_t)w->hi);
	setf(&in, LOOM_F_DWCONV_PARAM, w->par);
	setf(&in, LOOM_F_DWCONV_DST, w->dst);
	setf(&in, LOOM_F_DWCONV_NCB, w->ncb);
	setf(&in, LOOM_F_DWCONV_IN_W, w->inw);
	setf(&in, LOOM_F_DWCONV_IN_H, w->inh);
	setf(&in, LOOM_F_DWCONV_KW, w->kw);
	setf(&in, LOOM_F_DWCONV_KH, w->kh);
	setf(&in, LOOM_F_DWCONV_OUT_W, w->ow);
	setf(&in, LOOM_F_DWCONV_OUT_H, w->oh);
	setf(&in, LOOM_F_DWCONV_SW, w->sw);
	setf(&in, LOOM_F_DWCONV_SH, w->sh);
	setf(&in, LOOM_F_DWCONV_DW, w->dw);
	setf(&in, LOOM_F_DWCONV_DH, w->dh);
	return in;
}

static loom_insn lut(uint32_t src, uint32_t dst, uint32_t table, uint32_t lines, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_LUT, deps);
	setf(&in, LOOM_F_LUT_SRC, src);
	setf(&in, LOOM_F_LUT_DST, dst);
	setf(&in, LOOM_F_LUT_TABLE, table);
	setf(&in, LOOM_F_LUT_LINES, lines);
	return in;
}

/* round num / 2^e to nearest, ties away from zero (e < 62, plain integers) */
static int64_t rha(int64_t num, unsigned e)
{
	int64_t d = (int64_t)1 << e, a = num < 0 ? -num : num;
	int64_t q = a / d + (2 * (a % d) >= d ? 1 : 0);
	return num < 0 ? -q : q;
}

static int8_t clip8(int64_t v, int8_t lo, int8_t hi) { return (int8_t)(v < lo ? lo : v > hi ? hi : v); }

/* Cycles the C model estimates for one vector instruction (the timing
 * model of common/timing.c), as a plain loop over the groups of each plane
 * that follows npu_vector.sv's sequencer when no bank is contended: SPlane
 * 2 + extra cycles after the accept (extra: LUT's table lines), per_plane
 * parameter lines after the last finish, per group an SGroup cycle, then
 * per tap w weight lines and one line per position; the finish of a group
 * is handed over at its last tap's first read (cycle L) and requantizes
 * line t in L + t + 3. A first tap (not the last) starts after the
 * previous finish took its line t (L + t + 4), a last tap and the
 * parameters after its last line (L + g + 3); the last line is written 4
 * cycles after it leaves the lanes, done the cycle after, and BUSY_COMPUTE
 * runs from the accept to the cycle after the done pulse. */
static uint64_t vec_cyc(uint64_t planes, uint64_t P, uint64_t taps, uint64_t w, uint64_t per_plane, uint64_t extra)
{
	uint64_t s = 2 + extra, L = 0, fg = 0;
	for (uint64_t pl = 0; pl < planes; pl++) {
		uint64_t c = s + 1;
		if (per_plane) {
			if (fg && c < L + fg + 3)
				c = L + fg + 3;
			c += per_plane;
		}
		for (uint64_t p = 0; p < P; p += LOOM_VEC_GROUP) {
			uint64_t g = P - p < LOOM_VEC_GROUP ? P - p : LOOM_VEC_GROUP, x = c + 1;
			for (uint64_t tp = 0; tp < taps; tp++) {
				x += w;
				if (tp + 1 == taps) {
					if (fg && x < L + fg + 3)
						x = L + fg + 3;
					L = x, fg = g;
				} else if (tp == 0 && fg && x < L + 4) {
					x = L + 4;
				}
				x += g;
			}
			c = x;
		}
		s = c;
	}
	return L + fg + 7 + 1;
}

/* The (position, tap) pairs column c of a segment of s positions serves in
 * a pass of mc taps (stride sw, dilation dw): a bit per tap m with
 * c = j*sw + m*dw, j < s; *j0 and *jl the positions of tap 0 and tap
 * mc - 1 where served. A brute-force check of every m, not the walker. */
static unsigned dw_serves(uint64_t c, uint64_t s, uint64_t mc, uint64_t sw, uint64_t dw, uint64_t *j0, uint64_t *jl)
{
	unsigned mask = 0;
	for (uint64_t m = 0; m < mc; m++)
		if (c >= m * dw && (c - m * dw) % sw == 0 && (c - m * dw) / sw < s) {
			mask |= 1u << m;
			if (m == 0)
				*j0 = c / sw;
			if (m + 1 == mc)
				*jl = (c - m * dw) / sw;
		}
	return mask;
}

/* The cycles of a DWCONV (input reuse, docs/ISA.md "Vector unit"), as a
 * plain loop over every read of npu_vector.sv's sequencer when no bank is
 * contended: per group an SGroup cycle, then per pass (mc =
 * min(M = vec_macs, taps left in the kernel row)) mc weight lines, then
 * per segment (the group's positions in one output row, s of them) one read
 * per column from 0 to (s - 1)*SW + (mc - 1)*DW that serves some position j
 * and tap m (column j*SW + m*DW), in increasing order. The last pass starts
 * after the previous group's last line left the lanes (fire + 1) and hands
 * the finish over; its read of tap mc - 1 at position j makes t + j ready 3
 * cycles later; a first-pass read of tap 0 at position j waits for the
 * previous finish's line t + j to have left the lanes. */
static uint64_t dw_cyc(uint64_t M, uint64_t planes, uint64_t oh, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw,
		       uint64_t dw)
{
	uint64_t x = 2, P = oh * ow, fg = 0, fire[LOOM_VEC_GROUP], rdy[LOOM_VEC_GROUP], last_fire = 0;
	for (uint64_t pl = 0; pl < planes; pl++) {
		x++; /* SPlane */
		if (fg && x < last_fire + 1)
			x = last_fire + 1;
		x += 9; /* parameters */
		for (uint64_t p0 = 0; p0 < P; p0 += LOOM_VEC_GROUP) {
			uint64_t g = P - p0 < LOOM_VEC_GROUP ? P - p0 : LOOM_VEC_GROUP, L = 0;
			x++; /* SGroup */
			for (uint64_t ky = 0; ky < kh; ky++)
				for (uint64_t kx = 0; kx < kw;) {
					uint64_t mc = kw - kx < M ? kw - kx : M;
					int first = !ky && !kx, last = ky + 1 == kh && kx + mc == kw;
					x += mc;
					for (uint64_t t = 0; t < g;) {
						uint64_t s = ow - (p0 + t) % ow;
						if (s > g - t)
							s = g - t;
						for (uint64_t c = 0; c <= (s - 1) * sw + (mc - 1) * dw; c++) {
							uint64_t j0 = 0, jl = 0;
							unsigned mask = dw_serves(c, s, mc, sw, dw, &j0, &jl);
							if (!mask)
								continue;
							if (last && !t && !c) {
								if (fg && x < last_fire + 1)
									x = last_fire + 1;
								L = x;
							} else if (first && !last && (mask & 1) && t + j0 < fg &&
								   x < fire[t + j0] + 1) {
								x = fire[t + j0] + 1;
							}
							if (last && mask >> (mc - 1) & 1)
								rdy[t + jl] = x + 3;
							x++;
						}
						t += s;
					}
					kx += mc;
				}
			for (uint64_t k = 0; k < g; k++) {
				uint64_t f = k ? fire[k - 1] + 1 : L + 1;
				fire[k] = rdy[k] > f ? rdy[k] : f;
			}
			fg = g;
			last_fire = fire[g - 1];
		}
	}
	return last_fire + 5 + 1;
}

/* The lines a DWCONV reads per plane, as dw_cyc walks them */
static uint64_t dw_reads(uint64_t M, uint64_t oh, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw, uint64_t dw)
{
	uint64_t n = 9, P = oh * ow;
	for (uint64_t p0 = 0; p0 < P; p0 += LOOM_VEC_GROUP) {
		uint64_t g = P - p0 < LOOM_VEC_GROUP ? P - p0 : LOOM_VEC_GROUP;
		for (uint64_t ky = 0; ky < kh; ky++)
			for (uint64_t kx = 0; kx < kw;) {
				uint64_t mc = kw - kx < M ? kw - kx : M;
				n += mc;
				for (uint64_t t = 0; t < g;) {
					uint64_t s = ow - (p0 + t) % ow;
					s = s > g - t ? g - t : s;
					for (uint64_t c = 0, j0, jl; c <= (s - 1) * sw + (mc - 1) * dw; c++)
						n += dw_serves(c, s, mc, sw, dw, &j0, &jl) != 0;
					t += s;
				}
				kx += mc;
			}
	}
	return n;
}

/* The energy events of vec_run around vector instructions over `planes`
 * planes of P positions with `taps` taps, in groups of LOOM_VEC_GROUP: the
 * LOADs write 2L lines and the STORE reads L; each tap of each position
 * reads and folds one line, each group reads w more lines per tap, and
 * `extra` lines (parameters, tables) are read; each position writes one
 * line of R requantized values. */
static void vec_evt(struct t *t, const char *what, uint32_t L, uint64_t planes, uint64_t P, uint64_t taps,
		    uint64_t w, uint64_t extra)
{
	uint64_t e[LOOM_EVT_COUNT] = {0};
	e[LOOM_EVT_SP_WR] = 2 * (uint64_t)L + planes * P;
	e[LOOM_EVT_SP_RD] = L + extra;
	for (uint64_t pl = 0; pl < planes; pl++)
		for (uint64_t p = 0; p < P; p += LOOM_VEC_GROUP) {
			uint64_t g = P - p < LOOM_VEC_GROUP ? P - p : LOOM_VEC_GROUP;
			e[LOOM_EVT_SP_RD] += taps * (g + w);
			e[LOOM_EVT_VEC_LINES] += taps * g;
		}
	e[LOOM_EVT_RQ_VALUES] = planes * P * t->R;
	evt_eq(t, what, e);
}

#define PREFIX(s, lit) (!strncmp((s), lit, sizeof lit - 1))
#define VIMG 0x30000u
#define VOUT 0x60000u

/* LOAD the L-line image into SP lines 0..L-1 (after a LOAD of garbage
 * there), run ops (the first pops the
 * LOAD's token, the last pushes one to the STORE), STORE SP lines 0..L-1
 * back and read them into got. Checks INSNS and MACS = 0; *busy gets
 * BUSY_COMPUTE (the duration of the ops). */
static int vec_run(struct t *t, const char *what, const int8_t *img, uint32_t L, loom_insn *ops, size_t nops,
		   int8_t *got, uint64_t *busy)
{
	const uint32_t R = t->R;
	loom_insn p[16];
	size_t k = 0;
	wr(t, VIMG, img, (size_t)L * R);
	memset(got, 0x5a, (size_t)L * R);
	wr(t, VOUT, got, (size_t)L * R);
	/* garbage first: the image's LOAD starts only when this one is done, so
	 * an op that does not wait for its token reads garbage */
	p[k++] = ld(LOOM_MEM_SP, VOUT, 0, R / 4, L, R, 1, 0, 1, 0, 0);
	p[k++] = ld(LOOM_MEM_SP, VIMG, 0, R / 4, L, R, 1, 0, 1, 0, PUSH_NEXT);
	for (size_t i = 0; i < nops; i++) {
		p[k] = ops[i];
		if (i == 0)
			p[k].w[0] |= POP_PREV;
		if (i + 1 == nops)
			p[k].w[0] |= PUSH_NEXT;
		k++;
	}
	p[k++] = st(LOOM_MEM_SP, VOUT, 0, R / 4, L, R, 1, 0, 1, 0, POP_PREV);
	p[k++] = finish();
	struct res r = run_prog(t, PROG, p, k);
	rd(t, VOUT, got, (size_t)L * R);
	if (busy)
		*busy = ctr(t, LOOM_CTR_BUSY_COMPUTE);
	return CHECK(done_ok(&r) && ctr(t, LOOM_CTR_INSNS) == nops + 3 && ctr(t, LOOM_CTR_MACS_LO) == 0 &&
		     ctr(t, LOOM_CTR_MACS_HI) == 0,
		     "%s: %s runs (status %x %s info %x, INSNS %u, MACS %u)", t->cfg.name, what, r.status,
		     loom_err_name(r.cause), r.info, ctr(t, LOOM_CTR_INSNS), ctr(t, LOOM_CTR_MACS_LO));
}

/* The cycles of ops as vec_cyc counts them, and as vec_run measured them
 * (busy): the ops run again alone (no tokens, garbage data) with each
 * DST a bank further on, where no read of theirs holds the bank their
 * writes need: BUSY_COMPUTE must equal ec. With DST in the bank the ops
 * read (vec_run), a write waits while a read holds its bank: at least ec. */
static void vec_cycles(struct t *t, const char *what, const loom_insn *ops, size_t nops, uint64_t busy, uint64_t ec)
{
	loom_insn p[8];
	size_t k = 0;
	for (size_t i = 0; i < nops && k + 1 < sizeof p / sizeof p[0]; i++) {
		p[k] = ops[i];
		enum loom_field f = LOOM_F_LUT_DST;
		switch (loom_insn_opcode(&p[k])) {
		case LOOM_OP_ELTWISE: f = LOOM_F_ELTWISE_DST; break;
		case LOOM_OP_POOL: f = LOOM_F_POOL_DST; break;
		case LOOM_OP_DWCONV: f = LOOM_F_DWCONV_DST; break;
		default: break;
		}
		setf(&p[k], f, (uint32_t)loom_insn_get(&p[k], f) + t->cfg.sp_bank_lines);
		k++;
	}
	p[k++] = finish();
	struct res r = run_prog(t, PROG, p, k);
	uint64_t apart = ctr(t, LOOM_CTR_BUSY_COMPUTE);
	CHECK(done_ok(&r) && apart == ec, "%s: %s cycles with DST a bank further %llu == %llu", t->cfg.name, what,
	      (unsigned long long)apart, (unsigned long long)ec);
	CHECK(busy >= ec, "%s: %s cycles %llu >= %llu", t->cfg.name, what, (unsigned long long)busy,
	      (unsigned long long)ec);
}

/* compare lines [first, first+n) of got and exp; report the first difference */
static int lines_eq(struct t *t, const int8_t *got, const int8_t *exp, uint32_t first, uint32_t n, const char *what)
{
	const uint32_t R = t->R;
	int bad = 0;
	for (uint32_t i = first * R; i < (first + n) * R; i++)
		if (got[i] != exp[i]) {
			if (!bad)
				printf("     %s: line %u lane %u: got %d want %d\n", what, i / R, i % R, got[i], exp[i]);
			bad++;
		}
	return CHECK(!bad, "%s: %s: %u lines match (%d bytes wrong)", t->cfg.name, what, n, bad);
}

static void rand_i8(struct t *t, int8_t *p, size_t n, int lo, int hi)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (int8_t)(lo + (int)(rnd(t) % (uint32_t)(hi - lo + 1)));
}

/* one decoder case: loom_insn_check gives exactly (cause, field) */
static void vchk(struct t *t, const char *what, const loom_insn *in, unsigned cause, uint32_t field)
{
	uint32_t f = 0x12345678u;
	unsigned c = loom_insn_check(&t->cfg, in, &f);
	CHECK(c == cause && f == field, "%s: check %s -> %s %s (got %s %s)", t->cfg.name, what,
	      loom_err_name(cause), field == LOOM_INFO_NONE ? "-" : loom_field_name(field), loom_err_name(c),
	      f == LOOM_INFO_NONE ? "-" : loom_field_name(f));
}

/* A defect: set field f to v; expected BAD_FIELD / SP_RANGE on field e. */
struct defect {
	enum loom_field f;
	uint32_t v;
	unsigned cause;
	enum loom_field e;
};

/* Apply the defects from the last to the first: after each one the
 * decoder must report it (it comes earlier in the check order than every
 * defect already present), so every check fires and the order is held. */
static void ladder(struct t *t, const char *opn, loom_insn in, const struct defect *d, size_t n)
{
	char what[96];
	vchk(t, opn, &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	for (size_t i = n; i-- > 0;) {
		setf(&in, d[i].f, d[i].v);
		snprintf(what, sizeof what, "%s %s=%d (defect %zu of %zu)", opn, loom_field_name(d[i].f),
			 (int)d[i].v, i + 1, n);
		vchk(t, what, &in, d[i].cause, d[i].e);
	}
}

#define BADF(f, v) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_BAD_FIELD, LOOM_F_##f}
#define BADW(f, v, e) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_BAD_FIELD, LOOM_F_##e}
#define SPR(f, v) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_SP_RANGE, LOOM_F_##f}

/* The base instructions of the decoder checks. ELTWISE: MUL (so the
 * MULT_A / MULT_B defects apply), 3 planes of 5 lines; POOL: MAX, window
 * (4-1)*2 + (3-1)*1 = 8 < 9, (3-1)*3 + (2-1)*1 = 7 < 8; DWCONV. */
static const struct elt chk_elt = {LOOM_ELT_MUL, LOOM_BMODE_LINE, 7, 0, 100, 200, 3, 5,
				   1, 2, 3, -128, 0, 0, 0, 1 << 30};
static const struct win chk_pool = {0, 500, 9, 8, 4, 3, 2, 3, 2, 2, 3, 1, 1, 0, 0, -128, 100,
				    LOOM_POOL_MAX, 0, 0, 0, 0};
static const struct win chk_dw = {0, 700, 9, 8, 4, 3, 2, 3, 2, 2, 3, 1, 1, 0, 0, -128, 0, 0, 0, 0, 300, 400};

/* ELTWISE: every check in order, the edges of each range */
static void test_vec_checks_eltwise(struct t *t)
{
	const uint32_t spl = t->cfg.sp_lines;
	const struct elt e = chk_elt;
	loom_insn in;

	const struct defect de[] = {
		BADF(ELTWISE_FUNC, 2),
		BADF(ELTWISE_B_MODE, 3),
		BADF(ELTWISE_MULT_A, 1),
		BADF(ELTWISE_MULT_B, 0x8000),
		BADF(ELTWISE_CLIP_LO, 5),
		SPR(ELTWISE_SRC_A, spl - 15 + 1),
		SPR(ELTWISE_SRC_B, spl - 15 + 1),
		SPR(ELTWISE_DST, spl - 15 + 1),
	};
	ladder(t, "ELTWISE", eltwise(&e, 0), de, NI(de));
	struct elt ok = e;
	ok.a = ok.b = ok.dst = spl - 15;
	in = eltwise(&ok, POP_PREV | POP_NEXT | PUSH_PREV | PUSH_NEXT);
	vchk(t, "ELTWISE ending at the last SP line, all token bits", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.fn = LOOM_ELT_ADD, ok.ma = -1, ok.mb = 0x7fff;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE ADD with MULT_A, MULT_B", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.lo = -128, ok.hi = 127;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE clip [-128,127]", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.lo = 0, ok.hi = -128;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE clip [0,-128] (signed compare)", &in, LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_CLIP_LO);
	ok = e;
	ok.bm = LOOM_BMODE_PLANE, ok.b = spl - 3;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 1: SRC_B + PLANES = SP lines", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.b = spl - 2;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 1: SRC_B + PLANES past SP", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_B);
	ok.bm = LOOM_BMODE_ONE, ok.b = spl - 1;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 2: SRC_B = last line", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.b = spl;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 2: SRC_B past SP", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_B);
	ok = e;
	ok.planes = 0, ok.a = ok.b = ok.dst = 0xffffff;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.planes = 3, ok.pl = 0;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANE_LINES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.planes = 512, ok.pl = 1u << 23, ok.a = ok.b = ok.dst = 0; /* n = 2^32 */
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANES*PLANE_LINES = 2^32 (64-bit sum)", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_A);
}

/* POOL, DWCONV, LUT: every check in order, the edges of each range */
static void test_vec_checks_window(struct t *t)
{
	const uint32_t spl = t->cfg.sp_lines, R = t->R, TL = (256 + R - 1) / R;
	const struct win w = chk_pool, d = chk_dw;
	loom_insn in;

	const struct defect dp[] = {
		BADF(POOL_ZP_IN, 1),
		BADF(POOL_ZP_OUT, 0x80),
		BADF(POOL_SHIFT, 31),
		BADF(POOL_MULT, 0x80000000u),
		BADF(POOL_CLIP_LO, 0x7f),
		BADF(POOL_IN_W, 0), BADF(POOL_IN_H, 0), BADF(POOL_OUT_W, 0), BADF(POOL_OUT_H, 0),
		BADF(POOL_NCB, 0), BADF(POOL_KW, 0), BADF(POOL_KH, 0), BADF(POOL_SW, 0),
		BADF(POOL_SH, 0), BADF(POOL_DW, 0), BADF(POOL_DH, 0),
		BADW(POOL_OUT_W, 5, POOL_IN_W),  /* 4*2 + 2 = 10 >= 9 */
		BADW(POOL_DH, 2, POOL_IN_H),     /* 2*3 + 1*2 = 8 >= 8 */
		SPR(POOL_SRC, spl - 2 * 8 * 9 + 1),
		SPR(POOL_DST, spl - 2 * 3 * 4 + 1),
	};
	ladder(t, "POOL", pool(&w, 0), dp, NI(dp));
	struct win wo = w;
	wo.fn = LOOM_POOL_AVG, wo.zpi = -1, wo.zp = 3, wo.shift = 31, wo.mult = -5;
	wo.src = spl - 2 * 8 * 9, wo.dst = spl - 2 * 3 * 4 - 2 * 8 * 9;
	in = pool(&wo, POP_PREV | PUSH_NEXT);
	vchk(t, "POOL AVG with ZP_IN, ZP_OUT, SHIFT, MULT at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	wo = w;
	wo.kw = 255, wo.kh = 255, wo.sw = 255, wo.sh = 255, wo.dw = 15, wo.dh = 15;
	wo.inw = 4095, wo.inh = 4095, wo.ow = 1, wo.oh = 1, wo.ncb = 255;
	in = pool(&wo, 0);
	vchk(t, "POOL 255 x 4095 x 4095 input (64-bit sum)", &in, LOOM_ERR_SP_RANGE, LOOM_F_POOL_SRC);

	/* DWCONV */
	const struct defect dd[] = {
		BADF(DWCONV_CLIP_LO, 1),
		BADF(DWCONV_IN_W, 0), BADF(DWCONV_IN_H, 0), BADF(DWCONV_OUT_W, 0), BADF(DWCONV_OUT_H, 0),
		BADF(DWCONV_NCB, 0), BADF(DWCONV_KW, 0), BADF(DWCONV_KH, 0), BADF(DWCONV_SW, 0),
		BADF(DWCONV_SH, 0), BADF(DWCONV_DW, 0), BADF(DWCONV_DH, 0),
		BADW(DWCONV_KW, 4, DWCONV_IN_W), /* 3*2 + 3 = 9 >= 9 */
		BADW(DWCONV_SH, 4, DWCONV_IN_H), /* 2*4 + 1 = 9 >= 8 */
		SPR(DWCONV_SRC, spl - 2 * 8 * 9 + 1),
		SPR(DWCONV_WGT, spl - 2 * 2 * 3 + 1),
		SPR(DWCONV_PARAM, spl - 2 * 9 + 1),
		SPR(DWCONV_DST, spl - 2 * 3 * 4 + 1),
	};
	ladder(t, "DWCONV", dwconv(&d, 0), dd, NI(dd));
	wo = d;
	wo.src = spl - 2 * 8 * 9, wo.wgt = spl - 2 * 2 * 3, wo.par = spl - 2 * 9, wo.dst = spl - 2 * 3 * 4;
	wo.zpi = -7, wo.zp = 9, wo.lo = -3, wo.hi = -3;
	in = dwconv(&wo, PUSH_PREV | POP_NEXT);
	vchk(t, "DWCONV with every range ending at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);

	/* LUT */
	const struct defect dl[] = {
		SPR(LUT_SRC, spl - 10 + 1),
		SPR(LUT_DST, spl - 10 + 1),
		SPR(LUT_TABLE, spl - TL + 1),
	};
	ladder(t, "LUT", lut(0, 20, 40, 10, 0), dl, NI(dl));
	in = lut(spl - 10, spl - 10, spl - TL, 10, 0);
	vchk(t, "LUT table of ceil(256/R) lines ending at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	in = lut(0xffffff, 0xffffff, 0xffffff, 0, 0);
	vchk(t, "LUT LINES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
}

/* reserved bits, the queue and token bits, disassembly, and the C model's
 * ERR_* for a few of the decoder's verdicts */
static void test_vec_checks_other(struct t *t)
{
	const uint32_t spl = t->cfg.sp_lines, R = t->R, TL = (256 + R - 1) / R;
	const char *n = t->cfg.name;
	const struct elt e = chk_elt;
	const struct win w = chk_pool, d = chk_dw;
	loom_insn in;
	struct elt ok;
	struct win wo;

	/* reserved bits: the generic check covers the new opcodes */
	static const struct {
		unsigned opc, word;
		uint32_t bit;
	} rb[] = {
		{LOOM_OP_ELTWISE, 0, 1u << 21}, {LOOM_OP_ELTWISE, 0, 1u << 23}, {LOOM_OP_ELTWISE, 5, 1u << 16},
		{LOOM_OP_POOL, 0, 1u << 13},    {LOOM_OP_POOL, 0, 1u << 15},    {LOOM_OP_POOL, 6, 1u << 8},
		{LOOM_OP_DWCONV, 0, 1u << 12},  {LOOM_OP_DWCONV, 3, 1u << 24},  {LOOM_OP_DWCONV, 7, 1u << 8},
		{LOOM_OP_LUT, 0, 1u << 12},     {LOOM_OP_LUT, 1, 1u << 24},     {LOOM_OP_LUT, 4, 1u << 31},
		{LOOM_OP_LUT, 5, 1u},           {LOOM_OP_LUT, 0, 0x80000000u},
	};
	for (size_t i = 0; i < NI(rb); i++) {
		loom_insn b = rb[i].opc == LOOM_OP_ELTWISE ? eltwise(&e, 0) : rb[i].opc == LOOM_OP_POOL ? pool(&w, 0)
			      : rb[i].opc == LOOM_OP_DWCONV ? dwconv(&d, 0) : lut(0, 20, 40, 10, 0);
		b.w[rb[i].word] |= rb[i].bit;
		char what[64];
		snprintf(what, sizeof what, "%s reserved w%u bit 0x%x", loom_op_name(rb[i].opc), rb[i].word,
			 rb[i].bit);
		vchk(t, what, &b, LOOM_ERR_RESERVED_BITS, LOOM_INFO_NONE);
	}
	for (unsigned opc = LOOM_OP_ELTWISE; opc <= LOOM_OP_LUT; opc++)
		CHECK(loom_op_queue(opc) == LOOM_Q_COMPUTE && (loom_op_used_mask(opc, 0) & 0xfffu) == 0xfffu,
		      "%s: %s is a compute-queue opcode with the four token bits", n, loom_op_name(opc));

	/* disassembly names the opcode and its fields */
	char buf[512];
	in = eltwise(&e, POP_PREV);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "ELTWISE sp[200] = mul(sp[0]-(1), sp[100]-(2)) b=line n=3x5") && strstr(buf, "pop_prev"),
	      "%s: disasm %s", n, buf);
	in = pool(&w, 0);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "POOL    sp[500] = max sp[0] in=9x8 out=4x3 cb=2 k=3x2 s=2x3"), "%s: disasm %s", n, buf);
	in = dwconv(&d, PUSH_NEXT);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "DWCONV  sp[700] = sp[0] (*) sp[300] params=sp[400] in=9x8") && strstr(buf, "push_next"),
	      "%s: disasm %s", n, buf);
	in = lut(1, 2, 3, 4, 0);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(!strcmp(buf, "LUT     sp[2] = table sp[3] of sp[1] lines=4"), "%s: disasm %s", n, buf);

	/* the C model reports the decoder's verdict in ERR_* */
	const uint32_t B0 = 0x2000;
	loom_insn p[2];
	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	ok = e;
	ok.bm = LOOM_BMODE_PLANE, ok.b = spl - 2;
	p[1] = eltwise(&ok, 0);
	err_case(t, "ELTWISE B_MODE 1 SRC_B past SP", B0, p, 2, LOOM_ERR_SP_RANGE, B0 + 32, LOOM_F_ELTWISE_SRC_B);
	wo = w;
	wo.mult = 1;
	p[0] = pool(&wo, 0);
	err_case(t, "POOL MAX with MULT", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_POOL_MULT);
	wo = d;
	wo.par = spl - 17;
	p[0] = dwconv(&wo, 0);
	err_case(t, "DWCONV PARAM past SP", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_DWCONV_PARAM);
	p[0] = lut(0, 0, spl - TL + 1, 1, 0);
	err_case(t, "LUT TABLE past SP", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_LUT_TABLE);
}

/* the decoder checks of the vector opcodes */
static void test_vec_checks(struct t *t)
{
	test_vec_checks_eltwise(t);
	test_vec_checks_window(t);
	test_vec_checks_other(t);
}

static void test_vec_eltwise(struct t *t)
{
	const uint32_t R = t->R, PL = 21, NP = 2, A = 0, B = 50, D = 100, L = 150;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	/* ADD of two scales: MULT_A = 2^14, MULT_B = 2^13, MULT ~ 1, SHIFT 14:
	 * out = round(da + db/2) + zp (ties away from zero), clamped */
	rand_i8(t, img, L * R, -128, 127);
	const int8_t a0[3] = {13, 7, 127}, b0[3] = {-19, -21, 127};
	for (int r = 0; r < 3; r++)
		img[(A + 1) * R + r] = a0[r], img[(B + 1) * R + r] = b0[r];
	struct elt e = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 14, A, B, D, NP, PL, 10, -20, 5, -100, 120,
			1 << 14, 1 << 13, INT32_MAX};
	loom_insn o = eltwise(&e, 0);
	vec_run(t, "ELTWISE ADD two scales", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++) {
			int da = img[(A + i) * R + r] - 10, db = img[(B + i) * R + r] + 20;
			exp[(D + i) * R + r] = clip8(rha(2 * da + db, 1) + 5, -100, 120);
		}
	lines_eq(t, got, exp, 0, L, "ELTWISE ADD two scales");
	CHECK(got[(D + 1) * R] == 9 && got[(D + 1) * R + 1] == 1 && got[(D + 1) * R + 2] == 120,
	      "%s: ELTWISE ADD hand values 3+1/2 -> 9, -3-1/2 -> 1, clip -> 120 (got %d %d %d)", n,
	      got[(D + 1) * R], got[(D + 1) * R + 1], got[(D + 1) * R + 2]);
	vec_evt(t, "ELTWISE ADD", L, NP, PL, 2, 0, 0);
	vec_cycles(t, "ELTWISE", &o, 1, busy, vec_cyc(NP, PL, 2, 0, 0, 0));

	/* MUL, B_MODE 1 (one B line per plane) and 2 (one for all):
	 * out = round(da*db / 8), clamped to [-128, 127] */
	for (unsigned bm = LOOM_BMODE_PLANE; bm <= LOOM_BMODE_ONE; bm++) {
		rand_i8(t, img, L * R, -128, 127);
		const int8_t ma[3] = {5, -3, -128}, mb[3] = {3, 4, -128};
		for (int r = 0; r < 3; r++)
			img[A * R + r] = ma[r], img[B * R + r] = mb[r];
		struct elt m = {LOOM_ELT_MUL, bm, 3, A, B, D, NP, PL, 1, -1, 0, -128, 127, 0, 0, INT32_MAX};
		o = eltwise(&m, 0);
		char what[64];
		snprintf(what, sizeof what, "ELTWISE MUL B_MODE %u", bm);
		vec_run(t, what, img, L, &o, 1, got, NULL);
		memcpy(exp, img, L * R);
		for (uint32_t cb = 0; cb < NP; cb++)
			for (uint32_t i = 0; i < PL; i++)
				for (uint32_t r = 0; r < R; r++) {
					uint32_t lb = bm == LOOM_BMODE_PLANE ? B + cb : B;
					int da = img[(A + cb * PL + i) * R + r] - 1, db = img[lb * R + r] + 1;
					exp[(D + cb * PL + i) * R + r] = clip8(rha(da * db, 3), -128, 127);
				}
		lines_eq(t, got, exp, 0, L, what);
		CHECK(got[D * R] == 2 && got[D * R + 1] == -3 && got[D * R + 2] == 127,
		      "%s: %s hand values 16/8 -> 2, -20/8 -> -3, 16383/8 -> 127 (got %d %d %d)", n, what,
		      got[D * R], got[D * R + 1], got[D * R + 2]);
	}

	/* in place (DST = SRC_A), B_MODE 0, ADD with negative MULT_B; then a
	 * second ELTWISE reading the result (the queue runs in order) */
	rand_i8(t, img, L * R, -128, 127);
	struct elt ip = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 14, A, B, A, NP, PL, 0, 0, -3, -128, 127,
			 1 << 14, -(1 << 13), INT32_MAX};
	struct elt ip2 = {LOOM_ELT_MUL, LOOM_BMODE_ONE, 0, A, B + 42, D, NP, PL, 0, 0, 0, -128, 127, 0, 0, INT32_MAX};
	loom_insn two[2] = {eltwise(&ip, 0), eltwise(&ip2, 0)};
	vec_run(t, "ELTWISE in place, then MUL by one line", img, L, two, 2, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++)
			exp[(A + i) * R + r] = clip8(rha(2 * img[(A + i) * R + r] - img[(B + i) * R + r], 1) - 3, -128, 127);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++)
			exp[(D + i) * R + r] = clip8((int64_t)exp[(A + i) * R + r] * img[(B + 42) * R + r], -128, 127);
	lines_eq(t, got, exp, 0, L, "ELTWISE in place, then MUL by one line");
	vec_cycles(t, "two ELTWISE", two, 2, busy, 2 * vec_cyc(NP, PL, 2, 0, 0, 0));

	/* zero lines: only moves tokens (LOAD -> ELTWISE -> STORE ordering) */
	struct elt z = e;
	z.planes = 0;
	z.a = z.b = z.dst = 0xffffff;
	o = eltwise(&z, 0);
	vec_run(t, "ELTWISE of 0 planes", img, L, &o, 1, got, &busy);
	CHECK(!memcmp(got, img, L * R) && busy == LOOM_VEC_EMPTY + 1,
	      "%s: ELTWISE of 0 planes changes nothing, LOOM_VEC_EMPTY + 1 cycles (%llu)", n,
	      (unsigned long long)busy);
	free(img);
	free(got);
	free(exp);
}

static void test_vec_pool(struct t *t)
{
	const uint32_t R = t->R, L = 400;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	/* MAX, 2 planes of 9x6 (W x H), window 3x2, stride 2x1, dilation 2x2:
	 * OUT_W = 3, OUT_H = 4 */
	struct win w = {10, 200, 9, 6, 3, 4, 2, 3, 2, 2, 1, 2, 2, 0, 0, -100, 100, LOOM_POOL_MAX, 0, 0, 0, 0};
	rand_i8(t, img, L * R, -128, 127);
	/* window of output (0,0) of plane 0: lines (y, x) in {0, 2} x {0, 2, 4} */
	static const int8_t win0[3][6] = {
		{-128, -128, -128, -128, -128, -128}, {1, 127, 5, 2, 0, 0}, {-5, -3, -9, -4, -6, -7},
	};
	static const uint32_t wl[6] = {0, 2, 4, 18, 20, 22};
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 6; k++)
			img[(w.src + wl[k]) * R + r] = win0[r][k];
	loom_insn o = pool(&w, 0);
	vec_run(t, "POOL MAX 3x2 s2x1 d2x2", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t cb = 0; cb < w.ncb; cb++)
		for (uint32_t oy = 0; oy < w.oh; oy++)
			for (uint32_t ox = 0; ox < w.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int m = -1000;
					for (uint32_t ky = 0; ky < w.kh; ky++)
						for (uint32_t kx = 0; kx < w.kw; kx++) {
							uint32_t y = oy * w.sh + ky * w.dh, x = ox * w.sw + kx * w.dw;
							int v = img[(w.src + (cb * w.inh + y) * w.inw + x) * R + r];
							m = v > m ? v : m;
						}
					exp[(w.dst + (cb * w.oh + oy) * w.ow + ox) * R + r] = clip8(m, -100, 100);
				}
	lines_eq(t, got, exp, 0, L, "POOL MAX");
	CHECK(got[w.dst * R] == -100 && got[w.dst * R + 1] == 100 && got[w.dst * R + 2] == -3,
	      "%s: POOL MAX hand values -128 -> -100, 127 -> 100, -3 (got %d %d %d)", n, got[w.dst * R],
	      got[w.dst * R + 1], got[w.dst * R + 2]);
	vec_evt(t, "POOL MAX", L, 2, 12, 6, 0, 0);
	vec_cycles(t, "POOL MAX", &o, 1, busy, vec_cyc(2, 12, 6, 0, 0, 0));

	/* AVG 2x2 stride 2 over 3 planes of 8x6: MULT ~ 1, SHIFT 2 -> the
	 * rounded mean, ties away from zero; ZP_IN 3, ZP_OUT -10 */
	struct win a = {0, 300, 8, 6, 4, 3, 3, 2, 2, 2, 2, 1, 1, 3, -10, -128, 127, LOOM_POOL_AVG, 2, INT32_MAX, 0, 0};
	rand_i8(t, img, L * R, -128, 127);
	static const int8_t av[4][4] = {{1, 2, 3, 4}, {4, 4, 4, 5}, {4, 5, 4, 5}, {-3, -3, -4, -3}};
	static const uint32_t al[4] = {0, 1, 8, 9};
	for (int r = 0; r < 4; r++)
		for (int k = 0; k < 4; k++)
			img[(a.src + al[k]) * R + r] = av[r][k];
	o = pool(&a, 0);
	vec_run(t, "POOL AVG 2x2", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t cb = 0; cb < a.ncb; cb++)
		for (uint32_t oy = 0; oy < a.oh; oy++)
			for (uint32_t ox = 0; ox < a.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int s = 0;
					for (uint32_t k = 0; k < 4; k++) {
						uint32_t y = 2 * oy + k / 2, x = 2 * ox + k % 2;
						s += img[(a.src + (cb * a.inh + y) * a.inw + x) * R + r] - 3;
					}
					exp[(a.dst + (cb * a.oh + oy) * a.ow + ox) * R + r] = clip8(rha(s, 2) - 10, -128, 127);
				}
	lines_eq(t, got, exp, 0, L, "POOL AVG");
	CHECK(got[a.dst * R] == -11 && got[a.dst * R + 1] == -9 && got[a.dst * R + 2] == -8 &&
	      got[a.dst * R + 3] == -16,
	      "%s: POOL AVG hand values -0.5 -> -1, 1.25 -> 1, 1.5 -> 2, -6.25 -> -6 (+zp -10: got %d %d %d %d)", n,
	      got[a.dst * R], got[a.dst * R + 1], got[a.dst * R + 2], got[a.dst * R + 3]);
	vec_cycles(t, "POOL AVG", &o, 1, busy, vec_cyc(3, 12, 4, 0, 0, 0));
	free(img);
	free(got);
	free(exp);
}

static void put_lane32(int8_t *sp, uint32_t R, uint32_t line, uint32_t r, int32_t v)
{
	uint32_t q = R / 4;
	put32((uint8_t *)sp + (size_t)(line + r / q) * R + 4 * (r % q), (uint32_t)v);
}

static void test_vec_dwconv(struct t *t, const struct win *dw0)
{
	const uint32_t R = t->R, L = 500;
	const char *n = t->cfg.name;
	struct win w = *dw0;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	int32_t bias[64], mult[64], shift[64];
	uint64_t busy;
	char what[96];
	snprintf(what, sizeof what, "DWCONV %ux%u k%ux%u s%ux%u d%ux%u cb%u", w.inw, w.inh, w.kw, w.kh, w.sw, w.sh,
		 w.dw, w.dh, w.ncb);

	rand_i8(t, img, L * R, -128, 127);
	const uint32_t nin = w.ncb * w.inh * w.inw, nw = w.ncb * w.kh * w.kw;
	rand_i8(t, img + w.src * R, nin * R, -8 + w.zpi, 8 + w.zpi);
	rand_i8(t, img + w.wgt * R, nw * R, -8, 8);
	for (uint32_t i = 0; i < nin; i++) { /* lanes 0, 1: positive inputs; weights + / - */
		img[(w.src + i) * R + 0] = (int8_t)(w.zpi + 1 + (int)(rnd(t) % 5));
		img[(w.src + i) * R + 1] = (int8_t)(w.zpi + 1 + (int)(rnd(t) % 5));
	}
	for (uint32_t i = 0; i < nw; i++) {
		img[(w.wgt + i) * R + 0] = (int8_t)(1 + rnd(t) % 7);
		img[(w.wgt + i) * R + 1] = (int8_t)-(int)(1 + rnd(t) % 7);
	}
	for (uint32_t cb = 0; cb < w.ncb; cb++) {
		uint32_t p = w.par + 9 * cb;
		for (uint32_t r = 0; r < R; r++) {
			bias[r] = (int32_t)(rnd(t) % 401) - 200;
			mult[r] = INT32_MAX;
			shift[r] = (int32_t)(r % 4);
			if (r == 0) /* s > 0: saturates to INT32_MAX; srdhm(.., 1) = 1 (wrapped: -1) */
				bias[r] = INT32_MAX, mult[r] = 1, shift[r] = 0;
			if (r == 1) /* s < 0: saturates to INT32_MIN; srdhm(.., 1) = -1 */
				bias[r] = INT32_MIN, mult[r] = 1, shift[r] = 0;
			if (r == 2) /* shift 31 of ~0.75 * 2^31 -> 1 */
				bias[r] = 0x60000000, shift[r] = 31;
			if (r == 3) /* shift 31 of ~ -0.75 * 2^31 -> -1 */
				bias[r] = -0x60000000, shift[r] = 31;
			put_lane32(img, R, p, r, bias[r]);
			put_lane32(img, R, p + 4, r, mult[r]);
			/* the shift byte holds junk above bit 4 */
			img[(p + 8) * R + r] = (int8_t)(shift[r] | (int)(rnd(t) & 0xe0));
		}
	}
	loom_insn o = dwconv(&w, 0);
	vec_run(t, what, img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	int special_ok = 1;
	for (uint32_t cb = 0; cb < w.ncb; cb++) {
		uint32_t p = w.par + 9 * cb;
		for (uint32_t r = 0; r < R; r++) { /* read back the per-block parameters */
			uint32_t q = R / 4;
			bias[r] = get32((uint8_t *)img + (size_t)(p + r / q) * R + 4 * (r % q));
			shift[r] = img[(p + 8) * R + r] & 31;
		}
		for (uint32_t oy = 0; oy < w.oh; oy++)
			for (uint32_t ox = 0; ox < w.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int64_t s = 0;
					for (uint32_t ky = 0; ky < w.kh; ky++)
						for (uint32_t kx = 0; kx < w.kw; kx++) {
							uint32_t y = oy * w.sh + ky * w.dh, x = ox * w.sw + kx * w.dw;
							s += (int64_t)(img[(w.src + (cb * w.inh + y) * w.inw + x) * R + r] - w.zpi) *
							     img[(w.wgt + (cb * w.kh + ky) * w.kw + kx) * R + r];
						}
					int64_t v;
					if (r == 0)
						v = 1;  /* s > 0 */
					else if (r == 1)
						v = -1; /* s < 0 */
					else if (r == 2)
						v = 1;  /* 0.75 rounds to 1 */
					else if (r == 3)
						v = -1; /* -0.75 rounds to -1 */
					else
						v = rha(s + bias[r], (unsigned)shift[r]);
					if (r == 0 && s <= 0)
						special_ok = 0;
					if (r == 1 && s >= 0)
						special_ok = 0;
					exp[(w.dst + (cb * w.oh + oy) * w.ow + ox) * R + r] = clip8(v + w.zp, w.lo, w.hi);
				}
	}
	CHECK(special_ok, "%s: %s: test data has s > 0 in lane 0, s < 0 in lane 1", n, what);
	lines_eq(t, got, exp, 0, L, what);
	/* input reuse, every stride */
	const uint64_t M = t->cfg.vec_macs;
	uint64_t ec = dw_cyc(M, w.ncb, w.oh, w.ow, w.kh, w.kw, w.sw, w.dw);
	uint64_t e[LOOM_EVT_COUNT] = {0};
	e[LOOM_EVT_SP_WR] = 2 * (uint64_t)L + w.ncb * w.oh * w.ow;
	e[LOOM_EVT_SP_RD] = L + w.ncb * dw_reads(M, w.oh, w.ow, w.kh, w.kw, w.sw, w.dw);
	e[LOOM_EVT_VEC_LINES] = (uint64_t)w.ncb * w.oh * w.ow * w.kh * w.kw;
	e[LOOM_EVT_RQ_VALUES] = (uint64_t)w.ncb * w.oh * w.ow * R;
	evt_eq(t, what, e);
	vec_cycles(t, what, &o, 1, busy, ec);
	double c = loom_cyc_dw(M, w.ncb, w.oh, w.ow, w.kh, w.kw, w.sw, w.dw);
	CHECK((uint64_t)c + 1 == ec, "%s: %s: loom_cyc_dw %.0f + 1 == %llu", n, what, c, (unsigned long long)ec);
	free(img);
	free(got);
	free(exp);
}

static void test_vec_lut(struct t *t)
{
	const uint32_t R = t->R, TL = (256 + R - 1) / R, TB = 100, S = 0, D = 40, NL = 37, L = 140;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	rand_i8(t, img, L * R, -128, 127);
	for (uint32_t i = 0; i < 256; i++) /* table[i] at byte i of the table */
		img[TB * R + i] = (int8_t)(uint8_t)(i * 7 + 3);
	img[S * R + 0] = -128, img[S * R + 1] = 0, img[S * R + 2] = 127;
	/* LUT into DST, then a second LUT in place on DST */
	loom_insn two[2] = {lut(S, D, TB, NL, 0), lut(D, D, TB, NL, 0)};
	vec_run(t, "LUT, then LUT in place", img, L, two, 2, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NL * R; i++) {
		uint8_t v = (uint8_t)((uint8_t)(img[S * R + i] + 128) * 7 + 3);
		exp[D * R + i] = (int8_t)(uint8_t)((uint8_t)((int8_t)v + 128) * 7 + 3);
	}
	lines_eq(t, got, exp, 0, L, "LUT, then LUT in place");
	uint64_t ec = 2 * vec_cyc(1, NL, 1, 0, 0, TL);
	vec_cycles(t, "two LUT", two, 2, busy, ec);

	loom_insn o = lut(S, D, TB, NL, 0);
	vec_run(t, "LUT", img, L, &o, 1, got, NULL);
	vec_evt(t, "LUT", L, 1, NL, 1, 0, TL);
	CHECK(got[D * R] == 3 && got[D * R + 1] == -125 && got[D * R + 2] == -4,
	      "%s: LUT hand values t(-128) = 3, t(0) = -125, t(127) = -4 (got %d %d %d)", n, got[D * R],
	      got[D * R + 1], got[D * R + 2]);
	o = lut(0xffffff, 0xffffff, 0xffffff, 0, 0);
	vec_run(t, "LUT of 0 lines", img, L, &o, 1, got, &busy);
	CHECK(!memcmp(got, img, L * R) && busy == LOOM_VEC_EMPTY + 1,
	      "%s: LUT of 0 lines changes nothing, LOOM_VEC_EMPTY + 1 cycles (%llu)", n,
	      (unsigned long long)busy);
	vec_evt(t, "LUT of 0 lines", L, 1, 0, 1, 0, 0);
	free(img);
	free(got);
	free(exp);
}

/* The vector unit under all four tokens: LOAD -> DWCONV (pushes back to
 * LOAD and on to STORE), the second LOAD overwrites DWCONV's input only
 * after it ran, STORE pops; ELTWISE then pops the STORE's token. */
static void test_vec_tokens(struct t *t)
{
	const uint32_t R = t->R, L = 64;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	rand_i8(t, img, L * R, -128, 127);
	for (uint32_t r = 0; r < R; r++) {
		put_lane32(img, R, 20, r, 0);
		put_lane32(img, R, 24, r, INT32_MAX);
		img[28 * R + r] = 0;
	}
	wr(t, VIMG, img, L * R);
	memset(got, 0, L * R);
	wr(t, VIMG + L * R, got, L * R); /* zeros */
	/* 1x1 DWCONV of line 0 by weight line 10 into line 30 */
	struct win w = {0, 30, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -128, 127, 0, 0, 0, 10, 20};
	struct elt e = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 0, 30, 30, 31, 1, 1, 0, 0, 0, -128, 127, 1, 0, INT32_MAX};
	loom_insn p[] = {
		ld(LOOM_MEM_SP, VIMG + L * R, 0, R / 4, 1, 0, L, R, 1, 0, 0), /* zeros first */
		ld(LOOM_MEM_SP, VIMG, 0, R / 4, L, R, 1, 0, 1, 0, PUSH_NEXT),
		dwconv(&w, POP_PREV | PUSH_PREV | PUSH_NEXT),
		ld(LOOM_MEM_SP, VIMG + L * R, 0, R / 4, 1, R, 1, 0, 1, 0, POP_NEXT), /* zero line 0 */
		st(LOOM_MEM_SP, VOUT, 30, R / 4, 1, R, 1, 0, 1, 0, POP_PREV | PUSH_PREV),
		eltwise(&e, POP_NEXT | PUSH_NEXT),
		st(LOOM_MEM_SP, VOUT + R, 31, R / 4, 1, R, 1, 0, 1, 0, POP_PREV),
		finish(),
	};
	struct res r = run_prog(t, PROG, p, NI(p));
	rd(t, VOUT, got, 2 * R);
	for (uint32_t k = 0; k < R; k++) {
		exp[k] = clip8((int64_t)img[k] * img[10 * R + k], -128, 127);
		exp[R + k] = exp[k];
	}
	CHECK(done_ok(&r) && !memcmp(got, exp, 2 * R) && ctr(t, LOOM_CTR_INSNS) == 7,
	      "%s: vector unit pops and pushes all four tokens (status %x %s)", n, r.status, loom_err_name(r.cause));
	free(img);
	free(got);
	free(exp);
}

/* loom_cyc_vec (common/timing.c: the first two planes, and a plane's
 * groups after a whole group, stepped once and repeated) against the
 * plain loop vec_cyc: short groups, one tap, parameters, many planes */
static void test_vec_closed_form(struct t *t)
{
	static const uint64_t Ps[] = {1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 47, 100, 3136};
	static const uint64_t taps[] = {1, 2, 3, 4, 9, 25};
	int bad = 0;
	for (uint64_t planes = 1; planes <= 5; planes++)
		for (size_t i = 0; i < sizeof Ps / sizeof Ps[0]; i++)
			for (size_t j = 0; j < sizeof taps / sizeof taps[0]; j++)
				for (uint64_t w = 0; w <= 1; w++)
					for (uint64_t pp = 0; pp <= 9; pp += 9) {
						uint64_t e = vec_cyc(planes, Ps[i], taps[j], w, pp, 0);
						double c = loom_cyc_vec((double)planes, (double)Ps[i], (double)taps[j],
									(double)w, (double)pp);
						if ((uint64_t)c + 1 != e && !bad++)
							CHECK(0, "%s: loom_cyc_vec(%llu, %llu, %llu, %llu, %llu) %.0f + 1 == %llu",
							      t->cfg.name, (unsigned long long)planes, (unsigned long long)Ps[i],
							      (unsigned long long)taps[j], (unsigned long long)w,
							      (unsigned long long)pp, c, (unsigned long long)e);
					}
	CHECK(!bad, "%s: loom_cyc_vec equals the plain loop on 1560 shapes (%d differ)", t->cfg.name, bad);
}

/* every vector-unit test on one configuration */
void test_vec(struct t *t)
{
	test_vec_closed_form(t);
	test_vec_checks(t);
	test_vec_eltwise(t);
	test_vec_pool(t);
	struct win dw1 = {0, 300, 5, 5, 3, 2, 2, 3, 3, 1, 2, 1, 1, -3, 2, -100, 110, 0, 0, 0, 100, 200};
	struct win dw2 = {0, 300, 7, 6, 2, 2, 3, 2, 3, 2, 1, 3, 2, 5, -4, -128, 127, 0, 0, 0, 150, 200};
	struct win dw3 = {0, 400, 22, 4, 20, 2, 1, 3, 3, 1, 1, 1, 1, 0, 0, -128, 127, 0, 0, 0, 100, 120};
	test_vec_dwconv(t, &dw1);
	test_vec_dwconv(t, &dw2);
	test_vec_dwconv(t, &dw3);
	/* SW 1, DW 2, KW 5 (passes of 3 and 2 taps), rows of 9 in groups of 16 */
	struct win dw4 = {0, 400, 17, 4, 9, 3, 3, 5, 2, 1, 1, 2, 1, 1, -2, -128, 127, 0, 0, 0, 300, 350};
	test_vec_dwconv(t, &dw4);
	/* KW 7: passes of 3, 3 and 1 taps with 3 multipliers a lane, 5 and 2
	 * with 5 (vec_macs) */
	struct win dw9 = {0, 400, 17, 4, 9, 3, 3, 7, 2, 1, 1, 1, 1, 1, -2, -128, 127, 0, 0, 0, 300, 350};
	test_vec_dwconv(t, &dw9);
	/* SW 2 and 3 (ISA 1.3): SW 2 DW 1 3x3, rows of 11 (an even column serves
	 * two positions, an odd one one); SW 2 DW 2 KW 5 (odd columns serve
	 * none); SW 3 DW 1 KW 4 (passes of 3 and 1 taps); SW 3 DW 2, 2 planes */
	struct win dw5 = {0, 200, 23, 7, 11, 3, 1, 3, 3, 2, 2, 1, 1, -3, 2, -100, 110, 0, 0, 0, 170, 180};
	struct win dw6 = {0, 220, 21, 4, 7, 3, 2, 5, 2, 2, 1, 2, 1, 1, -2, -128, 127, 0, 0, 0, 170, 200};
	struct win dw7 = {0, 220, 19, 9, 6, 3, 1, 4, 3, 3, 3, 1, 1, 5, -4, -128, 127, 0, 0, 0, 180, 200};
	struct win dw8 = {0, 170, 17, 4, 5, 4, 2, 3, 1, 3, 1, 2, 1, 0, 0, -128, 127, 0, 0, 0, 140, 150};
	test_vec_dwconv(t, &dw5);
	test_vec_dwconv(t, &dw6);
	test_vec_dwconv(t, &dw7);
	test_vec_dwconv(t, &dw8);
	test_vec_lut(t);
	test_vec_tokens(t);
}
