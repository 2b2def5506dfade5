/* compile.c - loom compile (compiler/compile.h): from an imported ONNX
 * graph to a loom_model (ir/model.h).
 *
 * Stages:
 *  1. loom_simplify (passes.h): shapes, constant folding, Identity/Dropout,
 *     dead nodes, BatchNorm folding, the fusion table.
 *  2. Calibration (calib.h) on --calib DIR, or on random inputs.
 *  3. Lowering, node by node in topological order. A node goes to the NPU
 *     when a kernel (compiler/npu/npu.h) implements it and its
 *     quantization is representable; otherwise (or with --keep-float) it
 *     stays a float CPU node, and the report says why. Activations are
 *     quantized per tensor (asymmetric int8 over the calibrated range,
 *     widened to contain 0), weights per output channel (symmetric), biases
 *     to int32 at scale s_in * s_w; requantization multipliers are
 *     s_in * s_w / s_out (< 1). Lowerings:
 *       Conv              CONV (groups other than 1 and depthwise: block-
 *                         diagonal weights), depthwise: DWCONV; fused bias,
 *                         Relu / Clip as the output clamp
 *       Gemm, MatMul      GEMM (constant B; Flatten of an image folded into
 *                         the weights' row order)
 *       MaxPool           POOL MAX (ceil_mode by extra end padding)
 *       AveragePool, GlobalAveragePool   POOL AVG (divisor in the multiplier)
 *       Add, Mul          ELTWISE (same shape, or per channel), Add + Relu
 *       Concat (channels) one POOL 1x1 copy per input into its channel slice
 *                         (MAX when the scales agree, AVG to rescale)
 *       Flatten, Reshape, Squeeze, Unsqueeze   aliases when the device
 *                         image is the same
 *       unary elementwise (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid,
 *       HardSwish, Tanh, Erf, ..., binary ops with a constant scalar)
 *                         LUT: the table is the CPU kernel run on the 256
 *                         dequantized int8 values
 *  4. Steps: CPU nodes; QUANT / DEQUANT where a tensor crosses between host
 *     float and device int8; consecutive layers form one NPU job.
 *  5. Memory: weights and parameters packed into the const region;
 *     activations placed in the arena by liveness (greedy, largest first,
 *     lowest address that no tensor alive at the same time uses).
 *  6. Emission: each job's layers built with the kernels' planners at their
 *     final addresses, FINISH, loom_prog_verify.
 * No global state. */
#include "compiler/compile.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cpu_internal.h"
#include "compiler/calib.h"
#include "runtime/cpu_ops.h"
#include "compiler/npu/npu.h"
#include "compiler/passes.h"

#define DEFAULT_BASE 0x10000u
#define ALIGN 64u

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

typedef struct cc {
	loom_graph *g;
	const loom_hwcfg *cfg;
	const loom_compile_opts *o;
	loom_calib *calib;
	loom_model *m;
	loom_compile_report *rep;
	int nt, nn;
	int *ncons;              /* node inputs reading the tensor, +1 for a graph output */
	int *prod;               /* producing node, -1 */
	int *hasq;               /* quantization decided */
	float *scale;
	int32_t *zp;
	int *alias;              /* tensor whose device image this one shares, -1 */
	int *on_host, *on_dev, *is_cdev; /* is_cdev: a constant placed in the const region */
	int *tdef, *tlast;
	int *keep;               /* per node: --keep-float */
	int *done;               /* per node: handled */
	int *deferred;           /* per node: a Flatten waiting for its Gemm (lower_alias) */
	lw *lws;
	int nlw, caplw;
	int time;
	struct rawout *raws;     /* graph outputs that may leave the NPU as int32 (prepare_raw) */
	int nraw;
	struct forced_q *forced; /* quantization given by the model's Q/DQ pairs */
	int nforced;
	uint8_t *cregion;        /* const region being built */
	uint64_t cbytes, ccap;
	char *err;
	size_t errlen;
} cc;

static int fail(cc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cc *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t round4(uint32_t v) { return (v + 3u) & ~3u; }
static uint64_t align64(uint64_t v) { return (v + ALIGN - 1) & ~(uint64_t)(ALIGN - 1); }
static int clampi(long v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : (int)v; }

/* ------------------------------------------------------------------ report */

static void why(cc *c, int node, int where, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void why(cc *c, int node, int where, const char *fmt, ...)
{
	if (!c->rep || node < 0 || node >= c->rep->nnodes)
		return;
	loom_node_report *r = &c->rep->nodes[node];
	r->where = where;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
}

/* node k (-1: none) was folded into node `into`'s layer: done, and reported */
static void fused(cc *c, int k, int into, const char *how)
{
	if (k < 0)
		return;
	c->done[k] = 1;
	why(c, k, LOOM_WHERE_FUSED, "into %s%s", c->g->nodes[into].name, how);
}

static uint64_t node_macs(loom_graph *g, const loom_node *n)
{
	loom_tensor *y = loom_node_out(g, n, 0);
	loom_tensor *w = loom_node_in(g, n, 1);
	if (!y || !w)
		return 0;
	if (!strcmp(n->op_type, "Conv") && w->rank >= 3) {
		uint64_t k = 1;
		for (int i = 1; i < w->rank; i++)
			k *= (uint64_t)w->dims[i];
		return (uint64_t)loom_tensor_numel(y) * k;
	}
	if ((!strcmp(n->op_type, "Gemm") || !strcmp(n->op_type, "MatMul")) && y->rank >= 1) {
		loom_tensor *a = loom_node_in(g, n, 0);
		if (!a || a->rank < 1)
			return 0;
		int64_t k = a->dims[a->rank - 1];
		if (!strcmp(n->op_type, "Gemm") && loom_attr_int(n, "transA", 0) && a->rank == 2)
			k = a->dims[0];
		return (uint64_t)loom_tensor_numel(y) * (uint64_t)k;
	}
	return 0;
}

void loom_compile_report_free(loom_compile_report *rep)
{
	if (!rep)
		return;
	free(rep->nodes);
	memset(rep, 0, sizeof *rep);
}

/* ------------------------------------------------------------------ quantization */

static int is_float_act(cc *c, int t)
{
	return t >= 0 && c->g->tensors[t].dtype == LOOM_DT_FLOAT;
}

static void qparams_from_range(float lo, float hi, float *scale, int32_t *zp)
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
static int quant_of(cc *c, int t)
{
	if (c->hasq[t])
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
	} else if (loom_calib_range(c->calib, t, &lo, &hi)) {
		return -1;
	}
	qparams_from_range(lo, hi, &c->scale[t], &c->zp[t]);
	c->hasq[t] = 1;
	return 0;
}

static void quant_copy(cc *c, int dst, int src)
{
	c->scale[dst] = c->scale[src];
	c->zp[dst] = c->zp[src];
	c->hasq[dst] = 1;
}

static int8_t qval(double x, float scale, int32_t zp)
{
	double q = nearbyint(x / scale) + zp;
	return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

/* the device image of a tensor; 0 or -1 */
static int geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch)
{
	loom_tensor *x = &c->g->tensors[t];
	uint32_t hh, ww, cc_;
	if (loom_mt_geom(x->rank, x->dims, &hh, &ww, &cc_))
		return -1;
	if (h)
		*h = hh;
	if (w)
		*w = ww;
	if (ch)
		*ch = cc_;
	return 0;
}

/* Make t an activation with a device image (geometry + quantization):
 * NULL, or the reason it cannot be. */
static const char *dev_tensor(cc *c, int t)
{
	loom_tensor *x = &c->g->tensors[t];
	if (x->dtype != LOOM_DT_FLOAT)
		return "not a float tensor";
	loom_mtensor *mt = &c->m->mt[t];
	if (!mt->h) {
		if (geom(c, t, &mt->h, &mt->w, &mt->c))
			return "no NHWC image for this shape (batch > 1 or rank > 4)";
		if (!mt->c || !mt->h || !mt->w)
			return "empty tensor";
		mt->stride = round4(mt->c);
	}
	if (quant_of(c, t))
		return x->is_const ? "constant with non-finite values" : "no calibration range (never computed)";
	mt->scale = c->scale[t];
	mt->zp = c->zp[t];
	return NULL;
}

/* The row layout of a tensor of rank >= 3 (mt->rows): h = the product of
 * the leading dims, w = dims[rank-2], c = dims[rank-1]. */
static int rows_geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch)
{
	loom_tensor *x = &c->g->tensors[t];
	uint64_t hh = 1;
	if (x->rank < 3)
		return geom(c, t, h, w, ch);
	for (int i = 0; i < x->rank - 2; i++)
		hh *= (uint64_t)x->dims[i];
	uint64_t ww = (uint64_t)x->dims[x->rank - 2], cc_ = (uint64_t)x->dims[x->rank - 1];
	if (!hh || !ww || !cc_ || hh > UINT32_MAX || ww > UINT32_MAX || cc_ > UINT32_MAX / 4 ||
	    hh * ww * (cc_ + 3) > ((uint64_t)1 << 40))
		return -1;
	*h = (uint32_t)hh, *w = (uint32_t)ww, *ch = (uint32_t)cc_;
	return 0;
}

/* rank <= 2, or rows: element order is row-major */
static int row_major(cc *c, int t) { return c->g->tensors[t].rank < 3 || c->m->mt[t].rows; }

/* Give t (rank >= 3) the row layout before its device image is fixed:
 * NULL, or why not (it is an [N,C,H,W] image already). */
static const char *set_rows(cc *c, int t)
{
	loom_mtensor *mt = &c->m->mt[t];
	if (c->g->tensors[t].rank < 3)
		return NULL;
	if (mt->h)
		return mt->rows ? NULL : "the tensor is an [N,C,H,W] image already";
	if (rows_geom(c, t, &mt->h, &mt->w, &mt->c))
		return "no row layout for this shape";
	mt->rows = 1;
	mt->stride = round4(mt->c);
	return NULL;
}

/* an elementwise result (or operand) in the layout of `like` */
static const char *follow_layout(cc *c, int t, int like)
{
	if (!c->m->mt[like].rows || c->g->tensors[t].rank < 3)
		return NULL;
	const loom_tensor *a = &c->g->tensors[t], *b = &c->g->tensors[like];
	if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
		return NULL; /* a broadcast operand: checked by the caller */
	return set_rows(c, t);
}

/* an input of a windowed or channel layer: an [N,C,H,W] image */
static const char *img_tensor(cc *c, int t)
{
	if (c->m->mt[t].rows)
		return "a row-layout tensor (a MatMul's) read as an image";
	return dev_tensor(c, t);
}

/* ------------------------------------------------------------------ layers */

static lw *new_layer(cc *c, int kind, int node)
{
	if (c->nlw == c->caplw) {
		int cap = c->caplw ? 2 * c->caplw : 32;
		lw *p = realloc(c->lws, (size_t)cap * sizeof *p);
		if (!p)
			return NULL;
		c->lws = p;
		c->caplw = cap;
	}
	lw *l = &c->lws[c->nlw++];
	memset(l, 0, sizeof *l);
	l->kind = kind;
	l->node = node;
	for (int i = 0; i < LOOM_LAYER_MAX_NODES; i++)
		l->nodes[i] = -1;
	l->nodes[0] = node;
	l->in[0] = l->in[1] = l->out = -1;
	l->const_of = -1;
	return l;
}

static void drop_layer(cc *c)
{
	free(c->lws[c->nlw - 1].cbuf);
	c->nlw--;
}

/* a layer for each further image of a batch: the same program shape at
 * the next image's offsets, sharing the first layer's constants */
static const char *replicate_batch(cc *c, int first, int64_t n)
{
	for (int64_t i = 1; i < n; i++) {
		lw *l = new_layer(c, c->lws[first].kind, c->lws[first].node);
		if (!l)
			return "out of memory";
		lw *f = &c->lws[first];
		*l = *f;
		l->cbuf = NULL; /* wbytes, pbytes kept: the offsets of the shared constants */
		l->const_of = first;
		int vec = f->kind != LOOM_LAYER_CONV && f->kind != LOOM_LAYER_GEMM;
		uint64_t ib = vec ? (uint64_t)f->vp.h * f->vp.w * f->vp.in_stride
				  : (uint64_t)f->cp.h * f->cp.w * c->m->mt[f->in[0]].stride;
		uint64_t ob = vec ? (uint64_t)f->vplan.oh * f->vplan.ow * c->m->mt[f->out].stride
				  : (uint64_t)f->cplan.oh * f->cplan.ow * c->m->mt[f->out].stride;
		l->in_off = (uint64_t)i * ib;
		l->out_off = (uint64_t)i * ob;
	}
	return NULL;
}

/* the node reading tensor t when it has exactly one reader and is not a graph output */
static int sole_consumer(cc *c, int t)
{
	if (c->ncons[t] != 1)
		return -1;
	for (int i = 0; i < c->nn; i++) {
		const loom_node *n = &c->g->nodes[i];
		for (int k = 0; k < n->ninputs; k++)
			if (n->inputs[k] == t)
				return i;
	}
	return -1;
}

static const float *const_f(cc *c, const loom_node *n, int i)
{
	loom_tensor *t = loom_node_in(c->g, n, i);
	if (!t || !t->is_const || !t->data || t->dtype != LOOM_DT_FLOAT)
		return NULL;
	return t->data;
}

/* Relu / Clip following node's output: fused as the output clamp when the
 * output has no other reader. Sets *out (the tensor the layer writes) and
 * the act node (-1 none); the clamp is resolved once the output's
 * quantization is known (act_clip). */
static int find_act(cc *c, int t, int *act)
{
	*act = -1;
	int s = sole_consumer(c, t);
	if (s < 0 || c->keep[s] || c->done[s])
		return t;
	const loom_node *n = &c->g->nodes[s];
	if (!strcmp(n->op_type, "Relu")) {
		*act = s;
		return n->outputs[0];
	}
	if (!strcmp(n->op_type, "Clip")) {
		if (c->g->opset < 11 || ((n->ninputs < 2 || n->inputs[1] < 0 || const_f(c, n, 1)) &&
					 (n->ninputs < 3 || n->inputs[2] < 0 || const_f(c, n, 2)))) {
			*act = s;
			return n->outputs[0];
		}
	}
	return t;
}

static void act_clip(cc *c, int act, int out, int8_t *lo, int8_t *hi)
{
	*lo = -128;
	*hi = 127;
	if (act < 0)
		return;
	const loom_node *n = &c->g->nodes[act];
	float fl = -INFINITY, fh = INFINITY;
	if (!strcmp(n->op_type, "Relu")) {
		fl = 0;
	} else if (c->g->opset < 11) {
		fl = loom_attr_float(n, "min", -INFINITY);
		fh = loom_attr_float(n, "max", INFINITY);
	} else {
		const float *a = n->ninputs > 1 && n->inputs[1] >= 0 ? const_f(c, n, 1) : NULL;
		const float *b = n->ninputs > 2 && n->inputs[2] >= 0 ? const_f(c, n, 2) : NULL;
		if (a)
			fl = a[0];
		if (b)
			fh = b[0];
	}
	if (fl > -INFINITY)
		*lo = qval(fl, c->scale[out], c->zp[out]);
	if (fh < INFINITY)
		*hi = qval(fh, c->scale[out], c->zp[out]);
}

/* A vector-unit layer of node ni from image `in` to image `out` with the
 * fields every kind shares (whole images, strides, zero points, the clamp
 * of the fused activation act); the caller sets the rest, then vec_plan.
 * NULL when out of memory. */
static lw *vec_layer(cc *c, int ni, int lkind, int vkind, int in, int out, int act)
{
	lw *l = new_layer(c, lkind, ni);
	if (!l)
		return NULL;
	l->in[0] = in;
	l->out = out;
	l->nodes[1] = act;
	loom_vec_params *p = &l->vp;
	const loom_mtensor *mi = &c->m->mt[in];
	loom_vec_init(p, vkind);
	p->h = mi->h, p->w = mi->w, p->c = mi->c;
	p->in_stride = mi->stride, p->out_stride = c->m->mt[out].stride;
	p->in_zp = (int8_t)c->zp[in], p->out_zp = (int8_t)c->zp[out];
	act_clip(c, act, out, &p->clip_lo, &p->clip_hi);
	return l;
}

/* Plan the last layer (made by vec_layer); when the planner refuses it the
 * layer is dropped and why is returned. */
static const char *vec_plan(cc *c, const char *why)
{
	lw *l = &c->lws[c->nlw - 1];
	if (!loom_vec_plan_make(c->cfg, &l->vp, &l->vplan, c->err, c->errlen))
		return NULL;
	drop_layer(c);
	return why;
}

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

static struct rawout *raw_of(cc *c, int out, int act)
{
	if (act >= 0)
		return NULL;
	for (int i = 0; i < c->nraw; i++)
		if (c->raws[i].out == out && !c->raws[i].used)
			return &c->raws[i];
	return NULL;
}

/* the layer just made writes ro's int32 image */
static void raw_image(cc *c, struct rawout *ro)
{
	loom_mtensor *mt = &c->m->mt[ro->acc];
	mt->rows = c->m->mt[ro->out].rows;
	if (mt->rows)
		rows_geom(c, ro->acc, &mt->h, &mt->w, &mt->c);
	else
		geom(c, ro->acc, &mt->h, &mt->w, &mt->c);
	mt->stride = 4 * mt->c;
	mt->raw = 1;
	mt->scale = 1.0f;
	mt->zp = 0;
	c->scale[ro->acc] = 1.0f;
	c->zp[ro->acc] = 0;
	c->hasq[ro->acc] = 1;
}

/* S and O of ro from the quantized weights wq [ch][per] and their scales */
static const char *raw_params(cc *c, struct rawout *ro, int ni, int in, const int8_t *wq, int64_t per,
			      const double *sw, const float *bias)
{
	ro->sv = malloc(sizeof(float) * (size_t)(2 * ro->ch + 1));
	if (!ro->sv)
		return "out of memory";
	for (int64_t k = 0; k < ro->ch; k++) {
		int64_t sum = 0;
		for (int64_t e = 0; e < per; e++)
			sum += wq[k * per + e];
		double sc = c->scale[in] * sw[k];
		ro->sv[k] = (float)sc;
		ro->sv[ro->ch + k] = (float)((bias ? bias[k] : 0) - c->zp[in] * sc * (double)sum);
	}
	ro->used = 1;
	ro->node = ni;
	return NULL;
}

static int prepare_raw(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < g->noutputs; i++) {
		int t = g->outputs[i], p = -1, readers = 0;
		for (int k = 0; k < g->nnodes; k++) {
			const loom_node *n = &g->nodes[k];
			for (int j = 0; j < n->noutputs; j++)
				p = n->outputs[j] == t ? k : p;
			for (int j = 0; j < n->ninputs; j++)
				readers += n->inputs[j] == t;
		}
		loom_tensor *x = &g->tensors[t];
		if (p < 0 || readers || x->dtype != LOOM_DT_FLOAT || x->rank < 2 || x->rank > 4)
			continue;
		const char *op = g->nodes[p].op_type;
		if (strcmp(op, "Conv") && strcmp(op, "Gemm") && strcmp(op, "Add"))
			continue;
		int64_t ch = x->dims[1], d[LOOM_MAX_RANK];
		int rank = x->rank - 1; /* [C,1,1], [C,1] or [N] */
		for (int k = 0; k < rank; k++)
			d[k] = k ? 1 : ch;
		struct rawout *r = realloc(c->raws, (size_t)(c->nraw + 1) * sizeof *r);
		if (!r)
			return -1;
		c->raws = r;
		r = &c->raws[c->nraw];
		memset(r, 0, sizeof *r);
		r->out = t;
		r->ch = ch;
		/* copies: adding tensors moves g->tensors */
		char name[512], base[400];
		int64_t dims[LOOM_MAX_RANK];
		int xr = x->rank;
		memcpy(dims, x->dims, sizeof dims);
		snprintf(base, sizeof base, "%s", x->name);
		snprintf(name, sizeof name, "%s.int32", base);
		r->acc = loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, xr, dims, NULL, 1);
		snprintf(name, sizeof name, "%s.scaled", base);
		r->tmp = loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, xr, dims, NULL, 1);
		snprintf(name, sizeof name, "%s.scale", base);
		r->s = loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, rank, d, NULL, 1);
		snprintf(name, sizeof name, "%s.offset", base);
		r->o = loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, rank, d, NULL, 1);
		if (r->acc < 0 || r->tmp < 0 || r->s < 0 || r->o < 0)
			return -1;
		c->nraw++;
	}
	return 0;
}

/* after lowering: the int32 images to the host and the two CPU nodes */
static int cpu_node(cc *c, int ni, const char *reason);
static int finish_raw(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < c->nraw; i++) {
		struct rawout *r = &c->raws[i];
		g->tensors[r->acc].is_const = g->tensors[r->tmp].is_const = 0;
		if (!r->used)
			continue;
		if (loom_tensor_set_data(&g->tensors[r->s], r->sv, sizeof(float) * (size_t)r->ch) ||
		    loom_tensor_set_data(&g->tensors[r->o], r->sv + r->ch, sizeof(float) * (size_t)r->ch))
			return fail(c, "out of memory");
		char name[512];
		int in1[2] = {r->acc, r->s}, in2[2] = {r->tmp, r->o};
		snprintf(name, sizeof name, "%s.dequant_scale", g->nodes[r->node].name);
		int m1 = loom_graph_add_node(g, "Mul", name, in1, 2, &r->tmp, 1);
		snprintf(name, sizeof name, "%s.dequant_offset", g->nodes[r->node].name);
		int m2 = m1 < 0 ? -1 : loom_graph_add_node(g, "Add", name, in2, 2, &r->out, 1);
		if (m2 < 0)
			return fail(c, "out of memory");
		if (cpu_node(c, m1, "int32 output, dequantized per channel") ||
		    cpu_node(c, m2, "int32 output, dequantized per channel"))
			return -1;
	}
	return 0;
}

/* per-output-channel symmetric int8 weights, int32 bias, multiplier/shift:
 * wq[i] for i in channel co's elements (n_per elements each, stride given
 * by idx); returns a reason or NULL */
static const char *quant_channels(double s_in, double s_out, const float *w, int64_t cout, int64_t per,
				  int64_t ch_stride, int64_t el_stride, const float *bias, int8_t *wq,
				  int32_t *bq, int32_t *mult, int32_t *shift, double *sw_out)
{
	for (int64_t co = 0; co < cout; co++) {
		double amax = 0;
		for (int64_t k = 0; k < per; k++) {
			double v = fabs(w[co * ch_stride + k * el_stride]);
			if (!isfinite(v))
				return "non-finite weight";
			amax = v > amax ? v : amax;
		}
		double sw = amax > 0 ? amax / 127.0 : 1.0;
		if (sw_out)
			sw_out[co] = sw;
		for (int64_t k = 0; k < per; k++)
			wq[co * ch_stride + k * el_stride] = (int8_t)clampi(lround(w[co * ch_stride + k * el_stride] / sw), -127, 127);
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

/* ---- Conv ---- */
static const char *conv_core(cc *c, int ni, int in, const float *w, const float *bias, int64_t cout, int64_t cpg,
			     int64_t grp, const struct loom_cpu_geo *gp);

static const char *lower_conv(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, n, 0), *wt = loom_node_in(g, n, 1);
	const float *w = const_f(c, n, 1);
	if (!w)
		return "weights are not a constant float tensor";
	const float *bias = NULL;
	if (n->ninputs > 2 && n->inputs[2] >= 0 && !(bias = const_f(c, n, 2)))
		return "bias is not a constant float tensor";
	if (x->rank != 4 && x->rank != 3)
		return "only 1-D and 2-D convolutions";
	int in = n->inputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	int64_t ks[3] = {1, 1, 1};
	int nd = x->rank - 2;
	for (int i = 0; i < nd; i++)
		ks[i] = wt->dims[2 + i];
	struct loom_cpu_geo geo;
	char e2[160];
	if (loom_cpu_geo_fwd(g, n, e2, sizeof e2, x, ks, 0, &geo))
		return "convolution attributes";
	int64_t grp = loom_attr_int(n, "group", 1);
	int64_t cout = wt->dims[0], cin = x->dims[1], cpg = wt->dims[1];
	if (grp < 1 || cin != cpg * grp || cout % grp)
		return "group does not divide the channels";
	return conv_core(c, ni, in, w, bias, cout, cpg, grp, &geo);
}

/* A convolution of `in` (device image, [N,C,H,W] or [N,C,L]) with float
 * weights w [cout][cpg][kh][kw] and bias (NULL: none) in geometry geo,
 * writing node ni's first output (or its fused Relu/Clip's): CONV, or
 * DWCONV when depthwise. Also the lowering of standalone BatchNormalization
 * and zero Pad (depthwise convolutions of constant weights). */
static const char *conv_core(cc *c, int ni, int in, const float *w, const float *bias, int64_t cout, int64_t cpg,
			     int64_t grp, const struct loom_cpu_geo *gp)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = &g->tensors[in];
	struct loom_cpu_geo geo = *gp;
	int64_t cin = x->dims[1];
	const char *r;
	int act;
	int out = find_act(c, n->outputs[0], &act);
	if ((r = dev_tensor(c, out)))
		return r;
	int64_t kh = geo.k[1], kw = geo.k[2];
	uint32_t sh = (uint32_t)geo.s[1], sw = (uint32_t)geo.s[2], dh = (uint32_t)geo.d[1], dwl = (uint32_t)geo.d[2];
	int64_t kvol = cpg * kh * kw;
	int8_t lo, hi;
	act_clip(c, act, out, &lo, &hi);
	int dw = grp == cin && cout == cin && cpg == 1;
	int64_t nb = x->dims[0];
	uint32_t ih = c->m->mt[in].h / (uint32_t)nb;
	char *e = c->err;
	int8_t *wq = malloc((size_t)(cout * kvol) + 1);
	int32_t *bq = malloc((size_t)cout * 12 + 4);
	if (!wq || !bq) {
		free(wq);
		free(bq);
		return "out of memory";
	}
	int32_t *mult = bq + cout, *shift = mult + cout;
	struct rawout *ro = dw ? NULL : raw_of(c, out, act);
	double *wsc = ro ? calloc((size_t)cout + 1, sizeof *wsc) : NULL;
	if (ro && !wsc) {
		free(wq);
		free(bq);
		return "out of memory";
	}
	r = quant_channels(c->scale[in], c->scale[out], w, cout, kvol, kvol, 1, bias, wq, bq, mult, shift, wsc);
	lw *l = NULL;
	if (!r && !(l = new_layer(c, dw ? LOOM_LAYER_DWCONV : LOOM_LAYER_CONV, ni)))
		r = "out of memory";
	if (!r) {
		l->in[0] = in;
		l->out = out;
		l->nodes[1] = act;
		if (dw) {
			loom_vec_params *p = &l->vp;
			loom_vec_init(p, LOOM_VEC_DWCONV);
			p->h = ih, p->w = c->m->mt[in].w, p->c = (uint32_t)cin;
			p->in_stride = c->m->mt[in].stride, p->out_stride = c->m->mt[out].stride;
			p->kh = (uint32_t)kh, p->kw = (uint32_t)kw, p->sh = sh, p->sw = sw, p->dh = dh, p->dw = dwl;
			p->pad_top = (uint32_t)geo.pb[1], p->pad_bottom = (uint32_t)geo.pe[1];
			p->pad_left = (uint32_t)geo.pb[2], p->pad_right = (uint32_t)geo.pe[2];
			p->in_zp = (int8_t)c->zp[in], p->out_zp = (int8_t)c->zp[out];
			p->clip_lo = lo, p->clip_hi = hi;
			int8_t *wt2 = malloc((size_t)(kh * kw * cin));
			if (!wt2 || loom_vec_plan_make(c->cfg, p, &l->vplan, e, c->errlen)) {
				free(wt2);
				r = wt2 ? "vector-unit planner refused the layer" : "out of memory";
			} else {
				for (int64_t ch = 0; ch < cin; ch++)
					for (int64_t k = 0; k < kh * kw; k++)
						wt2[k * cin + ch] = wq[ch * kvol + k];
				l->wbytes = l->vplan.const_bytes;
				l->cbuf = calloc(1, l->wbytes + 1);
				if (!l->cbuf || loom_vec_pack(c->cfg, p, wt2, bq, mult, shift, NULL, l->cbuf, e, c->errlen))
					r = "packing the depthwise weights failed";
				free(wt2);
			}
		} else {
			loom_conv_params *p = &l->cp;
			loom_conv_init(p);
			if (ro) {
				raw_image(c, ro);
				l->out = ro->acc;
				p->raw = 1;
			}
			p->h = ih, p->w = c->m->mt[in].w, p->cin = (uint32_t)cin, p->cout = (uint32_t)cout;
			p->in_stride = c->m->mt[in].stride, p->out_stride = c->m->mt[l->out].stride;
			p->kh = (uint32_t)kh, p->kw = (uint32_t)kw, p->sh = sh, p->sw = sw, p->dh = dh, p->dw = dwl;
			p->pad_top = (uint32_t)geo.pb[1], p->pad_bottom = (uint32_t)geo.pe[1];
			p->pad_left = (uint32_t)geo.pb[2], p->pad_right = (uint32_t)geo.pe[2];
			p->in_zp = (int8_t)c->zp[in], p->out_zp = (int8_t)c->zp[out];
			p->clip_lo = lo, p->clip_hi = hi;
			/* [cout][kh][kw][cin], block diagonal for groups */
			int8_t *wk = calloc((size_t)(cout * kh * kw * cin) + 1, 1);
			if (!wk || loom_conv_plan_make(c->cfg, p, &l->cplan, e, c->errlen)) {
				free(wk);
				r = wk ? "convolution planner refused the layer" : "out of memory";
			} else {
				int64_t opg = cout / grp;
				for (int64_t co = 0; co < cout; co++) {
					int64_t g0 = (co / opg) * cpg;
					for (int64_t ci = 0; ci < cpg; ci++)
						for (int64_t k = 0; k < kh * kw; k++)
							wk[(co * kh * kw + k) * cin + g0 + ci] = wq[co * kvol + ci * kh * kw + k];
				}
				l->wbytes = l->cplan.wgt_bytes;
				l->pbytes = l->cplan.param_bytes;
				l->cbuf = calloc(1, l->wbytes + l->pbytes + 1);
				if (!l->cbuf || loom_conv_pack(c->cfg, p, wk, ro ? NULL : bq, ro ? NULL : mult,
							   ro ? NULL : shift, l->cbuf, l->cbuf + l->wbytes, e, c->errlen))
					r = "packing the weights failed";
				else if (ro)
					r = raw_params(c, ro, ni, in, wq, kvol, wsc, bias);
				free(wk);
			}
		}
		int first = c->nlw - 1;
		if (r)
			drop_layer(c);
		else if ((r = replicate_batch(c, first, nb)))
			while (c->nlw > first)
				drop_layer(c);
	}
	free(wq);
	free(bq);
	free(wsc);
	if (!r)
		fused(c, act, ni, "");
	return r;
}

/* ---- Gemm / MatMul (constant B) ---- */
static const char *lower_gemm(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	int is_mm = !strcmp(n->op_type, "MatMul");
	loom_tensor *a = loom_node_in(g, n, 0), *bt = loom_node_in(g, n, 1);
	const float *b = const_f(c, n, 1);
	if (!b || bt->rank != 2)
		return "B is not a constant rank-2 float tensor";
	if (a->rank != 2 && !(is_mm && a->rank >= 3))
		return "A is not rank 2";
	int transb = !is_mm && loom_attr_int(n, "transB", 0);
	if (!is_mm && loom_attr_int(n, "transA", 0))
		return "transA";
	float alpha = is_mm ? 1.0f : loom_attr_float(n, "alpha", 1.0f);
	float beta = is_mm ? 1.0f : loom_attr_float(n, "beta", 1.0f);
	/* A [..., M', K]: M = every row of every leading index (row layout) */
	int64_t K = a->dims[a->rank - 1], M = K ? loom_tensor_numel(a) / K : 0,
		N = transb ? bt->dims[0] : bt->dims[1];
	const float *bias = NULL;
	int64_t nbias = 0;
	int bias_node = -1, out_t = n->outputs[0];
	if (!is_mm && n->ninputs > 2 && n->inputs[2] >= 0) {
		loom_tensor *ct = loom_node_in(g, n, 2);
		if (!(bias = const_f(c, n, 2)))
			return "C is not a constant float tensor";
		nbias = loom_tensor_numel(ct);
		if (!(nbias == 1 || (nbias == N && ct->dims[ct->rank - 1] == N)))
			return "C is not per column";
	}
	if (is_mm) { /* MatMul + Add(constant [N]) */
		int s = sole_consumer(c, out_t);
		if (s >= 0 && !c->keep[s] && !strcmp(g->nodes[s].op_type, "Add")) {
			const loom_node *ad = &g->nodes[s];
			int other = ad->inputs[0] == out_t ? 1 : 0;
			loom_tensor *ct = loom_node_in(g, ad, other);
			const float *cb = const_f(c, ad, other);
			if (cb && loom_tensor_numel(ct) == N && ct->dims[ct->rank - 1] == N) {
				bias = cb;
				nbias = N;
				bias_node = s;
				out_t = ad->outputs[0];
			}
		}
	}
	/* A: an activation, or the Flatten of an image (weights rows reordered) */
	int in = n->inputs[0];
	uint32_t fh = 1, fw = 1, fc = 0;
	int flat = -1;
	/* (each image of the batch is one row of A: rows of fh*fw pixels) */
	if (c->prod[in] >= 0 && c->ncons[in] == 1) {
		const loom_node *p = &g->nodes[c->prod[in]];
		if ((!strcmp(p->op_type, "Flatten") || !strcmp(p->op_type, "Reshape")) && !c->keep[c->prod[in]]) {
			int src = p->inputs[0];
			loom_tensor *st = &g->tensors[src];
			if (a->rank == 2 && st->rank == 4 && st->dims[0] == M && !c->m->mt[src].rows &&
			    !geom(c, src, &fh, &fw, &fc) &&
			    (fh /= (uint32_t)M, (int64_t)fh * fw * fc == K) && (fh > 1 || fw > 1)) {
				flat = c->prod[in];
				in = src;
			}
		}
	}
	const char *r = flat < 0 ? set_rows(c, in) : NULL;
	if (r || (r = dev_tensor(c, in)))
		return r;
	int act;
	int out = find_act(c, out_t, &act);
	if ((r = set_rows(c, out)) || (r = dev_tensor(c, out)))
		return r;
	int8_t lo, hi;
	act_clip(c, act, out, &lo, &hi);
	uint32_t kk = flat >= 0 ? fh * fw * c->m->mt[in].stride : (uint32_t)K;
	/* B as [n][k] float (channel-major) with alpha folded, rows of the
	 * flattened image reordered to HWC with zero rows for the padding */
	float *bn = calloc((size_t)N * kk + 1, sizeof *bn);
	float *bb = calloc((size_t)N + 1, sizeof *bb);
	int8_t *wq = malloc((size_t)N * kk + 1);
	int8_t *wkn = malloc((size_t)N * kk + 1);
	int32_t *bq = malloc((size_t)N * 12 + 4);
	lw *l = NULL;
	struct rawout *ro = NULL;
	double *sw = NULL;
	if (!bn || !bb || !wq || !wkn || !bq) {
		r = "out of memory";
		goto out;
	}
	for (int64_t j = 0; j < N; j++) {
		for (int64_t k = 0; k < K; k++) {
			float v = alpha * (transb ? b[j * K + k] : b[k * N + j]);
			int64_t kd = k;
			if (flat >= 0) { /* k = ch*H*W + y*W + x  ->  (y*W + x)*stride + ch */
				int64_t ch = k / ((int64_t)fh * fw), yx = k % ((int64_t)fh * fw);
				kd = yx * c->m->mt[in].stride + ch;
			}
			bn[j * kk + kd] = v;
		}
		bb[j] = bias ? beta * bias[nbias == 1 ? 0 : j] : 0;
	}
	int32_t *mult = bq + N, *shift = mult + N;
	ro = raw_of(c, out, act);
	if (ro && !(sw = calloc((size_t)N + 1, sizeof *sw))) {
		r = "out of memory";
		goto out;
	}
	if ((r = quant_channels(c->scale[in], c->scale[out], bn, N, kk, kk, 1, bias ? bb : NULL, wq, bq, mult, shift,
				sw)))
		goto out;
	for (int64_t j0 = 0; j0 < N; j0 += 64) /* transpose in 64x64 blocks (big FC layers) */
		for (int64_t k0 = 0; k0 < kk; k0 += 64)
			for (int64_t j = j0; j < N && j < j0 + 64; j++)
				for (int64_t k = k0; k < kk && k < k0 + 64; k++)
					wkn[k * N + j] = wq[j * kk + k];
	if (!(l = new_layer(c, LOOM_LAYER_GEMM, ni))) {
		r = "out of memory";
		goto out;
	}
	l->in[0] = in;
	l->out = out;
	l->nodes[1] = bias_node;
	l->nodes[2] = act;
	l->nodes[3] = flat;
	loom_gemm_params *p = &l->gp;
	loom_gemm_init(p);
	if (ro) {
		raw_image(c, ro);
		l->out = ro->acc;
		p->raw = 1;
	}
	p->m = (uint32_t)M;
	p->k = kk;
	p->n = (uint32_t)N;
	p->a_stride = flat >= 0 ? kk : c->m->mt[in].stride;
	p->out_stride = c->m->mt[l->out].stride;
	p->a_zp = (int8_t)c->zp[in], p->out_zp = (int8_t)c->zp[out];
	p->clip_lo = lo, p->clip_hi = hi;
	loom_gemm_to_conv(p, &l->cp);
	if (loom_conv_plan_make(c->cfg, &l->cp, &l->cplan, c->err, c->errlen)) {
		r = "GEMM planner refused the layer";
	} else {
		l->wbytes = l->cplan.wgt_bytes;
		l->pbytes = l->cplan.param_bytes;
		l->cbuf = calloc(1, l->wbytes + l->pbytes + 1);
		if (!l->cbuf || loom_gemm_pack(c->cfg, p, wkn, ro ? NULL : bq, ro ? NULL : mult, ro ? NULL : shift,
					       l->cbuf, l->cbuf + l->wbytes, c->err, c->errlen))
			r = "packing the weights failed";
		else if (ro)
			r = raw_params(c, ro, ni, in, wq, kk, sw, bias ? bb : NULL);
	}
	if (r)
		drop_layer(c);
out:
	free(bn);
	free(bb);
	free(wq);
	free(wkn);
	free(bq);
	free(sw);
	if (!r) {
		fused(c, bias_node, ni, " (bias)");
		fused(c, act, ni, "");
		fused(c, flat, ni, " (weight rows in NHWC order)");
	}
	return r;
}

/* ---- pooling ---- */
static const char *lower_pool(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	int global = !strcmp(n->op_type, "GlobalAveragePool") || !strcmp(n->op_type, "GlobalMaxPool");
	int max = !strcmp(n->op_type, "MaxPool") || !strcmp(n->op_type, "GlobalMaxPool");
	loom_tensor *x = loom_node_in(g, n, 0);
	if (x->rank != 4 && x->rank != 3)
		return "only 1-D and 2-D pooling";
	if (n->noutputs > 1 && n->outputs[1] >= 0)
		return "MaxPool indices output";
	int in = n->inputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	struct loom_cpu_geo geo;
	memset(&geo, 0, sizeof geo);
	int nd = x->rank - 2;
	if (global) {
		geo.k[1] = nd == 2 ? x->dims[2] : 1;
		geo.k[2] = x->dims[x->rank - 1];
		geo.s[1] = geo.s[2] = geo.d[1] = geo.d[2] = 1;
		geo.out[1] = geo.out[2] = 1;
		geo.in[1] = nd == 2 ? x->dims[2] : 1;
		geo.in[2] = x->dims[x->rank - 1];
	} else {
		int cnt = 0;
		const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cnt);
		int64_t k3[3] = {1, 1, 1};
		if (!ks || cnt != nd)
			return "kernel_shape";
		for (int i = 0; i < nd; i++)
			k3[i] = ks[i];
		char e2[160];
		if (loom_cpu_geo_fwd(g, n, e2, sizeof e2, x, k3, 1, &geo))
			return "pooling attributes";
	}
	/* end padding so the kernel's floor() output size matches (ceil_mode) */
	int64_t pe[3];
	for (int i = 1; i < 3; i++) {
		int64_t ext = (geo.k[i] - 1) * geo.d[i] + 1;
		pe[i] = (geo.out[i] - 1) * geo.s[i] + ext - geo.in[i] - geo.pb[i];
		if (pe[i] < 0)
			pe[i] = 0;
		if (!max && pe[i] != geo.pe[i])
			return "ceil_mode average pooling";
	}
	int cip = (int)loom_attr_int(n, "count_include_pad", 0);
	if (!max && !cip && (geo.pb[1] || geo.pb[2] || pe[1] || pe[2]))
		return "average pooling with padding excluded from the count";
	/* an average over one element (e.g. AdaptiveAvgPool to the same size) is a copy */
	if (!max && geo.k[1] * geo.k[2] == 1 && !geo.pb[1] && !geo.pb[2] && !pe[1] && !pe[2])
		max = 1;
	int act;
	int out = find_act(c, n->outputs[0], &act);
	if (max) {
		if (act >= 0) {
			act = -1;
			out = n->outputs[0];
		}
		quant_copy(c, out, in);
	}
	if ((r = dev_tensor(c, out)))
		return r;
	lw *l = vec_layer(c, ni, LOOM_LAYER_POOL, LOOM_VEC_POOL, in, out, act);
	if (!l)
		return "out of memory";
	loom_vec_params *p = &l->vp;
	p->func = max ? LOOM_POOL_MAX : LOOM_POOL_AVG;
	p->h /= (uint32_t)x->dims[0]; /* per image */
	p->kh = (uint32_t)geo.k[1], p->kw = (uint32_t)geo.k[2];
	p->sh = (uint32_t)geo.s[1], p->sw = (uint32_t)geo.s[2], p->dh = (uint32_t)geo.d[1], p->dw = (uint32_t)geo.d[2];
	p->pad_top = (uint32_t)geo.pb[1], p->pad_left = (uint32_t)geo.pb[2];
	p->pad_bottom = (uint32_t)pe[1], p->pad_right = (uint32_t)pe[2];
	double kvol = (double)(geo.k[1] * geo.k[2]);
	if (!max && c->scale[in] / ((double)c->scale[out] * kvol) >= 1.0) {
		/* the output grid finer than the averaged input's: widen it */
		c->scale[out] = (float)(c->scale[in] / kvol * 1.001);
		c->m->mt[out].scale = c->scale[out];
		p->out_zp = (int8_t)c->zp[out];
	}
	if (!max && loom_quant_mult(c->scale[in] / ((double)c->scale[out] * kvol), &p->mult, &p->shift)) {
		drop_layer(c);
		return "average-pool scale >= 1";
	}
	if ((r = vec_plan(c, "vector-unit planner refused the pooling")))
		return r;
	int first = c->nlw - 1;
	if ((r = replicate_batch(c, first, x->dims[0]))) {
		while (c->nlw > first)
			drop_layer(c);
		return r;
	}
	fused(c, act, ni, "");
	return NULL;
}

/* bytes more of the const region, 64-byte aligned and zeroed: the offset,
 * or -1 when out of memory */
static int64_t const_alloc(cc *c, uint64_t bytes)
{
	uint64_t off = align64(c->cbytes);
	if (off + bytes > c->ccap) {
		uint64_t cap = (off + bytes) * 2 + 4096;
		uint8_t *p = realloc(c->cregion, cap);
		if (!p)
			return -1;
		memset(p + c->ccap, 0, cap - c->ccap);
		c->cregion = p;
		c->ccap = cap;
	}
	c->cbytes = off + bytes;
	return (int64_t)off;
}

/* a constant operand placed in the const region as a device image */
static const char *const_dev(cc *c, int t, int per_channel_of)
{
	loom_mtensor *mt = &c->m->mt[t];
	if (c->is_cdev[t])
		return NULL;
	loom_tensor *x = &c->g->tensors[t];
	if (x->dtype != LOOM_DT_FLOAT || !x->data)
		return "constant operand is not float";
	if (quant_of(c, t))
		return "constant operand has non-finite values";
	if (per_channel_of >= 0) {
		mt->h = mt->w = 1;
		mt->c = c->m->mt[per_channel_of].c;
	} else {
		const char *r = dev_tensor(c, t);
		if (r)
			return r;
	}
	mt->stride = round4(mt->c);
	mt->scale = c->scale[t];
	mt->zp = c->zp[t];
	uint64_t bytes = (uint64_t)mt->h * mt->w * mt->stride;
	int64_t off = const_alloc(c, bytes);
	if (off < 0)
		return "out of memory";
	loom_mt_quantize(x, mt, x->data, (int8_t *)(c->cregion + off));
	mt->addr = (uint64_t)off; /* relative until the layout is fixed */
	c->is_cdev[t] = 1;
	mt->dev = 1;
	return NULL;
}

/* ---- Add / Mul ---- */
static const char *lower_eltwise(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	int mul = !strcmp(n->op_type, "Mul");
	if (n->ninputs != 2)
		return "not two inputs";
	int a = n->inputs[0], b = n->inputs[1];
	loom_tensor *ta = &g->tensors[a], *tb = &g->tensors[b], *ty = loom_node_out(g, n, 0);
	if (ta->is_const && !tb->is_const) {
		int t = a;
		a = b;
		b = t;
		ta = &g->tensors[a];
		tb = &g->tensors[b];
	}
	if (ta->is_const)
		return "both inputs constant";
	if (!c->on_dev[a] && c->prod[a] >= 0 && (tb->is_const || (!c->on_dev[b] && c->prod[b] >= 0)))
		return "inputs are computed on the CPU (nothing gained on the NPU)";
	if (ta->rank != ty->rank || memcmp(ta->dims, ty->dims, sizeof(int64_t) * (size_t)ta->rank)) {
		if (tb->rank == ty->rank && !memcmp(tb->dims, ty->dims, sizeof(int64_t) * (size_t)tb->rank) &&
		    !tb->is_const) {
			int t = a;
			a = b;
			b = t;
			ta = &g->tensors[a];
			tb = &g->tensors[b];
		} else {
			return "broadcast of the first operand";
		}
	}
	const char *r = dev_tensor(c, a);
	if (r)
		return r;
	int bcast;
	if (tb->rank == ta->rank && !memcmp(tb->dims, ta->dims, sizeof(int64_t) * (size_t)ta->rank)) {
		bcast = LOOM_BCAST_NONE;
		r = follow_layout(c, b, a);
		if (!r)
			r = tb->is_const ? const_dev(c, b, -1) : dev_tensor(c, b);
		if (!r && c->m->mt[b].rows != c->m->mt[a].rows)
			r = "operands in different layouts";
	} else {
		/* per channel: b is [C,1,1] / [1,C,1,1] against [1,C,H,W], or [C] against [M,C] */
		int64_t cb = loom_tensor_numel(tb);
		int ok = cb == c->m->mt[a].c && cb > 1;
		if (ok && ta->rank >= 3 && !c->m->mt[a].rows) {
			int ax = ta->rank - tb->rank; /* dims of b aligned right */
			for (int i = 0; i < tb->rank; i++) {
				int d = ax + i;
				int64_t want = d == 1 ? cb : 1;
				if (tb->dims[i] != want)
					ok = 0;
			}
		} else if (ok) {
			ok = tb->dims[tb->rank - 1] == cb;
		}
		if (!ok)
			return "broadcast other than per channel";
		bcast = LOOM_BCAST_CHANNEL;
		if (!tb->is_const) {
			loom_mtensor *mb = &c->m->mt[b];
			if ((r = dev_tensor(c, b)))
				return r;
			if (mb->h * mb->w != 1)
				return "per-channel operand image not 1x1";
		} else {
			r = const_dev(c, b, a);
		}
	}
	if (r)
		return r;
	int act;
	int out = find_act(c, n->outputs[0], &act);
	if ((r = follow_layout(c, out, a)) || (r = dev_tensor(c, out)))
		return r;
	lw *l = vec_layer(c, ni, LOOM_LAYER_ELTWISE, LOOM_VEC_ELTWISE, a, out, act);
	if (!l)
		return "out of memory";
	l->in[1] = b;
	loom_vec_params *p = &l->vp;
	p->func = mul ? LOOM_ELT_MUL : LOOM_ELT_ADD;
	p->bcast = bcast;
	p->in2_stride = bcast == LOOM_BCAST_NONE ? c->m->mt[b].stride : 0;
	p->in2_zp = (int8_t)c->zp[b];
	int bad = mul ? loom_quant_mult((double)c->scale[a] * c->scale[b] / c->scale[out], &p->mult, &p->shift)
		      : loom_quant_add(c->scale[a], c->scale[b], c->scale[out], p);
	if (bad) {
		drop_layer(c);
		return "requantization scale >= 1";
	}
	if ((r = vec_plan(c, "vector-unit planner refused the layer")))
		return r;
	fused(c, act, ni, "");
	return NULL;
}

/* ---- unary elementwise functions as a 256-entry table ---- */
/* continuous, well-conditioned functions only: a steep (Log, Sqrt,
 * Reciprocal, Exp) or discontinuous (Round, Sign, ThresholdedRelu) one
 * turns the input's quantization error into large output errors; those
 * stay in float on the CPU */
static const char *const lut_ops[] = {
	"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Neg", "Abs",
	"Elu", "Selu", "Softplus", "Softsign", "Celu", "Gelu", "Mish", "PRelu", "Add", "Sub", "Mul", "Div",
	"Max", "Min", NULL,
};

static const char *lower_lut(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	int op = 0;
	while (lut_ops[op] && strcmp(lut_ops[op], n->op_type))
		op++;
	if (!lut_ops[op])
		return "no NPU lowering";
	if (n->noutputs != 1)
		return "more than one output";
	int x = -1;
	for (int i = 0; i < n->ninputs; i++) {
		int t = n->inputs[i];
		if (t < 0)
			continue;
		loom_tensor *tt = &g->tensors[t];
		if (tt->is_const) {
			if (loom_tensor_numel(tt) != 1 || !tt->data)
				return "a constant operand that is not a scalar";
			continue;
		}
		if (x >= 0)
			return "two activation inputs";
		x = t;
	}
	if (x < 0 || !is_float_act(c, x))
		return "no float activation input";
	if (!strcmp(n->op_type, "Div") && x != n->inputs[0])
		return "division by the activation";
	if (!c->on_dev[x] && c->prod[x] >= 0)
		return "input is computed on the CPU (nothing gained on the NPU)";
	loom_tensor *tx = &g->tensors[x], *ty = loom_node_out(g, n, 0);
	if (ty->dtype != LOOM_DT_FLOAT || tx->rank != ty->rank ||
	    memcmp(tx->dims, ty->dims, sizeof(int64_t) * (size_t)tx->rank))
		return "output shape differs from the input's";
	const char *r = dev_tensor(c, x);
	if (r)
		return r;
	int out = n->outputs[0];
	if ((r = follow_layout(c, out, x)) || (r = dev_tensor(c, out)))
		return r;
	/* the table: the node's own CPU kernel on the 256 dequantized values */
	loom_graph *t = loom_graph_new(g->opset, "lut");
	int8_t table[LOOM_LUT_ENTRIES];
	if (!t)
		return "out of memory";
	int ins[8], k = 0, outs[1];
	int64_t nent = LOOM_LUT_ENTRIES; /* entry i holds the result for the int8 input i - 128 */
	float xs[LOOM_LUT_ENTRIES];
	for (int i = 0; i < LOOM_LUT_ENTRIES; i++)
		xs[i] = c->scale[x] * (float)(i - 128 - c->zp[x]);
	for (int i = 0; i < n->ninputs && i < 8; i++) {
		int ti = n->inputs[i];
		if (ti < 0) {
			ins[k++] = -1;
		} else if (ti == x) {
			ins[k] = loom_graph_add_tensor(t, "x", LOOM_DT_FLOAT, 1, &nent, NULL, 0);
			loom_graph_add_input(t, ins[k++]);
		} else {
			loom_tensor *ct = &g->tensors[ti];
			ins[k++] = loom_graph_add_tensor(t, ct->name, ct->dtype, ct->rank, ct->dims, ct->data, 1);
		}
	}
	outs[0] = loom_graph_add_tensor(t, "y", LOOM_DT_FLOAT, 1, &nent, NULL, 0);
	loom_graph_add_output(t, outs[0]);
	int nn = loom_graph_add_node(t, n->op_type, n->name, ins, k, outs, 1);
	int bad = nn < 0;
	for (int i = 0; !bad && i < n->nattrs; i++) {
		const loom_attr *at = &n->attrs[i];
		loom_node *dn = &t->nodes[nn];
		switch (at->type) {
		case LOOM_ATTR_FLOAT: bad = loom_node_set_attr_float(dn, at->name, at->f); break;
		case LOOM_ATTR_INT: bad = loom_node_set_attr_int(dn, at->name, at->i); break;
		case LOOM_ATTR_STRING: bad = loom_node_set_attr_str(dn, at->name, at->s); break;
		case LOOM_ATTR_FLOATS: bad = loom_node_set_attr_floats(dn, at->name, at->floats, at->n); break;
		case LOOM_ATTR_INTS: bad = loom_node_set_attr_ints(dn, at->name, at->ints, at->n); break;
		default: bad = 1;
		}
	}
	char e2[256];
	int xi = loom_graph_find(t, "x");
	if (!bad && xi >= 0)
		bad = loom_tensor_set_data(&t->tensors[xi], xs, sizeof xs) || loom_ref_run(t, e2, sizeof e2);
	if (!bad) {
		const float *ys = t->tensors[outs[0]].data;
		for (int i = 0; i < LOOM_LUT_ENTRIES; i++)
			table[i] = qval(isnan(ys[i]) ? 0.0 : ys[i], c->scale[out], c->zp[out]);
	}
	loom_graph_free(t);
	if (bad)
		return "the table could not be computed";
	lw *l = vec_layer(c, ni, LOOM_LAYER_LUT, LOOM_VEC_LUT, x, out, -1);
	if (!l)
		return "out of memory";
	if ((r = vec_plan(c, "vector-unit planner refused the table")))
		return r;
	l = &c->lws[c->nlw - 1];
	loom_vec_params *p = &l->vp;
	l->wbytes = l->vplan.const_bytes;
	l->cbuf = calloc(1, l->wbytes + 1);
	if (!l->cbuf || loom_vec_pack(c->cfg, p, NULL, NULL, NULL, NULL, table, l->cbuf, c->err, c->errlen)) {
		drop_layer(c);
		return "packing the table failed";
	}
	return NULL;
}

/* ---- Concat along channels: one copy per input ---- */
static const char *lower_concat(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *y = loom_node_out(g, n, 0);
	int64_t ax = loom_attr_int(n, "axis", 1);
	if (ax < 0)
		ax += y->rank;
	int chax = y->rank >= 3 ? 1 : y->rank - 1;
	if (ax != chax || (y->rank >= 3 && y->dims[0] != 1))
		return "concatenation not along channels";
	int out = n->outputs[0];
	const char *r;
	float lo = 0, hi = 0;
	if (!c->hasq[out] && loom_calib_range(c->calib, out, &lo, &hi))
		return "no calibration range (never computed)";
	for (int i = 0; i < n->ninputs; i++) {
		int t = n->inputs[i];
		if (t < 0 || g->tensors[t].is_const)
			return "constant input";
		if ((r = img_tensor(c, t)))
			return r;
		/* the output covers what every input can represent: copies only shrink */
		float ilo = c->scale[t] * (float)(-128 - c->zp[t]), ihi = c->scale[t] * (float)(127 - c->zp[t]);
		lo = ilo < lo ? ilo : lo;
		hi = ihi > hi ? ihi : hi;
	}
	if (!c->hasq[out]) {
		qparams_from_range(lo, hi, &c->scale[out], &c->zp[out]);
		c->hasq[out] = 1;
	}
	if ((r = dev_tensor(c, out)))
		return r;
	uint32_t off = 0;
	int first = c->nlw;
	for (int i = 0; i < n->ninputs; i++) {
		int t = n->inputs[i];
		loom_mtensor *mi = &c->m->mt[t];
		if (off % 4) {
			r = "a channel slice not at a multiple of 4 channels";
			break;
		}
		lw *l = vec_layer(c, ni, LOOM_LAYER_POOL, LOOM_VEC_POOL, t, out, -1);
		if (!l) {
			r = "out of memory";
			break;
		}
		l->out_off = off;
		loom_vec_params *p = &l->vp;
		if (mi->scale == c->scale[out] && mi->zp == c->zp[out]) {
			p->func = LOOM_POOL_MAX;
		} else {
			p->func = LOOM_POOL_AVG;
			if (loom_quant_mult((double)mi->scale / c->scale[out], &p->mult, &p->shift)) {
				r = "rescaling an input: scale ratio >= 1";
				break;
			}
		}
		if (mi->c % 4 && i + 1 < n->ninputs) {
			r = "a channel slice not at a multiple of 4 channels";
			break;
		}
		if ((r = vec_plan(c, "vector-unit planner refused the copy")))
			break;
		off += mi->c;
	}
	if (r)
		while (c->nlw > first)
			drop_layer(c);
	return r;
}

static int const_ints(cc *c, const loom_node *n, int i, const char *name, int64_t *v, int max);

/* ---- standalone BatchNormalization: a depthwise 1x1 convolution ---- */
static const char *lower_bn(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, n, 0);
	if (n->ninputs != 5 || (n->noutputs > 1 && n->outputs[1] >= 0) || (x->rank != 4 && x->rank != 3))
		return "training-mode or non-image BatchNormalization";
	const float *sc = const_f(c, n, 1), *bi = const_f(c, n, 2), *mean = const_f(c, n, 3), *var = const_f(c, n, 4);
	if (!sc || !bi || !mean || !var)
		return "parameters are not constant float tensors";
	int in = n->inputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	int64_t ch = x->dims[1];
	double eps = loom_attr_float(n, "epsilon", 1e-5f);
	float *w = malloc(sizeof(float) * (size_t)(2 * ch + 1));
	if (!w)
		return "out of memory";
	for (int64_t k = 0; k < ch; k++) {
		double s = sc[k] / sqrt((double)var[k] + eps);
		w[k] = (float)s;
		w[ch + k] = (float)(bi[k] - mean[k] * s);
	}
	struct loom_cpu_geo geo;
	memset(&geo, 0, sizeof geo);
	for (int i = 0; i < 3; i++)
		geo.k[i] = geo.s[i] = geo.d[i] = 1;
	r = conv_core(c, ni, in, w, w + ch, ch, 1, ch, &geo);
	free(w);
	return r;
}

/* ---- Pad with zeros of H and W: a depthwise convolution whose one tap at
 * (pad_bottom, pad_right) is 1, padding (top + bottom, left + right) on
 * each side; the copy is exact ---- */
static const char *lower_pad(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, n, 0);
	if (x->rank != 4)
		return "only [N,C,H,W] tensors";
	if (strcmp(loom_attr_str(n, "mode", "constant"), "constant"))
		return "reflect or edge padding";
	int64_t pads[8];
	int np = g->opset >= 11 ? const_ints(c, n, 1, "", pads, 8) : const_ints(c, n, 99, "pads", pads, 8);
	if (np != 8)
		return "pads not constant (or with axes)";
	if (g->opset >= 11 && n->ninputs > 2 && n->inputs[2] >= 0) {
		const float *v = const_f(c, n, 2);
		if (!v || v[0] != 0)
			return "a padding value other than 0";
	} else if (g->opset < 11 && loom_attr_float(n, "value", 0) != 0) {
		return "a padding value other than 0";
	}
	if (pads[0] || pads[1] || pads[4] || pads[5])
		return "padding of the batch or channel axes";
	for (int i = 0; i < 8; i++)
		if (pads[i] < 0)
			return "negative pads (cropping)";
	int64_t pt = pads[2], pl = pads[3], pb = pads[6], pr = pads[7];
	int64_t kh = pt + pb + 1, kw = pl + pr + 1, ch = x->dims[1];
	if (kh > 15 || kw > 15)
		return "more than 14 pads on an axis";
	int in = n->inputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	float *w = calloc((size_t)(ch * kh * kw + 1), sizeof *w);
	if (!w)
		return "out of memory";
	for (int64_t k = 0; k < ch; k++)
		w[k * kh * kw + pb * kw + pr] = 1.0f;
	struct loom_cpu_geo geo;
	memset(&geo, 0, sizeof geo);
	for (int i = 0; i < 3; i++)
		geo.s[i] = geo.d[i] = 1;
	geo.k[0] = 1, geo.k[1] = kh, geo.k[2] = kw;
	geo.pb[1] = pt + pb, geo.pe[1] = pt + pb, geo.pb[2] = pl + pr, geo.pe[2] = pl + pr;
	quant_copy(c, n->outputs[0], in);
	r = conv_core(c, ni, in, w, NULL, ch, 1, ch, &geo);
	free(w);
	return r;
}

/* constant int64 values of input i (opset >= 10 Slice, >= 13 ReduceMean
 * axes) or of attribute name; count or -1 */
static int const_ints(cc *c, const loom_node *n, int i, const char *name, int64_t *v, int max)
{
	if (i < n->ninputs && n->inputs[i] >= 0) {
		loom_tensor *t = &c->g->tensors[n->inputs[i]];
		int64_t k = loom_tensor_numel(t);
		if (!t->is_const || !t->data || k > max || (t->dtype != LOOM_DT_INT64 && t->dtype != LOOM_DT_INT32))
			return -1;
		for (int64_t j = 0; j < k; j++)
			v[j] = loom_cpu_get_i(t->data, t->dtype, j);
		return (int)k;
	}
	int cnt = 0;
	const int64_t *a = loom_attr_ints(n, name, &cnt);
	if (!a)
		return 0;
	if (cnt > max)
		return -1;
	memcpy(v, a, sizeof(int64_t) * (size_t)cnt);
	return cnt;
}

/* a pooling-unit copy of channels [ch0, ch0 + nch) of image `in` into
 * channels [0, nch) of `out` (same quantization): MAX over a 1x1 window */
static const char *copy_layer(cc *c, int ni, int in, int out, uint32_t ch0, uint32_t nch)
{
	if (ch0 % 4)
		return "a channel slice not at a multiple of 4 channels";
	lw *l = vec_layer(c, ni, LOOM_LAYER_POOL, LOOM_VEC_POOL, in, out, -1);
	if (!l)
		return "out of memory";
	l->in_off = ch0;
	l->vp.func = LOOM_POOL_MAX;
	l->vp.c = nch;
	return vec_plan(c, "vector-unit planner refused the copy");
}

/* ---- Slice of channels ---- */
static const char *lower_slice(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, n, 0), *y = loom_node_out(g, n, 0);
	if (x->rank != 4 || x->dims[0] != 1)
		return "only channel slices of [1,C,H,W]";
	for (int d = 0; d < 4; d++)
		if (d != 1 && x->dims[d] != y->dims[d])
			return "slices other than along channels";
	int64_t starts[8], axes[8] = {0}, steps[8];
	int ns, na, nst;
	if (g->opset >= 10) {
		ns = const_ints(c, n, 1, "", starts, 8);
		na = const_ints(c, n, 3, "", axes, 8);
		nst = const_ints(c, n, 4, "", steps, 8);
	} else {
		ns = const_ints(c, n, 99, "starts", starts, 8);
		na = const_ints(c, n, 99, "axes", axes, 8);
		nst = 0;
	}
	if (ns < 0 || na < 0 || nst < 0)
		return "starts, axes or steps not constant";
	int64_t start = 0;
	for (int k = 0; k < ns; k++) {
		int64_t ax = na ? axes[k] : k;
		if (ax < 0)
			ax += 4;
		if (nst && steps[k] != 1)
			return "a step other than 1";
		if (ax == 1) {
			start = starts[k] < 0 ? starts[k] + x->dims[1] : starts[k];
			if (start > x->dims[1])
				start = x->dims[1];
		}
	}
	int in = n->inputs[0], out = n->outputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	quant_copy(c, out, in);
	if ((r = dev_tensor(c, out)))
		return r;
	return copy_layer(c, ni, in, out, (uint32_t)start, (uint32_t)y->dims[1]);
}

/* ---- ReduceMean over the spatial axes: global average pooling ---- */
static const char *lower_reducemean(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, n, 0);
	int64_t axes[8];
	int na = const_ints(c, n, g->opset >= 18 ? 1 : 99, "axes", axes, 8);
	if (x->rank != 4 || x->dims[0] != 1 || na != 2)
		return "only the mean over H and W of [1,C,H,W]";
	int hw = 0;
	for (int k = 0; k < 2; k++) {
		int64_t a = axes[k] < 0 ? axes[k] + 4 : axes[k];
		hw |= a == 2 ? 1 : a == 3 ? 2 : 4;
	}
	if (hw != 3)
		return "only the mean over H and W of [1,C,H,W]";
	if (x->dims[2] > 255 || x->dims[3] > 255)
		return "window over 255";
	int in = n->inputs[0], out = n->outputs[0];
	const char *r = img_tensor(c, in);
	if (r || (r = dev_tensor(c, out)))
		return r;
	lw *l = vec_layer(c, ni, LOOM_LAYER_POOL, LOOM_VEC_POOL, in, out, -1);
	if (!l)
		return "out of memory";
	loom_vec_params *p = &l->vp;
	p->func = LOOM_POOL_AVG;
	p->kh = p->h, p->kw = p->w;
	if (loom_quant_mult(c->scale[in] / ((double)c->scale[out] * p->kh * p->kw), &p->mult, &p->shift)) {
		drop_layer(c);
		return "average scale >= 1";
	}
	return vec_plan(c, "vector-unit planner refused the pooling");
}

/* ---- channel shuffle: Reshape [1,C,H,W] -> [1,G,C/G,H,W], Transpose
 * (0,2,1,3,4), Reshape -> [1,C,H,W] is a channel permutation: a 1x1
 * convolution with weight 2 at (out k, in src(k)) and multiplier 1/2, exact ---- */
static const char *lower_shuffle(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *r1 = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, r1, 0), *y1 = loom_node_out(g, r1, 0);
	if (x->rank != 4 || x->dims[0] != 1 || y1->rank != 5 || y1->dims[0] != 1 ||
	    y1->dims[1] * y1->dims[2] != x->dims[1] || y1->dims[3] != x->dims[2] || y1->dims[4] != x->dims[3])
		return "changes the NHWC byte order";
	int ti = sole_consumer(c, r1->outputs[0]);
	if (ti < 0 || c->keep[ti] || strcmp(g->nodes[ti].op_type, "Transpose"))
		return "changes the NHWC byte order";
	const loom_node *tn = &g->nodes[ti];
	int np = 0;
	const int64_t *perm = loom_attr_ints(tn, "perm", &np);
	if (!perm || np != 5 || perm[0] != 0 || perm[1] != 2 || perm[2] != 1 || perm[3] != 3 || perm[4] != 4)
		return "changes the NHWC byte order";
	int r2i = sole_consumer(c, tn->outputs[0]);
	if (r2i < 0 || c->keep[r2i] || strcmp(g->nodes[r2i].op_type, "Reshape"))
		return "changes the NHWC byte order";
	const loom_node *r2 = &g->nodes[r2i];
	loom_tensor *y = loom_node_out(g, r2, 0);
	if (y->rank != 4 || memcmp(y->dims, x->dims, sizeof(int64_t) * 4))
		return "changes the NHWC byte order";
	int in = r1->inputs[0], out = r2->outputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	quant_copy(c, out, in);
	if ((r = dev_tensor(c, out)))
		return r;
	uint32_t C = (uint32_t)x->dims[1], G = (uint32_t)y1->dims[1], K = C / G;
	int8_t *w = calloc((size_t)C * C + 1, 1);
	int32_t *pz = calloc((size_t)C * 3 + 1, sizeof *pz);
	lw *l = w && pz ? new_layer(c, LOOM_LAYER_CONV, ni) : NULL;
	if (!l) {
		free(w);
		free(pz);
		return "out of memory";
	}
	/* output channel k = a*G + b comes from input channel b*K + a */
	for (uint32_t a = 0; a < K; a++)
		for (uint32_t b = 0; b < G; b++)
			w[(size_t)(a * G + b) * C + b * K + a] = 2;
	int32_t *mult = pz + C, *shift = mult + C;
	for (uint32_t k = 0; k < C; k++)
		loom_quant_mult(0.5, &mult[k], &shift[k]); /* exactly 1/2 */
	l->in[0] = in;
	l->out = out;
	l->nodes[1] = ti;
	l->nodes[2] = r2i;
	loom_conv_params *p = &l->cp;
	loom_conv_init(p);
	p->h = c->m->mt[in].h, p->w = c->m->mt[in].w, p->cin = C, p->cout = C;
	p->in_stride = c->m->mt[in].stride, p->out_stride = c->m->mt[out].stride;
	p->in_zp = (int8_t)c->zp[in], p->out_zp = (int8_t)c->zp[out];
	r = NULL;
	if (loom_conv_plan_make(c->cfg, p, &l->cplan, c->err, c->errlen)) {
		r = "convolution planner refused the permutation";
	} else {
		l->wbytes = l->cplan.wgt_bytes;
		l->pbytes = l->cplan.param_bytes;
		l->cbuf = calloc(1, l->wbytes + l->pbytes + 1);
		if (!l->cbuf || loom_conv_pack(c->cfg, p, w, pz, mult, shift, l->cbuf, l->cbuf + l->wbytes, c->err,
					       c->errlen))
			r = "packing the permutation failed";
	}
	free(w);
	free(pz);
	if (r) {
		drop_layer(c);
		return r;
	}
	c->done[ti] = c->done[r2i] = 1;
	why(c, ti, LOOM_WHERE_FUSED, "into %s (channel shuffle as a 1x1 permutation convolution)", r1->name);
	why(c, r2i, LOOM_WHERE_FUSED, "into %s (channel shuffle)", r1->name);
	return NULL;
}

/* ---- layout-only nodes: an alias when the device image is the same ---- */
static const char *lower_alias(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	int in = n->inputs[0], out = n->outputs[0];
	uint32_t h1, w1, c1, h2, w2, c2;
	if (c->g->tensors[in].is_const)
		return "constant input";
	/* the same bytes: both row-major (rank <= 2 or rows) or both images with
	 * the same geometry, or a single pixel per row (e.g. [1,C,1,1] -> [1,C]) */
	int in_rows = row_major(c, in), out_rank = c->g->tensors[out].rank;
	if ((in_rows ? rows_geom(c, in, &h1, &w1, &c1) : geom(c, in, &h1, &w1, &c1)) ||
	    (in_rows ? rows_geom(c, out, &h2, &w2, &c2) : geom(c, out, &h2, &w2, &c2)))
		return "no NHWC image for this shape";
	if (!in_rows && out_rank < 3 && (h1 != 1 || w1 != 1))
		h2 = 0; /* an image read as rows: another byte order */
	if (h1 != h2 || w1 != w2 || c1 != c2) {
		/* a Flatten into a Gemm / MatMul: the consumer reads the image
		 * itself with its weight rows reordered (lower_gemm); deferred
		 * until it is lowered (materialized on the CPU if it is not) */
		int s = sole_consumer(c, out);
		const loom_node *u = s >= 0 ? &c->g->nodes[s] : NULL;
		if (u && !c->keep[s] && c->on_dev[in] && u->inputs[0] == out &&
		    (!strcmp(u->op_type, "Gemm") || !strcmp(u->op_type, "MatMul"))) {
			c->deferred[ni] = 1;
			return NULL;
		}
		return "changes the NHWC byte order";
	}
	if (c->g->tensors[out].dtype != LOOM_DT_FLOAT)
		return "not float";
	if (!c->on_dev[in] && !c->on_host[in])
		return "input not available";
	if (!c->on_dev[in]) /* nothing gained: keep it on the CPU */
		return "input is on the host";
	const char *r = dev_tensor(c, in);
	if (r)
		return r;
	int root = c->alias[in] >= 0 ? c->alias[in] : in;
	c->alias[out] = root;
	quant_copy(c, out, in);
	c->m->mt[out] = c->m->mt[in];
	c->m->mt[out].rows = in_rows && out_rank >= 3;
	return NULL;
}

/* ------------------------------------------------------------------ steps */

static int add_step(cc *c, int kind)
{
	loom_model *m = c->m;
	loom_step *p = realloc(m->steps, (m->nsteps + 1) * sizeof *p);
	if (!p)
		return -1;
	m->steps = p;
	memset(&p[m->nsteps], 0, sizeof *p);
	p[m->nsteps].kind = kind;
	p[m->nsteps].node = p[m->nsteps].tensor = -1;
	return (int)m->nsteps++;
}

static int root_of(cc *c, int t) { return c->alias[t] >= 0 ? c->alias[t] : t; }

static void use(cc *c, int t)
{
	t = root_of(c, t);
	if (c->tlast[t] < c->time)
		c->tlast[t] = c->time;
}

static int ensure_dev(cc *c, int t)
{
	if (c->on_dev[t] || c->is_cdev[t])
		return 0;
	int s = add_step(c, LOOM_STEP_QUANT);
	if (s < 0)
		return -1;
	c->m->steps[s].tensor = t;
	c->m->mt[t].dev = 1;
	c->on_dev[t] = 1;
	c->tdef[t] = ++c->time;
	c->tlast[t] = c->time;
	return 0;
}

static int ensure_host(cc *c, int t)
{
	if (c->on_host[t] || c->g->tensors[t].is_const)
		return 0;
	int s = add_step(c, LOOM_STEP_DEQUANT);
	if (s < 0)
		return -1;
	c->m->steps[s].tensor = t;
	c->m->mt[t].host = 1;
	c->on_host[t] = 1;
	c->time++;
	use(c, t);
	return 0;
}

/* append the layers [first, c->nlw) of node ni to the step list */
static int place_layers(cc *c, int first)
{
	for (int i = first; i < c->nlw; i++) {
		lw *l = &c->lws[i];
		for (int k = 0; k < 2; k++)
			if (l->in[k] >= 0 && ensure_dev(c, l->in[k]))
				return -1;
	}
	loom_model *m = c->m;
	int s;
	if (m->nsteps && m->steps[m->nsteps - 1].kind == LOOM_STEP_NPU) {
		s = (int)m->nsteps - 1;
	} else {
		if ((s = add_step(c, LOOM_STEP_NPU)) < 0)
			return -1;
		m->steps[s].layer = (uint32_t)first;
	}
	for (int i = first; i < c->nlw; i++) {
		lw *l = &c->lws[i];
		l->step = s;
		l->time = ++c->time;
		for (int k = 0; k < 2; k++)
			if (l->in[k] >= 0)
				use(c, l->in[k]);
		int o = l->out;
		c->on_dev[o] = 1;
		c->m->mt[o].dev = 1;
		if (c->tdef[o] < 0)
			c->tdef[o] = c->time;
		use(c, o);
		m->steps[s].nlayers++;
	}
	return 0;
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

typedef struct forced_q {
	int t;
	float scale;
	int32_t zp;
} forced_q;

/* QuantizeLinear -> DequantizeLinear pairs on activations (a QDQ model, as
 * ONNX Runtime's quantization tool or a QAT export writes it): the pair
 * becomes an Identity (removed by the passes) and the tensor keeps the
 * pair's scale and zero point (uint8 zero points shifted by -128: the same
 * grid in int8) instead of a calibrated range. Weights' pairs are constants
 * and fold; their int8 values come back from the per-channel max|w|/127
 * scales the NPU uses, which is how those tools choose them. Returns the
 * number of pairs, or -1 (out of memory). */
static int fold_qdq(loom_graph *g, forced_q **out, int *nout)
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

static int calibrate(cc *c)
{
	loom_graph *g = c->g;
	const loom_compile_opts *o = c->o;
	c->calib = loom_calib_new(g, o->calib_method, o->percentile > 0 ? o->percentile : 99.99);
	if (!c->calib)
		return fail(c, "out of memory (calibration)");
	int n;
	if (o->calib_dir) {
		n = loom_calib_run_dir(c->calib, g, o->calib_dir, c->err, c->errlen);
		if (n < 0)
			return -1;
	} else if (o->calib_inputs) {
		n = 1;
		if (loom_calib_bind(g, o->calib_inputs, o->calib_ninputs, "calibration inputs", c->err, c->errlen) ||
		    loom_ref_run(g, c->err, c->errlen) || loom_calib_observe(c->calib, g, c->err, c->errlen))
			return -1;
	} else {
		n = o->random_samples > 0 ? o->random_samples : 4;
		uint64_t s = 0x9e3779b97f4a7c15ull;
		for (int k = 0; k < n; k++) {
			for (int i = 0; i < g->ninputs; i++) {
				loom_tensor *t = &g->tensors[g->inputs[i]];
				size_t bytes = loom_tensor_bytes(t);
				void *d = calloc(1, bytes + 1);
				if (!d)
					return fail(c, "out of memory (calibration)");
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
					return fail(c, "out of memory (calibration)");
			}
			if (loom_ref_run(g, c->err, c->errlen) || loom_calib_observe(c->calib, g, c->err, c->errlen))
				return -1;
		}
		if (c->rep)
			c->rep->calib_random = 1;
	}
	if (c->rep)
		c->rep->calib_samples = n;
	/* drop the activations' data: only constants stay in the graph */
	for (int t = 0; t < g->ntensors; t++)
		if (!g->tensors[t].is_const) {
			free(g->tensors[t].data);
			g->tensors[t].data = NULL;
			g->tensors[t].cap = 0;
		}
	return 0;
}

/* ------------------------------------------------------------------ memory + emission */

typedef struct blk {
	int t;
	uint64_t size, off;
} blk;

static int blk_cmp(const void *a, const void *b)
{
	const blk *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->t - y->t;
}

static int plan_arena(cc *c)
{
	loom_model *m = c->m;
	int nb = 0;
	blk *b = calloc((size_t)c->nt + 1, sizeof *b);
	if (!b)
		return fail(c, "out of memory");
	uint64_t total = 0;
	for (int t = 0; t < c->nt; t++) {
		if (!m->mt[t].dev || c->is_cdev[t] || c->alias[t] >= 0)
			continue;
		b[nb].t = t;
		b[nb].size = align64((uint64_t)m->mt[t].h * m->mt[t].w * m->mt[t].stride);
		total += b[nb].size;
		nb++;
	}
	qsort(b, (size_t)nb, sizeof *b, blk_cmp);
	uint64_t top = 0;
	for (int i = 0; i < nb; i++) {
		uint64_t off = 0;
		for (int again = 1; again;) {
			again = 0;
			for (int j = 0; j < i; j++) {
				int u = b[j].t, t = b[i].t;
				if (c->tlast[u] < c->tdef[t] || c->tlast[t] < c->tdef[u])
					continue;
				if (off < b[j].off + b[j].size && b[j].off < off + b[i].size) {
					off = b[j].off + b[j].size;
					again = 1;
				}
			}
		}
		b[i].off = off;
		if (off + b[i].size > top)
			top = off + b[i].size;
	}
	m->arena_bytes = top;
	m->arena_bytes_noreuse = total;
	for (int i = 0; i < nb; i++)
		m->mt[b[i].t].addr = m->arena_base + b[i].off;
	free(b);
	for (int t = 0; t < c->nt; t++) {
		if (c->is_cdev[t])
			m->mt[t].addr += m->const_base;
		else if (c->alias[t] >= 0) {
			uint64_t a = m->mt[c->alias[t]].addr;
			int rows = m->mt[t].rows; /* its own: it may differ in rank from the root */
			m->mt[t] = m->mt[c->alias[t]];
			m->mt[t].addr = a;
			m->mt[t].rows = rows;
			m->mt[t].host = c->on_host[t];
		}
	}
	return 0;
}

static int emit(cc *c)
{
	loom_model *m = c->m;
	loom_prog all;
	loom_prog_init(&all);
	uint64_t text = m->mark_base + align64((uint64_t)LOOM_MARK_BYTES * (m->nlayers ? m->nlayers : 1));
	m->text_bytes = 0;
	for (uint32_t s = 0; s < m->nsteps; s++) {
		loom_step *st = &m->steps[s];
		if (st->kind != LOOM_STEP_NPU)
			continue;
		loom_prog p;
		loom_prog_init(&p);
		for (uint32_t li = st->layer; li < st->layer + st->nlayers; li++) {
			lw *l = &c->lws[li];
			loom_layer *L = &m->layers[li];
			uint32_t before = (uint32_t)p.n;
			int rc;
			uint64_t cb = m->const_base + l->const_off;
			uint32_t mark = (uint32_t)(m->mark_base + (uint64_t)LOOM_MARK_BYTES * li);
			if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM) {
				loom_dram_layout lay = {
					.in_addr = (uint32_t)(m->mt[l->in[0]].addr + l->in_off),
					.wgt_addr = (uint32_t)cb,
					.param_addr = (uint32_t)(cb + l->wbytes),
					.out_addr = (uint32_t)(m->mt[l->out].addr + l->out_off),
					.mark_addr = mark,
					.mark_id = li,
				};
				rc = l->kind == LOOM_LAYER_GEMM
					     ? loom_build_gemm(c->cfg, &l->gp, &lay, &p, &l->cplan, c->err, c->errlen)
					     : loom_build_conv(c->cfg, &l->cp, &lay, &p, &l->cplan, c->err, c->errlen);
			} else {
				loom_vec_layout lay = {
					.in_addr = (uint32_t)(m->mt[l->in[0]].addr + l->in_off),
					.in2_addr = l->in[1] >= 0 ? (uint32_t)m->mt[l->in[1]].addr : 0,
					.const_addr = (uint32_t)cb,
					.out_addr = (uint32_t)(m->mt[l->out].addr + l->out_off),
					.mark_addr = mark,
					.mark_id = li,
				};
				rc = loom_build_vec(c->cfg, &l->vp, &lay, &p, &l->vplan, c->err, c->errlen);
			}
			if (rc) {
				loom_prog_free(&p);
				loom_prog_free(&all);
				return fail(c, "node '%s': emission: %.*s", L->name, 200, c->err);
			}
			L->insn_first = (uint32_t)(all.n + before);
			L->insn_count = (uint32_t)(p.n - before);
			L->mark_id = li;
			if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM) {
				const loom_conv_plan *pl = &l->cplan;
				L->macs = pl->macs;
				L->est_cycles = pl->est_cycles;
				L->dram_bytes = pl->dram_rd_est + pl->out_bytes;
				L->tile_h = pl->th, L->tile_w = pl->tw, L->tile_c = pl->kc * c->cfg->array_rows;
				L->sp_bytes = (pl->wgt_lines * pl->nwreg + 2 * pl->act_lines) * c->cfg->sp_line_bytes;
			} else {
				const loom_vec_plan *pl = &l->vplan;
				L->macs = l->kind == LOOM_LAYER_DWCONV
						  ? (uint64_t)pl->oh * pl->ow * l->vp.c * l->vp.kh * l->vp.kw
						  : 0;
				L->est_cycles = pl->est_cycles;
				L->dram_bytes = pl->dram_rd_est + pl->out_bytes;
				L->tile_h = pl->th, L->tile_w = pl->tw, L->tile_c = pl->kc * c->cfg->array_rows;
				L->sp_bytes = (uint32_t)((uint64_t)(pl->in_lines + pl->out_lines) * (uint32_t)pl->nbuf +
							 pl->const_lines) * c->cfg->sp_line_bytes;
			}
		}
		if (loom_prog_finish(&p) || loom_prog_verify(c->cfg, &p, c->err, c->errlen)) {
			char e2[200];
			snprintf(e2, sizeof e2, "%s", c->err);
			loom_prog_free(&p);
			loom_prog_free(&all);
			return fail(c, "job of layers %u..%u: %s", st->layer, st->layer + st->nlayers - 1, e2);
		}
		st->insn_addr = text + (uint64_t)all.n * LOOM_INSN_BYTES;
		for (size_t i = 0; i < p.n; i++)
			if (loom_prog_add(&all, &p.insn[i])) {
				loom_prog_free(&p);
				loom_prog_free(&all);
				return fail(c, "out of memory");
			}
		loom_prog_free(&p);
	}
	m->insn = all.insn;
	m->ninsn = (uint32_t)all.n;
	m->base = m->const_base;
	m->text_base = text;
	m->text_bytes = (uint64_t)all.n * LOOM_INSN_BYTES;
	m->dram_end = text + align64(m->text_bytes);
	if (m->dram_end > c->cfg->dram_bytes)
		return fail(c, "the model needs %llu bytes of device DRAM up to 0x%llx; configuration %s has %llu",
			    (unsigned long long)(m->dram_end - m->base), (unsigned long long)m->dram_end, c->cfg->name,
			    (unsigned long long)c->cfg->dram_bytes);
	return 0;
}

/* ------------------------------------------------------------------ driver */

static int in_list(const char *list, const char *name)
{
	if (!list)
		return 0;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e ? 1 : 0);
	}
	return 0;
}

static const char *lower_node(cc *c, int ni)
{
	const char *op = c->g->nodes[ni].op_type;
	if (c->g->nodes[ni].domain[0])
		return "not the default ONNX domain";
	for (int i = 0; i < c->g->nodes[ni].noutputs; i++) {
		int t = c->g->nodes[ni].outputs[i];
		if (t >= 0 && c->g->tensors[t].dtype != LOOM_DT_FLOAT)
			return "output is not float";
	}
	if (!strcmp(op, "Conv"))
		return lower_conv(c, ni);
	if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
		return lower_gemm(c, ni);
	if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "GlobalAveragePool") ||
	    !strcmp(op, "GlobalMaxPool"))
		return lower_pool(c, ni);
	if (!strcmp(op, "Concat"))
		return lower_concat(c, ni);
	if (!strcmp(op, "Reshape") && c->g->tensors[c->g->nodes[ni].outputs[0]].rank == 5)
		return lower_shuffle(c, ni);
	if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
		return lower_alias(c, ni);
	if (!strcmp(op, "Slice"))
		return lower_slice(c, ni);
	if (!strcmp(op, "BatchNormalization"))
		return lower_bn(c, ni);
	if (!strcmp(op, "Pad"))
		return lower_pad(c, ni);
	if (!strcmp(op, "ReduceMean"))
		return lower_reducemean(c, ni);
	if (!strcmp(op, "Add") || !strcmp(op, "Mul")) {
		const loom_node *n = &c->g->nodes[ni];
		int nconst = 0;
		for (int i = 0; i < n->ninputs; i++)
			if (n->inputs[i] >= 0 && c->g->tensors[n->inputs[i]].is_const &&
			    loom_tensor_numel(&c->g->tensors[n->inputs[i]]) == 1)
				nconst++;
		if (!nconst)
			return lower_eltwise(c, ni);
	}
	return lower_lut(c, ni);
}

static int cpu_node(cc *c, int ni, const char *reason)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	if (!loom_cpu_op_find(n->op_type, g->opset) || n->domain[0])
		return fail(c, "node '%s' (%s%s%s, opset %lld): no NPU lowering (%s) and no CPU kernel", n->name,
			    n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, (long long)g->opset,
			    reason);
	for (int i = 0; i < n->ninputs; i++)
		if (n->inputs[i] >= 0 && ensure_host(c, n->inputs[i]))
			return fail(c, "out of memory");
	int s = add_step(c, LOOM_STEP_CPU);
	if (s < 0)
		return fail(c, "out of memory");
	c->m->steps[s].node = ni;
	for (int i = 0; i < n->noutputs; i++)
		if (n->outputs[i] >= 0) {
			c->on_host[n->outputs[i]] = 1;
			c->m->mt[n->outputs[i]].host = 1;
		}
	why(c, ni, LOOM_WHERE_CPU, "%s", reason);
	return 0;
}

static int lower_all(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < g->ninputs; i++) {
		c->on_host[g->inputs[i]] = 1;
		c->m->mt[g->inputs[i]].host = 1;
	}
	for (int ni = 0; ni < c->nn; ni++) {
		if (c->done[ni])
			continue;
		const char *reason;
		int first = c->nlw;
		if (c->keep[ni]) {
			reason = "--keep-float";
		} else {
			int all_ready = 1;
			const loom_node *n = &g->nodes[ni];
			for (int k = 0; k < n->ninputs; k++)
				if (n->inputs[k] >= 0 && !g->tensors[n->inputs[k]].is_const &&
				    !c->on_host[n->inputs[k]] && !c->on_dev[n->inputs[k]] &&
				    !(c->prod[n->inputs[k]] >= 0 && c->deferred[c->prod[n->inputs[k]]]))
					all_ready = 0;
			reason = all_ready ? lower_node(c, ni) : "an input is computed later";
		}
		if (!reason) {
			c->done[ni] = 1;
			if (c->deferred[ni]) {
				why(c, ni, LOOM_WHERE_FUSED, "deferred into its consumer");
				continue;
			}
			if (c->nlw == first) { /* an alias */
				c->on_dev[g->nodes[ni].outputs[0]] = 1;
				why(c, ni, LOOM_WHERE_FUSED, "alias of %s (same NHWC image)",
				    g->tensors[g->nodes[ni].inputs[0]].name);
				continue;
			}
			why(c, ni, LOOM_WHERE_NPU, "%s", loom_layer_kind_name(c->lws[first].kind));
			if (c->rep)
				c->rep->nodes[ni].layer = first;
			if (place_layers(c, first))
				return fail(c, "out of memory");
			continue;
		}
		c->done[ni] = 1;
		const loom_node *n = &g->nodes[ni];
		for (int k = 0; k < n->ninputs; k++) { /* a deferred producer runs on the CPU first */
			int d = n->inputs[k] >= 0 ? c->prod[n->inputs[k]] : -1;
			if (d >= 0 && c->deferred[d]) {
				c->deferred[d] = 0;
				if (cpu_node(c, d, "its consumer runs on the CPU"))
					return -1;
			}
		}
		if (cpu_node(c, ni, reason))
			return -1;
	}
	if (finish_raw(c))
		return -1;
	for (int i = 0; i < g->noutputs; i++) {
		c->time++;
		if (ensure_host(c, g->outputs[i]))
			return fail(c, "out of memory");
	}
	return 0;
}

/* the CPU graph: NPU nodes become LOOM_NPU_OP placeholders; constants no
 * CPU node reads lose their data */
static int make_cpu_graph(cc *c)
{
	loom_graph *g = c->g;
	int *is_cpu = calloc((size_t)g->nnodes + 1, sizeof *is_cpu);
	int *needed = calloc((size_t)g->ntensors + 1, sizeof *needed);
	if (!is_cpu || !needed) {
		free(is_cpu);
		free(needed);
		return fail(c, "out of memory");
	}
	for (uint32_t s = 0; s < c->m->nsteps; s++)
		if (c->m->steps[s].kind == LOOM_STEP_CPU)
			is_cpu[c->m->steps[s].node] = 1;
	for (int i = 0; i < g->nnodes; i++) {
		loom_node *n = &g->nodes[i];
		if (is_cpu[i]) {
			for (int k = 0; k < n->ninputs; k++)
				if (n->inputs[k] >= 0)
					needed[n->inputs[k]] = 1;
			continue;
		}
		char *name = n->name;
		n->name = NULL;
		loom_node_clear(n);
		n->name = name;
		n->op_type = strdup(LOOM_NPU_OP);
		n->domain = strdup("");
		if (!n->op_type || !n->domain) {
			free(is_cpu);
			free(needed);
			return fail(c, "out of memory");
		}
	}
	for (int i = 0; i < g->noutputs; i++)
		needed[g->outputs[i]] = 1;
	for (int t = 0; t < g->ntensors; t++)
		if (g->tensors[t].is_const && !needed[t]) {
			free(g->tensors[t].data);
			g->tensors[t].data = NULL;
		}
	free(is_cpu);
	free(needed);
	return 0;
}

static void cc_free(cc *c)
{
	free(c->ncons);
	free(c->prod);
	free(c->hasq);
	free(c->scale);
	free(c->zp);
	free(c->alias);
	free(c->on_host);
	free(c->on_dev);
	free(c->is_cdev);
	free(c->tdef);
	free(c->tlast);
	free(c->keep);
	free(c->done);
	free(c->deferred);
	for (int i = 0; i < c->nlw; i++)
		free(c->lws[i].cbuf);
	free(c->lws);
	free(c->cregion);
	free(c->forced);
	for (int i = 0; i < c->nraw; i++)
		free(c->raws[i].sv);
	free(c->raws);
	loom_calib_free(c->calib);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int loom_compile(loom_graph *g, const loom_hwcfg *cfg, const loom_compile_opts *o, loom_model **out,
		 loom_compile_report *rep, char *err, size_t errlen)
{
	double t0 = now_s(), t1;
	cc c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.cfg = cfg;
	c.o = o;
	c.rep = rep;
	c.err = err;
	c.errlen = errlen;
	*out = NULL;
	if (rep)
		memset(rep, 0, sizeof *rep);
	loom_pass_stats st;
	memset(&st, 0, sizeof st);
	int rc = -1;
	loom_model *m = calloc(1, sizeof *m);
	if (!m) {
		fail(&c, "out of memory");
		goto done;
	}
	forced_q *forced = NULL;
	int nforced = 0, npairs = fold_qdq(g, &forced, &nforced);
	if (npairs < 0) {
		fail(&c, "out of memory");
		goto done;
	}
	c.forced = forced;
	c.nforced = nforced;
	if (loom_simplify(g, &st, err, errlen))
		goto done;
	t1 = now_s();
	if (rep) {
		rep->qdq_pairs = npairs;
		rep->simplify_s = t1 - t0;
	}
	if (rep) {
		rep->nodes_onnx = st.nodes_before;
		rep->folded = st.folded;
		rep->identities_removed = st.identities_removed;
		rep->dead_removed = st.dead_removed;
		rep->bn_folded = st.bn_folded;
	}
	if (prepare_raw(&c)) {
		fail(&c, "out of memory");
		goto done;
	}
	/* compact away nothing: the passes keep g->nodes dense */
	c.nt = g->ntensors;
	c.nn = g->nnodes;
	size_t nt = (size_t)c.nt + 1, nn = (size_t)c.nn + 1;
	c.ncons = calloc(nt, sizeof(int));
	c.prod = malloc(nt * sizeof(int));
	c.hasq = calloc(nt, sizeof(int));
	c.scale = calloc(nt, sizeof(float));
	c.zp = calloc(nt, sizeof(int32_t));
	c.alias = malloc(nt * sizeof(int));
	c.on_host = calloc(nt, sizeof(int));
	c.on_dev = calloc(nt, sizeof(int));
	c.is_cdev = calloc(nt, sizeof(int));
	c.tdef = malloc(nt * sizeof(int));
	c.tlast = malloc(nt * sizeof(int));
	c.keep = calloc(nn, sizeof(int));
	c.done = calloc(nn, sizeof(int));
	c.deferred = calloc(nn, sizeof(int));
	m->mt = calloc(nt, sizeof *m->mt);
	if (rep)
		rep->nodes = calloc(nn, sizeof *rep->nodes);
	if (!c.ncons || !c.prod || !c.hasq || !c.scale || !c.zp || !c.alias || !c.on_host || !c.on_dev ||
	    !c.is_cdev || !c.tdef || !c.tlast || !c.keep || !c.done || !c.deferred || !m->mt || (rep && !rep->nodes)) {
		fail(&c, "out of memory");
		goto done;
	}
	m->version = LOOM_MODEL_VERSION;
	m->cfg = *cfg;
	m->graph = g;
	c.m = m;
	for (int t = 0; t < c.nt; t++) {
		c.prod[t] = c.alias[t] = c.tdef[t] = c.tlast[t] = -1;
	}
	for (int i = 0; i < c.nn; i++) {
		const loom_node *n = &g->nodes[i];
		for (int k = 0; k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				c.ncons[n->inputs[k]]++;
		for (int k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				c.prod[n->outputs[k]] = i;
		c.keep[i] = in_list(o->keep_float, n->name);
	}
	for (int i = 0; i < g->noutputs; i++)
		c.ncons[g->outputs[i]]++;
	if (o->keep_float) { /* every name must exist */
		const char *p = o->keep_float;
		while (*p) {
			const char *e = strchr(p, ',');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			int found = 0;
			for (int i = 0; i < c.nn && !found; i++)
				found = strlen(g->nodes[i].name) == len && !strncmp(g->nodes[i].name, p, len);
			if (!found && len) {
				fail(&c, "--keep-float: no node named '%.*s' (after simplification)", (int)len, p);
				goto done;
			}
			p += len + (e ? 1 : 0);
		}
	}
	if (rep) {
		rep->nnodes = c.nn;
		for (int i = 0; i < c.nn; i++) {
			snprintf(rep->nodes[i].name, sizeof rep->nodes[i].name, "%s", g->nodes[i].name);
			snprintf(rep->nodes[i].op_type, sizeof rep->nodes[i].op_type, "%s", g->nodes[i].op_type);
			rep->nodes[i].layer = -1;
			rep->nodes[i].macs = node_macs(g, &g->nodes[i]);
		}
	}
	for (int i = 0; i < c.nforced; i++)
		if (c.forced[i].t >= 0 && c.forced[i].t < c.nt) {
			c.scale[c.forced[i].t] = c.forced[i].scale;
			c.zp[c.forced[i].t] = c.forced[i].zp;
			c.hasq[c.forced[i].t] = 1;
		}
	if (calibrate(&c))
		goto done;
	t0 = now_s();
	if (rep)
		rep->calib_s = t0 - t1;
	if (lower_all(&c))
		goto done;
	/* tensors that stay on the host keep the int8 step they would have had
	 * (reports, tolerances of test runners); dev = 0 */
	for (int t = 0; t < c.nt; t++)
		if (!m->mt[t].dev && is_float_act(&c, t) && !g->tensors[t].is_const && !quant_of(&c, t)) {
			m->mt[t].scale = c.scale[t];
			m->mt[t].zp = c.zp[t];
		}
	/* layers of the model */
	m->nlayers = (uint32_t)c.nlw;
	m->layers = calloc((size_t)c.nlw + 1, sizeof *m->layers);
	if (!m->layers) {
		fail(&c, "out of memory");
		goto done;
	}
	/* const region: the eltwise constants first, then each layer's constants */
	for (int i = 0; i < c.nlw; i++) {
		lw *l = &c.lws[i];
		loom_layer *L = &m->layers[i];
		L->kind = l->kind;
		L->name = strdup(g->nodes[l->node].name);
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
			L->nodes[k] = l->nodes[k];
		L->in[0] = l->in[0];
		L->in[1] = l->in[1];
		L->out = l->out;
		if (l->const_of >= 0) {
			l->const_off = L->const_off = c.lws[l->const_of].const_off;
			continue;
		}
		uint64_t bytes = l->wbytes + l->pbytes;
		int64_t off = L->name ? const_alloc(&c, bytes) : -1;
		if (off < 0) {
			fail(&c, "out of memory");
			goto done;
		}
		if (bytes)
			memcpy(c.cregion + off, l->cbuf, bytes);
		l->const_off = L->const_off = (uint64_t)off;
		L->const_bytes = bytes;
	}
	m->const_base = o->base ? o->base : DEFAULT_BASE;
	m->const_bytes = align64(c.cbytes);
	m->arena_base = m->const_base + m->const_bytes;
	if (plan_arena(&c))
		goto done;
	m->mark_base = m->arena_base + align64(m->arena_bytes);
	t1 = now_s();
	if (emit(&c))
		goto done;
	if (rep) {
		rep->lower_s = t1 - t0;
		rep->emit_s = now_s() - t1;
	}
	m->consts = c.cregion;
	c.cregion = NULL;
	if (make_cpu_graph(&c))
		goto done;
	m->options = strdup(o->options ? o->options : "");
	m->source = strdup(o->source ? o->source : (g->path ? g->path : ""));
	if (!m->options || !m->source) {
		fail(&c, "out of memory");
		goto done;
	}
	if (rep) {
		for (int i = 0; i < c.nn; i++) {
			loom_node_report *r = &rep->nodes[i];
			if (r->where == LOOM_WHERE_CPU) {
				rep->nodes_cpu++;
				rep->macs_cpu += r->macs;
			} else {
				rep->nodes_npu++;
				rep->macs_npu += r->macs;
			}
		}
		for (uint32_t i = 0; i < m->nlayers; i++)
			rep->est_cycles += m->layers[i].est_cycles;
	}
	rc = 0;
done:
	cc_free(&c);
	loom_pass_stats_free(&st);
	if (rc) {
		if (m) {
			if (!m->graph)
				loom_graph_free(g);
			loom_model_free(m);
		} else {
			loom_graph_free(g);
		}
		if (rep)
			loom_compile_report_free(rep);
		return -1;
	}
	*out = m;
	return 0;
}
