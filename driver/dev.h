/* dev.h - the device object of libloom (driver/dev.c): what one open device
 * holds, gathered from the subsystems (buffer objects bo.h, firmware image
 * fw_elf.h, boot and reset boot.h, rings and jobs job.h), and the helpers
 * every subsystem uses: recording an error with its message, and DRAM
 * access that turns a backend failure into LOOM_EHW. Internal to driver/. */
#ifndef LOOM_DRIVER_DEV_H
#define LOOM_DRIVER_DEV_H

#include <stdint.h>

#include "loom/loom.h"
#include "bo.h"
#include "boot.h"
#include "fw_elf.h"
#include "job.h"

struct loom_dev {
	loom_hw *hw;
	char err[512];             /* message of the last failed call */
	struct loom_mem mem;       /* DRAM allocations (bo.c) */
	loom_fw_image fw;          /* the firmware loaded last (fw_elf.c) */
	struct loom_boot boot;     /* rings, handshake reply (boot.c) */
	struct loom_jobs jobs;     /* in-flight and completed jobs (job.c) */
};

/* Record a message for loom_errmsg() and return code. */
int loom_dev_fail(loom_dev *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Device DRAM through the backend: 0, or LOOM_EHW with the backend's
 * message. */
int loom_dev_dram_read(loom_dev *d, uint64_t addr, void *buf, size_t len);
int loom_dev_dram_write(loom_dev *d, uint64_t addr, const void *buf, size_t len);
uint32_t loom_dev_rd32(loom_dev *d, uint32_t reg);
void loom_dev_wr32(loom_dev *d, uint32_t reg, uint32_t val);

#endif
