/* gen_badinsn.c - bad instructions for the co-simulation program generator
 * (cosim/gen_internal.h): legal instructions with random fields, and the
 * table of bad-program kinds, one function per kind (or per group of kinds
 * that share code) making an instruction the decoder must reject with the
 * error and field docs/ISA.md predicts. The kinds that are not decode
 * checks (deadlocks, fetch errors, edge-legal) are made in gen_bad.c. */
#include "cosim/gen_internal.h"

/* ------------------------------------------------------------ bad programs */

static const char *const bad_names[] = {
	"opcode-zero",        "opcode-illegal",     "reserved-load",      "reserved-store",
	"reserved-matmul",    "reserved-mark",      "reserved-finish",    "load-target",
	"load-pad-value",     "load-row-words",     "load-misaligned",    "load-sp-range",
	"load-acc-range",     "load-dram-range",    "store-source",       "store-row-words",
	"store-field",        "store-clip",         "store-param-range",  "store-misaligned",
	"store-mem-range",    "store-dram-range",   "matmul-zero-field",  "matmul-in-w",
	"matmul-in-h",        "matmul-act-range",   "matmul-wgt-range",   "matmul-acc-range",
	"mark-misaligned",    "mark-dram-range",
	/* 30.. the vector unit */
	"reserved-eltwise",   "reserved-pool",      "reserved-dwconv",    "reserved-lut",
	"eltwise-func",       "eltwise-b-mode",     "eltwise-mul-mult-a", "eltwise-mul-mult-b",
	"eltwise-clip",       "eltwise-src-a-range", "eltwise-src-b-range", "eltwise-dst-range",
	"pool-max-field",     "pool-clip",          "pool-zero-field",    "pool-window",
	"pool-src-range",     "pool-dst-range",     "dwconv-clip",        "dwconv-zero-field",
	"dwconv-window",      "dwconv-src-range",   "dwconv-wgt-range",   "dwconv-param-range",
	"dwconv-dst-range",   "lut-src-range",      "lut-dst-range",      "lut-table-range",
	/* not decode checks */
	"deadlock-finish",    "deadlock-mark",
	"deadlock-full-queue", "deadlock-full-other", "fetch-range",      "insn-base-range",
	"insn-base-misaligned", "edge-legal",
};
#define NBAD (sizeof bad_names / sizeof bad_names[0])

unsigned loom_cosim_bad_kinds(void) { return NBAD; }
const char *loom_cosim_bad_name(unsigned kind) { return kind < NBAD ? bad_names[kind] : "?"; }

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

loom_insn gen_legal_store(gen *g, unsigned src)
{
	loom_insn in = op(LOOM_OP_STORE);
	uint32_t lines = src == 0 ? g->cfg->sp_lines : g->cfg->acc_lines;
	setf(g, &in, LOOM_F_STORE_SOURCE, src);
	setf(g, &in, LOOM_F_STORE_ROW_WORDS, rrange(g, 1, src == 0 ? g->R / 4 : src == 1 ? g->C : g->C / 4));
	uint32_t n1 = rrange(g, 1, 8), n2 = rrange(g, 1, 4), n3 = rrange(g, 1, 2);
	setf(g, &in, LOOM_F_STORE_N1, n1);
	setf(g, &in, LOOM_F_STORE_N2, n2);
	setf(g, &in, LOOM_F_STORE_N3, n3);
	setf(g, &in, LOOM_F_STORE_MEM_ADDR, rbelow(g, lines - n1 * n2 * n3));
	setf(g, &in, LOOM_F_STORE_STRIDE1, 4u * rbelow(g, 64));
	setf(g, &in, LOOM_F_STORE_STRIDE2, 4u * rbelow(g, 1024));
	setf(g, &in, LOOM_F_STORE_STRIDE3, 4u * rbelow(g, 4096));
	setf(g, &in, LOOM_F_STORE_DRAM_ADDR, 4u * rbelow(g, (uint32_t)(g->cfg->dram_bytes / 8)));
	if (src == 2) {
		int8_t a = (int8_t)r32(g), b = (int8_t)r32(g);
		setf(g, &in, LOOM_F_STORE_ZERO_POINT, r32(g) & 0xff);
		setf(g, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)(a < b ? a : b));
		setf(g, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)(a < b ? b : a));
		setf(g, &in, LOOM_F_STORE_PARAM_ADDR, rbelow(g, g->cfg->acc_lines - 2));
	}
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

loom_insn gen_legal_any(gen *g, unsigned opcode)
{
	geom m;
	switch (opcode) {
	case LOOM_OP_LOAD: return gen_legal_load(g);
	case LOOM_OP_STORE: return gen_legal_store(g, rbelow(g, 3));
	case LOOM_OP_MATMUL: return gen_legal_matmul(g, &m);
	case LOOM_OP_MARK: return legal_mark(g);
	case LOOM_OP_ELTWISE: return gen_legal_eltwise(g);
	case LOOM_OP_POOL: return gen_legal_pool(g, &m, (int)rbelow(g, 2));
	case LOOM_OP_DWCONV: return gen_legal_dwconv(g, &m);
	case LOOM_OP_LUT: return gen_legal_lut(g);
	default: return op(LOOM_OP_FINISH);
	}
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

/* The decode-time bad instruction of kind k; *cause and *field predicted
 * from docs/ISA.md. 0, or -1 when the kind is not a decode check. */
int gen_bad_insn(gen *g, unsigned k, loom_insn *in, uint32_t *cause, uint32_t *field)
{
	const loom_hwcfg *c = g->cfg;
	uint32_t R = g->R, Cc = g->C;
	uint64_t dram = c->dram_bytes;
	geom m;
	*field = LOOM_INFO_NONE;
	switch (k) {
	case 0:
		*in = op(0);
		*cause = LOOM_ERR_ILLEGAL_OPCODE;
		*field = LOOM_F_ANY_OPCODE;
		return 0;
	case 1: {
		unsigned o;
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
		return 0;
	}
	case 2: case 3: case 4: case 5: case 6: {
		static const unsigned ops[] = {LOOM_OP_LOAD, LOOM_OP_STORE, LOOM_OP_MATMUL, LOOM_OP_MARK, LOOM_OP_FINISH};
		unsigned o = ops[k - 2];
		*in = gen_legal_any(g, o);
		set_reserved(g, in, o);
		if (chance(g, 30)) /* and a later check failing too: reserved bits win */
			setf(g, in, o == LOOM_OP_LOAD ? LOOM_F_LOAD_ROW_WORDS : o == LOOM_OP_STORE ? LOOM_F_STORE_ROW_WORDS
				     : o == LOOM_OP_MATMUL ? LOOM_F_MATMUL_NCB : LOOM_F_ANY_OPCODE,
			     o == LOOM_OP_MARK || o == LOOM_OP_FINISH ? o : 0);
		*cause = LOOM_ERR_RESERVED_BITS;
		return 0;
	}
	case 7:
		*in = gen_legal_load(g);
		setf(g, in, LOOM_F_LOAD_TARGET, rrange(g, 2, 3));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_TARGET;
		return 0;
	case 8:
		*in = gen_legal_load(g);
		setf(g, in, LOOM_F_LOAD_TARGET, 1);
		setf(g, in, LOOM_F_LOAD_PAD_VALUE, rrange(g, 1, 255));
		if (chance(g, 30))
			setf(g, in, LOOM_F_LOAD_ROW_WORDS, 0); /* PAD_VALUE is checked first */
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_PAD_VALUE;
		return 0;
	case 9: {
		*in = gen_legal_load(g);
		unsigned tgt = loom_insn_get(in, LOOM_F_LOAD_TARGET);
		uint32_t lim = tgt ? Cc : R / 4;
		setf(g, in, LOOM_F_LOAD_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_LOAD_ROW_WORDS;
		return 0;
	}
	case 10: case 19: {
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
		return 0;
	}
	case 11: case 12: {
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
			setf(g, in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)((dram + 64) & 0xfffffffcu));
		*cause = tgt ? LOOM_ERR_ACC_RANGE : LOOM_ERR_SP_RANGE;
		*field = LOOM_F_LOAD_MEM_ADDR;
		return 0;
	}
	case 13: case 21: {
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
		return 0;
	}
	case 14:
		*in = gen_legal_store(g, rbelow(g, 2));
		setf(g, in, LOOM_F_STORE_SOURCE, 3);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_SOURCE;
		return 0;
	case 15: {
		unsigned src = rbelow(g, 3);
		*in = gen_legal_store(g, src);
		uint32_t lim = src == 0 ? R / 4 : src == 1 ? Cc : Cc / 4;
		setf(g, in, LOOM_F_STORE_ROW_WORDS, chance(g, 40) ? 0 : chance(g, 60) ? lim + 1 : rrange(g, lim + 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_ROW_WORDS;
		return 0;
	}
	case 16: {
		*in = gen_legal_store(g, rbelow(g, 2));
		static const enum loom_field q[4] = {LOOM_F_STORE_ZERO_POINT, LOOM_F_STORE_PARAM_ADDR,
						     LOOM_F_STORE_CLIP_LO, LOOM_F_STORE_CLIP_HI};
		unsigned i = rbelow(g, 4);
		setf(g, in, q[i], rrange(g, 1, 255));
		for (unsigned j = i + 1; j < 4; j++)
			if (chance(g, 40))
				setf(g, in, q[j], rrange(g, 1, 255));
		*cause = LOOM_ERR_BAD_FIELD;
		*field = q[i];
		return 0;
	}
	case 17: {
		*in = gen_legal_store(g, 2);
		int a = (int)rrange(g, 0, 254) - 127;
		int b = a - 1 - (int)rbelow(g, (uint32_t)(a + 128));
		setf(g, in, LOOM_F_STORE_CLIP_LO, (uint8_t)(int8_t)a);
		setf(g, in, LOOM_F_STORE_CLIP_HI, (uint8_t)(int8_t)b);
		if (chance(g, 30)) /* and a param range error, checked later */
			setf(g, in, LOOM_F_STORE_PARAM_ADDR, 0xffff);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = LOOM_F_STORE_CLIP_LO;
		return 0;
	}
	case 18:
		*in = gen_legal_store(g, 2);
		setf(g, in, LOOM_F_STORE_PARAM_ADDR, chance(g, 60) ? c->acc_lines - 2 : rrange(g, c->acc_lines - 2, 0xffff));
		*cause = LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_STORE_PARAM_ADDR;
		return 0;
	case 20: {
		unsigned src = rbelow(g, 3);
		*in = gen_legal_store(g, src);
		uint32_t lines = src == 0 ? c->sp_lines : c->acc_lines;
		uint32_t n = loom_insn_get(in, LOOM_F_STORE_N1) * loom_insn_get(in, LOOM_F_STORE_N2) *
			     loom_insn_get(in, LOOM_F_STORE_N3);
		setf(g, in, LOOM_F_STORE_MEM_ADDR, chance(g, 60) ? lines - n + 1 : rrange(g, lines - n + 1, 0xffffff));
		*cause = src == 0 ? LOOM_ERR_SP_RANGE : LOOM_ERR_ACC_RANGE;
		*field = LOOM_F_STORE_MEM_ADDR;
		return 0;
	}
	case 22: {
		static const enum loom_field nz[] = {
			LOOM_F_MATMUL_IN_W, LOOM_F_MATMUL_IN_H, LOOM_F_MATMUL_OUT_W, LOOM_F_MATMUL_OUT_H,
			LOOM_F_MATMUL_NCB, LOOM_F_MATMUL_KW, LOOM_F_MATMUL_KH, LOOM_F_MATMUL_SW,
			LOOM_F_MATMUL_SH, LOOM_F_MATMUL_DW, LOOM_F_MATMUL_DH,
		};
		*in = gen_legal_matmul(g, &m);
		unsigned i = rbelow(g, 11);
		setf(g, in, nz[i], 0);
		for (unsigned j = i + 1; j < 11; j++)
			if (chance(g, 20))
				setf(g, in, nz[j], 0);
		*cause = LOOM_ERR_BAD_FIELD;
		*field = nz[i];
		return 0;
	}
	case 23: case 24: {
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
		return 0;
	}
	case 25: case 26: case 27: {
		*in = gen_legal_matmul(g, &m);
		uint32_t act_lines = m.ncb * m.inh * m.inw, wl = m.ncb * m.kh * m.kw * Cc, P = m.ow * m.oh;
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
		return 0;
	}
	case 28:
		*in = legal_mark(g);
		setf(g, in, LOOM_F_MARK_DRAM_ADDR, loom_insn_get(in, LOOM_F_MARK_DRAM_ADDR) | rrange(g, 1, 3));
		*cause = LOOM_ERR_MISALIGNED;
		*field = LOOM_F_MARK_DRAM_ADDR;
		return 0;
	case 29:
		*in = legal_mark(g);
		setf(g, in, LOOM_F_MARK_DRAM_ADDR,
		     chance(g, 50) ? (uint32_t)(dram - 60) : chance(g, 50) ? (uint32_t)dram : 0xfffffffcu);
		*cause = LOOM_ERR_DRAM_RANGE;
		*field = LOOM_F_MARK_DRAM_ADDR;
		return 0;
	case 30: case 31: case 32: case 33: {
		unsigned o = vec_ops[k - 30];
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
		return 0;
	}
	case 34: case 35: case 36: case 37: case 38: case 39: case 40: case 41: {
		*in = gen_legal_eltwise(g);
		uint32_t planes = loom_insn_get(in, LOOM_F_ELTWISE_PLANES);
		uint32_t n = planes * loom_insn_get(in, LOOM_F_ELTWISE_PLANE_LINES);
		unsigned bm = loom_insn_get(in, LOOM_F_ELTWISE_B_MODE);
		uint32_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
		*cause = LOOM_ERR_BAD_FIELD;
		switch (k) {
		case 34:
			setf(g, in, LOOM_F_ELTWISE_FUNC, rrange(g, 2, 3));
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
			*field = LOOM_F_ELTWISE_FUNC;
			break;
		case 35:
			setf(g, in, LOOM_F_ELTWISE_B_MODE, 3);
			if (chance(g, 30)) {
				setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
				setf(g, in, LOOM_F_ELTWISE_MULT_A, rrange(g, 1, 0xffff));
			}
			*field = LOOM_F_ELTWISE_B_MODE;
			break;
		case 36: case 37:
			setf(g, in, LOOM_F_ELTWISE_FUNC, LOOM_ELT_MUL);
			setf(g, in, LOOM_F_ELTWISE_MULT_A, k == 36 ? rrange(g, 1, 0xffff) : 0);
			setf(g, in, LOOM_F_ELTWISE_MULT_B, k == 37 || chance(g, 40) ? rrange(g, 1, 0xffff) : 0);
			if (chance(g, 30))
				bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
			*field = k == 36 ? LOOM_F_ELTWISE_MULT_A : LOOM_F_ELTWISE_MULT_B;
			break;
		case 38:
			bad_clip(g, in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI);
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_SRC_A, 0xffffff);
			*field = LOOM_F_ELTWISE_CLIP_LO;
			break;
		case 39:
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
			break;
		case 40:
			setf(g, in, LOOM_F_ELTWISE_SRC_B, past(g, nb));
			if (chance(g, 30))
				setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_ELTWISE_SRC_B;
			break;
		default:
			setf(g, in, LOOM_F_ELTWISE_DST, past(g, n));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_ELTWISE_DST;
			break;
		}
		return 0;
	}
	case 42: case 43: case 44: case 45: case 46: case 47:
	case 48: case 49: case 50: case 51: case 52: case 53: case 54: {
		int dwc = k >= 48;
		const winf *f = dwc ? &dw_fields : &pool_fields;
		*in = dwc ? gen_legal_dwconv(g, &m) : gen_legal_pool(g, &m, k == 42 ? 0 : (int)rbelow(g, 2));
		uint32_t nin = m.ncb * m.inw * m.inh, nout = m.ncb * m.ow * m.oh;
		*cause = LOOM_ERR_BAD_FIELD;
		switch (dwc ? k - 5 : k) {
		case 42: {
			static const enum loom_field q[4] = {LOOM_F_POOL_ZP_IN, LOOM_F_POOL_ZP_OUT, LOOM_F_POOL_SHIFT,
							     LOOM_F_POOL_MULT};
			static const uint32_t maxv[4] = {255, 255, 31, 0xffffffffu};
			unsigned i = rbelow(g, 4);
			for (unsigned j = i; j < 4; j++)
				if (j == i || chance(g, 40))
					setf(g, in, q[j], j == 3 ? r32(g) | 1u << rbelow(g, 32) : rrange(g, 1, maxv[j]));
			if (chance(g, 20))
				bad_clip(g, in, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI);
			*field = q[i];
			break;
		}
		case 43: /* clip; a zero field too: the clip is checked first */
			bad_clip(g, in, f->clip_lo, f->clip_hi);
			if (chance(g, 30))
				setf(g, in, f->nz[chance(g, 50) ? 4 : 5], 0);
			*field = f->clip_lo;
			break;
		case 44: {
			unsigned i = rbelow(g, 11);
			setf(g, in, f->nz[i], 0);
			for (unsigned j = i + 1; j < 11; j++)
				if (chance(g, 20))
					setf(g, in, f->nz[j], 0);
			*field = f->nz[i];
			break;
		}
		case 45: { /* nz: IN_W IN_H OUT_W OUT_H NCB KW KH SW SH DW DH */
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
			*field = f->nz[w ? 0 : 1];
			break;
		}
		case 46:
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
			break;
		case 47: /* DWCONV: WGT */
			if (dwc) {
				setf(g, in, LOOM_F_DWCONV_WGT, past(g, m.ncb * m.kw * m.kh));
				if (chance(g, 30))
					setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
				*field = LOOM_F_DWCONV_WGT;
			} else {
				setf(g, in, f->dst, past(g, nout));
				*field = f->dst;
			}
			*cause = LOOM_ERR_SP_RANGE;
			break;
		case 48: /* DWCONV: PARAM */
			setf(g, in, LOOM_F_DWCONV_PARAM, past(g, m.ncb * LOOM_DW_PARAM_LINES));
			if (chance(g, 30))
				setf(g, in, LOOM_F_DWCONV_DST, past(g, nout));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_DWCONV_PARAM;
			break;
		default: /* DWCONV: DST */
			setf(g, in, LOOM_F_DWCONV_DST, past(g, nout));
			*cause = LOOM_ERR_SP_RANGE;
			*field = LOOM_F_DWCONV_DST;
			break;
		}
		return 0;
	}
	case 55: case 56: case 57: {
		*in = gen_legal_lut(g);
		uint32_t n = loom_insn_get(in, LOOM_F_LUT_LINES);
		static const enum loom_field lf[3] = {LOOM_F_LUT_SRC, LOOM_F_LUT_DST, LOOM_F_LUT_TABLE};
		unsigned i = k - 55;
		setf(g, in, lf[i], past(g, i == 2 ? gen_lut_lines(c) : n));
		if (i < 2 && chance(g, 30)) /* a later one too */
			setf(g, in, lf[i + 1], past(g, i == 1 ? gen_lut_lines(c) : n));
		*cause = LOOM_ERR_SP_RANGE;
		*field = lf[i];
		return 0;
	}
	default:
		return -1;
	}
}
