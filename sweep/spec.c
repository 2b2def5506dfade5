/* spec.c - the grid of loom sweep (sweep.h): the axes as the command line
 * gives them, sizes with their suffixes, the points (one configuration
 * each, or the reason it is none) and their names, and the spec file
 * DIR/sweep.spec through which every worker sees the same sweep.
 *
 * Two kinds of bad values. A value that is not a number of the axis's form
 * ("16", "abc", "" for --array) is a usage error of the command. A value
 * that is a number but no good one (0, -64K, 64Q, 128x128 beyond the
 * array limit of hwparams.def, 32 GB/s on a 16-byte bus) gives a point
 * that is reported invalid, with the reason, while the rest of the sweep
 * goes on. */
#include "compiler/calib.h"
#include "sweep/sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *const sweep_axis_opt[SWEEP_NAXES] = {"--array",	"--spad",	"--acc",
						  "--dram-gbps", "--dram-latency", "--vec-macs"};
static const char *const axis_key[SWEEP_NAXES] = {"array", "spad", "acc", "dram-gbps", "dram-latency", "vec-macs"};

/* ------------------------------------------------------------------ values */

/* [+-]digits[.digits][letters]: 0 with the number and the letters, else -1 */
static int split_num(const char *t, double *v, char *suffix, size_t slen, int allow_frac)
{
	const char *p = t;
	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.' && allow_frac) {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	const char *s = p;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
		p++;
	if (*p || (size_t)(p - s) >= slen)
		return -1;
	snprintf(suffix, slen, "%.*s", (int)(p - s), s);
	*v = strtod(t, NULL);
	return 0;
}

/* the syntax of one value of an axis: 0, or -1 (a usage error) */
static int check_syntax(int axis, const char *t)
{
	double v;
	char suf[16];
	switch (axis) {
	case SWEEP_ARRAY: {
		const char *x = strpbrk(t, "xX");
		char a[32];
		if (!x || (size_t)(x - t) >= sizeof a)
			return -1;
		snprintf(a, sizeof a, "%.*s", (int)(x - t), t);
		return split_num(a, &v, suf, sizeof suf, 0) || *suf || split_num(x + 1, &v, suf, sizeof suf, 0) || *suf
			       ? -1 : 0;
	}
	case SWEEP_SPAD:
	case SWEEP_ACC: return split_num(t, &v, suf, sizeof suf, 1);
	case SWEEP_GBPS: return split_num(t, &v, suf, sizeof suf, 1) || *suf ? -1 : 0;
	default: return split_num(t, &v, suf, sizeof suf, 0) || *suf ? -1 : 0;
	}
}

int sweep_parse_axis(sweep_spec *s, int axis, const char *list, char *err, size_t len)
{
	const char *what = axis == SWEEP_ARRAY	 ? "a list of ROWSxCOLS (e.g. 8x8,16x16)"
			   : axis == SWEEP_SPAD || axis == SWEEP_ACC ? "a list of sizes in bytes with K, M or G (e.g. 64K,1M)"
			   : axis == SWEEP_GBPS		 ? "a list of numbers in GB/s (e.g. 8,16)"
			   : axis == SWEEP_VMACS	 ? "a list of whole numbers of multipliers (e.g. 1,3,5)"
							 : "a list of whole numbers of cycles (e.g. 40,100)";
	s->nval[axis] = 0;
	const char *p = list;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char t[32];
		if (n == 0 || n >= sizeof t) {
			snprintf(err, len, "%s %s: %s value in '%s'; expected %s", sweep_axis_opt[axis], list,
				 n ? "too long a" : "an empty", list, what);
			return -1;
		}
		snprintf(t, sizeof t, "%.*s", (int)n, p);
		if (check_syntax(axis, t)) {
			snprintf(err, len, "%s %s: '%s' is not %s", sweep_axis_opt[axis], list, t,
				 axis == SWEEP_ARRAY			   ? "ROWSxCOLS"
				 : axis == SWEEP_LAT || axis == SWEEP_VMACS ? "a whole number"
									    : "a number");
			size_t k = strlen(err);
			snprintf(err + k, len - k, "; expected %s", what);
			return -1;
		}
		if (s->nval[axis] == SWEEP_MAX_VALS) {
			snprintf(err, len, "%s %s: more than %d values", sweep_axis_opt[axis], list, SWEEP_MAX_VALS);
			return -1;
		}
		snprintf(s->val[axis][s->nval[axis]++], sizeof s->val[0][0], "%s", t);
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* a size: 0 with *bytes, or -1 with the reason */
static int size_value(int axis, const char *t, uint64_t *bytes, char *why, size_t len)
{
	double v;
	char suf[16];
	split_num(t, &v, suf, sizeof suf, 1);
	double mul = 0;
	static const struct {
		const char *s;
		double m;
	} sfx[] = {{"", 1},	     {"B", 1},		    {"K", 1024},	 {"KB", 1024},		{"KiB", 1024},
		   {"M", 1048576}, {"MB", 1048576},	    {"MiB", 1048576}, {"G", 1073741824.0}, {"GB", 1073741824.0},
		   {"GiB", 1073741824.0}};
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0] && !mul; i++)
		if (!strcasecmp(suf, sfx[i].s))
			mul = sfx[i].m;
	if (!mul) {
		snprintf(why, len, "%s %s: unknown size suffix '%s' (K, M or G: powers of 1024, or none for bytes)",
			 sweep_axis_opt[axis], t, suf);
		return -1;
	}
	double b = v * mul;
	if (!(b > 0)) {
		snprintf(why, len, "%s %s: a size must be positive", sweep_axis_opt[axis], t);
		return -1;
	}
	if (b != floor(b) || b > 4294967295.0) {
		snprintf(why, len, "%s %s: %s", sweep_axis_opt[axis], t,
			 b > 4294967295.0 ? "too large" : "not a whole number of bytes");
		return -1;
	}
	*bytes = (uint64_t)b;
	return 0;
}

void sweep_fmt_size(uint64_t b, char *buf, size_t len)
{
	if (b && b % 1048576 == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(b / 1048576));
	else if (b && b % 1024 == 0)
		snprintf(buf, len, "%lluK", (unsigned long long)(b / 1024));
	else
		snprintf(buf, len, "%llu", (unsigned long long)b);
}

/* a value in a name: letters, digits, '.', '-' kept, the rest '_' */
static void safe(const char *t, char *out, size_t len)
{
	size_t i = 0;
	for (; t[i] && i + 1 < len; i++) {
		char c = t[i];
		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
				 c == '-'
			       ? c
			       : '_';
	}
	out[i] = 0;
}

/* ------------------------------------------------------------------ points */

/* one axis's value v on c: 0, or -1 with why (pt->gbps noted) */
static int set_value(const sweep_spec *s, int a, const char *v, loom_hwcfg *c, sweep_point *pt, char *why, size_t len)
{
	if (a == SWEEP_ARRAY) {
		long r = strtol(v, NULL, 10), k = strtol(strpbrk(v, "xX") + 1, NULL, 10);
		if (r <= 0 || k <= 0) {
			snprintf(why, len, "--array %s: rows and columns must be positive", v);
			return -1;
		}
		c->array_rows = (uint32_t)(r > 100000 ? 100000 : r);
		c->array_cols = (uint32_t)(k > 100000 ? 100000 : k);
	} else if (a == SWEEP_SPAD || a == SWEEP_ACC) {
		uint64_t b;
		if (size_value(a, v, &b, why, len))
			return -1;
		*(a == SWEEP_SPAD ? &c->sp_bytes : &c->acc_bytes) = (uint32_t)b;
	} else if (a == SWEEP_GBPS) {
		/* GB/s (10^9 bytes) at the clock -> bytes per cycle, rounded */
		double g = strtod(v, NULL), bw = g * 1000.0 / s->clock_mhz;
		pt->gbps = g;
		if (!(g > 0)) {
			snprintf(why, len, "--dram-gbps %s: a bandwidth must be positive", v);
			return -1;
		}
		if (lround(bw) < 1 || bw > 1e6) {
			snprintf(why, len, "--dram-gbps %s: %.3g bytes per cycle at %g MHz (dram_bw must be 1..64)", v, bw,
				 s->clock_mhz);
			return -1;
		}
		c->dram_bw = (uint32_t)lround(bw);
	} else if (a == SWEEP_VMACS) {
		long m = strtol(v, NULL, 10);
		if (m <= 0) {
			snprintf(why, len, "--vec-macs %s: multipliers must be positive", v);
			return -1;
		}
		c->vec_macs = (uint32_t)(m > 1000000 ? 1000000 : m); /* hwparams.def's range: loom_hwcfg_finish */
	} else {
		long l = strtol(v, NULL, 10);
		if (l <= 0) {
			snprintf(why, len, "--dram-latency %s: a latency must be positive", v);
			return -1;
		}
		c->dram_latency = (uint32_t)(l > 100000000 ? 100000000 : l);
	}
	return 0;
}

/* the point of one value per axis (NULL: the base's) on the base cfg */
static void make_point(const sweep_spec *s, const loom_hwcfg *base, const char *const v[SWEEP_NAXES],
		       sweep_point *pt)
{
	memset(pt, 0, sizeof *pt);
	loom_hwcfg c = *base;
	char part[SWEEP_NAXES][33], why[256] = "", w2[256]; /* a value as given: at most 31 characters */
	int badv[SWEEP_NAXES] = {0}, bad = 0;
	for (int a = 0; a < SWEEP_NAXES; a++)
		if (v[a] && set_value(s, a, v[a], &c, pt, w2, sizeof w2)) {
			badv[a] = 1;
			if (!bad++)
				snprintf(why, sizeof why, "%s", w2);
		}
	/* the name from the values; a bad value as given */
	snprintf(part[SWEEP_ARRAY], sizeof part[0], "%ux%u", c.array_rows, c.array_cols);
	sweep_fmt_size(c.sp_bytes, part[SWEEP_SPAD], sizeof part[0]);
	sweep_fmt_size(c.acc_bytes, part[SWEEP_ACC], sizeof part[0]);
	snprintf(part[SWEEP_GBPS], sizeof part[0], "%u", c.dram_bw);
	snprintf(part[SWEEP_LAT], sizeof part[0], "%u", c.dram_latency);
	snprintf(part[SWEEP_VMACS], sizeof part[0], "%u", c.vec_macs);
	for (int a = 0; a < SWEEP_NAXES; a++)
		if (badv[a])
			safe(v[a], part[a], sizeof part[a]);
	/* the vector unit's multipliers named only when swept (the names of
	 * the other sweeps stay as they were) */
	snprintf(pt->name, sizeof pt->name, "a%s_sp%s_acc%s_bw%s_lat%s%s%s", part[0], part[1], part[2], part[3],
		 part[4], s->nval[SWEEP_VMACS] ? "_vm" : "", s->nval[SWEEP_VMACS] ? part[5] : "");
	pt->cfg = c;
	if (bad) {
		snprintf(pt->reason, sizeof pt->reason, "%s", why);
		return;
	}
	snprintf(c.name, sizeof c.name, "%s", "sweep point");
	if (loom_hwcfg_finish(&c, why, sizeof why)) {
		/* "config sweep point: array_rows = 128 is outside 4..64" */
		const char *m = strncmp(why, "config sweep point: ", 20) ? why : why + 20;
		snprintf(pt->reason, sizeof pt->reason, "%s", m);
		return;
	}
	snprintf(c.name, sizeof c.name, "custom-%08x", c.fingerprint);
	pt->cfg = c;
	pt->valid = 1;
}

int sweep_points(const sweep_spec *s, sweep_point **out, int *n, char *err, size_t len)
{
	loom_hwcfg base;
	if (loom_hwcfg_load(&base, s->base, NULL, err, len))
		return -1;
	long total = 1;
	int cnt[SWEEP_NAXES];
	for (int a = 0; a < SWEEP_NAXES; a++) {
		cnt[a] = s->nval[a] ? s->nval[a] : 1;
		total *= cnt[a];
	}
	sweep_point *p = calloc((size_t)total, sizeof *p);
	if (!p) {
		snprintf(err, len, "out of memory (%ld points)", total);
		return -1;
	}
	int k = 0;
	for (long i = 0; i < total; i++) {
		const char *v[SWEEP_NAXES];
		long r = i;
		for (int a = SWEEP_NAXES - 1; a >= 0; a--) {
			v[a] = s->nval[a] ? s->val[a][r % cnt[a]] : NULL;
			r /= cnt[a];
		}
		make_point(s, &base, v, &p[k]);
		/* equal points once (64K and 65536 are one size) */
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = p[j].cfg.sp_bytes == p[k].cfg.sp_bytes && p[j].cfg.acc_bytes == p[k].cfg.acc_bytes &&
			      p[j].cfg.dram_latency == p[k].cfg.dram_latency && !strcmp(p[j].name, p[k].name);
		k += !dup;
	}
	*out = p;
	*n = k;
	return 0;
}

/* ------------------------------------------------------------------ the spec file */

int sweep_spec_write(const char *dir, const sweep_spec *s, char *err, size_t len)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/sweep.spec", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, len, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "loom-sweep-spec 1\nbase %s\nclock_mhz %.17g\nrtl %d\ntimed %d\ncalib_method %d\npercentile %.17g\n",
		s->base, s->clock_mhz, s->rtl, s->timed, s->calib_method, s->percentile);
	fprintf(f, "no_area %d\n", s->no_area);
	if (s->tech[0])
		fprintf(f, "tech %s\n", s->tech);
	for (int m = 0; m < s->nmodels; m++)
		fprintf(f, "model %s\t%s\t%s\t%s\n", s->models[m].name, s->models[m].key, s->models[m].path,
			s->models[m].calib);
	for (int a = 0; a < SWEEP_NAXES; a++) {
		fprintf(f, "axis %s ", axis_key[a]);
		for (int i = 0; i < s->nval[a]; i++)
			fprintf(f, "%s%s", i ? "," : "", s->val[a][i]);
		fprintf(f, "\n");
	}
	if (fclose(f) || rename(tmp, path)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

/* one "model NAME\tKEY\tPATH\tCALIB" line */
static int read_model(sweep_spec *s, char *v)
{
	if (s->nmodels == SWEEP_MAX_MODELS)
		return -1;
	sweep_model *m = &s->models[s->nmodels];
	char *f[4] = {v, NULL, NULL, NULL};
	for (int i = 1; i < 4; i++) {
		char *t = f[i - 1] ? strchr(f[i - 1], '\t') : NULL;
		if (!t)
			return -1;
		*t = 0;
		f[i] = t + 1;
	}
	snprintf(m->name, sizeof m->name, "%s", f[0]);
	snprintf(m->key, sizeof m->key, "%s", f[1]);
	snprintf(m->path, sizeof m->path, "%s", f[2]);
	snprintf(m->calib, sizeof m->calib, "%s", f[3]);
	s->nmodels++;
	return 0;
}

int sweep_spec_read(const char *dir, sweep_spec *s, char *err, size_t len)
{
	char path[4096], line[8192];
	snprintf(path, sizeof path, "%s/sweep.spec", dir);
	memset(s, 0, sizeof *s);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, len, "%s: %s (not a sweep directory: loom sweep MODEL.onnx ... -o DIR makes one)", path,
			 strerror(errno));
		return -1;
	}
	int ln = 0, bad = 0;
	while (!bad && fgets(line, sizeof line, f)) {
		ln++;
		line[strcspn(line, "\n")] = 0;
		char *v = strchr(line, ' ');
		if (!v) {
			bad = ln > 1 || strcmp(line, "loom-sweep-spec");
			continue;
		}
		*v++ = 0;
		if (ln == 1)
			bad = strcmp(line, "loom-sweep-spec") || strcmp(v, "1");
		else if (!strcmp(line, "base"))
			snprintf(s->base, sizeof s->base, "%s", v);
		else if (!strcmp(line, "clock_mhz"))
			s->clock_mhz = strtod(v, NULL);
		else if (!strcmp(line, "rtl"))
			s->rtl = atoi(v);
		else if (!strcmp(line, "timed"))
			s->timed = atoi(v);
		else if (!strcmp(line, "calib_method")) {
			s->calib_method = atoi(v);
			bad = s->calib_method < 0 || s->calib_method >= LOOM_CALIB_NMETHODS;
		}
		else if (!strcmp(line, "percentile"))
			s->percentile = strtod(v, NULL);
		else if (!strcmp(line, "no_area"))
			s->no_area = atoi(v);
		else if (!strcmp(line, "tech"))
			snprintf(s->tech, sizeof s->tech, "%s", v);
		else if (!strcmp(line, "model"))
			bad = read_model(s, v);
		else if (!strcmp(line, "axis")) {
			char *l = strchr(v, ' ');
			int a = 0;
			while (a < SWEEP_NAXES && (!l || strncmp(v, axis_key[a], (size_t)(l - v)) ||
						  strlen(axis_key[a]) != (size_t)(l - v)))
				a++;
			bad = a == SWEEP_NAXES || (l[1] && sweep_parse_axis(s, a, l + 1, err, len));
		} else {
			bad = 1;
		}
	}
	fclose(f);
	if (bad || !s->nmodels || !(s->clock_mhz > 0)) {
		snprintf(err, len, "%s: line %d: not a loom sweep spec (version 1)", path, ln);
		return -1;
	}
	return 0;
}
