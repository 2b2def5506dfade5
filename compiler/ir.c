/* ir.c - the helpers of Loom's graph IR (include/loom/ir.h): data type sizes
 * and names, element and byte counts of tensors, attribute lookup on nodes,
 * a node's input/output tensors, tensor lookup by name, and loom_graph_free,
 * which releases everything a graph owns. */
#include "loom/ir.h"

#include <stdlib.h>
#include <string.h>

size_t loom_dtype_size(int dtype)
{
	switch (dtype) {
	case LOOM_DT_FLOAT: return 4;
	case LOOM_DT_UINT8: return 1;
	case LOOM_DT_INT8: return 1;
	case LOOM_DT_UINT16: return 2;
	case LOOM_DT_INT16: return 2;
	case LOOM_DT_INT32: return 4;
	case LOOM_DT_INT64: return 8;
	case LOOM_DT_BOOL: return 1;
	case LOOM_DT_DOUBLE: return 8;
	case LOOM_DT_UINT32: return 4;
	case LOOM_DT_UINT64: return 8;
	default: return 0;
	}
}

/* Names of every ONNX data type, the ones Loom does not handle included (for
 * error messages: "data type float16 not supported"). */
const char *loom_dtype_name(int dtype)
{
	switch (dtype) {
	case LOOM_DT_UNDEFINED: return "undefined";
	case LOOM_DT_FLOAT: return "float";
	case LOOM_DT_UINT8: return "uint8";
	case LOOM_DT_INT8: return "int8";
	case LOOM_DT_UINT16: return "uint16";
	case LOOM_DT_INT16: return "int16";
	case LOOM_DT_INT32: return "int32";
	case LOOM_DT_INT64: return "int64";
	case 8: return "string";
	case LOOM_DT_BOOL: return "bool";
	case 10: return "float16";
	case LOOM_DT_DOUBLE: return "double";
	case LOOM_DT_UINT32: return "uint32";
	case LOOM_DT_UINT64: return "uint64";
	case 14: return "complex64";
	case 15: return "complex128";
	case 16: return "bfloat16";
	default: return "unknown";
	}
}

/* -1 for an invalid shape (rank out of range, a negative dim, overflow) */
int64_t loom_tensor_numel(const loom_tensor *t)
{
	if (!t || t->rank < 0 || t->rank > LOOM_MAX_RANK)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (__builtin_mul_overflow(n, t->dims[i], &n))
			return -1;
	}
	return n;
}

/* 0 for an unknown data type or an invalid shape */
size_t loom_tensor_bytes(const loom_tensor *t)
{
	int64_t n = loom_tensor_numel(t);
	size_t es = t ? loom_dtype_size(t->dtype) : 0;
	size_t b;
	if (n < 0 || !es || __builtin_mul_overflow((size_t)n, es, &b))
		return 0;
	return b;
}

const loom_attr *loom_node_attr(const loom_node *n, const char *name)
{
	if (!n || !name)
		return NULL;
	for (int i = 0; i < n->nattrs; i++)
		if (n->attrs[i].name && !strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

/* The typed getters return the default when the attribute is absent or of
 * another type. */
int64_t loom_attr_int(const loom_node *n, const char *name, int64_t def)
{
	const loom_attr *a = loom_node_attr(n, name);
	return a && a->type == LOOM_ATTR_INT ? a->i : def;
}

float loom_attr_float(const loom_node *n, const char *name, float def)
{
	const loom_attr *a = loom_node_attr(n, name);
	return a && a->type == LOOM_ATTR_FLOAT ? a->f : def;
}

const char *loom_attr_str(const loom_node *n, const char *name, const char *def)
{
	const loom_attr *a = loom_node_attr(n, name);
	return a && a->type == LOOM_ATTR_STRING && a->s ? a->s : def;
}

const int64_t *loom_attr_ints(const loom_node *n, const char *name, int *count)
{
	const loom_attr *a = loom_node_attr(n, name);
	if (!a || a->type != LOOM_ATTR_INTS) {
		if (count)
			*count = 0;
		return NULL;
	}
	if (count)
		*count = a->n;
	return a->ints;
}

loom_tensor *loom_node_in(loom_graph *g, const loom_node *n, int i)
{
	if (!g || !n || i < 0 || i >= n->ninputs)
		return NULL;
	int t = n->inputs[i];
	return t >= 0 && t < g->ntensors ? &g->tensors[t] : NULL;
}

loom_tensor *loom_node_out(loom_graph *g, const loom_node *n, int i)
{
	if (!g || !n || i < 0 || i >= n->noutputs)
		return NULL;
	int t = n->outputs[i];
	return t >= 0 && t < g->ntensors ? &g->tensors[t] : NULL;
}

int loom_graph_find(const loom_graph *g, const char *name)
{
	if (!g || !name)
		return -1;
	for (int i = 0; i < g->ntensors; i++)
		if (g->tensors[i].name && !strcmp(g->tensors[i].name, name))
			return i;
	return -1;
}

static void tensor_free(loom_tensor *t)
{
	free(t->name);
	free(t->data);
}

static void attr_free(loom_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->floats);
	free(a->ints);
	if (a->strings)
		for (int i = 0; i < a->n; i++)
			free(a->strings[i]);
	free(a->strings);
	if (a->t) {
		tensor_free(a->t);
		free(a->t);
	}
}

static void node_free(loom_node *n)
{
	free(n->name);
	free(n->op_type);
	free(n->domain);
	free(n->inputs);
	free(n->outputs);
	if (n->attrs)
		for (int i = 0; i < n->nattrs; i++)
			attr_free(&n->attrs[i]);
	free(n->attrs);
}

void loom_graph_free(loom_graph *g)
{
	if (!g)
		return;
	if (g->tensors)
		for (int i = 0; i < g->ntensors; i++)
			tensor_free(&g->tensors[i]);
	free(g->tensors);
	if (g->nodes)
		for (int i = 0; i < g->nnodes; i++)
			node_free(&g->nodes[i]);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->name);
	free(g->path);
	free(g);
}
