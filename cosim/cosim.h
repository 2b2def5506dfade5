/* cosim.h - random programs for co-simulation (cosim/gen.c and the
 * cosim/gen_*.c files cosim/gen_internal.h lists): a seeded generator of
 * legal, race-free tensor-engine programs for any configuration, and of bad
 * programs whose error the decoder must report.
 *
 * A program is a DRAM image (regions: the code, random inputs, prefilled
 * outputs, MARK records), the address of its first instruction, and the
 * instructions themselves: LOAD, MATMUL and STORE traffic mixed with the
 * vector unit (ELTWISE, POOL, DWCONV, LUT; about a fifth of the compute
 * queue), whose SP results reach DRAM through STOREs. The same (configuration, seed) gives the same
 * program on every machine: the generator has its own PRNG (xoshiro256**
 * seeded by splitmix64) and uses no floating point and no library sort.
 *
 * Every region is written before the run and every region is compared after
 * it: inputs must come back unchanged, outputs must hold what the STOREs
 * wrote, MARK records are compared on their deterministic words only
 * (word_mask). A legal program's result is fully determined by docs/ISA.md
 * because every pair of accesses from different queues to the same SP line,
 * ACC line or DRAM byte, one of them a write, is ordered by a chain of
 * tokens (or a MARK), every pop is matched by a push earlier in program
 * order except for adjacent "early pop" pairs, no SP/ACC line is read
 * before this program wrote it, and no vector instruction writes a line it
 * reads except in place (ELTWISE DST = SRC_A, LUT DST = SRC). tests/unit/test_cosim_gen.c re-checks all
 * of this independently. */
#ifndef LOOM_COSIM_H
#define LOOM_COSIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/hwcfg.h"
#include "loom/isa.h"

enum loom_cosim_region_kind {
	LOOM_COSIM_CODE,   /* the instructions (never written) */
	LOOM_COSIM_INPUT,  /* random input data (may be overwritten by ordered STOREs) */
	LOOM_COSIM_OUTPUT, /* prefilled with random bytes, written by STOREs */
	LOOM_COSIM_MARK,   /* one 64-byte MARK record */
};

/* Why an instruction is in the program (for dumps and reports). */
enum loom_cosim_role {
	LOOM_COSIM_DATA,    /* moves or computes data that ends in an output */
	LOOM_COSIM_TOKEN,   /* LOAD/STORE with N1*N2*N3 = 0, ELTWISE/LUT of zero lines: only moves tokens */
	LOOM_COSIM_SYNC,    /* 1x1 MATMUL into a scratch ACC line: only relays tokens */
	LOOM_COSIM_CTRL,    /* MARK, FINISH */
	LOOM_COSIM_BAD,     /* the instruction a bad program must fail on */
};

/* Words of a MARK record compared by default: MARK_ID, MACS_LO/HI,
 * DRAM_RD/WR_BYTES, INSNS and the two reserved zero words 14, 15. */
#define LOOM_COSIM_MARK_WORDS 0xef01u

typedef struct loom_cosim_region {
	uint64_t addr;
	uint32_t len;
	uint8_t kind;       /* enum loom_cosim_region_kind */
	uint16_t word_mask; /* MARK: bit w = compare 32-bit word w; 0 = every byte */
	uint8_t *init;      /* len bytes written before the run */
} loom_cosim_region;

/* What a bad program's run must report (checked on both backends). */
#define LOOM_COSIM_EXPECT_PC 1u
#define LOOM_COSIM_EXPECT_INFO 2u

typedef struct loom_cosim_prog {
	uint64_t seed;
	uint64_t insn_addr;         /* INSN_BASE */
	loom_insn *insns;           /* in program order; the last is FINISH (legal programs) */
	uint8_t *roles;             /* enum loom_cosim_role per instruction */
	size_t ninsns;
	loom_cosim_region *regions;
	size_t nregions;
	uint64_t est_cycles;        /* rough serial estimate of the run */
	/* bad programs (loom_cosim_gen_bad) */
	int bad;                    /* 0: legal; must finish with STATUS.DONE, cause 0 */
	int expect_done;            /* bad program that is in fact legal (a boundary case) */
	char what[128];             /* what the bad program tests */
	uint32_t expect_cause, expect_pc, expect_info;
	unsigned expect_mask;       /* LOOM_COSIM_EXPECT_*: which of pc, info are predicted */
} loom_cosim_prog;

/* A legal, race-free program for cfg. 0, or -1 with a message in err. */
int loom_cosim_gen(const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen);

/* A bad program: kind = seed % loom_cosim_bad_kinds(); a short legal prefix
 * ending in a MARK (so its results are deterministic and compared), then an
 * instruction (or a fetch, or a token wait) that must stop the run with
 * expect_cause (expect_pc/expect_info as expect_mask says), predicted from
 * docs/ISA.md and checked against loom_insn_check. One kind ("edge-legal")
 * is a legal boundary case that must finish (expect_done). Consecutive
 * seeds cover every kind. */
int loom_cosim_gen_bad(const loom_hwcfg *cfg, uint64_t seed, loom_cosim_prog *p, char *err, size_t errlen);
unsigned loom_cosim_bad_kinds(void);
const char *loom_cosim_bad_name(unsigned kind);

void loom_cosim_free(loom_cosim_prog *p);

/* DRAM address of instruction i. */
static inline uint64_t loom_cosim_pc(const loom_cosim_prog *p, size_t i) { return p->insn_addr + 32u * i; }
/* Index of the instruction at DRAM address pc, -1 if none. */
long loom_cosim_insn_at(const loom_cosim_prog *p, uint64_t pc);
/* The region holding addr, -1 if none. */
long loom_cosim_region_at(const loom_cosim_prog *p, uint64_t addr);
/* Is byte off of region r compared after the run? */
int loom_cosim_compared(const loom_cosim_region *r, uint32_t off);
/* The last instruction (program order) that writes DRAM byte addr (a STORE
 * row or a MARK record), -1 if none: "who produced this byte". */
long loom_cosim_writer(const loom_cosim_prog *p, uint64_t addr);
/* A cycle bound for one run: 10x the estimate, at least 1M, at most 5M. */
uint64_t loom_cosim_max_cycles(const loom_cosim_prog *p);
const char *loom_cosim_region_kind_name(unsigned kind);
const char *loom_cosim_role_name(unsigned role);
/* Regions, then one line per instruction: index, address, role, disassembly. */
void loom_cosim_dump(const loom_cosim_prog *p, FILE *f);

#endif
