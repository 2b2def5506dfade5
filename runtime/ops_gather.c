/* ops_gather.c - Loom's CPU kernels for the gathers (their rows are in
 * runtime/ops.def): Gather and GatherElements (int32 or int64 indices,
 * negative ones counted from the end) and GatherND (int64 indices,
 * batch_dims from opset 12), any data type (elements copied by their
 * size); an index out of range is an error.
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ Gather, GatherElements, GatherND */

int loom_cpu_gather_infer(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	loom_tensor *x = need_in(g, n, 0, err, errlen), *ix = need_in(g, n, 1, err, errlen);
	loom_tensor *y = need_out(g, n, 0, err, errlen);
	int64_t dims[LOOM_MAX_RANK];
	if (!x || !ix || !y)
		return -1;
	if (!is_index(ix->dtype))
		return FAIL("indices are %s, expected int32 or int64", loom_dtype_name(ix->dtype));
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", 0), x->rank);
	int r = x->rank - 1 + ix->rank, k = 0;
	if (r > LOOM_MAX_RANK)
		return FAIL("output rank %d exceeds %d", r, LOOM_MAX_RANK);
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
			return FAIL("index %lld out of range for axis %d of size %lld", (long long)k, a,
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
		return FAIL("indices are %s, expected int32 or int64", loom_dtype_name(ix->dtype));
	if (ix->rank != x->rank || x->rank < 1)
		return FAIL("indices have rank %d, data rank %d (must be equal and >= 1)", ix->rank,
			    x->rank);
	int a = loom_cpu_axis(loom_attr_int(n, "axis", 0), x->rank);
	if (a < 0)
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", 0), x->rank);
	for (int d = 0; d < x->rank; d++)
		if (d != a && ix->dims[d] > x->dims[d])
			return FAIL("indices dim %d (%lld) exceeds the data's (%lld)", d,
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
			return FAIL("index %lld out of range for axis %d of size %lld", (long long)k, a,
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
		return FAIL("indices are %s, expected int64", loom_dtype_name(ix->dtype));
	int64_t b = loom_attr_int(n, "batch_dims", 0);
	int q = ix->rank, r = x->rank;
	if (q < 1 || r < 1)
		return FAIL("data and indices need rank >= 1");
	if (b < 0 || b >= q || b >= r)
		return FAIL("batch_dims %lld out of range", (long long)b);
	int64_t k = ix->dims[q - 1];
	if (k < 1 || k > r - b)
		return FAIL("last indices dim %lld out of range 1..%lld", (long long)k,
			    (long long)(r - b));
	for (int i = 0; i < b; i++)
		if (x->dims[i] != ix->dims[i])
			return FAIL("batch dim %d differs: %lld vs %lld", i, (long long)x->dims[i],
				    (long long)ix->dims[i]);
	int orank = q - 1 + r - (int)b - (int)k, m = 0;
	if (orank > LOOM_MAX_RANK)
		return FAIL("output rank %d exceeds %d", orank, LOOM_MAX_RANK);
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
					return FAIL("index %lld out of range for dim %d of size %lld",
						    (long long)v, b + i, (long long)dim);
				off += (v < 0 ? v + dim : v) * st[b + i];
			}
			memcpy((char *)y->data + (bi * per + j) * slice,
			       (const char *)x->data + off * (int64_t)es, (size_t)slice);
		}
	return 0;
}
