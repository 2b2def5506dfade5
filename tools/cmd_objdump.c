/* cmd_objdump.c - `loom objdump MODEL.loom [--hw CONFIG]`: reads and
 * validates a compiled model (ir/model_read.c) and prints it (objdump.c): the
 * header (format version, source, options, configuration, DRAM map), the
 * tensor table, the layers, the steps and the disassembly of every NPU job.
 * With --hw, the model must also have been compiled for that configuration.
 * Exit status: 0, 1 when the file is refused, 2 on a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loom/hwcfg.h"
#include "loom/isa.h"
#include "ir/model.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loom objdump MODEL.loom [--hw CONFIG]\n"
		"  prints a compiled model: header, tensors, layers, steps, disassembly\n"
		"  --hw CONFIG   also check that MODEL was compiled for this configuration\n"
		"                (configs/CONFIG.cfg, a path, or overrides)\n");
}

int cmd_objdump(int argc, char **argv)
{
	const char *path = NULL, *hw = NULL;
	char err[1024];
	loom_hwcfg cfg;
	loom_model *m = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--hw")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "loom objdump: --hw needs a value\n");
				return 2;
			}
			hw = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "loom objdump: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (path) {
			fprintf(stderr, "loom objdump: one model file only ('%s' and '%s')\n", path, a);
			return 2;
		} else {
			path = a;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	if (hw && tool_load_hw("objdump", hw, &cfg))
		return 2;
	if (loom_model_read(path, hw ? &cfg : NULL, &m, err, sizeof err)) {
		fprintf(stderr, "loom objdump: %s\n", err);
		return 1;
	}
	printf("%s:\n", path);
	loom_model_dump(m, stdout);
	loom_model_free(m);
	return 0;
}
