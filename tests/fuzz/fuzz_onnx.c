/* fuzz_onnx.c - libFuzzer target for the ONNX reader (compiler/onnx.c): any
 * byte string must load or be refused with a message, never crash, leak or
 * read out of bounds (built with ASan and UBSan, run by `make test-full`). A
 * model that loads also goes through shape inference, bounded: graphs whose
 * tensors would exceed 16 MiB are skipped so the run measures the parsers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/cpu_ops.h"
#include "compiler/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	loom_graph *g = NULL;
	if (loom_onnx_load_mem(data, size, "fuzz.onnx", NULL, 0, &g, err, sizeof err)) {
		if (!err[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	size_t total = 0;
	for (int i = 0; i < g->ntensors; i++)
		total += g->tensors[i].data ? loom_tensor_bytes(&g->tensors[i]) : 0;
	if (total < (16u << 20) && g->nnodes < 64)
		(void)loom_graph_infer(g, err, sizeof err);
	loom_graph_free(g);
	return 0;
}
