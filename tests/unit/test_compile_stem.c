/* test_compile_stem.c - an image stem's padded input written by the host
 * (compiler/lower_conv.c conv_xpack, loom_step.dst in ir/model.h): small
 * float graphs built in memory, compiled for "default" and calibrated on
 * the one input they run on:
 *
 *   host:  x [N,3,12,12] -> Conv stem (32 filters 3x3, stride 2, pads 1) ->
 *          Relu -> y                                            (N = 1, 2)
 *   copy:  the same, and MaxPool pool (2x2, stride 2) of x -> z: x has a
 *          second reader, so the stem keeps its padded copy on the NPU
 *
 *  - placement, from the compiled model: host has no padded-copy layer (the
 *    stem is one CONV reading x.padded), its first step is the QUANT of x
 *    into x.padded (pads 1 1 1 1, the border byte the zero point of both),
 *    x has no device image, the report says the input is padded by the
 *    host; copy has the DWCONV copy before the CONV and the plain QUANT of
 *    x (dst -1);
 *  - runs on the C model (build/firmware/loom_fw.elf; skipped when it is
 *    missing), arena_no_reuse so that x.padded can be read back after the
 *    run: the image the host wrote is byte for byte the one the DWCONV copy
 *    wrote, y is bit-identical between host and copy, and within 4 int8
 *    steps of the float reference (loom_ref_run); host's model as two
 *    inference requests in flight (runtime/exec_req.c: the second in a
 *    DRAM copy of its own) gives the plain run's y; batch 2 as well;
 *  - the .loom file: host's model written and read back keeps the step's
 *    dst, pads and fill; a bad fill, pads that do not give x.padded's
 *    geometry, a dst on an NPU step, a dst without a device image, and the
 *    steps section cut short are refused with a message naming the file,
 *    the section and the step.
 *
 * Prints one line per check and ends with "N passed, M failed, K skipped";
 * exit status 1 on any failure. */
#include "compiler/compile.h"
#include "ir/model.h"
#include "loom/loom.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "runtime/exec_internal.h"
#include "onnx_case.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define FL LOOM_DT_FLOAT
#define HW 12 /* input height and width */
#define CO 32 /* stem filters */
#define OH 6  /* stem output height and width */

/* the graphs of the opening comment: copy adds the MaxPool of x */
static loom_graph *build_stem(int64_t nb, int copy)
{
	loom_graph *g = oc_graph_new(13, "(built by test_compile_stem)");
	int x = oc_add_input(g, "x", FL, 4, D(nb, 3, HW, HW), NULL);
	int w = oc_const(g, "w", 4, D(CO, 3, 3, 3), 1, 0.4f), b = oc_const(g, "b", 1, D(CO), 2, 0.1f);
	int c = oc_value(g, "c"), y = oc_value(g, "y");
	int ni = OC_MUST(loom_graph_add_node(g, "Conv", "stem", (const int[]){x, w, b}, 3, &c, 1));
	loom_node *n = &g->nodes[ni];
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "strides", D(2, 2), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	OC_MUST(loom_graph_add_node(g, "Relu", "relu", &c, 1, &y, 1));
	OC_MUST(loom_graph_add_output(g, y));
	if (copy) {
		int z = oc_value(g, "z");
		ni = OC_MUST(loom_graph_add_node(g, "MaxPool", "pool", &x, 1, &z, 1));
		n = &g->nodes[ni];
		OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(2, 2), 2));
		OC_MUST(loom_node_set_attr_ints(n, "strides", D(2, 2), 2));
		OC_MUST(loom_graph_add_output(g, z));
	}
	return g;
}

static int tensor_named(const loom_graph *g, const char *name)
{
	int t = loom_graph_find(g, name);
	if (t < 0) {
		fprintf(stderr, "test_compile_stem: no tensor %s\n", name);
		exit(2);
	}
	return t;
}

static const loom_node_report *node_rep(const loom_compile_report *r, const char *name)
{
	for (int i = 0; i < r->nnodes; i++)
		if (!strcmp(r->nodes[i].name, name))
			return &r->nodes[i];
	return NULL;
}

/* the layers' kinds as "dwconv conv ..." */
static void layer_kinds(const loom_model *m, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t l = 0; l < m->nlayers && o < len; l++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", l ? " " : "", loom_layer_kind_name(m->layers[l].kind));
}

/* compile the graph (consumed) calibrated on x: 0 or -1 + err */
static int compile(loom_graph *g, const float *x, int64_t nb, loom_model **m, loom_compile_report *rep, char *err,
		   size_t len)
{
	loom_hwcfg cfg;
	*m = NULL;
	if (loom_hwcfg_load(&cfg, "default", NULL, err, len)) {
		loom_graph_free(g);
		return -1;
	}
	loom_tensor cin = {.name = "x", .dtype = FL, .rank = 4, .dims = {nb, 3, HW, HW}, .data = (void *)x};
	loom_compile_opts o = {.calib_inputs = &cin, .calib_ninputs = 1, .arena_no_reuse = 1};
	return loom_compile(g, &cfg, &o, m, rep, err, len);
}

/* ------------------------------------------------------------------ placement */

/* host: the stem one CONV of x.padded, the QUANT of x writing it */
static void check_host(const char *L, const loom_model *m, const loom_compile_report *rep, int64_t nb)
{
	const loom_graph *g = m->graph;
	int x = tensor_named(g, "x"), xp = tensor_named(g, "x.padded");
	char kinds[256];
	layer_kinds(m, kinds, sizeof kinds);
	int copies = 0;
	for (uint32_t l = 0; l < m->nlayers; l++)
		copies += m->layers[l].kind == LOOM_LAYER_DWCONV || m->layers[l].out == xp;
	CHECK(!copies && m->nlayers == (uint32_t)nb && m->layers[0].kind == LOOM_LAYER_CONV && m->layers[0].in[0] == xp,
	      "%s: layers '%s': no padded copy, the stem a CONV of x.padded per image", L, kinds);
	const loom_step *s = m->nsteps ? &m->steps[0] : NULL;
	const loom_mtensor *mp = &m->mt[xp];
	CHECK(s && s->kind == LOOM_STEP_QUANT && s->tensor == x && s->dst == xp && s->pad[0] == 1 && s->pad[1] == 1 &&
		      s->pad[2] == 1 && s->pad[3] == 1 && s->fill == mp->zp && mp->zp == m->mt[x].zp &&
		      mp->scale == m->mt[x].scale,
	      "%s: step 0 quantizes x into x.padded, pads 1 1 1 1, border %d = the zero point %d", L, s ? s->fill : -999,
	      mp->zp);
	CHECK(!m->mt[x].dev && mp->dev && mp->h == (uint32_t)(nb * (HW + 2)) && mp->w == HW + 2 && mp->c == 3,
	      "%s: x has no device image, x.padded %ux%ux%u", L, mp->h, mp->w, mp->c);
	const loom_node_report *r = rep ? node_rep(rep, "stem") : NULL;
	CHECK(r && r->where == LOOM_WHERE_NPU && strstr(r->why, "input padded by the host"),
	      "%s: the report: stem '%s'", L, r ? r->why : "(none)");
}

/* copy: the DWCONV copy, then the CONV; x quantized into its own image */
static void check_copy(const char *L, const loom_model *m)
{
	const loom_graph *g = m->graph;
	int x = tensor_named(g, "x"), xp = tensor_named(g, "x.padded");
	char kinds[256];
	layer_kinds(m, kinds, sizeof kinds);
	CHECK(m->nlayers >= 2 && m->layers[0].kind == LOOM_LAYER_DWCONV && m->layers[0].in[0] == x &&
		      m->layers[0].out == xp,
	      "%s: layers '%s': the padded copy x -> x.padded first", L, kinds);
	CHECK(m->nsteps && m->steps[0].kind == LOOM_STEP_QUANT && m->steps[0].tensor == x && m->steps[0].dst == -1 &&
		      m->mt[x].dev,
	      "%s: step 0 quantizes x into its own image", L);
}

/* ------------------------------------------------------------------ runs */

typedef struct run_out {
	float *y;         /* OH*OH*CO*nb */
	int8_t *padded;   /* x.padded's image after the run */
	size_t npadded;
	double step;      /* y's int8 step */
} run_out;

/* two inference requests of ex's model in flight (runtime/exec_req.c: the
 * second in a DRAM copy of its own), both on x: y as the plain run's o */
static int run_reqs(const char *L, loom_exec *ex, const float *x, int64_t nb, const run_out *o)
{
	char err[2048] = "";
	loom_exec_reqs *rq = NULL;
	const loom_graph *g = loom_exec_model(ex)->graph;
	int xt = tensor_named(g, "x"), yt = tensor_named(g, "y"), same = 0;
	int rc = loom_exec_new_requests(ex, 2, &rq, err, sizeof err);
	for (unsigned r = 0; r < 2 && !rc; r++)
		rc = loom_tensor_set_data(loom_exec_req_tensor(rq, r, xt), x, (size_t)(nb * 3 * HW * HW) * sizeof *x) ||
		     loom_exec_req_start(rq, r, err, sizeof err);
	for (unsigned r = 0; r < 2 && !rc; r++)
		rc = loom_exec_req_wait(rq, (int)r, NULL, err, sizeof err);
	for (unsigned r = 0; r < 2 && !rc; r++) {
		const loom_tensor *y = loom_exec_req_tensor(rq, r, yt);
		same += y && y->data &&
			!memcmp(y->data, o->y, (size_t)loom_tensor_numel(&g->tensors[yt]) * sizeof *o->y);
	}
	loom_exec_reqs_free(rq);
	return CHECK(!rc && same == 2, "%s: two requests in flight: %d of 2 give the plain run's y%s%s", L, same,
		     rc ? ": " : "", rc ? err : "") ? 0 : -1;
}

/* m run on the C model with input x (and, with reqs, as two requests
 * too): 0, or -1 (a failed check) */
static int run(const char *L, const loom_model *m, const char *fw, const float *x, int64_t nb, int reqs, run_out *o)
{
	char err[2048] = "";
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	loom_graph *g = m->graph;
	int ok = 0;
	memset(o, 0, sizeof *o);
	int rc = loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "default"}, &dev, err, sizeof err);
	if (!rc && ((rc = loom_load_firmware(dev, fw)) || (rc = loom_boot(dev, NULL))))
		snprintf(err, sizeof err, "%s: %s: %s", fw, loom_strerror(rc), loom_errmsg(dev));
	if (!rc)
		rc = loom_exec_new(dev, (loom_model *)m, &ex, err, sizeof err);
	if (!rc)
		rc = loom_tensor_set_data(&g->tensors[tensor_named(g, "x")], x, (size_t)(nb * 3 * HW * HW) * sizeof *x);
	if (!rc)
		rc = loom_exec_run(ex, err, sizeof err);
	if (!CHECK(!rc, "%s: booted, input bound, loom_exec_run%s%s", L, rc ? ": " : "", rc ? err : ""))
		goto out;
	int y = tensor_named(g, "y");
	const loom_mtensor *mp = &m->mt[tensor_named(g, "x.padded")];
	o->npadded = (size_t)mp->h * mp->w * mp->stride;
	o->padded = oc_xmalloc(o->npadded);
	o->y = oc_xmalloc((size_t)loom_tensor_numel(&g->tensors[y]) * sizeof *o->y);
	memcpy(o->y, g->tensors[y].data, (size_t)loom_tensor_numel(&g->tensors[y]) * sizeof *o->y);
	o->step = m->mt[y].scale;
	ok = CHECK(!loom_bo_read(loom_exec_bo(ex), mp->addr - m->base, o->padded, o->npadded),
		   "%s: x.padded read back", L);
	if (ok && reqs)
		ok = !run_reqs(L, ex, x, nb, o);
out:
	loom_exec_free(ex);
	loom_close(dev);
	return ok ? 0 : -1;
}

static void run_free(run_out *o)
{
	free(o->y);
	free(o->padded);
}

/* ------------------------------------------------------------------ the .loom file */

/* the section header of name in an ELF64 file: its size field's offset */
static size_t shsize_at(const uint8_t *b, size_t len, const char *name)
{
	uint64_t shoff = 0;
	for (int i = 0; i < 8; i++)
		shoff |= (uint64_t)b[0x28 + i] << (8 * i);
	unsigned shentsize = b[0x3a] | b[0x3b] << 8, shnum = b[0x3c] | b[0x3d] << 8, shstrndx = b[0x3e] | b[0x3f] << 8;
	if (shoff + (uint64_t)shnum * shentsize > len || shstrndx >= shnum)
		return 0;
	const uint8_t *ss = b + shoff + (size_t)shstrndx * shentsize;
	uint64_t stroff = 0;
	for (int i = 0; i < 8; i++)
		stroff |= (uint64_t)ss[0x18 + i] << (8 * i);
	for (unsigned k = 0; k < shnum; k++) {
		const uint8_t *sh = b + shoff + (size_t)k * shentsize;
		uint32_t nm = sh[0] | sh[1] << 8 | sh[2] << 16 | (uint32_t)sh[3] << 24;
		if (stroff + nm + strlen(name) < len && !strcmp((const char *)b + stroff + nm, name))
			return (size_t)(sh - b) + 0x20;
	}
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = oc_xmalloc((size_t)n + 1);
	*len = fread(b, 1, (size_t)n, f);
	fclose(f);
	return b;
}

typedef void (*mutator)(loom_model *m);
static void mut_fill(loom_model *m) { m->steps[0].fill = 300; }
static void mut_pads(loom_model *m) { m->steps[0].pad[2] = 2; }
static void mut_npu(loom_model *m) { m->steps[1].dst = m->steps[0].dst; }
static void mut_nodev(loom_model *m) { m->steps[0].dst = tensor_named(m->graph, "w"); }

static void test_file(loom_model *m, const char *path)
{
	char err[1024] = "";
	loom_model *r = NULL;
	int rc = loom_model_write(m, path, err, sizeof err) || loom_model_read(path, &m->cfg, &r, err, sizeof err);
	const loom_step *a = &m->steps[0], *b = r ? &r->steps[0] : NULL;
	CHECK(!rc && b && b->dst == a->dst && b->tensor == a->tensor && !memcmp(b->pad, a->pad, sizeof a->pad) &&
		      b->fill == a->fill && r->nsteps == m->nsteps && r->steps[1].dst == -1,
	      "file: the padded QUANT step written and read back%s%s", rc ? ": " : "", rc ? err : "");
	loom_model_free(r);
	static const struct {
		mutator fn;
		const char *want;
	} cases[] = {
		{mut_fill, ".loom.steps: step 0 (quant x -> x.padded): fill 300 is not an int8"},
		{mut_pads, "step 0 (quant x -> x.padded): dst image 14x14x3 is not [1,3,12,12] with pads 1 1 2 1"},
		{mut_npu, ".loom.steps: step 1 (npu): dst"},
		{mut_nodev, "step 0 (quant x -> w): dst must be an int8 image"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		loom_step keep[2] = {m->steps[0], m->steps[1]};
		cases[i].fn(m);
		r = NULL;
		err[0] = 0;
		rc = loom_model_write(m, path, err, sizeof err);
		int rr = rc ? 0 : loom_model_read(path, NULL, &r, err, sizeof err);
		CHECK(!rc && rr == -1 && !r && strstr(err, cases[i].want) && !strncmp(err, path, strlen(path)),
		      "file: bad case %zu refused: want '%s', got '%s'", i, cases[i].want, err);
		loom_model_free(r);
		m->steps[0] = keep[0], m->steps[1] = keep[1];
	}
	/* the steps section 4 bytes short: the last step's fill cut off */
	size_t len = 0;
	rc = loom_model_write(m, path, err, sizeof err);
	uint8_t *f = rc ? NULL : slurp(path, &len);
	size_t at = f ? shsize_at(f, len, ".loom.steps") : 0;
	if (CHECK(at && f[at] >= 4, "file: .loom.steps found")) {
		f[at] -= 4;
		r = NULL;
		err[0] = 0;
		rc = loom_model_read_mem(f, len, "cut.loom", NULL, &r, err, sizeof err);
		CHECK(rc == -1 && !r && strstr(err, "cut.loom: .loom.steps: ") && strstr(err, "step"),
		      "file: the steps section cut short is refused: '%s'", err);
		loom_model_free(r);
	}
	free(f);
}

/* ------------------------------------------------------------------ main */

static void test_stem(int64_t nb, const char *fw, const char *path)
{
	char L[64], err[2048] = "";
	size_t nx = (size_t)(nb * 3 * HW * HW);
	float *x = oc_xmalloc(nx * sizeof *x);
	oc_fill(x, nx, 7, 1.5f);
	loom_model *mh = NULL, *mc = NULL;
	loom_compile_report rep;
	memset(&rep, 0, sizeof rep);
	snprintf(L, sizeof L, "host, batch %lld", (long long)nb);
	int rc = compile(build_stem(nb, 0), x, nb, &mh, &rep, err, sizeof err);
	if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
		check_host(L, mh, &rep, nb);
	loom_compile_report_free(&rep);
	snprintf(L, sizeof L, "copy, batch %lld", (long long)nb);
	rc = compile(build_stem(nb, 1), x, nb, &mc, NULL, err, sizeof err);
	if (CHECK(!rc, "%s: compiles%s%s", L, rc ? ": " : "", rc ? err : ""))
		check_copy(L, mc);
	if (!mh || !mc)
		goto out;
	if (nb == 1)
		test_file(mh, path);
	if (!fw) {
		check_skip("batch %lld: C model runs: no firmware (make firmware)", (long long)nb);
		goto out;
	}
	/* the float reference */
	loom_graph *ref = build_stem(nb, 0);
	rc = loom_tensor_set_data(&ref->tensors[tensor_named(ref, "x")], x, nx * sizeof *x) ||
	     loom_ref_run(ref, err, sizeof err);
	run_out h, c;
	memset(&h, 0, sizeof h);
	memset(&c, 0, sizeof c);
	snprintf(L, sizeof L, "batch %lld", (long long)nb);
	if (CHECK(!rc, "%s: float reference%s%s", L, rc ? ": " : "", rc ? err : "") && !run(L, mh, fw, x, nb, 1, &h) &&
	    !run(L, mc, fw, x, nb, 0, &c)) {
		size_t ny = (size_t)(nb * CO * OH * OH), diff = 0;
		for (size_t i = 0; i < h.npadded && h.npadded == c.npadded; i++)
			diff += h.padded[i] != c.padded[i];
		CHECK(h.npadded == c.npadded && !diff,
		      "%s: x.padded as the host wrote it is the DWCONV copy's image (%zu bytes, %zu differ)", L, h.npadded,
		      diff);
		CHECK(!memcmp(h.y, c.y, ny * sizeof *h.y), "%s: y bit-identical with and without the copy layer", L);
		const float *want = ref->tensors[ref->outputs[0]].data;
		double worst = 0;
		for (size_t i = 0; i < ny; i++)
			worst = fmax(worst, fabs((double)h.y[i] - want[i]));
		CHECK(worst <= 1e-4 + 4 * h.step, "%s: y within 4 int8 steps of the float reference (%.2f steps)", L,
		      h.step > 0 ? worst / h.step : 0.0);
	}
	run_free(&h);
	run_free(&c);
	loom_graph_free(ref);
out:
	loom_model_free(mh);
	loom_model_free(mc);
	free(x);
}

int main(void)
{
	check_init(CHECK_SKIPS);
	char fw[4200], path[64];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	snprintf(path, sizeof path, "/tmp/test_compile_stem_%d.loom", (int)getpid());
	test_stem(1, oc_file_exists(fw) ? fw : NULL, path);
	test_stem(2, oc_file_exists(fw) ? fw : NULL, path);
	unlink(path);
	return check_report();
}
