/* loom.c - the loom command-line tool: dispatches to one subcommand per
 * file (tools/cmd_*.c). */
#include <stdio.h>
#include <string.h>

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

int main(int argc, char **argv)
{
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
