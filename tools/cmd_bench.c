/* cmd_bench.c - `loom bench MODEL.loom`: the latency and throughput of a
 * compiled model on the simulated NPU, in the manner of OpenVINO's
 * benchmark_app. One plain run first (loom_exec_run, as `loom run` does:
 * the warm-up and the reference outputs), then --iterations inferences
 * through K inference requests (runtime/exec.h, loom_exec_new_requests)
 * kept in flight through the firmware's ring, each checked byte for byte
 * against the plain run's outputs.
 *
 * Figures (docs/PERFORMANCE.md uses them):
 *  - device latency of an inference: device cycles from the submission of
 *    its first NPU job to the driver seeing its last one complete, in ms at
 *    --clock-mhz (default 1000); min, median, mean, p90, p99 (nearest
 *    rank), max. The simulated device's clock stands still while the host
 *    works, so with one request this is the sum of its jobs' cycles; with K
 *    it includes waiting behind the other requests' jobs;
 *  - device throughput: inferences / the device cycles from the first
 *    submission to the last completion of the whole run, at --clock-mhz;
 *  - host wall time per inference: the measured loop's wall clock / N, the
 *    cost of simulating (and of the host's CPU nodes and conversions); the
 *    plain run's wall clock (the process's first inference), the loop's
 *    first inference (from its start to the first completion) and the
 *    median of the wall clock between later completions (the steady state:
 *    the C model's timing memo answers a job it ran before, cmodel/cm_timing.c).
 * --sweep-inflight measures K = 1..8 and prints throughput against K with
 * the point where one more request stops helping; --json prints one JSON
 * object with the same figures. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "ir/model.h"
#include "compiler/onnx.h"

#define BENCH_MAX_INFLIGHT 4096u
#define BENCH_SWEEP_MAX 8u

typedef struct bench_opts {
	const char *path, *backend, *data;
	long iterations;
	unsigned inflight;
	double clock_mhz;
	int json, sweep, host_time;
} bench_opts;

/* one measurement: N inferences through K requests */
typedef struct bench_res {
	unsigned k;
	long n;
	uint64_t lat[6];    /* device latency in cycles: min, median, mean, p90, p99, max */
	uint64_t span;      /* device cycles, first submission to last completion */
	uint64_t jobs;      /* NPU jobs per inference */
	double wall_s;      /* host wall clock of the loop */
	double first_s;     /* ... to its first completion */
	double steady_s;    /* median between later completions (0: fewer than 2 inferences) */
	double steady_cpu;  /* the same in the process's CPU time (less subject to a loaded machine) */
	double min_s;       /* the shortest interval between later completions */
	double plain_s;     /* the plain run before the loop */
	long mismatches;    /* inferences whose outputs differ from the plain run */
	char first_bad[256];
} bench_res;

/* the plain run's outputs, what every inference must reproduce */
typedef struct bench_ref {
	int n;
	void **data;
	size_t *bytes;
} bench_ref;

static const char *const lat_names[6] = {"min", "median", "mean", "p90", "p99", "max"};

static void usage(FILE *f)
{
	fprintf(f, "usage: loom bench MODEL.loom [--backend cmodel|rtl|systemc|systemc-rtl] [--iterations N] [--inflight K]\n"
		   "                  [--clock-mhz F] [--data DIR] [--sweep-inflight] [--host-time] [--json]\n"
		   "  N inferences (default 10) through K requests in flight (default 1); device latency\n"
		   "  (first NPU job's submission to the last one's completion, per inference) and device\n"
		   "  throughput in ms and inferences/s at F MHz (default 1000); host wall time per inference;\n"
		   "  --sweep-inflight: throughput against K = 1..%u, N inferences each\n"
		   "  --host-time: the host's own work (CPU nodes, (de)quantization, on this machine's wall\n"
		   "  clock) counts on the device clock, as if the host ran beside the NPU (not reproducible)\n",
		BENCH_SWEEP_MAX);
}

static int bad_value(const char *opt, const char *v, const char *want)
{
	fprintf(stderr, "loom bench: %s '%s': %s\n", opt, v, want);
	return 2;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* one option that takes a value: 0, or the exit status */
static int parse_opt(const char *a, const char *v, bench_opts *o)
{
	long x;
	char *end;
	if (!strcmp(a, "--backend")) {
		o->backend = v;
	} else if (!strcmp(a, "--data")) {
		o->data = v;
	} else if (!strcmp(a, "--iterations")) {
		if (parse_long(v, 1, 100000000, &o->iterations))
			return bad_value(a, v, "needs a whole number of inferences, at least 1");
	} else if (!strcmp(a, "--inflight")) {
		if (parse_long(v, 1, BENCH_MAX_INFLIGHT, &x))
			return bad_value(a, v, "needs a whole number of requests in flight from 1 to 4096");
		o->inflight = (unsigned)x;
	} else if (!strcmp(a, "--clock-mhz")) {
		errno = 0;
		o->clock_mhz = strtod(v, &end);
		if (errno || end == v || *end || !(o->clock_mhz > 0) || o->clock_mhz > 1e6)
			return bad_value(a, v, "needs a clock frequency in MHz above 0");
	} else {
		return -1;
	}
	return 0;
}

/* -1: go on; else the exit status */
static int parse_args(int argc, char **argv, bench_opts *o)
{
	static const char *const valued[] = {"--backend", "--data", "--iterations", "--inflight", "--clock-mhz"};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int takes = 0;
		for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
			takes |= !strcmp(a, valued[k]);
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--sweep-inflight")) {
			o->sweep = 1;
		} else if (!strcmp(a, "--host-time")) {
			o->host_time = 1;
		} else if (takes && i + 1 >= argc) {
			fprintf(stderr, "loom bench: %s needs a value\n", a);
			return 2;
		} else if (takes) {
			int st = parse_opt(a, argv[++i], o);
			if (st)
				return st;
		} else if (a[0] != '-' && !o->path) {
			o->path = a;
		} else {
			fprintf(stderr, "loom bench: %s: %s\n", a, a[0] == '-' ? "unknown option" : "one model only");
			usage(stderr);
			return 2;
		}
	}
	if (!o->path) {
		fprintf(stderr, "loom bench: no MODEL.loom given\n");
		usage(stderr);
		return 2;
	}
	if (strcmp(o->backend, "cmodel") && strcmp(o->backend, "rtl") && strcmp(o->backend, "systemc") &&
	    strcmp(o->backend, "systemc-rtl")) {
		fprintf(stderr, "loom bench: %s: backend '%s': a compiled model runs on cmodel, rtl, systemc or systemc-rtl\n",
			o->path,
			o->backend);
		return 2;
	}
	return -1;
}

/* the graph inputs from --data DIR (input_K.pb), zeros without it */
static int bind_inputs(loom_graph *g, const char *data, char *err, size_t len)
{
	loom_tensor in[TOOL_MAX_IO];
	memset(in, 0, sizeof in);
	int nin = data ? tool_load_tensors(data, "input", in, err, len) : 0;
	if (nin < 0)
		return -1;
	int rc = 0;
	if (nin)
		rc = tool_bind_inputs(g, in, nin, data, 0, err, len);
	for (int i = 0; !nin && !rc && i < g->ninputs; i++) {
		loom_tensor *t = &g->tensors[g->inputs[i]];
		void *z = calloc(1, loom_tensor_bytes(t) + 1);
		if (!z || loom_tensor_set_data(t, z, loom_tensor_bytes(t)))
			rc = -1, snprintf(err, len, "out of memory");
		free(z);
	}
	for (int i = 0; i < nin; i++)
		loom_tensor_clear(&in[i]);
	return rc;
}

static void ref_free(bench_ref *ref)
{
	for (int i = 0; i < ref->n; i++)
		free(ref->data[i]);
	free(ref->data);
	free(ref->bytes);
}

/* keep the plain run's outputs */
static int ref_take(const loom_graph *g, bench_ref *ref)
{
	ref->n = g->noutputs;
	ref->data = calloc((size_t)g->noutputs + 1, sizeof *ref->data);
	ref->bytes = calloc((size_t)g->noutputs + 1, sizeof *ref->bytes);
	if (!ref->data || !ref->bytes)
		return -1;
	for (int i = 0; i < g->noutputs; i++) {
		const loom_tensor *t = &g->tensors[g->outputs[i]];
		ref->bytes[i] = loom_tensor_bytes(t);
		if (!(ref->data[i] = malloc(ref->bytes[i] + 1)))
			return -1;
		if (t->data)
			memcpy(ref->data[i], t->data, ref->bytes[i]);
		else
			memset(ref->data[i], 0, ref->bytes[i]);
	}
	return 0;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* min, median, mean, p90, p99 (nearest rank), max of n sorted values */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the median of the intervals between the completions t[1..n-1] (t is
 * overwritten); 0 for fewer than 2 */
static double steady(double *t, long n)
{
	if (n < 2)
		return 0;
	for (long i = n - 1; i > 0; i--)
		t[i] -= t[i - 1];
	qsort(t + 1, (size_t)(n - 1), sizeof *t, cmp_dbl);
	return (t[1 + (n - 2) / 2] + t[1 + (n - 1) / 2]) / 2;
}

static void summarize(uint64_t *v, long n, uint64_t out[6])
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += (double)v[i];
	long r90 = (long)ceil(0.90 * (double)n) - 1, r99 = (long)ceil(0.99 * (double)n) - 1;
	out[0] = v[0];
	out[1] = (v[(n - 1) / 2] + v[n / 2]) / 2;
	out[2] = (uint64_t)llround(sum / (double)n);
	out[3] = v[r90 < 0 ? 0 : r90];
	out[4] = v[r99 < 0 ? 0 : r99];
	out[5] = v[n - 1];
}

/* request r's outputs against the plain run's */
static void check_outputs(loom_exec_reqs *rq, unsigned r, long inference, const loom_graph *g, const bench_ref *ref,
			  bench_res *res)
{
	for (int i = 0; i < ref->n; i++) {
		const loom_tensor *t = loom_exec_req_tensor(rq, r, g->outputs[i]);
		if (t && t->data && loom_tensor_bytes(t) == ref->bytes[i] && !memcmp(t->data, ref->data[i], ref->bytes[i]))
			continue;
		if (!res->mismatches++)
			snprintf(res->first_bad, sizeof res->first_bad, "inference %ld (request %u): output '%s' differs",
				 inference, r, g->tensors[g->outputs[i]].name);
		return;
	}
}

/* N inferences through K requests: every request started, then each one
 * that finishes is checked and started again until N have been started */
static int measure(const bench_opts *o, loom_exec *ex, const loom_graph *g, const bench_ref *ref, unsigned k,
		   tool_progress *pg, long *progress, bench_res *res, char *err, size_t len)
{
	long n = o->iterations;
	memset(res, 0, sizeof *res);
	res->k = k;
	res->n = n;
	loom_exec_reqs *rq = NULL;
	uint64_t *lat = calloc((size_t)n, sizeof *lat);
	double *tdone = calloc((size_t)n, sizeof *tdone), *cdone = calloc((size_t)n, sizeof *cdone);
	if (!lat || !tdone || !cdone) {
		free(lat);
		free(tdone);
		free(cdone);
		return snprintf(err, len, "out of memory"), -1;
	}
	if (loom_exec_new_requests(ex, k, &rq, err, len)) {
		free(lat);
		free(tdone);
		free(cdone);
		return -1;
	}
	int rc = o->host_time ? loom_exec_reqs_host_time(rq, o->clock_mhz * 1e6) : 0;
	for (unsigned r = 0; !rc && r < k; r++)
		for (int i = 0; !rc && i < g->ninputs; i++) {
			const loom_tensor *src = &g->tensors[g->inputs[i]];
			rc = loom_tensor_set_data(loom_exec_req_tensor(rq, r, g->inputs[i]), src->data,
						  loom_tensor_bytes(src));
			if (rc)
				snprintf(err, len, "out of memory");
		}
	double t0 = mono_s();
	uint64_t first = UINT64_MAX, last = 0;
	long started = 0, done = 0;
	for (unsigned r = 0; !rc && r < k && started < n; r++, started++)
		rc = loom_exec_req_start(rq, r, err, len);
	while (!rc && done < n) {
		unsigned r;
		if ((rc = loom_exec_req_wait(rq, LOOM_EXEC_REQ_ANY, &r, err, len)))
			break;
		const loom_req_stats *st = loom_exec_req_stats(rq, r);
		lat[done] = st->jobs ? st->last_done - st->first_submit : 0;
		if (st->jobs && st->first_submit < first)
			first = st->first_submit;
		if (st->jobs && st->last_done > last)
			last = st->last_done;
		res->jobs = st->jobs;
		check_outputs(rq, r, done, g, ref, res);
		tdone[done] = mono_s();
		cdone[done] = cpu_s();
		done++;
		tool_progress_update(pg, ++*progress);
		if (started < n) {
			rc = loom_exec_req_start(rq, r, err, len);
			started++;
		}
	}
	res->wall_s = mono_s() - t0;
	res->span = last > first ? last - first : 0;
	if (!rc) {
		summarize(lat, n, res->lat);
		res->first_s = tdone[0] - t0;
		res->steady_s = steady(tdone, n);
		res->min_s = n > 1 ? tdone[1] : 0;
		res->steady_cpu = steady(cdone, n);
	}
	loom_exec_reqs_free(rq);
	free(lat);
	free(tdone);
	free(cdone);
	return rc;
}

static double ms(const bench_opts *o, uint64_t cycles) { return (double)cycles / (o->clock_mhz * 1e3); }

/* inferences per second at the nominal clock; 0 when no device time passed */
static double ips(const bench_opts *o, const bench_res *r)
{
	return r->span ? (double)r->n / ((double)r->span / (o->clock_mhz * 1e6)) : 0;
}

/* the figures; the plain run's outputs as `loom run` prints them */
static void print_text(const bench_opts *o, const loom_model *m, const bench_res *r)
{
	printf("loom bench: %s on %s (%s): %ld inferences, %u request%s in flight, device clock %g MHz\n", o->path,
	       o->backend, m->cfg.name, r->n, r->k, r->k == 1 ? "" : "s", o->clock_mhz);
	printf("  %" PRIu64 " NPU job%s per inference%s\n", r->jobs, r->jobs == 1 ? "" : "s",
	       o->host_time ? "; --host-time: the host's own work counts on the device clock" : "");
	printf("device latency (ms):");
	for (int i = 0; i < 6; i++)
		printf("  %s %.3f", lat_names[i], ms(o, r->lat[i]));
	printf("\n  (first NPU job submitted to last job completed, per inference; median %" PRIu64 " cycles)\n",
	       r->lat[1]);
	if (r->span)
		printf("device throughput: %.2f inferences/s (%ld inferences in %" PRIu64
		       " device cycles, first submission to last completion)\n",
		       ips(o, r), r->n, r->span);
	else
		printf("device throughput: - (no NPU jobs)\n");
	printf("host wall time: %.4f s per inference (%.2f inferences/s simulated on %s)\n", r->wall_s / (double)r->n,
	       (double)r->n / r->wall_s, o->backend);
	printf("  plain run %.4f s; in the loop the first inference %.4f s", r->plain_s, r->first_s);
	if (r->n > 1)
		printf(", then median %.4f s (CPU %.4f s), min %.4f s", r->steady_s, r->steady_cpu, r->min_s);
	printf("\n");
	tool_print_outputs(m->graph);
	if (r->mismatches)
		printf("FAIL outputs: %ld of %ld inferences differ from the plain run; first: %s\n", r->mismatches, r->n,
		       r->first_bad);
	else
		printf("outputs: all %ld inference%s byte-identical to the plain run\n", r->n, r->n == 1 ? "" : "s");
}

/* the smallest K whose throughput is within 1% of the best of the sweep */
static unsigned saturation(const bench_opts *o, const bench_res *sw, unsigned nk)
{
	double best = 0;
	for (unsigned i = 0; i < nk; i++)
		if (ips(o, &sw[i]) > best)
			best = ips(o, &sw[i]);
	unsigned i = 0;
	while (i + 1 < nk && ips(o, &sw[i]) < 0.99 * best)
		i++;
	return sw[i].k;
}

static void print_sweep(const bench_opts *o, const bench_res *sw, unsigned nk)
{
	printf("\nthroughput against requests in flight (%ld inferences each, %g MHz):\n", sw[0].n, o->clock_mhz);
	printf("%3s %14s %8s %14s %12s %14s\n", "K", "inferences/s", "vs K=1", "median ms", "p99 ms", "host s/inf");
	for (unsigned i = 0; i < nk; i++)
		printf("%3u %14.2f %8.4f %14.3f %12.3f %14.4f\n", sw[i].k, ips(o, &sw[i]),
		       ips(o, &sw[0]) > 0 ? ips(o, &sw[i]) / ips(o, &sw[0]) : 0, ms(o, sw[i].lat[1]), ms(o, sw[i].lat[4]),
		       sw[i].wall_s / (double)sw[i].n);
	unsigned s = saturation(o, sw, nk);
	if (s < nk)
		printf("more requests stop helping at K = %u: within 1%% of the best throughput of K = 1..%u\n", s, nk);
	else
		printf("throughput still grows up to K = %u\n", nk);
}

static void json_res(const bench_opts *o, const bench_res *r)
{
	printf("\"inflight\": %u, \"iterations\": %ld, \"jobs_per_inference\": %" PRIu64 ", \"device_latency_ms\": {",
	       r->k, r->n, r->jobs);
	for (int i = 0; i < 6; i++)
		printf("%s\"%s\": %.6f", i ? ", " : "", lat_names[i], ms(o, r->lat[i]));
	printf("}, \"device_latency_cycles\": {");
	for (int i = 0; i < 6; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "", lat_names[i], r->lat[i]);
	printf("}, \"device_cycles\": %" PRIu64 ", \"throughput_ips\": %.4f, \"host_wall_s\": %.6f, "
	       "\"host_wall_s_per_inference\": %.6f, \"host_wall_s_plain\": %.6f, \"host_wall_s_first\": %.6f, "
	       "\"host_wall_s_steady\": %.6f, \"host_wall_s_min\": %.6f, \"host_cpu_s_steady\": %.6f, "
	       "\"outputs_identical\": %s",
	       r->span, ips(o, r), r->wall_s, r->wall_s / (double)r->n, r->plain_s, r->first_s, r->steady_s, r->min_s,
	       r->steady_cpu, r->mismatches ? "false" : "true");
}

static void print_json(const bench_opts *o, const loom_model *m, const bench_res *r, const bench_res *sw, unsigned nk)
{
	printf("{\"model\": \"");
	for (const char *p = o->path; *p; p++)
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else
			putchar((unsigned char)*p < 0x20 ? '?' : *p);
	printf("\", \"backend\": \"%s\", \"config\": \"%s\", \"clock_mhz\": %g, \"host_time\": %s, ", o->backend, m->cfg.name,
	       o->clock_mhz, o->host_time ? "true" : "false");
	json_res(o, r);
	if (nk) {
		printf(", \"sweep\": [");
		for (unsigned i = 0; i < nk; i++) {
			printf("%s{", i ? ", " : "");
			json_res(o, &sw[i]);
			printf("}");
		}
		printf("], \"saturates_at\": %u", saturation(o, sw, nk));
	}
	printf("}\n");
}

/* the sweep (nk runs, K = 1..nk) and the --inflight run unless the sweep
 * holds it; *r = the --inflight run's figures */
static int run_all(const bench_opts *o, loom_exec *ex, const loom_graph *g, const bench_ref *ref, bench_res *sw,
		   unsigned nk, bench_res *one, const bench_res **r)
{
	char err[2048];
	int own = !nk || o->inflight > nk;
	tool_progress pg;
	long progress = 0;
	tool_progress_start(&pg, "bench", o->iterations * (long)(nk + (unsigned)own));
	for (unsigned i = 0; i < nk; i++)
		if (measure(o, ex, g, ref, i + 1, &pg, &progress, &sw[i], err, sizeof err)) {
			tool_progress_end(&pg);
			fprintf(stderr, "loom bench: %s: %u in flight: %s\n", o->path, i + 1, err);
			return -1;
		}
	if (own && measure(o, ex, g, ref, o->inflight, &pg, &progress, one, err, sizeof err)) {
		tool_progress_end(&pg);
		fprintf(stderr, "loom bench: %s: %s\n", o->path, err);
		return -1;
	}
	tool_progress_end(&pg);
	*r = own ? one : &sw[o->inflight - 1];
	return 0;
}

/* the plain run, the measurements, the report; the exit status */
static int bench(const bench_opts *o, loom_model *m, loom_exec *ex)
{
	char err[2048];
	loom_graph *g = m->graph;
	bench_ref ref = {0};
	bench_res one, sw[BENCH_SWEEP_MAX];
	const bench_res *r = NULL;
	unsigned nk = o->sweep ? BENCH_SWEEP_MAX : 0;
	double t0 = mono_s();
	if (loom_exec_run(ex, err, sizeof err)) {
		fprintf(stderr, "loom bench: %s: plain run: %s\n", o->path, err);
		return 1;
	}
	double plain_s = mono_s() - t0;
	if (ref_take(g, &ref)) {
		fprintf(stderr, "loom bench: out of memory\n");
		ref_free(&ref);
		return 1;
	}
	int rc = run_all(o, ex, g, &ref, sw, nk, &one, &r);
	ref_free(&ref);
	if (rc)
		return 1;
	one.plain_s = plain_s;
	for (unsigned i = 0; i < nk; i++)
		sw[i].plain_s = plain_s;
	if (o->json) {
		print_json(o, m, r, sw, nk);
	} else {
		print_text(o, m, r);
		if (nk)
			print_sweep(o, sw, nk);
	}
	rc = r->mismatches != 0;
	for (unsigned i = 0; i < nk; i++)
		if (sw[i].mismatches) {
			fprintf(stderr, "loom bench: %u in flight: %ld inferences differ from the plain run; first: %s\n",
				sw[i].k, sw[i].mismatches, sw[i].first_bad);
			rc = 1;
		}
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	bench_opts o = {.backend = "cmodel", .iterations = 10, .inflight = 1, .clock_mhz = 1000};
	int st = parse_args(argc, argv, &o);
	if (st >= 0)
		return st;
	char err[2048];
	loom_model *m = NULL;
	if (loom_model_read(o.path, NULL, &m, err, sizeof err)) {
		fprintf(stderr, "loom bench: %s\n", err);
		return 1;
	}
	loom_dev *dev = NULL;
	loom_exec *ex = NULL;
	int rc = 1;
	char spec[1024];
	tool_cfg_spec(&m->cfg, spec, sizeof spec);
	if (bind_inputs(m->graph, o.data, err, sizeof err))
		fprintf(stderr, "loom bench: %s\n", err);
	else if (tool_dev_open(o.backend, spec, &dev, err, sizeof err))
		fprintf(stderr, "loom bench: %s backend: %s\n", o.backend, err);
	else if (loom_exec_new(dev, m, &ex, err, sizeof err))
		fprintf(stderr, "loom bench: %s: %s\n", o.path, err);
	else
		rc = bench(&o, m, ex);
	loom_exec_free(ex);
	loom_close(dev);
	loom_model_free(m);
	return rc;
}
