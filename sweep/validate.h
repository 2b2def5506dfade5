/* validate.h - how far the fast timing numbers are from the RTL
 * (sweep/validate.c): a compiled model run on the RTL and on the C model of
 * one configuration, per layer the planners' analytical estimate
 * (loom_layer.est_cycles, common/timing.c), the C model's cycles and the
 * RTL's (MARK to MARK), their relative errors, and the summary the timing
 * model is held to (docs/DSE.md "Timing model accuracy"): the median and
 * the worst per-layer |error|, the whole model's error. */
#ifndef LOOM_SWEEP_VALIDATE_H
#define LOOM_SWEEP_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_val_opts {
	const char *calib_dir;  /* compiling: --calib DIR; NULL: MODEL's folder's calib/ if there, else random */
	int no_rtl;             /* 1: the C model only (the RTL columns stay 0, errors against the C model) */
} loom_val_opts;

/* one layer: cycles of the analytical estimate, the C model, the RTL */
typedef struct loom_val_layer {
	char name[96];
	int kind;               /* enum loom_layer_kind */
	uint32_t job;           /* the NPU job (step index) that runs it */
	double est;             /* loom_layer.est_cycles */
	uint64_t cm, rtl;
} loom_val_layer;

/* errors of one estimate against the reference, as fractions ((x - ref) / ref) */
typedef struct loom_val_sum {
	double median;          /* median |error| over the layers */
	double worst;           /* the layer with the largest |error|: its signed error */
	int worst_layer;        /* its index, -1 without layers */
	double whole;           /* sum of the layers against the sum of the reference */
} loom_val_sum;

typedef struct loom_val_model {
	char model[256];        /* the model's source (ONNX file) */
	char cfg[64];           /* the configuration's name */
	uint32_t nlayers;
	loom_val_layer *layers;
	double est;             /* sums over the layers */
	uint64_t cm, rtl;
	loom_val_sum est_err;   /* the analytical estimate against the RTL (the C model with no_rtl) */
	loom_val_sum cm_err;    /* the C model against the RTL (zero with no_rtl) */
} loom_val_model;

/* Run m (compiled for the configuration hw names: a name, path or
 * overrides, as loom_open takes) on the RTL and the C model with zero
 * inputs and fill *out. 0, or -1 + message (a run that fails names the
 * backend). */
int loom_validate_model(loom_model *m, const char *hw, const loom_val_opts *o, loom_val_model *out, char *err,
			size_t errlen);
/* Compile the ONNX file for hw, then loom_validate_model. */
int loom_validate_onnx(const char *onnx, const char *hw, const loom_val_opts *o, loom_val_model *out, char *err,
		       size_t errlen);
void loom_val_model_free(loom_val_model *v);

/* (x - ref) / ref; 0 when both are 0, x when ref is 0 */
double loom_val_err(double x, double ref);
/* the summary of n (estimate, reference) pairs */
void loom_val_summarize(const double *x, const double *ref, size_t n, loom_val_sum *s);

#ifdef __cplusplus
}
#endif
#endif
