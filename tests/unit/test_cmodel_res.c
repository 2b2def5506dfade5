/* test_cmodel_res.c - STORE SOURCE 3 (requantize, then add a residual:
 * docs/ISA.md "STORE") on the C model: the fused store against the unfused
 * pair it replaces (STORE SOURCE 2 to DRAM, LOAD, ELTWISE ADD, STORE) and
 * against a plain C reference written from the ISA pseudo-code, with a ReLU
 * clip, extreme multipliers, ignored bits of the parameter line, narrow
 * rows; its energy events; every decoder check SOURCE 3 adds, in order.
 * Part of test_cmodel (runs on "default" and "odd", where R != C). */
#include "check.h"
#include "test_cmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK_AT 0x8000u

static loom_insn markb(uint32_t id)
{
	loom_insn in = op(LOOM_OP_MARK, 0);
	setf(&in, LOOM_F_MARK_DRAM_ADDR, MARK_AT);
	setf(&in, LOOM_F_MARK_MARK_ID, id);
	return in;
}

static void st_rq(loom_insn *in, unsigned param, int8_t zp, int8_t lo, int8_t hi)
{
	setf(in, LOOM_F_STORE_PARAM_ADDR, param);
	setf(in, LOOM_F_STORE_ZERO_POINT, (uint8_t)zp);
	setf(in, LOOM_F_STORE_CLIP_LO, (uint8_t)lo);
	setf(in, LOOM_F_STORE_CLIP_HI, (uint8_t)hi);
}

static loom_insn elt_add(uint32_t a, uint32_t b, uint32_t dst, uint32_t lines, const loom_eltadd_param *p)
{
	loom_insn in = op(LOOM_OP_ELTWISE, 0);
	setf(&in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_ADD);
	setf(&in, LOOM_F_ELTWISE_SRC_A, a);
	setf(&in, LOOM_F_ELTWISE_SRC_B, b);
	setf(&in, LOOM_F_ELTWISE_DST, dst);
	setf(&in, LOOM_F_ELTWISE_PLANES, 1);
	setf(&in, LOOM_F_ELTWISE_PLANE_LINES, lines);
	setf(&in, LOOM_F_ELTWISE_ZP_A, (uint8_t)p->zp_a);
	setf(&in, LOOM_F_ELTWISE_ZP_B, (uint8_t)p->zp_b);
	setf(&in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)p->zp_out);
	setf(&in, LOOM_F_ELTWISE_CLIP_LO, (uint8_t)p->lo);
	setf(&in, LOOM_F_ELTWISE_CLIP_HI, (uint8_t)p->hi);
	setf(&in, LOOM_F_ELTWISE_MULT_A, (uint16_t)p->mult_a);
	setf(&in, LOOM_F_ELTWISE_MULT_B, (uint16_t)p->mult_b);
	setf(&in, LOOM_F_ELTWISE_MULT, (uint32_t)p->mult);
	setf(&in, LOOM_F_ELTWISE_SHIFT, p->shift);
	return in;
}

/* one case: the conv output's zero point and clip, the add's parameters,
 * row words, junk in the ignored bits of the parameter line */
struct rcase {
	const char *what;
	int8_t zp, lo, hi;
	loom_eltadd_param e;
	unsigned rw; /* 0: min(R, C) / 4 */
	uint32_t junk2, junk3;
	unsigned step; /* N3: the residual's line step (0: 1) */
};

/* the ISA pseudo-code, spelled out (not through loom_eltadd) */
static int8_t ref_one(int32_t acc, int32_t bias, int32_t mult, int32_t shift, const struct rcase *k, int8_t r)
{
	int8_t q = loom_requant(acc, bias, mult, shift, k->zp, k->lo, k->hi);
	int32_t x = (int32_t)k->e.mult_a * (q - k->e.zp_a) + (int32_t)k->e.mult_b * (r - k->e.zp_b);
	return loom_requant(x, 0, k->e.mult, k->e.shift, k->e.zp_out, k->e.lo, k->e.hi);
}

static void one_case(struct t *t, const struct rcase *k)
{
	const uint32_t R = t->R, C = t->C, NR = 6, N1 = 3, N2 = 2, S1 = 72, S2 = 256;
	const uint32_t V = 10, PA = 40, SPR = 200, SPA = 300, SPO = 400, SPB = 500;
	const uint32_t step = k->step ? k->step : 1;
	const uint32_t VA = 0x30000, PRM = 0x31000, RESD = 0x32000, TMP = 0x33000, OUT1 = 0x34000, OUT2 = 0x35000;
	const uint32_t rw = k->rw ? k->rw : (R < C ? R : C) / 4, n0 = 4 * rw;
	const char *n = t->cfg.name;
	int32_t *vals = malloc(NR * C * 4), *par = malloc(3 * C * 4);
	uint8_t *buf = calloc(1, 4 * C * 4 + NR * C * 4), res[1024], fill[1024];
	for (uint32_t i = 0; i < NR * C; i++) {
		uint32_t u = rnd(t);
		vals[i] = i % 7 == 0 ? (int32_t)u : (int32_t)(u % 200000) - 100000;
	}
	for (uint32_t c = 0; c < C; c++) {
		par[c] = (int32_t)(rnd(t) % 20000) - 10000;
		par[C + c] = (int32_t)((1u << 30) + (rnd(t) >> 2));
		par[2 * C + c] = (int32_t)(rnd(t) % 12) + (c == 1 ? 64 : 0); /* shift & 31 */
	}
	for (uint32_t i = 0; i < NR * C; i++)
		put32(buf + 4 * i, (uint32_t)vals[i]);
	wr(t, VA, buf, NR * C * 4);
	memset(buf, 0, 4 * C * 4);
	for (uint32_t i = 0; i < 3 * C; i++)
		put32(buf + 4 * i, (uint32_t)par[i]);
	uint32_t w[LOOM_RESADD_WORDS];
	loom_eltadd_pack(&k->e, w);
	w[2] |= k->junk2;
	w[3] |= k->junk3;
	for (uint32_t i = 0; i < LOOM_RESADD_WORDS; i++)
		put32(buf + 4 * (3 * C + i), w[i]);
	for (uint32_t i = LOOM_RESADD_WORDS; i < C; i++)
		put32(buf + 4 * (3 * C + i), rnd(t)); /* words past 3 are ignored */
	wr(t, PRM, buf, 4 * C * 4);
	for (size_t i = 0; i < sizeof res; i++)
		res[i] = (uint8_t)(rnd(t) >> 9);
	wr(t, RESD, res, sizeof res);
	memset(fill, 0xee, sizeof fill);
	wr(t, OUT1, fill, sizeof fill);
	wr(t, OUT2, fill, sizeof fill);

	/* fused: the residual rows loaded into SP line SPR + row */
	loom_insn f[10];
	size_t m = 0;
	f[m++] = ld(LOOM_MEM_ACC, VA, V, C, NR, 4 * C, 1, 0, 1, 0, 0);
	f[m++] = ld(LOOM_MEM_ACC, PRM, PA, C, 4, 4 * C, 1, 0, 1, 0, 0);
	/* residual row k in DRAM at RESD + k*step*R: SP line SPR + k*step */
	f[m++] = ld(LOOM_MEM_SP, RESD, SPR, R / 4, NR * step, R, 1, 0, 1, 0, 0);
	f[m++] = markb(1);
	f[m] = st(LOOM_MEM_ACC_RESADD, OUT1, V, rw, N1, S1, N2, S2, step, SPR, 0);
	st_rq(&f[m++], PA, k->zp, k->lo, k->hi);
	f[m++] = finish();
	struct res r = run_prog(t, PROG, f, m);
	CHECK(done_ok(&r), "%s: resadd %s: fused STORE runs (status %x cause %u info %u)", n, k->what, r.status,
	      r.cause, r.info);
	uint64_t ev[LOOM_EVT_COUNT] = {0};
	ev[LOOM_EVT_ACC_WR] = NR + 4, ev[LOOM_EVT_SP_WR] = NR * step;
	ev[LOOM_EVT_ACC_RD] = NR + 4, ev[LOOM_EVT_SP_RD] = NR, ev[LOOM_EVT_RQ_VALUES] = 2 * NR * C;
	evt_eq(t, "resadd fused STORE", ev);

	/* unfused: SOURCE 2 to DRAM, back into SP, ELTWISE ADD, STORE SP */
	m = 0;
	f[m] = st(LOOM_MEM_ACC_REQUANT, TMP, V, rw, N1, S1, N2, S2, 1, 0, 0);
	st_rq(&f[m++], PA, k->zp, k->lo, k->hi);
	f[m++] = markb(2);
	f[m++] = ld(LOOM_MEM_SP, TMP, SPA, rw, N1, S1, N2, S2, 1, 0, 0);
	f[m++] = ld(LOOM_MEM_SP, RESD, SPB, R / 4, NR, step * R, 1, 0, 1, 0, 0);
	f[m++] = markb(3);
	f[m++] = elt_add(SPA, SPB, SPO, NR, &k->e);
	f[m++] = markb(4);
	f[m++] = st(LOOM_MEM_SP, OUT2, SPO, rw, N1, S1, N2, S2, 1, 0, 0);
	f[m++] = finish();
	r = run_prog(t, PROG, f, m);
	CHECK(done_ok(&r), "%s: resadd %s: unfused pair runs", n, k->what);

	uint8_t o1[1024], o2[1024];
	rd(t, OUT1, o1, sizeof o1);
	rd(t, OUT2, o2, sizeof o2);
	int bad = 0, badu = 0, badf = 0;
	for (uint32_t i = 0; i < NR; i++) {
		uint32_t i1 = i % N1, i2 = i / N1, a = i2 * S2 + i1 * S1;
		for (uint32_t c = 0; c < n0; c++) {
			int8_t e = ref_one(vals[i * C + c], par[c], par[C + c], par[2 * C + c], k, (int8_t)res[i * step * R + c]);
			bad += (int8_t)o1[a + c] != e;
			badu += (int8_t)o2[a + c] != e;
		}
		if (i1 == N1 - 1) /* bytes between rows and past a row stay */
			for (uint32_t b = a + n0; b < a + S1 && b < (i2 + 1) * S2; b++)
				badf += o1[b] != 0xee;
	}
	CHECK(!bad && !badf, "%s: resadd %s: fused rows of %u bytes match the ISA pseudo-code (%d wrong, %d "
	      "bytes outside rows written)", n, k->what, n0, bad, badf);
	CHECK(!badu, "%s: resadd %s: the unfused pair gives the same bytes (%d wrong)", n, k->what, badu);
	free(vals);
	free(par);
	free(buf);
}

static void decode_errors(struct t *t)
{
	const uint32_t R = t->R, C = t->C, B0 = 0x2000, mn = R < C ? R : C;
	const uint32_t spl = t->cfg.sp_lines, accl = t->cfg.acc_lines;
	loom_insn p[2];
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, mn / 4 + 1, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "STORE SOURCE 3 ROW_WORDS min(R,C)/4+1", B0, p, 1, LOOM_ERR_BAD_FIELD, B0,
		 LOOM_F_STORE_ROW_WORDS);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, mn / 4, 1, 0, 1, 0, 1, 0, 0);
	st_rq(&p[0], 0, 0, 3, 2);
	err_case(t, "STORE SOURCE 3 CLIP_LO > CLIP_HI", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_STORE_CLIP_LO);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	st_rq(&p[0], accl - 3, 0, -128, 127);
	err_case(t, "STORE SOURCE 3 PARAM_ADDR + 4 past ACC end", B0, p, 1, LOOM_ERR_ACC_RANGE, B0,
		 LOOM_F_STORE_PARAM_ADDR);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, 1, 1, 0, 1, 0, 0, 0, 0);
	err_case(t, "STORE SOURCE 3 N3 (the residual's step) = 0", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_STORE_N3);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30002, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "STORE SOURCE 3 DRAM_ADDR misaligned", B0, p, 1, LOOM_ERR_MISALIGNED, B0,
		 LOOM_F_STORE_DRAM_ADDR);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, accl - 2, 1, 3, 4, 1, 0, 1, 0, 0);
	err_case(t, "STORE SOURCE 3 rows past ACC end", B0, p, 1, LOOM_ERR_ACC_RANGE, B0, LOOM_F_STORE_MEM_ADDR);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, 1, 3, 4, 2, 16, 1, spl - 5, 0);
	err_case(t, "STORE SOURCE 3 residual past SP end", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_STORE_STRIDE3);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, 1, 3, 4, 2, 16, 2, spl - 10, 0);
	err_case(t, "STORE SOURCE 3 residual of step 2 past SP end", B0, p, 1, LOOM_ERR_SP_RANGE, B0,
		 LOOM_F_STORE_STRIDE3);
	p[0] = st(LOOM_MEM_ACC_RESADD, (uint32_t)(t->cfg.dram_bytes - 4), 0, 1, 2, 4, 1, 0, 1, 0, 0);
	err_case(t, "STORE SOURCE 3 past DRAM end", B0, p, 1, LOOM_ERR_DRAM_RANGE, B0, LOOM_F_STORE_DRAM_ADDR);
	/* what just fits: residual in the last SP lines at an odd line, N3 = 0 */
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, mn / 4, 3, 16, 2, 64, 1, spl - 6, 0);
	p[1] = finish();
	struct res r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: STORE SOURCE 3 with the residual in the last 6 SP lines (odd STRIDE3) runs",
	      t->cfg.name);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, mn / 4, 3, 16, 2, 64, 2, spl - 11, 0);
	r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: STORE SOURCE 3 of step 2 with the residual's 11 lines the last of SP runs",
	      t->cfg.name);
	p[0] = st(LOOM_MEM_ACC_RESADD, 0x30000, 0, 1, 0, 4, 2, 16, 1, spl + 1000, 0);
	r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: STORE SOURCE 3 with N1 = 0 moves nothing and checks no range", t->cfg.name);
	p[0] = st(LOOM_MEM_ACC_REQUANT, 0x30000, 0, mn / 4 + 1 <= C / 4 ? mn / 4 + 1 : C / 4, 1, 0, 1, 0, 1, 0, 0);
	r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: SOURCE 2 keeps its row limit C (ROW_WORDS %u)", t->cfg.name,
	      loom_insn_get(&p[0], LOOM_F_STORE_ROW_WORDS));
}

void test_resadd(struct t *t)
{
	const struct rcase cs[] = {
		{"typical", 3, -128, 127, {1518500250, 16384, 11000, 3, -7, -2, -128, 127, 15}, 0, 0, 0, 0},
		{"relu clip", -5, -128, 127, {1300000000, 9000, 16384, -5, 20, -9, -9, 127, 14}, 0, 0, 0, 0},
		{"conv clip, B first", 0, -20, 90, {1900000000, 7000, 16384, 0, -128, 127, 0, 100, 13}, 0, 0, 0, 0},
		{"extreme", -128, -128, 127, {INT32_MIN, -32768, 32767, 127, -128, 5, -100, 100, 31}, 0, 0, 0, 0},
		{"ignored bits, one word rows", 10, -128, 127, {1 << 30, 16384, 16384, 10, 10, 0, -128, 127, 1},
		 1, 0xe0000000u, 0xffff0000u, 0},
		{"lo == hi", 1, -128, 127, {1 << 30, 100, 200, 1, 2, 3, 42, 42, 0}, 2, 0, 0, 0},
		{"residual step 3", 7, -128, 127, {1400000000, 16384, 7000, 7, 1, -4, -4, 127, 14}, 0, 0, 0, 3},
	};
	for (size_t i = 0; i < NI(cs); i++)
		one_case(t, &cs[i]);
	decode_errors(t);
}
