/* area.h - the silicon area of a configuration: its RTL synthesized by
 * Yosys (generic gates and flip-flops, the SRAM macros as black boxes),
 * the cells times the technology file's per-cell areas, plus the SRAM
 * macros (scratchpad, accumulator, ITCM, DTCM) from the technology's bit
 * density. Synthesis results are cached per configuration fingerprint and
 * RTL revision, so a sweep synthesizes each configuration once.
 * docs/DSE.md "Area". */
#ifndef LOOM_SWEEP_AREA_H
#define LOOM_SWEEP_AREA_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwcfg.h"
#include "sweep/tech.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sweep_area_t {
	char config[64];
	uint32_t fingerprint;
	/* from synthesis */
	uint64_t logic_cells;   /* combinational gates */
	uint64_t flops;         /* flip-flops and latches (bits of state outside the SRAMs) */
	double logic_um2;       /* gates and flip-flops (with their enable / reset gates), um^2 */
	double flop_um2;        /* the flip-flops' part of logic_um2 */
	/* SRAM macros */
	uint64_t sram_bits;     /* scratchpad + accumulator + ITCM + DTCM */
	double sram_um2;
	double total_mm2;       /* (logic_um2 + sram_um2) / 1e6 */
	double synth_s;         /* wall seconds the synthesis took (when it ran, cached with it) */
	int cached;             /* 1: read from the cache, Yosys did not run */
	char yosys[64];         /* Yosys version */
	char cache_file[1024];
	char source[2600];      /* where the numbers come from, one line: Yosys, cache, technology file */
} sweep_area_t;

/* The default cache directory: $LOOM_AREA_CACHE, else build/area under loom_root_dir(). */
const char *sweep_area_cache_default(void);

/* The area of cfg in technology t. cache_dir NULL: the default. Synthesizes
 * (minutes; needs yosys on PATH, or $LOOM_YOSYS, and build/bin/gen_hw) unless
 * cache_dir holds this configuration's result for the current RTL. 0, or -1
 * and a message in err. */
int sweep_area(const loom_hwcfg *cfg, const sweep_tech *t, const char *cache_dir, sweep_area_t *out, char *err,
	       size_t errlen);

/* The same from the cache only: 0, 1 when cache_dir does not hold cfg for
 * the current RTL (no synthesis), -1 and a message. */
int sweep_area_cached(const loom_hwcfg *cfg, const sweep_tech *t, const char *cache_dir, sweep_area_t *out, char *err,
		      size_t errlen);

/* 0 and Yosys' version when Yosys runs ($LOOM_YOSYS, else yosys on PATH);
 * -1 and a message saying what did not run. */
int sweep_area_yosys(char *version, size_t len);

#ifdef __cplusplus
}
#endif

#endif
