/* lower_shape.c - lowering of data movement (compile_internal.h): Concat
 * and Slice along channels (POOL 1x1 copies), and layout-only nodes
 * (Flatten, Reshape, Squeeze, Unsqueeze) as aliases of their input's
 * device image, and the Transposes that move channels last or back
 * (an [N,C,H,W] image and its [N,H,W,C] in the row layout are the same
 * bytes: ConvNeXt's and the vision transformers' NCHW <-> NHWC). */
#include "compiler/compile_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Concat along channels: one copy per input ---- */
const char *lower_concat(cc *c, int ni)
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
	if (!c->q.hasq[out] && loom_calib_range(c->q.calib, out, &lo, &hi))
		return "no calibration range (never computed)";
	for (int i = 0; i < n->ninputs; i++) {
		int t = n->inputs[i];
		if (t < 0 || g->tensors[t].is_const)
			return "constant input";
		if ((r = img_tensor(c, t)))
			return r;
		/* the output covers what every input can represent: copies only shrink */
		float ilo = c->q.scale[t] * (float)(-128 - c->q.zp[t]), ihi = c->q.scale[t] * (float)(127 - c->q.zp[t]);
		lo = ilo < lo ? ilo : lo;
		hi = ihi > hi ? ihi : hi;
	}
	if (!c->q.hasq[out]) {
		qparams_from_range(lo, hi, &c->q.scale[out], &c->q.zp[out]);
		c->q.hasq[out] = 1;
	}
	if ((r = dev_tensor(c, out)))
		return r;
	uint32_t off = 0;
	int first = c->lo.nlw;
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
		if (mi->scale == c->q.scale[out] && mi->zp == c->q.zp[out]) {
			p->func = LOOM_POOL_MAX;
		} else {
			p->func = LOOM_POOL_AVG;
			if (loom_quant_mult((double)mi->scale / c->q.scale[out], &p->mult, &p->shift)) {
				r = "rescaling an input: scale ratio >= 1";
				break;
			}
		}
		if (mi->c % 4 && i + 1 < n->ninputs) {
			r = "a channel slice not at a multiple of 4 channels";
			break;
		}
		if ((r = cc_vec_plan(c, "vector-unit planner refused the copy")))
			break;
		off += mi->c;
	}
	if (r)
		while (c->lo.nlw > first)
			drop_layer(c);
	return r;
}

/* ---- Slice of channels ---- */
const char *lower_slice(cc *c, int ni)
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

/* the alias of out to in, whose device images are the same bytes, out in
 * the row layout or not; NULL or why not */
static const char *alias_from(cc *c, int in)
{
	if (!c->lo.on_dev[in] && !c->lo.on_host[in])
		return "input not available";
	if (!c->lo.on_dev[in]) /* nothing gained: keep it on the CPU */
		return "input is on the host";
	return NULL;
}

static const char *alias_to(cc *c, int in, int out, int out_rows)
{
	if (c->g->tensors[out].dtype != LOOM_DT_FLOAT)
		return "not float";
	const char *r = alias_from(c, in);
	if (r || (r = dev_tensor(c, in)))
		return r;
	int root = c->lo.alias[in] >= 0 ? c->lo.alias[in] : in;
	c->lo.alias[out] = root;
	quant_copy(c, out, in);
	c->m->mt[out] = c->m->mt[in];
	c->m->mt[out].rows = out_rows;
	return NULL;
}

/* Transpose of rank 3 or 4 that moves the channels last (perm (0,2,1) or
 * (0,2,3,1)) of an image, or first ((0,2,1) or (0,3,1,2)) of a row-layout
 * tensor: the image [N,C,H,W] is h = N*H, w = W, c = C, and so is
 * [N,H,W,C] in rows (the rank-3 [N,C,L] and [N,L,C] likewise) */
static const char *lower_transpose(cc *c, int in, int out, const loom_node *n)
{
	const loom_tensor *x = &c->g->tensors[in];
	int np = 0, r = x->rank;
	const int64_t *perm = loom_attr_ints(n, "perm", &np);
	static const int64_t last3[] = {0, 2, 1}, last4[] = {0, 2, 3, 1}, first4[] = {0, 3, 1, 2};
	int in_rows = row_major(c, in);
	const int64_t *want = r == 3 ? last3 : in_rows ? first4 : last4;
	const char *why = alias_from(c, in); /* the input's layout is known */
	if (why)
		return why;
	if ((r != 3 && r != 4) || !perm || np != r || memcmp(perm, want, sizeof *perm * (size_t)r))
		return "not a move of the channels between an image and the row layout (perm (0,2,3,1), (0,3,1,2) "
		       "or (0,2,1) of rank 3 or 4)";
	uint32_t h1, w1, c1, h2, w2, c2;
	if ((in_rows ? rows_geom(c, in, &h1, &w1, &c1) : cc_geom(c, in, &h1, &w1, &c1)) ||
	    (in_rows ? cc_geom(c, out, &h2, &w2, &c2) : rows_geom(c, out, &h2, &w2, &c2)) || h1 != h2 || w1 != w2 ||
	    c1 != c2)
		return "no NHWC image for this shape";
	return alias_to(c, in, out, !in_rows);
}

/* ---- layout-only nodes: an alias when the device image is the same ---- */
const char *lower_alias(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	int in = n->inputs[0], out = n->outputs[0];
	uint32_t h1, w1, c1, h2, w2, c2;
	if (c->g->tensors[in].is_const)
		return "constant input";
	if (!strcmp(n->op_type, "Transpose"))
		return lower_transpose(c, in, out, n);
	/* the same bytes: both row-major (rank <= 2 or rows) or both images with
	 * the same geometry, or a single pixel per row (e.g. [1,C,1,1] -> [1,C]) */
	int in_rows = row_major(c, in), out_rank = c->g->tensors[out].rank;
	if ((in_rows ? rows_geom(c, in, &h1, &w1, &c1) : cc_geom(c, in, &h1, &w1, &c1)) ||
	    (in_rows ? rows_geom(c, out, &h2, &w2, &c2) : cc_geom(c, out, &h2, &w2, &c2)))
		return "no NHWC image for this shape";
	if (!in_rows && out_rank < 3 && (h1 != 1 || w1 != 1))
		h2 = 0; /* an image read as rows: another byte order */
	if (h1 != h2 || w1 != w2 || c1 != c2) {
		/* a Flatten into a Gemm / MatMul: the consumer reads the image
		 * itself with its weight rows reordered (lower_gemm); deferred
		 * until it is lowered (materialized on the CPU if it is not) */
		int s = sole_consumer(c, out);
		const loom_node *u = s >= 0 ? &c->g->nodes[s] : NULL;
		if (u && !c->lo.keep[s] && c->lo.on_dev[in] && u->inputs[0] == out &&
		    (!strcmp(u->op_type, "Gemm") || !strcmp(u->op_type, "MatMul"))) {
			c->lo.deferred[ni] = 1;
			return NULL;
		}
		return "changes the NHWC byte order";
	}
	return alias_to(c, in, out, in_rows && out_rank >= 3);
}
