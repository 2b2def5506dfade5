/* ops_quant.c - Loom's CPU kernels for the ONNX quantization operators
 * (their rows are in runtime/ops.def): QuantizeLinear and
 * DequantizeLinear (opset 10 per-tensor; from opset 13 also per-axis with
 * the axis attribute), DynamicQuantizeLinear (uint8), MatMulInteger and
 * ConvInteger (int32 results), QLinearMatMul and QLinearConv. These are what
 * the QDQ and QOperator models of ONNX Runtime's quantization tool contain.
 *
 * Semantics are ONNX Runtime's CPU kernels': quantization computes
 * x / scale in float32, rounds half to even, adds the zero point and
 * saturates to the output type (uint8 or int8, the zero point's type;
 * uint8 without one); dequantization is (float)(x - zero_point) * scale.
 * The integer products accumulate (x - x_zero_point) * (w - w_zero_point)
 * exactly in int32 (int64 internally, wrapped to int32); QLinear*
 * requantize an accumulator with the float32 multiplier
 * a_scale * b_scale / y_scale (per output channel / column where the
 * weight scale is), round half to even, add y_zero_point and saturate.
 * DynamicQuantizeLinear takes scale = (max(0, max x) - min(0, min x)) / 255
 * (1 when that range is empty, as ONNX Runtime does) and zero point
 * round(saturate(-min / scale)). Zero points: a scalar / one value, or per
 * row of A / per column of B (MatMulInteger, QLinearMatMul), per output
 * channel of W (ConvInteger, QLinearConv). Convolutions: 1 to 3 spatial
 * dims, groups, strides, dilations, pads, auto_pad; padding contributes
 * zero (it is the zero point).
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

/* optional input i (NULL when omitted) */
static const loom_tensor *opt_in(KARGS, int i)
{
	(void)err;
	(void)errlen;
	return i < n->ninputs ? IN(i) : NULL;
}

static int is_q8(int dt)
{
	return dt == LOOM_DT_UINT8 || dt == LOOM_DT_INT8;
}

static int need_q8(KARGS, const loom_tensor *t, const char *what)
{
	if (!is_q8(t->dtype))
		return FAIL("%s '%s' is %s; uint8 or int8 expected", what, t->name,
			    loom_dtype_name(t->dtype));
	return 0;
}

static int need_fscale(KARGS, const loom_tensor *t, const char *what)
{
	if (t->dtype != LOOM_DT_FLOAT)
		return FAIL("%s '%s' is %s; float expected", what, t->name, loom_dtype_name(t->dtype));
	return 0;
}

/* the saturation range of a quantized type */
static void qrange(int dt, int32_t *lo, int32_t *hi)
{
	if (dt == LOOM_DT_INT8) {
		*lo = -128;
		*hi = 127;
	} else {
		*lo = 0;
		*hi = 255;
	}
}

/* round half to even (the default rounding mode), add zp, saturate; NaN -> zp */
static int32_t quant_round(float v, int32_t zp, int32_t lo, int32_t hi)
{
	float r = nearbyintf(v);
	if (r != r)
		r = 0.0f;
	r += (float)zp;
	if (r < (float)lo)
		return lo;
	if (r > (float)hi)
		return hi;
	return (int32_t)r;
}

/* a parameter tensor (scale or zero point) of numel 1 or cnt: its value for
 * index i; p NULL -> def */
static double param_f(const loom_tensor *p, int64_t i, double def)
{
	if (!p)
		return def;
	return loom_cpu_get_f(p->data, p->dtype, loom_tensor_numel(p) == 1 ? 0 : i);
}

static int32_t param_i(const loom_tensor *p, int64_t i)
{
	if (!p)
		return 0;
	return (int32_t)loom_cpu_get_i(p->data, p->dtype, loom_tensor_numel(p) == 1 ? 0 : i);
}

/* ================================================================== QuantizeLinear, DequantizeLinear */

/* Per-tensor or per-axis layout of x against scale (and zp): *outer,
 * *ch, *inner with x = [outer, ch, inner]; ch == 1 for per-tensor. */
static int qdq_layout(KARGS, const loom_tensor *x, const loom_tensor *s, const loom_tensor *zp,
		      int64_t *outer, int64_t *ch, int64_t *inner)
{
	int64_t sn = loom_tensor_numel(s);
	*outer = loom_tensor_numel(x);
	*ch = 1;
	*inner = 1;
	if (zp && loom_tensor_numel(zp) != sn)
		return FAIL("zero point '%s' has %lld values, scale '%s' %lld", zp->name,
			    (long long)loom_tensor_numel(zp), s->name, (long long)sn);
	if (sn == 1 && s->rank <= 1)
		return 0;
	if (g->opset < 13 || s->rank != 1)
		return FAIL("scale '%s' must be a scalar%s", s->name,
			    g->opset < 13 ? "" : " or a 1-D tensor (per-axis)");
	{
		int ax = loom_cpu_axis(loom_attr_int(n, "axis", 1), x->rank);
		if (ax < 0)
			return FAIL("axis=%lld out of range for rank %d",
				    (long long)loom_attr_int(n, "axis", 1), x->rank);
		if (x->dims[ax] != sn)
			return FAIL("scale '%s' has %lld values for axis %d of size %lld", s->name,
				    (long long)sn, ax, (long long)x->dims[ax]);
		*outer = loom_cpu_prod(x->dims, 0, ax);
		*ch = sn;
		*inner = loom_cpu_prod(x->dims, ax + 1, x->rank);
	}
	return 0;
}

int loom_cpu_quantize_infer(KARGS)
{
	const loom_tensor *x, *s, *zp;
	int64_t o, c, i;
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	x = IN(0);
	s = IN(1);
	zp = opt_in(g, n, err, errlen, 2);
	if (x->dtype != LOOM_DT_FLOAT && x->dtype != LOOM_DT_INT32)
		return FAIL("x '%s' is %s; float or int32 expected", x->name, loom_dtype_name(x->dtype));
	if (need_fscale(g, n, err, errlen, s, "scale") ||
	    (zp && need_q8(g, n, err, errlen, zp, "zero point")))
		return -1;
	if (qdq_layout(g, n, err, errlen, x, s, zp, &o, &c, &i))
		return -1;
	loom_cpu_set_shape(OUT(0), zp ? zp->dtype : LOOM_DT_UINT8, x->rank, x->dims);
	return 0;
}

int loom_cpu_quantize_run(KARGS)
{
	const loom_tensor *x = IN(0), *s = IN(1), *zp = opt_in(g, n, err, errlen, 2);
	loom_tensor *y = OUT(0);
	int64_t outer, ch, inner, k = 0;
	int32_t lo, hi;
	if (qdq_layout(g, n, err, errlen, x, s, zp, &outer, &ch, &inner))
		return -1;
	qrange(y->dtype, &lo, &hi);
	for (int64_t a = 0; a < outer; a++)
		for (int64_t c = 0; c < ch; c++) {
			float sc = (float)param_f(s, c, 1.0);
			int32_t z = param_i(zp, c);
			for (int64_t b = 0; b < inner; b++, k++) {
				float v = x->dtype == LOOM_DT_FLOAT ? ((const float *)x->data)[k]
								    : (float)((const int32_t *)x->data)[k];
				loom_cpu_set_i(y->data, y->dtype, k, quant_round(v / sc, z, lo, hi));
			}
		}
	return 0;
}

int loom_cpu_dequantize_infer(KARGS)
{
	const loom_tensor *x, *s, *zp;
	int64_t o, c, i;
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	x = IN(0);
	s = IN(1);
	zp = opt_in(g, n, err, errlen, 2);
	if (!is_q8(x->dtype) && x->dtype != LOOM_DT_INT32)
		return FAIL("x '%s' is %s; uint8, int8 or int32 expected", x->name,
			    loom_dtype_name(x->dtype));
	if (need_fscale(g, n, err, errlen, s, "scale"))
		return -1;
	if (zp && zp->dtype != x->dtype)
		return FAIL("zero point '%s' is %s, x is %s", zp->name, loom_dtype_name(zp->dtype),
			    loom_dtype_name(x->dtype));
	if (qdq_layout(g, n, err, errlen, x, s, zp, &o, &c, &i))
		return -1;
	loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, x->rank, x->dims);
	return 0;
}

int loom_cpu_dequantize_run(KARGS)
{
	const loom_tensor *x = IN(0), *s = IN(1), *zp = opt_in(g, n, err, errlen, 2);
	float *y = OUT(0)->data;
	int64_t outer, ch, inner, k = 0;
	if (qdq_layout(g, n, err, errlen, x, s, zp, &outer, &ch, &inner))
		return -1;
	for (int64_t a = 0; a < outer; a++)
		for (int64_t c = 0; c < ch; c++) {
			float sc = (float)param_f(s, c, 1.0);
			int32_t z = param_i(zp, c);
			if (x->dtype == LOOM_DT_INT32 && z != 0)
				return FAIL("int32 input needs a zero point of 0 (has %d)", (int)z);
			for (int64_t b = 0; b < inner; b++, k++) {
				int32_t v = (int32_t)loom_cpu_get_i(x->data, x->dtype, k);
				y[k] = (float)(int32_t)((uint32_t)v - (uint32_t)z) * sc;
			}
		}
	return 0;
}

/* ================================================================== DynamicQuantizeLinear */

int loom_cpu_dynq_infer(KARGS)
{
	const loom_tensor *x;
	if (need_io(g, n, err, errlen, 1, 1))
		return -1;
	x = IN(0);
	if (x->dtype != LOOM_DT_FLOAT)
		return FAIL("x '%s' is %s; float expected", x->name, loom_dtype_name(x->dtype));
	loom_cpu_set_shape(OUT(0), LOOM_DT_UINT8, x->rank, x->dims);
	if (n->noutputs > 1 && OUT(1))
		loom_cpu_set_shape(OUT(1), LOOM_DT_FLOAT, 0, NULL);
	if (n->noutputs > 2 && OUT(2))
		loom_cpu_set_shape(OUT(2), LOOM_DT_UINT8, 0, NULL);
	return 0;
}

int loom_cpu_dynq_run(KARGS)
{
	const loom_tensor *x = IN(0);
	const float *px = x->data;
	uint8_t *py = OUT(0)->data;
	int64_t cnt = loom_tensor_numel(x);
	float mn = 0.0f, mx = 0.0f, sc, zf;
	int32_t zp;
	(void)err;
	(void)errlen;
	for (int64_t i = 0; i < cnt; i++) {
		if (px[i] < mn)
			mn = px[i];
		if (px[i] > mx)
			mx = px[i];
	}
	sc = mx == mn ? 1.0f : (mx - mn) / 255.0f;
	zf = 0.0f - mn / sc;
	zf = zf < 0.0f ? 0.0f : zf > 255.0f ? 255.0f : zf;
	zp = (int32_t)nearbyintf(zf);
	for (int64_t i = 0; i < cnt; i++)
		py[i] = (uint8_t)quant_round(px[i] / sc, zp, 0, 255);
	if (n->noutputs > 1 && OUT(1))
		*(float *)OUT(1)->data = sc;
	if (n->noutputs > 2 && OUT(2))
		*(uint8_t *)OUT(2)->data = (uint8_t)zp;
	return 0;
}

/* ================================================================== MatMulInteger, QLinearMatMul */

/* MatMul shapes: the batch shapes of A and B (as tensors for the
 * broadcasting helpers), M, K, N and the output shape */
struct mm {
	loom_tensor ba, bb;
	int64_t M, K, N;
	int rank;                    /* of the batch shape */
	int64_t dims[LOOM_MAX_RANK]; /* the batch shape */
	int orank;
	int64_t odims[LOOM_MAX_RANK + 2];
};

static int mm_shapes(KARGS, const loom_tensor *a, const loom_tensor *b, struct mm *s)
{
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
	if (s->K != K2)
		return FAIL("inner dimensions differ (%lld, %lld)", (long long)s->K, (long long)K2);
	s->ba.rank = ra > 2 ? ra - 2 : 0;
	memcpy(s->ba.dims, a->dims, sizeof(int64_t) * (size_t)s->ba.rank);
	s->bb.rank = rb > 2 ? rb - 2 : 0;
	memcpy(s->bb.dims, b->dims, sizeof(int64_t) * (size_t)s->bb.rank);
	bt[0] = &s->ba;
	bt[1] = &s->bb;
	if (loom_cpu_bcast_shape(2, bt, &s->rank, s->dims))
		return FAIL("batch dimensions of A and B do not broadcast");
	for (int d = 0; d < s->rank; d++)
		s->odims[r++] = s->dims[d];
	if (ra > 1)
		s->odims[r++] = s->M;
	if (rb > 1)
		s->odims[r++] = s->N;
	if (r > LOOM_MAX_RANK)
		return FAIL("output rank %d too large", r);
	s->orank = r;
	return 0;
}

/* A zero point / scale of A: one value, per row (M values) or per row and
 * batch (the batch elements of A times M); rows = M, nb = A's batch count.
 * Same for B with per column (N). */
static int mm_param_ok(KARGS, const loom_tensor *p, int64_t rows, int64_t nb, const char *what)
{
	int64_t c;
	if (!p)
		return 0;
	c = loom_tensor_numel(p);
	if (c != 1 && c != rows && c != rows * nb)
		return FAIL("%s '%s' has %lld values; 1, %lld or %lld expected", what, p->name,
			    (long long)c, (long long)rows, (long long)(rows * nb));
	return 0;
}

/* index into such a parameter for batch bi, row r */
static int64_t mm_param_idx(const loom_tensor *p, int64_t rows, int64_t bi, int64_t r)
{
	int64_t c = loom_tensor_numel(p);
	return c == 1 ? 0 : c == rows ? r : bi * rows + r;
}

/* int32 accumulators acc[M x N] of one batch pair: (a - azp) x (b - bzp) */
static void mm_int(const struct mm *s, const loom_tensor *a, int64_t oa, const loom_tensor *azp,
		   int64_t ba, const loom_tensor *b, int64_t ob, const loom_tensor *bzp, int64_t bb,
		   int32_t *ai, int32_t *bi, int64_t *acc)
{
	for (int64_t i = 0; i < s->M; i++) {
		int32_t z = azp ? param_i(azp, mm_param_idx(azp, s->M, ba, i)) : 0;
		for (int64_t k = 0; k < s->K; k++)
			ai[i * s->K + k] = (int32_t)loom_cpu_get_i(a->data, a->dtype, oa + i * s->K + k) - z;
	}
	for (int64_t k = 0; k < s->K; k++)
		for (int64_t j = 0; j < s->N; j++) {
			int32_t z = bzp ? param_i(bzp, mm_param_idx(bzp, s->N, bb, j)) : 0;
			bi[k * s->N + j] = (int32_t)loom_cpu_get_i(b->data, b->dtype, ob + k * s->N + j) - z;
		}
	memset(acc, 0, sizeof(int64_t) * (size_t)(s->M * s->N));
	for (int64_t i = 0; i < s->M; i++)
		for (int64_t k = 0; k < s->K; k++) {
			int64_t av = ai[i * s->K + k];
			const int32_t *brow = bi + k * s->N;
			int64_t *c = acc + i * s->N;
			if (!av)
				continue;
			for (int64_t j = 0; j < s->N; j++)
				c[j] += av * brow[j];
		}
}

/* batch counts of A and B */
static int64_t batch_of(const loom_tensor *t)
{
	return loom_cpu_prod(t->dims, 0, t->rank);
}

int loom_cpu_matmulint_infer(KARGS)
{
	const loom_tensor *a, *b, *az, *bz;
	struct mm s;
	if (need_io(g, n, err, errlen, 2, 4))
		return -1;
	a = IN(0);
	b = IN(1);
	az = opt_in(g, n, err, errlen, 2);
	bz = opt_in(g, n, err, errlen, 3);
	if (need_q8(g, n, err, errlen, a, "A") || need_q8(g, n, err, errlen, b, "B") ||
	    (az && need_q8(g, n, err, errlen, az, "a_zero_point")) ||
	    (bz && need_q8(g, n, err, errlen, bz, "b_zero_point")))
		return -1;
	if (mm_shapes(g, n, err, errlen, a, b, &s) ||
	    mm_param_ok(g, n, err, errlen, az, s.M, batch_of(&s.ba), "a_zero_point") ||
	    mm_param_ok(g, n, err, errlen, bz, s.N, batch_of(&s.bb), "b_zero_point"))
		return -1;
	loom_cpu_set_shape(OUT(0), LOOM_DT_INT32, s.orank, s.odims);
	return 0;
}

int loom_cpu_qlmatmul_infer(KARGS)
{
	const loom_tensor *a, *as, *az, *b, *bs, *bz, *ys, *yz;
	struct mm s;
	if (need_io(g, n, err, errlen, 8, 8))
		return -1;
	a = IN(0);
	as = IN(1);
	az = IN(2);
	b = IN(3);
	bs = IN(4);
	bz = IN(5);
	ys = IN(6);
	yz = IN(7);
	if (need_q8(g, n, err, errlen, a, "a") || need_q8(g, n, err, errlen, b, "b") ||
	    need_q8(g, n, err, errlen, az, "a_zero_point") ||
	    need_q8(g, n, err, errlen, bz, "b_zero_point") ||
	    need_q8(g, n, err, errlen, yz, "y_zero_point") ||
	    need_fscale(g, n, err, errlen, as, "a_scale") ||
	    need_fscale(g, n, err, errlen, bs, "b_scale") ||
	    need_fscale(g, n, err, errlen, ys, "y_scale"))
		return -1;
	if (loom_tensor_numel(ys) != 1 || loom_tensor_numel(yz) != 1)
		return FAIL("y_scale and y_zero_point must be scalars");
	if (mm_shapes(g, n, err, errlen, a, b, &s) ||
	    mm_param_ok(g, n, err, errlen, as, s.M, batch_of(&s.ba), "a_scale") ||
	    mm_param_ok(g, n, err, errlen, az, s.M, batch_of(&s.ba), "a_zero_point") ||
	    mm_param_ok(g, n, err, errlen, bs, s.N, batch_of(&s.bb), "b_scale") ||
	    mm_param_ok(g, n, err, errlen, bz, s.N, batch_of(&s.bb), "b_zero_point"))
		return -1;
	loom_cpu_set_shape(OUT(0), yz->dtype, s.orank, s.odims);
	return 0;
}

/* MatMulInteger (ql 0: inputs a, b, a_zp, b_zp) or QLinearMatMul (ql 1) */
static int mm_run(KARGS, int ql)
{
	const loom_tensor *a = IN(0), *b = IN(ql ? 3 : 1);
	const loom_tensor *az = opt_in(g, n, err, errlen, 2), *bz = opt_in(g, n, err, errlen, ql ? 5 : 3);
	const loom_tensor *as = ql ? IN(1) : NULL, *bs = ql ? IN(4) : NULL, *ys = ql ? IN(6) : NULL;
	const loom_tensor *yz = ql ? IN(7) : NULL;
	loom_tensor *y = OUT(0);
	struct mm s;
	loom_cpu_bcast it;
	const loom_tensor *bt[2];
	int32_t *ai, *bi, lo = 0, hi = 0, yzv = 0;
	int64_t *acc;
	float ysc = 1.0f;
	if (mm_shapes(g, n, err, errlen, a, b, &s))
		return -1;
	bt[0] = &s.ba;
	bt[1] = &s.bb;
	if (loom_cpu_bcast_init(&it, 2, bt, s.rank, s.dims))
		return FAIL("batch dimensions do not broadcast");
	if (ql) {
		qrange(y->dtype, &lo, &hi);
		yzv = param_i(yz, 0);
		ysc = (float)param_f(ys, 0, 1.0);
	}
	ai = malloc(sizeof(int32_t) * (size_t)(s.M * s.K + 1));
	bi = malloc(sizeof(int32_t) * (size_t)(s.K * s.N + 1));
	acc = malloc(sizeof(int64_t) * (size_t)(s.M * s.N + 1));
	if (!ai || !bi || !acc) {
		free(ai);
		free(bi);
		free(acc);
		return FAIL("out of memory");
	}
	for (int64_t bix = 0; bix < it.numel; bix++, loom_cpu_bcast_next(&it)) {
		int64_t oy = bix * s.M * s.N;
		mm_int(&s, a, it.off[0] * s.M * s.K, az, it.off[0], b, it.off[1] * s.K * s.N, bz,
		       it.off[1], ai, bi, acc);
		for (int64_t i = 0; i < s.M; i++)
			for (int64_t j = 0; j < s.N; j++) {
				int32_t v = (int32_t)(uint32_t)(uint64_t)acc[i * s.N + j];
				if (ql) {
					float asv = (float)param_f(as, mm_param_idx(as, s.M, it.off[0], i), 1.0);
					float bsv = (float)param_f(bs, mm_param_idx(bs, s.N, it.off[1], j), 1.0);
					float mult = asv * bsv / ysc;
					v = quant_round((float)v * mult, yzv, lo, hi);
				}
				loom_cpu_set_i(y->data, y->dtype, oy + i * s.N + j, v);
			}
	}
	free(ai);
	free(bi);
	free(acc);
	return 0;
}

int loom_cpu_matmulint_run(KARGS)
{
	return mm_run(g, n, err, errlen, 0);
}

int loom_cpu_qlmatmul_run(KARGS)
{
	return mm_run(g, n, err, errlen, 1);
}

/* ================================================================== ConvInteger, QLinearConv */

/* the common checks of ConvInteger (ql 0: x, w, x_zp, w_zp) and QLinearConv
 * (ql 1: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) */
static int qconv_check(KARGS, int ql, struct loom_cpu_geo *p)
{
	const loom_tensor *x = IN(0), *w = IN(ql ? 3 : 1);
	const loom_tensor *xz = opt_in(g, n, err, errlen, 2), *wz = opt_in(g, n, err, errlen, ql ? 5 : 3);
	int64_t G = loom_attr_int(n, "group", 1), C, M;
	int cks;
	const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cks);
	if (need_q8(g, n, err, errlen, x, "x") || need_q8(g, n, err, errlen, w, "w") ||
	    (xz && need_q8(g, n, err, errlen, xz, "x_zero_point")) ||
	    (wz && need_q8(g, n, err, errlen, wz, "w_zero_point")))
		return -1;
	if (x->rank < 3 || w->rank != x->rank)
		return FAIL("x (rank %d) and w (rank %d) must have the same rank >= 3", x->rank, w->rank);
	C = x->dims[1];
	M = w->dims[0];
	if (G < 1 || C % G || M % G || w->dims[1] * G != C)
		return FAIL("group=%lld does not fit x's %lld channels and w's [%lld, %lld, ...]",
			    (long long)G, (long long)C, (long long)M, (long long)w->dims[1]);
	if (ks) {
		if (cks != x->rank - 2)
			return FAIL("kernel_shape has %d values for %d spatial dims", cks, x->rank - 2);
		for (int i = 0; i < cks; i++)
			if (ks[i] != w->dims[2 + i])
				return FAIL("kernel_shape[%d]=%lld differs from w's dim %lld", i,
					    (long long)ks[i], (long long)w->dims[2 + i]);
	}
	if (xz && loom_tensor_numel(xz) != 1)
		return FAIL("x_zero_point must be a scalar");
	if (wz && loom_tensor_numel(wz) != 1 && loom_tensor_numel(wz) != M)
		return FAIL("w_zero_point has %lld values for %lld output channels",
			    (long long)loom_tensor_numel(wz), (long long)M);
	if (ql) {
		const loom_tensor *xs = IN(1), *ws = IN(4), *ys = IN(6), *yz = IN(7);
		const loom_tensor *b = opt_in(g, n, err, errlen, 8);
		if (!xz || !wz || !xs || !ws || !ys || !yz)
			return FAIL("inputs 0 to 7 are required");
		if (need_q8(g, n, err, errlen, yz, "y_zero_point") ||
		    need_fscale(g, n, err, errlen, xs, "x_scale") ||
		    need_fscale(g, n, err, errlen, ws, "w_scale") ||
		    need_fscale(g, n, err, errlen, ys, "y_scale"))
			return -1;
		if (loom_tensor_numel(xs) != 1 || loom_tensor_numel(ys) != 1 || loom_tensor_numel(yz) != 1)
			return FAIL("x_scale, y_scale and y_zero_point must be scalars");
		if (loom_tensor_numel(ws) != 1 && loom_tensor_numel(ws) != M)
			return FAIL("w_scale has %lld values for %lld output channels",
				    (long long)loom_tensor_numel(ws), (long long)M);
		if (b && (b->dtype != LOOM_DT_INT32 || loom_tensor_numel(b) != M))
			return FAIL("B must be int32 with %lld values", (long long)M);
	}
	return loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, p);
}

static int qconv_infer_common(KARGS, int ql)
{
	struct loom_cpu_geo p;
	const loom_tensor *x;
	int64_t dims[LOOM_MAX_RANK];
	if (need_io(g, n, err, errlen, ql ? 8 : 2, ql ? 9 : 4))
		return -1;
	if (qconv_check(g, n, err, errlen, ql, &p))
		return -1;
	x = IN(0);
	dims[0] = x->dims[0];
	dims[1] = IN(ql ? 3 : 1)->dims[0];
	for (int i = 0; i < p.nd; i++)
		dims[2 + i] = p.out[3 - p.nd + i];
	loom_cpu_set_shape(OUT(0), ql ? IN(7)->dtype : LOOM_DT_INT32, x->rank, dims);
	return 0;
}

static int qconv_run_common(KARGS, int ql)
{
	const loom_tensor *x = IN(0), *w = IN(ql ? 3 : 1);
	const loom_tensor *xz = opt_in(g, n, err, errlen, 2), *wz = opt_in(g, n, err, errlen, ql ? 5 : 3);
	const loom_tensor *b = ql ? opt_in(g, n, err, errlen, 8) : NULL;
	loom_tensor *y = OUT(0);
	int64_t G = loom_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1], M = w->dims[0];
	int64_t Cg, Mg, xn, wn;
	int32_t *xi, *wi, xzv, lo = 0, hi = 0, yzv = 0;
	float xsc = 1.0f, ysc = 1.0f;
	struct loom_cpu_geo p;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, &p))
		return -1;
	Cg = C / G;
	Mg = M / G;
	xn = loom_tensor_numel(x);
	wn = loom_tensor_numel(w);
	xi = malloc(sizeof(int32_t) * (size_t)(xn + 1));
	wi = malloc(sizeof(int32_t) * (size_t)(wn + 1));
	if (!xi || !wi) {
		free(xi);
		free(wi);
		return FAIL("out of memory");
	}
	xzv = param_i(xz, 0);
	for (int64_t i = 0; i < xn; i++)
		xi[i] = (int32_t)loom_cpu_get_i(x->data, x->dtype, i) - xzv;
	for (int64_t m = 0, per = wn / (M ? M : 1); m < M; m++)
		for (int64_t i = 0; i < per; i++)
			wi[m * per + i] = (int32_t)loom_cpu_get_i(w->data, w->dtype, m * per + i) - param_i(wz, m);
	if (ql) {
		qrange(y->dtype, &lo, &hi);
		xsc = (float)param_f(IN(1), 0, 1.0);
		ysc = (float)param_f(IN(6), 0, 1.0);
		yzv = param_i(IN(7), 0);
	}
	for (int64_t in = 0; in < N; in++)
		for (int64_t gi = 0; gi < G; gi++)
			for (int64_t mg = 0; mg < Mg; mg++) {
				int64_t m = gi * Mg + mg;
				const int32_t *wm = wi + m * Cg * p.kvol;
				float mult = ql ? xsc * (float)param_f(IN(4), m, 1.0) / ysc : 1.0f;
				int64_t bias = b ? loom_cpu_get_i(b->data, b->dtype, m) : 0;
				int64_t oy = (in * M + m) * p.outvol;
				for (int64_t o0 = 0; o0 < p.out[0]; o0++)
					for (int64_t o1 = 0; o1 < p.out[1]; o1++)
						for (int64_t o2 = 0; o2 < p.out[2]; o2++) {
							int64_t acc = bias;
							for (int64_t c = 0; c < Cg; c++) {
								const int32_t *xc = xi + (in * C + gi * Cg + c) * p.invol;
								const int32_t *wc = wm + c * p.kvol;
								for (int64_t k0 = 0; k0 < p.k[0]; k0++) {
									int64_t i0 = o0 * p.s[0] - p.pb[0] + k0 * p.d[0];
									if (i0 < 0 || i0 >= p.in[0])
										continue;
									for (int64_t k1 = 0; k1 < p.k[1]; k1++) {
										int64_t i1 = o1 * p.s[1] - p.pb[1] + k1 * p.d[1];
										const int32_t *row, *wr;
										if (i1 < 0 || i1 >= p.in[1])
											continue;
										row = xc + (i0 * p.in[1] + i1) * p.in[2];
										wr = wc + (k0 * p.k[1] + k1) * p.k[2];
										for (int64_t k2 = 0; k2 < p.k[2]; k2++) {
											int64_t i2 = o2 * p.s[2] - p.pb[2] + k2 * p.d[2];
											if (i2 >= 0 && i2 < p.in[2])
												acc += (int64_t)row[i2] * wr[k2];
										}
									}
								}
							}
							{
								int64_t oi = oy + (o0 * p.out[1] + o1) * p.out[2] + o2;
								int32_t v = (int32_t)(uint32_t)(uint64_t)acc;
								if (ql)
									v = quant_round((float)v * mult, yzv, lo, hi);
								loom_cpu_set_i(y->data, y->dtype, oi, v);
							}
						}
			}
	free(xi);
	free(wi);
	return 0;
}

int loom_cpu_convint_infer(KARGS)
{
	return qconv_infer_common(g, n, err, errlen, 0);
}

int loom_cpu_convint_run(KARGS)
{
	return qconv_run_common(g, n, err, errlen, 0);
}

int loom_cpu_qlconv_infer(KARGS)
{
	return qconv_infer_common(g, n, err, errlen, 1);
}

int loom_cpu_qlconv_run(KARGS)
{
	return qconv_run_common(g, n, err, errlen, 1);
}
