/* gen_internal.h - what the files of the co-simulation program generator
 * share; private to cosim/ (the public API is cosim/cosim.h).
 *
 *   gen.c          the PRNG's seeding, program storage, the DRAM arena and
 *                  its regions, program assembly and loom_cosim_gen;
 *   gen_track.c    footprints, SP/ACC line allocation, the tracking of every
 *                  SP line, ACC line and DRAM word, and the token machinery
 *                  that places each instruction race-free (gen_emit*);
 *   gen_tensor.c   LOAD, MATMUL and STORE: data movement, crafted data,
 *                  MATMUL geometry and the tensor-engine blocks;
 *   gen_vec.c      the vector unit (ELTWISE, POOL, DWCONV, LUT);
 *   gen_badinsn.c  the instructions the decoder must reject, one function
 *                  per bad kind, and legal instructions with random fields;
 *   gen_bad.c      bad programs (loom_cosim_gen_bad);
 *   gen_dump.c     a generated program afterwards: lookups, dump, freeing.
 *
 * A function one of these files shares with another is prefixed gen_; the
 * PRNG, the random draws and the instruction field helpers are static
 * inline here. A program is made by the order of its random draws: the same
 * (configuration, seed) gives the same program only as long as no code
 * reorders the calls of rnext, rbelow, rrange, chance and r32. */
#ifndef LOOM_COSIM_GEN_INTERNAL_H
#define LOOM_COSIM_GEN_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "common/timing.h"
#include "cosim/cosim.h"

/* ------------------------------------------------------------------ PRNG */

/* xoshiro256** (seeded by splitmix64 in gen.c) */
typedef struct rng {
	uint64_t s[4];
} rng;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rnext(rng *r)
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

enum { SP_SPACE, ACC_SPACE, DRAM_SPACE };

#define ARENA_BYTES (1u << 20) /* DRAM window a program's data lives in */
#define PAGE_BYTES 4096u       /* DRAM tracking is allocated per page of the window */
#define MAX_INSNS 1500         /* hard cap (code never exceeds 48 KiB) */
#define SOFT_INSNS 420         /* the generator stops adding blocks here */
#define VEC_PCT 20             /* blocks of vector-unit work */

/* The vector unit's opcodes. */
static const unsigned vec_ops[4] = {LOOM_OP_ELTWISE, LOOM_OP_POOL, LOOM_OP_DWCONV, LOOM_OP_LUT};

/* ------------------------------------------------------------ generator */

/* One access of an instruction's footprint (gen_footprint). */
typedef void (*fp_fn)(void *ctx, int space, uint64_t lo, uint64_t hi, int write);

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

/* The first failure's message goes to g->err; the generator then stops. */
void gen_fail(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- random draws and instruction fields ---- */

static inline uint32_t rbelow(gen *g, uint32_t n)
{
	return n ? (uint32_t)(((rnext(&g->r) >> 32) * (uint64_t)n) >> 32) : 0;
}
static inline uint32_t rrange(gen *g, uint32_t lo, uint32_t hi) { return hi <= lo ? lo : lo + rbelow(g, hi - lo + 1); }
static inline int chance(gen *g, unsigned pct) { return rbelow(g, 100) < pct; }
static inline uint32_t r32(gen *g) { return (uint32_t)(rnext(&g->r) >> 32); }
static inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }

static inline void setf(gen *g, loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v))
		gen_fail(g, "generator bug: %s = %u does not fit", loom_field_name(f), v);
}

static inline loom_insn op(unsigned opcode)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = opcode;
	return in;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

/* ---- transfers and tiles ---- */

/* Fill row i of a crafted region: the DRAM bytes a LOAD row reads. */
typedef void (*craft_fn)(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx);

typedef struct xfer {
	int acc;
	uint32_t mem, rw, n[3], pad[4]; /* pad: top, bottom, left, right */
	uint8_t padv;
} xfer;

/* Store lines [mem, mem+count) of src; rw row words; requant params. */
typedef struct stq {
	unsigned src;
	uint32_t mem, count, rw, param, res, rstep; /* res, rstep: SOURCE 3's residual SP line, its step */
	int8_t zp, lo, hi;
} stq;

/* Window geometry of a MATMUL, POOL or DWCONV. */
typedef struct geom {
	uint32_t kw, kh, sw, sh, dw, dh, ncb, ow, oh, inw, inh;
} geom;

/* SP lines [lo, lo+n) an instruction reads: what its destination avoids
 * (docs/ISA.md: written lines may not overlap read lines, except in place). */
typedef struct span {
	uint32_t lo, n;
} span;

/* What a vector instruction wrote: lines [at, at+n) = tile [ncb][h][w]. */
typedef struct vout {
	uint32_t at, n, w, h, ncb;
} vout;

enum { VF_INPLACE = 1, VF_NOSTORE = 2, VF_STORE = 4 };

/* ------------------------------------------------------------ gen.c */

void *gen_grow(void *p, size_t *cap, size_t need, size_t elem);
size_t gen_reserve(gen *g);
trk *gen_dram_trk(gen *g, uint64_t addr);
long gen_region_add(gen *g, unsigned kind, uint64_t addr, uint32_t len);
long gen_region_new(gen *g, unsigned kind, uint32_t len, uint32_t align);
void gen_arena_place(gen *g, int down);
void gen_init(gen *g, const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen);
void gen_prologue(gen *g);
void gen_body(gen *g, uint64_t budget);
int gen_place_code(gen *g, int at_end);
void gen_fill_code(loom_cosim_prog *p);
long gen_abstract_run(const loom_cosim_prog *p, size_t first);
int gen_finish_prog(gen *g, int rc);

/* ------------------------------------------------------------ gen_track.c */

uint32_t gen_lut_lines(const loom_hwcfg *cfg);
void gen_footprint(const loom_hwcfg *cfg, const loom_insn *in, fp_fn fn, void *ctx);
uint32_t gen_line_alloc(gen *g, int acc, uint32_t n);
int gen_op_queue(const loom_insn *in);
size_t gen_tok_pending(const gen *g, int t);
pend gen_sync_insn(gen *g);
pend gen_relay_c(gen *g);
loom_insn gen_token_ls(gen *g, int store);
void gen_emit_drain(gen *g, int q, int t);
void gen_emit(gen *g, pend *p);
pend gen_mkpend(const loom_insn *in, uint8_t role);
void gen_emit_insn(gen *g, const loom_insn *in, uint8_t role);
void gen_emit2(gen *g, pend *K, pend *I);
void gen_emit_ctrl(gen *g, const loom_insn *in);
void gen_emit_mark(gen *g);
void gen_blk_flood(gen *g);
void gen_blk_tokens(gen *g);

/* ------------------------------------------------------------ gen_tensor.c */

void gen_rand_shape(gen *g, uint32_t count, uint32_t n[3]);
int gen_load(gen *g, const xfer *x, int reuse_pct, craft_fn craft, void *cctx);
uint32_t gen_rand_rw_sp(gen *g);
void gen_plane_xfer(gen *g, xfer *x, uint32_t w, uint32_t h, uint32_t planes, int pads);
int gen_store(gen *g, const stq *q, int early_with_k, pend *K);
void gen_craft_params(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx);
void gen_rand_requant(gen *g, stq *q);
void gen_rand_geom(gen *g, geom *m, int gemm, uint64_t max_cycles);
loom_insn gen_mk_matmul(gen *g, const geom *m, uint32_t ncb, uint32_t act, uint32_t wgt, uint32_t acc, int accum);
int gen_load_act(gen *g, const geom *m, uint32_t act, int reuse_pct);
void gen_blk_conv(gen *g);
void gen_blk_pipeline(gen *g);
void gen_blk_copy(gen *g, int readback);
void gen_blk_acc(gen *g);
void gen_blk_indep(gen *g);

/* ------------------------------------------------------------ gen_vec.c */

uint32_t gen_alloc_avoid(gen *g, uint32_t n, const span *s, unsigned ns);
uint8_t gen_rand_zp(gen *g);
void gen_rand_clip(gen *g, uint8_t zp, uint32_t *lo, uint32_t *hi);
uint32_t gen_rand_m16(gen *g);
int gen_load_lines(gen *g, uint32_t at, uint32_t n);
void gen_craft_dwparams(gen *g, uint8_t *row, uint32_t n0, uint64_t rowidx, void *ctx);
loom_insn gen_token_vec(gen *g);
void gen_vec_geom(gen *g, geom *m, int dw);
int gen_vec_emit(gen *g, pend *K, const vout *o, unsigned flags);
int gen_vec_inplace(gen *g, uint32_t at, uint32_t w, uint32_t h, uint32_t ncb, unsigned flags);
void gen_blk_vec(gen *g);

/* ------------------------------------------------------------ gen_badinsn.c */

loom_insn gen_legal_load(gen *g);
loom_insn gen_legal_store(gen *g, unsigned src);
loom_insn gen_legal_matmul(gen *g, geom *m);
loom_insn gen_legal_eltwise(gen *g);
loom_insn gen_legal_pool(gen *g, geom *m, int avg);
loom_insn gen_legal_dwconv(gen *g, geom *m);
loom_insn gen_legal_lut(gen *g);
loom_insn gen_legal_any(gen *g, unsigned opcode);
int gen_bad_insn(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field);

#endif
