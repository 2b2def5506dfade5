/* boot.h - firmware loading, the boot handshake and reset of libloom
 * (driver/boot.c; docs/FIRMWARE.md "Loading and boot", "Hangs and reset"):
 * the firmware image, and the boot block and rings in one internal DRAM
 * allocation of the device's table (bo.h). A boot is three steps the
 * device (dev.c) calls in turn, the jobs in flight lost before the second
 * and the host's ring indices reset before the third (job.h); the entry
 * points of include/loom/loom.h that take a loom_dev reach here from
 * dev.c, with b NULL when the device is. Internal to driver/. */
#ifndef LOOM_DRIVER_BOOT_H
#define LOOM_DRIVER_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "fw_elf.h"
#include "loom/fw_abi.h"
#include "loom/loom.h"

struct loom_hwio;
struct loom_mem;

struct loom_boot {
	struct loom_hwio *io; /* the device's registers, DRAM and error message */
	struct loom_mem *mem; /* the device's DRAM table, for the area */
	loom_fw_image fw;     /* the firmware loaded last (fw_elf.c) */
	loom_boot_opts opts;  /* of the last loom_boot, defaults filled in */
	int have_opts;        /* loom_boot ran at least once (loom_reset may) */
	int booted;           /* the last handshake succeeded */
	loom_bo *area;        /* boot block, submission ring, completion ring */
	uint32_t entries;     /* ring entries (both rings) */
	uint64_t boot_addr, sq_addr, cq_addr;
	loom_fw_boot reply;   /* the block as the firmware left it */
	uint64_t boot_cycles;
};

void loom_boot_init(struct loom_boot *b, struct loom_hwio *io, struct loom_mem *mem);
void loom_boot_fini(struct loom_boot *b); /* frees the firmware image (the area goes with the table) */

/* Core in reset, engine aborted and drained, interrupts cleared. */
void loom_boot_hold(struct loom_boot *b);

/* loom_load_firmware_mem, loom_load_firmware: a validated image replaces
 * the last one. */
int loom_boot_fw_mem(struct loom_boot *b, const void *elf, size_t len);
int loom_boot_fw_file(struct loom_boot *b, const char *path);

/* loom_boot's options, defaults filled in and checked, kept for
 * loom_reset. */
int loom_boot_set_opts(struct loom_boot *b, const loom_boot_opts *opts);

/* The boot with the kept options: 1. a firmware is loaded (LOOM_ESTATE);
 * 2. the device held, the area placed, the TCMs and the zeroed boot block
 * and rings written; 3. the core released and its reply checked (held
 * again on failure). */
int loom_boot_have_fw(struct loom_boot *b);
int loom_boot_load(struct loom_boot *b);
int loom_boot_handshake(struct loom_boot *b);

/* loom_dev_get_info */
int loom_boot_info(struct loom_boot *b, loom_dev_info *info);

#endif
