/* ops_gen.c - Loom's CPU kernels for the operators that make a tensor from
 * shapes, attributes or scalars, and the casts (their rows are in
 * runtime/ops.def): Shape (start/end from opset 15), Size, ConstantOfShape,
 * Constant, Range, Cast and CastLike.
 *
 * Shape and Size compute their values in infer() already and mark the
 * output constant, so the executor folds the shape arithmetic that usually
 * follows them; ConstantOfShape's shape and Range's scalars must be known
 * when infer() runs. Cast converts element by element with
 * loom_cpu_get_f/set_f, or get_i/set_i between integer types (floats to
 * integers truncate toward zero and saturate, integers wrap).
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
		return FAIL("out of memory");
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
		return FAIL("input 0 is missing");
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
		return FAIL("input 0 is missing");
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
		return FAIL("attribute value is not a tensor");
	if (loom_tensor_numel(a->t) != 1 || !a->t->data)
		return FAIL("attribute value must hold exactly one element");
	if (!loom_dtype_size(a->t->dtype))
		return FAIL("value of data type %s not supported", loom_dtype_name(a->t->dtype));
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
		return FAIL("input 0 is missing");
	for (int i = 0; i < cnt; i++)
		if (dims[i] < 0)
			return FAIL("shape[%d] = %lld is negative", i, (long long)dims[i]);
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
			return FAIL("attribute value is not a tensor");
		if (!loom_dtype_size(a->t->dtype))
			return FAIL("value of data type %s not supported", loom_dtype_name(a->t->dtype));
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
		return FAIL("no value, value_float(s) or value_int(s) attribute (strings and sparse "
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
			return FAIL("value has no data");
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
			return FAIL("input %d must be a scalar", i);
		if (!t[i]->data)
			return FAIL("input %d '%s' is not a constant (it decides the output shape)", i,
				    t[i]->name);
		if (t[i]->dtype != t[0]->dtype)
			return FAIL("inputs have different data types");
	}
	if (loom_cpu_is_float(t[0]->dtype)) {
		double s = loom_cpu_get_f(t[0]->data, t[0]->dtype, 0), l = loom_cpu_get_f(t[1]->data, t[1]->dtype, 0);
		double d = loom_cpu_get_f(t[2]->data, t[2]->dtype, 0);
		if (d == 0)
			return FAIL("delta is 0");
		double c = ceil((l - s) / d);
		*cnt = c > 0 ? loom_cpu_f2i(c) : 0;
	} else {
		int64_t s = loom_cpu_get_i(t[0]->data, t[0]->dtype, 0), l = loom_cpu_get_i(t[1]->data, t[1]->dtype, 0);
		int64_t d = loom_cpu_get_i(t[2]->data, t[2]->dtype, 0);
		if (d == 0)
			return FAIL("delta is 0");
		int64_t span = l - s;
		int64_t c = d > 0 ? (span > 0 ? (span + d - 1) / d : 0)
				  : (span < 0 ? (-span + -d - 1) / -d : 0);
		*cnt = c;
	}
	if (*cnt > ((int64_t)1 << 40))
		return FAIL("%lld elements is too many", (long long)*cnt);
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
			return FAIL("attribute 'to' missing");
		*to = a->type == LOOM_ATTR_STRING ? 0 : (int)a->i;
	}
	if (!loom_dtype_size(*to))
		return FAIL("cast to %s not supported", loom_dtype_name(*to));
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
