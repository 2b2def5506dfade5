/* test_gemm.c - unit tests of the float32 GEMM of the reference executor
 * (runtime/gemm.c, loom_cpu_gemm_f), built twice: test_gemm with the
 * micro-kernel the CPU selects (AVX2 + FMA where it has them), and
 * test_gemm_generic with gemm.c compiled into the test with
 * LOOM_HOST_GENERIC (the portable kernel, whatever the CPU).
 *
 *   - odd shapes (1 x 1 x 1 up to K past one K block of 256, M past an M
 *     block, N that leaves a partial tile of 16 columns), every
 *     combination of transposes, leading dimensions wider than the
 *     matrices, C holding values first (C += op(A) op(B)), on 1 and 2
 *     threads: within float rounding of a double-precision triple loop;
 *   - the AVX-512 micro-kernel (a 6 x 32 tile) gives the AVX2 one's bits
 *     on the same shapes and on N that leave 1..31 columns of a 32-column
 *     tile, on 1 and 2 threads, where the CPU has both (the generic build
 *     compares the generic path with itself: it says so);
 *   - a narrow C (M 64, N 49 or 196: partial tiles) has the same bits as
 *     the same columns of a wider product (N 144 or 256: whole tiles), for
 *     every combination of transposes, on 1 and 2 threads: each element's
 *     sums in the same order whatever tile it falls in (gemm.c's
 *     determinism, which the calibration's ranges rest on).
 *
 * Prints one line per check and ends with "N passed, M failed"; exit
 * status 1 on any failure. */
#include "runtime/cpu_internal.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 2026;

static float rnd(void)
{
	seed = seed * 1664525u + 1013904223u;
	return (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static float *rand_floats(int64_t n)
{
	float *p = malloc((size_t)n * sizeof *p);
	if (!p) {
		fprintf(stderr, "test_gemm: out of memory\n");
		exit(2);
	}
	for (int64_t i = 0; i < n; i++)
		p[i] = rnd();
	return p;
}

/* op(X)[r][c] of X stored rows x cols (t: X is stored transposed) */
static double at(const float *X, int64_t ld, int t, int64_t r, int64_t c)
{
	return t ? X[c * ld + r] : X[r * ld + c];
}

/* C (M x N, ldc) += op(A) op(B) against the double triple loop, within
 * K float roundings of each element's magnitude */
static int near_ref(int ta, int tb, int64_t M, int64_t N, int64_t K, int threads)
{
	int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 2;
	float *A = rand_floats((ta ? K : M) * lda), *B = rand_floats((tb ? N : K) * ldb);
	float *C = rand_floats(M * ldc), *C0 = malloc((size_t)(M * ldc) * sizeof *C0);
	int ok = C0 != NULL;
	if (ok)
		memcpy(C0, C, (size_t)(M * ldc) * sizeof *C);
	loom_cpu_gemm_f(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, threads);
	for (int64_t i = 0; ok && i < M; i++)
		for (int64_t j = 0; j < ldc; j++) {
			if (j >= N) { /* past N: untouched */
				ok &= C[i * ldc + j] == C0[i * ldc + j];
				continue;
			}
			double s = C0[i * ldc + j], mag = fabs(s);
			for (int64_t k = 0; k < K; k++) {
				double p = at(A, lda, ta, i, k) * at(B, ldb, tb, k, j);
				s += p;
				mag += fabs(p);
			}
			ok &= fabs(C[i * ldc + j] - s) <= (double)(K + 1) * 6e-8 * mag + 1e-30;
		}
	free(A);
	free(B);
	free(C);
	free(C0);
	return ok;
}

static void test_shapes(void)
{
	static const int64_t shapes[][3] = {
		{1, 1, 1}, {5, 7, 3}, {7, 49, 300}, {64, 49, 576}, {13, 200, 257}, {130, 3, 17},
		{256, 196, 64}, {512, 49, 300}, {121, 33, 513},
	};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int t = 0; t < 4; t++)
			for (int th = 1; th <= 2; th++) {
				int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
				CHECK(near_ref(t & 1, t >> 1, M, N, K, th),
				      "%lld x %lld x %lld, ta %d tb %d, %d thread%s: the double loop's sums",
				      (long long)M, (long long)N, (long long)K, t & 1, t >> 1, th, th > 1 ? "s" : "");
			}
}

/* C (M x N) by itself, and as the first N columns of an M x W product
 * (W > N, B's extra columns random): the same bits */
static int same_as_wide(int ta, int tb, int64_t M, int64_t N, int64_t W, int64_t K, int threads)
{
	int64_t lda = ta ? M : K, ldb = tb ? K : W;
	float *A = rand_floats((ta ? K : M) * lda), *B = rand_floats((tb ? W : K) * ldb);
	float *Cn = rand_floats(M * N), *Cw = malloc((size_t)(M * W) * sizeof *Cw);
	int ok = Cw != NULL;
	for (int64_t i = 0; ok && i < M; i++)
		for (int64_t j = 0; j < W; j++)
			Cw[i * W + j] = j < N ? Cn[i * N + j] : 0.0f;
	/* the narrow product reads the same B: its first N columns (rows when tb) */
	loom_cpu_gemm_f(ta, tb, M, N, K, A, lda, B, ldb, Cn, N, threads);
	if (ok)
		loom_cpu_gemm_f(ta, tb, M, W, K, A, lda, B, ldb, Cw, W, threads);
	for (int64_t i = 0; ok && i < M; i++)
		ok &= !memcmp(Cn + i * N, Cw + i * W, (size_t)N * sizeof *Cn);
	free(A);
	free(B);
	free(Cn);
	free(Cw);
	return ok;
}

static void test_tiles(void)
{
	/* N 49 and 196 end in a partial tile of 16 columns; N 144 and 256 do not */
	static const int64_t cases[][3] = {{49, 144, 300}, {196, 256, 576}, {49, 144, 40}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int t = 0; t < 4; t++)
			for (int th = 1; th <= 2; th++) {
				int64_t N = cases[c][0], W = cases[c][1], K = cases[c][2];
				CHECK(same_as_wide(t & 1, t >> 1, 64, N, W, K, th),
				      "64 x %lld x %lld, ta %d tb %d, %d thread%s: the bits of the 64 x %lld "
				      "product's columns",
				      (long long)N, (long long)K, t & 1, t >> 1, th, th > 1 ? "s" : "", (long long)W);
			}
}

/* C += op(A) op(B) on two micro-kernel paths from the same C: the same bits */
static int same_paths(int p1, int p2, int ta, int tb, int64_t M, int64_t N, int64_t K, int threads)
{
	int64_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 3, ldc = N + 1;
	float *A = rand_floats((ta ? K : M) * lda), *B = rand_floats((tb ? N : K) * ldb);
	float *C1 = rand_floats(M * ldc), *C2 = malloc((size_t)(M * ldc) * sizeof *C2);
	int ok = C2 != NULL;
	if (ok) {
		memcpy(C2, C1, (size_t)(M * ldc) * sizeof *C1);
		loom_cpu_gemm_f_on(p1, ta, tb, M, N, K, A, lda, B, ldb, C1, ldc, threads);
		loom_cpu_gemm_f_on(p2, ta, tb, M, N, K, A, lda, B, ldb, C2, ldc, threads);
		ok = !memcmp(C1, C2, (size_t)(M * ldc) * sizeof *C1);
	}
	free(A);
	free(B);
	free(C1);
	free(C2);
	return ok;
}

static void test_paths(void)
{
	static const char *names[] = {"generic", "AVX2", "AVX-512"};
	static const int64_t shapes[][3] = {
		{1, 1, 1}, {6, 32, 256}, {7, 33, 257}, {13, 47, 300}, {64, 49, 576}, {121, 63, 513},
		{256, 196, 64}, {5, 17, 9}, {12, 2049, 40}, {130, 31, 17},
	};
	int best = loom_cpu_gemm_best(), lo = best > LOOM_GEMM_AVX2 ? LOOM_GEMM_AVX2 : best;
	printf("micro-kernel paths compared: %s against %s\n", names[best], names[lo]);
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int t = 0; t < 4; t++)
			for (int th = 1; th <= 2; th++) {
				int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
				CHECK(same_paths(best, lo, t & 1, t >> 1, M, N, K, th),
				      "%lld x %lld x %lld, ta %d tb %d, %d thread%s: %s and %s give the same bits",
				      (long long)M, (long long)N, (long long)K, t & 1, t >> 1, th, th > 1 ? "s" : "",
				      names[best], names[lo]);
			}
}

int main(void)
{
	check_init(0);
#ifdef LOOM_HOST_GENERIC
	printf("the portable micro-kernel (LOOM_HOST_GENERIC)\n");
#endif
	test_shapes();
	test_paths();
	test_tiles();
	return check_report();
}
