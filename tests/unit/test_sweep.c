/* test_sweep.c - what loom sweep's speed rests on, checked against full
 * compiles (tests/run.sh passes build/models):
 *   - calibration reuse (loom_compile_opts.calib / calib_out): a compile
 *     with an earlier compile's calibration writes a byte-identical .loom
 *     file and says the calibration was reused; a calibration of another
 *     graph is refused;
 *   - plan reuse (loom_compile_opts.plans, as loom compile --accuracy's
 *     trials share it): compiles of one model with another calibration
 *     method, with a node kept in float, and with both, each after the
 *     others with one shared memo, write the .loom file a compile without
 *     it writes; the report counts each compile's own planning (the first
 *     compile as without the memo, a compile of the same shapes none);
 *   - the analytical point (sweep_eval: the layers' kernel parameters from
 *     one compile on the largest scratchpad, re-planned per point) equals
 *     a full loom_compile for the point, layer by layer: estimated cycles,
 *     DRAM bytes (the planner's analytical count against the bytes the
 *     emitted LOADs move), the bytes the emitted STOREs write; a point
 *     whose scratchpad has no tiling for a layer reports the fallback, and
 *     the full compile puts that layer's node on the CPU too;
 *   - the energy events of each layer (sweep_lres.ev: its program emitted
 *     for the point, counted by common/events.c) equal the counts of the
 *     full compile's instructions for the layer, MACS (R*C per streamed
 *     line of its MATMULs) included;
 *   - loom_conv_plan_make_n gives every configuration exactly the plan
 *     loom_conv_plan_make gives it alone, and sweep_eval_n what sweep_eval
 *     gives each point;
 *   - the grid: points, names, bad values as invalid points with reasons,
 *     malformed values as errors.
 * Usage: test_sweep [MODELS [quick]]; quick leaves out SqueezeNet's points
 * (tests/run.sh's sanitizer run, but in make test-full).
 * Ends with "N passed, M failed". */
#include "common/events.h"
#include "compiler/compile.h"
#include "compiler/onnx.h"
#include "ir/model.h"
#include "sweep/sweep.h"
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char models[900];

static loom_graph *load(const char *name)
{
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/%s/model.onnx", models, name);
	loom_graph *g = NULL;
	if (loom_onnx_load(path, NULL, 0, &g, err, sizeof err)) {
		CHECK_FAIL("%s: %s", path, err);
		return NULL;
	}
	return g;
}

static void calib_dir(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/calib", models, name);
}

/* the bytes of a model file */
static char *model_bytes(const loom_model *m, size_t *n)
{
	char path[] = "/tmp/loom_test_sweep_XXXXXX", err[256];
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	char *buf = NULL;
	if (!loom_model_write(m, path, err, sizeof err)) {
		FILE *f = fopen(path, "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			*n = (size_t)ftell(f);
			fseek(f, 0, SEEK_SET);
			buf = malloc(*n + 1);
			if (buf && fread(buf, 1, *n, f) != *n) {
				free(buf);
				buf = NULL;
			}
			fclose(f);
		}
	}
	remove(path);
	return buf;
}

/* one compile of name (load, compile, the .loom bytes in *b); 0 or -1 */
static int compile_bytes(const char *name, const loom_hwcfg *cfg, const loom_compile_opts *o, char **b, size_t *n,
			 loom_compile_report *r)
{
	char err[512];
	loom_model *m = NULL;
	loom_graph *g = load(name);
	memset(r, 0, sizeof *r);
	if (!g || loom_compile(g, cfg, o, &m, r, err, sizeof err)) {
		CHECK_FAIL("compile %s (%s): %s", name, o->options, g ? err : "cannot load");
		return -1;
	}
	*b = model_bytes(m, n);
	loom_model_free(m);
	return *b ? 0 : -1;
}

static void test_calib_reuse(void)
{
	const char *name = "digits_cnn_opset13";
	char cd[4200], err[512];
	calib_dir(name, cd, sizeof cd);
	loom_hwcfg cfg;
	loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err);
	loom_calib *cal = NULL;
	loom_compile_opts o = {.calib_dir = cd, .calib_out = &cal, .source = "m", .options = "o"};
	loom_model *m2 = NULL;
	loom_compile_report r1, r2;
	char *b1 = NULL, *b2 = NULL;
	size_t n1 = 0, n2 = 0;
	if (compile_bytes(name, &cfg, &o, &b1, &n1, &r1)) {
		loom_calib_free(cal);
		return;
	}
	CHECK(cal != NULL, "calib_out gives the calibration");
	loom_compile_opts o2 = {.calib_dir = cd, .calib = cal, .source = "m", .options = "o"};
	if (compile_bytes(name, &cfg, &o2, &b2, &n2, &r2) == 0) {
		CHECK(n1 == n2 && !memcmp(b1, b2, n1), "the calibration reused: a byte-identical .loom (%zu, %zu bytes)", n1,
		      n2);
		CHECK(r2.calib_reused && !r1.calib_reused, "the report says the calibration was reused");
		CHECK(r2.calib_samples == r1.calib_samples, "the reused calibration's samples (%d, %d)", r1.calib_samples,
		      r2.calib_samples);
		loom_compile_report_free(&r2);
	}
	free(b1);
	free(b2);
	/* another graph: refused */
	loom_graph *g = load("squeezenet1_1_opset13");
	err[0] = 0;
	int rc = g ? loom_compile(g, &cfg, &o2, &m2, &r2, err, sizeof err) : 0;
	CHECK(rc && strstr(err, "another graph"), "a calibration of another graph is refused: %s", err);
	loom_calib_free(cal);
	loom_compile_report_free(&r1);
}

static void test_plan_reuse(void)
{
	const char *name = "squeezenet1_1_opset13";
	char cd[4200], err[512];
	calib_dir(name, cd, sizeof cd);
	loom_hwcfg cfg;
	loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err);
	loom_plan_memo *memo = loom_plan_memo_new(&cfg);
	/* the variants: options differing in values (the method), in the
	 * layers (a node kept in float), and both */
	static const struct {
		int method;
		const char *keep;
	} v[] = {{LOOM_CALIB_MINMAX, NULL},
		 {LOOM_CALIB_PERCENTILE, NULL},
		 {LOOM_CALIB_MINMAX, "/features/features.3/squeeze/Conv"},
		 {LOOM_CALIB_PERCENTILE, "/features/features.3/squeeze/Conv"}};
	loom_compile_report first;
	memset(&first, 0, sizeof first);
	for (size_t i = 0; memo && i < sizeof v / sizeof v[0]; i++) {
		char opt[64];
		snprintf(opt, sizeof opt, "variant %zu", i);
		loom_compile_opts o = {.calib_dir = cd, .calib_method = v[i].method, .keep_float = v[i].keep,
				       .source = "m", .options = opt};
		char *b1 = NULL, *b2 = NULL;
		size_t n1 = 0, n2 = 0;
		loom_compile_report r1, r2;
		if (compile_bytes(name, &cfg, &o, &b1, &n1, &r1) == 0) {
			o.plans = memo;
			if (compile_bytes(name, &cfg, &o, &b2, &n2, &r2) == 0) {
				CHECK(n1 == n2 && !memcmp(b1, b2, n1), "%s: with the shared plans a byte-identical .loom "
				      "(%zu, %zu bytes)", opt, n1, n2);
				if (i == 0) {
					CHECK(r2.shapes_planned == r1.shapes_planned && r2.plans_reused == r1.plans_reused &&
						      r2.programs_timed == r1.programs_timed && r1.programs_timed > 0,
					      "%s: the first compile on the memo reports its planning as without it "
					      "(%" PRIu64 " shapes planned, %" PRIu64 " reused, %" PRIu64 " programs timed)",
					      opt, r2.shapes_planned, r2.plans_reused, r2.programs_timed);
				} else if (i == 1) {
					CHECK(r2.shapes_planned == 0 && r2.programs_timed == 0 &&
						      r2.plans_reused == r1.plans_reused + r1.shapes_planned,
					      "%s: other values, the same shapes: nothing planned or timed (%" PRIu64
					      " shapes planned, %" PRIu64 " programs timed, %" PRIu64 " looked up)",
					      opt, r2.shapes_planned, r2.programs_timed, r2.plans_reused);
				}
				loom_compile_report_free(&r2);
			}
			loom_compile_report_free(&r1);
		}
		free(b1);
		free(b2);
	}
	CHECK(memo != NULL, "a plan memo for the configuration");
	loom_plan_memo_free(memo);
}

/* the bytes the emitted LOADs of a layer move from DRAM (padding lines
 * excluded) or its STOREs write */
static uint64_t moved(const loom_model *m, const loom_layer *L, unsigned op)
{
	uint64_t b = 0;
	for (uint32_t i = L->insn_first; i < L->insn_first + L->insn_count; i++) {
		const loom_insn *in = &m->insn[i];
		if (loom_insn_opcode(in) != op)
			continue;
		if (op == LOOM_OP_STORE)
			b += 4ull * loom_insn_get(in, LOOM_F_STORE_ROW_WORDS) * loom_insn_get(in, LOOM_F_STORE_N1) *
			     loom_insn_get(in, LOOM_F_STORE_N2) * loom_insn_get(in, LOOM_F_STORE_N3);
		else
			b += 4ull * loom_insn_get(in, LOOM_F_LOAD_ROW_WORDS) * loom_insn_get(in, LOOM_F_LOAD_N1) *
			     loom_insn_get(in, LOOM_F_LOAD_N2) * loom_insn_get(in, LOOM_F_LOAD_N3);
	}
	return b;
}

/* the events of a compiled layer's instructions, MACS from its MATMULs */
static int same_events(const loom_hwcfg *cfg, const loom_model *m, const loom_layer *L, const sweep_events *ev)
{
	uint64_t e[LOOM_EVT_COUNT] = {0}, macs = 0;
	for (uint32_t i = L->insn_first; i < L->insn_first + L->insn_count; i++) {
		const loom_insn *in = &m->insn[i];
		loom_insn_events(cfg->array_rows, cfg->array_cols, cfg->vec_macs, in, e);
		if (loom_insn_opcode(in) == LOOM_OP_MATMUL)
			macs += (uint64_t)cfg->array_rows * cfg->array_cols * loom_insn_get(in, LOOM_F_MATMUL_NCB) *
				loom_insn_get(in, LOOM_F_MATMUL_KH) * loom_insn_get(in, LOOM_F_MATMUL_KW) *
				loom_insn_get(in, LOOM_F_MATMUL_OUT_H) * loom_insn_get(in, LOOM_F_MATMUL_OUT_W);
	}
	return e[LOOM_EVT_SP_RD] == ev->sp_rd && e[LOOM_EVT_SP_WR] == ev->sp_wr && e[LOOM_EVT_ACC_RD] == ev->acc_rd &&
	       e[LOOM_EVT_ACC_WR] == ev->acc_wr && e[LOOM_EVT_VEC_LINES] == ev->vec_lines &&
	       e[LOOM_EVT_RQ_VALUES] == ev->rq_values && macs == ev->macs;
}

/* a point of the sweep against a full compile for its configuration */
static void check_point(const sweep_spec *s, const sweep_prep *p, const sweep_point *pt, const loom_calib *cal)
{
	sweep_result r, f;
	if (sweep_eval(s, p, pt, &r)) {
		CHECK_FAIL("sweep_eval %s", pt->name);
		return;
	}
	/* the fast answer (the closed form's best rated tilings) near the timed one */
	sweep_spec fs = *s;
	fs.timed = 0;
	if (!sweep_eval(&fs, p, pt, &f)) {
		double e = r.cycles ? ((double)f.cycles - (double)r.cycles) / (double)r.cycles : 0;
		CHECK(f.status == r.status && fabs(e) <= SWEEP_FAST_MAX_ERR,
		      "%s %s: the closed form's total %" PRIu64 " within %.0f%% of the timed %" PRIu64 " (%+.2f%%)",
		      s->models[0].name, pt->name, f.cycles, 100 * SWEEP_FAST_MAX_ERR, r.cycles, 100 * e);
		sweep_result_free(&f);
	} else {
		CHECK_FAIL("sweep_eval %s (closed form)", pt->name);
	}
	char err[512];
	loom_compile_opts o = {.calib_dir = s->models[0].calib, .calib = cal};
	loom_model *m = NULL;
	loom_compile_report rep;
	loom_graph *g = load(s->models[0].name);
	if (!g || loom_compile(g, &pt->cfg, &o, &m, &rep, err, sizeof err)) {
		CHECK_FAIL("full compile for %s: %s", pt->name, err);
		sweep_result_free(&r);
		return;
	}
	if (r.status == SWEEP_FALLBACK) {
		int cpu = 0, nl = 0;
		for (int i = 0; i < r.nlayers; i++)
			if (!r.layers[i].npu) {
				nl++;
				cpu += rep.nodes[p->layers[i].k.node].where == LOOM_WHERE_CPU;
			}
		CHECK(nl && cpu == nl, "%s %s: %d layers without a tiling, their nodes on the CPU in the compile too "
				       "(%d): %s", s->models[0].name, pt->name, nl, cpu, r.reason);
		CHECK(r.cycles == rep.est_cycles && (uint32_t)(r.nlayers - nl) == m->nlayers,
		      "%s %s: the other %u layers as the compile's, total %" PRIu64 " = %" PRIu64, s->models[0].name,
		      pt->name, m->nlayers, r.cycles, rep.est_cycles);
	} else {
		int bad = 0, bad_ev = 0;
		uint64_t evsum = 0;
		CHECK((uint32_t)r.nlayers == m->nlayers, "%s %s: %d layers, the compile %u", s->models[0].name, pt->name,
		      r.nlayers, m->nlayers);
		for (uint32_t i = 0; i < m->nlayers && (int)i < r.nlayers; i++) {
			const loom_layer *L = &m->layers[i];
			const sweep_lres *l = &r.layers[i];
			uint64_t ld = moved(m, L, LOOM_OP_LOAD), st = moved(m, L, LOOM_OP_STORE);
			if (l->cycles != L->est_cycles || l->macs != L->macs || st != l->wr || ld != l->rd_in + l->rd_wgt) {
				if (!bad++)
					CHECK_FAIL("%s %s layer %u (%s): cycles %" PRIu64 " vs %" PRIu64 ", stores %" PRIu64
						   " vs %" PRIu64 ", loads %" PRIu64 " vs %" PRIu64,
						   s->models[0].name, pt->name, i, L->name, l->cycles, L->est_cycles, l->wr, st,
						   l->rd_in + l->rd_wgt, ld);
			}
			if (!same_events(&pt->cfg, m, L, &l->ev) && !bad_ev++)
				CHECK_FAIL("%s %s layer %u (%s): energy events SP %" PRIu64 "/%" PRIu64 " ACC %" PRIu64
					   "/%" PRIu64 " VEC %" PRIu64 " RQ %" PRIu64 " MACS %" PRIu64
					   " differ from its compiled instructions'",
					   s->models[0].name, pt->name, i, L->name, l->ev.sp_rd, l->ev.sp_wr, l->ev.acc_rd,
					   l->ev.acc_wr, l->ev.vec_lines, l->ev.rq_values, l->ev.macs);
			evsum += l->ev.sp_rd + l->ev.acc_wr + l->ev.vec_lines;
		}
		CHECK(!bad_ev && evsum > 0 && r.ev.sp_rd + r.ev.acc_wr + r.ev.vec_lines == evsum,
		      "%s %s: every layer's energy events as its compiled instructions', the point's their sum",
		      s->models[0].name, pt->name);
		CHECK(!bad && r.cycles == rep.est_cycles, "%s %s: every layer's estimate as the full compile's, its DRAM "
							 "reads and writes as its LOADs and STOREs, total %" PRIu64 " = %" PRIu64,
		      s->models[0].name, pt->name, r.cycles, rep.est_cycles);
	}
	sweep_result_free(&r);
	loom_model_free(m);
	loom_compile_report_free(&rep);
}

static void test_points_vs_compile(const char *name, const char *arrays, const char *spads)
{
	char dir[] = "/tmp/loom_test_sweep_dir_XXXXXX", err[512];
	if (!mkdtemp(dir)) {
		CHECK_FAIL("mkdtemp");
		return;
	}
	sweep_spec s;
	memset(&s, 0, sizeof s);
	s.nmodels = 1;
	snprintf(s.models[0].name, sizeof s.models[0].name, "%s", name);
	snprintf(s.models[0].path, sizeof s.models[0].path, "%s/%s/model.onnx", models, name);
	calib_dir(name, s.models[0].calib, sizeof s.models[0].calib);
	snprintf(s.base, sizeof s.base, "default");
	s.clock_mhz = 1000;
	s.percentile = 99.99;
	s.timed = 1; /* the compile's estimate; the closed form is held against it in check_point */
	sweep_prep p;
	sweep_point *pts = NULL;
	int n = 0;
	if (sweep_parse_axis(&s, SWEEP_ARRAY, arrays, err, sizeof err) ||
	    sweep_parse_axis(&s, SWEEP_SPAD, spads, err, sizeof err) ||
	    sweep_parse_axis(&s, SWEEP_LAT, "40,200", err, sizeof err) || sweep_model_keys(&s, err, sizeof err) ||
	    sweep_points(&s, &pts, &n, err, sizeof err) || sweep_prep_get(dir, &s, 0, 1, &p, err, sizeof err)) {
		CHECK_FAIL("%s: %s", name, err);
		free(pts);
		return;
	}
	CHECK(p.calib != NULL && p.nlayers > 0, "%s prepared once: %d layers, the calibration kept", name, p.nlayers);
	for (int i = 0; i < n; i++)
		check_point(&s, &p, &pts[i], p.calib);
	/* all at once (one group per array size and timing) = one by one */
	const sweep_point **all = malloc((size_t)n * sizeof *all);
	sweep_result *rs = calloc((size_t)n, sizeof *rs);
	int same = 1, k = 0;
	for (int i = 0; all && rs && i < n; i++) {
		int g = 0;
		for (int j = 0; j < n; j++)
			if (sweep_same_group(&pts[i].cfg, &pts[j].cfg))
				all[g++] = &pts[j];
		if (all[0] != &pts[i] || sweep_eval_n(&s, &p, all, g, rs))
			continue;
		for (int j = 0; j < g; j++) {
			sweep_result one;
			sweep_eval(&s, &p, all[j], &one);
			same &= one.cycles == rs[j].cycles && one.rd == rs[j].rd && one.wr == rs[j].wr &&
				one.sp_peak == rs[j].sp_peak && one.status == rs[j].status;
			for (int l = 0; l < one.nlayers; l++)
				same &= !memcmp(&one.layers[l], &rs[j].layers[l], sizeof one.layers[l]);
			sweep_result_free(&one);
			sweep_result_free(&rs[j]);
			k++;
		}
	}
	CHECK(same && k == n, "%s: sweep_eval_n of each group = sweep_eval of each point (%d points)", name, k);
	free(all);
	free(rs);
	free(pts);
	sweep_prep_free(&p);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		check_skip("rm -rf %s", dir);
}

/* loom_conv_plan_make_n against loom_conv_plan_make, configuration by configuration */
static void test_plan_n(void)
{
	static const char *const specs[] = {"sp_bytes=16384", "sp_bytes=65536", "default", "sp_bytes=1048576",
					    "acc_bytes=4096", "acc_bytes=262144,sp_bytes=524288", "dram_latency=300",
					    "dram_bw=4,sp_bytes=32768", "sp_banks=1,sp_bytes=65536", "sp_bytes=4096,acc_bytes=1024"};
	enum { N = sizeof specs / sizeof specs[0] };
	loom_hwcfg cfg[N];
	const loom_hwcfg *cp[N];
	char err[512];
	for (int i = 0; i < N; i++) {
		loom_hwcfg_load(&cfg[i], specs[i], NULL, err, sizeof err);
		cp[i] = &cfg[i];
	}
	static const uint32_t shapes[][6] = {
		/* h, w, cin, cout, k, stride */
		{56, 56, 64, 64, 3, 1}, {14, 14, 1024, 256, 1, 1}, {7, 7, 512, 2048, 1, 1},
		{224, 224, 3, 64, 7, 2}, {28, 28, 128, 128, 3, 2}, {1, 1, 2048, 1000, 1, 1},
	};
	int same = 1, fails = 0;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		loom_conv_params p;
		loom_conv_init(&p);
		p.h = shapes[s][0], p.w = shapes[s][1], p.cin = shapes[s][2], p.cout = shapes[s][3];
		p.kh = p.kw = shapes[s][4], p.sh = p.sw = shapes[s][5];
		p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = shapes[s][4] / 2;
		loom_conv_plan many[N], one;
		int rc[N];
		loom_conv_plan_make_n(cp, N, &p, many, rc, err, sizeof err);
		for (int i = 0; i < N; i++) {
			memset(&one, 0, sizeof one);
			int r1 = loom_conv_plan_make(cp[i], &p, &one, err, sizeof err);
			fails += r1 != 0;
			same &= r1 == rc[i] && (r1 || !memcmp(&one, &many[i], sizeof one));
		}
	}
	CHECK(same, "loom_conv_plan_make_n = loom_conv_plan_make for each of %d configurations (%d without a tiling)", N,
	      fails);
	CHECK(fails > 0, "some configurations without a tiling among them (%d)", fails);
}

static void test_grid(void)
{
	sweep_spec s;
	memset(&s, 0, sizeof s);
	snprintf(s.base, sizeof s.base, "default");
	s.clock_mhz = 1000;
	char err[512];
	static const struct {
		int axis;
		const char *v;
	} malformed[] = {{SWEEP_ARRAY, "16"}, {SWEEP_ARRAY, "16x"}, {SWEEP_ARRAY, "axb"}, {SWEEP_SPAD, "K"},
			 {SWEEP_SPAD, "64K,,1M"}, {SWEEP_GBPS, "8GB"}, {SWEEP_LAT, "4.5"}, {SWEEP_SPAD, ""}};
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
		err[0] = 0;
		int rc = sweep_parse_axis(&s, malformed[i].axis, malformed[i].v, err, sizeof err);
		CHECK(rc && strstr(err, sweep_axis_opt[malformed[i].axis]), "%s '%s' is malformed: %s",
		      sweep_axis_opt[malformed[i].axis], malformed[i].v, err);
	}
	memset(&s, 0, sizeof s);
	snprintf(s.base, sizeof s.base, "default");
	s.clock_mhz = 1000;
	sweep_point *pts = NULL;
	int n = 0;
	if (sweep_parse_axis(&s, SWEEP_ARRAY, "8x8,128x128,0x8", err, sizeof err) ||
	    sweep_parse_axis(&s, SWEEP_SPAD, "64K,64Q,-64K,65536", err, sizeof err) ||
	    sweep_parse_axis(&s, SWEEP_GBPS, "8,32", err, sizeof err) || sweep_points(&s, &pts, &n, err, sizeof err)) {
		CHECK_FAIL("grid: %s", err);
		return;
	}
	CHECK(n == 3 * 3 * 2, "3 x 3 x 2 points (64K and 65536 are one): %d", n);
	static const struct {
		const char *name, *reason;
	} want[] = {
		{"a8x8_sp64K_acc64K_bw8_lat40", NULL},
		{"a8x8_sp64Q_acc64K_bw8_lat40", "unknown size suffix 'Q'"},
		{"a8x8_sp-64K_acc64K_bw8_lat40", "must be positive"},
		{"a128x128_sp64K_acc64K_bw8_lat40", "array_rows = 128 is outside 4..64"},
		{"a0x8_sp64K_acc64K_bw8_lat40", "rows and columns must be positive"},
		{"a8x8_sp64K_acc64K_bw32_lat40", "more than one beat"},
	};
	for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
		int k = 0;
		while (k < n && strcmp(pts[k].name, want[w].name))
			k++;
		if (k == n) {
			CHECK_FAIL("no point %s", want[w].name);
			continue;
		}
		if (!want[w].reason)
			CHECK(pts[k].valid && pts[k].cfg.dram_bw == 8 && pts[k].cfg.sp_bytes == 65536 &&
				      !strncmp(pts[k].cfg.name, "custom-", 7),
			      "%s valid: 8 GB/s at 1000 MHz = dram_bw 8, %s", pts[k].name, pts[k].cfg.name);
		else
			CHECK(!pts[k].valid && strstr(pts[k].reason, want[w].reason), "%s invalid: %s", pts[k].name,
			      pts[k].reason);
	}
	free(pts);
}

int main(int argc, char **argv)
{
	check_init(CHECK_SKIPS);
	snprintf(models, sizeof models, "%s", argc > 1 ? argv[1] : "build/models");
	test_grid();
	test_plan_n();
	test_calib_reuse();
	test_plan_reuse();
	test_points_vs_compile("digits_cnn_opset13", "8x8,16x16,32x8", "4K,64K");
	/* "quick" (make test's sanitizer run): the digits CNN's points only;
	 * the plain run (and make test-full's sanitizer run) takes SqueezeNet's too */
	if (argc < 3 || strcmp(argv[2], "quick"))
		test_points_vs_compile("squeezenet1_1_opset13", "16x16,32x32", "4K,256K");
	return check_report();
}
