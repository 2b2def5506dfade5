/* calib.h - calibration statistics for post-training INT8 quantization in
 * loom compile (compiler/calib.c): per-tensor ranges of the float
 * activations of a graph (graph inputs and node outputs, never constants)
 * collected over calibration samples run on the reference executor
 * (runtime/cpu_ops.h), per-channel symmetric weight scales, and the
 * enumeration of a --calib DIR. No global state: everything lives in a
 * loom_calib the caller owns.
 *
 * Usage: c = loom_calib_new(g, method, pct); for each sample: put the
 * inputs into g (loom_calib_bind), loom_ref_run(g), loom_calib_observe(c, g);
 * then loom_calib_range(c, tensor, &lo, &hi). loom_calib_run_dir does the
 * loop over a --calib DIR.
 *
 * Histogram: per tensor LOOM_CALIB_BINS bins over the symmetric interval
 * [-R, R]; R starts as the max |x| of the first observation with a nonzero
 * value and grows by powers of two when a later value falls outside, the
 * old bins being merged into the new ones (exact: with a power-of-two
 * growth every old bin lies inside one new bin), as ONNX Runtime's
 * HistogramCollector and TensorRT's calibrator rebin. NaN and infinities
 * are not counted (and do not move min / max).
 *
 * Ranges (loom_calib_range):
 *  - LOOM_CALIB_MINMAX: the observed [min, max].
 *  - LOOM_CALIB_PERCENTILE: both tails clipped separately (asymmetric):
 *    lo = the (100 - p)th percentile, hi = the p-th percentile of the
 *    values (linear interpolation inside a bin), clamped to [min, max]; a
 *    tensor that is never negative (ReLU) keeps lo >= 0. p is clamped to
 *    [50, 100]; 100 gives (about) min-max.
 *  - LOOM_CALIB_MSE: the threshold T minimizing the mean squared error of
 *    quantizing the histogram (bin centres weighted by counts) to int8 with
 *    range [max(min, -T), min(max, T)], i.e. both tails clipped at T, the
 *    grid being the 256-level affine (scale, zero point) one of ONNX
 *    QuantizeLinear over that range widened to contain 0; T runs over the
 *    bin edges of |x| (every LOOM_CALIB_MSE_STRIDE-th one, and max |x|).
 *  - LOOM_CALIB_ENTROPY: the same search for the T minimizing the KL
 *    divergence between the clipped histogram (tails added to the edge
 *    bins) and its quantization to the 256 levels of that grid, as
 *    TensorRT's entropy calibrator and MXNet do it (their grid is the
 *    symmetric one of 128 levels per side; smoothing as MXNet's).
 * The returned range need not contain 0: the quantizer widens it.
 *
 * What a collector keeps (loom_calib_new_keep): min / max always (one
 * vectorized pass per tensor), the histogram only with KEEP_HIST (every
 * method but min-max needs it: loom_calib_new sets it by the method, and
 * loom_calib_range_by of such a method fails without it), the mean image
 * with KEEP_MEAN: per element of one row of dim 0 (a batch image), the
 * mean over rows and samples, for bias correction (loom compile
 * --bias-correction). */
#ifndef LOOM_CALIB_H
#define LOOM_CALIB_H

#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

enum loom_calib_method {
	LOOM_CALIB_MINMAX = 0,
	LOOM_CALIB_PERCENTILE = 1,
	LOOM_CALIB_MSE = 2,
	LOOM_CALIB_ENTROPY = 3,
	LOOM_CALIB_NMETHODS = 4
};

/* what a collector keeps beyond min / max */
enum loom_calib_keep {
	LOOM_CALIB_KEEP_HIST = 1,   /* the histogram (percentile, MSE, entropy) */
	LOOM_CALIB_KEEP_MEAN = 2,   /* the mean image (bias correction) */
};

#define LOOM_CALIB_BINS 2048        /* histogram bins per tensor (even) */
#define LOOM_CALIB_MSE_STRIDE 4     /* MSE candidate thresholds: every 4th bin edge */

typedef struct loom_calib loom_calib;

/* A collector for the activation tensors of g (its graph inputs and node
 * outputs that are not constants; whether they are float is checked at
 * each observation). NULL when out of memory or on a bad method. */
loom_calib *loom_calib_new(const loom_graph *g, int method, double percentile);

/* The same keeping `keep` (LOOM_CALIB_KEEP_*, or-ed with what method
 * needs); loom_calib_keeps tells what a collector keeps. */
loom_calib *loom_calib_new_keep(const loom_graph *g, int method, double percentile, unsigned keep);
unsigned loom_calib_keeps(const loom_calib *c);
/* what a method needs: LOOM_CALIB_KEEP_HIST, or 0 (min-max) */
unsigned loom_calib_method_keep(int method);
/* "minmax", "percentile", "mse", "entropy"; NULL out of range */
const char *loom_calib_method_name(int method);
/* the method of such a name, or -1 */
int loom_calib_method_of(const char *name);

/* The mean image of a tensor (KEEP_MEAN): *sum[i] / *rows is the mean of
 * element i of a row of dim 0 over every row and sample, *n elements.
 * 0, or -1 (not kept, not an activation, nothing seen). */
int loom_calib_mean(const loom_calib *c, int tensor, const double **sum, int64_t *n, uint64_t *rows);

/* Add the data of every float activation tensor of g (after loom_ref_run).
 * g must be the graph given to loom_calib_new (same tensor count). 0, or
 * -1 with a message naming the tensor (no data, out of memory). */
int loom_calib_observe(loom_calib *c, const loom_graph *g, char *err, size_t errlen);

/* The range of tensor (an index of g) by the collector's method: 0, or -1
 * when the tensor is not an activation or holds no finite value yet, or the
 * method needs the histogram the collector does not keep. */
int loom_calib_range(const loom_calib *c, int tensor, float *lo, float *hi);

/* The same with another method / percentile (the statistics are shared). */
int loom_calib_range_by(const loom_calib *c, int tensor, int method, double percentile, float *lo, float *hi);

/* The raw statistics of a tensor: observed min / max, the count of finite
 * values, the histogram (LOOM_CALIB_BINS bins over [-*absmax_range,
 * *absmax_range], bin i = [-R + i*2R/BINS, -R + (i+1)*2R/BINS)). Any out
 * pointer may be NULL. 0, or -1 as loom_calib_range. */
int loom_calib_stats(const loom_calib *c, int tensor, float *min, float *max, uint64_t *count,
		     const uint64_t **hist, double *absmax_range);

/* Number of loom_calib_observe calls that succeeded. */
int loom_calib_samples(const loom_calib *c);

/* 1 when c was made for a graph like g (the same tensors: count, and which
 * are activations) with this percentile and keeps what method needs, so
 * its ranges can be reused for g (loom_compile_opts.calib); else 0. */
int loom_calib_matches(const loom_calib *c, const loom_graph *g, int method, double percentile);

void loom_calib_free(loom_calib *c);

/* Per-channel symmetric weight scales: scales[ch] = max |w| / 127 over the
 * elements whose index along axis (negative counts from the end) is ch; a
 * channel of zeros gets 1 (it quantizes to 0 with any scale). w must be a
 * float tensor with data and finite values. Returns the channel count
 * (dims[axis], the length of scales), or -1. */
int loom_calib_weight_scales(const loom_tensor *w, int axis, float *scales);

/* One calibration sample: the input tensors loaded from .pb files (names
 * from the protos; a proto without a name gets the file's stem unless the
 * file is input_<k>.pb), where = the folder they came from. Return 0 to go
 * on, -1 to stop (with a message in err). The tensors are freed after the
 * call (the callback may take a tensor's data by setting it to NULL). */
typedef int (*loom_calib_sample_fn)(void *ctx, int sample, loom_tensor *inputs, int ninputs, const char *where,
				    char *err, size_t errlen);

/* Enumerate a --calib DIR: the *.pb files directly in dir (except
 * output_*.pb) form one sample (input_<k>.pb in order of k first, then the
 * others by name); each subfolder test_data_set_<N> (in order of N) is one
 * sample of its input_<k>.pb files. Calls fn once per sample. Returns the
 * number of samples (0 is an error: "no calibration data"), or -1 with a
 * message naming the dir or file. */
int loom_calib_dir(const char *dir, loom_calib_sample_fn fn, void *ctx, char *err, size_t errlen);

/* Put a sample's tensors into the graph inputs of g: a tensor whose name is
 * a graph input goes there, any other the input of its position. dtype and
 * shape must match the graph input's. 0, or -1 with a message naming the
 * tensor and where (may be NULL). */
int loom_calib_bind(loom_graph *g, const loom_tensor *inputs, int ninputs, const char *where, char *err,
		    size_t errlen);

/* loom_calib_dir + loom_calib_bind + loom_ref_run + loom_calib_observe over
 * every sample of dir: the number of samples, or -1 with a message. For a
 * graph of one input, a folder sample of several tensors that each have
 * the input's type and shape (input_0.pb ... input_7.pb, one image each)
 * counts as that many samples. */
int loom_calib_run_dir(loom_calib *c, loom_graph *g, const char *dir, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
