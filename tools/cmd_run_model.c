/* cmd_run_model.c - `loom run MODEL.loom --backend cmodel|rtl|systemc`: loads a
 * compiled model (validated; --hw CONFIG must match the configuration it
 * was compiled for, else the refusal names the differing parameter), boots
 * a device of that configuration with the firmware and runs the model
 * through the runtime (runtime/exec.h).
 *
 * Inputs: --data DIR (input_K.pb, e.g. a test_data_set_N folder) and
 * --input NAME=FILE (.pb TensorProto or .npy, tools/npy.c; overrides the
 * input of that name from DIR); zeros for a model without either. Outputs:
 * printed (shape and first values), and with --output-dir DIR written as
 * output_K.pb TensorProtos named after the graph outputs (the ONNX
 * test-data layout). --check compares every output with DIR's output_K.pb:
 * max absolute error, cosine similarity, top-1 agreement; the exit status
 * is 1 when one is past its tolerance (--min-cos, default 0.99; --atol,
 * --min-top1 when given); 2 when an input is missing, unreadable or does
 * not fit the model.
 *
 * Where the time goes (tools/cmd_run_prof.c): --profile prints the
 * per-layer table from the MARK records (engines' busy and token-wait
 * shares, bound class) and the NPU / host split at --clock-mhz,
 * --profile-csv FILE writes it as CSV, --trace FILE.json a Perfetto /
 * chrome://tracing timeline. --wave FILE.fst records the RTL's signals of
 * cycles --wave-from..--wave-to, or of one layer (--wave-layer NAME|INDEX:
 * a first run without waves finds the layer's cycles, a second, identical
 * one records them; the simulation is deterministic). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "ir/model.h"
#include "compiler/onnx.h"

typedef struct run_opts {
	const char *path, *backend, *data, *hw, *out_dir, *csv, *trace, *wave, *wave_layer;
	const char *input[TOOL_MAX_IO]; /* NAME=FILE */
	int ninput, check, profile, repeat, wave_window;
	double min_cos, min_top1, atol, mhz;
	uint64_t wave_from, wave_to;
} run_opts;

static void synopsis(FILE *f)
{
	fprintf(f, "usage: loom run MODEL.loom [--backend cmodel|rtl|systemc|systemc-rtl] [--hw CONFIG] [--data DIR] [--input NAME=FILE]...\n"
		   "                [--output-dir DIR] [--check] [--min-cos C] [--min-top1 F] [--atol A] [--repeat N]\n"
		   "                [--profile] [--profile-csv FILE] [--trace FILE.json] [--clock-mhz F]\n"
		   "                [--wave FILE.fst [--wave-layer NAME|INDEX | --wave-from A --wave-to B]]\n");
}

void run_model_usage(FILE *f)
{
	synopsis(f);
	fprintf(f,
		"  --backend B         cmodel (default), rtl (the verilated RTL), systemc (the C model as a\n"
		"                      SystemC TLM-2.0 module in the reference virtual platform) or systemc-rtl\n"
		"                      (the verilated RTL as a cycle-accurate module in that platform)\n"
		"  --hw CONFIG         the configuration to run on: must match the model's (configs/NAME.cfg, a path,\n"
		"                      or overrides; only the simulated DRAM's latency and bandwidth may differ)\n"
		"  --data DIR          inputs DIR/input_K.pb (an ONNX test_data_set_N folder); with --check also\n"
		"                      the expected DIR/output_K.pb\n"
		"  --input NAME=FILE   graph input NAME from FILE: a TensorProto (.pb) or a NumPy array (.npy:\n"
		"                      little-endian C-order float32, int64, int32, uint8 or int8); repeatable,\n"
		"                      overrides that input of --data; without inputs the model gets zeros\n"
		"  --output-dir DIR    write every graph output as DIR/output_K.pb (TensorProto named after the\n"
		"                      output, as in ONNX test data; onnx.numpy_helper reads them)\n"
		"  --check             compare the outputs with --data's output_K.pb: exit 1 when the cosine\n"
		"                      similarity is below --min-cos (0.99), the top-1 agreement below\n"
		"                      --min-top1, or the max absolute error above --atol (when given)\n"
		"  --repeat N          run N times (the profile is the last run's)\n"
		"  --profile           per layer: cycles, MACs, utilization, DRAM bytes, busy and token-wait shares\n"
		"                      of each engine, bound class; totals; the NPU / host time split\n"
		"  --profile-csv FILE  the same table as CSV (raw counters, one row per layer, a total row)\n"
		"  --trace FILE.json   a timeline for ui.perfetto.dev or chrome://tracing: engines, control core,\n"
		"                      host CPU, MAC utilization and DRAM bytes per cycle\n"
		"  --clock-mhz F       the device clock for times in ms and the trace (default 1000)\n"
		"  --wave FILE.fst     record the RTL's signals (rtl only) of the whole run, or of the cycles\n"
		"                      --wave-from A to --wave-to B (device cycles), or of one layer:\n"
		"  --wave-layer L      the layer L (its name or its index in --profile) of the first run\n");
}

static int bad_usage(const char *fmt, const char *a)
{
	fprintf(stderr, "loom run: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n");
	synopsis(stderr);
	fprintf(stderr, "(loom run MODEL.loom --help: every option)\n");
	return -1;
}

/* a number option's value: 0 or -1 with a message */
static int num_arg(const char *opt, const char *v, double lo, double *out)
{
	char *end;
	errno = 0;
	double d = v ? strtod(v, &end) : 0;
	if (!v || end == v || *end || errno || !(d >= lo) || isinf(d)) {
		fprintf(stderr, "loom run: %s needs a number >= %g, not '%s'\n", opt, lo, v ? v : "");
		return -1;
	}
	*out = d;
	return 0;
}

/* the options, in the order of the usage text: 0, 1 for --help, -1 after a message */
static int parse(int argc, char **argv, run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->backend = "cmodel";
	o->repeat = 1;
	o->min_cos = 0.99;
	o->min_top1 = o->atol = -1;
	o->mhz = 1000;
	double d;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int val = !strcmp(a, "--backend") || !strcmp(a, "--hw") || !strcmp(a, "--data") || !strcmp(a, "--input") ||
			  !strcmp(a, "--output-dir") || !strcmp(a, "--min-cos") || !strcmp(a, "--min-top1") ||
			  !strcmp(a, "--atol") || !strcmp(a, "--repeat") || !strcmp(a, "--profile-csv") ||
			  !strcmp(a, "--trace") || !strcmp(a, "--clock-mhz") || !strcmp(a, "--wave") ||
			  !strcmp(a, "--wave-layer") || !strcmp(a, "--wave-from") || !strcmp(a, "--wave-to");
		if (val && !v)
			return bad_usage("%s needs a value", a);
		if (val)
			i++;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		else if (!strcmp(a, "--backend"))
			o->backend = v;
		else if (!strcmp(a, "--hw"))
			o->hw = v;
		else if (!strcmp(a, "--data"))
			o->data = v;
		else if (!strcmp(a, "--input")) {
			if (!strchr(v, '=') || v[0] == '=' || !strchr(v, '=')[1])
				return bad_usage("--input takes NAME=FILE, not '%s'", v);
			if (o->ninput == TOOL_MAX_IO)
				return bad_usage("more than 64 --input options (at '%s')", v);
			o->input[o->ninput++] = v;
		} else if (!strcmp(a, "--output-dir"))
			o->out_dir = v;
		else if (!strcmp(a, "--check"))
			o->check = 1;
		else if (!strcmp(a, "--profile"))
			o->profile = 1;
		else if (!strcmp(a, "--min-cos")) {
			if (num_arg(a, v, -1, &o->min_cos))
				return -1;
		} else if (!strcmp(a, "--min-top1")) {
			if (num_arg(a, v, 0, &o->min_top1))
				return -1;
		} else if (!strcmp(a, "--atol")) {
			if (num_arg(a, v, 0, &o->atol))
				return -1;
		} else if (!strcmp(a, "--repeat")) {
			if (num_arg(a, v, 1, &d) || d != floor(d) || d > 1e6)
				return bad_usage("--repeat needs a whole number of runs (1..1000000), not '%s'", v);
			o->repeat = (int)d;
		} else if (!strcmp(a, "--profile-csv"))
			o->csv = v;
		else if (!strcmp(a, "--trace"))
			o->trace = v;
		else if (!strcmp(a, "--clock-mhz")) {
			if (num_arg(a, v, 1e-3, &o->mhz))
				return -1;
		} else if (!strcmp(a, "--wave"))
			o->wave = v;
		else if (!strcmp(a, "--wave-layer"))
			o->wave_layer = v;
		else if (!strcmp(a, "--wave-from") || !strcmp(a, "--wave-to")) {
			if (num_arg(a, v, 0, &d) || d != floor(d) || d > 1e18)
				return bad_usage("--wave-from / --wave-to need a device cycle, not '%s'", v);
			*(!strcmp(a, "--wave-from") ? &o->wave_from : &o->wave_to) = (uint64_t)d;
			o->wave_window = 1;
		} else if (a[0] != '-' && !o->path)
			o->path = a;
		else if (a[0] != '-')
			return bad_usage("one model only (extra argument '%s')", a);
		else
			return bad_usage("unknown option '%s'", a);
	}
	if (!o->path)
		return bad_usage("%s", "no MODEL.loom given");
	if (o->check && !o->data)
		return bad_usage("%s", "--check needs --data DIR");
	if (strcmp(o->backend, "cmodel") && strcmp(o->backend, "rtl") && strcmp(o->backend, "systemc") &&
	    strcmp(o->backend, "systemc-rtl")) {
		fprintf(stderr, "loom run: %s: backend '%s': a compiled model runs on cmodel, rtl, systemc or systemc-rtl\n",
			o->path,
			o->backend);
		return -1;
	}
	if ((o->wave_layer || o->wave_window) && !o->wave)
		return bad_usage("%s", "--wave-layer / --wave-from / --wave-to need --wave FILE.fst");
	if (o->wave_layer && o->wave_window)
		return bad_usage("%s", "--wave-layer or --wave-from/--wave-to, not both");
	if (o->wave_window && o->wave_to && o->wave_to < o->wave_from)
		return bad_usage("%s", "--wave-to is before --wave-from");
	if (o->wave && strcmp(o->backend, "rtl")) {
		fprintf(stderr, "loom run: --wave records the RTL's signals: use --backend rtl (the %s backend has no "
				"waveforms)\n", o->backend);
		return -1;
	}
	return 0;
}

/* The configuration spec to open: --hw when it matches the model (2: not a
 * configuration, 1: refused), else the model's configuration by name when
 * that is the same configuration (no second RTL build under a custom name),
 * else its parameters. */
static int device_spec(const run_opts *o, const loom_model *m, char *spec, size_t len)
{
	char err[1024];
	loom_hwcfg c;
	if (o->hw) {
		if (loom_hwcfg_load(&c, o->hw, NULL, err, sizeof err)) {
			fprintf(stderr, "loom run: --hw %s: %s\n", o->hw, err);
			return 2;
		}
		if (loom_model_check_cfg(m, &c, err, sizeof err)) {
			fprintf(stderr, "loom run: %s: --hw %s refused: %s\n", o->path, o->hw, err);
			return 1;
		}
		snprintf(spec, len, "%s", o->hw);
		return 0;
	}
	if (!loom_hwcfg_load(&c, m->cfg.name, NULL, err, sizeof err) && !loom_model_check_cfg(m, &c, err, sizeof err) &&
	    c.dram_latency == m->cfg.dram_latency && c.dram_bw == m->cfg.dram_bw)
		snprintf(spec, len, "%s", m->cfg.name);
	else
		tool_cfg_spec(&m->cfg, spec, len);
	return 0;
}

/* --data's inputs, then each --input NAME=FILE replacing the input of that
 * name (or added): 0, else nonzero and a message (the caller exits 2: an
 * input that is missing, unreadable or does not fit is a usage error) */
static int load_inputs(const run_opts *o, const loom_graph *g, loom_tensor *in, int *nin, char *err, size_t len)
{
	*nin = 0;
	if (o->data && (*nin = tool_load_tensors(o->data, "input", in, err, len)) < 0) {
		*nin = 0;
		return 1;
	}
	for (int k = 0; k < o->ninput; k++) {
		const char *eq = strchr(o->input[k], '='), *file = eq + 1;
		char name[LOOM_INPUT_NAME_MAX];
		snprintf(name, sizeof name, "%.*s", (int)(eq - o->input[k]), o->input[k]);
		int gi = -1;
		for (int j = 0; j < g->ninputs && gi < 0; j++)
			if (!strcmp(g->tensors[g->inputs[j]].name, name))
				gi = j;
		if (gi < 0) {
			int n = snprintf(err, len, "--input %s: the model has no input '%s' (its inputs:", o->input[k], name);
			for (int j = 0; j < g->ninputs && n > 0 && (size_t)n < len; j++)
				n += snprintf(err + n, len - (size_t)n, " '%s'", g->tensors[g->inputs[j]].name);
			if (n > 0 && (size_t)n < len)
				snprintf(err + n, len - (size_t)n, ")");
			return 2;
		}
		size_t fl = strlen(file);
		loom_tensor t;
		int rc = fl > 4 && !strcmp(file + fl - 4, ".npy") ? tool_load_npy(file, &t, err, len)
								   : loom_onnx_load_tensor(file, &t, err, len);
		if (rc)
			return 1;
		free(t.name);
		t.name = strdup(name);
		int slot = *nin; /* --data's tensor of that name, or unnamed at the input's position */
		for (int j = 0; j < *nin; j++)
			if ((in[j].name && !strcmp(in[j].name, name)) || ((!in[j].name || !in[j].name[0]) && j == gi))
				slot = j;
		if (slot == *nin && *nin == TOOL_MAX_IO) {
			loom_tensor_clear(&t);
			snprintf(err, len, "--input %s: too many inputs", o->input[k]);
			return 2;
		}
		if (slot < *nin)
			loom_tensor_clear(&in[slot]);
		else
			(*nin)++;
		in[slot] = t;
		if (!t.name) {
			snprintf(err, len, "out of memory");
			return 1;
		}
	}
	return 0;
}

/* every graph output as DIR/output_K.pb */
static int write_outputs(const char *dir, const loom_graph *g, char *err, size_t len)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, len, "--output-dir %s: cannot create: %s", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < g->noutputs; i++) {
		char p[4200];
		const loom_tensor *t = &g->tensors[g->outputs[i]];
		snprintf(p, sizeof p, "%s/output_%d.pb", dir, i);
		if (loom_onnx_save_tensor(p, t, t->name, err, len))
			return -1;
	}
	return 0;
}

static int check_outputs(const run_opts *o, const loom_graph *g, const loom_tensor *want, int nwant)
{
	int rc = 0;
	if (nwant != g->noutputs) {
		printf("FAIL %s: %d output files for %d outputs\n", o->data, nwant, g->noutputs);
		rc = 1;
	}
	for (int i = 0; i < nwant && i < g->noutputs; i++) {
		tool_metrics_t mt;
		tool_metrics(&g->tensors[g->outputs[i]], &want[i], &mt);
		int ok = mt.cos >= o->min_cos && (o->atol < 0 || mt.max_abs <= o->atol) &&
			 (o->min_top1 < 0 || !mt.rows || mt.top1 >= o->min_top1);
		printf("%s output %s: max abs error %.6g (reference max |x| %.6g), cosine %.6f", ok ? "ok  " : "FAIL",
		       want[i].name ? want[i].name : g->tensors[g->outputs[i]].name, mt.max_abs, mt.ref_absmax, mt.cos);
		if (mt.rows)
			printf(", top-1 agreement %.4f (%lld rows)", mt.top1, mt.rows);
		printf("\n");
		rc |= !ok;
	}
	return rc;
}

/* open a device (waves: hw_opts), prepare the model and run it `runs` times */
static int run_on(const run_opts *o, loom_model *m, const char *spec, const loom_hw_opts *hw_opts, int runs,
		  int locate, loom_dev **dev, loom_exec **ex)
{
	char err[2048];
	if (tool_dev_open_opts(o->backend, spec, hw_opts, dev, err, sizeof err)) {
		fprintf(stderr, "loom run: %s backend: %s\n", o->backend, err);
		return -1;
	}
	if (loom_exec_new(*dev, m, ex, err, sizeof err)) {
		fprintf(stderr, "loom run: %s: %s\n", o->path, err);
		return -1;
	}
	loom_exec_locate_starts(*ex, locate);
	tool_progress pg;
	tool_progress_start(&pg, "run", runs);
	for (int r = 0; r < runs; r++) {
		if (loom_exec_run(*ex, err, sizeof err)) {
			tool_progress_end(&pg);
			fprintf(stderr, "loom run: %s: %s\n", o->path, err);
			return -1;
		}
		tool_progress_update(&pg, r + 1);
	}
	tool_progress_end(&pg);
	return 0;
}

/* --wave-layer: the layer's device cycles in a first run without waves */
static int locate_layer(const run_opts *o, loom_model *m, const char *spec, loom_hw_opts *w)
{
	char *end;
	unsigned long idx = strtoul(o->wave_layer, &end, 10);
	uint32_t l = m->nlayers;
	for (uint32_t k = 0; k < m->nlayers && l == m->nlayers; k++)
		if (!strcmp(m->layers[k].name, o->wave_layer))
			l = k;
	if (l == m->nlayers && *o->wave_layer && !*end && idx < m->nlayers)
		l = (uint32_t)idx;
	if (l == m->nlayers) {
		fprintf(stderr, "loom run: --wave-layer %s: %s has no such layer (a name or an index 0..%d of "
				"--profile)\n", o->wave_layer, o->path, (int)m->nlayers - 1);
		return 2;
	}
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	int rc = run_on(o, m, spec, NULL, 1, 1, &dev, &ex);
	if (!rc) {
		const loom_exec_stats *st = loom_exec_get_stats(ex);
		const loom_layer_prof *p = &st->layers[l];
		const loom_step_prof *sp = &st->steps[p->step];
		if (sp->start_cycle) {
			w->wave_from = sp->start_cycle + p->start;
			w->wave_to = w->wave_from + p->cycles;
		} else { /* START not found: the widest the layer can be in */
			w->wave_from = sp->submit_cycle + p->start;
			w->wave_to = sp->done_cycle - sp->ctr[0] + p->start + p->cycles;
		}
		printf("loom run: layer %u '%s': device cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 " cycles), recording "
		       "them in %s\n", l, m->layers[l].name, w->wave_from, w->wave_to, w->wave_to - w->wave_from, o->wave);
	}
	loom_exec_free(ex);
	loom_close(dev);
	return rc ? 1 : 0;
}

static void print_summary(const run_opts *o, const loom_model *m, const loom_exec_stats *st)
{
	uint64_t n = (uint64_t)o->repeat;
	tool_print_outputs(m->graph);
	printf("%s on %s (%s): %" PRIu64 " NPU jobs, %" PRIu64 " device cycles per run (engine %" PRIu64
	       "); host: simulation %.3f s, CPU nodes %.3f s, (de)quantization %.3f s\n",
	       o->path, o->backend, m->cfg.name, st->jobs / n, st->npu_cycles / n, st->engine_cycles / n, st->npu_s,
	       st->cpu_s, st->conv_s);
}

int cmd_run_model(int argc, char **argv)
{
	run_opts o;
	int pr = parse(argc, argv, &o);
	if (pr) {
		if (pr > 0)
			run_model_usage(stdout);
		return pr > 0 ? 0 : 2;
	}
	char err[2048], spec[1024];
	loom_model *m = NULL;
	if (loom_model_read(o.path, NULL, &m, err, sizeof err)) {
		fprintf(stderr, "loom run: %s\n", err);
		return 1;
	}
	loom_tensor in[TOOL_MAX_IO], want[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	memset(want, 0, sizeof want);
	int nin = 0, nwant = 0, rc = device_spec(&o, m, spec, sizeof spec);
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	loom_graph *g = m->graph;
	if (rc)
		goto out;
	rc = load_inputs(&o, g, in, &nin, err, sizeof err);
	if (!rc && o.check && (nwant = tool_load_tensors(o.data, "output", want, err, sizeof err)) < 0) {
		nwant = 0;
		rc = 1;
	}
	if (rc) {
		fprintf(stderr, "loom run: %s\n", err);
		rc = 2; /* inputs that are not there or do not fit: a usage error */
		goto out;
	}
	rc = 1;
	if (nin || o.data) {
		if (tool_bind_inputs(g, in, nin, o.data ? o.data : "--input", 0, err, sizeof err)) {
			fprintf(stderr, "loom run: %s\n", err);
			rc = 2;
			goto out;
		}
	} else {
		for (int i = 0; i < g->ninputs; i++) {
			loom_tensor *t = &g->tensors[g->inputs[i]];
			void *z = calloc(1, loom_tensor_bytes(t) + 1);
			if (!z || loom_tensor_set_data(t, z, loom_tensor_bytes(t))) {
				free(z);
				fprintf(stderr, "loom run: out of memory\n");
				goto out;
			}
			free(z);
		}
	}
	loom_hw_opts w = {.wave_path = o.wave, .wave_from = o.wave_from, .wave_to = o.wave_to};
	if (o.wave_layer && (rc = locate_layer(&o, m, spec, &w)))
		goto out;
	rc = 1;
	/* locating STARTs leaves the RTL's cycles as they are; the wave run does
	 * it when the locating run did, all the same */
	if (run_on(&o, m, spec, o.wave ? &w : NULL, o.repeat, o.trace || o.wave_layer, &dev, &ex))
		goto out;
	const loom_exec_stats *st = loom_exec_get_stats(ex);
	print_summary(&o, m, st);
	if (o.profile)
		run_print_profile(m, st, o.mhz);
	if ((o.csv && run_write_csv(o.csv, m, st, o.mhz, err, sizeof err)) ||
	    (o.trace && run_write_trace(o.trace, m, st, o.backend, o.mhz, err, sizeof err)) ||
	    (o.out_dir && write_outputs(o.out_dir, g, err, sizeof err))) {
		fprintf(stderr, "loom run: %s\n", err);
		goto out;
	}
	rc = o.check ? check_outputs(&o, g, want, nwant) : 0;
out:
	loom_exec_free(ex);
	loom_close(dev);
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	for (int i = 0; i < nwant; i++)
		loom_tensor_clear(&want[i]);
	loom_model_free(m);
	return rc;
}
