/* test_rv_iss.c - unit tests of the control core's instruction-set simulator
 * (cmodel/rv_iss.c) against docs/CONTROL.md, and the runner of the rv32
 * test programs on it.
 *
 *   test_rv_iss [ELF_DIR]
 *
 * 1. Hand-assembled cases (a small encoder below, anchored on assembler
 *    output): every RV32IM result with its corner cases (division by zero,
 *    signed overflow, MULH*, shifts, sign extension of loads), the CSR set
 *    and its read-only rules, every exception with mcause/mepc/mtval and no
 *    other effect, trap entry and MRET, interrupt priority, WFI (waking with
 *    MIE = 0 and 1), the cycle model.
 * 2. With ELF_DIR: every ELF_DIR/ *.elf (tests/rv32/build.sh OUTDIR builds
 *    them), loaded with libelf into the memory model of CONTROL.md and run
 *    from reset until it writes TOHOST (at most MAX_STEPS steps); passes
 *    when TOHOST = 1.
 *
 * The memory model (struct sys): ITCM 64 KiB at 0, DTCM 32 KiB at
 * 0x10000000, DRAM_BYTES of DRAM at 0x80000000, the NPU window (word
 * accesses read 0, writes ignored) and the local peripheral of core.def
 * (MTIME = the ISS cycle count, MTIMECMP resets to all ones and drives
 * MTIP, IRQ_PENDING / DOORBELL_ACK on the test's local lines, TOHOST, the
 * mailboxes); sub-word accesses to NPU and PERIPH and unmapped addresses
 * fault, fetches outside the TCMs fault.
 *
 * Prints one line per check and ends with "N passed, M failed"; exit status
 * 1 on any failure. */
#include "cmodel/rv_iss.h"
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NI(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_STEPS 1000000u

/* ------------------------------------------------------------ memory model */

enum {
#define LOOM_CORE_REGION(n, base, size, doc) n##_BASE = base, n##_SIZE = size,
#include "loom/core.def"
#undef LOOM_CORE_REGION
};
enum {
#define LOOM_CORE_REG(n, off, acc, doc) P_##n = off,
#include "loom/core.def"
#undef LOOM_CORE_REG
};
enum {
#define LOOM_CORE_IRQ(n, bit, doc) IRQ_##n = bit,
#include "loom/core.def"
#undef LOOM_CORE_IRQ
};

#define DRAM_BYTES (1u << 20)

struct sys {
	struct rv_iss iss;
	uint8_t itcm[ITCM_SIZE], dtcm[DTCM_SIZE];
	uint8_t *dram; /* DRAM_BYTES */
	uint64_t mtimecmp;
	uint32_t lines; /* local interrupt lines, as mip bits 16..18 */
	uint32_t tohost, host_irq, h2f[4], f2h[4];
	int tohost_written;
	unsigned nload, nstore; /* bus calls that reached the memory model */
};

/* the RAM behind addr..addr+n-1, or NULL */
static uint8_t *ram(struct sys *s, uint32_t addr, uint32_t n)
{
	if (addr - ITCM_BASE < ITCM_SIZE && n <= ITCM_SIZE - (addr - ITCM_BASE))
		return s->itcm + (addr - ITCM_BASE);
	if (addr - DTCM_BASE < DTCM_SIZE && n <= DTCM_SIZE - (addr - DTCM_BASE))
		return s->dtcm + (addr - DTCM_BASE);
	if (addr - DRAM_BASE < DRAM_BYTES && n <= DRAM_BYTES - (addr - DRAM_BASE))
		return s->dram + (addr - DRAM_BASE);
	return NULL;
}

static uint32_t get_le(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *p, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int periph_read(struct sys *s, uint32_t off, uint32_t *v)
{
	switch (off) {
	case P_MTIME_LO: *v = (uint32_t)s->iss.cycle; break;
	case P_MTIME_HI: *v = (uint32_t)(s->iss.cycle >> 32); break;
	case P_MTIMECMP_LO: *v = (uint32_t)s->mtimecmp; break;
	case P_MTIMECMP_HI: *v = (uint32_t)(s->mtimecmp >> 32); break;
	case P_IRQ_PENDING: *v = s->lines; break;
	case P_TOHOST: *v = s->tohost; break;
	case P_MBOX_H2F0: case P_MBOX_H2F1: case P_MBOX_H2F2: case P_MBOX_H2F3:
		*v = s->h2f[(off - P_MBOX_H2F0) / 4];
		break;
	case P_MBOX_F2H0: case P_MBOX_F2H1: case P_MBOX_F2H2: case P_MBOX_F2H3:
		*v = s->f2h[(off - P_MBOX_F2H0) / 4];
		break;
	default: *v = 0; break; /* write-only and unused offsets */
	}
	return 0;
}

static int periph_write(struct sys *s, uint32_t off, uint32_t v)
{
	switch (off) {
	case P_MTIMECMP_LO: s->mtimecmp = (s->mtimecmp & ~0xffffffffull) | v; break;
	case P_MTIMECMP_HI: s->mtimecmp = (s->mtimecmp & 0xffffffffull) | (uint64_t)v << 32; break;
	case P_DOORBELL_ACK: s->lines &= ~(1u << IRQ_DOORBELL); break;
	case P_HOST_IRQ_SET: s->host_irq |= v; break;
	case P_TOHOST:
		s->tohost = v;
		s->tohost_written = 1;
		s->iss.halt = 1;
		break;
	case P_MBOX_F2H0: case P_MBOX_F2H1: case P_MBOX_F2H2: case P_MBOX_F2H3:
		s->f2h[(off - P_MBOX_F2H0) / 4] = v;
		break;
	default: break; /* read-only and unused offsets */
	}
	return 0;
}

static int bus_load(void *ctx, uint32_t addr, unsigned size, uint32_t *val)
{
	struct sys *s = ctx;
	s->nload++;
	uint8_t *p = ram(s, addr, size);
	if (p) {
		*val = get_le(p, size);
		return 0;
	}
	if (size != 4)
		return 1;
	if (addr - NPU_BASE < NPU_SIZE) {
		*val = 0;
		return 0;
	}
	if (addr - PERIPH_BASE < PERIPH_SIZE)
		return periph_read(s, addr - PERIPH_BASE, val);
	return 1;
}

static int bus_store(void *ctx, uint32_t addr, unsigned size, uint32_t val)
{
	struct sys *s = ctx;
	s->nstore++;
	uint8_t *p = ram(s, addr, size);
	if (p) {
		put_le(p, size, val);
		return 0;
	}
	if (size != 4)
		return 1;
	if (addr - NPU_BASE < NPU_SIZE)
		return 0;
	if (addr - PERIPH_BASE < PERIPH_SIZE)
		return periph_write(s, addr - PERIPH_BASE, val);
	return 1;
}

static int bus_fetch(void *ctx, uint32_t addr, uint32_t *insn)
{
	struct sys *s = ctx;
	if (addr - ITCM_BASE >= ITCM_SIZE && addr - DTCM_BASE >= DTCM_SIZE)
		return 1;
	*insn = get_le(ram(s, addr, 4), 4);
	return 0;
}

static uint32_t bus_irq(void *ctx)
{
	struct sys *s = ctx;
	return s->lines | (s->iss.cycle >= s->mtimecmp ? RV_MIP_MTIP : 0);
}

static const struct rv_iss_bus sys_bus = {bus_load, bus_store, bus_fetch, bus_irq};

static struct sys *sys_new(void)
{
	struct sys *s = calloc(1, sizeof *s);
	uint8_t *d = calloc(1, DRAM_BYTES);
	if (!s || !d) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	s->dram = d;
	return s;
}

static void sys_free(struct sys *s)
{
	free(s->dram);
	free(s);
}

/* power-on: memory and peripheral cleared, mtimecmp all ones, core reset */
static void sys_reset(struct sys *s)
{
	uint8_t *d = s->dram;
	memset(s, 0, sizeof *s);
	memset(d, 0, DRAM_BYTES);
	s->dram = d;
	s->mtimecmp = ~0ull;
	rv_iss_init(&s->iss, &sys_bus, s);
}

/* ------------------------------------------------------------ encoder */

enum { ZERO, RA, SP, GP, TP, T0, T1, T2, S0, S1, A0, A1, A2, A3, A4, A5 };

static uint32_t enc_r(unsigned f7, unsigned rs2, unsigned rs1, unsigned f3, unsigned rd, unsigned opc)
{
	return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | opc;
}

static uint32_t enc_i(int32_t imm, unsigned rs1, unsigned f3, unsigned rd, unsigned opc)
{
	return ((uint32_t)imm & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | opc;
}

static uint32_t enc_s(int32_t imm, unsigned rs2, unsigned rs1, unsigned f3, unsigned opc)
{
	uint32_t u = (uint32_t)imm;
	return ((u >> 5) & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 31) << 7 | opc;
}

static uint32_t enc_b(int32_t imm, unsigned rs2, unsigned rs1, unsigned f3)
{
	uint32_t u = (uint32_t)imm;
	return ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
	       ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7 | 0x63;
}

static uint32_t enc_j(int32_t imm, unsigned rd)
{
	uint32_t u = (uint32_t)imm;
	return ((u >> 20) & 1) << 31 | ((u >> 1) & 0x3ff) << 21 | ((u >> 11) & 1) << 20 |
	       ((u >> 12) & 0xff) << 12 | rd << 7 | 0x6f;
}

/* R-type ALU and M operations by name: funct7, funct3 */
struct rop {
	const char *name;
	unsigned f7, f3;
};
static const struct rop ADD = {"add", 0, 0}, SUB = {"sub", 0x20, 0}, SLL = {"sll", 0, 1},
			SLT = {"slt", 0, 2}, SLTU = {"sltu", 0, 3}, XOR = {"xor", 0, 4},
			SRL = {"srl", 0, 5}, SRA = {"sra", 0x20, 5}, OR = {"or", 0, 6}, AND = {"and", 0, 7},
			MUL = {"mul", 1, 0}, MULH = {"mulh", 1, 1}, MULHSU = {"mulhsu", 1, 2},
			MULHU = {"mulhu", 1, 3}, DIV = {"div", 1, 4}, DIVU = {"divu", 1, 5},
			REM = {"rem", 1, 6}, REMU = {"remu", 1, 7};

static uint32_t R(struct rop o, unsigned rd, unsigned rs1, unsigned rs2)
{
	return enc_r(o.f7, rs2, rs1, o.f3, rd, 0x33);
}

static uint32_t ADDI(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 0, rd, 0x13); }
static uint32_t SLTI(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 2, rd, 0x13); }
static uint32_t SLTIU(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 3, rd, 0x13); }
static uint32_t XORI(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 4, rd, 0x13); }
static uint32_t ORI(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 6, rd, 0x13); }
static uint32_t ANDI(unsigned rd, unsigned rs1, int32_t imm) { return enc_i(imm, rs1, 7, rd, 0x13); }
static uint32_t SLLI(unsigned rd, unsigned rs1, unsigned sh) { return enc_i((int32_t)sh, rs1, 1, rd, 0x13); }
static uint32_t SRLI(unsigned rd, unsigned rs1, unsigned sh) { return enc_i((int32_t)sh, rs1, 5, rd, 0x13); }
static uint32_t SRAI(unsigned rd, unsigned rs1, unsigned sh) { return enc_i((int32_t)(0x400 | sh), rs1, 5, rd, 0x13); }
static uint32_t LUI(unsigned rd, uint32_t imm20) { return imm20 << 12 | rd << 7 | 0x37; }
static uint32_t AUIPC(unsigned rd, uint32_t imm20) { return imm20 << 12 | rd << 7 | 0x17; }
static uint32_t LB(unsigned rd, int32_t off, unsigned rs1) { return enc_i(off, rs1, 0, rd, 0x03); }
static uint32_t LH(unsigned rd, int32_t off, unsigned rs1) { return enc_i(off, rs1, 1, rd, 0x03); }
static uint32_t LW(unsigned rd, int32_t off, unsigned rs1) { return enc_i(off, rs1, 2, rd, 0x03); }
static uint32_t LBU(unsigned rd, int32_t off, unsigned rs1) { return enc_i(off, rs1, 4, rd, 0x03); }
static uint32_t LHU(unsigned rd, int32_t off, unsigned rs1) { return enc_i(off, rs1, 5, rd, 0x03); }
static uint32_t SB(unsigned rs2, int32_t off, unsigned rs1) { return enc_s(off, rs2, rs1, 0, 0x23); }
static uint32_t SH(unsigned rs2, int32_t off, unsigned rs1) { return enc_s(off, rs2, rs1, 1, 0x23); }
static uint32_t SW(unsigned rs2, int32_t off, unsigned rs1) { return enc_s(off, rs2, rs1, 2, 0x23); }
static uint32_t BEQ(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 0); }
static uint32_t BNE(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 1); }
static uint32_t BLT(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 4); }
static uint32_t BGE(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 5); }
static uint32_t BLTU(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 6); }
static uint32_t BGEU(unsigned rs1, unsigned rs2, int32_t off) { return enc_b(off, rs2, rs1, 7); }
static uint32_t JAL(unsigned rd, int32_t off) { return enc_j(off, rd); }
static uint32_t JALR(unsigned rd, unsigned rs1, int32_t off) { return enc_i(off, rs1, 0, rd, 0x67); }
static uint32_t CSRRW(unsigned rd, uint32_t csr, unsigned rs1) { return csr << 20 | rs1 << 15 | 1u << 12 | rd << 7 | 0x73; }
static uint32_t CSRRS(unsigned rd, uint32_t csr, unsigned rs1) { return csr << 20 | rs1 << 15 | 2u << 12 | rd << 7 | 0x73; }
static uint32_t CSRRC(unsigned rd, uint32_t csr, unsigned rs1) { return csr << 20 | rs1 << 15 | 3u << 12 | rd << 7 | 0x73; }
static uint32_t CSRRWI(unsigned rd, uint32_t csr, unsigned u) { return csr << 20 | u << 15 | 5u << 12 | rd << 7 | 0x73; }
static uint32_t CSRRSI(unsigned rd, uint32_t csr, unsigned u) { return csr << 20 | u << 15 | 6u << 12 | rd << 7 | 0x73; }
static uint32_t CSRRCI(unsigned rd, uint32_t csr, unsigned u) { return csr << 20 | u << 15 | 7u << 12 | rd << 7 | 0x73; }
#define ECALL 0x00000073u
#define EBREAK 0x00100073u
#define MRET 0x30200073u
#define WFI 0x10500073u
#define NOP 0x00000013u

enum {
	MSTATUS = 0x300, MISA = 0x301, MIE = 0x304, MTVEC = 0x305, MSCRATCH = 0x340, MEPC = 0x341,
	MCAUSE = 0x342, MTVAL = 0x343, MIP = 0x344, MCYCLE = 0xb00, MINSTRET = 0xb02, MCYCLEH = 0xb80,
	MINSTRETH = 0xb82, CYCLE = 0xc00, INSTRET = 0xc02, CYCLEH = 0xc80, INSTRETH = 0xc82,
	MVENDORID = 0xf11, MARCHID = 0xf12, MIMPID = 0xf13, MHARTID = 0xf14,
};

/* the encoder against GNU as output (riscv64-unknown-elf-as -march=rv32im) */
static void test_encoder(void)
{
	const struct {
		uint32_t got, want;
		const char *as;
	} e[] = {
		{ADDI(RA, ZERO, 1), 0x00100093, "addi ra,zero,1"},
		{ADDI(A0, A1, -2048), 0x80058513, "addi a0,a1,-2048"},
		{SRAI(A0, A1, 31), 0x41f5d513, "srai a0,a1,31"},
		{LUI(A0, 0xfffff), 0xfffff537, "lui a0,0xfffff"},
		{LW(A0, 4, SP), 0x00412503, "lw a0,4(sp)"},
		{SW(A0, -4, SP), 0xfea12e23, "sw a0,-4(sp)"},
		{SH(A5, 2047, A4), 0x7ef71fa3, "sh a5,2047(a4)"},
		{BEQ(ZERO, ZERO, -4), 0xfe000ee3, "beq zero,zero,.-4"},
		{BGEU(A0, A1, 4094), 0x7eb57fe3, "bgeu a0,a1,.+4094"},
		{BLT(A0, A1, -4096), 0x80b54063, "blt a0,a1,.-4096"},
		{JAL(RA, 2048), 0x001000ef, "jal ra,.+2048"},
		{JAL(ZERO, -1048576), 0x8000006f, "j .-1048576"},
		{JALR(RA, A0, -1), 0xfff500e7, "jalr ra,-1(a0)"},
		{R(MULHSU, A0, A1, A2), 0x02c5a533, "mulhsu a0,a1,a2"},
		{CSRRS(A0, MISA, ZERO), 0x30102573, "csrr a0,misa"},
		{CSRRCI(ZERO, MSTATUS, 8), 0x30047073, "csrci mstatus,8"},
	};
	for (size_t i = 0; i < NI(e); i++)
		CHECK(e[i].got == e[i].want, "encoder: %-20s = %08x (as: %08x)", e[i].as, e[i].got, e[i].want);
}

/* ------------------------------------------------------------ helpers */

/* reset, place the words at addr (ITCM or DTCM), pc = addr */
static void load_prog(struct sys *s, uint32_t addr, const uint32_t *w, size_t n)
{
	sys_reset(s);
	for (size_t i = 0; i < n; i++)
		put_le(ram(s, addr + 4 * (uint32_t)i, 4), 4, w[i]);
	s->iss.pc = addr;
}

/* step until pc == end (or max steps); 0 when reached */
static int run_to(struct sys *s, uint32_t end, unsigned max)
{
	for (unsigned i = 0; i < max; i++) {
		if (s->iss.pc == end && !s->iss.wfi)
			return 0;
		rv_iss_step(&s->iss);
	}
	return s->iss.pc == end ? 0 : -1;
}

static const char *status_name(int st)
{
	switch (st) {
	case RV_ISS_RAN: return "RAN";
	case RV_ISS_TRAP: return "TRAP";
	case RV_ISS_IRQ: return "IRQ";
	case RV_ISS_WFI: return "WFI";
	default: return "?";
	}
}

/* one instruction on x1 = a, x2 = b, result in x3 (preset to 0xdeadbeef) */
static int one(struct sys *s, uint32_t insn, uint32_t a, uint32_t b, uint32_t *res)
{
	load_prog(s, 0, &insn, 1);
	s->iss.x[1] = a;
	s->iss.x[2] = b;
	s->iss.x[3] = 0xdeadbeef;
	int st = rv_iss_step(&s->iss);
	*res = s->iss.x[3];
	return st;
}

static void alu(struct sys *s, struct rop o, uint32_t a, uint32_t b, uint32_t want, uint64_t cycles)
{
	uint32_t r;
	int st = one(s, R(o, 3, 1, 2), a, b, &r);
	CHECK(st == RV_ISS_RAN && r == want && s->iss.pc == 4 && s->iss.cycle == cycles &&
		      s->iss.instret == 1,
	      "%-6s %08x, %08x = %08x (want %08x), %llu cycles", o.name, a, b, r, want,
	      (unsigned long long)s->iss.cycle);
}

static void imm(struct sys *s, const char *name, uint32_t insn, uint32_t a, uint32_t want)
{
	uint32_t r;
	int st = one(s, insn, a, 0, &r);
	CHECK(st == RV_ISS_RAN && r == want && s->iss.cycle == 1, "%-22s x1 = %08x: %08x (want %08x)", name,
	      a, r, want);
}

/* the step traps with this cause and mtval, at mepc = epc; pc = mtvec */
static int trapped(struct sys *s, int st, uint32_t cause, uint32_t tval, uint32_t epc)
{
	return st == RV_ISS_TRAP && s->iss.mcause == cause && s->iss.mtval == tval && s->iss.mepc == epc &&
	       s->iss.pc == s->iss.mtvec;
}

/* ------------------------------------------------------------ RV32IM */

static void test_alu(struct sys *s)
{
	const uint32_t MIN = 0x80000000u, M1 = 0xffffffffu;
	alu(s, ADD, 0x7fffffff, 1, MIN, 1);
	alu(s, SUB, 0, 1, M1, 1);
	alu(s, SLL, 1, 33, 2, 1); /* shift amount = rs2[4:0] */
	alu(s, SLL, 3, 31, MIN, 1);
	alu(s, SRL, MIN, 31, 1, 1);
	alu(s, SRL, MIN, 0xffffffe4, 0x08000000, 1); /* by 4 */
	alu(s, SRA, MIN, 31, M1, 1);
	alu(s, SRA, 0x80000010, 4, 0xf8000001, 1);
	alu(s, SRA, 0x7ffffff0, 36, 0x07ffffff, 1);
	alu(s, SRA, 0x80000000, 0, MIN, 1);
	alu(s, SLT, M1, 0, 1, 1);
	alu(s, SLT, 0, M1, 0, 1);
	alu(s, SLT, MIN, 0x7fffffff, 1, 1);
	alu(s, SLTU, M1, 0, 0, 1);
	alu(s, SLTU, 0, M1, 1, 1);
	alu(s, SLTU, 5, 5, 0, 1);
	alu(s, XOR, 0xff00ff00, 0x0ff00ff0, 0xf0f0f0f0, 1);
	alu(s, OR, 0xff00ff00, 0x0ff00ff0, 0xfff0fff0, 1);
	alu(s, AND, 0xff00ff00, 0x0ff00ff0, 0x0f000f00, 1);

	alu(s, MUL, 0x12345678, 0x9abcdef0, 0x242d2080, 3);
	alu(s, MUL, MIN, M1, MIN, 3);
	alu(s, MULH, M1, M1, 0, 3);
	alu(s, MULH, MIN, MIN, 0x40000000, 3);
	alu(s, MULH, MIN, M1, 0, 3);
	alu(s, MULH, M1, 1, M1, 3);
	alu(s, MULH, 0x7fffffff, 0x7fffffff, 0x3fffffff, 3);
	alu(s, MULH, 0x7fffffff, MIN, 0xc0000000, 3);
	alu(s, MULHSU, M1, M1, M1, 3);
	alu(s, MULHSU, MIN, M1, MIN, 3);
	alu(s, MULHSU, 2, MIN, 1, 3);
	alu(s, MULHSU, M1, 1, M1, 3);
	alu(s, MULHSU, 0x7fffffff, M1, 0x7ffffffe, 3);
	alu(s, MULHU, M1, M1, 0xfffffffe, 3);
	alu(s, MULHU, MIN, 2, 1, 3);
	alu(s, MULHU, 0x12345678, 0x9abcdef0, 0x0b00ea4e, 3);

	alu(s, DIV, 7, 2, 3, 34);
	alu(s, DIV, (uint32_t)-7, 2, (uint32_t)-3, 34);
	alu(s, DIV, 7, (uint32_t)-2, (uint32_t)-3, 34);
	alu(s, DIV, (uint32_t)-7, (uint32_t)-2, 3, 34);
	alu(s, DIV, 123, 0, M1, 34);
	alu(s, DIV, MIN, 0, M1, 34);
	alu(s, DIV, 0, 0, M1, 34);
	alu(s, DIV, MIN, M1, MIN, 34);
	alu(s, DIV, MIN, 1, MIN, 34);
	alu(s, DIVU, 7, 0, M1, 34);
	alu(s, DIVU, M1, 2, 0x7fffffff, 34);
	alu(s, DIVU, MIN, M1, 0, 34);
	alu(s, DIVU, M1, M1, 1, 34);
	alu(s, REM, (uint32_t)-7, 2, M1, 34);
	alu(s, REM, 7, (uint32_t)-2, 1, 34);
	alu(s, REM, (uint32_t)-7, (uint32_t)-2, M1, 34);
	alu(s, REM, 123, 0, 123, 34);
	alu(s, REM, (uint32_t)-7, 0, (uint32_t)-7, 34);
	alu(s, REM, MIN, M1, 0, 34);
	alu(s, REMU, 123, 0, 123, 34);
	alu(s, REMU, M1, 7, 3, 34);
	alu(s, REMU, MIN, M1, MIN, 34);

	imm(s, "addi x3, x1, -1", ADDI(3, 1, -1), 0, M1);
	imm(s, "addi x3, x1, 2047", ADDI(3, 1, 2047), 1, 2048);
	imm(s, "addi x3, x1, -2048", ADDI(3, 1, -2048), 0, 0xfffff800);
	imm(s, "slti x3, x1, -1", SLTI(3, 1, -1), MIN, 1);
	imm(s, "slti x3, x1, 0", SLTI(3, 1, 0), 0, 0);
	imm(s, "sltiu x3, x1, -1", SLTIU(3, 1, -1), 0xfffffffe, 1); /* imm is sign-extended */
	imm(s, "sltiu x3, x1, -1", SLTIU(3, 1, -1), M1, 0);
	imm(s, "sltiu x3, x1, 1 (seqz)", SLTIU(3, 1, 1), 0, 1);
	imm(s, "xori x3, x1, -1 (not)", XORI(3, 1, -1), 0x0f0f0f0f, 0xf0f0f0f0);
	imm(s, "ori x3, x1, -2048", ORI(3, 1, -2048), 1, 0xfffff801);
	imm(s, "andi x3, x1, 0x7ff", ANDI(3, 1, 0x7ff), M1, 0x7ff);
	imm(s, "slli x3, x1, 31", SLLI(3, 1, 31), 3, MIN);
	imm(s, "srli x3, x1, 31", SRLI(3, 1, 31), MIN, 1);
	imm(s, "srli x3, x1, 0", SRLI(3, 1, 0), MIN, MIN);
	imm(s, "srai x3, x1, 31", SRAI(3, 1, 31), MIN, M1);
	imm(s, "srai x3, x1, 1", SRAI(3, 1, 1), 0xfffffffe, M1);
	imm(s, "srai x3, x1, 4", SRAI(3, 1, 4), 0x7ffffff0, 0x07ffffff);
	imm(s, "lui x3, 0xfffff", LUI(3, 0xfffff), 0, 0xfffff000);
	imm(s, "lui x3, 0x80000", LUI(3, 0x80000), 0, MIN);

	/* x0 is never written, AUIPC adds the pc */
	uint32_t r;
	one(s, ADDI(0, 1, 5), 7, 0, &r);
	CHECK(s->iss.x[0] == 0, "addi x0, x1, 5: x0 stays 0");
	one(s, R(MUL, 0, 1, 1), 7, 0, &r);
	CHECK(s->iss.x[0] == 0, "mul x0, x1, x1: x0 stays 0");
	uint32_t p[] = {NOP, NOP, AUIPC(3, 0xfffff), AUIPC(4, 1)};
	load_prog(s, DTCM_BASE, p, NI(p));
	run_to(s, DTCM_BASE + 16, 10);
	CHECK(s->iss.x[3] == DTCM_BASE + 8 - 0x1000 && s->iss.x[4] == DTCM_BASE + 12 + 0x1000,
	      "auipc at 0x10000008, 0x1000000c: %08x %08x", s->iss.x[3], s->iss.x[4]);
}

static void test_loads_stores(struct sys *s)
{
	static const struct {
		const char *name;
		uint32_t insn, want;
	} l[] = {
		{"lb  x3, 0(x1)", 0, 0xffffff80}, {"lb  x3, 1(x1)", 0, 0x0000007f},
		{"lb  x3, 3(x1)", 0, 0xffffffff}, {"lbu x3, 0(x1)", 0, 0x00000080},
		{"lbu x3, 3(x1)", 0, 0x000000ff}, {"lh  x3, 0(x1)", 0, 0x00007f80},
		{"lh  x3, 2(x1)", 0, 0xffffff01}, {"lhu x3, 2(x1)", 0, 0x0000ff01},
		{"lw  x3, 0(x1)", 0, 0xff017f80}, {"lw  x3, -4(x1+8)", 0, 0xff017f80},
		{"lh  x3, 4(x1)", 0, 0xffff8000}, {"lhu x3, 4(x1)", 0, 0x00008000},
	};
	uint32_t insns[] = {LB(3, 0, 1), LB(3, 1, 1), LB(3, 3, 1), LBU(3, 0, 1), LBU(3, 3, 1), LH(3, 0, 1),
			    LH(3, 2, 1), LHU(3, 2, 1), LW(3, 0, 1), LW(3, -4, 1), LH(3, 4, 1), LHU(3, 4, 1)};
	for (size_t i = 0; i < NI(l); i++) {
		uint32_t base = DTCM_BASE + 0x100 + (i == 9 ? 4 : 0);
		load_prog(s, 0, &insns[i], 1);
		put_le(s->dtcm + 0x100, 4, 0xff017f80);
		put_le(s->dtcm + 0x104, 4, 0x00008000);
		s->iss.x[1] = base;
		int st = rv_iss_step(&s->iss);
		CHECK(st == RV_ISS_RAN && s->iss.x[3] == l[i].want && s->iss.cycle == 2,
		      "%s = %08x (want %08x), 2 cycles", l[i].name, s->iss.x[3], l[i].want);
	}

	/* stores write only their bytes; loads from ITCM, DRAM; the NPU window */
	uint32_t p[] = {SB(2, 1, 1), SH(2, 6, 1), SW(2, 8, 1), LW(4, 0, 5), LBU(6, 3, 7), SW(2, 0, 8),
			LW(9, 4, 8)};
	load_prog(s, 0, p, NI(p));
	memset(s->dtcm, 0xaa, 16);
	s->iss.x[1] = DTCM_BASE;
	s->iss.x[2] = 0x11223344;
	s->iss.x[5] = 0;
	s->iss.x[7] = DRAM_BASE;
	s->iss.x[8] = NPU_BASE;
	s->dram[3] = 0x9c;
	s->iss.x[9] = 0xdeadbeef;
	run_to(s, 4 * NI(p), 20);
	CHECK(get_le(s->dtcm, 4) == 0xaaaa44aa && get_le(s->dtcm + 4, 4) == 0x3344aaaa &&
		      get_le(s->dtcm + 8, 4) == 0x11223344 && get_le(s->dtcm + 12, 4) == 0xaaaaaaaa,
	      "sb/sh/sw write only their bytes: %08x %08x %08x %08x", get_le(s->dtcm, 4),
	      get_le(s->dtcm + 4, 4), get_le(s->dtcm + 8, 4), get_le(s->dtcm + 12, 4));
	CHECK(s->iss.x[4] == SB(2, 1, 1), "lw from ITCM reads the code: %08x", s->iss.x[4]);
	CHECK(s->iss.x[6] == 0x9c, "lbu from DRAM (0x80000003) = %02x", s->iss.x[6]);
	CHECK(s->iss.x[9] == 0 && s->iss.mcause == 0 && s->iss.instret == NI(p),
	      "sw/lw in the NPU window: %08x, no trap", s->iss.x[9]);
}

static void test_jumps(struct sys *s)
{
	/* 0: jal ra, 12 -> 12: jalr t0, ra, 5 (-> 8, bit 0 cleared) -> 8: jal x0, 8 -> 16 */
	uint32_t p[] = {JAL(RA, 12), NOP, JAL(ZERO, 8), JALR(T0, RA, 5), NOP};
	load_prog(s, 0, p, NI(p));
	int ok = rv_iss_step(&s->iss) == RV_ISS_RAN && s->iss.pc == 12 && s->iss.x[RA] == 4;
	ok &= rv_iss_step(&s->iss) == RV_ISS_RAN && s->iss.pc == 8 && s->iss.x[T0] == 16;
	ok &= rv_iss_step(&s->iss) == RV_ISS_RAN && s->iss.pc == 16;
	CHECK(ok && s->iss.cycle == 6 && s->iss.instret == 3,
	      "jal, jalr (target bit 0 cleared), j: pc %x, ra %x, t0 %x, %llu cycles (want 6)", s->iss.pc,
	      s->iss.x[RA], s->iss.x[T0], (unsigned long long)s->iss.cycle);

	uint32_t q[] = {JALR(RA, RA, 8), NOP, NOP};
	load_prog(s, 0, q, NI(q));
	s->iss.x[RA] = 0;
	rv_iss_step(&s->iss);
	CHECK(s->iss.pc == 8 && s->iss.x[RA] == 4, "jalr ra, 8(ra): target from the old ra (pc %x, ra %x)",
	      s->iss.pc, s->iss.x[RA]);

	const struct {
		const char *name;
		uint32_t insn, a, b;
		int taken;
	} br[] = {
		{"beq  equal", BEQ(1, 2, -8), 5, 5, 1},     {"beq  differ", BEQ(1, 2, -8), 5, 6, 0},
		{"bne  differ", BNE(1, 2, -8), 5, 6, 1},    {"bne  equal", BNE(1, 2, -8), 6, 6, 0},
		{"blt  -1 < 0", BLT(1, 2, -8), 0xffffffff, 0, 1}, {"blt  0 < -1", BLT(1, 2, -8), 0, 0xffffffff, 0},
		{"bge  0 >= -1", BGE(1, 2, -8), 0, 0xffffffff, 1}, {"bge  equal", BGE(1, 2, -8), 3, 3, 1},
		{"bge  -1 >= 0", BGE(1, 2, -8), 0xffffffff, 0, 0}, {"bltu 0 < ~0", BLTU(1, 2, -8), 0, 0xffffffff, 1},
		{"bltu ~0 < 0", BLTU(1, 2, -8), 0xffffffff, 0, 0}, {"bgeu ~0 >= 0", BGEU(1, 2, -8), 0xffffffff, 0, 1},
		{"bgeu equal", BGEU(1, 2, -8), 7, 7, 1},    {"bgeu 0 >= ~0", BGEU(1, 2, -8), 0, 0xffffffff, 0},
	};
	for (size_t i = 0; i < NI(br); i++) {
		uint32_t w[] = {NOP, NOP, NOP, br[i].insn};
		load_prog(s, DTCM_BASE, w, NI(w));
		s->iss.pc = DTCM_BASE + 12;
		s->iss.x[1] = br[i].a;
		s->iss.x[2] = br[i].b;
		int st = rv_iss_step(&s->iss);
		uint32_t want = DTCM_BASE + (br[i].taken ? 4 : 16);
		CHECK(st == RV_ISS_RAN && s->iss.pc == want && s->iss.cycle == (br[i].taken ? 2u : 1u),
		      "%-13s: pc %08x (want %08x), %llu cycles", br[i].name, s->iss.pc, want,
		      (unsigned long long)s->iss.cycle);
	}
}

/* ------------------------------------------------------------ CSRs */

/* one CSR instruction at pc 0; x1 = src; returns the status, x3 = rd */
static int csr1(struct sys *s, uint32_t insn, uint32_t src)
{
	uint32_t r;
	return one(s, insn, src, 0, &r);
}

static void test_csr(struct sys *s)
{
	const struct {
		const char *name;
		uint32_t insn, src;
		int legal;
		uint32_t rd; /* x3 after, when legal */
	} c[] = {
		{"csrrs  x3, misa, x0", CSRRS(3, MISA, 0), 0, 1, RV_MISA},
		{"csrrc  x3, misa, x0", CSRRC(3, MISA, 0), 0, 1, RV_MISA},
		{"csrrsi x3, misa, 0", CSRRSI(3, MISA, 0), 0, 1, RV_MISA},
		{"csrrci x3, misa, 0", CSRRCI(3, MISA, 0), 0, 1, RV_MISA},
		{"csrrw  x0, misa, x1", CSRRW(0, MISA, 1), RV_MISA, 0, 0},
		{"csrrs  x3, misa, x1=0", CSRRS(3, MISA, 1), 0, 0, 0},
		{"csrrwi x3, misa, 0", CSRRWI(3, MISA, 0), 0, 0, 0},
		{"csrrsi x3, misa, 1", CSRRSI(3, MISA, 1), 0, 0, 0},
		{"csrrs  x3, mip, x0", CSRRS(3, MIP, 0), 0, 1, 0},
		{"csrrci x3, mip, 0", CSRRCI(3, MIP, 0), 0, 1, 0},
		{"csrrw  x3, mip, x1", CSRRW(3, MIP, 1), 0, 0, 0},
		{"csrrc  x3, mip, x1", CSRRC(3, MIP, 1), 0x80, 0, 0},
		{"csrrs  x3, mhartid, x0", CSRRS(3, MHARTID, 0), 0, 1, 0},
		{"csrrs  x3, mvendorid, x0", CSRRS(3, MVENDORID, 0), 0, 1, 0},
		{"csrrs  x3, marchid, x0", CSRRS(3, MARCHID, 0), 0, 1, 0},
		{"csrrs  x3, mimpid, x0", CSRRS(3, MIMPID, 0), 0, 1, 0},
		{"csrrw  x3, mhartid, x1", CSRRW(3, MHARTID, 1), 0, 0, 0},
		{"csrrs  x3, cycle, x0", CSRRS(3, CYCLE, 0), 0, 1, 0},
		{"csrrs  x3, instreth, x0", CSRRS(3, INSTRETH, 0), 0, 1, 0},
		{"csrrw  x3, cycle, x1", CSRRW(3, CYCLE, 1), 5, 0, 0},
		{"csrrsi x3, instret, 1", CSRRSI(3, INSTRET, 1), 0, 0, 0},
		{"csrrw  x3, cycleh, x1", CSRRW(3, CYCLEH, 1), 5, 0, 0},
		{"csrrw  x3, mcycle, x1 (ignored)", CSRRW(3, MCYCLE, 1), 1000, 1, 0},
		{"csrrw  x3, minstret, x1", CSRRW(3, MINSTRET, 1), 1000, 1, 0},
		{"csrrwi x3, mcycleh, 7", CSRRWI(3, MCYCLEH, 7), 0, 1, 0},
		{"csrrs  x3, minstreth, x1", CSRRS(3, MINSTRETH, 1), 0xff, 1, 0},
		{"csrrs  x3, 0x7c0, x0", CSRRS(3, 0x7c0, 0), 0, 0, 0},
		{"csrrs  x3, medeleg, x0", CSRRS(3, 0x302, 0), 0, 0, 0},
		{"csrrs  x3, mideleg, x0", CSRRS(3, 0x303, 0), 0, 0, 0},
		{"csrrs  x3, mcounteren, x0", CSRRS(3, 0x306, 0), 0, 0, 0},
		{"csrrs  x3, mstatush, x0", CSRRS(3, 0x310, 0), 0, 0, 0},
		{"csrrs  x3, pmpcfg0, x0", CSRRS(3, 0x3a0, 0), 0, 0, 0},
		{"csrrs  x3, mconfigptr, x0", CSRRS(3, 0xf15, 0), 0, 0, 0},
		{"csrrs  x3, time, x0", CSRRS(3, 0xc01, 0), 0, 0, 0},
		{"csrrs  x3, mhpmcounter3, x0", CSRRS(3, 0xb03, 0), 0, 0, 0},
		{"csrrs  x3, sstatus, x0", CSRRS(3, 0x100, 0), 0, 0, 0},
		{"csrrw  x0, mscratch, x1", CSRRW(0, MSCRATCH, 1), 0x12345678, 1, 0xdeadbeef},
	};
	for (size_t i = 0; i < NI(c); i++) {
		int st = csr1(s, c[i].insn, c[i].src);
		if (c[i].legal)
			CHECK(st == RV_ISS_RAN && s->iss.x[3] == c[i].rd && s->iss.pc == 4 && s->iss.cycle == 1,
			      "%-32s legal, x3 = %08x (want %08x)", c[i].name, s->iss.x[3], c[i].rd);
		else
			CHECK(trapped(s, st, RV_CAUSE_ILLEGAL, c[i].insn, 0) && s->iss.x[3] == 0xdeadbeef &&
				      s->iss.instret == 0,
			      "%-32s illegal (%s, mcause %u, mtval %08x), x3 kept", c[i].name, status_name(st),
			      s->iss.mcause, s->iss.mtval);
	}

	/* the writable bits, and what reads back */
	static const struct {
		const char *name;
		uint32_t csr, wr, rd;
	} w[] = {
		{"mstatus", MSTATUS, 0xffffffff, 0x00001888}, {"mstatus", MSTATUS, 0x00000000, 0x00001800},
		{"mstatus", MSTATUS, 0x00000008, 0x00001808}, {"mie", MIE, 0xffffffff, 0x00070080},
		{"mtvec", MTVEC, 0x00001003, 0x00001000},     {"mtvec", MTVEC, 0xfffffffd, 0xfffffffc},
		{"mepc", MEPC, 0x00001236, 0x00001234},       {"mepc", MEPC, 0xffffffff, 0xfffffffc},
		{"mscratch", MSCRATCH, 0xffffffff, 0xffffffff}, {"mcause", MCAUSE, 0xffffffff, 0xffffffff},
		{"mtval", MTVAL, 0xfffffffe, 0xfffffffe},
	};
	for (size_t i = 0; i < NI(w); i++) {
		uint32_t p[] = {CSRRW(0, w[i].csr, 1), CSRRS(3, w[i].csr, 0)};
		load_prog(s, 0, p, 2);
		s->iss.x[1] = w[i].wr;
		run_to(s, 8, 2);
		CHECK(s->iss.x[3] == w[i].rd, "%-8s written %08x reads %08x (want %08x)", w[i].name, w[i].wr,
		      s->iss.x[3], w[i].rd);
	}

	/* read-modify-write: old value to rd (also rd == rs1), set/clear */
	uint32_t p[] = {CSRRW(0, MSCRATCH, 1), CSRRW(1, MSCRATCH, 1), CSRRS(4, MSCRATCH, 2),
			CSRRC(5, MSCRATCH, 2), CSRRSI(6, MSCRATCH, 0x1f), CSRRCI(7, MSCRATCH, 3),
			CSRRWI(8, MSCRATCH, 0x15), CSRRS(9, MSCRATCH, 0)};
	load_prog(s, 0, p, NI(p));
	s->iss.x[1] = 0xa5a50000;
	s->iss.x[2] = 0x0000ffff;
	run_to(s, 4 * NI(p), 10);
	CHECK(s->iss.x[1] == 0xa5a50000 && s->iss.x[4] == 0xa5a50000 && s->iss.x[5] == 0xa5a5ffff &&
		      s->iss.x[6] == 0xa5a50000 && s->iss.x[7] == 0xa5a5001f && s->iss.x[8] == 0xa5a5001c &&
		      s->iss.x[9] == 0x15,
	      "csrrw (rd = rs1)/csrrs/csrrc/csrrsi/csrrci/csrrwi: %08x %08x %08x %08x %08x %08x %08x",
	      s->iss.x[1], s->iss.x[4], s->iss.x[5], s->iss.x[6], s->iss.x[7], s->iss.x[8], s->iss.x[9]);

	/* counters: the value before the reading instruction; writes ignored */
	uint32_t q[] = {R(DIV, 1, 1, 1), LW(2, 0, 0), CSRRW(0, MCYCLE, 0), CSRRS(3, MCYCLE, 0),
			CSRRS(4, CYCLE, 0), CSRRS(5, MINSTRET, 0), CSRRS(6, INSTRET, 0), CSRRS(7, MCYCLEH, 0),
			CSRRS(8, CYCLEH, 0), CSRRS(9, MINSTRETH, 0)};
	load_prog(s, 0, q, NI(q));
	run_to(s, 4 * NI(q), 20);
	CHECK(s->iss.x[3] == 37 && s->iss.x[4] == 38 && s->iss.x[5] == 5 && s->iss.x[6] == 6 &&
		      s->iss.x[7] == 0 && s->iss.x[8] == 0 && s->iss.x[9] == 0,
	      "mcycle %u (37), cycle %u (38), minstret %u (5), instret %u (6): counts before the "
	      "instruction, write ignored",
	      s->iss.x[3], s->iss.x[4], s->iss.x[5], s->iss.x[6]);
	load_prog(s, 0, &q[7], 3);
	s->iss.cycle = 0x123456789ull;
	s->iss.instret = 0xabcdef012ull;
	run_to(s, 12, 5);
	CHECK(s->iss.x[7] == 1 && s->iss.x[8] == 1 && s->iss.x[9] == 0xa, "mcycleh %x cycleh %x minstreth %x",
	      s->iss.x[7], s->iss.x[8], s->iss.x[9]);

	/* mip shows the lines whatever mie says */
	uint32_t m = CSRRS(3, MIP, 0);
	load_prog(s, 0, &m, 1);
	s->lines = 0x70000;
	s->mtimecmp = 0;
	rv_iss_step(&s->iss);
	CHECK(s->iss.x[3] == 0x70080, "mip = %08x with the three lines and MTIP, mie = 0", s->iss.x[3]);
}

/* ------------------------------------------------------------ traps */

/* ECALL, MRET, EBREAK: mcause, mepc, mtval, mstatus's MIE / MPIE */
static void test_trap_entry(struct sys *s)
{
	/* ECALL with MIE = 1, handler skips it and returns */
	uint32_t h = 0x200;
	uint32_t p[] = {NOP, ECALL, ADDI(5, 0, 1)};
	uint32_t hd[] = {CSRRS(6, MEPC, 0), ADDI(6, 6, 4), CSRRW(0, MEPC, 6), CSRRS(7, MSTATUS, 0), MRET};
	load_prog(s, 0, p, NI(p));
	for (size_t i = 0; i < NI(hd); i++)
		put_le(s->itcm + h + 4 * i, 4, hd[i]);
	s->iss.mtvec = h;
	s->iss.mstatus = RV_MSTATUS_MIE;
	s->iss.mtval = 0x1234;
	rv_iss_step(&s->iss);
	int st = rv_iss_step(&s->iss);
	CHECK(trapped(s, st, RV_CAUSE_ECALL_M, 0, 4) && s->iss.mstatus == RV_MSTATUS_MPIE &&
		      s->iss.instret == 1 && s->iss.cycle == 3,
	      "ecall: mcause %u, mepc %x, mtval %x, mstatus %x (MPIE, not MIE), pc %x, instret %llu, %llu "
	      "cycles",
	      s->iss.mcause, s->iss.mepc, s->iss.mtval, s->iss.mstatus, s->iss.pc,
	      (unsigned long long)s->iss.instret, (unsigned long long)s->iss.cycle);
	run_to(s, 12, 20);
	CHECK(s->iss.pc == 12 && s->iss.x[5] == 1 && s->iss.x[7] == 0x1880 &&
		      s->iss.mstatus == (RV_MSTATUS_MIE | RV_MSTATUS_MPIE),
	      "mret: back to mepc + 4, mstatus in handler %x, after %x (MIE = MPIE, MPIE = 1)", s->iss.x[7],
	      s->iss.mstatus);

	/* MRET with MPIE = 0 */
	uint32_t mr = MRET;
	load_prog(s, 0, &mr, 1);
	s->iss.mepc = 0x40;
	s->iss.mstatus = RV_MSTATUS_MIE;
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && s->iss.pc == 0x40 && s->iss.mstatus == RV_MSTATUS_MPIE && s->iss.cycle == 2,
	      "mret with MPIE = 0: MIE = 0, MPIE = 1 (%x), pc %x", s->iss.mstatus, s->iss.pc);

	/* EBREAK, nested trap (MIE already 0: MPIE becomes 0) */
	uint32_t eb = EBREAK;
	load_prog(s, DTCM_BASE, &eb, 1);
	s->iss.mtvec = DTCM_BASE;
	s->iss.mstatus = RV_MSTATUS_MPIE;
	s->iss.mtval = 99;
	st = rv_iss_step(&s->iss);
	CHECK(trapped(s, st, RV_CAUSE_BREAKPOINT, 0, DTCM_BASE) && s->iss.mstatus == 0,
	      "ebreak: mcause %u, mtval %u, mepc %x, mstatus %x", s->iss.mcause, s->iss.mtval, s->iss.mepc,
	      s->iss.mstatus);
	st = rv_iss_step(&s->iss);
	CHECK(trapped(s, st, RV_CAUSE_BREAKPOINT, 0, DTCM_BASE) && s->iss.cycle == 4 && s->iss.instret == 0,
	      "ebreak at mtvec traps again: 2 cycles per trap (%llu)", (unsigned long long)s->iss.cycle);
}

/* illegal encodings trap; FENCE and FENCE.I do nothing */
static void test_illegal(struct sys *s)
{
	int st;
	/* illegal encodings: mtval = the word, nothing else changes */
	static const struct {
		const char *name;
		uint32_t insn;
	} il[] = {
		{"all zeros", 0x00000000},
		{"all ones", 0xffffffff},
		{"c.nop (low bits 01)", 0x00000001},
		{"c.addi a0,1 + junk half", 0x12340505},
		{"c.lw (low bits 00)", 0x00004108},
		{"c.slli (low bits 10)", 0x0000050a},
		{"slli shamt[5]=1", 0x02009193},
		{"slli funct7 0100000", 0x40009193},
		{"srli shamt[5]=1", 0x0200d193},
		{"srai shamt[5]=1", 0x4200d193},
		{"srai funct7 0110000", 0x6000d193},
		{"add funct7 0000010", 0x04208133},
		{"sub-form of sll", 0x40209133},
		{"sub-form of xor", 0x4020c133},
		{"add funct7 1000000", 0x80208133},
		{"ld (load funct3 3)", 0x0000b183},
		{"lwu (load funct3 6)", 0x0000e183},
		{"load funct3 7", 0x0000f183},
		{"sd (store funct3 3)", 0x0020b023},
		{"store funct3 4", 0x0020c023},
		{"branch funct3 2", 0x0020a063},
		{"branch funct3 3", 0x0020b063},
		{"jalr funct3 1", 0x000090e7},
		{"fence funct3 2", 0x0000200f},
		{"misc-mem funct3 7", 0x0000700f},
		{"system funct3 4", 0x00004073},
		{"ecall with rd=1", 0x000000f3},
		{"ecall with rs1=1", 0x00008073},
		{"ebreak with rd=1", 0x001000f3},
		{"mret with rs1=1", 0x3020c073},
		{"wfi with rd=1", 0x105000f3},
		{"sret", 0x10200073},
		{"uret", 0x00200073},
		{"dret", 0x7b200073},
		{"sfence.vma", 0x12000073},
		{"wfi with rs1=16", 0x10580073},
		{"amoadd.w (A)", 0x0020a1af},
		{"lr.w (A)", 0x1000a1af},
		{"flw (F)", 0x0000a187},
		{"fsw (F)", 0x0030a027},
		{"fadd.s (F)", 0x002081d3},
		{"fmadd.s (F)", 0x002081c3},
		{"addiw (RV64)", 0x0010819b},
		{"addw (RV64)", 0x002081bb},
		{"custom-0", 0x0000000b},
		{"custom-1", 0x0000002b},
		{"opcode 0x7f (48-bit prefix)", 0x0000007f},
		{"opcode 0x3f (48-bit prefix)", 0x0000003f},
		{"opcode 0x5b", 0x0000005b},
		{"opcode 0x77 (OP-V/P)", 0x00000077},
	};
	for (size_t i = 0; i < NI(il); i++) {
		load_prog(s, 0x100, &il[i].insn, 1);
		s->iss.mtvec = 0x400;
		for (unsigned r = 1; r < 32; r++)
			s->iss.x[r] = 0x1000 + r;
		s->iss.x[1] = DTCM_BASE;
		st = rv_iss_step(&s->iss);
		int kept = 1;
		for (unsigned r = 2; r < 32; r++)
			kept &= s->iss.x[r] == 0x1000 + r;
		CHECK(trapped(s, st, RV_CAUSE_ILLEGAL, il[i].insn, 0x100) && kept && s->iss.instret == 0 &&
			      s->nstore == 0 && s->nload == 0,
		      "illegal %-28s %08x: %s mcause %u mtval %08x mepc %x, registers and memory kept",
		      il[i].name, il[i].insn, status_name(st), s->iss.mcause, s->iss.mtval, s->iss.mepc);
	}

	/* FENCE, FENCE.I: no-ops whatever the other fields */
	static const uint32_t fe[] = {0x0ff0000f, 0x8330000f, 0x0000100f, 0x0000000f, 0xfff0818f, 0xfff0918f};
	for (size_t i = 0; i < NI(fe); i++) {
		uint32_t r;
		st = one(s, fe[i], 7, 8, &r);
		CHECK(st == RV_ISS_RAN && r == 0xdeadbeef && s->iss.pc == 4 && s->iss.cycle == 1,
		      "fence/fence.i %08x: a no-op", fe[i]);
	}
}

/* misaligned and faulting loads and stores */
static void test_ls_faults(struct sys *s)
{
	/* misaligned and faulting loads and stores: rd and memory kept, no bus call when misaligned */
	const struct {
		const char *name;
		uint32_t insn, addr, cause;
	} ls[] = {
		{"lw  0x10000002", LW(3, 2, 1), DTCM_BASE + 2, RV_CAUSE_LOAD_MISALIGNED},
		{"lw  0x10000001", LW(3, 1, 1), DTCM_BASE + 1, RV_CAUSE_LOAD_MISALIGNED},
		{"lh  0x10000003", LH(3, 3, 1), DTCM_BASE + 3, RV_CAUSE_LOAD_MISALIGNED},
		{"lhu 0x0fffffff", LHU(3, -1, 1), DTCM_BASE - 1, RV_CAUSE_LOAD_MISALIGNED},
		{"sw  0x10000001", SW(2, 1, 1), DTCM_BASE + 1, RV_CAUSE_STORE_MISALIGNED},
		{"sw  0x10000006", SW(2, 6, 1), DTCM_BASE + 6, RV_CAUSE_STORE_MISALIGNED},
		{"sh  0x10000003", SH(2, 3, 1), DTCM_BASE + 3, RV_CAUSE_STORE_MISALIGNED},
		{"lw  0x10008000 (past DTCM)", LW(3, 0, 4), DTCM_BASE + DTCM_SIZE, RV_CAUSE_LOAD_FAULT},
		{"lb  0x0fffffff (unmapped)", LB(3, -1, 1), DTCM_BASE - 1, RV_CAUSE_LOAD_FAULT},
		{"lw  0x30000000 (unmapped)", LW(3, 0, 5), 0x30000000, RV_CAUSE_LOAD_FAULT},
		{"lb  PERIPH (sub-word)", LB(3, 0, 6), PERIPH_BASE, RV_CAUSE_LOAD_FAULT},
		{"lhu NPU (sub-word)", LHU(3, 0, 7), NPU_BASE, RV_CAUSE_LOAD_FAULT},
		{"sw  0x10008000 (past DTCM)", SW(2, 0, 4), DTCM_BASE + DTCM_SIZE, RV_CAUSE_STORE_FAULT},
		{"sw  0x30000000 (unmapped)", SW(2, 0, 5), 0x30000000, RV_CAUSE_STORE_FAULT},
		{"sb  PERIPH TOHOST (sub-word)", SB(2, P_TOHOST, 6), PERIPH_BASE + P_TOHOST, RV_CAUSE_STORE_FAULT},
		{"sh  NPU (sub-word)", SH(2, 0, 7), NPU_BASE, RV_CAUSE_STORE_FAULT},
		{"sw  0xfffffffc (unmapped)", SW(2, -4, 0), 0xfffffffc, RV_CAUSE_STORE_FAULT},
		{"lw  0x00010000 (past ITCM)", LW(3, 0, 8), ITCM_SIZE, RV_CAUSE_LOAD_FAULT},
		{"sw  0x7ffffffc (below DRAM)", SW(2, -4, 9), DRAM_BASE - 4, RV_CAUSE_STORE_FAULT},
		{"lw  DRAM + DRAM_BYTES", LW(3, 0, 10), DRAM_BASE + DRAM_BYTES, RV_CAUSE_LOAD_FAULT},
	};
	for (size_t i = 0; i < NI(ls); i++) {
		load_prog(s, 0x80, &ls[i].insn, 1);
		s->iss.mtvec = 0x400;
		s->iss.x[1] = DTCM_BASE;
		s->iss.x[2] = 0x55555555;
		s->iss.x[3] = 0xdeadbeef;
		s->iss.x[4] = DTCM_BASE + DTCM_SIZE;
		s->iss.x[5] = 0x30000000;
		s->iss.x[6] = PERIPH_BASE;
		s->iss.x[7] = NPU_BASE;
		s->iss.x[8] = ITCM_SIZE;
		s->iss.x[9] = DRAM_BASE;
		s->iss.x[10] = DRAM_BASE + DRAM_BYTES;
		int st = rv_iss_step(&s->iss);
		int misaligned = ls[i].cause == RV_CAUSE_LOAD_MISALIGNED || ls[i].cause == RV_CAUSE_STORE_MISALIGNED;
		int untouched = s->iss.x[3] == 0xdeadbeef && get_le(s->dtcm, 4) == 0 && !s->tohost_written;
		CHECK(trapped(s, st, ls[i].cause, ls[i].addr, 0x80) && untouched && s->iss.instret == 0 &&
			      s->iss.cycle == 2 && (!misaligned || s->nload + s->nstore == 0),
		      "%-30s: %s mcause %u mtval %08x, rd and memory kept%s", ls[i].name, status_name(st),
		      s->iss.mcause, s->iss.mtval, misaligned ? ", bus not called" : "");
	}
}

/* misaligned jump targets and instruction access faults */
static void test_jump_faults(struct sys *s)
{
	int st;
	/* misaligned jump targets trap on the jump; rd kept */
	const struct {
		const char *name;
		uint32_t insn, a, tval;
	} j[] = {
		{"jal  .+2", JAL(RA, 2), 0, 0x102},
		{"jal  .-6", JAL(RA, -6), 0, 0xfa},
		{"jalr 0x102", JALR(RA, T0, 0), 0x102, 0x102},
		{"jalr 0x103 -> 0x102", JALR(RA, T0, 0), 0x103, 0x102},
		{"jalr 0x100 + 3 -> 0x102", JALR(RA, T0, 3), 0x100, 0x102},
		{"beq  taken .+6", BEQ(0, 0, 6), 0, 0x106},
		{"bne  taken .-2", BNE(T0, 0, -2), 1, 0xfe},
	};
	for (size_t i = 0; i < NI(j); i++) {
		load_prog(s, 0x100, &j[i].insn, 1);
		s->iss.mtvec = 0x400;
		s->iss.x[T0] = j[i].a;
		s->iss.x[RA] = 0xdeadbeef;
		st = rv_iss_step(&s->iss);
		CHECK(trapped(s, st, RV_CAUSE_INSN_MISALIGNED, j[i].tval, 0x100) && s->iss.instret == 0 &&
			      s->iss.x[RA] == 0xdeadbeef,
		      "%-24s: %s mcause %u mtval %08x mepc %x, rd kept", j[i].name, status_name(st),
		      s->iss.mcause, s->iss.mtval, s->iss.mepc);
	}
	uint32_t nb = BNE(0, 0, 6);
	load_prog(s, 0x100, &nb, 1);
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && s->iss.pc == 0x104, "bne not taken to .+6: no trap");
	uint32_t ja = JALR(RA, T0, 0);
	load_prog(s, 0x100, &ja, 1);
	s->iss.x[T0] = 0x201;
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && s->iss.pc == 0x200 && s->iss.x[RA] == 0x104, "jalr to 0x201 goes to 0x200");

	/* instruction access faults: mepc = mtval = the address fetched */
	static const uint32_t fa[] = {0x30000000, PERIPH_BASE, NPU_BASE, DRAM_BASE, ITCM_SIZE,
				      DTCM_BASE + DTCM_SIZE, 0xfffffffc};
	for (size_t i = 0; i < NI(fa); i++) {
		uint32_t jr = JALR(0, 1, 0);
		load_prog(s, 0x100, &jr, 1);
		s->iss.mtvec = 0x400;
		s->iss.x[1] = fa[i];
		int st1 = rv_iss_step(&s->iss);
		st = rv_iss_step(&s->iss);
		CHECK(st1 == RV_ISS_RAN && trapped(s, st, RV_CAUSE_INSN_FAULT, fa[i], fa[i]) && s->iss.instret == 1,
		      "fetch from %08x: %s mcause %u mtval %08x mepc %08x", fa[i], status_name(st), s->iss.mcause,
		      s->iss.mtval, s->iss.mepc);
	}
	uint32_t jd = JALR(0, 1, 0), a7 = ADDI(A0, 0, 7);
	load_prog(s, 0x100, &jd, 1);
	put_le(s->dtcm + DTCM_SIZE - 4, 4, a7);
	s->iss.x[1] = DTCM_BASE + DTCM_SIZE - 4;
	rv_iss_step(&s->iss);
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && s->iss.x[A0] == 7, "code runs from the last word of DTCM");
}

static void test_traps(struct sys *s)
{
	test_trap_entry(s);
	test_illegal(s);
	test_ls_faults(s);
	test_jump_faults(s);
}

/* ------------------------------------------------------------ interrupts, WFI */

static void test_irq(struct sys *s)
{
	static const struct {
		uint32_t lines, mie;
		int mtip;
		uint32_t cause; /* 0: none */
	} c[] = {
		{0x70000, 0x70080, 1, 0x80000012}, {0x30000, 0x70080, 1, 0x80000011},
		{0x10000, 0x70080, 1, 0x80000010}, {0x00000, 0x70080, 1, 0x80000007},
		{0x50000, 0x70080, 0, 0x80000012}, {0x70000, 0x10080, 1, 0x80000010},
		{0x70000, 0x00080, 1, 0x80000007}, {0x70000, 0x00080, 0, 0},
		{0x40000, 0x30080, 0, 0},          {0x00000, 0x70000, 1, 0},
		{0x20000, 0x20000, 0, 0x80000011},
	};
	for (size_t i = 0; i < NI(c); i++) {
		uint32_t p[] = {ADDI(5, 5, 1), ADDI(5, 5, 1)};
		load_prog(s, 0x40, p, 2);
		s->iss.mtvec = 0x800;
		s->iss.mie = c[i].mie;
		s->iss.mstatus = RV_MSTATUS_MIE;
		s->iss.mtval = 0x77;
		s->lines = c[i].lines;
		s->mtimecmp = c[i].mtip ? 0 : ~0ull;
		int st = rv_iss_step(&s->iss);
		if (c[i].cause)
			CHECK(st == RV_ISS_IRQ && s->iss.mcause == c[i].cause && s->iss.mepc == 0x40 &&
				      s->iss.mtval == 0 && s->iss.pc == 0x800 &&
				      s->iss.mstatus == RV_MSTATUS_MPIE && s->iss.x[5] == 0 &&
				      s->iss.instret == 0 && s->iss.cycle == 2,
			      "lines %05x mtip %d mie %05x: %s mcause %08x (want %08x) mepc %x, nothing ran",
			      c[i].lines, c[i].mtip, c[i].mie, status_name(st), s->iss.mcause, c[i].cause,
			      s->iss.mepc);
		else
			CHECK(st == RV_ISS_RAN && s->iss.x[5] == 1,
			      "lines %05x mtip %d mie %05x: nothing enabled is pending, the instruction runs",
			      c[i].lines, c[i].mtip, c[i].mie);
	}

	/* MIE = 0: not taken; taken right after csrsi mstatus, MIE (mepc = next) */
	uint32_t p[] = {ADDI(5, 5, 1), CSRRSI(0, MSTATUS, 8), ADDI(5, 5, 1)};
	uint32_t hd[] = {ADDI(6, 6, 1), MRET};
	load_prog(s, 0, p, NI(p));
	put_le(s->itcm + 0x800, 4, hd[0]);
	put_le(s->itcm + 0x804, 4, hd[1]);
	s->iss.mtvec = 0x800;
	s->iss.mie = 0x20000;
	s->lines = 0x20000;
	int st1 = rv_iss_step(&s->iss);
	int st2 = rv_iss_step(&s->iss);
	int st3 = rv_iss_step(&s->iss);
	CHECK(st1 == RV_ISS_RAN && st2 == RV_ISS_RAN && st3 == RV_ISS_IRQ && s->iss.mepc == 8 &&
		      s->iss.mcause == 0x80000011,
	      "MIE = 0 holds the interrupt off; taken after csrsi mstatus, 8 with mepc %x", s->iss.mepc);
	/* level-sensitive: after mret, still pending -> taken again before the instruction */
	rv_iss_step(&s->iss);
	rv_iss_step(&s->iss);
	int st6 = rv_iss_step(&s->iss);
	CHECK(st6 == RV_ISS_IRQ && s->iss.mepc == 8 && s->iss.x[6] == 1 && s->iss.x[5] == 1,
	      "line still high after mret: taken again at mepc %x (handler ran %u times)", s->iss.mepc,
	      s->iss.x[6]);
	s->lines = 0;
	run_to(s, 12, 10);
	CHECK(s->iss.x[5] == 2 && s->iss.x[6] == 2, "line low: handler returns, x5 = %u", s->iss.x[5]);

	/* the timer: MTIP once mtime (the cycle count) reaches mtimecmp, set by the program */
	uint32_t t[] = {LUI(1, PERIPH_BASE >> 12), ADDI(2, 0, 40), SW(2, P_MTIMECMP_LO, 1), SW(0, P_MTIMECMP_HI, 1),
			ADDI(3, 0, 0x80), CSRRS(0, MIE, 3), CSRRSI(0, MSTATUS, 8), ADDI(5, 5, 1), JAL(0, -4)};
	load_prog(s, 0, t, NI(t));
	s->iss.mtvec = 0x800;
	put_le(s->itcm + 0x800, 4, JAL(0, 0));
	uint64_t before = 0;
	int st = RV_ISS_RAN;
	for (unsigned i = 0; i < 100 && st != RV_ISS_IRQ; i++) {
		before = s->iss.cycle;
		st = rv_iss_step(&s->iss);
	}
	CHECK(st == RV_ISS_IRQ && s->iss.mcause == 0x80000007 && before >= 40 && before < 43,
	      "timer: mcause %08x taken at cycle %llu (mtimecmp 40)", s->iss.mcause, (unsigned long long)before);
	uint32_t r[] = {LUI(1, PERIPH_BASE >> 12), LW(2, P_MTIME_LO, 1), LW(3, P_MTIME_HI, 1), LW(4, P_MTIMECMP_LO, 1),
			LW(5, P_MTIMECMP_HI, 1)};
	load_prog(s, 0, r, NI(r));
	run_to(s, 4 * NI(r), 10);
	CHECK(s->iss.x[2] == 1 && s->iss.x[3] == 0 && s->iss.x[4] == 0xffffffff && s->iss.x[5] == 0xffffffff,
	      "peripheral: mtime %u (1 = cycles before the lw), mtimecmp resets to all ones", s->iss.x[2]);
}

static void test_wfi(struct sys *s)
{
	/* MIE = 0: wait for an enabled line, then go on without a trap */
	uint32_t p[] = {WFI, ADDI(5, 5, 1), ADDI(5, 5, 1)};
	load_prog(s, 0, p, NI(p));
	s->iss.mtvec = 0x800;
	s->iss.mie = 0x10000;
	int st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && s->iss.wfi && s->iss.pc == 4 && s->iss.instret == 1 && s->iss.cycle == 1,
	      "wfi: retires, waits (wfi %d, pc %x)", s->iss.wfi, s->iss.pc);
	int all = 1;
	for (int i = 0; i < 10; i++)
		all &= rv_iss_step(&s->iss) == RV_ISS_WFI;
	s->lines = 0x60000; /* not enabled */
	s->mtimecmp = 0;    /* MTIP, not enabled */
	for (int i = 0; i < 10; i++)
		all &= rv_iss_step(&s->iss) == RV_ISS_WFI;
	CHECK(all && s->iss.pc == 4 && s->iss.cycle == 21 && s->iss.x[5] == 0 && s->iss.instret == 1,
	      "wfi: 20 steps waiting, 1 cycle each (%llu), lines not enabled in mie keep it waiting",
	      (unsigned long long)s->iss.cycle);
	s->lines = 0x10000;
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && !s->iss.wfi && s->iss.pc == 8 && s->iss.x[5] == 1 && s->iss.mcause == 0,
	      "wfi with MIE = 0 wakes on mip & mie and goes on: %s, pc %x, no trap", status_name(st), s->iss.pc);

	/* MIE = 1: wakes and takes the interrupt with mepc = the next instruction */
	load_prog(s, 0, p, NI(p));
	s->iss.mtvec = 0x800;
	s->iss.mie = 0x80;
	s->iss.mstatus = RV_MSTATUS_MIE;
	rv_iss_step(&s->iss);
	rv_iss_step(&s->iss);
	s->mtimecmp = s->iss.cycle + 5;
	unsigned n = 0;
	while ((st = rv_iss_step(&s->iss)) == RV_ISS_WFI && n < 100)
		n++;
	CHECK(st == RV_ISS_IRQ && s->iss.mepc == 4 && s->iss.mcause == 0x80000007 && n == 5 && !s->iss.wfi,
	      "wfi with MIE = 1, timer: %u steps waiting, then %s mcause %08x mepc %x", n, status_name(st),
	      s->iss.mcause, s->iss.mepc);

	/* already pending and enabled (MIE = 0): no wait at all */
	load_prog(s, 0, p, NI(p));
	s->iss.mie = 0x40000;
	s->lines = 0x40000;
	st = rv_iss_step(&s->iss);
	CHECK(st == RV_ISS_RAN && !s->iss.wfi && rv_iss_step(&s->iss) == RV_ISS_RAN && s->iss.x[5] == 1,
	      "wfi with an enabled line already pending and MIE = 0 does not wait");

	/* mie = 0: waits forever, whatever is pending; rv_iss_run counts the steps */
	load_prog(s, 0, p, NI(p));
	s->lines = 0x70000;
	s->mtimecmp = 0;
	s->iss.mstatus = RV_MSTATUS_MIE;
	uint64_t k = rv_iss_run(&s->iss, 1000);
	CHECK(k == 1000 && s->iss.wfi && s->iss.pc == 4 && s->iss.cycle == 1000,
	      "wfi with mie = 0: rv_iss_run(1000) = %llu steps, still waiting, %llu cycles",
	      (unsigned long long)k, (unsigned long long)s->iss.cycle);
}

/* ------------------------------------------------------------ cycle model, run, reset */

static void test_cycles(struct sys *s)
{
	/* 1 + 2 + 2 + 1 + 2(taken) + 2(jal) + 3 + 34 + 1 + 2(jalr) = 50 */
	uint32_t p[] = {
		ADDI(1, 0, 3),     /* 0  1 */
		SW(1, 0, 0),       /* 4  2: stores into ITCM word 0 */
		LW(2, 0, 0),       /* 8  2 */
		BNE(1, 2, 8),      /* 12 1: not taken */
		BEQ(1, 2, 8),      /* 16 2: -> 24 */
		NOP,               /* 20 */
		JAL(0, 8),         /* 24 2: -> 32 */
		NOP,               /* 28 */
		R(MUL, 3, 1, 1),   /* 32 3 */
		R(REMU, 4, 3, 1),  /* 36 34 */
		ADDI(5, 0, 52),    /* 40 1 */
		JALR(0, 5, 0),     /* 44 2: -> 52 */
		NOP,               /* 48 */
	};
	load_prog(s, 0, p, NI(p));
	int r = run_to(s, 52, 20);
	CHECK(r == 0 && s->iss.cycle == 50 && s->iss.instret == 10 && s->iss.x[3] == 9 && s->iss.x[4] == 0,
	      "cycle model: %llu cycles (want 50), %llu instructions (want 10)", (unsigned long long)s->iss.cycle,
	      (unsigned long long)s->iss.instret);

	/* rv_iss_run stops at halt (a TOHOST store), reset clears everything */
	uint32_t q[] = {LUI(1, PERIPH_BASE >> 12), ADDI(2, 0, 1), SW(2, P_TOHOST, 1), JAL(0, 0)};
	load_prog(s, 0, q, NI(q));
	uint64_t n = rv_iss_run(&s->iss, 100);
	CHECK(n == 3 && s->iss.halt && s->tohost == 1 && s->iss.pc == 12,
	      "rv_iss_run stops after the TOHOST store: %llu steps", (unsigned long long)n);
	CHECK(rv_iss_run(&s->iss, 100) == 0, "rv_iss_run with halt set runs nothing");
	s->iss.mstatus = 0x88;
	s->iss.mie = 0x80;
	s->iss.mepc = s->iss.mcause = s->iss.mtval = s->iss.mscratch = s->iss.mtvec = 4;
	s->iss.wfi = 1;
	rv_iss_reset(&s->iss);
	int z = s->iss.pc == 0 && !s->iss.halt && !s->iss.wfi && s->iss.cycle == 0 && s->iss.instret == 0 &&
		s->iss.mstatus == 0 && s->iss.mie == 0 && s->iss.mepc == 0 && s->iss.mcause == 0 &&
		s->iss.mtval == 0 && s->iss.mscratch == 0 && s->iss.mtvec == 0;
	for (unsigned i = 0; i < 32; i++)
		z &= s->iss.x[i] == 0;
	uint32_t v = 0, u = 0;
	z &= rv_iss_csr_read(&s->iss, MSTATUS, &v) == 0 && v == 0x1800;
	z &= rv_iss_csr_read(&s->iss, 0x7c0, &u) == -1;
	CHECK(z, "rv_iss_reset: pc, registers, CSRs, counters 0 (mstatus reads %x)", v);
}

/* ------------------------------------------------------------ ELF runner */

/* load the PT_LOAD segments of an RV32 ELF at their physical addresses */
static int load_elf(struct sys *s, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open");
		return -1;
	}
	int rc = -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	size_t nph;
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "not an ELF file");
		goto out;
	}
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph)) {
		snprintf(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS32 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_RISCV) {
		snprintf(err, errlen, "not a little-endian RV32 ELF");
		goto out;
	}
	if (eh.e_entry != 0)
		printf("note: %s: entry %#llx, the core starts at 0 (reset pc)\n", path,
		       (unsigned long long)eh.e_entry);
	size_t fsize;
	const char *img = elf_rawfile(e, &fsize);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph)) {
			snprintf(err, errlen, "bad program header %zu", i);
			goto out;
		}
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		uint8_t *dst = ph.p_paddr <= 0xffffffffu && ph.p_memsz <= 0xffffffffu
				       ? ram(s, (uint32_t)ph.p_paddr, (uint32_t)ph.p_memsz)
				       : NULL;
		if (!dst || ph.p_filesz > ph.p_memsz || ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset) {
			snprintf(err, errlen, "segment at %#llx, %llu bytes, is not in ITCM, DTCM or DRAM",
				 (unsigned long long)ph.p_paddr, (unsigned long long)ph.p_memsz);
			goto out;
		}
		memcpy(dst, img + ph.p_offset, ph.p_filesz);
		memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
	}
	rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_elf(struct sys *s, const char *dir, const char *file)
{
	char path[4096], err[256], name[256];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	snprintf(name, sizeof name, "%.*s", (int)(strlen(file) - 4), file);
	sys_reset(s);
	if (load_elf(s, path, err, sizeof err)) {
		CHECK_FAIL("rv32 %-16s %s: %s", name, path, err);
		return;
	}
	uint64_t n = rv_iss_run(&s->iss, MAX_STEPS);
	const struct rv_iss *c = &s->iss;
	if (!s->tohost_written) {
		CHECK_FAIL("rv32 %-16s no TOHOST write in %u steps (pc %08x, wfi %d, last trap mcause %08x mepc %08x "
			   "mtval %08x)",
		        name, MAX_STEPS, c->pc, c->wfi, c->mcause, c->mepc, c->mtval);
		return;
	}
	if (s->tohost == 1)
		CHECK(1, "rv32 %-16s TOHOST = 1 after %llu steps, %llu instructions, %llu cycles", name,
		      (unsigned long long)n, (unsigned long long)c->instret, (unsigned long long)c->cycle);
	else if ((s->tohost & 1) && s->tohost > 1)
		CHECK_FAIL("rv32 %-16s TOHOST = %#x: test case %u failed (pc %08x, last trap mcause %08x mepc %08x "
			   "mtval %08x)",
		        name, s->tohost, s->tohost >> 1, c->pc, c->mcause, c->mepc, c->mtval);
	else
		CHECK_FAIL("rv32 %-16s TOHOST = %#x (not a pass/fail code; pc %08x)", name, s->tohost, c->pc);
}

static void run_elf_dir(struct sys *s, const char *dir)
{
	DIR *d = opendir(dir);
	if (!CHECK(d != NULL, "rv32: open ELF directory %s", dir))
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 4 || strcmp(de->d_name + l - 4, ".elf"))
			continue;
		char **nn = realloc(names, (n + 1) * sizeof *names);
		char *dup = strdup(de->d_name);
		if (!nn || !dup) {
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
		names = nn;
		names[n++] = dup;
	}
	closedir(d);
	CHECK(n > 0, "rv32: %zu ELF files in %s", n, dir);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		run_elf(s, dir, names[i]);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	check_init(0);
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [ELF_DIR]\n", argv[0]);
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "libelf: %s\n", elf_errmsg(-1));
		return 2;
	}
	struct sys *s = sys_new();
	test_encoder();
	test_alu(s);
	test_loads_stores(s);
	test_jumps(s);
	test_csr(s);
	test_traps(s);
	test_irq(s);
	test_wfi(s);
	test_cycles(s);
	if (argc == 2)
		run_elf_dir(s, argv[1]);
	sys_free(s);
	return check_report();
}
