/* lower.c - the lowering driver (compile_internal.h): every node in
 * topological order goes to the NPU lowering its operator's row of the
 * operator table names (runtime/ops.def's NPU column) or stays a float CPU
 * node with the reason. The lowering table below holds, per family, the
 * function and what docs/OPERATORS.md says of it (loom ops). */
#include "compiler/compile_internal.h"

#include <stdlib.h>
#include <string.h>

/* Reshape: a channel shuffle's first Reshape (to rank 5), else an alias */
static const char *lower_reshape(cc *c, int ni)
{
	if (c->g->tensors[c->g->nodes[ni].outputs[0]].rank == 5)
		return lower_shuffle(c, ni);
	return lower_alias(c, ni);
}

/* Add / Mul: ELTWISE, or with a constant scalar operand a LUT */
static const char *lower_addmul(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	int nconst = 0;
	for (int i = 0; i < n->ninputs; i++)
		if (n->inputs[i] >= 0 && c->g->tensors[n->inputs[i]].is_const &&
		    loom_tensor_numel(&c->g->tensors[n->inputs[i]]) == 1)
			nconst++;
	return nconst ? lower_lut(c, ni) : lower_eltwise(c, ni);
}

/* The NPU lowerings, one per family of runtime/ops.def's NPU column: the
 * function (NULL, or why the node stays on the CPU), the layer it makes and
 * the conditions it needs. docs/OPERATORS.md's table is printed from these
 * rows and the operator table (loom ops --markdown). */
static const struct lowering {
	const char *(*fn)(cc *c, int ni);
	loom_lowering_doc doc;
} lowerings[LOOM_NPU_COUNT] = {
	[LOOM_NPU_CONV] = {lower_conv,
			   {NULL,
			    "CONV on the array; depthwise (group = C_in = C_out): DWCONV on the vector unit; other "
			    "groups: CONV layers with block-diagonal weights, one per block of lcm(channels per group, array "
			    "rows) input channels (one layer when that is all of them or does not divide them)",
			    "1-D or 2-D; constant weights (and bias); kernel, stride, dilation 1..15; pads below the "
			    "dilated kernel extent; any auto_pad; group dividing the channels"}},
	[LOOM_NPU_GEMM] = {lower_gemm,
			   {NULL, "GEMM (a 1x1 CONV)",
			    "constant B of rank 2 (any transB), transA = 0, alpha and beta folded; Gemm: constant C per "
			    "column or scalar; MatMul: A rank 2, or rank >= 3 in the row layout ([..., M, K]: a "
			    "transformer's Linear layers) unless A is already an [N,C,H,W] image, and a following Add "
			    "of a constant [N] is its bias"}},
	[LOOM_NPU_POOL] = {lower_pool,
			   {NULL, "POOL MAX (MaxPool, GlobalMaxPool); POOL AVG with the divisor in the multiplier "
				  "(AveragePool, GlobalAveragePool)",
			    "1-D or 2-D, no indices output; ceil_mode by extra end padding (max only); average: "
			    "count_include_pad = 1 or no padding; window up to 255"}},
	[LOOM_NPU_CONCAT] = {lower_concat,
			     {NULL,
			      "one POOL 1x1 copy per input into its channel slice (MAX when the scales agree, AVG to "
			      "rescale)",
			      "along channels; batch 1; slices at multiples of 4 channels; no constant input"}},
	[LOOM_NPU_RESHAPE] = {lower_reshape,
			      {NULL,
			       "an alias (no work); Reshape -> Transpose(0,2,1,3,4) -> Reshape (channel shuffle): a 1x1 "
			       "CONV with a permutation of weights 2 and multiplier 1/2 (exact)",
			       "alias: the same NHWC bytes before and after, input on the device; shuffle: "
			       "[1,C,H,W] -> [1,G,C/G,H,W] -> back"}},
	[LOOM_NPU_ALIAS] = {lower_alias,
			    {NULL, "an alias (no work); into a Gemm or MatMul: folded into its weight rows",
			     "the same NHWC bytes before and after (e.g. [1,C,1,1] -> [1,C]), input on the device; "
			     "Transpose: an [N,C,H,W] image to [N,H,W,C] in the row layout or back (perm (0,2,3,1), "
			     "(0,3,1,2); rank 3: (0,2,1))"}},
	[LOOM_NPU_SLICE] = {lower_slice,
			    {NULL, "POOL 1x1 copy",
			     "[1,C,H,W] along channels, constant starts and axes, step 1, start at a multiple of 4 "
			     "channels"}},
	[LOOM_NPU_BN] = {lower_bn,
			 {NULL,
			  "folded into the Conv / Gemm / MatMul before it (compiler/passes.c), or a 1x1 DWCONV when "
			  "standalone",
			  "inference form on an image, constant parameters"}},
	[LOOM_NPU_PAD] = {lower_pad,
			  {NULL, "a 1x1 DWCONV of weight 1 with the padding (exact copy)",
			   "[N,C,H,W], constant mode, value 0, constant pads of H and W only, at most 255 per side, no "
			   "cropping"}},
	[LOOM_NPU_REDUCEMEAN] = {lower_reducemean,
				 {NULL, "POOL AVG, the divisor in the multiplier",
				  "the mean over H and W of [1,C,H,W]; window up to 255"}},
	[LOOM_NPU_ADDMUL] = {lower_addmul,
			     {NULL,
			      "ELTWISE (ADD with per-input multipliers, MUL); with a constant scalar operand: LUT",
			      "the same shape, or the second operand per channel ([1,C,1,1], squeeze-excitation); a "
			      "constant operand goes to the const region; not both inputs computed on the CPU"}},
	[LOOM_NPU_LUT] = {lower_lut,
			  {NULL,
			   "LUT: 256 entries, the node's own CPU kernel evaluated on the 256 dequantized inputs",
			   "one activation input on the device (or a graph input), other operands constant scalars "
			   "(Div: the activation is the dividend), output of the input's shape; continuous, "
			   "well-conditioned functions only (Exp, Log, Sqrt, Reciprocal, Round, Sign, ThresholdedRelu "
			   "stay in float)"}},
};

/* what no single operator's row says: fusions and patterns */
static const loom_lowering_doc patterns[] = {
	{"Relu, Clip (Relu6) after Conv / Gemm / MatMul / Add / pooling", "the layer's output clamp",
	 "the producer has no other reader; Clip bounds constant"},
	{"Flatten / Reshape into Gemm or MatMul", "the Gemm reads the NHWC image with its weight rows reordered",
	 "the Flatten's only reader is the Gemm; otherwise an alias or the CPU"},
	{"a function of one activation written as several nodes: SiLU x * Sigmoid(x), HardSwish x * HardSigmoid(x), "
	 "GELU x * 0.5 * (1 + Erf(x / sqrt(2))), Mish x * Tanh(Softplus(x)), ...",
	 "one LUT (the nodes' CPU kernels evaluated together on the 256 dequantized inputs)",
	 "LUT and Add / Mul / Sub / Div nodes whose operands are that activation, each other's outputs or scalar "
	 "constants (a Div's divisor constant), all of one shape; nothing else reads the inner tensors"},
	{"QuantizeLinear -> DequantizeLinear (QDQ models)",
	 "removed; the tensor keeps the pair's scale and zero point (uint8 shifted to int8)",
	 "per-tensor constant scale and zero point, the pair's scales equal"},
	{"Conv / Gemm / MatMul + bias as a graph output", "int32 accumulators dequantized per channel on the host",
	 "nothing else reads the output"},
};

const loom_lowering_doc *loom_lowering_doc_of(int family)
{
	return family > LOOM_NPU_NONE && family < LOOM_NPU_COUNT ? &lowerings[family].doc : NULL;
}

const loom_lowering_doc *loom_lowering_patterns(int *n)
{
	*n = (int)(sizeof patterns / sizeof patterns[0]);
	return patterns;
}

/* A node to the NPU: its operator's lowering family (runtime/ops.def), or
 * why it stays on the CPU. */
static const char *lower_node(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	if (n->domain[0])
		return "not the default ONNX domain";
	for (int i = 0; i < n->noutputs; i++) {
		int t = n->outputs[i];
		if (t >= 0 && c->g->tensors[t].dtype != LOOM_DT_FLOAT)
			return "output is not float";
	}
	const loom_cpu_op *op = loom_cpu_op_any(n->op_type);
	if (!op || op->npu <= LOOM_NPU_NONE || op->npu >= LOOM_NPU_COUNT)
		return "no NPU lowering";
	return lowerings[op->npu].fn(c, ni);
}

int cpu_node(cc *c, int ni, const char *reason)
{
	loom_graph *g = c->g;
	const loom_node *n = &g->nodes[ni];
	if (!loom_cpu_op_find(n->op_type, g->opset) || n->domain[0])
		return cc_fail(c, "node '%s' (%s%s%s, opset %lld): no NPU lowering (%s) and no CPU kernel", n->name,
			    n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, (long long)g->opset,
			    reason);
	for (int i = 0; i < n->ninputs; i++)
		if (n->inputs[i] >= 0 && ensure_host(c, n->inputs[i]))
			return cc_fail(c, "out of memory");
	int s = add_step(c, LOOM_STEP_CPU);
	if (s < 0)
		return cc_fail(c, "out of memory");
	c->m->steps[s].node = ni;
	for (int i = 0; i < n->noutputs; i++)
		if (n->outputs[i] >= 0) {
			c->lo.on_host[n->outputs[i]] = 1;
			c->m->mt[n->outputs[i]].host = 1;
		}
	cc_why(c, ni, LOOM_WHERE_CPU, "%s", reason);
	return 0;
}

/* the deferred producers of node ni's inputs run on the CPU first (theirs
 * before them) */
static int undefer_inputs(cc *c, int ni)
{
	const loom_node *n = &c->g->nodes[ni];
	for (int k = 0; k < n->ninputs; k++) {
		int d = n->inputs[k] >= 0 ? c->prod[n->inputs[k]] : -1;
		if (d >= 0 && c->lo.deferred[d]) {
			c->lo.deferred[d] = 0;
			if (undefer_inputs(c, d) || cpu_node(c, d, "its consumer runs on the CPU"))
				return -1;
		}
	}
	return 0;
}

int lower_all(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < g->ninputs; i++) {
		c->lo.on_host[g->inputs[i]] = 1;
		c->m->mt[g->inputs[i]].host = 1;
	}
	find_ew_regions(c);
	for (int ni = 0; ni < c->nn; ni++) {
		if (c->lo.done[ni])
			continue;
		const char *reason;
		int first = c->lo.nlw;
		if (c->lo.keep[ni]) {
			reason = "--keep-float";
		} else {
			int all_ready = 1;
			const loom_node *n = &g->nodes[ni];
			for (int k = 0; k < n->ninputs; k++)
				if (n->inputs[k] >= 0 && !g->tensors[n->inputs[k]].is_const &&
				    !c->lo.on_host[n->inputs[k]] && !c->lo.on_dev[n->inputs[k]] &&
				    !(c->prod[n->inputs[k]] >= 0 && c->lo.deferred[c->prod[n->inputs[k]]]))
					all_ready = 0;
			reason = !all_ready		      ? "an input is computed later"
				 : c->lo.ewroot[ni] == ni + 1 ? lower_lut_region(c, ni)
							      : lower_node(c, ni);
		}
		if (!reason) {
			c->lo.done[ni] = 1;
			if (c->lo.deferred[ni]) {
				cc_why(c, ni, LOOM_WHERE_FUSED, "deferred into its consumer");
				continue;
			}
			if (c->lo.nlw == first) { /* an alias */
				c->lo.on_dev[g->nodes[ni].outputs[0]] = 1;
				cc_why(c, ni, LOOM_WHERE_FUSED, "alias of %s (same NHWC image)",
				    g->tensors[g->nodes[ni].inputs[0]].name);
				continue;
			}
			int k0 = c->lo.lws[first].kind, k1 = c->lo.lws[c->lo.nlw - 1].kind;
			if (k0 == k1 && k0 == LOOM_LAYER_CONV && c->lo.lws[first].cp.res)
				cc_why(c, ni, LOOM_WHERE_NPU, "%s + add", loom_layer_kind_name(k0));
			else if (k0 == k1 && host_xpad(c, c->lo.lws[first].in[0])) /* lower_conv.c conv_xpack */
				cc_why(c, ni, LOOM_WHERE_NPU, "%s (input padded by the host)", loom_layer_kind_name(k0));
			else if (k0 == k1)
				cc_why(c, ni, LOOM_WHERE_NPU, "%s", loom_layer_kind_name(k0));
			else /* a Conv as a padded copy and the packed CONV (lower_conv.c) */
				cc_why(c, ni, LOOM_WHERE_NPU, "%s + %s", loom_layer_kind_name(k0), loom_layer_kind_name(k1));
			if (c->rep)
				c->rep->nodes[ni].layer = first;
			if (place_layers(c, first))
				return cc_fail(c, "out of memory");
			continue;
		}
		c->lo.done[ni] = 1;
		if (undefer_inputs(c, ni) || cpu_node(c, ni, reason))
			return -1;
	}
	if (finish_raw(c))
		return -1;
	for (int i = 0; i < g->noutputs; i++) {
		c->pl.time++;
		if (ensure_host(c, g->outputs[i]))
			return cc_fail(c, "out of memory");
	}
	return 0;
}
