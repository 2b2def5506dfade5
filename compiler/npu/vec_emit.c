/* vec_emit.c - the program builder of the vector-unit layers
 * (loom_build_vec): emits a planned layer's LOAD / vector / STORE program
 * with its tokens (the program shape is described in vec_plan.c), packs
 * its constants (and reads a depthwise layer's back: loom_vec_unpack_dw),
 * stages it on a device for tests. */
#include "compiler/npu/npu_internal.h"

#include <stdlib.h>

typedef struct vstep {
	dtile ty, tx;
	uint32_t buf, cb0, kck, nfull; /* nfull: blocks of R bytes (the rest: one of lastb bytes) */
} vstep;

static void vec_step(const vlayer *V, const loom_vec_plan *pl, uint32_t s, vstep *st)
{
	uint32_t t = s / pl->nk, k = s % pl->nk;
	uint32_t ntc = cdiv(V->x.out, pl->tw), oy0 = t / ntc * pl->th, ox0 = t % ntc * pl->tw;
	npu_dim_tile(&V->y, oy0, umin(pl->th, V->y.out - oy0), &st->ty);
	npu_dim_tile(&V->x, ox0, umin(pl->tw, V->x.out - ox0), &st->tx);
	st->buf = s % pl->nbuf;
	st->cb0 = k * pl->kc;
	st->kck = umin(pl->kc, V->ncb - st->cb0);
	st->nfull = st->kck;
	if (st->cb0 + st->kck == V->ncb && V->lastb < V->R)
		st->nfull--;
}

/* The input tile of a step from a tensor at dram with `stride` bytes a pixel
 * into SP lines [cb][y][x] from sp (padding lines hold pad). */
static void vec_tile_load(emitter *e, const vlayer *V, const vstep *st, uint32_t dram, uint32_t stride,
			  uint32_t sp, uint8_t pad)
{
	const dtile *ty = &st->ty, *tx = &st->tx;
	uint32_t R = V->R, plane = ty->tin * tx->tin;
	uint64_t base = dram + ((uint64_t)ty->first * V->x.in + tx->first) * stride + (uint64_t)st->cb0 * R;
	xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = (uint32_t)base, .addr = sp,
		  .s1 = stride * (V->x.k == 1 ? V->x.s : 1), .s2 = V->x.in * stride * (V->y.k == 1 ? V->y.s : 1),
		  .s3 = R, .n1 = tx->valid, .n2 = ty->valid, .n3 = st->nfull,
		  .pt = ty->pl, .pb = ty->ph, .pl = tx->pl, .pr = tx->ph, .pad = pad};
	if (st->nfull)
		npu_emit_load(e, &x);
	if (st->nfull < st->kck) {
		x.row_bytes = V->lastb;
		x.dram = (uint32_t)(base + (uint64_t)st->nfull * R);
		x.addr = sp + st->nfull * plane;
		x.n3 = 1;
		x.s3 = 0;
		npu_emit_load(e, &x);
	}
}

static void vec_loads(emitter *e, const vlayer *V, const loom_vec_params *p, const loom_vec_plan *pl,
		      const loom_vec_layout *lay, uint32_t s, int pop)
{
	vstep st;
	vec_step(V, pl, s, &st);
	size_t first = e->prog->n;
	uint8_t pad = V->kind == LOOM_VEC_POOL && p->func == LOOM_POOL_MAX ? 0x80 : (uint8_t)p->in_zp;
	vec_tile_load(e, V, &st, lay->in_addr, V->in_stride, pl->in_sp[st.buf], pad);
	if (V->full_b)
		vec_tile_load(e, V, &st, lay->in2_addr, V->in2_stride,
			      pl->in_sp[st.buf] + st.kck * st.ty.tin * st.tx.tin, 0);
	if (e->oom || e->prog->n == first)
		return;
	if (pop)
		e->prog->insn[first].w[0] |= 1u << 9;          /* LOAD.POP_NEXT */
	e->prog->insn[e->prog->n - 1].w[0] |= 1u << 11;        /* LOAD.PUSH_NEXT */
}

static void vec_compute(emitter *e, const vlayer *V, const loom_vec_params *p, const loom_vec_plan *pl, uint32_t s,
			int pop_prev, int pop_next, int push_prev, int push_next)
{
	vstep st;
	vec_step(V, pl, s, &st);
	uint32_t src = pl->in_sp[st.buf], dst = pl->out_sp[st.buf];
	uint32_t P = st.ty.t * st.tx.t;
	uint32_t sw = V->x.k == 1 ? 1 : V->x.s, sh = V->y.k == 1 ? 1 : V->y.s;
	uint8_t lo = (uint8_t)p->clip_lo, hi = (uint8_t)p->clip_hi;
	loom_insn in;
	memset(&in, 0, sizeof in);
	switch (V->kind) {
	case LOOM_VEC_POOL: {
		int avg = p->func == LOOM_POOL_AVG;
		in.w[0] = LOOM_OP_POOL;
		npu_fset(e, &in, LOOM_F_POOL_FUNC, avg);
		npu_fset(e, &in, LOOM_F_POOL_SHIFT, avg ? (uint32_t)p->shift : 0);
		npu_fset(e, &in, LOOM_F_POOL_ZP_OUT, avg ? (uint8_t)p->out_zp : 0);
		npu_fset(e, &in, LOOM_F_POOL_SRC, src);
		npu_fset(e, &in, LOOM_F_POOL_ZP_IN, avg ? (uint8_t)p->in_zp : 0);
		npu_fset(e, &in, LOOM_F_POOL_DST, dst);
		npu_fset(e, &in, LOOM_F_POOL_CLIP_LO, lo);
		npu_fset(e, &in, LOOM_F_POOL_CLIP_HI, hi);
		npu_fset(e, &in, LOOM_F_POOL_IN_W, st.tx.tin);
		npu_fset(e, &in, LOOM_F_POOL_IN_H, st.ty.tin);
		npu_fset(e, &in, LOOM_F_POOL_OUT_W, st.tx.t);
		npu_fset(e, &in, LOOM_F_POOL_OUT_H, st.ty.t);
		npu_fset(e, &in, LOOM_F_POOL_NCB, st.kck);
		npu_fset(e, &in, LOOM_F_POOL_KW, V->x.k);
		npu_fset(e, &in, LOOM_F_POOL_KH, V->y.k);
		npu_fset(e, &in, LOOM_F_POOL_SW, sw);
		npu_fset(e, &in, LOOM_F_POOL_SH, sh);
		npu_fset(e, &in, LOOM_F_POOL_DW, V->x.d);
		npu_fset(e, &in, LOOM_F_POOL_DH, V->y.d);
		npu_fset(e, &in, LOOM_F_POOL_MULT, avg ? (uint32_t)p->mult : 0);
		break;
	}
	case LOOM_VEC_DWCONV:
		in.w[0] = LOOM_OP_DWCONV;
		npu_fset(e, &in, LOOM_F_DWCONV_ZP_IN, (uint8_t)p->in_zp);
		npu_fset(e, &in, LOOM_F_DWCONV_ZP_OUT, (uint8_t)p->out_zp);
		npu_fset(e, &in, LOOM_F_DWCONV_SRC, src);
		npu_fset(e, &in, LOOM_F_DWCONV_CLIP_LO, lo);
		npu_fset(e, &in, LOOM_F_DWCONV_WGT, pl->const_sp + st.cb0 * V->kk);
		npu_fset(e, &in, LOOM_F_DWCONV_CLIP_HI, hi);
		npu_fset(e, &in, LOOM_F_DWCONV_PARAM, pl->const_sp + V->wlines + LOOM_DW_PARAM_LINES * st.cb0);
		npu_fset(e, &in, LOOM_F_DWCONV_DST, dst);
		npu_fset(e, &in, LOOM_F_DWCONV_NCB, st.kck);
		npu_fset(e, &in, LOOM_F_DWCONV_IN_W, st.tx.tin);
		npu_fset(e, &in, LOOM_F_DWCONV_IN_H, st.ty.tin);
		npu_fset(e, &in, LOOM_F_DWCONV_KW, V->x.k);
		npu_fset(e, &in, LOOM_F_DWCONV_KH, V->y.k);
		npu_fset(e, &in, LOOM_F_DWCONV_OUT_W, st.tx.t);
		npu_fset(e, &in, LOOM_F_DWCONV_OUT_H, st.ty.t);
		npu_fset(e, &in, LOOM_F_DWCONV_SW, sw);
		npu_fset(e, &in, LOOM_F_DWCONV_SH, sh);
		npu_fset(e, &in, LOOM_F_DWCONV_DW, V->x.d);
		npu_fset(e, &in, LOOM_F_DWCONV_DH, V->y.d);
		break;
	case LOOM_VEC_ELTWISE: {
		int add = p->func == LOOM_ELT_ADD;
		unsigned bm = V->full_b ? LOOM_BMODE_LINE : st.kck == 1 ? LOOM_BMODE_ONE : LOOM_BMODE_PLANE;
		in.w[0] = LOOM_OP_ELTWISE;
		npu_fset(e, &in, LOOM_F_ELTWISE_FUNC, add ? LOOM_ELT_ADD : LOOM_ELT_MUL);
		npu_fset(e, &in, LOOM_F_ELTWISE_B_MODE, bm);
		npu_fset(e, &in, LOOM_F_ELTWISE_SHIFT, (uint32_t)p->shift);
		npu_fset(e, &in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)p->out_zp);
		npu_fset(e, &in, LOOM_F_ELTWISE_SRC_A, src);
		npu_fset(e, &in, LOOM_F_ELTWISE_ZP_A, (uint8_t)p->in_zp);
		npu_fset(e, &in, LOOM_F_ELTWISE_SRC_B, V->full_b ? src + st.kck * P : pl->const_sp + st.cb0);
		npu_fset(e, &in, LOOM_F_ELTWISE_ZP_B, (uint8_t)p->in2_zp);
		npu_fset(e, &in, LOOM_F_ELTWISE_DST, dst);
		npu_fset(e, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
		npu_fset(e, &in, LOOM_F_ELTWISE_PLANE_LINES, P);
		npu_fset(e, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
		npu_fset(e, &in, LOOM_F_ELTWISE_PLANES, st.kck);
		npu_fset(e, &in, LOOM_F_ELTWISE_MULT_A, add ? (uint16_t)p->mult_a : 0);
		npu_fset(e, &in, LOOM_F_ELTWISE_MULT_B, add ? (uint16_t)p->mult_b : 0);
		npu_fset(e, &in, LOOM_F_ELTWISE_MULT, (uint32_t)p->mult);
		break;
	}
	default:
		in.w[0] = LOOM_OP_LUT;
		npu_fset(e, &in, LOOM_F_LUT_SRC, src);
		npu_fset(e, &in, LOOM_F_LUT_DST, dst);
		npu_fset(e, &in, LOOM_F_LUT_TABLE, pl->const_sp);
		npu_fset(e, &in, LOOM_F_LUT_LINES, st.kck * P);
		break;
	}
	/* the compute queue's token bits, the same for every opcode of it */
	in.w[0] |= (uint32_t)!!pop_prev << 8 | (uint32_t)!!pop_next << 9 | (uint32_t)!!push_prev << 10 |
		   (uint32_t)!!push_next << 11;
	npu_emit(e, &in);
}

static void vec_store(emitter *e, const vlayer *V, const loom_vec_plan *pl, const loom_vec_layout *lay, uint32_t s,
		      int push)
{
	vstep st;
	vec_step(V, pl, s, &st);
	uint32_t R = V->R, P = st.ty.t * st.tx.t;
	uint64_t dram = lay->out_addr + ((uint64_t)st.ty.o0 * V->x.out + st.tx.o0) * V->out_stride +
			(uint64_t)st.cb0 * R;
	size_t first = e->prog->n;
	for (int part = 0; part < 2; part++) {
		uint32_t n3 = part ? st.kck - st.nfull : st.nfull;
		if (!n3)
			continue;
		loom_insn in;
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_STORE;
		npu_fset(e, &in, LOOM_F_STORE_SOURCE, LOOM_MEM_SP);
		npu_fset(e, &in, LOOM_F_STORE_ROW_WORDS, (part ? V->lastb : R) / 4);
		npu_fset(e, &in, LOOM_F_STORE_DRAM_ADDR, (uint32_t)(dram + (part ? (uint64_t)st.nfull * R : 0)));
		npu_fset(e, &in, LOOM_F_STORE_MEM_ADDR, pl->out_sp[st.buf] + (part ? st.nfull * P : 0));
		npu_fset(e, &in, LOOM_F_STORE_STRIDE1, V->out_stride);
		npu_fset(e, &in, LOOM_F_STORE_STRIDE2, V->x.out * V->out_stride);
		npu_fset(e, &in, LOOM_F_STORE_STRIDE3, part ? 0 : R);
		npu_fset(e, &in, LOOM_F_STORE_N1, st.tx.t);
		npu_fset(e, &in, LOOM_F_STORE_N2, st.ty.t);
		npu_fset(e, &in, LOOM_F_STORE_N3, n3);
		npu_emit(e, &in);
	}
	if (e->oom || e->prog->n == first)
		return;
	e->prog->insn[first].w[0] |= 1u << 8;                 /* STORE.POP_PREV */
	if (push)
		e->prog->insn[e->prog->n - 1].w[0] |= 1u << 10; /* STORE.PUSH_PREV */
}

/* the valid (DRAM) lines of every tile along one dimension, summed */
static uint64_t vvalid_lines(const dimg *g, uint32_t t)
{
	uint64_t n = 0;
	for (uint32_t o0 = 0; o0 < g->out; o0 += t) {
		dtile d;
		npu_dim_tile(g, o0, umin(t, g->out - o0), &d);
		n += d.valid;
	}
	return n;
}

/* the bytes per pixel of every channel chunk, summed: blocks of R, the
 * layer's last one lastb */
static uint64_t chunk_bytes(const vlayer *V, const loom_vec_plan *pl)
{
	uint64_t b = 0;
	for (uint32_t cb0 = 0; cb0 < V->ncb; cb0 += pl->kc) {
		uint32_t kck = umin(pl->kc, V->ncb - cb0);
		b += (uint64_t)kck * V->R;
		if (cb0 + kck == V->ncb && V->lastb < V->R)
			b -= V->R - V->lastb;
	}
	return b;
}

uint64_t npu_vec_rd_bytes(const vlayer *V, const loom_vec_plan *pl)
{
	uint64_t c = 0;
	if (V->kind == LOOM_VEC_DWCONV || V->kind == LOOM_VEC_LUT)
		c = (uint64_t)pl->const_lines * V->R;
	else if (V->kind == LOOM_VEC_ELTWISE && !V->full_b)
		c = (uint64_t)(V->ncb - 1) * V->R + V->lastb; /* the per-channel b, once */
	uint64_t tiles = vvalid_lines(&V->y, pl->th) * vvalid_lines(&V->x, pl->tw);
	return c + tiles * chunk_bytes(V, pl) * (V->full_b ? 2 : 1);
}

uint64_t npu_vec_wr_bytes(const vlayer *V, const loom_vec_plan *pl)
{
	return (uint64_t)pl->oh * pl->ow * chunk_bytes(V, pl);
}

/* lint: long function: the step sequence of both buffer schemes, written out */
int npu_vec_emit(const loom_hwcfg *cfg, const loom_vec_params *p, const vlayer *Vc, loom_vec_plan *plan,
		 const loom_vec_layout *lay, loom_prog *prog, char *err, size_t errlen)
{
	vlayer V = *Vc;
	loom_vec_plan pl = *plan;
	const char *nm = npu_vec_names[p->kind];
	if ((lay->in_addr | lay->in2_addr | lay->const_addr | lay->out_addr | lay->mark_addr) & 3u)
		return npu_fail(err, errlen, "%s: DRAM addresses must be multiples of 4", nm);
	emitter e = {.cfg = cfg, .prog = prog};
	size_t n0 = prog->n;
	loom_insn ld[8];
	int n = 0;
	/* resident constants */
	if (V.kind == LOOM_VEC_DWCONV || V.kind == LOOM_VEC_LUT) {
		npu_lin_load(&e, ld, &n, LOOM_MEM_SP, lay->const_addr, pl.const_sp, pl.const_lines, V.R);
	} else if (V.kind == LOOM_VEC_ELTWISE && !V.full_b) {
		/* per-channel b: line cb = channels cb*R.. */
		uint32_t nfull = V.lastb < V.R ? V.ncb - 1 : V.ncb;
		npu_lin_load(&e, ld, &n, LOOM_MEM_SP, lay->in2_addr, pl.const_sp, nfull, V.R);
		if (nfull < V.ncb && n < 8) {
			xfer x = {.mem = LOOM_MEM_SP, .row_bytes = V.lastb, .dram = lay->in2_addr + nfull * V.R,
				  .addr = pl.const_sp + nfull, .s1 = V.lastb, .n1 = 1, .n2 = 1, .n3 = 1};
			ld[n++] = npu_mk_load(&e, &x);
		}
	}
	for (int i = 0; i < n; i++)
		npu_emit(&e, &ld[i]);
	uint32_t S = pl.nsteps, nb = (uint32_t)pl.nbuf;
	if (!pl.inplace) {
		for (uint32_t s = 0; s + 1 < nb && s < S; s++)
			vec_loads(&e, &V, p, &pl, lay, s, 0);
		for (uint32_t s = 0; s < S; s++) {
			uint32_t l = s + nb - 1;
			if (l < S)
				vec_loads(&e, &V, p, &pl, lay, l, l >= nb);
			vec_compute(&e, &V, p, &pl, s, 1, s >= nb, s + nb < S, 1);
			vec_store(&e, &V, &pl, lay, s, s + nb < S);
		}
	} else {
		vec_loads(&e, &V, p, &pl, lay, 0, 0);
		if (S > 1)
			vec_loads(&e, &V, p, &pl, lay, 1, 0);
		for (uint32_t s = 0; s < S; s++) {
			/* STORE(s-1) -> COMPUTE(s) -> LOAD(s+1), both tokens only when LOAD(s+1) exists */
			int relay = s >= 1 && s + 1 < S;
			vec_compute(&e, &V, p, &pl, s, 1, relay, relay, 1);
			if (relay)
				vec_loads(&e, &V, p, &pl, lay, s + 1, 1);
			vec_store(&e, &V, &pl, lay, s, s + 2 < S);
		}
	}
	loom_insn mk;
	memset(&mk, 0, sizeof mk);
	mk.w[0] = LOOM_OP_MARK;
	npu_fset(&e, &mk, LOOM_F_MARK_DRAM_ADDR, lay->mark_addr);
	npu_fset(&e, &mk, LOOM_F_MARK_MARK_ID, lay->mark_id);
	npu_emit(&e, &mk);
	if (e.oom)
		return npu_fail(err, errlen, "%s: out of memory", nm);
	if (e.bad) {
		prog->n = n0;
		return npu_fail(err, errlen, "%s: internal error: a value does not fit field %s", nm,
			    e.badf < LOOM_F_COUNT ? loom_field_name(e.badf) : "?");
	}
	plan->insns = (uint32_t)(prog->n - n0);
	plan->dram_rd_est = e.rd_bytes;
	return 0;
}

int loom_build_vec(const loom_hwcfg *cfg, const loom_vec_params *p, const loom_vec_layout *lay, loom_prog *prog,
		   loom_vec_plan *plan, char *err, size_t errlen)
{
	vlayer V;
	loom_vec_plan pl;
	loom_vec_params f;
	if (npu_vec_plan(cfg, p, &V, 1, &pl, err, errlen))
		return -1;
	if (pl.flat && npu_vec_flat(cfg, p, &f))
		return npu_fail(err, errlen, "%s: no flat view", npu_vec_names[p->kind]);
	if (npu_vec_emit(cfg, pl.flat ? &f : p, &V, &pl, lay, prog, err, errlen))
		return -1;
	if (plan)
		*plan = pl;
	return 0;
}

int loom_emit_vec(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan, const loom_vec_layout *lay,
		  loom_prog *prog, char *err, size_t errlen)
{
	vlayer V;
	loom_vec_params f;
	if (plan->flat && plan->ntiles && !npu_vec_flat(cfg, p, &f)) {
		if (npu_vlayer_check(cfg, &f, &V, err, errlen))
			return -1;
		if (plan->oh == V.y.out && plan->ow == V.x.out && plan->ncb == V.ncb)
			return npu_vec_emit(cfg, &f, &V, plan, lay, prog, err, errlen);
		return loom_build_vec(cfg, p, lay, prog, plan, err, errlen);
	}
	if (npu_vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	if (!plan->ntiles || plan->in_stride != V.in_stride || plan->out_stride != V.out_stride ||
	    plan->oh != V.y.out || plan->ow != V.x.out || plan->ncb != V.ncb)
		return loom_build_vec(cfg, p, lay, prog, plan, err, errlen);
	return npu_vec_emit(cfg, p, &V, plan, lay, prog, err, errlen);
}

int loom_vec_pack(const loom_hwcfg *cfg, const loom_vec_params *p, const int8_t *w, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, const int8_t *lut, uint8_t *buf, char *err, size_t errlen)
{
	vlayer V;
	if (npu_vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	const uint32_t R = V.R;
	if (V.kind == LOOM_VEC_LUT) {
		if (!lut)
			return npu_fail(err, errlen, "lut: the table is required");
		memset(buf, 0, (size_t)V.const_lines * R);
		memcpy(buf, lut, LOOM_LUT_ENTRIES);
		return 0;
	}
	if (V.kind != LOOM_VEC_DWCONV)
		return 0;
	if (!w || !bias || !mult || !shift)
		return npu_fail(err, errlen, "dwconv: weights, bias, mult and shift are required");
	size_t o = 0;
	for (uint32_t cb = 0; cb < V.ncb; cb++)
		for (uint32_t kk = 0; kk < V.kk; kk++)
			for (uint32_t r = 0; r < R; r++) {
				uint32_t ch = cb * R + r;
				buf[o++] = ch < V.c ? (uint8_t)w[(size_t)kk * V.c + ch] : 0;
			}
	/* parameter block of a channel block: bias int32[R], mult int32[R]
	 * (little-endian, R/4 a line), shift byte[R] */
	for (uint32_t cb = 0; cb < V.ncb; cb++) {
		uint8_t *blk = buf + o;
		memset(blk, 0, (size_t)LOOM_DW_PARAM_LINES * R);
		for (uint32_t r = 0; r < R; r++) {
			uint32_t ch = cb * R + r;
			if (ch >= V.c)
				continue;
			for (int b = 0; b < 4; b++) {
				blk[4 * r + b] = (uint8_t)((uint32_t)bias[ch] >> (8 * b));
				blk[4 * R + 4 * r + b] = (uint8_t)((uint32_t)mult[ch] >> (8 * b));
			}
			blk[8 * R + r] = (uint8_t)((uint32_t)shift[ch] & 31u);
		}
		o += (size_t)LOOM_DW_PARAM_LINES * R;
	}
	return 0;
}

int loom_vec_unpack_dw(const loom_hwcfg *cfg, const loom_vec_params *p, const uint8_t *buf, uint32_t ch,
		       uint32_t tap, int8_t *w, int32_t *bias, int32_t *mult, int32_t *shift, char *err,
		       size_t errlen)
{
	vlayer V;
	if (npu_vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	if (V.kind != LOOM_VEC_DWCONV || ch >= V.c || tap >= V.kk)
		return npu_fail(err, errlen, "dwconv unpack: channel %u tap %u outside the layer's", ch, tap);
	const uint32_t R = V.R, cb = ch / R, r = ch % R;
	*w = (int8_t)buf[((size_t)cb * V.kk + tap) * R + r];
	const uint8_t *blk = buf + (size_t)V.ncb * V.kk * R + (size_t)cb * LOOM_DW_PARAM_LINES * R;
	uint32_t b = 0, m = 0;
	for (int k = 0; k < 4; k++) {
		b |= (uint32_t)blk[4 * r + k] << (8 * k);
		m |= (uint32_t)blk[4 * R + 4 * r + k] << (8 * k);
	}
	*bias = (int32_t)b, *mult = (int32_t)m, *shift = blk[8 * R + r];
	return 0;
}

int loom_vec_stage(loom_hw *hw, const loom_vec_params *p, loom_vec_plan *plan, const int8_t *in, const int8_t *in2,
		   const int8_t *w, const int32_t *bias, const int32_t *mult, const int32_t *shift, const int8_t *lut,
		   uint32_t mark_id, uint32_t out_guard, loom_vec_layout *lay, loom_prog *prog, uint64_t *prog_addr,
		   char *e, size_t elen)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char msg[512] = "out of memory";
	uint64_t at = 0x1000;
	memset(lay, 0, sizeof *lay);
	lay->mark_addr = (uint32_t)npu_stage_place(&at, 64);
	lay->mark_id = mark_id;
	lay->in_addr = (uint32_t)npu_stage_place(&at, plan->in_bytes);
	lay->in2_addr = (uint32_t)npu_stage_place(&at, plan->in2_bytes);
	lay->const_addr = (uint32_t)npu_stage_place(&at, plan->const_bytes);
	lay->out_addr = (uint32_t)(npu_stage_place(&at, plan->out_bytes + 2ull * out_guard) + out_guard);
	if (at > cfg->dram_bytes)
		return npu_fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_build_vec(cfg, p, lay, prog, plan, msg, sizeof msg) || loom_prog_finish(prog))
		return npu_fail(e, elen, "build: %s", msg);
	*prog_addr = (at + 31) & ~31ull;
	if (*prog_addr + loom_prog_bytes(prog) > cfg->dram_bytes)
		return npu_fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_prog_verify(cfg, prog, msg, sizeof msg))
		return npu_fail(e, elen, "verify: %s", msg);
	if (plan->const_bytes) {
		uint8_t *cb = malloc(plan->const_bytes);
		if (!cb)
			return npu_fail(e, elen, "consts: out of memory");
		int rc = loom_vec_pack(cfg, p, w, bias, mult, shift, lut, cb, msg, sizeof msg);
		if (!rc && loom_hw_dram_write(hw, lay->const_addr, cb, plan->const_bytes))
			rc = npu_fail(msg, sizeof msg, "%s", loom_hw_error(hw));
		free(cb);
		if (rc)
			return npu_fail(e, elen, "consts: %s", msg);
	}
	if (loom_hw_dram_write(hw, lay->in_addr, in, plan->in_bytes) ||
	    (plan->in2_bytes && loom_hw_dram_write(hw, lay->in2_addr, in2, plan->in2_bytes)) ||
	    loom_prog_write(hw, prog, *prog_addr))
		return npu_fail(e, elen, "dram write: %s", loom_hw_error(hw));
	return 0;
}
