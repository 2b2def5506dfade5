/* core.h - C names for include/loom/core.def: the control core's memory
 * map (LOOM_CORE_<REGION>_BASE / _SIZE), its peripheral's registers
 * (LOOM_CORE_REG_<NAME>, offsets from LOOM_CORE_PERIPH_BASE) and its local
 * interrupt lines (LOOM_CORE_IRQ_<NAME>, mip bit numbers). Freestanding:
 * the firmware includes it too. (Region constants above INT_MAX make the
 * enum unsigned, which GCC accepts outside -pedantic.) */
#ifndef LOOM_CORE_H
#define LOOM_CORE_H

enum loom_core_region {
#define LOOM_CORE_REGION(n, base, size, doc) LOOM_CORE_##n##_BASE = base, LOOM_CORE_##n##_SIZE = size,
#include "loom/core.def"
#undef LOOM_CORE_REGION
};

enum loom_core_reg {
#define LOOM_CORE_REG(n, off, acc, doc) LOOM_CORE_REG_##n = off,
#include "loom/core.def"
#undef LOOM_CORE_REG
};

enum loom_core_irq {
#define LOOM_CORE_IRQ(n, bit, doc) LOOM_CORE_IRQ_##n = bit,
#include "loom/core.def"
#undef LOOM_CORE_IRQ
};

#endif
