/* prep.c - what loom sweep does once per model (sweep.h): the work that
 * does not depend on the design point. One compile (import,
 * simplification, calibration, quantization, lowering: loom_compile) gives
 * every NPU layer's kernel parameters (loom_compile_report.layers) and
 * every node's MACs and placement; eval.c re-plans the layers for each
 * point. The compile runs on the base configuration with the largest
 * scratchpad and accumulator the parameter ranges allow, so a layer that
 * some configuration can tile is an NPU layer here; a point whose
 * scratchpad is too small for it then reports the fallback.
 *
 * DIR/models/NAME.prep holds the result (text, one line per node and per
 * layer) under the model's key, a hash of loom itself, the model file, the
 * calibration files and the calibration options: a second sweep, or a
 * worker on another machine (--run-point), reads it instead of compiling. A
 * copy goes to the user's cache (loom compile's: $LOOM_CACHE_DIR, else
 * $XDG_CACHE_HOME/loom, else ~/.cache/loom; sweep-prep/KEY.prep), so a new
 * sweep of the same model into another directory skips the calibration.
 * The calibration itself stays in memory (sweep_prep.calib) for the full
 * compiles of --rtl points in the same process. */
#include "sweep/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/onnx.h"

/* ------------------------------------------------------------------ hashing */

void sweep_hash_init(sweep_hash *h)
{
	h->a = 0xcbf29ce484222325ull;
	h->b = 0x84222325cbf29ce4ull;
}

/* two 64-bit lanes, eight bytes a step (a model file is 100 MB), the tail
 * a byte a step */
void sweep_hash_bytes(sweep_hash *h, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h->a = (h->a ^ w) * 0x100000001b3ull;
		h->a ^= h->a >> 32;
		h->b = (h->b ^ w) * 0x9e3779b97f4a7c15ull;
		h->b ^= h->b >> 29;
	}
	for (; i < n; i++) {
		h->a = (h->a ^ s[i]) * 0x100000001b3ull;
		h->b = (h->b ^ s[i]) * 0x100000001b3ull;
		h->b ^= h->b >> 29;
	}
}

void sweep_hash_str(sweep_hash *h, const char *s) { sweep_hash_bytes(h, s, strlen(s) + 1); }

void sweep_hash_hex(const sweep_hash *h, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h->a, (unsigned long long)h->b);
}

static int hash_file(sweep_hash *h, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint8_t buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sweep_hash_bytes(h, buf, n);
	int bad = ferror(f);
	fclose(f);
	return bad ? -1 : 0;
}

/* the .pb files under dir (three levels), in name order, with their names */
static int hash_tree(sweep_hash *h, const char *dir, int depth)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && !rc) {
			char p[4096];
			struct stat st;
			snprintf(p, sizeof p, "%s/%s", dir, ents[i]->d_name);
			if (!stat(p, &st) && S_ISDIR(st.st_mode) && depth < 3) {
				sweep_hash_str(h, ents[i]->d_name);
				rc = hash_tree(h, p, depth + 1);
			} else if (!stat(p, &st) && S_ISREG(st.st_mode) && strstr(p, ".pb")) {
				sweep_hash_str(h, ents[i]->d_name);
				rc = hash_file(h, p);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int sweep_model_keys(sweep_spec *s, char *err, size_t len)
{
	char exe[4096];
	ssize_t en = readlink("/proc/self/exe", exe, sizeof exe - 1);
	sweep_hash base;
	sweep_hash_init(&base);
	sweep_hash_str(&base, "loom sweep v1");
	if (en > 0) {
		exe[en] = 0;
		hash_file(&base, exe);
	}
	char opt[128];
	snprintf(opt, sizeof opt, "method=%d pct=%.17g", s->calib_method, s->percentile);
	sweep_hash_str(&base, opt);
	for (int m = 0; m < s->nmodels; m++) {
		sweep_hash h = base;
		if (hash_file(&h, s->models[m].path)) {
			snprintf(err, len, "%s: %s", s->models[m].path, strerror(errno));
			return -1;
		}
		sweep_hash_str(&h, s->models[m].calib[0] ? "calib" : "random");
		if (s->models[m].calib[0] && hash_tree(&h, s->models[m].calib, 0)) {
			snprintf(err, len, "--calib %s: cannot read the folder", s->models[m].calib);
			return -1;
		}
		sweep_hash_hex(&h, s->models[m].key);
	}
	return 0;
}

/* ------------------------------------------------------------------ the compile */

/* the base configuration with the largest scratchpad, accumulator and DRAM */
static int prep_config(const sweep_spec *s, loom_hwcfg *cfg, char *err, size_t len)
{
	if (loom_hwcfg_load(cfg, s->base, NULL, err, len))
		return -1;
	loom_hwcfg big = *cfg;
	uint64_t unit = (uint64_t)big.array_rows * big.sp_banks, lines = 1;
	while (unit * lines * 2 <= 16777216)
		lines *= 2;
	big.sp_bytes = (uint32_t)(unit * lines);
	uint64_t acc_lines = 16777216 / (4ull * big.array_cols);
	big.acc_bytes = (uint32_t)(4ull * big.array_cols * (acc_lines > 65536 ? 65536 : acc_lines));
	big.dram_mib = 2048;
	char e2[256];
	if (!loom_hwcfg_finish(&big, e2, sizeof e2)) {
		snprintf(big.name, sizeof big.name, "custom-%08x", big.fingerprint);
		*cfg = big;
	}
	return 0;
}

static void clean_name(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src && *src ? src : "-");
	for (char *c = dst; *c; c++)
		if (*c == '\n' || *c == '\t' || *c == '\r')
			*c = '_';
}

static int prep_compile(const sweep_spec *s, int mi, int keep_calib, sweep_prep *p, char *err, size_t len)
{
	const sweep_model *sm = &s->models[mi];
	loom_hwcfg cfg;
	if (prep_config(s, &cfg, err, len))
		return -1;
	loom_graph *g = NULL;
	if (loom_onnx_load(sm->path, NULL, 0, &g, err, len))
		return -1;
	loom_calib *cal = NULL;
	loom_compile_opts o = {
		.calib_dir = sm->calib[0] ? sm->calib : NULL,
		.calib_method = s->calib_method,
		.percentile = s->percentile,
		.options = "loom sweep",
		.source = sm->path,
		.calib_out = &cal,
	};
	loom_model *m = NULL;
	loom_compile_report rep;
	char e2[1024];
	if (loom_compile(g, &cfg, &o, &m, &rep, e2, sizeof e2)) {
		snprintf(err, len, "%s: %s", sm->path, e2);
		return -1;
	}
	int rc = -1;
	p->nnodes = rep.nnodes;
	p->nlayers = rep.nlayers;
	p->nodes = calloc((size_t)rep.nnodes + 1, sizeof *p->nodes);
	p->layers = calloc((size_t)rep.nlayers + 1, sizeof *p->layers);
	if (!p->nodes || !p->layers || (uint32_t)rep.nlayers != m->nlayers) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	for (int i = 0; i < rep.nnodes; i++) {
		clean_name(p->nodes[i].name, sizeof p->nodes[i].name, rep.nodes[i].name);
		clean_name(p->nodes[i].op, sizeof p->nodes[i].op, rep.nodes[i].op_type);
		p->nodes[i].where = rep.nodes[i].where;
		p->nodes[i].macs = rep.nodes[i].macs;
	}
	for (int i = 0; i < rep.nlayers; i++) {
		sweep_layer *l = &p->layers[i];
		clean_name(l->name, sizeof l->name, m->layers[i].name);
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
			l->nodes[k] = m->layers[i].nodes[k] < rep.nnodes ? m->layers[i].nodes[k] : -1;
		l->k = rep.layers[i];
	}
	for (uint32_t s = 0; s < m->nsteps; s++)
		if (m->steps[s].kind == LOOM_STEP_NPU && m->steps[s].layer < (uint32_t)rep.nlayers)
			p->layers[m->steps[s].layer].job_start = 1;
	p->dram_bytes = m->const_bytes + m->arena_bytes;
	p->calib_samples = rep.calib_samples;
	p->calib_random = rep.calib_random;
	if (keep_calib) {
		p->calib = cal;
		cal = NULL;
	}
	rc = 0;
out:
	loom_calib_free(cal);
	loom_compile_report_free(&rep);
	loom_model_free(m);
	return rc;
}

/* ------------------------------------------------------------------ the file */

static void write_layer(FILE *f, const sweep_layer *l)
{
	const loom_layer_kparams *k = &l->k;
	fprintf(f, "layer %d %d %d %d %d %d %d", k->kind, k->node, l->nodes[0], l->nodes[1], l->nodes[2], l->nodes[3],
		l->job_start);
	if (k->kind == LOOM_LAYER_CONV || k->kind == LOOM_LAYER_GEMM) {
		const loom_conv_params *c = &k->cp;
		fprintf(f, " %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %d %d %d %d %d %d", c->h, c->w, c->cin,
			c->cout, c->in_stride, c->out_stride, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pad_top,
			c->pad_bottom, c->pad_left, c->pad_right, c->in_zp, c->out_zp, c->clip_lo, c->clip_hi, c->raw, c->res);
	} else {
		const loom_vec_params *v = &k->vp;
		fprintf(f, " %d %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %d %d %d %d %d %d %d %d %d %d %d %u %u",
			v->kind, v->h, v->w, v->c, v->in_stride, v->in2_stride, v->out_stride, v->kh, v->kw, v->sh, v->sw,
			v->dh, v->dw, v->pad_top, v->pad_bottom, v->pad_left, v->pad_right, v->func, v->bcast, v->in_zp,
			v->in2_zp, v->out_zp, v->clip_lo, v->clip_hi, v->mult, v->shift, v->mult_a, v->mult_b, v->in_align,
			v->out_align);
	}
	fprintf(f, " %s\n", l->name);
}

static int prep_write(const char *path, const sweep_prep *p, char *err, size_t len)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, len, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "loom-sweep-prep 4\nkey %s\ndram_bytes %" PRIu64 "\ncalib %d %d\n", p->key, p->dram_bytes,
		p->calib_samples, p->calib_random);
	for (int i = 0; i < p->nnodes; i++)
		fprintf(f, "node %d %" PRIu64 " %s %s\n", p->nodes[i].where, p->nodes[i].macs, p->nodes[i].op,
			p->nodes[i].name);
	for (int i = 0; i < p->nlayers; i++)
		write_layer(f, &p->layers[i]);
	if (fclose(f) || rename(tmp, path)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

/* one "layer ..." line (after "layer "): 0 or -1 */
static int read_layer(const char *v, sweep_layer *l)
{
	loom_layer_kparams *k = &l->k;
	int n = 0, m = 0;
	memset(l, 0, sizeof *l);
	if (sscanf(v, "%d %d %d %d %d %d %d%n", &k->kind, &k->node, &l->nodes[0], &l->nodes[1], &l->nodes[2],
		   &l->nodes[3], &l->job_start, &n) != 7)
		return -1;
	v += n;
	int i8[12];
	if (k->kind == LOOM_LAYER_CONV || k->kind == LOOM_LAYER_GEMM) {
		loom_conv_params *c = &k->cp;
		if (sscanf(v, " %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %d %d %d %d %d %d%n", &c->h, &c->w,
			   &c->cin, &c->cout, &c->in_stride, &c->out_stride, &c->kh, &c->kw, &c->sh, &c->sw, &c->dh, &c->dw,
			   &c->pad_top, &c->pad_bottom, &c->pad_left, &c->pad_right, &i8[0], &i8[1], &i8[2], &i8[3],
			   &c->raw, &c->res, &m) != 22)
			return -1;
		c->in_zp = (int8_t)i8[0], c->out_zp = (int8_t)i8[1], c->clip_lo = (int8_t)i8[2], c->clip_hi = (int8_t)i8[3];
	} else if (k->kind >= LOOM_LAYER_POOL && k->kind <= LOOM_LAYER_LUT) {
		loom_vec_params *p = &k->vp;
		if (sscanf(v, " %d %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %d %d %d %d %d %d %d %d %d %d %d %u %u%n",
			   &p->kind, &p->h, &p->w, &p->c, &p->in_stride, &p->in2_stride, &p->out_stride, &p->kh, &p->kw,
			   &p->sh, &p->sw, &p->dh, &p->dw, &p->pad_top, &p->pad_bottom, &p->pad_left, &p->pad_right,
			   &p->func, &p->bcast, &i8[0], &i8[1], &i8[2], &i8[3], &i8[4], &p->mult, &p->shift, &p->mult_a,
			   &p->mult_b, &p->in_align, &p->out_align, &m) != 30)
			return -1;
		p->in_zp = (int8_t)i8[0], p->in2_zp = (int8_t)i8[1], p->out_zp = (int8_t)i8[2];
		p->clip_lo = (int8_t)i8[3], p->clip_hi = (int8_t)i8[4];
	} else {
		return -1;
	}
	v += m;
	snprintf(l->name, sizeof l->name, "%s", *v == ' ' ? v + 1 : "-");
	return 0;
}

/* one "node WHERE MACS OP NAME" line (after "node "): 0 or -1 */
static int read_node(const char *v, sweep_node *n)
{
	int k = 0;
	if (sscanf(v, "%d %" SCNu64 " %31s %n", &n->where, &n->macs, n->op, &k) != 3 || !k)
		return -1;
	snprintf(n->name, sizeof n->name, "%s", v + k);
	return 0;
}

static int grow(void **a, int n, int *cap, size_t el)
{
	if (n < *cap)
		return 0;
	int c = *cap ? 2 * *cap : 64;
	void *p = realloc(*a, (size_t)c * el);
	if (!p)
		return -1;
	*a = p;
	*cap = c;
	return 0;
}

/* 0: read, 1: absent or another key, -1: damaged */
static int prep_read(const char *path, const char *key, sweep_prep *p)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	char line[2048];
	int ln = 0, bad = 0, capn = 0, capl = 0;
	while (!bad && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *v = strchr(line, ' ');
		if (!v) {
			bad = -1;
			break;
		}
		*v++ = 0;
		if (ln++ == 0)
			bad = strcmp(line, "loom-sweep-prep") || strcmp(v, "4") ? -1 : 0;
		else if (!strcmp(line, "key"))
			bad = strcmp(v, key) ? 1 : 0;
		else if (!strcmp(line, "dram_bytes"))
			p->dram_bytes = strtoull(v, NULL, 10);
		else if (!strcmp(line, "calib"))
			bad = sscanf(v, "%d %d", &p->calib_samples, &p->calib_random) == 2 ? 0 : -1;
		else if (!strcmp(line, "node"))
			bad = grow((void **)&p->nodes, p->nnodes, &capn, sizeof *p->nodes) ||
					      read_node(v, &p->nodes[p->nnodes++]) ? -1 : 0;
		else if (!strcmp(line, "layer"))
			bad = grow((void **)&p->layers, p->nlayers, &capl, sizeof *p->layers) ||
					      read_layer(v, &p->layers[p->nlayers++]) ? -1 : 0;
		else
			bad = -1;
	}
	fclose(f);
	for (int i = 0; !bad && i < p->nlayers; i++)
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
			if (p->layers[i].nodes[k] >= p->nnodes || p->layers[i].k.node >= p->nnodes)
				bad = -1;
	if (!bad && ln < 4)
		bad = -1;
	if (bad) {
		sweep_prep_free(p);
		return bad;
	}
	snprintf(p->key, sizeof p->key, "%s", key);
	return 0;
}

void sweep_prep_free(sweep_prep *p)
{
	free(p->nodes);
	free(p->layers);
	loom_calib_free(p->calib);
	memset(p, 0, sizeof *p);
}

/* the user's cache of preparations (made when missing): 0, or -1 without one */
static int cache_path(const char *key, char *buf, size_t len)
{
	const char *d = getenv("LOOM_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	char dir[3000];
	if (d && *d)
		snprintf(dir, sizeof dir, "%s", d);
	else if (x && *x)
		snprintf(dir, sizeof dir, "%s/loom", x);
	else if (h && *h)
		snprintf(dir, sizeof dir, "%s/.cache/loom", h);
	else
		return -1;
	for (char *c = dir + 1; *c; c++)
		if (*c == '/') {
			*c = 0;
			mkdir(dir, 0755);
			*c = '/';
		}
	mkdir(dir, 0755);
	size_t n = strlen(dir);
	snprintf(dir + n, sizeof dir - n, "/sweep-prep");
	mkdir(dir, 0755);
	snprintf(buf, len, "%s/%s.prep", dir, key);
	return 0;
}

int sweep_prep_get(const char *dir, const sweep_spec *s, int m, int keep_calib, sweep_prep *p, char *err,
		   size_t len)
{
	char path[4096], cached[4096];
	memset(p, 0, sizeof *p);
	snprintf(path, sizeof path, "%s/models", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof path, "%s/models/%s.prep", dir, s->models[m].name);
	int have_cache = !cache_path(s->models[m].key, cached, sizeof cached);
	if (!keep_calib && prep_read(path, s->models[m].key, p) == 0)
		return 0;
	if (!keep_calib && have_cache && prep_read(cached, s->models[m].key, p) == 0) {
		p->from_cache = 1;
		return prep_write(path, p, err, len);
	}
	if (prep_compile(s, m, keep_calib, p, err, len))
		return -1;
	snprintf(p->key, sizeof p->key, "%s", s->models[m].key);
	p->compiled = 1;
	char e2[256];
	if (have_cache)
		prep_write(cached, p, e2, sizeof e2);
	return prep_write(path, p, err, len);
}
