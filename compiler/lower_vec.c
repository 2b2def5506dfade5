/* lower_vec.c - lowering to the vector unit (compile_internal.h): pooling
 * (POOL MAX / AVG, ReduceMean over H and W), Add / Mul (ELTWISE), unary
 * functions as 256-entry tables (LUT; one table for a region of such
 * nodes computing a function of one activation), standalone BatchNormalization and
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

/* ---- 256-entry tables (LUT) ---- */

/* node n of g into t, the table's graph, reading ins[0..k) and writing o,
 * with its attributes; 0, or -1 */
static int copy_node(loom_graph *t, const loom_node *n, const int *ins, int k, int o)
{
	int nn = loom_graph_add_node(t, n->op_type, n->name, ins, k, &o, 1);
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
	return bad ? -1 : 0;
}

/* the table of out as a function of x through the nodes mem[0..nm) (in
 * topological order, the last one writing out; at most LUT_NODES, each
 * reading x, the earlier ones' outputs and scalar constants): the nodes'
 * own CPU kernels run on the 256 dequantized values of x (entry i: the
 * int8 input i - 128), quantized as out; 0, or -1 */
#define LUT_NODES 32
static int lut_table(cc *c, int x, int out, const int *mem, int nm, int8_t *table)
{
	loom_graph *g = c->g, *t = loom_graph_new(g->opset, "lut");
	if (!t)
		return -1;
	int64_t nent = LOOM_LUT_ENTRIES;
	float xs[LOOM_LUT_ENTRIES];
	for (int i = 0; i < LOOM_LUT_ENTRIES; i++)
		xs[i] = c->q.scale[x] * (float)(i - 128 - c->q.zp[x]);
	/* g's tensors and their copies in t: x, the nodes' outputs, constants */
	int from[LUT_NODES * 9 + 1], to[LUT_NODES * 9 + 1], nmap = 0, o = -1, bad = nm > LUT_NODES;
	from[nmap] = x;
	to[nmap++] = o = loom_graph_add_tensor(t, "x", LOOM_DT_FLOAT, 1, &nent, NULL, 0);
	bad |= o < 0 || loom_graph_add_input(t, o) || loom_tensor_set_data(&t->tensors[o], xs, sizeof xs);
	for (int m = 0; !bad && m < nm; m++) {
		const loom_node *n = &g->nodes[mem[m]];
		int ins[8], k = 0;
		for (int i = 0; i < n->ninputs && i < 8; i++) {
			int ti = n->inputs[i], j = 0;
			while (ti >= 0 && j < nmap && from[j] != ti)
				j++;
			if (ti < 0 || j < nmap) {
				ins[k++] = ti < 0 ? -1 : to[j];
				continue;
			}
			loom_tensor *ct = &g->tensors[ti]; /* a constant */
			from[nmap] = ti;
			ins[k++] = to[nmap++] = loom_graph_add_tensor(t, ct->name, ct->dtype, ct->rank, ct->dims, ct->data, 1);
		}
		o = loom_graph_add_tensor(t, g->tensors[n->outputs[0]].name, LOOM_DT_FLOAT, 1, &nent, NULL, 0);
		from[nmap] = n->outputs[0];
		to[nmap++] = o;
		bad = o < 0 || copy_node(t, n, ins, k, o);
	}
	char e2[256];
	bad = bad || loom_graph_add_output(t, o) || loom_ref_run(t, e2, sizeof e2);
	if (!bad) {
		const float *ys = t->tensors[o].data;
		for (int i = 0; i < LOOM_LUT_ENTRIES; i++)
			table[i] = cc_qval(isnan(ys[i]) ? 0.0 : ys[i], c->q.scale[out], c->q.zp[out]);
	}
	loom_graph_free(t);
	return bad ? -1 : 0;
}

/* the LUT layer of node ni: out as a function of x through mem[0..nm) */
static const char *lut_layer(cc *c, int ni, int x, int out, const int *mem, int nm)
{
	const char *r = dev_tensor(c, x);
	if (r)
		return r;
	if ((r = follow_layout(c, out, x)) || (r = dev_tensor(c, out)))
		return r;
	int8_t table[LOOM_LUT_ENTRIES];
	if (lut_table(c, x, out, mem, nm, table))
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
	return lut_layer(c, ni, x, n->outputs[0], &ni, 1);
}

/* ---- elementwise regions: one table for a function of one activation x
 * written as several nodes (SiLU x * Sigmoid(x), HardSwish x *
 * HardSigmoid(x), GELU x * 0.5 * (1 + Erf(x / sqrt 2)), Mish x *
 * Tanh(Softplus(x)), ...): nodes of the LUT and Add / Mul families whose
 * operands are x, the region's own tensors or scalar constants (a Div's
 * divisor a constant), all of x's shape, whose inner tensors nothing else
 * reads. One rounding instead of one per node, and one pass over the
 * tensor instead of one per node. ---- */

/* node ni may be in a region making tensors of shape y */
static int ew_ok(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	if (n->domain[0] || n->noutputs != 1 || n->outputs[0] < 0 || n->ninputs > 8 || c->lo.keep[ni] ||
	    c->lo.done[ni])
		return 0;
	const loom_cpu_op *op = loom_cpu_op_any(n->op_type);
	if (!op || (op->npu != LOOM_NPU_LUT && op->npu != LOOM_NPU_ADDMUL))
		return 0;
	const loom_tensor *y = &c->g->tensors[n->outputs[0]];
	if (y->dtype != LOOM_DT_FLOAT)
		return 0;
	for (int i = 0; i < n->ninputs; i++) {
		int t = n->inputs[i];
		if (t < 0)
			continue;
		const loom_tensor *x = &c->g->tensors[t];
		if (x->is_const) {
			if (loom_tensor_numel(x) != 1 || !x->data)
				return 0;
		} else if ((i && !strcmp(n->op_type, "Div")) || x->dtype != LOOM_DT_FLOAT || x->rank != y->rank ||
			   memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)y->rank)) {
			return 0;
		}
	}
	return 1;
}

static int in_set(const int *s, int n, int v)
{
	for (int i = 0; i < n; i++)
		if (s[i] == v)
			return 1;
	return 0;
}

/* the nodes that may be in a region ending at node r that reads stop (a
 * tensor, or -1) from outside: every producer upwards from r but stop's,
 * without those whose output is read outside (or is a graph output), into
 * mem (topological order, r last); their count if they read one activation
 * from outside (*x), else 0 */
/* r and every producer upwards from it that may be in a region (ew_ok),
 * not growing through tensor stop (-1: none), into mem; their count */
static int ew_closure(cc *c, int r, int stop, int *mem)
{
	int nm = 0;
	mem[nm++] = r;
	for (int q = 0; q < nm; q++) {
		const loom_node *n = &c->g->nodes[mem[q]];
		for (int i = 0; i < n->ninputs; i++) {
			int t = n->inputs[i], p = t >= 0 && t != stop ? c->prod[t] : -1;
			if (p >= 0 && nm < LUT_NODES && !in_set(mem, nm, p) && ew_ok(c, p))
				mem[nm++] = p;
		}
	}
	return nm;
}

static int ew_grow(cc *c, int r, int stop, int *mem, int *x)
{
	const loom_graph *g = c->g;
	int nm = ew_closure(c, r, stop, mem);
	for (int q = 1; q < nm;) {
		int t = g->nodes[mem[q]].outputs[0], reads = 0;
		for (int k = 0; k < nm; k++)
			for (int i = 0; i < g->nodes[mem[k]].ninputs; i++)
				reads += g->nodes[mem[k]].inputs[i] == t;
		if (reads != c->ncons[t]) {
			mem[q] = mem[--nm];
			q = 1;
		} else {
			q++;
		}
	}
	*x = -1;
	for (int k = 0; k < nm; k++) {
		const loom_node *n = &g->nodes[mem[k]];
		for (int i = 0; i < n->ninputs; i++) {
			int t = n->inputs[i];
			if (t < 0 || g->tensors[t].is_const || (c->prod[t] >= 0 && in_set(mem, nm, c->prod[t])))
				continue;
			if (*x >= 0 && *x != t)
				return 0;
			*x = t;
		}
	}
	for (int i = 1; i < nm; i++) /* topological order: the nodes' order */
		for (int k = i; k > 0 && mem[k - 1] > mem[k]; k--) {
			int v = mem[k];
			mem[k] = mem[k - 1];
			mem[k - 1] = v;
		}
	return *x >= 0 ? nm : 0;
}

/* the largest region of two or more nodes ending at node r: its nodes in
 * mem, the activation it reads in *x; the node count, or 0. Its input is
 * the one tensor where the growth upwards stops: tried are none (as far
 * as the nodes allow) and every tensor the nodes that may be in it read */
static int ew_region(cc *c, int r, int *mem, int *x)
{
	int all[LUT_NODES], cand[LUT_NODES * 8 + 1], nc = 0, best = 0, m2[LUT_NODES], x2;
	int na = ew_closure(c, r, -1, all);
	cand[nc++] = -1; /* no stop: as far as the nodes allow */
	for (int q = 0; q < na; q++)
		for (int i = 0; i < c->g->nodes[all[q]].ninputs; i++) {
			int t = c->g->nodes[all[q]].inputs[i];
			if (t >= 0 && !c->g->tensors[t].is_const && !in_set(cand, nc, t))
				cand[nc++] = t;
		}
	for (int k = 0; k < nc; k++) {
		int n2 = ew_grow(c, r, cand[k], m2, &x2);
		if (n2 > best) {
			memcpy(mem, m2, sizeof(int) * (size_t)n2);
			*x = x2;
			best = n2;
		}
	}
	return best >= 2 ? best : 0;
}

/* Before the lowering: each region, the latest first; its nodes but the
 * last are fused into it (lo.ewroot: the last node + 1) */
void find_ew_regions(cc *c)
{
	int mem[LUT_NODES], x;
	for (int ni = c->nn - 1; ni >= 0; ni--) {
		if (c->lo.ewroot[ni] || !ew_ok(c, ni))
			continue;
		int nm = ew_region(c, ni, mem, &x);
		for (int k = 0; k < nm; k++) {
			c->lo.ewroot[mem[k]] = ni + 1;
			if (mem[k] != ni) {
				c->lo.deferred[mem[k]] = 1;
				cc_fused(c, mem[k], ni, " (one table)");
			}
		}
	}
}

/* the last node of a region: one LUT */
const char *lower_lut_region(cc *c, int ni)
{
	int mem[LUT_NODES], nm = 0, x = -1;
	for (int k = 0; k <= ni && nm < LUT_NODES; k++)
		if (c->lo.ewroot[k] == ni + 1)
			mem[nm++] = k;
	for (int k = 0; k < nm; k++) {
		const loom_node *n = &c->g->nodes[mem[k]];
		for (int i = 0; i < n->ninputs; i++) {
			int t = n->inputs[i];
			if (t >= 0 && !c->g->tensors[t].is_const && !(c->prod[t] >= 0 && c->lo.ewroot[c->prod[t]] == ni + 1))
				x = t;
		}
	}
	if (x < 0 || !is_float_act(c, x))
		return "no float activation input";
	if (!c->lo.on_dev[x] && c->prod[x] >= 0)
		return "input is computed on the CPU (nothing gained on the NPU)";
	return lut_layer(c, ni, x, c->g->nodes[ni].outputs[0], mem, nm);
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
