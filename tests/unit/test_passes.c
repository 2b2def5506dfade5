/* test_passes.c - unit tests of the graph passes of loom compile
 * (compiler/passes.c, compiler/passes.h).
 *
 * Part 1: tiny graphs built here, one per pass, checking the structure
 * after the pass (node count, op types, rewired inputs and outputs, graph
 * output names, new initializers) and, where the graph runs, that the
 * reference executor gives the same outputs as on an unsimplified copy:
 * constant folding, Identity / Dropout removal (graph outputs kept by name,
 * training-mode Dropout and used masks kept), dead-node elimination,
 * BatchNormalization folding into Conv (with / without bias, grouped), Gemm
 * (transB 0 / 1, alpha, beta, C) and MatMul + Add, Mul by a constant
 * scale folded the same way (per channel into a Conv, scalar into a Gemm,
 * per channel through a Transpose into a rank-4 MatMul + Add as
 * ConvNeXt's layer scale; a scale along a spatial axis, a Mul of two
 * activations and a Mul whose producer has another reader left alone),
 * Conv kernels trimmed
 * of taps that read only padding (2-D with dilation 24 on 14x14, one
 * dimension with stride 2, 1-D with SAME_UPPER; an ordinary Conv left
 * alone), the fusion table, and
 * all of loom_simplify on one graph (a Shape -> Gather -> Unsqueeze ->
 * Concat -> Reshape chain folded, Conv + BN + Relu + Dropout + Identity).
 * Part 2: real models: every folder of build/models (or $BUILD/models, or
 * the first argument; make models; skipped with a message when missing) and Debian's ONNX node test cases
 * test_batchnorm_*, test_conv_*, test_identity*, test_dropout_*: load,
 * loom_simplify, run test_data_set_0 on the reference executor, compare
 * with output_0.pb (atol 1e-4 + rtol 1e-3); prints node counts before and
 * after and the fusions found.
 *
 * Prints one line per check and ends with "N passed, M failed, K skipped";
 * exit status 1 on any failure. */
#include "runtime/cpu_ops.h"
#include "ir/ir.h"
#include "compiler/onnx.h"
#include "onnx_case.h"
#include "compiler/passes.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})
#define FL LOOM_DT_FLOAT

/* ------------------------------------------------------------------ graph building */

#define gnew(opset) oc_graph_new((opset), "(built by test_passes)")

/* a tensor of g; data (numel * element size bytes) copied when given */
#define gtensor(g, name, dtype, rank, dims, data, is_const) \
	OC_MUST(loom_graph_add_tensor((g), (name), (dtype), (rank), (dims), (data), (is_const)))

/* a graph input with its data */
#define ginput oc_add_input

static int gconst(loom_graph *g, const char *name, int rank, const int64_t *dims, const float *data)
{
	return gtensor(g, name, FL, rank, dims, data, 1);
}

/* a node output tensor (type unknown until inference) */
static int gval(loom_graph *g, const char *name)
{
	return gtensor(g, name, LOOM_DT_UNDEFINED, 0, NULL, NULL, 0);
}

#define goutput(g, t) OC_MUST(loom_graph_add_output((g), (t)))

/* node op "name" reading ins (-1 = omitted) and writing outs. The returned
 * pointer is valid until the next gnode. */
static loom_node *gnode(loom_graph *g, const char *op, const char *name, int nin, const int *ins, int nout,
			const int *outs)
{
	int i = OC_MUST(loom_graph_add_node(g, op, name, ins, nin, outs, nout));
	return &g->nodes[i];
}
#define IN(...) (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)), ((const int[]){__VA_ARGS__})
#define OUT IN

#define attr_i(n, name, v) OC_MUST(loom_node_set_attr_int((n), (name), (v)))
#define attr_f(n, name, v) OC_MUST(loom_node_set_attr_float((n), (name), (v)))
#define attr_ints(n, name, cnt, ...) OC_MUST(loom_node_set_attr_ints((n), (name), __VA_ARGS__, (cnt)))

#define compare oc_compare

/* ------------------------------------------------------------------ checking helpers */

static int node_index(const loom_graph *g, const char *name)
{
	for (int i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return i;
	return -1;
}

static const loom_node *node_named(const loom_graph *g, const char *name)
{
	int i = node_index(g, name);
	return i < 0 ? NULL : &g->nodes[i];
}

static const char *tname(const loom_graph *g, int t)
{
	return t >= 0 && t < g->ntensors ? g->tensors[t].name : "(none)";
}

/* Every node input / output index in range, every input computed by an
 * earlier node or a graph input or a constant (topological order). */
static int graph_valid(const loom_graph *g, char *why, size_t len)
{
	char *avail = oc_xmalloc((size_t)g->ntensors + 1);
	int ok = 1;
	why[0] = 0;
	for (int i = 0; i < g->ninputs; i++)
		avail[g->inputs[i]] = 1;
	for (int t = 0; t < g->ntensors; t++)
		if (g->tensors[t].is_const && g->tensors[t].data)
			avail[t] = 1;
	for (int i = 0; i < g->nnodes && ok; i++) {
		const loom_node *n = &g->nodes[i];
		for (int j = 0; j < n->ninputs && ok; j++) {
			int t = n->inputs[j];
			if (t >= g->ntensors || (t >= 0 && !avail[t])) {
				snprintf(why, len, "node '%s' input %d (tensor %d) not available", n->name, j, t);
				ok = 0;
			}
		}
		for (int j = 0; j < n->noutputs && ok; j++) {
			int t = n->outputs[j];
			if (t < 0 || t >= g->ntensors) {
				snprintf(why, len, "node '%s' output %d is tensor %d of %d", n->name, j, t, g->ntensors);
				ok = 0;
			} else {
				avail[t] = 1;
			}
		}
	}
	for (int i = 0; i < g->noutputs && ok; i++)
		if (!avail[g->outputs[i]]) {
			snprintf(why, len, "graph output '%s' is computed by no node", tname(g, g->outputs[i]));
			ok = 0;
		}
	free(avail);
	return ok;
}

static void check_valid(const loom_graph *g, const char *label)
{
	char why[300];
	int ok = graph_valid(g, why, sizeof why);
	CHECK(ok, "%s: graph valid%s%s", label, ok ? "" : ": ", why);
}

/* Run a fresh copy built by build() unchanged and one after loom_simplify;
 * compare every graph output. */
static void check_same(loom_graph *(*build)(void), const char *label, loom_pass_stats *st_out)
{
	loom_graph *a = build(), *b = build();
	loom_pass_stats st = {0};
	char err[512], why[300] = "";
	if (loom_ref_run(a, err, sizeof err)) {
		CHECK_FAIL("%s: reference run of the original: %s", label, err);
		goto out;
	}
	if (loom_simplify(b, &st, err, sizeof err)) {
		CHECK_FAIL("%s: loom_simplify: %s", label, err);
		goto out;
	}
	{
		char v[300];
		if (!graph_valid(b, v, sizeof v)) {
			CHECK_FAIL("%s: graph invalid after loom_simplify: %s", label, v);
			goto out;
		}
	}
	if (loom_ref_run(b, err, sizeof err)) {
		CHECK_FAIL("%s: reference run after loom_simplify: %s", label, err);
		goto out;
	}
	for (int i = 0; i < a->noutputs && !why[0]; i++) {
		const loom_tensor *ta = &a->tensors[a->outputs[i]];
		const loom_tensor *tb = &b->tensors[b->outputs[i]];
		char w[256];
		if (strcmp(ta->name, tb->name)) {
			snprintf(why, sizeof why, "graph output %d is '%s', was '%s'", i, tb->name, ta->name);
			break;
		}
		compare(tb, ta->dtype, ta->rank, ta->dims, ta->data, 1e-5, 1e-5, w, sizeof w);
		if (w[0])
			snprintf(why, sizeof why, "output '%s': %s", ta->name, w);
	}
	CHECK(!why[0], "%s: same outputs after loom_simplify (%d -> %d nodes)%s%s", label, st.nodes_before,
	      st.nodes_after, why[0] ? ": " : "", why);
out:
	if (st_out)
		*st_out = st;
	else
		loom_pass_stats_free(&st);
	loom_graph_free(a);
	loom_graph_free(b);
}

/* ================================================================== part 1: hand-built graphs */

/* y = x + (c1 + c2) * c1 */
static loom_graph *build_fold(void)
{
	loom_graph *g = gnew(13);
	int x = ginput(g, "x", FL, 1, D(2), F(1, 1));
	int c1 = gconst(g, "c1", 1, D(2), F(1, 2));
	int c2 = gconst(g, "c2", 1, D(2), F(3, 4));
	int t1 = gval(g, "t1"), t2 = gval(g, "t2"), y = gval(g, "y");
	gnode(g, "Add", "n1", IN(c1, c2), OUT(t1));
	gnode(g, "Mul", "n2", IN(t1, c1), OUT(t2));
	gnode(g, "Add", "n3", IN(x, t2), OUT(y));
	goutput(g, y);
	return g;
}

static void test_fold(void)
{
	loom_graph *g = build_fold();
	loom_pass_stats st = {0};
	char err[512];
	int rc = loom_pass_fold_constants(g, &st, err, sizeof err);
	CHECK(!rc, "fold: pass runs%s%s", rc ? ": " : "", rc ? err : "");
	if (!rc) {
		const loom_tensor *t2 = &g->tensors[loom_graph_find(g, "t2")];
		CHECK(g->nnodes == 1 && !strcmp(g->nodes[0].name, "n3") && st.folded == 2,
		      "fold: 2 of 3 nodes folded, n3 left (%d nodes, folded %d)", g->nnodes, st.folded);
		CHECK(t2->is_const && t2->data && ((const float *)t2->data)[0] == 4 &&
			      ((const float *)t2->data)[1] == 12,
		      "fold: t2 became the initializer [4, 12]");
		check_valid(g, "fold");
	}
	loom_graph_free(g);
	check_same(build_fold, "fold", NULL);
}

/* x -> Relu r1 -> a -> Identity id1 -> b -> Relu r2 -> c -> Dropout dr -> d
 * -> Identity id2 -> y (graph output); x -> Identity id3 -> y2 (graph
 * output fed by a graph input: kept) */
static loom_graph *build_identity(void)
{
	loom_graph *g = gnew(13);
	int x = ginput(g, "x", FL, 1, D(3), F(-1, 2, -3));
	int a = gval(g, "a"), b = gval(g, "b"), c = gval(g, "c"), d = gval(g, "d"), y = gval(g, "y"),
	    y2 = gval(g, "y2");
	gnode(g, "Relu", "r1", IN(x), OUT(a));
	gnode(g, "Identity", "id1", IN(a), OUT(b));
	gnode(g, "Relu", "r2", IN(b), OUT(c));
	gnode(g, "Dropout", "dr", IN(c), OUT(d));
	gnode(g, "Identity", "id2", IN(d), OUT(y));
	gnode(g, "Identity", "id3", IN(x), OUT(y2));
	goutput(g, y);
	goutput(g, y2);
	return g;
}

static void test_identity(void)
{
	loom_graph *g = build_identity();
	loom_pass_stats st = {0};
	char err[512];
	int rc = loom_pass_fold_constants(g, &st, err, sizeof err) ||
		 loom_pass_remove_identity(g, &st, err, sizeof err);
	CHECK(!rc, "identity: passes run%s%s", rc ? ": " : "", rc ? err : "");
	if (!rc) {
		const loom_node *r2 = node_named(g, "r2");
		CHECK(g->nnodes == 3 && node_named(g, "r1") && r2 && node_named(g, "id3"),
		      "identity: r1, r2, id3 left (%d nodes)", g->nnodes);
		CHECK(st.identities_removed == 3 && st.identities_kept == 1,
		      "identity: 3 removed, 1 kept (%d, %d)", st.identities_removed, st.identities_kept);
		if (r2) {
			CHECK(!strcmp(tname(g, r2->inputs[0]), "a"), "identity: r2 reads a (reads %s)",
			      tname(g, r2->inputs[0]));
			CHECK(!strcmp(tname(g, r2->outputs[0]), "y"), "identity: r2 writes the graph output y (writes %s)",
			      tname(g, r2->outputs[0]));
		}
		CHECK(!strcmp(tname(g, g->outputs[0]), "y") && !strcmp(tname(g, g->outputs[1]), "y2"),
		      "identity: graph outputs still y, y2");
		check_valid(g, "identity");
	}
	loom_graph_free(g);
	check_same(build_identity, "identity", NULL);

	/* kept: training-mode Dropout (constant true), Dropout whose mask is used */
	{
		loom_graph *h = gnew(13);
		uint8_t one = 1;
		int x = ginput(h, "x", FL, 1, D(2), F(1, 2));
		int tm = gtensor(h, "tm", LOOM_DT_BOOL, 0, NULL, &one, 1);
		int a = gval(h, "a"), b = gval(h, "b"), m = gval(h, "m");
		gnode(h, "Dropout", "dtrain", IN(x, -1, tm), OUT(a));
		gnode(h, "Dropout", "dmask", IN(a), OUT(b, m));
		goutput(h, b);
		goutput(h, m);
		st = (loom_pass_stats){0};
		rc = loom_pass_remove_identity(h, &st, err, sizeof err);
		CHECK(!rc && h->nnodes == 2 && st.identities_removed == 0,
		      "identity: training-mode Dropout and Dropout with a used mask kept (%d nodes)", h->nnodes);
		loom_graph_free(h);
	}
	/* Dropout opset 12 with training_mode constant false is removed, an unused mask too */
	{
		loom_graph *h = gnew(12);
		uint8_t zero = 0;
		int x = ginput(h, "x", FL, 1, D(2), F(1, 2));
		int tm = gtensor(h, "tm", LOOM_DT_BOOL, 0, NULL, &zero, 1);
		int a = gval(h, "a"), m = gval(h, "m"), y = gval(h, "y");
		gnode(h, "Dropout", "dinf", IN(x, -1, tm), OUT(a, m));
		gnode(h, "Neg", "neg", IN(a), OUT(y));
		goutput(h, y);
		st = (loom_pass_stats){0};
		rc = loom_pass_remove_identity(h, &st, err, sizeof err);
		CHECK(!rc && h->nnodes == 1 && h->nodes[0].inputs[0] == x,
		      "identity: inference Dropout (training_mode false, mask unused) removed, Neg reads x");
		loom_graph_free(h);
	}
}

/* x -> Relu -> y (output); x -> Sigmoid -> u -> Neg -> v (unused) */
static loom_graph *build_dead(void)
{
	loom_graph *g = gnew(13);
	int x = ginput(g, "x", FL, 1, D(2), F(-1, 1));
	int y = gval(g, "y"), u = gval(g, "u"), v = gval(g, "v");
	gnode(g, "Sigmoid", "s", IN(x), OUT(u));
	gnode(g, "Relu", "r", IN(x), OUT(y));
	gnode(g, "Neg", "n", IN(u), OUT(v));
	goutput(g, y);
	return g;
}

static void test_dead(void)
{
	loom_graph *g = build_dead();
	loom_pass_stats st = {0};
	char err[512];
	int rc = loom_pass_dead_nodes(g, &st, err, sizeof err);
	CHECK(!rc && g->nnodes == 1 && !strcmp(g->nodes[0].name, "r") && st.dead_removed == 2,
	      "dead: Sigmoid and Neg removed, Relu left (%d nodes, removed %d)", g->nnodes, st.dead_removed);
	check_valid(g, "dead");
	loom_graph_free(g);
	check_same(build_dead, "dead", NULL);
}

/* Conv (x [1,2,3,3], W [3,2,1,1] or grouped) -> BatchNormalization -> y */
static int bn_variant;
static loom_graph *build_bn_conv(void)
{
	loom_graph *g = gnew(bn_variant == 3 ? 9 : 14);
	static const float xv[18] = {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, 0.5f, 0.25f, 0, 3, 2, 1};
	int grouped = bn_variant == 2;
	int64_t M = grouped ? 2 : 3;
	int x = ginput(g, "x", FL, 4, D(1, 2, 3, 3), xv);
	int w = grouped ? gconst(g, "W", 4, D(2, 1, 1, 1), F(2, -3))
			: gconst(g, "W", 4, D(3, 2, 1, 1), F(1, 2, -1, 0.5f, 3, 1));
	int b = gconst(g, "B", 1, D(M), F(0.1f, -0.2f, 0.3f));
	int sc = gconst(g, "gamma", 1, D(M), F(1.5f, 0.5f, 2));
	int be = gconst(g, "beta", 1, D(M), F(0.1f, 0.2f, -0.3f));
	int mu = gconst(g, "mean", 1, D(M), F(0.5f, -1, 2));
	int va = gconst(g, "var", 1, D(M), F(4, 0.25f, 1));
	int c = gval(g, "c"), y = gval(g, "y");
	loom_node *n;
	if (bn_variant == 0 || bn_variant == 3)
		n = gnode(g, "Conv", "conv", IN(x, w), OUT(c));
	else
		n = gnode(g, "Conv", "conv", IN(x, w, b), OUT(c));
	if (grouped)
		attr_i(n, "group", 2);
	n = gnode(g, "BatchNormalization", "bn", IN(c, sc, be, mu, va), OUT(y));
	attr_f(n, "epsilon", 1e-3f);
	goutput(g, y);
	return g;
}

static void test_bn_conv(void)
{
	static const char *const names[4] = {"bn-conv (no bias)", "bn-conv (bias)", "bn-conv (group 2)",
					     "bn-conv (opset 9)"};
	for (bn_variant = 0; bn_variant < 4; bn_variant++) {
		loom_graph *g = build_bn_conv();
		loom_pass_stats st = {0};
		char err[512];
		int rc = loom_pass_fold_constants(g, &st, err, sizeof err) ||
			 loom_pass_fold_batchnorm(g, &st, err, sizeof err);
		CHECK(!rc, "%s: passes run%s%s", names[bn_variant], rc ? ": " : "", rc ? err : "");
		if (!rc) {
			const loom_node *n = &g->nodes[0];
			CHECK(g->nnodes == 1 && !strcmp(n->op_type, "Conv") && n->ninputs == 3 && st.bn_folded == 1 &&
				      !strcmp(tname(g, n->outputs[0]), "y"),
			      "%s: one Conv with a bias writing y (%d nodes, %d inputs, writes %s)", names[bn_variant],
			      g->nnodes, n->ninputs, tname(g, n->outputs[0]));
			CHECK(g->tensors[n->inputs[1]].is_const && g->tensors[n->inputs[2]].is_const &&
				      n->inputs[1] != loom_graph_find(g, "W"),
			      "%s: new constant weights '%s', bias '%s'", names[bn_variant], tname(g, n->inputs[1]),
			      tname(g, n->inputs[2]));
			check_valid(g, names[bn_variant]);
		}
		loom_graph_free(g);
		check_same(build_bn_conv, names[bn_variant], NULL);
	}
	/* not folded: the Conv output has another consumer */
	{
		loom_graph *g;
		loom_pass_stats st = {0};
		char err[512];
		int rc;
		bn_variant = 1;
		g = build_bn_conv();
		{
			int c = loom_graph_find(g, "c"), r = gval(g, "r");
			gnode(g, "Relu", "relu", IN(c), OUT(r));
			goutput(g, r);
		}
		rc = loom_pass_fold_batchnorm(g, &st, err, sizeof err);
		CHECK(!rc && g->nnodes == 3 && st.bn_folded == 0, "bn-conv: not folded when the Conv output has two users");
		loom_graph_free(g);
	}
}

/* Gemm (x [2,3], B [3,4] or [4,3] with transB, C [4] or scalar, alpha,
 * beta) -> BatchNormalization -> y */
static loom_graph *build_bn_gemm(void)
{
	loom_graph *g = gnew(13);
	int transB = bn_variant & 1, scalarC = bn_variant == 2, noC = bn_variant == 3;
	int x = ginput(g, "x", FL, 2, D(2, 3), F(1, 2, 3, -1, 0.5f, 2));
	int w = transB ? gconst(g, "B", 2, D(4, 3), F(1, 0, 2, -1, 1, 1, 0.5f, 0.5f, 0, 3, -2, 1))
		       : gconst(g, "B", 2, D(3, 4), F(1, 0, 2, -1, 1, 1, 0.5f, 0.5f, 0, 3, -2, 1));
	int cc = scalarC ? gconst(g, "C", 1, D(1), F(0.7f)) : gconst(g, "C", 1, D(4), F(0.1f, 0.2f, 0.3f, 0.4f));
	int sc = gconst(g, "gamma", 1, D(4), F(1.5f, 0.5f, 2, 1));
	int be = gconst(g, "beta", 1, D(4), F(0.1f, 0.2f, -0.3f, 0));
	int mu = gconst(g, "mean", 1, D(4), F(0.5f, -1, 2, 0));
	int va = gconst(g, "var", 1, D(4), F(4, 0.25f, 1, 9));
	int c = gval(g, "c"), y = gval(g, "y");
	loom_node *n = noC ? gnode(g, "Gemm", "gemm", IN(x, w), OUT(c)) : gnode(g, "Gemm", "gemm", IN(x, w, cc), OUT(c));
	attr_i(n, "transB", transB);
	attr_f(n, "alpha", 0.5f);
	if (!noC)
		attr_f(n, "beta", 2.0f);
	gnode(g, "BatchNormalization", "bn", IN(c, sc, be, mu, va), OUT(y));
	goutput(g, y);
	return g;
}

static void test_bn_gemm(void)
{
	static const char *const names[4] = {"bn-gemm (C [4])", "bn-gemm (transB, C [4])", "bn-gemm (scalar C)",
					     "bn-gemm (transB, no C)"};
	for (bn_variant = 0; bn_variant < 4; bn_variant++) {
		loom_graph *g = build_bn_gemm();
		loom_pass_stats st = {0};
		char err[512];
		int rc = loom_pass_fold_constants(g, &st, err, sizeof err) ||
			 loom_pass_fold_batchnorm(g, &st, err, sizeof err);
		CHECK(!rc, "%s: passes run%s%s", names[bn_variant], rc ? ": " : "", rc ? err : "");
		if (!rc)
			CHECK(g->nnodes == 1 && !strcmp(g->nodes[0].op_type, "Gemm") && g->nodes[0].ninputs == 3 &&
				      st.bn_folded == 1 && !strcmp(tname(g, g->nodes[0].outputs[0]), "y"),
			      "%s: one Gemm with C writing y (%d nodes)", names[bn_variant], g->nnodes);
		loom_graph_free(g);
		check_same(build_bn_gemm, names[bn_variant], NULL);
	}
}

/* MatMul (x [2,3], W [3,4]) -> Add bias ([4] second, or scalar first) ->
 * BatchNormalization -> y */
static loom_graph *build_bn_matmul(void)
{
	loom_graph *g = gnew(13);
	int x = ginput(g, "x", FL, 2, D(2, 3), F(1, 2, 3, -1, 0.5f, 2));
	int w = gconst(g, "W", 2, D(3, 4), F(1, 0, 2, -1, 1, 1, 0.5f, 0.5f, 0, 3, -2, 1));
	int cc = bn_variant ? gconst(g, "bias", 0, NULL, F(0.7f)) : gconst(g, "bias", 1, D(4), F(0.1f, 0.2f, 0.3f, 0.4f));
	int sc = gconst(g, "gamma", 1, D(4), F(1.5f, 0.5f, 2, 1));
	int be = gconst(g, "beta", 1, D(4), F(0.1f, 0.2f, -0.3f, 0));
	int mu = gconst(g, "mean", 1, D(4), F(0.5f, -1, 2, 0));
	int va = gconst(g, "var", 1, D(4), F(4, 0.25f, 1, 9));
	int m = gval(g, "m"), c = gval(g, "c"), y = gval(g, "y");
	gnode(g, "MatMul", "mm", IN(x, w), OUT(m));
	if (bn_variant)
		gnode(g, "Add", "add", IN(cc, m), OUT(c));
	else
		gnode(g, "Add", "add", IN(m, cc), OUT(c));
	gnode(g, "BatchNormalization", "bn", IN(c, sc, be, mu, va), OUT(y));
	goutput(g, y);
	return g;
}

static void test_bn_matmul(void)
{
	static const char *const names[2] = {"bn-matmul (bias [4])", "bn-matmul (scalar bias first)"};
	for (bn_variant = 0; bn_variant < 2; bn_variant++) {
		loom_graph *g = build_bn_matmul();
		loom_pass_stats st = {0};
		char err[512];
		int rc = loom_pass_fold_constants(g, &st, err, sizeof err) ||
			 loom_pass_fold_batchnorm(g, &st, err, sizeof err);
		CHECK(!rc, "%s: passes run%s%s", names[bn_variant], rc ? ": " : "", rc ? err : "");
		if (!rc)
			CHECK(g->nnodes == 2 && !strcmp(g->nodes[0].op_type, "MatMul") &&
				      !strcmp(g->nodes[1].op_type, "Add") && st.bn_folded == 1 &&
				      !strcmp(tname(g, g->nodes[1].outputs[0]), "y") &&
				      g->tensors[g->nodes[1].inputs[bn_variant ? 0 : 1]].rank == 1,
			      "%s: MatMul + Add writing y, bias now [4] (%d nodes)", names[bn_variant], g->nnodes);
		loom_graph_free(g);
		check_same(build_bn_matmul, names[bn_variant], NULL);
	}
}

/* Mul by a constant folded into the producer before it:
 *  0: Conv (x [1,2,3,3], W [3,2,2,2], B) -> Mul k [3,1,1]: folded;
 *  1: Gemm (x [2,3], W [3,4], C) -> Mul scalar k first: folded;
 *  2: MatMul (x [1,2,3,3] [..., K=3], W [3,4]) -> Add [4] -> Transpose
 *     (0,3,1,2) -> Mul k [4,1,1] (ConvNeXt's layer scale): folded, the
 *     Transpose writes y;
 *  3: as 0 with k [1,1,2] (along W, not channels): not folded;
 *  4: as 0 with k an activation (a graph input): not folded;
 *  5: as 0 with the Conv's output a graph output too: not folded. */
static int mul_variant;
static loom_graph *build_mul_fold(void)
{
	loom_graph *g = gnew(13);
	float xv[18], wv[24];
	for (int i = 0; i < 18; i++)
		xv[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
	for (int i = 0; i < 24; i++)
		wv[i] = (float)((i * 5) % 9) * 0.125f - 0.5f;
	int m = gval(g, "m"), y = gval(g, "y"), k;
	if (mul_variant == 1) {
		int x = ginput(g, "x", FL, 2, D(2, 3), xv);
		int w = gconst(g, "W", 2, D(3, 4), wv), c = gconst(g, "C", 1, D(4), F(0.1f, -0.2f, 0.3f, 0));
		k = gconst(g, "k", 0, NULL, F(-1.5f));
		gnode(g, "Gemm", "gemm", IN(x, w, c), OUT(m));
		gnode(g, "Mul", "mul", IN(k, m), OUT(y));
	} else if (mul_variant == 2) {
		int x = ginput(g, "x", FL, 4, D(1, 2, 3, 3), xv);
		int w = gconst(g, "W", 2, D(3, 4), wv), b = gconst(g, "bias", 1, D(4), F(0.1f, -0.2f, 0.3f, 0));
		int a = gval(g, "a"), t = gval(g, "t");
		k = gconst(g, "k", 3, D(4, 1, 1), F(0.5f, 2, -1, 1e-3f));
		gnode(g, "MatMul", "mm", IN(x, w), OUT(m));
		gnode(g, "Add", "add", IN(m, b), OUT(a));
		attr_ints(gnode(g, "Transpose", "tr", IN(a), OUT(t)), "perm", 4, D(0, 3, 1, 2));
		gnode(g, "Mul", "mul", IN(t, k), OUT(y));
	} else {
		int x = ginput(g, "x", FL, 4, D(1, 2, 3, 3), xv);
		int w = gconst(g, "W", 4, D(3, 2, 2, 2), wv), b = gconst(g, "B", 1, D(3), F(0.1f, -0.2f, 0.3f));
		k = mul_variant == 3   ? gconst(g, "k", 3, D(1, 1, 2), F(0.5f, 2))
		    : mul_variant == 4 ? ginput(g, "k", FL, 3, D(3, 1, 1), F(0.5f, 2, -1))
				       : gconst(g, "k", 3, D(3, 1, 1), F(0.5f, 2, -1));
		gnode(g, "Conv", "conv", IN(x, w, b), OUT(m));
		gnode(g, "Mul", "mul", IN(m, k), OUT(y));
		if (mul_variant == 5)
			goutput(g, m);
	}
	goutput(g, y);
	return g;
}

static void test_mul_fold(void)
{
	static const char *const names[] = {"mul-fold conv (per channel)",       "mul-fold gemm (scalar first)",
					    "mul-fold matmul+add -> transpose -> mul", "mul-fold conv (along W: kept)",
					    "mul-fold conv (activation scale: kept)", "mul-fold conv (output read twice: kept)"};
	for (mul_variant = 0; mul_variant < 6; mul_variant++) {
		loom_graph *g = build_mul_fold();
		loom_pass_stats st = {0};
		char err[512];
		int n0 = g->nnodes, want = mul_variant < 3;
		int rc = loom_pass_fold_constants(g, &st, err, sizeof err) || /* shapes inferred */
			 loom_pass_fold_batchnorm(g, &st, err, sizeof err);
		CHECK(!rc, "%s: pass runs%s%s", names[mul_variant], rc ? ": " : "", rc ? err : "");
		const loom_node *last = g->nnodes ? &g->nodes[g->nnodes - 1] : NULL;
		if (!rc && want)
			CHECK(g->nnodes == n0 - 1 && !node_named(g, "mul") && st.muls_folded == 1 && st.bn_folded == 0 &&
				      last && !strcmp(tname(g, last->outputs[0]), "y"),
			      "%s: the Mul is gone, %s writes y (%d -> %d nodes)", names[mul_variant],
			      last ? last->op_type : "?", n0, g->nnodes);
		else if (!rc)
			CHECK(g->nnodes == n0 && node_named(g, "mul") && st.muls_folded == 0, "%s: the Mul stays (%d nodes)",
			      names[mul_variant], g->nnodes);
		loom_pass_stats_free(&st);
		loom_graph_free(g);
		if (mul_variant != 4)
			check_same(build_mul_fold, names[mul_variant], NULL);
	}
}

/* x [2,3] -> MatMul m1 -> Add bias -> Clip -> Gemm gm -> LeakyRelu ->
 * Add ad (+ z) -> Relu rf -> MatMul m2 -> y; x4 -> Conv cv -> Relu -> q;
 * x4 -> Conv cv2 -> p2 (graph output too) -> Relu -> q2 */
static loom_graph *build_fuse(void)
{
	loom_graph *g = gnew(13);
	static const float x4v[18] = {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, 0.5f, 0.25f, 0, 3, 2, 1};
	int x = ginput(g, "x", FL, 2, D(2, 3), F(1, -2, 3, 0.5f, 1, -1));
	int z = ginput(g, "z", FL, 2, D(2, 4), F(1, 2, 3, 4, -1, -2, -3, -4));
	int x4 = ginput(g, "x4", FL, 4, D(1, 2, 3, 3), x4v);
	int w1 = gconst(g, "W1", 2, D(3, 4), F(1, 0, 2, -1, 1, 1, 0.5f, 0.5f, 0, 3, -2, 1));
	int b1 = gconst(g, "b1", 1, D(4), F(0.1f, -0.2f, 0.3f, 0));
	int lo = gconst(g, "lo", 0, NULL, F(0));
	int hi = gconst(g, "hi", 0, NULL, F(6));
	int w2 = gconst(g, "W2", 2, D(4, 4), F(1, 0, 0, 1, 0, 1, 1, 0, -1, 0, 1, 0, 0.5f, 0.5f, 0.5f, 0.5f));
	int wc = gconst(g, "Wc", 4, D(3, 2, 1, 1), F(1, 2, -1, 0.5f, 3, 1));
	int a = gval(g, "a"), b = gval(g, "b"), c = gval(g, "c"), d = gval(g, "d"), e = gval(g, "e");
	int f = gval(g, "f"), h = gval(g, "h"), y = gval(g, "y"), p = gval(g, "p"), q = gval(g, "q");
	int p2 = gval(g, "p2"), q2 = gval(g, "q2");
	loom_node *n;
	gnode(g, "MatMul", "m1", IN(x, w1), OUT(a));
	gnode(g, "Add", "bias", IN(b1, a), OUT(b));
	gnode(g, "Clip", "clip", IN(b, lo, hi), OUT(c));
	gnode(g, "Gemm", "gm", IN(c, w2), OUT(d));
	n = gnode(g, "LeakyRelu", "leaky", IN(d), OUT(e));
	attr_f(n, "alpha", 0.1f);
	gnode(g, "Add", "ad", IN(e, z), OUT(f));
	gnode(g, "Relu", "rf", IN(f), OUT(h));
	gnode(g, "MatMul", "m2", IN(h, w2), OUT(y));
	gnode(g, "Conv", "cv", IN(x4, wc), OUT(p));
	gnode(g, "Relu", "cr", IN(p), OUT(q));
	gnode(g, "Conv", "cv2", IN(x4, wc), OUT(p2));
	gnode(g, "Relu", "cr2", IN(p2), OUT(q2));
	goutput(g, y);
	goutput(g, q);
	goutput(g, p2);
	goutput(g, q2);
	return g;
}

static int has_fusion(const loom_graph *g, const loom_pass_stats *st, const char *node, const char *bias,
		      const char *act)
{
	for (int i = 0; i < st->nfusions; i++) {
		const loom_fusion *f = &st->fusions[i];
		if (strcmp(g->nodes[f->node].name, node))
			continue;
		if ((bias ? f->bias_node >= 0 && !strcmp(g->nodes[f->bias_node].name, bias) : f->bias_node < 0) &&
		    (act ? f->act_node >= 0 && !strcmp(g->nodes[f->act_node].name, act) : f->act_node < 0))
			return 1;
	}
	return 0;
}

static void test_fuse(void)
{
	loom_graph *g = build_fuse();
	loom_pass_stats st = {0};
	char err[512];
	int n0 = g->nnodes;
	int rc = loom_pass_fold_constants(g, &st, err, sizeof err) || loom_pass_fuse(g, &st, err, sizeof err);
	CHECK(!rc, "fuse: passes run%s%s", rc ? ": " : "", rc ? err : "");
	if (!rc) {
		CHECK(g->nnodes == n0, "fuse: no node removed (%d of %d)", g->nnodes, n0);
		CHECK(has_fusion(g, &st, "m1", "bias", "clip"), "fuse: MatMul m1 + Add bias + Clip");
		CHECK(has_fusion(g, &st, "gm", NULL, "leaky"), "fuse: Gemm gm + LeakyRelu");
		CHECK(has_fusion(g, &st, "ad", NULL, "rf"), "fuse: Add ad + Relu rf");
		CHECK(has_fusion(g, &st, "cv", NULL, "cr"), "fuse: Conv cv + Relu cr");
		CHECK(st.nfusions == 4, "fuse: 4 groups (m2 has no activation, cv2's output is a graph output) (%d)",
		      st.nfusions);
	}
	loom_pass_stats_free(&st);
	loom_graph_free(g);
	check_same(build_fuse, "fuse", NULL);
}

/* deterministic values in [lo, hi) */
static void fill(float *v, int n, unsigned seed, float lo, float hi)
{
	uint32_t x = seed * 2654435761u + 1;
	for (int i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		v[i] = lo + (hi - lo) * (float)(x >> 8) / 16777216.0f;
	}
}

/* ------------------------------------------------------------------ 4b. dead taps */

/* one Conv whose kernel taps read only padding in places:
 * 0: x [1,4,14,14], 3x3, dilation 24, pads 24: its centre tap, 1x1;
 * 1: x [1,4,5,20], 3x3, dilation 6, pads 6, stride 2: one row, 1x3;
 * 2: x [1,2,6], kernel 5, dilation 4, auto_pad SAME_UPPER: taps 1..3;
 * 3: x [1,4,8,8], 3x3, pads 1: nothing to trim */
static int trim_variant;
static loom_graph *build_trim(void)
{
	static const struct {
		int rank;
		int64_t x[4], w[4], d, p, s;
	} v[4] = {{4, {1, 4, 14, 14}, {6, 4, 3, 3}, 24, 24, 1},
		  {4, {1, 4, 5, 20}, {6, 4, 3, 3}, 6, 6, 2},
		  {3, {1, 2, 6}, {3, 2, 5}, 4, -1, 1},
		  {4, {1, 4, 8, 8}, {6, 4, 3, 3}, 1, 1, 1}};
	const int k = trim_variant, nd = v[k].rank - 2;
	loom_graph *g = gnew(13);
	float xv[4 * 14 * 20], wv[6 * 4 * 9], bv[6];
	int nx = 1, nw = 1;
	for (int i = 0; i < v[k].rank; i++)
		nx *= (int)v[k].x[i], nw *= (int)v[k].w[i];
	fill(xv, nx, 7, -1.0f, 1.0f);
	fill(wv, nw, 8, -0.5f, 0.5f);
	fill(bv, 6, 9, -0.2f, 0.2f);
	int x = ginput(g, "x", FL, v[k].rank, v[k].x, xv), w = gconst(g, "W", v[k].rank, v[k].w, wv);
	int b = gconst(g, "B", 1, D(v[k].w[0]), bv), y = gval(g, "y");
	loom_node *n = gnode(g, "Conv", "conv", IN(x, w, b), OUT(y));
	int64_t dl[2] = {v[k].d, v[k].d}, st[2] = {v[k].s, v[k].s}, pd[4] = {v[k].p, v[k].p, v[k].p, v[k].p};
	OC_MUST(loom_node_set_attr_ints(n, "dilations", dl, nd));
	OC_MUST(loom_node_set_attr_ints(n, "strides", st, nd));
	if (v[k].p < 0)
		OC_MUST(loom_node_set_attr_str(n, "auto_pad", "SAME_UPPER"));
	else
		OC_MUST(loom_node_set_attr_ints(n, "pads", pd, 2 * nd));
	goutput(g, y);
	return g;
}

static void test_trim(void)
{
	static const char *const names[4] = {"trim (dilation 24 on 14x14)", "trim (one row, stride 2)",
					     "trim (1-D, SAME_UPPER)", "trim (nothing to trim)"};
	/* per variant after the pass: kernel, pads (begins, ends), dilations */
	static const int64_t want[4][3][4] = {{{1, 1}, {0, 0, 0, 0}, {1, 1}},
					      {{1, 3}, {0, 6, 0, 6}, {1, 6}},
					      {{3}, {4, 4}, {4}},
					      {{3, 3}, {1, 1, 1, 1}, {1, 1}}};
	for (trim_variant = 0; trim_variant < 4; trim_variant++) {
		const char *L = names[trim_variant];
		loom_graph *g = build_trim();
		loom_pass_stats st = {0};
		char err[512], got[128] = "";
		int rc = loom_pass_fold_constants(g, &st, err, sizeof err) || loom_pass_trim_taps(g, &st, err, sizeof err);
		if (CHECK(!rc, "%s: passes run%s%s", L, rc ? ": " : "", rc ? err : "")) {
			const loom_node *n = node_named(g, "conv");
			const loom_tensor *w = n ? loom_node_in(g, n, 1) : NULL;
			int nd = w ? w->rank - 2 : 0, cp = 0, cd = 0, ok = w && nd >= 1;
			const int64_t *pd = n ? loom_attr_ints(n, "pads", &cp) : NULL;
			const int64_t *dl = n ? loom_attr_ints(n, "dilations", &cd) : NULL;
			size_t o = 0;
			for (int i = 0; w && i < nd; i++) {
				ok &= w->dims[2 + i] == want[trim_variant][0][i] && dl && cd == nd &&
				      dl[i] == want[trim_variant][2][i];
				o += (size_t)snprintf(got + o, sizeof got - o, "%sk %lld d %lld", i ? ", " : "",
						      (long long)w->dims[2 + i], dl ? (long long)dl[i] : 0LL);
			}
			for (int i = 0; i < 2 * nd; i++) {
				ok &= pd && cp == 2 * nd && pd[i] == want[trim_variant][1][i];
				o += (size_t)snprintf(got + o, sizeof got - o, "%s%lld", i ? " " : ", pads ",
						      pd ? (long long)pd[i] : -1LL);
			}
			int trimmed = trim_variant < 3;
			if (trim_variant == 2)
				ok &= !strcmp(loom_attr_str(n, "auto_pad", "NOTSET"), "NOTSET");
			CHECK(ok && st.convs_trimmed == trimmed, "%s: %s; %d trimmed (want %d)", L, got, st.convs_trimmed,
			      trimmed);
			check_valid(g, L);
		}
		loom_graph_free(g);
		check_same(build_trim, L, NULL);
	}
}

/* everything at once: x [1,3,5,5] -> Conv 3x3 pad 1 (8 channels, bias) ->
 * BatchNormalization -> Relu -> Dropout -> d; Shape(d) -> Gather 0 ->
 * Unsqueeze -> Concat with [-1] -> Reshape(d) -> Identity -> y; x ->
 * Sigmoid (unused) */
static loom_graph *build_pipeline(void)
{
	loom_graph *g = gnew(13);
	float xv[75], wv[216], bv[8], gam[8], bet[8], mu[8], va[8];
	int64_t zero = 0, axes0 = 0, minus1 = -1;
	int x, w, b, sc, be, mean, var, c, bn, r, d, s, n0, n0u, shp, flat, y, sg, i0, ax, m1;
	loom_node *n;
	fill(xv, 75, 1, -2, 2);
	fill(wv, 216, 2, -1, 1);
	fill(bv, 8, 3, -0.5f, 0.5f);
	fill(gam, 8, 4, 0.5f, 2);
	fill(bet, 8, 5, -1, 1);
	fill(mu, 8, 6, -1, 1);
	fill(va, 8, 7, 0.1f, 3);
	x = ginput(g, "x", FL, 4, D(1, 3, 5, 5), xv);
	w = gconst(g, "W", 4, D(8, 3, 3, 3), wv);
	b = gconst(g, "B", 1, D(8), bv);
	sc = gconst(g, "gamma", 1, D(8), gam);
	be = gconst(g, "beta", 1, D(8), bet);
	mean = gconst(g, "mean", 1, D(8), mu);
	var = gconst(g, "var", 1, D(8), va);
	i0 = gtensor(g, "i0", LOOM_DT_INT64, 0, NULL, &zero, 1);
	ax = gtensor(g, "axes0", LOOM_DT_INT64, 1, D(1), &axes0, 1);
	m1 = gtensor(g, "minus1", LOOM_DT_INT64, 1, D(1), &minus1, 1);
	c = gval(g, "c");
	bn = gval(g, "bn_out");
	r = gval(g, "r");
	d = gval(g, "d");
	s = gval(g, "s");
	n0 = gval(g, "n0");
	n0u = gval(g, "n0u");
	shp = gval(g, "shp");
	flat = gval(g, "flat");
	y = gval(g, "y");
	sg = gval(g, "sg");
	n = gnode(g, "Conv", "conv", IN(x, w, b), OUT(c));
	attr_ints(n, "pads", 4, D(1, 1, 1, 1));
	gnode(g, "Sigmoid", "sigmoid", IN(x), OUT(sg));
	gnode(g, "BatchNormalization", "bn", IN(c, sc, be, mean, var), OUT(bn));
	gnode(g, "Relu", "relu", IN(bn), OUT(r));
	gnode(g, "Dropout", "drop", IN(r), OUT(d));
	gnode(g, "Shape", "shape", IN(d), OUT(s));
	gnode(g, "Gather", "gather", IN(s, i0), OUT(n0));
	gnode(g, "Unsqueeze", "unsq", IN(n0, ax), OUT(n0u));
	n = gnode(g, "Concat", "concat", IN(n0u, m1), OUT(shp));
	attr_i(n, "axis", 0);
	gnode(g, "Reshape", "reshape", IN(d, shp), OUT(flat));
	gnode(g, "Identity", "ident", IN(flat), OUT(y));
	goutput(g, y);
	return g;
}

static void test_pipeline(void)
{
	loom_graph *g = build_pipeline();
	loom_pass_stats st = {0};
	char err[512];
	int rc = loom_simplify(g, &st, err, sizeof err);
	CHECK(!rc, "pipeline: loom_simplify runs%s%s", rc ? ": " : "", rc ? err : "");
	if (!rc) {
		const loom_node *rs = node_named(g, "reshape");
		CHECK(g->nnodes == 3 && node_named(g, "conv") && node_named(g, "relu") && rs,
		      "pipeline: Conv, Relu, Reshape left (%d -> %d nodes)", st.nodes_before, g->nnodes);
		CHECK(st.folded == 4 && st.identities_removed == 2 && st.dead_removed == 1 && st.bn_folded == 1,
		      "pipeline: folded 4 (Shape chain), removed 2 (Dropout, Identity), dead 1, bn 1 (%d, %d, %d, %d)",
		      st.folded, st.identities_removed, st.dead_removed, st.bn_folded);
		if (rs)
			CHECK(!strcmp(tname(g, rs->outputs[0]), "y") && !strcmp(tname(g, rs->inputs[0]), "r") &&
				      g->tensors[rs->inputs[1]].is_const,
			      "pipeline: Reshape reads r and the folded shape, writes y");
		CHECK(has_fusion(g, &st, "conv", NULL, "relu") && st.nfusions == 1, "pipeline: Conv + Relu fused (%d)",
		      st.nfusions);
	}
	loom_pass_stats_free(&st);
	loom_graph_free(g);
	check_same(build_pipeline, "pipeline", NULL);
}

/* ================================================================== part 2: models */

/* "Conv+Relu x12, Add+Relu x3" */
static void fusion_summary(const loom_graph *g, const loom_pass_stats *st, char *buf, size_t len)
{
	char keys[32][64];
	int counts[32], nk = 0;
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < st->nfusions; i++) {
		const loom_fusion *f = &st->fusions[i];
		char k[64];
		int j;
		snprintf(k, sizeof k, "%s%s%s%s", g->nodes[f->node].op_type, f->bias_node >= 0 ? "+Add" : "",
			 f->act_node >= 0 ? "+" : "", f->act_node >= 0 ? g->nodes[f->act_node].op_type : "");
		for (j = 0; j < nk; j++)
			if (!strcmp(keys[j], k))
				break;
		if (j == nk && nk < 32) {
			snprintf(keys[nk], sizeof keys[nk], "%s", k);
			counts[nk++] = 0;
		}
		if (j < nk)
			counts[j]++;
	}
	for (int j = 0; j < nk && o < len; j++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s x%d", j ? ", " : "", keys[j], counts[j]);
	if (!nk)
		snprintf(buf, len, "none");
}

/* Load dir/model.onnx (fixing input shapes from the test inputs if the
 * model's are dynamic), simplify, run test_data_set_0, compare. */
static void run_model(const char *dir, const char *label)
{
	char path[1400], err[1024], why[1400] = "", fz[600];
	loom_graph *g = NULL;
	loom_pass_stats st = {0};
	loom_tensor ins[8];
	int nin = 0;
	memset(ins, 0, sizeof ins);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof err)) {
		static const char *const by_design[] = {"float16", "bfloat16", "string", "sequence", "optional",
							"subgraph", "domain", NULL};
		if (oc_err_has_any(err, by_design)) {
			check_skip("%s: %s", label, err);
			goto out;
		}
	}
	for (; nin < 8; nin++) {
		int rc = oc_load_pb(dir, "input", nin, &ins[nin], err, sizeof err);
		if (!rc)
			break;
		if (rc < 0) {
			CHECK_FAIL("%s: %s", label, err);
			goto out;
		}
	}
	if (!g) { /* dynamic input dimensions: fix them from the test inputs */
		loom_input_shape shp[8];
		int ns = 0;
		for (int k = 0; k < nin; k++)
			if (ins[k].name && ins[k].name[0]) {
				memset(&shp[ns], 0, sizeof shp[ns]);
				snprintf(shp[ns].name, sizeof shp[ns].name, "%s", ins[k].name);
				shp[ns].rank = ins[k].rank;
				memcpy(shp[ns].dims, ins[k].dims, sizeof ins[k].dims);
				ns++;
			}
		snprintf(path, sizeof path, "%s/model.onnx", dir);
		if (!ns || loom_onnx_load(path, shp, ns, &g, err, sizeof err)) {
			CHECK_FAIL("%s: load: %s", label, err);
			goto out;
		}
	}
	for (int k = 0; k < nin; k++) {
		int ti = oc_input_tensor(g, k, &ins[k]);
		if (ti < 0) {
			CHECK_FAIL("%s: input_%d.pb '%s' matches no graph input", label, k, ins[k].name);
			goto out;
		}
		oc_set_tensor(&g->tensors[ti], &ins[k]);
	}
	if (loom_simplify(g, &st, err, sizeof err)) {
		CHECK_FAIL("%s: loom_simplify: %s", label, err);
		goto out;
	}
	{
		char v[300];
		if (!graph_valid(g, v, sizeof v)) {
			CHECK_FAIL("%s: graph invalid after loom_simplify: %s", label, v);
			goto out;
		}
	}
	if (loom_ref_run(g, err, sizeof err)) {
		CHECK_FAIL("%s: run after loom_simplify: %s", label, err);
		goto out;
	}
	oc_compare_outputs(g, dir, 1e-3, 1e-4, why, sizeof why);
	fusion_summary(g, &st, fz, sizeof fz);
	CHECK(!why[0],
	      "%s: %d -> %d nodes (folded %d, identity %d removed / %d kept, dead %d, bn %d); fusions %d: %s%s%s",
	      label, st.nodes_before, st.nodes_after, st.folded, st.identities_removed, st.identities_kept,
	      st.dead_removed, st.bn_folded, st.nfusions, fz, why[0] ? "; " : "", why);
out:
	for (int k = 0; k < nin; k++)
		loom_tensor_clear(&ins[k]);
	loom_pass_stats_free(&st);
	loom_graph_free(g);
}

/* a subfolder of root with a model.onnx whose name starts with one of
 * prefixes (NULL: all) */
static int want_model(const char *root, const char *name, void *ctx)
{
	const char *const *prefixes = ctx;
	int want = !prefixes;
	char p[1200];
	for (int i = 0; prefixes && prefixes[i]; i++)
		want |= !strncmp(name, prefixes[i], strlen(prefixes[i]));
	snprintf(p, sizeof p, "%s/%s/model.onnx", root, name);
	return want && name[0] != '.' && oc_file_exists(p);
}

/* every such subfolder of root */
static void run_models(const char *root, const char *const *prefixes, int required)
{
	char **names;
	size_t cnt;
	if (oc_list(root, want_model, (void *)(uintptr_t)prefixes, &names, &cnt)) {
		check_skip("%s: no such directory%s", root, required ? " (make models)" : "");
		return;
	}
	for (size_t i = 0; i < cnt; i++) {
		char dir[1100];
		snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
		run_model(dir, names[i]);
	}
	oc_free_names(names, cnt);
}

int main(int argc, char **argv)
{
	check_init(CHECK_SKIPS);
	static const char *const node_prefixes[] = {"test_batchnorm_", "test_conv_", "test_identity",
						    "test_dropout_", NULL};
	const char *build = getenv("BUILD");
	char models[1000];
	/* the models folder: the first argument, else $BUILD/models as in tests/run.sh */
	snprintf(models, sizeof models, "%s", argc > 1 ? argv[1] : "build/models");
	if (argc <= 1 && build && build[0])
		snprintf(models, sizeof models, "%s/models", build);
	test_fold();
	test_identity();
	test_dead();
	test_bn_conv();
	test_bn_gemm();
	test_bn_matmul();
	test_mul_fold();
	test_fuse();
	test_trim();
	test_pipeline();
	run_models(models, NULL, 1);
	run_models("/usr/share/libonnx-testdata/data/node", node_prefixes, 0);
	return check_report();
}
