/* test_cmodel.c - unit tests of the Loom C model (cmodel/cmodel.c), the
 * "cmodel" backend of include/loom/hw.h: registers, LOAD/STORE with padding,
 * GEMM and dilated strided convolution against plain C references,
 * requantization edge cases, every error cause with its ERR_PC/ERR_INFO,
 * the vector unit (ELTWISE, POOL, DWCONV, LUT: every decoder check in its
 * order, results against hand-computed values, the cycle estimate),
 * MARK records, interrupts, abort, timeout and resume of run().
 *
 * Runs on the "default" and "odd" configurations found under $LOOM_ROOT
 * (or the directory loom_root_dir() finds). Prints one line per check and
 * ends with "N passed, M failed"; exit status 1 on any failure. */
#include "loom/hw.h"
#include "loom/isa.h"
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POP_PREV 0x100u
#define POP_NEXT 0x200u
#define PUSH_PREV 0x400u
#define PUSH_NEXT 0x800u
#define BIG 1000000000ull

struct t {
	loom_hwcfg cfg;
	loom_hw *hw;
	uint32_t R, C, B;
	uint64_t fb; /* DRAM bytes of one instruction fetch */
	uint32_t rng;
	uint32_t last_rd; /* DRAM_RD_BYTES of the last err_case run */
};

static uint32_t rnd(struct t *t)
{
	uint32_t x = t->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return t->rng = x;
}

static void fill_rand(struct t *t, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd(t) >> 11);
}

/* ---- instruction building ---- */

static void setf(loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v)) {
		fprintf(stderr, "test bug: %s = %u does not fit\n", loom_field_name(f), v);
		exit(2);
	}
}

static loom_insn op(unsigned opcode, uint32_t deps)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = opcode | deps;
	return in;
}

static loom_insn ld(unsigned tgt, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
		    unsigned n2, uint32_t s2, unsigned n3, uint32_t s3, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_LOAD, deps);
	setf(&in, LOOM_F_LOAD_TARGET, tgt);
	setf(&in, LOOM_F_LOAD_ROW_WORDS, rw);
	setf(&in, LOOM_F_LOAD_DRAM_ADDR, dram);
	setf(&in, LOOM_F_LOAD_MEM_ADDR, mem);
	setf(&in, LOOM_F_LOAD_N1, n1);
	setf(&in, LOOM_F_LOAD_N2, n2);
	setf(&in, LOOM_F_LOAD_N3, n3);
	setf(&in, LOOM_F_LOAD_STRIDE1, s1);
	setf(&in, LOOM_F_LOAD_STRIDE2, s2);
	setf(&in, LOOM_F_LOAD_STRIDE3, s3);
	return in;
}

static void ld_pad(loom_insn *in, unsigned top, unsigned bottom, unsigned left, unsigned right, int8_t v)
{
	setf(in, LOOM_F_LOAD_PAD_TOP, top);
	setf(in, LOOM_F_LOAD_PAD_BOTTOM, bottom);
	setf(in, LOOM_F_LOAD_PAD_LEFT, left);
	setf(in, LOOM_F_LOAD_PAD_RIGHT, right);
	setf(in, LOOM_F_LOAD_PAD_VALUE, (uint8_t)v);
}

static loom_insn st(unsigned src, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
		    unsigned n2, uint32_t s2, unsigned n3, uint32_t s3, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_STORE, deps);
	setf(&in, LOOM_F_STORE_SOURCE, src);
	setf(&in, LOOM_F_STORE_ROW_WORDS, rw);
	setf(&in, LOOM_F_STORE_DRAM_ADDR, dram);
	setf(&in, LOOM_F_STORE_MEM_ADDR, mem);
	setf(&in, LOOM_F_STORE_N1, n1);
	setf(&in, LOOM_F_STORE_N2, n2);
	setf(&in, LOOM_F_STORE_N3, n3);
	setf(&in, LOOM_F_STORE_STRIDE1, s1);
	setf(&in, LOOM_F_STORE_STRIDE2, s2);
	setf(&in, LOOM_F_STORE_STRIDE3, s3);
	return in;
}

static void st_q(loom_insn *in, unsigned param, int8_t zp, int8_t lo, int8_t hi)
{
	setf(in, LOOM_F_STORE_PARAM_ADDR, param);
	setf(in, LOOM_F_STORE_ZERO_POINT, (uint8_t)zp);
	setf(in, LOOM_F_STORE_CLIP_LO, (uint8_t)lo);
	setf(in, LOOM_F_STORE_CLIP_HI, (uint8_t)hi);
}

struct mm {
	uint32_t act, wgt, acc, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh, accumulate;
};

static loom_insn matmul(const struct mm *p, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_MATMUL, deps);
	setf(&in, LOOM_F_MATMUL_ACT_ADDR, p->act);
	setf(&in, LOOM_F_MATMUL_WGT_ADDR, p->wgt);
	setf(&in, LOOM_F_MATMUL_ACC_ADDR, p->acc);
	setf(&in, LOOM_F_MATMUL_IN_W, p->inw);
	setf(&in, LOOM_F_MATMUL_IN_H, p->inh);
	setf(&in, LOOM_F_MATMUL_OUT_W, p->ow);
	setf(&in, LOOM_F_MATMUL_OUT_H, p->oh);
	setf(&in, LOOM_F_MATMUL_NCB, p->ncb);
	setf(&in, LOOM_F_MATMUL_KW, p->kw);
	setf(&in, LOOM_F_MATMUL_KH, p->kh);
	setf(&in, LOOM_F_MATMUL_SW, p->sw);
	setf(&in, LOOM_F_MATMUL_SH, p->sh);
	setf(&in, LOOM_F_MATMUL_DW, p->dw);
	setf(&in, LOOM_F_MATMUL_DH, p->dh);
	setf(&in, LOOM_F_MATMUL_ACCUMULATE, p->accumulate);
	return in;
}

/* a 1x1-kernel MATMUL of NCB blocks over P = w*h lines */
static struct mm mm1(uint32_t act, uint32_t wgt, uint32_t acc, uint32_t w, uint32_t h, uint32_t ncb)
{
	struct mm p = {act, wgt, acc, w, h, w, h, ncb, 1, 1, 1, 1, 1, 1, 0};
	return p;
}

static loom_insn mark(uint32_t addr, uint32_t id)
{
	loom_insn in = op(LOOM_OP_MARK, 0);
	setf(&in, LOOM_F_MARK_DRAM_ADDR, addr);
	setf(&in, LOOM_F_MARK_MARK_ID, id);
	return in;
}

static loom_insn finish(void) { return op(LOOM_OP_FINISH, 0); }

/* ---- host access ---- */

static void wr(struct t *t, uint64_t a, const void *p, size_t n)
{
	if (loom_hw_dram_write(t->hw, a, p, n)) {
		fprintf(stderr, "dram write: %s\n", loom_hw_error(t->hw));
		exit(2);
	}
}

static void rd(struct t *t, uint64_t a, void *p, size_t n)
{
	if (loom_hw_dram_read(t->hw, a, p, n)) {
		fprintf(stderr, "dram read: %s\n", loom_hw_error(t->hw));
		exit(2);
	}
}

static uint32_t rd32(struct t *t, uint64_t a)
{
	uint8_t b[4];
	rd(t, a, b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static int32_t get32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static void put_prog(struct t *t, uint64_t a, const loom_insn *v, size_t n)
{
	uint8_t *buf = malloc(n * LOOM_INSN_BYTES);
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < LOOM_INSN_WORDS; k++)
			put32(buf + i * LOOM_INSN_BYTES + 4 * k, v[i].w[k]);
	wr(t, a, buf, n * LOOM_INSN_BYTES);
	free(buf);
}

static uint32_t reg(struct t *t, uint32_t off) { return loom_hw_mmio_read(t->hw, off); }
static uint32_t ctr(struct t *t, unsigned i) { return reg(t, LOOM_REG_CTR_BASE + 4 * i); }

struct res {
	int rc;
	uint32_t status, cause, pc, info;
};

/* START at base, run to the interrupt, acknowledge it (abort on timeout). */
static struct res exec(struct t *t, uint32_t base, uint64_t max)
{
	struct res r;
	loom_hw_mmio_write(t->hw, LOOM_REG_INSN_BASE, base);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	r.rc = loom_hw_run(t->hw, max);
	r.status = reg(t, LOOM_REG_STATUS);
	r.cause = reg(t, LOOM_REG_ERR_CAUSE);
	r.pc = reg(t, LOOM_REG_ERR_PC);
	r.info = reg(t, LOOM_REG_ERR_INFO);
	if (r.rc == LOOM_HW_IRQ)
		loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	else
		loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_ABORT);
	return r;
}

static struct res run_prog(struct t *t, uint32_t base, const loom_insn *v, size_t n)
{
	put_prog(t, base, v, n);
	return exec(t, base, BIG);
}

static int done_ok(const struct res *r)
{
	return r->rc == LOOM_HW_IRQ && r->status == LOOM_STATUS_DONE && r->cause == 0;
}

static uint64_t beats(struct t *t, uint64_t a, uint64_t n) { return (a + n - 1) / t->B - a / t->B + 1; }

#define PROG 0x1000u
#define NI(a) (sizeof(a) / sizeof((a)[0]))

/* ---- tests ---- */

static void test_regs(struct t *t)
{
	const loom_hwcfg *c = &t->cfg;
	const char *n = c->name;
	CHECK(reg(t, LOOM_REG_ID) == LOOM_ID_VALUE, "%s: ID", n);
	CHECK(reg(t, LOOM_REG_VERSION) == (LOOM_ISA_MAJOR << 16 | LOOM_ISA_MINOR), "%s: VERSION", n);
	CHECK(reg(t, LOOM_REG_HW_ARRAY) == (c->array_rows | c->array_cols << 8 | c->sp_banks << 16 |
					    c->dma_outstanding << 24), "%s: HW_ARRAY", n);
	CHECK(reg(t, LOOM_REG_HW_SP_BYTES) == c->sp_bytes, "%s: HW_SP_BYTES", n);
	CHECK(reg(t, LOOM_REG_HW_ACC_BYTES) == c->acc_bytes, "%s: HW_ACC_BYTES", n);
	CHECK(reg(t, LOOM_REG_HW_BUS) == (c->dram_beat_bytes | c->dram_mib << 16), "%s: HW_BUS", n);
	CHECK(reg(t, LOOM_REG_HW_FINGERPRINT) == c->fingerprint, "%s: HW_FINGERPRINT", n);
	CHECK(reg(t, LOOM_REG_STATUS) == 0 && reg(t, LOOM_REG_IRQ_STATUS) == 0 && !loom_hw_irq(t->hw),
	      "%s: reset STATUS = IRQ_STATUS = 0, irq low", n);
	CHECK(reg(t, LOOM_REG_IRQ_MASK) == 3, "%s: IRQ_MASK resets to 3", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_INSN_BASE, 0x12345660);
	CHECK(reg(t, LOOM_REG_INSN_BASE) == 0x12345660, "%s: INSN_BASE read-back", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_ID, 0);
	loom_hw_mmio_write(t->hw, LOOM_REG_HW_SP_BYTES, 0);
	CHECK(reg(t, LOOM_REG_ID) == LOOM_ID_VALUE && reg(t, LOOM_REG_HW_SP_BYTES) == c->sp_bytes,
	      "%s: RO registers ignore writes", n);
	CHECK(reg(t, LOOM_REG_CTRL) == 0, "%s: CTRL reads 0", n);
	int bad = 0;
	for (unsigned i = 0; i < LOOM_CTR_COUNT; i++)
		bad |= ctr(t, i) != 0;
	CHECK(!bad, "%s: counters are 0 at reset", n);
	CHECK(!strcmp(t->hw->backend, "cmodel"), "%s: backend name", n);
	uint8_t b[8];
	t->hw->err[0] = 0;
	CHECK(loom_hw_dram_read(t->hw, c->dram_bytes - 4, b, 8) == -1 && t->hw->err[0],
	      "%s: dram_read past the end fails with a message (%s)", n, t->hw->err);
	CHECK(loom_hw_dram_write(t->hw, c->dram_bytes, b, 1) == -1, "%s: dram_write past the end fails", n);
	CHECK(loom_hw_dram_write(t->hw, c->dram_bytes - 8, b, 8) == 0, "%s: dram_write of the last bytes", n);
}

/* LOAD with padding into SP and ACC, STORE back, compare; DRAM byte counters. */
static void test_roundtrip(struct t *t)
{
	const uint32_t R = t->R, C = t->C;
	const char *n = t->cfg.name;
	/* SP */
	uint32_t rw = R / 4 > 1 ? R / 4 - 1 : 1, n0 = 4 * rw;
	const uint32_t N1 = 4, N2 = 3, N3 = 2, S1 = 36, S2 = 4 * 36 + 8, S3 = 1000;
	const uint32_t PT = 1, PB = 2, PL = 1, PR = 2, MEM = 100, SRC = 0x10004, DST = 0x20000;
	const int8_t PV = -91;
	const uint32_t H = PT + N2 + PB, W = PL + N1 + PR, L = N3 * H * W;
	uint8_t src[4096], garbage[84 * 64];
	fill_rand(t, src, sizeof src);
	fill_rand(t, garbage, sizeof garbage);
	wr(t, SRC, src, sizeof src);
	wr(t, 0x18000, garbage, L * R);
	loom_insn p[5];
	p[0] = ld(LOOM_MEM_SP, 0x18000, MEM, R / 4, L, R, 1, 0, 1, 0, 0);
	p[1] = ld(LOOM_MEM_SP, SRC, MEM, rw, N1, S1, N2, S2, N3, S3, 0);
	ld_pad(&p[1], PT, PB, PL, PR, PV);
	p[2] = mark(0x8000, 1);
	p[3] = st(LOOM_MEM_SP, DST, MEM, R / 4, L, R, 1, 0, 1, 0, 0);
	p[4] = finish();
	struct res r = run_prog(t, PROG, p, NI(p));
	CHECK(done_ok(&r), "%s: SP padding round trip runs (status %x cause %u)", n, r.status, r.cause);
	uint8_t *got = malloc(L * R), *exp = malloc(L * R);
	rd(t, DST, got, L * R);
	uint64_t rdb = 5 * t->fb, wrb = beats(t, 0x8000, 64) * t->B;
	for (uint32_t l = 0; l < L; l++) {
		uint32_t i3 = l / (H * W), y = l / W % H, x = l % W;
		uint8_t *e = exp + l * R;
		rdb += beats(t, 0x18000 + (uint64_t)l * R, R) * t->B;
		wrb += beats(t, DST + (uint64_t)l * R, R) * t->B;
		if (y < PT || y >= PT + N2 || x < PL || x >= PL + N1) {
			memset(e, (uint8_t)PV, R);
			continue;
		}
		uint32_t s = i3 * S3 + (y - PT) * S2 + (x - PL) * S1; /* src[] is at SRC */
		memcpy(e, src + s, n0);
		memset(e + n0, 0, R - n0);
		rdb += beats(t, SRC + s, n0) * t->B;
	}
	CHECK(!memcmp(got, exp, L * R), "%s: SP padding, pad value and zero fill of %u lines", n, L);
	CHECK(ctr(t, LOOM_CTR_DRAM_RD_BYTES) == (uint32_t)rdb, "%s: DRAM_RD_BYTES %u == %llu", n,
	      ctr(t, LOOM_CTR_DRAM_RD_BYTES), (unsigned long long)rdb);
	CHECK(ctr(t, LOOM_CTR_DRAM_WR_BYTES) == (uint32_t)wrb, "%s: DRAM_WR_BYTES %u == %llu", n,
	      ctr(t, LOOM_CTR_DRAM_WR_BYTES), (unsigned long long)wrb);
	CHECK(ctr(t, LOOM_CTR_INSNS) == 4 && ctr(t, LOOM_CTR_MACS_LO) == 0 && ctr(t, LOOM_CTR_BANK_CONFLICTS) == 0,
	      "%s: INSNS = 4, MACS = 0, BANK_CONFLICTS = 0", n);
	free(got);
	free(exp);

	/* ACC: rows of C-1 words, padding lines zero, last word zero-filled */
	const uint32_t AN1 = 3, AN2 = 2, AS1 = 4 * C + 4, AS2 = 3 * (4 * C + 4) + 16, AMEM = 5;
	const uint32_t AH = 1 + AN2, AW = AN1 + 1, AL = AH * AW;
	uint8_t asrc[4096], *ag = malloc(AL * 4 * C), *ae = calloc(AL, 4 * C);
	fill_rand(t, asrc, sizeof asrc);
	wr(t, SRC, asrc, sizeof asrc);
	p[0] = ld(LOOM_MEM_ACC, 0x18000, AMEM, C, AL, 4 * C, 1, 0, 1, 0, 0); /* garbage first */
	p[1] = ld(LOOM_MEM_ACC, SRC, AMEM, C - 1, AN1, AS1, AN2, AS2, 1, 0, 0);
	ld_pad(&p[1], 1, 0, 0, 1, 0);
	p[2] = mark(0x8000, 2);
	p[3] = st(LOOM_MEM_ACC, DST, AMEM, C, AL, 4 * C, 1, 0, 1, 0, 0);
	r = run_prog(t, PROG, p, NI(p));
	CHECK(done_ok(&r), "%s: ACC padding round trip runs", n);
	rd(t, DST, ag, AL * 4 * C);
	for (uint32_t l = 0; l < AL; l++) {
		uint32_t y = l / AW, x = l % AW;
		if (y < 1 || x >= AN1)
			continue;
		memcpy(ae + l * 4 * C, asrc + (y - 1) * AS2 + x * AS1, 4 * (C - 1));
	}
	CHECK(!memcmp(ag, ae, AL * 4 * C), "%s: ACC padding lines and zero fill of %u lines", n, AL);
	free(ag);
	free(ae);
}

/* GEMM [M x 2R] * [2R x 2C], K split over two MATMULs with ACCUMULATE */
static void test_gemm(struct t *t)
{
	const uint32_t R = t->R, C = t->C, M = 37, K = 2 * R, N = 2 * C, WG = 128;
	const uint32_t A = 0x30000, BT = 0x40000, G = 0x50000, OUT = 0x60000;
	const char *n = t->cfg.name;
	int8_t *a = malloc(M * K), *bt = malloc(N * K);
	uint8_t *g = malloc(2 * M * 4 * C), *o = malloc(M * N * 4);
	fill_rand(t, (uint8_t *)a, M * K);
	fill_rand(t, (uint8_t *)bt, N * K);
	fill_rand(t, g, 2 * M * 4 * C);
	wr(t, A, a, M * K);
	wr(t, BT, bt, N * K);
	wr(t, G, g, 2 * M * 4 * C);
	struct mm m0 = mm1(0, WG, 0, M, 1, 1), m1 = mm1(M, WG + C, 0, M, 1, 1), m2 = mm1(0, WG + 2 * C, M, M, 1, 2);
	m1.accumulate = 1;
	loom_insn p[] = {
		ld(LOOM_MEM_SP, A, 0, R / 4, M, K, 2, R, 1, 0, 0),
		ld(LOOM_MEM_ACC, G, 0, C, 2 * M, 4 * C, 1, 0, 1, 0, 0),
		ld(LOOM_MEM_SP, BT, WG, R / 4, C, K, 2, R, 2, C * K, PUSH_NEXT),
		matmul(&m0, POP_PREV),
		matmul(&m1, 0),
		matmul(&m2, PUSH_NEXT),
		st(LOOM_MEM_ACC, OUT, 0, C, M, 4 * N, 2, 4 * C, 1, 0, POP_PREV),
		finish(),
	};
	struct res r = run_prog(t, PROG, p, NI(p));
	CHECK(done_ok(&r), "%s: GEMM %ux%ux%u runs", n, M, K, N);
	rd(t, OUT, o, M * N * 4);
	int bad = 0;
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++) {
			int32_t s = 0;
			for (uint32_t k = 0; k < K; k++)
				s += a[i * K + k] * bt[j * K + k];
			bad += get32(o + (i * N + j) * 4) != s;
		}
	CHECK(!bad, "%s: GEMM result matches the reference (%d wrong)", n, bad);
	uint64_t macs = 4ull * M * R * C;
	CHECK(ctr(t, LOOM_CTR_MACS_LO) == (uint32_t)macs && ctr(t, LOOM_CTR_MACS_HI) == 0,
	      "%s: GEMM MACS = %llu", n, (unsigned long long)macs);
	CHECK(ctr(t, LOOM_CTR_INSNS) == 7, "%s: GEMM INSNS = 7", n);
	CHECK(ctr(t, LOOM_CTR_BUSY_COMPUTE) > 0 && ctr(t, LOOM_CTR_CYCLES) >= ctr(t, LOOM_CTR_BUSY_COMPUTE),
	      "%s: GEMM cycle counters plausible (CYCLES %u, BUSY_COMPUTE %u)", n, ctr(t, LOOM_CTR_CYCLES),
	      ctr(t, LOOM_CTR_BUSY_COMPUTE));
	free(a);
	free(bt);
	free(g);
	free(o);
}

struct conv {
	uint32_t h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, ncb;
	int8_t pv;
};

static void test_conv(struct t *t, const struct conv *cv)
{
	const uint32_t R = t->R, C = t->C, CI = cv->ncb * R;
	const uint32_t IH = cv->pt + cv->h + cv->pb, IW = cv->pl + cv->w + cv->pr;
	const uint32_t OH = (IH - (cv->kh - 1) * cv->dh - 1) / cv->sh + 1;
	const uint32_t OW = (IW - (cv->kw - 1) * cv->dw - 1) / cv->sw + 1;
	const uint32_t WG = (cv->ncb * IH * IW + 63) & ~63u, IN = 0x30000, WT = 0x50000, OUT = 0x70000;
	const char *n = t->cfg.name;
	size_t nin = (size_t)cv->h * cv->w * CI, nw = (size_t)C * cv->kh * cv->kw * CI;
	int8_t *x = malloc(nin), *wt = malloc(nw);
	uint8_t *o = malloc((size_t)OH * OW * 4 * C);
	fill_rand(t, (uint8_t *)x, nin);
	fill_rand(t, (uint8_t *)wt, nw);
	wr(t, IN, x, nin);
	wr(t, WT, wt, nw);
	loom_insn li = ld(LOOM_MEM_SP, IN, 0, R / 4, cv->w, CI, cv->h, cv->w * CI, cv->ncb, R, 0);
	ld_pad(&li, cv->pt, cv->pb, cv->pl, cv->pr, cv->pv);
	struct mm mp = {0, WG, 0, IW, IH, OW, OH, cv->ncb, cv->kw, cv->kh, cv->sw, cv->sh, cv->dw, cv->dh, 0};
	loom_insn p[] = {
		li,
		ld(LOOM_MEM_SP, WT, WG, R / 4, C, cv->kh * cv->kw * CI, cv->kh * cv->kw, CI, cv->ncb, R, PUSH_NEXT),
		matmul(&mp, POP_PREV | PUSH_NEXT),
		st(LOOM_MEM_ACC, OUT, 0, C, OH * OW, 4 * C, 1, 0, 1, 0, POP_PREV),
		finish(),
	};
	struct res r = run_prog(t, PROG, p, NI(p));
	CHECK(done_ok(&r), "%s: conv %ux%u k%ux%u s%ux%u d%ux%u -> %ux%u runs", n, cv->h, cv->w, cv->kh, cv->kw,
	      cv->sh, cv->sw, cv->dh, cv->dw, OH, OW);
	rd(t, OUT, o, (size_t)OH * OW * 4 * C);
	int bad = 0;
	for (uint32_t oy = 0; oy < OH; oy++)
		for (uint32_t ox = 0; ox < OW; ox++)
			for (uint32_t co = 0; co < C; co++) {
				int32_t s = 0;
				for (uint32_t ky = 0; ky < cv->kh; ky++)
					for (uint32_t kx = 0; kx < cv->kw; kx++) {
						int y = (int)(oy * cv->sh + ky * cv->dh) - (int)cv->pt;
						int xx = (int)(ox * cv->sw + kx * cv->dw) - (int)cv->pl;
						int in = y >= 0 && y < (int)cv->h && xx >= 0 && xx < (int)cv->w;
						for (uint32_t ci = 0; ci < CI; ci++) {
							int32_t v = in ? x[((size_t)y * cv->w + xx) * CI + ci] : cv->pv;
							s += v * wt[((co * cv->kh + ky) * cv->kw + kx) * CI + ci];
						}
					}
				bad += get32(o + ((oy * OW + ox) * C + co) * 4) != s;
			}
	CHECK(!bad, "%s: conv result matches the reference (%d wrong)", n, bad);
	uint64_t macs = (uint64_t)cv->ncb * cv->kh * cv->kw * OH * OW * R * C;
	CHECK(ctr(t, LOOM_CTR_MACS_LO) == (uint32_t)macs, "%s: conv MACS = %llu", n, (unsigned long long)macs);
	free(x);
	free(wt);
	free(o);
}

struct qp {
	int32_t bias, mult, shift;
};

static void test_requant(struct t *t)
{
	const uint32_t C = t->C, NR = 8, V = 10, PA = 30, VA = 0x30000, PAD = 0x31000, OUT = 0x32000;
	const char *n = t->cfg.name;
	static const struct qp special[] = {
		{0, 1 << 30, 0}, {1, INT32_MAX, 31}, {-1, INT32_MIN, 0}, {INT32_MAX, 1 << 30, 1},
		{INT32_MIN, 1518500250, 5}, {100, 1 << 30, 31}, {-100, INT32_MAX, 0}, {0, INT32_MIN, 31},
		{7, 1900000000, 33}, {-7, 1200000000, -1}, {0, 1 << 30, 8}, {12345, -1073741824, 3},
	};
	static const int8_t q[][3] = {
		{0, -128, 127}, {-5, -128, 127}, {10, 10, 127}, {3, -20, 20}, {127, -128, 127}, {-128, -128, -128},
	};
	int32_t *vals = malloc(NR * C * 4);
	struct qp *par = malloc(C * sizeof *par);
	uint8_t *buf = calloc(1, NR * C * 4 + 3 * C * 4);
	for (uint32_t c = 0; c < C; c++) {
		if (c < NI(special)) {
			par[c] = special[c];
		} else {
			par[c].bias = (int32_t)(rnd(t) % (1u << 21)) - (1 << 20);
			par[c].mult = (int32_t)((1u << 30) + (rnd(t) >> 2));
			par[c].shift = (int32_t)(rnd(t) % 13);
		}
		vals[0 * C + c] = INT32_MAX;
		vals[1 * C + c] = INT32_MIN;
		vals[2 * C + c] = 0;
		vals[3 * C + c] = -1;
		vals[4 * C + c] = 1;
		vals[5 * C + c] = (int32_t)rnd(t);
		vals[6 * C + c] = (int32_t)(rnd(t) % 131072) - 65536;
		vals[7 * C + c] = -(int32_t)(rnd(t) % 5000);
	}
	for (uint32_t i = 0; i < NR * C; i++)
		put32(buf + 4 * i, (uint32_t)vals[i]);
	wr(t, VA, buf, NR * C * 4);
	for (uint32_t c = 0; c < C; c++) {
		put32(buf + 4 * c, (uint32_t)par[c].bias);
		put32(buf + 4 * (C + c), (uint32_t)par[c].mult);
		put32(buf + 4 * (2 * C + c), (uint32_t)par[c].shift);
	}
	wr(t, PAD, buf, 3 * C * 4);
	uint8_t fill[64];
	memset(fill, 0xee, sizeof fill);
	wr(t, OUT + 0x1000, fill, sizeof fill);

	loom_insn p[4 + NI(q) + 1];
	size_t k = 0;
	p[k++] = ld(LOOM_MEM_ACC, VA, V, C, NR, 4 * C, 1, 0, 1, 0, 0);
	p[k++] = ld(LOOM_MEM_ACC, PAD, PA, C, 3, 4 * C, 1, 0, 1, 0, 0);
	p[k++] = mark(0x8000, 7);
	for (size_t i = 0; i < NI(q); i++) {
		p[k] = st(LOOM_MEM_ACC_REQUANT, OUT + i * NR * C, V, C / 4, NR, C, 1, 0, 1, 0, 0);
		st_q(&p[k++], PA, q[i][0], q[i][1], q[i][2]);
	}
	p[k] = st(LOOM_MEM_ACC_REQUANT, OUT + 0x1004, V + 5, 1, 1, 0, 1, 0, 1, 0, 0);
	st_q(&p[k++], PA, 0, -128, 127);
	p[k++] = finish();
	struct res r = run_prog(t, PROG, p, k);
	CHECK(done_ok(&r), "%s: requant STOREs run", n);
	size_t nq = NI(q);
	uint8_t *o = malloc(nq * NR * C);
	rd(t, OUT, o, NI(q) * NR * C);
	int bad = 0;
	for (size_t i = 0; i < NI(q); i++)
		for (uint32_t l = 0; l < NR; l++)
			for (uint32_t c = 0; c < C; c++) {
				int8_t e = loom_requant(vals[l * C + c], par[c].bias, par[c].mult, par[c].shift,
							q[i][0], q[i][1], q[i][2]);
				if ((int8_t)o[(i * NR + l) * C + c] != e) {
					if (bad < 5)
						printf("     requant zp %d [%d,%d] acc %d bias %d mult %d shift %d: got %d want %d\n",
						       q[i][0], q[i][1], q[i][2], vals[l * C + c], par[c].bias,
						       par[c].mult, par[c].shift, (int8_t)o[(i * NR + l) * C + c], e);
					bad++;
				}
			}
	CHECK(!bad, "%s: requant edge cases match loom_requant (%d wrong of %u)", n, bad,
	      (unsigned)(NI(q) * NR * C));
	/* spot values computed by hand from the ISA pseudo-code */
	CHECK(loom_requant(INT32_MAX, 1, INT32_MAX, 31, 0, -128, 127) == 1 &&
	      loom_requant(INT32_MIN, -1, INT32_MIN, 0, 0, -128, 127) == 127 &&
	      loom_requant(-1, 0, 1 << 30, 0, 0, -128, 127) == 0 &&
	      loom_requant(-3, 0, 1 << 30, 0, 0, -128, 127) == -1,
	      "%s: loom_requant hand-computed spot values", n);
	uint8_t small[12];
	rd(t, OUT + 0x1000, small, sizeof small);
	int8_t e[4];
	for (int c = 0; c < 4; c++)
		e[c] = loom_requant(vals[5 * C + c], par[c].bias, par[c].mult, par[c].shift, 0, -128, 127);
	CHECK(small[0] == 0xee && small[1] == 0xee && small[2] == 0xee && small[3] == 0xee &&
	      !memcmp(small + 4, e, 4) && small[8] == 0xee,
	      "%s: requant STORE of ROW_WORDS=1 writes exactly 4 bytes", n);
	free(vals);
	free(par);
	free(buf);
	free(o);
}

/* A short correct program; used after every bad one. */
static void good_after(struct t *t, const char *after)
{
	const uint32_t R = t->R, SRC = 0x3f000, DST = 0x3f800;
	uint8_t in[4 * 64], out[4 * 64];
	fill_rand(t, in, sizeof in);
	wr(t, SRC, in, 4 * R);
	memset(out, 0, sizeof out);
	wr(t, DST, out, 4 * R);
	struct mm mp = mm1(7, 7, 0, 1, 1, 1);
	loom_insn p[] = {
		ld(LOOM_MEM_SP, SRC, 7, R / 4, 4, R, 1, 0, 1, 0, PUSH_NEXT),
		matmul(&mp, POP_PREV | PUSH_NEXT),
		st(LOOM_MEM_SP, DST, 7, R / 4, 4, R, 1, 0, 1, 0, POP_PREV),
		finish(),
	};
	struct res r = run_prog(t, PROG + 0x800, p, NI(p));
	rd(t, DST, out, 4 * R);
	CHECK(done_ok(&r) && !memcmp(in, out, 4 * R) && reg(t, LOOM_REG_ERR_PC) == 0 &&
	      reg(t, LOOM_REG_ERR_INFO) == LOOM_INFO_NONE,
	      "%s:   good program right after %s", t->cfg.name, after);
}

static void err_case(struct t *t, const char *what, uint32_t base, const loom_insn *p, size_t np,
		     uint32_t cause, uint32_t pc, uint32_t info)
{
	if (np)
		put_prog(t, base, p, np);
	struct res r = exec(t, base, BIG);
	t->last_rd = ctr(t, LOOM_CTR_DRAM_RD_BYTES);
	int ok = r.rc == LOOM_HW_IRQ && r.status == LOOM_STATUS_ERROR && r.cause == cause && r.pc == pc &&
		 r.info == info;
	CHECK(ok, "%s: %s -> %s pc 0x%x info 0x%x (got rc %d status %x %s pc 0x%x info 0x%x)", t->cfg.name,
	      what, loom_err_name(cause), pc, info, r.rc, r.status, loom_err_name(r.cause), r.pc, r.info);
	good_after(t, what);
}

static void test_errors(struct t *t)
{
	const uint32_t R = t->R, C = t->C, B0 = 0x2000;
	const uint32_t spl = t->cfg.sp_lines, accl = t->cfg.acc_lines;
	const uint64_t db = t->cfg.dram_bytes;
	const loom_insn nop = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	loom_insn p[16];
	struct mm mp;

	p[0] = nop;
	p[1] = op(0x00, 0);
	err_case(t, "opcode 0x00", B0, p, 2, LOOM_ERR_ILLEGAL_OPCODE, B0 + 32, LOOM_F_ANY_OPCODE);
	/* counted: both fetched instructions (the failing one included) */
	err_case(t, "opcode 0x00 (again)", B0, p, 2, LOOM_ERR_ILLEGAL_OPCODE, B0 + 32, LOOM_F_ANY_OPCODE);
	p[0] = op(0x08, 0);
	p[0].w[3] = 5;
	err_case(t, "opcode 0x08 with junk", B0, p, 1, LOOM_ERR_ILLEGAL_OPCODE, B0, LOOM_F_ANY_OPCODE);
	p[0] = op(0x10, 0);
	err_case(t, "opcode 0x10", B0, p, 1, LOOM_ERR_ILLEGAL_OPCODE, B0, LOOM_F_ANY_OPCODE);

	p[0] = nop;
	p[0].w[0] |= POP_PREV;
	err_case(t, "LOAD with POP_PREV bit", B0, p, 1, LOOM_ERR_RESERVED_BITS, B0, LOOM_INFO_NONE);
	p[0] = nop;
	p[1] = finish();
	p[1].w[7] = 0x80000000u;
	err_case(t, "FINISH with w7 bit", B0, p, 2, LOOM_ERR_RESERVED_BITS, B0 + 32, LOOM_INFO_NONE);

	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	setf(&p[0], LOOM_F_LOAD_TARGET, 2);
	err_case(t, "LOAD TARGET 2", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_LOAD_TARGET);
	p[0] = ld(LOOM_MEM_ACC, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	ld_pad(&p[0], 0, 0, 0, 0, 1);
	err_case(t, "LOAD ACC PAD_VALUE", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_LOAD_PAD_VALUE);
	p[0] = ld(LOOM_MEM_SP, 0, 0, R / 4 + 1, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "LOAD SP ROW_WORDS R/4+1", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_LOAD_ROW_WORDS);
	p[0] = st(LOOM_MEM_ACC_REQUANT, 0, 0, C / 4 + 1, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "STORE requant ROW_WORDS C/4+1", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_STORE_ROW_WORDS);
	p[0] = st(LOOM_MEM_SP, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	setf(&p[0], LOOM_F_STORE_CLIP_HI, 1);
	err_case(t, "STORE SP with CLIP_HI", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_STORE_CLIP_HI);
	p[0] = st(LOOM_MEM_ACC_REQUANT, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	st_q(&p[0], 0, 0, 5, -5);
	err_case(t, "STORE CLIP_LO > CLIP_HI", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_STORE_CLIP_LO);
	mp = mm1(0, 0, 0, 4, 1, 1);
	mp.kw = 0;
	p[0] = nop;
	p[1] = nop;
	p[2] = matmul(&mp, 0);
	err_case(t, "MATMUL KW 0", B0, p, 3, LOOM_ERR_BAD_FIELD, B0 + 64, LOOM_F_MATMUL_KW);
	mp = mm1(0, 0, 0, 10, 1, 1);
	mp.ow = 4, mp.sw = 2, mp.kw = 3, mp.dw = 2;
	p[0] = matmul(&mp, 0);
	err_case(t, "MATMUL window past IN_W", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_MATMUL_IN_W);

	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 1, 4, 1, 6, 1, 0, 0);
	err_case(t, "LOAD STRIDE2 6", B0, p, 1, LOOM_ERR_MISALIGNED, B0, LOOM_F_LOAD_STRIDE2);
	p[0] = st(LOOM_MEM_SP, 0x30002, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "STORE DRAM_ADDR 0x30002", B0, p, 1, LOOM_ERR_MISALIGNED, B0, LOOM_F_STORE_DRAM_ADDR);
	p[0] = mark(0x8002, 1);
	err_case(t, "MARK at 0x8002", B0, p, 1, LOOM_ERR_MISALIGNED, B0, LOOM_F_MARK_DRAM_ADDR);
	p[0] = nop;
	p[1] = finish();
	put_prog(t, B0, p, 2);
	err_case(t, "INSN_BASE misaligned", B0 + 8, NULL, 0, LOOM_ERR_MISALIGNED, B0 + 8, LOOM_INFO_NONE);
	CHECK(t->last_rd == 0, "%s:   misaligned INSN_BASE reads nothing (DRAM_RD_BYTES %u)", t->cfg.name,
	      t->last_rd);

	p[0] = ld(LOOM_MEM_SP, (uint32_t)(db - 4 * (R / 4) + 4), 0, R / 4, 1, 0, 1, 0, 1, 0, 0);
	err_case(t, "LOAD past DRAM end", B0, p, 1, LOOM_ERR_DRAM_RANGE, B0, LOOM_F_LOAD_DRAM_ADDR);
	p[0] = ld(LOOM_MEM_SP, 0, 0, 2, 1, 0, 1, 0, 2, (uint32_t)(db - 4), 0);
	err_case(t, "LOAD STRIDE3 past DRAM end", B0, p, 1, LOOM_ERR_DRAM_RANGE, B0, LOOM_F_LOAD_DRAM_ADDR);
	p[0] = st(LOOM_MEM_ACC, (uint32_t)(db - 4 * C), 0, C, 2, 4, 1, 0, 1, 0, 0);
	err_case(t, "STORE past DRAM end", B0, p, 1, LOOM_ERR_DRAM_RANGE, B0, LOOM_F_STORE_DRAM_ADDR);
	p[0] = mark((uint32_t)(db - 60), 1);
	err_case(t, "MARK past DRAM end", B0, p, 1, LOOM_ERR_DRAM_RANGE, B0, LOOM_F_MARK_DRAM_ADDR);
	p[0] = st(LOOM_MEM_SP, 0xfffffffcu, 0, 1, 0, 0, 5, 0, 5, 0, 0);
	p[1] = finish();
	struct res r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: STORE with N1 = 0 past DRAM end is legal", t->cfg.name);

	p[0] = ld(LOOM_MEM_SP, 0, spl - 4, 1, 2, 4, 1, 0, 1, 0, 0);
	ld_pad(&p[0], 0, 0, 1, 1, 0);
	p[1] = finish();
	r = run_prog(t, B0, p, 2);
	CHECK(done_ok(&r), "%s: LOAD of 4 lines (with padding) into the last 4 SP lines", t->cfg.name);
	ld_pad(&p[0], 1, 0, 1, 1, 0);
	err_case(t, "LOAD padding past SP end", B0, p, 2, LOOM_ERR_SP_RANGE, B0, LOOM_F_LOAD_MEM_ADDR);
	mp = mm1(0, spl - C + 1, 0, 1, 1, 1);
	p[0] = matmul(&mp, 0);
	err_case(t, "MATMUL weights past SP end", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_MATMUL_WGT_ADDR);
	mp = mm1(spl - 1, 0, 0, 2, 1, 1);
	p[0] = matmul(&mp, 0);
	err_case(t, "MATMUL activations past SP end", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_MATMUL_ACT_ADDR);
	p[0] = st(LOOM_MEM_SP, 0, spl - 1, 1, 2, 4, 1, 0, 1, 0, 0);
	err_case(t, "STORE past SP end", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_STORE_MEM_ADDR);

	p[0] = st(LOOM_MEM_ACC_REQUANT, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0);
	st_q(&p[0], accl - 2, 0, -128, 127);
	err_case(t, "STORE PARAM_ADDR past ACC end", B0, p, 1, LOOM_ERR_ACC_RANGE, B0, LOOM_F_STORE_PARAM_ADDR);
	mp = mm1(0, 0, accl - 1, 2, 1, 1);
	p[0] = matmul(&mp, 0);
	err_case(t, "MATMUL output past ACC end", B0, p, 1, LOOM_ERR_ACC_RANGE, B0, LOOM_F_MATMUL_ACC_ADDR);
	p[0] = ld(LOOM_MEM_ACC, 0, accl - 1, 1, 2, 4, 1, 0, 1, 0, 0);
	err_case(t, "LOAD past ACC end", B0, p, 1, LOOM_ERR_ACC_RANGE, B0, LOOM_F_LOAD_MEM_ADDR);

	p[0] = st(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, POP_PREV);
	p[1] = finish();
	err_case(t, "STORE pops a token never pushed", B0, p, 2, LOOM_ERR_DEADLOCK, B0 + 32, LOOM_INFO_NONE);
	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, POP_NEXT);
	err_case(t, "LOAD pops a token never pushed", B0, p, 2, LOOM_ERR_DEADLOCK, B0 + 32, LOOM_INFO_NONE);
	mp = mm1(0, 0, 0, 1, 1, 1);
	p[0] = matmul(&mp, POP_NEXT);
	p[1] = mark(0x8000, 1);
	err_case(t, "MATMUL waits at a MARK", B0, p, 2, LOOM_ERR_DEADLOCK, B0 + 32, LOOM_INFO_NONE);
	for (int i = 0; i < 9; i++)
		p[i] = st(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, POP_PREV);
	p[9] = finish();
	err_case(t, "9 STOREs on a full queue", B0, p, 10, LOOM_ERR_DEADLOCK, B0 + 8 * 32, LOOM_INFO_NONE);
	/* 8 fit: the ninth is the one the fetcher holds; a producer later in
	 * program order cannot be reached */
	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, PUSH_NEXT);
	for (int i = 1; i < 10; i++)
		p[i] = st(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, POP_PREV);
	mp = mm1(0, 0, 0, 1, 1, 1);
	p[10] = matmul(&mp, POP_PREV | PUSH_NEXT);
	p[11] = finish();
	err_case(t, "producer behind a full queue", B0, p, 12, LOOM_ERR_DEADLOCK, B0 + 9 * 32, LOOM_INFO_NONE);

	p[0] = nop;
	put_prog(t, db - 32, p, 1);
	err_case(t, "fetch past DRAM end", (uint32_t)(db - 32), NULL, 0, LOOM_ERR_FETCH_RANGE, (uint32_t)db,
		 LOOM_INFO_NONE);
	CHECK(t->last_rd == t->fb, "%s:   FETCH_RANGE: only the one instruction read (DRAM_RD_BYTES %u)",
	      t->cfg.name, t->last_rd);
	err_case(t, "INSN_BASE = DRAM end", (uint32_t)db, NULL, 0, LOOM_ERR_FETCH_RANGE, (uint32_t)db,
		 LOOM_INFO_NONE);
	err_case(t, "INSN_BASE misaligned and past the end", (uint32_t)(db - 4), NULL, 0, LOOM_ERR_FETCH_RANGE,
		 (uint32_t)(db - 4), LOOM_INFO_NONE);

	/* fetch counts: two instructions read, the second fails */
	p[0] = nop;
	p[1] = op(0x00, 0);
	put_prog(t, B0, p, 2);
	r = exec(t, B0, BIG);
	CHECK(r.cause == LOOM_ERR_ILLEGAL_OPCODE && ctr(t, LOOM_CTR_DRAM_RD_BYTES) == 2 * t->fb &&
	      ctr(t, LOOM_CTR_INSNS) <= 1,
	      "%s: DRAM_RD_BYTES counts the failing instruction's fetch (%u)", t->cfg.name,
	      ctr(t, LOOM_CTR_DRAM_RD_BYTES));

	/* TOKEN_OVERFLOW: 65536 pushes of L->C, never popped */
	size_t nt = LOOM_TOKEN_MAX + 2;
	loom_insn *big = malloc(nt * sizeof *big);
	for (size_t i = 0; i + 1 < nt; i++)
		big[i] = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, PUSH_NEXT);
	big[nt - 1] = finish();
	err_case(t, "65536 tokens L->C", 0x400000, big, nt, LOOM_ERR_TOKEN_OVERFLOW,
		 0x400000 + LOOM_TOKEN_MAX * 32, LOOM_INFO_NONE);
	/* 65535 is fine */
	big[nt - 2] = finish();
	put_prog(t, 0x400000, big, nt - 1);
	r = exec(t, 0x400000, BIG);
	CHECK(done_ok(&r), "%s: 65535 tokens L->C are fine", t->cfg.name);
	free(big);
}

static void test_mark(struct t *t)
{
	const uint32_t R = t->R, C = t->C, LA = 0x30004, SA = 0x9004;
	const uint32_t M1 = 0x8004, M2 = 0x8104, M3 = 0x8204;
	const char *n = t->cfg.name;
	uint8_t ff[0x300], data[5 * 68];
	memset(ff, 0xff, sizeof ff);
	wr(t, 0x8000, ff, sizeof ff);
	fill_rand(t, data, sizeof data);
	wr(t, LA, data, sizeof data);
	struct mm mp = mm1(0, 0, 0, 5, 1, 1);
	loom_insn p[] = {
		ld(LOOM_MEM_SP, LA, 0, R / 4, 5, R + 4, 1, 0, 1, 0, 0),
		mark(M1, 0xcafe0001),
		matmul(&mp, 0),
		mark(M2, 0xcafe0002),
		st(LOOM_MEM_ACC, SA, 0, C, 5, 4 * C, 1, 0, 1, 0, 0),
		mark(M3, 0xcafe0003),
		finish(),
	};
	struct res r = run_prog(t, PROG, p, NI(p));
	CHECK(done_ok(&r), "%s: MARK program runs", n);
	uint64_t ldb = 0, stb = 0, mk[3];
	for (int i = 0; i < 5; i++) {
		ldb += beats(t, LA + i * (R + 4), R) * t->B;
		stb += beats(t, SA + i * 4 * C, 4 * C) * t->B;
	}
	mk[0] = beats(t, M1, 64) * t->B;
	mk[1] = beats(t, M2, 64) * t->B;
	mk[2] = beats(t, M3, 64) * t->B;
	const uint64_t macs = 5ull * R * C;
	struct {
		uint32_t addr, id;
		uint64_t macs, rd, wr, insns;
	} e[3] = {
		{M1, 0xcafe0001, 0, 2 * t->fb + ldb, 0, 1},
		{M2, 0xcafe0002, macs, 4 * t->fb + ldb, mk[0], 3},
		{M3, 0xcafe0003, macs, 6 * t->fb + ldb, mk[0] + mk[1] + stb, 5},
	};
	uint32_t prev_cycles = 0;
	for (int i = 0; i < 3; i++) {
		uint32_t w[16];
		for (int k = 0; k < 16; k++)
			w[k] = rd32(t, e[i].addr + 4 * k);
		CHECK(w[0] == e[i].id, "%s: MARK %d word 0 = MARK_ID", n, i + 1);
		CHECK(w[1 + LOOM_CTR_MACS_LO] == (uint32_t)e[i].macs && w[1 + LOOM_CTR_MACS_HI] == 0,
		      "%s: MARK %d MACS %u == %llu", n, i + 1, w[1 + LOOM_CTR_MACS_LO], (unsigned long long)e[i].macs);
		CHECK(w[1 + LOOM_CTR_DRAM_RD_BYTES] == e[i].rd, "%s: MARK %d DRAM_RD_BYTES %u == %llu", n, i + 1,
		      w[1 + LOOM_CTR_DRAM_RD_BYTES], (unsigned long long)e[i].rd);
		CHECK(w[1 + LOOM_CTR_DRAM_WR_BYTES] == e[i].wr, "%s: MARK %d DRAM_WR_BYTES %u == %llu", n, i + 1,
		      w[1 + LOOM_CTR_DRAM_WR_BYTES], (unsigned long long)e[i].wr);
		CHECK(w[1 + LOOM_CTR_INSNS] == e[i].insns, "%s: MARK %d INSNS %u == %llu", n, i + 1,
		      w[1 + LOOM_CTR_INSNS], (unsigned long long)e[i].insns);
		CHECK(w[1 + LOOM_CTR_BANK_CONFLICTS] == 0 && w[14] == 0 && w[15] == 0,
		      "%s: MARK %d BANK_CONFLICTS, words 14, 15 = 0", n, i + 1);
		CHECK(w[1 + LOOM_CTR_CYCLES] > prev_cycles, "%s: MARK %d CYCLES %u increases", n, i + 1,
		      w[1 + LOOM_CTR_CYCLES]);
		prev_cycles = w[1 + LOOM_CTR_CYCLES];
	}
	CHECK(rd32(t, 0x8000) == 0xffffffffu && rd32(t, M1 + 64) == 0xffffffffu,
	      "%s: MARK writes exactly 64 bytes", n);
	CHECK(ctr(t, LOOM_CTR_INSNS) == 6 && ctr(t, LOOM_CTR_DRAM_RD_BYTES) == 7 * t->fb + ldb &&
	      ctr(t, LOOM_CTR_DRAM_WR_BYTES) == mk[0] + mk[1] + mk[2] + stb,
	      "%s: final INSNS 6, DRAM_RD_BYTES incl. FINISH fetch, DRAM_WR_BYTES incl. last MARK", n);
}

/* A long program (conv over NCB=4 blocks): LOAD, MATMUL, STORE, FINISH. */
static size_t long_prog(struct t *t, loom_insn *p, uint32_t out)
{
	const uint32_t R = t->R, C = t->C, IW = 24, NCB = 4, WG = NCB * IW * IW;
	struct mm mp = {0, WG, 0, IW, IW, IW - 2, IW - 2, NCB, 3, 3, 1, 1, 1, 1, 0};
	p[0] = ld(LOOM_MEM_SP, 0x100000, 0, R / 4, NCB * IW * IW + NCB * 9 * C, R, 1, 0, 1, 0, PUSH_NEXT);
	p[1] = matmul(&mp, POP_PREV | PUSH_NEXT);
	p[2] = st(LOOM_MEM_ACC, out, 0, C, (IW - 2) * (IW - 2), 4 * C, 1, 0, 1, 0, POP_PREV);
	p[3] = finish();
	return 4;
}

static void test_run(struct t *t, struct t *t2)
{
	const char *n = t->cfg.name;
	const uint32_t C = t->C, NOUT = 22 * 22 * 4 * C;
	loom_insn p[4];
	size_t np = long_prog(t, p, 0x200000);
	uint8_t *data = malloc(0x40000), *o1 = malloc(NOUT), *o2 = malloc(NOUT);
	fill_rand(t, data, 0x40000);
	wr(t, 0x100000, data, 0x40000);
	put_prog(t, PROG, p, np);
	/* the same program in one go on a second instance */
	wr(t2, 0x100000, data, 0x40000);
	put_prog(t2, PROG, p, np);
	struct res r2 = exec(t2, PROG, BIG);
	CHECK(done_ok(&r2), "%s: long program runs in one go on a second instance", n);
	uint32_t cyc2 = reg(t2, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_CYCLES);
	uint32_t macs2 = reg(t2, LOOM_REG_CTR_BASE + 4 * LOOM_CTR_MACS_LO);
	rd(t2, 0x200000, o2, NOUT);

	/* idle: run lets time pass and times out */
	uint64_t c0 = loom_hw_cycles(t->hw);
	CHECK(loom_hw_run(t->hw, 123) == LOOM_HW_TIMEOUT && loom_hw_cycles(t->hw) == c0 + 123,
	      "%s: run() while idle times out after max_cycles", n);
	CHECK(loom_hw_run(t->hw, 0) == LOOM_HW_TIMEOUT && loom_hw_cycles(t->hw) == c0 + 123,
	      "%s: run(0) while idle", n);

	/* timeout and resume */
	c0 = loom_hw_cycles(t->hw);
	loom_hw_mmio_write(t->hw, LOOM_REG_INSN_BASE, PROG);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	int rc = loom_hw_run(t->hw, 100);
	CHECK(rc == LOOM_HW_TIMEOUT && reg(t, LOOM_REG_STATUS) == LOOM_STATUS_BUSY &&
	      loom_hw_cycles(t->hw) == c0 + 100 && ctr(t, LOOM_CTR_CYCLES) == 100,
	      "%s: run(100) times out, still BUSY, 100 cycles passed", n);
	int pieces = 1;
	while ((rc = loom_hw_run(t->hw, 777)) == LOOM_HW_TIMEOUT && pieces < 100000)
		pieces++;
	CHECK(rc == LOOM_HW_IRQ && reg(t, LOOM_REG_STATUS) == LOOM_STATUS_DONE,
	      "%s: resumed run reaches FINISH after %d timeouts", n, pieces);
	CHECK(pieces > 2, "%s: the run took several pieces", n);
	rd(t, 0x200000, o1, NOUT);
	CHECK(!memcmp(o1, o2, NOUT), "%s: resumed result equals the one-go result", n);
	CHECK(ctr(t, LOOM_CTR_CYCLES) == cyc2 && ctr(t, LOOM_CTR_MACS_LO) == macs2,
	      "%s: resumed CYCLES %u and MACS equal the one-go run's (%u)", n, ctr(t, LOOM_CTR_CYCLES), cyc2);
	CHECK(loom_hw_cycles(t->hw) - c0 == ctr(t, LOOM_CTR_CYCLES),
	      "%s: cycles() advanced by exactly CYCLES", n);
	/* irq already high: immediate return */
	uint64_t c1 = loom_hw_cycles(t->hw);
	CHECK(loom_hw_run(t->hw, 1000) == LOOM_HW_IRQ && loom_hw_cycles(t->hw) == c1,
	      "%s: run() with the irq line high returns at once", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_ERROR);
	CHECK(reg(t, LOOM_REG_IRQ_STATUS) == LOOM_IRQ_DONE, "%s: IRQ_STATUS is write-1-to-clear per bit", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE);
	CHECK(!loom_hw_irq(t->hw) && reg(t, LOOM_REG_STATUS) == LOOM_STATUS_DONE,
	      "%s: acknowledged: irq low, STATUS stays DONE", n);

	/* masked interrupt */
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_MASK, 0);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	c1 = loom_hw_cycles(t->hw);
	rc = loom_hw_run(t->hw, 5000000);
	CHECK(rc == LOOM_HW_TIMEOUT && reg(t, LOOM_REG_STATUS) == LOOM_STATUS_DONE &&
	      reg(t, LOOM_REG_IRQ_STATUS) == LOOM_IRQ_DONE && !loom_hw_irq(t->hw) &&
	      loom_hw_cycles(t->hw) == c1 + 5000000,
	      "%s: IRQ_MASK 0: run finishes without an interrupt and times out", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_MASK, 3);
	CHECK(loom_hw_irq(t->hw) && loom_hw_run(t->hw, 10) == LOOM_HW_IRQ, "%s: unmasking raises the irq", n);
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_STATUS, 3);

	/* abort */
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	rc = loom_hw_run(t->hw, 500);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_ABORT);
	CHECK(rc == LOOM_HW_TIMEOUT && reg(t, LOOM_REG_STATUS) == 0 && reg(t, LOOM_REG_ERR_CAUSE) == 0 &&
	      !loom_hw_irq(t->hw) && loom_hw_run(t->hw, 1000) == LOOM_HW_TIMEOUT && reg(t, LOOM_REG_STATUS) == 0,
	      "%s: ABORT: idle, no error, no irq", n);
	good_after(t, "ABORT");
	/* START while busy is ignored: the run goes on undisturbed */
	memset(o1, 0, NOUT);
	wr(t, 0x200000, o1, NOUT);
	loom_hw_mmio_write(t->hw, LOOM_REG_INSN_BASE, PROG);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	rc = loom_hw_run(t->hw, 300);
	loom_hw_mmio_write(t->hw, LOOM_REG_CTRL, LOOM_CTRL_START);
	int rc2 = loom_hw_run(t->hw, BIG);
	uint32_t st2 = reg(t, LOOM_REG_STATUS);
	loom_hw_mmio_write(t->hw, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	rd(t, 0x200000, o1, NOUT);
	CHECK(rc == LOOM_HW_TIMEOUT && rc2 == LOOM_HW_IRQ && st2 == LOOM_STATUS_DONE && !memcmp(o1, o2, NOUT) &&
	      ctr(t, LOOM_CTR_CYCLES) == cyc2,
	      "%s: START while busy is ignored", n);
	free(data);
	free(o1);
	free(o2);
}

static void perf(struct t *t)
{
	const uint32_t R = t->R, C = t->C, IW = 22, NCB = (t->cfg.sp_lines - 16 * C) / (IW * IW) > 16 ? 16 :
		(t->cfg.sp_lines - 16 * C) / (IW * IW);
	struct mm mp = mm1(0, NCB * IW * IW, 0, IW, IW, NCB);
	loom_insn p[51];
	for (int i = 0; i < 50; i++)
		p[i] = matmul(&mp, 0);
	p[50] = finish();
	put_prog(t, PROG, p, 51);
	clock_t c0 = clock();
	struct res r = exec(t, PROG, ~0ull);
	double s = (double)(clock() - c0) / CLOCKS_PER_SEC;
	uint64_t macs = (uint64_t)ctr(t, LOOM_CTR_MACS_HI) << 32 | ctr(t, LOOM_CTR_MACS_LO);
	CHECK(done_ok(&r) && macs == 50ull * NCB * IW * IW * R * C, "%s: %llu MACs", t->cfg.name,
	      (unsigned long long)macs);
	printf("info %s: MATMUL speed %.0f MMAC/s (%.3f s)\n", t->cfg.name, s > 0 ? macs / s / 1e6 : 0.0, s);
}

/* ---- vector unit: ELTWISE, POOL, DWCONV, LUT ---- */

struct elt {
	unsigned fn, bm, shift;
	uint32_t a, b, dst, planes, pl;
	int8_t zpa, zpb, zp, lo, hi;
	int16_t ma, mb;
	int32_t mult;
};

static loom_insn eltwise(const struct elt *e, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_ELTWISE, deps);
	setf(&in, LOOM_F_ELTWISE_FUNC, e->fn);
	setf(&in, LOOM_F_ELTWISE_B_MODE, e->bm);
	setf(&in, LOOM_F_ELTWISE_SHIFT, e->shift);
	setf(&in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)e->zp);
	setf(&in, LOOM_F_ELTWISE_SRC_A, e->a);
	setf(&in, LOOM_F_ELTWISE_ZP_A, (uint8_t)e->zpa);
	setf(&in, LOOM_F_ELTWISE_SRC_B, e->b);
	setf(&in, LOOM_F_ELTWISE_ZP_B, (uint8_t)e->zpb);
	setf(&in, LOOM_F_ELTWISE_DST, e->dst);
	setf(&in, LOOM_F_ELTWISE_CLIP_LO, (uint8_t)e->lo);
	setf(&in, LOOM_F_ELTWISE_PLANE_LINES, e->pl);
	setf(&in, LOOM_F_ELTWISE_CLIP_HI, (uint8_t)e->hi);
	setf(&in, LOOM_F_ELTWISE_PLANES, e->planes);
	setf(&in, LOOM_F_ELTWISE_MULT_A, (uint16_t)e->ma);
	setf(&in, LOOM_F_ELTWISE_MULT_B, (uint16_t)e->mb);
	setf(&in, LOOM_F_ELTWISE_MULT, (uint32_t)e->mult);
	return in;
}

struct win {
	uint32_t src, dst, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh;
	int8_t zpi, zp, lo, hi;
	/* POOL */
	unsigned fn, shift;
	int32_t mult;
	/* DWCONV */
	uint32_t wgt, par;
};

static loom_insn pool(const struct win *w, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_POOL, deps);
	setf(&in, LOOM_F_POOL_FUNC, w->fn);
	setf(&in, LOOM_F_POOL_SHIFT, w->shift);
	setf(&in, LOOM_F_POOL_ZP_OUT, (uint8_t)w->zp);
	setf(&in, LOOM_F_POOL_SRC, w->src);
	setf(&in, LOOM_F_POOL_ZP_IN, (uint8_t)w->zpi);
	setf(&in, LOOM_F_POOL_DST, w->dst);
	setf(&in, LOOM_F_POOL_CLIP_LO, (uint8_t)w->lo);
	setf(&in, LOOM_F_POOL_CLIP_HI, (uint8_t)w->hi);
	setf(&in, LOOM_F_POOL_IN_W, w->inw);
	setf(&in, LOOM_F_POOL_IN_H, w->inh);
	setf(&in, LOOM_F_POOL_OUT_W, w->ow);
	setf(&in, LOOM_F_POOL_OUT_H, w->oh);
	setf(&in, LOOM_F_POOL_NCB, w->ncb);
	setf(&in, LOOM_F_POOL_KW, w->kw);
	setf(&in, LOOM_F_POOL_KH, w->kh);
	setf(&in, LOOM_F_POOL_SW, w->sw);
	setf(&in, LOOM_F_POOL_SH, w->sh);
	setf(&in, LOOM_F_POOL_DW, w->dw);
	setf(&in, LOOM_F_POOL_DH, w->dh);
	setf(&in, LOOM_F_POOL_MULT, (uint32_t)w->mult);
	return in;
}

static loom_insn dwconv(const struct win *w, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_DWCONV, deps);
	setf(&in, LOOM_F_DWCONV_ZP_IN, (uint8_t)w->zpi);
	setf(&in, LOOM_F_DWCONV_ZP_OUT, (uint8_t)w->zp);
	setf(&in, LOOM_F_DWCONV_SRC, w->src);
	setf(&in, LOOM_F_DWCONV_CLIP_LO, (uint8_t)w->lo);
	setf(&in, LOOM_F_DWCONV_WGT, w->wgt);
	setf(&in, LOOM_F_DWCONV_CLIP_HI, (uint8_t)w->hi);
	setf(&in, LOOM_F_DWCONV_PARAM, w->par);
	setf(&in, LOOM_F_DWCONV_DST, w->dst);
	setf(&in, LOOM_F_DWCONV_NCB, w->ncb);
	setf(&in, LOOM_F_DWCONV_IN_W, w->inw);
	setf(&in, LOOM_F_DWCONV_IN_H, w->inh);
	setf(&in, LOOM_F_DWCONV_KW, w->kw);
	setf(&in, LOOM_F_DWCONV_KH, w->kh);
	setf(&in, LOOM_F_DWCONV_OUT_W, w->ow);
	setf(&in, LOOM_F_DWCONV_OUT_H, w->oh);
	setf(&in, LOOM_F_DWCONV_SW, w->sw);
	setf(&in, LOOM_F_DWCONV_SH, w->sh);
	setf(&in, LOOM_F_DWCONV_DW, w->dw);
	setf(&in, LOOM_F_DWCONV_DH, w->dh);
	return in;
}

static loom_insn lut(uint32_t src, uint32_t dst, uint32_t table, uint32_t lines, uint32_t deps)
{
	loom_insn in = op(LOOM_OP_LUT, deps);
	setf(&in, LOOM_F_LUT_SRC, src);
	setf(&in, LOOM_F_LUT_DST, dst);
	setf(&in, LOOM_F_LUT_TABLE, table);
	setf(&in, LOOM_F_LUT_LINES, lines);
	return in;
}

/* round num / 2^e to nearest, ties away from zero (e < 62, plain integers) */
static int64_t rha(int64_t num, unsigned e)
{
	int64_t d = (int64_t)1 << e, a = num < 0 ? -num : num;
	int64_t q = a / d + (2 * (a % d) >= d ? 1 : 0);
	return num < 0 ? -q : q;
}

static int8_t clip8(int64_t v, int8_t lo, int8_t hi) { return (int8_t)(v < lo ? lo : v > hi ? hi : v); }

/* Cycles the C model estimates for one vector instruction (its header's
 * table), as a plain loop over the groups of each plane. */
static uint64_t vec_cyc(uint64_t planes, uint64_t P, uint64_t taps, uint64_t w, uint64_t extra)
{
	uint64_t c = 2 + extra;
	for (uint64_t pl = 0; pl < planes; pl++)
		for (uint64_t p = 0; p < P; p += LOOM_VEC_GROUP) {
			uint64_t g = P - p < LOOM_VEC_GROUP ? P - p : LOOM_VEC_GROUP;
			c += taps * (g + w) + g + 4;
		}
	return c;
}

#define PREFIX(s, lit) (!strncmp((s), lit, sizeof lit - 1))
#define VIMG 0x30000u
#define VOUT 0x60000u

/* LOAD the L-line image into SP lines 0..L-1 (after a LOAD of garbage
 * there), run ops (the first pops the
 * LOAD's token, the last pushes one to the STORE), STORE SP lines 0..L-1
 * back and read them into got. Checks INSNS and MACS = 0; *busy gets
 * BUSY_COMPUTE (the duration of the ops). */
static int vec_run(struct t *t, const char *what, const int8_t *img, uint32_t L, loom_insn *ops, size_t nops,
		   int8_t *got, uint64_t *busy)
{
	const uint32_t R = t->R;
	loom_insn p[16];
	size_t k = 0;
	wr(t, VIMG, img, (size_t)L * R);
	memset(got, 0x5a, (size_t)L * R);
	wr(t, VOUT, got, (size_t)L * R);
	/* garbage first: the image's LOAD starts only when this one is done, so
	 * an op that does not wait for its token reads garbage */
	p[k++] = ld(LOOM_MEM_SP, VOUT, 0, R / 4, L, R, 1, 0, 1, 0, 0);
	p[k++] = ld(LOOM_MEM_SP, VIMG, 0, R / 4, L, R, 1, 0, 1, 0, PUSH_NEXT);
	for (size_t i = 0; i < nops; i++) {
		p[k] = ops[i];
		if (i == 0)
			p[k].w[0] |= POP_PREV;
		if (i + 1 == nops)
			p[k].w[0] |= PUSH_NEXT;
		k++;
	}
	p[k++] = st(LOOM_MEM_SP, VOUT, 0, R / 4, L, R, 1, 0, 1, 0, POP_PREV);
	p[k++] = finish();
	struct res r = run_prog(t, PROG, p, k);
	rd(t, VOUT, got, (size_t)L * R);
	if (busy)
		*busy = ctr(t, LOOM_CTR_BUSY_COMPUTE);
	return CHECK(done_ok(&r) && ctr(t, LOOM_CTR_INSNS) == nops + 3 && ctr(t, LOOM_CTR_MACS_LO) == 0 &&
		     ctr(t, LOOM_CTR_MACS_HI) == 0,
		     "%s: %s runs (status %x %s info %x, INSNS %u, MACS %u)", t->cfg.name, what, r.status,
		     loom_err_name(r.cause), r.info, ctr(t, LOOM_CTR_INSNS), ctr(t, LOOM_CTR_MACS_LO));
}

/* compare lines [first, first+n) of got and exp; report the first difference */
static int lines_eq(struct t *t, const int8_t *got, const int8_t *exp, uint32_t first, uint32_t n, const char *what)
{
	const uint32_t R = t->R;
	int bad = 0;
	for (uint32_t i = first * R; i < (first + n) * R; i++)
		if (got[i] != exp[i]) {
			if (!bad)
				printf("     %s: line %u lane %u: got %d want %d\n", what, i / R, i % R, got[i], exp[i]);
			bad++;
		}
	return CHECK(!bad, "%s: %s: %u lines match (%d bytes wrong)", t->cfg.name, what, n, bad);
}

static void rand_i8(struct t *t, int8_t *p, size_t n, int lo, int hi)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (int8_t)(lo + (int)(rnd(t) % (uint32_t)(hi - lo + 1)));
}

/* one decoder case: loom_insn_check gives exactly (cause, field) */
static void vchk(struct t *t, const char *what, const loom_insn *in, unsigned cause, uint32_t field)
{
	uint32_t f = 0x12345678u;
	unsigned c = loom_insn_check(&t->cfg, in, &f);
	CHECK(c == cause && f == field, "%s: check %s -> %s %s (got %s %s)", t->cfg.name, what,
	      loom_err_name(cause), field == LOOM_INFO_NONE ? "-" : loom_field_name(field), loom_err_name(c),
	      f == LOOM_INFO_NONE ? "-" : loom_field_name(f));
}

/* A defect: set field f to v; expected BAD_FIELD / SP_RANGE on field e. */
struct defect {
	enum loom_field f;
	uint32_t v;
	unsigned cause;
	enum loom_field e;
};

/* Apply the defects from the last to the first: after each one the
 * decoder must report it (it comes earlier in the check order than every
 * defect already present), so every check fires and the order is held. */
static void ladder(struct t *t, const char *opn, loom_insn in, const struct defect *d, size_t n)
{
	char what[96];
	vchk(t, opn, &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	for (size_t i = n; i-- > 0;) {
		setf(&in, d[i].f, d[i].v);
		snprintf(what, sizeof what, "%s %s=%d (defect %zu of %zu)", opn, loom_field_name(d[i].f),
			 (int)d[i].v, i + 1, n);
		vchk(t, what, &in, d[i].cause, d[i].e);
	}
}

#define BADF(f, v) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_BAD_FIELD, LOOM_F_##f}
#define BADW(f, v, e) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_BAD_FIELD, LOOM_F_##e}
#define SPR(f, v) {LOOM_F_##f, (uint32_t)(v), LOOM_ERR_SP_RANGE, LOOM_F_##f}

static void test_vec_checks(struct t *t)
{
	const uint32_t spl = t->cfg.sp_lines, R = t->R, TL = (256 + R - 1) / R;
	const char *n = t->cfg.name;
	loom_insn in;

	/* ELTWISE: base MUL (so MULT_A/MULT_B defects apply), 3 planes of 5 lines */
	struct elt e = {LOOM_ELT_MUL, LOOM_BMODE_LINE, 7, 0, 100, 200, 3, 5, 1, 2, 3, -128, 0, 0, 0, 1 << 30};
	const struct defect de[] = {
		BADF(ELTWISE_FUNC, 2),
		BADF(ELTWISE_B_MODE, 3),
		BADF(ELTWISE_MULT_A, 1),
		BADF(ELTWISE_MULT_B, 0x8000),
		BADF(ELTWISE_CLIP_LO, 5),
		SPR(ELTWISE_SRC_A, spl - 15 + 1),
		SPR(ELTWISE_SRC_B, spl - 15 + 1),
		SPR(ELTWISE_DST, spl - 15 + 1),
	};
	ladder(t, "ELTWISE", eltwise(&e, 0), de, NI(de));
	struct elt ok = e;
	ok.a = ok.b = ok.dst = spl - 15;
	in = eltwise(&ok, POP_PREV | POP_NEXT | PUSH_PREV | PUSH_NEXT);
	vchk(t, "ELTWISE ending at the last SP line, all token bits", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.fn = LOOM_ELT_ADD, ok.ma = -1, ok.mb = 0x7fff;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE ADD with MULT_A, MULT_B", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.lo = -128, ok.hi = 127;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE clip [-128,127]", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.lo = 0, ok.hi = -128;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE clip [0,-128] (signed compare)", &in, LOOM_ERR_BAD_FIELD, LOOM_F_ELTWISE_CLIP_LO);
	ok = e;
	ok.bm = LOOM_BMODE_PLANE, ok.b = spl - 3;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 1: SRC_B + PLANES = SP lines", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.b = spl - 2;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 1: SRC_B + PLANES past SP", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_B);
	ok.bm = LOOM_BMODE_ONE, ok.b = spl - 1;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 2: SRC_B = last line", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.b = spl;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE B_MODE 2: SRC_B past SP", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_B);
	ok = e;
	ok.planes = 0, ok.a = ok.b = ok.dst = 0xffffff;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok.planes = 3, ok.pl = 0;
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANE_LINES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	ok = e;
	ok.planes = 512, ok.pl = 1u << 23, ok.a = ok.b = ok.dst = 0; /* n = 2^32 */
	in = eltwise(&ok, 0);
	vchk(t, "ELTWISE PLANES*PLANE_LINES = 2^32 (64-bit sum)", &in, LOOM_ERR_SP_RANGE, LOOM_F_ELTWISE_SRC_A);

	/* POOL: base MAX */
	struct win w = {0, 500, 9, 8, 4, 3, 2, 3, 2, 2, 3, 1, 1, 0, 0, -128, 100, LOOM_POOL_MAX, 0, 0, 0, 0};
	/* window: (4-1)*2 + (3-1)*1 = 8 < 9, (3-1)*3 + (2-1)*1 = 7 < 8 */
	const struct defect dp[] = {
		BADF(POOL_ZP_IN, 1),
		BADF(POOL_ZP_OUT, 0x80),
		BADF(POOL_SHIFT, 31),
		BADF(POOL_MULT, 0x80000000u),
		BADF(POOL_CLIP_LO, 0x7f),
		BADF(POOL_IN_W, 0), BADF(POOL_IN_H, 0), BADF(POOL_OUT_W, 0), BADF(POOL_OUT_H, 0),
		BADF(POOL_NCB, 0), BADF(POOL_KW, 0), BADF(POOL_KH, 0), BADF(POOL_SW, 0),
		BADF(POOL_SH, 0), BADF(POOL_DW, 0), BADF(POOL_DH, 0),
		BADW(POOL_OUT_W, 5, POOL_IN_W),  /* 4*2 + 2 = 10 >= 9 */
		BADW(POOL_DH, 2, POOL_IN_H),     /* 2*3 + 1*2 = 8 >= 8 */
		SPR(POOL_SRC, spl - 2 * 8 * 9 + 1),
		SPR(POOL_DST, spl - 2 * 3 * 4 + 1),
	};
	ladder(t, "POOL", pool(&w, 0), dp, NI(dp));
	struct win wo = w;
	wo.fn = LOOM_POOL_AVG, wo.zpi = -1, wo.zp = 3, wo.shift = 31, wo.mult = -5;
	wo.src = spl - 2 * 8 * 9, wo.dst = spl - 2 * 3 * 4 - 2 * 8 * 9;
	in = pool(&wo, POP_PREV | PUSH_NEXT);
	vchk(t, "POOL AVG with ZP_IN, ZP_OUT, SHIFT, MULT at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	wo = w;
	wo.kw = 255, wo.kh = 255, wo.sw = 255, wo.sh = 255, wo.dw = 15, wo.dh = 15;
	wo.inw = 4095, wo.inh = 4095, wo.ow = 1, wo.oh = 1, wo.ncb = 255;
	in = pool(&wo, 0);
	vchk(t, "POOL 255 x 4095 x 4095 input (64-bit sum)", &in, LOOM_ERR_SP_RANGE, LOOM_F_POOL_SRC);

	/* DWCONV */
	struct win d = {0, 700, 9, 8, 4, 3, 2, 3, 2, 2, 3, 1, 1, 0, 0, -128, 0, 0, 0, 0, 300, 400};
	const struct defect dd[] = {
		BADF(DWCONV_CLIP_LO, 1),
		BADF(DWCONV_IN_W, 0), BADF(DWCONV_IN_H, 0), BADF(DWCONV_OUT_W, 0), BADF(DWCONV_OUT_H, 0),
		BADF(DWCONV_NCB, 0), BADF(DWCONV_KW, 0), BADF(DWCONV_KH, 0), BADF(DWCONV_SW, 0),
		BADF(DWCONV_SH, 0), BADF(DWCONV_DW, 0), BADF(DWCONV_DH, 0),
		BADW(DWCONV_KW, 4, DWCONV_IN_W), /* 3*2 + 3 = 9 >= 9 */
		BADW(DWCONV_SH, 4, DWCONV_IN_H), /* 2*4 + 1 = 9 >= 8 */
		SPR(DWCONV_SRC, spl - 2 * 8 * 9 + 1),
		SPR(DWCONV_WGT, spl - 2 * 2 * 3 + 1),
		SPR(DWCONV_PARAM, spl - 2 * 9 + 1),
		SPR(DWCONV_DST, spl - 2 * 3 * 4 + 1),
	};
	ladder(t, "DWCONV", dwconv(&d, 0), dd, NI(dd));
	wo = d;
	wo.src = spl - 2 * 8 * 9, wo.wgt = spl - 2 * 2 * 3, wo.par = spl - 2 * 9, wo.dst = spl - 2 * 3 * 4;
	wo.zpi = -7, wo.zp = 9, wo.lo = -3, wo.hi = -3;
	in = dwconv(&wo, PUSH_PREV | POP_NEXT);
	vchk(t, "DWCONV with every range ending at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);

	/* LUT */
	const struct defect dl[] = {
		SPR(LUT_SRC, spl - 10 + 1),
		SPR(LUT_DST, spl - 10 + 1),
		SPR(LUT_TABLE, spl - TL + 1),
	};
	ladder(t, "LUT", lut(0, 20, 40, 10, 0), dl, NI(dl));
	in = lut(spl - 10, spl - 10, spl - TL, 10, 0);
	vchk(t, "LUT table of ceil(256/R) lines ending at the SP end", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);
	in = lut(0xffffff, 0xffffff, 0xffffff, 0, 0);
	vchk(t, "LUT LINES 0: no range checks", &in, LOOM_ERR_NONE, LOOM_INFO_NONE);

	/* reserved bits: the generic check covers the new opcodes */
	static const struct {
		unsigned opc, word;
		uint32_t bit;
	} rb[] = {
		{LOOM_OP_ELTWISE, 0, 1u << 21}, {LOOM_OP_ELTWISE, 0, 1u << 23}, {LOOM_OP_ELTWISE, 5, 1u << 16},
		{LOOM_OP_POOL, 0, 1u << 13},    {LOOM_OP_POOL, 0, 1u << 15},    {LOOM_OP_POOL, 6, 1u << 8},
		{LOOM_OP_DWCONV, 0, 1u << 12},  {LOOM_OP_DWCONV, 3, 1u << 24},  {LOOM_OP_DWCONV, 7, 1u << 8},
		{LOOM_OP_LUT, 0, 1u << 12},     {LOOM_OP_LUT, 1, 1u << 24},     {LOOM_OP_LUT, 4, 1u << 31},
		{LOOM_OP_LUT, 5, 1u},           {LOOM_OP_LUT, 0, 0x80000000u},
	};
	for (size_t i = 0; i < NI(rb); i++) {
		loom_insn b = rb[i].opc == LOOM_OP_ELTWISE ? eltwise(&e, 0) : rb[i].opc == LOOM_OP_POOL ? pool(&w, 0)
			      : rb[i].opc == LOOM_OP_DWCONV ? dwconv(&d, 0) : lut(0, 20, 40, 10, 0);
		b.w[rb[i].word] |= rb[i].bit;
		char what[64];
		snprintf(what, sizeof what, "%s reserved w%u bit 0x%x", loom_op_name(rb[i].opc), rb[i].word,
			 rb[i].bit);
		vchk(t, what, &b, LOOM_ERR_RESERVED_BITS, LOOM_INFO_NONE);
	}
	for (unsigned opc = LOOM_OP_ELTWISE; opc <= LOOM_OP_LUT; opc++)
		CHECK(loom_op_queue(opc) == LOOM_Q_COMPUTE && (loom_op_used_mask(opc, 0) & 0xfffu) == 0xfffu,
		      "%s: %s is a compute-queue opcode with the four token bits", n, loom_op_name(opc));

	/* disassembly names the opcode and its fields */
	char buf[512];
	in = eltwise(&e, POP_PREV);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "ELTWISE sp[200] = mul(sp[0]-(1), sp[100]-(2)) b=line n=3x5") && strstr(buf, "pop_prev"),
	      "%s: disasm %s", n, buf);
	in = pool(&w, 0);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "POOL    sp[500] = max sp[0] in=9x8 out=4x3 cb=2 k=3x2 s=2x3"), "%s: disasm %s", n, buf);
	in = dwconv(&d, PUSH_NEXT);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(PREFIX(buf, "DWCONV  sp[700] = sp[0] (*) sp[300] params=sp[400] in=9x8") && strstr(buf, "push_next"),
	      "%s: disasm %s", n, buf);
	in = lut(1, 2, 3, 4, 0);
	loom_insn_disasm(&in, buf, sizeof buf);
	CHECK(!strcmp(buf, "LUT     sp[2] = table sp[3] of sp[1] lines=4"), "%s: disasm %s", n, buf);

	/* the C model reports the decoder's verdict in ERR_* */
	const uint32_t B0 = 0x2000;
	loom_insn p[2];
	p[0] = ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	ok = e;
	ok.bm = LOOM_BMODE_PLANE, ok.b = spl - 2;
	p[1] = eltwise(&ok, 0);
	err_case(t, "ELTWISE B_MODE 1 SRC_B past SP", B0, p, 2, LOOM_ERR_SP_RANGE, B0 + 32, LOOM_F_ELTWISE_SRC_B);
	wo = w;
	wo.mult = 1;
	p[0] = pool(&wo, 0);
	err_case(t, "POOL MAX with MULT", B0, p, 1, LOOM_ERR_BAD_FIELD, B0, LOOM_F_POOL_MULT);
	wo = d;
	wo.par = spl - 17;
	p[0] = dwconv(&wo, 0);
	err_case(t, "DWCONV PARAM past SP", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_DWCONV_PARAM);
	p[0] = lut(0, 0, spl - TL + 1, 1, 0);
	err_case(t, "LUT TABLE past SP", B0, p, 1, LOOM_ERR_SP_RANGE, B0, LOOM_F_LUT_TABLE);
}

static void test_vec_eltwise(struct t *t)
{
	const uint32_t R = t->R, PL = 21, NP = 2, A = 0, B = 50, D = 100, L = 150;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	/* ADD of two scales: MULT_A = 2^14, MULT_B = 2^13, MULT ~ 1, SHIFT 14:
	 * out = round(da + db/2) + zp (ties away from zero), clamped */
	rand_i8(t, img, L * R, -128, 127);
	const int8_t a0[3] = {13, 7, 127}, b0[3] = {-19, -21, 127};
	for (int r = 0; r < 3; r++)
		img[(A + 1) * R + r] = a0[r], img[(B + 1) * R + r] = b0[r];
	struct elt e = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 14, A, B, D, NP, PL, 10, -20, 5, -100, 120,
			1 << 14, 1 << 13, INT32_MAX};
	loom_insn o = eltwise(&e, 0);
	vec_run(t, "ELTWISE ADD two scales", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++) {
			int da = img[(A + i) * R + r] - 10, db = img[(B + i) * R + r] + 20;
			exp[(D + i) * R + r] = clip8(rha(2 * da + db, 1) + 5, -100, 120);
		}
	lines_eq(t, got, exp, 0, L, "ELTWISE ADD two scales");
	CHECK(got[(D + 1) * R] == 9 && got[(D + 1) * R + 1] == 1 && got[(D + 1) * R + 2] == 120,
	      "%s: ELTWISE ADD hand values 3+1/2 -> 9, -3-1/2 -> 1, clip -> 120 (got %d %d %d)", n,
	      got[(D + 1) * R], got[(D + 1) * R + 1], got[(D + 1) * R + 2]);
	CHECK(busy == vec_cyc(NP, PL, 2, 0, 0), "%s: ELTWISE cycles %llu == %llu", n, (unsigned long long)busy,
	      (unsigned long long)vec_cyc(NP, PL, 2, 0, 0));

	/* MUL, B_MODE 1 (one B line per plane) and 2 (one for all):
	 * out = round(da*db / 8), clamped to [-128, 127] */
	for (unsigned bm = LOOM_BMODE_PLANE; bm <= LOOM_BMODE_ONE; bm++) {
		rand_i8(t, img, L * R, -128, 127);
		const int8_t ma[3] = {5, -3, -128}, mb[3] = {3, 4, -128};
		for (int r = 0; r < 3; r++)
			img[A * R + r] = ma[r], img[B * R + r] = mb[r];
		struct elt m = {LOOM_ELT_MUL, bm, 3, A, B, D, NP, PL, 1, -1, 0, -128, 127, 0, 0, INT32_MAX};
		o = eltwise(&m, 0);
		char what[64];
		snprintf(what, sizeof what, "ELTWISE MUL B_MODE %u", bm);
		vec_run(t, what, img, L, &o, 1, got, NULL);
		memcpy(exp, img, L * R);
		for (uint32_t cb = 0; cb < NP; cb++)
			for (uint32_t i = 0; i < PL; i++)
				for (uint32_t r = 0; r < R; r++) {
					uint32_t lb = bm == LOOM_BMODE_PLANE ? B + cb : B;
					int da = img[(A + cb * PL + i) * R + r] - 1, db = img[lb * R + r] + 1;
					exp[(D + cb * PL + i) * R + r] = clip8(rha(da * db, 3), -128, 127);
				}
		lines_eq(t, got, exp, 0, L, what);
		CHECK(got[D * R] == 2 && got[D * R + 1] == -3 && got[D * R + 2] == 127,
		      "%s: %s hand values 16/8 -> 2, -20/8 -> -3, 16383/8 -> 127 (got %d %d %d)", n, what,
		      got[D * R], got[D * R + 1], got[D * R + 2]);
	}

	/* in place (DST = SRC_A), B_MODE 0, ADD with negative MULT_B; then a
	 * second ELTWISE reading the result (the queue runs in order) */
	rand_i8(t, img, L * R, -128, 127);
	struct elt ip = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 14, A, B, A, NP, PL, 0, 0, -3, -128, 127,
			 1 << 14, -(1 << 13), INT32_MAX};
	struct elt ip2 = {LOOM_ELT_MUL, LOOM_BMODE_ONE, 0, A, B + 42, D, NP, PL, 0, 0, 0, -128, 127, 0, 0, INT32_MAX};
	loom_insn two[2] = {eltwise(&ip, 0), eltwise(&ip2, 0)};
	vec_run(t, "ELTWISE in place, then MUL by one line", img, L, two, 2, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++)
			exp[(A + i) * R + r] = clip8(rha(2 * img[(A + i) * R + r] - img[(B + i) * R + r], 1) - 3, -128, 127);
	for (uint32_t i = 0; i < NP * PL; i++)
		for (uint32_t r = 0; r < R; r++)
			exp[(D + i) * R + r] = clip8((int64_t)exp[(A + i) * R + r] * img[(B + 42) * R + r], -128, 127);
	lines_eq(t, got, exp, 0, L, "ELTWISE in place, then MUL by one line");
	CHECK(busy == 2 * vec_cyc(NP, PL, 2, 0, 0), "%s: two ELTWISE cycles %llu", n, (unsigned long long)busy);

	/* zero lines: only moves tokens (LOAD -> ELTWISE -> STORE ordering) */
	struct elt z = e;
	z.planes = 0;
	z.a = z.b = z.dst = 0xffffff;
	o = eltwise(&z, 0);
	vec_run(t, "ELTWISE of 0 planes", img, L, &o, 1, got, &busy);
	CHECK(!memcmp(got, img, L * R) && busy == 1, "%s: ELTWISE of 0 planes changes nothing, 1 cycle (%llu)", n,
	      (unsigned long long)busy);
	free(img);
	free(got);
	free(exp);
}

static void test_vec_pool(struct t *t)
{
	const uint32_t R = t->R, L = 400;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	/* MAX, 2 planes of 9x6 (W x H), window 3x2, stride 2x1, dilation 2x2:
	 * OUT_W = 3, OUT_H = 4 */
	struct win w = {10, 200, 9, 6, 3, 4, 2, 3, 2, 2, 1, 2, 2, 0, 0, -100, 100, LOOM_POOL_MAX, 0, 0, 0, 0};
	rand_i8(t, img, L * R, -128, 127);
	/* window of output (0,0) of plane 0: lines (y, x) in {0, 2} x {0, 2, 4} */
	static const int8_t win0[3][6] = {
		{-128, -128, -128, -128, -128, -128}, {1, 127, 5, 2, 0, 0}, {-5, -3, -9, -4, -6, -7},
	};
	static const uint32_t wl[6] = {0, 2, 4, 18, 20, 22};
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 6; k++)
			img[(w.src + wl[k]) * R + r] = win0[r][k];
	loom_insn o = pool(&w, 0);
	vec_run(t, "POOL MAX 3x2 s2x1 d2x2", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t cb = 0; cb < w.ncb; cb++)
		for (uint32_t oy = 0; oy < w.oh; oy++)
			for (uint32_t ox = 0; ox < w.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int m = -1000;
					for (uint32_t ky = 0; ky < w.kh; ky++)
						for (uint32_t kx = 0; kx < w.kw; kx++) {
							uint32_t y = oy * w.sh + ky * w.dh, x = ox * w.sw + kx * w.dw;
							int v = img[(w.src + (cb * w.inh + y) * w.inw + x) * R + r];
							m = v > m ? v : m;
						}
					exp[(w.dst + (cb * w.oh + oy) * w.ow + ox) * R + r] = clip8(m, -100, 100);
				}
	lines_eq(t, got, exp, 0, L, "POOL MAX");
	CHECK(got[w.dst * R] == -100 && got[w.dst * R + 1] == 100 && got[w.dst * R + 2] == -3,
	      "%s: POOL MAX hand values -128 -> -100, 127 -> 100, -3 (got %d %d %d)", n, got[w.dst * R],
	      got[w.dst * R + 1], got[w.dst * R + 2]);
	CHECK(busy == vec_cyc(2, 12, 6, 0, 0), "%s: POOL MAX cycles %llu == %llu", n, (unsigned long long)busy,
	      (unsigned long long)vec_cyc(2, 12, 6, 0, 0));

	/* AVG 2x2 stride 2 over 3 planes of 8x6: MULT ~ 1, SHIFT 2 -> the
	 * rounded mean, ties away from zero; ZP_IN 3, ZP_OUT -10 */
	struct win a = {0, 300, 8, 6, 4, 3, 3, 2, 2, 2, 2, 1, 1, 3, -10, -128, 127, LOOM_POOL_AVG, 2, INT32_MAX, 0, 0};
	rand_i8(t, img, L * R, -128, 127);
	static const int8_t av[4][4] = {{1, 2, 3, 4}, {4, 4, 4, 5}, {4, 5, 4, 5}, {-3, -3, -4, -3}};
	static const uint32_t al[4] = {0, 1, 8, 9};
	for (int r = 0; r < 4; r++)
		for (int k = 0; k < 4; k++)
			img[(a.src + al[k]) * R + r] = av[r][k];
	o = pool(&a, 0);
	vec_run(t, "POOL AVG 2x2", img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t cb = 0; cb < a.ncb; cb++)
		for (uint32_t oy = 0; oy < a.oh; oy++)
			for (uint32_t ox = 0; ox < a.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int s = 0;
					for (uint32_t k = 0; k < 4; k++) {
						uint32_t y = 2 * oy + k / 2, x = 2 * ox + k % 2;
						s += img[(a.src + (cb * a.inh + y) * a.inw + x) * R + r] - 3;
					}
					exp[(a.dst + (cb * a.oh + oy) * a.ow + ox) * R + r] = clip8(rha(s, 2) - 10, -128, 127);
				}
	lines_eq(t, got, exp, 0, L, "POOL AVG");
	CHECK(got[a.dst * R] == -11 && got[a.dst * R + 1] == -9 && got[a.dst * R + 2] == -8 &&
	      got[a.dst * R + 3] == -16,
	      "%s: POOL AVG hand values -0.5 -> -1, 1.25 -> 1, 1.5 -> 2, -6.25 -> -6 (+zp -10: got %d %d %d %d)", n,
	      got[a.dst * R], got[a.dst * R + 1], got[a.dst * R + 2], got[a.dst * R + 3]);
	CHECK(busy == vec_cyc(3, 12, 4, 0, 0), "%s: POOL AVG cycles %llu == %llu", n, (unsigned long long)busy,
	      (unsigned long long)vec_cyc(3, 12, 4, 0, 0));
	free(img);
	free(got);
	free(exp);
}

static void put_lane32(int8_t *sp, uint32_t R, uint32_t line, uint32_t r, int32_t v)
{
	uint32_t q = R / 4;
	put32((uint8_t *)sp + (size_t)(line + r / q) * R + 4 * (r % q), (uint32_t)v);
}

static void test_vec_dwconv(struct t *t, const struct win *dw0)
{
	const uint32_t R = t->R, L = 500;
	const char *n = t->cfg.name;
	struct win w = *dw0;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	int32_t bias[64], mult[64], shift[64];
	uint64_t busy;
	char what[96];
	snprintf(what, sizeof what, "DWCONV %ux%u k%ux%u s%ux%u d%ux%u cb%u", w.inw, w.inh, w.kw, w.kh, w.sw, w.sh,
		 w.dw, w.dh, w.ncb);

	rand_i8(t, img, L * R, -128, 127);
	const uint32_t nin = w.ncb * w.inh * w.inw, nw = w.ncb * w.kh * w.kw;
	rand_i8(t, img + w.src * R, nin * R, -8 + w.zpi, 8 + w.zpi);
	rand_i8(t, img + w.wgt * R, nw * R, -8, 8);
	for (uint32_t i = 0; i < nin; i++) { /* lanes 0, 1: positive inputs; weights + / - */
		img[(w.src + i) * R + 0] = (int8_t)(w.zpi + 1 + (int)(rnd(t) % 5));
		img[(w.src + i) * R + 1] = (int8_t)(w.zpi + 1 + (int)(rnd(t) % 5));
	}
	for (uint32_t i = 0; i < nw; i++) {
		img[(w.wgt + i) * R + 0] = (int8_t)(1 + rnd(t) % 7);
		img[(w.wgt + i) * R + 1] = (int8_t)-(int)(1 + rnd(t) % 7);
	}
	for (uint32_t cb = 0; cb < w.ncb; cb++) {
		uint32_t p = w.par + 9 * cb;
		for (uint32_t r = 0; r < R; r++) {
			bias[r] = (int32_t)(rnd(t) % 401) - 200;
			mult[r] = INT32_MAX;
			shift[r] = (int32_t)(r % 4);
			if (r == 0) /* s > 0: saturates to INT32_MAX; srdhm(.., 1) = 1 (wrapped: -1) */
				bias[r] = INT32_MAX, mult[r] = 1, shift[r] = 0;
			if (r == 1) /* s < 0: saturates to INT32_MIN; srdhm(.., 1) = -1 */
				bias[r] = INT32_MIN, mult[r] = 1, shift[r] = 0;
			if (r == 2) /* shift 31 of ~0.75 * 2^31 -> 1 */
				bias[r] = 0x60000000, shift[r] = 31;
			if (r == 3) /* shift 31 of ~ -0.75 * 2^31 -> -1 */
				bias[r] = -0x60000000, shift[r] = 31;
			put_lane32(img, R, p, r, bias[r]);
			put_lane32(img, R, p + 4, r, mult[r]);
			/* the shift byte holds junk above bit 4 */
			img[(p + 8) * R + r] = (int8_t)(shift[r] | (int)(rnd(t) & 0xe0));
		}
	}
	loom_insn o = dwconv(&w, 0);
	vec_run(t, what, img, L, &o, 1, got, &busy);
	memcpy(exp, img, L * R);
	int special_ok = 1;
	for (uint32_t cb = 0; cb < w.ncb; cb++) {
		uint32_t p = w.par + 9 * cb;
		for (uint32_t r = 0; r < R; r++) { /* read back the per-block parameters */
			uint32_t q = R / 4;
			bias[r] = get32((uint8_t *)img + (size_t)(p + r / q) * R + 4 * (r % q));
			shift[r] = img[(p + 8) * R + r] & 31;
		}
		for (uint32_t oy = 0; oy < w.oh; oy++)
			for (uint32_t ox = 0; ox < w.ow; ox++)
				for (uint32_t r = 0; r < R; r++) {
					int64_t s = 0;
					for (uint32_t ky = 0; ky < w.kh; ky++)
						for (uint32_t kx = 0; kx < w.kw; kx++) {
							uint32_t y = oy * w.sh + ky * w.dh, x = ox * w.sw + kx * w.dw;
							s += (int64_t)(img[(w.src + (cb * w.inh + y) * w.inw + x) * R + r] - w.zpi) *
							     img[(w.wgt + (cb * w.kh + ky) * w.kw + kx) * R + r];
						}
					int64_t v;
					if (r == 0)
						v = 1;  /* s > 0 */
					else if (r == 1)
						v = -1; /* s < 0 */
					else if (r == 2)
						v = 1;  /* 0.75 rounds to 1 */
					else if (r == 3)
						v = -1; /* -0.75 rounds to -1 */
					else
						v = rha(s + bias[r], (unsigned)shift[r]);
					if (r == 0 && s <= 0)
						special_ok = 0;
					if (r == 1 && s >= 0)
						special_ok = 0;
					exp[(w.dst + (cb * w.oh + oy) * w.ow + ox) * R + r] = clip8(v + w.zp, w.lo, w.hi);
				}
	}
	CHECK(special_ok, "%s: %s: test data has s > 0 in lane 0, s < 0 in lane 1", n, what);
	lines_eq(t, got, exp, 0, L, what);
	uint64_t ec = vec_cyc(w.ncb, w.oh * w.ow, w.kh * w.kw, 1, 9 * w.ncb);
	CHECK(busy == ec, "%s: %s cycles %llu == %llu", n, what, (unsigned long long)busy, (unsigned long long)ec);
	free(img);
	free(got);
	free(exp);
}

static void test_vec_lut(struct t *t)
{
	const uint32_t R = t->R, TL = (256 + R - 1) / R, TB = 100, S = 0, D = 40, NL = 37, L = 140;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	uint64_t busy;

	rand_i8(t, img, L * R, -128, 127);
	for (uint32_t i = 0; i < 256; i++) /* table[i] at byte i of the table */
		img[TB * R + i] = (int8_t)(uint8_t)(i * 7 + 3);
	img[S * R + 0] = -128, img[S * R + 1] = 0, img[S * R + 2] = 127;
	/* LUT into DST, then a second LUT in place on DST */
	loom_insn two[2] = {lut(S, D, TB, NL, 0), lut(D, D, TB, NL, 0)};
	vec_run(t, "LUT, then LUT in place", img, L, two, 2, got, &busy);
	memcpy(exp, img, L * R);
	for (uint32_t i = 0; i < NL * R; i++) {
		uint8_t v = (uint8_t)((uint8_t)(img[S * R + i] + 128) * 7 + 3);
		exp[D * R + i] = (int8_t)(uint8_t)((uint8_t)((int8_t)v + 128) * 7 + 3);
	}
	lines_eq(t, got, exp, 0, L, "LUT, then LUT in place");
	uint64_t ec = 2 * vec_cyc(1, NL, 1, 0, TL);
	CHECK(busy == ec, "%s: two LUT cycles %llu == %llu", n, (unsigned long long)busy, (unsigned long long)ec);

	loom_insn o = lut(S, D, TB, NL, 0);
	vec_run(t, "LUT", img, L, &o, 1, got, NULL);
	CHECK(got[D * R] == 3 && got[D * R + 1] == -125 && got[D * R + 2] == -4,
	      "%s: LUT hand values t(-128) = 3, t(0) = -125, t(127) = -4 (got %d %d %d)", n, got[D * R],
	      got[D * R + 1], got[D * R + 2]);
	o = lut(0xffffff, 0xffffff, 0xffffff, 0, 0);
	vec_run(t, "LUT of 0 lines", img, L, &o, 1, got, &busy);
	CHECK(!memcmp(got, img, L * R) && busy == 1, "%s: LUT of 0 lines changes nothing, 1 cycle (%llu)", n,
	      (unsigned long long)busy);
	free(img);
	free(got);
	free(exp);
}

/* The vector unit under all four tokens: LOAD -> DWCONV (pushes back to
 * LOAD and on to STORE), the second LOAD overwrites DWCONV's input only
 * after it ran, STORE pops; ELTWISE then pops the STORE's token. */
static void test_vec_tokens(struct t *t)
{
	const uint32_t R = t->R, L = 64;
	const char *n = t->cfg.name;
	int8_t *img = malloc(L * R), *got = malloc(L * R), *exp = malloc(L * R);
	rand_i8(t, img, L * R, -128, 127);
	for (uint32_t r = 0; r < R; r++) {
		put_lane32(img, R, 20, r, 0);
		put_lane32(img, R, 24, r, INT32_MAX);
		img[28 * R + r] = 0;
	}
	wr(t, VIMG, img, L * R);
	memset(got, 0, L * R);
	wr(t, VIMG + L * R, got, L * R); /* zeros */
	/* 1x1 DWCONV of line 0 by weight line 10 into line 30 */
	struct win w = {0, 30, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -128, 127, 0, 0, 0, 10, 20};
	struct elt e = {LOOM_ELT_ADD, LOOM_BMODE_LINE, 0, 30, 30, 31, 1, 1, 0, 0, 0, -128, 127, 1, 0, INT32_MAX};
	loom_insn p[] = {
		ld(LOOM_MEM_SP, VIMG + L * R, 0, R / 4, 1, 0, L, R, 1, 0, 0), /* zeros first */
		ld(LOOM_MEM_SP, VIMG, 0, R / 4, L, R, 1, 0, 1, 0, PUSH_NEXT),
		dwconv(&w, POP_PREV | PUSH_PREV | PUSH_NEXT),
		ld(LOOM_MEM_SP, VIMG + L * R, 0, R / 4, 1, R, 1, 0, 1, 0, POP_NEXT), /* zero line 0 */
		st(LOOM_MEM_SP, VOUT, 30, R / 4, 1, R, 1, 0, 1, 0, POP_PREV | PUSH_PREV),
		eltwise(&e, POP_NEXT | PUSH_NEXT),
		st(LOOM_MEM_SP, VOUT + R, 31, R / 4, 1, R, 1, 0, 1, 0, POP_PREV),
		finish(),
	};
	struct res r = run_prog(t, PROG, p, NI(p));
	rd(t, VOUT, got, 2 * R);
	for (uint32_t k = 0; k < R; k++) {
		exp[k] = clip8((int64_t)img[k] * img[10 * R + k], -128, 127);
		exp[R + k] = exp[k];
	}
	CHECK(done_ok(&r) && !memcmp(got, exp, 2 * R) && ctr(t, LOOM_CTR_INSNS) == 7,
	      "%s: vector unit pops and pushes all four tokens (status %x %s)", n, r.status, loom_err_name(r.cause));
	free(img);
	free(got);
	free(exp);
}

static int open_cfg(struct t *t, const char *name, const char *root)
{
	char err[512];
	memset(t, 0, sizeof *t);
	if (loom_hwcfg_load(&t->cfg, name, root, err, sizeof err)) {
		CHECK_FAIL("load config %s: %s", name, err);
		return -1;
	}
	t->hw = loom_cmodel_open(&t->cfg, NULL, err, sizeof err);
	if (!CHECK(t->hw != NULL, "%s: loom_cmodel_open %s", name, t->hw ? "" : err))
		return -1;
	t->R = t->cfg.array_rows;
	t->C = t->cfg.array_cols;
	t->B = t->cfg.dram_beat_bytes;
	t->fb = (32 / t->B ? 32 / t->B : 1) * t->B;
	t->rng = 0x9e3779b9u ^ t->cfg.fingerprint;
	return 0;
}

int main(void)
{
	check_init(0);
	const char *root = getenv("LOOM_ROOT");
	if (!root || !*root)
		root = loom_root_dir();
	static const char *cfgs[] = {"default", "odd"};
	for (size_t i = 0; i < NI(cfgs); i++) {
		struct t t, t2;
		if (open_cfg(&t, cfgs[i], root))
			continue;
		if (open_cfg(&t2, cfgs[i], root)) {
			loom_hw_close(t.hw);
			continue;
		}
		test_regs(&t);
		test_roundtrip(&t);
		test_gemm(&t);
		struct conv c1 = {9, 11, 3, 3, 2, 2, 2, 2, 2, 1, 2, 2, 2, -3};
		struct conv c2 = {10, 7, 3, 3, 3, 1, 1, 3, 1, 0, 0, 3, 1, 5};
		test_conv(&t, &c1);
		test_conv(&t, &c2);
		test_requant(&t);
		test_errors(&t);
		test_vec_checks(&t);
		test_vec_eltwise(&t);
		test_vec_pool(&t);
		struct win dw1 = {0, 300, 5, 5, 3, 2, 2, 3, 3, 1, 2, 1, 1, -3, 2, -100, 110, 0, 0, 0, 100, 200};
		struct win dw2 = {0, 300, 7, 6, 2, 2, 3, 2, 3, 2, 1, 3, 2, 5, -4, -128, 127, 0, 0, 0, 150, 200};
		struct win dw3 = {0, 400, 22, 4, 20, 2, 1, 3, 3, 1, 1, 1, 1, 0, 0, -128, 127, 0, 0, 0, 100, 120};
		test_vec_dwconv(&t, &dw1);
		test_vec_dwconv(&t, &dw2);
		test_vec_dwconv(&t, &dw3);
		test_vec_lut(&t);
		test_vec_tokens(&t);
		test_mark(&t);
		test_run(&t, &t2);
		perf(&t);
		loom_hw_close(t.hw);
		loom_hw_close(t2.hw);
	}
	return check_report();
}
