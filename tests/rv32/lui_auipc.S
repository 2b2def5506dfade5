/* lui_auipc.S - lui and auipc: immediates 0, 0x7ffff, 0x80000, 0xfffff
 * and a mixed pattern, the low 12 bits cleared, x0 as the destination,
 * back-to-back use (lui + addi, auipc + addi), and auipc's pc checked both
 * against a jal link and against the absolute (lui/addi) address. */
#include "test.h"

/* auipc's result minus its own pc (taken from a jal link) */
#define TEST_AUIPC(n, imm)                                              \
test_##n:                                                               \
        li      TESTNUM, n;                                             \
        jal     a5, 9940f;                                              \
9940:   auipc   a4, imm;                                                \
        sub     a4, a4, a5;                                             \
        CHECK_VAL(a4, ((imm) << 12) & 0xffffffff)

RVTEST_CODE_BEGIN

        /* ---------------- lui */
        TEST_CASE(1, a4, 0x00000000, lui a4, 0)
        TEST_CASE(2, a4, 0x00001000, lui a4, 1)
        TEST_CASE(3, a4, 0x7ffff000, lui a4, 0x7ffff)
        TEST_CASE(4, a4, 0x80000000, lui a4, 0x80000)
        TEST_CASE(5, a4, 0xfffff000, lui a4, 0xfffff)
        TEST_CASE(6, a4, 0xa5a5a000, lui a4, 0xa5a5a)
        /* the low 12 bits are cleared, not kept */
        TEST_CASE(7, a4, 0x12345000, li a4, -1; lui a4, 0x12345)
        /* back to back: lui + addi with a negative immediate */
        TEST_CASE(8, a4, 0x12344fff, lui a4, 0x12345; addi a4, a4, -1)
        TEST_CASE(9, a4, 0x7ffff800, lui a4, 0x80000; addi a4, a4, -2048)
        /* the sign bit comes from imm[19] */
        TEST_CASE(10, a4, 0xffffffff, lui a4, 0x80000; srai a4, a4, 31)
        TEST_CASE(11, a4, 0x00000000, lui a4, 0x7ffff; srai a4, a4, 31)
        /* x0 as the destination */
        TEST_CASE(12, a5, 0x00000000, lui x0, 0xfffff; mv a5, x0)
        /* into the register that is its consumer's other source */
        TEST_CASE(13, a4, 0x00002001, li a1, 1; lui a4, 2; add a4, a4, a1)

        /* ---------------- auipc: result - pc = imm << 12 */
        TEST_AUIPC(14, 0)
        TEST_AUIPC(15, 1)
        TEST_AUIPC(16, 0x12345)
        TEST_AUIPC(17, 0x7ffff)
        TEST_AUIPC(18, 0x80000)
        TEST_AUIPC(19, 0xfffff)

test_20:                                /* auipc 0 = its own absolute address */
        li      TESTNUM, 20
auipc_20:
        auipc   a4, 0
        lui     a5, %hi(auipc_20)
        addi    a5, a5, %lo(auipc_20)
        CHECK_EQ(a4, a5)

test_21:                                /* auipc + addi (la) = absolute address */
        li      TESTNUM, 21
9:      auipc   a4, %pcrel_hi(auipc_target)
        addi    a4, a4, %pcrel_lo(9b)
        lui     a5, %hi(auipc_target)
        addi    a5, a5, %lo(auipc_target)
        CHECK_EQ(a4, a5)

test_22:                                /* auipc + lw (the data is in DTCM) */
        li      TESTNUM, 22
9:      auipc   a1, %pcrel_hi(auipc_target)
        lw      a4, %pcrel_lo(9b)(a1)
        CHECK_VAL(a4, 0x0a1b2c3d)

test_23:                                /* x0 as the destination */
        li      TESTNUM, 23
        auipc   x0, 0x12345
        mv      a5, x0
        CHECK_VAL(a5, 0)

test_24:                                /* two in a row: 4 apart */
        li      TESTNUM, 24
        auipc   a1, 0
        auipc   a2, 0
        sub     a4, a2, a1
        CHECK_VAL(a4, 4)

RVTEST_CODE_END

RVTEST_DATA_BEGIN
auipc_target:
        .word   0x0a1b2c3d
RVTEST_DATA_END
