/* onnx_case.h - what the unit tests test_cpu_ops, test_cpu_shape,
 * test_passes, test_calib and test_compile share: exit-on-out-of-memory
 * wrappers around the graph builder of ir/ir.h (test code only: the
 * library reports -1 / NULL), listing ONNX test case folders, loading
 * their test_data_set_0/{input,output}_<k>.pb tensors and comparing the
 * outputs of a run with them. */
#ifndef LOOM_TEST_ONNX_CASE_H
#define LOOM_TEST_ONNX_CASE_H

#include "ir/ir.h"

#include <stddef.h>
#include <stdint.h>

/* v (a builder's index or 0), exiting with status 2 and what when v < 0 */
int oc_must(int v, const char *what);
/* p, exiting with status 2 and what when p is NULL */
void *oc_must_ptr(void *p, const char *what);
#define OC_MUST(call) oc_must((call), #call)
#define OC_MUSTP(call) oc_must_ptr((call), #call)

/* zeroed memory (never NULL: exits when out of memory) and a string copy */
void *oc_xmalloc(size_t n);
char *oc_xstrdup(const char *s);

/* n deterministic values in about [-s, s] (a linear congruential walk from seed) */
void oc_fill(float *v, size_t n, unsigned seed, float s);
/* a new float constant tensor of these dims, oc_fill'ed (seed, s); returns its index */
int oc_const(loom_graph *g, const char *name, int rank, const int64_t *dims, unsigned seed, float s);
/* a node output (type and shape from inference); returns its index */
int oc_value(loom_graph *g, const char *name);

/* an empty graph "test" of this opset with this path (e.g. "(built by ...)") */
loom_graph *oc_graph_new(int64_t opset, const char *path);
/* a new graph input tensor; data (may be NULL) copied; returns its index */
int oc_add_input(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims, const void *data);

int oc_file_exists(const char *path);
/* a float TensorProto (name may be "" or NULL) written to path; exits
 * with status 2 when it cannot be written */
void oc_write_pb(const char *path, const char *name, int rank, const int64_t *dims, const float *data);

/* The entries of folder root that want accepts (want(root, name, ctx)),
 * sorted; *names and *count are set. -1 when root cannot be opened. Free
 * with oc_free_names. */
int oc_list(const char *root, int (*want)(const char *root, const char *name, void *ctx), void *ctx,
	    char ***names, size_t *count);
void oc_free_names(char **names, size_t count);

/* whether err contains one of the NULL-terminated subs */
int oc_err_has_any(const char *err, const char *const *subs);

/* "[1,3,4]" */
void oc_fmt_dims(char *buf, size_t len, int rank, const int64_t *dims);

/* Compare tensor t with (dtype, rank, dims, data); floats within rtol, atol
 * (NaN equals NaN), everything else exactly. why is "" on a match. */
void oc_compare(const loom_tensor *t, int dtype, int rank, const int64_t *dims, const void *data,
		double rtol, double atol, char *why, size_t len);

/* Load dir/test_data_set_0/<kind>_<k>.pb (kind "input" or "output") into
 * *t: 1 loaded, 0 no such file, -1 error (in err). */
int oc_load_pb(const char *dir, const char *kind, int k, loom_tensor *t, char *err, size_t errlen);

/* The tensor of g that input_<k>.pb (t) feeds: by name, else graph input k;
 * -1 if none. */
int oc_input_tensor(const loom_graph *g, int k, const loom_tensor *t);

/* Give graph tensor gt the type, shape and data of t. */
void oc_set_tensor(loom_tensor *gt, const loom_tensor *t);

/* Compare the graph's outputs (after a run) with dir's output_<i>.pb; why
 * is "" when all match, else the first difference. */
void oc_compare_outputs(loom_graph *g, const char *dir, double rtol, double atol, char *why, size_t len);

#endif
