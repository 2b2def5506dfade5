/* onnx_case.c - the helpers the unit tests share (tests/unit/onnx_case.h):
 * exit-on-out-of-memory wrappers, listing ONNX test case folders, loading
 * their test_data_set_0 tensors, comparing a run's outputs with them. */
#include "onnx_case.h"

#include "runtime/cpu_ops.h"
#include "compiler/onnx.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void oom(const char *what)
{
	fprintf(stderr, "out of memory (%s)\n", what);
	exit(2);
}

int oc_must(int v, const char *what)
{
	if (v < 0)
		oom(what);
	return v;
}

void *oc_must_ptr(void *p, const char *what)
{
	if (!p)
		oom(what);
	return p;
}

void *oc_xmalloc(size_t n)
{
	return oc_must_ptr(calloc(1, n ? n : 1), "calloc");
}

char *oc_xstrdup(const char *s)
{
	return oc_must_ptr(strdup(s), "strdup");
}

void oc_fill(float *v, size_t n, unsigned seed, float s)
{
	uint32_t x = 0x9e3779b9u * (seed + 1);
	for (size_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		v[i] = s * ((float)(x >> 8) / 8388608.0f - 1.0f);
	}
}

int oc_const(loom_graph *g, const char *name, int rank, const int64_t *dims, unsigned seed, float s)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	float *v = oc_xmalloc((size_t)n * sizeof *v);
	oc_fill(v, (size_t)n, seed, s);
	int t = OC_MUST(loom_graph_add_tensor(g, name, LOOM_DT_FLOAT, rank, dims, v, 1));
	free(v);
	return t;
}

int oc_value(loom_graph *g, const char *name)
{
	return OC_MUST(loom_graph_add_tensor(g, name, LOOM_DT_UNDEFINED, 0, NULL, NULL, 0));
}

loom_graph *oc_graph_new(int64_t opset, const char *path)
{
	loom_graph *g = OC_MUSTP(loom_graph_new(opset, "test"));
	g->path = oc_xstrdup(path);
	return g;
}

int oc_add_input(loom_graph *g, const char *name, int dtype, int rank, const int64_t *dims, const void *data)
{
	int t = OC_MUST(loom_graph_add_tensor(g, name, dtype, rank, dims, data, 0));
	OC_MUST(loom_graph_add_input(g, t));
	return t;
}

int oc_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int oc_list(const char *root, int (*want)(const char *root, const char *name, void *ctx), void *ctx,
	    char ***names, size_t *count)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char **v = NULL;
	size_t cnt = 0;
	*names = NULL;
	*count = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!want(root, e->d_name, ctx))
			continue;
		v = oc_must_ptr(realloc(v, sizeof *v * (cnt + 1)), "realloc");
		v[cnt++] = oc_xstrdup(e->d_name);
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof *v, cmp_str);
	*names = v;
	*count = cnt;
	return 0;
}

void oc_free_names(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

int oc_err_has_any(const char *err, const char *const *subs)
{
	for (int i = 0; subs[i]; i++)
		if (strstr(err, subs[i]))
			return 1;
	return 0;
}

void oc_fmt_dims(char *buf, size_t len, int rank, const int64_t *dims)
{
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < rank && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? "," : "", (long long)dims[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

void oc_compare(const loom_tensor *t, int dtype, int rank, const int64_t *dims, const void *data,
		double rtol, double atol, char *why, size_t len)
{
	int64_t cnt = 1;
	why[0] = 0;
	if (t->dtype != dtype) {
		snprintf(why, len, "dtype %s, expected %s", loom_dtype_name(t->dtype), loom_dtype_name(dtype));
		return;
	}
	if (t->rank != rank || (rank && memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank))) {
		char a[128], b[128];
		oc_fmt_dims(a, sizeof a, t->rank, t->dims);
		oc_fmt_dims(b, sizeof b, rank, dims);
		snprintf(why, len, "shape %s, expected %s", a, b);
		return;
	}
	for (int d = 0; d < rank; d++)
		cnt *= dims[d];
	if (cnt && !t->data) {
		snprintf(why, len, "no data");
		return;
	}
	for (int64_t i = 0; i < cnt; i++) {
		if (dtype == LOOM_DT_FLOAT || dtype == LOOM_DT_DOUBLE) {
			double a = dtype == LOOM_DT_FLOAT ? ((const float *)t->data)[i] : ((const double *)t->data)[i];
			double b = dtype == LOOM_DT_FLOAT ? ((const float *)data)[i] : ((const double *)data)[i];
			if (isnan(a) && isnan(b))
				continue;
			if (a == b)
				continue;
			if (!(fabs(a - b) <= atol + rtol * fabs(b))) {
				snprintf(why, len, "element %lld is %.9g, expected %.9g", (long long)i, a, b);
				return;
			}
		} else {
			size_t es = loom_dtype_size(dtype);
			if (memcmp((const char *)t->data + (size_t)i * es, (const char *)data + (size_t)i * es, es)) {
				int64_t a = 0, b = 0;
				memcpy(&a, (const char *)t->data + (size_t)i * es, es < 8 ? es : 8);
				memcpy(&b, (const char *)data + (size_t)i * es, es < 8 ? es : 8);
				snprintf(why, len, "element %lld differs (0x%llx, expected 0x%llx)", (long long)i,
					 (unsigned long long)a, (unsigned long long)b);
				return;
			}
		}
	}
}

int oc_load_pb(const char *dir, const char *kind, int k, loom_tensor *t, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, kind, k);
	if (!oc_file_exists(path))
		return 0;
	return loom_onnx_load_tensor(path, t, err, errlen) ? -1 : 1;
}

int oc_input_tensor(const loom_graph *g, int k, const loom_tensor *t)
{
	int ti = t->name && t->name[0] ? loom_graph_find(g, t->name) : -1;
	if (ti < 0 && k < g->ninputs)
		ti = g->inputs[k];
	return ti;
}

void oc_set_tensor(loom_tensor *gt, const loom_tensor *t)
{
	gt->dtype = t->dtype;
	gt->rank = t->rank;
	memcpy(gt->dims, t->dims, sizeof gt->dims);
	loom_tensor_set_data(gt, t->data, loom_tensor_bytes(t));
}

void oc_compare_outputs(loom_graph *g, const char *dir, double rtol, double atol, char *why, size_t len)
{
	char err[1024];
	why[0] = 0;
	for (int i = 0; i < g->noutputs && !why[0]; i++) {
		loom_tensor t;
		int ti, rc = oc_load_pb(dir, "output", i, &t, err, sizeof err);
		char w[400];
		if (rc == 0)
			break;
		if (rc < 0) {
			snprintf(why, len, "%s", err);
			break;
		}
		ti = t.name && t.name[0] ? loom_graph_find(g, t.name) : -1;
		if (ti < 0)
			ti = g->outputs[i];
		oc_compare(&g->tensors[ti], t.dtype, t.rank, t.dims, t.data, rtol, atol, w, sizeof w);
		if (w[0])
			snprintf(why, len, "output %d '%s': %s", i, g->tensors[ti].name, w);
		loom_tensor_clear(&t);
	}
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

void oc_write_pb(const char *path, const char *name, int rank, const int64_t *dims, const float *data)
{
	size_t numel = 1, n = 0;
	for (int i = 0; i < rank; i++)
		numel *= (size_t)dims[i];
	unsigned char *buf = oc_xmalloc(numel * 4 + 64 + 16 * (size_t)rank + (name ? strlen(name) : 0));
	for (int i = 0; i < rank; i++) {
		buf[n++] = 1 << 3; /* dims */
		n += put_varint(buf + n, (uint64_t)dims[i]);
	}
	buf[n++] = 2 << 3; /* data_type */
	n += put_varint(buf + n, LOOM_DT_FLOAT);
	if (name && name[0]) {
		buf[n++] = 8 << 3 | 2;
		n += put_varint(buf + n, strlen(name));
		memcpy(buf + n, name, strlen(name));
		n += strlen(name);
	}
	buf[n++] = 9 << 3 | 2; /* raw_data, little-endian host */
	n += put_varint(buf + n, numel * 4);
	memcpy(buf + n, data, numel * 4);
	n += numel * 4;
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, n, f) != n) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
	fclose(f);
	free(buf);
}
