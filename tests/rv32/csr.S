/* csr.S - Zicsr on the machine-mode CSRs of docs/CONTROL.md: csrrw csrrs
 * csrrc csrrwi csrrsi csrrci (the old value in rd, rd = x0, rs1 = x0 and
 * uimm = 0 that do not write, rd = rs1, use right after) on mscratch;
 * mtvec and mepc (bits 1:0 read 0); mie (bits 7, 16, 17, 18 writable);
 * mstatus (only MIE and MPIE writable, MPP reads 3); misa = 0x40001100;
 * mvendorid, marchid, mimpid, mhartid read 0 (reads of read-only CSRs do
 * not trap); mcycle and minstret count (writes ignored), their high halves
 * and the user shadows cycle, instret. Any trap here fails the test. */
#include "test.h"

RVTEST_CODE_BEGIN

        /* ---------------- mscratch: the six instructions */
test_1:                                 /* csrw then csrr */
        li      TESTNUM, 1
        li      a1, 0x12345678
        csrw    mscratch, a1
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x12345678)
test_2:                                 /* csrrw: old value, new value */
        li      TESTNUM, 2
        li      a2, 0xcafef00d
        csrrw   a4, mscratch, a2
        CHECK_VAL(a4, 0x12345678)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0xcafef00d)
test_3:                                 /* csrrs sets bits */
        li      TESTNUM, 3
        li      a1, 0x0000ff01
        csrrs   a4, mscratch, a1
        CHECK_VAL(a4, 0xcafef00d)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0xcafeff0d)
test_4:                                 /* csrrc clears bits */
        li      TESTNUM, 4
        li      a1, 0xf000000f
        csrrc   a4, mscratch, a1
        CHECK_VAL(a4, 0xcafeff0d)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x0afeff00)
test_5:                                 /* csrrwi: 5-bit zero-extended */
        li      TESTNUM, 5
        csrrwi  a4, mscratch, 0x1f
        CHECK_VAL(a4, 0x0afeff00)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x0000001f)
test_6:                                 /* csrrci */
        li      TESTNUM, 6
        csrrci  a4, mscratch, 0x11
        CHECK_VAL(a4, 0x0000001f)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x0000000e)
test_7:                                 /* csrrsi */
        li      TESTNUM, 7
        csrrsi  a4, mscratch, 0x10
        CHECK_VAL(a4, 0x0000000e)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x0000001e)

        /* ---------------- forms that do not read or do not write */
test_8:                                 /* rd = x0: write only */
        li      TESTNUM, 8
        li      a1, -1
        csrrw   x0, mscratch, a1
        mv      a5, x0
        CHECK_VAL(a5, 0)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0xffffffff)
test_9:                                 /* csrrs/csrrc with rs1 = x0: no write */
        li      TESTNUM, 9
        li      x0, 0x55                /* x0 stays 0 */
        csrrs   a4, mscratch, x0
        csrrc   a4, mscratch, x0
        CHECK_VAL(a4, 0xffffffff)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0xffffffff)
test_10:                                /* csrrsi/csrrci with uimm = 0: no write */
        li      TESTNUM, 10
        csrrsi  a4, mscratch, 0
        csrrci  a4, mscratch, 0
        CHECK_VAL(a4, 0xffffffff)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0xffffffff)
test_11:                                /* csrrwi 0 does write */
        li      TESTNUM, 11
        csrrwi  a4, mscratch, 0
        CHECK_VAL(a4, 0xffffffff)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0)
test_12:                                /* csrrw x0 with rd = x0 */
        li      TESTNUM, 12
        li      a1, 0x80000000
        csrw    mscratch, a1
        csrrw   x0, mscratch, x0
        csrr    a4, mscratch
        CHECK_VAL(a4, 0)

        /* ---------------- rd = rs1: the old rs1 is the source */
test_13:                                /* a swap */
        li      TESTNUM, 13
        li      a1, 0x11111111
        csrw    mscratch, a1
        li      a1, 0x22222222
        csrrw   a1, mscratch, a1
        CHECK_VAL(a1, 0x11111111)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x22222222)
test_14:
        li      TESTNUM, 14
        li      a1, 0x0000000f
        csrrs   a1, mscratch, a1
        CHECK_VAL(a1, 0x22222222)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x2222222f)
test_15:
        li      TESTNUM, 15
        li      a1, 0x20000003
        csrrc   a1, mscratch, a1
        CHECK_VAL(a1, 0x2222222f)
        csrr    a4, mscratch
        CHECK_VAL(a4, 0x0222222c)

        /* ---------------- back to back */
test_16:                                /* value produced right before */
        li      TESTNUM, 16
        li      a1, 0x7ffffff0
        addi    a1, a1, 15
        csrw    mscratch, a1
        csrr    a4, mscratch
        addi    a4, a4, 1               /* the value read, used at once */
        CHECK_VAL(a4, 0x80000000)
test_17:                                /* three read-modify-writes in a row */
        li      TESTNUM, 17
        csrwi   mscratch, 1
        csrsi   mscratch, 2
        csrci   mscratch, 1
        csrrsi  a4, mscratch, 4
        CHECK_VAL(a4, 2)
        csrr    a4, mscratch
        CHECK_VAL(a4, 6)

        /* ---------------- mtvec (restored to the handler after) */
test_18:
        li      TESTNUM, 18
        li      a1, 0x00001230
        csrrw   a5, mtvec, a1
        csrr    a4, mtvec
        csrw    mtvec, a5
        CHECK_VAL(a4, 0x00001230)
        CHECK_ADDR(a5, trap_vector)
#ifndef TEST_ENV_GENERIC
test_19:                                /* direct mode only: bits 1:0 read 0 */
        li      TESTNUM, 19
        li      a1, 0x00004567
        csrrw   a5, mtvec, a1
        csrr    a4, mtvec
        csrw    mtvec, a5
        CHECK_VAL(a4, 0x00004564)
test_20:
        li      TESTNUM, 20
        csrrwi  a5, mtvec, 1
        csrr    a4, mtvec
        csrw    mtvec, a5
        CHECK_VAL(a4, 0)
#else
test_19:
        li      TESTNUM, 19
test_20:
        li      TESTNUM, 20
#endif

        /* ---------------- mepc */
test_21:
        li      TESTNUM, 21
        li      a1, 0x10001234
        csrw    mepc, a1
        csrr    a4, mepc
        CHECK_VAL(a4, 0x10001234)
test_22:
        li      TESTNUM, 22
        li      a1, 0xfffffffc
        csrw    mepc, a1
        csrr    a4, mepc
        CHECK_VAL(a4, 0xfffffffc)
#ifndef TEST_ENV_GENERIC
test_23:                                /* bits 1:0 read 0 */
        li      TESTNUM, 23
        li      a1, 0x00000567
        csrw    mepc, a1
        csrr    a4, mepc
        CHECK_VAL(a4, 0x00000564)
test_24:
        li      TESTNUM, 24
        li      a1, -1
        csrw    mepc, a1
        csrr    a4, mepc
        CHECK_VAL(a4, 0xfffffffc)
#else
test_23:
        li      TESTNUM, 23
test_24:
        li      TESTNUM, 24
#endif

        /* ---------------- mie (mstatus.MIE is 0 here) */
test_25:
        li      TESTNUM, 25
        csrr    a4, mie
        CHECK_VAL(a4, 0)                /* reset value */
test_26:
        li      TESTNUM, 26
        li      a1, MIE_MTIE
        csrw    mie, a1
        csrr    a4, mie
        csrw    mie, x0
        CHECK_VAL(a4, MIE_MTIE)
#ifndef TEST_ENV_GENERIC
test_27:                                /* writable: 7, 16, 17, 18 */
        li      TESTNUM, 27
        li      a1, -1
        csrw    mie, a1
        csrr    a4, mie
        csrw    mie, x0
        CHECK_VAL(a4, 0x00070080)
test_28:
        li      TESTNUM, 28
        li      a1, 0x00050000
        csrs    mie, a1
        li      a1, 0x00040000
        csrc    mie, a1
        csrr    a4, mie
        csrw    mie, x0
        CHECK_VAL(a4, 0x00010000)
#else
test_27:
        li      TESTNUM, 27
test_28:
        li      TESTNUM, 28
#endif
test_29:
        li      TESTNUM, 29
        csrr    a4, mie
        CHECK_VAL(a4, 0)

        /* ---------------- mip: no timer interrupt pending (mtimecmp is
         * all ones) */
test_30:
        li      TESTNUM, 30
        csrr    a4, mip
        andi    a4, a4, MIP_MTIP
        CHECK_VAL(a4, 0)

        /* ---------------- mstatus (mie is 0: MIE = 1 takes nothing) */
#ifndef TEST_ENV_GENERIC
test_31:                                /* reset: MPP = 3, the rest 0 */
        li      TESTNUM, 31
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP)
test_32:                                /* only MIE and MPIE writable */
        li      TESTNUM, 32
        li      a1, -1
        csrw    mstatus, a1
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE)
test_33:
        li      TESTNUM, 33
        csrw    mstatus, x0
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP)
test_34:
        li      TESTNUM, 34
        csrsi   mstatus, MSTATUS_MIE
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP | MSTATUS_MIE)
test_35:
        li      TESTNUM, 35
        li      a1, MSTATUS_MPIE
        csrrs   a4, mstatus, a1
        CHECK_VAL(a4, MSTATUS_MPP | MSTATUS_MIE)
        csrrci  a4, mstatus, MSTATUS_MIE
        CHECK_VAL(a4, MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE)
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP | MSTATUS_MPIE)
test_36:                                /* MPP cannot be cleared */
        li      TESTNUM, 36
        li      a1, MSTATUS_MPP | MSTATUS_MPIE
        csrc    mstatus, a1
        csrr    a4, mstatus
        CHECK_VAL(a4, MSTATUS_MPP)
#else
test_31:
        li      TESTNUM, 31
test_32:
        li      TESTNUM, 32
test_33:
        li      TESTNUM, 33
test_34:                                /* MIE and MPIE through set/clear */
        li      TESTNUM, 34
        csrsi   mstatus, MSTATUS_MIE
        csrr    a4, mstatus
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MIE)
test_35:
        li      TESTNUM, 35
        li      a1, MSTATUS_MPIE
        csrs    mstatus, a1
        csrci   mstatus, MSTATUS_MIE
        csrr    a4, mstatus
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MPIE)
test_36:
        li      TESTNUM, 36
        csrw    mstatus, x0
        csrr    a4, mstatus
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, 0)
#endif

        /* ---------------- identification */
        TEST_CASE(37, a4, 0x40001100, csrr a4, misa)
        TEST_CASE(38, a4, 0, li a4, -1; csrr a4, mhartid)
#ifndef TEST_ENV_GENERIC
        TEST_CASE(39, a4, 0, li a4, -1; csrr a4, mvendorid)
        TEST_CASE(40, a4, 0, li a4, -1; csrr a4, marchid)
        TEST_CASE(41, a4, 0, li a4, -1; csrr a4, mimpid)
#else
test_39:
        li      TESTNUM, 39
test_40:
        li      TESTNUM, 40
test_41:
        li      TESTNUM, 41
#endif
        /* read-only CSRs through the forms that do not write: no trap */
        TEST_CASE(42, a4, 0, li a4, -1; csrrs a4, mhartid, x0)
        TEST_CASE(43, a4, 0, li a4, -1; csrrc a4, mhartid, x0)
        TEST_CASE(44, a4, 0, li a4, -1; csrrsi a4, mhartid, 0)
        TEST_CASE(45, a4, 0, li a4, -1; csrrci a4, mhartid, 0)

        /* ---------------- counters */
test_46:                                /* minstret: 4 instructions retired
                                         * between the two reads */
        li      TESTNUM, 46
        csrr    a1, minstret
        nop
        nop
        nop
        csrr    a2, minstret
        sub     a4, a2, a1
#ifndef TEST_ENV_GENERIC
        CHECK_VAL(a4, 4)
#else
        CHECK_EQ(x0, x0)
#endif
test_47:                                /* instret shadows minstret */
        li      TESTNUM, 47
        csrr    a1, instret
        nop
        nop
        nop
        csrr    a2, instret
        sub     a4, a2, a1
#ifndef TEST_ENV_GENERIC
        CHECK_VAL(a4, 4)
#else
        CHECK_EQ(x0, x0)
#endif
test_48:                                /* mcycle: at least one cycle each */
        li      TESTNUM, 48
        csrr    a1, mcycle
        nop
        nop
        nop
        csrr    a2, mcycle
        sub     a4, a2, a1
        li      t4, 4
        bgeu    a4, t4, 9f
        j       fail
9:
test_49:                                /* cycle shadows mcycle: read one */
        li      TESTNUM, 49             /* instruction later, it is ahead */
        csrr    a1, mcycle              /* by 1 to 2^31 - 1 */
        csrr    a2, cycle
        sub     a4, a2, a1
        bgtz    a4, 9f
        j       fail
9:
test_50:                                /* minstret counts from reset: */
        li      TESTNUM, 50             /* more than _start has run */
        csrr    a4, minstret
        li      t4, 40
        bgeu    a4, t4, 9f
        j       fail
9:
#ifndef TEST_ENV_GENERIC
        /* since reset far fewer than 2^32 cycles and instructions */
        TEST_CASE(51, a4, 0, li a4, -1; csrr a4, mcycleh)
        TEST_CASE(52, a4, 0, li a4, -1; csrr a4, minstreth)
        TEST_CASE(53, a4, 0, li a4, -1; csrr a4, cycleh)
        TEST_CASE(54, a4, 0, li a4, -1; csrr a4, instreth)
test_55:                                /* writes to mcycle are ignored */
        li      TESTNUM, 55
        csrr    a1, mcycle
        csrw    mcycle, x0
        csrr    a2, mcycle
        bgeu    a2, a1, 9f              /* not reset */
        j       fail
9:      li      t4, 100
        bgeu    a2, t4, 9f
        j       fail
9:
test_56:                                /* writes to minstret are ignored */
        li      TESTNUM, 56
        csrr    a1, minstret
        csrw    minstret, x0
        csrr    a2, minstret
        sub     a4, a2, a1
        CHECK_VAL(a4, 2)
test_57:                                /* and to the high halves */
        li      TESTNUM, 57
        li      a1, -1
        csrw    mcycleh, a1
        csrw    minstreth, a1
        csrr    a4, mcycleh
        csrr    a5, minstreth
        or      a4, a4, a5
        CHECK_VAL(a4, 0)
#else
test_51:
        li      TESTNUM, 51
test_52:
        li      TESTNUM, 52
test_53:
        li      TESTNUM, 53
test_54:
        li      TESTNUM, 54
test_55:
        li      TESTNUM, 55
test_56:
        li      TESTNUM, 56
test_57:
        li      TESTNUM, 57
#endif

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
