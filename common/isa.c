/* isa.c - field access, static checks, disassembly and requantization
 * arithmetic of the Loom tensor ISA, built from include/loom/isa.def.
 * loom_insn_check() is the reference decoder: the C model uses it, the RTL
 * decoder (rtl/npu_decode.sv) implements the same checks in the same order,
 * and co-simulation holds the two together. */
#include "loom/isa.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

const loom_field_info loom_fields[LOOM_F_COUNT] = {
#define LOOM_FIELD(op, n, w, l, b) {#op, #n, w, l, b},
#include "loom/isa.def"
#undef LOOM_FIELD
};

int loom_insn_set(loom_insn *in, enum loom_field f, uint32_t v)
{
	const loom_field_info *fi = &loom_fields[f];
	uint32_t mask = fi->width == 32 ? 0xffffffffu : (1u << fi->width) - 1u;
	if (v & ~mask)
		return -1;
	in->w[fi->word] = (in->w[fi->word] & ~(mask << fi->lsb)) | (v << fi->lsb);
	return 0;
}

unsigned loom_copy_program(loom_insn p[5], uint32_t R, uint32_t lines, uint32_t in, uint32_t out, int mark,
			   uint32_t mark_addr, uint32_t mark_id)
{
	unsigned n = mark ? 5 : 4;
	memset(p, 0, n * sizeof *p);
	loom_insn_set(&p[0], LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
	loom_insn_set(&p[0], LOOM_F_LOAD_ROW_WORDS, R / 4);
	loom_insn_set(&p[0], LOOM_F_LOAD_DRAM_ADDR, in);
	loom_insn_set(&p[0], LOOM_F_LOAD_STRIDE1, R);
	loom_insn_set(&p[0], LOOM_F_LOAD_N1, lines);
	loom_insn_set(&p[0], LOOM_F_LOAD_N2, 1);
	loom_insn_set(&p[0], LOOM_F_LOAD_N3, 1);
	loom_insn_set(&p[0], LOOM_F_LOAD_PUSH_NEXT, 1);
	loom_insn_set(&p[1], LOOM_F_ANY_OPCODE, LOOM_OP_ELTWISE);
	loom_insn_set(&p[1], LOOM_F_ELTWISE_POP_PREV, 1);
	loom_insn_set(&p[1], LOOM_F_ELTWISE_PUSH_NEXT, 1);
	loom_insn_set(&p[2], LOOM_F_ANY_OPCODE, LOOM_OP_STORE);
	loom_insn_set(&p[2], LOOM_F_STORE_POP_PREV, 1);
	loom_insn_set(&p[2], LOOM_F_STORE_SOURCE, LOOM_MEM_SP);
	loom_insn_set(&p[2], LOOM_F_STORE_ROW_WORDS, R / 4);
	loom_insn_set(&p[2], LOOM_F_STORE_DRAM_ADDR, out);
	loom_insn_set(&p[2], LOOM_F_STORE_STRIDE1, R);
	loom_insn_set(&p[2], LOOM_F_STORE_N1, lines);
	loom_insn_set(&p[2], LOOM_F_STORE_N2, 1);
	loom_insn_set(&p[2], LOOM_F_STORE_N3, 1);
	if (mark) {
		loom_insn_set(&p[3], LOOM_F_ANY_OPCODE, LOOM_OP_MARK);
		loom_insn_set(&p[3], LOOM_F_MARK_DRAM_ADDR, mark_addr);
		loom_insn_set(&p[3], LOOM_F_MARK_MARK_ID, mark_id);
	}
	loom_insn_set(&p[n - 1], LOOM_F_ANY_OPCODE, LOOM_OP_FINISH);
	return n;
}

const char *loom_op_name(unsigned opcode)
{
	switch (opcode) {
#define LOOM_OP(n, code, q) case code: return #n;
#include "loom/isa.def"
#undef LOOM_OP
	default: return NULL;
	}
}

int loom_op_queue(unsigned opcode)
{
	switch (opcode) {
#define LOOM_OP(n, code, q) case code: return LOOM_Q_##q;
#include "loom/isa.def"
#undef LOOM_OP
	default: return -1;
	}
}

const char *loom_err_name(unsigned code)
{
	switch (code) {
#define LOOM_ERR(n, c, doc) case c: return #n;
#include "loom/isa.def"
#undef LOOM_ERR
	default: return "?";
	}
}

const char *loom_err_text(unsigned code)
{
	switch (code) {
#define LOOM_ERR(n, c, doc) case c: return doc;
#include "loom/isa.def"
#undef LOOM_ERR
	default: return "unknown error cause";
	}
}

const char *loom_field_name(unsigned field)
{
	static char buf[LOOM_F_COUNT][40];
	if (field >= LOOM_F_COUNT)
		return "-";
	if (!buf[field][0])
		snprintf(buf[field], sizeof buf[field], "%s.%s", loom_fields[field].op,
			 loom_fields[field].name);
	return buf[field];
}

const char *loom_ctr_name(unsigned idx)
{
	switch (idx) {
#define LOOM_CTR(n, i, doc) case i: return #n;
#include "loom/regs.def"
#undef LOOM_CTR
	default: return "?";
	}
}

const char *loom_evt_name(unsigned idx)
{
	switch (idx) {
#define LOOM_EVT(n, i, doc) case i: return #n;
#include "loom/regs.def"
#undef LOOM_EVT
	default: return "?";
	}
}

/* the opcode of each field (-1: ANY), from isa.def: no string compares */
enum {
	LOOM_OPC_ANY = -1,
#define LOOM_OP(n, code, q) LOOM_OPC_##n = code,
#include "loom/isa.def"
#undef LOOM_OP
};
static const int16_t field_op[LOOM_F_COUNT] = {
#define LOOM_FIELD(op, n, w, l, b) LOOM_OPC_##op,
#include "loom/isa.def"
#undef LOOM_FIELD
};

/* the used bits of every word of every opcode, from the field table once
 * (the decoder checks each fetched instruction against them) */
static uint32_t used_tab[256][LOOM_INSN_WORDS];
static pthread_once_t used_once = PTHREAD_ONCE_INIT;

static void used_init(void)
{
	for (unsigned op = 0; op < 256; op++)
		for (unsigned f = 0; f < LOOM_F_COUNT; f++) {
			const loom_field_info *fi = &loom_fields[f];
			if (field_op[f] != LOOM_OPC_ANY && field_op[f] != (int)op)
				continue;
			used_tab[op][fi->word] |= (fi->width == 32 ? 0xffffffffu : (1u << fi->width) - 1u) << fi->lsb;
		}
}

static void used_masks(unsigned opcode, uint32_t m[LOOM_INSN_WORDS])
{
	pthread_once(&used_once, used_init);
	memcpy(m, used_tab[opcode & 0xffu], LOOM_INSN_WORDS * sizeof *m);
}

uint32_t loom_op_used_mask(unsigned opcode, unsigned word)
{
	uint32_t m[LOOM_INSN_WORDS];
	if (!loom_op_name(opcode) || word >= LOOM_INSN_WORDS)
		return 0;
	used_masks(opcode, m);
	return m[word];
}

#define G(op, f) loom_insn_get(in, LOOM_F_##op##_##f)
#define FAIL(cause, f) do { *field = (f); return (cause); } while (0)

/* store: 0 LOAD, 1 STORE, 2 STORE SOURCE 3 (STRIDE3 is an SP line: not checked) */
static unsigned check_dram_span(const loom_hwcfg *cfg, const loom_insn *in, int store, uint32_t *field)
{
	/* LOAD and STORE share the layout of DRAM_ADDR, STRIDE*, N*, ROW_WORDS */
	enum loom_field fa = store ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR;
	enum loom_field fs[3] = {
		store ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1,
		store ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2,
		store ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3,
	};
	(void)cfg;
	if (loom_insn_get(in, fa) & 3u)
		FAIL(LOOM_ERR_MISALIGNED, fa);
	for (int i = 0; i < (store == 2 ? 2 : 3); i++)
		if (loom_insn_get(in, fs[i]) & 3u)
			FAIL(LOOM_ERR_MISALIGNED, fs[i]);
	return LOOM_ERR_NONE;
}

static uint64_t dram_end(const loom_insn *in, int store)
{
	uint64_t n1 = loom_insn_get(in, store ? LOOM_F_STORE_N1 : LOOM_F_LOAD_N1);
	uint64_t n2 = loom_insn_get(in, store ? LOOM_F_STORE_N2 : LOOM_F_LOAD_N2);
	uint64_t n3 = loom_insn_get(in, store ? LOOM_F_STORE_N3 : LOOM_F_LOAD_N3);
	if (store && loom_insn_get(in, LOOM_F_STORE_SOURCE) == LOOM_MEM_ACC_RESADD)
		n3 = 1; /* N3 is the residual's step */
	uint64_t e = loom_insn_get(in, store ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR);
	e += (n3 - 1) * loom_insn_get(in, store ? LOOM_F_STORE_STRIDE3 : LOOM_F_LOAD_STRIDE3);
	e += (n2 - 1) * loom_insn_get(in, store ? LOOM_F_STORE_STRIDE2 : LOOM_F_LOAD_STRIDE2);
	e += (n1 - 1) * loom_insn_get(in, store ? LOOM_F_STORE_STRIDE1 : LOOM_F_LOAD_STRIDE1);
	e += 4u * loom_insn_get(in, store ? LOOM_F_STORE_ROW_WORDS : LOOM_F_LOAD_ROW_WORDS);
	return e;
}

static unsigned check_load(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	unsigned tgt = G(LOAD, TARGET), rw = G(LOAD, ROW_WORDS), e;
	if (tgt > 1)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_LOAD_TARGET);
	if (tgt == LOOM_MEM_ACC && G(LOAD, PAD_VALUE))
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_LOAD_PAD_VALUE);
	if (rw == 0 || 4u * rw > (tgt ? cfg->acc_line_bytes : cfg->sp_line_bytes))
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_LOAD_ROW_WORDS);
	if ((e = check_dram_span(cfg, in, 0, field)))
		return e;
	uint64_t n1 = G(LOAD, N1), n2 = G(LOAD, N2), n3 = G(LOAD, N3);
	if (n1 * n2 * n3 == 0)
		return LOOM_ERR_NONE;
	uint64_t lines = n3 * (G(LOAD, PAD_TOP) + n2 + G(LOAD, PAD_BOTTOM)) *
			 (G(LOAD, PAD_LEFT) + n1 + G(LOAD, PAD_RIGHT));
	if (G(LOAD, MEM_ADDR) + lines > (tgt ? cfg->acc_lines : cfg->sp_lines))
		FAIL(tgt ? LOOM_ERR_ACC_RANGE : LOOM_ERR_SP_RANGE, LOOM_F_LOAD_MEM_ADDR);
	if (dram_end(in, 0) > cfg->dram_bytes)
		FAIL(LOOM_ERR_DRAM_RANGE, LOOM_F_LOAD_DRAM_ADDR);
	return LOOM_ERR_NONE;
}

static unsigned check_store(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	/* SOURCE is 2 bits: every value is an encoding. SOURCE 3 reads row k's
	 * residual from SP line STRIDE3 + k*N3, so its rows fit both an SP line
	 * and the C lanes; it walks N1 x N2 rows (N3 is the residual's step) */
	unsigned src = G(STORE, SOURCE), rw = G(STORE, ROW_WORDS), e;
	int rq = src >= LOOM_MEM_ACC_REQUANT, res = src == LOOM_MEM_ACC_RESADD;
	uint32_t limit = src == LOOM_MEM_SP ? cfg->sp_line_bytes
			 : src == LOOM_MEM_ACC ? cfg->acc_line_bytes
			 : res && cfg->array_rows < cfg->array_cols ? cfg->array_rows : cfg->array_cols;
	if (rw == 0 || 4u * rw > limit)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_STORE_ROW_WORDS);
	if (!rq) {
		static const enum loom_field q[4] = {LOOM_F_STORE_ZERO_POINT, LOOM_F_STORE_PARAM_ADDR,
						     LOOM_F_STORE_CLIP_LO, LOOM_F_STORE_CLIP_HI};
		for (int i = 0; i < 4; i++)
			if (loom_insn_get(in, q[i]))
				FAIL(LOOM_ERR_BAD_FIELD, q[i]);
	} else {
		if ((int8_t)G(STORE, CLIP_LO) > (int8_t)G(STORE, CLIP_HI))
			FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_STORE_CLIP_LO);
		if (G(STORE, PARAM_ADDR) + (res ? LOOM_RESADD_PARAM_LINES : 3u) > cfg->acc_lines)
			FAIL(LOOM_ERR_ACC_RANGE, LOOM_F_STORE_PARAM_ADDR);
		if (res && G(STORE, N3) == 0)
			FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_STORE_N3);
	}
	if ((e = check_dram_span(cfg, in, 1 + res, field)))
		return e;
	uint64_t n = (uint64_t)G(STORE, N1) * G(STORE, N2) * (res ? 1 : G(STORE, N3));
	if (n == 0)
		return LOOM_ERR_NONE;
	if (G(STORE, MEM_ADDR) + n > (src == LOOM_MEM_SP ? cfg->sp_lines : cfg->acc_lines))
		FAIL(src == LOOM_MEM_SP ? LOOM_ERR_SP_RANGE : LOOM_ERR_ACC_RANGE, LOOM_F_STORE_MEM_ADDR);
	if (res && (uint64_t)G(STORE, STRIDE3) + (n - 1) * G(STORE, N3) + 1 > cfg->sp_lines)
		FAIL(LOOM_ERR_SP_RANGE, LOOM_F_STORE_STRIDE3);
	if (dram_end(in, 1) > cfg->dram_bytes)
		FAIL(LOOM_ERR_DRAM_RANGE, LOOM_F_STORE_DRAM_ADDR);
	return LOOM_ERR_NONE;
}

static unsigned check_matmul(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	static const enum loom_field nz[] = {
		LOOM_F_MATMUL_IN_W, LOOM_F_MATMUL_IN_H, LOOM_F_MATMUL_OUT_W, LOOM_F_MATMUL_OUT_H,
		LOOM_F_MATMUL_NCB, LOOM_F_MATMUL_KW, LOOM_F_MATMUL_KH, LOOM_F_MATMUL_SW,
		LOOM_F_MATMUL_SH, LOOM_F_MATMUL_DW, LOOM_F_MATMUL_DH,
	};
	for (size_t i = 0; i < sizeof nz / sizeof nz[0]; i++)
		if (!loom_insn_get(in, nz[i]))
			FAIL(LOOM_ERR_BAD_FIELD, nz[i]);
	uint64_t inw = G(MATMUL, IN_W), inh = G(MATMUL, IN_H), ow = G(MATMUL, OUT_W),
		 oh = G(MATMUL, OUT_H), ncb = G(MATMUL, NCB), kw = G(MATMUL, KW), kh = G(MATMUL, KH);
	if ((ow - 1) * G(MATMUL, SW) + (kw - 1) * G(MATMUL, DW) >= inw)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_MATMUL_IN_W);
	if ((oh - 1) * G(MATMUL, SH) + (kh - 1) * G(MATMUL, DH) >= inh)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_MATMUL_IN_H);
	if (G(MATMUL, ACT_ADDR) + ncb * inh * inw > cfg->sp_lines)
		FAIL(LOOM_ERR_SP_RANGE, LOOM_F_MATMUL_ACT_ADDR);
	if (G(MATMUL, WGT_ADDR) + ncb * kh * kw * cfg->array_cols > cfg->sp_lines)
		FAIL(LOOM_ERR_SP_RANGE, LOOM_F_MATMUL_WGT_ADDR);
	if (G(MATMUL, ACC_ADDR) + oh * ow > cfg->acc_lines)
		FAIL(LOOM_ERR_ACC_RANGE, LOOM_F_MATMUL_ACC_ADDR);
	return LOOM_ERR_NONE;
}

static unsigned check_clip(const loom_insn *in, enum loom_field lo, enum loom_field hi, uint32_t *field)
{
	if ((int8_t)loom_insn_get(in, lo) > (int8_t)loom_insn_get(in, hi))
		FAIL(LOOM_ERR_BAD_FIELD, lo);
	return LOOM_ERR_NONE;
}

/* SP range of a run of lines: base + n > SP lines -> SP_RANGE(base) */
static unsigned check_sp(const loom_hwcfg *cfg, const loom_insn *in, enum loom_field base, uint64_t n,
			 uint32_t *field)
{
	if ((uint64_t)loom_insn_get(in, base) + n > cfg->sp_lines)
		FAIL(LOOM_ERR_SP_RANGE, base);
	return LOOM_ERR_NONE;
}

/* The fields of a POOL / DWCONV window, in the order of their zero check:
 * IN_W, IN_H, OUT_W, OUT_H, NCB, KW, KH, SW, SH, DW, DH. */
enum { WIN_IN_W, WIN_IN_H, WIN_OUT_W, WIN_OUT_H, WIN_NCB, WIN_KW, WIN_KH, WIN_SW, WIN_SH, WIN_DW, WIN_DH, WIN_N };

/* zero fields, window (as MATMUL), then SRC + NCB*IN_H*IN_W -> SP_RANGE(SRC) */
static unsigned check_window(const loom_hwcfg *cfg, const loom_insn *in, const enum loom_field *f,
			     enum loom_field src, uint32_t *field)
{
	uint64_t v[WIN_N];
	for (int i = 0; i < WIN_N; i++)
		if (!(v[i] = loom_insn_get(in, f[i])))
			FAIL(LOOM_ERR_BAD_FIELD, f[i]);
	if ((v[WIN_OUT_W] - 1) * v[WIN_SW] + (v[WIN_KW] - 1) * v[WIN_DW] >= v[WIN_IN_W])
		FAIL(LOOM_ERR_BAD_FIELD, f[WIN_IN_W]);
	if ((v[WIN_OUT_H] - 1) * v[WIN_SH] + (v[WIN_KH] - 1) * v[WIN_DH] >= v[WIN_IN_H])
		FAIL(LOOM_ERR_BAD_FIELD, f[WIN_IN_H]);
	return check_sp(cfg, in, src, v[WIN_NCB] * v[WIN_IN_H] * v[WIN_IN_W], field);
}

static unsigned check_eltwise(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	unsigned fn = G(ELTWISE, FUNC), bm = G(ELTWISE, B_MODE), e;
	if (fn > LOOM_ELT_MUL)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_FUNC);
	if (bm > LOOM_BMODE_ONE)
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_B_MODE);
	if (fn == LOOM_ELT_MUL && G(ELTWISE, MULT_A))
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_MULT_A);
	if (fn == LOOM_ELT_MUL && G(ELTWISE, MULT_B))
		FAIL(LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_MULT_B);
	if ((e = check_clip(in, LOOM_F_ELTWISE_CLIP_LO, LOOM_F_ELTWISE_CLIP_HI, field)))
		return e;
	uint64_t planes = G(ELTWISE, PLANES), n = planes * G(ELTWISE, PLANE_LINES);
	if (n == 0)
		return LOOM_ERR_NONE;
	uint64_t nb = bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? planes : 1;
	if ((e = check_sp(cfg, in, LOOM_F_ELTWISE_SRC_A, n, field)) ||
	    (e = check_sp(cfg, in, LOOM_F_ELTWISE_SRC_B, nb, field)) ||
	    (e = check_sp(cfg, in, LOOM_F_ELTWISE_DST, n, field)))
		return e;
	return LOOM_ERR_NONE;
}

static unsigned check_pool(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	static const enum loom_field win[WIN_N] = {
		LOOM_F_POOL_IN_W, LOOM_F_POOL_IN_H, LOOM_F_POOL_OUT_W, LOOM_F_POOL_OUT_H,
		LOOM_F_POOL_NCB, LOOM_F_POOL_KW, LOOM_F_POOL_KH, LOOM_F_POOL_SW,
		LOOM_F_POOL_SH, LOOM_F_POOL_DW, LOOM_F_POOL_DH,
	};
	unsigned e;
	if (G(POOL, FUNC) == LOOM_POOL_MAX) {
		static const enum loom_field avg[4] = {LOOM_F_POOL_ZP_IN, LOOM_F_POOL_ZP_OUT, LOOM_F_POOL_SHIFT,
						       LOOM_F_POOL_MULT};
		for (int i = 0; i < 4; i++)
			if (loom_insn_get(in, avg[i]))
				FAIL(LOOM_ERR_BAD_FIELD, avg[i]);
	}
	if ((e = check_clip(in, LOOM_F_POOL_CLIP_LO, LOOM_F_POOL_CLIP_HI, field)) ||
	    (e = check_window(cfg, in, win, LOOM_F_POOL_SRC, field)))
		return e;
	uint64_t out = (uint64_t)G(POOL, NCB) * G(POOL, OUT_H) * G(POOL, OUT_W);
	return check_sp(cfg, in, LOOM_F_POOL_DST, out, field);
}

static unsigned check_dwconv(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	static const enum loom_field win[WIN_N] = {
		LOOM_F_DWCONV_IN_W, LOOM_F_DWCONV_IN_H, LOOM_F_DWCONV_OUT_W, LOOM_F_DWCONV_OUT_H,
		LOOM_F_DWCONV_NCB, LOOM_F_DWCONV_KW, LOOM_F_DWCONV_KH, LOOM_F_DWCONV_SW,
		LOOM_F_DWCONV_SH, LOOM_F_DWCONV_DW, LOOM_F_DWCONV_DH,
	};
	unsigned e;
	if ((e = check_clip(in, LOOM_F_DWCONV_CLIP_LO, LOOM_F_DWCONV_CLIP_HI, field)) ||
	    (e = check_window(cfg, in, win, LOOM_F_DWCONV_SRC, field)))
		return e;
	uint64_t ncb = G(DWCONV, NCB);
	if ((e = check_sp(cfg, in, LOOM_F_DWCONV_WGT, ncb * G(DWCONV, KH) * G(DWCONV, KW), field)) ||
	    (e = check_sp(cfg, in, LOOM_F_DWCONV_PARAM, ncb * LOOM_DW_PARAM_LINES, field)) ||
	    (e = check_sp(cfg, in, LOOM_F_DWCONV_DST, ncb * G(DWCONV, OUT_H) * G(DWCONV, OUT_W), field)))
		return e;
	return LOOM_ERR_NONE;
}

static unsigned check_lut(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	uint64_t n = G(LUT, LINES), tl = (LOOM_LUT_ENTRIES + cfg->sp_line_bytes - 1) / cfg->sp_line_bytes;
	unsigned e;
	if (n == 0)
		return LOOM_ERR_NONE;
	if ((e = check_sp(cfg, in, LOOM_F_LUT_SRC, n, field)) ||
	    (e = check_sp(cfg, in, LOOM_F_LUT_DST, n, field)) ||
	    (e = check_sp(cfg, in, LOOM_F_LUT_TABLE, tl, field)))
		return e;
	return LOOM_ERR_NONE;
}

unsigned loom_insn_check(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field)
{
	unsigned op = loom_insn_opcode(in);
	*field = LOOM_INFO_NONE;
	if (!loom_op_name(op))
		FAIL(LOOM_ERR_ILLEGAL_OPCODE, LOOM_F_ANY_OPCODE);
	uint32_t used[LOOM_INSN_WORDS];
	used_masks(op, used);
	for (unsigned w = 0; w < LOOM_INSN_WORDS; w++)
		if (in->w[w] & ~used[w])
			FAIL(LOOM_ERR_RESERVED_BITS, LOOM_INFO_NONE);
	switch (op) {
	case LOOM_OP_LOAD: return check_load(cfg, in, field);
	case LOOM_OP_STORE: return check_store(cfg, in, field);
	case LOOM_OP_MATMUL: return check_matmul(cfg, in, field);
	case LOOM_OP_ELTWISE: return check_eltwise(cfg, in, field);
	case LOOM_OP_POOL: return check_pool(cfg, in, field);
	case LOOM_OP_DWCONV: return check_dwconv(cfg, in, field);
	case LOOM_OP_LUT: return check_lut(cfg, in, field);
	case LOOM_OP_MARK:
		if (G(MARK, DRAM_ADDR) & 3u)
			FAIL(LOOM_ERR_MISALIGNED, LOOM_F_MARK_DRAM_ADDR);
		if ((uint64_t)G(MARK, DRAM_ADDR) + LOOM_MARK_BYTES > cfg->dram_bytes)
			FAIL(LOOM_ERR_DRAM_RANGE, LOOM_F_MARK_DRAM_ADDR);
		return LOOM_ERR_NONE;
	default:
		return LOOM_ERR_NONE;
	}
}

int loom_windows_allow(const loom_windows *w, uint64_t start, uint64_t end)
{
	if (!w || !(w->enable & 1u))
		return 1;
	for (int i = 0; i < LOOM_WINDOWS; i++)
		if (w->size[i] && start >= w->base[i] && end <= (uint64_t)w->base[i] + w->size[i])
			return 1;
	return 0;
}

unsigned loom_insn_check_win(const loom_hwcfg *cfg, const loom_windows *win, const loom_insn *in,
			     uint32_t *field)
{
	unsigned e = loom_insn_check(cfg, in, field);
	unsigned op = loom_insn_opcode(in);
	if (e || !win || !(win->enable & 1u))
		return e;
	if (op == LOOM_OP_LOAD || op == LOOM_OP_STORE) {
		int st = op == LOOM_OP_STORE;
		uint64_t n = (uint64_t)loom_insn_get(in, st ? LOOM_F_STORE_N1 : LOOM_F_LOAD_N1) *
			     loom_insn_get(in, st ? LOOM_F_STORE_N2 : LOOM_F_LOAD_N2) *
			     loom_insn_get(in, st ? LOOM_F_STORE_N3 : LOOM_F_LOAD_N3); /* SOURCE 3: N3 >= 1 */
		enum loom_field fa = st ? LOOM_F_STORE_DRAM_ADDR : LOOM_F_LOAD_DRAM_ADDR;
		if (n && !loom_windows_allow(win, loom_insn_get(in, fa), dram_end(in, st)))
			FAIL(LOOM_ERR_DMA_WINDOW, fa);
	} else if (op == LOOM_OP_MARK) {
		uint64_t a = G(MARK, DRAM_ADDR);
		if (!loom_windows_allow(win, a, a + LOOM_MARK_BYTES))
			FAIL(LOOM_ERR_DMA_WINDOW, LOOM_F_MARK_DRAM_ADDR);
	}
	return LOOM_ERR_NONE;
}

static void deps(const loom_insn *in, char *b, size_t n)
{
	unsigned w = in->w[0];
	snprintf(b, n, "%s%s%s%s", (w >> 8) & 1 ? " pop_prev" : "", (w >> 9) & 1 ? " pop_next" : "",
		 (w >> 10) & 1 ? " push_prev" : "", (w >> 11) & 1 ? " push_next" : "");
}

void loom_insn_disasm(const loom_insn *in, char *buf, size_t len)
{
	char d[64];
	static const char *mem[] = {"sp", "acc", "acc.q", "acc.q+res"};
	static const char *elt_fn[] = {"add", "mul", "?2", "?3"};
	static const char *bmode[] = {"line", "plane", "one", "?3"};
	deps(in, d, sizeof d);
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD:
		snprintf(buf, len,
			 "LOAD    %s[%u] <- dram[0x%x] row=%uB n=%ux%ux%u strides=%u,%u,%u pad=t%u,b%u,l%u,r%u value=%d%s",
			 mem[G(LOAD, TARGET)], G(LOAD, MEM_ADDR), G(LOAD, DRAM_ADDR), 4 * G(LOAD, ROW_WORDS),
			 G(LOAD, N1), G(LOAD, N2), G(LOAD, N3), G(LOAD, STRIDE1), G(LOAD, STRIDE2),
			 G(LOAD, STRIDE3), G(LOAD, PAD_TOP), G(LOAD, PAD_BOTTOM), G(LOAD, PAD_LEFT),
			 G(LOAD, PAD_RIGHT), (int8_t)G(LOAD, PAD_VALUE), d);
		break;
	case LOOM_OP_STORE:
		if (G(STORE, SOURCE) == LOOM_MEM_ACC_RESADD) { /* STRIDE3, N3: the residual's line and step */
			snprintf(buf, len,
				 "STORE   dram[0x%x] <- %s[%u] + sp[%u] step %u row=%uB n=%ux%u strides=%u,%u params=%u "
				 "zp=%d clip=[%d,%d]%s",
				 G(STORE, DRAM_ADDR), mem[G(STORE, SOURCE)], G(STORE, MEM_ADDR), G(STORE, STRIDE3),
				 G(STORE, N3), 4 * G(STORE, ROW_WORDS), G(STORE, N1), G(STORE, N2), G(STORE, STRIDE1),
				 G(STORE, STRIDE2), G(STORE, PARAM_ADDR), (int8_t)G(STORE, ZERO_POINT),
				 (int8_t)G(STORE, CLIP_LO), (int8_t)G(STORE, CLIP_HI), d);
			break;
		}
		snprintf(buf, len,
			 "STORE   dram[0x%x] <- %s[%u] row=%uB n=%ux%ux%u strides=%u,%u,%u params=%u zp=%d clip=[%d,%d]%s",
			 G(STORE, DRAM_ADDR), mem[G(STORE, SOURCE)], G(STORE, MEM_ADDR), 4 * G(STORE, ROW_WORDS),
			 G(STORE, N1), G(STORE, N2), G(STORE, N3), G(STORE, STRIDE1), G(STORE, STRIDE2),
			 G(STORE, STRIDE3), G(STORE, PARAM_ADDR), (int8_t)G(STORE, ZERO_POINT),
			 (int8_t)G(STORE, CLIP_LO), (int8_t)G(STORE, CLIP_HI), d);
		break;
	case LOOM_OP_MATMUL:
		snprintf(buf, len,
			 "MATMUL  acc[%u] %s sp[%u] x sp[%u] in=%ux%u out=%ux%u cb=%u k=%ux%u s=%ux%u d=%ux%u%s",
			 G(MATMUL, ACC_ADDR), G(MATMUL, ACCUMULATE) ? "+=" : "=", G(MATMUL, ACT_ADDR),
			 G(MATMUL, WGT_ADDR), G(MATMUL, IN_W), G(MATMUL, IN_H), G(MATMUL, OUT_W), G(MATMUL, OUT_H),
			 G(MATMUL, NCB), G(MATMUL, KW), G(MATMUL, KH), G(MATMUL, SW), G(MATMUL, SH),
			 G(MATMUL, DW), G(MATMUL, DH), d);
		break;
	case LOOM_OP_ELTWISE:
		snprintf(buf, len,
			 "ELTWISE sp[%u] = %s(sp[%u]-(%d), sp[%u]-(%d)) b=%s n=%ux%u ma=%d mb=%d mult=%d shift=%u zp=%d clip=[%d,%d]%s",
			 G(ELTWISE, DST), elt_fn[G(ELTWISE, FUNC)], G(ELTWISE, SRC_A), (int8_t)G(ELTWISE, ZP_A),
			 G(ELTWISE, SRC_B), (int8_t)G(ELTWISE, ZP_B), bmode[G(ELTWISE, B_MODE)],
			 G(ELTWISE, PLANES), G(ELTWISE, PLANE_LINES), (int16_t)G(ELTWISE, MULT_A),
			 (int16_t)G(ELTWISE, MULT_B), (int32_t)G(ELTWISE, MULT), G(ELTWISE, SHIFT),
			 (int8_t)G(ELTWISE, ZP_OUT), (int8_t)G(ELTWISE, CLIP_LO), (int8_t)G(ELTWISE, CLIP_HI), d);
		break;
	case LOOM_OP_POOL:
		snprintf(buf, len,
			 "POOL    sp[%u] = %s sp[%u] in=%ux%u out=%ux%u cb=%u k=%ux%u s=%ux%u d=%ux%u zp_in=%d mult=%d shift=%u zp=%d clip=[%d,%d]%s",
			 G(POOL, DST), G(POOL, FUNC) ? "avg" : "max", G(POOL, SRC), G(POOL, IN_W), G(POOL, IN_H),
			 G(POOL, OUT_W), G(POOL, OUT_H), G(POOL, NCB), G(POOL, KW), G(POOL, KH), G(POOL, SW),
			 G(POOL, SH), G(POOL, DW), G(POOL, DH), (int8_t)G(POOL, ZP_IN), (int32_t)G(POOL, MULT),
			 G(POOL, SHIFT), (int8_t)G(POOL, ZP_OUT), (int8_t)G(POOL, CLIP_LO), (int8_t)G(POOL, CLIP_HI), d);
		break;
	case LOOM_OP_DWCONV:
		snprintf(buf, len,
			 "DWCONV  sp[%u] = sp[%u] (*) sp[%u] params=sp[%u] in=%ux%u out=%ux%u cb=%u k=%ux%u s=%ux%u d=%ux%u zp_in=%d zp=%d clip=[%d,%d]%s",
			 G(DWCONV, DST), G(DWCONV, SRC), G(DWCONV, WGT), G(DWCONV, PARAM), G(DWCONV, IN_W),
			 G(DWCONV, IN_H), G(DWCONV, OUT_W), G(DWCONV, OUT_H), G(DWCONV, NCB), G(DWCONV, KW),
			 G(DWCONV, KH), G(DWCONV, SW), G(DWCONV, SH), G(DWCONV, DW), G(DWCONV, DH),
			 (int8_t)G(DWCONV, ZP_IN), (int8_t)G(DWCONV, ZP_OUT), (int8_t)G(DWCONV, CLIP_LO),
			 (int8_t)G(DWCONV, CLIP_HI), d);
		break;
	case LOOM_OP_LUT:
		snprintf(buf, len, "LUT     sp[%u] = table sp[%u] of sp[%u] lines=%u%s", G(LUT, DST), G(LUT, TABLE),
			 G(LUT, SRC), G(LUT, LINES), d);
		break;
	case LOOM_OP_MARK:
		snprintf(buf, len, "MARK    id=%u -> dram[0x%x]", G(MARK, MARK_ID), G(MARK, DRAM_ADDR));
		break;
	case LOOM_OP_FINISH:
		snprintf(buf, len, "FINISH");
		break;
	default:
		snprintf(buf, len, ".word 0x%08x  # illegal opcode 0x%02x", in->w[0], loom_insn_opcode(in));
	}
}

int32_t loom_srdhm(int32_t a, int32_t b)
{
	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	int64_t p = (int64_t)a * (int64_t)b;
	int64_t nudge = p >= 0 ? (1ll << 30) : 1 - (1ll << 30);
	return (int32_t)((p + nudge) / (1ll << 31));
}

int32_t loom_rdivpot(int32_t x, unsigned e)
{
	int32_t mask = (int32_t)((1ull << e) - 1);
	int32_t rem = x & mask;
	int32_t thr = (mask >> 1) + (x < 0 ? 1 : 0);
	return (x >> e) + (rem > thr ? 1 : 0);
}

int8_t loom_requant(int32_t acc, int32_t bias, int32_t mult, int32_t shift, int8_t zp, int8_t lo, int8_t hi)
{
	int64_t s = (int64_t)acc + bias;
	int32_t x = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
	int64_t z = (int64_t)loom_rdivpot(loom_srdhm(x, mult), (unsigned)shift & 31u) + zp;
	return (int8_t)(z < lo ? lo : z > hi ? hi : z);
}

int8_t loom_eltadd(const loom_eltadd_param *p, int8_t a, int8_t b)
{
	int32_t da = (int32_t)a - p->zp_a, db = (int32_t)b - p->zp_b;
	int32_t x = (int32_t)p->mult_a * da + (int32_t)p->mult_b * db; /* exact: |x| < 2^25 */
	return loom_requant(x, 0, p->mult, p->shift & 31, p->zp_out, p->lo, p->hi);
}

void loom_eltadd_pack(const loom_eltadd_param *p, uint32_t w[LOOM_RESADD_WORDS])
{
	w[0] = (uint32_t)p->mult;
	w[1] = (uint16_t)p->mult_a | (uint32_t)(uint16_t)p->mult_b << 16;
	w[2] = (uint8_t)p->zp_a | (uint32_t)(uint8_t)p->zp_b << 8 | (uint32_t)(uint8_t)p->zp_out << 16 |
	       (uint32_t)(p->shift & 31u) << 24;
	w[3] = (uint8_t)p->lo | (uint32_t)(uint8_t)p->hi << 8;
}

void loom_eltadd_unpack(const uint32_t w[LOOM_RESADD_WORDS], loom_eltadd_param *p)
{
	p->mult = (int32_t)w[0];
	p->mult_a = (int16_t)(w[1] & 0xffffu);
	p->mult_b = (int16_t)(w[1] >> 16);
	p->zp_a = (int8_t)(w[2] & 0xffu);
	p->zp_b = (int8_t)(w[2] >> 8 & 0xffu);
	p->zp_out = (int8_t)(w[2] >> 16 & 0xffu);
	p->shift = (uint8_t)(w[2] >> 24 & 31u);
	p->lo = (int8_t)(w[3] & 0xffu);
	p->hi = (int8_t)(w[3] >> 8 & 0xffu);
}
