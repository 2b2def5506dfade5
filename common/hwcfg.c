/* hwcfg.c - reading and validating Loom hardware configurations.
 *
 * A configuration file is "key = value" lines with '#' comments; every key of
 * hwparams.def must appear exactly once. Sizes derived from the parameters
 * (lines, banks, DRAM bytes) are computed here and nowhere else. The
 * fingerprint covers the parameters that shape the RTL and the ISA's range
 * checks; dram_latency and dram_bw only set the simulated memory. */
#include "loom/hwcfg.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

struct param {
	const char *name;
	size_t off;
	uint32_t lo, hi;
};

static const struct param params[] = {
#define LOOM_HWPARAM(n, sv, lo, hi, doc) {#n, offsetof(loom_hwcfg, n), lo, hi},
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
};
#define NPARAMS (sizeof params / sizeof params[0])

static uint32_t *slot(loom_hwcfg *c, size_t i) { return (uint32_t *)((char *)c + params[i].off); }
static uint32_t get(const loom_hwcfg *c, size_t i) { return *(const uint32_t *)((const char *)c + params[i].off); }

static int set_kv(loom_hwcfg *c, unsigned *seen, const char *key, const char *val,
		  const char *where, char *err, size_t len)
{
	for (size_t i = 0; i < NPARAMS; i++) {
		if (strcmp(params[i].name, key))
			continue;
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 0);
		while (*end == ' ' || *end == '\t')
			end++;
		if (errno || end == val || *end || v > UINT32_MAX || *val == '-')
			return fail(err, len, "%s: parameter %s: '%s' is not a number", where, key, val);
		*slot(c, i) = (uint32_t)v;
		if (seen)
			seen[i]++;
		return 0;
	}
	return fail(err, len, "%s: unknown parameter '%s'", where, key);
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int load_file(loom_hwcfg *c, const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, len, "%s: %s", path, strerror(errno));
	unsigned seen[NPARAMS] = {0};
	char line[512];
	int ln = 0, rc = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		char where[1100];
		snprintf(where, sizeof where, "%.1000s:%d", path, ln);
		if (!eq) {
			rc = fail(err, len, "%s: expected 'key = value'", where);
			break;
		}
		*eq = 0;
		if ((rc = set_kv(c, seen, trim(s), trim(eq + 1), where, err, len)))
			break;
	}
	fclose(f);
	if (rc)
		return rc;
	for (size_t i = 0; i < NPARAMS; i++) {
		if (seen[i] == 0)
			return fail(err, len, "%s: parameter %s is missing", path, params[i].name);
		if (seen[i] > 1)
			return fail(err, len, "%s: parameter %s is set %u times", path, params[i].name, seen[i]);
	}
	return 0;
}

const char *loom_root_dir(void)
{
	static char root[PATH_MAX];
	if (root[0])
		return root;
	const char *e = getenv("LOOM_ROOT");
	if (e && *e) {
		snprintf(root, sizeof root, "%s", e);
		return root;
	}
	/* <root>/build/bin/loom -> <root> */
	ssize_t n = readlink("/proc/self/exe", root, sizeof root - 1);
	if (n > 0) {
		root[n] = 0;
		for (int up = 0; up < 3; up++) {
			char *s = strrchr(root, '/');
			if (s)
				*s = 0;
		}
		char probe[PATH_MAX + 32];
		snprintf(probe, sizeof probe, "%s/configs/default.cfg", root);
		if (access(probe, R_OK) == 0)
			return root;
	}
	snprintf(root, sizeof root, ".");
	return root;
}

static uint32_t fnv(uint32_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

static int pow2(uint32_t v) { return v && !(v & (v - 1)); }

int loom_hwcfg_finish(loom_hwcfg *c, char *err, size_t len)
{
	for (size_t i = 0; i < NPARAMS; i++)
		if (get(c, i) < params[i].lo || get(c, i) > params[i].hi)
			return fail(err, len, "config %s: %s = %u is outside %u..%u", c->name, params[i].name,
				    get(c, i), params[i].lo, params[i].hi);
	if (c->array_rows % 4)
		return fail(err, len, "config %s: array_rows = %u is not a multiple of 4", c->name, c->array_rows);
	if (c->array_cols % 4)
		return fail(err, len, "config %s: array_cols = %u is not a multiple of 4", c->name, c->array_cols);
	if (!pow2(c->sp_banks))
		return fail(err, len, "config %s: sp_banks = %u is not a power of two", c->name, c->sp_banks);
	if (c->sp_bytes % (c->array_rows * c->sp_banks))
		return fail(err, len, "config %s: sp_bytes = %u is not a multiple of array_rows * sp_banks = %u",
			    c->name, c->sp_bytes, c->array_rows * c->sp_banks);
	if (!pow2(c->sp_bytes / c->array_rows / c->sp_banks))
		return fail(err, len, "config %s: sp_bytes / array_rows / sp_banks = %u lines per bank is not a power of two",
			    c->name, c->sp_bytes / c->array_rows / c->sp_banks);
	if (c->acc_bytes % (4 * c->array_cols))
		return fail(err, len, "config %s: acc_bytes = %u is not a multiple of 4 * array_cols = %u",
			    c->name, c->acc_bytes, 4 * c->array_cols);
	if (c->acc_bytes / (4 * c->array_cols) > 65536)
		return fail(err, len, "config %s: acc_bytes = %u gives more than 65536 accumulator lines",
			    c->name, c->acc_bytes);
	if (c->acc_bytes / (4 * c->array_cols) < 4)
		return fail(err, len, "config %s: acc_bytes = %u gives fewer than 4 accumulator lines",
			    c->name, c->acc_bytes);
	if (!pow2(c->dram_beat_bytes))
		return fail(err, len, "config %s: dram_beat_bytes = %u is not a power of two", c->name,
			    c->dram_beat_bytes);
	if (c->dram_bw > c->dram_beat_bytes)
		return fail(err, len, "config %s: dram_bw = %u is more than one beat (%u bytes) per cycle",
			    c->name, c->dram_bw, c->dram_beat_bytes);
	c->sp_line_bytes = c->array_rows;
	c->sp_lines = c->sp_bytes / c->array_rows;
	c->sp_bank_lines = c->sp_lines / c->sp_banks;
	c->acc_line_bytes = 4 * c->array_cols;
	c->acc_lines = c->acc_bytes / c->acc_line_bytes;
	c->dram_bytes = (uint64_t)c->dram_mib << 20;
	uint32_t h = 2166136261u;
	char kv[64];
	for (size_t i = 0; i < NPARAMS; i++) {
		if (!strcmp(params[i].name, "dram_latency") || !strcmp(params[i].name, "dram_bw"))
			continue;
		snprintf(kv, sizeof kv, "%s=%u;", params[i].name, get(c, i));
		h = fnv(h, kv);
	}
	c->fingerprint = h;
	return 0;
}

static int apply_overrides(loom_hwcfg *c, const char *ov, char *err, size_t len)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", ov);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return fail(err, len, "--hw override '%s': expected key=value", tok);
		*eq = 0;
		if (set_kv(c, NULL, trim(tok), trim(eq + 1), "--hw override", err, len))
			return -1;
	}
	return 0;
}

/* a configuration name without a file under DIR/configs: the message
 * lists the names there (sorted) and the other forms --hw takes */
static int unknown_name(const char *name, const char *dir, char *err, size_t len)
{
	char cdir[1024], known[512] = "";
	snprintf(cdir, sizeof cdir, "%s/configs", dir);
	struct dirent **ents = NULL;
	int n = scandir(cdir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		size_t k = strlen(ents[i]->d_name), used = strlen(known);
		if (k > 4 && !strcmp(ents[i]->d_name + k - 4, ".cfg") && used + k < sizeof known)
			snprintf(known + used, sizeof known - used, "%s%.*s", used ? ", " : "", (int)(k - 4),
				 ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return fail(err, len,
		    "unknown configuration '%s' (no %s/%s.cfg); known: %s; or a path to a .cfg file, or "
		    "overrides such as default:array_rows=12",
		    name, cdir, name, *known ? known : "(none)");
}

int loom_hwcfg_load(loom_hwcfg *c, const char *spec, const char *cfgdir, char *err, size_t len)
{
	char base[512], path[1024];
	const char *ov = NULL;
	memset(c, 0, sizeof *c);
	if (!spec || !*spec)
		spec = "default";
	const char *colon = strchr(spec, ':');
	if (colon) {
		snprintf(base, sizeof base, "%.*s", (int)(colon - spec), spec);
		ov = colon + 1;
	} else if (strchr(spec, '=')) {
		snprintf(base, sizeof base, "default");
		ov = spec;
	} else {
		snprintf(base, sizeof base, "%s", spec);
	}
	int named = !strchr(base, '/') && !strstr(base, ".cfg");
	if (!named) {
		snprintf(path, sizeof path, "%s", base);
	} else {
		if (!cfgdir)
			cfgdir = loom_root_dir();
		snprintf(path, sizeof path, "%s/configs/%s.cfg", cfgdir, base);
	}
	if (named && access(path, F_OK))
		return unknown_name(base, cfgdir, err, len);
	if (load_file(c, path, err, len))
		return -1;
	const char *stem = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
	snprintf(c->name, sizeof c->name, "%.*s", (int)strcspn(stem, "."), stem);
	if (ov && *ov && apply_overrides(c, ov, err, len))
		return -1;
	if (loom_hwcfg_finish(c, err, len))
		return -1;
	if (ov && *ov)
		snprintf(c->name, sizeof c->name, "custom-%08x", c->fingerprint);
	return 0;
}

int loom_hwcfg_write(const loom_hwcfg *c, const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return fail(err, len, "%s: %s", path, strerror(errno));
	fprintf(f, "# %s (fingerprint %08x), written by loom\n", c->name, c->fingerprint);
	for (size_t i = 0; i < NPARAMS; i++)
		fprintf(f, "%-15s = %u\n", params[i].name, get(c, i));
	if (fclose(f))
		return fail(err, len, "%s: %s", path, strerror(errno));
	return 0;
}
