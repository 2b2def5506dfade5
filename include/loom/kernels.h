/* kernels.h - program builders of Loom: one int8 layer (conv2d or GEMM) ->
 * a race-free tensor-engine program for any valid configuration, plus the
 * packing of its weights and requantization parameters into DRAM.
 *
 * Data layouts (the caller owns DRAM and picks every address):
 *   input   NHWC int8 [h][w][in_stride bytes], channels 0..cin-1 used
 *   output  NHWC int8 [oh][ow][out_stride bytes] (raw: int32 LE words)
 *   weights conv: int8 [cout][kh][kw][cin]; GEMM: int8 B [k][n] (row-major)
 *   bias, mult, shift: int32 per output channel (TFLite-style: the builder
 *           folds -in_zp * sum(w) into the bias; shift is a right shift)
 * Quantized result (docs/ISA.md STORE):
 *   out = requant(sum over the window of (x - in_zp) * w, bias, mult, shift,
 *                 out_zp, clip_lo, clip_hi), padding contributing x = in_zp.
 * Raw result (raw = 1): out = int32 sum of x * w (padding x = in_zp), no
 * bias, no zero-point correction, no requantization.
 *
 * A built layer ends with a MARK barrier (its record goes to mark_addr), so
 * layers can be appended to one program; loom_prog_finish() closes it. */
#ifndef LOOM_KERNELS_H
#define LOOM_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/hw.h"
#include "loom/hwcfg.h"
#include "loom/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- programs ---- */

typedef struct loom_prog {
	loom_insn *insn;
	size_t n, cap;
} loom_prog;

void loom_prog_init(loom_prog *p);
void loom_prog_free(loom_prog *p);
int loom_prog_add(loom_prog *p, const loom_insn *in);    /* -1: out of memory */
int loom_prog_finish(loom_prog *p);                      /* appends FINISH */
static inline size_t loom_prog_bytes(const loom_prog *p) { return p->n * LOOM_INSN_BYTES; }
/* Writes the program (little-endian words) to DRAM at addr (32-byte aligned). */
int loom_prog_write(loom_hw *hw, const loom_prog *p, uint64_t addr);
void loom_prog_dump(const loom_prog *p, uint64_t addr, FILE *f);

/* Static checks of a program: every instruction passes loom_insn_check;
 * every token pop is matched by an earlier push (in program order, hence no
 * pop waits forever and the fetcher cannot deadlock on a full queue); the
 * four counters are back to zero at every MARK and at FINISH; and every pair
 * of conflicting accesses (SP, ACC, DRAM; one a write) from different queues
 * is ordered by queue order, tokens or MARK barriers. 0 or -1 + message. */
int loom_prog_verify(const loom_hwcfg *cfg, const loom_prog *p, char *err, size_t errlen);

/* ---- layers ---- */

/* Optional planner overrides (tests use them to force corner cases); a zero
 * field leaves the choice to the planner. */
typedef struct loom_conv_hints {
	uint32_t th, tw;   /* output tile rows, columns */
	uint32_t kc;       /* input channel blocks (of R channels) per chunk */
	uint32_t g;        /* output channel blocks (of C channels) per pass */
	int wchunk;        /* 0: planner, 1: force weights resident per pass, 2: streamed per step */
	int barrier;       /* 1: force a MARK barrier between passes */
	uint32_t kyc;      /* kernel rows per chunk (normally all; fewer only when nothing else fits) */
} loom_conv_hints;

typedef struct loom_conv_params {
	uint32_t h, w, cin, cout;
	uint32_t in_stride;   /* bytes per input pixel, multiple of 4, >= cin; 0: cin rounded up to 4 */
	uint32_t out_stride;  /* bytes per output pixel, multiple of 4; 0: cout rounded up to 4
				 (raw: 4 * cout). The last 0..3 bytes past cout (int8) are written. */
	uint32_t kh, kw;      /* 1..15 */
	uint32_t sh, sw;      /* stride 1..15 */
	uint32_t dh, dw;      /* dilation 1..15 */
	uint32_t pad_top, pad_bottom, pad_left, pad_right; /* each < the dilated kernel extent */
	int8_t in_zp;         /* input zero point (= LOAD PAD_VALUE) */
	int8_t out_zp;
	int8_t clip_lo, clip_hi; /* int8 clamp of the output: ReLU lo = out_zp, ReLU6 hi = q(6) */
	int raw;              /* 1: int32 accumulator output (see above) */
	const loom_conv_hints *hints; /* NULL: planner's choice */
} loom_conv_params;

/* Sets the defaults: stride and dilation 1, kernel 1x1, clip -128..127. */
void loom_conv_init(loom_conv_params *p);

typedef struct loom_dram_layout {
	uint32_t in_addr;     /* input, multiple of 4 */
	uint32_t wgt_addr;    /* packed weights (plan.wgt_bytes), multiple of 4 */
	uint32_t param_addr;  /* packed bias/mult/shift (plan.param_bytes), multiple of 4 */
	uint32_t out_addr;    /* output, multiple of 4 */
	uint32_t mark_addr;   /* 64 bytes: MARK record(s) of the layer, multiple of 4 */
	uint32_t mark_id;     /* MARK_ID of the record */
} loom_dram_layout;

/* The planner's decisions and the layer's sizes (informational, except the
 * byte counts the caller needs to place the layer in DRAM). */
typedef struct loom_conv_plan {
	uint32_t oh, ow;          /* output size */
	uint32_t ncb, nob;        /* input channel blocks of R, output channel blocks of C */
	uint32_t in_stride, out_stride;
	uint32_t th, tw, ntiles;  /* output tile and number of tiles */
	uint32_t kc, nk;          /* channel blocks per input chunk, channel chunks */
	uint32_t kyc, nky;        /* kernel rows per chunk, kernel-row chunks (steps per tile: nk * nky) */
	uint32_t g, npass;        /* output channel blocks per pass, passes */
	int wchunk;               /* 1: weights streamed per step (double-buffered) */
	int chained;              /* passes chained by tokens (0: MARK barrier between) */
	int params_all;           /* every block's params resident in ACC at once */
	int banks;                /* SP banks: 3 weights, buffer 0, buffer 1 disjoint; 2 buffer 0
				     shares the weights' banks; 1 the buffers share; 0 all share */
	uint32_t nslots;          /* ACC tile buffers (each th*tw lines) */
	uint32_t nwreg;           /* weight regions: 2 when passes chain (next pass loads ahead) */
	uint32_t wgt_sp[2], wgt_lines; /* SP weight region(s) */
	uint32_t act_sp[2], act_lines; /* SP input tile buffers */
	uint32_t acc_slot0, slot_lines, param_lines;
	uint64_t in_bytes, out_bytes;  /* extents of input and output in DRAM */
	uint64_t wgt_bytes, param_bytes;
	uint64_t macs;            /* layer MACs: oh*ow*cout*cin*kh*kw */
	uint64_t macs_issued;     /* what the MACS counter will count (R*C per streamed line) */
	uint64_t est_cycles;      /* the planner's estimate */
	uint64_t dram_rd_est;     /* bytes the layer's loads move (without instruction fetch) */
	uint32_t insns;           /* instructions emitted (after loom_build_*) */
} loom_conv_plan;

int loom_conv_plan_make(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
			char *err, size_t errlen);

/* Appends the layer's program to prog. plan may be NULL. 0 or -1 + message. */
int loom_build_conv(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_dram_layout *lay,
		    loom_prog *prog, loom_conv_plan *plan, char *err, size_t errlen);

/* Packs weights [cout][kh][kw][cin] and per-channel bias/mult/shift (NULL
 * for raw layers) into wbuf (plan.wgt_bytes) and pbuf (plan.param_bytes). */
int loom_conv_pack(const loom_hwcfg *cfg, const loom_conv_params *p, const int8_t *w, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err,
		   size_t errlen);
/* Packs and writes them to lay->wgt_addr and lay->param_addr. */
int loom_conv_write_consts(loom_hw *hw, const loom_conv_params *p, const loom_dram_layout *lay,
			   const int8_t *w, const int32_t *bias, const int32_t *mult, const int32_t *shift,
			   char *err, size_t errlen);

/* GEMM: out[m][n] = A[m][k] * B[k][n], a 1x1 convolution with h = 1, w = m. */
typedef struct loom_gemm_params {
	uint32_t m, k, n;
	uint32_t a_stride;    /* bytes per row of A, multiple of 4, >= k; 0: k rounded up to 4 */
	uint32_t out_stride;  /* bytes per output row; 0: n rounded up to 4 (raw: 4 * n) */
	int8_t a_zp, out_zp, clip_lo, clip_hi;
	int raw;
	const loom_conv_hints *hints;
} loom_gemm_params;

void loom_gemm_init(loom_gemm_params *g);
void loom_gemm_to_conv(const loom_gemm_params *g, loom_conv_params *c);
int loom_build_gemm(const loom_hwcfg *cfg, const loom_gemm_params *g, const loom_dram_layout *lay,
		    loom_prog *prog, loom_conv_plan *plan, char *err, size_t errlen);
/* b is [k][n]; bias/mult/shift have n entries (NULL for raw). */
int loom_gemm_pack(const loom_hwcfg *cfg, const loom_gemm_params *g, const int8_t *b, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err,
		   size_t errlen);
int loom_gemm_write_consts(loom_hw *hw, const loom_gemm_params *g, const loom_dram_layout *lay,
			   const int8_t *b, const int32_t *bias, const int32_t *mult, const int32_t *shift,
			   char *err, size_t errlen);

/* Stage one layer on hw (gp non-NULL: the GEMM, cp its 1x1-conv form):
 * lay DRAM out from 0x1000 in 64-byte steps (MARK record, input, weights,
 * params, out_guard spare bytes, output, out_guard spare bytes, then the
 * program, 32-byte aligned), build, finish and verify the program, and
 * write the constants, the input and the program. *prog_addr is set once
 * the program is built (so a caller can dump it even when verify fails).
 * 0, or -1 with a message starting "build:", "verify:", "consts:", "dram
 * write:" or "does not fit DRAM" in err. */
int loom_layer_stage(loom_hw *hw, const loom_conv_params *cp, const loom_gemm_params *gp,
		     loom_conv_plan *plan, const int8_t *in, const int8_t *w, const int32_t *bias,
		     const int32_t *mult, const int32_t *shift, uint32_t mark_id, uint32_t out_guard,
		     loom_dram_layout *lay, loom_prog *prog, uint64_t *prog_addr, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
