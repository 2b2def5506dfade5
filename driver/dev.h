/* dev.h - the device object of libloom (driver/dev.c): what one open device
 * holds, one piece per subsystem: register and DRAM access with the last
 * error (hwio.h), buffer objects (bo.h), the firmware, boot and reset
 * (boot.h), rings and jobs (job.h). Only dev.c includes it: the subsystems
 * get the pieces they need from it when the device opens (each keeps a
 * pointer to the device's struct loom_hwio) and never see struct loom_dev.
 * Internal to driver/. */
#ifndef LOOM_DRIVER_DEV_H
#define LOOM_DRIVER_DEV_H

#include "loom/loom.h"
#include "bo.h"
#include "boot.h"
#include "hwio.h"
#include "job.h"

struct loom_dev {
	struct loom_hwio io;       /* the backend, the last error's message (hwio.c) */
	struct loom_mem mem;       /* DRAM allocations (bo.c) */
	struct loom_boot boot;     /* firmware, rings, handshake reply (boot.c) */
	struct loom_jobs jobs;     /* in-flight and completed jobs (job.c) */
};

#endif
