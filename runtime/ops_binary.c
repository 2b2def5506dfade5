/* ops_binary.c - Loom's CPU kernels for the elementwise operators of two
 * or more inputs with numpy broadcasting (their rows are in
 * runtime/ops.def): arithmetic (Add, Sub, Mul, Div, Mod, Pow), PRelu,
 * BitShift, the comparisons and logic operators, the variadic
 * Max/Min/Sum/Mean and Where.
 *
 * Semantics are ONNX's for opsets 7 to 17; before opset 7 the binary
 * operators broadcast B only with broadcast=1 (at axis) and PRelu's 1-D
 * slope applies per channel, both read from g->opset. Float32 operands are
 * computed in float (Add, Sub, Mul) or in double and rounded; double and
 * the integer types are taken too (int64 shape arithmetic, uint8 data;
 * integers wrap like C, uint64 compares and divides unsigned, integer
 * division by zero is an error).
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ================================================================== elementwise: binary */

enum bcode {
	B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MOD, B_EQ, B_LT, B_GT, B_LE, B_GE, B_AND, B_OR,
	B_XOR, B_SHIFT, B_PRELU,
};

enum bkind { BK_ARITH, BK_POW, BK_CMP, BK_LOGIC, BK_SHIFT, BK_PRELU };

static const struct {
	const char *op;
	int code;
	int kind;
} binary_ops[] = {
	{"Add", B_ADD, BK_ARITH}, {"Sub", B_SUB, BK_ARITH}, {"Mul", B_MUL, BK_ARITH},
	{"Div", B_DIV, BK_ARITH}, {"Mod", B_MOD, BK_ARITH}, {"Pow", B_POW, BK_POW},
	{"Equal", B_EQ, BK_CMP}, {"Less", B_LT, BK_CMP}, {"Greater", B_GT, BK_CMP},
	{"LessOrEqual", B_LE, BK_CMP}, {"GreaterOrEqual", B_GE, BK_CMP},
	{"And", B_AND, BK_LOGIC}, {"Or", B_OR, BK_LOGIC}, {"Xor", B_XOR, BK_LOGIC},
	{"BitShift", B_SHIFT, BK_SHIFT}, {"PRelu", B_PRELU, BK_PRELU},
};

static int binary_find(const char *op)
{
	for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
		if (!strcmp(binary_ops[i].op, op))
			return (int)i;
	return -1;
}

/* PRelu before opset 7: a 1-D slope of X's channel count applies per
 * channel (viewed here as [C, 1, ..., 1]); otherwise the slope itself. */
static const loom_tensor *prelu_slope(const loom_graph *g, const loom_tensor *x, const loom_tensor *s,
				      loom_tensor *view)
{
	if (g->opset >= 7 || s->rank != 1 || x->rank < 3 || s->dims[0] != x->dims[1] || s->dims[0] == 1)
		return s;
	*view = *s;
	view->rank = x->rank - 1;
	for (int d = 0; d < view->rank; d++)
		view->dims[d] = d ? 1 : x->dims[1];
	return view;
}

/* Before opset 7 the binary operators broadcast B only with broadcast=1,
 * aligned at dimension axis of A (suffix-aligned without axis): B viewed
 * with trailing 1s. numpy broadcasting covers the rest. */
static const loom_tensor *legacy_b(const loom_graph *g, const loom_node *n, const loom_tensor *a,
				   const loom_tensor *b, loom_tensor *view)
{
	const loom_attr *ax = loom_node_attr(n, "axis");
	int axis, pad;
	if (g->opset >= 7 || !ax || !loom_attr_int(n, "broadcast", 0))
		return b;
	axis = loom_cpu_axis(ax->i, a->rank);
	pad = axis < 0 ? 0 : a->rank - axis - b->rank;
	if (pad <= 0 || b->rank + pad > LOOM_MAX_RANK)
		return b;
	*view = *b;
	for (int d = 0; d < pad; d++)
		view->dims[view->rank++] = 1;
	return view;
}

int loom_cpu_binary_infer(KARGS)
{
	loom_tensor view;
	int k = binary_find(n->op_type), rank, kind;
	int64_t dims[LOOM_MAX_RANK];
	const loom_tensor *a, *b;
	int odt;
	if (k < 0)
		return FAIL("not an elementwise binary operator");
	if (need_io(g, n, err, errlen, 2, 2))
		return -1;
	kind = binary_ops[k].kind;
	a = IN(0);
	b = IN(1);
	b = kind == BK_PRELU ? prelu_slope(g, a, b, &view) : legacy_b(g, n, a, b, &view);
	if (loom_broadcast_shape(a, b, &rank, dims)) {
		char sa[96], sb[96];
		shape_str(a, sa, sizeof sa);
		shape_str(b, sb, sizeof sb);
		return FAIL("input shapes %s and %s do not broadcast", sa, sb);
	}
	if (kind != BK_POW && a->dtype != b->dtype)
		return FAIL("inputs have different types (%s, %s)", loom_dtype_name(a->dtype),
			    loom_dtype_name(b->dtype));
	odt = a->dtype;
	switch (kind) {
	case BK_ARITH:
	case BK_POW:
		if (!loom_cpu_is_numeric(a->dtype) || !loom_cpu_is_numeric(b->dtype))
			return FAIL("inputs of types %s, %s are not numeric", loom_dtype_name(a->dtype),
				    loom_dtype_name(b->dtype));
		if (binary_ops[k].code == B_MOD && loom_cpu_is_float(a->dtype) &&
		    !loom_attr_int(n, "fmod", 0))
			return FAIL("fmod must be 1 for floating-point inputs");
		break;
	case BK_CMP:
		if (!loom_cpu_is_numeric(a->dtype) && a->dtype != LOOM_DT_BOOL)
			return FAIL("inputs of type %s cannot be compared", loom_dtype_name(a->dtype));
		odt = LOOM_DT_BOOL;
		break;
	case BK_LOGIC:
		if (a->dtype != LOOM_DT_BOOL)
			return FAIL("inputs are %s, not bool", loom_dtype_name(a->dtype));
		break;
	case BK_SHIFT: {
		const char *dir = loom_attr_str(n, "direction", "");
		if (!loom_cpu_is_unsigned(a->dtype))
			return FAIL("inputs are %s, not an unsigned integer type", loom_dtype_name(a->dtype));
		if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
			return FAIL("direction='%s' is not LEFT or RIGHT", dir);
		break;
	}
	case BK_PRELU:
		if (!loom_cpu_is_float(a->dtype))
			return FAIL("input '%s' has type %s, not float", a->name, loom_dtype_name(a->dtype));
		/* the slope broadcasts to X (unidirectionally) */
		if (rank != a->rank || memcmp(dims, a->dims, sizeof(int64_t) * (size_t)rank)) {
			char sa[96], sb[96];
			shape_str(a, sa, sizeof sa);
			shape_str(b, sb, sizeof sb);
			return FAIL("slope of shape %s does not broadcast to X's shape %s", sb, sa);
		}
		break;
	default: break;
	}
	loom_cpu_set_shape(OUT(0), odt, rank, dims);
	return 0;
}

static double binary_d(int code, double a, double b)
{
	switch (code) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_POW: return pow(a, b);
	case B_MOD: return fmod(a, b);
	case B_EQ: return a == b;
	case B_LT: return a < b;
	case B_GT: return a > b;
	case B_LE: return a <= b;
	case B_GE: return a >= b;
	case B_PRELU: return a < 0 ? a * b : a;
	default: return 0;
	}
}

/* integer a^b (b >= 0) wrapping like C unsigned multiplication */
static int64_t ipow(int64_t a, int64_t b)
{
	uint64_t r = 1, x = (uint64_t)a;
	if (b < 0)
		return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
	while (b) {
		if (b & 1)
			r *= x;
		x *= x;
		b >>= 1;
	}
	return (int64_t)r;
}

/* integer op: u64 when the operands are uint64 (unsigned compares and
 * division); *bad set on division by zero */
static int64_t binary_i(int code, int64_t a, int64_t b, int u64, int fmod_, int left, int *bad)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	switch (code) {
	case B_ADD: return (int64_t)(ua + ub);
	case B_SUB: return (int64_t)(ua - ub);
	case B_MUL: return (int64_t)(ua * ub);
	case B_DIV:
		if (!b) {
			*bad = 1;
			return 0;
		}
		if (u64)
			return (int64_t)(ua / ub);
		if (a == INT64_MIN && b == -1)
			return INT64_MIN;
		return a / b;
	case B_MOD: {
		int64_t r;
		if (!b) {
			*bad = 1;
			return 0;
		}
		if (u64)
			return (int64_t)(ua % ub);
		if (b == -1)
			return 0;
		r = a % b;
		if (!fmod_ && r != 0 && ((r < 0) != (b < 0)))
			r += b;
		return r;
	}
	case B_POW: return ipow(a, b);
	case B_EQ: return a == b;
	case B_LT: return u64 ? ua < ub : a < b;
	case B_GT: return u64 ? ua > ub : a > b;
	case B_LE: return u64 ? ua <= ub : a <= b;
	case B_GE: return u64 ? ua >= ub : a >= b;
	case B_AND: return a && b;
	case B_OR: return a || b;
	case B_XOR: return (a != 0) != (b != 0);
	case B_SHIFT:
		if (ub >= 64)
			return 0;
		return (int64_t)(left ? ua << ub : ua >> ub);
	default: return 0;
	}
}

/* the same rank and dims */
static int same_dims(const loom_tensor *a, const loom_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return 0;
	return 1;
}

/* y = a + b, a - b or a * b of n floats, no broadcast (SSE: the same
 * single-precision operations, four at a time) */
static void same_shape_f(int code, const float *a, const float *b, float *y, int64_t n)
{
	int64_t i = 0;
#if defined(__SSE2__)
	for (; i + 4 <= n; i += 4) {
		__m128 u = _mm_loadu_ps(a + i), v = _mm_loadu_ps(b + i);
		_mm_storeu_ps(y + i, code == B_ADD ? _mm_add_ps(u, v) : code == B_SUB ? _mm_sub_ps(u, v) : _mm_mul_ps(u, v));
	}
#endif
	for (; i < n; i++)
		y[i] = code == B_ADD ? a[i] + b[i] : code == B_SUB ? a[i] - b[i] : a[i] * b[i];
}

int loom_cpu_binary_run(KARGS)
{
	int k = binary_find(n->op_type);
	const loom_tensor *a = IN(0), *b = IN(1);
	const loom_tensor *ops[2] = {a, b};
	loom_tensor *y = OUT(0), view;
	loom_cpu_bcast it;
	int code, fmod_, left, bad = 0;
	if (k < 0)
		return FAIL("not an elementwise binary operator");
	code = binary_ops[k].code;
	ops[1] = code == B_PRELU ? prelu_slope(g, a, b, &view) : legacy_b(g, n, a, b, &view);
	if (loom_cpu_bcast_init(&it, 2, ops, y->rank, y->dims))
		return FAIL("inputs do not broadcast to the output shape");
	fmod_ = (int)loom_attr_int(n, "fmod", 0);
	left = !strcmp(loom_attr_str(n, "direction", ""), "LEFT");
	if (a->dtype == LOOM_DT_FLOAT && b->dtype == LOOM_DT_FLOAT && y->dtype == LOOM_DT_FLOAT &&
	    code <= B_MUL) {
		const float *pa = a->data, *pb = b->data;
		float *py = y->data;
		if (same_dims(a, y) && same_dims(ops[1], y)) {
			same_shape_f(code, pa, pb, py, it.numel);
			return 0;
		}
#define BLOOP(expr)                                                          \
	for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) { \
		float u = pa[it.off[0]], v = pb[it.off[1]];                 \
		py[i] = (expr);                                             \
	}
		switch (code) {
		case B_ADD: BLOOP(u + v); break;
		case B_SUB: BLOOP(u - v); break;
		default: BLOOP(u * v); break;
		}
#undef BLOOP
		return 0;
	}
	if (loom_cpu_is_float(a->dtype) || (code == B_POW && loom_cpu_is_float(b->dtype))) {
		for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
			double u = loom_cpu_get_f(a->data, a->dtype, it.off[0]);
			double v = loom_cpu_get_f(b->data, b->dtype, it.off[1]);
			double r = binary_d(code, u, v);
			if (a->dtype == LOOM_DT_FLOAT && y->dtype == LOOM_DT_FLOAT)
				((float *)y->data)[i] = (float)r;
			else
				loom_cpu_set_f(y->data, y->dtype, i, r);
		}
		return 0;
	}
	{
		int u64 = a->dtype == LOOM_DT_UINT64;
		for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
			int64_t u = loom_cpu_get_i(a->data, a->dtype, it.off[0]);
			int64_t v = loom_cpu_get_i(b->data, b->dtype, it.off[1]);
			loom_cpu_set_i(y->data, y->dtype, i, binary_i(code, u, v, u64, fmod_, left, &bad));
		}
	}
	if (bad)
		return FAIL("integer division by zero");
	return 0;
}

/* ------------------------------------------------------------------ Max, Min, Sum, Mean */

int loom_cpu_variadic_infer(KARGS)
{
	const loom_tensor *t[64] = {0};
	int64_t dims[LOOM_MAX_RANK];
	int rank, fl = OP_IS("Sum") || OP_IS("Mean");
	if (n->ninputs < 1 || n->ninputs > 64)
		return FAIL("expects 1 to 64 inputs, has %d", n->ninputs);
	if (n->noutputs < 1 || !OUT(0))
		return FAIL("has no output");
	for (int i = 0; i < n->ninputs; i++) {
		t[i] = IN(i);
		if (!t[i])
			return FAIL("input %d is missing", i);
		if (t[i]->dtype != t[0]->dtype)
			return FAIL("inputs have different types (%s, %s)", loom_dtype_name(t[0]->dtype),
				    loom_dtype_name(t[i]->dtype));
	}
	if (fl ? !loom_cpu_is_float(t[0]->dtype) : !loom_cpu_is_numeric(t[0]->dtype))
		return FAIL("inputs of type %s are not supported", loom_dtype_name(t[0]->dtype));
	if (loom_cpu_bcast_shape(n->ninputs, t, &rank, dims))
		return FAIL("input shapes do not broadcast");
	loom_cpu_set_shape(OUT(0), t[0]->dtype, rank, dims);
	return 0;
}

int loom_cpu_variadic_run(KARGS)
{
	loom_tensor *y = OUT(0);
	int mx = OP_IS("Max"), mn = OP_IS("Min"), mean = OP_IS("Mean");
	int dt = y->dtype;
	for (int k = 0; k < n->ninputs; k++) {
		const loom_tensor *x = IN(k);
		loom_cpu_bcast it;
		if (loom_cpu_bcast_init(&it, 1, &x, y->rank, y->dims))
			return FAIL("input %d does not broadcast to the output", k);
		if (dt == LOOM_DT_FLOAT) {
			const float *px = x->data;
			float *py = y->data;
			for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
				float v = px[it.off[0]];
				if (k == 0 || (mx && (v > py[i] || v != v)) || (mn && (v < py[i] || v != v)))
					py[i] = v;
				else if (!mx && !mn)
					py[i] += v;
			}
		} else if (loom_cpu_is_float(dt)) {
			for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
				double v = loom_cpu_get_f(x->data, dt, it.off[0]);
				double o = k ? loom_cpu_get_f(y->data, dt, i) : 0;
				if (k == 0 || (mx && (v > o || v != v)) || (mn && (v < o || v != v)))
					o = v;
				else if (!mx && !mn)
					o += v;
				loom_cpu_set_f(y->data, dt, i, o);
			}
		} else {
			int u64 = dt == LOOM_DT_UINT64;
			for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
				int64_t v = loom_cpu_get_i(x->data, dt, it.off[0]);
				int64_t o = k ? loom_cpu_get_i(y->data, dt, i) : 0;
				int gt = u64 ? (uint64_t)v > (uint64_t)o : v > o;
				int lt = u64 ? (uint64_t)v < (uint64_t)o : v < o;
				if (k == 0 || (mx && gt) || (mn && lt))
					o = v;
				loom_cpu_set_i(y->data, dt, i, o);
			}
		}
	}
	if (mean) {
		int64_t cnt = loom_tensor_numel(y);
		for (int64_t i = 0; i < cnt; i++)
			loom_cpu_set_f(y->data, dt, i, loom_cpu_get_f(y->data, dt, i) / n->ninputs);
	}
	return 0;
}

/* ------------------------------------------------------------------ Where */

int loom_cpu_where_infer(KARGS)
{
	const loom_tensor *t[3];
	int64_t dims[LOOM_MAX_RANK];
	int rank;
	if (need_io(g, n, err, errlen, 3, 3))
		return -1;
	for (int i = 0; i < 3; i++)
		t[i] = IN(i);
	if (t[0]->dtype != LOOM_DT_BOOL)
		return FAIL("condition '%s' is %s, not bool", t[0]->name, loom_dtype_name(t[0]->dtype));
	if (t[1]->dtype != t[2]->dtype)
		return FAIL("X and Y have different types (%s, %s)", loom_dtype_name(t[1]->dtype),
			    loom_dtype_name(t[2]->dtype));
	if (loom_cpu_bcast_shape(3, t, &rank, dims))
		return FAIL("input shapes do not broadcast");
	loom_cpu_set_shape(OUT(0), t[1]->dtype, rank, dims);
	return 0;
}

int loom_cpu_where_run(KARGS)
{
	const loom_tensor *t[3] = {IN(0), IN(1), IN(2)};
	loom_tensor *y = OUT(0);
	size_t es = loom_dtype_size(y->dtype);
	const uint8_t *c = t[0]->data;
	const char *px = t[1]->data, *py = t[2]->data;
	char *out = y->data;
	loom_cpu_bcast it;
	if (loom_cpu_bcast_init(&it, 3, t, y->rank, y->dims))
		return FAIL("inputs do not broadcast to the output shape");
	for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it)) {
		const char *src = c[it.off[0]] ? px + (size_t)it.off[1] * es : py + (size_t)it.off[2] * es;
		memcpy(out + (size_t)i * es, src, es);
	}
	return 0;
}
