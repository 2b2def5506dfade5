/* ops_norm.c - Loom's CPU kernels for the normalizations (their rows are
 * in runtime/ops.def): BatchNormalization (inference, and training mode),
 * InstanceNormalization, LayerNormalization (opset 17), LRN and
 * MeanVarianceNormalization. Float32 tensors; the statistics of
 * BatchNormalization in training mode, InstanceNormalization and
 * MeanVarianceNormalization accumulate in double, LayerNormalization's in
 * float.
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
