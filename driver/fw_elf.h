/* fw_elf.h - the firmware image of libloom (driver/fw_elf.c): a firmware
 * ELF read with libelf and validated against the control core's memory map
 * (docs/FIRMWARE.md "Loading and boot", docs/CONTROL.md), kept as the
 * segments to write into the TCMs. No device needed: unit tests call it on
 * hand-made ELF files. Internal to driver/. */
#ifndef LOOM_DRIVER_FW_ELF_H
#define LOOM_DRIVER_FW_ELF_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_fw_seg {
	uint32_t addr;    /* core address (p_paddr) */
	uint32_t filesz;  /* bytes from the file; the rest of memsz is zero */
	uint32_t memsz;
	uint8_t *data;    /* filesz bytes */
} loom_fw_seg;

typedef struct loom_fw_image {
	loom_fw_seg *seg; /* the PT_LOAD segments with memsz > 0, in file order */
	unsigned nseg;
} loom_fw_image;

/* Parse and validate len bytes of ELF. LOOM_OK and *img, or LOOM_EFW (or
 * LOOM_ENOMEM) with a message naming the header or the segment and the
 * field in err; *img is then empty. */
int loom_fw_parse(const void *elf, size_t len, loom_fw_image *img, char *err, size_t errlen);
void loom_fw_image_free(loom_fw_image *img);

/* The TCM (ITCM or DTCM) that holds all of [addr, addr + len): 0 if none;
 * *base, *size get its range. */
int loom_fw_tcm_of(uint64_t addr, uint64_t len, uint32_t *base, uint32_t *size);

#endif
