/* cmd_run_prof.c - where the time of `loom run MODEL.loom` goes
 * (tools/cmd_run_model.c), from the runtime's records of the last run
 * (runtime/exec.h): per layer the raw counters of its MARK record, per step
 * the host time and an NPU job's completion record. Three views of them:
 *  - --profile: a table, one row per layer: cycles, MACs, utilization, DRAM
 *    bytes, each engine's busy share and the share its queue waited for a
 *    token from another engine, and the layer's bound class; a total row;
 *    then the time split between the NPU and the host at --clock-mhz, the
 *    jobs' energy event counters and the energy they give in the default
 *    technology (sweep/energy.h, docs/DSE.md);
 *  - --profile-csv: the same rows (raw counters) as CSV;
 *  - --trace: a Chrome-trace / Perfetto JSON timeline ("traceEvents": X
 *    slices, C counters, M track names): one track per engine (load DMA,
 *    array, vector unit, store DMA), the control core, and the host CPU.
 * Both backends give the same records (the C model's cycle counters are
 * estimates), so both give the same structure. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loom/isa.h"
#include "loom/regs.h"
#include "runtime/exec.h"
#include "sweep/energy.h"

/* ------------------------------------------------------------------ derived numbers */

/* layers the compute engine runs on the vector unit (the others on the array) */
static int vec_kind(int kind) { return kind != LOOM_LAYER_CONV && kind != LOOM_LAYER_GEMM; }

/* the busiest engine of a layer: compute (array), vector unit, load DMA, store DMA */
static const char *bound_of(int kind, const uint32_t *c)
{
	uint32_t ld = c[LOOM_CTR_BUSY_LOAD], cp = c[LOOM_CTR_BUSY_COMPUTE], st = c[LOOM_CTR_BUSY_STORE];
	if (cp >= ld && cp >= st)
		return vec_kind(kind) ? "vector" : "compute";
	return ld >= st ? "load" : "store";
}

/* the model's MACs per cycle over the array's (conv, gemm) or the vector
 * unit's lanes (the others; dwconv: vec_macs multipliers a lane) peak,
 * in percent */
static double util_of(const loom_model *m, const loom_layer *L, uint64_t cycles)
{
	double peak = vec_kind(L->kind) ? (double)m->cfg.array_rows : (double)m->cfg.array_rows * m->cfg.array_cols;
	if (L->kind == LOOM_LAYER_DWCONV)
		peak *= m->cfg.vec_macs;
	return cycles ? 100.0 * (double)L->macs / (peak * (double)cycles) : 0;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

/* totals over the layers */
typedef struct prof_sum {
	uint64_t ctr[LOOM_FW_CTRS]; /* summed counters (the MACS counter in macs_issued) */
	uint64_t macs_issued, model_macs, model_macs_array; /* the model's MACs: all, on the array */
	uint64_t bound_n[4], bound_cycles[4]; /* compute, vector, load, store */
} prof_sum;

static const char *const bound_names[4] = {"compute", "vector", "load", "store"};

static void sum_layers(const loom_model *m, const loom_exec_stats *st, prof_sum *s)
{
	memset(s, 0, sizeof *s);
	for (uint32_t l = 0; l < m->nlayers; l++) {
		const loom_layer_prof *p = &st->layers[l];
		for (unsigned i = 0; i < LOOM_FW_CTRS; i++)
			s->ctr[i] += p->ctr[i];
		s->macs_issued += p->macs;
		s->model_macs += m->layers[l].macs;
		if (!vec_kind(m->layers[l].kind))
			s->model_macs_array += m->layers[l].macs;
		const char *b = bound_of(m->layers[l].kind, p->ctr);
		for (int k = 0; k < 4; k++)
			if (!strcmp(b, bound_names[k])) {
				s->bound_n[k]++;
				s->bound_cycles[k] += p->cycles;
			}
	}
}

/* the time of the last run from its steps: device cycles of the NPU jobs
 * (submission to completion), of which the engines ran, and host seconds */
typedef struct time_split {
	uint64_t npu_cycles, engine_cycles, fw_cycles;
	double cpu_s, conv_s;
	uint32_t jobs;
} time_split;

static void split_time(const loom_model *m, const loom_exec_stats *st, time_split *t)
{
	memset(t, 0, sizeof *t);
	for (uint32_t s = 0; s < m->nsteps; s++) {
		const loom_step_prof *sp = &st->steps[s];
		switch (m->steps[s].kind) {
		case LOOM_STEP_NPU:
			t->jobs++;
			t->npu_cycles += sp->done_cycle - sp->submit_cycle;
			t->engine_cycles += sp->ctr[LOOM_CTR_CYCLES];
			t->fw_cycles += sp->fw_cycles;
			break;
		case LOOM_STEP_CPU: t->cpu_s += sp->host_s; break;
		default: t->conv_s += sp->host_s; break;
		}
	}
}

/* ------------------------------------------------------------------ --profile */

/* the run's energy events (its NPU jobs' completion records) and their
 * energy in the default technology file */
static void print_energy(const loom_model *m, const loom_exec_stats *st)
{
	sweep_events ev = {0};
	sweep_events_add_run(&ev, m, st);
	printf("energy events of the %" PRIu64 " NPU jobs: SP_RD %" PRIu64 " SP_WR %" PRIu64 " ACC_RD %" PRIu64
	       " ACC_WR %" PRIu64 " VEC_LINES %" PRIu64 " RQ_VALUES %" PRIu64 "\n",
	       ev.jobs, ev.sp_rd, ev.sp_wr, ev.acc_rd, ev.acc_wr, ev.vec_lines, ev.rq_values);
	sweep_tech t;
	char err[1200];
	if (sweep_tech_load(&t, NULL, err, sizeof err)) {
		printf("energy: not estimated: %s\n", err);
		return;
	}
	sweep_energy e;
	sweep_energy_of(&t, &m->cfg, &ev, &e);
	double tot = e.total > 0 ? e.total : 1;
	printf("energy per run (%s): %.3f uJ = MAC %.1f%% + SRAM %.1f%% (scratchpad %.1f%%, accumulator %.1f%%) + "
	       "DRAM %.1f%% + other %.1f%% (vector lanes %.1f%%, requantization %.1f%%)\n",
	       t.path, e.total * 1e-6, 100 * e.mac / tot, 100 * e.sram / tot, 100 * e.sp / tot, 100 * e.acc / tot,
	       100 * e.dram / tot, 100 * e.other / tot, 100 * e.vec / tot, 100 * e.rq / tot);
}

static void print_row(const char *idx, const char *name, const char *kind, const uint64_t *c, uint64_t macs,
		      double util, const char *bound)
{
	uint64_t cy = c[LOOM_CTR_CYCLES];
	char nm[29]; /* the name's first 28 bytes, control characters as spaces: one line per row */
	snprintf(nm, sizeof nm, "%s", name);
	for (char *q = nm; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = ' ';
	name = nm;
	printf("%-4s %-28.28s %-7s %11" PRIu64 " %13" PRIu64 " %5.1f %10" PRIu64 " %10" PRIu64
	       " %5.1f %5.1f %5.1f %5.1f %5.1f %5.1f %s\n",
	       idx, name, kind, cy, macs, util, c[LOOM_CTR_DRAM_RD_BYTES], c[LOOM_CTR_DRAM_WR_BYTES],
	       pct(c[LOOM_CTR_BUSY_LOAD], cy), pct(c[LOOM_CTR_BUSY_COMPUTE], cy), pct(c[LOOM_CTR_BUSY_STORE], cy),
	       pct(c[LOOM_CTR_STALL_LOAD], cy), pct(c[LOOM_CTR_STALL_COMPUTE], cy), pct(c[LOOM_CTR_STALL_STORE], cy),
	       bound);
}

void run_print_profile(const loom_model *m, const loom_exec_stats *st, double mhz)
{
	printf("%-4s %-28s %-7s %11s %13s %5s %10s %10s %5s %5s %5s %5s %5s %5s %s\n", "#", "layer", "kind", "cycles",
	       "MACs", "util%", "DRAM rd", "DRAM wr", "bLd%", "bCp%", "bSt%", "wLd%", "wCp%", "wSt%", "bound");
	for (uint32_t l = 0; l < m->nlayers; l++) {
		const loom_layer_prof *p = &st->layers[l];
		const loom_layer *L = &m->layers[l];
		uint64_t c[LOOM_FW_CTRS];
		for (unsigned i = 0; i < LOOM_FW_CTRS; i++)
			c[i] = p->ctr[i];
		char idx[16];
		snprintf(idx, sizeof idx, "%u", l);
		print_row(idx, L->name, loom_layer_kind_name(L->kind), c, L->macs, util_of(m, L, p->cycles),
			  bound_of(L->kind, p->ctr));
	}
	prof_sum s;
	sum_layers(m, st, &s);
	double peak = (double)m->cfg.array_rows * m->cfg.array_cols;
	uint64_t cy = s.ctr[LOOM_CTR_CYCLES];
	int top = 0;
	for (int k = 1; k < 4; k++)
		if (s.bound_cycles[k] > s.bound_cycles[top])
			top = k;
	print_row("", "total", "", s.ctr, s.model_macs, cy ? 100.0 * (double)s.model_macs_array / (peak * (double)cy) : 0,
		  m->nlayers ? bound_names[top] : "-");
	printf("bLd/bCp/bSt%%: cycles the load DMA, the compute engine (array or vector unit) and the store DMA held an "
	       "instruction;\nwLd/wCp/wSt%%: cycles the head of a queue waited for a token: load for compute (C->L), "
	       "compute for load or store (L->C, S->C), store for compute (C->S) (the RTL counts this also while the "
	       "engine holds an earlier instruction);\nbound: the busiest engine "
	       "(compute: the array, vector: the vector unit, load / store: the DMA engines)\n");
	printf("layers by bound:");
	for (int k = 0, n = 0; k < 4; k++)
		if (s.bound_n[k])
			printf("%s %s %" PRIu64 " (%.1f%% of cycles)", n++ ? "," : "", bound_names[k], s.bound_n[k],
			       pct(s.bound_cycles[k], cy));
	printf("%s\n", m->nlayers ? "" : " no NPU layers");
	time_split t;
	split_time(m, st, &t);
	double npu_ms = (double)t.npu_cycles / (mhz * 1e3), eng_ms = (double)t.engine_cycles / (mhz * 1e3);
	double host_ms = 1e3 * (t.cpu_s + t.conv_s), lat = npu_ms + host_ms;
	printf("time at %g MHz: latency %.3f ms = NPU %.3f ms (%.1f%%; NPU jobs %u: engines %.3f ms, control core and "
	       "job overhead %.3f ms) + host CPU %.3f ms (%.1f%%; CPU nodes %.3f ms, (de)quantization %.3f ms)\n",
	       mhz, lat, npu_ms, lat > 0 ? 100 * npu_ms / lat : 0, t.jobs, eng_ms, npu_ms - eng_ms, host_ms,
	       lat > 0 ? 100 * host_ms / lat : 0, 1e3 * t.cpu_s, 1e3 * t.conv_s);
	print_energy(m, st);
}

/* ------------------------------------------------------------------ --profile-csv */

/* a CSV field: quoted, quotes doubled */
static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* macs: the model's; issued: the MACS counter (array_rows * array_cols per streamed line) */
static void csv_row(FILE *f, const uint64_t *c, uint64_t macs, uint64_t issued, double util, const char *bound,
		    double mhz)
{
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64, c[LOOM_CTR_CYCLES], macs, issued,
		util, c[LOOM_CTR_DRAM_RD_BYTES], c[LOOM_CTR_DRAM_WR_BYTES]);
	static const int cols[] = {LOOM_CTR_BUSY_LOAD,  LOOM_CTR_BUSY_COMPUTE,  LOOM_CTR_BUSY_STORE,
				   LOOM_CTR_STALL_LOAD, LOOM_CTR_STALL_COMPUTE, LOOM_CTR_STALL_STORE,
				   LOOM_CTR_BANK_CONFLICTS, LOOM_CTR_INSNS};
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		fprintf(f, ",%" PRIu64, c[cols[i]]);
	fprintf(f, ",%s,%.3f\n", bound, (double)c[LOOM_CTR_CYCLES] / mhz);
}

int run_write_csv(const char *path, const loom_model *m, const loom_exec_stats *st, double mhz, char *err,
		  size_t len)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, len, "--profile-csv %s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "index,layer,kind,job_step,start_cycle,cycles,macs,macs_issued,util_pct,dram_rd_bytes,dram_wr_bytes,busy_load,"
		   "busy_compute,busy_store,stall_load,stall_compute,stall_store,bank_conflicts,insns,bound,time_us\n");
	for (uint32_t l = 0; l < m->nlayers; l++) {
		const loom_layer_prof *p = &st->layers[l];
		const loom_layer *L = &m->layers[l];
		uint64_t c[LOOM_FW_CTRS];
		for (unsigned i = 0; i < LOOM_FW_CTRS; i++)
			c[i] = p->ctr[i];
		fprintf(f, "%u,", l);
		csv_str(f, L->name);
		fprintf(f, ",%s,%u,%" PRIu64, loom_layer_kind_name(L->kind), p->step, p->start);
		csv_row(f, c, L->macs, p->macs, util_of(m, L, p->cycles), bound_of(L->kind, p->ctr), mhz);
	}
	prof_sum s;
	sum_layers(m, st, &s);
	uint64_t cy = s.ctr[LOOM_CTR_CYCLES];
	int top = 0;
	for (int k = 1; k < 4; k++)
		if (s.bound_cycles[k] > s.bound_cycles[top])
			top = k;
	double peak = (double)m->cfg.array_rows * m->cfg.array_cols;
	fprintf(f, "total,\"total\",,,");
	csv_row(f, s.ctr, s.model_macs, s.macs_issued, cy ? 100.0 * (double)s.model_macs_array / (peak * (double)cy) : 0,
		m->nlayers ? bound_names[top] : "", mhz);
	if (ferror(f) | fclose(f)) {
		snprintf(err, len, "--profile-csv %s: write error", path);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ --trace */

/* the length of the UTF-8 sequence at p (1..4), 0 when it is not valid
 * (overlong forms, surrogates and code points past U+10FFFF are not) */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 1 : (c & 0xf0) == 0xe0 ? 2
		: (c & 0xf8) == 0xf0 && c <= 0xf4 ? 3 : -1;
	for (int k = 1; k <= n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n + 1;
}

/* s as a JSON string into buf (quotes, backslashes and control characters
 * escaped, invalid UTF-8 bytes as U+FFFD, cut short to fit: always a
 * complete string) */
static void json_esc(char *buf, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t k = 0;
	buf[k++] = '"';
	while (*p && k + 12 < len) {
		int n = utf8_len(p);
		if (!n) {
			k += (size_t)snprintf(buf + k, len - k, "\\ufffd");
			p++;
		} else if (n > 1) {
			memcpy(buf + k, p, (size_t)n);
			k += (size_t)n;
			p += n;
		} else if (*p == '"' || *p == '\\' || *p < 0x20) {
			k += (size_t)snprintf(buf + k, len - k, *p < 0x20 ? "\\u%04x" : "\\%c", *p);
			p++;
		} else {
			buf[k++] = (char)*p++;
		}
	}
	buf[k++] = '"';
	buf[k] = 0;
}

static void json_str(FILE *f, const char *s)
{
	char buf[2048];
	json_esc(buf, sizeof buf, s);
	fputs(buf, f);
}

enum { PID_NPU = 1, PID_HOST = 2 };
enum { TID_CORE = 1, TID_LOAD, TID_ARRAY, TID_VECTOR, TID_STORE, TID_HOST = 1 };

typedef struct trace_out {
	FILE *f;
	double mhz;
	unsigned n; /* events written */
} trace_out;

static void ev_begin(trace_out *o)
{
	fputs(o->n++ ? ",\n" : "\n", o->f);
}

static void ev_meta(trace_out *o, int pid, int tid, const char *what, const char *name, int sort)
{
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_name\",\"args\":{\"name\":", pid, tid, what);
	json_str(o->f, name);
	fprintf(o->f, "}}");
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%d}}", pid,
		tid, what, sort);
}

/* a complete slice; args: the text of a JSON object's members, or NULL */
static void ev_slice(trace_out *o, int pid, int tid, const char *name, double ts, double dur, const char *args)
{
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":", pid, tid);
	json_str(o->f, name);
	fprintf(o->f, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}", ts, dur > 0 ? dur : 0, args ? args : "");
}

static void ev_counter(trace_out *o, const char *name, double ts, const char *args)
{
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"args\":{%s}}", PID_NPU, name, ts, args);
}

/* one NPU job at t (us): the control core before START and after FINISH, a
 * slice per layer on each engine that was busy in it, the counters */
static void trace_job(trace_out *o, const loom_model *m, const loom_exec_stats *st, uint32_t s, uint32_t job,
		      double t)
{
	const loom_step *step = &m->steps[s];
	const loom_step_prof *sp = &st->steps[s];
	uint64_t S = sp->submit_cycle, D = sp->done_cycle, E = sp->ctr[LOOM_CTR_CYCLES];
	uint64_t start = sp->start_cycle; /* not located: half the job's overhead before START */
	if (start < S || start + E > D)
		start = S + (D - S > E ? (D - S - E) / 2 : 0);
	double us = 1.0 / o->mhz;
	char a[512];
	snprintf(a, sizeof a, "\"job_step\":%u,\"layers\":\"%u..%u\",\"fw_cycles\":%u,\"fw_insns\":%u,"
		 "\"submit_cycle\":%" PRIu64 ",\"start_cycle\":%" PRIu64 ",\"done_cycle\":%" PRIu64 ",\"start_located\":%s",
		 s, step->layer, step->layer + step->nlayers - 1, sp->fw_cycles, sp->fw_insns, S, start, D,
		 sp->start_cycle ? "true" : "false");
	char nm[64];
	snprintf(nm, sizeof nm, "job %u: take and start", job);
	ev_slice(o, PID_NPU, TID_CORE, nm, t, (double)(start - S) * us, a);
	snprintf(nm, sizeof nm, "job %u: complete", job);
	ev_slice(o, PID_NPU, TID_CORE, nm, t + (double)(start + E - S) * us, (double)(D - start - E) * us, a);
	for (uint32_t l = step->layer; l < step->layer + step->nlayers; l++) {
		const loom_layer_prof *p = &st->layers[l];
		const loom_layer *L = &m->layers[l];
		double ts = t + (double)(start - S + p->start) * us, dur = (double)p->cycles * us;
		const struct {
			int tid, busy, stall;
		} eng[3] = {{TID_LOAD, LOOM_CTR_BUSY_LOAD, LOOM_CTR_STALL_LOAD},
			    {vec_kind(L->kind) ? TID_VECTOR : TID_ARRAY, LOOM_CTR_BUSY_COMPUTE, LOOM_CTR_STALL_COMPUTE},
			    {TID_STORE, LOOM_CTR_BUSY_STORE, LOOM_CTR_STALL_STORE}};
		for (int k = 0; k < 3; k++) {
			if (!p->ctr[eng[k].busy])
				continue;
			snprintf(a, sizeof a, "\"layer\":%u,\"kind\":\"%s\",\"busy_cycles\":%u,\"busy_pct\":%.1f,"
				 "\"token_wait_cycles\":%u,\"first_cycle\":%" PRIu64 ",\"last_cycle\":%" PRIu64 ",\"bound\":\"%s\"",
				 l, loom_layer_kind_name(L->kind), p->ctr[eng[k].busy], pct(p->ctr[eng[k].busy], p->cycles),
				 p->ctr[eng[k].stall], start + p->start, start + p->start + p->cycles,
				 bound_of(L->kind, p->ctr));
			ev_slice(o, PID_NPU, eng[k].tid, L->name, ts, dur, a);
		}
		snprintf(a, sizeof a, "\"util\":%.2f", util_of(m, L, p->cycles));
		ev_counter(o, "MAC utilization %", ts, a);
		snprintf(a, sizeof a, "\"read\":%.3f,\"write\":%.3f", p->cycles ? (double)p->dram_rd / (double)p->cycles : 0,
			 p->cycles ? (double)p->dram_wr / (double)p->cycles : 0);
		ev_counter(o, "DRAM bytes/cycle", ts, a);
	}
	double end = t + (double)(start + E - S) * us;
	ev_counter(o, "MAC utilization %", end, "\"util\":0");
	ev_counter(o, "DRAM bytes/cycle", end, "\"read\":0,\"write\":0");
}

/* the tracks, then the steps of the last run one after the other: host
 * steps for the host time they took, NPU jobs for their device cycles */
int run_write_trace(const char *path, const loom_model *m, const loom_exec_stats *st, const char *backend,
		    double mhz, char *err, size_t len)
{
	trace_out o = {fopen(path, "w"), mhz, 0};
	if (!o.f) {
		snprintf(err, len, "--trace %s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	char nm[256];
	fprintf(o.f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"model\":");
	json_str(o.f, m->source);
	fprintf(o.f, ",\"backend\":\"%s\",\"config\":", backend);
	json_str(o.f, m->cfg.name);
	fprintf(o.f, ",\"clock_mhz\":%g},\"traceEvents\":[", mhz);
	snprintf(nm, sizeof nm, "NPU (%s, %s) at %g MHz", backend, m->cfg.name, mhz);
	ev_meta(&o, PID_NPU, 0, "process", nm, 1);
	ev_meta(&o, PID_HOST, 0, "process", "host", 2);
	static const char *const tracks[] = {"", "control core", "load DMA", "array (compute)", "vector unit",
					     "store DMA"};
	for (int k = TID_CORE; k <= TID_STORE; k++)
		ev_meta(&o, PID_NPU, k, "thread", tracks[k], k);
	ev_meta(&o, PID_HOST, TID_HOST, "thread", "host CPU", 1);
	double t = 0;
	uint32_t job = 0;
	for (uint32_t s = 0; s < m->nsteps; s++) {
		const loom_step *step = &m->steps[s];
		const loom_step_prof *sp = &st->steps[s];
		if (step->kind == LOOM_STEP_NPU) {
			trace_job(&o, m, st, s, job++, t);
			t += (double)(sp->done_cycle - sp->submit_cycle) / mhz;
			continue;
		}
		char a[512], op[128];
		if (step->kind == LOOM_STEP_CPU) {
			const loom_node *n = &m->graph->nodes[step->node];
			snprintf(nm, sizeof nm, "%s", n->name);
			json_esc(op, sizeof op, n->op_type);
		} else {
			snprintf(nm, sizeof nm, "%s %s", step->kind == LOOM_STEP_QUANT ? "quantize" : "dequantize",
				 m->graph->tensors[step->tensor].name);
			json_esc(op, sizeof op, loom_step_kind_name(step->kind));
		}
		snprintf(a, sizeof a, "\"step\":%u,\"op_type\":%s", s, op);
		ev_slice(&o, PID_HOST, TID_HOST, nm, t, 1e6 * sp->host_s, a);
		t += 1e6 * sp->host_s;
	}
	fprintf(o.f, "\n]}\n");
	if (ferror(o.f) | fclose(o.f)) {
		snprintf(err, len, "--trace %s: write error", path);
		return -1;
	}
	return 0;
}
