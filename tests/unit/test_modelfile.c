/* test_modelfile.c - unit tests of the .loom model file
 * (ir/modelfile.c, ir/model.h).
 *
 * A small model is built by hand: a graph of eight tensors (a const int64
 * shape, const int32 and uint8 tensors with data), two nodes lowered to the
 * NPU and two CPU nodes, one with an attribute of every type (a tensor
 * attribute included); device images, two layers, steps of every kind, ten
 * instructions, a const region and the "default" configuration. Then:
 *  - round trip: written, read back, every field compared;
 *  - the configuration check: reading with "small" fails naming array_rows,
 *    a configuration that differs only in dram_latency is accepted;
 *  - loom_mt_geom, loom_layer_kind_name, loom_model_dump's output;
 *  - invalid models (a field each: zp, stride, scale, address, insn range,
 *    step kind, tensor index, a step's dst, attribute type, dtype, region
 *    order, version (a version 1 file, of before the steps' dst),
 *    fingerprint, e_machine) are refused with a message naming it;
 *  - corruption: the file truncated at every length and 2000 random byte
 *    flips (fixed seed), plus 300 flips inside .loom.tensors: every read
 *    succeeds or fails with a message, never crashes (the ASan build runs
 *    this too); flips in the tensor table must be caught at least once.
 *
 * Prints a line per failed check and ends with "N passed, M failed"; exit
 * status 1 on any failure. */
#include "loom/hwcfg.h"
#include "ir/ir.h"
#include "loom/isa.h"
#include "ir/model.h"
#include "tools/cli.h"
#include "check.h"

#include <gelf.h>
#include <libelf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = xcalloc(strlen(s) + 1, 1);
	memcpy(p, s, strlen(s));
	return p;
}

static int must(int v)
{
	if (v < 0) {
		fprintf(stderr, "test setup failed\n");
		exit(2);
	}
	return v;
}

enum { T_X, T_C1, T_C2, T_SHAPE, T_FLAT, T_Y, T_IDX, T_BYTES, NT };
#define BASE 0x10000u
#define TEXT (BASE + 0x3080u) /* after two MARK records */

static loom_graph *build_graph(void)
{
	int64_t d4[4] = {1, 8, 4, 4}, d2[2] = {1, 128}, d1s[1] = {2}, d1i[1] = {3}, d1b[1] = {5};
	int64_t shape[2] = {1, 128};
	int32_t idx[3] = {-7, 0, 2147483647};
	uint8_t bytes[5] = {0, 1, 127, 128, 255};
	loom_graph *g = loom_graph_new(13, "tiny");
	if (!g)
		exit(2);
	must(loom_graph_add_tensor(g, "x", LOOM_DT_FLOAT, 4, d4, NULL, 0));
	must(loom_graph_add_tensor(g, "c1_out", LOOM_DT_FLOAT, 4, d4, NULL, 0));
	must(loom_graph_add_tensor(g, "c2_out", LOOM_DT_FLOAT, 4, d4, NULL, 0));
	must(loom_graph_add_tensor(g, "shape", LOOM_DT_INT64, 1, d1s, shape, 1));
	must(loom_graph_add_tensor(g, "flat", LOOM_DT_FLOAT, 2, d2, NULL, 0));
	must(loom_graph_add_tensor(g, "y", LOOM_DT_FLOAT, 2, d2, NULL, 0));
	must(loom_graph_add_tensor(g, "idx", LOOM_DT_INT32, 1, d1i, idx, 1));
	must(loom_graph_add_tensor(g, "bytes", LOOM_DT_UINT8, 1, d1b, bytes, 1));
	must(loom_graph_add_input(g, T_X));
	must(loom_graph_add_output(g, T_Y));
	must(loom_graph_add_output(g, T_C2));
	int o1 = T_C1, o2 = T_C2, rin[2] = {T_C2, T_SHAPE}, ro = T_FLAT, sin[3] = {T_FLAT, -1, T_IDX}, so = T_Y;
	must(loom_graph_add_node(g, LOOM_NPU_OP, "conv1", NULL, 0, &o1, 1));
	must(loom_graph_add_node(g, LOOM_NPU_OP, "add1", NULL, 0, &o2, 1));
	must(loom_graph_add_node(g, "Reshape", "Reshape_2", rin, 2, &ro, 1));
	must(loom_graph_add_node(g, "Softmax", "Softmax_3", sin, 3, &so, 1));
	loom_node *n = &g->nodes[3];
	float fl[3] = {1.5f, -0.0f, INFINITY};
	int64_t in[4] = {-1, 0, INT64_MAX, INT64_MIN};
	int64_t td[2] = {2, 2};
	float tv[4] = {1, 2, 3, 4};
	must(loom_node_set_attr_int(n, "axis", -1));
	must(loom_node_set_attr_float(n, "alpha", 0.25f));
	must(loom_node_set_attr_str(n, "mode", "exact"));
	must(loom_node_set_attr_floats(n, "scales", fl, 3));
	must(loom_node_set_attr_ints(n, "pads", in, 4));
	must(loom_node_set_attr_floats(n, "empty", NULL, 0));
	must(loom_node_set_attr_tensor(n, "value", LOOM_DT_FLOAT, 2, td, tv));
	/* STRINGS has no builder: by hand */
	loom_attr *na = realloc(n->attrs, sizeof *na * ((size_t)n->nattrs + 1));
	if (!na)
		exit(2);
	n->attrs = na;
	memset(&na[n->nattrs], 0, sizeof *na);
	na[n->nattrs].name = xstrdup("names");
	na[n->nattrs].type = LOOM_ATTR_STRINGS;
	na[n->nattrs].n = 2;
	na[n->nattrs].strings = xcalloc(2, sizeof(char *));
	na[n->nattrs].strings[0] = xstrdup("a b");
	na[n->nattrs].strings[1] = xstrdup("");
	n->nattrs++;
	free(g->nodes[2].domain);
	g->nodes[2].domain = xstrdup("ai.onnx");
	g->path = xstrdup("tiny.onnx");
	return g;
}

static loom_model *build_model(const loom_hwcfg *cfg)
{
	loom_model *m = xcalloc(1, sizeof *m);
	m->version = LOOM_MODEL_VERSION;
	m->cfg = *cfg;
	m->options = xstrdup("--quant minmax --calib samples/");
	m->source = xstrdup("models/tiny.onnx");
	m->graph = build_graph();
	m->base = BASE;
	m->const_base = BASE;
	m->const_bytes = 64;
	m->arena_base = BASE + 0x1000;
	m->arena_bytes = 0x2000;
	m->arena_bytes_noreuse = 0x3000;
	m->mark_base = BASE + 0x3000;
	m->text_base = TEXT;
	m->ninsn = 10;
	m->text_bytes = 10 * LOOM_INSN_BYTES;
	m->dram_end = TEXT + 0x140;

	m->mt = xcalloc(NT, sizeof *m->mt);
	for (int i = T_X; i <= T_C2; i++) {
		loom_mtensor *mt = &m->mt[i];
		mt->dev = 1;
		if (loom_mt_geom(4, m->graph->tensors[i].dims, &mt->h, &mt->w, &mt->c))
			exit(2);
		mt->stride = 8;
		mt->scale = 0.05f * (float)(i + 1);
		mt->zp = i == T_X ? -128 : 127;
		mt->addr = m->arena_base + 128u * (unsigned)i;
	}
	m->mt[T_X].host = 1;
	m->mt[T_C2].host = 1;
	m->mt[T_FLAT].host = 1;
	m->mt[T_Y].host = 1;
	m->mt[T_Y].scale = 1.0f; /* a host tensor's unused fields survive too */

	m->insn = xcalloc(m->ninsn, sizeof *m->insn);
	for (uint32_t i = 0; i < m->ninsn; i++) {
		loom_insn *in = &m->insn[i];
		if (i == 4 || i == 8) {
			loom_insn_set(in, LOOM_F_ANY_OPCODE, LOOM_OP_MARK);
			loom_insn_set(in, LOOM_F_MARK_MARK_ID, i / 4);
			loom_insn_set(in, LOOM_F_MARK_DRAM_ADDR, (uint32_t)m->mark_base + LOOM_MARK_BYTES * (i / 4 - 1));
		} else if (i == 9) {
			loom_insn_set(in, LOOM_F_ANY_OPCODE, LOOM_OP_FINISH);
		} else {
			loom_insn_set(in, LOOM_F_ANY_OPCODE, LOOM_OP_LOAD);
			loom_insn_set(in, LOOM_F_LOAD_DRAM_ADDR, (uint32_t)m->arena_base + 64 * i);
			loom_insn_set(in, LOOM_F_LOAD_MEM_ADDR, 16 * i);
			in->w[7] = 0xdeadbeefu ^ i; /* every word round-trips, reserved bits too */
		}
	}
	m->consts = xcalloc(m->const_bytes, 1);
	for (uint64_t i = 0; i < m->const_bytes; i++)
		m->consts[i] = (uint8_t)(i * 37 + 1);

	m->nlayers = 2;
	m->layers = xcalloc(2, sizeof *m->layers);
	loom_layer *l = &m->layers[0];
	l->kind = LOOM_LAYER_CONV;
	l->name = xstrdup("conv1");
	l->nodes[0] = 0, l->nodes[1] = l->nodes[2] = l->nodes[3] = -1;
	l->in[0] = T_X, l->in[1] = -1, l->out = T_C1;
	l->insn_first = 0, l->insn_count = 5, l->mark_id = 1;
	l->macs = 1ull << 40, l->est_cycles = 12345, l->dram_bytes = 4096;
	l->tile_h = 4, l->tile_w = 4, l->tile_c = 16, l->sp_bytes = 2048;
	l->const_off = 0, l->const_bytes = 48;
	l = &m->layers[1];
	l->kind = LOOM_LAYER_ELTWISE;
	l->name = xstrdup("add1");
	l->nodes[0] = 1, l->nodes[1] = 0, l->nodes[2] = l->nodes[3] = -1;
	l->in[0] = T_C1, l->in[1] = T_X, l->out = T_C2;
	l->insn_first = 5, l->insn_count = 4, l->mark_id = 2;
	l->macs = 128, l->est_cycles = 99, l->dram_bytes = 384;
	l->tile_h = 1, l->tile_w = 16, l->tile_c = 8, l->sp_bytes = 512;
	l->const_off = 48, l->const_bytes = 16;

	m->nsteps = 5;
	m->steps = xcalloc(5, sizeof *m->steps);
	m->steps[0] = (loom_step){.kind = LOOM_STEP_QUANT, .node = -1, .tensor = T_X, .dst = -1};
	m->steps[1] = (loom_step){.kind = LOOM_STEP_NPU, .node = -1, .tensor = -1, .layer = 0, .nlayers = 2,
				  .insn_addr = TEXT, .dst = -1};
	m->steps[2] = (loom_step){.kind = LOOM_STEP_DEQUANT, .node = -1, .tensor = T_C2, .dst = -1};
	m->steps[3] = (loom_step){.kind = LOOM_STEP_CPU, .node = 2, .tensor = -1, .dst = -1};
	m->steps[4] = (loom_step){.kind = LOOM_STEP_CPU, .node = 3, .tensor = -1, .dst = -1};
	return m;
}

/* ------------------------------------------------------------------ comparing */

#define DIFF(cond, ...)                                                                                                \
	do {                                                                                                           \
		if (cond) {                                                                                            \
			snprintf(why, wl, __VA_ARGS__);                                                                \
			return 0;                                                                                      \
		}                                                                                                      \
	} while (0)

static int str_eq(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static int tensor_eq(const loom_tensor *a, const loom_tensor *b, char *why, size_t wl)
{
	DIFF(!str_eq(a->name, b->name), "name");
	DIFF(a->dtype != b->dtype || a->rank != b->rank || a->is_const != b->is_const, "%s: dtype/rank/is_const",
	     a->name);
	DIFF(memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank), "%s: dims", a->name);
	DIFF(!a->data != !b->data, "%s: data presence", a->name);
	DIFF(a->data && memcmp(a->data, b->data, loom_tensor_bytes(a)), "%s: data", a->name);
	return 1;
}

static int attr_eq(const loom_attr *a, const loom_attr *b, char *why, size_t wl)
{
	DIFF(!str_eq(a->name, b->name) || a->type != b->type, "attribute %s: name/type", a->name);
	switch (a->type) {
	case LOOM_ATTR_FLOAT: DIFF(memcmp(&a->f, &b->f, sizeof a->f), "attribute %s", a->name); break;
	case LOOM_ATTR_INT: DIFF(a->i != b->i, "attribute %s", a->name); break;
	case LOOM_ATTR_STRING: DIFF(!str_eq(a->s, b->s), "attribute %s", a->name); break;
	case LOOM_ATTR_TENSOR:
		DIFF(!a->t || !b->t, "attribute %s: tensor missing", a->name);
		return tensor_eq(a->t, b->t, why, wl);
	case LOOM_ATTR_FLOATS:
		DIFF(a->n != b->n || memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n), "attribute %s",
		     a->name);
		break;
	case LOOM_ATTR_INTS:
		DIFF(a->n != b->n || memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n), "attribute %s", a->name);
		break;
	case LOOM_ATTR_STRINGS:
		DIFF(a->n != b->n, "attribute %s: count", a->name);
		for (int i = 0; i < a->n; i++)
			DIFF(!str_eq(a->strings[i], b->strings[i]), "attribute %s[%d]", a->name, i);
		break;
	default: DIFF(1, "attribute %s: type %d", a->name, a->type);
	}
	return 1;
}

static int ints_eq(const int *a, int na, const int *b, int nb) { return na == nb && !memcmp(a, b, sizeof(int) * (size_t)na); }

static int graph_eq(const loom_graph *a, const loom_graph *b, char *why, size_t wl)
{
	DIFF(!str_eq(a->name, b->name) || !str_eq(a->path, b->path) || a->opset != b->opset, "graph name/path/opset");
	DIFF(!ints_eq(a->inputs, a->ninputs, b->inputs, b->ninputs), "graph inputs");
	DIFF(!ints_eq(a->outputs, a->noutputs, b->outputs, b->noutputs), "graph outputs");
	DIFF(a->ntensors != b->ntensors || a->nnodes != b->nnodes, "tensor/node counts");
	for (int i = 0; i < a->ntensors; i++)
		if (!tensor_eq(&a->tensors[i], &b->tensors[i], why, wl))
			return 0;
	for (int k = 0; k < a->nnodes; k++) {
		const loom_node *x = &a->nodes[k], *y = &b->nodes[k];
		DIFF(!str_eq(x->name, y->name) || !str_eq(x->op_type, y->op_type) || !str_eq(x->domain, y->domain),
		     "node %d: name/op_type/domain", k);
		DIFF(!ints_eq(x->inputs, x->ninputs, y->inputs, y->ninputs), "node %d: inputs", k);
		DIFF(!ints_eq(x->outputs, x->noutputs, y->outputs, y->noutputs), "node %d: outputs", k);
		DIFF(x->nattrs != y->nattrs, "node %d: attribute count", k);
		for (int i = 0; i < x->nattrs; i++)
			if (!attr_eq(&x->attrs[i], &y->attrs[i], why, wl))
				return 0;
	}
	return 1;
}

static int model_eq(const loom_model *a, const loom_model *b, char *why, size_t wl)
{
	DIFF(a->version != b->version, "version");
	DIFF(memcmp(&a->cfg, &b->cfg, sizeof a->cfg), "cfg");
	DIFF(!str_eq(a->options, b->options) || !str_eq(a->source, b->source), "options/source");
	DIFF(a->base != b->base || a->text_base != b->text_base || a->text_bytes != b->text_bytes || a->const_base != b->const_base ||
		     a->const_bytes != b->const_bytes || a->arena_base != b->arena_base ||
		     a->arena_bytes != b->arena_bytes || a->mark_base != b->mark_base || a->dram_end != b->dram_end ||
		     a->arena_bytes_noreuse != b->arena_bytes_noreuse,
	     "DRAM map");
	if (!graph_eq(a->graph, b->graph, why, wl))
		return 0;
	for (int i = 0; i < a->graph->ntensors; i++) {
		const loom_mtensor *x = &a->mt[i], *y = &b->mt[i];
		DIFF(x->dev != y->dev || x->host != y->host || x->h != y->h || x->w != y->w || x->c != y->c ||
			     x->stride != y->stride || memcmp(&x->scale, &y->scale, sizeof x->scale) || x->zp != y->zp ||
			     x->addr != y->addr,
		     "mt[%d]", i);
	}
	DIFF(a->ninsn != b->ninsn || memcmp(a->insn, b->insn, sizeof *a->insn * a->ninsn), "instructions");
	DIFF(memcmp(a->consts, b->consts, (size_t)a->const_bytes), "consts");
	DIFF(a->nlayers != b->nlayers, "layer count");
	for (uint32_t i = 0; i < a->nlayers; i++) {
		const loom_layer *x = &a->layers[i], *y = &b->layers[i];
		DIFF(x->kind != y->kind || !str_eq(x->name, y->name) || memcmp(x->nodes, y->nodes, sizeof x->nodes) ||
			     x->in[0] != y->in[0] || x->in[1] != y->in[1] || x->out != y->out ||
			     x->insn_first != y->insn_first || x->insn_count != y->insn_count || x->mark_id != y->mark_id ||
			     x->macs != y->macs || x->est_cycles != y->est_cycles || x->dram_bytes != y->dram_bytes ||
			     x->tile_h != y->tile_h || x->tile_w != y->tile_w || x->tile_c != y->tile_c ||
			     x->sp_bytes != y->sp_bytes || x->const_off != y->const_off || x->const_bytes != y->const_bytes,
		     "layer %u", i);
	}
	DIFF(a->nsteps != b->nsteps, "step count");
	for (uint32_t i = 0; i < a->nsteps; i++) {
		const loom_step *x = &a->steps[i], *y = &b->steps[i];
		DIFF(x->kind != y->kind || x->node != y->node || x->tensor != y->tensor || x->layer != y->layer ||
			     x->nlayers != y->nlayers || x->insn_addr != y->insn_addr || x->dst != y->dst ||
			     memcmp(x->pad, y->pad, sizeof x->pad) || x->fill != y->fill,
		     "step %u", i);
	}
	return 1;
}

/* ------------------------------------------------------------------ helpers */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		exit(2);
	b = xcalloc((size_t)n + 1, 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n)
		exit(2);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* offset and size of a section, by name (libelf) */
static int find_section(uint8_t *buf, size_t len, const char *name, size_t *off, size_t *size)
{
	int rc = -1;
	size_t shstrndx;
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)buf, len);
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(s, &sh) && (nm = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(nm, name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			rc = 0;
		}
	}
out:
	if (e)
		elf_end(e);
	return rc;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* read a buffer: must succeed or fail with a message; dumps accepted ones */
static int try_read(const uint8_t *b, size_t len, const loom_hwcfg *cfg, FILE *null, int *bad_msg)
{
	char err[512];
	loom_model *m = NULL;
	err[0] = 0;
	int rc = loom_model_read_mem(b, len, "fuzz.loom", cfg, &m, err, sizeof err);
	if (rc == 0) {
		if (!m)
			*bad_msg = 1;
		loom_model_dump(m, null);
		loom_model_free(m);
	} else if (!err[0] || m) {
		*bad_msg = 1;
	}
	return rc;
}

/* ------------------------------------------------------------------ tests */

static void test_geom(void)
{
	uint32_t h, w, c;
	int64_t d4[4] = {1, 3, 5, 7}, d3[3] = {1, 6, 9}, d2[2] = {4, 10}, d1[1] = {11}, b4[4] = {2, 3, 5, 7};
	int64_t big[2] = {1, (int64_t)UINT32_MAX + 1}, neg[2] = {1, -1}, huge[3] = {1, UINT32_MAX, UINT32_MAX};
	CHECK(!loom_mt_geom(4, d4, &h, &w, &c) && h == 5 && w == 7 && c == 3, "geom rank 4");
	CHECK(!loom_mt_geom(3, d3, &h, &w, &c) && h == 1 && w == 9 && c == 6, "geom rank 3");
	CHECK(!loom_mt_geom(2, d2, &h, &w, &c) && h == 1 && w == 4 && c == 10, "geom rank 2");
	CHECK(!loom_mt_geom(1, d1, &h, &w, &c) && h == 1 && w == 1 && c == 11, "geom rank 1");
	CHECK(!loom_mt_geom(0, NULL, &h, &w, &c) && h == 1 && w == 1 && c == 1, "geom rank 0");
	CHECK(!loom_mt_geom(4, b4, &h, &w, &c) && h == 10 && w == 7 && c == 3, "geom batch 2: images stacked");
	CHECK(loom_mt_geom(5, b4, &h, &w, &c) == -1, "geom rank 5");
	CHECK(loom_mt_geom(2, big, &h, &w, &c) == -1, "geom dim > UINT32_MAX");
	CHECK(loom_mt_geom(2, neg, &h, &w, &c) == -1, "geom negative dim");
	CHECK(loom_mt_geom(3, huge, &h, &w, &c) == -1, "geom size overflow");
	CHECK(!strcmp(loom_layer_kind_name(LOOM_LAYER_LUT), "lut") && !loom_layer_kind_name(6) &&
		      !loom_layer_kind_name(-1),
	      "loom_layer_kind_name");
	loom_model_free(NULL);
}

/* the dump names what it should */
static void test_dump(const loom_model *m)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		exit(2);
	loom_model_dump(m, f);
	fclose(f);
	static const char *want[] = {
		"format version 2", "models/tiny.onnx", "--quant minmax", "default (fingerprint",
		"array_rows=16", "c1_out", "[1,8,4,4]", "4x4x8/8", "-128", "conv1", "eltwise", "12345 cycles",
		"quant   x -> dev", "npu     job layers 0..1 @0x13080", "dequant c2_out -> host",
		"cpu     Softmax_3 (Softmax)", "conv1:\n  00013080:  LOAD", "add1:\n  00013120:  LOAD",
		"00013100:  MARK", "000131a0:  FINISH",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(text && strstr(text, want[i]) != NULL, "dump shows '%s'", want[i]);
	if (getenv("TEST_MODELFILE_DUMP") && text)
		fputs(text, stdout);
	free(text);
}

/* A model changed by one field is refused with a message holding want. */
typedef void (*mutator)(loom_model *m);
static void mut_zp(loom_model *m) { m->mt[T_C1].zp = 200; }
static void mut_stride(loom_model *m) { m->mt[T_C1].stride = 6; }
static void mut_scale(loom_model *m) { m->mt[T_C1].scale = NAN; }
static void mut_addr(loom_model *m) { m->mt[T_C1].addr = m->dram_end - 8; }
static void mut_const_addr(loom_model *m) { m->mt[T_C2].addr = m->const_base + 16; /* 128 bytes: passes its end */ }
static void mut_insns(loom_model *m) { m->layers[1].insn_count = 6; }
static void mut_layer_host(loom_model *m) { m->layers[0].out = T_FLAT; }
static void mut_layer_kind(loom_model *m) { m->layers[1].kind = 6; }
static void mut_step_kind(loom_model *m) { m->steps[0].kind = 9; }
static void mut_step_layers(loom_model *m) { m->steps[1].nlayers = 3; }
static void mut_step_addr(loom_model *m) { m->steps[1].insn_addr = TEXT + 10 * 32; }
static void mut_step_npu(loom_model *m) { m->steps[3].node = 0; }
static void mut_step_quant(loom_model *m) { m->steps[0].tensor = T_Y; }
static void mut_step_pad(loom_model *m) { m->steps[2].pad[1] = 1; }
static void mut_node_input(loom_model *m) { m->graph->nodes[3].inputs[0] = 99; }
static void mut_attr_type(loom_model *m) { m->graph->nodes[3].attrs[1].type = 5; }
static void mut_dtype(loom_model *m) { m->graph->tensors[T_FLAT].dtype = 10; }
static void mut_dim(loom_model *m) { m->graph->tensors[T_FLAT].dims[1] = -5; }
static void mut_region(loom_model *m) { m->arena_base = m->const_base + 8; }
static void mut_text(loom_model *m) { m->text_base -= 64; }
static void mut_dram_end(loom_model *m) { m->dram_end = (uint64_t)m->cfg.dram_mib << 21; }
static void mut_cfg(loom_model *m) { m->cfg.fingerprint ^= 1; }

static void test_invalid(const loom_hwcfg *cfg, const char *path)
{
	static const struct {
		mutator fn;
		const char *want;
	} cases[] = {
		{mut_zp, ".loom.tensors: tensor 1 (c1_out): zp 200 is outside -128..127"},
		{mut_stride, "tensor 1 (c1_out): stride 6"},
		{mut_scale, "tensor 1 (c1_out): scale"},
		{mut_addr, "tensor 1 (c1_out): image at 0x131b8 (4 x 4 pixels of 8 bytes) is inside neither the arena"},
		{mut_const_addr, "tensor 2 (c2_out): image at 0x10010"},
		{mut_insns, ".loom.layers: layer 1 (add1): instructions [5, +6)"},
		{mut_layer_host, "layer 0 (conv1): out: tensor 4 (flat) has no device image"},
		{mut_layer_kind, "layer 1: kind 6 is not a layer kind"},
		{mut_step_kind, ".loom.steps: step 0: kind 9"},
		{mut_step_layers, "step 1 (npu): layers [0, +3)"},
		{mut_step_addr, "step 1 (npu): insn_addr 0x131c0"},
		{mut_step_npu, "step 3 (cpu): node 0 (conv1) is lowered to the NPU"},
		{mut_step_quant, "step 0 (quant): tensor 5 (y) has no device image"},
		{mut_step_pad, "step 2 (dequant): dst -1, pads 0 1 0 0, fill 0: expected -1, 0s and 0"},
		{mut_node_input, ".loom.graph: node 3 (Softmax_3): input[0] 99 is outside -1, 0..7"},
		{mut_attr_type, "node 3 (Softmax_3): attribute 'alpha': attribute type 5"},
		{mut_dtype, "tensor 4 (flat): dtype 10 (float16)"},
		{mut_dim, "tensor 4 (flat): dims[1] = -5 < 0"},
		{mut_region, ".note.loom: DRAM map: arena region at 0x10008 starts before 0x10040"},
		{mut_text, "DRAM map: text region at 0x13040 starts before 0x13080"},
		{mut_dram_end, "DRAM map: dram_end"},
		{mut_cfg, "fingerprint"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[512] = "";
		loom_model *m = build_model(cfg), *r = NULL;
		cases[i].fn(m);
		int wr = loom_model_write(m, path, err, sizeof err);
		CHECK(wr == 0, "invalid case %zu: write: %s", i, err);
		int rc = loom_model_read(path, NULL, &r, err, sizeof err);
		CHECK(rc == -1 && !r && strstr(err, cases[i].want) && !strncmp(err, path, strlen(path)),
		      "invalid case %zu: want '%s', got %d '%s'", i, cases[i].want, rc, err);
		loom_model_free(r);
		loom_model_free(m);
	}
}

/* Byte patches of a valid file: ELF header and notes. */
static void test_patches(const uint8_t *file, size_t len)
{
	static const uint8_t vnote[] = {5, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0x4f, 0x4c, 'L', 'o', 'o', 'm', 0, 0, 0, 0};
	uint8_t *b = xcalloc(len, 1);
	char err[512];
	loom_model *m = NULL;
	struct {
		size_t off;
		uint8_t val;
		const char *want;
	} p[4] = {
		{18, 0xf3, "e_machine is 243"},
		{4, ELFCLASS32, "ELFCLASS64"},
		{5, ELFDATA2MSB, "little endian"},
		{0, 0, "format version 1, this loom reads version 2"}, /* a file of before the steps' dst */
	};
	for (size_t i = 0; i + sizeof vnote + 4 <= len; i++)
		if (!memcmp(file + i, vnote, sizeof vnote) && file[i + sizeof vnote] == LOOM_MODEL_VERSION) {
			p[3].off = i + sizeof vnote;
			p[3].val = 1;
		}
	CHECK(p[3].val == 1 && LOOM_MODEL_VERSION == 2, "version note found in the file");
	for (size_t i = 0; i < 4; i++) {
		memcpy(b, file, len);
		b[p[i].off] = p[i].val;
		err[0] = 0;
		int rc = loom_model_read_mem(b, len, "p.loom", NULL, &m, err, sizeof err);
		CHECK(rc == -1 && !m && strstr(err, p[i].want) && !strncmp(err, "p.loom: ", 8), "patch %zu: want '%s', got '%s'",
		      i, p[i].want, err);
	}
	/* the fingerprint text */
	const char *fp = "fingerprint=0x";
	int found = 0;
	for (size_t i = 0; i + strlen(fp) + 1 < len; i++)
		if (!memcmp(file + i, fp, strlen(fp))) {
			memcpy(b, file, len);
			b[i + strlen(fp)] = b[i + strlen(fp)] == '0' ? '1' : '0';
			int rc = loom_model_read_mem(b, len, "p.loom", NULL, &m, err, sizeof err);
			CHECK(rc == -1 && strstr(err, "does not match"), "fingerprint patch: got '%s'", err);
			found = 1;
		}
	CHECK(found, "fingerprint found in the note");
	free(b);
}

static void test_corrupt(const uint8_t *file, size_t len, const loom_hwcfg *cfg)
{
	FILE *null = fopen("/dev/null", "w");
	uint8_t *b = xcalloc(len, 1);
	int bad_msg = 0, ok_trunc = 0;
	unsigned fails = 0, n = 0;
	if (!null)
		exit(2);
	for (size_t l = 0; l < len; l++) {
		memcpy(b, file, l);
		if (try_read(b, l, cfg, null, &bad_msg) == 0)
			ok_trunc++;
	}
	CHECK(!bad_msg, "truncation: every failure has a message");
	CHECK(!ok_trunc, "truncation: %d truncated files accepted", ok_trunc);

	bad_msg = 0;
	for (int i = 0; i < 2000; i++) {
		memcpy(b, file, len);
		size_t at = rnd() % len;
		uint8_t x = (uint8_t)(rnd() % 255 + 1);
		b[at] ^= x;
		fails += try_read(b, len, cfg, null, &bad_msg) != 0;
	}
	CHECK(!bad_msg, "2000 flips: every read succeeds or fails with a message");
	CHECK(fails > 0, "2000 flips: %u refused", fails);
	if (getenv("TEST_MODELFILE_DUMP"))
		printf("%zu bytes, 2000 flips: %u refused\n", len, fails);

	size_t off = 0, size = 0;
	memcpy(b, file, len);
	CHECK(find_section(b, len, ".loom.tensors", &off, &size) == 0 && size > 0 && off + size <= len,
	      ".loom.tensors found");
	bad_msg = 0;
	fails = 0;
	for (int i = 0; size && i < 300; i++, n++) {
		memcpy(b, file, len);
		b[off + rnd() % size] ^= (uint8_t)(rnd() % 255 + 1);
		fails += try_read(b, len, cfg, null, &bad_msg) != 0;
	}
	CHECK(!bad_msg, "tensor table flips: every read succeeds or fails with a message");
	CHECK(fails > 0, "tensor table flips: %u of %u refused", fails, n);
	if (getenv("TEST_MODELFILE_DUMP"))
		printf("tensor table flips: %u of %u refused\n", fails, n);
	fclose(null);
	free(b);
}

/* Where a write may go: a device is written in place and never removed
 * (a failed write to /dev/full leaves /dev/full, /dev/null stays a device);
 * a regular file is replaced only by a complete file. */
static void test_write_targets(const loom_model *m, const char *path)
{
	char err[512] = "";
	struct stat st;
	CHECK(loom_model_write(m, "/dev/full", err, sizeof err) == -1 && strstr(err, "/dev/full"),
	      "write to /dev/full: want an error naming it, got '%s'", err);
	CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is no longer a device after a failed write");
	CHECK(loom_model_write(m, "/dev/null", err, sizeof err) == 0, "write to /dev/null: %s", err);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is no longer a device after a write");
	err[0] = 0;
	CHECK(loom_model_write(m, "/nonexistent/dir/x.loom", err, sizeof err) == -1 &&
		      strstr(err, "/nonexistent/dir/x.loom"),
	      "write into a missing folder: want an error naming the path, got '%s'", err);
	mode_t um = umask(0);
	umask(um);
	CHECK(loom_model_write(m, path, err, sizeof err) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		      (st.st_mode & 0777) == (0644 & ~um),
	      "rewrite of %s: %s (mode %o)", path, err, (unsigned)st.st_mode);
}

int main(void)
{
	check_init(CHECK_QUIET);
	char err[512], path[] = "/tmp/test_modelfile_XXXXXX";
	loom_hwcfg cfg, small, slow;
	int fd = mkstemp(path);
	if (fd < 0)
		return 2;
	close(fd);
	if (loom_hwcfg_load(&cfg, "default", NULL, err, sizeof err) ||
	    loom_hwcfg_load(&small, "small", NULL, err, sizeof err) ||
	    loom_hwcfg_load(&slow, "default:dram_latency=999,dram_bw=1", NULL, err, sizeof err)) {
		printf("FAIL config: %s\n", err);
		return 1;
	}
	test_geom();

	loom_model *m = build_model(&cfg), *r = NULL;
	int rc = loom_model_write(m, path, err, sizeof err);
	CHECK(rc == 0, "write: %s", err);
	rc = loom_model_read(path, &cfg, &r, err, sizeof err);
	CHECK(rc == 0 && r, "read: %s", err);
	if (r) {
		char why[256] = "";
		CHECK(model_eq(m, r, why, sizeof why), "round trip: %s differs", why);
		test_dump(r);
	}
	loom_model_free(r);
	r = NULL;

	rc = loom_model_read(path, &small, &r, err, sizeof err);
	char want[600];
	snprintf(want, sizeof want, "%s compiled for array_rows = 16, configuration 'small' has array_rows = 8", path);
	CHECK(rc == -1 && !r && !strcmp(err, want), "read with 'small': got '%s'", err);
	CHECK(loom_model_check_cfg(m, &small, err, sizeof err) == -1 && strstr(err, "array_rows = 16"),
	      "loom_model_check_cfg with 'small': %s", err);
	CHECK(loom_model_check_cfg(m, &slow, err, sizeof err) == 0, "dram_latency / dram_bw are not compared: %s", err);
	rc = loom_model_read(path, &slow, &r, err, sizeof err);
	CHECK(rc == 0 && r, "read with another dram_latency: %s", err);
	loom_model_free(r);
	r = NULL;
	CHECK(loom_model_read("/nonexistent/x.loom", NULL, &r, err, sizeof err) == -1 && strstr(err, "/nonexistent/x.loom"),
	      "missing file: %s", err);

	size_t len;
	uint8_t *file = slurp(path, &len);
	test_patches(file, len);
	test_corrupt(file, len, &cfg);
	free(file);

	test_invalid(&cfg, path);
	test_write_targets(m, path);
	if (getenv("TEST_MODELFILE_KEEP") && loom_model_write(m, getenv("TEST_MODELFILE_KEEP"), err, sizeof err))
		printf("FAIL keep: %s\n", err);
	loom_model_free(m);
	unlink(path);
	return check_report();
}
