/* hwio.h - register and DRAM access of libloom (driver/hwio.c): the layer
 * right above the hardware-access interface (include/loom/hw.h) and below
 * every subsystem (bo.c, boot.c, job.c) and the device that owns them
 * (dev.c), where Linux's drivers/accel/ivpu has ivpu_hw. Named hwio, not
 * hw, because loom_hw is already the backend interface it wraps.
 *
 * struct loom_hwio is the part of an open device every subsystem needs:
 * the backend, and the message of the last failed call (loom_errmsg reads
 * it). Each subsystem keeps a pointer to its device's one, so none of them
 * needs to know struct loom_dev. Internal to driver/. */
#ifndef LOOM_DRIVER_HWIO_H
#define LOOM_DRIVER_HWIO_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hw.h"
#include "loom/loom.h"

struct loom_hwio {
	loom_hw *hw;
	char err[512]; /* message of the last failed call */
};

/* Record a message for loom_errmsg() and return code. */
int loom_hwio_fail(struct loom_hwio *io, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Device DRAM through the backend: 0, or LOOM_EHW with the backend's
 * message. */
int loom_hwio_dram_read(struct loom_hwio *io, uint64_t addr, void *buf, size_t len);
int loom_hwio_dram_write(struct loom_hwio *io, uint64_t addr, const void *buf, size_t len);

/* Run the device for at most max cycles or until its interrupt line is
 * high. *idle counts runs in a row that advanced no cycle (a line that
 * stays high). LOOM_OK, or LOOM_EHW with "what: <the backend's message>". */
int loom_hwio_run(struct loom_hwio *io, uint64_t max, int *idle, const char *what);

/* Registers (LOOM_REG_*, include/loom/regs.h), the cycle counter and the
 * configuration of the device. */
static inline uint32_t loom_hwio_rd32(struct loom_hwio *io, uint32_t reg) { return loom_hw_mmio_read(io->hw, reg); }
static inline void loom_hwio_wr32(struct loom_hwio *io, uint32_t reg, uint32_t val)
{
	loom_hw_mmio_write(io->hw, reg, val);
}
static inline uint64_t loom_hwio_cycles(struct loom_hwio *io) { return loom_hw_cycles(io->hw); }
static inline const loom_hwcfg *loom_hwio_cfg(const struct loom_hwio *io) { return &io->hw->cfg; }

#endif
