/* test_directed.c - directed int8 conv2d / GEMM layers and vector-unit
 * layers (max/avg pooling, depthwise conv, elementwise add/mul, LUT) run on
 * a Loom backend (rtl or cmodel) through loom_hw_exec, every output byte
 * compared with the plain C reference (cosim/golden.c). Each case's program is also statically
 * verified (loom_prog_verify: decoder checks, tokens, races), its MARK record
 * and counters checked (MACS exact), and the bytes around the output must
 * stay untouched. One line per case; the last line is "N passed, M failed".
 *
 * usage: test_directed [--backend cmodel|rtl] [--hw CFG] [--case SUBSTR] [--seed N] [-v]
 *                      [--random N]   (N random conv/GEMM layers and N random vector layers, with
 *                                      random planner hints, after the directed ones; a random
 *                                      case whose hints do not fit is skipped) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/hw.h"
#include "loom/isa.h"
#include "compiler/npu/npu.h"
#include "cosim/golden.h"
#include "tests/unit/check.h"

typedef struct rng {
	uint64_t s;
} rng;

static uint32_t rnd(rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 2685821657736338717ull) >> 32);
}

static int32_t rnd_range(rng *r, int32_t lo, int32_t hi)
{
	return lo + (int32_t)(rnd(r) % (uint32_t)(hi - lo + 1));
}

typedef struct tcase {
	char name[96];
	int gemm;
	loom_conv_params c;
	loom_gemm_params g;
	loom_conv_hints hints;
	int has_hints;
	int wrange;           /* weights in [-wrange, wrange]; 0: full int8 */
} tcase;

#define GUARD 256
#define CANARY 0xa5

/* 0 pass, 1 fail (message in why) */
static int run_case(loom_hw *hw, const tcase *tc, uint64_t seed, int verbose, char *why, size_t wlen,
		    char *info, size_t ilen)
{
	const loom_hwcfg *cfg = &hw->cfg;
	loom_conv_params cp;
	if (tc->gemm)
		loom_gemm_to_conv(&tc->g, &cp);
	else
		cp = tc->c;
	if (tc->has_hints)
		cp.hints = &tc->hints;
	loom_gemm_params gp = tc->g;
	if (tc->has_hints)
		gp.hints = &tc->hints;

	char err[512];
	loom_conv_plan pl;
	if (loom_conv_plan_make(cfg, &cp, &pl, err, sizeof err)) {
		snprintf(why, wlen, "plan: %s", err);
		return 1;
	}
	rng r = {seed * 0x9e3779b97f4a7c15ull + 1};
	uint32_t kk = cp.kh * cp.kw;
	size_t nin = (size_t)pl.in_bytes, nw = (size_t)cp.cout * kk * cp.cin;
	int8_t *in = malloc(nin), *w = malloc(nw);
	int32_t *bias = malloc(cp.cout * 4), *mult = malloc(cp.cout * 4), *shift = malloc(cp.cout * 4);
	uint8_t *got = malloc(pl.out_bytes + GUARD), *want = malloc(pl.out_bytes + GUARD);
	int rc = 1;
	loom_prog prog;
	loom_prog_init(&prog);
	if (!in || !w || !bias || !mult || !shift || !got || !want) {
		snprintf(why, wlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nin; i++)
		in[i] = (int8_t)rnd(&r);
	for (size_t i = 0; i < nw; i++)
		w[i] = tc->wrange ? (int8_t)rnd_range(&r, -tc->wrange, tc->wrange) : (int8_t)rnd(&r);
	double wstd = tc->wrange ? tc->wrange / sqrt(3.0) : 73.9;
	double accstd = sqrt((double)cp.cin * kk) * 73.9 * wstd;
	int sh = (int)lround(log2(0.75 * accstd / 40.0));
	if (sh < 0)
		sh = 0;
	for (uint32_t i = 0; i < cp.cout; i++) {
		bias[i] = rnd_range(&r, -(int32_t)accstd, (int32_t)accstd);
		mult[i] = (int32_t)(0x40000000u + (rnd(&r) & 0x3fffffffu));
		shift[i] = sh + (int32_t)(rnd(&r) % 2);
	}
	/* DRAM: MARK record, input, weights, params, output + guards, program */
	loom_dram_layout lay;
	uint64_t prog_addr = 0;
	int src = loom_layer_stage(hw, &cp, tc->gemm ? &gp : NULL, &pl, in, w, bias, mult, shift,
				   0x1000 + (uint32_t)seed, GUARD, &lay, &prog, &prog_addr, why, wlen);
	if (verbose && prog_addr)
		loom_prog_dump(&prog, prog_addr, stderr);
	if (src)
		goto out;
	uint64_t out_base = lay.out_addr - GUARD;
	memset(got, CANARY, pl.out_bytes + GUARD);
	if (loom_hw_dram_write(hw, out_base, got, GUARD) ||
	    loom_hw_dram_write(hw, lay.out_addr, got, pl.out_bytes + GUARD)) {
		snprintf(why, wlen, "dram write: %s", loom_hw_error(hw));
		goto out;
	}
	loom_hw_result res;
	uint64_t maxc = 20 * pl.est_cycles + 2000000;
	int xr = loom_hw_exec(hw, prog_addr, maxc, &res);
	if (xr != LOOM_HW_IRQ || (res.status & LOOM_STATUS_ERROR) || !(res.status & LOOM_STATUS_DONE)) {
		snprintf(why, wlen, "run: %s status=%x cause=%s pc=%#x info=%s", xr == LOOM_HW_IRQ ? "irq" :
			 xr == LOOM_HW_TIMEOUT ? "timeout" : loom_hw_error(hw), res.status, loom_err_name(res.cause),
			 res.pc, loom_field_name(res.info));
		goto out;
	}
	/* reference */
	memset(want, CANARY, pl.out_bytes + GUARD);
	if (tc->gemm) {
		const int8_t *b = w; /* the GEMM's B is [k][n]: w was drawn in that order */
		loom_golden_gemm(&gp, in, b, bias, mult, shift, want);
	} else {
		loom_golden_conv(&cp, in, w, bias, mult, shift, want);
	}
	if (loom_hw_dram_read(hw, lay.out_addr, got, pl.out_bytes + GUARD)) {
		snprintf(why, wlen, "dram read: %s", loom_hw_error(hw));
		goto out;
	}
	size_t bpc = cp.raw ? 4 : 1, rowb = (size_t)cp.cout * bpc, wr = cp.raw ? rowb : (cp.cout + 3) / 4 * 4;
	size_t bad = 0, first = 0;
	for (size_t px = 0; px < (size_t)pl.oh * pl.ow; px++)
		for (size_t b = 0; b < pl.out_stride; b++) {
			size_t o = px * pl.out_stride + b;
			if (b >= rowb && b < wr)
				continue; /* written (requant lanes of the padding channels), value unspecified */
			if (got[o] != want[o] && !bad++)
				first = o;
		}
	for (size_t o = pl.out_bytes; o < pl.out_bytes + GUARD; o++)
		if (got[o] != CANARY && !bad++)
			first = o;
	uint8_t guard[GUARD];
	if (!loom_hw_dram_read(hw, out_base, guard, GUARD))
		for (size_t o = 0; o < GUARD; o++)
			if (guard[o] != CANARY && !bad++)
				first = pl.out_bytes + GUARD + o;
	if (bad) {
		size_t px = first / pl.out_stride, b = first % pl.out_stride;
		snprintf(why, wlen, "%zu bytes differ; first at pixel %zu (y %zu x %zu) byte %zu: got %02x want %02x",
			 bad, px, px / pl.ow, px % pl.ow, b, first < pl.out_bytes ? got[first] : 0,
			 first < pl.out_bytes ? want[first] : CANARY);
		goto out;
	}
	/* MARK record and counters */
	uint32_t rec[16];
	if (loom_hw_dram_read(hw, lay.mark_addr, rec, sizeof rec)) {
		snprintf(why, wlen, "dram read: %s", loom_hw_error(hw));
		goto out;
	}
	uint64_t macs = rec[1 + LOOM_CTR_MACS_LO] | (uint64_t)rec[1 + LOOM_CTR_MACS_HI] << 32;
	uint64_t macs_reg = loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_MACS_LO) |
			    (uint64_t)loom_hw_mmio_read(hw, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_MACS_HI) << 32;
	if (rec[0] != lay.mark_id || macs != pl.macs_issued || macs_reg != pl.macs_issued ||
	    rec[1 + LOOM_CTR_INSNS] != prog.n - 2) {
		snprintf(why, wlen, "MARK record: id %#x macs %llu (reg %llu, expected %llu) insns %u (expected %zu)",
			 rec[0], (unsigned long long)macs, (unsigned long long)macs_reg,
			 (unsigned long long)pl.macs_issued, rec[1 + LOOM_CTR_INSNS], prog.n - 2);
		goto out;
	}
	snprintf(info, ilen,
		 "%llu cycles, %zu insns, tile %ux%u x%u, kc %u/%u, ky %u/%u, g %u/%u%s%s, slots %u, banks %d, "
		 "packed %u, util %.0f%%",
		 (unsigned long long)res.cycles, prog.n, pl.th, pl.tw, pl.ntiles, pl.kc, pl.nk, pl.kyc, pl.nky, pl.g, pl.npass,
		 pl.wchunk ? " wchunk" : "", pl.npass > 1 ? (pl.chained ? " chained" : " barrier") : "", pl.nslots,
		 pl.banks, loom_conv_xpack(cfg, &cp) * (cp.xpack != 0),
		 100.0 * pl.macs / ((double)res.cycles * cfg->array_rows * cfg->array_cols));
	rc = 0;
out:
	loom_prog_free(&prog);
	free(in);
	free(w);
	free(bias);
	free(mult);
	free(shift);
	free(got);
	free(want);
	return rc;
}

static tcase conv(const char *name, uint32_t h, uint32_t w, uint32_t cin, uint32_t cout, uint32_t k, uint32_t s,
		  uint32_t d, uint32_t pad)
{
	tcase t;
	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "%s", name);
	loom_conv_init(&t.c);
	t.c.h = h;
	t.c.w = w;
	t.c.cin = cin;
	t.c.cout = cout;
	t.c.kh = t.c.kw = k;
	t.c.sh = t.c.sw = s;
	t.c.dh = t.c.dw = d;
	t.c.pad_top = t.c.pad_bottom = t.c.pad_left = t.c.pad_right = pad;
	t.c.in_zp = 5;
	t.c.out_zp = -3;
	return t;
}

static tcase gemm(const char *name, uint32_t m, uint32_t k, uint32_t n, int raw)
{
	tcase t;
	memset(&t, 0, sizeof t);
	snprintf(t.name, sizeof t.name, "%s", name);
	t.gemm = 1;
	loom_gemm_init(&t.g);
	t.g.m = m;
	t.g.k = k;
	t.g.n = n;
	t.g.raw = raw;
	if (!raw) {
		t.g.a_zp = -9;
		t.g.out_zp = 4;
	}
	return t;
}

static loom_conv_hints hint(uint32_t th, uint32_t tw, uint32_t kc, uint32_t g, int wchunk, int barrier, uint32_t kyc)
{
	loom_conv_hints h = {th, tw, kc, g, wchunk, barrier, kyc, 0};
	return h;
}

/* A random layer (and, sometimes, random planner hints). Every draw is its
 * own statement so that the sequence does not depend on the compiler's
 * order of evaluating arguments. */
static tcase random_case(rng *r, int idx)
{
	tcase t;
	char nm[96];
	if (rnd(r) % 4 == 0) {
		uint32_t m = 1 + rnd(r) % 70, k = 1 + rnd(r) % 90, n = 1 + rnd(r) % 90;
		int raw = rnd(r) % 5 == 0;
		t = gemm("", m, k, n, raw);
		t.g.a_stride = (t.g.k + 3) / 4 * 4 + 4 * (rnd(r) % 2);
		snprintf(nm, sizeof nm, "random %d: gemm %ux%ux%u%s", idx, m, k, n, raw ? " raw" : "");
	} else {
		uint32_t k = 1 + rnd(r) % 5, s = 1 + rnd(r) % 3;
		uint32_t d = k > 1 ? 1 + rnd(r) % 2 : 1;
		uint32_t ek = (k - 1) * d + 1;
		uint32_t h = ek + rnd(r) % 14, w = rnd(r) % 14;
		uint32_t cin = 1 + rnd(r) % 80, cout = 1 + rnd(r) % 80;
		t = conv("", h, w, cin, cout, k, s, d, 0);
		t.c.kw = 1 + rnd(r) % 5;
		t.c.dw = t.c.kw > 1 ? 1 + rnd(r) % 2 : 1;
		t.c.sw = 1 + rnd(r) % 3;
		uint32_t ekw = (t.c.kw - 1) * t.c.dw + 1;
		t.c.w += ekw;
		t.c.pad_top = rnd(r) % ek;
		t.c.pad_bottom = rnd(r) % ek;
		t.c.pad_left = rnd(r) % ekw;
		t.c.pad_right = rnd(r) % ekw;
		t.c.in_zp = (int8_t)rnd(r);
		t.c.out_zp = (int8_t)rnd(r);
		t.c.raw = rnd(r) % 8 == 0;
		if (!t.c.raw && rnd(r) % 3 == 0) {
			t.c.clip_lo = (int8_t)rnd_range(r, -128, 0);
			t.c.clip_hi = (int8_t)rnd_range(r, 0, 127);
		}
		t.c.in_stride = (t.c.cin + 3) / 4 * 4 + 4 * (rnd(r) % 2);
		snprintf(nm, sizeof nm, "random %d: conv %ux%ux%u->%u k%ux%u s%ux%u d%ux%u p%u%u%u%u%s", idx, t.c.h,
			 t.c.w, t.c.cin, t.c.cout, t.c.kh, t.c.kw, t.c.sh, t.c.sw, t.c.dh, t.c.dw, t.c.pad_top,
			 t.c.pad_bottom, t.c.pad_left, t.c.pad_right, t.c.raw ? " raw" : "");
	}
	snprintf(t.name, sizeof t.name, "%s", nm);
	t.wrange = rnd(r) % 2 ? 0 : 1 + (int)(rnd(r) % 40);
	if (!t.gemm && rnd(r) % 3 == 0) { /* a layer the planner may pack */
		t.c.xpack = 1;
		t.c.pad_left = t.c.pad_right = 0;
		t.c.dw = 1;
		t.c.cin = 1 + t.c.cin % 8;
		t.c.in_stride = (t.c.cin + 3) / 4 * 4;
		snprintf(t.name, sizeof t.name, "random %d: conv %ux%ux%u->%u k%ux%u s%ux%u d%ux%u p%u%u00%s xpack", idx,
			 t.c.h, t.c.w, t.c.cin, t.c.cout, t.c.kh, t.c.kw, t.c.sh, t.c.sw, t.c.dh, t.c.dw, t.c.pad_top,
			 t.c.pad_bottom, t.c.raw ? " raw" : "");
	}
	if (rnd(r) % 2) {
		uint32_t v[7];
		for (int i = 0; i < 7; i++)
			v[i] = rnd(r);
		t.has_hints = 1;
		t.hints = hint(v[0] % 4, v[1] % 6, v[2] % 3, v[3] % 3, (int)(v[4] % 3), (int)(v[5] % 2),
			       v[6] % 4 ? 0 : 1 + v[6] / 4 % 3);
	}
	return t;
}

/* ------------------------------------------------------------------ */
/* vector-unit layers: pooling, depthwise conv, elementwise, LUT */

typedef struct vcase {
	char name[96];
	loom_vec_params p;
	loom_vec_hints hints;
	int has_hints;
	int edge;            /* DWCONV: per-channel params cycle through requantization corner cases */
	int wrange;          /* DWCONV weights in [-wrange, wrange]; 0: full int8 */
	double lut_scale;    /* LUT: sigmoid table for this input scale (output scale 1/256, zp -128) */
	int in_lo, in_hi;    /* inputs in [in_lo, in_hi] when in_lo < in_hi; else full int8 */
} vcase;

static void vinit(vcase *v, const char *name, int kind, uint32_t h, uint32_t w, uint32_t c)
{
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	loom_vec_init(&v->p, kind);
	v->p.h = h;
	v->p.w = w;
	v->p.c = c;
}

static void vwin(vcase *v, uint32_t k, uint32_t s, uint32_t d, uint32_t pad)
{
	v->p.kh = v->p.kw = k;
	v->p.sh = v->p.sw = s;
	v->p.dh = v->p.dw = d;
	v->p.pad_top = v->p.pad_bottom = v->p.pad_left = v->p.pad_right = pad;
}

static vcase maxpool(const char *name, uint32_t h, uint32_t w, uint32_t c, uint32_t k, uint32_t s, uint32_t pad)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_POOL, h, w, c);
	vwin(&v, k, s, 1, pad);
	v.p.func = LOOM_POOL_MAX;
	return v;
}

/* count_include_pad average with an input/output scale ratio */
static vcase avgpool(const char *name, uint32_t h, uint32_t w, uint32_t c, uint32_t k, uint32_t s, uint32_t pad,
		     double ratio)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_POOL, h, w, c);
	vwin(&v, k, s, 1, pad);
	v.p.func = LOOM_POOL_AVG;
	v.p.in_zp = -7;
	v.p.out_zp = 3;
	loom_quant_mult(ratio / (k * k), &v.p.mult, &v.p.shift);
	return v;
}

static vcase dwconv(const char *name, uint32_t h, uint32_t w, uint32_t c, uint32_t k, uint32_t s, uint32_t pad)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_DWCONV, h, w, c);
	vwin(&v, k, s, 1, pad);
	v.p.in_zp = 6;
	v.p.out_zp = -5;
	return v;
}

static vcase eltadd(const char *name, uint32_t h, uint32_t w, uint32_t c, double sa, double sb, double so)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_ELTWISE, h, w, c);
	v.p.func = LOOM_ELT_ADD;
	v.p.in_zp = -4;
	v.p.in2_zp = 11;
	v.p.out_zp = -2;
	loom_quant_add(sa, sb, so, &v.p);
	return v;
}

static vcase eltmul(const char *name, uint32_t h, uint32_t w, uint32_t c, int bcast, double scale)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_ELTWISE, h, w, c);
	v.p.func = LOOM_ELT_MUL;
	v.p.bcast = bcast;
	v.p.in_zp = 9;
	v.p.in2_zp = bcast ? -128 : -3; /* SE: b is a sigmoid output, zero point -128 */
	v.p.out_zp = 1;
	loom_quant_mult(scale, &v.p.mult, &v.p.shift);
	return v;
}

static vcase lut(const char *name, uint32_t h, uint32_t w, uint32_t c, double in_scale)
{
	vcase v;
	vinit(&v, name, LOOM_VEC_LUT, h, w, c);
	v.p.in_zp = 3;
	v.lut_scale = in_scale;
	return v;
}

static loom_vec_hints vhint(uint32_t th, uint32_t tw, uint32_t kc, int nbuf, int inplace)
{
	loom_vec_hints h = {th, tw, kc, nbuf, inplace, 0};
	return h;
}

/* DWCONV per-channel parameters: typical ones (outputs spread over int8)
 * or, with edge, channel ch % 11 picks a requantization corner case. */
static void dw_params(rng *r, const vcase *vc, double accstd, uint32_t ch, int32_t *bias, int32_t *mult,
		      int32_t *shift)
{
	int sh = (int)lround(log2(0.75 * accstd / 40.0));
	if (sh < 0)
		sh = 0;
	*bias = rnd_range(r, -(int32_t)accstd, (int32_t)accstd);
	*mult = (int32_t)(0x40000000u + (rnd(r) & 0x3fffffffu));
	*shift = sh + (int32_t)(rnd(r) % 2);
	if (!vc->edge)
		return;
	switch (ch % 11) {
	case 0: *bias = INT32_MAX; break;                          /* acc + bias saturates high */
	case 1: *bias = INT32_MIN; break;                          /* ... and low */
	case 2: *bias = INT32_MIN; *mult = INT32_MIN; break;       /* srdhm(INT32_MIN, INT32_MIN) */
	case 3: *shift = 0; *mult = rnd_range(r, 1 << 18, 1 << 22); break;
	case 4: *shift = 31; *mult = INT32_MAX; *bias = (int32_t)rnd(r); break;
	case 5: *mult = -(int32_t)(0x40000000u + (rnd(r) & 0x3fffffffu)); break; /* negative multiplier */
	case 6: *mult = INT32_MIN; break;
	case 7: *bias = INT32_MAX - rnd_range(r, 0, 2 * (int32_t)accstd); break; /* saturates sometimes */
	case 8: *bias = INT32_MIN + rnd_range(r, 0, 2 * (int32_t)accstd); break;
	case 9: *shift = 31; *mult = INT32_MIN; *bias = (int32_t)rnd(r); break;
	default: *shift = 0; *mult = rnd_range(r, -(1 << 22), 1 << 22); *bias = rnd_range(r, -(1 << 20), 1 << 20); break;
	}
}

static int run_vcase(loom_hw *hw, const vcase *vc, uint64_t seed, int verbose, char *why, size_t wlen, char *info,
		     size_t ilen)
{
	loom_vec_params p = vc->p;
	if (vc->has_hints)
		p.hints = &vc->hints;
	char err[512];
	loom_vec_plan pl;
	if (loom_vec_plan_make(&hw->cfg, &p, &pl, err, sizeof err)) {
		snprintf(why, wlen, "plan: %s", err);
		return 1;
	}
	rng r = {seed * 0x9e3779b97f4a7c15ull + 3};
	uint32_t kk = p.kh * p.kw, c = p.c;
	size_t nin = (size_t)pl.in_bytes, nin2 = (size_t)pl.in2_bytes, nw = (size_t)kk * c;
	int8_t *in = malloc(nin), *in2 = malloc(nin2 + 1), *w = malloc(nw), table[256];
	int32_t *bias = malloc(c * 4), *mult = malloc(c * 4), *shift = malloc(c * 4);
	uint8_t *got = malloc(pl.out_bytes + GUARD), *want = malloc(pl.out_bytes + GUARD);
	int rc = 1;
	loom_prog prog;
	loom_prog_init(&prog);
	if (!in || !in2 || !w || !bias || !mult || !shift || !got || !want) {
		snprintf(why, wlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nin; i++)
		in[i] = vc->in_lo < vc->in_hi ? (int8_t)rnd_range(&r, vc->in_lo, vc->in_hi) : (int8_t)rnd(&r);
	for (size_t i = 0; i < nin2; i++)
		in2[i] = vc->in_lo < vc->in_hi ? (int8_t)rnd_range(&r, vc->in_lo, vc->in_hi) : (int8_t)rnd(&r);
	for (size_t i = 0; i < nw; i++)
		w[i] = vc->wrange ? (int8_t)rnd_range(&r, -vc->wrange, vc->wrange) : (int8_t)rnd(&r);
	double wstd = vc->wrange ? vc->wrange / sqrt(3.0) : 73.9;
	double accstd = sqrt((double)kk) * 73.9 * wstd;
	for (uint32_t i = 0; i < c; i++)
		dw_params(&r, vc, accstd, i, &bias[i], &mult[i], &shift[i]);
	for (int i = 0; i < 256; i++) {
		double x = (i - 128 - p.in_zp) * vc->lut_scale;
		long q = lround(256.0 / (1.0 + exp(-x))) - 128;
		table[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
	}
	loom_vec_layout lay;
	uint64_t prog_addr = 0;
	int src = loom_vec_stage(hw, &p, &pl, in, in2, w, bias, mult, shift, table, 0x2000 + (uint32_t)seed, GUARD,
				 &lay, &prog, &prog_addr, why, wlen);
	if (verbose && prog_addr)
		loom_prog_dump(&prog, prog_addr, stderr);
	if (src)
		goto out;
	uint64_t out_base = lay.out_addr - GUARD;
	memset(got, CANARY, pl.out_bytes + GUARD);
	if (loom_hw_dram_write(hw, out_base, got, GUARD) ||
	    loom_hw_dram_write(hw, lay.out_addr, got, pl.out_bytes + GUARD)) {
		snprintf(why, wlen, "dram write: %s", loom_hw_error(hw));
		goto out;
	}
	loom_hw_result res;
	int xr = loom_hw_exec(hw, prog_addr, 20 * pl.est_cycles + 2000000, &res);
	if (xr != LOOM_HW_IRQ || (res.status & LOOM_STATUS_ERROR) || !(res.status & LOOM_STATUS_DONE)) {
		snprintf(why, wlen, "run: %s status=%x cause=%s pc=%#x info=%s", xr == LOOM_HW_IRQ ? "irq" :
			 xr == LOOM_HW_TIMEOUT ? "timeout" : loom_hw_error(hw), res.status, loom_err_name(res.cause),
			 res.pc, loom_field_name(res.info));
		goto out;
	}
	memset(want, CANARY, pl.out_bytes + GUARD);
	switch (p.kind) {
	case LOOM_VEC_POOL: loom_golden_pool(&p, in, (int8_t *)want); break;
	case LOOM_VEC_DWCONV: loom_golden_dwconv(&p, in, w, bias, mult, shift, (int8_t *)want); break;
	case LOOM_VEC_ELTWISE: loom_golden_eltwise(&p, in, in2, (int8_t *)want); break;
	default: loom_golden_lut(&p, in, table, (int8_t *)want); break;
	}
	if (loom_hw_dram_read(hw, lay.out_addr, got, pl.out_bytes + GUARD)) {
		snprintf(why, wlen, "dram read: %s", loom_hw_error(hw));
		goto out;
	}
	size_t wr = (c + 3) / 4 * 4, bad = 0, first = 0;
	/* a flat plan's geometry is its flat view's: the layer's own is its input's */
	size_t oh = pl.flat ? p.h : pl.oh, ow = pl.flat ? p.w : pl.ow;
	size_t ost = pl.flat ? (p.out_stride ? p.out_stride : wr) : pl.out_stride;
	for (size_t px = 0; px < oh * ow; px++)
		for (size_t b = 0; b < ost; b++) {
			size_t o = px * ost + b;
			if (b >= c && b < wr)
				continue; /* written (lanes of the padding channels), value unspecified */
			if (got[o] != want[o] && !bad++)
				first = o;
		}
	for (size_t o = pl.out_bytes; o < pl.out_bytes + GUARD; o++)
		if (got[o] != CANARY && !bad++)
			first = o;
	uint8_t guard[GUARD];
	if (!loom_hw_dram_read(hw, out_base, guard, GUARD))
		for (size_t o = 0; o < GUARD; o++)
			if (guard[o] != CANARY && !bad++)
				first = pl.out_bytes + GUARD + o;
	if (bad) {
		size_t px = first / ost, b = first % ost;
		snprintf(why, wlen, "%zu bytes differ; first at pixel %zu (y %zu x %zu) channel %zu: got %d want %d",
			 bad, px, px / ow, px % ow, b, first < pl.out_bytes ? (int8_t)got[first] : 0,
			 first < pl.out_bytes ? (int8_t)want[first] : (int8_t)CANARY);
		goto out;
	}
	uint32_t rec[16];
	if (loom_hw_dram_read(hw, lay.mark_addr, rec, sizeof rec)) {
		snprintf(why, wlen, "dram read: %s", loom_hw_error(hw));
		goto out;
	}
	uint64_t macs = rec[1 + LOOM_CTR_MACS_LO] | (uint64_t)rec[1 + LOOM_CTR_MACS_HI] << 32;
	if (rec[0] != lay.mark_id || macs != 0 || rec[1 + LOOM_CTR_INSNS] != prog.n - 2) {
		snprintf(why, wlen, "MARK record: id %#x macs %llu (expected 0) insns %u (expected %zu)", rec[0],
			 (unsigned long long)macs, rec[1 + LOOM_CTR_INSNS], prog.n - 2);
		goto out;
	}
	/* how much the case exercises: distinct output values */
	int seen[256] = {0}, distinct = 0;
	for (size_t px = 0; px < (size_t)pl.oh * pl.ow; px++)
		for (size_t b = 0; b < c; b++)
			distinct += !seen[want[px * pl.out_stride + b]]++;
	snprintf(info, ilen, "%llu cycles (est %llu), %zu insns, tile %ux%u x%u, kc %u/%u, %s%s%s, banks %d, %d values",
		 (unsigned long long)res.cycles, (unsigned long long)pl.est_cycles, prog.n, pl.th, pl.tw, pl.ntiles,
		 pl.kc, pl.nk, pl.nbuf == 2 ? "double-buffered" : "single buffer", pl.inplace ? " in place" : "",
		 pl.flat ? " flat" : "", pl.banks, distinct);
	rc = 0;
out:
	loom_prog_free(&prog);
	free(in);
	free(in2);
	free(w);
	free(bias);
	free(mult);
	free(shift);
	free(got);
	free(want);
	return rc;
}

/* A random vector layer (every draw its own statement, as random_case). */
static vcase random_vcase(rng *r, int idx)
{
	vcase v;
	char nm[96];
	int kind = (int)(rnd(r) % 4);
	uint32_t h = 1 + rnd(r) % 16, w = 1 + rnd(r) % 16, c = 1 + rnd(r) % 70;
	vinit(&v, "", kind, h, w, c);
	if (kind == LOOM_VEC_POOL || kind == LOOM_VEC_DWCONV) {
		uint32_t kmax = kind == LOOM_VEC_POOL ? 7 : 5;
		v.p.kh = 1 + rnd(r) % kmax;
		v.p.kw = 1 + rnd(r) % kmax;
		v.p.sh = 1 + rnd(r) % 3;
		v.p.sw = 1 + rnd(r) % 3;
		v.p.dh = v.p.kh > 1 ? 1 + rnd(r) % 2 : 1;
		v.p.dw = v.p.kw > 1 ? 1 + rnd(r) % 2 : 1;
		uint32_t ekh = (v.p.kh - 1) * v.p.dh + 1, ekw = (v.p.kw - 1) * v.p.dw + 1;
		v.p.pad_top = rnd(r) % ekh;
		v.p.pad_bottom = rnd(r) % ekh;
		v.p.pad_left = rnd(r) % ekw;
		v.p.pad_right = rnd(r) % ekw;
		v.p.h += ekh;
		v.p.w += ekw;
	}
	v.p.in_zp = (int8_t)rnd(r);
	v.p.in2_zp = (int8_t)rnd(r);
	v.p.out_zp = (int8_t)rnd(r);
	if (rnd(r) % 3 == 0) {
		v.p.clip_lo = (int8_t)rnd_range(r, -128, 0);
		v.p.clip_hi = (int8_t)rnd_range(r, 0, 127);
	}
	v.p.in_stride = (c + 3) / 4 * 4 + 4 * (rnd(r) % 2);
	v.p.out_stride = (c + 3) / 4 * 4 + 4 * (rnd(r) % 2);
	v.p.func = (int)(rnd(r) % 2);
	v.p.mult = (int32_t)(0x40000000u + (rnd(r) & 0x3fffffffu));
	v.p.shift = (int32_t)(rnd(r) % 32);
	if (kind == LOOM_VEC_ELTWISE) {
		v.p.bcast = (int)(rnd(r) % 2);
		v.p.in2_stride = (c + 3) / 4 * 4 + 4 * (rnd(r) % 2);
		v.p.mult_a = rnd_range(r, -32768, 32767);
		v.p.mult_b = rnd_range(r, -32768, 32767);
		v.p.shift = v.p.func == LOOM_ELT_ADD ? 10 + (int32_t)(rnd(r) % 12) : (int32_t)(rnd(r) % 12);
	} else if (kind == LOOM_VEC_POOL && v.p.func == LOOM_POOL_AVG) {
		v.p.shift = (int32_t)(rnd(r) % 8);
	}
	v.edge = rnd(r) % 3 == 0;
	v.wrange = rnd(r) % 2 ? 0 : 1 + (int)(rnd(r) % 40);
	v.lut_scale = 0.01 + (rnd(r) % 100) / 1000.0;
	if (rnd(r) % 2) {
		uint32_t x[5];
		for (int i = 0; i < 5; i++)
			x[i] = rnd(r);
		v.has_hints = 1;
		/* in place only for ELTWISE and LUT, and only double-buffered */
		int ip = kind == LOOM_VEC_ELTWISE || kind == LOOM_VEC_LUT ? (int)(x[4] % 3) : 0;
		int nbuf = ip == 2 ? 2 * (int)(x[3] % 2) : (int)(x[3] % 3);
		v.hints = vhint(x[0] % 4, x[1] % 6, x[2] % 3, nbuf, ip);
	}
	v.p.flat = (kind == LOOM_VEC_ELTWISE || kind == LOOM_VEC_LUT) && rnd(r) % 2;
	snprintf(nm, sizeof nm, "random vec %d: %s %ux%ux%u k%ux%u s%ux%u d%ux%u p%u%u%u%u f%d%s%s", idx,
		 kind == LOOM_VEC_POOL ? "pool" : kind == LOOM_VEC_DWCONV ? "dwconv" : kind == LOOM_VEC_ELTWISE ? "eltwise" : "lut",
		 v.p.h, v.p.w, c, v.p.kh, v.p.kw, v.p.sh, v.p.sw, v.p.dh, v.p.dw, v.p.pad_top, v.p.pad_bottom,
		 v.p.pad_left, v.p.pad_right, v.p.func, kind == LOOM_VEC_ELTWISE && v.p.bcast ? " bcast" : "",
		 v.p.flat ? " flat" : "");
	snprintf(v.name, sizeof v.name, "%s", nm);
	return v;
}

/* The directed vector-unit layers; returns their number. */
static int vec_cases(vcase *v)
{
	int n = 0;
	/* pooling */
	v[n++] = maxpool("maxpool3x3 s2 p1 56x56x64 (resnet)", 56, 56, 64, 3, 2, 1);
	v[n] = maxpool("maxpool2x2 s2 15x9x5 clip", 15, 9, 5, 2, 2, 0);
	v[n].p.clip_lo = -100;
	v[n++].p.clip_hi = 90;
	v[n] = maxpool("maxpool3x2 d2 asym pad 11x13x20", 11, 13, 20, 3, 1, 0);
	vwin(&v[n], 3, 1, 2, 0);
	v[n].p.kw = 2;
	v[n].p.sw = 2;
	v[n].p.pad_top = 2;
	v[n].p.pad_left = 1;
	v[n++].p.pad_right = 2;
	v[n++] = maxpool("maxpool1x1 s2 subsample 9x9x24", 9, 9, 24, 1, 2, 0);
	v[n] = maxpool("maxpool3x3 s2 p1 negative inputs 9x10x20", 9, 10, 20, 3, 2, 1);
	v[n].in_lo = -128; /* the -128 padding must never win over a real input */
	v[n++].in_hi = -124;
	v[n++] = avgpool("avgpool global 7x7x100", 7, 7, 100, 7, 1, 0, 1.0);
	v[n++] = avgpool("avgpool3x3 s1 p1 incl-pad 13x11x20", 13, 11, 20, 3, 1, 1, 0.8 / 0.9);
	v[n] = avgpool("avgpool2x2 s2 9x7x17 clip", 9, 7, 17, 2, 2, 0, 1.7);
	v[n].p.clip_lo = -20;
	v[n++].p.clip_hi = 100;
	/* depthwise */
	v[n] = dwconv("dwconv3x3 s1 p1 relu6 28x28x48", 28, 28, 48, 3, 1, 1);
	v[n].p.out_zp = -128;
	v[n].p.clip_lo = -128; /* ReLU: clip_lo = zero point */
	v[n].p.clip_hi = -60;  /* 6.0 at a scale of 6/68 */
	v[n++].wrange = 30;
	v[n++] = dwconv("dwconv3x3 s2 p1 15x14x37", 15, 14, 37, 3, 2, 1);
	v[n] = dwconv("dwconv5x5 s2 p2 13x12x24", 13, 12, 24, 5, 2, 2);
	v[n++].wrange = 20;
	v[n] = dwconv("dwconv3x3 d2 p2 11x10x20", 11, 10, 20, 3, 1, 2);
	vwin(&v[n], 3, 1, 2, 2);
	v[n++].p.in_zp = -128;
	v[n] = dwconv("dwconv3x3 s1 p1 requant edges 9x8x44", 9, 8, 44, 3, 1, 1);
	v[n++].edge = 1;
	v[n] = dwconv("dwconv3x3 s1 p1 negative inputs edges 7x6x22", 7, 6, 22, 3, 1, 1);
	v[n].p.in_zp = -128;
	v[n].in_lo = -128;
	v[n].in_hi = -100;
	v[n++].edge = 1;
	v[n] = dwconv("dwconv3x3 s2 p1 requant edges 8x7x22", 8, 7, 22, 3, 2, 1);
	v[n].p.in_zp = 127;
	v[n++].edge = 1;
	/* elementwise */
	v[n++] = eltadd("add residual 14x14x40 sa>sb", 14, 14, 40, 0.05, 0.031, 0.07);
	v[n] = eltadd("add sb>sa strides 9x9x21", 9, 9, 21, 0.02, 0.09, 0.1);
	v[n].p.in_stride = 24;
	v[n].p.in2_stride = 28;
	v[n++].p.out_stride = 32;
	v[n] = eltadd("add shift0 negative mult_b 8x8x16", 8, 8, 16, 1, 1, 1);
	v[n].p.mult_a = 16384;
	v[n].p.mult_b = -16384; /* a - b */
	v[n].p.mult = 50000;
	v[n++].p.shift = 0;
	v[n] = eltadd("add int16 extreme mults shift0 8x8x16", 8, 8, 16, 1, 1, 1);
	v[n].p.mult_a = -32768;
	v[n].p.mult_b = 32767;
	v[n].p.mult = 20000;
	v[n++].p.shift = 0;
	v[n] = eltadd("add shift31 8x8x16", 8, 8, 16, 1, 1, 1);
	v[n].p.mult_a = -32768;
	v[n].p.mult_b = 32767;
	v[n].p.mult = INT32_MIN;
	v[n].p.out_zp = 17;
	v[n++].p.shift = 31;
	v[n++] = eltmul("mul 10x10x24", 10, 10, 24, LOOM_BCAST_NONE, 0.02 * 0.03 / 0.01);
	v[n] = eltmul("mul shift31 clip 6x5x9", 6, 5, 9, LOOM_BCAST_NONE, 0.5);
	v[n].p.shift = 31;
	v[n].p.mult = INT32_MAX;
	v[n].p.clip_lo = -3;
	v[n++].p.clip_hi = 3;
	v[n] = eltmul("mul shift0 6x5x9", 6, 5, 9, LOOM_BCAST_NONE, 0.5);
	v[n].p.shift = 0;
	v[n++].p.mult = 1 << 22;
	v[n++] = eltmul("mul SE broadcast 7x7x96", 7, 7, 96, LOOM_BCAST_CHANNEL, 0.05 / 256 / 0.04);
	v[n++] = eltmul("mul SE broadcast 6x5x12", 6, 5, 12, LOOM_BCAST_CHANNEL, 0.05 / 256 / 0.04);
	/* LUT */
	v[n++] = lut("lut sigmoid 20x20x33", 20, 20, 33, 0.06);
	v[n] = lut("lut sigmoid strides 7x9x6", 7, 9, 6, 0.03);
	v[n].p.in_stride = 12;
	v[n++].p.out_stride = 8;
	/* flat views (nothing between pixels): contiguous lines of R bytes */
	v[n] = eltadd("add flat 14x14x64", 14, 14, 64, 0.02, 0.03, 0.04);
	v[n++].p.flat = 1;
	v[n] = eltadd("add flat 8x7x6 (pad bytes)", 8, 7, 6, 0.02, 0.03, 0.04);
	v[n++].p.flat = 1;
	v[n] = eltmul("mul flat 10x10x24", 10, 10, 24, LOOM_BCAST_NONE, 0.02 * 0.03 / 0.01);
	v[n++].p.flat = 1;
	v[n] = lut("lut flat 20x20x32", 20, 20, 32, 0.06);
	v[n++].p.flat = 1;
	/* forced plans: one-pixel tiles, one buffer, in place, column tiles */
	v[n] = maxpool("maxpool3x3 s2 p1 forced 1x1 tiles kc1 13x12x40", 13, 12, 40, 3, 2, 1);
	v[n].hints = vhint(1, 1, 1, 0, 0);
	v[n++].has_hints = 1;
	v[n++] = dwconv("dwconv1x1 pad3 (padded copy) 13x11x3", 13, 11, 3, 1, 1, 3);
	v[n] = dwconv("dwconv1x1 pad t2 b5 l0 r4 forced 8x6 tiles 9x8x20", 9, 8, 20, 1, 1, 0);
	v[n].p.pad_top = 2, v[n].p.pad_bottom = 5, v[n].p.pad_right = 4;
	v[n].hints.th = 8, v[n].hints.tw = 6;
	v[n++].has_hints = 1;
	v[n] = dwconv("dwconv3x3 s1 p1 forced single buffer 12x11x40", 12, 11, 40, 3, 1, 1);
	v[n].hints = vhint(3, 5, 1, 1, 0);
	v[n++].has_hints = 1;
	v[n] = avgpool("avgpool3x3 s2 p1 forced column tiles 10x17x20", 10, 17, 20, 3, 2, 1, 1.0);
	v[n].hints = vhint(0, 2, 0, 0, 0);
	v[n++].has_hints = 1;
	v[n] = eltadd("add forced in place 9x10x40", 9, 10, 40, 0.05, 0.03, 0.06);
	v[n].hints = vhint(2, 0, 1, 0, 2);
	v[n++].has_hints = 1;
	v[n] = eltmul("mul SE forced in place kc1 8x7x40", 8, 7, 40, LOOM_BCAST_CHANNEL, 0.05 / 256 / 0.04);
	v[n].hints = vhint(3, 0, 1, 0, 2);
	v[n++].has_hints = 1;
	v[n] = lut("lut forced in place 2-row tiles 9x8x30", 9, 8, 30, 0.05);
	v[n].hints = vhint(2, 0, 0, 0, 2);
	v[n++].has_hints = 1;
	return n;
}

/* The directed conv / GEMM layers; returns their number. */
static int conv_cases(tcase *c)
{
	int n = 0;
	c[n++] = conv("conv1x1 3->5 9x7", 9, 7, 3, 5, 1, 1, 1, 0);
	c[n] = conv("conv3x3 s2 17->70 15x13 pad1", 15, 13, 17, 70, 3, 2, 1, 1);
	c[n++].wrange = 20;
	c[n++] = conv("conv3x3 d2 5->17 12x11 pad2", 12, 11, 5, 17, 3, 1, 2, 2);
	c[n] = conv("conv3x3 asym pad t0 b2 l1 r0 8->12", 10, 9, 8, 12, 3, 1, 1, 0);
	c[n].c.pad_bottom = 2;
	c[n].c.pad_left = 1;
	c[n++].c.in_zp = -7;
	c[n] = conv("conv3x3 relu6 16->16 8x8", 8, 8, 16, 16, 3, 1, 1, 1);
	c[n].c.out_zp = -128;
	c[n].c.clip_lo = -128; /* ReLU: clip_lo = zero point */
	c[n++].c.clip_hi = -60; /* 6.0 at a scale of 6/68 */
	c[n] = conv("conv5x5 s2x1 70->3 11x14 pad2", 11, 14, 70, 3, 5, 1, 1, 2);
	c[n].c.sh = 2;
	c[n++].wrange = 10;
	c[n++] = conv("conv1x1 s2 33->40 9x10", 9, 10, 33, 40, 1, 2, 1, 0);
	c[n] = conv("conv7x7 s2 pad3 3->24 20x20 stem", 20, 20, 3, 24, 7, 2, 1, 3);
	c[n++].c.pad_bottom = 2;
	/* packed kernel windows (xpack): R / in_stride pixels per SP line */
	c[n] = conv("xpack conv7x7 s2 3->24 26x26 stem, padded input", 26, 26, 3, 24, 7, 2, 1, 0);
	c[n++].c.xpack = 1;
	c[n] = conv("xpack conv7x7 s2 3->40 21x25 last lines past the row", 21, 25, 3, 40, 7, 2, 1, 0);
	c[n].c.in_zp = -20;
	c[n++].c.xpack = 1;
	c[n] = conv("xpack conv3x4 s1 5->12 in 8 vertical pad", 11, 9, 5, 12, 3, 1, 1, 0);
	c[n].c.pad_top = c[n].c.pad_bottom = 1;
	c[n].c.kw = 4; /* T = 2, G*T = kw: no line past the row */
	c[n++].c.xpack = 1;
	c[n] = conv("xpack conv5x5 s1 2->17 13x14 raw", 13, 14, 2, 17, 5, 1, 1, 0);
	c[n].c.raw = 1;
	c[n++].c.xpack = 1;
	c[n] = conv("xpack conv7x7 s2 3->24 30x29 forced tiles 3x5", 30, 29, 3, 24, 7, 2, 1, 0);
	c[n].c.xpack = 1;
	c[n].hints = hint(3, 5, 0, 0, 0, 0, 0);
	c[n++].has_hints = 1;
	c[n] = conv("xpack conv4x3 s4 3->8 17x22 one group per line", 17, 22, 3, 8, 3, 4, 1, 0);
	c[n].c.kw = 4;
	c[n].c.sh = 1;
	c[n++].c.xpack = 1;
	c[n] = conv("conv3x3 strides in 12 out 16, 5->6", 7, 6, 5, 6, 3, 1, 1, 1);
	c[n].c.in_stride = 12;
	c[n++].c.out_stride = 16;
	c[n++] = conv("conv3x3 32->32 28x28", 28, 28, 32, 32, 3, 1, 1, 1);
	c[n++] = gemm("gemm M=1 70x17", 1, 70, 17, 0);
	c[n++] = gemm("gemm raw int32 33x17x70", 33, 17, 70, 1);
	c[n++] = gemm("gemm 64x256x48", 64, 256, 48, 0);
	/* forced plans: passes chained, passes behind barriers, chunked input
	 * with streamed weights, column tiles, one-pixel tiles */
	c[n] = conv("conv3x3 forced passes chained 20->70", 9, 8, 20, 70, 3, 1, 1, 1);
	c[n].hints = hint(3, 0, 0, 1, 1, 0, 0);
	c[n++].has_hints = 1;
	c[n] = conv("conv3x3 forced passes barrier 20->70", 9, 8, 20, 70, 3, 1, 1, 1);
	c[n].hints = hint(4, 0, 0, 2, 1, 1, 0);
	c[n++].has_hints = 1;
	c[n] = conv("conv3x3 forced chunks+wstream 70->17 s2", 11, 9, 70, 17, 3, 2, 1, 1);
	c[n].hints = hint(2, 3, 1, 0, 2, 0, 0);
	c[n].wrange = 16;
	c[n++].has_hints = 1;
	c[n] = conv("conv3x3 forced column tiles d2 17->33", 9, 13, 17, 33, 3, 1, 2, 2);
	c[n].hints = hint(2, 5, 0, 0, 0, 0, 0);
	c[n++].has_hints = 1;
	c[n] = conv("conv3x3 forced 1x1 tiles 5->5", 5, 4, 5, 5, 3, 1, 1, 1);
	c[n].hints = hint(1, 1, 0, 0, 0, 0, 0);
	c[n++].has_hints = 1;
	c[n] = gemm("gemm raw forced chunks 17x70x20", 17, 70, 20, 1);
	c[n].hints = hint(0, 0, 1, 1, 2, 0, 0);
	c[n++].has_hints = 1;
	c[n] = conv("conv1x1 forced chunks resident wgt 40->24 s2", 7, 7, 40, 24, 1, 2, 1, 0);
	c[n].hints = hint(0, 2, 1, 0, 1, 0, 0);
	c[n++].has_hints = 1;

	c[n] = conv("conv5x5 forced kernel-row chunks wstream 9->20 d2", 13, 12, 9, 20, 5, 1, 2, 3);
	c[n].hints = hint(0, 0, 0, 0, 2, 0, 2);
	c[n++].has_hints = 1;
	c[n] = conv("conv3x3 forced kernel-row chunks resident 20->9 s2", 11, 10, 20, 9, 3, 2, 1, 1);
	c[n].hints = hint(3, 0, 1, 0, 1, 0, 1);
	c[n++].has_hints = 1;

	/* field limits: a row wider than N1 (4095), more than 255 channel
	 * blocks per MATMUL, more requantization params than the ACC holds */
	c[n++] = conv("conv1x1 wide 1x4500x8->8 (column tiles)", 1, 4500, 8, 8, 1, 1, 1, 0);
	c[n++] = gemm("gemm K=4200 (>255 blocks) 3x4200x20", 3, 4200, 20, 0);
	c[n++] = gemm("gemm N=2100 (params > ACC on small) 2x8x2100", 2, 8, 2100, 0);
	return n;
}

typedef struct opts {
	const char *backend, *hwspec, *only;
	uint64_t seed;
	int verbose, nrandom;
} opts;

/* 0, or 2 after the usage line */
static int parse_args(int argc, char **argv, opts *o)
{
	*o = (opts){"cmodel", "default", NULL, 1, 0, 0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			o->backend = argv[++i];
		else if (!strcmp(argv[i], "--hw") && i + 1 < argc)
			o->hwspec = argv[++i];
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			o->only = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			o->seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--random") && i + 1 < argc)
			o->nrandom = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-v"))
			o->verbose = 1;
		else {
			fprintf(stderr, "usage: test_directed [--backend cmodel|rtl] [--hw CFG] [--case SUBSTR] "
					"[--seed N] [--random N] [-v]\n");
			return 2;
		}
	}
	return 0;
}

/* One line per layer run: ok, FAIL, or skip when the plan forced by its
 * hints does not fit. */
static void report_case(const char *name, int has_hints, int f, const char *why, const char *info)
{
	if (f && has_hints && !strncmp(why, "plan:", 5))
		check_skip("%-45s %s", name, why);
	else
		CHECK(!f, "%-45s %s", name, f ? why : info);
	fflush(stdout);
}

/* the directed conv / GEMM layers, then o->nrandom random ones */
static void run_conv_cases(loom_hw *hw, const tcase *cases, int n, const opts *o)
{
	rng rr = {o->seed * 0x2545f4914f6cdd1dull + 11};
	for (int i = 0; i < n + o->nrandom; i++) {
		tcase rc;
		const tcase *tc = &cases[i < n ? i : 0];
		if (i >= n) {
			rc = random_case(&rr, i - n);
			tc = &rc;
		}
		if (o->only && !strstr(tc->name, o->only))
			continue;
		char why[1024] = "", info[512] = "";
		int f = run_case(hw, tc, o->seed + (uint64_t)i, o->verbose, why, sizeof why, info, sizeof info);
		report_case(tc->name, tc->has_hints, f, why, info);
	}
}

/* the directed vector-unit layers, then as many random ones */
static void run_vec_cases(loom_hw *hw, const vcase *vcases, int nv, const opts *o)
{
	rng rv = {o->seed * 0x2545f4914f6cdd1dull + 13};
	for (int i = 0; i < nv + o->nrandom; i++) {
		vcase rc;
		const vcase *vc = &vcases[i < nv ? i : 0];
		if (i >= nv) {
			rc = random_vcase(&rv, i - nv);
			vc = &rc;
		}
		if (o->only && !strstr(vc->name, o->only))
			continue;
		char why[1024] = "", info[512] = "";
		int f = run_vcase(hw, vc, o->seed + 1000 + (uint64_t)i, o->verbose, why, sizeof why, info, sizeof info);
		report_case(vc->name, vc->has_hints, f, why, info);
	}
}

int main(int argc, char **argv)
{
	opts o;
	if (parse_args(argc, argv, &o))
		return 2;
	char err[512];
	loom_hwcfg cfg;
	if (loom_hwcfg_load(&cfg, o.hwspec, loom_root_dir(), err, sizeof err)) {
		fprintf(stderr, "test_directed: %s\n", err);
		return 2;
	}
	loom_hw *hw = loom_hw_open(o.backend, &cfg, NULL, err, sizeof err);
	if (!hw) {
		fprintf(stderr, "test_directed: %s\n", err);
		return 2;
	}
	check_init(0);
	tcase cases[48];
	int n = conv_cases(cases);
	vcase vcases[48];
	int nv = vec_cases(vcases);
	run_conv_cases(hw, cases, n, &o);
	run_vec_cases(hw, vcases, nv, &o);
	loom_hw_close(hw);
	return check_report();
}
