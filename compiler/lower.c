/* lower.c - the lowering driver (compile_internal.h): every node in
 * topological order goes to its operator's NPU lowering (the operator
 * table, runtime/ops.def) or stays a float CPU node with the reason. */
#include "compiler/compile_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *lower_node(cc *c, int ni)
{
	const char *op = c->g->nodes[ni].op_type;
	if (c->g->nodes[ni].domain[0])
		return "not the default ONNX domain";
	for (int i = 0; i < c->g->nodes[ni].noutputs; i++) {
		int t = c->g->nodes[ni].outputs[i];
		if (t >= 0 && c->g->tensors[t].dtype != LOOM_DT_FLOAT)
			return "output is not float";
	}
	if (!strcmp(op, "Conv"))
		return lower_conv(c, ni);
	if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
		return lower_gemm(c, ni);
	if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "GlobalAveragePool") ||
	    !strcmp(op, "GlobalMaxPool"))
		return lower_pool(c, ni);
	if (!strcmp(op, "Concat"))
		return lower_concat(c, ni);
	if (!strcmp(op, "Reshape") && c->g->tensors[c->g->nodes[ni].outputs[0]].rank == 5)
		return lower_shuffle(c, ni);
	if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
		return lower_alias(c, ni);
	if (!strcmp(op, "Slice"))
		return lower_slice(c, ni);
	if (!strcmp(op, "BatchNormalization"))
		return lower_bn(c, ni);
	if (!strcmp(op, "Pad"))
		return lower_pad(c, ni);
	if (!strcmp(op, "ReduceMean"))
		return lower_reducemean(c, ni);
	if (!strcmp(op, "Add") || !strcmp(op, "Mul")) {
		const loom_node *n = &c->g->nodes[ni];
		int nconst = 0;
		for (int i = 0; i < n->ninputs; i++)
			if (n->inputs[i] >= 0 && c->g->tensors[n->inputs[i]].is_const &&
			    loom_tensor_numel(&c->g->tensors[n->inputs[i]]) == 1)
				nconst++;
		if (!nconst)
			return lower_eltwise(c, ni);
	}
	return lower_lut(c, ni);
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

int lower_all(cc *c)
{
	loom_graph *g = c->g;
	for (int i = 0; i < g->ninputs; i++) {
		c->lo.on_host[g->inputs[i]] = 1;
		c->m->mt[g->inputs[i]].host = 1;
	}
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
			reason = all_ready ? lower_node(c, ni) : "an input is computed later";
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
			cc_why(c, ni, LOOM_WHERE_NPU, "%s", loom_layer_kind_name(c->lo.lws[first].kind));
			if (c->rep)
				c->rep->nodes[ni].layer = first;
			if (place_layers(c, first))
				return cc_fail(c, "out of memory");
			continue;
		}
		c->lo.done[ni] = 1;
		const loom_node *n = &g->nodes[ni];
		for (int k = 0; k < n->ninputs; k++) { /* a deferred producer runs on the CPU first */
			int d = n->inputs[k] >= 0 ? c->prod[n->inputs[k]] : -1;
			if (d >= 0 && c->lo.deferred[d]) {
				c->lo.deferred[d] = 0;
				if (cpu_node(c, d, "its consumer runs on the CPU"))
					return -1;
			}
		}
		if (cpu_node(c, ni, reason))
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
