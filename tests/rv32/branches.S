/* branches.S - beq bne blt bge bltu bgeu: taken (forward and backward) and
 * not taken for equal, signed and unsigned corner operands (INT32_MIN,
 * INT32_MAX, -1, -2), operands produced 0, 1 or 2 instructions before the
 * branch, x0 as an operand, a branch to the next instruction, no register
 * written, offsets -0x1000, +0xffc, +-0x800 and -4, and a counted loop. */
#include "test.h"

RVTEST_CODE_BEGIN

        /* ---------------- beq */
        TEST_BR2_OP_TAKEN(1, beq, 0x00000000, 0x00000000)
        TEST_BR2_OP_TAKEN(2, beq, 0x00000001, 0x00000001)
        TEST_BR2_OP_TAKEN(3, beq, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_TAKEN(4, beq, 0x80000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(5, beq, 0x00000000, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(6, beq, 0x00000001, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(7, beq, 0xffffffff, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(8, beq, 0x00000001, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(9, beq, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(10, beq, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_NOTTAKEN(11, beq, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_NOTTAKEN(12, beq, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(13, beq, 0x00000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(14, beq, 0x80000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(15, beq, 0xffffffff, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(16, beq, 0x00000000, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(17, beq, 0x12345678, 0x12345679)
        TEST_BR2_OP_NOTTAKEN(18, beq, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(19, 0, 0, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS(20, 0, 1, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS(21, 0, 2, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS(22, 1, 0, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS(23, 1, 1, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS(24, 2, 0, beq, 0x0000000f, 0x0000000e)
        TEST_BR2_SRC12_BYPASS_TAKEN(25, 0, 0, beq, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(26, 0, 1, beq, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(27, 1, 0, beq, 0xfffffff0, 0xfffffff0)

        /* ---------------- bne */
        TEST_BR2_OP_NOTTAKEN(28, bne, 0x00000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(29, bne, 0x00000001, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(30, bne, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(31, bne, 0x80000000, 0x80000000)
        TEST_BR2_OP_TAKEN(32, bne, 0x00000000, 0x00000001)
        TEST_BR2_OP_TAKEN(33, bne, 0x00000001, 0x00000000)
        TEST_BR2_OP_TAKEN(34, bne, 0xffffffff, 0x00000001)
        TEST_BR2_OP_TAKEN(35, bne, 0x00000001, 0xffffffff)
        TEST_BR2_OP_TAKEN(36, bne, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_TAKEN(37, bne, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_TAKEN(38, bne, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_TAKEN(39, bne, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_TAKEN(40, bne, 0x00000000, 0x80000000)
        TEST_BR2_OP_TAKEN(41, bne, 0x80000000, 0x00000000)
        TEST_BR2_OP_TAKEN(42, bne, 0xffffffff, 0x00000000)
        TEST_BR2_OP_TAKEN(43, bne, 0x00000000, 0xffffffff)
        TEST_BR2_OP_TAKEN(44, bne, 0x12345678, 0x12345679)
        TEST_BR2_OP_TAKEN(45, bne, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(46, 0, 0, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(47, 0, 1, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(48, 0, 2, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(49, 1, 0, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(50, 1, 1, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(51, 2, 0, bne, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS_TAKEN(52, 0, 0, bne, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(53, 0, 1, bne, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(54, 1, 0, bne, 0xffffffef, 0xfffffff0)

        /* ---------------- blt */
        TEST_BR2_OP_NOTTAKEN(55, blt, 0x00000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(56, blt, 0x00000001, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(57, blt, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(58, blt, 0x80000000, 0x80000000)
        TEST_BR2_OP_TAKEN(59, blt, 0x00000000, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(60, blt, 0x00000001, 0x00000000)
        TEST_BR2_OP_TAKEN(61, blt, 0xffffffff, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(62, blt, 0x00000001, 0xffffffff)
        TEST_BR2_OP_TAKEN(63, blt, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(64, blt, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_TAKEN(65, blt, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_NOTTAKEN(66, blt, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(67, blt, 0x00000000, 0x80000000)
        TEST_BR2_OP_TAKEN(68, blt, 0x80000000, 0x00000000)
        TEST_BR2_OP_TAKEN(69, blt, 0xffffffff, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(70, blt, 0x00000000, 0xffffffff)
        TEST_BR2_OP_TAKEN(71, blt, 0x12345678, 0x12345679)
        TEST_BR2_OP_TAKEN(72, blt, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(73, 0, 0, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(74, 0, 1, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(75, 0, 2, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(76, 1, 0, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(77, 1, 1, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(78, 2, 0, blt, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS_TAKEN(79, 0, 0, blt, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(80, 0, 1, blt, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(81, 1, 0, blt, 0xffffffef, 0xfffffff0)

        /* ---------------- bge */
        TEST_BR2_OP_TAKEN(82, bge, 0x00000000, 0x00000000)
        TEST_BR2_OP_TAKEN(83, bge, 0x00000001, 0x00000001)
        TEST_BR2_OP_TAKEN(84, bge, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_TAKEN(85, bge, 0x80000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(86, bge, 0x00000000, 0x00000001)
        TEST_BR2_OP_TAKEN(87, bge, 0x00000001, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(88, bge, 0xffffffff, 0x00000001)
        TEST_BR2_OP_TAKEN(89, bge, 0x00000001, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(90, bge, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_TAKEN(91, bge, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_NOTTAKEN(92, bge, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_TAKEN(93, bge, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_TAKEN(94, bge, 0x00000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(95, bge, 0x80000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(96, bge, 0xffffffff, 0x00000000)
        TEST_BR2_OP_TAKEN(97, bge, 0x00000000, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(98, bge, 0x12345678, 0x12345679)
        TEST_BR2_OP_NOTTAKEN(99, bge, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(100, 0, 0, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(101, 0, 1, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(102, 0, 2, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(103, 1, 0, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(104, 1, 1, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(105, 2, 0, bge, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS_TAKEN(106, 0, 0, bge, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(107, 0, 1, bge, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(108, 1, 0, bge, 0xfffffff0, 0xfffffff0)

        /* ---------------- bltu */
        TEST_BR2_OP_NOTTAKEN(109, bltu, 0x00000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(110, bltu, 0x00000001, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(111, bltu, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(112, bltu, 0x80000000, 0x80000000)
        TEST_BR2_OP_TAKEN(113, bltu, 0x00000000, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(114, bltu, 0x00000001, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(115, bltu, 0xffffffff, 0x00000001)
        TEST_BR2_OP_TAKEN(116, bltu, 0x00000001, 0xffffffff)
        TEST_BR2_OP_TAKEN(117, bltu, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(118, bltu, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_NOTTAKEN(119, bltu, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_TAKEN(120, bltu, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_TAKEN(121, bltu, 0x00000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(122, bltu, 0x80000000, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(123, bltu, 0xffffffff, 0x00000000)
        TEST_BR2_OP_TAKEN(124, bltu, 0x00000000, 0xffffffff)
        TEST_BR2_OP_TAKEN(125, bltu, 0x12345678, 0x12345679)
        TEST_BR2_OP_NOTTAKEN(126, bltu, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(127, 0, 0, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(128, 0, 1, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(129, 0, 2, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(130, 1, 0, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(131, 1, 1, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(132, 2, 0, bltu, 0x0000000f, 0x0000000f)
        TEST_BR2_SRC12_BYPASS_TAKEN(133, 0, 0, bltu, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(134, 0, 1, bltu, 0xffffffef, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(135, 1, 0, bltu, 0xffffffef, 0xfffffff0)

        /* ---------------- bgeu */
        TEST_BR2_OP_TAKEN(136, bgeu, 0x00000000, 0x00000000)
        TEST_BR2_OP_TAKEN(137, bgeu, 0x00000001, 0x00000001)
        TEST_BR2_OP_TAKEN(138, bgeu, 0xffffffff, 0xffffffff)
        TEST_BR2_OP_TAKEN(139, bgeu, 0x80000000, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(140, bgeu, 0x00000000, 0x00000001)
        TEST_BR2_OP_TAKEN(141, bgeu, 0x00000001, 0x00000000)
        TEST_BR2_OP_TAKEN(142, bgeu, 0xffffffff, 0x00000001)
        TEST_BR2_OP_NOTTAKEN(143, bgeu, 0x00000001, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(144, bgeu, 0xfffffffe, 0xffffffff)
        TEST_BR2_OP_TAKEN(145, bgeu, 0xffffffff, 0xfffffffe)
        TEST_BR2_OP_TAKEN(146, bgeu, 0x80000000, 0x7fffffff)
        TEST_BR2_OP_NOTTAKEN(147, bgeu, 0x7fffffff, 0x80000000)
        TEST_BR2_OP_NOTTAKEN(148, bgeu, 0x00000000, 0x80000000)
        TEST_BR2_OP_TAKEN(149, bgeu, 0x80000000, 0x00000000)
        TEST_BR2_OP_TAKEN(150, bgeu, 0xffffffff, 0x00000000)
        TEST_BR2_OP_NOTTAKEN(151, bgeu, 0x00000000, 0xffffffff)
        TEST_BR2_OP_NOTTAKEN(152, bgeu, 0x12345678, 0x12345679)
        TEST_BR2_OP_TAKEN(153, bgeu, 0x80000001, 0x00000001)
        TEST_BR2_SRC12_BYPASS(154, 0, 0, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(155, 0, 1, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(156, 0, 2, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(157, 1, 0, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(158, 1, 1, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS(159, 2, 0, bgeu, 0x0000000e, 0x0000000f)
        TEST_BR2_SRC12_BYPASS_TAKEN(160, 0, 0, bgeu, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(161, 0, 1, bgeu, 0xfffffff0, 0xfffffff0)
        TEST_BR2_SRC12_BYPASS_TAKEN(162, 1, 0, bgeu, 0xfffffff0, 0xfffffff0)

        /* ---------------- x0 as an operand */
test_163:
        li      TESTNUM, 163
        beq     x0, x0, 9f
        j       fail
9:
test_164:
        li      TESTNUM, 164
        li      x0, 1                   /* x0 stays 0 */
        bne     x0, x0, 8f
        j       9f
8:      j       fail
9:
test_165:
        li      TESTNUM, 165
        li      a1, -1
        blt     a1, x0, 9f
        j       fail
9:
test_166:
        li      TESTNUM, 166
        li      a1, -1
        bge     x0, a1, 9f
        j       fail
9:
test_167:
        li      TESTNUM, 167
        li      a2, 1
        bltu    x0, a2, 9f
        j       fail
9:
test_168:
        li      TESTNUM, 168
        li      a2, 1
        bgeu    x0, a2, 8f
        j       9f
8:      j       fail
9:
test_169:
        li      TESTNUM, 169
        li      a1, -1
        bgeu    a1, x0, 9f
        j       fail
9:
test_170:
        li      TESTNUM, 170
        li      a1, -1
        bltu    a1, x0, 8f
        j       9f
8:      j       fail
9:

        /* ---------------- taken and not taken to the next instruction */
test_171:
        li      TESTNUM, 171
        li      a4, 0
        beq     x0, x0, 9f
9:      addi    a4, a4, 1
        addi    a4, a4, 1
        CHECK_VAL(a4, 2)
test_172:
        li      TESTNUM, 172
        li      a4, 0
        bne     x0, x0, 9f
9:      addi    a4, a4, 1
        addi    a4, a4, 1
        CHECK_VAL(a4, 2)

        /* ---------------- a branch writes no register: with offset 8 the
         * bits 11:7 of the instruction read 01000 (x8) */
test_173:
        li      TESTNUM, 173
        li      s0, 0x5a5
        beq     x0, x0, 9f
        j       fail
9:      bne     x0, x0, 8f
        j       7f
8:      j       fail
7:      CHECK_VAL(s0, 0x5a5)

        /* ---------------- offsets at the ends of the 13-bit range */
test_174:                               /* +0xffc: imm[11:2] all ones */
        li      TESTNUM, 174
        li      a1, 1
        /* bne x0, a1, .+0xffc, encoded by hand: the assembler expands a
         * bne this far into beq + j */
        .word   0x7eb01ee3
        .skip   0xff8                   /* zeros: illegal if executed */
9:
test_175:                               /* -0x1000: only imm[12] */
        li      TESTNUM, 175
        j       8f
7:      j       9f
        .skip   0xffc
8:      beq     x0, x0, 7b
        j       fail
9:
test_176:                               /* +0x800: only imm[11] */
        li      TESTNUM, 176
        li      a1, -1
        blt     a1, x0, 9f
        .skip   0x7fc
9:
test_177:                               /* -4 */
        li      TESTNUM, 177
        j       8f
7:      j       9f
8:      bgeu    x0, x0, 7b
        j       fail
9:
test_178:                               /* -0x800 */
        li      TESTNUM, 178
        li      a2, 1
        j       8f
7:      j       9f
        .skip   0x7fc
8:      bltu    x0, a2, 7b
        j       fail
9:

        /* ---------------- a counted loop: 10 backward taken, 1 not */
test_179:
        li      TESTNUM, 179
        li      a1, 10
        li      a4, 0
9:      add     a4, a4, a1
        addi    a1, a1, -1
        bnez    a1, 9b
        CHECK_VAL(a4, 55)

RVTEST_CODE_END

RVTEST_DATA_BEGIN
RVTEST_DATA_END
