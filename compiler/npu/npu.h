/* npu.h - the NPU back end of loom compile: one int8 layer (conv2d or GEMM,
 * or a vector-unit layer: pooling, depthwise conv, elementwise, LUT) -> a
 * race-free tensor-engine program for any valid configuration, plus the
 * packing of its weights and requantization parameters into DRAM.
 *
 * Files: prog.c (programs), verify.c (loom_prog_verify), conv_plan.c and
 * vec_plan.c (the tile planners, costs from common/timing.c), memo.c (a
 * memo of plans for a compile), conv_emit.c
 * and vec_emit.c (instruction emission, packing), builder.c (what they share),
 * quant.c (requantization multipliers).
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
#ifndef LOOM_COMPILER_NPU_H
#define LOOM_COMPILER_NPU_H

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
/* The cycles of one layer's n instructions (ending with its MARK) as the
 * RTL runs them (the timing model, common/tsim.h): from the record of the
 * MARK before it (after_mark; the layer's MARK-to-MARK cycles in a job) or
 * from the job's START to its last MARK's record. 0 if the instructions
 * have no MARK or do not run to it. */
uint64_t loom_prog_layer_cycles(const loom_hwcfg *cfg, const loom_insn *in, size_t n, int after_mark);

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
	int rated;         /* 1: the closed form's best, not timed by tsim; its rating is the estimate
			      (loom sweep's fast answer) */
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
	/* 1: pack the kernel window into the reduction where the geometry
	 * allows (loom_conv_xpack): each SP line then carries R / in_stride
	 * consecutive pixels, so a layer of few input channels (an image stem)
	 * fills the array's rows. Same results; the compiler sets it when the
	 * plan is faster. */
	int xpack;
	/* 1: a residual addition fused into the output STORE (STORE SOURCE 3):
	 * out = eltadd(res_add, requantized conv output, residual byte), the
	 * residual an int8 tensor of the output's shape and layout at
	 * loom_dram_layout.res_addr. Needs array_cols <= array_rows (a store
	 * row must fit an SP line) and not raw. */
	int res;
	loom_eltadd_param res_add; /* A = the conv output (its zero point: out_zp), B = the residual */
	const loom_conv_hints *hints; /* NULL: planner's choice */
} loom_conv_params;

/* The pixels per SP line a layer of these parameters packs (xpack set):
 * 0 when it does not qualify: no horizontal padding, dilation 1 across,
 * a kernel at least 2 wide, one channel block, in_stride dividing R into
 * T >= 2 pixels with T a multiple of the horizontal stride, and no
 * vertical padding when the last row's last lines reach past the row. */
uint32_t loom_conv_xpack(const loom_hwcfg *cfg, const loom_conv_params *p);

/* Sets the defaults: stride and dilation 1, kernel 1x1, clip -128..127. */
void loom_conv_init(loom_conv_params *p);

typedef struct loom_dram_layout {
	uint32_t in_addr;     /* input, multiple of 4 */
	uint32_t wgt_addr;    /* packed weights (plan.wgt_bytes), multiple of 4 */
	uint32_t param_addr;  /* packed bias/mult/shift (plan.param_bytes), multiple of 4 */
	uint32_t out_addr;    /* output, multiple of 4 */
	uint32_t mark_addr;   /* 64 bytes: MARK record(s) of the layer, multiple of 4 */
	uint32_t mark_id;     /* MARK_ID of the record */
	uint32_t res_addr;    /* loom_conv_params.res: the residual, laid out as the output, multiple of 4 */
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
	int banks;                /* SP banks: 4 both weight regions, buffer 0, buffer 1 disjoint;
				     3 weights, buffer 0, buffer 1 disjoint; 2 buffer 0 shares the
				     weights' banks; 1 the buffers share; 0 all share */
	uint32_t nslots;          /* ACC tile buffers (each th*tw lines) */
	uint32_t nwreg;           /* weight regions: 2 when passes chain (next pass loads ahead) */
	uint32_t wgt_sp[2], wgt_lines; /* SP weight region(s) */
	uint32_t act_sp[2], act_lines; /* SP input tile buffers */
	uint32_t acc_slot0, slot_lines, param_lines;
	uint32_t res_sp, nres;    /* res: SP residual regions of g*slot_lines lines, tile T in region T % nres */
	uint64_t in_bytes, out_bytes;  /* extents of input and output in DRAM */
	uint64_t wgt_bytes, param_bytes;
	uint64_t macs;            /* layer MACs: oh*ow*cout*cin*kh*kw */
	uint64_t macs_issued;     /* what the MACS counter will count (R*C per streamed line) */
	uint64_t est_cycles;      /* the planner's estimate: its program timed from the MARK before it */
	uint64_t est_first;       /* the same for the first layer of a job: from the job's START
				     (0 from loom_plan_memo_conv: loom_conv_plan_first) */
	uint64_t dram_rd_est;     /* bytes the layer's loads move (without instruction fetch) */
	uint64_t dram_wr_est;     /* bytes the layer's stores write */
	uint32_t insns;           /* instructions emitted (after loom_build_*) */
} loom_conv_plan;

int loom_conv_plan_make(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
			char *err, size_t errlen);
/* The same for n configurations of one array size at once (loom sweep):
 * plans[k], rc[k] = 0, or -1 when configuration k has no tiling (err: the
 * first such message; the call returns -1 when any has none). Each gets
 * exactly the plan loom_conv_plan_make gives it alone; the search over
 * tilings is shared, and configurations with the same DRAM timing share
 * every evaluation of the timing model with the same inputs. */
int loom_conv_plan_make_n(const loom_hwcfg *const *cfgs, int n, const loom_conv_params *p, loom_conv_plan *plans,
			  int *rc, char *err, size_t errlen);
/* The est_first of a plan made of these parameters (loom_conv_plan_make
 * sets it; loom_plan_memo_conv leaves it 0): the same number. */
uint64_t loom_conv_plan_first(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_conv_plan *plan);
/* Scratchpad lines the plan occupies: its weight region(s) and both input
 * buffers (the compile report's and loom sweep's SP use). */
uint64_t loom_conv_plan_sp_lines(const loom_conv_plan *plan);

/* Appends the layer's program to prog. plan may be NULL. 0 or -1 + message. */
int loom_build_conv(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_dram_layout *lay,
		    loom_prog *prog, loom_conv_plan *plan, char *err, size_t errlen);
/* The same for a plan loom_conv_plan_make made of these parameters (no
 * planning again; a plan of other parameters is made again). */
int loom_emit_conv(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
		   const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen);

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
int loom_emit_gemm(const loom_hwcfg *cfg, const loom_gemm_params *g, loom_conv_plan *plan,
		   const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen);
/* b is [k][n]; bias/mult/shift have n entries (NULL for raw). */
int loom_gemm_pack(const loom_hwcfg *cfg, const loom_gemm_params *g, const int8_t *b, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err,
		   size_t errlen);
int loom_gemm_write_consts(loom_hw *hw, const loom_gemm_params *g, const loom_dram_layout *lay,
			   const int8_t *b, const int32_t *bias, const int32_t *mult, const int32_t *shift,
			   char *err, size_t errlen);

/* Stage one layer on hw (gp non-NULL: the GEMM, cp its 1x1-conv form):
 * lay DRAM out from 0x1000 in 64-byte steps (MARK record, input, weights,
 * params, out_guard spare bytes, output, out_guard spare bytes, with
 * cp->res the residual (its bytes are the caller's to write at
 * lay->res_addr), then the program, 32-byte aligned), build, finish and
 * verify the program, and
 * write the constants, the input and the program. *prog_addr is set once
 * the program is built (so a caller can dump it even when verify fails).
 * 0, or -1 with a message starting "build:", "verify:", "consts:", "dram
 * write:" or "does not fit DRAM" in err. */
int loom_layer_stage(loom_hw *hw, const loom_conv_params *cp, const loom_gemm_params *gp,
		     loom_conv_plan *plan, const int8_t *in, const int8_t *w, const int32_t *bias,
		     const int32_t *mult, const int32_t *shift, uint32_t mark_id, uint32_t out_guard,
		     loom_dram_layout *lay, loom_prog *prog, uint64_t *prog_addr, char *err, size_t errlen);

/* ---- vector-unit layers: pooling, depthwise conv, elementwise, LUT ----
 *
 * One int8 NHWC tensor (one image) in, one out, run on the vector unit
 * (docs/ISA.md "Vector unit"). Channels are processed in blocks of R =
 * array_rows (lane r of an SP line = channel cb*R + r); a tensor's last
 * block may be narrower (its bytes past c, up to c rounded up to 4, are
 * written, value unspecified, as for conv). Layer results (x, a, b inputs,
 * every sum exact):
 *   POOL MAX  out = clamp(max over the window of x, clip_lo, clip_hi),
 *             padding contributing x = -128
 *   POOL AVG  out = requant(sum over the window of (x - in_zp), 0, mult, shift,
 *                           out_zp, clip_lo, clip_hi), padding contributing
 *             x = in_zp (count_include_pad: the divisor kh*kw is folded
 *             into mult/shift by the caller, see loom_quant_mult)
 *   DWCONV    out[c] = requant(sum over the window of (x[c] - in_zp) * w[ky][kx][c],
 *                              bias[c], mult[c], shift[c], out_zp, clip_lo, clip_hi),
 *             padding contributing x = in_zp; weights [kh][kw][c] (TFLite order)
 *   ELTWISE   ADD: out = requant(mult_a*(a - in_zp) + mult_b*(b - in2_zp), 0, mult, shift, ...)
 *             MUL: out = requant((a - in_zp) * (b - in2_zp), 0, mult, shift, ...)
 *             b: a tensor of a's shape (bcast LOOM_BCAST_NONE) or one value
 *             per channel, c bytes (LOOM_BCAST_CHANNEL, squeeze-excitation)
 *   LUT       out = lut[x + 128]
 * (requant is loom_requant: docs/ISA.md STORE.) ELTWISE and LUT have no
 * window: the kernel, stride, dilation and padding fields are ignored. */

enum loom_vec_kind { LOOM_VEC_POOL = 0, LOOM_VEC_DWCONV = 1, LOOM_VEC_ELTWISE = 2, LOOM_VEC_LUT = 3 };
enum { LOOM_BCAST_NONE = 0, LOOM_BCAST_CHANNEL = 1 };

/* Planner overrides for tests; zero fields leave the choice to the planner. */
typedef struct loom_vec_hints {
	uint32_t th, tw;   /* output tile rows, columns */
	uint32_t kc;       /* channel blocks per step */
	int nbuf;          /* 1: one SP buffer set (no overlap), 2: double-buffered */
	int inplace;       /* ELTWISE, LUT: 1 output to its own SP buffer, 2 written in place over the input */
	int rated;         /* 1: the closed form's best, not timed (as loom_conv_hints.rated) */
} loom_vec_hints;

typedef struct loom_vec_params {
	int kind;             /* enum loom_vec_kind */
	uint32_t h, w, c;
	uint32_t in_stride;   /* bytes per input pixel (ELTWISE: of a), multiple of 4, >= c; 0: c rounded up to 4 */
	uint32_t in2_stride;  /* ELTWISE, bcast NONE: bytes per pixel of b; 0: c rounded up to 4 */
	uint32_t out_stride;  /* bytes per output pixel; 0: c rounded up to 4 */
	uint32_t kh, kw;      /* window: POOL 1..255, DWCONV 1..15 */
	uint32_t sh, sw;      /* stride: POOL 1..255, DWCONV 1..15 */
	uint32_t dh, dw;      /* dilation 1..15 */
	uint32_t pad_top, pad_bottom, pad_left, pad_right; /* each < the dilated window extent */
	int func;             /* POOL: LOOM_POOL_MAX / LOOM_POOL_AVG; ELTWISE: LOOM_ELT_ADD / LOOM_ELT_MUL */
	int bcast;            /* ELTWISE: LOOM_BCAST_* */
	int8_t in_zp;         /* POOL AVG, DWCONV, ELTWISE (a) */
	int8_t in2_zp;        /* ELTWISE (b) */
	int8_t out_zp;        /* POOL AVG, DWCONV, ELTWISE */
	int8_t clip_lo, clip_hi;
	int32_t mult, shift;  /* POOL AVG, ELTWISE: output multiplier, right shift 0..31 */
	int32_t mult_a, mult_b; /* ELTWISE ADD: int16 input multipliers */
	uint32_t in_align, out_align; /* the input's, output's DRAM address mod 64 when known (a channel
				       * slice): where the planners time candidate programs; timing only */
	/* ELTWISE of same-shape operands, LUT: 1 when the tensors hold nothing
	 * between their pixels (channel stride = c rounded up to 4, every
	 * operand): the planner may then see them as flat bytes, lines of R
	 * consecutive bytes with every lane under the same parameters, whose
	 * LOADs and STOREs move contiguous rows (long DRAM bursts) - when that
	 * plan is faster (loom_vec_plan.flat) */
	int flat;
	const loom_vec_hints *hints;
} loom_vec_params;

/* Defaults: the given kind, window/stride/dilation 1, clip -128..127. */
void loom_vec_init(loom_vec_params *p, int kind);

typedef struct loom_vec_layout {
	uint32_t in_addr;     /* input (ELTWISE: a), multiple of 4 */
	uint32_t in2_addr;    /* ELTWISE: b, multiple of 4 */
	uint32_t const_addr;  /* DWCONV weights + params, LUT table (plan.const_bytes), multiple of 4 */
	uint32_t out_addr;    /* output, multiple of 4 */
	uint32_t mark_addr;   /* 64 bytes: the layer's MARK record */
	uint32_t mark_id;
} loom_vec_layout;

/* Program shape: the output is cut into tiles of th x tw pixels and the
 * channels into chunks of kc blocks; a step (tile, chunk) LOADs its input
 * (padding included) into SP buffer s % nbuf, runs one vector instruction
 * and STOREs its output. Constants (DWCONV weights and parameter blocks,
 * the LUT table, ELTWISE per-channel b) stay resident in SP. */
typedef struct loom_vec_plan {
	uint32_t oh, ow, ncb;
	uint32_t in_stride, in2_stride, out_stride;
	uint32_t th, tw, ntiles;
	uint32_t kc, nk, nsteps;
	int nbuf, inplace;
	int banks;                /* 1: every buffer in banks of its own */
	uint32_t in_sp[2], in_lines;   /* input buffers (ELTWISE: a tile, then b tile) */
	uint32_t out_sp[2], out_lines; /* output buffers (in place: = in_sp) */
	uint32_t const_sp, const_lines;
	uint64_t in_bytes, in2_bytes, out_bytes, const_bytes; /* DRAM extents */
	uint64_t est_cycles;      /* the planner's estimate: its program timed from the MARK before it */
	uint64_t est_first;       /* the same for the first layer of a job: from the job's START
				     (0 from loom_plan_memo_vec: loom_vec_plan_first) */
	uint64_t dram_rd_est;     /* bytes the layer's loads move */
	uint64_t dram_wr_est;     /* bytes the layer's stores write */
	uint32_t insns;
	int flat;                 /* the plan of the flat view (loom_vec_params.flat): h, w, c describe it */
} loom_vec_plan;

int loom_vec_plan_make(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan, char *err,
		       size_t errlen);
/* The est_first of a plan made of these parameters (as loom_conv_plan_first). */
uint64_t loom_vec_plan_first(const loom_hwcfg *cfg, const loom_vec_params *p, const loom_vec_plan *plan);
/* Scratchpad lines the plan occupies: its buffer sets and the constants. */
uint64_t loom_vec_plan_sp_lines(const loom_vec_plan *plan);
/* Appends the layer's program (ending with a MARK) to prog. plan may be NULL. */
int loom_build_vec(const loom_hwcfg *cfg, const loom_vec_params *p, const loom_vec_layout *lay, loom_prog *prog,
		   loom_vec_plan *plan, char *err, size_t errlen);
/* The same for a plan loom_vec_plan_make made of these parameters. */
int loom_emit_vec(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan, const loom_vec_layout *lay,
		  loom_prog *prog, char *err, size_t errlen);
/* Packs the constants into buf (plan.const_bytes): DWCONV w [kh][kw][c],
 * bias/mult/shift [c]; LUT lut[256] (entry x + 128). Unused ones may be NULL. */
int loom_vec_pack(const loom_hwcfg *cfg, const loom_vec_params *p, const int8_t *w, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, const int8_t *lut, uint8_t *buf, char *err,
		  size_t errlen);
/* One channel's DWCONV constants read back from buf as loom_vec_pack wrote
 * them: the weight of tap (ky * kw + kx), the bias, mult and shift. 0, or
 * -1 (not a DWCONV, the channel or tap outside the layer's). */
int loom_vec_unpack_dw(const loom_hwcfg *cfg, const loom_vec_params *p, const uint8_t *buf, uint32_t ch,
		       uint32_t tap, int8_t *w, int32_t *bias, int32_t *mult, int32_t *shift, char *err,
		       size_t errlen);
/* Stage a vector layer on hw like loom_layer_stage: DRAM from 0x1000 in
 * 64-byte steps (MARK record, input, b, constants, out_guard, output,
 * out_guard, program), build, finish, verify, write everything. */
int loom_vec_stage(loom_hw *hw, const loom_vec_params *p, loom_vec_plan *plan, const int8_t *in,
		   const int8_t *in2, const int8_t *w, const int32_t *bias, const int32_t *mult,
		   const int32_t *shift, const int8_t *lut, uint32_t mark_id, uint32_t out_guard,
		   loom_vec_layout *lay, loom_prog *prog, uint64_t *prog_addr, char *err, size_t errlen);

/* ---- a memo of plans (memo.c) ----
 *
 * A plan depends on the configuration and the layer's shape, not on its
 * values (zero points, clip bounds, multipliers, shifts: instruction
 * fields the timing model does not read); a compile plans many layers of
 * one shape. loom_plan_memo_conv / _vec return what loom_conv_plan_make /
 * loom_vec_plan_make return, with est_first 0 (loom_*_plan_first), planning
 * each shape once per memo (parameters with hints, or another
 * configuration than the memo's, are planned without it). m may be NULL.
 * est_first: 0 unless loom_plan_memo_want_first asked for it (below). */
typedef struct loom_plan_memo loom_plan_memo;
loom_plan_memo *loom_plan_memo_new(const loom_hwcfg *cfg); /* NULL: out of memory */
void loom_plan_memo_free(loom_plan_memo *m);
int loom_plan_memo_conv(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
			char *err, size_t errlen);
int loom_plan_memo_vec(loom_plan_memo *m, const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan,
		       char *err, size_t errlen);
/* plans served from the memo (hits), made (misses), and candidate programs
 * timed by loom_plan_memo_time */
void loom_plan_memo_stats(const loom_plan_memo *m, uint64_t *hits, uint64_t *misses, uint64_t *timed);
/* Deferred timing (a compile): after loom_plan_memo_defer(m), a miss only
 * searches the tilings (with loom_*_plan_make's checks and refusals) and
 * returns the best rated one, whose sizes in bytes (in, in2, out, wgt,
 * param, const) are the plan's but not yet its tiling, estimates and
 * (vector layers) its view (flat); loom_plan_memo_time(m, threads) then times every pending
 * shape's candidates on up to threads threads (and est_first of the
 * shapes loom_plan_memo_want_first named), after which the memo gives the
 * final plans: look each layer up again. 0, or -1 when out of memory. */
void loom_plan_memo_defer(loom_plan_memo *m);
void loom_plan_memo_want_first(loom_plan_memo *m, const loom_conv_params *cp, const loom_vec_params *vp);
int loom_plan_memo_time(loom_plan_memo *m, int threads);
/* With deferred timing: threads workers (0: none) that time each miss's
 * candidates as soon as the miss is made, while the caller goes on (a
 * compile lowering its layers); loom_plan_memo_time ends them after
 * helping with what they have left. The plans are the same. 0, or -1 when
 * no worker could start (out of memory or threads: loom_plan_memo_time
 * then times everything). */
int loom_plan_memo_background(loom_plan_memo *m, int threads);

/* A real scale in (0, 1) as mult * 2^-31 * 2^-shift with mult in [2^30, 2^31)
 * and shift 0..31 (0, or -1 when it cannot be represented). */
int loom_quant_mult(double scale, int32_t *mult, int32_t *shift);
/* ELTWISE ADD of inputs with scales sa, sb to output scale so: sets
 * mult_a, mult_b, mult, shift as docs/ISA.md describes (-1 if out of range). */
int loom_quant_add(double sa, double sb, double so, loom_vec_params *p);

#ifdef __cplusplus
}
#endif
#endif
