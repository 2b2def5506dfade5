/* ops_pool.c - Loom's CPU kernels for pooling (their rows are in
 * runtime/ops.def): MaxPool (with Indices), AveragePool (ceil_mode,
 * count_include_pad), GlobalAveragePool and GlobalMaxPool, over 1 to 3
 * spatial dims with the geometry of runtime/ops_conv.c (loom_cpu_geo_fwd).
 * Float32; MaxPool takes int8/uint8/double through a float copy. MaxPool
 * without indices and dilations has a loop of its own with the window's
 * bounds worked out once per output (maxpool_plane; the same values).
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* [lo, hi): the taps k < K of a window from s (dilation 1) inside [0, in) */
static void tap_range(int64_t s, int64_t K, int64_t in, int64_t *lo, int64_t *hi)
{
	*lo = s < 0 ? -s : 0;
	*hi = in - s < K ? in - s : K;
	if (*hi < *lo)
		*hi = *lo;
}

/* MaxPool of one plane without indices, dilation 1: the general loop's
 * values (its taps in the same order, the first inside the image taken
 * whatever it is, then any greater one: a NaN or a zero's sign as it
 * leaves them), without its per-tap bounds checks */
static void maxpool_plane(const struct loom_cpu_geo *p, const float *xc, float *yc)
{
	for (int64_t o0 = 0; o0 < p->out[0]; o0++)
		for (int64_t o1 = 0; o1 < p->out[1]; o1++) {
			int64_t s0 = o0 * p->s[0] - p->pb[0], s1 = o1 * p->s[1] - p->pb[1], a0, b0, a1, b1;
			tap_range(s0, p->k[0], p->in[0], &a0, &b0);
			tap_range(s1, p->k[1], p->in[1], &a1, &b1);
			for (int64_t o2 = 0; o2 < p->out[2]; o2++) {
				int64_t s2 = o2 * p->s[2] - p->pb[2], a2, b2;
				tap_range(s2, p->k[2], p->in[2], &a2, &b2);
				float best = -INFINITY;
				int first = 1;
				for (int64_t k0 = a0; k0 < b0; k0++)
					for (int64_t k1 = a1; k1 < b1; k1++) {
						int64_t row = ((s0 + k0) * p->in[1] + s1 + k1) * p->in[2] + s2;
						for (int64_t k2 = a2; k2 < b2; k2++) {
							if (first || xc[row + k2] > best)
								best = xc[row + k2];
							first = 0;
						}
					}
				yc[(o0 * p->out[1] + o1) * p->out[2] + o2] = best;
			}
		}
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
		if (maxp && !ind && p.d[0] == 1 && p.d[1] == 1 && p.d[2] == 1) {
			maxpool_plane(&p, xc, yc);
			continue;
		}
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
