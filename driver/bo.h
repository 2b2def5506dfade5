/* bo.h - device DRAM allocation of libloom (driver/bo.c): buffer objects
 * are ranges of device DRAM, kept in one address-sorted table per device;
 * the driver's own rings are allocations of the same table (internal, so a
 * user's fixed-address buffer can not overlap them). The table reaches the
 * device's DRAM and error message through its struct loom_hwio (hwio.h).
 * Internal to driver/. */
#ifndef LOOM_DRIVER_BO_H
#define LOOM_DRIVER_BO_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

struct loom_hwio;

struct loom_bo {
	struct loom_mem *mem; /* the table it belongs to */
	uint64_t addr, size;
	int internal; /* the driver's (boot block and rings) */
};

struct loom_mem {
	struct loom_hwio *io; /* the device's DRAM access and error message */
	uint64_t dram_bytes;
	loom_bo **v;  /* sorted by addr, never overlapping */
	size_t n, cap;
};

/* -1: out of memory */
int loom_mem_init(struct loom_mem *m, struct loom_hwio *io, uint64_t dram_bytes);
void loom_mem_fini(struct loom_mem *m); /* frees every buffer object */

/* The first gap (the last with top) of size bytes aligned to align (a
 * power of two). LOOM_OK or LOOM_ENOMEM / LOOM_EINVAL with a message. */
int loom_mem_alloc(struct loom_mem *m, uint64_t size, uint64_t align, int top, int internal, loom_bo **out);

/* loom_bo_alloc and loom_bo_alloc_at (include/loom/loom.h) on a device's
 * table; m is NULL when the device is. */
int loom_mem_bo_alloc(struct loom_mem *m, uint64_t size, uint64_t align, loom_bo **out);
int loom_mem_bo_alloc_at(struct loom_mem *m, uint64_t addr, uint64_t size, loom_bo **out);

#endif
