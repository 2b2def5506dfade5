/* calrun.c - calibration over a --calib DIR on several threads
 * (compile_internal.h, cc_calib_dir): what loom_calib_run_dir
 * (compiler/calib.h) does, with up to BATCH samples' float runs at once:
 * each sample bound to its own view of the graph (loom_ref_view,
 * runtime/cpu_ops.h; the first the graph itself) and all of them run
 * together node by node by loom_ref_run_n, which does each float Conv as
 * one matrix product of every sample's image (the weights packed once,
 * both CPUs on it) and the other nodes sample by sample over the threads.
 * The samples' data are the bits of their own runs, and the observations
 * are made one at a time in the samples' order, so the statistics are the
 * same whatever the thread count and batch (test_calib checks against
 * loom_calib_run_dir).
 *
 * The samples are the ones loom_calib_dir enumerates, a folder sample of
 * several tensors of a one-input graph's input type and shape being one
 * sample per tensor (as loom_calib_run_dir splits them); errors are its
 * messages, for the first sample in order that fails. At most BATCH
 * samples are loaded at a time. */
#include "compiler/compile_internal.h"
#include "compiler/onnx.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 8, ERRLEN = 1536 };

/* one sample: its tensors (owned) and where they came from */
typedef struct unit {
	loom_tensor *in;
	int n;
	char *where;
} unit;

typedef struct crun {
	loom_calib *cal;
	int threads;
	loom_graph *gs[BATCH];   /* gs[0]: the graph; the others its views */
	int nv;                  /* the graphs there are (views out of memory: fewer) */
	int *last;               /* per tensor a run writes: the last node that reads it (INT_MAX: kept) */
	unit *u;                 /* the batch */
	int nu, cap;
	int failed;              /* a sample failed: the rest are not observed */
	char err[ERRLEN];
	/* the part of the batch running: its graphs, which failed, the messages */
	int n, bad[BATCH], obad[BATCH];
	char msg[BATCH][ERRLEN];  /* each graph's message (binding, running) */
	char omsg[BATCH][ERRLEN]; /* each graph's first observation's message */
} crun;

static void unit_free(unit *u)
{
	for (int i = 0; i < u->n; i++)
		loom_tensor_clear(&u->in[i]);
	free(u->in);
	free(u->where);
	memset(u, 0, sizeof *u);
}

/* a sample of n tensors, taken from ts (which keeps empty tensors) */
static int batch_add(crun *r, loom_tensor *ts, int n, const char *where)
{
	if (r->nu == r->cap) {
		int cap = r->cap ? 2 * r->cap : 8;
		unit *u = realloc(r->u, (size_t)cap * sizeof *u);
		if (!u)
			return -1;
		r->u = u;
		r->cap = cap;
	}
	unit *u = &r->u[r->nu];
	u->in = calloc((size_t)n + 1, sizeof *u->in);
	u->where = strdup(where);
	if (!u->in || !u->where) {
		free(u->in);
		free(u->where);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		u->in[i] = ts[i];
		memset(&ts[i], 0, sizeof ts[i]);
	}
	u->n = n;
	r->nu++;
	return 0;
}

/* several tensors for a one-input graph, each of the input's type and
 * shape: each one is a sample of its own (as loom_calib_run_dir) */
static int one_per_file(const loom_graph *g, const loom_tensor *in, int n)
{
	if (g->ninputs != 1 || n < 2)
		return 0;
	const loom_tensor *gt = &g->tensors[g->inputs[0]];
	for (int j = 0; j < n; j++) {
		int same = in[j].dtype == gt->dtype && in[j].rank == gt->rank;
		for (int d = 0; same && d < gt->rank; d++)
			same = in[j].dims[d] == gt->dims[d];
		if (!same)
			return 0;
	}
	return 1;
}

/* tensor t of every graph that ran, in the samples' order */
static void observe(crun *r, int t)
{
	for (int k = 0; k < r->n; k++)
		if (!r->bad[k] && !r->obad[k] &&
		    loom_calib_observe_tensor(r->cal, r->gs[k], t, r->omsg[k], sizeof r->omsg[k]))
			r->obad[k] = 1;
}

/* loom_ref_run_n's callback: node's outputs (-1: the graph inputs)
 * observed; the views' tensors no later node reads freed */
static void node_done(void *ctx, int node)
{
	crun *r = ctx;
	const loom_graph *g = r->gs[0];
	if (node < 0) {
		for (int i = 0; i < g->ninputs; i++)
			observe(r, g->inputs[i]);
		return;
	}
	const loom_node *n = &g->nodes[node];
	for (int j = 0; j < n->noutputs; j++)
		if (n->outputs[j] >= 0)
			observe(r, n->outputs[j]);
	for (int j = 0; j < n->ninputs; j++) {
		int t = n->inputs[j];
		if (t < 0 || r->last[t] != node)
			continue;
		for (int k = 1; k < r->n; k++) {
			free(r->gs[k]->tensors[t].data);
			r->gs[k]->tensors[t].data = NULL;
			r->gs[k]->tensors[t].cap = 0;
		}
	}
}

/* the batch's samples k0 .. k0 + n on the graphs: run at once, observed
 * tensor by tensor as they come; the first sample in order that failed
 * fails the batch */
static void batch_part(crun *r, int k0, int n)
{
	int bound[BATCH];
	r->n = n;
	for (int k = 0; k < n; k++) {
		const unit *u = &r->u[k0 + k];
		r->bad[k] = loom_calib_bind(r->gs[k], u->in, u->n, u->where, r->msg[k], ERRLEN) != 0;
		bound[k] = !r->bad[k];
		r->obad[k] = 0;
	}
	loom_ref_run_n(r->gs, n, r->threads, r->bad, r->msg[0], ERRLEN, node_done, r);
	for (int k = 0; k < n && !r->failed; k++) {
		const unit *u = &r->u[k0 + k];
		if (r->bad[k] || r->obad[k]) {
			if (!bound[k])
				snprintf(r->err, sizeof r->err, "%s", r->msg[k]);
			else
				snprintf(r->err, sizeof r->err, "%.500s: %.1000s", u->where,
					 r->bad[k] ? r->msg[k] : r->omsg[k]);
			r->failed = 1;
		} else {
			loom_calib_observe_done(r->cal);
		}
	}
}

/* the batch's samples run and observed; 0, or -1 (r->err) */
static int batch_run(crun *r)
{
	/* a view for each sample (out of memory: fewer, the batch in parts) */
	while (r->nv < r->nu && (r->gs[r->nv] = loom_ref_view(r->gs[0])))
		r->nv++;
	for (int k0 = 0; k0 < r->nu && !r->failed; k0 += r->nv)
		batch_part(r, k0, r->nu - k0 < r->nv ? r->nu - k0 : r->nv);
	for (int k = 0; k < r->nu; k++)
		unit_free(&r->u[k]);
	r->nu = 0;
	return r->failed ? -1 : 0;
}

/* loom_calib_dir's callback: the sample into the batch, the batch run when full */
static int take(void *ctx, int sample, loom_tensor *inputs, int ninputs, const char *where, char *err, size_t errlen)
{
	crun *r = ctx;
	(void)sample;
	int rc = 0;
	if (one_per_file(r->gs[0], inputs, ninputs)) {
		for (int j = 0; j < ninputs && !rc; j++) {
			char w[1100];
			snprintf(w, sizeof w, "%.1000s (tensor %d)", where, j);
			free(inputs[j].name);
			inputs[j].name = NULL; /* bound to the one input whatever its name */
			rc = batch_add(r, &inputs[j], 1, w);
		}
	} else {
		rc = batch_add(r, inputs, ninputs, where);
	}
	if (rc) {
		snprintf(err, errlen, "%s: out of memory", where);
		return -1;
	}
	if (r->nu >= BATCH && batch_run(r)) {
		snprintf(err, errlen, "%s", r->err);
		return -1;
	}
	return 0;
}

/* per tensor: the last node that reads it if a run writes it (a graph
 * input or a node output) and it is not a graph output; else INT_MAX */
static int *last_reads(const loom_graph *g)
{
	int *last = malloc(((size_t)g->ntensors + 1) * sizeof *last);
	char *own = calloc((size_t)g->ntensors + 1, 1);
	if (!last || !own) {
		free(last);
		free(own);
		return NULL;
	}
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i] >= 0 && g->inputs[i] < g->ntensors)
			own[g->inputs[i]] = 1;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] >= 0 && g->nodes[i].outputs[j] < g->ntensors)
				own[g->nodes[i].outputs[j]] = 1;
	for (int t = 0; t < g->ntensors; t++)
		last[t] = INT_MAX;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0 && t < g->ntensors && own[t])
				last[t] = i;
		}
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] >= 0 && g->outputs[i] < g->ntensors)
			last[g->outputs[i]] = INT_MAX;
	free(own);
	return last;
}

int cc_calib_dir(cc *c, loom_calib *cal, const char *dir, int threads)
{
	crun *r = calloc(1, sizeof *r);
	if (!r)
		return cc_fail(c, "out of memory (calibration)");
	r->cal = cal;
	r->threads = threads < 1 ? 1 : threads;
	r->gs[0] = c->g;
	r->nv = 1;
	if (!(r->last = last_reads(c->g))) {
		free(r);
		return cc_fail(c, "out of memory (calibration)");
	}
	int rc = 0, before = loom_calib_samples(cal);
	if (loom_calib_dir(dir, take, r, c->err, c->errlen) < 0) {
		/* a sample loaded before the failure may fail first */
		if (!r->failed && r->nu && batch_run(r))
			cc_fail(c, "%s", r->err);
		rc = -1;
	} else if (r->nu && batch_run(r)) {
		cc_fail(c, "%s", r->err);
		rc = -1;
	}
	for (int k = 0; k < r->nu; k++)
		unit_free(&r->u[k]);
	free(r->u);
	for (int t = 1; t < r->nv; t++)
		loom_ref_view_free(r->gs[t]);
	free(r->last);
	free(r);
	return rc ? -1 : loom_calib_samples(cal) - before;
}
