/* npy.c - the CLI's reader of NumPy .npy files (`loom run --input
 * NAME=FILE.npy`): format versions 1.0, 2.0 and 3.0, a little-endian
 * C-order array of float32, int64, int32, uint8 or int8 into a
 * loom_tensor. Strict: the magic, the header dictionary (exactly the keys
 * 'descr', 'fortran_order' and 'shape', each once, nothing else), the
 * shape (at most LOOM_MAX_RANK dimensions) and the data size (exactly the
 * array's bytes, nothing after them) are checked, and every refusal names
 * the file and what is wrong with it. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define NPY_MAX_BYTES ((size_t)1 << 32) /* 4 GiB: more than any model input */

static int npy_fail(char *err, size_t len, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int npy_fail(char *err, size_t len, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(err, len, "%s: ", path);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* the header dictionary: a cursor and what it found */
typedef struct npy_hdr {
	const char *p, *end;
	char descr[16];
	int fortran;     /* -1 until seen */
	int rank;        /* -1 until seen */
	int64_t dims[LOOM_MAX_RANK];
} npy_hdr;

static void skip_ws(npy_hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t'))
		h->p++;
}

static int eat(npy_hdr *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return 1;
	}
	return 0;
}

/* a quoted Python string ('...' or "...") without escapes into buf */
static int quoted(npy_hdr *h, char *buf, size_t len)
{
	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	char q = *h->p++;
	size_t n = 0;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || n + 1 >= len)
			return -1;
		buf[n++] = *h->p++;
	}
	if (h->p >= h->end)
		return -1;
	h->p++;
	buf[n] = 0;
	return 0;
}

/* (d0, d1, ...) with an optional trailing comma; () is a scalar */
static int shape_tuple(npy_hdr *h, const char *path, char *err, size_t len)
{
	if (!eat(h, '('))
		return npy_fail(err, len, path, "header: 'shape' is not a tuple");
	h->rank = 0;
	while (!eat(h, ')')) {
		skip_ws(h);
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return npy_fail(err, len, path, "header: 'shape' holds something other than non-negative integers");
		int64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return npy_fail(err, len, path, "header: a 'shape' dimension is too large");
			v = 10 * v + (*h->p++ - '0');
		}
		if (h->rank == LOOM_MAX_RANK)
			return npy_fail(err, len, path, "header: 'shape' has more than %d dimensions", LOOM_MAX_RANK);
		h->dims[h->rank++] = v;
		if (!eat(h, ',')) {
			if (!eat(h, ')'))
				return npy_fail(err, len, path, "header: 'shape' is not a tuple of integers");
			break;
		}
	}
	return 0;
}

/* {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
static int parse_dict(npy_hdr *h, const char *path, char *err, size_t len)
{
	h->fortran = h->rank = -1;
	h->descr[0] = 0;
	if (!eat(h, '{'))
		return npy_fail(err, len, path, "header is not a dictionary");
	while (!eat(h, '}')) {
		char key[32];
		if (quoted(h, key, sizeof key) || !eat(h, ':'))
			return npy_fail(err, len, path, "header: expected 'key': value");
		if (!strcmp(key, "descr") && !h->descr[0]) {
			if (quoted(h, h->descr, sizeof h->descr) || !h->descr[0])
				return npy_fail(err, len, path, "header: 'descr' is not a type string (structured arrays "
								"are not supported)");
		} else if (!strcmp(key, "fortran_order") && h->fortran < 0) {
			skip_ws(h);
			if (h->end - h->p >= 4 && !strncmp(h->p, "True", 4))
				h->fortran = 1, h->p += 4;
			else if (h->end - h->p >= 5 && !strncmp(h->p, "False", 5))
				h->fortran = 0, h->p += 5;
			else
				return npy_fail(err, len, path, "header: 'fortran_order' is neither True nor False");
		} else if (!strcmp(key, "shape") && h->rank < 0) {
			if (shape_tuple(h, path, err, len))
				return -1;
		} else {
			return npy_fail(err, len, path, "header: unexpected or repeated key '%s'", key);
		}
		if (!eat(h, ',')) {
			if (!eat(h, '}'))
				return npy_fail(err, len, path, "header: expected ',' or '}' after '%s'", key);
			break;
		}
	}
	skip_ws(h);
	if (h->p != h->end)
		return npy_fail(err, len, path, "header: text after the dictionary");
	if (!h->descr[0] || h->fortran < 0 || h->rank < 0)
		return npy_fail(err, len, path, "header lacks '%s'",
				!h->descr[0] ? "descr" : h->fortran < 0 ? "fortran_order" : "shape");
	return 0;
}

static int npy_dtype(const char *descr, const char *path, char *err, size_t len)
{
	static const struct {
		const char *descr[2];
		int dtype;
	} tab[] = {
		{{"<f4", NULL}, LOOM_DT_FLOAT}, {{"<i8", NULL}, LOOM_DT_INT64}, {{"<i4", NULL}, LOOM_DT_INT32},
		{{"|u1", "<u1"}, LOOM_DT_UINT8}, {{"|i1", "<i1"}, LOOM_DT_INT8},
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		for (int k = 0; k < 2; k++)
			if (tab[i].descr[k] && !strcmp(descr, tab[i].descr[k]))
				return tab[i].dtype;
	if (descr[0] == '>')
		return npy_fail(err, len, path, "big-endian data ('%s') is not supported: save it little-endian "
						"(a.astype('<%s'))", descr, descr + 1);
	return npy_fail(err, len, path, "data type '%s' is not supported (float32 '<f4', int64 '<i8', int32 '<i4', "
					"uint8 '|u1', int8 '|i1')", descr);
}

/* the whole file, at most NPY_MAX_BYTES */
static unsigned char *slurp(const char *path, size_t *n, char *err, size_t len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		npy_fail(err, len, path, "cannot open: %s", strerror(errno));
		return NULL;
	}
	struct stat st;
	int reg = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
	if (!reg || (uint64_t)st.st_size > NPY_MAX_BYTES + 4096) {
		fclose(f);
		npy_fail(err, len, path, reg ? "file too large" : "not a regular file");
		return NULL;
	}
	*n = (size_t)st.st_size;
	unsigned char *b = malloc(*n + 1);
	if (!b || fread(b, 1, *n, f) != *n) {
		npy_fail(err, len, path, b ? "read error" : "out of memory");
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

int tool_load_npy(const char *path, loom_tensor *t, char *err, size_t len)
{
	memset(t, 0, sizeof *t);
	size_t n = 0;
	unsigned char *b = slurp(path, &n, err, len);
	if (!b)
		return -1;
	int rc = -1;
	if (n < 10 || memcmp(b, "\x93NUMPY", 6)) {
		npy_fail(err, len, path, "not a .npy file (no \\x93NUMPY magic)");
		goto out;
	}
	if (b[6] < 1 || b[6] > 3 || b[7] != 0) {
		npy_fail(err, len, path, ".npy format version %u.%u is not supported (1.0, 2.0, 3.0)", b[6], b[7]);
		goto out;
	}
	size_t hl = b[6] == 1 ? (size_t)(b[8] | b[9] << 8) : 0, at = b[6] == 1 ? 10 : 12;
	if (b[6] > 1 && n >= 12)
		hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
	if (n < at || hl > n - at || hl == 0) {
		npy_fail(err, len, path, "truncated header (header length %zu, file %zu bytes)", hl, n);
		goto out;
	}
	if (b[at + hl - 1] != '\n') {
		npy_fail(err, len, path, "the header (%zu bytes) does not end in a newline", hl);
		goto out;
	}
	npy_hdr h = {.p = (const char *)b + at, .end = (const char *)b + at + hl - 1};
	if (memchr(h.p, 0, hl - 1)) {
		npy_fail(err, len, path, "header holds a NUL byte");
		goto out;
	}
	if (parse_dict(&h, path, err, len))
		goto out;
	int dt = npy_dtype(h.descr, path, err, len);
	if (dt < 0)
		goto out;
	int64_t numel = 1;
	for (int i = 0; i < h.rank; i++)
		if (__builtin_mul_overflow(numel, h.dims[i], &numel) || (uint64_t)numel > NPY_MAX_BYTES) {
			npy_fail(err, len, path, "shape too large");
			goto out;
		}
	if (h.fortran && h.rank > 1) {
		npy_fail(err, len, path, "Fortran-order (column-major) arrays are not supported: save "
					 "np.ascontiguousarray(a)");
		goto out;
	}
	size_t want = (size_t)numel * loom_dtype_size(dt), have = n - at - hl;
	if (have != want) {
		char shp[160] = "";
		for (int i = 0, k = 0; i < h.rank && k < (int)sizeof shp - 24; i++)
			k += snprintf(shp + k, sizeof shp - (size_t)k, "%s%lld", i ? "x" : "", (long long)h.dims[i]);
		npy_fail(err, len, path, "holds %zu data bytes, '%s' [%s] needs %zu", have, h.descr, shp, want);
		goto out;
	}
	t->data = malloc(want + 1);
	if (!t->data) {
		npy_fail(err, len, path, "out of memory");
		goto out;
	}
	size_t es = loom_dtype_size(dt);
	for (size_t i = 0; i < want; i += es) /* little endian -> host order */
		for (size_t k = 0; k < es; k++)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			((unsigned char *)t->data)[i + k] = b[at + hl + i + es - 1 - k];
#else
			((unsigned char *)t->data)[i + k] = b[at + hl + i + k];
#endif
	t->dtype = dt;
	t->rank = h.rank;
	for (int i = 0; i < h.rank; i++)
		t->dims[i] = h.dims[i];
	rc = 0;
out:
	free(b);
	return rc;
}
