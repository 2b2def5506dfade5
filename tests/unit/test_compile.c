/* test_compile.c - loom_compile (compiler/compile.h) called as a library,
 * without the CLI, on small float graphs built in memory (ir/ir.h):
 *
 *   x [1,3,8,8] -> Conv conv1 (8 filters 3x3, pads 1) -> Relu relu1 ->
 *   MaxPool pool1 (2x2, stride 2) -> Flatten flat -> Gemm fc (10) -> y
 *
 * with constant weights, compiled for "default" and calibrated on random
 * inputs unless said otherwise:
 *   - placement: the report's node table (where, why, layer, MACs) and its
 *     totals; the layers (kinds, names, the nodes they implement); the CPU
 *     graph's stand-ins for lowered nodes; the steps (QUANT of x, one NPU
 *     job of every layer, DEQUANT of the last layer's output, CPU nodes);
 *   - determinism: two compiles of the same graph write byte-identical
 *     .loom files (loom_model_write);
 *   - arena_no_reuse: every activation in a buffer of its own (no two
 *     overlap), the arena as large as the report's size without reuse;
 *   - --keep-float conv1 (loom_compile_opts.keep_float) keeps conv1 and what
 *     follows it on the CPU; a name that is no node is an error naming it;
 *   - per-tensor calibration methods (loom_compile_opts.tensor_methods):
 *     r1 by percentile 90 gets a smaller scale than by min-max, the other
 *     tensors keep theirs; unknown tensors and methods are errors naming
 *     them; bias correction reports the layers it corrected (conv1, fc);
 *     cross-layer equalization finds the one pair (conv1 -> relu1 -> pool1
 *     -> flat -> fc) and its model runs within 4 steps of the float graph;
 *   - an operator without NPU lowering (a Softmax after fc) falls back to
 *     the CPU with the reason;
 *   - configurations too small: a scratchpad the convolution planner
 *     refuses (conv1 on the CPU, the reason in the report), device DRAM
 *     the model does not fit in (an error naming the bytes and the
 *     configuration);
 *   - a residual block x -> Conv ca -> Relu -> Conv cb -> Add(cb, ra) ->
 *     Relu: the Add and its Relu fused into cb's STORE on "default" (two
 *     CONV layers), an ELTWISE layer on "odd" (array_cols > array_rows:
 *     STORE rows must fit an SP line), and an ELTWISE layer on "default"
 *     too when cb's output is also a graph output (another reader);
 *   - grouped convolutions in blocks of lcm(channels per group, 16) input
 *     channels, a CONV layer each reading and writing its channel slices
 *     (4, 8 and 32 channels per group), or one layer (when one block is
 *     all, or blocks do not divide the channels); the node's MACs those of
 *     its groups; the Relu fused; on the C model within 4 int8 steps;
 *   - elementwise regions: SiLU (x * Sigmoid(x)) and a GELU of its output
 *     written as Div, Erf, Add, Mul, Mul: one LUT of the Conv's output,
 *     the inner nodes fused, on the C model within 4 int8 steps of the
 *     float graph; with the Sigmoid's output a graph output, LUT + ELTWISE
 *     + the GELU's LUT; an inner node kept in float breaks the region up;
 *   - broken graphs (an unknown operator, Conv weights that do not match
 *     the input's channels): errors naming the node;
 *   - threads (loom_compile_opts.threads): examples/digits compiled with
 *     its calib/ folder on 1, 2 and 3 threads writes the same bytes; a
 *     calibration folder whose second sample has the wrong shape (and
 *     whose fourth file is corrupt) fails with the same message on 1 and 3
 *     threads, loom_calib_run_dir's;
 *   - the plan memo (compiler/npu/memo.c), immediate and deferred on 1 and
 *     3 threads: for conv, GEMM and vector layers on two configurations,
 *     two layers of a shape with other values (zero points, clip bounds,
 *     multipliers, a fused residual add's parameters) get loom_conv_plan_make's / loom_vec_plan_make's plan
 *     (est_first 0, or the same when asked for), the second from the memo;
 *     elementwise layers and tables may take their flat view; before the
 *     deferred timing the sizes in bytes are already the plan's; a bad
 *     clip range is refused on a hit; loom_*_plan_first give est_first;
 *   - a batch-1 GEMM's streamed weights: its two weight regions and two
 *     input buffers in banks of their own, timed faster than with both
 *     weight regions in one bank;
 *   - per-channel weight quantization (quant_channels, two at a time, or
 *     eight on AVX-512): channels of 1..40 weights, quotients of exactly
 *     k + 1/2, the max|w| of either sign and zeros, each int8 weight
 *     lround(w / (max|w| / 127)) element by element; a NaN or -inf
 *     anywhere in a channel refused;
 *   - the compiled models (all on the NPU, and with --keep-float) run on
 *     the C model through the runtime (runtime/exec.h: a libloom device
 *     booted with build/firmware/loom_fw.elf; skipped when the firmware is
 *     missing, make firmware) against loom_ref_run on the float graph:
 *     every output within 4 int8 steps of the output's quantization.
 *
 * Prints one line per check and ends with "N passed, M failed, K skipped";
 * exit status 1 on any failure. */
#include "compiler/calib.h"
#include "compiler/compile.h"
#include "compiler/compile_internal.h"
#include "compiler/npu/npu.h"
#include "compiler/onnx.h"
#include "ir/model.h"
#include "loom/loom.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "onnx_case.h"
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define FL LOOM_DT_FLOAT
#define NX (1 * 3 * 8 * 8)
#define NY 10

/* ------------------------------------------------------------------ graphs */

/* what build_net puts after fc, or breaks */
enum tail { PLAIN, SOFTMAX, UNKNOWN_OP, BAD_WEIGHTS };

static loom_node *gnode(loom_graph *g, const char *op, const char *name, const int *in, int nin, int out)
{
	int i = OC_MUST(loom_graph_add_node(g, op, name, in, nin, &out, 1));
	return &g->nodes[i]; /* after the call: it may move g->nodes */
}

/* The network of the opening comment; tail adds a Softmax sm (fc -> z ->
 * sm -> y), an unknown operator frob after fc, or gives conv1 weights of
 * 4 input channels for the input's 3. */
static loom_graph *build_net(enum tail tail)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile)");
	int x = oc_add_input(g, "x", FL, 4, D(1, 3, 8, 8), NULL);
	int w1 = oc_const(g, "w1", 4, D(8, tail == BAD_WEIGHTS ? 4 : 3, 3, 3), 1, 0.4f);
	int b1 = oc_const(g, "b1", 1, D(8), 2, 0.1f);
	int w2 = oc_const(g, "w2", 2, D(NY, 128), 3, 0.2f);
	int b2 = oc_const(g, "b2", 1, D(NY), 4, 0.1f);
	int c1 = oc_value(g, "c1"), r1 = oc_value(g, "r1"), p1 = oc_value(g, "p1"), f1 = oc_value(g, "f1");
	int z = oc_value(g, tail == PLAIN ? "y" : "z");
	loom_node *n = gnode(g, "Conv", "conv1", (const int[]){x, w1, b1}, 3, c1);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	gnode(g, "Relu", "relu1", &c1, 1, r1);
	n = gnode(g, "MaxPool", "pool1", &r1, 1, p1);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(2, 2), 2));
	OC_MUST(loom_node_set_attr_ints(n, "strides", D(2, 2), 2));
	OC_MUST(loom_node_set_attr_int(gnode(g, "Flatten", "flat", &p1, 1, f1), "axis", 1));
	OC_MUST(loom_node_set_attr_int(gnode(g, "Gemm", "fc", (const int[]){f1, w2, b2}, 3, z), "transB", 1));
	int y = z;
	if (tail == SOFTMAX || tail == UNKNOWN_OP) {
		y = oc_value(g, "y");
		gnode(g, tail == SOFTMAX ? "Softmax" : "FrobnicateTensor", tail == SOFTMAX ? "sm" : "frob", &z, 1, y);
	}
	OC_MUST(loom_graph_add_output(g, y));
	return g;
}

/* ------------------------------------------------------------------ helpers */

static const loom_node_report *node_rep(const loom_compile_report *r, const char *name)
{
	for (int i = 0; i < r->nnodes; i++)
		if (!strcmp(r->nodes[i].name, name))
			return &r->nodes[i];
	return NULL;
}

/* node name in the report: where (enum loom_where) and a why containing what */
static void check_node(const loom_compile_report *r, const char *label, const char *name, int where, const char *what)
{
	static const char *const wn[] = {"on the CPU", "on the NPU", "fused"};
	const loom_node_report *n = node_rep(r, name);
	CHECK(n && n->where == where && strstr(n->why, what), "%s: %s %s, '%s' (report: %s, '%s')", label, name,
	      wn[where], what, n ? wn[n->where] : "no such node", n ? n->why : "");
}

static int tensor_named(const loom_graph *g, const char *name)
{
	int t = loom_graph_find(g, name);
	if (t < 0) {
		fprintf(stderr, "test_compile: no tensor %s\n", name);
		exit(2);
	}
	return t;
}

/* the model's steps as "quant npu dequant cpu ..." */
static void step_kinds(const loom_model *m, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t s = 0; s < m->nsteps && o < len; s++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", s ? " " : "", loom_step_kind_name(m->steps[s].kind));
}

/* the layers' kinds as "conv pool gemm" */
static void layer_kinds(const loom_model *m, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t l = 0; l < m->nlayers && o < len; l++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", l ? " " : "", loom_layer_kind_name(m->layers[l].kind));
}

/* compile g (consumed) for the configuration spec: 0 or -1 + err */
static int compile(loom_graph *g, const char *spec, const loom_compile_opts *o, loom_model **m,
		   loom_compile_report *rep, char *err, size_t len)
{
	loom_hwcfg cfg;
	*m = NULL;
	if (loom_hwcfg_load(&cfg, spec, NULL, err, len)) {
		loom_graph_free(g);
		return -1;
	}
	return loom_compile(g, &cfg, o, m, rep, err, len);
}

/* ------------------------------------------------------------------ placement */

/* the report of the network compiled with everything on the NPU */
static void check_rep(const loom_compile_report *r)
{
	const char *L = "placement";
	CHECK(r->nnodes == 5 && r->nodes_onnx == 5, "%s: 5 nodes in the report (%d, %d before simplification)", L,
	      r->nnodes, r->nodes_onnx);
	check_node(r, L, "conv1", LOOM_WHERE_NPU, "conv");
	check_node(r, L, "relu1", LOOM_WHERE_FUSED, "into conv1");
	check_node(r, L, "pool1", LOOM_WHERE_NPU, "pool");
	check_node(r, L, "flat", LOOM_WHERE_FUSED, "into fc");
	check_node(r, L, "fc", LOOM_WHERE_NPU, "gemm");
	const loom_node_report *c = node_rep(r, "conv1"), *p = node_rep(r, "pool1"), *f = node_rep(r, "fc");
	const loom_node_report *u = node_rep(r, "relu1");
	CHECK(c && p && f && u && c->layer == 0 && p->layer == 1 && f->layer == 2 && u->layer == -1,
	      "%s: conv1, pool1, fc are layers 0, 1, 2; relu1 none", L);
	CHECK(c && f && c->macs == 8 * 8 * 8 * 3 * 3 * 3 && f->macs == 128 * NY,
	      "%s: MACs conv1 %llu (13824), fc %llu (1280)", L, c ? (unsigned long long)c->macs : 0,
	      f ? (unsigned long long)f->macs : 0);
	CHECK(r->nodes_cpu == 0 && r->nodes_npu == 5 && r->macs_npu == 13824 + 1280 && r->macs_cpu == 0,
	      "%s: totals: %d on the CPU, %d on the NPU, %llu NPU MACs, %llu CPU MACs", L, r->nodes_cpu, r->nodes_npu,
	      (unsigned long long)r->macs_npu, (unsigned long long)r->macs_cpu);
	CHECK(r->calib_random && r->calib_samples == 4, "%s: calibrated on %d random samples (%d)", L,
	      r->calib_samples, r->calib_random);
}

/* the model of the network compiled with everything on the NPU */
static void check_model(const loom_model *m, const loom_compile_report *r)
{
	const char *L = "placement";
	const loom_graph *g = m->graph;
	char kinds[256];
	layer_kinds(m, kinds, sizeof kinds);
	CHECK(m->nlayers == 3 && !strcmp(kinds, "conv pool gemm") && !strcmp(m->layers[0].name, "conv1") &&
		      !strcmp(m->layers[1].name, "pool1") && !strcmp(m->layers[2].name, "fc"),
	      "%s: layers %s (conv1, pool1, fc)", L, kinds);
	int relu = -1;
	for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
		if (m->nlayers && m->layers[0].nodes[k] >= 0 && !strcmp(g->nodes[m->layers[0].nodes[k]].name, "relu1"))
			relu = k;
	CHECK(relu > 0, "%s: the conv layer implements relu1 too", L);
	int stand_ins = 0;
	for (int i = 0; i < 5 && i < g->nnodes; i++)
		stand_ins += !strcmp(g->nodes[i].op_type, LOOM_NPU_OP) && g->nodes[i].ninputs == 0;
	CHECK(stand_ins == 5, "%s: the CPU graph keeps the 5 lowered nodes as %s stand-ins (%d)", L, LOOM_NPU_OP,
	      stand_ins);
	uint64_t est = 0;
	for (uint32_t l = 0; l < m->nlayers; l++)
		est += m->layers[l].est_cycles;
	CHECK(r->est_cycles > 0 && r->est_cycles == est, "%s: estimate %llu cycles, the layers' sum", L,
	      (unsigned long long)r->est_cycles);

	/* steps: x quantized, one job, the last layer's output dequantized, CPU nodes after */
	char steps[256];
	step_kinds(m, steps, sizeof steps);
	int x = tensor_named(g, "x");
	int ok = m->nsteps >= 3 && m->steps[0].kind == LOOM_STEP_QUANT && m->steps[0].tensor == x &&
		 m->steps[1].kind == LOOM_STEP_NPU && m->steps[1].layer == 0 && m->steps[1].nlayers == 3 &&
		 m->steps[2].kind == LOOM_STEP_DEQUANT && m->nlayers == 3 && m->steps[2].tensor == m->layers[2].out;
	CHECK(ok, "%s: steps %s: QUANT x, one NPU job of layers 0..2, DEQUANT of fc's output", L, steps);
	int cpu_ok = 1, seen[4] = {0};
	for (uint32_t s = 0; s < m->nsteps; s++) {
		const loom_step *st = &m->steps[s];
		if (st->kind >= 0 && st->kind < 4)
			seen[st->kind] = 1;
		if (s >= 3)
			cpu_ok &= st->kind == LOOM_STEP_CPU && st->node >= 0 && st->node < g->nnodes &&
				  strcmp(g->nodes[st->node].op_type, LOOM_NPU_OP);
	}
	CHECK(cpu_ok && seen[LOOM_STEP_CPU] && seen[LOOM_STEP_QUANT] && seen[LOOM_STEP_NPU] && seen[LOOM_STEP_DEQUANT],
	      "%s: after it, CPU steps of float nodes (fc's int32 output scaled on the host): all four step kinds", L);
	int y = g->noutputs == 1 ? g->outputs[0] : -1;
	CHECK(y >= 0 && !strcmp(g->tensors[y].name, "y") && m->mt[y].host && m->mt[y].scale > 0,
	      "%s: graph output y on the host with its int8 step (%g)", L, y >= 0 ? (double)m->mt[y].scale : 0.0);
}

static void test_placement(void)
{
	loom_compile_opts o = {0};
	loom_compile_report rep;
	loom_model *m;
	char err[1024] = "";
	int rc = compile(build_net(PLAIN), "default", &o, &m, &rep, err, sizeof err);
	if (!CHECK(!rc, "placement: compiles%s%s", rc ? ": " : "", rc ? err : ""))
		return;
	check_rep(&rep);
	check_model(m, &rep);
	loom_compile_report_free(&rep);
	loom_model_free(m);
}

/* ------------------------------------------------------------------ determinism */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	*len = 0;
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END)) {
		long n = ftell(f);
		if (n >= 0 && !fseek(f, 0, SEEK_SET)) {
			b = oc_xmalloc((size_t)n + 1);
			*len = fread(b, 1, (size_t)n, f);
		}
	}
	fclose(f);
	return b;
}

static void test_deterministic(void)
{
	char path[2][64], err[1024] = "";
	uint8_t *buf[2] = {NULL, NULL};
	size_t len[2] = {0, 0};
	int ok = 1;
	for (int k = 0; k < 2; k++) {
		loom_compile_opts o = {.options = "test", .source = "net.onnx"};
		loom_model *m;
		snprintf(path[k], sizeof path[k], "/tmp/test_compile_%d_%d.loom", (int)getpid(), k);
		if (compile(build_net(PLAIN), "default", &o, &m, NULL, err, sizeof err) ||
		    loom_model_write(m, path[k], err, sizeof err)) {
			CHECK_FAIL("determinism: compile / write %d: %s", k, err);
			ok = 0;
		}
		loom_model_free(m);
		buf[k] = slurp(path[k], &len[k]);
		unlink(path[k]);
	}
	if (ok)
		CHECK(buf[0] && buf[1] && len[0] > 0 && len[0] == len[1] && !memcmp(buf[0], buf[1], len[0]),
		      "determinism: two compiles write the same %zu-byte file (%zu bytes the second time)", len[0],
		      len[1]);
	free(buf[0]);
	free(buf[1]);
}

/* ------------------------------------------------------------------ CPU fallbacks */

/* the activations of the arena (not constants, not views into another) */
static int arena_tensor(const loom_model *m, int t)
{
	const loom_mtensor *a = &m->mt[t];
	return a->dev && a->addr >= m->arena_base && a->addr < m->arena_base + m->arena_bytes;
}

static void test_no_reuse(void)
{
	char err[1024] = "";
	loom_model *m[2] = {NULL, NULL};
	for (int k = 0; k < 2; k++) {
		loom_compile_opts o = {.arena_no_reuse = k};
		int rc = compile(build_net(PLAIN), "default", &o, &m[k], NULL, err, sizeof err);
		if (!CHECK(!rc, "arena_no_reuse = %d: compiles%s%s", k, rc ? ": " : "", rc ? err : ""))
			goto out;
	}
	CHECK(m[0]->arena_bytes < m[0]->arena_bytes_noreuse,
	      "with reuse: arena %" PRIu64 " B < %" PRIu64 " B without", m[0]->arena_bytes, m[0]->arena_bytes_noreuse);
	CHECK(m[1]->arena_bytes == m[1]->arena_bytes_noreuse && m[1]->arena_bytes == m[0]->arena_bytes_noreuse,
	      "arena_no_reuse: arena %" PRIu64 " B, the report's size without reuse %" PRIu64 " B", m[1]->arena_bytes,
	      m[0]->arena_bytes_noreuse);
	int overlaps = 0, n = 0;
	const loom_model *q = m[1];
	for (int t = 0; t < q->graph->ntensors; t++) {
		if (!arena_tensor(q, t))
			continue;
		n++;
		uint64_t a0 = q->mt[t].addr, a1 = a0 + (uint64_t)q->mt[t].h * q->mt[t].w * q->mt[t].stride;
		for (int u = 0; u < t; u++) {
			uint64_t b0 = q->mt[u].addr, b1 = b0 + (uint64_t)q->mt[u].h * q->mt[u].w * q->mt[u].stride;
			overlaps += arena_tensor(q, u) && a0 < b1 && b0 < a1;
		}
	}
	CHECK(n >= 3 && !overlaps, "arena_no_reuse: %d activations, %d overlapping pairs", n, overlaps);
out:
	loom_model_free(m[0]);
	loom_model_free(m[1]);
}

static void test_keep_float(void)
{
	const char *L = "--keep-float conv1";
	loom_compile_opts o = {.keep_float = "conv1"};
	loom_compile_report rep;
	loom_model *m;
	char err[1024] = "", kinds[256], steps[256];
	int rc = compile(build_net(PLAIN), "default", &o, &m, &rep, err, sizeof err);
	if (!CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
		return;
	check_node(&rep, L, "conv1", LOOM_WHERE_CPU, "--keep-float");
	check_node(&rep, L, "relu1", LOOM_WHERE_CPU, "input is computed on the CPU");
	check_node(&rep, L, "pool1", LOOM_WHERE_NPU, "pool");
	check_node(&rep, L, "fc", LOOM_WHERE_NPU, "gemm");
	CHECK(rep.nodes_cpu == 2 && rep.macs_cpu == 13824 && rep.macs_npu == 1280,
	      "%s: 2 nodes, 13824 MACs on the CPU (%d, %llu)", L, rep.nodes_cpu, (unsigned long long)rep.macs_cpu);
	layer_kinds(m, kinds, sizeof kinds);
	step_kinds(m, steps, sizeof steps);
	const loom_graph *g = m->graph;
	int ok = m->nsteps >= 4 && m->steps[0].kind == LOOM_STEP_CPU && !strcmp(g->nodes[m->steps[0].node].name, "conv1") &&
		 !strcmp(g->nodes[m->steps[0].node].op_type, "Conv") && m->steps[1].kind == LOOM_STEP_CPU &&
		 !strcmp(g->nodes[m->steps[1].node].name, "relu1") && m->steps[2].kind == LOOM_STEP_QUANT &&
		 m->steps[2].tensor == tensor_named(g, "r1") && m->steps[3].kind == LOOM_STEP_NPU;
	CHECK(!strcmp(kinds, "pool gemm") && ok, "%s: layers %s; steps %s: conv1, relu1 in float, r1 quantized, the job",
	      L, kinds, steps);
	loom_compile_report_free(&rep);
	loom_model_free(m);

	o.keep_float = "conv1,nope";
	rc = compile(build_net(PLAIN), "default", &o, &m, &rep, err, sizeof err);
	CHECK(rc == -1 && !m && strstr(err, "--keep-float") && strstr(err, "'nope'"),
	      "--keep-float nope: an error naming it: %s", err);
}

static void test_methods_bias(void)
{
	const char *L = "tensor methods";
	loom_compile_opts o = {.random_samples = 4};
	loom_compile_report rep;
	loom_model *m0 = NULL, *m1 = NULL;
	char err[1024] = "";
	int rc = compile(build_net(PLAIN), "default", &o, &m0, NULL, err, sizeof err);
	o.tensor_methods = "r1=percentile";
	o.percentile = 90;
	rc = rc || compile(build_net(PLAIN), "default", &o, &m1, NULL, err, sizeof err);
	if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : "")) {
		int r1 = tensor_named(m0->graph, "r1"), x = tensor_named(m0->graph, "x"), p1 = tensor_named(m0->graph, "p1");
		CHECK(m1->mt[r1].scale < m0->mt[r1].scale * 0.9f && m1->mt[x].scale == m0->mt[x].scale &&
			      m1->mt[p1].dev == m0->mt[p1].dev,
		      "%s: r1=percentile (90) scale %g < min-max %g; x keeps %g", L, m1->mt[r1].scale, m0->mt[r1].scale,
		      m0->mt[x].scale);
	}
	loom_model_free(m0);
	loom_model_free(m1);
	m1 = NULL;
	o.tensor_methods = "nope=mse";
	rc = compile(build_net(PLAIN), "default", &o, &m1, NULL, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "'nope'"), "%s: an unknown tensor is an error naming it: %s", L, err);
	o.tensor_methods = "r1=kl";
	rc = compile(build_net(PLAIN), "default", &o, &m1, NULL, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "'r1=kl'") && strstr(err, "entropy"), "%s: an unknown method is an error: %s", L,
	      err);
	o.tensor_methods = NULL;
	o.bias_correction = 1;
	rc = compile(build_net(PLAIN), "default", &o, &m1, &rep, err, sizeof err);
	if (CHECK(!rc, "bias correction: compiles%s%s", rc ? ": " : "", rc ? err : "")) {
		CHECK(rep.bias_corrected == 2 && rep.bias_shift_max > 0, "bias correction: conv1 and fc corrected (%d layers, "
		      "largest %g of |bias|)", rep.bias_corrected, rep.bias_shift_max);
		loom_compile_report_free(&rep);
		loom_model_free(m1);
	}
	o.bias_correction = 0;
	o.equalize = 1;
	rc = compile(build_net(PLAIN), "default", &o, &m1, &rep, err, sizeof err);
	if (CHECK(!rc, "equalize: compiles%s%s", rc ? ": " : "", rc ? err : "")) {
		CHECK(rep.equalized == 1, "equalize: one pair, conv1 -> relu1 -> pool1 -> flat -> fc (%d)", rep.equalized);
		loom_compile_report_free(&rep);
		loom_model_free(m1);
	}
}

static void test_unsupported(void)
{
	const char *L = "Softmax";
	loom_compile_opts o = {0};
	loom_compile_report rep;
	loom_model *m;
	char err[1024] = "", steps[256];
	int rc = compile(build_net(SOFTMAX), "default", &o, &m, &rep, err, sizeof err);
	if (!CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
		return;
	check_node(&rep, L, "sm", LOOM_WHERE_CPU, "no NPU lowering");
	check_node(&rep, L, "fc", LOOM_WHERE_NPU, "gemm");
	const loom_graph *g = m->graph;
	step_kinds(m, steps, sizeof steps);
	uint32_t n = m->nsteps;
	CHECK(rep.nodes_cpu == 1 && n >= 2 && m->steps[n - 2].kind == LOOM_STEP_DEQUANT &&
		      m->steps[n - 2].tensor == tensor_named(g, "z") && m->steps[n - 1].kind == LOOM_STEP_CPU &&
		      !strcmp(g->nodes[m->steps[n - 1].node].name, "sm"),
	      "%s: steps %s: fc's output z dequantized, then sm on the CPU", L, steps);
	loom_compile_report_free(&rep);
	loom_model_free(m);
}

/* ------------------------------------------------------------------ too small, broken */

static void test_too_small(void)
{
	/* 64 scratchpad lines of 64 bytes: no tiling of conv1 fits */
	const char *L = "scratchpad of 4 KiB, 64-byte lines";
	loom_compile_opts o = {0};
	loom_compile_report rep;
	loom_model *m;
	char err[1024] = "", kinds[256];
	int rc = compile(build_net(PLAIN), "small:array_rows=64,sp_bytes=4096,sp_banks=1", &o, &m, &rep, err,
			 sizeof err);
	if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : "")) {
		check_node(&rep, L, "conv1", LOOM_WHERE_CPU, "convolution planner refused the layer (conv 8x8x3 -> 8 (k 3x3): no tiling fits");
		check_node(&rep, L, "pool1", LOOM_WHERE_NPU, "pool");
		layer_kinds(m, kinds, sizeof kinds);
		CHECK(!strcmp(kinds, "pool gemm"), "%s: layers %s (pool gemm)", L, kinds);
		loom_compile_report_free(&rep);
		loom_model_free(m);
	}

	/* 1 MiB of DRAM, the model placed 4 KiB before its end */
	o.base = (1u << 20) - 4096;
	rc = compile(build_net(PLAIN), "small:dram_mib=1", &o, &m, &rep, err, sizeof err);
	CHECK(rc == -1 && !m && strstr(err, "bytes of device DRAM") && strstr(err, "has 1048576"),
	      "1 MiB of DRAM: an error naming the bytes needed and the configuration's: %s", err);
}

static void test_broken(void)
{
	loom_compile_opts o = {0};
	loom_model *m;
	char err[1024] = "";
	int rc = compile(build_net(UNKNOWN_OP), "default", &o, &m, NULL, err, sizeof err);
	CHECK(rc == -1 && !m && strstr(err, "frob") && strstr(err, "FrobnicateTensor"),
	      "unknown operator: an error naming the node and its op: %s", err);
	rc = compile(build_net(BAD_WEIGHTS), "default", &o, &m, NULL, err, sizeof err);
	CHECK(rc == -1 && !m && strstr(err, "conv1"), "Conv weights of 4 channels on 3: an error naming the node: %s",
	      err);
}

/* ------------------------------------------------------------------ on the C model */

/* the output of m's run on its device: within 4 int8 steps of want (ny
 * values), one NPU job */
static void check_run(const char *L, const loom_model *m, const loom_exec *ex, const float *want, int ny)
{
	const loom_graph *g = m->graph;
	int y = g->outputs[0];
	const float *got = g->tensors[y].data;
	double step = m->mt[y].scale, worst = 0;
	for (int i = 0; got && i < ny; i++)
		worst = fmax(worst, fabs((double)got[i] - want[i]));
	CHECK(got && loom_tensor_numel(&g->tensors[y]) == ny && worst <= 1e-4 + 4 * step,
	      "%s: y within 4 int8 steps of the float reference (max error %.3g = %.2f steps of %.3g)", L, worst,
	      step > 0 ? worst / step : 0.0, step);
	const loom_exec_stats *st = loom_exec_get_stats(ex);
	CHECK(st->jobs == 1, "%s: one NPU job (%llu)", L, (unsigned long long)st->jobs);
}

/* m (freed) run on the C model booted with firmware fw, its input x (nx
 * values) bound, against the float reference want */
static void run_model(const char *L, loom_model *m, const char *fw, const float *x, int nx, const float *want, int ny)
{
	char err[2048] = "";
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	loom_graph *g = m->graph;
	int rc = loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "default"}, &dev, err, sizeof err);
	if (!rc && ((rc = loom_load_firmware(dev, fw)) || (rc = loom_boot(dev, NULL))))
		snprintf(err, sizeof err, "%s: %s: %s", fw, loom_strerror(rc), loom_errmsg(dev));
	if (!CHECK(!rc, "%s: device open and booted%s%s", L, rc ? ": " : "", rc ? err : ""))
		goto out;
	rc = loom_exec_new(dev, m, &ex, err, sizeof err);
	if (!CHECK(!rc, "%s: loom_exec_new%s%s", L, rc ? ": " : "", rc ? err : ""))
		goto out;
	rc = loom_tensor_set_data(&g->tensors[tensor_named(g, "x")], x, (size_t)nx * sizeof *x);
	if (!rc)
		rc = loom_exec_run(ex, err, sizeof err);
	if (CHECK(!rc, "%s: input bound, loom_exec_run%s%s", L, rc ? ": " : "", rc ? err : ""))
		check_run(L, m, ex, want, ny);
out:
	loom_exec_free(ex);
	loom_close(dev);
	loom_model_free(m);
}

/* Compile the network (keep_float or NULL), calibrated on the input x, run
 * it on the C model and compare with the float reference want. */
static void run_one(const char *keep_float, int equalize, const float *x, const float *want, const char *fw)
{
	char L[64], err[2048] = "";
	snprintf(L, sizeof L, "C model%s%s%s", keep_float ? ", --keep-float " : "", keep_float ? keep_float : "",
		 equalize ? ", --equalize" : "");
	loom_tensor cin = {.name = "x", .dtype = FL, .rank = 4, .dims = {1, 3, 8, 8}, .data = (void *)x};
	loom_compile_opts o = {.keep_float = keep_float, .calib_inputs = &cin, .calib_ninputs = 1, .equalize = equalize};
	loom_model *m;
	int rc = compile(build_net(PLAIN), "default", &o, &m, NULL, err, sizeof err);
	if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
		run_model(L, m, fw, x, NX, want, NY);
}

/* the residual block of the opening comment; with b_out, cb's output b is
 * a graph output too */
static loom_graph *build_res(int b_out)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile)");
	int x = oc_add_input(g, "x", FL, 4, D(1, 16, 6, 6), NULL);
	int wa = oc_const(g, "wa", 4, D(16, 16, 3, 3), 6, 0.1f), ba = oc_const(g, "ba", 1, D(16), 7, 0.1f);
	int wb = oc_const(g, "wb", 4, D(16, 16, 1, 1), 8, 0.3f), bb = oc_const(g, "bb", 1, D(16), 9, 0.1f);
	int a = oc_value(g, "a"), ra = oc_value(g, "ra"), b = oc_value(g, "b"), s = oc_value(g, "s"), y = oc_value(g, "y");
	loom_node *n = gnode(g, "Conv", "ca", (const int[]){x, wa, ba}, 3, a);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	gnode(g, "Relu", "relu_a", &a, 1, ra);
	n = gnode(g, "Conv", "cb", (const int[]){ra, wb, bb}, 3, b);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(1, 1), 2));
	gnode(g, "Add", "add", (const int[]){b, ra}, 2, s);
	gnode(g, "Relu", "relu_s", &s, 1, y);
	OC_MUST(loom_graph_add_output(g, y));
	if (b_out)
		OC_MUST(loom_graph_add_output(g, b));
	return g;
}

static void test_resadd(void)
{
	static const struct {
		const char *spec;
		int b_out, fused;
	} cs[] = {{"default", 0, 1}, {"odd", 0, 0}, {"default", 1, 0}};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		char L[96], err[1024] = "", kinds[256];
		snprintf(L, sizeof L, "residual Add on %s%s", cs[i].spec, cs[i].b_out ? ", conv output a graph output" : "");
		loom_compile_opts o = {0};
		loom_compile_report rep;
		memset(&rep, 0, sizeof rep);
		loom_model *m;
		int rc = compile(build_res(cs[i].b_out), cs[i].spec, &o, &m, &rep, err, sizeof err);
		if (!CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
			continue;
		layer_kinds(m, kinds, sizeof kinds);
		if (cs[i].fused) {
			check_node(&rep, L, "add", LOOM_WHERE_FUSED, "into cb (residual add in the STORE)");
			check_node(&rep, L, "relu_s", LOOM_WHERE_FUSED, "into cb");
			CHECK(!strcmp(kinds, "conv conv"), "%s: layers '%s' (conv conv)", L, kinds);
		} else {
			check_node(&rep, L, "add", LOOM_WHERE_NPU, "eltwise");
			check_node(&rep, L, "relu_s", LOOM_WHERE_FUSED, "into add");
			CHECK(!strcmp(kinds, "conv conv eltwise"), "%s: layers '%s' (conv conv eltwise)", L, kinds);
		}
		loom_compile_report_free(&rep);
		loom_model_free(m);
	}
}

/* ------------------------------------------------------------------ elementwise regions */

#define NE (1 * 16 * 6 * 6)

/* x [1,16,6,6] -> Conv conv (3x3, pads 1) -> c; SiLU: silu = Mul(c,
 * Sigmoid sig(c)); GELU of it: y = Mul gmul(Mul gx(silu, Add add1(Erf
 * erf(Div div(silu, sqrt 2)), 1)), 0.5); with sig_out, sig's output is a
 * graph output too */
static loom_graph *build_ew(int sig_out)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile)");
	int x = oc_add_input(g, "x", FL, 4, D(1, 16, 6, 6), NULL);
	int w = oc_const(g, "w", 4, D(16, 16, 3, 3), 11, 0.15f), b = oc_const(g, "b", 1, D(16), 12, 0.2f);
	static const float kv[3] = {1.41421356f, 1.0f, 0.5f};
	int k2 = OC_MUST(loom_graph_add_tensor(g, "sqrt2", FL, 1, D(1), &kv[0], 1));
	int k1 = OC_MUST(loom_graph_add_tensor(g, "one", FL, 1, D(1), &kv[1], 1));
	int kh = OC_MUST(loom_graph_add_tensor(g, "half", FL, 1, D(1), &kv[2], 1));
	int c = oc_value(g, "c"), sg = oc_value(g, "sg"), sl = oc_value(g, "sl"), dv = oc_value(g, "dv"), ef = oc_value(g, "ef");
	int a1 = oc_value(g, "a1"), gx = oc_value(g, "gxo"), y = oc_value(g, "y");
	loom_node *n = gnode(g, "Conv", "conv", (const int[]){x, w, b}, 3, c);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	gnode(g, "Sigmoid", "sig", &c, 1, sg);
	gnode(g, "Mul", "silu", (const int[]){c, sg}, 2, sl);
	gnode(g, "Div", "div", (const int[]){sl, k2}, 2, dv);
	gnode(g, "Erf", "erf", &dv, 1, ef);
	gnode(g, "Add", "add1", (const int[]){ef, k1}, 2, a1);
	gnode(g, "Mul", "gx", (const int[]){sl, a1}, 2, gx);
	gnode(g, "Mul", "gmul", (const int[]){gx, kh}, 2, y);
	OC_MUST(loom_graph_add_output(g, y));
	if (sig_out)
		OC_MUST(loom_graph_add_output(g, sg));
	return g;
}

/* GELU(SiLU(c)) as one table of c (the seven nodes after the Conv), on the
 * C model within 4 int8 steps of the float graph; with the Sigmoid's output
 * also a graph output, the Sigmoid a table of its own, the SiLU's Mul an
 * ELTWISE and the GELU one table of the SiLU's output; an inner node kept
 * in float (--keep-float erf) breaks the GELU up, the SiLU stays one table */
static void test_ew_region(void)
{
	static const struct {
		const char *keep;
		int sig_out;
		const char *kinds;
	} cs[] = {{NULL, 0, "conv lut"}, {NULL, 1, "conv lut eltwise lut"}, {"erf", 0, NULL}};
	float x[NE], want[NE];
	oc_fill(x, NE, 13, 1.5f);
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		char L[96], err[1024] = "", kinds[256];
		snprintf(L, sizeof L, "elementwise regions%s%s%s", cs[i].sig_out ? ", sig a graph output" : "",
			 cs[i].keep ? ", --keep-float " : "", cs[i].keep ? cs[i].keep : "");
		loom_tensor cin = {.name = "x", .dtype = FL, .rank = 4, .dims = {1, 16, 6, 6}, .data = x};
		loom_compile_opts o = {.keep_float = cs[i].keep, .calib_inputs = &cin, .calib_ninputs = 1};
		loom_compile_report rep;
		memset(&rep, 0, sizeof rep);
		loom_model *m;
		int rc = compile(build_ew(cs[i].sig_out), "default", &o, &m, &rep, err, sizeof err);
		if (!CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
			continue;
		layer_kinds(m, kinds, sizeof kinds);
		if (cs[i].keep) {
			check_node(&rep, L, "erf", LOOM_WHERE_CPU, "--keep-float");
			check_node(&rep, L, "div", LOOM_WHERE_NPU, "lut");
			check_node(&rep, L, "sig", LOOM_WHERE_FUSED, "into silu (one table)");
		} else {
			CHECK(!strcmp(kinds, cs[i].kinds), "%s: layers '%s' (%s)", L, kinds, cs[i].kinds);
			if (cs[i].sig_out) {
				check_node(&rep, L, "sig", LOOM_WHERE_NPU, "lut");
				check_node(&rep, L, "silu", LOOM_WHERE_NPU, "eltwise");
			} else {
				check_node(&rep, L, "sig", LOOM_WHERE_FUSED, "into gmul (one table)");
				check_node(&rep, L, "silu", LOOM_WHERE_FUSED, "into gmul (one table)");
			}
			static const char *const inner[] = {"div", "erf", "add1", "gx"};
			for (int k = 0; k < 4; k++)
				check_node(&rep, L, inner[k], LOOM_WHERE_FUSED, "into gmul (one table)");
			check_node(&rep, L, "gmul", LOOM_WHERE_NPU, "lut");
		}
		loom_compile_report_free(&rep);
		char fw[4200];
		snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
		if (cs[i].keep || cs[i].sig_out || !oc_file_exists(fw)) {
			loom_model_free(m);
			continue;
		}
		loom_graph *ref = build_ew(0);
		rc = loom_tensor_set_data(&ref->tensors[tensor_named(ref, "x")], x, sizeof x) ||
		     loom_ref_run(ref, err, sizeof err);
		if (CHECK(!rc, "%s: float reference run%s%s", L, rc ? ": " : "", rc ? err : "")) {
			memcpy(want, ref->tensors[ref->outputs[0]].data, sizeof want);
			run_model(L, m, fw, x, NE, want, NE);
		} else {
			loom_model_free(m);
		}
		loom_graph_free(ref);
	}
}

/* ------------------------------------------------------------------ channels last and back */

/* x [1,16,6,6] (rank 3: [1,16,12]) -> Conv c1 (1x1) -> Transpose t1 (channels
 * last) -> MatMul mm (W [16,24]) -> Add ab -> Transpose t2 (channels first)
 * -> Mul ls (a per-channel layer scale [24,1,1] / [24,1]) -> Conv c2 (1x1,
 * 24 -> 16) -> y: ConvNeXt's block order */
static loom_graph *build_tr(int rank)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile)");
	const int64_t *xd = rank == 4 ? D(1, 16, 6, 6) : D(1, 16, 12);
	int x = oc_add_input(g, "x", FL, rank, xd, NULL);
	int w1 = oc_const(g, "w1", rank, rank == 4 ? D(16, 16, 1, 1) : D(16, 16, 1), 31, 0.3f);
	int w2 = oc_const(g, "w2", rank, rank == 4 ? D(16, 24, 1, 1) : D(16, 24, 1), 32, 0.3f);
	int wm = oc_const(g, "wm", 2, D(16, 24), 33, 0.3f), bm = oc_const(g, "bm", 1, D(24), 34, 0.2f);
	int k = oc_const(g, "k", rank - 1, rank == 4 ? D(24, 1, 1) : D(24, 1), 35, 1.0f);
	int c1 = oc_value(g, "c1"), t1 = oc_value(g, "t1"), mm = oc_value(g, "mmo"), ab = oc_value(g, "abo"), t2 = oc_value(g, "t2"),
	    ls = oc_value(g, "lso"), y = oc_value(g, "y");
	gnode(g, "Conv", "c1", (const int[]){x, w1}, 2, c1);
	OC_MUST(loom_node_set_attr_ints(gnode(g, "Transpose", "t1", &c1, 1, t1), "perm",
					rank == 4 ? D(0, 2, 3, 1) : D(0, 2, 1), rank));
	gnode(g, "MatMul", "mm", (const int[]){t1, wm}, 2, mm);
	gnode(g, "Add", "ab", (const int[]){mm, bm}, 2, ab);
	OC_MUST(loom_node_set_attr_ints(gnode(g, "Transpose", "t2", &ab, 1, t2), "perm",
					rank == 4 ? D(0, 3, 1, 2) : D(0, 2, 1), rank));
	gnode(g, "Mul", "ls", (const int[]){t2, k}, 2, ls);
	gnode(g, "Conv", "c2", (const int[]){ls, w2}, 2, y);
	OC_MUST(loom_graph_add_output(g, y));
	return g;
}

/* both Transposes aliases of the same device bytes (an image and its
 * channels-last row layout), the layer scale folded into the MatMul's
 * weights: three layers, all on the NPU, on the C model within 4 int8
 * steps of the float graph, for rank 4 and rank 3 */
static void test_transpose_rows(void)
{
	char fw[4200];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	for (int rank = 4; rank >= 3; rank--) {
		char L[96], err[1024] = "", kinds[256];
		snprintf(L, sizeof L, "channels last and back, rank %d", rank);
		int n = rank == 4 ? NE : 16 * 12;
		float x[NE], want[NE];
		oc_fill(x, (size_t)n, 36, 1.0f);
		loom_tensor cin = {.name = "x", .dtype = FL, .rank = rank, .data = x};
		memcpy(cin.dims, rank == 4 ? D(1, 16, 6, 6) : D(1, 16, 12), sizeof(int64_t) * (size_t)rank);
		loom_compile_opts o = {.calib_inputs = &cin, .calib_ninputs = 1};
		loom_compile_report rep;
		memset(&rep, 0, sizeof rep);
		loom_model *m;
		int rc = compile(build_tr(rank), "default", &o, &m, &rep, err, sizeof err);
		if (!CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
			continue;
		layer_kinds(m, kinds, sizeof kinds);
		CHECK(!strcmp(kinds, "conv gemm conv") && rep.muls_folded == 1 && !node_rep(&rep, "ls"),
		      "%s: layers '%s' (conv gemm conv), %d Mul folded", L, kinds, rep.muls_folded);
		check_node(&rep, L, "t1", LOOM_WHERE_FUSED, "alias of c1");
		check_node(&rep, L, "t2", LOOM_WHERE_FUSED, "alias of abo");
		loom_compile_report_free(&rep);
		loom_graph *ref = build_tr(rank);
		rc = loom_tensor_set_data(&ref->tensors[tensor_named(ref, "x")], x, sizeof(float) * (size_t)n) ||
		     loom_ref_run(ref, err, sizeof err);
		if (CHECK(!rc, "%s: float reference run%s%s", L, rc ? ": " : "", rc ? err : "") && oc_file_exists(fw)) {
			memcpy(want, ref->tensors[ref->outputs[0]].data, sizeof(float) * (size_t)n);
			run_model(L, m, fw, x, n, want, n);
		} else {
			loom_model_free(m);
		}
		loom_graph_free(ref);
	}
}

/* ------------------------------------------------------------------ grouped convolutions */

/* x [1,cin,6,6] -> Conv gconv (cin -> cout, groups grp, 3x3, pads 1, bias) -> Relu -> y */
static loom_graph *build_grouped(int64_t cin, int64_t cout, int64_t grp)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile)");
	int x = oc_add_input(g, "x", FL, 4, D(1, cin, 6, 6), NULL);
	int w = oc_const(g, "w", 4, D(cout, cin / grp, 3, 3), 21, 0.3f), b = oc_const(g, "b", 1, D(cout), 22, 0.2f);
	int c = oc_value(g, "c"), y = oc_value(g, "y");
	loom_node *n = gnode(g, "Conv", "gconv", (const int[]){x, w, b}, 3, c);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	OC_MUST(loom_node_set_attr_int(n, "group", grp));
	gnode(g, "Relu", "relu", &c, 1, y);
	OC_MUST(loom_graph_add_output(g, y));
	return g;
}

/* grouped convolutions on the 16-row default array, in blocks of lcm(input
 * channels per group, 16) input channels, one CONV layer each computing its
 * own groups only: 4 and 8 channels per group (8 output channels per
 * group): a layer per 16 input channels; 32: a layer per group; 24 (two
 * groups of 48 channels): one block is the whole, one layer; 24 of 72 in
 * three groups: blocks of 48 do not divide 72, the plain layer; each on
 * the C model within 4 int8 steps of the float graph */
static void test_grouped(void)
{
	static const struct {
		int64_t cin, cout, grp;
		unsigned layers;
	} cs[] = {{64, 64, 16, 4}, {32, 64, 4, 2}, {64, 64, 2, 2}, {48, 48, 2, 1}, {72, 36, 3, 1}};
	char fw[4200];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		char L[96], err[1024] = "";
		snprintf(L, sizeof L, "grouped conv %lld -> %lld, %lld groups", (long long)cs[i].cin,
			 (long long)cs[i].cout, (long long)cs[i].grp);
		int nx = (int)(cs[i].cin * 36), ny = (int)(cs[i].cout * 36);
		float *x = oc_xmalloc(sizeof(float) * (size_t)(nx + ny)), *want = x + nx;
		oc_fill(x, (size_t)nx, 23, 1.0f);
		loom_tensor cin = {.name = "x", .dtype = FL, .rank = 4, .dims = {1, cs[i].cin, 6, 6}, .data = x};
		loom_compile_opts o = {.calib_inputs = &cin, .calib_ninputs = 1};
		loom_compile_report rep;
		memset(&rep, 0, sizeof rep);
		loom_model *m;
		int rc = compile(build_grouped(cs[i].cin, cs[i].cout, cs[i].grp), "default", &o, &m, &rep, err, sizeof err);
		if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : "")) {
			int conv = 1;
			for (uint32_t l = 0; l < m->nlayers; l++)
				conv &= m->layers[l].kind == LOOM_LAYER_CONV;
			uint64_t macs = 0;
			const loom_node_report *nr = node_rep(&rep, "gconv");
			macs = nr ? nr->macs : 0;
			CHECK(conv && m->nlayers == cs[i].layers && macs == (uint64_t)(cs[i].cout * cs[i].cin / cs[i].grp * 9 * 36),
			      "%s: %u CONV layers (want %u), %llu MACs", L, m->nlayers, cs[i].layers, (unsigned long long)macs);
			check_node(&rep, L, "relu", LOOM_WHERE_FUSED, "into gconv");
			loom_graph *ref = build_grouped(cs[i].cin, cs[i].cout, cs[i].grp);
			rc = loom_tensor_set_data(&ref->tensors[tensor_named(ref, "x")], x, sizeof(float) * (size_t)nx) ||
			     loom_ref_run(ref, err, sizeof err);
			if (CHECK(!rc, "%s: float reference run%s%s", L, rc ? ": " : "", rc ? err : "") && oc_file_exists(fw)) {
				memcpy(want, ref->tensors[ref->outputs[0]].data, sizeof(float) * (size_t)ny);
				run_model(L, m, fw, x, nx, want, ny);
			} else {
				loom_model_free(m);
			}
			loom_graph_free(ref);
			loom_compile_report_free(&rep);
		}
		free(x);
	}
}

static void test_run(void)
{
	char fw[4200];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	if (!oc_file_exists(fw)) {
		check_skip("C model runs: no firmware %s (make firmware)", fw);
		return;
	}
	float x[NX], want[NY];
	oc_fill(x, NX, 5, 1.0f);
	loom_graph *ref = build_net(PLAIN);
	char err[1024] = "";
	int xt = tensor_named(ref, "x");
	int rc = loom_tensor_set_data(&ref->tensors[xt], x, sizeof x) || loom_ref_run(ref, err, sizeof err);
	if (!CHECK(!rc, "C model: float reference run%s%s", rc ? ": " : "", rc ? err : "")) {
		loom_graph_free(ref);
		return;
	}
	memcpy(want, ref->tensors[ref->outputs[0]].data, sizeof want);
	loom_graph_free(ref);
	run_one(NULL, 0, x, want, fw);
	run_one("conv1", 0, x, want, fw);
	run_one(NULL, 1, x, want, fw);
}

/* ------------------------------------------------------------------ threads */

#define DIGITS "examples/digits/model.onnx"

/* examples/digits compiled with calib on threads threads: the .loom bytes
 * (*len), or NULL with err */
static uint8_t *digits_loom(const char *calib, int threads, size_t *len, loom_compile_report *rep, char *err,
			    size_t errlen)
{
	loom_graph *g = NULL;
	loom_model *m = NULL;
	char path[64];
	if (loom_onnx_load(DIGITS, NULL, 0, &g, err, errlen))
		return NULL;
	loom_compile_opts o = {.calib_dir = calib, .threads = threads, .options = "test", .source = DIGITS};
	if (compile(g, "default", &o, &m, rep, err, errlen))
		return NULL;
	snprintf(path, sizeof path, "/tmp/test_compile_%d_t.loom", (int)getpid());
	uint8_t *b = loom_model_write(m, path, err, errlen) ? NULL : slurp(path, len);
	unlink(path);
	loom_model_free(m);
	return b;
}

static void test_threads(void)
{
	char err[2048] = "";
	size_t len[3] = {0, 0, 0};
	uint8_t *b[3];
	loom_compile_report rep[3];
	for (int k = 0; k < 3; k++) {
		memset(&rep[k], 0, sizeof rep[k]);
		b[k] = digits_loom("examples/digits/calib", k + 1, &len[k], &rep[k], err, sizeof err);
	}
	if (CHECK(b[0] && b[1] && b[2], "threads: digits compiles on 1, 2, 3 threads %s", err)) {
		CHECK(len[0] == len[1] && len[0] == len[2] && !memcmp(b[0], b[1], len[0]) && !memcmp(b[0], b[2], len[0]),
		      "threads: the same %zu-byte .loom on 1, 2 and 3 threads (%zu, %zu)", len[0], len[1], len[2]);
		CHECK(rep[2].threads == 3 && rep[0].calib_samples == rep[2].calib_samples && rep[0].calib_samples > 1 &&
			      rep[0].shapes_planned == rep[2].shapes_planned && rep[0].shapes_planned > 0 &&
			      rep[0].programs_timed >= rep[0].shapes_planned,
		      "threads: report: %d threads, %d samples, %" PRIu64 " shapes planned, %" PRIu64 " reused, %" PRIu64
		      " programs timed",
		      rep[2].threads, rep[2].calib_samples, rep[2].shapes_planned, rep[2].plans_reused, rep[2].programs_timed);
	}
	for (int k = 0; k < 3; k++) {
		free(b[k]);
		loom_compile_report_free(&rep[k]);
	}

	/* a calibration folder: sample 0 good, 1 of the wrong shape, 2 good, 3 corrupt */
	char dir[64], p[128];
	snprintf(dir, sizeof dir, "/tmp/test_compile_cal_%d", (int)getpid());
	mkdir(dir, 0700);
	loom_graph *g = NULL;
	if (!CHECK(!loom_onnx_load(DIGITS, NULL, 0, &g, err, sizeof err), "threads: %s loads %s", DIGITS, err))
		return;
	const loom_tensor *in = &g->tensors[g->inputs[0]];
	int64_t n = loom_tensor_numel(in), bad[4] = {in->dims[0], 1, 8, 9};
	float *x = calloc(2 * (size_t)n, sizeof *x); /* room for the wrong shape too */
	for (int64_t i = 0; i < 2 * n; i++)
		x[i] = (float)((i * 37) % 17) / 8.0f;
	for (int s = 0; s < 4; s++) {
		snprintf(p, sizeof p, "%s/test_data_set_%d", dir, s);
		mkdir(p, 0700);
		snprintf(p, sizeof p, "%s/test_data_set_%d/input_0.pb", dir, s);
		if (s == 3) {
			FILE *f = fopen(p, "wb");
			if (f) {
				fputs("\xff\xff\xff garbage", f);
				fclose(f);
			}
		} else {
			oc_write_pb(p, "", s == 1 ? 4 : in->rank, s == 1 ? bad : in->dims, x);
		}
	}
	char ref[2048] = "", e1[2048] = "", e3[2048] = "";
	loom_calib *c = loom_calib_new(g, LOOM_CALIB_MINMAX, 99.99);
	int nref = c ? loom_calib_run_dir(c, g, dir, ref, sizeof ref) : 0;
	loom_calib_free(c);
	loom_graph_free(g);
	size_t l;
	uint8_t *r1 = digits_loom(dir, 1, &l, NULL, e1, sizeof e1), *r3 = digits_loom(dir, 3, &l, NULL, e3, sizeof e3);
	CHECK(nref < 0 && strstr(ref, "test_data_set_1") && !r1 && !r3 && strstr(e1, ref) && !strcmp(e1, e3),
	      "threads: a bad second sample: the same error on 1 and 3 threads, loom_calib_run_dir's: %s | %s", e3, ref);
	free(r1);
	free(r3);
	free(x);
	for (int s = 0; s < 4; s++) {
		snprintf(p, sizeof p, "%s/test_data_set_%d/input_0.pb", dir, s);
		unlink(p);
		snprintf(p, sizeof p, "%s/test_data_set_%d", dir, s);
		rmdir(p);
	}
	rmdir(dir);
}

/* ------------------------------------------------------------------ the plan memo */

/* conv (GEMM as 1x1) shapes: h, w, cin, cout, k, stride, raw, a fused
 * residual add (where the configuration allows one) */
static const uint32_t mconv[][8] = {
	{56, 56, 64, 64, 3, 1, 0, 0}, {14, 14, 256, 1024, 1, 1, 0, 1}, {28, 28, 128, 128, 3, 2, 0, 0},
	{1, 1, 512, 1000, 1, 1, 1, 0},
};

static void mconv_params(const loom_hwcfg *cfg, int s, int v, loom_conv_params *p)
{
	loom_conv_init(p);
	/* the residual add's values differ too (ResNet's blocks) */
	p->res = mconv[s][7] && cfg->array_cols <= cfg->array_rows;
	p->res_add = (loom_eltadd_param){.mult = v ? 1 << 30 : 1 << 29, .mult_a = (int16_t)(v ? 1000 : 16384),
					 .mult_b = (int16_t)(v ? 16384 : 900), .zp_a = (int8_t)(v ? 3 : -7),
					 .zp_b = (int8_t)(v ? -100 : 20), .zp_out = (int8_t)(v ? 5 : -128),
					 .lo = (int8_t)(v ? 5 : -128), .hi = 127, .shift = (uint8_t)(v ? 14 : 15)};
	p->h = mconv[s][0], p->w = mconv[s][1], p->cin = mconv[s][2], p->cout = mconv[s][3];
	p->kh = p->kw = mconv[s][4], p->sh = p->sw = mconv[s][5], p->raw = (int)mconv[s][6];
	p->pad_top = p->pad_bottom = p->pad_left = p->pad_right = mconv[s][4] / 2;
	/* values: v = 0, 1 differ in all of them */
	p->in_zp = (int8_t)(v ? -128 : 3), p->out_zp = (int8_t)(v ? 17 : -128);
	p->clip_lo = (int8_t)(v ? 17 : -128), p->clip_hi = (int8_t)(v ? 100 : 127);
}

/* vector layers: kind, h, w, c, k, stride, func */
static const uint32_t mvec[][7] = {
	{LOOM_VEC_ELTWISE, 28, 28, 512, 1, 1, LOOM_ELT_ADD}, {LOOM_VEC_POOL, 56, 56, 64, 3, 2, LOOM_POOL_MAX},
	{LOOM_VEC_DWCONV, 14, 14, 96, 3, 1, 0}, {LOOM_VEC_LUT, 7, 7, 160, 1, 1, 0},
};

static void mvec_params(int s, int v, loom_vec_params *p)
{
	loom_vec_init(p, (int)mvec[s][0]);
	p->h = mvec[s][1], p->w = mvec[s][2], p->c = mvec[s][3];
	p->kh = p->kw = mvec[s][4], p->sh = p->sw = mvec[s][5], p->func = (int)mvec[s][6];
	p->pad_top = p->pad_bottom = p->pad_left = p->pad_right = mvec[s][4] / 2;
	p->in_zp = (int8_t)(v ? -128 : 5), p->in2_zp = (int8_t)(v ? 9 : -3), p->out_zp = (int8_t)(v ? 0 : -20);
	p->clip_lo = (int8_t)(v ? -20 : -128), p->clip_hi = (int8_t)(v ? 90 : 127);
	p->mult = v ? 1518500250 : 1073741824, p->shift = v ? 7 : 3;
	p->mult_a = v ? 16384 : 1000, p->mult_b = v ? -3000 : 32767;
	/* the ELTWISE and LUT layers may be planned as flat bytes (their flat view) */
	p->flat = p->kind == LOOM_VEC_ELTWISE || p->kind == LOOM_VEC_LUT;
}

/* one configuration, one mode (0 immediate; 1, 3: deferred on that many
 * threads), bg background workers timing the misses as they come */
static void memo_case(const loom_hwcfg *cfg, int mode, int bg)
{
	enum { NC = sizeof mconv / sizeof mconv[0], NV = sizeof mvec / sizeof mvec[0] };
	char L[128], err[512] = "";
	snprintf(L, sizeof L, "memo (%s, %s%.0d, %d background workers)", cfg->name,
		 mode ? "deferred, threads " : "immediate", mode, bg);
	loom_plan_memo *m = loom_plan_memo_new(cfg);
	if (mode)
		loom_plan_memo_defer(m);
	CHECK(!loom_plan_memo_background(m, bg), "%s: background workers", L);
	loom_conv_plan cref[NC], cp[NC][2];
	loom_vec_plan vref[NV], vp[NV][2];
	loom_conv_params c;
	loom_vec_params v;
	int ok = 1, sizes = 1;
	for (int s = 0; s < NC; s++) {
		mconv_params(cfg, s, 0, &c);
		memset(&cref[s], 0, sizeof cref[s]);
		ok &= !loom_conv_plan_make(cfg, &c, &cref[s], err, sizeof err);
		for (int k = 0; k < 2; k++) {
			mconv_params(cfg, s, k, &c);
			memset(&cp[s][k], 0, sizeof cp[s][k]);
			ok &= !loom_plan_memo_conv(m, cfg, &c, &cp[s][k], err, sizeof err);
			sizes &= cp[s][k].in_bytes == cref[s].in_bytes && cp[s][k].out_bytes == cref[s].out_bytes &&
				 cp[s][k].wgt_bytes == cref[s].wgt_bytes && cp[s][k].param_bytes == cref[s].param_bytes &&
				 cp[s][k].oh == cref[s].oh && cp[s][k].ow == cref[s].ow;
		}
	}
	for (int s = 0; s < NV; s++) {
		mvec_params(s, 0, &v);
		memset(&vref[s], 0, sizeof vref[s]);
		ok &= !loom_vec_plan_make(cfg, &v, &vref[s], err, sizeof err);
		for (int k = 0; k < 2; k++) {
			mvec_params(s, k, &v);
			memset(&vp[s][k], 0, sizeof vp[s][k]);
			ok &= !loom_plan_memo_vec(m, cfg, &v, &vp[s][k], err, sizeof err);
			/* bytes (a flat view's plan counts lines of its own) */
			sizes &= vp[s][k].in_bytes == vref[s].in_bytes && vp[s][k].out_bytes == vref[s].out_bytes &&
				 vp[s][k].in2_bytes == vref[s].in2_bytes && vp[s][k].const_bytes == vref[s].const_bytes;
		}
	}
	if (!CHECK(ok, "%s: every layer planned %s", L, err)) {
		loom_plan_memo_free(m);
		return;
	}
	CHECK(sizes, "%s: the sizes are the plan's at once", L);
	/* est_first asked for the first conv and vector shapes */
	mconv_params(cfg, 0, 1, &c);
	mvec_params(0, 1, &v);
	loom_plan_memo_want_first(m, &c, NULL);
	loom_plan_memo_want_first(m, NULL, &v);
	CHECK(!loom_plan_memo_time(m, mode ? mode : 1), "%s: timed", L);
	int same = 1;
	for (int s = 0; s < NC; s++)
		for (int k = 0; k < 2; k++) {
			mconv_params(cfg, s, k, &c);
			memset(&cp[s][k], 0, sizeof cp[s][k]);
			loom_plan_memo_conv(m, cfg, &c, &cp[s][k], err, sizeof err);
			loom_conv_plan want = cref[s];
			want.est_first = s == 0 ? cref[s].est_first : 0;
			same &= !memcmp(&want, &cp[s][k], sizeof want);
		}
	for (int s = 0; s < NV; s++)
		for (int k = 0; k < 2; k++) {
			mvec_params(s, k, &v);
			memset(&vp[s][k], 0, sizeof vp[s][k]);
			loom_plan_memo_vec(m, cfg, &v, &vp[s][k], err, sizeof err);
			loom_vec_plan want = vref[s];
			want.est_first = s == 0 ? vref[s].est_first : 0;
			same &= !memcmp(&want, &vp[s][k], sizeof want);
		}
	uint64_t hits, misses, timed;
	loom_plan_memo_stats(m, &hits, &misses, &timed);
	int flat = vref[0].flat + vref[3].flat;
	CHECK(same && misses == NC + NV && hits == 3 * (NC + NV),
	      "%s: the planners' plans for both layers of each of %d shapes (%" PRIu64 " planned, %" PRIu64
	      " from the memo, %" PRIu64 " programs timed, %d flat)",
	      L, NC + NV, misses, hits, timed, flat);
	/* a hit still checks the values */
	mconv_params(cfg, 1, 0, &c);
	c.clip_lo = 10, c.clip_hi = -10;
	mvec_params(1, 0, &v);
	v.clip_lo = 10, v.clip_hi = -10;
	loom_conv_plan x;
	loom_vec_plan y;
	CHECK(loom_plan_memo_conv(m, cfg, &c, &x, err, sizeof err) && strstr(err, "clip") &&
		      loom_plan_memo_vec(m, cfg, &v, &y, err, sizeof err) && strstr(err, "clip"),
	      "%s: clip_lo > clip_hi refused though the shape is known: %s", L, err);
	loom_plan_memo_free(m);
}

static void test_plan_memo(void)
{
	static const char *const specs[] = {"default", "odd"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		loom_hwcfg cfg;
		char err[256];
		if (!CHECK(!loom_hwcfg_load(&cfg, specs[i], NULL, err, sizeof err), "memo: configuration %s %s", specs[i],
			   err))
			continue;
		memo_case(&cfg, 0, 0);
		memo_case(&cfg, 1, 0);
		memo_case(&cfg, 3, 0);
		memo_case(&cfg, 1, 1);
		memo_case(&cfg, 2, 3);
		/* freed with finalists still queued: the workers end first */
		loom_plan_memo *m = loom_plan_memo_new(&cfg);
		loom_plan_memo_defer(m);
		loom_plan_memo_background(m, 2);
		int planned = 1;
		for (int s = 0; s < 4; s++) {
			loom_conv_params c;
			loom_conv_plan p;
			mconv_params(&cfg, s, 0, &c);
			planned &= !loom_plan_memo_conv(m, &cfg, &c, &p, err, sizeof err);
		}
		loom_plan_memo_free(m);
		CHECK(planned, "memo (%s): freed while the background workers time: %s", specs[i], planned ? "" : err);
		/* est_first on demand */
		loom_conv_params c;
		loom_vec_params v;
		loom_conv_plan cp;
		loom_vec_plan vp;
		mconv_params(&cfg, 2, 0, &c);
		mvec_params(1, 0, &v);
		memset(&cp, 0, sizeof cp);
		memset(&vp, 0, sizeof vp);
		int ok = !loom_conv_plan_make(&cfg, &c, &cp, err, sizeof err) &&
			 !loom_vec_plan_make(&cfg, &v, &vp, err, sizeof err);
		uint64_t f1 = ok ? loom_conv_plan_first(&cfg, &c, &cp) : 0, f2 = ok ? loom_vec_plan_first(&cfg, &v, &vp) : 0;
		CHECK(ok && f1 == cp.est_first && f2 == vp.est_first && f1 && f2,
		      "memo (%s): loom_conv_plan_first %" PRIu64 ", loom_vec_plan_first %" PRIu64 ": est_first %" PRIu64
		      ", %" PRIu64, specs[i], f1, f2, cp.est_first, vp.est_first);
	}
}

/* ------------------------------------------------------------------ weight quantization */

/* the streamed weights of a batch-1 GEMM (768, MobileNetV2's 1280 and
 * ResNet-50's 2048 inputs, 1000 outputs, int32 out): the two
 * weight regions, input buffer 0 and buffer 1 each in banks of their own
 * (plan banks 4), the load filling one weight region never waiting for the
 * array reading the other; timed, the plan is faster than the same plan
 * with the second weight region right after the first (banks 3, in the
 * first's bank, as before) where a region is not whole banks (2048: 4096
 * lines, one bank, either way) */
static void test_weight_banks(void)
{
	static const uint32_t cin[] = {768, 1280, 2048};
	loom_hwcfg cfg;
	char err[256] = "";
	if (!CHECK(!loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err), "weight banks: default %s", err))
		return;
	unsigned lg = 0;
	while ((1u << lg) < cfg.sp_bank_lines)
		lg++;
	for (size_t i = 0; i < sizeof cin / sizeof cin[0]; i++) {
		loom_conv_params p;
		loom_conv_init(&p);
		p.h = p.w = 1, p.cin = cin[i], p.cout = 1000, p.kh = p.kw = p.sh = p.sw = 1, p.raw = 1;
		p.in_zp = -128;
		loom_conv_plan pl;
		memset(&pl, 0, sizeof pl);
		if (!CHECK(!loom_conv_plan_make(&cfg, &p, &pl, err, sizeof err), "weight banks: %u -> 1000: %s", cin[i],
			   err))
			continue;
		uint32_t st[4] = {pl.wgt_sp[0], pl.wgt_sp[1], pl.act_sp[0], pl.act_sp[1]};
		uint32_t n[4] = {pl.wgt_lines, pl.wgt_lines, pl.act_lines, pl.act_lines};
		int disjoint = 1;
		for (int a = 0; a < 4; a++)
			for (int b = a + 1; b < 4; b++)
				disjoint &= (st[a] + n[a] - 1) >> lg < st[b] >> lg || (st[b] + n[b] - 1) >> lg < st[a] >> lg;
		CHECK(pl.nwreg == 2 && pl.banks == 4 && disjoint,
		      "weight banks: %u -> 1000: two weight regions (%u), banks %d, regions at %u %u %u %u (%u, %u lines) "
		      "in banks of their own",
		      cin[i], pl.nwreg, pl.banks, st[0], st[1], st[2], st[3], n[0], n[2]);
		/* a region of whole banks leaves nothing to share (the placements agree) */
		if (!(pl.wgt_lines & (cfg.sp_bank_lines - 1)))
			continue;
		loom_conv_plan shared = pl;
		shared.wgt_sp[1] = pl.wgt_lines, shared.banks = 3;
		uint64_t own = loom_conv_plan_first(&cfg, &p, &pl), one = loom_conv_plan_first(&cfg, &p, &shared);
		CHECK(own < one, "weight banks: %u -> 1000: %" PRIu64 " cycles, with the weight regions in one bank %" PRIu64,
		      cin[i], own, one);
	}
}

static void test_quant_channels(void)
{
	enum { CO = 9, PER = 40 }; /* rows past 8 and 16: the AVX-512 loops and their tails */
	float w[CO * PER];
	int8_t wq[CO * PER];
	int32_t bq[CO], mult[CO], shift[CO];
	uint32_t seed = 99;
	int bad = 0, cases = 0;
	for (int per = 1; per <= PER; per++) {
		for (int i = 0; i < CO * per; i++) {
			seed = seed * 1664525u + 1013904223u;
			int k = (int)(seed >> 8) % 255 - 127;
			/* quarter steps of max|w| / 127 (exact halves among them), zeros */
			w[i] = (seed >> 4) % 7 == 0 ? 0.0f : (float)k * 0.25f * 0.03125f;
		}
		for (int co = 0; co < CO; co++) /* each channel's max|w|, either sign */
			w[co * per + co % per] = co % 2 ? 127 * 0.03125f : -127 * 0.03125f;
		const char *r = quant_channels(0.5, 1.0, w, CO, per, per, 1, NULL, wq, bq, mult, shift, NULL);
		for (int co = 0; !r && co < CO; co++) {
			double amax = 0;
			for (int k = 0; k < per; k++)
				amax = fmax(amax, fabs(w[co * per + k]));
			for (int k = 0; k < per; k++) {
				long want = lround(w[co * per + k] / (amax / 127.0));
				want = want < -127 ? -127 : want > 127 ? 127 : want;
				bad += wq[co * per + k] != want;
				cases++;
			}
		}
		bad += r != NULL;
	}
	CHECK(!bad, "quant_channels: %d weights in channels of 1..%d as lround(w / (max|w| / 127)) one by one", cases,
	      PER);
	/* a non-finite weight anywhere in a long channel is refused */
	for (int at = 0; at < 2 * PER; at += 7)
		for (int kind = 0; kind < 2; kind++) {
			for (int i = 0; i < 2 * PER; i++)
				w[i % (CO * PER)] = 0.01f * (float)(i % 13);
			w[at] = kind ? NAN : -INFINITY;
			const char *r = quant_channels(0.5, 1.0, w, 2, PER, PER, 1, NULL, wq, bq, mult, shift, NULL);
			CHECK(r && !strcmp(r, "non-finite weight"), "quant_channels: %s at element %d of 2 x %d: refused",
			      kind ? "NaN" : "-inf", at, PER);
		}
}

int main(void)
{
	check_init(CHECK_SKIPS);
#ifdef LOOM_HOST_GENERIC
	printf("the portable code of calib.c and quantize.c (LOOM_HOST_GENERIC)\n");
#endif
	test_placement();
	test_deterministic();
	test_no_reuse();
	test_keep_float();
	test_methods_bias();
	test_unsupported();
	test_too_small();
	test_broken();
	test_threads();
	test_plan_memo();
	test_quant_channels();
	test_weight_banks();
	test_resadd();
	test_ew_region();
	test_grouped();
	test_transpose_rows();
	test_run();
	return check_report();
}
