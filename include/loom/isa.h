/* isa.h - C view of the Loom tensor ISA (encodings from isa.def, registers
 * from regs.def): opcode, field and error enums, field access, the static
 * checks of the decoder, and disassembly. Semantics: docs/ISA.md. */
#ifndef LOOM_ISA_H
#define LOOM_ISA_H

#include <stddef.h>
#include <stdint.h>
#include "loom/hwcfg.h"
#include "loom/regs.h" /* registers, counters, CTRL/STATUS/IRQ bits, LOOM_INSN_BYTES */

#define LOOM_ISA_MAJOR 1
#define LOOM_ISA_MINOR 3
#define LOOM_ID_VALUE 0x4c4f4f4du
#define LOOM_INSN_WORDS 8
#define LOOM_MARK_BYTES 64u
#define LOOM_TOKEN_MAX 65535u /* a token counter passing this is TOKEN_OVERFLOW */
#define LOOM_INFO_NONE 0xffffu
/* Instructions a queue holds besides the one its engine executes; the
 * fetcher waits while the target queue is full (this matters for DEADLOCK). */
#define LOOM_QUEUE_DEPTH 8
/* A coalesced LOAD burst (docs/ISA.md "Timing"): at most LOOM_DMA_MAX_BURST
 * beats, within the 2^LOOM_DMA_PAGE_SHIFT-byte page of its first byte (AXI's
 * 16-beat INCR limit of AXI3 and its 4 KiB boundary rule). */
#define LOOM_DMA_MAX_BURST 16u
#define LOOM_DMA_PAGE_SHIFT 12u
/* Vector unit (docs/ISA.md "Vector unit"): output lines it works on at once
 * (timing only, not results), SP lines of a DWCONV parameter block, LUT
 * entries. */
#define LOOM_VEC_GROUP 16
/* The most multipliers per lane of the vector unit (hwparams.def's
 * vec_macs: a DWCONV folds each input line it reads into up to vec_macs
 * (position, tap) pairs, the taps kx of a pass of up to vec_macs taps of a
 * kernel row; docs/ISA.md "Vector unit"). Timing and SP_RD only, not
 * results. */
#define LOOM_VEC_MACS_MAX 7
#define LOOM_DW_PARAM_LINES 9
#define LOOM_LUT_ENTRIES 256

typedef struct loom_insn {
	uint32_t w[LOOM_INSN_WORDS];
} loom_insn;

enum loom_op {
#define LOOM_OP(n, code, q) LOOM_OP_##n = code,
#include "loom/isa.def"
#undef LOOM_OP
};

enum loom_queue { LOOM_Q_LOAD, LOOM_Q_COMPUTE, LOOM_Q_STORE, LOOM_Q_CTRL };

enum loom_field {
#define LOOM_FIELD(op, n, w, l, b) LOOM_F_##op##_##n,
#include "loom/isa.def"
#undef LOOM_FIELD
	LOOM_F_COUNT
};

enum loom_err {
#define LOOM_ERR(n, code, doc) LOOM_ERR_##n = code,
#include "loom/isa.def"
#undef LOOM_ERR
};


/* LOAD targets, STORE sources */
enum { LOOM_MEM_SP = 0, LOOM_MEM_ACC = 1, LOOM_MEM_ACC_REQUANT = 2, LOOM_MEM_ACC_RESADD = 3 };
/* STORE SOURCE 3 (requantize, then add a residual): its ACC parameter lines
 * (PARAM_ADDR + LOOM_RESADD_PARAM_LINES) and the ELTWISE ADD of line
 * PARAM_ADDR+3, words 0..LOOM_RESADD_WORDS-1 (docs/ISA.md "STORE") */
#define LOOM_RESADD_PARAM_LINES 4u
#define LOOM_RESADD_WORDS 4u
/* ELTWISE.FUNC, ELTWISE.B_MODE, POOL.FUNC */
enum { LOOM_ELT_ADD = 0, LOOM_ELT_MUL = 1 };
enum { LOOM_BMODE_LINE = 0, LOOM_BMODE_PLANE = 1, LOOM_BMODE_ONE = 2 };
enum { LOOM_POOL_MAX = 0, LOOM_POOL_AVG = 1 };


typedef struct loom_field_info {
	const char *op;   /* "LOAD", ... or "ANY" */
	const char *name; /* "DRAM_ADDR" */
	uint8_t word, lsb, width;
} loom_field_info;

extern const loom_field_info loom_fields[LOOM_F_COUNT];

/* Read a field (inline: the C model reads a few dozen per instruction). */
static inline uint32_t loom_insn_get(const loom_insn *in, enum loom_field f)
{
	const loom_field_info *fi = &loom_fields[f];
	uint32_t v = in->w[fi->word] >> fi->lsb;
	return fi->width == 32 ? v : v & ((1u << fi->width) - 1u);
}

/* Set a field; returns -1 if v does not fit in the field. */
int loom_insn_set(loom_insn *in, enum loom_field f, uint32_t v);
static inline unsigned loom_insn_opcode(const loom_insn *in) { return in->w[0] & 0xffu; }

/* The smallest program that moves data through every engine, for
 * self-tests and block tests: LOAD `lines` SP lines of R bytes from DRAM
 * `in`, an ELTWISE that only passes the tokens on, STORE them to `out`,
 * then (mark != 0) a MARK record to mark_addr with id mark_id, and FINISH.
 * Fills p[0..n) and returns n (4, or 5 with the MARK). */
unsigned loom_copy_program(loom_insn p[5], uint32_t R, uint32_t lines, uint32_t in, uint32_t out, int mark,
			   uint32_t mark_addr, uint32_t mark_id);

const char *loom_op_name(unsigned opcode);  /* NULL if not an opcode */
int loom_op_queue(unsigned opcode);         /* enum loom_queue, -1 if none */
const char *loom_err_name(unsigned code);   /* "DRAM_RANGE", "?" if unknown */
const char *loom_err_text(unsigned code);
const char *loom_field_name(unsigned field); /* "LOAD.DRAM_ADDR", "-" */
const char *loom_ctr_name(unsigned idx);
const char *loom_evt_name(unsigned idx); /* energy event counter (regs.def LOOM_EVT) */

/* Bits of word w used by the fields of this opcode (the rest is reserved). */
uint32_t loom_op_used_mask(unsigned opcode, unsigned word);

/* The decoder's static checks, in the order docs/ISA.md gives. Returns
 * LOOM_ERR_NONE or the cause; *field gets the failing field (LOOM_INFO_NONE
 * if none). The RTL decoder implements the same checks in the same order. */
unsigned loom_insn_check(const loom_hwcfg *cfg, const loom_insn *in, uint32_t *field);

/* DMA windows (registers WIN_*): with enable set, every DRAM span of a run
 * (an instruction fetch, a LOAD/STORE's bounding range, a MARK record) must
 * lie inside one window of non-zero size. */
#define LOOM_WINDOWS 4
typedef struct loom_windows {
	uint32_t enable;
	uint32_t base[LOOM_WINDOWS], size[LOOM_WINDOWS];
} loom_windows;

/* 1 if [start, end) lies inside one window (or windows are disabled). */
int loom_windows_allow(const loom_windows *w, uint64_t start, uint64_t end);

/* loom_insn_check(), then, for a legal instruction that touches DRAM, the
 * window check: DMA_WINDOW with *field = the DRAM_ADDR field. */
unsigned loom_insn_check_win(const loom_hwcfg *cfg, const loom_windows *win, const loom_insn *in,
			     uint32_t *field);

/* One-line disassembly, e.g. "LOAD sp[0x40] <- dram[0x1000] ..." */
void loom_insn_disasm(const loom_insn *in, char *buf, size_t len);

/* Requantization of one accumulator value (docs/ISA.md, STORE). */
int32_t loom_srdhm(int32_t a, int32_t b);
int32_t loom_rdivpot(int32_t x, unsigned shift);
int8_t loom_requant(int32_t acc, int32_t bias, int32_t mult, int32_t shift,
		    int8_t zp, int8_t lo, int8_t hi);

/* ELTWISE ADD's parameters as one value (the fields of ELTWISE, or the
 * parameter line of STORE SOURCE 3) and its arithmetic on one lane:
 * requant(MULT_A*(a-ZP_A) + MULT_B*(b-ZP_B), 0, MULT, SHIFT, ZP_OUT, LO, HI).
 * Both the vector unit's ELTWISE ADD and STORE SOURCE 3 of the C model
 * compute through loom_eltadd(), so the fused and the unfused form agree by
 * construction. pack/unpack convert to/from the parameter line's words:
 *   w0 = MULT; w1 = MULT_A | MULT_B << 16;
 *   w2 = ZP_A | ZP_B << 8 | ZP_OUT << 16 | SHIFT << 24 (bits 28:24; 31:29 ignored);
 *   w3 = CLIP_LO | CLIP_HI << 8 (bits 31:16 ignored). */
typedef struct loom_eltadd_param {
	int32_t mult;
	int16_t mult_a, mult_b;
	int8_t zp_a, zp_b, zp_out, lo, hi;
	uint8_t shift; /* 0..31 */
} loom_eltadd_param;
int8_t loom_eltadd(const loom_eltadd_param *p, int8_t a, int8_t b);
void loom_eltadd_pack(const loom_eltadd_param *p, uint32_t w[LOOM_RESADD_WORDS]);
void loom_eltadd_unpack(const uint32_t w[LOOM_RESADD_WORDS], loom_eltadd_param *p);

#endif
