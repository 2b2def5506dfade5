/* conv_emit.c - the program builder of CONV and GEMM layers
 * (loom_build_conv, loom_build_gemm): emits the LOAD / MATMUL / STORE
 * program of a planned layer with its dependency tokens, packs the weights
 * and requantization parameters, stages a layer on a device for tests.
 *
 * Program shape. The output is cut into tiles of th x tw pixels; the input
 * channels into chunks of kc blocks of R channels (and, only when nothing
 * else fits the scratchpad, the kernel rows into chunks of kyc rows); the
 * output channels into passes of g blocks of C channels. A *step* is one
 * (pass, tile, chunk): LOAD(s) brings the tile's input chunk (padding
 * included) into input buffer s % 2, then one MATMUL per output block of
 * the pass accumulates into that block's ACC tile; after the last chunk of
 * a tile, one STORE per block requantizes its ACC tile to DRAM. A *job*
 * (pass, tile, block) owns ACC tile buffer j % nslots.
 *
 * Weights are either resident for a pass (one region, or two when passes
 * chain so the next pass's weights load while this one computes) or, when
 * they do not fit, streamed per step into weight buffer s % 2. Resident
 * weights load progressively: the steps of the pass's first tile each bring
 * their chunk's part of every block, block by block, each block's part with
 * its own L->C token so its MATMUL starts as soon as it is in; with chained
 * passes, steps 1.. of a pass each prefetch a share of the next pass's
 * weights into the other region.
 *
 * Tokens (within a segment, steps s and jobs j numbered from 0):
 *   LOAD(s)  first insn pops C->L when s >= 2 (buffer s%2 free again);
 *            the last insn the step's MATMULs need pushes L->C (one push
 *            per block when the step loads resident weights).
 *   MATMUL   first of step s pops L->C (every one, in a step that loads
 *            resident weights); last of step s pushes C->L when LOAD(s+2)
 *            exists; the first chunk's MATMUL of job j pops S->C when
 *            j >= nslots; the last chunk's pushes C->S.
 *   STORE(j) pops C->S; pushes S->C when job j + nslots exists.
 * Every pop is matched by an earlier push in program order, every counter
 * returns to zero at the segment's closing MARK (a barrier). Passes share a
 * segment ("chained") when every block's params stay in ACC and the weights
 * are streamed or have two regions (a region written by LOAD(s), s >= 1 in
 * a pass, was last read by the pass before the previous one, which ended
 * before step s-2: the C->L pop orders it); otherwise each pass is its own
 * segment. The ACC params load at the start of a segment, before LOAD(0),
 * so the chain LOAD(0) -> MATMUL -> STORE orders them before every STORE.
 * loom_prog_verify() checks all of this on the emitted program.
 *
 * A fused residual (loom_conv_params.res): each job's STORE is SOURCE 3,
 * reading its residual rows from SP region T % nres of g*P lines (T: the
 * tile's number in the segment, nres = 3 + ceil(nslots / gmin), gmin the
 * fewest blocks of a pass). When the pass's blocks are all C wide, one LOAD
 * brings the tile's rows of all its blocks, pixel by pixel, block by block
 * (contiguous in DRAM: long bursts), and job ol reads lines base + ol +
 * k*gp (N3 = gp, the residual's step); else one LOAD per job, lines base +
 * ol*P + k. They load at the end of LOAD(s-1), s the tile's last chunk
 * (after its push: the MATMULs of step s-1 do not wait for them; in
 * LOAD(0) before the push when s = 0), so LOAD(s)'s push -> MATMUL(s) ->
 * STORE orders them before the STOREs. The region's previous tile T - nres
 * stored before: its last job's S->C token went to the MATMUL of the job
 * nslots later, at least nres - 3 tiles of >= gmin jobs later, three tiles
 * (at one chunk per tile) before this one, whose C->L push LOAD(s-1)
 * follows.
 */
#include "compiler/npu/npu_internal.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* emission */

typedef struct segment {
	uint32_t p0, p1;        /* passes */
	uint32_t ob0;           /* first output block (params at ACC acc_param + ppb*(ob-ob0)) */
	uint32_t nsteps, njobs;
} segment;

static uint32_t pass_obs(const emitter *e, uint32_t pass)
{
	return umin(e->pl->g, e->L->nob - pass * e->pl->g);
}

static uint32_t chunks(const loom_conv_plan *pl) { return pl->nk * pl->nky; }

/* step s of segment sg -> pass, tile, chunk (k in 0..nk*nky-1) */
static void step_of(const emitter *e, const segment *sg, uint32_t s, uint32_t *pass, uint32_t *t, uint32_t *k)
{
	uint32_t per = e->pl->ntiles * chunks(e->pl);
	*pass = sg->p0 + s / per;
	*t = (s % per) / chunks(e->pl);
	*k = s % chunks(e->pl);
}

/* chunk k -> input channel blocks [cb0, cb0+kck), kernel rows [ky0, ky0+kyn) */
typedef struct chunk {
	uint32_t cb0, kck, ky0, kyn;
} chunk;

static chunk chunk_of(const emitter *e, uint32_t k)
{
	const loom_conv_plan *pl = e->pl;
	chunk c;
	c.cb0 = k / pl->nky * pl->kc;
	c.kck = umin(pl->kc, e->L->ncb - c.cb0);
	c.ky0 = k % pl->nky * pl->kyc;
	c.kyn = umin(pl->kyc, e->L->y.k - c.ky0);
	return c;
}

static void tile_of(const emitter *e, uint32_t t, dtile *ty, dtile *tx)
{
	uint32_t ntc = cdiv(e->L->x.out, e->pl->tw);
	uint32_t tr = t / ntc, tc = t % ntc;
	uint32_t oy0 = tr * e->pl->th, ox0 = tc * e->pl->tw;
	npu_dim_tile(&e->L->y, oy0, umin(e->pl->th, e->L->y.out - oy0), ty);
	npu_dim_tile(&e->L->x, ox0, umin(e->pl->tw, e->L->x.out - ox0), tx);
}


/* Resident weights that were not prefetched are loaded progressively: the
 * steps of a pass's first tile each bring their chunk's part of every block's
 * weights, pushing one L->C token per block after that block's part, and
 * every MATMUL of such a step pops one, so the first block computes while
 * the others still load and the weights interleave with the input chunks. */
static int prefetching(const loom_conv_plan *pl)
{
	return pl->chained && !pl->wchunk && pl->npass > 1 && pl->ntiles * chunks(pl) >= 2;
}

static int loads_pass_weights(const emitter *e, uint32_t s)
{
	const loom_conv_plan *pl = e->pl;
	uint32_t spp = pl->ntiles * chunks(pl);
	return !pl->wchunk && s % spp < chunks(pl) && !(prefetching(pl) && s >= spp);
}

/* A packed tile (no padding) holding the layer's last row and positions
 * from L->xover: the rows before it, then its positions that lie inside
 * the row, then each one reaching past the row with only its pixels that
 * exist (the rest of its line is zero, under zero weights). */
static void emit_xover_load(emitter *e, const xfer *x0, const dtile *ty, const dtile *tx)
{
	const layer *L = e->L;
	xfer x = *x0;
	uint32_t last = ty->valid - 1, in_row = L->xover > tx->first ? L->xover - tx->first : 0;
	x.n2 = last;
	if (last)
		npu_emit_load(e, &x);
	x.dram = x0->dram + last * x0->s2;
	x.addr = x0->addr + last * tx->tin;
	x.n2 = 1;
	x.n1 = in_row;
	if (in_row)
		npu_emit_load(e, &x);
	for (uint32_t i = in_row; i < tx->valid; i++) {
		uint32_t v = tx->first + i, px = L->ystep / L->pstride - L->xstep / L->pstride * v;
		x.dram = x0->dram + last * x0->s2 + i * x0->s1;
		x.addr = x0->addr + last * tx->tin + i;
		x.n1 = 1;
		x.row_bytes = px * L->pstride;
		npu_emit_load(e, &x);
	}
}

/* the residual of tile t of pass `pass`: its region's first SP line, and 1
 * when one LOAD brings all its blocks (each full, the step fits N3) */
static uint32_t res_region(const emitter *e, const segment *sg, uint32_t pass, uint32_t t, int *merged)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	uint32_t gp = pass_obs(e, pass), T = (pass - sg->p0) * pl->ntiles + t;
	*merged = gp <= 255 && ty.t <= 255 && (uint64_t)(pass * pl->g + gp) * L->C <= L->cout;
	return pl->res_sp + T % pl->nres * pl->g * pl->slot_lines;
}

/* the residual rows of the jobs of step s's tile (s: its last chunk), laid
 * out as their STOREs (SOURCE 3) read them */
static void emit_res_loads(emitter *e, const segment *sg, uint32_t s)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	uint32_t pass, t, k, C = L->C;
	int merged;
	step_of(e, sg, s, &pass, &t, &k);
	uint32_t gp = pass_obs(e, pass), base = res_region(e, sg, pass, t, &merged);
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	uint32_t dram = e->lay->res_addr + (ty.o0 * L->x.out + tx.o0) * L->out_stride + pass * pl->g * C;
	if (merged) { /* pixel by pixel, block by block: lines base + k*gp + ol */
		xfer rx = {.mem = LOOM_MEM_SP, .row_bytes = C, .dram = dram, .addr = base, .s1 = C,
			   .s2 = L->out_stride, .s3 = L->x.out * L->out_stride, .n1 = gp, .n2 = tx.t, .n3 = ty.t};
		npu_emit_load(e, &rx);
		return;
	}
	for (uint32_t ol = 0; ol < gp; ol++) { /* job ol: lines base + ol*P + k */
		uint32_t ob = pass * pl->g + ol, cnt = umin(C, L->cout - ob * C);
		xfer rx = {.mem = LOOM_MEM_SP, .row_bytes = round4(cnt), .dram = dram + ol * C,
			   .addr = base + ol * pl->slot_lines, .s1 = L->out_stride, .s2 = L->x.out * L->out_stride,
			   .s3 = 0, .n1 = tx.t, .n2 = ty.t, .n3 = 1};
		npu_emit_load(e, &rx);
	}
}

/* LOAD(s): the step's input chunk and weights; the first instruction pops
 * C->L when s >= 2, the last one the step's MATMULs wait for pushes L->C.
 * With prefetching, steps 1.. of a pass also load a share of the next
 * pass's weights into the other region (free: LOAD(s) waits for step s-2,
 * and the previous pass ended before step 0 of this one), after the push. */
static void emit_loads(emitter *e, const segment *sg, uint32_t s)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	uint32_t pass, t, k;
	step_of(e, sg, s, &pass, &t, &k);
	uint32_t gp = pass_obs(e, pass), ob0 = pass * pl->g;
	chunk ck = chunk_of(e, k);
	uint32_t R = L->R, C = L->C, KK = L->kk, KW = L->x.k;
	uint32_t obw = L->ncb * KK * C; /* weight lines of one output block */
	size_t first = e->prog->n;
	if (pl->wchunk) {
		/* the chunk's weights of the pass's blocks, [ob][cb][ky][kx][c] */
		uint32_t src = e->lay->wgt_addr + ((ob0 * L->ncb + ck.cb0) * KK + ck.ky0 * KW) * C * R;
		if (ck.kyn == L->y.k && ck.kck * KK <= 4095) {
			xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = src, .addr = pl->wgt_sp[s % 2],
				  .s1 = R, .s2 = C * R, .s3 = obw * R, .n1 = C, .n2 = ck.kck * KK, .n3 = gp};
			npu_emit_load(e, &x);
		} else {
			for (uint32_t ol = 0; ol < gp; ol++) {
				xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = src + ol * obw * R,
					  .addr = pl->wgt_sp[s % 2] + ol * ck.kck * ck.kyn * KW * C,
					  .s1 = R, .s2 = C * R, .s3 = KK * C * R,
					  .n1 = C, .n2 = ck.kyn * KW, .n3 = ck.kck};
				npu_emit_load(e, &x);
			}
		}
	}
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	uint32_t plane = ty.tin * tx.tin;
	uint32_t full = ck.kck;
	if ((uint64_t)(ck.cb0 + ck.kck) * R > L->in_stride)
		full = ck.kck - 1; /* the layer's last block is narrower than R */
	uint32_t base = e->lay->in_addr + ty.first * L->ystep + tx.first * L->xstep + ck.cb0 * R;
	xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = base, .addr = pl->act_sp[s % 2],
		  .s1 = L->xstep * (L->x.k == 1 ? L->x.s : 1),
		  .s2 = L->ystep * (L->y.k == 1 ? L->y.s : 1), .s3 = R,
		  .n1 = tx.valid, .n2 = ty.valid, .n3 = full,
		  .pt = ty.pl, .pb = ty.ph, .pl = tx.pl, .pr = tx.ph, .pad = (uint8_t)e->p->in_zp};
	if (L->xpack && tx.first + tx.valid > L->xover && ty.first + ty.valid == L->y.in)
		emit_xover_load(e, &x, &ty, &tx);
	else if (full)
		npu_emit_load(e, &x);
	if (full < ck.kck) {
		x.row_bytes = L->in_stride - (ck.cb0 + full) * R;
		x.dram = base + full * R;
		x.addr = pl->act_sp[s % 2] + full * plane;
		x.n3 = 1;
		x.s3 = 0;
		npu_emit_load(e, &x);
	}
	if (L->res && s == 0 && k == chunks(pl) - 1)
		emit_res_loads(e, sg, 0);
	loom_insn ld[8];
	int n;
	if (loads_pass_weights(e, s)) {
		/* the chunk's part of the pass's resident weights; one push per block */
		uint32_t reg = pl->wgt_sp[(pass - sg->p0) % pl->nwreg];
		uint32_t off = (ck.cb0 * KK + ck.ky0 * KW) * C, lines = ck.kck * ck.kyn * KW * C;
		for (uint32_t ol = 0; ol < gp; ol++) {
			n = 0;
			npu_lin_load(e, ld, &n, LOOM_MEM_SP, e->lay->wgt_addr + ((ob0 + ol) * obw + off) * R,
				 reg + ol * obw + off, lines, R);
			npu_fset(e, &ld[n - 1], LOOM_F_LOAD_PUSH_NEXT, 1);
			for (int i = 0; i < n; i++)
				npu_emit(e, &ld[i]);
		}
	} else if (!e->oom) {
		npu_fset(e, &e->prog->insn[e->prog->n - 1], LOOM_F_LOAD_PUSH_NEXT, 1);
	}
	uint32_t spp = pl->ntiles * chunks(pl), sp = s % spp;
	if (prefetching(pl) && sp >= 1 && pass + 1 < sg->p1) {
		/* share sp-1 of spp-1 of the next pass's weights */
		uint64_t lines = (uint64_t)pass_obs(e, pass + 1) * obw;
		uint64_t a = lines * (sp - 1) / (spp - 1), b = lines * sp / (spp - 1);
		uint32_t reg = pl->wgt_sp[(pass + 1 - sg->p0) % pl->nwreg];
		n = 0;
		npu_lin_load(e, ld, &n, LOOM_MEM_SP, e->lay->wgt_addr + ((pass + 1) * pl->g * obw + (uint32_t)a) * R,
			 reg + (uint32_t)a, b - a, R);
		for (int i = 0; i < n; i++)
			npu_emit(e, &ld[i]);
	}
	if (L->res && s + 1 < sg->nsteps && (s + 1) % chunks(pl) == chunks(pl) - 1)
		emit_res_loads(e, sg, s + 1);
	if (!e->oom && s >= 2)
		npu_fset(e, &e->prog->insn[first], LOOM_F_LOAD_POP_NEXT, 1);
}

static void emit_compute(emitter *e, const segment *sg, uint32_t s, uint32_t *job)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	const loom_conv_params *p = e->p;
	uint32_t pass, t, k;
	step_of(e, sg, s, &pass, &t, &k);
	uint32_t gp = pass_obs(e, pass), last = chunks(pl) - 1;
	chunk ck = chunk_of(e, k);
	uint32_t C = L->C, KK = L->kk, KW = L->x.k;
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	int wsplit = loads_pass_weights(e, s); /* one L->C token per block */
	/* jobs of this tile: numbered when the tile's first chunk runs */
	uint32_t j0 = *job;
	if (k == last)
		*job += gp;
	for (uint32_t ol = 0; ol < gp; ol++) {
		uint32_t ob = pass * pl->g + ol, j = j0 + ol, slot = j % pl->nslots;
		uint32_t acc = pl->acc_slot0 + slot * pl->slot_lines;
		loom_insn in;
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_MATMUL;
		npu_fset(e, &in, LOOM_F_MATMUL_POP_PREV, ol == 0 || wsplit);
		npu_fset(e, &in, LOOM_F_MATMUL_PUSH_PREV, ol == gp - 1 && s + 2 < sg->nsteps);
		npu_fset(e, &in, LOOM_F_MATMUL_POP_NEXT, k == 0 && j >= pl->nslots);
		npu_fset(e, &in, LOOM_F_MATMUL_PUSH_NEXT, k == last);
		npu_fset(e, &in, LOOM_F_MATMUL_ACCUMULATE, k > 0);
		/* a part of the kernel rows: start ky0 dilated rows into the tile */
		npu_fset(e, &in, LOOM_F_MATMUL_ACT_ADDR, pl->act_sp[s % 2] + ck.ky0 * L->y.d * tx.tin);
		uint32_t wa = pl->wchunk ? pl->wgt_sp[s % 2] + ol * ck.kck * ck.kyn * KW * C
					 : pl->wgt_sp[(pass - sg->p0) % pl->nwreg] +
						   ((ol * L->ncb + ck.cb0) * KK + ck.ky0 * KW) * C;
		npu_fset(e, &in, LOOM_F_MATMUL_WGT_ADDR, wa);
		npu_fset(e, &in, LOOM_F_MATMUL_ACC_ADDR, acc);
		npu_fset(e, &in, LOOM_F_MATMUL_IN_W, tx.tin);
		npu_fset(e, &in, LOOM_F_MATMUL_IN_H, ty.tin);
		npu_fset(e, &in, LOOM_F_MATMUL_OUT_W, tx.t);
		npu_fset(e, &in, LOOM_F_MATMUL_OUT_H, ty.t);
		npu_fset(e, &in, LOOM_F_MATMUL_NCB, ck.kck);
		npu_fset(e, &in, LOOM_F_MATMUL_KW, L->x.k);
		npu_fset(e, &in, LOOM_F_MATMUL_KH, ck.kyn);
		npu_fset(e, &in, LOOM_F_MATMUL_SW, L->x.k == 1 ? 1 : L->x.s);
		npu_fset(e, &in, LOOM_F_MATMUL_SH, L->y.k == 1 ? 1 : p->sh);
		npu_fset(e, &in, LOOM_F_MATMUL_DW, L->x.d);
		npu_fset(e, &in, LOOM_F_MATMUL_DH, p->dh);
		npu_emit(e, &in);
		if (k != last)
			continue;
		/* the job's STORE */
		uint32_t cnt = umin(C, L->cout - ob * C);
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_STORE;
		npu_fset(e, &in, LOOM_F_STORE_POP_PREV, 1);
		npu_fset(e, &in, LOOM_F_STORE_PUSH_PREV, j + pl->nslots < sg->njobs);
		uint32_t dram = e->lay->out_addr + (ty.o0 * L->x.out + tx.o0) * L->out_stride;
		if (L->raw) {
			npu_fset(e, &in, LOOM_F_STORE_SOURCE, LOOM_MEM_ACC);
			npu_fset(e, &in, LOOM_F_STORE_ROW_WORDS, cnt);
			dram += ob * C * 4;
		} else {
			npu_fset(e, &in, LOOM_F_STORE_SOURCE, L->res ? LOOM_MEM_ACC_RESADD : LOOM_MEM_ACC_REQUANT);
			npu_fset(e, &in, LOOM_F_STORE_ROW_WORDS, (cnt + 3) / 4);
			npu_fset(e, &in, LOOM_F_STORE_ZERO_POINT, (uint8_t)p->out_zp);
			npu_fset(e, &in, LOOM_F_STORE_PARAM_ADDR, L->ppb * (ob - sg->ob0));
			if (L->res) { /* RES_ADDR and its step: the job's rows in the tile's region */
				int merged;
				uint32_t base = res_region(e, sg, pass, t, &merged);
				npu_fset(e, &in, LOOM_F_STORE_STRIDE3, merged ? base + ol : base + ol * pl->slot_lines);
				npu_fset(e, &in, LOOM_F_STORE_N3, merged ? gp : 1);
			}
			npu_fset(e, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)p->clip_lo);
			npu_fset(e, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)p->clip_hi);
			dram += ob * C;
		}
		npu_fset(e, &in, LOOM_F_STORE_DRAM_ADDR, dram);
		npu_fset(e, &in, LOOM_F_STORE_MEM_ADDR, acc);
		npu_fset(e, &in, LOOM_F_STORE_STRIDE1, L->out_stride);
		npu_fset(e, &in, LOOM_F_STORE_STRIDE2, L->x.out * L->out_stride);
		npu_fset(e, &in, LOOM_F_STORE_N1, tx.t);
		npu_fset(e, &in, LOOM_F_STORE_N2, ty.t);
		if (!L->res) /* SOURCE 3: N3 is the residual's step, set above */
			npu_fset(e, &in, LOOM_F_STORE_N3, 1);
		npu_emit(e, &in);
	}
}

/* the valid (DRAM) lines of every tile along one dimension, summed */
static uint64_t valid_lines(const dimg *g, uint32_t t)
{
	uint64_t n = 0;
	for (uint32_t o0 = 0; o0 < g->out; o0 += t) {
		dtile d;
		npu_dim_tile(g, o0, umin(t, g->out - o0), &d);
		n += d.valid;
	}
	return n;
}

uint64_t npu_conv_rd_bytes(const layer *L, const loom_conv_plan *pl)
{
	/* each step loads its tile's input chunk (every pass, every kernel-row
	 * chunk): per pixel the chunk's blocks, the last one as wide as the
	 * stride leaves */
	uint64_t px = 0;
	for (uint32_t cb0 = 0; cb0 < L->ncb; cb0 += pl->kc) {
		uint64_t full = (uint64_t)umin(pl->kc, L->ncb - cb0) * L->R, left = L->in_stride - (uint64_t)cb0 * L->R;
		px += full < left ? full : left;
	}
	uint64_t in = px * valid_lines(&L->y, pl->th) * valid_lines(&L->x, pl->tw);
	/* packed: the last row's lines past xover load only their pixels (when
	 * the last tile row reads the input's last row) */
	dtile ly;
	uint32_t ly0 = (L->y.out - 1) / pl->th * pl->th;
	npu_dim_tile(&L->y, ly0, L->y.out - ly0, &ly);
	for (uint32_t o0 = 0; L->xpack && ly.first + ly.valid == L->y.in && o0 < L->x.out; o0 += pl->tw) {
		dtile d;
		npu_dim_tile(&L->x, o0, umin(pl->tw, L->x.out - o0), &d);
		for (uint32_t v = d.first > L->xover ? d.first : L->xover; v < d.first + d.valid; v++)
			in -= L->R - (L->ystep - L->xstep * v);
	}
	in *= (uint64_t)pl->npass * pl->nky;
	/* weights: once (resident, progressively or prefetched), or per tile
	 * (streamed per step); the requantization parameters once */
	uint64_t wgt = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	uint64_t par = L->raw ? 0 : 4ull * L->ppb * L->C * L->nob;
	/* a fused residual: read as the output is written */
	uint64_t res = L->res ? npu_conv_wr_bytes(L, pl) : 0;
	return in + (pl->wchunk ? wgt * pl->ntiles : wgt) + par + res;
}

uint64_t npu_conv_wr_bytes(const layer *L, const loom_conv_plan *pl)
{
	/* one STORE per output block and tile: int8 rows of the block's
	 * channels rounded up to words, or int32 accumulators */
	uint64_t row = L->raw ? 4ull * L->cout : 0;
	for (uint32_t ob = 0; !L->raw && ob < L->nob; ob++)
		row += round4(umin(L->C, L->cout - ob * L->C));
	return row * pl->oh * pl->ow;
}

int npu_conv_emit(const loom_hwcfg *cfg, const loom_conv_params *p, const layer *Lc, loom_conv_plan *plan,
		  const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen)
{
	layer L = *Lc;
	loom_conv_plan pl = *plan;
	if ((lay->in_addr | lay->wgt_addr | lay->param_addr | lay->out_addr | lay->mark_addr | lay->res_addr) & 3u)
		return npu_fail(err, errlen, "conv: DRAM addresses must be multiples of 4");
	emitter e = {.cfg = cfg, .p = p, .L = &L, .pl = &pl, .lay = lay, .prog = prog};
	size_t n0 = prog->n;
	uint32_t nseg = pl.chained ? 1 : pl.npass;
	for (uint32_t sgi = 0; sgi < nseg; sgi++) {
		segment sg;
		sg.p0 = pl.chained ? 0 : sgi;
		sg.p1 = pl.chained ? pl.npass : sgi + 1;
		sg.ob0 = sg.p0 * pl.g;
		uint32_t ob1 = umin(L.nob, sg.p1 * pl.g);
		sg.nsteps = (sg.p1 - sg.p0) * pl.ntiles * chunks(&pl);
		sg.njobs = (ob1 - sg.ob0) * pl.ntiles;
		if (!L.raw) {
			loom_insn ld[8];
			int n = 0;
			npu_lin_load(&e, ld, &n, LOOM_MEM_ACC, lay->param_addr + sg.ob0 * L.ppb * L.C * 4, 0,
				 (uint64_t)L.ppb * (ob1 - sg.ob0), 4 * L.C);
			for (int i = 0; i < n; i++)
				npu_emit(&e, &ld[i]);
		}
		uint32_t job = 0;
		emit_loads(&e, &sg, 0);
		for (uint32_t s = 0; s < sg.nsteps; s++) {
			if (s + 1 < sg.nsteps)
				emit_loads(&e, &sg, s + 1);
			emit_compute(&e, &sg, s, &job);
		}
		loom_insn mk;
		memset(&mk, 0, sizeof mk);
		mk.w[0] = LOOM_OP_MARK;
		npu_fset(&e, &mk, LOOM_F_MARK_DRAM_ADDR, lay->mark_addr);
		npu_fset(&e, &mk, LOOM_F_MARK_MARK_ID, lay->mark_id);
		npu_emit(&e, &mk);
	}
	if (e.oom)
		return npu_fail(err, errlen, "conv: out of memory");
	if (e.bad) {
		prog->n = n0;
		return npu_fail(err, errlen, "conv: internal error: a value does not fit field %s",
			    loom_field_name(e.badf));
	}
	plan->insns = (uint32_t)(prog->n - n0);
	plan->dram_rd_est = e.rd_bytes;
	return 0;
}

int loom_build_conv(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_dram_layout *lay, loom_prog *prog,
		    loom_conv_plan *plan, char *err, size_t errlen)
{
	layer L;
	loom_conv_plan pl;
	if (npu_conv_plan(cfg, p, &L, 1, &pl, err, errlen) || npu_conv_emit(cfg, p, &L, &pl, lay, prog, err, errlen))
		return -1;
	if (plan)
		*plan = pl;
	return 0;
}

int loom_emit_conv(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan,
		   const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen)
{
	layer L;
	if (npu_layer_check(cfg, p, &L, err, errlen))
		return -1;
	/* a plan of other parameters: plan again */
	if (!plan->ntiles || plan->in_stride != L.in_stride || plan->out_stride != L.out_stride ||
	    plan->oh != L.y.out || plan->ow != L.x.out || plan->ncb != L.ncb || plan->nob != L.nob)
		return loom_build_conv(cfg, p, lay, prog, plan, err, errlen);
	return npu_conv_emit(cfg, p, &L, plan, lay, prog, err, errlen);
}

/* ------------------------------------------------------------------ */
/* packing */

/* weight (co, ky*kw+kx, ci) = w[co*s_co + kk*s_kk + ci*s_ci] */
static int pack(const loom_hwcfg *cfg, const loom_conv_params *p, const int8_t *w, size_t s_co, size_t s_kk,
		size_t s_ci, const int32_t *bias, const int32_t *mult, const int32_t *shift, uint8_t *wbuf,
		uint8_t *pbuf, char *err, size_t len)
{
	layer L;
	if (npu_layer_check(cfg, p, &L, err, len))
		return -1;
	const uint32_t R = L.R, C = L.C, KK = L.kk_macs;
	size_t o = 0;
	for (uint32_t ob = 0; ob < L.nob; ob++)
		for (uint32_t cb = 0; cb < L.ncb; cb++)
			for (uint32_t kk = 0; kk < L.kk; kk++)
				for (uint32_t c = 0; c < C; c++, o += R) {
					uint32_t co = ob * C + c;
					if (!L.xpack) { /* a line: channels cb*R.. of tap kk */
						uint32_t nv = co < L.cout && kk < KK ? L.cin - cb * R : 0;
						nv = nv < R ? nv : R;
						const int8_t *src = w + co * s_co + kk * s_kk + cb * R * s_ci;
						for (uint32_t r = 0; r < nv; r++)
							wbuf[o + r] = (uint8_t)src[r * s_ci];
						memset(wbuf + o + nv, 0, R - nv);
						continue;
					}
					for (uint32_t r = 0; r < R; r++) {
						/* line (ky, g): pixels g*T.. of row ky */
						uint32_t kx = kk % L.x.k * L.xpack + r / L.pstride, ci = r % L.pstride;
						uint32_t k = kx < p->kw ? kk / L.x.k * p->kw + kx : KK;
						wbuf[o + r] = co < L.cout && ci < L.cin && k < KK
								      ? (uint8_t)w[co * s_co + k * s_kk + ci * s_ci]
								      : 0;
					}
				}
	if (L.raw)
		return 0;
	if (!bias || !mult || !shift)
		return npu_fail(err, len, "conv: bias, mult and shift are required unless raw");
	uint32_t ew[LOOM_RESADD_WORDS];
	loom_eltadd_pack(&p->res_add, ew);
	for (uint32_t ob = 0; ob < L.nob; ob++)
		for (uint32_t c = 0; c < C; c++) {
			uint32_t co = ob * C + c;
			int32_t v[4] = {0, 0, 0, c < LOOM_RESADD_WORDS ? (int32_t)ew[c] : 0};
			if (co < L.cout) {
				int64_t sw = 0;
				for (uint32_t kk = 0; kk < KK; kk++)
					for (uint32_t ci = 0; ci < L.cin; ci++)
						sw += w[co * s_co + kk * s_kk + ci * s_ci];
				/* (x - zp) * w summed = x * w summed - zp * sum(w) */
				v[0] = (int32_t)(uint32_t)((int64_t)bias[co] - (int64_t)p->in_zp * sw);
				v[1] = mult[co];
				v[2] = shift[co];
			}
			for (uint32_t k = 0; k < L.ppb; k++) {
				size_t at = (((size_t)ob * L.ppb + k) * C + c) * 4;
				for (int b = 0; b < 4; b++)
					pbuf[at + b] = (uint8_t)((uint32_t)v[k] >> (8 * b));
			}
		}
	return 0;
}

int loom_conv_pack(const loom_hwcfg *cfg, const loom_conv_params *p, const int8_t *w, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err, size_t errlen)
{
	size_t kk = (size_t)p->kh * p->kw;
	return pack(cfg, p, w, kk * p->cin, p->cin, 1, bias, mult, shift, wbuf, pbuf, err, errlen);
}

static int write_consts(loom_hw *hw, const loom_conv_params *p, const loom_dram_layout *lay, const int8_t *w,
			size_t s_co, size_t s_kk, size_t s_ci, const int32_t *bias, const int32_t *mult,
			const int32_t *shift, char *err, size_t len)
{
	loom_conv_plan pl;
	if (loom_conv_plan_make(&hw->cfg, p, &pl, err, len))
		return -1;
	uint8_t *wb = malloc(pl.wgt_bytes + pl.param_bytes + 1);
	if (!wb)
		return npu_fail(err, len, "out of memory");
	uint8_t *pb = wb + pl.wgt_bytes;
	int rc = pack(&hw->cfg, p, w, s_co, s_kk, s_ci, bias, mult, shift, wb, pb, err, len);
	if (!rc && loom_hw_dram_write(hw, lay->wgt_addr, wb, pl.wgt_bytes))
		rc = npu_fail(err, len, "writing weights: %s", loom_hw_error(hw));
	if (!rc && pl.param_bytes && loom_hw_dram_write(hw, lay->param_addr, pb, pl.param_bytes))
		rc = npu_fail(err, len, "writing params: %s", loom_hw_error(hw));
	free(wb);
	return rc;
}

int loom_conv_write_consts(loom_hw *hw, const loom_conv_params *p, const loom_dram_layout *lay, const int8_t *w,
			   const int32_t *bias, const int32_t *mult, const int32_t *shift, char *err, size_t errlen)
{
	size_t kk = (size_t)p->kh * p->kw;
	return write_consts(hw, p, lay, w, kk * p->cin, p->cin, 1, bias, mult, shift, err, errlen);
}

/* ------------------------------------------------------------------ */
/* GEMM */

void loom_gemm_init(loom_gemm_params *g)
{
	memset(g, 0, sizeof *g);
	g->clip_lo = -128;
	g->clip_hi = 127;
}

void loom_gemm_to_conv(const loom_gemm_params *g, loom_conv_params *c)
{
	loom_conv_init(c);
	c->h = 1;
	c->w = g->m;
	c->cin = g->k;
	c->cout = g->n;
	c->in_stride = g->a_stride;
	c->out_stride = g->out_stride;
	c->in_zp = g->a_zp;
	c->out_zp = g->out_zp;
	c->clip_lo = g->clip_lo;
	c->clip_hi = g->clip_hi;
	c->raw = g->raw;
	c->hints = g->hints;
}

int loom_build_gemm(const loom_hwcfg *cfg, const loom_gemm_params *g, const loom_dram_layout *lay, loom_prog *prog,
		    loom_conv_plan *plan, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return loom_build_conv(cfg, &c, lay, prog, plan, err, errlen);
}

int loom_emit_gemm(const loom_hwcfg *cfg, const loom_gemm_params *g, loom_conv_plan *plan,
		   const loom_dram_layout *lay, loom_prog *prog, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return loom_emit_conv(cfg, &c, plan, lay, prog, err, errlen);
}

int loom_gemm_pack(const loom_hwcfg *cfg, const loom_gemm_params *g, const int8_t *b, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return pack(cfg, &c, b, 1, 0, g->n, bias, mult, shift, wbuf, pbuf, err, errlen);
}

int loom_gemm_write_consts(loom_hw *hw, const loom_gemm_params *g, const loom_dram_layout *lay, const int8_t *b,
			   const int32_t *bias, const int32_t *mult, const int32_t *shift, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return write_consts(hw, &c, lay, b, 1, 0, g->n, bias, mult, shift, err, errlen);
}

int loom_layer_stage(loom_hw *hw, const loom_conv_params *cp, const loom_gemm_params *gp,
		     loom_conv_plan *plan, const int8_t *in, const int8_t *w, const int32_t *bias,
		     const int32_t *mult, const int32_t *shift, uint32_t mark_id, uint32_t out_guard,
		     loom_dram_layout *lay, loom_prog *prog, uint64_t *prog_addr, char *e, size_t elen)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char msg[512];
	uint64_t at = 0x1000;
	lay->mark_addr = (uint32_t)npu_stage_place(&at, 64);
	lay->mark_id = mark_id;
	lay->in_addr = (uint32_t)npu_stage_place(&at, plan->in_bytes);
	lay->wgt_addr = (uint32_t)npu_stage_place(&at, plan->wgt_bytes);
	lay->param_addr = (uint32_t)npu_stage_place(&at, plan->param_bytes);
	lay->out_addr = (uint32_t)(npu_stage_place(&at, plan->out_bytes + 2ull * out_guard) + out_guard);
	lay->res_addr = !gp && cp->res ? (uint32_t)npu_stage_place(&at, plan->out_bytes) : 0;
	int brc = gp ? loom_build_gemm(cfg, gp, lay, prog, plan, msg, sizeof msg)
		     : loom_build_conv(cfg, cp, lay, prog, plan, msg, sizeof msg);
	if (brc || loom_prog_finish(prog))
		return npu_fail(e, elen, "build: %s", msg);
	*prog_addr = (at + 31) & ~31ull;
	if (*prog_addr + loom_prog_bytes(prog) > cfg->dram_bytes)
		return npu_fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_prog_verify(cfg, prog, msg, sizeof msg))
		return npu_fail(e, elen, "verify: %s", msg);
	int wrc = gp ? loom_gemm_write_consts(hw, gp, lay, w, bias, mult, shift, msg, sizeof msg)
		     : loom_conv_write_consts(hw, cp, lay, w, bias, mult, shift, msg, sizeof msg);
	if (wrc)
		return npu_fail(e, elen, "consts: %s", msg);
	if (loom_hw_dram_write(hw, lay->in_addr, in, plan->in_bytes) || loom_prog_write(hw, prog, *prog_addr))
		return npu_fail(e, elen, "dram write: %s", loom_hw_error(hw));
	return 0;
}
