/* cm_rq_simd.h - loom_requant's steps on a vector of int32 lanes, written
 * once for the C model's SIMD kernels: cm_avx2.c (8 lanes) and cm_avx512.c
 * (16 lanes) each include it once, after defining the vector type RQ_V, the
 * lane mask type RQ_M (a vector of all-ones lanes on AVX2, a bit mask on
 * AVX-512), RQ_INLINE and the operations V_* / M_AND used below; not a header
 * for other files.
 *
 * The steps, lane by lane, as loom_requant (common/isa.c) takes them:
 *   s = acc + bias saturated to int32;
 *   srdhm: floor((s * mult + 2^30) / 2^31) (the same as C's truncation of
 *     (p + nudge) / 2^31: for p < 0 the nudge 1 - 2^30 plus the 2^31 - 1 that
 *     turns truncation into floor is 2^30), MAX for MIN * MIN;
 *   rounding divide by 2^(shift & 31) with the same mask and threshold;
 *   + zp, clamped to [lo, hi] (the sum taken after a clamp to [-512, 511],
 *   which changes no clamped result and keeps int32 from overflowing). */
#ifndef LOOM_CM_RQ_SIMD_H
#define LOOM_CM_RQ_SIMD_H

/* the per-column constants of requantization */
typedef struct rqc {
	RQ_V bias, mult, mult_hi, e, mask, thr;
	RQ_M mult_min; /* the lanes whose mult is INT32_MIN */
} rqc;

RQ_INLINE rqc rq_prep(RQ_V bias, RQ_V mult, RQ_V shift)
{
	const RQ_V one = V_SET1(1);
	rqc c;
	c.bias = bias;
	c.mult = mult;
	c.mult_hi = V_SRLI64(mult, 32);
	c.mult_min = V_CMPEQ(mult, V_SET1(INT32_MIN));
	c.e = V_AND(shift, V_SET1(31));
	c.mask = V_SUB(V_SLLV(one, c.e), one);
	c.thr = V_SRLI(c.mask, 1);
	return c;
}

/* the rounding-divided value before + zp and the clamp; minchk: a lane's
 * mult may be INT32_MIN (else its case needs no look) */
RQ_INLINE RQ_V rq_core(RQ_V a, const rqc *c, int minchk)
{
	const RQ_V MAX = V_SET1(INT32_MAX), MIN = V_SET1(INT32_MIN);
	/* s = a + bias, saturated: an overflow gives s the sign neither a nor bias has */
	const RQ_V s = V_ADD(a, c->bias);
	const RQ_M ovf = V_SIGN(V_AND(V_XOR(a, s), V_XOR(c->bias, s)));
	const RQ_V x = V_SEL(ovf, s, V_XOR(V_SRAI(a, 31), MAX));
	/* y = srdhm(x, mult): even lanes from the even products, odd ones from the odd */
	const RQ_V nudge = V_SET1_64(1ll << 30);
	const RQ_V pe = V_ADD64(V_MUL(x, c->mult), nudge);
	const RQ_V po = V_ADD64(V_MUL(V_SRLI64(x, 32), c->mult_hi), nudge);
	RQ_V y = V_ODD(V_SRLI64(pe, 31), V_SLLI64(po, 1));
	if (minchk)
		y = V_SEL(M_AND(V_CMPEQ(x, MIN), c->mult_min), y, MAX);
	/* r = rdivpot(y, shift & 31): + 1 where the remainder passes the threshold */
	const RQ_V rem = V_AND(y, c->mask);
	const RQ_V thr = V_SUB(c->thr, V_SRAI(y, 31));
	return V_INC(V_SRAV(y, c->e), V_CMPGT(rem, thr));
}

/* loom_requant of every lane: + zp, clamped to [lo, hi] */
RQ_INLINE RQ_V rq_out(RQ_V a, const rqc *c, int minchk, RQ_V zp, RQ_V lo, RQ_V hi)
{
	RQ_V r = rq_core(a, c, minchk);
	r = V_MIN(V_MAX(r, V_SET1(-512)), V_SET1(511));
	const RQ_V z = V_ADD(r, zp);
	return V_SEL(V_CMPGT(lo, z), V_MIN(z, hi), lo);
}

#endif
