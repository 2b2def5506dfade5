/* loom.c - the loom command-line tool: dispatches to one subcommand per
 * file (tools/cmd_*.c). */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"bench", cmd_bench, "a compiled model's device latency (min .. p99), throughput with K requests in flight"},
	{"compile", cmd_compile, "an ONNX model to a .loom file: quantized, lowered to the NPU, CPU fallback"},
	{"cosim", cmd_cosim, "random programs on RTL and C model, compared byte for byte"},
	{"eval", cmd_eval, "a classifier on a labelled data set: float vs int8 accuracy, RTL vs C model, profile"},
	{"demo", cmd_demo, "conv, GEMM and vector layers on the NPU, checked, with cycles and utilization"},
	{"ops", cmd_ops, "the operator table: CPU kernels, opsets, NPU lowerings and their conditions"},
	{"objdump", cmd_objdump, "a .loom model file: tensors, layers, steps, disassembled instructions"},
	{"run", cmd_run, "a program as a job through libloom and the firmware, or MODEL.onnx on the reference executor"},
	{"selftest", cmd_selftest, "the driver/firmware protocol suite through libloom"},
	{"sweep", cmd_sweep, "design-space exploration: models over a grid of configurations; --validate: the timing model against the RTL"},
	{"test-onnx", cmd_test_onnx, "ONNX test-case folders: run each model, compare with its outputs"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: loom COMMAND [options]   (loom COMMAND --help for its options)\n\ncommands:\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
}

/* The heap set up for the large buffers of the compiler and the
 * reference executor (weights, activations, im2col and packing buffers),
 * which come and go per layer and per calibration sample:
 *  - they come from the heap and stay there when freed (glibc would map
 *    and unmap each one, or trim the heap), so the next of the same size
 *    faults no new pages in;
 *  - HEAP_RESERVE bytes of heap are taken at once and transparent huge
 *    pages asked for on them (madvise; most kernels give huge pages only
 *    when asked), so a fresh buffer faults once per 2 MiB, not per 4 KiB
 *    (ResNet-50's compile: 100 MB of weights unpacked in 0.065 s instead
 *    of 0.31 s, 8 calibration samples in 0.63 s instead of 0.96 s);
 *  - one arena, so the threads' buffers come from that heap too.
 * Only a hint: where the heap cannot grow, malloc maps memory as usual. */
static void tune_heap(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TOP_PAD) && defined(MADV_HUGEPAGE)
	enum { HEAP_RESERVE = 768 << 20 };
	const uintptr_t huge = (uintptr_t)2 << 20;
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30); /* above the reserve: kept */
	mallopt(M_ARENA_MAX, 1);
	uintptr_t lo = (uintptr_t)sbrk(0);
	mallopt(M_TOP_PAD, HEAP_RESERVE);
	void *p = malloc(1 << 20); /* more than the heap holds: it grows */
	mallopt(M_TOP_PAD, 128 << 10); /* glibc's default */
	uintptr_t hi = (uintptr_t)sbrk(0);
	lo = (lo + huge - 1) & ~(huge - 1);
	hi &= ~(huge - 1);
	if (p && hi > lo + huge)
		(void)madvise((void *)(lo + huge), hi - lo - huge, MADV_HUGEPAGE);
	free(p);
#endif
}

int main(int argc, char **argv)
{
	tune_heap();
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "loom: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
