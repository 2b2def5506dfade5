/* test_cosim_gen.c - unit tests of the co-simulation program generator
 * (cosim/gen.c, cosim/cosim.h), checked independently of it:
 *   - the same seed gives the same program (instructions, regions, bytes);
 *   - every instruction of a legal program passes loom_insn_check, the
 *     program ends with its only FINISH, regions are in DRAM and disjoint and
 *     the code region holds the encoded instructions at INSN_BASE;
 *   - race freedom: a happens-before graph is built from queue order, token
 *     matching (k-th push -> k-th pop of each counter) and MARK/FINISH
 *     barriers; every pair of accesses (exact SP lines, ACC lines, DRAM
 *     words, MATMUL im2col and the vector unit's windows included) from
 *     different queues, one a write, must be ordered; SP/ACC lines are read
 *     only after a write that happens before; DRAM is read and written only
 *     inside regions of the right kind;
 *   - the vector unit: no instruction writes SP lines it reads except in
 *     place; over each configuration's seeds every opcode, FUNC, B_MODE and
 *     the listed corner cases (in place, zero lines, SHIFT 0/31, extreme
 *     multipliers, large windows, chaining with the array) appear, and the
 *     vector unit is 10..45% of the compute queue;
 *   - no deadlock: every pop has a push, the graph is acyclic, and an
 *     abstract run of the fetcher with LOOM_QUEUE_DEPTH queues reaches FINISH;
 *   - bad programs: the same abstract machine, with the fetch and decode
 *     checks of docs/ISA.md, stops with the predicted cause, pc and info.
 * Four configurations x 200 seeds (and every bad kind). Prints failures,
 * a summary per configuration, and ends with "N passed, M failed"; exit
 * status 1 on any failure. */
#include "cosim/cosim.h"
#include "loom/hwcfg.h"
#include "loom/isa.h"
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEEDS 200

typedef struct checker {
	const loom_hwcfg *cfg;
	const loom_cosim_prog *p;
	char msg[512];
	int bad;
} checker;

static void cfail(checker *c, const char *fmt, ...)
{
	if (c->bad)
		return;
	c->bad = 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
}

static int queue_of(const loom_insn *in)
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: return 0;
	case LOOM_OP_MATMUL:
	case LOOM_OP_ELTWISE:
	case LOOM_OP_POOL:
	case LOOM_OP_DWCONV:
	case LOOM_OP_LUT: return 1;
	case LOOM_OP_STORE: return 2;
	default: return 3;
	}
}

static int is_vec(const loom_insn *in)
{
	unsigned o = loom_insn_opcode(in);
	return o == LOOM_OP_ELTWISE || o == LOOM_OP_POOL || o == LOOM_OP_DWCONV || o == LOOM_OP_LUT;
}

/* Token counters L->C, C->L, C->S, S->C: source and destination queues and
 * the w0 bits (docs/ISA.md) that push and pop them. */
static const int tsrc[4] = {0, 1, 1, 2}, tdst[4] = {1, 0, 2, 1};
static const unsigned tpush[4] = {11, 10, 11, 10}, tpop[4] = {8, 9, 8, 9};

/* ---- accesses ---- */

enum { SP, ACC, DRAM };

typedef struct acc_t {
	uint8_t space, write;
	uint32_t insn;
	uint64_t unit;
} acc_t;

typedef struct alist {
	acc_t *a;
	size_t n, cap;
} alist;

static void add(alist *l, int space, uint64_t unit, size_t insn, int write)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->a = realloc(l->a, l->cap * sizeof *l->a);
		if (!l->a) {
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	l->a[l->n++] = (acc_t){(uint8_t)space, (uint8_t)write, (uint32_t)insn, unit};
}

static void add_range(alist *l, int space, uint64_t lo, uint64_t n, size_t insn, int write)
{
	for (uint64_t u = lo; u < lo + n; u++)
		add(l, space, u, insn, write);
}

#define G(op, f) loom_insn_get(in, LOOM_F_##op##_##f)

/* SP lines a vector instruction reads (docs/ISA.md "Vector unit"); with
 * inplace_ok, not the ones an in-place ELTWISE (A) or LUT (SRC) rewrites. */
static void vec_reads(const loom_hwcfg *cfg, const loom_insn *in, size_t i, alist *l, int inplace_ok)
{
	uint64_t R = cfg->array_rows;
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_ELTWISE: {
		uint64_t planes = G(ELTWISE, PLANES), pl = G(ELTWISE, PLANE_LINES), bm = G(ELTWISE, B_MODE);
		int skip_a = inplace_ok && G(ELTWISE, DST) == G(ELTWISE, SRC_A);
		for (uint64_t cb = 0; cb < planes && pl; cb++)
			for (uint64_t k = 0; k < pl; k++) {
				if (!skip_a)
					add(l, SP, G(ELTWISE, SRC_A) + cb * pl + k, i, 0);
				add(l, SP, G(ELTWISE, SRC_B) + (bm == 0 ? cb * pl + k : bm == 1 ? cb : 0), i, 0);
			}
		return;
	}
	case LOOM_OP_POOL:
	case LOOM_OP_DWCONV: {
		int dw = loom_insn_opcode(in) == LOOM_OP_DWCONV;
#define W(f) (dw ? G(DWCONV, f) : G(POOL, f))
		uint64_t inw = W(IN_W), inh = W(IN_H), kw = W(KW), kh = W(KH), ncb = W(NCB);
		for (uint64_t cb = 0; cb < ncb; cb++) {
			for (uint64_t oy = 0; oy < W(OUT_H); oy++)
				for (uint64_t ox = 0; ox < W(OUT_W); ox++)
					for (uint64_t ky = 0; ky < kh; ky++)
						for (uint64_t kx = 0; kx < kw; kx++)
							add(l, SP,
							    W(SRC) + cb * inh * inw + (oy * W(SH) + ky * W(DH)) * inw +
								    ox * W(SW) + kx * W(DW),
							    i, 0);
			if (dw) {
				add_range(l, SP, G(DWCONV, WGT) + cb * kh * kw, kh * kw, i, 0);
				add_range(l, SP, G(DWCONV, PARAM) + cb * LOOM_DW_PARAM_LINES, LOOM_DW_PARAM_LINES, i, 0);
			}
		}
#undef W
		return;
	}
	case LOOM_OP_LUT:
		if (!G(LUT, LINES))
			return;
		if (!(inplace_ok && G(LUT, DST) == G(LUT, SRC)))
			add_range(l, SP, G(LUT, SRC), G(LUT, LINES), i, 0);
		add_range(l, SP, G(LUT, TABLE), (LOOM_LUT_ENTRIES + R - 1) / R, i, 0);
		return;
	default:
		return;
	}
}

/* The SP lines [*lo, *lo + *n) a vector instruction writes. */
static void vec_writes(const loom_insn *in, uint64_t *lo, uint64_t *n)
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_ELTWISE:
		*lo = G(ELTWISE, DST);
		*n = (uint64_t)G(ELTWISE, PLANES) * G(ELTWISE, PLANE_LINES);
		return;
	case LOOM_OP_POOL:
		*lo = G(POOL, DST);
		*n = (uint64_t)G(POOL, NCB) * G(POOL, OUT_H) * G(POOL, OUT_W);
		return;
	case LOOM_OP_DWCONV:
		*lo = G(DWCONV, DST);
		*n = (uint64_t)G(DWCONV, NCB) * G(DWCONV, OUT_H) * G(DWCONV, OUT_W);
		return;
	case LOOM_OP_LUT:
		*lo = G(LUT, DST);
		*n = G(LUT, LINES);
		return;
	default:
		*lo = *n = 0;
	}
}

/* Exact accesses of instruction i (straight from the semantics in
 * docs/ISA.md, not from the generator). */
static void accesses(const loom_hwcfg *cfg, const loom_insn *in, size_t i, alist *l)
{
	uint64_t C = cfg->array_cols;
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: {
		uint64_t n1 = G(LOAD, N1), n2 = G(LOAD, N2), n3 = G(LOAD, N3);
		if (!n1 || !n2 || !n3)
			return;
		uint64_t h = G(LOAD, PAD_TOP) + n2 + G(LOAD, PAD_BOTTOM), w = G(LOAD, PAD_LEFT) + n1 + G(LOAD, PAD_RIGHT);
		add_range(l, G(LOAD, TARGET) ? ACC : SP, G(LOAD, MEM_ADDR), n3 * h * w, i, 1);
		for (uint64_t a = 0; a < n3; a++)
			for (uint64_t b = 0; b < n2; b++)
				for (uint64_t c = 0; c < n1; c++) {
					uint64_t src = G(LOAD, DRAM_ADDR) + a * G(LOAD, STRIDE3) + b * G(LOAD, STRIDE2) +
						       c * G(LOAD, STRIDE1);
					add_range(l, DRAM, src / 4, G(LOAD, ROW_WORDS), i, 0);
				}
		return;
	}
	case LOOM_OP_STORE: {
		uint64_t n1 = G(STORE, N1), n2 = G(STORE, N2), n3 = G(STORE, N3);
		if (!n1 || !n2 || !n3)
			return;
		unsigned src = G(STORE, SOURCE);
		uint64_t step = n3;
		if (src == 3) /* requantize + residual: N3 is the residual's line step, one plane */
			n3 = 1;
		add_range(l, src ? ACC : SP, G(STORE, MEM_ADDR), n1 * n2 * n3, i, 0);
		if (src == 2)
			add_range(l, ACC, G(STORE, PARAM_ADDR), 3, i, 0);
		if (src == 3) { /* STRIDE3 is the residual's first SP line */
			add_range(l, ACC, G(STORE, PARAM_ADDR), 4, i, 0);
			for (uint64_t k = 0; k < n1 * n2; k++)
				add_range(l, SP, G(STORE, STRIDE3) + k * step, 1, i, 0);
		}
		for (uint64_t a = 0; a < n3; a++)
			for (uint64_t b = 0; b < n2; b++)
				for (uint64_t c = 0; c < n1; c++) {
					uint64_t dst = G(STORE, DRAM_ADDR) + a * (src == 3 ? 0 : G(STORE, STRIDE3)) +
						       b * G(STORE, STRIDE2) + c * G(STORE, STRIDE1);
					add_range(l, DRAM, dst / 4, G(STORE, ROW_WORDS), i, 1);
				}
		return;
	}
	case LOOM_OP_MATMUL: {
		uint64_t f = 0, ow = G(MATMUL, OUT_W), oh = G(MATMUL, OUT_H), inw = G(MATMUL, IN_W),
			 inh = G(MATMUL, IN_H);
		for (uint64_t cb = 0; cb < G(MATMUL, NCB); cb++)
			for (uint64_t ky = 0; ky < G(MATMUL, KH); ky++)
				for (uint64_t kx = 0; kx < G(MATMUL, KW); kx++, f++) {
					add_range(l, SP, G(MATMUL, WGT_ADDR) + f * C, C, i, 0);
					for (uint64_t oy = 0; oy < oh; oy++)
						for (uint64_t ox = 0; ox < ow; ox++)
							add(l, SP,
							    G(MATMUL, ACT_ADDR) + cb * inh * inw +
								    (oy * G(MATMUL, SH) + ky * G(MATMUL, DH)) * inw +
								    ox * G(MATMUL, SW) + kx * G(MATMUL, DW),
							    i, 0);
				}
		if (G(MATMUL, ACCUMULATE))
			add_range(l, ACC, G(MATMUL, ACC_ADDR), ow * oh, i, 0);
		add_range(l, ACC, G(MATMUL, ACC_ADDR), ow * oh, i, 1);
		return;
	}
	case LOOM_OP_ELTWISE:
	case LOOM_OP_POOL:
	case LOOM_OP_DWCONV:
	case LOOM_OP_LUT: {
		uint64_t lo, n;
		vec_reads(cfg, in, i, l, 0);
		vec_writes(in, &lo, &n);
		add_range(l, SP, lo, n, i, 1);
		return;
	}
	case LOOM_OP_MARK:
		add_range(l, DRAM, G(MARK, DRAM_ADDR) / 4, LOOM_MARK_BYTES / 4, i, 1);
		return;
	default:
		return;
	}
}

/* Lines a vector instruction writes overlap no line it reads, except in
 * place (ELTWISE DST = SRC_A, LUT DST = SRC): anything else is undefined. */
static int vec_overlap(const loom_hwcfg *cfg, const loom_insn *in)
{
	alist l = {0};
	uint64_t lo, n;
	int hit = 0;
	vec_reads(cfg, in, 0, &l, 1);
	vec_writes(in, &lo, &n);
	for (size_t k = 0; k < l.n && !hit; k++)
		hit = l.a[k].unit >= lo && l.a[k].unit < lo + n;
	free(l.a);
	return hit;
}

static int cmp_acc(const void *x, const void *y)
{
	const acc_t *a = x, *b = y;
	if (a->space != b->space)
		return a->space < b->space ? -1 : 1;
	if (a->unit != b->unit)
		return a->unit < b->unit ? -1 : 1;
	if (a->insn != b->insn)
		return a->insn < b->insn ? -1 : 1;
	return (int)a->write - (int)b->write;
}

/* ---- happens-before ---- */

typedef struct hb {
	size_t n, words;
	uint64_t *anc; /* anc[v*words..]: bit u set if u happens before v */
} hb;

static int hb_before(const hb *h, size_t u, size_t v) { return (h->anc[v * h->words + u / 64] >> (u % 64)) & 1; }

/* Build ancestors over the first n instructions; 0 ok, -1 (message) on an
 * unmatched pop or a cycle. */
static int hb_build(checker *c, size_t n, hb *h)
{
	const loom_cosim_prog *p = c->p;
	h->n = n;
	h->words = (n + 63) / 64;
	h->anc = calloc(n * h->words + 1, sizeof *h->anc);
	size_t *indeg = calloc(n + 1, sizeof *indeg), (*edge)[2] = NULL, ne = 0, cap = 0;
	if (!h->anc || !indeg) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
#define EDGE(a, b)                                                                    \
	do {                                                                          \
		if (ne == cap) {                                                      \
			cap = cap ? 2 * cap : 1024;                                   \
			edge = realloc(edge, cap * sizeof *edge);                     \
			if (!edge) {                                                  \
				fprintf(stderr, "out of memory\n");                   \
				exit(2);                                              \
			}                                                             \
		}                                                                     \
		edge[ne][0] = (a);                                                    \
		edge[ne][1] = (b);                                                    \
		ne++;                                                                 \
		indeg[b]++;                                                           \
	} while (0)
	long last[4] = {-1, -1, -1, -1}; /* last instruction of each queue; [3]: last barrier */
	for (size_t i = 0; i < n; i++) {
		int q = queue_of(&p->insns[i]);
		if (q == 3) {
			for (int k = 0; k < 4; k++)
				if (last[k] >= 0)
					EDGE((size_t)last[k], i);
			last[0] = last[1] = last[2] = -1;
			last[3] = (long)i;
			continue;
		}
		if (last[q] >= 0)
			EDGE((size_t)last[q], i);
		else if (last[3] >= 0)
			EDGE((size_t)last[3], i);
		last[q] = (long)i;
	}
	for (int t = 0; t < 4; t++) {
		size_t k = 0; /* pushes seen */
		size_t *push = malloc((n + 1) * sizeof *push), np = 0;
		for (size_t i = 0; i < n; i++)
			if (queue_of(&p->insns[i]) == tsrc[t] && (p->insns[i].w[0] >> tpush[t] & 1))
				push[np++] = i;
		for (size_t i = 0; i < n; i++) {
			if (queue_of(&p->insns[i]) != tdst[t] || !(p->insns[i].w[0] >> tpop[t] & 1))
				continue;
			if (k >= np) {
				cfail(c, "instruction %zu pops token counter %d that is never pushed", i, t);
				free(push);
				free(indeg);
				free(edge);
				return -1;
			}
			EDGE(push[k], i);
			k++;
		}
		free(push);
	}
	/* Kahn's algorithm, accumulating ancestors */
	size_t *order = malloc((n + 1) * sizeof *order), head = 0, tail = 0;
	size_t *first = calloc(n + 1, sizeof *first), *next = malloc((ne + 1) * sizeof *next);
	for (size_t i = 0; i <= n; i++)
		first[i] = (size_t)-1;
	for (size_t e = 0; e < ne; e++) {
		next[e] = first[edge[e][0]];
		first[edge[e][0]] = e;
	}
	for (size_t i = 0; i < n; i++)
		if (!indeg[i])
			order[tail++] = i;
	while (head < tail) {
		size_t u = order[head++];
		for (size_t e = first[u]; e != (size_t)-1; e = next[e]) {
			size_t v = edge[e][1];
			uint64_t *av = &h->anc[v * h->words], *au = &h->anc[u * h->words];
			for (size_t w = 0; w < h->words; w++)
				av[w] |= au[w];
			av[u / 64] |= 1ull << (u % 64);
			if (--indeg[v] == 0)
				order[tail++] = v;
		}
	}
	int rc = 0;
	if (tail != n) {
		cfail(c, "the token graph has a cycle (a deadlock)");
		rc = -1;
	}
	free(order);
	free(first);
	free(next);
	free(indeg);
	free(edge);
	return rc;
#undef EDGE
}

/* ---- region checks ---- */

static long region_of(const loom_cosim_prog *p, uint64_t a, uint64_t n)
{
	for (size_t i = 0; i < p->nregions; i++)
		if (a >= p->regions[i].addr && a + n <= p->regions[i].addr + p->regions[i].len)
			return (long)i;
	return -1;
}

static void check_regions(checker *c)
{
	const loom_cosim_prog *p = c->p;
	for (size_t i = 0; i < p->nregions && !c->bad; i++) {
		const loom_cosim_region *r = &p->regions[i];
		if (r->addr + r->len > c->cfg->dram_bytes)
			cfail(c, "region %zu past the end of DRAM", i);
		for (size_t j = i + 1; j < p->nregions; j++) {
			const loom_cosim_region *s = &p->regions[j];
			if (r->addr < s->addr + s->len && s->addr < r->addr + r->len)
				cfail(c, "regions %zu and %zu overlap", i, j);
		}
	}
}

static void check_code(checker *c)
{
	const loom_cosim_prog *p = c->p;
	long r = region_of(p, p->insn_addr, 32ull * p->ninsns);
	if (r < 0 || p->regions[r].kind != LOOM_COSIM_CODE) {
		cfail(c, "no code region holds the program at 0x%llx", (unsigned long long)p->insn_addr);
		return;
	}
	const uint8_t *b = p->regions[r].init + (p->insn_addr - p->regions[r].addr);
	for (size_t i = 0; i < p->ninsns; i++)
		for (int k = 0; k < 8; k++) {
			const uint8_t *w = b + 32 * i + 4 * k;
			uint32_t v = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
			if (v != p->insns[i].w[k]) {
				cfail(c, "code region word %d of instruction %zu differs from the program", k, i);
				return;
			}
		}
}

/* Race freedom and data validity of instructions [0, n). */
static void check_races(checker *c, size_t n)
{
	const loom_cosim_prog *p = c->p;
	hb h;
	memset(&h, 0, sizeof h);
	if (hb_build(c, n, &h)) {
		free(h.anc);
		return;
	}
	alist l = {0};
	for (size_t i = 0; i < n; i++)
		accesses(c->cfg, &p->insns[i], i, &l);
	if (l.n)
		qsort(l.a, l.n, sizeof *l.a, cmp_acc);
	/* DRAM words must be inside regions of the right kind */
	for (size_t k = 0; k < l.n && !c->bad; k++) {
		const acc_t *a = &l.a[k];
		if (a->space != DRAM)
			continue;
		long r = region_of(p, a->unit * 4, 4);
		int kind = r >= 0 ? p->regions[r].kind : -1;
		int mark = loom_insn_opcode(&p->insns[a->insn]) == LOOM_OP_MARK;
		if (mark ? kind != LOOM_COSIM_MARK
			 : kind != LOOM_COSIM_INPUT && kind != LOOM_COSIM_OUTPUT)
			cfail(c, "instruction %zu %s DRAM 0x%llx outside a%s region", (size_t)a->insn,
			      a->write ? "writes" : "reads", (unsigned long long)(a->unit * 4),
			      mark ? " MARK" : "n input/output");
	}
	for (size_t i = 0; i < p->nregions && !c->bad; i++)
		if (p->regions[i].kind == LOOM_COSIM_MARK && p->regions[i].word_mask) {
			int found = 0;
			for (size_t k = 0; k < n; k++)
				found |= loom_insn_opcode(&p->insns[k]) == LOOM_OP_MARK &&
					 loom_insn_get(&p->insns[k], LOOM_F_MARK_DRAM_ADDR) == p->regions[i].addr &&
					 p->regions[i].len == LOOM_MARK_BYTES;
			if (!found && n == p->ninsns)
				cfail(c, "MARK region %zu is written by no MARK", i);
		}
	/* per unit: conflicting pairs ordered, reads after a write */
	for (size_t s = 0; s < l.n && !c->bad;) {
		size_t e = s;
		while (e < l.n && l.a[e].space == l.a[s].space && l.a[e].unit == l.a[s].unit)
			e++;
		for (size_t x = s; x < e && !c->bad; x++) {
			const acc_t *a = &l.a[x];
			int qa = queue_of(&p->insns[a->insn]);
			if (!a->write && a->space != DRAM) {
				int ok = 0;
				for (size_t y = s; y < e && !ok; y++)
					ok = l.a[y].write && l.a[y].insn != a->insn && hb_before(&h, l.a[y].insn, a->insn);
				if (!ok)
					cfail(c, "instruction %u reads %s line %llu that nothing written before it", a->insn,
					      a->space == SP ? "SP" : "ACC", (unsigned long long)a->unit);
			}
			for (size_t y = x + 1; y < e && !c->bad; y++) {
				const acc_t *b = &l.a[y];
				if (b->insn == a->insn || (!a->write && !b->write))
					continue;
				if (queue_of(&p->insns[b->insn]) == qa)
					continue;
				if (!hb_before(&h, a->insn, b->insn) && !hb_before(&h, b->insn, a->insn))
					cfail(c, "race: instructions %u and %u on %s unit 0x%llx", a->insn, b->insn,
					      a->space == SP ? "SP line" : a->space == ACC ? "ACC line" : "DRAM word",
					      (unsigned long long)a->unit);
			}
		}
		s = e;
	}
	free(l.a);
	free(h.anc);
}

/* ---- abstract machine ---- */

typedef struct outcome {
	uint32_t cause, pc, info;
	int done;
} outcome;

/* The fetcher and the three queues of docs/ISA.md with every started
 * instruction completing at once; checks as the decoder does. */
static void machine(const loom_hwcfg *cfg, const loom_cosim_prog *p, outcome *o, int *off_code)
{
	size_t qb[3][LOOM_QUEUE_DEPTH];
	unsigned qh[3] = {0}, qn[3] = {0};
	uint64_t tok[4] = {0};
	uint64_t pc = p->insn_addr;
	memset(o, 0, sizeof *o);
	o->info = LOOM_INFO_NONE;
	*off_code = 0;
	int held = 0;
	size_t hi = 0;
	for (;;) {
		int progress = 0;
		for (int q = 0; q < 3; q++)
			while (qn[q]) {
				const loom_insn *in = &p->insns[qb[q][qh[q]]];
				int ok = 1;
				for (int t = 0; t < 4; t++)
					if (tdst[t] == q && (in->w[0] >> tpop[t] & 1) && !tok[t])
						ok = 0;
				if (!ok)
					break;
				for (int t = 0; t < 4; t++) {
					if (tdst[t] == q && (in->w[0] >> tpop[t] & 1))
						tok[t]--;
					if (tsrc[t] == q && (in->w[0] >> tpush[t] & 1))
						tok[t]++;
				}
				qh[q] = (qh[q] + 1) % LOOM_QUEUE_DEPTH;
				qn[q]--;
				progress = 1;
			}
		if (!held) {
			if (pc + 32 > cfg->dram_bytes) {
				o->cause = LOOM_ERR_FETCH_RANGE;
				o->pc = (uint32_t)pc;
				return;
			}
			if (pc % 32) {
				o->cause = LOOM_ERR_MISALIGNED;
				o->pc = (uint32_t)pc;
				return;
			}
			long i = loom_cosim_insn_at(p, pc);
			if (i < 0) {
				*off_code = 1;
				return;
			}
			uint32_t f;
			unsigned e = loom_insn_check(cfg, &p->insns[i], &f);
			if (e) {
				o->cause = e;
				o->pc = (uint32_t)pc;
				o->info = f;
				return;
			}
			held = 1;
			hi = (size_t)i;
			progress = 1;
		}
		int q = queue_of(&p->insns[hi]);
		if (q == 3) {
			if (!qn[0] && !qn[1] && !qn[2]) {
				if (loom_insn_opcode(&p->insns[hi]) == LOOM_OP_FINISH) {
					o->done = 1;
					return;
				}
				held = 0;
				pc += 32;
				progress = 1;
			}
		} else if (qn[q] < LOOM_QUEUE_DEPTH) {
			qb[q][(qh[q] + qn[q]) % LOOM_QUEUE_DEPTH] = hi;
			qn[q]++;
			held = 0;
			pc += 32;
			progress = 1;
		}
		if (!progress) {
			o->cause = LOOM_ERR_DEADLOCK;
			o->pc = (uint32_t)pc;
			return;
		}
	}
}

/* ---- program comparisons ---- */

static int same_prog(const loom_cosim_prog *a, const loom_cosim_prog *b)
{
	if (a->ninsns != b->ninsns || a->nregions != b->nregions || a->insn_addr != b->insn_addr ||
	    a->est_cycles != b->est_cycles || a->expect_cause != b->expect_cause || a->expect_pc != b->expect_pc ||
	    a->expect_info != b->expect_info)
		return 0;
	if (memcmp(a->insns, b->insns, a->ninsns * sizeof *a->insns) || memcmp(a->roles, b->roles, a->ninsns))
		return 0;
	for (size_t i = 0; i < a->nregions; i++) {
		const loom_cosim_region *x = &a->regions[i], *y = &b->regions[i];
		if (x->addr != y->addr || x->len != y->len || x->kind != y->kind || x->word_mask != y->word_mask ||
		    memcmp(x->init, y->init, x->len))
			return 0;
	}
	return 1;
}

static void report(const char *cfg, uint64_t seed, int bad, checker *c)
{
	CHECK(!c->bad, "%s %s seed %llu: %s", cfg, bad ? "bad" : "legal", (unsigned long long)seed, c->msg);
}

/* Vector-unit coverage every configuration must reach over its seeds. */
enum {
	V_ELT_ADD, V_ELT_MUL, V_BMODE_LINE, V_BMODE_PLANE, V_BMODE_ONE, V_ELT_INPLACE, V_ELT_EMPTY,
	V_ELT_SHIFT0, V_ELT_SHIFT31, V_ELT_SHIFT_MID, V_ELT_M16_MIN, V_ELT_M16_MAX, V_ELT_M16_NEG,
	V_ELT_MULT_MIN, V_ELT_MULT_NEG, V_ELT_GROUPS, V_ELT_PLANES,
	V_POOL_MAX, V_POOL_AVG, V_POOL_BIGK, V_POOL_BIGS, V_POOL_DIL, V_POOL_NCB,
	V_DW_BIGK, V_DW_STRIDE, V_DW_DIL, V_DW_NCB,
	V_LUT_INPLACE, V_LUT_EMPTY, V_LUT_GROUPS,
	V_CHAIN, V_VEC_TO_MATMUL, V_MATMUL_TO_VEC, V_RELAY,
	V_N
};
static const char *const vfeat_name[V_N] = {
	"ELTWISE ADD", "ELTWISE MUL", "B_MODE line", "B_MODE plane", "B_MODE one", "ELTWISE in place",
	"ELTWISE of zero lines", "ELTWISE SHIFT 0", "ELTWISE SHIFT 31", "ELTWISE SHIFT 1..30",
	"MULT_A/B -32768", "MULT_A/B 32767", "MULT_A/B negative", "ELTWISE MULT INT32_MIN",
	"ELTWISE MULT negative", "PLANE_LINES > 16, not a multiple of 16", "ELTWISE PLANES > 1",
	"POOL MAX", "POOL AVG", "POOL window > 5", "POOL stride > 4", "POOL dilation > 1", "POOL NCB > 1",
	"DWCONV kernel > 7", "DWCONV stride > 1", "DWCONV dilation > 1", "DWCONV NCB > 1",
	"LUT in place", "LUT of zero lines", "LUT LINES > 16, not a multiple of 16",
	"vector op reading a vector op's output", "MATMUL reading a vector op's output",
	"vector op reading lines MATMUL read", "ELTWISE/LUT of zero lines as a relay",
};

struct stats {
	uint64_t insns, progs, mark, sync, token, early, maxins, minins, est;
	uint64_t ops[4];
	uint64_t resadd; /* STORE SOURCE 3 that move rows */
	uint64_t vops[4]; /* ELTWISE POOL DWCONV LUT */
	uint64_t vfeat[V_N];
};

static void vec_features(const loom_hwcfg *cfg, const loom_cosim_prog *p, struct stats *st)
{
	long *lastw = malloc(cfg->sp_lines * sizeof *lastw);
	uint8_t *mmread = calloc(cfg->sp_lines, 1);
	if (!lastw || !mmread) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	for (uint32_t k = 0; k < cfg->sp_lines; k++)
		lastw[k] = -1;
	for (size_t i = 0; i < p->ninsns; i++) {
		const loom_insn *in = &p->insns[i];
		unsigned o = loom_insn_opcode(in);
		if (o == LOOM_OP_ELTWISE) {
			uint32_t pl = G(ELTWISE, PLANE_LINES), planes = G(ELTWISE, PLANES);
			int16_t ma = (int16_t)G(ELTWISE, MULT_A), mb = (int16_t)G(ELTWISE, MULT_B);
			int32_t mult = (int32_t)G(ELTWISE, MULT);
			unsigned sh = G(ELTWISE, SHIFT);
			if (!pl || !planes) {
				st->vfeat[V_ELT_EMPTY]++;
				st->vfeat[V_RELAY] += p->roles[i] != LOOM_COSIM_DATA;
				continue;
			}
			st->vfeat[G(ELTWISE, FUNC) == LOOM_ELT_ADD ? V_ELT_ADD : V_ELT_MUL]++;
			st->vfeat[V_BMODE_LINE + G(ELTWISE, B_MODE)]++;
			st->vfeat[V_ELT_INPLACE] += G(ELTWISE, DST) == G(ELTWISE, SRC_A);
			st->vfeat[sh == 0 ? V_ELT_SHIFT0 : sh == 31 ? V_ELT_SHIFT31 : V_ELT_SHIFT_MID]++;
			st->vfeat[V_ELT_M16_MIN] += ma == -32768 || mb == -32768;
			st->vfeat[V_ELT_M16_MAX] += ma == 32767 || mb == 32767;
			st->vfeat[V_ELT_M16_NEG] += ma < 0 || mb < 0;
			st->vfeat[V_ELT_MULT_MIN] += mult == INT32_MIN;
			st->vfeat[V_ELT_MULT_NEG] += mult < 0;
			st->vfeat[V_ELT_GROUPS] += pl > 16 && pl % 16;
			st->vfeat[V_ELT_PLANES] += planes > 1;
		} else if (o == LOOM_OP_POOL) {
			st->vfeat[G(POOL, FUNC) == LOOM_POOL_MAX ? V_POOL_MAX : V_POOL_AVG]++;
			st->vfeat[V_POOL_BIGK] += G(POOL, KW) > 5 || G(POOL, KH) > 5;
			st->vfeat[V_POOL_BIGS] += G(POOL, SW) > 4 || G(POOL, SH) > 4;
			st->vfeat[V_POOL_DIL] += G(POOL, DW) > 1 || G(POOL, DH) > 1;
			st->vfeat[V_POOL_NCB] += G(POOL, NCB) > 1;
		} else if (o == LOOM_OP_DWCONV) {
			st->vfeat[V_DW_BIGK] += G(DWCONV, KW) > 7 || G(DWCONV, KH) > 7;
			st->vfeat[V_DW_STRIDE] += G(DWCONV, SW) > 1 || G(DWCONV, SH) > 1;
			st->vfeat[V_DW_DIL] += G(DWCONV, DW) > 1 || G(DWCONV, DH) > 1;
			st->vfeat[V_DW_NCB] += G(DWCONV, NCB) > 1;
		} else if (o == LOOM_OP_LUT) {
			uint32_t n = G(LUT, LINES);
			if (!n) {
				st->vfeat[V_LUT_EMPTY]++;
				st->vfeat[V_RELAY] += p->roles[i] != LOOM_COSIM_DATA;
				continue;
			}
			st->vfeat[V_LUT_INPLACE] += G(LUT, DST) == G(LUT, SRC);
			st->vfeat[V_LUT_GROUPS] += n > 16 && n % 16;
		}
		/* data flow through SP between the vector unit and the array */
		alist l = {0};
		accesses(cfg, in, i, &l);
		int chain = 0, tomm = 0, frommm = 0;
		for (size_t k = 0; k < l.n; k++) {
			const acc_t *a = &l.a[k];
			if (a->space != SP || a->write || a->unit >= cfg->sp_lines)
				continue;
			long w = lastw[a->unit];
			int wv = w >= 0 && is_vec(&p->insns[w]);
			chain |= is_vec(in) && wv;
			tomm |= o == LOOM_OP_MATMUL && wv;
			frommm |= is_vec(in) && mmread[a->unit];
		}
		for (size_t k = 0; k < l.n; k++) {
			const acc_t *a = &l.a[k];
			if (a->space == SP && a->unit < cfg->sp_lines) {
				if (a->write) {
					lastw[a->unit] = (long)i;
					mmread[a->unit] = 0;
				} else if (o == LOOM_OP_MATMUL) {
					mmread[a->unit] = 1;
				}
			}
		}
		st->vfeat[V_CHAIN] += chain;
		st->vfeat[V_VEC_TO_MATMUL] += tomm;
		st->vfeat[V_MATMUL_TO_VEC] += frommm;
		free(l.a);
	}
	free(lastw);
	free(mmread);
}

static void check_legal(const loom_hwcfg *cfg, uint64_t seed, struct stats *st)
{
	checker c;
	memset(&c, 0, sizeof c);
	c.cfg = cfg;
	loom_cosim_prog p, q;
	char err[512];
	if (loom_cosim_gen(cfg, seed, &p, err, sizeof err)) {
		cfail(&c, "generator: %s", err);
		report(cfg->name, seed, 0, &c);
		return;
	}
	c.p = &p;
	if (loom_cosim_gen(cfg, seed, &q, err, sizeof err) || !same_prog(&p, &q))
		cfail(&c, "the same seed gives a different program");
	else
		loom_cosim_free(&q);
	if (p.bad || !p.ninsns || loom_insn_opcode(&p.insns[p.ninsns - 1]) != LOOM_OP_FINISH)
		cfail(&c, "a legal program must end with FINISH");
	for (size_t i = 0; i < p.ninsns && !c.bad; i++) {
		uint32_t f;
		unsigned e = loom_insn_check(cfg, &p.insns[i], &f);
		if (e)
			cfail(&c, "instruction %zu fails loom_insn_check: %s (%s)", i, loom_err_name(e), loom_field_name(f));
		if (i + 1 < p.ninsns && loom_insn_opcode(&p.insns[i]) == LOOM_OP_FINISH)
			cfail(&c, "FINISH at %zu before the end", i);
		unsigned o = loom_insn_opcode(&p.insns[i]);
		st->ops[o == LOOM_OP_LOAD ? 0 : o == LOOM_OP_MATMUL ? 1 : o == LOOM_OP_STORE ? 2 : 3]++;
		st->resadd += o == LOOM_OP_STORE && loom_insn_get(&p.insns[i], LOOM_F_STORE_SOURCE) == 3 &&
			      loom_insn_get(&p.insns[i], LOOM_F_STORE_N1) && loom_insn_get(&p.insns[i], LOOM_F_STORE_N2) &&
			      loom_insn_get(&p.insns[i], LOOM_F_STORE_N3);
		if (is_vec(&p.insns[i])) {
			st->vops[o - LOOM_OP_ELTWISE]++;
			if (vec_overlap(cfg, &p.insns[i]))
				cfail(&c, "instruction %zu writes SP lines it reads (not in place)", i);
		}
		st->mark += o == LOOM_OP_MARK;
		st->sync += p.roles[i] == LOOM_COSIM_SYNC;
		st->token += p.roles[i] == LOOM_COSIM_TOKEN;
	}
	check_regions(&c);
	check_code(&c);
	if (!c.bad)
		check_races(&c, p.ninsns);
	if (!c.bad) {
		outcome o;
		int off;
		machine(cfg, &p, &o, &off);
		if (off || !o.done)
			cfail(&c, "the abstract run stops with %s at pc 0x%x%s", loom_err_name(o.cause), o.pc,
			      off ? " (off the code)" : "");
		/* early pops: an instruction whose pop is matched by a later push */
		long pushes[4] = {0}, pops[4] = {0};
		for (size_t i = 0; i < p.ninsns; i++)
			for (int t = 0; t < 4; t++) {
				int q = queue_of(&p.insns[i]);
				if (q == tdst[t] && (p.insns[i].w[0] >> tpop[t] & 1) && ++pops[t] > pushes[t])
					st->early++;
				if (q == tsrc[t] && (p.insns[i].w[0] >> tpush[t] & 1))
					pushes[t]++;
			}
	}
	vec_features(cfg, &p, st);
	st->progs++;
	st->insns += p.ninsns;
	st->est += p.est_cycles;
	if (p.ninsns > st->maxins)
		st->maxins = p.ninsns;
	if (!st->minins || p.ninsns < st->minins)
		st->minins = p.ninsns;
	report(cfg->name, seed, 0, &c);
	loom_cosim_free(&p);
}

static void check_bad(const loom_hwcfg *cfg, uint64_t seed, unsigned *kinds_seen)
{
	checker c;
	memset(&c, 0, sizeof c);
	c.cfg = cfg;
	loom_cosim_prog p, q;
	char err[512];
	if (loom_cosim_gen_bad(cfg, seed, &p, err, sizeof err)) {
		cfail(&c, "generator (kind %s): %s", loom_cosim_bad_name((unsigned)(seed % loom_cosim_bad_kinds())), err);
		report(cfg->name, seed, 1, &c);
		return;
	}
	c.p = &p;
	kinds_seen[seed % loom_cosim_bad_kinds()]++;
	if (loom_cosim_gen_bad(cfg, seed, &q, err, sizeof err) || !same_prog(&p, &q))
		cfail(&c, "the same seed gives a different bad program");
	else
		loom_cosim_free(&q);
	check_regions(&c);
	outcome o;
	int off;
	machine(cfg, &p, &o, &off);
	if (off)
		cfail(&c, "%s: the abstract run leaves the code", p.what);
	else if (p.expect_done) {
		if (!o.done)
			cfail(&c, "%s: expected to finish, stops with %s at 0x%x", p.what, loom_err_name(o.cause), o.pc);
	} else if (o.done || o.cause != p.expect_cause ||
		   ((p.expect_mask & LOOM_COSIM_EXPECT_PC) && o.pc != p.expect_pc) ||
		   ((p.expect_mask & LOOM_COSIM_EXPECT_INFO) && o.info != p.expect_info)) {
		cfail(&c, "%s: predicted %s pc 0x%x info 0x%x, the abstract run gives %s pc 0x%x info 0x%x", p.what,
		      loom_err_name(p.expect_cause), p.expect_pc, p.expect_info, o.done ? "DONE" : loom_err_name(o.cause),
		      o.pc, o.info);
	}
	if (!c.bad && !p.expect_done && p.expect_cause != LOOM_ERR_DEADLOCK && p.expect_cause != LOOM_ERR_FETCH_RANGE &&
	    !(p.expect_cause == LOOM_ERR_MISALIGNED && p.expect_info == LOOM_INFO_NONE)) {
		/* a decode error: that instruction fails loom_insn_check as predicted */
		long i = loom_cosim_insn_at(&p, p.expect_pc);
		uint32_t f;
		if (i < 0 || loom_insn_check(cfg, &p.insns[i], &f) != p.expect_cause || f != p.expect_info)
			cfail(&c, "%s: the instruction at 0x%x does not fail as predicted", p.what, p.expect_pc);
	}
	/* what runs is race-free: everything before the bad part */
	size_t n = p.ninsns;
	for (size_t i = 0; i < p.ninsns; i++)
		if (p.roles[i] == LOOM_COSIM_BAD) {
			n = i;
			break;
		}
	long at = loom_cosim_insn_at(&p, p.expect_pc);
	if (!p.expect_done && at >= 0 && (size_t)at < n)
		n = (size_t)at;
	if (!c.bad && region_of(&p, p.insn_addr & ~31ull, 32) >= 0)
		check_races(&c, n);
	report(cfg->name, seed, 1, &c);
	loom_cosim_free(&p);
}

int main(void)
{
	check_init(CHECK_QUIET);
	static const char *cfgs[] = {"small", "default", "large", "odd"};
	const char *root = loom_root_dir();
	for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
		loom_hwcfg cfg;
		char err[512];
		if (loom_hwcfg_load(&cfg, cfgs[k], root, err, sizeof err)) {
			CHECK_FAIL("config %s: %s", cfgs[k], err);
			continue;
		}
		struct stats st;
		memset(&st, 0, sizeof st);
		unsigned before = check_failed();
		for (uint64_t s = 1; s <= SEEDS; s++)
			check_legal(&cfg, s * 7919 + k, &st);
		unsigned kinds[128] = {0};
		unsigned nk = loom_cosim_bad_kinds();
		if (nk > 128)
			CHECK_FAIL("%u bad kinds, the test counts 128", nk);
		for (uint64_t s = 0; s < 2ull * nk; s++)
			check_bad(&cfg, 1000 + s, kinds);
		for (unsigned i = 0; i < nk && i < 128; i++)
			if (!kinds[i])
				CHECK_FAIL("%s: bad kind %s never generated", cfg.name, loom_cosim_bad_name(i));
		printf("%-8s %s: %llu legal programs, %llu..%llu instructions (avg %llu), %llu LOAD %llu MATMUL %llu STORE "
		       "(%llu SOURCE 3) %llu MARK, %llu sync, %llu token-only, %llu early pops, avg ~%llu cycles; %u bad "
		       "kinds x 2\n",
		       cfg.name, check_failed() == before ? "ok" : "FAILED", (unsigned long long)st.progs,
		       (unsigned long long)st.minins, (unsigned long long)st.maxins,
		       (unsigned long long)(st.progs ? st.insns / st.progs : 0), (unsigned long long)st.ops[0],
		       (unsigned long long)st.ops[1], (unsigned long long)st.ops[2], (unsigned long long)st.resadd,
		       (unsigned long long)st.mark,
		       (unsigned long long)st.sync, (unsigned long long)st.token, (unsigned long long)st.early,
		       (unsigned long long)(st.progs ? st.est / st.progs : 0), nk);
		if (st.resadd < SEEDS / 4)
			CHECK_FAIL("%s: %llu STORE SOURCE 3 (requantize + residual) in %d legal programs", cfg.name,
				   (unsigned long long)st.resadd, SEEDS);
		/* the vector unit: every feature seen, a minority of compute work */
		uint64_t nvec = st.vops[0] + st.vops[1] + st.vops[2] + st.vops[3];
		for (int v = 0; v < V_N; v++)
			if (!st.vfeat[v])
				CHECK_FAIL("%s: no %s in %d legal programs", cfg.name, vfeat_name[v], SEEDS);
		for (int v = 0; v < 4; v++)
			if (!st.vops[v])
				CHECK_FAIL("%s: opcode %s never generated", cfg.name, loom_op_name(LOOM_OP_ELTWISE + v));
		unsigned share = (unsigned)(100 * nvec / (nvec + st.ops[1] ? nvec + st.ops[1] : 1));
		if (share < 10 || share > 45)
			CHECK_FAIL("%s: vector instructions are %u%% of the compute queue (expected 10..45%%)", cfg.name,
				   share);
		printf("%-8s    vector unit: %llu ELTWISE %llu POOL %llu DWCONV %llu LUT (%u%% of compute; %llu of zero "
		       "lines), %llu chained, %llu into MATMUL, %llu in place\n",
		       cfg.name, (unsigned long long)st.vops[0], (unsigned long long)st.vops[1],
		       (unsigned long long)st.vops[2], (unsigned long long)st.vops[3], share,
		       (unsigned long long)(st.vfeat[V_ELT_EMPTY] + st.vfeat[V_LUT_EMPTY]),
		       (unsigned long long)st.vfeat[V_CHAIN], (unsigned long long)st.vfeat[V_VEC_TO_MATMUL],
		       (unsigned long long)(st.vfeat[V_ELT_INPLACE] + st.vfeat[V_LUT_INPLACE]));
	}
	return check_report();
}
