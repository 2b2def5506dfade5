/* cli.c - what the model commands of the loom CLI share (compile,
 * run MODEL.loom, test-onnx on the NPU backends): opening and booting a
 * device with the firmware, binding input tensors to a model, running it
 * through the runtime (runtime/exec.h), and the accuracy metrics of
 * an output against a reference (max absolute error, cosine similarity,
 * top-1 agreement), reading a data set's tensors (ONNX test-data layout),
 * and the progress bar of the long-running commands. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "loom/loom.h"
#include "compiler/onnx.h"

int tool_dev_open(const char *backend, const char *hw, loom_dev **out, char *err, size_t len)
{
	char fw[2048];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	loom_dev *d = NULL;
	int rc = loom_open(&(loom_open_opts){.backend = backend, .hw = hw}, &d, err, len);
	if (rc)
		return -1;
	if ((rc = loom_load_firmware(d, fw)) || (rc = loom_boot(d, NULL))) {
		snprintf(err, len, "%s: %s: %s", fw, loom_strerror(rc), loom_errmsg(d));
		loom_close(d);
		return -1;
	}
	*out = d;
	return 0;
}

int tool_bind_inputs(loom_graph *g, const loom_tensor *in, int nin, const char *where, int take_shape, char *err,
		     size_t len)
{
	if (nin != g->ninputs) {
		snprintf(err, len, "%s: %d input tensors for %d graph inputs", where, nin, g->ninputs);
		return -1;
	}
	for (int i = 0; i < nin; i++) {
		int k = -1;
		for (int j = 0; in[i].name && in[i].name[0] && j < g->ninputs && k < 0; j++)
			if (!strcmp(g->tensors[g->inputs[j]].name, in[i].name))
				k = g->inputs[j];
		if (k < 0)
			k = g->inputs[i];
		loom_tensor *t = &g->tensors[k];
		if (t->dtype != in[i].dtype || loom_tensor_bytes(t) != loom_tensor_bytes(&in[i])) {
			snprintf(err, len, "%s: input %d ('%s') does not fit graph input '%s' (%s)", where, i,
				 in[i].name ? in[i].name : "", t->name, loom_dtype_name(t->dtype));
			return -1;
		}
		if (take_shape) { /* the data set fixes the input's shape (same size) */
			t->rank = in[i].rank;
			memcpy(t->dims, in[i].dims, sizeof t->dims);
		}
		if (loom_tensor_set_data(t, in[i].data, loom_tensor_bytes(&in[i]))) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	return 0;
}

void tool_metrics(const loom_tensor *got, const loom_tensor *want, tool_metrics_t *m)
{
	memset(m, 0, sizeof *m);
	int64_t n = loom_tensor_numel(want);
	if (got->dtype != LOOM_DT_FLOAT || want->dtype != LOOM_DT_FLOAT || loom_tensor_numel(got) != n ||
	    !got->data || !want->data) {
		m->max_abs = INFINITY;
		m->cos = -1;
		return;
	}
	const float *a = got->data, *b = want->data;
	double dot = 0, na = 0, nb = 0;
	for (int64_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);
		if (!(d <= m->max_abs))
			m->max_abs = d;
		dot += (double)a[i] * b[i];
		na += (double)a[i] * a[i];
		nb += (double)b[i] * b[i];
		if (fabs(b[i]) > m->ref_absmax)
			m->ref_absmax = fabs(b[i]);
	}
	m->cos = na > 0 && nb > 0 ? dot / sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
	/* top-1 over the last dimension, per row */
	int64_t cols = want->rank ? want->dims[want->rank - 1] : 1;
	if (cols > 1 && n % cols == 0) {
		int64_t rows = n / cols, agree = 0;
		for (int64_t r = 0; r < rows; r++) {
			int64_t ia = 0, ib = 0;
			for (int64_t c = 1; c < cols; c++) {
				if (a[r * cols + c] > a[r * cols + ia])
					ia = c;
				if (b[r * cols + c] > b[r * cols + ib])
					ib = c;
			}
			agree += ia == ib;
		}
		m->rows = rows;
		m->top1 = (double)agree / (double)rows;
	}
}

void tool_cfg_spec(const loom_hwcfg *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
#define LOOM_HWPARAM(nm, sv, lo, hi, doc) \
	if (n < len) \
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%u", n ? "," : "", #nm, c->nm);
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
}

int tool_load_tensors(const char *dir, const char *prefix, loom_tensor *t, char *err, size_t len)
{
	int n = 0;
	for (; n < TOOL_MAX_IO; n++) {
		char p[4200];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s_%d.pb", dir, prefix, n);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			break;
		if (loom_onnx_load_tensor(p, &t[n], err, len)) {
			for (int i = 0; i < n; i++)
				loom_tensor_clear(&t[i]);
			return -1;
		}
	}
	return n;
}

/* element i of t as a double (any dtype Loom handles; NaN for others) */
double tool_elem_f(const loom_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case LOOM_DT_FLOAT: return ((const float *)t->data)[i];
	case LOOM_DT_DOUBLE: return ((const double *)t->data)[i];
	case LOOM_DT_INT8: return ((const int8_t *)t->data)[i];
	case LOOM_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case LOOM_DT_INT16: return ((const int16_t *)t->data)[i];
	case LOOM_DT_UINT16: return ((const uint16_t *)t->data)[i];
	case LOOM_DT_INT32: return ((const int32_t *)t->data)[i];
	case LOOM_DT_UINT32: return ((const uint32_t *)t->data)[i];
	case LOOM_DT_INT64: return (double)((const int64_t *)t->data)[i];
	case LOOM_DT_UINT64: return (double)((const uint64_t *)t->data)[i];
	case LOOM_DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
	default: return NAN;
	}
}

void tool_print_outputs(const loom_graph *g)
{
	for (int i = 0; i < g->noutputs; i++) {
		const loom_tensor *t = &g->tensors[g->outputs[i]];
		printf("output %s: %s [", t->name, loom_dtype_name(t->dtype));
		for (int d = 0; d < t->rank; d++)
			printf("%s%lld", d ? "x" : "", (long long)t->dims[d]);
		printf("]:");
		int64_t n = loom_tensor_numel(t);
		for (int64_t k = 0; k < n && k < 8 && t->data; k++)
			printf(" %.6g", tool_elem_f(t, k));
		printf("%s\n", n > 8 ? " ..." : "");
	}
}

char *tool_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	fclose(f);
	if (len)
		*len = s ? (size_t)n : 0;
	return s;
}

/* ---- progress bar (stderr, terminals only) ---- */

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void hms(double s, char *buf, size_t len)
{
	long t = s > 0 && s < 1e8 ? (long)(s + 0.5) : 0;
	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void tool_progress_start(tool_progress *p, const char *what, long total)
{
	memset(p, 0, sizeof *p);
	p->what = what;
	p->total = total;
	p->tty = isatty(STDERR_FILENO);
	p->t0 = mono_s();
}

void tool_progress_update(tool_progress *p, long done)
{
	if (!p->tty || p->total <= 0)
		return;
	double now = mono_s(), el = now - p->t0;
	if (el < TOOL_PROGRESS_AFTER_S || (p->shown && now - p->last < 0.2 && done < p->total))
		return;
	p->last = now;
	p->shown = 1;
	enum { W = 30 };
	char bar[W + 1], e[32], eta[32];
	int fill = (int)((double)W * (double)done / (double)p->total);
	for (int i = 0; i < W; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[W] = 0;
	hms(el, e, sizeof e);
	if (done > 0)
		hms(el / (double)done * (double)(p->total - done), eta, sizeof eta);
	else
		snprintf(eta, sizeof eta, "?");
	fprintf(stderr, "\r%s [%s] %ld/%ld %3.0f%%, %s elapsed, ETA %s\033[K", p->what, bar, done, p->total,
		100.0 * (double)done / (double)p->total, e, eta);
	fflush(stderr);
}

void tool_progress_clear(tool_progress *p)
{
	if (!p->shown)
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	p->shown = 0;
	p->last = 0;
}

void tool_progress_end(tool_progress *p) { tool_progress_clear(p); }
