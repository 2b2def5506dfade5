/* cpu.c - Loom's reference executor (runtime/cpu_ops.h): finds each
 * node's kernel in the operator table (runtime/ops.c), infers the shapes of
 * a whole graph (folding nodes whose inputs are all constant, so that shape
 * inputs such as Reshape's carry their values), and runs a graph node by
 * node.
 *
 * Errors name the node, its op type and the opset; a node without a kernel
 * fails with "node NAME: operator OP (opset N) has no CPU kernel". No
 * global state: everything lives in the loom_graph. */
#include "runtime/cpu_ops.h"
#include "cpu_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int loom_cpu_fail(const loom_graph *g, const loom_node *n, char *err, size_t errlen,
		  const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "node '%s' (%s, opset %lld): %s", n->name, n->op_type,
			 (long long)g->opset, msg);
	return -1;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ------------------------------------------------------------------ helpers */

int loom_broadcast_shape(const loom_tensor *a, const loom_tensor *b, int *rank, int64_t *dims)
{
	const loom_tensor *t[2] = {a, b};
	return loom_cpu_bcast_shape(2, t, rank, dims);
}

int loom_tensor_set_data(loom_tensor *t, const void *data, size_t n)
{
	void *p;
	if (!t || n != loom_tensor_bytes(t) || (n && !data))
		return -1;
	if (t->data && t->cap == n && n && t->data != data) { /* reuse the buffer */
		memmove(t->data, data, n);
		return 0;
	}
	p = malloc(n ? n : 1);
	if (!p)
		return -1;
	if (n)
		memcpy(p, data, n);
	free(t->data);
	t->data = p;
	t->cap = n;
	return 0;
}

static int is_default_domain(const loom_node *n)
{
	return !n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

/* (Re)allocate a zeroed buffer of loom_tensor_bytes(t) for every output.
 * A Conv's output buffer of the last run is not zeroed again: its kernel
 * (runtime/ops_conv.c) sets every element to the bias before the product
 * adds to it. */
static int alloc_outputs(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	int overwrites = !strcmp(n->op_type, "Conv") && is_default_domain(n);
	for (int i = 0; i < n->noutputs; i++) {
		loom_tensor *t = loom_node_out(g, n, i);
		size_t bytes;
		if (!t)
			continue;
		bytes = loom_tensor_bytes(t);
		if (t->data && t->cap == bytes && bytes) { /* the buffer of the last run */
			if (!overwrites)
				memset(t->data, 0, bytes);
			continue;
		}
		free(t->data);
		t->data = calloc(1, bytes ? bytes : 1);
		t->cap = t->data ? bytes : 0;
		if (!t->data)
			return loom_cpu_fail(g, n, err, errlen, "out of memory for output '%s' (%zu bytes)",
					     t->name, bytes);
	}
	return 0;
}

/* every present input constant with its values known (a node with no
 * inputs counts as constant) */
static int inputs_const(loom_graph *g, const loom_node *n)
{
	for (int i = 0; i < n->ninputs; i++) {
		const loom_tensor *t = loom_node_in(g, n, i);
		if (t && (!t->is_const || !t->data))
			return 0;
	}
	return 1;
}

/* the kernel of node n, or an error naming it */
static const loom_cpu_op *node_kernel(loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	const loom_cpu_op *op = is_default_domain(n) ? loom_cpu_op_find(n->op_type, g->opset) : NULL;
	if (!op) {
		if (is_default_domain(n))
			fail(err, errlen, "node %s: operator %s (opset %lld) has no CPU kernel", n->name,
			     n->op_type, (long long)g->opset);
		else
			fail(err, errlen, "node %s: operator %s.%s (opset %lld) has no CPU kernel", n->name,
			     n->domain, n->op_type, (long long)g->opset);
	}
	return op;
}

/* ------------------------------------------------------------------ inference */

/* Attribute names whose type is the same in every ONNX operator that has
 * them: an attribute of another type is refused (a kernel reading it with
 * loom_attr_ints & co. would silently take the default instead). */
static const struct {
	const char *name;
	int type;
} attr_types[] = {
	{"strides", LOOM_ATTR_INTS}, {"pads", LOOM_ATTR_INTS}, {"dilations", LOOM_ATTR_INTS},
	{"kernel_shape", LOOM_ATTR_INTS}, {"output_padding", LOOM_ATTR_INTS}, {"output_shape", LOOM_ATTR_INTS},
	{"perm", LOOM_ATTR_INTS}, {"axes", LOOM_ATTR_INTS}, {"starts", LOOM_ATTR_INTS}, {"ends", LOOM_ATTR_INTS},
	{"group", LOOM_ATTR_INT}, {"axis", LOOM_ATTR_INT}, {"keepdims", LOOM_ATTR_INT}, {"transA", LOOM_ATTR_INT},
	{"transB", LOOM_ATTR_INT}, {"ceil_mode", LOOM_ATTR_INT}, {"count_include_pad", LOOM_ATTR_INT},
	{"storage_order", LOOM_ATTR_INT}, {"to", LOOM_ATTR_INT}, {"largest", LOOM_ATTR_INT},
	{"sorted", LOOM_ATTR_INT}, {"select_last_index", LOOM_ATTR_INT}, {"noop_with_empty_axes", LOOM_ATTR_INT},
	{"blocksize", LOOM_ATTR_INT}, {"exclude_outside", LOOM_ATTR_INT}, {"alpha", LOOM_ATTR_FLOAT},
	{"beta", LOOM_ATTR_FLOAT}, {"epsilon", LOOM_ATTR_FLOAT}, {"gamma", LOOM_ATTR_FLOAT},
	{"lambd", LOOM_ATTR_FLOAT}, {"cubic_coeff_a", LOOM_ATTR_FLOAT}, {"extrapolation_value", LOOM_ATTR_FLOAT},
	{"auto_pad", LOOM_ATTR_STRING}, {"mode", LOOM_ATTR_STRING},
	{"coordinate_transformation_mode", LOOM_ATTR_STRING}, {"nearest_mode", LOOM_ATTR_STRING},
};

static const char *attr_type_name(int t)
{
	switch (t) {
	case LOOM_ATTR_FLOAT: return "FLOAT";
	case LOOM_ATTR_INT: return "INT";
	case LOOM_ATTR_STRING: return "STRING";
	case LOOM_ATTR_TENSOR: return "TENSOR";
	case LOOM_ATTR_FLOATS: return "FLOATS";
	case LOOM_ATTR_INTS: return "INTS";
	case LOOM_ATTR_STRINGS: return "STRINGS";
	default: return "?";
	}
}

static int check_attr_types(const loom_graph *g, const loom_node *n, char *err, size_t errlen)
{
	for (int a = 0; a < n->nattrs; a++)
		for (size_t k = 0; k < sizeof attr_types / sizeof attr_types[0]; k++)
			if (!strcmp(n->attrs[a].name, attr_types[k].name) && n->attrs[a].type != attr_types[k].type)
				return loom_cpu_fail(g, n, err, errlen, "attribute '%s' is %s, expected %s",
						     n->attrs[a].name, attr_type_name(n->attrs[a].type),
						     attr_type_name(attr_types[k].type));
	return 0;
}

int loom_graph_infer(loom_graph *g, char *err, size_t errlen)
{
	for (int i = 0; i < g->ninputs; i++) {
		const loom_tensor *t = &g->tensors[g->inputs[i]];
		if (t->dtype == LOOM_DT_UNDEFINED || !loom_dtype_size(t->dtype))
			return fail(err, errlen, "graph input '%s' has no supported data type", t->name);
	}
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		const loom_cpu_op *op = node_kernel(g, n, err, errlen);
		if (!op || check_attr_types(g, n, err, errlen))
			return -1;
		for (int j = 0; j < n->ninputs; j++) {
			const loom_tensor *t = loom_node_in(g, n, j);
			if (n->inputs[j] >= 0 && !t)
				return loom_cpu_fail(g, n, err, errlen, "input %d is not a tensor of the graph", j);
			if (t && t->dtype == LOOM_DT_UNDEFINED)
				return loom_cpu_fail(g, n, err, errlen,
						     "input %d '%s' has no known type (no earlier node computes it)",
						     j, t->name);
		}
		for (int j = 0; j < n->noutputs; j++) {
			loom_tensor *t = loom_node_out(g, n, j);
			if (t) /* what the kernel leaves unset stays recognisable */
				t->dtype = LOOM_DT_UNDEFINED;
		}
		if (op->infer(g, n, err, errlen))
			return -1;
		for (int j = 0; j < n->noutputs; j++) {
			const loom_tensor *t = loom_node_out(g, n, j);
			if (!t)
				continue;
			if (!loom_dtype_size(t->dtype))
				return loom_cpu_fail(g, n, err, errlen, "output %d '%s' got no supported data type",
						     j, t->name);
			for (int d = 0; d < t->rank; d++)
				if (t->dims[d] < 0)
					return loom_cpu_fail(g, n, err, errlen,
							     "output %d '%s' has negative dimension %d (%lld)", j,
							     t->name, d, (long long)t->dims[d]);
		}
		/* constant folding: the values are known now, for the shape
		 * inputs of the nodes that follow */
		if (inputs_const(g, n)) {
			if (alloc_outputs(g, n, err, errlen) || op->run(g, n, err, errlen))
				return -1;
			for (int j = 0; j < n->noutputs; j++) {
				loom_tensor *t = loom_node_out(g, n, j);
				if (t)
					t->is_const = 1;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ views */

/* per tensor of g: 1 if a run writes it (a graph input or a node's output) */
static char *run_written(const loom_graph *g)
{
	char *w = calloc((size_t)g->ntensors + 1, 1);
	if (!w)
		return NULL;
	for (int i = 0; i < g->ninputs; i++)
		if (g->inputs[i] >= 0 && g->inputs[i] < g->ntensors)
			w[g->inputs[i]] = 1;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] >= 0 && g->nodes[i].outputs[j] < g->ntensors)
				w[g->nodes[i].outputs[j]] = 1;
	return w;
}

loom_graph *loom_ref_view(const loom_graph *g)
{
	loom_graph *v = malloc(sizeof *v);
	char *w = run_written(g);
	loom_tensor *t = malloc(((size_t)g->ntensors + 1) * sizeof *t);
	if (!v || !w || !t) {
		free(v);
		free(w);
		free(t);
		return NULL;
	}
	*v = *g;
	v->tensors = t;
	for (int i = 0; i < g->ntensors; i++) {
		t[i] = g->tensors[i];
		if (w[i]) {
			t[i].data = NULL;
			t[i].cap = 0;
		}
	}
	free(w);
	return v;
}

void loom_ref_view_free(loom_graph *v)
{
	if (!v)
		return;
	char *w = run_written(v);
	for (int i = 0; i < v->ntensors; i++)
		if (w && w[i]) /* (without w: leaks rather than free what is shared) */
			free(v->tensors[i].data);
	free(w);
	free(v->tensors);
	free(v);
}

/* ------------------------------------------------------------------ execution */

int loom_ref_run(loom_graph *g, char *err, size_t errlen)
{
	for (int i = 0; i < g->ninputs; i++) {
		const loom_tensor *t = &g->tensors[g->inputs[i]];
		if (!t->data)
			return fail(err, errlen, "graph input '%s' has no data", t->name);
	}
	if (loom_graph_infer(g, err, errlen))
		return -1;
	for (int i = 0; i < g->nnodes; i++) {
		const loom_node *n = &g->nodes[i];
		const loom_cpu_op *op;
		if (inputs_const(g, n)) /* folded by loom_graph_infer */
			continue;
		op = node_kernel(g, n, err, errlen);
		if (!op)
			return -1;
		for (int j = 0; j < n->ninputs; j++) {
			const loom_tensor *t = loom_node_in(g, n, j);
			if (t && !t->data)
				return loom_cpu_fail(g, n, err, errlen, "input %d '%s' has no data", j, t->name);
		}
		if (alloc_outputs(g, n, err, errlen) || op->run(g, n, err, errlen))
			return -1;
	}
	return 0;
}
