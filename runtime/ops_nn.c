/* ops_nn.c - Loom's CPU kernels for the neural-network operators (their
 * rows are in runtime/ops.def): Conv and ConvTranspose
 * (1 to 3 spatial dims, groups, strides, dilations, pads, auto_pad,
 * output_padding / output_shape), Gemm and MatMul (batched, broadcast,
 * 1-D), MaxPool (with Indices) / AveragePool / GlobalAveragePool /
 * GlobalMaxPool, BatchNormalization (inference, and training mode),
 * InstanceNormalization, LayerNormalization, LRN,
 * MeanVarianceNormalization, the activations, the elementwise math
 * functions, the binary operators with numpy broadcasting (arithmetic, Pow,
 * Mod, BitShift, comparisons, logic, PRelu), Where, Clip, the variadic
 * Max/Min/Sum/Mean, Not, IsNaN/IsInf, Identity and Dropout (inference;
 * training mode only with ratio 0).
 *
 * Semantics are ONNX's for opsets 7 to 17 (Gelu: 20), every attribute with
 * its default; the opset 1-6 forms that differ (Clip's attributes, the
 * binary operators' broadcast/axis, PRelu's per-channel slope, Dropout's
 * mask type) are read from g->opset. Float math is float32 with float
 * accumulation (im2col + a blocked GEMM for the convolutions); the
 * elementwise math functions are evaluated in double and rounded. The
 * elementwise operators also take double and the integer types (int64
 * shape arithmetic, uint8 data; integers wrap like C, uint64 compares and
 * divides unsigned, integer division by zero is an error); MaxPool takes
 * int8/uint8/double through a float copy.
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "runtime/cpu_ops.h"
#include "ops_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IN(i) loom_node_in(g, n, (i))
#define OUT(i) loom_node_out(g, n, (i))
#define FAIL(...) loom_cpu_fail(g, n, err, errlen, __VA_ARGS__)
#define OP_IS(name) (!strcmp(n->op_type, (name)))

/* the kernel signature's parameters, for the macros above */
#define KARGS loom_graph *g, const loom_node *n, char *err, size_t errlen

/* ------------------------------------------------------------------ helpers */

static void shape_str(const loom_tensor *t, char *buf, size_t len)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, len - o, "[");
	for (int d = 0; d < t->rank && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* inputs [lo, hi] present (lo required), outputs at least one */
static int need_io(KARGS, int lo, int hi)
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

static int need_float(KARGS, const loom_tensor *t, const char *what)
{
	if (t->dtype != LOOM_DT_FLOAT)
		return FAIL("%s '%s' is %s; only float is supported", what, t->name,
			    loom_dtype_name(t->dtype));
	return 0;
}

static const float *fdata(const loom_tensor *t)
{
	return (const float *)t->data;
}

/* a float buffer of cnt elements (at least one), NULL on failure */
static float *falloc(int64_t cnt)
{
	return malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(float));
}

/* a float copy of any numeric tensor's data (malloc'd, NULL on failure) */
static float *to_float(const loom_tensor *t)
{
	int64_t cnt = loom_tensor_numel(t);
	float *p = falloc(cnt);
	if (!p)
		return NULL;
	for (int64_t i = 0; i < cnt; i++)
		p[i] = (float)loom_cpu_get_f(t->data, t->dtype, i);
	return p;
}

static void from_float(loom_tensor *t, const float *p)
{
	int64_t cnt = loom_tensor_numel(t);
	for (int64_t i = 0; i < cnt; i++)
		loom_cpu_set_f(t->data, t->dtype, i, p[i]);
}

/* C[M x N] += op(A) op(B), row-major with leading dimensions; op(A) is
 * M x K. float accumulation (runtime/gemm.c). */
static void gemm_f(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		   const float *B, int64_t ldb, float *C, int64_t ldc)
{
	loom_cpu_gemm_f(ta, tb, M, N, K, A, lda, B, ldb, C, ldc);
}

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
			for (int64_t i = 0; i < cnt; i++)
				b[i] = a[i] > 0 ? a[i] : 0;
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

/* ================================================================== Gemm, MatMul */

int loom_cpu_gemm_infer(KARGS)
{
	const loom_tensor *a, *b, *c;
	int ta = (int)loom_attr_int(n, "transA", 0), tb = (int)loom_attr_int(n, "transB", 0);
	int64_t M, K, K2, N;
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	a = IN(0);
	b = IN(1);
	c = n->ninputs > 2 ? IN(2) : NULL;
	if (need_float(g, n, err, errlen, a, "A") || need_float(g, n, err, errlen, b, "B") ||
	    (c && need_float(g, n, err, errlen, c, "C")))
		return -1;
	if (a->rank != 2 || b->rank != 2)
		return FAIL("A and B must be 2-D (ranks %d, %d)", a->rank, b->rank);
	M = ta ? a->dims[1] : a->dims[0];
	K = ta ? a->dims[0] : a->dims[1];
	K2 = tb ? b->dims[1] : b->dims[0];
	N = tb ? b->dims[0] : b->dims[1];
	if (K != K2)
		return FAIL("inner dimensions differ (A gives K=%lld, B gives K=%lld; transA=%d transB=%d)",
			    (long long)K, (long long)K2, ta, tb);
	{
		int64_t dims[2] = {M, N};
		loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, 2, dims);
		if (c) {
			loom_cpu_bcast it;
			if (loom_cpu_bcast_init(&it, 1, &c, 2, dims)) {
				char s[96];
				shape_str(c, s, sizeof s);
				return FAIL("C of shape %s does not broadcast to [%lld,%lld]", s, (long long)M,
					    (long long)N);
			}
		}
	}
	return 0;
}

int loom_cpu_gemm_run(KARGS)
{
	const loom_tensor *a = IN(0), *b = IN(1), *c = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int ta = (int)loom_attr_int(n, "transA", 0), tb = (int)loom_attr_int(n, "transB", 0);
	float alpha = loom_attr_float(n, "alpha", 1.0f), beta = loom_attr_float(n, "beta", 1.0f);
	int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1];
	float *py = y->data;
	memset(py, 0, (size_t)(M * N) * sizeof(float));
	gemm_f(ta, tb, M, N, K, fdata(a), a->dims[1], fdata(b), b->dims[1], py, N);
	if (alpha != 1.0f)
		for (int64_t i = 0; i < M * N; i++)
			py[i] *= alpha;
	if (c && beta != 0.0f) {
		loom_cpu_bcast it;
		const float *pc = fdata(c);
		if (loom_cpu_bcast_init(&it, 1, &c, 2, y->dims))
			return FAIL("C does not broadcast to the output");
		for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it))
			py[i] += beta * pc[it.off[0]];
	}
	return 0;
}

/* MatMul shapes: the batch shapes of A and B (as tensors for the
 * broadcasting helpers) and M, K, N */
struct mm {
	loom_tensor ba, bb;
	int64_t M, K, N;
	int rank;
	int64_t dims[LOOM_MAX_RANK]; /* the batch shape */
};

static int matmul_shapes(KARGS, struct mm *s, int *orank, int64_t *odims)
{
	const loom_tensor *a = IN(0), *b = IN(1);
	int ra = a->rank, rb = b->rank, r = 0;
	int64_t K2;
	const loom_tensor *bt[2];
	if (ra < 1 || rb < 1)
		return FAIL("inputs must have rank >= 1 (ranks %d, %d)", ra, rb);
	memset(s, 0, sizeof *s);
	s->M = ra == 1 ? 1 : a->dims[ra - 2];
	s->K = a->dims[ra - 1];
	K2 = rb == 1 ? b->dims[0] : b->dims[rb - 2];
	s->N = rb == 1 ? 1 : b->dims[rb - 1];
	if (s->K != K2) {
		char sa[96], sb[96];
		shape_str(a, sa, sizeof sa);
		shape_str(b, sb, sizeof sb);
		return FAIL("inner dimensions differ: %s x %s", sa, sb);
	}
	s->ba.rank = ra > 2 ? ra - 2 : 0;
	memcpy(s->ba.dims, a->dims, sizeof(int64_t) * (size_t)s->ba.rank);
	s->bb.rank = rb > 2 ? rb - 2 : 0;
	memcpy(s->bb.dims, b->dims, sizeof(int64_t) * (size_t)s->bb.rank);
	bt[0] = &s->ba;
	bt[1] = &s->bb;
	if (loom_cpu_bcast_shape(2, bt, &s->rank, s->dims)) {
		char sa[96], sb[96];
		shape_str(a, sa, sizeof sa);
		shape_str(b, sb, sizeof sb);
		return FAIL("batch dimensions of %s and %s do not broadcast", sa, sb);
	}
	for (int d = 0; d < s->rank; d++)
		odims[r++] = s->dims[d];
	if (ra > 1)
		odims[r++] = s->M;
	if (rb > 1)
		odims[r++] = s->N;
	if (r > LOOM_MAX_RANK)
		return FAIL("output rank %d too large", r);
	*orank = r;
	return 0;
}

int loom_cpu_matmul_infer(KARGS)
{
	struct mm s;
	int rank;
	int64_t dims[LOOM_MAX_RANK + 2];
	const loom_tensor *a, *b;
	if (need_io(g, n, err, errlen, 2, 2))
		return -1;
	a = IN(0);
	b = IN(1);
	if (a->dtype != b->dtype)
		return FAIL("inputs have different types (%s, %s)", loom_dtype_name(a->dtype),
			    loom_dtype_name(b->dtype));
	if (!loom_cpu_is_numeric(a->dtype))
		return FAIL("inputs of type %s are not supported", loom_dtype_name(a->dtype));
	if (matmul_shapes(g, n, err, errlen, &s, &rank, dims))
		return -1;
	loom_cpu_set_shape(OUT(0), a->dtype, rank, dims);
	return 0;
}

int loom_cpu_matmul_run(KARGS)
{
	const loom_tensor *a = IN(0), *b = IN(1);
	loom_tensor *y = OUT(0);
	struct mm s;
	int rank;
	int64_t dims[LOOM_MAX_RANK + 2];
	loom_cpu_bcast it;
	const loom_tensor *bt[2];
	if (matmul_shapes(g, n, err, errlen, &s, &rank, dims))
		return -1;
	bt[0] = &s.ba;
	bt[1] = &s.bb;
	if (loom_cpu_bcast_init(&it, 2, bt, s.rank, s.dims))
		return FAIL("batch dimensions do not broadcast");
	if (loom_tensor_bytes(y))
		memset(y->data, 0, loom_tensor_bytes(y));
	for (int64_t bi = 0; bi < it.numel; bi++, loom_cpu_bcast_next(&it)) {
		int64_t oa = it.off[0] * s.M * s.K, ob = it.off[1] * s.K * s.N, oy = bi * s.M * s.N;
		if (a->dtype == LOOM_DT_FLOAT) {
			gemm_f(0, 0, s.M, s.N, s.K, fdata(a) + oa, s.K, fdata(b) + ob, s.N,
			       (float *)y->data + oy, s.N);
			continue;
		}
		for (int64_t i = 0; i < s.M; i++)
			for (int64_t j = 0; j < s.N; j++) {
				if (loom_cpu_is_float(a->dtype)) {
					double acc = 0;
					for (int64_t k = 0; k < s.K; k++)
						acc += loom_cpu_get_f(a->data, a->dtype, oa + i * s.K + k) *
						       loom_cpu_get_f(b->data, b->dtype, ob + k * s.N + j);
					loom_cpu_set_f(y->data, y->dtype, oy + i * s.N + j, acc);
				} else {
					uint64_t acc = 0;
					for (int64_t k = 0; k < s.K; k++)
						acc += (uint64_t)loom_cpu_get_i(a->data, a->dtype, oa + i * s.K + k) *
						       (uint64_t)loom_cpu_get_i(b->data, b->dtype, ob + k * s.N + j);
					loom_cpu_set_i(y->data, y->dtype, oy + i * s.N + j, (int64_t)acc);
				}
			}
	}
	return 0;
}

/* ================================================================== spatial attributes */

static void geo_vols(struct loom_cpu_geo *p)
{
	p->invol = p->in[0] * p->in[1] * p->in[2];
	p->kvol = p->k[0] * p->k[1] * p->k[2];
	p->outvol = p->out[0] * p->out[1] * p->out[2];
}

/* loom_cpu_geo_fwd (cpu_internal.h): the shared spatial geometry */
int loom_cpu_geo_fwd(KARGS, const loom_tensor *x, const int64_t *ks, int pool, struct loom_cpu_geo *p)
{
	int nd = x->rank - 2, cs, cd, cp;
	const int64_t *st = loom_attr_ints(n, "strides", &cs);
	const int64_t *dl = loom_attr_ints(n, "dilations", &cd);
	const int64_t *pd = loom_attr_ints(n, "pads", &cp);
	const char *ap = loom_attr_str(n, "auto_pad", "NOTSET");
	int ceil_mode = pool ? (int)loom_attr_int(n, "ceil_mode", 0) : 0;
	if (nd < 1 || nd > 3)
		return FAIL("input '%s' has rank %d; 1 to 3 spatial dimensions are supported", x->name,
			    x->rank);
	if ((st && cs != nd) || (dl && cd != nd) || (pd && cp != 2 * nd))
		return FAIL("strides/dilations/pads have %d/%d/%d values for %d spatial dims", st ? cs : nd,
			    dl ? cd : nd, pd ? cp : 2 * nd, nd);
	if (strcmp(ap, "NOTSET") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") &&
	    strcmp(ap, "VALID"))
		return FAIL("auto_pad='%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
	p->nd = nd;
	for (int j = 0; j < 3; j++) {
		int i = j - (3 - nd);
		int64_t dk, span;
		if (i < 0) {
			p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
			p->pb[j] = p->pe[j] = 0;
			continue;
		}
		p->in[j] = x->dims[2 + i];
		p->k[j] = ks[i];
		p->s[j] = st ? st[i] : 1;
		p->d[j] = dl ? dl[i] : 1;
		p->pb[j] = pd ? pd[i] : 0;
		p->pe[j] = pd ? pd[nd + i] : 0;
		if (p->k[j] < 1 || p->s[j] < 1 || p->d[j] < 1 || p->pb[j] < 0 || p->pe[j] < 0)
			return FAIL("spatial dim %d: kernel %lld, stride %lld, dilation %lld, pads %lld/%lld "
				    "out of range",
				    i, (long long)p->k[j], (long long)p->s[j], (long long)p->d[j],
				    (long long)p->pb[j], (long long)p->pe[j]);
		dk = (p->k[j] - 1) * p->d[j] + 1;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t tot;
			p->out[j] = (p->in[j] + p->s[j] - 1) / p->s[j];
			tot = (p->out[j] - 1) * p->s[j] + dk - p->in[j];
			if (tot < 0)
				tot = 0;
			if (!strcmp(ap, "SAME_UPPER")) {
				p->pb[j] = tot / 2;
				p->pe[j] = tot - tot / 2;
			} else {
				p->pe[j] = tot / 2;
				p->pb[j] = tot - tot / 2;
			}
			continue;
		}
		if (!strcmp(ap, "VALID"))
			p->pb[j] = p->pe[j] = 0;
		span = p->in[j] + p->pb[j] + p->pe[j] - dk;
		if (span < 0)
			return FAIL("spatial dim %d: the kernel extent %lld exceeds the padded input %lld", i,
				    (long long)dk, (long long)(p->in[j] + p->pb[j] + p->pe[j]));
		if (ceil_mode && strcmp(ap, "VALID")) {
			p->out[j] = (span + p->s[j] - 1) / p->s[j] + 1;
			if ((p->out[j] - 1) * p->s[j] >= p->in[j] + p->pb[j])
				p->out[j]--;
		} else {
			p->out[j] = span / p->s[j] + 1;
		}
	}
	geo_vols(p);
	return 0;
}

static void geo_out_dims(const struct loom_cpu_geo *p, const loom_tensor *x, int64_t C, int64_t *dims)
{
	dims[0] = x->dims[0];
	dims[1] = C;
	for (int i = 0; i < p->nd; i++)
		dims[2 + i] = p->out[3 - p->nd + i];
}

/* Conv and ConvTranspose: X, W and the optional B, float, X and W of the
 * same rank >= 3 */
static int conv_operands(loom_graph *g, const loom_node *n, char *err, size_t errlen, const loom_tensor **x,
			 const loom_tensor **w, const loom_tensor **b)
{
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	*x = IN(0);
	*w = IN(1);
	*b = n->ninputs > 2 ? IN(2) : NULL;
	if (need_float(g, n, err, errlen, *x, "X") || need_float(g, n, err, errlen, *w, "W") ||
	    (*b && need_float(g, n, err, errlen, *b, "B")))
		return -1;
	if ((*x)->rank < 3 || (*w)->rank != (*x)->rank)
		return FAIL("X (rank %d) and W (rank %d) must have the same rank >= 3", (*x)->rank, (*w)->rank);
	return 0;
}

/* kernel_shape, when given, equal to W's spatial dims; B one value per
 * output channel (M) */
static int conv_kernel_bias(loom_graph *g, const loom_node *n, char *err, size_t errlen, const loom_tensor *x,
			    const loom_tensor *w, const loom_tensor *b, int64_t M)
{
	int cks;
	const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cks);
	if (ks) {
		if (cks != x->rank - 2)
			return FAIL("kernel_shape has %d values for %d spatial dims", cks, x->rank - 2);
		for (int i = 0; i < cks; i++)
			if (ks[i] != w->dims[2 + i])
				return FAIL("kernel_shape[%d]=%lld differs from W's dim %lld", i,
					    (long long)ks[i], (long long)w->dims[2 + i]);
	}
	if (b && loom_tensor_numel(b) != M)
		return FAIL("B has %lld values for %lld output channels", (long long)loom_tensor_numel(b),
			    (long long)M);
	return 0;
}

/* ================================================================== Conv */

int loom_cpu_conv_infer(KARGS)
{
	const loom_tensor *x, *w, *b;
	int64_t G = loom_attr_int(n, "group", 1), C, M;
	struct loom_cpu_geo p;
	int64_t dims[LOOM_MAX_RANK];
	if (conv_operands(g, n, err, errlen, &x, &w, &b))
		return -1;
	C = x->dims[1];
	M = w->dims[0];
	if (G < 1 || C % G || M % G || w->dims[1] * G != C)
		return FAIL("group=%lld does not fit X's %lld channels and W's [%lld, %lld, ...]",
			    (long long)G, (long long)C, (long long)M, (long long)w->dims[1]);
	if (conv_kernel_bias(g, n, err, errlen, x, w, b, M))
		return -1;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, &p))
		return -1;
	geo_out_dims(&p, x, M, dims);
	loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, x->rank, dims);
	return 0;
}

/* im2col of one group of one image: col[(c, kz, ky, kx)][(oz, oy, ox)] */
static void im2col(const float *x, int64_t Cg, const struct loom_cpu_geo *p, float *col)
{
	for (int64_t c = 0; c < Cg; c++) {
		const float *xc = x + c * p->invol;
		for (int64_t k0 = 0; k0 < p->k[0]; k0++)
			for (int64_t k1 = 0; k1 < p->k[1]; k1++)
				for (int64_t k2 = 0; k2 < p->k[2]; k2++)
					for (int64_t o0 = 0; o0 < p->out[0]; o0++) {
						int64_t i0 = o0 * p->s[0] - p->pb[0] + k0 * p->d[0];
						for (int64_t o1 = 0; o1 < p->out[1]; o1++) {
							int64_t i1 = o1 * p->s[1] - p->pb[1] + k1 * p->d[1];
							int ok = i0 >= 0 && i0 < p->in[0] && i1 >= 0 && i1 < p->in[1];
							const float *row = xc + (i0 * p->in[1] + i1) * p->in[2];
							for (int64_t o2 = 0; o2 < p->out[2]; o2++) {
								int64_t i2 = o2 * p->s[2] - p->pb[2] + k2 * p->d[2];
								*col++ = ok && i2 >= 0 && i2 < p->in[2] ? row[i2] : 0.0f;
							}
						}
					}
	}
}

int loom_cpu_conv_run(KARGS)
{
	const loom_tensor *x = IN(0), *w = IN(1), *b = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int64_t G = loom_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1], M = w->dims[0];
	int64_t Cg = C / G, Mg = M / G, K;
	struct loom_cpu_geo p;
	int direct = 1;
	float *col = NULL;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, &p))
		return -1;
	K = Cg * p.kvol;
	for (int j = 0; j < 3; j++)
		if (p.k[j] != 1 || p.s[j] != 1 || p.pb[j] || p.pe[j])
			direct = 0;
	if (!direct) {
		col = falloc(K * p.outvol);
		if (!col)
			return FAIL("out of memory for the im2col buffer (%lld floats)",
				    (long long)(K * p.outvol));
	}
	for (int64_t in = 0; in < N; in++)
		for (int64_t gi = 0; gi < G; gi++) {
			const float *xg = fdata(x) + (in * C + gi * Cg) * p.invol;
			float *yg = (float *)y->data + (in * M + gi * Mg) * p.outvol;
			for (int64_t m = 0; m < Mg; m++) {
				float bv = b ? fdata(b)[gi * Mg + m] : 0.0f;
				for (int64_t o = 0; o < p.outvol; o++)
					yg[m * p.outvol + o] = bv;
			}
			if (!direct)
				im2col(xg, Cg, &p, col);
			gemm_f(0, 0, Mg, p.outvol, K, fdata(w) + gi * Mg * K, K, direct ? xg : col, p.outvol,
			       yg, p.outvol);
		}
	free(col);
	return 0;
}

/* ================================================================== ConvTranspose */

static int convt_geo(KARGS, struct loom_cpu_geo *p)
{
	const loom_tensor *x = IN(0), *w = IN(1);
	int nd = x->rank - 2, cs, cd, cp, cop, cos_;
	const int64_t *st = loom_attr_ints(n, "strides", &cs);
	const int64_t *dl = loom_attr_ints(n, "dilations", &cd);
	const int64_t *pd = loom_attr_ints(n, "pads", &cp);
	const int64_t *op = loom_attr_ints(n, "output_padding", &cop);
	const int64_t *os = loom_attr_ints(n, "output_shape", &cos_);
	const char *ap = loom_attr_str(n, "auto_pad", "NOTSET");
	int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
	if (nd < 1 || nd > 3)
		return FAIL("input '%s' has rank %d; 1 to 3 spatial dimensions are supported", x->name,
			    x->rank);
	if ((st && cs != nd) || (dl && cd != nd) || (pd && cp != 2 * nd) || (op && cop != nd) ||
	    (os && cos_ != nd && cos_ != nd + 2))
		return FAIL("strides/dilations/pads/output_padding/output_shape have the wrong number of "
			    "values for %d spatial dims",
			    nd);
	if (os && cos_ == nd + 2)
		os += 2;
	if (strcmp(ap, "NOTSET") && !same && strcmp(ap, "VALID"))
		return FAIL("auto_pad='%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
	p->nd = nd;
	for (int j = 0; j < 3; j++) {
		int i = j - (3 - nd);
		int64_t dk, full, adj;
		if (i < 0) {
			p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
			p->pb[j] = p->pe[j] = 0;
			continue;
		}
		p->in[j] = x->dims[2 + i];
		p->k[j] = w->dims[2 + i];
		p->s[j] = st ? st[i] : 1;
		p->d[j] = dl ? dl[i] : 1;
		p->pb[j] = pd ? pd[i] : 0;
		p->pe[j] = pd ? pd[nd + i] : 0;
		adj = op ? op[i] : 0;
		if (p->s[j] < 1 || p->d[j] < 1 || p->pb[j] < 0 || p->pe[j] < 0 || adj < 0)
			return FAIL("spatial dim %d: stride, dilation, pads or output_padding out of range", i);
		dk = (p->k[j] - 1) * p->d[j] + 1;
		full = p->s[j] * (p->in[j] - 1) + adj + dk;
		if (os || same) {
			int64_t tot;
			p->out[j] = os ? os[i] : p->in[j] * p->s[j];
			tot = full - p->out[j];
			if (tot < 0)
				tot = 0;
			if (!strcmp(ap, "SAME_UPPER")) {
				p->pb[j] = tot / 2;
				p->pe[j] = tot - tot / 2;
			} else {
				p->pb[j] = tot - tot / 2;
				p->pe[j] = tot / 2;
			}
		} else {
			if (!strcmp(ap, "VALID"))
				p->pb[j] = p->pe[j] = 0;
			p->out[j] = full - p->pb[j] - p->pe[j];
		}
		if (p->out[j] < 0)
			return FAIL("spatial dim %d: output size %lld < 0", i, (long long)p->out[j]);
	}
	geo_vols(p);
	return 0;
}

int loom_cpu_convt_infer(KARGS)
{
	const loom_tensor *x, *w, *b;
	int64_t G = loom_attr_int(n, "group", 1), C, M;
	struct loom_cpu_geo p;
	int64_t dims[LOOM_MAX_RANK];
	if (conv_operands(g, n, err, errlen, &x, &w, &b))
		return -1;
	C = x->dims[1];
	if (G < 1 || C % G || w->dims[0] != C)
		return FAIL("group=%lld does not fit X's %lld channels and W's [%lld, %lld, ...]",
			    (long long)G, (long long)C, (long long)w->dims[0], (long long)w->dims[1]);
	M = w->dims[1] * G;
	if (conv_kernel_bias(g, n, err, errlen, x, w, b, M))
		return -1;
	if (convt_geo(g, n, err, errlen, &p))
		return -1;
	geo_out_dims(&p, x, M, dims);
	loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, x->rank, dims);
	return 0;
}

int loom_cpu_convt_run(KARGS)
{
	const loom_tensor *x = IN(0), *w = IN(1), *b = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int64_t G = loom_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1];
	int64_t Cg = C / G, Mg = w->dims[1], M = Mg * G, R;
	struct loom_cpu_geo p;
	float *col;
	if (convt_geo(g, n, err, errlen, &p))
		return -1;
	R = Mg * p.kvol;
	col = falloc(R * p.invol);
	if (!col)
		return FAIL("out of memory for the col2im buffer (%lld floats)", (long long)(R * p.invol));
	for (int64_t in = 0; in < N; in++)
		for (int64_t gi = 0; gi < G; gi++) {
			const float *xg = fdata(x) + (in * C + gi * Cg) * p.invol;
			float *yg = (float *)y->data + (in * M + gi * Mg) * p.outvol;
			memset(col, 0, (size_t)(R * p.invol) * sizeof *col);
			/* col[(m, k)][i] = sum_c W[c][(m, k)] X[c][i] */
			gemm_f(1, 0, R, p.invol, Cg, fdata(w) + gi * Cg * R, R, xg, p.invol, col, p.invol);
			for (int64_t m = 0; m < Mg; m++) {
				float bv = b ? fdata(b)[gi * Mg + m] : 0.0f;
				float *ym = yg + m * p.outvol;
				const float *cm = col + m * p.kvol * p.invol;
				for (int64_t o = 0; o < p.outvol; o++)
					ym[o] = bv;
				for (int64_t k0 = 0; k0 < p.k[0]; k0++)
					for (int64_t k1 = 0; k1 < p.k[1]; k1++)
						for (int64_t k2 = 0; k2 < p.k[2]; k2++, cm += p.invol) {
							const float *c = cm;
							for (int64_t i0 = 0; i0 < p.in[0]; i0++) {
								int64_t o0 = i0 * p.s[0] - p.pb[0] + k0 * p.d[0];
								for (int64_t i1 = 0; i1 < p.in[1]; i1++) {
									int64_t o1 = i1 * p.s[1] - p.pb[1] + k1 * p.d[1];
									int ok = o0 >= 0 && o0 < p.out[0] && o1 >= 0 &&
										 o1 < p.out[1];
									float *row = ym + (o0 * p.out[1] + o1) * p.out[2];
									for (int64_t i2 = 0; i2 < p.in[2]; i2++, c++) {
										int64_t o2 = i2 * p.s[2] - p.pb[2] +
											     k2 * p.d[2];
										if (ok && o2 >= 0 && o2 < p.out[2])
											row[o2] += *c;
									}
								}
							}
						}
			}
		}
	free(col);
	return 0;
}

/* ================================================================== pooling */

int loom_cpu_pool_infer(KARGS)
{
	const loom_tensor *x;
	int maxp = OP_IS("MaxPool"), cks;
	const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cks);
	struct loom_cpu_geo p;
	int64_t dims[LOOM_MAX_RANK];
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (maxp ? !loom_cpu_is_numeric(x->dtype) : !loom_cpu_is_float(x->dtype))
		return FAIL("input '%s' has type %s, not supported", x->name, loom_dtype_name(x->dtype));
	if (!ks || cks != x->rank - 2)
		return FAIL("kernel_shape must have %d values (has %d)", x->rank - 2, ks ? cks : 0);
	if (maxp && loom_attr_int(n, "storage_order", 0) != 0 && loom_attr_int(n, "storage_order", 0) != 1)
		return FAIL("storage_order must be 0 or 1");
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, ks, 1, &p))
		return -1;
	geo_out_dims(&p, x, x->dims[1], dims);
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, dims);
	if (n->noutputs > 1 && OUT(1)) {
		if (!maxp)
			return FAIL("has %d outputs, expects 1", n->noutputs);
		loom_cpu_set_shape(OUT(1), LOOM_DT_INT64, x->rank, dims);
	}
	return 0;
}

int loom_cpu_pool_run(KARGS)
{
	const loom_tensor *x = IN(0);
	loom_tensor *y = OUT(0), *ind = n->noutputs > 1 ? OUT(1) : NULL;
	int maxp = OP_IS("MaxPool");
	int incl = (int)loom_attr_int(n, "count_include_pad", 0);
	int colmajor = (int)loom_attr_int(n, "storage_order", 0) == 1;
	int cks;
	const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cks);
	int64_t planes = x->dims[0] * x->dims[1];
	struct loom_cpu_geo p;
	float *xf = NULL, *yf = NULL;
	const float *xp;
	float *yp;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, ks, 1, &p))
		return -1;
	if (x->dtype == LOOM_DT_FLOAT) {
		xp = fdata(x);
		yp = y->data;
	} else {
		xf = to_float(x);
		yf = falloc(planes * p.outvol);
		if (!xf || !yf) {
			free(xf);
			free(yf);
			return FAIL("out of memory");
		}
		xp = xf;
		yp = yf;
	}
	for (int64_t pl = 0; pl < planes; pl++) {
		const float *xc = xp + pl * p.invol;
		float *yc = yp + pl * p.outvol;
		for (int64_t o0 = 0; o0 < p.out[0]; o0++)
			for (int64_t o1 = 0; o1 < p.out[1]; o1++)
				for (int64_t o2 = 0; o2 < p.out[2]; o2++) {
					int64_t oi = (o0 * p.out[1] + o1) * p.out[2] + o2;
					int64_t s0 = o0 * p.s[0] - p.pb[0], s1 = o1 * p.s[1] - p.pb[1];
					int64_t s2 = o2 * p.s[2] - p.pb[2];
					float best = -INFINITY, sum = 0;
					int64_t bi = -1, cnt = 0, cntpad = 0;
					for (int64_t k0 = 0; k0 < p.k[0]; k0++) {
						int64_t i0 = s0 + k0 * p.d[0];
						int pad0 = i0 >= -p.pb[0] && i0 < p.in[0] + p.pe[0];
						for (int64_t k1 = 0; k1 < p.k[1]; k1++) {
							int64_t i1 = s1 + k1 * p.d[1];
							int pad1 = i1 >= -p.pb[1] && i1 < p.in[1] + p.pe[1];
							for (int64_t k2 = 0; k2 < p.k[2]; k2++) {
								int64_t i2 = s2 + k2 * p.d[2], ii;
								int pad2 = i2 >= -p.pb[2] && i2 < p.in[2] + p.pe[2];
								float v;
								cntpad += pad0 && pad1 && pad2;
								if (i0 < 0 || i0 >= p.in[0] || i1 < 0 || i1 >= p.in[1] ||
								    i2 < 0 || i2 >= p.in[2])
									continue;
								ii = (i0 * p.in[1] + i1) * p.in[2] + i2;
								v = xc[ii];
								cnt++;
								sum += v;
								if (v > best || bi < 0) {
									best = v;
									bi = colmajor ? (i2 * p.in[1] + i1) * p.in[0] + i0
										      : ii;
								}
							}
						}
					}
					if (maxp) {
						yc[oi] = best;
						if (ind)
							((int64_t *)ind->data)[pl * p.outvol + oi] =
								bi < 0 ? -1 : pl * p.invol + bi;
					} else {
						int64_t div = incl ? cntpad : cnt;
						yc[oi] = div ? sum / (float)div : 0.0f;
					}
				}
	}
	if (xf) {
		from_float(y, yf);
		free(xf);
		free(yf);
	}
	return 0;
}

int loom_cpu_gpool_infer(KARGS)
{
	const loom_tensor *x;
	int64_t dims[LOOM_MAX_RANK];
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (need_float(g, n, err, errlen, x, "X"))
		return -1;
	if (x->rank < 3)
		return FAIL("input '%s' has rank %d, expects >= 3", x->name, x->rank);
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < 2 ? x->dims[d] : 1;
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, dims);
	return 0;
}

int loom_cpu_gpool_run(KARGS)
{
	const loom_tensor *x = IN(0);
	float *y = OUT(0)->data;
	int64_t planes = x->dims[0] * x->dims[1], sp = loom_cpu_prod(x->dims, 2, x->rank);
	int maxp = OP_IS("GlobalMaxPool");
	(void)err;
	(void)errlen;
	for (int64_t pl = 0; pl < planes; pl++) {
		const float *xc = fdata(x) + pl * sp;
		float acc = maxp ? -INFINITY : 0.0f;
		for (int64_t i = 0; i < sp; i++)
			acc = maxp ? (xc[i] > acc ? xc[i] : acc) : acc + xc[i];
		y[pl] = maxp ? acc : (sp ? acc / (float)sp : 0.0f);
	}
	return 0;
}

/* ================================================================== normalization */

static int need_param(KARGS, const loom_tensor *t, const char *what, int64_t cnt)
{
	if (!t)
		return FAIL("%s is required", what);
	if (need_float(g, n, err, errlen, t, what))
		return -1;
	if (loom_tensor_numel(t) != cnt)
		return FAIL("%s '%s' has %lld values, expects %lld", what, t->name,
			    (long long)loom_tensor_numel(t), (long long)cnt);
	return 0;
}

/* BatchNormalization: inference with the running statistics; training
 * mode (opset 14's training_mode, or the extra outputs of opsets 7-13)
 * normalizes with the batch statistics and outputs the updated running
 * ones. */
static int bn_training(const loom_graph *g, const loom_node *n)
{
	if (g->opset >= 14)
		return loom_attr_int(n, "training_mode", 0) != 0;
	for (int i = 1; i < n->noutputs; i++)
		if (n->outputs[i] >= 0)
			return 1;
	return 0;
}

int loom_cpu_batchnorm_infer(KARGS)
{
	const loom_tensor *x;
	int64_t C, per;
	int spatial = g->opset < 9 ? (int)loom_attr_int(n, "spatial", 1) : 1;
	const char *names[4] = {"scale", "B", "input_mean", "input_var"};
	if (need_io(g, n, err, errlen, 5, 5))
		return -1;
	x = IN(0);
	if (need_float(g, n, err, errlen, x, "X"))
		return -1;
	if (x->rank < 2)
		return FAIL("X has rank %d, expects >= 2", x->rank);
	C = x->dims[1];
	per = spatial ? C : C * loom_cpu_prod(x->dims, 2, x->rank);
	for (int i = 1; i < 5; i++)
		if (need_param(g, n, err, errlen, IN(i), names[i - 1], per))
			return -1;
	if (bn_training(g, n) && !spatial)
		return FAIL("training mode with spatial=0 is not supported");
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	if (g->opset >= 14 && !bn_training(g, n) && n->noutputs > 1)
		return FAIL("has %d outputs; running_mean and running_var need training_mode=1", n->noutputs);
	for (int i = 1; i < n->noutputs && i < 5; i++)
		if (OUT(i)) {
			int64_t d = C;
			loom_cpu_set_shape(OUT(i), x->dtype, 1, &d);
		}
	if (n->noutputs > 5 || (g->opset >= 14 && n->noutputs > 3))
		return FAIL("has %d outputs, too many", n->noutputs);
	return 0;
}

int loom_cpu_batchnorm_run(KARGS)
{
	const loom_tensor *x = IN(0);
	const float *sc = fdata(IN(1)), *bi = fdata(IN(2)), *mean = fdata(IN(3)), *var = fdata(IN(4));
	float *y = OUT(0)->data;
	float eps = loom_attr_float(n, "epsilon", 1e-5f), mom = loom_attr_float(n, "momentum", 0.9f);
	int spatial = g->opset < 9 ? (int)loom_attr_int(n, "spatial", 1) : 1;
	int64_t N = x->dims[0], C = x->dims[1], S = loom_cpu_prod(x->dims, 2, x->rank);
	(void)err;
	(void)errlen;
	if (!bn_training(g, n)) {
		for (int64_t in = 0; in < N; in++)
			for (int64_t c = 0; c < C; c++) {
				const float *xc = fdata(x) + (in * C + c) * S;
				float *yc = y + (in * C + c) * S;
				for (int64_t s = 0; s < S; s++) {
					int64_t k = spatial ? c : c * S + s;
					float inv = 1.0f / sqrtf(var[k] + eps);
					yc[s] = (xc[s] - mean[k]) * inv * sc[k] + bi[k];
				}
			}
		return 0;
	}
	for (int64_t c = 0; c < C; c++) {
		double sum = 0, sq = 0, m, v, cnt = (double)(N * S);
		float inv;
		for (int64_t in = 0; in < N; in++) {
			const float *xc = fdata(x) + (in * C + c) * S;
			for (int64_t s = 0; s < S; s++)
				sum += xc[s];
		}
		m = cnt ? sum / cnt : 0;
		for (int64_t in = 0; in < N; in++) {
			const float *xc = fdata(x) + (in * C + c) * S;
			for (int64_t s = 0; s < S; s++)
				sq += (xc[s] - m) * (xc[s] - m);
		}
		v = cnt ? sq / cnt : 0;
		inv = (float)(1.0 / sqrt(v + eps));
		for (int64_t in = 0; in < N; in++) {
			const float *xc = fdata(x) + (in * C + c) * S;
			float *yc = y + (in * C + c) * S;
			for (int64_t s = 0; s < S; s++)
				yc[s] = (float)(xc[s] - m) * inv * sc[c] + bi[c];
		}
		/* running_mean, running_var (then opset < 14's saved_mean, saved_var) */
		if (n->noutputs > 1 && OUT(1))
			((float *)OUT(1)->data)[c] = mean[c] * mom + (float)m * (1 - mom);
		if (n->noutputs > 2 && OUT(2))
			((float *)OUT(2)->data)[c] = var[c] * mom + (float)v * (1 - mom);
		if (n->noutputs > 3 && OUT(3))
			((float *)OUT(3)->data)[c] = (float)m;
		if (n->noutputs > 4 && OUT(4))
			((float *)OUT(4)->data)[c] = (float)v;
	}
	return 0;
}

int loom_cpu_instnorm_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 3, 3))
		return -1;
	x = IN(0);
	if (need_float(g, n, err, errlen, x, "input"))
		return -1;
	if (x->rank < 3)
		return FAIL("input has rank %d, expects >= 3", x->rank);
	if (need_param(g, n, err, errlen, IN(1), "scale", x->dims[1]) ||
	    need_param(g, n, err, errlen, IN(2), "B", x->dims[1]))
		return -1;
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_instnorm_run(KARGS)
{
	const loom_tensor *x = IN(0);
	const float *sc = fdata(IN(1)), *bi = fdata(IN(2));
	float *y = OUT(0)->data;
	float eps = loom_attr_float(n, "epsilon", 1e-5f);
	int64_t N = x->dims[0], C = x->dims[1], S = loom_cpu_prod(x->dims, 2, x->rank);
	(void)err;
	(void)errlen;
	for (int64_t in = 0; in < N; in++)
		for (int64_t c = 0; c < C; c++) {
			const float *xc = fdata(x) + (in * C + c) * S;
			float *yc = y + (in * C + c) * S;
			double sum = 0, sq = 0, m, v;
			float inv;
			for (int64_t s = 0; s < S; s++)
				sum += xc[s];
			m = S ? sum / (double)S : 0;
			for (int64_t s = 0; s < S; s++)
				sq += (xc[s] - m) * (xc[s] - m);
			v = S ? sq / (double)S : 0;
			inv = (float)(1.0 / sqrt(v + eps));
			for (int64_t s = 0; s < S; s++)
				yc[s] = (float)(xc[s] - m) * inv * sc[c] + bi[c];
		}
	return 0;
}

/* LayerNormalization (opset 17): normalize over dims [axis, rank) */
int loom_cpu_layernorm_infer(KARGS)
{
	const loom_tensor *x, *sc, *b;
	int axis;
	int64_t dims[LOOM_MAX_RANK];
	loom_tensor norm;
	loom_cpu_bcast it;
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	x = IN(0);
	sc = IN(1);
	b = n->ninputs > 2 ? IN(2) : NULL;
	if (need_float(g, n, err, errlen, x, "X") || need_float(g, n, err, errlen, sc, "Scale") ||
	    (b && need_float(g, n, err, errlen, b, "B")))
		return -1;
	if (loom_attr_int(n, "stash_type", 1) != 1)
		return FAIL("stash_type=%lld is not supported (only 1, float)",
			    (long long)loom_attr_int(n, "stash_type", 1));
	axis = loom_cpu_axis(loom_attr_int(n, "axis", -1), x->rank);
	if (axis < 0)
		return FAIL("axis %lld is out of range for rank %d", (long long)loom_attr_int(n, "axis", -1),
			    x->rank);
	memset(&norm, 0, sizeof norm);
	norm.rank = x->rank - axis;
	memcpy(norm.dims, x->dims + axis, sizeof(int64_t) * (size_t)norm.rank);
	if (loom_cpu_bcast_init(&it, 1, &sc, norm.rank, norm.dims) ||
	    (b && loom_cpu_bcast_init(&it, 1, &b, norm.rank, norm.dims)))
		return FAIL("Scale or B does not broadcast to the normalized shape X[%d:]", axis);
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	for (int d = 0; d < x->rank; d++)
		dims[d] = d < axis ? x->dims[d] : 1;
	for (int i = 1; i < 3 && i < n->noutputs; i++)
		if (OUT(i))
			loom_cpu_set_shape(OUT(i), LOOM_DT_FLOAT, x->rank, dims);
	return 0;
}

int loom_cpu_layernorm_run(KARGS)
{
	const loom_tensor *x = IN(0), *sc = IN(1), *b = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *mo = n->noutputs > 1 ? OUT(1) : NULL, *io = n->noutputs > 2 ? OUT(2) : NULL;
	int axis = loom_cpu_axis(loom_attr_int(n, "axis", -1), x->rank);
	float eps = loom_attr_float(n, "epsilon", 1e-5f);
	int64_t rows = loom_cpu_prod(x->dims, 0, axis), S = loom_cpu_prod(x->dims, axis, x->rank);
	float *y = OUT(0)->data;
	int64_t *soff, *boff;
	loom_tensor norm;
	loom_cpu_bcast it;
	memset(&norm, 0, sizeof norm);
	norm.rank = x->rank - axis;
	memcpy(norm.dims, x->dims + axis, sizeof(int64_t) * (size_t)norm.rank);
	soff = malloc((size_t)(2 * (S ? S : 1)) * sizeof *soff);
	if (!soff)
		return FAIL("out of memory");
	boff = soff + S;
	if (loom_cpu_bcast_init(&it, 1, &sc, norm.rank, norm.dims)) {
		free(soff);
		return FAIL("Scale does not broadcast to the normalized shape");
	}
	for (int64_t i = 0; i < S; i++, loom_cpu_bcast_next(&it))
		soff[i] = it.off[0];
	if (b) {
		if (loom_cpu_bcast_init(&it, 1, &b, norm.rank, norm.dims)) {
			free(soff);
			return FAIL("B does not broadcast to the normalized shape");
		}
		for (int64_t i = 0; i < S; i++, loom_cpu_bcast_next(&it))
			boff[i] = it.off[0];
	}
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = fdata(x) + r * S;
		float *yr = y + r * S;
		float sum = 0, sq = 0, m, inv;
		for (int64_t i = 0; i < S; i++)
			sum += xr[i];
		m = S ? sum / (float)S : 0.0f;
		for (int64_t i = 0; i < S; i++)
			sq += (xr[i] - m) * (xr[i] - m);
		inv = 1.0f / sqrtf((S ? sq / (float)S : 0.0f) + eps);
		for (int64_t i = 0; i < S; i++)
			yr[i] = (xr[i] - m) * inv * fdata(sc)[soff[i]] + (b ? fdata(b)[boff[i]] : 0.0f);
		if (mo)
			((float *)mo->data)[r] = m;
		if (io)
			((float *)io->data)[r] = inv;
	}
	free(soff);
	return 0;
}

/* LRN over channels */
int loom_cpu_lrn_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (need_float(g, n, err, errlen, x, "X"))
		return -1;
	if (x->rank < 2)
		return FAIL("X has rank %d, expects >= 2", x->rank);
	if (loom_attr_int(n, "size", 0) < 1)
		return FAIL("size must be given and >= 1");
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_lrn_run(KARGS)
{
	const loom_tensor *x = IN(0);
	float *y = OUT(0)->data;
	float alpha = loom_attr_float(n, "alpha", 1e-4f), beta = loom_attr_float(n, "beta", 0.75f);
	float bias = loom_attr_float(n, "bias", 1.0f);
	int64_t size = loom_attr_int(n, "size", 1);
	int64_t N = x->dims[0], C = x->dims[1], S = loom_cpu_prod(x->dims, 2, x->rank);
	int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
	(void)err;
	(void)errlen;
	for (int64_t in = 0; in < N; in++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t s = 0; s < S; s++) {
				float sq = 0, v = fdata(x)[(in * C + c) * S + s];
				for (int64_t j = c - lo; j <= c + hi; j++)
					if (j >= 0 && j < C) {
						float u = fdata(x)[(in * C + j) * S + s];
						sq += u * u;
					}
				y[(in * C + c) * S + s] = v / powf(bias + alpha / (float)size * sq, beta);
			}
	return 0;
}

/* MeanVarianceNormalization: (X - mean) / (sqrt(var) + 1e-9) over axes */
static int mvn_axes(KARGS, const loom_tensor *x, int *red)
{
	int cnt;
	const int64_t *ax = loom_attr_ints(n, "axes", &cnt);
	static const int64_t def[3] = {0, 2, 3};
	if (!ax) {
		ax = def;
		cnt = 3;
	}
	memset(red, 0, sizeof(int) * LOOM_MAX_RANK);
	for (int i = 0; i < cnt; i++) {
		int a = loom_cpu_axis(ax[i], x->rank);
		if (a < 0)
			return FAIL("axis %lld is out of range for rank %d", (long long)ax[i], x->rank);
		red[a] = 1;
	}
	return 0;
}

int loom_cpu_mvn_infer(KARGS)
{
	const loom_tensor *x;
	int red[LOOM_MAX_RANK];
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (need_float(g, n, err, errlen, x, "X") || mvn_axes(g, n, err, errlen, x, red))
		return -1;
	loom_cpu_set_shape(OUT(0), x->dtype, x->rank, x->dims);
	return 0;
}

int loom_cpu_mvn_run(KARGS)
{
	const loom_tensor *x = IN(0);
	float *y = OUT(0)->data;
	int red[LOOM_MAX_RANK];
	int64_t cnt = loom_tensor_numel(x), groups = 1, per;
	loom_tensor keep;
	double *sum, *sq;
	if (mvn_axes(g, n, err, errlen, x, red))
		return -1;
	memset(&keep, 0, sizeof keep);
	keep.rank = x->rank;
	for (int d = 0; d < x->rank; d++) {
		keep.dims[d] = red[d] ? 1 : x->dims[d];
		groups *= keep.dims[d];
	}
	per = groups ? cnt / groups : 0;
	sum = calloc((size_t)(2 * (groups ? groups : 1)), sizeof *sum);
	if (!sum)
		return FAIL("out of memory");
	sq = sum + groups;
	for (int pass = 0; pass < 3; pass++) {
		const loom_tensor *kt = &keep;
		loom_cpu_bcast it;
		loom_cpu_bcast_init(&it, 1, &kt, x->rank, x->dims);
		for (int64_t i = 0; i < cnt; i++, loom_cpu_bcast_next(&it)) {
			double v = fdata(x)[i], m = sum[it.off[0]] / (double)per;
			if (pass == 0)
				sum[it.off[0]] += v;
			else if (pass == 1)
				sq[it.off[0]] += (v - m) * (v - m);
			else
				y[i] = (float)((v - m) / (sqrt(sq[it.off[0]] / (double)per) + 1e-9));
		}
	}
	free(sum);
	return 0;
}
