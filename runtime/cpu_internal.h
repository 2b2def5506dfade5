/* cpu_internal.h - helpers shared by Loom's CPU kernel files (runtime/cpu.c,
 * runtime/ops_*.c, runtime/gemm.c); not a public header (the kernel files'
 * own shorthand and short-named helpers are in runtime/ops_internal.h).
 * Everything here is prefixed loom_cpu_ / LOOM_CPU_ so that it never
 * clashes with a kernel file's own static helpers. The small helpers are
 * static inline; loom_cpu_fail is defined in runtime/cpu.c. No global
 * state.
 *
 *  - loom_cpu_fail: the kernels' error message,
 *    "node 'NAME' (OP, opset N): problem".
 *  - dtype classes and element access by dtype: loom_cpu_get_i (in
 *    runtime/cpu_ops.h, the compiler uses it too) and loom_cpu_get_f read
 *    element i of a buffer of any enum loom_dtype as int64 / double,
 *    loom_cpu_set_i/set_f store one (integers wrap like a C cast from int64;
 *    double -> integer truncates toward zero, saturates, NaN -> 0; bool
 *    stores v != 0).
 *  - loom_cpu_axis: axis normalization, [-rank, rank) -> [0, rank).
 *  - loom_cpu_set_shape, loom_cpu_prod: output shapes.
 *  - loom_cpu_bcast: numpy-style broadcasting iteration over one to three
 *    operands (e.g. Add's A and B, Where's condition, X and Y): for each
 *    element of the output, in row-major order, the element offset of each
 *    operand.
 *  - loom_cpu_gemm_f: the float32 GEMM (runtime/gemm.c). */
#ifndef LOOM_CPU_INTERNAL_H
#define LOOM_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "runtime/cpu_ops.h"

/* Format "node 'NAME' (OP, opset N): <fmt...>" into err; returns -1. */
int loom_cpu_fail(const loom_graph *g, const loom_node *n, char *err, size_t errlen,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ------------------------------------------------------------------ dtypes */

static inline int loom_cpu_is_float(int dt)
{
	return dt == LOOM_DT_FLOAT || dt == LOOM_DT_DOUBLE;
}

static inline int loom_cpu_is_unsigned(int dt)
{
	return dt == LOOM_DT_UINT8 || dt == LOOM_DT_UINT16 || dt == LOOM_DT_UINT32 ||
	       dt == LOOM_DT_UINT64;
}

/* signed or unsigned integer (bool excluded) */
static inline int loom_cpu_is_int(int dt)
{
	return dt == LOOM_DT_INT8 || dt == LOOM_DT_INT16 || dt == LOOM_DT_INT32 ||
	       dt == LOOM_DT_INT64 || loom_cpu_is_unsigned(dt);
}

/* float or integer (bool excluded) */
static inline int loom_cpu_is_numeric(int dt)
{
	return loom_cpu_is_float(dt) || loom_cpu_is_int(dt);
}

/* Element i of p (of dtype dt) as double. */
static inline double loom_cpu_get_f(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case LOOM_DT_FLOAT: return ((const float *)p)[i];
	case LOOM_DT_DOUBLE: return ((const double *)p)[i];
	case LOOM_DT_UINT64: return (double)((const uint64_t *)p)[i];
	default: return (double)loom_cpu_get_i(p, dt, i);
	}
}

/* Store v as element i of p (of dtype dt): integers wrap as a C cast does. */
static inline void loom_cpu_set_i(void *p, int dt, int64_t i, int64_t v)
{
	switch (dt) {
	case LOOM_DT_INT64: ((int64_t *)p)[i] = v; break;
	case LOOM_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case LOOM_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case LOOM_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case LOOM_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case LOOM_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case LOOM_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case LOOM_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case LOOM_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case LOOM_DT_FLOAT: ((float *)p)[i] = (float)v; break;
	case LOOM_DT_DOUBLE: ((double *)p)[i] = (double)v; break;
	default: break;
	}
}

/* Store v as element i of p (of dtype dt): floats rounded, integers
 * truncated toward zero and saturated to int64 first (then wrapped to the
 * dtype), uint64 from the full unsigned range, bool v != 0. */
static inline void loom_cpu_set_f(void *p, int dt, int64_t i, double v)
{
	switch (dt) {
	case LOOM_DT_FLOAT: ((float *)p)[i] = (float)v; break;
	case LOOM_DT_DOUBLE: ((double *)p)[i] = v; break;
	case LOOM_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case LOOM_DT_UINT64:
		if (v >= 18446744073709551615.0)
			((uint64_t *)p)[i] = UINT64_MAX;
		else if (v >= 9223372036854775808.0)
			((uint64_t *)p)[i] = (uint64_t)v;
		else
			((uint64_t *)p)[i] = (uint64_t)loom_cpu_f2i(v);
		break;
	default: loom_cpu_set_i(p, dt, i, loom_cpu_f2i(v)); break;
	}
}

/* ------------------------------------------------------------------ shapes */

/* axis in [-rank, rank) as [0, rank), or -1 when out of range (for an
 * insertion axis as in Unsqueeze, pass rank + 1) */
static inline int loom_cpu_axis(int64_t axis, int rank)
{
	if (axis < -(int64_t)rank || axis >= rank)
		return -1;
	return (int)(axis < 0 ? axis + rank : axis);
}

/* the product of d[from..to) */
static inline int64_t loom_cpu_prod(const int64_t *d, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		p *= d[i];
	return p;
}

/* Set an output's dtype and shape (dims past rank zeroed). */
static inline void loom_cpu_set_shape(loom_tensor *t, int dtype, int rank, const int64_t *dims)
{
	t->dtype = dtype;
	t->rank = rank;
	for (int i = 0; i < LOOM_MAX_RANK; i++)
		t->dims[i] = i < rank && dims ? dims[i] : 0;
}

/* numpy broadcast of n shapes (any n >= 1) into (*rank, dims); -1 if
 * incompatible. */
static inline int loom_cpu_bcast_shape(int n, const loom_tensor *const *t, int *rank, int64_t *dims)
{
	int r = 0;
	for (int k = 0; k < n; k++)
		if (t[k]->rank > r)
			r = t[k]->rank;
	for (int d = 0; d < r; d++)
		dims[d] = 1;
	for (int k = 0; k < n; k++) {
		int off = r - t[k]->rank;
		for (int d = 0; d < t[k]->rank; d++) {
			int64_t v = t[k]->dims[d];
			if (v == dims[off + d] || v == 1)
				continue;
			if (dims[off + d] != 1)
				return -1;
			dims[off + d] = v;
		}
	}
	*rank = r;
	return 0;
}

/* ------------------------------------------------------------------ broadcasting iteration */

#define LOOM_CPU_BCAST_MAX 3

typedef struct loom_cpu_bcast {
	int n;                                  /* operands, 1..LOOM_CPU_BCAST_MAX */
	int rank;                               /* of the iterated (output) shape */
	int64_t dims[LOOM_MAX_RANK];
	int64_t numel;                          /* elements to visit */
	int64_t step[LOOM_CPU_BCAST_MAX][LOOM_MAX_RANK]; /* operand k's element
						   stride along output dim d, 0
						   where it is broadcast */
	int64_t idx[LOOM_MAX_RANK];             /* the current output index */
	int64_t off[LOOM_CPU_BCAST_MAX];        /* the current operand offsets */
} loom_cpu_bcast;

/* Iterate the shape (rank, dims) with n operands t[0..n) broadcast into it
 * (numpy rules, right-aligned; an operand's dim must be 1 or equal).
 * -1 if an operand does not broadcast into that shape or n is out of range.
 * Use:
 *   for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it))
 *           y[i] = a[it.off[0]] + b[it.off[1]]; */
static inline int loom_cpu_bcast_init(loom_cpu_bcast *b, int n, const loom_tensor *const *t,
				      int rank, const int64_t *dims)
{
	if (n < 1 || n > LOOM_CPU_BCAST_MAX || rank < 0 || rank > LOOM_MAX_RANK)
		return -1;
	b->n = n;
	b->rank = rank;
	b->numel = 1;
	for (int d = 0; d < rank; d++) {
		b->dims[d] = dims[d];
		b->idx[d] = 0;
		b->numel *= dims[d];
	}
	for (int k = 0; k < n; k++) {
		int off = rank - t[k]->rank;
		int64_t s = 1;
		if (off < 0)
			return -1;
		b->off[k] = 0;
		for (int d = rank - 1; d >= 0; d--) {
			int64_t v = d >= off ? t[k]->dims[d - off] : 1;
			if (v != dims[d] && v != 1)
				return -1;
			b->step[k][d] = v == 1 ? 0 : s;
			s *= v;
		}
	}
	return 0;
}

/* Advance to the next output element (row-major). */
static inline void loom_cpu_bcast_next(loom_cpu_bcast *b)
{
	for (int d = b->rank - 1; d >= 0; d--) {
		for (int k = 0; k < b->n; k++)
			b->off[k] += b->step[k][d];
		if (++b->idx[d] < b->dims[d])
			return;
		for (int k = 0; k < b->n; k++)
			b->off[k] -= b->step[k][d] * b->dims[d];
		b->idx[d] = 0;
	}
}

/* ------------------------------------------------------------------ GEMM */

/* C[M x N] += op(A) op(B), float32, row-major with leading dimensions; op(A)
 * is M x K (A is K x M when ta), op(B) K x N (B is N x K when tb). Cache
 * and register blocked, large products split over threads (at most
 * max_threads; 0: no limit but the online CPUs); the result does not
 * depend on the number of threads. Micro-kernel paths: generic (mul then
 * add), AVX2+FMA and AVX-512 (FMA): the last two give the same bits.
 * loom_cpu_gemm_f takes the best this CPU has (loom_cpu_gemm_best);
 * loom_cpu_gemm_f_on a given one (a path the CPU lacks falls back to the
 * best). Defined in runtime/gemm.c. */
enum { LOOM_GEMM_GENERIC, LOOM_GEMM_AVX2, LOOM_GEMM_AVX512 };
int loom_cpu_gemm_best(void);
void loom_cpu_gemm_f(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		     const float *B, int64_t ldb, float *C, int64_t ldc, int max_threads);
void loom_cpu_gemm_f_on(int path, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
			int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc, int max_threads);

#endif
