/* model_write.c - writing a compiled model as a .loom ELF file
 * (loom_model_write; the format is described in modelfile.c). */
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

/* ------------------------------------------------------------------ writing */

/* A growing little-endian byte stream; oom set on the first failed growth. */
typedef struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int oom;
} wbuf;

static void w_bytes(wbuf *b, const void *src, size_t n)
{
	if (b->oom || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			cap *= 2;
		}
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void w_le(wbuf *b, uint64_t v, unsigned n)
{
	uint8_t t[8];
	for (unsigned i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	w_bytes(b, t, n);
}

static void w_u8(wbuf *b, unsigned v) { w_le(b, v & 0xffu, 1); }
static void w_u32(wbuf *b, uint32_t v) { w_le(b, v, 4); }
static void w_i32(wbuf *b, int32_t v) { w_le(b, (uint32_t)v, 4); }
static void w_u64(wbuf *b, uint64_t v) { w_le(b, v, 8); }
static void w_i64(wbuf *b, int64_t v) { w_le(b, (uint64_t)v, 8); }

static void w_f32(wbuf *b, float f)
{
	uint32_t v;
	memcpy(&v, &f, sizeof v);
	w_u32(b, v);
}

static void w_str(wbuf *b, const char *s)
{
	if (!s) {
		w_u32(b, STR_NULL);
		return;
	}
	size_t n = strlen(s);
	if (n >= STR_NULL) {
		b->oom = 1;
		return;
	}
	w_u32(b, (uint32_t)n);
	w_bytes(b, s, n);
}

/* n elements of es bytes each, host order -> little endian */
static void w_elems(wbuf *b, const void *data, size_t n, size_t es)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;
		switch (es) {
		case 1: v = p[i]; break;
		case 2: { uint16_t x; memcpy(&x, p + 2 * i, 2); v = x; break; }
		case 4: { uint32_t x; memcpy(&x, p + 4 * i, 4); v = x; break; }
		default: memcpy(&v, p + 8 * i, 8); break;
		}
		w_le(b, v, (unsigned)es);
	}
}

/* A tensor: head into b, its values (if any) into data. */
static void w_tensor(wbuf *b, wbuf *data, const loom_tensor *t)
{
	int rank = t->rank < 0 ? 0 : t->rank > LOOM_MAX_RANK ? LOOM_MAX_RANK : t->rank;
	size_t es = loom_dtype_size(t->dtype);
	int64_t n = loom_tensor_numel(t);
	int has = t->data && es && n >= 0;
	w_str(b, t->name);
	w_u32(b, (uint32_t)t->dtype);
	w_u32(b, (uint32_t)rank);
	for (int d = 0; d < rank; d++)
		w_i64(b, t->dims[d]);
	w_u8(b, t->is_const != 0);
	w_u8(b, has);
	if (has)
		w_elems(data, t->data, (size_t)n, es);
}

static void w_mtensor(wbuf *b, const loom_mtensor *mt)
{
	w_u8(b, mt->dev != 0);
	w_u8(b, mt->host != 0);
	w_u8(b, mt->raw != 0);
	w_u8(b, mt->rows != 0);
	w_u32(b, mt->h);
	w_u32(b, mt->w);
	w_u32(b, mt->c);
	w_u32(b, mt->stride);
	w_f32(b, mt->scale);
	w_i32(b, mt->zp);
	w_u64(b, mt->addr);
}

static void w_ints(wbuf *b, const int *v, int n)
{
	w_u32(b, (uint32_t)(n < 0 ? 0 : n));
	for (int i = 0; i < n; i++)
		w_i32(b, v[i]);
}

static void w_attr(wbuf *b, const loom_attr *a)
{
	int n = a->n < 0 ? 0 : a->n;
	w_str(b, a->name);
	w_u32(b, (uint32_t)a->type);
	switch (a->type) {
	case LOOM_ATTR_FLOAT: w_f32(b, a->f); break;
	case LOOM_ATTR_INT: w_i64(b, a->i); break;
	case LOOM_ATTR_STRING: w_str(b, a->s); break;
	case LOOM_ATTR_TENSOR:
		w_u8(b, a->t != NULL);
		if (a->t)
			w_tensor(b, b, a->t);
		break;
	case LOOM_ATTR_FLOATS:
		w_u32(b, (uint32_t)n);
		for (int i = 0; i < n; i++)
			w_f32(b, a->floats[i]);
		break;
	case LOOM_ATTR_INTS:
		w_u32(b, (uint32_t)n);
		for (int i = 0; i < n; i++)
			w_i64(b, a->ints[i]);
		break;
	case LOOM_ATTR_STRINGS:
		w_u32(b, (uint32_t)n);
		for (int i = 0; i < n; i++)
			w_str(b, a->strings[i]);
		break;
	default: break;
	}
}

static void w_graph(wbuf *b, const loom_graph *g)
{
	w_str(b, g->name);
	w_str(b, g->path);
	w_i64(b, g->opset);
	w_ints(b, g->inputs, g->ninputs);
	w_ints(b, g->outputs, g->noutputs);
	w_u32(b, (uint32_t)g->nnodes);
	for (int k = 0; k < g->nnodes; k++) {
		const loom_node *n = &g->nodes[k];
		w_str(b, n->name);
		w_str(b, n->op_type);
		w_str(b, n->domain);
		w_ints(b, n->inputs, n->ninputs);
		w_ints(b, n->outputs, n->noutputs);
		w_u32(b, (uint32_t)(n->nattrs < 0 ? 0 : n->nattrs));
		for (int i = 0; i < n->nattrs; i++)
			w_attr(b, &n->attrs[i]);
	}
}

static void w_layer(wbuf *b, const loom_layer *l)
{
	w_u32(b, (uint32_t)l->kind);
	w_str(b, l->name);
	for (int i = 0; i < LOOM_LAYER_MAX_NODES; i++)
		w_i32(b, l->nodes[i]);
	w_i32(b, l->in[0]);
	w_i32(b, l->in[1]);
	w_i32(b, l->out);
	w_u32(b, l->insn_first);
	w_u32(b, l->insn_count);
	w_u32(b, l->mark_id);
	w_u64(b, l->macs);
	w_u64(b, l->est_cycles);
	w_u64(b, l->dram_bytes);
	w_u32(b, l->tile_h);
	w_u32(b, l->tile_w);
	w_u32(b, l->tile_c);
	w_u32(b, l->sp_bytes);
	w_u64(b, l->const_off);
	w_u64(b, l->const_bytes);
}

static void w_step(wbuf *b, const loom_step *s)
{
	w_u32(b, (uint32_t)s->kind);
	w_i32(b, s->node);
	w_i32(b, s->tensor);
	w_u32(b, s->layer);
	w_u32(b, s->nlayers);
	w_u64(b, s->insn_addr);
	w_i32(b, s->dst);
	for (int k = 0; k < 4; k++)
		w_u32(b, s->pad[k]);
	w_i32(b, s->fill);
}

/* One ELF note (4-byte aligned name and descriptor). */
static void w_note(wbuf *b, uint32_t type, const void *desc, size_t n)
{
	static const uint8_t zero[4];
	w_u32(b, sizeof NOTE_OWNER);
	w_u32(b, (uint32_t)n);
	w_u32(b, NT_LOOM(type));
	w_bytes(b, NOTE_OWNER, sizeof NOTE_OWNER);
	w_bytes(b, zero, (4 - sizeof NOTE_OWNER % 4) % 4);
	w_bytes(b, desc, n);
	w_bytes(b, zero, (4 - n % 4) % 4);
}

/* "key=value\n" into a text buffer; the value in decimal, hex (0x...) or
 * as 8 hex digits */
enum { KV_DEC, KV_HEX, KV_HEX8 };
static void w_kv(wbuf *t, const char *key, int form, uint64_t v)
{
	char line[128];
	int n;
	if (form == KV_HEX8)
		n = snprintf(line, sizeof line, "%s=0x%08" PRIx64, key, v);
	else if (form == KV_HEX)
		n = snprintf(line, sizeof line, "%s=0x%" PRIx64, key, v);
	else
		n = snprintf(line, sizeof line, "%s=%" PRIu64, key, v);
	w_bytes(t, line, (size_t)n);
	w_bytes(t, "\n", 1);
}

static void w_notes(wbuf *b, const loom_model *m)
{
	wbuf t = {0};
	uint8_t ver[4] = {LOOM_MODEL_VERSION & 0xff, (LOOM_MODEL_VERSION >> 8) & 0xff,
			  (LOOM_MODEL_VERSION >> 16) & 0xff, (LOOM_MODEL_VERSION >> 24) & 0xffu};
	w_note(b, NT_LOOM_VERSION, ver, sizeof ver);

	w_bytes(&t, "config=", 7);
	w_bytes(&t, m->cfg.name, strnlen(m->cfg.name, sizeof m->cfg.name));
	w_bytes(&t, "\n", 1);
	w_kv(&t, "fingerprint", KV_HEX8, m->cfg.fingerprint);
	for (size_t i = 0; i < MF_NHWPARAMS; i++)
		w_kv(&t, mf_hwparams[i].name, KV_DEC, mf_hw_get(&m->cfg, i));
	b->oom |= t.oom;
	w_note(b, NT_LOOM_HWCFG, t.p, t.len);

	if (m->options)
		w_note(b, NT_LOOM_OPTIONS, m->options, strlen(m->options));
	if (m->source)
		w_note(b, NT_LOOM_SOURCE, m->source, strlen(m->source));

	t.len = 0;
	for (size_t i = 0; i < MF_NDRAM_KEYS; i++)
		w_kv(&t, mf_dram_keys[i], KV_HEX, *mf_dram_slot((loom_model *)m, i));
	b->oom |= t.oom;
	w_note(b, NT_LOOM_DRAM, t.p, t.len);
	free(t.p);
}

/* Serialize every section of m: 0, or -1 on a model the format can not hold
 * (message in err). */
static int serialize(const loom_model *m, wbuf *sec, char *err, size_t errlen)
{
	const loom_graph *g = m->graph;
	if (!g || g->ntensors < 0 || g->nnodes < 0 || (g->ntensors && (!g->tensors || !m->mt)))
		return mf_fail(err, errlen, "model has no graph or no tensor table");
	if ((m->ninsn && !m->insn) || (m->const_bytes && !m->consts) || (m->nlayers && !m->layers) ||
	    (m->nsteps && !m->steps))
		return mf_fail(err, errlen, "model has a count without its array");
	if (m->const_bytes > SIZE_MAX)
		return mf_fail(err, errlen, "const region too large");
	for (uint32_t i = 0; i < m->ninsn; i++)
		for (int k = 0; k < LOOM_INSN_WORDS; k++)
			w_u32(&sec[S_TEXT], m->insn[i].w[k]);
	w_bytes(&sec[S_CONST], m->consts, (size_t)m->const_bytes);
	w_u32(&sec[S_TENSORS], (uint32_t)g->ntensors);
	for (int i = 0; i < g->ntensors; i++) {
		w_tensor(&sec[S_TENSORS], &sec[S_CDATA], &g->tensors[i]);
		w_mtensor(&sec[S_TENSORS], &m->mt[i]);
	}
	w_graph(&sec[S_GRAPH], g);
	w_u32(&sec[S_LAYERS], m->nlayers);
	for (uint32_t i = 0; i < m->nlayers; i++)
		w_layer(&sec[S_LAYERS], &m->layers[i]);
	w_u32(&sec[S_STEPS], m->nsteps);
	for (uint32_t i = 0; i < m->nsteps; i++)
		w_step(&sec[S_STEPS], &m->steps[i]);
	w_notes(&sec[S_NOTE], m);
	for (int s = 0; s < S_COUNT; s++)
		if (sec[s].oom)
			return mf_fail(err, errlen, "out of memory");
	return 0;
}

static int elf_write(const char *path, int fd, wbuf *sec, const loom_model *m, char *err, size_t errlen)
{
	static const char shstr_name[] = ".shstrtab";
	wbuf shstr = {0};
	uint32_t name_off[S_COUNT + 1];
	uint8_t empty[1] = {0}; /* d_buf of an empty section */
	int rc = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return mf_fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	Elf64_Ehdr *eh = e ? elf64_newehdr(e) : NULL;
	if (!eh) {
		mf_fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
		goto out;
	}
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_REL;
	eh->e_machine = EM_NONE;
	eh->e_version = EV_CURRENT;

	w_bytes(&shstr, "", 1);
	for (int s = 0; s <= S_COUNT; s++) {
		const char *nm = s < S_COUNT ? mf_sec_info[s].name : shstr_name;
		name_off[s] = (uint32_t)shstr.len;
		w_bytes(&shstr, nm, strlen(nm) + 1);
	}
	if (shstr.oom) {
		mf_fail(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (int s = 0; s <= S_COUNT; s++) {
		wbuf *b = s < S_COUNT ? &sec[s] : &shstr;
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = scn ? elf_newdata(scn) : NULL;
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;
		if (!d || !sh) {
			mf_fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
			goto out;
		}
		d->d_buf = b->len ? b->p : empty;
		d->d_size = b->len;
		d->d_type = ELF_T_BYTE;
		d->d_version = EV_CURRENT;
		d->d_align = s == S_TEXT ? LOOM_INSN_BYTES : s == S_CONST || s == S_COUNT ? 1 : 4;
		sh->sh_name = name_off[s];
		sh->sh_type = s < S_COUNT ? mf_sec_info[s].type : SHT_STRTAB;
		sh->sh_addralign = d->d_align;
		if (s == S_TEXT) {
			sh->sh_addr = m->text_base;
			sh->sh_entsize = LOOM_INSN_BYTES;
		} else if (s == S_CONST) {
			sh->sh_addr = m->const_base;
		}
		if (s == S_COUNT)
			eh->e_shstrndx = (Elf64_Half)elf_ndxscn(scn);
	}
	if (elf_update(e, ELF_C_WRITE) < 0) {
		mf_fail(err, errlen, "%s: libelf: %s", path, elf_errmsg(-1));
		goto out;
	}
	rc = 0;
out:
	if (e)
		elf_end(e);
	free(shstr.p);
	return rc;
}

/* Copies the whole of file descriptor from (at its start) to path. */
static int copy_to(int from, const char *path, char *err, size_t errlen)
{
	int to = open(path, O_WRONLY | O_TRUNC);
	if (to < 0)
		return mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	char buf[65536];
	ssize_t n = 0;
	int rc = lseek(from, 0, SEEK_SET) ? -1 : 0;
	while (!rc && (n = read(from, buf, sizeof buf)) > 0)
		for (ssize_t o = 0, w; o < n && !rc; o += w)
			if ((w = write(to, buf + o, (size_t)(n - o))) < 0)
				rc = -1;
	if (rc || n < 0)
		rc = mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (close(to) && !rc)
		rc = mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	return rc;
}

/* A regular file (or a new one) is written to a temporary file beside it
 * and renamed over it once complete, so a failed write leaves the old file
 * as it was and no partial one. Anything else (a device such as /dev/null,
 * a FIFO) gets the complete file copied into it from a temporary file in
 * TMPDIR (libelf writes only regular files), and is never removed. */
static int write_file(const char *path, wbuf *sec, const loom_model *m, char *err, size_t errlen)
{
	struct stat st;
	int special = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	const char *td = getenv("TMPDIR");
	if (!td || !*td)
		td = "/tmp";
	size_t n = strlen(special ? td : path) + sizeof "/loom.tmpXXXXXX";
	char *tmp = malloc(n);
	if (!tmp)
		return mf_fail(err, errlen, "%s: out of memory", path);
	snprintf(tmp, n, special ? "%s/loom.tmpXXXXXX" : "%s.tmpXXXXXX", special ? td : path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int rc = mf_fail(err, errlen, "%s: %s: %s", path, tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	mode_t um = umask(0);
	umask(um);
	int rc = fchmod(fd, 0644 & ~um) ? mf_fail(err, errlen, "%s: %s", path, strerror(errno)) : 0;
	if (!rc)
		rc = elf_write(path, fd, sec, m, err, errlen);
	if (!rc && special)
		rc = copy_to(fd, path, err, errlen);
	if (close(fd) && !rc)
		rc = mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (!rc && !special && rename(tmp, path))
		rc = mf_fail(err, errlen, "%s: %s", path, strerror(errno));
	if (rc || special)
		unlink(tmp);
	free(tmp);
	return rc;
}

int loom_model_write(const loom_model *m, const char *path, char *err, size_t errlen)
{
	wbuf sec[S_COUNT];
	int rc;
	if (!m || !path)
		return mf_fail(err, errlen, "loom_model_write: NULL argument");
	memset(sec, 0, sizeof sec);
	rc = serialize(m, sec, err, errlen);
	if (rc) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", err ? err : "");
		mf_fail(err, errlen, "%s: %s", path, msg);
		goto out;
	}
	rc = write_file(path, sec, m, err, errlen);
out:
	for (int s = 0; s < S_COUNT; s++)
		free(sec[s].p);
	return rc;
}

