/* timer.S - the machine timer and its interrupt (docs/CONTROL.md,
 * "Interrupts"; core.def MTIME_LO/HI, MTIMECMP_LO/HI): mtimecmp resets to
 * all ones and is read/write, mtime counts, mip.MTIP follows
 * mtime >= mtimecmp; wfi waits for (mip & mie) != 0 whatever mstatus.MIE
 * says; the interrupt (mcause 0x80000007, mtval 0, mepc = the instruction
 * not yet executed) is taken exactly when mstatus.MIE and mie.MTIE and
 * MTIP are all set: right after csrs mstatus, csrs mie, mret (MPIE = 1),
 * and after wfi; not while either enable is 0. The handler disarms the
 * timer (mtimecmp = all ones, high word first) and waits for MTIP to drop
 * before mret. */
#include "test.h"

/* a2:a3 = mtime (low:high, read consistently); t0 clobbered */
#define READ_MTIME                                                      \
        li      t0, TEST_MTIME_ADDR;                                    \
9980:   lw      a3, 4(t0);                                              \
        lw      a2, 0(t0);                                              \
        lw      a5, 4(t0);                                              \
        bne     a3, a5, 9980b

/* mtimecmp = mtime + delta * TEST_TIMER_SCALE (test.h: 1, mtime ticks
 * once a cycle on Loom); a2, a3, a5, t0, t1 clobbered */
#define ARM_TIMER(delta)                                                \
        li      t1, TEST_MTIMECMP_ADDR;                                 \
        li      a5, -1;                                                 \
        sw      a5, 4(t1);              /* no match while half written */ \
        READ_MTIME;                                                     \
        li      a5, (delta) * TEST_TIMER_SCALE;                         \
        add     a5, a2, a5;                                             \
        sltu    a2, a5, a2;             /* carry */                     \
        add     a3, a3, a2;                                             \
        li      t1, TEST_MTIMECMP_ADDR;                                 \
        sw      a5, 0(t1);                                              \
        sw      a3, 4(t1)

/* mtimecmp = 0: MTIP at once */
#define FIRE_TIMER                                                      \
        li      t1, TEST_MTIMECMP_ADDR;                                 \
        sw      x0, 0(t1);                                              \
        sw      x0, 4(t1)

/* mtimecmp = all ones, high word first */
#define DISARM_TIMER                                                    \
        li      t1, TEST_MTIMECMP_ADDR;                                 \
        li      t2, -1;                                                 \
        sw      t2, 4(t1);                                              \
        sw      t2, 0(t1)

/* wait (bounded) until mip.MTIP reads v (0 or MIP_MTIP), else fail;
 * t0, t1, t2 clobbered */
#define WAIT_MTIP(v)                                                    \
        li      t1, 100000 * TEST_TIMER_SCALE;                          \
9981:   csrr    t2, mip;                                                \
        andi    t2, t2, MIP_MTIP;                                       \
        li      t0, v;                                                  \
        beq     t2, t0, 9982f;                                          \
        addi    t1, t1, -1;                                             \
        bnez    t1, 9981b;                                              \
        j       fail;                                                   \
9982:

/* after an interrupt was expected: one trap, the timer's, mtval 0, at
 * label epc, with MIE 0 / MPIE 1 in the handler */
#define EXPECT_TIMER_IRQ(epc)                                           \
        CHECK_VAL(TRAPCNT, 1);                                          \
        CHECK_VAL(TCAUSE, CAUSE_IRQ_MTIMER);                            \
        CHECK_VAL(TTVAL, 0);                                            \
        CHECK_ADDR(TEPC, epc);                                          \
        andi    a5, TSTATUS, MSTATUS_MIE | MSTATUS_MPIE;                \
        CHECK_VAL(a5, MSTATUS_MPIE)

RVTEST_CODE_BEGIN
        la      t0, timer_vector
        csrw    mtvec, t0
        csrw    mie, x0
        csrw    mstatus, x0

        /* ---------------- the registers */
test_1:                                 /* mtimecmp resets to all ones */
        li      TESTNUM, 1
        li      a1, TEST_MTIMECMP_ADDR
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0xffffffff)
        lw      a4, 4(a1)
        CHECK_VAL(a4, 0xffffffff)

test_2:                                 /* no timer interrupt pending */
        li      TESTNUM, 2
        csrr    a4, mip
        andi    a4, a4, MIP_MTIP
        CHECK_VAL(a4, 0)

test_3:                                 /* mtime counts */
        li      TESTNUM, 3
        READ_MTIME
        mv      a1, a2
        li      a4, 100000
9:      lw      a2, 0(t0)
        bne     a2, a1, 8f
        addi    a4, a4, -1
        bnez    a4, 9b
        j       fail
8:
test_4:                                 /* mtime high word: far from */
        li      TESTNUM, 4              /* 2^32 ticks since reset */
        READ_MTIME
        CHECK_VAL(a3, 0)

test_5:                                 /* mtimecmp is read/write */
        li      TESTNUM, 5
        li      a1, TEST_MTIMECMP_ADDR
        li      a2, 0x12345678
        sw      a2, 0(a1)               /* high word still all ones */
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x12345678)
        li      a2, 0x7edcba98
        sw      a2, 4(a1)
        lw      a4, 4(a1)
        CHECK_VAL(a4, 0x7edcba98)
        DISARM_TIMER
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0xffffffff)
        lw      a4, 4(a1)
        CHECK_VAL(a4, 0xffffffff)

        /* ---------------- mip.MTIP follows mtime >= mtimecmp (mie = 0) */
test_6:
        li      TESTNUM, 6
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        DISARM_TIMER
        WAIT_MTIP(0)
        CHECK_VAL(TRAPCNT, 0)

test_7:                                 /* mtimecmp = mtime + 200: pending */
        li      TESTNUM, 7              /* after a while, not at once */
        ARM_TIMER(200)
        csrr    a4, mip
        andi    a4, a4, MIP_MTIP
        CHECK_VAL(a4, 0)
        WAIT_MTIP(MIP_MTIP)
        DISARM_TIMER
        WAIT_MTIP(0)

        /* ---------------- pending but not enabled: not taken */
test_8:                                 /* mie.MTIE = 0, mstatus.MIE = 1 */
        li      TESTNUM, 8
        li      TRAPCNT, 0
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        csrsi   mstatus, MSTATUS_MIE
        NOPS(8)
        csrci   mstatus, MSTATUS_MIE
        DISARM_TIMER
        WAIT_MTIP(0)
        CHECK_VAL(TRAPCNT, 0)

test_9:                                 /* mie.MTIE = 1, mstatus.MIE = 0 */
        li      TESTNUM, 9
        li      TRAPCNT, 0
        li      t0, MIE_MTIE
        csrw    mie, t0
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        NOPS(8)
        DISARM_TIMER
        WAIT_MTIP(0)
        csrw    mie, x0
        CHECK_VAL(TRAPCNT, 0)

        /* ---------------- taken when the last enable is set */
test_10:                                /* by csrs mstatus */
        li      TESTNUM, 10
        li      t0, MIE_MTIE
        csrw    mie, t0
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        li      TRAPCNT, 0
        li      t0, 0x1234              /* the interrupt sets mtval to 0 */
        csrw    mtval, t0
        csrsi   mstatus, MSTATUS_MIE
8:      csrr    a4, mstatus             /* the handler returned here */
        csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        EXPECT_TIMER_IRQ(8b)
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MIE | MSTATUS_MPIE)   /* mret restored MIE */

test_11:                                /* by csrs mie */
        li      TESTNUM, 11
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        csrsi   mstatus, MSTATUS_MIE
        li      TRAPCNT, 0
        li      t0, MIE_MTIE
        csrs    mie, t0
8:      csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        EXPECT_TIMER_IRQ(8b)

test_12:                                /* by mret with MPIE = 1: taken */
        li      TESTNUM, 12             /* before the first instruction at mepc */
        li      t0, MIE_MTIE
        csrw    mie, t0
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        li      t0, MSTATUS_MPP | MSTATUS_MPIE
        csrw    mstatus, t0
        la      t0, 8f
        csrw    mepc, t0
        li      TRAPCNT, 0
        li      a4, 0
        mret
        j       fail
8:      addi    a4, a4, 1               /* runs once, after the handler */
        csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        EXPECT_TIMER_IRQ(8b)
        CHECK_VAL(a4, 1)

        /* ---------------- wfi */
test_13:                                /* mstatus.MIE = 0: wfi returns once */
        li      TESTNUM, 13             /* MTIP is pending, no trap */
        li      t0, MIE_MTIE
        csrw    mie, t0
        li      TRAPCNT, 0
        ARM_TIMER(300)
        wfi
        csrr    a4, mip
        andi    a4, a4, MIP_MTIP
        CHECK_VAL(a4, MIP_MTIP)
        CHECK_VAL(TRAPCNT, 0)
        /* then setting mstatus.MIE takes the interrupt */
        csrsi   mstatus, MSTATUS_MIE
8:      csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        EXPECT_TIMER_IRQ(8b)

test_14:                                /* mstatus.MIE = 1: the interrupt */
        li      TESTNUM, 14             /* is taken after wfi, mepc = wfi + 4 */
        li      t0, MIE_MTIE
        csrw    mie, t0
        li      TRAPCNT, 0
        la      RESUME, 9f              /* resume at 9 even if taken early */
        ARM_TIMER(500)
        csrsi   mstatus, MSTATUS_MIE
        wfi
8:      j       fail
9:      csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        EXPECT_TIMER_IRQ(8b)

test_15:                                /* wfi with an interrupt already */
        li      TESTNUM, 15             /* pending and MIE = 0: no wait */
        li      t0, MIE_MTIE
        csrw    mie, t0
        li      TRAPCNT, 0
        FIRE_TIMER
        WAIT_MTIP(MIP_MTIP)
        wfi
        wfi
        DISARM_TIMER
        WAIT_MTIP(0)
        csrw    mie, x0
        CHECK_VAL(TRAPCNT, 0)

test_16:                                /* the interrupted code's registers */
        li      TESTNUM, 16             /* are intact: a loop that runs until */
        li      t0, MIE_MTIE            /* the interrupt still sums right */
        csrw    mie, t0
        li      TRAPCNT, 0
        ARM_TIMER(500)
        li      a1, 0
        li      a4, 0
        li      a3, 10000000            /* at most this many rounds */
        csrsi   mstatus, MSTATUS_MIE
7:      addi    a1, a1, 1
        add     a4, a4, a1
        bgeu    a1, a3, 8f
        beqz    TRAPCNT, 7b
8:      csrci   mstatus, MSTATUS_MIE
        csrw    mie, x0
        CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_IRQ_MTIMER)
        addi    a2, a1, 1               /* a4 = a1 (a1 + 1) / 2, mod 2^32 */
        mul     a5, a2, a1
        mulhu   a3, a2, a1
        srli    a5, a5, 1
        slli    a3, a3, 31
        or      a5, a5, a3
        CHECK_EQ(a4, a5)
        li      t0, 2                   /* and it went round a few times */
        bgeu    a1, t0, 9f
        j       fail
9:

        j       pass

        /* the handler of this test: record the trap (as trap_vector);
         * a timer interrupt disarms the timer and waits for MTIP to drop;
         * anything else fails */
        .align  2
timer_vector:
        csrr    TCAUSE, mcause
        csrr    TEPC, mepc
        csrr    TTVAL, mtval
        csrr    TSTATUS, mstatus
        addi    TRAPCNT, TRAPCNT, 1
        li      t0, CAUSE_IRQ_MTIMER
        beq     TCAUSE, t0, 1f
        mv      a1, TCAUSE
        mv      a2, TEPC
        mv      a3, TTVAL
        li      t0, 0x10000
        or      TESTNUM, TESTNUM, t0
        j       fail
1:      DISARM_TIMER
        WAIT_MTIP(0)
        beqz    RESUME, 2f
        csrw    mepc, RESUME
        li      RESUME, 0
2:      mret

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
