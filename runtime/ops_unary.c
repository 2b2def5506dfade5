/* ops_unary.c - Loom's CPU kernels for the elementwise operators of one
 * input (their rows are in runtime/ops.def): the activations (Relu,
 * LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish, Tanh,
 * Softplus, Softsign, Gelu, ThresholdedRelu, Shrink), the math functions
 * (Neg, Abs, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign, Erf, the
 * trigonometric and hyperbolic functions), IsNaN/IsInf, Not, Identity,
 * Dropout (inference; training mode only with ratio 0) and Clip.
 *
 * Semantics are ONNX's for opsets 7 to 17 (Gelu: 20), every attribute with
 * its default; the older forms that differ (Clip's min/max attributes
 * before opset 11, Dropout's mask type before 10) are read from g->opset.
 * The math functions are evaluated in double and rounded to the output
 * type; they also take double and, where ONNX does, the integer types
 * (computed on int64, wrapping like C). Clip takes every numeric type.
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ================================================================== elementwise: unary */

enum ucode {
	U_RELU, U_LEAKY, U_ELU, U_SELU, U_CELU, U_SIGMOID, U_HSIG, U_HSWISH, U_TANH, U_SOFTPLUS,
	U_SOFTSIGN, U_ERF, U_GELU, U_THRELU, U_SHRINK, U_NEG, U_ABS, U_EXP, U_LOG, U_SQRT,
	U_RECIP, U_FLOOR, U_CEIL, U_ROUND, U_SIGN, U_SIN, U_COS, U_TAN, U_ASIN, U_ACOS, U_ATAN,
	U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH,
};

static const struct {
	const char *op;
	int code;
	int ints; /* integer inputs allowed (computed on int64) */
} unary_ops[] = {
	{"Relu", U_RELU, 1}, {"LeakyRelu", U_LEAKY, 0}, {"Elu", U_ELU, 0}, {"Selu", U_SELU, 0},
	{"Celu", U_CELU, 0}, {"Sigmoid", U_SIGMOID, 0}, {"HardSigmoid", U_HSIG, 0},
	{"HardSwish", U_HSWISH, 0}, {"Tanh", U_TANH, 0}, {"Softplus", U_SOFTPLUS, 0},
	{"Softsign", U_SOFTSIGN, 0}, {"Erf", U_ERF, 0}, {"Gelu", U_GELU, 0},
	{"ThresholdedRelu", U_THRELU, 0}, {"Shrink", U_SHRINK, 1}, {"Neg", U_NEG, 1},
	{"Abs", U_ABS, 1}, {"Exp", U_EXP, 0}, {"Log", U_LOG, 0}, {"Sqrt", U_SQRT, 0},
	{"Reciprocal", U_RECIP, 0}, {"Floor", U_FLOOR, 0}, {"Ceil", U_CEIL, 0},
	{"Round", U_ROUND, 0}, {"Sign", U_SIGN, 1}, {"Sin", U_SIN, 0}, {"Cos", U_COS, 0},
	{"Tan", U_TAN, 0}, {"Asin", U_ASIN, 0}, {"Acos", U_ACOS, 0}, {"Atan", U_ATAN, 0},
	{"Sinh", U_SINH, 0}, {"Cosh", U_COSH, 0}, {"Asinh", U_ASINH, 0}, {"Acosh", U_ACOSH, 0},
	{"Atanh", U_ATANH, 0},
};

struct uparams {
	double alpha, beta, gamma, bias, lambd;
	int tanh_approx;
};

static int unary_find(const char *op)
{
	for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
		if (!strcmp(unary_ops[i].op, op))
			return (int)i;
	return -1;
}

static void unary_params(const loom_node *n, int code, struct uparams *p)
{
	double alpha = 0;
	switch (code) {
	case U_LEAKY: alpha = 0.01; break;
	case U_ELU: case U_CELU: case U_THRELU: alpha = 1.0; break;
	case U_SELU: alpha = 1.67326319217681884765625; break;
	case U_HSIG: alpha = 0.2; break;
	default: break;
	}
	p->alpha = loom_attr_float(n, "alpha", (float)alpha);
	p->beta = loom_attr_float(n, "beta", 0.5f);
	p->gamma = loom_attr_float(n, "gamma", 1.05070102214813232421875f);
	p->bias = loom_attr_float(n, "bias", 0.0f);
	p->lambd = loom_attr_float(n, "lambd", 0.5f);
	p->tanh_approx = !strcmp(loom_attr_str(n, "approximate", "none"), "tanh");
}

static double unary_d(int code, double x, const struct uparams *p)
{
	switch (code) {
	case U_RELU: return x > 0 ? x : 0;
	case U_LEAKY: return x < 0 ? p->alpha * x : x;
	case U_ELU: return x < 0 ? p->alpha * (exp(x) - 1) : x;
	case U_SELU: return x <= 0 ? p->gamma * (p->alpha * exp(x) - p->alpha) : p->gamma * x;
	case U_CELU: return (x > 0 ? x : 0) + fmin(0.0, p->alpha * (exp(x / p->alpha) - 1));
	case U_SIGMOID: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
	case U_HSIG: return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
	case U_HSWISH: return x * fmax(0.0, fmin(1.0, x / 6 + 0.5));
	case U_TANH: return tanh(x);
	case U_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
	case U_SOFTSIGN: return x / (1 + fabs(x));
	case U_ERF: return erf(x);
	case U_GELU:
		if (p->tanh_approx)
			return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
		return 0.5 * x * (1 + erf(x / sqrt(2.0)));
	case U_THRELU: return x > p->alpha ? x : 0;
	case U_SHRINK: return x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0;
	case U_NEG: return -x;
	case U_ABS: return fabs(x);
	case U_EXP: return exp(x);
	case U_LOG: return log(x);
	case U_SQRT: return sqrt(x);
	case U_RECIP: return 1 / x;
	case U_FLOOR: return floor(x);
	case U_CEIL: return ceil(x);
	case U_ROUND: return nearbyint(x); /* half to even in the default rounding mode */
	case U_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x;
	case U_SIN: return sin(x);
	case U_COS: return cos(x);
	case U_TAN: return tan(x);
	case U_ASIN: return asin(x);
	case U_ACOS: return acos(x);
	case U_ATAN: return atan(x);
	case U_SINH: return sinh(x);
	case U_COSH: return cosh(x);
	case U_ASINH: return asinh(x);
	case U_ACOSH: return acosh(x);
	case U_ATANH: return atanh(x);
	default: return x;
	}
}

static int64_t unary_i(int code, int64_t x, const struct uparams *p)
{
	switch (code) {
	case U_RELU: return x > 0 ? x : 0;
	case U_NEG: return (int64_t)(0 - (uint64_t)x);
	case U_ABS: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
	case U_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
	case U_SHRINK: {
		double v = (double)x;
		return loom_cpu_f2i(v < -p->lambd ? v + p->bias : v > p->lambd ? v - p->bias : 0);
	}
	default: return x;
	}
}

int loom_cpu_unary_infer(KARGS)
{
	int k = unary_find(n->op_type);
	const loom_tensor *x;
	if (k < 0)
		return FAIL("not an elementwise unary operator");
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (!loom_cpu_is_float(x->dtype) && !(unary_ops[k].ints && loom_cpu_is_int(x->dtype)))
		return FAIL("input '%s' has type %s, not supported", x->name, loom_dtype_name(x->dtype));
	if (unary_ops[k].code == U_GELU) {
		const char *a = loom_attr_str(n, "approximate", "none");
		if (strcmp(a, "none") && strcmp(a, "tanh"))
			return FAIL("approximate='%s' is not 'none' or 'tanh'", a);
	}
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

/* b = max(a, 0) as a > 0 ? a : 0: MAXPS returns its second operand (+0)
 * for a NaN and for zeros of either sign, as the comparison does */
static void relu_f(const float *a, float *b, int64_t cnt)
{
	int64_t i = 0;
#if defined(__SSE2__)
	const __m128 z = _mm_setzero_ps();
	for (; i + 4 <= cnt; i += 4)
		_mm_storeu_ps(b + i, _mm_max_ps(_mm_loadu_ps(a + i), z));
#endif
	for (; i < cnt; i++)
		b[i] = a[i] > 0 ? a[i] : 0;
}

int loom_cpu_unary_run(KARGS)
{
	int k = unary_find(n->op_type);
	const loom_tensor *x = IN(0);
	loom_tensor *y = OUT(0);
	int64_t cnt = loom_tensor_numel(x);
	struct uparams p;
	int code;
	if (k < 0)
		return FAIL("not an elementwise unary operator");
	code = unary_ops[k].code;
	unary_params(n, code, &p);
	if (x->dtype == LOOM_DT_FLOAT) {
		const float *a = fdata(x);
		float *b = y->data;
		if (code == U_RELU) {
			relu_f(a, b, cnt);
		} else {
			for (int64_t i = 0; i < cnt; i++)
				b[i] = (float)unary_d(code, a[i], &p);
		}
	} else if (x->dtype == LOOM_DT_DOUBLE) {
		const double *a = x->data;
		double *b = y->data;
		for (int64_t i = 0; i < cnt; i++)
			b[i] = unary_d(code, a[i], &p);
	} else {
		for (int64_t i = 0; i < cnt; i++)
			loom_cpu_set_i(y->data, y->dtype, i,
				       unary_i(code, loom_cpu_get_i(x->data, x->dtype, i), &p));
	}
	return 0;
}

/* IsNaN, IsInf: bool outputs */
int loom_cpu_isx_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (!loom_cpu_is_float(x->dtype))
		return FAIL("input '%s' has type %s, not float", x->name, loom_dtype_name(x->dtype));
	loom_cpu_set_shape(OUT(0), LOOM_DT_BOOL, x->rank, x->dims);
	return 0;
}

int loom_cpu_isx_run(KARGS)
{
	const loom_tensor *x = IN(0);
	uint8_t *y = OUT(0)->data;
	int64_t cnt = loom_tensor_numel(x);
	int isnan_op = OP_IS("IsNaN");
	int neg = (int)loom_attr_int(n, "detect_negative", 1);
	(void)err;
	(void)errlen;
	int pos = (int)loom_attr_int(n, "detect_positive", 1);
	for (int64_t i = 0; i < cnt; i++) {
		double v = loom_cpu_get_f(x->data, x->dtype, i);
		if (isnan_op)
			y[i] = isnan(v) != 0;
		else
			y[i] = isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
	}
	return 0;
}

/* Not: bool */
int loom_cpu_not_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (x->dtype != LOOM_DT_BOOL)
		return FAIL("input '%s' has type %s, not bool", x->name, loom_dtype_name(x->dtype));
	loom_cpu_set_shape(OUT(0), LOOM_DT_BOOL, x->rank, x->dims);
	return 0;
}

int loom_cpu_not_run(KARGS)
{
	const uint8_t *x = IN(0)->data;
	uint8_t *y = OUT(0)->data;
	int64_t cnt = loom_tensor_numel(IN(0));
	(void)err;
	(void)errlen;
	for (int64_t i = 0; i < cnt; i++)
		y[i] = !x[i];
	return 0;
}

/* Identity: any type */
int loom_cpu_identity_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_identity_run(KARGS)
{
	size_t bytes = loom_tensor_bytes(IN(0));
	(void)err;
	(void)errlen;
	if (bytes)
		memcpy(OUT(0)->data, IN(0)->data, bytes);
	return 0;
}

/* Dropout in inference mode: the input, and a mask of ones (bool from
 * opset 10, the input's type before). Training mode (opset 12's
 * training_mode input true) only with ratio 0. */
int loom_cpu_dropout_infer(KARGS)
{
	const loom_tensor *x;
	loom_tensor *mask;
	if (need_io(g, n, err, errlen, 1, g->opset >= 12 ? 3 : 1))
		return -1;
	x = IN(0);
	if (!loom_cpu_is_float(x->dtype))
		return FAIL("input '%s' has type %s, not float", x->name, loom_dtype_name(x->dtype));
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	mask = n->noutputs > 1 ? OUT(1) : NULL;
	if (mask)
		loom_cpu_set_shape(mask, g->opset >= 10 ? LOOM_DT_BOOL : x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_dropout_run(KARGS)
{
	const loom_tensor *x = IN(0);
	const loom_tensor *ratio = n->ninputs > 1 ? IN(1) : NULL;
	const loom_tensor *train = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *mask = n->noutputs > 1 ? OUT(1) : NULL;
	int64_t cnt = loom_tensor_numel(x);
	if (train && loom_tensor_numel(train) >= 1 && loom_cpu_get_i(train->data, train->dtype, 0)) {
		double r = ratio && loom_tensor_numel(ratio) ? loom_cpu_get_f(ratio->data, ratio->dtype, 0)
							     : 0.5;
		if (r != 0)
			return FAIL("training_mode=true with ratio %g (random dropout) is not supported", r);
	}
	if (cnt)
		memcpy(OUT(0)->data, x->data, loom_tensor_bytes(x));
	if (mask)
		for (int64_t i = 0; i < cnt; i++)
			loom_cpu_set_i(mask->data, mask->dtype, i, 1);
	return 0;
}

/* ------------------------------------------------------------------ Clip */

int loom_cpu_clip_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, g->opset >= 11 ? 3 : 1))
		return -1;
	x = IN(0);
	if (!loom_cpu_is_numeric(x->dtype))
		return FAIL("input '%s' has type %s, not numeric", x->name, loom_dtype_name(x->dtype));
	for (int i = 1; i < n->ninputs; i++) {
		const loom_tensor *b = IN(i);
		if (!b)
			continue;
		if (b->dtype != x->dtype)
			return FAIL("%s '%s' is %s, the input %s", i == 1 ? "min" : "max", b->name,
				    loom_dtype_name(b->dtype), loom_dtype_name(x->dtype));
		if (loom_tensor_numel(b) != 1 && loom_tensor_numel(b) != 0)
			return FAIL("%s '%s' is not a scalar", i == 1 ? "min" : "max", b->name);
	}
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_clip_run(KARGS)
{
	const loom_tensor *x = IN(0);
	const loom_tensor *lo_t = n->ninputs > 1 ? IN(1) : NULL;
	const loom_tensor *hi_t = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int64_t cnt = loom_tensor_numel(x);
	(void)err;
	(void)errlen;
	if (lo_t && !loom_tensor_numel(lo_t))
		lo_t = NULL;
	if (hi_t && !loom_tensor_numel(hi_t))
		hi_t = NULL;
	if (loom_cpu_is_float(x->dtype)) {
		double lo = x->dtype == LOOM_DT_FLOAT ? -FLT_MAX : -DBL_MAX;
		double hi = -lo;
		if (g->opset < 11) {
			lo = loom_attr_float(n, "min", (float)lo);
			hi = loom_attr_float(n, "max", (float)hi);
			if (!loom_node_attr(n, "min"))
				lo = x->dtype == LOOM_DT_FLOAT ? -FLT_MAX : -DBL_MAX;
			if (!loom_node_attr(n, "max"))
				hi = x->dtype == LOOM_DT_FLOAT ? FLT_MAX : DBL_MAX;
		}
		if (lo_t)
			lo = loom_cpu_get_f(lo_t->data, lo_t->dtype, 0);
		if (hi_t)
			hi = loom_cpu_get_f(hi_t->data, hi_t->dtype, 0);
		if (x->dtype == LOOM_DT_FLOAT) {
			const float *a = x->data;
			float *b = y->data, l = (float)lo, h = (float)hi;
			for (int64_t i = 0; i < cnt; i++) {
				float v = a[i] < l ? l : a[i];
				b[i] = v > h ? h : v;
			}
		} else {
			for (int64_t i = 0; i < cnt; i++) {
				double v = loom_cpu_get_f(x->data, x->dtype, i);
				v = v < lo ? lo : v;
				loom_cpu_set_f(y->data, y->dtype, i, v > hi ? hi : v);
			}
		}
		return 0;
	}
	{
		int u64 = x->dtype == LOOM_DT_UINT64;
		int64_t lo = u64 ? 0 : INT64_MIN, hi = u64 ? -1 : INT64_MAX;
		if (lo_t)
			lo = loom_cpu_get_i(lo_t->data, lo_t->dtype, 0);
		if (hi_t)
			hi = loom_cpu_get_i(hi_t->data, hi_t->dtype, 0);
		for (int64_t i = 0; i < cnt; i++) {
			int64_t v = loom_cpu_get_i(x->data, x->dtype, i);
			if (u64) {
				if ((uint64_t)v < (uint64_t)lo)
					v = lo;
				if ((uint64_t)v > (uint64_t)hi)
					v = hi;
			} else {
				v = v < lo ? lo : v;
				v = v > hi ? hi : v;
			}
			loom_cpu_set_i(y->data, y->dtype, i, v);
		}
	}
	return 0;
}
