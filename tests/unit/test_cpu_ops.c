/* test_cpu_ops.c - unit tests of the neural-network CPU kernels
 * (runtime/ops_conv.c, ops_pool.c, ops_norm.c, ops_unary.c, ops_binary.c),
 * of the operator table (runtime/ops.c) and of the reference executor
 * (runtime/cpu.c) of runtime/cpu_ops.h.
 *
 * Part 1: the operator table (loom_cpu_op_find: the highest min_opset <=
 * opset; loom_cpu_op_any), loom_broadcast_shape, loom_tensor_set_data,
 * constant folding in loom_graph_infer, and error messages that name the
 * node, its operator and the problem.
 * Part 2: one-node graphs built here with hand-computed results for every
 * neural-network operator and its attributes (Conv's group, strides,
 * dilations, pads and auto_pad in 1-D, 2-D and 3-D; ConvTranspose; Gemm;
 * MatMul's batch broadcasting and 1-D cases; Gemm and MatMul of odd sizes
 * (1x1x1 to 300x257x191, every transpose) against a double-precision sum;
 * pooling with ceil_mode, count_include_pad and MaxPool's Indices (and
 * MaxPool's loop without them bit for bit against the general one); the
 * normalizations; the activations; broadcasting arithmetic in float and
 * int64; comparisons, logic, Where, Clip before and after opset 11; the
 * variadic Max/Min/Sum/Mean; Dropout).
 * Part 3: ONNX's own node test cases (test_<op>.../model.onnx with
 * test_data_set_0, from Debian's libonnx-testdata under
 * /usr/share/libonnx-testdata/data/node, or the directory given as the
 * first argument) whose nodes are all neural-network operators (nn_ops):
 * load, run, compare every output (floats within rtol 1e-3, atol 1e-5,
 * integers and bools exactly), one line per case. Cases with another
 * operator are left to test_cpu_shape; cases the importer rejects by
 * design (float16, strings, ...) and the few with a documented reason
 * (random training-mode Dropout) are skipped with the reason.
 *
 * Prints one line per check and ends with "N passed, M failed, K skipped";
 * exit status 1 on any failure. */
#include "runtime/cpu_ops.h"
#include "ir/ir.h"
#include "compiler/onnx.h"
#include "onnx_case.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define B8(...) ((const uint8_t[]){__VA_ARGS__})
#define FL LOOM_DT_FLOAT
#define BOOL LOOM_DT_BOOL
#define INT64 LOOM_DT_INT64

/* ------------------------------------------------------------------ graph building */

#define gnew(opset) oc_graph_new((opset), "(built by test_cpu_ops)")

/* a tensor of g; data (numel * element size bytes) copied when given */
#define gtensor(g, name, dtype, rank, dims, data, is_const) \
	OC_MUST(loom_graph_add_tensor((g), (name), (dtype), (rank), (dims), (data), (is_const)))

/* a graph input with its data */
#define ginput oc_add_input

#define gconst(g, name, dtype, rank, dims, data) gtensor((g), (name), (dtype), (rank), (dims), (data), 1)

/* a node with nout (<= 8) new output tensors "<name>:<k>" that are graph
 * outputs (an input index -1 is an omitted optional input) */
static loom_node *gnode(loom_graph *g, const char *op, const char *name, const int *ins, int nin,
			int nout)
{
	int outs[8], i;
	OC_MUST(nout <= 8 ? 0 : -1);
	for (int k = 0; k < nout; k++) {
		char tn[128];
		snprintf(tn, sizeof tn, "%s:%d", name, k);
		outs[k] = gtensor(g, tn, LOOM_DT_UNDEFINED, 0, NULL, NULL, 0);
		OC_MUST(loom_graph_add_output(g, outs[k]));
	}
	i = OC_MUST(loom_graph_add_node(g, op, name, ins, nin, outs, nout));
	return &g->nodes[i];
}

#define attr_i(n, name, v) OC_MUST(loom_node_set_attr_int((n), (name), (v)))
#define attr_f(n, name, v) OC_MUST(loom_node_set_attr_float((n), (name), (v)))
#define attr_s(n, name, v) OC_MUST(loom_node_set_attr_str((n), (name), (v)))
#define attr_ints(n, name, cnt, v) OC_MUST(loom_node_set_attr_ints((n), (name), (v), (cnt)))

/* ------------------------------------------------------------------ comparing */

#define compare oc_compare

/* Run g; on failure report it and return -1. */
static int grun(loom_graph *g, const char *label)
{
	char err[512];
	if (loom_ref_run(g, err, sizeof err)) {
		CHECK_FAIL("%s: run failed: %s", label, err);
		return -1;
	}
	return 0;
}

/* Check output k of g's first node against the expected values. */
static void expect_out(loom_graph *g, int k, const char *label, int dtype, int rank,
		       const int64_t *dims, const void *data)
{
	char why[256];
	const loom_tensor *t = &g->tensors[g->nodes[0].outputs[k]];
	compare(t, dtype, rank, dims, data, 1e-5, 1e-6, why, sizeof why);
	CHECK(!why[0], "%s%s%s", label, why[0] ? ": " : "", why);
}

/* Run g, check the first node's output 0 and free g. */
static void expect_run(loom_graph *g, const char *label, int dtype, int rank, const int64_t *dims,
		       const void *data)
{
	if (!grun(g, label))
		expect_out(g, 0, label, dtype, rank, dims, data);
	loom_graph_free(g);
}

/* Run g expecting failure with a message containing each of the NULL
 * terminated substrings; free g. */
static void expect_fail_v(loom_graph *g, const char *label, const char *const *subs)
{
	char err[512] = "";
	int rc = loom_ref_run(g, err, sizeof err);
	const char *missing = NULL;
	for (int i = 0; subs[i] && !missing; i++)
		if (!strstr(err, subs[i]))
			missing = subs[i];
	if (!rc)
		CHECK_FAIL("%s: ran without error", label);
	else if (missing)
		CHECK_FAIL("%s: message \"%s\" lacks \"%s\"", label, err, missing);
	else
		CHECK(1, "%s (\"%s\")", label, err);
	loom_graph_free(g);
}

#define expect_fail(g, label, ...) expect_fail_v((g), (label), (const char *const[]){__VA_ARGS__})

/* a one-node graph: one float input x, op with name "t" */
static loom_graph *unary_graph(int64_t opset, const char *op, int dtype, int rank, const int64_t *dims,
			       const void *x, loom_node **np)
{
	loom_graph *g = gnew(opset);
	int xi = ginput(g, "x", dtype, rank, dims, x);
	*np = gnode(g, op, "t", (int[]){xi}, 1, 1);
	return g;
}

/* a one-node graph with two inputs a, b (graph inputs) */
static loom_graph *binary_graph(int64_t opset, const char *op, int dt, int ra, const int64_t *da,
				const void *a, int dtb, int rb, const int64_t *db, const void *b, loom_node **np)
{
	loom_graph *g = gnew(opset);
	int ai = ginput(g, "a", dt, ra, da, a);
	int bi = ginput(g, "b", dtb, rb, db, b);
	*np = gnode(g, op, "t", (int[]){ai, bi}, 2, 1);
	return g;
}

static const float ones9[9];
static loom_graph *conv_graph(const char *op, int rx, const int64_t *dx, const float *x, const int64_t *dw,
			      const float *w, int64_t nb, const float *b, loom_node **np);

/* ================================================================== part 1: registry and executor */

static void test_registry(void)
{
	int bad = 0, checked = 0;
	/* every op type at every opset: the entry with the highest min_opset <= opset */
	for (const loom_cpu_op *o = loom_cpu_ops; o->op_type; o++) {
		const loom_cpu_op *any = loom_cpu_op_any(o->op_type);
		if (!any || strcmp(any->op_type, o->op_type) || o->npu < 0 || o->npu >= LOOM_NPU_COUNT ||
		    any->npu != o->npu || !o->infer || !o->run) {
			if (!bad)
				printf("     %s: loom_cpu_op_any or the row is wrong\n", o->op_type);
			bad++;
		}
		for (int64_t opset = 1; opset <= 21; opset++) {
			const loom_cpu_op *best = NULL, *got = loom_cpu_op_find(o->op_type, opset);
			for (const loom_cpu_op *p = loom_cpu_ops; p->op_type; p++)
				if (!strcmp(p->op_type, o->op_type) && p->min_opset <= opset &&
				    (!best || p->min_opset > best->min_opset))
					best = p;
			checked++;
			if (got != best && !(got && best && got->min_opset == best->min_opset)) {
				if (!bad)
					printf("     %s opset %lld: wrong entry\n", o->op_type, (long long)opset);
				bad++;
			}
		}
	}
	CHECK(!bad, "loom_cpu_op_find picks the highest min_opset <= opset, loom_cpu_op_any finds every row "
		    "(%d lookups, %d wrong)",
	      checked, bad);
	CHECK(loom_cpu_op_find("Celu", 11) == NULL && loom_cpu_op_find("Celu", 12) != NULL,
	      "Celu has a kernel from opset 12 only");
	CHECK(loom_cpu_op_find("LayerNormalization", 16) == NULL &&
		      loom_cpu_op_find("LayerNormalization", 17) != NULL,
	      "LayerNormalization has a kernel from opset 17");
	CHECK(loom_cpu_op_find("NoSuchOp", 13) == NULL && loom_cpu_op_find(NULL, 13) == NULL,
	      "unknown op types have no kernel");
	CHECK(loom_cpu_op_find("Conv", 13) && loom_cpu_op_find("Reshape", 13) &&
		      loom_cpu_op_find("QLinearConv", 13),
	      "the table has every kernel file's operators (Conv, Reshape, QLinearConv)");
}

static void test_helpers(void)
{
	loom_tensor a, b;
	int rank = -1;
	int64_t dims[LOOM_MAX_RANK];
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.rank = 3;
	a.dims[0] = 2, a.dims[1] = 1, a.dims[2] = 3;
	b.rank = 2;
	b.dims[0] = 4, b.dims[1] = 1;
	CHECK(!loom_broadcast_shape(&a, &b, &rank, dims) && rank == 3 && dims[0] == 2 && dims[1] == 4 &&
		      dims[2] == 3,
	      "loom_broadcast_shape [2,1,3] x [4,1] = [2,4,3]");
	b.rank = 0;
	CHECK(!loom_broadcast_shape(&a, &b, &rank, dims) && rank == 3 && dims[1] == 1,
	      "loom_broadcast_shape with a scalar");
	b.rank = 1;
	b.dims[0] = 2;
	CHECK(loom_broadcast_shape(&a, &b, &rank, dims) == -1, "loom_broadcast_shape [2,1,3] x [2] fails");

	a.dtype = LOOM_DT_FLOAT;
	a.rank = 1;
	a.dims[0] = 2;
	a.data = NULL;
	CHECK(loom_tensor_set_data(&a, F(1, 2), 8) == 0 && a.data && ((float *)a.data)[1] == 2,
	      "loom_tensor_set_data copies");
	CHECK(loom_tensor_set_data(&a, F(1, 2, 3), 12) == -1 && ((float *)a.data)[1] == 2,
	      "loom_tensor_set_data refuses a wrong size and keeps the data");
	free(a.data);
}

static void test_executor(void)
{
	loom_graph *g;
	loom_node *n;
	char err[512];
	int x, c1, c2, s;

	/* a node without kernel */
	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(2), F(1, 2));
	gnode(g, "FancyOp", "fancy_1", (int[]){x}, 1, 1);
	expect_fail(g, "an operator without kernel", "node fancy_1: operator FancyOp (opset 13) has no CPU kernel",
		    NULL);

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(2), F(1, 2));
	n = gnode(g, "Relu", "dom_relu", (int[]){x}, 1, 1);
	free(n->domain);
	n->domain = oc_xstrdup("com.example");
	expect_fail(g, "a node of another domain", "node dom_relu: operator com.example.Relu (opset 13)",
		    "no CPU kernel", NULL);

	/* inference errors name the node, op and problem */
	g = gnew(13);
	x = ginput(g, "x", FL, 4, D(1, 3, 4, 4), NULL);
	c1 = gconst(g, "w", FL, 4, D(4, 2, 3, 3), NULL);
	n = gnode(g, "Conv", "conv_bad", (int[]){x, c1}, 2, 1);
	attr_i(n, "group", 2);
	CHECK(loom_graph_infer(g, err, sizeof err) == -1 && strstr(err, "conv_bad") &&
		      strstr(err, "Conv") && strstr(err, "group"),
	      "Conv with a bad group fails in inference: %s", err);
	loom_graph_free(g);

	g = binary_graph(13, "Add", FL, 1, D(2), F(1, 2), FL, 1, D(3), F(1, 2, 3), &n);
	expect_fail(g, "Add of [2] and [3]", "'t'", "Add", "do not broadcast", NULL);

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(2), NULL);
	gnode(g, "Relu", "r", (int[]){x}, 1, 1);
	expect_fail(g, "running without input data", "graph input 'x' has no data", NULL);

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(2), F(1, 2));
	c1 = gtensor(g, "nowhere", LOOM_DT_UNDEFINED, 0, NULL, NULL, 0);
	gnode(g, "Add", "add_u", (int[]){x, c1}, 2, 1);
	expect_fail(g, "an input no node computes", "add_u", "'nowhere'", "no known type", NULL);

	g = conv_graph("Conv", 4, D(1, 1, 2, 2), F(1, 2, 3, 4), D(1, 1, 3, 3), ones9, 0, NULL, &n);
	free(n->name);
	n->name = oc_xstrdup("conv_big");
	expect_fail(g, "Conv kernel larger than the input", "conv_big", "Conv", "exceeds the padded input", NULL);

	/* constant folding: Add of two int64 constants feeds Reshape's shape */
	g = gnew(13);
	x = ginput(g, "x", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	c1 = gconst(g, "c1", INT64, 1, D(2), I64(1, 1));
	c2 = gconst(g, "c2", INT64, 1, D(2), I64(2, 1));
	n = gnode(g, "Add", "shape_add", (int[]){c1, c2}, 2, 1);
	s = n->outputs[0];
	gnode(g, "Reshape", "reshape", (int[]){x, s}, 2, 1);
	{
		int ok = loom_graph_infer(g, err, sizeof err) == 0;
		const loom_tensor *st = &g->tensors[s], *y = &g->tensors[g->nodes[1].outputs[0]];
		CHECK(ok && st->is_const && st->data && ((int64_t *)st->data)[0] == 3 &&
			      ((int64_t *)st->data)[1] == 2,
		      "loom_graph_infer folds Add of constants (shape [3,2] known)%s%s", ok ? "" : ": ",
		      ok ? "" : err);
		CHECK(ok && y->rank == 2 && y->dims[0] == 3 && y->dims[1] == 2 && y->dtype == FL,
		      "Reshape after the folded node gets shape [3,2]");
		ok = loom_ref_run(g, err, sizeof err) == 0;
		CHECK(ok && y->data && ((float *)y->data)[5] == 6, "loom_ref_run of the folded graph%s%s",
		      ok ? "" : ": ", ok ? "" : err);
		ok = loom_ref_run(g, err, sizeof err) == 0;
		CHECK(ok && ((int64_t *)st->data)[0] == 3 && ((float *)y->data)[4] == 5,
		      "loom_ref_run twice gives the same result");
	}
	loom_graph_free(g);

	/* a chain: every tensor holds its data after the run */
	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(3), F(-1, 0, 2));
	n = gnode(g, "Relu", "r1", (int[]){x}, 1, 1);
	c1 = n->outputs[0];
	c2 = gconst(g, "two", FL, 0, NULL, F(2));
	gnode(g, "Mul", "m1", (int[]){c1, c2}, 2, 1);
	if (!grun(g, "Relu -> Mul chain")) {
		char why[256];
		compare(&g->tensors[c1], FL, 1, D(3), F(0, 0, 2), 0, 0, why, sizeof why);
		CHECK(!why[0], "chain: the intermediate tensor keeps its data %s", why);
		compare(&g->tensors[g->nodes[1].outputs[0]], FL, 1, D(3), F(0, 0, 4), 0, 0, why, sizeof why);
		CHECK(!why[0], "chain: Relu then Mul by a scalar constant %s", why);
	}
	loom_graph_free(g);
}

/* ================================================================== part 2: the kernels */

static const float x09[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
static const float x016[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const float ones9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

/* a Conv / ConvTranspose graph: x and w constant-free graph inputs, b optional */
static loom_graph *conv_graph(const char *op, int rx, const int64_t *dx, const float *x, const int64_t *dw,
			      const float *w, int64_t nb, const float *b, loom_node **np)
{
	loom_graph *g = gnew(13);
	int xi = ginput(g, "x", FL, rx, dx, x);
	int wi = gconst(g, "w", FL, rx, dw, w);
	if (b) {
		int bi = gconst(g, "b", FL, 1, &nb, b);
		*np = gnode(g, op, "t", (int[]){xi, wi, bi}, 3, 1);
	} else {
		*np = gnode(g, op, "t", (int[]){xi, wi}, 2, 1);
	}
	return g;
}

static void test_conv(void)
{
	loom_graph *g;
	loom_node *n;

	g = conv_graph("Conv", 4, D(1, 1, 3, 3), x09, D(1, 1, 2, 2), ones9, 0, NULL, &n);
	expect_run(g, "Conv 2x2 ones on 3x3", FL, 4, D(1, 1, 2, 2), F(8, 12, 20, 24));

	g = conv_graph("Conv", 4, D(1, 1, 3, 3), x09, D(1, 1, 3, 3), ones9, 1, F(1), &n);
	attr_ints(n, "pads", 4, I64(1, 1, 1, 1));
	attr_ints(n, "strides", 2, I64(2, 2));
	expect_run(g, "Conv 3x3 pads 1 stride 2 bias", FL, 4, D(1, 1, 2, 2), F(9, 13, 21, 25));

	g = conv_graph("Conv", 4, D(1, 1, 3, 3), x09, D(1, 1, 3, 3), ones9, 0, NULL, &n);
	attr_ints(n, "pads", 4, I64(1, 0, 0, 1));
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	/* padded rows -1..2, cols 0..3: out rows 0..1, cols 0..1 */
	expect_run(g, "Conv asymmetric pads [1,0,0,1]", FL, 4, D(1, 1, 2, 2),
		   F(0 + 1 + 2 + 3 + 4 + 5, 1 + 2 + 4 + 5, 36, 1 + 2 + 4 + 5 + 7 + 8));

	g = conv_graph("Conv", 4, D(1, 2, 2, 2), F(1, 2, 3, 4, 5, 6, 7, 8), D(2, 1, 1, 1), F(2, -1), 0, NULL, &n);
	attr_i(n, "group", 2);
	expect_run(g, "Conv depthwise 1x1 (group 2)", FL, 4, D(1, 2, 2, 2), F(2, 4, 6, 8, -5, -6, -7, -8));

	g = conv_graph("Conv", 4, D(1, 2, 2, 2), F(1, 2, 3, 4, 5, 6, 7, 8), D(2, 1, 2, 2),
		       F(1, 0, 0, 1, 0, 1, 1, 0), 2, F(0.5f, -0.5f), &n);
	attr_i(n, "group", 2);
	expect_run(g, "Conv depthwise 2x2 with bias", FL, 4, D(1, 2, 1, 1), F(5.5f, 12.5f));

	g = conv_graph("Conv", 4, D(1, 4, 1, 1), F(1, 2, 3, 4), D(2, 2, 1, 1), F(1, 1, 1, -1), 0, NULL, &n);
	attr_i(n, "group", 2);
	expect_run(g, "Conv group 2 with 2 channels per group", FL, 4, D(1, 2, 1, 1), F(3, -1));

	g = conv_graph("Conv", 4, D(1, 1, 3, 3), x09, D(1, 1, 2, 2), ones9, 0, NULL, &n);
	attr_ints(n, "dilations", 2, I64(2, 2));
	expect_run(g, "Conv dilations 2", FL, 4, D(1, 1, 1, 1), F(16));

	g = conv_graph("Conv", 4, D(1, 1, 1, 4), F(1, 2, 3, 4), D(1, 1, 1, 2), F(1, 10), 0, NULL, &n);
	attr_s(n, "auto_pad", "SAME_UPPER");
	expect_run(g, "Conv auto_pad SAME_UPPER (pad at the end)", FL, 4, D(1, 1, 1, 4), F(21, 32, 43, 4));

	g = conv_graph("Conv", 4, D(1, 1, 1, 4), F(1, 2, 3, 4), D(1, 1, 1, 2), F(1, 10), 0, NULL, &n);
	attr_s(n, "auto_pad", "SAME_LOWER");
	expect_run(g, "Conv auto_pad SAME_LOWER (pad at the start)", FL, 4, D(1, 1, 1, 4), F(10, 21, 32, 43));

	g = conv_graph("Conv", 4, D(1, 1, 1, 5), F(1, 2, 3, 4, 5), D(1, 1, 1, 2), F(1, 1), 0, NULL, &n);
	attr_s(n, "auto_pad", "VALID");
	attr_ints(n, "pads", 4, I64(0, 3, 0, 3));
	attr_ints(n, "strides", 2, I64(1, 2));
	expect_run(g, "Conv auto_pad VALID ignores pads, stride 2", FL, 4, D(1, 1, 1, 2), F(3, 7));

	g = conv_graph("Conv", 3, D(1, 1, 4), F(1, 2, 3, 4), D(1, 1, 2), F(1, 1), 0, NULL, &n);
	attr_ints(n, "strides", 1, I64(2));
	expect_run(g, "Conv 1-D stride 2", FL, 3, D(1, 1, 2), F(3, 7));

	g = conv_graph("Conv", 5, D(1, 1, 2, 2, 2), F(1, 2, 3, 4, 5, 6, 7, 8), D(1, 1, 2, 2, 2), ones9, 0, NULL,
		       &n);
	expect_run(g, "Conv 3-D", FL, 5, D(1, 1, 1, 1, 1), F(36));

	g = conv_graph("Conv", 4, D(2, 2, 1, 1), F(1, 2, 10, 20), D(2, 2, 1, 1), F(1, 2, 3, 4), 2, F(10, 20), &n);
	expect_run(g, "Conv batch 2, 2 in / 2 out channels, bias", FL, 4, D(2, 2, 1, 1),
		   F(15, 31, 60, 130));

	g = conv_graph("Conv", 4, D(1, 1, 3, 3), x09, D(1, 1, 2, 2), ones9, 0, NULL, &n);
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	expect_fail(g, "Conv with kernel_shape unlike W's", "'t'", "kernel_shape", NULL);

	/* ConvTranspose */
	g = conv_graph("ConvTranspose", 4, D(1, 1, 2, 2), F(1, 2, 3, 4), D(1, 1, 2, 2), ones9, 0, NULL, &n);
	expect_run(g, "ConvTranspose 2x2 ones", FL, 4, D(1, 1, 3, 3), F(1, 3, 2, 4, 10, 6, 3, 7, 4));

	g = conv_graph("ConvTranspose", 4, D(1, 1, 2, 2), F(1, 2, 3, 4), D(1, 1, 2, 2), ones9, 1, F(0.5f), &n);
	attr_ints(n, "strides", 2, I64(2, 2));
	expect_run(g, "ConvTranspose stride 2 with bias", FL, 4, D(1, 1, 4, 4),
		   F(1.5f, 1.5f, 2.5f, 2.5f, 1.5f, 1.5f, 2.5f, 2.5f, 3.5f, 3.5f, 4.5f, 4.5f, 3.5f, 3.5f, 4.5f, 4.5f));

	g = conv_graph("ConvTranspose", 4, D(1, 1, 2, 2), F(1, 2, 3, 4), D(1, 1, 2, 2), ones9, 0, NULL, &n);
	attr_ints(n, "pads", 4, I64(1, 1, 1, 1));
	expect_run(g, "ConvTranspose pads 1 crop", FL, 4, D(1, 1, 1, 1), F(10));

	g = conv_graph("ConvTranspose", 4, D(1, 1, 2, 2), F(1, 2, 3, 4), D(1, 1, 2, 2), ones9, 0, NULL, &n);
	attr_ints(n, "strides", 2, I64(2, 2));
	attr_ints(n, "output_padding", 2, I64(1, 0));
	expect_run(g, "ConvTranspose output_padding adds a zero row", FL, 4, D(1, 1, 5, 4),
		   F(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4, 0, 0, 0, 0));

	g = conv_graph("ConvTranspose", 4, D(1, 2, 1, 1), F(1, 2), D(2, 1, 1, 1), F(3, 4), 0, NULL, &n);
	attr_i(n, "group", 2);
	expect_run(g, "ConvTranspose group 2", FL, 4, D(1, 2, 1, 1), F(3, 8));

	g = conv_graph("ConvTranspose", 4, D(1, 2, 1, 1), F(1, 2), D(2, 2, 1, 1), F(1, 2, 3, 4), 0, NULL, &n);
	expect_run(g, "ConvTranspose 2 in / 2 out channels", FL, 4, D(1, 2, 1, 1), F(1 + 6, 2 + 8));

	g = conv_graph("ConvTranspose", 3, D(1, 1, 2), F(1, 2), D(1, 1, 2), F(1, 1), 0, NULL, &n);
	attr_ints(n, "dilations", 1, I64(2));
	expect_run(g, "ConvTranspose 1-D dilation 2", FL, 3, D(1, 1, 4), F(1, 2, 1, 2));

	g = conv_graph("ConvTranspose", 3, D(1, 1, 2), F(1, 2), D(1, 1, 2), F(1, 1), 0, NULL, &n);
	attr_ints(n, "output_shape", 1, I64(3));
	expect_run(g, "ConvTranspose output_shape", FL, 3, D(1, 1, 3), F(1, 3, 2));
}

static void test_gemm_matmul(void)
{
	loom_graph *g;
	loom_node *n;
	int a, b, c;

	g = gnew(13);
	a = ginput(g, "a", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	b = gconst(g, "b", FL, 2, D(3, 2), F(1, 0, 0, 1, 1, 1));
	n = gnode(g, "Gemm", "t", (int[]){a, b}, 2, 1);
	expect_run(g, "Gemm defaults, no C", FL, 2, D(2, 2), F(4, 5, 10, 11));

	g = gnew(13);
	a = ginput(g, "a", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	b = gconst(g, "b", FL, 2, D(3, 2), F(1, 0, 0, 1, 1, 1));
	c = gconst(g, "c", FL, 1, D(2), F(1, 2));
	n = gnode(g, "Gemm", "t", (int[]){a, b, c}, 3, 1);
	attr_f(n, "alpha", 2);
	attr_f(n, "beta", 0.5f);
	expect_run(g, "Gemm alpha 2 beta 0.5, C [2] broadcast", FL, 2, D(2, 2), F(8.5f, 11, 20.5f, 23));

	g = gnew(13);
	a = ginput(g, "a", FL, 2, D(3, 2), F(1, 4, 2, 5, 3, 6));
	b = gconst(g, "b", FL, 2, D(2, 3), F(1, 0, 1, 0, 1, 1));
	c = gconst(g, "c", FL, 2, D(2, 1), F(100, 200));
	n = gnode(g, "Gemm", "t", (int[]){a, b, c}, 3, 1);
	attr_i(n, "transA", 1);
	attr_i(n, "transB", 1);
	expect_run(g, "Gemm transA transB, C [2,1]", FL, 2, D(2, 2), F(104, 105, 210, 211));

	g = gnew(13);
	a = ginput(g, "a", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	b = gconst(g, "b", FL, 2, D(2, 3), F(1, 0, 1, 0, 1, 1));
	c = gconst(g, "c", FL, 0, NULL, F(-1));
	n = gnode(g, "Gemm", "t", (int[]){a, b, c}, 3, 1);
	attr_i(n, "transB", 1);
	expect_run(g, "Gemm transB, scalar C", FL, 2, D(2, 2), F(3, 4, 9, 10));

	g = gnew(13);
	a = ginput(g, "a", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6));
	b = gconst(g, "b", FL, 2, D(2, 2), F(1, 0, 0, 1));
	gnode(g, "Gemm", "gemm_k", (int[]){a, b}, 2, 1);
	expect_fail(g, "Gemm with mismatched K", "gemm_k", "Gemm", "inner dimensions", NULL);

	g = binary_graph(13, "MatMul", FL, 2, D(2, 2), F(1, 2, 3, 4), FL, 2, D(2, 2), F(5, 6, 7, 8), &n);
	expect_run(g, "MatMul 2-D", FL, 2, D(2, 2), F(19, 22, 43, 50));
	g = binary_graph(13, "MatMul", FL, 1, D(2), F(1, 2), FL, 2, D(2, 2), F(5, 6, 7, 8), &n);
	expect_run(g, "MatMul 1-D x 2-D", FL, 1, D(2), F(19, 22));
	g = binary_graph(13, "MatMul", FL, 2, D(2, 2), F(1, 2, 3, 4), FL, 1, D(2), F(1, 1), &n);
	expect_run(g, "MatMul 2-D x 1-D", FL, 1, D(2), F(3, 7));
	g = binary_graph(13, "MatMul", FL, 1, D(2), F(1, 2), FL, 1, D(2), F(3, 4), &n);
	expect_run(g, "MatMul 1-D x 1-D is a scalar", FL, 0, NULL, F(11));
	g = binary_graph(13, "MatMul", FL, 3, D(2, 1, 2), F(1, 2, 3, 4), FL, 2, D(2, 1), F(1, 1), &n);
	expect_run(g, "MatMul batched x 2-D", FL, 3, D(2, 1, 1), F(3, 7));
	g = binary_graph(13, "MatMul", FL, 4, D(2, 1, 1, 2), F(1, 2, 3, 4), FL, 3, D(3, 2, 1), F(1, 0, 0, 1, 1, 1),
			 &n);
	expect_run(g, "MatMul batch broadcast [2,1,1,2] x [3,2,1]", FL, 4, D(2, 3, 1, 1), F(1, 2, 3, 3, 4, 7));
	g = binary_graph(13, "MatMul", INT64, 2, D(1, 2), I64(1, 2), INT64, 2, D(2, 1), I64(3, 4), &n);
	expect_run(g, "MatMul int64", INT64, 2, D(1, 1), I64(11));
	g = binary_graph(13, "MatMul", FL, 2, D(2, 3), F(1, 2, 3, 4, 5, 6), FL, 2, D(2, 2), F(5, 6, 7, 8), &n);
	expect_fail(g, "MatMul [2,3] x [2,2] fails", "'t'", "MatMul", "inner dimensions", NULL);
}

/* Gemm (each transA/transB, C [N] added) and MatMul of odd sizes, small
 * to large enough for the blocked and threaded paths of runtime/gemm.c,
 * against a double-precision sum: |y - ref| <= 1e-5 * (sum |a b| + |c|). */
static void gemm_size(int64_t M, int64_t N, int64_t K, int ta, int tb, int matmul)
{
	char label[96], why[160] = "";
	loom_graph *g = gnew(13);
	loom_node *n;
	float *pa = malloc((size_t)(M * K + 1) * sizeof(float));
	float *pb = malloc((size_t)(K * N + 1) * sizeof(float));
	float *pc = malloc((size_t)(N + 1) * sizeof(float));
	uint32_t seed = (uint32_t)(M * 131 + N * 17 + K);
	int a, b, c;
	OC_MUST(pa && pb && pc ? 0 : -1);
	for (int64_t i = 0; i < M * K; i++)
		pa[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
	for (int64_t i = 0; i < K * N; i++)
		pb[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
	for (int64_t i = 0; i < N; i++)
		pc[i] = (float)(i % 7) - 3.0f;
	snprintf(label, sizeof label, "%s %lldx%lldx%lld%s%s", matmul ? "MatMul" : "Gemm", (long long)M,
		 (long long)N, (long long)K, ta ? " transA" : "", tb ? " transB" : "");
	a = ginput(g, "a", FL, 2, ta ? D(K, M) : D(M, K), pa);
	b = gconst(g, "b", FL, 2, tb ? D(N, K) : D(K, N), pb);
	if (matmul) {
		gnode(g, "MatMul", "t", (int[]){a, b}, 2, 1);
	} else {
		c = gconst(g, "c", FL, 1, D(N), pc);
		n = gnode(g, "Gemm", "t", (int[]){a, b, c}, 3, 1);
		attr_i(n, "transA", ta);
		attr_i(n, "transB", tb);
	}
	if (!grun(g, label)) {
		const float *y = g->tensors[g->nodes[0].outputs[0]].data;
		for (int64_t i = 0; i < M && !why[0]; i++)
			for (int64_t j = 0; j < N && !why[0]; j++) {
				double s = matmul ? 0.0 : pc[j], mag = fabs(s);
				for (int64_t k = 0; k < K; k++) {
					double p = (double)(ta ? pa[k * M + i] : pa[i * K + k]) *
						   (tb ? pb[j * K + k] : pb[k * N + j]);
					s += p;
					mag += fabs(p);
				}
				if (!(fabs(y[i * N + j] - s) <= 1e-5 * mag + 1e-30))
					snprintf(why, sizeof why, "y[%lld,%lld] = %.9g, expected %.9g", (long long)i,
						 (long long)j, y[i * N + j], s);
			}
		CHECK(!why[0], "%s%s%s", label, why[0] ? ": " : "", why);
	}
	loom_graph_free(g);
	free(pa);
	free(pb);
	free(pc);
}

static void test_gemm_sizes(void)
{
	static const int64_t sizes[][3] = {{1, 1, 1}, {7, 13, 5}, {67, 129, 33}, {300, 257, 191},
					   {1, 1000, 600}};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		for (int t = 0; t < 4; t++)
			gemm_size(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t >> 1, 0);
		gemm_size(sizes[s][0], sizes[s][1], sizes[s][2], 0, 0, 1);
	}
}

/* MaxPool's own loop (no Indices output) against the general one (with
 * Indices): the same bits on data with NaNs and zeros of both signs, with
 * pads, strides and windows that hang over the edges */
static void test_maxpool_fast(void)
{
	enum { C = 3, H = 9, W = 11 };
	float x[C * H * W];
	uint32_t s = 4242;
	for (int i = 0; i < C * H * W; i++) {
		s = s * 1664525u + 1013904223u;
		uint32_t k = (s >> 8) % 16;
		x[i] = k == 0 ? NAN : k < 4 ? 0.0f : k < 7 ? -0.0f : (float)((int)(s >> 12) % 9 - 4);
	}
	const float *y[2] = {NULL, NULL};
	loom_graph *gs[2];
	for (int withind = 0; withind < 2; withind++) {
		loom_graph *g = gs[withind] = gnew(13);
		int in = ginput(g, "x", FL, 4, D(1, C, H, W), x);
		loom_node *n = gnode(g, "MaxPool", "t", (int[]){in}, 1, 1 + withind);
		attr_ints(n, "kernel_shape", 2, I64(3, 2));
		attr_ints(n, "strides", 2, I64(2, 3));
		attr_ints(n, "pads", 4, I64(1, 1, 2, 1));
		if (!grun(g, withind ? "MaxPool with Indices (the general loop)" : "MaxPool (its own loop)"))
			y[withind] = g->tensors[n->outputs[0]].data;
	}
	const loom_tensor *t = y[0] ? &gs[0]->tensors[gs[0]->nodes[0].outputs[0]] : NULL;
	CHECK(y[0] && y[1] && !memcmp(y[0], y[1], (size_t)loom_tensor_numel(t) * sizeof(float)),
	      "MaxPool 3x2 stride 2x3 pads 1,1,2,1 with NaN and +-0: its own loop's bits are the general loop's");
	loom_graph_free(gs[0]);
	loom_graph_free(gs[1]);
}

static void test_pool(void)
{
	loom_graph *g;
	loom_node *n;

	g = unary_graph(13, "MaxPool", FL, 4, D(1, 1, 4, 4), x016, &n);
	attr_ints(n, "kernel_shape", 2, I64(2, 2));
	attr_ints(n, "strides", 2, I64(2, 2));
	expect_run(g, "MaxPool 2x2 stride 2", FL, 4, D(1, 1, 2, 2), F(5, 7, 13, 15));

	g = gnew(13);
	{
		int x = ginput(g, "x", FL, 4, D(1, 1, 4, 4), x016);
		n = gnode(g, "MaxPool", "t", (int[]){x}, 1, 2);
		attr_ints(n, "kernel_shape", 2, I64(2, 2));
		attr_ints(n, "strides", 2, I64(2, 2));
		attr_i(n, "storage_order", 1);
	}
	if (!grun(g, "MaxPool with Indices")) {
		expect_out(g, 0, "MaxPool with Indices: values", FL, 4, D(1, 1, 2, 2), F(5, 7, 13, 15));
		expect_out(g, 1, "MaxPool Indices, storage_order 1 (column major)", INT64, 4, D(1, 1, 2, 2),
			   I64(5, 13, 7, 15));
	}
	loom_graph_free(g);

	g = gnew(13);
	{
		int x = ginput(g, "x", FL, 4, D(1, 2, 2, 2), F(0, 3, 2, 1, 4, 5, 7, 6));
		n = gnode(g, "MaxPool", "t", (int[]){x}, 1, 2);
		attr_ints(n, "kernel_shape", 2, I64(2, 2));
	}
	if (!grun(g, "MaxPool Indices over channels")) {
		expect_out(g, 1, "MaxPool Indices count the channel offset", INT64, 4, D(1, 2, 1, 1), I64(1, 6));
	}
	loom_graph_free(g);

	g = unary_graph(13, "MaxPool", FL, 4, D(1, 1, 3, 3), x09, &n);
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	attr_ints(n, "strides", 2, I64(2, 2));
	attr_ints(n, "pads", 4, I64(1, 1, 1, 1));
	expect_run(g, "MaxPool 3x3 pads 1 stride 2", FL, 4, D(1, 1, 2, 2), F(4, 5, 7, 8));

	g = unary_graph(13, "MaxPool", FL, 4, D(1, 1, 4, 4), x016, &n);
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	attr_ints(n, "strides", 2, I64(2, 2));
	attr_i(n, "ceil_mode", 1);
	expect_run(g, "MaxPool ceil_mode", FL, 4, D(1, 1, 2, 2), F(10, 11, 14, 15));

	g = unary_graph(13, "MaxPool", FL, 4, D(1, 1, 4, 4), x016, &n);
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	attr_ints(n, "strides", 2, I64(2, 2));
	expect_run(g, "MaxPool floor mode", FL, 4, D(1, 1, 1, 1), F(10));

	g = unary_graph(13, "MaxPool", FL, 4, D(1, 1, 4, 4), x016, &n);
	attr_ints(n, "kernel_shape", 2, I64(2, 2));
	attr_ints(n, "dilations", 2, I64(2, 2));
	expect_run(g, "MaxPool dilations 2", FL, 4, D(1, 1, 2, 2), F(10, 11, 14, 15));

	g = unary_graph(13, "MaxPool", LOOM_DT_UINT8, 4, D(1, 1, 1, 4), B8(1, 200, 3, 4), &n);
	attr_ints(n, "kernel_shape", 2, I64(1, 2));
	attr_ints(n, "strides", 2, I64(1, 2));
	expect_run(g, "MaxPool uint8", LOOM_DT_UINT8, 4, D(1, 1, 1, 2), B8(200, 4));

	g = unary_graph(13, "MaxPool", FL, 3, D(1, 1, 5), F(1, 5, 2, 4, 3), &n);
	attr_ints(n, "kernel_shape", 1, I64(2));
	attr_s(n, "auto_pad", "SAME_UPPER");
	attr_ints(n, "strides", 1, I64(2));
	expect_run(g, "MaxPool 1-D SAME_UPPER stride 2", FL, 3, D(1, 1, 3), F(5, 4, 3));

	g = unary_graph(13, "MaxPool", FL, 5, D(1, 1, 2, 2, 2), F(1, 8, 2, 7, 3, 6, 4, 5), &n);
	attr_ints(n, "kernel_shape", 3, I64(2, 2, 2));
	expect_run(g, "MaxPool 3-D", FL, 5, D(1, 1, 1, 1, 1), F(8));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 4, 4), x016, &n);
	attr_ints(n, "kernel_shape", 2, I64(3, 3));
	attr_ints(n, "strides", 2, I64(2, 2));
	attr_i(n, "ceil_mode", 1);
	expect_run(g, "AveragePool ceil_mode (partial windows)", FL, 4, D(1, 1, 2, 2), F(5, 6.5f, 11, 12.5f));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 2, 2), F(1, 2, 3, 4), &n);
	attr_ints(n, "kernel_shape", 2, I64(2, 2));
	attr_ints(n, "pads", 4, I64(1, 1, 1, 1));
	expect_run(g, "AveragePool pads, count_include_pad 0", FL, 4, D(1, 1, 3, 3),
		   F(1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 2, 2), F(1, 2, 3, 4), &n);
	attr_ints(n, "kernel_shape", 2, I64(2, 2));
	attr_ints(n, "pads", 4, I64(1, 1, 1, 1));
	attr_i(n, "count_include_pad", 1);
	expect_run(g, "AveragePool pads, count_include_pad 1", FL, 4, D(1, 1, 3, 3),
		   F(0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 1, 3), F(1, 2, 3), &n);
	attr_ints(n, "kernel_shape", 2, I64(1, 2));
	attr_s(n, "auto_pad", "SAME_UPPER");
	expect_run(g, "AveragePool SAME_UPPER", FL, 4, D(1, 1, 1, 3), F(1.5f, 2.5f, 3));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 1, 3), F(1, 2, 3), &n);
	attr_ints(n, "kernel_shape", 2, I64(1, 2));
	attr_s(n, "auto_pad", "SAME_LOWER");
	expect_run(g, "AveragePool SAME_LOWER", FL, 4, D(1, 1, 1, 3), F(1, 1.5f, 2.5f));

	g = unary_graph(13, "AveragePool", FL, 4, D(1, 1, 2, 2), F(1, 2, 3, 4), &n);
	expect_fail(g, "AveragePool without kernel_shape", "'t'", "AveragePool", "kernel_shape", NULL);

	g = unary_graph(13, "GlobalAveragePool", FL, 4, D(1, 2, 2, 1), F(1, 2, 3, 4), &n);
	expect_run(g, "GlobalAveragePool", FL, 4, D(1, 2, 1, 1), F(1.5f, 3.5f));
	g = unary_graph(13, "GlobalMaxPool", FL, 3, D(1, 2, 3), F(1, -2, 0, -4, -3, -5), &n);
	expect_run(g, "GlobalMaxPool 1-D", FL, 3, D(1, 2, 1), F(1, -3));
}

static void test_norm(void)
{
	loom_graph *g;
	loom_node *n;
	int x, s, b, m, v;

	g = gnew(13);
	x = ginput(g, "x", FL, 4, D(1, 2, 1, 2), F(1, 2, 3, 4));
	s = gconst(g, "s", FL, 1, D(2), F(1, 2));
	b = gconst(g, "b", FL, 1, D(2), F(0, 1));
	m = gconst(g, "m", FL, 1, D(2), F(1, 3));
	v = gconst(g, "v", FL, 1, D(2), F(4, 1));
	n = gnode(g, "BatchNormalization", "t", (int[]){x, s, b, m, v}, 5, 1);
	attr_f(n, "epsilon", 0);
	expect_run(g, "BatchNormalization inference", FL, 4, D(1, 2, 1, 2), F(0, 0.5f, 1, 3));

	g = gnew(9);
	x = ginput(g, "x", FL, 2, D(2, 2), F(1, 2, 3, 4));
	s = gconst(g, "s", FL, 1, D(2), F(1, 1));
	b = gconst(g, "b", FL, 1, D(2), F(0, 0));
	m = gconst(g, "m", FL, 1, D(2), F(0, 1));
	v = gconst(g, "v", FL, 1, D(2), F(1, 1));
	n = gnode(g, "BatchNormalization", "t", (int[]){x, s, b, m, v}, 5, 1);
	expect_run(g, "BatchNormalization 2-D input, default epsilon", FL, 2, D(2, 2),
		   F(1 / sqrtf(1 + 1e-5f), 1 / sqrtf(1 + 1e-5f), 3 / sqrtf(1 + 1e-5f), 3 / sqrtf(1 + 1e-5f)));

	g = gnew(15);
	x = ginput(g, "x", FL, 4, D(1, 1, 1, 4), F(1, 2, 3, 4));
	s = gconst(g, "s", FL, 1, D(1), F(1));
	b = gconst(g, "b", FL, 1, D(1), F(0));
	m = gconst(g, "m", FL, 1, D(1), F(0));
	v = gconst(g, "v", FL, 1, D(1), F(1));
	n = gnode(g, "BatchNormalization", "t", (int[]){x, s, b, m, v}, 5, 3);
	attr_i(n, "training_mode", 1);
	attr_f(n, "epsilon", 0);
	if (!grun(g, "BatchNormalization training_mode")) {
		expect_out(g, 0, "BatchNormalization training_mode: Y", FL, 4, D(1, 1, 1, 4),
			   F(-1.3416408f, -0.4472136f, 0.4472136f, 1.3416408f));
		expect_out(g, 1, "BatchNormalization training_mode: running_mean", FL, 1, D(1), F(0.25f));
		expect_out(g, 2, "BatchNormalization training_mode: running_var", FL, 1, D(1), F(1.025f));
	}
	loom_graph_free(g);

	g = gnew(13);
	x = ginput(g, "x", FL, 4, D(1, 2, 1, 2), F(1, 2, 3, 4));
	s = gconst(g, "s", FL, 1, D(3), F(1, 2, 3));
	b = gconst(g, "b", FL, 1, D(2), F(0, 1));
	m = gconst(g, "m", FL, 1, D(2), F(1, 3));
	v = gconst(g, "v", FL, 1, D(2), F(4, 1));
	gnode(g, "BatchNormalization", "bn_bad", (int[]){x, s, b, m, v}, 5, 1);
	expect_fail(g, "BatchNormalization with a wrong scale size", "bn_bad", "scale", NULL);

	g = gnew(13);
	x = ginput(g, "x", FL, 4, D(1, 1, 1, 4), F(1, 2, 3, 4));
	s = gconst(g, "s", FL, 1, D(1), F(2));
	b = gconst(g, "b", FL, 1, D(1), F(1));
	n = gnode(g, "InstanceNormalization", "t", (int[]){x, s, b}, 3, 1);
	attr_f(n, "epsilon", 0);
	expect_run(g, "InstanceNormalization", FL, 4, D(1, 1, 1, 4),
		   F(-1.6832816f, 0.1055728f, 1.8944272f, 3.6832816f));

	g = gnew(17);
	x = ginput(g, "x", FL, 2, D(2, 2), F(1, 3, 2, 6));
	s = gconst(g, "s", FL, 1, D(2), F(1, 1));
	b = gconst(g, "b", FL, 1, D(2), F(0, 1));
	n = gnode(g, "LayerNormalization", "t", (int[]){x, s, b}, 3, 3);
	attr_f(n, "epsilon", 0);
	if (!grun(g, "LayerNormalization")) {
		expect_out(g, 0, "LayerNormalization: Y", FL, 2, D(2, 2), F(-1, 2, -1, 2));
		expect_out(g, 1, "LayerNormalization: Mean", FL, 2, D(2, 1), F(2, 4));
		expect_out(g, 2, "LayerNormalization: InvStdDev", FL, 2, D(2, 1), F(1, 0.5f));
	}
	loom_graph_free(g);

	g = gnew(17);
	x = ginput(g, "x", FL, 3, D(1, 2, 2), F(1, 3, 2, 6));
	s = gconst(g, "s", FL, 0, NULL, F(2));
	n = gnode(g, "LayerNormalization", "t", (int[]){x, s}, 2, 1);
	attr_i(n, "axis", 1);
	attr_f(n, "epsilon", 0);
	/* mean 3, var (4 + 0 + 1 + 9) / 4 = 3.5 */
	expect_run(g, "LayerNormalization axis 1, scalar scale, no B", FL, 3, D(1, 2, 2),
		   F(-2 * 2 / sqrtf(3.5f), 0, -1 * 2 / sqrtf(3.5f), 3 * 2 / sqrtf(3.5f)));

	g = unary_graph(13, "LRN", FL, 4, D(1, 3, 1, 1), F(1, 2, 3), &n);
	attr_i(n, "size", 3);
	attr_f(n, "alpha", 3);
	attr_f(n, "beta", 1);
	expect_run(g, "LRN size 3", FL, 4, D(1, 3, 1, 1), F(1.0f / 6, 2.0f / 15, 3.0f / 14));

	g = unary_graph(13, "LRN", FL, 4, D(1, 3, 1, 1), F(1, 2, 3), &n);
	attr_i(n, "size", 2);
	attr_f(n, "alpha", 2);
	attr_f(n, "beta", 1);
	attr_f(n, "bias", 2);
	/* even size: the channel and the next one */
	expect_run(g, "LRN size 2 (window c..c+1)", FL, 4, D(1, 3, 1, 1), F(1.0f / 7, 2.0f / 15, 3.0f / 11));

	g = unary_graph(13, "MeanVarianceNormalization", FL, 4, D(1, 1, 1, 2), F(1, 3), &n);
	expect_run(g, "MeanVarianceNormalization", FL, 4, D(1, 1, 1, 2), F(-1, 1));
}

/* a unary elementwise case: x of 4 floats */
static void un4(int64_t opset, const char *op, const float *x, const float *y, const char *a1, float v1)
{
	loom_node *n;
	char label[96];
	loom_graph *g = unary_graph(opset, op, FL, 1, D(4), x, &n);
	if (a1)
		attr_f(n, a1, v1);
	snprintf(label, sizeof label, "%s%s%s", op, a1 ? " with " : "", a1 ? a1 : "");
	expect_run(g, label, FL, 1, D(4), y);
}

static void test_unary(void)
{
	static const float x[4] = {-2, -0.5f, 0, 1.5f};
	loom_graph *g;
	loom_node *n;
	un4(13, "Relu", x, F(0, 0, 0, 1.5f), NULL, 0);
	un4(13, "LeakyRelu", x, F(-0.02f, -0.005f, 0, 1.5f), NULL, 0);
	un4(13, "LeakyRelu", x, F(-1, -0.25f, 0, 1.5f), "alpha", 0.5f);
	un4(13, "Elu", x, F(-0.86466472f, -0.39346934f, 0, 1.5f), NULL, 0);
	un4(13, "Elu", x, F(-1.72932943f, -0.78693868f, 0, 1.5f), "alpha", 2);
	un4(13, "Selu", x, F(-1.52016647f, -0.69175819f, 0, 1.57605153f), NULL, 0);
	un4(13, "Celu", x, F(-0.86466472f, -0.39346934f, 0, 1.5f), NULL, 0);
	un4(13, "Sigmoid", x, F(0.11920292f, 0.37754067f, 0.5f, 0.81757448f), NULL, 0);
	un4(13, "HardSigmoid", x, F(0.1f, 0.4f, 0.5f, 0.8f), NULL, 0);
	un4(13, "HardSigmoid", x, F(0, 0.25f, 0.5f, 1), "alpha", 0.5f);
	un4(14, "HardSwish", x, F(-1.0f / 3, -0.5f * 5 / 12, 0, 1.125f), NULL, 0);
	un4(13, "Tanh", x, F(-0.96402758f, -0.46211716f, 0, 0.90514825f), NULL, 0);
	un4(13, "Softplus", x, F(0.12692801f, 0.47407698f, 0.69314718f, 1.70141328f), NULL, 0);
	un4(13, "Softsign", x, F(-2.0f / 3, -1.0f / 3, 0, 0.6f), NULL, 0);
	un4(13, "Erf", x, F(-0.99532227f, -0.52049988f, 0, 0.96610515f), NULL, 0);
	un4(13, "ThresholdedRelu", x, F(0, 0, 0, 1.5f), NULL, 0);
	un4(13, "Shrink", x, F(-2, 0, 0, 1.5f), NULL, 0);
	un4(13, "Shrink", x, F(-1.5f, 0, 0, 1), "bias", 0.5f);
	un4(13, "Neg", x, F(2, 0.5f, 0, -1.5f), NULL, 0);
	un4(13, "Abs", x, F(2, 0.5f, 0, 1.5f), NULL, 0);
	un4(13, "Exp", x, F(0.13533528f, 0.60653066f, 1, 4.48168907f), NULL, 0);
	un4(13, "Floor", x, F(-2, -1, 0, 1), NULL, 0);
	un4(13, "Ceil", x, F(-2, -0.0f, 0, 2), NULL, 0);
	un4(13, "Sign", x, F(-1, -1, 0, 1), NULL, 0);
	un4(13, "Round", F(0.5f, 1.5f, 2.5f, -1.5f), F(0, 2, 2, -2), NULL, 0);
	un4(13, "Sqrt", F(4, 2.25f, 0, 1), F(2, 1.5f, 0, 1), NULL, 0);
	un4(13, "Log", F(1, 2.718281828f, 0.5f, 4), F(0, 1, -0.69314718f, 1.38629436f), NULL, 0);
	un4(13, "Reciprocal", F(4, -0.5f, 1, 8), F(0.25f, -2, 1, 0.125f), NULL, 0);
	un4(13, "Cos", F(0, 3.14159265f, 0, 0), F(1, -1, 1, 1), NULL, 0);

	g = unary_graph(13, "Neg", INT64, 1, D(2), I64(-3, 5), &n);
	expect_run(g, "Neg int64", INT64, 1, D(2), I64(3, -5));
	g = unary_graph(13, "Abs", LOOM_DT_INT32, 1, D(2), (const int32_t[]){-3, 5}, &n);
	expect_run(g, "Abs int32", LOOM_DT_INT32, 1, D(2), ((const int32_t[]){3, 5}));
	g = unary_graph(14, "Relu", LOOM_DT_INT8, 1, D(2), (const int8_t[]){-3, 5}, &n);
	expect_run(g, "Relu int8", LOOM_DT_INT8, 1, D(2), ((const int8_t[]){0, 5}));
	g = unary_graph(13, "Exp", INT64, 1, D(2), I64(1, 2), &n);
	expect_fail(g, "Exp of int64 fails", "'t'", "Exp", "int64", NULL);

	g = unary_graph(13, "IsNaN", FL, 1, D(3), F(NAN, 1, INFINITY), &n);
	expect_run(g, "IsNaN", BOOL, 1, D(3), B8(1, 0, 0));
	g = unary_graph(13, "IsInf", FL, 1, D(3), F(NAN, -INFINITY, INFINITY), &n);
	attr_i(n, "detect_negative", 0);
	expect_run(g, "IsInf detect_negative 0", BOOL, 1, D(3), B8(0, 0, 1));
	g = unary_graph(13, "Not", BOOL, 1, D(2), B8(1, 0), &n);
	expect_run(g, "Not", BOOL, 1, D(2), B8(0, 1));
	g = unary_graph(13, "Identity", INT64, 1, D(2), I64(7, -7), &n);
	expect_run(g, "Identity int64", INT64, 1, D(2), I64(7, -7));

	/* Dropout: opset 12 with mask; opset 7's mask has the input's type */
	g = gnew(13);
	{
		int xi = ginput(g, "x", FL, 1, D(2), F(1, 2));
		int r = gconst(g, "ratio", FL, 0, NULL, F(0.3f));
		gnode(g, "Dropout", "t", (int[]){xi, r}, 2, 2);
	}
	if (!grun(g, "Dropout opset 13 with mask")) {
		expect_out(g, 0, "Dropout opset 13: output is the input", FL, 1, D(2), F(1, 2));
		expect_out(g, 1, "Dropout opset 13: mask is true", BOOL, 1, D(2), B8(1, 1));
	}
	loom_graph_free(g);
	g = gnew(7);
	{
		int xi = ginput(g, "x", FL, 1, D(2), F(1, 2));
		n = gnode(g, "Dropout", "t", (int[]){xi}, 1, 2);
		attr_f(n, "ratio", 0.5f);
	}
	if (!grun(g, "Dropout opset 7 with mask"))
		expect_out(g, 1, "Dropout opset 7: mask of ones in the input's type", FL, 1, D(2), F(1, 1));
	loom_graph_free(g);
	g = gnew(13);
	{
		int xi = ginput(g, "x", FL, 1, D(2), F(1, 2));
		int r = gconst(g, "ratio", FL, 0, NULL, F(0.5f));
		int t = gconst(g, "train", BOOL, 0, NULL, B8(1));
		gnode(g, "Dropout", "drop_train", (int[]){xi, r, t}, 3, 1);
	}
	expect_fail(g, "Dropout training_mode with ratio 0.5", "drop_train", "training_mode", NULL);
}

static void test_clip(void)
{
	loom_graph *g;
	loom_node *n;
	int x, lo, hi;

	g = unary_graph(6, "Clip", FL, 1, D(3), F(-2, 0.5f, 3), &n);
	attr_f(n, "min", -1);
	attr_f(n, "max", 1);
	expect_run(g, "Clip opset 6 attributes", FL, 1, D(3), F(-1, 0.5f, 1));
	g = unary_graph(6, "Clip", FL, 1, D(3), F(-2, 0.5f, 3), &n);
	attr_f(n, "max", 0);
	expect_run(g, "Clip opset 6 max only", FL, 1, D(3), F(-2, 0, 0));

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(3), F(-2, 0.5f, 3));
	hi = gconst(g, "hi", FL, 0, NULL, F(1));
	gnode(g, "Clip", "t", (int[]){x, -1, hi}, 3, 1);
	expect_run(g, "Clip opset 13, min omitted", FL, 1, D(3), F(-2, 0.5f, 1));

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(3), F(-2, 0.5f, 3));
	lo = gconst(g, "lo", FL, 1, D(1), F(0));
	gnode(g, "Clip", "t", (int[]){x, lo}, 2, 1);
	expect_run(g, "Clip opset 13, min only", FL, 1, D(3), F(0, 0.5f, 3));

	g = gnew(12);
	x = ginput(g, "x", LOOM_DT_INT8, 1, D(3), (const int8_t[]){-5, 0, 5});
	lo = gconst(g, "lo", LOOM_DT_INT8, 0, NULL, (const int8_t[]){-1});
	hi = gconst(g, "hi", LOOM_DT_INT8, 0, NULL, (const int8_t[]){2});
	gnode(g, "Clip", "t", (int[]){x, lo, hi}, 3, 1);
	expect_run(g, "Clip int8", LOOM_DT_INT8, 1, D(3), ((const int8_t[]){-1, 0, 2}));

	g = gnew(13);
	x = ginput(g, "x", FL, 1, D(3), F(-2, 0.5f, 3));
	lo = gconst(g, "lo", FL, 1, D(2), F(0, 1));
	gnode(g, "Clip", "clip_v", (int[]){x, lo}, 2, 1);
	expect_fail(g, "Clip with a non-scalar min", "clip_v", "not a scalar", NULL);
}

/* Relu, Add, Sub and Mul of same-shape float tensors (runs of four at a
 * time and a tail, SSE on x86) bit for bit as the scalar expressions:
 * Relu of NaN and of -0 is +0 */
static void test_elementwise_bits(void)
{
	enum { N = 11 };
	static const float x[N] = {-2, -0.0f, 0, 1.5f, NAN, -INFINITY, INFINITY, 3e-39f, -3e-39f, 7, -1e30f};
	static const float y[N] = {0.1f, 3, -0.0f, 1e30f, 2, 5, -INFINITY, 1e-39f, 9, -7, 1e30f};
	loom_node *n;
	loom_graph *g = unary_graph(13, "Relu", FL, 1, D(N), x, &n);
	int same = 1;
	if (!grun(g, "Relu bits")) {
		const float *o = g->tensors[n->outputs[0]].data;
		for (int i = 0; i < N; i++) {
			float w = x[i] > 0 ? x[i] : 0;
			same &= !memcmp(&o[i], &w, sizeof w);
		}
		CHECK(same, "Relu of %d floats (NaN, -0, infinities, denormals) bit for bit max(x, +0)", N);
	}
	loom_graph_free(g);
	static const char *const ops[] = {"Add", "Sub", "Mul"};
	for (int k = 0; k < 3; k++) {
		g = binary_graph(13, ops[k], FL, 1, D(N), x, FL, 1, D(N), y, &n);
		same = 1;
		if (!grun(g, ops[k])) {
			const float *o = g->tensors[n->outputs[0]].data;
			for (int i = 0; i < N; i++) {
				float w = k == 0 ? x[i] + y[i] : k == 1 ? x[i] - y[i] : x[i] * y[i];
				same &= !memcmp(&o[i], &w, sizeof w) || (isnan(o[i]) && isnan(w));
			}
			CHECK(same, "%s of two [%d] tensors bit for bit the scalar operation", ops[k], N);
		}
		loom_graph_free(g);
	}
}

static void test_binary(void)
{
	loom_graph *g;
	loom_node *n;
	static const float a6[6] = {1, 2, 3, 4, 5, 6};

	g = binary_graph(13, "Add", FL, 2, D(2, 3), a6, FL, 1, D(3), F(10, 20, 30), &n);
	expect_run(g, "Add [2,3] + [3]", FL, 2, D(2, 3), F(11, 22, 33, 14, 25, 36));
	g = binary_graph(13, "Sub", FL, 2, D(2, 3), a6, FL, 2, D(2, 1), F(1, 2), &n);
	expect_run(g, "Sub [2,3] - [2,1]", FL, 2, D(2, 3), F(0, 1, 2, 2, 3, 4));
	g = binary_graph(6, "Add", FL, 2, D(2, 3), a6, FL, 1, D(2), F(10, 20), &n);
	attr_i(n, "broadcast", 1);
	attr_i(n, "axis", 0);
	expect_run(g, "Add opset 6 broadcast=1 axis=0", FL, 2, D(2, 3), F(11, 12, 13, 24, 25, 26));
	g = binary_graph(13, "Mul", FL, 2, D(2, 3), a6, FL, 0, NULL, F(2), &n);
	expect_run(g, "Mul by a scalar", FL, 2, D(2, 3), F(2, 4, 6, 8, 10, 12));
	g = binary_graph(13, "Div", FL, 2, D(3, 1), F(1, 2, 3), FL, 2, D(1, 2), F(2, 4), &n);
	expect_run(g, "Div [3,1] / [1,2] (both broadcast)", FL, 2, D(3, 2), F(0.5f, 0.25f, 1, 0.5f, 1.5f, 0.75f));
	g = binary_graph(13, "Pow", FL, 1, D(2), F(2, 3), FL, 1, D(2), F(3, 0.5f), &n);
	expect_run(g, "Pow float", FL, 1, D(2), F(8, 1.7320508f));
	g = binary_graph(13, "Pow", FL, 1, D(2), F(2, 3), INT64, 0, NULL, I64(2), &n);
	expect_run(g, "Pow float ^ int64", FL, 1, D(2), F(4, 9));
	g = binary_graph(13, "Pow", INT64, 1, D(2), I64(2, 3), INT64, 0, NULL, I64(3), &n);
	expect_run(g, "Pow int64", INT64, 1, D(2), I64(8, 27));
	g = binary_graph(13, "Pow", INT64, 1, D(2), I64(2, 3), FL, 0, NULL, F(2), &n);
	expect_run(g, "Pow int64 ^ float", INT64, 1, D(2), I64(4, 9));

	g = binary_graph(13, "Add", INT64, 1, D(3), I64(1, 2, 3), INT64, 1, D(1), I64(-1), &n);
	expect_run(g, "Add int64", INT64, 1, D(3), I64(0, 1, 2));
	g = binary_graph(13, "Mul", INT64, 1, D(2), I64(3, -4), INT64, 1, D(2), I64(5, 6), &n);
	expect_run(g, "Mul int64", INT64, 1, D(2), I64(15, -24));
	g = binary_graph(13, "Div", INT64, 1, D(2), I64(7, -7), INT64, 0, NULL, I64(2), &n);
	expect_run(g, "Div int64 truncates", INT64, 1, D(2), I64(3, -3));
	g = binary_graph(13, "Sub", LOOM_DT_UINT8, 1, D(2), B8(1, 200), LOOM_DT_UINT8, 1, D(2), B8(2, 100), &n);
	expect_run(g, "Sub uint8 wraps", LOOM_DT_UINT8, 1, D(2), B8(255, 100));
	g = binary_graph(13, "Add", LOOM_DT_INT32, 1, D(2), (const int32_t[]){1, 2}, LOOM_DT_INT32, 1, D(2),
			 (const int32_t[]){3, 4}, &n);
	expect_run(g, "Add int32", LOOM_DT_INT32, 1, D(2), ((const int32_t[]){4, 6}));
	g = binary_graph(13, "Add", LOOM_DT_DOUBLE, 1, D(2), (const double[]){0.1, 2}, LOOM_DT_DOUBLE, 1, D(2),
			 (const double[]){0.2, 4}, &n);
	expect_run(g, "Add double", LOOM_DT_DOUBLE, 1, D(2), ((const double[]){0.1 + 0.2, 6}));
	g = binary_graph(13, "Div", INT64, 1, D(2), I64(7, -7), INT64, 0, NULL, I64(0), &n);
	expect_fail(g, "Div int64 by zero", "'t'", "Div", "division by zero", NULL);
	g = binary_graph(13, "Add", FL, 1, D(2), F(1, 2), INT64, 1, D(2), I64(1, 2), &n);
	expect_fail(g, "Add float + int64", "'t'", "different types", NULL);

	g = binary_graph(13, "Mod", INT64, 1, D(2), I64(-4, 7), INT64, 1, D(2), I64(3, -3), &n);
	expect_run(g, "Mod int64 (sign of the divisor)", INT64, 1, D(2), I64(2, -2));
	g = binary_graph(13, "Mod", INT64, 1, D(2), I64(-4, 7), INT64, 1, D(2), I64(3, -3), &n);
	attr_i(n, "fmod", 1);
	expect_run(g, "Mod int64 fmod 1 (sign of the dividend)", INT64, 1, D(2), I64(-1, 1));
	g = binary_graph(13, "Mod", FL, 1, D(2), F(-4.5f, 5), FL, 0, NULL, F(2), &n);
	attr_i(n, "fmod", 1);
	expect_run(g, "Mod float fmod 1", FL, 1, D(2), F(-0.5f, 1));

	g = binary_graph(11, "BitShift", LOOM_DT_UINT8, 1, D(2), B8(1, 255), LOOM_DT_UINT8, 1, D(2), B8(3, 4), &n);
	attr_s(n, "direction", "LEFT");
	expect_run(g, "BitShift LEFT uint8", LOOM_DT_UINT8, 1, D(2), B8(8, 240));

	/* comparisons and logic */
	g = binary_graph(13, "Equal", INT64, 1, D(3), I64(1, 2, 3), INT64, 1, D(1), I64(2), &n);
	expect_run(g, "Equal int64", BOOL, 1, D(3), B8(0, 1, 0));
	g = binary_graph(13, "Less", FL, 1, D(3), F(1, 2, 3), FL, 0, NULL, F(2), &n);
	expect_run(g, "Less", BOOL, 1, D(3), B8(1, 0, 0));
	g = binary_graph(13, "Greater", FL, 1, D(3), F(1, 2, 3), FL, 0, NULL, F(2), &n);
	expect_run(g, "Greater", BOOL, 1, D(3), B8(0, 0, 1));
	g = binary_graph(13, "LessOrEqual", FL, 1, D(3), F(1, 2, 3), FL, 0, NULL, F(2), &n);
	expect_run(g, "LessOrEqual", BOOL, 1, D(3), B8(1, 1, 0));
	g = binary_graph(13, "GreaterOrEqual", INT64, 1, D(3), I64(1, 2, 3), INT64, 0, NULL, I64(2), &n);
	expect_run(g, "GreaterOrEqual int64", BOOL, 1, D(3), B8(0, 1, 1));
	g = binary_graph(13, "Less", LOOM_DT_UINT64, 1, D(1), ((const uint64_t[]){1ull << 63}), LOOM_DT_UINT64,
			 1, D(1), ((const uint64_t[]){1}), &n);
	expect_run(g, "Less uint64 compares unsigned", BOOL, 1, D(1), B8(0));
	g = binary_graph(13, "And", BOOL, 1, D(4), B8(1, 1, 0, 0), BOOL, 1, D(4), B8(1, 0, 1, 0), &n);
	expect_run(g, "And", BOOL, 1, D(4), B8(1, 0, 0, 0));
	g = binary_graph(13, "Or", BOOL, 1, D(4), B8(1, 1, 0, 0), BOOL, 1, D(4), B8(1, 0, 1, 0), &n);
	expect_run(g, "Or", BOOL, 1, D(4), B8(1, 1, 1, 0));
	g = binary_graph(13, "Xor", BOOL, 2, D(2, 2), B8(1, 1, 0, 0), BOOL, 1, D(2), B8(1, 0), &n);
	expect_run(g, "Xor broadcast", BOOL, 2, D(2, 2), B8(0, 1, 1, 0));
	g = binary_graph(13, "And", FL, 1, D(1), F(1), FL, 1, D(1), F(1), &n);
	expect_fail(g, "And of floats fails", "'t'", "not bool", NULL);

	g = binary_graph(13, "PRelu", FL, 3, D(2, 1, 2), F(-1, 2, -3, 4), FL, 3, D(2, 1, 1), F(0.5f, 0.25f), &n);
	expect_run(g, "PRelu per channel", FL, 3, D(2, 1, 2), F(-0.5f, 2, -0.75f, 4));
	g = binary_graph(6, "PRelu", FL, 3, D(1, 2, 2), F(-1, 2, -3, 4), FL, 1, D(2), F(0.5f, 0.25f), &n);
	expect_run(g, "PRelu opset 6: a [C] slope is per channel", FL, 3, D(1, 2, 2), F(-0.5f, 2, -0.75f, 4));
	g = binary_graph(7, "PRelu", FL, 3, D(1, 2, 2), F(-1, 2, -3, 4), FL, 1, D(2), F(0.5f, 0.25f), &n);
	expect_run(g, "PRelu opset 7: a [2] slope broadcasts numpy-style", FL, 3, D(1, 2, 2),
		   F(-0.5f, 2, -1.5f, 4));
	g = binary_graph(13, "PRelu", FL, 1, D(2), F(-1, 2), FL, 2, D(2, 2), F(1, 2, 3, 4), &n);
	expect_fail(g, "PRelu slope must broadcast to X", "'t'", "PRelu", "slope", NULL);

	/* Where */
	g = gnew(13);
	{
		int c = ginput(g, "c", BOOL, 2, D(2, 2), B8(1, 0, 0, 1));
		int x = ginput(g, "x", FL, 1, D(2), F(1, 2));
		int y = gconst(g, "y", FL, 0, NULL, F(9));
		gnode(g, "Where", "t", (int[]){c, x, y}, 3, 1);
	}
	expect_run(g, "Where with three-way broadcast", FL, 2, D(2, 2), F(1, 9, 9, 2));
	g = gnew(13);
	{
		int c = ginput(g, "c", BOOL, 1, D(2), B8(0, 1));
		int x = ginput(g, "x", INT64, 1, D(2), I64(1, 2));
		int y = ginput(g, "y", INT64, 1, D(2), I64(-1, -2));
		gnode(g, "Where", "t", (int[]){c, x, y}, 3, 1);
	}
	expect_run(g, "Where int64", INT64, 1, D(2), I64(-1, 2));
}

static void test_variadic(void)
{
	loom_graph *g;
	const char *ops[4] = {"Max", "Min", "Sum", "Mean"};
	const float want[4][4] = {{3, 5, 2, 5}, {1, 2, 0, 0}, {6, 10, 3, 7}, {2, 10.0f / 3, 1, 7.0f / 3}};
	for (int k = 0; k < 4; k++) {
		char label[64];
		g = gnew(13);
		int a = ginput(g, "a", FL, 1, D(2), F(1, 5));
		int b = ginput(g, "b", FL, 2, D(2, 1), F(3, 0));
		int c = gconst(g, "c", FL, 0, NULL, F(2));
		gnode(g, ops[k], "t", (int[]){a, b, c}, 3, 1);
		snprintf(label, sizeof label, "%s of three broadcast inputs", ops[k]);
		expect_run(g, label, FL, 2, D(2, 2), want[k]);
	}
	g = gnew(13);
	{
		int a = ginput(g, "a", LOOM_DT_INT32, 1, D(3), (const int32_t[]){1, -5, 3});
		int b = ginput(g, "b", LOOM_DT_INT32, 1, D(3), (const int32_t[]){2, -6, 3});
		gnode(g, "Max", "t", (int[]){a, b}, 2, 1);
	}
	expect_run(g, "Max int32", LOOM_DT_INT32, 1, D(3), ((const int32_t[]){2, -5, 3}));
	g = gnew(13);
	{
		int a = ginput(g, "a", FL, 1, D(2), F(1, -5));
		gnode(g, "Min", "t", (int[]){a}, 1, 1);
	}
	expect_run(g, "Min of one input", FL, 1, D(2), F(1, -5));
	g = gnew(13);
	{
		int a = ginput(g, "a", INT64, 1, D(2), I64(1, -5));
		gnode(g, "Sum", "t", (int[]){a}, 1, 1);
	}
	expect_fail(g, "Sum of int64 fails", "'t'", "Sum", "not supported", NULL);
}

/* ================================================================== part 3: ONNX node test cases */

/* the cases skipped for a documented reason */
static const struct {
	const char *name, *why;
} known_skips[] = {
	{"test_training_dropout", "training-mode Dropout draws random masks"},
	{"test_training_dropout_default", "training-mode Dropout draws random masks"},
	{"test_training_dropout_default_mask", "training-mode Dropout draws random masks"},
	{"test_training_dropout_mask", "training-mode Dropout draws random masks"},
	{NULL, NULL},
};

/* the operators of part 3: the neural-network ones, whose kernels are in
 * runtime/ops_conv.c, ops_pool.c, ops_norm.c, ops_unary.c and ops_binary.c */
static const char *const nn_ops[] = {
	"Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
	"GlobalMaxPool", "BatchNormalization", "InstanceNormalization", "LayerNormalization", "LRN",
	"MeanVarianceNormalization", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid",
	"HardSwish", "Tanh", "Softplus", "Softsign", "Erf", "Gelu", "ThresholdedRelu", "Shrink", "Neg", "Abs",
	"Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin",
	"Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN", "IsInf", "Not", "Identity",
	"Dropout", "Clip", "Where", "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Less", "Greater",
	"LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "PRelu", "Max", "Min", "Sum", "Mean",
	NULL,
};

static int is_nn_op(const char *op)
{
	for (int i = 0; nn_ops[i]; i++)
		if (!strcmp(nn_ops[i], op))
			return 1;
	return 0;
}

/* a case named after one of nn_ops: test_<op lowercased>... (used only for
 * cases the importer cannot load, whose operators are unknown) */
static int named_like_ours(const char *name)
{
	for (int k = 0; nn_ops[k]; k++) {
		const char *op = nn_ops[k];
		size_t i = 0;
		const char *p = name + 5;
		for (; op[i]; i++)
			if (!p[i] || (p[i] | 0x20) != (op[i] | 0x20))
				break;
		if (!op[i] && (!p[i] || p[i] == '_'))
			return 1;
	}
	return 0;
}

struct tally {
	unsigned pass, fail, skip_other, skip_none, skip_design;
};

/* Load, run and compare one case. */
static void run_case(const char *root, const char *name, struct tally *ty)
{
	char path[1024], dir[1024], err[1024], why[1600];
	loom_graph *g = NULL;
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	for (int i = 0; known_skips[i].name; i++)
		if (!strcmp(name, known_skips[i].name)) {
			check_skip("%s: %s", name, known_skips[i].why);
			ty->skip_design++;
			return;
		}
	snprintf(path, sizeof path, "%s/%s/model.onnx", root, name);
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof err)) {
		/* what the importer rejects by design (compiler/onnx.h) */
		static const char *const by_design[] = {"float16", "bfloat16", "string", "sequence", "optional",
							"subgraph", "opsets 7 to 17", "domain", NULL};
		int skip = oc_err_has_any(err, by_design);
		if (skip && !named_like_ours(name)) {
			ty->skip_none++; /* not a case of ours, as far as the name tells */
		} else if (skip) {
			check_skip("%s: %s", name, err);
			ty->skip_design++;
		} else {
			CHECK_FAIL("%s: load: %s", name, err);
			ty->fail++;
		}
		return;
	}
	if (!g->nnodes) { /* all folded by the importer (test_constant) */
		ty->skip_other++;
		loom_graph_free(g);
		return;
	}
	for (int i = 0; i < g->nnodes; i++) {
		const char *op = g->nodes[i].op_type;
		if (!is_nn_op(op)) {
			if (loom_cpu_op_any(op))
				ty->skip_other++;
			else
				ty->skip_none++;
			loom_graph_free(g);
			return;
		}
	}
	/* inputs: input_<i>.pb into graph input i (by name when it has one) */
	for (int k = 0;; k++) {
		loom_tensor t;
		int ti, rc = oc_load_pb(dir, "input", k, &t, err, sizeof err);
		if (!rc)
			break;
		if (rc < 0) {
			CHECK_FAIL("%s: %s", name, err);
			ty->fail++;
			loom_graph_free(g);
			return;
		}
		ti = oc_input_tensor(g, k, &t);
		if (ti < 0) {
			CHECK_FAIL("%s: input_%d.pb '%s' matches no graph input", name, k, t.name);
			ty->fail++;
			loom_tensor_clear(&t);
			loom_graph_free(g);
			return;
		}
		oc_set_tensor(&g->tensors[ti], &t);
		loom_tensor_clear(&t);
	}
	if (loom_ref_run(g, err, sizeof err)) {
		CHECK_FAIL("%s: run: %s", name, err);
		ty->fail++;
		loom_graph_free(g);
		return;
	}
	oc_compare_outputs(g, dir, 1e-3, 1e-5, why, sizeof why);
	if (CHECK(!why[0], "%s%s%s", name, why[0] ? ": " : "", why))
		ty->pass++;
	else
		ty->fail++;
	loom_graph_free(g);
}

static int is_case(const char *root, const char *name, void *ctx)
{
	(void)root;
	(void)ctx;
	return !strncmp(name, "test_", 5);
}

static void test_onnx_cases(const char *root)
{
	char **names;
	size_t cnt;
	struct tally ty = {0, 0, 0, 0, 0};
	if (oc_list(root, is_case, NULL, &names, &cnt)) {
		check_skip("ONNX node test cases: no directory %s", root);
		return;
	}
	for (size_t i = 0; i < cnt; i++)
		run_case(root, names[i], &ty);
	oc_free_names(names, cnt);
	printf("     %s: cases of the neural-network operators: %u passed, %u failed, %u skipped by design; "
	       "left out: %u with other operators that have kernels (or none), %u others (operators without "
	       "kernel, or not loadable)\n",
	       root, ty.pass, ty.fail, ty.skip_design, ty.skip_other, ty.skip_none);
}

int main(int argc, char **argv)
{
	check_init(CHECK_SKIPS);
	static const char *const roots[] = {"/usr/share/libonnx-testdata/data/node",
					    "/usr/share/libonnx-testdata/data/pytorch-converted",
					    "/usr/share/libonnx-testdata/data/pytorch-operator",
					    "/usr/share/libonnx-testdata/data/simple", NULL};
	test_registry();
	test_helpers();
	test_executor();
	test_conv();
	test_gemm_matmul();
	test_gemm_sizes();
	test_pool();
	test_maxpool_fast();
	test_norm();
	test_unary();
	test_clip();
	test_binary();
	test_elementwise_bits();
	test_variadic();
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			test_onnx_cases(argv[i]);
	} else {
		for (int i = 0; roots[i]; i++)
			test_onnx_cases(roots[i]);
	}
	return check_report();
}
