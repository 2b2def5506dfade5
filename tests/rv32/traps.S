/* traps.S - synchronous exceptions in machine mode (docs/CONTROL.md,
 * "Traps"): for each, mcause, mepc (the trapping instruction), mtval, no
 * register or memory written by the trapping instruction, and the return
 * through the handler (mepc set, mret).
 *   ecall (11) and ebreak (3), mtval 0; mstatus MIE -> MPIE -> MIE through
 *   a trap and mret; mret on its own (MIE = MPIE, MPIE = 1, pc = mepc);
 *   a new mtvec takes effect;
 *   illegal instruction (2), mtval = the instruction: all zeros, reserved
 *   and unsupported opcodes (custom-0, OP-32, AMO, FP, RV64 loads and
 *   stores), bad funct3 / funct7, a 6-bit shift amount, an unknown CSR,
 *   S-mode instructions, a 16-bit (compressed) encoding;
 *   instruction address misaligned (0) from jal, jalr and a taken branch;
 *   load / store address misaligned (4 / 6), mtval = the address;
 *   load / store access fault (5 / 7) on unmapped addresses, just past
 *   ITCM, DTCM and PERIPH, and for byte and halfword accesses to the NPU
 *   and PERIPH regions (word only);
 *   instruction access fault (1), mepc = mtval = the target: unmapped,
 *   NPU, PERIPH, DRAM, and running off the end of ITCM and of DTCM.
 * Checks that only hold on Loom are left out with TEST_ENV_GENERIC. */
#include "test.h"

/* the trap handler's record after an expected trap: one trap of this
 * cause at label epc, mtval = tval */
#define EXPECT(cause, epc, tval) TRAP_CHECK(cause, epc, tval)

/* same, mtval the address of symbol expression s */
#define EXPECT_TVAL_ADDR(cause, epc, s)                                 \
        CHECK_VAL(TRAPCNT, 1);                                          \
        CHECK_VAL(TCAUSE, cause);                                       \
        CHECK_ADDR(TEPC, epc);                                          \
        CHECK_ADDR(TTVAL, s)

/* an instruction (given as a word) that must raise an illegal-instruction
 * exception with mtval = the word; a4 must stay as it was */
#define TEST_ILLEGAL(n, insn)                                           \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a4, 0x4444;                                             \
        TRAP_ARM(9971f);                                                \
9970:   .word   insn;                                                   \
        j       fail;                                                   \
9971:   EXPECT(CAUSE_ILLEGAL_INSN, 9970b, insn);                        \
        CHECK_VAL(a4, 0x4444)

/* a load from address addr that must fault with cause; a4 kept */
#define TEST_LOAD_FAULT(n, cause, inst, addr)                           \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, addr;                                               \
        li      a4, 0x4444;                                             \
        TRAP_ARM(9973f);                                                \
9972:   inst    a4, 0(a1);                                              \
        j       fail;                                                   \
9973:   EXPECT(cause, 9972b, addr);                                     \
        CHECK_VAL(a4, 0x4444)

/* a store to address addr that must fault with cause */
#define TEST_STORE_FAULT(n, cause, inst, addr)                          \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, addr;                                               \
        li      a2, 0x5555;                                             \
        TRAP_ARM(9975f);                                                \
9974:   inst    a2, 0(a1);                                              \
        j       fail;                                                   \
9975:   EXPECT(cause, 9974b, addr)

/* a jump (jalr ra) to address addr that must raise an instruction access
 * fault there: mepc = mtval = addr; the jalr itself completed (ra) */
#define TEST_FETCH_FAULT(n, addr)                                       \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        li      a1, addr;                                               \
        TRAP_ARM(9977f);                                                \
        jalr    ra, 0(a1);                                              \
9976:   j       fail;                                                   \
9977:   CHECK_VAL(TRAPCNT, 1);                                          \
        CHECK_VAL(TCAUSE, CAUSE_FETCH_ACCESS);                          \
        CHECK_VAL(TEPC, addr);                                          \
        CHECK_VAL(TTVAL, addr);                                         \
        CHECK_ADDR(ra, 9976b)

/* a case that only runs on Loom: elsewhere it is numbered and skipped */
#ifdef TEST_ENV_GENERIC
#define LOOM_ONLY(n, code...)                                           \
test_##n:                                                               \
        li      TESTNUM, n;
#else
#define LOOM_ONLY(n, code...) code
#endif

RVTEST_CODE_BEGIN

        /* ---------------- ecall, ebreak */
test_1:                                 /* (mtval written first: the */
        li      TESTNUM, 1              /* trap must set it to 0) */
        li      t0, 0x1234
        csrw    mtval, t0
        TRAP_ARM(9f)
8:      ecall
        j       fail
9:      EXPECT(CAUSE_ECALL_M, 8b, 0)

test_2:
        li      TESTNUM, 2
        li      t0, 0x1234
        csrw    mtval, t0
        TRAP_ARM(9f)
8:      ebreak
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_BREAKPOINT)
        CHECK_ADDR(TEPC, 8b)
        CHECK_VAL(TTVAL, 0)             /* 0, not the pc */

test_3:                                 /* the handler's "mepc += 4; mret" */
        li      TESTNUM, 3
        la      t0, step_vector
        csrw    mtvec, t0
        li      a4, 0
        ecall
        addi    a4, a4, 1               /* resumed here */
        ebreak
        addi    a4, a4, 2               /* and here */
        la      t0, trap_vector
        csrw    mtvec, t0
        CHECK_VAL(a4, 0x303)            /* 0x100 + 0x200 from the handler */

test_4:                                 /* a new mtvec takes effect at once */
        li      TESTNUM, 4
        la      t0, step_vector
        csrw    mtvec, t0
        li      a4, 0
        ecall
        la      t0, trap_vector
        csrw    mtvec, t0
        CHECK_VAL(a4, 0x100)

        /* ---------------- mstatus through a trap and mret */
test_5:                                 /* MIE = 1: handler sees MIE 0, */
        li      TESTNUM, 5              /* MPIE 1; mret restores MIE = 1 */
        csrw    mie, x0
        csrw    mstatus, x0
        csrsi   mstatus, MSTATUS_MIE
        TRAP_ARM(9f)
8:      ecall
        j       fail
9:      csrr    a4, mstatus
        csrci   mstatus, MSTATUS_MIE
        EXPECT(CAUSE_ECALL_M, 8b, 0)
        andi    a5, TSTATUS, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a5, MSTATUS_MPIE)
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MIE | MSTATUS_MPIE)

test_6:                                 /* MIE = 0: MPIE 0 in the handler, */
        li      TESTNUM, 6              /* after mret MIE 0, MPIE 1 */
        csrw    mstatus, x0
        TRAP_ARM(9f)
8:      ecall
        j       fail
9:      csrr    a4, mstatus
        EXPECT(CAUSE_ECALL_M, 8b, 0)
        andi    a5, TSTATUS, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a5, 0)
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MPIE)

        LOOM_ONLY(7,                    /* MPP reads 3 in the handler too */
test_7:
        li      TESTNUM, 7;
        li      t0, MSTATUS_MPP;
        and     a5, TSTATUS, t0;
        CHECK_VAL(a5, MSTATUS_MPP))

test_8:                                 /* mret alone: MPIE 1 -> MIE 1 */
        li      TESTNUM, 8
        li      t0, MSTATUS_MPP | MSTATUS_MPIE  /* MPP: M (it reads 3 on */
        csrw    mstatus, t0                     /* Loom anyway) */
        la      t0, 9f
        csrw    mepc, t0
        mret
        j       fail
9:      csrr    a4, mstatus
        csrci   mstatus, MSTATUS_MIE
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MIE | MSTATUS_MPIE)

test_9:                                 /* mret alone: MPIE 0 -> MIE 0, MPIE 1 */
        li      TESTNUM, 9
        li      t0, MSTATUS_MPP | MSTATUS_MIE
        csrw    mstatus, t0
        la      t0, 9f
        csrw    mepc, t0
        mret
        j       fail
9:      csrr    a4, mstatus
        andi    a4, a4, MSTATUS_MIE | MSTATUS_MPIE
        CHECK_VAL(a4, MSTATUS_MPIE)
        csrw    mstatus, x0

test_10:                                /* mret goes to mepc, not mepc + 4 */
        li      TESTNUM, 10
        li      a4, 0
        li      t0, MSTATUS_MPP
        csrw    mstatus, t0
        la      t0, 9f
        csrw    mepc, t0
        mret
        j       fail
9:      addi    a4, a4, 1
        addi    a4, a4, 1
        CHECK_VAL(a4, 2)

        /* ---------------- illegal instructions: mtval = the instruction */
        TEST_ILLEGAL(11, 0x00000000)    /* all zeros */
        TEST_ILLEGAL(12, 0xffffffff)    /* all ones */
        TEST_ILLEGAL(13, 0xdeadc00b)    /* custom-0 */
        TEST_ILLEGAL(14, 0xfe000033)    /* OP, funct7 0x7f */
        TEST_ILLEGAL(15, 0x40001033)    /* OP, funct7 0x20 with sll */
        TEST_ILLEGAL(16, 0x02001013)    /* slli x0, x0, 32 (shamt[5]) */
        TEST_ILLEGAL(17, 0x02005013)    /* srli x0, x0, 32 */
        TEST_ILLEGAL(18, 0xc0005013)    /* srai, imm[11:5] 0x60 */
        TEST_ILLEGAL(19, 0x0000003b)    /* OP-32 (addw) */
        TEST_ILLEGAL(20, 0x0000001b)    /* OP-IMM-32 (addiw) */
        TEST_ILLEGAL(21, 0x00003003)    /* ld */
        TEST_ILLEGAL(22, 0x00006003)    /* lwu */
        TEST_ILLEGAL(23, 0x00007003)    /* LOAD funct3 7 */
        TEST_ILLEGAL(24, 0x00003023)    /* sd */
        TEST_ILLEGAL(25, 0x00004023)    /* STORE funct3 4 */
        TEST_ILLEGAL(26, 0x00002063)    /* BRANCH funct3 2 */
        TEST_ILLEGAL(27, 0x00003063)    /* BRANCH funct3 3 */
        TEST_ILLEGAL(28, 0x00001067)    /* jalr funct3 1 */
        TEST_ILLEGAL(29, 0x0000202f)    /* AMO (no A) */
        TEST_ILLEGAL(30, 0x00002007)    /* flw (no F) */
        TEST_ILLEGAL(31, 0x00000053)    /* OP-FP (no F) */
        TEST_ILLEGAL(32, 0x10200073)    /* sret (no S-mode) */
        TEST_ILLEGAL(33, 0x7c002773)    /* csrr a4, 0x7c0 (no such CSR) */
        TEST_ILLEGAL(34, 0x7c059073)    /* csrw 0x7c0, a1 */
        TEST_ILLEGAL(35, 0x10002773)    /* csrr a4, sstatus (no S-mode) */
        TEST_ILLEGAL(36, 0x18002773)    /* csrr a4, satp (no MMU) */
        TEST_ILLEGAL(37, 0x3a002773)    /* csrr a4, pmpcfg0 (no PMP) */
        LOOM_ONLY(38, TEST_ILLEGAL(38, 0x12000073))   /* sfence.vma */
        TEST_ILLEGAL(39, 0x00007773)    /* csrrci a4, 0x000, 0 (no such CSR) */

test_40:                                /* a 16-bit (compressed) encoding: */
        li      TESTNUM, 40             /* illegal without C */
        li      a0, 0x4444
        TRAP_ARM(9f)
8:      .half   0x4501                  /* c.li a0, 0 */
        .half   0x0001                  /* c.nop */
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_ILLEGAL_INSN)
        CHECK_ADDR(TEPC, 8b)
        CHECK_VAL(a0, 0x4444)

        /* ---------------- instruction address misaligned: reported on the
         * jump or branch (mepc), mtval = the target, rd not written */
test_41:
        li      TESTNUM, 41
        la      a1, 7f
        li      ra, 0x4444
        TRAP_ARM(9f)
8:      jalr    ra, 2(a1)
        j       fail
7:      j       fail
        j       fail
9:      EXPECT_TVAL_ADDR(CAUSE_MISALIGNED_FETCH, 8b, 7b + 2)
        CHECK_VAL(ra, 0x4444)

test_42:                                /* odd + 1: bit 0 cleared, bit 1 set */
        li      TESTNUM, 42
        la      a1, 7f + 3
        li      ra, 0x4444
        TRAP_ARM(9f)
8:      jalr    ra, 0(a1)
        j       fail
7:      j       fail
        j       fail
9:      EXPECT_TVAL_ADDR(CAUSE_MISALIGNED_FETCH, 8b, 7b + 2)
        CHECK_VAL(ra, 0x4444)

test_43:                                /* jal .+6 (encoded by hand) */
        li      TESTNUM, 43
        li      ra, 0x4444
        TRAP_ARM(9f)
8:      .word   0x006000ef              /* jal ra, .+6 */
        j       fail
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_MISALIGNED_FETCH)
        CHECK_ADDR(TEPC, 8b)
#ifndef TEST_ENV_GENERIC                /* QEMU 7.2 reports a stale pc here */
        CHECK_ADDR(TTVAL, 8b + 6)
#endif
        CHECK_VAL(ra, 0x4444)

test_44:                                /* beq x0, x0, .+10 (by hand) */
        li      TESTNUM, 44
        TRAP_ARM(9f)
8:      .word   0x00000563              /* beq x0, x0, .+10 */
        j       fail
        j       fail
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_MISALIGNED_FETCH)
        CHECK_ADDR(TEPC, 8b)
#ifndef TEST_ENV_GENERIC                /* QEMU 7.2 reports a stale pc here */
        CHECK_ADDR(TTVAL, 8b + 10)
#endif

test_45:                                /* not taken: no exception */
        li      TESTNUM, 45
        li      a4, 0
8:      .word   0x00001563              /* bne x0, x0, .+10 */
        addi    a4, a4, 1
        CHECK_VAL(a4, 1)

        /* ---------------- load / store address misaligned (Loom: no
         * misaligned access support) */
#ifndef TEST_ENV_GENERIC
        TEST_LOAD_FAULT(46, CAUSE_MISALIGNED_LOAD, lh, 0x10000001)
        TEST_LOAD_FAULT(47, CAUSE_MISALIGNED_LOAD, lhu, 0x10000003)
        TEST_LOAD_FAULT(48, CAUSE_MISALIGNED_LOAD, lw, 0x10000001)
        TEST_LOAD_FAULT(49, CAUSE_MISALIGNED_LOAD, lw, 0x10000002)
        TEST_LOAD_FAULT(50, CAUSE_MISALIGNED_LOAD, lw, 0x10000003)
        TEST_LOAD_FAULT(51, CAUSE_MISALIGNED_LOAD, lw, 0x00000102)  /* in ITCM */
        TEST_STORE_FAULT(52, CAUSE_MISALIGNED_STORE, sh, 0x10000001)
        TEST_STORE_FAULT(53, CAUSE_MISALIGNED_STORE, sw, 0x10000002)
        TEST_STORE_FAULT(54, CAUSE_MISALIGNED_STORE, sw, 0x10000001)
        TEST_STORE_FAULT(55, CAUSE_MISALIGNED_STORE, sw, 0x10000003)
test_56:                                /* the faulting stores wrote nothing */
        li      TESTNUM, 56
        li      a1, 0x10000000
        CHECK_ADDR(a1, dtcm_words)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x01234567)
        lw      a4, 4(a1)
        CHECK_VAL(a4, 0x89abcdef)
test_57:                                /* offset makes it misaligned */
        li      TESTNUM, 57
        la      a1, mis_data
        li      a4, 0x4444
        TRAP_ARM(9f)
8:      lw      a4, 6(a1)
        j       fail
9:      EXPECT_TVAL_ADDR(CAUSE_MISALIGNED_LOAD, 8b, mis_data + 6)
        CHECK_VAL(a4, 0x4444)
test_58:                                /* rd = rs1: the base is kept */
        li      TESTNUM, 58
        li      a1, 0x10000002
        TRAP_ARM(9f)
8:      lw      a1, 0(a1)
        j       fail
9:      EXPECT(CAUSE_MISALIGNED_LOAD, 8b, 0x10000002)
        CHECK_VAL(a1, 0x10000002)
#else
test_46:
        li      TESTNUM, 46
test_47:
        li      TESTNUM, 47
test_48:
        li      TESTNUM, 48
test_49:
        li      TESTNUM, 49
test_50:
        li      TESTNUM, 50
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
test_58:
        li      TESTNUM, 58
#endif

        /* ---------------- load / store access faults */
        TEST_LOAD_FAULT(59, CAUSE_LOAD_ACCESS, lw, TEST_UNMAPPED_ADDR)
        TEST_LOAD_FAULT(60, CAUSE_LOAD_ACCESS, lb, TEST_UNMAPPED_ADDR + 3)
        TEST_LOAD_FAULT(61, CAUSE_LOAD_ACCESS, lhu, TEST_UNMAPPED_ADDR + 2)
        TEST_STORE_FAULT(62, CAUSE_STORE_ACCESS, sw, TEST_UNMAPPED_ADDR)
        TEST_STORE_FAULT(63, CAUSE_STORE_ACCESS, sb, TEST_UNMAPPED_ADDR + 1)
        TEST_STORE_FAULT(64, CAUSE_STORE_ACCESS, sh, TEST_UNMAPPED_ADDR + 2)
        TEST_LOAD_FAULT(65, CAUSE_LOAD_ACCESS, lw, TEST_DTCM_END)
        TEST_STORE_FAULT(66, CAUSE_STORE_ACCESS, sw, TEST_DTCM_END)
        TEST_LOAD_FAULT(67, CAUSE_LOAD_ACCESS, lw, TEST_ITCM_END)
        TEST_STORE_FAULT(68, CAUSE_STORE_ACCESS, sw, TEST_ITCM_END)
        TEST_LOAD_FAULT(69, CAUSE_LOAD_ACCESS, lw, TEST_PERIPH_END)
        TEST_STORE_FAULT(70, CAUSE_STORE_ACCESS, sb, TEST_PERIPH_END)
test_71:                                /* a faulting load through an offset */
        li      TESTNUM, 71
        li      a1, TEST_UNMAPPED_ADDR + 0x800
        li      a4, 0x4444
        TRAP_ARM(9f)
8:      lw      a4, -0x800(a1)
        j       fail
9:      EXPECT(CAUSE_LOAD_ACCESS, 8b, TEST_UNMAPPED_ADDR)
        CHECK_VAL(a4, 0x4444)
        /* byte and halfword accesses to PERIPH and NPU (word only there):
         * MTIME_LO (read-only) and the NPU's first register */
        LOOM_ONLY(72, TEST_LOAD_FAULT(72, CAUSE_LOAD_ACCESS, lb, LOOM_CORE_PERIPH_BASE))
        LOOM_ONLY(73, TEST_LOAD_FAULT(73, CAUSE_LOAD_ACCESS, lhu, LOOM_CORE_PERIPH_BASE + 2))
        LOOM_ONLY(74, TEST_STORE_FAULT(74, CAUSE_STORE_ACCESS, sb, LOOM_CORE_PERIPH_BASE))
        LOOM_ONLY(75, TEST_STORE_FAULT(75, CAUSE_STORE_ACCESS, sh, LOOM_CORE_PERIPH_BASE))
        LOOM_ONLY(76, TEST_LOAD_FAULT(76, CAUSE_LOAD_ACCESS, lbu, LOOM_CORE_NPU_BASE))
        LOOM_ONLY(77, TEST_LOAD_FAULT(77, CAUSE_LOAD_ACCESS, lh, LOOM_CORE_NPU_BASE))
        /* between DTCM and NPU, between ITCM and DTCM */
        LOOM_ONLY(78, TEST_LOAD_FAULT(78, CAUSE_LOAD_ACCESS, lw, 0x1ffffffc))
        LOOM_ONLY(79, TEST_STORE_FAULT(79, CAUSE_STORE_ACCESS, sw, 0x0ffffffc))

        /* ---------------- instruction access faults */
        TEST_FETCH_FAULT(80, TEST_UNMAPPED_ADDR)
        TEST_FETCH_FAULT(81, TEST_DTCM_END)
        LOOM_ONLY(82, TEST_FETCH_FAULT(82, TEST_ITCM_END))
        LOOM_ONLY(83, TEST_FETCH_FAULT(83, LOOM_CORE_NPU_BASE))    /* NPU */
        LOOM_ONLY(84, TEST_FETCH_FAULT(84, LOOM_CORE_PERIPH_BASE))    /* PERIPH */
        LOOM_ONLY(85, TEST_FETCH_FAULT(85, 0x80000000))    /* DRAM */

test_86:                                /* running off the end of DTCM: a */
        li      TESTNUM, 86             /* nop in its last word, then the fault */
        la      a1, __dtcm_end
        la      a2, nop_insn
        lw      a2, 0(a2)
        sw      a2, -4(a1)
        fence.i
        TRAP_ARM(9f)
        addi    a1, a1, -4
        jalr    ra, 0(a1)
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_FETCH_ACCESS)
        CHECK_ADDR(TEPC, __dtcm_end)
        CHECK_ADDR(TTVAL, __dtcm_end)

#ifndef TEST_ENV_GENERIC
test_87:                                /* and off the end of ITCM */
        li      TESTNUM, 87
        la      a1, __itcm_end
        la      a2, nop_insn
        lw      a2, 0(a2)
        sw      a2, -4(a1)
        fence.i
        TRAP_ARM(9f)
        addi    a1, a1, -4
        jalr    ra, 0(a1)
        j       fail
9:      CHECK_VAL(TRAPCNT, 1)
        CHECK_VAL(TCAUSE, CAUSE_FETCH_ACCESS)
        CHECK_ADDR(TEPC, __itcm_end)
        CHECK_ADDR(TTVAL, __itcm_end)
#else
test_87:
        li      TESTNUM, 87
#endif

test_88:                                /* after all of that, a plain ecall */
        li      TESTNUM, 88
        TRAP_ARM(9f)
8:      ecall
        j       fail
9:      EXPECT(CAUSE_ECALL_M, 8b, 0)

test_89:                                /* ebreak right after a fault: */
        li      TESTNUM, 89             /* mtval goes back to 0 */
        li      a1, TEST_UNMAPPED_ADDR
        TRAP_ARM(9f)
        lw      a4, 0(a1)
        j       fail
9:      CHECK_VAL(TTVAL, TEST_UNMAPPED_ADDR)
        TRAP_ARM(9f)
8:      ebreak
        j       fail
9:      EXPECT(CAUSE_BREAKPOINT, 8b, 0)

        j       pass

nop_insn:
        nop

        /* a handler that steps over the trapping instruction: mepc += 4,
         * and adds 0x100 (ecall) or 0x200 (ebreak) to a4 */
        .align  2
step_vector:
        csrr    t0, mcause
        li      t1, CAUSE_ECALL_M
        beq     t0, t1, 1f
        li      t1, CAUSE_BREAKPOINT
        beq     t0, t1, 2f
        mv      a1, t0
        li      t0, 0x10000
        or      TESTNUM, TESTNUM, t0
        j       fail
1:      addi    a4, a4, 0x100
        j       3f
2:      addi    a4, a4, 0x200
3:      csrr    t0, mepc
        addi    t0, t0, 4
        csrw    mepc, t0
        mret

RVTEST_CODE_END

RVTEST_DATA_BEGIN
        /* at 0x10000000: the misaligned stores above must leave these */
dtcm_words:
        .word   0x01234567, 0x89abcdef
mis_data:
        .word   0, 0, 0, 0
RVTEST_DATA_END
