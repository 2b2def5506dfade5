/* hw.h - the hardware-access interface of Loom: what the driver and every
 * test above it see of an NPU. Four backends implement it: "rtl" (the
 * verilated RTL of one configuration, a shared library under build/hw/NAME/),
 * "cmodel" (the bit-exact C model, cmodel/), "systemc" (the C model as a
 * SystemC TLM-2.0 module in a reference virtual platform, systemc/; a shared
 * library, build/systemc/libloom_systemc.so) and "systemc-rtl" (the verilated
 * RTL as a cycle-accurate SystemC module in the same platform,
 * build/hw/NAME/libloom_systemc_rtl.so). Callers never know which one
 * they run on. Not thread-safe: one thread per loom_hw. */
#ifndef LOOM_HW_H
#define LOOM_HW_H

#include <stddef.h>
#include <stdint.h>
#include "loom/hwcfg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_hw loom_hw;

typedef struct loom_hw_opts {
	uint32_t dram_latency;   /* 0: the configuration's dram_latency */
	uint32_t dram_bw;        /* 0: the configuration's dram_bw */
	const char *wave_path;   /* FST waveform file (rtl only); NULL: no waves */
	uint64_t wave_from;      /* first cycle dumped */
	uint64_t wave_to;        /* last cycle dumped; 0: to the end */
	uint32_t cmodel_flags;   /* cmodel only: LOOM_CMODEL_* below; 0: as the environment says */
	/* Bus-error injection (tests): every DRAM beat of the NPU's own
	 * accesses - instruction fetch, LOAD, STORE, MARK record - that touches
	 * [bus_err_base, bus_err_base + bus_err_size) is answered with an error
	 * response (rtl: tb_dram's RRESP/BRESP SLVERR; cmodel: the same beats;
	 * systemc, systemc-rtl: the platform's memory answers
	 * TLM_GENERIC_ERROR_RESPONSE on the range). The run ends with
	 * BUS_ERROR (docs/ISA.md). 0 size: none. */
	uint64_t bus_err_base, bus_err_size;
} loom_hw_opts;

/* The C model's data path and timing memo (cmodel/cm_exec.c,
 * cmodel/cm_timing.c): the generic kernels even where the CPU has AVX2
 * (else LOOM_CMODEL_SIMD=generic|avx2|auto decides), tsim run for every job
 * (else LOOM_CMODEL_MEMO=0 turns the memo off). Same bytes, same cycles. */
#define LOOM_CMODEL_GENERIC 1u
#define LOOM_CMODEL_NO_MEMO 2u

enum loom_hw_run_result {
	LOOM_HW_IRQ = 0,      /* the interrupt line is high */
	LOOM_HW_TIMEOUT = 1,  /* max_cycles passed without an interrupt */
	LOOM_HW_FAILED = -1,  /* the backend itself failed (message in loom_hw_error) */
};

struct loom_hw_ops {
	uint32_t (*mmio_read)(loom_hw *hw, uint32_t off);
	void (*mmio_write)(loom_hw *hw, uint32_t off, uint32_t val);
	int (*dram_read)(loom_hw *hw, uint64_t addr, void *buf, size_t len);
	int (*dram_write)(loom_hw *hw, uint64_t addr, const void *buf, size_t len);
	int (*run)(loom_hw *hw, uint64_t max_cycles);
	int (*irq)(loom_hw *hw);
	uint64_t (*cycles)(loom_hw *hw);
	void (*close)(loom_hw *hw);
};

struct loom_hw {
	const struct loom_hw_ops *ops;
	loom_hwcfg cfg;
	const char *backend;  /* "rtl", "cmodel", "systemc" or "systemc-rtl" */
	char err[512];
};

/* Open a backend ("rtl", "cmodel", "systemc" or "systemc-rtl") for cfg.
 * The rtl backend loads build/hw/<cfg->name>/libloom_rtl.so, building it
 * first (make) when it is missing; the systemc backend
 * build/systemc/libloom_systemc.so, systemc-rtl
 * build/hw/<cfg->name>/libloom_systemc_rtl.so, the same way. NULL on failure with a message in err. */
loom_hw *loom_hw_open(const char *backend, const loom_hwcfg *cfg, const loom_hw_opts *opts,
		      char *err, size_t errlen);
/* The rtl backend's library of cfg, build/hw/NAME/libloom_rtl.so, built
 * when missing (or when LOOM_REBUILD is set) by `make rtl`, once for all
 * processes that ask at the same time. 0, or -1 with a message. */
int loom_hw_rtl_build(const loom_hwcfg *cfg, char *err, size_t errlen);

static inline uint32_t loom_hw_mmio_read(loom_hw *hw, uint32_t off) { return hw->ops->mmio_read(hw, off); }
static inline void loom_hw_mmio_write(loom_hw *hw, uint32_t off, uint32_t v) { hw->ops->mmio_write(hw, off, v); }
/* DRAM access from the host; -1 (message in hw->err) when out of range. */
static inline int loom_hw_dram_read(loom_hw *hw, uint64_t a, void *b, size_t n) { return hw->ops->dram_read(hw, a, b, n); }
static inline int loom_hw_dram_write(loom_hw *hw, uint64_t a, const void *b, size_t n) { return hw->ops->dram_write(hw, a, b, n); }
/* Advance until the interrupt line is high or max_cycles have passed. */
static inline int loom_hw_run(loom_hw *hw, uint64_t max_cycles) { return hw->ops->run(hw, max_cycles); }
static inline int loom_hw_irq(loom_hw *hw) { return hw->ops->irq(hw); }
static inline uint64_t loom_hw_cycles(loom_hw *hw) { return hw->ops->cycles(hw); }
static inline void loom_hw_close(loom_hw *hw) { if (hw) hw->ops->close(hw); }
static inline const char *loom_hw_error(loom_hw *hw) { return hw->err; }

/* Backend constructors (used by loom_hw_open). */
loom_hw *loom_cmodel_open(const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err, size_t errlen);
/* The C model's counts of its timing memo (cmodel/cm_timing.c): jobs whose
 * timing was replayed, recorded, run directly; times tsim caught up. 0, or
 * -1 when hw is not the C model. *avx2: its data path runs on AVX2 (1) or
 * on AVX-512 (2: MATMUL on VNNI), else 0. */
int loom_cmodel_stats(loom_hw *hw, uint64_t memo[4], int *avx2);
/* Exported by libloom_rtl.so of each configuration. */
typedef loom_hw *(*loom_rtl_open_fn)(const loom_hwcfg *cfg, const loom_hw_opts *opts, char *err, size_t errlen);
#define LOOM_RTL_OPEN_SYMBOL "loom_rtl_open"
#define LOOM_RTL_FINGERPRINT_SYMBOL "loom_rtl_fingerprint"
/* Exported by libloom_systemc.so: a loom_rtl_open_fn for every configuration. */
#define LOOM_SYSTEMC_OPEN_SYMBOL "loom_systemc_open"
/* Exported by libloom_systemc_rtl.so of each configuration (with
 * LOOM_RTL_FINGERPRINT_SYMBOL). */
#define LOOM_SYSTEMC_RTL_OPEN_SYMBOL "loom_systemc_rtl_open"

/* A tensor-engine program: load it at addr, START, run to the interrupt,
 * acknowledge it. Returns LOOM_HW_IRQ or LOOM_HW_TIMEOUT; *status, *cause,
 * *pc, *info get STATUS, ERR_CAUSE, ERR_PC, ERR_INFO. After a timeout the
 * engine is aborted so the next program can run. */
typedef struct loom_hw_result {
	uint32_t status, cause, pc, info;
	uint64_t cycles;   /* cycles the run took (RTL: exact; cmodel: estimate) */
	int timed_out;
} loom_hw_result;
int loom_hw_exec(loom_hw *hw, uint64_t insn_addr, uint64_t max_cycles, loom_hw_result *res);

#ifdef __cplusplus
}
#endif
#endif
