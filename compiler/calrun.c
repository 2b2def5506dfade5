/* calrun.c - calibration over a --calib DIR on several threads
 * (compile_internal.h, cc_calib_dir): what loom_calib_run_dir
 * (compiler/calib.h) does, with the samples' float runs spread over
 * threads, each thread running its own view of the graph
 * (loom_ref_view, runtime/cpu_ops.h; the first thread the graph itself),
 * and the observations made one at a time in the samples' order, so the
 * statistics are the same whatever the thread count. The kernels' own
 * threads (runtime/gemm.c) share what the samples running at once leave.
 *
 * The samples are the ones loom_calib_dir enumerates, a folder sample of
 * several tensors of a one-input graph's input type and shape being one
 * sample per tensor (as loom_calib_run_dir splits them); errors are its
 * messages, for the first sample in order that fails. At most 4 samples
 * per thread are loaded at a time. */
#include "compiler/compile_internal.h"
#include "compiler/onnx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXT = 8, PER_THREAD = 4 };

/* one sample: its tensors (owned) and where they came from */
typedef struct unit {
	loom_tensor *in;
	int n;
	char *where;
} unit;

typedef struct crun {
	loom_calib *cal;
	int threads;
	loom_graph *gs[MAXT];    /* gs[0]: the graph; the others its views */
	unit *u;                 /* the batch */
	int nu, cap;
	/* running a batch: the next sample to run, the next to observe */
	atomic_int next;
	int turn;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int failed;              /* a sample failed: the rest are not observed */
	char err[1536];
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

/* sample k of the batch on graph g, then its observation in its turn */
static void run_unit(crun *r, loom_graph *g, int k)
{
	const unit *u = &r->u[k];
	char msg[1024], err[1536];
	int bad = loom_calib_bind(g, u->in, u->n, u->where, err, sizeof err);
	if (!bad && loom_ref_run(g, msg, sizeof msg)) {
		snprintf(err, sizeof err, "%.500s: %.1000s", u->where, msg);
		bad = 1;
	}
	pthread_mutex_lock(&r->mu);
	while (r->turn != k)
		pthread_cond_wait(&r->cv, &r->mu);
	if (!r->failed && !bad && loom_calib_observe(r->cal, g, msg, sizeof msg)) {
		snprintf(err, sizeof err, "%.500s: %.1000s", u->where, msg);
		bad = 1;
	}
	if (!r->failed && bad) {
		r->failed = 1;
		snprintf(r->err, sizeof r->err, "%s", err);
	}
	r->turn++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

typedef struct worker {
	crun *r;
	int t;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	crun *r = w->r;
	for (int k; (k = atomic_fetch_add(&r->next, 1)) < r->nu;)
		run_unit(r, r->gs[w->t], k);
	return NULL;
}

/* the batch's samples run and observed; 0, or -1 (r->err) */
static int batch_run(crun *r)
{
	pthread_t th[MAXT];
	worker w[MAXT] = {{r, 0}};
	int started[MAXT] = {0};
	atomic_store(&r->next, 0);
	r->turn = 0;
	/* the CPUs shared by the samples running at once: a kernel's own
	 * threads (runtime/gemm.c) only for what they leave */
	int at_once = r->nu < r->threads ? r->nu : r->threads;
	for (int t = 0; t < r->threads; t++) {
		w[t] = (worker){r, t};
		r->gs[t]->threads = at_once > 1 ? (r->threads / at_once > 1 ? r->threads / at_once : 1) : r->threads;
	}
	for (int t = 1; t < r->threads && t < r->nu; t++)
		started[t] = !pthread_create(&th[t], NULL, work, &w[t]);
	work(&w[0]);
	for (int t = 1; t < r->threads; t++)
		if (started[t])
			pthread_join(th[t], NULL);
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
	if (r->nu >= r->threads * PER_THREAD && batch_run(r)) {
		snprintf(err, errlen, "%s", r->err);
		return -1;
	}
	return 0;
}

int cc_calib_dir(cc *c, loom_calib *cal, const char *dir, int threads)
{
	crun r;
	memset(&r, 0, sizeof r);
	r.cal = cal;
	r.threads = threads < 1 ? 1 : threads > MAXT ? MAXT : threads;
	r.gs[0] = c->g;
	int rc = 0, before = loom_calib_samples(cal), gthreads = c->g->threads;
	for (int t = 1; t < r.threads; t++)
		if (!(r.gs[t] = loom_ref_view(c->g)))
			r.threads = t; /* out of memory: fewer threads */
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	if (loom_calib_dir(dir, take, &r, c->err, c->errlen) < 0) {
		/* a sample loaded before the failure may fail first */
		if (!r.failed && r.nu && batch_run(&r))
			cc_fail(c, "%s", r.err);
		rc = -1;
	} else if (r.nu && batch_run(&r)) {
		cc_fail(c, "%s", r.err);
		rc = -1;
	}
	for (int k = 0; k < r.nu; k++)
		unit_free(&r.u[k]);
	free(r.u);
	for (int t = 1; t < MAXT; t++)
		loom_ref_view_free(r.gs[t]);
	c->g->threads = gthreads;
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	return rc ? -1 : loom_calib_samples(cal) - before;
}
