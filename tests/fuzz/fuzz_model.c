/* fuzz_model.c - libFuzzer target for the .loom model reader
 * (ir/modelfile.c): any byte string is read and validated without a
 * crash, leak or out-of-bounds access, or refused with a message; a model
 * that reads is dumped (loom objdump's path) to /dev/null. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/model.h"
#include "tools/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	loom_model *m = NULL;
	if (loom_model_read_mem(data, size, "fuzz.loom", NULL, &m, err, sizeof err)) {
		if (!err[0])
			abort();
		return 0;
	}
	FILE *f = fopen("/dev/null", "w");
	if (f) {
		loom_model_dump(m, f);
		fclose(f);
	}
	loom_model_free(m);
	return 0;
}
