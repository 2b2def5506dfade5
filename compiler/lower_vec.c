/* lower_vec.c - lowering to the vector unit (compile_internal.h): pooling
 * (POOL MAX / AVG, ReduceMean over H and W), Add / Mul (ELTWISE), unary
 * functions as 256-entry tables (LUT), standalone BatchNormalization and
 * zero Pad (DWCONV). */
#include "compiler/compile_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- pooling ---- */
const char *lower_pool(cc *c, int ni)
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
	if (!max && c->q.scale[in] / ((double)c->q.scale[out] * kvol) >= 1.0) {
		/* the output grid finer than the averaged input's: widen it */
		c->q.scale[out] = (float)(c->q.scale[in] / kvol * 1.001);
		c->m->mt[out].scale = c->q.scale[out];
		p->out_zp = (int8_t)c->q.zp[out];
	}
	if (!max && loom_quant_mult(c->q.scale[in] / ((double)c->q.scale[out] * kvol), &p->mult, &p->shift)) {
		drop_layer(c);
		return "average-pool scale >= 1";
	}
	if ((r = cc_vec_plan(c, "vector-unit planner refused the pooling")))
		return r;
	int first = c->lo.nlw - 1;
	if ((r = replicate_batch(c, first, x->dims[0]))) {
		while (c->lo.nlw > first)
			drop_layer(c);
		return r;
	}
	cc_fused(c, act, ni, "");
	return NULL;
}

/* ---- Add / Mul ---- */
const char *lower_eltwise(cc *c, int ni)
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
	if (!c->lo.on_dev[a] && c->prod[a] >= 0 && (tb->is_const || (!c->lo.on_dev[b] && c->prod[b] >= 0)))
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
	p->in2_zp = (int8_t)c->q.zp[b];
	int bad = mul ? loom_quant_mult((double)c->q.scale[a] * c->q.scale[b] / c->q.scale[out], &p->mult, &p->shift)
		      : loom_quant_add(c->q.scale[a], c->q.scale[b], c->q.scale[out], p);
	if (bad) {
		drop_layer(c);
		return "requantization scale >= 1";
	}
	if ((r = cc_vec_plan(c, "vector-unit planner refused the layer")))
		return r;
	cc_fused(c, act, ni, "");
	return NULL;
}

/* ---- unary elementwise functions as a 256-entry table: the operators
 * whose row in runtime/ops.def says LUT, and Add / Mul with a constant
 * scalar; continuous, well-conditioned functions only: a steep (Log, Sqrt,
 * Reciprocal, Exp) or discontinuous (Round, Sign, ThresholdedRelu) one
 * turns the input's quantization error into large output errors; those
 * stay in float on the CPU ---- */
const char *lower_lut(cc *c, int ni)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
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
	if (!c->lo.on_dev[x] && c->prod[x] >= 0)
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
		xs[i] = c->q.scale[x] * (float)(i - 128 - c->q.zp[x]);
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
			table[i] = cc_qval(isnan(ys[i]) ? 0.0 : ys[i], c->q.scale[out], c->q.zp[out]);
	}
	loom_graph_free(t);
	if (bad)
		return "the table could not be computed";
	lw *l = vec_layer(c, ni, LOOM_LAYER_LUT, LOOM_VEC_LUT, x, out, -1);
	if (!l)
		return "out of memory";
	if ((r = cc_vec_plan(c, "vector-unit planner refused the table")))
		return r;
	l = &c->lo.lws[c->lo.nlw - 1];
	loom_vec_params *p = &l->vp;
	l->wbytes = l->vplan.const_bytes;
	l->cbuf = calloc(1, l->wbytes + 1);
	if (!l->cbuf || loom_vec_pack(c->cfg, p, NULL, NULL, NULL, NULL, table, l->cbuf, c->err, c->errlen)) {
		drop_layer(c);
		return "packing the table failed";
	}
	return NULL;
}

/* ---- standalone BatchNormalization: a depthwise 1x1 convolution ---- */
const char *lower_bn(cc *c, int ni)
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

/* ---- Pad with zeros of H and W: a 1x1 depthwise convolution of weight 1
 * with the node's padding (the vector unit's padded copy; exact) ---- */
const char *lower_pad(cc *c, int ni)
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
	if (pt > 255 || pl > 255 || pb > 255 || pr > 255)
		return "more than 255 pads on an axis";
	int in = n->inputs[0];
	const char *r = img_tensor(c, in);
	if (r)
		return r;
	quant_copy(c, n->outputs[0], in);
	return pad_layer(c, ni, in, -1, pt, pb, pl, pr);
}

const char *pad_layer(cc *c, int ni, int in, int out, int64_t pt, int64_t pb, int64_t pl, int64_t pr)
{
	int64_t ch = c->g->tensors[in].dims[1];
	float *w = malloc((size_t)(ch + 1) * sizeof *w);
	if (!w)
		return "out of memory";
	for (int64_t k = 0; k < ch; k++)
		w[k] = 1.0f;
	struct loom_cpu_geo geo;
	memset(&geo, 0, sizeof geo);
	for (int i = 0; i < 3; i++)
		geo.k[i] = geo.s[i] = geo.d[i] = 1;
	geo.pb[1] = pt, geo.pe[1] = pb, geo.pb[2] = pl, geo.pe[2] = pr;
	const char *r = conv_layer(c, ni, in, out, 0, w, NULL, ch, 1, ch, &geo);
	free(w);
	return r;
}

/* ---- ReduceMean over the spatial axes: global average pooling ---- */
const char *lower_reducemean(cc *c, int ni)
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
	if (loom_quant_mult(c->q.scale[in] / ((double)c->q.scale[out] * p->kh * p->kw), &p->mult, &p->shift)) {
		drop_layer(c);
		return "average scale >= 1";
	}
	return cc_vec_plan(c, "vector-unit planner refused the pooling");
}
