/* cmd_eval.c - `loom eval MODEL.onnx --data DIR --labels FILE`: the main job
 * (make run). Evaluates a classifier on a labelled data set the way a user
 * judges an NPU: the float model on the reference executor, the same model
 * compiled to int8 (calibrated on --calib DIR) and run through libloom and
 * the firmware on a backend (the RTL by default), and, with --compare, on a
 * second backend whose outputs must be byte-identical. Prints float and int8
 * top-1 accuracy, how many outputs agree byte for byte between the two
 * backends, the per-layer profile summed over the data set with the three
 * costliest layers marked, cycles per inference and the latency at the
 * nominal clock, and the simulation's speed. --min-accuracy A,
 * --min-agreement A (the share of rows whose int8 class is the float
 * model's) and --min-npu-macs F (the share of the model's MACs the NPU must
 * run) make it a test. --calib-method, --equalize, --bias-correction and
 * --accuracy COS compile as loom compile does with them.
 *
 * DIR holds test_data_set_N folders (input_K.pb, ONNX test-data layout; a
 * set may be a batch); FILE holds one class index per line, one per row of
 * the model's first output, over the sets in order. Exit status: 0; 1 when
 * a run fails, the int8 accuracy is below --min-accuracy or, with
 * --compare, an output differs; 2 on a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "compiler/compile.h"
#include "compiler/onnx.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"

#define MAX_SETS 4096

typedef struct eval_opts {
	const char *model, *data, *labels, *calib, *hw, *backend, *compare, *method;
	double clock_mhz, min_accuracy, min_agreement, min_npu_macs, accuracy;
	int limit, profile, equalize, bias_correction;
} eval_opts;

/* what one backend accumulates over the data set */
typedef struct side {
	const char *backend;
	loom_dev *dev;
	loom_exec *ex;
	int correct, agree;        /* top-1 against the labels, against the float model */
	uint64_t cycles;           /* device cycles, every run */
	double wall;               /* host seconds in NPU jobs (the simulation) */
	loom_layer_prof *layers;   /* summed over the runs */
} side;

static void usage(FILE *f)
{
	fprintf(f, "usage: loom eval MODEL.onnx --data DIR --labels FILE [--calib DIR] [--hw CONFIG]\n"
		   "                 [--backend rtl|cmodel|systemc] [--compare rtl|cmodel|systemc] [--clock-mhz F]\n"
		   "                 [--limit N] [--min-accuracy A] [--min-agreement A] [--min-npu-macs F]\n"
		   "                 [--calib-method minmax|percentile|mse|entropy] [--equalize] [--bias-correction]\n"
		   "                 [--accuracy COS] [--profile]\n"
		   "  DIR: test_data_set_N folders (input_K.pb); FILE: one class per line, one per\n"
		   "  row of the first output, over the sets in order. The float model runs on the\n"
		   "  reference executor, the int8 model (calibrated on --calib DIR) on the backend\n"
		   "  (default rtl) and, with --compare, on a second backend: outputs byte for byte.\n");
}

static int parse_args(int argc, char **argv, eval_opts *o)
{
	memset(o, 0, sizeof *o);
	o->hw = "default";
	o->backend = "rtl";
	o->clock_mhz = 1000;
	o->min_accuracy = -1;
	o->min_agreement = -1;
	o->method = "minmax";
	o->min_npu_macs = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **str = !strcmp(a, "--data")      ? &o->data
				   : !strcmp(a, "--labels")  ? &o->labels
				   : !strcmp(a, "--calib")   ? &o->calib
				   : !strcmp(a, "--hw")      ? &o->hw
				   : !strcmp(a, "--backend") ? &o->backend
				   : !strcmp(a, "--compare") ? &o->compare
				   : !strcmp(a, "--calib-method") ? &o->method
							     : NULL;
		if (str && v) {
			*str = v;
			i++;
		} else if (!strcmp(a, "--clock-mhz") && v) {
			o->clock_mhz = atof(argv[++i]);
		} else if (!strcmp(a, "--min-accuracy") && v) {
			o->min_accuracy = atof(argv[++i]);
		} else if (!strcmp(a, "--min-agreement") && v) {
			o->min_agreement = atof(argv[++i]);
		} else if (!strcmp(a, "--accuracy") && v) {
			o->accuracy = atof(argv[++i]);
			if (!(o->accuracy > 0 && o->accuracy <= 1)) {
				fprintf(stderr, "loom eval: --accuracy %s: a cosine in (0, 1]\n", v);
				return -1;
			}
		} else if (!strcmp(a, "--min-npu-macs") && v) {
			o->min_npu_macs = atof(argv[++i]);
		} else if (!strcmp(a, "--limit") && v) {
			o->limit = atoi(argv[++i]);
		} else if (!strcmp(a, "--equalize")) {
			o->equalize = 1;
		} else if (!strcmp(a, "--bias-correction")) {
			o->bias_correction = 1;
		} else if (!strcmp(a, "--profile")) {
			o->profile = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (a[0] != '-' && !o->model) {
			o->model = a;
		} else {
			fprintf(stderr, "loom eval: unknown or incomplete option '%s'\n", a);
			return -1;
		}
	}
	if (!o->model || !o->data || !o->labels) {
		fprintf(stderr, "loom eval: MODEL.onnx, --data DIR and --labels FILE are needed\n");
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		const char *b = k ? o->compare : o->backend;
		if (b && strcmp(b, "rtl") && strcmp(b, "cmodel") && strcmp(b, "systemc") && strcmp(b, "systemc-rtl")) {
			fprintf(stderr, "loom eval: backend '%s': rtl, cmodel, systemc or systemc-rtl\n", b);
			return -1;
		}
	}
	if (loom_calib_method_of(o->method) < 0) {
		fprintf(stderr, "loom eval: --calib-method %s: minmax, percentile, mse or entropy\n", o->method);
		return -1;
	}
	if (o->accuracy > 0 && !o->calib) {
		fprintf(stderr, "loom eval: --accuracy needs calibration data: --calib DIR\n");
		return -1;
	}
	if (o->compare && !strcmp(o->compare, o->backend)) {
		fprintf(stderr, "loom eval: --compare %s: the same backend as --backend\n", o->compare);
		return -1;
	}
	if (!(o->clock_mhz > 0)) {
		fprintf(stderr, "loom eval: --clock-mhz must be positive\n");
		return -1;
	}
	return 0;
}

/* the labels: one integer per line; their count, or -1 with a message */
static int read_labels(const char *path, int **out, char *err, size_t len)
{
	char *s = tool_read_file(path, NULL);
	if (!s) {
		snprintf(err, len, "%s: cannot read it", path);
		return -1;
	}
	int n = 0, cap = 0, line = 1;
	int *v = NULL;
	for (char *p = s; *p;) {
		char *e;
		long x = strtol(p, &e, 10);
		if (e == p || x < 0 || x > 1000000 || (*e && *e != '\n' && *e != '\r')) {
			snprintf(err, len, "%s:%d: not a class index", path, line);
			free(v);
			free(s);
			return -1;
		}
		if (n == cap) {
			int *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *v);
			if (!nv) {
				snprintf(err, len, "out of memory");
				free(v);
				free(s);
				return -1;
			}
			v = nv;
		}
		v[n++] = (int)x;
		p = e;
		while (*p == '\n' || *p == '\r')
			line += *p++ == '\n';
	}
	free(s);
	*out = v;
	return n;
}

/* the data set's folders test_data_set_0, 1, ... */
static int count_sets(const char *dir, int limit)
{
	int n = 0;
	struct stat st;
	char p[4096];
	while (n < MAX_SETS && (!limit || n < limit)) {
		snprintf(p, sizeof p, "%s/test_data_set_%d", dir, n);
		if (stat(p, &st) || !S_ISDIR(st.st_mode))
			break;
		n++;
	}
	return n;
}

/* rows of the first output, and the argmax of row r */
static int64_t out_rows(const loom_tensor *t)
{
	int64_t last = t->rank ? t->dims[t->rank - 1] : 1;
	return last ? loom_tensor_numel(t) / last : 0;
}

static int64_t argmax_row(const loom_tensor *t, int64_t r)
{
	int64_t last = t->rank ? t->dims[t->rank - 1] : 1, best = 0;
	for (int64_t j = 1; j < last; j++)
		if (tool_elem_f(t, r * last + j) > tool_elem_f(t, r * last + best))
			best = j;
	return best;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* compile MODEL for the configuration; prints where its nodes run */
static loom_model *compile_model(const eval_opts *o, loom_hwcfg *cfg, double *npu_share, char *err, size_t len)
{
	loom_graph *g = NULL;
	loom_model *m = NULL;
	loom_compile_report rep;
	if (loom_onnx_load(o->model, NULL, 0, &g, err, len))
		return NULL;
	loom_compile_opts co = {.calib_dir = o->calib, .calib_method = loom_calib_method_of(o->method),
				.equalize = o->equalize, .bias_correction = o->bias_correction,
				.source = o->model, .options = "loom eval"};
	double t0 = now_s();
	tool_accuracy_result acc;
	memset(&acc, 0, sizeof acc);
	if (o->accuracy > 0) {
		if (tool_accuracy(o->model, NULL, 0, cfg, &co, o->accuracy, &acc, err, len)) {
			loom_graph_free(g);
			return NULL;
		}
		fputs(acc.text, stdout);
		co.tensor_methods = acc.tensor_methods;
		co.bias_correction = acc.bias_correction;
		co.equalize = acc.equalize;
		co.keep_float = acc.keep_float;
	}
	int bad = loom_compile(g, cfg, &co, &m, &rep, err, len);
	tool_accuracy_free(&acc);
	if (bad)
		return NULL;
	uint64_t macs = rep.macs_npu + rep.macs_cpu;
	*npu_share = macs ? (double)rep.macs_npu / (double)macs : 0;
	int fused = 0;
	for (int i = 0; i < rep.nnodes; i++)
		fused += rep.nodes[i].where == LOOM_WHERE_FUSED;
	printf("compiled for %s in %.2f s: %d of %d nodes on the NPU (%d of them fused), %u layers, %.1f%% of the "
	       "MACs; calibrated on %s\n",
	       cfg->name, now_s() - t0, rep.nodes_npu, rep.nnodes, fused, m->nlayers,
	       macs ? 100.0 * (double)rep.macs_npu / (double)macs : 0.0,
	       rep.calib_random ? "RANDOM inputs (no --calib DIR)" : o->calib);
	if (rep.calib_random)
		fprintf(stderr, "loom eval: warning: calibrated on random inputs; pass --calib DIR\n");
	loom_compile_report_free(&rep);
	return m;
}

static int side_open(side *s, const char *backend, const char *hw, loom_model *m, char *err, size_t len)
{
	memset(s, 0, sizeof *s);
	s->backend = backend;
	s->layers = calloc((size_t)m->nlayers + 1, sizeof *s->layers);
	if (!s->layers) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (tool_dev_open(backend, hw, &s->dev, err, len))
		return -1;
	return loom_exec_new(s->dev, m, &s->ex, err, len);
}

static void side_close(side *s)
{
	loom_exec_free(s->ex);
	loom_close(s->dev);
	free(s->layers);
}

/* one run of the compiled model on s; its profile added to s's sums */
static int side_run(side *s, const loom_model *m, char *err, size_t len)
{
	const loom_exec_stats *st = loom_exec_get_stats(s->ex);
	uint64_t c0 = st->npu_cycles;
	double w0 = st->npu_s;
	if (loom_exec_run(s->ex, err, len))
		return -1;
	s->cycles += st->npu_cycles - c0;
	s->wall += st->npu_s - w0;
	for (uint32_t l = 0; l < m->nlayers; l++) {
		s->layers[l].cycles += st->layers[l].cycles;
		s->layers[l].macs += st->layers[l].macs;
		s->layers[l].dram_rd += st->layers[l].dram_rd;
		s->layers[l].dram_wr += st->layers[l].dram_wr;
	}
	return 0;
}

/* the per-layer profile over the data set, one row per node (a batch's
 * per-image replicas of a windowed layer summed); the three costliest marked */
static void print_profile(const side *s, const loom_model *m, int runs)
{
	uint32_t n = m->nlayers, ng = 0;
	uint32_t *grp = calloc((size_t)n + 1, sizeof *grp), *first = calloc((size_t)n + 1, sizeof *first);
	loom_layer_prof *sum = calloc((size_t)n + 1, sizeof *sum);
	uint64_t *macs = calloc((size_t)n + 1, sizeof *macs), total = 0;
	uint32_t *reps = calloc((size_t)n + 1, sizeof *reps);
	if (!grp || !first || !sum || !macs || !reps)
		goto out;
	for (uint32_t l = 0; l < n; l++) {
		uint32_t g = 0;
		while (g < ng && strcmp(m->layers[first[g]].name, m->layers[l].name))
			g++;
		if (g == ng)
			first[ng++] = l;
		grp[l] = g;
		sum[g].cycles += s->layers[l].cycles;
		sum[g].dram_rd += s->layers[l].dram_rd;
		sum[g].dram_wr += s->layers[l].dram_wr;
		macs[g] += m->layers[l].macs;
		reps[g]++;
		total += s->layers[l].cycles;
	}
	uint32_t top[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
	for (int k = 0; k < 3; k++)
		for (uint32_t g = 0; g < ng; g++)
			if ((k < 1 || g != top[0]) && (k < 2 || g != top[1]) &&
			    (top[k] == UINT32_MAX || sum[g].cycles > sum[top[k]].cycles))
				top[k] = g;
	printf("per-layer profile on %s (device cycles per inference, the mean of %d; * the three costliest):\n",
	       s->backend, runs);
	printf("  %-1s %-24s %-8s %5s %10s %6s %12s %6s %10s %10s\n", "", "layer", "kind", "x", "cycles", "share",
	       "MACs", "util%", "DRAM rd", "DRAM wr");
	for (uint32_t g = 0; g < ng; g++) {
		const loom_layer *L = &m->layers[first[g]];
		int mark = g == top[0] || g == top[1] || g == top[2];
		double peak = L->kind == LOOM_LAYER_CONV || L->kind == LOOM_LAYER_GEMM
				      ? (double)m->cfg.array_rows * m->cfg.array_cols
				      : (double)m->cfg.array_rows;
		double cyc = (double)sum[g].cycles / runs;
		char util[16] = "-";
		if (cyc > 0 && macs[g])
			snprintf(util, sizeof util, "%.1f", 100.0 * (double)macs[g] / (peak * cyc));
		printf("  %-1s %-24.24s %-8s %5u %10.0f %5.1f%% %12" PRIu64 " %6s %10.0f %10.0f\n", mark ? "*" : "",
		       L->name, loom_layer_kind_name(L->kind), reps[g], cyc,
		       total ? 100.0 * (double)sum[g].cycles / (double)total : 0.0, macs[g], util,
		       (double)sum[g].dram_rd / runs, (double)sum[g].dram_wr / runs);
	}
	printf("  (x: the node's layers, one per image of the batch for windowed layers; util%%: MACs per cycle of "
	       "the %ux%u array or of the %u vector lanes)\n",
	       m->cfg.array_rows, m->cfg.array_cols, m->cfg.array_rows);
out:
	free(grp);
	free(first);
	free(sum);
	free(macs);
	free(reps);
}

/* the float model's and both backends' results on one data set; 0 or -1 */
static int eval_set(const eval_opts *o, int k, loom_graph *ref, loom_model *m, side *sd, int nsides,
		    const int *labels, int nlabels, int *row0, int *float_correct, int *same_rows, char *err,
		    size_t len)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/test_data_set_%d", o->data, k);
	loom_tensor in[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	int nin = tool_load_tensors(dir, "input", in, err, len), rc = -1;
	char *first = NULL;
	if (nin < 0)
		return -1;
	if (tool_bind_inputs(ref, in, nin, dir, 0, err, len) || loom_ref_run(ref, err, len) ||
	    tool_bind_inputs(m->graph, in, nin, dir, TOOL_BIND_QUIET, err, len))
		goto out;
	const loom_tensor *fo = &ref->tensors[ref->outputs[0]];
	int64_t rows = out_rows(fo);
	if (*row0 + rows > nlabels) {
		snprintf(err, len, "%.1024s: %d labels in %.512s for at least %lld rows", dir, nlabels, o->labels,
			 (long long)(*row0 + rows));
		goto out;
	}
	const loom_tensor *no = &m->graph->tensors[m->graph->outputs[0]];
	size_t nb = loom_tensor_bytes(no);
	for (int s = 0; s < nsides; s++) {
		if (side_run(&sd[s], m, err, len))
			goto out;
		for (int64_t r = 0; r < rows; r++) {
			int64_t a = argmax_row(no, r);
			sd[s].correct += a == labels[*row0 + r];
			sd[s].agree += a == argmax_row(fo, r);
		}
		if (s == 0 && !(first = malloc(nb + 1))) {
			snprintf(err, len, "out of memory");
			goto out;
		}
		if (s == 0)
			memcpy(first, no->data, nb);
		else /* rows whose bytes agree between the two backends */
			for (int64_t r = 0; r < rows; r++)
				*same_rows += !memcmp(first + r * (nb / (size_t)rows),
						      (const char *)no->data + r * (nb / (size_t)rows), nb / (size_t)rows);
	}
	for (int64_t r = 0; r < rows; r++)
		*float_correct += argmax_row(fo, r) == labels[*row0 + r];
	*row0 += (int)rows;
	rc = 0;
out:
	free(first);
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	return rc;
}

/* the summary lines; the exit status */
static int summary(const eval_opts *o, const loom_model *m, side *sd, int nsides, int nsets, int rows,
		   int float_correct, int same_rows)
{
	int rc = 0;
	printf("float32 on the reference executor: top-1 accuracy %d/%d = %.2f%%\n", float_correct, rows,
	       100.0 * float_correct / rows);
	for (int s = 0; s < nsides; s++)
		printf("int8 on the NPU (%s): top-1 accuracy %d/%d = %.2f%%; same class as float32 for %d/%d\n",
		       sd[s].backend, sd[s].correct, rows, 100.0 * sd[s].correct / rows, sd[s].agree, rows);
	if (nsides > 1) {
		printf("%s vs %s: %d of %d outputs byte-identical\n", sd[0].backend, sd[1].backend, same_rows, rows);
		if (same_rows != rows)
			rc = 1;
	}
	if (o->profile)
		print_profile(&sd[0], m, nsets);
	double cyc = (double)sd[0].cycles / nsets, per_img = cyc * nsets / rows;
	printf("per inference (a batch of %d): %.0f device cycles = %.1f us at %.0f MHz; %.0f cycles = %.2f us per "
	       "image\n",
	       rows / nsets, cyc, cyc / o->clock_mhz, o->clock_mhz, per_img, per_img / o->clock_mhz);
	printf("simulation (%s): %.0f device cycles in %.2f s wall = %.3f M cycles/s\n", sd[0].backend,
	       (double)sd[0].cycles, sd[0].wall, sd[0].wall > 0 ? (double)sd[0].cycles / sd[0].wall / 1e6 : 0.0);
	if (o->min_accuracy >= 0 && sd[0].correct < o->min_accuracy * rows) {
		printf("FAIL int8 accuracy %.4f below --min-accuracy %.4f\n", (double)sd[0].correct / rows,
		       o->min_accuracy);
		rc = 1;
	}
	if (o->min_agreement >= 0 && sd[0].agree < o->min_agreement * rows) {
		printf("FAIL int8 agrees with float32 on %.4f of the rows, below --min-agreement %.4f\n",
		       (double)sd[0].agree / rows, o->min_agreement);
		rc = 1;
	}
	return rc;
}

int cmd_eval(int argc, char **argv)
{
	eval_opts o;
	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	char err[2048];
	int *labels = NULL, nlabels = read_labels(o.labels, &labels, err, sizeof err);
	int nsets = count_sets(o.data, o.limit);
	if (nlabels < 0 || !nsets) {
		if (nlabels < 0)
			fprintf(stderr, "loom eval: %s\n", err);
		else
			fprintf(stderr, "loom eval: %s: no test_data_set_0 folder\n", o.data);
		free(labels);
		return 2;
	}
	loom_hwcfg cfg;
	if (tool_load_hw("eval", o.hw, &cfg)) {
		free(labels);
		return 2;
	}
	printf("loom eval: %s on %d data sets of %s (%d labels), int8 on %s%s%s\n", o.model, nsets, o.data, nlabels,
	       o.backend, o.compare ? ", compared with " : "", o.compare ? o.compare : "");
	loom_graph *ref = NULL;
	double npu_share = 0;
	loom_model *m = compile_model(&o, &cfg, &npu_share, err, sizeof err);
	side sd[2];
	int nsides = 0, rc = 1, rows = 0, float_correct = 0, same_rows = 0, done = 0;
	err[0] = 0;
	if (!m || loom_onnx_load(o.model, NULL, 0, &ref, err, sizeof err))
		goto out;
	for (; nsides < (o.compare ? 2 : 1); nsides++)
		if (side_open(&sd[nsides], nsides ? o.compare : o.backend, o.hw, m, err, sizeof err)) {
			nsides++;
			goto out;
		}
	for (int k = 0; k < nsets; k++)
		if (eval_set(&o, k, ref, m, sd, nsides, labels, nlabels, &rows, &float_correct, &same_rows, err,
			     sizeof err))
			goto out;
	if (rows != nlabels)
		printf("note: %d labels, %d rows evaluated (--limit, or more labels than data)\n", nlabels, rows);
	rc = summary(&o, m, sd, nsides, nsets, rows, float_correct, same_rows);
	if (o.min_npu_macs >= 0 && npu_share < o.min_npu_macs) {
		printf("FAIL the NPU runs %.4f of the MACs, below --min-npu-macs %.4f\n", npu_share, o.min_npu_macs);
		rc = 1;
	}
	done = 1;
out:
	if (!done)
		fprintf(stderr, "loom eval: %s\n", err[0] ? err : "failed");
	for (int s = 0; s < nsides; s++)
		side_close(&sd[s]);
	loom_graph_free(ref);
	loom_model_free(m);
	free(labels);
	return rc;
}
