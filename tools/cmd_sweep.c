/* cmd_sweep.c - `loom sweep`: design-space exploration over configurations.
 * Today only --validate (tools/cmd_sweep_validate.c: the fast timing
 * numbers against the RTL); the grid of design points comes with the rest
 * of the sweep. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_sweep(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--validate"))
			return validate_main(argc, argv);
	fprintf(stderr, "usage: loom sweep --validate MODEL... [--hw CONFIG,...] (loom sweep --validate --help)\n");
	return 2;
}
