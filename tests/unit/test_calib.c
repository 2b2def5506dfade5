/* test_calib.c - unit tests of the INT8 calibration statistics
 * (compiler/calib.c, compiler/calib.h).
 *
 * Part 1: hand-made data on a tiny graph x -> Relu -> y: a uniform ramp
 * (known min / max / percentiles, MSE keeps about the full range), a ramp
 * with one outlier (min-max keeps it, the percentile clips it, MSE lands in
 * between, entropy clips it too; after more data both are a fresh
 * collector's: their cached search redone), Relu outputs never get lo < 0, what a
 * collector keeps (no histogram for min-max alone: the other methods fail;
 * mean images; reuse rules; method names), histogram rebinning over
 * observations of growing range (equal to a histogram built in one go over
 * the final range; NaN / Inf not counted; zeros seen before any nonzero
 * value), min / max / count of odd lengths with NaN, Inf and signed zeros
 * as the element-wise loop gives them, per-channel weight scales (axes 0, 1, -1, a zero channel, bad
 * arguments).
 * Part 2: --calib DIR enumeration: Debian's ONNX case
 * test_conv_with_strides_padding (one test_data_set; then a calibration
 * run on its model whose output range equals output_0.pb's min / max), a
 * temp folder of hand-encoded TensorProto .pb files (order of samples and
 * files, output_*.pb skipped, names from file stems), loom_calib_bind's
 * matching rules and errors, an empty folder.
 * Part 3: end to end on build/models/digits_cnn_opset13 (or $BUILD/models,
 * or the folder given as first argument; skipped when missing): every
 * sample of the model folder run and observed, ranges of a few tensors
 * printed, every activation tensor has lo <= hi by all methods and Relu
 * outputs lo >= 0.
 *
 * Prints one line per check and ends with "N passed, M failed, K skipped";
 * exit status 1 on any failure. */
#include "compiler/calib.h"
#include "runtime/cpu_ops.h"
#include "ir/ir.h"
#include "compiler/onnx.h"
#include "onnx_case.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* x[n] -> Relu -> y */
typedef struct relu_graph {
	loom_graph *g;
	int x, y;
} relu_graph;

static relu_graph relu_new(int64_t n)
{
	relu_graph r;
	int64_t dims[1] = {n};
	r.g = oc_graph_new(13, "(built by test_calib)");
	r.x = oc_add_input(r.g, "x", LOOM_DT_FLOAT, 1, dims, NULL);
	r.y = OC_MUST(loom_graph_add_tensor(r.g, "y", LOOM_DT_UNDEFINED, 0, NULL, NULL, 0));
	OC_MUST(loom_graph_add_node(r.g, "Relu", "relu", &r.x, 1, &r.y, 1));
	OC_MUST(loom_graph_add_output(r.g, r.y));
	return r;
}

/* set x, run, observe: 0 or -1 (printed) */
static int feed(relu_graph *r, loom_calib *c, const float *x, int64_t n)
{
	char err[512];
	if (loom_tensor_set_data(&r->g->tensors[r->x], x, (size_t)n * sizeof(float)) ||
	    loom_ref_run(r->g, err, sizeof(err)) || loom_calib_observe(c, r->g, err, sizeof(err))) {
		printf("  feed: %s\n", err);
		return -1;
	}
	return 0;
}

static void test_ramp(void)
{
	enum { N = 10001 };
	float *x = oc_xmalloc(N * sizeof(float));
	relu_graph r = relu_new(N);
	loom_calib *c = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_PERCENTILE, 99.0));
	float lo, hi;
	int rc;
	for (int i = 0; i < N; i++)
		x[i] = (float)i * 0.01f; /* 0 .. 100 */
	CHECK(!feed(&r, c, x, N), "ramp: observe");
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_MINMAX, 0, &lo, &hi);
	CHECK(!rc && lo == 0 && fabsf(hi - 100) < 1e-3f,
	      "ramp: minmax [%g, %g] = [0, 100]", lo, hi);
	rc = loom_calib_range(c, r.x, &lo, &hi);
	CHECK(!rc && fabsf(lo - 1) < 0.2f && fabsf(hi - 99) < 0.2f,
	      "ramp: percentile 99 [%g, %g] ~ [1, 99]", lo, hi);
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_PERCENTILE, 50, &lo, &hi);
	CHECK(!rc && fabsf(lo - 50) < 0.2f &&
		      lo == hi, "ramp: percentile 50 [%g, %g] ~ the median 50", lo, hi);
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_MSE, 0, &lo, &hi);
	CHECK(!rc && lo == 0 && hi > 98 && hi <= 100,
	      "ramp: MSE [%g, %g] ~ the full range (no outliers)", lo, hi);
	CHECK(loom_calib_samples(c) == 1, "ramp: 1 sample counted");
	CHECK(loom_calib_range(c, -1, &lo, &hi) == -1 && loom_calib_range(c, 99, &lo, &hi) == -1,
	      "ramp: bad tensor index -> -1");
	loom_calib_free(c);
	loom_graph_free(r.g);
	free(x);
}

static void test_outlier(void)
{
	enum { N = 10001 };
	float *x = oc_xmalloc(N * sizeof(float));
	relu_graph r = relu_new(N);
	loom_calib *c = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_MSE, 99.9));
	float lo, hi, plo, phi, mlo, mhi;
	int rc;
	for (int i = 0; i < N - 1; i++)
		x[i] = -1.0f + 2.0f * (float)i / (N - 2); /* -1 .. 1 */
	x[N - 1] = 10.0f;
	CHECK(!feed(&r, c, x, N), "outlier: observe");
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_MINMAX, 0, &lo, &hi);
	CHECK(!rc && lo == -1 && hi == 10,
	      "outlier: minmax keeps it [%g, %g]", lo, hi);
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_PERCENTILE, 99.9, &plo, &phi);
	CHECK(!rc && fabsf(plo + 1) < 0.1f &&
		      fabsf(phi - 1) < 0.1f, "outlier: percentile 99.9 clips it [%g, %g]", plo, phi);
	rc = loom_calib_range(c, r.x, &mlo, &mhi);
	CHECK(!rc && mhi > phi + 0.5f && mhi < hi - 0.05f && mlo == -1,
	      "outlier: MSE in between [%g, %g]", mlo, mhi);
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_ENTROPY, 0, &plo, &phi);
	CHECK(!rc && plo == -1 && phi >= 0.9f && phi < 5.0f, "outlier: entropy (KL) clips it [%g, %g]", plo, phi);
	for (int m = LOOM_CALIB_MINMAX; m < LOOM_CALIB_NMETHODS; m++) {
		rc = loom_calib_range_by(c, r.y, m, 99.9, &lo, &hi);
		CHECK(!rc && lo >= 0 && lo <= hi,
		      "outlier: relu output, method %d [%g, %g], lo >= 0", m, lo, hi);
	}
	/* MSE's and entropy's search is kept with the statistics until they
	 * change: after a second observation the ranges are a fresh
	 * collector's over both (asked twice: the same) */
	loom_calib *c2 = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_MSE, 99.9));
	CHECK(!feed(&r, c2, x, N), "outlier: observe (a second collector)");
	for (int i = 0; i < N; i++)
		x[i] *= 3.0f; /* -3 .. 3, outlier 30: the histogram grows */
	CHECK(!feed(&r, c, x, N) && !feed(&r, c2, x, N), "outlier: a second observation");
	for (int m = LOOM_CALIB_MSE; m <= LOOM_CALIB_ENTROPY; m++) {
		float a0, a1, b0, b1, f0, f1;
		int ok = !loom_calib_range_by(c, r.x, m, 0, &a0, &a1) && !loom_calib_range_by(c, r.x, m, 0, &b0, &b1) &&
			 !loom_calib_range_by(c2, r.x, m, 0, &f0, &f1);
		CHECK(ok && a0 == f0 && a1 == f1 && b0 == a0 && b1 == a1,
		      "outlier: method %d after more data [%g, %g], a fresh collector's [%g, %g]", m, a0, a1, f0, f1);
	}
	loom_calib_free(c2);
	loom_calib_free(c);
	loom_graph_free(r.g);
	free(x);
}

/* what a collector keeps: min-max alone keeps no histogram; mean images */
static void test_keep(void)
{
	enum { N = 64 };
	float x[N], lo, hi;
	relu_graph r = relu_new(N);
	for (int i = 0; i < N; i++)
		x[i] = (float)i - 10;
	loom_calib *c = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_MINMAX, 0));
	const uint64_t *hist = (const uint64_t *)1;
	int rc = feed(&r, c, x, N);
	CHECK(!rc && loom_calib_keeps(c) == 0 && !loom_calib_stats(c, r.x, NULL, NULL, NULL, &hist, NULL) && !hist,
	      "keep: a min-max collector keeps no histogram");
	rc = loom_calib_range_by(c, r.x, LOOM_CALIB_MINMAX, 0, &lo, &hi);
	CHECK(!rc && lo == -10 && hi == 53, "keep: min-max [%g, %g]", lo, hi);
	for (int m = LOOM_CALIB_PERCENTILE; m < LOOM_CALIB_NMETHODS; m++)
		CHECK(loom_calib_range_by(c, r.x, m, 99, &lo, &hi) == -1, "keep: %s without a histogram -> -1",
		      loom_calib_method_name(m));
	CHECK(loom_calib_matches(c, r.g, LOOM_CALIB_MINMAX, 0) && !loom_calib_matches(c, r.g, LOOM_CALIB_MSE, 0),
	      "keep: reusable for min-max, not for MSE");
	const double *sum;
	int64_t n;
	uint64_t rows;
	CHECK(loom_calib_mean(c, r.x, &sum, &n, &rows) == -1, "keep: no mean image unless asked");
	loom_calib_free(c);
	c = OC_MUSTP(loom_calib_new_keep(r.g, LOOM_CALIB_MINMAX, 0, LOOM_CALIB_KEEP_HIST));
	rc = feed(&r, c, x, N);
	CHECK(!rc && loom_calib_matches(c, r.g, LOOM_CALIB_MSE, 0) && loom_calib_matches(c, r.g, LOOM_CALIB_ENTROPY, 0) &&
		      !loom_calib_range_by(c, r.x, LOOM_CALIB_PERCENTILE, 99, &lo, &hi),
	      "keep: with KEEP_HIST every method works");
	loom_calib_free(c);
	CHECK(!loom_calib_new_keep(r.g, LOOM_CALIB_NMETHODS, 0, 0) && !loom_calib_new_keep(r.g, 0, 0, 64),
	      "keep: a bad method or keep flag -> NULL");
	for (int m = 0; m < LOOM_CALIB_NMETHODS; m++)
		CHECK(loom_calib_method_of(loom_calib_method_name(m)) == m, "keep: method name %s",
		      loom_calib_method_name(m));
	CHECK(loom_calib_method_of("kl") == -1 && !loom_calib_method_name(-1), "keep: unknown method names");
	/* the mean image of a [2, 3] tensor over two samples */
	int64_t dims[2] = {2, 3};
	loom_graph *g = oc_graph_new(13, "(built by test_calib)");
	int xi = oc_add_input(g, "x", LOOM_DT_FLOAT, 2, dims, NULL);
	int yi = OC_MUST(loom_graph_add_tensor(g, "y", LOOM_DT_UNDEFINED, 0, NULL, NULL, 0));
	OC_MUST(loom_graph_add_node(g, "Relu", "relu", &xi, 1, &yi, 1));
	OC_MUST(loom_graph_add_output(g, yi));
	c = OC_MUSTP(loom_calib_new_keep(g, LOOM_CALIB_MINMAX, 0, LOOM_CALIB_KEEP_MEAN));
	static const float s1[6] = {1, 2, 3, 3, 4, 5}, s2[6] = {0, 0, 0, 4, 4, 4};
	char err[256];
	rc = 0;
	for (int k = 0; k < 2 && !rc; k++)
		rc = loom_tensor_set_data(&g->tensors[xi], k ? s2 : s1, sizeof s1) || loom_ref_run(g, err, sizeof err) ||
		     loom_calib_observe(c, g, err, sizeof err);
	rc = rc || loom_calib_mean(c, yi, &sum, &n, &rows);
	CHECK(!rc && n == 3 && rows == 4 && sum[0] / rows == 2 && sum[1] / rows == 2.5 && sum[2] / rows == 3,
	      "keep: mean image of y over 2 samples x 2 rows: [%g, %g, %g]", rc ? 0 : sum[0] / rows,
	      rc ? 0 : sum[1] / rows, rc ? 0 : sum[2] / rows);
	loom_calib_free(c);
	loom_graph_free(g);
	loom_graph_free(r.g);
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void test_rebin(void)
{
	enum { N = 5000, K = 3 };
	static const float scale[K] = {1.0f, 3.0f, 10.0f};
	float *all = oc_xmalloc(N * K * sizeof(float));
	float *x = oc_xmalloc(N * sizeof(float));
	uint64_t ref[LOOM_CALIB_BINS];
	relu_graph r = relu_new(N);
	loom_calib *c = OC_MUSTP(loom_calib_new_keep(r.g, LOOM_CALIB_MINMAX, 0, LOOM_CALIB_KEEP_HIST));
	uint32_t seed = 12345;
	float mn = INFINITY, mx = -INFINITY, r0 = 0;
	double range = 0, amax;
	const uint64_t *hist = NULL;
	uint64_t count = 0;
	float smin, smax;
	int same = 1, rc;
	for (int k = 0; k < K; k++) {
		float a = 0;
		for (int i = 0; i < N; i++) {
			float v = scale[k] * ((float)lcg(&seed) / (float)(1u << 24) * 2.0f - 1.0f);
			x[i] = all[k * N + i] = v;
			mn = fminf(mn, v);
			mx = fmaxf(mx, v);
			a = fmaxf(a, fabsf(v));
		}
		if (k == 0)
			r0 = a;
		CHECK(!feed(&r, c, x, N), "rebin: observe %d (values in [-%g, %g])", k, scale[k], scale[k]);
		rc = loom_calib_stats(c, r.x, &smin, &smax, &count, &hist, &range);
		CHECK(!rc && smin == mn && smax == mx &&
			      count == (uint64_t)N * (k + 1), "rebin: after %d: min %g max %g count %llu, R %g", k,
		      smin, smax, (unsigned long long)count, range);
	}
	amax = fmax(-mn, mx);
	{
		double q = range / r0, l2 = log2(q);
		CHECK(range >= amax && range < 2 * amax && fabs(l2 - nearbyint(l2)) < 1e-9,
		      "rebin: R %g = first max|x| %g * 2^%g covers max|x| %g", range, r0, l2, amax);
	}
	memset(ref, 0, sizeof(ref));
	for (int i = 0; i < N * K; i++) {
		double f = floor(((double)all[i] + range) / (2 * range) * LOOM_CALIB_BINS);
		int b = f < 0 ? 0 : f > LOOM_CALIB_BINS - 1 ? LOOM_CALIB_BINS - 1 : (int)f;
		ref[b]++;
	}
	for (int b = 0; b < LOOM_CALIB_BINS; b++)
		if (hist[b] != ref[b]) {
			printf("  bin %d: %llu, one-pass histogram %llu\n", b, (unsigned long long)hist[b],
			       (unsigned long long)ref[b]);
			same = 0;
			break;
		}
	CHECK(same, "rebin: merged histogram equals the one-pass histogram over the final range");
	/* NaN / Inf are not counted */
	for (int i = 0; i < N; i++)
		x[i] = i % 2 ? NAN : (i % 4 ? INFINITY : 0.5f);
	rc = feed(&r, c, x, N) || loom_calib_stats(c, r.x, &smin, &smax, &count, NULL, NULL);
	CHECK(!rc &&
		      count == (uint64_t)N * K + N / 4 + (N % 4 != 0) && smin == mn && smax == mx,
	      "rebin: NaN / Inf skipped (count %llu)", (unsigned long long)count);
	loom_calib_free(c);

	/* zeros first, values later: the zeros stay in the bin of 0 */
	c = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_PERCENTILE, 99));
	memset(x, 0, N * sizeof(float));
	rc = feed(&r, c, x, N) || loom_calib_stats(c, r.x, &smin, &smax, &count, NULL, &range);
	CHECK(!rc && smin == 0 &&
		      smax == 0 && range == 0, "zeros: min = max = 0, R = 0");
	{
		float lo, hi;
		float lo2, hi2;
		rc = loom_calib_range_by(c, r.x, LOOM_CALIB_MSE, 0, &lo, &hi) || loom_calib_range(c, r.x, &lo2, &hi2);
		CHECK(!rc && lo == 0 && hi == 0 && lo2 == 0 && hi2 == 0, "zeros: ranges MSE [%g, %g], p99 [%g, %g]", lo,
		      hi, lo2, hi2);
	}
	for (int i = 0; i < N; i++)
		x[i] = i % 2 ? 2.0f : -2.0f;
	rc = feed(&r, c, x, N) || loom_calib_stats(c, r.x, NULL, NULL, &count, &hist, &range);
	CHECK(!rc && range == 2 &&
		      hist[LOOM_CALIB_BINS / 2] == N && hist[0] == N / 2 && hist[LOOM_CALIB_BINS - 1] == N - N / 2,
	      "zeros then +-2: R 2, bin of 0 holds the %d zeros", N);
	loom_calib_free(c);
	loom_graph_free(r.g);
	free(x);
	free(all);
}

static void test_weight_scales(void)
{
	/* [3][2][2] */
	float w[12] = {1, -2, 3, 0.5f, 0, 0, 0, 0, -127, 2, 4, 5};
	int64_t dims[3] = {3, 2, 2};
	loom_tensor t = {.name = "w", .dtype = LOOM_DT_FLOAT, .rank = 3, .data = w, .is_const = 1};
	float s[4];
	int n;
	memcpy(t.dims, dims, sizeof(dims));
	n = loom_calib_weight_scales(&t, 0, s);
	CHECK(n == 3 && s[0] == 3.0f / 127 && s[1] == 1.0f && s[2] == 1.0f,
	      "weight scales axis 0: %d channels %g %g %g (a zero channel -> 1)", n, s[0], s[1], s[2]);
	n = loom_calib_weight_scales(&t, 1, s);
	/* channel 0: 1 -2 0 0 -127 2 ; channel 1: 3 .5 0 0 4 5 */
	CHECK(n == 2 && s[0] == 1.0f && s[1] == 5.0f / 127, "weight scales axis 1: %g %g", s[0], s[1]);
	n = loom_calib_weight_scales(&t, -1, s);
	/* last axis 0: 1 3 0 0 -127 4 ; 1: -2 .5 0 0 2 5 */
	CHECK(n == 2 && s[0] == 1.0f && s[1] == 5.0f / 127, "weight scales axis -1: %g %g", s[0], s[1]);
	CHECK(loom_calib_weight_scales(&t, 3, s) == -1 && loom_calib_weight_scales(&t, -4, s) == -1,
	      "weight scales: axis out of range -> -1");
	t.dtype = LOOM_DT_INT32;
	CHECK(loom_calib_weight_scales(&t, 0, s) == -1, "weight scales: non-float -> -1");
}

/* ------------------------------------------------------------ --calib DIR */

typedef struct seen {
	int n;
	char where[8][512];
	int ninputs[8];
	char names[8][4][64];
	float first[8][4];
	int64_t dims0[8][LOOM_MAX_RANK];
	int rank0[8];
} seen;

static int record(void *ctx, int sample, loom_tensor *in, int nin, const char *where, char *err, size_t errlen)
{
	seen *s = ctx;
	(void)err;
	(void)errlen;
	if (s->n >= 8 || sample != s->n)
		return -1;
	snprintf(s->where[s->n], sizeof(s->where[0]), "%s", where);
	s->ninputs[s->n] = nin;
	for (int i = 0; i < nin && i < 4; i++) {
		snprintf(s->names[s->n][i], sizeof(s->names[0][0]), "%s", in[i].name ? in[i].name : "(null)");
		s->first[s->n][i] = in[i].dtype == LOOM_DT_FLOAT && loom_tensor_numel(&in[i]) > 0 ?
					    ((float *)in[i].data)[0] : NAN;
	}
	s->rank0[s->n] = in[0].rank;
	memcpy(s->dims0[s->n], in[0].dims, sizeof(in[0].dims));
	s->n++;
	return 0;
}

static void test_dir_conv(void)
{
	const char *dir = "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding";
	char err[1024], path[1200];
	seen s;
	int n;
	loom_graph *g = NULL;
	loom_calib *c;
	loom_tensor out;
	float lo, hi, mn = INFINITY, mx = -INFINITY;
	if (!oc_file_exists(dir)) {
		check_skip("%s", dir);
		return;
	}
	memset(&s, 0, sizeof(s));
	n = loom_calib_dir(dir, record, &s, err, sizeof(err));
	CHECK(n == 1 && s.n == 1 && s.ninputs[0] == 2 && strstr(s.where[0], "test_data_set_0") && s.rank0[0] == 4 &&
		      s.dims0[0][2] == 7 && s.dims0[0][3] == 5,
	      "dir conv case: %d sample(s), %d inputs (%s, %s), x rank %d [.., %lld, %lld] from %s", n,
	      s.ninputs[0], s.names[0][0], s.names[0][1], s.rank0[0], (long long)s.dims0[0][2],
	      (long long)s.dims0[0][3], s.where[0]);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof(err))) {
		CHECK_FAIL("dir conv case: load: %s", err);
		return;
	}
	c = OC_MUSTP(loom_calib_new(g, LOOM_CALIB_MINMAX, 0));
	n = loom_calib_run_dir(c, g, dir, err, sizeof(err));
	CHECK(n == 1, "dir conv case: loom_calib_run_dir: %d %s", n, n < 0 ? err : "");
	snprintf(path, sizeof(path), "%s/test_data_set_0/output_0.pb", dir);
	if (n == 1 && !loom_onnx_load_tensor(path, &out, err, sizeof(err))) {
		for (int64_t i = 0; i < loom_tensor_numel(&out); i++) {
			mn = fminf(mn, ((float *)out.data)[i]);
			mx = fmaxf(mx, ((float *)out.data)[i]);
		}
		loom_tensor_clear(&out);
		int rc = loom_calib_range(c, g->outputs[0], &lo, &hi);
		CHECK(!rc && fabsf(lo - mn) < 1e-4f && fabsf(hi - mx) < 1e-4f,
		      "dir conv case: output range [%g, %g] = output_0.pb's [%g, %g]", lo, hi, mn, mx);
	}
	for (int i = 0; i < g->ntensors; i++)
		if (!g->tensors[i].is_const && g->tensors[i].dtype == LOOM_DT_FLOAT) {
			int ok = !loom_calib_range(c, i, &lo, &hi);
			CHECK(ok && lo <= hi, "dir conv case: '%s' [%g, %g]", g->tensors[i].name, lo, hi);
		}
	loom_calib_free(c);
	loom_graph_free(g);
}

/* TensorProto encoding: dims (1), data_type (2), name (8), raw_data (9) */
static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static void write_pb(const char *path, const char *name, int rank, const int64_t *dims, const float *data)
{
	unsigned char buf[4096];
	size_t n = 0, numel = 1;
	FILE *f;
	for (int i = 0; i < rank; i++) {
		buf[n++] = 1 << 3;
		n += put_varint(buf + n, (uint64_t)dims[i]);
		numel *= (size_t)dims[i];
	}
	buf[n++] = 2 << 3;
	n += put_varint(buf + n, LOOM_DT_FLOAT);
	if (name && name[0]) {
		buf[n++] = 8 << 3 | 2;
		n += put_varint(buf + n, strlen(name));
		memcpy(buf + n, name, strlen(name));
		n += strlen(name);
	}
	buf[n++] = 9 << 3 | 2;
	n += put_varint(buf + n, numel * 4);
	memcpy(buf + n, data, numel * 4); /* little-endian host */
	n += numel * 4;
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
	fclose(f);
}

static void test_dir_temp(void)
{
	char tmpl[] = "/tmp/test_calib_XXXXXX", p[512], err[1024];
	const char *dir = mkdtemp(tmpl);
	int64_t d2[1] = {2};
	float v0[2] = {1, 2}, v1[2] = {3, 4}, vw[2] = {5, 6}, vo[2] = {7, 8}, s2[2] = {20, 21}, s10[2] = {100, 101};
	seen s;
	int n;
	if (!dir) {
		CHECK_FAIL("mkdtemp");
		return;
	}
	memset(&s, 0, sizeof(s));
	snprintf(p, sizeof(p), "%s/no_such", dir);
	CHECK(loom_calib_dir(p, record, &s, err, sizeof(err)) == -1 && strstr(err, "no_such"),
	      "dir: missing folder -> %s", err);
	CHECK(loom_calib_dir(dir, record, &s, err, sizeof(err)) == -1 && strstr(err, "no calibration data"),
	      "dir: empty folder -> %s", err);
	snprintf(p, sizeof(p), "%s/input_1.pb", dir);
	write_pb(p, "", 1, d2, v1);
	snprintf(p, sizeof(p), "%s/input_0.pb", dir);
	write_pb(p, "a", 1, d2, v0);
	snprintf(p, sizeof(p), "%s/w.pb", dir);
	write_pb(p, "", 1, d2, vw);
	snprintf(p, sizeof(p), "%s/output_0.pb", dir);
	write_pb(p, "out", 1, d2, vo);
	snprintf(p, sizeof(p), "%s/test_data_set_10", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/test_data_set_10/input_0.pb", dir);
	write_pb(p, "", 1, d2, s10);
	snprintf(p, sizeof(p), "%s/test_data_set_10/output_0.pb", dir);
	write_pb(p, "", 1, d2, vo);
	snprintf(p, sizeof(p), "%s/test_data_set_2", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/test_data_set_2/input_0.pb", dir);
	write_pb(p, "", 1, d2, s2);
	memset(&s, 0, sizeof(s));
	n = loom_calib_dir(dir, record, &s, err, sizeof(err));
	CHECK(n == 3 && s.n == 3, "dir temp: %d samples %s", n, n < 0 ? err : "");
	CHECK(s.ninputs[0] == 3 && !strcmp(s.names[0][0], "a") && !strcmp(s.names[0][1], "") &&
		      !strcmp(s.names[0][2], "w") && s.first[0][0] == 1 && s.first[0][1] == 3 && s.first[0][2] == 5,
	      "dir temp: top-level sample: input_0 (a), input_1, w.pb (named w); output_0.pb skipped: %s %s %s",
	      s.names[0][0], s.names[0][1], s.names[0][2]);
	CHECK(s.ninputs[1] == 1 && s.first[1][0] == 20 && strstr(s.where[1], "test_data_set_2") && s.ninputs[2] == 1 &&
		      s.first[2][0] == 100 && strstr(s.where[2], "test_data_set_10"),
	      "dir temp: then test_data_set_2, test_data_set_10 (numeric order), inputs only");

	/* a corrupt file: an error naming it */
	snprintf(p, sizeof(p), "%s/test_data_set_2/input_1.pb", dir);
	{
		FILE *f = fopen(p, "wb");
		if (f) {
			fputs("\xff\xff\xff garbage", f);
			fclose(f);
		}
	}
	memset(&s, 0, sizeof(s));
	CHECK(loom_calib_dir(dir, record, &s, err, sizeof(err)) == -1 && strstr(err, "input_1.pb"),
	      "dir temp: corrupt file -> %s", err);
	unlink(p);

	/* clean up */
	static const char *const files[] = {"input_0.pb", "input_1.pb", "w.pb", "output_0.pb",
					     "test_data_set_10/input_0.pb", "test_data_set_10/output_0.pb",
					     "test_data_set_2/input_0.pb", "test_data_set_10", "test_data_set_2"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		if (unlink(p))
			rmdir(p);
	}
	rmdir(dir);
}

static void test_bind(void)
{
	int64_t d2[1] = {2};
	float va[2] = {1, 2}, vb[2] = {3, 4};
	loom_graph *g = oc_graph_new(13, "(built by test_calib)");
	int a = oc_add_input(g, "a", LOOM_DT_FLOAT, 1, d2, NULL), b = oc_add_input(g, "b", LOOM_DT_FLOAT, 1, d2, NULL);
	loom_tensor t[2] = {{.name = "", .dtype = LOOM_DT_FLOAT, .rank = 1, .data = va},
			    {.name = "", .dtype = LOOM_DT_FLOAT, .rank = 1, .data = vb}};
	char err[512];
	t[0].dims[0] = t[1].dims[0] = 2;
	CHECK(!loom_calib_bind(g, t, 2, "s", err, sizeof(err)) && ((float *)g->tensors[a].data)[0] == 1 &&
		      ((float *)g->tensors[b].data)[0] == 3, "bind: unnamed tensors by position");
	t[0].name = "b";
	t[1].name = "a";
	CHECK(!loom_calib_bind(g, t, 2, "s", err, sizeof(err)) && ((float *)g->tensors[a].data)[0] == 3 &&
		      ((float *)g->tensors[b].data)[0] == 1, "bind: named tensors by name");
	t[0].name = "";
	CHECK(loom_calib_bind(g, t, 2, "s", err, sizeof(err)) == -1 && strstr(err, "'a'"),
	      "bind: two tensors for one input -> %s", err);
	CHECK(loom_calib_bind(g, t, 1, "s", err, sizeof(err)) == -1 && strstr(err, "'b'"),
	      "bind: a missing input -> %s", err);
	t[1].name = "b";
	t[1].dims[0] = 3;
	CHECK(loom_calib_bind(g, t, 2, "sample7", err, sizeof(err)) == -1 && strstr(err, "sample7") &&
		      strstr(err, "'b'"), "bind: shape mismatch -> %s", err);
	loom_graph_free(g);
}

/* ------------------------------------------------------------ end to end */

static void test_model(const char *models)
{
	char dir[1100], path[1200], err[1024];
	loom_graph *g = NULL;
	loom_calib *c;
	int n, printed = 0, nact = 0, bad = 0, nrelu = 0;
	snprintf(dir, sizeof(dir), "%s/digits_cnn_opset13", models);
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (!oc_file_exists(path)) {
		check_skip("end to end: no digits_cnn_opset13 model (make models)");
		return;
	}
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof(err))) {
		CHECK_FAIL("digits_cnn: load: %s", err);
		return;
	}
	c = OC_MUSTP(loom_calib_new(g, LOOM_CALIB_PERCENTILE, 99.99));
	n = loom_calib_run_dir(c, g, dir, err, sizeof(err));
	CHECK(n >= 1 && loom_calib_samples(c) == n, "digits_cnn: %d sample(s) observed %s", n, n < 0 ? err : "");
	for (int i = 0; i < g->ntensors; i++) {
		const loom_tensor *t = &g->tensors[i];
		int is_act = 0, is_relu = 0;
		float r[LOOM_CALIB_NMETHODS][2];
		if (t->is_const || t->dtype != LOOM_DT_FLOAT)
			continue;
		for (int k = 0; k < g->ninputs; k++)
			is_act |= g->inputs[k] == i;
		for (int k = 0; k < g->nnodes; k++)
			for (int o = 0; o < g->nodes[k].noutputs; o++)
				if (g->nodes[k].outputs[o] == i) {
					is_act = 1;
					is_relu = !strcmp(g->nodes[k].op_type, "Relu");
				}
		if (!is_act)
			continue;
		nact++;
		nrelu += is_relu;
		for (int m = 0; m < LOOM_CALIB_NMETHODS; m++) {
			if (loom_calib_range_by(c, i, m, 99.99, &r[m][0], &r[m][1]) || !(r[m][0] <= r[m][1]) ||
			    (is_relu && r[m][0] < 0)) {
				printf("  '%s' method %d: no range or bad [%g, %g]\n", t->name, m, r[m][0], r[m][1]);
				bad++;
			}
		}
		if (printed < 6 && !bad) {
			printf("  %-24s minmax [%9.4f, %9.4f]  p99.99 [%9.4f, %9.4f]  mse [%9.4f, %9.4f]\n", t->name,
			       r[0][0], r[0][1], r[1][0], r[1][1], r[2][0], r[2][1]);
			printed++;
		}
	}
	CHECK(nact > 0 && !bad, "digits_cnn: all %d activation tensors have lo <= hi by all methods, %d relu outputs lo >= 0",
	      nact, nrelu);
	loom_calib_free(c);
	loom_graph_free(g);
}

/* the element-wise statistics of x[0..n): min / max of the finite values
 * (the first of equal ones: a zero's sign), their count */
static uint64_t ref_minmax(const float *x, int64_t n, float *mn, float *mx)
{
	uint64_t cnt = 0;
	*mn = INFINITY, *mx = -INFINITY;
	for (int64_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			continue;
		*mn = x[i] < *mn ? x[i] : *mn;
		*mx = x[i] > *mx ? x[i] : *mx;
		cnt++;
	}
	return cnt;
}

/* min / max / count of one observation (8 lanes at a time, 16 on AVX-512) against
 * the element-wise loop: every length 1..40, NaNs, infinities, +0 / -0 in
 * either order (the sign of the first zero kept), all-NaN */
static void test_lanes(void)
{
	enum { MAXN = 40, CASES = 7 };
	float x[MAXN];
	uint32_t seed = 777;
	int bad = 0, runs = 0;
	for (int n = 1; n <= MAXN; n++)
		for (int k = 0; k < CASES; k++) {
			relu_graph r = relu_new(n);
			loom_calib *c = OC_MUSTP(loom_calib_new(r.g, LOOM_CALIB_MINMAX, 0));
			for (int i = 0; i < n; i++) {
				float v = (float)lcg(&seed) / (float)(1u << 24) * 2.0f - 1.0f;
				uint32_t pick = lcg(&seed) % 16;
				x[i] = k == 0 ? v
				       : k == 1 ? (pick < 3 ? NAN : v)                      /* NaNs */
				       : k == 2 ? (pick == 0 ? INFINITY : pick == 1 ? -INFINITY : v)
				       : k == 3 ? (pick < 8 ? 0.0f : -0.0f)                 /* zeros only */
				       : k == 4 ? (pick < 4 ? 0.0f : pick < 8 ? -0.0f : fabsf(v)) /* min 0 */
				       : k == 5 ? (pick < 4 ? 0.0f : pick < 8 ? -0.0f : -fabsf(v)) /* max 0 */
						: NAN;
			}
			float mn, mx, smin = 0, smax = 0;
			uint64_t cnt = ref_minmax(x, n, &mn, &mx), count = 0;
			if (feed(&r, c, x, n)) {
				bad++;
			} else if (!cnt) {
				bad += loom_calib_stats(c, r.x, &smin, &smax, &count, NULL, NULL) != -1;
			} else {
				int rc = loom_calib_stats(c, r.x, &smin, &smax, &count, NULL, NULL);
				if (rc || count != cnt || smin != mn || smax != mx || signbit(smin) != signbit(mn) ||
				    signbit(smax) != signbit(mx)) {
					if (!bad)
						printf("  n %d case %d: [%g, %g] %llu, element-wise [%g, %g] %llu\n", n, k,
						       smin, smax, (unsigned long long)count, mn, mx, (unsigned long long)cnt);
					bad++;
				}
			}
			runs++;
			loom_calib_free(c);
			loom_graph_free(r.g);
		}
	CHECK(!bad, "lanes: min / max / count (zero signs too) as the element-wise loop in %d observations", runs);
}

int main(int argc, char **argv)
{
	check_init(CHECK_SKIPS);
#ifdef LOOM_HOST_GENERIC
	printf("the portable code of calib.c and quantize.c (LOOM_HOST_GENERIC)\n");
#endif
	char models[1024];
	const char *b = getenv("BUILD");
	if (argc > 1)
		snprintf(models, sizeof(models), "%s", argv[1]);
	else
		snprintf(models, sizeof(models), "%s/models", b && b[0] ? b : "build");
	test_ramp();
	test_outlier();
	test_keep();
	test_rebin();
	test_lanes();
	test_weight_scales();
	test_dir_conv();
	test_dir_temp();
	test_bind();
	test_model(models);
	return check_report();
}
