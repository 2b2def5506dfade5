/* stores.S - sb sh sw: each byte and halfword lane with the other lanes
 * kept, only the low bits of the value stored, positive and negative
 * offsets and the 12-bit ends -2048 and 2047, a value and an address
 * produced 0, 1 or 2 instructions before, a load right after the store
 * (same and other address), x0 as the value, no register written, a loaded
 * value stored at once, stores into ITCM, the first and last words of both
 * TCMs, and x0 as the base (ITCM starts at 0). */
#include "test.h"

RVTEST_CODE_BEGIN

        /* ---------------- sb: each byte lane, the other lanes kept */
        TEST_ST_WORD(1, sb, 0xaaaaaa11, 0, sdat, 0, 0xdeadbe11)
        TEST_ST_WORD(2, sb, 0xaaaaaa22, 1, sdat, 0, 0xdead2211)
        TEST_ST_WORD(3, sb, 0xaaaaaa33, 2, sdat, 0, 0xde332211)
        TEST_ST_WORD(4, sb, 0xaaaaaa44, 3, sdat, 0, 0x44332211)
        TEST_ST_OP(5, lbu, sb, 0x00000080, 0x00000080, 4, sdat)
        TEST_ST_OP(6, lb, sb, 0xffffff80, 0x12345680, 4, sdat)
        TEST_ST_OP(7, lbu, sb, 0x00000081, 0x00000081, 5, sdat)
        TEST_ST_OP(8, lb, sb, 0x0000007e, 0xffffff7e, 5, sdat)
        TEST_ST_OP(9, lbu, sb, 0x00000082, 0x00000082, 6, sdat)
        TEST_ST_OP(10, lb, sb, 0xffffff82, 0x12345682, 6, sdat)
        TEST_ST_OP(11, lbu, sb, 0x00000083, 0x00000083, 7, sdat)
        TEST_ST_OP(12, lb, sb, 0x0000007c, 0xffffff7c, 7, sdat)
        /* negative offsets, offsets -2048 and 2047 */
        TEST_ST_WORD(13, sb, 0x0000005a, -8, sdat + 16, -8, 0xdeadbe5a)
        TEST_ST_WORD(14, sb, 0x0000005b, -7, sdat + 16, -8, 0xdead5b5a)
        TEST_ST_WORD(15, sb, 0x0000005c, -6, sdat + 16, -8, 0xde5c5b5a)
        TEST_ST_WORD(16, sb, 0x0000005d, -5, sdat + 16, -8, 0x5d5c5b5a)
        TEST_ST_OP(17, lbu, sb, 0x000000e1, 0x000000e1, -2048, sdat + 2061)
        TEST_ST_OP(18, lb, sb, 0xffffffe2, 0x000000e2, 2047, sdat - 2033)

        /* ---------------- sh: both halves, the other half kept */
        TEST_ST_WORD(19, sh, 0x12345678, 16, sdat, 16, 0xdead5678)
        TEST_ST_WORD(20, sh, 0xfedc9876, 18, sdat, 16, 0x98765678)
        TEST_ST_OP(21, lhu, sh, 0x00008001, 0x00008001, 20, sdat)
        TEST_ST_OP(22, lh, sh, 0xffff8002, 0xffff8002, 22, sdat)
        TEST_ST_OP(23, lh, sh, 0x00007ff3, 0x00017ff3, 20, sdat)
        TEST_ST_WORD(24, sh, 0x0000aaaa, -6, sdat + 32, -8, 0xaaaabeef)
        TEST_ST_WORD(25, sh, 0x00005555, -8, sdat + 32, -8, 0xaaaa5555)
        TEST_ST_OP(26, lhu, sh, 0x0000beef, 0x0000beef, -2048, sdat + 2078)
        TEST_ST_OP(27, lh, sh, 0xffffcafe, 0x0000cafe, 2047, sdat - 2019)

        /* ---------------- sw */
        TEST_ST_OP(28, lw, sw, 0x00aa00aa, 0x00aa00aa, 32, sdat)
        TEST_ST_OP(29, lw, sw, 0xaa00aa00, 0xaa00aa00, 36, sdat)
        TEST_ST_OP(30, lw, sw, 0x80000000, 0x80000000, 40, sdat)
        TEST_ST_OP(31, lw, sw, 0x7fffffff, 0x7fffffff, 44, sdat)
        TEST_ST_OP(32, lw, sw, 0xffffffff, 0xffffffff, -16, sdat + 64)
        TEST_ST_OP(33, lw, sw, 0x01234567, 0x01234567, -12, sdat + 64)
        TEST_ST_OP(34, lw, sw, 0x89abcdef, 0x89abcdef, -2048, sdat + 2104)
        TEST_ST_OP(35, lw, sw, 0x76543210, 0x76543210, 2047, sdat - 1987)
        /* a word read back by byte and halfword (little endian) */
        TEST_ST_OP(36, lw, sw, 0x8091a2b3, 0x8091a2b3, 64, sdat)
        TEST_LD_OP(37, lbu, 0x000000b3, 64, sdat)
        TEST_LD_OP(38, lbu, 0x000000a2, 65, sdat)
        TEST_LD_OP(39, lbu, 0x00000091, 66, sdat)
        TEST_LD_OP(40, lbu, 0x00000080, 67, sdat)
        TEST_LD_OP(41, lhu, 0x0000a2b3, 64, sdat)
        TEST_LD_OP(42, lhu, 0x00008091, 66, sdat)
        TEST_LD_OP(43, lb, 0xffffff80, 67, sdat)
        TEST_LD_OP(44, lh, 0xffff8091, 66, sdat)
        /* back-to-back: value and address produced 0, 1, 2 instructions before */
        TEST_ST_SRC12_BYPASS(45, 0, 0, lbu, sb, 0x000000f2, 0x000000f2, 68, sdat)
        TEST_ST_SRC12_BYPASS(46, 0, 1, lbu, sb, 0x000000f3, 0x000000f3, 68, sdat)
        TEST_ST_SRC12_BYPASS(47, 0, 2, lbu, sb, 0x000000f4, 0x000000f4, 68, sdat)
        TEST_ST_SRC12_BYPASS(48, 1, 0, lbu, sb, 0x000000f5, 0x000000f5, 68, sdat)
        TEST_ST_SRC12_BYPASS(49, 1, 1, lbu, sb, 0x000000f6, 0x000000f6, 68, sdat)
        TEST_ST_SRC12_BYPASS(50, 2, 0, lbu, sb, 0x000000f7, 0x000000f7, 68, sdat)
        TEST_ST_SRC21_BYPASS(51, 0, 0, lbu, sb, 0x000000f8, 0x000000f8, 68, sdat)
        TEST_ST_SRC21_BYPASS(52, 0, 1, lbu, sb, 0x000000f9, 0x000000f9, 68, sdat)
        TEST_ST_SRC21_BYPASS(53, 0, 2, lbu, sb, 0x000000fa, 0x000000fa, 68, sdat)
        TEST_ST_SRC21_BYPASS(54, 1, 0, lbu, sb, 0x000000fb, 0x000000fb, 68, sdat)
        TEST_ST_SRC21_BYPASS(55, 1, 1, lbu, sb, 0x000000fc, 0x000000fc, 68, sdat)
        TEST_ST_SRC21_BYPASS(56, 2, 0, lbu, sb, 0x000000fd, 0x000000fd, 68, sdat)
        TEST_ST_SRC12_BYPASS(57, 0, 0, lhu, sh, 0x0000f2f4, 0x0000f2f4, 70, sdat)
        TEST_ST_SRC12_BYPASS(58, 0, 1, lhu, sh, 0x0000f2f5, 0x0000f2f5, 70, sdat)
        TEST_ST_SRC12_BYPASS(59, 0, 2, lhu, sh, 0x0000f2f6, 0x0000f2f6, 70, sdat)
        TEST_ST_SRC12_BYPASS(60, 1, 0, lhu, sh, 0x0000f2f7, 0x0000f2f7, 70, sdat)
        TEST_ST_SRC12_BYPASS(61, 1, 1, lhu, sh, 0x0000f2f8, 0x0000f2f8, 70, sdat)
        TEST_ST_SRC12_BYPASS(62, 2, 0, lhu, sh, 0x0000f2f9, 0x0000f2f9, 70, sdat)
        TEST_ST_SRC21_BYPASS(63, 0, 0, lhu, sh, 0x0000f2fa, 0x0000f2fa, 70, sdat)
        TEST_ST_SRC21_BYPASS(64, 0, 1, lhu, sh, 0x0000f2fb, 0x0000f2fb, 70, sdat)
        TEST_ST_SRC21_BYPASS(65, 0, 2, lhu, sh, 0x0000f2fc, 0x0000f2fc, 70, sdat)
        TEST_ST_SRC21_BYPASS(66, 1, 0, lhu, sh, 0x0000f2fd, 0x0000f2fd, 70, sdat)
        TEST_ST_SRC21_BYPASS(67, 1, 1, lhu, sh, 0x0000f2fe, 0x0000f2fe, 70, sdat)
        TEST_ST_SRC21_BYPASS(68, 2, 0, lhu, sh, 0x0000f2ff, 0x0000f2ff, 70, sdat)
        TEST_ST_SRC12_BYPASS(69, 0, 0, lw, sw, 0xf4f5f6f8, 0xf4f5f6f8, 72, sdat)
        TEST_ST_SRC12_BYPASS(70, 0, 1, lw, sw, 0xf4f5f6f9, 0xf4f5f6f9, 72, sdat)
        TEST_ST_SRC12_BYPASS(71, 0, 2, lw, sw, 0xf4f5f6fa, 0xf4f5f6fa, 72, sdat)
        TEST_ST_SRC12_BYPASS(72, 1, 0, lw, sw, 0xf4f5f6fb, 0xf4f5f6fb, 72, sdat)
        TEST_ST_SRC12_BYPASS(73, 1, 1, lw, sw, 0xf4f5f6fc, 0xf4f5f6fc, 72, sdat)
        TEST_ST_SRC12_BYPASS(74, 2, 0, lw, sw, 0xf4f5f6fd, 0xf4f5f6fd, 72, sdat)
        TEST_ST_SRC21_BYPASS(75, 0, 0, lw, sw, 0xf4f5f6fe, 0xf4f5f6fe, 72, sdat)
        TEST_ST_SRC21_BYPASS(76, 0, 1, lw, sw, 0xf4f5f6ff, 0xf4f5f6ff, 72, sdat)
        TEST_ST_SRC21_BYPASS(77, 0, 2, lw, sw, 0xf4f5f700, 0xf4f5f700, 72, sdat)
        TEST_ST_SRC21_BYPASS(78, 1, 0, lw, sw, 0xf4f5f701, 0xf4f5f701, 72, sdat)
        TEST_ST_SRC21_BYPASS(79, 1, 1, lw, sw, 0xf4f5f702, 0xf4f5f702, 72, sdat)
        TEST_ST_SRC21_BYPASS(80, 2, 0, lw, sw, 0xf4f5f703, 0xf4f5f703, 72, sdat)

        /* ---------------- x0 as the value */
test_81:
        li      TESTNUM, 81
        la      a1, sdat + 76
        li      a2, -1
        sw      a2, 0(a1)
        sw      x0, 0(a1)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0)
test_82:
        li      TESTNUM, 82
        la      a1, sdat + 76
        li      a2, -1
        sw      a2, 0(a1)
        sb      x0, 1(a1)
        sh      x0, 2(a1)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x000000ff)

        /* ---------------- a store writes no register: with offset 8 the
         * bits 11:7 of the instruction read 01000 (x8) */
test_83:
        li      TESTNUM, 83
        li      s0, 0x5a5
        la      a1, sdat + 72
        li      a2, 0x31415926
        sw      a2, 8(a1)
        CHECK_VAL(s0, 0x5a5)
        lw      a4, 8(a1)
        CHECK_VAL(a4, 0x31415926)

        /* ---------------- loaded value stored at once (a copy) */
test_84:
        li      TESTNUM, 84
        la      a1, sdat
        lw      a2, 64(a1)
        sw      a2, 84(a1)
        lw      a4, 84(a1)
        CHECK_VAL(a4, 0x8091a2b3)

        /* ---------------- a load right after a store elsewhere */
test_85:
        li      TESTNUM, 85
        la      a1, sdat
        li      a2, 0x0badcafe
        sw      a2, 84(a1)
        lw      a4, 88(a1)
        CHECK_VAL(a4, 0xdeadbeef)

        /* ---------------- two byte stores into one word, back to back */
test_86:
        li      TESTNUM, 86
        la      a1, sdat
        li      a2, 0x11
        li      a3, 0x22
        sb      a2, 92(a1)
        sb      a3, 93(a1)
        lw      a4, 92(a1)
        CHECK_VAL(a4, 0xdead2211)

        /* ---------------- ITCM is writable as data */
test_87:
        li      TESTNUM, 87
        la      a1, itcm_scratch
        li      a2, 0x600dc0de
        sw      a2, 0(a1)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x600dc0de)
test_88:
        li      TESTNUM, 88
        la      a1, itcm_scratch
        li      a2, 0xa5
        sb      a2, 2(a1)
        li      a2, 0x1234
        sh      a2, 0(a1)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x60a51234)

        /* ---------------- the first and last words of both TCMs */
test_89:
        li      TESTNUM, 89
        la      a1, __dtcm_start
        li      a2, 0x10000001
        sw      a2, 0(a1)
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x10000001)
test_90:
        li      TESTNUM, 90
        la      a1, __dtcm_end
        li      a2, 0x17ff7ffc
        sw      a2, -4(a1)
        lw      a4, -4(a1)
        CHECK_VAL(a4, 0x17ff7ffc)
test_91:
        li      TESTNUM, 91
        la      a1, __dtcm_end
        li      a2, 0x9e
        sb      a2, -1(a1)
        lw      a4, -4(a1)
        CHECK_VAL(a4, 0x9eff7ffc)
test_92:
        li      TESTNUM, 92
        la      a1, __itcm_end
        li      a2, 0x0000fffc
        sw      a2, -4(a1)
        lw      a4, -4(a1)
        CHECK_VAL(a4, 0x0000fffc)
test_93:
        li      TESTNUM, 93
        la      a1, __itcm_end
        li      a2, 0xabcd
        sh      a2, -2(a1)
        lw      a4, -4(a1)
        CHECK_VAL(a4, 0xabcdfffc)

#ifndef TEST_ENV_GENERIC
        /* ---------------- x0 as the base: ITCM starts at address 0 */
test_94:
        li      TESTNUM, 94
        addi    a1, x0, %lo(low_scratch)        /* it is below 0x800 */
        CHECK_ADDR(a1, low_scratch)
        li      a2, 0x0bad0b0e
        sw      a2, %lo(low_scratch)(x0)
        lw      a4, %lo(low_scratch)(x0)
        CHECK_VAL(a4, 0x0bad0b0e)
test_95:
        li      TESTNUM, 95
        li      a2, 0x77
        sb      a2, %lo(low_scratch + 1)(x0)
        la      a1, low_scratch
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x0bad770e)
#else
test_94:
        li      TESTNUM, 94
test_95:
        li      TESTNUM, 95
#endif

        j       pass
        .align  2
itcm_scratch:
        .word   0x55555555

        .pushsection .text.init, "ax", @progbits
        .align  2
low_scratch:
        .word   0
        .popsection

RVTEST_CODE_END

RVTEST_DATA_BEGIN
dtcm_first:                             /* at __dtcm_start: overwritten */
        .word   0
        .align  4
sdat:
        .fill   24, 4, 0xdeadbeef
RVTEST_DATA_END
