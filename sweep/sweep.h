/* sweep.h - design-space exploration (loom sweep): every model at every
 * point of a grid of hardware configurations, evaluated by the one timing
 * model (analytical, instant) and optionally on the RTL (ground truth).
 *
 * The pieces, one file each:
 *   spec.c     the grid: axes as given on the command line, size suffixes,
 *              the points (configurations) and their names, the sweep's
 *              spec file DIR/sweep.spec that every worker reads
 *   prep.c     what does not depend on the point, once per model: import,
 *              simplification, calibration, quantization, lowering (one
 *              compile, loom_compile) -> the layers' kernel parameters
 *              (DIR/models/NAME.prep); the cache keys
 *   eval.c     one point of one model, analytically: every NPU layer
 *              re-planned for the point's configuration (loom_conv_plan_make,
 *              loom_vec_plan_make): cycles, DRAM bytes, scratchpad use;
 *              a layer without a tiling falls back to the CPU
 *   rtl.c      one point of one model on the RTL: a full compile for the
 *              point (calibration reused), one inference, per-layer cycles
 *   point.c    the unit of work (loom sweep --run-point): a point's result
 *              per model, cached and written atomically under DIR/points/
 *   gather.c   DIR/results.csv, DIR/results.json (with each configuration's
 *              area, sweep/area.c, and each result's energy, sweep/energy.c),
 *              the plots
 *   dispatch.c the coordinator: prepares the models, hands the pending
 *              points to local worker processes, GNU parallel or a Slurm
 *              job array, waits, gathers
 *
 * Directory of a sweep (-o DIR):
 *   sweep.spec            the models, options and axes
 *   models/NAME.prep      a model's layers and nodes (prep.c)
 *   configs/POINT.cfg     each valid point's configuration (loom_hwcfg_write)
 *   points/POINT/MODEL/   result.txt (summary, layers, cache key) and the
 *                         per-layer reports: LAYERS.csv and SCALE-Sim's
 *                         COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv,
 *                         DETAILED_ACCESS_REPORT.csv
 *   results.csv, results.json, plots/ (PNG files)
 * No global state. */
#ifndef LOOM_SWEEP_H
#define LOOM_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/compile.h"
#include "loom/hwcfg.h"
#include "sweep/energy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWEEP_MAX_MODELS 16
#define SWEEP_MAX_VALS 64

/* the axes of the grid, in the order points are enumerated (the last varies fastest) */
enum sweep_axis { SWEEP_ARRAY, SWEEP_SPAD, SWEEP_ACC, SWEEP_GBPS, SWEEP_LAT, SWEEP_VMACS, SWEEP_NAXES };
extern const char *const sweep_axis_opt[SWEEP_NAXES]; /* "--array", "--spad", ... */

typedef struct sweep_model {
	char path[1024];  /* the ONNX file, absolute */
	char name[96];    /* unique short name (its folder, or the file's stem) */
	char calib[1024]; /* --calib DIR (absolute), "" for random N(0, 1) inputs */
	char key[33];     /* hash of loom, the model file, its calibration files and the options */
} sweep_model;

/* The fast answer's documented bound: a model's total by the closed form
 * (its best rated tilings) against the timed one (docs/DSE.md, "Timing
 * model accuracy"; tests/unit/test_sweep.c) */
#define SWEEP_FAST_MAX_ERR 3.0

typedef struct sweep_spec {
	int nmodels;
	sweep_model models[SWEEP_MAX_MODELS];
	char base[512];           /* --hw: the configuration the axes override */
	double clock_mhz;         /* nominal clock: GB/s <-> bytes per cycle, latency, inferences/s */
	int rtl;                  /* also run every point on the RTL */
	int no_area;              /* --no-area: no synthesis, area_mm2 left empty */
	char tech[1024];          /* --tech FILE (absolute), "" for configs/tech/45nm.txt (sweep/tech.h) */
	int timed;                /* the planners' timed estimate (the compile's: tsim of the emitted
				     programs) rather than the closed form's rating */
	int calib_method;         /* enum loom_calib_method */
	double percentile;
	int nval[SWEEP_NAXES];    /* 0: the base configuration's value */
	char val[SWEEP_NAXES][SWEEP_MAX_VALS][32]; /* the values as given */
} sweep_spec;

/* One point of the grid: a configuration, or why it is none. */
typedef struct sweep_point {
	char name[224];       /* a16x16_sp256K_acc64K_bw16_lat40 (file-name safe) */
	int valid;
	char reason[256];     /* !valid: why (unknown suffix, zero, outside the ranges of hwparams.def) */
	loom_hwcfg cfg;       /* valid: named custom-<fingerprint> */
	double gbps;          /* the DRAM bandwidth asked for (GB/s), 0 when not given */
} sweep_point;

/* ---- spec.c: the grid */

/* Parse one axis option's comma-separated list into s. A value that is not
 * a number of the axis's form (NxM for --array; digits, an optional
 * fraction and a suffix for sizes; a number for --dram-gbps; digits for
 * --dram-latency) is a usage error: -1 with a message naming the option
 * and the value. Values that are numbers but bad (zero, negative, an
 * unknown suffix, outside the configuration limits) are kept: the point
 * they give is reported invalid with the reason. */
int sweep_parse_axis(sweep_spec *s, int axis, const char *list, char *err, size_t len);
/* the points of s: the cartesian product of the axes over the base
 * configuration (*out malloc'ed, *n of them; equal points once). 0, or -1
 * with a message (the base configuration does not load). */
int sweep_points(const sweep_spec *s, sweep_point **out, int *n, char *err, size_t len);
/* bytes as 64K / 1M / 12345 */
void sweep_fmt_size(uint64_t bytes, char *buf, size_t len);
/* DIR/sweep.spec: write (atomically) and read back */
int sweep_spec_write(const char *dir, const sweep_spec *s, char *err, size_t len);
int sweep_spec_read(const char *dir, sweep_spec *s, char *err, size_t len);

/* ---- prep.c: once per model */

typedef struct sweep_node {
	char name[96], op[32];
	int where;               /* enum loom_where in the model's compile */
	uint64_t macs;
} sweep_node;

typedef struct sweep_layer {
	char name[96];
	int nodes[LOOM_LAYER_MAX_NODES]; /* the nodes it implements (main, fused), -1 unused */
	loom_layer_kparams k;
	int job_start;           /* the first layer of an NPU job in the model's compile */
} sweep_layer;

typedef struct sweep_prep {
	char key[33];
	int nnodes, nlayers;
	sweep_node *nodes;
	sweep_layer *layers;
	uint64_t dram_bytes;     /* weights and activations of the compiled model (device DRAM it needs,
				    without the programs) */
	int calib_samples, calib_random;
	loom_calib *calib;       /* in memory only: the calibration, reused by full compiles (rtl.c) */
	int compiled;            /* sweep_prep_get compiled the model (else read it back) */
	int from_cache;          /* sweep_prep_get read it from the user's cache */
} sweep_prep;

/* the model keys of s (loom itself, each model file, calibration files, options) */
int sweep_model_keys(sweep_spec *s, char *err, size_t len);
/* DIR/models/NAME.prep of model m: read it when its key is m's (or the
 * user's cache's copy), else compile the model once (on the base
 * configuration with the largest scratchpad and accumulator, so every layer
 * that can be planned is) and write it (and the cache's copy). keep_calib:
 * compile, keeping the calibration in p->calib. */
int sweep_prep_get(const char *dir, const sweep_spec *s, int m, int keep_calib, sweep_prep *p, char *err,
		   size_t len);
void sweep_prep_free(sweep_prep *p);
/* a 128-bit content hash (two 64-bit multiply-xorshift lanes) as 32 hex digits */
typedef struct sweep_hash {
	uint64_t a, b;
} sweep_hash;
void sweep_hash_init(sweep_hash *h);
void sweep_hash_bytes(sweep_hash *h, const void *p, size_t n);
void sweep_hash_str(sweep_hash *h, const char *s);
void sweep_hash_hex(const sweep_hash *h, char out[33]);

/* ---- eval.c: one point of one model */

enum sweep_status { SWEEP_OK, SWEEP_FALLBACK, SWEEP_INVALID, SWEEP_ERROR, SWEEP_MISSING };
extern const char *const sweep_status_name[]; /* "ok", "fallback", "invalid", "error", "missing" */

typedef struct sweep_lres {
	int npu;                 /* 1: planned; 0: no tiling, the node runs on the CPU */
	int kind;                /* enum loom_layer_kind */
	uint32_t tile_h, tile_w, tile_c;
	uint64_t cycles;         /* the timing model's estimate (as the first layer of a job when it is one) */
	uint64_t cycles_first;   /* the estimate as the first layer of a job, from its START */
	uint64_t macs;           /* useful multiply-accumulates (CONV, GEMM, DWCONV) */
	uint64_t macs_issued;    /* the array's R*C per streamed line (CONV, GEMM) */
	uint64_t busy;           /* the array's MATMUL cycles (CONV, GEMM), estimated */
	uint64_t rd_in, rd_wgt, wr; /* DRAM bytes: input (activations), weights and parameters, written */
	uint64_t sp_bytes;       /* scratchpad bytes the tiling occupies */
	uint64_t acc_upd;        /* accumulator updates (output elements x channel chunks) */
	uint64_t sram_wgt;       /* weight bytes the array reads from the scratchpad (once a tile) */
	sweep_events ev;         /* the events of the layer's program for the point (eval.c) */
	int64_t rtl_cycles;      /* -1: not run */
} sweep_lres;

typedef struct sweep_result {
	int status;              /* enum sweep_status */
	char reason[320];
	uint64_t cycles, macs_npu, macs_cpu, macs_array, rd, wr, sp_peak;
	int nodes_npu, nodes_cpu, nfallback;
	double util, latency_ms, ips;
	int64_t rtl_cycles;       /* the RTL's cycles of the NPU layers (MARK to MARK), -1 when not run */
	int64_t rtl_device_cycles; /* the RTL's device cycles of the inference's jobs, -1 */
	double rtl_err_pct;       /* 100 * (analytical - RTL) / RTL over the layers */
	sweep_events ev;          /* the NPU layers' events, analytical: their programs as the compiler emits
				     them for the point, counted by common/events.c (what the C model counts),
				     MACS and DRAM bytes of the planners (no instruction fetch, no MARK records) */
	sweep_events rtl_ev;      /* the RTL's counters summed over the inference's NPU jobs (rtl_cycles >= 0) */
	int nlayers;
	sweep_lres *layers;
} sweep_result;

/* the analytical evaluation of prep at point pt (valid) into r (r->layers
 * allocated). 0, or -1 when out of memory. */
int sweep_eval(const sweep_spec *s, const sweep_prep *p, const sweep_point *pt, sweep_result *r);
/* the same for n valid points of one array size at once, rs[k] for pts[k]:
 * each result is what sweep_eval gives; the tile searches are shared
 * (loom_conv_plan_make_n), the more so among points of one DRAM timing */
int sweep_eval_n(const sweep_spec *s, const sweep_prep *p, const sweep_point *const *pts, int n, sweep_result *rs);
/* 1 when a and b share the array size and the DRAM timing: points whose
 * tile searches share the most (the evaluation's groups) */
int sweep_same_group(const loom_hwcfg *a, const loom_hwcfg *b);
void sweep_result_free(sweep_result *r);

/* ---- rtl.c */

/* the RTL of pt's configuration built once (hw/hw.c, build/hw/NAME); a
 * configuration of configs/ with the same fingerprint is used by name */
int sweep_rtl_prepare(const sweep_point *pt, char *err, size_t len);
/* compile model m for pt (the prep's calibration reused when it has one),
 * run one inference on the RTL and fill r's rtl_* fields and each layer's
 * rtl_cycles. 0, or -1 with a message. */
int sweep_rtl_run(const sweep_spec *s, int m, const sweep_prep *p, const sweep_point *pt, sweep_result *r,
		  char *err, size_t len);

/* ---- point.c: the unit of work */

/* the cache key of model m at point pt */
void sweep_point_key(const sweep_spec *s, int m, const sweep_point *pt, char out[33]);
/* 1 when DIR/points/POINT/MODEL holds a result with the current key */
int sweep_point_cached(const char *dir, const sweep_spec *s, int m, const sweep_point *pt);
/* compute model m at point pt (prep: NULL to read or make it) and write its
 * result directory atomically (a temporary directory renamed into place).
 * 0, or -1 when the result could not be written; a point that is invalid
 * or fails to compile or run is a result with that status. */
int sweep_point_run(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, sweep_prep *prep, char *err,
		    size_t len);
/* the same for n points of model m, the points of one array size and DRAM
 * timing evaluated together (sweep_eval_n); done(ctx) after each point's
 * result is written (may be NULL) */
int sweep_points_run(const char *dir, const sweep_spec *s, int m, const sweep_point *const *pts, int n,
		     sweep_prep *prep, void (*done)(void *), void *ctx, char *err, size_t len);
/* read DIR/points/POINT/MODEL/result.txt (its layers when r->layers is wanted:
 * with_layers). A missing result: status SWEEP_MISSING. */
int sweep_point_read(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, int with_layers,
		     sweep_result *r);
/* loom sweep --run-point DIR POINT...: every model at each named point */
int sweep_run_points(const char *dir, char **names, int nnames, char *err, size_t len);

/* ---- gather.c */

typedef struct sweep_summary {
	int rows, ok, fallback, invalid, error, missing;
} sweep_summary;
/* DIR/results.csv and DIR/results.json from the points' results; the plots
 * (scripts/sweep_plot.py) unless plots is 0; a table of the best points on
 * out (may be NULL). 0, or -1 with a message. */
int sweep_gather(const char *dir, int plots, FILE *out, sweep_summary *sum, char *err, size_t len);
/* the CSV columns of results.csv, comma-separated */
extern const char sweep_csv_header[];

/* ---- dispatch.c: the coordinator */

enum sweep_engine { SWEEP_LOCAL, SWEEP_PARALLEL, SWEEP_SLURM };
typedef void (*sweep_progress_fn)(void *ctx, long done, long total);
typedef struct sweep_run_opts {
	int engine;               /* enum sweep_engine */
	int jobs;                 /* local worker processes (>= 1) */
	const char *sshloginfile; /* SWEEP_PARALLEL */
	const char *slurm_args;   /* SWEEP_SLURM: more sbatch options, space-separated (may be NULL) */
	const char *loom;         /* this executable (absolute), for --run-point elsewhere */
	sweep_progress_fn progress;
	void *ctx;
	int quiet;
} sweep_run_opts;
typedef struct sweep_counts {
	long work, cached, computed, failed;
} sweep_counts;
/* write the spec and the configurations, prepare the models that have
 * pending points, compute the pending (point, model) pairs with the
 * engine. 0, or -1 with a message. */
int sweep_run(const char *dir, sweep_spec *s, const sweep_run_opts *o, sweep_counts *c, char *err, size_t len);

#ifdef __cplusplus
}
#endif
#endif
