/* ops_resize.c - Loom's CPU kernels for resampling and space/depth
 * rearrangement (their rows are in runtime/ops.def): Resize (opset 10: X,
 * scales; from 11: roi, scales or sizes; axes from 18; nearest, linear and
 * cubic modes, every coordinate transformation and nearest rounding
 * mode), Upsample (opset 7: scales attribute; 9: input), DepthToSpace
 * (DCR and CRD) and SpaceToDepth.
 *
 * Values that decide an output shape (Reshape's shape, Slice's starts,
 * Pad's pads, ...) must be known when infer() runs (tensor->data set),
 * otherwise infer() fails naming the input. Errors: "node 'NAME' (OP,
 * opset N): problem" (loom_cpu_fail). No global state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
		return FAIL("mode '%s' not supported", m);
	if (upsample || g->opset < 11) {
		p->ctm = CT_ASYMMETRIC;
		p->nearest = NM_SIMPLE;
	} else {
		const char *c = loom_attr_str(n, "coordinate_transformation_mode", "half_pixel");
		const char *nm = loom_attr_str(n, "nearest_mode", "round_prefer_floor");
		if ((p->ctm = pick(c, ctms, 6)) < 0)
			return FAIL("coordinate_transformation_mode '%s' not supported", c);
		if ((p->nearest = pick(nm, nms, 4)) < 0)
			return FAIL("nearest_mode '%s' not supported", nm);
		if (loom_attr_int(n, "antialias", 0))
			return FAIL("antialias not supported");
		const char *kar = loom_attr_str(n, "keep_aspect_ratio_policy", "stretch");
		if (strcmp(kar, "stretch"))
			return FAIL("keep_aspect_ratio_policy '%s' not supported", kar);
	}
	p->cubic_a = loom_attr_float(n, "cubic_coeff_a", -0.75f);
	p->exclude_outside = (int)loom_attr_int(n, "exclude_outside", 0);
	p->extrapolation = loom_attr_float(n, "extrapolation_value", 0.0f);
	if (upsample && g->opset < 9) {
		const loom_attr *a = loom_node_attr(n, "scales");
		if (!a || a->type != LOOM_ATTR_FLOATS)
			return FAIL("attribute scales missing");
		if (a->n > LOOM_MAX_RANK)
			return FAIL("attribute scales has %d values", a->n);
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
			return FAIL("roi has %d values for %d axes", nr, nax);
		for (int i = 0; i < nax; i++) {
			p->roi[ax[i]] = roi[i];
			p->roi[r + ax[i]] = roi[nax + i];
		}
	}
	if (nz > 0) {
		if (ns > 0)
			return FAIL("both scales and sizes given");
		if (nz != nax)
			return FAIL("sizes has %d values for %d axes", nz, nax);
		for (int i = 0; i < nax; i++) {
			int d = ax[i];
			if (sz[i] < 0)
				return FAIL("sizes[%d] = %lld is negative", i, (long long)sz[i]);
			p->odims[d] = sz[i];
			p->lenr[d] = (double)sz[i];
			p->scale[d] = x->dims[d] ? (double)sz[i] / (double)x->dims[d] : 1;
		}
	} else if (ns > 0) {
		if (ns != nax)
			return FAIL("scales has %d values for %d axes", ns, nax);
		for (int i = 0; i < nax; i++) {
			int d = ax[i];
			if (!(sc[i] > 0))
				return FAIL("scales[%d] = %g is not positive", i, sc[i]);
			double len = (double)x->dims[d];
			if (p->ctm == CT_TF_CROP_AND_RESIZE)
				len *= p->roi[r + d] - p->roi[d];
			p->odims[d] = (int64_t)floor(len * sc[i]);
			p->lenr[d] = (double)x->dims[d] * sc[i];
			p->scale[d] = sc[i];
		}
	} else {
		return FAIL("neither scales nor sizes given");
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
		return FAIL("mode linear/cubic on %s data not supported", loom_dtype_name(x->dtype));
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
			rc = FAIL("out of memory");
			goto out;
		}
		if (y->dims[d] && !x->dims[d]) {
			rc = FAIL("cannot resize the empty dim %d", d);
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
		return FAIL("input rank %d, expected 4 (NCHW)", x->rank);
	if (b < 1)
		return FAIL("blocksize %lld invalid", (long long)b);
	const char *mode = loom_attr_str(n, "mode", "DCR");
	if (d2s && strcmp(mode, "DCR") && strcmp(mode, "CRD"))
		return FAIL("mode '%s' not supported", mode);
	if (d2s) {
		if (x->dims[1] % (b * b))
			return FAIL("channels %lld not divisible by blocksize^2 = %lld",
				    (long long)x->dims[1], (long long)(b * b));
		dims[0] = x->dims[0];
		dims[1] = x->dims[1] / (b * b);
		dims[2] = x->dims[2] * b;
		dims[3] = x->dims[3] * b;
	} else {
		if (x->dims[2] % b || x->dims[3] % b)
			return FAIL("height %lld or width %lld not divisible by blocksize %lld",
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
