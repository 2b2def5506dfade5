/* npu_internal.h - what the files of the NPU back end (compiler/npu/)
 * share: layer geometry, the conv layer and vector layer descriptions
 * their planners and emitters pass along, the instruction emitter and its
 * LOAD helpers. Private to compiler/npu/. */
#ifndef LOOM_NPU_INTERNAL_H
#define LOOM_NPU_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "compiler/npu/npu.h"

/* -1, with the message in err */
int npu_fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline uint32_t cdiv(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }
static inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t round4(uint32_t v) { return (v + 3u) / 4u * 4u; }

/* ------------------------------------------------------------------ */
/* layer geometry */

typedef struct dimg {
	uint32_t in, out, k, s, d, plo, phi, ek;
} dimg;

/* input lines of a tile of t outputs; a 1-wide kernel loads only the
 * sampled rows/columns (the DRAM stride skips the others) */
static inline uint32_t dim_tin(const dimg *g, uint32_t t) { return g->k == 1 ? t : (t - 1) * g->s + g->ek; }

typedef struct dtile {
	uint32_t o0, t;     /* outputs [o0, o0+t) */
	uint32_t tin;       /* input lines incl. padding */
	uint32_t pl, ph;    /* padding before/after */
	uint32_t valid;     /* lines from DRAM */
	uint32_t first;     /* first input index loaded */
} dtile;

/* the tile of t outputs from o0 along one dimension */
void npu_dim_tile(const dimg *g, uint32_t o0, uint32_t t, dtile *r);

/* 1 when every tile of t outputs along g loads at least one line from
 * DRAM (padding at least as wide as the window, a padded copy, could
 * leave a tile of padding only, which no LOAD writes) */
int npu_tiles_load(const dimg *g, uint32_t t);

/* the distinct sizes of the parts when n is cut into 1, 2, ... parts of at
 * most maxv (only hint, if set) into out[cap]: their count */
int npu_distinct_sizes(uint32_t n, uint32_t maxv, uint32_t hint, uint32_t *out, int cap);

/* ---- CONV / GEMM layers (conv_plan.c, conv_emit.c) */
typedef struct layer {
	dimg y, x;
	uint32_t cin, cout, kk, ncb, nob, in_stride, out_stride, R, C;
	int raw;
	int res;                /* a residual added in the STORE (loom_conv_params.res) */
	uint32_t ppb;           /* ACC parameter lines per output block: 3, res 4 */
	uint32_t xstep, ystep;  /* DRAM bytes between input columns (positions) and rows */
	uint64_t in_bytes;      /* the input's extent in DRAM */
	uint32_t kk_macs;       /* kernel taps of the layer's MACs (kh * kw) */
	/* Packed input (loom_conv_params.xpack): each SP line holds xpack =
	 * R / pstride consecutive pixels of the one channel block, x is the
	 * virtual dimension of those lines (position v starts at pixel sw*v;
	 * kernel xk = ceil(kw / xpack) taps of dilation xpack / sw, stride 1),
	 * in_stride is R. The last input row's last positions may reach past
	 * the row: from position xover on they load only the pixels that exist. */
	uint32_t xpack, pstride, xover;
} layer;

/* L from p, checked against cfg (conv_plan.c) */
int npu_layer_check(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, char *err, size_t len);
/* the checked layer L and its best tiling (conv_plan.c); its est_first
 * only with first (else 0: loom_conv_plan_first) */
int npu_conv_plan(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, int first, loom_conv_plan *plan,
		  char *err, size_t len);
/* the program of plan at lay appended to prog; plan's insns and
 * dram_rd_est set (conv_emit.c) */
int npu_conv_emit(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *L, loom_conv_plan *plan,
		  const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen);

/* The planners keep this many tilings that the closed form (common/timing.c)
 * rates best, time each one's program with the timing model (common/tsim.h)
 * and choose among them by npu_choose; the chosen one's cycles are the
 * plan's estimate. The conv planner adds the leanest tiling rated within
 * NPU_LEAN_RATING_TOL of the best (below), the vector planner the best of
 * each of its three buffer schemes. */
#define NPU_FINALISTS 3
#define NPU_CONV_FINALISTS (NPU_FINALISTS + 1)
#define NPU_VEC_FINALISTS (NPU_FINALISTS + 3)

/* The choice among timed finalists (docs/ARCHITECTURE.md, "One timing
 * model"): of those within NPU_CYCLE_TOL_PERMIL thousandths of the fastest's
 * cycles, the one that moves the fewest DRAM bytes (its LOADs' and STOREs',
 * dram_rd_est + dram_wr_est), then the fewer cycles, then the earlier. DRAM
 * bytes are most of an inference's energy (docs/DSE.md, "Energy": 162.5 pJ
 * a byte against 0.3 pJ a MAC), and with cheap strided loads the fastest
 * tiling can re-read the input twice as often for a fraction of a percent
 * of cycles. The conv planner's closed form misses by a few percent where
 * loads overlap compute, so it also times the tiling that moves the fewest
 * DRAM bytes among those rated within NPU_LEAN_RATING_TOL of the best
 * rating (the Pareto front of rating and bytes, kept during the search). */
#define NPU_CYCLE_TOL_PERMIL 10
#define NPU_LEAN_RATING_TOL 0.03

/* The planners' steps, for the memo (memo.c) to time finalists apart:
 * p's finalists, finished (sizes, DRAM estimates, the rating as est_cycles)
 * in the order the planner times them, fin[0] the best rated (-1 + message
 * when no tiling fits; fin has NPU_CONV_FINALISTS places); a finalist's
 * program timed by the timing model, MARK to MARK (first: from the job's
 * START), 0 if it cannot be emitted; the one the planner chooses from the
 * cycles and DRAM bytes (rd + wr) of n finalists: npu_choose's rule, -1 when
 * none was timed (then fin[0] with its rating). npu_conv_plan and
 * npu_vec_plan are these steps in order. */
int npu_conv_finalists(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, loom_conv_plan *fin, int *n,
		       char *err, size_t len);
uint64_t npu_conv_cycles(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *L, const loom_conv_plan *pl,
			 int first);
int npu_choose(const uint64_t *cyc, const uint64_t *bytes, int n);

/* The bytes the layer's LOADs move and its STOREs write with tiling pl, as
 * the emitter counts them (conv_emit.c), without emitting: the planner
 * fills plan.dram_rd_est and dram_wr_est with them. */
uint64_t npu_conv_rd_bytes(const layer *L, const loom_conv_plan *pl);
uint64_t npu_conv_wr_bytes(const layer *L, const loom_conv_plan *pl);

/* ---- vector-unit layers (vec_plan.c, vec_emit.c) */
typedef struct vlayer {
	int kind;
	dimg y, x;
	uint32_t R, c, cbytes, ncb, kk;
	uint32_t lastb;        /* bytes of the last channel block (<= R) */
	uint32_t in_stride, in2_stride, out_stride;
	uint32_t wlines;       /* DWCONV: weight lines before the parameter blocks */
	uint32_t const_lines;
	int full_b;            /* ELTWISE with a b tile per step */
} vlayer;

extern const char *const npu_vec_names[]; /* by LOOM_VEC_* */
/* V from p, checked against cfg (vec_plan.c) */
int npu_vlayer_check(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, char *err, size_t len);
/* the flat view f of p (loom_vec_params.flat) on cfg: 0, or -1 when p
 * does not ask for it or its bytes do not fill lines of R (vec_plan.c) */
int npu_vec_flat(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_params *f);
/* the checked layer V and its best tiling (vec_plan.c); its est_first
 * only with first (else 0: loom_vec_plan_first) */
int npu_vec_plan(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, int first, loom_vec_plan *plan,
		 char *err, size_t len);
/* the vector planner's steps (as npu_conv_finalists, npu_conv_cycles); fin
 * has NPU_VEC_FINALISTS places; 1 when npu_choose prefers the flat view's
 * chosen plan pf (loom_vec_params.flat) to the plan pl of the layer's own
 * view, each with its timed cycles as est_cycles */
int npu_vec_finalists(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, loom_vec_plan *fin, int *n,
		      char *err, size_t len);
uint64_t npu_vec_cycles(const loom_hwcfg *cfg, const loom_vec_params *p, const vlayer *V, const loom_vec_plan *pl,
			int first);
int npu_vec_prefer_flat(const loom_vec_plan *pl, const loom_vec_plan *pf);
/* the program of plan at lay appended to prog; plan's insns and
 * dram_rd_est set (vec_emit.c) */
int npu_vec_emit(const loom_hwcfg *cfg, const loom_vec_params *p, const vlayer *V, loom_vec_plan *plan,
		 const loom_vec_layout *lay, loom_prog *prog, char *err, size_t errlen);

/* the same for a vector-unit layer (vec_emit.c) */
uint64_t npu_vec_rd_bytes(const vlayer *V, const loom_vec_plan *pl);
uint64_t npu_vec_wr_bytes(const vlayer *V, const loom_vec_plan *pl);

/* ---- emission (builder.c) */
typedef struct emitter {
	const loom_hwcfg *cfg;
	const loom_conv_params *p;
	const layer *L;
	loom_conv_plan *pl;
	const loom_dram_layout *lay;
	loom_prog *prog;
	int bad;                /* a field did not fit */
	enum loom_field badf;
	int oom;
	uint64_t rd_bytes;      /* bytes loaded (estimate of DRAM reads) */
} emitter;

/* in's field f = v; a value that does not fit marks the emitter bad */
void npu_fset(emitter *e, loom_insn *in, enum loom_field f, uint32_t v);
/* append in to the program (out of memory marks the emitter) */
void npu_emit(emitter *e, const loom_insn *in);

typedef struct xfer {
	unsigned mem;           /* LOAD target / STORE source */
	uint32_t row_bytes, dram, addr;
	uint32_t s1, s2, s3, n1, n2, n3;
	uint32_t pt, pb, pl, pr; /* LOAD padding */
	uint8_t pad;
} xfer;

loom_insn npu_mk_load(emitter *e, const xfer *x);
/* Contiguous lines of row_bytes each: DRAM -> SP/ACC, in <= 4095 x 4095 pieces. */
void npu_lin_load(emitter *e, loom_insn *out, int *n, unsigned target, uint32_t dram, uint32_t addr,
		  uint64_t lines, uint32_t row_bytes);
void npu_emit_load(emitter *e, const xfer *x);
/* the next 64-byte aligned address from *at for n bytes (layer staging) */
uint64_t npu_stage_place(uint64_t *at, uint64_t n);

#endif
