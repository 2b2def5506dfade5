/* loom.h - libloom, the user-space driver of the Loom NPU (driver/): open a
 * device on a backend (rtl, cmodel or systemc) and a hardware configuration, load
 * and boot the control-core firmware, allocate buffer objects in device
 * DRAM, submit tensor-engine jobs asynchronously, wait for them, reset after
 * a hang. The driver/firmware protocol is docs/FIRMWARE.md; the structures
 * it shares with the firmware are include/loom/fw_abi.h.
 *
 * Errors: every call that can fail returns 0 (LOOM_OK) or a negative
 * LOOM_E* code; loom_strerror() names the code and loom_errmsg() gives the
 * message of the device's last failed call (what, where, which value).
 * loom_open() writes its message to the caller's buffer.
 *
 * Time: the device is simulated, so it advances only inside libloom calls
 * that run it (loom_boot, loom_reset, loom_wait, loom_submit with
 * LOOM_SUBMIT_WAIT). Every timeout is in device cycles (the backend's
 * clock, loom_hw_cycles()), which makes runs reproducible on both backends.
 *
 * Threads: libloom has no global state of its own (libelf's version
 * handshake aside, which only ever stores the same value). A device and its
 * buffer objects are used by one thread at a time (the caller serialises);
 * different devices may be used from different threads at once, and any
 * number of devices may be open in one process. One exception: loom_open
 * itself must not run in two threads at once (finding configs/ caches the
 * root directory in common/hwcfg.c, and the rtl backend may build and
 * dlopen its library): open devices from one thread, or serialise the
 * opens; everything after loom_open is per device.
 *
 * Typical use:
 *   loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "default"}, &dev, err, sizeof err);
 *   loom_load_firmware(dev, "build/firmware/loom_fw.elf");
 *   loom_boot(dev, NULL);
 *   loom_bo_alloc(dev, size, 0, &bo); loom_bo_write(bo, 0, data, size);
 *   loom_submit(dev, &job, LOOM_SUBMIT_WAIT, &id);
 *   loom_wait(dev, id, LOOM_WAIT_FOREVER, &res);
 *   loom_close(dev);
 */
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/fw_abi.h"
#include "loom/hw.h"
#include "loom/hwcfg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---- */
enum loom_error {
	LOOM_OK = 0,
	LOOM_EINVAL = -1,    /* a bad argument: NULL, unknown flag, misaligned, not a power of two */
	LOOM_ENOMEM = -2,    /* host memory, or no room in device DRAM */
	LOOM_EBUSY = -3,     /* the submission ring is full; or a DRAM range is already in use */
	LOOM_EAGAIN = -4,    /* loom_poll: the job has not completed yet */
	LOOM_ETIMEDOUT = -5, /* the device ran the caller's cycle bound without the event */
	LOOM_ENOENT = -6,    /* no such job (never submitted, or already waited for) */
	LOOM_ERANGE = -7,    /* an address or size outside device DRAM or outside a buffer */
	LOOM_EFW = -8,       /* the firmware ELF is invalid (message names the header or segment) */
	LOOM_EIO = -9,       /* a file could not be read */
	LOOM_EBOOT = -10,    /* the boot handshake failed (no reply, refused, wrong device) */
	LOOM_EVERSION = -11, /* driver and firmware ABI major versions differ */
	LOOM_EHW = -12,      /* the backend failed, or the device is not the configuration opened */
	LOOM_ESTATE = -13,   /* not now: no firmware loaded, device not booted */
	LOOM_EPROTO = -14,   /* the firmware broke the protocol (bad completion record or ring index) */
};

/* "LOOM_EBUSY: ..." for a code, "unknown error" otherwise. Never NULL. */
const char *loom_strerror(int code);

typedef struct loom_dev loom_dev;
typedef struct loom_bo loom_bo;

/* The message of the last call on dev that failed ("" if none). Valid until
 * the next call on dev. NULL dev: a fixed text. */
const char *loom_errmsg(const loom_dev *dev);

/* ---- devices ---- */
typedef struct loom_open_opts {
	const char *backend;         /* "rtl", "cmodel" or "systemc" */
	const char *hw;              /* configuration spec (hwcfg.h): "default", a path, overrides */
	const loom_hw_opts *hw_opts; /* NULL: the configuration's DRAM timing, no waves */
} loom_open_opts;

/* Open a device. On failure returns a LOOM_E* code, *out = NULL and a
 * message in err (if err is not NULL). */
int loom_open(const loom_open_opts *opts, loom_dev **out, char *err, size_t errlen);
/* Close the device: stops the core, frees every buffer object still
 * allocated (their pointers become invalid). NULL is ignored. */
void loom_close(loom_dev *dev);
/* The configuration and backend of an open device (tests, benchmarks). */
const loom_hwcfg *loom_dev_config(const loom_dev *dev);
loom_hw *loom_dev_hw(loom_dev *dev);

/* ---- firmware ---- */
/* Read and validate a firmware ELF (ELF32, little endian, EM_RISCV,
 * ET_EXEC, entry 0, every PT_LOAD segment inside the ITCM or the DTCM, no
 * two overlapping, offsets and sizes inside the file, p_filesz <= p_memsz).
 * On success the image replaces the one loaded before and is what
 * loom_boot() and loom_reset() write into the TCMs; on failure the old
 * image is kept and LOOM_EFW (LOOM_EIO: unreadable file) names the
 * segment and the field. */
int loom_load_firmware(loom_dev *dev, const char *path);
int loom_load_firmware_mem(loom_dev *dev, const void *elf, size_t len);

/* Test hooks of the boot (loom_boot_opts.test) */
#define LOOM_BOOT_TEST_ABI_PLUS1 0x1u   /* send abi_major + 1: the firmware must refuse (LOOM_EVERSION) */
#define LOOM_BOOT_TEST_REPLY_ABI 0x2u   /* patch the firmware's reply to fw_abi_major + 1 before checking it */

typedef struct loom_boot_opts {
	uint32_t ring_entries;        /* submission and completion ring entries, a power of two
					 1..LOOM_FW_RING_MAX; 0: 64 */
	uint32_t watchdog_cycles;     /* default per-job engine watchdog; 0: the firmware's default */
	uint64_t boot_timeout_cycles; /* bound on the handshake; 0: 2,000,000 */
	uint64_t submit_wait_cycles;  /* bound on LOOM_SUBMIT_WAIT; 0: 1,000,000,000 */
	uint32_t test;                /* LOOM_BOOT_TEST_* (tests only); 0 normally */
} loom_boot_opts;

/* Hold the core in reset, abort the engine, write the firmware into the
 * TCMs, set up the boot block and fresh rings in device DRAM (allocated,
 * the first time, at the top of DRAM around the buffer objects that exist),
 * release the core and check its reply: ready magic, ABI major, the
 * configuration fingerprint. opts NULL: defaults. Any job in flight is
 * reported lost (as by loom_reset). LOOM_ESTATE without firmware,
 * LOOM_EBOOT / LOOM_EVERSION when the handshake fails. */
int loom_boot(loom_dev *dev, const loom_boot_opts *opts);

/* After a hang: hold the core in reset, abort the engine, boot again with
 * the firmware and options of the last loom_boot (fresh rings). Every job
 * in flight completes with status LOOM_JOB_LOST (reap it with loom_wait or
 * loom_poll). */
int loom_reset(loom_dev *dev);

typedef struct loom_dev_info {
	int booted;              /* the last boot succeeded */
	uint32_t fw_abi_major, fw_abi_minor, fw_version, caps; /* the firmware's reply */
	uint32_t hw_array, hw_fingerprint;
	uint32_t ring_entries;
	uint64_t boot_cycles;    /* device cycles the last handshake took */
	uint32_t boot_addr;      /* DRAM address of the boot block (rings follow it) */
} loom_dev_info;
int loom_dev_get_info(loom_dev *dev, loom_dev_info *info);

/* ---- buffer objects: ranges of device DRAM ---- */
/* Allocate size bytes (> 0) at a multiple of align (a power of two; 0: 64),
 * first fit from the bottom of DRAM. LOOM_ENOMEM when no gap fits. */
int loom_bo_alloc(loom_dev *dev, uint64_t size, uint64_t align, loom_bo **out);
/* Allocate exactly [addr, addr + size): LOOM_ERANGE outside DRAM,
 * LOOM_EBUSY when it overlaps a buffer object or the driver's rings. */
int loom_bo_alloc_at(loom_dev *dev, uint64_t addr, uint64_t size, loom_bo **out);
void loom_bo_free(loom_bo *bo); /* NULL is ignored */
uint64_t loom_bo_addr(const loom_bo *bo);
uint64_t loom_bo_size(const loom_bo *bo);
/* Copy between host memory and [off, off + len) of the buffer:
 * LOOM_ERANGE when that is not inside it. */
int loom_bo_write(loom_bo *bo, uint64_t off, const void *src, size_t len);
int loom_bo_read(loom_bo *bo, uint64_t off, void *dst, size_t len);

/* ---- jobs ---- */
typedef struct loom_window {
	uint64_t base; /* first DRAM byte */
	uint64_t size; /* bytes */
} loom_window;

/* One tensor-engine program. Its instruction stream and every DRAM byte
 * it loads, stores or marks must lie inside its windows (else the engine
 * stops it with DMA_WINDOW). */
typedef struct loom_job_desc {
	uint64_t insn_addr;      /* DRAM address of the first instruction, 32-byte aligned */
	uint32_t flags;          /* LOOM_JOB_F_* (fw_abi.h) */
	uint32_t timeout_cycles; /* engine watchdog for this job; 0: the boot default */
	uint32_t nwindows;       /* 0..LOOM_FW_JOB_WINDOWS */
	loom_window win[LOOM_FW_JOB_WINDOWS];
} loom_job_desc;

/* Append a window covering bo to job: LOOM_EINVAL when all are used. */
int loom_job_add_window(loom_job_desc *job, const loom_bo *bo);

/* Submission flags */
#define LOOM_SUBMIT_WAIT 0x1u         /* ring full: run the device until a slot frees
					 (bounded by submit_wait_cycles: LOOM_ETIMEDOUT) */
#define LOOM_SUBMIT_UNCHECKED 0x100u  /* test only: pass the descriptor to the firmware without
					 the driver's checks (exercises LOOM_JOB_BAD_JOB) */

/* Queue a job. Up to ring_entries jobs may be in flight (submitted and not
 * yet completed by the firmware); when the ring is full (that many are, or
 * the firmware has written a job's completion but not yet freed its slot),
 * the call returns LOOM_EBUSY at once, or with LOOM_SUBMIT_WAIT runs the
 * device until a slot is free. *id (ids start at 1 and only grow) names the job to loom_wait
 * and loom_poll. Checks: insn_addr 32-byte aligned, flags known, nwindows
 * <= LOOM_FW_JOB_WINDOWS, every window non-empty and inside DRAM
 * (LOOM_EINVAL / LOOM_ERANGE); LOOM_ESTATE unless booted. */
int loom_submit(loom_dev *dev, const loom_job_desc *job, unsigned flags, uint64_t *id);

/* A job's outcome. status: enum loom_job_status (fw_abi.h) or LOOM_JOB_LOST. */
#define LOOM_JOB_LOST 0x100u /* in flight when loom_reset/loom_boot ran: no result */
typedef struct loom_result {
	uint64_t id;
	uint32_t status;
	uint32_t err_cause, err_pc, err_info; /* LOOM_JOB_ENGINE_ERROR: ERR_CAUSE (LOOM_ERR_*), ERR_PC, ERR_INFO */
	uint32_t ctr[LOOM_FW_CTRS];           /* the engine's perf counters for the job (regs.def LOOM_CTR order) */
	uint32_t evt[LOOM_FW_EVTS];           /* its energy event counters (regs.def LOOM_EVT order) */
	uint32_t fw_cycles, fw_insns;         /* control-core cycles and instructions the job took */
	uint64_t submit_cycle, done_cycle;    /* device cycle of the submission and of the driver
						 seeing the completion (latency = the difference) */
} loom_result;

/* "OK", "ENGINE_ERROR", "TIMEOUT", "BAD_JOB", "LOST", "?" */
const char *loom_job_status_name(uint32_t status);

#define LOOM_JOB_ANY 0u               /* loom_wait / loom_poll: the completed job of lowest id */
#define LOOM_WAIT_FOREVER UINT64_MAX

/* Run the device until job id (or any job, LOOM_JOB_ANY) has completed,
 * at most timeout_cycles device cycles. LOOM_OK: *res (may be NULL) holds
 * the result and the job is forgotten (each job is reaped exactly once).
 * LOOM_ETIMEDOUT: still in flight (a hung firmware: loom_reset).
 * LOOM_ENOENT: no such job in flight or completed (LOOM_JOB_ANY: none). */
int loom_wait(loom_dev *dev, uint64_t id, uint64_t timeout_cycles, loom_result *res);
/* loom_wait without running the device: reads the completions the
 * firmware has written; LOOM_EAGAIN when the job has not completed. */
int loom_poll(loom_dev *dev, uint64_t id, loom_result *res);
/* Jobs submitted and not yet completed by the firmware. */
unsigned loom_jobs_in_flight(const loom_dev *dev);

#ifdef __cplusplus
}
#endif
#endif
