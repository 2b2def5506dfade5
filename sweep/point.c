/* point.c - the unit of work of loom sweep (sweep.h): one design point,
 * every model, as `loom sweep --run-point DIR POINT` computes it wherever
 * it runs (a local worker process, a host of GNU parallel, a task of a
 * Slurm job array). Each (point, model) result is a directory
 * DIR/points/POINT/MODEL/ written under a temporary name and renamed into
 * place, so a result is either whole or absent and an interrupted sweep
 * resumes where it stopped. Its result.txt starts with the cache key (a
 * hash of the model's key and the point's configuration, clock and
 * options): a result with the current key is not computed again.
 *
 * Per-layer detail beside it: LAYERS.csv (our columns) and SCALE-Sim's
 * three reports with SCALE-Sim's column names (its simulator.py), counted
 * in bytes, which are SCALE-Sim's words for int8 data:
 *   COMPUTE_REPORT.csv   Total Cycles: the timing model's estimate; Stall
 *                        Cycles: those beyond the array's MATMUL cycles;
 *                        Overall Util %: MACs / (cycles * R * C); Mapping
 *                        Efficiency %: MACs / MACs the array issues (R*C
 *                        per streamed line); Compute Util %: MACs / (MATMUL
 *                        cycles * R * C). Vector-unit layers: 0.
 *   BANDWIDTH_REPORT.csv per cycle of the layer: scratchpad bytes the array
 *                        reads (activations, weights), accumulator updates;
 *                        DRAM bytes of activations, weights (+ parameters),
 *                        outputs.
 *   DETAILED_ACCESS_REPORT.csv  layers run back to back: each one's first
 *                        and last cycle, with the counts above. */
#include "sweep/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void result_dir(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, char *buf, size_t len)
{
	snprintf(buf, len, "%s/points/%s/%s", dir, pt->name, s->models[m].name);
}

void sweep_point_key(const sweep_spec *s, int m, const sweep_point *pt, char out[33])
{
	sweep_hash h;
	sweep_hash_init(&h);
	sweep_hash_str(&h, s->models[m].key);
	sweep_hash_str(&h, pt->name);
	char opt[128];
	snprintf(opt, sizeof opt, "clock=%.17g rtl=%d timed=%d valid=%d", s->clock_mhz, s->rtl, s->timed, pt->valid);
	sweep_hash_str(&h, opt);
	if (pt->valid) {
#define LOOM_HWPARAM(nm, sv, lo, hi, doc) sweep_hash_bytes(&h, &pt->cfg.nm, sizeof pt->cfg.nm);
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	}
	sweep_hash_hex(&h, out);
}

int sweep_point_cached(const char *dir, const sweep_spec *s, int m, const sweep_point *pt)
{
	char path[4200], line[128], key[33];
	result_dir(dir, s, m, pt, path, sizeof path - 16);
	strcat(path, "/result.txt");
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(line, sizeof line, f) && !strcmp(line, "loom-sweep-result 2\n") && fgets(line, sizeof line, f);
	fclose(f);
	sweep_point_key(s, m, pt, key);
	return ok && !strncmp(line, "key ", 4) && !strncmp(line + 4, key, 32);
}

/* ------------------------------------------------------------------ writing */

/* "NAME macs dram_rd dram_wr sp_rd sp_wr acc_rd acc_wr vec_lines rq_values jobs" */
static void write_events(FILE *f, const char *name, const sweep_events *e)
{
	fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		   " %" PRIu64 " %" PRIu64 "\n",
		name, e->macs, e->dram_rd, e->dram_wr, e->sp_rd, e->sp_wr, e->acc_rd, e->acc_wr, e->vec_lines,
		e->rq_values, e->jobs);
}

static void read_events(const char *v, sweep_events *e)
{
	memset(e, 0, sizeof *e);
	sscanf(v,
	       "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
	       " %" SCNu64 " %" SCNu64,
	       &e->macs, &e->dram_rd, &e->dram_wr, &e->sp_rd, &e->sp_wr, &e->acc_rd, &e->acc_wr, &e->vec_lines,
	       &e->rq_values, &e->jobs);
}

static void write_result(FILE *f, const char *key, const sweep_spec *s, int m, const sweep_point *pt,
			 const sweep_prep *p, const sweep_result *r)
{
	fprintf(f, "loom-sweep-result 2\nkey %s\npoint %s\nmodel %s\nstatus %s\nreason %s\n", key, pt->name,
		s->models[m].name, sweep_status_name[r->status], r->reason);
	fprintf(f, "cycles %" PRIu64 "\nmacs_npu %" PRIu64 "\nmacs_cpu %" PRIu64 "\nmacs_array %" PRIu64 "\n", r->cycles,
		r->macs_npu, r->macs_cpu, r->macs_array);
	fprintf(f, "dram_rd %" PRIu64 "\ndram_wr %" PRIu64 "\nsp_peak %" PRIu64 "\n", r->rd, r->wr, r->sp_peak);
	fprintf(f, "nodes_npu %d\nnodes_cpu %d\nfallback %d\n", r->nodes_npu, r->nodes_cpu, r->nfallback);
	fprintf(f, "util %.9g\nlatency_ms %.9g\nips %.9g\n", r->util, r->latency_ms, r->ips);
	fprintf(f, "rtl_cycles %" PRId64 "\nrtl_device_cycles %" PRId64 "\nrtl_err_pct %.6g\n", r->rtl_cycles,
		r->rtl_device_cycles, r->rtl_err_pct);
	write_events(f, "events", &r->ev);
	if (r->rtl_cycles >= 0)
		write_events(f, "rtl_events", &r->rtl_ev);
	for (int i = 0; p && i < r->nlayers; i++) {
		const sweep_lres *l = &r->layers[i];
		fprintf(f,
			"layer %d %d %u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %s\n",
			l->npu, l->kind, l->tile_h, l->tile_w, l->tile_c, l->cycles, l->macs, l->macs_issued, l->busy,
			l->rd_in, l->rd_wgt, l->wr, l->sp_bytes, l->acc_upd, l->sram_wgt, l->rtl_cycles, p->layers[i].name);
	}
}

/* a CSV field: quoted when it has a comma, quote or newline */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static double per(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0; }

static void write_layers_csv(FILE *f, const sweep_prep *p, const sweep_result *r)
{
	fprintf(f, "layer,name,kind,where,tile_h,tile_w,tile_c,cycles,macs,ops_per_byte,ops_per_cycle,dram_rd_bytes,"
		   "dram_wr_bytes,sp_bytes,rtl_cycles\n");
	for (int i = 0; i < r->nlayers; i++) {
		const sweep_lres *l = &r->layers[i];
		fprintf(f, "%d,", i);
		csv_str(f, p->layers[i].name);
		fprintf(f, ",%s,%s", loom_layer_kind_name(l->kind), l->npu ? "npu" : "cpu");
		if (!l->npu) {
			fprintf(f, ",,,,,,,,,,,\n");
			continue;
		}
		uint64_t bytes = l->rd_in + l->rd_wgt + l->wr;
		fprintf(f, ",%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%.6g,%.6g,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", l->tile_h,
			l->tile_w, l->tile_c, l->cycles, l->macs, per(2 * l->macs, bytes), per(2 * l->macs, l->cycles),
			l->rd_in + l->rd_wgt, l->wr, l->sp_bytes);
		if (l->rtl_cycles >= 0)
			fprintf(f, "%" PRId64, l->rtl_cycles);
		fprintf(f, "\n");
	}
}

/* SCALE-Sim's three reports (simulator.py's headers, its trailing commas) */
static void write_scalesim(FILE *fc, FILE *fb, FILE *fd, const sweep_point *pt, const sweep_result *r)
{
	fprintf(fc, "LayerID, Total Cycles, Stall Cycles, Overall Util %%, Mapping Efficiency %%, Compute Util %%,\n");
	fprintf(fb, "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
		    "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n");
	fprintf(fd, "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
		    "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
		    "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
		    "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
		    "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
		    "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n");
	double peak = (double)pt->cfg.array_rows * pt->cfg.array_cols;
	uint64_t t0 = 0;
	for (int i = 0; i < r->nlayers; i++) {
		const sweep_lres *l = &r->layers[i];
		if (!l->npu)
			continue;
		int arr = l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM;
		uint64_t cyc = l->cycles ? l->cycles : 1, stall = arr && l->cycles > l->busy ? l->cycles - l->busy : 0;
		double ou = arr ? 100.0 * (double)l->macs / ((double)cyc * peak) : 0;
		double me = arr ? 100.0 * per(l->macs, l->macs_issued) : 0;
		double cu = arr && l->busy ? 100.0 * (double)l->macs / ((double)l->busy * peak) : 0;
		fprintf(fc, "%d, %" PRIu64 ", %" PRIu64 ", %.4f, %.4f, %.4f,\n", i, l->cycles, stall, ou, me, cu);
		/* the array reads a line of R activations per streamed cycle, each weight once a tile */
		uint64_t if_sram = arr ? l->macs_issued / pt->cfg.array_cols : l->rd_in;
		uint64_t fl_sram = arr ? l->sram_wgt : 0;
		uint64_t of_sram = arr ? l->acc_upd : l->wr;
		fprintf(fb, "%d, %.4f, %.4f, %.4f, %.4f, %.4f, %.4f,\n", i, per(if_sram, cyc), per(fl_sram, cyc),
			per(of_sram, cyc), per(l->rd_in, cyc), per(l->rd_wgt, cyc), per(l->wr, cyc));
		uint64_t t1 = t0 + cyc - 1;
		fprintf(fd, "%d", i);
		const uint64_t cnt[6] = {if_sram, fl_sram, of_sram, l->rd_in, l->rd_wgt, l->wr};
		for (int k = 0; k < 6; k++)
			fprintf(fd, ", %" PRIu64 ", %" PRIu64 ", %" PRIu64, t0, t1, cnt[k]);
		fprintf(fd, ",\n");
		t0 = t1 + 1;
	}
}

static int write_file(const char *dir, const char *name, char *err, size_t len, FILE **out)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	*out = fopen(path, "w");
	if (!*out)
		snprintf(err, len, "%s: %s", path, strerror(errno));
	return *out ? 0 : -1;
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4400];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			remove(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* the result directory of (pt, m), atomically */
static int write_point(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, const sweep_prep *p,
		       const sweep_result *r, char *err, size_t len)
{
	char final[4096], tmp[4200], old[4200], key[33], pdir[4200];
	result_dir(dir, s, m, pt, final, sizeof final);
	snprintf(tmp, sizeof tmp, "%s/points/%s/.%s.tmp%d", dir, pt->name, s->models[m].name, (int)getpid());
	snprintf(old, sizeof old, "%s/points/%s/.%s.old%d", dir, pt->name, s->models[m].name, (int)getpid());
	snprintf(pdir, sizeof pdir, "%s/points", dir);
	mkdir(pdir, 0777);
	snprintf(pdir, sizeof pdir, "%s/points/%s", dir, pt->name);
	mkdir(pdir, 0777);
	rm_tree(tmp);
	if (mkdir(tmp, 0777)) {
		snprintf(err, len, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	sweep_point_key(s, m, pt, key);
	FILE *f[5] = {NULL};
	static const char *const names[5] = {"result.txt", "LAYERS.csv", "COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv",
					     "DETAILED_ACCESS_REPORT.csv"};
	int n = p && r->nlayers ? 5 : 1, rc = 0;
	for (int i = 0; i < n && !rc; i++)
		rc = write_file(tmp, names[i], err, len, &f[i]);
	if (!rc) {
		write_result(f[0], key, s, m, pt, p, r);
		if (n == 5) {
			write_layers_csv(f[1], p, r);
			write_scalesim(f[2], f[3], f[4], pt, r);
		}
	}
	for (int i = 0; i < n; i++)
		if (f[i] && fclose(f[i]) && !rc) {
			snprintf(err, len, "%s/%s: %s", tmp, names[i], strerror(errno));
			rc = -1;
		}
	if (!rc) {
		int had = rename(final, old) == 0;
		if (rename(tmp, final)) {
			snprintf(err, len, "%s: %s", final, strerror(errno));
			rc = -1;
		}
		if (had)
			rm_tree(old);
	}
	if (rc)
		rm_tree(tmp);
	return rc;
}

/* ------------------------------------------------------------------ computing */

/* a point's result without layers: invalid, or its model failed to prepare */
static int write_status(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, int status,
			const char *why, char *err, size_t len)
{
	sweep_result r;
	memset(&r, 0, sizeof r);
	r.rtl_cycles = r.rtl_device_cycles = -1;
	r.status = status;
	snprintf(r.reason, sizeof r.reason, "%.300s", why);
	return write_point(dir, s, m, pt, NULL, &r, err, len);
}

/* the valid points of one group: evaluated together, then each run on the
 * RTL (--rtl) and written */
static int run_group(const char *dir, const sweep_spec *s, int m, const sweep_point *const *g, int n,
		     const sweep_prep *p, void (*done)(void *), void *ctx, char *err, size_t len)
{
	sweep_result *rs = calloc((size_t)n, sizeof *rs);
	if (!rs || sweep_eval_n(s, p, g, n, rs)) {
		free(rs);
		snprintf(err, len, "out of memory");
		return -1;
	}
	int rc = 0;
	char why[1024];
	for (int j = 0; j < n; j++) {
		if (s->rtl && rs[j].status != SWEEP_ERROR && sweep_rtl_run(s, m, p, g[j], &rs[j], why, sizeof why)) {
			rs[j].status = SWEEP_ERROR;
			snprintf(rs[j].reason, sizeof rs[j].reason, "%.300s", why);
		}
		if (!rc)
			rc = write_point(dir, s, m, g[j], p, &rs[j], err, len);
		sweep_result_free(&rs[j]);
		if (done)
			done(ctx);
	}
	free(rs);
	return rc;
}

int sweep_points_run(const char *dir, const sweep_spec *s, int m, const sweep_point *const *pts, int n,
		     sweep_prep *prep, void (*done)(void *), void *ctx, char *err, size_t len)
{
	sweep_prep own;
	memset(&own, 0, sizeof own);
	char why[1024] = "";
	int rc = 0, nvalid = 0, bad = 0;
	for (int i = 0; i < n; i++)
		nvalid += pts[i]->valid;
	if (nvalid && !prep && sweep_prep_get(dir, s, m, s->rtl, &own, why, sizeof why))
		bad = 1;
	const sweep_prep *p = prep ? prep : &own;
	const sweep_point **g = calloc((size_t)n + 1, sizeof *g);
	char *taken = calloc((size_t)n + 1, 1);
	if (!g || !taken) {
		free(g);
		free(taken);
		sweep_prep_free(&own);
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < n && !rc; i++) {
		if (taken[i])
			continue;
		if (!pts[i]->valid || bad) {
			rc = write_status(dir, s, m, pts[i], pts[i]->valid ? SWEEP_ERROR : SWEEP_INVALID,
					  pts[i]->valid ? why : pts[i]->reason, err, len);
			if (done)
				done(ctx);
			continue;
		}
		int k = 0;
		for (int j = i; j < n; j++)
			if (!taken[j] && pts[j]->valid && sweep_same_group(&pts[i]->cfg, &pts[j]->cfg)) {
				g[k++] = pts[j];
				taken[j] = 1;
			}
		rc = run_group(dir, s, m, g, k, p, done, ctx, err, len);
	}
	free(g);
	free(taken);
	sweep_prep_free(&own);
	return rc;
}

int sweep_point_run(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, sweep_prep *prep, char *err,
		    size_t len)
{
	return sweep_points_run(dir, s, m, &pt, 1, prep, NULL, NULL, err, len);
}

/* ------------------------------------------------------------------ reading */

static void read_layer(const char *v, sweep_lres *l)
{
	memset(l, 0, sizeof *l);
	l->rtl_cycles = -1;
	sscanf(v,
	       "%d %d %u %u %u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
	       " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNd64,
	       &l->npu, &l->kind, &l->tile_h, &l->tile_w, &l->tile_c, &l->cycles, &l->macs, &l->macs_issued, &l->busy,
	       &l->rd_in, &l->rd_wgt, &l->wr, &l->sp_bytes, &l->acc_upd, &l->sram_wgt, &l->rtl_cycles);
}

/* one "name value" line into r */
static void read_field(sweep_result *r, const char *k, const char *v)
{
	static const char *const st[] = {"ok", "fallback", "invalid", "error", "missing"};
	if (!strcmp(k, "status")) {
		for (int i = 0; i < 5; i++)
			if (!strcmp(v, st[i]))
				r->status = i;
	} else if (!strcmp(k, "reason")) {
		snprintf(r->reason, sizeof r->reason, "%s", v);
	}
#define U(f) else if (!strcmp(k, #f)) r->f = strtoull(v, NULL, 10);
#define D(f) else if (!strcmp(k, #f)) r->f = strtod(v, NULL);
#define I(f) else if (!strcmp(k, #f)) r->f = strtoll(v, NULL, 10);
	U(cycles) U(macs_npu) U(macs_cpu) U(macs_array) D(util) D(latency_ms) D(ips) I(rtl_cycles) I(rtl_device_cycles)
	D(rtl_err_pct) I(nodes_npu) I(nodes_cpu)
#undef U
#undef D
#undef I
	else if (!strcmp(k, "dram_rd")) r->rd = strtoull(v, NULL, 10);
	else if (!strcmp(k, "dram_wr")) r->wr = strtoull(v, NULL, 10);
	else if (!strcmp(k, "sp_peak")) r->sp_peak = strtoull(v, NULL, 10);
	else if (!strcmp(k, "fallback")) r->nfallback = atoi(v);
	else if (!strcmp(k, "events")) read_events(v, &r->ev);
	else if (!strcmp(k, "rtl_events")) read_events(v, &r->rtl_ev);
}

int sweep_point_read(const char *dir, const sweep_spec *s, int m, const sweep_point *pt, int with_layers,
		     sweep_result *r)
{
	memset(r, 0, sizeof *r);
	r->status = SWEEP_MISSING;
	r->rtl_cycles = r->rtl_device_cycles = -1;
	snprintf(r->reason, sizeof r->reason, "not computed (yet): loom sweep --run-point DIR %s", pt->name);
	if (!sweep_point_cached(dir, s, m, pt))
		return 0;
	char path[4200], line[1024];
	result_dir(dir, s, m, pt, path, sizeof path - 16);
	strcat(path, "/result.txt");
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int cap = 0;
	r->reason[0] = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = 0;
		if (strcmp(line, "layer")) {
			read_field(r, line, v);
		} else if (with_layers) {
			if (r->nlayers == cap) {
				cap = cap ? 2 * cap : 64;
				sweep_lres *n = realloc(r->layers, (size_t)cap * sizeof *n);
				if (!n)
					break;
				r->layers = n;
			}
			read_layer(v, &r->layers[r->nlayers++]);
		}
	}
	fclose(f);
	return 0;
}

int sweep_run_points(const char *dir, char **names, int nnames, char *err, size_t len)
{
	sweep_spec s;
	sweep_point *pts = NULL;
	int npts = 0, rc = 0;
	if (sweep_spec_read(dir, &s, err, len) || sweep_points(&s, &pts, &npts, err, len))
		return -1;
	const sweep_point **mine = calloc((size_t)nnames + 1, sizeof *mine);
	if (!mine) {
		free(pts);
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < nnames; i++) {
		int k = 0;
		while (k < npts && strcmp(pts[k].name, names[i]))
			k++;
		if (k == npts) {
			snprintf(err, len, "no point named '%s' in %s/sweep.spec (%d points, e.g. %s)", names[i], dir,
				 npts, npts ? pts[0].name : "none");
			free(mine);
			free(pts);
			return -1;
		}
		mine[i] = &pts[k];
	}
	/* per model the points without a current result, in one call: the
	 * model's preparation read (with --rtl: its calibration made) once */
	const sweep_point **todo = calloc((size_t)nnames + 1, sizeof *todo);
	for (int m = 0; todo && m < s.nmodels && !rc; m++) {
		int n = 0;
		for (int i = 0; i < nnames; i++)
			if (!sweep_point_cached(dir, &s, m, mine[i]))
				todo[n++] = mine[i];
		if (n)
			rc = sweep_points_run(dir, &s, m, todo, n, NULL, NULL, NULL, err, len);
	}
	if (!todo) {
		snprintf(err, len, "out of memory");
		rc = -1;
	}
	free(todo);
	free(mine);
	free(pts);
	return rc;
}
