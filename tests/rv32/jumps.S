/* jumps.S - jal and jalr: the link value (pc + 4), rd = x0 (no link),
 * forward and backward, the link used by the next instruction, jalr's
 * 12-bit offset at both ends, bit 0 of the target cleared (odd base, odd
 * offset), rd equal to rs1 (the old rs1 is the base), a base produced by the
 * instruction before (also by a load), a jump to the next instruction,
 * nested calls, and jal offsets that exercise imm[11] and imm[19:12]. */
#include "test.h"

RVTEST_CODE_BEGIN

        /* ---------------- jal */
test_1:                                 /* link = address after the jal */
        li      TESTNUM, 1
        li      ra, 0
        jal     ra, 9f
8:      j       fail
9:      CHECK_ADDR(ra, 8b)

test_2:                                 /* jal x0: skips, links nothing */
        li      TESTNUM, 2
        li      a4, 0
        jal     x0, 9f
        addi    a4, a4, 1
        addi    a4, a4, 1
9:      addi    a4, a4, 4
        CHECK_VAL(a4, 4)

test_3:                                 /* backward */
        li      TESTNUM, 3
        li      a4, 0
        j       8f
7:      addi    a4, a4, 1
        j       9f
8:      jal     t0, 7b
6:      j       fail
9:      CHECK_VAL(a4, 1)
        CHECK_ADDR(t0, 6b)

test_4:                                 /* the link read right away */
        li      TESTNUM, 4
        jal     a5, 9f
9:      mv      a4, a5
        CHECK_ADDR(a4, 9b)

test_5:                                 /* to the next instruction */
        li      TESTNUM, 5
        li      a4, 0
        jal     a1, 9f
9:      addi    a4, a4, 1
        CHECK_VAL(a4, 1)
        CHECK_ADDR(a1, 9b)

test_6:                                 /* rd = x0 leaves x0 at 0 */
        li      TESTNUM, 6
        jal     x0, 9f
9:      mv      a4, x0
        CHECK_VAL(a4, 0)

        /* ---------------- jalr */
test_7:
        li      TESTNUM, 7
        la      a1, 9f
        li      ra, 0
        jalr    ra, 0(a1)
8:      j       fail
9:      CHECK_ADDR(ra, 8b)

test_8:                                 /* jalr x0 (ret): no link */
        li      TESTNUM, 8
        la      a1, 9f
        li      a4, 7
        jalr    x0, 0(a1)
        li      a4, 0
9:      CHECK_VAL(a4, 7)

/* jalr t1, off(a1) with a1 = base, which must land on the target (the
 * label in the middle); zeros (illegal) fill pad bytes on either side, so
 * a target computed wrong (offset dropped or mis-extended, bit 0 kept)
 * traps instead of running on elsewhere */
#define TEST_JALR(n, base, off, pad)                                    \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        la      a1, base;                                               \
        li      t1, 0;                                                  \
        jalr    t1, off(a1);                                            \
9961:   j       fail;                                                   \
        .skip   pad;                                                    \
jalr_target_##n:                                                        \
        j       9962f;                                                  \
        .skip   pad;                                                    \
9962:   CHECK_ADDR(t1, 9961b)

        TEST_JALR(9, jalr_target_9 - 16, 16, 32)            /* positive offset */
        TEST_JALR(10, jalr_target_10 + 12, -12, 32)         /* negative offset */
        TEST_JALR(11, jalr_target_11 + 2048, -2048, 2064)   /* offset -2048 */
        TEST_JALR(12, jalr_target_12 - 2047, 2047, 2064)    /* 2047, odd base */
        TEST_JALR(13, jalr_target_13 + 1, 0, 32)            /* odd base: bit 0 cleared */
        TEST_JALR(14, jalr_target_14, 1, 32)                /* odd offset: bit 0 cleared */
        TEST_JALR(15, jalr_target_15 - 2046, 2047, 2064)    /* base + 2047 odd */
        TEST_JALR(16, jalr_target_16 + 3, -2, 32)           /* odd base, negative offset */

test_17:                                /* rd = rs1: the old value is the base */
        li      TESTNUM, 17
        la      a1, 9f
        jalr    a1, 0(a1)
8:      j       fail
9:      CHECK_ADDR(a1, 8b)

test_18:                                /* rd = rs1, with an offset */
        li      TESTNUM, 18
        la      a1, 9f - 8
        jalr    a1, 8(a1)
8:      j       fail
9:      CHECK_ADDR(a1, 8b)

test_19:                                /* base loaded by the instruction before */
        li      TESTNUM, 19
        la      a2, jump_target_ptr
        lw      a1, 0(a2)
        jalr    ra, 0(a1)
8:      j       fail
        .globl  jump_target_19
jump_target_19:
        CHECK_ADDR(ra, 8b)

test_20:                                /* base from the instruction before */
        li      TESTNUM, 20
        la      a1, 9f - 4
        addi    a1, a1, 4
        jalr    x0, 0(a1)
        j       fail
        .skip   32
9:      j       8f
        .skip   32
8:

test_21:                                /* to the next instruction */
        li      TESTNUM, 21
        la      a1, 9f
        li      a4, 0
        jalr    a2, 0(a1)
9:      addi    a4, a4, 1
        CHECK_VAL(a4, 1)
        CHECK_ADDR(a2, 9b)

test_22:                                /* the link read right away */
        li      TESTNUM, 22
        la      a1, 9f
        jalr    a5, 0(a1)
9:      addi    a4, a5, 0
        CHECK_ADDR(a4, 9b)

test_23:                                /* rd = x0 leaves x0 at 0 */
        li      TESTNUM, 23
        la      a1, 9f
        jalr    x0, 0(a1)
9:      mv      a4, x0
        CHECK_VAL(a4, 0)

        /* ---------------- calls: call / ret, nested */
test_24:
        li      TESTNUM, 24
        li      a4, 0
        call    sub_outer
        CHECK_VAL(a4, 0x111)

        /* ---------------- jal offsets far from 0 */
test_25:                                /* +0x2804: imm[13], imm[11], imm[2] */
        li      TESTNUM, 25
        jal     t1, 9f
8:      .skip   0x2800                  /* zeros: illegal if executed */
9:      CHECK_ADDR(t1, 8b)

test_26:                                /* -0x1800: imm[20:13] and imm[11] */
        li      TESTNUM, 26
        j       8f
7:      j       9f
        .skip   0x17fc
8:      jal     t1, 7b
6:      j       fail
9:      CHECK_ADDR(t1, 6b)

#ifndef TEST_ENV_GENERIC
test_27:                                /* jalr with x0 as the base: code at 0 */
        li      TESTNUM, 27
        addi    a1, x0, %lo(low_routine)        /* it is below 0x800 */
        CHECK_ADDR(a1, low_routine)
        li      a4, 0
        jalr    ra, %lo(low_routine)(x0)
        CHECK_VAL(a4, 0x27)
#else
test_27:
        li      TESTNUM, 27
#endif

        j       pass

sub_outer:
        addi    sp, sp, -16
        sw      ra, 12(sp)
        ori     a4, a4, 0x100
        call    sub_inner
        ori     a4, a4, 0x001
        lw      ra, 12(sp)
        addi    sp, sp, 16
        ret
sub_inner:
        ori     a4, a4, 0x010
        ret

        /* a routine within 2 KiB of address 0, reached with jalr off(x0) */
        .pushsection .text.init, "ax", @progbits
        .align  2
low_routine:
        li      a4, 0x27
        ret
        .popsection

RVTEST_CODE_END

RVTEST_DATA_BEGIN
jump_target_ptr:
        .word   jump_target_19
RVTEST_DATA_END
