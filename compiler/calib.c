/* calib.c - calibration statistics for INT8 post-training quantization
 * (compiler/calib.h): per-tensor min / max, growing histograms (only when a
 * method needs them) and mean images (for bias correction) of the float
 * activations of a graph, the min-max / percentile / MSE / entropy (KL)
 * range of each, per-channel symmetric weight scales, the enumeration of a
 * --calib DIR (.pb files, test_data_set_N folders) and the loop that runs
 * every sample on the reference executor. No global state; out of memory
 * is reported, never fatal. */
#include "compiler/calib.h"
#include "runtime/cpu_ops.h"
#include "compiler/onnx.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct calib_tensor {
	int tracked;         /* a graph input or a non-constant node output */
	float min, max;      /* of the finite values seen */
	uint64_t count;      /* finite values seen; 0 = no statistics yet */
	double range;        /* R: the histogram covers [-R, R]; 0 while all seen values are 0 */
	uint64_t *hist;      /* LOOM_CALIB_BINS bins, allocated at the first observation (KEEP_HIST) */
	double *sum;         /* KEEP_MEAN: per element of one row of dim 0, the sum over rows and samples */
	int64_t nsum;        /* its length (numel / dims[0]) */
	uint64_t rows;       /* rows summed */
	/* best_clip's range for MSE [0] and entropy [1], a function of the
	 * histogram kept until it changes (observe_one): a calibration reused by
	 * many compiles (loom compile --accuracy's trials) searches each once.
	 * best_st: 0 not searched yet, 1 found, -1 none */
	double best_lo[2], best_hi[2];
	int best_st[2];
} calib_tensor;

struct loom_calib {
	int method;
	double percentile;
	unsigned keep;       /* LOOM_CALIB_KEEP_* */
	int ntensors;
	calib_tensor *t;
	int samples;
};

unsigned loom_calib_method_keep(int method)
{
	return method == LOOM_CALIB_MINMAX ? 0 : LOOM_CALIB_KEEP_HIST;
}

loom_calib *loom_calib_new(const loom_graph *g, int method, double percentile)
{
	return loom_calib_new_keep(g, method, percentile, loom_calib_method_keep(method));
}

loom_calib *loom_calib_new_keep(const loom_graph *g, int method, double percentile, unsigned keep)
{
	loom_calib *c;
	if (!g || method < LOOM_CALIB_MINMAX || method >= LOOM_CALIB_NMETHODS ||
	    (keep & ~(unsigned)(LOOM_CALIB_KEEP_HIST | LOOM_CALIB_KEEP_MEAN)))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->method = method;
	c->percentile = percentile;
	c->keep = keep | loom_calib_method_keep(method);
	c->ntensors = g->ntensors;
	c->t = calloc(g->ntensors > 0 ? (size_t)g->ntensors : 1, sizeof(*c->t));
	if (!c->t) {
		free(c);
		return NULL;
	}
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i] >= 0 && g->inputs[i] < g->ntensors && !g->tensors[g->inputs[i]].is_const)
			c->t[g->inputs[i]].tracked = 1;
	for (int n = 0; n < g->nnodes; n++)
		for (int o = 0; o < g->nodes[n].noutputs; o++) {
			int ti = g->nodes[n].outputs[o];
			if (ti >= 0 && ti < g->ntensors && !g->tensors[ti].is_const)
				c->t[ti].tracked = 1;
		}
	return c;
}

unsigned loom_calib_keeps(const loom_calib *c)
{
	return c ? c->keep : 0;
}

int loom_calib_matches(const loom_calib *c, const loom_graph *g, int method, double percentile)
{
	if (!c || !g || c->ntensors != g->ntensors || c->percentile != percentile || method < LOOM_CALIB_MINMAX ||
	    method >= LOOM_CALIB_NMETHODS || (loom_calib_method_keep(method) & ~c->keep))
		return 0;
	loom_calib *fresh = loom_calib_new(g, method, percentile);
	int same = fresh != NULL;
	for (int t = 0; same && t < g->ntensors; t++)
		same = fresh->t[t].tracked == c->t[t].tracked;
	loom_calib_free(fresh);
	return same;
}

void loom_calib_free(loom_calib *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->ntensors; i++) {
		free(c->t[i].hist);
		free(c->t[i].sum);
	}
	free(c->t);
	free(c);
}

int loom_calib_samples(const loom_calib *c)
{
	return c ? c->samples : 0;
}

/* the bin of x in a histogram over [-range, range] (range > 0) */
static int bin_of(double x, double range)
{
	double f = (x + range) / (2.0 * range) * LOOM_CALIB_BINS;
	if (!(f >= 0)) /* below the range, or NaN */
		return 0;
	if (f >= LOOM_CALIB_BINS - 1)
		return LOOM_CALIB_BINS - 1;
	return (int)f; /* f >= 0: truncation is floor (no libm call in the hot loop) */
}

/* Grow the histogram of s to cover [-nr, nr] (nr = range * 2^k): every old
 * bin goes, by its centre, to the new bin that contains it whole. */
static void rebin(calib_tensor *s, double nr)
{
	uint64_t tmp[LOOM_CALIB_BINS];
	double w = 2.0 * s->range / LOOM_CALIB_BINS;
	memset(tmp, 0, sizeof(tmp));
	for (int i = 0; i < LOOM_CALIB_BINS; i++)
		if (s->hist[i])
			tmp[bin_of(-s->range + (i + 0.5) * w, nr)] += s->hist[i];
	memcpy(s->hist, tmp, sizeof(tmp));
	s->range = nr;
}

/* x[0..n) in 8 lanes (two 4-float vectors, GCC vector extensions: SSE2
 * on x86-64): each lane's min and max as the element-wise loop keeps them
 * (v < mn ? v : mn: a NaN fails both compares and is skipped) and its
 * count of NaNs */
typedef float calib_v4 __attribute__((vector_size(16)));
typedef int32_t calib_i4 __attribute__((vector_size(16)));

static inline calib_v4 pick(calib_i4 m, calib_v4 a, calib_v4 b)
{
	return (calib_v4)((m & (calib_i4)a) | (~m & (calib_i4)b));
}

static void lanes_minmax(const float *x, int64_t n, float *pmn, float *pmx, int64_t *pnan)
{
	const float inf = INFINITY;
	calib_v4 mn0 = {inf, inf, inf, inf}, mx0 = -mn0, mn1 = mn0, mx1 = mx0;
	int64_t nan = 0, i = 0;
	while (i + 8 <= n) {
		/* int32 NaN counts, at most 2^24 per lane at a time */
		int64_t e = n - (n - i) % 8, lim = i + ((int64_t)8 << 24);
		calib_i4 c0 = {0}, c1 = {0};
		for (e = e < lim ? e : lim; i < e; i += 8) {
			calib_v4 v0, v1;
			memcpy(&v0, x + i, sizeof v0);
			memcpy(&v1, x + i + 4, sizeof v1);
			mn0 = pick(v0 < mn0, v0, mn0);
			mx0 = pick(v0 > mx0, v0, mx0);
			mn1 = pick(v1 < mn1, v1, mn1);
			mx1 = pick(v1 > mx1, v1, mx1);
			c0 -= v0 != v0;
			c1 -= v1 != v1;
		}
		for (int l = 0; l < 4; l++)
			nan += (int64_t)c0[l] + c1[l];
	}
	float m0 = inf, m1 = -inf;
	for (int l = 0; l < 4; l++) {
		m0 = mn0[l] < m0 ? mn0[l] : m0;
		m0 = mn1[l] < m0 ? mn1[l] : m0;
		m1 = mx0[l] > m1 ? mx0[l] : m1;
		m1 = mx1[l] > m1 ? mx1[l] : m1;
	}
	for (; i < n; i++) {
		float v = x[i];
		m0 = v < m0 ? v : m0;
		m1 = v > m1 ? v : m1;
		nan += v != v;
	}
	*pmn = m0, *pmx = m1, *pnan = nan;
}

#if defined(__x86_64__) && !defined(LOOM_HOST_GENERIC)
#define CALIB_X86 1
#include <immintrin.h>

/* lanes_minmax on AVX-512, 16 lanes: the same min, max (vminps/vmaxps keep
 * the running value for a NaN, as pick does) and NaN count */
__attribute__((target("avx512f"))) static void lanes_minmax_avx512(const float *x, int64_t n, float *pmn,
								     float *pmx, int64_t *pnan)
{
	__m512 mn = _mm512_set1_ps(INFINITY), mx = _mm512_set1_ps(-INFINITY);
	int64_t nan = 0, i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);
		mn = _mm512_min_ps(v, mn);
		mx = _mm512_max_ps(v, mx);
		nan += __builtin_popcount(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
	}
	float m0 = _mm512_reduce_min_ps(mn), m1 = _mm512_reduce_max_ps(mx);
	for (; i < n; i++) {
		float v = x[i];
		m0 = v < m0 ? v : m0;
		m1 = v > m1 ? v : m1;
		nan += v != v;
	}
	*pmn = m0, *pmx = m1, *pnan = nan;
}
#endif

/* the first zero of x[0..n) (a min or max of 0 found lane by lane: the
 * element-wise loop keeps the sign of the first zero it meets) */
static float first_zero(const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (x[i] == 0.0f)
			return x[i];
	return 0.0f;
}

/* min, max and the count of finite values of x[0..n): 0, or -1 when there
 * is none; the values of the element-wise loop (the first of equal values,
 * so a zero's sign too). The common case (no infinity) is one branch-free
 * pass over x (lanes_minmax); an infinity (seen as a min or max of +-inf)
 * makes a second, element-wise pass. */
static int finite_minmax(const float *x, int64_t n, float *pmn, float *pmx, uint64_t *pcnt)
{
	float mn, mx;
	int64_t nan;
#ifdef CALIB_X86
	if (__builtin_cpu_supports("avx512f"))
		lanes_minmax_avx512(x, n, &mn, &mx, &nan);
	else
#endif
		lanes_minmax(x, n, &mn, &mx, &nan);
	uint64_t cnt = (uint64_t)(n - nan);
	if (isinf(mn) || isinf(mx)) { /* an infinity, or nothing but NaN */
		mn = INFINITY, mx = -INFINITY, cnt = 0;
		for (int64_t i = 0; i < n; i++) {
			float v = x[i];
			if (!isfinite(v))
				continue;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			cnt++;
		}
	} else {
		if (mn == 0.0f)
			mn = first_zero(x, n);
		if (mx == 0.0f)
			mx = first_zero(x, n);
	}
	*pmn = mn, *pmx = mx, *pcnt = cnt;
	return cnt ? 0 : -1;
}

static void observe_hist(calib_tensor *s, const float *x, int64_t n, double amax)
{
	if (amax > s->range) {
		if (s->range == 0) {
			s->range = amax; /* zeros seen so far are in bin BINS/2, which holds 0 */
		} else {
			double nr = s->range;
			while (nr < amax)
				nr *= 2;
			rebin(s, nr);
		}
	}
	/* bin = floor((v + range) * BINS / (2 range)) by one multiplication (the
	 * hot loop of calibration); 0 is exactly the edge of bin BINS/2 */
	double inv = s->range > 0 ? LOOM_CALIB_BINS / (2.0 * s->range) : 0;
	for (int64_t i = 0; i < n; i++) {
		float v = x[i];
		if (!isfinite(v))
			continue;
		int b = LOOM_CALIB_BINS / 2;
		if (v != 0 && s->range > 0) {
			double f = ((double)v + s->range) * inv;
			b = f >= LOOM_CALIB_BINS - 1 ? LOOM_CALIB_BINS - 1 : f > 0 ? (int)f : 0;
		}
		s->hist[b]++;
	}
}

/* the rows of dim 0 summed element-wise (non-finite values count as 0) */
static void observe_sum(calib_tensor *s, const float *x, int64_t n)
{
	int64_t rows = n / s->nsum;
	for (int64_t r = 0; r < rows; r++) {
		const float *row = x + r * s->nsum;
		for (int64_t i = 0; i < s->nsum; i++)
			s->sum[i] += isfinite(row[i]) ? row[i] : 0.0;
	}
	s->rows += (uint64_t)rows;
}

static void observe_one(calib_tensor *s, const float *x, int64_t n)
{
	float mn, mx;
	uint64_t cnt;
	if (s->sum)
		observe_sum(s, x, n);
	if (finite_minmax(x, n, &mn, &mx, &cnt))
		return;
	if (!s->count) {
		s->min = mn;
		s->max = mx;
	} else {
		if (mn < s->min)
			s->min = mn;
		if (mx > s->max)
			s->max = mx;
	}
	if (s->hist)
		observe_hist(s, x, n, fmax(fabs((double)mn), fabs((double)mx)));
	s->count += cnt;
	s->best_st[0] = s->best_st[1] = 0;
}

int loom_calib_observe(loom_calib *c, const loom_graph *g, char *err, size_t errlen)
{
	if (!c || !g) {
		snprintf(err, errlen, "calibration: no collector or graph");
		return -1;
	}
	if (g->ntensors != c->ntensors) {
		snprintf(err, errlen, "%s: calibration: the graph has %d tensors, the collector was made for %d",
			 g->path ? g->path : "graph", g->ntensors, c->ntensors);
		return -1;
	}
	for (int i = 0; i < g->ntensors; i++) {
		const loom_tensor *t = &g->tensors[i];
		calib_tensor *s = &c->t[i];
		int64_t n;
		if (!s->tracked || t->dtype != LOOM_DT_FLOAT)
			continue;
		n = loom_tensor_numel(t);
		if (n < 0) {
			snprintf(err, errlen, "calibration: tensor '%s' has an invalid shape", t->name);
			return -1;
		}
		if (!n)
			continue;
		if (!t->data) {
			snprintf(err, errlen, "calibration: tensor '%s' has no data (run the graph first)", t->name);
			return -1;
		}
		if ((c->keep & LOOM_CALIB_KEEP_HIST) && !s->hist &&
		    !(s->hist = calloc(LOOM_CALIB_BINS, sizeof(*s->hist)))) {
			snprintf(err, errlen, "calibration: out of memory for the histogram of '%s'", t->name);
			return -1;
		}
		if ((c->keep & LOOM_CALIB_KEEP_MEAN) && !s->sum && t->rank >= 1 && t->dims[0] > 0) {
			s->nsum = n / t->dims[0];
			if (!(s->sum = calloc((size_t)s->nsum, sizeof(*s->sum)))) {
				snprintf(err, errlen, "calibration: out of memory for the mean of '%s'", t->name);
				return -1;
			}
		}
		if (s->sum && t->rank >= 1 && n / t->dims[0] != s->nsum) {
			snprintf(err, errlen, "calibration: tensor '%s' changed its shape between samples", t->name);
			return -1;
		}
		observe_one(s, t->data, n);
	}
	c->samples++;
	return 0;
}

static const calib_tensor *stats_of(const loom_calib *c, int tensor)
{
	if (!c || tensor < 0 || tensor >= c->ntensors || !c->t[tensor].tracked || !c->t[tensor].count)
		return NULL;
	return &c->t[tensor];
}

int loom_calib_stats(const loom_calib *c, int tensor, float *min, float *max, uint64_t *count,
		     const uint64_t **hist, double *absmax_range)
{
	const calib_tensor *s = stats_of(c, tensor);
	if (!s)
		return -1;
	if (min)
		*min = s->min;
	if (max)
		*max = s->max;
	if (count)
		*count = s->count;
	if (hist)
		*hist = s->hist;
	if (absmax_range)
		*absmax_range = s->range;
	return 0;
}

/* the value below which a fraction frac of the values lie (linear inside a
 * bin), clamped to [min, max] */
static double quantile(const calib_tensor *s, double frac)
{
	double target = frac * (double)s->count, cum = 0, v = s->max;
	double w = 2.0 * s->range / LOOM_CALIB_BINS;
	if (s->range == 0)
		return 0;
	for (int i = 0; i < LOOM_CALIB_BINS; i++) {
		double h = (double)s->hist[i];
		if (h > 0 && cum + h >= target) {
			double f = (target - cum) / h;
			v = -s->range + (i + (f < 0 ? 0 : f)) * w;
			break;
		}
		cum += h;
	}
	if (v < s->min)
		v = s->min;
	if (v > s->max)
		v = s->max;
	return v;
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* squared error of quantizing the histogram with the affine 256-level grid
 * over [lo, hi] widened to contain 0 */
static double quant_mse(const calib_tensor *s, double lo, double hi)
{
	double qlo = lo < 0 ? lo : 0, qhi = hi > 0 ? hi : 0;
	double scale = (qhi - qlo) / 255.0, zp, e = 0;
	double w = 2.0 * s->range / LOOM_CALIB_BINS;
	if (!(scale > 0))
		scale = 1; /* all of the range is 0: every value becomes 0 */
	zp = nearbyint(-qlo / scale);
	for (int i = 0; i < LOOM_CALIB_BINS; i++) {
		double x, q, d;
		if (!s->hist[i])
			continue;
		x = -s->range + (i + 0.5) * w;
		q = clampd(nearbyint(x / scale) + zp, 0, 255);
		d = x - (q - zp) * scale;
		e += d * d * (double)s->hist[i];
	}
	return e;
}

/* MXNet's _smooth_distribution on counts v[0..n): eps to every zero entry,
 * taken from the nonzero ones in proportion */
static void smooth(double *v, int n)
{
	const double eps = 1e-4;
	int nz = 0;
	for (int i = 0; i < n; i++)
		nz += v[i] != 0;
	if (!nz || nz == n)
		return;
	double eps1 = eps * (n - nz) / nz;
	for (int i = 0; i < n; i++)
		v[i] += v[i] != 0 ? -eps1 : eps;
}

/* KL(P || Q) of the histogram clipped to [lo, hi] (both tails added to the
 * edge bins: P) against the same bins quantized to the 256 levels of the
 * affine grid over [lo, hi] widened to contain 0 (each level's count spread
 * evenly over its nonzero bins: Q), as TensorRT's entropy calibrator and
 * MXNet's _get_optimal_threshold do for a symmetric grid. p, q: BINS
 * doubles of scratch. */
static double kl_at(const calib_tensor *s, double lo, double hi, double *p, double *q)
{
	double qlo = lo < 0 ? lo : 0, qhi = hi > 0 ? hi : 0, scale = (qhi - qlo) / 255.0;
	double w = 2.0 * s->range / LOOM_CALIB_BINS, lsum[256], ps = 0, qs = 0, kl = 0;
	int lnz[256], i0 = -1, i1 = -1;
	if (!(scale > 0))
		return INFINITY;
	for (int i = 0; i < LOOM_CALIB_BINS; i++) {
		double x = -s->range + (i + 0.5) * w;
		if (x >= lo - 0.5 * w && x <= hi + 0.5 * w) {
			i0 = i0 < 0 ? i : i0;
			i1 = i;
		}
	}
	if (i0 < 0)
		return INFINITY;
	memset(lsum, 0, sizeof lsum);
	memset(lnz, 0, sizeof lnz);
	int n = i1 - i0 + 1;
	for (int i = 0; i < LOOM_CALIB_BINS; i++)
		p[i < i0 ? 0 : i > i1 ? n - 1 : i - i0] += (double)s->hist[i];
	for (int i = i0; i <= i1; i++) {
		double x = -s->range + (i + 0.5) * w;
		int L = (int)clampd(nearbyint((x - qlo) / scale), 0, 255);
		lsum[L] += (double)s->hist[i];
		lnz[L] += p[i - i0] != 0;
	}
	for (int i = i0; i <= i1; i++) {
		double x = -s->range + (i + 0.5) * w;
		int L = (int)clampd(nearbyint((x - qlo) / scale), 0, 255);
		q[i - i0] = p[i - i0] != 0 && lnz[L] ? lsum[L] / lnz[L] : 0;
	}
	smooth(p, n);
	smooth(q, n);
	for (int i = 0; i < n; i++)
		ps += p[i], qs += q[i];
	for (int i = 0; i < n; i++)
		if (p[i] > 0)
			kl += p[i] / ps * log((p[i] / ps) / (q[i] > 0 ? q[i] / qs : 1e-300));
	return kl;
}

/* the clipping threshold T in (0, max|x|] minimizing the error measure of
 * the range [max(min, -T), min(max, T)]: quantization MSE or KL
 * divergence; T runs over every LOOM_CALIB_MSE_STRIDE-th bin edge of |x|
 * and max |x|. -1 when there is no scratch memory (KL). */
static int best_clip(const calib_tensor *s, int kl, double *l, double *h)
{
	double amax = fmax(fabs((double)s->min), fabs((double)s->max));
	double w = 2.0 * s->range / LOOM_CALIB_BINS, best = INFINITY, bt = amax;
	double *p = NULL, *q = NULL;
	if (s->range == 0 || amax == 0) {
		*l = s->min;
		*h = s->max;
		return 0;
	}
	if (kl && !(p = malloc(2 * LOOM_CALIB_BINS * sizeof *p)))
		return -1;
	q = p ? p + LOOM_CALIB_BINS : NULL;
	for (int k = LOOM_CALIB_MSE_STRIDE;; k += LOOM_CALIB_MSE_STRIDE) {
		double t = k * w, e;
		int last = 0;
		if (k >= LOOM_CALIB_BINS / 2 || t >= amax) {
			t = amax;
			last = 1;
		}
		if (kl) {
			memset(p, 0, 2 * LOOM_CALIB_BINS * sizeof *p);
			e = kl_at(s, clampd(s->min, -t, t), clampd(s->max, -t, t), p, q);
		} else {
			e = quant_mse(s, clampd(s->min, -t, t), clampd(s->max, -t, t));
		}
		if (e < best) {
			best = e;
			bt = t;
		}
		if (last)
			break;
	}
	free(p);
	*l = clampd(s->min, -bt, bt);
	*h = clampd(s->max, -bt, bt);
	return 0;
}

int loom_calib_range_by(const loom_calib *c, int tensor, int method, double percentile, float *lo, float *hi)
{
	const calib_tensor *s = stats_of(c, tensor);
	double l, h;
	if (!s || !lo || !hi || (method != LOOM_CALIB_MINMAX && !s->hist))
		return -1;
	switch (method) {
	case LOOM_CALIB_MINMAX:
		l = s->min;
		h = s->max;
		break;
	case LOOM_CALIB_PERCENTILE: {
		double p = clampd(percentile, 50, 100) / 100.0;
		l = quantile(s, 1.0 - p);
		h = quantile(s, p);
		if (l > h)
			l = h;
		break;
	}
	case LOOM_CALIB_MSE:
	case LOOM_CALIB_ENTROPY: {
		/* the search's result is kept in the tensor's statistics (a cache:
		 * the same histogram gives the same range) */
		calib_tensor *w = (calib_tensor *)s;
		int k = method == LOOM_CALIB_ENTROPY;
		if (!w->best_st[k])
			w->best_st[k] = best_clip(s, k, &w->best_lo[k], &w->best_hi[k]) ? -1 : 1;
		if (w->best_st[k] < 0)
			return -1;
		l = w->best_lo[k];
		h = w->best_hi[k];
		break;
	}
	default:
		return -1;
	}
	*lo = (float)l;
	*hi = (float)h;
	return 0;
}

int loom_calib_mean(const loom_calib *c, int tensor, const double **sum, int64_t *n, uint64_t *rows)
{
	const calib_tensor *s = stats_of(c, tensor);
	if (!s || !s->sum || !s->rows)
		return -1;
	*sum = s->sum;
	*n = s->nsum;
	*rows = s->rows;
	return 0;
}

const char *loom_calib_method_name(int method)
{
	static const char *const names[LOOM_CALIB_NMETHODS] = {"minmax", "percentile", "mse", "entropy"};
	return method >= 0 && method < LOOM_CALIB_NMETHODS ? names[method] : NULL;
}

int loom_calib_method_of(const char *name)
{
	for (int m = 0; m < LOOM_CALIB_NMETHODS; m++)
		if (name && !strcmp(name, loom_calib_method_name(m)))
			return m;
	return -1;
}

int loom_calib_range(const loom_calib *c, int tensor, float *lo, float *hi)
{
	if (!c)
		return -1;
	return loom_calib_range_by(c, tensor, c->method, c->percentile, lo, hi);
}

int loom_calib_weight_scales(const loom_tensor *w, int axis, float *scales)
{
	int64_t outer = 1, inner = 1, ch;
	const float *x;
	if (!w || !scales || w->dtype != LOOM_DT_FLOAT || !w->data || w->rank < 1 || w->rank > LOOM_MAX_RANK)
		return -1;
	if (axis < 0)
		axis += w->rank;
	if (axis < 0 || axis >= w->rank)
		return -1;
	ch = w->dims[axis];
	if (ch <= 0 || ch > 0x7fffffff || loom_tensor_numel(w) < 0)
		return -1;
	for (int i = 0; i < axis; i++)
		outer *= w->dims[i];
	for (int i = axis + 1; i < w->rank; i++)
		inner *= w->dims[i];
	x = w->data;
	for (int64_t k = 0; k < ch; k++) {
		float m = 0;
		for (int64_t o = 0; o < outer; o++)
			for (int64_t i = 0; i < inner; i++) {
				float v = fabsf(x[(o * ch + k) * inner + i]);
				if (!isfinite(v))
					return -1;
				if (v > m)
					m = v;
			}
		scales[k] = m > 0 ? m / 127.0f : 1.0f;
	}
	return (int)ch;
}

/* ------------------------------------------------------------ --calib DIR */

/* k of "input_<k>.pb", else -1 */
static long input_index(const char *name)
{
	const char *p = name + 6;
	char *end;
	long k;
	if (strncmp(name, "input_", 6) || *p < '0' || *p > '9')
		return -1;
	k = strtol(p, &end, 10);
	return strcmp(end, ".pb") ? -1 : k;
}

/* N of "test_data_set_<N>", else -1 */
static long set_index(const char *name)
{
	const char *p = name + 14;
	char *end;
	long k;
	if (strncmp(name, "test_data_set_", 14) || *p < '0' || *p > '9')
		return -1;
	k = strtol(p, &end, 10);
	return *end ? -1 : k;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_pb(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
	long ka = input_index(a), kb = input_index(b);
	if ((ka >= 0) != (kb >= 0))
		return ka >= 0 ? -1 : 1;
	if (ka >= 0 && ka != kb)
		return ka < kb ? -1 : 1;
	return strcmp(a, b);
}

static int cmp_set(const void *pa, const void *pb)
{
	long a = set_index(*(const char *const *)pa), b = set_index(*(const char *const *)pb);
	return a < b ? -1 : a > b;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int is_kind(const char *dir, const char *name, int want_dir)
{
	char path[4096];
	struct stat st;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) || stat(path, &st))
		return 0;
	return want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* The entries of dir that are .pb files (inputs_only: input_<k>.pb only;
 * else every .pb but output_*.pb) or, with sets, test_data_set_<N>
 * folders, sorted. 0 or -1 (err). */
static int list_dir(const char *dir, int sets, int inputs_only, char ***out, size_t *count, char *err,
		    size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	*count = 0;
	if (!d) {
		snprintf(err, errlen, "%s: cannot open the calibration folder: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		int want;
		if (sets)
			want = set_index(e->d_name) >= 0 && is_kind(dir, e->d_name, 1);
		else if (inputs_only)
			want = input_index(e->d_name) >= 0 && is_kind(dir, e->d_name, 0);
		else
			want = ends_with(e->d_name, ".pb") && strncmp(e->d_name, "output_", 7) &&
			       is_kind(dir, e->d_name, 0);
		if (!want)
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			char **nv = realloc(v, nc * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
			cap = nc;
		}
		if (!(v[n] = strdup(e->d_name)))
			goto oom;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), sets ? cmp_set : cmp_pb);
	*out = v;
	*count = n;
	return 0;
oom:
	closedir(d);
	free_names(v, n);
	snprintf(err, errlen, "%s: out of memory listing the folder", dir);
	return -1;
}

/* Load folder's files names[0..n) as one sample and call fn. */
static int run_sample(const char *folder, char **names, size_t n, int sample, loom_calib_sample_fn fn, void *ctx,
		      char *err, size_t errlen)
{
	loom_tensor *ts = calloc(n ? n : 1, sizeof(*ts));
	char path[4096];
	int rc = 0;
	if (!ts) {
		snprintf(err, errlen, "%s: out of memory", folder);
		return -1;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", folder, names[i]) >= sizeof(path)) {
			snprintf(err, errlen, "%s: path too long", folder);
			rc = -1;
		} else if (loom_onnx_load_tensor(path, &ts[i], err, errlen)) {
			rc = -1;
		} else if ((!ts[i].name || !ts[i].name[0]) && input_index(names[i]) < 0) {
			char *stem = strdup(names[i]);
			if (!stem) {
				snprintf(err, errlen, "%s: out of memory", path);
				rc = -1;
			} else {
				stem[strlen(stem) - 3] = 0; /* drop ".pb" */
				free(ts[i].name);
				ts[i].name = stem;
			}
		}
	}
	if (!rc)
		rc = fn(ctx, sample, ts, (int)n, folder, err, errlen) ? -1 : 0;
	for (size_t i = 0; i < n; i++)
		loom_tensor_clear(&ts[i]);
	free(ts);
	return rc;
}

int loom_calib_dir(const char *dir, loom_calib_sample_fn fn, void *ctx, char *err, size_t errlen)
{
	char **top = NULL, **sets = NULL;
	size_t ntop = 0, nsets = 0;
	int samples = 0, rc = 0;
	char folder[4096];
	if (!dir || !fn) {
		snprintf(err, errlen, "calibration: no folder or callback");
		return -1;
	}
	if (list_dir(dir, 0, 0, &top, &ntop, err, errlen) || list_dir(dir, 1, 0, &sets, &nsets, err, errlen)) {
		free_names(top, ntop);
		return -1;
	}
	if (ntop) {
		rc = run_sample(dir, top, ntop, samples, fn, ctx, err, errlen);
		samples++;
	}
	for (size_t s = 0; s < nsets && !rc; s++) {
		char **files = NULL;
		size_t nf = 0;
		if ((size_t)snprintf(folder, sizeof(folder), "%s/%s", dir, sets[s]) >= sizeof(folder)) {
			snprintf(err, errlen, "%s: path too long", dir);
			rc = -1;
			break;
		}
		if (list_dir(folder, 0, 1, &files, &nf, err, errlen)) {
			rc = -1;
			break;
		}
		if (!nf) {
			snprintf(err, errlen, "%s: no input_<k>.pb files in the calibration sample", folder);
			rc = -1;
		} else {
			rc = run_sample(folder, files, nf, samples, fn, ctx, err, errlen);
			samples++;
		}
		free_names(files, nf);
	}
	free_names(top, ntop);
	free_names(sets, nsets);
	if (rc)
		return -1;
	if (!samples) {
		snprintf(err, errlen, "%s: no calibration data (no .pb files, no test_data_set_N folders)", dir);
		return -1;
	}
	return samples;
}

/* "[1,3,8,8]" */
static void fmt_dims(char *buf, size_t len, const loom_tensor *t)
{
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < t->rank && d < LOOM_MAX_RANK && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

int loom_calib_bind(loom_graph *g, const loom_tensor *inputs, int ninputs, const char *where, char *err,
		    size_t errlen)
{
	int src[256];
	const char *w = where ? where : "calibration sample";
	if (!g || (ninputs && !inputs) || ninputs < 0) {
		snprintf(err, errlen, "%s: no graph or inputs", w);
		return -1;
	}
	if (g->ninputs > (int)(sizeof(src) / sizeof(src[0]))) {
		snprintf(err, errlen, "%s: too many graph inputs (%d)", w, g->ninputs);
		return -1;
	}
	if (ninputs > g->ninputs) {
		snprintf(err, errlen,
			 "%s: %d input tensors for a graph of %d input%s (a calibration folder holds one sample per "
			 "test_data_set_N/ subfolder, input_K.pb for graph input K; or one sample's .pb files "
			 "directly; for a one-input graph, .pb files of the input's type and shape, one sample each)",
			 w, ninputs, g->ninputs, g->ninputs == 1 ? "" : "s");
		return -1;
	}
	for (int i = 0; i < g->ninputs; i++)
		src[i] = -1;
	for (int j = 0; j < ninputs; j++) {
		int k = -1;
		for (int i = 0; i < g->ninputs && inputs[j].name && inputs[j].name[0]; i++)
			if (!strcmp(g->tensors[g->inputs[i]].name, inputs[j].name))
				k = i;
		if (k < 0)
			k = j;
		if (src[k] >= 0) {
			snprintf(err, errlen, "%s: tensors %d and %d both feed graph input '%s'", w, src[k], j,
				 g->tensors[g->inputs[k]].name);
			return -1;
		}
		src[k] = j;
	}
	for (int i = 0; i < g->ninputs; i++) {
		loom_tensor *gt = &g->tensors[g->inputs[i]];
		const loom_tensor *t;
		int same;
		if (src[i] < 0) {
			snprintf(err, errlen, "%s: no data for graph input '%s'", w, gt->name);
			return -1;
		}
		t = &inputs[src[i]];
		same = t->dtype == gt->dtype && t->rank == gt->rank;
		for (int d = 0; same && d < t->rank; d++)
			same = t->dims[d] == gt->dims[d];
		if (!same) {
			char ds[2][160];
			fmt_dims(ds[0], sizeof(ds[0]), t);
			fmt_dims(ds[1], sizeof(ds[1]), gt);
			snprintf(err, errlen, "%s: tensor %d '%s' (%s %s) does not match graph input '%s' (%s %s)", w,
				 src[i], t->name ? t->name : "", loom_dtype_name(t->dtype), ds[0], gt->name,
				 loom_dtype_name(gt->dtype), ds[1]);
			return -1;
		}
		if (loom_tensor_set_data(gt, t->data, loom_tensor_bytes(t))) {
			snprintf(err, errlen, "%s: cannot set graph input '%s' (out of memory or no data)", w,
				 gt->name);
			return -1;
		}
	}
	return 0;
}

typedef struct run_ctx {
	loom_calib *c;
	loom_graph *g;
} run_ctx;

/* several tensors for a one-input graph, each of the input's type and
 * shape: each one is a sample of its own */
static int one_per_file(const loom_graph *g, const loom_tensor *inputs, int ninputs)
{
	if (g->ninputs != 1 || ninputs < 2)
		return 0;
	const loom_tensor *gt = &g->tensors[g->inputs[0]];
	for (int j = 0; j < ninputs; j++) {
		int same = inputs[j].dtype == gt->dtype && inputs[j].rank == gt->rank;
		for (int d = 0; same && d < gt->rank; d++)
			same = inputs[j].dims[d] == gt->dims[d];
		if (!same)
			return 0;
	}
	return 1;
}

static int run_one(void *vctx, int sample, loom_tensor *inputs, int ninputs, const char *where, char *err,
		   size_t errlen)
{
	run_ctx *r = vctx;
	char msg[1024];
	if (one_per_file(r->g, inputs, ninputs)) {
		for (int j = 0; j < ninputs; j++) {
			char w[1100];
			loom_tensor one = inputs[j];
			one.name = NULL; /* bound to the one input whatever its name */
			snprintf(w, sizeof w, "%.1000s (tensor %d)", where, j);
			if (run_one(vctx, sample, &one, 1, w, err, errlen))
				return -1;
		}
		return 0;
	}
	if (loom_calib_bind(r->g, inputs, ninputs, where, err, errlen))
		return -1;
	if (loom_ref_run(r->g, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", where, msg);
		return -1;
	}
	if (loom_calib_observe(r->c, r->g, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", where, msg);
		return -1;
	}
	return 0;
}

int loom_calib_run_dir(loom_calib *c, loom_graph *g, const char *dir, char *err, size_t errlen)
{
	run_ctx r = {c, g};
	if (!c || !g) {
		snprintf(err, errlen, "calibration: no collector or graph");
		return -1;
	}
	int before = loom_calib_samples(c);
	if (loom_calib_dir(dir, run_one, &r, err, errlen) < 0)
		return -1;
	return loom_calib_samples(c) - before;
}
