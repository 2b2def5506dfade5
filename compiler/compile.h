/* compile.h - `loom compile` as a library (compiler/compile.c): an imported
 * ONNX graph (ir/ir.h) -> simplification and fusion (passes.h) ->
 * calibration (calib.h) -> INT8 quantization and lowering of every node the
 * NPU can run to a kernel layer (compiler/npu/npu.h), the rest kept in
 * float for the CPU -> steps (CPU nodes, quantize / dequantize at the
 * boundaries, NPU jobs) -> device memory planning by liveness -> program
 * emission and static verification -> a loom_model (ir/model.h).
 * A report says, per node, where it runs and why. */
#ifndef LOOM_COMPILE_H
#define LOOM_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwcfg.h"
#include "compiler/calib.h"
#include "compiler/npu/npu.h"
#include "ir/ir.h"
#include "ir/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_compile_opts {
	const char *calib_dir;   /* --calib DIR; NULL: random N(0, 1) inputs (a warning in the report) */
	int calib_method;        /* enum loom_calib_method */
	double percentile;       /* LOOM_CALIB_PERCENTILE */
	int random_samples;      /* without calib_dir or calib_inputs; 0: 4 */
	const loom_tensor *calib_inputs; /* without calib_dir: one sample in memory (loom_calib_bind) */
	int calib_ninputs;
	const char *keep_float;  /* comma-separated node names kept in float on the CPU, or NULL */
	const char *tensor_methods; /* "TENSOR=METHOD,...": a calibration method (loom_calib_method_of)
				       for these activation tensors (names after simplification), the
				       others calib_method; NULL: none (loom compile --accuracy's choice) */
	int bias_correction;     /* 1: each Conv / Gemm's bias corrected for the rounding of its
				    weights: b[c] -= sum_k (q(w[c,k]) - w[c,k]) * E[x_k], E over the
				    calibration data (the mean image of its input, KEEP_MEAN) */
	int equalize;            /* 1: cross-layer equalization of Conv / Gemm pairs (weight ranges of
				    a layer's output channels balanced with the next one's input
				    channels through Relu / LeakyRelu / MaxPool) before calibration;
				    not for QDQ models. A calibration for reuse (calib) must come
				    from a compile with the same setting. */
	unsigned calib_keep;     /* LOOM_CALIB_KEEP_* kept beyond what these options need (for a
				    calib_out reused by compiles with other methods) */
	uint64_t base;           /* DRAM address of the model image; 0: 0x10000 */
	int arena_no_reuse;      /* every activation its own buffer, none reused (to read
				    intermediate tensors back after a run: tests/models/xcfg.sh) */
	int threads;             /* threads timing the planners' candidate programs (compiler/npu/memo.c;
				    the plans do not depend on it); 0: the online CPUs, at most 8 */
	const char *options;     /* the command line options, stored in the model */
	const char *source;      /* the ONNX file name, stored in the model */
	/* Calibration reuse: calibration (the float graph run over every
	 * sample) is the slow part of a compile and does not depend on the
	 * configuration. calib_out non-NULL: *calib_out receives this compile's
	 * calibration (the caller frees it with loom_calib_free; NULL when the
	 * compile failed before calibrating). calib non-NULL: the calibration of
	 * an earlier compile of the same model with the same options (calib_out
	 * of that compile), used instead of running calibration again; a
	 * calibration of another graph or method is refused. The result is the
	 * same model as without reuse (tests/unit/test_compile.c). */
	const loom_calib *calib;
	loom_calib **calib_out;
	/* Plan reuse: non-NULL: the tile plans of earlier compiles for the same
	 * configuration (compiler/npu/memo.c; the caller's loom_plan_memo_new,
	 * freed by the caller), looked up and added to instead of a memo of
	 * this compile's own. A plan depends on the configuration and the
	 * layer's shape, not on its values, so the model is the same as
	 * without (tests/unit/test_sweep.c); compiles of one model that
	 * differ in quantization only (loom compile --accuracy's trials) then
	 * plan and time each layer shape once in all. The report counts this
	 * compile's lookups and timings only. */
	loom_plan_memo *plans;
} loom_compile_opts;

enum loom_where { LOOM_WHERE_CPU = 0, LOOM_WHERE_NPU = 1, LOOM_WHERE_FUSED = 2 };

typedef struct loom_node_report {
	char name[96], op_type[32];
	int where;               /* enum loom_where */
	char why[160];           /* CPU: the fallback reason; FUSED: "into NAME" */
	int layer;               /* NPU: the layer index, else -1 */
	uint64_t macs;           /* multiply-accumulates of the node (Conv/Gemm/MatMul) */
} loom_node_report;

/* One NPU layer's kernel parameters as the lowering made them (no
 * hints): with loom_conv_plan_make / loom_vec_plan_make they give the
 * layer's plan for any configuration without compiling again (loom sweep
 * re-plans them per design point). The lowering itself does not depend on
 * the configuration except where a planner refuses a layer (then the
 * compile keeps the node on the CPU). */
typedef struct loom_layer_kparams {
	int kind;                /* enum loom_layer_kind (ir/model.h) */
	int node;                /* its main node: an index into loom_compile_report.nodes */
	loom_conv_params cp;     /* CONV, GEMM (a GEMM in its 1x1-convolution form, loom_gemm_to_conv) */
	loom_vec_params vp;      /* POOL, DWCONV, ELTWISE, LUT */
} loom_layer_kparams;

typedef struct loom_compile_report {
	loom_node_report *nodes; /* one per node of the simplified graph */
	int nnodes;
	int nodes_onnx;          /* before simplification */
	int folded, identities_removed, dead_removed, bn_folded;
	int convs_trimmed;       /* Conv kernels trimmed of taps that read only padding */
	int muls_folded;         /* Mul by a constant scale folded into the weights before it */
	int qdq_pairs;           /* QuantizeLinear/DequantizeLinear pairs whose scales were kept */
	int calib_samples;
	int calib_random;        /* calibrated on random inputs */
	uint64_t macs_npu, macs_cpu;
	int nodes_cpu, nodes_npu;
	uint64_t est_cycles;     /* NPU layers */
	loom_layer_kparams *layers; /* one per layer of the model (loom_model.layers), in order */
	int nlayers;
	int calib_reused;        /* the calibration came from loom_compile_opts.calib */
	int bias_corrected;      /* layers whose bias was corrected (bias_correction) */
	int equalized;           /* Conv / Gemm pairs equalized (equalize) */
	double bias_shift_max;   /* the largest |correction| / max |bias| of a layer's channel */
	/* seconds per stage, wall-clock and CPU (every thread's): simplification,
	 * calibration, quantization and lowering (with memory planning),
	 * planning (timing the tile planners' candidate programs: the layer
	 * shapes' plans, compiler/npu/memo.c), emission */
	double simplify_s, calib_s, lower_s, plan_s, emit_s;
	double simplify_cpu, calib_cpu, lower_cpu, plan_cpu, emit_cpu;
	int threads;             /* threads of calibration and planning */
	uint64_t shapes_planned; /* layer shapes planned ... */
	uint64_t plans_reused;   /* ... and lookups that took an earlier layer's plan */
	uint64_t programs_timed; /* candidate programs timed by the timing model (common/tsim.h) */
} loom_compile_report;

/* Compile g (takes ownership: freed on failure, owned by *out on success)
 * for cfg. rep may be NULL; otherwise free it with loom_compile_report_free.
 * 0, or -1 with a message naming the node, op type and opset / the file. */
int loom_compile(loom_graph *g, const loom_hwcfg *cfg, const loom_compile_opts *o, loom_model **out,
		 loom_compile_report *rep, char *err, size_t errlen);
void loom_compile_report_free(loom_compile_report *rep);

/* What the NPU lowerings say of themselves (compiler/lower.c), for
 * `loom ops` and docs/OPERATORS.md: the layer a node becomes and the
 * conditions it needs (otherwise it runs on the CPU). */
typedef struct loom_lowering_doc {
	const char *ops;        /* a pattern's operators (NULL for a family: its ops.def rows) */
	const char *layer;
	const char *conditions;
} loom_lowering_doc;
/* family: enum loom_npu_family (runtime/cpu_ops.h), NONE excluded; NULL if out of range */
const loom_lowering_doc *loom_lowering_doc_of(int family);
/* fusions and patterns no single operator row describes: *n of them */
const loom_lowering_doc *loom_lowering_patterns(int *n);


#ifdef __cplusplus
}
#endif
#endif
