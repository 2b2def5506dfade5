/* cpu_ops.h - Loom's float CPU kernels (runtime/): for each ONNX operator a
 * shape/type inference function and a reference implementation, and the
 * reference executor that runs a whole loom_graph (ir/ir.h) with
 * them. The same kernels are the CPU fallback of compiled models and what
 * the compiler uses to fold constants and to calibrate.
 *
 * The operator table: runtime/ops.def lists every operator once with its
 * kernel functions (in runtime/ops_*.c) and the family of its NPU lowering
 * in the compiler; runtime/ops.c makes loom_cpu_ops[] of it. An operator
 * whose semantics changed between opsets implements every version from
 * min_opset on and reads g->opset (e.g. Unsqueeze's axes: an attribute
 * before opset 13, an input from 13).
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
#include <stdint.h>
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the compiler (compiler/compile.c) lowers an operator to the NPU: the
 * family of its lowering, or NONE when the operator always runs on the CPU.
 * A node of a family may still stay on the CPU (its shapes, types or
 * constants do not fit the NPU); see runtime/ops.def. */
enum loom_npu_family {
	LOOM_NPU_NONE,
	LOOM_NPU_CONV,       /* Conv */
	LOOM_NPU_GEMM,       /* Gemm, MatMul */
	LOOM_NPU_POOL,       /* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool */
	LOOM_NPU_CONCAT,     /* Concat */
	LOOM_NPU_RESHAPE,    /* Reshape: rank 5 a channel shuffle, otherwise an alias */
	LOOM_NPU_ALIAS,      /* Flatten, Squeeze, Unsqueeze, Transpose (image <-> rows): the input's data */
	LOOM_NPU_SLICE,      /* Slice */
	LOOM_NPU_BN,         /* BatchNormalization */
	LOOM_NPU_PAD,        /* Pad */
	LOOM_NPU_REDUCEMEAN, /* ReduceMean */
	LOOM_NPU_ADDMUL,     /* Add, Mul of two activations */
	LOOM_NPU_LUT,        /* one activation through a 256-entry table */
	LOOM_NPU_COUNT
};

/* "none", "conv", ..., "lut": the enum's names in lower case; "?" for a
 * value out of range. */
const char *loom_npu_family_name(int f);

typedef struct loom_cpu_op {
	const char *op_type;   /* ONNX op type, default domain; NULL ends the table */
	int min_opset;         /* the oldest opset this implementation covers */
	int (*infer)(loom_graph *g, const loom_node *n, char *err, size_t errlen);
	int (*run)(loom_graph *g, const loom_node *n, char *err, size_t errlen);
	int npu;               /* enum loom_npu_family */
} loom_cpu_op;

/* every row of runtime/ops.def, then one whose op_type is NULL */
extern const loom_cpu_op loom_cpu_ops[];

/* The kernel of op_type for opset: the row with the highest min_opset <=
 * opset; NULL if none (or op_type NULL). */
const loom_cpu_op *loom_cpu_op_find(const char *op_type, int64_t opset);

/* A row of op_type whatever the opset, for what does not depend on it (the
 * NPU family); NULL if the operator has no kernel. */
const loom_cpu_op *loom_cpu_op_any(const char *op_type);

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

/* A graph to run beside g (another input, at the same time on another
 * thread): g's nodes, names and attributes, and the values of its
 * initializers (tensors that are neither a graph input nor a node's
 * output) shared, read only; its own tensors otherwise (types, shapes, and
 * the data loom_ref_run puts in the graph inputs and node outputs, none at
 * first). g must not change while the view exists, but may be run itself:
 * neither run writes what they share. Free it with loom_ref_view_free,
 * never loom_graph_free. NULL when out of memory. */
loom_graph *loom_ref_view(const loom_graph *g);
void loom_ref_view_free(loom_graph *v);

/* Replace t->data with a copy of n bytes (n must equal loom_tensor_bytes(t)). */
int loom_tensor_set_data(loom_tensor *t, const void *data, size_t n);

/* Helpers for kernels: numpy-style broadcast of two shapes into out (rank
 * and dims); -1 if incompatible. */
int loom_broadcast_shape(const loom_tensor *a, const loom_tensor *b, int *rank, int64_t *dims);

/* ------------------------------------------------------------------ shared with the compiler
 * The compiler lowers Conv and the pools with the kernels' own geometry,
 * so that the NPU and the CPU agree on output sizes and padding, and reads
 * constants' values as the kernels do. */

/* Geometry of a convolution or pooling over nd (1..3) spatial dims, kept
 * right-aligned in 3 slots: slot 3-nd+i is spatial dim i, the leading
 * unused slots are size 1 with kernel 1. */
struct loom_cpu_geo {
	int nd;
	int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
	int64_t invol, kvol, outvol;
};

/* Read node n's strides, dilations, pads and auto_pad for input x (N, C,
 * spatial...) and kernel sizes ks[nd]; compute the output sizes. pool:
 * ceil_mode applies (and windows that would start in the end padding are
 * dropped). Defined in runtime/ops_conv.c; 0, or -1 with a message. */
int loom_cpu_geo_fwd(loom_graph *g, const loom_node *n, char *err, size_t errlen, const loom_tensor *x,
		     const int64_t *ks, int pool, struct loom_cpu_geo *p);

/* double -> int64 without undefined behaviour: toward zero, saturating, NaN -> 0 */
static inline int64_t loom_cpu_f2i(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

/* Element i of p (of dtype dt) as int64; uint64 reinterpreted, floats
 * truncated (loom_cpu_f2i), bool 0/1, an unknown dtype 0. */
static inline int64_t loom_cpu_get_i(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case LOOM_DT_INT64: return ((const int64_t *)p)[i];
	case LOOM_DT_INT32: return ((const int32_t *)p)[i];
	case LOOM_DT_INT16: return ((const int16_t *)p)[i];
	case LOOM_DT_INT8: return ((const int8_t *)p)[i];
	case LOOM_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
	case LOOM_DT_UINT32: return ((const uint32_t *)p)[i];
	case LOOM_DT_UINT16: return ((const uint16_t *)p)[i];
	case LOOM_DT_UINT8: return ((const uint8_t *)p)[i];
	case LOOM_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
	case LOOM_DT_FLOAT: return loom_cpu_f2i(((const float *)p)[i]);
	case LOOM_DT_DOUBLE: return loom_cpu_f2i(((const double *)p)[i]);
	default: return 0;
	}
}

#ifdef __cplusplus
}
#endif
#endif
