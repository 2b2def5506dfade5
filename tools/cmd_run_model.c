/* cmd_run_model.c - `loom run MODEL.loom --backend cmodel|rtl`: loads a
 * compiled model (validated, refused for another configuration), boots a
 * device of the model's configuration with the firmware, runs the model
 * through the runtime (runtime/exec.h) on the inputs of --data DIR
 * (input_K.pb, e.g. a test_data_set_N folder; zeros without it) and prints
 * the outputs, the time split and, with --profile, the per-layer profile
 * from the layers' MARK records. --check compares every output with DIR's
 * output_K.pb: max absolute error, cosine similarity, top-1 agreement; the
 * exit status is 1 when one is past its tolerance (--min-cos, default
 * 0.99; --atol, --min-top1 when given). */
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


static void usage(FILE *f)
{
	fprintf(f, "usage: loom run MODEL.loom [--backend cmodel|rtl] [--data DIR] [--check] [--min-cos C]\n"
		   "                [--min-top1 F] [--atol A] [--profile] [--repeat N]\n");
}

int cmd_run_model(int argc, char **argv)
{
	const char *path = NULL, *backend = "cmodel", *data = NULL;
	int check = 0, profile = 0, repeat = 1;
	double min_cos = 0.99, min_top1 = -1, atol = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--backend") && v)
			backend = v, i++;
		else if (!strcmp(a, "--data") && v)
			data = v, i++;
		else if (!strcmp(a, "--check"))
			check = 1;
		else if (!strcmp(a, "--profile"))
			profile = 1;
		else if (!strcmp(a, "--min-cos") && v)
			min_cos = atof(v), i++;
		else if (!strcmp(a, "--min-top1") && v)
			min_top1 = atof(v), i++;
		else if (!strcmp(a, "--atol") && v)
			atol = atof(v), i++;
		else if (!strcmp(a, "--repeat") && v)
			repeat = atoi(v), i++;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (a[0] != '-' && !path)
			path = a;
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!path || repeat < 1 || (check && !data)) {
		if (check && !data)
			fprintf(stderr, "loom run: --check needs --data DIR\n");
		usage(stderr);
		return 2;
	}
	if (strcmp(backend, "cmodel") && strcmp(backend, "rtl")) {
		fprintf(stderr, "loom run: %s: backend '%s': a compiled model runs on cmodel or rtl\n", path, backend);
		return 2;
	}
	char err[2048];
	loom_model *m = NULL;
	if (loom_model_read(path, NULL, &m, err, sizeof err)) {
		fprintf(stderr, "loom run: %s\n", err);
		return 1;
	}
	loom_tensor in[TOOL_MAX_IO], want[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	memset(want, 0, sizeof want);
	int nin = 0, nwant = 0, rc = 1;
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	loom_graph *g = m->graph;
	if (data && ((nin = tool_load_tensors(data, "input", in, err, sizeof err)) < 0 ||
		     (check && (nwant = tool_load_tensors(data, "output", want, err, sizeof err)) < 0))) {
		fprintf(stderr, "loom run: %s\n", err);
		goto out;
	}
	if (nin) {
		if (tool_bind_inputs(g, in, nin, data, 0, err, sizeof err)) {
			fprintf(stderr, "loom run: %s\n", err);
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
	char spec[1024];
	tool_cfg_spec(&m->cfg, spec, sizeof spec);
	if (tool_dev_open(backend, spec, &dev, err, sizeof err)) {
		fprintf(stderr, "loom run: %s backend: %s\n", backend, err);
		goto out;
	}
	if (loom_exec_new(dev, m, &ex, err, sizeof err)) {
		fprintf(stderr, "loom run: %s: %s\n", path, err);
		goto out;
	}
	tool_progress pg;
	tool_progress_start(&pg, "run", repeat);
	for (int r = 0; r < repeat; r++) {
		if (loom_exec_run(ex, err, sizeof err)) {
			tool_progress_end(&pg);
			fprintf(stderr, "loom run: %s: %s\n", path, err);
			goto out;
		}
		tool_progress_update(&pg, r + 1);
	}
	tool_progress_end(&pg);
	const loom_exec_stats *st = loom_exec_get_stats(ex);
	tool_print_outputs(g);
	printf("%s on %s (%s): %" PRIu64 " NPU jobs, %" PRIu64 " device cycles per run (engine %" PRIu64
	       "); host: simulation %.3f s, CPU nodes %.3f s, (de)quantization %.3f s\n",
	       path, backend, m->cfg.name, st->jobs / (uint64_t)repeat, st->npu_cycles / (uint64_t)repeat,
	       st->engine_cycles / (uint64_t)repeat, st->npu_s, st->cpu_s, st->conv_s);
	if (profile) {
		printf("%-4s %-28s %-8s %12s %14s %6s %12s %12s\n", "#", "layer", "kind", "cycles", "MACs", "util%",
		       "DRAM rd", "DRAM wr");
		for (uint32_t l = 0; l < m->nlayers; l++) {
			const loom_layer_prof *p = &st->layers[l];
			const loom_layer *L = &m->layers[l];
			double peak = L->kind == LOOM_LAYER_CONV || L->kind == LOOM_LAYER_GEMM
					      ? (double)m->cfg.array_rows * m->cfg.array_cols
					      : (double)m->cfg.array_rows;
			double util = p->cycles ? 100.0 * (double)L->macs / (peak * (double)p->cycles) : 0;
			printf("%-4u %-28.28s %-8s %12" PRIu64 " %14" PRIu64 " %6.1f %12" PRIu64 " %12" PRIu64 "\n", l,
			       L->name, loom_layer_kind_name(L->kind), p->cycles, L->macs, util, p->dram_rd, p->dram_wr);
		}
	}
	rc = 0;
	if (check) {
		if (nwant != g->noutputs) {
			printf("FAIL %s: %d output files for %d outputs\n", data, nwant, g->noutputs);
			rc = 1;
		}
		for (int i = 0; i < nwant && i < g->noutputs; i++) {
			tool_metrics_t mt;
			tool_metrics(&g->tensors[g->outputs[i]], &want[i], &mt);
			int ok = mt.cos >= min_cos && (atol < 0 || mt.max_abs <= atol) &&
				 (min_top1 < 0 || !mt.rows || mt.top1 >= min_top1);
			printf("%s output %s: max abs error %.6g (reference max |x| %.6g), cosine %.6f", ok ? "ok  " : "FAIL",
			       want[i].name ? want[i].name : g->tensors[g->outputs[i]].name, mt.max_abs, mt.ref_absmax,
			       mt.cos);
			if (mt.rows)
				printf(", top-1 agreement %.4f (%lld rows)", mt.top1, mt.rows);
			printf("\n");
			rc |= !ok;
		}
	}
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
