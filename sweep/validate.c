/* validate.c - the timing model held against the RTL (sweep/validate.h).
 *
 * A compiled model runs once on each backend through the runtime
 * (runtime/exec.h) with zero inputs: device cycles do not depend on the
 * data (no engine skips work by value), and zeros run every model,
 * whatever its input types. Per layer the MARK records give the cycles
 * from the previous record (or the job's START) to its own, on both
 * backends; the analytical estimate is the planner's, stored in the
 * model (loom_layer.est_cycles). A layer's error is (x - rtl) / rtl; a
 * model's summary is the median and the worst per-layer |error| and the
 * error of the sums ("whole model": the engines' cycles of every NPU job,
 * without the control core's job overhead, which no estimate covers). */
#include "sweep/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "loom/loom.h"
#include "compiler/compile.h"
#include "compiler/onnx.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"

double loom_val_err(double x, double ref)
{
	if (ref == 0)
		return x;
	return (x - ref) / ref;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void loom_val_summarize(const double *x, const double *ref, size_t n, loom_val_sum *s)
{
	memset(s, 0, sizeof *s);
	s->worst_layer = -1;
	if (!n)
		return;
	double *a = malloc(n * sizeof *a), sx = 0, sr = 0;
	for (size_t i = 0; i < n; i++) {
		double e = loom_val_err(x[i], ref[i]);
		if (a)
			a[i] = fabs(e);
		if (s->worst_layer < 0 || fabs(e) > fabs(s->worst)) {
			s->worst = e;
			s->worst_layer = (int)i;
		}
		sx += x[i];
		sr += ref[i];
	}
	if (a) {
		qsort(a, n, sizeof *a, cmp_double);
		s->median = n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
		free(a);
	}
	s->whole = loom_val_err(sx, sr);
}

/* a configuration of configs/ with every parameter of c's but the DRAM's
 * latency and bandwidth (a run-time input of the RTL harness) into name:
 * 1 found, 0 not */
static int rtl_twin(const loom_hwcfg *c, char *name, size_t len)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/configs", loom_root_dir());
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), found = 0;
	for (int i = 0; i < n; i++) {
		size_t k = strlen(ents[i]->d_name);
		char nm[256], e[256];
		loom_hwcfg o;
		int same = 1;
		if (!found && k > 4 && k < sizeof nm && !strcmp(ents[i]->d_name + k - 4, ".cfg")) {
			snprintf(nm, sizeof nm, "%.*s", (int)(k - 4), ents[i]->d_name);
			if (!loom_hwcfg_load(&o, nm, NULL, e, sizeof e)) {
#define LOOM_HWPARAM(p, sv, lo, hi, doc) same &= !strcmp(#p, "dram_latency") || !strcmp(#p, "dram_bw") || o.p == c->p;
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
				if (same) {
					snprintf(name, len, "%s", nm);
					found = 1;
				}
			}
		}
		free(ents[i]);
	}
	free(ents);
	return found;
}

/* a booted device of configuration hw on backend (the RTL: of the
 * configs/ twin that differs in the DRAM's timing alone, which the harness
 * takes at run time, so no second Verilator build) */
static int dev_open(const char *backend, const char *hw, loom_dev **out, char *err, size_t len)
{
	char fw[2048], twin[256];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	loom_dev *d = NULL;
	loom_hwcfg c;
	loom_hw_opts ho = {0};
	loom_open_opts oo = {.backend = backend, .hw = hw};
	if (!strcmp(backend, "rtl") && !loom_hwcfg_load(&c, hw, NULL, err, len) && rtl_twin(&c, twin, sizeof twin)) {
		ho.dram_latency = c.dram_latency, ho.dram_bw = c.dram_bw;
		oo.hw = twin, oo.hw_opts = &ho;
	}
	if (loom_open(&oo, &d, err, len))
		return -1;
	int rc = loom_load_firmware(d, fw);
	if (!rc)
		rc = loom_boot(d, NULL);
	if (rc) {
		snprintf(err, len, "%.1000s: %s: %.1000s", fw, loom_strerror(rc), loom_errmsg(d));
		loom_close(d);
		return -1;
	}
	*out = d;
	return 0;
}

/* one run of m on backend; each layer's cycles into cyc[] */
static int run_on(loom_model *m, const char *backend, const char *hw, uint64_t *cyc, char *err, size_t len)
{
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	char e2[4096];
	int rc = -1;
	if (dev_open(backend, hw, &dev, e2, sizeof e2) || loom_exec_new(dev, m, &ex, e2, sizeof e2) ||
	    loom_exec_run(ex, e2, sizeof e2)) {
		snprintf(err, len, "%s: %.2000s", backend, e2);
		goto out;
	}
	const loom_exec_stats *st = loom_exec_get_stats(ex);
	for (uint32_t l = 0; l < m->nlayers; l++)
		cyc[l] = st->layers[l].cycles;
	rc = 0;
out:
	loom_exec_free(ex);
	loom_close(dev);
	return rc;
}

/* zeros into every graph input */
static int zero_inputs(loom_graph *g, char *err, size_t len)
{
	for (int i = 0; i < g->ninputs; i++) {
		loom_tensor *t = &g->tensors[g->inputs[i]];
		size_t n = loom_tensor_bytes(t);
		void *z = calloc(1, n + 1);
		int rc = !z || loom_tensor_set_data(t, z, n);
		free(z);
		if (rc) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	return 0;
}

int loom_validate_model(loom_model *m, const char *hw, const loom_val_opts *o, loom_val_model *out, char *err,
			size_t errlen)
{
	static const loom_val_opts none;
	if (!o)
		o = &none;
	memset(out, 0, sizeof *out);
	snprintf(out->model, sizeof out->model, "%s", m->source ? m->source : "");
	snprintf(out->cfg, sizeof out->cfg, "%s", m->cfg.name);
	uint32_t n = m->nlayers;
	out->nlayers = n;
	out->layers = calloc((size_t)n + 1, sizeof *out->layers);
	uint64_t *cyc = calloc(2 * ((size_t)n + 1), sizeof *cyc);
	double *x = calloc(3 * ((size_t)n + 1), sizeof *x);
	int rc = -1;
	if (!out->layers || !cyc || !x) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (zero_inputs(m->graph, err, errlen))
		goto out;
	if (!o->no_rtl && run_on(m, "rtl", hw, cyc, err, errlen))
		goto out;
	if (run_on(m, "cmodel", hw, cyc + n + 1, err, errlen))
		goto out;
	for (uint32_t l = 0; l < n; l++) {
		loom_val_layer *v = &out->layers[l];
		snprintf(v->name, sizeof v->name, "%s", m->layers[l].name ? m->layers[l].name : "");
		v->kind = m->layers[l].kind;
		v->est = (double)m->layers[l].est_cycles;
		v->rtl = cyc[l];
		v->cm = cyc[n + 1 + l];
		out->est += v->est;
		out->rtl += v->rtl;
		out->cm += v->cm;
		x[l] = v->est;
		x[n + 1 + l] = (double)v->cm;
		x[2 * (n + 1) + l] = (double)(o->no_rtl ? v->cm : v->rtl);
	}
	for (uint32_t s = 0; s < m->nsteps; s++)
		for (uint32_t l = m->steps[s].layer; m->steps[s].kind == LOOM_STEP_NPU && l < m->steps[s].layer + m->steps[s].nlayers && l < n; l++)
			out->layers[l].job = s;
	loom_val_summarize(x, x + 2 * (n + 1), n, &out->est_err);
	if (!o->no_rtl)
		loom_val_summarize(x + n + 1, x + 2 * (n + 1), n, &out->cm_err);
	rc = 0;
out:
	free(cyc);
	free(x);
	if (rc)
		loom_val_model_free(out);
	return rc;
}

/* the calibration folder: o's, else calib/ beside the ONNX file when there */
static const char *calib_for(const char *onnx, const loom_val_opts *o, char *buf, size_t len)
{
	if (o && o->calib_dir)
		return o->calib_dir;
	const char *sl = strrchr(onnx, '/');
	int dl = sl ? (int)(sl - onnx) : 1;
	snprintf(buf, len, "%.*s/calib", dl, sl ? onnx : ".");
	struct stat st;
	return !stat(buf, &st) && S_ISDIR(st.st_mode) ? buf : NULL;
}

int loom_validate_onnx(const char *onnx, const char *hw, const loom_val_opts *o, loom_val_model *out, char *err,
		       size_t errlen)
{
	loom_hwcfg cfg;
	loom_graph *g = NULL;
	loom_model *m = NULL;
	char cal[4200];
	memset(out, 0, sizeof *out);
	if (loom_hwcfg_load(&cfg, hw, NULL, err, errlen))
		return -1;
	if (loom_onnx_load(onnx, NULL, 0, &g, err, errlen))
		return -1;
	loom_compile_opts co = {.calib_dir = calib_for(onnx, o, cal, sizeof cal), .source = onnx,
				.options = "loom sweep --validate"};
	if (loom_compile(g, &cfg, &co, &m, NULL, err, errlen))
		return -1;
	int rc = loom_validate_model(m, hw, o, out, err, errlen);
	loom_model_free(m);
	return rc;
}

void loom_val_model_free(loom_val_model *v)
{
	free(v->layers);
	v->layers = NULL;
	v->nlayers = 0;
}
