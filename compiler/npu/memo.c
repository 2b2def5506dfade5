/* memo.c - a memo of tile plans (loom_plan_memo, compiler/npu/npu.h): a
 * compile plans many layers of the same shape (ResNet's repeated blocks),
 * and planning is the timing of a few candidate programs each (conv_plan.c,
 * vec_plan.c): the memo plans each shape once, and with deferred timing
 * times the candidates of every shape at the end, on several threads.
 *
 * Why the key may leave the values out: a plan depends on the
 * configuration and on the layer's shape fields below. Its values (zero
 * points, clip bounds, requantization multipliers and shifts) only fill
 * instruction fields (LOAD PAD_VALUE, STORE ZERO_POINT / CLIP_*, the
 * vector instructions' ZP_* / CLIP_* / MULT* / SHIFT) that neither the
 * timing model (common/timing.c, common/tsim.c) nor the planners read, and
 * a fused residual add's (loom_conv_params.res_add) only the parameter
 * lines in DRAM (ResNet's blocks differ in them alone); the
 * checks that do read them (clip_lo <= clip_hi, shift and multiplier
 * ranges) run on every call, hit or not. A hint bypasses the memo.
 *
 * A plan from the memo is the one loom_conv_plan_make / loom_vec_plan_make
 * returns, but est_first is 0 unless loom_plan_memo_want_first asked for
 * it before loom_plan_memo_time. Deferred timing gives the same plans: the
 * finalists are the planner's (npu_*_finalists), each timed alone by the
 * timing model (a pure function of its program), the choice the planner's
 * (npu_choose); threads change only when each finalist is timed. With
 * background workers (loom_plan_memo_background), a miss's finalists are
 * queued as it is made and timed while the caller goes on lowering (the
 * one CPU lowering leaves idle); loom_plan_memo_time helps empty the
 * queue, then times what was not queued. The workers only write the
 * cycles of the finalists they time (mentry.cyc); every entry is
 * allocated alone, so the pointers they hold stay valid while the memo
 * grows. */
#include "compiler/npu/npu_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* a key: the kind, then the parameters with their values and hints
 * zeroed (every other field, a new one too, is part of it) */
#define KEY_BYTES (sizeof(loom_vec_params) > sizeof(loom_conv_params) ? sizeof(loom_vec_params) : sizeof(loom_conv_params))
enum { KEY_WORDS = 1 + (KEY_BYTES + 3) / 4 };

typedef struct mentry {
	uint32_t key[KEY_WORDS]; /* key[0]: 0 conv, 1 + kind vector layers */
	union {
		loom_conv_plan c;
		loom_vec_plan v;
	} plan;                  /* the plan (while pending: the best rated finalist) */
	/* the parameters of its first layer (hints NULL; the values do not
	 * matter to timing); deferred timing: the finalists, their cycles */
	union {
		loom_conv_params c;
		loom_vec_params v;
	} p;
	loom_vec_params f;       /* a vector layer's flat view (loom_vec_params.flat), when it has one */
	int has_flat;
	union {
		loom_conv_plan c[NPU_CONV_FINALISTS];
		loom_vec_plan v[2 * NPU_VEC_FINALISTS];
	} fin;                   /* vector layers: nfin of p's view, then nflat of the flat view */
	uint64_t cyc[2 * NPU_VEC_FINALISTS], first;
	int nfin, nflat;
	int pending;             /* the finalists are not timed yet */
	int queued;              /* ... but queued for the background workers */
	int want_first;          /* est_first asked for, not timed yet */
} mentry;

/* one program to time: finalist i of entry e (i < 0: the chosen plan from
 * the job's START) */
typedef struct tjob {
	mentry *e;
	int i;
	uint64_t rating;         /* the closed form's cycles: the longest first */
} tjob;

/* the workers that time programs: in the background
 * (loom_plan_memo_background: each miss's finalists queued as it is made,
 * timed while the caller lowers) and in loom_plan_memo_time (what is left,
 * with the caller helping) */
enum { MAXBG = 15 };
typedef struct bgpool {
	pthread_t th[MAXBG];
	int nth;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	tjob *q;                 /* the queue; q[next..n) not taken yet */
	size_t n, cap, next;
	int closing;             /* no more jobs: the workers end when the queue is empty */
	const loom_hwcfg *cfg;
} bgpool;

struct loom_plan_memo {
	loom_hwcfg cfg;
	mentry **e;              /* each entry allocated alone: the workers hold pointers to them */
	size_t n, cap;
	int defer;
	uint64_t hits, misses, timed;
	bgpool *bg;
};

loom_plan_memo *loom_plan_memo_new(const loom_hwcfg *cfg)
{
	loom_plan_memo *m = calloc(1, sizeof *m);
	if (m)
		m->cfg = *cfg;
	return m;
}

static void bg_stop(loom_plan_memo *m);

void loom_plan_memo_free(loom_plan_memo *m)
{
	if (!m)
		return;
	bg_stop(m);
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i]);
	free(m->e);
	free(m);
}

void loom_plan_memo_defer(loom_plan_memo *m)
{
	if (m)
		m->defer = 1;
}

void loom_plan_memo_stats(const loom_plan_memo *m, uint64_t *hits, uint64_t *misses, uint64_t *timed)
{
	*hits = m ? m->hits : 0;
	*misses = m ? m->misses : 0;
	*timed = m ? m->timed : 0;
}

/* the key of a conv layer: its fields but the values (and hints) */
static void conv_key(const loom_conv_params *p, uint32_t *k)
{
	loom_conv_params q;
	memcpy(&q, p, sizeof q);
	q.in_zp = q.out_zp = q.clip_lo = q.clip_hi = 0;
	memset(&q.res_add, 0, sizeof q.res_add);
	q.hints = NULL;
	memset(k, 0, KEY_WORDS * sizeof *k);
	memcpy(k + 1, &q, sizeof q);
}

static void vec_key(const loom_vec_params *p, uint32_t *k)
{
	loom_vec_params q;
	memcpy(&q, p, sizeof q);
	q.in_zp = q.in2_zp = q.out_zp = q.clip_lo = q.clip_hi = 0;
	q.mult = q.shift = q.mult_a = q.mult_b = 0;
	q.hints = NULL;
	memset(k, 0, KEY_WORDS * sizeof *k);
	k[0] = 1 + (uint32_t)p->kind;
	memcpy(k + 1, &q, sizeof q);
}

/* the entry of key, NULL if none */
static mentry *find(loom_plan_memo *m, const uint32_t *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!memcmp(m->e[i]->key, key, KEY_WORDS * sizeof *key))
			return m->e[i];
	return NULL;
}

/* a new entry of key (NULL when out of memory: the plan is then not kept) */
static mentry *add(loom_plan_memo *m, const uint32_t *key)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 32;
		mentry **e = realloc(m->e, cap * sizeof *e);
		if (!e)
			return NULL;
		m->e = e;
		m->cap = cap;
	}
	mentry *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	m->e[m->n++] = e;
	memcpy(e->key, key, KEY_WORDS * sizeof *key);
	return e;
}

/* the memo serves cfg: the configuration it was made for */
static int serves(const loom_plan_memo *m, const loom_hwcfg *cfg)
{
	return m && !memcmp(&m->cfg, cfg, sizeof *cfg);
}

static void bg_queue(loom_plan_memo *m, mentry *e);

/* a miss of a conv layer: planned now, or its finalists kept for
 * loom_plan_memo_time (deferred) */
static int conv_miss(loom_plan_memo *m, const loom_conv_params *p, layer *L, const uint32_t *key,
		     loom_conv_plan *plan, char *err, size_t errlen)
{
	loom_conv_plan fin[NPU_CONV_FINALISTS];
	int nfin;
	if (!m->defer) {
		if (npu_conv_plan(&m->cfg, p, L, 0, plan, err, errlen))
			return -1;
	} else if (npu_conv_finalists(&m->cfg, p, L, fin, &nfin, err, errlen)) {
		return -1;
	}
	m->misses++;
	mentry *e = add(m, key);
	if (!e) {
		/* out of memory for the entry: time it now */
		return m->defer ? npu_conv_plan(&m->cfg, p, L, 0, plan, err, errlen) : 0;
	}
	e->p.c = *p;
	e->p.c.hints = NULL;
	if (m->defer) {
		memcpy(e->fin.c, fin, sizeof fin);
		e->nfin = nfin;
		e->pending = 1;
		*plan = fin[0];
	}
	e->plan.c = *plan;
	bg_queue(m, e);
	return 0;
}

int loom_plan_memo_conv(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
			char *err, size_t errlen)
{
	layer L;
	uint32_t key[KEY_WORDS];
	if (!serves(m, cfg) || p->hints)
		return npu_conv_plan(cfg, p, &L, 0, plan, err, errlen);
	if (npu_layer_check(cfg, p, &L, err, errlen))
		return -1;
	conv_key(p, key);
	mentry *e = find(m, key);
	if (!e)
		return conv_miss(m, p, &L, key, plan, err, errlen);
	m->hits++;
	*plan = e->plan.c;
	return 0;
}

static int vec_miss(loom_plan_memo *m, const loom_vec_params *p, vlayer *V, const uint32_t *key, loom_vec_plan *plan,
		    char *err, size_t errlen)
{
	loom_vec_plan fin[2 * NPU_VEC_FINALISTS];
	loom_vec_params f;
	vlayer Vf;
	char e2[8];
	memset(&f, 0, sizeof f);
	int nfin, nflat = 0, has_flat = !npu_vec_flat(&m->cfg, p, &f);
	if (!m->defer) {
		if (npu_vec_plan(&m->cfg, p, V, 0, plan, err, errlen))
			return -1;
	} else if (npu_vec_finalists(&m->cfg, p, V, fin, &nfin, err, errlen)) {
		return -1;
	} else if (has_flat && npu_vec_finalists(&m->cfg, &f, &Vf, fin + nfin, &nflat, e2, sizeof e2)) {
		nflat = 0; /* the flat view has no tiling: p's view alone (npu_vec_plan) */
	}
	m->misses++;
	mentry *e = add(m, key);
	if (!e)
		return m->defer ? npu_vec_plan(&m->cfg, p, V, 0, plan, err, errlen) : 0;
	e->p.v = *p;
	e->p.v.hints = NULL;
	e->f = f;
	e->has_flat = has_flat;
	if (m->defer) {
		memcpy(e->fin.v, fin, sizeof fin);
		e->nfin = nfin;
		e->nflat = nflat;
		e->pending = 1;
		*plan = fin[0];
	}
	e->plan.v = *plan;
	bg_queue(m, e);
	return 0;
}

int loom_plan_memo_vec(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan,
		       char *err, size_t errlen)
{
	vlayer V;
	uint32_t key[KEY_WORDS];
	if (!serves(m, cfg) || p->hints)
		return npu_vec_plan(cfg, p, &V, 0, plan, err, errlen);
	if (npu_vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	vec_key(p, key);
	mentry *e = find(m, key);
	if (!e)
		return vec_miss(m, p, &V, key, plan, err, errlen);
	m->hits++;
	*plan = e->plan.v;
	return 0;
}

void loom_plan_memo_want_first(loom_plan_memo *m, const loom_conv_params *cp, const loom_vec_params *vp)
{
	uint32_t key[KEY_WORDS];
	if (!m || (cp ? cp->hints != NULL : vp->hints != NULL))
		return;
	if (cp)
		conv_key(cp, key);
	else
		vec_key(vp, key);
	mentry *e = find(m, key);
	if (e && !(e->key[0] ? e->plan.v.est_first : e->plan.c.est_first))
		e->want_first = 1;
}

/* ------------------------------------------------------------------ deferred timing */

static void tjob_run(const loom_hwcfg *cfg, const tjob *j)
{
	mentry *e = j->e;
	char err[256];
	if (e->key[0]) {
		vlayer V;
		const loom_vec_plan *pl = j->i < 0 ? &e->plan.v : &e->fin.v[j->i];
		/* the flat view's finalists and plan are the flat view's */
		const loom_vec_params *p = (j->i < 0 ? pl->flat : j->i >= e->nfin) ? &e->f : &e->p.v;
		uint64_t c = (j->i < 0 ? pl->flat : j->i >= e->nfin) && !e->has_flat ? 0
			     : npu_vlayer_check(cfg, p, &V, err, sizeof err) ? 0
									   : npu_vec_cycles(cfg, p, &V, pl, j->i < 0);
		if (j->i < 0)
			e->first = c ? c : pl->est_cycles;
		else
			e->cyc[j->i] = c;
	} else {
		layer L;
		const loom_conv_plan *pl = j->i < 0 ? &e->plan.c : &e->fin.c[j->i];
		uint64_t c = npu_layer_check(cfg, &e->p.c, &L, err, sizeof err) ? 0
										 : npu_conv_cycles(cfg, &e->p.c, &L, pl, j->i < 0);
		if (j->i < 0)
			e->first = c ? c : pl->est_cycles;
		else
			e->cyc[j->i] = c;
	}
}

static int tjob_cmp(const void *a, const void *b)
{
	const tjob *x = a, *y = b;
	if (x->rating != y->rating)
		return x->rating < y->rating ? 1 : -1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	return x->i - y->i;
}

/* ------------------------------------------------------------------ background timing */

static void *bg_work(void *arg)
{
	bgpool *b = arg;
	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (b->next == b->n && !b->closing)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->next == b->n)
			break;
		tjob j = b->q[b->next++];
		pthread_mutex_unlock(&b->mu);
		tjob_run(b->cfg, &j);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* a pool of threads workers (at most MAXBG) for m; 0 when none could start */
static bgpool *bg_start(loom_plan_memo *m, int threads)
{
	bgpool *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->cfg = &m->cfg;
	for (int t = 0; t < threads && t < MAXBG; t++)
		if (!pthread_create(&b->th[b->nth], NULL, bg_work, b))
			b->nth++;
	if (!b->nth) {
		pthread_mutex_destroy(&b->mu);
		pthread_cond_destroy(&b->cv);
		free(b);
		return NULL;
	}
	m->bg = b;
	return b;
}

/* n jobs onto the workers' queue; -1 (nothing queued) when it cannot grow */
static int bg_push(bgpool *b, const tjob *j, size_t n)
{
	pthread_mutex_lock(&b->mu);
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		while (cap < b->n + n)
			cap *= 2;
		tjob *q = realloc(b->q, cap * sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&b->mu);
			return -1;
		}
		b->q = q;
		b->cap = cap;
	}
	memcpy(b->q + b->n, j, n * sizeof *j);
	b->n += n;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return 0;
}

int loom_plan_memo_background(loom_plan_memo *m, int threads)
{
	if (!m || !m->defer || m->bg || threads < 1)
		return 0;
	return bg_start(m, threads) ? 0 : -1;
}

/* entry e's finalists to the workers (when there are workers); not queued
 * (no memory): timed by loom_plan_memo_time */
static void bg_queue(loom_plan_memo *m, mentry *e)
{
	if (!m->bg || !e->pending)
		return;
	tjob j[2 * NPU_VEC_FINALISTS];
	size_t k = (size_t)(e->nfin + e->nflat);
	for (size_t i = 0; i < k; i++)
		j[i] = (tjob){e, (int)i, 0};
	if (bg_push(m->bg, j, k))
		return;
	e->queued = 1;
	m->timed += k;
}

/* the workers' queue emptied (this thread helping) and the workers ended */
static void bg_stop(loom_plan_memo *m)
{
	bgpool *b = m ? m->bg : NULL;
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	b->closing = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	bg_work(b);
	for (int t = 0; t < b->nth; t++)
		pthread_join(b->th[t], NULL);
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->cv);
	free(b->q);
	free(b);
	m->bg = NULL;
}

/* the jobs, the longest first, on up to threads threads (this one
 * included): a pool of threads - 1 workers that this thread helps empty */
static void time_jobs(loom_plan_memo *m, tjob *j, size_t n, int threads)
{
	qsort(j, n, sizeof *j, tjob_cmp);
	if ((size_t)threads > n)
		threads = (int)n;
	if (threads > 1 && bg_start(m, threads - 1) && !bg_push(m->bg, j, n)) {
		bg_stop(m);
		return;
	}
	bg_stop(m);
	for (size_t k = 0; k < n; k++)
		tjob_run(&m->cfg, &j[k]);
}

int loom_plan_memo_time(loom_plan_memo *m, int threads)
{
	if (!m)
		return 0;
	bg_stop(m); /* the queued finalists timed */
	size_t n = m->n; /* room for every entry's est_first */
	for (size_t k = 0; k < m->n; k++)
		n += m->e[k]->pending && !m->e[k]->queued ? (size_t)(m->e[k]->nfin + m->e[k]->nflat) : 0;
	tjob *j = malloc((n ? n : 1) * sizeof *j);
	if (!j)
		return -1;
	/* the finalists of every pending shape not timed in the background */
	n = 0;
	for (size_t k = 0; k < m->n; k++) {
		mentry *e = m->e[k];
		for (int i = 0; e->pending && !e->queued && i < e->nfin + e->nflat; i++)
			j[n++] = (tjob){e, i, e->key[0] ? e->fin.v[i].est_cycles : e->fin.c[i].est_cycles};
	}
	time_jobs(m, j, n, threads);
	m->timed += n;
	/* the planner's choice */
	for (size_t k = 0; k < m->n; k++) {
		mentry *e = m->e[k];
		if (!e->pending)
			continue;
		uint64_t by[2 * NPU_VEC_FINALISTS];
		for (int i = 0; i < e->nfin + e->nflat; i++)
			by[i] = e->key[0] ? e->fin.v[i].dram_rd_est + e->fin.v[i].dram_wr_est
					  : e->fin.c[i].dram_rd_est + e->fin.c[i].dram_wr_est;
		int best = npu_choose(e->cyc, by, e->nfin);
		if (e->key[0]) {
			e->plan.v = e->fin.v[best < 0 ? 0 : best];
			if (best >= 0)
				e->plan.v.est_cycles = e->cyc[best];
			/* the flat view's choice when the rule prefers it (npu_vec_plan) */
			int bf = npu_choose(e->cyc + e->nfin, by + e->nfin, e->nflat);
			if (e->nflat) {
				loom_vec_plan pf = e->fin.v[e->nfin + (bf < 0 ? 0 : bf)];
				if (bf >= 0)
					pf.est_cycles = e->cyc[e->nfin + bf];
				if (npu_vec_prefer_flat(&e->plan.v, &pf)) {
					e->plan.v = pf;
					e->plan.v.flat = 1;
				}
			}
		} else {
			e->plan.c = e->fin.c[best < 0 ? 0 : best];
			if (best >= 0)
				e->plan.c.est_cycles = e->cyc[best];
		}
		e->pending = 0;
		e->queued = 0;
	}
	/* est_first where it was asked for */
	n = 0;
	for (size_t k = 0; k < m->n; k++) {
		mentry *e = m->e[k];
		if (e->want_first)
			j[n++] = (tjob){e, -1, e->key[0] ? e->plan.v.est_cycles : e->plan.c.est_cycles};
	}
	time_jobs(m, j, n, threads);
	m->timed += n;
	for (size_t k = 0; k < m->n; k++) {
		mentry *e = m->e[k];
		if (!e->want_first)
			continue;
		if (e->key[0])
			e->plan.v.est_first = e->first;
		else
			e->plan.c.est_first = e->first;
		e->want_first = 0;
	}
	free(j);
	return 0;
}
