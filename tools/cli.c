/* cli.c - what the model commands of the loom CLI share (compile,
 * run MODEL.loom, test-onnx on the NPU backends): opening and booting a
 * device with the firmware, binding input tensors to a model, running it
 * through the runtime (runtime/exec.h), and the accuracy metrics of
 * an output against a reference (max absolute error, cosine similarity,
 * top-1 agreement), reading a data set's tensors (ONNX test-data layout),
 * and the progress bar of the long-running commands. */
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	return tool_dev_open_opts(backend, hw, NULL, out, err, len);
}

int tool_dev_open_opts(const char *backend, const char *hw, const loom_hw_opts *hw_opts, loom_dev **out, char *err,
		       size_t len)
{
	char fw[2048];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	loom_dev *d = NULL;
	int rc = loom_open(&(loom_open_opts){.backend = backend, .hw = hw, .hw_opts = hw_opts}, &d, err, len);
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

/* "float [1,3,224,224]" */
static void fmt_type(char *buf, size_t len, const loom_tensor *t)
{
	size_t n = (size_t)snprintf(buf, len, "%s [", loom_dtype_name(t->dtype));
	for (int d = 0; d < t->rank && d < LOOM_MAX_RANK && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

/* the graph inputs with their types: "'a' float [1,4], 'b' int64 [2]" */
static void fmt_inputs(char *buf, size_t len, const loom_graph *g)
{
	size_t n = 0;
	buf[0] = 0;
	for (int j = 0; j < g->ninputs && n < len; j++) {
		char ty[160];
		fmt_type(ty, sizeof ty, &g->tensors[g->inputs[j]]);
		n += (size_t)snprintf(buf + n, len - n, "%s'%s' %s", j ? ", " : "", g->tensors[g->inputs[j]].name, ty);
	}
}

/* the graph input tensor i of in[] goes to: by name, else by position
 * (with a warning when it has a name that no graph input has); -1 if none */
static int bind_target(const loom_graph *g, const loom_tensor *in, int i, const char *where, int warn)
{
	const char *nm = in[i].name;
	for (int j = 0; nm && nm[0] && j < g->ninputs; j++)
		if (!strcmp(g->tensors[g->inputs[j]].name, nm))
			return j;
	if (i >= g->ninputs)
		return -1;
	if (nm && nm[0] && warn)
		fprintf(stderr, "warning: %s: input tensor %d is named '%s', which is no input of the model: bound by "
				"position to input '%s'\n", where, i, nm, g->tensors[g->inputs[i]].name);
	return i;
}

/* the count of NaN and infinite values of a float input, warned about */
static void warn_nonfinite(const loom_tensor *t, const char *name, const char *where)
{
	if (t->dtype != LOOM_DT_FLOAT || !t->data)
		return;
	const float *f = t->data;
	int64_t n = loom_tensor_numel(t), nan = 0, inf = 0;
	for (int64_t k = 0; k < n; k++) {
		nan += isnan(f[k]) != 0;
		inf += isinf(f[k]) != 0;
	}
	if (nan || inf)
		fprintf(stderr, "warning: %s: input '%s' holds %lld NaN and %lld infinite values of %lld\n", where,
			name, (long long)nan, (long long)inf, (long long)n);
}

/* tool_bind_inputs; bind = 0: only the checks, no warnings, g unchanged */
static int bind_inputs(loom_graph *g, const loom_tensor *in, int nin, const char *where, int flags, int bind,
		       char *err, size_t len)
{
	int take_shape = flags & TOOL_BIND_SHAPE, warn = bind && !(flags & TOOL_BIND_QUIET);
	int src[TOOL_MAX_IO];
	char want[160], got[160], all[1024];
	if (g->ninputs > TOOL_MAX_IO) {
		snprintf(err, len, "%s: the model has %d inputs, more than %d", where, g->ninputs, TOOL_MAX_IO);
		return -1;
	}
	fmt_inputs(all, sizeof all, g);
	for (int j = 0; j < g->ninputs; j++)
		src[j] = -1;
	for (int i = 0; i < nin; i++) {
		int j = bind_target(g, in, i, where, warn);
		fmt_type(got, sizeof got, &in[i]);
		if (j < 0) {
			snprintf(err, len, "%s: extra input tensor %d '%s' (%s): the model has %d input%s: %s", where, i,
				 in[i].name ? in[i].name : "", got, g->ninputs, g->ninputs == 1 ? "" : "s", all);
			return -1;
		}
		if (src[j] >= 0) {
			snprintf(err, len, "%s: input tensors %d and %d both go to input '%s'", where, src[j], i,
				 g->tensors[g->inputs[j]].name);
			return -1;
		}
		src[j] = i;
	}
	for (int j = 0; j < g->ninputs; j++) {
		loom_tensor *t = &g->tensors[g->inputs[j]];
		fmt_type(want, sizeof want, t);
		if (src[j] < 0) {
			snprintf(err, len, "%s: no data for input '%s' (%s): %d tensor%s given for the model's %d input%s: %s",
				 where, t->name, want, nin, nin == 1 ? "" : "s", g->ninputs, g->ninputs == 1 ? "" : "s",
				 all);
			return -1;
		}
		const loom_tensor *x = &in[src[j]];
		int fits = t->dtype == x->dtype && loom_tensor_numel(t) == loom_tensor_numel(x);
		for (int d = 0; fits && !take_shape && loom_tensor_numel(t) > 1 && d < LOOM_MAX_RANK; d++)
			fits = t->rank == x->rank && (d >= t->rank || t->dims[d] == x->dims[d]);
		if (!fits) {
			fmt_type(got, sizeof got, x);
			snprintf(err, len, "%s: input '%s': given %s, the model expects %s", where, t->name, got, want);
			return -1;
		}
		if (!bind)
			continue;
		if (warn)
			warn_nonfinite(x, t->name, where);
		if (take_shape) { /* the data set fixes the input's shape (same size) */
			t->rank = x->rank;
			memcpy(t->dims, x->dims, sizeof t->dims);
		}
		if (loom_tensor_set_data(t, x->data, loom_tensor_bytes(x))) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	return 0;
}

int tool_bind_inputs(loom_graph *g, const loom_tensor *in, int nin, const char *where, int flags, char *err,
		     size_t len)
{
	return bind_inputs(g, in, nin, where, flags, 1, err, len);
}

int tool_check_inputs(const loom_graph *g, const loom_tensor *in, int nin, const char *where, char *err, size_t len)
{
	return bind_inputs((loom_graph *)g, in, nin, where, 0, 0, err, len);
}

void tool_warn_calib(const char *model, const loom_compile_report *rep)
{
	if (rep->calib_random && !rep->qdq_pairs)
		fprintf(stderr, "warning: %s: no calibration data (--calib DIR): activation ranges come from %d random "
				"N(0,1) inputs; accuracy on real data will suffer\n", model, rep->calib_samples);
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

int tool_check_backend(const char *cmd, const char *name, const char *choices)
{
	size_t n = strlen(name);
	for (const char *p = choices; p && *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, name, n))
			return 0;
		p += k + (p[k] == '|');
	}
	fprintf(stderr, "loom %s: unknown backend '%s' (choices: %s)\n", cmd, name, choices);
	return -1;
}

int tool_load_hw(const char *cmd, const char *spec, loom_hwcfg *cfg)
{
	char err[1024];
	if (!loom_hwcfg_load(cfg, spec, NULL, err, sizeof err))
		return 0;
	fprintf(stderr, "loom %s: --hw %s: %s\n", cmd, spec, err);
	return -1;
}

void tool_cfg_spec(const loom_hwcfg *c, char *buf, size_t len)
{
	/* a configuration of configs/ by its name when every parameter is the
	 * same (its RTL is built and cached under that name) */
	loom_hwcfg named;
	char err[256];
	int same = strncmp(c->name, "custom-", 7) && !loom_hwcfg_load(&named, c->name, NULL, err, sizeof err);
#define LOOM_HWPARAM(nm, sv, lo, hi, doc) same = same && named.nm == c->nm;
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	if (same) {
		snprintf(buf, len, "%s", c->name);
		return;
	}
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
	struct stat ds;
	if (stat(dir, &ds) || !S_ISDIR(ds.st_mode)) {
		snprintf(err, len, "%s: not a folder (a data set: %s_0.pb, %s_1.pb, ...)", dir, prefix, prefix);
		return -1;
	}
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

/* The heap set up for loom compile: the large buffers of the compiler and
 * the reference executor (weights, activations, im2col and packing
 * buffers) come and go per layer and per calibration sample:
 *  - they come from the heap and stay there when freed (glibc would map
 *    and unmap each one, or trim the heap), so the next of the same size
 *    faults no new pages in;
 *  - HEAP_RESERVE bytes of heap are taken at once and transparent huge
 *    pages asked for on them (madvise; most kernels give huge pages only
 *    when asked), so a fresh buffer faults once per 2 MiB, not per 4 KiB
 *    (ResNet-50's compile: 100 MB of weights unpacked in 0.065 s instead
 *    of 0.31 s, 8 calibration samples in 0.63 s instead of 0.96 s);
 *  - one arena, so the threads' buffers come from that heap too.
 * Only a hint: where the heap cannot grow, malloc maps memory as usual.
 * Not for the device backends: a large calloc (an RTL simulation's DRAM)
 * from this heap would be cleared page by page instead of mapped. */
void cli_tune_heap(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TOP_PAD) && defined(MADV_HUGEPAGE)
	enum { HEAP_RESERVE = 768 << 20 };
	const uintptr_t huge = (uintptr_t)2 << 20;
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30); /* above the reserve: kept */
	mallopt(M_ARENA_MAX, 1);
	uintptr_t lo = (uintptr_t)sbrk(0);
	mallopt(M_TOP_PAD, HEAP_RESERVE);
	void *p = malloc(1 << 20); /* more than the heap holds: it grows */
	mallopt(M_TOP_PAD, 128 << 10); /* glibc's default */
	uintptr_t hi = (uintptr_t)sbrk(0);
	lo = (lo + huge - 1) & ~(huge - 1);
	hi &= ~(huge - 1);
	if (p && hi > lo + huge)
		(void)madvise((void *)(lo + huge), hi - lo - huge, MADV_HUGEPAGE);
	free(p);
#endif
}
