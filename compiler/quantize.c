/* quantize.c - loom compile's quantization (compile_internal.h): per-tensor
 * int8 parameters of activations from their calibrated range (by the
 * compile's method, or the tensor's own: loom_compile_opts.tensor_methods;
 * or a QDQ model's pairs, folded here), per-channel requantization
 * multipliers of weights, bias correction (the expected error of the
 * rounded weights on the calibration data's mean input, taken off the
 * bias), cross-layer equalization (before calibration), and the
 * calibration run itself (calib.h) on --calib DIR, the caller's sample or
 * random inputs. */
#include "compiler/compile_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ quantization */

int is_float_act(cc *c, int t)
{
	return t >= 0 && c->g->tensors[t].dtype == LOOM_DT_FLOAT;
}

void qparams_from_range(float lo, float hi, float *scale, int32_t *zp)
{
	if (lo > 0)
		lo = 0;
	if (hi < 0)
		hi = 0;
	double s = ((double)hi - lo) / 255.0;
	if (!(s > 1e-30)) {
		*scale = 1.0f;
		*zp = 0;
		return;
	}
	*scale = (float)s;
	*zp = clampi(lround(-128.0 - lo / s), -128, 127);
}

/* the quantization of an activation tensor from its calibrated range */
int quant_of(cc *c, int t)
{
	if (c->q.hasq[t])
		return 0;
	float lo, hi;
	loom_tensor *x = &c->g->tensors[t];
	if (x->is_const) {
		if (!x->data || x->dtype != LOOM_DT_FLOAT)
			return -1;
		const float *d = x->data;
		int64_t n = loom_tensor_numel(x);
		lo = hi = 0;
		for (int64_t i = 0; i < n; i++) {
			if (!isfinite(d[i]))
				return -1;
			lo = d[i] < lo ? d[i] : lo;
			hi = d[i] > hi ? d[i] : hi;
		}
	} else if (loom_calib_range_by(c->q.calib, t, c->q.method[t], c->o->percentile > 0 ? c->o->percentile : 99.99,
				       &lo, &hi)) {
		return -1;
	}
	qparams_from_range(lo, hi, &c->q.scale[t], &c->q.zp[t]);
	c->q.hasq[t] = 1;
	return 0;
}

void quant_copy(cc *c, int dst, int src)
{
	c->q.scale[dst] = c->q.scale[src];
	c->q.zp[dst] = c->q.zp[src];
	c->q.hasq[dst] = 1;
}

int8_t cc_qval(double x, float scale, int32_t zp)
{
	double q = nearbyint(x / scale) + zp;
	return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

/* lround(x) for |x| < 2^62, inline: the integer part (exact), plus one
 * away from zero when the exact remainder is at least a half */
static inline long round_half_away(double x)
{
	long t = (long)x;
	double f = x - (double)t;
	return t + (f >= 0.5) - (f <= -0.5);
}

/* w[0..n) / sw rounded half away from zero, clamped to +-127, into wq:
 * two at a time (GCC vector extensions: SSE2's divpd on x86-64), each
 * element's double quotient and rounding exactly the element-wise ones */
typedef double q_v2 __attribute__((vector_size(16)));
typedef int64_t q_l2 __attribute__((vector_size(16)));

static void quant_row(const float *w, int64_t n, double sw, int8_t *wq)
{
	int64_t k = 0;
	for (; k + 2 <= n; k += 2) {
		q_v2 x = (q_v2){w[k], w[k + 1]} / sw;
		q_l2 t = __builtin_convertvector(x, q_l2);
		q_v2 f = x - __builtin_convertvector(t, q_v2);
		t = t - (q_l2)(f >= 0.5) + (q_l2)(f <= -0.5); /* a true compare is -1 */
		wq[k] = (int8_t)clampi(t[0], -127, 127);
		wq[k + 1] = (int8_t)clampi(t[1], -127, 127);
	}
	for (; k < n; k++)
		wq[k] = (int8_t)clampi(round_half_away(w[k] / sw), -127, 127);
}

/* max |w[k * el_stride]| for k in [0, n) into *amax; -1 if a value is not finite */
static int chan_amax(const float *w, int64_t n, int64_t el_stride, double *amax)
{
	double m = 0;
	for (int64_t k = 0; k < n; k++) {
		double v = fabs(w[k * el_stride]);
		if (!isfinite(v))
			return -1;
		m = v > m ? v : m;
	}
	*amax = m;
	return 0;
}

#if defined(__x86_64__) && !defined(LOOM_HOST_GENERIC)
#include <immintrin.h>
#define QUANT_X86 1

/* quant_row on AVX-512, eight at a time: the same double quotients (IEEE
 * division is exact-rounded at any width), truncation, half-away rounding
 * and clamp, so the same int8 values */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void quant_row_avx512(const float *w, int64_t n,
										  double sw, int8_t *wq)
{
	const __m512d vs = _mm512_set1_pd(sw), one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5);
	const __m512d mhalf = _mm512_set1_pd(-0.5), lim = _mm512_set1_pd(127.0), mlim = _mm512_set1_pd(-127.0);
	int64_t k = 0;
	for (; k + 8 <= n; k += 8) {
		__m512d x = _mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(w + k)), vs);
		__m512d t = _mm512_roundscale_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
		__m512d f = _mm512_sub_pd(x, t);
		t = _mm512_mask_add_pd(t, _mm512_cmp_pd_mask(f, half, _CMP_GE_OQ), t, one);
		t = _mm512_mask_sub_pd(t, _mm512_cmp_pd_mask(f, mhalf, _CMP_LE_OQ), t, one);
		t = _mm512_min_pd(_mm512_max_pd(t, mlim), lim);
		_mm_storel_epi64((__m128i *)(wq + k), _mm256_cvtepi32_epi8(_mm512_cvttpd_epi32(t)));
	}
	quant_row(w + k, n - k, sw, wq + k);
}

/* chan_amax for el_stride 1, 16 at a time */
__attribute__((target("avx512f"))) static int chan_amax_avx512(const float *w, int64_t n, int64_t el_stride,
								 double *amax)
{
	(void)el_stride;
	const __m512 big = _mm512_set1_ps(3.40282347e38f);
	__m512 m = _mm512_setzero_ps();
	int64_t k = 0;
	for (; k + 16 <= n; k += 16) {
		__m512 a = _mm512_abs_ps(_mm512_loadu_ps(w + k));
		if (_mm512_cmp_ps_mask(a, big, _CMP_LE_OQ) != 0xffff) /* inf or NaN */
			return -1;
		m = _mm512_max_ps(m, a);
	}
	float r = _mm512_reduce_max_ps(m);
	for (; k < n; k++) {
		float a = fabsf(w[k]);
		if (!isfinite(a))
			return -1;
		r = a > r ? a : r;
	}
	*amax = r;
	return 0;
}

static int quant_avx512(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
}
#endif

/* per-output-channel symmetric int8 weights, int32 bias, multiplier/shift:
 * wq[i] for i in channel co's elements (n_per elements each, stride given
 * by idx); returns a reason or NULL */
const char *quant_channels(double s_in, double s_out, const float *w, int64_t cout, int64_t per,
				  int64_t ch_stride, int64_t el_stride, const float *bias, int8_t *wq,
				  int32_t *bq, int32_t *mult, int32_t *shift, double *sw_out)
{
	/* contiguous channels on AVX-512 where the CPU has it */
	int (*amax_of)(const float *, int64_t, int64_t, double *) = chan_amax;
	void (*row_of)(const float *, int64_t, double, int8_t *) = quant_row;
#ifdef QUANT_X86
	if (el_stride == 1 && quant_avx512())
		amax_of = chan_amax_avx512, row_of = quant_row_avx512;
#endif
	for (int64_t co = 0; co < cout; co++) {
		double amax;
		if (amax_of(w + co * ch_stride, per, el_stride, &amax))
			return "non-finite weight";
		double sw = amax > 0 ? amax / 127.0 : 1.0;
		if (sw_out)
			sw_out[co] = sw;
		if (el_stride == 1)
			row_of(w + co * ch_stride, per, sw, wq + co * ch_stride);
		else
			for (int64_t k = 0; k < per; k++)
				wq[co * ch_stride + k * el_stride] =
					(int8_t)clampi(round_half_away(w[co * ch_stride + k * el_stride] / sw), -127, 127);
		double b = bias ? bias[co] / (s_in * sw) : 0;
		if (!isfinite(b) || fabs(b) > 2147483000.0)
			return "bias out of int32 range at this scale";
		bq[co] = (int32_t)lround(b);
		double ms = s_in * sw / s_out;
		if (sw_out) /* an int32 output: no requantization */
			continue;
		if (loom_quant_mult(ms, &mult[co], &shift[co]))
			return "requantization scale s_in*s_w/s_out >= 1";
	}
	return NULL;
}

/* ------------------------------------------------------------------ QDQ models */

/* a per-tensor scale and zero point of a Q/DQ node (inputs 1, 2), as
 * constants; 0 or -1 */
static int qdq_params(const loom_graph *g, const loom_node *n, float *s, int32_t *zp, int *is_u8)
{
	if (n->ninputs < 2 || n->inputs[1] < 0)
		return -1;
	const loom_tensor *st = &g->tensors[n->inputs[1]];
	if (!st->is_const || !st->data || st->dtype != LOOM_DT_FLOAT || loom_tensor_numel(st) != 1)
		return -1;
	*s = *(const float *)st->data;
	*zp = 0;
	*is_u8 = 1; /* ONNX: no zero point means uint8 0 */
	if (n->ninputs > 2 && n->inputs[2] >= 0) {
		const loom_tensor *zt = &g->tensors[n->inputs[2]];
		if (!zt->is_const || !zt->data || loom_tensor_numel(zt) != 1)
			return -1;
		if (zt->dtype == LOOM_DT_UINT8)
			*zp = *(const uint8_t *)zt->data;
		else if (zt->dtype == LOOM_DT_INT8)
			*zp = *(const int8_t *)zt->data, *is_u8 = 0;
		else
			return -1;
	}
	return isfinite(*s) && *s > 0 ? 0 : -1;
}

/* QuantizeLinear -> DequantizeLinear pairs on activations (a QDQ model, as
 * ONNX Runtime's quantization tool or a QAT export writes it): the pair
 * becomes an Identity (removed by the passes) and the tensor keeps the
 * pair's scale and zero point (uint8 zero points shifted by -128: the same
 * grid in int8) instead of a calibrated range. Weights' pairs are constants
 * and fold; their int8 values come back from the per-channel max|w|/127
 * scales the NPU uses, which is how those tools choose them. Returns the
 * number of pairs, or -1 (out of memory). */
int fold_qdq(loom_graph *g, forced_q **out, int *nout)
{
	int n = 0, cap = 0;
	forced_q *f = NULL;
	for (int i = 0; i < g->nnodes; i++) {
		loom_node *q = &g->nodes[i];
		float s;
		int32_t zp;
		int u8;
		if (strcmp(q->op_type, "QuantizeLinear") || q->domain[0] || q->ninputs < 1 || q->noutputs != 1 ||
		    q->inputs[0] < 0 || g->tensors[q->inputs[0]].is_const || qdq_params(g, q, &s, &zp, &u8))
			continue;
		int x = q->inputs[0], t = q->outputs[0], users = 0, ok = 1;
		for (int k = 0; k < g->noutputs; k++)
			ok &= g->outputs[k] != t;
		for (int j = 0; j < g->nnodes && ok; j++) {
			const loom_node *d = &g->nodes[j];
			for (int k = 0; k < d->ninputs; k++)
				if (d->inputs[k] == t) {
					float s2;
					int32_t zp2;
					int u82;
					users++;
					ok &= k == 0 && !strcmp(d->op_type, "DequantizeLinear") && !d->domain[0] &&
					      !qdq_params(g, d, &s2, &zp2, &u82) && s2 == s && zp2 == zp && u82 == u8;
				}
		}
		if (!ok || !users)
			continue;
		for (int j = 0; j < g->nnodes; j++) {
			loom_node *d = &g->nodes[j];
			if (d->ninputs < 1 || d->inputs[0] != t || strcmp(d->op_type, "DequantizeLinear"))
				continue;
			char *name = d->name;
			int *outs = d->outputs, no = d->noutputs;
			d->name = NULL;
			d->outputs = NULL;
			loom_node_clear(d);
			d->name = name;
			d->outputs = outs;
			d->noutputs = no;
			d->op_type = strdup("Identity");
			d->domain = strdup("");
			d->inputs = malloc(sizeof(int));
			if (!d->op_type || !d->domain || !d->inputs) {
				free(f);
				return -1;
			}
			d->inputs[0] = x;
			d->ninputs = 1;
			for (int k = 0; k < 2; k++) {
				if (n + 2 > cap) {
					cap = cap ? 2 * cap : 16;
					forced_q *p = realloc(f, (size_t)cap * sizeof *p);
					if (!p) {
						free(f);
						return -1;
					}
					f = p;
				}
				f[n].t = k ? outs[0] : x;
				f[n].scale = s;
				f[n].zp = u8 ? zp - 128 : zp;
				n++;
			}
		}
	}
	*out = f;
	*nout = n;
	return n / 2;
}

/* ------------------------------------------------------------------ calibration */

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* drop the activations' data: only constants stay in the graph */
static void drop_activations(loom_graph *g)
{
	for (int t = 0; t < g->ntensors; t++)
		if (!g->tensors[t].is_const) {
			free(g->tensors[t].data);
			g->tensors[t].data = NULL;
			g->tensors[t].cap = 0;
		}
}

/* random N(0, 1) samples of every float graph input: the sample count, or -1 */
static int calib_random(cc *c, loom_calib *cal)
{
	loom_graph *g = c->g;
	int n = c->o->random_samples > 0 ? c->o->random_samples : 4;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < g->ninputs; i++) {
			loom_tensor *t = &g->tensors[g->inputs[i]];
			size_t bytes = loom_tensor_bytes(t);
			void *d = calloc(1, bytes + 1);
			if (!d)
				return cc_fail(c, "out of memory (calibration)");
			if (t->dtype == LOOM_DT_FLOAT) {
				float *f = d;
				for (int64_t e = 0; e < loom_tensor_numel(t); e++) {
					double u1 = ((rng_next(&s) >> 11) + 1.0) / 9007199254740993.0;
					double u2 = (rng_next(&s) >> 11) / 9007199254740992.0;
					f[e] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
				}
			}
			int rc = loom_tensor_set_data(t, d, bytes);
			free(d);
			if (rc)
				return cc_fail(c, "out of memory (calibration)");
		}
		if (loom_ref_run(g, c->err, c->errlen) || loom_calib_observe(cal, g, c->err, c->errlen))
			return -1;
	}
	return n;
}

/* c->q.method from the options: the compile's method, and each tensor of
 * o->tensor_methods its own; what the collector must keep. 0 or -1. */
static int tensor_methods(cc *c, unsigned *keep)
{
	const loom_compile_opts *o = c->o;
	if (!(c->q.method = malloc(((size_t)c->nt + 1) * sizeof(int))))
		return cc_fail(c, "out of memory");
	for (int t = 0; t < c->nt; t++)
		c->q.method[t] = o->calib_method;
	*keep = loom_calib_method_keep(o->calib_method) | (o->bias_correction ? LOOM_CALIB_KEEP_MEAN : 0) |
		o->calib_keep;
	for (const char *p = o->tensor_methods; p && *p;) {
		const char *e = strchr(p, ','), *eq;
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char item[512];
		snprintf(item, sizeof item, "%.*s", (int)(len < 511 ? len : 511), p);
		p += len + (e ? 1 : 0);
		if (!*item)
			continue;
		int m = (eq = strrchr(item, '=')) ? loom_calib_method_of(eq + 1) : -1, t = -1;
		if (m < 0)
			return cc_fail(c, "calibration method of a tensor: '%s' is not TENSOR=%s", item,
				       "minmax|percentile|mse|entropy");
		*(char *)eq = 0;
		for (int k = 0; k < c->nt && t < 0; k++)
			if (c->g->tensors[k].name && !strcmp(c->g->tensors[k].name, item))
				t = k;
		if (t < 0)
			return cc_fail(c, "calibration method of a tensor: no tensor named '%s' (after simplification)",
				       item);
		c->q.method[t] = m;
		*keep |= loom_calib_method_keep(m);
	}
	return 0;
}

int cc_calibrate(cc *c)
{
	loom_graph *g = c->g;
	const loom_compile_opts *o = c->o;
	double pct = o->percentile > 0 ? o->percentile : 99.99;
	int random = !o->calib_dir && !o->calib_inputs, n;
	unsigned keep;
	if (tensor_methods(c, &keep))
		return -1;
	if (o->calib) {
		/* an earlier compile's calibration of the same graph */
		if (!loom_calib_matches(o->calib, g, o->calib_method, pct) || (keep & ~loom_calib_keeps(o->calib)))
			return cc_fail(c, "the calibration given for reuse (loom_compile_opts.calib) was made for "
					  "another graph or calibration method");
		c->q.calib = o->calib;
		n = loom_calib_samples(o->calib);
		if (c->rep)
			c->rep->calib_reused = 1;
	} else {
		c->q.calib = c->q.own = loom_calib_new_keep(g, o->calib_method, pct, keep);
		if (!c->q.own)
			return cc_fail(c, "out of memory (calibration)");
		if (o->calib_dir) {
			n = cc_calib_dir(c, c->q.own, o->calib_dir, cc_threads(c));
		} else if (o->calib_inputs) {
			n = 1;
			if (loom_calib_bind(g, o->calib_inputs, o->calib_ninputs, "calibration inputs", c->err, c->errlen) ||
			    loom_ref_run(g, c->err, c->errlen) || loom_calib_observe(c->q.own, g, c->err, c->errlen))
				return -1;
		} else {
			n = calib_random(c, c->q.own);
		}
		if (n < 0)
			return -1;
	}
	if (c->rep) {
		c->rep->calib_random = random;
		c->rep->calib_samples = n;
	}
	drop_activations(g);
	return 0;
}

/* ------------------------------------------------------------------ bias correction */

/* b'[co] = b[co] - sum_k (q(w[co,k]) - w[co,k]) * m(co, k): the expected
 * error of channel co's rounded weights (per-channel symmetric, as
 * quant_channels rounds them) on the mean input m. Returns the corrected
 * bias (malloc'd, cout floats), or NULL (out of memory). */
static float *bias_fix(cc *c, const float *w, const float *bias, int64_t cout, int64_t per,
		       double (*mean)(const void *ctx, int64_t co, int64_t k), const void *ctx)
{
	float *b = malloc(((size_t)cout + 1) * sizeof *b);
	double worst = 0, bmax = 0;
	if (!b)
		return NULL;
	for (int64_t co = 0; co < cout; co++) {
		double amax = 0, d = 0;
		const float *wc = w + co * per;
		for (int64_t k = 0; k < per; k++)
			amax = fabs(wc[k]) > amax ? fabs(wc[k]) : amax;
		double sw = amax > 0 ? amax / 127.0 : 1.0;
		for (int64_t k = 0; k < per; k++) {
			double e = clampi(lround(wc[k] / sw), -127, 127) * sw - wc[k];
			if (e != 0)
				d += e * mean(ctx, co, k);
		}
		double b0 = bias ? bias[co] : 0;
		b[co] = (float)(b0 - d);
		worst = fabs(d) > worst ? fabs(d) : worst;
		bmax = fabs(b0) > bmax ? fabs(b0) : bmax;
	}
	if (c->rep && worst > 0) {
		c->rep->bias_corrected++;
		double rel = worst / (bmax > 0 ? bmax : 1);
		c->rep->bias_shift_max = rel > c->rep->bias_shift_max ? rel : c->rep->bias_shift_max;
	}
	return b;
}

typedef struct conv_mean {
	double *tap;     /* [cin][kh*kw]: the mean of each tap's input over the output positions */
	int64_t cpg, opg, khw;
} conv_mean;

static double conv_mean_at(const void *ctx, int64_t co, int64_t k)
{
	const conv_mean *m = ctx;
	return m->tap[((co / m->opg) * m->cpg + k / m->khw) * m->khw + k % m->khw];
}

/* the corrected bias of a convolution of input `in` ([N,C,H,W] or [N,C,L])
 * with weights w [cout][cpg][kh][kw] in geometry geo (k, s, d, pb, pe of
 * axes 1 and 2); NULL when the calibration kept no mean of `in` (or out of
 * memory): the bias stays */
float *bias_fix_conv(cc *c, int in, const float *w, const float *bias, int64_t cout, int64_t cpg, int64_t grp,
		     const struct loom_cpu_geo *geo)
{
	const loom_tensor *x = &c->g->tensors[in];
	const double *sum;
	int64_t n;
	uint64_t rows;
	if (loom_calib_mean(c->q.calib, in, &sum, &n, &rows) || x->rank < 3 || x->rank > 4)
		return NULL;
	int64_t C = x->dims[1], H = x->rank == 4 ? x->dims[2] : 1, W = x->dims[x->rank - 1];
	int64_t kh = geo->k[1], kw = geo->k[2], oh, ow;
	if (n != C * H * W || C != cpg * grp || cout % grp)
		return NULL;
	oh = (H + geo->pb[1] + geo->pe[1] - ((kh - 1) * geo->d[1] + 1)) / geo->s[1] + 1;
	ow = (W + geo->pb[2] + geo->pe[2] - ((kw - 1) * geo->d[2] + 1)) / geo->s[2] + 1;
	conv_mean m = {calloc((size_t)(C * kh * kw) + 1, sizeof(double)), cpg, cout / grp, kh * kw};
	if (!m.tap || oh < 1 || ow < 1) {
		free(m.tap);
		return NULL;
	}
	for (int64_t ch = 0; ch < C; ch++)
		for (int64_t a = 0; a < kh; a++)
			for (int64_t b = 0; b < kw; b++) {
				double s = 0;
				for (int64_t y = 0; y < oh; y++) {
					int64_t iy = y * geo->s[1] - geo->pb[1] + a * geo->d[1];
					if (iy < 0 || iy >= H)
						continue;
					for (int64_t xx = 0; xx < ow; xx++) {
						int64_t ix = xx * geo->s[2] - geo->pb[2] + b * geo->d[2];
						if (ix >= 0 && ix < W)
							s += sum[(ch * H + iy) * W + ix];
					}
				}
				m.tap[(ch * kh + a) * kw + b] = s / ((double)rows * oh * ow);
			}
	float *r = bias_fix(c, w, bias, cout, cpg * kh * kw, conv_mean_at, &m);
	free(m.tap);
	return r;
}

static double gemm_mean_at(const void *ctx, int64_t co, int64_t k)
{
	(void)co;
	return ((const double *)ctx)[k];
}

/* the corrected bias of a GEMM layer: weights bn [N][kk] (channel-major),
 * input `in`: a [M, K] tensor (kk = K), or with flat an [M, C, H, W] image
 * flattened in HWC order, row k = (y*W + x)*stride + ch (rows of padding
 * channels are 0); NULL as bias_fix_conv */
float *bias_fix_gemm(cc *c, int in, int flat, const float *bn, const float *bb, int64_t N, uint32_t kk,
		     uint32_t stride)
{
	const loom_tensor *x = &c->g->tensors[in];
	const double *sum;
	int64_t n;
	uint64_t rows;
	if (loom_calib_mean(c->q.calib, in, &sum, &n, &rows))
		return NULL;
	double *km = calloc((size_t)kk + 1, sizeof *km);
	if (!km)
		return NULL;
	if (flat) {
		int64_t C = x->dims[1], hw = C > 0 ? n / C : 0;
		for (int64_t ch = 0; ch < C && ch < stride; ch++)
			for (int64_t p = 0; p < hw && p * stride + ch < kk; p++)
				km[p * stride + ch] = sum[ch * hw + p] / (double)rows;
	} else {
		int64_t K = x->dims[x->rank - 1], reps = K > 0 ? n / K : 0;
		if (K != kk || reps < 1) {
			free(km);
			return NULL;
		}
		for (int64_t r = 0; r < reps; r++)
			for (int64_t k = 0; k < K; k++)
				km[k] += sum[r * K + k] / ((double)rows * reps);
	}
	float *r = bias_fix(c, bn, bb, N, kk, gemm_mean_at, km);
	free(km);
	return r;
}

/* ------------------------------------------------------------------ cross-layer equalization */

/* a weight layer equalization can scale: a Conv of group 1 or a Gemm, its
 * weights (and bias) constants that no other node reads */
typedef struct eq_layer {
	float *w, *b;
	int64_t cout, cin, inner; /* Conv [cout][cin][inner]; Gemm [N][K] (transB) or [K][N] */
	int gemm_kn;              /* a Gemm with B as [K][N] */
} eq_layer;

static int eq_of(cc *c, int ni, eq_layer *e)
{
	const loom_node *n = &c->g->nodes[ni];
	int conv = !strcmp(n->op_type, "Conv"), gemm = !strcmp(n->op_type, "Gemm");
	memset(e, 0, sizeof *e);
	if ((!conv && !gemm) || n->domain[0] || n->ninputs < 2 || n->noutputs < 1 || n->inputs[1] < 0)
		return -1;
	loom_tensor *w = &c->g->tensors[n->inputs[1]];
	if (!w->is_const || !w->data || w->dtype != LOOM_DT_FLOAT || c->ncons[n->inputs[1]] != 1)
		return -1;
	if (n->ninputs > 2 && n->inputs[2] >= 0) {
		loom_tensor *b = &c->g->tensors[n->inputs[2]];
		if (!b->is_const || !b->data || b->dtype != LOOM_DT_FLOAT || c->ncons[n->inputs[2]] != 1)
			return -1;
		e->b = b->data;
	}
	e->w = w->data;
	if (conv) {
		if (loom_attr_int(n, "group", 1) != 1 || w->rank < 3)
			return -1;
		e->cout = w->dims[0], e->cin = w->dims[1], e->inner = 1;
		for (int i = 2; i < w->rank; i++)
			e->inner *= w->dims[i];
	} else {
		if (w->rank != 2 || loom_attr_int(n, "transA", 0))
			return -1;
		e->gemm_kn = !loom_attr_int(n, "transB", 0);
		e->cout = w->dims[e->gemm_kn ? 1 : 0], e->cin = w->dims[e->gemm_kn ? 0 : 1], e->inner = 1;
	}
	if (e->b && loom_tensor_numel(&c->g->tensors[n->inputs[2]]) != e->cout)
		return -1;
	return 0;
}

/* element k of output channel o, input channel i */
static float *eq_at(const eq_layer *e, int64_t o, int64_t i, int64_t k)
{
	if (e->gemm_kn)
		return &e->w[(i * e->inner + k) * e->cout + o];
	return &e->w[(o * e->cin + i) * e->inner + k];
}

/* scale output channel i of a by 1/s and input channel i of b by s, with
 * s = sqrt(r_a r_b) / r_b for the channels' largest |weight| r: both
 * become sqrt(r_a r_b). The function is the same (Relu, LeakyRelu and
 * MaxPool between them commute with a positive per-channel scale). */
static void eq_pair(const eq_layer *a, const eq_layer *b)
{
	for (int64_t i = 0; i < a->cout; i++) {
		double ra = 0, rb = 0;
		for (int64_t x = 0; x < a->cin; x++)
			for (int64_t k = 0; k < a->inner; k++)
				ra = fmax(ra, fabs(*eq_at(a, i, x, k)));
		for (int64_t o = 0; o < b->cout; o++)
			for (int64_t k = 0; k < b->inner; k++)
				rb = fmax(rb, fabs(*eq_at(b, o, i, k)));
		if (!(ra > 0 && rb > 0 && isfinite(ra) && isfinite(rb)))
			continue;
		double sc = sqrt(ra * rb) / rb;
		for (int64_t x = 0; x < a->cin; x++)
			for (int64_t k = 0; k < a->inner; k++)
				*eq_at(a, i, x, k) = (float)(*eq_at(a, i, x, k) / sc);
		if (a->b)
			a->b[i] = (float)(a->b[i] / sc);
		for (int64_t o = 0; o < b->cout; o++)
			for (int64_t k = 0; k < b->inner; k++)
				*eq_at(b, o, i, k) = (float)(*eq_at(b, o, i, k) * sc);
	}
}

/* Cross-layer equalization (Nagel et al., "Data-Free Quantization", 2019):
 * every Conv / Gemm whose output reaches another one's input through only
 * Relu, LeakyRelu, MaxPool or a Flatten (axis 1) into a Gemm (each the
 * sole reader of the tensor before it; channel c of the image is then
 * the Gemm's inputs c*H*W .. (c+1)*H*W-1) gets its output channels'
 * weight ranges balanced with that layer's
 * input channels, four sweeps over the graph (chains converge). Before
 * calibration, on float weights; not with QDQ scales (they are the
 * model's). The number of pairs, or 0. */
int cc_equalize(cc *c)
{
	int pairs = 0;
	if (!c->o->equalize || c->q.nforced)
		return 0;
	for (int sweep = 0; sweep < 4; sweep++)
		for (int ni = 0; ni < c->nn; ni++) {
			eq_layer a, b;
			if (eq_of(c, ni, &a))
				continue;
			int t = c->g->nodes[ni].outputs[0], nj = -1, flat = 0;
			for (int hop = 0; hop < 5 && t >= 0; hop++) {
				nj = sole_consumer(c, t);
				if (nj < 0)
					break;
				const loom_node *n = &c->g->nodes[nj];
				int fl = !strcmp(n->op_type, "Flatten") && loom_attr_int(n, "axis", 1) == 1 &&
					 c->g->tensors[t].rank == 4;
				if (strcmp(n->op_type, "Relu") && strcmp(n->op_type, "LeakyRelu") &&
				    strcmp(n->op_type, "MaxPool") && !fl)
					break;
				flat |= fl;
				t = n->noutputs == 1 && n->inputs[0] == t ? n->outputs[0] : -1;
			}
			if (nj < 0 || t < 0 || c->g->nodes[nj].inputs[0] != t || eq_of(c, nj, &b))
				continue;
			if (flat && !strcmp(c->g->nodes[nj].op_type, "Gemm") && a.cout > 0 && b.cin % a.cout == 0) {
				b.inner = b.cin / a.cout; /* the Gemm's inputs per channel of the image */
				b.cin = a.cout;
			}
			if (b.cin != a.cout || (flat && b.inner * b.cin != c->g->tensors[c->g->nodes[nj].inputs[0]].dims[1]))
				continue;
			eq_pair(&a, &b);
			pairs += !sweep;
		}
	if (c->rep)
		c->rep->equalized = pairs;
	return pairs;
}
