/* test_cmodel_paths.c - the C model's data paths and its timing memo
 * give the same results (cmodel/cm_exec.c, cm_avx2.c, cm_avx512.c,
 * cm_timing.c):
 *
 *  - requantization: the AVX2 lanes (cm_requant_avx2, cm_store_rq_avx2)
 *    and the AVX-512 ones (cm_store_rq_avx512) against loom_requant on the
 *    corners (INT32_MIN * INT32_MIN, a bias that overflows, shifts 0, 31 and
 *    above, clamps with lo > hi) and on random values;
 *  - MATMUL, ELTWISE, POOL, DWCONV, LUT and STORE (requantized, with a
 *    residual add) through cm_compute and cm_store on the generic data path
 *    and on every other one this CPU has (AVX2; AVX-512 with MATMUL on
 *    VNNI) from the same scratchpad and accumulator, on random fields (the
 *    array of every configuration in configs/ and tests/configs/ and other
 *    odd ones, folds of zero rows, -128 and 127 everywhere, positions that
 *    are not a multiple of four or eight, accumulate), memories compared
 *    byte for byte;
 *  - the timing memo: a program run twice (the second replayed) on a C
 *    model with the memo and on one without gives the same cycle counters
 *    and MARK records; so does a replay that must diverge (the host rewrites
 *    an instruction not yet fetched), one aborted halfway, a job started
 *    right after another (tsim caught up from the recording) and one with
 *    other DMA windows; loom_cmodel_stats says which path each took.
 *
 * The comparisons of a data path this CPU lacks are reported as skipped.
 * Prints one line per check, then "N passed, M failed, K skipped". */
#include "loom/hw.h"
#include "loom/isa.h"
#include "cmodel/cmodel_internal.h"
#include "cosim/cosim.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* a value that is a corner one time in four */
static int32_t corner32(void)
{
	static const int32_t c[] = {INT32_MIN, INT32_MIN + 1, -65536, -1, 0, 1, 65535, INT32_MAX - 1, INT32_MAX};
	return rnd() % 4 ? (int32_t)rnd() : c[rnd() % (sizeof c / sizeof c[0])];
}

static int8_t corner8(void)
{
	static const int8_t c[] = {-128, -127, -1, 0, 1, 126, 127};
	return rnd() % 3 ? (int8_t)rnd() : c[rnd() % (sizeof c / sizeof c[0])];
}

static void setf(loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v)) {
		fprintf(stderr, "test bug: %s = %u does not fit\n", loom_field_name(f), v);
		exit(2);
	}
}

/* ---- requantization ---- */

/* have: cm_dp_pick's answer */
static void test_requant(int have)
{
	if (have < CM_SIMD_AVX2) {
		check_skip("requantization on AVX2: this CPU has no AVX2");
		return;
	}
	if (have < CM_SIMD_AVX512)
		check_skip("requantization on AVX-512: this CPU has no AVX-512");
#if CM_HAVE_AVX2
	int32_t a[64], bias[64], mult[64], shift[64];
	int8_t out[64], out5[64];
	long bad = 0, bad5 = 0, n = 0;
	for (int rep = 0; rep < 40000; rep++) {
		cm_rq q = {bias, mult, shift, corner8(), corner8(), corner8()};
		if (rep % 3 && q.lo > q.hi) { /* mostly lo <= hi, as STORE's decoder asks; the rest as they come */
			int8_t t = q.lo;
			q.lo = q.hi;
			q.hi = t;
		}
		uint32_t len = 4 * (1 + rnd() % 16);
		for (uint32_t c = 0; c < len; c++) {
			a[c] = corner32();
			bias[c] = rnd() % 2 ? corner32() : (int32_t)(rnd() % 2001) - 1000;
			mult[c] = corner32();
			shift[c] = rnd() % 4 ? (int32_t)(rnd() % 40) : corner32();
		}
		if (rep % 7 == 0)
			for (uint32_t c = 0; c < len; c++)
				a[c] = mult[c] = INT32_MIN, bias[c] = 0;
		cm_requant_avx2(out, a, &q, len);
		/* one row of len values: every lane and the masked last ones */
		if (have >= CM_SIMD_AVX512)
			cm_store_rq_avx512((uint8_t *)out5, a, len, &q, len, 0, 1, 1, 1, 0, 0, 0, NULL, 0, NULL);
		for (uint32_t c = 0; c < len; c++, n++) {
			int8_t want = loom_requant(a[c], bias[c], mult[c], shift[c], q.zp, q.lo, q.hi);
			if (out[c] != want && !bad++)
				CHECK_FAIL("requant(%d, %d, %d, %d, zp %d, [%d, %d]): AVX2 %d, loom_requant %d", a[c], bias[c],
					   mult[c], shift[c], q.zp, q.lo, q.hi, out[c], want);
			if (have >= CM_SIMD_AVX512 && out5[c] != want && !bad5++)
				CHECK_FAIL("requant(%d, %d, %d, %d, zp %d, [%d, %d]): AVX-512 %d, loom_requant %d", a[c],
					   bias[c], mult[c], shift[c], q.zp, q.lo, q.hi, out5[c], want);
		}
	}
	CHECK(!bad, "requantization: %ld values on AVX2 equal loom_requant (%ld differ)", n, bad);
	if (have >= CM_SIMD_AVX512)
		CHECK(!bad5, "requantization: %ld values on AVX-512 equal loom_requant (%ld differ)", n, bad5);
	/* a STORE's rows: each row's values with the same columns' parameters */
	uint8_t dram[4096], dram5[4096], want[4096];
	int32_t acc[16 * 64];
	bad = bad5 = 0;
	for (int rep = 0; rep < 300; rep++) {
		uint32_t C = 4 * (1 + rnd() % 16), n0 = 4 * (1 + rnd() % (C / 4));
		/* lo <= hi as STORE's decoder asks (the kernel's fast path), sometimes not */
		int8_t l = (int8_t)(-100 + (int)(rnd() % 60)), h = (int8_t)(40 + (int)(rnd() % 60));
		cm_rq q = {bias, mult, shift, corner8(), rep % 4 ? l : h, rep % 4 ? h : l};
		for (uint32_t c = 0; c < C; c++)
			bias[c] = corner32(), mult[c] = corner32(), shift[c] = (int32_t)(rnd() % 33);
		for (uint32_t i = 0; i < 16 * C; i++)
			acc[i] = corner32();
		memset(dram, 0x5a, sizeof dram);
		memset(dram5, 0x5a, sizeof dram5);
		memset(want, 0x5a, sizeof want);
		cm_store_rq_avx2(dram, acc, C, &q, n0, 64, 4, 2, 2, 96, 0, 16, NULL, 0, NULL);
		if (have >= CM_SIMD_AVX512)
			cm_store_rq_avx512(dram5, acc, C, &q, n0, 64, 4, 2, 2, 96, 0, 16, NULL, 0, NULL);
		for (uint32_t i3 = 0, l = 0; i3 < 2; i3++)
			for (uint32_t i2 = 0; i2 < 2; i2++)
				for (uint32_t i1 = 0; i1 < 4; i1++, l++)
					for (uint32_t c = 0; c < n0; c++)
						want[64 + i3 * 16 + i2 * 0 + i1 * 96 + c] = (uint8_t)loom_requant(
							acc[l * C + c], bias[c], mult[c], shift[c], q.zp, q.lo, q.hi);
		bad += memcmp(dram, want, sizeof dram) != 0;
		bad5 += have >= CM_SIMD_AVX512 && memcmp(dram5, want, sizeof dram5) != 0;
	}
	CHECK(!bad, "STORE with requantization on AVX2: 300 instructions' rows (overlapping ones last; clamps with "
		    "lo > hi too) equal the generic loop's (%ld differ)", bad);
	if (have >= CM_SIMD_AVX512)
		CHECK(!bad5, "STORE with requantization on AVX-512: the same 300 equal the generic loop's (%ld differ)",
		      bad5);
#endif
}

/* ---- the data path through cm_compute / cm_store ---- */

typedef struct dps {
	cm_dp d[3];       /* generic, AVX2, AVX-512 (CM_SIMD_*) */
	int n;            /* the paths this CPU has */
	uint32_t R, C;
	uint64_t sp_lines, acc_lines;
} dps;

static int dps_open(dps *p, int n, uint32_t R, uint32_t C, uint64_t sp_lines, uint64_t acc_lines)
{
	memset(p, 0, sizeof *p);
	p->n = n, p->R = R, p->C = C, p->sp_lines = sp_lines, p->acc_lines = acc_lines;
	for (int k = 0; k < n; k++) {
		cm_dp *d = &p->d[k];
		d->R = R, d->C = C, d->B = 16, d->bshift = 4;
		cm_dp_set(d, k);
		d->sp = calloc(sp_lines, R);
		d->acc = calloc(acc_lines, 4u * C);
		d->wt = calloc((size_t)R * C, sizeof *d->wt);
		d->dram_bytes = 1 << 16;
		d->dram = calloc(1, d->dram_bytes);
		d->sp_lines = sp_lines;
		if (!d->sp || !d->acc || !d->wt || !d->dram)
			return -1;
	}
	return 0;
}

static void dps_close(dps *p)
{
	for (int k = 0; k < p->n; k++) {
		free(p->d[k].sp);
		free(p->d[k].acc);
		free(p->d[k].dram);
		cm_dp_free(&p->d[k]);
	}
}

/* the same random memories in all */
static void dps_fill(dps *p)
{
	cm_dp *g = &p->d[0];
	for (uint64_t i = 0; i < p->sp_lines * p->R; i++)
		g->sp[i] = corner8();
	for (uint64_t i = 0; i < p->acc_lines * p->C; i++)
		g->acc[i] = rnd() % 5 ? (int32_t)(rnd() % 4001) - 2000 : corner32();
	for (uint64_t i = 0; i < g->dram_bytes; i++)
		g->dram[i] = (uint8_t)rnd();
	for (int k = 1; k < p->n; k++) {
		cm_dp *v = &p->d[k];
		memcpy(v->sp, g->sp, p->sp_lines * p->R);
		memcpy(v->acc, g->acc, p->acc_lines * p->C * 4u);
		memcpy(v->dram, g->dram, g->dram_bytes);
	}
	/* written behind the data path's back: what it converted of SP is stale */
	for (int k = 0; k < p->n; k++)
		cm_sp_written(&p->d[k], 0, p->sp_lines);
}

/* 0 when every path's memories equal the generic one's, else a bit per
 * path that differs (1 << CM_SIMD_AVX2, 1 << CM_SIMD_AVX512) */
static int dps_diff(const dps *p)
{
	const cm_dp *g = &p->d[0];
	int bits = 0;
	for (int k = 1; k < p->n; k++) {
		const cm_dp *v = &p->d[k];
		if (memcmp(g->sp, v->sp, p->sp_lines * p->R) || memcmp(g->acc, v->acc, p->acc_lines * p->C * 4u) ||
		    memcmp(g->dram, v->dram, g->dram_bytes))
			bits |= 1 << k;
	}
	return bits;
}

/* one instruction on all: dps_diff after it */
static int all(dps *p, const loom_insn *in, int store)
{
	for (int k = 0; k < p->n; k++) {
		if (store)
			cm_store(&p->d[k], in);
		else
			cm_compute(&p->d[k], in);
	}
	return dps_diff(p);
}

/* per path that differs: one more */
static void tally(long *bad, int bits)
{
	for (int k = 1; k < 3; k++)
		bad[k] += bits >> k & 1;
}

/* lint: long function: one random instruction of each kind, fields drawn within the memories */
static void data_round(dps *p, long bad[7][3])
{
	const uint32_t R = p->R, C = p->C;
	dps_fill(p);
	/* MATMUL: weights with a few zero rows (a padded first convolution) */
	uint32_t ncb = 1 + rnd() % 3, kh = 1 + rnd() % 3, kw = 1 + rnd() % 3, sh = 1 + rnd() % 2, sw = 1 + rnd() % 2,
		 dh = 1 + rnd() % 2, dw = 1 + rnd() % 2, oh = 1 + rnd() % 5, ow = 1 + rnd() % 9;
	uint32_t inh = (oh - 1) * sh + (kh - 1) * dh + 1, inw = (ow - 1) * sw + (kw - 1) * dw + 1;
	uint32_t folds = ncb * kh * kw, wgt = 0, act = folds * C + 3;
	if (rnd() % 2)
		for (int k = 0; k < p->n; k++)
			for (uint32_t f = 0; f < folds; f++)
				for (uint32_t c = 0; c < C; c++)
					memset(p->d[k].sp + ((uint64_t)wgt + f * C + c) * R + R / 2, 0, R - R / 2);
	for (int k = 0; k < p->n; k++)
		cm_sp_written(&p->d[k], 0, p->sp_lines);
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_MATMUL;
	setf(&in, LOOM_F_MATMUL_ACT_ADDR, act);
	setf(&in, LOOM_F_MATMUL_WGT_ADDR, wgt);
	setf(&in, LOOM_F_MATMUL_ACC_ADDR, rnd() % 8);
	setf(&in, LOOM_F_MATMUL_IN_W, inw);
	setf(&in, LOOM_F_MATMUL_IN_H, inh);
	setf(&in, LOOM_F_MATMUL_OUT_W, ow);
	setf(&in, LOOM_F_MATMUL_OUT_H, oh);
	setf(&in, LOOM_F_MATMUL_NCB, ncb);
	setf(&in, LOOM_F_MATMUL_KW, kw);
	setf(&in, LOOM_F_MATMUL_KH, kh);
	setf(&in, LOOM_F_MATMUL_SW, sw);
	setf(&in, LOOM_F_MATMUL_SH, sh);
	setf(&in, LOOM_F_MATMUL_DW, dw);
	setf(&in, LOOM_F_MATMUL_DH, dh);
	setf(&in, LOOM_F_MATMUL_ACCUMULATE, rnd() % 2);
	tally(bad[0], all(p, &in, 0));
	/* the same weights again (converted before) on other activations */
	setf(&in, LOOM_F_MATMUL_ACT_ADDR, act + 1);
	tally(bad[0], all(p, &in, 0));
	/* STORE with requantization from the accumulator */
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_STORE;
	uint32_t n0w = 1 + rnd() % (C / 4);
	setf(&in, LOOM_F_STORE_SOURCE, LOOM_MEM_ACC_REQUANT);
	setf(&in, LOOM_F_STORE_ROW_WORDS, n0w);
	setf(&in, LOOM_F_STORE_DRAM_ADDR, 4 * (rnd() % 64));
	setf(&in, LOOM_F_STORE_MEM_ADDR, 3 + rnd() % 8);
	setf(&in, LOOM_F_STORE_N1, 1 + rnd() % 6);
	setf(&in, LOOM_F_STORE_N2, 1 + rnd() % 3);
	setf(&in, LOOM_F_STORE_N3, 1 + rnd() % 2);
	setf(&in, LOOM_F_STORE_STRIDE1, 4 * (rnd() % 40));
	setf(&in, LOOM_F_STORE_STRIDE2, 4 * (rnd() % 400));
	setf(&in, LOOM_F_STORE_STRIDE3, 4 * (rnd() % 1000));
	setf(&in, LOOM_F_STORE_PARAM_ADDR, 0);
	int8_t lo = corner8(), hi = corner8();
	setf(&in, LOOM_F_STORE_ZERO_POINT, (uint8_t)corner8());
	setf(&in, LOOM_F_STORE_CLIP_LO, (uint8_t)(lo < hi ? lo : hi));
	setf(&in, LOOM_F_STORE_CLIP_HI, (uint8_t)(lo < hi ? hi : lo));
	for (int k = 0; k < p->n; k++)
		for (uint32_t c = 0; c < C; c++) /* shifts of 0..40 */
			p->d[k].acc[2 * C + c] = (int32_t)(p->d[0].acc[2 * C + c] & 0x7fffffff) % 41;
	tally(bad[1], all(p, &in, 1));
	/* STORE SOURCE 3: the requantized rows plus the residual rows of SP
	 * (STRIDE3 + k * N3) through the ELTWISE ADD of parameter line 3 */
	loom_eltadd_param ep = {
		.mult = (int32_t)(rnd() & 0x7fffffff),
		.mult_a = (int16_t)(rnd() % 4 ? (int16_t)rnd() : (int16_t)(rnd() % 2 ? -32768 : 32767)),
		.mult_b = (int16_t)(rnd() % 4 ? (int16_t)rnd() : (int16_t)(rnd() % 2 ? -32768 : 32767)),
		.zp_a = corner8(), .zp_b = corner8(), .zp_out = corner8(), .lo = lo < hi ? lo : hi, .hi = lo < hi ? hi : lo,
		.shift = (uint8_t)(rnd() % 32)};
	uint32_t ew[LOOM_RESADD_WORDS];
	loom_eltadd_pack(&ep, ew);
	for (int k = 0; k < p->n; k++)
		for (uint32_t w = 0; w < LOOM_RESADD_WORDS; w++)
			p->d[k].acc[3 * C + w] = (int32_t)ew[w];
	setf(&in, LOOM_F_STORE_SOURCE, LOOM_MEM_ACC_RESADD);
	setf(&in, LOOM_F_STORE_ROW_WORDS, 1 + rnd() % ((R < C ? R : C) / 4));
	setf(&in, LOOM_F_STORE_MEM_ADDR, 4 + rnd() % 8);
	setf(&in, LOOM_F_STORE_N3, 1 + rnd() % 3);
	setf(&in, LOOM_F_STORE_STRIDE3, rnd() % 1000);
	tally(bad[6], all(p, &in, 1));
	/* ELTWISE, add or multiply, B per line, per plane or one, maybe in place */
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_ELTWISE;
	uint32_t planes = 1 + rnd() % 3, pl = 1 + rnd() % 9, sa = rnd() % 40;
	setf(&in, LOOM_F_ELTWISE_PLANES, planes);
	setf(&in, LOOM_F_ELTWISE_PLANE_LINES, pl);
	setf(&in, LOOM_F_ELTWISE_SRC_A, sa);
	setf(&in, LOOM_F_ELTWISE_SRC_B, 100 + rnd() % 40);
	setf(&in, LOOM_F_ELTWISE_DST, rnd() % 2 ? sa : 200 + rnd() % 40);
	setf(&in, LOOM_F_ELTWISE_FUNC, rnd() % 2);
	setf(&in, LOOM_F_ELTWISE_B_MODE, rnd() % 3);
	setf(&in, LOOM_F_ELTWISE_ZP_A, (uint8_t)corner8());
	setf(&in, LOOM_F_ELTWISE_ZP_B, (uint8_t)corner8());
	setf(&in, LOOM_F_ELTWISE_MULT_A, (uint16_t)(rnd() % 4 ? (int16_t)rnd() : (int16_t)(rnd() % 2 ? -32768 : 32767)));
	setf(&in, LOOM_F_ELTWISE_MULT_B, (uint16_t)(rnd() % 4 ? (int16_t)rnd() : (int16_t)(rnd() % 2 ? -32768 : 32767)));
	setf(&in, LOOM_F_ELTWISE_MULT, rnd() & 0x7fffffff);
	setf(&in, LOOM_F_ELTWISE_SHIFT, rnd() % 32);
	setf(&in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)corner8());
	setf(&in, LOOM_F_ELTWISE_CLIP_LO, (uint8_t)(lo < hi ? lo : hi));
	setf(&in, LOOM_F_ELTWISE_CLIP_HI, (uint8_t)(lo < hi ? hi : lo));
	tally(bad[2], all(p, &in, 0));
	/* POOL, max or average, maybe in place */
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_POOL;
	oh = 1 + rnd() % 4, ow = 1 + rnd() % 5, kh = 1 + rnd() % 3, kw = 1 + rnd() % 3;
	inh = (oh - 1) * sh + (kh - 1) * dh + 1, inw = (ow - 1) * sw + (kw - 1) * dw + 1;
	uint32_t src = 300 + rnd() % 30;
	setf(&in, LOOM_F_POOL_SRC, src);
	setf(&in, LOOM_F_POOL_DST, rnd() % 4 ? 600 + rnd() % 30 : src);
	setf(&in, LOOM_F_POOL_IN_W, inw);
	setf(&in, LOOM_F_POOL_IN_H, inh);
	setf(&in, LOOM_F_POOL_OUT_W, ow);
	setf(&in, LOOM_F_POOL_OUT_H, oh);
	setf(&in, LOOM_F_POOL_NCB, 1 + rnd() % 3);
	setf(&in, LOOM_F_POOL_KW, kw);
	setf(&in, LOOM_F_POOL_KH, kh);
	setf(&in, LOOM_F_POOL_SW, sw);
	setf(&in, LOOM_F_POOL_SH, sh);
	setf(&in, LOOM_F_POOL_DW, dw);
	setf(&in, LOOM_F_POOL_DH, dh);
	setf(&in, LOOM_F_POOL_FUNC, rnd() % 2);
	setf(&in, LOOM_F_POOL_ZP_IN, (uint8_t)corner8());
	setf(&in, LOOM_F_POOL_MULT, rnd() & 0x7fffffff);
	setf(&in, LOOM_F_POOL_SHIFT, rnd() % 32);
	setf(&in, LOOM_F_POOL_ZP_OUT, (uint8_t)corner8());
	setf(&in, LOOM_F_POOL_CLIP_LO, (uint8_t)(lo < hi ? lo : hi));
	setf(&in, LOOM_F_POOL_CLIP_HI, (uint8_t)(lo < hi ? hi : lo));
	tally(bad[3], all(p, &in, 0));
	/* DWCONV (its requantization per lane) */
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_DWCONV;
	setf(&in, LOOM_F_DWCONV_SRC, 300);
	setf(&in, LOOM_F_DWCONV_WGT, 400);
	setf(&in, LOOM_F_DWCONV_PARAM, 450);
	setf(&in, LOOM_F_DWCONV_DST, 700);
	setf(&in, LOOM_F_DWCONV_IN_W, inw);
	setf(&in, LOOM_F_DWCONV_IN_H, inh);
	setf(&in, LOOM_F_DWCONV_OUT_W, ow);
	setf(&in, LOOM_F_DWCONV_OUT_H, oh);
	setf(&in, LOOM_F_DWCONV_NCB, 1);
	setf(&in, LOOM_F_DWCONV_KW, kw);
	setf(&in, LOOM_F_DWCONV_KH, kh);
	setf(&in, LOOM_F_DWCONV_SW, sw);
	setf(&in, LOOM_F_DWCONV_SH, sh);
	setf(&in, LOOM_F_DWCONV_DW, dw);
	setf(&in, LOOM_F_DWCONV_DH, dh);
	setf(&in, LOOM_F_DWCONV_ZP_IN, (uint8_t)corner8());
	setf(&in, LOOM_F_DWCONV_ZP_OUT, (uint8_t)corner8());
	setf(&in, LOOM_F_DWCONV_CLIP_LO, (uint8_t)(lo < hi ? lo : hi));
	setf(&in, LOOM_F_DWCONV_CLIP_HI, (uint8_t)(lo < hi ? hi : lo));
	tally(bad[4], all(p, &in, 0));
	/* a LOAD into SP (position by position when its rows are pixel-major) */
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_LOAD;
	uint32_t n3 = 1 + rnd() % 4;
	setf(&in, LOOM_F_LOAD_TARGET, LOOM_MEM_SP);
	setf(&in, LOOM_F_LOAD_ROW_WORDS, rnd() % 2 ? R / 4 : 1 + rnd() % (R / 4));
	setf(&in, LOOM_F_LOAD_DRAM_ADDR, 4 * (rnd() % 256));
	setf(&in, LOOM_F_LOAD_MEM_ADDR, 700 + rnd() % 8);
	setf(&in, LOOM_F_LOAD_N1, 1 + rnd() % 7);
	setf(&in, LOOM_F_LOAD_N2, 1 + rnd() % 5);
	setf(&in, LOOM_F_LOAD_N3, n3);
	setf(&in, LOOM_F_LOAD_STRIDE1, rnd() % 2 ? n3 * R : 4 * (rnd() % 40));
	setf(&in, LOOM_F_LOAD_STRIDE2, 4 * (rnd() % 200));
	setf(&in, LOOM_F_LOAD_STRIDE3, rnd() % 2 ? R : 4 * (rnd() % 60));
	setf(&in, LOOM_F_LOAD_PAD_TOP, rnd() % 2);
	setf(&in, LOOM_F_LOAD_PAD_BOTTOM, rnd() % 2);
	setf(&in, LOOM_F_LOAD_PAD_LEFT, rnd() % 2);
	setf(&in, LOOM_F_LOAD_PAD_RIGHT, rnd() % 2);
	setf(&in, LOOM_F_LOAD_PAD_VALUE, (uint8_t)corner8());
	uint64_t b[3] = {0, 0, 0};
	for (int k = 0; k < p->n; k++)
		b[k] = cm_load(&p->d[k], &in);
	int bits = dps_diff(p);
	for (int k = 1; k < p->n; k++)
		bits |= (b[k] != b[0]) << k;
	tally(bad[5], bits);
}

/* every path this CPU has (have: cm_dp_pick's answer) against the generic one */
static void test_data(int have)
{
	/* every array of configs/ and tests/configs/ (16x16, 12x20, 8x8, 32x32),
	 * the extremes and other odd ones (a last block of 4, 8 or 12 columns;
	 * rows not a multiple of 8 or 16; 16 rows in several blocks of 16
	 * columns, whose weights VNNI permutes instead of gathering) */
	static const uint32_t shapes[][2] = {{16, 16}, {12, 20}, {8, 8},  {32, 32}, {4, 4},
					     {64, 64}, {16, 8},  {20, 12}, {24, 44}, {36, 52}, {16, 48}};
	static const char *const path[] = {"generic", "AVX2", "AVX-512"};
	if (have < CM_SIMD_AVX2) {
		check_skip("the data path on AVX2: this CPU has no AVX2");
		return;
	}
	if (have < CM_SIMD_AVX512)
		check_skip("the data path on AVX-512: this CPU has no AVX-512 VNNI");
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		dps p;
		uint32_t R = shapes[s][0], C = shapes[s][1];
		if (dps_open(&p, have + 1, R, C, 4096, 64)) {
			CHECK_FAIL("%ux%u: out of memory", R, C);
			dps_close(&p);
			continue;
		}
		long bad[7][3] = {{0}};
		int rounds = R * C > 1024 ? 60 : 200;
		for (int i = 0; i < rounds; i++)
			data_round(&p, bad);
		for (int k = 1; k <= have; k++) {
			const char *v = path[k];
			CHECK(!bad[0][k], "%ux%u: %d x 2 random MATMULs: generic and %s give the same SP, ACC and DRAM "
					  "(%ld differ)", R, C, rounds, v, bad[0][k]);
			CHECK(!bad[1][k], "%ux%u: %d random STOREs with requantization: %s the same (%ld differ)", R, C,
			      rounds, v, bad[1][k]);
			CHECK(!bad[6][k], "%ux%u: %d random STOREs with a residual add (SOURCE 3): %s the same (%ld differ)",
			      R, C, rounds, v, bad[6][k]);
			CHECK(!bad[2][k], "%ux%u: %d random ELTWISEs: %s the same (%ld differ)", R, C, rounds, v, bad[2][k]);
			CHECK(!bad[3][k], "%ux%u: %d random POOLs: %s the same (%ld differ)", R, C, rounds, v, bad[3][k]);
			CHECK(!bad[4][k], "%ux%u: %d random DWCONVs: %s the same (%ld differ)", R, C, rounds, v, bad[4][k]);
			CHECK(!bad[5][k], "%ux%u: %d random LOADs into SP: %s the same, and the same DRAM bytes counted "
					  "(%ld differ)", R, C, rounds, v, bad[5][k]);
		}
		dps_close(&p);
	}
}

/* ---- the timing memo ---- */

typedef struct dev {
	loom_hw *hw;
	const char *name;
} dev;

static uint32_t reg(loom_hw *hw, uint32_t off) { return loom_hw_mmio_read(hw, off); }

/* every counter, the status, the device's time: what the memo must keep */
typedef struct snap {
	uint32_t ctr[LOOM_CTR_COUNT], evt[LOOM_EVT_COUNT], status, cause, pc, info;
	uint64_t now;
} snap;

static void take(loom_hw *hw, snap *s)
{
	for (unsigned i = 0; i < LOOM_CTR_COUNT; i++)
		s->ctr[i] = reg(hw, LOOM_REG_CTR_BASE + 4 * i);
	for (unsigned i = 0; i < LOOM_EVT_COUNT; i++)
		s->evt[i] = reg(hw, LOOM_REG_EVT_BASE + 4 * i);
	s->status = reg(hw, LOOM_REG_STATUS);
	s->cause = reg(hw, LOOM_REG_ERR_CAUSE);
	s->pc = reg(hw, LOOM_REG_ERR_PC);
	s->info = reg(hw, LOOM_REG_ERR_INFO);
	s->now = loom_hw_cycles(hw);
}

static void load_prog(loom_hw *hw, const loom_cosim_prog *p)
{
	for (size_t i = 0; i < p->nregions; i++)
		loom_hw_dram_write(hw, p->regions[i].addr, p->regions[i].init, p->regions[i].len);
}

/* DRAM of every region equal on both */
static int same_dram(loom_hw *a, loom_hw *b, const loom_cosim_prog *p)
{
	for (size_t i = 0; i < p->nregions; i++) {
		uint32_t n = p->regions[i].len;
		uint8_t *x = malloc(n), *y = malloc(n);
		loom_hw_dram_read(a, p->regions[i].addr, x, n);
		loom_hw_dram_read(b, p->regions[i].addr, y, n);
		int same = !memcmp(x, y, n);
		free(x);
		free(y);
		if (!same)
			return 0;
	}
	return 1;
}

/* what happens to a job: plain, rewritten mid-run, aborted mid-run */
enum { JOB_PLAIN, JOB_REWRITE, JOB_ABORT };

/* run p on hw as `how` says; the snapshot after it */
static void job(loom_hw *hw, const loom_cosim_prog *p, int how, snap *s)
{
	loom_hw_mmio_write(hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	loom_hw_mmio_write(hw, LOOM_REG_INSN_BASE, (uint32_t)p->insn_addr);
	loom_hw_mmio_write(hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	if (how != JOB_PLAIN) {
		/* a few slices in, then the host acts */
		loom_hw_run(hw, 300);
		if (how == JOB_ABORT) {
			loom_hw_mmio_write(hw, LOOM_REG_CTRL, LOOM_CTRL_ABORT);
		} else if (p->ninsns > 3) {
			/* the last instruction before FINISH becomes a FINISH: the rest of the
			 * job's fetches differ from the recording */
			uint8_t fin[LOOM_INSN_BYTES] = {LOOM_OP_FINISH};
			loom_hw_dram_write(hw, loom_cosim_pc(p, p->ninsns - 2), fin, sizeof fin);
		}
	}
	loom_hw_run(hw, 5000000);
	take(hw, s);
	loom_hw_mmio_write(hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
}

static int same_snap(const snap *a, const snap *b)
{
	return !memcmp(a->ctr, b->ctr, sizeof a->ctr) && !memcmp(a->evt, b->evt, sizeof a->evt) &&
	       a->status == b->status && a->cause == b->cause && a->pc == b->pc && a->info == b->info &&
	       a->now == b->now;
}

/* lint: long function: one sequence of jobs on both devices, then the checks */
static void test_memo(const char *cfgname, const char *root)
{
	char err[512];
	loom_hwcfg cfg;
	if (loom_hwcfg_load(&cfg, cfgname, root, err, sizeof err)) {
		CHECK_FAIL("load config %s: %s", cfgname, err);
		return;
	}
	loom_hw_opts o;
	memset(&o, 0, sizeof o);
	o.cmodel_flags = LOOM_CMODEL_NO_MEMO;
	loom_hw *plain = loom_cmodel_open(&cfg, &o, err, sizeof err);
	o.cmodel_flags = 0;
	loom_hw *memo = loom_cmodel_open(&cfg, &o, err, sizeof err);
	if (!CHECK(plain && memo, "%s: two C models open", cfgname)) {
		loom_hw_close(plain);
		loom_hw_close(memo);
		return;
	}
	/* each program: twice plainly (recorded, replayed), rewritten mid-run,
	 * aborted mid-run, with other windows, and plainly again */
	static const struct {
		int how, windows, idle;
		const char *what;
	} steps[] = {
	    {JOB_PLAIN, 0, 1000, "first run (recorded)"},
	    {JOB_PLAIN, 0, 1000, "second run (replayed)"},
	    {JOB_PLAIN, 0, 0, "right after the last (tsim caught up)"},
	    {JOB_REWRITE, 0, 1000, "an instruction rewritten mid-run (the replay diverges)"},
	    {JOB_ABORT, 0, 1000, "aborted mid-run"},
	    {JOB_PLAIN, 1, 1000, "other DMA windows"},
	    {JOB_PLAIN, 0, 1000, "again after all that (replayed)"},
	};
	long bad[sizeof steps / sizeof steps[0]] = {0};
	int progs = 0;
	for (uint64_t seed = 1; seed <= 12; seed++) {
		loom_cosim_prog p;
		if (loom_cosim_gen(&cfg, seed, &p, err, sizeof err)) {
			CHECK_FAIL("%s: generator, seed %llu: %s", cfgname, (unsigned long long)seed, err);
			continue;
		}
		progs++;
		for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
			snap a, b;
			loom_hw *h[2] = {plain, memo};
			for (int i = 0; i < 2; i++) {
				/* idle time: the DRAM's credit refills, the memo may replay */
				loom_hw_run(h[i], steps[k].idle);
				load_prog(h[i], &p);
				/* windows: the whole DRAM as one, or off */
				loom_hw_mmio_write(h[i], LOOM_REG_WIN0_BASE, 0);
				loom_hw_mmio_write(h[i], LOOM_REG_WIN0_SIZE, (uint32_t)cfg.dram_bytes);
				loom_hw_mmio_write(h[i], LOOM_REG_WIN_CTRL, (uint32_t)steps[k].windows);
				job(h[i], &p, steps[k].how, i ? &b : &a);
			}
			if (!same_snap(&a, &b) || !same_dram(plain, memo, &p))
				bad[k]++;
		}
		loom_cosim_free(&p);
	}
	for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++)
		CHECK(!bad[k], "%s: %d programs, %s: counters, status, device time and DRAM equal without the memo "
			       "(%ld differ)", cfgname, progs, steps[k].what, bad[k]);
	uint64_t st[4];
	int avx2;
	loom_cmodel_stats(memo, st, &avx2);
	CHECK(st[0] >= (uint64_t)progs && st[1] >= (uint64_t)progs && st[3] > 0,
	      "%s: the memo replayed %llu jobs, recorded %llu, ran %llu directly, caught tsim up %llu times", cfgname,
	      (unsigned long long)st[0], (unsigned long long)st[1], (unsigned long long)st[2],
	      (unsigned long long)st[3]);
	loom_cmodel_stats(plain, st, &avx2);
	CHECK(st[0] == 0 && st[1] == 0, "%s: LOOM_CMODEL_NO_MEMO: nothing replayed or recorded (%llu direct)", cfgname,
	      (unsigned long long)st[2]);
	CHECK(loom_cmodel_stats(NULL, st, &avx2) == -1, "loom_cmodel_stats refuses what is not a C model");
	loom_hw_close(plain);
	loom_hw_close(memo);
}

int main(void)
{
	check_init(CHECK_SKIPS);
	char err[256];
	int have = cm_dp_pick(0, err, sizeof err);
	if (have < CM_SIMD_AVX512)
		printf("note: the %s data path is not in use on this CPU (or LOOM_CMODEL_SIMD says so)\n",
		       have < CM_SIMD_AVX2 ? "AVX2" : "AVX-512");
	test_requant(have);
	test_data(have < 0 ? CM_SIMD_GENERIC : have);
	const char *root = getenv("LOOM_ROOT");
	if (!root || !*root)
		root = loom_root_dir();
	static const char *cfgs[] = {"default", "odd", "small", "large"};
	for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
		test_memo(cfgs[i], root);
	return check_report();
}
