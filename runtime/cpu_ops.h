/* cpu_ops.h - Loom's float CPU kernels (runtime/): for each ONNX operator a
 * shape/type inference function and a reference implementation, and the
 * reference executor that runs a whole loom_graph (ir/ir.h) with
 * them. The same kernels are the CPU fallback of compiled models and what
 * the compiler uses to fold constants and to calibrate.
 *
 * Kernel registry: each runtime/ops_*.c file exports one array of
 * loom_cpu_op ending with an entry whose op_type is NULL; runtime/cpu.c
 * searches them in order. An operator whose semantics changed between
 * opsets implements every version from min_opset on and reads g->opset
 * (e.g. Unsqueeze's axes: an attribute before opset 13, an input from 13).
 *
 * Conventions: infer() sets dtype, rank and dims of every output of the
 * node from its inputs (whose shapes are known; a constant input's values
 * are in tensor->data when the shape depends on them, e.g. Reshape) and
 * checks what it can (ranks, attribute values), failing with a message that
 * names the node and the problem. run() computes the outputs into
 * tensor->data, already allocated by the executor with
 * loom_tensor_bytes(output) bytes, from the inputs' data. Both return 0 or
 * -1 with a message in err. Float math is float32 like ONNX Runtime's CPU
 * kernels (accumulate in float; double only where precision demands it). */
#ifndef LOOM_CPU_OPS_H
#define LOOM_CPU_OPS_H

#include <stddef.h>
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_cpu_op {
	const char *op_type;   /* ONNX op type, default domain; NULL ends an array */
	int min_opset;         /* the oldest opset this implementation covers */
	int (*infer)(loom_graph *g, const loom_node *n, char *err, size_t errlen);
	int (*run)(loom_graph *g, const loom_node *n, char *err, size_t errlen);
} loom_cpu_op;

/* the arrays of runtime/ops_*.c */
extern const loom_cpu_op loom_cpu_ops_nn[];    /* conv, gemm, pooling, normalization, activations, elementwise */
extern const loom_cpu_op loom_cpu_ops_shape[]; /* data movement, shape, reductions, softmax, resize, cast, ... */
extern const loom_cpu_op loom_cpu_ops_quant[]; /* QuantizeLinear, DequantizeLinear, QLinear*, *Integer */

/* The kernel of op_type for opset, or NULL. */
const loom_cpu_op *loom_cpu_op_find(const char *op_type, int64_t opset);

/* Shape/type inference of every node in order (constant subgraphs whose
 * values are needed for shapes are computed on the way). Fails with a
 * message naming the node, its op type and the opset when no kernel exists
 * or a kernel refuses the node. */
int loom_graph_infer(loom_graph *g, char *err, size_t errlen);

/* Run the graph: the caller has put the data of every graph input in
 * g->tensors[g->inputs[i]].data (owned by the graph after the call; use
 * loom_tensor_set_data); afterwards every tensor, the outputs included,
 * holds its data. Infers shapes first if not done. */
int loom_ref_run(loom_graph *g, char *err, size_t errlen);

/* Replace t->data with a copy of n bytes (n must equal loom_tensor_bytes(t)). */
int loom_tensor_set_data(loom_tensor *t, const void *data, size_t n);

/* Helpers for kernels: numpy-style broadcast of two shapes into out (rank
 * and dims); -1 if incompatible. */
int loom_broadcast_shape(const loom_tensor *a, const loom_tensor *b, int *rank, int64_t *dims);

#ifdef __cplusplus
}
#endif
#endif
