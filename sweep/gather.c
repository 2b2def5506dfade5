/* gather.c - the results of a sweep in one place (sweep.h): DIR/results.csv
 * and DIR/results.json, one row per point and model, from the points'
 * result files (point.c), in the order of the grid; the plots, made by
 * scripts/sweep_plot.py (Debian's /usr/bin/python3 with matplotlib, an
 * external program: loom itself runs no Python); a table of the best
 * points. Gathering reads only the result files, so it works the same
 * after local workers, GNU parallel or a Slurm job array, and on a sweep
 * still running (its rows say "missing").
 *
 * Area and energy (docs/DSE.md "Area", "Energy"): each valid configuration
 * of the grid is priced once (sweep/area.c: Yosys synthesis, cached per
 * configuration fingerprint and RTL revision in build/area, so a sweep of N
 * configurations runs Yosys at most N times and a second gather none);
 * without Yosys (or with --no-area) area_mm2 stays empty, with a warning
 * naming what did not run. Each result's energy prices its events
 * (sweep/energy.c) in the sweep's technology file (--tech, default
 * configs/tech/45nm.txt): the RTL's counters for a point run with --rtl,
 * else the analytical events of eval.c. */
#include "sweep/sweep.h"
#include "sweep/area.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char sweep_csv_header[] =
	"point,model,status,reason,array_rows,array_cols,sp_bytes,acc_bytes,sp_banks,dram_gbps,dram_bw,dram_latency,"
	"clock_mhz,config,cycles,mac_util,macs_npu,macs_cpu,cpu_mac_share,nodes_npu,nodes_cpu,cpu_node_share,"
	"dram_rd_bytes,dram_wr_bytes,sp_peak_bytes,sp_peak_share,latency_ms,inferences_per_s,area_mm2,"
	"energy_uj_per_inference,fallback_layers,rtl_cycles,rtl_device_cycles,rtl_error_pct,layers_dir,"
	"area_logic_mm2,area_sram_mm2,energy_mac_uj,energy_sram_uj,energy_dram_uj,energy_other_uj,energy_source,vec_macs";

enum { NCOL = 43 };

/* one row's fields as text ("" for none), in sweep_csv_header's order */
typedef struct row {
	char f[NCOL][400];
} row;

/* the text columns; the others are numbers (JSON: unquoted, null when empty) */
static int is_text(int i) { return i <= 3 || i == 13 || i == 34 || i == 41; }

static void put(row *r, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(row *r, int i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->f[i], sizeof r->f[i], fmt, ap);
	va_end(ap);
}

/* the energy of a result: the RTL's counters when it ran there, else the
 * analytical events; 0 when the result has none */
static int energy_of(const sweep_tech *t, const sweep_point *pt, const sweep_result *res, sweep_energy *e)
{
	int have = res->status == SWEEP_OK || res->status == SWEEP_FALLBACK ||
		   (res->status == SWEEP_ERROR && res->cycles);
	if (!have || !pt->valid)
		return 0;
	sweep_energy_of(t, &pt->cfg, res->rtl_cycles >= 0 ? &res->rtl_ev : &res->ev, e);
	return e->total > 0;
}

static void make_row(const sweep_spec *s, int m, const sweep_point *pt, const sweep_result *res,
		     const sweep_area_t *area, const sweep_tech *t, row *r)
{
	memset(r, 0, sizeof *r);
	const loom_hwcfg *c = &pt->cfg;
	int have = res->status == SWEEP_OK || res->status == SWEEP_FALLBACK ||
		   (res->status == SWEEP_ERROR && res->cycles);
	put(r, 0, "%s", pt->name);
	put(r, 1, "%s", s->models[m].name);
	put(r, 2, "%s", sweep_status_name[res->status]);
	put(r, 3, "%s", res->reason);
	put(r, 4, "%u", c->array_rows);
	put(r, 5, "%u", c->array_cols);
	put(r, 6, "%u", c->sp_bytes);
	put(r, 7, "%u", c->acc_bytes);
	put(r, 8, "%u", c->sp_banks);
	put(r, 42, "%u", c->vec_macs);
	if (pt->valid) {
		put(r, 9, "%.6g", c->dram_bw * s->clock_mhz / 1000.0);
		put(r, 10, "%u", c->dram_bw);
		put(r, 11, "%u", c->dram_latency);
		put(r, 13, "configs/%s.cfg", pt->name);
	}
	put(r, 12, "%.6g", s->clock_mhz);
	if (have) {
		uint64_t macs = res->macs_npu + res->macs_cpu;
		int nodes = res->nodes_npu + res->nodes_cpu;
		put(r, 14, "%" PRIu64, res->cycles);
		put(r, 15, "%.6f", res->util);
		put(r, 16, "%" PRIu64, res->macs_npu);
		put(r, 17, "%" PRIu64, res->macs_cpu);
		put(r, 18, "%.6f", macs ? (double)res->macs_cpu / (double)macs : 0.0);
		put(r, 19, "%d", res->nodes_npu);
		put(r, 20, "%d", res->nodes_cpu);
		put(r, 21, "%.6f", nodes ? (double)res->nodes_cpu / nodes : 0.0);
		put(r, 22, "%" PRIu64, res->rd);
		put(r, 23, "%" PRIu64, res->wr);
		put(r, 24, "%" PRIu64, res->sp_peak);
		put(r, 25, "%.6f", c->sp_bytes ? (double)res->sp_peak / c->sp_bytes : 0.0);
		put(r, 26, "%.6f", res->latency_ms);
		put(r, 27, "%.3f", res->ips);
		put(r, 30, "%d", res->nfallback);
		put(r, 34, "points/%s/%s", pt->name, s->models[m].name);
	}
	if (area) {
		put(r, 28, "%.6f", area->total_mm2);
		put(r, 35, "%.6f", area->logic_um2 / 1e6);
		put(r, 36, "%.6f", area->sram_um2 / 1e6);
	}
	sweep_energy e;
	if (energy_of(t, pt, res, &e)) {
		put(r, 29, "%.6f", e.total / 1e6);
		put(r, 37, "%.6f", e.mac / 1e6);
		put(r, 38, "%.6f", e.sram / 1e6);
		put(r, 39, "%.6f", e.dram / 1e6);
		put(r, 40, "%.6f", e.other / 1e6);
		put(r, 41, "%s", res->rtl_cycles >= 0 ? "rtl" : "analytical");
	}
	if (res->rtl_cycles >= 0) {
		put(r, 31, "%" PRId64, res->rtl_cycles);
		put(r, 32, "%" PRId64, res->rtl_device_cycles);
		put(r, 33, "%.3f", res->rtl_err_pct);
	}
}

static void csv_field(FILE *f, const char *s)
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

/* "area": the technology file and each configuration's area, once */
static void json_areas(FILE *f, const sweep_tech *t, const sweep_point *pts, const sweep_area_t *a, int npts)
{
	fprintf(f, "  \"tech\": ");
	json_str(f, t->path);
	fprintf(f, ",\n  \"areas\": [");
	int first = 1;
	for (int i = 0; i < npts; i++) {
		int d = 0;
		while (d < i && pts[d].cfg.fingerprint != pts[i].cfg.fingerprint)
			d++;
		if (a[i].total_mm2 <= 0 || d < i)
			continue;
		fprintf(f, "%s\n    {\"config\": ", first ? "" : ",");
		json_str(f, pts[i].cfg.name);
		fprintf(f,
			", \"area_mm2\": %.6f, \"logic_mm2\": %.6f, \"flop_mm2\": %.6f, \"sram_mm2\": %.6f, "
			"\"logic_cells\": %" PRIu64 ", \"flops\": %" PRIu64 ", \"sram_bits\": %" PRIu64
			", \"synth_s\": %.1f, \"source\": ",
			a[i].total_mm2, a[i].logic_um2 / 1e6, a[i].flop_um2 / 1e6, a[i].sram_um2 / 1e6, a[i].logic_cells,
			a[i].flops, a[i].sram_bits, a[i].synth_s);
		json_str(f, a[i].source);
		fprintf(f, "}");
		first = 0;
	}
	fprintf(f, "],\n");
}

static void json_head(FILE *f, const sweep_spec *s)
{
	static const char *const ax[SWEEP_NAXES] = {"array", "spad", "acc", "dram_gbps", "dram_latency", "vec_macs"};
	fprintf(f, "{\n  \"base\": ");
	json_str(f, s->base);
	fprintf(f, ",\n  \"clock_mhz\": %.17g,\n  \"rtl\": %s,\n  \"timed\": %s,\n  \"models\": [", s->clock_mhz,
		s->rtl ? "true" : "false", s->timed ? "true" : "false");
	for (int m = 0; m < s->nmodels; m++) {
		fprintf(f, "%s{\"name\": ", m ? ", " : "");
		json_str(f, s->models[m].name);
		fprintf(f, ", \"path\": ");
		json_str(f, s->models[m].path);
		fprintf(f, ", \"calib\": ");
		json_str(f, s->models[m].calib);
		fprintf(f, "}");
	}
	fprintf(f, "],\n  \"axes\": {");
	for (int a = 0; a < SWEEP_NAXES; a++) {
		fprintf(f, "%s\"%s\": [", a ? ", " : "", ax[a]);
		for (int i = 0; i < s->nval[a]; i++) {
			fprintf(f, "%s", i ? ", " : "");
			json_str(f, s->val[a][i]);
		}
		fprintf(f, "]");
	}
	fprintf(f, "},\n");
}

static void json_row(FILE *f, const row *r, const char *const *cols, int last)
{
	fprintf(f, "    {");
	for (int i = 0; i < NCOL; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", cols[i]);
		if (is_text(i))
			json_str(f, r->f[i]);
		else
			fputs(r->f[i][0] ? r->f[i] : "null", f);
	}
	fprintf(f, "}%s\n", last ? "" : ",");
}

/* the plots: scripts/sweep_plot.py DIR (its own messages on stderr) */
static int plots(const char *dir, FILE *out)
{
	char script[4096];
	snprintf(script, sizeof script, "%s/scripts/sweep_plot.py", loom_root_dir());
	if (access("/usr/bin/python3", X_OK) || access(script, R_OK)) {
		fprintf(stderr, "loom sweep: no plots: %s needs /usr/bin/python3 (sh scripts/setup.sh installs it)\n",
			script);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setenv("MPLBACKEND", "Agg", 1);
		if (out)
			dup2(fileno(out), 1);
		execl("/usr/bin/python3", "python3", script, dir, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "loom sweep: the plots failed (%s %s)\n", script, dir);
		return -1;
	}
	return 0;
}

/* the best points of each model by cycles, with their area (a[i], 0 when
 * unknown) and energy */
static void best_table(FILE *out, const sweep_spec *s, const sweep_point *pts, int npts, sweep_result *res,
		       const sweep_area_t *a, const sweep_tech *t)
{
	for (int m = 0; m < s->nmodels; m++) {
		fprintf(out, "%s: best points by cycles\n  %-40s %12s %8s %10s %9s %6s %9s %9s\n", s->models[m].name,
			"point", "cycles", "MAC util", "latency ms", "inf/s", "CPU %", "area mm2", "uJ/inf");
		int used[5] = {-1, -1, -1, -1, -1};
		for (int k = 0; k < 5; k++) {
			int b = -1;
			for (int i = 0; i < npts; i++) {
				const sweep_result *r = &res[i * s->nmodels + m];
				int taken = 0;
				for (int j = 0; j < k; j++)
					taken |= used[j] == i;
				if (!taken && (r->status == SWEEP_OK || r->status == SWEEP_FALLBACK) && r->cycles &&
				    (b < 0 || r->cycles < res[b * s->nmodels + m].cycles))
					b = i;
			}
			if (b < 0)
				break;
			used[k] = b;
			const sweep_result *r = &res[b * s->nmodels + m];
			uint64_t macs = r->macs_npu + r->macs_cpu;
			sweep_energy e;
			char ar[32] = "-", en[32] = "-";
			if (a[b].total_mm2 > 0)
				snprintf(ar, sizeof ar, "%.3f", a[b].total_mm2);
			if (energy_of(t, &pts[b], r, &e))
				snprintf(en, sizeof en, "%.3f", e.total / 1e6);
			fprintf(out, "  %-40s %12" PRIu64 " %7.1f%% %10.4f %9.1f %5.1f%% %9s %9s\n", pts[b].name, r->cycles,
				100 * r->util, r->latency_ms, r->ips, macs ? 100.0 * (double)r->macs_cpu / macs : 0.0, ar,
				en);
		}
	}
}

/* the area of every valid point's configuration into a[] (zeroed when
 * unknown), each fingerprint once: from the cache, else by Yosys; without
 * Yosys, or when synthesis fails, a warning and no area */
static void areas(const sweep_spec *s, const sweep_tech *t, const sweep_point *pts, int npts, sweep_area_t *a,
		  int quiet)
{
	char ver[160], err[2048];
	int yosys = -1, warned = 0;
	for (int i = 0; i < npts; i++) {
		memset(&a[i], 0, sizeof a[i]);
		if (!pts[i].valid || s->no_area)
			continue;
		int d = 0;
		while (d < i && !(pts[d].valid && pts[d].cfg.fingerprint == pts[i].cfg.fingerprint))
			d++;
		if (d < i) {
			a[i] = a[d];
			continue;
		}
		int rc = sweep_area_cached(&pts[i].cfg, t, NULL, &a[i], err, sizeof err);
		if (rc == 1 && yosys < 0)
			yosys = !sweep_area_yosys(ver, sizeof ver);
		if (rc == 1 && !yosys) {
			if (!warned++)
				fprintf(stderr,
					"loom sweep: warning: area_mm2 left empty for %s and every configuration not in "
					"the area cache %s: Yosys is needed to synthesize them: %s\n",
					pts[i].name, sweep_area_cache_default(), ver);
			memset(&a[i], 0, sizeof a[i]);
			continue;
		}
		if (rc == 1) {
			if (!quiet)
				fprintf(stderr, "loom sweep: area of %s (%s): synthesizing with %s...\n", pts[i].name,
					pts[i].cfg.name, ver);
			rc = sweep_area(&pts[i].cfg, t, NULL, &a[i], err, sizeof err);
			if (!rc && !quiet)
				fprintf(stderr, "loom sweep: area of %s: %.4f mm2 (synthesis %.1f s, cached in %s)\n",
					pts[i].name, a[i].total_mm2, a[i].synth_s, a[i].cache_file);
		}
		if (rc) {
			fprintf(stderr, "loom sweep: warning: area_mm2 left empty for %s: %s\n", pts[i].name, err);
			memset(&a[i], 0, sizeof a[i]);
		}
	}
}

int sweep_gather(const char *dir, int want_plots, FILE *out, sweep_summary *sum, char *err, size_t len)
{
	sweep_spec s;
	sweep_point *pts = NULL;
	int npts = 0;
	memset(sum, 0, sizeof *sum);
	if (sweep_spec_read(dir, &s, err, len))
		return -1;
	sweep_tech t;
	if (sweep_tech_load(&t, s.tech[0] ? s.tech : NULL, err, len) || sweep_points(&s, &pts, &npts, err, len))
		return -1;
	sweep_area_t *area = calloc((size_t)npts + 1, sizeof *area);
	if (!area) {
		free(pts);
		snprintf(err, len, "out of memory");
		return -1;
	}
	areas(&s, &t, pts, npts, area, !out);
	char cpath[4200], jpath[4200], ctmp[4300], jtmp[4300];
	snprintf(cpath, sizeof cpath, "%s/results.csv", dir);
	snprintf(jpath, sizeof jpath, "%s/results.json", dir);
	snprintf(ctmp, sizeof ctmp, "%s.tmp%d", cpath, (int)getpid());
	snprintf(jtmp, sizeof jtmp, "%s.tmp%d", jpath, (int)getpid());
	FILE *fc = fopen(ctmp, "w"), *fj = fopen(jtmp, "w");
	sweep_result *res = calloc((size_t)npts * s.nmodels + 1, sizeof *res);
	row *r = malloc(sizeof *r);
	const char *cols[NCOL];
	char hdr[sizeof sweep_csv_header];
	memcpy(hdr, sweep_csv_header, sizeof hdr);
	int nc = 0;
	for (char *t = strtok(hdr, ","); t && nc < NCOL; t = strtok(NULL, ","))
		cols[nc++] = t;
	int rc = -1;
	if (!fc || !fj || !res || !r) {
		snprintf(err, len, "%s: %s", !fc ? ctmp : jtmp, !fc || !fj ? strerror(errno) : "out of memory");
		goto out;
	}
	fprintf(fc, "%s\n", sweep_csv_header);
	json_head(fj, &s);
	json_areas(fj, &t, pts, area, npts);
	fprintf(fj, "  \"rows\": [\n");
	for (int i = 0; i < npts; i++)
		for (int m = 0; m < s.nmodels; m++) {
			sweep_result *x = &res[i * s.nmodels + m];
			sweep_point_read(dir, &s, m, &pts[i], 0, x);
			make_row(&s, m, &pts[i], x, area[i].total_mm2 > 0 ? &area[i] : NULL, &t, r);
			for (int k = 0; k < NCOL; k++) {
				if (k)
					fputc(',', fc);
				csv_field(fc, r->f[k]);
			}
			fputc('\n', fc);
			json_row(fj, r, cols, i == npts - 1 && m == s.nmodels - 1);
			sum->rows++;
			int *cnt[] = {&sum->ok, &sum->fallback, &sum->invalid, &sum->error, &sum->missing};
			(*cnt[x->status])++;
		}
	fprintf(fj, "  ]\n}\n");
	int bad = fclose(fc) | fclose(fj);
	fc = fj = NULL;
	if (bad || rename(ctmp, cpath) || rename(jtmp, jpath)) {
		snprintf(err, len, "%s: %s", cpath, strerror(errno));
		goto out;
	}
	if (out)
		best_table(out, &s, pts, npts, res, area, &t);
	if (want_plots) {
		if (out)
			fflush(out);
		plots(dir, out);
	}
	rc = 0;
out:
	if (fc)
		fclose(fc);
	if (fj)
		fclose(fj);
	remove(ctmp);
	remove(jtmp);
	free(res);
	free(r);
	free(pts);
	free(area);
	return rc;
}
