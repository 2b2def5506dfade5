/* cmodel_internal.h - what the files of the C model share (private to
 * cmodel/): the data path (cm_exec.c: the functional semantics of each
 * tensor-engine instruction, docs/ISA.md; its AVX2 kernels in cm_avx2.c,
 * its AVX-512 ones in cm_avx512.c)
 * and the timing wrapper (cm_timing.c: the DMA model of common/tsim.h run
 * directly, recorded, or replayed from a recording of the same job).
 * cmodel.c, the event model and the registers, calls both, and the DRAM
 * port (cm_port.c) when the SystemC module has set one. */
#ifndef LOOM_CMODEL_INTERNAL_H
#define LOOM_CMODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "loom/cmodel_port.h"
#include "loom/isa.h"
#include "common/timing.h"
#include "common/tsim.h"

/* ------------------------------------------------------------ data path */

/* The memories and the scratch of the data path. The generic kernels are
 * plain C loops straight from docs/ISA.md; with avx2 set, MATMUL, the
 * requantization of STORE and the vector unit's arithmetic run on AVX2
 * (cm_avx2.c), with avx512 also set MATMUL and STORE's requantization on
 * AVX-512 (cm_avx512.c), with the same results, bit for bit. */
#define CM_WCONV 16 /* converted weight blocks kept */

typedef struct cm_dp {
	uint8_t *dram;
	int8_t *sp;
	int32_t *acc;
	uint64_t dram_bytes, sp_lines;
	uint32_t R, C, B;        /* array rows, columns; DRAM beat bytes (a power of two) */
	unsigned bshift;         /* log2(B) */
	int avx2;                /* the AVX2 kernels */
	int avx512;              /* MATMUL on AVX-512 VNNI, STORE's requantization on AVX-512 (cm_avx512.c) */
	int32_t *wt;             /* generic MATMUL: the fold's R x C weights, [r][c] */
	/* SIMD MATMUL scratch (cm_avx2.c, cm_avx512.c; a data path uses one
	 * layout), grown on demand. Weights converted before are found again
	 * by their bytes (a layer's weight blocks are loaded again for each of
	 * its tiles); the activation lines stay converted while they are not
	 * written (cm_sp_written) */
	struct cm_wconv {
		uint64_t nf;             /* folds (0: empty) */
		int8_t *raw;             /* their nf * C lines as they were in SP */
		uint32_t *wq;            /* pairs (AVX2) or quads (VNNI) of rows per column */
		int32_t corr[64];        /* VNNI: per column, -128 x the sum of its weights over the folds */
		uint16_t *kl;            /* per fold: its row pairs with a non-zero weight */
		uint32_t *nk;            /* per fold: how many */
		size_t cap, fcap;        /* folds they have room for */
		uint64_t used;
	} wc[CM_WCONV];
	uint64_t wc_clock;
	void *act;                   /* activation lines converted (int16 for AVX2, u8 + 128 for VNNI), R per line */
	size_t act_cap;
	uint64_t act_l0, act_nl;     /* the lines it holds */
	int act_valid;
	uint64_t *foff;              /* per fold: its first activation element */
	size_t fold_cap;
} cm_dp;

/* the data path's choice: LOOM_CMODEL_SIMD (generic, avx2, avx512, auto)
 * and the host's CPU; CM_SIMD_GENERIC, _AVX2, _AVX512 (which has the AVX2
 * kernels where it has none of its own), -1 (with a message) when a path
 * is asked for on a CPU without it or the value is unknown */
enum { CM_SIMD_GENERIC, CM_SIMD_AVX2, CM_SIMD_AVX512 };
int cm_dp_pick(int force_generic, char *err, size_t errlen);
/* the kernels of path (cm_dp_pick's answer) in d */
void cm_dp_set(cm_dp *d, int path);
void cm_dp_free(cm_dp *d);

/* SP lines [l0, l0 + n) are written: conversions of them are dropped */
void cm_sp_written(cm_dp *d, uint64_t l0, uint64_t n);

/* The functional effect of one instruction, applied when it starts. LOAD
 * returns the DRAM bytes it reads (whole beats), STORE those it writes,
 * a compute instruction its MACs. */
uint64_t cm_load(cm_dp *d, const loom_insn *in);
uint64_t cm_store(cm_dp *d, const loom_insn *in);
uint64_t cm_compute(cm_dp *d, const loom_insn *in);

/* MATMUL's fields */
typedef struct cm_mm {
	uint64_t act, wgt, accp, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh;
	int accumulate;
} cm_mm;

/* a row of requantized STORE values: out[c] = loom_requant(a[c], bias[c],
 * mult[c], shift[c], zp, lo, hi) for c < n */
typedef struct cm_rq {
	const int32_t *bias, *mult, *shift;
	int8_t zp, lo, hi;
} cm_rq;

/* what the SIMD MATMULs share (cm_exec.c). cm_grow: *p holds at least need
 * bytes (64-byte aligned; its contents are lost when it grows), -1 when it
 * cannot. cm_mm_folds: per fold of x its first activation element from
 * ACT_ADDR's line (d->foff), the folds in *nf, the activation lines read in
 * *nl. cm_act_lines: SP lines [l0, l0 + nl) converted by conv (elem bytes
 * per byte) and kept until they are written; NULL when the scratch cannot
 * grow. cm_wconv_get: the entry of x's nf folds' weights found by their
 * bytes (*fresh = 0), else the least recently used one, grown for K x Cp
 * words of wq and K entries of kl per fold, holding them converted by fold
 * (called per fold with ctx; *fresh = 1); NULL when it cannot grow.
 * cm_mm_next: the next up to max output positions of x after it, their
 * first activation lines (from ACT_ADDR's) in po and their indices in pi;
 * how many */
int cm_grow(void **p, size_t *cap, size_t need);
int cm_mm_folds(cm_dp *d, const cm_mm *x, uint64_t *nf, uint64_t *nl);
const void *cm_act_lines(cm_dp *d, uint64_t l0, uint64_t nl, size_t elem,
			 void (*conv)(void *dst, const int8_t *src, size_t n));
typedef void (*cm_fold_fn)(const int8_t *wl, uint32_t R, uint32_t C, uint32_t Cp, uint32_t *wq, uint16_t *kl,
			   uint32_t *nk, void *ctx);
struct cm_wconv *cm_wconv_get(cm_dp *d, const cm_mm *x, uint64_t nf, uint32_t K, uint32_t Cp, cm_fold_fn fold,
			      void *ctx, int *fresh);
typedef struct cm_mm_pos {
	uint64_t p, oy, ox;
} cm_mm_pos;
static inline int cm_mm_next(const cm_mm *x, cm_mm_pos *it, int max, uint64_t *po, uint64_t *pi)
{
	int n = 0;
	for (; n < max && it->p < x->oh * x->ow; n++, it->p++) {
		po[n] = it->oy * x->sh * x->inw + it->ox * x->sw;
		pi[n] = it->p;
		if (++it->ox == x->ow) {
			it->ox = 0;
			it->oy++;
		}
	}
	return n;
}

#if defined(__x86_64__) || defined(__i386__)
#define CM_HAVE_AVX2 1
/* cm_avx2.c: only called when the CPU has AVX2; MATMUL returns -1 when
 * its scratch cannot grow (the generic kernel runs instead) */
int cm_matmul_avx2(cm_dp *d, const cm_mm *x);
void cm_requant_avx2(int8_t *out, const int32_t *a, const cm_rq *q, uint32_t n);
/* ELTWISE over lines [0, nl) of one plane: o = requant(ma*(a-zpa) + mb*(b-zpb)
 * or (a-zpa)*(b-zpb)); b of line i is b0 + i * bstep lines (bstep 0 or 1) */
typedef struct cm_elt {
	int32_t zpa, zpb, ma, mb, mult, shift;
	int8_t zp, lo, hi;
	int mul;
} cm_elt;
/* STORE with requantization: rows of n0 values from the ACC lines at acc on;
 * with e (SOURCE 3, n3 = 1), each row then added to the residual row at res
 * (res + rstep for the next) by e's ELTWISE ADD (loom_eltadd) */
void cm_store_rq_avx2(uint8_t *dram, const int32_t *acc, uint32_t C, const cm_rq *q, uint32_t n0,
		      uint64_t base, uint64_t n1, uint64_t n2, uint64_t n3, uint64_t s1, uint64_t s2,
		      uint64_t s3, const int8_t *res, uint64_t rstep, const cm_elt *e);
void cm_eltwise_avx2(int8_t *sp, uint32_t R, uint64_t a0, uint64_t b0, uint64_t bstep, uint64_t o0, uint64_t nl,
		     const cm_elt *e);
/* POOL (R a multiple of 16): max, or average with requantization */
typedef struct cm_pool {
	uint64_t src, dst, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh;
	int avg;
	int32_t zpi, mult, shift;
	int8_t zp, lo, hi;
} cm_pool;
void cm_pool_avx2(int8_t *sp, uint32_t R, const cm_pool *p);
/* cm_avx512.c: only called when the CPU has AVX-512 (F, BW, VL, VNNI);
 * the same contracts as their AVX2 counterparts */
int cm_matmul_avx512(cm_dp *d, const cm_mm *x);
void cm_store_rq_avx512(uint8_t *dram, const int32_t *acc, uint32_t C, const cm_rq *q, uint32_t n0,
			uint64_t base, uint64_t n1, uint64_t n2, uint64_t n3, uint64_t s1, uint64_t s2,
			uint64_t s3, const int8_t *res, uint64_t rstep, const cm_elt *e);
#else
#define CM_HAVE_AVX2 0
#endif

/* little-endian words of DRAM and SP bytes (cmodel.c, cm_exec.c) */
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* ------------------------------------------------------------ timing */

/* One input to the DMA model in its order, times relative to the job's
 * START (cm_timing.c keeps a job's inputs and the cycles tsim answered). */
typedef struct cm_tin {
	uint64_t t;              /* the cycle of the call */
	uint64_t cur;            /* events done through this cycle before it (+1) */
	uint64_t res;            /* its done pulse, the fetch's end (NEVER: not known) */
	uint32_t fi;             /* the fetched instruction it is */
	uint8_t op;              /* enum cm_tin_op */
} cm_tin;

typedef struct cm_trec cm_trec;

/* The C model's timing: common/tsim.h's loom_tdma run directly, or, for a
 * job that ran before from the same state (the memo), answered from its
 * recording (cm_timing.c's top comment says when and why that is exact). */
typedef struct cm_tm {
	loom_tdma td;
	int memo;                /* memoize jobs */
	int mode;                /* CM_TM_DIRECT, _RECORD, _REPLAY */
	int stale;               /* td lags behind: the last job was replayed */
	uint64_t t0;             /* the job's START */
	uint64_t cur;            /* tsim has done its events through this cycle */
	cm_trec *rec;            /* recording or replaying */
	size_t k;                /* replaying: the next input */
	size_t fifo[3][2];       /* per DMA engine (0 load, 2 store): its held inputs */
	unsigned nfifo[3];
	size_t last_fetch, last_comp;
	cm_trec *src;            /* stale: the replayed job td would have run */
	uint64_t src_t0;
	size_t src_n;
	uint64_t src_cur;
	cm_trec **tab;           /* the memo, most recently used last */
	size_t ntab;
	uint64_t bytes;          /* the memo's size */
	/* counts for tests and benchmarks */
	uint64_t n_replayed, n_recorded, n_direct, n_rebuilt;
} cm_tm;

enum { CM_TM_DIRECT, CM_TM_RECORD, CM_TM_REPLAY };

int cm_tm_init(cm_tm *x, const loom_timing *t, int memo);
void cm_tm_free(cm_tm *x);
/* START at now; dram holds the program at insn_base */
void cm_tm_start(cm_tm *x, uint64_t now, uint32_t insn_base, const loom_windows *win, const uint8_t *dram,
		 uint64_t dram_bytes);
void cm_tm_end(cm_tm *x);                  /* the run ended (DONE or ERROR) */
void cm_tm_abort(cm_tm *x, uint64_t now);  /* CTRL.ABORT while busy */
/* the fetch of in at pc, its address out at now: its index for accept */
uint32_t cm_tm_fetch(cm_tm *x, uint64_t now, uint32_t pc, const loom_insn *in);
/* the decoder's verdict on fetch fi: 1 when a replay knows it (it depends
 * only on the bytes, the windows and the configuration, all the
 * recording's), else 0; a recording keeps the verdict it is told */
int cm_tm_checked(const cm_tm *x, uint32_t fi, unsigned *cause, uint32_t *field);
void cm_tm_check_result(cm_tm *x, uint32_t fi, unsigned cause, uint32_t field);
void cm_tm_accept(cm_tm *x, int engine, uint64_t now, const loom_insn *in, uint32_t fi, int mark);
uint64_t cm_tm_compute(cm_tm *x, uint64_t now, const loom_insn *in, uint32_t fi);
void cm_tm_retire(cm_tm *x, int engine, uint64_t now);
void cm_tm_advance(cm_tm *x, uint64_t t);
int cm_tm_run(cm_tm *x, uint64_t t);
uint64_t cm_tm_next(cm_tm *x);
uint64_t cm_tm_done(cm_tm *x, int engine);
uint64_t cm_tm_fetch_done(cm_tm *x);
uint64_t cm_tm_cdone(cm_tm *x);

/* ------------------------------------------------------------ DRAM port */

/* one kind of transfer through the port (loom_cmodel_set_port): who, read
 * or write, the model's cycle, the beat (reads cover whole beats); port
 * NULL: no port (only the error range is looked at). [err_lo, err_hi): the
 * injected bus-error range (loom_hw_opts.bus_err_*), rounded out to whole
 * beats; a transfer that meets it, or one the port answers with non-zero,
 * is a bus error (docs/ISA.md, BUS_ERROR) */
typedef struct cm_port_xfer {
	const loom_cmodel_port *port;
	unsigned kind;
	int write;
	uint64_t cycle;
	uint32_t beat;
	uint64_t err_lo, err_hi;
} cm_port_xfer;

/* the rows of a LOAD or a STORE: n1 x n2 x n3 rows of n0 bytes at
 * base + i1 * s1 + i2 * s2 + i3 * s3 */
typedef struct cm_rows {
	uint64_t base, n0, n1, n2, n3, s1, s2, s3;
} cm_rows;

/* the rows through the port (reads before, writes after the data path);
 * every transfer is made, 1 if any of them was a bus error, else 0 */
int cm_port_rows(const cm_port_xfer *x, uint8_t *dram, uint64_t dram_bytes, const cm_rows *r);
/* n bytes at a through the port; 1 on a bus error, else 0 */
int cm_port_span(const cm_port_xfer *x, uint8_t *dram, uint64_t dram_bytes, uint64_t a, uint64_t n);

#endif
