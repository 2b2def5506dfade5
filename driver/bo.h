/* bo.h - device DRAM allocation of libloom (driver/bo.c): buffer objects
 * are ranges of device DRAM, kept in one address-sorted table per device;
 * the driver's own rings are allocations of the same table (internal, so a
 * user's fixed-address buffer can not overlap them). Internal to driver/. */
#ifndef LOOM_DRIVER_BO_H
#define LOOM_DRIVER_BO_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

struct loom_bo {
	loom_dev *dev;
	uint64_t addr, size;
	int internal; /* the driver's (boot block and rings) */
};

struct loom_mem {
	uint64_t dram_bytes;
	loom_bo **v;  /* sorted by addr, never overlapping */
	size_t n, cap;
};

int loom_mem_init(struct loom_mem *m, uint64_t dram_bytes); /* -1: out of memory */
void loom_mem_fini(struct loom_mem *m);                      /* frees every buffer object */

/* The first gap (the last with top) of size bytes aligned to align (a
 * power of two). LOOM_OK or LOOM_ENOMEM / LOOM_EINVAL with a message. */
int loom_mem_alloc(loom_dev *d, uint64_t size, uint64_t align, int top, int internal, loom_bo **out);

#endif
