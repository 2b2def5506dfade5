/* gemm.c - the float32 GEMM of Loom's reference executor:
 * C[M x N] += op(A)[M x K] op(B)[K x N], row-major with leading dimensions,
 * op() an optional transpose (loom_cpu_gemm_f, declared in
 * runtime/cpu_internal.h; Conv, ConvTranspose, Gemm and MatMul of
 * runtime/ops_conv.c run on it).
 *
 * Design (Goto / BLIS): K is cut into blocks of GEMM_KC, N into blocks of
 * GEMM_NC and M into blocks of GEMM_MC. For each (N, K) block, op(B) is
 * packed into micro-panels of GEMM_NR columns (k-major, zero padded); for
 * each M block within it, op(A) is packed into micro-panels of GEMM_MR rows.
 * A micro-kernel multiplies one A micro-panel by one B micro-panel into
 * GEMM_MR x GEMM_NR register accumulators, then adds them to C. The
 * transposes only change the packing. Three micro-kernels: a portable one
 * (GCC vector extensions, 128-bit vectors: SSE2 on x86-64, mul then add)
 * and, on x86 CPUs that have them (checked on each call), AVX2 with FMA
 * (6 x 16) and AVX-512 (6 x 32: two B micro-panels at once, the last
 * columns masked). The AVX2 and AVX-512 kernels give the same bits (the
 * same FMAs per element in the same order), so a .loom calibrated on
 * either is the same.
 *
 * Determinism: every element of C is C + (sum over k of one K block,
 * accumulated in k order from zero), K block after K block, whatever the
 * tile it falls in. Large problems are split over up to GEMM_MAXTHR
 * threads (the online CPUs, at most the caller's max_threads: the graph's
 * threads, set by a caller that runs graphs on several threads itself) by
 * ranges of rows (or columns) of C; each element is computed by
 * one thread in that same order, so the result does not depend on the
 * number of threads or on scheduling (it does depend on FMA: a CPU with
 * AVX2+FMA rounds differently from one without).
 *
 * If the pack buffers cannot be allocated, a plain triple loop does the
 * work. No global state. */
#include "cpu_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GEMM_X86 1
#endif

enum {
	GEMM_MR = 6,	 /* rows of a micro-tile */
	GEMM_NR = 16,	 /* columns of a micro-tile */
	GEMM_KC = 256,	 /* K block: a B micro-panel (16 KiB) stays in L1 */
	GEMM_MC = 120,	 /* M block: the packed A block (120 KiB) stays in L2 */
	GEMM_NC = 2048,	 /* N block: the packed B block (2 MiB) */
	GEMM_MAXTHR = 4, /* threads at most */
};

/* multiply-adds below which one thread does the whole product */
#define GEMM_PAR_MIN ((int64_t)1 << 21)

struct gemm_job {
	int ta, tb, path;
	int64_t M, N, K, lda, ldb, ldc;
	const float *A, *B;
	float *C;
};

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

/* ------------------------------------------------------------------ packing */

/* rows [i0, i0+mc) and k in [k0, k0+kc) of op(A) into micro-panels of
 * GEMM_MR rows: ap[r*kc*MR + p*MR + i] = op(A)[i0 + r*MR + i][k0 + p],
 * rows past M zero. */
static void pack_a(const struct gemm_job *j, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
		   float *restrict ap)
{
	for (int64_t r = 0; r < mc; r += GEMM_MR, ap += kc * GEMM_MR) {
		int64_t mr = min64(GEMM_MR, mc - r);
		if (!j->ta && mr == GEMM_MR) {
			/* six row streams in, one sequential stream out */
			const float *a0 = j->A + (i0 + r) * j->lda + k0, *a1 = a0 + j->lda;
			const float *a2 = a1 + j->lda, *a3 = a2 + j->lda, *a4 = a3 + j->lda;
			const float *a5 = a4 + j->lda;
			for (int64_t p = 0; p < kc; p++) {
				float *d = ap + p * GEMM_MR;
				d[0] = a0[p];
				d[1] = a1[p];
				d[2] = a2[p];
				d[3] = a3[p];
				d[4] = a4[p];
				d[5] = a5[p];
			}
			continue;
		}
		if (!j->ta) {
			for (int64_t i = 0; i < mr; i++) {
				const float *a = j->A + (i0 + r + i) * j->lda + k0;
				for (int64_t p = 0; p < kc; p++)
					ap[p * GEMM_MR + i] = a[p];
			}
		} else {
			for (int64_t p = 0; p < kc; p++) {
				const float *a = j->A + (k0 + p) * j->lda + i0 + r;
				for (int64_t i = 0; i < mr; i++)
					ap[p * GEMM_MR + i] = a[i];
			}
		}
		for (int64_t i = mr; i < GEMM_MR; i++)
			for (int64_t p = 0; p < kc; p++)
				ap[p * GEMM_MR + i] = 0.0f;
	}
}

/* k in [k0, k0+kc) and columns [j0, j0+nc) of op(B) into micro-panels of
 * GEMM_NR columns: bp[c*kc*NR + p*NR + jj] = op(B)[k0 + p][j0 + c*NR + jj],
 * columns past N zero. Untransposed, a few rows of B at a time go into
 * every panel (B's rows read in order, not one page per row and panel). */
static void pack_b(const struct gemm_job *j, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
		   float *restrict bp)
{
	enum { ROWS = 8 };
	if (!j->tb) {
		for (int64_t p0 = 0; p0 < kc; p0 += ROWS) {
			int64_t pe = min64(p0 + ROWS, kc);
			float *panel = bp;
			for (int64_t c = 0; c < nc; c += GEMM_NR, panel += kc * GEMM_NR) {
				int64_t nr = min64(GEMM_NR, nc - c);
				for (int64_t p = p0; p < pe; p++) {
					const float *b = j->B + (k0 + p) * j->ldb + j0 + c;
					float *d = panel + p * GEMM_NR;
					if (nr == GEMM_NR) {
						memcpy(d, b, GEMM_NR * sizeof *d);
					} else {
						for (int64_t jj = 0; jj < nr; jj++)
							d[jj] = b[jj];
						for (int64_t jj = nr; jj < GEMM_NR; jj++)
							d[jj] = 0.0f;
					}
				}
			}
		}
		return;
	}
	for (int64_t c = 0; c < nc; c += GEMM_NR, bp += kc * GEMM_NR) {
		int64_t nr = min64(GEMM_NR, nc - c);
		for (int64_t jj = 0; jj < nr; jj++) {
			const float *b = j->B + (j0 + c + jj) * j->ldb + k0;
			for (int64_t p = 0; p < kc; p++)
				bp[p * GEMM_NR + jj] = b[p];
		}
		for (int64_t jj = nr; jj < GEMM_NR; jj++)
			for (int64_t p = 0; p < kc; p++)
				bp[p * GEMM_NR + jj] = 0.0f;
	}
}

/* ------------------------------------------------------------------ micro-kernels */

/* C[mr x nr] (row stride ldc) += the MR x NR tile t (row stride NR) */
static void tile_add(float *restrict c, int64_t ldc, const float *restrict t, int mr, int nr)
{
	for (int i = 0; i < mr; i++)
		for (int jj = 0; jj < nr; jj++)
			c[i * ldc + jj] += t[i * GEMM_NR + jj];
}

typedef float gemm_v4 __attribute__((vector_size(16)));

static inline gemm_v4 v4_load(const float *p)
{
	gemm_v4 v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline void v4_store(float *p, gemm_v4 v)
{
	memcpy(p, &v, sizeof v);
}

/* Portable micro-kernel: the 6 x 16 tile as two 6 x 8 halves, twelve
 * 4-float accumulators each (they fit the 16 SSE registers). */
static void kern_generic(int64_t kc, const float *restrict a, const float *restrict b,
			 float *restrict c, int64_t ldc, int mr, int nr)
{
	float t[GEMM_MR * GEMM_NR];
	for (int h = 0; h < GEMM_NR; h += 8) {
		gemm_v4 c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
		gemm_v4 c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
		const float *pa = a, *pb = b + h;
		for (int64_t p = 0; p < kc; p++, pa += GEMM_MR, pb += GEMM_NR) {
			gemm_v4 b0 = v4_load(pb), b1 = v4_load(pb + 4), av;
#define GEMM_ROW(i)                                             \
	av = (gemm_v4){pa[i], pa[i], pa[i], pa[i]};             \
	c##i##0 += av * b0;                                     \
	c##i##1 += av * b1;
			GEMM_ROW(0) GEMM_ROW(1) GEMM_ROW(2) GEMM_ROW(3) GEMM_ROW(4) GEMM_ROW(5)
#undef GEMM_ROW
		}
#define GEMM_PUT(i)                                              \
	v4_store(t + (i) * GEMM_NR + h, c##i##0);                \
	v4_store(t + (i) * GEMM_NR + h + 4, c##i##1);
		GEMM_PUT(0) GEMM_PUT(1) GEMM_PUT(2) GEMM_PUT(3) GEMM_PUT(4) GEMM_PUT(5)
#undef GEMM_PUT
	}
	tile_add(c, ldc, t, mr, nr);
}

#ifdef GEMM_X86
/* AVX2 + FMA micro-kernel: twelve 8-float accumulators. */
__attribute__((target("avx2,fma"))) static void kern_avx2(int64_t kc, const float *restrict a,
							  const float *restrict b, float *restrict c,
							  int64_t ldc, int mr, int nr)
{
	__m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
	__m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
	/* the C tile's rows (one page apart in a wide C) on their way while the
	 * products accumulate */
	for (int i = 0; i < mr; i++) {
		_mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(c + i * ldc + nr - 1), _MM_HINT_T0);
	}
	for (int64_t p = 0; p < kc; p++, a += GEMM_MR, b += GEMM_NR) {
		__m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), av;
#define GEMM_ROW(i)                                     \
	av = _mm256_broadcast_ss(a + (i));              \
	c##i##0 = _mm256_fmadd_ps(av, b0, c##i##0);     \
	c##i##1 = _mm256_fmadd_ps(av, b1, c##i##1);
		GEMM_ROW(0) GEMM_ROW(1) GEMM_ROW(2) GEMM_ROW(3) GEMM_ROW(4) GEMM_ROW(5)
#undef GEMM_ROW
	}
	if (mr == GEMM_MR && nr == GEMM_NR) {
#define GEMM_PUT(i)                                                                        \
	_mm256_storeu_ps(c + (i) * ldc, _mm256_add_ps(_mm256_loadu_ps(c + (i) * ldc), c##i##0)); \
	_mm256_storeu_ps(c + (i) * ldc + 8, _mm256_add_ps(_mm256_loadu_ps(c + (i) * ldc + 8), c##i##1));
		GEMM_PUT(0) GEMM_PUT(1) GEMM_PUT(2) GEMM_PUT(3) GEMM_PUT(4) GEMM_PUT(5)
#undef GEMM_PUT
	} else {
		float t[GEMM_MR * GEMM_NR];
#define GEMM_PUT(i)                                       \
	_mm256_storeu_ps(t + (i) * GEMM_NR, c##i##0);     \
	_mm256_storeu_ps(t + (i) * GEMM_NR + 8, c##i##1);
		GEMM_PUT(0) GEMM_PUT(1) GEMM_PUT(2) GEMM_PUT(3) GEMM_PUT(4) GEMM_PUT(5)
#undef GEMM_PUT
		tile_add(c, ldc, t, mr, nr);
	}
}

/* AVX-512 micro-kernel: a 6 x 32 tile over two adjacent B micro-panels
 * (b and b + kc * NR), twelve 16-float accumulators. Each element's sum is
 * the AVX2 kernel's (FMAs in k order from zero, then added to C), so the
 * two give the same bits; columns past nr (17..32) are masked off. */
__attribute__((target("avx512f"))) static void kern_avx512(int64_t kc, const float *restrict a,
							   const float *restrict b, float *restrict c,
							   int64_t ldc, int mr, int nr)
{
	const float *b1 = b + kc * GEMM_NR;
	__m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
	__m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
	__mmask16 m1 = (__mmask16)((1u << (nr - GEMM_NR)) - 1u);
	for (int i = 0; i < mr; i++) {
		_mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
		_mm_prefetch((const char *)(c + i * ldc + nr - 1), _MM_HINT_T0);
	}
	for (int64_t p = 0; p < kc; p++, a += GEMM_MR, b += GEMM_NR, b1 += GEMM_NR) {
		__m512 b0v = _mm512_loadu_ps(b), b1v = _mm512_loadu_ps(b1), av;
#define GEMM_ROW(i)                                     \
	av = _mm512_set1_ps(a[i]);                      \
	c##i##0 = _mm512_fmadd_ps(av, b0v, c##i##0);    \
	c##i##1 = _mm512_fmadd_ps(av, b1v, c##i##1);
		GEMM_ROW(0) GEMM_ROW(1) GEMM_ROW(2) GEMM_ROW(3) GEMM_ROW(4) GEMM_ROW(5)
#undef GEMM_ROW
	}
#define GEMM_PUT(i)                                                                              \
	if (i < mr) {                                                                            \
		float *r = c + (i) * ldc;                                                        \
		_mm512_storeu_ps(r, _mm512_add_ps(_mm512_loadu_ps(r), c##i##0));                 \
		_mm512_mask_storeu_ps(r + GEMM_NR, m1,                                           \
				      _mm512_add_ps(_mm512_maskz_loadu_ps(m1, r + GEMM_NR), c##i##1)); \
	}
	GEMM_PUT(0) GEMM_PUT(1) GEMM_PUT(2) GEMM_PUT(3) GEMM_PUT(4) GEMM_PUT(5)
#undef GEMM_PUT
}
#endif

int loom_cpu_gemm_best(void)
{
#if defined(GEMM_X86) && !defined(LOOM_HOST_GENERIC)
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return LOOM_GEMM_GENERIC;
	return __builtin_cpu_supports("avx512f") ? LOOM_GEMM_AVX512 : LOOM_GEMM_AVX2;
#else
	return LOOM_GEMM_GENERIC;
#endif
}

/* ------------------------------------------------------------------ one thread */

/* the plain loop, when the pack buffers cannot be allocated */
static void gemm_naive(const struct gemm_job *j)
{
	for (int64_t i = 0; i < j->M; i++)
		for (int64_t k = 0; k < j->K; k++) {
			float a = j->ta ? j->A[k * j->lda + i] : j->A[i * j->lda + k];
			float *c = j->C + i * j->ldc;
			for (int64_t jj = 0; jj < j->N; jj++)
				c[jj] += a * (j->tb ? j->B[jj * j->ldb + k] : j->B[k * j->ldb + jj]);
		}
}

static float *alloc_floats(int64_t cnt)
{
	size_t bytes = (size_t)round_up(cnt * (int64_t)sizeof(float), 64);
	return aligned_alloc(64, bytes);
}

static void gemm_serial(const struct gemm_job *j)
{
	int64_t kcmax = min64(GEMM_KC, j->K);
	float *ap = alloc_floats(min64(GEMM_MC, round_up(j->M, GEMM_MR)) * kcmax);
	float *bp = alloc_floats(min64(GEMM_NC, round_up(j->N, GEMM_NR)) * kcmax);
	if (!ap || !bp) {
		free(ap);
		free(bp);
		gemm_naive(j);
		return;
	}
	for (int64_t jc = 0; jc < j->N; jc += GEMM_NC) {
		int64_t nc = min64(GEMM_NC, j->N - jc);
		for (int64_t pc = 0; pc < j->K; pc += GEMM_KC) {
			int64_t kc = min64(GEMM_KC, j->K - pc);
			pack_b(j, pc, kc, jc, nc, bp);
			for (int64_t ic = 0; ic < j->M; ic += GEMM_MC) {
				int64_t mc = min64(GEMM_MC, j->M - ic);
				pack_a(j, ic, mc, pc, kc, ap);
				for (int64_t jr = 0, w; jr < nc; jr += w) {
					/* two B micro-panels at a time on AVX-512 */
					w = j->path == LOOM_GEMM_AVX512 && nc - jr > GEMM_NR ? 2 * GEMM_NR : GEMM_NR;
					for (int64_t ir = 0; ir < mc; ir += GEMM_MR) {
						int mr = (int)min64(GEMM_MR, mc - ir);
						int nr = (int)min64(w, nc - jr);
						float *c = j->C + (ic + ir) * j->ldc + jc + jr;
#ifdef GEMM_X86
						if (w > GEMM_NR) {
							kern_avx512(kc, ap + ir * kc, bp + jr * kc, c, j->ldc, mr, nr);
							continue;
						}
						if (j->path != LOOM_GEMM_GENERIC) {
							kern_avx2(kc, ap + ir * kc, bp + jr * kc, c, j->ldc, mr, nr);
							continue;
						}
#endif
						kern_generic(kc, ap + ir * kc, bp + jr * kc, c, j->ldc, mr, nr);
					}
				}
			}
		}
	}
	free(ap);
	free(bp);
}

static void *gemm_thread(void *arg)
{
	gemm_serial(arg);
	return NULL;
}

/* ------------------------------------------------------------------ entry */

static int gemm_threads(int64_t M, int64_t N, int64_t K, int max_threads)
{
	long ncpu;
	if (M * N * K < GEMM_PAR_MIN || max_threads == 1)
		return 1;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		return 1;
	if (max_threads > 0 && ncpu > max_threads)
		ncpu = max_threads;
	return ncpu > GEMM_MAXTHR ? GEMM_MAXTHR : (int)ncpu;
}

void loom_cpu_gemm_f(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		     const float *B, int64_t ldb, float *C, int64_t ldc, int max_threads)
{
	loom_cpu_gemm_f_on(loom_cpu_gemm_best(), ta, tb, M, N, K, A, lda, B, ldb, C, ldc, max_threads);
}

void loom_cpu_gemm_f_on(int path, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
			int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc, int max_threads)
{
	struct gemm_job job = {ta, tb, 0, M, N, K, lda, ldb, ldc, A, B, C};
	struct gemm_job part[GEMM_MAXTHR];
	pthread_t th[GEMM_MAXTHR];
	int started[GEMM_MAXTHR] = {0};
	int nt, by_cols;
	int64_t units, per;
	int best = loom_cpu_gemm_best();
	if (M <= 0 || N <= 0 || K <= 0)
		return;
	/* a path this CPU lacks (or this build leaves out) falls back */
	job.path = path < LOOM_GEMM_GENERIC || path > best ? best : path;
	nt = gemm_threads(M, N, K, max_threads);
	/* Split by columns when op(A) is the smaller operand: each thread then
	 * packs all of op(A) and its own columns of op(B) (by rows, all of
	 * op(B)). A (the weights of a convolution) weighs double: it is read
	 * from memory, op(B) (its im2col buffer) is often still in cache. */
	by_cols = 2 * M <= N;
	units = by_cols ? (N + GEMM_NR - 1) / GEMM_NR : (M + GEMM_MR - 1) / GEMM_MR;
	if (nt > units)
		nt = (int)units;
	if (nt <= 1) {
		gemm_serial(&job);
		return;
	}
	per = (units + nt - 1) / nt;
	for (int t = 0; t < nt; t++) {
		struct gemm_job *q = &part[t];
		int64_t lo = min64(t * per, units), hi = min64((t + 1) * per, units);
		*q = job;
		if (by_cols) {
			int64_t j0 = lo * GEMM_NR, j1 = min64(hi * GEMM_NR, N);
			q->N = j1 - j0;
			q->B = tb ? B + j0 * ldb : B + j0;
			q->C = C + j0;
		} else {
			int64_t i0 = lo * GEMM_MR, i1 = min64(hi * GEMM_MR, M);
			q->M = i1 - i0;
			q->A = ta ? A + i0 : A + i0 * lda;
			q->C = C + i0 * ldc;
		}
	}
	/* part 0 on this thread; a part whose thread cannot start runs here too */
	for (int t = 1; t < nt; t++)
		if (part[t].M > 0 && part[t].N > 0)
			started[t] = !pthread_create(&th[t], NULL, gemm_thread, &part[t]);
	gemm_serial(&part[0]);
	for (int t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else if (part[t].M > 0 && part[t].N > 0)
			gemm_serial(&part[t]);
	}
}
