/* onnx.c - the ONNX importer of `loom compile`: reads a ModelProto with
 * protobuf-c (build/gen/onnx.pb-c.c, generated at build time from Debian's
 * /usr/include/onnx/onnx.proto) and converts its graph into the IR of
 * ir/ir.h; also reads and writes single TensorProto files (test data,
 * `loom run --output-dir`).
 * compiler/onnx.h says what the loaded graph looks like and what is not
 * supported.
 *
 * Every check on the file is made here, before anything trusts it: protobuf
 * parse errors, missing fields, ranks and negative dims, data sizes (raw_data
 * must hold exactly numel * element size bytes, typed fields exactly numel
 * values), names (duplicates, inputs nothing produces), cycles. Errors are
 * one message starting with the file's path and naming the node, tensor,
 * attribute or input at fault. */
#include "compiler/onnx.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define IR_VERSION_MIN 3   /* ONNX 1.2, opset 7 */
#define IR_VERSION_MAX 10  /* ONNX 1.16 */
#define MAX_FILE_BYTES ((size_t)INT_MAX) /* protobuf's 2 GB limit */
#define MAX_COUNT (INT_MAX / 4)          /* nodes, tensors, list lengths */

/* ------------------------------------------------------------------ errors */

typedef struct sink {
	const char *path;
	char *err;
	size_t len;
} sink;

static int fail(const sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const sink *s, const char *fmt, ...)
{
	if (!s->err || !s->len)
		return -1;
	int n = snprintf(s->err, s->len, "%s: ", s->path ? s->path : "(null)");
	if (n < 0)
		n = 0;
	if ((size_t)n < s->len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err + n, s->len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* snprintf for labels in messages, where truncation is fine */
static int bfmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

static char *dupstr(const char *s)
{
	return strdup(s ? s : "");
}

static char *dupbytes(const ProtobufCBinaryData *b)
{
	char *s = malloc(b->len + 1);
	if (!s)
		return NULL;
	if (b->len)
		memcpy(s, b->data, b->len);
	s[b->len] = 0;
	return s;
}

/* ------------------------------------------------------------------ files */

/* the file's bytes: mapped (*mapped = 1; nothing copied, the page cache
 * read in place), or read into memory; release_file gives them back */
static int read_file(const sink *s, uint8_t **buf, size_t *len, int *mapped)
{
	*buf = NULL;
	*len = 0;
	*mapped = 0;
	FILE *f = fopen(s->path, "rb");
	if (!f)
		return fail(s, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return fail(s, "not a regular file");
	}
	if (st.st_size == 0) {
		fclose(f);
		return fail(s, "empty file");
	}
	if ((uintmax_t)st.st_size > MAX_FILE_BYTES) {
		fclose(f);
		return fail(s, "file too large (%jd bytes; protobuf's limit is 2 GB)", (intmax_t)st.st_size);
	}
	size_t n = (size_t)st.st_size;
	void *mp = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fileno(f), 0);
	if (mp != MAP_FAILED) {
		fclose(f);
		*buf = mp;
		*len = n;
		*mapped = 1;
		return 0;
	}
	uint8_t *b = malloc(n);
	if (!b) {
		fclose(f);
		return fail(s, "out of memory");
	}
	size_t got = fread(b, 1, n, f);
	int rerr = ferror(f);
	fclose(f);
	if (got != n || rerr) {
		free(b);
		return fail(s, "read error");
	}
	*buf = b;
	*len = n;
	return 0;
}

static void release_file(uint8_t *buf, size_t len, int mapped)
{
	if (mapped)
		munmap(buf, len);
	else
		free(buf);
}

/* ------------------------------------------------------------------ tensors */

static void copy_le(void *dst, const uint8_t *src, size_t bytes, size_t esize)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint8_t *d = dst;
	for (size_t i = 0; i < bytes; i += esize)
		for (size_t k = 0; k < esize; k++)
			d[i + k] = src[i + esize - 1 - k];
#else
	(void)esize;
	memcpy(dst, src, bytes);
#endif
}

/* Fill dtype, rank, dims and data of t from a TensorProto; what names the
 * tensor in messages ("initializer 'W'"). t->data is freshly allocated
 * (at least one byte, so a const tensor always has data). own: tp's own
 * raw_data (NULL: copied), whose buffer (protobuf-c's, malloc'd) becomes
 * t->data when it holds the values as they are (little-endian host, not
 * empty): the unpacked model's copy not copied again (ResNet-50: 100 MB). */
static int tensor_fill(const sink *s, const Onnx__TensorProto *tp, loom_tensor *t, const char *what,
		       ProtobufCBinaryData *own)
{
	if (!tp->has_data_type || tp->data_type == LOOM_DT_UNDEFINED)
		return fail(s, "%s has no data type", what);
	int dt = tp->data_type;
	size_t es = loom_dtype_size(dt);
	if (!es)
		return fail(s, "%s: data type %s (%d) not supported", what, loom_dtype_name(dt), dt);
	if (tp->n_dims > LOOM_MAX_RANK)
		return fail(s, "%s: rank %zu exceeds Loom's maximum %d", what, tp->n_dims, LOOM_MAX_RANK);
	if (tp->segment)
		return fail(s, "%s: segmented tensors not supported", what);
	if (tp->n_external_data ||
	    (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return fail(s, "%s: external data not supported", what);
	int64_t numel = 1;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0)
			return fail(s, "%s: dimension %zu is negative (%" PRId64 ")", what, i, tp->dims[i]);
		if (__builtin_mul_overflow(numel, tp->dims[i], &numel))
			return fail(s, "%s: element count overflows", what);
	}
	size_t bytes;
	if ((uint64_t)numel > SIZE_MAX || __builtin_mul_overflow((size_t)numel, es, &bytes))
		return fail(s, "%s: size overflows", what);
	size_t n = (size_t)numel;

	/* where the values are, and how many there are */
	size_t have = 0;
	const char *field = "raw_data";
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes)
			return fail(s, "%s: raw_data holds %zu bytes, %s[%" PRId64 "] needs %zu",
				    what, tp->raw_data.len, loom_dtype_name(dt), numel, bytes);
	} else {
		switch (dt) {
		case LOOM_DT_FLOAT: have = tp->n_float_data; field = "float_data"; break;
		case LOOM_DT_DOUBLE: have = tp->n_double_data; field = "double_data"; break;
		case LOOM_DT_INT64: have = tp->n_int64_data; field = "int64_data"; break;
		case LOOM_DT_UINT32:
		case LOOM_DT_UINT64: have = tp->n_uint64_data; field = "uint64_data"; break;
		default: have = tp->n_int32_data; field = "int32_data"; break;
		}
		if (have != n) {
			if (!have)
				return fail(s, "%s has no data (%s[%" PRId64 "] expects %s or raw_data)",
					    what, loom_dtype_name(dt), numel, field);
			return fail(s, "%s: %s holds %zu values, %s[%" PRId64 "] needs %zu",
				    what, field, have, loom_dtype_name(dt), numel, n);
		}
	}
	void *data;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
	if (own && own == &tp->raw_data && tp->has_raw_data && n && own->data) {
		data = own->data; /* (free_unpacked skips a NULL buffer) */
		own->data = NULL;
		own->len = 0;
		goto filled;
	}
#endif
	data = calloc(bytes ? bytes : 1, 1);
	if (!data)
		return fail(s, "%s: out of memory (%zu bytes)", what, bytes);
	if (!n) {
		/* no values to copy (the fields may be NULL) */
	} else if (tp->has_raw_data) {
		copy_le(data, tp->raw_data.data, bytes, es);
	} else {
		switch (dt) {
		case LOOM_DT_FLOAT: memcpy(data, tp->float_data, bytes); break;
		case LOOM_DT_DOUBLE: memcpy(data, tp->double_data, bytes); break;
		case LOOM_DT_INT64: memcpy(data, tp->int64_data, bytes); break;
		case LOOM_DT_UINT64: memcpy(data, tp->uint64_data, bytes); break;
		case LOOM_DT_UINT32:
			for (size_t i = 0; i < n; i++)
				((uint32_t *)data)[i] = (uint32_t)tp->uint64_data[i];
			break;
		case LOOM_DT_INT32: memcpy(data, tp->int32_data, bytes); break;
		case LOOM_DT_INT16:
			for (size_t i = 0; i < n; i++)
				((int16_t *)data)[i] = (int16_t)tp->int32_data[i];
			break;
		case LOOM_DT_UINT16:
			for (size_t i = 0; i < n; i++)
				((uint16_t *)data)[i] = (uint16_t)tp->int32_data[i];
			break;
		case LOOM_DT_INT8:
			for (size_t i = 0; i < n; i++)
				((int8_t *)data)[i] = (int8_t)tp->int32_data[i];
			break;
		case LOOM_DT_UINT8:
			for (size_t i = 0; i < n; i++)
				((uint8_t *)data)[i] = (uint8_t)tp->int32_data[i];
			break;
		case LOOM_DT_BOOL:
			for (size_t i = 0; i < n; i++)
				((uint8_t *)data)[i] = tp->int32_data[i] != 0;
			break;
		default:
			break;
		}
	}
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
filled:
#endif
	free(t->data);
	t->data = data;
	t->dtype = dt;
	t->rank = (int)tp->n_dims;
	memset(t->dims, 0, sizeof t->dims);
	for (size_t i = 0; i < tp->n_dims; i++)
		t->dims[i] = tp->dims[i];
	return 0;
}

void loom_tensor_clear(loom_tensor *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->data);
	memset(t, 0, sizeof *t);
}

int loom_onnx_load_tensor(const char *path, loom_tensor *t, char *err, size_t errlen)
{
	sink s = {path, err, errlen};
	if (!t)
		return fail(&s, "no tensor to load into");
	memset(t, 0, sizeof *t);
	uint8_t *buf;
	size_t len;
	int mapped;
	if (read_file(&s, &buf, &len, &mapped))
		return -1;
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
	release_file(buf, len, mapped);
	if (!tp)
		return fail(&s, "not a TensorProto (protobuf parse failed: truncated or another message)");
	char what[320];
	bfmt(what, sizeof what, "tensor '%s'", tp->name ? tp->name : "");
	int rc = tensor_fill(&s, tp, t, what, &tp->raw_data);
	if (!rc) {
		t->name = dupstr(tp->name);
		if (!t->name)
			rc = fail(&s, "out of memory");
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (rc)
		loom_tensor_clear(t);
	return rc;
}

int loom_onnx_save_tensor(const char *path, const loom_tensor *t, const char *name, char *err, size_t errlen)
{
	sink s = {path, err, errlen};
	size_t es = t ? loom_dtype_size(t->dtype) : 0;
	if (!t || !es)
		return fail(&s, "tensor '%s': data type %s cannot be written", name ? name : "",
			    t ? loom_dtype_name(t->dtype) : "(none)");
	if (t->rank < 0 || t->rank > LOOM_MAX_RANK)
		return fail(&s, "tensor '%s': rank %d", name ? name : "", t->rank);
	int64_t numel = loom_tensor_numel(t);
	size_t bytes = (size_t)numel * es;
	if (numel && !t->data)
		return fail(&s, "tensor '%s' has no data", name ? name : "");
	Onnx__TensorProto tp;
	onnx__tensor_proto__init(&tp);
	int64_t dims[LOOM_MAX_RANK];
	for (int i = 0; i < t->rank; i++)
		dims[i] = t->dims[i];
	tp.n_dims = (size_t)t->rank;
	tp.dims = dims;
	tp.has_data_type = 1;
	tp.data_type = t->dtype;
	tp.name = (char *)(name ? name : t->name ? t->name : "");
	uint8_t *raw = malloc(bytes + 1), *buf = NULL;
	if (!raw)
		return fail(&s, "out of memory");
	if (bytes)
		copy_le(raw, t->data, bytes, es); /* host order -> little endian (the same swap) */
	tp.has_raw_data = 1;
	tp.raw_data.len = bytes;
	tp.raw_data.data = raw;
	size_t len = onnx__tensor_proto__get_packed_size(&tp);
	buf = malloc(len + 1);
	if (!buf) {
		free(raw);
		return fail(&s, "out of memory");
	}
	onnx__tensor_proto__pack(&tp, buf);
	free(raw);
	FILE *f = fopen(path, "wb");
	if (!f) {
		free(buf);
		return fail(&s, "cannot create: %s", strerror(errno));
	}
	size_t put = fwrite(buf, 1, len, f);
	free(buf);
	int werr = ferror(f);
	if (fclose(f) || put != len || werr)
		return fail(&s, "write error: %s", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------------ --input-shape */

int loom_parse_input_shape(const char *spec, loom_input_shape *s, char *err, size_t errlen)
{
	sink k = {"--input-shape", err, errlen};
	if (!spec || !s)
		return fail(&k, "no shape given");
	memset(s, 0, sizeof *s);
	const char *eq = strrchr(spec, '=');
	if (!eq || eq == spec)
		return fail(&k, "'%s': expected NAME=D0xD1x..., e.g. input=1x3x224x224", spec);
	size_t nl = (size_t)(eq - spec);
	if (nl >= LOOM_INPUT_NAME_MAX)
		return fail(&k, "'%s': input name longer than %d characters", spec, LOOM_INPUT_NAME_MAX - 1);
	memcpy(s->name, spec, nl);
	s->name[nl] = 0;
	const char *p = eq + 1;
	if (!*p)
		return fail(&k, "'%s': no dimensions after '='", spec);
	for (;;) {
		if (*p < '0' || *p > '9')
			return fail(&k, "'%s': dimension %d is not a number >= 0", spec, s->rank);
		if (s->rank == LOOM_MAX_RANK)
			return fail(&k, "'%s': more than %d dimensions", spec, LOOM_MAX_RANK);
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (errno)
			return fail(&k, "'%s': dimension %d is too large", spec, s->rank);
		s->dims[s->rank++] = v;
		p = end;
		if (!*p)
			break;
		if (*p != 'x')
			return fail(&k, "'%s': expected 'x' between dimensions, found '%c'", spec, *p);
		p++;
	}
	return 0;
}

/* ------------------------------------------------------------------ names */

/* An open-addressing table from names to indices; keys are borrowed (the
 * proto's or the graph's strings, alive as long as the table). */
typedef struct nametab {
	const char **key;
	int *val;
	size_t cap, n;
} nametab;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int tab_find(const nametab *t, const char *name)
{
	if (!t->cap)
		return -1;
	for (size_t i = hash_str(name) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->key[i])
			return -1;
		if (!strcmp(t->key[i], name))
			return t->val[i];
	}
}

static int tab_grow(nametab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	const char **key = calloc(cap, sizeof *key);
	int *val = calloc(cap, sizeof *val);
	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	for (size_t j = 0; j < t->cap; j++) {
		if (!t->key[j])
			continue;
		size_t i = hash_str(t->key[j]) & (cap - 1);
		while (key[i])
			i = (i + 1) & (cap - 1);
		key[i] = t->key[j];
		val[i] = t->val[j];
	}
	free(t->key);
	free(t->val);
	t->key = key;
	t->val = val;
	t->cap = cap;
	return 0;
}

/* -1 on out of memory; the caller has checked the name is new */
static int tab_add(nametab *t, const char *name, int v)
{
	if (2 * (t->n + 1) > t->cap && tab_grow(t))
		return -1;
	size_t i = hash_str(name) & (t->cap - 1);
	while (t->key[i])
		i = (i + 1) & (t->cap - 1);
	t->key[i] = name;
	t->val[i] = v;
	t->n++;
	return 0;
}

static void tab_free(nametab *t)
{
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ the graph */

typedef struct ctx {
	sink s;
	loom_graph *g;
	int tcap;          /* capacity of g->tensors */
	nametab tensors;   /* tensor name -> index in g->tensors */
	int *src;          /* per tensor: what made it (for messages) */
} ctx;

enum { SRC_INPUT = -1, SRC_INIT = -2 }; /* src >= 0: the node's index in the proto */

/* A new tensor named name, or -1 (out of memory; message set). */
static int add_tensor(ctx *c, const char *name, int src)
{
	loom_graph *g = c->g;
	if (g->ntensors == c->tcap) {
		int cap = c->tcap ? 2 * c->tcap : 64;
		loom_tensor *t = realloc(g->tensors, (size_t)cap * sizeof *t);
		if (!t)
			return fail(&c->s, "out of memory");
		g->tensors = t;
		int *sr = realloc(c->src, (size_t)cap * sizeof *sr);
		if (!sr)
			return fail(&c->s, "out of memory");
		c->src = sr;
		c->tcap = cap;
	}
	loom_tensor *t = &g->tensors[g->ntensors];
	memset(t, 0, sizeof *t);
	t->name = dupstr(name);
	if (!t->name)
		return fail(&c->s, "out of memory");
	int idx = g->ntensors++;
	c->src[idx] = src;
	if (tab_add(&c->tensors, t->name, idx))
		return fail(&c->s, "out of memory");
	return idx;
}

/* The node's name for messages and for the IR: its own or "<op>_<index>". */
static void node_label(const Onnx__NodeProto *np, size_t k, char *buf, size_t len)
{
	if (np->name && *np->name)
		bfmt(buf, len, "%s", np->name);
	else
		bfmt(buf, len, "%s_%zu", np->op_type ? np->op_type : "node", k);
}

/* What made tensor idx, for messages about a duplicate name. */
static void describe_src(const ctx *c, const Onnx__GraphProto *gp, int idx, char *buf, size_t len)
{
	int sr = c->src[idx];
	if (sr == SRC_INPUT)
		bfmt(buf, len, "a graph input");
	else if (sr == SRC_INIT)
		bfmt(buf, len, "an initializer");
	else {
		char label[320];
		node_label(gp->node[sr], (size_t)sr, label, sizeof label);
		bfmt(buf, len, "an output of node '%s' (%s)", label,
			 gp->node[sr]->op_type ? gp->node[sr]->op_type : "?");
	}
}

static const char *attr_type_name(int t)
{
	static const char *const names[] = {
		"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
		"STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
		"TYPE_PROTOS",
	};
	return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

/* The type of an attribute; IR version 1 files may leave it out, then it is
 * told by the field in use. */
static int attr_type(const Onnx__AttributeProto *ap)
{
	if (ap->has_type && ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
		return ap->type;
	if (ap->has_f) return LOOM_ATTR_FLOAT;
	if (ap->has_i) return LOOM_ATTR_INT;
	if (ap->has_s) return LOOM_ATTR_STRING;
	if (ap->t) return LOOM_ATTR_TENSOR;
	if (ap->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	if (ap->n_floats) return LOOM_ATTR_FLOATS;
	if (ap->n_ints) return LOOM_ATTR_INTS;
	if (ap->n_strings) return LOOM_ATTR_STRINGS;
	if (ap->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
	if (ap->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
	if (ap->sparse_tensor) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
	return 0;
}

/* where: "node 'conv1' (Conv)" */
static int attr_convert(ctx *c, const char *where, const Onnx__AttributeProto *ap, loom_attr *a)
{
	if (!ap->name || !*ap->name)
		return fail(&c->s, "%s: an attribute has no name", where);
	if (ap->ref_attr_name && *ap->ref_attr_name)
		return fail(&c->s, "%s: attribute '%s' refers to a function's attribute '%s' (only allowed in functions)",
			    where, ap->name, ap->ref_attr_name);
	a->name = dupstr(ap->name);
	if (!a->name)
		return fail(&c->s, "out of memory");
	int ty = attr_type(ap);
	a->type = ty;
	size_t n = 0;
	switch (ty) {
	case LOOM_ATTR_FLOAT:
		a->f = ap->f;
		return 0;
	case LOOM_ATTR_INT:
		a->i = ap->i;
		return 0;
	case LOOM_ATTR_STRING:
		if (!(a->s = dupbytes(&ap->s)))
			return fail(&c->s, "out of memory");
		return 0;
	case LOOM_ATTR_TENSOR: {
		if (!ap->t)
			return fail(&c->s, "%s: attribute '%s' of type TENSOR holds no tensor", where, ap->name);
		if (!(a->t = calloc(1, sizeof *a->t)))
			return fail(&c->s, "out of memory");
		char what[600];
		bfmt(what, sizeof what, "%s: attribute '%s'", where, ap->name);
		if (tensor_fill(&c->s, ap->t, a->t, what, NULL))
			return -1;
		a->t->is_const = 1;
		if (!(a->t->name = dupstr(ap->t->name && *ap->t->name ? ap->t->name : ap->name)))
			return fail(&c->s, "out of memory");
		return 0;
	}
	case LOOM_ATTR_FLOATS:
		n = ap->n_floats;
		break;
	case LOOM_ATTR_INTS:
		n = ap->n_ints;
		break;
	case LOOM_ATTR_STRINGS:
		n = ap->n_strings;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
		return fail(&c->s, "%s: attribute '%s' is a subgraph (%s): control flow not supported",
			    where, ap->name, attr_type_name(ty));
	case 0:
		return fail(&c->s, "%s: attribute '%s' has no type and no value", where, ap->name);
	default:
		return fail(&c->s, "%s: attribute '%s' has type %s: not supported", where, ap->name,
			    attr_type_name(ty));
	}
	if (n > MAX_COUNT)
		return fail(&c->s, "%s: attribute '%s' has too many values (%zu)", where, ap->name, n);
	a->n = (int)n;
	if (!n)
		return 0;
	if (ty == LOOM_ATTR_FLOATS) {
		if (!(a->floats = malloc(n * sizeof *a->floats)))
			return fail(&c->s, "out of memory");
		memcpy(a->floats, ap->floats, n * sizeof *a->floats);
	} else if (ty == LOOM_ATTR_INTS) {
		if (!(a->ints = malloc(n * sizeof *a->ints)))
			return fail(&c->s, "out of memory");
		memcpy(a->ints, ap->ints, n * sizeof *a->ints);
	} else {
		if (!(a->strings = calloc(n, sizeof *a->strings)))
			return fail(&c->s, "out of memory");
		for (size_t i = 0; i < n; i++)
			if (!(a->strings[i] = dupbytes(&ap->strings[i])))
				return fail(&c->s, "out of memory");
	}
	return 0;
}

static int is_default_domain(const char *d)
{
	return !d || !*d || !strcmp(d, "ai.onnx");
}

/* Fold a Constant node into its output tensor (an initializer). */
static int fold_constant(ctx *c, const char *where, const Onnx__NodeProto *np, loom_tensor *t)
{
	if (np->n_attribute != 1)
		return fail(&c->s, "%s: a Constant needs exactly one attribute, it has %zu", where, np->n_attribute);
	const Onnx__AttributeProto *ap = np->attribute[0];
	const char *an = ap->name ? ap->name : "";
	int ty = attr_type(ap);
	char what[600];
	bfmt(what, sizeof what, "%s: attribute '%s'", where, an);
	size_t n = 0;
	const void *src = NULL;
	if (!strcmp(an, "value") && ty == LOOM_ATTR_TENSOR && ap->t) {
		if (tensor_fill(&c->s, ap->t, t, what, NULL))
			return -1;
		t->is_const = 1;
		return 0;
	} else if (!strcmp(an, "value_float") && ty == LOOM_ATTR_FLOAT) {
		t->dtype = LOOM_DT_FLOAT;
		t->rank = 0;
		n = 1;
		src = &ap->f;
	} else if (!strcmp(an, "value_int") && ty == LOOM_ATTR_INT) {
		t->dtype = LOOM_DT_INT64;
		t->rank = 0;
		n = 1;
		src = &ap->i;
	} else if (!strcmp(an, "value_floats") && ty == LOOM_ATTR_FLOATS) {
		t->dtype = LOOM_DT_FLOAT;
		t->rank = 1;
		n = ap->n_floats;
		src = ap->floats;
	} else if (!strcmp(an, "value_ints") && ty == LOOM_ATTR_INTS) {
		t->dtype = LOOM_DT_INT64;
		t->rank = 1;
		n = ap->n_ints;
		src = ap->ints;
	} else if (!strcmp(an, "value_string") || !strcmp(an, "value_strings")) {
		return fail(&c->s, "%s: string constants not supported", what);
	} else if (!strcmp(an, "sparse_value")) {
		return fail(&c->s, "%s: sparse constants not supported", what);
	} else {
		return fail(&c->s, "%s: not a Constant value of the right type (%s)", what, attr_type_name(ty));
	}
	if (n > MAX_COUNT)
		return fail(&c->s, "%s: too many values (%zu)", what, n);
	t->dims[0] = (int64_t)n;
	size_t es = loom_dtype_size(t->dtype);
	if (!(t->data = calloc(n ? n : 1, es)))
		return fail(&c->s, "out of memory");
	if (n)
		memcpy(t->data, src, n * es);
	t->is_const = 1;
	return 0;
}

/* The type and static shape of a graph input; given fixes dynamic dims. */
static int input_type(ctx *c, const Onnx__ValueInfoProto *vi, loom_tensor *t, const loom_input_shape *given)
{
	const char *name = t->name;
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
		return fail(&c->s, "graph input '%s' has no type", name);
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
		const char *k = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "a sequence"
			: tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? "a map"
			: tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "an optional"
			: tp->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE ? "a sparse tensor" : "not a tensor";
		return fail(&c->s, "graph input '%s' is %s: not supported", name, k);
	}
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (!tt->has_elem_type || tt->elem_type == LOOM_DT_UNDEFINED)
		return fail(&c->s, "graph input '%s' has no element type", name);
	if (!loom_dtype_size(tt->elem_type))
		return fail(&c->s, "graph input '%s': data type %s (%d) not supported", name,
			    loom_dtype_name(tt->elem_type), tt->elem_type);
	t->dtype = tt->elem_type;
	const Onnx__TensorShapeProto *sh = tt->shape;
	if (given) {
		if (given->rank < 0 || given->rank > LOOM_MAX_RANK)
			return fail(&c->s, "--input-shape %s: rank %d out of range", name, given->rank);
		if (sh && sh->n_dim != (size_t)given->rank)
			return fail(&c->s, "--input-shape %s: rank %d, the model's input has rank %zu",
				    name, given->rank, sh->n_dim);
		for (int i = 0; i < given->rank; i++) {
			if (given->dims[i] < 0)
				return fail(&c->s, "--input-shape %s: dimension %d is negative", name, i);
			const Onnx__TensorShapeProto__Dimension *d = sh ? sh->dim[i] : NULL;
			if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
			    d->dim_value != given->dims[i])
				return fail(&c->s, "--input-shape %s: dimension %d is %" PRId64
					    " in the model, %" PRId64 " given", name, i, d->dim_value, given->dims[i]);
			t->dims[i] = given->dims[i];
		}
		t->rank = given->rank;
		return 0;
	}
	if (!sh)
		return fail(&c->s, "graph input '%s' has no shape (unknown rank): give it with --input-shape %s=D0xD1x...",
			    name, name);
	if (sh->n_dim > LOOM_MAX_RANK)
		return fail(&c->s, "graph input '%s': rank %zu exceeds Loom's maximum %d", name, sh->n_dim, LOOM_MAX_RANK);
	for (size_t i = 0; i < sh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0)
				return fail(&c->s, "graph input '%s': dimension %zu is negative (%" PRId64 ")",
					    name, i, d->dim_value);
			t->dims[i] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
			return fail(&c->s, "graph input '%s': dimension %zu is dynamic ('%s'): fix it with --input-shape %s=D0xD1x...",
				    name, i, d->dim_param ? d->dim_param : "", name);
		} else {
			return fail(&c->s, "graph input '%s': dimension %zu has no size: fix it with --input-shape %s=D0xD1x...",
				    name, i, name);
		}
	}
	t->rank = (int)sh->n_dim;
	return 0;
}

/* A graph output's declared type: its dtype, and its shape when static. */
static int output_type(ctx *c, const Onnx__ValueInfoProto *vi, loom_tensor *t)
{
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
		return 0; /* allowed: inference tells */
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return fail(&c->s, "graph output '%s' is not a tensor (a sequence, map or optional): not supported", t->name);
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (!tt->has_elem_type || tt->elem_type == LOOM_DT_UNDEFINED)
		return 0;
	if (!loom_dtype_size(tt->elem_type))
		return fail(&c->s, "graph output '%s': data type %s (%d) not supported", t->name,
			    loom_dtype_name(tt->elem_type), tt->elem_type);
	if (t->dtype != LOOM_DT_UNDEFINED)
		return 0; /* an input or a constant: its own type stands */
	t->dtype = tt->elem_type;
	const Onnx__TensorShapeProto *sh = tt->shape;
	if (!sh || sh->n_dim > LOOM_MAX_RANK)
		return 0;
	for (size_t i = 0; i < sh->n_dim; i++)
		if (sh->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    sh->dim[i]->dim_value < 0)
			return 0;
	for (size_t i = 0; i < sh->n_dim; i++)
		t->dims[i] = sh->dim[i]->dim_value;
	t->rank = (int)sh->n_dim;
	return 0;
}

/* Sort g->nodes topologically (stable when already sorted). */
static int topo_sort(ctx *c)
{
	loom_graph *g = c->g;
	int n = g->nnodes, rc = -1;
	int *prod = malloc(((size_t)g->ntensors + 1) * sizeof *prod);
	int *indeg = calloc((size_t)n + 1, sizeof *indeg);
	int *off = calloc((size_t)n + 2, sizeof *off);
	int *order = malloc(((size_t)n + 1) * sizeof *order);
	int *edges = NULL;
	loom_node *sorted = NULL;
	if (!prod || !indeg || !off || !order) {
		fail(&c->s, "out of memory");
		goto out;
	}
	for (int t = 0; t < g->ntensors; t++)
		prod[t] = -1;
	for (int k = 0; k < n; k++)
		for (int j = 0; j < g->nodes[k].noutputs; j++)
			prod[g->nodes[k].outputs[j]] = k;
	int sorted_already = 1;
	size_t nedges = 0;
	for (int k = 0; k < n; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t < 0 || prod[t] < 0)
				continue;
			if (prod[t] >= k)
				sorted_already = 0;
			indeg[k]++;
			off[prod[t] + 1]++;
			nedges++;
		}
	if (sorted_already) {
		rc = 0;
		goto out;
	}
	/* consumer edges of each node, CSR */
	for (int k = 0; k < n; k++)
		off[k + 1] += off[k];
	edges = malloc((nedges + 1) * sizeof *edges);
	int *fillp = calloc((size_t)n + 1, sizeof *fillp);
	if (!edges || !fillp) {
		free(fillp);
		fail(&c->s, "out of memory");
		goto out;
	}
	for (int k = 0; k < n; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t < 0 || prod[t] < 0)
				continue;
			int p = prod[t];
			edges[off[p] + fillp[p]++] = k;
		}
	free(fillp);
	/* Kahn's algorithm: order[] is the queue */
	int head = 0, tail = 0;
	for (int k = 0; k < n; k++)
		if (!indeg[k])
			order[tail++] = k;
	while (head < tail) {
		int k = order[head++];
		for (int e = off[k]; e < off[k + 1]; e++)
			if (--indeg[edges[e]] == 0)
				order[tail++] = edges[e];
	}
	if (tail < n) {
		/* walk back through unfinished producers until a node repeats:
		 * that node is on a cycle; via[k] - 1 is the input the walk took */
		int *via = calloc((size_t)n, sizeof *via);
		if (!via) {
			fail(&c->s, "out of memory");
			goto out;
		}
		int k = 0;
		while (!indeg[k])
			k++;
		while (!via[k]) {
			for (int j = 0; j < g->nodes[k].ninputs; j++) {
				int t = g->nodes[k].inputs[j];
				if (t >= 0 && prod[t] >= 0 && indeg[prod[t]]) {
					via[k] = t + 1;
					k = prod[t];
					break;
				}
			}
		}
		int t = via[k] - 1;
		free(via);
		const loom_node *nd = &g->nodes[k];
		const loom_node *pn = &g->nodes[prod[t]];
		fail(&c->s, "the nodes form a cycle: node '%s' (%s) input '%s' comes from node '%s' (%s), which depends on '%s'",
		     nd->name, nd->op_type, g->tensors[t].name, pn->name, pn->op_type, nd->name);
		goto out;
	}
	sorted = malloc((size_t)n * sizeof *sorted);
	if (!sorted) {
		fail(&c->s, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++)
		sorted[i] = g->nodes[order[i]];
	free(g->nodes);
	g->nodes = sorted;
	rc = 0;
out:
	free(prod);
	free(indeg);
	free(off);
	free(order);
	free(edges);
	return rc;
}

/* The --input-shape list: every name terminated and given once. */
static int check_shapes(ctx *c, const loom_input_shape *shapes, int nshapes)
{
	for (int i = 0; i < nshapes; i++) {
		if (strnlen(shapes[i].name, LOOM_INPUT_NAME_MAX) == LOOM_INPUT_NAME_MAX)
			return fail(&c->s, "--input-shape: input name not terminated");
		for (int j = 0; j < i; j++)
			if (!strcmp(shapes[i].name, shapes[j].name))
				return fail(&c->s, "--input-shape %s given twice", shapes[i].name);
	}
	return 0;
}

/* The initializer names into inits (old files list initializers as inputs
 * too, so the inputs are told apart by them). */
static int index_inits(ctx *c, const Onnx__GraphProto *gp, nametab *inits)
{
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const char *nm = gp->initializer[i]->name;
		if (!nm || !*nm)
			return fail(&c->s, "initializer %zu has no name", i);
		if (tab_find(inits, nm) >= 0)
			return fail(&c->s, "initializer '%s' appears twice", nm);
		if (tab_add(inits, nm, (int)i))
			return fail(&c->s, "out of memory");
	}
	return 0;
}

/* An --input-shape that names no graph input: the message lists the
 * inputs. */
static int unknown_shape(ctx *c, const nametab *inits, const loom_input_shape *shape)
{
	const loom_graph *g = c->g;
	char buf[320];
	if (tab_find(inits, shape->name) >= 0)
		return fail(&c->s, "--input-shape %s: '%s' is an initializer (a weight), not a graph input", shape->name,
			    shape->name);
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < g->ninputs && o < sizeof buf; i++) {
		int w = bfmt(buf + o, sizeof buf - o, "%s%s", i ? ", " : "", g->tensors[g->inputs[i]].name);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	return fail(&c->s, "--input-shape %s: the graph has no input '%s' (its inputs: %s)", shape->name, shape->name,
		    g->ninputs ? buf : "none");
}

/* The graph inputs that are not initializers become tensors; used[k] is set
 * when one is named by --input-shape k, and every --input-shape must be. */
static int convert_inputs(ctx *c, const Onnx__GraphProto *gp, const nametab *inits, const loom_input_shape *shapes,
			  int nshapes, int *used)
{
	loom_graph *g = c->g;
	if (!(g->inputs = calloc(gp->n_input + 1, sizeof *g->inputs)))
		return fail(&c->s, "out of memory");
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *nm = vi->name;
		if (!nm || !*nm)
			return fail(&c->s, "graph input %zu has no name", i);
		if (tab_find(inits, nm) >= 0)
			continue;
		if (tab_find(&c->tensors, nm) >= 0)
			return fail(&c->s, "graph input '%s' appears twice", nm);
		int t = add_tensor(c, nm, SRC_INPUT);
		if (t < 0)
			return -1;
		g->inputs[g->ninputs++] = t;
		for (int k = 0; k < nshapes; k++)
			if (!strcmp(shapes[k].name, nm))
				used[k] = 1;
	}
	for (int k = 0; k < nshapes; k++)
		if (!used[k])
			return unknown_shape(c, inits, &shapes[k]);
	return 0;
}

/* The graph inputs' types and shapes, once every --input-shape name is
 * known good. */
static int type_inputs(ctx *c, const Onnx__GraphProto *gp, const nametab *inits, const loom_input_shape *shapes,
		       int nshapes)
{
	loom_graph *g = c->g;
	for (size_t i = 0, j = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		if (tab_find(inits, vi->name) >= 0)
			continue;
		loom_tensor *t = &g->tensors[g->inputs[j++]];
		const loom_input_shape *given = NULL;
		for (int k = 0; k < nshapes; k++)
			if (!strcmp(shapes[k].name, vi->name))
				given = &shapes[k];
		if (input_type(c, vi, t, given))
			return -1;
	}
	return 0;
}

/* The initializers: constant tensors with their data. */
static int convert_inits(ctx *c, const Onnx__GraphProto *gp)
{
	loom_graph *g = c->g;
	char where[600];
	for (size_t i = 0; i < gp->n_initializer; i++) {
		Onnx__TensorProto *tp = gp->initializer[i];
		int t = add_tensor(c, tp->name, SRC_INIT);
		if (t < 0)
			return -1;
		bfmt(where, sizeof where, "initializer '%s'", tp->name);
		if (tensor_fill(&c->s, tp, &g->tensors[t], where, &tp->raw_data))
			return -1;
		g->tensors[t].is_const = 1;
	}
	return 0;
}

/* The first nout outputs of proto node k (label: its name for messages)
 * become tensors, a skipped optional output before a wanted one named
 * "<label>:unused<j>". A Constant's (nd NULL) is folded; any other node's
 * go to nd->outputs. */
static int node_outputs(ctx *c, const Onnx__GraphProto *gp, size_t k, size_t nout, const char *label,
			const char *where, loom_node *nd)
{
	const Onnx__NodeProto *np = gp->node[k];
	for (size_t j = 0; j < nout; j++) {
		const char *on = np->output[j];
		char unused[400];
		if (!on || !*on) {
			/* a skipped optional output before a wanted one */
			for (int u = 0;; u++) {
				bfmt(unused, sizeof unused, u ? "%s:unused%zu_%d" : "%s:unused%zu", label, j, u);
				if (tab_find(&c->tensors, unused) < 0)
					break;
			}
			on = unused;
		} else {
			int prev = tab_find(&c->tensors, on);
			if (prev >= 0) {
				char what[200];
				describe_src(c, gp, prev, what, sizeof what);
				return fail(&c->s, "%s: output '%s' is already %s", where, on, what);
			}
		}
		int t = add_tensor(c, on, (int)k);
		if (t < 0)
			return -1;
		if (!nd) {
			if (fold_constant(c, where, np, &c->g->tensors[t]))
				return -1;
		} else {
			nd->outputs[nd->noutputs++] = t;
		}
	}
	return 0;
}

/* A node's attributes into nd->attrs, no name twice. */
static int node_attrs(ctx *c, const Onnx__NodeProto *np, const char *where, loom_node *nd)
{
	if (np->n_attribute && !(nd->attrs = calloc(np->n_attribute, sizeof *nd->attrs)))
		return fail(&c->s, "out of memory");
	for (size_t j = 0; j < np->n_attribute; j++) {
		nd->nattrs++;
		if (attr_convert(c, where, np->attribute[j], &nd->attrs[j]))
			return -1;
		for (size_t i = 0; i < j; i++)
			if (!strcmp(nd->attrs[i].name, nd->attrs[j].name))
				return fail(&c->s, "%s: attribute '%s' appears twice", where, nd->attrs[j].name);
	}
	return 0;
}

/* Proto node k, pass 1: everything but its inputs. A Constant is folded
 * into its output tensor; any other node becomes the graph's next node,
 * proto_of[] keeping k. */
static int convert_node(ctx *c, const Onnx__GraphProto *gp, size_t k, int *proto_of)
{
	loom_graph *g = c->g;
	const Onnx__NodeProto *np = gp->node[k];
	char where[600], buf[320];
	node_label(np, k, buf, sizeof buf);
	const char *op = np->op_type ? np->op_type : "";
	bfmt(where, sizeof where, "node '%s' (%s)", buf, op);
	if (!*op)
		return fail(&c->s, "%s has no op_type", where);
	if (np->n_input > MAX_COUNT || np->n_output > MAX_COUNT || np->n_attribute > MAX_COUNT)
		return fail(&c->s, "%s: too many inputs, outputs or attributes", where);
	/* outputs: trailing empty names dropped */
	size_t nout = np->n_output;
	while (nout && (!np->output[nout - 1] || !*np->output[nout - 1]))
		nout--;
	if (!strcmp(op, "Constant")) {
		if (nout != 1)
			return fail(&c->s, "%s: a Constant has one output, this one %zu", where, nout);
		return node_outputs(c, gp, k, nout, buf, where, NULL);
	}
	loom_node *nd = &g->nodes[g->nnodes];
	proto_of[g->nnodes++] = (int)k;
	if (!(nd->name = dupstr(np->name && *np->name ? np->name : buf)) || !(nd->op_type = dupstr(op)) ||
	    !(nd->domain = dupstr("")) || !(nd->outputs = calloc(nout + 1, sizeof *nd->outputs)))
		return fail(&c->s, "out of memory");
	if (node_outputs(c, gp, k, nout, buf, where, nd))
		return -1;
	return node_attrs(c, np, where, nd);
}

/* Pass 2: every node's inputs, now that every tensor exists. */
static int link_inputs(ctx *c, const Onnx__GraphProto *gp, const int *proto_of)
{
	loom_graph *g = c->g;
	for (int k = 0; k < g->nnodes; k++) {
		const Onnx__NodeProto *np = gp->node[proto_of[k]];
		loom_node *nd = &g->nodes[k];
		if (!(nd->inputs = calloc(np->n_input + 1, sizeof *nd->inputs)))
			return fail(&c->s, "out of memory");
		for (size_t j = 0; j < np->n_input; j++) {
			const char *in = np->input[j];
			int t = -1;
			if (in && *in) {
				t = tab_find(&c->tensors, in);
				if (t < 0)
					return fail(&c->s,
						    "node '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
						    nd->name, nd->op_type, in);
			}
			nd->inputs[nd->ninputs++] = t;
		}
	}
	return 0;
}

/* The nodes: pass 1 for each (convert_node), then pass 2 (link_inputs). */
static int convert_nodes(ctx *c, const Onnx__GraphProto *gp)
{
	loom_graph *g = c->g;
	if (!(g->nodes = calloc(gp->n_node + 1, sizeof *g->nodes)))
		return fail(&c->s, "out of memory");
	int *proto_of = calloc(gp->n_node + 1, sizeof *proto_of); /* IR node -> proto node */
	if (!proto_of)
		return fail(&c->s, "out of memory");
	int rc = 0;
	for (size_t k = 0; k < gp->n_node && !rc; k++)
		rc = convert_node(c, gp, k, proto_of);
	if (!rc)
		rc = link_inputs(c, gp, proto_of);
	free(proto_of);
	return rc;
}

/* The graph outputs: tensors that exist, with their declared types; at
 * least one. */
static int convert_outputs(ctx *c, const Onnx__GraphProto *gp)
{
	loom_graph *g = c->g;
	if (!(g->outputs = calloc(gp->n_output + 1, sizeof *g->outputs)))
		return fail(&c->s, "out of memory");
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		const char *nm = vi->name;
		if (!nm || !*nm)
			return fail(&c->s, "graph output %zu has no name", i);
		int t = tab_find(&c->tensors, nm);
		if (t < 0)
			return fail(&c->s, "graph output '%s' is not produced by any node, initializer or graph input", nm);
		if (output_type(c, vi, &g->tensors[t]))
			return -1;
		g->outputs[g->noutputs++] = t;
	}
	if (!g->noutputs)
		return fail(&c->s, "the graph has no outputs");
	return 0;
}

/* The ONNX graph into c->g: inputs (with --input-shape), initializers,
 * nodes (Constants folded), outputs, then the nodes in topological order. */
static int convert_graph(ctx *c, const Onnx__GraphProto *gp, const loom_input_shape *shapes, int nshapes)
{
	if (gp->n_node > MAX_COUNT || gp->n_initializer > MAX_COUNT || gp->n_input > MAX_COUNT ||
	    gp->n_output > MAX_COUNT)
		return fail(&c->s, "graph too large");
	if (gp->n_sparse_initializer)
		return fail(&c->s, "sparse initializer '%s' not supported",
			    gp->sparse_initializer[0]->values && gp->sparse_initializer[0]->values->name
			    ? gp->sparse_initializer[0]->values->name : "");
	if (nshapes < 0 || (nshapes > 0 && !shapes))
		return fail(&c->s, "bad input shape list");
	int *used = NULL; /* per --input-shape: it names a graph input */
	if (nshapes && !(used = calloc((size_t)nshapes, sizeof *used)))
		return fail(&c->s, "out of memory");
	nametab inits = {0};
	int rc = check_shapes(c, shapes, nshapes);
	if (!rc)
		rc = index_inits(c, gp, &inits);
	if (!rc)
		rc = convert_inputs(c, gp, &inits, shapes, nshapes, used);
	if (!rc)
		rc = type_inputs(c, gp, &inits, shapes, nshapes);
	if (!rc)
		rc = convert_inits(c, gp);
	if (!rc)
		rc = convert_nodes(c, gp);
	if (!rc)
		rc = convert_outputs(c, gp);
	if (!rc)
		rc = topo_sort(c);
	free(used);
	tab_free(&inits);
	return rc;
}

int loom_onnx_load(const char *path, const loom_input_shape *shapes, int nshapes,
		   loom_graph **out, char *err, size_t errlen)
{
	ctx c = {{path, err, errlen}, NULL, 0, {0}, NULL};
	if (!out)
		return fail(&c.s, "no place for the graph");
	*out = NULL;
	if (!path)
		return fail(&c.s, "no file name");
	uint8_t *buf;
	size_t len;
	int mapped;
	if (read_file(&c.s, &buf, &len, &mapped))
		return -1;
	int rc = loom_onnx_load_mem(buf, len, path, shapes, nshapes, out, err, errlen);
	release_file(buf, len, mapped);
	return rc;
}

int loom_onnx_load_mem(const void *buf, size_t len, const char *path, const loom_input_shape *shapes,
		       int nshapes, loom_graph **out, char *err, size_t errlen)
{
	if (!path)
		path = "(memory)";
	ctx c = {{path, err, errlen}, NULL, 0, {0}, NULL};
	if (!out)
		return fail(&c.s, "no place for the graph");
	*out = NULL;
	if (!buf && len)
		return fail(&c.s, "no data");
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	if (!m)
		return fail(&c.s, "not an ONNX model (protobuf parse failed: truncated or not a ModelProto)");
	int rc = -1;
	if (!m->has_ir_version) {
		fail(&c.s, "not an ONNX model (no ir_version)");
		goto done;
	}
	if (m->ir_version < IR_VERSION_MIN || m->ir_version > IR_VERSION_MAX) {
		fail(&c.s, "IR version %" PRId64 " not supported (Loom reads %d to %d)", m->ir_version,
		     IR_VERSION_MIN, IR_VERSION_MAX);
		goto done;
	}
	if (!m->graph) {
		fail(&c.s, "the model has no graph");
		goto done;
	}
	/* a node of another operator domain: refused before the opsets (a
	 * model may import nothing but that domain) */
	for (size_t k = 0; k < m->graph->n_node; k++) {
		const Onnx__NodeProto *np = m->graph->node[k];
		if (!is_default_domain(np->domain)) {
			char label[320];
			node_label(np, k, label, sizeof label);
			fail(&c.s, "node '%s' (%s): operator domain '%s' not supported (only the default ONNX domain)",
			     label, np->op_type ? np->op_type : "", np->domain);
			goto done;
		}
	}
	int64_t opset = -1;
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];
		if (is_default_domain(o->domain) && o->has_version && o->version > opset)
			opset = o->version;
	}
	if (opset < 0) {
		fail(&c.s, "the model imports no opset of the default ONNX domain");
		goto done;
	}
	if (opset < LOOM_ONNX_OPSET_MIN || opset > LOOM_ONNX_OPSET_MAX) {
		fail(&c.s, "opset %" PRId64 " not supported (Loom reads opsets %d to %d)", opset,
		     LOOM_ONNX_OPSET_MIN, LOOM_ONNX_OPSET_MAX);
		goto done;
	}
	if (!(c.g = calloc(1, sizeof *c.g)) || !(c.g->path = strdup(path)) ||
	    !(c.g->name = dupstr(m->graph->name))) {
		fail(&c.s, "out of memory");
		goto done;
	}
	c.g->opset = opset;
	rc = convert_graph(&c, m->graph, shapes, nshapes);
done:
	onnx__model_proto__free_unpacked(m, NULL);
	tab_free(&c.tensors);
	free(c.src);
	if (rc) {
		loom_graph_free(c.g);
		return -1;
	}
	*out = c.g;
	return 0;
}
