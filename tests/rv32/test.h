/* test.h - assembler macros of the RV32IM instruction test suite
 * (tests/rv32/*.S). docs/CONTROL.md is the contract the tests check.
 *
 * A test program is
 *
 *     #include "test.h"
 *     RVTEST_CODE_BEGIN
 *         TEST_RR_OP(1, add, 3, 1, 2)
 *         ...                       cases numbered 1, 2, 3, ... in order
 *     RVTEST_CODE_END
 *     RVTEST_DATA_BEGIN
 *         ...                       data, in DTCM
 *     RVTEST_DATA_END
 *
 * and ends by writing TOHOST (LOOM_CORE_REG TOHOST in PERIPH): 1 when
 * every case passed, (n << 1) | 1 when case n failed, then spins in `j .`.
 * Special values of n:
 *   n = 0x10000 | c   an unexpected trap (exception or interrupt) during
 *                     case c; a1 = mcause, a2 = mepc, a3 = mtval at the spin
 *   n = 0xfff         a failure before the first case (c = 0)
 *
 * Registers the framework owns (test code leaves them alone):
 *   gp (x3)  TESTNUM, the current case number
 *   s1 (x9)  TRAPCNT  traps taken since the test last cleared it
 *   s2 (x18) TCAUSE   mcause of the last trap
 *   s3 (x19) TEPC     mepc of the last trap
 *   s4 (x20) TTVAL    mtval of the last trap
 *   s5 (x21) TSTATUS  mstatus seen by the handler of the last trap
 *   s6 (x22) RESUME   where the handler resumes after an expected trap
 *            (one-shot: the handler clears it; a trap while it is 0 is
 *            unexpected and fails the test)
 *   t4 (x29) the expected value of a check
 *   t5, t6 (x30, x31) reserved for the checks (tests/rv32/qemu/mutate.sh)
 * The case macros compute into a1, a2 (sources), a4 (result), a5 (copy).
 *
 * The addresses of the peripheral registers and of the unmapped probes
 * below can be overridden before this file is included (tests/rv32/qemu
 * does, to run the same sources on an independent simulator).
 */
#ifndef LOOM_RV32_TEST_H
#define LOOM_RV32_TEST_H

/* ------------------------------------------------------------ environment */
/* the memory map and peripheral of include/loom/core.def */
#include "loom/core_asm.h"
#ifndef TEST_TOHOST_ADDR
#define TEST_TOHOST_ADDR      (LOOM_CORE_PERIPH_BASE + LOOM_CORE_REG_TOHOST)
#endif
#ifndef TEST_MTIME_ADDR
#define TEST_MTIME_ADDR       (LOOM_CORE_PERIPH_BASE + LOOM_CORE_REG_MTIME_LO)   /* MTIME_HI at +4 */
#endif
#ifndef TEST_MTIMECMP_ADDR
#define TEST_MTIMECMP_ADDR    (LOOM_CORE_PERIPH_BASE + LOOM_CORE_REG_MTIMECMP_LO) /* MTIMECMP_HI at +4 */
#endif
/* addresses that no region maps (docs/CONTROL.md memory map) */
#ifndef TEST_UNMAPPED_ADDR
#define TEST_UNMAPPED_ADDR    0x40000000   /* between PERIPH and DRAM */
#endif
#ifndef TEST_ITCM_END
#define TEST_ITCM_END         (LOOM_CORE_ITCM_BASE + LOOM_CORE_ITCM_SIZE)
#endif
#ifndef TEST_DTCM_END
#define TEST_DTCM_END         (LOOM_CORE_DTCM_BASE + LOOM_CORE_DTCM_SIZE)
#endif
#ifndef TEST_PERIPH_END
#define TEST_PERIPH_END       (LOOM_CORE_PERIPH_BASE + LOOM_CORE_PERIPH_SIZE)
#endif

/* timer deltas in timer.S are multiplied by this (mtime ticks once a
 * cycle on Loom) */
#ifndef TEST_TIMER_SCALE
#define TEST_TIMER_SCALE      1
#endif

/* Loom-specific checks (exact CSR masks, PERIPH word-only accesses, ...)
 * are left out when TEST_ENV_GENERIC is defined (tests/rv32/qemu). */

/* a0 holds the TOHOST value: write it and stop */
#ifndef TEST_ENV_EXIT
#define TEST_ENV_EXIT                                                   \
        li      t0, TEST_TOHOST_ADDR;                                   \
        sw      a0, 0(t0);                                              \
1:      j       1b
#endif

/* run once at the start, before the first case (environment set-up) */
#ifndef TEST_ENV_INIT
#define TEST_ENV_INIT
#endif

/* ------------------------------------------------------------ constants */
#define MSTATUS_MIE     0x00000008
#define MSTATUS_MPIE    0x00000080
#define MSTATUS_MPP     0x00001800
#define MIP_MTIP        0x00000080
#define MIE_MTIE        0x00000080

#define CAUSE_MISALIGNED_FETCH  0
#define CAUSE_FETCH_ACCESS      1
#define CAUSE_ILLEGAL_INSN      2
#define CAUSE_BREAKPOINT        3
#define CAUSE_MISALIGNED_LOAD   4
#define CAUSE_LOAD_ACCESS       5
#define CAUSE_MISALIGNED_STORE  6
#define CAUSE_STORE_ACCESS      7
#define CAUSE_ECALL_M           11
#define CAUSE_IRQ_MTIMER        0x80000007

#define TESTNUM gp
#define TRAPCNT s1
#define TCAUSE  s2
#define TEPC    s3
#define TTVAL   s4
#define TSTATUS s5
#define RESUME  s6

/* ------------------------------------------------------------ checks */
/* fail unless registers a and b are equal (reaches `fail` from anywhere;
 * tests/rv32/qemu/mutate.sh replaces it) */
#ifndef CHECK_EQ
#define CHECK_EQ(a, b)                                                  \
        beq     a, b, 9901f;                                            \
        j       fail;                                                   \
9901:
#endif

/* fail unless register r holds the constant v */
#define CHECK_VAL(r, v)                                                 \
        li      t4, v;                                                  \
        CHECK_EQ(r, t4)

/* fail unless register r holds the address of symbol s */
#define CHECK_ADDR(r, s)                                                \
        la      t4, s;                                                  \
        CHECK_EQ(r, t4)

/* k nops (0 is allowed) */
#define NOPS(k) .rept k; nop; .endr

/* ------------------------------------------------------------ a case */
/* run code, then compare register reg with the constant expect */
#define TEST_CASE(n, reg, expect, code...)                              \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        code;                                                           \
        CHECK_VAL(reg, expect)

/* ------------------------------------------------------------ reg-reg ops */
#define TEST_RR_OP(n, inst, result, v1, v2)                             \
        TEST_CASE(n, a4, result,                                        \
                li a1, v1; li a2, v2; inst a4, a1, a2)

#define TEST_RR_SRC1_EQ_DEST(n, inst, result, v1, v2)                   \
        TEST_CASE(n, a1, result,                                        \
                li a1, v1; li a2, v2; inst a1, a1, a2)

#define TEST_RR_SRC2_EQ_DEST(n, inst, result, v1, v2)                   \
        TEST_CASE(n, a2, result,                                        \
                li a1, v1; li a2, v2; inst a2, a1, a2)

#define TEST_RR_SRC12_EQ_DEST(n, inst, result, v1)                      \
        TEST_CASE(n, a1, result,                                        \
                li a1, v1; inst a1, a1, a1)

/* x0 as a source reads 0 whatever was written to it */
#define TEST_RR_ZEROSRC1(n, inst, result, v2)                           \
        TEST_CASE(n, a4, result,                                        \
                li x0, 0x5a5a5a5a; li a2, v2; inst a4, x0, a2)

#define TEST_RR_ZEROSRC2(n, inst, result, v1)                           \
        TEST_CASE(n, a4, result,                                        \
                li a1, v1; li x0, -1; inst a4, a1, x0)

#define TEST_RR_ZEROSRC12(n, inst, result)                              \
        TEST_CASE(n, a4, result,                                        \
                li x0, 123; inst a4, x0, x0)

/* writes to x0 are dropped; the value must not leak to a consumer */
#define TEST_RR_ZERODEST(n, inst, v1, v2)                               \
        TEST_CASE(n, a5, 0,                                             \
                li a1, v1; li a2, v2; inst x0, a1, a2; mv a5, x0)

/* consumer k instructions after the producer */
#define TEST_RR_DEST_BYPASS(n, k, inst, result, v1, v2)                 \
        TEST_CASE(n, a5, result,                                        \
                li a1, v1; li a2, v2; inst a4, a1, a2; NOPS(k); mv a5, a4)

/* sources produced k1 and k2 instructions before the consumer */
#define TEST_RR_SRC12_BYPASS(n, k1, k2, inst, result, v1, v2)           \
        TEST_CASE(n, a4, result,                                        \
                li a1, v1; NOPS(k1); li a2, v2; NOPS(k2); inst a4, a1, a2)

#define TEST_RR_SRC21_BYPASS(n, k1, k2, inst, result, v1, v2)           \
        TEST_CASE(n, a4, result,                                        \
                li a2, v2; NOPS(k1); li a1, v1; NOPS(k2); inst a4, a1, a2)

/* ------------------------------------------------------------ reg-imm ops */
/* imm is written as the assembler takes it: -2048..2047, or 0..31 for
 * the shifts */
#define TEST_IMM_OP(n, inst, result, v1, imm)                           \
        TEST_CASE(n, a4, result,                                        \
                li a1, v1; inst a4, a1, imm)

#define TEST_IMM_SRC1_EQ_DEST(n, inst, result, v1, imm)                 \
        TEST_CASE(n, a1, result,                                        \
                li a1, v1; inst a1, a1, imm)

#define TEST_IMM_ZEROSRC1(n, inst, result, imm)                         \
        TEST_CASE(n, a4, result,                                        \
                li x0, 77; inst a4, x0, imm)

#define TEST_IMM_ZERODEST(n, inst, v1, imm)                             \
        TEST_CASE(n, a5, 0,                                             \
                li a1, v1; inst x0, a1, imm; mv a5, x0)

#define TEST_IMM_DEST_BYPASS(n, k, inst, result, v1, imm)               \
        TEST_CASE(n, a5, result,                                        \
                li a1, v1; inst a4, a1, imm; NOPS(k); mv a5, a4)

#define TEST_IMM_SRC1_BYPASS(n, k, inst, result, v1, imm)               \
        TEST_CASE(n, a4, result,                                        \
                li a1, v1; NOPS(k); inst a4, a1, imm)

/* ------------------------------------------------------------ loads */
/* load from base + off (base a symbol, off -2048..2047) */
#define TEST_LD_OP(n, inst, result, off, base)                          \
        TEST_CASE(n, a4, result,                                        \
                la a1, base; inst a4, off(a1))

/* the base register is also the destination */
#define TEST_LD_SRC1_EQ_DEST(n, inst, result, off, base)                \
        TEST_CASE(n, a1, result,                                        \
                la a1, base; inst a1, off(a1))

/* use of the loaded value k instructions after the load */
#define TEST_LD_DEST_BYPASS(n, k, inst, result, off, base)              \
        TEST_CASE(n, a5, result,                                        \
                la a1, base; inst a4, off(a1); NOPS(k); mv a5, a4)

/* load-use into an ALU op right away */
#define TEST_LD_USE_ALU(n, inst, result, off, base, addend)             \
        TEST_CASE(n, a5, result,                                        \
                la a1, base; li a2, addend; inst a4, off(a1); add a5, a4, a2)

/* base address produced k instructions before the load */
#define TEST_LD_SRC1_BYPASS(n, k, inst, result, off, base)              \
        TEST_CASE(n, a4, result,                                        \
                la a1, base; NOPS(k); inst a4, off(a1))

/* load into x0: no effect on x0 */
#define TEST_LD_ZERODEST(n, inst, off, base)                            \
        TEST_CASE(n, a5, 0,                                             \
                la a1, base; inst x0, off(a1); mv a5, x0)

/* ------------------------------------------------------------ stores */
/* store value v with st at base + off, read it back with ld */
#define TEST_ST_OP(n, ld, st, result, v, off, base)                     \
        TEST_CASE(n, a4, result,                                        \
                la a1, base; li a2, v; st a2, off(a1); ld a4, off(a1))

/* store value v at base + off, then read the whole aligned word wordoff
 * from base: the other byte lanes must be untouched */
#define TEST_ST_WORD(n, st, v, off, base, wordoff, word)                \
        TEST_CASE(n, a4, word,                                          \
                la a1, base; li a2, v; st a2, off(a1); lw a4, wordoff(a1))

/* value and address produced k1 / k2 instructions before the store */
#define TEST_ST_SRC12_BYPASS(n, k1, k2, ld, st, result, v, off, base)   \
        TEST_CASE(n, a4, result,                                        \
                li a2, v; NOPS(k1); la a1, base; NOPS(k2);              \
                st a2, off(a1); ld a4, off(a1))

#define TEST_ST_SRC21_BYPASS(n, k1, k2, ld, st, result, v, off, base)   \
        TEST_CASE(n, a4, result,                                        \
                la a1, base; NOPS(k1); li a2, v; NOPS(k2);              \
                st a2, off(a1); ld a4, off(a1))

/* ------------------------------------------------------------ branches */
/* taken forward, then taken backward; falling through either fails */
#define TEST_BR2_OP_TAKEN(n, inst, v1, v2)                              \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, v1;                                                 \
        li      a2, v2;                                                 \
        inst    a1, a2, 9912f;                                          \
        j       fail;                                                   \
9911:   j       9913f;                                                  \
        j       fail;                                                   \
9912:   inst    a1, a2, 9911b;                                          \
        j       fail;                                                   \
9913:

/* not taken: the next instruction runs; the target fails */
#define TEST_BR2_OP_NOTTAKEN(n, inst, v1, v2)                           \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, v1;                                                 \
        li      a2, v2;                                                 \
        inst    a1, a2, 9914f;                                          \
        j       9915f;                                                  \
9914:   j       fail;                                                   \
9915:   inst    a1, a2, 9914b;                                          \
        addi    a5, x0, 1;              /* the fall-through executes */ \
        CHECK_VAL(a5, 1)

/* operands produced k1 / k2 instructions before a not-taken branch */
#define TEST_BR2_SRC12_BYPASS(n, k1, k2, inst, v1, v2)                  \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, v1;                                                 \
        NOPS(k1);                                                       \
        li      a2, v2;                                                 \
        NOPS(k2);                                                       \
        inst    a1, a2, 9916f;                                          \
        j       9917f;                                                  \
9916:   j       fail;                                                   \
9917:

/* operands produced k1 / k2 instructions before a taken branch */
#define TEST_BR2_SRC12_BYPASS_TAKEN(n, k1, k2, inst, v1, v2)            \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, v1;                                                 \
        NOPS(k1);                                                       \
        li      a2, v2;                                                 \
        NOPS(k2);                                                       \
        inst    a1, a2, 9918f;                                          \
        j       fail;                                                   \
9918:

/* ------------------------------------------------------------ traps */
/* arm the handler: the next trap is expected and resumes at label res */
#define TRAP_ARM(res)                                                   \
        li      TRAPCNT, 0;                                             \
        la      RESUME, res

/* after an expected trap: exactly one trap, with this cause, mepc at
 * label epc and mtval tval (a constant) */
#define TRAP_CHECK(cause, epc, tval)                                    \
        CHECK_VAL(TRAPCNT, 1);                                          \
        CHECK_VAL(TCAUSE, cause);                                       \
        CHECK_ADDR(TEPC, epc);                                          \
        CHECK_VAL(TTVAL, tval)

/* ------------------------------------------------------------ program */
#define RVTEST_CODE_BEGIN                                               \
        .option norelax;                                                \
        .option arch, +zicsr, +zifencei;                                \
        .section .text.init, "ax", @progbits;                           \
        .globl  _start;                                                 \
        .align  2;                                                      \
_start:                                                                 \
        li x1, 0;  li x2, 0;  li x3, 0;  li x4, 0;                      \
        li x5, 0;  li x6, 0;  li x7, 0;  li x8, 0;                      \
        li x9, 0;  li x10, 0; li x11, 0; li x12, 0;                     \
        li x13, 0; li x14, 0; li x15, 0; li x16, 0;                     \
        li x17, 0; li x18, 0; li x19, 0; li x20, 0;                     \
        li x21, 0; li x22, 0; li x23, 0; li x24, 0;                     \
        li x25, 0; li x26, 0; li x27, 0; li x28, 0;                     \
        li x29, 0; li x30, 0; li x31, 0;                                \
        la      t0, trap_vector;                                        \
        csrw    mtvec, t0;                                              \
        la      sp, __stack_top;                                        \
        la      t0, __bss_start;                                        \
        la      t1, __bss_end;                                          \
9920:   bgeu    t0, t1, 9921f;                                          \
        sw      zero, 0(t0);                                            \
        addi    t0, t0, 4;                                              \
        j       9920b;                                                  \
9921:   TEST_ENV_INIT;                                                  \
        li      t0, 0;                                                  \
        li      t1, 0;                                                  \
        j       test_begin;                                             \
                                                                        \
        /* the trap handler: record the trap; resume at RESUME when a */\
        /* trap was expected, otherwise fail */                         \
        .align  2;                                                      \
trap_vector:                                                            \
        csrr    TCAUSE, mcause;                                         \
        csrr    TEPC, mepc;                                             \
        csrr    TTVAL, mtval;                                           \
        csrr    TSTATUS, mstatus;                                       \
        addi    TRAPCNT, TRAPCNT, 1;                                    \
        beqz    RESUME, 9922f;                                          \
        csrw    mepc, RESUME;                                           \
        li      RESUME, 0;                                              \
        mret;                                                           \
9922:   mv      a1, TCAUSE;                                             \
        mv      a2, TEPC;                                               \
        mv      a3, TTVAL;                                              \
        li      t0, 0x10000;                                            \
        or      TESTNUM, TESTNUM, t0;                                   \
        j       fail;                                                   \
                                                                        \
        .text;                                                          \
        .align  2;                                                      \
test_begin:

#define RVTEST_CODE_END                                                 \
        j       pass;                                                   \
        .align  2;                                                      \
fail:                                                                   \
        fence;                                                          \
        bnez    TESTNUM, 9930f;                                         \
        li      TESTNUM, 0xfff;                                         \
9930:   slli    a0, TESTNUM, 1;                                         \
        ori     a0, a0, 1;                                              \
        TEST_ENV_EXIT;                                                  \
pass:                                                                   \
        fence;                                                          \
        li      a0, 1;                                                  \
        TEST_ENV_EXIT

#define RVTEST_DATA_BEGIN                                               \
        .data;                                                          \
        .align  4;

#define RVTEST_DATA_END

#endif /* LOOM_RV32_TEST_H */
