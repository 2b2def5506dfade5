/* cmd_compile_acc.c - `loom compile --accuracy COS`: the search that makes an
 * int8 model keep a trained model's decisions. Every step is judged on the
 * C model (bit-exact with the RTL) over every sample of --calib DIR, by the
 * cosine similarity of the model's outputs with the float reference
 * executor's (per sample, the lowest over the outputs):
 *  1. the calibration is run once (histograms and mean images kept) and
 *     reused by every trial compile (loom_compile_opts.calib), as are the
 *     tile plans (loom_compile_opts.plans: the trials differ in values,
 *     which plans do not depend on, so each layer shape is planned and its
 *     candidate programs timed once in the whole search); cross-layer
 *     equalization (loom_compile_opts.equalize) is kept when it raises the
 *     mean cosine (with a calibration of its own, then shared);
 *  2. each activation tensor the NPU quantizes, in graph order, gets the
 *     calibration method (min-max, percentile, MSE, entropy) whose range
 *     gives the best mean cosine, the earlier tensors' choices kept
 *     (coordinate descent; a method whose range equals the current one is
 *     not tried);
 *  3. bias correction (loom_compile_opts.bias_correction) is kept when it
 *     raises the mean cosine;
 *  4. while the lowest cosine over the samples is below COS: every NPU
 *     node (with the nodes fused into it) and every quantized tensor
 *     between two NPU nodes (its producer and consumer: the tensor stays
 *     float) is tried alone in float, as --sensitivity does; the candidates
 *     are taken in order of the cosine they give until COS is reached, then
 *     each node kept in float is given back to the NPU if COS still holds
 *     (the fewest layers in float the ranking finds).
 * The result is a set of options (per-tensor methods, bias correction,
 * --keep-float nodes) that loom compile then compiles with; the choices
 * and the cosine after each step go into the report (text and JSON). The
 * cost is one compile and one C-model run of the calibration set per
 * trial: seconds for the digits CNN, much longer for big models (the
 * default path never runs it). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "compiler/calib.h"
#include "compiler/compile.h"
#include "compiler/onnx.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"

typedef struct acc_sample {
	loom_tensor *t;
	int n;
	loom_tensor *ref; /* the float outputs */
	int nref;
} acc_sample;

typedef struct acc_ctx {
	const char *path;
	const loom_input_shape *shp;
	int nshp;
	const loom_hwcfg *cfg;
	loom_compile_opts co;   /* the options being searched */
	loom_calib *cal;        /* the shared calibration */
	loom_plan_memo *plans;  /* the shared tile plans (loom_compile_opts.plans): each shape planned once */
	loom_dev *dev;
	acc_sample *s;
	int ns, cap;
	int trials;
	tool_progress pg;       /* the step's progress on a terminal (stderr) */
	char *err;
	size_t len;
} acc_ctx;

typedef tool_cos acc_score;

static int take_sample(void *vctx, int k, loom_tensor *in, int nin, const char *where, char *err, size_t len)
{
	(void)k, (void)where;
	acc_ctx *a = vctx;
	if (a->ns == a->cap) {
		int nc = a->cap ? 2 * a->cap : 16;
		acc_sample *p = realloc(a->s, (size_t)nc * sizeof *p);
		if (!p) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		a->s = p;
		a->cap = nc;
	}
	acc_sample *s = &a->s[a->ns];
	memset(s, 0, sizeof *s);
	if (!(s->t = calloc((size_t)nin + 1, sizeof *s->t))) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < nin; i++) { /* take the tensors over */
		s->t[i] = in[i];
		memset(&in[i], 0, sizeof in[i]);
	}
	s->n = nin;
	a->ns++;
	return 0;
}

/* the float reference outputs of every sample */
static int reference(acc_ctx *a)
{
	loom_graph *g = NULL;
	if (loom_onnx_load(a->path, a->shp, a->nshp, &g, a->err, a->len))
		return -1;
	int rc = 0;
	for (int k = 0; k < a->ns && !rc; k++) {
		acc_sample *s = &a->s[k];
		if (tool_bind_inputs(g, s->t, s->n, "calibration sample", k ? TOOL_BIND_QUIET : 0, a->err, a->len) ||
		    loom_ref_run(g, a->err, a->len) || !(s->ref = calloc((size_t)g->noutputs + 1, sizeof *s->ref))) {
			rc = -1;
			break;
		}
		s->nref = g->noutputs;
		for (int i = 0; i < g->noutputs && !rc; i++) {
			const loom_tensor *o = &g->tensors[g->outputs[i]];
			loom_tensor *r = &s->ref[i];
			r->dtype = o->dtype;
			r->rank = o->rank;
			memcpy(r->dims, o->dims, sizeof r->dims);
			if (loom_tensor_set_data(r, o->data, loom_tensor_bytes(o))) {
				snprintf(a->err, a->len, "out of memory");
				rc = -1;
			}
		}
	}
	loom_graph_free(g);
	return rc;
}

/* compile with a->co (+ keep) and score it on the C model; *mout (may be
 * NULL) receives the model, rep (may be NULL) the report */
static int trial(acc_ctx *a, const char *keep, acc_score *sc, loom_model **mout, loom_compile_report *rep)
{
	loom_graph *g = NULL;
	loom_model *m = NULL;
	loom_exec *ex = NULL;
	loom_compile_opts co = a->co;
	int rc = -1;
	co.keep_float = keep;
	co.calib = a->cal;
	co.calib_out = a->cal ? NULL : &a->cal;
	co.calib_keep = LOOM_CALIB_KEEP_HIST | LOOM_CALIB_KEEP_MEAN;
	co.plans = a->plans;
	a->trials++;
	if (loom_onnx_load(a->path, a->shp, a->nshp, &g, a->err, a->len) ||
	    loom_compile(g, a->cfg, &co, &m, rep, a->err, a->len) || loom_exec_new(a->dev, m, &ex, a->err, a->len))
		goto out;
	sc->mean = 0;
	sc->min = 1;
	for (int k = 0; k < a->ns; k++) {
		acc_sample *s = &a->s[k];
		double cos = 1;
		if (tool_bind_inputs(m->graph, s->t, s->n, "calibration sample", TOOL_BIND_QUIET, a->err, a->len) ||
		    loom_exec_run(ex, a->err, a->len))
			goto out;
		for (int i = 0; i < s->nref && i < m->graph->noutputs; i++) {
			tool_metrics_t mt;
			tool_metrics(&m->graph->tensors[m->graph->outputs[i]], &s->ref[i], &mt);
			cos = mt.cos < cos ? mt.cos : cos;
		}
		sc->mean += cos / a->ns;
		sc->min = cos < sc->min ? cos : sc->min;
	}
	rc = 0;
out:
	loom_exec_free(ex);
	if (!rc && mout)
		*mout = m;
	else
		loom_model_free(m);
	return rc;
}

/* ---------------------------------------------------------------- strings */

static int append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int append(char **s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	size_t old = *s ? strlen(*s) : 0;
	char *p = realloc(*s, old + (size_t)n + 1);
	if (!p)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p + old, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*s = p;
	return 0;
}

static void json_esc(char **s, const char *v)
{
	append(s, "\"");
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			append(s, "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			append(s, "\\u%04x", *v);
		else
			append(s, "%c", *v);
	}
	append(s, "\"");
}

/* 1 when the comma-separated list has the item s[0..n) */
static int has_item(const char *list, const char *s, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return 1;
		p += len + (e ? 1 : 0);
	}
	return 0;
}

/* the items of list a, then those of b that a lacks ("a,b" + "b,c" = "a,b,c") */
static char *join(const char *a, const char *b)
{
	char *r = NULL;
	if (append(&r, "%s", a ? a : ""))
		return NULL;
	for (const char *p = b; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && !has_item(r, p, len) && append(&r, "%s%.*s", *r ? "," : "", (int)len, p)) {
			free(r);
			return NULL;
		}
		p += len + (e ? 1 : 0);
	}
	return r;
}

/* ---------------------------------------------------------------- step 2 */

/* each activation tensor's method, in graph order; the choices into res */
static int choose_methods(acc_ctx *a, const loom_model *m0, acc_score *best, tool_accuracy_result *res)
{
	const loom_graph *g = m0->graph;
	double pct = a->co.percentile > 0 ? a->co.percentile : 99.99;
	char *cur = NULL; /* the chosen "T=m" items */
	int *mt = calloc((size_t)g->ntensors + 1, sizeof *mt);
	if (!mt)
		return -1;
	for (int t = 0; t < g->ntensors; t++)
		mt[t] = a->co.calib_method;
	tool_progress_start(&a->pg, "accuracy: calibration method of each tensor", g->ntensors);
	for (int t = 0; t < g->ntensors; t++) {
		const loom_tensor *x = &g->tensors[t];
		tool_progress_update(&a->pg, t);
		float lo0, hi0;
		int q = m0->mt[t].dev; /* quantized: a device image, or a QUANT into a padded one (loom_step.dst) */
		for (uint32_t s = 0; s < m0->nsteps && !q; s++)
			q = m0->steps[s].kind == LOOM_STEP_QUANT && m0->steps[s].tensor == t;
		if (x->is_const || !q || loom_calib_range_by(a->cal, t, mt[t], pct, &lo0, &hi0))
			continue;
		int was = mt[t];
		for (int meth = 0; meth < LOOM_CALIB_NMETHODS; meth++) {
			float lo, hi;
			if (meth == was || loom_calib_range_by(a->cal, t, meth, pct, &lo, &hi) || (lo == lo0 && hi == hi0))
				continue;
			char *tryit = NULL;
			append(&tryit, "%s%s%s=%s", cur ? cur : "", cur ? "," : "", x->name, loom_calib_method_name(meth));
			a->co.tensor_methods = tryit;
			acc_score sc;
			/* a trial that does not compile is a method not taken */
			if (!trial(a, res->keep_float, &sc, NULL, NULL) && sc.mean > best->mean + 1e-7) {
				*best = sc;
				mt[t] = meth;
				lo0 = lo, hi0 = hi;
			}
			free(tryit);
			a->co.tensor_methods = cur;
		}
		if (mt[t] != was) {
			append(&cur, "%s%s=%s", cur ? "," : "", x->name, loom_calib_method_name(mt[t]));
			a->co.tensor_methods = cur;
		}
		append(&res->text, "  %-40.40s %-10s [%g, %g]\n", x->name, loom_calib_method_name(mt[t]), lo0, hi0);
		append(&res->json, "%s\n      {\"tensor\": ", res->ntensors ? "," : "");
		json_esc(&res->json, x->name);
		append(&res->json, ", \"method\": \"%s\", \"lo\": %g, \"hi\": %g}", loom_calib_method_name(mt[t]), lo0,
		       hi0);
		res->ntensors++;
	}
	tool_progress_end(&a->pg);
	free(mt);
	res->tensor_methods = cur;
	a->co.tensor_methods = cur;
	return 0;
}

/* ---------------------------------------------------------------- step 4 */

typedef struct cand {
	char *names;   /* comma-separated nodes */
	acc_score sc;
	int tensor;    /* a tensor candidate: its index; -1: a node */
} cand;

static int cmp_cand(const void *x, const void *y)
{
	const cand *a = x, *b = y;
	return a->sc.mean < b->sc.mean ? 1 : a->sc.mean > b->sc.mean ? -1 : 0;
}

/* the nodes of layer l's main node with the nodes fused into it */
static char *group_of(const loom_model *m, int main)
{
	char *r = NULL;
	int seen[64], ns = 0;
	for (uint32_t l = 0; l < m->nlayers; l++) {
		if (m->layers[l].nodes[0] != main)
			continue;
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++) {
			int n = m->layers[l].nodes[k], dup = 0;
			for (int j = 0; j < ns; j++)
				dup |= seen[j] == n;
			if (n < 0 || dup || ns == 64 || !m->graph->nodes[n].name)
				continue;
			seen[ns++] = n;
			append(&r, "%s%s", r ? "," : "", m->graph->nodes[n].name);
		}
	}
	return r;
}

/* the candidates: every NPU node group, every tensor from one group to another */
static cand *candidates(const loom_model *m, int *nc)
{
	cand *c = calloc((size_t)m->nlayers * 3 + 1, sizeof *c);
	int n = 0;
	if (!c)
		return NULL;
	for (uint32_t l = 0; l < m->nlayers; l++) {
		int main = m->layers[l].nodes[0], dup = 0;
		for (uint32_t j = 0; j < l; j++)
			dup |= m->layers[j].nodes[0] == main;
		if (!dup && main >= 0) {
			c[n].names = group_of(m, main);
			c[n++].tensor = -1;
		}
		for (int k = 0; k < 2; k++) {
			int t = m->layers[l].in[k], prod = -1;
			for (uint32_t j = 0; j < m->nlayers && t >= 0; j++)
				if (m->layers[j].out == t && m->layers[j].nodes[0] != main)
					prod = m->layers[j].nodes[0];
			for (int j = 0; j < n && prod >= 0; j++)
				if (c[j].tensor == t)
					prod = -1;
			if (prod < 0)
				continue;
			char *a = group_of(m, prod), *b = group_of(m, main);
			c[n].names = join(a, b);
			c[n++].tensor = t;
			free(a);
			free(b);
		}
	}
	*nc = n;
	return c;
}

/* drop the names of `group` from the list (in place) */
static void list_remove(char *list, const char *group)
{
	char *out = list;
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int in = 0;
		for (const char *q = group; *q && !in;) {
			const char *f = strchr(q, ',');
			size_t l2 = f ? (size_t)(f - q) : strlen(q);
			in = l2 == len && !strncmp(p, q, len);
			q += l2 + (f ? 1 : 0);
		}
		if (!in) {
			if (out != list)
				*out++ = ',';
			memmove(out, p, len);
			out += len;
		}
		p += len + (e ? 1 : 0);
	}
	*out = 0;
}

/* float fallback until the lowest cosine reaches target */
static int fallback(acc_ctx *a, const loom_model *m0, double target, acc_score *best, tool_accuracy_result *res)
{
	int nc = 0, rc = -1;
	cand *c = candidates(m0, &nc);
	char *keep = NULL;
	if (!c)
		return -1;
	tool_progress_start(&a->pg, "accuracy: each node alone in float", nc);
	for (int i = 0; i < nc; i++) {
		char *k = join(res->keep_float, c[i].names);
		tool_progress_update(&a->pg, i);
		if (!k)
			goto out;
		if (trial(a, k, &c[i].sc, NULL, NULL)) /* does not compile: ranked last */
			c[i].sc.mean = c[i].sc.min = -2;
		free(k);
	}
	tool_progress_end(&a->pg);
	qsort(c, (size_t)nc, sizeof *c, cmp_cand);
	append(&res->text, "  ranking (each alone in float: mean / lowest cosine):\n");
	for (int i = 0; i < nc; i++)
		append(&res->text, "    %-8s %.6f %.6f  %s\n", c[i].tensor >= 0 ? "tensor" : "node", c[i].sc.mean,
		       c[i].sc.min, c[i].names);
	keep = join(res->keep_float, NULL);
	acc_score sc = *best;
	tool_progress_start(&a->pg, "accuracy: nodes kept in float, by rank", nc);
	for (int i = 0; i < nc && sc.min < target; i++) {
		char *k = join(keep, c[i].names);
		acc_score s1;
		tool_progress_update(&a->pg, i);
		if (!k)
			goto out;
		if (c[i].sc.mean < -1 || trial(a, k, &s1, NULL, NULL)) {
			free(k);
			continue;
		}
		sc = s1;
		free(keep);
		keep = k;
	}
	/* give back what is not needed: each group of the kept nodes, last added first */
	tool_progress_start(&a->pg, "accuracy: nodes given back to the NPU", nc);
	for (int i = nc - 1; i >= 0 && sc.min >= target; i--) {
		tool_progress_update(&a->pg, nc - 1 - i);
		if (c[i].tensor >= 0)
			continue;
		char *k0 = join(keep, NULL), *k;
		if (!k0)
			goto out;
		list_remove(k0, c[i].names);
		k = join(res->keep_float, k0); /* the user's --keep-float stays */
		free(k0);
		if (!k)
			goto out;
		if (!strcmp(k, keep)) {
			free(k);
			continue;
		}
		acc_score s2;
		if (!trial(a, *k ? k : NULL, &s2, NULL, NULL) && s2.min >= target) {
			free(keep);
			keep = k;
			sc = s2;
		} else {
			free(k);
		}
	}
	tool_progress_end(&a->pg);
	*best = sc;
	free(res->keep_float);
	res->keep_float = keep && *keep ? keep : NULL;
	if (!res->keep_float)
		free(keep);
	keep = NULL;
	rc = 0;
out:
	tool_progress_end(&a->pg);
	free(keep);
	for (int i = 0; i < nc; i++)
		free(c[i].names);
	free(c);
	return rc;
}

/* ---------------------------------------------------------------- the search */

static void step(tool_accuracy_result *res, const char *what, const acc_score *sc)
{
	char label[128];
	snprintf(label, sizeof label, "%s%s", what, strchr(what, ':') ? "" : ":"); /* JSON: without the colon */
	append(&res->text, "  %-44s mean cosine %.6f, lowest %.6f\n", label, sc->mean, sc->min);
	append(&res->json, "%s\n      {\"step\": \"%s\", \"mean_cos\": %.6f, \"min_cos\": %.6f}", res->nsteps ? "," : "",
	       what, sc->mean, sc->min);
	res->nsteps++;
}

static int search(acc_ctx *a, double target, tool_accuracy_result *res)
{
	loom_model *m0 = NULL;
	acc_score best, sc;
	loom_compile_report rep;
	if (trial(a, res->keep_float, &best, &m0, &rep))
		return -1;
	loom_compile_report_free(&rep);
	res->cos_start = best;
	/* equalization: a graph of its own, a calibration of its own */
	acc_score eq;
	loom_calib *plain = a->cal;
	a->cal = NULL;
	a->co.equalize = 1;
	memset(&rep, 0, sizeof rep);
	if (trial(a, res->keep_float, &eq, NULL, &rep)) {
		a->cal = plain;
		return -1;
	}
	res->equalize = rep.equalized > 0 && eq.mean > best.mean + 1e-7;
	loom_compile_report_free(&rep);
	if (res->equalize) {
		loom_calib_free(plain);
		best = eq;
	} else {
		loom_calib_free(a->cal);
		a->cal = plain;
		a->co.equalize = 0;
	}
	char *steps = NULL, *tens;
	res->json = NULL;
	append(&res->text, "accuracy: target cosine %g over %d calibration sample%s on the C model\n", target, a->ns,
	       a->ns == 1 ? "" : "s");
	/* step 2: the methods; their lines go before the steps */
	char *save = res->text;
	res->text = NULL;
	int rc = choose_methods(a, m0, &best, res);
	tens = res->text;
	res->text = save;
	char *tjson = res->json;
	res->json = NULL;
	if (!rc) {
		step(res, "all int8, one method for all tensors", &res->cos_start);
		step(res, res->equalize ? "cross-layer equalization: kept" : "cross-layer equalization: dropped (no gain)",
		     res->equalize ? &eq : &res->cos_start);
		step(res, "per-tensor calibration methods", &best);
		append(&res->text, "  activation tensors (method, range):\n%s", tens ? tens : "");
		/* step 3 */
		a->co.bias_correction = 1;
		rc = trial(a, res->keep_float, &sc, NULL, NULL);
		res->bias_correction = !rc && sc.mean > best.mean + 1e-7;
		a->co.bias_correction = res->bias_correction;
		step(res, res->bias_correction ? "bias correction: kept" : "bias correction: dropped (no gain)",
		     res->bias_correction ? &sc : &best);
		if (res->bias_correction)
			best = sc;
	}
	/* step 4 */
	if (!rc && best.min < target) {
		rc = fallback(a, m0, target, &best, res);
		if (!rc)
			step(res, "layers kept in float", &best);
	}
	res->cos_final = best;
	res->reached = best.min >= target;
	if (!rc) {
		append(&res->text, "  kept in float: %s\n  %s: %d trial compiles on the C model\n",
		       res->keep_float ? res->keep_float : "(none)", res->reached ? "target reached" : "TARGET NOT REACHED",
		       a->trials);
		steps = res->json;
		res->json = NULL;
		append(&res->json, "{\"target\": %g, \"samples\": %d, \"reached\": %s, \"trials\": %d, \"equalize\": %s, "
				   "\"bias_correction\": %s, \"keep_float\": ", target, a->ns, res->reached ? "true" : "false",
		       a->trials, res->equalize ? "true" : "false", res->bias_correction ? "true" : "false");
		json_esc(&res->json, res->keep_float ? res->keep_float : "");
		append(&res->json, ",\n    \"steps\": [%s\n    ],\n    \"tensors\": [%s\n    ]}", steps ? steps : "",
		       tjson ? tjson : "");
	}
	free(steps);
	free(tjson);
	free(tens);
	loom_model_free(m0);
	return rc;
}

int tool_accuracy(const char *path, const loom_input_shape *shp, int nshp, const loom_hwcfg *cfg,
		  const loom_compile_opts *base, double target, tool_accuracy_result *res, char *err, size_t len)
{
	acc_ctx a = {.path = path, .shp = shp, .nshp = nshp, .cfg = cfg, .co = *base, .err = err, .len = len};
	char spec[1024];
	int rc = -1;
	memset(res, 0, sizeof *res);
	clock_t t0 = clock();
	if (!base->calib_dir) {
		snprintf(err, len, "--accuracy needs calibration data: --calib DIR");
		return -1;
	}
	if (base->keep_float && !(res->keep_float = join(base->keep_float, NULL))) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	a.co.calib_out = NULL;
	a.co.calib = NULL;
	tool_cfg_spec(cfg, spec, sizeof spec);
	if (!(a.plans = loom_plan_memo_new(cfg))) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	if (loom_calib_dir(base->calib_dir, take_sample, &a, err, len) < 0 || reference(&a) ||
	    tool_dev_open("cmodel", spec, &a.dev, err, len) || search(&a, target, res))
		goto out;
	res->seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
	append(&res->text, "  search: %.2f s CPU time\n", res->seconds);
	rc = 0;
out:
	loom_close(a.dev);
	loom_calib_free(a.cal);
	loom_plan_memo_free(a.plans);
	for (int k = 0; k < a.ns; k++) {
		for (int i = 0; i < a.s[k].n; i++)
			loom_tensor_clear(&a.s[k].t[i]);
		for (int i = 0; i < a.s[k].nref; i++)
			loom_tensor_clear(&a.s[k].ref[i]);
		free(a.s[k].t);
		free(a.s[k].ref);
	}
	free(a.s);
	if (rc)
		tool_accuracy_free(res);
	return rc;
}

void tool_accuracy_free(tool_accuracy_result *res)
{
	free(res->tensor_methods);
	free(res->keep_float);
	free(res->text);
	free(res->json);
	memset(res, 0, sizeof *res);
}
