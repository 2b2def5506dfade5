/* gen.c - random programs for co-simulation (cosim/cosim.h):
 * a seeded generator of legal, race-free tensor-engine programs for any
 * configuration, and of bad programs whose error the decoder must report.
 * This file: the PRNG's seeding, program storage, the DRAM arena and its
 * regions, and the assembly of a legal program (loom_cosim_gen); the other
 * parts of the generator are listed in cosim/gen_internal.h.
 *
 * How race-freedom is guaranteed (docs/ISA.md, "Dependency tokens"):
 *   - Every instruction gets a vector clock vc[3]: vc[q] is the number of
 *     instructions of queue q (load, compute, store) that happen before it
 *     or are it. Queue order, token matching (the k-th pop of a counter
 *     waits for its k-th push) and MARK/FINISH barriers define it.
 *   - SP lines, ACC lines and DRAM words are tracked: last writer and, per
 *     queue, the last reader since that write. Before an instruction is
 *     placed, the accesses it conflicts with (from other queues, one a
 *     write) give per-queue needs; missing ordering is added with tokens:
 *     a push set on the earliest suitable instruction of the neighbouring
 *     queue and a pop on the new one, token-only LOAD/STORE or compute
 *     relays (1x1 "sync" MATMULs, ELTWISE/LUT of zero lines) to drain older
 *     pending tokens, and a compute relay carrying load <-> store orderings
 *     through the compute queue.
 *   - The vector unit (ELTWISE, POOL, DWCONV, LUT) is on the compute queue:
 *     ordered with MATMUL in the queue, with LOAD/STORE by tokens like
 *     MATMUL. Its results are stored (SP bytes) so they are compared; its
 *     destination never overlaps the lines it reads except in place.
 *   - Every pop matches a push earlier in program order, except "early
 *     pop" pairs (an instruction that waits for the instruction right
 *     after it); that and the LOOM_QUEUE_DEPTH limit are checked by an
 *     abstract run of the fetcher and queues before a program is returned.
 *   - SP/ACC lines are read only after this program wrote them (POOL and
 *     DWCONV: their whole input tile); DRAM is read only inside regions
 *     written before the run.
 * tests/unit/test_cosim_gen.c re-checks all of it independently.
 *
 * The PRNG is xoshiro256** seeded by splitmix64; no floating point, no
 * library sort: the same (configuration, seed) gives the same program. */
#include "cosim/gen_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ PRNG */

/* (xoshiro256** itself, rnext and the draws built on it, are in
 * cosim/gen_internal.h.) */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* ------------------------------------------------------------ generator */

void gen_fail(gen *g, const char *fmt, ...)
{
	if (g->failed)
		return;
	g->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	if (g->err && g->errlen)
		vsnprintf(g->err, g->errlen, fmt, ap);
	va_end(ap);
}

/* ---- program storage ---- */

/* p grown to hold need elements (cap updated); NULL when out of memory,
 * p itself still valid then. */
void *gen_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *np = realloc(p, nc * elem);
	if (np)
		*cap = nc;
	return np;
}

size_t gen_reserve(gen *g)
{
	loom_cosim_prog *p = g->p;
	if (p->ninsns >= MAX_INSNS) {
		gen_fail(g, "generator bug: more than %d instructions", MAX_INSNS);
		return 0;
	}
	loom_insn *ni = gen_grow(p->insns, &g->cap, p->ninsns + 1, sizeof *p->insns);
	if (ni)
		p->insns = ni;
	uint8_t *nr = gen_grow(p->roles, &g->cap_r, p->ninsns + 1, sizeof *p->roles);
	if (nr)
		p->roles = nr;
	meta *nm = gen_grow(g->m, &g->cap_m, p->ninsns + 1, sizeof *g->m);
	if (nm)
		g->m = nm;
	if (!ni || !nr || !nm) {
		gen_fail(g, "out of memory");
		return 0;
	}
	size_t i = p->ninsns++;
	memset(&p->insns[i], 0, sizeof p->insns[i]);
	p->roles[i] = LOOM_COSIM_DATA;
	memset(&g->m[i], 0, sizeof g->m[i]);
	return i;
}

/* ---- DRAM arena and regions ---- */

trk *gen_dram_trk(gen *g, uint64_t addr)
{
	if (addr < g->arena || addr >= g->arena + ARENA_BYTES)
		return NULL;
	trk *pg = g->dram[(addr - g->arena) / PAGE_BYTES];
	return pg ? &pg[(addr - g->arena) % PAGE_BYTES / 4] : NULL;
}

/* Tracking for DRAM [addr, addr+len) inside the window, allocated on use. */
static int dram_track(gen *g, uint64_t addr, uint64_t len)
{
	if (addr < g->arena || addr + len > g->arena + ARENA_BYTES)
		return 0; /* outside the window: not tracked, never accessed */
	for (uint64_t off = (addr - g->arena) & ~(uint64_t)(PAGE_BYTES - 1); off < addr + len - g->arena;
	     off += PAGE_BYTES) {
		trk **pg = &g->dram[off / PAGE_BYTES];
		if (!*pg && !(*pg = calloc(PAGE_BYTES / 4, sizeof **pg))) {
			gen_fail(g, "out of memory");
			return -1;
		}
	}
	return 0;
}

long gen_region_add(gen *g, unsigned kind, uint64_t addr, uint32_t len)
{
	loom_cosim_prog *p = g->p;
	loom_cosim_region *nreg = gen_grow(p->regions, &g->rcap, p->nregions + 1, sizeof *p->regions);
	if (!nreg) {
		gen_fail(g, "out of memory");
		return -1;
	}
	p->regions = nreg;
	loom_cosim_region *r = &p->regions[p->nregions];
	memset(r, 0, sizeof *r);
	r->addr = addr;
	r->len = len;
	r->kind = (uint8_t)kind;
	r->word_mask = kind == LOOM_COSIM_MARK ? LOOM_COSIM_MARK_WORDS : 0;
	r->init = malloc(len ? len : 1);
	if (!r->init) {
		gen_fail(g, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < len; i += 4) {
		uint32_t v = r32(g);
		for (uint32_t k = 0; k < 4 && i + k < len; k++)
			r->init[i + k] = (uint8_t)(v >> (8 * k));
	}
	if ((kind == LOOM_COSIM_INPUT || kind == LOOM_COSIM_OUTPUT) && !dram_track(g, addr, len))
		for (uint64_t a = addr; a < addr + len; a += 4) {
			trk *t = gen_dram_trk(g, a);
			if (t && !t->w)
				t->w = 1;
		}
	return (long)p->nregions++;
}

/* A new region of len bytes (multiple of 4) in the arena; -1 when full. */
long gen_region_new(gen *g, unsigned kind, uint32_t len, uint32_t align)
{
	uint64_t gap = chance(g, 60) ? 4u * rbelow(g, 8) : chance(g, 80) ? 4u * rbelow(g, 64) : 4u * rbelow(g, 2048);
	uint64_t a;
	if (g->down) {
		if (g->next < g->arena + gap + len) {
			g->full = 1;
			return -1;
		}
		a = (g->next - gap - len) & ~(uint64_t)(align - 1);
		if (a < g->arena) {
			g->full = 1;
			return -1;
		}
		g->next = a;
	} else {
		a = (g->next + gap + align - 1) & ~(uint64_t)(align - 1);
		if (a + len > g->arena + ARENA_BYTES) {
			g->full = 1;
			return -1;
		}
		g->next = a + len;
	}
	if (a < g->lo_used)
		g->lo_used = a;
	if (a + len > g->hi_used)
		g->hi_used = a + len;
	return gen_region_add(g, kind, a, len);
}

/* ---- program assembly ---- */

/* The DRAM window: low and growing up, or ending at the end of DRAM and
 * growing down. */
void gen_arena_place(gen *g, int down)
{
	const loom_hwcfg *cfg = g->cfg;
	g->down = down;
	if (down) {
		g->arena = cfg->dram_bytes - ARENA_BYTES;
		g->next = cfg->dram_bytes;
	} else {
		uint64_t room = cfg->dram_bytes - ARENA_BYTES - 65536;
		uint64_t span = room < (16u << 20) ? room : (16u << 20);
		g->arena = (rnext(&g->r) % (span / 4)) * 4;
		if (chance(g, 30))
			g->arena &= ~4095ull;
		g->next = g->arena;
	}
	g->lo_used = g->hi_used = g->next;
}

void gen_init(gen *g, const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	memset(p, 0, sizeof *p);
	g->cfg = cfg;
	g->p = p;
	g->err = err;
	g->errlen = errlen;
	g->R = cfg->array_rows;
	g->C = cfg->array_cols;
	p->seed = seed;
	rng_seed(&g->r, seed ^ 0x4c4f4f4d434f5349ull);
	if (err && errlen)
		err[0] = 0;
	g->sp = calloc(cfg->sp_lines, sizeof *g->sp);
	g->acc = calloc(cfg->acc_lines, sizeof *g->acc);
	if (!g->sp || !g->acc) {
		gen_fail(g, "out of memory");
		return;
	}
	if (cfg->dram_bytes < 4ull * ARENA_BYTES || cfg->acc_lines < 64 || cfg->sp_lines < 1024) {
		gen_fail(g, "configuration %s is too small for the co-simulation generator", cfg->name);
		return;
	}
	loom_timing_init(&g->tm, cfg, 0, 0);
	g->fetch_cost = loom_cyc_dma(&g->tm, loom_fetch_beats(&g->tm), 0);
	/* knobs */
	int tok = rbelow(g, 100);
	g->vol_pop = tok < 50 ? 5 : tok < 85 ? 20 : 45;
	g->vol_push = tok < 50 ? 3 : tok < 85 ? 10 : 30;
	g->swap_pct = chance(g, 30) ? 0 : chance(g, 50) ? 30 : 70;
	/* the DRAM window: low and growing up, or ending at the end of DRAM
	 * and growing down */
	gen_arena_place(g, chance(g, 25));
	/* sync lines and the scratch ACC line at the bottom or the top */
	uint32_t C = g->C;
	if (chance(g, 50)) {
		g->sync_sp = 0;
		g->sp_lo = C;
		g->sp_hi = cfg->sp_lines;
	} else {
		g->sync_sp = cfg->sp_lines - C;
		g->sp_lo = 0;
		g->sp_hi = cfg->sp_lines - C;
	}
	if (chance(g, 50)) {
		g->scratch_acc = 0;
		g->acc_lo = 1;
		g->acc_hi = cfg->acc_lines;
	} else {
		g->scratch_acc = cfg->acc_lines - 1;
		g->acc_lo = 0;
		g->acc_hi = cfg->acc_lines - 1;
	}
	g->bump[0] = g->sp_lo + rbelow(g, 64);
	g->bump[1] = g->acc_lo + rbelow(g, 8);
}

void gen_prologue(gen *g)
{
	if (chance(g, 10))
		gen_emit_mark(g); /* counters at their start values */
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = gen_rand_rw_sp(g);
	x.n[0] = g->C;
	x.n[1] = x.n[2] = 1;
	x.mem = g->sync_sp;
	if (gen_load(g, &x, 0, NULL, NULL))
		return;
	pend s = gen_sync_insn(g);
	gen_emit(g, &s);
}

void gen_body(gen *g, uint64_t budget)
{
	while (!g->failed && !g->full && g->p->est_cycles < budget && g->p->ninsns < SOFT_INSNS) {
		int r = rbelow(g, 100);
		if (chance(g, VEC_PCT))
			gen_blk_vec(g);
		else if (r < 30)
			gen_blk_conv(g);
		else if (r < 52)
			gen_blk_pipeline(g);
		else if (r < 62)
			gen_blk_copy(g, 0);
		else if (r < 70)
			gen_blk_copy(g, 1);
		else if (r < 80)
			gen_blk_acc(g);
		else if (r < 87)
			gen_blk_indep(g);
		else if (r < 93)
			gen_blk_tokens(g);
		else
			gen_emit_mark(g);
	}
	g->full = 0;
}

/* Place the code (n instructions) in DRAM, away from the data. */
int gen_place_code(gen *g, int at_end)
{
	loom_cosim_prog *p = g->p;
	uint64_t len = 32ull * p->ninsns, a;
	uint64_t dram = g->cfg->dram_bytes;
	if (at_end) {
		a = dram - len;
		if (a < g->hi_used) {
			gen_fail(g, "generator bug: code at the end of DRAM overlaps data");
			return -1;
		}
	} else if (g->down) {
		a = ((g->lo_used - len) & ~31ull) - 32u * rbelow(g, 64);
	} else if (g->arena > len + 8192 && chance(g, 25)) {
		a = ((g->arena - len) & ~31ull) - 32u * rbelow(g, 64);
	} else {
		a = ((g->hi_used + 31) & ~31ull) + 32u * rbelow(g, 64);
		if (a + len > dram)
			a = dram - len;
	}
	p->insn_addr = a;
	long r = gen_region_add(g, LOOM_COSIM_CODE, a, (uint32_t)len);
	if (r < 0)
		return -1;
	/* the code region first */
	loom_cosim_region cr = p->regions[r];
	memmove(p->regions + 1, p->regions, (size_t)r * sizeof *p->regions);
	p->regions[0] = cr;
	return 0;
}

void gen_fill_code(loom_cosim_prog *p)
{
	loom_cosim_region *r = &p->regions[0];
	for (size_t i = 0; i < p->ninsns && 32 * (i + 1) <= r->len; i++)
		for (int k = 0; k < 8; k++)
			put32(r->init + 32 * i + 4 * k, p->insns[i].w[k]);
}

/* Abstract run of the fetcher and the three queues with every started
 * instruction completing at once (a deadlock does not depend on timing).
 * Returns the index of the instruction the fetcher holds at a deadlock,
 * -1 when the program reaches FINISH, -2 when it runs off the code. */
long gen_abstract_run(const loom_cosim_prog *p, size_t first)
{
	size_t qbuf[3][LOOM_QUEUE_DEPTH];
	unsigned qh[3] = {0}, qn[3] = {0};
	uint64_t tok[T_N] = {0};
	size_t pc = first;
	for (;;) {
		int progress = 0;
		for (int q = 0; q < 3; q++) {
			while (qn[q]) {
				const loom_insn *in = &p->insns[qbuf[q][qh[q]]];
				int ok = 1;
				for (int t = 0; t < T_N; t++)
					if (tok_dst[t] == q && (in->w[0] >> tok_pop_bit[t] & 1) && !tok[t])
						ok = 0;
				if (!ok)
					break;
				for (int t = 0; t < T_N; t++) {
					if (tok_dst[t] == q && (in->w[0] >> tok_pop_bit[t] & 1))
						tok[t]--;
					if (tok_src[t] == q && (in->w[0] >> tok_push_bit[t] & 1))
						tok[t]++;
				}
				qh[q] = (qh[q] + 1) % LOOM_QUEUE_DEPTH;
				qn[q]--;
				progress = 1;
			}
		}
		if (pc >= p->ninsns)
			return -2;
		const loom_insn *in = &p->insns[pc];
		int q = gen_op_queue(in);
		if (q == QX) {
			if (!qn[0] && !qn[1] && !qn[2]) {
				if (loom_insn_opcode(in) == LOOM_OP_FINISH)
					return -1;
				pc++;
				progress = 1;
			}
		} else if (qn[q] < LOOM_QUEUE_DEPTH) {
			qbuf[q][(qh[q] + qn[q]) % LOOM_QUEUE_DEPTH] = pc++;
			qn[q]++;
			progress = 1;
		}
		if (!progress)
			return (long)pc;
	}
}

static void gen_free_state(gen *g)
{
	free(g->m);
	for (int q = 0; q < 3; q++)
		free(g->qidx[q]);
	for (int t = 0; t < T_N; t++)
		free(g->tok[t].push);
	free(g->sp);
	free(g->acc);
	for (size_t i = 0; i < ARENA_BYTES / PAGE_BYTES; i++)
		free(g->dram[i]);
}

int gen_finish_prog(gen *g, int rc)
{
	gen_free_state(g);
	if (g->failed || rc) {
		loom_cosim_free(g->p);
		return -1;
	}
	return 0;
}

static uint64_t pick_budget(gen *g)
{
	int r = rbelow(g, 100);
	return r < 45 ? rrange(g, 3000, 9000) : r < 85 ? rrange(g, 9000, 20000) : rrange(g, 20000, 40000);
}

int loom_cosim_gen(const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen)
{
	gen g;
	gen_init(&g, cfg, seed, p, err, errlen);
	if (!g.failed) {
		gen_prologue(&g);
		if (chance(&g, 3))
			gen_blk_flood(&g);
		gen_body(&g, pick_budget(&g));
		if (chance(&g, 40))
			gen_emit_mark(&g);
		g.full = 0;
		loom_insn fin = op(LOOM_OP_FINISH);
		gen_emit_ctrl(&g, &fin);
	}
	if (!g.failed && !gen_place_code(&g, !g.down && chance(&g, 10))) {
		gen_fill_code(p);
		for (size_t i = 0; i < p->ninsns && !g.failed; i++) {
			uint32_t f;
			unsigned c = loom_insn_check(cfg, &p->insns[i], &f);
			if (c) {
				char d[256];
				loom_insn_disasm(&p->insns[i], d, sizeof d);
				gen_fail(&g, "generator bug: instruction %zu fails %s (%s): %s", i, loom_err_name(c),
				      loom_field_name(f), d);
			}
		}
		if (!g.failed && gen_abstract_run(p, 0) != -1)
			gen_fail(&g, "generator bug: seed %llu deadlocks", (unsigned long long)seed);
	}
	return gen_finish_prog(&g, 0);
}
