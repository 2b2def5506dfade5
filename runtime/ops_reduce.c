/* ops_reduce.c - Loom's CPU kernels for the operators that reduce along
 * axes (their rows are in runtime/ops.def): Softmax, LogSoftmax, Hardmax
 * (the 2-D coercion at axis before opset 13, one axis from 13), the
 * Reduce* family (axes an attribute, an input from opset 13 for ReduceSum
 * and from 18 for the others; keepdims, noop_with_empty_axes),
 * ArgMax/ArgMin (keepdims, select_last_index) and TopK (k an input from
 * opset 10; largest and sorted from 11).
 * Float32 reduces in float, the other types in double.
 *
 * Values that decide an output shape (Reshape's shape, Slice's starts,
 * Pad's pads, ...) must be known when infer() runs (tensor->data set),
 * otherwise infer() fails naming the input. Errors: "node 'NAME' (OP,
 * opset N): problem" (loom_cpu_fail). No global state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ Softmax, LogSoftmax, Hardmax */

/* The softmax as outer x n x inner: before opset 13 the input is coerced to
 * 2-D at axis (default 1) and normalized over the whole second part; from
 * 13 over the one axis (default -1). */
static int softmax_dims(loom_graph *g, const loom_node *n, int64_t *outer, int64_t *len,
			int64_t *inner, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	if (!x)
		return -1;
	int r = x->rank, old = g->opset < 13;
	int64_t av = loom_attr_int(n, "axis", old ? 1 : -1);
	if (av < -r || av > (old ? r : r - 1) || (r == 0 && !old))
		return FAIL("axis %lld out of range for rank %d", (long long)av, r);
	int a = (int)(av < 0 ? av + r : av);
	*outer = loom_cpu_prod(x->dims, 0, a);
	if (old) {
		*len = loom_cpu_prod(x->dims, a, r);
		*inner = 1;
	} else {
		*len = x->dims[a];
		*inner = loom_cpu_prod(x->dims, a + 1, r);
	}
	return 0;
}

int loom_cpu_softmax_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t o, l, i;
	if (!x || !y || softmax_dims(g, n, &o, &l, &i, err, errlen))
		return -1;
	if (!loom_cpu_is_float(x->dtype))
		return FAIL("input is %s, expected float or double", loom_dtype_name(x->dtype));
	set_like(y, x);
	return 0;
}

enum { SM_SOFTMAX, SM_LOG, SM_HARD };

#define SOFTMAX_FN(NAME, T, EXP, LOG)                                                        \
	static void NAME(int kind, const T *x, T *y, int64_t outer, int64_t len, int64_t inner) \
	{                                                                                      \
		for (int64_t o = 0; o < outer; o++)                                            \
			for (int64_t i = 0; i < inner; i++) {                                  \
				const T *xp = x + o * len * inner + i;                         \
				T *yp = y + o * len * inner + i;                               \
				T m = -INFINITY, s = 0;                                        \
				int64_t am = 0;                                                \
				for (int64_t k = 0; k < len; k++)                              \
					if (xp[k * inner] > m || k == 0) {                     \
						m = xp[k * inner];                             \
						am = k;                                        \
					}                                                      \
				if (kind == SM_HARD) {                                         \
					for (int64_t k = 0; k < len; k++)                      \
						yp[k * inner] = k == am;                       \
					continue;                                              \
				}                                                              \
				for (int64_t k = 0; k < len; k++) {                            \
					T e = EXP(xp[k * inner] - m);                          \
					s += e;                                                \
					if (kind == SM_SOFTMAX)                                \
						yp[k * inner] = e;                             \
				}                                                              \
				if (kind == SM_SOFTMAX) {                                      \
					for (int64_t k = 0; k < len; k++)                      \
						yp[k * inner] /= s;                            \
				} else {                                                       \
					T ls = LOG(s);                                         \
					for (int64_t k = 0; k < len; k++)                      \
						yp[k * inner] = xp[k * inner] - m - ls;        \
				}                                                              \
			}                                                                      \
	}
SOFTMAX_FN(softmax_f32, float, expf, logf)
SOFTMAX_FN(softmax_f64, double, exp, log)

int loom_cpu_softmax_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	int64_t o, l, i;
	if (softmax_dims(g, n, &o, &l, &i, err, errlen))
		return -1;
	int kind = !strcmp(n->op_type, "LogSoftmax") ? SM_LOG
		   : !strcmp(n->op_type, "Hardmax") ? SM_HARD : SM_SOFTMAX;
	if (x->dtype == LOOM_DT_FLOAT)
		softmax_f32(kind, x->data, y->data, o, l, i);
	else
		softmax_f64(kind, x->data, y->data, o, l, i);
	return 0;
}

/* ------------------------------------------------------------------ Reduce* */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };

static int reduce_kind(const char *op)
{
	static const char *const names[] = {"ReduceSum", "ReduceMean", "ReduceMax",
					    "ReduceMin", "ReduceProd", "ReduceL1",
					    "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
					    "ReduceSumSquare"};
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (!strcmp(op, names[i]))
			return i;
	return -1;
}

/* The reduced axes: the axes attribute, or input 1 (ReduceSum from opset
 * 13, the others from 18); none = all, or nothing with noop_with_empty_axes
 * (*noop set). */
static int reduce_axes(loom_graph *g, const loom_node *n, int *mask, int *noop, char *err,
		       size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	int64_t axes[LOOM_MAX_RANK];
	int cnt;
	if (!x)
		return -1;
	int from_input = g->opset >= (reduce_kind(n->op_type) == R_SUM ? 13 : 18);
	if (from_input ? in_ints(g, n, 1, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen)
		       : attr_ints(g, n, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	*noop = 0;
	if (cnt <= 0) {
		*noop = loom_attr_int(n, "noop_with_empty_axes", 0) != 0;
		for (int d = 0; d < LOOM_MAX_RANK; d++)
			mask[d] = !*noop && d < x->rank;
		return 0;
	}
	return axes_mask(g, n, axes, cnt, x->rank, mask, err, errlen);
}

int loom_cpu_reduce_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int mask[LOOM_MAX_RANK], noop, r = 0;
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !y || reduce_axes(g, n, mask, &noop, err, errlen))
		return -1;
	if (x->dtype == LOOM_DT_BOOL)
		return FAIL("input is bool, not supported");
	int keep = loom_attr_int(n, "keepdims", 1) != 0;
	for (int d = 0; d < x->rank; d++) {
		if (!mask[d])
			dims[r++] = x->dims[d];
		else if (keep)
			dims[r++] = 1;
	}
	loom_cpu_set_shape(y, x->dtype, r, dims);
	return 0;
}

/* acc[o] over the input in row-major order: o follows ost, the output's
 * strides with 0 on the reduced axes */
#define REDUCE_FN(NAME, ACC, LOAD, SQRT, LOG, EXP, FABS)                                       \
	static void NAME(int kind, const void *xv, int dt, ACC *acc, int r, const int64_t *dims, \
			 const int64_t *ost, int64_t ocnt, int64_t icnt)                        \
	{                                                                                      \
		(void)dt;                                                                      \
		ACC *mx = NULL;                                                                \
		ACC init = kind == R_PROD ? 1 : kind == R_MAX || kind == R_LOGSUMEXP ? -INFINITY \
					     : kind == R_MIN ? INFINITY : 0;                    \
		for (int64_t o = 0; o < ocnt; o++)                                             \
			acc[o] = init;                                                         \
		for (int pass = kind == R_LOGSUMEXP ? 0 : 1; pass < 2; pass++) {               \
			int64_t idx[LOOM_MAX_RANK] = {0}, o = 0;                               \
			if (pass == 1 && kind == R_LOGSUMEXP) {                                \
				mx = malloc(sizeof(ACC) * (size_t)(ocnt ? ocnt : 1));          \
				if (!mx)                                                       \
					return;                                                \
				for (int64_t j = 0; j < ocnt; j++) {                           \
					mx[j] = isinf(acc[j]) ? 0 : acc[j];                    \
					acc[j] = 0;                                            \
				}                                                              \
			}                                                                      \
			for (int64_t i = 0; i < icnt; i++) {                                   \
				ACC v = LOAD;                                                  \
				switch (kind) {                                                \
				case R_SUM:                                                    \
				case R_MEAN:                                                   \
				case R_LOGSUM: acc[o] += v; break;                             \
				case R_MAX: acc[o] = v > acc[o] ? v : acc[o]; break;           \
				case R_MIN: acc[o] = v < acc[o] ? v : acc[o]; break;           \
				case R_PROD: acc[o] *= v; break;                               \
				case R_L1: acc[o] += FABS(v); break;                           \
				case R_L2:                                                     \
				case R_SUMSQ: acc[o] += v * v; break;                          \
				default:                                                       \
					if (pass == 0)                                         \
						acc[o] = v > acc[o] ? v : acc[o];              \
					else                                                   \
						acc[o] += EXP(v - mx[o]);                      \
					break;                                                 \
				}                                                              \
				for (int d = r - 1; d >= 0; d--) {                             \
					o += ost[d];                                           \
					if (++idx[d] < dims[d])                                \
						break;                                         \
					o -= idx[d] * ost[d];                                  \
					idx[d] = 0;                                            \
				}                                                              \
			}                                                                      \
		}                                                                              \
		int64_t cnt = ocnt ? icnt / ocnt : 0;                                          \
		for (int64_t o = 0; o < ocnt; o++) {                                           \
			switch (kind) {                                                        \
			case R_MEAN: acc[o] /= (ACC)cnt; break;                                \
			case R_L2: acc[o] = SQRT(acc[o]); break;                               \
			case R_LOGSUM: acc[o] = LOG(acc[o]); break;                            \
			case R_LOGSUMEXP: acc[o] = LOG(acc[o]) + mx[o]; break;                 \
			default: break;                                                        \
			}                                                                      \
		}                                                                              \
		free(mx);                                                                      \
	}
REDUCE_FN(reduce_f32, float, ((const float *)xv)[i], sqrtf, logf, expf, fabsf)
REDUCE_FN(reduce_f64, double, loom_cpu_get_f(xv, dt, i), sqrt, log, exp, fabs)

int loom_cpu_reduce_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	int mask[LOOM_MAX_RANK], noop;
	int64_t kd[LOOM_MAX_RANK], ost[LOOM_MAX_RANK];
	if (reduce_axes(g, n, mask, &noop, err, errlen))
		return -1;
	if (noop)
		return in_bytes_copy(g, n);
	for (int d = 0; d < x->rank; d++)
		kd[d] = mask[d] ? 1 : x->dims[d];
	strides_of(x->rank, kd, ost);
	for (int d = 0; d < x->rank; d++)
		if (mask[d])
			ost[d] = 0;
	int kind = reduce_kind(n->op_type);
	int64_t ocnt = loom_tensor_numel(y), icnt = loom_tensor_numel(x);
	if (x->dtype == LOOM_DT_FLOAT) {
		reduce_f32(kind, x->data, x->dtype, y->data, x->rank, x->dims, ost, ocnt, icnt);
		return 0;
	}
	double *acc = malloc(sizeof(double) * (size_t)(ocnt ? ocnt : 1));
	if (!acc)
		return FAIL("out of memory");
	reduce_f64(kind, x->data, x->dtype, acc, x->rank, x->dims, ost, ocnt, icnt);
	for (int64_t o = 0; o < ocnt; o++)
		loom_cpu_set_f(y->data, y->dtype, o, acc[o]);
	free(acc);
	return 0;
}

/* ------------------------------------------------------------------ ArgMax, ArgMin, TopK */

int loom_cpu_argmax_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t dims[LOOM_MAX_RANK];
	int r = 0;
	if (!x || !y)
		return -1;
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", 0), x->rank);
	if (x->dims[a] == 0)
		return FAIL("axis %d is empty", a);
	int keep = loom_attr_int(n, "keepdims", 1) != 0;
	for (int d = 0; d < x->rank; d++)
		if (d != a)
			dims[r++] = x->dims[d];
		else if (keep)
			dims[r++] = 1;
	loom_cpu_set_shape(y, LOOM_DT_INT64, r, dims);
	return 0;
}

int loom_cpu_argmax_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *x = IN(0), *y = OUT(0);
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	int last = g->opset >= 12 && loom_attr_int(n, "select_last_index", 0);
	int mn = !strcmp(n->op_type, "ArgMin");
	int64_t outer = loom_cpu_prod(x->dims, 0, a), len = x->dims[a], inner = loom_cpu_prod(x->dims, a + 1, x->rank);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * len * inner + i, best = 0;
			double bv = loom_cpu_get_f(x->data, x->dtype, base);
			for (int64_t k = 1; k < len; k++) {
				double v = loom_cpu_get_f(x->data, x->dtype, base + k * inner);
				int better = mn ? (last ? v <= bv : v < bv) : (last ? v >= bv : v > bv);
				if (better) {
					bv = v;
					best = k;
				}
			}
			((int64_t *)y->data)[o * inner + i] = best;
		}
	return 0;
}

/* TopK: k an attribute before opset 10, input 1 from 10; largest and sorted
 * from 11. Ties keep the lower index first. */
static int topk_params(loom_graph *g, const loom_node *n, int *axis, int64_t *k, char *err,
		       size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	if (!x)
		return -1;
	int a = loom_cpu_axis(loom_attr_int(n, "axis", -1), x->rank);
	if (a < 0)
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", -1), x->rank);
	if (g->opset < 10) {
		if (!loom_node_attr(n, "k"))
			return FAIL("attribute k missing");
		*k = loom_attr_int(n, "k", 0);
	} else {
		int cnt;
		if (in_ints(g, n, 1, "K", k, 1, &cnt, err, errlen))
			return -1;
		if (cnt != 1)
			return FAIL("K must hold one value");
	}
	if (*k < 0 || *k > x->dims[a])
		return FAIL("k = %lld out of range for axis %d of size %lld", (long long)*k, a,
			    (long long)x->dims[a]);
	*axis = a;
	return 0;
}

int loom_cpu_topk_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *v = need_out(g, n, 0, err, errlen), *ix = need_out(g, n, 1, err, errlen);
	int a;
	int64_t k;
	if (!v || !ix || topk_params(g, n, &a, &k, err, errlen))
		return -1;
	loom_tensor *x = IN(0);
	set_like(v, x);
	v->dims[a] = k;
	loom_cpu_set_shape(ix, LOOM_DT_INT64, v->rank, v->dims);
	return 0;
}

struct topk_el {
	double v;
	int64_t i;
};

static int topk_cmp_large(const void *pa, const void *pb)
{
	const struct topk_el *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int topk_cmp_small(const void *pa, const void *pb)
{
	const struct topk_el *a = pa, *b = pb;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

int loom_cpu_topk_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int a;
	int64_t k;
	if (topk_params(g, n, &a, &k, err, errlen))
		return -1;
	loom_tensor *x = IN(0), *v = OUT(0), *ix = OUT(1);
	int largest = g->opset < 11 || loom_attr_int(n, "largest", 1);
	size_t es = loom_dtype_size(x->dtype);
	int64_t outer = loom_cpu_prod(x->dims, 0, a), len = x->dims[a], inner = loom_cpu_prod(x->dims, a + 1, x->rank);
	struct topk_el *el = malloc(sizeof *el * (size_t)(len ? len : 1));
	if (!el)
		return FAIL("out of memory");
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * len * inner + i, obase = o * k * inner + i;
			for (int64_t j = 0; j < len; j++) {
				el[j].v = loom_cpu_get_f(x->data, x->dtype, base + j * inner);
				el[j].i = j;
			}
			qsort(el, (size_t)len, sizeof *el, largest ? topk_cmp_large : topk_cmp_small);
			for (int64_t j = 0; j < k; j++) {
				copy_el((char *)v->data + (obase + j * inner) * (int64_t)es,
					(const char *)x->data + (base + el[j].i * inner) * (int64_t)es,
					es);
				((int64_t *)ix->data)[obase + j * inner] = el[j].i;
			}
		}
	free(el);
	return 0;
}
