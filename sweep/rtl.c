/* rtl.c - one design point of one model on the RTL (sweep.h): the ground
 * truth beside the analytical answer. The model is compiled in full for
 * the point's configuration, reusing the calibration of the model's
 * preparation when this process made it (loom_compile_opts.calib), then one
 * inference runs on the Verilator model through libloom, the firmware and
 * the runtime (runtime/exec.h) on deterministic random inputs: the layers'
 * MARK records give each layer's device cycles.
 *
 * The RTL of a configuration is verilated once (hw/hw.c builds
 * build/hw/NAME on first use, under a lock); a point whose parameters
 * other than the simulated DRAM's latency and bandwidth equal a
 * configuration of configs/ uses that configuration's build, the DRAM
 * timing being a run-time input of the harness (loom_hw_opts). */
#include "sweep/sweep.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/onnx.h"
#include "loom/hw.h"
#include "loom/loom.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"

/* the loom_open spec of pt: a configs/ name with the same fingerprint, or every parameter */
static void rtl_spec(const sweep_point *pt, char *buf, size_t len)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/configs", loom_root_dir());
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), found = 0;
	for (int i = 0; i < n; i++) {
		size_t k = strlen(ents[i]->d_name);
		char name[256], e[256];
		loom_hwcfg c;
		if (!found && k > 4 && k < sizeof name && !strcmp(ents[i]->d_name + k - 4, ".cfg")) {
			snprintf(name, sizeof name, "%.*s", (int)(k - 4), ents[i]->d_name);
			if (!loom_hwcfg_load(&c, name, NULL, e, sizeof e) && c.fingerprint == pt->cfg.fingerprint) {
				snprintf(buf, len, "%s", name);
				found = 1;
			}
		}
		free(ents[i]);
	}
	free(ents);
	if (found)
		return;
	size_t m = 0;
	buf[0] = 0;
#define LOOM_HWPARAM(nm, sv, lo, hi, doc) \
	if (m < len) \
		m += (size_t)snprintf(buf + m, len - m, "%s%s=%u", m ? "," : "", #nm, pt->cfg.nm);
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
}

int sweep_rtl_prepare(const sweep_point *pt, char *err, size_t len)
{
	char spec[1024];
	rtl_spec(pt, spec, sizeof spec);
	loom_hwcfg c;
	if (loom_hwcfg_load(&c, spec, NULL, err, len))
		return -1;
	return loom_hw_rtl_build(&c, err, len);
}

/* deterministic inputs: N(0, 1) floats (a xorshift and Box-Muller), zeros otherwise */
static int set_inputs(loom_graph *g, char *err, size_t len)
{
	uint64_t s = 0x243f6a8885a308d3ull;
	for (int i = 0; i < g->ninputs; i++) {
		loom_tensor *t = &g->tensors[g->inputs[i]];
		size_t bytes = loom_tensor_bytes(t);
		void *d = calloc(1, bytes + 1);
		if (!d) {
			snprintf(err, len, "out of memory");
			return -1;
		}
		float *f = d;
		if (t->dtype == LOOM_DT_FLOAT)
			for (int64_t e = 0; e < loom_tensor_numel(t); e++) {
				double u[2];
				for (int k = 0; k < 2; k++) {
					s ^= s << 13, s ^= s >> 7, s ^= s << 17;
					u[k] = ((s >> 11) + 1.0) / 9007199254740993.0;
				}
				f[e] = (float)(sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]));
			}
		int rc = loom_tensor_set_data(t, d, bytes);
		free(d);
		if (rc) {
			snprintf(err, len, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* one inference of m on the RTL of pt: the layers' cycles into r */
static int run_model(const sweep_point *pt, loom_model *m, const loom_compile_report *rep, sweep_result *r,
		     char *err, size_t len)
{
	char spec[1024], fw[4200];
	rtl_spec(pt, spec, sizeof spec);
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	loom_hw_opts ho = {.dram_latency = pt->cfg.dram_latency, .dram_bw = pt->cfg.dram_bw};
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	int rc = loom_open(&(loom_open_opts){.backend = "rtl", .hw = spec, .hw_opts = &ho}, &dev, err, len);
	if (rc)
		return -1;
	rc = -1;
	int e;
	if ((e = loom_load_firmware(dev, fw)) || (e = loom_boot(dev, NULL))) {
		snprintf(err, len, "%.200s: %s: %.300s", fw, loom_strerror(e), loom_errmsg(dev));
		goto out;
	}
	if (loom_exec_new(dev, m, &ex, err, len) || set_inputs(m->graph, err, len) || loom_exec_run(ex, err, len))
		goto out;
	const loom_exec_stats *st = loom_exec_get_stats(ex);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < m->nlayers; i++)
		sum += st->layers[i].cycles;
	r->rtl_cycles = (int64_t)sum;
	r->rtl_device_cycles = (int64_t)st->npu_cycles;
	/* per layer when the compile made the same layers (no fallback) */
	int same = (int)m->nlayers == r->nlayers && r->nfallback == 0;
	for (int i = 0; same && i < r->nlayers; i++)
		r->layers[i].rtl_cycles = (int64_t)st->layers[i].cycles;
	uint64_t est = same ? r->cycles : rep->est_cycles;
	r->rtl_err_pct = sum ? 100.0 * ((double)est - (double)sum) / (double)sum : 0;
	rc = 0;
out:
	loom_exec_free(ex);
	loom_close(dev);
	return rc;
}

int sweep_rtl_run(const sweep_spec *s, int mi, const sweep_prep *p, const sweep_point *pt, sweep_result *r,
		  char *err, size_t len)
{
	const sweep_model *sm = &s->models[mi];
	if (sweep_rtl_prepare(pt, err, len))
		return -1;
	loom_graph *g = NULL;
	if (loom_onnx_load(sm->path, NULL, 0, &g, err, len))
		return -1;
	loom_compile_opts o = {
		.calib_dir = sm->calib[0] ? sm->calib : NULL,
		.calib_method = s->calib_method,
		.percentile = s->percentile,
		.options = "loom sweep --rtl",
		.source = sm->path,
		.calib = p->calib,
	};
	loom_model *m = NULL;
	loom_compile_report rep;
	char e2[1024];
	if (loom_compile(g, &pt->cfg, &o, &m, &rep, e2, sizeof e2)) {
		snprintf(err, len, "compile for %s: %s", pt->cfg.name, e2);
		return -1;
	}
	int rc = run_model(pt, m, &rep, r, e2, sizeof e2);
	if (rc)
		snprintf(err, len, "rtl run: %s", e2);
	loom_compile_report_free(&rep);
	loom_model_free(m);
	return rc;
}
