/* test_cpu_shape.c - unit tests of the shape, data movement, reduction,
 * softmax, Cast and Resize kernels (runtime/ops_shape.c, ops_gather.c,
 * ops_gen.c, ops_reduce.c, ops_resize.c) through the reference executor
 * (loom_ref_run of runtime/cpu_ops.h).
 *
 * Part 1: one-node graphs built here, with hand-computed results, for every
 * operator and the opset variants where attributes became inputs or the
 * semantics changed (Softmax's axis, Slice's starts, Squeeze's axes, ...),
 * and error messages that must name the node and the problem.
 * Part 2: the ONNX node test cases of these operators (ONNX's own
 * test_<op>.../model.onnx with test_data_set_0, from Debian's libonnx-testdata
 * under /usr/share/libonnx-testdata/data/node, or the directory given as the
 * first argument): load, run, compare every output (floats within rtol 1e-3,
 * atol 1e-5, integers exactly). Cases that cannot load by design (float16,
 * bfloat16, string tensors) and cases needing an operator that has no kernel
 * yet are skipped with the reason.
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

/* ------------------------------------------------------------------ graph building */

#define gnew(opset) oc_graph_new((opset), "(built by test_cpu_shape)")

/* a tensor; data (numel * element size bytes) copied when given */
static int gtensor(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
		   const void *data, int is_const)
{
	int t = OC_MUST(loom_graph_add_tensor(g, name, dtype, rank, dims, data, is_const));
	if (is_const && !data) /* constants always have a buffer, even empty */
		g->tensors[t].data = oc_xmalloc(loom_tensor_bytes(&g->tensors[t]));
	return t;
}

/* a graph input (data set later by the case) */
#define ginput(g, name, dtype, rank, dims) oc_add_input((g), (name), (dtype), (rank), (dims), NULL)

/* an initializer */
static int gconst(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
		  const void *data)
{
	return gtensor(g, name, dtype, rank, dims, data, 1);
}

static int gconst_i64(loom_graph *g, const char *name, int cnt, const int64_t *v)
{
	int64_t d = cnt;
	return gconst(g, name, LOOM_DT_INT64, 1, &d, v);
}

/* a node; ins may hold -1 (omitted); each output (at most 8) becomes a new
 * tensor named "<name>_out<i>", the first output is also a graph output */
static loom_node *gnode(loom_graph *g, const char *op, const char *name, const int *ins, int nin,
			int nout)
{
	int outs[8], i;
	OC_MUST(nout <= 8 ? 0 : -1);
	for (i = 0; i < nout; i++) {
		char buf[128];
		snprintf(buf, sizeof buf, "%s_out%d", name, i);
		outs[i] = gtensor(g, buf, LOOM_DT_UNDEFINED, 0, NULL, NULL, 0);
		OC_MUST(loom_graph_add_output(g, outs[i]));
	}
	i = OC_MUST(loom_graph_add_node(g, op, name, ins, nin, outs, nout));
	return &g->nodes[i];
}

#define attr_i(n, name, v) OC_MUST(loom_node_set_attr_int((n), (name), (v)))
#define attr_f(n, name, v) OC_MUST(loom_node_set_attr_float((n), (name), (v)))
#define attr_s(n, name, v) OC_MUST(loom_node_set_attr_str((n), (name), (v)))
/* (the values last: a compound literal holds commas) */
#define attr_ints(n, name, cnt, ...) OC_MUST(loom_node_set_attr_ints((n), (name), __VA_ARGS__, (cnt)))
#define attr_floats(n, name, cnt, ...) OC_MUST(loom_node_set_attr_floats((n), (name), __VA_ARGS__, (cnt)))
#define attr_tensor(n, name, dtype, rank, dims, ...) \
	OC_MUST(loom_node_set_attr_tensor((n), (name), (dtype), (rank), (dims), __VA_ARGS__))

/* ------------------------------------------------------------------ running and comparing */

static void set_input(loom_graph *g, int t, const void *data)
{
	loom_tensor *x = &g->tensors[t];
	if (loom_tensor_set_data(x, data, loom_tensor_bytes(x))) {
		fprintf(stderr, "loom_tensor_set_data failed on %s\n", x->name);
		exit(2);
	}
}

static int same_dims(const loom_tensor *t, int rank, const int64_t *dims)
{
	if (t->rank != rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			return 0;
	return 1;
}

#define fmt_dims oc_fmt_dims

/* Compare got with want (dtype, shape, values: floats within rtol 1e-3 and
 * atol 1e-5, NaN equal to NaN, anything else exactly); "" or a reason. */
static void compare(const loom_tensor *got, int dtype, int rank, const int64_t *dims,
		    const void *want, char *why, size_t len)
{
	oc_compare(got, dtype, rank, dims, want, 1e-3, 1e-5, why, len);
}

/* Run g and compare output out (a tensor index) with the expectation; frees g. */
static void expect_out(loom_graph *g, const char *what, int out, int dtype, int rank,
		       const int64_t *dims, const void *want)
{
	char err[512], why[256];
	if (loom_ref_run(g, err, sizeof err)) {
		CHECK_FAIL("%s: %s", what, err);
	} else {
		compare(&g->tensors[out], dtype, rank, dims, want, why, sizeof why);
		CHECK(!why[0], "%s%s%s", what, why[0] ? ": " : "", why);
	}
}

static void expect_run(loom_graph *g, const char *what, int dtype, int rank, const int64_t *dims,
		       const void *want)
{
	expect_out(g, what, g->nodes[g->nnodes - 1].outputs[0], dtype, rank, dims, want);
	loom_graph_free(g);
}

/* The run (inference included) must fail with a message holding every
 * string of need (NULL-terminated). */
static void expect_fail(loom_graph *g, const char *what, const char *const *need)
{
	char err[512] = "";
	int rc = loom_ref_run(g, err, sizeof err), ok = rc != 0;
	for (int i = 0; ok && need[i]; i++)
		ok = strstr(err, need[i]) != NULL;
	CHECK(ok, "%s: %s", what, rc ? err : "succeeded");
	loom_graph_free(g);
}

/* ------------------------------------------------------------------ hand-computed cases */

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define F(...) ((const float[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define ERRS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const float iota24[24] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
				 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

/* a one-input node on a float [2,3,4] iota input */
static loom_graph *g_iota(int64_t opset, int *x)
{
	loom_graph *g = gnew(opset);
	*x = ginput(g, "x", LOOM_DT_FLOAT, 3, D(2, 3, 4));
	set_input(g, *x, iota24);
	return g;
}

static void test_reshape(void)
{
	int x;
	loom_graph *g = g_iota(13, &x);
	int s = gconst_i64(g, "shape", 2, I64(0, -1));
	gnode(g, "Reshape", "r1", (int[]){x, s}, 2, 1);
	expect_run(g, "Reshape [2,3,4] by [0,-1] -> [2,12]", LOOM_DT_FLOAT, 2, D(2, 12), iota24);

	g = g_iota(13, &x);
	s = gconst_i64(g, "shape", 4, I64(4, 1, -1, 2));
	gnode(g, "Reshape", "r2", (int[]){x, s}, 2, 1);
	expect_run(g, "Reshape by [4,1,-1,2] -> [4,1,3,2]", LOOM_DT_FLOAT, 4, D(4, 1, 3, 2), iota24);

	/* allowzero (opset 14): a 0 is a real zero-size dim */
	g = gnew(14);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(0, 3));
	set_input(g, x, NULL);
	s = gconst_i64(g, "shape", 2, I64(3, 0));
	loom_node *n = gnode(g, "Reshape", "r3", (int[]){x, s}, 2, 1);
	attr_i(n, "allowzero", 1);
	expect_run(g, "Reshape allowzero [0,3] -> [3,0]", LOOM_DT_FLOAT, 2, D(3, 0), NULL);

	/* opset 13 ignores allowzero: 0 copies the input dim */
	g = g_iota(13, &x);
	s = gconst_i64(g, "shape", 3, I64(0, 0, 4));
	gnode(g, "Reshape", "r4", (int[]){x, s}, 2, 1);
	expect_run(g, "Reshape [0,0,4] keeps dims", LOOM_DT_FLOAT, 3, D(2, 3, 4), iota24);

	g = g_iota(13, &x);
	s = gconst_i64(g, "shape", 2, I64(-1, -1));
	gnode(g, "Reshape", "bad_reshape", (int[]){x, s}, 2, 1);
	expect_fail(g, "Reshape two -1 fails naming the node",
		    ERRS("bad_reshape", "Reshape", "more than one -1"));

	g = g_iota(13, &x);
	s = gconst_i64(g, "shape", 2, I64(5, -1));
	gnode(g, "Reshape", "bad_reshape2", (int[]){x, s}, 2, 1);
	expect_fail(g, "Reshape 24 elements by [5,-1] fails", ERRS("bad_reshape2", "24"));

	/* int8 data and a shape computed by Shape (dtype-generic, constant folding) */
	static const int8_t i8[6] = {1, -2, 3, -4, 5, -6};
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT8, 2, D(2, 3));
	set_input(g, x, i8);
	int y = ginput(g, "y", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, y, iota24);
	loom_node *sh = gnode(g, "Shape", "shape_of_y", (int[]){y}, 1, 1);
	gnode(g, "Reshape", "r5", (int[]){x, sh->outputs[0]}, 2, 1);
	expect_run(g, "Reshape int8 by Shape(y)", LOOM_DT_INT8, 2, D(3, 2), i8);

	/* the chain exported models use on a non-constant input:
	 * Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 3, D(2, 3, 4));
	set_input(g, x, iota24);
	int sx = gnode(g, "Shape", "c_shape", (int[]){x}, 1, 1)->outputs[0];
	int i0 = gconst(g, "i0", LOOM_DT_INT64, 0, NULL, I64(0));
	int ga = gnode(g, "Gather", "c_gather", (int[]){sx, i0}, 2, 1)->outputs[0];
	int ax = gconst_i64(g, "ax", 1, I64(0));
	int un = gnode(g, "Unsqueeze", "c_unsq", (int[]){ga, ax}, 2, 1)->outputs[0];
	int m1 = gconst_i64(g, "m1", 1, I64(-1));
	loom_node *cn = gnode(g, "Concat", "c_concat", (int[]){un, m1}, 2, 1);
	int cc = cn->outputs[0];
	attr_i(cn, "axis", 0);
	gnode(g, "Reshape", "c_reshape", (int[]){x, cc}, 2, 1);
	expect_run(g, "Reshape by Shape->Gather->Unsqueeze->Concat of a graph input",
		   LOOM_DT_FLOAT, 2, D(2, 12), iota24);
}

static void test_flatten_squeeze(void)
{
	int x;
	loom_graph *g = g_iota(11, &x);
	loom_node *n = gnode(g, "Flatten", "f0", (int[]){x}, 1, 1);
	attr_i(n, "axis", 0);
	expect_run(g, "Flatten axis 0 -> [1,24]", LOOM_DT_FLOAT, 2, D(1, 24), iota24);
	g = g_iota(11, &x);
	gnode(g, "Flatten", "f1", (int[]){x}, 1, 1);
	expect_run(g, "Flatten default axis 1 -> [2,12]", LOOM_DT_FLOAT, 2, D(2, 12), iota24);
	g = g_iota(11, &x);
	n = gnode(g, "Flatten", "f2", (int[]){x}, 1, 1);
	attr_i(n, "axis", -1);
	expect_run(g, "Flatten axis -1 -> [6,4]", LOOM_DT_FLOAT, 2, D(6, 4), iota24);

	/* Squeeze: attribute (opset 11), input (opset 13), none = all ones */
	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 3, 1, 2));
	set_input(g, x, iota24);
	n = gnode(g, "Squeeze", "sq11", (int[]){x}, 1, 1);
	attr_ints(n, "axes", 1, I64(-2));
	expect_run(g, "Squeeze opset 11 axes attr [-2]", LOOM_DT_FLOAT, 3, D(1, 3, 2), iota24);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 3, 1, 2));
	set_input(g, x, iota24);
	int a = gconst_i64(g, "axes", 1, I64(0));
	gnode(g, "Squeeze", "sq13", (int[]){x, a}, 2, 1);
	expect_run(g, "Squeeze opset 13 axes input [0]", LOOM_DT_FLOAT, 3, D(3, 1, 2), iota24);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 3, 1, 2));
	set_input(g, x, iota24);
	gnode(g, "Squeeze", "sq_all", (int[]){x}, 1, 1);
	expect_run(g, "Squeeze without axes drops every 1", LOOM_DT_FLOAT, 2, D(3, 2), iota24);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 3, 1, 2));
	set_input(g, x, iota24);
	a = gconst_i64(g, "axes", 1, I64(1));
	gnode(g, "Squeeze", "sq_bad", (int[]){x, a}, 2, 1);
	expect_fail(g, "Squeeze of a dim of size 3 fails", ERRS("sq_bad", "Squeeze", "axis 1"));

	/* Unsqueeze: attribute (opset 11), input (opset 13), axes of the output */
	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, x, iota24);
	n = gnode(g, "Unsqueeze", "us11", (int[]){x}, 1, 1);
	attr_ints(n, "axes", 2, I64(0, 3));
	expect_run(g, "Unsqueeze opset 11 axes [0,3]", LOOM_DT_FLOAT, 4, D(1, 3, 2, 1), iota24);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, x, iota24);
	a = gconst_i64(g, "axes", 2, I64(-1, 1));
	gnode(g, "Unsqueeze", "us13", (int[]){x, a}, 2, 1);
	expect_run(g, "Unsqueeze opset 13 axes input [-1,1]", LOOM_DT_FLOAT, 4, D(3, 1, 2, 1),
		   iota24);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, x, iota24);
	n = gnode(g, "Unsqueeze", "us_attr13", (int[]){x}, 1, 1);
	attr_ints(n, "axes", 1, I64(0));
	expect_fail(g, "Unsqueeze opset 13 without axes input fails", ERRS("us_attr13", "axes"));
}

static void test_transpose_concat_split(void)
{
	int x;
	loom_graph *g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 2, D(2, 3));
	set_input(g, x, I64(1, 2, 3, 4, 5, 6));
	gnode(g, "Transpose", "t0", (int[]){x}, 1, 1);
	expect_run(g, "Transpose int64 default perm", LOOM_DT_INT64, 2, D(3, 2), I64(1, 4, 2, 5, 3, 6));

	g = g_iota(13, &x);
	loom_node *n = gnode(g, "Transpose", "t1", (int[]){x}, 1, 1);
	attr_ints(n, "perm", 3, I64(1, 2, 0));
	expect_run(g, "Transpose [2,3,4] perm [1,2,0]", LOOM_DT_FLOAT, 3, D(3, 4, 2),
		   F(0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11,
		     23));

	g = g_iota(13, &x);
	n = gnode(g, "Transpose", "t_bad", (int[]){x}, 1, 1);
	attr_ints(n, "perm", 3, I64(0, 0, 1));
	expect_fail(g, "Transpose with a bad perm fails", ERRS("t_bad", "perm"));

	static const int8_t a8[4] = {1, 2, 3, 4}, b8[2] = {-1, -2};
	g = gnew(13);
	int a = ginput(g, "a", LOOM_DT_INT8, 2, D(2, 2)), b = ginput(g, "b", LOOM_DT_INT8, 2, D(2, 1));
	set_input(g, a, a8);
	set_input(g, b, b8);
	n = gnode(g, "Concat", "c0", (int[]){a, b}, 2, 1);
	attr_i(n, "axis", -1);
	expect_run(g, "Concat int8 axis -1", LOOM_DT_INT8, 2, D(2, 3),
		   (const int8_t[]){1, 2, -1, 3, 4, -2});

	g = gnew(13);
	a = ginput(g, "a", LOOM_DT_INT8, 2, D(2, 2));
	b = ginput(g, "b", LOOM_DT_INT8, 2, D(2, 1));
	set_input(g, a, a8);
	set_input(g, b, b8);
	n = gnode(g, "Concat", "c_bad", (int[]){a, b}, 2, 1);
	attr_i(n, "axis", 0);
	expect_fail(g, "Concat of mismatched dims fails", ERRS("c_bad", "Concat", "input 1"));

	/* Split: attribute (opset 11), input (opset 13), equal parts */
	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, x, iota24);
	n = gnode(g, "Split", "s11", (int[]){x}, 1, 2);
	attr_ints(n, "split", 2, I64(1, 2));
	int o1 = n->outputs[1];
	expect_out(g, "Split opset 11 split attr: output 1", o1, LOOM_DT_FLOAT, 2, D(2, 2),
		   F(2, 3, 4, 5));
	expect_out(g, "Split opset 11 split attr: output 0", n->outputs[0], LOOM_DT_FLOAT, 2,
		   D(1, 2), F(0, 1));
	loom_graph_free(g);

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, iota24);
	int sp = gconst_i64(g, "split", 2, I64(2, 1));
	n = gnode(g, "Split", "s13", (int[]){x, sp}, 2, 2);
	attr_i(n, "axis", 1);
	o1 = n->outputs[1];
	expect_out(g, "Split opset 13 split input, axis 1: output 1", o1, LOOM_DT_FLOAT, 2, D(2, 1),
		   F(2, 5));
	loom_graph_free(g);

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 1, D(6));
	set_input(g, x, I64(1, 2, 3, 4, 5, 6));
	n = gnode(g, "Split", "s_eq", (int[]){x}, 1, 3);
	o1 = n->outputs[2];
	expect_out(g, "Split int64 into 3 equal parts: output 2", o1, LOOM_DT_INT64, 1, D(2), I64(5, 6));
	loom_graph_free(g);

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 1, D(5));
	set_input(g, x, I64(1, 2, 3, 4, 5));
	gnode(g, "Split", "s_uneven", (int[]){x}, 1, 2);
	expect_fail(g, "Split of 5 into 2 equal parts fails (opset 13)", ERRS("s_uneven", "equal"));
}

static void test_slice_gather(void)
{
	static const float v10[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
	int x;
	/* opset 9: attributes */
	loom_graph *g = gnew(9);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 5));
	set_input(g, x, v10);
	loom_node *n = gnode(g, "Slice", "sl9", (int[]){x}, 1, 1);
	attr_ints(n, "starts", 2, I64(1, -4));
	attr_ints(n, "ends", 2, I64(1000, -1));
	attr_ints(n, "axes", 2, I64(0, 1));
	expect_run(g, "Slice opset 9 attrs, clamped end, negative start", LOOM_DT_FLOAT, 2, D(1, 3),
		   F(6, 7, 8));

	/* opset 13: inputs, negative steps, out-of-range clamps */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(10));
	set_input(g, x, v10);
	int st = gconst_i64(g, "starts", 1, I64(-1)), en = gconst_i64(g, "ends", 1, I64(INT64_MIN));
	int ax = gconst_i64(g, "axes", 1, I64(0)), sp = gconst_i64(g, "steps", 1, I64(-3));
	gnode(g, "Slice", "sl13", (int[]){x, st, en, ax, sp}, 5, 1);
	expect_run(g, "Slice step -3 from -1 to INT64_MIN", LOOM_DT_FLOAT, 1, D(4), F(9, 6, 3, 0));

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 5));
	set_input(g, x, v10);
	st = gconst_i64(g, "starts", 1, I64(1));
	en = gconst_i64(g, "ends", 1, I64(INT64_MAX));
	ax = gconst_i64(g, "axes", 1, I64(-1));
	sp = gconst_i64(g, "steps", 1, I64(2));
	gnode(g, "Slice", "sl13b", (int[]){x, st, en, ax, sp}, 5, 1);
	expect_run(g, "Slice axis -1 step 2 to INT64_MAX", LOOM_DT_FLOAT, 2, D(2, 2), F(1, 3, 6, 8));

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(10));
	set_input(g, x, v10);
	st = gconst_i64(g, "starts", 1, I64(7));
	en = gconst_i64(g, "ends", 1, I64(3));
	gnode(g, "Slice", "sl_empty", (int[]){x, st, en}, 3, 1);
	expect_run(g, "Slice start > end gives empty", LOOM_DT_FLOAT, 1, D(0), NULL);

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(10));
	set_input(g, x, v10);
	st = gconst_i64(g, "starts", 1, I64(0));
	en = gconst_i64(g, "ends", 1, I64(3));
	sp = gconst_i64(g, "steps", 1, I64(0));
	gnode(g, "Slice", "sl_step0", (int[]){x, st, en, -1, sp}, 5, 1);
	expect_fail(g, "Slice step 0 fails", ERRS("sl_step0", "step"));

	/* Slice whose starts is a graph input without data fails in inference */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(10));
	set_input(g, x, v10);
	st = gconst_i64(g, "starts", 1, I64(0));
	en = gtensor(g, "dyn_ends", LOOM_DT_INT64, 1, D(1), NULL, 0);
	gnode(g, "Slice", "sl_dyn", (int[]){x, st, en}, 3, 1);
	expect_fail(g, "Slice with unknown ends fails naming the input",
		    ERRS("sl_dyn", "dyn_ends", "not a constant"));

	/* Gather */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 2, D(2, 3));
	set_input(g, x, I64(1, 2, 3, 4, 5, 6));
	int ix = gconst(g, "ix", LOOM_DT_INT32, 2, D(2, 2), (const int32_t[]){-1, 0, 1, 1});
	n = gnode(g, "Gather", "ga", (int[]){x, ix}, 2, 1);
	attr_i(n, "axis", 1);
	expect_run(g, "Gather int64 axis 1 int32 indices incl. -1", LOOM_DT_INT64, 3, D(2, 2, 2),
		   I64(3, 1, 2, 2, 6, 4, 5, 5));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 5));
	set_input(g, x, v10);
	ix = gconst(g, "ix", LOOM_DT_INT64, 0, NULL, I64(1));
	gnode(g, "Gather", "ga0", (int[]){x, ix}, 2, 1);
	expect_run(g, "Gather scalar index removes the axis", LOOM_DT_FLOAT, 1, D(5), F(5, 6, 7, 8, 9));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 5));
	set_input(g, x, v10);
	ix = gconst(g, "ix", LOOM_DT_INT64, 1, D(1), I64(2));
	gnode(g, "Gather", "ga_oob", (int[]){x, ix}, 2, 1);
	expect_fail(g, "Gather index 2 of 2 fails", ERRS("ga_oob", "index 2"));

	/* GatherElements */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 2));
	set_input(g, x, F(1, 2, 3, 4));
	ix = gconst(g, "ix", LOOM_DT_INT64, 2, D(2, 2), I64(0, 0, -1, 0));
	n = gnode(g, "GatherElements", "ge", (int[]){x, ix}, 2, 1);
	attr_i(n, "axis", 1);
	expect_run(g, "GatherElements axis 1", LOOM_DT_FLOAT, 2, D(2, 2), F(1, 1, 4, 3));
}

static void test_pad_tile_expand(void)
{
	static const float v6[6] = {1, 2, 3, 4, 5, 6};
	int x;
	/* opset 11: pads input, constant_value input */
	loom_graph *g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	int p = gconst_i64(g, "pads", 4, I64(1, 0, 0, 1));
	int cv = gconst(g, "cv", LOOM_DT_FLOAT, 0, NULL, F(9));
	gnode(g, "Pad", "pad_c", (int[]){x, p, cv}, 3, 1);
	expect_run(g, "Pad constant 9", LOOM_DT_FLOAT, 2, D(3, 4),
		   F(9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9));

	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	p = gconst_i64(g, "pads", 4, I64(0, 2, 0, 1));
	loom_node *n = gnode(g, "Pad", "pad_r", (int[]){x, p}, 2, 1);
	attr_s(n, "mode", "reflect");
	expect_run(g, "Pad reflect", LOOM_DT_FLOAT, 2, D(2, 6),
		   F(3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5));

	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	p = gconst_i64(g, "pads", 4, I64(1, 1, 0, -1));
	n = gnode(g, "Pad", "pad_e", (int[]){x, p}, 2, 1);
	attr_s(n, "mode", "edge");
	expect_run(g, "Pad edge with a negative (cropping) pad", LOOM_DT_FLOAT, 2, D(3, 3),
		   F(1, 1, 2, 1, 1, 2, 4, 4, 5));

	/* opset 2: pads and value attributes, int32 data */
	g = gnew(7);
	x = ginput(g, "x", LOOM_DT_INT32, 1, D(2));
	set_input(g, x, (const int32_t[]){7, 8});
	n = gnode(g, "Pad", "pad7", (int[]){x}, 1, 1);
	attr_ints(n, "pads", 2, I64(1, 2));
	attr_f(n, "value", -1.0f);
	expect_run(g, "Pad opset 7 attributes, int32", LOOM_DT_INT32, 1, D(5),
		   (const int32_t[]){-1, 7, 8, -1, -1});

	/* Tile, Expand */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 2, D(1, 2));
	set_input(g, x, I64(1, 2));
	int r = gconst_i64(g, "repeats", 2, I64(2, 2));
	gnode(g, "Tile", "tile", (int[]){x, r}, 2, 1);
	expect_run(g, "Tile [1,2] by [2,2]", LOOM_DT_INT64, 2, D(2, 4), I64(1, 2, 1, 2, 1, 2, 1, 2));

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 1));
	set_input(g, x, F(1, 2, 3));
	int s = gconst_i64(g, "shape", 3, I64(2, 1, 2));
	gnode(g, "Expand", "ex", (int[]){x, s}, 2, 1);
	expect_run(g, "Expand [3,1] to [2,1,2] -> [2,3,2]", LOOM_DT_FLOAT, 3, D(2, 3, 2),
		   F(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(3, 2));
	set_input(g, x, v6);
	s = gconst_i64(g, "shape", 2, I64(2, 2));
	gnode(g, "Expand", "ex_bad", (int[]){x, s}, 2, 1);
	expect_fail(g, "Expand [3,2] to [2,2] fails", ERRS("ex_bad", "Expand"));
}

static void test_shape_misc(void)
{
	int x;
	loom_graph *g = g_iota(15, &x);
	loom_node *n = gnode(g, "Shape", "sh15", (int[]){x}, 1, 1);
	attr_i(n, "start", -2);
	expect_run(g, "Shape opset 15 start -2", LOOM_DT_INT64, 1, D(2), I64(3, 4));
	g = g_iota(13, &x);
	n = gnode(g, "Shape", "sh13", (int[]){x}, 1, 1);
	attr_i(n, "start", 1); /* not an attribute before 15: ignored */
	expect_run(g, "Shape opset 13 ignores start", LOOM_DT_INT64, 1, D(3), I64(2, 3, 4));
	g = g_iota(13, &x);
	gnode(g, "Size", "size", (int[]){x}, 1, 1);
	expect_run(g, "Size", LOOM_DT_INT64, 0, NULL, I64(24));

	g = gnew(13);
	int s = gconst_i64(g, "shape", 2, I64(2, 1));
	n = gnode(g, "ConstantOfShape", "cos", (int[]){s}, 1, 1);
	attr_tensor(n, "value", LOOM_DT_INT64, 1, D(1), I64(-5));
	expect_run(g, "ConstantOfShape int64 -5", LOOM_DT_INT64, 2, D(2, 1), I64(-5, -5));
	g = gnew(13);
	s = gconst_i64(g, "shape", 1, I64(3));
	gnode(g, "ConstantOfShape", "cos0", (int[]){s}, 1, 1);
	expect_run(g, "ConstantOfShape default float 0", LOOM_DT_FLOAT, 1, D(3), F(0, 0, 0));

	g = gnew(13);
	n = gnode(g, "Constant", "k_ints", (int[]){0}, 0, 1);
	attr_ints(n, "value_ints", 3, I64(4, 5, 6));
	expect_run(g, "Constant value_ints", LOOM_DT_INT64, 1, D(3), I64(4, 5, 6));
	g = gnew(13);
	n = gnode(g, "Constant", "k_float", (int[]){0}, 0, 1);
	attr_f(n, "value_float", 2.5f);
	expect_run(g, "Constant value_float", LOOM_DT_FLOAT, 0, NULL, F(2.5f));
	g = gnew(13);
	n = gnode(g, "Constant", "k_t", (int[]){0}, 0, 1);
	attr_tensor(n, "value", LOOM_DT_INT8, 2, D(1, 2), (const int8_t[]){-3, 4});
	expect_run(g, "Constant value tensor int8", LOOM_DT_INT8, 2, D(1, 2), (const int8_t[]){-3, 4});

	g = gnew(13);
	int a = gconst(g, "start", LOOM_DT_INT32, 0, NULL, (const int32_t[]){10});
	int b = gconst(g, "limit", LOOM_DT_INT32, 0, NULL, (const int32_t[]){3});
	int c = gconst(g, "delta", LOOM_DT_INT32, 0, NULL, (const int32_t[]){-3});
	gnode(g, "Range", "range_i", (int[]){a, b, c}, 3, 1);
	expect_run(g, "Range int32 10..3 step -3", LOOM_DT_INT32, 1, D(3), (const int32_t[]){10, 7, 4});
	g = gnew(13);
	a = gconst(g, "start", LOOM_DT_FLOAT, 0, NULL, F(0.5f));
	b = gconst(g, "limit", LOOM_DT_FLOAT, 0, NULL, F(2.0f));
	c = gconst(g, "delta", LOOM_DT_FLOAT, 0, NULL, F(0.5f));
	gnode(g, "Range", "range_f", (int[]){a, b, c}, 3, 1);
	expect_run(g, "Range float 0.5..2 step 0.5", LOOM_DT_FLOAT, 1, D(3), F(0.5f, 1.0f, 1.5f));

	/* Cast */
	static const float fv[6] = {2.7f, -2.7f, 0.0f, 127.0f, -128.0f, 0.25f};
	const struct {
		int to;
		const void *want;
	} casts[] = {
		{LOOM_DT_INT64, I64(2, -2, 0, 127, -128, 0)},
		{LOOM_DT_INT32, (const int32_t[]){2, -2, 0, 127, -128, 0}},
		{LOOM_DT_INT8, (const int8_t[]){2, -2, 0, 127, -128, 0}},
		{LOOM_DT_BOOL, (const uint8_t[]){1, 1, 0, 1, 1, 1}},
		{LOOM_DT_DOUBLE, (const double[]){2.7f, -2.7f, 0, 127, -128, 0.25}},
	};
	for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
		char what[64];
		g = gnew(13);
		x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(6));
		set_input(g, x, fv);
		n = gnode(g, "Cast", "cast", (int[]){x}, 1, 1);
		attr_i(n, "to", casts[i].to);
		snprintf(what, sizeof what, "Cast float -> %s", loom_dtype_name(casts[i].to));
		expect_run(g, what, casts[i].to, 1, D(6), casts[i].want);
	}
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_UINT8, 1, D(3));
	set_input(g, x, (const uint8_t[]){0, 200, 255});
	n = gnode(g, "Cast", "cast_u8", (int[]){x}, 1, 1);
	attr_i(n, "to", LOOM_DT_FLOAT);
	expect_run(g, "Cast uint8 -> float", LOOM_DT_FLOAT, 1, D(3), F(0, 200, 255));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 1, D(2));
	set_input(g, x, I64(-1, 300));
	n = gnode(g, "Cast", "cast_i64", (int[]){x}, 1, 1);
	attr_i(n, "to", LOOM_DT_UINT8);
	expect_run(g, "Cast int64 -> uint8 wraps", LOOM_DT_UINT8, 1, D(2), (const uint8_t[]){255, 44});
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 1, D(2));
	set_input(g, x, fv);
	n = gnode(g, "Cast", "cast_f16", (int[]){x}, 1, 1);
	attr_i(n, "to", 10);
	expect_fail(g, "Cast to float16 fails", ERRS("cast_f16", "float16"));
}

static void test_softmax(void)
{
	/* x [2,2,2] = 0..7, axis 1: opset 11 normalizes over the last 4 values
	 * of each row, opset 13 over axis 1 only */
	static const float in8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	const double e = exp(1.0), s4 = 1 + e + e * e + e * e * e, s2 = 1 + e * e;
	float w11[8], w13[8], l13[8];
	for (int i = 0; i < 8; i++) {
		w11[i] = (float)(pow(e, i % 4) / s4);
		w13[i] = (float)(pow(e, (i % 4) / 2 * 2) / s2);
		l13[i] = (float)log(w13[i]);
	}
	for (int v = 0; v < 3; v++) {
		int64_t opset = v == 0 ? 11 : 13;
		loom_graph *g = gnew(opset);
		int x = ginput(g, "x", LOOM_DT_FLOAT, 3, D(2, 2, 2));
		set_input(g, x, in8);
		loom_node *n = gnode(g, v == 2 ? "LogSoftmax" : "Softmax", "sm", (int[]){x}, 1, 1);
		attr_i(n, "axis", 1);
		expect_run(g,
			   v == 0 ? "Softmax opset 11 axis 1 (coerced to 2-D)"
			   : v == 1 ? "Softmax opset 13 axis 1 (one axis)"
				    : "LogSoftmax opset 13 axis 1",
			   LOOM_DT_FLOAT, 3, D(2, 2, 2), v == 0 ? w11 : v == 1 ? w13 : l13);
	}
	/* default axis: 1 before 13 (= whole rows of a 2-D input), -1 from 13 */
	loom_graph *g = gnew(13);
	int x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(1, 3));
	set_input(g, x, F(1000, 1000, 1000));
	gnode(g, "Softmax", "sm_big", (int[]){x}, 1, 1);
	expect_run(g, "Softmax of large equal values", LOOM_DT_FLOAT, 2, D(1, 3),
		   F(1 / 3.0f, 1 / 3.0f, 1 / 3.0f));
}

static void test_reduce_arg(void)
{
	/* x [2,3] = {1,2,3,4,5,6} */
	static const float v6[6] = {1, 2, 3, 4, 5, 6};
	int x;
	loom_graph *g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	int a = gconst_i64(g, "axes", 1, I64(-1));
	loom_node *n = gnode(g, "ReduceSum", "rs13", (int[]){x, a}, 2, 1);
	attr_i(n, "keepdims", 0);
	expect_run(g, "ReduceSum opset 13 axes input, keepdims 0", LOOM_DT_FLOAT, 1, D(2), F(6, 15));

	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	n = gnode(g, "ReduceSum", "rs11", (int[]){x}, 1, 1);
	attr_ints(n, "axes", 1, I64(0));
	expect_run(g, "ReduceSum opset 11 axes attr", LOOM_DT_FLOAT, 2, D(1, 3), F(5, 7, 9));

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	n = gnode(g, "ReduceSum", "rs_noop", (int[]){x}, 1, 1);
	attr_i(n, "noop_with_empty_axes", 1);
	expect_run(g, "ReduceSum noop_with_empty_axes", LOOM_DT_FLOAT, 2, D(2, 3), v6);

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, v6);
	gnode(g, "ReduceMean", "rm", (int[]){x}, 1, 1);
	expect_run(g, "ReduceMean all axes, keepdims", LOOM_DT_FLOAT, 2, D(1, 1), F(3.5f));

	const struct {
		const char *op;
		float r0, r1;
	} rs[] = {
		{"ReduceMax", 3, 6},
		{"ReduceMin", 1, 4},
		{"ReduceProd", 6, 120},
		{"ReduceL1", 6, 15},
		{"ReduceL2", 3.7416574f, 8.7749643f},
		{"ReduceSumSquare", 14, 77},
		{"ReduceLogSum", 1.7917595f, 2.7080502f},
		{"ReduceLogSumExp", 3.4076059f, 6.4076059f},
	};
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
		g = gnew(13);
		x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
		set_input(g, x, v6);
		n = gnode(g, rs[i].op, "red", (int[]){x}, 1, 1);
		attr_ints(n, "axes", 1, I64(1));
		char what[64];
		snprintf(what, sizeof what, "%s axis 1", rs[i].op);
		expect_run(g, what, LOOM_DT_FLOAT, 2, D(2, 1), F(rs[i].r0, rs[i].r1));
	}
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT64, 2, D(2, 2));
	set_input(g, x, I64(-3, 7, 5, 2));
	n = gnode(g, "ReduceMax", "rmax_i", (int[]){x}, 1, 1);
	attr_ints(n, "axes", 1, I64(0));
	attr_i(n, "keepdims", 0);
	expect_run(g, "ReduceMax int64", LOOM_DT_INT64, 1, D(2), I64(5, 7));

	/* ArgMax / ArgMin: ties, select_last_index (opset 12) */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, F(1, 5, 5, 2, 2, 0));
	n = gnode(g, "ArgMax", "am", (int[]){x}, 1, 1);
	attr_i(n, "axis", 1);
	expect_run(g, "ArgMax ties take the first", LOOM_DT_INT64, 2, D(2, 1), I64(1, 0));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, F(1, 5, 5, 2, 2, 0));
	n = gnode(g, "ArgMax", "am_last", (int[]){x}, 1, 1);
	attr_i(n, "axis", -1);
	attr_i(n, "select_last_index", 1);
	attr_i(n, "keepdims", 0);
	expect_run(g, "ArgMax select_last_index, keepdims 0", LOOM_DT_INT64, 1, D(2), I64(2, 1));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_INT32, 2, D(2, 3));
	set_input(g, x, (const int32_t[]){1, 5, 5, 2, 2, 0});
	gnode(g, "ArgMin", "amin", (int[]){x}, 1, 1);
	expect_run(g, "ArgMin int32 axis 0", LOOM_DT_INT64, 2, D(1, 3), I64(0, 1, 1));

	/* TopK: opset 9 attribute k, opset 11 input K, smallest */
	g = gnew(9);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, F(1, 5, 5, 2, 2, 0));
	n = gnode(g, "TopK", "topk9", (int[]){x}, 1, 2);
	attr_i(n, "k", 2);
	int oi = n->outputs[1];
	expect_out(g, "TopK opset 9 k attr: indices", oi, LOOM_DT_INT64, 2, D(2, 2), I64(1, 2, 0, 1));
	loom_graph_free(g);
	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_FLOAT, 2, D(2, 3));
	set_input(g, x, F(1, 5, 5, 2, 2, 0));
	int k = gconst_i64(g, "k", 1, I64(2));
	n = gnode(g, "TopK", "topk11", (int[]){x, k}, 2, 2);
	attr_i(n, "largest", 0);
	attr_i(n, "axis", 0);
	expect_run(g, "TopK opset 11 K input, smallest, axis 0: values", LOOM_DT_FLOAT, 2, D(2, 3),
		   F(1, 2, 0, 2, 5, 5));
}

static void test_resize(void)
{
	static const float x4[4] = {1, 2, 3, 4};
	/* Upsample opset 7 (scales attribute), nearest */
	loom_graph *g = gnew(7);
	int x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	loom_node *n = gnode(g, "Upsample", "up7", (int[]){x}, 1, 1);
	attr_floats(n, "scales", 4, F(1, 1, 2, 3));
	static const float near23[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
					 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
	expect_run(g, "Upsample opset 7 nearest x2 x3", LOOM_DT_FLOAT, 4, D(1, 1, 4, 6), near23);

	/* Upsample opset 9 (scales input), linear: asymmetric, clamped */
	g = gnew(9);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	int s = gconst(g, "scales", LOOM_DT_FLOAT, 1, D(4), F(1, 1, 2, 2));
	n = gnode(g, "Upsample", "up9", (int[]){x, s}, 2, 1);
	attr_s(n, "mode", "linear");
	expect_run(g, "Upsample opset 9 linear x2", LOOM_DT_FLOAT, 4, D(1, 1, 4, 4),
		   F(1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 3, 3.5f, 4, 4, 3, 3.5f, 4, 4));

	/* Resize opset 10 (X, scales): same coordinates as Upsample */
	g = gnew(10);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	s = gconst(g, "scales", LOOM_DT_FLOAT, 1, D(4), F(1, 1, 2, 3));
	gnode(g, "Resize", "rz10", (int[]){x, s}, 2, 1);
	expect_run(g, "Resize opset 10 nearest x2 x3", LOOM_DT_FLOAT, 4, D(1, 1, 4, 6), near23);

	/* Resize opset 13 linear half_pixel x2 (ONNX's resize_upsample_scales_linear) */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	s = gconst(g, "scales", LOOM_DT_FLOAT, 1, D(4), F(1, 1, 2, 2));
	n = gnode(g, "Resize", "rz13", (int[]){x, -1, s}, 3, 1);
	attr_s(n, "mode", "linear");
	expect_run(g, "Resize opset 13 linear half_pixel x2", LOOM_DT_FLOAT, 4, D(1, 1, 4, 4),
		   F(1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3,
		     3.25f, 3.75f, 4));

	/* align_corners via sizes, int8 nearest with opset 11's (empty) scales */
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	s = gconst_i64(g, "sizes", 4, I64(1, 1, 3, 3));
	n = gnode(g, "Resize", "rz_ac", (int[]){x, -1, -1, s}, 4, 1);
	attr_s(n, "mode", "linear");
	attr_s(n, "coordinate_transformation_mode", "align_corners");
	expect_run(g, "Resize linear align_corners to 3x3", LOOM_DT_FLOAT, 4, D(1, 1, 3, 3),
		   F(1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4));

	g = gnew(11);
	x = ginput(g, "x", LOOM_DT_INT8, 4, D(1, 1, 1, 4));
	set_input(g, x, (const int8_t[]){-1, 2, -3, 4});
	int roi = gconst(g, "roi", LOOM_DT_FLOAT, 1, D(0), NULL);
	s = gconst(g, "scales", LOOM_DT_FLOAT, 1, D(0), NULL);
	int sz = gconst_i64(g, "sizes", 4, I64(1, 1, 1, 2));
	n = gnode(g, "Resize", "rz_i8", (int[]){x, roi, s, sz}, 4, 1);
	attr_s(n, "coordinate_transformation_mode", "asymmetric");
	attr_s(n, "nearest_mode", "floor");
	expect_run(g, "Resize opset 11 int8 nearest floor asymmetric 4 -> 2", LOOM_DT_INT8, 4,
		   D(1, 1, 1, 2), (const int8_t[]){-1, -3});

	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 1, 2, 2));
	set_input(g, x, x4);
	n = gnode(g, "Resize", "rz_none", (int[]){x}, 1, 1);
	expect_fail(g, "Resize without scales or sizes fails", ERRS("rz_none", "Resize"));

	/* DepthToSpace DCR / CRD, SpaceToDepth */
	static const float c8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 8, 1, 1));
	set_input(g, x, c8);
	n = gnode(g, "DepthToSpace", "d2s", (int[]){x}, 1, 1);
	attr_i(n, "blocksize", 2);
	expect_run(g, "DepthToSpace DCR", LOOM_DT_FLOAT, 4, D(1, 2, 2, 2), F(0, 2, 4, 6, 1, 3, 5, 7));
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 8, 1, 1));
	set_input(g, x, c8);
	n = gnode(g, "DepthToSpace", "d2s_crd", (int[]){x}, 1, 1);
	attr_i(n, "blocksize", 2);
	attr_s(n, "mode", "CRD");
	expect_run(g, "DepthToSpace CRD", LOOM_DT_FLOAT, 4, D(1, 2, 2, 2), c8);
	g = gnew(13);
	x = ginput(g, "x", LOOM_DT_FLOAT, 4, D(1, 2, 2, 2));
	set_input(g, x, F(0, 2, 4, 6, 1, 3, 5, 7));
	n = gnode(g, "SpaceToDepth", "s2d", (int[]){x}, 1, 1);
	attr_i(n, "blocksize", 2);
	expect_run(g, "SpaceToDepth inverts DepthToSpace DCR", LOOM_DT_FLOAT, 4, D(1, 8, 1, 1), c8);
}

/* ------------------------------------------------------------------ ONNX node test cases */

/* the test case directories of this file's operators (after "test_") */
static const char *const case_prefixes[] = {
	"reshape", "flatten", "squeeze", "unsqueeze", "transpose", "concat", "split", "slice",
	"gather", "constant_pad", "edge_pad", "reflect_pad", "tile", "expand", "shape", "size",
	"constantofshape", "constant", "range", "cast", "softmax", "logsoftmax", "hardmax",
	"reduce_", "argmax", "argmin", "resize", "upsample", "depthtospace", "spacetodepth",
	"top_k", NULL,
};

static int is_our_case(const char *name)
{
	if (strncmp(name, "test_", 5))
		return 0;
	for (int i = 0; case_prefixes[i]; i++)
		if (!strncmp(name + 5, case_prefixes[i], strlen(case_prefixes[i])))
			return 1;
	return 0;
}

/* Load, run and compare one case; counted through check.h. */
static void run_case(const char *root, const char *name)
{
	char path[1024], dir[1024], err[1024], why[1600];
	loom_graph *g = NULL;
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	snprintf(path, sizeof path, "%s/%s/model.onnx", root, name);
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof err)) {
		/* what the importer rejects by design (compiler/onnx.h) */
		static const char *const by_design[] = {
			"float16", "bfloat16", "string", "sequence", "optional", "subgraph",
			"opsets 7 to 17", NULL};
		if (oc_err_has_any(err, by_design)) {
			check_skip("%s: %s", name, err);
		} else {
			CHECK_FAIL("%s: load: %s", name, err);
		}
		return;
	}
	for (int i = 0; i < g->nnodes; i++)
		if (!loom_cpu_op_find(g->nodes[i].op_type, g->opset)) {
			check_skip("%s: no kernel for %s (opset %lld)", name, g->nodes[i].op_type,
				   (long long)g->opset);
			loom_graph_free(g);
			return;
		}
	/* inputs: input_<i>.pb into graph input i (by name when it has one) */
	for (int nin = 0;; nin++) {
		loom_tensor t;
		int rc = oc_load_pb(dir, "input", nin, &t, err, sizeof err);
		if (!rc)
			break;
		if (rc < 0) {
			CHECK_FAIL("%s: %s", name, err);
			loom_graph_free(g);
			return;
		}
		int ti = oc_input_tensor(g, nin, &t);
		if (ti < 0) {
			CHECK_FAIL("%s: input_%d.pb '%s' matches no graph input", name, nin, t.name);
			loom_tensor_clear(&t);
			loom_graph_free(g);
			return;
		}
		loom_tensor *gt = &g->tensors[ti];
		if (gt->dtype != t.dtype || !same_dims(gt, t.rank, t.dims)) {
			char a[128], b[128];
			fmt_dims(a, sizeof a, t.rank, t.dims);
			fmt_dims(b, sizeof b, gt->rank, gt->dims);
			CHECK_FAIL("%s: input_%d.pb is %s %s, the graph's input %s %s", name, nin,
			        loom_dtype_name(t.dtype), a, loom_dtype_name(gt->dtype), b);
			loom_tensor_clear(&t);
			loom_graph_free(g);
			return;
		}
		loom_tensor_set_data(gt, t.data, loom_tensor_bytes(&t));
		loom_tensor_clear(&t);
	}
	if (loom_ref_run(g, err, sizeof err)) {
		CHECK_FAIL("%s: run: %s", name, err);
		loom_graph_free(g);
		return;
	}
	oc_compare_outputs(g, dir, 1e-3, 1e-5, why, sizeof why);
	CHECK(!why[0], "%s%s%s", name, why[0] ? ": " : "", why);
	loom_graph_free(g);
}

static int want_case(const char *root, const char *name, void *ctx)
{
	(void)root;
	(void)ctx;
	return is_our_case(name);
}

static void test_onnx_cases(const char *root)
{
	char **names;
	size_t cnt;
	if (oc_list(root, want_case, NULL, &names, &cnt)) {
		check_skip("ONNX node test cases: no directory %s", root);
		return;
	}
	for (size_t i = 0; i < cnt; i++)
		run_case(root, names[i]);
	oc_free_names(names, cnt);
}

int main(int argc, char **argv)
{
	check_init(CHECK_SKIPS);
	const char *root = argc > 1 ? argv[1] : "/usr/share/libonnx-testdata/data/node";
	test_reshape();
	test_flatten_squeeze();
	test_transpose_concat_split();
	test_slice_gather();
	test_pad_tile_expand();
	test_shape_misc();
	test_softmax();
	test_reduce_arg();
	test_resize();
	test_onnx_cases(root);
	return check_report();
}
