/* ir.c - the helpers of Loom's graph IR (ir/ir.h): data type sizes
 * and names, element and byte counts of tensors, attribute lookup on nodes,
 * a node's input/output tensors, tensor lookup by name, a builder API
 * (loom_graph_new, loom_graph_add_*, loom_node_set_attr_*), loom_node_clear
 * and loom_graph_free, which releases everything a graph owns. None of them
 * exits: out of memory is reported as -1 / NULL. */
#include "ir/ir.h"

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

void loom_node_clear(loom_node *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->op_type);
	free(n->domain);
	free(n->inputs);
	free(n->outputs);
	if (n->attrs)
		for (int i = 0; i < n->nattrs; i++)
			attr_free(&n->attrs[i]);
	free(n->attrs);
	memset(n, 0, sizeof *n);
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
			loom_node_clear(&g->nodes[i]);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->name);
	free(g->path);
	free(g);
}

/* ------------------------------------------------------------------ building */

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* a copy of n bytes (at least a 1-byte buffer, so that empty arrays are not
 * NULL); NULL when out of memory */
static void *dup_mem(const void *src, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (p && n)
		memcpy(p, src, n);
	return p;
}

loom_graph *loom_graph_new(int64_t opset, const char *name)
{
	loom_graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->opset = opset;
	if (name && !(g->name = dup_str(name))) {
		free(g);
		return NULL;
	}
	return g;
}

/* fill t (zeroed by the caller): 0 or -1 with nothing left allocated */
static int tensor_init(loom_tensor *t, const char *name, int dtype, int rank, const int64_t *dims,
		       const void *data)
{
	if (rank < 0 || rank > LOOM_MAX_RANK || (rank && !dims) || !name)
		return -1;
	t->dtype = dtype;
	t->rank = rank;
	for (int d = 0; d < rank; d++)
		t->dims[d] = dims[d];
	if (!(t->name = dup_str(name)))
		return -1;
	if (data && !(t->data = dup_mem(data, loom_tensor_bytes(t)))) {
		free(t->name);
		t->name = NULL;
		return -1;
	}
	return 0;
}

int loom_graph_add_tensor(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
			  const void *data, int is_const)
{
	loom_tensor *nt, t;
	if (!g || g->ntensors < 0)
		return -1;
	memset(&t, 0, sizeof t);
	if (tensor_init(&t, name, dtype, rank, dims, data))
		return -1;
	t.is_const = is_const;
	nt = realloc(g->tensors, sizeof *nt * ((size_t)g->ntensors + 1));
	if (!nt) {
		tensor_free(&t);
		return -1;
	}
	g->tensors = nt;
	nt[g->ntensors] = t;
	return g->ntensors++;
}

static int list_add(int **list, int *cnt, int v)
{
	int *l = realloc(*list, sizeof(int) * ((size_t)*cnt + 1));
	if (!l)
		return -1;
	l[*cnt] = v;
	*list = l;
	(*cnt)++;
	return 0;
}

int loom_graph_add_input(loom_graph *g, int t)
{
	if (!g || t < 0 || t >= g->ntensors)
		return -1;
	return list_add(&g->inputs, &g->ninputs, t);
}

int loom_graph_add_output(loom_graph *g, int t)
{
	if (!g || t < 0 || t >= g->ntensors)
		return -1;
	return list_add(&g->outputs, &g->noutputs, t);
}

int loom_graph_add_node(loom_graph *g, const char *op_type, const char *name, const int *inputs, int nin,
			const int *outputs, int nout)
{
	loom_node n, *nn;
	if (!g || !op_type || !name || nin < 0 || nout < 0 || (nin && !inputs) || (nout && !outputs))
		return -1;
	memset(&n, 0, sizeof n);
	n.name = dup_str(name);
	n.op_type = dup_str(op_type);
	n.domain = dup_str("");
	n.inputs = dup_mem(inputs, sizeof(int) * (size_t)nin);
	n.outputs = dup_mem(outputs, sizeof(int) * (size_t)nout);
	n.ninputs = nin;
	n.noutputs = nout;
	nn = n.name && n.op_type && n.domain && n.inputs && n.outputs
		     ? realloc(g->nodes, sizeof *nn * ((size_t)g->nnodes + 1))
		     : NULL;
	if (!nn) {
		loom_node_clear(&n);
		return -1;
	}
	g->nodes = nn;
	nn[g->nnodes] = n;
	return g->nnodes++;
}

/* Store a (filled, owned, unnamed) into n as name, replacing an attribute
 * of the same name; frees a's contents on failure. */
static int attr_put(loom_node *n, const char *name, loom_attr *a)
{
	loom_attr *na;
	if (!(a->name = dup_str(name))) {
		attr_free(a);
		return -1;
	}
	for (int i = 0; i < n->nattrs; i++)
		if (n->attrs[i].name && !strcmp(n->attrs[i].name, a->name)) {
			attr_free(&n->attrs[i]);
			n->attrs[i] = *a;
			return 0;
		}
	na = realloc(n->attrs, sizeof *na * ((size_t)n->nattrs + 1));
	if (!na) {
		attr_free(a);
		return -1;
	}
	n->attrs = na;
	na[n->nattrs++] = *a;
	return 0;
}

/* an empty attribute of this type (named by attr_put) */
static loom_attr attr_make(int type)
{
	loom_attr a;
	memset(&a, 0, sizeof a);
	a.type = type;
	return a;
}

int loom_node_set_attr_int(loom_node *n, const char *name, int64_t v)
{
	loom_attr a = attr_make(LOOM_ATTR_INT);
	if (!n || !name)
		return -1;
	a.i = v;
	return attr_put(n, name, &a);
}

int loom_node_set_attr_float(loom_node *n, const char *name, float v)
{
	loom_attr a = attr_make(LOOM_ATTR_FLOAT);
	if (!n || !name)
		return -1;
	a.f = v;
	return attr_put(n, name, &a);
}

int loom_node_set_attr_str(loom_node *n, const char *name, const char *v)
{
	loom_attr a = attr_make(LOOM_ATTR_STRING);
	if (!n || !name || !v || !(a.s = dup_str(v)))
		return -1;
	return attr_put(n, name, &a);
}

int loom_node_set_attr_ints(loom_node *n, const char *name, const int64_t *v, int count)
{
	loom_attr a = attr_make(LOOM_ATTR_INTS);
	if (!n || !name || count < 0 || (count && !v) || !(a.ints = dup_mem(v, sizeof(int64_t) * (size_t)count)))
		return -1;
	a.n = count;
	return attr_put(n, name, &a);
}

int loom_node_set_attr_floats(loom_node *n, const char *name, const float *v, int count)
{
	loom_attr a = attr_make(LOOM_ATTR_FLOATS);
	if (!n || !name || count < 0 || (count && !v) || !(a.floats = dup_mem(v, sizeof(float) * (size_t)count)))
		return -1;
	a.n = count;
	return attr_put(n, name, &a);
}

int loom_node_set_attr_tensor(loom_node *n, const char *name, int dtype, int rank, const int64_t *dims,
			      const void *data)
{
	loom_attr a = attr_make(LOOM_ATTR_TENSOR);
	if (!n || !name || !data || !(a.t = calloc(1, sizeof *a.t)))
		return -1;
	if (tensor_init(a.t, name, dtype, rank, dims, data)) {
		free(a.t);
		return -1;
	}
	return attr_put(n, name, &a);
}
