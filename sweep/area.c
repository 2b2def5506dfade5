/* area.c - area from synthesis (sweep/area.h).
 *
 * Synthesis: build/bin/gen_hw writes the configuration's SV package, then
 * one Yosys run reads every file of rtl/npu.f with LOOM_SRAM_BLACKBOX (the
 * SRAM macros npu_sram, npu_acc_lane, npu_tcm become black boxes) and runs
 * Yosys' synth script for the top npu_top (yosys -h synth) with two passes
 * left out: the `opt -full` after memory_map is an `opt -fast`, and the
 * `opt -fast` before `abc -fast` is gone (on npu_decode 2.3 times faster,
 * 45159 cells instead of 45195). It keeps the hierarchy: each module is
 * mapped once per parameter set and `stat` multiplies it by its instances,
 * so the R x C array of npu_pe costs one PE's synthesis whatever its size. The
 * cell counts of stat's "design hierarchy" total are cached as JSON in
 * <cache>/<fingerprint>.json with a hash of the RTL sources and this
 * file's script, and turned into um^2 at every call (the technology can
 * change without synthesizing again).
 *
 * Cells: each generic gate is one library cell of the technology file
 * ($_NAND_ -> area.nand2, ...); a flip-flop is area.dff, area.dffr with an
 * asynchronous reset or set, plus area.mux2 for a clock enable ($_DFFE_*,
 * $_SDFFE_*, $_SDFFCE_*) and area.and2 for a synchronous reset
 * ($_SDFF*); a latch ($_DLATCH_N_, $_DLATCH_P_: the clock gates'
 * npu_icg) is area.latch. A cell type outside these is an error (the model would
 * otherwise drop it). The macros are checked against the configuration
 * (sp_banks npu_sram, array_cols npu_acc_lane, 2 npu_tcm) and priced by
 * bits: (sp_bytes + acc_bytes + ITCM + DTCM) * 8 * sram.density. */
#include "sweep/area.h"

#include "loom/core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_TYPES 64

/* the Yosys script; part of the cache key */
static const char synth_script[] = "synth -top npu_top -run begin:fine\n"
				   "opt -fast -full\nmemory_map\nopt -fast\ntechmap\nabc -fast\nopt -fast\n"
				   "hierarchy -check\nstat\n";

struct syn {
	char yosys[64];
	double secs;
	unsigned n;
	char type[MAX_TYPES][48];
	uint64_t count[MAX_TYPES];
};

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

const char *sweep_area_cache_default(void)
{
	static char p[960];
	const char *e = getenv("LOOM_AREA_CACHE");
	if (e && *e)
		snprintf(p, sizeof p, "%s", e);
	else
		snprintf(p, sizeof p, "%s/build/area", loom_root_dir());
	return p;
}

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint32_t fnv_file(uint32_t h, const char *path, int *ok)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		*ok = 0;
		return h;
	}
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		h = fnv(h, buf, n);
	fclose(f);
	return h;
}

/* FNV-1a of rtl/npu.f, every file it lists and the script: the RTL revision */
static int rtl_hash(const char *root, uint32_t *out, char *err, size_t len)
{
	char path[1200], line[256];
	snprintf(path, sizeof path, "%s/rtl/npu.f", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, len, "%s: %s", path, strerror(errno));
	int ok = 1;
	uint32_t h = fnv(2166136261u, synth_script, sizeof synth_script);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, " \t\r\n")] = 0;
		if (!*line)
			continue;
		h = fnv(h, line, strlen(line));
		snprintf(path, sizeof path, "%s/%s", root, line);
		h = fnv_file(h, path, &ok);
		if (!ok)
			break;
	}
	fclose(f);
	if (!ok)
		return fail(err, len, "%s: cannot read it (listed in rtl/npu.f)", path);
	*out = h;
	return 0;
}

static int add_type(struct syn *s, const char *type, uint64_t n)
{
	if (s->n == MAX_TYPES || strlen(type) >= sizeof s->type[0])
		return -1;
	snprintf(s->type[s->n], sizeof s->type[0], "%s", type);
	s->count[s->n++] = n;
	return 0;
}

/* ---- the cache: a small JSON object this file writes and reads back ---- */

static int cache_write(const char *path, const loom_hwcfg *cfg, uint32_t rtl, const struct syn *s)
{
	char tmp[1100];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "{\n  \"config\": \"%s\",\n  \"fingerprint\": \"%08x\",\n  \"rtl\": \"%08x\",\n", cfg->name,
		cfg->fingerprint, rtl);
	fprintf(f, "  \"yosys\": \"%s\",\n  \"synth_s\": %.1f,\n  \"cells\": {\n", s->yosys, s->secs);
	for (unsigned i = 0; i < s->n; i++)
		fprintf(f, "    \"%s\": %llu%s\n", s->type[i], (unsigned long long)s->count[i], i + 1 < s->n ? "," : "");
	fprintf(f, "  }\n}\n");
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* the string value of "key": "..." in j, or NULL */
static const char *json_str(const char *j, const char *key, char *out, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": \"", key);
	const char *p = strstr(j, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	const char *e = strchr(p, '"');
	if (!e || (size_t)(e - p) >= len)
		return NULL;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = 0;
	return out;
}

/* 1: a cache entry for RTL revision rtl was read into s; 0: none or stale */
static int cache_read(const char *path, uint32_t rtl, struct syn *s)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	static char j[16384];
	size_t n = fread(j, 1, sizeof j - 1, f);
	fclose(f);
	j[n] = 0;
	char v[64];
	memset(s, 0, sizeof *s);
	if (!json_str(j, "rtl", v, sizeof v) || strtoul(v, NULL, 16) != rtl || !json_str(j, "yosys", s->yosys, sizeof s->yosys))
		return 0;
	const char *p = strstr(j, "\"synth_s\": ");
	const char *c = strstr(j, "\"cells\": {");
	if (!p || !c)
		return 0;
	s->secs = strtod(p + 11, NULL);
	for (c += 10;;) {
		const char *q = strchr(c, '"'), *r = q ? strchr(q + 1, '"') : NULL, *close = strchr(c, '}');
		if (!q || !r || (close && close < q))
			break;
		char type[48];
		if ((size_t)(r - q - 1) >= sizeof type)
			return 0;
		memcpy(type, q + 1, (size_t)(r - q - 1));
		type[r - q - 1] = 0;
		if (r[1] != ':' || add_type(s, type, strtoull(r + 2, (char **)&c, 10)))
			return 0;
	}
	return s->n > 0;
}

/* ---- synthesis ---- */

/* the cell counts of the last "design hierarchy" section of a Yosys log */
static int parse_log(const char *log, struct syn *s, char *err, size_t len)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return fail(err, len, "%s: %s", log, strerror(errno));
	char line[512];
	long at = -1;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "=== design hierarchy ==="))
			at = ftell(f);
	int in = 0;
	s->n = 0;
	if (at >= 0 && fseek(f, at, SEEK_SET) == 0)
		while (fgets(line, sizeof line, f)) {
			char type[128];
			unsigned long long n;
			if (strstr(line, "Number of cells:")) {
				in = 1;
				continue;
			}
			if (!in)
				continue;
			if (sscanf(line, " %127s %llu", type, &n) != 2)
				break;
			if (add_type(s, type, n)) {
				fclose(f);
				return fail(err, len, "%s: too many cell types", log);
			}
		}
	fclose(f);
	if (!s->n)
		return fail(err, len, "%s: no cell counts of a design hierarchy (did the synthesis fail?)", log);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *yosys_cmd(void)
{
	const char *y = getenv("LOOM_YOSYS");
	return y && *y ? y : "yosys";
}

static void yosys_version(char *out, size_t len)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "'%s' -V 2>/dev/null", yosys_cmd());
	FILE *p = popen(cmd, "r");
	snprintf(out, len, "unknown");
	if (p) {
		char v[64];
		if (fgets(v, sizeof v, p)) {
			v[strcspn(v, "\r\n\"")] = 0;
			snprintf(out, len, "%s", v);
		}
		pclose(p);
	}
}

/* gen_hw's package for cfg in dir, the script, one Yosys run; s = its counts */
static int synthesize(const loom_hwcfg *cfg, const char *root, const char *dir, struct syn *s, char *err, size_t len)
{
	char cfgp[1200], cmd[8192], script[1200], log[1200], line[256];
	snprintf(cfgp, sizeof cfgp, "%s/hw.cfg", dir);
	if (loom_hwcfg_write(cfg, cfgp, err, len))
		return -1;
	snprintf(cmd, sizeof cmd, "'%s/build/bin/gen_hw' '%s' '%s' >/dev/null", root, cfgp, dir);
	if (system(cmd) != 0)
		return fail(err, len, "generating the SV package failed (%s; run `make cli` first)", cmd);
	snprintf(script, sizeof script, "%s/synth.ys", dir);
	snprintf(log, sizeof log, "%s/yosys.log", dir);
	FILE *f = fopen(script, "w"), *fl;
	if (!f)
		return fail(err, len, "%s: %s", script, strerror(errno));
	fprintf(f, "read_verilog -sv -DLOOM_SRAM_BLACKBOX %s/npu_pkg.sv", dir);
	snprintf(cmd, sizeof cmd, "%s/rtl/npu.f", root);
	if ((fl = fopen(cmd, "r"))) {
		while (fgets(line, sizeof line, fl)) {
			line[strcspn(line, " \t\r\n")] = 0;
			if (*line)
				fprintf(f, " %s/%s", root, line);
		}
		fclose(fl);
	}
	fprintf(f, "\n%s", synth_script);
	if (fclose(f))
		return fail(err, len, "%s: %s", script, strerror(errno));
	snprintf(cmd, sizeof cmd, "'%s' -q -l '%s' -s '%s' >/dev/null 2>&1", yosys_cmd(), log, script);
	double t0 = now_s();
	int rc = system(cmd);
	s->secs = now_s() - t0;
	if (rc != 0)
		return fail(err, len, "Yosys failed (%s; see %s)", cmd, log);
	yosys_version(s->yosys, sizeof s->yosys);
	return parse_log(log, s, err, len);
}

/* ---- cells to area ---- */

/* the area of one cell of a Yosys type; 0 and *kind = 2 for a macro; -1 unknown */
static int cell_area(const sweep_tech *t, const char *ty, double *a, int *kind)
{
	const struct {
		const char *name;
		double a;
	} gates[] = {
		{"$_NOT_", t->inv}, {"$_BUF_", t->inv},   {"$_NAND_", t->nand2}, {"$_NOR_", t->nor2},
		{"$_AND_", t->and2}, {"$_OR_", t->or2},   {"$_XOR_", t->xor2},   {"$_XNOR_", t->xnor2},
		{"$_MUX_", t->mux2}, {"$_ANDNOT_", t->andnot}, {"$_ORNOT_", t->ornot},
	};
	static const char *macros[] = {"npu_sram", "npu_acc_lane", "npu_tcm"};
	for (size_t i = 0; i < sizeof gates / sizeof gates[0]; i++)
		if (!strcmp(ty, gates[i].name)) {
			*a = gates[i].a;
			*kind = 0;
			return 0;
		}
	for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++)
		if (!strcmp(ty, macros[i])) {
			*a = 0, *kind = 2;
			return 0;
		}
	/* latches: storage, counted with the flip-flops */
	if (!strcmp(ty, "$_DLATCH_N_") || !strcmp(ty, "$_DLATCH_P_")) {
		*a = t->latch, *kind = 1;
		return 0;
	}
	/* flip-flops: $_DFF_<C>_ / $_DFF_<C><R><V>_ (async), $_DFFE_<C><E>_ /
	 * $_DFFE_<C><R><V><E>_, $_SDFF_<C><R><V>_, $_SDFFE_ / $_SDFFCE_<C><R><V><E>_ */
	const char *us = strchr(ty + 2, '_');
	if (strncmp(ty, "$_", 2) || !us || strstr(ty, "DFFSR"))
		return -1;
	size_t base = (size_t)(us - ty - 2), pol = strlen(us + 1);
	if (pol < 2 || us[pol] != '_')
		return -1;
	pol--; /* the polarity letters */
	int sync = !strncmp(ty + 2, "SDFF", 4), en = strstr(ty, "FFE_") || strstr(ty, "FFCE_");
	if ((base != 3 && base != 4 && base != 5 && base != 6) || strncmp(ty + 2 + sync, "DFF", 3))
		return -1;
	int async = !sync && pol == (size_t)(3 + en);
	if (pol != (size_t)(1 + en) && pol != (size_t)(3 + en))
		return -1;
	*a = (async ? t->dffr : t->dff) + (en ? t->mux2 : 0) + (sync ? t->and2 : 0);
	*kind = 1;
	return 0;
}

static int price(const loom_hwcfg *cfg, const sweep_tech *t, const struct syn *s, sweep_area_t *o, char *err,
		 size_t len)
{
	uint64_t sram = 0, lane = 0, tcm = 0;
	for (unsigned i = 0; i < s->n; i++) {
		double a;
		int kind;
		if (cell_area(t, s->type[i], &a, &kind))
			return fail(err, len, "cell type %s of the synthesis has no area in the model (sweep/area.c)",
				    s->type[i]);
		if (kind == 2) {
			sram += !strcmp(s->type[i], "npu_sram") ? s->count[i] : 0;
			lane += !strcmp(s->type[i], "npu_acc_lane") ? s->count[i] : 0;
			tcm += !strcmp(s->type[i], "npu_tcm") ? s->count[i] : 0;
			continue;
		}
		o->logic_um2 += a * (double)s->count[i];
		if (kind == 1) {
			o->flops += s->count[i];
			o->flop_um2 += a * (double)s->count[i];
		} else {
			o->logic_cells += s->count[i];
		}
	}
	if (sram != cfg->sp_banks || lane != cfg->array_cols || tcm != 2)
		return fail(err, len,
			    "the synthesized design has %llu npu_sram, %llu npu_acc_lane, %llu npu_tcm macros; "
			    "configuration %s has %u, %u, 2",
			    (unsigned long long)sram, (unsigned long long)lane, (unsigned long long)tcm, cfg->name,
			    cfg->sp_banks, cfg->array_cols);
	o->sram_bits = 8ull * ((uint64_t)cfg->sp_bytes + cfg->acc_bytes + LOOM_CORE_ITCM_SIZE + LOOM_CORE_DTCM_SIZE);
	o->sram_um2 = (double)o->sram_bits * t->sram_bit;
	o->total_mm2 = (o->logic_um2 + o->sram_um2) / 1e6;
	return 0;
}

int sweep_area_yosys(char *version, size_t len)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "'%s' -V >/dev/null 2>&1", yosys_cmd());
	if (system(cmd) != 0) {
		snprintf(version, len, "'%s' -V does not run (LOOM_YOSYS, else yosys on PATH; Debian package yosys)",
			 yosys_cmd());
		return -1;
	}
	yosys_version(version, len);
	return 0;
}

/* sweep_area; synth 0: 1 when the cache does not have cfg */
static int area_get(const loom_hwcfg *cfg, const sweep_tech *t, const char *cache_dir, int synth, sweep_area_t *out,
		    char *err, size_t errlen)
{
	const char *root = loom_root_dir();
	uint32_t rtl = 0;
	struct syn s;
	memset(out, 0, sizeof *out);
	snprintf(out->config, sizeof out->config, "%s", cfg->name);
	out->fingerprint = cfg->fingerprint;
	if (!cache_dir)
		cache_dir = sweep_area_cache_default();
	if (rtl_hash(root, &rtl, err, errlen))
		return -1;
	char dir[1100];
	snprintf(out->cache_file, sizeof out->cache_file, "%s/%08x.json", cache_dir, cfg->fingerprint);
	if (cache_read(out->cache_file, rtl, &s)) {
		out->cached = 1;
	} else if (!synth) {
		return 1;
	} else {
		snprintf(dir, sizeof dir, "%s/%08x", cache_dir, cfg->fingerprint);
		if ((mkdir(cache_dir, 0777) && errno != EEXIST) || (mkdir(dir, 0777) && errno != EEXIST))
			return fail(err, errlen, "%s: %s", dir, strerror(errno));
		if (synthesize(cfg, root, dir, &s, err, errlen))
			return -1;
		if (cache_write(out->cache_file, cfg, rtl, &s))
			return fail(err, errlen, "%s: cannot write the cache: %s", out->cache_file, strerror(errno));
	}
	out->synth_s = s.secs;
	snprintf(out->yosys, sizeof out->yosys, "%s", s.yosys);
	snprintf(out->source, sizeof out->source, "%s synthesis (%.0f s), cached in %s, cells and SRAM bits priced by %s",
		 s.yosys, s.secs, out->cache_file, t->path);
	return price(cfg, t, &s, out, err, errlen);
}

int sweep_area(const loom_hwcfg *cfg, const sweep_tech *t, const char *cache_dir, sweep_area_t *out, char *err,
	       size_t errlen)
{
	return area_get(cfg, t, cache_dir, 1, out, err, errlen);
}

int sweep_area_cached(const loom_hwcfg *cfg, const sweep_tech *t, const char *cache_dir, sweep_area_t *out, char *err,
		      size_t errlen)
{
	return area_get(cfg, t, cache_dir, 0, out, err, errlen);
}
