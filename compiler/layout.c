/* layout.c - device tensors and layers for the lowerings (compile_internal.h):
 * a tensor's device image (NHWC with 4-byte channel stride, or the row
 * layout), new layers and their batch replicas, fused activations as the
 * output clamp, vector-layer setup, constants in the const region. */
#include "compiler/compile_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the device image of a tensor; 0 or -1 */
int cc_geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch)
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
const char *dev_tensor(cc *c, int t)
{
	loom_tensor *x = &c->g->tensors[t];
	if (x->dtype != LOOM_DT_FLOAT)
		return "not a float tensor";
	loom_mtensor *mt = &c->m->mt[t];
	if (!mt->h) {
		if (cc_geom(c, t, &mt->h, &mt->w, &mt->c))
			return "no NHWC image for this shape (batch > 1 or rank > 4)";
		if (!mt->c || !mt->h || !mt->w)
			return "empty tensor";
		mt->stride = round4(mt->c);
	}
	if (quant_of(c, t))
		return x->is_const ? "constant with non-finite values" : "no calibration range (never computed)";
	mt->scale = c->q.scale[t];
	mt->zp = c->q.zp[t];
	return NULL;
}

/* The row layout of a tensor of rank >= 3 (mt->rows): h = the product of
 * the leading dims, w = dims[rank-2], c = dims[rank-1]. */
int rows_geom(cc *c, int t, uint32_t *h, uint32_t *w, uint32_t *ch)
{
	loom_tensor *x = &c->g->tensors[t];
	uint64_t hh = 1;
	if (x->rank < 3)
		return cc_geom(c, t, h, w, ch);
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

/* Give t (rank >= 3) the row layout before its device image is fixed:
 * NULL, or why not (it is an [N,C,H,W] image already). */
const char *set_rows(cc *c, int t)
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
const char *follow_layout(cc *c, int t, int like)
{
	if (!c->m->mt[like].rows || c->g->tensors[t].rank < 3)
		return NULL;
	const loom_tensor *a = &c->g->tensors[t], *b = &c->g->tensors[like];
	if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
		return NULL; /* a broadcast operand: checked by the caller */
	return set_rows(c, t);
}

/* an input of a windowed or channel layer: an [N,C,H,W] image */
const char *img_tensor(cc *c, int t)
{
	if (c->m->mt[t].rows)
		return "a row-layout tensor (a MatMul's) read as an image";
	return dev_tensor(c, t);
}

/* ------------------------------------------------------------------ layers */

lw *new_layer(cc *c, int kind, int node)
{
	if (c->lo.nlw == c->lo.caplw) {
		int cap = c->lo.caplw ? 2 * c->lo.caplw : 32;
		lw *p = realloc(c->lo.lws, (size_t)cap * sizeof *p);
		if (!p)
			return NULL;
		c->lo.lws = p;
		c->lo.caplw = cap;
	}
	lw *l = &c->lo.lws[c->lo.nlw++];
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

void drop_layer(cc *c)
{
	free(c->lo.lws[c->lo.nlw - 1].cbuf);
	c->lo.nlw--;
}

/* a layer for each further image of a batch: the same program shape at
 * the next image's offsets, sharing the first layer's constants */
const char *replicate_batch(cc *c, int first, int64_t n)
{
	for (int64_t i = 1; i < n; i++) {
		lw *l = new_layer(c, c->lo.lws[first].kind, c->lo.lws[first].node);
		if (!l)
			return "out of memory";
		lw *f = &c->lo.lws[first];
		*l = *f;
		l->cbuf = NULL; /* wbytes, pbytes kept: the offsets of the shared constants */
		l->const_of = first;
		int vec = f->kind != LOOM_LAYER_CONV && f->kind != LOOM_LAYER_GEMM;
		uint64_t ib = vec ? (uint64_t)f->vp.h * f->vp.w * f->vp.in_stride
				  : (uint64_t)f->cp.h * f->cp.w * c->m->mt[f->in[0]].stride;
		/* a flat plan's oh, ow are its flat view's: an elementwise output is as its input */
		uint64_t ob = vec ? (f->vplan.flat ? (uint64_t)f->vp.h * f->vp.w : (uint64_t)f->vplan.oh * f->vplan.ow) *
					    c->m->mt[f->out].stride
				  : (uint64_t)f->cplan.oh * f->cplan.ow * c->m->mt[f->out].stride;
		l->in_off = (uint64_t)i * ib;
		l->out_off = (uint64_t)i * ob;
	}
	return NULL;
}

/* the node reading tensor t when it has exactly one reader and is not a graph output */
int sole_consumer(cc *c, int t)
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

const float *const_f(cc *c, const loom_node *n, int i)
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
int find_act(cc *c, int t, int *act)
{
	*act = -1;
	int s = sole_consumer(c, t);
	if (s < 0 || c->lo.keep[s] || c->lo.done[s])
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

void act_clip(cc *c, int act, int out, int8_t *lo, int8_t *hi)
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
		*lo = cc_qval(fl, c->q.scale[out], c->q.zp[out]);
	if (fh < INFINITY)
		*hi = cc_qval(fh, c->q.scale[out], c->q.zp[out]);
}

/* A vector-unit layer of node ni from image `in` to image `out` with the
 * fields every kind shares (whole images, strides, zero points, the clamp
 * of the fused activation act); the caller sets the rest, then vec_plan.
 * NULL when out of memory. */
lw *vec_layer(cc *c, int ni, int lkind, int vkind, int in, int out, int act)
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
	p->in_zp = (int8_t)c->q.zp[in], p->out_zp = (int8_t)c->q.zp[out];
	act_clip(c, act, out, &p->clip_lo, &p->clip_hi);
	return l;
}

/* Plan the last layer (made by vec_layer); when the planner refuses it the
 * layer is dropped and why is returned. */
const char *cc_vec_plan(cc *c, const char *why)
{
	lw *l = &c->lo.lws[c->lo.nlw - 1];
	/* tensors are 64-byte aligned: a slice's offset is its rows' alignment */
	l->vp.in_align = (uint32_t)(l->in_off % 64);
	l->vp.out_align = (uint32_t)(l->out_off % 64);
	/* nothing between pixels: the planner may see the bytes flat */
	const loom_vec_params *p = &l->vp;
	uint32_t st = round4(p->c);
	l->vp.flat = p->in_stride == st && p->out_stride == st &&
		     (p->kind != LOOM_VEC_ELTWISE || p->bcast != LOOM_BCAST_NONE || p->in2_stride == st);
	if (!loom_plan_memo_vec(c->lo.memo, c->cfg, &l->vp, &l->vplan, c->err, c->errlen))
		return NULL;
	drop_layer(c);
	return why;
}

/* bytes more of the const region, 64-byte aligned and zeroed: the offset,
 * or -1 when out of memory */
int64_t const_alloc(cc *c, uint64_t bytes)
{
	uint64_t off = align64(c->pl.cbytes);
	if (off + bytes > c->pl.ccap) {
		uint64_t cap = (off + bytes) * 2 + 4096;
		uint8_t *p = realloc(c->pl.cregion, cap);
		if (!p)
			return -1;
		memset(p + c->pl.ccap, 0, cap - c->pl.ccap);
		c->pl.cregion = p;
		c->pl.ccap = cap;
	}
	c->pl.cbytes = off + bytes;
	return (int64_t)off;
}

/* a constant operand placed in the const region as a device image */
const char *const_dev(cc *c, int t, int per_channel_of)
{
	loom_mtensor *mt = &c->m->mt[t];
	if (c->lo.is_cdev[t])
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
	mt->scale = c->q.scale[t];
	mt->zp = c->q.zp[t];
	uint64_t bytes = (uint64_t)mt->h * mt->w * mt->stride;
	int64_t off = const_alloc(c, bytes);
	if (off < 0)
		return "out of memory";
	loom_mt_quantize(x, mt, x->data, (int8_t *)(c->pl.cregion + off));
	mt->addr = (uint64_t)off; /* relative until the layout is fixed */
	c->lo.is_cdev[t] = 1;
	mt->dev = 1;
	return NULL;
}

/* constant int64 values of input i (opset >= 10 Slice, >= 13 ReduceMean
 * axes) or of attribute name; count or -1 */
int const_ints(cc *c, const loom_node *n, int i, const char *name, int64_t *v, int max)
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
const char *copy_layer(cc *c, int ni, int in, int out, uint32_t ch0, uint32_t nch)
{
	if (ch0 % 4)
		return "a channel slice not at a multiple of 4 channels";
	lw *l = vec_layer(c, ni, LOOM_LAYER_POOL, LOOM_VEC_POOL, in, out, -1);
	if (!l)
		return "out of memory";
	l->in_off = ch0;
	l->vp.func = LOOM_POOL_MAX;
	l->vp.c = nch;
	return cc_vec_plan(c, "vector-unit planner refused the copy");
}
