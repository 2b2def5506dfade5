/* test_cmodel.c - unit tests of the Loom C model (cmodel/cmodel.c), the
 * "cmodel" backend of include/loom/hw.h: registers, LOAD/STORE with padding,
 * GEMM and dilated strided convolution against plain C references,
 * requantization edge cases, every error cause with its ERR_PC/ERR_INFO,
 * the vector unit (ELTWISE, POOL, DWCONV, LUT: every decoder check in its
 * order, results against hand-computed values, the cycle estimate; in
 * test_cmodel_vec.c), MARK records, interrupts, abort, timeout and resume
 * of run(). The helpers both files use are declared in test_cmodel.h.
 *
 * Runs on the "default" and "odd" configurations found under $LOOM_ROOT
 * (or the directory loom_root_dir() finds). Prints one line per check and
 * ends with "N passed, M failed"; exit status 1 on any failure. */
#include "loom/hw.h"
#include "loom/isa.h"
#include "check.h"
#include "test_cmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint32_t rnd(struct t *t)
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

void setf(loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v)) {
		fprintf(stderr, "test bug: %s = %u does not fit\n", loom_field_name(f), v);
		exit(2);
	}
}

loom_insn op(unsigned opcode, uint32_t deps)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = opcode | deps;
	return in;
}

loom_insn ld(unsigned tgt, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
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

loom_insn st(unsigned src, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
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

loom_insn finish(void) { return op(LOOM_OP_FINISH, 0); }

/* ---- host access ---- */

void wr(struct t *t, uint64_t a, const void *p, size_t n)
{
	if (loom_hw_dram_write(t->hw, a, p, n)) {
		fprintf(stderr, "dram write: %s\n", loom_hw_error(t->hw));
		exit(2);
	}
}

void rd(struct t *t, uint64_t a, void *p, size_t n)
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

void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

int32_t get32(const uint8_t *p)
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
uint32_t ctr(struct t *t, unsigned i) { return reg(t, LOOM_REG_CTR_BASE + 4 * i); }
uint32_t evt(struct t *t, unsigned i) { return reg(t, LOOM_REG_EVT_BASE + 4 * i); }

int evt_eq(struct t *t, const char *what, const uint64_t *e)
{
	for (unsigned i = 0; i < LOOM_EVT_COUNT; i++)
		if (evt(t, i) != (uint32_t)e[i])
			return CHECK(0, "%s: %s: event counter %s %u == %llu", t->cfg.name, what, loom_evt_name(i),
				     evt(t, i), (unsigned long long)e[i]);
	return CHECK(1, "%s: %s: energy event counters", t->cfg.name, what);
}

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

struct res run_prog(struct t *t, uint32_t base, const loom_insn *v, size_t n)
{
	put_prog(t, base, v, n);
	return exec(t, base, BIG);
}

int done_ok(const struct res *r)
{
	return r->rc == LOOM_HW_IRQ && r->status == LOOM_STATUS_DONE && r->cause == 0;
}

static uint64_t beats(struct t *t, uint64_t a, uint64_t n) { return (a + n - 1) / t->B - a / t->B + 1; }


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
	for (unsigned i = 0; i < LOOM_EVT_COUNT; i++)
		bad |= evt(t, i) != 0;
	CHECK(!bad, "%s: counters and event counters are 0 at reset", n);
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
	/* two LOADs of L lines each (padding lines written too), a STORE of L rows */
	uint64_t ev[LOOM_EVT_COUNT] = {0};
	ev[LOOM_EVT_SP_WR] = 2 * L, ev[LOOM_EVT_SP_RD] = L;
	evt_eq(t, "SP round trip", ev);
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
	memset(ev, 0, sizeof ev);
	ev[LOOM_EVT_ACC_WR] = 2 * AL, ev[LOOM_EVT_ACC_RD] = AL;
	evt_eq(t, "ACC round trip", ev);
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
	/* 4 folds of C weight lines and M activation lines; the first MATMUL
	 * and m2's first fold overwrite, m1 and m2's second fold accumulate;
	 * the STORE reads 2M rows */
	uint64_t ev[LOOM_EVT_COUNT] = {0};
	ev[LOOM_EVT_SP_WR] = 2 * M + 4 * C, ev[LOOM_EVT_SP_RD] = 4 * (C + M);
	ev[LOOM_EVT_ACC_WR] = 2 * M + 4 * M, ev[LOOM_EVT_ACC_RD] = 2 * M + 2 * M;
	evt_eq(t, "GEMM", ev);
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
	uint64_t folds = (uint64_t)cv->ncb * cv->kh * cv->kw, P = (uint64_t)OH * OW;
	uint64_t ev[LOOM_EVT_COUNT] = {0};
	ev[LOOM_EVT_SP_WR] = (uint64_t)cv->ncb * IH * IW + (uint64_t)C * folds;
	ev[LOOM_EVT_SP_RD] = folds * (C + P);
	ev[LOOM_EVT_ACC_WR] = folds * P, ev[LOOM_EVT_ACC_RD] = (folds - 1) * P + P;
	evt_eq(t, "conv", ev);
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
	/* nq + 1 SOURCE 2 STOREs: each reads its 3 parameter lines, then its
	 * rows (NR, the last one 1) through C requantization lanes */
	uint64_t ev[LOOM_EVT_COUNT] = {0};
	ev[LOOM_EVT_ACC_WR] = NR + 3;
	ev[LOOM_EVT_ACC_RD] = (nq + 1) * 3 + nq * NR + 1;
	ev[LOOM_EVT_RQ_VALUES] = (nq * NR + 1) * C;
	evt_eq(t, "requant STOREs", ev);
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

void err_case(struct t *t, const char *what, uint32_t base, const loom_insn *p, size_t np,
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

/* a LOAD of nothing */
static loom_insn nop_ld(void)
{
	return ld(LOOM_MEM_SP, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0);
}

/* the decoder's causes: ILLEGAL_OPCODE, RESERVED_BITS, BAD_FIELD, MISALIGNED */
static void test_errors_decode(struct t *t)
{
	const uint32_t R = t->R, C = t->C, B0 = 0x2000;
	const loom_insn nop = nop_ld();
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
}

/* DRAM_RANGE, SP_RANGE, ACC_RANGE, and what just fits */
static void test_errors_range(struct t *t)
{
	const uint32_t R = t->R, C = t->C, B0 = 0x2000;
	const uint32_t spl = t->cfg.sp_lines, accl = t->cfg.acc_lines;
	const uint64_t db = t->cfg.dram_bytes;
	loom_insn p[16];
	struct mm mp;

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
}

/* DEADLOCK, FETCH_RANGE, TOKEN_OVERFLOW, and the fetch counters */
static void test_errors_flow(struct t *t)
{
	const uint32_t B0 = 0x2000;
	const uint64_t db = t->cfg.dram_bytes;
	const loom_insn nop = nop_ld();
	loom_insn p[16];
	struct mm mp;
	struct res r;

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

/* every error cause, with its ERR_PC / ERR_INFO, each followed by a good program */
static void test_errors(struct t *t)
{
	test_errors_decode(t);
	test_errors_range(t);
	test_errors_flow(t);
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
	/* default with 5 multipliers a vector lane (vec_macs): DWCONV's passes */
	static const char *cfgs[] = {"default", "odd", "default:vec_macs=5"};
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
		test_vec(&t);
		test_resadd(&t);
		test_mark(&t);
		test_run(&t, &t2);
		perf(&t);
		loom_hw_close(t.hw);
		loom_hw_close(t2.hw);
	}
	return check_report();
}
