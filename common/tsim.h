/* tsim.h - the timing of the tensor engine's DMA engines, their DRAM
 * channel and the scratchpad banks, with state, and of whole programs
 * (common/tsim.c, common/tsim_prog.c; part of the one timing model,
 * common/timing.h).
 *
 * loom_tdma follows the load DMA, the store DMA, the instruction fetch and
 * the simulated DRAM (in-order reads, read and write beats sharing
 * dram_bw bytes per cycle) event by event in time order, as the RTL does
 * them cycle by cycle; the compute engines' scratchpad reads and writes,
 * known when they start, are in per-bank calendars that the DMA engines
 * yield to. The C model (cmodel/cmodel.c) keeps one per device;
 * loom_tsim_run one per run of a program, which is how the planners time
 * an emitted layer. */
#ifndef LOOM_COMMON_TSIM_H
#define LOOM_COMMON_TSIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_TDMA_RING 64 /* >= 2 x hwparams.def's maxima of dma_outstanding, dma_wr_outstanding (tsim.c asserts it) */
#define LOOM_TDMA_NEVER UINT64_MAX
#define LOOM_TDMA_BANKS 16

/* a calendar: busy cycles in a bitmap over [lo, lo + nbits) */
typedef struct loom_tchan {
	uint64_t *w;
	uint64_t nbits;          /* a power of two */
	uint64_t lo, hi;         /* cycles < lo are past; cycles >= hi are free */
} loom_tchan;

/* an open or closed read burst of the load walker */
typedef struct loom_tburst {
	int open, co;            /* open; its lines are beat aligned */
	uint64_t next, page;     /* byte after its last line, 4 KiB page of its first */
	uint32_t beats, nb;      /* beats, beats per line */
	uint64_t pads;           /* pad lines the writer writes before it */
	uint64_t close;          /* closed: the cycle the walker closed it */
	int last;                /* closed: the walk ends with it */
} loom_tburst;

/* an instruction a DMA engine holds, its fields decoded: done pulse
 * cycle, NEVER while unknown */
typedef struct loom_theld {
	uint64_t acc, done;
	uint32_t seq;            /* the load's numbering, for its writer's lines */
	uint64_t n[3], s[3];     /* extents and DRAM strides */
	uint64_t a0, mem;        /* DRAM address, SP / ACC line */
	uint32_t n0, src;        /* row bytes; STORE: SOURCE (4: a MARK record) */
	uint64_t res, rstep;     /* STORE SOURCE 3: the residual's first SP line, its step */
	uint32_t pt, pb, pl, pr; /* LOAD: padding */
	int tacc;                /* LOAD: into ACC */
} loom_theld;

/* an item of the load's writer, in order: a pad line (pushed from cycle
 * ready on), a data line (pushed the cycle after its last beat), a marker
 * (an empty instruction: writes nothing); pushed into the output FIFO of
 * two, then written */
typedef struct loom_titem {
	uint64_t ready, push;
	uint64_t line;           /* SP or ACC line */
	uint64_t burst;          /* the burst it ends (flag 1) */
	uint32_t seq;            /* the instruction it ends (flag 2) */
	uint8_t kind;            /* 0 pad, 1 data, 2 marker */
	uint8_t acc;             /* ACC line (no bank) */
	uint8_t flags;
} loom_titem;

/* a read request in the DRAM's queue, in address order */
typedef struct loom_treq {
	uint64_t due;            /* first cycle a beat may be taken */
	uint32_t beats, nb;      /* beats left; beats per line (a load burst) */
	uint32_t k;              /* beats taken */
	int fetch;
} loom_treq;

/* a STORE row fired by the front end: fire, data back (push), address
 * accepted (aw: known once it is the head); kind 0 a row, 1 the last row of its instruction, 2 an
 * instruction of no rows (front: its start) */
#define LOOM_TDMA_SQ 8
typedef struct loom_trow {
	uint64_t fire, push, aw, addr, front;
	uint64_t j;              /* its index (st_nb + sq_n when fired) */
	uint32_t n0;
	int kind;
} loom_trow;

/* a line the vector unit writes from cycle ready on */
typedef struct loom_tvw {
	uint64_t ready, line;
} loom_tvw;

/* the vector unit's instruction (npu_vector's sequencer): its fields; the
 * reads (rs: the state npu_vector is in at cycle rc; plane cb, group of g
 * positions from p0, tap tp, position t; with reuse a pass of taps, a
 * row segment of positions and its reads); the finish of one group at a
 * time (fg positions from dst line fdst, handed over in cycle fh, nready
 * of its last-tap reads issued, ready in rdy[t], fi fired in fire[t]; off
 * from cycle foff, NEVER while lines are left); lines fired (k) and
 * written (nw), the last 8 lines' write cycles */
typedef struct loom_tvec {
	int on, dwc, rs, reuse;
	unsigned op;
	uint64_t planes, P, ow, taps, kw, src, dst, wgt, par, cbin, cbout, sw, sh, dwl, dhl, bstep;
	uint64_t rc, cb, p0, g, tp, t;
	/* DWCONV input reuse: a pass of mc taps from tap tp, its segment
	 * (positions t.. of one output row, sl of them), i reads of it done,
	 * the walker of its reads (one read of column 0 without reuse) */
	uint64_t mc, sl, i;
	loom_dw_seg q;
	uint64_t fg, fdst, fh, nready, fi, foff;
	uint64_t rdy[LOOM_VEC_GROUP], fire[LOOM_VEC_GROUP];
	uint64_t k, nw;
	uint64_t w8[8];
} loom_tvec;

typedef struct loom_tdma {
	loom_timing t;
	int oom;
	int ext;                 /* an engine's done or the fetch's end became known */
	/* the DRAM's credit: cval at the start of cycle ct, the beats taken in ct */
	uint64_t ct;
	int64_t cval;
	int rd_at, wr_at;
	/* read requests in address order; the last beat taken */
	loom_treq *rq;
	size_t rq_cap, rq_head, rq_n;
	uint64_t rd_last;
	/* the DRAM's R register: a load line's last beat taken in rh_t waits
	 * there (rh) until the writer pushes it; the next beat from r_free */
	int rh;
	uint64_t rh_t, r_free;
	uint64_t ar_fetch;       /* a fetch's address went out in this cycle */
	uint64_t fetch_done;     /* the cycle after the pending fetch's last beat (NEVER: not yet) */
	/* scratchpad banks, per cycle: read by the compute engines (act, wgt:
	 * the first priority), read by the store or written by the vector
	 * unit (ahead of the load's writes) */
	uint32_t nbanks;
	loom_tchan sp_hi[LOOM_TDMA_BANKS], sp_mid[LOOM_TDMA_BANKS];
	uint64_t sp_lo;          /* the calendars forget cycles before it */
	/* load engine: held instructions, the walker over the oldest unwalked */
	loom_theld ld[2];
	unsigned ld_n, ld_w;     /* held; the one walked (ld_n: none) */
	uint64_t w_c, w_i3, w_y, w_x, w_pend; /* walker: cycle, position, pending pad lines */
	loom_tburst ob, pb;      /* open burst; closed burst waiting to go out (pb.open) */
	uint64_t ld_walk;        /* cycle the walker can take the next instruction */
	uint64_t ld_ret[LOOM_TDMA_RING]; /* burst k ended in cycle ld_ret + 1 (NEVER: not yet), ring */
	uint64_t ld_nb, ld_ar;   /* bursts issued; last address cycle */
	uint64_t ld_lc;          /* lines of the walked instruction handed to the writer */
	uint32_t ld_seq;
	/* the writer's items in order: [wq_head, +wq_pushed) pushed (at most
	 * 2), then not yet; the head is written at wq_cand or later */
	loom_titem *wq;
	size_t wq_cap, wq_head, wq_n, wq_pushed;
	uint64_t wq_last_push, wq_pop[2], wq_cand;
	/* store engine: held instructions, the front end over the oldest unstarted */
	loom_theld st[2];
	unsigned st_n, st_f;     /* held; the one in the front end (st_n: none) */
	uint64_t f_start, f_i1, f_i2, f_i3, f_fire, f_push; /* front end: start, next row, last fire, push */
	/* rows fired by the front end, oldest first: the head's W beats from
	 * r_pop + 1 (known: popk) */
	loom_trow sq[LOOM_TDMA_SQ];
	unsigned sq_h, sq_n;
	int popk;
	uint64_t r_pop;
	/* the vector unit's line writes to come, in order (ready: the earliest
	 * cycle), the last one's cycle; its instruction's done from its
	 * sequencer (cp_fdone) and once the last line is written (cp_done) */
	loom_tvec vs;
	loom_tvw *vw;
	size_t vw_cap, vw_h, vw_n;
	uint64_t vw_last, cp_fdone, cp_done;
	int w_on;                /* the head row is on W: beats left, cycle of its next beat */
	uint64_t w_left, w_evt;
	uint64_t st_b[LOOM_TDMA_RING];   /* B response cycle of write burst k, ring */
	uint64_t st_pop[LOOM_TDMA_RING]; /* cycle row k left the row FIFO for W, ring */
	uint64_t st_aw[LOOM_TDMA_RING];  /* cycle its address was accepted, ring */
	uint64_t st_nb;          /* write bursts */
	uint64_t st_w;           /* cycle of the last W beat */
	uint64_t st_front;       /* cycle the front end can take the next instruction */
	uint64_t st_lastb;       /* the last B response */
	/* the next cycles of the candidates of loom_tdma_advance's next event
	 * that are not trivial (the vector unit's write, the writer's pad and
	 * R-register pushes, the next read beat, the next burst's address), as
	 * last computed; a bit of dirty (tsim.c's D_*) set by every change of
	 * what one depends on says it must be computed again */
	unsigned dirty;
	uint64_t c_vw, c_pad, c_rh, c_rs, c_ld;
} loom_tdma;

enum { LOOM_TDMA_LOAD = 0, LOOM_TDMA_STORE = 2 };

/* 0, or -1 when out of memory */
int loom_tdma_init(loom_tdma *d, const loom_timing *t);
void loom_tdma_free(loom_tdma *d);
/* the engines idle, nothing held, from cycle now on (START) */
void loom_tdma_idle(loom_tdma *d, uint64_t now);
/* engine (LOOM_TDMA_LOAD or _STORE) accepts in in cycle acc (at most two
 * held; mark: a MARK record for the store engine) */
void loom_tdma_accept(loom_tdma *d, int engine, uint64_t acc, const loom_insn *in, int mark);
/* everything the DMA engines and the DRAM do up to cycle t */
void loom_tdma_advance(loom_tdma *d, uint64_t t);
/* the next cycle loom_tdma_advance has work, NEVER if none */
uint64_t loom_tdma_next(const loom_tdma *d);
/* what happens before cycle t, in order, up to the first event that makes
 * an engine's done cycle or the fetch's end known (the caller may then have
 * something to do before t); returns 1 if it stopped there, 0 if every
 * event before t is done */
int loom_tdma_run(loom_tdma *d, uint64_t t);
/* the oldest held instruction's done pulse cycle (NEVER while not known) */
uint64_t loom_tdma_done(const loom_tdma *d, int engine);
unsigned loom_tdma_held(const loom_tdma *d, int engine);
/* drop the oldest held instruction (after its done) */
void loom_tdma_retire(loom_tdma *d, int engine);
/* an instruction fetch whose address goes out in cycle ar (before a load
 * burst's in the same cycle; call before loom_tdma_advance(d, ar)); its
 * last beat's arrival (r_last) then comes from loom_tdma_fetch_done */
void loom_tdma_fetch(loom_tdma *d, uint64_t ar);
uint64_t loom_tdma_fetch_done(const loom_tdma *d);
/* a compute instruction (MATMUL or the vector unit) accepted in cycle acc:
 * its done pulse cycle (NEVER: known from loom_tdma_cdone once its last
 * write is); its scratchpad reads and writes go into the bank calendars
 * the DMA engines yield to */
uint64_t loom_tdma_compute(loom_tdma *d, uint64_t acc, const loom_insn *in);
uint64_t loom_tdma_cdone(const loom_tdma *d);

/* ---- a whole program --------------------------------------------------- */

/* The RTL's cycles of a program of n instructions (MARK and FINISH
 * included; it ends at FINISH or after the last instruction) started in
 * cycle 0 on idle engines: the return value is its end (FINISH's
 * completion); marks[k] (up to nmarks) the CYCLES counter of the k-th
 * MARK's record. LOOM_TDMA_NEVER when out of memory or the program
 * deadlocks. */
uint64_t loom_tsim_run(const loom_timing *t, const loom_insn *in, size_t n, uint64_t *marks, size_t nmarks);
/* the same program started in cycle start on idle engines (the engines'
 * state as loom_tdma_idle leaves it): its end and marks are the cycles of
 * loom_tsim_run plus start, and the calendars' memory does not depend on
 * start (test_tsim checks both) */
uint64_t loom_tsim_run_at(const loom_timing *t, uint64_t start, const loom_insn *in, size_t n, uint64_t *marks,
			  size_t nmarks);

#ifdef __cplusplus
}
#endif
#endif
