/* cmd_compile_sens.c - `loom compile --sensitivity`: for every node the compiler
 * put on the NPU, compile the model again with that node alone kept in
 * float (--keep-float) and run it on the C model with one input sample;
 * report the output error against the float reference executor for the
 * all-int8 model and for each variant, sorted by how much returning the
 * node to float helps. The layers at the top are the ones that hurt
 * accuracy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/calib.h"
#include "compiler/compile.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "compiler/onnx.h"

typedef struct sample {
	loom_tensor *t;
	int n;
} sample;

static int take_first(void *ctx, int k, loom_tensor *in, int nin, const char *where, char *err, size_t len)
{
	(void)where, (void)err, (void)len;
	sample *s = ctx;
	if (k > 0)
		return 0;
	s->t = calloc((size_t)nin + 1, sizeof *s->t);
	if (!s->t)
		return -1;
	for (int i = 0; i < nin; i++) { /* take the tensors over */
		s->t[i] = in[i];
		memset(&in[i], 0, sizeof in[i]);
	}
	s->n = nin;
	return 0;
}

typedef struct outcome {
	char name[96], op[32];
	double cos, max_abs;
} outcome;

static int cmp_outcome(const void *a, const void *b)
{
	const outcome *x = a, *y = b;
	return x->cos < y->cos ? 1 : x->cos > y->cos ? -1 : 0;
}

/* compile with keep, run on dev, compare the outputs with ref: 0 or -1 */
static int trial(const char *path, const loom_input_shape *shp, int nshp, const loom_hwcfg *cfg,
		 loom_compile_opts co, const char *keep, loom_dev *dev, const sample *s, const loom_graph *ref,
		 loom_compile_report *rep, double *cos, double *max_abs, char *err, size_t len)
{
	loom_graph *g = NULL;
	loom_model *m = NULL;
	loom_exec *ex = NULL;
	int rc = -1;
	co.keep_float = keep;
	if (loom_onnx_load(path, shp, nshp, &g, err, len))
		return -1;
	if (loom_compile(g, cfg, &co, &m, rep, err, len))
		return -1;
	if (tool_bind_inputs(m->graph, s->t, s->n, "sample", 0, err, len) || loom_exec_new(dev, m, &ex, err, len) ||
	    loom_exec_run(ex, err, len))
		goto out;
	*cos = 1;
	*max_abs = 0;
	for (int i = 0; i < ref->noutputs; i++) {
		tool_metrics_t mt;
		tool_metrics(&m->graph->tensors[m->graph->outputs[i]], &ref->tensors[ref->outputs[i]], &mt);
		*cos = mt.cos < *cos ? mt.cos : *cos;
		*max_abs = mt.max_abs > *max_abs ? mt.max_abs : *max_abs;
	}
	rc = 0;
out:
	loom_exec_free(ex);
	loom_model_free(m);
	return rc;
}

int tool_sensitivity(const char *path, const loom_input_shape *shp, int nshp, const loom_hwcfg *cfg,
		     const loom_compile_opts *base, const char *data, FILE *f, char *err, size_t len)
{
	sample s = {0};
	const char *dir = data ? data : base->calib_dir;
	if (!dir) {
		snprintf(err, len, "--sensitivity needs an input sample: --data DIR or --calib DIR");
		return -1;
	}
	if (loom_calib_dir(dir, take_first, &s, err, len) < 0 || !s.t)
		return -1;
	int rc = -1;
	loom_graph *ref = NULL;
	loom_dev *dev = NULL;
	outcome *res = NULL;
	loom_compile_report rep;
	memset(&rep, 0, sizeof rep);
	char spec[1024];
	tool_cfg_spec(cfg, spec, sizeof spec);
	if (loom_onnx_load(path, shp, nshp, &ref, err, len) || tool_bind_inputs(ref, s.t, s.n, dir, 0, err, len) ||
	    loom_ref_run(ref, err, len) || tool_dev_open("cmodel", spec, &dev, err, len))
		goto out;
	double cos0, abs0;
	if (trial(path, shp, nshp, cfg, *base, base->keep_float, dev, &s, ref, &rep, &cos0, &abs0, err, len))
		goto out;
	int n = 0;
	res = calloc((size_t)rep.nnodes + 1, sizeof *res);
	if (!res)
		goto out;
	fprintf(f, "sensitivity on the C model, one sample from %s: all layers int8: cosine %.6f, max abs error "
		   "%.6g\n", dir, cos0, abs0);
	for (int i = 0; i < rep.nnodes; i++) {
		if (rep.nodes[i].where != LOOM_WHERE_NPU)
			continue;
		char keep[4096];
		snprintf(keep, sizeof keep, "%s%s%s", base->keep_float ? base->keep_float : "", base->keep_float ? "," : "",
			 rep.nodes[i].name);
		outcome *o = &res[n];
		snprintf(o->name, sizeof o->name, "%s", rep.nodes[i].name);
		snprintf(o->op, sizeof o->op, "%s", rep.nodes[i].op_type);
		if (trial(path, shp, nshp, cfg, *base, keep, dev, &s, ref, NULL, &o->cos, &o->max_abs, err, len))
			goto out;
		n++;
	}
	qsort(res, (size_t)n, sizeof *res, cmp_outcome);
	fprintf(f, "%-48s %-18s %10s %12s %12s\n", "node returned to float", "op", "cosine", "gain", "max abs err");
	for (int i = 0; i < n; i++)
		fprintf(f, "%-48.48s %-18s %10.6f %+12.6f %12.6g\n", res[i].name, res[i].op, res[i].cos,
			res[i].cos - cos0, res[i].max_abs);
	rc = 0;
out:
	free(res);
	loom_compile_report_free(&rep);
	loom_close(dev);
	loom_graph_free(ref);
	for (int i = 0; i < s.n; i++)
		loom_tensor_clear(&s.t[i]);
	free(s.t);
	return rc;
}
