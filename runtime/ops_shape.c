/* ops_shape.c - Loom's CPU kernels for the operators that reshape and move
 * data (their rows are in runtime/ops.def): Reshape, Flatten, Squeeze,
 * Unsqueeze (their run is a copy, loom_cpu_copy_run), Transpose, Concat,
 * Split, Slice, Pad (constant, reflect, edge, wrap), Tile and Expand.
 *
 * Every operator covers opsets 7 to 17 (and older ones where nothing
 * differs): where ONNX moved an attribute to an input (Reshape's shape,
 * Squeeze/Unsqueeze/Split axes, Slice's starts/ends/axes/steps, Pad's pads)
 * the kernel reads g->opset. Data movement is dtype-generic: elements are
 * copied by their size, so int64 shape tensors and int8 data take the same
 * path as float.
 *
 * Values that decide an output shape (Reshape's shape, Slice's starts,
 * Pad's pads, ...) must be known when infer() runs (tensor->data set),
 * otherwise infer() fails naming the input. Errors: "node 'NAME' (OP,
 * opset N): problem" (loom_cpu_fail). No global state. */
#include "ops_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ Reshape, Flatten, Squeeze, Unsqueeze */

/* run() of the operators whose output is their input's data (Reshape, ...) */
int loom_cpu_copy_run(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return in_bytes_copy(g, n);
}

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
		return FAIL("no shape given");
	int allowzero = g->opset >= 14 ? (int)loom_attr_int(n, "allowzero", 0) : 0;
	int neg = -1, haszero = 0;
	int64_t known = 1, total = loom_tensor_numel(x);
	for (int i = 0; i < cnt; i++) {
		if (s[i] == -1) {
			if (neg >= 0)
				return FAIL("shape has more than one -1");
			neg = i;
			dims[i] = 1;
			continue;
		}
		if (s[i] < -1)
			return FAIL("shape[%d] = %lld is invalid", i, (long long)s[i]);
		if (s[i] == 0 && !allowzero) {
			if (i >= x->rank)
				return FAIL("shape[%d] = 0 copies a dim the rank-%d input does not have", i,
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
			return FAIL("shape has both -1 and 0 with allowzero");
		if (known == 0 || total % known)
			return FAIL("cannot infer the -1 dim: %lld elements into blocks of %lld",
				    (long long)total, (long long)known);
		dims[neg] = total / known;
		known *= dims[neg];
	}
	if (known != total)
		return FAIL("cannot reshape %lld elements into %lld", (long long)total, (long long)known);
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
		return FAIL("axis %lld out of range for rank %d", (long long)a, x->rank);
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
				return FAIL("cannot squeeze axis %d of size %lld", i,
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
		return FAIL("axes missing or empty");
	int r = x->rank + cnt;
	if (r > LOOM_MAX_RANK)
		return FAIL("output rank %d exceeds %d", r, LOOM_MAX_RANK);
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
		return FAIL("perm has %d entries for rank %d", cnt, r);
	for (int i = 0; i < r; i++) {
		if (p[i] < 0 || p[i] >= r || seen[p[i]])
			return FAIL("perm is not a permutation of 0..%d", r - 1);
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
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", 0), r);
	memcpy(dims, x0->dims, sizeof dims);
	dims[a] = 0;
	for (int i = 0; i < n->ninputs; i++) {
		loom_tensor *x = need_in(g, n, i, err, errlen);
		if (!x)
			return -1;
		if (x->dtype != x0->dtype)
			return FAIL("input %d is %s, input 0 %s", i, loom_dtype_name(x->dtype),
				    loom_dtype_name(x0->dtype));
		if (x->rank != r)
			return FAIL("input %d has rank %d, input 0 rank %d", i, x->rank, r);
		for (int d = 0; d < r; d++)
			if (d != a && x->dims[d] != x0->dims[d])
				return FAIL("input %d: dim %d is %lld, input 0 has %lld", i, d,
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
		return FAIL("axis %lld out of range for rank %d",
			    (long long)loom_attr_int(n, "axis", 0), x->rank);
	int no = n->noutputs, cnt;
	if (g->opset >= 13) {
		loom_tensor *s = IN(1);
		int64_t c = s ? loom_tensor_numel(s) : -1;
		if (s && c != no && c != 0)
			return FAIL("split input has %lld values for %d outputs", (long long)c, no);
		if (in_ints(g, n, 1, "split", sz, no, &cnt, err, errlen))
			return -1;
	} else {
		int c = 0;
		const int64_t *v = loom_attr_ints(n, "split", &c);
		cnt = -1;
		if (loom_node_attr(n, "split")) {
			if (c != no)
				return FAIL("split attribute has %d values for %d outputs", c, no);
			memcpy(sz, v, (size_t)c * sizeof *sz);
			cnt = c;
		}
	}
	int64_t d = x->dims[a], tot = 0;
	if (cnt <= 0) {
		if (no < 1)
			return FAIL("no outputs");
		if (d % no && g->opset < 18)
			return FAIL("dim %d of size %lld does not split into %d equal parts", a,
				    (long long)d, no);
		int64_t part = (d + no - 1) / no;
		for (int i = 0; i < no; i++) {
			sz[i] = d - tot < part ? d - tot : part;
			tot += sz[i];
		}
	} else {
		for (int i = 0; i < no; i++) {
			if (sz[i] < 0)
				return FAIL("split[%d] = %lld is negative", i, (long long)sz[i]);
			tot += sz[i];
		}
		if (tot != d)
			return FAIL("split sizes add up to %lld, dim %d has %lld", (long long)tot, a,
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
		return FAIL("out of memory");
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
		return FAIL("out of memory");
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
		return FAIL("starts and ends are required");
	if (ns != ne)
		return FAIL("%d starts but %d ends", ns, ne);
	if (na < 0)
		for (na = 0; na < ns; na++)
			ax[na] = na;
	if (na != ns)
		return FAIL("%d axes for %d starts", na, ns);
	if (np >= 0 && np != ns)
		return FAIL("%d steps for %d starts", np, ns);
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
			return FAIL("step of axis %d is 0", d);
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

/* ------------------------------------------------------------------ Pad */

#define MAXV (2 * LOOM_MAX_RANK) /* the longest int list read here (Pad's pads) */

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
		return FAIL("mode '%s' not supported", m);
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
		return FAIL("pads missing");
	if (na >= 0) {
		int mask[LOOM_MAX_RANK];
		if (np != 2 * na)
			return FAIL("%d pads for %d axes", np, na);
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
			return FAIL("%d pads for rank %d (expected %d)", np, r, 2 * r);
		memcpy(pads, p, sizeof(int64_t) * 2 * (size_t)r);
	}
	for (int d = 0; d < r; d++) {
		if (x->dims[d] + pads[d] + pads[r + d] < 0)
			return FAIL("pads %lld, %lld on dim %d of size %lld leave a negative size",
				    (long long)pads[d], (long long)pads[r + d], d, (long long)x->dims[d]);
		if (*mode != PAD_CONSTANT && x->dims[d] == 0 && (pads[d] > 0 || pads[r + d] > 0))
			return FAIL("mode '%s' cannot pad the empty dim %d", m, d);
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
		return FAIL("%d repeats for rank %d", cnt, x->rank);
	for (int d = 0; d < x->rank; d++) {
		if (rep[d] < 0)
			return FAIL("repeats[%d] = %lld is negative", d, (long long)rep[d]);
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
		return FAIL("shape input missing");
	s.rank = cnt;
	for (int i = 0; i < cnt; i++)
		if (s.dims[i] < 0)
			return FAIL("shape[%d] = %lld is negative", i, (long long)s.dims[i]);
	const loom_tensor *t[2] = {x, &s};
	if (loom_cpu_bcast_shape(2, t, &r, dims))
		return FAIL("input shape does not broadcast with the requested shape");
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
		return FAIL("input does not broadcast to the output shape");
	for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it))
		copy_el((char *)y->data + i * (int64_t)es, (const char *)x->data + it.off[0] * (int64_t)es,
			es);
	return 0;
}
