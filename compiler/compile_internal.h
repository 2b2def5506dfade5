/* compile_internal.h - what the files of loom compile share: the
 * compiler's context (cc), split by stage (quantization, lowering,
 * planning), the layer being built (lw), and the functions each stage
 * offers the others. Private to compiler/. */
#ifndef LOOM_COMPILE_INTERNAL_H
#define LOOM_COMPILE_INTERNAL_H

#include <stdint.h>

#include "compiler/calib.h"
#include "compiler/compile.h"
#include "compiler/npu/npu.h"
#include "compiler/passes.h"
#include "runtime/cpu_ops.h"

#define DEFAULT_BASE 0x10000u /* the const region's address unless the options say otherwise */
#define ALIGN 64u            /* regions and tensors in device DRAM */

/* a layer being built: its kernel parameters and packed constants */
typedef struct lw {
	int kind;                /* enum loom_layer_kind */
	int node;                /* main node */
	int nodes[LOOM_LAYER_MAX_NODES];
	int in[2], out;
	loom_conv_params cp;     /* CONV, GEMM (as conv) */
	loom_gemm_params gp;
	loom_vec_params vp;
	uint8_t *cbuf;           /* packed constants: conv/gemm weights then params; vec consts */
	uint64_t wbytes, pbytes; /* conv/gemm: weight and param bytes in cbuf; vec: wbytes = all */
	uint64_t const_off;      /* offset in the const region */
	uint64_t out_off;        /* byte offset in the output image (concat slice, batch image) */
	uint64_t in_off;         /* byte offset in the input image (batch image) */
	int const_of;            /* -1, or the layer whose constants this one shares (batch images) */
	loom_conv_plan cplan;
	loom_vec_plan vplan;
	int step;                /* the NPU step it belongs to */
	int time;                /* liveness time */
} lw;

typedef struct forced_q forced_q; /* quantize.c: a QDQ pair's scale and zero point */
typedef struct rawout rawout;     /* lower_conv.c: a graph output left as int32 */

/* The compiler's context, by stage. */
typedef struct cc {
	/* what loom_compile was given */
	loom_graph *g;
	const loom_hwcfg *cfg;
	const loom_compile_opts *o;
	loom_model *m;
	loom_compile_report *rep;
	char *err;
	size_t errlen;
	char why[320];           /* a reason made for one node (cc_refused) */
	/* the graph's structure */
	int nt, nn;
	int *ncons;              /* node inputs reading the tensor, +1 for a graph output */
	int *prod;               /* producing node, -1 */
	/* quantization (quantize.c): per tensor */
	struct cc_quant {
		const loom_calib *calib; /* the ranges: own, or loom_compile_opts.calib */
		loom_calib *own;         /* made by this compile (freed, or given to calib_out) */
		int *method;     /* per tensor: its calibration method (o->tensor_methods, else o->calib_method) */
		int *hasq;       /* quantization decided */
		float *scale;
		int32_t *zp;
		forced_q *forced; /* quantization given by the model's Q/DQ pairs */
		int nforced;
	} q;
	/* lowering (lower*.c, layout.c): where tensors live, the layers */
	struct cc_lower {
		int *alias;      /* tensor whose device image this one shares, -1 */
		int *on_host, *on_dev, *is_cdev; /* is_cdev: a constant placed in the const region */
		int *keep;       /* per node: --keep-float */
		int *done;       /* per node: handled */
		int *deferred;   /* per node: a Flatten waiting for its Gemm (lower_alias), a node of an elementwise region */
		int *ewroot;     /* per node: the last node of its elementwise region + 1, 0 (find_ew_regions) */
		lw *lws;
		int nlw, caplw;
		rawout *raws;    /* graph outputs that may leave the NPU as int32 (prepare_raw) */
		int nraw;
		loom_plan_memo *memo; /* the plans of the layers' shapes (compiler/npu/memo.c; opts.plans when given) */
		uint64_t hits0, misses0, timed0; /* its statistics before this compile (a shared memo's) */
		struct xpad {
			int node, t; /* a Conv whose input may be padded by a copy into t (prepare_xpack) */
			int src;     /* -1, or the host tensor whose QUANT step writes t padded (conv_xpack) */
			uint32_t pad[4]; /* then: loom_step.pad and fill */
			int8_t fill;
		} *xpads;
		int nxpad;
	} lo;
	/* planning (plan.c): steps' liveness times, the const region */
	struct cc_plan {
		int *tdef, *tlast;
		int time;
		uint8_t *cregion; /* const region being built */
		uint64_t cbytes, ccap;
	} pl;
} cc;

static inline uint32_t round4(uint32_t v) { return (v + 3u) & ~3u; }
static inline uint64_t align64(uint64_t v) { return (v + ALIGN - 1) & ~(uint64_t)(ALIGN - 1); }
static inline int clampi(long v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : (int)v; }

/* A graph output computed by a Conv or Gemm (MatMul + bias) that nothing
 * else reads leaves the NPU as the int32 accumulators of its layer (the
 * kernels' raw mode) and is dequantized per channel on the host by two CPU
 * nodes the compiler appends: out = acc * S + O with S[c] = s_in * s_w[c],
 * O[c] = bias[c] - in_zp * S[c] * sum(w_q[c]). No int8 step on the output,
 * whose range may differ a lot between inputs (logits). The tensors are made
 * before calibration (prepare_raw); a candidate unused stays unused. */
struct rawout {
	int out, acc, tmp, s, o; /* the graph output, the int32 image, acc * S, the constants */
	int used;
	int node;                /* the Conv / Gemm */
	int64_t ch;
	float *sv;               /* 2 * ch: S then O */
};

struct forced_q {
	int t;
	float scale;
	int32_t zp;
};

/* ---- compile.c */
int cc_fail(cc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* why a planner refused a layer: why and the planner's message (in c->err),
 * in c->why until the next call */
const char *cc_refused(cc *c, const char *why);
void cc_why(cc *c, int node, int where, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void cc_fused(cc *c, int k, int into, const char *how);

/* ---- quantize.c */
int is_float_act(cc *c, int t);
void qparams_from_range(float lo, float hi, float *scale, int32_t *zp);
int quant_of(cc *c, int t);
void quant_copy(cc *c, int dst, int src);
int8_t cc_qval(double x, float scale, int32_t zp);
const char *quant_channels(double s_in, double s_out, const float *w, int64_t cout, int64_t per,
		       int64_t ch_stride, int64_t el_stride, const float *bias, int8_t *wq,
		       int32_t *bq, int32_t *mult, int32_t *shift, double *sw_out);
int fold_qdq(loom_graph *g, forced_q **out, int *nout);
int cc_calibrate(cc *c);
/* ---- calrun.c: loom_calib_run_dir on threads (the same statistics) */
int cc_calib_dir(cc *c, loom_calib *cal, const char *dir, int threads);
/* the threads a compile uses (loom_compile_opts.threads; compile.c) */
int cc_threads(const cc *c);
int cc_equalize(cc *c);
float *bias_fix_conv(cc *c, int in, const float *w, const float *bias, int64_t cout, int64_t cpg, int64_t grp,
		     const struct loom_cpu_geo *geo);
float *bias_fix_gemm(cc *c, int in, int flat, const float *bn, const float *bb, int64_t N, uint32_t kk,
		     uint32_t stride);

/* ---- layout.c */
int cc_geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch);
const char *dev_tensor(cc *c, int t);
int rows_geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch);
static inline int row_major(cc *c, int t) { return c->g->tensors[t].rank < 3 || c->m->mt[t].rows; }

/* Give t (rank >= 3) the row layout before its device image is fixed:
 * NULL, or why not (it is an [N,C,H,W] image already). */
const char *set_rows(cc *c, int t);
const char *follow_layout(cc *c, int t, int like);
const char *img_tensor(cc *c, int t);
lw *new_layer(cc *c, int kind, int node);
void drop_layer(cc *c);
const char *replicate_batch(cc *c, int first, int64_t n);
int sole_consumer(cc *c, int t);
const float *const_f(cc *c, const loom_node *n, int i);
int find_act(cc *c, int t, int *act);
void act_clip(cc *c, int act, int out, int8_t *lo, int8_t *hi);
lw *vec_layer(cc *c, int ni, int lkind, int vkind, int in, int out, int act);
const char *cc_vec_plan(cc *c, const char *why);
int64_t const_alloc(cc *c, uint64_t bytes);
const char *const_dev(cc *c, int t, int per_channel_of);
int const_ints(cc *c, const loom_node *n, int i, const char *name, int64_t *v, int max);
const char *copy_layer(cc *c, int ni, int in, int out, uint32_t ch0, uint32_t nch);

/* ---- lower_conv.c */
int prepare_raw(cc *c);
int finish_raw(cc *c);
/* Convs of few input channels with horizontal padding: a tensor each for
 * the padded copy of their input (conv_xpack in lower_conv.c may use it);
 * before calibration, as it adds tensors. 0, or -1 out of memory. */
int prepare_xpack(cc *c);
/* the padded copy t that the host writes in a QUANT step (conv_xpack), or NULL */
const struct xpad *host_xpad(const cc *c, int t);
/* conv_core writing tensor `to` (-1: the node's output or its fused
 * activation's), the weights packed per loom_conv_params.xpack */
const char *conv_layer(cc *c, int ni, int in, int to, int xpack, const float *w, const float *bias, int64_t cout,
		       int64_t cpg, int64_t grp, const struct loom_cpu_geo *gp);
/* the zero-padded copy of image `in` into `out` (-1: node ni's output): a
 * 1x1 DWCONV of weight 1 (lower_vec.c) */
const char *pad_layer(cc *c, int ni, int in, int out, int64_t pt, int64_t pb, int64_t pl, int64_t pr);
const char *conv_core(cc *c, int ni, int in, const float *w, const float *bias, int64_t cout, int64_t cpg,
		      int64_t grp, const struct loom_cpu_geo *gp);
const char *lower_conv(cc *c, int ni);
const char *lower_gemm(cc *c, int ni);
const char *lower_shuffle(cc *c, int ni);

/* ---- lower_vec.c */
const char *lower_pool(cc *c, int ni);
const char *lower_eltwise(cc *c, int ni);
const char *lower_lut(cc *c, int ni);
void find_ew_regions(cc *c);
const char *lower_lut_region(cc *c, int ni);
const char *lower_bn(cc *c, int ni);
const char *lower_pad(cc *c, int ni);
const char *lower_reducemean(cc *c, int ni);

/* ---- lower_shape.c */
const char *lower_concat(cc *c, int ni);
const char *lower_slice(cc *c, int ni);
const char *lower_alias(cc *c, int ni);

/* ---- lower.c */
int cpu_node(cc *c, int ni, const char *reason);
int lower_all(cc *c);

/* ---- plan.c */
int add_step(cc *c, int kind);
int ensure_host(cc *c, int t);
int place_layers(cc *c, int first);
int plan_arena(cc *c);

/* ---- emit.c */
int cc_emit(cc *c);

#endif
