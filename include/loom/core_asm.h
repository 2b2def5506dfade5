/* core_asm.h - include/loom/core.def for assembler sources (.S): the
 * control core's regions and peripheral registers as absolute symbols,
 * LOOM_CORE_<REGION>_BASE / _SIZE and LOOM_CORE_REG_<NAME>, so that test
 * programs and start-up code name addresses instead of repeating them. */
#ifndef LOOM_CORE_ASM_H
#define LOOM_CORE_ASM_H
#define LOOM_CORE_REGION(n, base, size, doc) .equ LOOM_CORE_##n##_BASE, base; .equ LOOM_CORE_##n##_SIZE, size;
#define LOOM_CORE_REG(n, off, acc, doc) .equ LOOM_CORE_REG_##n, off;
#include "loom/core.def"
#undef LOOM_CORE_REGION
#undef LOOM_CORE_REG
#endif
