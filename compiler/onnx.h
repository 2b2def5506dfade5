/* onnx.h - Loom's ONNX importer (compiler/onnx.c): reads an ONNX model
 * (ModelProto, opsets 7 to 17 of the default domain) into the graph IR of
 * ir/ir.h, and single tensors (TensorProto .pb files, as in the
 * test_data_set_N directories of ONNX test cases) into a loom_tensor, and
 * writes a loom_tensor as one.
 *
 * What the loaded graph looks like:
 *  - tensors: the graph inputs first (in the model's order, initializers
 *    listed as inputs excluded), then the initializers (is_const, data set),
 *    then the outputs of the nodes in the file's node order (a folded
 *    Constant's among them). Every graph input has a static shape and
 *    its dtype; node outputs have dtype LOOM_DT_UNDEFINED and rank 0 until
 *    shape inference, except graph outputs, which carry the dtype of their
 *    value_info and its shape when that is fully static.
 *  - Constant nodes (value, value_float(s), value_int(s)) are folded into
 *    initializers: their output tensor is is_const with its data, and the
 *    node is not in g->nodes.
 *  - nodes: in topological order (sorted here when the file is not); the
 *    domain "ai.onnx" is stored as ""; an empty input name is -1; an empty
 *    output name is dropped when trailing, otherwise it gets a tensor of its
 *    own named "<node name>:unused<i>", so every output index is valid.
 *  - g->opset is the default domain's opset.
 * Not supported (a clear error): other operator domains used by a node,
 * subgraph attributes (If, Loop, Scan), sparse tensors, sequence / map /
 * optional types, data types outside enum loom_dtype (string, float16,
 * bfloat16, complex), external data. */
#ifndef LOOM_ONNX_H
#define LOOM_ONNX_H

#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_ONNX_OPSET_MIN 7
#define LOOM_ONNX_OPSET_MAX 17
#define LOOM_INPUT_NAME_MAX 256

/* The shape of one graph input, fixing its dynamic dimensions (the CLI's
 * --input-shape NAME=1x3x224x224). The name is stored in the struct, so a
 * loom_input_shape needs no freeing and can be copied. */
typedef struct loom_input_shape {
	char name[LOOM_INPUT_NAME_MAX];
	int rank;
	int64_t dims[LOOM_MAX_RANK];
} loom_input_shape;

/* Parse "NAME=D0xD1x...": NAME is everything before the last '=', the
 * dims are decimal integers >= 0. 0, or -1 with a message in err. */
int loom_parse_input_shape(const char *spec, loom_input_shape *s, char *err, size_t errlen);

/* Load the ONNX model at path. shapes[0..nshapes) fix the shapes of graph
 * inputs: a given shape must have the rank of the model's input and agree
 * with its static dims; a name that is not a graph input is an error. A
 * dynamic dimension left unfixed is an error naming the input and the
 * dimension index. On success *out is a new graph (free it with
 * loom_graph_free) and 0 is returned; otherwise -1, *out = NULL and err
 * holds a message starting with the path. */
int loom_onnx_load(const char *path, const loom_input_shape *shapes, int nshapes,
		   loom_graph **out, char *err, size_t errlen);

/* The same from a buffer; name (may be NULL) is what messages call it. */
int loom_onnx_load_mem(const void *buf, size_t len, const char *name, const loom_input_shape *shapes,
		       int nshapes, loom_graph **out, char *err, size_t errlen);

/* Read a TensorProto file into *t (name from the proto, "" if none; data
 * owned by t, is_const 0). 0, or -1 with t zeroed and a message naming the
 * file. */
int loom_onnx_load_tensor(const char *path, loom_tensor *t, char *err, size_t errlen);
/* Write t as a TensorProto file (dims, data_type, little-endian raw_data;
 * name: TensorProto.name, NULL for t->name), readable by
 * loom_onnx_load_tensor and onnx.numpy_helper. 0, or -1 with a message
 * naming the file. */
int loom_onnx_save_tensor(const char *path, const loom_tensor *t, const char *name, char *err, size_t errlen);

/* Free what a loaded tensor owns (name, data) and zero it. */
void loom_tensor_clear(loom_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
