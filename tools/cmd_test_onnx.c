/* cmd_test_onnx.c - `loom test-onnx CASE_DIR... --backend ref`: runs ONNX
 * test-case folders (model.onnx + test_data_set_N/{input,output}_K.pb, the
 * layout of ONNX's backend tests and of Debian's libonnx-testdata) the way
 * ONNX Runtime's onnx_test_runner does: for every data set, load the
 * inputs, run the model, compare every output with the expected tensor
 * (floats within atol + rtol * |expected|, integers and booleans exactly).
 * Dynamic input dimensions are fixed from the data set's input tensors.
 * One line per case, then "N passed, M failed".
 *
 * --expect FILE names the cases that must pass (one case directory name
 * per line, '#' comments): the exit status is then non-zero only when one
 * of them fails, and the other cases are reported as coverage. Without it,
 * any failure is. Backends: ref (the float reference executor,
 * runtime/cpu.c); cmodel and rtl compile each case (compiler/compile.h,
 * calibrated on the case's own data sets), run it through libloom and the
 * firmware, and accept an output the NPU produced within QTOL of its
 * quantization steps besides atol + rtol. --per-op prints pass/fail counts
 * per operator. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/calib.h"
#include "compiler/compile.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "loom/hwcfg.h"
#include "ir/model.h"
#include "ir/ir.h"
#include "compiler/onnx.h"

#define PATHLEN 4096 /* a case folder's path; derived paths get room for their suffixes */

typedef struct tol {
	double atol, rtol;
} tol;

/* the NPU backends: one device for the whole run; per case, the model is
 * compiled with calibration on the case's own inputs */
#define QTOL 4.0 /* NPU tolerance: atol + QTOL * the output's quantization step */
typedef struct npu_ctx {
	const char *backend, *hw;
	loom_dev *dev;
	const char *keep_float; /* --keep-float for every compile */
	int calib_method;
	double percentile;
	double min_cos; /* > 0: an output passes on cosine similarity >= min_cos instead */
	double cos;    /* the last case's lowest cosine similarity */
	int on_npu;    /* the last case ran a node on the NPU */
	int npu_nodes; /* the last case's nodes on the NPU (incl. fused; the fewest of its data
			  sets), -1 while none compiled */
	char npu_ops[1024]; /* the op types the last case ran on the NPU: ",Conv,Relu," */
	double worst;  /* the last case's largest error in quantization steps */
} npu_ctx;

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *p)
{
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	const char *b = p + n;
	while (b > p && b[-1] != '/')
		b--;
	return b;
}

/* 0 if got matches want; else -1 with the first difference in err */
static int compare(const loom_tensor *got, const loom_tensor *want, tol tl, double qstep, double *worst, char *err,
		   size_t errlen)
{
	if (got->dtype != want->dtype) {
		snprintf(err, errlen, "output '%s': type %s, expected %s", want->name, loom_dtype_name(got->dtype),
			 loom_dtype_name(want->dtype));
		return -1;
	}
	int64_t ng = loom_tensor_numel(got), nw = loom_tensor_numel(want);
	int same_shape = got->rank == want->rank;
	for (int d = 0; same_shape && d < got->rank; d++)
		same_shape = got->dims[d] == want->dims[d];
	/* a scalar and a 1-element tensor are the same values */
	if (!same_shape && !(ng == 1 && nw == 1)) {
		char gs[128] = "", ws[128] = "";
		for (int d = 0; d < got->rank; d++)
			snprintf(gs + strlen(gs), sizeof gs - strlen(gs), "%s%lld", d ? "x" : "", (long long)got->dims[d]);
		for (int d = 0; d < want->rank; d++)
			snprintf(ws + strlen(ws), sizeof ws - strlen(ws), "%s%lld", d ? "x" : "", (long long)want->dims[d]);
		snprintf(err, errlen, "output '%s': shape [%s], expected [%s]", want->name, gs, ws);
		return -1;
	}
	if (!got->data && ng) {
		snprintf(err, errlen, "output '%s' was not computed", want->name);
		return -1;
	}
	int fp = want->dtype == LOOM_DT_FLOAT || want->dtype == LOOM_DT_DOUBLE;
	for (int64_t i = 0; i < nw; i++) {
		double g = tool_elem_f(got, i), w = tool_elem_f(want, i);
		int ok;
		if (!fp)
			ok = g == w;
		else if (isnan(w))
			ok = isnan(g);
		else if (isinf(w))
			ok = g == w;
		else
			ok = fabs(g - w) <= tl.atol + tl.rtol * fabs(w) + QTOL * qstep;
		if (qstep > 0 && worst && fp && isfinite(w) && fabs(g - w) / qstep > *worst)
			*worst = fabs(g - w) / qstep;
		if (!ok) {
			snprintf(err, errlen, "output '%s' element %lld: %.9g, expected %.9g%s", want->name, (long long)i,
				 g, w, qstep > 0 ? " (beyond the int8 tolerance)" : "");
			return -1;
		}
	}
	return 0;
}

/* ops whose inputs past the first are parameters (weights, bias, shapes, axes, bounds) */
static const char *const param_ops[] = {
	"Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "InstanceNormalization",
	"LayerNormalization", "PRelu", "Clip", "Pad", "Reshape", "Resize", "Upsample", "Slice", "Tile", "Expand",
	"Squeeze", "Unsqueeze", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
	"ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Split", "TopK", "OneHot", NULL,
};

/* Turn the graph inputs (with their data bound) that only feed parameter
 * positions of param_ops into constants; act[] gets the data set's other
 * inputs (shallow copies of in[]), in graph-input order. Returns their count. */
static int freeze_params(loom_graph *g, const loom_tensor *in, int nin, loom_tensor *act)
{
	int keep[TOOL_MAX_IO], nk = 0;
	for (int i = 0; i < g->ninputs; i++) {
		int t = g->inputs[i], param = 0, other = 0;
		for (int k = 0; k < g->nnodes; k++) {
			const loom_node *n = &g->nodes[k];
			int pop = 0;
			for (int j = 0; param_ops[j] && !pop; j++)
				pop = !strcmp(param_ops[j], n->op_type);
			for (int j = 0; j < n->ninputs; j++)
				if (n->inputs[j] == t) {
					if (pop && j > 0)
						param = 1;
					else
						other = 1;
				}
		}
		if (param && !other && g->tensors[t].data)
			g->tensors[t].is_const = 1;
		else
			keep[nk++] = t;
	}
	int na = 0;
	for (int i = 0; i < nk; i++) {
		int found = -1;
		for (int j = 0; j < nin && found < 0; j++)
			if (in[j].name && !strcmp(in[j].name, g->tensors[keep[i]].name))
				found = j;
		for (int j = 0; j < nin && found < 0; j++) /* unnamed: by position */
			if (g->inputs[j] == keep[i])
				found = j;
		if (found >= 0)
			act[na++] = in[found];
	}
	for (int i = 0; i < nk; i++)
		g->inputs[i] = keep[i];
	g->ninputs = nk;
	return na;
}

/* one data set of one case; 0 ok, -1 with a message */
static int run_set(const char *model, const char *set, tol tl, npu_ctx *npu, char *err, size_t errlen)
{
	loom_tensor in[TOOL_MAX_IO], want[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	memset(want, 0, sizeof want);
	int nin = tool_load_tensors(set, "input", in, err, errlen);
	if (nin < 0)
		return -1;
	int nout = tool_load_tensors(set, "output", want, err, errlen);
	if (nout < 0) {
		for (int i = 0; i < nin; i++)
			loom_tensor_clear(&in[i]);
		return -1;
	}
	int rc = -1;
	loom_graph *g = NULL;
	loom_model *m = NULL;
	loom_exec *ex = NULL;
	/* fix dynamic dims from the data set's named inputs */
	loom_input_shape shp[TOOL_MAX_IO];
	int nshp = 0;
	for (int i = 0; i < nin; i++) {
		if (!in[i].name || !in[i].name[0] || strlen(in[i].name) >= LOOM_INPUT_NAME_MAX)
			continue;
		memset(&shp[nshp], 0, sizeof shp[nshp]);
		snprintf(shp[nshp].name, sizeof shp[nshp].name, "%s", in[i].name);
		shp[nshp].rank = in[i].rank;
		memcpy(shp[nshp].dims, in[i].dims, sizeof in[i].dims);
		nshp++;
	}
	if (loom_onnx_load(model, NULL, 0, &g, err, errlen) && (!nshp || loom_onnx_load(model, shp, nshp, &g, err, errlen)))
		goto out;
	if (tool_bind_inputs(g, in, nin, set, TOOL_BIND_SHAPE, err, errlen))
		goto out;
	if (!npu) {
		if (loom_ref_run(g, err, errlen))
			goto out;
	} else {
		/* parameters given as graph inputs (Conv's W, Gemm's B, ...) become
		 * constants of this data set; the model is compiled for it,
		 * calibrated on its own inputs */
		loom_tensor act[TOOL_MAX_IO];
		int nact = freeze_params(g, in, nin, act);
		loom_compile_opts co = {.calib_inputs = act, .calib_ninputs = nact, .source = model,
					.keep_float = npu->keep_float, .calib_method = npu->calib_method,
					.percentile = npu->percentile};
		loom_compile_report rep;
		loom_graph *cg = g;
		g = NULL;
		if (loom_compile(cg, loom_dev_config(npu->dev), &co, &m, &rep, err, errlen))
			goto out;
		npu->on_npu = m->nlayers > 0;
		if (npu->npu_nodes < 0 || rep.nodes_npu < npu->npu_nodes)
			npu->npu_nodes = rep.nodes_npu;
		for (int k = 0; k < rep.nnodes; k++) {
			char key[48];
			snprintf(key, sizeof key, "%s,", rep.nodes[k].op_type);
			size_t used = strlen(npu->npu_ops);
			if (rep.nodes[k].where != LOOM_WHERE_CPU && !strstr(npu->npu_ops, key) &&
			    used + strlen(key) < sizeof npu->npu_ops)
				snprintf(npu->npu_ops + used, sizeof npu->npu_ops - used, "%s", key);
		}
		loom_compile_report_free(&rep);
		g = m->graph;
		if (tool_bind_inputs(g, act, nact, set, TOOL_BIND_QUIET, err, errlen) || loom_exec_new(npu->dev, m, &ex, err, errlen) ||
		    loom_exec_run(ex, err, errlen))
			goto out;
	}
	if (nout != g->noutputs) {
		snprintf(err, errlen, "%s: %d output files for %d graph outputs", set, nout, g->noutputs);
		goto out;
	}
	for (int i = 0; i < nout; i++) {
		int t = g->outputs[i];
		/* an output the NPU computed, or one computed from NPU results,
		 * may be off by QTOL of its int8 steps */
		double q = m && m->nlayers && m->mt[t].scale > 0 ? m->mt[t].scale : 0;
		if (npu && npu->min_cos > 0) {
			tool_metrics_t mt;
			tool_metrics(&g->tensors[t], &want[i], &mt);
			if (mt.cos < npu->cos)
				npu->cos = mt.cos;
			if (!(mt.cos >= npu->min_cos)) {
				snprintf(err, errlen, "output '%s': cosine similarity %.6f < %g (max abs error %.6g)",
					 want[i].name, mt.cos, npu->min_cos, mt.max_abs);
				goto out;
			}
			continue;
		}
		if (compare(&g->tensors[t], &want[i], tl, q, npu ? &npu->worst : NULL, err, errlen))
			goto out;
	}
	rc = 0;
out:
	loom_exec_free(ex);
	if (m)
		loom_model_free(m);
	else
		loom_graph_free(g);
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	for (int i = 0; i < nout; i++)
		loom_tensor_clear(&want[i]);
	return rc;
}

/* one case folder: every test_data_set_N; 0 ok (*nsets set), -1 */
static int run_case(const char *dir, tol tl, npu_ctx *npu, int *nsets, char *err, size_t errlen)
{
	char model[PATHLEN + 32];
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	if (!file_exists(model)) {
		snprintf(err, errlen, "%s: no model.onnx", dir);
		return -1;
	}
	*nsets = 0;
	for (int k = 0;; k++) {
		char set[PATHLEN + 64];
		snprintf(set, sizeof set, "%s/test_data_set_%d", dir, k);
		if (!is_dir(set))
			break;
		if (run_set(model, set, tl, npu, err, errlen))
			return -1;
		(*nsets)++;
	}
	if (!*nsets) {
		snprintf(err, errlen, "%s: no test_data_set_0", dir);
		return -1;
	}
	return 0;
}

/* the case names of an --expect file; count or -1 */
static int read_expect(const char *path, char ***names)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[1024];
	int n = 0, cap = 0;
	*names = NULL;
	while (fgets(line, sizeof line, f)) {
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		char *s = line, *e;
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = 0;
		if (!*s)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			char **nn = realloc(*names, cap * sizeof *nn);
			if (!nn)
				break;
			*names = nn;
		}
		(*names)[n++] = strdup(s);
	}
	fclose(f);
	return n;
}

/* per-operator counts: every op type of a case's model counts the case;
 * "on NPU": the case passed with a node of that type lowered to the NPU */
#define MAX_OPS 256
typedef struct opstat {
	char op[48];
	int pass, fail, npu;
} opstat;

static void count_ops(const char *dir, opstat *ops, int *nops, int ok, const char *npu_ops)
{
	char model[PATHLEN + 32], err[256];
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	loom_graph *g = NULL;
	const char *types[64];
	int nt = 0;
	if (loom_onnx_load(model, NULL, 0, &g, err, sizeof err)) {
		types[nt++] = "(not loaded)";
	} else {
		for (int i = 0; i < g->nnodes && nt < 64; i++) {
			int seen = 0;
			for (int k = 0; k < nt && !seen; k++)
				seen = !strcmp(types[k], g->nodes[i].op_type);
			if (!seen)
				types[nt++] = g->nodes[i].op_type;
		}
	}
	for (int k = 0; k < nt; k++) {
		int j = 0;
		while (j < *nops && strcmp(ops[j].op, types[k]))
			j++;
		if (j == *nops) {
			if (*nops == MAX_OPS)
				continue;
			memset(&ops[j], 0, sizeof ops[j]);
			snprintf(ops[j].op, sizeof ops[j].op, "%s", types[k]);
			(*nops)++;
		}
		ops[j].pass += ok;
		ops[j].fail += !ok;
		char key[64];
		snprintf(key, sizeof key, ",%s,", types[k]);
		ops[j].npu += ok && strstr(npu_ops, key) != NULL;
	}
	loom_graph_free(g);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: loom test-onnx CASE_DIR... [--backend ref|cmodel|rtl|systemc] [--hw CFG] [--expect FILE]\n"
		   "                 [--atol A] [--rtol R] [--per-op] [-q]\n"
		   "  runs ONNX test-case folders (model.onnx + test_data_set_N/) and compares every\n"
		   "  output; a CASE_DIR holding no model.onnx but case folders runs all of them.\n"
		   "  cmodel, rtl, systemc: each case is compiled (calibrated on its own inputs) and run on the\n"
		   "                 NPU; an output from the NPU may also differ by 4 quantization steps\n"
		   "  --per-op       pass/fail counts per operator (every op type in a case's model)\n"
		   "  --keep-float N,...  cmodel, rtl: nodes kept in float on the CPU\n"
		   "  --min-cos C    cmodel, rtl: compare outputs by cosine similarity >= C instead\n"
		   "                 (whole models)\n"
		   "  --expect FILE  the cases that must pass (others are coverage only)\n"
		   "  --placement FILE  cmodel, rtl: per case the number of nodes that must run on the\n"
		   "                 NPU ('CASE N' lines); fewer fails (a fallback to the CPU), more or\n"
		   "                 a case not listed with NPU nodes fails as a stale list\n"
		   "  --write-placement FILE  cmodel, rtl: write that list from this run\n"
		   "  --calib-method minmax|percentile|mse|entropy, --percentile P  calibration\n"
		   "  --atol, --rtol float tolerances (default 1e-5, 1e-3)\n"
		   "  -q             print only failures of expected cases and the summary\n"
		   "Ends with \"N passed, M failed\"; exit status 1 when a case that must pass failed.\n");
}

/* the options of loom test-onnx */
typedef struct test_opts {
	const char *backend, *expect, *hw;
	const char *placement, *write_placement; /* --placement FILE, --write-placement FILE */
	tol tl;
	int quiet, per_op;
	double min_cos;
	const char *keep_float;
	int calib_method;
	double percentile;
	char **dirs; /* the CASE_DIRs (room for argc) */
	int ndirs;
} test_opts;

/* argv into *o, whose dirs has room for argc entries: -1 to go on, else
 * the exit status (0 after --help, 2 after an unknown option) */
static int parse_args(int argc, char **argv, test_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--backend") && i + 1 < argc) {
			o->backend = argv[++i];
		} else if (!strcmp(a, "--hw") && i + 1 < argc) {
			o->hw = argv[++i];
		} else if (!strcmp(a, "--expect") && i + 1 < argc) {
			o->expect = argv[++i];
		} else if (!strcmp(a, "--placement") && i + 1 < argc) {
			o->placement = argv[++i];
		} else if (!strcmp(a, "--write-placement") && i + 1 < argc) {
			o->write_placement = argv[++i];
		} else if (!strcmp(a, "--atol") && i + 1 < argc) {
			o->tl.atol = atof(argv[++i]);
		} else if (!strcmp(a, "--rtol") && i + 1 < argc) {
			o->tl.rtol = atof(argv[++i]);
		} else if (!strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--calib-method") && i + 1 < argc) {
			const char *v = argv[++i];
			o->calib_method = loom_calib_method_of(v);
			if (o->calib_method < 0) {
				fprintf(stderr, "loom test-onnx: --calib-method %s: minmax, percentile, mse or entropy\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--percentile") && i + 1 < argc) {
			o->percentile = atof(argv[++i]);
		} else if (!strcmp(a, "--keep-float") && i + 1 < argc) {
			o->keep_float = argv[++i];
		} else if (!strcmp(a, "--min-cos") && i + 1 < argc) {
			o->min_cos = atof(argv[++i]);
		} else if (!strcmp(a, "--per-op")) {
			o->per_op = 1;
		} else if (a[0] == '-') {
			fprintf(stderr, "loom test-onnx: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else {
			o->dirs[o->ndirs++] = argv[i];
		}
	}
	return -1;
}

/* a run over the case folders: its options, device, expectations and counts */
typedef struct test_run {
	const test_opts *o;
	npu_ctx *npu;
	char **exp; /* the case names of --expect */
	int nexp;
	opstat ops[MAX_OPS];
	int nops;
	int pass, fail, exp_fail, exp_seen, exp_pass;
	char **pl;  /* --placement: case names and their NPU node counts */
	int *pl_n, npl;
	char **wr;  /* what --write-placement writes: cases with NPU nodes */
	int *wr_n, nwr, wr_cap;
	int on_npu, cpu_only, exp_on_npu, exp_cpu_only; /* compiled cases; those of --expect that passed */
	int counting;       /* test_dir only counts the case folders (for the progress bar) */
	long ncases, ndone;
	tool_progress pg;
} test_run;

/* a --placement file: "CASE N" lines ('#' comments) into r->pl, r->pl_n;
 * 0, or -1 after a message naming the file and line */
static int read_placement(const char *path, test_run *r)
{
	char **lines = NULL;
	int n = read_expect(path, &lines);
	if (n < 0) {
		fprintf(stderr, "loom test-onnx: --placement %s: cannot read\n", path);
		return -1;
	}
	r->pl = calloc((size_t)n + 1, sizeof *r->pl);
	r->pl_n = calloc((size_t)n + 1, sizeof *r->pl_n);
	int rc = r->pl && r->pl_n ? 0 : -1;
	for (int k = 0; k < n; k++) {
		char name[1024], extra[8];
		int cnt;
		if (!rc && (sscanf(lines[k], "%1023s %d %7s", name, &cnt, extra) != 2 || cnt <= 0)) {
			fprintf(stderr, "loom test-onnx: --placement %s: '%s': expected 'CASE N' with N > 0 nodes on the NPU\n",
				path, lines[k]);
			rc = -1;
		} else if (!rc) {
			r->pl[r->npl] = strdup(name);
			r->pl_n[r->npl++] = cnt;
		}
		free(lines[k]);
	}
	free(lines);
	return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --write-placement: the cases with NPU nodes of this run, by name; 0 or -1 */
static int write_placement(const test_run *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "loom test-onnx: --write-placement %s: cannot create\n", path);
		return -1;
	}
	fprintf(f, "# Per ONNX test case, the number of its nodes (after simplification, fused ones\n"
		   "# included) that run on the NPU, from the compile report: loom test-onnx\n"
		   "# --placement fails a case with fewer (a fallback to the CPU) or more (a stale\n"
		   "# list); a case not listed must run on the CPU only. Written by\n"
		   "# loom test-onnx ... --backend %s --write-placement: %d cases put nodes on the NPU,\n"
		   "# %d ran only on the CPU.\n", r->o->backend, r->on_npu, r->cpu_only);
	char **names = malloc(((size_t)r->nwr + 1) * sizeof *names);
	for (int k = 0; names && k < r->nwr; k++)
		names[k] = r->wr[k];
	if (names)
		qsort(names, (size_t)r->nwr, sizeof *names, cmp_str);
	for (int k = 0; names && k < r->nwr; k++)
		for (int j = 0; j < r->nwr; j++)
			if (r->wr[j] == names[k])
				fprintf(f, "%s %d\n", names[k], r->wr_n[j]);
	int bad = !names;
	free(names);
	if (fclose(f) || bad) {
		fprintf(stderr, "loom test-onnx: --write-placement %s: write error\n", path);
		return -1;
	}
	return 0;
}

/* a case's NPU node count against --placement (and kept for
 * --write-placement): 0, or -1 with the message, before any earlier error
 * of the case, in err */
static int placement(test_run *r, const char *name, int counted, char *err, size_t len)
{
	int got = r->npu->npu_nodes, want = 0;
	if (got >= 0) {
		r->on_npu += got > 0;
		r->cpu_only += got == 0;
		r->exp_on_npu += counted && got > 0;
		r->exp_cpu_only += counted && got == 0;
	}
	if (got > 0 && r->o->write_placement) {
		if (r->nwr == r->wr_cap) {
			int cap = r->wr_cap ? 2 * r->wr_cap : 256;
			char **w = realloc(r->wr, (size_t)cap * sizeof *w);
			int *n = w ? realloc(r->wr_n, (size_t)cap * sizeof *n) : NULL;
			if (w)
				r->wr = w;
			if (n)
				r->wr_n = n, r->wr_cap = cap;
		}
		if (r->nwr < r->wr_cap && (r->wr[r->nwr] = strdup(name)))
			r->wr_n[r->nwr++] = got;
	}
	if (!r->o->placement)
		return 0;
	for (int k = 0; k < r->npl; k++)
		if (!strcmp(r->pl[k], name))
			want = r->pl_n[k];
	if (got == want || (got < 0 && want == 0))
		return 0;
	char was[1024];
	snprintf(was, sizeof was, "%s", err);
	if (got < 0)
		snprintf(err, len, "placement: %s lists %d nodes on the NPU, the case did not compile: %.600s",
			 r->o->placement, want, was);
	else if (got < want)
		snprintf(err, len, "placement: %d nodes on the NPU, %s lists %d: nodes fell back to the CPU", got,
			 r->o->placement, want);
	else
		snprintf(err, len, "placement: %d nodes on the NPU, %s lists %d%s: the list is stale (regenerate it with "
				   "--write-placement)", got, r->o->placement, want, want ? "" : " (not listed)");
	return -1;
}

/* one case folder: run it, count it, print its line */
static void test_case(test_run *r, const char *cdir)
{
	const test_opts *o = r->o;
	npu_ctx *npu = r->npu;
	const char *name = base_name(cdir);
	int must = !o->expect;
	for (int k = 0; k < r->nexp && !must; k++)
		must = !strcmp(r->exp[k], name);
	r->exp_seen += o->expect && must;
	char err[1024] = "";
	int nsets = 0;
	npu->on_npu = 0;
	snprintf(npu->npu_ops, sizeof npu->npu_ops, ",");
	npu->worst = 0;
	npu->cos = 1;
	npu->npu_nodes = -1;
	int ok = run_case(cdir, o->tl, npu->dev ? npu : NULL, &nsets, err, sizeof err) == 0;
	count_ops(cdir, r->ops, &r->nops, ok, npu->npu_ops);
	if (npu->dev && placement(r, name, ok && must, err, sizeof err)) {
		ok = 0;
		must = 1;
	}
	tool_progress_clear(&r->pg);
	if (ok) {
		r->pass++;
		r->exp_pass += must;
		if (!o->quiet && npu->dev && npu->min_cos > 0)
			printf("ok   %s (%d data set%s, %s, cosine similarity %.6f)\n", name, nsets, nsets == 1 ? "" : "s",
			       npu->on_npu ? "NPU" : "CPU only", npu->cos);
		else if (!o->quiet && npu->dev)
			printf("ok   %s (%d data set%s, %s, worst %.2f quantization steps)\n", name, nsets,
			       nsets == 1 ? "" : "s", npu->on_npu ? "NPU" : "CPU only", npu->worst);
		else if (!o->quiet)
			printf("ok   %s (%d data set%s)\n", name, nsets, nsets == 1 ? "" : "s");
	} else {
		r->fail++;
		r->exp_fail += must;
		if (!o->quiet || must)
			printf("%s %s: %s\n", must ? "FAIL" : "skip", name, err);
	}
	fflush(stdout);
	tool_progress_update(&r->pg, ++r->ndone);
}

/* a CASE_DIR: one case folder, or a folder of them (in name order) */
static void test_dir(test_run *r, const char *dir)
{
	char model[PATHLEN + 32];
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	struct dirent **ents = NULL;
	int nents = 0;
	if (!file_exists(model)) {
		nents = scandir(dir, &ents, NULL, alphasort);
		if (nents < 0) {
			if (!r->counting) {
				printf("FAIL %s: not a test case or a folder of them\n", dir);
				r->fail++;
			}
			return;
		}
	}
	for (int e = -1; e < nents; e++) {
		char cdir[PATHLEN];
		if (nents == 0 && e == -1)
			snprintf(cdir, sizeof cdir, "%s", dir);
		else if (e < 0 || ents[e]->d_name[0] == '.')
			continue;
		else
			snprintf(cdir, sizeof cdir, "%s/%s", dir, ents[e]->d_name);
		if (nents > 0 && !is_dir(cdir))
			continue;
		if (r->counting)
			r->ncases++;
		else
			test_case(r, cdir);
	}
	for (int e = 0; e < nents; e++)
		free(ents[e]);
	free(ents);
}

/* the per-operator table (--per-op) and the summary; the exit status */
static int report(const test_run *r, int have_dev)
{
	const test_opts *o = r->o;
	if (o->per_op) {
		printf("%-26s %6s %6s %6s\n", "operator", "pass", "fail", have_dev ? "on NPU" : "");
		for (int k = 0; k < r->nops; k++) {
			if (have_dev)
				printf("%-26s %6d %6d %6d\n", r->ops[k].op, r->ops[k].pass, r->ops[k].fail, r->ops[k].npu);
			else
				printf("%-26s %6d %6d\n", r->ops[k].op, r->ops[k].pass, r->ops[k].fail);
		}
	}
	if (have_dev) {
		printf("placement: %d cases put nodes on the NPU, %d ran only on the CPU", r->on_npu, r->cpu_only);
		if (o->expect)
			printf("; of the %d cases of %s that passed, %d on the NPU, %d CPU only", r->exp_pass, o->expect,
			       r->exp_on_npu, r->exp_cpu_only);
		printf("\n");
	}
	if (o->expect) {
		printf("coverage: %d of %d cases pass on %s\n", r->pass, r->pass + r->fail, o->backend);
		printf("%d passed, %d failed\n", r->exp_pass, r->exp_fail);
	} else {
		printf("%d passed, %d failed\n", r->pass, r->fail);
	}
	return r->exp_fail || (!o->expect && r->fail) ? 1 : 0;
}

int cmd_test_onnx(int argc, char **argv)
{
	test_opts o = {.backend = "ref", .hw = "default", .tl = {1e-5, 1e-3}, .percentile = 99.99};
	o.dirs = calloc((size_t)argc, sizeof *o.dirs);
	if (!o.dirs)
		return 2;
	int st = parse_args(argc, argv, &o);
	if (st >= 0) {
		free(o.dirs);
		return st;
	}
	npu_ctx npu = {.backend = o.backend, .hw = o.hw, .min_cos = o.min_cos, .keep_float = o.keep_float,
		       .calib_method = o.calib_method, .percentile = o.percentile};
	loom_hwcfg cfg;
	if (tool_check_backend("test-onnx", o.backend, "ref|cmodel|rtl|systemc") || tool_load_hw("test-onnx", o.hw, &cfg)) {
		free(o.dirs);
		return 2;
	}
	if (strcmp(o.backend, "ref")) {
		char e2[1024];
		if (tool_dev_open(o.backend, o.hw, &npu.dev, e2, sizeof e2)) {
			fprintf(stderr, "loom test-onnx: %s backend: %s\n", o.backend, e2);
			free(o.dirs);
			return 2;
		}
	}
	if (!o.ndirs) {
		usage(stderr);
		free(o.dirs);
		return 2;
	}
	test_run r = {.o = &o, .npu = &npu};
	int rc = 2;
	if ((o.placement || o.write_placement) && !npu.dev) {
		fprintf(stderr, "loom test-onnx: --placement and --write-placement need --backend cmodel, rtl or systemc\n");
		goto out;
	}
	if (o.expect && (r.nexp = read_expect(o.expect, &r.exp)) < 0) {
		fprintf(stderr, "loom test-onnx: %s: cannot read\n", o.expect);
		goto out;
	}
	if (o.placement && read_placement(o.placement, &r))
		goto out;
	r.counting = 1;
	for (int d = 0; d < o.ndirs; d++)
		test_dir(&r, o.dirs[d]);
	r.counting = 0;
	tool_progress_start(&r.pg, "test-onnx", r.ncases);
	for (int d = 0; d < o.ndirs; d++)
		test_dir(&r, o.dirs[d]);
	tool_progress_end(&r.pg);
	if (o.expect && r.exp_seen < r.nexp) {
		printf("FAIL %d of the %d expected cases were not found\n", r.nexp - r.exp_seen, r.nexp);
		r.exp_fail += r.nexp - r.exp_seen;
	}
	rc = report(&r, npu.dev != NULL);
	if (o.write_placement && write_placement(&r, o.write_placement))
		rc = 2;
out:
	for (int k = 0; k < r.nexp; k++)
		free(r.exp[k]);
	for (int k = 0; k < r.npl; k++)
		free(r.pl[k]);
	for (int k = 0; k < r.nwr; k++)
		free(r.wr[k]);
	free(r.exp);
	free(r.pl);
	free(r.pl_n);
	free(r.wr);
	free(r.wr_n);
	free(o.dirs);
	loom_close(npu.dev);
	return rc;
}

/* loom run MODEL.onnx on cmodel or rtl: the --data inputs checked against
 * the graph (bad input: exit 2), then compiled (calibrating on --calib
 * DIR, else on the --data inputs, else random inputs, with a warning on
 * stderr) into a temporary .loom and run as `loom run MODEL.loom` does.
 * Takes g. */
static int run_onnx_npu(const char *model, loom_graph *g, const loom_hwcfg *cfg, const char *backend,
			const char *data, const char *calib, int check)
{
	char err[1024];
	loom_tensor in[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	int nin = data ? tool_load_tensors(data, "input", in, err, sizeof err) : 0;
	int bad = nin < 0 || (data && tool_check_inputs(g, in, nin, data, err, sizeof err));
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	if (bad) {
		fprintf(stderr, "loom run: %s\n", err);
		loom_graph_free(g);
		return 2;
	}
	loom_model *m = NULL;
	loom_compile_report rep;
	loom_compile_opts co = {.calib_dir = calib ? calib : data, .source = model};
	if (loom_compile(g, cfg, &co, &m, &rep, err, sizeof err)) {
		fprintf(stderr, "loom run: %s: %s\n", model, err);
		return 1;
	}
	tool_warn_calib(model, &rep);
	loom_compile_report_free(&rep);
	char tmp[] = "/tmp/loom-run-XXXXXX.loom";
	int fd = mkstemps(tmp, 5);
	if (fd < 0 || (close(fd), loom_model_write(m, tmp, err, sizeof err))) {
		fprintf(stderr, "loom run: %s: %s\n", tmp, fd < 0 ? "cannot create" : err);
		loom_model_free(m);
		if (fd >= 0)
			remove(tmp);
		return 1;
	}
	loom_model_free(m);
	char *av[8];
	int ac = 0;
	av[ac++] = "run";
	av[ac++] = tmp;
	av[ac++] = "--backend";
	av[ac++] = (char *)backend;
	if (data) {
		av[ac++] = "--data";
		av[ac++] = (char *)data;
	}
	if (check)
		av[ac++] = "--check";
	av[ac] = NULL;
	int rc = cmd_run_model(ac, av);
	remove(tmp);
	return rc;
}

/* ---- loom run MODEL.onnx --backend ref|cmodel|rtl|systemc ----
 * ref: runs the model's float graph on the reference executor: inputs from
 * --data DIR (input_K.pb, a test_data_set_N folder), or zeros; prints every
 * output's shape and first values; --check compares with DIR's
 * output_K.pb like test-onnx. cmodel, rtl: compiles the model first (like
 * loom compile, into a temporary file) and runs it like loom run MODEL.loom. */
int cmd_run_onnx(int argc, char **argv)
{
	const char *model = NULL, *data = NULL, *backend = "ref", *calib = NULL, *hw = "default";
	int check = 0;
	loom_input_shape shp[TOOL_MAX_IO];
	int nshp = 0;
	tol tl = {1e-5, 1e-3};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--backend") && i + 1 < argc) {
			backend = argv[++i];
		} else if (!strcmp(a, "--data") && i + 1 < argc) {
			data = argv[++i];
		} else if (!strcmp(a, "--check")) {
			check = 1;
		} else if (!strcmp(a, "--calib") && i + 1 < argc) {
			calib = argv[++i];
		} else if (!strcmp(a, "--hw") && i + 1 < argc) {
			hw = argv[++i];
		} else if (!strcmp(a, "--input-shape") && i + 1 < argc && nshp < TOOL_MAX_IO) {
			char err[512];
			if (loom_parse_input_shape(argv[++i], &shp[nshp], err, sizeof err)) {
				fprintf(stderr, "loom run: --input-shape: %s\n", err);
				return 2;
			}
			nshp++;
		} else if (a[0] != '-' && !model) {
			model = a;
		} else {
			fprintf(stderr, "usage: loom run MODEL.onnx [--backend ref|cmodel|rtl|systemc] [--data DIR [--check]] "
					"[--input-shape NAME=D0xD1x...]... [--hw CFG] [--calib DIR]\n");
			return 2;
		}
	}
	char err[1024];
	loom_hwcfg cfg;
	if (tool_check_backend("run", backend, "ref|cmodel|rtl|systemc") || tool_load_hw("run", hw, &cfg))
		return 2;
	if (strcmp(backend, "ref")) {
		loom_graph *g = NULL;
		if (loom_onnx_load(model, nshp ? shp : NULL, nshp, &g, err, sizeof err)) {
			fprintf(stderr, "loom run: %s\n", err);
			return 1;
		}
		return run_onnx_npu(model, g, &cfg, backend, data, calib, check);
	}
	if (check && !data) {
		fprintf(stderr, "loom run: --check needs --data DIR\n");
		return 2;
	}
	if (check) {
		if (run_set(model, data, tl, NULL, err, sizeof err)) {
			printf("FAIL %s: %s\n", model, err);
			return 1;
		}
		printf("ok   %s: every output within atol %g + rtol %g of %s\n", model, tl.atol, tl.rtol, data);
		return 0;
	}
	loom_graph *g = NULL;
	if (loom_onnx_load(model, nshp ? shp : NULL, nshp, &g, err, sizeof err)) {
		fprintf(stderr, "loom run: %s\n", err);
		return 1;
	}
	loom_tensor in[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	int nin = 0, rc = 1;
	if (data && (nin = tool_load_tensors(data, "input", in, err, sizeof err)) < 0) {
		fprintf(stderr, "loom run: %s\n", err);
		rc = 2;
		goto out;
	}
	if (data && tool_bind_inputs(g, in, nin, data, 0, err, sizeof err)) {
		fprintf(stderr, "loom run: %s\n", err);
		rc = 2;
		goto out;
	}
	for (int i = 0; !data && i < g->ninputs; i++) { /* no --data: zeros */
		loom_tensor *t = &g->tensors[g->inputs[i]];
		size_t nb = loom_tensor_bytes(t);
		void *z = calloc(1, nb ? nb : 1);
		if (loom_tensor_set_data(t, z, nb)) {
			free(z);
			fprintf(stderr, "loom run: out of memory\n");
			goto out;
		}
		free(z);
	}
	if (loom_ref_run(g, err, sizeof err)) {
		fprintf(stderr, "loom run: %s\n", err);
		goto out;
	}
	tool_print_outputs(g);
	rc = 0;
out:
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	loom_graph_free(g);
	return rc;
}
