/* test_exec_req.c - inference requests (runtime/exec.h,
 * loom_exec_new_requests: several runs of one compiled model in flight
 * through the firmware's ring) on the C model, against plain runs
 * (loom_exec_run) of the same model:
 *
 *   x [1,3,8,8] -> Conv conv1 (8 filters 3x3, pads 1) -> Relu relu1 ->
 *   Softmax sm (axis 1, stays on the CPU) -> Conv conv2 (4 filters 3x3,
 *   pads 1) -> y
 *
 * so an inference is two NPU jobs with a CPU node and (de)quantizations
 * between them;
 *   - K = 1, 3 and 8 requests, each inference with its own input: every
 *     output byte-identical to a plain run of that input (so requests
 *     keep their own host tensors and DRAM state), two jobs each, device
 *     latency from first submission to last completion;
 *   - with one request, its jobs' device cycles equal the plain run's
 *     within the firmware's handling of the second window; with more, the
 *     copies' programs relocated by whole 4 KiB pages give every
 *     inference the same engine cycles;
 *   - host-time mode: the same outputs, and the device clock includes the
 *     host's work;
 *   - after the requests, a plain run gives its old outputs again;
 *   - errors: 0 requests, more than the device DRAM holds (naming how
 *     many fit), wait with nothing in flight, start on a busy request or
 *     without input data, bad request numbers.
 *
 * Needs build/firmware/loom_fw.elf (make firmware); skipped without it.
 * Ends with "N passed, M failed, K skipped". */
#include "compiler/compile.h"
#include "ir/model.h"
#include "loom/loom.h"
#include "runtime/cpu_ops.h"
#include "runtime/exec.h"
#include "onnx_case.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define FL LOOM_DT_FLOAT
#define NX (1 * 3 * 8 * 8)
#define NIN 8 /* different inputs */

static loom_node *gnode(loom_graph *g, const char *op, const char *name, const int *in, int nin, int out)
{
	int i = OC_MUST(loom_graph_add_node(g, op, name, in, nin, &out, 1));
	return &g->nodes[i]; /* after the call: it may move g->nodes */
}

static loom_node *conv(loom_graph *g, const char *name, int in, int w, int b, int out)
{
	loom_node *n = gnode(g, "Conv", name, (const int[]){in, w, b}, 3, out);
	OC_MUST(loom_node_set_attr_ints(n, "kernel_shape", D(3, 3), 2));
	OC_MUST(loom_node_set_attr_ints(n, "pads", D(1, 1, 1, 1), 4));
	return n;
}

static loom_graph *build_net(void)
{
	loom_graph *g = oc_graph_new(13, "(built by test_exec_req)");
	int x = oc_add_input(g, "x", FL, 4, D(1, 3, 8, 8), NULL);
	int w1 = oc_const(g, "w1", 4, D(8, 3, 3, 3), 1, 0.4f), b1 = oc_const(g, "b1", 1, D(8), 2, 0.1f);
	int w2 = oc_const(g, "w2", 4, D(4, 8, 3, 3), 3, 0.3f), b2 = oc_const(g, "b2", 1, D(4), 4, 0.1f);
	int c1 = oc_value(g, "c1"), r1 = oc_value(g, "r1"), s1 = oc_value(g, "s1"), y = oc_value(g, "y");
	conv(g, "conv1", x, w1, b1, c1);
	gnode(g, "Relu", "relu1", &c1, 1, r1);
	OC_MUST(loom_node_set_attr_int(gnode(g, "Softmax", "sm", &r1, 1, s1), "axis", 1));
	conv(g, "conv2", s1, w2, b2, y);
	OC_MUST(loom_graph_add_output(g, y));
	return g;
}

typedef struct fixture {
	loom_model *m;
	loom_dev *dev;
	loom_exec *ex;
	float x[NIN][NX];
	void *want[NIN]; /* the plain run's output bytes for x[i] */
	size_t ybytes;
	uint64_t plain_cycles; /* device cycles of one plain run */
} fixture;

static int bind_x(loom_tensor *t, const float *x) { return loom_tensor_set_data(t, x, NX * sizeof *x); }

static int setup(fixture *f, const char *fw)
{
	char err[8192] = "";
	for (int i = 0; i < NIN; i++)
		oc_fill(f->x[i], NX, 100 + (unsigned)i, 1.0f);
	loom_tensor cin = {.name = "x", .dtype = FL, .rank = 4, .dims = {1, 3, 8, 8}, .data = f->x[0]};
	loom_compile_opts o = {.calib_inputs = &cin, .calib_ninputs = 1};
	loom_hwcfg cfg;
	int rc = loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err);
	if (!rc)
		rc = loom_compile(build_net(), &cfg, &o, &f->m, NULL, err, sizeof err);
	if (!CHECK(!rc, "compiles%s%s", rc ? ": " : "", rc ? err : ""))
		return -1;
	uint32_t jobs = 0, cpu = 0;
	for (uint32_t s = 0; s < f->m->nsteps; s++)
		jobs += f->m->steps[s].kind == LOOM_STEP_NPU, cpu += f->m->steps[s].kind == LOOM_STEP_CPU;
	CHECK(jobs == 2 && cpu >= 1, "two NPU jobs with CPU steps between (%u jobs, %u CPU steps)", jobs, cpu);
	rc = loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "default"}, &f->dev, err, sizeof err);
	if (!rc && ((rc = loom_load_firmware(f->dev, fw)) || (rc = loom_boot(f->dev, NULL))))
		snprintf(err, sizeof err, "%s: %s: %s", fw, loom_strerror(rc), loom_errmsg(f->dev));
	if (!rc)
		rc = loom_exec_new(f->dev, f->m, &f->ex, err, sizeof err);
	if (!CHECK(!rc, "device booted, loom_exec_new%s%s", rc ? ": " : "", rc ? err : ""))
		return -1;
	loom_graph *g = f->m->graph;
	loom_tensor *y = &g->tensors[g->outputs[0]];
	f->ybytes = loom_tensor_bytes(y);
	for (int i = 0; i < NIN; i++) {
		uint64_t c0 = loom_exec_get_stats(f->ex)->npu_cycles;
		rc = bind_x(&g->tensors[g->inputs[0]], f->x[i]) || loom_exec_run(f->ex, err, sizeof err);
		if (!CHECK(!rc && y->data, "plain run %d%s%s", i, rc ? ": " : "", rc ? err : ""))
			return -1;
		f->plain_cycles = loom_exec_get_stats(f->ex)->npu_cycles - c0;
		f->want[i] = oc_xmalloc(f->ybytes);
		memcpy(f->want[i], y->data, f->ybytes);
	}
	CHECK(memcmp(f->want[0], f->want[1], f->ybytes), "different inputs give different outputs");
	return 0;
}

static void teardown(fixture *f)
{
	loom_exec_free(f->ex);
	loom_close(f->dev);
	loom_model_free(f->m);
	for (int i = 0; i < NIN; i++)
		free(f->want[i]);
}

/* n inferences (input i % NIN) through k requests: every output checked */
static void run_requests(fixture *f, unsigned k, int n, int host_time)
{
	char err[2048] = "", L[64];
	snprintf(L, sizeof L, "K = %u%s", k, host_time ? ", host time" : "");
	loom_graph *g = f->m->graph;
	loom_exec_reqs *rq = NULL;
	int rc = loom_exec_new_requests(f->ex, k, &rq, err, sizeof err);
	if (!CHECK(!rc && loom_exec_reqs_count(rq) == k, "%s: loom_exec_new_requests%s%s", L, rc ? ": " : "",
		   rc ? err : ""))
		return;
	if (host_time)
		CHECK(loom_exec_reqs_host_time(rq, 1e9) == 0, "%s: host-time mode on", L);
	int input[4096], started = 0, done = 0, same = 1, two = 1, ordered = 1;
	uint64_t cyc0 = 0, eng0 = 0, span_sum = 0;
	int cyc_same = 1;
	for (unsigned r = 0; !rc && r < k && started < n; r++, started++) {
		input[r] = started % NIN;
		rc = bind_x(loom_exec_req_tensor(rq, r, g->inputs[0]), f->x[input[r]]) ||
		     loom_exec_req_start(rq, r, err, sizeof err);
	}
	while (!rc && done < n) {
		unsigned r = k;
		if ((rc = loom_exec_req_wait(rq, LOOM_EXEC_REQ_ANY, &r, err, sizeof err)))
			break;
		const loom_tensor *y = loom_exec_req_tensor(rq, r, g->outputs[0]);
		same &= y && y->data && !memcmp(y->data, f->want[input[r]], f->ybytes);
		const loom_req_stats *st = loom_exec_req_stats(rq, r);
		two &= st->jobs == 2;
		ordered &= st->first_submit < st->last_done && st->job_cycles <= st->last_done - st->first_submit;
		if (!done)
			cyc0 = st->job_cycles, eng0 = st->engine_cycles;
		cyc_same &= st->engine_cycles == eng0;
		span_sum += st->last_done - st->first_submit;
		CHECK(!loom_exec_req_busy(rq, r), "%s: request %u idle once returned", L, r);
		done++;
		if (started < n) {
			input[r] = started++ % NIN;
			rc = bind_x(loom_exec_req_tensor(rq, r, g->inputs[0]), f->x[input[r]]) ||
			     loom_exec_req_start(rq, r, err, sizeof err);
		}
	}
	CHECK(!rc && done == n, "%s: %d inferences run (%d)%s%s", L, n, done, rc ? ": " : "", rc ? err : "");
	CHECK(same, "%s: every output byte-identical to the plain run of its input", L);
	CHECK(two && ordered, "%s: two jobs per inference, first submission before last completion", L);
	if (!host_time)
		CHECK(cyc_same, "%s: every inference's jobs take the same engine cycles, whichever copy (%llu)", L,
		      (unsigned long long)eng0);
	if (!host_time && k == 1)
		CHECK(llabs((long long)cyc0 - (long long)f->plain_cycles) < 200 && span_sum == (uint64_t)n * cyc0,
		      "%s: latency = the jobs' cycles (%llu), near the plain run's (%llu)", L, (unsigned long long)cyc0,
		      (unsigned long long)f->plain_cycles);
	if (host_time && k == 1)
		CHECK(span_sum > (uint64_t)n * cyc0, "%s: latency includes the host's work (%llu > %llu)", L,
		      (unsigned long long)span_sum, (unsigned long long)((uint64_t)n * cyc0));
	loom_exec_reqs_free(rq);
}

static void test_errors(fixture *f)
{
	char err[2048] = "";
	loom_exec_reqs *rq = NULL;
	int rc = loom_exec_new_requests(f->ex, 0, &rq, err, sizeof err);
	CHECK(rc && !rq && strstr(err, "at least 1"), "0 requests refused: %s", err);
	rc = loom_exec_new_requests(f->ex, 100000, &rq, err, sizeof err);
	CHECK(rc && !rq && strstr(err, "DRAM") && strstr(err, "at most"), "more requests than DRAM holds: %s", err);
	rc = loom_exec_new_requests(f->ex, 2, &rq, err, sizeof err);
	if (!CHECK(!rc, "2 requests%s%s", rc ? ": " : "", rc ? err : ""))
		return;
	loom_graph *g = f->m->graph;
	rc = loom_exec_req_wait(rq, LOOM_EXEC_REQ_ANY, NULL, err, sizeof err);
	CHECK(rc && strstr(err, "no request in flight"), "wait with nothing in flight: %s", err);
	rc = loom_exec_req_wait(rq, 1, NULL, err, sizeof err);
	CHECK(rc && strstr(err, "not in flight"), "wait for an idle request: %s", err);
	rc = loom_exec_req_start(rq, 1, err, sizeof err);
	CHECK(rc && strstr(err, "has no data"), "start without input: %s", err);
	rc = loom_exec_req_start(rq, 2, err, sizeof err);
	CHECK(rc && strstr(err, "no such request"), "start request 2 of 2: %s", err);
	CHECK(!loom_exec_req_tensor(rq, 2, 0) && !loom_exec_req_tensor(rq, 0, -1), "no tensor for bad numbers");
	rc = bind_x(loom_exec_req_tensor(rq, 0, g->inputs[0]), f->x[3]) || loom_exec_req_start(rq, 0, err, sizeof err);
	CHECK(!rc && loom_exec_req_busy(rq, 0), "request 0 started%s%s", rc ? ": " : "", rc ? err : "");
	rc = loom_exec_req_start(rq, 0, err, sizeof err);
	CHECK(rc && strstr(err, "already started"), "start a busy request: %s", err);
	CHECK(loom_exec_reqs_host_time(rq, 1e9) != 0, "host-time mode refused while a job is in flight");
	unsigned r = 9;
	rc = loom_exec_req_wait(rq, 0, &r, err, sizeof err);
	const loom_tensor *y = loom_exec_req_tensor(rq, 0, g->outputs[0]);
	CHECK(!rc && r == 0 && !memcmp(y->data, f->want[3], f->ybytes), "wait for request 0 by number%s%s",
	      rc ? ": " : "", rc ? err : "");
	/* freed with a job in flight: waits for it first */
	rc = loom_exec_req_start(rq, 0, err, sizeof err);
	CHECK(!rc, "started again%s%s", rc ? ": " : "", rc ? err : "");
	loom_exec_reqs_free(rq);
	CHECK(loom_jobs_in_flight(f->dev) == 0, "loom_exec_reqs_free drains the jobs in flight");
}

/* after the requests, the plain run still computes what it did */
static void test_plain_again(fixture *f)
{
	char err[2048] = "";
	loom_graph *g = f->m->graph;
	int rc = bind_x(&g->tensors[g->inputs[0]], f->x[5]) || loom_exec_run(f->ex, err, sizeof err);
	CHECK(!rc && !memcmp(g->tensors[g->outputs[0]].data, f->want[5], f->ybytes),
	      "plain run after the requests: same output%s%s", rc ? ": " : "", rc ? err : "");
}

int main(void)
{
	check_init(CHECK_SKIPS);
	char fw[4200];
	snprintf(fw, sizeof fw, "%s/build/firmware/loom_fw.elf", loom_root_dir());
	if (!oc_file_exists(fw)) {
		check_skip("inference requests: no firmware %s (make firmware)", fw);
		return check_report();
	}
	fixture f;
	memset(&f, 0, sizeof f);
	if (!setup(&f, fw)) {
		run_requests(&f, 1, 5, 0);
		run_requests(&f, 3, 11, 0);
		run_requests(&f, 8, 20, 0);
		run_requests(&f, 1, 4, 1);
		run_requests(&f, 3, 9, 1);
		test_errors(&f);
		test_plain_again(&f);
	}
	teardown(&f);
	return check_report();
}
