/* bo.c - buffer objects over device DRAM (include/loom/loom.h): first-fit
 * allocation with alignment, fixed-address allocation, host copies in and
 * out with range checks. The per-device table (struct loom_mem) is sorted
 * by address, so a gap search is one pass. loom_bo_alloc and
 * loom_bo_alloc_at come in through dev.c with the device's table; a buffer
 * object finds its table, and through it the device's DRAM, by itself. */
#include "bo.h"

#include <stdlib.h>
#include <string.h>

#include "hwio.h"

#define BO_DEFAULT_ALIGN 64u

int loom_mem_init(struct loom_mem *m, struct loom_hwio *io, uint64_t dram_bytes)
{
	memset(m, 0, sizeof *m);
	m->io = io;
	m->dram_bytes = dram_bytes;
	m->cap = 16;
	m->v = calloc(m->cap, sizeof *m->v);
	return m->v ? 0 : -1;
}

void loom_mem_fini(struct loom_mem *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* Insert a new object for [addr, addr+size) at index i of the table. */
static int mem_insert(struct loom_mem *m, size_t i, uint64_t addr, uint64_t size, int internal, loom_bo **out)
{
	if (m->n == m->cap) {
		loom_bo **nv = realloc(m->v, 2 * m->cap * sizeof *nv);
		if (!nv)
			return loom_hwio_fail(m->io, LOOM_ENOMEM, "buffer object: out of host memory");
		m->v = nv;
		m->cap *= 2;
	}
	loom_bo *bo = calloc(1, sizeof *bo);
	if (!bo)
		return loom_hwio_fail(m->io, LOOM_ENOMEM, "buffer object: out of host memory");
	bo->mem = m;
	bo->addr = addr;
	bo->size = size;
	bo->internal = internal;
	memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof *m->v);
	m->v[i] = bo;
	m->n++;
	*out = bo;
	return LOOM_OK;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

int loom_mem_alloc(struct loom_mem *m, uint64_t size, uint64_t align, int top, int internal, loom_bo **out)
{
	if (size == 0 || size > m->dram_bytes)
		return loom_hwio_fail(m->io, size ? LOOM_ENOMEM : LOOM_EINVAL,
				      "buffer object of %llu bytes: %s", (unsigned long long)size,
				      size ? "larger than device DRAM" : "size must be > 0");
	/* gap i lies between object i-1 and object i (0..n) */
	for (size_t k = 0; k <= m->n; k++) {
		size_t i = top ? m->n - k : k;
		uint64_t lo = i ? m->v[i - 1]->addr + m->v[i - 1]->size : 0;
		uint64_t hi = i < m->n ? m->v[i]->addr : m->dram_bytes;
		uint64_t a = top ? (hi >= size ? (hi - size) & ~(align - 1) : 0) : align_up(lo, align);
		if (a >= lo && a <= hi && hi - a >= size && (!top || hi >= size))
			return mem_insert(m, i, a, size, internal, out);
	}
	return loom_hwio_fail(m->io, LOOM_ENOMEM, "no %llu-byte gap aligned to %llu in the %llu-byte device DRAM",
			      (unsigned long long)size, (unsigned long long)align, (unsigned long long)m->dram_bytes);
}

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

int loom_mem_bo_alloc(struct loom_mem *m, uint64_t size, uint64_t align, loom_bo **out)
{
	if (out)
		*out = NULL;
	if (!m)
		return LOOM_EINVAL;
	if (!out)
		return loom_hwio_fail(m->io, LOOM_EINVAL, "loom_bo_alloc: NULL out");
	if (align == 0)
		align = BO_DEFAULT_ALIGN;
	if (!is_pow2(align))
		return loom_hwio_fail(m->io, LOOM_EINVAL, "loom_bo_alloc: alignment %llu is not a power of two",
				      (unsigned long long)align);
	return loom_mem_alloc(m, size, align, 0, 0, out);
}

int loom_mem_bo_alloc_at(struct loom_mem *m, uint64_t addr, uint64_t size, loom_bo **out)
{
	if (out)
		*out = NULL;
	if (!m)
		return LOOM_EINVAL;
	if (!out)
		return loom_hwio_fail(m->io, LOOM_EINVAL, "loom_bo_alloc_at: NULL out");
	if (size == 0)
		return loom_hwio_fail(m->io, LOOM_EINVAL, "loom_bo_alloc_at: size must be > 0");
	if (addr >= m->dram_bytes || size > m->dram_bytes - addr)
		return loom_hwio_fail(m->io, LOOM_ERANGE, "loom_bo_alloc_at: [%#llx, +%#llx) is outside the %llu-byte DRAM",
				      (unsigned long long)addr, (unsigned long long)size,
				      (unsigned long long)m->dram_bytes);
	size_t i = 0;
	while (i < m->n && m->v[i]->addr + m->v[i]->size <= addr)
		i++;
	if (i < m->n && m->v[i]->addr < addr + size)
		return loom_hwio_fail(m->io, LOOM_EBUSY, "loom_bo_alloc_at: [%#llx, +%#llx) overlaps %s [%#llx, +%#llx)",
				      (unsigned long long)addr, (unsigned long long)size,
				      m->v[i]->internal ? "the driver's boot block and rings" : "a buffer object",
				      (unsigned long long)m->v[i]->addr, (unsigned long long)m->v[i]->size);
	return mem_insert(m, i, addr, size, 0, out);
}

void loom_bo_free(loom_bo *bo)
{
	if (!bo)
		return;
	struct loom_mem *m = bo->mem;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i] == bo) {
			memmove(m->v + i, m->v + i + 1, (m->n - i - 1) * sizeof *m->v);
			m->n--;
			free(bo);
			return;
		}
}

uint64_t loom_bo_addr(const loom_bo *bo) { return bo ? bo->addr : 0; }
uint64_t loom_bo_size(const loom_bo *bo) { return bo ? bo->size : 0; }

static int bo_range(loom_bo *bo, uint64_t off, size_t len, const void *p, const char *fn)
{
	if (!bo)
		return LOOM_EINVAL;
	if (!p && len)
		return loom_hwio_fail(bo->mem->io, LOOM_EINVAL, "%s: NULL host buffer", fn);
	if (off > bo->size || len > bo->size - off)
		return loom_hwio_fail(bo->mem->io, LOOM_ERANGE,
				      "%s: [%llu, +%zu) is outside the %llu-byte buffer object at %#llx", fn,
				      (unsigned long long)off, len, (unsigned long long)bo->size,
				      (unsigned long long)bo->addr);
	return LOOM_OK;
}

int loom_bo_write(loom_bo *bo, uint64_t off, const void *src, size_t len)
{
	int rc = bo_range(bo, off, len, src, "loom_bo_write");
	return rc ? rc : len ? loom_hwio_dram_write(bo->mem->io, bo->addr + off, src, len) : LOOM_OK;
}

int loom_bo_read(loom_bo *bo, uint64_t off, void *dst, size_t len)
{
	int rc = bo_range(bo, off, len, dst, "loom_bo_read");
	return rc ? rc : len ? loom_hwio_dram_read(bo->mem->io, bo->addr + off, dst, len) : LOOM_OK;
}
