/* cmd_sweep_validate.c - `loom sweep --validate MODEL... [--hw CONFIG,...]`:
 * the accuracy of the fast timing numbers against the RTL (sweep/validate.h).
 * Each model (an ONNX file, compiled for each configuration with its
 * folder's calib/ or --calib DIR; or a compiled .loom, on its own
 * configuration) runs on the RTL and on the C model; per layer the table
 * gives the planners' analytical estimate, the C model's and the RTL's
 * cycles and both errors against the RTL; per model the median and worst
 * per-layer |error| and the whole model's error; a last summary pools every
 * layer of every run. --max-median / --max-worst / --max-whole P (percent)
 * bound the analytical estimate's errors (the C model's with --cm-max-*):
 * the exit status is 1 when one is exceeded, naming it (docs/DSE.md,
 * "Timing model accuracy"). --csv FILE writes one row per layer and one
 * total row per model. Exit 2 on a usage error. sweep_validate_main is called
 * by cmd_sweep when its first argument is --validate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ir/model.h"
#include "sweep/validate.h"

#define MAX_ITEMS 64

typedef struct val_cli {
	const char *models[MAX_ITEMS];
	int nmodels;
	char *hws[MAX_ITEMS];
	int nhws;
	char hwbuf[2048];
	const char *calib, *csv;
	int quiet, no_rtl;
	double max[2][3];       /* [analytical, C model][median, worst, whole], percent; < 0: none */
} val_cli;

static void usage(FILE *f)
{
	fprintf(f, "usage: loom sweep --validate MODEL.onnx|MODEL.loom... [--hw CONFIG,...] [--calib DIR]\n"
		   "                  [--csv FILE] [-q] [--no-rtl] [--max-median P] [--max-worst P] [--max-whole P]\n"
		   "                  [--cm-max-median P] [--cm-max-worst P] [--cm-max-whole P]\n"
		   "  Runs each model on the RTL and the C model of each configuration (default: default) and\n"
		   "  compares per layer the planners' estimate (est) and the C model's cycles (cm) with the\n"
		   "  RTL's. --max-*: bounds in percent on the estimate's median / worst per-layer |error| and\n"
		   "  the whole model's (--cm-max-*: the C model's); exceeding one makes the exit status 1.\n"
		   "  --no-rtl: the C model stands in for the RTL. A .loom file runs on its own configuration.\n");
}

static int parse(int argc, char **argv, val_cli *o)
{
	memset(o, 0, sizeof *o);
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < 3; j++)
			o->max[k][j] = -1;
	static const char *bounds[2][3] = {{"--max-median", "--max-worst", "--max-whole"},
					   {"--cm-max-median", "--cm-max-worst", "--cm-max-whole"}};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int hit = 0;
		for (int k = 0; k < 2 && !hit; k++)
			for (int j = 0; j < 3 && !hit; j++)
				if (!strcmp(a, bounds[k][j]) && v) {
					char *e;
					o->max[k][j] = strtod(v, &e);
					if (*e || !(o->max[k][j] >= 0)) {
						fprintf(stderr, "loom sweep: %s %s: a percentage >= 0\n", a, v);
						return -1;
					}
					hit = 1;
					i++;
				}
		if (hit || !strcmp(a, "--validate"))
			continue;
		if (!strcmp(a, "--hw") && v) {
			snprintf(o->hwbuf, sizeof o->hwbuf, "%s", argv[++i]);
		} else if (!strcmp(a, "--calib") && v) {
			o->calib = argv[++i];
		} else if (!strcmp(a, "--csv") && v) {
			o->csv = argv[++i];
		} else if (!strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--no-rtl")) {
			o->no_rtl = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (a[0] != '-' && o->nmodels < MAX_ITEMS) {
			o->models[o->nmodels++] = a;
		} else {
			fprintf(stderr, "loom sweep: unknown or incomplete option '%s'\n", a);
			return -1;
		}
	}
	if (!o->nmodels) {
		fprintf(stderr, "loom sweep --validate: no model given\n");
		return -1;
	}
	if (!o->hwbuf[0])
		snprintf(o->hwbuf, sizeof o->hwbuf, "default");
	/* configurations are separated by ',' (or ';'); a part with '=' and no
	 * ':' continues the overrides of the one before
	 * (odd,default:array_rows=12,array_cols=20 is two) */
	char *p = o->hwbuf;
	o->hws[o->nhws++] = p;
	for (char *c = p; *c; c++) {
		if (*c != ',' && *c != ';')
			continue;
		size_t tl = strcspn(c + 1, ",;");
		if (*c == ',' && memchr(c + 1, '=', tl) && !memchr(c + 1, ':', tl))
			continue;
		*c = 0;
		if (o->nhws < MAX_ITEMS)
			o->hws[o->nhws++] = c + 1;
	}
	for (int h = 0; h < o->nhws; h++)
		if (tool_load_hw("sweep", o->hws[h], &(loom_hwcfg){0}))
			return -1;
	return 0;
}

static int ends_with(const char *s, const char *t)
{
	size_t a = strlen(s), b = strlen(t);
	return a >= b && !strcmp(s + a - b, t);
}

static void print_model(const val_cli *o, const loom_val_model *v)
{
	if (!o->quiet) {
		printf("%s on %s:\n", v->model, v->cfg);
		printf("  %4s %-36s %-8s %12s %12s %12s %8s %8s\n", "#", "layer", "kind", "estimate", "cmodel",
		       o->no_rtl ? "(no rtl)" : "rtl", "est%", "cm%");
		for (uint32_t l = 0; l < v->nlayers; l++) {
			const loom_val_layer *x = &v->layers[l];
			double ref = o->no_rtl ? (double)x->cm : (double)x->rtl;
			printf("  %4u %-36.36s %-8s %12.0f %12llu %12llu %+8.2f %+8.2f\n", l, x->name,
			       loom_layer_kind_name(x->kind), x->est, (unsigned long long)x->cm,
			       (unsigned long long)x->rtl, 100 * loom_val_err(x->est, ref),
			       100 * loom_val_err((double)x->cm, ref));
		}
	}
	const loom_val_sum *e = &v->est_err, *c = &v->cm_err;
	printf("%-44.44s %-8s %4u layers  est: median %5.2f%% worst %+7.2f%% (%-16.16s) whole %+6.2f%%", v->model,
	       v->cfg, v->nlayers, 100 * e->median, 100 * e->worst,
	       e->worst_layer >= 0 ? v->layers[e->worst_layer].name : "-", 100 * e->whole);
	if (!o->no_rtl)
		printf("  cmodel: median %5.2f%% worst %+7.2f%% whole %+6.2f%%", 100 * c->median, 100 * c->worst,
		       100 * c->whole);
	printf("  rtl %llu\n", (unsigned long long)(o->no_rtl ? v->cm : v->rtl));
}

static void write_csv(FILE *f, const val_cli *o, const loom_val_model *v)
{
	for (uint32_t l = 0; l <= v->nlayers; l++) {
		const loom_val_layer *x = l < v->nlayers ? &v->layers[l] : NULL;
		char idx[16];
		snprintf(idx, sizeof idx, "%u", l);
		double est = x ? x->est : v->est, cm = x ? (double)x->cm : (double)v->cm;
		double rtl = x ? (double)x->rtl : (double)v->rtl, ref = o->no_rtl ? cm : rtl;
		fprintf(f, "\"%s\",%s,%s,\"%s\",%s,%u,%.0f,%.0f,%.0f,%.3f,%.3f\n", v->model, v->cfg,
			x ? idx : "total", x ? x->name : "", x ? loom_layer_kind_name(x->kind) : "",
			x ? x->job : 0, est, cm, rtl, 100 * loom_val_err(est, ref), 100 * loom_val_err(cm, ref));
	}
}

/* the bounds: 0, or 1 after a FAIL line per bound exceeded */
static int check_bounds(const val_cli *o, const char *what, const loom_val_sum *s, int k)
{
	static const char *names[3] = {"median", "worst", "whole-model"};
	double got[3] = {100 * s->median, 100 * fabs(s->worst), 100 * fabs(s->whole)};
	int rc = 0;
	for (int j = 0; j < 3; j++)
		if (o->max[k][j] >= 0 && got[j] > o->max[k][j]) {
			printf("FAIL %s: %s %s |error| %.2f%% over the bound %.2f%%\n", what, k ? "C model" : "estimate",
			       names[j], got[j], o->max[k][j]);
			rc = 1;
		}
	return rc;
}

/* pooled over every run: every layer's (x, ref) pair */
typedef struct pool {
	double *x[2], *ref;
	size_t n, cap;
	double worst_whole[2];
} pool;

static void pool_add(pool *p, const val_cli *o, const loom_val_model *v)
{
	if (p->n + v->nlayers > p->cap) {
		size_t cap = 2 * (p->n + v->nlayers) + 64;
		double *a = realloc(p->x[0], cap * sizeof *a), *b = a ? realloc(p->x[1], cap * sizeof *b) : NULL;
		if (a)
			p->x[0] = a;
		if (b)
			p->x[1] = b;
		double *c = b ? realloc(p->ref, cap * sizeof *c) : NULL;
		if (!c)
			return;
		p->ref = c;
		p->cap = cap;
	}
	for (uint32_t l = 0; l < v->nlayers; l++, p->n++) {
		p->x[0][p->n] = v->layers[l].est;
		p->x[1][p->n] = (double)v->layers[l].cm;
		p->ref[p->n] = (double)(o->no_rtl ? v->layers[l].cm : v->layers[l].rtl);
	}
	if (fabs(v->est_err.whole) > fabs(p->worst_whole[0]))
		p->worst_whole[0] = v->est_err.whole;
	if (fabs(v->cm_err.whole) > fabs(p->worst_whole[1]))
		p->worst_whole[1] = v->cm_err.whole;
}

int sweep_validate_main(int argc, char **argv)
{
	val_cli o;
	if (parse(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	FILE *csv = NULL;
	if (o.csv) {
		if (!(csv = fopen(o.csv, "w"))) {
			fprintf(stderr, "loom sweep: %s: cannot write it\n", o.csv);
			return 2;
		}
		fprintf(csv, "model,config,index,layer,kind,job,est_cycles,cmodel_cycles,rtl_cycles,est_err_pct,"
			     "cmodel_err_pct\n");
	}
	loom_val_opts vo = {.calib_dir = o.calib, .no_rtl = o.no_rtl};
	pool pl;
	memset(&pl, 0, sizeof pl);
	int rc = 0, runs = 0;
	for (int i = 0; i < o.nmodels; i++) {
		int isl = ends_with(o.models[i], ".loom");
		for (int h = 0; h < (isl ? 1 : o.nhws); h++) {
			loom_val_model v;
			char err[2048];
			int r;
			if (isl) {
				loom_model *m = NULL;
				r = loom_model_read(o.models[i], NULL, &m, err, sizeof err);
				if (!r) {
					char *spec = malloc(4096);
					if (spec)
						tool_cfg_spec(&m->cfg, spec, 4096);
					r = spec ? loom_validate_model(m, spec, &vo, &v, err, sizeof err) : -1;
					free(spec);
					if (!r)
						snprintf(v.model, sizeof v.model, "%s", o.models[i]);
				}
				loom_model_free(m);
			} else {
				r = loom_validate_onnx(o.models[i], o.hws[h], &vo, &v, err, sizeof err);
			}
			if (r) {
				fprintf(stderr, "loom sweep: %s%s%s: %s\n", o.models[i], isl ? "" : " on ",
					isl ? "" : o.hws[h], err);
				rc = 1;
				continue;
			}
			print_model(&o, &v);
			fflush(stdout);
			if (csv)
				write_csv(csv, &o, &v);
			char what[400];
			snprintf(what, sizeof what, "%s on %s", v.model, v.cfg);
			rc |= check_bounds(&o, what, &v.est_err, 0);
			if (!o.no_rtl)
				rc |= check_bounds(&o, what, &v.cm_err, 1);
			pool_add(&pl, &o, &v);
			runs++;
			loom_val_model_free(&v);
		}
	}
	if (runs > 1 && pl.n) {
		loom_val_sum s[2];
		for (int k = 0; k < 2; k++)
			loom_val_summarize(pl.x[k], pl.ref, pl.n, &s[k]);
		printf("all %d runs, %zu layers  est: median %5.2f%% worst %+7.2f%% worst whole %+6.2f%%", runs, pl.n,
		       100 * s[0].median, 100 * s[0].worst, 100 * pl.worst_whole[0]);
		if (!o.no_rtl)
			printf("  cmodel: median %5.2f%% worst %+7.2f%% worst whole %+6.2f%%", 100 * s[1].median,
			       100 * s[1].worst, 100 * pl.worst_whole[1]);
		printf("\n");
	}
	free(pl.x[0]);
	free(pl.x[1]);
	free(pl.ref);
	if (csv && fclose(csv)) {
		fprintf(stderr, "loom sweep: %s: write failed\n", o.csv);
		rc = 1;
	}
	return rc;
}
