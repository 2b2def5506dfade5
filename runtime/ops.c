/* ops.c - Loom's operator table (runtime/cpu_ops.h): loom_cpu_ops[], one
 * row per line of runtime/ops.def, and its lookups: loom_cpu_op_find (the
 * kernel for an opset), loom_cpu_op_any (the operator whatever the opset)
 * and loom_npu_family_name. No global state besides the constant table. */
#include "runtime/cpu_ops.h"
#include "ops_internal.h"

#include <string.h>

const loom_cpu_op loom_cpu_ops[] = {
#define LOOM_OP(op, min_opset, infer, run, npu) {#op, min_opset, infer, run, LOOM_NPU_##npu},
#include "ops.def"
#undef LOOM_OP
	{NULL, 0, NULL, NULL, LOOM_NPU_NONE},
};

const loom_cpu_op *loom_cpu_op_find(const char *op_type, int64_t opset)
{
	const loom_cpu_op *best = NULL;
	if (!op_type)
		return NULL;
	for (const loom_cpu_op *o = loom_cpu_ops; o->op_type; o++)
		if (!strcmp(o->op_type, op_type) && o->min_opset <= opset &&
		    (!best || o->min_opset > best->min_opset))
			best = o;
	return best;
}

const loom_cpu_op *loom_cpu_op_any(const char *op_type)
{
	if (!op_type)
		return NULL;
	for (const loom_cpu_op *o = loom_cpu_ops; o->op_type; o++)
		if (!strcmp(o->op_type, op_type))
			return o;
	return NULL;
}

const char *loom_npu_family_name(int f)
{
	static const char *const names[LOOM_NPU_COUNT] = {
		[LOOM_NPU_NONE] = "none",
		[LOOM_NPU_CONV] = "conv",
		[LOOM_NPU_GEMM] = "gemm",
		[LOOM_NPU_POOL] = "pool",
		[LOOM_NPU_CONCAT] = "concat",
		[LOOM_NPU_RESHAPE] = "reshape",
		[LOOM_NPU_ALIAS] = "alias",
		[LOOM_NPU_SLICE] = "slice",
		[LOOM_NPU_BN] = "bn",
		[LOOM_NPU_PAD] = "pad",
		[LOOM_NPU_REDUCEMEAN] = "reducemean",
		[LOOM_NPU_ADDMUL] = "addmul",
		[LOOM_NPU_LUT] = "lut",
	};
	return f >= 0 && f < LOOM_NPU_COUNT && names[f] ? names[f] : "?";
}
