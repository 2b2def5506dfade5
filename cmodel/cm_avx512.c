/* cm_avx512.c - the C model's AVX-512 kernels (cm_exec.c calls them when
 * the host's CPU has AVX-512 F, BW, VL and VNNI, cm_dp_pick): MATMUL on
 * vpdpbusd and STORE from the accumulator with requantization (and SOURCE
 * 3's residual add). Each gives the bytes of its
 * generic counterpart in cm_exec.c exactly; the functions carry
 * target("avx512...") so the rest of the build keeps its plain flags. The
 * other instructions run on the AVX2 kernels (every CPU with these has AVX2).
 *
 * MATMUL: out[c] += sum_r a[r] * w[r][c] per output position and fold.
 * vpdpbusd adds to each int32 lane the four products of unsigned bytes (one
 * operand) and signed bytes (the other), exactly, and the lane's sum wraps
 * as the accumulator does. The activations are made unsigned by + 128 (the
 * byte's top bit flipped), so a lane gets sum (a + 128) * w = sum a * w +
 * 128 * sum w: the sums start at -128 x the column's weights summed over all
 * the instruction's folds (cm_wconv.corr), and modulo 2^32 the result is the
 * generic one's, in any order. Weights are rearranged once per instruction
 * into rows of quads (w[4g..4g+3][c] per column c, 16 columns a vector: a
 * transpose of 32-bit words, gathered, or permuted for R = 16); activation lines are flipped once; a
 * quad of activations is broadcast and multiplied with a row of quads.
 * Up to 8 output positions x up to 64 columns keep their sums in registers
 * across all folds, and the accumulator is read and written once per
 * position (columns beyond C masked). Quads whose weights are zero in every
 * column (the padded channels of a first convolution) are skipped.
 *
 * Requantization follows loom_requant step by step on 16 lanes as the AVX2
 * kernel does on 8 (cm_rq_simd.h, the steps written once), a row's last
 * columns masked;
 * SOURCE 3's ADD (loom_eltadd) is exact in int32 (|x| < 2^25) and
 * requantized the same way. */
#include "cmodel/cmodel_internal.h"

#if CM_HAVE_AVX2
#include <immintrin.h>
#include <string.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define AVX512_INLINE static inline __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline))

/* ------------------------------------------------------------ MATMUL */

/* a fold's weights (C lines of R bytes at wl) into wq: G = R / 4 rows of Cp
 * words, word c of row g the bytes wl[c * R + 4g ..]; kl/nk: the rows with
 * a non-zero weight; ctx: 4 vectors, per column + the sum of its weights (a
 * cm_fold_fn) */
AVX512 static void fold_weights(const int8_t *wl, uint32_t R, uint32_t C, uint32_t Cp, uint32_t *wq, uint16_t *kl,
				uint32_t *nk, void *ctx)
{
	__m512i *sum = ctx;
	const uint32_t G = R / 4;
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i ones = _mm512_set1_epi8(1);
	uint32_t n = 0;
	if (G == 4 && C % 16 == 0) {
		/* R = 16: each block of 16 lines is 4 vectors of 4 lines' 4 words;
		 * two rounds of permutes transpose it (no gathers) */
		const __m512i lo2 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
		const __m512i hi2 = _mm512_add_epi32(lo2, _mm512_set1_epi32(2));
		__mmask16 nz = 0;
		for (uint32_t c0 = 0; c0 < C; c0 += 16) {
			const int8_t *l = wl + c0 * 16;
			const __m512i v0 = _mm512_loadu_si512(l), v1 = _mm512_loadu_si512(l + 64),
				      v2 = _mm512_loadu_si512(l + 128), v3 = _mm512_loadu_si512(l + 192);
			/* rows 0 and 1 (2 and 3) of lines 0-7, then of lines 8-15 */
			const __m512i a01 = _mm512_permutex2var_epi32(v0, lo2, v1), a23 = _mm512_permutex2var_epi32(v0, hi2, v1);
			const __m512i b01 = _mm512_permutex2var_epi32(v2, lo2, v3), b23 = _mm512_permutex2var_epi32(v2, hi2, v3);
			const __m512i r[4] = {_mm512_shuffle_i64x2(a01, b01, 0x44), _mm512_shuffle_i64x2(a01, b01, 0xEE),
					      _mm512_shuffle_i64x2(a23, b23, 0x44), _mm512_shuffle_i64x2(a23, b23, 0xEE)};
			for (uint32_t g = 0; g < 4; g++) {
				_mm512_store_si512(wq + g * Cp + c0, r[g]);
				nz |= (__mmask16)((_mm512_test_epi32_mask(r[g], r[g]) != 0) << g);
				sum[c0 / 16] = _mm512_dpbusd_epi32(sum[c0 / 16], ones, r[g]);
			}
		}
		for (uint32_t g = 0; g < 4; g++)
			if (nz >> g & 1)
				kl[n++] = (uint16_t)g;
		*nk = n;
		return;
	}
	for (uint32_t g = 0; g < G; g++) {
		int nz = 0;
		for (uint32_t c0 = 0; c0 < Cp; c0 += 16) {
			const __mmask16 m = C - c0 >= 16 ? 0xffff : (__mmask16)((1u << (C - c0)) - 1);
			/* word index of column c0 + i's quad g */
			const __m512i idx = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(
											  (int)c0)), _mm512_set1_epi32((int)G)),
							     _mm512_set1_epi32((int)g));
			const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, wl, 4);
			_mm512_store_si512(wq + g * Cp + c0, v);
			nz |= _mm512_test_epi32_mask(v, v) != 0;
			sum[c0 / 16] = _mm512_dpbusd_epi32(sum[c0 / 16], ones, v);
		}
		if (nz)
			kl[n++] = (uint16_t)g;
	}
	*nk = n;
}

/* the weights of x's nf folds converted (cm_wconv_get), their correction
 * with them; NULL when the scratch cannot grow */
AVX512 static struct cm_wconv *weights(cm_dp *d, const cm_mm *x, uint64_t nf)
{
	const uint32_t Cp = (d->C + 15) & ~15u;
	__m512i sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
			  _mm512_setzero_si512()};
	int fresh;
	struct cm_wconv *w = cm_wconv_get(d, x, nf, d->R / 4, Cp, fold_weights, sum, &fresh);
	if (w && fresh) /* -128 x the sums, modulo 2^32 */
		for (uint32_t j = 0; j < Cp / 16; j++)
			_mm512_storeu_si512(w->corr + 16 * j, _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum[j], 7)));
	return w;
}

/* activation bytes + 128 (as cm_act_lines converts) */
AVX512 static void flip(void *dst, const int8_t *src, size_t n)
{
	uint8_t *o = dst;
	const __m512i top = _mm512_set1_epi8((char)0x80);
	size_t i = 0;
	for (; i + 64 <= n; i += 64)
		_mm512_store_si512(o + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), top));
	for (; i < n; i++)
		o[i] = (uint8_t)src[i] ^ 0x80;
}

/* what the position kernels share */
typedef struct vmk {
	const uint32_t *wq;
	size_t fstride;          /* words per fold */
	uint32_t Cp, R, G;
	const uint64_t *foff;    /* per fold: its activations' offset */
	const uint16_t *kl;
	const uint32_t *nk;
	uint64_t nf;
	const uint8_t *a8;
	const int32_t *corr;
	__mmask16 last;          /* the columns of the last block */
	int accumulate;
} vmk;

AVX512_INLINE __m512i bcast(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return _mm512_set1_epi32(v);
}

/* the loops over positions and column blocks unrolled, so that the sums
 * stay in registers */
#define UNROLL _Pragma("GCC unroll 8")

/* NP positions (their first activation lines po, accumulator lines o) x NJ
 * blocks of 16 columns (all of them) */
AVX512_INLINE void kern(const vmk *k, const uint64_t *po, int32_t *const *o, const int NP, const int NJ)
{
	__m512i c[8][4];
	UNROLL
	for (int j = 0; j < NJ; j++) {
		const __m512i z = _mm512_loadu_si512(k->corr + 16 * j);
		UNROLL
		for (int i = 0; i < NP; i++)
			c[i][j] = z;
	}
	const uint32_t Cp = k->Cp, G = k->G;
	const uint32_t *w = k->wq;
	for (uint64_t f = 0; f < k->nf; f++, w += k->fstride) {
		const uint8_t *a[8];
		UNROLL
		for (int i = 0; i < NP; i++)
			a[i] = k->a8 + po[i] * k->R + k->foff[f];
		const uint32_t n = k->nk[f];
#define STEP(g)                                                                                  \
	do {                                                                                     \
		__m512i wv[4];                                                                   \
		UNROLL                                                                           \
		for (int j = 0; j < NJ; j++)                                                     \
			wv[j] = _mm512_load_si512(w + (g) * Cp + 16 * j);                        \
		UNROLL                                                                           \
		for (int i = 0; i < NP; i++) {                                                   \
			const __m512i b = bcast(a[i] + 4 * (g));                                 \
			UNROLL                                                                   \
			for (int j = 0; j < NJ; j++)                                             \
				c[i][j] = _mm512_dpbusd_epi32(c[i][j], b, wv[j]);                \
		}                                                                                \
	} while (0)
		if (n == G) {
			for (uint32_t g = 0; g < G; g++)
				STEP(g);
		} else {
			const uint16_t *ks = k->kl + f * G;
			for (uint32_t q = 0; q < n; q++)
				STEP(ks[q]);
		}
#undef STEP
	}
	UNROLL
	for (int i = 0; i < NP; i++)
		UNROLL
		for (int j = 0; j < NJ; j++) {
			const __mmask16 m = j == NJ - 1 ? k->last : 0xffff;
			__m512i v = c[i][j];
			if (k->accumulate)
				v = _mm512_add_epi32(v, _mm512_maskz_loadu_epi32(m, o[i] + 16 * j));
			_mm512_mask_storeu_epi32(o[i] + 16 * j, m, v);
		}
}

/* one kernel for each column block count: NP8 positions at a time, then one */
#define KERNS(NJ, NP8)                                                                                     \
	AVX512 static void kern_##NJ(const vmk *k, const uint64_t *po, int32_t *const *o) { kern(k, po, o, NP8, NJ); } \
	AVX512 static void kern1_##NJ(const vmk *k, const uint64_t *po, int32_t *const *o) { kern(k, po, o, 1, NJ); }
/* 16 columns: the positions left over from the 8s, 4 at a time */
AVX512 static void kern4_1(const vmk *k, const uint64_t *po, int32_t *const *o) { kern(k, po, o, 4, 1); }
KERNS(1, 8)
KERNS(2, 4)
KERNS(3, 2)
KERNS(4, 2)
#undef KERNS

/* lint: long function: the scratch, then the position loop */
AVX512 int cm_matmul_avx512(cm_dp *d, const cm_mm *x)
{
	const uint32_t R = d->R, C = d->C, G = R / 4, Cp = (C + 15) & ~15u, NJ = Cp / 16;
	uint64_t nf, nl;
	if (cm_mm_folds(d, x, &nf, &nl))
		return -1;
	struct cm_wconv *wc = weights(d, x, nf);
	if (!wc)
		return -1;
	/* the activation lines [act, act + nl) + 128 (kept too) */
	const uint8_t *a8 = cm_act_lines(d, x->act, nl, 1, flip);
	if (!a8)
		return -1;
	const vmk k = {wc->wq, (size_t)G * Cp, Cp, R, G, d->foff, wc->kl, wc->nk, nf, a8, wc->corr,
		       (__mmask16)(C % 16 ? (1u << (C % 16)) - 1 : 0xffff), x->accumulate};
	void (*const kn[4])(const vmk *, const uint64_t *, int32_t *const *) = {kern_1, kern_2, kern_3, kern_4};
	void (*const k1[4])(const vmk *, const uint64_t *, int32_t *const *) = {kern1_1, kern1_2, kern1_3, kern1_4};
	static const int nps[4] = {8, 4, 2, 2};
	const int NP = nps[NJ - 1];
	int32_t *const acc0 = d->acc + x->accp * C;
	cm_mm_pos it = {0, 0, 0};
	uint64_t po[8], pi[8];
	int32_t *o[8];
	int np;
	while ((np = cm_mm_next(x, &it, NP, po, pi))) {
		for (int i = 0; i < np; i++)
			o[i] = acc0 + pi[i] * C;
		int i = 0;
		if (np == NP) {
			kn[NJ - 1](&k, po, o);
			i = np;
		} else if (NJ == 1 && np >= 4) {
			kern4_1(&k, po, o);
			i = 4;
		}
		for (; i < np; i++)
			k1[NJ - 1](&k, po + i, o + i);
	}
	return 0;
}

/* ------------------------------------------------------------ requantization */

/* loom_requant's steps on 16 lanes (cm_rq_simd.h): rq_prep, rq_core, rq_out */
#define RQ_V __m512i
#define RQ_M __mmask16
#define RQ_INLINE AVX512_INLINE
#define V_SET1(x) _mm512_set1_epi32(x)
#define V_SET1_64(x) _mm512_set1_epi64(x)
#define V_ADD(a, b) _mm512_add_epi32(a, b)
#define V_SUB(a, b) _mm512_sub_epi32(a, b)
#define V_ADD64(a, b) _mm512_add_epi64(a, b)
#define V_AND(a, b) _mm512_and_si512(a, b)
#define V_XOR(a, b) _mm512_xor_si512(a, b)
#define V_MIN(a, b) _mm512_min_epi32(a, b)
#define V_MAX(a, b) _mm512_max_epi32(a, b)
#define V_MUL(a, b) _mm512_mul_epi32(a, b)
#define V_SRAI(a, n) _mm512_srai_epi32(a, n)
#define V_SRLI(a, n) _mm512_srli_epi32(a, n)
#define V_SRLI64(a, n) _mm512_srli_epi64(a, n)
#define V_SLLI64(a, n) _mm512_slli_epi64(a, n)
#define V_SRAV(a, n) _mm512_srav_epi32(a, n)
#define V_SLLV(a, n) _mm512_sllv_epi32(a, n)
#define V_CMPEQ(a, b) _mm512_cmpeq_epi32_mask(a, b)
#define V_CMPGT(a, b) _mm512_cmpgt_epi32_mask(a, b)
#define V_SIGN(a) _mm512_cmplt_epi32_mask(a, _mm512_setzero_si512())
#define V_SEL(m, a, b) _mm512_mask_mov_epi32(a, m, b)            /* m ? b : a */
#define V_ODD(a, b) _mm512_mask_mov_epi32(a, 0xAAAA, b)          /* b's odd lanes, a's even ones */
#define V_INC(a, m) _mm512_mask_add_epi32(a, m, a, _mm512_set1_epi32(1)) /* + 1 in the lanes m */
#define M_AND(a, b) ((a) & (b))
#include "cmodel/cm_rq_simd.h"

/* the lanes m of v (each in [-128, 127]) as bytes at o */
AVX512_INLINE void put16(int8_t *o, __m512i v, __mmask16 m)
{
	const __m128i b = _mm512_cvtepi32_epi8(v);
	if (m == 0xffff)
		_mm_storeu_si128((__m128i *)o, b);
	else
		_mm_mask_storeu_epi8(o, m, b);
}

/* SOURCE 3's constants: loom_eltadd's ADD of a requantized row (a) and a
 * residual row (b) */
typedef struct eltz {
	rqc k;
	__m512i zpa, zpb, ma, mb, zp, lo, hi;
} eltz;

AVX512_INLINE eltz elt_prep(const cm_elt *e)
{
	eltz z;
	z.k = rq_prep(_mm512_setzero_si512(), _mm512_set1_epi32(e->mult), _mm512_set1_epi32(e->shift));
	z.zpa = _mm512_set1_epi32(e->zpa), z.zpb = _mm512_set1_epi32(e->zpb);
	z.ma = _mm512_set1_epi32(e->ma), z.mb = _mm512_set1_epi32(e->mb);
	z.zp = _mm512_set1_epi32(e->zp), z.lo = _mm512_set1_epi32(e->lo), z.hi = _mm512_set1_epi32(e->hi);
	return z;
}

/* the lanes m of the requantized values r (int8, as they are) plus the
 * residual bytes at res: exact in int32, then requantized */
AVX512_INLINE __m512i resadd(__m512i r, const int8_t *res, __mmask16 m, const eltz *z)
{
	const __m512i da = _mm512_sub_epi32(r, z->zpa);
	const __m512i db = _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res)), z->zpb);
	const __m512i x = _mm512_add_epi32(_mm512_mullo_epi32(da, z->ma), _mm512_mullo_epi32(db, z->mb));
	return rq_out(x, &z->k, 1, z->zp, z->lo, z->hi);
}

/* the output's zero point and clamp */
typedef struct outz {
	__m512i zp, lo, hi;
} outz;

/* n1 rows of up to 16 values (lanes m; the default array's) from acc on
 * (a step of C) to dram + dst on (a step of s1), with the residual rows
 * at res on (a step of rstep) when z; called with constant minchk and z,
 * so that each variant keeps its constants in registers */
AVX512_INLINE void rows16(uint8_t *dram, const int32_t *acc, uint32_t C, uint64_t dst, uint64_t n1, uint64_t s1,
			  const rqc *k, __mmask16 m, const outz *oz, const int minchk, const int8_t *res, uint64_t rstep,
			  const eltz *z)
{
	const rqc k0 = *k;
	const outz o = *oz;
	eltz zl;
	if (z)
		zl = *z;
	for (uint64_t i1 = 0; i1 < n1; i1++, acc += C, dst += s1) {
		__m512i r = rq_out(_mm512_maskz_loadu_epi32(m, acc), &k0, minchk, o.zp, o.lo, o.hi);
		if (z) {
			r = resadd(r, res, m, &zl);
			res += rstep;
		}
		put16((int8_t *)dram + dst, r, m);
	}
}

/* lint: long function: the constants once, then the rows (16 columns at a time, the residual add) */
AVX512 void cm_store_rq_avx512(uint8_t *dram, const int32_t *acc, uint32_t C, const cm_rq *q, uint32_t n0,
			       uint64_t base, uint64_t n1, uint64_t n2, uint64_t n3, uint64_t s1, uint64_t s2,
			       uint64_t s3, const int8_t *res, uint64_t rstep, const cm_elt *e)
{
	const outz oz = {_mm512_set1_epi32(q->zp), _mm512_set1_epi32(q->lo), _mm512_set1_epi32(q->hi)};
	/* the vectors of a row (n0 <= 64 values) and the lanes of each */
	const uint32_t nv = (n0 + 15) / 16;
	rqc k[4];
	__mmask16 m[4];
	int minchk = 0; /* a lane's mult is INT32_MIN */
	for (uint32_t v = 0; v < nv; v++) {
		m[v] = n0 - 16 * v >= 16 ? 0xffff : (__mmask16)((1u << (n0 - 16 * v)) - 1);
		k[v] = rq_prep(_mm512_maskz_loadu_epi32(m[v], q->bias + 16 * v), _mm512_maskz_loadu_epi32(m[v], q->mult + 16 * v),
			       _mm512_maskz_loadu_epi32(m[v], q->shift + 16 * v));
		minchk |= k[v].mult_min != 0;
	}
	eltz ez;
	if (e)
		ez = elt_prep(e);
	for (uint64_t i3 = 0; i3 < n3; i3++)
		for (uint64_t i2 = 0; i2 < n2; i2++) {
			uint64_t dst = base + i3 * s3 + i2 * s2;
			if (nv == 1) {
				if (e)
					rows16(dram, acc, C, dst, n1, s1, &k[0], m[0], &oz, 1, res, rstep, &ez);
				else if (minchk)
					rows16(dram, acc, C, dst, n1, s1, &k[0], m[0], &oz, 1, NULL, 0, NULL);
				else
					rows16(dram, acc, C, dst, n1, s1, &k[0], m[0], &oz, 0, NULL, 0, NULL);
				acc += n1 * C;
				if (e)
					res += n1 * rstep;
				continue;
			}
			for (uint64_t i1 = 0; i1 < n1; i1++, acc += C, dst += s1) {
				int8_t *o = (int8_t *)dram + dst;
				for (uint32_t v = 0; v < nv; v++) {
					__m512i r = rq_out(_mm512_maskz_loadu_epi32(m[v], acc + 16 * v), &k[v], 1, oz.zp, oz.lo,
							   oz.hi);
					if (e)
						r = resadd(r, res + 16 * v, m[v], &ez);
					put16(o + 16 * v, r, m[v]);
				}
				if (e)
					res += rstep;
			}
		}
}
#else
typedef int cm_avx512_unused; /* ISO C: a translation unit is not empty */
#endif
