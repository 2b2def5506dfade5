/* cmd_compile.c - `loom compile MODEL.onnx -o MODEL.loom`: imports the ONNX
 * model, compiles it for a hardware configuration (compiler/compile.h),
 * writes the .loom file, prints the compile report (a table; JSON with
 * --report FILE) and keeps the result in a compile cache keyed by a content
 * hash of everything the result depends on: the loom executable itself,
 * the model file, the calibration files, the configuration's parameters
 * and the options. A second compile with the same key copies the cached
 * file and report and says so. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/calib.h"
#include "compiler/compile.h"
#include "loom/hwcfg.h"
#include "ir/model.h"
#include "compiler/onnx.h"

#define MAX_SHAPES 32

typedef struct copts {
	const char *model, *out, *hw, *calib, *keep, *report, *method;
	double pct, accuracy;
	int no_cache, quiet, sensitivity, bias_correction, equalize, time, threads;
	const char *data;
	loom_input_shape shp[MAX_SHAPES];
	int nshp;
	char canon[4096]; /* the options that shape the result, canonical */
} copts;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loom compile MODEL.onnx -o MODEL.loom [--hw CONFIG] [--calib DIR]\n"
		"         [--calib-method minmax|percentile|mse|entropy] [--percentile P] [--equalize]\n"
		"         [--bias-correction] [--accuracy COS] [--keep-float NODE,...]\n"
		"         [--input-shape NAME=D0xD1x...]... [--report FILE.json] [--no-cache] [-q]\n"
		"         [--sensitivity [--data DIR]] [--time] [--threads N]\n"
		"  --calib DIR       calibration inputs: .pb files, or test_data_set_N/ folders\n"
		"                    (without it: random N(0,1) inputs, with a warning)\n"
		"  --calib-method    the activations' ranges: min-max (default), percentile (--percentile,\n"
		"                    default 99.99), MSE or entropy (KL divergence, as TensorRT)\n"
		"  --equalize        cross-layer equalization: the weight ranges of a Conv / Gemm's output\n"
		"                    channels balanced with the next one's input channels (same function)\n"
		"  --bias-correction each Conv / Gemm bias less its rounded weights' expected error on\n"
		"                    the calibration data's mean input\n"
		"  --accuracy COS    search options until the int8 outputs reach cosine COS (0..1] with\n"
		"                    the float model on every --calib sample (C model): equalization,\n"
		"                    each activation's method (minmax|percentile|mse|entropy), bias\n"
		"                    correction, then the fewest nodes kept in float by their\n"
		"                    sensitivity; the report says what it chose\n"
		"  --keep-float      nodes (names after simplification) kept in float on the CPU\n"
		"  --report FILE     the compile report as JSON\n"
		"  --no-cache        compile even when the cache holds the result\n"
		"  --sensitivity     per NPU node, the output error (C model, one sample of --data DIR\n"
		"                    or --calib DIR) when that node alone stays in float, sorted\n"
		"  --time            where the time went: wall-clock and CPU seconds (every thread's) of\n"
		"                    loading the ONNX file, simplification, calibration, quantization and\n"
		"                    lowering, planning (timing the tile planners' candidate programs),\n"
		"                    emission and writing the file (and the --accuracy search)\n"
		"  --threads N       threads for calibration and planning (default: the online CPUs, at\n"
		"                    most 8); the result does not depend on it\n"
		"The cache is $LOOM_CACHE_DIR, else $XDG_CACHE_HOME/loom, else ~/.cache/loom.\n");
}

static int parse(int argc, char **argv, copts *o)
{
	memset(o, 0, sizeof *o);
	o->hw = "default";
	o->method = "minmax";
	o->pct = 99.99;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "-o") && v) {
			o->out = v, i++;
		} else if (!strcmp(a, "--hw") && v) {
			o->hw = v, i++;
		} else if (!strcmp(a, "--calib") && v) {
			o->calib = v, i++;
		} else if (!strcmp(a, "--calib-method") && v) {
			o->method = v, i++;
			if (loom_calib_method_of(v) < 0) {
				fprintf(stderr, "loom compile: --calib-method %s: minmax, percentile, mse or entropy\n", v);
				return -1;
			}
		} else if (!strcmp(a, "--percentile") && v) {
			char *e;
			o->pct = strtod(v, &e);
			i++;
			if (*e || !(o->pct >= 50 && o->pct <= 100)) {
				fprintf(stderr, "loom compile: --percentile %s: a number in [50, 100]\n", v);
				return -1;
			}
		} else if (!strcmp(a, "--accuracy") && v) {
			char *e;
			o->accuracy = strtod(v, &e);
			i++;
			if (*e || !(o->accuracy > 0 && o->accuracy <= 1)) {
				fprintf(stderr, "loom compile: --accuracy %s: a cosine in (0, 1]\n", v);
				return -1;
			}
		} else if (!strcmp(a, "--bias-correction")) {
			o->bias_correction = 1;
		} else if (!strcmp(a, "--equalize")) {
			o->equalize = 1;
		} else if (!strcmp(a, "--keep-float") && v) {
			o->keep = v, i++;
		} else if (!strcmp(a, "--report") && v) {
			o->report = v, i++;
		} else if (!strcmp(a, "--input-shape") && v) {
			char err[512];
			if (o->nshp == MAX_SHAPES || loom_parse_input_shape(v, &o->shp[o->nshp], err, sizeof err)) {
				fprintf(stderr, "loom compile: --input-shape %s: %s\n", v,
					o->nshp == MAX_SHAPES ? "too many" : err);
				return -1;
			}
			o->nshp++, i++;
		} else if (!strcmp(a, "--sensitivity")) {
			o->sensitivity = 1;
		} else if (!strcmp(a, "--data") && v) {
			o->data = v, i++;
		} else if (!strcmp(a, "--time")) {
			o->time = 1;
		} else if (!strcmp(a, "--threads") && v) {
			char *e;
			long n = strtol(v, &e, 10);
			i++;
			if (*e || n < 1 || n > 64) {
				fprintf(stderr, "loom compile: --threads %s: a number in [1, 64]\n", v);
				return -1;
			}
			o->threads = (int)n;
		} else if (!strcmp(a, "--no-cache")) {
			o->no_cache = 1;
		} else if (!strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (a[0] != '-' && !o->model) {
			o->model = a;
		} else {
			fprintf(stderr, "loom compile: unexpected argument '%s'\n", a);
			usage(stderr);
			return -1;
		}
	}
	if (!o->model || !o->out) {
		usage(stderr);
		return -1;
	}
	if (o->accuracy > 0 && !o->calib) {
		fprintf(stderr, "loom compile: --accuracy needs calibration data: --calib DIR\n");
		return -1;
	}
	snprintf(o->canon, sizeof o->canon, "hw=%s calib=%s method=%s pct=%g keep-float=%s%s", o->hw,
		 o->calib ? o->calib : "(random)", o->method, o->pct, o->keep ? o->keep : "",
		 o->bias_correction ? " bias-correction" : "");
	if (o->equalize)
		strncat(o->canon, " equalize", sizeof o->canon - strlen(o->canon) - 1);
	if (o->accuracy > 0) {
		size_t n = strlen(o->canon);
		snprintf(o->canon + n, sizeof o->canon - n, " accuracy=%g", o->accuracy);
	}
	for (int i = 0; i < o->nshp; i++) {
		size_t n = strlen(o->canon);
		snprintf(o->canon + n, sizeof o->canon - n, " input-shape=%s:", o->shp[i].name);
		for (int d = 0; d < o->shp[i].rank; d++) {
			n = strlen(o->canon);
			snprintf(o->canon + n, sizeof o->canon - n, "%s%lld", d ? "x" : "", (long long)o->shp[i].dims[d]);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ report */

static const char *where_name(int w) { return w == LOOM_WHERE_NPU ? "npu" : w == LOOM_WHERE_FUSED ? "fused" : "cpu"; }

/* compute- or memory-bound by the layer's own numbers */
/* node n's layers (batch replicas, a padded copy before a packed CONV):
 * the costliest one, *est their estimates summed */
static const loom_layer *node_layer(const loom_model *m, const loom_node_report *n, uint64_t *est)
{
	const loom_layer *best = &m->layers[n->layer];
	*est = 0;
	for (uint32_t k = (uint32_t)n->layer; k < m->nlayers && m->layers[k].nodes[0] == best->nodes[0]; k++) {
		*est += m->layers[k].est_cycles;
		if (m->layers[k].est_cycles > best->est_cycles)
			best = &m->layers[k];
	}
	return best;
}

static const char *bound(const loom_hwcfg *cfg, const loom_layer *l)
{
	double comp = (double)l->macs / ((double)cfg->array_rows * cfg->array_cols);
	if (l->kind != LOOM_LAYER_CONV && l->kind != LOOM_LAYER_GEMM)
		comp = (double)l->macs / cfg->array_rows;
	double mem = (double)l->dram_bytes / cfg->dram_bw;
	return comp >= mem ? "compute" : "memory";
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void report_table(FILE *f, const loom_model *m, const loom_compile_report *r, const tool_accuracy_result *acc)
{
	fprintf(f, "%-28s %-18s %-5s %-10s %-11s %10s %8s %5s  %s\n", "node", "op", "where", "layer", "tile hxwxc",
		"est cyc", "bound", "SP%", "why / fused with");
	for (int i = 0; i < r->nnodes; i++) {
		const loom_node_report *n = &r->nodes[i];
		char tile[32] = "-", cyc[24] = "-", kind[16] = "-", sp[8] = "-";
		const char *bd = "-";
		if (n->layer >= 0 && (uint32_t)n->layer < m->nlayers) {
			uint64_t est;
			const loom_layer *l = node_layer(m, n, &est);
			snprintf(kind, sizeof kind, "%s", loom_layer_kind_name(l->kind));
			snprintf(tile, sizeof tile, "%ux%ux%u", l->tile_h, l->tile_w, l->tile_c);
			snprintf(cyc, sizeof cyc, "%" PRIu64, est);
			snprintf(sp, sizeof sp, "%.0f", 100.0 * l->sp_bytes / m->cfg.sp_bytes);
			bd = bound(&m->cfg, l);
		}
		fprintf(f, "%-28.28s %-18.18s %-5s %-10s %-11s %10s %8s %5s  %s\n", n->name, n->op_type,
			where_name(n->where), kind, tile, cyc, bd, sp, n->where == LOOM_WHERE_NPU ? "" : n->why);
	}
	uint64_t macs = r->macs_npu + r->macs_cpu;
	double cpu_share = macs ? 100.0 * r->macs_cpu / macs : 0;
	fprintf(f, "\nnodes: %d in the ONNX graph, %d after simplification (%d folded, %d Identity/Dropout, "
		   "%d dead, %d BatchNorm folded, %d Mul folded, %d Conv kernels trimmed)\n",
		r->nodes_onnx, r->nnodes, r->folded, r->identities_removed, r->dead_removed, r->bn_folded,
		r->muls_folded, r->convs_trimmed);
	fprintf(f, "placement: %d nodes on the NPU (incl. fused), %d on the CPU (%.1f%% of nodes); "
		   "MACs %" PRIu64 " on the NPU, %" PRIu64 " on the CPU (%.2f%%)\n",
		r->nodes_npu, r->nodes_cpu, r->nnodes ? 100.0 * r->nodes_cpu / r->nnodes : 0.0, r->macs_npu,
		r->macs_cpu, cpu_share);
	uint32_t jobs = 0;
	for (uint32_t s = 0; s < m->nsteps; s++)
		jobs += m->steps[s].kind == LOOM_STEP_NPU;
	fprintf(f, "program: %u layers in %u jobs, %u instructions, %" PRIu64 " estimated NPU cycles\n", m->nlayers,
		jobs, m->ninsn, r->est_cycles);
	fprintf(f, "device memory: weights %" PRIu64 " B, activations %" PRIu64 " B with buffer reuse (%" PRIu64
		   " B without), peak %" PRIu64 " B (%" PRIu64 " B without reuse)\n",
		m->const_bytes, m->arena_bytes, m->arena_bytes_noreuse, m->dram_end - m->base,
		m->dram_end - m->base - m->arena_bytes + m->arena_bytes_noreuse);
	fprintf(f, "calibration: %d sample%s%s\n", r->calib_samples, r->calib_samples == 1 ? "" : "s",
		r->calib_random ? " of random N(0,1) inputs" : "");
	fprintf(f, "time: simplification %.2f s, calibration %.2f s, quantization and lowering %.2f s, planning %.2f s, "
		   "emission %.2f s (wall-clock; --time for more)\n", r->simplify_s, r->calib_s, r->lower_s, r->plan_s, r->emit_s);
	if (r->qdq_pairs)
		fprintf(f, "quantization: %d QuantizeLinear/DequantizeLinear pairs of the model kept their scales\n",
			r->qdq_pairs);
	if (r->equalized)
		fprintf(f, "equalization: %d Conv / Gemm pairs\n", r->equalized);
	if (r->bias_corrected)
		fprintf(f, "bias correction: %d layers, the largest correction %.3g of the layer's largest |bias|\n",
			r->bias_corrected, r->bias_shift_max);
	if (acc && acc->text)
		fputs(acc->text, f);
	if (macs ? cpu_share > 5.0 : r->nodes_cpu * 20 > r->nnodes)
		fprintf(f, "warning: %.1f%% of the work runs on the CPU (more than 5%%): see the fallback reasons "
			   "above\n", macs ? cpu_share : 100.0 * r->nodes_cpu / (r->nnodes ? r->nnodes : 1));
}

static void report_json(FILE *f, const loom_model *m, const loom_compile_report *r, const tool_accuracy_result *acc)
{
	fprintf(f, "{\n  \"source\": ");
	json_str(f, m->source);
	fprintf(f, ",\n  \"config\": ");
	json_str(f, m->cfg.name);
	fprintf(f, ",\n  \"fingerprint\": \"%08x\",\n  \"options\": ", m->cfg.fingerprint);
	json_str(f, m->options);
	fprintf(f, ",\n  \"nodes\": [\n");
	for (int i = 0; i < r->nnodes; i++) {
		const loom_node_report *n = &r->nodes[i];
		fprintf(f, "    {\"name\": ");
		json_str(f, n->name);
		fprintf(f, ", \"op\": ");
		json_str(f, n->op_type);
		fprintf(f, ", \"where\": \"%s\", \"macs\": %" PRIu64, where_name(n->where), n->macs);
		fprintf(f, ", \"%s\": ",
			n->where == LOOM_WHERE_CPU ? "fallback_reason" : n->where == LOOM_WHERE_NPU ? "lowering" : "fused");
		json_str(f, n->why);
		if (n->layer >= 0 && (uint32_t)n->layer < m->nlayers) {
			uint64_t est;
			const loom_layer *l = node_layer(m, n, &est);
			fprintf(f, ", \"layer\": %d, \"kind\": \"%s\", \"tile\": [%u, %u, %u], \"est_cycles\": %" PRIu64
				   ", \"bound\": \"%s\", \"sp_bytes\": %u, \"dram_bytes\": %" PRIu64,
				n->layer, loom_layer_kind_name(l->kind), l->tile_h, l->tile_w, l->tile_c, est,
				bound(&m->cfg, l), l->sp_bytes, l->dram_bytes);
			fprintf(f, ", \"fused_with\": [");
			int first = 1;
			for (int k = 1; k < LOOM_LAYER_MAX_NODES; k++)
				if (l->nodes[k] >= 0) {
					fprintf(f, "%s", first ? "" : ", ");
					json_str(f, r->nodes[l->nodes[k]].name);
					first = 0;
				}
			fprintf(f, "]");
		}
		fprintf(f, "}%s\n", i + 1 < r->nnodes ? "," : "");
	}
	uint64_t macs = r->macs_npu + r->macs_cpu;
	fprintf(f, "  ],\n  \"nodes_onnx\": %d, \"nodes_simplified\": %d, \"nodes_npu\": %d, \"nodes_cpu\": %d,\n", r->nodes_onnx,
		r->nnodes, r->nodes_npu, r->nodes_cpu);
	fprintf(f, "  \"macs_npu\": %" PRIu64 ", \"macs_cpu\": %" PRIu64 ", \"cpu_mac_share\": %.6f,\n", r->macs_npu,
		r->macs_cpu, macs ? (double)r->macs_cpu / macs : 0.0);
	fprintf(f, "  \"layers\": %u, \"instructions\": %u, \"est_cycles\": %" PRIu64 ",\n", m->nlayers, m->ninsn,
		r->est_cycles);
	fprintf(f, "  \"weights_bytes\": %" PRIu64 ", \"activation_bytes\": %" PRIu64
		   ", \"activation_bytes_no_reuse\": %" PRIu64 ",\n",
		m->const_bytes, m->arena_bytes, m->arena_bytes_noreuse);
	fprintf(f, "  \"peak_device_bytes\": %" PRIu64 ", \"peak_device_bytes_no_reuse\": %" PRIu64 ",\n",
		m->dram_end - m->base, m->dram_end - m->base - m->arena_bytes + m->arena_bytes_noreuse);
	fprintf(f, "  \"bias_corrected\": %d, \"equalized\": %d,\n", r->bias_corrected, r->equalized);
	if (acc && acc->json)
		fprintf(f, "  \"accuracy\": %s,\n", acc->json);
	fprintf(f, "  \"calib_samples\": %d, \"calib_random\": %s, \"qdq_pairs\": %d\n}\n", r->calib_samples,
		r->calib_random ? "true" : "false", r->qdq_pairs);
}

/* ------------------------------------------------------------------ cache */

typedef struct hash {
	uint64_t a, b; /* two FNV-1a 64 lanes with different bases: a 128-bit key */
} hash;

static void h_bytes(hash *h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++) {
		h->a = (h->a ^ s[i]) * 0x100000001b3ull;
		h->b = (h->b ^ s[i]) * 0x100000001b3ull;
		h->b ^= h->b >> 29;
	}
}

static void h_str(hash *h, const char *s) { h_bytes(h, s, strlen(s) + 1); }

static int h_file(hash *h, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint8_t buf[65536];
	size_t n;
	h_str(h, path);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		h_bytes(h, buf, n);
	int bad = ferror(f);
	fclose(f);
	return bad ? -1 : 0;
}

/* every regular file under dir, in name order */
static int h_tree(hash *h, const char *dir, int depth)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return h_file(h, dir);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && !rc) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", dir, ents[i]->d_name);
			struct stat st;
			if (!stat(p, &st) && S_ISDIR(st.st_mode))
				rc = depth < 3 ? h_tree(h, p, depth + 1) : 0;
			else if (!stat(p, &st) && S_ISREG(st.st_mode) && strstr(p, ".pb"))
				rc = h_file(h, p);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int cache_dir(char *buf, size_t len)
{
	const char *d = getenv("LOOM_CACHE_DIR");
	if (d && *d)
		snprintf(buf, len, "%s", d);
	else if ((d = getenv("XDG_CACHE_HOME")) && *d)
		snprintf(buf, len, "%s/loom", d);
	else if ((d = getenv("HOME")) && *d)
		snprintf(buf, len, "%s/.cache/loom", d);
	else
		return -1;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", buf);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
	struct stat st;
	return stat(buf, &st) || !S_ISDIR(st.st_mode) ? -1 : 0;
}

static int copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb");
	if (!a)
		return -1;
	FILE *b = fopen(to, "wb");
	if (!b) {
		fclose(a);
		return -1;
	}
	char buf[65536];
	size_t n;
	int bad = 0;
	while ((n = fread(buf, 1, sizeof buf, a)) > 0)
		if (fwrite(buf, 1, n, b) != n)
			bad = 1;
	bad |= ferror(a);
	fclose(a);
	if (fclose(b))
		bad = 1;
	return bad ? -1 : 0;
}

static int write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = strlen(s);
	int bad = fwrite(s, 1, n, f) != n;
	return fclose(f) || bad ? -1 : 0;
}

/* ------------------------------------------------------------------ command */

/* wall-clock and CPU (every thread's) seconds */
typedef struct tstamp {
	double wall, cpu;
} tstamp;

static tstamp tnow(void)
{
	struct timespec w, c;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	return (tstamp){(double)w.tv_sec + w.tv_nsec * 1e-9, (double)c.tv_sec + c.tv_nsec * 1e-9};
}

/* --time: the stages' wall-clock and CPU seconds (t: start, loaded, the
 * --accuracy search done, compiled, written) */
static void print_times(const loom_compile_report *r, const tstamp *t, int acc)
{
	char plan[160];
	snprintf(plan, sizeof plan, "planning (%" PRIu64 " layer shapes planned, %" PRIu64 " plans reused, %" PRIu64
		 " programs timed)", r->shapes_planned, r->plans_reused, r->programs_timed);
	double other_w = t[3].wall - t[2].wall - r->simplify_s - r->calib_s - r->lower_s - r->plan_s - r->emit_s;
	double other_c = t[3].cpu - t[2].cpu - r->simplify_cpu - r->calib_cpu - r->lower_cpu - r->plan_cpu - r->emit_cpu;
	struct {
		const char *what;
		double w, c;
	} row[] = {
		{"loading the ONNX file", t[1].wall - t[0].wall, t[1].cpu - t[0].cpu},
		{"the --accuracy search (trial compiles on the C model)", t[2].wall - t[1].wall, t[2].cpu - t[1].cpu},
		{"simplification", r->simplify_s, r->simplify_cpu},
		{"calibration", r->calib_s, r->calib_cpu},
		{"quantization and lowering", r->lower_s, r->lower_cpu},
		{plan, r->plan_s, r->plan_cpu},
		{"emission", r->emit_s, r->emit_cpu},
		{"the rest of the compile (report)", other_w, other_c},
		{"writing the .loom file", t[4].wall - t[3].wall, t[4].cpu - t[3].cpu},
		{"total", t[4].wall - t[0].wall, t[4].cpu - t[0].cpu},
	};
	printf("time (seconds; %d thread%s for calibration and planning):\n  %-78s %8s %8s\n", r->threads,
	       r->threads == 1 ? "" : "s", "stage", "wall", "CPU");
	for (size_t i = 0; i < sizeof row / sizeof row[0]; i++)
		if (i != 1 || acc) /* the search only when asked for */
			printf("  %-78s %8.3f %8.3f\n", row[i].what, row[i].w, row[i].c);
}

int cmd_compile(int argc, char **argv)
{
	copts o;
	if (parse(argc, argv, &o))
		return 2;
	cli_tune_heap();
	char err[2048];
	loom_hwcfg cfg;
	if (tool_load_hw("compile", o.hw, &cfg))
		return 2;
	/* the cache key */
	hash h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
	char exe[4096], cdir[4096], key[40], cpath[4400], jpath[4400], tpath[4400];
	ssize_t en = readlink("/proc/self/exe", exe, sizeof exe - 1);
	int cacheable = !o.no_cache && !o.sensitivity && en > 0 && cache_dir(cdir, sizeof cdir) == 0;
	if (cacheable) {
		exe[en] = 0;
		h_str(&h, "loom compile cache v1");
		cacheable = !h_file(&h, exe) && !h_file(&h, o.model) && (!o.calib || !h_tree(&h, o.calib, 0));
		h_str(&h, o.canon);
#define LOOM_HWPARAM(n, sv, lo, hi, doc) h_bytes(&h, &cfg.n, sizeof cfg.n);
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
		snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
		snprintf(cpath, sizeof cpath, "%s/%s.loom", cdir, key);
		snprintf(jpath, sizeof jpath, "%s/%s.json", cdir, key);
		snprintf(tpath, sizeof tpath, "%s/%s.txt", cdir, key);
		struct stat st;
		if (cacheable && !stat(cpath, &st) && !stat(jpath, &st) && !stat(tpath, &st)) {
			/* a hit only when the cached file still reads back */
			loom_model *cm = NULL;
			char *table = tool_read_file(tpath, NULL), *json = tool_read_file(jpath, NULL);
			if (table && json && !loom_model_read(cpath, &cfg, &cm, err, sizeof err) &&
			    !copy_file(cpath, o.out) && (!o.report || !copy_file(jpath, o.report))) {
				if (!o.quiet)
					fputs(table, stdout);
				/* the report's calibration line, as the compile had it */
				loom_compile_report cr = {.calib_random = !!strstr(json, "\"calib_random\": true"),
							  .qdq_pairs = !strstr(json, "\"qdq_pairs\": 0\n")};
				const char *ns = strstr(json, "\"calib_samples\": ");
				cr.calib_samples = ns ? atoi(ns + 17) : 0;
				tool_warn_calib(o.model, &cr);
				printf("cache: hit %s (same model, calibration data, options, configuration and "
				       "compiler): %s copied from %s\n", key, o.out, cpath);
				free(table);
				free(json);
				loom_model_free(cm);
				return 0;
			}
			free(table);
			free(json);
			loom_model_free(cm);
		}
	}
	tstamp ts[5];
	ts[0] = tnow();
	loom_graph *g = NULL;
	if (loom_onnx_load(o.model, o.nshp ? o.shp : NULL, o.nshp, &g, err, sizeof err)) {
		fprintf(stderr, "loom compile: %s\n", err);
		return 1;
	}
	ts[1] = tnow();
	loom_compile_opts co = {
		.calib_dir = o.calib,
		.calib_method = loom_calib_method_of(o.method),
		.percentile = o.pct,
		.keep_float = o.keep,
		.threads = o.threads,
		.bias_correction = o.bias_correction,
		.equalize = o.equalize,
		.options = o.canon,
		.source = o.model,
	};
	tool_accuracy_result acc;
	memset(&acc, 0, sizeof acc);
	if (o.accuracy > 0) {
		if (tool_accuracy(o.model, o.nshp ? o.shp : NULL, o.nshp, &cfg, &co, o.accuracy, &acc, err, sizeof err)) {
			fprintf(stderr, "loom compile: --accuracy: %s: %s\n", o.model, err);
			loom_graph_free(g);
			return 1;
		}
		co.tensor_methods = acc.tensor_methods;
		co.bias_correction = acc.bias_correction;
		co.equalize = acc.equalize;
		co.keep_float = acc.keep_float;
	}
	ts[2] = tnow();
	loom_model *m = NULL;
	loom_compile_report rep;
	if (loom_compile(g, &cfg, &co, &m, &rep, err, sizeof err)) {
		fprintf(stderr, "loom compile: %s: %s\n", o.model, err);
		tool_accuracy_free(&acc);
		return 1;
	}
	tool_warn_calib(o.model, &rep);
	int rc = 1;
	char *table = NULL, *json = NULL;
	size_t tl = 0, jl = 0;
	FILE *tf = open_memstream(&table, &tl), *jf = open_memstream(&json, &jl);
	if (!tf || !jf) {
		fprintf(stderr, "loom compile: out of memory\n");
		goto out;
	}
	report_table(tf, m, &rep, &acc);
	report_json(jf, m, &rep, &acc);
	ts[3] = tnow();
	fclose(tf);
	fclose(jf);
	tf = jf = NULL;
	if (loom_model_write(m, o.out, err, sizeof err)) {
		fprintf(stderr, "loom compile: %s\n", err);
		goto out;
	}
	if (o.report && write_text(o.report, json)) {
		fprintf(stderr, "loom compile: %s: %s\n", o.report, strerror(errno));
		goto out;
	}
	ts[4] = tnow();
	if (!o.quiet)
		fputs(table, stdout);
	if (o.time)
		print_times(&rep, ts, o.accuracy > 0);
	printf("compiled %s -> %s for %s in %.2f s wall-clock, %.2f s CPU (%d thread%s)\n", o.model, o.out, cfg.name,
	       ts[4].wall - ts[0].wall, ts[4].cpu - ts[0].cpu, rep.threads, rep.threads == 1 ? "" : "s");
	if (o.sensitivity && tool_sensitivity(o.model, o.shp, o.nshp, &cfg, &co, o.data, stdout, err, sizeof err)) {
		fprintf(stderr, "loom compile: --sensitivity: %s\n", err);
		goto out;
	}
	if (cacheable) {
		char tmp[4500];
		snprintf(tmp, sizeof tmp, "%s.tmp%d", cpath, (int)getpid());
		if (!copy_file(o.out, tmp) && !rename(tmp, cpath) && !write_text(jpath, json) && !write_text(tpath, table))
			printf("cache: stored as %s\n", key);
		else
			remove(tmp);
	}
	rc = 0;
out:
	if (tf)
		fclose(tf);
	if (jf)
		fclose(jf);
	free(table);
	free(json);
	loom_compile_report_free(&rep);
	loom_model_free(m);
	tool_accuracy_free(&acc);
	return rc;
}
