/* misc.S - fence, fence.tso and fence.i as no-ops (also with their
 * reserved rd / rs1 / imm fields set, which are ignored), code patched in
 * ITCM and run, and code copied to DTCM and run there (DTCM is executable;
 * its fetches mixed with its own loads and stores, a jump back to ITCM). */
#include "test.h"

/* copy k words from (ITCM) label src to (DTCM) label dst: a1, a2, a3, t0 */
#define COPY_WORDS(src, dst, k)                                         \
        la      a1, src;                                                \
        la      a2, dst;                                                \
        li      a3, k;                                                  \
9950:   lw      t0, 0(a1);                                              \
        sw      t0, 0(a2);                                              \
        addi    a1, a1, 4;                                              \
        addi    a2, a2, 4;                                              \
        addi    a3, a3, -1;                                             \
        bnez    a3, 9950b

RVTEST_CODE_BEGIN

        /* ---------------- fences do nothing visible */
        TEST_CASE(1, a4, 2, li a4, 1; fence; addi a4, a4, 1)
        TEST_CASE(2, a4, 3, li a4, 1; fence rw, rw; fence i, o; fence r, r; fence w, w; addi a4, a4, 2)
        TEST_CASE(3, a4, 4, li a4, 1; fence.tso; addi a4, a4, 3)
        TEST_CASE(4, a4, 5, li a4, 1; fence.i; addi a4, a4, 4)
        /* a store, a fence, a load of the same word */
        TEST_CASE(5, a4, 0x5ca1ab1e, la a1, scratch; li a2, 0x5ca1ab1e; sw a2, 0(a1); fence; lw a4, 0(a1))
        TEST_CASE(6, a4, 0x0ddba11, la a1, scratch; li a2, 0x0ddba11; sw a2, 0(a1); fence.i; lw a4, 0(a1))
        /* fence iorw, iorw with rd = a4, rs1 = a1: the fields are ignored */
        TEST_CASE(7, a4, 0x77, li a4, 0x77; li a1, 0x99; .word 0x0ff5870f)
        /* fence.i with rd = a4, rs1 = a1, imm = 0x123: ignored */
        TEST_CASE(8, a4, 0x77, li a4, 0x77; li a1, 0x99; .word 0x1235970f)

        /* ---------------- code patched in ITCM, then run */
test_9:
        li      TESTNUM, 9
        call    patch_me
        CHECK_VAL(a4, 1)                /* as assembled */
        la      a1, patch_template
        lw      a2, 0(a1)               /* li a4, 2 */
        la      a1, patch_me
        sw      a2, 0(a1)
        fence.i
        call    patch_me
        CHECK_VAL(a4, 2)                /* as patched */

        /* ---------------- code run from DTCM */
test_10:
        li      TESTNUM, 10
        COPY_WORDS(dtcm_routine, dtcm_code, 5)
        fence.i
        li      a4, 10
        la      a1, dtcm_code
        jalr    ra, 0(a1)
        CHECK_VAL(a4, 0x30)             /* (10 + 5) * 2 + 0x12 */

test_11:                                /* fetches from DTCM, data in DTCM */
        li      TESTNUM, 11
        COPY_WORDS(dtcm_counter, dtcm_code, 5)
        fence.i
        la      a1, counter
        li      a2, 41
        sw      a2, 0(a1)
        la      a3, dtcm_code
        jalr    ra, 0(a3)
        CHECK_VAL(a4, 42)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 42)

test_12:                                /* DTCM code jumps into ITCM */
        li      TESTNUM, 12
        COPY_WORDS(dtcm_jumper, dtcm_code, 2)
        fence.i
        li      a4, 0
        la      a2, 9f
        la      a3, dtcm_code
        jalr    x0, 0(a3)
        j       fail
9:      CHECK_VAL(a4, 0x12)

        j       pass

        /* ---------------- routines */
patch_me:
        li      a4, 1
        ret
patch_template:
        li      a4, 2

        /* copied to DTCM and run there */
dtcm_routine:
        addi    a4, a4, 5
        slli    a4, a4, 1
        addi    a4, a4, 0x12
        ret
        nop

dtcm_counter:
        lw      a4, 0(a1)
        addi    a4, a4, 1
        sw      a4, 0(a1)
        ret
        nop

dtcm_jumper:
        li      a4, 0x12
        jalr    x0, 0(a2)

RVTEST_CODE_END

RVTEST_DATA_BEGIN
scratch:
        .word   0
counter:
        .word   0
        .align  4
dtcm_code:
        .fill   8, 4, 0
RVTEST_DATA_END
