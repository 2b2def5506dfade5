/* lower_conv.c - lowering of the array's operators (compile_internal.h):
 * Conv (CONV, depthwise as DWCONV, grouped as block-diagonal weights),
 * Gemm / MatMul with constant B (GEMM; a Flatten of an image folded into
 * the weights' row order), the channel shuffle (a permutation 1x1 CONV),
 * and graph outputs that leave the NPU as int32 accumulators. */
#include "compiler/compile_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static rawout *raw_of(cc *c, int out, int act)
{
	if (act >= 0)
		return NULL;
	for (int i = 0; i < c->lo.nraw; i++)
		if (c->lo.raws[i].out == out && !c->lo.raws[i].used)
			return &c->lo.raws[i];
	return NULL;
}

/* the layer just made writes ro's int32 image */
static void raw_image(cc *c, rawout *ro)
{
	loom_mtensor *mt = &c->m->mt[ro->acc];
	mt->rows = c->m->mt[ro->out].rows;
	if (mt->rows)
		rows_geom(c, ro->acc, &mt->h, &mt->w, &mt->c);
	else
		cc_geom(c, ro->acc, &mt->h, &mt->w, &mt->c);
	mt->stride = 4 * mt->c;
	mt->raw = 1;
	mt->scale = 1.0f;
	mt->zp = 0;
	c->q.scale[ro->acc] = 1.0f;
	c->q.zp[ro->acc] = 0;
	c->q.hasq[ro->acc] = 1;
}

/* S and O of ro from the quantized weights wq [ch][per] and their scales */
static const char *raw_params(cc *c, rawout *ro, int ni, int in, const int8_t *wq, int64_t per,
			      const double *sw, const float *bias)
{
	ro->sv = malloc(sizeof(float) * (size_t)(2 * ro->ch + 1));
	if (!ro->sv)
		return "out of memory";
	for (int64_t k = 0; k < ro->ch; k++) {
		int64_t sum = 0;
		for (int64_t e = 0; e < per; e++)
			sum += wq[k * per + e];
		double sc = c->q.scale[in] * sw[k];
		ro->sv[k] = (float)sc;
		ro->sv[ro->ch + k] = (float)((bias ? bias[k] : 0) - c->q.zp[in] * sc * (double)sum);
	}
	ro->used = 1;
	ro->node = ni;
	return NULL;
}

int prepare_raw(cc *c)
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
		rawout *r = realloc(c->lo.raws, (size_t)(c->lo.nraw + 1) * sizeof *r);
		if (!r)
			return -1;
		c->lo.raws = r;
		r = &c->lo.raws[c->lo.nraw];
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
		c->lo.nraw++;
	}
	return 0;
}

int finish_raw(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < c->lo.nraw; i++) {
		rawout *r = &c->lo.raws[i];
		g->tensors[r->acc].is_const = g->tensors[r->tmp].is_const = 0;
		if (!r->used)
			continue;
		if (loom_tensor_set_data(&g->tensors[r->s], r->sv, sizeof(float) * (size_t)r->ch) ||
		    loom_tensor_set_data(&g->tensors[r->o], r->sv + r->ch, sizeof(float) * (size_t)r->ch))
			return cc_fail(c, "out of memory");
		char name[512];
		int in1[2] = {r->acc, r->s}, in2[2] = {r->tmp, r->o};
		snprintf(name, sizeof name, "%s.dequant_scale", g->nodes[r->node].name);
		int m1 = loom_graph_add_node(g, "Mul", name, in1, 2, &r->tmp, 1);
		snprintf(name, sizeof name, "%s.dequant_offset", g->nodes[r->node].name);
		int m2 = m1 < 0 ? -1 : loom_graph_add_node(g, "Add", name, in2, 2, &r->out, 1);
		if (m2 < 0)
			return cc_fail(c, "out of memory");
		if (cpu_node(c, m1, "int32 output, dequantized per channel") ||
		    cpu_node(c, m2, "int32 output, dequantized per channel"))
			return -1;
	}
	return 0;
}

/* ---- Conv ---- */
/* The packing (loom_conv_params.xpack) is asked for by rules on the
 * layer's shape alone, not on the configuration: the compile of one
 * configuration then has the layers of every other's, which loom sweep
 * relies on (it re-plans one compile's layers for each design point).
 * The CONV builder packs where the configuration allows. Asked for: a
 * conv of at most XPACK_MAX_CIN input channels (a channel stride of at
 * most R / 2 bytes on a 16-row array), dilation 1 across, a kernel at
 * least 2 wide; with horizontal padding only for a strided kernel (an
 * image stem: at stride 1 the copy and the packed lines' fourfold input
 * bytes cost more than they save, as the digits CNN's 3x3 measured) whose
 * kernel rows saved on a 16x16 array (output blocks x kernel rows x the
 * lines of a row not needed) exceed the padded copy's cost (about two
 * vector-unit cycles per input pixel a stride step covers). */
#define XPACK_MAX_CIN 8

static int xpack_wanted(const loom_tensor *x, const loom_tensor *wt, const struct loom_cpu_geo *geo, int padded)
{
	if (x->rank != 4 || wt->rank != 4 || x->dims[1] > XPACK_MAX_CIN || wt->dims[3] < 2 || geo->d[2] != 1)
		return 0;
	int64_t T = 16 / ((x->dims[1] + 3) / 4 * 4), kw = wt->dims[3], sw = geo->s[2];
	if (T < 2 || T % sw)
		return 0;
	int64_t saved = (wt->dims[0] + 15) / 16 * wt->dims[2] * (kw - (kw + T - 1) / T);
	return !padded || (sw >= 2 && saved > 2 * geo->s[1] * sw);
}

/* the padded copy prepared for Conv node ni (prepare_xpack), -1 */
static int xpad_of(cc *c, int ni)
{
	for (int i = 0; i < c->lo.nxpad; i++)
		if (c->lo.xpads[i].node == ni)
			return c->lo.xpads[i].t;
	return -1;
}

/* drops the layers of a try from first on and what the try claimed: its
 * fused activation act, its int32 graph output ro */
static void drop_try(cc *c, int first, int act, rawout *ro)
{
	while (c->lo.nlw > first)
		drop_layer(c);
	if (act >= 0)
		c->lo.done[act] = 0;
	if (ro && ro->used) {
		free(ro->sv);
		ro->sv = NULL;
		ro->used = 0;
	}
}

const struct xpad *host_xpad(const cc *c, int t)
{
	for (int i = 0; i < c->lo.nxpad; i++)
		if (c->lo.xpads[i].t == t && c->lo.xpads[i].src >= 0)
			return &c->lo.xpads[i];
	return NULL;
}

/* in is a float tensor of the host (a graph input, a CPU node's output)
 * that nothing but this Conv reads, not on the device yet: its QUANT step
 * may write the padded copy instead of its own image */
static int host_input(cc *c, int in)
{
	const loom_tensor *x = &c->g->tensors[in];
	return c->lo.on_host[in] && !c->lo.on_dev[in] && !c->lo.is_cdev[in] && c->lo.alias[in] < 0 && !x->is_const &&
	       c->ncons[in] == 1 && x->rank == 4 && !c->m->mt[in].rows;
}

/* The padded copy just built (layers [first, nlw): a 1x1 DWCONV per
 * image) is exact: every int8 q of every channel comes out as q, and its
 * border (LOAD's PAD_VALUE, the input zero point, through the same
 * arithmetic: requant of 0) is one byte, *fill. 1, or 0. */
static int copy_exact(cc *c, int first, int8_t *fill)
{
	for (int i = first; i < c->lo.nlw; i++) {
		const lw *l = &c->lo.lws[i];
		const loom_vec_params *p = &l->vp;
		if (l->kind != LOOM_LAYER_DWCONV || p->kh != 1 || p->kw != 1)
			return 0;
		if (l->const_of >= 0) /* a further image's: the first one's constants */
			continue;
		for (uint32_t ch = 0; ch < p->c; ch++) {
			int8_t wt;
			int32_t b, mu, sh;
			if (loom_vec_unpack_dw(c->cfg, p, l->cbuf, ch, 0, &wt, &b, &mu, &sh, c->err, c->errlen))
				return 0;
			int8_t f = loom_requant(0, b, mu, sh, p->out_zp, p->clip_lo, p->clip_hi);
			if ((i > first || ch) && f != *fill)
				return 0;
			*fill = f;
			for (int q = -128; q < 128; q++)
				if (loom_requant((q - p->in_zp) * wt, b, mu, sh, p->out_zp, p->clip_lo, p->clip_hi) != q)
					return 0;
		}
	}
	return 1;
}

/* A convolution of few input channels with horizontal padding (an image
 * stem) as the padded copy of its input into tp (pad_layer) and the
 * convolution of that copy without padding, its kernel window packed into
 * the array's rows where the configuration allows; the plain convolution
 * if either cannot be built. When the input comes from the host and only
 * this Conv reads it (host_input) and the copy is exact (copy_exact), the
 * copy is no layer: the input's QUANT step writes tp padded (ensure_dev in
 * plan.c, loom_step.dst). */
static const char *conv_xpack(cc *c, int ni, int in, int tp, const float *w, const float *bias, int64_t cout,
			      int64_t cpg, int64_t grp, const struct loom_cpu_geo *gp)
{
	struct loom_cpu_geo geo = *gp;
	int first = c->lo.nlw, act;
	int out = find_act(c, c->g->nodes[ni].outputs[0], &act); /* claimed again by the plain try */
	rawout *ro = raw_of(c, out, act);
	quant_copy(c, tp, in);
	const char *r = pad_layer(c, ni, in, tp, geo.pb[1], geo.pe[1], geo.pb[2], geo.pe[2]);
	int8_t fill = 0;
	int host = !r && host_input(c, in) && copy_exact(c, first, &fill);
	if (host)
		while (c->lo.nlw > first)
			drop_layer(c);
	/* --bias-correction from the original input's mean and geometry (the
	 * copy has no calibration of its own; its padding is the zeros the
	 * original geometry counts) */
	float *bfix = !r && c->o->bias_correction ? bias_fix_conv(c, in, w, bias, cout, cpg, grp, gp) : NULL;
	geo.pb[1] = geo.pe[1] = geo.pb[2] = geo.pe[2] = 0;
	if (!r)
		r = conv_layer(c, ni, tp, -1, 1, w, bfix ? bfix : bias, cout, cpg, grp, &geo);
	free(bfix);
	if (!r) {
		if (host)
			for (int i = 0; i < c->lo.nxpad; i++)
				if (c->lo.xpads[i].node == ni) {
					struct xpad *xp = &c->lo.xpads[i];
					xp->src = in, xp->fill = fill;
					xp->pad[0] = (uint32_t)gp->pb[1], xp->pad[1] = (uint32_t)gp->pb[2];
					xp->pad[2] = (uint32_t)gp->pe[1], xp->pad[3] = (uint32_t)gp->pe[2];
				}
		return NULL;
	}
	drop_try(c, first, act, ro);
	return conv_core(c, ni, in, w, bias, cout, cpg, grp, gp);
}

const char *lower_conv(cc *c, int ni)
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
	int tp = xpad_of(c, ni);
	if (tp >= 0)
		return conv_xpack(c, ni, in, tp, w, bias, cout, cpg, grp, &geo);
	int xp = grp == 1 && !geo.pb[2] && !geo.pe[2] && xpack_wanted(x, wt, &geo, 0);
	return conv_layer(c, ni, in, -1, xp, w, bias, cout, cpg, grp, &geo);
}

int prepare_xpack(cc *c)
{
	loom_graph *g = c->g;
	for (int ni = 0; ni < g->nnodes; ni++) {
		const loom_node *n = &g->nodes[ni];
		if (strcmp(n->op_type, "Conv") || n->ninputs < 2 || loom_attr_int(n, "group", 1) != 1)
			continue;
		loom_tensor *x = loom_node_in(g, n, 0), *wt = loom_node_in(g, n, 1);
		if (x->rank != 4 || wt->rank != 4 || x->dims[0] < 1)
			continue;
		int64_t ks[3] = {1, wt->dims[2], wt->dims[3]};
		struct loom_cpu_geo geo;
		char e2[160];
		/* not the configuration's packing condition: a calibration is
		 * reused across configurations (loom sweep), so the graph the
		 * tensors are added to must not depend on it */
		if (loom_cpu_geo_fwd(g, n, e2, sizeof e2, x, ks, 0, &geo) || (!geo.pb[2] && !geo.pe[2]) ||
		    !xpack_wanted(x, wt, &geo, 1) || geo.pb[1] > 255 || geo.pe[1] > 255 || geo.pb[2] > 255 ||
		    geo.pe[2] > 255)
			continue;
		int64_t h = x->dims[2] + geo.pb[1] + geo.pe[1], w = x->dims[3] + geo.pb[2] + geo.pe[2];
		struct xpad *xp = realloc(c->lo.xpads, (size_t)(c->lo.nxpad + 1) * sizeof *xp);
		if (!xp)
			return -1;
		c->lo.xpads = xp;
		int64_t dims[LOOM_MAX_RANK] = {x->dims[0], x->dims[1], h, w};
		char name[512];
		snprintf(name, sizeof name, "%s.padded", x->name);
		int t = loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, 4, dims, NULL, 1);
		if (t < 0)
			return -1;
		c->lo.xpads[c->lo.nxpad++] = (struct xpad){.node = ni, .t = t, .src = -1};
	}
	return 0;
}

/* A convolution of `in` (device image, [N,C,H,W] or [N,C,L]) with float
 * weights w [cout][cpg][kh][kw] and bias (NULL: none) in geometry geo,
 * writing node ni's first output (or its fused Relu/Clip's): CONV, or
 * DWCONV when depthwise. Also the lowering of standalone BatchNormalization
 * and zero Pad (depthwise convolutions of constant weights). */
const char *conv_core(cc *c, int ni, int in, const float *w, const float *bias, int64_t cout, int64_t cpg,
			     int64_t grp, const struct loom_cpu_geo *gp)
{
	return conv_layer(c, ni, in, -1, 0, w, bias, cout, cpg, grp, gp);
}

/* A residual Add to fuse into the output STORE of the Conv writing t
 * (STORE SOURCE 3, docs/ISA.md): t's only reader is an Add, neither kept
 * in float nor lowered yet, whose other operand r is an image of t's shape
 * (batch 1) already on the device, in a configuration whose STORE rows fit
 * an SP line (array_cols <= array_rows). The Add node, or -1; *r, *out (its
 * output, or that of a Relu / Clip after it: the tensor the layer writes)
 * and *act (that activation, -1). */
static int find_resadd(cc *c, int t, int *r, int *out, int *act)
{
	loom_graph *g = c->g;
	int s = sole_consumer(c, t);
	if (c->cfg->array_cols > c->cfg->array_rows || s < 0 || c->lo.keep[s] || c->lo.done[s])
		return -1;
	const loom_node *n = &g->nodes[s];
	if (strcmp(n->op_type, "Add") || n->ninputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0)
		return -1;
	int o = n->inputs[0] == t ? n->inputs[1] : n->inputs[0];
	const loom_tensor *tt = &g->tensors[t], *to = &g->tensors[o], *ty = loom_node_out(g, n, 0);
	if (o == t || to->is_const || !c->lo.on_dev[o] || row_major(c, o) || c->m->mt[o].raw || tt->rank != 4 ||
	    to->rank != 4 || !ty || ty->rank != 4 || tt->dims[0] != 1 ||
	    memcmp(tt->dims, to->dims, 4 * sizeof tt->dims[0]) || memcmp(tt->dims, ty->dims, 4 * sizeof tt->dims[0]))
		return -1;
	*r = o;
	*out = find_act(c, n->outputs[0], act);
	return s;
}

/* The fused Add's arithmetic: ELTWISE ADD's parameters (lower_eltwise)
 * with A = t, the conv output, B = r, into out with act's clamp; 0, or -1
 * when a scale ratio does not fit, or out can not share r's image layout. */
static int resadd_params(cc *c, int t, int r, int out, int act, loom_eltadd_param *e)
{
	loom_vec_params v;
	loom_vec_init(&v, LOOM_VEC_ELTWISE);
	/* dev_tensor: out's image and quantization */
	if (follow_layout(c, out, r) || dev_tensor(c, out) ||
	    loom_quant_add(c->q.scale[t], c->q.scale[r], c->q.scale[out], &v))
		return -1;
	const loom_mtensor *mo = &c->m->mt[out], *mr = &c->m->mt[r];
	if (mo->rows || mo->h != mr->h || mo->w != mr->w || mo->c != mr->c || mo->stride != mr->stride)
		return -1;
	e->mult = v.mult, e->shift = (uint8_t)v.shift;
	e->mult_a = (int16_t)v.mult_a, e->mult_b = (int16_t)v.mult_b;
	e->zp_a = (int8_t)c->q.zp[t], e->zp_b = (int8_t)c->q.zp[r], e->zp_out = (int8_t)c->q.zp[out];
	act_clip(c, act, out, &e->lo, &e->hi);
	return 0;
}

/* a block of a grouped convolution (conv_blocks): its input channels,
 * and its channel offsets in the input and output images */
typedef struct cblock {
	int64_t cin;
	uint64_t in_off, out_off;
	int out, act;            /* the tensor every block writes, the Relu / Clip fused (-1) */
} cblock;

/* conv_layer with a residual Add fused when fuse is set and one applies
 * (*fused then set); bk: one block of a grouped convolution (no fused Add,
 * no raw output, the bias already corrected), else NULL */
static const char *conv_layer_f(cc *c, int ni, int in, int to, int xpack, const float *w, const float *bias,
				int64_t cout, int64_t cpg, int64_t grp, const struct loom_cpu_geo *gp, int fuse, int *fused,
				const cblock *bk)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	loom_tensor *x = &g->tensors[in];
	struct loom_cpu_geo geo = *gp;
	int64_t cin = bk ? bk->cin : x->dims[1];
	const char *r;
	int act = bk ? bk->act : -1;
	int out = bk ? bk->out : to >= 0 ? to : find_act(c, n->outputs[0], &act);
	if ((r = dev_tensor(c, out)) || (r = img_tensor(c, in)))
		return r;
	int64_t kh = geo.k[1], kw = geo.k[2];
	uint32_t sh = (uint32_t)geo.s[1], sw = (uint32_t)geo.s[2], dh = (uint32_t)geo.d[1], dwl = (uint32_t)geo.d[2];
	int64_t kvol = cpg * kh * kw;
	int8_t lo, hi;
	int dw = grp == cin && cout == cin && cpg == 1;
	/* a residual Add (and its Relu) fused into the STORE: the conv output
	 * qt keeps its own quantization, unclamped, the layer writes the sum */
	int qt = out, radd = -1, rres = -1, ract = -1, rout = -1;
	loom_eltadd_param ep;
	memset(&ep, 0, sizeof ep);
	if (fuse && !bk && to < 0 && act < 0 && !dw && (radd = find_resadd(c, out, &rres, &rout, &ract)) >= 0 &&
	    resadd_params(c, out, rres, rout, ract, &ep))
		radd = -1;
	*fused = radd >= 0;
	if (radd >= 0) {
		out = rout;
		act = ract;
		lo = -128;
		hi = 127;
	} else {
		act_clip(c, act, out, &lo, &hi);
	}
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
	rawout *ro = dw || radd >= 0 || bk ? NULL : raw_of(c, out, act);
	double *wsc = ro ? calloc((size_t)cout + 1, sizeof *wsc) : NULL;
	if (ro && !wsc) {
		free(wq);
		free(bq);
		return "out of memory";
	}
	/* --bias-correction: the bias less the rounded weights' expected error */
	float *bfix = c->o->bias_correction && !bk ? bias_fix_conv(c, in, w, bias, cout, cpg, grp, &geo) : NULL;
	if (bfix)
		bias = bfix;
	r = quant_channels(c->q.scale[in], c->q.scale[qt], w, cout, kvol, kvol, 1, bias, wq, bq, mult, shift, wsc);
	lw *l = NULL;
	if (!r && !(l = new_layer(c, dw ? LOOM_LAYER_DWCONV : LOOM_LAYER_CONV, ni)))
		r = "out of memory";
	if (!r) {
		l->in[0] = in;
		l->out = out;
		l->nodes[1] = act;
		l->in_off = bk ? bk->in_off : 0;
		l->out_off = bk ? bk->out_off : 0;
		if (dw) {
			loom_vec_params *p = &l->vp;
			loom_vec_init(p, LOOM_VEC_DWCONV);
			p->h = ih, p->w = c->m->mt[in].w, p->c = (uint32_t)cin;
			p->in_stride = c->m->mt[in].stride, p->out_stride = c->m->mt[out].stride;
			p->kh = (uint32_t)kh, p->kw = (uint32_t)kw, p->sh = sh, p->sw = sw, p->dh = dh, p->dw = dwl;
			p->pad_top = (uint32_t)geo.pb[1], p->pad_bottom = (uint32_t)geo.pe[1];
			p->pad_left = (uint32_t)geo.pb[2], p->pad_right = (uint32_t)geo.pe[2];
			p->in_zp = (int8_t)c->q.zp[in], p->out_zp = (int8_t)c->q.zp[out];
			p->clip_lo = lo, p->clip_hi = hi;
			int8_t *wt2 = malloc((size_t)(kh * kw * cin));
			if (!wt2 || loom_plan_memo_vec(c->lo.memo, c->cfg, p, &l->vplan, e, c->errlen)) {
				free(wt2);
				r = wt2 ? cc_refused(c, "vector-unit planner refused the layer") : "out of memory";
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
			p->in_zp = (int8_t)c->q.zp[in], p->out_zp = (int8_t)c->q.zp[qt];
			p->clip_lo = lo, p->clip_hi = hi;
			p->xpack = xpack;
			if (radd >= 0) {
				p->res = 1;
				p->res_add = ep;
				l->in[1] = rres;
			}
			/* [cout][kh][kw][cin], block diagonal for groups */
			int8_t *wk = calloc((size_t)(cout * kh * kw * cin) + 1, 1);
			if (!wk || loom_plan_memo_conv(c->lo.memo, c->cfg, p, &l->cplan, e, c->errlen)) {
				free(wk);
				r = wk ? cc_refused(c, "convolution planner refused the layer") : "out of memory";
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
		int first = c->lo.nlw - 1;
		if (r)
			drop_layer(c);
		else if ((r = replicate_batch(c, first, nb)))
			while (c->lo.nlw > first)
				drop_layer(c);
	}
	free(wq);
	free(bq);
	free(wsc);
	free(bfix);
	if (!r && radd >= 0)
		cc_fused(c, radd, ni, " (residual add in the STORE)");
	if (!r && act >= 0)
		cc_fused(c, act, ni, "");
	return r;
}

/* A grouped convolution as blocks of B = lcm(cpg, R) input channels (B /
 * cpg groups each), each its own CONV layer reading its channel slice of
 * the input and writing its slice of the output, with block-diagonal
 * weights: the MACs of its own groups (and the zeros within B channels)
 * only, where the whole block-diagonal matrix would be grp / (B / cpg)
 * times as many. NULL, or why not (then the plain layer). */
static const char *conv_blocks(cc *c, int ni, int in, int to, int xpack, const float *w, const float *bias,
			       int64_t cout, int64_t cpg, int64_t grp, const struct loom_cpu_geo *gp)
{
	const int64_t R = c->cfg->array_rows, cin = c->g->tensors[in].dims[1], opg = cout / grp;
	int64_t a = cpg, b = R; /* a = gcd(cpg, R) */
	while (b) {
		int64_t m = a % b;
		a = b;
		b = m;
	}
	const int64_t B = cpg / a * R;
	if (grp < 2 || cpg == 1 || xpack || cin % B || cin <= B ||
	    raw_of(c, to >= 0 ? to : c->g->nodes[ni].outputs[0], -1))
		return "not a grouped convolution of blocks";
	const int64_t gpb = B / cpg, nbk = grp / gpb, kvol = cpg * gp->k[1] * gp->k[2];
	float *bfix = c->o->bias_correction ? bias_fix_conv(c, in, w, bias, cout, cpg, grp, gp) : NULL;
	if (bfix)
		bias = bfix;
	int first = c->lo.nlw, fused, act = -1;
	int out = to >= 0 ? to : find_act(c, c->g->nodes[ni].outputs[0], &act);
	const char *r = NULL;
	for (int64_t k = 0; k < nbk && !r; k++) {
		cblock bk = {B, (uint64_t)(k * B), (uint64_t)(k * gpb * opg), out, act};
		r = conv_layer_f(c, ni, in, to, 0, w + k * gpb * opg * kvol, bias ? bias + k * gpb * opg : NULL,
				 gpb * opg, cpg, gpb, gp, 0, &fused, &bk);
	}
	free(bfix);
	if (r)
		while (c->lo.nlw > first)
			drop_layer(c);
	return r;
}

/* the layer with a residual Add fused into it where one applies; when the
 * planner refuses that, the plain layer (the Add then lowered on its own);
 * a grouped convolution of few channels per group in blocks (conv_blocks) */
const char *conv_layer(cc *c, int ni, int in, int to, int xpack, const float *w, const float *bias, int64_t cout,
		       int64_t cpg, int64_t grp, const struct loom_cpu_geo *gp)
{
	int fused;
	const char *r = conv_blocks(c, ni, in, to, xpack, w, bias, cout, cpg, grp, gp);
	if (!r)
		return NULL;
	r = conv_layer_f(c, ni, in, to, xpack, w, bias, cout, cpg, grp, gp, 1, &fused, NULL);
	if (r && fused)
		r = conv_layer_f(c, ni, in, to, xpack, w, bias, cout, cpg, grp, gp, 0, &fused, NULL);
	return r;
}

/* ---- Gemm / MatMul (constant B) ---- */
/* what a Gemm / MatMul node gives its GEMM layer */
typedef struct gemm_node {
	int is_mm, transb;
	float alpha, beta;
	const float *b, *bias;   /* B; the bias (C, or a following Add's constant), NULL */
	int64_t K, M, N, nbias;
	int bias_node, out_t;    /* the Add folded as the bias (-1), the tensor the layer makes */
	int in, flat;            /* A's device tensor; the Flatten folded into the weights (-1) */
	uint32_t fh, fw, fc;     /* the flattened image's pixels per row and channels */
} gemm_node;

/* The node's operands, alpha, beta, its bias (C, or for a MatMul a
 * following Add of a constant [N]): NULL, or why it stays on the CPU. */
static const char *gemm_operands(cc *c, int ni, gemm_node *q)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	int is_mm = q->is_mm = !strcmp(n->op_type, "MatMul");
	loom_tensor *a = loom_node_in(g, n, 0), *bt = loom_node_in(g, n, 1);
	q->b = const_f(c, n, 1);
	if (!q->b || bt->rank != 2)
		return "B is not a constant rank-2 float tensor";
	if (a->rank != 2 && !(is_mm && a->rank >= 3))
		return "A is not rank 2";
	q->transb = !is_mm && loom_attr_int(n, "transB", 0);
	if (!is_mm && loom_attr_int(n, "transA", 0))
		return "transA";
	q->alpha = is_mm ? 1.0f : loom_attr_float(n, "alpha", 1.0f);
	q->beta = is_mm ? 1.0f : loom_attr_float(n, "beta", 1.0f);
	/* A [..., M', K]: M = every row of every leading index (row layout) */
	int64_t K = q->K = a->dims[a->rank - 1], N;
	q->M = K ? loom_tensor_numel(a) / K : 0;
	N = q->N = q->transb ? bt->dims[0] : bt->dims[1];
	q->bias = NULL;
	q->nbias = 0;
	q->bias_node = -1;
	q->out_t = n->outputs[0];
	if (!is_mm && n->ninputs > 2 && n->inputs[2] >= 0) {
		loom_tensor *ct = loom_node_in(g, n, 2);
		if (!(q->bias = const_f(c, n, 2)))
			return "C is not a constant float tensor";
		q->nbias = loom_tensor_numel(ct);
		if (!(q->nbias == 1 || (q->nbias == N && ct->dims[ct->rank - 1] == N)))
			return "C is not per column";
	}
	if (is_mm) { /* MatMul + Add(constant [N]) */
		int s = sole_consumer(c, q->out_t);
		if (s >= 0 && !c->lo.keep[s] && !strcmp(g->nodes[s].op_type, "Add")) {
			const loom_node *ad = &g->nodes[s];
			int other = ad->inputs[0] == q->out_t ? 1 : 0;
			loom_tensor *ct = loom_node_in(g, ad, other);
			const float *cb = const_f(c, ad, other);
			if (cb && loom_tensor_numel(ct) == N && ct->dims[ct->rank - 1] == N) {
				q->bias = cb;
				q->nbias = N;
				q->bias_node = s;
				q->out_t = ad->outputs[0];
			}
		}
	}
	return NULL;
}

/* A: an activation, or the Flatten of an image (weights rows reordered;
 * each image of the batch is one row of A: rows of fh*fw pixels) */
static void gemm_flatten(cc *c, const loom_node *n, gemm_node *q)
{
	loom_graph *g = c->g;
	loom_tensor *a = loom_node_in(g, n, 0);
	int in = q->in = n->inputs[0];
	q->fh = q->fw = 1;
	q->fc = 0;
	q->flat = -1;
	if (c->prod[in] >= 0 && c->ncons[in] == 1) {
		const loom_node *p = &g->nodes[c->prod[in]];
		if ((!strcmp(p->op_type, "Flatten") || !strcmp(p->op_type, "Reshape")) && !c->lo.keep[c->prod[in]]) {
			int src = p->inputs[0];
			loom_tensor *st = &g->tensors[src];
			if (a->rank == 2 && st->rank == 4 && st->dims[0] == q->M && !c->m->mt[src].rows &&
			    !cc_geom(c, src, &q->fh, &q->fw, &q->fc) &&
			    (q->fh /= (uint32_t)q->M, (int64_t)q->fh * q->fw * q->fc == q->K) && (q->fh > 1 || q->fw > 1)) {
				q->flat = c->prod[in];
				q->in = src;
			}
		}
	}
}

/* B as [n][k] float (channel-major) with alpha folded, rows of the
 * flattened image reordered to HWC with zero rows for the padding; the bias
 * with beta folded */
static void gemm_float_weights(cc *c, const gemm_node *q, uint32_t kk, float *bn, float *bb)
{
	for (int64_t j = 0; j < q->N; j++) {
		for (int64_t k = 0; k < q->K; k++) {
			float v = q->alpha * (q->transb ? q->b[j * q->K + k] : q->b[k * q->N + j]);
			int64_t kd = k;
			if (q->flat >= 0) { /* k = ch*H*W + y*W + x  ->  (y*W + x)*stride + ch */
				int64_t ch = k / ((int64_t)q->fh * q->fw), yx = k % ((int64_t)q->fh * q->fw);
				kd = yx * c->m->mt[q->in].stride + ch;
			}
			bn[j * kk + kd] = v;
		}
		bb[j] = q->bias ? q->beta * q->bias[q->nbias == 1 ? 0 : j] : 0;
	}
}

/* the GEMM layer's parameters, plan and packed constants: NULL or why not */
static const char *gemm_layer(cc *c, int ni, const gemm_node *q, lw *l, rawout *ro, uint32_t kk, int8_t lo, int8_t hi,
			      const int8_t *wq, const int8_t *wkn, int32_t *bq, const double *sw, const float *bb)
{
	int in = q->in, out = l->out;
	int64_t N = q->N;
	int32_t *mult = bq + N, *shift = mult + N;
	const char *r = NULL;
	loom_gemm_params *p = &l->gp;
	loom_gemm_init(p);
	if (ro) {
		raw_image(c, ro);
		l->out = ro->acc;
		p->raw = 1;
	}
	p->m = (uint32_t)q->M;
	p->k = kk;
	p->n = (uint32_t)N;
	p->a_stride = q->flat >= 0 ? kk : c->m->mt[in].stride;
	p->out_stride = c->m->mt[l->out].stride;
	p->a_zp = (int8_t)c->q.zp[in], p->out_zp = (int8_t)c->q.zp[out];
	p->clip_lo = lo, p->clip_hi = hi;
	loom_gemm_to_conv(p, &l->cp);
	if (loom_plan_memo_conv(c->lo.memo, c->cfg, &l->cp, &l->cplan, c->err, c->errlen)) {
		r = cc_refused(c, "GEMM planner refused the layer");
	} else {
		l->wbytes = l->cplan.wgt_bytes;
		l->pbytes = l->cplan.param_bytes;
		l->cbuf = calloc(1, l->wbytes + l->pbytes + 1);
		if (!l->cbuf || loom_gemm_pack(c->cfg, p, wkn, ro ? NULL : bq, ro ? NULL : mult, ro ? NULL : shift,
					       l->cbuf, l->cbuf + l->wbytes, c->err, c->errlen))
			r = "packing the weights failed";
		else if (ro)
			r = raw_params(c, ro, ni, in, wq, kk, sw, q->bias ? bb : NULL);
	}
	return r;
}

const char *lower_gemm(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	gemm_node q;
	const char *r = gemm_operands(c, ni, &q);
	if (r)
		return r;
	gemm_flatten(c, n, &q);
	int in = q.in;
	int64_t N = q.N;
	r = q.flat < 0 ? set_rows(c, in) : NULL;
	if (r || (r = dev_tensor(c, in)))
		return r;
	int act;
	int out = find_act(c, q.out_t, &act);
	if ((r = set_rows(c, out)) || (r = dev_tensor(c, out)))
		return r;
	int8_t lo, hi;
	act_clip(c, act, out, &lo, &hi);
	uint32_t kk = q.flat >= 0 ? q.fh * q.fw * c->m->mt[in].stride : (uint32_t)q.K;
	float *bn = calloc((size_t)N * kk + 1, sizeof *bn);
	float *bb = calloc((size_t)N + 1, sizeof *bb);
	int8_t *wq = malloc((size_t)N * kk + 1);
	int8_t *wkn = malloc((size_t)N * kk + 1);
	int32_t *bq = malloc((size_t)N * 12 + 4);
	lw *l = NULL;
	rawout *ro = NULL;
	double *sw = NULL;
	if (!bn || !bb || !wq || !wkn || !bq) {
		r = "out of memory";
		goto out;
	}
	gemm_float_weights(c, &q, kk, bn, bb);
	if (c->o->bias_correction && q.bias) { /* --bias-correction (layers with a bias) */
		float *bfix = bias_fix_gemm(c, in, q.flat >= 0, bn, bb, N, kk, c->m->mt[in].stride);
		if (bfix)
			memcpy(bb, bfix, (size_t)N * sizeof *bb);
		free(bfix);
	}
	int32_t *mult = bq + N, *shift = mult + N;
	ro = raw_of(c, out, act);
	if (ro && !(sw = calloc((size_t)N + 1, sizeof *sw))) {
		r = "out of memory";
		goto out;
	}
	if ((r = quant_channels(c->q.scale[in], c->q.scale[out], bn, N, kk, kk, 1, q.bias ? bb : NULL, wq, bq, mult,
				shift, sw)))
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
	l->nodes[1] = q.bias_node;
	l->nodes[2] = act;
	l->nodes[3] = q.flat;
	if ((r = gemm_layer(c, ni, &q, l, ro, kk, lo, hi, wq, wkn, bq, sw, bb)))
		drop_layer(c);
out:
	free(bn);
	free(bb);
	free(wq);
	free(wkn);
	free(bq);
	free(sw);
	if (!r) {
		cc_fused(c, q.bias_node, ni, " (bias)");
		cc_fused(c, act, ni, "");
		cc_fused(c, q.flat, ni, " (weight rows in NHWC order)");
	}
	return r;
}

/* ---- channel shuffle: Reshape [1,C,H,W] -> [1,G,C/G,H,W], Transpose
 * (0,2,1,3,4), Reshape -> [1,C,H,W] is a channel permutation: a 1x1
 * convolution with weight 2 at (out k, in src(k)) and multiplier 1/2, exact ---- */
const char *lower_shuffle(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *r1 = &g->nodes[ni];
	loom_tensor *x = loom_node_in(g, r1, 0), *y1 = loom_node_out(g, r1, 0);
	if (x->rank != 4 || x->dims[0] != 1 || y1->rank != 5 || y1->dims[0] != 1 ||
	    y1->dims[1] * y1->dims[2] != x->dims[1] || y1->dims[3] != x->dims[2] || y1->dims[4] != x->dims[3])
		return "changes the NHWC byte order";
	int ti = sole_consumer(c, r1->outputs[0]);
	if (ti < 0 || c->lo.keep[ti] || strcmp(g->nodes[ti].op_type, "Transpose"))
		return "changes the NHWC byte order";
	const loom_node *tn = &g->nodes[ti];
	int np = 0;
	const int64_t *perm = loom_attr_ints(tn, "perm", &np);
	if (!perm || np != 5 || perm[0] != 0 || perm[1] != 2 || perm[2] != 1 || perm[3] != 3 || perm[4] != 4)
		return "changes the NHWC byte order";
	int r2i = sole_consumer(c, tn->outputs[0]);
	if (r2i < 0 || c->lo.keep[r2i] || strcmp(g->nodes[r2i].op_type, "Reshape"))
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
	p->in_zp = (int8_t)c->q.zp[in], p->out_zp = (int8_t)c->q.zp[out];
	r = NULL;
	if (loom_plan_memo_conv(c->lo.memo, c->cfg, p, &l->cplan, c->err, c->errlen)) {
		r = cc_refused(c, "convolution planner refused the permutation");
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
	c->lo.done[ti] = c->lo.done[r2i] = 1;
	cc_why(c, ti, LOOM_WHERE_FUSED, "into %s (channel shuffle as a 1x1 permutation convolution)", r1->name);
	cc_why(c, r2i, LOOM_WHERE_FUSED, "into %s (channel shuffle)", r1->name);
	return NULL;
}
