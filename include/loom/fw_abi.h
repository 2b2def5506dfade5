/* fw_abi.h - the ABI between libloom (driver/) and the control-core firmware
 * (firmware/): the boot handshake, the submission and completion rings in
 * device DRAM, job descriptors and completion records. The one header both
 * sides compile; every structure has explicit field sizes, reserved fields
 * that must be zero, and a static-asserted size and layout. Little-endian,
 * like the device. Semantics: docs/FIRMWARE.md.
 *
 * Versioning: a change that an older peer would misread bumps MAJOR; an
 * addition an older peer may ignore (a new capability bit, a use for a
 * reserved field that defaults to 0) bumps MINOR. The driver refuses a
 * firmware whose MAJOR differs; the firmware refuses a boot block whose
 * MAJOR differs.
 */
#ifndef LOOM_FW_ABI_H
#define LOOM_FW_ABI_H

#include <stdint.h>

#define LOOM_FW_ABI_MAJOR 1u
#define LOOM_FW_ABI_MINOR 1u /* 1: loom_completion.evt */

#define LOOM_FW_BOOT_MAGIC 0x544f424cu  /* "LBOT" in memory */
#define LOOM_FW_READY_MAGIC 0x5944524cu /* "LRDY": MBOX_F2H0 after a good boot */
#define LOOM_FW_CRASH_MAGIC 0x5352434cu /* "LCRS": MBOX_F2H0 after a firmware trap;
					   MBOX_F2H1..3 = mcause, mepc, mtval */
#define LOOM_FW_JOB_WINDOWS 4u          /* DRAM windows a job may declare */
#define LOOM_FW_RING_MAX 4096u          /* most entries of a ring (a power of two) */
#define LOOM_FW_CTRS 13u                /* perf counters in a completion (regs.def LOOM_CTR order) */
#define LOOM_FW_EVTS 6u                 /* energy event counters in a completion (regs.def LOOM_EVT order) */

/* Boot handshake (docs/FIRMWARE.md): the host writes a loom_fw_boot block to
 * DRAM, puts its DRAM address in MBOX_H2F1 and LOOM_FW_BOOT_MAGIC in
 * MBOX_H2F0, releases the core; the firmware checks the block, fills in the
 * reply fields, writes MBOX_F2H0 = LOOM_FW_READY_MAGIC (or a LOOM_FW_BOOT_*
 * error code) and raises HOST_IRQ bit LOOM_HOST_IRQ_BOOT. */
enum loom_fw_boot_status {
	LOOM_FW_BOOT_OK = 0,
	LOOM_FW_BOOT_BAD_MAGIC = 1,   /* MBOX_H2F0 or the block's magic is wrong */
	LOOM_FW_BOOT_BAD_ABI = 2,     /* the block's abi_major differs from the firmware's */
	LOOM_FW_BOOT_BAD_BLOCK = 3,   /* size, reserved fields or ring parameters invalid */
};

/* Host interrupt bits (HOST_IRQ_STATUS), raised by the firmware */
#define LOOM_HOST_IRQ_BOOT 0x1u       /* the boot handshake finished (either way) */
#define LOOM_HOST_IRQ_COMPLETION 0x2u /* at least one completion record was written */
#define LOOM_HOST_IRQ_CRASH 0x4u      /* the firmware trapped (MBOX_F2H0 = LOOM_FW_CRASH_MAGIC) */

/* Firmware capabilities (loom_fw_boot.caps) */
#define LOOM_FW_CAP_WINDOWS 0x1u      /* per-job DMA windows are enforced */
#define LOOM_FW_CAP_WATCHDOG 0x2u     /* jobs get an engine watchdog */
#define LOOM_FW_CAP_TEST_HANG 0x4u    /* LOOM_JOB_F_TEST_HANG is honoured (test builds) */

typedef struct loom_fw_boot {
	/* written by the host */
	uint32_t magic;          /* LOOM_FW_BOOT_MAGIC */
	uint16_t abi_major;      /* LOOM_FW_ABI_MAJOR of the driver */
	uint16_t abi_minor;
	uint32_t size;           /* sizeof(loom_fw_boot) */
	uint32_t sq_entries;     /* submission ring entries, power of two, 1..LOOM_FW_RING_MAX */
	uint32_t cq_entries;     /* completion ring entries, power of two, >= sq_entries */
	uint32_t sq_addr;        /* DRAM address of the submission ring (64-byte aligned) */
	uint32_t cq_addr;        /* DRAM address of the completion ring (64-byte aligned) */
	uint32_t watchdog_cycles;/* default engine watchdog per job; 0: the firmware's default */
	uint32_t host_reserved[8];
	/* written by the firmware */
	uint32_t status;         /* enum loom_fw_boot_status */
	uint16_t fw_abi_major;
	uint16_t fw_abi_minor;
	uint32_t fw_version;     /* firmware build version */
	uint32_t caps;           /* LOOM_FW_CAP_* */
	uint32_t hw_array;       /* the tensor engine's HW_ARRAY register as seen by the firmware */
	uint32_t hw_fingerprint; /* HW_FINGERPRINT */
	uint32_t fw_reserved[10];
} loom_fw_boot;

/* A ring in DRAM: this 64-byte header, then `entries` records (loom_job,
 * 64 bytes, in the submission ring; loom_completion, 128 bytes, in the
 * completion ring).
 * Indices count forever (mod 2^32); slot = index & (entries - 1).
 * Submission ring: the host writes records at tail, then tail (the producer
 * owns it), then rings DOORBELL; the firmware reads at head and advances
 * head. Completion ring: the firmware produces (tail), the host consumes
 * (head). A ring is full when tail - head == entries. */
typedef struct loom_ring_hdr {
	uint32_t head;           /* written by the consumer only */
	uint32_t reserved0[7];
	uint32_t tail;           /* written by the producer only */
	uint32_t reserved1[7];
} loom_ring_hdr;

/* Job flags */
#define LOOM_JOB_F_TEST_HANG 0x1u  /* test only: the firmware spins forever on this job */

typedef struct loom_job_window {
	uint32_t base;           /* first DRAM byte */
	uint32_t size;           /* bytes; 0 = unused */
} loom_job_window;

/* Submission record: one tensor-engine program. */
typedef struct loom_job {
	uint32_t job_id_lo;
	uint32_t job_id_hi;
	uint32_t insn_addr;      /* DRAM address of the first instruction (32-byte aligned) */
	uint32_t flags;          /* LOOM_JOB_F_* */
	uint32_t timeout_cycles; /* engine watchdog for this job; 0: the boot default */
	uint32_t nwindows;       /* 0..LOOM_FW_JOB_WINDOWS; 0 = no DMA allowed */
	loom_job_window win[LOOM_FW_JOB_WINDOWS];
	uint32_t reserved[2];
} loom_job;

/* Completion status */
enum loom_job_status {
	LOOM_JOB_OK = 0,
	LOOM_JOB_ENGINE_ERROR = 1, /* the engine stopped with ERR_CAUSE (err_* fields) */
	LOOM_JOB_TIMEOUT = 2,      /* the watchdog aborted the job */
	LOOM_JOB_BAD_JOB = 3,      /* the descriptor was invalid (flags, windows, reserved fields) */
};

/* Completion record */
typedef struct loom_completion {
	uint32_t job_id_lo;
	uint32_t job_id_hi;
	uint32_t status;         /* enum loom_job_status */
	uint32_t err_cause;      /* ERR_CAUSE (LOOM_ERR_*), 0 unless LOOM_JOB_ENGINE_ERROR */
	uint32_t err_pc;
	uint32_t err_info;
	uint32_t ctr[LOOM_FW_CTRS]; /* the perf counters at the end of the job (they restart at
				       every START, so they are the job's deltas), regs.def order */
	uint32_t fw_cycles;      /* control-core cycles from taking the job to writing this record */
	uint32_t fw_insns;       /* control-core instructions retired in that time */
	uint32_t evt[LOOM_FW_EVTS]; /* the energy event counters at the end of the job, regs.def
				       order (ABI 1.1; a 1.0 firmware leaves them 0) */
	uint32_t reserved[5];
} loom_completion;

#define LOOM_ABI_ASSERT(c, m) _Static_assert(c, m)
LOOM_ABI_ASSERT(sizeof(loom_fw_boot) == 128, "loom_fw_boot is 128 bytes");
LOOM_ABI_ASSERT(sizeof(loom_ring_hdr) == 64, "loom_ring_hdr is 64 bytes");
LOOM_ABI_ASSERT(sizeof(loom_job) == 64, "loom_job is 64 bytes");
LOOM_ABI_ASSERT(sizeof(loom_completion) == 128, "loom_completion is 128 bytes");
LOOM_ABI_ASSERT(__builtin_offsetof(loom_fw_boot, status) == 64, "boot reply at byte 64");
LOOM_ABI_ASSERT(__builtin_offsetof(loom_ring_hdr, tail) == 32, "tail in its own half");
LOOM_ABI_ASSERT(__builtin_offsetof(loom_job, win) == 24, "windows at byte 24");
LOOM_ABI_ASSERT(__builtin_offsetof(loom_completion, ctr) == 24, "counters at byte 24");
LOOM_ABI_ASSERT(__builtin_offsetof(loom_completion, evt) == 84, "event counters at byte 84");

#endif
