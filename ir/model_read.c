/* model_read.c - reading and validating a .loom ELF file (loom_model_read,
 * loom_model_read_mem, loom_model_check_cfg; the format is described in
 * modelfile.c). The reader trusts nothing: every count, index, enum and
 * address is checked and a failure names the file, section and item. */
#include "ir/modelfile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ reading */

/* A cursor over one section's bytes; errors name the file, the section and
 * the item being read (where). */
typedef struct rd {
	const uint8_t *p;
	size_t len, pos;
	const char *file, *sec;
	char where[192];
	char *err;
	size_t errlen;
} rd;

static int rfail(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rfail(rd *r, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r->where[0])
		return mf_fail(r->err, r->errlen, "%s: %s: %s: %s", r->file, r->sec, r->where, msg);
	return mf_fail(r->err, r->errlen, "%s: %s: %s", r->file, r->sec, msg);
}

static void rwhere(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rwhere(rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->where, sizeof r->where, fmt, ap);
	va_end(ap);
}

static size_t rleft(const rd *r) { return r->len - r->pos; }

static int r_le(rd *r, uint64_t *v, unsigned n, const char *what)
{
	if (rleft(r) < n)
		return rfail(r, "truncated: %s needs %u bytes at offset %zu, %zu left", what, n, r->pos, rleft(r));
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)r->p[r->pos + i] << (8 * i);
	r->pos += n;
	*v = x;
	return 0;
}

static int r_u32(rd *r, uint32_t *v, const char *what)
{
	uint64_t x = 0;
	if (r_le(r, &x, 4, what))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int r_i32(rd *r, int32_t *v, const char *what)
{
	uint32_t x = 0;
	if (r_u32(r, &x, what))
		return -1;
	*v = (int32_t)x;
	return 0;
}

static int r_u64(rd *r, uint64_t *v, const char *what) { return r_le(r, v, 8, what); }

static int r_i64(rd *r, int64_t *v, const char *what)
{
	uint64_t x = 0;
	if (r_le(r, &x, 8, what))
		return -1;
	*v = (int64_t)x;
	return 0;
}

static int r_f32(rd *r, float *f, const char *what)
{
	uint32_t x = 0;
	if (r_u32(r, &x, what))
		return -1;
	memcpy(f, &x, sizeof *f);
	return 0;
}

/* a 0/1 flag */
static int r_bool(rd *r, int *v, const char *what)
{
	uint64_t x = 0;
	if (r_le(r, &x, 1, what))
		return -1;
	if (x > 1)
		return rfail(r, "%s is %u, expected 0 or 1", what, (unsigned)x);
	*v = (int)x;
	return 0;
}

/* A count of items of at least min_each bytes each: never more than the
 * bytes left can hold (no allocation a corrupted count could inflate). */
static int r_count(rd *r, int *n, size_t min_each, const char *what)
{
	uint32_t v;
	if (r_u32(r, &v, what))
		return -1;
	if (v > INT_MAX || (min_each && v > rleft(r) / min_each))
		return rfail(r, "%s %u is more than the %zu bytes left can hold", what, v, rleft(r));
	*n = (int)v;
	return 0;
}

/* A string: *s is NULL (length STR_NULL) or a NUL-terminated copy. */
static int r_str(rd *r, char **s, const char *what)
{
	uint32_t n;
	*s = NULL;
	if (r_u32(r, &n, what))
		return -1;
	if (n == STR_NULL)
		return 0;
	if (n > rleft(r))
		return rfail(r, "%s: length %u passes the end of the section (%zu bytes left)", what, n, rleft(r));
	if (memchr(r->p + r->pos, 0, n))
		return rfail(r, "%s: NUL byte inside the string", what);
	char *p = malloc((size_t)n + 1);
	if (!p)
		return rfail(r, "%s: out of memory", what);
	memcpy(p, r->p + r->pos, n);
	p[n] = 0;
	r->pos += n;
	*s = p;
	return 0;
}

/* a string that must be present */
static int r_name(rd *r, char **s, const char *what)
{
	if (r_str(r, s, what))
		return -1;
	if (!*s)
		return rfail(r, "%s is missing (NULL)", what);
	return 0;
}

static int r_end(rd *r)
{
	r->where[0] = 0;
	if (r->pos != r->len)
		return rfail(r, "%zu trailing bytes after offset %zu", rleft(r), r->pos);
	return 0;
}

/* tensor index: -1 allowed when opt */
static int r_index(rd *r, int *v, int n, int opt, const char *what)
{
	int32_t x = 0;
	if (r_i32(r, &x, what))
		return -1;
	if (x < (opt ? -1 : 0) || x >= n)
		return rfail(r, "%s %d is outside %s0..%d", what, x, opt ? "-1, " : "", n - 1);
	*v = x;
	return 0;
}


/* A tensor's head (from r) and values (from data, which may be r); label
 * names it in messages ("tensor 12"), completed with its name once read. */
static int r_tensor(rd *r, rd *data, loom_tensor *t, const char *label)
{
	uint32_t dtype, rank;
	int has;
	char lab[sizeof r->where];
	snprintf(lab, sizeof lab, "%s", label);
	rwhere(r, "%s", lab);
	if (r_name(r, &t->name, "name"))
		return -1;
	rwhere(r, "%s (%.64s)", lab, t->name);
	if (r_u32(r, &dtype, "dtype") || r_u32(r, &rank, "rank"))
		return -1;
	if (dtype > INT_MAX || !loom_dtype_size((int)dtype))
		return rfail(r, "dtype %" PRIu32 " (%s) is not a data type Loom handles", dtype,
			     loom_dtype_name(dtype > INT_MAX ? -1 : (int)dtype));
	if (rank > LOOM_MAX_RANK)
		return rfail(r, "rank %" PRIu32 " > %d", rank, LOOM_MAX_RANK);
	t->dtype = (int)dtype;
	t->rank = (int)rank;
	for (uint32_t d = 0; d < rank; d++) {
		if (r_i64(r, &t->dims[d], "dim"))
			return -1;
		if (t->dims[d] < 0)
			return rfail(r, "dims[%" PRIu32 "] = %" PRId64 " < 0", d, t->dims[d]);
	}
	if (r_bool(r, &t->is_const, "is_const") || r_bool(r, &has, "has_data"))
		return -1;
	if (!has)
		return 0;
	int64_t n = loom_tensor_numel(t);
	size_t es = loom_dtype_size(t->dtype), bytes = loom_tensor_bytes(t);
	if (n < 0 || (n && !bytes))
		return rfail(r, "element count of the shape overflows");
	if (bytes > rleft(data)) {
		if (data != r)
			snprintf(data->where, sizeof data->where, "%s", r->where);
		return rfail(data, "data: %" PRId64 " x %zu bytes at offset %zu pass the end (%zu bytes left)", n, es,
			     data->pos, rleft(data));
	}
	uint8_t *p = malloc(bytes ? bytes : 1);
	if (!p)
		return rfail(r, "out of memory for %zu bytes of data", bytes);
	const uint8_t *s = data->p + data->pos;
	for (size_t i = 0; i < (size_t)n; i++) {
		uint64_t v = 0;
		for (size_t k = 0; k < es; k++)
			v |= (uint64_t)s[i * es + k] << (8 * k);
		switch (es) {
		case 1: p[i] = (uint8_t)v; break;
		case 2: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); break; }
		case 4: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); break; }
		default: memcpy(p + 8 * i, &v, 8); break;
		}
	}
	data->pos += bytes;
	t->data = p;
	return 0;
}

/* smallest encodings, for r_count */
#define MIN_TENSOR_BYTES (4 + 4 + 4 + 1 + 1)
#define MTENSOR_BYTES (1 + 1 + 1 + 1 + 4 * 4 + 4 + 4 + 8)
#define MIN_NODE_BYTES (3 * 4 + 4 + 4 + 4)
#define MIN_ATTR_BYTES (4 + 4 + 1)
#define LAYER_BYTES (4 + 4 + 4 * LOOM_LAYER_MAX_NODES + 3 * 4 + 3 * 4 + 3 * 8 + 4 * 4 + 2 * 8)
#define STEP_BYTES (4 + 4 + 4 + 4 + 4 + 8 + 4 + 4 * 4 + 4)

static int r_mtensor(rd *r, loom_mtensor *mt)
{
	uint32_t v[4];
	int32_t zp;
	if (r_bool(r, &mt->dev, "dev") || r_bool(r, &mt->host, "host") || r_bool(r, &mt->raw, "raw") ||
	    r_bool(r, &mt->rows, "rows") || r_u32(r, &v[0], "h") ||
	    r_u32(r, &v[1], "w") || r_u32(r, &v[2], "c") || r_u32(r, &v[3], "stride") ||
	    r_f32(r, &mt->scale, "scale") || r_i32(r, &zp, "zp") || r_u64(r, &mt->addr, "addr"))
		return -1;
	mt->h = v[0], mt->w = v[1], mt->c = v[2], mt->stride = v[3], mt->zp = zp;
	return 0;
}

/* [a, a + n) inside [base, base + size) (the map is checked: no overflow there) */
static int inside(uint64_t a, uint64_t n, uint64_t base, uint64_t size)
{
	return a >= base && a - base <= size && n <= size - (a - base);
}

/* A device image against the DRAM map (tensors without one: nothing to check). */
static int check_mtensor(rd *r, const loom_model *m, const loom_mtensor *mt)
{
	uint64_t bytes;
	if (!mt->dev)
		return 0;
	if (!mt->h || !mt->w || !mt->c)
		return rfail(r, "device image %" PRIu32 " x %" PRIu32 " x %" PRIu32 " is empty", mt->h, mt->w, mt->c);
	if (!mt->stride || mt->stride % 4 || mt->stride < mt->c)
		return rfail(r, "stride %" PRIu32 " is not a positive multiple of 4 >= c = %" PRIu32, mt->stride, mt->c);
	if (mt->raw && mt->stride / 4 < mt->c)
		return rfail(r, "int32 image: stride %" PRIu32 " is less than 4 * c = 4 * %" PRIu32, mt->stride, mt->c);
	if (mt->zp < -128 || mt->zp > 127)
		return rfail(r, "zp %" PRId32 " is outside -128..127", mt->zp);
	if (!isfinite(mt->scale) || !(mt->scale > 0))
		return rfail(r, "scale %g is not finite and > 0", (double)mt->scale);
	/* in the arena (activations) or the const region (constant operands) */
	if (__builtin_mul_overflow((uint64_t)mt->h * mt->w, (uint64_t)mt->stride, &bytes) ||
	    (!inside(mt->addr, bytes, m->arena_base, m->arena_bytes) &&
	     !inside(mt->addr, bytes, m->const_base, m->const_bytes)))
		return rfail(r,
			     "image at 0x%" PRIx64 " (%" PRIu32 " x %" PRIu32 " pixels of %" PRIu32
			     " bytes) is inside neither the arena [0x%" PRIx64 ", +0x%" PRIx64 ") nor the const region [0x%" PRIx64
			     ", +0x%" PRIx64 ")",
			     mt->addr, mt->h, mt->w, mt->stride, m->arena_base, m->arena_bytes, m->const_base,
			     m->const_bytes);
	return 0;
}

/* .loom.tensors (with their values from .loom.cdata) */
static int r_tensors(rd *r, rd *cd, loom_model *m)
{
	loom_graph *g = m->graph;
	int n;
	if (r_count(r, &n, MIN_TENSOR_BYTES + MTENSOR_BYTES, "tensor count"))
		return -1;
	g->tensors = calloc((size_t)n + 1, sizeof *g->tensors);
	m->mt = calloc((size_t)n + 1, sizeof *m->mt);
	if (!g->tensors || !m->mt)
		return rfail(r, "out of memory for %d tensors", n);
	g->ntensors = n;
	for (int i = 0; i < n; i++) {
		char lab[32];
		snprintf(lab, sizeof lab, "tensor %d", i);
		if (r_tensor(r, cd, &g->tensors[i], lab) || r_mtensor(r, &m->mt[i]) || check_mtensor(r, m, &m->mt[i]))
			return -1;
	}
	if (r_end(r))
		return -1;
	return r_end(cd);
}

/* a list of tensor indices: *n entries (an array of at least one) */
static int r_index_list(rd *r, int **v, int *n, int ntensors, int opt, const char *what)
{
	char cnt[64];
	snprintf(cnt, sizeof cnt, "%s count", what);
	if (r_count(r, n, 4, cnt))
		return -1;
	if (!(*v = calloc((size_t)*n + 1, sizeof **v)))
		return rfail(r, "out of memory");
	for (int i = 0; i < *n; i++) {
		char wh[64];
		snprintf(wh, sizeof wh, "%s[%d]", what, i);
		if (r_index(r, &(*v)[i], ntensors, opt, wh))
			return -1;
	}
	return 0;
}

static int r_attr(rd *r, loom_attr *a, const char *node_where)
{
	uint32_t type;
	int n = 0;
	if (r_name(r, &a->name, "attribute name"))
		return -1;
	rwhere(r, "%s: attribute '%.64s'", node_where, a->name);
	if (r_u32(r, &type, "type"))
		return -1;
	a->type = (int)type;
	switch (type) {
	case LOOM_ATTR_FLOAT:
		return r_f32(r, &a->f, "value");
	case LOOM_ATTR_INT:
		return r_i64(r, &a->i, "value");
	case LOOM_ATTR_STRING:
		return r_name(r, &a->s, "value");
	case LOOM_ATTR_TENSOR: {
		int has;
		char lab[sizeof r->where];
		if (r_bool(r, &has, "tensor present"))
			return -1;
		if (!has)
			return 0;
		if (!(a->t = calloc(1, sizeof *a->t)))
			return rfail(r, "out of memory");
		snprintf(lab, sizeof lab, "%.160s: tensor", r->where);
		return r_tensor(r, r, a->t, lab);
	}
	case LOOM_ATTR_FLOATS:
		if (r_count(r, &n, 4, "float count"))
			return -1;
		if (!(a->floats = calloc((size_t)n + 1, sizeof *a->floats)))
			return rfail(r, "out of memory");
		a->n = n;
		for (int i = 0; i < n; i++)
			if (r_f32(r, &a->floats[i], "float"))
				return -1;
		return 0;
	case LOOM_ATTR_INTS:
		if (r_count(r, &n, 8, "int count"))
			return -1;
		if (!(a->ints = calloc((size_t)n + 1, sizeof *a->ints)))
			return rfail(r, "out of memory");
		a->n = n;
		for (int i = 0; i < n; i++)
			if (r_i64(r, &a->ints[i], "int"))
				return -1;
		return 0;
	case LOOM_ATTR_STRINGS:
		if (r_count(r, &n, 4, "string count"))
			return -1;
		if (!(a->strings = calloc((size_t)n + 1, sizeof *a->strings)))
			return rfail(r, "out of memory");
		a->n = n;
		for (int i = 0; i < n; i++)
			if (r_name(r, &a->strings[i], "string"))
				return -1;
		return 0;
	default:
		return rfail(r, "attribute type %" PRIu32 " is not one Loom handles", type);
	}
}

static int r_node(rd *r, loom_node *nd, int k, int ntensors)
{
	char wh[sizeof r->where];
	rwhere(r, "node %d", k);
	if (r_name(r, &nd->name, "name"))
		return -1;
	snprintf(wh, sizeof wh, "node %d (%.64s)", k, nd->name);
	rwhere(r, "%s", wh);
	if (r_name(r, &nd->op_type, "op_type") || r_name(r, &nd->domain, "domain") ||
	    r_index_list(r, &nd->inputs, &nd->ninputs, ntensors, 1, "input") ||
	    r_index_list(r, &nd->outputs, &nd->noutputs, ntensors, 1, "output"))
		return -1;
	int na;
	if (r_count(r, &na, MIN_ATTR_BYTES, "attribute count"))
		return -1;
	if (!(nd->attrs = calloc((size_t)na + 1, sizeof *nd->attrs)))
		return rfail(r, "out of memory");
	nd->nattrs = na;
	for (int i = 0; i < na; i++) {
		rwhere(r, "%s: attribute %d", wh, i);
		if (r_attr(r, &nd->attrs[i], wh))
			return -1;
	}
	return 0;
}

/* .loom.graph (after the tensors) */
static int r_graph(rd *r, loom_graph *g)
{
	int n;
	if (r_str(r, &g->name, "graph name") || r_str(r, &g->path, "graph path") || r_i64(r, &g->opset, "opset") ||
	    r_index_list(r, &g->inputs, &g->ninputs, g->ntensors, 0, "graph input") ||
	    r_index_list(r, &g->outputs, &g->noutputs, g->ntensors, 0, "graph output") ||
	    r_count(r, &n, MIN_NODE_BYTES, "node count"))
		return -1;
	if (!(g->nodes = calloc((size_t)n + 1, sizeof *g->nodes)))
		return rfail(r, "out of memory for %d nodes", n);
	g->nnodes = n;
	for (int k = 0; k < n; k++)
		if (r_node(r, &g->nodes[k], k, g->ntensors))
			return -1;
	return r_end(r);
}

/* a tensor index that must name a device tensor */
static int r_dev_tensor(rd *r, const loom_model *m, int *v, int opt, const char *what)
{
	if (r_index(r, v, m->graph->ntensors, opt, what))
		return -1;
	if (*v >= 0 && !m->mt[*v].dev)
		return rfail(r, "%s: tensor %d (%.64s) has no device image", what, *v, m->graph->tensors[*v].name);
	return 0;
}

static int r_layer(rd *r, loom_model *m, loom_layer *l, uint32_t i)
{
	uint32_t kind;
	rwhere(r, "layer %" PRIu32, i);
	if (r_u32(r, &kind, "kind"))
		return -1;
	if (!loom_layer_kind_name((int)(kind > INT_MAX ? INT_MAX : kind)))
		return rfail(r, "kind %" PRIu32 " is not a layer kind", kind);
	l->kind = (int)kind;
	if (r_name(r, &l->name, "name"))
		return -1;
	rwhere(r, "layer %" PRIu32 " (%.64s)", i, l->name);
	for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
		if (r_index(r, &l->nodes[k], m->graph->nnodes, 1, "node"))
			return -1;
	if (r_dev_tensor(r, m, &l->in[0], 0, "in[0]") || r_dev_tensor(r, m, &l->in[1], 1, "in[1]") ||
	    r_dev_tensor(r, m, &l->out, 0, "out") || r_u32(r, &l->insn_first, "insn_first") ||
	    r_u32(r, &l->insn_count, "insn_count") || r_u32(r, &l->mark_id, "mark_id") || r_u64(r, &l->macs, "macs") ||
	    r_u64(r, &l->est_cycles, "est_cycles") || r_u64(r, &l->dram_bytes, "dram_bytes") ||
	    r_u32(r, &l->tile_h, "tile_h") || r_u32(r, &l->tile_w, "tile_w") || r_u32(r, &l->tile_c, "tile_c") ||
	    r_u32(r, &l->sp_bytes, "sp_bytes") || r_u64(r, &l->const_off, "const_off") ||
	    r_u64(r, &l->const_bytes, "const_bytes"))
		return -1;
	if (l->insn_first > m->ninsn || l->insn_count > m->ninsn - l->insn_first)
		return rfail(r, "instructions [%" PRIu32 ", +%" PRIu32 ") pass the %" PRIu32 " in .loom.text",
			     l->insn_first, l->insn_count, m->ninsn);
	if (l->const_off > m->const_bytes || l->const_bytes > m->const_bytes - l->const_off)
		return rfail(r, "const [%" PRIu64 ", +%" PRIu64 ") passes the %" PRIu64 "-byte const region",
			     l->const_off, l->const_bytes, m->const_bytes);
	return 0;
}

static int r_layers(rd *r, loom_model *m)
{
	int n;
	if (r_count(r, &n, LAYER_BYTES, "layer count"))
		return -1;
	if (!(m->layers = calloc((size_t)n + 1, sizeof *m->layers)))
		return rfail(r, "out of memory for %d layers", n);
	m->nlayers = (uint32_t)n;
	for (uint32_t i = 0; i < m->nlayers; i++)
		if (r_layer(r, m, &m->layers[i], i))
			return -1;
	return r_end(r);
}

/* A QUANT step into tensor dst's padded image (loom_step.dst): dst a plain
 * int8 image of the source's channels, scale and zero point, as high and
 * wide as the source's images with the pads; the source none of its own. */
static int r_step_dst(rd *r, const loom_model *m, const loom_step *s, uint32_t i)
{
	const loom_graph *g = m->graph;
	if (s->dst < 0) {
		if (s->dst != -1 || s->pad[0] || s->pad[1] || s->pad[2] || s->pad[3] || s->fill)
			return rfail(r, "dst %" PRId32 ", pads %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32
				     ", fill %" PRId32 ": expected -1, 0s and 0 (no padded image)",
				     (int32_t)s->dst, s->pad[0], s->pad[1], s->pad[2], s->pad[3], (int32_t)s->fill);
		return 0;
	}
	if (s->kind != LOOM_STEP_QUANT)
		return rfail(r, "dst %d: only a QUANT step writes a padded image", s->dst);
	if (s->dst >= g->ntensors || s->dst == s->tensor)
		return rfail(r, "dst %d is outside 0..%d or the step's own tensor", s->dst, g->ntensors - 1);
	const loom_tensor *t = &g->tensors[s->tensor];
	const loom_mtensor *mt = &m->mt[s->dst], *ms = &m->mt[s->tensor];
	rwhere(r, "step %" PRIu32 " (quant %.64s -> %.64s)", i, t->name, g->tensors[s->dst].name);
	if (s->fill < -128 || s->fill > 127)
		return rfail(r, "fill %" PRId32 " is not an int8", (int32_t)s->fill);
	if (!mt->dev || mt->raw || mt->rows || ms->dev || t->rank != 4)
		return rfail(r, "dst must be an int8 image and the source a rank-4 tensor with no device image");
	uint64_t hp = (uint64_t)t->dims[2] + s->pad[0] + s->pad[2], wp = (uint64_t)t->dims[3] + s->pad[1] + s->pad[3];
	if ((uint64_t)mt->c != (uint64_t)t->dims[1] || (uint64_t)mt->w != wp ||
	    (uint64_t)mt->h != (uint64_t)t->dims[0] * hp)
		return rfail(r, "dst image %" PRIu32 "x%" PRIu32 "x%" PRIu32 " is not [%" PRId64 ",%" PRId64 ",%" PRId64
			     ",%" PRId64 "] with pads %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32,
			     mt->h, mt->w, mt->c, t->dims[0], t->dims[1], t->dims[2], t->dims[3], s->pad[0], s->pad[1],
			     s->pad[2], s->pad[3]);
	if (mt->scale != ms->scale || mt->zp != ms->zp)
		return rfail(r, "dst quantization (%g, %" PRId32 ") is not the source's (%g, %" PRId32 ")",
			     (double)mt->scale, mt->zp, (double)ms->scale, ms->zp);
	return 0;
}

static int r_step(rd *r, loom_model *m, loom_step *s, uint32_t i)
{
	uint32_t kind;
	int32_t node, tensor, dst, fill;
	rwhere(r, "step %" PRIu32, i);
	if (r_u32(r, &kind, "kind") || r_i32(r, &node, "node") || r_i32(r, &tensor, "tensor") ||
	    r_u32(r, &s->layer, "layer") || r_u32(r, &s->nlayers, "nlayers") || r_u64(r, &s->insn_addr, "insn_addr") ||
	    r_i32(r, &dst, "dst") || r_u32(r, &s->pad[0], "pad_top") || r_u32(r, &s->pad[1], "pad_left") ||
	    r_u32(r, &s->pad[2], "pad_bottom") || r_u32(r, &s->pad[3], "pad_right") || r_i32(r, &fill, "fill"))
		return -1;
	if (!loom_step_kind_name((int)(kind > INT_MAX ? INT_MAX : kind)))
		return rfail(r, "kind %" PRIu32 " is not a step kind", kind);
	s->kind = (int)kind;
	s->node = node;
	s->tensor = tensor;
	s->dst = dst;
	s->fill = fill;
	rwhere(r, "step %" PRIu32 " (%s)", i, loom_step_kind_name(s->kind));
	const loom_graph *g = m->graph;
	switch (s->kind) {
	case LOOM_STEP_CPU:
		if (node < 0 || node >= g->nnodes)
			return rfail(r, "node %" PRId32 " is outside 0..%d", node, g->nnodes - 1);
		if (!strcmp(g->nodes[node].op_type, LOOM_NPU_OP))
			return rfail(r, "node %" PRId32 " (%.64s) is lowered to the NPU (%s)", node, g->nodes[node].name,
				     LOOM_NPU_OP);
		break;
	case LOOM_STEP_QUANT:
	case LOOM_STEP_DEQUANT:
		if (tensor < 0 || tensor >= g->ntensors)
			return rfail(r, "tensor %" PRId32 " is outside 0..%d", tensor, g->ntensors - 1);
		if (dst < 0 && !m->mt[tensor].dev)
			return rfail(r, "tensor %" PRId32 " (%.64s) has no device image", tensor, g->tensors[tensor].name);
		break;
	default: /* NPU */
		if (!s->nlayers || s->layer > m->nlayers || s->nlayers > m->nlayers - s->layer)
			return rfail(r, "layers [%" PRIu32 ", +%" PRIu32 ") are not inside the %" PRIu32 " layers",
				     s->layer, s->nlayers, m->nlayers);
		if (s->insn_addr < m->text_base || (s->insn_addr - m->text_base) % LOOM_INSN_BYTES ||
		    (s->insn_addr - m->text_base) / LOOM_INSN_BYTES >= m->ninsn)
			return rfail(r, "insn_addr 0x%" PRIx64 " is not one of the %" PRIu32 " instructions at 0x%" PRIx64,
				     s->insn_addr, m->ninsn, m->text_base);
		break;
	}
	return r_step_dst(r, m, s, i);
}

static int r_steps(rd *r, loom_model *m)
{
	int n;
	if (r_count(r, &n, STEP_BYTES, "step count"))
		return -1;
	if (!(m->steps = calloc((size_t)n + 1, sizeof *m->steps)))
		return rfail(r, "out of memory for %d steps", n);
	m->nsteps = (uint32_t)n;
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (r_step(r, m, &m->steps[i], i))
			return -1;
	return r_end(r);
}

/* ---- .note.loom */

/* the next "key=value" line of a text note: 1, 0 at its end, -1 on error */
static int kv_next(rd *r, const char *txt, size_t n, size_t *pos, char *key, size_t klen, char *val, size_t vlen)
{
	if (*pos >= n)
		return 0;
	const char *line = txt + *pos;
	const char *nl = memchr(line, '\n', n - *pos);
	size_t ll = nl ? (size_t)(nl - line) : n - *pos;
	*pos += ll + (nl != NULL);
	const char *eq = memchr(line, '=', ll);
	if (!eq)
		return rfail(r, "line '%.*s' is not key=value", (int)(ll > 64 ? 64 : ll), line);
	size_t kl = (size_t)(eq - line), vl = ll - kl - 1;
	if (kl >= klen || vl >= vlen)
		return rfail(r, "line '%.*s' is too long", (int)(ll > 64 ? 64 : ll), line);
	memcpy(key, line, kl);
	key[kl] = 0;
	memcpy(val, eq + 1, vl);
	val[vl] = 0;
	return 1;
}

static int kv_num(rd *r, const char *key, const char *val, uint64_t max, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(val, &end, 0);
	if (val[0] < '0' || val[0] > '9' || errno || *end || x > max)
		return rfail(r, "%s = '%.64s' is not a number in 0..%" PRIu64, key, val, max);
	*v = x;
	return 0;
}

/* a text note's bytes (no NUL inside) */
static int note_text(rd *r, const uint8_t *d, size_t n, char **out)
{
	if (memchr(d, 0, n))
		return rfail(r, "NUL byte inside the text");
	if (!(*out = malloc(n + 1)))
		return rfail(r, "out of memory");
	memcpy(*out, d, n);
	(*out)[n] = 0;
	return 0;
}

static int note_hwcfg(rd *r, loom_model *m, const char *txt, size_t n)
{
	unsigned seen[MF_NHWPARAMS + 2] = {0}; /* params, config, fingerprint */
	char key[64], val[128], msg[256];
	uint64_t v = 0, fp = 0;
	size_t pos = 0;
	int rc;
	memset(&m->cfg, 0, sizeof m->cfg);
	while ((rc = kv_next(r, txt, n, &pos, key, sizeof key, val, sizeof val)) > 0) {
		size_t i;
		if (!strcmp(key, "config")) {
			i = MF_NHWPARAMS;
			if (!val[0] || strlen(val) >= sizeof m->cfg.name)
				return rfail(r, "config name '%.64s' is empty or longer than %zu", val, sizeof m->cfg.name - 1);
			memcpy(m->cfg.name, val, strlen(val) + 1);
		} else if (!strcmp(key, "fingerprint")) {
			i = MF_NHWPARAMS + 1;
			if (kv_num(r, key, val, UINT32_MAX, &fp))
				return -1;
		} else {
			for (i = 0; i < MF_NHWPARAMS && strcmp(key, mf_hwparams[i].name); i++)
				;
			if (i == MF_NHWPARAMS)
				return rfail(r, "unknown hardware parameter '%s'", key);
			if (kv_num(r, key, val, UINT32_MAX, &v))
				return -1;
			mf_hw_set(&m->cfg, i, (uint32_t)v);
		}
		if (seen[i]++)
			return rfail(r, "'%s' is given twice", key);
	}
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < MF_NHWPARAMS + 2; i++)
		if (!seen[i])
			return rfail(r, "'%s' is missing",
				     i < MF_NHWPARAMS ? mf_hwparams[i].name : i == MF_NHWPARAMS ? "config" : "fingerprint");
	if (loom_hwcfg_finish(&m->cfg, msg, sizeof msg))
		return rfail(r, "%s", msg);
	if (m->cfg.fingerprint != fp)
		return rfail(r, "fingerprint 0x%08" PRIx64 " does not match the parameters' 0x%08" PRIx32, fp,
			     m->cfg.fingerprint);
	return 0;
}

static int note_dram(rd *r, loom_model *m, const char *txt, size_t n)
{
	unsigned seen[MF_NDRAM_KEYS] = {0};
	char key[64], val[128];
	size_t pos = 0;
	int rc;
	while ((rc = kv_next(r, txt, n, &pos, key, sizeof key, val, sizeof val)) > 0) {
		size_t i;
		for (i = 0; i < MF_NDRAM_KEYS && strcmp(key, mf_dram_keys[i]); i++)
			;
		if (i == MF_NDRAM_KEYS)
			return rfail(r, "unknown key '%s'", key);
		if (seen[i]++)
			return rfail(r, "'%s' is given twice", key);
		if (kv_num(r, key, val, UINT64_MAX, mf_dram_slot(m, i)))
			return -1;
	}
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < MF_NDRAM_KEYS; i++)
		if (!seen[i])
			return rfail(r, "'%s' is missing", mf_dram_keys[i]);
	return 0;
}

/* Every note of owner "Loom" (notes of other owners are skipped): first
 * found, then the version checked, then the others parsed, so that a file of
 * another format version is refused as such. */
static int r_notes(rd *r, loom_model *m)
{
	struct {
		const uint8_t *desc;
		uint32_t size;
		int seen, idx;
	} nt[NT_LOOM_MAX + 1];
	int idx = 0, bad_idx = -1;
	uint32_t bad_type = 0;
	memset(nt, 0, sizeof nt);
	while (rleft(r)) {
		uint32_t namesz, descsz, type;
		rwhere(r, "note %d", idx++);
		if (r_u32(r, &namesz, "namesz") || r_u32(r, &descsz, "descsz") || r_u32(r, &type, "type"))
			return -1;
		uint64_t npad = ((uint64_t)namesz + 3) & ~3ull, dpad = ((uint64_t)descsz + 3) & ~3ull;
		if (npad > rleft(r) || dpad > rleft(r) - npad)
			return rfail(r, "name (%" PRIu32 " bytes) and descriptor (%" PRIu32 " bytes) pass the end of the section",
				     namesz, descsz);
		const uint8_t *name = r->p + r->pos;
		r->pos += (size_t)(npad + dpad);
		if (namesz != sizeof NOTE_OWNER || memcmp(name, NOTE_OWNER, sizeof NOTE_OWNER))
			continue;
		if (type < NT_LOOM(1) || type > NT_LOOM(NT_LOOM_MAX)) {
			if (bad_idx < 0)
				bad_idx = idx - 1, bad_type = type;
			continue;
		}
		type -= NT_LOOM(0);
		if (nt[type].seen++)
			return rfail(r, "note type 0x%" PRIx32 " appears twice", NT_LOOM(type));
		nt[type].desc = name + npad;
		nt[type].size = descsz;
		nt[type].idx = idx - 1;
	}
	r->where[0] = 0;
	if (!nt[NT_LOOM_VERSION].seen)
		return rfail(r, "no version note (owner %s, type 0x%x)", NOTE_OWNER, NT_LOOM(NT_LOOM_VERSION));
	const uint8_t *d = nt[NT_LOOM_VERSION].desc;
	if (nt[NT_LOOM_VERSION].size != 4)
		return rfail(r, "version note: descriptor is %" PRIu32 " bytes, expected 4", nt[NT_LOOM_VERSION].size);
	m->version = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
	if (m->version != LOOM_MODEL_VERSION)
		return rfail(r, "format version %" PRIu32 ", this loom reads version %d", m->version, LOOM_MODEL_VERSION);
	if (bad_idx >= 0)
		return rfail(r, "note %d: unknown note type 0x%" PRIx32, bad_idx, bad_type);
	if (!nt[NT_LOOM_HWCFG].seen)
		return rfail(r, "no hardware configuration note (type 0x%x)", NT_LOOM(NT_LOOM_HWCFG));
	if (!nt[NT_LOOM_DRAM].seen)
		return rfail(r, "no DRAM map note (type 0x%x)", NT_LOOM(NT_LOOM_DRAM));
	for (int type = NT_LOOM_HWCFG; type <= NT_LOOM_MAX; type++) {
		char *txt = NULL;
		int rc = 0;
		if (!nt[type].seen)
			continue;
		switch (type) {
		case NT_LOOM_OPTIONS:
			rwhere(r, "note %d (options)", nt[type].idx);
			rc = note_text(r, nt[type].desc, nt[type].size, &m->options);
			break;
		case NT_LOOM_SOURCE:
			rwhere(r, "note %d (source)", nt[type].idx);
			rc = note_text(r, nt[type].desc, nt[type].size, &m->source);
			break;
		default:
			rwhere(r, "%s", type == NT_LOOM_HWCFG ? "hardware configuration" : "DRAM map");
			rc = note_text(r, nt[type].desc, nt[type].size, &txt);
			if (!rc)
				rc = type == NT_LOOM_HWCFG ? note_hwcfg(r, m, txt, nt[type].size)
							   : note_dram(r, m, txt, nt[type].size);
			free(txt);
			break;
		}
		if (rc)
			return -1;
	}
	r->where[0] = 0;
	return 0;
}

/* The DRAM map: from base, consts, arena, MARK records and programs in this
 * order, none overlapping, up to dram_end, inside the configuration's DRAM. */
static int check_map(rd *r, const loom_model *m)
{
	const struct {
		const char *name;
		uint64_t start, size;
	} reg[] = {
		{"const", m->const_base, m->const_bytes},
		{"arena", m->arena_base, m->arena_bytes},
		{"marks", m->mark_base, (uint64_t)LOOM_MARK_BYTES * m->nlayers},
		{"text", m->text_base, m->text_bytes},
	};
	uint64_t at = m->base;
	rwhere(r, "DRAM map");
	for (size_t i = 0; i < sizeof reg / sizeof reg[0]; i++) {
		if (reg[i].start < at)
			return rfail(r, "%s region at 0x%" PRIx64 " starts before 0x%" PRIx64 " (the end of the previous one)",
				     reg[i].name, reg[i].start, at);
		if (reg[i].size > UINT64_MAX - reg[i].start)
			return rfail(r, "%s region 0x%" PRIx64 " + 0x%" PRIx64 " overflows", reg[i].name, reg[i].start,
				     reg[i].size);
		at = reg[i].start + reg[i].size;
	}
	if (at > m->dram_end)
		return rfail(r, "regions end at 0x%" PRIx64 ", past dram_end 0x%" PRIx64, at, m->dram_end);
	if (m->dram_end > m->cfg.dram_bytes)
		return rfail(r, "dram_end 0x%" PRIx64 " is past the configuration's %" PRIu32 " MiB of DRAM", m->dram_end,
			     m->cfg.dram_mib);
	if ((uint64_t)m->ninsn * LOOM_INSN_BYTES > m->text_bytes)
		return rfail(r, "%" PRIu32 " instructions do not fit text_bytes %" PRIu64, m->ninsn, m->text_bytes);
	return 0;
}

static int cfg_cmp(const char *who, const loom_model *m, const loom_hwcfg *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < MF_NHWPARAMS; i++) {
		uint32_t a = mf_hw_get(&m->cfg, i), b = mf_hw_get(cfg, i);
		if (mf_hw_program(i) && a != b)
			return mf_fail(err, errlen, "%s compiled for %s = %" PRIu32 ", configuration '%s' has %s = %" PRIu32,
				    who, mf_hwparams[i].name, a, cfg->name, mf_hwparams[i].name, b);
	}
	return 0;
}

int loom_model_check_cfg(const loom_model *m, const loom_hwcfg *cfg, char *err, size_t errlen)
{
	if (!m || !cfg)
		return mf_fail(err, errlen, "loom_model_check_cfg: NULL argument");
	return cfg_cmp("model", m, cfg, err, errlen);
}

/* ---- the ELF container */

static uint64_t le_at(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#define EH(f) le_at(b + offsetof(Elf64_Ehdr, f), sizeof(((Elf64_Ehdr *)0)->f))

/* The raw ELF header, before libelf sees the file. */
static int check_ehdr(const char *file, const uint8_t *b, size_t len, char *err, size_t errlen)
{
	if (len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return mf_fail(err, errlen, "%s: not an ELF file (%zu bytes, no \\177ELF magic)", file, len);
	if (b[EI_CLASS] != ELFCLASS64)
		return mf_fail(err, errlen, "%s: ELF header: e_ident[EI_CLASS] is %u, expected ELFCLASS64", file, b[EI_CLASS]);
	if (b[EI_DATA] != ELFDATA2LSB)
		return mf_fail(err, errlen, "%s: ELF header: e_ident[EI_DATA] is %u, expected ELFDATA2LSB (little endian)",
			    file, b[EI_DATA]);
	if (b[EI_VERSION] != EV_CURRENT)
		return mf_fail(err, errlen, "%s: ELF header: e_ident[EI_VERSION] is %u, expected %u", file, b[EI_VERSION],
			    EV_CURRENT);
	if (len < sizeof(Elf64_Ehdr))
		return mf_fail(err, errlen, "%s: truncated: %zu bytes, the ELF header alone is %zu", file, len,
			    sizeof(Elf64_Ehdr));
	if (EH(e_type) != ET_REL)
		return mf_fail(err, errlen, "%s: ELF header: e_type is %u, expected ET_REL (%u)", file, (unsigned)EH(e_type),
			    ET_REL);
	if (EH(e_machine) != EM_NONE)
		return mf_fail(err, errlen, "%s: ELF header: e_machine is %u, expected EM_NONE (0): not a Loom model", file,
			    (unsigned)EH(e_machine));
	if (EH(e_version) != EV_CURRENT)
		return mf_fail(err, errlen, "%s: ELF header: e_version is %u, expected %u", file, (unsigned)EH(e_version),
			    EV_CURRENT);
	if (EH(e_ehsize) != sizeof(Elf64_Ehdr) || EH(e_shentsize) != sizeof(Elf64_Shdr))
		return mf_fail(err, errlen, "%s: ELF header: e_ehsize %u / e_shentsize %u, expected %zu / %zu", file,
			    (unsigned)EH(e_ehsize), (unsigned)EH(e_shentsize), sizeof(Elf64_Ehdr), sizeof(Elf64_Shdr));
	if (EH(e_phnum) != 0)
		return mf_fail(err, errlen, "%s: ELF header: e_phnum is %u, a model has no program headers", file,
			    (unsigned)EH(e_phnum));
	uint64_t shoff = EH(e_shoff), shnum = EH(e_shnum), shstrndx = EH(e_shstrndx);
	if (shnum < 2 || shnum > MAX_SECTIONS)
		return mf_fail(err, errlen, "%s: ELF header: e_shnum is %" PRIu64 ", expected 2..%d", file, shnum,
			    MAX_SECTIONS);
	if (shstrndx == SHN_UNDEF || shstrndx >= shnum)
		return mf_fail(err, errlen, "%s: ELF header: e_shstrndx %" PRIu64 " is not a section (1..%" PRIu64 ")", file,
			    shstrndx, shnum - 1);
	if (shoff > len || shnum * sizeof(Elf64_Shdr) > len - shoff)
		return mf_fail(err, errlen,
			    "%s: truncated: section headers [e_shoff 0x%" PRIx64 ", +%" PRIu64 " x %zu) pass the end of the %zu-byte file",
			    file, shoff, shnum, sizeof(Elf64_Shdr), len);
	return 0;
}

typedef struct secref {
	const uint8_t *p;
	size_t size;
	uint64_t addr;
	int found;
} secref;

/* Find our sections through libelf: each once, of its type, inside the file. */
static int find_sections(const char *file, Elf *e, const uint8_t *b, size_t len, secref *sec, char *err,
			 size_t errlen)
{
	size_t shstrndx, shnum;
	if (elf_getshdrstrndx(e, &shstrndx) || elf_getshdrnum(e, &shnum))
		return mf_fail(err, errlen, "%s: libelf: %s", file, elf_errmsg(-1));
	/* bounds first: libelf reads .shstrtab for the names */
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(e, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return mf_fail(err, errlen, "%s: section %zu: unreadable header: %s", file, i, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset))
			return mf_fail(err, errlen,
				    "%s: section %zu: sh_offset 0x%" PRIx64 " + sh_size 0x%" PRIx64 " pass the end of the %zu-byte file (truncated?)",
				    file, i, (uint64_t)sh.sh_offset, (uint64_t)sh.sh_size, len);
		if (i == shstrndx && sh.sh_type != SHT_STRTAB)
			return mf_fail(err, errlen, "%s: section %zu (e_shstrndx) is of type %u, not SHT_STRTAB", file, i,
				    (unsigned)sh.sh_type);
	}
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(e, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return mf_fail(err, errlen, "%s: section %zu: unreadable header: %s", file, i, elf_errmsg(-1));
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm)
			return mf_fail(err, errlen, "%s: section %zu: sh_name %u is not a name in .shstrtab", file, i,
				    (unsigned)sh.sh_name);
		for (int s = 0; s < S_COUNT; s++) {
			if (strcmp(nm, mf_sec_info[s].name))
				continue;
			if (sec[s].found)
				return mf_fail(err, errlen, "%s: %s: the section appears twice", file, nm);
			if (sh.sh_type != mf_sec_info[s].type)
				return mf_fail(err, errlen, "%s: %s: sh_type is %u, expected %u", file, nm,
					    (unsigned)sh.sh_type, mf_sec_info[s].type);
			sec[s].found = 1;
			sec[s].p = b + sh.sh_offset;
			sec[s].size = (size_t)sh.sh_size;
			sec[s].addr = sh.sh_addr;
		}
	}
	for (int s = 0; s < S_COUNT; s++)
		if (!sec[s].found)
			return mf_fail(err, errlen, "%s: no %s section", file, mf_sec_info[s].name);
	return 0;
}

static void rinit(rd *r, const secref *s, const char *file, const char *name, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->p = s->p;
	r->len = s->size;
	r->file = file;
	r->sec = name;
	r->err = err;
	r->errlen = errlen;
}

/* Every section, in dependency order, into m. */
static int parse(const char *file, secref *sec, const loom_hwcfg *cfg, loom_model *m, char *err, size_t errlen)
{
	rd r, cd;
	rinit(&r, &sec[S_NOTE], file, mf_sec_info[S_NOTE].name, err, errlen);
	if (r_notes(&r, m))
		return -1;
	if (cfg && cfg_cmp(file, m, cfg, err, errlen))
		return -1;

	rinit(&r, &sec[S_TEXT], file, mf_sec_info[S_TEXT].name, err, errlen);
	if (r.len % LOOM_INSN_BYTES)
		return rfail(&r, "size %zu is not a multiple of %d", r.len, LOOM_INSN_BYTES);
	if (r.len / LOOM_INSN_BYTES > UINT32_MAX)
		return rfail(&r, "more than 2^32 instructions");
	if (sec[S_TEXT].addr != m->text_base)
		return rfail(&r, "sh_addr 0x%" PRIx64 " is not text_base 0x%" PRIx64, sec[S_TEXT].addr, m->text_base);
	m->ninsn = (uint32_t)(r.len / LOOM_INSN_BYTES);
	if (!(m->insn = calloc((size_t)m->ninsn + 1, sizeof *m->insn)))
		return rfail(&r, "out of memory");
	for (uint32_t i = 0; i < m->ninsn; i++)
		for (int k = 0; k < LOOM_INSN_WORDS; k++)
			if (r_u32(&r, &m->insn[i].w[k], "instruction word"))
				return -1;

	rinit(&r, &sec[S_CONST], file, mf_sec_info[S_CONST].name, err, errlen);
	if (r.len != m->const_bytes)
		return rfail(&r, "size %zu is not const_bytes %" PRIu64 " of the DRAM map", r.len, m->const_bytes);
	if (sec[S_CONST].addr != m->const_base)
		return rfail(&r, "sh_addr 0x%" PRIx64 " is not const_base 0x%" PRIx64, sec[S_CONST].addr,
			     m->const_base);
	if (!(m->consts = malloc(r.len ? r.len : 1)))
		return rfail(&r, "out of memory");
	if (r.len)
		memcpy(m->consts, r.p, r.len);

	/* the region order needs nlayers: checked again once they are read */
	rinit(&r, &sec[S_NOTE], file, mf_sec_info[S_NOTE].name, err, errlen);
	if (check_map(&r, m))
		return -1;

	rinit(&r, &sec[S_TENSORS], file, mf_sec_info[S_TENSORS].name, err, errlen);
	rinit(&cd, &sec[S_CDATA], file, mf_sec_info[S_CDATA].name, err, errlen);
	if (r_tensors(&r, &cd, m))
		return -1;
	rinit(&r, &sec[S_GRAPH], file, mf_sec_info[S_GRAPH].name, err, errlen);
	if (r_graph(&r, m->graph))
		return -1;
	rinit(&r, &sec[S_LAYERS], file, mf_sec_info[S_LAYERS].name, err, errlen);
	if (r_layers(&r, m))
		return -1;
	rinit(&r, &sec[S_NOTE], file, mf_sec_info[S_NOTE].name, err, errlen);
	if (check_map(&r, m))
		return -1;
	rinit(&r, &sec[S_STEPS], file, mf_sec_info[S_STEPS].name, err, errlen);
	return r_steps(&r, m);
}

int loom_model_read_mem(const void *buf, size_t len, const char *name, const loom_hwcfg *cfg, loom_model **out,
			char *err, size_t errlen)
{
	const char *file = name ? name : "(memory)";
	secref sec[S_COUNT];
	loom_model *m = NULL;
	uint8_t *copy = NULL;
	Elf *e = NULL;
	int rc = -1;
	if (!out)
		return mf_fail(err, errlen, "%s: loom_model_read_mem: NULL out", file);
	*out = NULL;
	if (!buf && len)
		return mf_fail(err, errlen, "%s: loom_model_read_mem: NULL buffer", file);
	if (check_ehdr(file, buf, len, err, errlen))
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mf_fail(err, errlen, "%s: libelf: %s", file, elf_errmsg(-1));
	/* elf_memory wants a writable image; it is only read */
	if (!(copy = malloc(len)))
		return mf_fail(err, errlen, "%s: out of memory", file);
	memcpy(copy, buf, len);
	e = elf_memory((char *)copy, len);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		mf_fail(err, errlen, "%s: libelf can not read it: %s", file, elf_errmsg(-1));
		goto out;
	}
	memset(sec, 0, sizeof sec);
	if (find_sections(file, e, copy, len, sec, err, errlen))
		goto out;
	m = calloc(1, sizeof *m);
	if (!m || !(m->graph = calloc(1, sizeof *m->graph))) {
		mf_fail(err, errlen, "%s: out of memory", file);
		goto out;
	}
	if (parse(file, sec, cfg, m, err, errlen))
		goto out;
	*out = m;
	m = NULL;
	rc = 0;
out:
	loom_model_free(m);
	if (e)
		elf_end(e);
	free(copy);
	return rc;
}

int loom_model_read(const char *path, const loom_hwcfg *cfg, loom_model **out, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	int rc = -1;
	if (out)
		*out = NULL;
	if (!path || !out)
		return mf_fail(err, errlen, "loom_model_read: NULL argument");
	FILE *f = fopen(path, "rb");
	if (!f)
		return mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > SIZE_MAX / 2) {
		mf_fail(err, errlen, "%s: not a regular file of a readable size", path);
		goto out;
	}
	size_t len = (size_t)st.st_size;
	if (!(buf = malloc(len ? len : 1))) {
		mf_fail(err, errlen, "%s: out of memory for %zu bytes", path, len);
		goto out;
	}
	if (fread(buf, 1, len, f) != len) {
		mf_fail(err, errlen, "%s: short read", path);
		goto out;
	}
	rc = loom_model_read_mem(buf, len, path, cfg, out, err, errlen);
out:
	free(buf);
	fclose(f);
	return rc;
}

