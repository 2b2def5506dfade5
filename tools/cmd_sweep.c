/* cmd_sweep.c - `loom sweep`: design-space exploration (sweep/sweep.h).
 * Every model at every point of a grid of configurations (array size,
 * scratchpad, accumulator, DRAM bandwidth and latency over a base
 * configuration), evaluated by the timing model and, with --rtl, on the
 * RTL; results in DIR/results.csv and .json, per-layer reports, each
 * point's configuration, plots. Three more forms share the sweep's
 * directory: --run-point (the unit of work that local workers, GNU parallel
 * and Slurm run), --gather (the results and plots from what is there) and
 * --validate (the timing model against the RTL: sweep/validate.c). Area
 * and energy are priced at gathering in the technology file of --tech. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/calib.h"
#include "sweep/sweep.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loom sweep MODEL.onnx [MODEL2.onnx ...] -o DIR [--array RxC,...] [--spad SIZE,...]\n"
		"         [--acc SIZE,...] [--dram-gbps GBPS,...] [--dram-latency CYCLES,...] [--vec-macs N,...]\n"
		"         [--clock-mhz F] [--hw BASE] [--calib [MODEL=]DIR]...\n"
		"         [--calib-method minmax|percentile|mse|entropy] [--percentile P] [--rtl] [--fast]\n"
		"         [--jobs N | --parallel-sshloginfile FILE | --slurm [--slurm-args 'ARGS']]\n"
		"         [--tech FILE] [--no-area] [--no-plots] [-q]\n"
		"       loom sweep --run-point DIR POINT [POINT ...]\n"
		"       loom sweep --gather DIR [--no-plots]\n"
		"       loom sweep --validate ...   (the timing model against the RTL)\n"
		"  Every model at every point of the grid (the cartesian product of the lists; an axis not\n"
		"  given keeps the base configuration's value, --hw, default 'default'):\n"
		"  --array 8x8,16x16      MAC array rows x columns\n"
		"  --spad 64K,256K,1M     scratchpad bytes, --acc 16K,64K accumulator bytes (K, M, G: 1024^n)\n"
		"  --dram-gbps 8,16       DRAM bandwidth in GB/s (10^9 bytes/s); converted to the hardware\n"
		"                         parameter dram_bw in bytes per cycle at --clock-mhz (rounded)\n"
		"  --dram-latency 40,100  DRAM latency in cycles\n"
		"  --vec-macs 1,3,5       vector unit multipliers per lane (vec_macs: a depthwise pass's taps)\n"
		"  --clock-mhz F          nominal clock (default 1000): latency, inferences/s, GB/s\n"
		"  --calib MODEL=DIR      calibration inputs of one model (MODEL: its path or name); a bare\n"
		"                         DIR applies to every model without one (else random inputs)\n"
		"  --rtl                  also run every point on the RTL (verilated once per configuration)\n"
		"  --fast                 each layer's tiling and cycles by the closed form alone (about 100x\n"
		"                         faster; totals off by up to 3x on tiny scratchpads, docs/DSE.md \"Timing\n"
		"                         model accuracy\"); default: as the compiler, the best rated tilings'\n"
		"                         programs timed cycle by cycle (common/tsim.c)\n"
		"  --jobs N               local worker processes (default: the cores)\n"
		"  --parallel-sshloginfile FILE  hand the points to GNU parallel over these hosts (which see\n"
		"                         DIR and this loom tree at the same paths; ':' is this machine)\n"
		"  --slurm                submit the points as a Slurm job array, wait, gather\n"
		"  --tech FILE            the technology file pricing area and energy (default\n"
		"                         configs/tech/45nm.txt; docs/DSE.md \"Area\", \"Energy\")\n"
		"  --no-area              no Yosys synthesis: area_mm2 left empty (energy still priced)\n"
		"  Results are cached per point in DIR/points/: an interrupted sweep resumes, a repeated one\n"
		"  recomputes nothing. Writes DIR/results.csv, DIR/results.json, DIR/configs/POINT.cfg (for\n"
		"  --hw), per-layer reports DIR/points/POINT/MODEL/ (SCALE-Sim's column names), DIR/plots/.\n");
}

typedef struct sopts {
	sweep_spec s;
	const char *out, *calib_all, *ssh, *slurm_args, *method;
	const char *calib_for[32], *calib_dir[32];
	int ncalib, rtl, jobs, slurm, no_plots, quiet;
} sopts;

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "loom sweep: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	return 2;
}

/* name of a model: its folder for .../NAME/model.onnx, else the file's stem; made unique */
static void model_name(sweep_spec *s, int m, const char *given)
{
	char tmp[1024], *base, *dot;
	snprintf(tmp, sizeof tmp, "%s", given);
	base = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
	if (!strcmp(base, "model.onnx") && base > tmp + 1) {
		base[-1] = 0;
		base = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
	} else if ((dot = strrchr(base, '.')) && dot > base) {
		*dot = 0;
	}
	char *nm = s->models[m].name;
	snprintf(nm, sizeof s->models[m].name, "%.80s", base);
	for (char *c = nm; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '-' || *c == '_'))
			*c = '_';
	char first[96];
	snprintf(first, sizeof first, "%s", nm);
	for (int k = 2, again = 1; again && k < 100; k++) {
		again = 0;
		for (int j = 0; j < m; j++)
			again |= !strcmp(s->models[j].name, nm);
		if (again)
			snprintf(nm, sizeof s->models[m].name, "%.80s-%d", first, k);
	}
}

static int take_calib(sopts *o, const char *v)
{
	struct stat st;
	const char *eq = strchr(v, '=');
	if (!eq || (!stat(v, &st) && S_ISDIR(st.st_mode))) {
		o->calib_all = v;
		return 0;
	}
	if (o->ncalib == 32)
		return -1;
	static char names[32][1024];
	snprintf(names[o->ncalib], sizeof names[0], "%.*s", (int)(eq - v), v);
	o->calib_for[o->ncalib] = names[o->ncalib];
	o->calib_dir[o->ncalib++] = eq + 1;
	return 0;
}

static int parse_num(const char *opt, const char *v, double lo, double *out)
{
	char *e;
	errno = 0;
	double d = strtod(v, &e);
	if (errno || e == v || *e || !(d >= lo) || d > 1e9) {
		fprintf(stderr, "loom sweep: %s %s: a number of at least %g\n", opt, v, lo);
		return -1;
	}
	*out = d;
	return 0;
}

/* the options; model paths into s (absolute): 0, or an exit status */
static int parse(int argc, char **argv, sopts *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->s.base, sizeof o->s.base, "default");
	o->s.clock_mhz = 1000;
	o->s.timed = 1;
	o->s.percentile = 99.99;
	o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	const char *models[SWEEP_MAX_MODELS];
	int nm = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int ax = 0;
		while (ax < SWEEP_NAXES && strcmp(a, sweep_axis_opt[ax]))
			ax++;
		double d;
		char err[512];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (ax < SWEEP_NAXES && v) {
			if (sweep_parse_axis(&o->s, ax, v, err, sizeof err))
				return bad("%s%s", err, "");
			i++;
		} else if (!strcmp(a, "-o") && v) {
			o->out = v, i++;
		} else if (!strcmp(a, "--hw") && v) {
			snprintf(o->s.base, sizeof o->s.base, "%s", v), i++;
		} else if (!strcmp(a, "--clock-mhz") && v) {
			if (parse_num(a, v, 1e-3, &o->s.clock_mhz))
				return 2;
			i++;
		} else if (!strcmp(a, "--calib") && v) {
			if (take_calib(o, v))
				return bad("--calib %s: too many%s", v, "");
			i++;
		} else if (!strcmp(a, "--calib-method") && v) {
			o->method = v, i++;
			o->s.calib_method = loom_calib_method_of(v);
			if (o->s.calib_method < 0)
				return bad("--calib-method %s: minmax, percentile, mse or entropy%s", v, "");
		} else if (!strcmp(a, "--percentile") && v) {
			if (parse_num(a, v, 50, &o->s.percentile) || o->s.percentile > 100)
				return bad("--percentile %s: a number in [50, 100]%s", v, "");
			i++;
		} else if (!strcmp(a, "--jobs") && v) {
			if (parse_num(a, v, 1, &d) || d != (int)d)
				return bad("--jobs %s: a whole number of at least 1%s", v, "");
			o->jobs = (int)d, i++;
		} else if (!strcmp(a, "--parallel-sshloginfile") && v) {
			o->ssh = v, i++;
		} else if (!strcmp(a, "--slurm")) {
			o->slurm = 1;
		} else if (!strcmp(a, "--slurm-args") && v) {
			o->slurm_args = v, i++;
		} else if (!strcmp(a, "--fast")) {
			o->s.timed = 0;
		} else if (!strcmp(a, "--rtl")) {
			o->s.rtl = 1;
		} else if (!strcmp(a, "--no-plots")) {
			o->no_plots = 1;
		} else if (!strcmp(a, "--no-area")) {
			o->s.no_area = 1;
		} else if (!strcmp(a, "--tech") && v) {
			sweep_tech t;
			char *rp = realpath(v, NULL);
			if (sweep_tech_load(&t, rp ? rp : v, err, sizeof err)) {
				free(rp);
				return bad("--tech: %s%s", err, "");
			}
			snprintf(o->s.tech, sizeof o->s.tech, "%s", rp);
			free(rp);
			i++;
		} else if (!strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (a[0] != '-' && nm < SWEEP_MAX_MODELS) {
			models[nm++] = a;
		} else {
			usage(stderr);
			return bad("unexpected argument '%s'%s", a, nm == SWEEP_MAX_MODELS ? " (at most 16 models)" : "");
		}
	}
	if (!nm || !o->out) {
		usage(stderr);
		return bad("%s%s", !nm ? "no model given (MODEL.onnx ...)" : "no output directory (-o DIR)", "");
	}
	if (o->slurm && o->ssh)
		return bad("--slurm and --parallel-sshloginfile: choose one engine%s%s", "", "");
	for (int m = 0; m < nm; m++) {
		char *rp = realpath(models[m], NULL);
		struct stat st;
		if (!rp || stat(rp, &st) || !S_ISREG(st.st_mode)) {
			free(rp);
			return bad("%s: %s (an ONNX model file)", models[m], strerror(rp ? EISDIR : errno));
		}
		snprintf(o->s.models[m].path, sizeof o->s.models[m].path, "%s", rp);
		free(rp);
		model_name(&o->s, m, models[m]);
	}
	o->s.nmodels = nm;
	return 0;
}

/* every model's --calib folder (absolute), checked */
static int resolve_calib(sopts *o)
{
	for (int k = 0; k < o->ncalib; k++) {
		int found = 0;
		for (int m = 0; m < o->s.nmodels; m++) {
			char *rp = realpath(o->calib_for[k], NULL);
			if (!strcmp(o->calib_for[k], o->s.models[m].name) || (rp && !strcmp(rp, o->s.models[m].path))) {
				snprintf(o->s.models[m].calib, sizeof o->s.models[m].calib, "%s", o->calib_dir[k]);
				found = 1;
			}
			free(rp);
		}
		if (!found)
			return bad("--calib %s=...: no model '%s' among the models given (their names: the folder "
				   "of .../NAME/model.onnx, else the file's stem)", o->calib_for[k], o->calib_for[k]);
	}
	for (int m = 0; m < o->s.nmodels; m++) {
		char *c = o->s.models[m].calib;
		if (!c[0] && o->calib_all)
			snprintf(c, sizeof o->s.models[m].calib, "%s", o->calib_all);
		if (!c[0])
			continue;
		char *rp = realpath(c, NULL);
		struct stat st;
		if (!rp || stat(rp, &st) || !S_ISDIR(st.st_mode)) {
			free(rp);
			return bad("--calib %s: not a folder (calibration inputs: .pb files or test_data_set_N/)%s", c, "");
		}
		snprintf(c, sizeof o->s.models[m].calib, "%s", rp);
		free(rp);
	}
	/* a base given as a path: absolute, for workers elsewhere */
	char base[512], *colon = strchr(o->s.base, ':');
	snprintf(base, sizeof base, "%.*s", colon ? (int)(colon - o->s.base) : (int)strlen(o->s.base), o->s.base);
	if (strchr(base, '/') || strstr(base, ".cfg")) {
		char *rp = realpath(base, NULL), tmp[512];
		if (rp) {
			snprintf(tmp, sizeof tmp, "%s%s", rp, colon ? colon : "");
			snprintf(o->s.base, sizeof o->s.base, "%s", tmp);
		}
		free(rp);
	}
	loom_hwcfg cfg;
	return tool_load_hw("sweep", o->s.base, &cfg) ? 2 : 0;
}

/* the bar's clock starts with the points (after the models' preparation) */
static void on_progress(void *ctx, long done, long total)
{
	tool_progress *p = ctx;
	if (done == 0 && !p->shown)
		tool_progress_start(p, p->what, total);
	p->total = total;
	tool_progress_update(p, done);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* --gather DIR: the results and plots; the exit status */
static int gather(const char *dir, int plots, int quiet)
{
	char err[1024];
	sweep_summary sum;
	if (sweep_gather(dir, plots, quiet ? NULL : stdout, &sum, err, sizeof err)) {
		fprintf(stderr, "loom sweep: %s\n", err);
		return 1;
	}
	printf("wrote %s/results.csv and results.json: %d rows (%d ok, %d fallback, %d invalid, %d error, %d missing)"
	       "%s%s%s\n",
	       dir, sum.rows, sum.ok, sum.fallback, sum.invalid, sum.error, sum.missing, plots ? ", plots in " : "",
	       plots ? dir : "", plots ? "/plots" : "");
	return sum.error || sum.missing ? 1 : 0;
}

int cmd_sweep(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--validate"))
		return sweep_validate_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "--run-point")) {
		char err[1024];
		if (argc < 4) {
			usage(stderr);
			return bad("--run-point DIR POINT [POINT ...]: %s%s", argc < 3 ? "no DIR" : "no POINT", "");
		}
		if (sweep_run_points(argv[2], argv + 3, argc - 3, err, sizeof err)) {
			fprintf(stderr, "loom sweep --run-point: %s\n", err);
			return strstr(err, "no point named") || strstr(err, "not a sweep directory") ? 2 : 1;
		}
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--gather")) {
		int plots = 1, quiet = 0;
		for (int i = 3; i < argc; i++)
			if (!strcmp(argv[i], "--no-plots"))
				plots = 0;
			else if (!strcmp(argv[i], "-q"))
				quiet = 1;
			else
				return bad("--gather DIR: unexpected argument '%s'%s", argv[i], "");
		if (argc < 3)
			return bad("--gather DIR: no DIR%s%s", "", "");
		return gather(argv[2], plots, quiet);
	}
	sopts o;
	int rc = parse(argc, argv, &o);
	if (rc || (rc = resolve_calib(&o)))
		return rc;
	char exe[PATH_MAX], dir[PATH_MAX], err[2048];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	struct stat st;
	if (!stat(o.out, &st) && !S_ISDIR(st.st_mode))
		return bad("-o %s: not a directory%s", o.out, "");
	if (o.ssh && access(o.ssh, R_OK))
		return bad("--parallel-sshloginfile %s: %s", o.ssh, strerror(errno));
	tool_progress pr;
	tool_progress_start(&pr, "loom sweep", 0);
	sweep_run_opts ro = {
		.engine = o.slurm ? SWEEP_SLURM : o.ssh ? SWEEP_PARALLEL : SWEEP_LOCAL,
		.jobs = o.jobs,
		.sshloginfile = o.ssh,
		.slurm_args = o.slurm_args,
		.loom = exe,
		.progress = on_progress,
		.ctx = &pr,
		.quiet = o.quiet,
	};
	sweep_counts c;
	double t0 = now_s();
	/* DIR made first, so its absolute path goes into the spec */
	if (mkdir(o.out, 0777) && errno != EEXIST)
		return bad("-o %s: %s", o.out, strerror(errno));
	if (!realpath(o.out, dir))
		return bad("-o %s: %s", o.out, strerror(errno));
	if (sweep_run(dir, &o.s, &ro, &c, err, sizeof err)) {
		tool_progress_end(&pr);
		fprintf(stderr, "loom sweep: %s\n", err);
		return 1;
	}
	tool_progress_end(&pr);
	const char *eng = o.slurm ? "Slurm" : o.ssh ? "GNU parallel" : NULL;
	char how[64];
	snprintf(how, sizeof how, "%d local worker%s", o.jobs, o.jobs == 1 ? "" : "s");
	printf("loom sweep: %ld result%s (%d model%s): %ld computed, %ld cached, %ld failed in %.2f s (%s)\n", c.work,
	       c.work == 1 ? "" : "s", o.s.nmodels, o.s.nmodels == 1 ? "" : "s", c.computed, c.cached, c.failed,
	       now_s() - t0, eng ? eng : how);
	rc = gather(dir, !o.no_plots, o.quiet);
	return c.failed ? 1 : rc;
}
