/* boot.h - firmware loading, the boot handshake and reset of libloom
 * (driver/boot.c; docs/FIRMWARE.md "Loading and boot", "Hangs and reset"):
 * the boot block and rings live in one internal DRAM allocation. Internal
 * to driver/. */
#ifndef LOOM_DRIVER_BOOT_H
#define LOOM_DRIVER_BOOT_H

#include <stdint.h>

#include "loom/fw_abi.h"
#include "loom/loom.h"

struct loom_boot {
	loom_boot_opts opts;  /* of the last loom_boot, defaults filled in */
	int have_opts;        /* loom_boot ran at least once (loom_reset may) */
	int booted;           /* the last handshake succeeded */
	loom_bo *area;        /* boot block, submission ring, completion ring */
	uint32_t entries;     /* ring entries (both rings) */
	uint64_t boot_addr, sq_addr, cq_addr;
	loom_fw_boot reply;   /* the block as the firmware left it */
	uint64_t boot_cycles;
};

/* Core in reset, engine aborted and drained, interrupts cleared. */
void loom_boot_hold(loom_dev *d);

#endif
