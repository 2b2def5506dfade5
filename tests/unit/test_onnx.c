/* test_onnx.c - unit tests of the ONNX importer (compiler/onnx.c) and the
 * graph IR helpers (ir/ir.c):
 *  - every model.onnx of Debian's ONNX test data (libonnx-testdata: data/node,
 *    pytorch-converted, pytorch-operator, simple, real) loads or is refused
 *    with a clean message naming the file; loaded graphs keep the IR's
 *    invariants (indices in range, topological order, static input shapes,
 *    constant data), their test_data_set_N tensors (.pb) load and the inputs
 *    agree with the graph inputs; a model refused for a dynamic dimension is
 *    loaded again with the shapes of its test inputs (--input-shape);
 *  - the exact structure of a few known models;
 *  - hand-made models packed with protobuf-c into /tmp: opsets 6 and 18,
 *    dynamic dims with and without --input-shape, every data type and
 *    attribute type, Constant folding, unsorted nodes, cycles, missing
 *    tensors, bad initializers, other domains; malformed files (empty,
 *    truncated at every length, random bytes, flipped bytes) never crash;
 *  - loom_parse_input_shape and the ir.h helpers.
 * Prints one line per check (the test data sweep: one per directory, and one
 * per refused model) and ends with "N passed, M failed"; exit status 1 on any
 * failure. `test_onnx --dump FILE [NAME=DIMS...]` prints a model's graph. */
#include "ir/ir.h"
#include "compiler/onnx.h"

#include "onnx.pb-c.h"
#include "check.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* snprintf where truncation is fine (paths and labels in messages) */
static int fmt(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n;
}

#define TESTDATA "/usr/share/libonnx-testdata/data"
static const char *TMP = "/tmp/loom_test_onnx.onnx";

/* ------------------------------------------------------------------ helpers */

static void dump_graph(const loom_graph *g)
{
	printf("graph '%s' opset %" PRId64 ": %d tensors, %d nodes\n", g->name, g->opset, g->ntensors, g->nnodes);
	for (int i = 0; i < g->ntensors; i++) {
		const loom_tensor *t = &g->tensors[i];
		printf("  t%d %s %s[", i, t->name, loom_dtype_name(t->dtype));
		for (int d = 0; d < t->rank; d++)
			printf("%s%" PRId64, d ? "," : "", t->dims[d]);
		printf("]%s%s\n", t->is_const ? " const" : "", t->data ? " data" : "");
	}
	for (int i = 0; i < g->ninputs; i++)
		printf("  input %s\n", g->tensors[g->inputs[i]].name);
	for (int i = 0; i < g->noutputs; i++)
		printf("  output %s\n", g->tensors[g->outputs[i]].name);
	for (int k = 0; k < g->nnodes; k++) {
		const loom_node *n = &g->nodes[k];
		printf("  node %s %s(", n->name, n->op_type);
		for (int i = 0; i < n->ninputs; i++)
			printf("%s%s", i ? ", " : "", n->inputs[i] < 0 ? "-" : g->tensors[n->inputs[i]].name);
		printf(") -> ");
		for (int i = 0; i < n->noutputs; i++)
			printf("%s%s", i ? ", " : "", g->tensors[n->outputs[i]].name);
		for (int a = 0; a < n->nattrs; a++) {
			const loom_attr *at = &n->attrs[a];
			printf(" %s=", at->name);
			switch (at->type) {
			case LOOM_ATTR_FLOAT: printf("%g", at->f); break;
			case LOOM_ATTR_INT: printf("%" PRId64, at->i); break;
			case LOOM_ATTR_STRING: printf("'%s'", at->s); break;
			case LOOM_ATTR_TENSOR: printf("tensor"); break;
			case LOOM_ATTR_FLOATS:
				for (int j = 0; j < at->n; j++)
					printf("%s%g", j ? "," : "[", at->floats[j]);
				printf("%s", at->n ? "]" : "[]");
				break;
			case LOOM_ATTR_INTS:
				for (int j = 0; j < at->n; j++)
					printf("%s%" PRId64, j ? "," : "[", at->ints[j]);
				printf("%s", at->n ? "]" : "[]");
				break;
			case LOOM_ATTR_STRINGS: printf("strings[%d]", at->n); break;
			default: printf("?"); break;
			}
		}
		printf("\n");
	}
}

/* The IR's invariants on a loaded graph; "" or what is wrong. */
static const char *graph_problem(const loom_graph *g)
{
	static char why[512];
	if (!g->path || !g->name)
		return "no path or name";
	if (g->opset < LOOM_ONNX_OPSET_MIN || g->opset > LOOM_ONNX_OPSET_MAX)
		return "opset out of range";
	char *ready = calloc((size_t)g->ntensors + 1, 1);
	if (!ready)
		return "out of memory";
	const char *p = "";
	for (int i = 0; i < g->ntensors && !*p; i++) {
		const loom_tensor *t = &g->tensors[i];
		if (!t->name)
			p = "tensor without a name";
		else if (t->is_const) {
			if (!t->data || loom_tensor_numel(t) < 0 || !loom_dtype_size(t->dtype))
				fmt(why, sizeof why, "constant %s without data or type", t->name), p = why;
			ready[i] = 1;
		}
	}
	for (int i = 0; i < g->ninputs && !*p; i++) {
		int ti = g->inputs[i];
		if (ti < 0 || ti >= g->ntensors) {
			p = "input index out of range";
			break;
		}
		const loom_tensor *t = &g->tensors[ti];
		if (!loom_dtype_size(t->dtype) || loom_tensor_numel(t) < 0)
			fmt(why, sizeof why, "input %s has no static type", t->name), p = why;
		ready[ti] = 1;
	}
	for (int k = 0; k < g->nnodes && !*p; k++) {
		const loom_node *n = &g->nodes[k];
		if (!n->name || !n->op_type || !n->domain || strcmp(n->domain, "")) {
			p = "node name, op_type or domain";
			break;
		}
		for (int i = 0; i < n->ninputs && !*p; i++) {
			int t = n->inputs[i];
			if (t < -1 || t >= g->ntensors)
				fmt(why, sizeof why, "node %s input %d out of range", n->name, i), p = why;
			else if (t >= 0 && !ready[t])
				fmt(why, sizeof why, "node %s input %s used before it is computed", n->name,
					 g->tensors[t].name), p = why;
		}
		for (int i = 0; i < n->noutputs && !*p; i++) {
			int t = n->outputs[i];
			if (t < 0 || t >= g->ntensors)
				fmt(why, sizeof why, "node %s output %d out of range", n->name, i), p = why;
			else if (ready[t])
				fmt(why, sizeof why, "node %s output %s computed twice", n->name,
					 g->tensors[t].name), p = why;
			else
				ready[t] = 1;
		}
		for (int a = 0; a < n->nattrs && !*p; a++)
			if (!n->attrs[a].name || (n->attrs[a].type == LOOM_ATTR_TENSOR && !n->attrs[a].t))
				p = "attribute without name or tensor";
	}
	for (int i = 0; i < g->noutputs && !*p; i++)
		if (g->outputs[i] < 0 || g->outputs[i] >= g->ntensors || !ready[g->outputs[i]])
			p = "graph output not computed";
	free(ready);
	return p;
}

/* A refusal is clean: -1, no graph, a message that starts with the path. */
static int clean_refusal(const char *path, int rc, const loom_graph *g, const char *err)
{
	size_t n = strlen(path);
	return rc == -1 && !g && !strncmp(err, path, n) && err[n] == ':' && strlen(err) > n + 2;
}

static int is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted subdirectory names of dir (NULL-terminated, malloc'd). */
static char **list_dir(const char *dir, int *count)
{
	*count = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n + 1 >= cap) {
			cap = cap ? 2 * cap : 64;
			char **nv = realloc(v, (size_t)cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (v) {
		qsort(v, (size_t)n, sizeof *v, cmpstr);
		v[n] = NULL;
	}
	*count = n;
	return v;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = len ? fwrite(data, 1, len, f) : 0;
	return fclose(f) || w != len ? -1 : 0;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = b ? (size_t)n : 0;
	return b;
}

/* Names of the graph inputs that are not initializers, read with protobuf-c
 * directly (for models refused for a dynamic dim). */
static int proto_input_names(const char *path, char names[][LOOM_INPUT_NAME_MAX], int max)
{
	size_t len;
	uint8_t *b = read_all(path, &len);
	if (!b)
		return -1;
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, b);
	free(b);
	if (!m)
		return -1;
	int n = 0;
	for (size_t i = 0; m->graph && i < m->graph->n_input && n < max; i++) {
		const char *nm = m->graph->input[i]->name ? m->graph->input[i]->name : "";
		int init = 0;
		for (size_t k = 0; k < m->graph->n_initializer; k++)
			if (m->graph->initializer[k]->name && !strcmp(m->graph->initializer[k]->name, nm))
				init = 1;
		if (!init)
			fmt(names[n++], LOOM_INPUT_NAME_MAX, "%s", nm);
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return n;
}

/* ------------------------------------------------------------------ the test data */

struct sweep {
	int models, loaded, refused, bad;
	int shaped;              /* loaded with shapes from the test inputs */
	int tensors, tensors_refused, tensors_bad, input_mismatch;
};

/* Load every test_data_set_N/{input,output}_K.pb of a case; compare inputs
 * with the graph's (when it loaded). */
static void sweep_tensors(const char *casedir, const loom_graph *g, struct sweep *s, const char *label)
{
	int nsets;
	char **sets = list_dir(casedir, &nsets);
	char path[1024], err[1024];
	for (int i = 0; i < nsets; i++) {
		if (strncmp(sets[i], "test_data_set_", 14))
			continue;
		for (int io = 0; io < 2; io++)
			for (int k = 0;; k++) {
				fmt(path, sizeof path, "%s/%s/%s_%d.pb", casedir, sets[i], io ? "output" : "input", k);
				if (!is_file(path))
					break;
				loom_tensor t;
				s->tensors++;
				int rc = loom_onnx_load_tensor(path, &t, err, sizeof err);
				if (rc) {
					if (clean_refusal(path, rc, NULL, err) && !t.name && !t.data)
						s->tensors_refused++;
					else {
						s->tensors_bad++;
						CHECK_FAIL("%s: tensor %s refused without a clean message: %s", label, path, err);
					}
					continue;
				}
				if (g && !io && k < g->ninputs) {
					const loom_tensor *gi = &g->tensors[g->inputs[k]];
					int same = gi->dtype == t.dtype && gi->rank == t.rank;
					for (int d = 0; same && d < t.rank; d++)
						same = gi->dims[d] == t.dims[d];
					if (!same) {
						s->input_mismatch++;
						CHECK_FAIL("%s: %s does not match graph input '%s'", label, path, gi->name);
					}
				}
				loom_tensor_clear(&t);
			}
	}
	free_list(sets, nsets);
}

/* Shapes of the first test inputs, for the graph's non-initializer inputs. */
static int shapes_from_test_inputs(const char *casedir, const char *model, loom_input_shape *shapes, int max)
{
	char names[16][LOOM_INPUT_NAME_MAX];
	int n = proto_input_names(model, names, max < 16 ? max : 16);
	char path[1024], err[512];
	for (int k = 0; k < n; k++) {
		fmt(path, sizeof path, "%s/test_data_set_0/input_%d.pb", casedir, k);
		loom_tensor t;
		if (loom_onnx_load_tensor(path, &t, err, sizeof err))
			return -1;
		fmt(shapes[k].name, LOOM_INPUT_NAME_MAX, "%s", names[k]);
		shapes[k].rank = t.rank;
		memcpy(shapes[k].dims, t.dims, sizeof t.dims);
		loom_tensor_clear(&t);
	}
	return n;
}

static void sweep_dir(const char *sub, int min_loaded)
{
	char dir[512];
	fmt(dir, sizeof dir, "%s/%s", TESTDATA, sub);
	if (!is_dir(dir)) {
		printf("skip %s: not installed\n", dir);
		return;
	}
	struct sweep s = {0};
	int ncases;
	char **cases = list_dir(dir, &ncases);
	char path[1024], casedir[1024], err[1024], label[600];
	for (int i = 0; i < ncases; i++) {
		fmt(casedir, sizeof casedir, "%s/%s", dir, cases[i]);
		fmt(path, sizeof path, "%s/model.onnx", casedir);
		fmt(label, sizeof label, "%s/%s", sub, cases[i]);
		if (!is_file(path))
			continue;
		s.models++;
		loom_graph *g = NULL;
		err[0] = 0;
		int rc = loom_onnx_load(path, NULL, 0, &g, err, sizeof err);
		if (rc && (strstr(err, "is dynamic") || strstr(err, "has no size") || strstr(err, "has no shape"))) {
			loom_input_shape shapes[16];
			int n = shapes_from_test_inputs(casedir, path, shapes, 16);
			if (n > 0) {
				char err2[1024];
				rc = loom_onnx_load(path, shapes, n, &g, err2, sizeof err2);
				if (!rc)
					s.shaped++;
				else
					fmt(err, sizeof err, "%s", err2);
			}
		}
		if (!rc) {
			const char *p = g ? graph_problem(g) : "no graph";
			if (*p) {
				s.bad++;
				CHECK_FAIL("%s: loaded graph broken: %s", label, p);
			} else {
				s.loaded++;
			}
		} else if (clean_refusal(path, rc, g, err)) {
			s.refused++;
			printf("refused %s: %s\n", label, err + strlen(path) + 2);
		} else {
			s.bad++;
			CHECK_FAIL("%s: refused without a clean message: rc %d, '%s'", label, rc, err);
		}
		sweep_tensors(casedir, g, &s, label);
		loom_graph_free(g);
	}
	free_list(cases, ncases);
	CHECK(s.bad == 0 && s.loaded >= min_loaded,
	      "%s: %d models: %d loaded (%d with shapes from their test inputs), %d refused cleanly, %d bad (want >= %d loaded)",
	      sub, s.models, s.loaded, s.shaped, s.refused, s.bad, min_loaded);
	CHECK(s.tensors_bad == 0 && s.input_mismatch == 0,
	      "%s: %d test tensors: %d loaded, %d refused cleanly, %d bad, %d inputs not matching their graph", sub,
	      s.tensors, s.tensors - s.tensors_refused - s.tensors_bad, s.tensors_refused, s.tensors_bad,
	      s.input_mismatch);
}

/* ------------------------------------------------------------------ known models */

static const loom_node *find_node(const loom_graph *g, const char *op)
{
	for (int k = 0; k < g->nnodes; k++)
		if (!strcmp(g->nodes[k].op_type, op))
			return &g->nodes[k];
	return NULL;
}

static int dims_are(const loom_tensor *t, int rank, const int64_t *d)
{
	if (!t || t->rank != rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (t->dims[i] != d[i])
			return 0;
	return 1;
}

static int ints_are(const loom_node *n, const char *name, int count, const int64_t *v)
{
	int c;
	const int64_t *p = loom_attr_ints(n, name, &c);
	if (!p || c != count)
		return 0;
	return !memcmp(p, v, (size_t)count * sizeof *v);
}

static loom_graph *load_case(const char *rel, char *err, size_t errlen)
{
	char path[512];
	fmt(path, sizeof path, "%s/%s/model.onnx", TESTDATA, rel);
	loom_graph *g = NULL;
	if (loom_onnx_load(path, NULL, 0, &g, err, errlen))
		return NULL;
	return g;
}

static void test_known_models(void)
{
	char err[1024];
	loom_graph *g;

	/* Conv with strides and padding: x[1,1,7,5], W[1,1,3,3] both graph inputs */
	g = load_case("node/test_conv_with_strides_padding", err, sizeof err);
	if (CHECK(g != NULL, "node/test_conv_with_strides_padding loads: %s", g ? "" : err)) {
		const loom_node *n = g->nnodes == 1 ? &g->nodes[0] : NULL;
		CHECK(n && !strcmp(n->op_type, "Conv") && n->ninputs == 2 && n->noutputs == 1,
		      "conv_with_strides_padding: one Conv node, 2 inputs, 1 output");
		CHECK(g->opset >= 11 && g->opset <= 17, "conv_with_strides_padding: opset %" PRId64, g->opset);
		CHECK(g->ninputs == 2 && g->noutputs == 1, "conv_with_strides_padding: 2 graph inputs, 1 output");
		static const int64_t xd[] = {1, 1, 7, 5}, wd[] = {1, 1, 3, 3}, yd[] = {1, 1, 4, 3};
		int x = loom_graph_find(g, "x"), w = loom_graph_find(g, "W"), y = loom_graph_find(g, "y");
		CHECK(x >= 0 && w >= 0 && y >= 0 && g->inputs[0] == x && g->inputs[1] == w && g->outputs[0] == y,
		      "conv_with_strides_padding: tensors x, W, y are the graph's inputs and output");
		CHECK(x >= 0 && dims_are(&g->tensors[x], 4, xd) && g->tensors[x].dtype == LOOM_DT_FLOAT &&
		      !g->tensors[x].is_const && !g->tensors[x].data, "conv_with_strides_padding: x float[1,1,7,5]");
		CHECK(w >= 0 && dims_are(&g->tensors[w], 4, wd) && !g->tensors[w].is_const,
		      "conv_with_strides_padding: W float[1,1,3,3], an input, not an initializer");
		CHECK(y >= 0 && dims_are(&g->tensors[y], 4, yd) && g->tensors[y].dtype == LOOM_DT_FLOAT,
		      "conv_with_strides_padding: y's value_info float[1,1,4,3] recorded");
		if (n) {
			static const int64_t ks[] = {3, 3}, pads[] = {1, 1, 1, 1}, st[] = {2, 2};
			CHECK(ints_are(n, "kernel_shape", 2, ks) && ints_are(n, "pads", 4, pads) &&
			      ints_are(n, "strides", 2, st) && n->nattrs == 3,
			      "conv_with_strides_padding: kernel_shape [3,3], pads [1,1,1,1], strides [2,2]");
			CHECK(loom_node_in(g, n, 0) == &g->tensors[x] && loom_node_in(g, n, 1) == &g->tensors[w] &&
			      loom_node_in(g, n, 2) == NULL && loom_node_out(g, n, 0) == &g->tensors[y],
			      "conv_with_strides_padding: loom_node_in/out");
			CHECK(!strcmp(n->domain, "") && n->name[0], "conv_with_strides_padding: domain \"\", name '%s'",
			      n->name);
		}
		loom_graph_free(g);
	}

	/* A PyTorch export with weights as initializers: the test data's are all
	 * opset 6 (refused), so test_Conv2d is loaded from a copy that imports
	 * opset 7 (Conv is the same in both) and compared with the proto. */
	char path[512];
	fmt(path, sizeof path, "%s/pytorch-converted/test_Conv2d/model.onnx", TESTDATA);
	size_t len;
	uint8_t *b = read_all(path, &len);
	Onnx__ModelProto *m = b ? onnx__model_proto__unpack(NULL, len, b) : NULL;
	free(b);
	g = NULL;
	int rc = loom_onnx_load(path, NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal(path, rc, g, err) && strstr(err, "opset 6"), "pytorch-converted/test_Conv2d (opset 6) refused: %s",
	      err + (rc ? strlen(path) + 2 : 0));
	if (CHECK(m && m->graph && m->n_opset_import == 1 && m->graph->n_initializer == 2,
		  "pytorch-converted/test_Conv2d: a ModelProto with 2 initializers")) {
		m->opset_import[0]->version = 7;
		size_t n = onnx__model_proto__get_packed_size(m);
		uint8_t *pb = malloc(n);
		onnx__model_proto__pack(m, pb);
		write_file(TMP, pb, n);
		free(pb);
		g = NULL;
		rc = loom_onnx_load(TMP, NULL, 0, &g, err, sizeof err);
		if (CHECK(!rc, "test_Conv2d as opset 7 loads: %s", rc ? err : "")) {
			const loom_node *cv = find_node(g, "Conv");
			const loom_tensor *w = cv ? loom_node_in(g, cv, 1) : NULL;
			const loom_tensor *bias = cv ? loom_node_in(g, cv, 2) : NULL;
			const Onnx__TensorProto *tw = m->graph->initializer[0];
			int same = w && w->rank == (int)tw->n_dims && w->dtype == tw->data_type;
			for (int d = 0; same && d < w->rank; d++)
				same = w->dims[d] == tw->dims[d];
			const void *src = tw->has_raw_data ? (const void *)tw->raw_data.data : (const void *)tw->float_data;
			same = same && src && !memcmp(w->data, src, loom_tensor_bytes(w));
			static const loom_tensor none;
			const loom_tensor *wt = w ? w : &none;
			const char *wn = wt->name ? wt->name : "-";
			CHECK(g->ninputs == 1 && g->nnodes == 1 && w && bias && wt->is_const && bias->is_const &&
			      !strcmp(wn, tw->name), "test_Conv2d: one graph input, weight '%s' and bias are initializers", wn);
			CHECK(same, "test_Conv2d: weight [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "] equals the file's %s",
			      wt->dims[0], wt->dims[1], wt->dims[2], wt->dims[3], tw->has_raw_data ? "raw_data" : "float_data");
			CHECK(!*graph_problem(g), "test_Conv2d: IR invariants");
			loom_graph_free(g);
		}
		unlink(TMP);
	}
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);

	/* Constant folded into an initializer: no node left */
	g = load_case("node/test_constant", err, sizeof err);
	if (CHECK(g != NULL, "node/test_constant loads: %s", g ? "" : err)) {
		const loom_tensor *o = &g->tensors[g->outputs[0]];
		CHECK(g->nnodes == 0 && g->noutputs == 1 && o->is_const && o->data && o->dtype == LOOM_DT_FLOAT &&
		      o->rank == 2 && o->dims[0] == 5 && o->dims[1] == 5,
		      "test_constant: the Constant is folded, its output a float[5,5] constant");
		loom_graph_free(g);
	}

	/* LSTM with a skipped optional output before a wanted one */
	g = load_case("node/test_lstm_defaults", err, sizeof err);
	if (CHECK(g != NULL, "node/test_lstm_defaults loads: %s", g ? "" : err)) {
		const loom_node *n = find_node(g, "LSTM");
		CHECK(n && n->noutputs == 2 && strstr(loom_node_out(g, n, 0)->name, ":unused0") &&
		      !strcmp(loom_node_out(g, n, 1)->name, "Y_h"),
		      "test_lstm_defaults: outputs ('', 'Y_h') -> an unused tensor and Y_h");
		CHECK(n && loom_attr_int(n, "hidden_size", 0) == 3, "test_lstm_defaults: hidden_size 3");
		loom_graph_free(g);
	}

	/* a skipped optional input is -1 (Clip's min) */
	g = load_case("node/test_clip_default_inbounds", err, sizeof err);
	if (CHECK(g != NULL, "node/test_clip_default_inbounds loads: %s", g ? "" : err)) {
		loom_graph_free(g);
	}
	g = load_case("node/test_clip_default_int8_max", err, sizeof err);
	if (CHECK(g != NULL, "node/test_clip_default_int8_max loads: %s", g ? "" : err)) {
		const loom_node *n = find_node(g, "Clip");
		CHECK(n && n->ninputs == 3 && n->inputs[1] == -1 && loom_node_in(g, n, 1) == NULL &&
		      loom_node_in(g, n, 2) && loom_node_in(g, n, 2)->dtype == LOOM_DT_INT8,
		      "test_clip_default_int8_max: Clip(x, '', max): input 1 is -1");
		loom_graph_free(g);
	}

	/* a STRING attribute and an optional trailing input */
	g = load_case("node/test_resize_upsample_scales_nearest", err, sizeof err);
	if (CHECK(g != NULL, "node/test_resize_upsample_scales_nearest loads: %s", g ? "" : err)) {
		const loom_node *n = find_node(g, "Resize");
		CHECK(n && !strcmp(loom_attr_str(n, "mode", "?"), "nearest") &&
		      !strcmp(loom_attr_str(n, "nope", "dflt"), "dflt"),
		      "test_resize_upsample_scales_nearest: mode 'nearest'");
		loom_graph_free(g);
	}
}

/* ------------------------------------------------------------------ hand-made models */

/* A model under construction: fixed-size pools of protobuf-c messages,
 * packed into a file with mk_write. */
#define MAXN 16
typedef struct mk {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto ops[4], *opsp[4];
	Onnx__NodeProto nodes[MAXN], *nodesp[MAXN];
	char *nin[MAXN][4], *nout[MAXN][4];
	Onnx__AttributeProto attrs[MAXN], *attrsp[MAXN];
	Onnx__ValueInfoProto vi[MAXN], *inp[MAXN], *outp[MAXN];
	Onnx__TypeProto tp[MAXN];
	Onnx__TypeProto__Tensor tt[MAXN];
	Onnx__TensorShapeProto sh[MAXN];
	Onnx__TensorShapeProto__Dimension dim[MAXN][4], *dimp[MAXN][4];
	Onnx__TensorProto inits[MAXN], *initsp[MAXN];
	int nvi, nattr;
} mk;

static void mk_init(mk *k, int64_t ir, int64_t opset)
{
	memset(k, 0, sizeof *k);
	onnx__model_proto__init(&k->m);
	onnx__graph_proto__init(&k->g);
	k->m.has_ir_version = 1;
	k->m.ir_version = ir;
	k->m.graph = &k->g;
	k->g.name = "hand";
	onnx__operator_set_id_proto__init(&k->ops[0]);
	k->ops[0].domain = "";
	k->ops[0].has_version = 1;
	k->ops[0].version = opset;
	k->opsp[0] = &k->ops[0];
	k->m.n_opset_import = 1;
	k->m.opset_import = k->opsp;
	k->g.node = k->nodesp;
	k->g.input = k->inp;
	k->g.output = k->outp;
	k->g.initializer = k->initsp;
}

/* A tensor value_info; dims < 0 are dynamic ("N"), -2 is a dim without size;
 * rank < 0: no shape at all. */
static Onnx__ValueInfoProto *mk_vi(mk *k, char *name, int dtype, int rank, const int64_t *dims)
{
	int i = k->nvi++;
	onnx__value_info_proto__init(&k->vi[i]);
	onnx__type_proto__init(&k->tp[i]);
	onnx__type_proto__tensor__init(&k->tt[i]);
	k->vi[i].name = name;
	k->vi[i].type = &k->tp[i];
	k->tp[i].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	k->tp[i].tensor_type = &k->tt[i];
	k->tt[i].has_elem_type = 1;
	k->tt[i].elem_type = dtype;
	if (rank >= 0) {
		onnx__tensor_shape_proto__init(&k->sh[i]);
		k->tt[i].shape = &k->sh[i];
		k->sh[i].n_dim = (size_t)rank;
		k->sh[i].dim = k->dimp[i];
		for (int d = 0; d < rank; d++) {
			Onnx__TensorShapeProto__Dimension *dm = &k->dim[i][d];
			onnx__tensor_shape_proto__dimension__init(dm);
			if (dims[d] >= 0) {
				dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				dm->dim_value = dims[d];
			} else if (dims[d] == -1) {
				dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				dm->dim_param = "N";
			}
			k->dimp[i][d] = dm;
		}
	}
	return &k->vi[i];
}

static void mk_input(mk *k, char *name, int dtype, int rank, const int64_t *dims)
{
	k->inp[k->g.n_input++] = mk_vi(k, name, dtype, rank, dims);
}

static void mk_output(mk *k, char *name, int dtype, int rank, const int64_t *dims)
{
	k->outp[k->g.n_output++] = mk_vi(k, name, dtype, rank, dims);
}

static Onnx__NodeProto *mk_node(mk *k, char *op, char *name, char *in0, char *in1, char *out0)
{
	int i = (int)k->g.n_node++;
	Onnx__NodeProto *n = &k->nodes[i];
	onnx__node_proto__init(n);
	n->op_type = op;
	n->name = name;
	n->input = k->nin[i];
	n->output = k->nout[i];
	if (in0)
		k->nin[i][n->n_input++] = in0;
	if (in1)
		k->nin[i][n->n_input++] = in1;
	if (out0)
		k->nout[i][n->n_output++] = out0;
	k->nodesp[i] = n;
	return n;
}

static Onnx__AttributeProto *mk_attr(mk *k, char *name, int type)
{
	Onnx__AttributeProto *a = &k->attrs[k->nattr++];
	onnx__attribute_proto__init(a);
	a->name = name;
	a->has_type = 1;
	a->type = type;
	return a;
}

static Onnx__TensorProto *mk_init_tensor(mk *k, char *name, int dtype, int rank, const int64_t *dims)
{
	int i = (int)k->g.n_initializer++;
	Onnx__TensorProto *t = &k->inits[i];
	onnx__tensor_proto__init(t);
	t->name = name;
	t->has_data_type = 1;
	t->data_type = dtype;
	t->n_dims = (size_t)rank;
	t->dims = (int64_t *)dims;
	k->initsp[i] = t;
	return t;
}

static int mk_write(mk *k, const char *path)
{
	size_t n = onnx__model_proto__get_packed_size(&k->m);
	uint8_t *b = malloc(n ? n : 1);
	onnx__model_proto__pack(&k->m, b);
	int rc = write_file(path, b, n);
	free(b);
	return rc;
}

/* Load a hand-made model; 0 and *g, or -1 and err. */
static int mk_load(mk *k, const loom_input_shape *s, int ns, loom_graph **g, char *err, size_t len)
{
	*g = NULL;
	err[0] = 0;
	if (mk_write(k, TMP))
		return fmt(err, len, "cannot write %s", TMP), -1;
	return loom_onnx_load(TMP, s, ns, g, err, len);
}

/* The model refuses with a clean message containing every string given. */
static void expect_refusal(mk *k, const loom_input_shape *s, int ns, const char *what, const char *w1,
			   const char *w2, const char *w3)
{
	loom_graph *g;
	char err[1024];
	int rc = mk_load(k, s, ns, &g, err, sizeof err);
	int ok = clean_refusal(TMP, rc, g, err) && (!w1 || strstr(err, w1)) && (!w2 || strstr(err, w2)) &&
		 (!w3 || strstr(err, w3));
	CHECK(ok, "%s: refused: %s", what, rc ? err : "(it loaded)");
	loom_graph_free(g);
}

/* x float[1,3] -> Relu -> y */
static void mk_relu(mk *k, int64_t opset, int64_t d0)
{
	static int64_t dims[2];
	dims[0] = d0;
	dims[1] = 3;
	mk_init(k, 8, opset);
	mk_input(k, "x", LOOM_DT_FLOAT, 2, dims);
	mk_output(k, "y", LOOM_DT_FLOAT, 2, dims);
	mk_node(k, "Relu", "relu", "x", NULL, "y");
}

static void test_opsets_and_shapes(void)
{
	static mk k;
	loom_graph *g;
	char err[1024];

	mk_relu(&k, 13, 1);
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "hand-made Relu model (opset 13) loads: %s", err)) {
		CHECK(g->opset == 13 && g->nnodes == 1 && !strcmp(g->nodes[0].name, "relu") && !strcmp(g->name, "hand") &&
		      !strcmp(g->path, TMP), "Relu model: opset, node, graph name and path");
		CHECK(!*graph_problem(g), "Relu model: IR invariants");
		loom_graph_free(g);
	}
	for (int64_t o = 7; o <= 17; o += 10) {
		mk_relu(&k, o, 1);
		CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "opset %" PRId64 " accepted: %s", o, err);
		loom_graph_free(g);
	}
	mk_relu(&k, 6, 1);
	expect_refusal(&k, NULL, 0, "opset 6", "opset 6", "7 to 17", NULL);
	mk_relu(&k, 18, 1);
	expect_refusal(&k, NULL, 0, "opset 18", "opset 18", "7 to 17", NULL);
	mk_relu(&k, 13, 1);
	k.ops[0].domain = "ai.onnx";
	CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err) && g->opset == 13, "domain 'ai.onnx' is the default domain: %s", err);
	loom_graph_free(g);
	mk_relu(&k, 13, 1);
	k.ops[0].domain = "ai.onnx.ml";
	expect_refusal(&k, NULL, 0, "no default-domain opset", "no opset of the default", NULL, NULL);
	/* another domain imported but not used: fine; used: refused */
	mk_relu(&k, 13, 1);
	onnx__operator_set_id_proto__init(&k.ops[1]);
	k.ops[1].domain = "ai.onnx.ml";
	k.ops[1].has_version = 1;
	k.ops[1].version = 3;
	k.opsp[1] = &k.ops[1];
	k.m.n_opset_import = 2;
	CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "an unused ai.onnx.ml import is accepted: %s", err);
	loom_graph_free(g);
	k.nodes[0].domain = "ai.onnx.ml";
	expect_refusal(&k, NULL, 0, "a node of domain ai.onnx.ml", "node 'relu' (Relu)", "ai.onnx.ml", NULL);
	mk_relu(&k, 13, 1);
	k.m.has_ir_version = 0;
	expect_refusal(&k, NULL, 0, "no ir_version", "ir_version", NULL, NULL);
	mk_relu(&k, 13, 1);
	k.m.ir_version = 2;
	expect_refusal(&k, NULL, 0, "IR version 2", "IR version 2", NULL, NULL);
	mk_relu(&k, 13, 1);
	k.m.graph = NULL;
	expect_refusal(&k, NULL, 0, "no graph", "no graph", NULL, NULL);

	/* dynamic dims */
	mk_relu(&k, 13, -1);
	expect_refusal(&k, NULL, 0, "dynamic dim without --input-shape", "'x'", "dimension 0", "dynamic");
	loom_input_shape s;
	CHECK(!loom_parse_input_shape("x=4x3", &s, err, sizeof err), "parse x=4x3: %s", err);
	if (CHECK(!mk_load(&k, &s, 1, &g, err, sizeof err), "dynamic dim fixed by --input-shape x=4x3: %s", err)) {
		const loom_tensor *x = &g->tensors[g->inputs[0]];
		const loom_tensor *y = &g->tensors[g->outputs[0]];
		CHECK(x->rank == 2 && x->dims[0] == 4 && x->dims[1] == 3, "x is float[4,3]");
		CHECK(y->dtype == LOOM_DT_FLOAT && y->rank == 0, "y's dynamic value_info: dtype only, shape left to inference");
		loom_graph_free(g);
	}
	CHECK(!loom_parse_input_shape("x=4x5", &s, err, sizeof err), "parse x=4x5");
	expect_refusal(&k, &s, 1, "--input-shape against a static dim", "dimension 1 is 3", "5 given", NULL);
	CHECK(!loom_parse_input_shape("x=4", &s, err, sizeof err), "parse x=4");
	expect_refusal(&k, &s, 1, "--input-shape of the wrong rank", "rank 1", "rank 2", NULL);
	CHECK(!loom_parse_input_shape("z=4x3", &s, err, sizeof err), "parse z=4x3");
	expect_refusal(&k, &s, 1, "--input-shape of an unknown input", "no input 'z'", "x", NULL);
	loom_input_shape two[2];
	loom_parse_input_shape("x=4x3", &two[0], err, sizeof err);
	two[1] = two[0];
	expect_refusal(&k, two, 2, "--input-shape given twice", "twice", NULL, NULL);
	mk_relu(&k, 13, -2);
	expect_refusal(&k, NULL, 0, "a dim without size", "'x'", "dimension 0", "no size");
	mk_relu(&k, 13, 1);
	k.tt[0].shape = NULL;
	expect_refusal(&k, NULL, 0, "an input without a shape", "'x'", "no shape", NULL);
	CHECK(!mk_load(&k, &two[0], 1, &g, err, sizeof err) && g->tensors[g->inputs[0]].rank == 2,
	      "an input without a shape given by --input-shape: %s", err);
	loom_graph_free(g);
	mk_relu(&k, 13, 1);
	k.dim[0][0].dim_value = -5;
	expect_refusal(&k, NULL, 0, "a negative input dim", "'x'", "negative", NULL);
	mk_relu(&k, 13, 1);
	k.tt[0].elem_type = 10;
	expect_refusal(&k, NULL, 0, "a float16 input", "'x'", "float16", "not supported");
	mk_relu(&k, 13, 1);
	k.tp[0].value_case = ONNX__TYPE_PROTO__VALUE__NOT_SET;
	expect_refusal(&k, NULL, 0, "an input without a type", "'x'", "no type", NULL);
	/* an initializer named by --input-shape */
	mk_relu(&k, 13, 1);
	static const int64_t d1[] = {1};
	static float one = 1.0f;
	Onnx__TensorProto *t = mk_init_tensor(&k, "w", LOOM_DT_FLOAT, 1, d1);
	t->n_float_data = 1;
	t->float_data = &one;
	loom_parse_input_shape("w=1", &s, err, sizeof err);
	expect_refusal(&k, &s, 1, "--input-shape of an initializer", "'w' is an initializer", NULL, NULL);
}

static void test_graph_structure(void)
{
	static mk k;
	loom_graph *g;
	char err[1024];
	static const int64_t d13[] = {1, 3};

	/* nodes out of order: c = Relu(b), b = Relu(a), a = Relu(x) */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Relu", "n2", "b", NULL, "c");
	mk_node(&k, "Relu", "n1", "a", NULL, "b");
	mk_node(&k, "Relu", NULL, "x", NULL, "a");
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "unsorted nodes load: %s", err)) {
		CHECK(g->nnodes == 3 && !strcmp(g->nodes[0].name, "Relu_2") && !strcmp(g->nodes[1].name, "n1") &&
		      !strcmp(g->nodes[2].name, "n2"), "nodes sorted: Relu_2 (synthesized name), n1, n2");
		CHECK(!*graph_problem(g), "sorted graph keeps the IR invariants");
		loom_graph_free(g);
	}
	/* a cycle: a = Relu(b), b = Relu(a), c = Add(x, b) */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Add", "add", "x", "b", "c");
	mk_node(&k, "Relu", "ra", "b", NULL, "a");
	mk_node(&k, "Relu", "rb", "a", NULL, "b");
	expect_refusal(&k, NULL, 0, "a cycle", "cycle", "node 'r", NULL);
	/* a node feeding itself */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Add", "self", "x", "c", "c");
	expect_refusal(&k, NULL, 0, "a node reading its own output", "cycle", "node 'self' (Add)", "'c'");
	/* an input nothing produces */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Add", "add", "x", "zz", "c");
	expect_refusal(&k, NULL, 0, "a missing tensor", "node 'add' (Add)", "'zz'", "not produced");
	/* an output produced twice */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Relu", "r1", "x", NULL, "c");
	mk_node(&k, "Relu", "r2", "x", NULL, "c");
	expect_refusal(&k, NULL, 0, "two producers", "node 'r2' (Relu)", "'c'", "node 'r1'");
	/* a graph output nothing produces */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "q", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Relu", "r1", "x", NULL, "c");
	expect_refusal(&k, NULL, 0, "an unproduced graph output", "graph output 'q'", NULL, NULL);
	/* a node without op_type; an input listed twice */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "", "r1", "x", NULL, "c");
	expect_refusal(&k, NULL, 0, "a node without op_type", "'r1'", "no op_type", NULL);
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	mk_node(&k, "Relu", "r1", "x", NULL, "c");
	expect_refusal(&k, NULL, 0, "a graph input twice", "'x'", "twice", NULL);
	/* optional inputs and outputs: Clip(x, '', m) -> ('', ...) */
	mk_init(&k, 8, 13);
	mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
	mk_input(&k, "m", LOOM_DT_FLOAT, 0, NULL);
	mk_output(&k, "c", LOOM_DT_FLOAT, 2, d13);
	Onnx__NodeProto *n = mk_node(&k, "Clip", "clip", "x", "", "c");
	k.nin[0][n->n_input++] = "m";
	k.nout[0][n->n_output++] = "";
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "Clip(x, '', m) -> (c, '') loads: %s", err)) {
		const loom_node *c = &g->nodes[0];
		CHECK(c->ninputs == 3 && c->inputs[1] == -1 && c->noutputs == 1 &&
		      g->tensors[g->inputs[1]].rank == 0, "empty input is -1, trailing empty output dropped, m a scalar");
		loom_graph_free(g);
	}
	/* subgraph attribute */
	mk_relu(&k, 13, 1);
	Onnx__AttributeProto *a = mk_attr(&k, "then_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
	static Onnx__GraphProto sub;
	onnx__graph_proto__init(&sub);
	a->g = &sub;
	static Onnx__AttributeProto *ap1[1];
	ap1[0] = a;
	k.nodes[0].n_attribute = 1;
	k.nodes[0].attribute = ap1;
	expect_refusal(&k, NULL, 0, "a GRAPH attribute", "node 'relu' (Relu)", "'then_branch'", "subgraph");
}

static void test_attributes_and_constants(void)
{
	static mk k;
	loom_graph *g;
	char err[1024];
	static const int64_t d13[] = {1, 3}, d2[] = {2};
	static float fl[] = {1.5f, -2.0f};
	static int64_t in[] = {7, -8, 9};
	static ProtobufCBinaryData strs[2] = {{3, (uint8_t *)"abc"}, {0, NULL}};
	static Onnx__TensorProto at;
	static Onnx__AttributeProto *aps[8];

	mk_relu(&k, 13, 1);
	int na = 0;
	Onnx__AttributeProto *a;
	a = aps[na++] = mk_attr(&k, "alpha", LOOM_ATTR_FLOAT);
	a->has_f = 1, a->f = 0.25f;
	a = aps[na++] = mk_attr(&k, "axis", LOOM_ATTR_INT);
	a->has_i = 1, a->i = -3;
	a = aps[na++] = mk_attr(&k, "mode", LOOM_ATTR_STRING);
	a->has_s = 1, a->s = strs[0];
	a = aps[na++] = mk_attr(&k, "scales", LOOM_ATTR_FLOATS);
	a->n_floats = 2, a->floats = fl;
	a = aps[na++] = mk_attr(&k, "pads", LOOM_ATTR_INTS);
	a->n_ints = 3, a->ints = in;
	a = aps[na++] = mk_attr(&k, "names", LOOM_ATTR_STRINGS);
	a->n_strings = 2, a->strings = strs;
	a = aps[na++] = mk_attr(&k, "value", LOOM_ATTR_TENSOR);
	onnx__tensor_proto__init(&at);
	at.has_data_type = 1, at.data_type = LOOM_DT_INT64, at.n_dims = 1, at.dims = (int64_t *)&d2[0];
	at.n_int64_data = 2, at.int64_data = in;
	a->t = &at;
	a = aps[na++] = mk_attr(&k, "empty", LOOM_ATTR_INTS);
	k.nodes[0].n_attribute = (size_t)na;
	k.nodes[0].attribute = aps;
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "a node with every attribute type loads: %s", err)) {
		const loom_node *n = &g->nodes[0];
		int c;
		CHECK(n->nattrs == na, "8 attributes");
		CHECK(loom_attr_float(n, "alpha", 0) == 0.25f && loom_attr_float(n, "axis", 9) == 9,
		      "FLOAT alpha 0.25 (and an INT read as float gives the default)");
		CHECK(loom_attr_int(n, "axis", 0) == -3 && loom_attr_int(n, "missing", 42) == 42, "INT axis -3, default 42");
		CHECK(!strcmp(loom_attr_str(n, "mode", ""), "abc"), "STRING mode 'abc'");
		const loom_attr *s = loom_node_attr(n, "scales");
		CHECK(s && s->type == LOOM_ATTR_FLOATS && s->n == 2 && s->floats[0] == 1.5f && s->floats[1] == -2.0f,
		      "FLOATS scales [1.5, -2]");
		const int64_t *p = loom_attr_ints(n, "pads", &c);
		CHECK(p && c == 3 && p[0] == 7 && p[1] == -8 && p[2] == 9, "INTS pads [7, -8, 9]");
		CHECK(!loom_attr_ints(n, "alpha", &c) && c == 0, "loom_attr_ints of a FLOAT: NULL, count 0");
		const loom_attr *ss = loom_node_attr(n, "names");
		CHECK(ss && ss->type == LOOM_ATTR_STRINGS && ss->n == 2 && !strcmp(ss->strings[0], "abc") &&
		      !strcmp(ss->strings[1], ""), "STRINGS names ['abc', '']");
		const loom_attr *t = loom_node_attr(n, "value");
		CHECK(t && t->type == LOOM_ATTR_TENSOR && t->t && t->t->dtype == LOOM_DT_INT64 && t->t->rank == 1 &&
		      t->t->dims[0] == 2 && ((int64_t *)t->t->data)[1] == -8 && t->t->is_const,
		      "TENSOR value int64[2] {7, -8}");
		const loom_attr *e = loom_node_attr(n, "empty");
		CHECK(e && e->type == LOOM_ATTR_INTS && e->n == 0, "an empty INTS");
		CHECK(!loom_node_attr(n, "nothing"), "loom_node_attr of a missing name: NULL");
		loom_graph_free(g);
	}
	/* an attribute twice; a TENSOR attribute with bad data */
	aps[1]->name = "alpha";
	expect_refusal(&k, NULL, 0, "an attribute twice", "'alpha'", "twice", NULL);
	aps[1]->name = "axis";
	at.n_int64_data = 1;
	expect_refusal(&k, NULL, 0, "a TENSOR attribute with too few values", "attribute 'value'", "int64_data holds 1",
		       NULL);
	at.n_int64_data = 2;
	aps[3]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS;
	expect_refusal(&k, NULL, 0, "a SPARSE_TENSORS attribute", "'scales'", "SPARSE_TENSORS", "not supported");

	/* Constants of each form, folded */
	const char *forms[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};
	for (int f = 0; f < 5; f++) {
		mk_init(&k, 8, 13);
		mk_input(&k, "x", LOOM_DT_FLOAT, 2, d13);
		mk_output(&k, "y", LOOM_DT_FLOAT, 2, d13);
		mk_node(&k, "Constant", NULL, NULL, NULL, "k");
		mk_node(&k, "Add", "add", "x", "k", "y");
		static Onnx__AttributeProto *cap[1];
		int ty = f == 0 ? LOOM_ATTR_TENSOR : f == 1 ? LOOM_ATTR_FLOAT : f == 2 ? LOOM_ATTR_FLOATS
			: f == 3 ? LOOM_ATTR_INT : LOOM_ATTR_INTS;
		a = cap[0] = mk_attr(&k, (char *)forms[f], ty);
		a->t = &at;
		a->has_f = 1, a->f = 2.5f;
		a->n_floats = 2, a->floats = fl;
		a->has_i = 1, a->i = 11;
		a->n_ints = 3, a->ints = in;
		k.nodes[0].n_attribute = 1;
		k.nodes[0].attribute = cap;
		if (!CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "Constant %s loads: %s", forms[f], err))
			continue;
		const loom_tensor *t = &g->tensors[loom_graph_find(g, "k")];
		int ok = g->nnodes == 1 && t->is_const && t->data && g->nodes[0].inputs[1] == loom_graph_find(g, "k");
		switch (f) {
		case 0: ok = ok && t->dtype == LOOM_DT_INT64 && t->rank == 1 && ((int64_t *)t->data)[0] == 7; break;
		case 1: ok = ok && t->dtype == LOOM_DT_FLOAT && t->rank == 0 && *(float *)t->data == 2.5f; break;
		case 2: ok = ok && t->dtype == LOOM_DT_FLOAT && t->rank == 1 && t->dims[0] == 2 &&
			     ((float *)t->data)[1] == -2.0f; break;
		case 3: ok = ok && t->dtype == LOOM_DT_INT64 && t->rank == 0 && *(int64_t *)t->data == 11; break;
		default: ok = ok && t->dtype == LOOM_DT_INT64 && t->rank == 1 && t->dims[0] == 3 &&
			     ((int64_t *)t->data)[2] == 9; break;
		}
		CHECK(ok, "Constant %s folded into an initializer with its value", forms[f]);
		loom_graph_free(g);
	}
	a->name = "value_string";
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	expect_refusal(&k, NULL, 0, "a string Constant", "node 'Constant_0' (Constant)", "value_string", "not supported");
}

/* every data type, through its typed field and through raw_data */
static void test_initializers(void)
{
	static mk k;
	loom_graph *g;
	char err[1024];
	static const int64_t d3[] = {3}, d23[] = {2, 3}, dneg[] = {2, -1}, d0[] = {0, 4};
	static const int dts[] = {LOOM_DT_FLOAT, LOOM_DT_UINT8, LOOM_DT_INT8, LOOM_DT_UINT16, LOOM_DT_INT16,
				  LOOM_DT_INT32, LOOM_DT_INT64, LOOM_DT_BOOL, LOOM_DT_DOUBLE, LOOM_DT_UINT32,
				  LOOM_DT_UINT64};
	static float fv[3] = {1.0f, -2.5f, 3.0f};
	static double dv[3] = {1.0, -2.5, 3.0};
	static int32_t iv[3] = {1, -2, 300};
	static int64_t lv[3] = {1, -2, 5000000000LL};
	static uint64_t uv[3] = {1, 2, 5000000000ULL};
	static uint8_t raw[3 * 8];
	for (int r = 0; r < 2; r++)
		for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
			int dt = dts[i];
			size_t es = loom_dtype_size(dt);
			mk_relu(&k, 13, 1);
			Onnx__TensorProto *t = mk_init_tensor(&k, "w", dt, 1, d3);
			/* expected values */
			uint8_t want[24];
			for (int e = 0; e < 3; e++) {
				switch (dt) {
				case LOOM_DT_FLOAT: memcpy(want + 4 * e, &fv[e], 4); break;
				case LOOM_DT_DOUBLE: memcpy(want + 8 * e, &dv[e], 8); break;
				case LOOM_DT_INT64: memcpy(want + 8 * e, &lv[e], 8); break;
				case LOOM_DT_UINT64: memcpy(want + 8 * e, &uv[e], 8); break;
				case LOOM_DT_UINT32: { uint32_t v = (uint32_t)uv[e]; memcpy(want + 4 * e, &v, 4); break; }
				case LOOM_DT_INT32: memcpy(want + 4 * e, &iv[e], 4); break;
				case LOOM_DT_INT16: { int16_t v = (int16_t)iv[e]; memcpy(want + 2 * e, &v, 2); break; }
				case LOOM_DT_UINT16: { uint16_t v = (uint16_t)iv[e]; memcpy(want + 2 * e, &v, 2); break; }
				case LOOM_DT_BOOL: want[e] = iv[e] != 0; break;
				default: want[e] = (uint8_t)iv[e]; break;
				}
			}
			if (r) {
				memcpy(raw, want, 3 * es); /* little-endian host */
				t->has_raw_data = 1;
				t->raw_data.len = 3 * es;
				t->raw_data.data = raw;
			} else {
				switch (dt) {
				case LOOM_DT_FLOAT: t->n_float_data = 3, t->float_data = fv; break;
				case LOOM_DT_DOUBLE: t->n_double_data = 3, t->double_data = dv; break;
				case LOOM_DT_INT64: t->n_int64_data = 3, t->int64_data = lv; break;
				case LOOM_DT_UINT32:
				case LOOM_DT_UINT64: t->n_uint64_data = 3, t->uint64_data = uv; break;
				default: t->n_int32_data = 3, t->int32_data = iv; break;
				}
			}
			if (!CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "%s initializer (%s) loads: %s",
				   loom_dtype_name(dt), r ? "raw_data" : "typed field", err))
				continue;
			const loom_tensor *w = &g->tensors[loom_graph_find(g, "w")];
			CHECK(w->dtype == dt && w->rank == 1 && w->dims[0] == 3 && w->is_const &&
			      loom_tensor_bytes(w) == 3 * es && !memcmp(w->data, want, 3 * es),
			      "%s initializer (%s): values", loom_dtype_name(dt), r ? "raw_data" : "typed field");
			loom_graph_free(g);
		}
	/* bad initializers */
	mk_relu(&k, 13, 1);
	Onnx__TensorProto *t = mk_init_tensor(&k, "w", LOOM_DT_FLOAT, 2, d23);
	t->has_raw_data = 1;
	t->raw_data.len = 20;
	t->raw_data.data = raw;
	expect_refusal(&k, NULL, 0, "raw_data of the wrong size", "initializer 'w'", "raw_data holds 20 bytes", "24");
	t->has_raw_data = 0;
	t->n_float_data = 3, t->float_data = fv;
	expect_refusal(&k, NULL, 0, "float_data of the wrong count", "initializer 'w'", "float_data holds 3", "6");
	t->n_float_data = 0;
	expect_refusal(&k, NULL, 0, "an initializer without data", "initializer 'w'", "no data", NULL);
	t->dims = (int64_t *)dneg;
	expect_refusal(&k, NULL, 0, "a negative initializer dim", "initializer 'w'", "dimension 1 is negative", NULL);
	t->dims = (int64_t *)d0;
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "an empty initializer float[0,4] loads: %s", err)) {
		const loom_tensor *w = &g->tensors[loom_graph_find(g, "w")];
		CHECK(w->is_const && w->data && loom_tensor_numel(w) == 0 && loom_tensor_bytes(w) == 0,
		      "empty initializer: numel 0, data not NULL");
		loom_graph_free(g);
	}
	t->dims = (int64_t *)d23;
	t->n_float_data = 6, t->float_data = fv; /* only the count matters before the copy: use raw instead */
	t->n_float_data = 0;
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	expect_refusal(&k, NULL, 0, "external data", "initializer 'w'", "external data not supported", NULL);
	t->has_data_location = 0;
	t->data_type = 10;
	expect_refusal(&k, NULL, 0, "a float16 initializer", "initializer 'w'", "float16", "not supported");
	t->data_type = 8;
	expect_refusal(&k, NULL, 0, "a string initializer", "initializer 'w'", "string", "not supported");
	t->data_type = LOOM_DT_FLOAT;
	t->n_dims = 9;
	static const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	t->dims = (int64_t *)d9;
	expect_refusal(&k, NULL, 0, "an initializer of rank 9", "initializer 'w'", "rank 9", NULL);
	static const int64_t huge[] = {INT64_MAX / 2, 4};
	t->n_dims = 2;
	t->dims = (int64_t *)huge;
	expect_refusal(&k, NULL, 0, "an initializer whose size overflows", "initializer 'w'", "overflows", NULL);
	/* two initializers of one name */
	mk_relu(&k, 13, 1);
	t = mk_init_tensor(&k, "w", LOOM_DT_FLOAT, 1, d3);
	t->n_float_data = 3, t->float_data = fv;
	t = mk_init_tensor(&k, "w", LOOM_DT_FLOAT, 1, d3);
	t->n_float_data = 3, t->float_data = fv;
	expect_refusal(&k, NULL, 0, "an initializer twice", "initializer 'w'", "twice", NULL);
	/* initializers listed as graph inputs too (IR < 4 style) */
	mk_relu(&k, 13, 1);
	t = mk_init_tensor(&k, "w", LOOM_DT_FLOAT, 1, d3);
	t->n_float_data = 3, t->float_data = fv;
	mk_input(&k, "w", LOOM_DT_FLOAT, 1, d3);
	if (CHECK(!mk_load(&k, NULL, 0, &g, err, sizeof err), "an initializer also listed as input loads: %s", err)) {
		CHECK(g->ninputs == 1 && !strcmp(g->tensors[g->inputs[0]].name, "x") &&
		      g->tensors[loom_graph_find(g, "w")].is_const, "it is a constant, not a graph input");
		loom_graph_free(g);
	}
}

/* single tensors, and malformed files */
static void test_files(void)
{
	char err[1024];
	const char *tp = "/tmp/loom_test_onnx_tensor.pb";
	static const int64_t d2[] = {2, 1};
	static float fv[2] = {3.0f, 4.0f};
	Onnx__TensorProto t;
	onnx__tensor_proto__init(&t);
	t.name = "input_a";
	t.has_data_type = 1, t.data_type = LOOM_DT_FLOAT, t.n_dims = 2, t.dims = (int64_t *)d2;
	t.n_float_data = 2, t.float_data = fv;
	size_t n = onnx__tensor_proto__get_packed_size(&t);
	uint8_t *b = malloc(n);
	onnx__tensor_proto__pack(&t, b);
	write_file(tp, b, n);
	loom_tensor lt;
	if (CHECK(!loom_onnx_load_tensor(tp, &lt, err, sizeof err), "a TensorProto file loads: %s", err)) {
		CHECK(!strcmp(lt.name, "input_a") && lt.dtype == LOOM_DT_FLOAT && lt.rank == 2 && lt.dims[0] == 2 &&
		      lt.dims[1] == 1 && ((float *)lt.data)[1] == 4.0f && !lt.is_const, "tensor: name, type, shape, values");
		loom_tensor_clear(&lt);
		CHECK(!lt.name && !lt.data && !lt.rank, "loom_tensor_clear zeroes the tensor");
	}
	write_file(tp, b, n - 3);
	int rc = loom_onnx_load_tensor(tp, &lt, err, sizeof err);
	CHECK(clean_refusal(tp, rc, NULL, err) && !lt.data && !lt.name, "a truncated TensorProto: %s", err);
	free(b);
	rc = loom_onnx_load_tensor("/nonexistent/x.pb", &lt, err, sizeof err);
	CHECK(clean_refusal("/nonexistent/x.pb", rc, NULL, err), "a missing tensor file: %s", err);

	/* the model files */
	loom_graph *g = NULL;
	write_file(TMP, "", 0);
	rc = loom_onnx_load(TMP, NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal(TMP, rc, g, err) && strstr(err, "empty"), "an empty file: %s", err);
	rc = loom_onnx_load("/nonexistent/m.onnx", NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal("/nonexistent/m.onnx", rc, g, err), "a missing file: %s", err);
	rc = loom_onnx_load("/tmp", NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal("/tmp", rc, g, err), "a directory: %s", err);

	char path[512];
	fmt(path, sizeof path, "%s/node/test_conv_with_strides_padding/model.onnx", TESTDATA);
	size_t len;
	uint8_t *m = read_all(path, &len);
	if (!m) {
		/* fall back to a hand-made model */
		static mk k;
		mk_relu(&k, 13, 1);
		mk_write(&k, TMP);
		m = read_all(TMP, &len);
	}
	if (!CHECK(m && len > 16, "a model to mutate (%zu bytes)", len))
		return;
	write_file(TMP, m, len / 2);
	rc = loom_onnx_load(TMP, NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal(TMP, rc, g, err), "a model truncated at half: %s", err);
	/* every truncation: loads or refuses cleanly, never crashes */
	int clean = 1, refused = 0;
	for (size_t l = 1; l < len; l++) {
		write_file(TMP, m, l);
		rc = loom_onnx_load(TMP, NULL, 0, &g, err, sizeof err);
		if (rc)
			refused++;
		if (rc ? !clean_refusal(TMP, rc, g, err) : !!*graph_problem(g))
			clean = 0;
		loom_graph_free(g);
		g = NULL;
	}
	CHECK(clean, "the model truncated at each of %zu lengths: %d refused, no crash, messages clean", len - 1, refused);
	/* random bytes, and flipped bytes of the model */
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t *r = malloc(len);
	int loaded = 0;
	refused = 0;
	clean = 1;
	for (int it = 0; it < 3000; it++) {
		if (it < 200) {
			for (size_t i = 0; i < len; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				r[i] = (uint8_t)(seed >> 56);
			}
		} else {
			memcpy(r, m, len);
			for (int f = 0; f < 1 + it % 4; f++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				r[(seed >> 33) % len] = (uint8_t)(seed >> 24);
			}
		}
		write_file(TMP, r, len);
		rc = loom_onnx_load(TMP, NULL, 0, &g, err, sizeof err);
		if (rc)
			refused++;
		else
			loaded++;
		if (rc ? !clean_refusal(TMP, rc, g, err) : !!*graph_problem(g)) {
			if (clean)
				printf("     mutation %d: rc %d, %s\n", it, rc, rc ? err : graph_problem(g));
			clean = 0;
		}
		loom_graph_free(g);
		g = NULL;
		/* the same bytes as a tensor file */
		loom_tensor tt;
		if (!loom_onnx_load_tensor(TMP, &tt, err, sizeof err))
			loom_tensor_clear(&tt);
	}
	free(r);
	CHECK(clean, "200 random files and 2800 mutated models: %d loaded, %d refused, no crash, messages clean",
	      loaded, refused);
	free(m);
	/* a ModelProto read as a tensor, a tensor read as a model */
	rc = loom_onnx_load(tp, NULL, 0, &g, err, sizeof err);
	CHECK(clean_refusal(tp, rc, g, err), "a TensorProto file as a model: %s", err);
	unlink(tp);
	unlink(TMP);
}

static void test_parse_and_ir(void)
{
	loom_input_shape s;
	char err[512];
	CHECK(!loom_parse_input_shape("data=1x3x224x224", &s, err, sizeof err) && !strcmp(s.name, "data") &&
	      s.rank == 4 && s.dims[0] == 1 && s.dims[1] == 3 && s.dims[2] == 224 && s.dims[3] == 224,
	      "parse data=1x3x224x224");
	CHECK(!loom_parse_input_shape("a=b:0=0x7", &s, err, sizeof err) && !strcmp(s.name, "a=b:0") && s.rank == 2 &&
	      s.dims[0] == 0 && s.dims[1] == 7, "parse a=b:0=0x7: the name ends at the last '='");
	static const char *bad[] = {"x", "=1x2", "x=", "x=1xx2", "x=-1", "x=1x", "x=1,2", "x= 1",
				    "x=1x2x3x4x5x6x7x8x9", "x=99999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = loom_parse_input_shape(bad[i], &s, err, sizeof err);
		CHECK(rc == -1 && strstr(err, "--input-shape"), "parse '%s' refused: %s", bad[i], err);
	}
	char longname[300];
	memset(longname, 'n', sizeof longname);
	strcpy(longname + 280, "=1");
	CHECK(loom_parse_input_shape(longname, &s, err, sizeof err) == -1, "an input name too long: %s", err);

	CHECK(loom_dtype_size(LOOM_DT_FLOAT) == 4 && loom_dtype_size(LOOM_DT_INT64) == 8 &&
	      loom_dtype_size(LOOM_DT_BOOL) == 1 && loom_dtype_size(LOOM_DT_UINT16) == 2 &&
	      loom_dtype_size(LOOM_DT_DOUBLE) == 8 && loom_dtype_size(10) == 0 && loom_dtype_size(8) == 0 &&
	      loom_dtype_size(LOOM_DT_UNDEFINED) == 0, "loom_dtype_size");
	CHECK(!strcmp(loom_dtype_name(LOOM_DT_FLOAT), "float") && !strcmp(loom_dtype_name(LOOM_DT_INT64), "int64") &&
	      !strcmp(loom_dtype_name(LOOM_DT_UINT8), "uint8") && !strcmp(loom_dtype_name(16), "bfloat16") &&
	      !strcmp(loom_dtype_name(99), "unknown"), "loom_dtype_name");
	loom_tensor t = {0};
	t.dtype = LOOM_DT_INT16;
	CHECK(loom_tensor_numel(&t) == 1 && loom_tensor_bytes(&t) == 2, "a scalar: numel 1, 2 bytes");
	t.rank = 3, t.dims[0] = 2, t.dims[1] = 3, t.dims[2] = 4;
	CHECK(loom_tensor_numel(&t) == 24 && loom_tensor_bytes(&t) == 48, "int16[2,3,4]: numel 24, 48 bytes");
	t.dims[1] = -1;
	CHECK(loom_tensor_numel(&t) == -1 && loom_tensor_bytes(&t) == 0, "a negative dim: numel -1, 0 bytes");
	t.dims[1] = INT64_MAX, t.dims[2] = 4;
	CHECK(loom_tensor_numel(&t) == -1, "an overflowing shape: numel -1");
	t.dims[1] = 3, t.dtype = 10;
	CHECK(loom_tensor_bytes(&t) == 0, "an unknown dtype: 0 bytes");
	CHECK(loom_graph_find(NULL, "x") == -1 && !loom_node_attr(NULL, "x"), "NULL graph / node");
	loom_graph_free(NULL);
}

int main(int argc, char **argv)
{
	check_init(0);
	if (argc >= 3 && !strcmp(argv[1], "--dump")) {
		loom_input_shape s[16];
		int ns = 0;
		char err[1024];
		for (int i = 3; i < argc && ns < 16; i++)
			if (loom_parse_input_shape(argv[i], &s[ns++], err, sizeof err)) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
		loom_graph *g;
		if (loom_onnx_load(argv[2], s, ns, &g, err, sizeof err)) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		dump_graph(g);
		loom_graph_free(g);
		return 0;
	}
	test_parse_and_ir();
	test_opsets_and_shapes();
	test_graph_structure();
	test_attributes_and_constants();
	test_initializers();
	test_files();
	if (is_dir(TESTDATA)) {
		test_known_models();
		sweep_dir("node", 700);
		sweep_dir("pytorch-converted", 0);
		sweep_dir("pytorch-operator", 0);
		sweep_dir("simple", 0);
		sweep_dir("real", 0);
	} else {
		CHECK_FAIL("%s: the ONNX test data (libonnx-testdata) is not installed", TESTDATA);
	}
	return check_report();
}
