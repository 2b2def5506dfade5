/* ops_internal.h - what runtime's kernel files (runtime/ops_*.c) and the
 * operator table (runtime/ops.c) share; not a public header.
 *
 *  - the declaration of every kernel function named in runtime/ops.def,
 *    generated from it, so that a kernel's definition and the table agree
 *    on its signature;
 *  - the kernels' shorthand KARGS, IN, OUT, FAIL, OP_IS;
 *  - the helpers of the float kernels (need_io, need_float, shape_str,
 *    fdata, falloc, to_float/from_float, gemm_f, geo_out_dims) and of the
 *    data-movement kernels (need_in/need_out, in_ints, in_floats,
 *    attr_ints, axes_mask, set_like, is_index, copy_el, strided_copy,
 *    strides_of, next_index, in_bytes_copy).
 *
 * The helpers have short names and are static inline: each kernel file
 * compiles its own copy of those it uses, and may not define a static
 * function of the same name. runtime/cpu_internal.h has the loom_cpu_
 * helpers (element access, axes, shapes, broadcasting, the GEMM). */
#ifndef LOOM_OPS_INTERNAL_H
#define LOOM_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/cpu_ops.h"
#include "cpu_internal.h"

/* ------------------------------------------------------------------ shorthand */

/* a kernel's parameters (the signature of loom_cpu_op's infer and run) */
#define KARGS loom_graph *g, const loom_node *n, char *err, size_t errlen

/* in a function with KARGS: node n's input / output tensor i (NULL when
 * absent), the error message (returns -1), whether n is of op type name */
#define IN(i) loom_node_in(g, n, (i))
#define OUT(i) loom_node_out(g, n, (i))
#define FAIL(...) loom_cpu_fail(g, n, err, errlen, __VA_ARGS__)
#define OP_IS(name) (!strcmp(n->op_type, (name)))

/* ------------------------------------------------------------------ the kernels */

/* one declaration per function named in ops.def (a function shared by
 * several rows is declared once per row, which C allows) */
#define LOOM_OP(op, min_opset, infer, run, npu) \
	int infer(KARGS);                       \
	int run(KARGS);
#include "ops.def"
#undef LOOM_OP

/* ------------------------------------------------------------------ float kernels' helpers */

static inline void shape_str(const loom_tensor *t, char *buf, size_t len)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, len - o, "[");
	for (int d = 0; d < t->rank && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* inputs [lo, hi] present (lo required), outputs at least one */
static inline int need_io(KARGS, int lo, int hi)
{
	if (n->ninputs < lo || n->ninputs > hi)
		return FAIL("expects %d to %d inputs, has %d", lo, hi, n->ninputs);
	for (int i = 0; i < lo; i++)
		if (!IN(i))
			return FAIL("input %d is required", i);
	if (n->noutputs < 1 || !OUT(0))
		return FAIL("has no output");
	return 0;
}

static inline int need_float(KARGS, const loom_tensor *t, const char *what)
{
	if (t->dtype != LOOM_DT_FLOAT)
		return FAIL("%s '%s' is %s; only float is supported", what, t->name,
			    loom_dtype_name(t->dtype));
	return 0;
}

static inline const float *fdata(const loom_tensor *t)
{
	return (const float *)t->data;
}

/* a float buffer of cnt elements (at least one), NULL on failure */
static inline float *falloc(int64_t cnt)
{
	return malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(float));
}

/* a float copy of any numeric tensor's data (malloc'd, NULL on failure) */
static inline float *to_float(const loom_tensor *t)
{
	int64_t cnt = loom_tensor_numel(t);
	float *p = falloc(cnt);
	if (!p)
		return NULL;
	for (int64_t i = 0; i < cnt; i++)
		p[i] = (float)loom_cpu_get_f(t->data, t->dtype, i);
	return p;
}

static inline void from_float(loom_tensor *t, const float *p)
{
	int64_t cnt = loom_tensor_numel(t);
	for (int64_t i = 0; i < cnt; i++)
		loom_cpu_set_f(t->data, t->dtype, i, p[i]);
}

/* C[M x N] += op(A) op(B), row-major with leading dimensions; op(A) is
 * M x K. float accumulation (runtime/gemm.c), on at most g->threads
 * threads. */
static inline void gemm_f(const loom_graph *g, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
			  int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc)
{
	loom_cpu_gemm_f(ta, tb, M, N, K, A, lda, B, ldb, C, ldc, g->threads);
}

/* the output dims of a convolution or pooling of x with geometry p: N, C,
 * then p's output sizes */
static inline void geo_out_dims(const struct loom_cpu_geo *p, const loom_tensor *x, int64_t C,
				int64_t *dims)
{
	dims[0] = x->dims[0];
	dims[1] = C;
	for (int i = 0; i < p->nd; i++)
		dims[2 + i] = p->out[3 - p->nd + i];
}

/* ------------------------------------------------------------------ data-movement kernels' helpers */

static inline void set_like(loom_tensor *t, const loom_tensor *src)
{
	loom_cpu_set_shape(t, src->dtype, src->rank, src->dims);
}

static inline int is_index(int dt)
{
	return dt == LOOM_DT_INT32 || dt == LOOM_DT_INT64;
}

static inline void copy_el(char *d, const char *s, size_t es)
{
	switch (es) {
	case 1: *d = *s; break;
	case 2: memcpy(d, s, 2); break;
	case 4: memcpy(d, s, 4); break;
	case 8: memcpy(d, s, 8); break;
	default: memcpy(d, s, es); break;
	}
}

/* dst[o] = src[off + sum_d o_d * strides[d]] for every row-major index o of
 * dims (rank <= 2 * LOOM_MAX_RANK, strides in elements, may be 0 or < 0). */
static inline void strided_copy(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
				const int64_t *strides, int64_t off)
{
	int64_t idx[2 * LOOM_MAX_RANK] = {0};
	int64_t total = loom_cpu_prod(dims, 0, rank);
	if (total <= 0)
		return;
	int64_t inner = rank ? dims[rank - 1] : 1;
	int64_t is = rank ? strides[rank - 1] : 0;
	char *o = dst;
	const char *s = src;
	int64_t base = off;
	for (int64_t done = 0; done < total; done += inner) {
		if (is == 1) {
			memcpy(o, s + base * (int64_t)es, (size_t)inner * es);
		} else {
			for (int64_t j = 0; j < inner; j++)
				copy_el(o + j * (int64_t)es, s + (base + j * is) * (int64_t)es, es);
		}
		o += inner * (int64_t)es;
		for (int d = rank - 2; d >= 0; d--) {
			idx[d]++;
			base += strides[d];
			if (idx[d] < dims[d])
				break;
			base -= idx[d] * strides[d];
			idx[d] = 0;
		}
	}
}

/* row-major element strides of a shape */
static inline void strides_of(int rank, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Advance a row-major multi-index; 0 once it wrapped around. */
static inline int next_index(int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++idx[d] < dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}

/* Input i, which must be present and have a known dtype. */
static inline loom_tensor *need_in(loom_graph *g, const loom_node *n, int i, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	if (!t) {
		FAIL("input %d is missing", i);
		return NULL;
	}
	if (!loom_dtype_size(t->dtype)) {
		FAIL("input %d '%s' has data type %s, not supported", i, t->name,
		     loom_dtype_name(t->dtype));
		return NULL;
	}
	return t;
}

static inline loom_tensor *need_out(loom_graph *g, const loom_node *n, int i, char *err, size_t errlen)
{
	loom_tensor *t = OUT(i);
	if (!t)
		FAIL("output %d is missing", i);
	return t;
}

/* The values of integer input i, which must be known (a constant, or
 * computed while inferring). *count = its element count; at most maxn. A
 * missing optional input gives count -1. */
static inline int in_ints(loom_graph *g, const loom_node *n, int i, const char *what, int64_t *v,
			  int maxn, int *count, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	*count = -1;
	if (!t)
		return 0;
	if (!is_index(t->dtype) && t->dtype != LOOM_DT_INT16 && t->dtype != LOOM_DT_INT8)
		return FAIL("%s input '%s' has data type %s, expected int64 or int32", what, t->name,
			    loom_dtype_name(t->dtype));
	int64_t cnt = loom_tensor_numel(t);
	if (cnt < 0 || cnt > maxn)
		return FAIL("%s input '%s' has %lld values, at most %d supported", what, t->name,
			    (long long)cnt, maxn);
	if (cnt && !t->data)
		return FAIL("%s input '%s' is not a constant (its values decide the output shape)",
			    what, t->name);
	for (int64_t k = 0; k < cnt; k++)
		v[k] = loom_cpu_get_i(t->data, t->dtype, k);
	*count = (int)cnt;
	return 0;
}

/* Same for a float/double input (scales, roi). */
static inline int in_floats(loom_graph *g, const loom_node *n, int i, const char *what, double *v,
			    int maxn, int *count, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	*count = -1;
	if (!t)
		return 0;
	if (!loom_cpu_is_float(t->dtype))
		return FAIL("%s input '%s' has data type %s, expected float", what, t->name,
			    loom_dtype_name(t->dtype));
	int64_t cnt = loom_tensor_numel(t);
	if (cnt < 0 || cnt > maxn)
		return FAIL("%s input '%s' has %lld values, at most %d supported", what, t->name,
			    (long long)cnt, maxn);
	if (cnt && !t->data)
		return FAIL("%s input '%s' is not a constant (its values decide the output shape)",
			    what, t->name);
	for (int64_t k = 0; k < cnt; k++)
		v[k] = loom_cpu_get_f(t->data, t->dtype, k);
	*count = (int)cnt;
	return 0;
}

/* An INTS attribute copied into v (at most maxn); count -1 when absent. */
static inline int attr_ints(loom_graph *g, const loom_node *n, const char *name, int64_t *v, int maxn,
			    int *count, char *err, size_t errlen)
{
	int c = 0;
	const int64_t *a = loom_attr_ints(n, name, &c);
	*count = -1;
	if (!loom_node_attr(n, name))
		return 0;
	if (c > maxn)
		return FAIL("attribute %s has %d values, at most %d supported", name, c, maxn);
	if (c)
		memcpy(v, a, (size_t)c * sizeof *v);
	*count = c;
	return 0;
}

/* Axes (of a rank-r tensor) into a mask; duplicates and out-of-range axes fail. */
static inline int axes_mask(loom_graph *g, const loom_node *n, const int64_t *axes, int cnt, int r,
			    int *mask, char *err, size_t errlen)
{
	memset(mask, 0, sizeof(int) * LOOM_MAX_RANK);
	for (int i = 0; i < cnt; i++) {
		int a = loom_cpu_axis(axes[i], r);
		if (a < 0)
			return FAIL("axis %lld out of range for rank %d", (long long)axes[i], r);
		if (mask[a])
			return FAIL("axis %lld repeated", (long long)axes[i]);
		mask[a] = 1;
	}
	return 0;
}

static inline int in_bytes_copy(loom_graph *g, const loom_node *n)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	size_t b = loom_tensor_bytes(y);
	if (b && x->data != y->data)
		memcpy(y->data, x->data, b);
	return 0;
}

#endif
