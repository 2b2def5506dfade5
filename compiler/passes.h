/* passes.h - Loom's graph passes (compiler/passes.c) on the IR of
 * ir/ir.h, the first stage of `loom compile`: constant folding,
 * Identity / inference-mode Dropout removal, dead-node elimination,
 * BatchNormalization folding into the preceding Conv, Gemm or MatMul + Add,
 * and fusion annotations (Conv/Gemm/MatMul [+ bias Add] + Relu/Clip/LeakyRelu,
 * Add + Relu) for the code generator.
 *
 * Every pass keeps the graph valid for the reference executor (include/
 * loom/cpu_ops.h): nodes stay in topological order, every tensor index
 * stays valid (tensors that lose all their users stay in g->tensors, unused),
 * graph input and output names are kept. Passes return 0, or -1 with a
 * message in err naming the node, its op type and the tensor involved.
 * No global state: counters and the fusion table live in loom_pass_stats. */
#ifndef LOOM_PASSES_H
#define LOOM_PASSES_H

#include <stddef.h>
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One fusion group found by loom_pass_fuse: indices into g->nodes, valid
 * until the graph is changed again. node is the Conv/Gemm/MatMul (or the
 * Add of Add + Relu); bias_node the Add that adds a constant bias to a
 * MatMul/Conv/Gemm output, -1 if none; act_node the Relu/Clip/LeakyRelu,
 * -1 if none (a group has at least one of bias_node, act_node). The
 * activation and bias nodes stay in the graph: the annotation changes no
 * semantics of the reference executor. */
typedef struct loom_fusion {
	int node;
	int bias_node;
	int act_node;
} loom_fusion;

/* What the passes did. Start from a zeroed struct; the counters add up
 * over passes; loom_pass_fuse replaces the fusion table. Free the table
 * with loom_pass_stats_free. */
typedef struct loom_pass_stats {
	int nodes_before;        /* set by loom_simplify */
	int nodes_after;         /* set by loom_simplify */
	int folded;              /* nodes replaced by constants */
	int identities_removed;  /* Identity / Dropout nodes removed */
	int identities_kept;     /* kept to preserve a graph output name */
	int dead_removed;        /* nodes whose outputs reached no graph output */
	int bn_folded;           /* BatchNormalization nodes folded away */
	int muls_folded;         /* Mul by a constant scale folded into the weights before it */
	int convs_trimmed;       /* Conv kernels trimmed of taps that read only padding */
	loom_fusion *fusions;    /* owned */
	int nfusions;
} loom_pass_stats;

void loom_pass_stats_free(loom_pass_stats *st);

/* 1. Shape inference plus constant folding (loom_graph_infer evaluates the
 * nodes whose inputs are all constant with the CPU kernels); those nodes are
 * removed, their outputs stay as initializers (is_const, data). Random*
 * operators are not removed. Also leaves every tensor's shape inferred. */
int loom_pass_fold_constants(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* 2. Removes Identity and inference-mode Dropout (no training_mode input,
 * or a constant false one; the mask output unused), rewiring the consumers
 * to the input. When the output is a graph output, the producer of the
 * input is made to write the graph output tensor directly; when that is
 * impossible (the input is a graph input, a constant or a graph output
 * itself) the node is kept. */
int loom_pass_remove_identity(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* 3. Removes nodes none of whose outputs reach a graph output. */
int loom_pass_dead_nodes(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* 4. Folds an inference BatchNormalization into the Conv, the Gemm (rank-2
 * output, any transB; bias C per output column or scalar) or the
 * MatMul(x, W [K, M]) + bias Add (rank-2 output) that produces its input
 * when that output (and the MatMul's) feeds only the BN (the Add) and the
 * weights, bias and BN parameters are constant floats: w' = w * s, b' = (b - mean)
 * * s + beta with s = gamma / sqrt(var + eps) per output channel (double
 * math, stored float, in new initializers; the old ones are left alone). */
int loom_pass_fold_batchnorm(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* 4b. Trims each Conv's constant kernel of the rows and columns (leading or
 * trailing) whose taps read only padding for every output position, e.g. a
 * 3x3 kernel of dilation 24 on a 14x14 input with pads 24 is its centre
 * tap: a 1x1 kernel, pads moved by the taps removed (explicit pads,
 * auto_pad NOTSET), dilation 1 where one tap is left. The outputs are the
 * same (the padding is zero); not when a pad would become negative. */
int loom_pass_trim_taps(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* 5. Fills st->fusions (see loom_fusion). Does not change the graph. */
int loom_pass_fuse(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

/* Runs passes 1 to 5 in order (and dead-node elimination again after
 * BatchNormalization folding, before 4b); sets nodes_before / nodes_after. */
int loom_simplify(loom_graph *g, loom_pass_stats *st, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
