/* builder.c - what the conv and vector-layer builders share: error
 * messages, tile geometry, the search over tile sizes, the instruction
 * emitter and its LOAD helpers. */
#include "compiler/npu/npu_internal.h"

#include <stdarg.h>
#include <stdio.h>

int npu_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

void npu_dim_tile(const dimg *g, uint32_t o0, uint32_t t, dtile *r)
{
	r->o0 = o0;
	r->t = t;
	if (g->k == 1 && !g->plo && !g->phi) {
		r->tin = r->valid = t;
		r->pl = r->ph = 0;
		r->first = o0 * g->s;
		return;
	}
	int64_t i0 = (int64_t)o0 * g->s - g->plo;
	int64_t i1 = (int64_t)(o0 + t - 1) * g->s + g->ek - 1 - g->plo;
	r->tin = (uint32_t)(i1 - i0 + 1);
	r->pl = i0 < 0 ? (uint32_t)-i0 : 0;
	r->ph = i1 > (int64_t)g->in - 1 ? (uint32_t)(i1 - (g->in - 1)) : 0;
	r->valid = r->tin - r->pl - r->ph;
	r->first = i0 < 0 ? 0 : (uint32_t)i0;
}

int npu_tiles_load(const dimg *g, uint32_t t)
{
	if (g->plo < g->ek && g->phi < g->ek)
		return 1;
	uint32_t last = (g->out - 1) / t * t;
	return (int64_t)t - 1 >= (int64_t)g->plo - (int64_t)(g->ek - 1) &&
	       (int64_t)last * g->s - g->plo <= (int64_t)g->in - 1;
}

int npu_distinct_sizes(uint32_t n, uint32_t maxv, uint32_t hint, uint32_t *out, int cap)
{
	int k = 0;
	if (hint) {
		out[k++] = hint;
		return k;
	}
	uint32_t prev = 0;
	for (uint32_t parts = 1; parts <= n && k < cap; parts++) {
		uint32_t v = cdiv(n, parts);
		if (v == prev || v > maxv)
			continue;
		prev = v;
		out[k++] = v;
	}
	return k;
}

void npu_fset(emitter *e, loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v) && !e->bad) {
		e->bad = 1;
		e->badf = f;
	}
}

void npu_emit(emitter *e, const loom_insn *in)
{
	if (loom_prog_add(e->prog, in))
		e->oom = 1;
}

loom_insn npu_mk_load(emitter *e, const xfer *x)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_LOAD;
	npu_fset(e, &in, LOOM_F_LOAD_TARGET, x->mem);
	npu_fset(e, &in, LOOM_F_LOAD_PAD_VALUE, x->pad);
	npu_fset(e, &in, LOOM_F_LOAD_ROW_WORDS, x->row_bytes / 4);
	npu_fset(e, &in, LOOM_F_LOAD_DRAM_ADDR, x->dram);
	npu_fset(e, &in, LOOM_F_LOAD_MEM_ADDR, x->addr);
	npu_fset(e, &in, LOOM_F_LOAD_STRIDE1, x->s1);
	npu_fset(e, &in, LOOM_F_LOAD_STRIDE2, x->s2);
	npu_fset(e, &in, LOOM_F_LOAD_STRIDE3, x->s3);
	npu_fset(e, &in, LOOM_F_LOAD_N1, x->n1);
	npu_fset(e, &in, LOOM_F_LOAD_N2, x->n2);
	npu_fset(e, &in, LOOM_F_LOAD_N3, x->n3);
	npu_fset(e, &in, LOOM_F_LOAD_PAD_TOP, x->pt);
	npu_fset(e, &in, LOOM_F_LOAD_PAD_BOTTOM, x->pb);
	npu_fset(e, &in, LOOM_F_LOAD_PAD_LEFT, x->pl);
	npu_fset(e, &in, LOOM_F_LOAD_PAD_RIGHT, x->pr);
	e->rd_bytes += (uint64_t)x->n1 * x->n2 * x->n3 * x->row_bytes;
	return in;
}

void npu_lin_load(emitter *e, loom_insn *out, int *n, unsigned target, uint32_t dram, uint32_t addr,
		     uint64_t lines, uint32_t row_bytes)
{
	while (lines && *n < 8) {
		uint32_t n1 = (uint32_t)(lines < 4095 ? lines : 4095);
		uint32_t n2 = (uint32_t)(lines / n1 < 4095 ? lines / n1 : 4095);
		xfer x = {.mem = target, .row_bytes = row_bytes, .dram = dram, .addr = addr, .s1 = row_bytes,
			  .s2 = n1 * row_bytes, .n1 = n1, .n2 = n2, .n3 = 1};
		out[(*n)++] = npu_mk_load(e, &x);
		dram += n1 * n2 * row_bytes;
		addr += n1 * n2;
		lines -= (uint64_t)n1 * n2;
	}
	if (lines)
		e->bad = 1;
}

void npu_emit_load(emitter *e, const xfer *x)
{
	loom_insn in = npu_mk_load(e, x);
	npu_emit(e, &in);
}

uint64_t npu_stage_place(uint64_t *at, uint64_t n)
{
	uint64_t a = (*at + 63) & ~63ull;
	*at = a + n;
	return a;
}
