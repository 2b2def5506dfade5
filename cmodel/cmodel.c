/* cmodel.c - the bit-exact C model of the Loom tensor engine: the "cmodel"
 * backend of include/loom/hw.h (loom_cmodel_open).
 *
 * Results, error causes (ERR_CAUSE/ERR_PC/ERR_INFO) and the deterministic
 * counters (MACS, DRAM_RD_BYTES, DRAM_WR_BYTES, INSNS, BANK_CONFLICTS = 0,
 * and the energy event counters of common/events.c) follow docs/ISA.md
 * exactly; the RTL is compared against the C model by random co-simulation.
 * Each instruction's effect comes from the data path of cm_exec.c (plain C,
 * or AVX2 kernels with the same bytes). Cycle counters are estimates from a
 * resumable discrete-event simulation of the fetcher, the three queues,
 * their engines and the four token counters.
 *
 * Timing: the one timing model of common/ (timing.h, tsim.h), with the
 * DRAM latency and bandwidth of the run (opts override the configuration's):
 * the load and store DMA, the instruction fetch, the DRAM channel and the
 * scratchpad banks are followed event by event by a loom_tdma as the RTL
 * does them (the load and the store engine hold two instructions each and
 * overlap them), the compute engines' durations are timing.c's. cm_timing.c
 * stands between this file and tsim: a job that ran before from the same
 * state is answered from its recording, with the same cycles. Its
 * per-layer cycles against the RTL's: docs/DSE.md, "Timing model accuracy".
 *
 * Event model (all of it observable only through cycle counters, except
 * where noted as a contract the RTL must share):
 *   - The fetcher fetches one instruction at a time, in order, and never
 *     reads past a FINISH, past a MARK before its record is written, past an
 *     instruction that fails a check, or while it holds an instruction for a
 *     full queue. DRAM_RD_BYTES counts every instruction it reads, including
 *     one that then fails a check; a fetch refused by FETCH_RANGE or
 *     MISALIGNED reads nothing. (Contract: makes DRAM_RD_BYTES in MARK records
 *     and after FINISH exact.)
 *   - Fetch checks are FETCH_RANGE (pc + 32 > DRAM bytes) first, then
 *     MISALIGNED (pc not 32-byte aligned, info 0xffff), as listed in ISA.md.
 *   - An instruction's functional effect (and its MACS / DRAM byte counts)
 *     is applied atomically when it starts (its engine accepts it); it
 *     pushes its tokens and counts in INSNS the cycle after its done pulse.
 *     A queue slot is freed when its instruction starts; an instruction the
 *     fetcher pushes is visible to its engine the cycle after.
 *   - At one instant the model processes, until nothing changes: engine
 *     completions (load, compute, store), then queue-head starts (load,
 *     compute, store) and the fetcher's step.
 *   - MARK: at the barrier the counters are snapshot (CYCLES = cycles since
 *     START), the record is written, then DRAM_WR_BYTES counts the record's
 *     beats; INSNS counts the MARK when its write has completed.
 *   - DEADLOCK: when no engine is busy, the fetcher waits at a MARK/FINISH
 *     barrier or on a full queue, and every queue is empty or its head waits
 *     for a token. ERR_PC = the address of the instruction the fetcher holds
 *     (the MARK/FINISH, or the instruction that does not fit its queue);
 *     ERR_INFO = 0xffff. (Contract.)
 *   - TOKEN_OVERFLOW: ERR_PC = the pushing instruction, ERR_INFO = 0xffff.
 *   - BUS_ERROR (a transfer answered with an error by the port, or meeting
 *     the injected range of loom_hw_opts.bus_err_*): a fetch fails at its
 *     decode; a LOAD, STORE or MARK, whose effect is applied as usual, when
 *     it completes (before its pushes); ERR_PC = that instruction, ERR_INFO
 *     = 0xffff. (Contract: the RTL's engines report it with their done.)
 *   - On an error the fetcher stops, instructions still waiting in queues are
 *     dropped (not run), instructions already started finish, then
 *     STATUS.ERROR, IRQ_STATUS.ERROR and ERR_* are set. The first error wins.
 *   - CTRL.START while idle clears queues, tokens, counters and ERR_* (cause
 *     and pc 0, info 0xffff), sets STATUS = BUSY (while busy it is ignored); SP, ACC and IRQ_STATUS are kept. CTRL.ABORT while
 *     busy drops everything and sets STATUS = 0 (no DONE, no ERROR, no IRQ);
 *     while idle it does nothing. ABORT wins over START in one write.
 *   - CYCLES and BUSY_ and STALL_ count while STATUS.BUSY; STALL_x counts
 *     time the head of queue x waits for a token with its engine idle.
 *   - run() with STATUS not busy just lets max_cycles pass.
 */
#include "loom/hw.h"
#include "loom/isa.h"
#include "loom/core.h"
#include "cmodel/cmodel_internal.h"
#include "cmodel/rv_iss.h"
#include "common/events.h"
#include "common/timing.h"
#include "common/tsim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { T_LC, T_CL, T_CS, T_SC, T_COUNT }; /* token counters */
enum { E_LOAD = LOOM_Q_LOAD, E_COMPUTE = LOOM_Q_COMPUTE, E_STORE = LOOM_Q_STORE, E_COUNT };

enum fetch_state {
	F_IDLE,     /* not running */
	F_ISSUE,    /* about to fetch the instruction at pc */
	F_FETCH,    /* fetching, done at fend */
	F_WAIT_Q,   /* holding an instruction whose queue is full */
	F_WAIT_BAR, /* holding a MARK or FINISH until everything is idle */
	F_MARK,     /* writing a MARK record, done at fend */
	F_FINISH,   /* FINISH: every engine idle, the run ends at fend */
	F_STOP,     /* stopped by an error, draining the engines */
};

struct slot {
	loom_insn in;
	uint32_t pc;
	uint32_t fi;   /* its fetch, for the timing (cm_timing.c) */
	uint64_t vis;  /* in a queue: the cycle it is visible to its engine */
	int berr;      /* a transfer of its fetch, LOAD, STORE or MARK was a bus error */
};

struct queue {
	struct slot s[LOOM_QUEUE_DEPTH];
	unsigned head, n;
};

/* an engine's instructions (the load and store engines hold two, the
 * compute engines one), oldest first; the compute engine's end (its done
 * pulse + 1); the DMA engines' come from the timing model (tdma) */
struct engine {
	int n;
	struct slot cur[2];
	uint64_t end;
};

struct cmodel {
	struct loom_hw hw; /* must be first */
	uint8_t *dram;
	int8_t *sp;
	int32_t *acc;
	uint64_t dram_bytes;
	uint32_t R, C, B;
	cm_dp dp;                     /* the data path (cm_exec.c) */
	loom_timing tm;               /* durations (common/timing.h) */
	cm_tm td;                     /* the DMA engines, DRAM and SP banks in cycles (common/tsim.h
				       * through cm_timing.c) */

	uint32_t status, insn_base, err_cause, err_pc, err_info, irq_status, irq_mask;
	loom_windows win;             /* WIN_* registers */

	/* the control-core complex (docs/CONTROL.md): the ISS, its TCMs and
	 * peripheral, the host's register block */
	struct rv_iss iss;
	uint8_t itcm[0x10000], dtcm[0x8000];
	int core_run;                 /* CORE_CTRL.RUN: the core runs */
	uint64_t mtimecmp;
	uint32_t doorbell, tohost, h2f[4], f2h[4], hirq_status, hirq_mask, tcm_addr;
	uint64_t ctr[LOOM_CTR_COUNT]; /* MACS kept whole in ctr[LOOM_CTR_MACS_LO] */
	uint64_t evt[LOOM_EVT_COUNT]; /* energy events (common/events.c), exact */
	uint64_t now;                 /* model time, monotonic across runs */

	int running; /* STATUS.BUSY */
	int draining;
	uint32_t p_cause, p_pc, p_info;

	enum fetch_state fst;
	uint32_t pc;
	uint64_t fend;                /* F_ISSUE: the address cycle; F_FETCH: the decode cycle; F_MARK:
				       * the record's done pulse (LOOM_TDMA_NEVER while not known) */
	struct slot held;

	uint32_t tok[T_COUNT];
	struct queue q[E_COUNT];
	struct engine e[E_COUNT];

	/* the DRAM port of the SystemC module (loom_cmodel_set_port), has_port
	 * 0 for the cmodel backend; edge: run() stops on the interrupt line's
	 * rising edge, not on its level (loom_cmodel_advance) */
	loom_cmodel_port port;
	int has_port;
	/* the injected bus-error range (loom_hw_opts.bus_err_*) in whole beats,
	 * berr_hi == berr_lo: none; bus: has_port or a range, the engines'
	 * transfers are looked at (cm_port.c) */
	uint64_t berr_lo, berr_hi;
	int bus;
};

/* Tokens popped (w0 bits 8, 9) and pushed (w0 bits 10, 11) per queue. */
static const int8_t pop_tok[E_COUNT][2] = {{-1, T_CL}, {T_LC, T_SC}, {T_CS, -1}};
static const int8_t push_tok[E_COUNT][2] = {{-1, T_LC}, {T_CL, T_CS}, {T_SC, -1}};

#define CM(h) ((struct cmodel *)(h))
#define F(op, f) loom_insn_get(in, LOOM_F_##op##_##f)

static void set_err(struct cmodel *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->hw.err, sizeof m->hw.err, fmt, ap);
	va_end(ap);
}


/* ---- the DRAM port (loom_cmodel_set_port, cm_port.c) ---- */

/* 1: a bus error (the port's answer or the injected range; never for the
 * control core, whose window does not see bus errors: docs/ISA.md) */
static int port_span(struct cmodel *m, unsigned kind, int write, uint64_t a, uint64_t n)
{
	int core = kind == LOOM_CMODEL_PORT_CORE;
	cm_port_xfer x = {m->has_port ? &m->port : NULL, kind, write, m->now, m->B, core ? 0 : m->berr_lo,
			  core ? 0 : m->berr_hi};
	return cm_port_span(&x, m->dram, m->dram_bytes, a, n) && !core;
}

/* a LOAD's reads before its effect, a STORE's writes after it; 1: a bus error */
static int port_rows(struct cmodel *m, const loom_insn *in, int store)
{
	cm_port_xfer x = {m->has_port ? &m->port : NULL, store ? LOOM_CMODEL_PORT_STORE : LOOM_CMODEL_PORT_LOAD,
			  store, m->now, m->B, m->berr_lo, m->berr_hi};
	cm_rows r;
	/* SOURCE 3's N3 is its residual step and STRIDE3 an SP line: one plane */
	int res = store && F(STORE, SOURCE) == LOOM_MEM_ACC_RESADD;
	if (store)
		r = (cm_rows){F(STORE, DRAM_ADDR), 4u * F(STORE, ROW_WORDS), F(STORE, N1), F(STORE, N2),
			      res ? 1 : F(STORE, N3), F(STORE, STRIDE1), F(STORE, STRIDE2), res ? 0 : F(STORE, STRIDE3)};
	else
		r = (cm_rows){F(LOAD, DRAM_ADDR), 4u * F(LOAD, ROW_WORDS), F(LOAD, N1), F(LOAD, N2),
			      F(LOAD, N3), F(LOAD, STRIDE1), F(LOAD, STRIDE2), F(LOAD, STRIDE3)};
	return cm_port_rows(&x, m->dram, m->dram_bytes, &r);
}

/* ---- event model ---- */

static void fail(struct cmodel *m, uint32_t cause, uint32_t pc, uint32_t info)
{
	if (m->draining)
		return;
	m->draining = 1;
	m->p_cause = cause;
	m->p_pc = pc;
	m->p_info = info;
	m->fst = F_STOP;
	for (int i = 0; i < E_COUNT; i++)
		m->q[i].n = m->q[i].head = 0;
}

static int engines_idle(const struct cmodel *m)
{
	for (int i = 0; i < E_COUNT; i++)
		if (m->e[i].n)
			return 0;
	return 1;
}

static int all_idle(const struct cmodel *m)
{
	for (int i = 0; i < E_COUNT; i++)
		if (m->e[i].n || m->q[i].n)
			return 0;
	return 1;
}

/* the end (done pulse + 1: tokens count, the engine has room) of engine
 * i's oldest instruction; LOOM_TDMA_NEVER if none or not known yet */
static uint64_t eng_end(struct cmodel *m, int i)
{
	if (!m->e[i].n)
		return LOOM_TDMA_NEVER;
	uint64_t d;
	if (i == E_COMPUTE) {
		if (m->e[i].end != LOOM_TDMA_NEVER)
			return m->e[i].end;
		d = cm_tm_cdone(&m->td);
	} else {
		d = cm_tm_done(&m->td, i);
	}
	return d == LOOM_TDMA_NEVER ? d : d + 1;
}

/* an instruction whose transfers met a bus error ends the run with
 * BUS_ERROR when it completes (when the RTL's engine has drained its
 * bursts and seen every response), before its pushes */
static void complete(struct cmodel *m, int i)
{
	struct engine *e = &m->e[i];
	uint32_t w0 = e->cur[0].in.w[0];
	uint32_t pc = e->cur[0].pc;
	int berr = e->cur[0].berr;
	e->cur[0] = e->cur[1];
	e->n--;
	if (i != E_COMPUTE)
		cm_tm_retire(&m->td, i, m->now);
	m->ctr[LOOM_CTR_INSNS]++;
	if (berr)
		fail(m, LOOM_ERR_BUS_ERROR, pc, LOOM_INFO_NONE);
	for (int k = 0; k < 2; k++) {
		int t = push_tok[i][k];
		if (t >= 0 && (w0 >> (10 + k) & 1) && ++m->tok[t] > LOOM_TOKEN_MAX)
			fail(m, LOOM_ERR_TOKEN_OVERFLOW, pc, LOOM_INFO_NONE);
	}
}

/* the head of queue i starts now if it is visible, its engine has room
 * and the tokens it pops are there: its effect now, its timing from tdma */
static int try_start(struct cmodel *m, int i)
{
	struct queue *q = &m->q[i];
	struct engine *e = &m->e[i];
	if (e->n >= (i == E_COMPUTE ? 1 : 2) || !q->n)
		return 0;
	const struct slot *sl = &q->s[q->head];
	if (sl->vis > m->now)
		return 0;
	uint32_t w0 = sl->in.w[0];
	for (int k = 0; k < 2; k++) {
		int t = pop_tok[i][k];
		if (t >= 0 && (w0 >> (8 + k) & 1) && !m->tok[t])
			return 0;
	}
	for (int k = 0; k < 2; k++) {
		int t = pop_tok[i][k];
		if (t >= 0 && (w0 >> (8 + k) & 1))
			m->tok[t]--;
	}
	struct slot *cur = &e->cur[e->n++];
	*cur = *sl;
	q->head = (q->head + 1) % LOOM_QUEUE_DEPTH;
	q->n--;
	loom_insn_events(m->R, m->C, m->tm.vec_macs, &cur->in, m->evt);
	switch (i) {
	case E_LOAD:
		cur->berr = m->bus && port_rows(m, &cur->in, 0);
		m->ctr[LOOM_CTR_DRAM_RD_BYTES] += cm_load(&m->dp, &cur->in);
		cm_tm_accept(&m->td, LOOM_TDMA_LOAD, m->now, &cur->in, cur->fi, 0);
		break;
	case E_COMPUTE:
		m->ctr[LOOM_CTR_MACS_LO] += cm_compute(&m->dp, &cur->in);
		e->end = cm_tm_compute(&m->td, m->now, &cur->in, cur->fi);
		if (e->end != LOOM_TDMA_NEVER)
			e->end++;
		break;
	default:
		m->ctr[LOOM_CTR_DRAM_WR_BYTES] += cm_store(&m->dp, &cur->in);
		cur->berr = m->bus && port_rows(m, &cur->in, 1);
		cm_tm_accept(&m->td, LOOM_TDMA_STORE, m->now, &cur->in, cur->fi, 0);
		break;
	}
	return 1;
}

/* the instruction the fetcher holds into its queue (visible the cycle
 * after); the next address goes out the cycle after */
static int dispatch(struct cmodel *m)
{
	int i = loom_op_queue(loom_insn_opcode(&m->held.in));
	struct queue *q = &m->q[i];
	if (q->n == LOOM_QUEUE_DEPTH)
		return 0;
	m->held.vis = m->now + 1;
	q->s[(q->head + q->n) % LOOM_QUEUE_DEPTH] = m->held;
	q->n++;
	m->pc += LOOM_INSN_BYTES;
	m->fst = F_ISSUE;
	m->fend = m->now + 1;
	return 1;
}

static void issue_fetch(struct cmodel *m)
{
	if ((uint64_t)m->pc + LOOM_INSN_BYTES > m->dram_bytes) {
		fail(m, LOOM_ERR_FETCH_RANGE, m->pc, LOOM_INFO_NONE);
		return;
	}
	if (m->pc % LOOM_INSN_BYTES) {
		fail(m, LOOM_ERR_MISALIGNED, m->pc, LOOM_INFO_NONE);
		return;
	}
	if (!loom_windows_allow(&m->win, m->pc, (uint64_t)m->pc + LOOM_INSN_BYTES)) {
		fail(m, LOOM_ERR_DMA_WINDOW, m->pc, LOOM_INFO_NONE);
		return;
	}
	uint64_t beats = loom_fetch_beats(&m->tm);
	m->held.berr = m->bus && port_span(m, LOOM_CMODEL_PORT_FETCH, 0, m->pc & ~(uint64_t)(m->B - 1), beats * m->B);
	for (int k = 0; k < LOOM_INSN_WORDS; k++)
		m->held.in.w[k] = get_le32(m->dram + m->pc + 4 * k);
	m->held.pc = m->pc;
	m->ctr[LOOM_CTR_DRAM_RD_BYTES] += beats * m->B;
	m->held.fi = cm_tm_fetch(&m->td, m->now, m->pc, &m->held.in);
	m->fend = LOOM_TDMA_NEVER;
	m->fst = F_FETCH;
}

static void decode(struct cmodel *m)
{
	uint32_t field;
	unsigned cause;
	/* a fetch answered with a bus error is not decoded */
	if (m->held.berr) {
		fail(m, LOOM_ERR_BUS_ERROR, m->held.pc, LOOM_INFO_NONE);
		return;
	}
	/* a replayed job's instruction passed the same checks when it was recorded */
	if (!cm_tm_checked(&m->td, m->held.fi, &cause, &field)) {
		cause = loom_insn_check_win(&m->hw.cfg, &m->win, &m->held.in, &field);
		cm_tm_check_result(&m->td, m->held.fi, cause, field);
	}
	if (cause != LOOM_ERR_NONE) {
		fail(m, cause, m->held.pc, field);
		return;
	}
	switch (loom_op_queue(loom_insn_opcode(&m->held.in))) {
	case LOOM_Q_CTRL:
		m->fst = F_WAIT_BAR;
		break;
	default:
		if (!dispatch(m))
			m->fst = F_WAIT_Q;
	}
}

static void write_mark(struct cmodel *m)
{
	const loom_insn *in = &m->held.in;
	uint64_t a = F(MARK, DRAM_ADDR);
	uint8_t *d = m->dram + a;
	put_le32(d, F(MARK, MARK_ID));
	for (int i = 0; i < LOOM_CTR_COUNT; i++) {
		uint32_t v = (uint32_t)m->ctr[i];
		if (i == LOOM_CTR_MACS_HI)
			v = (uint32_t)(m->ctr[LOOM_CTR_MACS_LO] >> 32);
		put_le32(d + 4 + 4 * i, v);
	}
	for (unsigned k = 1 + LOOM_CTR_COUNT; k < LOOM_MARK_BYTES / 4; k++)
		put_le32(d + 4 * k, 0);
	m->held.berr = m->bus && port_span(m, LOOM_CMODEL_PORT_MARK, 1, a, LOOM_MARK_BYTES);
	uint64_t beats = loom_row_beats(&m->tm, a, LOOM_MARK_BYTES);
	m->ctr[LOOM_CTR_DRAM_WR_BYTES] += beats * m->B;
	cm_tm_accept(&m->td, LOOM_TDMA_STORE, m->now, in, m->held.fi, 1);
	m->fend = LOOM_TDMA_NEVER;
	m->fst = F_MARK;
}

static void finish_error(struct cmodel *m)
{
	m->running = 0;
	m->draining = 0;
	m->fst = F_IDLE;
	m->status = LOOM_STATUS_ERROR;
	m->irq_status |= LOOM_IRQ_ERROR;
	m->err_cause = m->p_cause;
	m->err_pc = m->p_pc;
	m->err_info = m->p_info;
	cm_tm_end(&m->td);
}

/* the fetch's decode cycle and the MARK record's done, once tdma knows them */
static void fetch_times(struct cmodel *m)
{
	if (m->fst == F_FETCH && m->fend == LOOM_TDMA_NEVER) {
		uint64_t f = cm_tm_fetch_done(&m->td);
		if (f != LOOM_TDMA_NEVER)
			m->fend = f + 2;
	} else if (m->fst == F_MARK && m->fend == LOOM_TDMA_NEVER) {
		m->fend = cm_tm_done(&m->td, LOOM_TDMA_STORE);
	}
}

/* lint: long function: the fetcher's states, one case each, after the engines */
/* Everything that happens at time m->now, until nothing changes: the DMA
 * engines' events of earlier cycles, completions, starts, the fetcher (its
 * address before a load burst's in the same cycle), this cycle's DMA events. */
static void process(struct cmodel *m)
{
	if (!m->running)
		return;
	if (m->now)
		cm_tm_advance(&m->td, m->now - 1);
	fetch_times(m);
	for (int i = 0; i < E_COUNT; i++)
		while (eng_end(m, i) <= m->now)
			complete(m, i);
	if (m->fst == F_MARK && m->fend <= m->now) {
		cm_tm_retire(&m->td, LOOM_TDMA_STORE, m->now);
		m->ctr[LOOM_CTR_INSNS]++;
		m->pc += LOOM_INSN_BYTES;
		m->fst = F_ISSUE;
		m->fend = m->now + 1;
		if (m->held.berr)
			fail(m, LOOM_ERR_BUS_ERROR, m->held.pc, LOOM_INFO_NONE);
	}
	int changed = 1;
	while (changed && !m->draining) {
		changed = 0;
		for (int i = 0; i < E_COUNT; i++)
			changed |= try_start(m, i);
		switch (m->fst) {
		case F_ISSUE:
			if (m->fend > m->now)
				break;
			issue_fetch(m);
			changed = 1;
			break;
		case F_FETCH:
			fetch_times(m);
			if (m->fend <= m->now) {
				decode(m);
				changed = 1;
			}
			break;
		case F_WAIT_Q:
			changed |= dispatch(m);
			break;
		case F_WAIT_BAR:
			if (!all_idle(m))
				break;
			if (loom_insn_opcode(&m->held.in) == LOOM_OP_MARK) {
				write_mark(m);
				changed = 1;
			} else {
				/* the command processor drains for two cycles */
				m->fst = F_FINISH;
				m->fend = m->now + 2;
			}
			break;
		case F_FINISH:
			if (m->fend > m->now)
				break;
			m->running = 0;
			m->fst = F_IDLE;
			m->status = LOOM_STATUS_DONE;
			m->irq_status |= LOOM_IRQ_DONE;
			cm_tm_end(&m->td);
			return;
		default:
			break;
		}
	}
	cm_tm_advance(&m->td, m->now);
	fetch_times(m);
	if (m->draining && engines_idle(m))
		finish_error(m);
}

/* The next instant the fetcher, a queue or an engine has something to do,
 * as far as the DMA engines' events so far tell; UINT64_MAX if none. */
static uint64_t outer_event(struct cmodel *m)
{
	uint64_t t = UINT64_MAX;
	for (int i = 0; i < E_COUNT; i++) {
		uint64_t x = eng_end(m, i);
		if (x < t)
			t = x;
		const struct queue *q = &m->q[i];
		if (q->n && q->s[q->head].vis > m->now && q->s[q->head].vis < t)
			t = q->s[q->head].vis;
	}
	if ((m->fst == F_ISSUE || m->fst == F_FETCH || m->fst == F_MARK || m->fst == F_FINISH) && m->fend < t)
		t = m->fend;
	return t;
}

/* Earliest pending event after the current instant, UINT64_MAX if none:
 * the DMA engines run ahead (their events until then change nothing else)
 * and stop when they make an engine's done or the fetch's end known,
 * which may bring the next instant closer. */
static uint64_t next_event(struct cmodel *m)
{
	if (!m->running)
		return UINT64_MAX;
	uint64_t t = outer_event(m);
	while (cm_tm_run(&m->td, t)) {
		fetch_times(m);
		t = outer_event(m);
	}
	if (t == UINT64_MAX) {
		uint64_t d = cm_tm_next(&m->td);
		if (d != LOOM_TDMA_NEVER)
			t = d <= m->now ? m->now + 1 : d;
	}
	return t;
}

static void advance(struct cmodel *m, uint64_t t)
{
	uint64_t dt = t - m->now;
	if (m->running && dt) {
		m->ctr[LOOM_CTR_CYCLES] += dt;
		for (int i = 0; i < E_COUNT; i++) {
			if (m->e[i].n)
				m->ctr[LOOM_CTR_BUSY_LOAD + i] += dt;
			else if (m->q[i].n)
				m->ctr[LOOM_CTR_STALL_LOAD + i] += dt;
		}
	}
	m->now = t;
}

static int irq_line(const struct cmodel *m)
{
	return (m->irq_status & m->irq_mask) != 0 || (m->hirq_status & m->hirq_mask) != 0;
}

static void start(struct cmodel *m)
{
	memset(m->ctr, 0, sizeof m->ctr);
	memset(m->evt, 0, sizeof m->evt);
	memset(m->tok, 0, sizeof m->tok);
	memset(m->q, 0, sizeof m->q);
	memset(m->e, 0, sizeof m->e);
	m->err_cause = m->err_pc = 0;
	m->err_info = LOOM_INFO_NONE;
	m->status = LOOM_STATUS_BUSY;
	m->running = 1;
	m->draining = 0;
	m->pc = m->insn_base;
	m->fst = F_ISSUE;
	m->fend = m->now;
	cm_tm_start(&m->td, m->now, m->insn_base, &m->win, m->dram, m->dram_bytes);
}

static void abort_run(struct cmodel *m)
{
	if (!m->running)
		return;
	memset(m->q, 0, sizeof m->q);
	memset(m->e, 0, sizeof m->e);
	cm_tm_abort(&m->td, m->now);
	m->running = 0;
	m->draining = 0;
	m->fst = F_IDLE;
	m->status = 0;
}

/* ---- the control-core complex ----
 * The ISS (cmodel/rv_iss.c) runs the firmware from the TCMs; its bus reaches
 * the TCMs, the tensor engine's registers (the host's view below 0x100), the
 * peripheral of core.def and the DRAM window, with the faults of
 * docs/CONTROL.md. mtime is the ISS's cycle count. Time: each ISS step
 * advances the model by the step's cycles (rv_iss.h cycle model); a core
 * waiting in WFI with nothing pending lets the model jump to the next
 * engine event or timer deadline. */

static uint8_t *tcm_at(struct cmodel *m, uint32_t a, unsigned n)
{
	if (a - LOOM_CORE_ITCM_BASE < sizeof m->itcm && n <= sizeof m->itcm - (a - LOOM_CORE_ITCM_BASE))
		return m->itcm + (a - LOOM_CORE_ITCM_BASE);
	if (a - LOOM_CORE_DTCM_BASE < sizeof m->dtcm && n <= sizeof m->dtcm - (a - LOOM_CORE_DTCM_BASE))
		return m->dtcm + (a - LOOM_CORE_DTCM_BASE);
	return NULL;
}

static uint32_t cm_mmio_read(loom_hw *hw, uint32_t off);
static void cm_mmio_write(loom_hw *hw, uint32_t off, uint32_t val);

static uint32_t core_irq_lines(void *ctx)
{
	struct cmodel *m = ctx;
	uint32_t v = 0;
	if (m->iss.cycle >= m->mtimecmp)
		v |= RV_MIP_MTIP;
	if (m->doorbell)
		v |= 1u << LOOM_CORE_IRQ_DOORBELL;
	if (m->irq_status & LOOM_IRQ_DONE)
		v |= 1u << LOOM_CORE_IRQ_ENGINE_DONE;
	if (m->irq_status & LOOM_IRQ_ERROR)
		v |= 1u << LOOM_CORE_IRQ_ENGINE_ERR;
	return v;
}

static uint32_t periph_read(struct cmodel *m, uint32_t off)
{
	switch (off) {
	case LOOM_CORE_REG_MTIME_LO: return (uint32_t)m->iss.cycle;
	case LOOM_CORE_REG_MTIME_HI: return (uint32_t)(m->iss.cycle >> 32);
	case LOOM_CORE_REG_MTIMECMP_LO: return (uint32_t)m->mtimecmp;
	case LOOM_CORE_REG_MTIMECMP_HI: return (uint32_t)(m->mtimecmp >> 32);
	case LOOM_CORE_REG_IRQ_PENDING: return core_irq_lines(m) & RV_MIP_LOCAL;
	case LOOM_CORE_REG_TOHOST: return m->tohost;
	default:
		if (off >= LOOM_CORE_REG_MBOX_H2F0 && off <= LOOM_CORE_REG_MBOX_H2F3)
			return m->h2f[(off - LOOM_CORE_REG_MBOX_H2F0) / 4];
		if (off >= LOOM_CORE_REG_MBOX_F2H0 && off <= LOOM_CORE_REG_MBOX_F2H3)
			return m->f2h[(off - LOOM_CORE_REG_MBOX_F2H0) / 4];
		return 0;
	}
}

static void periph_write(struct cmodel *m, uint32_t off, uint32_t v)
{
	switch (off) {
	case LOOM_CORE_REG_MTIMECMP_LO: m->mtimecmp = (m->mtimecmp & ~0xffffffffull) | v; break;
	case LOOM_CORE_REG_MTIMECMP_HI: m->mtimecmp = (m->mtimecmp & 0xffffffffull) | (uint64_t)v << 32; break;
	case LOOM_CORE_REG_DOORBELL_ACK: m->doorbell = 0; break;
	case LOOM_CORE_REG_HOST_IRQ_SET: m->hirq_status |= v; break;
	case LOOM_CORE_REG_TOHOST: m->tohost = v; break;
	default:
		if (off >= LOOM_CORE_REG_MBOX_F2H0 && off <= LOOM_CORE_REG_MBOX_F2H3)
			m->f2h[(off - LOOM_CORE_REG_MBOX_F2H0) / 4] = v;
		break;
	}
}

/* a word access to NPU or PERIPH; -1: not such an access */
static int core_reg(struct cmodel *m, uint32_t a, unsigned n, int wr, uint32_t *v)
{
	int npu = a - LOOM_CORE_NPU_BASE < LOOM_CORE_NPU_SIZE;
	int per = a - LOOM_CORE_PERIPH_BASE < LOOM_CORE_PERIPH_SIZE;
	if (!npu && !per)
		return -1;
	if (n != 4)
		return 1; /* word accesses only: access fault */
	uint32_t off = a & 0xfffu;
	if (npu) {
		/* the tensor engine's registers; the core block is the host's */
		if (off >= 0x100)
			*v = wr ? *v : 0;
		else if (wr)
			cm_mmio_write(&m->hw, off, *v);
		else
			*v = cm_mmio_read(&m->hw, off);
	} else if (wr) {
		periph_write(m, off, *v);
	} else {
		*v = periph_read(m, off);
	}
	return 0;
}

static uint8_t *dram_win(struct cmodel *m, uint32_t a, unsigned n)
{
	uint64_t o = (uint64_t)(a - LOOM_CORE_DRAM_BASE);
	if (a - LOOM_CORE_DRAM_BASE >= LOOM_CORE_DRAM_SIZE || o + n > m->dram_bytes)
		return NULL;
	return m->dram + o;
}

static int core_load(void *ctx, uint32_t a, unsigned n, uint32_t *v)
{
	struct cmodel *m = ctx;
	uint8_t *p = tcm_at(m, a, n);
	if (!p && (p = dram_win(m, a, n)) && m->has_port)
		port_span(m, LOOM_CMODEL_PORT_CORE, 0, (uint64_t)(p - m->dram), n);
	if (p) {
		uint32_t x = 0;
		for (unsigned i = 0; i < n; i++)
			x |= (uint32_t)p[i] << (8 * i);
		*v = x;
		return 0;
	}
	int r = core_reg(m, a, n, 0, v);
	return r < 0 ? 1 : r;
}

static int core_store(void *ctx, uint32_t a, unsigned n, uint32_t v)
{
	struct cmodel *m = ctx;
	uint8_t *p = tcm_at(m, a, n);
	int win = 0;
	if (!p)
		win = (p = dram_win(m, a, n)) != NULL;
	if (p) {
		for (unsigned i = 0; i < n; i++)
			p[i] = (uint8_t)(v >> (8 * i));
		if (win && m->has_port)
			port_span(m, LOOM_CMODEL_PORT_CORE, 1, (uint64_t)(p - m->dram), n);
		return 0;
	}
	int r = core_reg(m, a, n, 1, &v);
	return r < 0 ? 1 : r;
}

static int core_fetch(void *ctx, uint32_t a, uint32_t *insn)
{
	struct cmodel *m = ctx;
	uint8_t *p = tcm_at(m, a, 4);
	if (!p)
		return 1;
	*insn = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return 0;
}

static const struct rv_iss_bus core_bus = {core_load, core_store, core_fetch, core_irq_lines};

static void core_reset(struct cmodel *m)
{
	rv_iss_init(&m->iss, &core_bus, m);
	m->mtimecmp = UINT64_MAX;
	m->doorbell = 0;
	m->tohost = 0;
	memset(m->f2h, 0, sizeof m->f2h);
}

static uint32_t core_host_read(struct cmodel *m, uint32_t off)
{
	switch (off) {
	case LOOM_REG_CORE_CTRL: return (uint32_t)m->core_run;
	case LOOM_REG_CORE_STATUS: return (uint32_t)m->core_run | (m->core_run && m->iss.wfi ? 2u : 0u);
	case LOOM_REG_CORE_PC: return m->iss.pc;
	case LOOM_REG_HOST_IRQ_STATUS: return m->hirq_status;
	case LOOM_REG_HOST_IRQ_MASK: return m->hirq_mask;
	case LOOM_REG_TCM_ADDR: return m->tcm_addr;
	case LOOM_REG_TCM_DATA: {
		uint32_t v = 0;
		uint8_t *p = tcm_at(m, m->tcm_addr & ~3u, 4);
		for (int i = 0; p && i < 4; i++)
			v |= (uint32_t)p[i] << (8 * i);
		return v;
	}
	case LOOM_REG_CORE_TOHOST: return m->tohost;
	default:
		if (off >= LOOM_REG_MBOX_H2F0 && off <= LOOM_REG_MBOX_H2F3)
			return m->h2f[(off - LOOM_REG_MBOX_H2F0) / 4];
		if (off >= LOOM_REG_MBOX_F2H0 && off <= LOOM_REG_MBOX_F2H3)
			return m->f2h[(off - LOOM_REG_MBOX_F2H0) / 4];
		return 0;
	}
}

static void core_host_write(struct cmodel *m, uint32_t off, uint32_t v)
{
	switch (off) {
	case LOOM_REG_CORE_CTRL:
		if ((v & 1u) && !m->core_run)
			core_reset(m);
		m->core_run = (int)(v & 1u);
		break;
	case LOOM_REG_DOORBELL: m->doorbell = 1; break;
	case LOOM_REG_HOST_IRQ_STATUS: m->hirq_status &= ~v; break;
	case LOOM_REG_HOST_IRQ_MASK: m->hirq_mask = v; break;
	case LOOM_REG_TCM_ADDR: m->tcm_addr = v; break;
	case LOOM_REG_TCM_DATA: {
		uint8_t *p = tcm_at(m, m->tcm_addr & ~3u, 4);
		for (int i = 0; p && i < 4; i++)
			p[i] = (uint8_t)(v >> (8 * i));
		m->tcm_addr += 4;
		break;
	}
	default:
		if (off >= LOOM_REG_MBOX_H2F0 && off <= LOOM_REG_MBOX_H2F3)
			m->h2f[(off - LOOM_REG_MBOX_H2F0) / 4] = v;
		break;
	}
}

/* the cycle at which the timer interrupt line rises (UINT64_MAX: never) */
static uint64_t timer_due(const struct cmodel *m)
{
	if (m->mtimecmp == UINT64_MAX || !(m->iss.mie & RV_MIP_MTIP))
		return UINT64_MAX;
	return m->mtimecmp <= m->iss.cycle ? m->now : m->now + (m->mtimecmp - m->iss.cycle);
}

/* engine events up to t (inclusive), in order */
static void advance_to(struct cmodel *m, uint64_t t)
{
	for (;;) {
		uint64_t e = next_event(m);
		if (e > t)
			break;
		advance(m, e);
		process(m);
	}
	advance(m, t);
}

/* ---- loom_hw ops ---- */

/* Advance until the interrupt line is high (edge: until it rises) or
 * max_cycles have passed. */
static int run_model(struct cmodel *m, uint64_t max_cycles, int edge)
{
	uint64_t deadline = m->now + max_cycles < m->now ? UINT64_MAX : m->now + max_cycles;
	int level = irq_line(m);
	if (level && !edge)
		return LOOM_HW_IRQ;
	int settled = 0; /* process() has just run at now */
	for (;;) {
		if (!settled)
			process(m);
		settled = 0;
		int l = irq_line(m);
		if (l && !level)
			return LOOM_HW_IRQ;
		level = l;
		uint64_t t = next_event(m);
		if (m->running && t == UINT64_MAX) {
			/* nothing can happen any more: the fetcher holds a
			 * MARK/FINISH or an instruction for a full queue, and
			 * every waiting queue head lacks a token */
			fail(m, LOOM_ERR_DEADLOCK, m->held.pc, LOOM_INFO_NONE);
			continue;
		}
		if (m->now >= deadline)
			return LOOM_HW_TIMEOUT;
		if (m->core_run) {
			if (m->iss.wfi && !(core_irq_lines(m) & m->iss.mie)) {
				/* asleep: jump to the next engine event or timer */
				uint64_t tt = t, td = timer_due(m);
				if (td < tt)
					tt = td;
				if (tt > deadline)
					tt = deadline;
				if (tt <= m->now)
					tt = m->now + 1;
				m->iss.cycle += tt - m->now;
				if (tt == t) {
					/* the one event up to tt (advance_to without its second look) */
					advance(m, t);
					process(m);
					settled = 1;
				} else {
					advance_to(m, tt);
				}
				continue;
			}
			uint64_t c0 = m->iss.cycle;
			rv_iss_step(&m->iss);
			uint64_t t1 = m->now + (m->iss.cycle - c0);
			advance_to(m, t1 < deadline ? t1 : deadline);
			continue;
		}
		if (!m->running) {
			advance(m, deadline);
			return LOOM_HW_TIMEOUT;
		}
		if (t > deadline) {
			advance(m, deadline);
			return LOOM_HW_TIMEOUT;
		}
		advance(m, t);
	}
}

static int cm_run(loom_hw *hw, uint64_t max_cycles)
{
	return run_model(CM(hw), max_cycles, 0);
}

static uint32_t cm_mmio_read(loom_hw *hw, uint32_t off)
{
	struct cmodel *m = CM(hw);
	const loom_hwcfg *c = &hw->cfg;
	if (off >= 0x100)
		return core_host_read(m, off);
	if (off >= LOOM_REG_CTR_BASE && off < LOOM_REG_CTR_BASE + 4u * LOOM_CTR_COUNT && !(off & 3)) {
		unsigned i = (off - LOOM_REG_CTR_BASE) / 4;
		if (i == LOOM_CTR_MACS_HI)
			return (uint32_t)(m->ctr[LOOM_CTR_MACS_LO] >> 32);
		return (uint32_t)m->ctr[i];
	}
	if (off >= LOOM_REG_EVT_BASE && off < LOOM_REG_EVT_BASE + 4u * LOOM_EVT_COUNT && !(off & 3))
		return (uint32_t)m->evt[(off - LOOM_REG_EVT_BASE) / 4];
	switch (off) {
	case LOOM_REG_ID: return LOOM_ID_VALUE;
	case LOOM_REG_VERSION: return (uint32_t)LOOM_ISA_MAJOR << 16 | LOOM_ISA_MINOR;
	case LOOM_REG_HW_ARRAY:
		return c->array_rows | c->array_cols << 8 | c->sp_banks << 16 | c->dma_outstanding << 24;
	case LOOM_REG_HW_SP_BYTES: return c->sp_bytes;
	case LOOM_REG_HW_ACC_BYTES: return c->acc_bytes;
	case LOOM_REG_HW_BUS: return c->dram_beat_bytes | c->dram_mib << 16;
	case LOOM_REG_HW_FINGERPRINT: return c->fingerprint;
	case LOOM_REG_STATUS: return m->status;
	case LOOM_REG_INSN_BASE: return m->insn_base;
	case LOOM_REG_ERR_CAUSE: return m->err_cause;
	case LOOM_REG_ERR_PC: return m->err_pc;
	case LOOM_REG_ERR_INFO: return m->err_info;
	case LOOM_REG_IRQ_STATUS: return m->irq_status;
	case LOOM_REG_IRQ_MASK: return m->irq_mask;
	case LOOM_REG_WIN_CTRL: return m->win.enable;
	default:
		if (off >= LOOM_REG_WIN0_BASE && off <= LOOM_REG_WIN3_SIZE && !(off & 3)) {
			unsigned k = (off - LOOM_REG_WIN0_BASE) / 4;
			return k & 1 ? m->win.size[k / 2] : m->win.base[k / 2];
		}
		return 0; /* CTRL (write-only) and unmapped offsets */
	}
}

static void cm_mmio_write(loom_hw *hw, uint32_t off, uint32_t val)
{
	struct cmodel *m = CM(hw);
	if (off >= 0x100) {
		core_host_write(m, off, val);
		return;
	}
	switch (off) {
	case LOOM_REG_CTRL:
		if (val & LOOM_CTRL_ABORT)
			abort_run(m);
		else if ((val & LOOM_CTRL_START) && !(m->status & LOOM_STATUS_BUSY))
			start(m);
		break;
	case LOOM_REG_INSN_BASE: m->insn_base = val; break;
	case LOOM_REG_IRQ_STATUS: m->irq_status &= ~val; break;
	case LOOM_REG_IRQ_MASK: m->irq_mask = val & (LOOM_IRQ_DONE | LOOM_IRQ_ERROR); break;
	case LOOM_REG_WIN_CTRL:
		if (!(m->status & LOOM_STATUS_BUSY))
			m->win.enable = val & 1u;
		break;
	default:
		/* read-only and unmapped offsets ignore writes; windows only while idle */
		if (off >= LOOM_REG_WIN0_BASE && off <= LOOM_REG_WIN3_SIZE && !(off & 3) &&
		    !(m->status & LOOM_STATUS_BUSY)) {
			unsigned k = (off - LOOM_REG_WIN0_BASE) / 4;
			if (k & 1)
				m->win.size[k / 2] = val;
			else
				m->win.base[k / 2] = val;
		}
		break;
	}
}

static int range_ok(struct cmodel *m, const char *what, uint64_t a, size_t n)
{
	if (a > m->dram_bytes || n > m->dram_bytes - a) {
		set_err(m, "cmodel: DRAM %s of %zu bytes at 0x%llx is outside the %llu bytes of DRAM",
			what, n, (unsigned long long)a, (unsigned long long)m->dram_bytes);
		return 0;
	}
	return 1;
}

static int cm_dram_read(loom_hw *hw, uint64_t a, void *buf, size_t n)
{
	struct cmodel *m = CM(hw);
	if (!range_ok(m, "read", a, n))
		return -1;
	if (n)
		memcpy(buf, m->dram + a, n);
	return 0;
}

static int cm_dram_write(loom_hw *hw, uint64_t a, const void *buf, size_t n)
{
	struct cmodel *m = CM(hw);
	if (!range_ok(m, "write", a, n))
		return -1;
	if (n)
		memcpy(m->dram + a, buf, n);
	return 0;
}

static int cm_irq(loom_hw *hw) { return irq_line(CM(hw)); }
static uint64_t cm_cycles(loom_hw *hw) { return CM(hw)->now; }

static void cm_close(loom_hw *hw)
{
	struct cmodel *m = CM(hw);
	if (!m)
		return;
	if (getenv("LOOM_CMODEL_STATS"))
		fprintf(stderr, "cmodel: %s data path; jobs: %llu replayed, %llu recorded, %llu direct; tsim rebuilt %llu times\n",
			m->dp.avx512 ? "AVX-512" : m->dp.avx2 ? "AVX2" : "generic", (unsigned long long)m->td.n_replayed,
			(unsigned long long)m->td.n_recorded, (unsigned long long)m->td.n_direct,
			(unsigned long long)m->td.n_rebuilt);
	if (m->dram)
		munmap(m->dram, (size_t)m->dram_bytes);
	free(m->sp);
	free(m->acc);
	cm_dp_free(&m->dp);
	cm_tm_free(&m->td);
	free(m);
}

static const struct loom_hw_ops cmodel_ops = {
	.mmio_read = cm_mmio_read,
	.mmio_write = cm_mmio_write,
	.dram_read = cm_dram_read,
	.dram_write = cm_dram_write,
	.run = cm_run,
	.irq = cm_irq,
	.cycles = cm_cycles,
	.close = cm_close,
};

int loom_cmodel_set_port(loom_hw *hw, const loom_cmodel_port *port)
{
	if (!hw || hw->ops != &cmodel_ops)
		return -1;
	struct cmodel *m = CM(hw);
	m->has_port = port && port->read && port->write;
	if (m->has_port) {
		m->port = *port;
		m->td.memo = 0;
	}
	m->bus = m->has_port || m->berr_hi > m->berr_lo;
	return 0;
}

int loom_cmodel_advance(loom_hw *hw, uint64_t max_cycles)
{
	if (!hw || hw->ops != &cmodel_ops)
		return LOOM_HW_FAILED;
	return run_model(CM(hw), max_cycles, 1);
}

uint64_t loom_cmodel_quiet(loom_hw *hw)
{
	if (!hw || hw->ops != &cmodel_ops)
		return 0;
	struct cmodel *m = CM(hw);
	if (m->running)
		return m->now;
	if (!m->core_run)
		return UINT64_MAX;
	if (!m->iss.wfi || (core_irq_lines(m) & m->iss.mie))
		return m->now;
	return timer_due(m);
}

int loom_cmodel_stats(loom_hw *hw, uint64_t memo[4], int *avx2)
{
	if (!hw || hw->ops != &cmodel_ops)
		return -1;
	const struct cmodel *m = CM(hw);
	memo[0] = m->td.n_replayed;
	memo[1] = m->td.n_recorded;
	memo[2] = m->td.n_direct;
	memo[3] = m->td.n_rebuilt;
	*avx2 = m->dp.avx512 ? 2 : m->dp.avx2;
	return 0;
}

loom_hw *loom_cmodel_open(const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err, size_t errlen)
{
	if (!cfg || !cfg->sp_lines || !cfg->acc_lines || !cfg->dram_bytes) {
		if (err && errlen)
			snprintf(err, errlen, "cmodel: configuration is not finished (loom_hwcfg_finish)");
		return NULL;
	}
	if (cfg->array_cols > 64 || cfg->array_rows > 64) {
		if (err && errlen)
			snprintf(err, errlen, "cmodel: array %ux%u exceeds 64x64", cfg->array_rows,
				 cfg->array_cols);
		return NULL;
	}
	if ((uint64_t)cfg->dram_bytes != (size_t)cfg->dram_bytes) {
		if (err && errlen)
			snprintf(err, errlen, "cmodel: DRAM of %llu bytes does not fit in memory",
				 (unsigned long long)cfg->dram_bytes);
		return NULL;
	}
	const uint32_t flags = opts ? opts->cmodel_flags : 0;
	char why[256];
	int simd = cm_dp_pick(!!(flags & LOOM_CMODEL_GENERIC), why, sizeof why);
	if (simd < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", why);
		return NULL;
	}
	const char *me = getenv("LOOM_CMODEL_MEMO");
	int memo = !(flags & LOOM_CMODEL_NO_MEMO) && !(me && !strcmp(me, "0"));
	struct cmodel *m = calloc(1, sizeof *m);
	if (!m)
		goto oom;
	m->hw.ops = &cmodel_ops;
	m->hw.cfg = *cfg;
	m->hw.backend = "cmodel";
	m->R = cfg->array_rows;
	m->C = cfg->array_cols;
	m->B = cfg->dram_beat_bytes;
	loom_timing_init(&m->tm, cfg, opts ? opts->dram_latency : 0, opts ? opts->dram_bw : 0);
	if (cm_tm_init(&m->td, &m->tm, memo))
		goto oom;
	m->dram_bytes = cfg->dram_bytes;
	if (opts && opts->bus_err_size && opts->bus_err_base < m->dram_bytes) {
		/* whole beats, as the rtl backend's tb_dram answers them; no memo
		 * (its recordings do not know the range) */
		uint64_t e = opts->bus_err_size > m->dram_bytes - opts->bus_err_base ? m->dram_bytes
										   : opts->bus_err_base + opts->bus_err_size;
		m->berr_lo = opts->bus_err_base & ~(uint64_t)(m->B - 1);
		m->berr_hi = (e + m->B - 1) & ~(uint64_t)(m->B - 1);
		m->bus = 1;
		m->td.memo = 0;
	}
	/* the device memory mapped, not calloc'd: zero pages until written,
	 * whatever the process's malloc settings (loom compile keeps a large
	 * heap, whose memory calloc would clear page by page) */
	m->dram = mmap(NULL, (size_t)cfg->dram_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (m->dram == MAP_FAILED)
		m->dram = NULL;
	m->sp = calloc(cfg->sp_lines, cfg->sp_line_bytes);
	m->acc = calloc(cfg->acc_lines, (size_t)4 * cfg->array_cols);
	m->dp.wt = calloc((size_t)m->R * m->C, sizeof *m->dp.wt);
	if (!m->dram || !m->sp || !m->acc || !m->dp.wt)
		goto oom;
	m->dp.dram = m->dram;
	m->dp.sp = m->sp;
	m->dp.acc = m->acc;
	m->dp.dram_bytes = m->dram_bytes;
	m->dp.sp_lines = cfg->sp_lines;
	m->dp.R = m->R;
	m->dp.C = m->C;
	m->dp.B = m->B;
	while ((1u << m->dp.bshift) < m->B)
		m->dp.bshift++;
	cm_dp_set(&m->dp, simd);
	m->irq_mask = LOOM_IRQ_DONE | LOOM_IRQ_ERROR;
	m->hirq_mask = 0xffffffffu;
	core_reset(m);
	m->err_info = LOOM_INFO_NONE;
	m->fst = F_IDLE;
	return &m->hw;
oom:
	if (err && errlen)
		snprintf(err, errlen, "cmodel: out of memory (DRAM %llu bytes, config %s)",
			 (unsigned long long)cfg->dram_bytes, cfg->name);
	cm_close(m ? &m->hw : NULL);
	return NULL;
}
