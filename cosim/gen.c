/* gen.c - random programs for co-simulation (cosim/cosim.h):
 * a seeded generator of legal, race-free tensor-engine programs for any
 * configuration, and of bad programs whose error the decoder must report.
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
#include "cosim/cosim.h"
#include "common/timing.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ PRNG */

typedef struct rng {
	uint64_t s[4];
} rng;

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

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rnext(rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* ------------------------------------------------------------- constants */

enum { QL = LOOM_Q_LOAD, QC = LOOM_Q_COMPUTE, QS = LOOM_Q_STORE, QX = LOOM_Q_CTRL };
enum { T_LC, T_CL, T_CS, T_SC, T_N }; /* token counters */
static const int tok_src[T_N] = {QL, QC, QC, QS};
static const int tok_dst[T_N] = {QC, QL, QS, QC};
static const unsigned tok_pop_bit[T_N] = {8, 9, 8, 9};   /* MATMUL.POP_PREV, LOAD.POP_NEXT, STORE.POP_PREV, MATMUL.POP_NEXT */
static const unsigned tok_push_bit[T_N] = {11, 10, 11, 10}; /* LOAD.PUSH_NEXT, MATMUL.PUSH_PREV/NEXT, STORE.PUSH_PREV */

static int counter(int src, int dst)
{
	for (int t = 0; t < T_N; t++)
		if (tok_src[t] == src && tok_dst[t] == dst)
			return t;
	return -1;
}

enum { SP_SPACE, ACC_SPACE, DRAM_SPACE };

#define ARENA_BYTES (1u << 20) /* DRAM window a program's data lives in */
#define PAGE_BYTES 4096u       /* DRAM tracking is allocated per page of the window */
#define MAX_INSNS 1500         /* hard cap (code never exceeds 48 KiB) */
#define SOFT_INSNS 420         /* the generator stops adding blocks here */
#define VEC_PCT 20             /* blocks of vector-unit work */

/* ---------------------------------------------------------- footprints */

typedef void (*fp_fn)(void *ctx, int space, uint64_t lo, uint64_t hi, int write);

/* SP lines of a LUT table. */
static uint32_t lut_lines(const loom_hwcfg *cfg)
{
	return (LOOM_LUT_ENTRIES + cfg->array_rows - 1) / cfg->array_rows;
}

/* Every SP line, ACC line and DRAM byte range the instruction touches, reads
 * before writes (conservative for MATMUL, POOL and DWCONV: the whole input
 * tile). */
static void footprint(const loom_hwcfg *cfg, const loom_insn *in, fp_fn fn, void *ctx)
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
		fn(ctx, src == LOOM_MEM_SP ? SP_SPACE : ACC_SPACE, mem, mem + n1 * n2 * n3, 0);
		if (src == LOOM_MEM_ACC_REQUANT)
			fn(ctx, ACC_SPACE, G(STORE, PARAM_ADDR), G(STORE, PARAM_ADDR) + 3u, 0);
		for (uint64_t i3 = 0; i3 < n3; i3++)
			for (uint64_t i2 = 0; i2 < n2; i2++)
				for (uint64_t i1 = 0; i1 < n1; i1++) {
					uint64_t a = G(STORE, DRAM_ADDR) + i3 * G(STORE, STRIDE3) +
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
		fn(ctx, SP_SPACE, tab, tab + lut_lines(cfg), 0);
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

/* ------------------------------------------------------------ generator */

/* Tracking of one SP line, ACC line or DRAM word. w: 0 = never written
 * (DRAM: not in a data region), 1 = DRAM region data, k+2 = written by
 * instruction k. rd[q]: sequence number in queue q of its last reader since
 * that write (0 = none). */
typedef struct trk {
	uint32_t w;
	uint32_t rd[3];
} trk;

typedef struct meta {
	int q;           /* queue, QX for MARK/FINISH */
	uint32_t seq;    /* 1-based position in its queue */
	uint32_t vc[3];
} meta;

typedef struct pend {
	loom_insn in;
	uint8_t role;
	int q;
	uint32_t extra[3]; /* needs besides the footprint's */
	uint8_t pop[T_N], push[T_N];
	int novol;         /* no voluntary tokens */
} pend;

typedef struct tokq {
	size_t *push; /* instruction indices of pushes, in order */
	size_t n, cap, npop;
} tokq;

/* A LUT table or DWCONV parameter block still holding what its LOAD wrote. */
typedef struct vblock {
	uint32_t line, n;
	size_t insn;
} vblock;

typedef struct ptriple {
	uint32_t line;
	size_t insn;
} ptriple;

typedef struct gen {
	const loom_hwcfg *cfg;
	loom_cosim_prog *p;
	rng r;
	uint32_t R, C;
	char *err;
	size_t errlen;
	int failed;
	int full; /* out of arena or instruction budget */

	size_t cap, cap_r, cap_m; /* of p->insns, p->roles, m */
	meta *m;
	size_t rcap; /* of p->regions */

	uint32_t count[3];
	uint32_t front[3][3];
	size_t *qidx[3];
	size_t qcap[3];
	tokq tok[T_N];

	trk *sp, *acc;
	trk *dram[ARENA_BYTES / PAGE_BYTES];
	uint64_t arena, next, lo_used, hi_used;
	int down;

	uint32_t sync_sp, scratch_acc;
	uint32_t sp_lo, sp_hi, acc_lo, acc_hi, bump[2];
	ptriple params[8];
	unsigned nparams;
	vblock tables[4], dwparams[4]; /* recent LUT tables, DWCONV parameter blocks */
	unsigned ntables, ndwparams;

	/* knobs drawn per program */
	unsigned vol_pop, vol_push, swap_pct;
	uint64_t fetch_cost;
	loom_timing tm; /* the timing model (common/timing.h), for the serial estimate */
} gen;

static void gfail(gen *g, const char *fmt, ...)
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

static uint32_t rbelow(gen *g, uint32_t n)
{
	return n ? (uint32_t)(((rnext(&g->r) >> 32) * (uint64_t)n) >> 32) : 0;
}
static uint32_t rrange(gen *g, uint32_t lo, uint32_t hi) { return hi <= lo ? lo : lo + rbelow(g, hi - lo + 1); }
static int chance(gen *g, unsigned pct) { return rbelow(g, 100) < pct; }
static uint32_t r32(gen *g) { return (uint32_t)(rnext(&g->r) >> 32); }
static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }

static void setf(gen *g, loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v))
		gfail(g, "generator bug: %s = %u does not fit", loom_field_name(f), v);
}

static loom_insn op(unsigned opcode)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = opcode;
	return in;
}

/* ---- program storage ---- */

/* p grown to hold need elements (cap updated); NULL when out of memory,
 * p itself still valid then. */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
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

static size_t reserve(gen *g)
{
	loom_cosim_prog *p = g->p;
	if (p->ninsns >= MAX_INSNS) {
		gfail(g, "generator bug: more than %d instructions", MAX_INSNS);
		return 0;
	}
	loom_insn *ni = grow(p->insns, &g->cap, p->ninsns + 1, sizeof *p->insns);
	if (ni)
		p->insns = ni;
	uint8_t *nr = grow(p->roles, &g->cap_r, p->ninsns + 1, sizeof *p->roles);
	if (nr)
		p->roles = nr;
	meta *nm = grow(g->m, &g->cap_m, p->ninsns + 1, sizeof *g->m);
	if (nm)
		g->m = nm;
	if (!ni || !nr || !nm) {
		gfail(g, "out of memory");
		return 0;
	}
	size_t i = p->ninsns++;
	memset(&p->insns[i], 0, sizeof p->insns[i]);
	p->roles[i] = LOOM_COSIM_DATA;
	memset(&g->m[i], 0, sizeof g->m[i]);
	return i;
}

/* ---- DRAM arena and regions ---- */

static trk *dram_trk(gen *g, uint64_t addr)
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
			gfail(g, "out of memory");
			return -1;
		}
	}
	return 0;
}

static long region_add(gen *g, unsigned kind, uint64_t addr, uint32_t len)
{
	loom_cosim_prog *p = g->p;
	loom_cosim_region *nreg = grow(p->regions, &g->rcap, p->nregions + 1, sizeof *p->regions);
	if (!nreg) {
		gfail(g, "out of memory");
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
		gfail(g, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < len; i += 4) {
		uint32_t v = r32(g);
		for (uint32_t k = 0; k < 4 && i + k < len; k++)
			r->init[i + k] = (uint8_t)(v >> (8 * k));
	}
	if ((kind == LOOM_COSIM_INPUT || kind == LOOM_COSIM_OUTPUT) && !dram_track(g, addr, len))
		for (uint64_t a = addr; a < addr + len; a += 4) {
			trk *t = dram_trk(g, a);
			if (t && !t->w)
				t->w = 1;
		}
	return (long)p->nregions++;
}

/* A new region of len bytes (multiple of 4) in the arena; -1 when full. */
static long region_new(gen *g, unsigned kind, uint32_t len, uint32_t align)
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
	return region_add(g, kind, a, len);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

/* ---- SP / ACC line allocation ---- */

static uint32_t line_alloc(gen *g, int acc, uint32_t n)
{
	uint32_t lo = acc ? g->acc_lo : g->sp_lo, hi = acc ? g->acc_hi : g->sp_hi;
	if (n == 0 || n > hi - lo) {
		gfail(g, "generator bug: %u %s lines do not fit", n, acc ? "ACC" : "SP");
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
	return dram_trk(g, u * 4);
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
			gfail(c->g, "generator bug: instruction %zu: %s of %s unit 0x%llx outside written data: %s", c->idx,
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
	fpacc *na = grow(l->a, &l->cap, l->n + 1, sizeof *l->a);
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
	footprint(g->cfg, a, collect_cb, &la);
	footprint(g->cfg, b, collect_cb, &lb);
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

static int op_queue(const loom_insn *in)
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

static size_t tok_pending(const gen *g, int t) { return g->tok[t].n - g->tok[t].npop; }

static void tok_push(gen *g, int t, size_t idx)
{
	tokq *k = &g->tok[t];
	size_t *np = grow(k->push, &k->cap, k->n + 1, sizeof *k->push);
	if (!np) {
		gfail(g, "out of memory");
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
static pend sync_insn(gen *g)
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

/* An instruction of queue q that only moves tokens: a relay (relay_c) on the
 * compute queue, an empty LOAD/STORE on the others. */
static loom_insn token_ls(gen *g, int store);
static loom_insn token_vec(gen *g);

/* A compute-queue instruction that only relays tokens: mostly the sync
 * MATMUL, sometimes an ELTWISE or LUT of zero lines. */
static pend relay_c(gen *g)
{
	pend p;
	if (chance(g, 85))
		return sync_insn(g);
	memset(&p, 0, sizeof p);
	p.in = token_vec(g);
	p.q = QC;
	p.role = LOOM_COSIM_TOKEN;
	p.novol = 1;
	return p;
}

static pend relay_insn(gen *g, int q)
{
	pend p;
	if (q == QC)
		return relay_c(g);
	memset(&p, 0, sizeof p);
	p.in = token_ls(g, q == QS);
	p.q = q;
	p.role = LOOM_COSIM_TOKEN;
	p.novol = 1;
	return p;
}

/* A LOAD or STORE that moves nothing (N1*N2*N3 = 0) with otherwise random,
 * legal fields: range checks do not apply, alignment and field checks do. */
static loom_insn token_ls(gen *g, int store)
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

static void emit_drain(gen *g, int q, int t)
{
	pend d = relay_insn(g, q);
	d.pop[t] = 1;
	prepare(g, &d);
	commit(g, &d, reserve(g));
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
				gfail(g, "generator bug: a forced pop does not order enough");
			return;
		}
		if (tok_pending(g, t)) {
			if (g->m[k->push[k->npop]].seq >= need) {
				p->pop[t] = 1;
				return;
			}
			emit_drain(g, q, t);
			continue;
		}
		uint32_t last = k->n ? g->m[k->push[k->n - 1]].seq : 0;
		uint32_t lo = umax(need, last + 1), hi = g->count[src];
		if (lo > hi) {
			gfail(g, "generator bug: no instruction can push the token");
			return;
		}
		uint32_t s = chance(g, 80) ? lo : rrange(g, lo, hi);
		tok_push(g, t, g->qidx[src][s - 1]);
		p->pop[t] = 1;
		return;
	}
	gfail(g, "generator bug: token ordering does not converge");
}

/* A relay (sync MATMUL or empty vector instruction) that happens after
 * instruction `need` of queue src (load or store); returns its sequence
 * number in the compute queue. */
static uint32_t emit_sync(gen *g, int src, uint32_t need)
{
	pend s = relay_c(g);
	s.extra[src] = need;
	prepare(g, &s);
	commit(g, &s, reserve(g));
	return g->count[QC];
}

static void needs_of(gen *g, const loom_insn *in, int q, uint32_t need[3])
{
	struct needctx c = {g, q, {0, 0, 0}};
	footprint(g->cfg, in, need_cb, &c);
	memcpy(need, c.need, sizeof c.need);
}

/* Resolve every ordering the instruction needs: may emit drains and syncs
 * before it, and sets its pops. */
static void prepare(gen *g, pend *p)
{
	uint32_t need[3];
	p->q = op_queue(&p->in);
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
			if (tok_dst[t] == q && !p->pop[t] && tok_pending(g, t) && chance(g, g->vol_pop))
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
			gfail(g, "generator bug: pop without a push");
			return;
		}
		vc_join(vc, g->m[k->push[k->npop++]].vc);
		pr->insns[idx].w[0] |= 1u << tok_pop_bit[t];
	}
	vc[q] = ++g->count[q];
	size_t *nq = grow(g->qidx[q], &g->qcap[q], g->count[q], sizeof *g->qidx[q]);
	if (!nq) {
		gfail(g, "out of memory");
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
	footprint(g->cfg, &pr->insns[idx], upd_cb, &u);
	pr->est_cycles += g->fetch_cost + loom_insn_cycles(&g->tm, &pr->insns[idx]);
}

static void emit(gen *g, pend *p)
{
	if (g->failed)
		return;
	prepare(g, p);
	commit(g, p, reserve(g));
}

static pend mkpend(const loom_insn *in, uint8_t role)
{
	pend p;
	memset(&p, 0, sizeof p);
	p.in = *in;
	p.role = role;
	p.q = op_queue(in);
	return p;
}

static void emit_insn(gen *g, const loom_insn *in, uint8_t role)
{
	pend p = mkpend(in, role);
	emit(g, &p);
}

/* K then I, I depending on K: either in that order, or (an "early pop")
 * I first, waiting for a token K pushes when done. */
static void emit2(gen *g, pend *K, pend *I)
{
	if (g->failed)
		return;
	prepare(g, K);
	int qk = K->q, qi = op_queue(&I->in), t = counter(qk, qi);
	I->q = qi;
	if (t >= 0 && !tok_pending(g, t) && chance(g, g->swap_pct) && !g->failed) {
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
			size_t ii = reserve(g), ik = reserve(g);
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
	commit(g, K, reserve(g));
	emit(g, I);
}

static void emit_ctrl(gen *g, const loom_insn *in)
{
	if (g->failed)
		return;
	size_t idx = reserve(g);
	g->p->insns[idx] = *in;
	g->p->roles[idx] = LOOM_COSIM_CTRL;
	g->m[idx].q = QX;
	for (int q = 0; q < 3; q++)
		g->m[idx].vc[q] = g->count[q];
	for (int q = 0; q < 3; q++) /* a barrier: everything before happens before everything after */
		memcpy(g->front[q], g->m[idx].vc, sizeof g->front[q]);
	g->p->est_cycles += g->fetch_cost + loom_insn_cycles(&g->tm, in);
}

static void emit_mark(gen *g)
{
	long r = region_new(g, LOOM_COSIM_MARK, LOOM_MARK_BYTES, chance(g, 50) ? 4 : 64);
	if (r < 0)
		return;
	loom_insn in = op(LOOM_OP_MARK);
	setf(g, &in, LOOM_F_MARK_DRAM_ADDR, (uint32_t)g->p->regions[r].addr);
	setf(g, &in, LOOM_F_MARK_MARK_ID, r32(g));
	emit_ctrl(g, &in);
}

/* ---- data movement helpers ---- */

/* Random strides for rows of n0 bytes over extents n[0..2]; returns the
 * DRAM extent. overlap: rows may overlap (reads only, or rare stores). */
static uint64_t rand_strides(gen *g, const uint32_t n[3], uint32_t n0, int overlap, uint32_t s[3])
{
	int order[3] = {0, 1, 2};
	for (int i = 2; i > 0; i--) {
		int j = (int)rbelow(g, (uint32_t)i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	uint64_t span = n0; /* bytes covered by the dims placed so far */
	for (int k = 0; k < 3; k++) {
		int d = order[k];
		if (n[d] <= 1) {
			s[d] = chance(g, 50) ? (uint32_t)span : chance(g, 50) ? 0 : r32(g) & ~3u;
			continue;
		}
		uint64_t st;
		if (overlap && k == 0 && chance(g, 40))
			st = 4u * rbelow(g, n0 / 4 + 1);
		else if (chance(g, 55))
			st = span;
		else if (chance(g, 85))
			st = span + 4u * rbelow(g, 8);
		else
			st = span + 4u * rbelow(g, 1024);
		if ((n[d] - 1) * st + span > 65536)
			st = span;
		s[d] = (uint32_t)st;
		span = (n[d] - 1) * st + span;
	}
	uint64_t ext = n0;
	for (int d = 0; d < 3; d++)
		ext += (uint64_t)(n[d] ? n[d] - 1 : 0) * s[d];
	return ext;
}

/* Split a line count into n1*n2*n3 with n1, n2 < 4096, n3 < 256. */
static void rand_shape(gen *g, uint32_t count, uint32_t n[3])
{
	uint32_t div[64], nd = 0;
	for (uint32_t d = 1; d <= count && nd < 64; d++)
		if (count % d == 0)
			div[nd++] = d;
	n[0] = count;
	n[1] = n[2] = 1;
	if (chance(g, 35) || count == 1)
		return;
	uint32_t a = div[rbelow(g, nd)], rest = count / a;
	uint32_t nd2 = 0;
	for (uint32_t d = 1; d <= rest && nd2 < 64; d++)
		if (rest % d == 0)
			div[nd2++] = d;
	uint32_t b = div[rbelow(g, nd2)];
	n[0] = a;
	n[1] = b;
	n[2] = rest / b;
	if (n[2] > 255 || n[0] > 4095 || n[1] > 4095) {
		n[0] = count;
		n[1] = n[2] = 1;
	}
}

/* Fill row i of a crafted region: the DRAM bytes a LOAD row reads. */
typedef void (*craft_fn)(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx);

/* A region holding (or able to hold) every row of a transfer: a new one,
 * or (reuse) an existing INPUT/OUTPUT region that the extent fits in. */
static int pick_dram(gen *g, uint64_t ext, int reuse_pct, int allow_input, uint64_t *addr)
{
	loom_cosim_prog *p = g->p;
	if (ext > 0xfffffff0u)
		return -1;
	if (chance(g, reuse_pct) && p->nregions) {
		long start = rbelow(g, (uint32_t)p->nregions);
		for (size_t k = 0; k < p->nregions; k++) {
			const loom_cosim_region *r = &p->regions[(start + k) % p->nregions];
			if (r->kind != LOOM_COSIM_OUTPUT && !(allow_input && r->kind == LOOM_COSIM_INPUT))
				continue;
			if (r->len < ext)
				continue;
			*addr = r->addr + 4u * rbelow(g, (uint32_t)((r->len - ext) / 4 + 1));
			return 0;
		}
	}
	long r = region_new(g, LOOM_COSIM_INPUT, (uint32_t)ext, 4);
	if (r < 0)
		return -1;
	*addr = p->regions[r].addr;
	return (int)r + 1; /* > 0: a new region */
}

typedef struct xfer {
	int acc;
	uint32_t mem, rw, n[3], pad[4]; /* pad: top, bottom, left, right */
	uint8_t padv;
} xfer;

static uint32_t xfer_lines(const xfer *x)
{
	return x->n[2] * (x->pad[0] + x->n[1] + x->pad[1]) * (x->pad[2] + x->n[0] + x->pad[3]);
}

/* Emit (or return in *out without emitting) a LOAD of x from a random DRAM
 * view; craft writes meaningful data into new regions. */
static int build_load(gen *g, const xfer *x, int reuse_pct, craft_fn craft, void *cctx, loom_insn *out)
{
	uint32_t s[3], n0 = 4 * x->rw;
	uint64_t ext = rand_strides(g, x->n, n0, 1, s), a;
	int nr = pick_dram(g, ext, craft ? 0 : reuse_pct, 1, &a);
	if (nr < 0)
		return -1;
	if (nr > 0 && craft) {
		loom_cosim_region *r = &g->p->regions[nr - 1];
		uint64_t row = 0;
		for (uint32_t i3 = 0; i3 < x->n[2]; i3++)
			for (uint32_t i2 = 0; i2 < x->n[1]; i2++)
				for (uint32_t i1 = 0; i1 < x->n[0]; i1++, row++)
					craft(g, r->init + (a - r->addr) + (uint64_t)i3 * s[2] + (uint64_t)i2 * s[1] +
							 (uint64_t)i1 * s[0],
					      n0, row, cctx);
	}
	loom_insn in = op(LOOM_OP_LOAD);
	setf(g, &in, LOOM_F_LOAD_TARGET, (uint32_t)x->acc);
	setf(g, &in, LOOM_F_LOAD_PAD_VALUE, x->acc ? 0 : x->padv);
	setf(g, &in, LOOM_F_LOAD_ROW_WORDS, x->rw);
	setf(g, &in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)a);
	setf(g, &in, LOOM_F_LOAD_MEM_ADDR, x->mem);
	setf(g, &in, LOOM_F_LOAD_STRIDE1, s[0]);
	setf(g, &in, LOOM_F_LOAD_STRIDE2, s[1]);
	setf(g, &in, LOOM_F_LOAD_STRIDE3, s[2]);
	setf(g, &in, LOOM_F_LOAD_N1, x->n[0]);
	setf(g, &in, LOOM_F_LOAD_N2, x->n[1]);
	setf(g, &in, LOOM_F_LOAD_N3, x->n[2]);
	setf(g, &in, LOOM_F_LOAD_PAD_TOP, x->pad[0]);
	setf(g, &in, LOOM_F_LOAD_PAD_BOTTOM, x->pad[1]);
	setf(g, &in, LOOM_F_LOAD_PAD_LEFT, x->pad[2]);
	setf(g, &in, LOOM_F_LOAD_PAD_RIGHT, x->pad[3]);
	*out = in;
	return 0;
}

static int load(gen *g, const xfer *x, int reuse_pct, craft_fn craft, void *cctx)
{
	loom_insn in;
	if (build_load(g, x, reuse_pct, craft, cctx, &in))
		return -1;
	emit_insn(g, &in, LOOM_COSIM_DATA);
	return 0;
}

static uint32_t rand_rw_sp(gen *g) { return chance(g, 65) ? g->R / 4 : rrange(g, 1, g->R / 4); }
static uint32_t rand_rw_acc(gen *g) { return chance(g, 60) ? g->C : rrange(g, 1, g->C); }

/* Lines [mem, mem+lines) as one plane with random padding; lines must be
 * pl+n1+pr wide: w x h = lines given by the caller. */
static void plane_xfer(gen *g, xfer *x, uint32_t w, uint32_t h, uint32_t planes, int pads)
{
	x->pad[0] = pads && h > 1 && chance(g, 50) ? rbelow(g, umin(2, h - 1) + 1) : 0;
	x->pad[1] = pads && h - x->pad[0] > 1 && chance(g, 50) ? rbelow(g, umin(2, h - 1 - x->pad[0]) + 1) : 0;
	x->pad[2] = pads && w > 1 && chance(g, 50) ? rbelow(g, umin(2, w - 1) + 1) : 0;
	x->pad[3] = pads && w - x->pad[2] > 1 && chance(g, 50) ? rbelow(g, umin(2, w - 1 - x->pad[2]) + 1) : 0;
	x->n[0] = w - x->pad[2] - x->pad[3];
	x->n[1] = h - x->pad[0] - x->pad[1];
	x->n[2] = planes;
	x->padv = chance(g, 30) ? 0 : (uint8_t)r32(g);
}

/* Store lines [mem, mem+count) of src; rw row words; requant params. */
typedef struct stq {
	unsigned src;
	uint32_t mem, count, rw, param;
	int8_t zp, lo, hi;
} stq;

static int store(gen *g, const stq *q, int early_with_k, pend *K)
{
	uint32_t n[3], s[3], n0 = 4 * q->rw;
	rand_shape(g, q->count, n);
	uint64_t ext = rand_strides(g, n, n0, chance(g, 8), s), a;
	int r = rbelow(g, 100);
	int res;
	if (r < 70) {
		/* guard bytes around the rows: a write past a row shows up */
		uint32_t pre = chance(g, 50) ? 4u * rbelow(g, 17) : 0, post = chance(g, 50) ? 4u * rbelow(g, 17) : 0;
		long ri = region_new(g, LOOM_COSIM_OUTPUT, (uint32_t)ext + pre + post, 4);
		if (ri < 0) {
			if (early_with_k && K)
				emit(g, K);
			return -1;
		}
		a = g->p->regions[ri].addr + pre;
		res = 0;
	} else {
		res = pick_dram(g, ext, 100, r >= 85, &a);
		if (res < 0) {
			if (early_with_k && K)
				emit(g, K);
			return -1;
		}
		if (res > 0)
			g->p->regions[res - 1].kind = LOOM_COSIM_OUTPUT;
	}
	loom_insn in = op(LOOM_OP_STORE);
	setf(g, &in, LOOM_F_STORE_SOURCE, q->src);
	setf(g, &in, LOOM_F_STORE_ROW_WORDS, q->rw);
	setf(g, &in, LOOM_F_STORE_DRAM_ADDR, (uint32_t)a);
	setf(g, &in, LOOM_F_STORE_MEM_ADDR, q->mem);
	setf(g, &in, LOOM_F_STORE_STRIDE1, s[0]);
	setf(g, &in, LOOM_F_STORE_STRIDE2, s[1]);
	setf(g, &in, LOOM_F_STORE_STRIDE3, s[2]);
	setf(g, &in, LOOM_F_STORE_N1, n[0]);
	setf(g, &in, LOOM_F_STORE_N2, n[1]);
	setf(g, &in, LOOM_F_STORE_N3, n[2]);
	if (q->src == LOOM_MEM_ACC_REQUANT) {
		setf(g, &in, LOOM_F_STORE_PARAM_ADDR, q->param);
		setf(g, &in, LOOM_F_STORE_ZERO_POINT, (uint8_t)q->zp);
		setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)q->lo);
		setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)q->hi);
	}
	pend p = mkpend(&in, LOOM_COSIM_DATA);
	if (early_with_k && K)
		emit2(g, K, &p);
	else
		emit(g, &p);
	return 0;
}

/* ---- crafted data ---- */

static uint32_t acc_value(gen *g)
{
	static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 0xffffffffu, 1, 0x80000001u, 0x7ffffffeu};
	int r = rbelow(g, 100);
	if (r < 45)
		return r32(g);
	if (r < 80)
		return (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20));
	return edge[rbelow(g, sizeof edge / sizeof edge[0])];
}

static void craft_acc(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	(void)rowidx;
	(void)ctx;
	for (uint32_t k = 0; k < n0; k += 4)
		put32(row + k, acc_value(g));
}

static void craft_params(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	unsigned style = *(unsigned *)ctx; /* 0: sensible scales, 1: wild */
	for (uint32_t k = 0; k < n0; k += 4) {
		uint32_t v;
		int r = rbelow(g, 100);
		if (rowidx == 0) { /* bias */
			static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 0xffffffffu};
			v = r < 45 ? (uint32_t)((int32_t)rbelow(g, 1u << 13) - (1 << 12))
			    : r < 70 ? (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20))
			    : r < 88 ? r32(g) : edge[rbelow(g, 4)];
		} else if (rowidx == 1) { /* multiplier */
			static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 1, 0xffffffffu, 0x40000000u};
			v = r < (style ? 55 : 88) ? 0x40000000u + (r32(g) & 0x3fffffffu)
			    : r < (style ? 75 : 95) ? edge[rbelow(g, 6)]
			    : r < 90 ? (uint32_t)-(int32_t)(0x40000000u + (r32(g) & 0x3fffffffu)) : r32(g);
		} else { /* shift */
			v = style == 0 ? (r < 80 ? rrange(g, 4, 14) : r < 90 ? 0 : 31)
			    : r < 50 ? rbelow(g, 32) : r < 70 ? (rbelow(g, 2) ? 0 : 31) : r32(g);
		}
		put32(row + k, v);
	}
}

/* ACC line of a bias/multiplier/shift triple: a live one or a new LOAD. */
static int get_params(gen *g, uint32_t *line)
{
	for (unsigned i = 0; i < g->nparams && chance(g, 60); i++) {
		ptriple *t = &g->params[(i + rbelow(g, g->nparams)) % g->nparams];
		int live = 1;
		for (uint32_t k = 0; k < 3; k++)
			live &= g->acc[t->line + k].w == (uint32_t)t->insn + 2;
		if (live) {
			*line = t->line;
			return 0;
		}
	}
	xfer x;
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = chance(g, 75) ? g->C : rrange(g, 1, g->C);
	x.mem = line_alloc(g, 1, 3);
	if (chance(g, 60)) {
		x.n[0] = 3;
		x.n[1] = x.n[2] = 1;
	} else {
		x.n[0] = 1;
		x.n[1] = 3;
		x.n[2] = 1;
	}
	unsigned style = chance(g, 70) ? 0 : 1;
	if (load(g, &x, 0, craft_params, &style))
		return -1;
	ptriple t = {x.mem, g->p->ninsns - 1};
	if (g->nparams < 8)
		g->params[g->nparams++] = t;
	else
		g->params[rbelow(g, 8)] = t;
	*line = x.mem;
	return 0;
}

static void rand_requant(gen *g, stq *q)
{
	q->zp = (int8_t)(chance(g, 30) ? 0 : r32(g));
	int r = rbelow(g, 100);
	if (r < 30) {
		q->lo = -128;
		q->hi = 127;
	} else if (r < 50) {
		q->lo = q->zp; /* ReLU */
		q->hi = 127;
	} else if (r < 60) {
		int hi = q->zp + (int)rbelow(g, 60); /* ReLU6-like */
		q->lo = q->zp;
		q->hi = (int8_t)(hi > 127 ? 127 : hi);
	} else {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		q->lo = a < b ? a : b;
		q->hi = a < b ? b : a;
	}
}

/* A store of ACC tile lines [tile, tile+P): raw or requantized. */
static int store_acc(gen *g, uint32_t tile, uint32_t P, int early, pend *K)
{
	stq q;
	memset(&q, 0, sizeof q);
	uint32_t a = 0, n = P;
	if (P > 1 && chance(g, 30)) {
		a = rbelow(g, P);
		n = rrange(g, 1, P - a);
	}
	q.mem = tile + a;
	q.count = n;
	if (chance(g, 40)) {
		q.src = LOOM_MEM_ACC;
		q.rw = rand_rw_acc(g);
	} else {
		q.src = LOOM_MEM_ACC_REQUANT;
		q.rw = chance(g, 60) ? g->C / 4 : rrange(g, 1, g->C / 4);
		if (get_params(g, &q.param)) {
			if (early && K)
				emit(g, K);
			return -1;
		}
		rand_requant(g, &q);
	}
	return store(g, &q, early, K);
}

/* ---- MATMUL geometry ---- */

typedef struct geom {
	uint32_t kw, kh, sw, sh, dw, dh, ncb, ow, oh, inw, inh;
} geom;

/* Kernel, stride, dilation: mostly small, rarely up to the 4-bit maximum. */
static uint32_t pick_k(gen *g)
{
	int r = rbelow(g, 100);
	return r < 45 ? 1 : r < 65 ? 2 : r < 90 ? 3 : r < 98 ? rrange(g, 4, 6) : rrange(g, 7, 15);
}

static uint32_t pick_s(gen *g)
{
	int r = rbelow(g, 100);
	return r < 60 ? 1 : r < 88 ? 2 : r < 97 ? 3 : rrange(g, 4, 15);
}

static uint32_t pick_d(gen *g)
{
	int r = rbelow(g, 100);
	return r < 75 ? 1 : r < 92 ? 2 : r < 97 ? 3 : rrange(g, 4, 15);
}

static void rand_geom(gen *g, geom *m, int gemm, uint64_t max_cycles)
{
	uint32_t R = g->R, C = g->C, fill = R + C + 1, P;
	int mode = rbelow(g, 3);
	P = mode == 0 ? rrange(g, 1, R - 1) : mode == 1 ? rrange(g, fill, fill + 2 * R) : rrange(g, 1, 2 * fill);
	if (gemm) {
		m->kw = m->kh = m->sw = m->sh = m->dw = m->dh = 1;
		m->oh = 1;
		m->ow = P;
	} else {
		m->kw = pick_k(g);
		m->kh = pick_k(g);
		m->sw = pick_s(g);
		m->sh = pick_s(g);
		m->dw = pick_d(g);
		m->dh = pick_d(g);
		m->oh = chance(g, 25) ? 1 : rrange(g, 1, umin(P, 9));
		m->ow = umax(1, P / m->oh);
	}
	m->ncb = chance(g, 50) ? 1 : chance(g, 70) ? 2 : 3;
	/* activation and weight lines stay well inside the scratchpad */
	uint64_t max_lines = umin(g->cfg->sp_lines / 4, 3072);
	for (;;) {
		uint64_t f = (uint64_t)m->ncb * m->kh * m->kw, p = (uint64_t)m->ow * m->oh;
		uint64_t inw = (uint64_t)(m->ow - 1) * m->sw + (uint64_t)(m->kw - 1) * m->dw + 3;
		uint64_t inh = (uint64_t)(m->oh - 1) * m->sh + (uint64_t)(m->kh - 1) * m->dh + 3;
		int lines_ok = m->ncb * inw * inh <= max_lines && f * C <= max_lines;
		if (lines_ok && f * (p > fill ? p : fill) <= max_cycles)
			break;
		if (!lines_ok && (m->sw > 3 || m->sh > 3 || m->dw > 3 || m->dh > 3)) {
			m->sw = umin(m->sw, 3);
			m->sh = umin(m->sh, 3);
			m->dw = umin(m->dw, 2);
			m->dh = umin(m->dh, 2);
		} else if (!lines_ok && m->oh > 1 && m->sh > 1) {
			m->sh = 1;
		} else if (!lines_ok && m->ow > 8 && m->sw > 1) {
			m->sw = 1;
		} else if (m->ncb > 1)
			m->ncb--;
		else if (m->kh > 1)
			m->kh--;
		else if (m->kw > 1)
			m->kw--;
		else if (m->oh > 1)
			m->oh--;
		else if (m->ow > 1)
			m->ow /= 2;
		else
			break;
	}
	m->inw = (m->ow - 1) * m->sw + (m->kw - 1) * m->dw + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
	m->inh = (m->oh - 1) * m->sh + (m->kh - 1) * m->dh + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
}

static loom_insn mk_matmul(gen *g, const geom *m, uint32_t ncb, uint32_t act, uint32_t wgt, uint32_t acc, int accum)
{
	loom_insn in = op(LOOM_OP_MATMUL);
	setf(g, &in, LOOM_F_MATMUL_ACCUMULATE, (uint32_t)accum);
	setf(g, &in, LOOM_F_MATMUL_ACT_ADDR, act);
	setf(g, &in, LOOM_F_MATMUL_WGT_ADDR, wgt);
	setf(g, &in, LOOM_F_MATMUL_ACC_ADDR, acc);
	setf(g, &in, LOOM_F_MATMUL_IN_W, m->inw);
	setf(g, &in, LOOM_F_MATMUL_IN_H, m->inh);
	setf(g, &in, LOOM_F_MATMUL_OUT_W, m->ow);
	setf(g, &in, LOOM_F_MATMUL_OUT_H, m->oh);
	setf(g, &in, LOOM_F_MATMUL_NCB, ncb);
	setf(g, &in, LOOM_F_MATMUL_KW, m->kw);
	setf(g, &in, LOOM_F_MATMUL_KH, m->kh);
	setf(g, &in, LOOM_F_MATMUL_SW, m->sw);
	setf(g, &in, LOOM_F_MATMUL_SH, m->sh);
	setf(g, &in, LOOM_F_MATMUL_DW, m->dw);
	setf(g, &in, LOOM_F_MATMUL_DH, m->dh);
	return in;
}

/* The activation tile [cb][y][x] of m at act: one LOAD or one per plane. */
static int load_act(gen *g, const geom *m, uint32_t act, int reuse_pct)
{
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = rand_rw_sp(g);
	if (m->ncb > 1 && chance(g, 40)) {
		for (uint32_t cb = 0; cb < m->ncb; cb++) {
			plane_xfer(g, &x, m->inw, m->inh, 1, 1);
			x.mem = act + cb * m->inh * m->inw;
			if (load(g, &x, reuse_pct, NULL, NULL))
				return -1;
		}
		return 0;
	}
	plane_xfer(g, &x, m->inw, m->inh, m->ncb, 1);
	x.mem = act;
	return load(g, &x, reuse_pct, NULL, NULL);
}

/* Weights of m at wgt: NCB*KH*KW folds of C lines. */
static int load_wgt(gen *g, const geom *m, uint32_t ncb, uint32_t wgt)
{
	uint32_t C = g->C, folds = ncb * m->kh * m->kw;
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 80) ? g->R / 4 : rand_rw_sp(g);
	x.mem = wgt;
	int r = rbelow(g, 100);
	if (r < 30 && folds <= 12) { /* one LOAD per fold: a burst of loads */
		for (uint32_t f = 0; f < folds; f++) {
			x.n[0] = C;
			x.n[1] = x.n[2] = 1;
			x.mem = wgt + f * C;
			if (load(g, &x, 10, NULL, NULL))
				return -1;
		}
		return 0;
	}
	if (r < 45 && folds <= 255 && C > 1) { /* padded columns */
		x.pad[3] = rrange(g, 1, umin(3, C - 1));
		x.n[0] = C - x.pad[3];
		x.n[1] = 1;
		x.n[2] = folds;
		x.padv = (uint8_t)r32(g);
	} else if (r < 75 && folds * C <= 4095) {
		x.n[0] = folds * C;
		x.n[1] = x.n[2] = 1;
	} else {
		x.n[0] = C;
		x.n[1] = m->kh * m->kw;
		x.n[2] = ncb;
	}
	return load(g, &x, 10, NULL, NULL);
}

/* ---- vector unit (ELTWISE, POOL, DWCONV, LUT) ---- */

/* SP lines [lo, lo+n) an instruction reads: what its destination avoids
 * (docs/ISA.md: written lines may not overlap read lines, except in place). */
typedef struct span {
	uint32_t lo, n;
} span;

static int span_hit(const span *s, unsigned ns, uint32_t lo, uint32_t n)
{
	for (unsigned i = 0; i < ns; i++)
		if (s[i].n && lo < s[i].lo + s[i].n && s[i].lo < lo + n)
			return 1;
	return 0;
}

/* n SP lines overlapping none of s[0..ns). */
static uint32_t alloc_avoid(gen *g, uint32_t n, const span *s, unsigned ns)
{
	for (int k = 0; k < 12; k++) {
		uint32_t a = line_alloc(g, 0, n);
		if (!span_hit(s, ns, a, n))
			return a;
	}
	/* first fit: the bottom or right after one of the spans */
	for (unsigned k = 0; k <= ns; k++) {
		uint32_t a = k == 0 ? g->sp_lo : s[k - 1].lo + s[k - 1].n;
		if (a >= g->sp_lo && a + n <= g->sp_hi && !span_hit(s, ns, a, n))
			return a;
	}
	gfail(g, "generator bug: no room for %u SP lines", n);
	return g->sp_lo;
}

static uint8_t rand_zp(gen *g) { return chance(g, 30) ? 0 : (uint8_t)r32(g); }

/* An int8 clamp range lo <= hi: full, ReLU-like from zp, or random. */
static void rand_clip(gen *g, uint8_t zp, uint32_t *lo, uint32_t *hi)
{
	int r = rbelow(g, 100);
	int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
	if (r < 35) {
		a = -128;
		b = 127;
	} else if (r < 55) {
		a = (int8_t)zp;
		b = 127;
	} else if (r < 62) {
		a = b = (int8_t)r32(g); /* a single value */
	}
	*lo = (uint8_t)(a < b ? a : b);
	*hi = (uint8_t)(a < b ? b : a);
}

/* Output shift: 0 and 31 often, else mostly a range that keeps the result
 * away from the clamps, sometimes anything. */
static uint32_t rand_shift(gen *g, uint32_t lo, uint32_t hi)
{
	int r = rbelow(g, 100);
	return r < 18 ? 0 : r < 30 ? 31 : r < 78 ? rrange(g, lo, hi) : rbelow(g, 32);
}

/* int32 output multiplier: mostly in [2^30, 2^31). */
static uint32_t rand_mult(gen *g)
{
	static const uint32_t edge[] = {0x80000000u, 0x7fffffffu, 0, 1, 0xffffffffu, 0x40000000u, 0xc0000000u};
	int r = rbelow(g, 100);
	if (r < 72)
		return 0x40000000u + (r32(g) & 0x3fffffffu);
	if (r < 84)
		return edge[rbelow(g, sizeof edge / sizeof edge[0])];
	if (r < 92)
		return (uint32_t)-(int32_t)(0x40000000u + (r32(g) & 0x3fffffffu));
	return chance(g, 50) ? rbelow(g, 1u << 16) : r32(g);
}

/* int16 ELTWISE input multiplier. */
static uint32_t rand_m16(gen *g)
{
	static const int16_t edge[] = {0, 1, -1, 32767, -32768, 16384, -16384};
	int r = rbelow(g, 100);
	int16_t v = r < 30 ? edge[rbelow(g, sizeof edge / sizeof edge[0])] : r < 65 ? (int16_t)rbelow(g, 16385)
							      : (int16_t)r32(g);
	return (uint16_t)v;
}

/* Lines [at, at+n) written with random data by one or more LOADs. */
static int load_lines(gen *g, uint32_t at, uint32_t n)
{
	if (n > 1 && chance(g, 12)) {
		uint32_t k = rrange(g, 1, n - 1);
		return load_lines(g, at, k) || load_lines(g, at + k, n - k);
	}
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = rand_rw_sp(g);
	if (n <= 4095 && chance(g, 35)) {
		plane_xfer(g, &x, n, 1, 1, 1);
	} else {
		rand_shape(g, n, x.n);
		x.padv = 0;
	}
	x.mem = at;
	return load(g, &x, 25, NULL, NULL);
}

/* Bias (lines 0..3), multiplier (4..7) and shift bytes (8) of DWCONV
 * parameter blocks, one LOAD row per line. */
static void craft_dwparams(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx)
{
	unsigned style = *(unsigned *)ctx, line = (unsigned)(rowidx % LOOM_DW_PARAM_LINES);
	if (line == 8) {
		for (uint32_t k = 0; k < n0; k++)
			row[k] = style == 0 ? (uint8_t)(rrange(g, 4, 14) | (chance(g, 30) ? 32u * rrange(g, 1, 7) : 0))
					    : (uint8_t)r32(g);
		return;
	}
	for (uint32_t k = 0; k < n0; k += 4) {
		uint32_t v;
		int r = rbelow(g, 100);
		if (line < 4) {
			static const uint32_t edge[] = {0x7fffffffu, 0x80000000u, 0x7ffff000u, 0x80000fffu,
							0x7fff0000u, 0x80010000u, 0, 0xffffffffu};
			v = r < 40 ? (uint32_t)((int32_t)rbelow(g, 1u << 13) - (1 << 12))
			    : r < 60 ? (uint32_t)((int32_t)rbelow(g, 1u << 21) - (1 << 20))
			    : r < (style ? 70 : 85) ? r32(g)
			    : chance(g, 50) ? edge[rbelow(g, 8)]
			    : (chance(g, 50) ? 0x7fffffffu - rbelow(g, 1u << 16) : 0x80000000u + rbelow(g, 1u << 16));
		} else {
			v = rand_mult(g);
		}
		put32(row + k, v);
	}
}

static int vblock_live(const gen *g, const vblock *b)
{
	for (uint32_t k = 0; k < b->n; k++)
		if (g->sp[b->line + k].w != (uint32_t)b->insn + 2)
			return 0;
	return 1;
}

/* A live block of n lines that overlaps none of s, or -1. */
static long vblock_pick(gen *g, const vblock *v, unsigned nv, uint32_t n, const span *s, unsigned ns)
{
	if (!nv)
		return -1;
	unsigned st = rbelow(g, nv);
	for (unsigned i = 0; i < nv; i++) {
		const vblock *b = &v[(st + i) % nv];
		if (b->n == n && vblock_live(g, b) && !span_hit(s, ns, b->line, b->n))
			return (long)b->line;
	}
	return -1;
}

static void vblock_add(gen *g, vblock *v, unsigned *nv, uint32_t line, uint32_t n)
{
	vblock b = {line, n, g->p->ninsns - 1};
	if (*nv < 4)
		v[(*nv)++] = b;
	else
		v[rbelow(g, 4)] = b;
}

/* A LUT table (random bytes) avoiding s: a live one or a new LOAD. */
static int get_table(gen *g, const span *s, unsigned ns, uint32_t *line)
{
	uint32_t T = lut_lines(g->cfg);
	long l = chance(g, 45) ? vblock_pick(g, g->tables, g->ntables, T, s, ns) : -1;
	if (l >= 0) {
		*line = (uint32_t)l;
		return 0;
	}
	*line = alloc_avoid(g, T, s, ns);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 85) ? g->R / 4 : rand_rw_sp(g);
	x.mem = *line;
	if (chance(g, 70)) {
		x.n[0] = T;
		x.n[1] = x.n[2] = 1;
	} else {
		rand_shape(g, T, x.n);
	}
	if (load(g, &x, 20, NULL, NULL))
		return -1;
	vblock_add(g, g->tables, &g->ntables, *line, T);
	return 0;
}

/* DWCONV parameters of ncb channel blocks avoiding s: live or a new LOAD. */
static int get_dwparams(gen *g, uint32_t ncb, const span *s, unsigned ns, uint32_t *line)
{
	uint32_t n = ncb * LOOM_DW_PARAM_LINES;
	long l = chance(g, 35) ? vblock_pick(g, g->dwparams, g->ndwparams, n, s, ns) : -1;
	if (l >= 0) {
		*line = (uint32_t)l;
		return 0;
	}
	*line = alloc_avoid(g, n, s, ns);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = chance(g, 85) ? g->R / 4 : rand_rw_sp(g);
	x.mem = *line;
	int r = rbelow(g, 3);
	x.n[0] = r == 0 ? n : LOOM_DW_PARAM_LINES;
	x.n[1] = r == 1 ? ncb : 1;
	x.n[2] = r == 2 ? ncb : 1;
	unsigned style = chance(g, 70) ? 0 : 1;
	if (load(g, &x, 0, craft_dwparams, &style))
		return -1;
	vblock_add(g, g->dwparams, &g->ndwparams, *line, n);
	return 0;
}

/* An ELTWISE or LUT of zero lines with otherwise random, legal fields:
 * range checks do not apply, the others do; it only moves tokens. */
static loom_insn token_vec(gen *g)
{
	loom_insn in;
	uint32_t lo, hi;
#define ADDR() (chance(g, 50) ? rbelow(g, g->cfg->sp_lines) : r32(g) & 0xffffffu)
	if (chance(g, 40)) {
		in = op(LOOM_OP_LUT);
		setf(g, &in, LOOM_F_LUT_SRC, ADDR());
		setf(g, &in, LOOM_F_LUT_DST, ADDR());
		setf(g, &in, LOOM_F_LUT_TABLE, ADDR());
		return in;
	}
	in = op(LOOM_OP_ELTWISE);
	unsigned fn = rbelow(g, 2);
	setf(g, &in, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &in, LOOM_F_ELTWISE_B_MODE, rbelow(g, 3));
	setf(g, &in, LOOM_F_ELTWISE_SHIFT, rbelow(g, 32));
	setf(g, &in, LOOM_F_ELTWISE_ZP_OUT, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_A, ADDR());
	setf(g, &in, LOOM_F_ELTWISE_ZP_A, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_B, ADDR());
	setf(g, &in, LOOM_F_ELTWISE_ZP_B, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_DST, ADDR());
	rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
	int z = rbelow(g, 3); /* which of PLANES, PLANE_LINES is 0 (2: both) */
	setf(g, &in, LOOM_F_ELTWISE_PLANES, z == 1 ? (chance(g, 50) ? rrange(g, 1, 8) : r32(g) & 0xffff) : 0);
	setf(g, &in, LOOM_F_ELTWISE_PLANE_LINES, z == 0 ? (chance(g, 50) ? rrange(g, 1, 64) : r32(g) & 0xffffff) : 0);
	if (fn == LOOM_ELT_ADD) {
		setf(g, &in, LOOM_F_ELTWISE_MULT_A, rand_m16(g));
		setf(g, &in, LOOM_F_ELTWISE_MULT_B, rand_m16(g));
	}
	setf(g, &in, LOOM_F_ELTWISE_MULT, r32(g));
#undef ADDR
	return in;
}

/* Window sizes: POOL mostly 1..5, rarely up to 20; DWCONV 1..7, rarely 15. */
static uint32_t pick_vk(gen *g, int dw)
{
	int r = rbelow(g, 100);
	if (dw)
		return r < 88 ? rrange(g, 1, 7) : rrange(g, 8, 15);
	return r < 85 ? rrange(g, 1, 5) : rrange(g, 6, 20);
}

static uint32_t pick_vs(gen *g, int dw)
{
	int r = rbelow(g, 100);
	if (dw)
		return r < 95 ? rrange(g, 1, 3) : rrange(g, 4, 15);
	return r < 90 ? rrange(g, 1, 4) : rrange(g, 5, 16);
}

static uint32_t pick_vd(gen *g)
{
	int r = rbelow(g, 100);
	return r < 65 ? 1 : r < 85 ? 2 : r < 98 ? 3 : rrange(g, 4, 6);
}

/* Bounds of one POOL/DWCONV: input lines, vector taps*positions. */
static uint64_t vec_max_lines(const gen *g) { return umin(g->cfg->sp_lines / 4, 2048); }

/* POOL (dw = 0) or DWCONV (dw = 1) geometry from scratch. */
static void vec_geom(gen *g, geom *m, int dw)
{
	m->kw = pick_vk(g, dw);
	m->kh = pick_vk(g, dw);
	m->sw = pick_vs(g, dw);
	m->sh = pick_vs(g, dw);
	m->dw = pick_vd(g);
	m->dh = pick_vd(g);
	m->ncb = chance(g, 50) ? 1 : chance(g, 60) ? 2 : 3;
	m->ow = chance(g, 15) ? 1 : rrange(g, 1, chance(g, 70) ? 8 : 24);
	m->oh = chance(g, 25) ? 1 : rrange(g, 1, 8);
	int r = rbelow(g, 100);
	uint64_t max_lines = vec_max_lines(g), max_work = r < 70 ? 1500 : r < 95 ? 4000 : 10000;
	for (;;) {
		uint64_t inw = (uint64_t)(m->ow - 1) * m->sw + (uint64_t)(m->kw - 1) * m->dw + 3;
		uint64_t inh = (uint64_t)(m->oh - 1) * m->sh + (uint64_t)(m->kh - 1) * m->dh + 3;
		uint64_t work = (uint64_t)m->ncb * m->ow * m->oh * m->kw * m->kh;
		int lines_ok = m->ncb * inw * inh <= max_lines && (uint64_t)m->ncb * m->kw * m->kh <= max_lines;
		if (lines_ok && work <= max_work)
			break;
		if (!lines_ok && (m->sw > 4 || m->sh > 4)) {
			m->sw = umin(m->sw, 4);
			m->sh = umin(m->sh, 4);
		} else if (!lines_ok && (m->dw > 1 || m->dh > 1)) {
			m->dw = m->dh = 1;
		} else if (m->ncb > 1) {
			m->ncb--;
		} else if (m->ow > 1 && m->ow >= m->oh) {
			m->ow = (m->ow + 1) / 2;
		} else if (m->oh > 1) {
			m->oh--;
		} else if (!lines_ok && (m->sw > 1 || m->sh > 1)) {
			m->sw = m->sh = 1;
		} else if (m->kw > 1 && m->kw >= m->kh) {
			m->kw--;
		} else if (m->kh > 1) {
			m->kh--;
		} else {
			break;
		}
	}
	m->inw = (m->ow - 1) * m->sw + (m->kw - 1) * m->dw + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
	m->inh = (m->oh - 1) * m->sh + (m->kh - 1) * m->dh + 1 + (chance(g, 25) ? rbelow(g, 3) : 0);
}

/* One dimension of a window that fits an input of `in` lines. */
static void fit_dim(gen *g, int dw, uint32_t in, uint32_t *k, uint32_t *s, uint32_t *d, uint32_t *o)
{
	*k = umin(pick_vk(g, dw), in);
	*d = pick_vd(g);
	if (*k > 1 && (*k - 1) * *d + 1 > in)
		*d = umax(1, (in - 1) / (*k - 1));
	*s = pick_vs(g, dw);
	uint32_t max = (in - 1 - (*k - 1) * *d) / *s + 1;
	*o = chance(g, 65) ? max : rrange(g, 1, max);
}

/* POOL/DWCONV window and output for the given input tile (inw, inh, ncb). */
static void fit_window(gen *g, geom *m, int dw)
{
	fit_dim(g, dw, m->inw, &m->kw, &m->sw, &m->dw, &m->ow);
	fit_dim(g, dw, m->inh, &m->kh, &m->sh, &m->dh, &m->oh);
	while ((uint64_t)m->ncb * m->ow * m->oh * m->kw * m->kh > 3000) {
		if (m->ow > 1 && m->ow >= m->oh)
			m->ow = (m->ow + 1) / 2;
		else if (m->oh > 1)
			m->oh = (m->oh + 1) / 2;
		else if (m->kw > 1)
			m->kw--;
		else
			m->kh--;
	}
}

/* What a vector instruction wrote: lines [at, at+n) = tile [ncb][h][w]. */
typedef struct vout {
	uint32_t at, n, w, h, ncb;
} vout;

enum { VF_INPLACE = 1, VF_NOSTORE = 2, VF_STORE = 4 };

/* Emit the vector instruction K writing *o; store o to DRAM (SP bytes)
 * always (VF_STORE), never (VF_NOSTORE) or sometimes, maybe with the store
 * waiting for K through an early pop. */
static int vec_emit(gen *g, pend *K, const vout *o, unsigned flags)
{
	if (flags & VF_NOSTORE || (!(flags & VF_STORE) && chance(g, 45))) {
		emit(g, K);
		return g->failed ? -1 : 0;
	}
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_SP;
	q.rw = rand_rw_sp(g);
	q.count = o->n > 1 && chance(g, 25) ? rrange(g, 1, o->n) : o->n;
	q.mem = o->at + rbelow(g, o->n - q.count + 1);
	int early = chance(g, 40), rc;
	if (!early)
		emit(g, K);
	rc = store(g, &q, early, early ? K : NULL);
	if (!rc && chance(g, 10)) { /* twice: two readers */
		q.rw = rand_rw_sp(g);
		rc = store(g, &q, 0, NULL);
	}
	return rc;
}

static int vec_eltwise(gen *g, const vout *in, vout *out, unsigned flags)
{
	uint32_t planes, pl, w, h;
	if (in && (flags & VF_INPLACE || chance(g, 60))) {
		planes = in->ncb;
		w = in->w;
		h = in->h;
		pl = w * h;
	} else if (in) {
		planes = rrange(g, 1, umin(4, in->n));
		pl = rrange(g, 1, in->n / planes);
		w = pl;
		h = 1;
	} else {
		planes = chance(g, 40) ? 1 : chance(g, 85) ? rrange(g, 2, 4) : rrange(g, 5, 24);
		int r = rbelow(g, 100);
		pl = r < 25 ? rrange(g, 1, 15) : r < 40 ? 16u * rrange(g, 1, 4) : r < 85 ? rrange(g, 17, 80)
									      : rrange(g, 81, 400);
		while (planes * pl > 1024)
			pl = (pl + 1) / 2;
		w = pl;
		h = 1;
	}
	uint32_t n = planes * pl;
	unsigned fn = chance(g, 55) ? LOOM_ELT_ADD : LOOM_ELT_MUL, bm = rbelow(g, 3);
	uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
	int inplace = flags & VF_INPLACE || chance(g, 25);
	uint32_t a = in ? in->at + rbelow(g, in->n - n + 1) : line_alloc(g, 0, n), b;
	span sp[2] = {{a, n}, {0, 0}};
	int r = rbelow(g, 100), fresh_b = 0;
	if (!inplace && bm == LOOM_BMODE_LINE && r < 12) {
		b = a; /* A op A */
	} else if (!inplace && bm != LOOM_BMODE_LINE && r < 20) {
		b = a + rbelow(g, n - nb + 1); /* B lines inside A */
	} else {
		b = inplace ? alloc_avoid(g, nb, sp, 1) : line_alloc(g, 0, nb);
		fresh_b = 1;
	}
	int bfirst = chance(g, 40);
	if (fresh_b && bfirst && load_lines(g, b, nb))
		return -1;
	if (!in && load_lines(g, a, n))
		return -1;
	if (fresh_b && !bfirst && load_lines(g, b, nb))
		return -1;
	sp[1] = (span){b, nb};
	uint32_t dst = inplace ? a : alloc_avoid(g, n, sp, 2);
	loom_insn e = op(LOOM_OP_ELTWISE);
	uint32_t lo, hi, zp = rand_zp(g);
	setf(g, &e, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &e, LOOM_F_ELTWISE_B_MODE, bm);
	setf(g, &e, LOOM_F_ELTWISE_SHIFT, fn == LOOM_ELT_ADD ? rand_shift(g, 10, 20) : rand_shift(g, 3, 12));
	setf(g, &e, LOOM_F_ELTWISE_ZP_OUT, zp);
	setf(g, &e, LOOM_F_ELTWISE_SRC_A, a);
	setf(g, &e, LOOM_F_ELTWISE_ZP_A, rand_zp(g));
	setf(g, &e, LOOM_F_ELTWISE_SRC_B, b);
	setf(g, &e, LOOM_F_ELTWISE_ZP_B, rand_zp(g));
	setf(g, &e, LOOM_F_ELTWISE_DST, dst);
	rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &e, LOOM_F_ELTWISE_CLIP_HI, hi);
	setf(g, &e, LOOM_F_ELTWISE_PLANE_LINES, pl);
	setf(g, &e, LOOM_F_ELTWISE_PLANES, planes);
	if (fn == LOOM_ELT_ADD) {
		uint32_t ma, mb;
		if (chance(g, 40)) { /* the compiler's form: the larger scale is 2^14 */
			ma = 16384;
			mb = rbelow(g, 16385);
			if (chance(g, 50)) {
				uint32_t t = ma;
				ma = mb;
				mb = t;
			}
		} else {
			ma = rand_m16(g);
			mb = rand_m16(g);
		}
		setf(g, &e, LOOM_F_ELTWISE_MULT_A, ma);
		setf(g, &e, LOOM_F_ELTWISE_MULT_B, mb);
	}
	setf(g, &e, LOOM_F_ELTWISE_MULT, chance(g, 4) ? 0x80000000u : rand_mult(g));
	*out = (vout){dst, n, w, h, planes};
	pend K = mkpend(&e, LOOM_COSIM_DATA);
	return vec_emit(g, &K, out, flags);
}

/* The input tile of a POOL/DWCONV: the previous output (as it is, or
 * reshaped as one channel block) with a window that fits, or a new tile. */
static int vec_tile(gen *g, const vout *in, geom *m, int dw, uint32_t *src)
{
	if (in) {
		if (chance(g, 55)) {
			m->inw = in->w;
			m->inh = in->h;
			m->ncb = in->ncb;
		} else {
			m->ncb = 1;
			m->inw = rrange(g, 1, umin(in->n, 24));
			m->inh = umin(in->n / m->inw, 4095);
		}
		fit_window(g, m, dw);
		*src = in->at + rbelow(g, in->n - m->ncb * m->inw * m->inh + 1);
		return 0;
	}
	vec_geom(g, m, dw);
	*src = line_alloc(g, 0, m->ncb * m->inw * m->inh);
	return load_act(g, m, *src, 15);
}

static int vec_pool(gen *g, const vout *in, vout *out, unsigned flags)
{
	geom m;
	uint32_t src;
	if (vec_tile(g, in, &m, 0, &src))
		return -1;
	uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
	span sp = {src, nin};
	uint32_t dst = alloc_avoid(g, nout, &sp, 1);
	unsigned avg = chance(g, 50);
	loom_insn e = op(LOOM_OP_POOL);
	uint32_t lo, hi, zp = avg ? rand_zp(g) : 0;
	setf(g, &e, LOOM_F_POOL_FUNC, avg ? LOOM_POOL_AVG : LOOM_POOL_MAX);
	if (avg) {
		uint32_t taps = m.kw * m.kh, lg = 0;
		while ((1u << lg) < taps)
			lg++;
		if (chance(g, 50)) { /* an average: mult/2^31 * 2^-shift ~ 1/taps */
			setf(g, &e, LOOM_F_POOL_MULT, 0x40000000u + (r32(g) & 0x3fffffffu));
			setf(g, &e, LOOM_F_POOL_SHIFT, umin(31, lg + rbelow(g, 2)));
		} else {
			setf(g, &e, LOOM_F_POOL_MULT, rand_mult(g));
			setf(g, &e, LOOM_F_POOL_SHIFT, rand_shift(g, lg, lg + 4));
		}
		setf(g, &e, LOOM_F_POOL_ZP_OUT, zp);
		setf(g, &e, LOOM_F_POOL_ZP_IN, rand_zp(g));
	}
	rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_POOL_CLIP_LO, lo);
	setf(g, &e, LOOM_F_POOL_CLIP_HI, hi);
	setf(g, &e, LOOM_F_POOL_SRC, src);
	setf(g, &e, LOOM_F_POOL_DST, dst);
	setf(g, &e, LOOM_F_POOL_IN_W, m.inw);
	setf(g, &e, LOOM_F_POOL_IN_H, m.inh);
	setf(g, &e, LOOM_F_POOL_OUT_W, m.ow);
	setf(g, &e, LOOM_F_POOL_OUT_H, m.oh);
	setf(g, &e, LOOM_F_POOL_NCB, m.ncb);
	setf(g, &e, LOOM_F_POOL_KW, m.kw);
	setf(g, &e, LOOM_F_POOL_KH, m.kh);
	setf(g, &e, LOOM_F_POOL_SW, m.sw);
	setf(g, &e, LOOM_F_POOL_SH, m.sh);
	setf(g, &e, LOOM_F_POOL_DW, m.dw);
	setf(g, &e, LOOM_F_POOL_DH, m.dh);
	*out = (vout){dst, nout, m.ow, m.oh, m.ncb};
	pend K = mkpend(&e, LOOM_COSIM_DATA);
	return vec_emit(g, &K, out, flags);
}

static int vec_dwconv(gen *g, const vout *in, vout *out, unsigned flags)
{
	geom m;
	uint32_t src, wgt, par;
	if (vec_tile(g, in, &m, 1, &src))
		return -1;
	uint32_t nin = m.ncb * m.inw * m.inh, nw = m.ncb * m.kw * m.kh, nout = m.ncb * m.ow * m.oh;
	span sp[3] = {{src, nin}, {0, 0}, {0, 0}};
	int wfirst = chance(g, 50), wsrc = nin >= nw && chance(g, 8);
	if (wsrc) { /* the weights are lines of the input tile */
		wgt = src + rbelow(g, nin - nw + 1);
	} else {
		wgt = line_alloc(g, 0, nw);
		if (wfirst && load_lines(g, wgt, nw))
			return -1;
	}
	sp[1] = (span){wgt, nw};
	/* parameters loaded after the weights must not overwrite them */
	if (get_dwparams(g, m.ncb, sp, 2, &par))
		return -1;
	if (!wfirst && !wsrc && load_lines(g, wgt, nw))
		return -1;
	sp[2] = (span){par, m.ncb * LOOM_DW_PARAM_LINES};
	/* loading the weights after the parameters could clobber these: only
	 * the destination has to avoid every input */
	uint32_t dst = alloc_avoid(g, nout, sp, 3);
	loom_insn e = op(LOOM_OP_DWCONV);
	uint32_t lo, hi, zp = rand_zp(g);
	setf(g, &e, LOOM_F_DWCONV_ZP_IN, rand_zp(g));
	setf(g, &e, LOOM_F_DWCONV_ZP_OUT, zp);
	rand_clip(g, (uint8_t)zp, &lo, &hi);
	setf(g, &e, LOOM_F_DWCONV_CLIP_LO, lo);
	setf(g, &e, LOOM_F_DWCONV_CLIP_HI, hi);
	setf(g, &e, LOOM_F_DWCONV_SRC, src);
	setf(g, &e, LOOM_F_DWCONV_WGT, wgt);
	setf(g, &e, LOOM_F_DWCONV_PARAM, par);
	setf(g, &e, LOOM_F_DWCONV_DST, dst);
	setf(g, &e, LOOM_F_DWCONV_NCB, m.ncb);
	setf(g, &e, LOOM_F_DWCONV_IN_W, m.inw);
	setf(g, &e, LOOM_F_DWCONV_IN_H, m.inh);
	setf(g, &e, LOOM_F_DWCONV_KW, m.kw);
	setf(g, &e, LOOM_F_DWCONV_KH, m.kh);
	setf(g, &e, LOOM_F_DWCONV_OUT_W, m.ow);
	setf(g, &e, LOOM_F_DWCONV_OUT_H, m.oh);
	setf(g, &e, LOOM_F_DWCONV_SW, m.sw);
	setf(g, &e, LOOM_F_DWCONV_SH, m.sh);
	setf(g, &e, LOOM_F_DWCONV_DW, m.dw);
	setf(g, &e, LOOM_F_DWCONV_DH, m.dh);
	*out = (vout){dst, nout, m.ow, m.oh, m.ncb};
	pend K = mkpend(&e, LOOM_COSIM_DATA);
	return vec_emit(g, &K, out, flags);
}

static int vec_lut(gen *g, const vout *in, vout *out, unsigned flags)
{
	uint32_t T = lut_lines(g->cfg), n, src, tab, w, h, ncb;
	int inplace = flags & VF_INPLACE || chance(g, 30), self = 0;
	if (in) {
		int whole = flags & VF_INPLACE || chance(g, 60);
		n = whole ? in->n : rrange(g, 1, in->n);
		src = in->at + rbelow(g, in->n - n + 1);
		w = whole ? in->w : n;
		h = whole ? in->h : 1;
		ncb = whole ? in->ncb : 1;
	} else {
		int r = rbelow(g, 100);
		n = r < 30 ? rrange(g, 1, 16) : r < 45 ? 16u * rrange(g, 1, 4) : r < 85 ? rrange(g, 17, 100)
										     : rrange(g, 101, 400);
		src = line_alloc(g, 0, n);
		w = n;
		h = ncb = 1;
		self = !inplace && chance(g, 6); /* the table translates itself */
	}
	span sp[2] = {{src, n}, {0, 0}};
	if (self) {
		n = rrange(g, 1, T);
		if (get_table(g, NULL, 0, &tab))
			return -1;
		src = tab + rbelow(g, T - n + 1);
		sp[0] = (span){src, n};
		w = n;
	} else {
		int tfirst = chance(g, 50);
		/* in place, the table may not overlap the lines written */
		if (tfirst && get_table(g, sp, inplace, &tab))
			return -1;
		if (!in && load_lines(g, src, n))
			return -1;
		if (!tfirst && get_table(g, sp, inplace, &tab))
			return -1;
	}
	sp[1] = (span){tab, T};
	uint32_t dst = inplace ? src : alloc_avoid(g, n, sp, 2);
	loom_insn e = op(LOOM_OP_LUT);
	setf(g, &e, LOOM_F_LUT_SRC, src);
	setf(g, &e, LOOM_F_LUT_DST, dst);
	setf(g, &e, LOOM_F_LUT_TABLE, tab);
	setf(g, &e, LOOM_F_LUT_LINES, n);
	*out = (vout){dst, n, w, h, ncb};
	pend K = mkpend(&e, LOOM_COSIM_DATA);
	return vec_emit(g, &K, out, flags);
}

/* In place over an existing tile (ELTWISE or LUT). */
static int vec_inplace(gen *g, uint32_t at, uint32_t w, uint32_t h, uint32_t ncb, unsigned flags)
{
	vout in = {at, w * h * ncb, w, h, ncb}, out;
	return chance(g, 50) ? vec_eltwise(g, &in, &out, VF_INPLACE | flags) : vec_lut(g, &in, &out, VF_INPLACE | flags);
}

/* One to three vector instructions, often each on the previous one's
 * output; the last one's output is stored, the others' sometimes. */
static void blk_vec(gen *g)
{
	unsigned k = chance(g, 50) ? 1 : chance(g, 60) ? 2 : 3;
	vout prev, out;
	int have = 0;
	for (unsigned i = 0; i < k && !g->failed && !g->full; i++) {
		const vout *in = have && chance(g, 60) ? &prev : NULL;
		unsigned flags = i + 1 == k ? VF_STORE : 0;
		int r = rbelow(g, 100), rc;
		if (r < 4) {
			loom_insn t = token_vec(g);
			emit_insn(g, &t, LOOM_COSIM_TOKEN);
			continue;
		}
		if (r < 34)
			rc = vec_eltwise(g, in, &out, flags);
		else if (r < 56)
			rc = vec_pool(g, in, &out, flags);
		else if (r < 78)
			rc = vec_dwconv(g, in, &out, flags);
		else
			rc = vec_lut(g, in, &out, flags);
		if (rc)
			return;
		prev = out;
		have = 1;
	}
}

/* ---- blocks ---- */

static void blk_conv(gen *g)
{
	geom m;
	rand_geom(g, &m, chance(g, 35), 6000);
	uint32_t C = g->C, P = m.ow * m.oh, plane = m.inh * m.inw;
	uint32_t act = line_alloc(g, 0, m.ncb * plane), wl = m.ncb * m.kh * m.kw * C;
	/* rarely the weights are lines of the activation tile itself */
	int alias = m.ncb * plane >= wl && chance(g, 6);
	uint32_t wgt = alias ? act + rbelow(g, m.ncb * plane - wl + 1) : line_alloc(g, 0, wl);
	int twice = chance(g, 12);
	uint32_t wgt2 = twice ? line_alloc(g, 0, wl) : 0;
	if (alias) {
		if (load_act(g, &m, act, 15))
			return;
	} else if (chance(g, 50)) {
		if (load_wgt(g, &m, m.ncb, wgt) || load_act(g, &m, act, 15))
			return;
	} else if (load_act(g, &m, act, 15) || load_wgt(g, &m, m.ncb, wgt)) {
		return;
	}
	if (twice && load_wgt(g, &m, m.ncb, wgt2))
		return;
	/* sometimes the vector unit rewrites the activations in place first */
	if (!alias && chance(g, 10) && vec_inplace(g, act, m.inw, m.inh, m.ncb, VF_NOSTORE))
		return;
	uint32_t tile = line_alloc(g, 1, P);
	int mode = rbelow(g, 100), accum = 0;
	if (mode < 25) { /* a bias tile, then accumulate */
		xfer x;
		memset(&x, 0, sizeof x);
		x.acc = 1;
		x.rw = rand_rw_acc(g);
		plane_xfer(g, &x, m.ow, m.oh, 1, chance(g, 30));
		x.padv = 0;
		x.mem = tile;
		if (load(g, &x, 0, craft_acc, NULL))
			return;
		accum = 1;
	}
	loom_insn mm;
	if (mode >= 25 && mode < 45 && m.ncb > 1) { /* one MATMUL per channel block */
		for (uint32_t cb = 0; cb < m.ncb; cb++) {
			mm = mk_matmul(g, &m, 1, act + cb * plane, wgt + cb * m.kh * m.kw * C, tile, cb > 0 || accum);
			emit_insn(g, &mm, LOOM_COSIM_DATA);
		}
	} else {
		mm = mk_matmul(g, &m, m.ncb, act, wgt, tile, accum);
		if (mode >= 45 && mode < 60) { /* again, accumulating */
			emit_insn(g, &mm, LOOM_COSIM_DATA);
			setf(g, &mm, LOOM_F_MATMUL_ACCUMULATE, 1);
		}
		pend K = mkpend(&mm, LOOM_COSIM_DATA);
		if (store_acc(g, tile, P, 1, &K))
			return;
	}
	if (chance(g, 35) && store_acc(g, tile, P, 0, NULL))
		return;
	if (twice) {
		uint32_t tile2 = line_alloc(g, 1, P);
		mm = mk_matmul(g, &m, m.ncb, act, wgt2, tile2, 0);
		emit_insn(g, &mm, LOOM_COSIM_DATA);
		if (store_acc(g, tile2, P, 0, NULL))
			return;
	}
	/* sometimes the vector unit rewrites the tile the array has read */
	if (chance(g, 8) && vec_inplace(g, act, m.inw, m.inh, m.ncb, 0))
		return;
	if (chance(g, 15)) { /* the activation tile back out */
		stq q;
		memset(&q, 0, sizeof q);
		q.src = LOOM_MEM_SP;
		q.rw = rand_rw_sp(g);
		q.count = rrange(g, 1, umin(64, m.ncb * plane));
		q.mem = act + rbelow(g, m.ncb * plane - q.count + 1);
		store(g, &q, 0, NULL);
	}
}

/* Double/triple-buffered tiles: LOAD(t+nb) reuses the buffer of MATMUL(t),
 * STORE(t) reads the ACC tile MATMUL(t+no) overwrites. */
static void blk_pipeline(gen *g)
{
	geom m;
	rand_geom(g, &m, chance(g, 60), 2500);
	uint32_t C = g->C, P = m.ow * m.oh, A = m.ncb * m.inh * m.inw;
	uint32_t T = rrange(g, 2, 6), nb = rrange(g, 1, 3), no = rrange(g, 1, 2);
	uint32_t abuf[3], obuf[2];
	for (uint32_t i = 0; i < nb; i++)
		abuf[i] = line_alloc(g, 0, A);
	for (uint32_t i = 0; i < no; i++)
		obuf[i] = line_alloc(g, 1, P);
	uint32_t wgt = line_alloc(g, 0, m.ncb * m.kh * m.kw * C);
	if (load_wgt(g, &m, m.ncb, wgt))
		return;
	uint32_t param = 0;
	int requant = chance(g, 50);
	if (requant && get_params(g, &param))
		return;
	stq sq;
	memset(&sq, 0, sizeof sq);
	sq.src = requant ? LOOM_MEM_ACC_REQUANT : LOOM_MEM_ACC;
	sq.rw = requant ? (chance(g, 60) ? C / 4 : rrange(g, 1, C / 4)) : rand_rw_acc(g);
	sq.param = param;
	rand_requant(g, &sq);
	if (!requant)
		sq.zp = sq.lo = sq.hi = 0;
	sq.count = P;
	for (uint32_t t = 0; t < umin(nb, T); t++)
		if (load_act(g, &m, abuf[t % nb], 10))
			return;
	for (uint32_t t = 0; t < T && !g->failed && !g->full; t++) {
		loom_insn mm = mk_matmul(g, &m, m.ncb, abuf[t % nb], wgt, obuf[t % no], 0);
		pend K = mkpend(&mm, LOOM_COSIM_DATA);
		sq.mem = obuf[t % no];
		int nextload = t + nb < T;
		int r = rbelow(g, 3);
		if (r == 0 && nextload) {
			/* LOAD(t+nb) may go before MATMUL(t), waiting for it */
			xfer x;
			memset(&x, 0, sizeof x);
			x.rw = rand_rw_sp(g);
			plane_xfer(g, &x, m.inw, m.inh, m.ncb, 1);
			x.mem = abuf[t % nb];
			loom_insn li;
			if (build_load(g, &x, 10, NULL, NULL, &li)) {
				emit(g, &K);
				return;
			}
			pend I = mkpend(&li, LOOM_COSIM_DATA);
			emit2(g, &K, &I);
			if (store(g, &sq, 0, NULL))
				return;
		} else if (r == 1) {
			if (store(g, &sq, 1, &K))
				return;
			if (nextload && load_act(g, &m, abuf[t % nb], 10))
				return;
		} else {
			int loadfirst = chance(g, 50);
			emit(g, &K);
			if (loadfirst && nextload && load_act(g, &m, abuf[t % nb], 10))
				return;
			if (store(g, &sq, 0, NULL))
				return;
			if (!loadfirst && nextload && load_act(g, &m, abuf[t % nb], 10))
				return;
		}
	}
}

/* SP lines in, SP bytes out: the load -> store ordering goes through the
 * compute queue (sync MATMULs). */
static void blk_copy(gen *g, int readback)
{
	uint32_t w = rrange(g, 1, 12), h = rrange(g, 1, 6), planes = rrange(g, 1, 3);
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = rand_rw_sp(g);
	plane_xfer(g, &x, w, h, planes, chance(g, 50));
	uint32_t lines = xfer_lines(&x);
	x.mem = line_alloc(g, 0, lines);
	if (load(g, &x, readback ? 100 : 20, NULL, NULL))
		return;
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_SP;
	q.rw = rand_rw_sp(g);
	q.count = chance(g, 60) ? lines : rrange(g, 1, lines);
	q.mem = x.mem + rbelow(g, lines - q.count + 1);
	store(g, &q, 0, NULL);
}

static void blk_acc(gen *g)
{
	uint32_t w = rrange(g, 1, 10), h = rrange(g, 1, 5);
	xfer x;
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = rand_rw_acc(g);
	plane_xfer(g, &x, w, h, 1, chance(g, 30));
	x.padv = 0;
	uint32_t lines = xfer_lines(&x);
	x.mem = line_alloc(g, 1, lines);
	if (load(g, &x, 0, chance(g, 70) ? craft_acc : NULL, NULL))
		return;
	if (store_acc(g, x.mem, lines, 0, NULL))
		return;
	if (chance(g, 30))
		store_acc(g, x.mem, lines, 0, NULL);
}

/* Loads nothing reads: they run alongside whatever else is in flight. */
static void blk_indep(gen *g)
{
	/* sometimes a burst longer than the load queue */
	unsigned n = chance(g, 25) ? rrange(g, LOOM_QUEUE_DEPTH + 1, LOOM_QUEUE_DEPTH + 6) : rrange(g, 1, 3);
	for (unsigned i = 0; i < n; i++) {
		xfer x;
		memset(&x, 0, sizeof x);
		x.acc = chance(g, 30);
		x.rw = x.acc ? rand_rw_acc(g) : rand_rw_sp(g);
		plane_xfer(g, &x, rrange(g, 1, 16), rrange(g, 1, 4), 1, !x.acc);
		if (x.acc)
			x.padv = 0;
		x.mem = line_alloc(g, x.acc, xfer_lines(&x));
		if (load(g, &x, 30, NULL, NULL))
			return;
	}
}

/* More than 255 tokens outstanding on one counter, then used up: token
 * counters must be 16 bits wide. */
static void blk_flood(gen *g)
{
	int t = (int)rbelow(g, T_N), q = tok_src[t];
	unsigned n = rrange(g, 256, 300);
	for (unsigned i = 0; i < n && !g->failed; i++) {
		pend p = relay_insn(g, q);
		p.push[t] = 1;
		emit(g, &p);
	}
	while (!g->failed && tok_pending(g, t))
		emit_drain(g, tok_dst[t], t);
}

static void blk_tokens(gen *g)
{
	unsigned n = rrange(g, 1, 4);
	for (unsigned i = 0; i < n && !g->failed; i++) {
		int q = rbelow(g, 3);
		pend p = relay_insn(g, q);
		p.novol = 0;
		emit(g, &p);
	}
}

/* ---- program assembly ---- */

/* The DRAM window: low and growing up, or ending at the end of DRAM and
 * growing down. */
static void arena_place(gen *g, int down)
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

static void gen_init(gen *g, const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen)
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
		gfail(g, "out of memory");
		return;
	}
	if (cfg->dram_bytes < 4ull * ARENA_BYTES || cfg->acc_lines < 64 || cfg->sp_lines < 1024) {
		gfail(g, "configuration %s is too small for the co-simulation generator", cfg->name);
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
	arena_place(g, chance(g, 25));
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

static void prologue(gen *g)
{
	if (chance(g, 10))
		emit_mark(g); /* counters at their start values */
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = rand_rw_sp(g);
	x.n[0] = g->C;
	x.n[1] = x.n[2] = 1;
	x.mem = g->sync_sp;
	if (load(g, &x, 0, NULL, NULL))
		return;
	pend s = sync_insn(g);
	emit(g, &s);
}

static void body(gen *g, uint64_t budget)
{
	while (!g->failed && !g->full && g->p->est_cycles < budget && g->p->ninsns < SOFT_INSNS) {
		int r = rbelow(g, 100);
		if (chance(g, VEC_PCT))
			blk_vec(g);
		else if (r < 30)
			blk_conv(g);
		else if (r < 52)
			blk_pipeline(g);
		else if (r < 62)
			blk_copy(g, 0);
		else if (r < 70)
			blk_copy(g, 1);
		else if (r < 80)
			blk_acc(g);
		else if (r < 87)
			blk_indep(g);
		else if (r < 93)
			blk_tokens(g);
		else
			emit_mark(g);
	}
	g->full = 0;
}

/* Place the code (n instructions) in DRAM, away from the data. */
static int place_code(gen *g, int at_end)
{
	loom_cosim_prog *p = g->p;
	uint64_t len = 32ull * p->ninsns, a;
	uint64_t dram = g->cfg->dram_bytes;
	if (at_end) {
		a = dram - len;
		if (a < g->hi_used) {
			gfail(g, "generator bug: code at the end of DRAM overlaps data");
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
	long r = region_add(g, LOOM_COSIM_CODE, a, (uint32_t)len);
	if (r < 0)
		return -1;
	/* the code region first */
	loom_cosim_region cr = p->regions[r];
	memmove(p->regions + 1, p->regions, (size_t)r * sizeof *p->regions);
	p->regions[0] = cr;
	return 0;
}

static void fill_code(loom_cosim_prog *p)
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
static long abstract_run(const loom_cosim_prog *p, size_t first)
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
		int q = op_queue(in);
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

static int finish_prog(gen *g, int rc)
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
		prologue(&g);
		if (chance(&g, 3))
			blk_flood(&g);
		body(&g, pick_budget(&g));
		if (chance(&g, 40))
			emit_mark(&g);
		g.full = 0;
		loom_insn fin = op(LOOM_OP_FINISH);
		emit_ctrl(&g, &fin);
	}
	if (!g.failed && !place_code(&g, !g.down && chance(&g, 10))) {
		fill_code(p);
		for (size_t i = 0; i < p->ninsns && !g.failed; i++) {
			uint32_t f;
			unsigned c = loom_insn_check(cfg, &p->insns[i], &f);
			if (c) {
				char d[256];
				loom_insn_disasm(&p->insns[i], d, sizeof d);
				gfail(&g, "generator bug: instruction %zu fails %s (%s): %s", i, loom_err_name(c),
				      loom_field_name(f), d);
			}
		}
		if (!g.failed && abstract_run(p, 0) != -1)
			gfail(&g, "generator bug: seed %llu deadlocks", (unsigned long long)seed);
	}
	return finish_prog(&g, 0);
}

/* ------------------------------------------------------------ bad programs */

static const char *const bad_names[] = {
	"opcode-zero",        "opcode-illegal",     "reserved-load",      "reserved-store",
	"reserved-matmul",    "reserved-mark",      "reserved-finish",    "load-target",
	"load-pad-value",     "load-row-words",     "load-misaligned",    "load-sp-range",
	"load-acc-range",     "load-dram-range",    "store-source",       "store-row-words",
	"store-field",        "store-clip",         "store-param-range",  "store-misaligned",
	"store-mem-range",    "store-dram-range",   "matmul-zero-field",  "matmul-in-w",
	"matmul-in-h",        "matmul-act-range",   "matmul-wgt-range",   "matmul-acc-range",
	"mark-misaligned",    "mark-dram-range",
	/* 30.. the vector unit */
	"reserved-eltwise",   "reserved-pool",      "reserved-dwconv",    "reserved-lut",
	"eltwise-func",       "eltwise-b-mode",     "eltwise-mul-mult-a", "eltwise-mul-mult-b",
	"eltwise-clip",       "eltwise-src-a-range", "eltwise-src-b-range", "eltwise-dst-range",
	"pool-max-field",     "pool-clip",          "pool-zero-field",    "pool-window",
	"pool-src-range",     "pool-dst-range",     "dwconv-clip",        "dwconv-zero-field",
	"dwconv-window",      "dwconv-src-range",   "dwconv-wgt-range",   "dwconv-param-range",
	"dwconv-dst-range",   "lut-src-range",      "lut-dst-range",      "lut-table-range",
	/* not decode checks */
	"deadlock-finish",    "deadlock-mark",
	"deadlock-full-queue", "deadlock-full-other", "fetch-range",      "insn-base-range",
	"insn-base-misaligned", "edge-legal",
};
#define NBAD (sizeof bad_names / sizeof bad_names[0])

unsigned loom_cosim_bad_kinds(void) { return NBAD; }
const char *loom_cosim_bad_name(unsigned kind) { return kind < NBAD ? bad_names[kind] : "?"; }

/* Legal instructions with random fields (never run: checks only). */
static loom_insn legal_load(gen *g)
{
	loom_insn in = op(LOOM_OP_LOAD);
	unsigned tgt = rbelow(g, 2);
	uint32_t lines = tgt ? g->cfg->acc_lines : g->cfg->sp_lines;
	setf(g, &in, LOOM_F_LOAD_TARGET, tgt);
	if (!tgt)
		setf(g, &in, LOOM_F_LOAD_PAD_VALUE, rbelow(g, 256));
	setf(g, &in, LOOM_F_LOAD_ROW_WORDS, rrange(g, 1, tgt ? g->C : g->R / 4));
	uint32_t n1 = rrange(g, 1, 8), n2 = rrange(g, 1, 4), n3 = rrange(g, 1, 2);
	setf(g, &in, LOOM_F_LOAD_N1, n1);
	setf(g, &in, LOOM_F_LOAD_N2, n2);
	setf(g, &in, LOOM_F_LOAD_N3, n3);
	setf(g, &in, LOOM_F_LOAD_PAD_TOP, rbelow(g, 2));
	setf(g, &in, LOOM_F_LOAD_PAD_LEFT, rbelow(g, 2));
	uint32_t used = n3 * (n2 + 1) * (n1 + 1);
	setf(g, &in, LOOM_F_LOAD_MEM_ADDR, rbelow(g, lines - used));
	setf(g, &in, LOOM_F_LOAD_STRIDE1, 4u * rbelow(g, 64));
	setf(g, &in, LOOM_F_LOAD_STRIDE2, 4u * rbelow(g, 1024));
	setf(g, &in, LOOM_F_LOAD_STRIDE3, 4u * rbelow(g, 4096));
	setf(g, &in, LOOM_F_LOAD_DRAM_ADDR, 4u * rbelow(g, (uint32_t)(g->cfg->dram_bytes / 8)));
	return in;
}

static loom_insn legal_store(gen *g, unsigned src)
{
	loom_insn in = op(LOOM_OP_STORE);
	uint32_t lines = src == 0 ? g->cfg->sp_lines : g->cfg->acc_lines;
	setf(g, &in, LOOM_F_STORE_SOURCE, src);
	setf(g, &in, LOOM_F_STORE_ROW_WORDS, rrange(g, 1, src == 0 ? g->R / 4 : src == 1 ? g->C : g->C / 4));
	uint32_t n1 = rrange(g, 1, 8), n2 = rrange(g, 1, 4), n3 = rrange(g, 1, 2);
	setf(g, &in, LOOM_F_STORE_N1, n1);
	setf(g, &in, LOOM_F_STORE_N2, n2);
	setf(g, &in, LOOM_F_STORE_N3, n3);
	setf(g, &in, LOOM_F_STORE_MEM_ADDR, rbelow(g, lines - n1 * n2 * n3));
	setf(g, &in, LOOM_F_STORE_STRIDE1, 4u * rbelow(g, 64));
	setf(g, &in, LOOM_F_STORE_STRIDE2, 4u * rbelow(g, 1024));
	setf(g, &in, LOOM_F_STORE_STRIDE3, 4u * rbelow(g, 4096));
	setf(g, &in, LOOM_F_STORE_DRAM_ADDR, 4u * rbelow(g, (uint32_t)(g->cfg->dram_bytes / 8)));
	if (src == 2) {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		setf(g, &in, LOOM_F_STORE_ZERO_POINT, r32(g) & 0xff);
		setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)(a < b ? a : b));
		setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)(a < b ? b : a));
		setf(g, &in, LOOM_F_STORE_PARAM_ADDR, rbelow(g, g->cfg->acc_lines - 2));
	}
	return in;
}

static loom_insn legal_matmul(gen *g, geom *m)
{
	rand_geom(g, m, chance(g, 30), 3000);
	uint32_t act_lines = m->ncb * m->inh * m->inw, wl = m->ncb * m->kh * m->kw * g->C;
	return mk_matmul(g, m, m->ncb, rbelow(g, g->cfg->sp_lines - act_lines + 1),
			 rbelow(g, g->cfg->sp_lines - wl + 1), rbelow(g, g->cfg->acc_lines - m->ow * m->oh + 1),
			 rbelow(g, 2));
}

static loom_insn legal_mark(gen *g)
{
	loom_insn in = op(LOOM_OP_MARK);
	setf(g, &in, LOOM_F_MARK_DRAM_ADDR, 4u * rbelow(g, (uint32_t)((g->cfg->dram_bytes - 64) / 4 + 1)));
	setf(g, &in, LOOM_F_MARK_MARK_ID, r32(g));
	return in;
}

static loom_insn legal_eltwise(gen *g)
{
	loom_insn in = op(LOOM_OP_ELTWISE);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	unsigned fn = rbelow(g, 2), bm = rbelow(g, 3);
	uint32_t planes = rrange(g, 1, 8), pl = rrange(g, 1, 64), n = planes * pl;
	uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
	setf(g, &in, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &in, LOOM_F_ELTWISE_B_MODE, bm);
	setf(g, &in, LOOM_F_ELTWISE_SHIFT, rbelow(g, 32));
	setf(g, &in, LOOM_F_ELTWISE_ZP_OUT, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_A, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_ELTWISE_ZP_A, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_B, rbelow(g, L - nb + 1));
	setf(g, &in, LOOM_F_ELTWISE_ZP_B, rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_DST, rbelow(g, L - n + 1));
	rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
	setf(g, &in, LOOM_F_ELTWISE_PLANE_LINES, pl);
	setf(g, &in, LOOM_F_ELTWISE_PLANES, planes);
	if (fn == LOOM_ELT_ADD) {
		setf(g, &in, LOOM_F_ELTWISE_MULT_A, rand_m16(g));
		setf(g, &in, LOOM_F_ELTWISE_MULT_B, rand_m16(g));
	}
	setf(g, &in, LOOM_F_ELTWISE_MULT, r32(g));
	return in;
}

static loom_insn legal_pool(gen *g, geom *m, int avg)
{
	loom_insn in = op(LOOM_OP_POOL);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	vec_geom(g, m, 0);
	setf(g, &in, LOOM_F_POOL_FUNC, avg ? LOOM_POOL_AVG : LOOM_POOL_MAX);
	if (avg) {
		setf(g, &in, LOOM_F_POOL_SHIFT, rbelow(g, 32));
		setf(g, &in, LOOM_F_POOL_ZP_OUT, rand_zp(g));
		setf(g, &in, LOOM_F_POOL_ZP_IN, rand_zp(g));
		setf(g, &in, LOOM_F_POOL_MULT, r32(g));
	}
	rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_POOL_CLIP_LO, lo);
	setf(g, &in, LOOM_F_POOL_CLIP_HI, hi);
	setf(g, &in, LOOM_F_POOL_SRC, rbelow(g, L - m->ncb * m->inw * m->inh + 1));
	setf(g, &in, LOOM_F_POOL_DST, rbelow(g, L - m->ncb * m->ow * m->oh + 1));
	setf(g, &in, LOOM_F_POOL_IN_W, m->inw);
	setf(g, &in, LOOM_F_POOL_IN_H, m->inh);
	setf(g, &in, LOOM_F_POOL_OUT_W, m->ow);
	setf(g, &in, LOOM_F_POOL_OUT_H, m->oh);
	setf(g, &in, LOOM_F_POOL_NCB, m->ncb);
	setf(g, &in, LOOM_F_POOL_KW, m->kw);
	setf(g, &in, LOOM_F_POOL_KH, m->kh);
	setf(g, &in, LOOM_F_POOL_SW, m->sw);
	setf(g, &in, LOOM_F_POOL_SH, m->sh);
	setf(g, &in, LOOM_F_POOL_DW, m->dw);
	setf(g, &in, LOOM_F_POOL_DH, m->dh);
	return in;
}

static loom_insn legal_dwconv(gen *g, geom *m)
{
	loom_insn in = op(LOOM_OP_DWCONV);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	vec_geom(g, m, 1);
	setf(g, &in, LOOM_F_DWCONV_ZP_IN, rand_zp(g));
	setf(g, &in, LOOM_F_DWCONV_ZP_OUT, rand_zp(g));
	rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_DWCONV_CLIP_LO, lo);
	setf(g, &in, LOOM_F_DWCONV_CLIP_HI, hi);
	setf(g, &in, LOOM_F_DWCONV_SRC, rbelow(g, L - m->ncb * m->inw * m->inh + 1));
	setf(g, &in, LOOM_F_DWCONV_WGT, rbelow(g, L - m->ncb * m->kw * m->kh + 1));
	setf(g, &in, LOOM_F_DWCONV_PARAM, rbelow(g, L - m->ncb * LOOM_DW_PARAM_LINES + 1));
	setf(g, &in, LOOM_F_DWCONV_DST, rbelow(g, L - m->ncb * m->ow * m->oh + 1));
	setf(g, &in, LOOM_F_DWCONV_NCB, m->ncb);
	setf(g, &in, LOOM_F_DWCONV_IN_W, m->inw);
	setf(g, &in, LOOM_F_DWCONV_IN_H, m->inh);
	setf(g, &in, LOOM_F_DWCONV_KW, m->kw);
	setf(g, &in, LOOM_F_DWCONV_KH, m->kh);
	setf(g, &in, LOOM_F_DWCONV_OUT_W, m->ow);
	setf(g, &in, LOOM_F_DWCONV_OUT_H, m->oh);
	setf(g, &in, LOOM_F_DWCONV_SW, m->sw);
	setf(g, &in, LOOM_F_DWCONV_SH, m->sh);
	setf(g, &in, LOOM_F_DWCONV_DW, m->dw);
	setf(g, &in, LOOM_F_DWCONV_DH, m->dh);
	return in;
}

static loom_insn legal_lut(gen *g)
{
	loom_insn in = op(LOOM_OP_LUT);
	uint32_t L = g->cfg->sp_lines, n = rrange(g, 1, 300);
	setf(g, &in, LOOM_F_LUT_SRC, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_LUT_DST, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_LUT_TABLE, rbelow(g, L - lut_lines(g->cfg) + 1));
	setf(g, &in, LOOM_F_LUT_LINES, n);
	return in;
}

static const unsigned vec_ops[4] = {LOOM_OP_ELTWISE, LOOM_OP_POOL, LOOM_OP_DWCONV, LOOM_OP_LUT};

/* Fields of POOL and DWCONV in the order of their zero and window checks. */
typedef struct winf {
	enum loom_field nz[11]; /* IN_W IN_H OUT_W OUT_H NCB KW KH SW SH DW DH */
	enum loom_field src, dst, clip_lo, clip_hi;
} winf;

static const winf pool_fields = {
	{LOOM_F_POOL_IN_W, LOOM_F_POOL_IN_H, LOOM_F_POOL_OUT_W, LOOM_F_POOL_OUT_H, LOOM_F_POOL_NCB, LOOM_F_POOL_KW,
	 LOOM_F_POOL_KH, LOOM_F_POOL_SW, LOOM_F_POOL_SH, LOOM_F_POOL_DW, LOOM_F_POOL_DH},
	LOOM_F_POOL_SRC, LOOM_F_POOL_DST, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI,
};

static const winf dw_fields = {
	{LOOM_F_DWCONV_IN_W, LOOM_F_DWCONV_IN_H, LOOM_F_DWCONV_OUT_W, LOOM_F_DWCONV_OUT_H, LOOM_F_DWCONV_NCB,
	 LOOM_F_DWCONV_KW, LOOM_F_DWCONV_KH, LOOM_F_DWCONV_SW, LOOM_F_DWCONV_SH, LOOM_F_DWCONV_DW, LOOM_F_DWCONV_DH},
	LOOM_F_DWCONV_SRC, LOOM_F_DWCONV_DST, LOOM_F_DWCONV_CLIP_LO, LOOM_F_DWCONV_CLIP_HI,
};

/* A first SP line from which n lines reach past the last one. */
static uint32_t past(gen *g, uint64_t n)
{
	uint32_t L = g->cfg->sp_lines, first = n > L ? 0 : L - (uint32_t)n + 1;
	return chance(g, 60) ? first : rrange(g, first, 0xffffff);
}

/* int8(CLIP_LO) > int8(CLIP_HI), often with different unsigned order. */
static void bad_clip(gen *g, loom_insn *in, enum loom_field flo, enum loom_field fhi)
{
	int a = (int)rrange(g, 0, 254) - 127;
	int b = a - 1 - (int)rbelow(g, (uint32_t)(a + 128));
	setf(g, in, flo, (uint8_t)(int8_t)a);
	setf(g, in, fhi, (uint8_t)(int8_t)b);
}

static loom_insn legal_any(gen *g, unsigned opcode)
{
	geom m;
	switch (opcode) {
	case LOOM_OP_LOAD: return legal_load(g);
	case LOOM_OP_STORE: return legal_store(g, rbelow(g, 3));
	case LOOM_OP_MATMUL: return legal_matmul(g, &m);
	case LOOM_OP_MARK: return legal_mark(g);
	case LOOM_OP_ELTWISE: return legal_eltwise(g);
	case LOOM_OP_POOL: return legal_pool(g, &m, (int)rbelow(g, 2));
	case LOOM_OP_DWCONV: return legal_dwconv(g, &m);
	case LOOM_OP_LUT: return legal_lut(g);
	default: return op(LOOM_OP_FINISH);
	}
}

/* A random reserved bit of opcode set in in. */
static void set_reserved(gen *g, loom_insn *in, unsigned opcode)
{
	for (;;) {
		unsigned w = rbelow(g, 8), b = rbelow(g, 32);
		if (!(loom_op_used_mask(opcode, w) >> b & 1)) {
			in->w[w] |= 1u << b;
			return;
		}
	}
}

/* The decode-time bad instruction of kind k; *cause and *field predicted
 * from docs/ISA.md. 0, or -1 when the kind is not a decode check. */
static int bad_insn(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	uint32_t R = g->R, Cc = g->C;
	uint64_t dram = c->dram_bytes;
	geom m;
	*field = LOOM_INFO_NONE;
	switch (k) {
	case 0:
		*in = op(0);
		*cause = LOOM_ERR_ILLEGAL_OPCODE;
		*field = LOOM_F_ANY_OPCODE;
		return 0;
	case 1: {
		unsigned o;
		do
			o = rbelow(g, 256);
		while (loom_op_name(o) || o == 0);
		*in = legal_any(g, (unsigned[]){LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_MATMUL}[rbelow(g, 3)]);
		in->w[0] = (in->w[0] & ~0xffu) | o;
		if (chance(g, 50))
			in->w[rbelow(g, 8)] |= 1u << rbelow(g, 32);
		in->w[0] = (in->w[0] & ~0xffu) | o;
		*cause = LOOM_ERR_ILLEGAL_OPCODE;
		*field = LOOM_F_ANY_OPCODE;
		return 0;
	}
	case 2: case 3: case 4: case 5: case 6: {
		static const unsigned ops[] = {LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_MATMUL, LOOM_OP_MARK, LOOM_OP_FINISH};
		unsigned o = ops[k - 2];
		*in = legal_any(g, o);
		set_reserved(g, in, o);
		if (chance(g, 30)) /* and a later check failing too: reserved bits win */
			setf(g, in, o == LOOM_OP_LOAD ? LOOM_F_LOAD_ROW_WORDS : o == LOOM_OP_STORE ? LOOM_F_STORE_ROW_WORDS
				     : o == LOOM_OP_MATMUL ? LOOM_F_MATMUL_NCB : LOOM_F_ANY_OPCODE,
			     o == LOOM_OP_MARK || o == LOOM_OP_FINISH ? o : 0);
		*cause = LOOM_ERR_RESERVED_BITS;
		return 0;
	}
	case 7:
		*in = legal_load(g);
		setf(g, in, LOOM_F_LOAD_TARGET, rrange(g, 2, 3));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_TARGET;
		return 0;
	case 8:
		*in = legal_load(g);
		setf(g, in, LOOM_F_LOAD_TARGET, 1);
		setf(g, in, LOOM_F_LOAD_PAD_VALUE, rrange(g, 1, 255));
		if (chance(g, 30))
			setf(g, in, LOOM_F_LOAD_ROW_WORDS, 0); /* PAD_VALUE is checked first */
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_PAD_VALUE;
		return 0;
	case 9: {
		*in = legal_load(g);
		unsigned tgt = loom_insn_get(in, LOOM_F_LOAD_TARGET);
		uint32_t lim = tgt ? Cc : R / 4;
		setf(g, in, LOOM_F_LOAD_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_ROW_WORDS;
		return 0;
	}
	case 10: case 19: {
		int st = k == 19;
		*in = st ? legal_store(g, rbelow(g, 3)) : legal_load(g);
		enum loom_field fs[4] = {st ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR,
					 st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1,
					 st ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2,
					 st ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3};
		unsigned i = rbelow(g, 4);
		setf(g, in, fs[i], loom_insn_get(in, fs[i]) | rrange(g, 1, 3));
		for (unsigned j = i + 1; j < 4; j++) /* later ones may be misaligned too */
			if (chance(g, 30))
				setf(g, in, fs[j], loom_insn_get(in, fs[j]) | rrange(g, 1, 3));
		if (chance(g, 30)) /* and a range error, which comes later */
			setf(g, in, st ? LOOM_F_STORE_MEM_ADDR : LOOM_F_LOAD_MEM_ADDR, 0xffffff);
		*cause = LOOM_ERR_MISALIGNED;
		*field = fs[i];
		return 0;
	}
	case 11: case 12: {
		*in = legal_load(g);
		unsigned tgt = k == 12;
		setf(g, in, LOOM_F_LOAD_TARGET, tgt);
		setf(g, in, LOOM_F_LOAD_PAD_VALUE, 0);
		setf(g, in, LOOM_F_LOAD_ROW_WORDS, 1);
		uint32_t lines = tgt ? c->acc_lines : c->sp_lines;
		uint64_t used = (uint64_t)loom_insn_get(in, LOOM_F_LOAD_N3) *
				(loom_insn_get(in, LOOM_F_LOAD_PAD_TOP) + loom_insn_get(in, LOOM_F_LOAD_N2) +
				 loom_insn_get(in, LOOM_F_LOAD_PAD_BOTTOM)) *
				(loom_insn_get(in, LOOM_F_LOAD_PAD_LEFT) + loom_insn_get(in, LOOM_F_LOAD_N1) +
				 loom_insn_get(in, LOOM_F_LOAD_PAD_RIGHT));
		uint32_t mem = chance(g, 60) ? (uint32_t)(lines - used + 1) : rrange(g, lines - (uint32_t)used + 1, 0xffffff);
		setf(g, in, LOOM_F_LOAD_MEM_ADDR, mem);
		if (chance(g, 30)) /* DRAM out of range too: MEM_ADDR is checked first */
			setf(g, in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)((dram + 64) & 0xfffffffcu));
		*cause = tgt ? LOOM_ERR_ACC_RANGE : LOOM_ERR_SP_RANGE;
		*field = LOOM_F_LOAD_MEM_ADDR;
		return 0;
	}
	case 13: case 21: {
		int st = k == 21;
		*in = st ? legal_store(g, rbelow(g, 3)) : legal_load(g);
		enum loom_field fa = st ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR;
		uint32_t n1 = loom_insn_get(in, st ? LOOM_F_STORE_N1 : LOOM_F_LOAD_N1);
		int r = rbelow(g, 3);
		if (r == 1 && n1 < 2)
			r = 2;
		if (r == 0) { /* one word past the end */
			uint64_t end = dram;
			uint64_t span = (uint64_t)(loom_insn_get(in, st ? LOOM_F_STORE_N3 : LOOM_F_LOAD_N3) - 1) *
						loom_insn_get(in, st ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3) +
					(uint64_t)(loom_insn_get(in, st ? LOOM_F_STORE_N2 : LOOM_F_LOAD_N2) - 1) *
						loom_insn_get(in, st ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2) +
					(uint64_t)(n1 - 1) * loom_insn_get(in, st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1) +
					4u * loom_insn_get(in, st ? LOOM_F_STORE_ROW_WORDS : LOOM_F_LOAD_ROW_WORDS);
			setf(g, in, fa, (uint32_t)(end - span + 4));
		} else if (r == 1) { /* a stride that wraps 32 bits */
			setf(g, in, st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1, 0xfffffffcu);
			setf(g, in, fa, 64);
		} else {
			setf(g, in, fa, (uint32_t)(dram + 4u * rbelow(g, 1024)) & ~3u);
		}
		*cause = LOOM_ERR_DRAM_RANGE;
		*field = fa;
		return 0;
	}
	case 14:
		*in = legal_store(g, rbelow(g, 2));
		setf(g, in, LOOM_F_STORE_SOURCE, 3);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_SOURCE;
		return 0;
	case 15: {
		unsigned src = rbelow(g, 3);
		*in = legal_store(g, src);
		uint32_t lim = src == 0 ? R / 4 : src == 1 ? Cc : Cc / 4;
		setf(g, in, LOOM_F_STORE_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_ROW_WORDS;
		return 0;
	}
	case 16: {
		*in = legal_store(g, rbelow(g, 2));
		static const enum loom_field q[4] = {LOOM_F_STORE_ZERO_POINT, LOOM_F_STORE_PARAM_ADDR,
						     LOOM_F_STORE_CLIP_LO, LOOM_F_STORE_CLIP_HI};
		unsigned i = rbelow(g, 4);
		setf(g, in, q[i], rrange(g, 1, 255));
		for (unsigned j = i + 1; j < 4; j++)
			if (chance(g, 40))
				setf(g, in, q[j], rrange(g, 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = q[i];
		return 0;
	}
	case 17: {
		*in = legal_store(g, 2);
		int a = (int)rrange(g, 0, 254) - 127;
		int b = a - 1 - (int)rbelow(g, (uint32_t)(a + 128));
		setf(g, in, LOOM_F_STORE_CLIP_LO, (uint8_t)(int8_t)a);
		setf(g, in, LOOM_F_STORE_CLIP_HI, (uint8_t)(int8_t)b);
		if (chance(g, 30)) /* and a param range error, checked later */
			setf(g, in, LOOM_F_STORE_PARAM_ADDR, 0xffff);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_CLIP_LO;
		return 0;
	}
	case 18:
		*in = legal_store(g, 2);
		setf(g, in, LOOM_F_STORE_PARAM_ADDR, chance(g, 60) ? c->acc_lines - 2 : rrange(g, c->acc_lines - 2, 0xffff));
		*cause = LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_STORE_PARAM_ADDR;
		return 0;
	case 20: {
		unsigned src = rbelow(g, 3);
		*in = legal_store(g, src);
		uint32_t lines = src == 0 ? c->sp_lines : c->acc_lines;
		uint32_t n = loom_insn_get(in, LOOM_F_STORE_N1) * loom_insn_get(in, LOOM_F_STORE_N2) *
			     loom_insn_get(in, LOOM_F_STORE_N3);
		setf(g, in, LOOM_F_STORE_MEM_ADDR, chance(g, 60) ? lines - n + 1 : rrange(g, lines - n + 1, 0xffffff));
		*cause = src == 0 ? LOOM_ERR_SP_RANGE : LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_STORE_MEM_ADDR;
		return 0;
	}
	case 22: {
		static const enum loom_field nz[] = {
			LOOM_F_MATMUL_IN_W, LOOM_F_MATMUL_IN_H, LOOM_F_MATMUL_OUT_W, LOOM_F_MATMUL_OUT_H,
			LOOM_F_MATMUL_NCB, LOOM_F_MATMUL_KW, LOOM_F_MATMUL_KH, LOOM_F_MATMUL_SW,
			LOOM_F_MATMUL_SH, LOOM_F_MATMUL_DW, LOOM_F_MATMUL_DH,
		};
		*in = legal_matmul(g, &m);
		unsigned i = rbelow(g, 11);
		setf(g, in, nz[i], 0);
		for (unsigned j = i + 1; j < 11; j++)
			if (chance(g, 20))
				setf(g, in, nz[j], 0);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = nz[i];
		return 0;
	}
	case 23: case 24: {
		*in = legal_matmul(g, &m);
		int w = k == 23;
		uint32_t need = w ? (m.ow - 1) * m.sw + (m.kw - 1) * m.dw + 1 : (m.oh - 1) * m.sh + (m.kh - 1) * m.dh + 1;
		if (need <= 1) { /* make the kernel reach further */
			setf(g, in, w ? LOOM_F_MATMUL_KW : LOOM_F_MATMUL_KH, 2);
			need = w ? (m.ow - 1) * m.sw + m.dw + 1 : (m.oh - 1) * m.sh + m.dh + 1;
		}
		setf(g, in, w ? LOOM_F_MATMUL_IN_W : LOOM_F_MATMUL_IN_H, rrange(g, 1, need - 1));
		if (w && chance(g, 30)) { /* IN_H wrong too: IN_W is checked first */
			setf(g, in, LOOM_F_MATMUL_IN_H, 1);
			setf(g, in, LOOM_F_MATMUL_OUT_H, 2);
		}
		setf(g, in, LOOM_F_MATMUL_ACT_ADDR, 0);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = w ? LOOM_F_MATMUL_IN_W : LOOM_F_MATMUL_IN_H;
		return 0;
	}
	case 25: case 26: case 27: {
		*in = legal_matmul(g, &m);
		uint32_t act_lines = m.ncb * m.inh * m.inw, wl = m.ncb * m.kh * m.kw * Cc, P = m.ow * m.oh;
		if (k == 25) {
			setf(g, in, LOOM_F_MATMUL_ACT_ADDR,
			     chance(g, 60) ? c->sp_lines - act_lines + 1 : rrange(g, c->sp_lines - act_lines + 1, 0xffffff));
			if (chance(g, 30))
				setf(g, in, LOOM_F_MATMUL_WGT_ADDR, 0xffffff);
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_MATMUL_ACT_ADDR;
		} else if (k == 26) {
			setf(g, in, LOOM_F_MATMUL_WGT_ADDR,
			     chance(g, 60) ? c->sp_lines - wl + 1 : rrange(g, c->sp_lines - wl + 1, 0xffffff));
			if (chance(g, 30))
				setf(g, in, LOOM_F_MATMUL_ACC_ADDR, 0xffff);
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_MATMUL_WGT_ADDR;
		} else {
			setf(g, in, LOOM_F_MATMUL_ACC_ADDR,
			     chance(g, 60) ? c->acc_lines - P + 1 : rrange(g, c->acc_lines - P + 1, 0xffff));
			*cause = LOOM_ERR_ACC_RANGE;
			*field = LOOM_F_MATMUL_ACC_ADDR;
		}
		return 0;
	}
	case 28:
		*in = legal_mark(g);
		setf(g, in, LOOM_F_MARK_DRAM_ADDR, loom_insn_get(in, LOOM_F_MARK_DRAM_ADDR) | rrange(g, 1, 3));
		*cause = LOOM_ERR_MISALIGNED;
		*field = LOOM_F_MARK_DRAM_ADDR;
		return 0;
	case 29:
		*in = legal_mark(g);
		setf(g, in, LOOM_F_MARK_DRAM_ADDR,
		     chance(g, 50) ? (uint32_t)(dram - 60) : chance(g, 50) ? (uint32_t)dram : 0xfffffffcu);
		*cause = LOOM_ERR_DRAM_RANGE;
		*field = LOOM_F_MARK_DRAM_ADDR;
		return 0;
	case 30: case 31: case 32: case 33: {
		unsigned o = vec_ops[k - 30];
		*in = legal_any(g, o);
		set_reserved(g, in, o);
		if (chance(g, 30)) { /* and a field check failing too: reserved bits win */
			if (o == LOOM_OP_ELTWISE)
				setf(g, in, LOOM_F_ELTWISE_FUNC, 3);
			else if (o == LOOM_OP_POOL)
				setf(g, in, LOOM_F_POOL_NCB, 0);
			else if (o == LOOM_OP_DWCONV)
				setf(g, in, LOOM_F_DWCONV_KW, 0);
			else
				setf(g, in, LOOM_F_LUT_TABLE, 0xffffff);
		}
		*cause = LOOM_ERR_RESERVED_BITS;
		return 0;
	}
	case 34: case 35: case 36: case 37: case 38: case 39: case 40: case 41: {
		*in = legal_eltwise(g);
		uint32_t planes = loom_insn_get(in, LOOM_F_ELTWISE_PLANES);
		uint32_t n = planes * loom_insn_get(in, LOOM_F_ELTWISE_PLANE_LINES);
		unsigned bm = loom_insn_get(in, LOOM_F_ELTWISE_B_MODE);
		uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
		*cause = LOOM_ERR_BAD_FIELD;
		switch (k) {
		case 34:
			setf(g, in, LOOM_F_ELTWISE_FUNC, rrange(g, 2, 3));
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
			*field = LOOM_F_ELTWISE_FUNC;
			break;
		case 35:
			setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
			if (chance(g, 30)) {
				setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
				setf(g, in, LOOM_F_ELTWISE_MULT_A, rrange(g, 1, 0xffff));
			}
			*field = LOOM_F_ELTWISE_B_MODE;
			break;
		case 36: case 37:
			setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
			setf(g, in, LOOM_F_ELTWISE_MULT_A, k == 36 ? rrange(g, 1, 0xffff) : 0);
			setf(g, in, LOOM_F_ELTWISE_MULT_B, k == 37 || chance(g, 40) ? rrange(g, 1, 0xffff) : 0);
			if (chance(g, 30))
				bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
			*field = k == 36 ? LOOM_F_ELTWISE_MULT_A : LOOM_F_ELTWISE_MULT_B;
			break;
		case 38:
			bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_SRC_A, 0xffffff);
			*field = LOOM_F_ELTWISE_CLIP_LO;
			break;
		case 39:
			if (chance(g, 15)) { /* PLANES * PLANE_LINES far beyond 32 bits of lines */
				setf(g, in, LOOM_F_ELTWISE_PLANES, rrange(g, 0x8000, 0xffff));
				setf(g, in, LOOM_F_ELTWISE_PLANE_LINES, rrange(g, 0x800000, 0xffffff));
				setf(g, in, LOOM_F_ELTWISE_SRC_A, rbelow(g, 1u << 24));
			} else {
				setf(g, in, LOOM_F_ELTWISE_SRC_A, past(g, n));
				if (chance(g, 30))
					setf(g, in, LOOM_F_ELTWISE_SRC_B, past(g, nb));
			}
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_ELTWISE_SRC_A;
			break;
		case 40:
			setf(g, in, LOOM_F_ELTWISE_SRC_B, past(g, nb));
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_ELTWISE_SRC_B;
			break;
		default:
			setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_ELTWISE_DST;
			break;
		}
		return 0;
	}
	case 42: case 43: case 44: case 45: case 46: case 47:
	case 48: case 49: case 50: case 51: case 52: case 53: case 54: {
		int dwc = k >= 48;
		const winf *f = dwc ? &dw_fields : &pool_fields;
		*in = dwc ? legal_dwconv(g, &m) : legal_pool(g, &m, k == 42 ? 0 : (int)rbelow(g, 2));
		uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
		*cause = LOOM_ERR_BAD_FIELD;
		switch (dwc ? k - 5 : k) {
		case 42: {
			static const enum loom_field q[4] = {LOOM_F_POOL_ZP_IN, LOOM_F_POOL_ZP_OUT, LOOM_F_POOL_SHIFT,
							     LOOM_F_POOL_MULT};
			static const uint32_t maxv[4] = {255, 255, 31, 0xffffffffu};
			unsigned i = rbelow(g, 4);
			for (unsigned j = i; j < 4; j++)
				if (j == i || chance(g, 40))
					setf(g, in, q[j], j == 3 ? r32(g) | 1u << rbelow(g, 32) : rrange(g, 1, maxv[j]));
			if (chance(g, 20))
				bad_clip(g, in, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI);
			*field = q[i];
			break;
		}
		case 43: /* clip; a zero field too: the clip is checked first */
			bad_clip(g, in, f->clip_lo, f->clip_hi);
			if (chance(g, 30))
				setf(g, in, f->nz[chance(g, 50) ? 4 : 5], 0);
			*field = f->clip_lo;
			break;
		case 44: {
			unsigned i = rbelow(g, 11);
			setf(g, in, f->nz[i], 0);
			for (unsigned j = i + 1; j < 11; j++)
				if (chance(g, 20))
					setf(g, in, f->nz[j], 0);
			*field = f->nz[i];
			break;
		}
		case 45: { /* nz: IN_W IN_H OUT_W OUT_H NCB KW KH SW SH DW DH */
			int w = chance(g, 50);
			uint32_t need = w ? (m.ow - 1) * m.sw + (m.kw - 1) * m.dw + 1 : (m.oh - 1) * m.sh + (m.kh - 1) * m.dh + 1;
			if (need <= 1) { /* make the window reach further */
				setf(g, in, f->nz[w ? 5 : 6], 2);
				need = w ? (m.ow - 1) * m.sw + m.dw + 1 : (m.oh - 1) * m.sh + m.dh + 1;
			}
			setf(g, in, f->nz[w ? 0 : 1], rrange(g, 1, need - 1));
			if (w && chance(g, 30)) { /* IN_H wrong too: IN_W is checked first */
				setf(g, in, f->nz[1], 1);
				setf(g, in, f->nz[3], 2);
			}
			*field = f->nz[w ? 0 : 1];
			break;
		}
		case 46:
			if (chance(g, 15)) { /* billions of lines */
				setf(g, in, f->nz[4], 255);
				setf(g, in, f->nz[0], 4095);
				setf(g, in, f->nz[1], 4095);
				setf(g, in, f->src, rbelow(g, 1u << 24));
			} else {
				setf(g, in, f->src, past(g, nin));
			}
			if (chance(g, 30))
				setf(g, in, f->dst, past(g, nout));
			*cause = LOOM_ERR_SP_RANGE;
			*field = f->src;
			break;
		case 47: /* DWCONV: WGT */
			if (dwc) {
				setf(g, in, LOOM_F_DWCONV_WGT, past(g, m.ncb * m.kw * m.kh));
				if (chance(g, 30))
					setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
				*field = LOOM_F_DWCONV_WGT;
			} else {
				setf(g, in, f->dst, past(g, nout));
				*field = f->dst;
			}
			*cause = LOOM_ERR_SP_RANGE;
			break;
		case 48: /* DWCONV: PARAM */
			setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
			if (chance(g, 30))
				setf(g, in, LOOM_F_DWCONV_DST, past(g, nout));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_DWCONV_PARAM;
			break;
		default: /* DWCONV: DST */
			setf(g, in, LOOM_F_DWCONV_DST, past(g, nout));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_DWCONV_DST;
			break;
		}
		return 0;
	}
	case 55: case 56: case 57: {
		*in = legal_lut(g);
		uint32_t n = loom_insn_get(in, LOOM_F_LUT_LINES);
		static const enum loom_field lf[3] = {LOOM_F_LUT_SRC, LOOM_F_LUT_DST, LOOM_F_LUT_TABLE};
		unsigned i = k - 55;
		setf(g, in, lf[i], past(g, i == 2 ? lut_lines(c) : n));
		if (i < 2 && chance(g, 30)) /* a later one too */
			setf(g, in, lf[i + 1], past(g, i == 1 ? lut_lines(c) : n));
		*cause = LOOM_ERR_SP_RANGE;
		*field = lf[i];
		return 0;
	}
	default:
		return -1;
	}
}

/* Drain every pending token of counter t (pops of pushes already made). */
static void drain_all(gen *g, int t)
{
	while (!g->failed && tok_pending(g, t))
		emit_drain(g, tok_dst[t], t);
}

/* An instruction of queue q that waits for counter t and is never run. */
static size_t stuck(gen *g, int q, int t, int data)
{
	loom_insn in;
	if (q == QC) {
		geom m;
		in = !data ? relay_c(g).in : chance(g, 60) ? legal_matmul(g, &m) : legal_any(g, vec_ops[rbelow(g, 4)]);
	} else {
		in = data ? (q == QL ? legal_load(g) : legal_store(g, rbelow(g, 3))) : token_ls(g, q == QS);
	}
	in.w[0] |= 1u << tok_pop_bit[t];
	size_t i = reserve(g);
	g->p->insns[i] = in;
	g->p->roles[i] = LOOM_COSIM_BAD;
	return i;
}

static void raw_insn(gen *g, const loom_insn *in, uint8_t role)
{
	size_t i = reserve(g);
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
		loom_insn in = legal_any(g, ops[rbelow(g, 9)]);
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
	uint32_t L = g->cfg->sp_lines, T = lut_lines(g->cfg);
	span sp[3];
	xfer x;
	memset(&x, 0, sizeof x);
	x.rw = g->R / 4;
	x.n[0] = T;
	x.n[1] = x.n[2] = 1;
	x.mem = L - T;
	if (load(g, &x, 0, NULL, NULL))
		return;
	sp[0] = (span){L - T, T};
	uint32_t n = rrange(g, 1, 40), src = alloc_avoid(g, n, sp, 1);
	if (load_lines(g, src, n))
		return;
	sp[1] = (span){src, n};
	uint32_t dst = alloc_avoid(g, n, sp, 2);
	loom_insn e = legal_lut(g);
	setf(g, &e, LOOM_F_LUT_SRC, src);
	setf(g, &e, LOOM_F_LUT_DST, dst);
	setf(g, &e, LOOM_F_LUT_TABLE, L - T);
	setf(g, &e, LOOM_F_LUT_LINES, n);
	vout o = {dst, n, n, 1, 1};
	pend K = mkpend(&e, LOOM_COSIM_DATA);
	if (vec_emit(g, &K, &o, VF_STORE))
		return;
	e = legal_eltwise(g);
	setf(g, &e, LOOM_F_ELTWISE_B_MODE, LOOM_BMODE_ONE);
	setf(g, &e, LOOM_F_ELTWISE_SRC_A, L - T);
	setf(g, &e, LOOM_F_ELTWISE_DST, L - T);
	setf(g, &e, LOOM_F_ELTWISE_SRC_B, src + rbelow(g, n));
	setf(g, &e, LOOM_F_ELTWISE_PLANES, 1);
	setf(g, &e, LOOM_F_ELTWISE_PLANE_LINES, T);
	o = (vout){L - T, T, T, 1, 1};
	K = mkpend(&e, LOOM_COSIM_DATA);
	if (vec_emit(g, &K, &o, VF_STORE))
		return;
	geom m;
	e = legal_pool(g, &m, (int)rbelow(g, 2));
	uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
	sp[0] = (span){L - nout, nout};
	src = alloc_avoid(g, nin, sp, 1);
	if (load_act(g, &m, src, 0))
		return;
	setf(g, &e, LOOM_F_POOL_SRC, src);
	setf(g, &e, LOOM_F_POOL_DST, L - nout);
	o = (vout){L - nout, nout, m.ow, m.oh, m.ncb};
	K = mkpend(&e, LOOM_COSIM_DATA);
	if (vec_emit(g, &K, &o, VF_STORE))
		return;
	e = legal_dwconv(g, &m);
	uint32_t np = m.ncb * LOOM_DW_PARAM_LINES, nw = m.ncb * m.kw * m.kh;
	nin = m.ncb * m.inw * m.inh;
	nout = m.ncb * m.ow * m.oh;
	sp[0] = (span){L - np, np};
	src = alloc_avoid(g, nin, sp, 1);
	if (load_act(g, &m, src, 0))
		return;
	sp[1] = (span){src, nin};
	uint32_t wgt = alloc_avoid(g, nw, sp, 2);
	if (load_lines(g, wgt, nw))
		return;
	sp[2] = (span){wgt, nw};
	memset(&x, 0, sizeof x);
	x.rw = g->R / 4;
	x.n[0] = np;
	x.n[1] = x.n[2] = 1;
	x.mem = L - np;
	unsigned style = 0;
	if (load(g, &x, 0, craft_dwparams, &style))
		return;
	setf(g, &e, LOOM_F_DWCONV_SRC, src);
	setf(g, &e, LOOM_F_DWCONV_WGT, wgt);
	setf(g, &e, LOOM_F_DWCONV_PARAM, L - np);
	dst = alloc_avoid(g, nout, sp, 3);
	setf(g, &e, LOOM_F_DWCONV_DST, dst);
	o = (vout){dst, nout, m.ow, m.oh, m.ncb};
	K = mkpend(&e, LOOM_COSIM_DATA);
	vec_emit(g, &K, &o, VF_STORE);
}

/* Boundary cases that are legal: exact SP/ACC/DRAM ends, token-only
 * transfers with out-of-range addresses. */
static void edge_legal(gen *g, long top_region)
{
	const loom_hwcfg *c = g->cfg;
	uint32_t R = g->R, C = g->C;
	/* weights ending at the last SP line (the sync lines are at the bottom) */
	geom m;
	rand_geom(g, &m, 1, 1500);
	uint32_t wl = m.ncb * C, P = m.ow;
	uint32_t act_lines = m.ncb * m.inh * m.inw;
	uint32_t act = line_alloc(g, 0, act_lines);
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
	if (load(g, &x, 0, NULL, NULL))
		return;
	x.n[0] = wl;
	x.n[1] = x.n[2] = 1;
	x.mem = c->sp_lines - wl;
	if (load(g, &x, 0, NULL, NULL))
		return;
	/* output tile ending at the last ACC line */
	loom_insn mm = mk_matmul(g, &m, m.ncb, act, c->sp_lines - wl, c->acc_lines - P, 0);
	emit_insn(g, &mm, LOOM_COSIM_DATA);
	stq q;
	memset(&q, 0, sizeof q);
	q.src = LOOM_MEM_ACC;
	q.rw = C;
	q.mem = c->acc_lines - P;
	q.count = P;
	store(g, &q, 0, NULL);
	/* parameters in the last three ACC lines, then a requantized store */
	memset(&x, 0, sizeof x);
	x.acc = 1;
	x.rw = C;
	x.n[0] = 3;
	x.n[1] = x.n[2] = 1;
	x.mem = c->acc_lines - 3;
	unsigned style = 0;
	if (load(g, &x, 0, craft_params, &style))
		return;
	q.src = LOOM_MEM_ACC_REQUANT;
	q.rw = C / 4;
	q.param = c->acc_lines - 3;
	q.mem = c->acc_lines - P;
	q.count = P < 3 ? P : P - 3;
	rand_requant(g, &q);
	store(g, &q, 0, NULL);
	/* token-only transfers with wild addresses */
	for (int i = 0; i < 2; i++) {
		loom_insn t = token_ls(g, i);
		emit_insn(g, &t, LOOM_COSIM_TOKEN);
	}
	loom_insn tv = token_vec(g);
	emit_insn(g, &tv, LOOM_COSIM_TOKEN);
	edge_vec(g);
	/* the top region: read up to the last DRAM byte, written back, or a
	 * MARK record in the last 64 bytes */
	if (top_region >= 0) {
		loom_cosim_region *r = &g->p->regions[top_region];
		if (r->kind == LOOM_COSIM_MARK) {
			loom_insn mk = op(LOOM_OP_MARK);
			setf(g, &mk, LOOM_F_MARK_DRAM_ADDR, (uint32_t)r->addr);
			setf(g, &mk, LOOM_F_MARK_MARK_ID, r32(g));
			emit_ctrl(g, &mk);
		} else {
			uint32_t rw = R / 4, rows = r->len / (4 * rw);
			loom_insn ld = op(LOOM_OP_LOAD);
			uint32_t sl = line_alloc(g, 0, rows);
			setf(g, &ld, LOOM_F_LOAD_ROW_WORDS, rw);
			setf(g, &ld, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)(c->dram_bytes - (uint64_t)rows * 4 * rw));
			setf(g, &ld, LOOM_F_LOAD_STRIDE1, 4 * rw);
			setf(g, &ld, LOOM_F_LOAD_N1, rows);
			setf(g, &ld, LOOM_F_LOAD_N2, 1);
			setf(g, &ld, LOOM_F_LOAD_N3, 1);
			setf(g, &ld, LOOM_F_LOAD_MEM_ADDR, sl);
			emit_insn(g, &ld, LOOM_COSIM_DATA);
			loom_insn st = op(LOOM_OP_STORE);
			setf(g, &st, LOOM_F_STORE_ROW_WORDS, rw);
			setf(g, &st, LOOM_F_STORE_DRAM_ADDR, (uint32_t)(c->dram_bytes - 4 * rw));
			setf(g, &st, LOOM_F_STORE_N1, 1);
			setf(g, &st, LOOM_F_STORE_N2, 1);
			setf(g, &st, LOOM_F_STORE_N3, 1);
			setf(g, &st, LOOM_F_STORE_MEM_ADDR, sl + rows - 1 - rbelow(g, rows));
			r->kind = LOOM_COSIM_OUTPUT;
			emit_insn(g, &st, LOOM_COSIM_DATA);
		}
	}
}

int loom_cosim_gen_bad(const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen)
{
	gen g;
	unsigned kind = (unsigned)(seed % NBAD);
	gen_init(&g, cfg, seed, p, err, errlen);
	p->bad = 1;
	p->expect_mask = LOOM_COSIM_EXPECT_PC | LOOM_COSIM_EXPECT_INFO;
	p->expect_info = LOOM_INFO_NONE;
	snprintf(p->what, sizeof p->what, "%s", bad_names[kind]);
	const char *kn = bad_names[kind];
	int code_at_end = !strcmp(kn, "fetch-range");
	int edge = !strcmp(kn, "edge-legal");
	long top = -1;
	if (!g.failed && code_at_end && g.down)
		arena_place(&g, 0); /* the code goes to the end of DRAM */
	if (!g.failed && edge) {
		/* data at the end of DRAM, sync lines and scratch at the bottom */
		g.down = 1;
		g.arena = cfg->dram_bytes - ARENA_BYTES;
		g.next = g.lo_used = g.hi_used = cfg->dram_bytes;
		g.sync_sp = 0;
		g.sp_lo = g.C;
		g.sp_hi = cfg->sp_lines;
		g.scratch_acc = 0;
		g.acc_lo = 1;
		g.acc_hi = cfg->acc_lines;
		g.bump[0] = g.sp_lo;
		g.bump[1] = g.acc_lo;
		uint32_t len = chance(&g, 50) ? LOOM_MARK_BYTES : 4 * (g.R / 4) * rrange(&g, 1, 8);
		uint64_t a = cfg->dram_bytes - len;
		g.next = g.lo_used = a;
		top = region_add(&g, len == LOOM_MARK_BYTES && chance(&g, 70) ? LOOM_COSIM_MARK : LOOM_COSIM_INPUT, a, len);
		if (g.p->regions[top].kind == LOOM_COSIM_INPUT && len % (4 * (g.R / 4))) {
			/* no LOAD row fits: a MARK record goes there (its cycle words are estimates) */
			g.p->regions[top].kind = LOOM_COSIM_MARK;
			g.p->regions[top].word_mask = LOOM_COSIM_MARK_WORDS;
		}
	}
	if (!g.failed) {
		prologue(&g);
		body(&g, rrange(&g, 1500, 6000));
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
		emit_mark(&g);
	g.full = 0;
	loom_insn bi;
	uint32_t cause = 0, field = LOOM_INFO_NONE;
	if (g.failed) {
		/* fall through to cleanup */
	} else if (bad_insn(&g, kind, &bi, &cause, &field) == 0) {
		size_t i = reserve(&g);
		p->insns[i] = bi;
		p->roles[i] = LOOM_COSIM_BAD;
		uint32_t f;
		unsigned got = loom_insn_check(cfg, &bi, &f);
		if (got != cause || f != field) {
			char d[256];
			loom_insn_disasm(&bi, d, sizeof d);
			gfail(&g, "bad kind %s: expected %s(%s), loom_insn_check says %s(%s): %s", kn,
			      loom_err_name(cause), loom_field_name(field), loom_err_name(got), loom_field_name(f), d);
		}
		p->expect_cause = cause;
		p->expect_info = field;
		tail_insns(&g);
		if (!g.failed && !place_code(&g, 0))
			p->expect_pc = (uint32_t)loom_cosim_pc(p, i);
	} else if (dl) {
		int qd = tok_dst[t];
		size_t held = 0;
		if (!strcmp(kn, "deadlock-finish") || !strcmp(kn, "deadlock-mark")) {
			stuck(&g, qd, t, chance(&g, 50));
			/* token-only work in the other queues still runs */
			for (unsigned i = rbelow(&g, 3); i > 0; i--) {
				int q = (qd + 1 + (int)rbelow(&g, 2)) % 3;
				loom_insn in = q == QC ? relay_c(&g).in : token_ls(&g, q == QS);
				raw_insn(&g, &in, LOOM_COSIM_TOKEN);
			}
			if (!strcmp(kn, "deadlock-mark")) {
				long r = region_new(&g, LOOM_COSIM_MARK, LOOM_MARK_BYTES, 4);
				loom_insn mk = op(LOOM_OP_MARK);
				if (r >= 0)
					setf(&g, &mk, LOOM_F_MARK_DRAM_ADDR, (uint32_t)p->regions[r].addr);
				held = reserve(&g);
				p->insns[held] = mk;
				p->roles[held] = LOOM_COSIM_CTRL;
				/* a MARK that is never written: its record is not compared */
				if (r >= 0)
					p->regions[r].word_mask = 0, p->regions[r].kind = LOOM_COSIM_INPUT;
			} else {
				loom_insn fin = op(LOOM_OP_FINISH);
				held = reserve(&g);
				p->insns[held] = fin;
				p->roles[held] = LOOM_COSIM_CTRL;
			}
		} else {
			/* the head of queue qd waits for t; then enough instructions for
			 * queue qw to fill it (qw = qd, or a queue whose head waits for
			 * what the stuck one would push) */
			int qw = qd;
			if (full_other) {
				/* stuck MATMUL waiting on t (L->C or S->C); loads or stores
				 * below wait for the token tw it would push */
				qw = tok_dst[tw];
				size_t s = stuck(&g, QC, t, 0);
				p->insns[s].w[0] |= 1u << tok_push_bit[tw];
			} else {
				stuck(&g, qd, t, chance(&g, 50));
			}
			unsigned inq = qw == qd ? 1 : 0;
			while (inq < LOOM_QUEUE_DEPTH + 1 && !g.failed) {
				int q = chance(&g, 70) ? qw : (qw + 1 + (int)rbelow(&g, 2)) % 3;
				if (q == qd && qd != qw)
					q = qw;
				loom_insn in = q == QC ? relay_c(&g).in : token_ls(&g, q == QS);
				if (q == qw && qw != qd && inq == 0)
					in.w[0] |= 1u << tok_pop_bit[tw];
				size_t i = reserve(&g);
				p->insns[i] = in;
				p->roles[i] = LOOM_COSIM_TOKEN;
				if (q == qw && ++inq == LOOM_QUEUE_DEPTH + 1)
					held = i;
			}
			/* the push that would have released it, never fetched */
			int ps = tok_src[t];
			loom_insn rel = ps == QC ? relay_c(&g).in : token_ls(&g, ps == QS);
			rel.w[0] |= 1u << tok_push_bit[t];
			raw_insn(&g, &rel, LOOM_COSIM_TOKEN);
		}
		p->expect_cause = LOOM_ERR_DEADLOCK;
		tail_insns(&g);
		if (!g.failed && !place_code(&g, 0)) {
			p->expect_pc = (uint32_t)loom_cosim_pc(p, held);
			long got = abstract_run(p, 0);
			if (got != (long)held)
				gfail(&g, "bad kind %s: the abstract run stops at %ld, expected %zu", kn, got, held);
		}
	} else if (code_at_end) {
		/* token-only work, a MARK, then the fetch runs off the end of DRAM */
		for (unsigned i = rbelow(&g, 3); i > 0; i--) {
			int q = rbelow(&g, 3);
			loom_insn in = q == QC ? relay_c(&g).in : token_ls(&g, q == QS);
			raw_insn(&g, &in, LOOM_COSIM_TOKEN);
		}
		g.full = 0;
		emit_mark(&g);
		if (!g.failed && !place_code(&g, 1)) {
			p->expect_cause = LOOM_ERR_FETCH_RANGE;
			p->expect_pc = (uint32_t)cfg->dram_bytes;
		}
	} else if (fetch_kind) {
		loom_insn fin = op(LOOM_OP_FINISH);
		emit_ctrl(&g, &fin);
		if (!g.failed && !place_code(&g, 0)) {
			if (!strcmp(kn, "insn-base-range")) {
				static const int64_t off[] = {0, -16, -8, 32, 4096};
				int64_t o = off[rbelow(&g, 5)];
				uint64_t a = (uint64_t)((int64_t)cfg->dram_bytes + o);
				if (chance(&g, 15))
					a = 0xffffffe0u;
				p->insn_addr = a;
				p->expect_cause = LOOM_ERR_FETCH_RANGE;
			} else {
				p->insn_addr += 4u * rrange(&g, 1, 7);
				p->expect_cause = LOOM_ERR_MISALIGNED;
			}
			p->expect_pc = (uint32_t)p->insn_addr;
		}
	} else if (edge) {
		edge_legal(&g, top);
		loom_insn fin = op(LOOM_OP_FINISH);
		emit_ctrl(&g, &fin);
		p->bad = 1;
		p->expect_done = 1;
		p->expect_cause = 0;
		p->expect_mask = 0;
		if (!g.failed && !place_code(&g, 0) && abstract_run(p, 0) != -1)
			gfail(&g, "edge-legal program deadlocks");
	} else {
		gfail(&g, "bad kind %u not handled", kind);
	}
	if (!g.failed) {
		fill_code(p);
		/* the code region holds the program; with a moved INSN_BASE the
		 * instructions stay where they were placed */
	}
	return finish_prog(&g, 0);
}

/* ------------------------------------------------------------ utilities */

void loom_cosim_free(loom_cosim_prog *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nregions; i++)
		free(p->regions[i].init);
	free(p->regions);
	free(p->insns);
	free(p->roles);
	p->regions = NULL;
	p->insns = NULL;
	p->roles = NULL;
	p->nregions = p->ninsns = 0;
}

long loom_cosim_insn_at(const loom_cosim_prog *p, uint64_t pc)
{
	if (pc < p->insn_addr || (pc - p->insn_addr) % 32)
		return -1;
	uint64_t i = (pc - p->insn_addr) / 32;
	return i < p->ninsns ? (long)i : -1;
}

long loom_cosim_region_at(const loom_cosim_prog *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nregions; i++)
		if (addr >= p->regions[i].addr && addr < p->regions[i].addr + p->regions[i].len)
			return (long)i;
	return -1;
}

int loom_cosim_compared(const loom_cosim_region *r, uint32_t off)
{
	if (!r->word_mask)
		return 1;
	return off < LOOM_MARK_BYTES && (r->word_mask >> (off / 4) & 1);
}

struct writer_ctx {
	uint64_t addr;
	int hit;
};

static void writer_cb(void *vc, int space, uint64_t lo, uint64_t hi, int write)
{
	struct writer_ctx *c = vc;
	if (space == DRAM_SPACE && write && c->addr >= lo && c->addr < hi)
		c->hit = 1;
}

long loom_cosim_writer(const loom_cosim_prog *p, uint64_t addr)
{
	/* the configuration only matters for MATMUL footprints, which never
	 * touch DRAM: any valid one will do */
	loom_hwcfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.array_rows = cfg.array_cols = 4;
	for (size_t i = p->ninsns; i-- > 0;) {
		unsigned o = loom_insn_opcode(&p->insns[i]);
		if (o != LOOM_OP_STORE && o != LOOM_OP_MARK)
			continue;
		struct writer_ctx c = {addr, 0};
		footprint(&cfg, &p->insns[i], writer_cb, &c);
		if (c.hit)
			return (long)i;
	}
	return -1;
}

uint64_t loom_cosim_max_cycles(const loom_cosim_prog *p)
{
	uint64_t c = 10 * p->est_cycles;
	return c < 1000000 ? 1000000 : c > 5000000 ? 5000000 : c;
}

const char *loom_cosim_region_kind_name(unsigned kind)
{
	static const char *const n[] = {"code", "input", "output", "mark"};
	return kind < 4 ? n[kind] : "?";
}

const char *loom_cosim_role_name(unsigned role)
{
	static const char *const n[] = {"data", "token", "sync", "ctrl", "bad"};
	return role < 5 ? n[role] : "?";
}

void loom_cosim_dump(const loom_cosim_prog *p, FILE *f)
{
	fprintf(f, "program seed %llu: %zu instructions at 0x%llx, %zu regions, ~%llu cycles (serial estimate)\n",
		(unsigned long long)p->seed, p->ninsns, (unsigned long long)p->insn_addr, p->nregions,
		(unsigned long long)p->est_cycles);
	if (p->bad) {
		if (p->expect_done)
			fprintf(f, "bad program '%s': a legal boundary case, must finish\n", p->what);
		else
			fprintf(f, "bad program '%s': expect %s pc 0x%x info %s\n", p->what, loom_err_name(p->expect_cause),
				p->expect_pc, p->expect_info == LOOM_INFO_NONE ? "0xffff" : loom_field_name(p->expect_info));
	}
	for (size_t i = 0; i < p->nregions; i++) {
		const loom_cosim_region *r = &p->regions[i];
		fprintf(f, "  region %2zu %-6s 0x%08llx..0x%08llx %6u bytes", i, loom_cosim_region_kind_name(r->kind),
			(unsigned long long)r->addr, (unsigned long long)(r->addr + r->len), r->len);
		if (r->word_mask)
			fprintf(f, " words 0x%04x", r->word_mask);
		fprintf(f, "\n");
	}
	char d[256];
	for (size_t i = 0; i < p->ninsns; i++) {
		loom_insn_disasm(&p->insns[i], d, sizeof d);
		fprintf(f, "  %4zu 0x%08llx %-5s %s\n", i, (unsigned long long)loom_cosim_pc(p, i),
			loom_cosim_role_name(p->roles[i]), d);
	}
}
