/* ops_shape.c - Loom's CPU kernels for data movement and shape operators,
 * reductions, Softmax/LogSoftmax/Hardmax, Resize/Upsample, Cast and
 * friends (their rows are in runtime/ops.def).
 *
 * Every operator covers opsets 7 to 17 (and older ones where nothing
 * differs): where ONNX moved an attribute to an input (Reshape's shape,
 * Squeeze/Unsqueeze/Split/ReduceSum axes, Slice's starts/ends/axes/steps,
 * Pad's pads, TopK's k, Upsample's scales) or changed the semantics
 * (Softmax's axis at 13, Shape's start/end at 15) the kernel reads
 * g->opset. Data movement is dtype-generic: elements are copied by their
 * size, so int64 shape tensors and int8 data take the same path as float.
 *
 * Values that decide an output shape (Reshape's shape, Slice's starts,
 * Resize's scales, ...) must be known when infer() runs (tensor->data
 * set), otherwise infer() fails naming the input. Shape and Size compute
 * their values in infer() already and mark the output constant, so the
 * executor folds the shape arithmetic that usually follows them.
 *
 * Element access, axes, shapes, broadcasting and the error message
 * ("node 'NAME' (OP, opset N): problem") come from cpu_internal.h.
 * No global state. */
#include "runtime/cpu_ops.h"
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

#define MAXV (2 * LOOM_MAX_RANK) /* the longest int list read here (Pad's pads) */

#define IN(i) loom_node_in(g, n, (i))
#define OUT(i) loom_node_out(g, n, (i))
#define ERR(...) loom_cpu_fail(g, n, err, errlen, __VA_ARGS__)

static void set_like(loom_tensor *t, const loom_tensor *src)
{
	loom_cpu_set_shape(t, src->dtype, src->rank, src->dims);
}

static int is_index(int dt)
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
static void strided_copy(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
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
static void strides_of(int rank, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Advance a row-major multi-index; 0 once it wrapped around. */
static int next_index(int rank, const int64_t *dims, int64_t *idx)
{
	for (int d = rank - 1; d >= 0; d--) {
		if (++idx[d] < dims[d])
			return 1;
		idx[d] = 0;
	}
	return 0;
}

/* Input i, which must be present and have a known dtype. */
static loom_tensor *need_in(loom_graph *g, const loom_node *n, int i, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	if (!t) {
		ERR("input %d is missing", i);
		return NULL;
	}
	if (!loom_dtype_size(t->dtype)) {
		ERR("input %d '%s' has data type %s, not supported", i, t->name,
		    loom_dtype_name(t->dtype));
		return NULL;
	}
	return t;
}

static loom_tensor *need_out(loom_graph *g, const loom_node *n, int i, char *err, size_t errlen)
{
	loom_tensor *t = OUT(i);
	if (!t)
		ERR("output %d is missing", i);
	return t;
}

/* The values of integer input i, which must be known (a constant, or
 * computed while inferring). *count = its element count; at most maxn. A
 * missing optional input gives count -1. */
static int in_ints(loom_graph *g, const loom_node *n, int i, const char *what, int64_t *v,
		   int maxn, int *count, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	*count = -1;
	if (!t)
		return 0;
	if (!is_index(t->dtype) && t->dtype != LOOM_DT_INT16 && t->dtype != LOOM_DT_INT8)
		return ERR("%s input '%s' has data type %s, expected int64 or int32", what, t->name,
			   loom_dtype_name(t->dtype));
	int64_t cnt = loom_tensor_numel(t);
	if (cnt < 0 || cnt > maxn)
		return ERR("%s input '%s' has %lld values, at most %d supported", what, t->name,
			   (long long)cnt, maxn);
	if (cnt && !t->data)
		return ERR("%s input '%s' is not a constant (its values decide the output shape)",
			   what, t->name);
	for (int64_t k = 0; k < cnt; k++)
		v[k] = loom_cpu_get_i(t->data, t->dtype, k);
	*count = (int)cnt;
	return 0;
}

/* Same for a float/double input (scales, roi). */
static int in_floats(loom_graph *g, const loom_node *n, int i, const char *what, double *v,
		     int maxn, int *count, char *err, size_t errlen)
{
	loom_tensor *t = IN(i);
	*count = -1;
	if (!t)
		return 0;
	if (!loom_cpu_is_float(t->dtype))
		return ERR("%s input '%s' has data type %s, expected float", what, t->name,
			   loom_dtype_name(t->dtype));
	int64_t cnt = loom_tensor_numel(t);
	if (cnt < 0 || cnt > maxn)
		return ERR("%s input '%s' has %lld values, at most %d supported", what, t->name,
			   (long long)cnt, maxn);
	if (cnt && !t->data)
		return ERR("%s input '%s' is not a constant (its values decide the output shape)",
			   what, t->name);
	for (int64_t k = 0; k < cnt; k++)
		v[k] = loom_cpu_get_f(t->data, t->dtype, k);
	*count = (int)cnt;
	return 0;
}

/* An INTS attribute copied into v (at most maxn); count -1 when absent. */
static int attr_ints(loom_graph *g, const loom_node *n, const char *name, int64_t *v, int maxn,
		     int *count, char *err, size_t errlen)
{
	int c = 0;
	const int64_t *a = loom_attr_ints(n, name, &c);
	*count = -1;
	if (!loom_node_attr(n, name))
		return 0;
	if (c > maxn)
		return ERR("attribute %s has %d values, at most %d supported", name, c, maxn);
	if (c)
		memcpy(v, a, (size_t)c * sizeof *v);
	*count = c;
	return 0;
}

/* Axes (of a rank-r tensor) into a mask; duplicates and out-of-range axes fail. */
static int axes_mask(loom_graph *g, const loom_node *n, const int64_t *axes, int cnt, int r,
		     int *mask, char *err, size_t errlen)
{
	memset(mask, 0, sizeof(int) * LOOM_MAX_RANK);
	for (int i = 0; i < cnt; i++) {
		int a = loom_cpu_axis(axes[i], r);
		if (a < 0)
			return ERR("axis %lld out of range for rank %d", (long long)axes[i], r);
		if (mask[a])
			return ERR("axis %lld repeated", (long long)axes[i]);
		mask[a] = 1;
	}
	return 0;
}

static int in_bytes_copy(loom_graph *g, const loom_node *n)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	size_t b = loom_tensor_bytes(y);
	if (b && x->data != y->data)
		memcpy(y->data, x->data, b);
	return 0;
}

/* run() of the operators whose output is their input's data (Reshape, ...) */
int loom_cpu_copy_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return in_bytes_copy(g, n);
}

/* ------------------------------------------------------------------ Reshape, Flatten, Squeeze, Unsqueeze */

/* Reshape: shape attribute before opset 5, input from 5; 0 copies the input
 * dim (unless allowzero, opset 14), -1 is inferred. */
int loom_cpu_reshape_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t s[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	int cnt;
	if (!x || !y)
		return -1;
	if (g->opset < 5) {
		if (attr_ints(g, n, "shape", s, LOOM_MAX_RANK, &cnt, err, errlen))
			return -1;
	} else if (in_ints(g, n, 1, "shape", s, LOOM_MAX_RANK, &cnt, err, errlen)) {
		return -1;
	}
	if (cnt < 0)
		return ERR("no shape given");
	int allowzero = g->opset >= 14 ? (int)loom_attr_int(n, "allowzero", 0) : 0;
	int neg = -1, haszero = 0;
	int64_t known = 1, total = loom_tensor_numel(x);
	for (int i = 0; i < cnt; i++) {
		if (s[i] == -1) {
			if (neg >= 0)
				return ERR("shape has more than one -1");
			neg = i;
			dims[i] = 1;
			continue;
		}
		if (s[i] < -1)
			return ERR("shape[%d] = %lld is invalid", i, (long long)s[i]);
		if (s[i] == 0 && !allowzero) {
			if (i >= x->rank)
				return ERR("shape[%d] = 0 copies a dim the rank-%d input does not have", i,
					   x->rank);
			dims[i] = x->dims[i];
		} else {
			dims[i] = s[i];
		}
		if (dims[i] == 0)
			haszero = 1;
		known *= dims[i];
	}
	if (neg >= 0) {
		if (allowzero && haszero)
			return ERR("shape has both -1 and 0 with allowzero");
		if (known == 0 || total % known)
			return ERR("cannot infer the -1 dim: %lld elements into blocks of %lld",
				   (long long)total, (long long)known);
		dims[neg] = total / known;
		known *= dims[neg];
	}
	if (known != total)
		return ERR("cannot reshape %lld elements into %lld", (long long)total, (long long)known);
	loom_cpu_set_shape(y, x->dtype, cnt, dims);
	return 0;
}

int loom_cpu_flatten_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	if (!x || !y)
		return -1;
	int64_t a = loom_attr_int(n, "axis", 1);
	if (a < -x->rank || a > x->rank)
		return ERR("axis %lld out of range for rank %d", (long long)a, x->rank);
	if (a < 0)
		a += x->rank;
	int64_t dims[2] = {loom_cpu_prod(x->dims, 0, (int)a), loom_cpu_prod(x->dims, (int)a, x->rank)};
	loom_cpu_set_shape(y, x->dtype, 2, dims);
	return 0;
}

/* Squeeze: axes an attribute before opset 13, an optional input from 13;
 * none = every dim of size 1. */
int loom_cpu_squeeze_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t axes[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	int cnt, mask[LOOM_MAX_RANK], r = 0;
	if (!x || !y)
		return -1;
	if (g->opset >= 13 ? in_ints(g, n, 1, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen)
			   : attr_ints(g, n, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	if (cnt <= 0) {
		for (int i = 0; i < x->rank; i++)
			mask[i] = x->dims[i] == 1;
	} else {
		if (axes_mask(g, n, axes, cnt, x->rank, mask, err, errlen))
			return -1;
		for (int i = 0; i < x->rank; i++)
			if (mask[i] && x->dims[i] != 1)
				return ERR("cannot squeeze axis %d of size %lld", i,
					   (long long)x->dims[i]);
	}
	for (int i = 0; i < x->rank; i++)
		if (!mask[i])
			dims[r++] = x->dims[i];
	loom_cpu_set_shape(y, x->dtype, r, dims);
	return 0;
}

/* Unsqueeze: axes (of the output) an attribute before opset 13, an input from 13. */
int loom_cpu_unsqueeze_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t axes[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	int cnt, mask[LOOM_MAX_RANK];
	if (!x || !y)
		return -1;
	if (g->opset >= 13 ? in_ints(g, n, 1, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen)
			   : attr_ints(g, n, "axes", axes, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	if (cnt <= 0)
		return ERR("axes missing or empty");
	int r = x->rank + cnt;
	if (r > LOOM_MAX_RANK)
		return ERR("output rank %d exceeds %d", r, LOOM_MAX_RANK);
	if (axes_mask(g, n, axes, cnt, r, mask, err, errlen))
		return -1;
	for (int i = 0, j = 0; i < r; i++)
		dims[i] = mask[i] ? 1 : x->dims[j++];
	loom_cpu_set_shape(y, x->dtype, r, dims);
	return 0;
}

/* ------------------------------------------------------------------ Transpose */

static int get_perm(loom_graph *g, const loom_node *n, int r, int *perm, char *err, size_t errlen)
{
	int64_t p[LOOM_MAX_RANK];
	int cnt, seen[LOOM_MAX_RANK] = {0};
	if (attr_ints(g, n, "perm", p, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	if (cnt < 0) {
		for (int i = 0; i < r; i++)
			perm[i] = r - 1 - i;
		return 0;
	}
	if (cnt != r)
		return ERR("perm has %d entries for rank %d", cnt, r);
	for (int i = 0; i < r; i++) {
		if (p[i] < 0 || p[i] >= r || seen[p[i]])
			return ERR("perm is not a permutation of 0..%d", r - 1);
		seen[p[i]] = 1;
		perm[i] = (int)p[i];
	}
	return 0;
}

int loom_cpu_transpose_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int perm[LOOM_MAX_RANK];
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !y || get_perm(g, n, x->rank, perm, err, errlen))
		return -1;
	for (int i = 0; i < x->rank; i++)
		dims[i] = x->dims[perm[i]];
	loom_cpu_set_shape(y, x->dtype, x->rank, dims);
	return 0;
}

int loom_cpu_transpose_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	int perm[LOOM_MAX_RANK];
	int64_t st[LOOM_MAX_RANK], ost[LOOM_MAX_RANK];
	if (get_perm(g, n, x->rank, perm, err, errlen))
		return -1;
	strides_of(x->rank, x->dims, st);
	for (int i = 0; i < x->rank; i++)
		ost[i] = st[perm[i]];
	strided_copy(y->data, x->data, loom_dtype_size(x->dtype), y->rank, y->dims, ost, 0);
	return 0;
}

/* ------------------------------------------------------------------ Concat, Split */

int loom_cpu_concat_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = need_out(g, n, 0, err, errlen), *x0 = need_in(g, n, 0, err, errlen);
	if (!x0 || !y)
		return -1;
	int64_t dims[LOOM_MAX_RANK];
	int r = x0->rank;
	int a = loom_cpu_axis(loom_attr_int(n, "axis", g->opset < 4 ? 1 : 0), r);
	if (a < 0)
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", 0), r);
	memcpy(dims, x0->dims, sizeof dims);
	dims[a] = 0;
	for (int i = 0; i < n->ninputs; i++) {
		loom_tensor *x = need_in(g, n, i, err, errlen);
		if (!x)
			return -1;
		if (x->dtype != x0->dtype)
			return ERR("input %d is %s, input 0 %s", i, loom_dtype_name(x->dtype),
				   loom_dtype_name(x0->dtype));
		if (x->rank != r)
			return ERR("input %d has rank %d, input 0 rank %d", i, x->rank, r);
		for (int d = 0; d < r; d++)
			if (d != a && x->dims[d] != x0->dims[d])
				return ERR("input %d: dim %d is %lld, input 0 has %lld", i, d,
					   (long long)x->dims[d], (long long)x0->dims[d]);
		dims[a] += x->dims[a];
	}
	loom_cpu_set_shape(y, x0->dtype, r, dims);
	return 0;
}

int loom_cpu_concat_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *y = OUT(0);
	int r = y->rank;
	int a = loom_cpu_axis(loom_attr_int(n, "axis", g->opset < 4 ? 1 : 0), r);
	size_t es = loom_dtype_size(y->dtype);
	int64_t outer = loom_cpu_prod(y->dims, 0, a), inner = loom_cpu_prod(y->dims, a + 1, r) * (int64_t)es;
	int64_t orow = y->dims[a] * inner, pos = 0;
	for (int i = 0; i < n->ninputs; i++) {
		loom_tensor *x = IN(i);
		int64_t row = x->dims[a] * inner;
		if (row)
			for (int64_t o = 0; o < outer; o++)
				memcpy((char *)y->data + o * orow + pos, (const char *)x->data + o * row,
				       (size_t)row);
		pos += row;
	}
	return 0;
}

/* The sizes of Split's outputs along the axis: the split attribute (before
 * opset 13) or input (from 13), else equal parts (num_outputs, opset 18,
 * allows a smaller last part). */
static int split_sizes(loom_graph *g, const loom_node *n, int *axis, int64_t *sz, char *err,
		       size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	if (!x)
		return -1;
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", 0), x->rank);
	int no = n->noutputs, cnt;
	if (g->opset >= 13) {
		loom_tensor *s = IN(1);
		int64_t c = s ? loom_tensor_numel(s) : -1;
		if (s && c != no && c != 0)
			return ERR("split input has %lld values for %d outputs", (long long)c, no);
		if (in_ints(g, n, 1, "split", sz, no, &cnt, err, errlen))
			return -1;
	} else {
		int c = 0;
		const int64_t *v = loom_attr_ints(n, "split", &c);
		cnt = -1;
		if (loom_node_attr(n, "split")) {
			if (c != no)
				return ERR("split attribute has %d values for %d outputs", c, no);
			memcpy(sz, v, (size_t)c * sizeof *sz);
			cnt = c;
		}
	}
	int64_t d = x->dims[a], tot = 0;
	if (cnt <= 0) {
		if (no < 1)
			return ERR("no outputs");
		if (d % no && g->opset < 18)
			return ERR("dim %d of size %lld does not split into %d equal parts", a,
				   (long long)d, no);
		int64_t part = (d + no - 1) / no;
		for (int i = 0; i < no; i++) {
			sz[i] = d - tot < part ? d - tot : part;
			tot += sz[i];
		}
	} else {
		for (int i = 0; i < no; i++) {
			if (sz[i] < 0)
				return ERR("split[%d] = %lld is negative", i, (long long)sz[i]);
			tot += sz[i];
		}
		if (tot != d)
			return ERR("split sizes add up to %lld, dim %d has %lld", (long long)tot, a,
				   (long long)d);
	}
	*axis = a;
	return 0;
}

int loom_cpu_split_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int a;
	int64_t *sz = malloc(sizeof(int64_t) * (size_t)(n->noutputs + 1));
	if (!sz)
		return ERR("out of memory");
	if (split_sizes(g, n, &a, sz, err, errlen)) {
		free(sz);
		return -1;
	}
	loom_tensor *x = IN(0);
	for (int i = 0; i < n->noutputs; i++) {
		loom_tensor *y = OUT(i);
		if (!y)
			continue;
		set_like(y, x);
		y->dims[a] = sz[i];
	}
	free(sz);
	return 0;
}

int loom_cpu_split_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int a;
	int64_t *sz = malloc(sizeof(int64_t) * (size_t)(n->noutputs + 1));
	if (!sz)
		return ERR("out of memory");
	if (split_sizes(g, n, &a, sz, err, errlen)) {
		free(sz);
		return -1;
	}
	loom_tensor *x = IN(0);
	size_t es = loom_dtype_size(x->dtype);
	int64_t outer = loom_cpu_prod(x->dims, 0, a), inner = loom_cpu_prod(x->dims, a + 1, x->rank) * (int64_t)es;
	int64_t irow = x->dims[a] * inner, pos = 0;
	for (int i = 0; i < n->noutputs; i++) {
		loom_tensor *y = OUT(i);
		int64_t row = sz[i] * inner;
		if (y && row)
			for (int64_t o = 0; o < outer; o++)
				memcpy((char *)y->data + o * row, (const char *)x->data + o * irow + pos,
				       (size_t)row);
		pos += row;
	}
	free(sz);
	return 0;
}

/* ------------------------------------------------------------------ Slice */

/* Per-dim start and step of a Slice (starts/ends/axes attributes before
 * opset 10, inputs starts, ends, axes, steps from 10), the output dims. */
static int slice_params(loom_graph *g, const loom_node *n, int64_t *start, int64_t *step,
			int64_t *odims, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	int64_t st[LOOM_MAX_RANK], en[LOOM_MAX_RANK], ax[LOOM_MAX_RANK], sp[LOOM_MAX_RANK];
	int ns, ne, na, np, mask[LOOM_MAX_RANK];
	if (!x)
		return -1;
	int r = x->rank;
	if (g->opset < 10) {
		if (attr_ints(g, n, "starts", st, LOOM_MAX_RANK, &ns, err, errlen) ||
		    attr_ints(g, n, "ends", en, LOOM_MAX_RANK, &ne, err, errlen) ||
		    attr_ints(g, n, "axes", ax, LOOM_MAX_RANK, &na, err, errlen))
			return -1;
		np = -1;
	} else {
		if (in_ints(g, n, 1, "starts", st, LOOM_MAX_RANK, &ns, err, errlen) ||
		    in_ints(g, n, 2, "ends", en, LOOM_MAX_RANK, &ne, err, errlen) ||
		    in_ints(g, n, 3, "axes", ax, LOOM_MAX_RANK, &na, err, errlen) ||
		    in_ints(g, n, 4, "steps", sp, LOOM_MAX_RANK, &np, err, errlen))
			return -1;
	}
	if (ns < 0 || ne < 0)
		return ERR("starts and ends are required");
	if (ns != ne)
		return ERR("%d starts but %d ends", ns, ne);
	if (na < 0)
		for (na = 0; na < ns; na++)
			ax[na] = na;
	if (na != ns)
		return ERR("%d axes for %d starts", na, ns);
	if (np >= 0 && np != ns)
		return ERR("%d steps for %d starts", np, ns);
	if (axes_mask(g, n, ax, na, r, mask, err, errlen))
		return -1;
	for (int d = 0; d < r; d++) {
		start[d] = 0;
		step[d] = 1;
		odims[d] = x->dims[d];
	}
	for (int i = 0; i < ns; i++) {
		int d = loom_cpu_axis(ax[i], r);
		int64_t dim = x->dims[d], s = st[i], e = en[i], k = np >= 0 ? sp[i] : 1;
		if (k == 0)
			return ERR("step of axis %d is 0", d);
		if (s < 0)
			s += dim;
		if (e < 0)
			e += dim;
		if (k > 0) {
			s = s < 0 ? 0 : s > dim ? dim : s;
			e = e < 0 ? 0 : e > dim ? dim : e;
			odims[d] = e > s ? (e - s + k - 1) / k : 0;
		} else {
			s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
			e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
			odims[d] = s > e ? (s - e - k - 1) / -k : 0;
		}
		start[d] = odims[d] ? s : 0;
		step[d] = k;
	}
	return 0;
}

int loom_cpu_slice_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int64_t start[LOOM_MAX_RANK], step[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	if (!y || slice_params(g, n, start, step, dims, err, errlen))
		return -1;
	loom_cpu_set_shape(y, IN(0)->dtype, IN(0)->rank, dims);
	return 0;
}

int loom_cpu_slice_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int64_t start[LOOM_MAX_RANK], step[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	int64_t st[LOOM_MAX_RANK], ost[LOOM_MAX_RANK], off = 0;
	if (slice_params(g, n, start, step, dims, err, errlen))
		return -1;
	loom_tensor *x = IN(0), *y = OUT(0);
	strides_of(x->rank, x->dims, st);
	for (int d = 0; d < x->rank; d++) {
		ost[d] = st[d] * step[d];
		off += start[d] * st[d];
	}
	strided_copy(y->data, x->data, loom_dtype_size(x->dtype), y->rank, y->dims, ost, off);
	return 0;
}

/* ------------------------------------------------------------------ Gather, GatherElements, GatherND */

int loom_cpu_gather_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *ix = need_in(g, n, 1, err, errlen);
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !ix || !y)
		return -1;
	if (!is_index(ix->dtype))
		return ERR("indices are %s, expected int32 or int64", loom_dtype_name(ix->dtype));
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", 0), x->rank);
	int r = x->rank - 1 + ix->rank, k = 0;
	if (r > LOOM_MAX_RANK)
		return ERR("output rank %d exceeds %d", r, LOOM_MAX_RANK);
	for (int i = 0; i < a; i++)
		dims[k++] = x->dims[i];
	for (int i = 0; i < ix->rank; i++)
		dims[k++] = ix->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		dims[k++] = x->dims[i];
	loom_cpu_set_shape(y, x->dtype, r, dims);
	return 0;
}

int loom_cpu_gather_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *ix = IN(1), *y = OUT(0);
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	size_t es = loom_dtype_size(x->dtype);
	int64_t outer = loom_cpu_prod(x->dims, 0, a), inner = loom_cpu_prod(x->dims, a + 1, x->rank) * (int64_t)es;
	int64_t dim = x->dims[a], ni = loom_tensor_numel(ix);
	if (!loom_tensor_numel(y))
		return 0; /* no data buffer to write (indices are not checked) */
	for (int64_t j = 0; j < ni; j++) {
		int64_t k = loom_cpu_get_i(ix->data, ix->dtype, j);
		if (k < -dim || k >= dim)
			return ERR("index %lld out of range for axis %d of size %lld", (long long)k, a,
				   (long long)dim);
		if (k < 0)
			k += dim;
		for (int64_t o = 0; o < outer; o++)
			memcpy((char *)y->data + (o * ni + j) * inner,
			       (const char *)x->data + (o * dim + k) * inner, (size_t)inner);
	}
	return 0;
}

int loom_cpu_gather_elements_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *ix = need_in(g, n, 1, err, errlen);
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	if (!x || !ix || !y)
		return -1;
	if (!is_index(ix->dtype))
		return ERR("indices are %s, expected int32 or int64", loom_dtype_name(ix->dtype));
	if (ix->rank != x->rank || x->rank < 1)
		return ERR("indices have rank %d, data rank %d (must be equal and >= 1)", ix->rank,
			   x->rank);
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", 0), x->rank);
	for (int d = 0; d < x->rank; d++)
		if (d != a && ix->dims[d] > x->dims[d])
			return ERR("indices dim %d (%lld) exceeds the data's (%lld)", d,
				   (long long)ix->dims[d], (long long)x->dims[d]);
	loom_cpu_set_shape(y, x->dtype, ix->rank, ix->dims);
	return 0;
}

int loom_cpu_gather_elements_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *ix = IN(1), *y = OUT(0);
	int r = x->rank, a = loom_cpu_axis(loom_attr_int(n, "axis", 0), r);
	size_t es = loom_dtype_size(x->dtype);
	int64_t st[LOOM_MAX_RANK], idx[LOOM_MAX_RANK] = {0}, cnt = loom_tensor_numel(ix);
	int64_t dim = x->dims[a];
	strides_of(r, x->dims, st);
	for (int64_t j = 0; j < cnt; j++, next_index(r, ix->dims, idx)) {
		int64_t k = loom_cpu_get_i(ix->data, ix->dtype, j), off = 0;
		if (k < -dim || k >= dim)
			return ERR("index %lld out of range for axis %d of size %lld", (long long)k, a,
				   (long long)dim);
		if (k < 0)
			k += dim;
		for (int d = 0; d < r; d++)
			off += (d == a ? k : idx[d]) * st[d];
		copy_el((char *)y->data + j * (int64_t)es, (const char *)x->data + off * (int64_t)es,
			es);
	}
	return 0;
}

/* GatherND (opset 11, batch_dims from 12) */
int loom_cpu_gather_nd_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *ix = need_in(g, n, 1, err, errlen);
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !ix || !y)
		return -1;
	if (ix->dtype != LOOM_DT_INT64)
		return ERR("indices are %s, expected int64", loom_dtype_name(ix->dtype));
	int64_t b = loom_attr_int(n, "batch_dims", 0);
	int q = ix->rank, r = x->rank;
	if (q < 1 || r < 1)
		return ERR("data and indices need rank >= 1");
	if (b < 0 || b >= q || b >= r)
		return ERR("batch_dims %lld out of range", (long long)b);
	int64_t k = ix->dims[q - 1];
	if (k < 1 || k > r - b)
		return ERR("last indices dim %lld out of range 1..%lld", (long long)k,
			   (long long)(r - b));
	for (int i = 0; i < b; i++)
		if (x->dims[i] != ix->dims[i])
			return ERR("batch dim %d differs: %lld vs %lld", i, (long long)x->dims[i],
				   (long long)ix->dims[i]);
	int orank = q - 1 + r - (int)b - (int)k, m = 0;
	if (orank > LOOM_MAX_RANK)
		return ERR("output rank %d exceeds %d", orank, LOOM_MAX_RANK);
	for (int i = 0; i < q - 1; i++)
		dims[m++] = ix->dims[i];
	for (int i = (int)(b + k); i < r; i++)
		dims[m++] = x->dims[i];
	loom_cpu_set_shape(y, x->dtype, orank, dims);
	return 0;
}

int loom_cpu_gather_nd_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *ix = IN(1), *y = OUT(0);
	int b = (int)loom_attr_int(n, "batch_dims", 0), q = ix->rank, r = x->rank;
	int k = (int)ix->dims[q - 1];
	size_t es = loom_dtype_size(x->dtype);
	int64_t st[LOOM_MAX_RANK];
	strides_of(r, x->dims, st);
	int64_t nb = loom_cpu_prod(x->dims, 0, b), per = loom_cpu_prod(ix->dims, b, q - 1);
	int64_t slice = loom_cpu_prod(x->dims, b + k, r) * (int64_t)es, bstride = b ? st[b - 1] : 0;
	const int64_t *iv = ix->data;
	if (!loom_tensor_numel(y))
		return 0;
	for (int64_t bi = 0; bi < nb; bi++)
		for (int64_t j = 0; j < per; j++) {
			const int64_t *t = iv + (bi * per + j) * k;
			int64_t off = bi * bstride;
			for (int i = 0; i < k; i++) {
				int64_t v = t[i], dim = x->dims[b + i];
				if (v < -dim || v >= dim)
					return ERR("index %lld out of range for dim %d of size %lld",
						   (long long)v, b + i, (long long)dim);
				off += (v < 0 ? v + dim : v) * st[b + i];
			}
			memcpy((char *)y->data + (bi * per + j) * slice,
			       (const char *)x->data + off * (int64_t)es, (size_t)slice);
		}
	return 0;
}

/* ------------------------------------------------------------------ Pad */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/* pads (begin of every dim, then end), mode and the constant as one element
 * of the data's type: attributes pads/value before opset 11, inputs pads,
 * constant_value (and axes, opset 18) from 11. */
static int pad_params(loom_graph *g, const loom_node *n, int64_t *pads, int *mode, void *cval,
		      char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	int64_t p[MAXV], ax[LOOM_MAX_RANK];
	int np, na = -1;
	if (!x)
		return -1;
	int r = x->rank;
	const char *m = loom_attr_str(n, "mode", "constant");
	if (!strcmp(m, "constant"))
		*mode = PAD_CONSTANT;
	else if (!strcmp(m, "reflect"))
		*mode = PAD_REFLECT;
	else if (!strcmp(m, "edge"))
		*mode = PAD_EDGE;
	else if (!strcmp(m, "wrap"))
		*mode = PAD_WRAP;
	else
		return ERR("mode '%s' not supported", m);
	memset(cval, 0, 8);
	if (g->opset < 11) {
		if (attr_ints(g, n, "pads", p, MAXV, &np, err, errlen))
			return -1;
		loom_cpu_set_f(cval, x->dtype, 0, loom_attr_float(n, "value", 0.0f));
	} else {
		if (in_ints(g, n, 1, "pads", p, MAXV, &np, err, errlen) ||
		    in_ints(g, n, 3, "axes", ax, LOOM_MAX_RANK, &na, err, errlen))
			return -1;
		loom_tensor *c = IN(2);
		if (c && loom_tensor_numel(c) > 0 && c->data) {
			if (c->dtype == x->dtype)
				memcpy(cval, c->data, loom_dtype_size(c->dtype));
			else
				loom_cpu_set_f(cval, x->dtype, 0, loom_cpu_get_f(c->data, c->dtype, 0));
		}
	}
	if (np < 0)
		return ERR("pads missing");
	if (na >= 0) {
		int mask[LOOM_MAX_RANK];
		if (np != 2 * na)
			return ERR("%d pads for %d axes", np, na);
		if (axes_mask(g, n, ax, na, r, mask, err, errlen))
			return -1;
		memset(pads, 0, sizeof(int64_t) * 2 * (size_t)r);
		for (int i = 0; i < na; i++) {
			int d = loom_cpu_axis(ax[i], r);
			pads[d] = p[i];
			pads[r + d] = p[na + i];
		}
	} else {
		if (np != 2 * r)
			return ERR("%d pads for rank %d (expected %d)", np, r, 2 * r);
		memcpy(pads, p, sizeof(int64_t) * 2 * (size_t)r);
	}
	for (int d = 0; d < r; d++) {
		if (x->dims[d] + pads[d] + pads[r + d] < 0)
			return ERR("pads %lld, %lld on dim %d of size %lld leave a negative size",
				   (long long)pads[d], (long long)pads[r + d], d, (long long)x->dims[d]);
		if (*mode != PAD_CONSTANT && x->dims[d] == 0 && (pads[d] > 0 || pads[r + d] > 0))
			return ERR("mode '%s' cannot pad the empty dim %d", m, d);
	}
	return 0;
}

int loom_cpu_pad_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int64_t pads[MAXV], dims[LOOM_MAX_RANK];
	int mode;
	char cval[8];
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	if (!y || pad_params(g, n, pads, &mode, cval, err, errlen))
		return -1;
	loom_tensor *x = IN(0);
	for (int d = 0; d < x->rank; d++)
		dims[d] = x->dims[d] + pads[d] + pads[x->rank + d];
	loom_cpu_set_shape(y, x->dtype, x->rank, dims);
	return 0;
}

int loom_cpu_pad_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int64_t pads[MAXV], st[LOOM_MAX_RANK], idx[LOOM_MAX_RANK] = {0};
	int mode;
	char cval[8];
	if (pad_params(g, n, pads, &mode, cval, err, errlen))
		return -1;
	loom_tensor *x = IN(0), *y = OUT(0);
	int r = x->rank;
	size_t es = loom_dtype_size(x->dtype);
	int64_t cnt = loom_tensor_numel(y);
	strides_of(r, x->dims, st);
	char *o = y->data;
	for (int64_t j = 0; j < cnt; j++, next_index(r, y->dims, idx), o += es) {
		int64_t off = 0;
		int outside = 0;
		for (int d = 0; d < r && !outside; d++) {
			int64_t i = idx[d] - pads[d], dim = x->dims[d];
			if (i < 0 || i >= dim) {
				switch (mode) {
				case PAD_CONSTANT: outside = 1; break;
				case PAD_EDGE: i = i < 0 ? 0 : dim - 1; break;
				case PAD_WRAP: i = ((i % dim) + dim) % dim; break;
				default:
					if (dim == 1) {
						i = 0;
						break;
					}
					while (i < 0 || i >= dim)
						i = i < 0 ? -i : 2 * (dim - 1) - i;
					break;
				}
			}
			off += i * st[d];
		}
		copy_el(o, outside ? cval : (const char *)x->data + off * (int64_t)es, es);
	}
	return 0;
}

/* ------------------------------------------------------------------ Tile, Expand */

int loom_cpu_tile_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int64_t rep[LOOM_MAX_RANK], dims[LOOM_MAX_RANK];
	int cnt;
	if (!x || !y || in_ints(g, n, 1, "repeats", rep, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	if (cnt != x->rank)
		return ERR("%d repeats for rank %d", cnt, x->rank);
	for (int d = 0; d < x->rank; d++) {
		if (rep[d] < 0)
			return ERR("repeats[%d] = %lld is negative", d, (long long)rep[d]);
		dims[d] = x->dims[d] * rep[d];
	}
	loom_cpu_set_shape(y, x->dtype, x->rank, dims);
	return 0;
}

int loom_cpu_tile_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *x = IN(0), *y = OUT(0);
	int64_t st[LOOM_MAX_RANK], vd[2 * LOOM_MAX_RANK], vs[2 * LOOM_MAX_RANK];
	strides_of(x->rank, x->dims, st);
	for (int d = 0; d < x->rank; d++) {
		vd[2 * d] = x->dims[d] ? y->dims[d] / x->dims[d] : 0;
		vs[2 * d] = 0;
		vd[2 * d + 1] = x->dims[d];
		vs[2 * d + 1] = st[d];
	}
	strided_copy(y->data, x->data, loom_dtype_size(x->dtype), 2 * x->rank, vd, vs, 0);
	return 0;
}

int loom_cpu_expand_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	loom_tensor s;
	int cnt, r;
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !y)
		return -1;
	memset(&s, 0, sizeof s);
	if (in_ints(g, n, 1, "shape", s.dims, LOOM_MAX_RANK, &cnt, err, errlen))
		return -1;
	if (cnt < 0)
		return ERR("shape input missing");
	s.rank = cnt;
	for (int i = 0; i < cnt; i++)
		if (s.dims[i] < 0)
			return ERR("shape[%d] = %lld is negative", i, (long long)s.dims[i]);
	const loom_tensor *t[2] = {x, &s};
	if (loom_cpu_bcast_shape(2, t, &r, dims))
		return ERR("input shape does not broadcast with the requested shape");
	loom_cpu_set_shape(y, x->dtype, r, dims);
	return 0;
}

int loom_cpu_expand_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = OUT(0);
	const loom_tensor *t[1] = {x};
	loom_cpu_bcast it;
	size_t es = loom_dtype_size(x->dtype);
	if (loom_cpu_bcast_init(&it, 1, t, y->rank, y->dims))
		return ERR("input does not broadcast to the output shape");
	for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it))
		copy_el((char *)y->data + i * (int64_t)es, (const char *)x->data + it.off[0] * (int64_t)es,
			es);
	return 0;
}

/* ------------------------------------------------------------------ Shape, Size, ConstantOfShape, Constant, Range */

/* the [start, end) of the dims Shape returns (attributes from opset 15) */
static void shape_range(loom_graph *g, const loom_node *n, int r, int *s, int *e)
{
	int64_t a = 0, b = r;
	if (g->opset >= 15) {
		a = loom_attr_int(n, "start", 0);
		b = loom_attr_int(n, "end", r);
	}
	if (a < 0)
		a += r;
	if (b < 0)
		b += r;
	a = a < 0 ? 0 : a > r ? r : a;
	b = b < 0 ? 0 : b > r ? r : b;
	*s = (int)a;
	*e = (int)(b > a ? b : a);
}

int loom_cpu_shape_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *x = IN(0), *y = OUT(0);
	int s, e;
	shape_range(g, n, x->rank, &s, &e);
	for (int i = s; i < e; i++)
		((int64_t *)y->data)[i - s] = x->dims[i];
	return 0;
}

int loom_cpu_size_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*(int64_t *)OUT(0)->data = loom_tensor_numel(IN(0));
	return 0;
}

/* Shape and Size are known once the input's (static) shape is: infer()
 * also computes the values and marks the output constant, so that the
 * executor folds what follows (Shape -> Gather -> Concat -> Reshape, as
 * exported models do) even when the input itself is not a constant. */
static int fold_now(loom_graph *g, const loom_node *n, loom_tensor *y, char *err, size_t errlen)
{
	size_t b = loom_tensor_bytes(y);
	free(y->data);
	y->data = calloc(1, b ? b : 1);
	y->cap = 0;
	if (!y->data)
		return ERR("out of memory");
	if (!strcmp(n->op_type, "Shape"))
		loom_cpu_shape_run(g, n, err, errlen);
	else
		loom_cpu_size_run(g, n, err, errlen);
	y->is_const = 1;
	return 0;
}

int loom_cpu_shape_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = need_out(g, n, 0, err, errlen);
	int s, e;
	if (!x)
		return ERR("input 0 is missing");
	if (!y)
		return -1;
	shape_range(g, n, x->rank, &s, &e);
	int64_t len = e - s;
	loom_cpu_set_shape(y, LOOM_DT_INT64, 1, &len);
	return fold_now(g, n, y, err, errlen);
}

int loom_cpu_size_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = IN(0), *y = need_out(g, n, 0, err, errlen);
	if (!x)
		return ERR("input 0 is missing");
	if (!y)
		return -1;
	loom_cpu_set_shape(y, LOOM_DT_INT64, 0, NULL);
	return fold_now(g, n, y, err, errlen);
}

/* ConstantOfShape's value attribute: a one-element tensor, float 0 if absent */
static int cos_value(loom_graph *g, const loom_node *n, int *dtype, const void **val,
		     char *err, size_t errlen)
{
	static const float zero = 0.0f;
	const loom_attr *a = loom_node_attr(n, "value");
	*dtype = LOOM_DT_FLOAT;
	*val = &zero;
	if (!a)
		return 0;
	if (a->type != LOOM_ATTR_TENSOR || !a->t)
		return ERR("attribute value is not a tensor");
	if (loom_tensor_numel(a->t) != 1 || !a->t->data)
		return ERR("attribute value must hold exactly one element");
	if (!loom_dtype_size(a->t->dtype))
		return ERR("value of data type %s not supported", loom_dtype_name(a->t->dtype));
	*dtype = a->t->dtype;
	*val = a->t->data;
	return 0;
}

int loom_cpu_constant_of_shape_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int64_t dims[LOOM_MAX_RANK];
	int cnt, dt;
	const void *v;
	if (!y || in_ints(g, n, 0, "shape", dims, LOOM_MAX_RANK, &cnt, err, errlen) ||
	    cos_value(g, n, &dt, &v, err, errlen))
		return -1;
	if (cnt < 0)
		return ERR("input 0 is missing");
	for (int i = 0; i < cnt; i++)
		if (dims[i] < 0)
			return ERR("shape[%d] = %lld is negative", i, (long long)dims[i]);
	loom_cpu_set_shape(y, dt, cnt, dims);
	return 0;
}

int loom_cpu_constant_of_shape_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = OUT(0);
	int dt;
	const void *v;
	if (cos_value(g, n, &dt, &v, err, errlen))
		return -1;
	size_t es = loom_dtype_size(dt);
	int64_t cnt = loom_tensor_numel(y);
	for (int64_t i = 0; i < cnt; i++)
		copy_el((char *)y->data + i * (int64_t)es, v, es);
	return 0;
}

/* Constant: the value of whichever attribute it has (the loader folds most
 * Constant nodes into initializers; this covers graphs built otherwise).
 * *data points at the values, *tmp holds a scalar's. */
static int constant_value(loom_graph *g, const loom_node *n, int *dt, int *rank, int64_t *dims,
			  const void **data, void *tmp, char *err, size_t errlen)
{
	const loom_attr *a;
	*rank = 0;
	if ((a = loom_node_attr(n, "value"))) {
		if (a->type != LOOM_ATTR_TENSOR || !a->t)
			return ERR("attribute value is not a tensor");
		if (!loom_dtype_size(a->t->dtype))
			return ERR("value of data type %s not supported", loom_dtype_name(a->t->dtype));
		*dt = a->t->dtype;
		*rank = a->t->rank;
		memcpy(dims, a->t->dims, sizeof(int64_t) * LOOM_MAX_RANK);
		*data = a->t->data;
	} else if ((a = loom_node_attr(n, "value_float"))) {
		*dt = LOOM_DT_FLOAT;
		memcpy(tmp, &a->f, sizeof(float));
		*data = tmp;
	} else if ((a = loom_node_attr(n, "value_int"))) {
		*dt = LOOM_DT_INT64;
		memcpy(tmp, &a->i, sizeof(int64_t));
		*data = tmp;
	} else if ((a = loom_node_attr(n, "value_floats"))) {
		*dt = LOOM_DT_FLOAT;
		*rank = 1;
		dims[0] = a->n;
		*data = a->floats;
	} else if ((a = loom_node_attr(n, "value_ints"))) {
		*dt = LOOM_DT_INT64;
		*rank = 1;
		dims[0] = a->n;
		*data = a->ints;
	} else {
		return ERR("no value, value_float(s) or value_int(s) attribute (strings and sparse "
			   "tensors are not supported)");
	}
	return 0;
}

int loom_cpu_constant_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int dt, rank;
	int64_t dims[LOOM_MAX_RANK] = {0}, tmp;
	const void *data;
	if (!y || constant_value(g, n, &dt, &rank, dims, &data, &tmp, err, errlen))
		return -1;
	loom_cpu_set_shape(y, dt, rank, dims);
	return 0;
}

int loom_cpu_constant_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = OUT(0);
	int dt, rank;
	int64_t dims[LOOM_MAX_RANK] = {0}, tmp;
	const void *data;
	if (constant_value(g, n, &dt, &rank, dims, &data, &tmp, err, errlen))
		return -1;
	size_t b = loom_tensor_bytes(y);
	if (b) {
		if (!data)
			return ERR("value has no data");
		memcpy(y->data, data, b);
	}
	return 0;
}

/* Range (opset 11): start, limit, delta scalars of one type */
static int range_count(loom_graph *g, const loom_node *n, int64_t *cnt, char *err, size_t errlen)
{
	loom_tensor *t[3];
	for (int i = 0; i < 3; i++) {
		if (!(t[i] = need_in(g, n, i, err, errlen)))
			return -1;
		if (loom_tensor_numel(t[i]) != 1)
			return ERR("input %d must be a scalar", i);
		if (!t[i]->data)
			return ERR("input %d '%s' is not a constant (it decides the output shape)", i,
				   t[i]->name);
		if (t[i]->dtype != t[0]->dtype)
			return ERR("inputs have different data types");
	}
	if (loom_cpu_is_float(t[0]->dtype)) {
		double s = loom_cpu_get_f(t[0]->data, t[0]->dtype, 0), l = loom_cpu_get_f(t[1]->data, t[1]->dtype, 0);
		double d = loom_cpu_get_f(t[2]->data, t[2]->dtype, 0);
		if (d == 0)
			return ERR("delta is 0");
		double c = ceil((l - s) / d);
		*cnt = c > 0 ? loom_cpu_f2i(c) : 0;
	} else {
		int64_t s = loom_cpu_get_i(t[0]->data, t[0]->dtype, 0), l = loom_cpu_get_i(t[1]->data, t[1]->dtype, 0);
		int64_t d = loom_cpu_get_i(t[2]->data, t[2]->dtype, 0);
		if (d == 0)
			return ERR("delta is 0");
		int64_t span = l - s;
		int64_t c = d > 0 ? (span > 0 ? (span + d - 1) / d : 0)
				  : (span < 0 ? (-span + -d - 1) / -d : 0);
		*cnt = c;
	}
	if (*cnt > ((int64_t)1 << 40))
		return ERR("%lld elements is too many", (long long)*cnt);
	return 0;
}

int loom_cpu_range_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int64_t cnt;
	if (!y || range_count(g, n, &cnt, err, errlen))
		return -1;
	loom_cpu_set_shape(y, IN(0)->dtype, 1, &cnt);
	return 0;
}

int loom_cpu_range_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *s = IN(0), *d = IN(2), *y = OUT(0);
	int64_t cnt;
	if (range_count(g, n, &cnt, err, errlen))
		return -1;
	if (y->dtype == LOOM_DT_FLOAT) {
		/* accumulate like the operator's definition (and ONNX Runtime) */
		float v = *(const float *)s->data, dl = *(const float *)d->data;
		for (int64_t i = 0; i < cnt; i++, v += dl)
			((float *)y->data)[i] = v;
	} else if (y->dtype == LOOM_DT_DOUBLE) {
		double v = *(const double *)s->data, dl = *(const double *)d->data;
		for (int64_t i = 0; i < cnt; i++, v += dl)
			((double *)y->data)[i] = v;
	} else {
		int64_t v = loom_cpu_get_i(s->data, s->dtype, 0), dl = loom_cpu_get_i(d->data, d->dtype, 0);
		for (int64_t i = 0; i < cnt; i++)
			loom_cpu_set_i(y->data, y->dtype, i, v + i * dl);
	}
	return 0;
}

/* ------------------------------------------------------------------ Cast, CastLike */

static int cast_to(loom_graph *g, const loom_node *n, int *to, char *err, size_t errlen)
{
	if (!strcmp(n->op_type, "CastLike")) {
		loom_tensor *t = need_in(g, n, 1, err, errlen);
		if (!t)
			return -1;
		*to = t->dtype;
	} else {
		const loom_attr *a = loom_node_attr(n, "to");
		if (!a)
			return ERR("attribute 'to' missing");
		*to = a->type == LOOM_ATTR_STRING ? 0 : (int)a->i;
	}
	if (!loom_dtype_size(*to))
		return ERR("cast to %s not supported", loom_dtype_name(*to));
	return 0;
}

int loom_cpu_cast_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	int to = 0;
	if (!x || !y || cast_to(g, n, &to, err, errlen))
		return -1;
	loom_cpu_set_shape(y, to, x->rank, x->dims);
	return 0;
}

/* float -> integer truncates toward zero (out-of-range values saturate to
 * int64 and then wrap to the width, NaN gives 0); -> bool is x != 0;
 * integer <-> integer wraps like C. */
int loom_cpu_cast_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *x = IN(0), *y = OUT(0);
	int64_t cnt = loom_tensor_numel(x);
	int sf = loom_cpu_is_float(x->dtype), df = loom_cpu_is_float(y->dtype);
	if (x->dtype == y->dtype)
		return in_bytes_copy(g, n);
	for (int64_t i = 0; i < cnt; i++) {
		if (sf)
			loom_cpu_set_f(y->data, y->dtype, i, loom_cpu_get_f(x->data, x->dtype, i));
		else if (y->dtype == LOOM_DT_FLOAT && x->dtype == LOOM_DT_UINT64)
			((float *)y->data)[i] = (float)((const uint64_t *)x->data)[i];
		else if (y->dtype == LOOM_DT_FLOAT)
			((float *)y->data)[i] = (float)loom_cpu_get_i(x->data, x->dtype, i);
		else if (df)
			loom_cpu_set_f(y->data, y->dtype, i, loom_cpu_get_f(x->data, x->dtype, i));
		else
			loom_cpu_set_i(y->data, y->dtype, i, loom_cpu_get_i(x->data, x->dtype, i));
	}
	return 0;
}

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
		return ERR("axis %lld out of range for rank %d", (long long)av, r);
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
		return ERR("input is %s, expected float or double", loom_dtype_name(x->dtype));
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
		return ERR("input is bool, not supported");
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
		return ERR("out of memory");
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
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", 0), x->rank);
	if (x->dims[a] == 0)
		return ERR("axis %d is empty", a);
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
		return ERR("axis %lld out of range for rank %d",
			   (long long)loom_attr_int(n, "axis", -1), x->rank);
	if (g->opset < 10) {
		if (!loom_node_attr(n, "k"))
			return ERR("attribute k missing");
		*k = loom_attr_int(n, "k", 0);
	} else {
		int cnt;
		if (in_ints(g, n, 1, "K", k, 1, &cnt, err, errlen))
			return -1;
		if (cnt != 1)
			return ERR("K must hold one value");
	}
	if (*k < 0 || *k > x->dims[a])
		return ERR("k = %lld out of range for axis %d of size %lld", (long long)*k, a,
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
		return ERR("out of memory");
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

/* ------------------------------------------------------------------ Resize, Upsample */

enum { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC };
enum { CT_HALF_PIXEL, CT_ASYMMETRIC, CT_PYTORCH_HALF_PIXEL, CT_TF_HALF_PIXEL_FOR_NN,
       CT_ALIGN_CORNERS, CT_TF_CROP_AND_RESIZE };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL,
       NM_SIMPLE /* opset 10 and Upsample: floor, ceil when downsampling */ };

struct resize {
	int mode, ctm, nearest;
	float cubic_a, extrapolation;
	int exclude_outside;
	double scale[LOOM_MAX_RANK];    /* for the coordinate transformation */
	double lenr[LOOM_MAX_RANK];     /* the resized length in it: in * scale
					   unrounded when scales are given (as in
					   ONNX's reference), else the size */
	double roi[2 * LOOM_MAX_RANK];  /* start of every dim, then end */
	int64_t odims[LOOM_MAX_RANK];
};

static int pick(const char *s, const char *const *names, int cnt)
{
	for (int i = 0; i < cnt; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* Everything a Resize (opset 10: X, scales; from 11: X, roi, scales,
 * sizes; axes attribute from 18) or Upsample (opset 7: scales attribute;
 * 9: scales input) needs. */
static int resize_params(loom_graph *g, const loom_node *n, struct resize *p, char *err,
			 size_t errlen)
{
	static const char *const modes[] = {"nearest", "linear", "cubic"};
	static const char *const ctms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel",
					   "tf_half_pixel_for_nn", "align_corners",
					   "tf_crop_and_resize"};
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
					  "ceil"};
	loom_tensor *x = need_in(g, n, 0, err, errlen);
	int upsample = !strcmp(n->op_type, "Upsample");
	int r, ns = -1, nz = -1, nr = -1, na = -1;
	double sc[LOOM_MAX_RANK], roi[2 * LOOM_MAX_RANK];
	int64_t sz[LOOM_MAX_RANK], axes[LOOM_MAX_RANK];
	if (!x)
		return -1;
	r = x->rank;
	memset(p, 0, sizeof *p);
	const char *m = loom_attr_str(n, "mode", "nearest");
	if (!strcmp(m, "bilinear"))
		m = "linear";
	if ((p->mode = pick(m, modes, 3)) < 0 || (upsample && p->mode == RZ_CUBIC))
		return ERR("mode '%s' not supported", m);
	if (upsample || g->opset < 11) {
		p->ctm = CT_ASYMMETRIC;
		p->nearest = NM_SIMPLE;
	} else {
		const char *c = loom_attr_str(n, "coordinate_transformation_mode", "half_pixel");
		const char *nm = loom_attr_str(n, "nearest_mode", "round_prefer_floor");
		if ((p->ctm = pick(c, ctms, 6)) < 0)
			return ERR("coordinate_transformation_mode '%s' not supported", c);
		if ((p->nearest = pick(nm, nms, 4)) < 0)
			return ERR("nearest_mode '%s' not supported", nm);
		if (loom_attr_int(n, "antialias", 0))
			return ERR("antialias not supported");
		const char *kar = loom_attr_str(n, "keep_aspect_ratio_policy", "stretch");
		if (strcmp(kar, "stretch"))
			return ERR("keep_aspect_ratio_policy '%s' not supported", kar);
	}
	p->cubic_a = loom_attr_float(n, "cubic_coeff_a", -0.75f);
	p->exclude_outside = (int)loom_attr_int(n, "exclude_outside", 0);
	p->extrapolation = loom_attr_float(n, "extrapolation_value", 0.0f);
	if (upsample && g->opset < 9) {
		const loom_attr *a = loom_node_attr(n, "scales");
		if (!a || a->type != LOOM_ATTR_FLOATS)
			return ERR("attribute scales missing");
		if (a->n > LOOM_MAX_RANK)
			return ERR("attribute scales has %d values", a->n);
		for (ns = 0; ns < a->n; ns++)
			sc[ns] = a->floats[ns];
	} else if (upsample || g->opset < 11) {
		if (in_floats(g, n, 1, "scales", sc, LOOM_MAX_RANK, &ns, err, errlen))
			return -1;
	} else {
		if (in_floats(g, n, 1, "roi", roi, 2 * LOOM_MAX_RANK, &nr, err, errlen) ||
		    in_floats(g, n, 2, "scales", sc, LOOM_MAX_RANK, &ns, err, errlen) ||
		    in_ints(g, n, 3, "sizes", sz, LOOM_MAX_RANK, &nz, err, errlen) ||
		    attr_ints(g, n, "axes", axes, LOOM_MAX_RANK, &na, err, errlen))
			return -1;
	}
	/* the dims resized: all, or the axes attribute's */
	int ax[LOOM_MAX_RANK], nax = r, mask[LOOM_MAX_RANK];
	if (na >= 0) {
		if (axes_mask(g, n, axes, na, r, mask, err, errlen))
			return -1;
		nax = na;
		for (int i = 0; i < na; i++)
			ax[i] = loom_cpu_axis(axes[i], r);
	} else {
		for (int i = 0; i < r; i++)
			ax[i] = i;
	}
	for (int d = 0; d < r; d++) {
		p->scale[d] = 1;
		p->roi[d] = 0;
		p->roi[r + d] = 1;
		p->odims[d] = x->dims[d];
		p->lenr[d] = (double)x->dims[d];
	}
	if (nr > 0) {
		if (nr != 2 * nax)
			return ERR("roi has %d values for %d axes", nr, nax);
		for (int i = 0; i < nax; i++) {
			p->roi[ax[i]] = roi[i];
			p->roi[r + ax[i]] = roi[nax + i];
		}
	}
	if (nz > 0) {
		if (ns > 0)
			return ERR("both scales and sizes given");
		if (nz != nax)
			return ERR("sizes has %d values for %d axes", nz, nax);
		for (int i = 0; i < nax; i++) {
			int d = ax[i];
			if (sz[i] < 0)
				return ERR("sizes[%d] = %lld is negative", i, (long long)sz[i]);
			p->odims[d] = sz[i];
			p->lenr[d] = (double)sz[i];
			p->scale[d] = x->dims[d] ? (double)sz[i] / (double)x->dims[d] : 1;
		}
	} else if (ns > 0) {
		if (ns != nax)
			return ERR("scales has %d values for %d axes", ns, nax);
		for (int i = 0; i < nax; i++) {
			int d = ax[i];
			if (!(sc[i] > 0))
				return ERR("scales[%d] = %g is not positive", i, sc[i]);
			double len = (double)x->dims[d];
			if (p->ctm == CT_TF_CROP_AND_RESIZE)
				len *= p->roi[r + d] - p->roi[d];
			p->odims[d] = (int64_t)floor(len * sc[i]);
			p->lenr[d] = (double)x->dims[d] * sc[i];
			p->scale[d] = sc[i];
		}
	} else {
		return ERR("neither scales nor sizes given");
	}
	return 0;
}

int loom_cpu_resize_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	struct resize p;
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	if (!y || resize_params(g, n, &p, err, errlen))
		return -1;
	loom_tensor *x = IN(0);
	if (p.mode != RZ_NEAREST && !loom_cpu_is_float(x->dtype))
		return ERR("mode linear/cubic on %s data not supported", loom_dtype_name(x->dtype));
	loom_cpu_set_shape(y, x->dtype, x->rank, p.odims);
	return 0;
}

/* the input coordinate of output index o along dim d */
static double resize_coord(const struct resize *p, int r, int d, int64_t o, int64_t in, int64_t out)
{
	double s = p->scale[d], x = (double)o, lr = p->lenr[d];
	switch (p->ctm) {
	case CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
	case CT_PYTORCH_HALF_PIXEL: return lr > 1 ? (x + 0.5) / s - 0.5 : 0;
	case CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / s;
	case CT_ALIGN_CORNERS: return lr > 1 ? x * (double)(in - 1) / (lr - 1) : 0;
	case CT_TF_CROP_AND_RESIZE: {
		double a = p->roi[d], b = p->roi[r + d];
		return out > 1 ? a * (double)(in - 1) + x * (b - a) * (double)(in - 1) / (double)(out - 1)
			       : 0.5 * (a + b) * (double)(in - 1);
	}
	default: return x / s;
	}
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The taps of every output index of dim d: up to 4 input indices with
 * weights (zero weights dropped); ntap 0 = extrapolation_value. */
static void resize_taps(const struct resize *p, int r, int d, int64_t in, int64_t out,
			int64_t *idx, double *w, int *ntap)
{
	for (int64_t o = 0; o < out; o++) {
		double c = resize_coord(p, r, d, o, in, out);
		int64_t *ip = idx + 4 * o;
		double *wp = w + 4 * o;
		int k = 0;
		if (p->ctm == CT_TF_CROP_AND_RESIZE && (c < 0 || c > (double)(in - 1))) {
			ntap[o] = 0;
			continue;
		}
		if (p->mode == RZ_NEAREST) {
			double f;
			switch (p->nearest) {
			case NM_ROUND_PREFER_FLOOR: f = ceil(c - 0.5); break;
			case NM_ROUND_PREFER_CEIL: f = floor(c + 0.5); break;
			case NM_FLOOR: f = floor(c); break;
			case NM_CEIL: f = ceil(c); break;
			default: f = p->scale[d] < 1 ? ceil(c) : floor(c); break;
			}
			ip[0] = clampi((int64_t)f, 0, in - 1);
			wp[0] = 1;
			k = 1;
		} else if (p->mode == RZ_LINEAR) {
			double f = floor(c), s = c - f;
			int64_t i0 = (int64_t)f;
			double ws[2] = {1 - s, s};
			for (int t = 0; t < 2; t++)
				if (ws[t] != 0) {
					ip[k] = clampi(i0 + t, 0, in - 1);
					wp[k++] = ws[t];
				}
		} else {
			double f = floor(c), s = c - f, A = p->cubic_a, sum = 0;
			int64_t i0 = (int64_t)f - 1;
			double ws[4], t0 = s + 1, t3 = 2 - s, t2 = 1 - s;
			ws[0] = ((A * t0 - 5 * A) * t0 + 8 * A) * t0 - 4 * A;
			ws[1] = ((A + 2) * s - (A + 3)) * s * s + 1;
			ws[2] = ((A + 2) * t2 - (A + 3)) * t2 * t2 + 1;
			ws[3] = ((A * t3 - 5 * A) * t3 + 8 * A) * t3 - 4 * A;
			for (int t = 0; t < 4; t++) {
				if (p->exclude_outside && (i0 + t < 0 || i0 + t >= in))
					ws[t] = 0;
				sum += ws[t];
			}
			for (int t = 0; t < 4; t++)
				if (ws[t] != 0) {
					ip[k] = clampi(i0 + t, 0, in - 1);
					wp[k++] = p->exclude_outside ? ws[t] / sum : ws[t];
				}
		}
		ntap[o] = k;
	}
}

int loom_cpu_resize_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	struct resize p;
	if (resize_params(g, n, &p, err, errlen))
		return -1;
	loom_tensor *x = IN(0), *y = OUT(0);
	int r = x->rank, rc = 0;
	int64_t st[LOOM_MAX_RANK], tot = 0;
	int64_t *idx[LOOM_MAX_RANK] = {0};
	double *w[LOOM_MAX_RANK] = {0};
	int *nt[LOOM_MAX_RANK] = {0};
	size_t es = loom_dtype_size(x->dtype);
	strides_of(r, x->dims, st);
	for (int d = 0; d < r; d++) {
		size_t m = (size_t)(y->dims[d] ? y->dims[d] : 1);
		idx[d] = malloc(4 * m * sizeof(int64_t));
		w[d] = malloc(4 * m * sizeof(double));
		nt[d] = malloc(m * sizeof(int));
		if (!idx[d] || !w[d] || !nt[d]) {
			rc = ERR("out of memory");
			goto out;
		}
		if (y->dims[d] && !x->dims[d]) {
			rc = ERR("cannot resize the empty dim %d", d);
			goto out;
		}
		resize_taps(&p, r, d, x->dims[d], y->dims[d], idx[d], w[d], nt[d]);
	}
	tot = loom_tensor_numel(y);
	int64_t o[LOOM_MAX_RANK] = {0};
	for (int64_t j = 0; j < tot; j++, next_index(r, y->dims, o)) {
		int ext = 0, t[LOOM_MAX_RANK] = {0};
		for (int d = 0; d < r; d++)
			if (!nt[d][o[d]])
				ext = 1;
		if (p.mode == RZ_NEAREST && !ext) {
			int64_t off = 0;
			for (int d = 0; d < r; d++)
				off += idx[d][4 * o[d]] * st[d];
			copy_el((char *)y->data + j * (int64_t)es,
				(const char *)x->data + off * (int64_t)es, es);
			continue;
		}
		if (ext) {
			loom_cpu_set_f(y->data, y->dtype, j, p.extrapolation);
			continue;
		}
		/* sum over the product of every dim's taps */
		double acc = 0;
		for (;;) {
			int64_t off = 0;
			double wt = 1;
			for (int d = 0; d < r; d++) {
				off += idx[d][4 * o[d] + t[d]] * st[d];
				wt *= w[d][4 * o[d] + t[d]];
			}
			acc += wt * loom_cpu_get_f(x->data, x->dtype, off);
			int d = r - 1;
			for (; d >= 0; d--) {
				if (++t[d] < nt[d][o[d]])
					break;
				t[d] = 0;
			}
			if (d < 0)
				break;
		}
		loom_cpu_set_f(y->data, y->dtype, j, acc);
	}
out:
	for (int d = 0; d < r; d++) {
		free(idx[d]);
		free(w[d]);
		free(nt[d]);
	}
	return rc;
}

/* ------------------------------------------------------------------ DepthToSpace, SpaceToDepth */

int loom_cpu_d2s_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *y = need_out(g, n, 0, err, errlen);
	if (!x || !y)
		return -1;
	int64_t b = loom_attr_int(n, "blocksize", 0), dims[4];
	int d2s = !strcmp(n->op_type, "DepthToSpace");
	if (x->rank != 4)
		return ERR("input rank %d, expected 4 (NCHW)", x->rank);
	if (b < 1)
		return ERR("blocksize %lld invalid", (long long)b);
	const char *mode = loom_attr_str(n, "mode", "DCR");
	if (d2s && strcmp(mode, "DCR") && strcmp(mode, "CRD"))
		return ERR("mode '%s' not supported", mode);
	if (d2s) {
		if (x->dims[1] % (b * b))
			return ERR("channels %lld not divisible by blocksize^2 = %lld",
				   (long long)x->dims[1], (long long)(b * b));
		dims[0] = x->dims[0];
		dims[1] = x->dims[1] / (b * b);
		dims[2] = x->dims[2] * b;
		dims[3] = x->dims[3] * b;
	} else {
		if (x->dims[2] % b || x->dims[3] % b)
			return ERR("height %lld or width %lld not divisible by blocksize %lld",
				   (long long)x->dims[2], (long long)x->dims[3], (long long)b);
		dims[0] = x->dims[0];
		dims[1] = x->dims[1] * b * b;
		dims[2] = x->dims[2] / b;
		dims[3] = x->dims[3] / b;
	}
	loom_cpu_set_shape(y, x->dtype, 4, dims);
	return 0;
}

/* both as one 6-D strided view of the input */
int loom_cpu_d2s_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	loom_tensor *x = IN(0), *y = OUT(0);
	int64_t b = loom_attr_int(n, "blocksize", 0);
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t vd[6], vs[6];
	if (!strcmp(n->op_type, "DepthToSpace")) {
		int64_t c = C / (b * b);
		int crd = !strcmp(loom_attr_str(n, "mode", "DCR"), "CRD");
		/* output [N, c, H, b1, W, b2]; input channel = b1*b*c + b2*c + ci
		 * (DCR) or ci*b*b + b1*b + b2 (CRD) */
		int64_t sb1 = crd ? b * H * W : b * c * H * W, sb2 = crd ? H * W : c * H * W;
		int64_t sc = crd ? b * b * H * W : H * W;
		int64_t d[6] = {N, c, H, b, W, b}, s[6] = {C * H * W, sc, W, sb1, 1, sb2};
		memcpy(vd, d, sizeof d);
		memcpy(vs, s, sizeof s);
	} else {
		/* output [N, b1, b2, C, H/b, W/b]; output channel = (b1*b + b2)*C + c */
		int64_t d[6] = {N, b, b, C, H / b, W / b}, s[6] = {C * H * W, W, 1, H * W, b * W, b};
		memcpy(vd, d, sizeof d);
		memcpy(vs, s, sizeof s);
	}
	strided_copy(y->data, x->data, loom_dtype_size(x->dtype), 6, vd, vs, 0);
	return 0;
}
