/* tech.c - reading a technology file (sweep/tech.h): a table of the keys
 * the area and energy model need, each with its kind of unit; a line is
 * "key = value unit  # source", '#' alone starts a comment line. Values
 * are stored in um^2, um^2 per bit and pJ whatever unit the file uses. */
#include "sweep/tech.h"

#include "loom/hwcfg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_AREA, K_DENSITY, K_ENERGY };

/* X(key, kind, field of sweep_tech) */
#define TECH_KEYS(X)                                                                                             \
	X("area.inv", K_AREA, inv) X("area.nand2", K_AREA, nand2) X("area.nor2", K_AREA, nor2)                   \
	X("area.and2", K_AREA, and2) X("area.or2", K_AREA, or2) X("area.xor2", K_AREA, xor2)                     \
	X("area.xnor2", K_AREA, xnor2) X("area.mux2", K_AREA, mux2) X("area.andnot", K_AREA, andnot)             \
	X("area.ornot", K_AREA, ornot) X("area.dff", K_AREA, dff) X("area.dffr", K_AREA, dffr)                   \
	X("area.latch", K_AREA, latch)                                                                           \
	X("sram.density", K_DENSITY, sram_bit) X("energy.mul8", K_ENERGY, mul8)                                  \
	X("energy.add32", K_ENERGY, add32) X("energy.mul32", K_ENERGY, mul32)                                    \
	X("energy.sram64_8k", K_ENERGY, sram64_8k) X("energy.sram64_32k", K_ENERGY, sram64_32k)                  \
	X("energy.sram64_1m", K_ENERGY, sram64_1m) X("energy.dram64", K_ENERGY, dram64)

static const struct key {
	const char *name;
	enum kind kind;
} keys[] = {
#define X(k, kind, f) {k, kind},
	TECH_KEYS(X)
#undef X
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* the field of key number k */
static double *slot(sweep_tech *t, size_t k)
{
	double *f[] = {
#define X(k, kind, f) &t->f,
		TECH_KEYS(X)
#undef X
	};
	return f[k];
}

/* a unit of a kind: value * scale is in the stored unit (um^2, pJ); for
 * density, "Mbit/mm2" is inverted into um^2 per bit */
static const struct unit {
	const char *name;
	enum kind kind;
	double scale;
} units[] = {
	{"um2", K_AREA, 1.0},        {"mm2", K_AREA, 1e6},      {"um2/bit", K_DENSITY, 1.0},
	{"Mbit/mm2", K_DENSITY, 0.0}, {"fJ", K_ENERGY, 1e-3},   {"pJ", K_ENERGY, 1.0},
	{"nJ", K_ENERGY, 1e3},
};

static const char *kind_units[] = {"um2, mm2", "Mbit/mm2, um2/bit", "fJ, pJ, nJ"};
static const char *kind_name[] = {"an area", "an SRAM density", "an energy"};

const char *sweep_tech_default(void)
{
	static char p[960];
	snprintf(p, sizeof p, "%s/configs/tech/45nm.txt", loom_root_dir());
	return p;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* One "key = value unit # source" line into t; seen[] marks the key's line. */
static int parse_line(sweep_tech *t, char *s, const char *path, int ln, int *seen, char *err, size_t len)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	char *eq = strchr(s, '=');
	if (!eq)
		return fail(err, len, "%s:%d: expected \"key = value unit  # source\"", path, ln);
	*eq = 0;
	char *key = trim(s), *rhs = trim(eq + 1);
	size_t k;
	for (k = 0; k < NKEYS && strcmp(keys[k].name, key); k++)
		;
	if (k == NKEYS)
		return fail(err, len, "%s:%d: unknown key '%s'", path, ln, key);
	if (seen[k])
		return fail(err, len, "%s:%d: key %s already set on line %d", path, ln, key, seen[k]);
	if (!hash || !*trim(hash + 1))
		return fail(err, len, "%s:%d: key %s has no source (write where the figure comes from after '#')",
			    path, ln, key);
	char *end;
	errno = 0;
	double v = strtod(rhs, &end);
	if (end == rhs || errno || !isfinite(v))
		return fail(err, len, "%s:%d: key %s: '%s' is not a number", path, ln, key, rhs);
	if (v <= 0)
		return fail(err, len, "%s:%d: key %s: %g is not positive", path, ln, key, v);
	char *u = trim(end);
	enum kind want = keys[k].kind;
	if (!*u)
		return fail(err, len, "%s:%d: key %s: no unit (%s expected: %s)", path, ln, key, kind_name[want],
			    kind_units[want]);
	size_t i;
	for (i = 0; i < sizeof units / sizeof units[0] && strcmp(units[i].name, u); i++)
		;
	if (i == sizeof units / sizeof units[0] || units[i].kind != want)
		return fail(err, len, "%s:%d: key %s: unit '%s' is not %s (%s)", path, ln, key, u, kind_name[want],
			    kind_units[want]);
	/* Mbit/mm2 -> um^2 per bit: 1e6 um^2 / (v * 1e6 bits) */
	*slot(t, k) = units[i].scale ? v * units[i].scale : 1.0 / v;
	seen[k] = ln;
	return 0;
}

int sweep_tech_load(sweep_tech *t, const char *path, char *err, size_t errlen)
{
	if (!path)
		path = sweep_tech_default();
	memset(t, 0, sizeof *t);
	snprintf(t->path, sizeof t->path, "%s", path);
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	int seen[NKEYS] = {0}, ln = 0, rc = 0;
	char line[1024];
	while (!rc && fgets(line, sizeof line, f)) {
		ln++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		rc = parse_line(t, s, path, ln, seen, err, errlen);
	}
	fclose(f);
	if (rc)
		return -1;
	for (size_t k = 0; k < NKEYS; k++)
		if (!seen[k])
			return fail(err, errlen, "%s: key %s is missing (%s, in %s)", path, keys[k].name,
				    kind_name[keys[k].kind], kind_units[keys[k].kind]);
	return 0;
}
