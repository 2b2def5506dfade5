/* cm_avx2.c - the C model's AVX2 kernels (cm_exec.c calls them when the
 * host's CPU has AVX2, cm_dp_pick): MATMUL, the requantization of a row
 * (STORE from the accumulator, DWCONV), ELTWISE and STORE SOURCE 3's
 * residual add of a row. Each gives the bytes
 * of its generic counterpart in cm_exec.c exactly; the functions carry
 * target("avx2") so the rest of the build keeps its plain flags.
 *
 * MATMUL: out[c] += sum_r a[r] * w[r][c] per output position and fold.
 * int8 x int8 products are exact in vpmaddwd (int16 pairs, int32 sums: a
 * pair sums to at most 2 * 128 * 128), and int32 addition wraps as the
 * accumulator does, so any order of the sums gives the same bits (vpmaddubsw
 * would saturate: not used). Weights are rearranged once per instruction
 * into rows of pairs (w[2k][c], w[2k+1][c]) as int16 (an 8 x 8 transpose of
 * 32-bit words); activation lines are sign-extended to int16 once; a pair of
 * activations (a[2k], a[2k+1]) is broadcast and multiplied with a row of
 * pairs, 8 columns at a time. Four output positions at a time keep their 16
 * columns' sums in registers across all folds, and the accumulator is read
 * and written once per position. Row pairs whose weights are zero in every
 * column (the padded channels of a first convolution) are skipped: their
 * products are zero.
 *
 * Requantization follows loom_requant step by step on 8 lanes
 * (cm_rq_simd.h). */
#include "cmodel/cmodel_internal.h"

#if CM_HAVE_AVX2
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))

/* ------------------------------------------------------------ MATMUL */

/* 8 lines of 8 words -> 8 rows of the 8 lines' word k */
AVX2_INLINE void transpose8(__m256i r[8])
{
	__m256i t[8], u[8];
	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
	}
	for (int i = 0; i < 2; i++) {
		u[4 * i + 0] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int i = 0; i < 4; i++) {
		r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
		r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
	}
}

static inline uint32_t pair(const int8_t *w)
{
	return (uint32_t)(uint16_t)(int16_t)w[0] | (uint32_t)(uint16_t)(int16_t)w[1] << 16;
}

/* a fold's weights (C lines of R bytes at wl) into wq rows of Cp pairs;
 * kl/nk: the row pairs with a non-zero weight (a cm_fold_fn) */
AVX2 static void fold_weights(const int8_t *wl, uint32_t R, uint32_t C, uint32_t Cp, uint32_t *wq, uint16_t *kl,
			      uint32_t *nk, void *ctx)
{
	(void)ctx;
	const uint32_t K = R / 2;
	uint8_t nz[32];
	memset(nz, 0, sizeof nz);
	for (uint32_t k0 = 0; k0 < K; k0 += 8) {
		for (uint32_t c0 = 0; c0 < Cp; c0 += 8) {
			if (k0 + 8 <= K && c0 + 8 <= C) {
				__m256i r[8];
				for (int i = 0; i < 8; i++)
					r[i] = _mm256_cvtepi8_epi16(
						_mm_loadu_si128((const __m128i *)(wl + (c0 + i) * R + 2 * k0)));
				transpose8(r);
				for (int i = 0; i < 8; i++) {
					_mm256_store_si256((__m256i *)(wq + (k0 + i) * Cp + c0), r[i]);
					nz[k0 + i] |= !_mm256_testz_si256(r[i], r[i]);
				}
				continue;
			}
			for (uint32_t k = k0; k < K && k < k0 + 8; k++)
				for (uint32_t c = c0; c < c0 + 8; c++) {
					uint32_t v = c < C ? pair(wl + c * R + 2 * k) : 0;
					wq[k * Cp + c] = v;
					nz[k] |= v != 0;
				}
		}
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < K; k++)
		if (nz[k])
			kl[n++] = (uint16_t)k;
	*nk = n;
}

AVX2_INLINE __m256i bcast(const int16_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return _mm256_set1_epi32(v);
}

AVX2_INLINE void put(int32_t *o, __m256i v, int accumulate)
{
	if (accumulate)
		v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)o));
	_mm256_storeu_si256((__m256i *)o, v);
}

AVX2_INLINE void put4(int32_t *o, __m256i v, int accumulate)
{
	__m128i x = _mm256_castsi256_si128(v);
	if (accumulate)
		x = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)o));
	_mm_storeu_si128((__m128i *)o, x);
}

/* what the position kernels share */
typedef struct mmk {
	const uint32_t *wq;      /* at the column block */
	size_t fstride;          /* uint32 per fold */
	uint32_t Cp, R;
	const uint64_t *foff;    /* per fold: its activations' offset in a16 */
	const uint16_t *kl;
	const uint32_t *nk;
	uint64_t nf;
	const int16_t *a16;
	int accumulate;
} mmk;

/* NP positions (their first activation lines po, accumulator lines o) x
 * NJ blocks of 8 columns (ncols of the last block are written: 8 or 4) */
AVX2_INLINE void kern(const mmk *k, const uint64_t *po, int32_t *const *o, int NP, int NJ, uint32_t ncols)
{
	__m256i c[4][2];
	for (int i = 0; i < NP; i++)
		for (int j = 0; j < NJ; j++)
			c[i][j] = _mm256_setzero_si256();
	const size_t K = k->R / 2;
	for (uint64_t f = 0; f < k->nf; f++) {
		const uint32_t *w = k->wq + f * k->fstride;
		const int16_t *a[4];
		for (int i = 0; i < NP; i++)
			a[i] = k->a16 + po[i] * k->R + k->foff[f];
		const uint16_t *ks = k->kl + f * K;
		const uint32_t n = k->nk[f];
		for (uint32_t q = 0; q < n; q++) {
			const uint32_t kk = ks[q];
			__m256i w0 = _mm256_load_si256((const __m256i *)(w + kk * k->Cp)), w1 = w0;
			if (NJ > 1)
				w1 = _mm256_load_si256((const __m256i *)(w + kk * k->Cp + 8));
			for (int i = 0; i < NP; i++) {
				__m256i b = bcast(a[i] + 2 * kk);
				c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(b, w0));
				if (NJ > 1)
					c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(b, w1));
			}
		}
	}
	for (int i = 0; i < NP; i++) {
		if (NJ > 1) {
			put(o[i], c[i][0], k->accumulate);
			put(o[i] + 8, c[i][1], k->accumulate);
		} else if (ncols == 8) {
			put(o[i], c[i][0], k->accumulate);
		} else {
			put4(o[i], c[i][0], k->accumulate);
		}
	}
}

/* the hot one, with its 8 sums in named registers (an array of them is
 * kept in memory by the compiler); R = 16 (8 row pairs) unrolled */
AVX2 static void kern4x16(const mmk *k, const uint64_t *po, int32_t *const *o)
{
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
		c31 = c00;
	const size_t K = k->R / 2, Cp = k->Cp;
	/* one pointer a moves per fold; the positions sit at fixed offsets from it */
	const int16_t *p0 = k->a16 + po[0] * k->R;
	const size_t d1 = (po[1] - po[0]) * k->R, d2 = (po[2] - po[0]) * k->R, d3 = (po[3] - po[0]) * k->R;
	const uint32_t *w = k->wq;
	for (uint64_t f = 0; f < k->nf; f++, w += k->fstride) {
		const int16_t *a0 = p0 + k->foff[f], *a1 = a0 + d1, *a2 = a0 + d2, *a3 = a0 + d3;
#define STEP(kk, CP)                                                                             \
	do {                                                                                     \
		const __m256i w0 = _mm256_load_si256((const __m256i *)(w + (kk) * (CP)));        \
		const __m256i w1 = _mm256_load_si256((const __m256i *)(w + (kk) * (CP) + 8));    \
		__m256i b = bcast(a0 + 2 * (kk));                                                \
		c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(b, w0));                           \
		c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(b, w1));                           \
		b = bcast(a1 + 2 * (kk));                                                        \
		c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(b, w0));                           \
		c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(b, w1));                           \
		b = bcast(a2 + 2 * (kk));                                                        \
		c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(b, w0));                           \
		c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(b, w1));                           \
		b = bcast(a3 + 2 * (kk));                                                        \
		c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(b, w0));                           \
		c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(b, w1));                           \
		/* keep the sums in their registers, one add after another (GCC would \
		 * otherwise reassociate the unrolled adds into trees and spill) */ \
		__asm__("" : "+x"(c00), "+x"(c01), "+x"(c10), "+x"(c11), "+x"(c20), "+x"(c21), \
			"+x"(c30), "+x"(c31));                                           \
	} while (0)
		const uint32_t n = k->nk[f];
		if (n == 8 && K == 8 && Cp == 16) {
			/* constant offsets */
			STEP(0, 16);
			STEP(1, 16);
			STEP(2, 16);
			STEP(3, 16);
			STEP(4, 16);
			STEP(5, 16);
			STEP(6, 16);
			STEP(7, 16);
		} else if (n == K) {
			for (size_t kk = 0; kk < K; kk++)
				STEP(kk, Cp);
		} else {
			const uint16_t *ks = k->kl + f * K;
			for (uint32_t q = 0; q < n; q++)
				STEP(ks[q], Cp);
		}
#undef STEP
	}
	put(o[0], c00, k->accumulate);
	put(o[0] + 8, c01, k->accumulate);
	put(o[1], c10, k->accumulate);
	put(o[1] + 8, c11, k->accumulate);
	put(o[2], c20, k->accumulate);
	put(o[2] + 8, c21, k->accumulate);
	put(o[3], c30, k->accumulate);
	put(o[3] + 8, c31, k->accumulate);
}

AVX2 static void kern1x16(const mmk *k, const uint64_t *po, int32_t *const *o) { kern(k, po, o, 1, 2, 8); }
AVX2 static void kern4x8(const mmk *k, const uint64_t *po, int32_t *const *o, uint32_t n) { kern(k, po, o, 4, 1, n); }
AVX2 static void kern1x8(const mmk *k, const uint64_t *po, int32_t *const *o, uint32_t n) { kern(k, po, o, 1, 1, n); }

/* activation lines [0, nl) from src, sign-extended */
AVX2 static void widen(int16_t *dst, const int8_t *src, size_t n)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		_mm256_store_si256((__m256i *)(dst + i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(src + i))));
	for (; i < n; i++)
		dst[i] = src[i];
}

/* widen as cm_act_lines converts */
AVX2 static void widen_act(void *dst, const int8_t *src, size_t n) { widen(dst, src, n); }

/* lint: long function: the scratch, then the position loop over column blocks */
AVX2 int cm_matmul_avx2(cm_dp *d, const cm_mm *x)
{
	const uint32_t R = d->R, C = d->C, K = R / 2, Cp = (C + 7) & ~7u;
	uint64_t nf, nl;
	if (cm_mm_folds(d, x, &nf, &nl))
		return -1;
	int fresh;
	struct cm_wconv *wc = cm_wconv_get(d, x, nf, K, Cp, fold_weights, NULL, &fresh);
	if (!wc)
		return -1;
	const size_t fstride = (size_t)K * Cp;
	/* the activation lines [act, act + nl), sign-extended (kept too) */
	const int16_t *a16 = cm_act_lines(d, x->act, nl, sizeof(int16_t), widen_act);
	if (!a16)
		return -1;

	mmk k = {wc->wq, fstride, Cp, R, d->foff, wc->kl, wc->nk, nf, a16, x->accumulate};
	int32_t *const acc0 = d->acc + x->accp * C;
	for (uint32_t j0 = 0; j0 < C; j0 += 16) {
		const uint32_t nc = C - j0 < 16 ? C - j0 : 16;
		k.wq = wc->wq + j0;
		cm_mm_pos it = {0, 0, 0};
		uint64_t po[4], pi[4];
		int32_t *o[4];
		int np;
		while ((np = cm_mm_next(x, &it, 4, po, pi))) {
			for (int i = 0; i < np; i++)
				o[i] = acc0 + pi[i] * C + j0;
			if (nc == 16) {
				if (np == 4)
					kern4x16(&k, po, o);
				else
					for (int i = 0; i < np; i++)
						kern1x16(&k, po + i, o + i);
			} else if (nc > 8) {
				/* 12 columns: 8, then 4 */
				for (int i = 0; i < np; i++)
					kern1x8(&k, po + i, o + i, 8);
				k.wq += 8;
				int32_t *o2[4];
				for (int i = 0; i < np; i++)
					o2[i] = o[i] + 8;
				for (int i = 0; i < np; i++)
					kern1x8(&k, po + i, o2 + i, nc - 8);
				k.wq -= 8;
			} else if (np == 4) {
				kern4x8(&k, po, o, nc);
			} else {
				for (int i = 0; i < np; i++)
					kern1x8(&k, po + i, o + i, nc);
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------ requantization */

/* loom_requant's steps on 8 lanes (cm_rq_simd.h): rq_prep, rq_core, rq_out */
#define RQ_V __m256i
#define RQ_M __m256i
#define RQ_INLINE AVX2_INLINE
#define V_SET1(x) _mm256_set1_epi32(x)
#define V_SET1_64(x) _mm256_set1_epi64x(x)
#define V_ADD(a, b) _mm256_add_epi32(a, b)
#define V_SUB(a, b) _mm256_sub_epi32(a, b)
#define V_ADD64(a, b) _mm256_add_epi64(a, b)
#define V_AND(a, b) _mm256_and_si256(a, b)
#define V_XOR(a, b) _mm256_xor_si256(a, b)
#define V_MIN(a, b) _mm256_min_epi32(a, b)
#define V_MAX(a, b) _mm256_max_epi32(a, b)
#define V_MUL(a, b) _mm256_mul_epi32(a, b)
#define V_SRAI(a, n) _mm256_srai_epi32(a, n)
#define V_SRLI(a, n) _mm256_srli_epi32(a, n)
#define V_SRLI64(a, n) _mm256_srli_epi64(a, n)
#define V_SLLI64(a, n) _mm256_slli_epi64(a, n)
#define V_SRAV(a, n) _mm256_srav_epi32(a, n)
#define V_SLLV(a, n) _mm256_sllv_epi32(a, n)
#define V_CMPEQ(a, b) _mm256_cmpeq_epi32(a, b)
#define V_CMPGT(a, b) _mm256_cmpgt_epi32(a, b)
#define V_SIGN(a) _mm256_srai_epi32(a, 31)
#define V_SEL(m, a, b) _mm256_blendv_epi8(a, b, m) /* m ? b : a */
#define V_ODD(a, b) _mm256_blend_epi32(a, b, 0xAA)  /* b's odd lanes, a's even ones */
#define V_INC(a, m) _mm256_sub_epi32(a, m)          /* + 1 in the lanes m */
#define M_AND(a, b) _mm256_and_si256(a, b)
#include "cmodel/cm_rq_simd.h"

AVX2_INLINE __m256i rq8(__m256i a, const rqc *c, __m256i zp, __m256i lo, __m256i hi)
{
	return rq_out(a, c, 1, zp, lo, hi);
}

/* 16 values with lo <= hi (STORE's decoder checks it): the int16 packing
 * saturates, + zp saturates, then the clamp; a saturated value lies beyond
 * [lo, hi] either way, so the bytes are rq8's */
AVX2_INLINE void rq16(int8_t *o, __m256i a0, __m256i a1, const rqc *c0, const rqc *c1, int minchk, __m256i zp16,
		      __m256i lo16, __m256i hi16)
{
	__m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(rq_core(a0, c0, minchk), rq_core(a1, c1, minchk)), 0xD8);
	w = _mm256_min_epi16(_mm256_max_epi16(_mm256_adds_epi16(w, zp16), lo16), hi16);
	__m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi16(w, w), 0x08);
	_mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(p));
}

/* 8 int32 in [-128, 127] -> 8 bytes at o */
AVX2_INLINE void put8(int8_t *o, __m256i v)
{
	__m256i w = _mm256_packs_epi32(v, v), p = _mm256_packs_epi16(w, w);
	uint32_t lo = (uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(p));
	uint32_t hi = (uint32_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(p, 1));
	memcpy(o, &lo, 4);
	memcpy(o + 4, &hi, 4);
}

/* 2 x 8 int32 in [-128, 127] -> 16 bytes at o */
AVX2_INLINE void put16(int8_t *o, __m256i v0, __m256i v1)
{
	__m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
	__m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi16(w, w), 0x08);
	_mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(p));
}

/* the constants of an ELTWISE line (elt_prep) and one line of n bytes
 * (elt_row): o = requant(a, b) with n a multiple of 8 handled 8 at a time */
typedef struct eltk {
	__m256i zpa, zpb, zab, mab, zp, lo, hi;
	rqc k;
} eltk;

AVX2_INLINE eltk elt_prep(const cm_elt *e)
{
	eltk c;
	c.zpa = _mm256_set1_epi32(e->zpa);
	c.zpb = _mm256_set1_epi32(e->zpb);
	/* ADD: (a - zpa, b - zpb) as int16 pairs (each within +-255) times
	 * (MULT_A, MULT_B) in one vpmaddwd, exact in int32 */
	c.zab = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)e->zpa | (uint32_t)(uint16_t)e->zpb << 16));
	c.mab = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)e->ma | (uint32_t)(uint16_t)e->mb << 16));
	c.k = rq_prep(_mm256_setzero_si256(), _mm256_set1_epi32(e->mult), _mm256_set1_epi32(e->shift));
	c.zp = _mm256_set1_epi32(e->zp);
	c.lo = _mm256_set1_epi32(e->lo);
	c.hi = _mm256_set1_epi32(e->hi);
	return c;
}

/* po may be pa or pb: each 8 bytes are read before they are written */
AVX2_INLINE void elt_row(int8_t *po, const int8_t *pa, const int8_t *pb, uint32_t n, const cm_elt *e, const eltk *c)
{
	uint32_t r = 0;
	for (; r + 8 <= n; r += 8) {
		const __m128i va = _mm_loadl_epi64((const __m128i *)(pa + r));
		const __m128i vb = _mm_loadl_epi64((const __m128i *)(pb + r));
		__m256i x;
		if (e->mul) {
			__m256i da = _mm256_sub_epi32(_mm256_cvtepi8_epi32(va), c->zpa);
			__m256i db = _mm256_sub_epi32(_mm256_cvtepi8_epi32(vb), c->zpb);
			x = _mm256_mullo_epi32(da, db);
		} else {
			__m256i ab = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(va, vb)), c->zab);
			x = _mm256_madd_epi16(ab, c->mab);
		}
		put8(po + r, rq8(x, &c->k, c->zp, c->lo, c->hi));
	}
	for (; r < n; r++) {
		int32_t da = pa[r] - e->zpa, db = pb[r] - e->zpb;
		int32_t x = e->mul ? da * db : e->ma * da + e->mb * db;
		po[r] = loom_requant(x, 0, e->mult, e->shift, e->zp, e->lo, e->hi);
	}
}

AVX2 void cm_requant_avx2(int8_t *out, const int32_t *a, const cm_rq *q, uint32_t n)
{
	const __m256i zp = _mm256_set1_epi32(q->zp), lo = _mm256_set1_epi32(q->lo), hi = _mm256_set1_epi32(q->hi);
	uint32_t c = 0;
	for (; c + 8 <= n; c += 8) {
		rqc k = rq_prep(_mm256_loadu_si256((const __m256i *)(q->bias + c)),
				_mm256_loadu_si256((const __m256i *)(q->mult + c)),
				_mm256_loadu_si256((const __m256i *)(q->shift + c)));
		put8(out + c, rq8(_mm256_loadu_si256((const __m256i *)(a + c)), &k, zp, lo, hi));
	}
	for (; c < n; c++)
		out[c] = loom_requant(a[c], q->bias[c], q->mult[c], q->shift[c], q->zp, q->lo, q->hi);
}

/* lint: long function: the constants once, then the rows (16 columns, 8 at a time, the rest, the residual add) */
AVX2 void cm_store_rq_avx2(uint8_t *dram, const int32_t *acc, uint32_t C, const cm_rq *q, uint32_t n0,
			   uint64_t base, uint64_t n1, uint64_t n2, uint64_t n3, uint64_t s1, uint64_t s2,
			   uint64_t s3, const int8_t *res, uint64_t rstep, const cm_elt *e)
{
	const __m256i zp = _mm256_set1_epi32(q->zp), lo = _mm256_set1_epi32(q->lo), hi = _mm256_set1_epi32(q->hi);
	rqc k[8];
	const uint32_t nv = n0 / 8;
	int minchk = 0;
	for (uint32_t v = 0; v < nv; v++) {
		k[v] = rq_prep(_mm256_loadu_si256((const __m256i *)(q->bias + 8 * v)),
			       _mm256_loadu_si256((const __m256i *)(q->mult + 8 * v)),
			       _mm256_loadu_si256((const __m256i *)(q->shift + 8 * v)));
		minchk |= !_mm256_testz_si256(k[v].mult_min, k[v].mult_min);
	}
	const int fast = q->lo <= q->hi;
	const __m256i zp16 = _mm256_set1_epi16(q->zp), lo16 = _mm256_set1_epi16(q->lo), hi16 = _mm256_set1_epi16(q->hi);
	eltk ek;
	if (e)
		ek = elt_prep(e);
	int8_t row[64];
	for (uint64_t i3 = 0; i3 < n3; i3++)
		for (uint64_t i2 = 0; i2 < n2; i2++) {
			uint64_t dst = base + i3 * s3 + i2 * s2;
			for (uint64_t i1 = 0; i1 < n1; i1++, acc += C, dst += s1) {
				/* with a residual add the requantized row first, then the add into DRAM */
				int8_t *o = e ? row : (int8_t *)dram + dst;
				uint32_t v = 0;
				if (fast)
					for (; v + 2 <= nv; v += 2)
						rq16(o + 8 * v, _mm256_loadu_si256((const __m256i *)(acc + 8 * v)),
						     _mm256_loadu_si256((const __m256i *)(acc + 8 * v + 8)), &k[v], &k[v + 1],
						     minchk, zp16, lo16, hi16);
				for (; v + 2 <= nv; v += 2)
					put16(o + 8 * v, rq8(_mm256_loadu_si256((const __m256i *)(acc + 8 * v)), &k[v], zp, lo, hi),
					      rq8(_mm256_loadu_si256((const __m256i *)(acc + 8 * v + 8)), &k[v + 1], zp, lo,
						  hi));
				if (v < nv)
					put8(o + 8 * v, rq8(_mm256_loadu_si256((const __m256i *)(acc + 8 * v)), &k[v], zp, lo, hi));
				for (uint32_t c = 8 * nv; c < n0; c++)
					o[c] = loom_requant(acc[c], q->bias[c], q->mult[c], q->shift[c], q->zp, q->lo, q->hi);
				if (e) {
					elt_row((int8_t *)dram + dst, row, res, n0, e, &ek);
					res += rstep;
				}
			}
		}
}

/* ------------------------------------------------------------ ELTWISE */

AVX2 void cm_eltwise_avx2(int8_t *sp, uint32_t R, uint64_t a0, uint64_t b0, uint64_t bstep, uint64_t o0, uint64_t nl,
			  const cm_elt *e)
{
	const eltk c = elt_prep(e);
	for (uint64_t i = 0; i < nl; i++)
		elt_row(sp + (o0 + i) * R, sp + (a0 + i) * R, sp + (b0 + i * bstep) * R, R, e, &c);
}

/* ------------------------------------------------------------ POOL */

/* lint: long function: max and average side by side, 16 lanes at a time */
AVX2 void cm_pool_avx2(int8_t *sp, uint32_t R, const cm_pool *p)
{
	const rqc k = rq_prep(_mm256_setzero_si256(), _mm256_set1_epi32(p->mult), _mm256_set1_epi32(p->shift));
	const __m256i zp = _mm256_set1_epi32(p->zp), lo = _mm256_set1_epi32(p->lo), hi = _mm256_set1_epi32(p->hi);
	const __m256i zpi = _mm256_set1_epi32(p->zpi);
	const __m128i lo8 = _mm_set1_epi8(p->lo), hi8 = _mm_set1_epi8(p->hi), min8 = _mm_set1_epi8(INT8_MIN);
	for (uint64_t cb = 0; cb < p->ncb; cb++) {
		const int8_t *plane = sp + (p->src + cb * p->inh * p->inw) * R;
		int8_t *out = sp + (p->dst + cb * p->oh * p->ow) * R;
		for (uint64_t oy = 0; oy < p->oh; oy++) {
			for (uint64_t ox = 0; ox < p->ow; ox++, out += R) {
				const int8_t *l0 = plane + (oy * p->sh * p->inw + ox * p->sw) * R;
				/* 16 lanes at a time; every tap of a lane is read before the lane is written */
				for (uint32_t r = 0; r < R; r += 16) {
					if (!p->avg) {
						__m128i m = min8;
						for (uint64_t ky = 0; ky < p->kh; ky++)
							for (uint64_t kx = 0; kx < p->kw; kx++)
								m = _mm_max_epi8(m, _mm_loadu_si128((const __m128i *)(
										     l0 + (ky * p->dh * p->inw + kx * p->dw) * R + r)));
						m = _mm_blendv_epi8(_mm_min_epi8(m, hi8), lo8, _mm_cmpgt_epi8(lo8, m));
						_mm_storeu_si128((__m128i *)(out + r), m);
						continue;
					}
					__m256i s0 = _mm256_setzero_si256(), s1 = s0;
					for (uint64_t ky = 0; ky < p->kh; ky++)
						for (uint64_t kx = 0; kx < p->kw; kx++) {
							const int8_t *l = l0 + (ky * p->dh * p->inw + kx * p->dw) * R + r;
							s0 = _mm256_add_epi32(s0, _mm256_sub_epi32(_mm256_cvtepi8_epi32(
											   _mm_loadl_epi64((const __m128i *)l)), zpi));
							s1 = _mm256_add_epi32(s1, _mm256_sub_epi32(_mm256_cvtepi8_epi32(
											   _mm_loadl_epi64((const __m128i *)(l + 8))), zpi));
						}
					put8(out + r, rq8(s0, &k, zp, lo, hi));
					put8(out + r + 8, rq8(s1, &k, zp, lo, hi));
				}
			}
		}
	}
}
#else
typedef int cm_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
