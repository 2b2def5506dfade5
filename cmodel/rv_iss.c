/* rv_iss.c - the instruction-set simulator of the Loom control core:
 * RV32IM + Zicsr + ECALL/EBREAK/MRET/WFI, machine mode only, exactly as
 * docs/CONTROL.md specifies. The interface, the bus and interrupt
 * conventions and the cycle model are described in cmodel/rv_iss.h.
 *
 * Decoding is strict: every encoding CONTROL.md does not list is an illegal
 * instruction (mtval = the 32 fetched bits), in particular anything whose low
 * two bits are not 11 (compressed), shifts by immediate with imm[11:5] other
 * than 0000000 / 0100000 (SRAI), OP funct7 other than 0000000, 0100000 (SUB,
 * SRA only) and 0000001 (M), JALR with funct3 != 0, and SYSTEM funct3 = 0
 * words other than the exact ECALL, EBREAK, MRET and WFI encodings. FENCE
 * (funct3 0) and FENCE.I (funct3 1) are no-ops whatever their other fields
 * hold, as the specification asks base implementations to ignore them.
 *
 * An instruction that raises an exception changes nothing but the trap state:
 * each exec_* function checks everything that can fault before it writes rd.
 */
#include "cmodel/rv_iss.h"
#include "common/timing.h"

#include <string.h>

/* opcodes (insn[6:0]) */
enum {
	OPC_LOAD = 0x03,
	OPC_MISC_MEM = 0x0f,
	OPC_OP_IMM = 0x13,
	OPC_AUIPC = 0x17,
	OPC_STORE = 0x23,
	OPC_OP = 0x33,
	OPC_LUI = 0x37,
	OPC_BRANCH = 0x63,
	OPC_JALR = 0x67,
	OPC_JAL = 0x6f,
	OPC_SYSTEM = 0x73,
};

#define INSN_ECALL 0x00000073u
#define INSN_EBREAK 0x00100073u
#define INSN_MRET 0x30200073u
#define INSN_WFI 0x10500073u

#define MIE_WRITABLE RV_MIP_MASK /* mie bits 7, 16, 17, 18 */
#define MSTATUS_WRITABLE (RV_MSTATUS_MIE | RV_MSTATUS_MPIE)

/* cycle model (rv_iss.h): cycles per instruction class, from the timing model */
enum {
	CY_ALU = LOOM_CORE_CY_ALU,
	CY_MEM = LOOM_CORE_CY_MEM,
	CY_JUMP = LOOM_CORE_CY_JUMP,
	CY_MUL = LOOM_CORE_CY_MUL,
	CY_DIV = LOOM_CORE_CY_DIV,
	CY_TRAP = LOOM_CORE_CY_TRAP,
};

/* One instruction in flight: its outcome when it retires (next pc, cost) or
 * the exception it raises. */
struct op {
	uint32_t insn, pc;
	uint32_t next;
	unsigned cost;
	uint32_t cause, tval;
};

/* ---- bit helpers (plain unsigned arithmetic: no implementation-defined
 * conversions or shifts of negative values) ---- */

static inline uint32_t sext(uint32_t v, unsigned bits)
{
	uint32_t m = 1u << (bits - 1);
	v &= (m << 1) - 1;
	return (v ^ m) - m;
}

static inline int64_t s64(uint32_t v)
{
	return (int64_t)(v ^ 0x80000000u) - 0x80000000;
}

static inline uint32_t sra(uint32_t v, unsigned sh)
{
	return v & 0x80000000u ? ~(~v >> sh) : v >> sh;
}

static inline int slt(uint32_t a, uint32_t b)
{
	return (a ^ 0x80000000u) < (b ^ 0x80000000u);
}

static inline unsigned f_rd(uint32_t i) { return (i >> 7) & 31; }
static inline unsigned f_rs1(uint32_t i) { return (i >> 15) & 31; }
static inline unsigned f_rs2(uint32_t i) { return (i >> 20) & 31; }
static inline unsigned f_funct3(uint32_t i) { return (i >> 12) & 7; }
static inline unsigned f_funct7(uint32_t i) { return i >> 25; }

static inline uint32_t imm_i(uint32_t i) { return sext(i >> 20, 12); }
static inline uint32_t imm_s(uint32_t i) { return sext((i >> 25) << 5 | ((i >> 7) & 31), 12); }
static inline uint32_t imm_u(uint32_t i) { return i & 0xfffff000u; }

static inline uint32_t imm_b(uint32_t i)
{
	return sext((i >> 31) << 12 | ((i >> 7) & 1) << 11 | ((i >> 25) & 0x3f) << 5 | ((i >> 8) & 0xf) << 1,
		    13);
}

static inline uint32_t imm_j(uint32_t i)
{
	return sext((i >> 31) << 20 | ((i >> 12) & 0xff) << 12 | ((i >> 20) & 1) << 11 | ((i >> 21) & 0x3ff) << 1,
		    21);
}

static inline void wr(struct rv_iss *iss, unsigned rd, uint32_t v)
{
	if (rd)
		iss->x[rd] = v;
}

static int except(struct op *op, uint32_t cause, uint32_t tval)
{
	op->cause = cause;
	op->tval = tval;
	return -1;
}

static int illegal(struct op *op)
{
	return except(op, RV_CAUSE_ILLEGAL, op->insn);
}

/* a taken jump to target: misaligned targets trap on the jump itself */
static int jump(struct op *op, uint32_t target)
{
	if (target & 3)
		return except(op, RV_CAUSE_INSN_MISALIGNED, target);
	op->next = target;
	op->cost = CY_JUMP;
	return 0;
}

/* ---- traps ---- */

static void take_trap(struct rv_iss *iss, uint32_t epc, uint32_t cause, uint32_t tval)
{
	iss->mepc = epc & ~3u;
	iss->mcause = cause;
	iss->mtval = tval;
	iss->mstatus = (iss->mstatus & RV_MSTATUS_MIE ? RV_MSTATUS_MPIE : 0);
	iss->pc = iss->mtvec;
	iss->cycle += CY_TRAP;
}

/* ---- CSRs ---- */

enum csr_kind { CSR_NONE, CSR_RW, CSR_RO, CSR_WIGNORE };

static enum csr_kind csr_kind(uint32_t csr)
{
	switch (csr) {
	case 0x300: case 0x304: case 0x305: case 0x340: case 0x341: case 0x342: case 0x343:
		return CSR_RW;
	case 0x301: case 0x344:                         /* misa, mip */
	case 0xc00: case 0xc80: case 0xc02: case 0xc82: /* cycle(h), instret(h) */
	case 0xf11: case 0xf12: case 0xf13: case 0xf14: /* mvendorid .. mhartid */
		return CSR_RO;
	case 0xb00: case 0xb80: case 0xb02: case 0xb82: /* mcycle(h), minstret(h) */
		return CSR_WIGNORE;
	default:
		return CSR_NONE;
	}
}

int rv_iss_csr_read(const struct rv_iss *iss, uint32_t csr, uint32_t *val)
{
	switch (csr) {
	case 0x300: *val = iss->mstatus | RV_MSTATUS_MPP; return 0;
	case 0x301: *val = RV_MISA; return 0;
	case 0x304: *val = iss->mie; return 0;
	case 0x305: *val = iss->mtvec; return 0;
	case 0x340: *val = iss->mscratch; return 0;
	case 0x341: *val = iss->mepc; return 0;
	case 0x342: *val = iss->mcause; return 0;
	case 0x343: *val = iss->mtval; return 0;
	case 0x344: *val = iss->mip; return 0;
	case 0xb00: case 0xc00: *val = (uint32_t)iss->cycle; return 0;
	case 0xb80: case 0xc80: *val = (uint32_t)(iss->cycle >> 32); return 0;
	case 0xb02: case 0xc02: *val = (uint32_t)iss->instret; return 0;
	case 0xb82: case 0xc82: *val = (uint32_t)(iss->instret >> 32); return 0;
	case 0xf11: case 0xf12: case 0xf13: case 0xf14: *val = 0; return 0;
	default: return -1;
	}
}

static void csr_write(struct rv_iss *iss, uint32_t csr, uint32_t v)
{
	switch (csr) {
	case 0x300: iss->mstatus = v & MSTATUS_WRITABLE; break;
	case 0x304: iss->mie = v & MIE_WRITABLE; break;
	case 0x305: iss->mtvec = v & ~3u; break;
	case 0x340: iss->mscratch = v; break;
	case 0x341: iss->mepc = v & ~3u; break;
	case 0x342: iss->mcause = v; break;
	case 0x343: iss->mtval = v; break;
	default: break; /* mcycle(h), minstret(h): ignored */
	}
}

/* ---- instruction groups; each returns 0 (retires) or -1 (op->cause) ---- */

static int exec_load(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn;
	unsigned f3 = f_funct3(in), size = 1u << (f3 & 3);
	if (f3 == 3 || f3 > 5)
		return illegal(op);
	uint32_t addr = iss->x[f_rs1(in)] + imm_i(in), v = 0;
	if (addr & (size - 1))
		return except(op, RV_CAUSE_LOAD_MISALIGNED, addr);
	if (iss->bus.load(iss->ctx, addr, size, &v))
		return except(op, RV_CAUSE_LOAD_FAULT, addr);
	if (size < 4)
		v &= (1u << (8 * size)) - 1;
	if (f3 < 2)
		v = sext(v, 8 * size);
	wr(iss, f_rd(in), v);
	op->cost = CY_MEM;
	return 0;
}

static int exec_store(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn;
	unsigned f3 = f_funct3(in), size = 1u << f3;
	if (f3 > 2)
		return illegal(op);
	uint32_t addr = iss->x[f_rs1(in)] + imm_s(in), v = iss->x[f_rs2(in)];
	if (addr & (size - 1))
		return except(op, RV_CAUSE_STORE_MISALIGNED, addr);
	if (size < 4)
		v &= (1u << (8 * size)) - 1;
	if (iss->bus.store(iss->ctx, addr, size, v))
		return except(op, RV_CAUSE_STORE_FAULT, addr);
	op->cost = CY_MEM;
	return 0;
}

static int exec_op_imm(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn, a = iss->x[f_rs1(in)], imm = imm_i(in), r;
	unsigned sh = f_rs2(in), f7 = f_funct7(in);
	switch (f_funct3(in)) {
	case 0: r = a + imm; break;
	case 2: r = slt(a, imm); break;
	case 3: r = a < imm; break;
	case 4: r = a ^ imm; break;
	case 6: r = a | imm; break;
	case 7: r = a & imm; break;
	case 1:
		if (f7 != 0)
			return illegal(op);
		r = a << sh;
		break;
	default: /* 5 */
		if (f7 == 0)
			r = a >> sh;
		else if (f7 == 0x20)
			r = sra(a, sh);
		else
			return illegal(op);
		break;
	}
	wr(iss, f_rd(in), r);
	return 0;
}

static uint32_t mul_div(struct op *op, unsigned f3, uint32_t a, uint32_t b)
{
	if (f3 < 4) {
		op->cost = CY_MUL;
		switch (f3) {
		case 0: return a * b;
		case 1: return (uint32_t)((uint64_t)(s64(a) * s64(b)) >> 32);
		case 2: return (uint32_t)((uint64_t)(s64(a) * (int64_t)b) >> 32);
		default: return (uint32_t)(((uint64_t)a * b) >> 32);
		}
	}
	op->cost = CY_DIV;
	switch (f3) {
	case 4: return b ? (uint32_t)(s64(a) / s64(b)) : 0xffffffffu; /* MIN / -1 = MIN */
	case 5: return b ? a / b : 0xffffffffu;
	case 6: return b ? (uint32_t)(s64(a) % s64(b)) : a; /* MIN % -1 = 0 */
	default: return b ? a % b : a;
	}
}

static int exec_op(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn, a = iss->x[f_rs1(in)], b = iss->x[f_rs2(in)], r;
	unsigned f3 = f_funct3(in), f7 = f_funct7(in);
	if (f7 == 1) {
		r = mul_div(op, f3, a, b);
	} else if (f7 == 0x20) {
		if (f3 == 0)
			r = a - b;
		else if (f3 == 5)
			r = sra(a, b & 31);
		else
			return illegal(op);
	} else if (f7 == 0) {
		switch (f3) {
		case 0: r = a + b; break;
		case 1: r = a << (b & 31); break;
		case 2: r = slt(a, b); break;
		case 3: r = a < b; break;
		case 4: r = a ^ b; break;
		case 5: r = a >> (b & 31); break;
		case 6: r = a | b; break;
		default: r = a & b; break;
		}
	} else {
		return illegal(op);
	}
	wr(iss, f_rd(in), r);
	return 0;
}

static int exec_branch(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn, a = iss->x[f_rs1(in)], b = iss->x[f_rs2(in)];
	int t;
	switch (f_funct3(in)) {
	case 0: t = a == b; break;
	case 1: t = a != b; break;
	case 4: t = slt(a, b); break;
	case 5: t = !slt(a, b); break;
	case 6: t = a < b; break;
	case 7: t = a >= b; break;
	default: return illegal(op);
	}
	return t ? jump(op, op->pc + imm_b(in)) : 0;
}

static int exec_jal(struct rv_iss *iss, struct op *op)
{
	if (jump(op, op->pc + imm_j(op->insn)))
		return -1;
	wr(iss, f_rd(op->insn), op->pc + 4);
	return 0;
}

static int exec_jalr(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn;
	if (f_funct3(in) != 0)
		return illegal(op);
	if (jump(op, (iss->x[f_rs1(in)] + imm_i(in)) & ~1u))
		return -1;
	wr(iss, f_rd(in), op->pc + 4);
	return 0;
}

static int exec_misc_mem(struct op *op)
{
	return f_funct3(op->insn) <= 1 ? 0 : illegal(op); /* FENCE, FENCE.I: no-ops */
}

/* CSRRW/S/C and the immediate forms. CSRRS/CSRRC with rs1 = x0 and
 * CSRRSI/CSRRCI with uimm = 0 do not write, so they may read a read-only
 * CSR; CSRRW/CSRRWI always write. */
static int exec_csr(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn, csr = in >> 20, old;
	unsigned f3 = f_funct3(in), rs1 = f_rs1(in);
	enum csr_kind k = csr_kind(csr);
	int writes = (f3 & 3) == 1 || rs1 != 0;
	if (k == CSR_NONE || (writes && k == CSR_RO))
		return illegal(op);
	uint32_t src = f3 & 4 ? rs1 : iss->x[rs1];
	rv_iss_csr_read(iss, csr, &old);
	if (writes) {
		switch (f3 & 3) {
		case 1: csr_write(iss, csr, src); break;
		case 2: csr_write(iss, csr, old | src); break;
		default: csr_write(iss, csr, old & ~src); break;
		}
	}
	wr(iss, f_rd(in), old);
	return 0;
}

static int exec_system(struct rv_iss *iss, struct op *op)
{
	unsigned f3 = f_funct3(op->insn);
	if (f3 != 0 && f3 != 4)
		return exec_csr(iss, op);
	switch (op->insn) {
	case INSN_ECALL:
		return except(op, RV_CAUSE_ECALL_M, 0);
	case INSN_EBREAK:
		return except(op, RV_CAUSE_BREAKPOINT, 0);
	case INSN_MRET:
		iss->mstatus = RV_MSTATUS_MPIE | (iss->mstatus & RV_MSTATUS_MPIE ? RV_MSTATUS_MIE : 0);
		op->next = iss->mepc;
		op->cost = CY_JUMP;
		return 0;
	case INSN_WFI:
		if (!(iss->mip & iss->mie))
			iss->wfi = 1;
		return 0;
	default:
		return illegal(op);
	}
}

static int exec(struct rv_iss *iss, struct op *op)
{
	uint32_t in = op->insn;
	switch (in & 0x7f) {
	case OPC_LOAD: return exec_load(iss, op);
	case OPC_STORE: return exec_store(iss, op);
	case OPC_OP_IMM: return exec_op_imm(iss, op);
	case OPC_OP: return exec_op(iss, op);
	case OPC_LUI: wr(iss, f_rd(in), imm_u(in)); return 0;
	case OPC_AUIPC: wr(iss, f_rd(in), op->pc + imm_u(in)); return 0;
	case OPC_BRANCH: return exec_branch(iss, op);
	case OPC_JAL: return exec_jal(iss, op);
	case OPC_JALR: return exec_jalr(iss, op);
	case OPC_MISC_MEM: return exec_misc_mem(op);
	case OPC_SYSTEM: return exec_system(iss, op);
	default: return illegal(op); /* includes every insn[1:0] != 11 */
	}
}

/* fetch and run the instruction at pc */
static int step_insn(struct rv_iss *iss)
{
	struct op op = {.pc = iss->pc, .next = iss->pc + 4, .cost = CY_ALU};
	int r;
	if (op.pc & 3)
		r = except(&op, RV_CAUSE_INSN_MISALIGNED, op.pc);
	else if (iss->bus.fetch(iss->ctx, op.pc, &op.insn))
		r = except(&op, RV_CAUSE_INSN_FAULT, op.pc);
	else
		r = exec(iss, &op);
	if (r) {
		take_trap(iss, op.pc, op.cause, op.tval);
		return RV_ISS_TRAP;
	}
	iss->pc = op.next;
	iss->cycle += op.cost;
	iss->instret++;
	return RV_ISS_RAN;
}

/* the highest set bit of pending (18 > 17 > 16 > 7) */
static unsigned irq_bit(uint32_t pending)
{
	unsigned b = 31;
	while (!(pending >> b & 1))
		b--;
	return b;
}

/* ---- public ---- */

void rv_iss_init(struct rv_iss *iss, const struct rv_iss_bus *bus, void *ctx)
{
	memset(iss, 0, sizeof *iss);
	iss->bus = *bus;
	iss->ctx = ctx;
	rv_iss_reset(iss);
}

void rv_iss_reset(struct rv_iss *iss)
{
	memset(iss->x, 0, sizeof iss->x);
	iss->pc = 0;
	iss->mstatus = iss->mie = iss->mtvec = iss->mscratch = 0;
	iss->mepc = iss->mcause = iss->mtval = iss->mip = 0;
	iss->cycle = iss->instret = 0;
	iss->wfi = iss->halt = 0;
}

int rv_iss_step(struct rv_iss *iss)
{
	iss->mip = iss->bus.irq ? iss->bus.irq(iss->ctx) & RV_MIP_MASK : 0;
	uint32_t pending = iss->mip & iss->mie;
	if (iss->wfi) {
		if (!pending) {
			iss->cycle++;
			return RV_ISS_WFI;
		}
		iss->wfi = 0;
	}
	if ((iss->mstatus & RV_MSTATUS_MIE) && pending) {
		take_trap(iss, iss->pc, RV_CAUSE_IRQ | irq_bit(pending), 0);
		return RV_ISS_IRQ;
	}
	return step_insn(iss);
}

uint64_t rv_iss_run(struct rv_iss *iss, uint64_t max_steps)
{
	uint64_t n = 0;
	while (n < max_steps && !iss->halt) {
		rv_iss_step(iss);
		n++;
	}
	return n;
}
