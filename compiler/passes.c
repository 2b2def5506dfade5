/* passes.c - Loom's graph passes (compiler/passes.h): constant folding
 * (through loom_graph_infer, which evaluates nodes whose inputs are all
 * constant), Identity / inference Dropout removal, dead-node elimination,
 * BatchNormalization folding into Conv / Gemm / MatMul + Add, Conv kernels
 * trimmed of taps that read only padding, and fusion annotations.
 *
 * Nodes are removed by marking them and compacting g->nodes (order kept,
 * so the graph stays topologically sorted); tensors are never removed, so
 * every tensor index stays valid. New initializers (folded weights) are
 * appended to g->tensors. No global state. */
#include "compiler/passes.h"
#include "runtime/cpu_ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void loom_pass_stats_free(loom_pass_stats *st)
{
	if (!st)
		return;
	free(st->fusions);
	st->fusions = NULL;
	st->nfusions = 0;
}

/* ------------------------------------------------------------------ helpers */

static int is_op(const loom_node *n, const char *op)
{
	return (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op);
}

/* Remove the nodes with dead[i] set, keeping the order; returns how many. */
static int remove_nodes(loom_graph *g, const char *dead)
{
	int k = 0, removed = 0;
	for (int i = 0; i < g->nnodes; i++) {
		if (dead[i]) {
			loom_node_clear(&g->nodes[i]);
			removed++;
			continue;
		}
		if (k != i)
			g->nodes[k] = g->nodes[i];
		k++;
	}
	g->nnodes = k;
	return removed;
}

static int is_graph_output(const loom_graph *g, int t)
{
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == t)
			return 1;
	return 0;
}

static int is_graph_input(const loom_graph *g, int t)
{
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i] == t)
			return 1;
	return 0;
}

/* how many node inputs read tensor t */
static int use_count(const loom_graph *g, int t)
{
	int c = 0;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			c += g->nodes[i].inputs[j] == t;
	return c;
}

/* the single node reading t (-1 if none or several, or t is a graph output) */
static int sole_consumer(const loom_graph *g, int t)
{
	int who = -1;
	if (t < 0 || is_graph_output(g, t))
		return -1;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] == t) {
				if (who >= 0 && who != i)
					return -1;
				who = i;
			}
	return who;
}

/* the node writing t, -1 if none */
static int producer(const loom_graph *g, int t, int *slot)
{
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] == t) {
				if (slot)
					*slot = j;
				return i;
			}
	return -1;
}

static void replace_uses(loom_graph *g, int from, int to)
{
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] == from)
				g->nodes[i].inputs[j] = to;
}

static const loom_tensor *const_float(loom_graph *g, const loom_node *n, int i)
{
	const loom_tensor *t = loom_node_in(g, n, i);
	if (!t || !t->is_const || !t->data || t->dtype != LOOM_DT_FLOAT)
		return NULL;
	return t;
}

/* Append a float initializer "<base>" (made unique) of shape like; its data
 * is copied from vals. Returns its index or -1. */
static int add_const_float(loom_graph *g, const char *base, int rank, const int64_t *dims, const float *vals)
{
	char name[512];
	snprintf(name, sizeof name, "%s", base);
	for (int k = 1; loom_graph_find(g, name) >= 0; k++)
		snprintf(name, sizeof name, "%s_%d", base, k);
	return loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, rank, dims, vals, 1);
}

/* ------------------------------------------------------------------ 1. constant folding */

int loom_pass_fold_constants(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	char *dead;
	int removed;
	if (loom_graph_infer(g, err, errlen))
		return -1;
	dead = calloc((size_t)g->nnodes + 1, 1);
	if (!dead)
		return fail(err, errlen, "constant folding: out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		int all = n->noutputs > 0;
		if (!strncmp(n->op_type, "Random", 6) || is_op(n, "Multinomial"))
			continue;
		for (int j = 0; j < n->noutputs; j++) {
			const loom_tensor *t = loom_node_out(g, n, j);
			if (t && (!t->is_const || !t->data))
				all = 0;
		}
		dead[i] = (char)all;
	}
	removed = remove_nodes(g, dead);
	free(dead);
	if (st)
		st->folded += removed;
	return 0;
}

/* ------------------------------------------------------------------ 2. Identity / Dropout */

/* an Identity, or a Dropout in inference mode whose mask nobody uses */
static int removable_identity(loom_graph *g, const loom_node *n)
{
	if (n->ninputs < 1 || n->inputs[0] < 0 || n->noutputs < 1)
		return 0;
	if (is_op(n, "Identity"))
		return n->noutputs == 1;
	if (!is_op(n, "Dropout"))
		return 0;
	if (g->opset >= 12 && n->ninputs > 2 && n->inputs[2] >= 0) {
		const loom_tensor *tm = loom_node_in(g, n, 2);
		if (!tm || !tm->is_const || !tm->data || loom_tensor_numel(tm) != 1 || tm->dtype != LOOM_DT_BOOL ||
		    *(const uint8_t *)tm->data)
			return 0;
	}
	if (g->opset < 7 && loom_attr_int(n, "is_test", 0) == 0)
		return 0;
	for (int j = 1; j < n->noutputs; j++) {
		int t = n->outputs[j];
		if (t >= 0 && (is_graph_output(g, t) || use_count(g, t)))
			return 0;
	}
	return 1;
}

int loom_pass_remove_identity(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	char *dead = calloc((size_t)g->nnodes + 1, 1);
	int removed, kept = 0;
	if (!dead)
		return fail(err, errlen, "Identity removal: out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		int x, y, p, slot = 0;
		if (!removable_identity(g, n))
			continue;
		x = n->inputs[0];
		y = n->outputs[0];
		if (x < 0 || x >= g->ntensors || y < 0 || y >= g->ntensors) {
			free(dead);
			return fail(err, errlen, "node '%s' (%s): tensor index out of range", n->name, n->op_type);
		}
		if (!is_graph_output(g, y)) {
			replace_uses(g, y, x);
			dead[i] = 1;
			continue;
		}
		/* y is a graph output: make x's producer write y */
		p = producer(g, x, &slot);
		if (p < 0 || p >= i || dead[p] || is_graph_output(g, x) || is_graph_input(g, x) ||
		    g->tensors[x].is_const) {
			kept++;
			continue;
		}
		g->nodes[p].outputs[slot] = y;
		replace_uses(g, x, y);
		dead[i] = 1;
	}
	removed = remove_nodes(g, dead);
	free(dead);
	if (st) {
		st->identities_removed += removed;
		st->identities_kept += kept;
	}
	return 0;
}

/* ------------------------------------------------------------------ 3. dead nodes */

int loom_pass_dead_nodes(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	char *live = calloc((size_t)g->ntensors + 1, 1);
	char *dead = calloc((size_t)g->nnodes + 1, 1);
	int removed;
	if (!live || !dead) {
		free(live);
		free(dead);
		return fail(err, errlen, "dead-node elimination: out of memory");
	}
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] >= 0 && g->outputs[i] < g->ntensors)
			live[g->outputs[i]] = 1;
	for (int i = g->nnodes - 1; i >= 0; i--) {
		const loom_node *n = &g->nodes[i];
		int used = 0;
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0 && n->outputs[j] < g->ntensors && live[n->outputs[j]])
				used = 1;
		if (!used) {
			dead[i] = 1;
			continue;
		}
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= g->ntensors) {
				free(live);
				free(dead);
				return fail(err, errlen, "node '%s' (%s): input %d is tensor %d of %d", n->name,
					    n->op_type, j, t, g->ntensors);
			}
			if (t >= 0)
				live[t] = 1;
		}
	}
	removed = remove_nodes(g, dead);
	free(live);
	free(dead);
	if (st)
		st->dead_removed += removed;
	return 0;
}

/* ------------------------------------------------------------------ 4. BatchNormalization folding */

/* the BN's per-channel scale s and shift (beta - mean * s) in double, for C
 * channels; 0, or 1 when the BN cannot be folded */
static int bn_params(loom_graph *g, const loom_node *bn, int64_t C, double *s, double *mean, double *beta)
{
	const loom_tensor *p[4];
	double eps = loom_attr_float(bn, "epsilon", 1e-5f);
	if (bn->ninputs < 5 || loom_attr_int(bn, "training_mode", 0) || !loom_attr_int(bn, "is_test", 1) ||
	    loom_attr_int(bn, "spatial", 1) != 1)
		return 1;
	for (int j = 1; j < bn->noutputs; j++) /* training outputs: their presence means training mode */
		if (bn->outputs[j] >= 0)
			return 1;
	for (int k = 0; k < 4; k++) {
		p[k] = const_float(g, bn, k + 1);
		if (!p[k] || loom_tensor_numel(p[k]) != C)
			return 1;
	}
	for (int64_t c = 0; c < C; c++) {
		const double gam = ((const float *)p[0]->data)[c];
		const double var = ((const float *)p[3]->data)[c];
		s[c] = gam / sqrt(var + eps);
		beta[c] = ((const float *)p[1]->data)[c];
		mean[c] = ((const float *)p[2]->data)[c];
	}
	return 0;
}

/* The per-channel scale s, mean and beta (the fold makes (x - mean) * s +
 * beta) of node bi for C channels along axis ax of its producer's output
 * of rank r: a BatchNormalization (channels on axis 1), or a Mul by a
 * constant that is a scalar or varies along one axis only (mean = beta =
 * 0: layer scale, a folded normalization's gamma). perm: the Transpose
 * between the producer and the Mul (output axis a is its input's perm[a]),
 * NULL none. 0, or 1 when it cannot be folded. */
static int scale_params(loom_graph *g, int bi, const int64_t *perm, int r, int ax, int64_t C, double *s, double *mean,
			double *beta)
{
	const loom_node *n = &g->nodes[bi];
	if (is_op(n, "BatchNormalization"))
		return perm || ax != 1 ? 1 : bn_params(g, n, C, s, mean, beta);
	const loom_tensor *k = const_float(g, n, g->tensors[n->inputs[1]].is_const ? 1 : 0);
	if (!k || k->rank > r)
		return 1;
	int kax = -1; /* the Mul's output axis along which k varies */
	for (int d = 0; d < k->rank; d++)
		if (k->dims[d] != 1) {
			if (kax >= 0)
				return 1;
			kax = r - k->rank + d;
		}
	int64_t nk = loom_tensor_numel(k);
	if (nk != 1 && (nk != C || (perm ? perm[kax] : kax) != ax))
		return 1;
	for (int64_t c = 0; c < C; c++) {
		s[c] = ((const float *)k->data)[nk == 1 ? 0 : c];
		mean[c] = beta[c] = 0;
	}
	return 0;
}

/* Set input i of node ni to tensor t, growing its input array if needed. */
static int set_input(loom_graph *g, int ni, int i, int t)
{
	loom_node *n = &g->nodes[ni];
	if (i >= n->ninputs) {
		int *ins = realloc(n->inputs, sizeof(int) * (size_t)(i + 1));
		if (!ins)
			return -1;
		for (int k = n->ninputs; k <= i; k++)
			ins[k] = -1;
		n->inputs = ins;
		n->ninputs = i + 1;
	}
	n->inputs[i] = t;
	return 0;
}

/* Fold BN node bi into Conv node ci. 0 folded, 1 not foldable, -1 error. */
static int fold_into_conv(loom_graph *g, int ci, int bi, const int64_t *perm, char *err, size_t errlen)
{
	const loom_node *c = &g->nodes[ci], *bn = &g->nodes[bi];
	const loom_tensor *w = const_float(g, c, 1), *b = NULL, *y = loom_node_out(g, c, 0);
	double *s, *mean, *beta;
	float *nw, *nb;
	int64_t M, per;
	int rc = 1, wt, bt;
	char base[400];
	if (!w || w->rank < 3 || !y)
		return 1;
	if (c->ninputs > 2 && c->inputs[2] >= 0) {
		b = const_float(g, c, 2);
		if (!b)
			return 1;
	}
	M = w->dims[0];
	if (M <= 0 || (b && loom_tensor_numel(b) != M))
		return 1;
	per = loom_tensor_numel(w) / M;
	s = calloc((size_t)M * 3, sizeof *s);
	nw = malloc(loom_tensor_bytes(w) ? loom_tensor_bytes(w) : 1);
	nb = malloc(sizeof(float) * (size_t)M);
	if (!s || !nw || !nb) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'", bn->name, bn->op_type,
			  c->name);
		goto out;
	}
	mean = s + M;
	beta = s + 2 * M;
	if (scale_params(g, bi, perm, y->rank, 1, M, s, mean, beta))
		goto out;
	for (int64_t m = 0; m < M; m++) {
		const float *src = (const float *)w->data + m * per;
		double bias = b ? ((const float *)b->data)[m] : 0.0;
		for (int64_t k = 0; k < per; k++)
			nw[m * per + k] = (float)(src[k] * s[m]);
		nb[m] = (float)((bias - mean[m]) * s[m] + beta[m]);
	}
	{
		int64_t bd[1] = {M};
		int wrank = w->rank;
		int64_t wd[LOOM_MAX_RANK];
		memcpy(wd, w->dims, sizeof wd);
		snprintf(base, sizeof base, "%s/bn_folded_W", c->name);
		wt = add_const_float(g, base, wrank, wd, nw); /* w, b, c, bn dangle after this */
		snprintf(base, sizeof base, "%s/bn_folded_B", g->nodes[ci].name);
		bt = wt < 0 ? -1 : add_const_float(g, base, 1, bd, nb);
	}
	if (wt < 0 || bt < 0 || set_input(g, ci, 1, wt) || set_input(g, ci, 2, bt)) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'",
			  g->nodes[bi].name, g->nodes[bi].op_type, g->nodes[ci].name);
		goto out;
	}
	rc = 0;
out:
	free(s);
	free(nw);
	free(nb);
	return rc;
}

/* Fold BN node bi into Gemm node ci (output [N, M], channel = column). */
static int fold_into_gemm(loom_graph *g, int ci, int bi, const int64_t *perm, char *err, size_t errlen)
{
	const loom_node *c = &g->nodes[ci], *bn = &g->nodes[bi];
	const loom_tensor *w = const_float(g, c, 1), *b = NULL, *y = loom_node_out(g, c, 0);
	int transB = (int)loom_attr_int(c, "transB", 0);
	double gbeta = loom_attr_float(c, "beta", 1.0f);
	double *s, *mean, *beta;
	float *nw, *nb;
	int64_t M, K, bn_c;
	int rc = 1, wt, bt;
	char base[400];
	if (!w || w->rank != 2 || !y || y->rank != 2)
		return 1;
	M = transB ? w->dims[0] : w->dims[1];
	K = transB ? w->dims[1] : w->dims[0];
	if (M <= 0 || y->dims[1] != M)
		return 1;
	if (c->ninputs > 2 && c->inputs[2] >= 0) {
		b = const_float(g, c, 2);
		/* per column ([M] or [1, M]) or a scalar */
		if (!b || !(loom_tensor_numel(b) == 1 || (loom_tensor_numel(b) == M && b->dims[b->rank - 1] == M)))
			return 1;
	}
	bn_c = M;
	s = calloc((size_t)M * 3, sizeof *s);
	nw = malloc(sizeof(float) * (size_t)(M * K > 0 ? M * K : 1));
	nb = malloc(sizeof(float) * (size_t)M);
	if (!s || !nw || !nb) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'", bn->name, bn->op_type,
			  c->name);
		goto out;
	}
	mean = s + M;
	beta = s + 2 * M;
	if (scale_params(g, bi, perm, 2, 1, bn_c, s, mean, beta))
		goto out;
	for (int64_t r = 0; r < w->dims[0]; r++)
		for (int64_t q = 0; q < w->dims[1]; q++) {
			int64_t m = transB ? r : q;
			nw[r * w->dims[1] + q] = (float)(((const float *)w->data)[r * w->dims[1] + q] * s[m]);
		}
	for (int64_t m = 0; m < M; m++) {
		double bias = b ? gbeta * ((const float *)b->data)[loom_tensor_numel(b) == 1 ? 0 : m] : 0.0;
		nb[m] = (float)((bias - mean[m]) * s[m] + beta[m]);
	}
	{
		int64_t bd[1] = {M};
		int64_t wd[2] = {w->dims[0], w->dims[1]};
		snprintf(base, sizeof base, "%s/bn_folded_B", c->name);
		wt = add_const_float(g, base, 2, wd, nw);
		snprintf(base, sizeof base, "%s/bn_folded_C", g->nodes[ci].name);
		bt = wt < 0 ? -1 : add_const_float(g, base, 1, bd, nb);
	}
	if (wt < 0 || bt < 0 || set_input(g, ci, 1, wt) || set_input(g, ci, 2, bt)) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'",
			  g->nodes[bi].name, g->nodes[bi].op_type, g->nodes[ci].name);
		goto out;
	}
	/* beta now applies to C' already scaled */
	for (int a = 0; a < g->nodes[ci].nattrs; a++)
		if (!strcmp(g->nodes[ci].attrs[a].name, "beta"))
			g->nodes[ci].attrs[a].f = 1.0f;
	rc = 0;
out:
	free(s);
	free(nw);
	free(nb);
	return rc;
}

/* Fold BN or Mul node bi into Add node ai = MatMul(x, W const [K, M]) +
 * bias (const, [M], [1, M] or a scalar) whose output [..., M] has channel =
 * its last axis; the MatMul's output must feed only the Add. */
static int fold_into_matmul_add(loom_graph *g, int ai, int bi, const int64_t *perm, char *err, size_t errlen)
{
	const loom_node *a = &g->nodes[ai], *bn = &g->nodes[bi];
	const loom_tensor *y = loom_node_out(g, a, 0), *b, *w;
	const loom_node *mm;
	double *s, *mean, *beta;
	float *nw, *nb;
	int64_t M, K;
	int rc = 1, wt, bt, mi, bslot, slot = 0;
	char base[400];
	if (a->ninputs != 2 || a->noutputs != 1 || a->inputs[0] < 0 || a->inputs[1] < 0 || !y || y->rank < 2)
		return 1;
	bslot = g->tensors[a->inputs[1]].is_const ? 1 : 0;
	b = const_float(g, a, bslot);
	if (!b || g->tensors[a->inputs[1 - bslot]].is_const)
		return 1;
	mi = producer(g, a->inputs[1 - bslot], &slot);
	if (mi < 0 || !is_op(&g->nodes[mi], "MatMul") || sole_consumer(g, a->inputs[1 - bslot]) != ai)
		return 1;
	mm = &g->nodes[mi];
	w = const_float(g, mm, 1);
	if (!w || w->rank != 2 || mm->ninputs != 2)
		return 1;
	K = w->dims[0];
	M = w->dims[1];
	if (M <= 0 || y->dims[y->rank - 1] != M ||
	    !(loom_tensor_numel(b) == 1 || (loom_tensor_numel(b) == M && b->dims[b->rank - 1] == M)))
		return 1;
	s = calloc((size_t)M * 3, sizeof *s);
	nw = malloc(sizeof(float) * (size_t)(M * K > 0 ? M * K : 1));
	nb = malloc(sizeof(float) * (size_t)M);
	if (!s || !nw || !nb) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'", bn->name, bn->op_type,
			  a->name);
		goto out;
	}
	mean = s + M;
	beta = s + 2 * M;
	if (scale_params(g, bi, perm, y->rank, y->rank - 1, M, s, mean, beta))
		goto out;
	for (int64_t k = 0; k < K; k++)
		for (int64_t m = 0; m < M; m++)
			nw[k * M + m] = (float)(((const float *)w->data)[k * M + m] * s[m]);
	for (int64_t m = 0; m < M; m++) {
		double bias = ((const float *)b->data)[loom_tensor_numel(b) == 1 ? 0 : m];
		nb[m] = (float)((bias - mean[m]) * s[m] + beta[m]);
	}
	{
		int64_t bd[1] = {M};
		int64_t wd[2] = {K, M};
		snprintf(base, sizeof base, "%s/bn_folded_W", mm->name);
		wt = add_const_float(g, base, 2, wd, nw);
		snprintf(base, sizeof base, "%s/bn_folded_B", g->nodes[ai].name);
		bt = wt < 0 ? -1 : add_const_float(g, base, 1, bd, nb);
	}
	if (wt < 0 || bt < 0) {
		rc = fail(err, errlen, "node '%s' (%s): out of memory folding into '%s'",
			  g->nodes[bi].name, g->nodes[bi].op_type, g->nodes[ai].name);
		goto out;
	}
	g->nodes[mi].inputs[1] = wt;
	g->nodes[ai].inputs[bslot] = bt;
	rc = 0;
out:
	free(s);
	free(nw);
	free(nb);
	return rc;
}

/* the folding's scale node: a BatchNormalization, or a Mul of one
 * activation by a constant that keeps its shape; its activation input
 * (*x), or -1 */
static int scale_node(loom_graph *g, const loom_node *n, int *x)
{
	*x = -1;
	if (is_op(n, "BatchNormalization")) {
		if (n->ninputs >= 5 && n->noutputs >= 1 && n->outputs[0] >= 0)
			*x = n->inputs[0];
		return *x >= 0;
	}
	if (!is_op(n, "Mul") || n->ninputs != 2 || n->noutputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0 ||
	    n->outputs[0] < 0 || g->tensors[n->inputs[0]].is_const == g->tensors[n->inputs[1]].is_const)
		return 0;
	int xi = g->tensors[n->inputs[0]].is_const ? n->inputs[1] : n->inputs[0];
	const loom_tensor *a = &g->tensors[xi], *y = &g->tensors[n->outputs[0]];
	if (a->rank != y->rank || memcmp(a->dims, y->dims, sizeof(int64_t) * (size_t)a->rank))
		return 0;
	*x = xi;
	return 1;
}

/* BatchNormalization, and Mul by a per-channel or scalar constant, folded
 * into the Conv, Gemm or MatMul + Add before it, also through a Transpose
 * between them for a Mul (ConvNeXt's layer scale: Linear -> Transpose ->
 * Mul): the producer's weights and bias are scaled, the Transpose writes
 * the Mul's output. */
int loom_pass_fold_batchnorm(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	char *dead = calloc((size_t)g->nnodes + 1, 1);
	int removed, muls = 0;
	if (!dead)
		return fail(err, errlen, "BatchNormalization folding: out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *bn = &g->nodes[i];
		int x, y, p, tp = -1, slot = 0, rc, np = 0;
		const int64_t *perm = NULL;
		if (!scale_node(g, bn, &x) || sole_consumer(g, x) != i)
			continue;
		y = bn->outputs[0];
		p = producer(g, x, &slot);
		if (p >= 0 && !dead[p] && is_op(bn, "Mul") && is_op(&g->nodes[p], "Transpose")) {
			const loom_node *t = &g->nodes[p];
			perm = loom_attr_ints(t, "perm", &np);
			if (!perm || np != g->tensors[x].rank || t->ninputs != 1 || t->inputs[0] < 0 ||
			    sole_consumer(g, t->inputs[0]) != p)
				continue;
			tp = p;
			p = producer(g, t->inputs[0], &slot);
		}
		if (p < 0 || dead[p] || slot != 0 || g->nodes[p].noutputs != 1)
			continue;
		if (is_op(&g->nodes[p], "Conv"))
			rc = fold_into_conv(g, p, i, perm, err, errlen);
		else if (is_op(&g->nodes[p], "Gemm"))
			rc = fold_into_gemm(g, p, i, perm, err, errlen);
		else if (is_op(&g->nodes[p], "Add"))
			rc = fold_into_matmul_add(g, p, i, perm, err, errlen);
		else
			continue;
		if (rc < 0) {
			free(dead);
			return -1;
		}
		if (rc)
			continue;
		/* the Conv / Gemm / Add (or the Transpose after it) writes the
		 * folded node's output now */
		g->nodes[tp >= 0 ? tp : p].outputs[0] = y;
		dead[i] = 1;
		muls += is_op(bn, "Mul");
	}
	removed = remove_nodes(g, dead);
	free(dead);
	if (st) {
		st->bn_folded += removed - muls;
		st->muls_folded += muls;
	}
	return 0;
}

/* ------------------------------------------------------------------ 5. fusion */

/* a Relu, LeakyRelu, or Clip whose bounds are constant or absent */
static int is_activation(loom_graph *g, const loom_node *n)
{
	if (is_op(n, "Relu") || is_op(n, "LeakyRelu"))
		return 1;
	if (!is_op(n, "Clip"))
		return 0;
	for (int j = 1; j < n->ninputs; j++) {
		const loom_tensor *t = loom_node_in(g, n, j);
		if (t && (!t->is_const || !t->data))
			return 0;
	}
	return 1;
}

/* an Add with exactly one constant input (a bias); the other input's index */
static int bias_add_other(loom_graph *g, const loom_node *n, int from)
{
	const loom_tensor *a, *b;
	if (!is_op(n, "Add") || n->ninputs != 2)
		return 0;
	a = loom_node_in(g, n, 0);
	b = loom_node_in(g, n, 1);
	if (!a || !b)
		return 0;
	if (n->inputs[0] == from && b->is_const && b->data && !a->is_const)
		return 1;
	if (n->inputs[1] == from && a->is_const && a->data && !b->is_const)
		return 1;
	return 0;
}

static int push_fusion(loom_pass_stats *st, int node, int bias, int act)
{
	loom_fusion *f = realloc(st->fusions, sizeof *f * (size_t)(st->nfusions + 1));
	if (!f)
		return -1;
	st->fusions = f;
	f[st->nfusions].node = node;
	f[st->nfusions].bias_node = bias;
	f[st->nfusions].act_node = act;
	st->nfusions++;
	return 0;
}

int loom_pass_fuse(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	char *claimed;
	loom_pass_stats local = {0};
	if (!st)
		st = &local;
	loom_pass_stats_free(st);
	claimed = calloc((size_t)g->nnodes + 1, 1);
	if (!claimed)
		return fail(err, errlen, "fusion: out of memory");
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		int out, next, bias = -1, act = -1;
		if (!(is_op(n, "Conv") || is_op(n, "Gemm") || is_op(n, "MatMul")) || n->noutputs != 1)
			continue;
		out = n->outputs[0];
		next = sole_consumer(g, out);
		if (next >= 0 && bias_add_other(g, &g->nodes[next], out)) {
			bias = next;
			out = g->nodes[next].outputs[0];
			next = sole_consumer(g, out);
		}
		if (next >= 0 && is_activation(g, &g->nodes[next]) && g->nodes[next].inputs[0] == out)
			act = next;
		if (bias < 0 && act < 0)
			continue;
		if (push_fusion(st, i, bias, act)) {
			free(claimed);
			return fail(err, errlen, "fusion: out of memory at node '%s' (%s)", n->name, n->op_type);
		}
		claimed[i] = 1;
		if (bias >= 0)
			claimed[bias] = 1;
		if (act >= 0)
			claimed[act] = 1;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		int next;
		if (claimed[i] || !is_op(n, "Add") || n->noutputs != 1)
			continue;
		next = sole_consumer(g, n->outputs[0]);
		if (next < 0 || claimed[next] || !is_op(&g->nodes[next], "Relu"))
			continue;
		if (push_fusion(st, i, -1, next)) {
			free(claimed);
			return fail(err, errlen, "fusion: out of memory at node '%s' (%s)", n->name, n->op_type);
		}
		claimed[i] = claimed[next] = 1;
	}
	free(claimed);
	loom_pass_stats_free(&local);
	return 0;
}

/* ------------------------------------------------------------------ 4b. taps that only see padding */

/* the first and last taps of a kernel dimension that read the input for
 * some output position (k taps of dilation d, stride s, pad pb, in input
 * positions, out outputs): input o*s - pb + t*d */
static void live_taps(int64_t k, int64_t d, int64_t s, int64_t pb, int64_t in, int64_t out, int64_t *t0, int64_t *t1)
{
	*t0 = k, *t1 = -1;
	for (int64_t t = 0; t < k; t++)
		for (int64_t o = 0; o < out; o++) {
			int64_t i = o * s - pb + t * d;
			if (i >= 0 && i < in) {
				if (t < *t0)
					*t0 = t;
				*t1 = t;
				break;
			}
		}
}

/* Conv node ci without the kernel rows / columns that read only padding
 * (a dilated kernel wider than its input: DeepLab's atrous rates at small
 * feature maps): the same outputs, smaller weights and pads (dilation 1
 * where one tap is left). 0 trimmed, 1 nothing to trim, -1 error. */
static int trim_conv(loom_graph *g, int ci, char *err, size_t errlen)
{
	const loom_node *c = &g->nodes[ci];
	const loom_tensor *w = const_float(g, c, 1), *x = loom_node_in(g, c, 0);
	struct loom_cpu_geo geo;
	char e2[256];
	if (!w || !x || w->rank < 3 || w->rank > 5 || x->rank != w->rank || loom_node_out(g, c, 0) == NULL ||
	    loom_cpu_geo_fwd(g, c, e2, sizeof e2, x, w->dims + 2, 0, &geo))
		return 1;
	int nd = w->rank - 2, trim = 0;
	int64_t t0[3], t1[3], k2[3], pads[6], dil[3];
	for (int i = 0; i < nd; i++) {
		int j = 3 - nd + i;
		live_taps(geo.k[j], geo.d[j], geo.s[j], geo.pb[j], geo.in[j], geo.out[j], &t0[i], &t1[i]);
		if (t1[i] < t0[i])
			return 1; /* no tap reads the input: left to the kernels */
		k2[i] = t1[i] - t0[i] + 1;
		pads[i] = geo.pb[j] - t0[i] * geo.d[j];
		pads[nd + i] = geo.pe[j] - (geo.k[j] - 1 - t1[i]) * geo.d[j];
		dil[i] = k2[i] == 1 ? 1 : geo.d[j];
		if (pads[i] < 0 || pads[nd + i] < 0)
			return 1;
		trim |= k2[i] < geo.k[j];
	}
	if (!trim)
		return 1;
	int64_t wd[5] = {w->dims[0], w->dims[1], 1, 1, 1}, n2 = w->dims[0] * w->dims[1];
	for (int i = 0; i < nd; i++)
		wd[2 + i] = k2[i], n2 *= k2[i];
	float *nw = malloc(sizeof(float) * (size_t)(n2 ? n2 : 1));
	if (!nw)
		return fail(err, errlen, "node '%s' (Conv): out of memory trimming its kernel", c->name);
	const float *src = w->data;
	int64_t kd[3] = {1, 1, 1}, nk[3] = {1, 1, 1}, o0[3] = {0, 0, 0};
	for (int i = 0; i < nd; i++)
		kd[3 - nd + i] = w->dims[2 + i], nk[3 - nd + i] = k2[i], o0[3 - nd + i] = t0[i];
	int64_t q = 0;
	for (int64_t mc = 0; mc < w->dims[0] * w->dims[1]; mc++)
		for (int64_t a = 0; a < nk[0]; a++)
			for (int64_t b = 0; b < nk[1]; b++)
				for (int64_t e = 0; e < nk[2]; e++)
					nw[q++] = src[((mc * kd[0] + o0[0] + a) * kd[1] + o0[1] + b) * kd[2] + o0[2] + e];
	char base[400];
	snprintf(base, sizeof base, "%s/trimmed_W", c->name);
	int wt = add_const_float(g, base, w->rank, wd, nw);
	free(nw);
	loom_node *cn = &g->nodes[ci];
	if (wt < 0 || set_input(g, ci, 1, wt) || loom_node_set_attr_ints(cn, "pads", pads, 2 * nd) ||
	    loom_node_set_attr_ints(cn, "dilations", dil, nd) || loom_node_set_attr_str(cn, "auto_pad", "NOTSET") ||
	    (loom_attr_ints(cn, "kernel_shape", NULL) && loom_node_set_attr_ints(cn, "kernel_shape", k2, nd)))
		return fail(err, errlen, "node '%s' (Conv): out of memory trimming its kernel", g->nodes[ci].name);
	return 0;
}

int loom_pass_trim_taps(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	for (int i = 0; i < g->nnodes; i++) {
		if (!is_op(&g->nodes[i], "Conv"))
			continue;
		int rc = trim_conv(g, i, err, errlen);
		if (rc < 0)
			return -1;
		st->convs_trimmed += !rc;
	}
	return 0;
}

/* ------------------------------------------------------------------ driver */

int loom_simplify(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen)
{
	loom_pass_stats local = {0};
	int rc;
	if (!g)
		return fail(err, errlen, "loom_simplify: no graph");
	if (!st)
		st = &local;
	st->nodes_before = g->nnodes;
	rc = loom_pass_fold_constants(g, st, err, errlen) || loom_pass_remove_identity(g, st, err, errlen) ||
	     loom_pass_dead_nodes(g, st, err, errlen) || loom_pass_fold_batchnorm(g, st, err, errlen) ||
	     loom_pass_dead_nodes(g, st, err, errlen) || loom_pass_trim_taps(g, st, err, errlen) ||
	     loom_pass_fuse(g, st, err, errlen);
	st->nodes_after = g->nnodes;
	loom_pass_stats_free(&local);
	return rc ? -1 : 0;
}
