/* gen_bad.c - bad programs for co-simulation (loom_cosim_gen_bad,
 * cosim/cosim.h): a short legal prefix ending in a MARK, then the bad
 * instruction of gen_badinsn.c, a token deadlock, a fetch past the end of
 * DRAM or a bad INSN_BASE, or a legal boundary case ("edge-legal") that
 * must finish; the error, pc and info the run must report are predicted
 * and checked against loom_insn_check and an abstract run. */
#include "cosim/gen_internal.h"

#include <stdio.h>
#include <string.h>

/* Drain every pending token of counter t (pops of pushes already made). */
static void drain_all(gen *g, int t)
{
	while (!g->failed && gen_tok_pending(g, t))
		gen_emit_drain(g, tok_dst[t], t);
}

/* An instruction of queue q that waits for counter t and is never run. */
static size_t stuck(gen *g, int q, int t, int data)
{
	loom_insn in;
	if (q == QC) {
		geom m;
		in = !data ? gen_relay_c(g).in : chance(g, 60) ? gen_legal_matmul(g, &m) : gen_legal_any(g, vec_ops[rbelow(g, 4)]);
	} else {
		in = data ? (q == QL ? gen_legal_load(g) : gen_legal_store(g, rbelow(g, 3))) : gen_token_ls(g, q == QS);
	}
	in.w[0] |= 1u << tok_pop_bit[t];
	size_t i = gen_reserve(g);
	g->p->insns[i] = in;
	g->p->roles[i] = LOOM_COSIM_BAD;
	return i;
}

static void raw_insn(gen *g, const loom_insn *in, uint8_t role)
{
	size_t i = gen_reserve(g);
	if (!g->failed) {
		g->p->insns[i] = *in;
		g->p->roles[i] = role;
	}
}

static void tail_insns(gen *g)
{
	unsigned n = rbelow(g, 4);
	for (unsigned i = 0; i < n; i++) {
		static const unsigned ops[] = {LOOM_OP_LOAD,    LOOM_OP_STORE, LOOM_OP_MATMUL, LOOM_OP_MARK, LOOM_OP_FINISH,
					       LOOM_OP_ELTWISE, LOOM_OP_POOL,  LOOM_OP_DWCONV, LOOM_OP_LUT};
		loom_insn in = gen_legal_any(g, ops[rbelow(g, 9)]);
		raw_insn(g, &in, LOOM_COSIM_CTRL);
	}
	loom_insn fin = op(LOOM_OP_FINISH);
	raw_insn(g, &fin, LOOM_COSIM_CTRL);
}

/* The vector unit at the end of the scratchpad: a LUT table in the last
 * lines, an in-place ELTWISE on them, a POOL writing the last lines, DWCONV
 * parameters ending at the last line. */
static void edge_vec(gen *g)
{
	uint32_t L = g->cfg->sp_lines, T = gen_lut_lines(g->cfg);
	span sp[3];
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = g->R / 4;
	x.n[0] = T;
	x.n[1] = x.n[2] = 1;
	x.mem = L - T;
	if (gen_load(g, &x, 0, NULL, NULL))
		return;
	sp[0] = (span){L - T, T};
	uint32_t n = rrange(g, 1, 40), src = gen_alloc_avoid(g, n, sp, 1);
	if (gen_load_lines(g, src, n))
		return;
	sp[1] = (span){src, n};
	uint32_t dst = gen_alloc_avoid(g, n, sp, 2);
	loom_insn e = gen_legal_lut(g);
	setf(g, &e, LOOM_F_LUT_SRC, src);
	setf(g, &e, LOOM_F_LUT_DST, dst);
	setf(g, &e, LOOM_F_LUT_TABLE, L - T);
	setf(g, &e, LOOM_F_LUT_LINES, n);
	vout o = {dst, n, n, 1, 1};
	pend K = gen_mkpend(&e, LOOM_COSIM_DATA);
	if (gen_vec_emit(g, &K, &o, VF_STORE))
		return;
	e = gen_legal_eltwise(g);
	setf(g, &e, LOOM_F_ELTWISE_B_MODE, LOOM_BMODE_ONE);
	setf(g, &e, LOOM_F_ELTWISE_SRC_A, L - T);
	setf(g, &e, LOOM_F_ELTWISE_DST, L - T);
	setf(g, &e, LOOM_F_ELTWISE_SRC_B, src + rbelow(g, n));
	setf(g, &e, LOOM_F_ELTWISE_PLANES, 1);
	setf(g, &e, LOOM_F_ELTWISE_PLANE_LINES, T);
	o = (vout){L - T, T, T, 1, 1};
	K = gen_mkpend(&e, LOOM_COSIM_DATA);
	if (gen_vec_emit(g, &K, &o, VF_STORE))
		return;
	geom m;
	e = gen_legal_pool(g, &m, (int)rbelow(g, 2));
	uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
	sp[0] = (span){L - nout, nout};
	src = gen_alloc_avoid(g, nin, sp, 1);
	if (gen_load_act(g, &m, src, 0))
		return;
	setf(g, &e, LOOM_F_POOL_SRC, src);
	setf(g, &e, LOOM_F_POOL_DST, L - nout);
	o = (vout){L - nout, nout, m.ow, m.oh, m.ncb};
	K = gen_mkpend(&e, LOOM_COSIM_DATA);
	if (gen_vec_emit(g, &K, &o, VF_STORE))
		return;
	e = gen_legal_dwconv(g, &m);
	uint32_t np = m.ncb * LOOM_DW_PARAM_LINES, nw = m.ncb * m.kw * m.kh;
	nin = m.ncb * m.inw * m.inh;
	nout = m.ncb * m.ow * m.oh;
	sp[0] = (span){L - np, np};
	src = gen_alloc_avoid(g, nin, sp, 1);
	if (gen_load_act(g, &m, src, 0))
		return;
	sp[1] = (span){src, nin};
	uint32_t wgt = gen_alloc_avoid(g, nw, sp, 2);
	if (gen_load_lines(g, wgt, nw))
		return;
	sp[2] = (span){wgt, nw};
	memset(&x, 0, sizeof x);
	x.rw = g->R / 4;
	x.n[0] = np;
	x.n[1] = x.n[2] = 1;
	x.mem = L - np;
	unsigned style = 0;
	if (gen_load(g, &x, 0, gen_craft_dwparams, &style))
		return;
	setf(g, &e, LOOM_F_DWCONV_SRC, src);
	setf(g, &e, LOOM_F_DWCONV_WGT, wgt);
	setf(g, &e, LOOM_F_DWCONV_PARAM, L - np);
	dst = gen_alloc_avoid(g, nout, sp, 3);
	setf(g, &e, LOOM_F_DWCONV_DST, dst);
	o = (vout){dst, nout, m.ow, m.oh, m.ncb};
	K = gen_mkpend(&e, LOOM_COSIM_DATA);
	gen_vec_emit(g, &K, &o, VF_STORE);
}

/* Boundary cases that are legal: exact SP/ACC/DRAM ends, token-only
 * transfers with out-of-range addresses. */
static void edge_legal(gen *g, long top_region)
{
	const loom_hwcfg *c = g->cfg;
	uint32_t R = g->R, C = g->C;
	/* weights ending at the last SP line (the sync lines are at the bottom) */
	geom m;
	gen_rand_geom(g, &m, 1, 1500);
	uint32_t wl = m.ncb * C, P = m.ow;
	uint32_t act_lines = m.ncb * m.inh * m.inw;
	uint32_t act = gen_line_alloc(g, 0, act_lines);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = R / 4;
	x.n[0] = m.inw;
	x.n[1] = m.inh;
	x.n[2] = m.ncb;
	x.mem = act;
	if (act + act_lines > c->sp_lines - wl) {
		act = g->sp_lo;
		x.mem = act;
	}
	if (gen_load(g, &x, 0, NULL, NULL))
		return;
	x.n[0] = wl;
	x.n[1] = x.n[2] = 1;
	x.mem = c->sp_lines - wl;
	if (gen_load(g, &x, 0, NULL, NULL))
		return;
	/* output tile ending at the last ACC line */
	loom_insn mm = gen_mk_matmul(g, &m, m.ncb, act, c->sp_lines - wl, c->acc_lines - P, 0);
	gen_emit_insn(g, &mm, LOOM_COSIM_DATA);
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_ACC;
	q.rw = C;
	q.mem = c->acc_lines - P;
	q.count = P;
	gen_store(g, &q, 0, NULL);
	/* parameters in the last three ACC lines, then a requantized store */
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = C;
	x.n[0] = 3;
	x.n[1] = x.n[2] = 1;
	x.mem = c->acc_lines - 3;
	unsigned style = 0;
	if (gen_load(g, &x, 0, gen_craft_params, &style))
		return;
	q.src = LOOM_MEM_ACC_REQUANT;
	q.rw = C / 4;
	q.param = c->acc_lines - 3;
	q.mem = c->acc_lines - P;
	q.count = P <= 3 ? P : P - 3; /* P == 3 left nothing to store: gen_rand_shape(0) read no divisor */
	gen_rand_requant(g, &q);
	gen_store(g, &q, 0, NULL);
	/* token-only transfers with wild addresses */
	for (int i = 0; i < 2; i++) {
		loom_insn t = gen_token_ls(g, i);
		gen_emit_insn(g, &t, LOOM_COSIM_TOKEN);
	}
	loom_insn tv = gen_token_vec(g);
	gen_emit_insn(g, &tv, LOOM_COSIM_TOKEN);
	edge_vec(g);
	/* the top region: read up to the last DRAM byte, written back, or a
	 * MARK record in the last 64 bytes */
	if (top_region >= 0) {
		loom_cosim_region *r = &g->p->regions[top_region];
		if (r->kind == LOOM_COSIM_MARK) {
			loom_insn mk = op(LOOM_OP_MARK);
			setf(g, &mk, LOOM_F_MARK_DRAM_ADDR, (uint32_t)r->addr);
			setf(g, &mk, LOOM_F_MARK_MARK_ID, r32(g));
			gen_emit_ctrl(g, &mk);
		} else {
			uint32_t rw = R / 4, rows = r->len / (4 * rw);
			loom_insn ld = op(LOOM_OP_LOAD);
			uint32_t sl = gen_line_alloc(g, 0, rows);
			setf(g, &ld, LOOM_F_LOAD_ROW_WORDS, rw);
			setf(g, &ld, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)(c->dram_bytes - (uint64_t)rows * 4 * rw));
			setf(g, &ld, LOOM_F_LOAD_STRIDE1, 4 * rw);
			setf(g, &ld, LOOM_F_LOAD_N1, rows);
			setf(g, &ld, LOOM_F_LOAD_N2, 1);
			setf(g, &ld, LOOM_F_LOAD_N3, 1);
			setf(g, &ld, LOOM_F_LOAD_MEM_ADDR, sl);
			gen_emit_insn(g, &ld, LOOM_COSIM_DATA);
			loom_insn st = op(LOOM_OP_STORE);
			setf(g, &st, LOOM_F_STORE_ROW_WORDS, rw);
			setf(g, &st, LOOM_F_STORE_DRAM_ADDR, (uint32_t)(c->dram_bytes - 4 * rw));
			setf(g, &st, LOOM_F_STORE_N1, 1);
			setf(g, &st, LOOM_F_STORE_N2, 1);
			setf(g, &st, LOOM_F_STORE_N3, 1);
			setf(g, &st, LOOM_F_STORE_MEM_ADDR, sl + rows - 1 - rbelow(g, rows));
			r->kind = LOOM_COSIM_OUTPUT;
			gen_emit_insn(g, &st, LOOM_COSIM_DATA);
		}
	}
}

/* edge-legal: the data at the end of DRAM, the sync lines and the scratch
 * ACC line at the bottom, and a region in the last bytes of DRAM (a MARK
 * record, or an input read up to the last byte). Returns that region. */
static long edge_setup(gen *g)
{
	const loom_hwcfg *cfg = g->cfg;
	g->down = 1;
	g->arena = cfg->dram_bytes - ARENA_BYTES;
	g->next = g->lo_used = g->hi_used = cfg->dram_bytes;
	g->sync_sp = 0;
	g->sp_lo = g->C;
	g->sp_hi = cfg->sp_lines;
	g->scratch_acc = 0;
	g->acc_lo = 1;
	g->acc_hi = cfg->acc_lines;
	g->bump[0] = g->sp_lo;
	g->bump[1] = g->acc_lo;
	uint32_t len = chance(g, 50) ? LOOM_MARK_BYTES : 4 * (g->R / 4) * rrange(g, 1, 8);
	uint64_t a = cfg->dram_bytes - len;
	g->next = g->lo_used = a;
	long top = gen_region_add(g, len == LOOM_MARK_BYTES && chance(g, 70) ? LOOM_COSIM_MARK : LOOM_COSIM_INPUT, a, len);
	if (g->p->regions[top].kind == LOOM_COSIM_INPUT && len % (4 * (g->R / 4))) {
		/* no LOAD row fits: a MARK record goes there (its cycle words are estimates) */
		g->p->regions[top].kind = LOOM_COSIM_MARK;
		g->p->regions[top].word_mask = LOOM_COSIM_MARK_WORDS;
	}
	return top;
}

/* The decode-time bad instruction bi (kind kn), checked against
 * loom_insn_check, then a few instructions never reached. */
static void bad_decode(gen *g, const char *kn, const loom_insn *bi, uint32_t cause, uint32_t field)
{
	loom_cosim_prog *p = g->p;
	size_t i = gen_reserve(g);
	p->insns[i] = *bi;
	p->roles[i] = LOOM_COSIM_BAD;
	uint32_t f;
	unsigned got = loom_insn_check(g->cfg, bi, &f);
	if (got != cause || f != field) {
		char d[256];
		loom_insn_disasm(bi, d, sizeof d);
		gen_fail(g, "bad kind %s: expected %s(%s), loom_insn_check says %s(%s): %s", kn, loom_err_name(cause),
			 loom_field_name(field), loom_err_name(got), loom_field_name(f), d);
	}
	p->expect_cause = cause;
	p->expect_info = field;
	tail_insns(g);
	if (!g->failed && !gen_place_code(g, 0))
		p->expect_pc = (uint32_t)loom_cosim_pc(p, i);
}

/* deadlock-finish, deadlock-mark: the head of queue qd waits for counter t
 * forever; token-only work in the other queues still runs, then the
 * FINISH or MARK the fetcher holds. Returns that instruction. */
static size_t deadlock_barrier(gen *g, const char *kn, int qd, int t)
{
	loom_cosim_prog *p = g->p;
	size_t held;
	stuck(g, qd, t, chance(g, 50));
	/* token-only work in the other queues still runs */
	for (unsigned i = rbelow(g, 3); i > 0; i--) {
		int q = (qd + 1 + (int)rbelow(g, 2)) % 3;
		loom_insn in = q == QC ? gen_relay_c(g).in : gen_token_ls(g, q == QS);
		raw_insn(g, &in, LOOM_COSIM_TOKEN);
	}
	if (!strcmp(kn, "deadlock-mark")) {
		long r = gen_region_new(g, LOOM_COSIM_MARK, LOOM_MARK_BYTES, 4);
		loom_insn mk = op(LOOM_OP_MARK);
		if (r >= 0)
			setf(g, &mk, LOOM_F_MARK_DRAM_ADDR, (uint32_t)p->regions[r].addr);
		held = gen_reserve(g);
		p->insns[held] = mk;
		p->roles[held] = LOOM_COSIM_CTRL;
		/* a MARK that is never written: its record is not compared */
		if (r >= 0)
			p->regions[r].word_mask = 0, p->regions[r].kind = LOOM_COSIM_INPUT;
	} else {
		loom_insn fin = op(LOOM_OP_FINISH);
		held = gen_reserve(g);
		p->insns[held] = fin;
		p->roles[held] = LOOM_COSIM_CTRL;
	}
	return held;
}

/* deadlock-full-queue, deadlock-full-other: the head of queue qd waits for
 * counter t; then enough instructions for queue qw to fill it (qw = qd, or
 * with full_other a queue whose head waits for the token tw the stuck one
 * would push). Returns the instruction the fetcher holds. */
static size_t deadlock_full(gen *g, int qd, int t, int tw, int full_other)
{
	loom_cosim_prog *p = g->p;
	size_t held = 0;
	int qw = qd;
	if (full_other) {
		/* stuck MATMUL waiting on t (L->C or S->C); loads or stores
		 * below wait for the token tw it would push */
		qw = tok_dst[tw];
		size_t s = stuck(g, QC, t, 0);
		p->insns[s].w[0] |= 1u << tok_push_bit[tw];
	} else {
		stuck(g, qd, t, chance(g, 50));
	}
	unsigned inq = qw == qd ? 1 : 0;
	while (inq < LOOM_QUEUE_DEPTH + 1 && !g->failed) {
		int q = chance(g, 70) ? qw : (qw + 1 + (int)rbelow(g, 2)) % 3;
		if (q == qd && qd != qw)
			q = qw;
		loom_insn in = q == QC ? gen_relay_c(g).in : gen_token_ls(g, q == QS);
		if (q == qw && qw != qd && inq == 0)
			in.w[0] |= 1u << tok_pop_bit[tw];
		size_t i = gen_reserve(g);
		p->insns[i] = in;
		p->roles[i] = LOOM_COSIM_TOKEN;
		if (q == qw && ++inq == LOOM_QUEUE_DEPTH + 1)
			held = i;
	}
	/* the push that would have released it, never fetched */
	int ps = tok_src[t];
	loom_insn rel = ps == QC ? gen_relay_c(g).in : gen_token_ls(g, ps == QS);
	rel.w[0] |= 1u << tok_push_bit[t];
	raw_insn(g, &rel, LOOM_COSIM_TOKEN);
	return held;
}

/* The deadlock kinds: the fetcher stops at the instruction it holds, as
 * the abstract run must confirm. */
static void bad_deadlock(gen *g, const char *kn, int t, int tw, int full_other)
{
	loom_cosim_prog *p = g->p;
	int qd = tok_dst[t];
	size_t held;
	if (!strcmp(kn, "deadlock-finish") || !strcmp(kn, "deadlock-mark"))
		held = deadlock_barrier(g, kn, qd, t);
	else
		held = deadlock_full(g, qd, t, tw, full_other);
	p->expect_cause = LOOM_ERR_DEADLOCK;
	tail_insns(g);
	if (!g->failed && !gen_place_code(g, 0)) {
		p->expect_pc = (uint32_t)loom_cosim_pc(p, held);
		long got = gen_abstract_run(p, 0);
		if (got != (long)held)
			gen_fail(g, "bad kind %s: the abstract run stops at %ld, expected %zu", kn, got, held);
	}
}

/* fetch-range: token-only work, a MARK, then the fetch runs off the end of
 * DRAM. */
static void bad_fetch_end(gen *g)
{
	for (unsigned i = rbelow(g, 3); i > 0; i--) {
		int q = rbelow(g, 3);
		loom_insn in = q == QC ? gen_relay_c(g).in : gen_token_ls(g, q == QS);
		raw_insn(g, &in, LOOM_COSIM_TOKEN);
	}
	g->full = 0;
	gen_emit_mark(g);
	if (!g->failed && !gen_place_code(g, 1)) {
		g->p->expect_cause = LOOM_ERR_FETCH_RANGE;
		g->p->expect_pc = (uint32_t)g->cfg->dram_bytes;
	}
}

/* insn-base-range, insn-base-misaligned: a legal program whose INSN_BASE
 * is out of DRAM or not a multiple of 32. */
static void bad_insn_base(gen *g, const char *kn)
{
	loom_cosim_prog *p = g->p;
	loom_insn fin = op(LOOM_OP_FINISH);
	gen_emit_ctrl(g, &fin);
	if (!g->failed && !gen_place_code(g, 0)) {
		if (!strcmp(kn, "insn-base-range")) {
			static const int64_t off[] = {0, -16, -8, 32, 4096};
			int64_t o = off[rbelow(g, 5)];
			uint64_t a = (uint64_t)((int64_t)g->cfg->dram_bytes + o);
			if (chance(g, 15))
				a = 0xffffffe0u;
			p->insn_addr = a;
			p->expect_cause = LOOM_ERR_FETCH_RANGE;
		} else {
			p->insn_addr += 4u * rrange(g, 1, 7);
			p->expect_cause = LOOM_ERR_MISALIGNED;
		}
		p->expect_pc = (uint32_t)p->insn_addr;
	}
}

/* edge-legal: the boundary cases, then FINISH; the run must finish. */
static void bad_edge(gen *g, long top)
{
	loom_cosim_prog *p = g->p;
	edge_legal(g, top);
	loom_insn fin = op(LOOM_OP_FINISH);
	gen_emit_ctrl(g, &fin);
	p->bad = 1;
	p->expect_done = 1;
	p->expect_cause = 0;
	p->expect_mask = 0;
	if (!g->failed && !gen_place_code(g, 0) && gen_abstract_run(p, 0) != -1)
		gen_fail(g, "edge-legal program deadlocks");
}

int loom_cosim_gen_bad(const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen)
{
	gen g;
	unsigned kind = (unsigned)(seed % loom_cosim_bad_kinds());
	gen_init(&g, cfg, seed, p, err, errlen);
	p->bad = 1;
	p->expect_mask = LOOM_COSIM_EXPECT_PC | LOOM_COSIM_EXPECT_INFO;
	p->expect_info = LOOM_INFO_NONE;
	snprintf(p->what, sizeof p->what, "%s", loom_cosim_bad_name(kind));
	const char *kn = loom_cosim_bad_name(kind);
	int code_at_end = !strcmp(kn, "fetch-range");
	int edge = !strcmp(kn, "edge-legal");
	long top = -1;
	if (!g.failed && code_at_end && g.down)
		gen_arena_place(&g, 0); /* the code goes to the end of DRAM */
	if (!g.failed && edge)
		top = edge_setup(&g);
	if (!g.failed) {
		gen_prologue(&g);
		gen_body(&g, rrange(&g, 1500, 6000));
	}
	int fetch_kind = !strcmp(kn, "insn-base-range") || !strcmp(kn, "insn-base-misaligned");
	int dl = !strncmp(kn, "deadlock", 8);
	int full_other = !strcmp(kn, "deadlock-full-other");
	int t = full_other ? (chance(&g, 50) ? T_LC : T_SC) : (int)rbelow(&g, T_N);
	int tw = t == T_LC ? T_CS : T_CL; /* full-other: what the stuck MATMUL would push */
	if (dl)
		drain_all(&g, t);
	if (full_other)
		drain_all(&g, tw);
	if (!g.failed)
		gen_emit_mark(&g);
	g.full = 0;
	loom_insn bi;
	uint32_t cause = 0, field = LOOM_INFO_NONE;
	if (g.failed) {
		/* fall through to cleanup */
	} else if (gen_bad_insn(&g, kind, &bi, &cause, &field) == 0) {
		bad_decode(&g, kn, &bi, cause, field);
	} else if (dl) {
		bad_deadlock(&g, kn, t, tw, full_other);
	} else if (code_at_end) {
		bad_fetch_end(&g);
	} else if (fetch_kind) {
		bad_insn_base(&g, kn);
	} else if (edge) {
		bad_edge(&g, top);
	} else {
		gen_fail(&g, "bad kind %u not handled", kind);
	}
	if (!g.failed) {
		gen_fill_code(p);
		/* the code region holds the program; with a moved INSN_BASE the
		 * instructions stay where they were placed */
	}
	return gen_finish_prog(&g, 0);
}
