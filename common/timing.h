/* timing.h - the one timing model of Loom (common/timing.c): the cycle cost
 * of every tensor-engine instruction and of every tiled layer, and the
 * control core's cycles per instruction class.
 *
 * Who calls it:
 *   - the C model (cmodel/cmodel.c): the duration of each instruction it
 *     executes (loom_cyc_dma with the beats it moved, loom_insn_cycles for
 *     compute instructions), the ISS's cycles per core instruction;
 *   - the co-simulation generator (cosim/): a program's serial estimate,
 *     which bounds its run;
 *   - the compiler's tile planners (compiler/npu/): the estimate of one
 *     tiling candidate (loom_est_conv, loom_est_vec), which picks the tiling
 *     and goes into the compile report and the job's watchdog;
 *   - loom sweep (later): the analytical answer per layer.
 *
 * Instruction costs are exact integers of the C model. Layer estimates are
 * doubles: averages over tiles, DMA with dma_outstanding bursts in flight
 * (what the RTL adds to the C model's serial DMA), bank sharing; they are
 * estimates, held to the RTL's per-layer cycles by the tests. */
#ifndef LOOM_COMMON_TIMING_H
#define LOOM_COMMON_TIMING_H

#include <stdint.h>

#include "loom/hwcfg.h"
#include "loom/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameters the costs depend on: a configuration's, with the DRAM's
 * latency and bandwidth possibly overridden for one run. */
typedef struct loom_timing {
	uint32_t rows, cols;   /* the array: R x C */
	uint32_t beat;         /* DRAM beat bytes */
	uint32_t lat;          /* DRAM latency, cycles */
	uint32_t bw;           /* DRAM bandwidth, bytes per cycle (>= 1) */
	uint32_t outstanding;  /* load DMA: read bursts in flight */
	uint32_t wr_outstanding; /* store DMA: write bursts waiting for their response */
	uint32_t vec_macs;     /* vector unit: multipliers per lane (DWCONV taps a pass) */
	uint32_t bank_lines;   /* scratchpad lines per bank */
	uint32_t banks;        /* scratchpad banks */
} loom_timing;

/* Constants of the compute engines' durations (accept to done pulse),
 * measured on the RTL: MATMUL's drain after its last activation line
 * beyond R + C, the vector unit's start and end, an empty vector
 * instruction. */
enum { LOOM_MM_TAIL = 0, LOOM_VEC_FIXED = 6, LOOM_VEC_EMPTY = 4 };

/* t from cfg; lat / bw other than 0 override the configuration's. */
void loom_timing_init(loom_timing *t, const loom_hwcfg *cfg, uint32_t lat, uint32_t bw);

/* ---- instructions ------------------------------------------------------ */

/* DRAM beats a row of n bytes at address a touches. */
uint64_t loom_row_beats(const loom_timing *t, uint64_t a, uint64_t n);
/* One DRAM transfer of `beats` beats (a LOAD, STORE, instruction fetch or
 * MARK record): lat + ceil(beats * B / bw), + one cycle per padding line
 * a LOAD writes without reading DRAM. */
uint64_t loom_cyc_dma(const loom_timing *t, uint64_t beats, uint64_t pads);
/* The fetch of one instruction: max(1, 32 / B) beats. */
uint64_t loom_fetch_beats(const loom_timing *t);
/* MATMUL of `folds` folds over P = OUT_H * OUT_W positions, from its
 * accept to its done pulse: the fold sequence of npu_compute (exact), and
 * its closed form for averages (the planners) */
uint64_t loom_cyc_matmul_insn(const loom_timing *t, uint64_t folds, uint64_t P);
double loom_cyc_matmul(const loom_timing *t, double folds, double P);
/* The vector unit over `planes` planes of P output positions, in groups of
 * up to LOOM_VEC_GROUP positions that never span a plane: a group of g
 * costs 1 + taps * (g + w) (w: weight lines read per tap) and the waits
 * for the previous group's finish, a plane per_plane more (DWCONV's
 * parameter lines); exact when no bank is contended. */
double loom_cyc_vec(double planes, double P, double taps, double w, double per_plane);
/* DWCONV's input reuse (ISA 1.3, docs/ISA.md "Vector unit"): one pass of
 * mc taps kx (at most vec_macs) over a segment of s positions of one
 * output row reads the distinct input columns j*sw + m*dw (j < s, m < mc,
 * relative to the segment's first position and the pass's first tap) once
 * each, in increasing order, and folds each into every (position j, tap m)
 * pair it serves. A walker of those reads, as npu_vector's: tap m's next
 * position j[m]; loom_dw_peek gives the next read's column and the taps it
 * serves (bit m, position j[m]; 0 when the segment is done),
 * loom_dw_adv moves past it. */
typedef struct loom_dw_seg {
	uint64_t s, mc, sw, dw, j[LOOM_VEC_MACS_MAX];
} loom_dw_seg;

static inline void loom_dw_init(loom_dw_seg *q, uint64_t s, uint64_t mc, uint64_t sw, uint64_t dw)
{
	/* hwcfg keeps vec_macs within LOOM_VEC_MACS_MAX (the bound is for j only) */
	q->s = s, q->mc = mc < LOOM_VEC_MACS_MAX ? mc : LOOM_VEC_MACS_MAX, q->sw = sw, q->dw = dw;
	for (unsigned m = 0; m < LOOM_VEC_MACS_MAX; m++)
		q->j[m] = 0;
}

static inline unsigned loom_dw_peek(const loom_dw_seg *q, uint64_t *col)
{
	uint64_t c = UINT64_MAX;
	unsigned mask = 0;
	for (unsigned m = 0; m < q->mc; m++) {
		if (q->j[m] == q->s)
			continue;
		uint64_t cm = q->j[m] * q->sw + m * q->dw;
		if (cm < c)
			c = cm, mask = 0;
		if (cm == c)
			mask |= 1u << m;
	}
	*col = c;
	return mask;
}

static inline void loom_dw_adv(loom_dw_seg *q, unsigned mask)
{
	for (unsigned m = 0; m < q->mc; m++)
		q->j[m] += mask >> m & 1;
}

/* the reads of one such pass over one segment */
uint64_t loom_dw_seg_lines(uint64_t s, uint64_t mc, uint64_t sw, uint64_t dw);
/* DWCONV (input reuse): per group and kernel row, passes of up to
 * macs (vec_macs) taps read their mc weight lines and, per output row of the
 * group (a segment of s positions), loom_dw_seg_lines lines; exact when no
 * bank is contended (a loop over one plane's groups, the second plane
 * repeated). */
double loom_cyc_dw(uint64_t macs, uint64_t planes, uint64_t oh, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw,
		   uint64_t dw);
/* The duration of one instruction from its fields, as the C model runs it
 * (LOAD / STORE walk their rows for the beats; an instruction that only
 * moves tokens costs 1). */
uint64_t loom_insn_cycles(const loom_timing *t, const loom_insn *in);

/* ---- layers: the tile planners' estimates --------------------------------- */

/* Cycles to move n rows of row_bytes: one burst per row, at most
 * `outstanding` bursts in flight. */
double loom_est_xfer(const loom_timing *t, double n, double row_bytes, double outstanding);

/* One tiling of a CONV / GEMM layer (compiler/npu/conv_plan.c). */
typedef struct loom_conv_est {
	uint32_t oh, ow;          /* output size */
	uint32_t ih, iw;          /* input size */
	uint32_t ncb, nob, kk;    /* input / output channel blocks (R / C wide), kernel taps */
	int raw;                  /* int32 outputs, no requantization parameters */
	uint32_t tile_ih, tile_iw; /* a tile's input rows and columns, padding included */
	uint32_t ntiles;          /* output tiles */
	uint32_t nk, nky;         /* channel-block chunks, kernel-row chunks per tile */
	uint32_t npass;           /* passes over the output-channel blocks */
	uint32_t nslots;          /* accumulator slots */
	int banks;                /* scratchpad arrangement: 4 as 3 and the two weight regions
				   * in distinct banks too, 3 weights and both input buffers in
				   * distinct banks, 2 buffer 0 with the weights, 1 the buffers
				   * share banks, 0 all packed */
	int wchunk;               /* weights streamed per step rather than resident */
	int chained;              /* one segment (no barrier between passes) */
	uint32_t th, tw;          /* output tile rows and columns */
	uint32_t cin, cout;       /* channels */
	uint32_t in_stride;       /* DRAM bytes per input pixel */
	uint32_t kh, kw, sh, sw;  /* kernel and stride */
	int xpack;                /* packed input lines (overlapping DRAM rows, never one burst) */
} loom_conv_est;
double loom_est_conv(const loom_timing *t, const loom_conv_est *e);
/* A lower bound of loom_est_conv (every step computes at least its
 * MATMULs) that needs neither banks, nslots nor chained: the planners skip
 * a candidate whose bound is already worse than their finalists. */
double loom_est_conv_floor(const loom_timing *t, const loom_conv_est *e);

/* One tiling of a vector-unit layer (compiler/npu/vec_plan.c). */
typedef struct loom_vec_est {
	unsigned opcode;          /* LOOM_OP_POOL, _DWCONV, _ELTWISE or _LUT */
	uint32_t oh, ow, ih, iw;  /* output and input size */
	uint32_t ncb, kk;         /* channel blocks, window taps */
	uint32_t const_lines;     /* DWCONV weights and parameters, LUT table */
	int full_b;               /* ELTWISE reading a whole second image */
	uint32_t tile_ih, tile_iw; /* a tile's input rows and columns */
	uint32_t ntiles, nk;      /* tiles, channel-block chunks */
	int nbuf;                 /* 1 or 2 buffers (double buffering) */
	int inplace;              /* output written over the input */
	int banks;                /* buffers from bank boundaries */
	uint32_t c;               /* channels */
	uint32_t in_stride, out_stride; /* DRAM bytes per pixel */
	uint32_t kw, sw;          /* window width and its stride */
} loom_vec_est;
double loom_est_vec(const loom_timing *t, const loom_vec_est *e);

/* ---- the control core (rtl/npu_cpu.sv, cmodel/rv_iss.c) ------------------ */
/* Cycles per instruction class of the ISS's estimate. */
enum {
	LOOM_CORE_CY_ALU = 1,
	LOOM_CORE_CY_MEM = 2,
	LOOM_CORE_CY_JUMP = 2,
	LOOM_CORE_CY_MUL = 3,
	LOOM_CORE_CY_DIV = 34,
	LOOM_CORE_CY_TRAP = 2,
};

#ifdef __cplusplus
}
#endif
#endif
