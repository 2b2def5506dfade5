/* test_cmodel.h - what the two halves of the C model's unit test share:
 * test_cmodel.c (registers, DMA, GEMM, convolution, requantization, error
 * causes, MARK, run(); main) and test_cmodel_vec.c (the vector unit). The
 * state of one opened configuration, the instruction builders, host access
 * to DRAM and the counters, running a program, and test_cmodel.c's check
 * of one bad program. */
#ifndef LOOM_TEST_CMODEL_H
#define LOOM_TEST_CMODEL_H

#include "loom/hw.h"
#include "loom/isa.h"

#include <stddef.h>
#include <stdint.h>

/* the token bits of word 0 */
#define POP_PREV 0x100u
#define POP_NEXT 0x200u
#define PUSH_PREV 0x400u
#define PUSH_NEXT 0x800u
/* a run bound no test reaches */
#define BIG 1000000000ull
/* where the tests put their programs */
#define PROG 0x1000u
#define NI(a) (sizeof(a) / sizeof((a)[0]))

/* one configuration's C model */
struct t {
	loom_hwcfg cfg;
	loom_hw *hw;
	uint32_t R, C, B;
	uint64_t fb; /* DRAM bytes of one instruction fetch */
	uint32_t rng;
	uint32_t last_rd; /* DRAM_RD_BYTES of the last err_case run */
};

/* the end of a run: loom_hw_run's code, STATUS, ERR_CAUSE / PC / INFO */
struct res {
	int rc;
	uint32_t status, cause, pc, info;
};

/* the test's random numbers (xorshift, seeded from the configuration) */
uint32_t rnd(struct t *t);

/* instruction building */
void setf(loom_insn *in, enum loom_field f, uint32_t v);
loom_insn op(unsigned opcode, uint32_t deps);
loom_insn ld(unsigned tgt, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
	     unsigned n2, uint32_t s2, unsigned n3, uint32_t s3, uint32_t deps);
loom_insn st(unsigned src, uint32_t dram, uint32_t mem, unsigned rw, unsigned n1, uint32_t s1,
	     unsigned n2, uint32_t s2, unsigned n3, uint32_t s3, uint32_t deps);
loom_insn finish(void);

/* host access (exit 2 on a DRAM access error) */
void wr(struct t *t, uint64_t a, const void *p, size_t n);
void rd(struct t *t, uint64_t a, void *p, size_t n);
void put32(uint8_t *p, uint32_t v);
int32_t get32(const uint8_t *p);
uint32_t ctr(struct t *t, unsigned i);
uint32_t evt(struct t *t, unsigned i); /* energy event counter i (regs.def LOOM_EVT) */
/* the event counters equal e[LOOM_EVT_COUNT]; names the first that differs */
int evt_eq(struct t *t, const char *what, const uint64_t *e);

/* write the program at base, run it to its interrupt */
struct res run_prog(struct t *t, uint32_t base, const loom_insn *v, size_t n);
/* DONE without an error */
int done_ok(const struct res *r);
/* a bad program (np instructions at base; none written when np is 0)
 * stops with cause at pc with info; then a good program runs */
void err_case(struct t *t, const char *what, uint32_t base, const loom_insn *p, size_t np,
	      uint32_t cause, uint32_t pc, uint32_t info);

/* test_cmodel_vec.c: every vector-unit test on one configuration */
void test_vec(struct t *t);
/* test_cmodel_res.c: STORE SOURCE 3 (requantize and add a residual) */
void test_resadd(struct t *t);

#endif
