/* ir.h - Loom's graph IR: what the ONNX importer (compiler/onnx.c) builds,
 * what the reference executor (runtime/ref.c) runs and what the compiler's
 * passes will transform. Plain C data with explicit ownership: a loom_graph
 * owns every string, array and tensor buffer reachable from it
 * (loom_graph_free releases them). No global state.
 *
 * Tensors are dense, row-major (C order), in the ONNX data types' numbering
 * (TensorProto.DataType). Shapes are static: every dim >= 0 once the graph
 * is loaded (a dynamic input dimension must be fixed by the caller). */
#ifndef LOOM_IR_H
#define LOOM_IR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_MAX_RANK 8

/* ONNX TensorProto.DataType values that Loom handles */
enum loom_dtype {
	LOOM_DT_UNDEFINED = 0,
	LOOM_DT_FLOAT = 1,
	LOOM_DT_UINT8 = 2,
	LOOM_DT_INT8 = 3,
	LOOM_DT_UINT16 = 4,
	LOOM_DT_INT16 = 5,
	LOOM_DT_INT32 = 6,
	LOOM_DT_INT64 = 7,
	LOOM_DT_BOOL = 9,
	LOOM_DT_DOUBLE = 11,
	LOOM_DT_UINT32 = 12,
	LOOM_DT_UINT64 = 13,
};

typedef struct loom_tensor {
	char *name;
	int dtype;                     /* enum loom_dtype */
	int rank;
	int64_t dims[LOOM_MAX_RANK];
	void *data;                    /* owned; the values of an initializer or a
					  computed tensor; NULL while unknown */
	int is_const;                  /* an initializer or Constant output */
	size_t cap;                    /* bytes of data when the reference executor allocated it
					  (it reuses the buffer on the next run), else 0 */
} loom_tensor;

/* ONNX AttributeProto.AttributeType values */
enum loom_attr_type {
	LOOM_ATTR_FLOAT = 1,
	LOOM_ATTR_INT = 2,
	LOOM_ATTR_STRING = 3,
	LOOM_ATTR_TENSOR = 4,
	LOOM_ATTR_FLOATS = 6,
	LOOM_ATTR_INTS = 7,
	LOOM_ATTR_STRINGS = 8,
};

typedef struct loom_attr {
	char *name;
	int type;                      /* enum loom_attr_type */
	float f;
	int64_t i;
	char *s;                       /* STRING (NUL-terminated copy) */
	float *floats;
	int64_t *ints;
	char **strings;
	int n;                         /* element count of floats / ints / strings */
	loom_tensor *t;                /* TENSOR (owned) */
} loom_attr;

typedef struct loom_node {
	char *name;                    /* never NULL: "<op_type>_<index>" if unnamed */
	char *op_type;
	char *domain;                  /* "" for the default ONNX domain */
	int *inputs;                   /* tensor indices; -1 = omitted optional input */
	int ninputs;
	int *outputs;
	int noutputs;
	loom_attr *attrs;
	int nattrs;
} loom_node;

typedef struct loom_graph {
	loom_tensor *tensors;
	int ntensors;
	loom_node *nodes;              /* in topological order */
	int nnodes;
	int *inputs;                   /* graph inputs (not initializers) */
	int ninputs;
	int *outputs;
	int noutputs;
	int64_t opset;                 /* of the default domain */
	int threads;                   /* the reference executor's threads per kernel (runtime/gemm.c;
					  the results do not depend on it); 0: the online CPUs */
	char *name;
	char *path;                    /* the file it came from */
} loom_graph;

size_t loom_dtype_size(int dtype);          /* bytes per element, 0 if unknown */
const char *loom_dtype_name(int dtype);     /* "float", "int64", ... */
int64_t loom_tensor_numel(const loom_tensor *t);
size_t loom_tensor_bytes(const loom_tensor *t);

/* Attribute lookup on a node: NULL / the default when absent. */
const loom_attr *loom_node_attr(const loom_node *n, const char *name);
int64_t loom_attr_int(const loom_node *n, const char *name, int64_t def);
float loom_attr_float(const loom_node *n, const char *name, float def);
const char *loom_attr_str(const loom_node *n, const char *name, const char *def);
/* INTS attribute: *count elements (0 and NULL when absent) */
const int64_t *loom_attr_ints(const loom_node *n, const char *name, int *count);

/* Input i of a node as a tensor, or NULL if omitted / out of range. */
loom_tensor *loom_node_in(loom_graph *g, const loom_node *n, int i);
loom_tensor *loom_node_out(loom_graph *g, const loom_node *n, int i);

/* Index of the tensor with this name, -1 if none. */
int loom_graph_find(const loom_graph *g, const char *name);

/* Building and editing graphs. Every function copies what it is given (names,
 * dims, data) into buffers the graph owns, and returns -1 (or NULL) when out
 * of memory or on an invalid argument, leaving the graph as it was. */

/* An empty graph of this default-domain opset; name may be NULL. */
loom_graph *loom_graph_new(int64_t opset, const char *name);

/* Append a tensor; its data (numel * element size bytes) is copied when
 * data is not NULL, else the tensor has no buffer. Returns its index. */
int loom_graph_add_tensor(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
			  const void *data, int is_const);

/* Append tensor t to the graph's inputs / outputs: 0 or -1. */
int loom_graph_add_input(loom_graph *g, int t);
int loom_graph_add_output(loom_graph *g, int t);

/* Append a node (default domain) reading inputs (-1 = an omitted optional
 * input) and writing outputs, all tensor indices. Returns the node's index;
 * pointers to g->nodes are valid until the next loom_graph_add_node. */
int loom_graph_add_node(loom_graph *g, const char *op_type, const char *name, const int *inputs, int nin,
			const int *outputs, int nout);

/* Set an attribute of a node (replacing one of the same name): 0 or -1. */
int loom_node_set_attr_int(loom_node *n, const char *name, int64_t v);
int loom_node_set_attr_float(loom_node *n, const char *name, float v);
int loom_node_set_attr_str(loom_node *n, const char *name, const char *v);
int loom_node_set_attr_ints(loom_node *n, const char *name, const int64_t *v, int count);
int loom_node_set_attr_floats(loom_node *n, const char *name, const float *v, int count);
/* a TENSOR attribute; data (numel * element size bytes) copied */
int loom_node_set_attr_tensor(loom_node *n, const char *name, int dtype, int rank, const int64_t *dims,
			      const void *data);

/* Release everything a node owns and zero it (the node stays in the graph's
 * array: the caller removes it). */
void loom_node_clear(loom_node *n);

void loom_graph_free(loom_graph *g);

#ifdef __cplusplus
}
#endif
#endif
