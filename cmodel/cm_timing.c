/* cm_timing.c - the C model's timing of the DMA engines, the fetch, the
 * DRAM and the scratchpad banks: common/tsim.h's loom_tdma, run directly or
 * answered from a recording of the same job (the memo).
 *
 * Why a recording can answer: what tsim computes is a function of its
 * inputs alone - the state it starts from, and in order the calls that
 * feed it (an idle START, a fetch's cycle, a LOAD / STORE / MARK / compute
 * instruction accepted in a cycle, an instruction retired), each made
 * after tsim has done its events up to a known cycle. The instructions'
 * data never reach it. The event model of cmodel.c that makes those calls
 * is itself a function of the program's bytes as they are fetched, the DMA
 * windows (the decoder's checks), the configuration and the cycles tsim
 * answers. So a job started from the same tsim state, with the same
 * windows, fetching the same bytes, makes the same calls at the same
 * cycles after its START, and tsim gives the same answers. The memo keeps
 * per job its inputs (with the cycle tsim had reached before each) and the
 * cycle each instruction's done pulse and each fetch's end came to, and
 * replays them: done(), fetch_done() and compute() answer from the
 * recording at once, advance() and run() do nothing. Answering a done
 * cycle before tsim would know it changes nothing in cmodel.c: it
 * completes an instruction only at its end, and the next instant it
 * computes is the earliest end either way (next_event runs tsim up to it).
 *
 * The key: the job starts from tsim's canonical state (after loom_tdma_idle:
 * the DRAM's credit full, nothing in the bank calendars from the START on,
 * which holds whenever the last job ended 2 * beat cycles before: the credit
 * grows by dram_bw >= 1 bytes a cycle up to two beats); the same program
 * address, DMA windows, and program bytes in DRAM (compared at START); the
 * configuration and DRAM timing are the device's own. During a replay every
 * fetched instruction is compared with the recorded one and every input
 * with the recorded input (operation, cycle, instruction): a difference (a
 * store or the host rewrote the program mid-run) makes tsim catch up - a
 * fresh loom_tdma fed the recorded inputs so far, each after advancing to
 * the recorded cycle - and the job goes on directly from there. After a
 * replayed job tsim lags behind; a job that is not replayed rebuilds it
 * the same way (from the canonical state when the gap allows, else from the
 * replayed job's inputs), so the timing never depends on which jobs were
 * replayed. An ABORT during a replay does the same.
 *
 * LOOM_CMODEL_MEMO=0 (or loom_hw_opts' LOOM_CMODEL_NO_MEMO) runs tsim
 * directly for every job; tests compare the two (`loom cosim --a cmodel
 * --b cmodel-nomemo --repeat 2`, model runs with their per-layer cycles). */
#include "cmodel/cmodel_internal.h"

#include <stdlib.h>
#include <string.h>

#define NEVER LOOM_TDMA_NEVER
#define MEMO_RECS 64                          /* jobs kept */
#define MEMO_BYTES ((uint64_t)512 << 20)      /* and their bytes at most */
#define MEMO_MAX_INPUTS ((size_t)64 << 20)    /* a longer job is not recorded */

enum cm_tin_op { OP_IDLE, OP_FETCH, OP_LOAD, OP_STORE, OP_MARK, OP_COMPUTE, OP_RETIRE_LOAD, OP_RETIRE_STORE };

struct cm_trec {
	uint32_t base;           /* the program's address */
	loom_windows win;
	loom_insn *ins;          /* the fetched instructions, in order */
	uint32_t *chk;           /* the decoder's verdict on each: cause << 16 | field */
	uint32_t *pcs;
	size_t nf, capf;
	int contiguous;          /* pcs[i] = base + 32 i */
	cm_tin *in;              /* the inputs, in order */
	size_t n, cap;
	uint64_t end_cur;        /* at the end: events done through (+1) */
	uint64_t end_ct, end_hi; /* at the end: the DRAM credit's cycle, the calendars' end */
};

static void rec_free(cm_trec *r)
{
	if (!r)
		return;
	free(r->ins);
	free(r->chk);
	free(r->pcs);
	free(r->in);
	free(r);
}

static uint64_t rec_bytes(const cm_trec *r)
{
	return sizeof *r + r->capf * (sizeof(loom_insn) + 8) + r->cap * sizeof(cm_tin);
}

int cm_tm_init(cm_tm *x, const loom_timing *t, int memo)
{
	memset(x, 0, sizeof *x);
	x->memo = memo;
	return loom_tdma_init(&x->td, t);
}

void cm_tm_free(cm_tm *x)
{
	for (size_t i = 0; i < x->ntab; i++)
		rec_free(x->tab[i]);
	free(x->tab);
	if (x->rec && x->mode == CM_TM_RECORD)
		rec_free(x->rec);
	loom_tdma_free(&x->td);
	memset(x, 0, sizeof *x);
}

/* ---- the canonical start ---- */

static uint64_t cal_end(const loom_tdma *d)
{
	uint64_t hi = 0;
	for (unsigned b = 0; b < LOOM_TDMA_BANKS; b++) {
		if (d->sp_hi[b].w && d->sp_hi[b].hi > hi)
			hi = d->sp_hi[b].hi;
		if (d->sp_mid[b].w && d->sp_mid[b].hi > hi)
			hi = d->sp_mid[b].hi;
	}
	return hi;
}

/* td after loom_tdma_idle(now) is in the state a fresh one would be in */
static int canonical(const loom_tdma *d, uint64_t now)
{
	return !d->oom && d->ct == now && d->cval == 2 * (int64_t)d->t.beat && !d->rd_at && !d->wr_at &&
	       cal_end(d) <= now;
}

static void fresh(cm_tm *x, uint64_t now)
{
	loom_timing t = x->td.t;
	loom_tdma_free(&x->td);
	if (loom_tdma_init(&x->td, &t))
		x->td.oom = 1;
	loom_tdma_idle(&x->td, now);
}

/* a fresh td fed inputs [0, n) of r from t0 on, then done through cur */
static void rebuild(cm_tm *x, const cm_trec *r, size_t n, uint64_t t0, uint64_t cur)
{
	loom_timing t = x->td.t;
	loom_tdma_free(&x->td);
	if (loom_tdma_init(&x->td, &t))
		x->td.oom = 1;
	loom_tdma *d = &x->td;
	loom_insn in;
	for (size_t i = 0; i < n; i++) {
		const cm_tin *e = &r->in[i];
		if (e->cur)
			loom_tdma_advance(d, t0 + e->cur - 1);
		if (e->op >= OP_LOAD && e->op <= OP_COMPUTE)
			in = r->ins[e->fi];
		uint64_t at = t0 + e->t;
		switch (e->op) {
		case OP_IDLE: loom_tdma_idle(d, at); break;
		case OP_FETCH: loom_tdma_fetch(d, at); break;
		case OP_LOAD: loom_tdma_accept(d, LOOM_TDMA_LOAD, at, &in, 0); break;
		case OP_STORE: loom_tdma_accept(d, LOOM_TDMA_STORE, at, &in, 0); break;
		case OP_MARK: loom_tdma_accept(d, LOOM_TDMA_STORE, at, &in, 1); break;
		case OP_COMPUTE: loom_tdma_compute(d, at, &in); break;
		case OP_RETIRE_LOAD: loom_tdma_retire(d, LOOM_TDMA_LOAD); break;
		default: loom_tdma_retire(d, LOOM_TDMA_STORE); break;
		}
	}
	if (cur)
		loom_tdma_advance(d, cur - 1);
	x->n_rebuilt++;
}

/* td is live again (it lagged behind a replayed job) */
static void catch_up(cm_tm *x)
{
	if (!x->stale)
		return;
	rebuild(x, x->src, x->src_n, x->src_t0, x->src_cur);
	x->stale = 0;
	x->src = NULL;
}

/* ---- the memo ---- */

static void memo_drop(cm_tm *x, size_t i)
{
	x->bytes -= rec_bytes(x->tab[i]);
	rec_free(x->tab[i]);
	memmove(x->tab + i, x->tab + i + 1, (x->ntab - i - 1) * sizeof *x->tab);
	x->ntab--;
}

static void memo_put(cm_tm *x, cm_trec *r)
{
	cm_trec **t = realloc(x->tab, (x->ntab + 1) * sizeof *t);
	if (!t) {
		rec_free(r);
		return;
	}
	x->tab = t;
	x->tab[x->ntab++] = r;
	x->bytes += rec_bytes(r);
	/* the least recently used go first; never the one td lags behind */
	for (size_t i = 0; i < x->ntab && (x->ntab > MEMO_RECS || x->bytes > MEMO_BYTES);)
		if (x->tab[i] == r || x->tab[i] == x->src)
			i++;
		else
			memo_drop(x, i);
}

/* the instruction at p in DRAM is in */
static int same_words(const uint8_t *p, const loom_insn *in)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return !memcmp(p, in->w, LOOM_INSN_BYTES);
#else
	for (int w = 0; w < LOOM_INSN_WORDS; w++, p += 4)
		if (in->w[w] != ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24))
			return 0;
	return 1;
#endif
}

static int same_program(const cm_trec *r, const uint8_t *dram, uint64_t dram_bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (r->contiguous)
		return (uint64_t)r->base + r->nf * LOOM_INSN_BYTES <= dram_bytes &&
		       !memcmp(dram + r->base, r->ins, r->nf * LOOM_INSN_BYTES);
#endif
	for (size_t i = 0; i < r->nf; i++)
		if ((uint64_t)r->pcs[i] + LOOM_INSN_BYTES > dram_bytes || !same_words(dram + r->pcs[i], &r->ins[i]))
			return 0;
	return 1;
}

static cm_trec *memo_find(cm_tm *x, uint32_t base, const loom_windows *win, const uint8_t *dram, uint64_t dram_bytes)
{
	for (size_t i = x->ntab; i-- > 0;) {
		cm_trec *r = x->tab[i];
		if (r->base == base && !memcmp(&r->win, win, sizeof *win) && same_program(r, dram, dram_bytes)) {
			/* the most recently used last */
			memmove(x->tab + i, x->tab + i + 1, (x->ntab - i - 1) * sizeof *x->tab);
			x->tab[x->ntab - 1] = r;
			return r;
		}
	}
	return NULL;
}

/* ---- a job ---- */

static cm_tin *push_in(cm_tm *x, int op, uint64_t t)
{
	cm_trec *r = x->rec;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		cm_tin *p = cap <= MEMO_MAX_INPUTS ? realloc(r->in, cap * sizeof *p) : NULL;
		if (!p) {
			/* give the recording up; tsim runs on */
			rec_free(r);
			x->rec = NULL;
			x->mode = CM_TM_DIRECT;
			return NULL;
		}
		r->in = p;
		r->cap = cap;
	}
	cm_tin *e = &r->in[r->n++];
	e->op = (uint8_t)op;
	e->t = t - x->t0;
	e->cur = x->cur + 1 >= x->t0 ? x->cur + 1 - x->t0 : 0;
	e->res = NEVER;
	e->fi = 0;
	return e;
}

void cm_tm_start(cm_tm *x, uint64_t now, uint32_t insn_base, const loom_windows *win, const uint8_t *dram,
		 uint64_t dram_bytes)
{
	if (x->mode == CM_TM_RECORD)
		rec_free(x->rec);
	x->rec = NULL;
	x->mode = CM_TM_DIRECT;
	x->t0 = now;
	x->cur = now ? now - 1 : 0;
	memset(x->nfifo, 0, sizeof x->nfifo);
	x->last_fetch = x->last_comp = 0;
	/* is tsim in its canonical state at now? */
	int canon;
	if (x->stale && now >= x->src_t0 + x->src->end_ct + 2 * (uint64_t)x->td.t.beat + 1 &&
	    now >= x->src_t0 + x->src->end_hi) {
		canon = 1; /* td may stay behind */
	} else {
		catch_up(x);
		loom_tdma_idle(&x->td, now);
		canon = canonical(&x->td, now);
	}
	if (!x->memo || !canon) {
		x->n_direct++;
		return;
	}
	cm_trec *r = memo_find(x, insn_base, win, dram, dram_bytes);
	if (r) {
		/* td does not see this job: a later one rebuilds it from r */
		x->stale = 1;
		x->src = r;
		x->src_t0 = now;
		x->src_n = 1;
		x->src_cur = 0;
		x->rec = r;
		x->k = 1; /* its first input is the idle START */
		x->mode = CM_TM_REPLAY;
		x->n_replayed++;
		return;
	}
	if (x->stale) {
		/* the canonical state, as td would be in after the replayed job */
		x->stale = 0;
		x->src = NULL;
		fresh(x, now);
	}
	r = calloc(1, sizeof *r);
	if (!r) {
		x->n_direct++;
		return;
	}
	r->base = insn_base;
	r->win = *win;
	r->contiguous = 1;
	x->rec = r;
	x->mode = CM_TM_RECORD;
	if (push_in(x, OP_IDLE, now))
		x->n_recorded++;
}

/* the replay cannot go on: td catches up with the inputs so far */
static void diverge(cm_tm *x)
{
	rebuild(x, x->rec, x->k, x->t0, x->cur + 1);
	x->stale = 0;
	x->src = NULL;
	x->rec = NULL;
	x->mode = CM_TM_DIRECT;
}

/* replaying: the next recorded input is op at now (and instruction fi) */
static inline const cm_tin *expect(cm_tm *x, int op, uint64_t now, uint32_t fi)
{
	const cm_trec *r = x->rec;
	if (x->k < r->n) {
		const cm_tin *e = &r->in[x->k];
		if (e->op == op && e->t == now - x->t0 && e->fi == fi) {
			x->k++;
			x->src_n = x->k;
			return e;
		}
	}
	diverge(x);
	return NULL;
}

void cm_tm_end(cm_tm *x)
{
	if (x->mode == CM_TM_RECORD) {
		cm_trec *r = x->rec;
		x->rec = NULL;
		x->mode = CM_TM_DIRECT;
		if (x->td.oom) {
			rec_free(r);
			return;
		}
		r->end_cur = x->cur + 1 - x->t0;
		r->end_ct = x->td.ct - x->t0;
		uint64_t hi = cal_end(&x->td);
		r->end_hi = hi > x->t0 ? hi - x->t0 : 0;
		memo_put(x, r);
	} else if (x->mode == CM_TM_REPLAY) {
		x->src_n = x->rec->n;
		x->src_cur = x->t0 + x->rec->end_cur;
		x->rec = NULL;
		x->mode = CM_TM_DIRECT;
	}
}

void cm_tm_abort(cm_tm *x, uint64_t now)
{
	if (x->mode == CM_TM_REPLAY)
		diverge(x);
	else if (x->mode == CM_TM_RECORD) {
		rec_free(x->rec);
		x->rec = NULL;
		x->mode = CM_TM_DIRECT;
	}
	catch_up(x);
	loom_tdma_idle(&x->td, now);
}

uint32_t cm_tm_fetch(cm_tm *x, uint64_t now, uint32_t pc, const loom_insn *in)
{
	if (x->mode == CM_TM_REPLAY) {
		const cm_trec *r = x->rec;
		const cm_tin *e = x->k < r->n ? &r->in[x->k] : NULL;
		if (e && e->op == OP_FETCH && e->fi < r->nf && r->pcs[e->fi] == pc && !memcmp(&r->ins[e->fi], in, sizeof *in) &&
		    expect(x, OP_FETCH, now, e->fi)) {
			x->last_fetch = x->k - 1;
			return e->fi;
		}
		if (x->mode == CM_TM_REPLAY)
			diverge(x);
	}
	if (x->mode == CM_TM_RECORD) {
		cm_trec *r = x->rec;
		if (r->nf == r->capf) {
			size_t cap = r->capf ? 2 * r->capf : 256;
			loom_insn *nb = realloc(r->ins, cap * sizeof *nb);
			if (nb)
				r->ins = nb;
			uint32_t *np = nb ? realloc(r->pcs, cap * sizeof *np) : NULL;
			if (np)
				r->pcs = np;
			uint32_t *nc = np ? realloc(r->chk, cap * sizeof *nc) : NULL;
			if (nc)
				r->chk = nc;
			if (!nb || !np || !nc) {
				rec_free(r);
				x->rec = NULL;
				x->mode = CM_TM_DIRECT;
				loom_tdma_fetch(&x->td, now);
				return 0;
			}
			r->capf = cap;
		}
		uint32_t fi = (uint32_t)r->nf++;
		r->ins[fi] = *in;
		r->chk[fi] = UINT32_MAX; /* not decoded (yet) */
		r->pcs[fi] = pc;
		if (pc != r->base + fi * LOOM_INSN_BYTES)
			r->contiguous = 0;
		cm_tin *e = push_in(x, OP_FETCH, now);
		if (e) {
			e->fi = fi;
			x->last_fetch = x->rec->n - 1;
		}
		loom_tdma_fetch(&x->td, now);
		return fi;
	}
	loom_tdma_fetch(&x->td, now);
	return 0;
}

int cm_tm_checked(const cm_tm *x, uint32_t fi, unsigned *cause, uint32_t *field)
{
	if (x->mode != CM_TM_REPLAY || fi >= x->rec->nf || x->rec->chk[fi] == UINT32_MAX)
		return 0;
	*cause = x->rec->chk[fi] >> 16;
	*field = x->rec->chk[fi] & 0xffffu;
	return 1;
}

void cm_tm_check_result(cm_tm *x, uint32_t fi, unsigned cause, uint32_t field)
{
	if (x->mode == CM_TM_RECORD && fi < x->rec->nf && cause <= 0xffffu && field <= 0xffffu)
		x->rec->chk[fi] = (uint32_t)cause << 16 | field;
}

void cm_tm_accept(cm_tm *x, int engine, uint64_t now, const loom_insn *in, uint32_t fi, int mark)
{
	int op = engine == LOOM_TDMA_LOAD ? OP_LOAD : mark ? OP_MARK : OP_STORE;
	if (x->mode == CM_TM_REPLAY && expect(x, op, now, fi)) {
		if (x->nfifo[engine] < 2)
			x->fifo[engine][x->nfifo[engine]++] = x->k - 1;
		return;
	}
	if (x->mode == CM_TM_RECORD) {
		cm_tin *e = push_in(x, op, now);
		if (e) {
			e->fi = fi;
			if (x->nfifo[engine] < 2)
				x->fifo[engine][x->nfifo[engine]++] = x->rec->n - 1;
		}
	}
	loom_tdma_accept(&x->td, engine, now, in, mark);
}

uint64_t cm_tm_compute(cm_tm *x, uint64_t now, const loom_insn *in, uint32_t fi)
{
	if (x->mode == CM_TM_REPLAY) {
		const cm_tin *e = expect(x, OP_COMPUTE, now, fi);
		if (e) {
			x->last_comp = x->k - 1;
			return e->res == NEVER ? NEVER : x->t0 + e->res;
		}
	}
	cm_tin *e = NULL;
	if (x->mode == CM_TM_RECORD) {
		e = push_in(x, OP_COMPUTE, now);
		if (e) {
			e->fi = fi;
			x->last_comp = x->rec->n - 1;
		}
	}
	uint64_t d = loom_tdma_compute(&x->td, now, in);
	if (e && d != NEVER)
		e->res = d - x->t0;
	return d;
}

void cm_tm_retire(cm_tm *x, int engine, uint64_t now)
{
	int op = engine == LOOM_TDMA_LOAD ? OP_RETIRE_LOAD : OP_RETIRE_STORE;
	if (x->mode == CM_TM_REPLAY && expect(x, op, now, 0)) {
		x->fifo[engine][0] = x->fifo[engine][1];
		x->nfifo[engine]--;
		return;
	}
	if (x->mode == CM_TM_RECORD && x->nfifo[engine]) {
		uint64_t d = loom_tdma_done(&x->td, engine);
		cm_tin *h = &x->rec->in[x->fifo[engine][0]];
		if (d != NEVER)
			h->res = d - x->t0;
		if (push_in(x, op, now)) {
			x->fifo[engine][0] = x->fifo[engine][1];
			x->nfifo[engine]--;
		}
	}
	loom_tdma_retire(&x->td, engine);
}

void cm_tm_advance(cm_tm *x, uint64_t t)
{
	if (t > x->cur)
		x->cur = t;
	if (x->mode != CM_TM_REPLAY)
		loom_tdma_advance(&x->td, t);
}

/* a run that stops early (1) has done events short of t - 1: the cursor
 * moves once a run gets through */
int cm_tm_run(cm_tm *x, uint64_t t)
{
	if (!t)
		return 0;
	int r = x->mode == CM_TM_REPLAY ? 0 : loom_tdma_run(&x->td, t);
	if (!r && t - 1 > x->cur)
		x->cur = t - 1;
	return r;
}

uint64_t cm_tm_next(cm_tm *x)
{
	return x->mode == CM_TM_REPLAY ? NEVER : loom_tdma_next(&x->td);
}

uint64_t cm_tm_done(cm_tm *x, int engine)
{
	if (x->mode == CM_TM_REPLAY) {
		if (!x->nfifo[engine])
			return NEVER;
		uint64_t r = x->rec->in[x->fifo[engine][0]].res;
		return r == NEVER ? NEVER : x->t0 + r;
	}
	uint64_t d = loom_tdma_done(&x->td, engine);
	if (x->mode == CM_TM_RECORD && d != NEVER && x->nfifo[engine])
		x->rec->in[x->fifo[engine][0]].res = d - x->t0;
	return d;
}

uint64_t cm_tm_fetch_done(cm_tm *x)
{
	if (x->mode == CM_TM_REPLAY) {
		uint64_t r = x->rec->in[x->last_fetch].res;
		return r == NEVER ? NEVER : x->t0 + r;
	}
	uint64_t d = loom_tdma_fetch_done(&x->td);
	if (x->mode == CM_TM_RECORD && d != NEVER && x->rec->in[x->last_fetch].op == OP_FETCH)
		x->rec->in[x->last_fetch].res = d - x->t0;
	return d;
}

uint64_t cm_tm_cdone(cm_tm *x)
{
	if (x->mode == CM_TM_REPLAY) {
		uint64_t r = x->rec->in[x->last_comp].res;
		return r == NEVER ? NEVER : x->t0 + r;
	}
	uint64_t d = loom_tdma_cdone(&x->td);
	if (x->mode == CM_TM_RECORD && d != NEVER && x->rec->in[x->last_comp].op == OP_COMPUTE &&
	    x->rec->in[x->last_comp].res == NEVER)
		x->rec->in[x->last_comp].res = d - x->t0;
	return d;
}
