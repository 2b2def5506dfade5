/* gen_track.c - the race-freedom bookkeeping of the co-simulation program
 * generator (cosim/gen_internal.h): the footprint of an instruction (every
 * SP line, ACC line and DRAM byte range it touches), SP/ACC line
 * allocation, the tracking of each line and DRAM word (last writer, last
 * reader per queue), and the token machinery that places an instruction
 * after everything it conflicts with: pushes and pops, drains, compute
 * relays, early-pop pairs and MARK/FINISH barriers (gen_emit*). Also the
 * token-only blocks (more than 255 tokens outstanding, random relays). */
#include "cosim/gen_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- footprints */

/* SP lines of a LUT table. */
uint32_t gen_lut_lines(const loom_hwcfg *cfg)
{
	return (LOOM_LUT_ENTRIES + cfg->array_rows - 1) / cfg->array_rows;
}

/* Every SP line, ACC line and DRAM byte range the instruction touches, reads
 * before writes (conservative for MATMUL, POOL and DWCONV: the whole input
 * tile). */
void gen_footprint(const loom_hwcfg *cfg, const loom_insn *in, fp_fn fn, void *ctx)
{
#define G(op, f) loom_insn_get(in, LOOM_F_##op##_##f)
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: {
		uint64_t n1 = G(LOAD, N1), n2 = G(LOAD, N2), n3 = G(LOAD, N3);
		if (!n1 || !n2 || !n3)
			return;
		uint64_t lines = n3 * (G(LOAD, PAD_TOP) + n2 + G(LOAD, PAD_BOTTOM)) *
				 (G(LOAD, PAD_LEFT) + n1 + G(LOAD, PAD_RIGHT));
		uint64_t mem = G(LOAD, MEM_ADDR), n0 = 4u * G(LOAD, ROW_WORDS);
		fn(ctx, G(LOAD, TARGET) ? ACC_SPACE : SP_SPACE, mem, mem + lines, 1);
		for (uint64_t i3 = 0; i3 < n3; i3++)
			for (uint64_t i2 = 0; i2 < n2; i2++)
				for (uint64_t i1 = 0; i1 < n1; i1++) {
					uint64_t a = G(LOAD, DRAM_ADDR) + i3 * G(LOAD, STRIDE3) +
						     i2 * G(LOAD, STRIDE2) + i1 * G(LOAD, STRIDE1);
					fn(ctx, DRAM_SPACE, a, a + n0, 0);
				}
		return;
	}
	case LOOM_OP_STORE: {
		uint64_t n1 = G(STORE, N1), n2 = G(STORE, N2), n3 = G(STORE, N3);
		if (!n1 || !n2 || !n3)
			return;
		uint64_t mem = G(STORE, MEM_ADDR), n0 = 4u * G(STORE, ROW_WORDS);
		unsigned src = G(STORE, SOURCE);
		uint64_t step = n3;
		if (src == LOOM_MEM_ACC_RESADD) /* N3 is the residual's step: one plane */
			n3 = 1;
		fn(ctx, src == LOOM_MEM_SP ? SP_SPACE : ACC_SPACE, mem, mem + n1 * n2 * n3, 0);
		if (src == LOOM_MEM_ACC_REQUANT)
			fn(ctx, ACC_SPACE, G(STORE, PARAM_ADDR), G(STORE, PARAM_ADDR) + 3u, 0);
		/* SOURCE 3: 4 parameter lines, the residual's SP lines from STRIDE3
		 * every N3 (conservatively the whole span) */
		uint64_t s3 = G(STORE, STRIDE3);
		if (src == LOOM_MEM_ACC_RESADD) {
			fn(ctx, ACC_SPACE, G(STORE, PARAM_ADDR), G(STORE, PARAM_ADDR) + LOOM_RESADD_PARAM_LINES, 0);
			fn(ctx, SP_SPACE, s3, s3 + (n1 * n2 - 1) * step + 1, 0);
			s3 = 0;
		}
		for (uint64_t i3 = 0; i3 < n3; i3++)
			for (uint64_t i2 = 0; i2 < n2; i2++)
				for (uint64_t i1 = 0; i1 < n1; i1++) {
					uint64_t a = G(STORE, DRAM_ADDR) + i3 * s3 +
						     i2 * G(STORE, STRIDE2) + i1 * G(STORE, STRIDE1);
					fn(ctx, DRAM_SPACE, a, a + n0, 1);
				}
		return;
	}
	case LOOM_OP_MATMUL: {
		uint64_t ncb = G(MATMUL, NCB), folds = ncb * G(MATMUL, KH) * G(MATMUL, KW);
		uint64_t act = G(MATMUL, ACT_ADDR), wgt = G(MATMUL, WGT_ADDR), acc = G(MATMUL, ACC_ADDR);
		uint64_t p = (uint64_t)G(MATMUL, OUT_W) * G(MATMUL, OUT_H);
		fn(ctx, SP_SPACE, act, act + ncb * G(MATMUL, IN_W) * G(MATMUL, IN_H), 0);
		fn(ctx, SP_SPACE, wgt, wgt + folds * cfg->array_cols, 0);
		if (G(MATMUL, ACCUMULATE))
			fn(ctx, ACC_SPACE, acc, acc + p, 0);
		fn(ctx, ACC_SPACE, acc, acc + p, 1);
		return;
	}
	case LOOM_OP_ELTWISE: {
		uint64_t planes = G(ELTWISE, PLANES), n = planes * G(ELTWISE, PLANE_LINES);
		if (!n)
			return;
		unsigned bm = G(ELTWISE, B_MODE);
		uint64_t a = G(ELTWISE, SRC_A), b = G(ELTWISE, SRC_B), d = G(ELTWISE, DST);
		fn(ctx, SP_SPACE, a, a + n, 0);
		fn(ctx, SP_SPACE, b, b + (bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1), 0);
		fn(ctx, SP_SPACE, d, d + n, 1);
		return;
	}
	case LOOM_OP_POOL: {
		uint64_t ncb = G(POOL, NCB), src = G(POOL, SRC), dst = G(POOL, DST);
		fn(ctx, SP_SPACE, src, src + ncb * G(POOL, IN_W) * G(POOL, IN_H), 0);
		fn(ctx, SP_SPACE, dst, dst + ncb * G(POOL, OUT_W) * G(POOL, OUT_H), 1);
		return;
	}
	case LOOM_OP_DWCONV: {
		uint64_t ncb = G(DWCONV, NCB), src = G(DWCONV, SRC), wgt = G(DWCONV, WGT), par = G(DWCONV, PARAM),
			 dst = G(DWCONV, DST);
		fn(ctx, SP_SPACE, src, src + ncb * G(DWCONV, IN_W) * G(DWCONV, IN_H), 0);
		fn(ctx, SP_SPACE, wgt, wgt + ncb * G(DWCONV, KW) * G(DWCONV, KH), 0);
		fn(ctx, SP_SPACE, par, par + ncb * LOOM_DW_PARAM_LINES, 0);
		fn(ctx, SP_SPACE, dst, dst + ncb * G(DWCONV, OUT_W) * G(DWCONV, OUT_H), 1);
		return;
	}
	case LOOM_OP_LUT: {
		uint64_t n = G(LUT, LINES), src = G(LUT, SRC), dst = G(LUT, DST), tab = G(LUT, TABLE);
		if (!n)
			return;
		fn(ctx, SP_SPACE, src, src + n, 0);
		fn(ctx, SP_SPACE, tab, tab + gen_lut_lines(cfg), 0);
		fn(ctx, SP_SPACE, dst, dst + n, 1);
		return;
	}
	case LOOM_OP_MARK: {
		uint64_t a = G(MARK, DRAM_ADDR);
		fn(ctx, DRAM_SPACE, a, a + LOOM_MARK_BYTES, 1);
		return;
	}
	default:
		return;
	}
#undef G
}

/* ---- SP / ACC line allocation ---- */

uint32_t gen_line_alloc(gen *g, int acc, uint32_t n)
{
	uint32_t lo = acc ? g->acc_lo : g->sp_lo, hi = acc ? g->acc_hi : g->sp_hi;
	if (n == 0 || n > hi - lo) {
		gen_fail(g, "generator bug: %u %s lines do not fit", n, acc ? "ACC" : "SP");
		return lo;
	}
	if (chance(g, 25))
		return rrange(g, lo, hi - n);
	uint32_t a = g->bump[acc] + (chance(g, 50) ? 0 : rbelow(g, 8));
	if (a < lo || a + n > hi)
		a = lo + rbelow(g, umin(4, hi - lo - n) + 1);
	g->bump[acc] = a + n;
	return a;
}

/* ---- tracking: needs and updates ---- */

struct needctx {
	gen *g;
	int q;
	uint32_t need[3];
};

static trk *unit(gen *g, int space, uint64_t u)
{
	if (space == SP_SPACE)
		return u < g->cfg->sp_lines ? &g->sp[u] : NULL;
	if (space == ACC_SPACE)
		return u < g->cfg->acc_lines ? &g->acc[u] : NULL;
	return gen_dram_trk(g, u * 4);
}

static void need_cb(void *vc, int space, uint64_t lo, uint64_t hi, int write)
{
	struct needctx *c = vc;
	gen *g = c->g;
	if (space == DRAM_SPACE) {
		lo /= 4;
		hi = (hi + 3) / 4;
	}
	for (uint64_t u = lo; u < hi && !g->failed; u++) {
		trk *t = unit(g, space, u);
		if (!t)
			continue;
		if (t->w >= 2) {
			const meta *m = &g->m[t->w - 2];
			if (m->q != c->q && m->q < 3 && m->seq > c->need[m->q])
				c->need[m->q] = m->seq;
		}
		if (write)
			for (int q = 0; q < 3; q++)
				if (q != c->q && t->rd[q] > c->need[q])
					c->need[q] = t->rd[q];
	}
}

struct updctx {
	gen *g;
	size_t idx;
	int q;
	uint32_t seq;
};

static void upd_cb(void *vc, int space, uint64_t lo, uint64_t hi, int write)
{
	struct updctx *c = vc;
	if (space == DRAM_SPACE) {
		lo /= 4;
		hi = (hi + 3) / 4;
	}
	for (uint64_t u = lo; u < hi && !c->g->failed; u++) {
		trk *t = unit(c->g, space, u);
		/* SP/ACC lines are read only after this program wrote them, DRAM
		 * is touched only inside data regions */
		if (!t || (!t->w && (space == DRAM_SPACE || !write))) {
			char d[256];
			loom_insn_disasm(&c->g->p->insns[c->idx], d, sizeof d);
			gen_fail(c->g, "generator bug: instruction %zu: %s of %s unit 0x%llx outside written data: %s", c->idx,
			      write ? "write" : "read", space == SP_SPACE ? "SP" : space == ACC_SPACE ? "ACC" : "DRAM",
			      (unsigned long long)(space == DRAM_SPACE ? u * 4 : u), d);
			return;
		}
		if (write) {
			t->w = (uint32_t)c->idx + 2;
			memset(t->rd, 0, sizeof t->rd);
		} else {
			t->rd[c->q] = c->seq;
		}
	}
}

/* Footprint overlap between two instructions, one access a write. */
typedef struct fpacc {
	int space;
	uint64_t lo, hi;
	int write;
} fpacc;

typedef struct fplist {
	fpacc *a;
	size_t n, cap;
	int oom;
} fplist;

static void collect_cb(void *vc, int space, uint64_t lo, uint64_t hi, int write)
{
	fplist *l = vc;
	fpacc *na = gen_grow(l->a, &l->cap, l->n + 1, sizeof *l->a);
	if (!na) {
		l->oom = 1;
		return;
	}
	l->a = na;
	l->a[l->n++] = (fpacc){space, lo, hi, write};
}

static int conflict(gen *g, const loom_insn *a, const loom_insn *b)
{
	fplist la = {0}, lb = {0};
	gen_footprint(g->cfg, a, collect_cb, &la);
	gen_footprint(g->cfg, b, collect_cb, &lb);
	int hit = la.oom || lb.oom;
	for (size_t i = 0; i < la.n && !hit; i++)
		for (size_t j = 0; j < lb.n && !hit; j++)
			hit = la.a[i].space == lb.a[j].space && (la.a[i].write || lb.a[j].write) &&
			      la.a[i].lo < lb.a[j].hi && lb.a[j].lo < la.a[i].hi;
	free(la.a);
	free(lb.a);
	return hit;
}

/* ---- token machinery ---- */

/* The token counter from queue src to queue dst, -1 if none. */
static int counter(int src, int dst)
{
	for (int t = 0; t < T_N; t++)
		if (tok_src[t] == src && tok_dst[t] == dst)
			return t;
	return -1;
}

int gen_op_queue(const loom_insn *in)
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: return QL;
	case LOOM_OP_MATMUL:
	case LOOM_OP_ELTWISE:
	case LOOM_OP_POOL:
	case LOOM_OP_DWCONV:
	case LOOM_OP_LUT: return QC;
	case LOOM_OP_STORE: return QS;
	default: return QX;
	}
}

size_t gen_tok_pending(const gen *g, int t) { return g->tok[t].n - g->tok[t].npop; }

static void tok_push(gen *g, int t, size_t idx)
{
	tokq *k = &g->tok[t];
	size_t *np = gen_grow(k->push, &k->cap, k->n + 1, sizeof *k->push);
	if (!np) {
		gen_fail(g, "out of memory");
		return;
	}
	k->push = np;
	k->push[k->n++] = idx;
	g->p->insns[idx].w[0] |= 1u << tok_push_bit[t];
}

static void vc_join(uint32_t *a, const uint32_t *b)
{
	for (int q = 0; q < 3; q++)
		if (b[q] > a[q])
			a[q] = b[q];
}

static void commit(gen *g, pend *p, size_t idx);
static void prepare(gen *g, pend *p);

/* SP line sync_sp x weights sync_sp.. into the scratch ACC line: a MATMUL
 * that only relays tokens. */
pend gen_sync_insn(gen *g)
{
	pend s;
	memset(&s, 0, sizeof s);
	s.in = op(LOOM_OP_MATMUL);
	s.q = QC;
	s.role = LOOM_COSIM_SYNC;
	s.novol = 1;
	setf(g, &s.in, LOOM_F_MATMUL_ACT_ADDR, g->sync_sp);
	setf(g, &s.in, LOOM_F_MATMUL_WGT_ADDR, g->sync_sp);
	setf(g, &s.in, LOOM_F_MATMUL_ACC_ADDR, g->scratch_acc);
	for (int f = LOOM_F_MATMUL_IN_W; f <= LOOM_F_MATMUL_DH; f++)
		setf(g, &s.in, (enum loom_field)f, 1);
	return s;
}
/* A compute-queue instruction that only relays tokens: mostly the sync
 * MATMUL, sometimes an ELTWISE or LUT of zero lines. */
pend gen_relay_c(gen *g)
{
	pend p;
	if (chance(g, 85))
		return gen_sync_insn(g);
	memset(&p, 0, sizeof p);
	p.in = gen_token_vec(g);
	p.q = QC;
	p.role = LOOM_COSIM_TOKEN;
	p.novol = 1;
	return p;
}

/* An instruction of queue q that only moves tokens: a relay (gen_relay_c) on
 * the compute queue, an empty LOAD/STORE on the others. */
static pend relay_insn(gen *g, int q)
{
	pend p;
	if (q == QC)
		return gen_relay_c(g);
	memset(&p, 0, sizeof p);
	p.in = gen_token_ls(g, q == QS);
	p.q = q;
	p.role = LOOM_COSIM_TOKEN;
	p.novol = 1;
	return p;
}

/* A LOAD or STORE that moves nothing (N1*N2*N3 = 0) with otherwise random,
 * legal fields: range checks do not apply, alignment and field checks do. */
loom_insn gen_token_ls(gen *g, int store)
{
	loom_insn in = op(store ? LOOM_OP_STORE : LOOM_OP_LOAD);
	if (chance(g, 40)) {
		setf(g, &in, store ? LOOM_F_STORE_ROW_WORDS : LOOM_F_LOAD_ROW_WORDS, 1);
		return in;
	}
	uint32_t n[3] = {rbelow(g, 4096), rbelow(g, 4096), rbelow(g, 256)};
	n[rbelow(g, 3)] = 0;
	if (!store) {
		unsigned tgt = rbelow(g, 2);
		setf(g, &in, LOOM_F_LOAD_TARGET, tgt);
		if (!tgt)
			setf(g, &in, LOOM_F_LOAD_PAD_VALUE, rbelow(g, 256));
		setf(g, &in, LOOM_F_LOAD_ROW_WORDS, rrange(g, 1, tgt ? g->C : g->R / 4));
		setf(g, &in, LOOM_F_LOAD_DRAM_ADDR, r32(g) & ~3u);
		setf(g, &in, LOOM_F_LOAD_MEM_ADDR, r32(g) & 0xffffffu);
		setf(g, &in, LOOM_F_LOAD_STRIDE1, r32(g) & ~3u);
		setf(g, &in, LOOM_F_LOAD_STRIDE2, r32(g) & ~3u);
		setf(g, &in, LOOM_F_LOAD_STRIDE3, r32(g) & ~3u);
		setf(g, &in, LOOM_F_LOAD_N1, n[0]);
		setf(g, &in, LOOM_F_LOAD_N2, n[1]);
		setf(g, &in, LOOM_F_LOAD_N3, n[2]);
		in.w[7] = r32(g);
	} else {
		unsigned src = rbelow(g, 3);
		setf(g, &in, LOOM_F_STORE_SOURCE, src);
		setf(g, &in, LOOM_F_STORE_ROW_WORDS,
		     rrange(g, 1, src == 0 ? g->R / 4 : src == 1 ? g->C : g->C / 4));
		setf(g, &in, LOOM_F_STORE_DRAM_ADDR, r32(g) & ~3u);
		setf(g, &in, LOOM_F_STORE_MEM_ADDR, r32(g) & 0xffffffu);
		setf(g, &in, LOOM_F_STORE_STRIDE1, r32(g) & ~3u);
		setf(g, &in, LOOM_F_STORE_STRIDE2, r32(g) & ~3u);
		setf(g, &in, LOOM_F_STORE_STRIDE3, r32(g) & ~3u);
		setf(g, &in, LOOM_F_STORE_N1, n[0]);
		setf(g, &in, LOOM_F_STORE_N2, n[1]);
		setf(g, &in, LOOM_F_STORE_N3, n[2]);
		if (src == 2) {
			int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
			setf(g, &in, LOOM_F_STORE_ZERO_POINT, r32(g) & 0xff);
			setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)(a < b ? a : b));
			setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)(a < b ? b : a));
			setf(g, &in, LOOM_F_STORE_PARAM_ADDR,
			     chance(g, 30) ? g->cfg->acc_lines - 3 : rbelow(g, g->cfg->acc_lines - 2));
		}
	}
	return in;
}

void gen_emit_drain(gen *g, int q, int t)
{
	pend d = relay_insn(g, q);
	d.pop[t] = 1;
	prepare(g, &d);
	commit(g, &d, gen_reserve(g));
}

/* Make the next instruction of queue p->q happen after instruction number
 * `need` of the adjacent queue src. */
static void ensure_adj(gen *g, pend *p, int src, uint32_t need)
{
	int q = p->q, t = counter(src, q);
	for (int guard = 0; guard < 1000 && !g->failed; guard++) {
		if (!need || g->front[q][src] >= need)
			return;
		tokq *k = &g->tok[t];
		if (p->pop[t]) {
			if (k->npop >= k->n || g->m[k->push[k->npop]].seq < need)
				gen_fail(g, "generator bug: a forced pop does not order enough");
			return;
		}
		if (gen_tok_pending(g, t)) {
			if (g->m[k->push[k->npop]].seq >= need) {
				p->pop[t] = 1;
				return;
			}
			gen_emit_drain(g, q, t);
			continue;
		}
		uint32_t last = k->n ? g->m[k->push[k->n - 1]].seq : 0;
		uint32_t lo = umax(need, last + 1), hi = g->count[src];
		if (lo > hi) {
			gen_fail(g, "generator bug: no instruction can push the token");
			return;
		}
		uint32_t s = chance(g, 80) ? lo : rrange(g, lo, hi);
		tok_push(g, t, g->qidx[src][s - 1]);
		p->pop[t] = 1;
		return;
	}
	gen_fail(g, "generator bug: token ordering does not converge");
}

/* A relay (sync MATMUL or empty vector instruction) that happens after
 * instruction `need` of queue src (load or store); returns its sequence
 * number in the compute queue. */
static uint32_t emit_sync(gen *g, int src, uint32_t need)
{
	pend s = gen_relay_c(g);
	s.extra[src] = need;
	prepare(g, &s);
	commit(g, &s, gen_reserve(g));
	return g->count[QC];
}

static void needs_of(gen *g, const loom_insn *in, int q, uint32_t need[3])
{
	struct needctx c = {g, q, {0, 0, 0}};
	gen_footprint(g->cfg, in, need_cb, &c);
	memcpy(need, c.need, sizeof c.need);
}

/* Resolve every ordering the instruction needs: may emit drains and syncs
 * before it, and sets its pops. */
static void prepare(gen *g, pend *p)
{
	uint32_t need[3];
	p->q = gen_op_queue(&p->in);
	needs_of(g, &p->in, p->q, need);
	for (int q = 0; q < 3; q++)
		need[q] = umax(need[q], p->extra[q]);
	if (g->failed)
		return;
	if (p->q == QL || p->q == QS) {
		int other = p->q == QL ? QS : QL;
		if (need[other] > g->front[p->q][other])
			need[QC] = umax(need[QC], emit_sync(g, other, need[other]));
		ensure_adj(g, p, QC, need[QC]);
	} else {
		ensure_adj(g, p, QL, need[QL]);
		ensure_adj(g, p, QS, need[QS]);
	}
}

/* The vector clock p would get if committed now (without voluntary pops). */
static void vc_preview(const gen *g, const pend *p, uint32_t vc[3])
{
	memcpy(vc, g->front[p->q], 3 * sizeof *vc);
	for (int t = 0; t < T_N; t++)
		if (p->pop[t] && tok_dst[t] == p->q && g->tok[t].npop < g->tok[t].n)
			vc_join(vc, g->m[g->tok[t].push[g->tok[t].npop]].vc);
	vc[p->q] = g->count[p->q] + 1;
}

static void commit(gen *g, pend *p, size_t idx)
{
	if (g->failed)
		return;
	loom_cosim_prog *pr = g->p;
	int q = p->q;
	uint32_t vc[3];
	if (!p->novol)
		for (int t = 0; t < T_N; t++) {
			if (tok_dst[t] == q && !p->pop[t] && gen_tok_pending(g, t) && chance(g, g->vol_pop))
				p->pop[t] = 1;
			if (tok_src[t] == q && chance(g, g->vol_push))
				p->push[t] = 1;
		}
	pr->insns[idx] = p->in;
	pr->roles[idx] = p->role;
	memcpy(vc, g->front[q], sizeof vc);
	for (int t = 0; t < T_N; t++) {
		if (!p->pop[t])
			continue;
		tokq *k = &g->tok[t];
		if (tok_dst[t] != q || k->npop >= k->n) {
			gen_fail(g, "generator bug: pop without a push");
			return;
		}
		vc_join(vc, g->m[k->push[k->npop++]].vc);
		pr->insns[idx].w[0] |= 1u << tok_pop_bit[t];
	}
	vc[q] = ++g->count[q];
	size_t *nq = gen_grow(g->qidx[q], &g->qcap[q], g->count[q], sizeof *g->qidx[q]);
	if (!nq) {
		gen_fail(g, "out of memory");
		return;
	}
	g->qidx[q] = nq;
	g->qidx[q][g->count[q] - 1] = idx;
	g->m[idx].q = q;
	g->m[idx].seq = vc[q];
	memcpy(g->m[idx].vc, vc, sizeof vc);
	memcpy(g->front[q], vc, sizeof vc);
	for (int t = 0; t < T_N; t++)
		if (p->push[t] && tok_src[t] == q)
			tok_push(g, t, idx);
	struct updctx u = {g, idx, q, vc[q]};
	gen_footprint(g->cfg, &pr->insns[idx], upd_cb, &u);
	pr->est_cycles += g->fetch_cost + loom_insn_cycles(&g->tm, &pr->insns[idx]);
}

void gen_emit(gen *g, pend *p)
{
	if (g->failed)
		return;
	prepare(g, p);
	commit(g, p, gen_reserve(g));
}

pend gen_mkpend(const loom_insn *in, uint8_t role)
{
	pend p;
	memset(&p, 0, sizeof p);
	p.in = *in;
	p.role = role;
	p.q = gen_op_queue(in);
	return p;
}

void gen_emit_insn(gen *g, const loom_insn *in, uint8_t role)
{
	pend p = gen_mkpend(in, role);
	gen_emit(g, &p);
}

/* K then I, I depending on K: either in that order, or (an "early pop")
 * I first, waiting for a token K pushes when done. */
void gen_emit2(gen *g, pend *K, pend *I)
{
	if (g->failed)
		return;
	prepare(g, K);
	int qk = K->q, qi = gen_op_queue(&I->in), t = counter(qk, qi);
	I->q = qi;
	if (t >= 0 && !gen_tok_pending(g, t) && chance(g, g->swap_pct) && !g->failed) {
		uint32_t need[3], vck[3];
		needs_of(g, &I->in, qi, need);
		if (conflict(g, &K->in, &I->in))
			need[qk] = umax(need[qk], g->count[qk] + 1);
		vc_preview(g, K, vck);
		int ok = !g->failed;
		for (int q = 0; q < 3; q++)
			if (q != qi && need[q] > umax(g->front[qi][q], vck[q]))
				ok = 0;
		if (ok) {
			size_t ii = gen_reserve(g), ik = gen_reserve(g);
		/* commit() checks I's reads after K's writes are tracked */
			K->push[t] = 1;
			memset(I->pop, 0, sizeof I->pop);
			memset(I->push, 0, sizeof I->push);
			I->pop[t] = 1;
			I->novol = 1;
			commit(g, K, ik);
			commit(g, I, ii);
			return;
		}
	}
	commit(g, K, gen_reserve(g));
	gen_emit(g, I);
}

void gen_emit_ctrl(gen *g, const loom_insn *in)
{
	if (g->failed)
		return;
	size_t idx = gen_reserve(g);
	g->p->insns[idx] = *in;
	g->p->roles[idx] = LOOM_COSIM_CTRL;
	g->m[idx].q = QX;
	for (int q = 0; q < 3; q++)
		g->m[idx].vc[q] = g->count[q];
	for (int q = 0; q < 3; q++) /* a barrier: everything before happens before everything after */
		memcpy(g->front[q], g->m[idx].vc, sizeof g->front[q]);
	g->p->est_cycles += g->fetch_cost + loom_insn_cycles(&g->tm, in);
}

void gen_emit_mark(gen *g)
{
	long r = gen_region_new(g, LOOM_COSIM_MARK, LOOM_MARK_BYTES, chance(g, 50) ? 4 : 64);
	if (r < 0)
		return;
	loom_insn in = op(LOOM_OP_MARK);
	setf(g, &in, LOOM_F_MARK_DRAM_ADDR, (uint32_t)g->p->regions[r].addr);
	setf(g, &in, LOOM_F_MARK_MARK_ID, r32(g));
	gen_emit_ctrl(g, &in);
}

/* ---- token-only blocks ---- */

/* More than 255 tokens outstanding on one counter, then used up: token
 * counters must be 16 bits wide. */
void gen_blk_flood(gen *g)
{
	int t = (int)rbelow(g, T_N), q = tok_src[t];
	unsigned n = rrange(g, 256, 300);
	for (unsigned i = 0; i < n && !g->failed; i++) {
		pend p = relay_insn(g, q);
		p.push[t] = 1;
		gen_emit(g, &p);
	}
	while (!g->failed && gen_tok_pending(g, t))
		gen_emit_drain(g, tok_dst[t], t);
}

void gen_blk_tokens(gen *g)
{
	unsigned n = rrange(g, 1, 4);
	for (unsigned i = 0; i < n && !g->failed; i++) {
		int q = rbelow(g, 3);
		pend p = relay_insn(g, q);
		p.novol = 0;
		gen_emit(g, &p);
	}
}
