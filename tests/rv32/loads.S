/* loads.S - lb lbu lh lhu lw: every byte, halfword and word of a table
 * of corner patterns (sign extension of 0x80, 0xff, 0x8000, 0xffff; zero
 * extension for lbu and lhu), positive and negative offsets and the 12-bit
 * ends -2048 and 2047, the base register as the destination, x0 as the
 * destination, the loaded value used 0, 1 or 2 instructions later, a base
 * produced 0, 1 or 2 instructions before (also by a load), loads of code
 * from ITCM, and x0 as the base (ITCM starts at 0). */
#include "test.h"

RVTEST_CODE_BEGIN

        /* ---------------- lb */
        TEST_LD_OP(1, lb, 0xffffffff, 0, tdat)
        TEST_LD_OP(2, lb, 0x00000000, 1, tdat)
        TEST_LD_OP(3, lb, 0xffffffff, 2, tdat)
        TEST_LD_OP(4, lb, 0x00000000, 3, tdat)
        TEST_LD_OP(5, lb, 0x00000000, 4, tdat)
        TEST_LD_OP(6, lb, 0xffffffff, 5, tdat)
        TEST_LD_OP(7, lb, 0x00000000, 6, tdat)
        TEST_LD_OP(8, lb, 0xffffffff, 7, tdat)
        TEST_LD_OP(9, lb, 0xfffffff0, 8, tdat)
        TEST_LD_OP(10, lb, 0x0000000f, 9, tdat)
        TEST_LD_OP(11, lb, 0xfffffff0, 10, tdat)
        TEST_LD_OP(12, lb, 0x0000000f, 11, tdat)
        TEST_LD_OP(13, lb, 0x0000000f, 12, tdat)
        TEST_LD_OP(14, lb, 0xfffffff0, 13, tdat)
        TEST_LD_OP(15, lb, 0x0000000f, 14, tdat)
        TEST_LD_OP(16, lb, 0xfffffff0, 15, tdat)
        TEST_LD_OP(17, lb, 0x00000000, -16, tdat + 32)
        TEST_LD_OP(18, lb, 0x00000000, -15, tdat + 32)
        TEST_LD_OP(19, lb, 0x00000000, -14, tdat + 32)
        TEST_LD_OP(20, lb, 0xffffff80, -13, tdat + 32)
        TEST_LD_OP(21, lb, 0xffffffff, -12, tdat + 32)
        TEST_LD_OP(22, lb, 0xffffffff, -11, tdat + 32)
        TEST_LD_OP(23, lb, 0xffffffff, -10, tdat + 32)
        TEST_LD_OP(24, lb, 0x0000007f, -9, tdat + 32)
        TEST_LD_OP(25, lb, 0x00000078, -8, tdat + 32)
        TEST_LD_OP(26, lb, 0x00000056, -7, tdat + 32)
        TEST_LD_OP(27, lb, 0x00000034, -6, tdat + 32)
        TEST_LD_OP(28, lb, 0x00000012, -5, tdat + 32)
        TEST_LD_OP(29, lb, 0xffffffef, -4, tdat + 32)
        TEST_LD_OP(30, lb, 0xffffffcd, -3, tdat + 32)
        TEST_LD_OP(31, lb, 0xffffffab, -2, tdat + 32)
        TEST_LD_OP(32, lb, 0xffffff89, -1, tdat + 32)
        /* offsets -2048 and 2047 */
        TEST_LD_OP(33, lb, 0xfffffff0, -2048, tdat + 2061)
        TEST_LD_OP(34, lb, 0x0000007f, 2047, tdat - 2024)
        /* the base register is the destination; x0 as the destination */
        TEST_LD_SRC1_EQ_DEST(35, lb, 0xffffff89, 31, tdat)
        TEST_LD_ZERODEST(36, lb, 31, tdat)
        /* back-to-back: the loaded value used 0, 1, 2 instructions later,
         * by an ALU op at once, and the base produced 0, 1, 2 before */
        TEST_LD_DEST_BYPASS(37, 0, lb, 0xfffffff0, 15, tdat)
        TEST_LD_DEST_BYPASS(38, 1, lb, 0xfffffff0, 15, tdat)
        TEST_LD_DEST_BYPASS(39, 2, lb, 0xfffffff0, 15, tdat)
        TEST_LD_USE_ALU(40, lb, 0x000000f0, 15, tdat, 0x100)
        TEST_LD_SRC1_BYPASS(41, 0, lb, 0xfffffff0, -1, tdat + 16)
        TEST_LD_SRC1_BYPASS(42, 1, lb, 0xfffffff0, -1, tdat + 16)
        TEST_LD_SRC1_BYPASS(43, 2, lb, 0xfffffff0, -1, tdat + 16)

        /* ---------------- lbu */
        TEST_LD_OP(44, lbu, 0x000000ff, 0, tdat)
        TEST_LD_OP(45, lbu, 0x00000000, 1, tdat)
        TEST_LD_OP(46, lbu, 0x000000ff, 2, tdat)
        TEST_LD_OP(47, lbu, 0x00000000, 3, tdat)
        TEST_LD_OP(48, lbu, 0x00000000, 4, tdat)
        TEST_LD_OP(49, lbu, 0x000000ff, 5, tdat)
        TEST_LD_OP(50, lbu, 0x00000000, 6, tdat)
        TEST_LD_OP(51, lbu, 0x000000ff, 7, tdat)
        TEST_LD_OP(52, lbu, 0x000000f0, 8, tdat)
        TEST_LD_OP(53, lbu, 0x0000000f, 9, tdat)
        TEST_LD_OP(54, lbu, 0x000000f0, 10, tdat)
        TEST_LD_OP(55, lbu, 0x0000000f, 11, tdat)
        TEST_LD_OP(56, lbu, 0x0000000f, 12, tdat)
        TEST_LD_OP(57, lbu, 0x000000f0, 13, tdat)
        TEST_LD_OP(58, lbu, 0x0000000f, 14, tdat)
        TEST_LD_OP(59, lbu, 0x000000f0, 15, tdat)
        TEST_LD_OP(60, lbu, 0x00000000, -16, tdat + 32)
        TEST_LD_OP(61, lbu, 0x00000000, -15, tdat + 32)
        TEST_LD_OP(62, lbu, 0x00000000, -14, tdat + 32)
        TEST_LD_OP(63, lbu, 0x00000080, -13, tdat + 32)
        TEST_LD_OP(64, lbu, 0x000000ff, -12, tdat + 32)
        TEST_LD_OP(65, lbu, 0x000000ff, -11, tdat + 32)
        TEST_LD_OP(66, lbu, 0x000000ff, -10, tdat + 32)
        TEST_LD_OP(67, lbu, 0x0000007f, -9, tdat + 32)
        TEST_LD_OP(68, lbu, 0x00000078, -8, tdat + 32)
        TEST_LD_OP(69, lbu, 0x00000056, -7, tdat + 32)
        TEST_LD_OP(70, lbu, 0x00000034, -6, tdat + 32)
        TEST_LD_OP(71, lbu, 0x00000012, -5, tdat + 32)
        TEST_LD_OP(72, lbu, 0x000000ef, -4, tdat + 32)
        TEST_LD_OP(73, lbu, 0x000000cd, -3, tdat + 32)
        TEST_LD_OP(74, lbu, 0x000000ab, -2, tdat + 32)
        TEST_LD_OP(75, lbu, 0x00000089, -1, tdat + 32)
        /* offsets -2048 and 2047 */
        TEST_LD_OP(76, lbu, 0x000000f0, -2048, tdat + 2061)
        TEST_LD_OP(77, lbu, 0x0000007f, 2047, tdat - 2024)
        /* the base register is the destination; x0 as the destination */
        TEST_LD_SRC1_EQ_DEST(78, lbu, 0x00000089, 31, tdat)
        TEST_LD_ZERODEST(79, lbu, 31, tdat)
        /* back-to-back: the loaded value used 0, 1, 2 instructions later,
         * by an ALU op at once, and the base produced 0, 1, 2 before */
        TEST_LD_DEST_BYPASS(80, 0, lbu, 0x000000f0, 15, tdat)
        TEST_LD_DEST_BYPASS(81, 1, lbu, 0x000000f0, 15, tdat)
        TEST_LD_DEST_BYPASS(82, 2, lbu, 0x000000f0, 15, tdat)
        TEST_LD_USE_ALU(83, lbu, 0x000001f0, 15, tdat, 0x100)
        TEST_LD_SRC1_BYPASS(84, 0, lbu, 0x000000f0, -1, tdat + 16)
        TEST_LD_SRC1_BYPASS(85, 1, lbu, 0x000000f0, -1, tdat + 16)
        TEST_LD_SRC1_BYPASS(86, 2, lbu, 0x000000f0, -1, tdat + 16)

        /* ---------------- lh */
        TEST_LD_OP(87, lh, 0x000000ff, 0, tdat)
        TEST_LD_OP(88, lh, 0x000000ff, 2, tdat)
        TEST_LD_OP(89, lh, 0xffffff00, 4, tdat)
        TEST_LD_OP(90, lh, 0xffffff00, 6, tdat)
        TEST_LD_OP(91, lh, 0x00000ff0, 8, tdat)
        TEST_LD_OP(92, lh, 0x00000ff0, 10, tdat)
        TEST_LD_OP(93, lh, 0xfffff00f, 12, tdat)
        TEST_LD_OP(94, lh, 0xfffff00f, 14, tdat)
        TEST_LD_OP(95, lh, 0x00000000, -16, tdat + 32)
        TEST_LD_OP(96, lh, 0xffff8000, -14, tdat + 32)
        TEST_LD_OP(97, lh, 0xffffffff, -12, tdat + 32)
        TEST_LD_OP(98, lh, 0x00007fff, -10, tdat + 32)
        TEST_LD_OP(99, lh, 0x00005678, -8, tdat + 32)
        TEST_LD_OP(100, lh, 0x00001234, -6, tdat + 32)
        TEST_LD_OP(101, lh, 0xffffcdef, -4, tdat + 32)
        TEST_LD_OP(102, lh, 0xffff89ab, -2, tdat + 32)
        /* offsets -2048 and 2047 */
        TEST_LD_OP(103, lh, 0xfffff00f, -2048, tdat + 2060)
        TEST_LD_OP(104, lh, 0x00007fff, 2047, tdat - 2025)
        /* the base register is the destination; x0 as the destination */
        TEST_LD_SRC1_EQ_DEST(105, lh, 0xffff89ab, 30, tdat)
        TEST_LD_ZERODEST(106, lh, 30, tdat)
        /* back-to-back: the loaded value used 0, 1, 2 instructions later,
         * by an ALU op at once, and the base produced 0, 1, 2 before */
        TEST_LD_DEST_BYPASS(107, 0, lh, 0xfffff00f, 14, tdat)
        TEST_LD_DEST_BYPASS(108, 1, lh, 0xfffff00f, 14, tdat)
        TEST_LD_DEST_BYPASS(109, 2, lh, 0xfffff00f, 14, tdat)
        TEST_LD_USE_ALU(110, lh, 0xfffff10f, 14, tdat, 0x100)
        TEST_LD_SRC1_BYPASS(111, 0, lh, 0xfffff00f, -2, tdat + 16)
        TEST_LD_SRC1_BYPASS(112, 1, lh, 0xfffff00f, -2, tdat + 16)
        TEST_LD_SRC1_BYPASS(113, 2, lh, 0xfffff00f, -2, tdat + 16)

        /* ---------------- lhu */
        TEST_LD_OP(114, lhu, 0x000000ff, 0, tdat)
        TEST_LD_OP(115, lhu, 0x000000ff, 2, tdat)
        TEST_LD_OP(116, lhu, 0x0000ff00, 4, tdat)
        TEST_LD_OP(117, lhu, 0x0000ff00, 6, tdat)
        TEST_LD_OP(118, lhu, 0x00000ff0, 8, tdat)
        TEST_LD_OP(119, lhu, 0x00000ff0, 10, tdat)
        TEST_LD_OP(120, lhu, 0x0000f00f, 12, tdat)
        TEST_LD_OP(121, lhu, 0x0000f00f, 14, tdat)
        TEST_LD_OP(122, lhu, 0x00000000, -16, tdat + 32)
        TEST_LD_OP(123, lhu, 0x00008000, -14, tdat + 32)
        TEST_LD_OP(124, lhu, 0x0000ffff, -12, tdat + 32)
        TEST_LD_OP(125, lhu, 0x00007fff, -10, tdat + 32)
        TEST_LD_OP(126, lhu, 0x00005678, -8, tdat + 32)
        TEST_LD_OP(127, lhu, 0x00001234, -6, tdat + 32)
        TEST_LD_OP(128, lhu, 0x0000cdef, -4, tdat + 32)
        TEST_LD_OP(129, lhu, 0x000089ab, -2, tdat + 32)
        /* offsets -2048 and 2047 */
        TEST_LD_OP(130, lhu, 0x0000f00f, -2048, tdat + 2060)
        TEST_LD_OP(131, lhu, 0x00007fff, 2047, tdat - 2025)
        /* the base register is the destination; x0 as the destination */
        TEST_LD_SRC1_EQ_DEST(132, lhu, 0x000089ab, 30, tdat)
        TEST_LD_ZERODEST(133, lhu, 30, tdat)
        /* back-to-back: the loaded value used 0, 1, 2 instructions later,
         * by an ALU op at once, and the base produced 0, 1, 2 before */
        TEST_LD_DEST_BYPASS(134, 0, lhu, 0x0000f00f, 14, tdat)
        TEST_LD_DEST_BYPASS(135, 1, lhu, 0x0000f00f, 14, tdat)
        TEST_LD_DEST_BYPASS(136, 2, lhu, 0x0000f00f, 14, tdat)
        TEST_LD_USE_ALU(137, lhu, 0x0000f10f, 14, tdat, 0x100)
        TEST_LD_SRC1_BYPASS(138, 0, lhu, 0x0000f00f, -2, tdat + 16)
        TEST_LD_SRC1_BYPASS(139, 1, lhu, 0x0000f00f, -2, tdat + 16)
        TEST_LD_SRC1_BYPASS(140, 2, lhu, 0x0000f00f, -2, tdat + 16)

        /* ---------------- lw */
        TEST_LD_OP(141, lw, 0x00ff00ff, 0, tdat)
        TEST_LD_OP(142, lw, 0xff00ff00, 4, tdat)
        TEST_LD_OP(143, lw, 0x0ff00ff0, 8, tdat)
        TEST_LD_OP(144, lw, 0xf00ff00f, 12, tdat)
        TEST_LD_OP(145, lw, 0x80000000, -16, tdat + 32)
        TEST_LD_OP(146, lw, 0x7fffffff, -12, tdat + 32)
        TEST_LD_OP(147, lw, 0x12345678, -8, tdat + 32)
        TEST_LD_OP(148, lw, 0x89abcdef, -4, tdat + 32)
        /* offsets -2048 and 2047 */
        TEST_LD_OP(149, lw, 0xf00ff00f, -2048, tdat + 2060)
        TEST_LD_OP(150, lw, 0x7fffffff, 2047, tdat - 2027)
        /* the base register is the destination; x0 as the destination */
        TEST_LD_SRC1_EQ_DEST(151, lw, 0x89abcdef, 28, tdat)
        TEST_LD_ZERODEST(152, lw, 28, tdat)
        /* back-to-back: the loaded value used 0, 1, 2 instructions later,
         * by an ALU op at once, and the base produced 0, 1, 2 before */
        TEST_LD_DEST_BYPASS(153, 0, lw, 0xf00ff00f, 12, tdat)
        TEST_LD_DEST_BYPASS(154, 1, lw, 0xf00ff00f, 12, tdat)
        TEST_LD_DEST_BYPASS(155, 2, lw, 0xf00ff00f, 12, tdat)
        TEST_LD_USE_ALU(156, lw, 0xf00ff10f, 12, tdat, 0x100)
        TEST_LD_SRC1_BYPASS(157, 0, lw, 0xf00ff00f, -4, tdat + 16)
        TEST_LD_SRC1_BYPASS(158, 1, lw, 0xf00ff00f, -4, tdat + 16)
        TEST_LD_SRC1_BYPASS(159, 2, lw, 0xf00ff00f, -4, tdat + 16)

        /* ---------------- a base register loaded by the load before */
test_160:
        li      TESTNUM, 160
        la      a1, tptr
        lw      a1, 0(a1)
        lw      a4, 4(a1)
        CHECK_VAL(a4, 0x13579bdf)

        /* ---------------- loads from ITCM: code is readable as data */
test_161:                               /* an instruction word */
        li      TESTNUM, 161
        j       9f
itcm_insn:
        addi    a4, x0, 2               /* 0x00200713 */
itcm_word:
        .word   0x8badf00d
9:      la      a1, itcm_insn
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x00200713)
test_162:
        li      TESTNUM, 162
        la      a1, itcm_word
        lw      a4, 0(a1)
        CHECK_VAL(a4, 0x8badf00d)
test_163:
        li      TESTNUM, 163
        la      a1, itcm_word
        lb      a4, 3(a1)
        CHECK_VAL(a4, 0xffffff8b)
test_164:
        li      TESTNUM, 164
        la      a1, itcm_word
        lhu     a4, 0(a1)
        CHECK_VAL(a4, 0x0000f00d)
test_165:
        li      TESTNUM, 165
        la      a1, itcm_word
        lh      a4, 2(a1)
        CHECK_VAL(a4, 0xffff8bad)
test_166:
        li      TESTNUM, 166
        la      a1, itcm_word
        lbu     a4, 1(a1)
        CHECK_VAL(a4, 0x000000f0)

#ifndef TEST_ENV_GENERIC
        /* ---------------- x0 as the base: ITCM starts at address 0 */
test_167:
        li      TESTNUM, 167
        addi    a1, x0, %lo(low_word)           /* it is below 0x800 */
        CHECK_ADDR(a1, low_word)
        lw      a4, %lo(low_word)(x0)
        CHECK_VAL(a4, 0xc001d00d)
test_168:
        li      TESTNUM, 168
        lb      a4, %lo(low_word + 3)(x0)
        CHECK_VAL(a4, 0xffffffc0)
test_169:
        li      TESTNUM, 169
        lhu     a4, %lo(low_word + 2)(x0)
        CHECK_VAL(a4, 0x0000c001)
#else
test_167:
        li      TESTNUM, 167
test_168:
        li      TESTNUM, 168
test_169:
        li      TESTNUM, 169
#endif

        .pushsection .text.init, "ax", @progbits
        .align  2
low_word:
        .word   0xc001d00d
        .popsection

RVTEST_CODE_END

RVTEST_DATA_BEGIN
tdat:
        .word   0x00ff00ff, 0xff00ff00, 0x0ff00ff0, 0xf00ff00f
        .word   0x80000000, 0x7fffffff, 0x12345678, 0x89abcdef
tptr:
        .word   tptr2 - 4
tptr2:
        .word   0x13579bdf
RVTEST_DATA_END
