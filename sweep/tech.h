/* tech.h - a technology file (configs/tech/NAME.txt): the per-cell areas,
 * the SRAM density and the per-operation energies that sweep/area.c and
 * sweep/energy.c turn synthesis results and activity counters into mm^2
 * and pJ. One figure per line, "key = value unit  # source"; every key of
 * the table in tech.c must be present once, with a unit of its kind, a
 * positive value and a source. docs/DSE.md lists the figures of
 * configs/tech/45nm.txt and where they come from. */
#ifndef LOOM_SWEEP_TECH_H
#define LOOM_SWEEP_TECH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sweep_tech {
	char path[1024];
	/* standard cells, um^2 each */
	double inv, nand2, nor2, and2, or2, xor2, xnor2, mux2, andnot, ornot;
	double dff;         /* D flip-flop */
	double dffr;        /* D flip-flop with asynchronous reset or set */
	double latch;       /* D latch (the clock gates' npu_icg) */
	double sram_bit;    /* SRAM macro area per bit, um^2 (periphery included) */
	/* energies, pJ */
	double mul8, add32, mul32;
	double sram64_8k, sram64_32k, sram64_1m; /* one 64-bit read from an SRAM of 8 KB, 32 KB, 1 MB */
	double dram64;      /* one 64-bit DRAM access */
} sweep_tech;

/* The default technology file: configs/tech/45nm.txt under loom_root_dir(). */
const char *sweep_tech_default(void);

/* Read a technology file (NULL: the default). 0, or -1 and a message naming
 * the file, the line and the key (a missing key, an unknown or repeated
 * one, a value that is not a positive number, a unit of the wrong kind, a
 * line without its source) in err. */
int sweep_tech_load(sweep_tech *t, const char *path, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
