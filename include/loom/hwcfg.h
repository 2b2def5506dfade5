/* hwcfg.h - a Loom hardware configuration: the parameters of hwparams.def,
 * read from configs/NAME.cfg (or a path, or NAME:key=value,... overrides),
 * validated, and the sizes derived from them. Every size the C model, the
 * harness, the driver and the compiler use comes from here, never copied. */
#ifndef LOOM_HWCFG_H
#define LOOM_HWCFG_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_hwcfg {
	char name[64];          /* configuration name (file stem or custom-XXXXXXXX) */
#define LOOM_HWPARAM(n, sv, lo, hi, doc) uint32_t n;
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	/* derived */
	uint32_t sp_line_bytes;  /* = array_rows */
	uint32_t sp_lines;
	uint32_t sp_bank_lines;
	uint32_t acc_line_bytes; /* = 4 * array_cols */
	uint32_t acc_lines;
	uint64_t dram_bytes;
	uint32_t fingerprint;    /* FNV-1a of the parameters that shape the RTL */
} loom_hwcfg;

/* Load a configuration. spec: "NAME" (configs/NAME.cfg under cfgdir), a path
 * to a .cfg file, or either followed by ":key=value,key=value" overrides, or
 * just "key=value,..." (overrides on "default"). On failure returns -1 and
 * writes a message naming the file, line or parameter into err. */
int loom_hwcfg_load(loom_hwcfg *cfg, const char *spec, const char *cfgdir,
		    char *err, size_t errlen);

/* Fill derived fields and check every constraint; -1 and a message naming
 * the parameter if invalid. */
int loom_hwcfg_finish(loom_hwcfg *cfg, char *err, size_t errlen);

/* Write cfg back in .cfg syntax. */
int loom_hwcfg_write(const loom_hwcfg *cfg, const char *path, char *err, size_t errlen);

/* The directory that holds configs/ (from LOOM_ROOT or the executable's path). */
const char *loom_root_dir(void);

#endif
