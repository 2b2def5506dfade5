/* env.h - runs the RV32IM test suite on QEMU's `virt` machine
 * (qemu-system-riscv32), an independent check of the tests' expected
 * values. Included before test.h by tests/rv32/qemu/run.sh (gcc -include).
 *
 * Memory: code at 0x80000000 (the ITCM of link.ld), data in the last
 * 32 KiB of a 4 MiB RAM (0x803f8000, so the first byte past "DTCM" is
 * unmapped, as on Loom). TOHOST becomes a line "T=xxxxxxxx" (hex) on the
 * UART (0x10000000) and an exit through the sifive_test device (0x100000).
 * The timer is the CLINT's (mtime 0x0200bff8, hart 0 mtimecmp 0x02004000).
 * Checks of Loom-specific behaviour (TEST_ENV_GENERIC) are left out.
 */
#define TEST_ENV_GENERIC 1

#define TEST_MTIME_ADDR       0x0200bff8
#define TEST_MTIMECMP_ADDR    0x02004000
/* holes in the virt machine's map */
#define TEST_UNMAPPED_ADDR    0x00200000
#define TEST_ITCM_END         0x00300000
#define TEST_DTCM_END         0x80400000
#define TEST_PERIPH_END       0x05000000

/* mtime ticks at 10 MHz in real time here, and an MMIO access is slow */
#define TEST_TIMER_SCALE      100

/* QEMU's mtimecmp resets to 0 (Loom's to all ones) */
#define TEST_ENV_INIT                                                   \
        li      t0, TEST_MTIMECMP_ADDR;                                 \
        li      t1, -1;                                                 \
        sw      t1, 4(t0);                                              \
        sw      t1, 0(t0)

#define TEST_ENV_EXIT                                                   \
        li      t0, 0x10000000;                                         \
        li      t2, 'T'; sb t2, 0(t0);                                  \
        li      t2, '='; sb t2, 0(t0);                                  \
        li      t1, 28;                                                 \
1:      srl     t2, a0, t1;                                             \
        andi    t2, t2, 15;                                             \
        addi    t2, t2, 48;                                             \
        li      t3, 58;                                                 \
        blt     t2, t3, 2f;                                             \
        addi    t2, t2, 39;                                             \
2:      sb      t2, 0(t0);                                              \
        addi    t1, t1, -4;                                             \
        bgez    t1, 1b;                                                 \
        li      t2, 10; sb t2, 0(t0);                                   \
        li      t1, 0x5555;                                             \
        li      t2, 1;                                                  \
        beq     a0, t2, 3f;                                             \
        slli    t1, a0, 16;                                             \
        li      t2, 0x3333;                                             \
        or      t1, t1, t2;                                             \
3:      li      t0, 0x100000;                                           \
        sw      t1, 0(t0);                                              \
4:      j       4b
