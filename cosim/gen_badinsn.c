/* gen_badinsn.c - bad instructions for the co-simulation program generator
 * (cosim/gen_internal.h): legal instructions with random fields, and the
 * table of bad-program kinds, one function per kind (or per group of kinds
 * that share code) making an instruction the decoder must reject with the
 * error and field docs/ISA.md predicts. The kinds that are not decode
 * checks (deadlocks, fetch errors, edge-legal) are made in gen_bad.c. */
#include "cosim/gen_internal.h"

/* ---- legal instructions with random fields ---- */

/* Legal instructions with random fields (never run: checks only). */
loom_insn gen_legal_load(gen *g)
{
	loom_insn in = op(LOOM_OP_LOAD);
	unsigned tgt = rbelow(g, 2);
	uint32_t lines = tgt ? g->cfg->acc_lines : g->cfg->sp_lines;
	setf(g, &in, LOOM_F_LOAD_TARGET, tgt);
	if (!tgt)
		setf(g, &in, LOOM_F_LOAD_PAD_VALUE, rbelow(g, 256));
	setf(g, &in, LOOM_F_LOAD_ROW_WORDS, rrange(g, 1, tgt ? g->C : g->R / 4));
	uint32_t n1 = rrange(g, 1, 8), n2 = rrange(g, 1, 4), n3 = rrange(g, 1, 2);
	setf(g, &in, LOOM_F_LOAD_N1, n1);
	setf(g, &in, LOOM_F_LOAD_N2, n2);
	setf(g, &in, LOOM_F_LOAD_N3, n3);
	setf(g, &in, LOOM_F_LOAD_PAD_TOP, rbelow(g, 2));
	setf(g, &in, LOOM_F_LOAD_PAD_LEFT, rbelow(g, 2));
	uint32_t used = n3 * (n2 + 1) * (n1 + 1);
	setf(g, &in, LOOM_F_LOAD_MEM_ADDR, rbelow(g, lines - used));
	setf(g, &in, LOOM_F_LOAD_STRIDE1, 4u * rbelow(g, 64));
	setf(g, &in, LOOM_F_LOAD_STRIDE2, 4u * rbelow(g, 1024));
	setf(g, &in, LOOM_F_LOAD_STRIDE3, 4u * rbelow(g, 4096));
	setf(g, &in, LOOM_F_LOAD_DRAM_ADDR, 4u * rbelow(g, (uint32_t)(g->cfg->dram_bytes / 8)));
	return in;
}

/* the ROW_WORDS limit of a STORE from src (docs/ISA.md) */
static uint32_t store_rw_lim(const gen *g, unsigned src)
{
	return src == 0 ? g->R / 4 : src == 1 ? g->C : src == 2 ? g->C / 4 : umin(g->R, g->C) / 4;
}

loom_insn gen_legal_store(gen *g, unsigned src)
{
	loom_insn in = op(LOOM_OP_STORE);
	uint32_t lines = src == 0 ? g->cfg->sp_lines : g->cfg->acc_lines;
	setf(g, &in, LOOM_F_STORE_SOURCE, src);
	setf(g, &in, LOOM_F_STORE_ROW_WORDS, rrange(g, 1, store_rw_lim(g, src)));
	uint32_t n1 = rrange(g, 1, 8), n2 = rrange(g, 1, 4), n3 = src == 3 ? rrange(g, 1, 3) : rrange(g, 1, 2);
	setf(g, &in, LOOM_F_STORE_N1, n1);
	setf(g, &in, LOOM_F_STORE_N2, n2);
	setf(g, &in, LOOM_F_STORE_N3, n3);
	setf(g, &in, LOOM_F_STORE_MEM_ADDR, rbelow(g, lines - n1 * n2 * (src == 3 ? 1 : n3)));
	setf(g, &in, LOOM_F_STORE_STRIDE1, 4u * rbelow(g, 64));
	setf(g, &in, LOOM_F_STORE_STRIDE2, 4u * rbelow(g, 1024));
	setf(g, &in, LOOM_F_STORE_STRIDE3, 4u * rbelow(g, 4096));
	setf(g, &in, LOOM_F_STORE_DRAM_ADDR, 4u * rbelow(g, (uint32_t)(g->cfg->dram_bytes / 8)));
	if (src >= 2) {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		setf(g, &in, LOOM_F_STORE_ZERO_POINT, r32(g) & 0xff);
		setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)(a < b ? a : b));
		setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)(a < b ? b : a));
		setf(g, &in, LOOM_F_STORE_PARAM_ADDR, rbelow(g, g->cfg->acc_lines - (src == 3 ? 3 : 2)));
	}
	if (src == 3) /* RES_ADDR: any SP line the rows fit after (N3 = the step), aligned or not */
		setf(g, &in, LOOM_F_STORE_STRIDE3, rbelow(g, g->cfg->sp_lines - (n1 * n2 - 1) * n3));
	return in;
}

loom_insn gen_legal_matmul(gen *g, geom *m)
{
	gen_rand_geom(g, m, chance(g, 30), 3000);
	uint32_t act_lines = m->ncb * m->inh * m->inw, wl = m->ncb * m->kh * m->kw * g->C;
	return gen_mk_matmul(g, m, m->ncb, rbelow(g, g->cfg->sp_lines - act_lines + 1),
			 rbelow(g, g->cfg->sp_lines - wl + 1), rbelow(g, g->cfg->acc_lines - m->ow * m->oh + 1),
			 rbelow(g, 2));
}

static loom_insn legal_mark(gen *g)
{
	loom_insn in = op(LOOM_OP_MARK);
	setf(g, &in, LOOM_F_MARK_DRAM_ADDR, 4u * rbelow(g, (uint32_t)((g->cfg->dram_bytes - 64) / 4 + 1)));
	setf(g, &in, LOOM_F_MARK_MARK_ID, r32(g));
	return in;
}

loom_insn gen_legal_eltwise(gen *g)
{
	loom_insn in = op(LOOM_OP_ELTWISE);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	unsigned fn = rbelow(g, 2), bm = rbelow(g, 3);
	uint32_t planes = rrange(g, 1, 8), pl = rrange(g, 1, 64), n = planes * pl;
	uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
	setf(g, &in, LOOM_F_ELTWISE_FUNC, fn);
	setf(g, &in, LOOM_F_ELTWISE_B_MODE, bm);
	setf(g, &in, LOOM_F_ELTWISE_SHIFT, rbelow(g, 32));
	setf(g, &in, LOOM_F_ELTWISE_ZP_OUT, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_A, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_ELTWISE_ZP_A, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_SRC_B, rbelow(g, L - nb + 1));
	setf(g, &in, LOOM_F_ELTWISE_ZP_B, gen_rand_zp(g));
	setf(g, &in, LOOM_F_ELTWISE_DST, rbelow(g, L - n + 1));
	gen_rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
	setf(g, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
	setf(g, &in, LOOM_F_ELTWISE_PLANE_LINES, pl);
	setf(g, &in, LOOM_F_ELTWISE_PLANES, planes);
	if (fn == LOOM_ELT_ADD) {
		setf(g, &in, LOOM_F_ELTWISE_MULT_A, gen_rand_m16(g));
		setf(g, &in, LOOM_F_ELTWISE_MULT_B, gen_rand_m16(g));
	}
	setf(g, &in, LOOM_F_ELTWISE_MULT, r32(g));
	return in;
}

loom_insn gen_legal_pool(gen *g, geom *m, int avg)
{
	loom_insn in = op(LOOM_OP_POOL);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	gen_vec_geom(g, m, 0);
	setf(g, &in, LOOM_F_POOL_FUNC, avg ? LOOM_POOL_AVG : LOOM_POOL_MAX);
	if (avg) {
		setf(g, &in, LOOM_F_POOL_SHIFT, rbelow(g, 32));
		setf(g, &in, LOOM_F_POOL_ZP_OUT, gen_rand_zp(g));
		setf(g, &in, LOOM_F_POOL_ZP_IN, gen_rand_zp(g));
		setf(g, &in, LOOM_F_POOL_MULT, r32(g));
	}
	gen_rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_POOL_CLIP_LO, lo);
	setf(g, &in, LOOM_F_POOL_CLIP_HI, hi);
	setf(g, &in, LOOM_F_POOL_SRC, rbelow(g, L - m->ncb * m->inw * m->inh + 1));
	setf(g, &in, LOOM_F_POOL_DST, rbelow(g, L - m->ncb * m->ow * m->oh + 1));
	setf(g, &in, LOOM_F_POOL_IN_W, m->inw);
	setf(g, &in, LOOM_F_POOL_IN_H, m->inh);
	setf(g, &in, LOOM_F_POOL_OUT_W, m->ow);
	setf(g, &in, LOOM_F_POOL_OUT_H, m->oh);
	setf(g, &in, LOOM_F_POOL_NCB, m->ncb);
	setf(g, &in, LOOM_F_POOL_KW, m->kw);
	setf(g, &in, LOOM_F_POOL_KH, m->kh);
	setf(g, &in, LOOM_F_POOL_SW, m->sw);
	setf(g, &in, LOOM_F_POOL_SH, m->sh);
	setf(g, &in, LOOM_F_POOL_DW, m->dw);
	setf(g, &in, LOOM_F_POOL_DH, m->dh);
	return in;
}

loom_insn gen_legal_dwconv(gen *g, geom *m)
{
	loom_insn in = op(LOOM_OP_DWCONV);
	uint32_t L = g->cfg->sp_lines, lo, hi;
	gen_vec_geom(g, m, 1);
	setf(g, &in, LOOM_F_DWCONV_ZP_IN, gen_rand_zp(g));
	setf(g, &in, LOOM_F_DWCONV_ZP_OUT, gen_rand_zp(g));
	gen_rand_clip(g, 0, &lo, &hi);
	setf(g, &in, LOOM_F_DWCONV_CLIP_LO, lo);
	setf(g, &in, LOOM_F_DWCONV_CLIP_HI, hi);
	setf(g, &in, LOOM_F_DWCONV_SRC, rbelow(g, L - m->ncb * m->inw * m->inh + 1));
	setf(g, &in, LOOM_F_DWCONV_WGT, rbelow(g, L - m->ncb * m->kw * m->kh + 1));
	setf(g, &in, LOOM_F_DWCONV_PARAM, rbelow(g, L - m->ncb * LOOM_DW_PARAM_LINES + 1));
	setf(g, &in, LOOM_F_DWCONV_DST, rbelow(g, L - m->ncb * m->ow * m->oh + 1));
	setf(g, &in, LOOM_F_DWCONV_NCB, m->ncb);
	setf(g, &in, LOOM_F_DWCONV_IN_W, m->inw);
	setf(g, &in, LOOM_F_DWCONV_IN_H, m->inh);
	setf(g, &in, LOOM_F_DWCONV_KW, m->kw);
	setf(g, &in, LOOM_F_DWCONV_KH, m->kh);
	setf(g, &in, LOOM_F_DWCONV_OUT_W, m->ow);
	setf(g, &in, LOOM_F_DWCONV_OUT_H, m->oh);
	setf(g, &in, LOOM_F_DWCONV_SW, m->sw);
	setf(g, &in, LOOM_F_DWCONV_SH, m->sh);
	setf(g, &in, LOOM_F_DWCONV_DW, m->dw);
	setf(g, &in, LOOM_F_DWCONV_DH, m->dh);
	return in;
}

loom_insn gen_legal_lut(gen *g)
{
	loom_insn in = op(LOOM_OP_LUT);
	uint32_t L = g->cfg->sp_lines, n = rrange(g, 1, 300);
	setf(g, &in, LOOM_F_LUT_SRC, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_LUT_DST, rbelow(g, L - n + 1));
	setf(g, &in, LOOM_F_LUT_TABLE, rbelow(g, L - gen_lut_lines(g->cfg) + 1));
	setf(g, &in, LOOM_F_LUT_LINES, n);
	return in;
}

/* Any legal instruction of the opcode (FINISH for others). */
loom_insn gen_legal_any(gen *g, unsigned opcode)
{
	geom m;
	switch (opcode) {
	case LOOM_OP_LOAD: return gen_legal_load(g);
	case LOOM_OP_STORE: return gen_legal_store(g, rbelow(g, 4));
	case LOOM_OP_MATMUL: return gen_legal_matmul(g, &m);
	case LOOM_OP_MARK: return legal_mark(g);
	case LOOM_OP_ELTWISE: return gen_legal_eltwise(g);
	case LOOM_OP_POOL: return gen_legal_pool(g, &m, (int)rbelow(g, 2));
	case LOOM_OP_DWCONV: return gen_legal_dwconv(g, &m);
	case LOOM_OP_LUT: return gen_legal_lut(g);
	default: return op(LOOM_OP_FINISH);
	}
}

/* ---- what bad instructions are made of ---- */

/* Fields of POOL and DWCONV in the order of their zero and window checks. */
typedef struct winf {
	enum loom_field nz[11]; /* IN_W IN_H OUT_W OUT_H NCB KW KH SW SH DW DH */
	enum loom_field src, dst, clip_lo, clip_hi;
} winf;

static const winf pool_fields = {
	{LOOM_F_POOL_IN_W, LOOM_F_POOL_IN_H, LOOM_F_POOL_OUT_W, LOOM_F_POOL_OUT_H, LOOM_F_POOL_NCB, LOOM_F_POOL_KW,
	 LOOM_F_POOL_KH, LOOM_F_POOL_SW, LOOM_F_POOL_SH, LOOM_F_POOL_DW, LOOM_F_POOL_DH},
	LOOM_F_POOL_SRC, LOOM_F_POOL_DST, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI,
};

static const winf dw_fields = {
	{LOOM_F_DWCONV_IN_W, LOOM_F_DWCONV_IN_H, LOOM_F_DWCONV_OUT_W, LOOM_F_DWCONV_OUT_H, LOOM_F_DWCONV_NCB,
	 LOOM_F_DWCONV_KW, LOOM_F_DWCONV_KH, LOOM_F_DWCONV_SW, LOOM_F_DWCONV_SH, LOOM_F_DWCONV_DW, LOOM_F_DWCONV_DH},
	LOOM_F_DWCONV_SRC, LOOM_F_DWCONV_DST, LOOM_F_DWCONV_CLIP_LO, LOOM_F_DWCONV_CLIP_HI,
};

/* A first SP line from which n lines reach past the last one. */
static uint32_t past(gen *g, uint64_t n)
{
	uint32_t L = g->cfg->sp_lines, first = n > L ? 0 : L - (uint32_t)n + 1;
	return chance(g, 60) ? first : rrange(g, first, 0xffffff);
}

/* int8(CLIP_LO) > int8(CLIP_HI), often with different unsigned order. */
static void bad_clip(gen *g, loom_insn *in, enum loom_field flo, enum loom_field fhi)
{
	int a = (int)rrange(g, 0, 254) - 127;
	int b = a - 1 - (int)rbelow(g, (uint32_t)(a + 128));
	setf(g, in, flo, (uint8_t)(int8_t)a);
	setf(g, in, fhi, (uint8_t)(int8_t)b);
}

/* A random reserved bit of opcode set in in. */
static void set_reserved(gen *g, loom_insn *in, unsigned opcode)
{
	for (;;) {
		unsigned w = rbelow(g, 8), b = rbelow(g, 32);
		if (!(loom_op_used_mask(opcode, w) >> b & 1)) {
			in->w[w] |= 1u << b;
			return;
		}
	}
}

/* ---- bad instructions: one function per kind or group of kinds ---- */

/* Kinds 0-1: opcode 0, then an opcode no instruction has (over a legal
 * LOAD/STORE/MATMUL, maybe with a reserved bit set too). */
static void bad_opcode_zero(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)g;
	(void)k;
	*in = op(0);
	*cause = LOOM_ERR_ILLEGAL_OPCODE;
	*field = LOOM_F_ANY_OPCODE;
}

static void bad_opcode_illegal(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	unsigned o;
	(void)k;
	do
		o = rbelow(g, 256);
	while (loom_op_name(o) || o == 0);
	*in = gen_legal_any(g, (unsigned[]){LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_MATMUL}[rbelow(g, 3)]);
	in->w[0] = (in->w[0] & ~0xffu) | o;
	if (chance(g, 50))
		in->w[rbelow(g, 8)] |= 1u << rbelow(g, 32);
	in->w[0] = (in->w[0] & ~0xffu) | o;
	*cause = LOOM_ERR_ILLEGAL_OPCODE;
	*field = LOOM_F_ANY_OPCODE;
}

/* Kinds 2-6: a reserved bit of LOAD, STORE, MATMUL, MARK or FINISH. */
static void bad_reserved(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	static const unsigned ops[] = {LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_MATMUL, LOOM_OP_MARK, LOOM_OP_FINISH};
	unsigned o = ops[k - 2];
	(void)field;
	*in = gen_legal_any(g, o);
	set_reserved(g, in, o);
	if (chance(g, 30)) /* and a later check failing too: reserved bits win */
		setf(g, in, o == LOOM_OP_LOAD ? LOOM_F_LOAD_ROW_WORDS : o == LOOM_OP_STORE ? LOOM_F_STORE_ROW_WORDS
			     : o == LOOM_OP_MATMUL ? LOOM_F_MATMUL_NCB : LOOM_F_ANY_OPCODE,
		     o == LOOM_OP_MARK || o == LOOM_OP_FINISH ? o : 0);
	*cause = LOOM_ERR_RESERVED_BITS;
}

/* Kinds 7-9: LOAD's TARGET, PAD_VALUE (into ACC) and ROW_WORDS. */
static void bad_load_target(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_load(g);
	setf(g, in, LOOM_F_LOAD_TARGET, rrange(g, 2, 3));
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_LOAD_TARGET;
}

static void bad_load_pad_value(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_load(g);
	setf(g, in, LOOM_F_LOAD_TARGET, 1);
	setf(g, in, LOOM_F_LOAD_PAD_VALUE, rrange(g, 1, 255));
	if (chance(g, 30))
		setf(g, in, LOOM_F_LOAD_ROW_WORDS, 0); /* PAD_VALUE is checked first */
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_LOAD_PAD_VALUE;
}

static void bad_load_row_words(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_load(g);
	unsigned tgt = loom_insn_get(in, LOOM_F_LOAD_TARGET);
	uint32_t lim = tgt ? g->C : g->R / 4;
	setf(g, in, LOOM_F_LOAD_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_LOAD_ROW_WORDS;
}

/* Kinds 10 (LOAD) and 19 (STORE): a misaligned DRAM address or stride. */
static void bad_ls_misaligned(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	int st = k == 19;
	*in = st ? gen_legal_store(g, rbelow(g, 3)) : gen_legal_load(g);
	enum loom_field fs[4] = {st ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR,
				 st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1,
				 st ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2,
				 st ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3};
	unsigned i = rbelow(g, 4);
	setf(g, in, fs[i], loom_insn_get(in, fs[i]) | rrange(g, 1, 3));
	for (unsigned j = i + 1; j < 4; j++) /* later ones may be misaligned too */
		if (chance(g, 30))
			setf(g, in, fs[j], loom_insn_get(in, fs[j]) | rrange(g, 1, 3));
	if (chance(g, 30)) /* and a range error, which comes later */
		setf(g, in, st ? LOOM_F_STORE_MEM_ADDR : LOOM_F_LOAD_MEM_ADDR, 0xffffff);
	*cause = LOOM_ERR_MISALIGNED;
	*field = fs[i];
}

/* Kinds 11 (SP) and 12 (ACC): LOAD lines past the end of the target. */
static void bad_load_mem_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	*in = gen_legal_load(g);
	unsigned tgt = k == 12;
	setf(g, in, LOOM_F_LOAD_TARGET, tgt);
	setf(g, in, LOOM_F_LOAD_PAD_VALUE, 0);
	setf(g, in, LOOM_F_LOAD_ROW_WORDS, 1);
	uint32_t lines = tgt ? c->acc_lines : c->sp_lines;
	uint64_t used = (uint64_t)loom_insn_get(in, LOOM_F_LOAD_N3) *
			(loom_insn_get(in, LOOM_F_LOAD_PAD_TOP) + loom_insn_get(in, LOOM_F_LOAD_N2) +
			 loom_insn_get(in, LOOM_F_LOAD_PAD_BOTTOM)) *
			(loom_insn_get(in, LOOM_F_LOAD_PAD_LEFT) + loom_insn_get(in, LOOM_F_LOAD_N1) +
			 loom_insn_get(in, LOOM_F_LOAD_PAD_RIGHT));
	uint32_t mem = chance(g, 60) ? (uint32_t)(lines - used + 1) : rrange(g, lines - (uint32_t)used + 1, 0xffffff);
	setf(g, in, LOOM_F_LOAD_MEM_ADDR, mem);
	if (chance(g, 30)) /* DRAM out of range too: MEM_ADDR is checked first */
		setf(g, in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)((c->dram_bytes + 64) & 0xfffffffcu));
	*cause = tgt ? LOOM_ERR_ACC_RANGE : LOOM_ERR_SP_RANGE;
	*field = LOOM_F_LOAD_MEM_ADDR;
}

/* Kinds 13 (LOAD) and 21 (STORE): rows past the end of DRAM. */
static void bad_ls_dram_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	uint64_t dram = g->cfg->dram_bytes;
	int st = k == 21;
	*in = st ? gen_legal_store(g, rbelow(g, 3)) : gen_legal_load(g);
	enum loom_field fa = st ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR;
	uint32_t n1 = loom_insn_get(in, st ? LOOM_F_STORE_N1 : LOOM_F_LOAD_N1);
	int r = rbelow(g, 3);
	if (r == 1 && n1 < 2)
		r = 2;
	if (r == 0) { /* one word past the end */
		uint64_t end = dram;
		uint64_t span = (uint64_t)(loom_insn_get(in, st ? LOOM_F_STORE_N3 : LOOM_F_LOAD_N3) - 1) *
					loom_insn_get(in, st ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3) +
				(uint64_t)(loom_insn_get(in, st ? LOOM_F_STORE_N2 : LOOM_F_LOAD_N2) - 1) *
					loom_insn_get(in, st ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2) +
				(uint64_t)(n1 - 1) * loom_insn_get(in, st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1) +
				4u * loom_insn_get(in, st ? LOOM_F_STORE_ROW_WORDS : LOOM_F_LOAD_ROW_WORDS);
		setf(g, in, fa, (uint32_t)(end - span + 4));
	} else if (r == 1) { /* a stride that wraps 32 bits */
		setf(g, in, st ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1, 0xfffffffcu);
		setf(g, in, fa, 64);
	} else {
		setf(g, in, fa, (uint32_t)(dram + 4u * rbelow(g, 1024)) & ~3u);
	}
	*cause = LOOM_ERR_DRAM_RANGE;
	*field = fa;
}

/* Kinds 14-18 and 20: SOURCE 3's own checks (N3, the residual's SP lines,
 * its 4 parameter lines), ROW_WORDS, the requantization fields of a raw
 * store, CLIP_LO > CLIP_HI, PARAM_ADDR and MEM_ADDR. */
static void bad_store_resadd(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	(void)k;
	*in = gen_legal_store(g, 3);
	uint32_t n = loom_insn_get(in, LOOM_F_STORE_N1) * loom_insn_get(in, LOOM_F_STORE_N2);
	uint32_t span = (n - 1) * loom_insn_get(in, LOOM_F_STORE_N3) + 1;
	switch (rbelow(g, 3)) {
	case 0: /* N3 (the residual's step) 0; STRIDE3 past SP, misaligned: checked later or not at all */
		setf(g, in, LOOM_F_STORE_N3, 0);
		if (chance(g, 30))
			setf(g, in, LOOM_F_STORE_STRIDE3, r32(g));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_N3;
		break;
	case 1: /* residual lines past the end of SP */
		setf(g, in, LOOM_F_STORE_STRIDE3, chance(g, 50) ? c->sp_lines - span + 1
							      : rrange(g, c->sp_lines - span + 1, 0xffffffffu));
		*cause = LOOM_ERR_SP_RANGE;
		*field = LOOM_F_STORE_STRIDE3;
		break;
	default: /* line PARAM_ADDR + 3 past the end of ACC (PARAM_ADDR + 2 inside) */
		setf(g, in, LOOM_F_STORE_PARAM_ADDR, chance(g, 60) ? c->acc_lines - 3 : rrange(g, c->acc_lines - 3, 0xffff));
		*cause = LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_STORE_PARAM_ADDR;
		break;
	}
}

static void bad_store_row_words(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	unsigned src = rbelow(g, 4);
	*in = gen_legal_store(g, src);
	uint32_t lim = store_rw_lim(g, src);
	setf(g, in, LOOM_F_STORE_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_STORE_ROW_WORDS;
}

static void bad_store_field(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	static const enum loom_field q[4] = {LOOM_F_STORE_ZERO_POINT, LOOM_F_STORE_PARAM_ADDR, LOOM_F_STORE_CLIP_LO,
					     LOOM_F_STORE_CLIP_HI};
	(void)k;
	*in = gen_legal_store(g, rbelow(g, 2));
	unsigned i = rbelow(g, 4);
	setf(g, in, q[i], rrange(g, 1, 255));
	for (unsigned j = i + 1; j < 4; j++)
		if (chance(g, 40))
			setf(g, in, q[j], rrange(g, 1, 255));
	*cause = LOOM_ERR_BAD_FIELD;
	*field = q[i];
}

static void bad_store_clip(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_store(g, rrange(g, 2, 3));
	int a = (int)rrange(g, 0, 254) - 127;
	int b = a - 1 - (int)rbelow(g, (uint32_t)(a + 128));
	setf(g, in, LOOM_F_STORE_CLIP_LO, (uint8_t)(int8_t)a);
	setf(g, in, LOOM_F_STORE_CLIP_HI, (uint8_t)(int8_t)b);
	if (chance(g, 30)) /* and a param range error, checked later */
		setf(g, in, LOOM_F_STORE_PARAM_ADDR, 0xffff);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_STORE_CLIP_LO;
}

static void bad_store_param_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	(void)k;
	*in = gen_legal_store(g, 2);
	setf(g, in, LOOM_F_STORE_PARAM_ADDR, chance(g, 60) ? c->acc_lines - 2 : rrange(g, c->acc_lines - 2, 0xffff));
	*cause = LOOM_ERR_ACC_RANGE;
	*field = LOOM_F_STORE_PARAM_ADDR;
}

static void bad_store_mem_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	(void)k;
	unsigned src = rbelow(g, 3);
	*in = gen_legal_store(g, src);
	uint32_t lines = src == 0 ? c->sp_lines : c->acc_lines;
	uint32_t n = loom_insn_get(in, LOOM_F_STORE_N1) * loom_insn_get(in, LOOM_F_STORE_N2) *
		     loom_insn_get(in, LOOM_F_STORE_N3);
	setf(g, in, LOOM_F_STORE_MEM_ADDR, chance(g, 60) ? lines - n + 1 : rrange(g, lines - n + 1, 0xffffff));
	*cause = src == 0 ? LOOM_ERR_SP_RANGE : LOOM_ERR_ACC_RANGE;
	*field = LOOM_F_STORE_MEM_ADDR;
}

/* Kind 22: a MATMUL field that may not be zero is, and maybe later ones. */
static void bad_matmul_zero_field(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	static const enum loom_field nz[] = {
		LOOM_F_MATMUL_IN_W, LOOM_F_MATMUL_IN_H, LOOM_F_MATMUL_OUT_W, LOOM_F_MATMUL_OUT_H,
		LOOM_F_MATMUL_NCB, LOOM_F_MATMUL_KW, LOOM_F_MATMUL_KH, LOOM_F_MATMUL_SW,
		LOOM_F_MATMUL_SH, LOOM_F_MATMUL_DW, LOOM_F_MATMUL_DH,
	};
	geom m;
	(void)k;
	*in = gen_legal_matmul(g, &m);
	unsigned i = rbelow(g, 11);
	setf(g, in, nz[i], 0);
	for (unsigned j = i + 1; j < 11; j++)
		if (chance(g, 20))
			setf(g, in, nz[j], 0);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = nz[i];
}

/* Kinds 23 (IN_W) and 24 (IN_H): an input smaller than the window needs. */
static void bad_matmul_in(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	*in = gen_legal_matmul(g, &m);
	int w = k == 23;
	uint32_t need = w ? (m.ow - 1) * m.sw + (m.kw - 1) * m.dw + 1 : (m.oh - 1) * m.sh + (m.kh - 1) * m.dh + 1;
	if (need <= 1) { /* make the kernel reach further */
		setf(g, in, w ? LOOM_F_MATMUL_KW : LOOM_F_MATMUL_KH, 2);
		need = w ? (m.ow - 1) * m.sw + m.dw + 1 : (m.oh - 1) * m.sh + m.dh + 1;
	}
	setf(g, in, w ? LOOM_F_MATMUL_IN_W : LOOM_F_MATMUL_IN_H, rrange(g, 1, need - 1));
	if (w && chance(g, 30)) { /* IN_H wrong too: IN_W is checked first */
		setf(g, in, LOOM_F_MATMUL_IN_H, 1);
		setf(g, in, LOOM_F_MATMUL_OUT_H, 2);
	}
	setf(g, in, LOOM_F_MATMUL_ACT_ADDR, 0);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = w ? LOOM_F_MATMUL_IN_W : LOOM_F_MATMUL_IN_H;
}

/* Kinds 25-27: activations, weights (SP) or the output tile (ACC) past the
 * end, maybe with a later address out of range too. */
static void bad_matmul_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	geom m;
	*in = gen_legal_matmul(g, &m);
	uint32_t act_lines = m.ncb * m.inh * m.inw, wl = m.ncb * m.kh * m.kw * g->C, P = m.ow * m.oh;
	if (k == 25) {
		setf(g, in, LOOM_F_MATMUL_ACT_ADDR,
		     chance(g, 60) ? c->sp_lines - act_lines + 1 : rrange(g, c->sp_lines - act_lines + 1, 0xffffff));
		if (chance(g, 30))
			setf(g, in, LOOM_F_MATMUL_WGT_ADDR, 0xffffff);
		*cause = LOOM_ERR_SP_RANGE;
		*field = LOOM_F_MATMUL_ACT_ADDR;
	} else if (k == 26) {
		setf(g, in, LOOM_F_MATMUL_WGT_ADDR,
		     chance(g, 60) ? c->sp_lines - wl + 1 : rrange(g, c->sp_lines - wl + 1, 0xffffff));
		if (chance(g, 30))
			setf(g, in, LOOM_F_MATMUL_ACC_ADDR, 0xffff);
		*cause = LOOM_ERR_SP_RANGE;
		*field = LOOM_F_MATMUL_WGT_ADDR;
	} else {
		setf(g, in, LOOM_F_MATMUL_ACC_ADDR,
		     chance(g, 60) ? c->acc_lines - P + 1 : rrange(g, c->acc_lines - P + 1, 0xffff));
		*cause = LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_MATMUL_ACC_ADDR;
	}
}

/* Kinds 28-29: a misaligned MARK record, or one past the end of DRAM. */
static void bad_mark_misaligned(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = legal_mark(g);
	setf(g, in, LOOM_F_MARK_DRAM_ADDR, loom_insn_get(in, LOOM_F_MARK_DRAM_ADDR) | rrange(g, 1, 3));
	*cause = LOOM_ERR_MISALIGNED;
	*field = LOOM_F_MARK_DRAM_ADDR;
}

static void bad_mark_dram_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	uint64_t dram = g->cfg->dram_bytes;
	(void)k;
	*in = legal_mark(g);
	setf(g, in, LOOM_F_MARK_DRAM_ADDR,
	     chance(g, 50) ? (uint32_t)(dram - 60) : chance(g, 50) ? (uint32_t)dram : 0xfffffffcu);
	*cause = LOOM_ERR_DRAM_RANGE;
	*field = LOOM_F_MARK_DRAM_ADDR;
}

/* Kinds 30-33: a reserved bit of ELTWISE, POOL, DWCONV or LUT. */
static void bad_reserved_vec(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	unsigned o = vec_ops[k - 30];
	(void)field;
	*in = gen_legal_any(g, o);
	set_reserved(g, in, o);
	if (chance(g, 30)) { /* and a field check failing too: reserved bits win */
		if (o == LOOM_OP_ELTWISE)
			setf(g, in, LOOM_F_ELTWISE_FUNC, 3);
		else if (o == LOOM_OP_POOL)
			setf(g, in, LOOM_F_POOL_NCB, 0);
		else if (o == LOOM_OP_DWCONV)
			setf(g, in, LOOM_F_DWCONV_KW, 0);
		else
			setf(g, in, LOOM_F_LUT_TABLE, 0xffffff);
	}
	*cause = LOOM_ERR_RESERVED_BITS;
}

/* Kinds 34-41: ELTWISE's FUNC, B_MODE, the input multipliers of a MUL,
 * CLIP_LO > CLIP_HI, and SRC_A, SRC_B, DST past the end. */
static void bad_eltwise_func(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_eltwise(g);
	setf(g, in, LOOM_F_ELTWISE_FUNC, rrange(g, 2, 3));
	if (chance(g, 30))
		setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_ELTWISE_FUNC;
}

static void bad_eltwise_b_mode(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_eltwise(g);
	setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
	if (chance(g, 30)) {
		setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
		setf(g, in, LOOM_F_ELTWISE_MULT_A, rrange(g, 1, 0xffff));
	}
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_ELTWISE_B_MODE;
}

/* 36: MULT_A of a MUL not zero, 37: MULT_B */
static void bad_eltwise_mul_mult(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	*in = gen_legal_eltwise(g);
	setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
	setf(g, in, LOOM_F_ELTWISE_MULT_A, k == 36 ? rrange(g, 1, 0xffff) : 0);
	setf(g, in, LOOM_F_ELTWISE_MULT_B, k == 37 || chance(g, 40) ? rrange(g, 1, 0xffff) : 0);
	if (chance(g, 30))
		bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = k == 36 ? LOOM_F_ELTWISE_MULT_A : LOOM_F_ELTWISE_MULT_B;
}

static void bad_eltwise_clip(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	(void)k;
	*in = gen_legal_eltwise(g);
	bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
	if (chance(g, 30))
		setf(g, in, LOOM_F_ELTWISE_SRC_A, 0xffffff);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = LOOM_F_ELTWISE_CLIP_LO;
}

/* A legal ELTWISE; *n: its A (and DST) lines, *nb: its B lines. */
static loom_insn eltwise_lines(gen *g, uint32_t *n, uint32_t *nb)
{
	loom_insn in = gen_legal_eltwise(g);
	uint32_t planes = loom_insn_get(&in, LOOM_F_ELTWISE_PLANES);
	*n = planes * loom_insn_get(&in, LOOM_F_ELTWISE_PLANE_LINES);
	unsigned bm = loom_insn_get(&in, LOOM_F_ELTWISE_B_MODE);
	*nb = bm == LOOM_BMODE_LINE ? *n : bm == LOOM_BMODE_PLANE ? planes : 1;
	return in;
}

static void bad_eltwise_src_a_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	uint32_t n, nb;
	(void)k;
	*in = eltwise_lines(g, &n, &nb);
	if (chance(g, 15)) { /* PLANES * PLANE_LINES far beyond 32 bits of lines */
		setf(g, in, LOOM_F_ELTWISE_PLANES, rrange(g, 0x8000, 0xffff));
		setf(g, in, LOOM_F_ELTWISE_PLANE_LINES, rrange(g, 0x800000, 0xffffff));
		setf(g, in, LOOM_F_ELTWISE_SRC_A, rbelow(g, 1u << 24));
	} else {
		setf(g, in, LOOM_F_ELTWISE_SRC_A, past(g, n));
		if (chance(g, 30))
			setf(g, in, LOOM_F_ELTWISE_SRC_B, past(g, nb));
	}
	*cause = LOOM_ERR_SP_RANGE;
	*field = LOOM_F_ELTWISE_SRC_A;
}

static void bad_eltwise_src_b_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	uint32_t n, nb;
	(void)k;
	*in = eltwise_lines(g, &n, &nb);
	setf(g, in, LOOM_F_ELTWISE_SRC_B, past(g, nb));
	if (chance(g, 30))
		setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
	*cause = LOOM_ERR_SP_RANGE;
	*field = LOOM_F_ELTWISE_SRC_B;
}

static void bad_eltwise_dst_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	uint32_t n, nb;
	(void)k;
	*in = eltwise_lines(g, &n, &nb);
	setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
	*cause = LOOM_ERR_SP_RANGE;
	*field = LOOM_F_ELTWISE_DST;
}

/* Kinds 42-47 (POOL) and 48-54 (DWCONV). A legal POOL (MAX for kind 42,
 * else either function) or DWCONV in *in, its geometry in *m; returns its
 * fields. */
static const winf *window_insn(gen *g, unsigned k, loom_insn *in, geom *m)
{
	int dwc = k >= 48;
	const winf *f = dwc ? &dw_fields : &pool_fields;
	*in = dwc ? gen_legal_dwconv(g, m) : gen_legal_pool(g, m, k == 42 ? 0 : (int)rbelow(g, 2));
	return f;
}

/* 42: the fields of AVG (zero points, shift, multiplier) set in a MAX */
static void bad_pool_max_field(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	static const enum loom_field q[4] = {LOOM_F_POOL_ZP_IN, LOOM_F_POOL_ZP_OUT, LOOM_F_POOL_SHIFT, LOOM_F_POOL_MULT};
	static const uint32_t maxv[4] = {255, 255, 31, 0xffffffffu};
	geom m;
	window_insn(g, k, in, &m);
	unsigned i = rbelow(g, 4);
	for (unsigned j = i; j < 4; j++)
		if (j == i || chance(g, 40))
			setf(g, in, q[j], j == 3 ? r32(g) | 1u << rbelow(g, 32) : rrange(g, 1, maxv[j]));
	if (chance(g, 20))
		bad_clip(g, in, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = q[i];
}

/* 43, 48: clip; a zero field too: the clip is checked first */
static void bad_window_clip(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	const winf *f = window_insn(g, k, in, &m);
	bad_clip(g, in, f->clip_lo, f->clip_hi);
	if (chance(g, 30))
		setf(g, in, f->nz[chance(g, 50) ? 4 : 5], 0);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = f->clip_lo;
}

/* 44, 49: a field that may not be zero is, and maybe later ones */
static void bad_window_zero_field(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	const winf *f = window_insn(g, k, in, &m);
	unsigned i = rbelow(g, 11);
	setf(g, in, f->nz[i], 0);
	for (unsigned j = i + 1; j < 11; j++)
		if (chance(g, 20))
			setf(g, in, f->nz[j], 0);
	*cause = LOOM_ERR_BAD_FIELD;
	*field = f->nz[i];
}

/* 45, 50: an input smaller than the window needs */
static void bad_window_in(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	const winf *f = window_insn(g, k, in, &m);
	/* nz: IN_W IN_H OUT_W OUT_H NCB KW KH SW SH DW DH */
	int w = chance(g, 50);
	uint32_t need = w ? (m.ow - 1) * m.sw + (m.kw - 1) * m.dw + 1 : (m.oh - 1) * m.sh + (m.kh - 1) * m.dh + 1;
	if (need <= 1) { /* make the window reach further */
		setf(g, in, f->nz[w ? 5 : 6], 2);
		need = w ? (m.ow - 1) * m.sw + m.dw + 1 : (m.oh - 1) * m.sh + m.dh + 1;
	}
	setf(g, in, f->nz[w ? 0 : 1], rrange(g, 1, need - 1));
	if (w && chance(g, 30)) { /* IN_H wrong too: IN_W is checked first */
		setf(g, in, f->nz[1], 1);
		setf(g, in, f->nz[3], 2);
	}
	*cause = LOOM_ERR_BAD_FIELD;
	*field = f->nz[w ? 0 : 1];
}

/* 46, 51: the input tile past the end */
static void bad_window_src_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	const winf *f = window_insn(g, k, in, &m);
	uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
	if (chance(g, 15)) { /* billions of lines */
		setf(g, in, f->nz[4], 255);
		setf(g, in, f->nz[0], 4095);
		setf(g, in, f->nz[1], 4095);
		setf(g, in, f->src, rbelow(g, 1u << 24));
	} else {
		setf(g, in, f->src, past(g, nin));
	}
	if (chance(g, 30))
		setf(g, in, f->dst, past(g, nout));
	*cause = LOOM_ERR_SP_RANGE;
	*field = f->src;
}

/* 47, 54: the output tile past the end */
static void bad_window_dst_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	const winf *f = window_insn(g, k, in, &m);
	setf(g, in, f->dst, past(g, m.ncb * m.ow * m.oh));
	*cause = LOOM_ERR_SP_RANGE;
	*field = f->dst;
}

/* 52: DWCONV's weights past the end (maybe its parameters too) */
static void bad_dwconv_wgt_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	window_insn(g, k, in, &m);
	setf(g, in, LOOM_F_DWCONV_WGT, past(g, m.ncb * m.kw * m.kh));
	if (chance(g, 30))
		setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
	*cause = LOOM_ERR_SP_RANGE;
	*field = LOOM_F_DWCONV_WGT;
}

/* 53: DWCONV's parameters past the end (maybe its output too) */
static void bad_dwconv_param_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	geom m;
	window_insn(g, k, in, &m);
	setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
	if (chance(g, 30))
		setf(g, in, LOOM_F_DWCONV_DST, past(g, m.ncb * m.ow * m.oh));
	*cause = LOOM_ERR_SP_RANGE;
	*field = LOOM_F_DWCONV_PARAM;
}

/* Kinds 55-57: LUT's SRC, DST or TABLE past the end (maybe a later one too). */
static void bad_lut_range(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	static const enum loom_field lf[3] = {LOOM_F_LUT_SRC, LOOM_F_LUT_DST, LOOM_F_LUT_TABLE};
	const loom_hwcfg *c = g->cfg;
	*in = gen_legal_lut(g);
	uint32_t n = loom_insn_get(in, LOOM_F_LUT_LINES);
	unsigned i = k - 55;
	setf(g, in, lf[i], past(g, i == 2 ? gen_lut_lines(c) : n));
	if (i < 2 && chance(g, 30)) /* a later one too */
		setf(g, in, lf[i + 1], past(g, i == 1 ? gen_lut_lines(c) : n));
	*cause = LOOM_ERR_SP_RANGE;
	*field = lf[i];
}

/* ------------------------------------------------------------ the bad kinds */

/* A bad instruction of kind k in *in; *cause and *field (preset to
 * LOOM_INFO_NONE) what loom_insn_check must report. */
typedef void (*bad_fn)(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field);

/* Every kind, in the order of their numbers (program i of "loom cosim --bad"
 * has kind (seed + i) mod the count). make is NULL for the kinds that are
 * not decode checks: gen_bad.c builds those programs by name. */
static const struct bad_kind {
	const char *name;
	bad_fn make;
} bad_kinds[] = {
	/* 0 */ {"opcode-zero", bad_opcode_zero},
	{"opcode-illegal", bad_opcode_illegal},
	{"reserved-load", bad_reserved},
	{"reserved-store", bad_reserved},
	{"reserved-matmul", bad_reserved},
	{"reserved-mark", bad_reserved},
	{"reserved-finish", bad_reserved},
	{"load-target", bad_load_target},
	{"load-pad-value", bad_load_pad_value},
	{"load-row-words", bad_load_row_words},
	/* 10 */ {"load-misaligned", bad_ls_misaligned},
	{"load-sp-range", bad_load_mem_range},
	{"load-acc-range", bad_load_mem_range},
	{"load-dram-range", bad_ls_dram_range},
	{"store-resadd", bad_store_resadd},
	{"store-row-words", bad_store_row_words},
	{"store-field", bad_store_field},
	{"store-clip", bad_store_clip},
	{"store-param-range", bad_store_param_range},
	{"store-misaligned", bad_ls_misaligned},
	/* 20 */ {"store-mem-range", bad_store_mem_range},
	{"store-dram-range", bad_ls_dram_range},
	{"matmul-zero-field", bad_matmul_zero_field},
	{"matmul-in-w", bad_matmul_in},
	{"matmul-in-h", bad_matmul_in},
	{"matmul-act-range", bad_matmul_range},
	{"matmul-wgt-range", bad_matmul_range},
	{"matmul-acc-range", bad_matmul_range},
	{"mark-misaligned", bad_mark_misaligned},
	{"mark-dram-range", bad_mark_dram_range},
	/* 30: the vector unit */
	{"reserved-eltwise", bad_reserved_vec},
	{"reserved-pool", bad_reserved_vec},
	{"reserved-dwconv", bad_reserved_vec},
	{"reserved-lut", bad_reserved_vec},
	{"eltwise-func", bad_eltwise_func},
	{"eltwise-b-mode", bad_eltwise_b_mode},
	{"eltwise-mul-mult-a", bad_eltwise_mul_mult},
	{"eltwise-mul-mult-b", bad_eltwise_mul_mult},
	{"eltwise-clip", bad_eltwise_clip},
	{"eltwise-src-a-range", bad_eltwise_src_a_range},
	/* 40 */ {"eltwise-src-b-range", bad_eltwise_src_b_range},
	{"eltwise-dst-range", bad_eltwise_dst_range},
	{"pool-max-field", bad_pool_max_field},
	{"pool-clip", bad_window_clip},
	{"pool-zero-field", bad_window_zero_field},
	{"pool-window", bad_window_in},
	{"pool-src-range", bad_window_src_range},
	{"pool-dst-range", bad_window_dst_range},
	{"dwconv-clip", bad_window_clip},
	{"dwconv-zero-field", bad_window_zero_field},
	/* 50 */ {"dwconv-window", bad_window_in},
	{"dwconv-src-range", bad_window_src_range},
	{"dwconv-wgt-range", bad_dwconv_wgt_range},
	{"dwconv-param-range", bad_dwconv_param_range},
	{"dwconv-dst-range", bad_window_dst_range},
	{"lut-src-range", bad_lut_range},
	{"lut-dst-range", bad_lut_range},
	{"lut-table-range", bad_lut_range},
	/* 58: not decode checks (gen_bad.c) */
	{"deadlock-finish", NULL},
	{"deadlock-mark", NULL},
	/* 60 */ {"deadlock-full-queue", NULL},
	{"deadlock-full-other", NULL},
	{"fetch-range", NULL},
	{"insn-base-range", NULL},
	{"insn-base-misaligned", NULL},
	{"edge-legal", NULL},
};
#define NBAD (sizeof bad_kinds / sizeof bad_kinds[0])

unsigned loom_cosim_bad_kinds(void) { return NBAD; }
const char *loom_cosim_bad_name(unsigned kind) { return kind < NBAD ? bad_kinds[kind].name : "?"; }

/* The decode-time bad instruction of kind k; *cause and *field predicted
 * from docs/ISA.md. 0, or -1 when the kind is not a decode check. */
int gen_bad_insn(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	*field = LOOM_INFO_NONE;
	if (k >= NBAD || !bad_kinds[k].make)
		return -1;
	bad_kinds[k].make(g, k, in, cause, field);
	return 0;
}
