/* tsim_prog.c - a whole program in cycles (loom_tsim_run, common/tsim.h):
 * the command processor of the RTL (npu_ctrl) around the DMA engines and
 * the DRAM of common/tsim.c and the compute engines' durations of
 * common/timing.c:
 *
 *   fetch              one instruction at a time: its address in cycle f,
 *                      decoded two cycles after its last beat arrives, then
 *                      pushed into its queue (8 deep; visible the cycle
 *                      after) and the next address goes out the cycle after;
 *                      a full queue holds the fetcher.
 *   engines            the load and the store engine hold two instructions
 *                      each, the compute engines one; a queue's head starts
 *                      when its engine has room and the tokens it pops are
 *                      there. Tokens an instruction pushes count from the
 *                      cycle after its done pulse, when its engine also has
 *                      room again.
 *   MARK, FINISH       wait until every queue and engine is idle; MARK's
 *                      record (the CYCLES counter of that cycle) is written by
 *                      the store engine, the fetcher goes on the cycle after
 *                      its done pulse. FINISH completes 5 cycles later. */
#include "common/tsim.h"

#include <stdlib.h>
#include <string.h>

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

enum { Q_LD, Q_CP, Q_ST, NQ };
enum { FS_ADDR, FS_DATA, FS_DEC, FS_BAR, FS_MARK, FS_END };

typedef struct tsim {
	loom_tdma d;
	const loom_insn *in;
	size_t n, pc;
	/* queues: instruction indices and the cycle each becomes visible */
	size_t q[NQ][LOOM_QUEUE_DEPTH];
	uint64_t qv[NQ][LOOM_QUEUE_DEPTH];
	unsigned qh[NQ], qn[NQ];
	/* per engine, the push bits of the instructions it holds (oldest
	 * first); the compute engine's end (done pulse + 1) */
	uint32_t push[NQ][2];
	unsigned nh[NQ];
	uint64_t cp_end;
	uint32_t tok[4];
	int fs;
	uint64_t ft;             /* FS_ADDR: the address cycle; FS_DEC: the decode cycle */
	size_t held;             /* the instruction the fetcher holds */
} tsim;

/* tokens: 0 L->C, 1 C->L, 2 C->S, 3 S->C; popped (w0 bits 8, 9), pushed (10, 11) */
static const int8_t pop_t[NQ][2] = {{-1, 1}, {0, 3}, {2, -1}};
static const int8_t push_t[NQ][2] = {{-1, 0}, {1, 2}, {3, -1}};

/* the end (done pulse + 1: tokens visible, slot free) of the oldest
 * instruction engine e holds */
static uint64_t ts_end(const tsim *s, int e)
{
	if (!s->nh[e])
		return LOOM_TDMA_NEVER;
	uint64_t d;
	if (e == Q_CP) {
		if (s->cp_end != LOOM_TDMA_NEVER)
			return s->cp_end;
		d = loom_tdma_cdone(&s->d);
	} else {
		d = loom_tdma_done(&s->d, e);
	}
	return d == LOOM_TDMA_NEVER ? d : d + 1;
}

/* the head of queue e starts in cycle now when it may; 1 if it did */
static int ts_accept(tsim *s, int e, uint64_t now)
{
	unsigned cap = e == Q_CP ? 1 : 2;
	if (!s->qn[e] || s->nh[e] >= cap || s->qv[e][s->qh[e]] > now)
		return 0;
	const loom_insn *in = &s->in[s->q[e][s->qh[e]]];
	uint32_t w0 = in->w[0];
	for (int k = 0; k < 2; k++)
		if (pop_t[e][k] >= 0 && (w0 >> (8 + k) & 1) && !s->tok[pop_t[e][k]])
			return 0;
	for (int k = 0; k < 2; k++)
		if (pop_t[e][k] >= 0 && (w0 >> (8 + k) & 1))
			s->tok[pop_t[e][k]]--;
	s->qh[e] = (s->qh[e] + 1) % LOOM_QUEUE_DEPTH;
	s->qn[e]--;
	if (e == Q_CP) {
		s->cp_end = loom_tdma_compute(&s->d, now, in);
		if (s->cp_end != LOOM_TDMA_NEVER)
			s->cp_end++;
	} else {
		loom_tdma_accept(&s->d, e, now, in, 0);
	}
	s->push[e][s->nh[e]++] = w0 >> 10 & 3;
	return 1;
}

static void ts_retire(tsim *s, int e, uint64_t now)
{
	while (s->nh[e] && ts_end(s, e) <= now) {
		for (int k = 0; k < 2; k++)
			if (push_t[e][k] >= 0 && (s->push[e][0] >> k & 1))
				s->tok[push_t[e][k]]++;
		s->push[e][0] = s->push[e][1];
		s->nh[e]--;
		if (e != Q_CP)
			loom_tdma_retire(&s->d, e);
	}
}

static int ts_idle(const tsim *s)
{
	for (int e = 0; e < NQ; e++)
		if (s->qn[e] || s->nh[e])
			return 0;
	return 1;
}

/* lint: long function: the fetcher's states, one case each */
/* the fetcher in cycle now; 1 if it moved */
static int ts_fetch(tsim *s, uint64_t now, uint64_t *marks, size_t nmarks, size_t *nm)
{
	switch (s->fs) {
	case FS_ADDR:
		if (s->ft > now)
			return 0;
		if (s->pc >= s->n) {
			s->fs = FS_END;
			s->ft = now;
			return 1;
		}
		s->held = s->pc;
		loom_tdma_fetch(&s->d, now);
		s->fs = FS_DATA;
		return 1;
	case FS_DATA: {
		uint64_t f = loom_tdma_fetch_done(&s->d);
		if (f == LOOM_TDMA_NEVER)
			return 0;
		s->ft = f + 2;
		s->fs = FS_DEC;
		return 1;
	}
	case FS_DEC: {
		if (s->ft > now)
			return 0;
		int q = loom_op_queue(loom_insn_opcode(&s->in[s->held]));
		if (q < 0 || q >= NQ) {
			s->fs = FS_BAR;
			s->ft = now + 1;
			return 1;
		}
		if (s->qn[q] == LOOM_QUEUE_DEPTH)
			return 0;
		unsigned k = (s->qh[q] + s->qn[q]++) % LOOM_QUEUE_DEPTH;
		s->q[q][k] = s->held;
		s->qv[q][k] = now + 1;
		s->pc++;
		s->fs = FS_ADDR;
		s->ft = now + 1;
		return 1;
	}
	case FS_BAR:
		if (s->ft > now || !ts_idle(s))
			return 0;
		if (loom_insn_opcode(&s->in[s->held]) != LOOM_OP_MARK) {
			s->fs = FS_END;
			s->ft = now + 5;
			return 1;
		}
		if (*nm < nmarks)
			marks[*nm] = now;
		(*nm)++;
		loom_tdma_accept(&s->d, LOOM_TDMA_STORE, now, &s->in[s->held], 1);
		s->fs = FS_MARK;
		return 1;
	case FS_MARK: {
		uint64_t d = loom_tdma_done(&s->d, LOOM_TDMA_STORE);
		if (d > now)
			return 0;
		loom_tdma_retire(&s->d, LOOM_TDMA_STORE);
		s->pc++;
		s->fs = FS_ADDR;
		s->ft = now + 1;
		return 1;
	}
	default:
		return 0;
	}
}

/* the next cycle the fetcher, a queue or an engine has something to do
 * after now (as far as the DMA engines' events so far tell); NEVER: nothing */
static uint64_t ts_next(const tsim *s, uint64_t now)
{
	uint64_t t = LOOM_TDMA_NEVER;
	for (int e = 0; e < NQ; e++) {
		uint64_t x = ts_end(s, e);
		if (x > now && x < t)
			t = x;
		if (s->qn[e] && s->qv[e][s->qh[e]] > now && s->qv[e][s->qh[e]] < t)
			t = s->qv[e][s->qh[e]];
	}
	if (s->fs == FS_MARK) {
		uint64_t d = loom_tdma_done(&s->d, LOOM_TDMA_STORE);
		if (d > now && d < t)
			t = d;
	} else if (s->fs == FS_DATA) {
		if (loom_tdma_fetch_done(&s->d) != LOOM_TDMA_NEVER)
			t = now + 1;
	} else if (s->fs != FS_END && s->ft > now && s->ft < t) {
		t = s->ft;
	}
	return t;
}

uint64_t loom_tsim_run(const loom_timing *t, const loom_insn *in, size_t n, uint64_t *marks, size_t nmarks)
{
	return loom_tsim_run_at(t, 0, in, n, marks, nmarks);
}

uint64_t loom_tsim_run_at(const loom_timing *t, uint64_t start, const loom_insn *in, size_t n, uint64_t *marks,
			  size_t nmarks)
{
	tsim *s = calloc(1, sizeof *s);
	if (!s || loom_tdma_init(&s->d, t)) {
		free(s);
		return LOOM_TDMA_NEVER;
	}
	s->in = in;
	s->n = n;
	size_t nm = 0;
	uint64_t now = start, ret = LOOM_TDMA_NEVER;
	if (start)
		loom_tdma_idle(&s->d, start); /* as the C model starts a job (cm_timing.c) */
	for (;;) {
		/* DMA work of earlier cycles; a fetch goes out before this cycle's bursts */
		if (now > start)
			loom_tdma_advance(&s->d, now - 1);
		int moved = 0;
		for (int e = 0; e < NQ; e++)
			ts_retire(s, e, now);
		for (int e = 0; e < NQ; e++)
			moved |= ts_accept(s, e, now);
		moved |= ts_fetch(s, now, marks, nmarks, &nm);
		loom_tdma_advance(&s->d, now);
		if (s->fs == FS_END && ts_idle(s)) {
			ret = umax(now, s->ft);
			break;
		}
		/* the DMA engines run on until the next cycle with something to
		 * do here (which what they find out may bring closer) */
		uint64_t nx = moved ? now + 1 : ts_next(s, now);
		while (!moved && loom_tdma_run(&s->d, nx))
			nx = ts_next(s, now);
		if (nx == LOOM_TDMA_NEVER && !moved) {
			nx = loom_tdma_next(&s->d);
			if (nx == LOOM_TDMA_NEVER)
				break; /* deadlock */
		}
		if (s->d.oom)
			break;
		now = nx <= now ? now + 1 : nx;

	}
	loom_tdma_free(&s->d);
	free(s);
	return ret;
}
