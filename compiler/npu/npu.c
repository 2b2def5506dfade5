/* npu.c - the NPU back end (program builders) of Loom (compiler/npu/npu.h): plans the
 * tiling of one int8 conv2d / GEMM layer for a configuration, packs its
 * weights and requantization parameters, emits the LOAD / MATMUL / STORE
 * program with its dependency tokens, and statically verifies programs
 * (decoder checks, token balance, race freedom per docs/ISA.md).
 *
 * Program shape. The output is cut into tiles of th x tw pixels; the input
 * channels into chunks of kc blocks of R channels (and, only when nothing
 * else fits the scratchpad, the kernel rows into chunks of kyc rows); the
 * output channels into passes of g blocks of C channels. A *step* is one
 * (pass, tile, chunk): LOAD(s) brings the tile's input chunk (padding
 * included) into input buffer s % 2, then one MATMUL per output block of
 * the pass accumulates into that block's ACC tile; after the last chunk of
 * a tile, one STORE per block requantizes its ACC tile to DRAM. A *job*
 * (pass, tile, block) owns ACC tile buffer j % nslots.
 *
 * Weights are either resident for a pass (one region, or two when passes
 * chain so the next pass's weights load while this one computes) or, when
 * they do not fit, streamed per step into weight buffer s % 2. Resident
 * weights load progressively: the steps of the pass's first tile each bring
 * their chunk's part of every block, block by block, each block's part with
 * its own L->C token so its MATMUL starts as soon as it is in; with chained
 * passes, steps 1.. of a pass each prefetch a share of the next pass's
 * weights into the other region.
 *
 * Tokens (within a segment, steps s and jobs j numbered from 0):
 *   LOAD(s)  first insn pops C->L when s >= 2 (buffer s%2 free again);
 *            the last insn the step's MATMULs need pushes L->C (one push
 *            per block when the step loads resident weights).
 *   MATMUL   first of step s pops L->C (every one, in a step that loads
 *            resident weights); last of step s pushes C->L when LOAD(s+2)
 *            exists; the first chunk's MATMUL of job j pops S->C when
 *            j >= nslots; the last chunk's pushes C->S.
 *   STORE(j) pops C->S; pushes S->C when job j + nslots exists.
 * Every pop is matched by an earlier push in program order, every counter
 * returns to zero at the segment's closing MARK (a barrier). Passes share a
 * segment ("chained") when every block's params stay in ACC and the weights
 * are streamed or have two regions (a region written by LOAD(s), s >= 1 in
 * a pass, was last read by the pass before the previous one, which ended
 * before step s-2: the C->L pop orders it); otherwise each pass is its own
 * segment. The ACC params load at the start of a segment, before LOAD(0),
 * so the chain LOAD(0) -> MATMUL -> STORE orders them before every STORE.
 * loom_prog_verify() checks all of this on the emitted program.
 *
 * The planner tries every tiling (distinct tile sizes, chunk sizes, blocks
 * per pass, weights resident or streamed) that fits SP, ACC and the field
 * widths, and keeps the fastest by a cost model of the C model's timing plus
 * what the RTL adds: the load DMA moves one SP line per burst with
 * dma_outstanding bursts in flight, and activation reads win a shared bank
 * over weight reads and loads. Streamed weights are chosen only when more
 * than 1% faster than resident ones. */
#include "compiler/npu/npu.h"
#include "common/timing.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t cdiv(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }
static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* ------------------------------------------------------------------ */
/* programs */

void loom_prog_init(loom_prog *p) { memset(p, 0, sizeof *p); }

void loom_prog_free(loom_prog *p)
{
	free(p->insn);
	memset(p, 0, sizeof *p);
}

int loom_prog_add(loom_prog *p, const loom_insn *in)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		loom_insn *n = realloc(p->insn, cap * sizeof *n);
		if (!n)
			return -1;
		p->insn = n;
		p->cap = cap;
	}
	p->insn[p->n++] = *in;
	return 0;
}

int loom_prog_finish(loom_prog *p)
{
	loom_insn f;
	memset(&f, 0, sizeof f);
	f.w[0] = LOOM_OP_FINISH;
	return loom_prog_add(p, &f);
}

int loom_prog_write(loom_hw *hw, const loom_prog *p, uint64_t addr)
{
	size_t nb = loom_prog_bytes(p);
	uint8_t *b = malloc(nb ? nb : 1);
	if (!b) {
		snprintf(hw->err, sizeof hw->err, "loom_prog_write: out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->n; i++)
		for (int w = 0; w < LOOM_INSN_WORDS; w++)
			for (int k = 0; k < 4; k++)
				b[i * LOOM_INSN_BYTES + 4 * w + k] = (uint8_t)(p->insn[i].w[w] >> (8 * k));
	int r = loom_hw_dram_write(hw, addr, b, nb);
	free(b);
	return r;
}

void loom_prog_dump(const loom_prog *p, uint64_t addr, FILE *f)
{
	char buf[256];
	for (size_t i = 0; i < p->n; i++) {
		loom_insn_disasm(&p->insn[i], buf, sizeof buf);
		fprintf(f, "%08llx  %s\n", (unsigned long long)(addr + i * LOOM_INSN_BYTES), buf);
	}
}

/* ------------------------------------------------------------------ */
/* verification */

enum { T_LC, T_CL, T_CS, T_SC }; /* token counters: L->C, C->L, C->S, S->C */
enum { SPC_SP, SPC_ACC, SPC_DRAM };

typedef struct vrange {
	int space, write;
	uint64_t lo, hi; /* [lo, hi) */
} vrange;

typedef struct vinfo {
	int q;            /* queue, -1 for MARK/FINISH */
	long pos;         /* position in its queue */
	long vc[3];       /* per queue: last position finished before this starts */
	int nr;
	vrange r[4];
} vinfo;

#define GF(in, f) loom_insn_get(in, LOOM_F_##f)

static uint64_t span_end(const loom_insn *in, int store)
{
	uint64_t e = store ? GF(in, STORE_DRAM_ADDR) : GF(in, LOAD_DRAM_ADDR);
	if (store) {
		e += (uint64_t)(GF(in, STORE_N3) - 1) * GF(in, STORE_STRIDE3);
		e += (uint64_t)(GF(in, STORE_N2) - 1) * GF(in, STORE_STRIDE2);
		e += (uint64_t)(GF(in, STORE_N1) - 1) * GF(in, STORE_STRIDE1);
		e += 4u * GF(in, STORE_ROW_WORDS);
	} else {
		e += (uint64_t)(GF(in, LOAD_N3) - 1) * GF(in, LOAD_STRIDE3);
		e += (uint64_t)(GF(in, LOAD_N2) - 1) * GF(in, LOAD_STRIDE2);
		e += (uint64_t)(GF(in, LOAD_N1) - 1) * GF(in, LOAD_STRIDE1);
		e += 4u * GF(in, LOAD_ROW_WORDS);
	}
	return e;
}

static void add_range(vinfo *v, int space, int write, uint64_t lo, uint64_t n)
{
	if (n == 0 || v->nr >= 4)
		return;
	v->r[v->nr++] = (vrange){space, write, lo, lo + n};
}

static void footprint(const loom_hwcfg *cfg, const loom_insn *in, vinfo *v)
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: {
		uint64_t n = (uint64_t)GF(in, LOAD_N1) * GF(in, LOAD_N2) * GF(in, LOAD_N3);
		if (!n)
			return;
		uint64_t lines = (uint64_t)GF(in, LOAD_N3) *
				 (GF(in, LOAD_PAD_TOP) + GF(in, LOAD_N2) + GF(in, LOAD_PAD_BOTTOM)) *
				 (GF(in, LOAD_PAD_LEFT) + GF(in, LOAD_N1) + GF(in, LOAD_PAD_RIGHT));
		add_range(v, GF(in, LOAD_TARGET) ? SPC_ACC : SPC_SP, 1, GF(in, LOAD_MEM_ADDR), lines);
		uint64_t a = GF(in, LOAD_DRAM_ADDR);
		add_range(v, SPC_DRAM, 0, a, span_end(in, 0) - a);
		break;
	}
	case LOOM_OP_STORE: {
		uint64_t n = (uint64_t)GF(in, STORE_N1) * GF(in, STORE_N2) * GF(in, STORE_N3);
		if (!n)
			return;
		unsigned src = GF(in, STORE_SOURCE);
		add_range(v, src ? SPC_ACC : SPC_SP, 0, GF(in, STORE_MEM_ADDR), n);
		if (src == LOOM_MEM_ACC_REQUANT)
			add_range(v, SPC_ACC, 0, GF(in, STORE_PARAM_ADDR), 3);
		uint64_t a = GF(in, STORE_DRAM_ADDR);
		add_range(v, SPC_DRAM, 1, a, span_end(in, 1) - a);
		break;
	}
	case LOOM_OP_MATMUL: {
		uint64_t ncb = GF(in, MATMUL_NCB);
		add_range(v, SPC_SP, 0, GF(in, MATMUL_ACT_ADDR), ncb * GF(in, MATMUL_IN_W) * GF(in, MATMUL_IN_H));
		add_range(v, SPC_SP, 0, GF(in, MATMUL_WGT_ADDR),
			  ncb * GF(in, MATMUL_KW) * GF(in, MATMUL_KH) * cfg->array_cols);
		add_range(v, SPC_ACC, 1, GF(in, MATMUL_ACC_ADDR),
			  (uint64_t)GF(in, MATMUL_OUT_W) * GF(in, MATMUL_OUT_H));
		break;
	}
	case LOOM_OP_ELTWISE: {
		uint64_t n = (uint64_t)GF(in, ELTWISE_PLANES) * GF(in, ELTWISE_PLANE_LINES);
		if (!n)
			return;
		unsigned bm = GF(in, ELTWISE_B_MODE);
		add_range(v, SPC_SP, 0, GF(in, ELTWISE_SRC_A), n);
		add_range(v, SPC_SP, 0, GF(in, ELTWISE_SRC_B),
			  bm == LOOM_BMODE_LINE ? n : bm == LOOM_BMODE_PLANE ? GF(in, ELTWISE_PLANES) : 1);
		add_range(v, SPC_SP, 1, GF(in, ELTWISE_DST), n);
		break;
	}
	case LOOM_OP_POOL: {
		uint64_t ncb = GF(in, POOL_NCB);
		add_range(v, SPC_SP, 0, GF(in, POOL_SRC), ncb * GF(in, POOL_IN_W) * GF(in, POOL_IN_H));
		add_range(v, SPC_SP, 1, GF(in, POOL_DST), ncb * GF(in, POOL_OUT_W) * GF(in, POOL_OUT_H));
		break;
	}
	case LOOM_OP_DWCONV: {
		uint64_t ncb = GF(in, DWCONV_NCB);
		add_range(v, SPC_SP, 0, GF(in, DWCONV_SRC), ncb * GF(in, DWCONV_IN_W) * GF(in, DWCONV_IN_H));
		add_range(v, SPC_SP, 0, GF(in, DWCONV_WGT), ncb * GF(in, DWCONV_KW) * GF(in, DWCONV_KH));
		add_range(v, SPC_SP, 0, GF(in, DWCONV_PARAM), ncb * LOOM_DW_PARAM_LINES);
		add_range(v, SPC_SP, 1, GF(in, DWCONV_DST), ncb * GF(in, DWCONV_OUT_W) * GF(in, DWCONV_OUT_H));
		break;
	}
	case LOOM_OP_LUT: {
		uint64_t n = GF(in, LUT_LINES);
		if (!n)
			return;
		add_range(v, SPC_SP, 0, GF(in, LUT_SRC), n);
		add_range(v, SPC_SP, 0, GF(in, LUT_TABLE), cdiv(LOOM_LUT_ENTRIES, cfg->array_rows));
		add_range(v, SPC_SP, 1, GF(in, LUT_DST), n);
		break;
	}
	default:
		break;
	}
}

static int conflict(const vinfo *a, const vinfo *b)
{
	for (int i = 0; i < a->nr; i++)
		for (int j = 0; j < b->nr; j++) {
			const vrange *x = &a->r[i], *y = &b->r[j];
			if (x->space == y->space && (x->write || y->write) && x->lo < y->hi && y->lo < x->hi)
				return 1;
		}
	return 0;
}

int loom_prog_verify(const loom_hwcfg *cfg, const loom_prog *p, char *err, size_t errlen)
{
	size_t n = p->n;
	vinfo *v = calloc(n ? n : 1, sizeof *v);
	size_t *push[4];
	size_t npush[4] = {0}, npop[4] = {0};
	for (int c = 0; c < 4; c++)
		push[c] = malloc((n ? n : 1) * sizeof(size_t));
	int rc = -1, finished = 0;
	char d1[256], d2[256];
	long qpos[3] = {0, 0, 0}, bar[3] = {-1, -1, -1};
	long lastq[3] = {-1, -1, -1}; /* instruction index of each queue's latest */
	size_t barrier_at = 0;         /* first instruction after the latest barrier */
	if (!v || !push[0] || !push[1] || !push[2] || !push[3]) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && !finished; i++) {
		const loom_insn *in = &p->insn[i];
		uint32_t field;
		unsigned e = loom_insn_check(cfg, in, &field);
		if (e) {
			loom_insn_disasm(in, d1, sizeof d1);
			fail(err, errlen, "insn %zu (%s): %s, field %s", i, d1, loom_err_name(e),
			     loom_field_name(field));
			goto out;
		}
		unsigned op = loom_insn_opcode(in);
		if (op == LOOM_OP_MARK || op == LOOM_OP_FINISH) {
			static const char *tn[4] = {"L->C", "C->L", "C->S", "S->C"};
			for (int c = 0; c < 4; c++)
				if (npush[c] != npop[c]) {
					fail(err, errlen, "insn %zu (%s): token counter %s holds %zu at the barrier", i,
					     op == LOOM_OP_MARK ? "MARK" : "FINISH", tn[c], npush[c] - npop[c]);
					goto out;
				}
			for (int q = 0; q < 3; q++)
				bar[q] = qpos[q] - 1;
			barrier_at = i + 1;
			v[i].q = -1;
			finished = op == LOOM_OP_FINISH;
			continue;
		}
		int q = loom_op_queue(op);
		vinfo *x = &v[i];
		x->q = q;
		x->pos = qpos[q]++;
		for (int k = 0; k < 3; k++)
			x->vc[k] = bar[k];
		if (lastq[q] >= 0 && (size_t)lastq[q] >= barrier_at) {
			for (int k = 0; k < 3; k++)
				if (v[lastq[q]].vc[k] > x->vc[k])
					x->vc[k] = v[lastq[q]].vc[k];
		}
		if (x->pos - 1 > x->vc[q])
			x->vc[q] = x->pos - 1;
		lastq[q] = (long)i;
		/* pops and pushes of this opcode */
		int pops[2] = {-1, -1}, pushes[2] = {-1, -1};
		uint32_t w0 = in->w[0];
		if (op == LOOM_OP_LOAD) {
			if (w0 & (1u << 9))
				pops[0] = T_CL;
			if (w0 & (1u << 11))
				pushes[0] = T_LC;
		} else if (loom_op_queue(op) == LOOM_Q_COMPUTE) { /* MATMUL and the vector unit */
			if (w0 & (1u << 8))
				pops[0] = T_LC;
			if (w0 & (1u << 9))
				pops[1] = T_SC;
			if (w0 & (1u << 10))
				pushes[0] = T_CL;
			if (w0 & (1u << 11))
				pushes[1] = T_CS;
		} else if (op == LOOM_OP_STORE) {
			if (w0 & (1u << 8))
				pops[0] = T_CS;
			if (w0 & (1u << 10))
				pushes[0] = T_SC;
		}
		for (int k = 0; k < 2; k++) {
			int c = pops[k];
			if (c < 0)
				continue;
			if (npop[c] >= npush[c]) {
				loom_insn_disasm(in, d1, sizeof d1);
				fail(err, errlen, "insn %zu (%s) pops a token no earlier instruction pushes", i, d1);
				goto out;
			}
			const vinfo *y = &v[push[c][npop[c]++]];
			for (int k2 = 0; k2 < 3; k2++)
				if (y->vc[k2] > x->vc[k2])
					x->vc[k2] = y->vc[k2];
			if (y->pos > x->vc[y->q])
				x->vc[y->q] = y->pos;
		}
		for (int k = 0; k < 2; k++)
			if (pushes[k] >= 0) {
				push[pushes[k]][npush[pushes[k]]++] = i;
				if (npush[pushes[k]] - npop[pushes[k]] > LOOM_TOKEN_MAX) {
					fail(err, errlen, "insn %zu: token counter overflow", i);
					goto out;
				}
			}
		footprint(cfg, in, x);
		for (size_t j = barrier_at; j < i; j++) {
			const vinfo *y = &v[j];
			if (y->q < 0 || y->q == q || !conflict(x, y))
				continue;
			if (y->pos <= x->vc[y->q])
				continue;
			loom_insn_disasm(&p->insn[j], d1, sizeof d1);
			loom_insn_disasm(in, d2, sizeof d2);
			fail(err, errlen, "race between insn %zu (%s) and insn %zu (%s)", j, d1, i, d2);
			goto out;
		}
	}
	if (!finished) {
		fail(err, errlen, "the program does not end with FINISH");
		goto out;
	}
	rc = 0;
out:
	free(v);
	for (int c = 0; c < 4; c++)
		free(push[c]);
	return rc;
}

/* ------------------------------------------------------------------ */
/* layer geometry */

typedef struct dimg {
	uint32_t in, out, k, s, d, plo, phi, ek;
} dimg;

/* input lines of a tile of t outputs; a 1-wide kernel loads only the
 * sampled rows/columns (the DRAM stride skips the others) */
static uint32_t dim_tin(const dimg *g, uint32_t t) { return g->k == 1 ? t : (t - 1) * g->s + g->ek; }

typedef struct dtile {
	uint32_t o0, t;     /* outputs [o0, o0+t) */
	uint32_t tin;       /* input lines incl. padding */
	uint32_t pl, ph;    /* padding before/after */
	uint32_t valid;     /* lines from DRAM */
	uint32_t first;     /* first input index loaded */
} dtile;

static void dim_tile(const dimg *g, uint32_t o0, uint32_t t, dtile *r)
{
	r->o0 = o0;
	r->t = t;
	if (g->k == 1) {
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

typedef struct layer {
	dimg y, x;
	uint32_t cin, cout, kk, ncb, nob, in_stride, out_stride, R, C;
	int raw;
} layer;

static int layer_check(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, char *err, size_t len)
{
	memset(L, 0, sizeof *L);
	if (!p->h || !p->w || !p->cin || !p->cout)
		return fail(err, len, "conv: h, w, cin and cout must be at least 1");
	if (p->kh < 1 || p->kh > 15 || p->kw < 1 || p->kw > 15)
		return fail(err, len, "conv: kernel %ux%u outside 1..15", p->kh, p->kw);
	if (p->sh < 1 || p->sh > 15 || p->sw < 1 || p->sw > 15)
		return fail(err, len, "conv: stride %ux%u outside 1..15", p->sh, p->sw);
	if (p->dh < 1 || p->dh > 15 || p->dw < 1 || p->dw > 15)
		return fail(err, len, "conv: dilation %ux%u outside 1..15", p->dh, p->dw);
	L->R = cfg->array_rows;
	L->C = cfg->array_cols;
	L->raw = p->raw != 0;
	L->y = (dimg){p->h, 0, p->kh, p->sh, p->dh, p->pad_top, p->pad_bottom, (p->kh - 1) * p->dh + 1};
	L->x = (dimg){p->w, 0, p->kw, p->sw, p->dw, p->pad_left, p->pad_right, (p->kw - 1) * p->dw + 1};
	dimg *d[2] = {&L->y, &L->x};
	for (int i = 0; i < 2; i++) {
		if (d[i]->plo >= d[i]->ek || d[i]->phi >= d[i]->ek)
			return fail(err, len, "conv: padding %u/%u must be smaller than the dilated kernel extent %u",
				    d[i]->plo, d[i]->phi, d[i]->ek);
		if (d[i]->in > 65535)
			return fail(err, len, "conv: input size %u too large", d[i]->in);
		uint64_t span = (uint64_t)d[i]->in + d[i]->plo + d[i]->phi;
		if (span < d[i]->ek)
			return fail(err, len, "conv: the padded input (%llu) is smaller than the kernel extent %u",
				    (unsigned long long)span, d[i]->ek);
		d[i]->out = (uint32_t)((span - d[i]->ek) / d[i]->s + 1);
	}
	L->cin = p->cin;
	L->cout = p->cout;
	L->kk = p->kh * p->kw;
	L->ncb = cdiv(p->cin, L->R);
	L->nob = cdiv(p->cout, L->C);
	L->in_stride = p->in_stride ? p->in_stride : (p->cin + 3) / 4 * 4;
	if (L->in_stride % 4 || L->in_stride < p->cin)
		return fail(err, len, "conv: in_stride %u must be a multiple of 4 and >= cin %u", L->in_stride, p->cin);
	uint32_t omin = L->raw ? 4 * p->cout : (p->cout + 3) / 4 * 4;
	L->out_stride = p->out_stride ? p->out_stride : omin;
	if (L->out_stride % 4 || L->out_stride < omin)
		return fail(err, len, "conv: out_stride %u must be a multiple of 4 and >= %u", L->out_stride, omin);
	if (!L->raw && p->clip_lo > p->clip_hi)
		return fail(err, len, "conv: clip_lo %d > clip_hi %d", p->clip_lo, p->clip_hi);
	uint64_t inb = (uint64_t)p->h * p->w * L->in_stride, outb = (uint64_t)L->y.out * L->x.out * L->out_stride;
	uint64_t wb = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	if (inb > cfg->dram_bytes || outb > cfg->dram_bytes || wb > cfg->dram_bytes)
		return fail(err, len, "conv: tensors larger than DRAM");
	return 0;
}

/* ------------------------------------------------------------------ */
/* planning */

/* Tries one candidate; 0 and *pl filled (with its cost) if it fits. */
static int try_cand(const loom_hwcfg *cfg, const layer *L, uint32_t g, uint32_t kc, uint32_t kyc, uint32_t th,
		    uint32_t tw, int wchunk, int force_barrier, loom_conv_plan *pl)
{
	const uint32_t C = L->C, KK = L->kk, KW = L->x.k;
	if (kc > 255 || kc > L->ncb || g > L->nob || th > L->y.out || tw > L->x.out || kyc > L->y.k)
		return -1;
	uint32_t nk = cdiv(L->ncb, kc), npass = cdiv(L->nob, g), nky = cdiv(L->y.k, kyc);
	/* resident weights are laid out [cb][ky][kx][c]: a MATMUL over a part
	 * of the kernel rows can only use them one channel block at a time */
	if (nky > 1 && !wchunk && kc != 1)
		return -1;
	uint32_t ih = dim_tin(&L->y, th), iw = dim_tin(&L->x, tw);
	if (ih > 4095 || iw > 4095)
		return -1;
	/* a MATMUL over kernel rows ky0.. starts ky0*dh input rows into the
	 * buffer and spans a whole buffer from there: keep that slack free */
	uint64_t slack = nky > 1 ? (uint64_t)(L->y.k - 1) * L->y.d * iw : 0;
	uint64_t al = (uint64_t)kc * ih * iw + slack;
	uint64_t wl = wchunk ? (uint64_t)g * kc * kyc * KW * C : (uint64_t)g * L->ncb * KK * C;
	uint64_t P = (uint64_t)th * tw, A = cfg->acc_lines;
	uint64_t need = nk * nky > 1 ? g : 1;
	uint64_t plines = L->raw ? 0 : 3ull * L->nob;
	int params_all = 1;
	if (plines + need * P > A) {
		params_all = 0;
		plines = L->raw ? 0 : 3ull * g;
		if (plines + need * P > A)
			return -1;
	}
	uint64_t nslots = (A - plines) / P;
	int chainable = params_all && !force_barrier;
	/* SP arrangement: weight region(s) from line 0, then the input buffers */
	uint64_t BL = cfg->sp_bank_lines, B = cfg->sp_banks, SL = cfg->sp_lines;
	int found = 0;
	uint32_t nwreg = 1;
	int nopts = 0;
	uint32_t wopts[2];
	if (wchunk)
		wopts[nopts++] = 2;
	else {
		if (npass > 1 && chainable)
			wopts[nopts++] = 2;
		wopts[nopts++] = 1;
	}
	for (int o = 0; o < nopts && !found; o++) {
		nwreg = wopts[o];
		uint64_t wt = nwreg * wl;
		uint64_t bw = (wt + BL - 1) / BL, ba = (al + BL - 1) / BL, bwa = (wt + al + BL - 1) / BL;
		if (bw + 2 * ba <= B) {
			/* weights, buffer 0, buffer 1 in disjoint banks */
			pl->act_sp[0] = (uint32_t)(bw * BL);
			pl->act_sp[1] = (uint32_t)((bw + ba) * BL);
			pl->banks = 3;
			found = 1;
		} else if (bwa + ba <= B) {
			/* buffer 0 shares the weights' banks, buffer 1 has its own */
			pl->act_sp[0] = (uint32_t)wt;
			pl->act_sp[1] = (uint32_t)(bwa * BL);
			pl->banks = 2;
			found = 1;
		} else if (bw + (2 * al + BL - 1) / BL <= B) {
			/* the two buffers share banks */
			pl->act_sp[0] = (uint32_t)(bw * BL);
			pl->act_sp[1] = (uint32_t)(bw * BL + al);
			pl->banks = 1;
			found = 1;
		} else if (wt + 2 * al <= SL) {
			pl->act_sp[0] = (uint32_t)wt;
			pl->act_sp[1] = (uint32_t)(wt + al);
			pl->banks = 0;
			found = 1;
		}
	}
	if (!found)
		return -1;
	pl->nwreg = nwreg;
	pl->wgt_sp[0] = 0;
	pl->wgt_sp[1] = nwreg == 2 ? (uint32_t)wl : 0;
	pl->wgt_lines = (uint32_t)wl;
	pl->act_lines = (uint32_t)al;
	pl->chained = npass == 1 || (chainable && (wchunk || nwreg == 2));
	pl->params_all = params_all;
	pl->th = th;
	pl->tw = tw;
	pl->ntiles = cdiv(L->y.out, th) * cdiv(L->x.out, tw);
	pl->kc = kc;
	pl->nk = nk;
	pl->kyc = kyc;
	pl->nky = nky;
	pl->g = g;
	pl->npass = npass;
	pl->wchunk = wchunk;
	pl->nslots = (uint32_t)(nslots > 65535 ? 65535 : nslots);
	pl->param_lines = (uint32_t)plines;
	pl->acc_slot0 = (uint32_t)plines;
	pl->slot_lines = (uint32_t)P;

	/* cost estimate (cycles): the timing model's (common/timing.h) */
	loom_timing tm;
	loom_timing_init(&tm, cfg, 0, 0);
	loom_conv_est e = {
		.oh = L->y.out, .ow = L->x.out, .ih = L->y.in, .iw = L->x.in,
		.ncb = L->ncb, .nob = L->nob, .kk = KK, .raw = L->raw,
		.tile_ih = ih, .tile_iw = iw, .ntiles = pl->ntiles, .nk = nk, .nky = nky, .npass = npass,
		.nslots = pl->nslots, .banks = pl->banks, .wchunk = wchunk, .chained = pl->chained,
	};
	double total = loom_est_conv(&tm, &e);
	pl->est_cycles = (uint64_t)total;
	return 0;
}

static int distinct_sizes(uint32_t n, uint32_t maxv, uint32_t hint, uint32_t *out, int cap)
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

static int plan_layer(const loom_hwcfg *cfg, const loom_conv_params *p, layer *L, loom_conv_plan *plan, char *err,
		      size_t len)
{
	if (layer_check(cfg, p, L, err, len))
		return -1;
	const loom_conv_hints *h = p->hints;
	loom_conv_hints none;
	memset(&none, 0, sizeof none);
	if (!h)
		h = &none;
	enum { CAP = 512 };
	uint32_t *gs = malloc(4 * CAP * sizeof *gs);
	if (!gs)
		return fail(err, len, "out of memory");
	uint32_t *kcs = gs + CAP, *ths = gs + 2 * CAP, *tws = gs + 3 * CAP;
	/* hints are clamped to the layer */
	int ng = distinct_sizes(L->nob, 0xffffffffu, umin(h->g, L->nob), gs, CAP);
	int nkc = distinct_sizes(L->ncb, 255, umin(umin(h->kc, L->ncb), 255), kcs, CAP);
	int nth = distinct_sizes(L->y.out, 4095, umin(umin(h->th, L->y.out), 4095), ths, CAP);
	int ntw = distinct_sizes(L->x.out, 4095, umin(umin(h->tw, L->x.out), 4095), tws, CAP);
	loom_conv_plan bestm[2] = {0}, c;
	int havem[2] = {0, 0};
	uint32_t kyh = umin(h->kyc, L->y.k);
	/* all kernel rows per MATMUL; chunks of kernel rows only when that fails */
	for (uint32_t kyc = kyh ? kyh : L->y.k; kyc >= 1 && !havem[0] && !havem[1]; kyc = kyh ? 0 : kyc - 1) {
		if (!kyh && kyc > 1 && cdiv(L->y.k, kyc - 1) == cdiv(L->y.k, kyc))
			continue; /* the same number of chunks with smaller ones */
		for (int wc = 0; wc < 2; wc++) {
			if (h->wchunk && wc != h->wchunk - 1)
				continue;
			loom_conv_plan *best = &bestm[wc];
			for (int a = 0; a < ng; a++)
				for (int b = 0; b < nkc; b++)
					for (int t = 0; t < nth; t++)
						for (int u = 0; u < ntw; u++) {
							memset(&c, 0, sizeof c);
							if (try_cand(cfg, L, gs[a], kcs[b], kyc, ths[t], tws[u], wc,
								     h->barrier, &c))
								continue;
							uint64_t sc = (uint64_t)c.ntiles * c.nk * c.nky * c.npass;
							uint64_t sb = (uint64_t)best->ntiles * best->nk * best->nky *
								      best->npass;
							if (!havem[wc] || c.est_cycles < best->est_cycles ||
							    (c.est_cycles == best->est_cycles && sc < sb)) {
								*best = c;
								havem[wc] = 1;
							}
						}
		}
	}
	/* weights resident across tiles unless streaming them is clearly
	 * (> 1%) faster: it re-reads every weight once per tile */
	int have = havem[0] || havem[1];
	loom_conv_plan best = havem[0] ? bestm[0] : bestm[1];
	if (havem[0] && havem[1] && bestm[1].est_cycles * 101 < bestm[0].est_cycles * 100)
		best = bestm[1];
	free(gs);
	if (!have)
		return fail(err, len,
			    "conv %ux%ux%u -> %u (k %ux%u): no tiling fits configuration %s (sp %u lines, acc %u lines)",
			    p->h, p->w, p->cin, p->cout, p->kh, p->kw, cfg->name, cfg->sp_lines, cfg->acc_lines);
	best.oh = L->y.out;
	best.ow = L->x.out;
	best.ncb = L->ncb;
	best.nob = L->nob;
	best.in_stride = L->in_stride;
	best.out_stride = L->out_stride;
	best.in_bytes = (uint64_t)p->h * p->w * L->in_stride;
	best.out_bytes = (uint64_t)best.oh * best.ow * L->out_stride;
	best.wgt_bytes = (uint64_t)L->nob * L->ncb * L->kk * L->C * L->R;
	best.param_bytes = L->raw ? 0 : (uint64_t)L->nob * 3 * L->C * 4;
	best.macs = (uint64_t)best.oh * best.ow * p->cout * p->cin * L->kk;
	best.macs_issued = (uint64_t)best.oh * best.ow * L->ncb * L->kk * L->nob * L->R * L->C;
	best.insns = 0;
	*plan = best;
	return 0;
}

void loom_conv_init(loom_conv_params *p)
{
	memset(p, 0, sizeof *p);
	p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1;
	p->clip_lo = -128;
	p->clip_hi = 127;
}

int loom_conv_plan_make(const loom_hwcfg *cfg, const loom_conv_params *p, loom_conv_plan *plan, char *err,
			size_t errlen)
{
	layer L;
	return plan_layer(cfg, p, &L, plan, err, errlen);
}

/* ------------------------------------------------------------------ */
/* emission */

typedef struct emitter {
	const loom_hwcfg *cfg;
	const loom_conv_params *p;
	const layer *L;
	loom_conv_plan *pl;
	const loom_dram_layout *lay;
	loom_prog *prog;
	int bad;                /* a field did not fit */
	enum loom_field badf;
	int oom;
	uint64_t rd_bytes;      /* bytes loaded (estimate of DRAM reads) */
} emitter;

static void fset(emitter *e, loom_insn *in, enum loom_field f, uint32_t v)
{
	if (loom_insn_set(in, f, v) && !e->bad) {
		e->bad = 1;
		e->badf = f;
	}
}

static void emit(emitter *e, const loom_insn *in)
{
	if (loom_prog_add(e->prog, in))
		e->oom = 1;
}

typedef struct xfer {
	unsigned mem;           /* LOAD target / STORE source */
	uint32_t row_bytes, dram, addr;
	uint32_t s1, s2, s3, n1, n2, n3;
	uint32_t pt, pb, pl, pr; /* LOAD padding */
	uint8_t pad;
} xfer;

static loom_insn mk_load(emitter *e, const xfer *x)
{
	loom_insn in;
	memset(&in, 0, sizeof in);
	in.w[0] = LOOM_OP_LOAD;
	fset(e, &in, LOOM_F_LOAD_TARGET, x->mem);
	fset(e, &in, LOOM_F_LOAD_PAD_VALUE, x->pad);
	fset(e, &in, LOOM_F_LOAD_ROW_WORDS, x->row_bytes / 4);
	fset(e, &in, LOOM_F_LOAD_DRAM_ADDR, x->dram);
	fset(e, &in, LOOM_F_LOAD_MEM_ADDR, x->addr);
	fset(e, &in, LOOM_F_LOAD_STRIDE1, x->s1);
	fset(e, &in, LOOM_F_LOAD_STRIDE2, x->s2);
	fset(e, &in, LOOM_F_LOAD_STRIDE3, x->s3);
	fset(e, &in, LOOM_F_LOAD_N1, x->n1);
	fset(e, &in, LOOM_F_LOAD_N2, x->n2);
	fset(e, &in, LOOM_F_LOAD_N3, x->n3);
	fset(e, &in, LOOM_F_LOAD_PAD_TOP, x->pt);
	fset(e, &in, LOOM_F_LOAD_PAD_BOTTOM, x->pb);
	fset(e, &in, LOOM_F_LOAD_PAD_LEFT, x->pl);
	fset(e, &in, LOOM_F_LOAD_PAD_RIGHT, x->pr);
	e->rd_bytes += (uint64_t)x->n1 * x->n2 * x->n3 * x->row_bytes;
	return in;
}

/* Contiguous lines of row_bytes each: DRAM -> SP/ACC, in <= 4095 x 4095 pieces. */
static void lin_load(emitter *e, loom_insn *out, int *n, unsigned target, uint32_t dram, uint32_t addr,
		     uint64_t lines, uint32_t row_bytes)
{
	while (lines && *n < 8) {
		uint32_t n1 = (uint32_t)(lines < 4095 ? lines : 4095);
		uint32_t n2 = (uint32_t)(lines / n1 < 4095 ? lines / n1 : 4095);
		xfer x = {.mem = target, .row_bytes = row_bytes, .dram = dram, .addr = addr, .s1 = row_bytes,
			  .s2 = n1 * row_bytes, .n1 = n1, .n2 = n2, .n3 = 1};
		out[(*n)++] = mk_load(e, &x);
		dram += n1 * n2 * row_bytes;
		addr += n1 * n2;
		lines -= (uint64_t)n1 * n2;
	}
	if (lines)
		e->bad = 1;
}

typedef struct segment {
	uint32_t p0, p1;        /* passes */
	uint32_t ob0;           /* first output block (params at ACC acc_param + 3*(ob-ob0)) */
	uint32_t nsteps, njobs;
} segment;

static uint32_t pass_obs(const emitter *e, uint32_t pass)
{
	return umin(e->pl->g, e->L->nob - pass * e->pl->g);
}

static uint32_t chunks(const loom_conv_plan *pl) { return pl->nk * pl->nky; }

/* step s of segment sg -> pass, tile, chunk (k in 0..nk*nky-1) */
static void step_of(const emitter *e, const segment *sg, uint32_t s, uint32_t *pass, uint32_t *t, uint32_t *k)
{
	uint32_t per = e->pl->ntiles * chunks(e->pl);
	*pass = sg->p0 + s / per;
	*t = (s % per) / chunks(e->pl);
	*k = s % chunks(e->pl);
}

/* chunk k -> input channel blocks [cb0, cb0+kck), kernel rows [ky0, ky0+kyn) */
typedef struct chunk {
	uint32_t cb0, kck, ky0, kyn;
} chunk;

static chunk chunk_of(const emitter *e, uint32_t k)
{
	const loom_conv_plan *pl = e->pl;
	chunk c;
	c.cb0 = k / pl->nky * pl->kc;
	c.kck = umin(pl->kc, e->L->ncb - c.cb0);
	c.ky0 = k % pl->nky * pl->kyc;
	c.kyn = umin(pl->kyc, e->L->y.k - c.ky0);
	return c;
}

static void tile_of(const emitter *e, uint32_t t, dtile *ty, dtile *tx)
{
	uint32_t ntc = cdiv(e->L->x.out, e->pl->tw);
	uint32_t tr = t / ntc, tc = t % ntc;
	uint32_t oy0 = tr * e->pl->th, ox0 = tc * e->pl->tw;
	dim_tile(&e->L->y, oy0, umin(e->pl->th, e->L->y.out - oy0), ty);
	dim_tile(&e->L->x, ox0, umin(e->pl->tw, e->L->x.out - ox0), tx);
}

static void emit_load(emitter *e, const xfer *x)
{
	loom_insn in = mk_load(e, x);
	emit(e, &in);
}

/* Resident weights that were not prefetched are loaded progressively: the
 * steps of a pass's first tile each bring their chunk's part of every block's
 * weights, pushing one L->C token per block after that block's part, and
 * every MATMUL of such a step pops one, so the first block computes while
 * the others still load and the weights interleave with the input chunks. */
static int prefetching(const loom_conv_plan *pl)
{
	return pl->chained && !pl->wchunk && pl->npass > 1 && pl->ntiles * chunks(pl) >= 2;
}

static int loads_pass_weights(const emitter *e, uint32_t s)
{
	const loom_conv_plan *pl = e->pl;
	uint32_t spp = pl->ntiles * chunks(pl);
	return !pl->wchunk && s % spp < chunks(pl) && !(prefetching(pl) && s >= spp);
}

/* LOAD(s): the step's input chunk and weights; the first instruction pops
 * C->L when s >= 2, the last one the step's MATMULs wait for pushes L->C.
 * With prefetching, steps 1.. of a pass also load a share of the next
 * pass's weights into the other region (free: LOAD(s) waits for step s-2,
 * and the previous pass ended before step 0 of this one), after the push. */
static void emit_loads(emitter *e, const segment *sg, uint32_t s)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	uint32_t pass, t, k;
	step_of(e, sg, s, &pass, &t, &k);
	uint32_t gp = pass_obs(e, pass), ob0 = pass * pl->g;
	chunk ck = chunk_of(e, k);
	uint32_t R = L->R, C = L->C, KK = L->kk, KW = L->x.k;
	uint32_t obw = L->ncb * KK * C; /* weight lines of one output block */
	size_t first = e->prog->n;
	if (pl->wchunk) {
		/* the chunk's weights of the pass's blocks, [ob][cb][ky][kx][c] */
		uint32_t src = e->lay->wgt_addr + ((ob0 * L->ncb + ck.cb0) * KK + ck.ky0 * KW) * C * R;
		if (ck.kyn == L->y.k && ck.kck * KK <= 4095) {
			xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = src, .addr = pl->wgt_sp[s % 2],
				  .s1 = R, .s2 = C * R, .s3 = obw * R, .n1 = C, .n2 = ck.kck * KK, .n3 = gp};
			emit_load(e, &x);
		} else {
			for (uint32_t ol = 0; ol < gp; ol++) {
				xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = src + ol * obw * R,
					  .addr = pl->wgt_sp[s % 2] + ol * ck.kck * ck.kyn * KW * C,
					  .s1 = R, .s2 = C * R, .s3 = KK * C * R,
					  .n1 = C, .n2 = ck.kyn * KW, .n3 = ck.kck};
				emit_load(e, &x);
			}
		}
	}
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	uint32_t plane = ty.tin * tx.tin;
	uint32_t full = ck.kck;
	if ((uint64_t)(ck.cb0 + ck.kck) * R > L->in_stride)
		full = ck.kck - 1; /* the layer's last block is narrower than R */
	uint32_t base = e->lay->in_addr + (ty.first * L->x.in + tx.first) * L->in_stride + ck.cb0 * R;
	xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = base, .addr = pl->act_sp[s % 2],
		  .s1 = L->in_stride * (L->x.k == 1 ? L->x.s : 1),
		  .s2 = L->x.in * L->in_stride * (L->y.k == 1 ? L->y.s : 1), .s3 = R,
		  .n1 = tx.valid, .n2 = ty.valid, .n3 = full,
		  .pt = ty.pl, .pb = ty.ph, .pl = tx.pl, .pr = tx.ph, .pad = (uint8_t)e->p->in_zp};
	if (full)
		emit_load(e, &x);
	if (full < ck.kck) {
		x.row_bytes = L->in_stride - (ck.cb0 + full) * R;
		x.dram = base + full * R;
		x.addr = pl->act_sp[s % 2] + full * plane;
		x.n3 = 1;
		x.s3 = 0;
		emit_load(e, &x);
	}
	loom_insn ld[8];
	int n;
	if (loads_pass_weights(e, s)) {
		/* the chunk's part of the pass's resident weights; one push per block */
		uint32_t reg = pl->wgt_sp[(pass - sg->p0) % pl->nwreg];
		uint32_t off = (ck.cb0 * KK + ck.ky0 * KW) * C, lines = ck.kck * ck.kyn * KW * C;
		for (uint32_t ol = 0; ol < gp; ol++) {
			n = 0;
			lin_load(e, ld, &n, LOOM_MEM_SP, e->lay->wgt_addr + ((ob0 + ol) * obw + off) * R,
				 reg + ol * obw + off, lines, R);
			fset(e, &ld[n - 1], LOOM_F_LOAD_PUSH_NEXT, 1);
			for (int i = 0; i < n; i++)
				emit(e, &ld[i]);
		}
	} else if (!e->oom) {
		fset(e, &e->prog->insn[e->prog->n - 1], LOOM_F_LOAD_PUSH_NEXT, 1);
	}
	uint32_t spp = pl->ntiles * chunks(pl), sp = s % spp;
	if (prefetching(pl) && sp >= 1 && pass + 1 < sg->p1) {
		/* share sp-1 of spp-1 of the next pass's weights */
		uint64_t lines = (uint64_t)pass_obs(e, pass + 1) * obw;
		uint64_t a = lines * (sp - 1) / (spp - 1), b = lines * sp / (spp - 1);
		uint32_t reg = pl->wgt_sp[(pass + 1 - sg->p0) % pl->nwreg];
		n = 0;
		lin_load(e, ld, &n, LOOM_MEM_SP, e->lay->wgt_addr + ((pass + 1) * pl->g * obw + (uint32_t)a) * R,
			 reg + (uint32_t)a, b - a, R);
		for (int i = 0; i < n; i++)
			emit(e, &ld[i]);
	}
	if (!e->oom && s >= 2)
		fset(e, &e->prog->insn[first], LOOM_F_LOAD_POP_NEXT, 1);
}

static void emit_compute(emitter *e, const segment *sg, uint32_t s, uint32_t *job)
{
	const layer *L = e->L;
	const loom_conv_plan *pl = e->pl;
	const loom_conv_params *p = e->p;
	uint32_t pass, t, k;
	step_of(e, sg, s, &pass, &t, &k);
	uint32_t gp = pass_obs(e, pass), last = chunks(pl) - 1;
	chunk ck = chunk_of(e, k);
	uint32_t C = L->C, KK = L->kk, KW = L->x.k;
	dtile ty, tx;
	tile_of(e, t, &ty, &tx);
	int wsplit = loads_pass_weights(e, s); /* one L->C token per block */
	/* jobs of this tile: numbered when the tile's first chunk runs */
	uint32_t j0 = *job;
	if (k == last)
		*job += gp;
	for (uint32_t ol = 0; ol < gp; ol++) {
		uint32_t ob = pass * pl->g + ol, j = j0 + ol, slot = j % pl->nslots;
		uint32_t acc = pl->acc_slot0 + slot * pl->slot_lines;
		loom_insn in;
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_MATMUL;
		fset(e, &in, LOOM_F_MATMUL_POP_PREV, ol == 0 || wsplit);
		fset(e, &in, LOOM_F_MATMUL_PUSH_PREV, ol == gp - 1 && s + 2 < sg->nsteps);
		fset(e, &in, LOOM_F_MATMUL_POP_NEXT, k == 0 && j >= pl->nslots);
		fset(e, &in, LOOM_F_MATMUL_PUSH_NEXT, k == last);
		fset(e, &in, LOOM_F_MATMUL_ACCUMULATE, k > 0);
		/* a part of the kernel rows: start ky0 dilated rows into the tile */
		fset(e, &in, LOOM_F_MATMUL_ACT_ADDR, pl->act_sp[s % 2] + ck.ky0 * L->y.d * tx.tin);
		uint32_t wa = pl->wchunk ? pl->wgt_sp[s % 2] + ol * ck.kck * ck.kyn * KW * C
					 : pl->wgt_sp[(pass - sg->p0) % pl->nwreg] +
						   ((ol * L->ncb + ck.cb0) * KK + ck.ky0 * KW) * C;
		fset(e, &in, LOOM_F_MATMUL_WGT_ADDR, wa);
		fset(e, &in, LOOM_F_MATMUL_ACC_ADDR, acc);
		fset(e, &in, LOOM_F_MATMUL_IN_W, tx.tin);
		fset(e, &in, LOOM_F_MATMUL_IN_H, ty.tin);
		fset(e, &in, LOOM_F_MATMUL_OUT_W, tx.t);
		fset(e, &in, LOOM_F_MATMUL_OUT_H, ty.t);
		fset(e, &in, LOOM_F_MATMUL_NCB, ck.kck);
		fset(e, &in, LOOM_F_MATMUL_KW, p->kw);
		fset(e, &in, LOOM_F_MATMUL_KH, ck.kyn);
		fset(e, &in, LOOM_F_MATMUL_SW, L->x.k == 1 ? 1 : p->sw);
		fset(e, &in, LOOM_F_MATMUL_SH, L->y.k == 1 ? 1 : p->sh);
		fset(e, &in, LOOM_F_MATMUL_DW, p->dw);
		fset(e, &in, LOOM_F_MATMUL_DH, p->dh);
		emit(e, &in);
		if (k != last)
			continue;
		/* the job's STORE */
		uint32_t cnt = umin(C, L->cout - ob * C);
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_STORE;
		fset(e, &in, LOOM_F_STORE_POP_PREV, 1);
		fset(e, &in, LOOM_F_STORE_PUSH_PREV, j + pl->nslots < sg->njobs);
		uint32_t dram = e->lay->out_addr + (ty.o0 * L->x.out + tx.o0) * L->out_stride;
		if (L->raw) {
			fset(e, &in, LOOM_F_STORE_SOURCE, LOOM_MEM_ACC);
			fset(e, &in, LOOM_F_STORE_ROW_WORDS, cnt);
			dram += ob * C * 4;
		} else {
			fset(e, &in, LOOM_F_STORE_SOURCE, LOOM_MEM_ACC_REQUANT);
			fset(e, &in, LOOM_F_STORE_ROW_WORDS, (cnt + 3) / 4);
			fset(e, &in, LOOM_F_STORE_ZERO_POINT, (uint8_t)p->out_zp);
			fset(e, &in, LOOM_F_STORE_PARAM_ADDR, 3 * (ob - sg->ob0));
			fset(e, &in, LOOM_F_STORE_CLIP_LO, (uint8_t)p->clip_lo);
			fset(e, &in, LOOM_F_STORE_CLIP_HI, (uint8_t)p->clip_hi);
			dram += ob * C;
		}
		fset(e, &in, LOOM_F_STORE_DRAM_ADDR, dram);
		fset(e, &in, LOOM_F_STORE_MEM_ADDR, acc);
		fset(e, &in, LOOM_F_STORE_STRIDE1, L->out_stride);
		fset(e, &in, LOOM_F_STORE_STRIDE2, L->x.out * L->out_stride);
		fset(e, &in, LOOM_F_STORE_N1, tx.t);
		fset(e, &in, LOOM_F_STORE_N2, ty.t);
		fset(e, &in, LOOM_F_STORE_N3, 1);
		emit(e, &in);
	}
}

int loom_build_conv(const loom_hwcfg *cfg, const loom_conv_params *p, const loom_dram_layout *lay, loom_prog *prog,
		    loom_conv_plan *plan, char *err, size_t errlen)
{
	layer L;
	loom_conv_plan pl;
	if (plan_layer(cfg, p, &L, &pl, err, errlen))
		return -1;
	if ((lay->in_addr | lay->wgt_addr | lay->param_addr | lay->out_addr | lay->mark_addr) & 3u)
		return fail(err, errlen, "conv: DRAM addresses must be multiples of 4");
	emitter e = {.cfg = cfg, .p = p, .L = &L, .pl = &pl, .lay = lay, .prog = prog};
	size_t n0 = prog->n;
	uint32_t nseg = pl.chained ? 1 : pl.npass;
	for (uint32_t sgi = 0; sgi < nseg; sgi++) {
		segment sg;
		sg.p0 = pl.chained ? 0 : sgi;
		sg.p1 = pl.chained ? pl.npass : sgi + 1;
		sg.ob0 = sg.p0 * pl.g;
		uint32_t ob1 = umin(L.nob, sg.p1 * pl.g);
		sg.nsteps = (sg.p1 - sg.p0) * pl.ntiles * chunks(&pl);
		sg.njobs = (ob1 - sg.ob0) * pl.ntiles;
		if (!L.raw) {
			loom_insn ld[8];
			int n = 0;
			lin_load(&e, ld, &n, LOOM_MEM_ACC, lay->param_addr + sg.ob0 * 3 * L.C * 4, 0,
				 3ull * (ob1 - sg.ob0), 4 * L.C);
			for (int i = 0; i < n; i++)
				emit(&e, &ld[i]);
		}
		uint32_t job = 0;
		emit_loads(&e, &sg, 0);
		for (uint32_t s = 0; s < sg.nsteps; s++) {
			if (s + 1 < sg.nsteps)
				emit_loads(&e, &sg, s + 1);
			emit_compute(&e, &sg, s, &job);
		}
		loom_insn mk;
		memset(&mk, 0, sizeof mk);
		mk.w[0] = LOOM_OP_MARK;
		fset(&e, &mk, LOOM_F_MARK_DRAM_ADDR, lay->mark_addr);
		fset(&e, &mk, LOOM_F_MARK_MARK_ID, lay->mark_id);
		emit(&e, &mk);
	}
	if (e.oom)
		return fail(err, errlen, "conv: out of memory");
	if (e.bad) {
		prog->n = n0;
		return fail(err, errlen, "conv: internal error: a value does not fit field %s",
			    loom_field_name(e.badf));
	}
	pl.insns = (uint32_t)(prog->n - n0);
	pl.dram_rd_est = e.rd_bytes;
	if (plan)
		*plan = pl;
	return 0;
}

/* ------------------------------------------------------------------ */
/* packing */

/* weight (co, ky*kw+kx, ci) = w[co*s_co + kk*s_kk + ci*s_ci] */
static int pack(const loom_hwcfg *cfg, const loom_conv_params *p, const int8_t *w, size_t s_co, size_t s_kk,
		size_t s_ci, const int32_t *bias, const int32_t *mult, const int32_t *shift, uint8_t *wbuf,
		uint8_t *pbuf, char *err, size_t len)
{
	layer L;
	if (layer_check(cfg, p, &L, err, len))
		return -1;
	const uint32_t R = L.R, C = L.C, KK = L.kk;
	size_t o = 0;
	for (uint32_t ob = 0; ob < L.nob; ob++)
		for (uint32_t cb = 0; cb < L.ncb; cb++)
			for (uint32_t kk = 0; kk < KK; kk++)
				for (uint32_t c = 0; c < C; c++)
					for (uint32_t r = 0; r < R; r++) {
						uint32_t co = ob * C + c, ci = cb * R + r;
						wbuf[o++] = co < L.cout && ci < L.cin
								    ? (uint8_t)w[co * s_co + kk * s_kk + ci * s_ci]
								    : 0;
					}
	if (L.raw)
		return 0;
	if (!bias || !mult || !shift)
		return fail(err, len, "conv: bias, mult and shift are required unless raw");
	for (uint32_t ob = 0; ob < L.nob; ob++)
		for (uint32_t c = 0; c < C; c++) {
			uint32_t co = ob * C + c;
			int32_t v[3] = {0, 0, 0};
			if (co < L.cout) {
				int64_t sw = 0;
				for (uint32_t kk = 0; kk < KK; kk++)
					for (uint32_t ci = 0; ci < L.cin; ci++)
						sw += w[co * s_co + kk * s_kk + ci * s_ci];
				/* (x - zp) * w summed = x * w summed - zp * sum(w) */
				v[0] = (int32_t)(uint32_t)((int64_t)bias[co] - (int64_t)p->in_zp * sw);
				v[1] = mult[co];
				v[2] = shift[co];
			}
			for (int k = 0; k < 3; k++) {
				size_t at = (((size_t)ob * 3 + k) * C + c) * 4;
				for (int b = 0; b < 4; b++)
					pbuf[at + b] = (uint8_t)((uint32_t)v[k] >> (8 * b));
			}
		}
	return 0;
}

int loom_conv_pack(const loom_hwcfg *cfg, const loom_conv_params *p, const int8_t *w, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err, size_t errlen)
{
	size_t kk = (size_t)p->kh * p->kw;
	return pack(cfg, p, w, kk * p->cin, p->cin, 1, bias, mult, shift, wbuf, pbuf, err, errlen);
}

static int write_consts(loom_hw *hw, const loom_conv_params *p, const loom_dram_layout *lay, const int8_t *w,
			size_t s_co, size_t s_kk, size_t s_ci, const int32_t *bias, const int32_t *mult,
			const int32_t *shift, char *err, size_t len)
{
	loom_conv_plan pl;
	if (loom_conv_plan_make(&hw->cfg, p, &pl, err, len))
		return -1;
	uint8_t *wb = malloc(pl.wgt_bytes + pl.param_bytes + 1);
	if (!wb)
		return fail(err, len, "out of memory");
	uint8_t *pb = wb + pl.wgt_bytes;
	int rc = pack(&hw->cfg, p, w, s_co, s_kk, s_ci, bias, mult, shift, wb, pb, err, len);
	if (!rc && loom_hw_dram_write(hw, lay->wgt_addr, wb, pl.wgt_bytes))
		rc = fail(err, len, "writing weights: %s", loom_hw_error(hw));
	if (!rc && pl.param_bytes && loom_hw_dram_write(hw, lay->param_addr, pb, pl.param_bytes))
		rc = fail(err, len, "writing params: %s", loom_hw_error(hw));
	free(wb);
	return rc;
}

int loom_conv_write_consts(loom_hw *hw, const loom_conv_params *p, const loom_dram_layout *lay, const int8_t *w,
			   const int32_t *bias, const int32_t *mult, const int32_t *shift, char *err, size_t errlen)
{
	size_t kk = (size_t)p->kh * p->kw;
	return write_consts(hw, p, lay, w, kk * p->cin, p->cin, 1, bias, mult, shift, err, errlen);
}

/* ------------------------------------------------------------------ */
/* GEMM */

void loom_gemm_init(loom_gemm_params *g)
{
	memset(g, 0, sizeof *g);
	g->clip_lo = -128;
	g->clip_hi = 127;
}

void loom_gemm_to_conv(const loom_gemm_params *g, loom_conv_params *c)
{
	loom_conv_init(c);
	c->h = 1;
	c->w = g->m;
	c->cin = g->k;
	c->cout = g->n;
	c->in_stride = g->a_stride;
	c->out_stride = g->out_stride;
	c->in_zp = g->a_zp;
	c->out_zp = g->out_zp;
	c->clip_lo = g->clip_lo;
	c->clip_hi = g->clip_hi;
	c->raw = g->raw;
	c->hints = g->hints;
}

int loom_build_gemm(const loom_hwcfg *cfg, const loom_gemm_params *g, const loom_dram_layout *lay, loom_prog *prog,
		    loom_conv_plan *plan, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return loom_build_conv(cfg, &c, lay, prog, plan, err, errlen);
}

int loom_gemm_pack(const loom_hwcfg *cfg, const loom_gemm_params *g, const int8_t *b, const int32_t *bias,
		   const int32_t *mult, const int32_t *shift, uint8_t *wbuf, uint8_t *pbuf, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return pack(cfg, &c, b, 1, 0, g->n, bias, mult, shift, wbuf, pbuf, err, errlen);
}

int loom_gemm_write_consts(loom_hw *hw, const loom_gemm_params *g, const loom_dram_layout *lay, const int8_t *b,
			   const int32_t *bias, const int32_t *mult, const int32_t *shift, char *err, size_t errlen)
{
	loom_conv_params c;
	loom_gemm_to_conv(g, &c);
	return write_consts(hw, &c, lay, b, 1, 0, g->n, bias, mult, shift, err, errlen);
}

static uint64_t stage_place(uint64_t *at, uint64_t n)
{
	uint64_t a = (*at + 63) & ~63ull;
	*at = a + n;
	return a;
}

int loom_layer_stage(loom_hw *hw, const loom_conv_params *cp, const loom_gemm_params *gp,
		     loom_conv_plan *plan, const int8_t *in, const int8_t *w, const int32_t *bias,
		     const int32_t *mult, const int32_t *shift, uint32_t mark_id, uint32_t out_guard,
		     loom_dram_layout *lay, loom_prog *prog, uint64_t *prog_addr, char *e, size_t elen)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char msg[512];
	uint64_t at = 0x1000;
	lay->mark_addr = (uint32_t)stage_place(&at, 64);
	lay->mark_id = mark_id;
	lay->in_addr = (uint32_t)stage_place(&at, plan->in_bytes);
	lay->wgt_addr = (uint32_t)stage_place(&at, plan->wgt_bytes);
	lay->param_addr = (uint32_t)stage_place(&at, plan->param_bytes);
	lay->out_addr = (uint32_t)(stage_place(&at, plan->out_bytes + 2ull * out_guard) + out_guard);
	int brc = gp ? loom_build_gemm(cfg, gp, lay, prog, plan, msg, sizeof msg)
		     : loom_build_conv(cfg, cp, lay, prog, plan, msg, sizeof msg);
	if (brc || loom_prog_finish(prog))
		return fail(e, elen, "build: %s", msg);
	*prog_addr = (at + 31) & ~31ull;
	if (*prog_addr + loom_prog_bytes(prog) > cfg->dram_bytes)
		return fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_prog_verify(cfg, prog, msg, sizeof msg))
		return fail(e, elen, "verify: %s", msg);
	int wrc = gp ? loom_gemm_write_consts(hw, gp, lay, w, bias, mult, shift, msg, sizeof msg)
		     : loom_conv_write_consts(hw, cp, lay, w, bias, mult, shift, msg, sizeof msg);
	if (wrc)
		return fail(e, elen, "consts: %s", msg);
	if (loom_hw_dram_write(hw, lay->in_addr, in, plan->in_bytes) || loom_prog_write(hw, prog, *prog_addr))
		return fail(e, elen, "dram write: %s", loom_hw_error(hw));
	return 0;
}

/* ------------------------------------------------------------------ */
/* vector-unit layers: POOL, DWCONV, ELTWISE, LUT
 *
 * Program shape. The output is cut into tiles of th x tw pixels (the input
 * tile is its window, padding included, laid out [cb][y][x] like a MATMUL's)
 * and the channels into chunks of kc blocks of R channels. A step s is one
 * (tile, chunk): LOAD(s) brings its input (ELTWISE: the a tile, then the b
 * tile) into input buffer s % nbuf, one vector instruction writes output
 * buffer s % nbuf, STORE(s) writes the output to DRAM. ELTWISE and LUT may
 * instead write in place over the a tile (half the SP, so larger tiles).
 * Constants (DWCONV weights and parameter blocks, the LUT table, ELTWISE
 * per-channel b) are loaded once, before LOAD(0), and stay resident.
 *
 * Tokens, out of place (nbuf = 1 or 2; program order LOAD(0..nbuf-2), then
 * per step LOAD(s+nbuf-1), COMPUTE(s), STORE(s)):
 *   LOAD(s)     first insn pops C->L when s >= nbuf; last pushes L->C.
 *   COMPUTE(s)  pops L->C; pops S->C when s >= nbuf (STORE(s-nbuf) has
 *               read output buffer s % nbuf); pushes C->L when LOAD(s+nbuf)
 *               exists; pushes C->S.
 *   STORE(s)    first pops C->S; last pushes S->C when COMPUTE(s+nbuf) exists.
 * In place (nbuf = 2; program order LOAD(0), LOAD(1), then per step
 * COMPUTE(s), LOAD(s+1) for s >= 1, STORE(s)): buffer s % 2 is free for
 * LOAD(s+2) once STORE(s) is done, so when LOAD(s+2) exists, STORE(s)
 * pushes S->C and COMPUTE(s+1) pops it and pushes the C->L that LOAD(s+2)
 * pops (every COMPUTE pops L->C and pushes C->S, every STORE pops C->S).
 * Every pop follows its push in program order; the counters are zero at the
 * layer's closing MARK. */

void loom_vec_init(loom_vec_params *p, int kind)
{
	memset(p, 0, sizeof *p);
	p->kind = kind;
	p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1;
	p->clip_lo = -128;
	p->clip_hi = 127;
}

typedef struct vlayer {
	int kind;
	dimg y, x;
	uint32_t R, c, cbytes, ncb, kk;
	uint32_t lastb;        /* bytes of the last channel block (<= R) */
	uint32_t in_stride, in2_stride, out_stride;
	uint32_t wlines;       /* DWCONV: weight lines before the parameter blocks */
	uint32_t const_lines;
	int full_b;            /* ELTWISE with a b tile per step */
} vlayer;

static const char *const vec_names[] = {"pool", "dwconv", "eltwise", "lut"};

static uint32_t round4(uint32_t v) { return (v + 3u) / 4u * 4u; }

static int vlayer_check(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, char *err, size_t len)
{
	memset(V, 0, sizeof *V);
	if (p->kind < LOOM_VEC_POOL || p->kind > LOOM_VEC_LUT)
		return fail(err, len, "vec: unknown layer kind %d", p->kind);
	const char *nm = vec_names[p->kind];
	V->kind = p->kind;
	if (!p->h || !p->w || !p->c)
		return fail(err, len, "%s: h, w and c must be at least 1", nm);
	if (p->h > 65535 || p->w > 65535)
		return fail(err, len, "%s: input size %ux%u too large", nm, p->h, p->w);
	uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
	if (p->kind == LOOM_VEC_POOL || p->kind == LOOM_VEC_DWCONV) {
		uint32_t kmax = p->kind == LOOM_VEC_POOL ? 255 : 15;
		if (p->kh < 1 || p->kh > kmax || p->kw < 1 || p->kw > kmax)
			return fail(err, len, "%s: window %ux%u outside 1..%u", nm, p->kh, p->kw, kmax);
		if (p->sh < 1 || p->sh > kmax || p->sw < 1 || p->sw > kmax)
			return fail(err, len, "%s: stride %ux%u outside 1..%u", nm, p->sh, p->sw, kmax);
		if (p->dh < 1 || p->dh > 15 || p->dw < 1 || p->dw > 15)
			return fail(err, len, "%s: dilation %ux%u outside 1..15", nm, p->dh, p->dw);
		kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
		pt = p->pad_top, pb = p->pad_bottom, pl = p->pad_left, pr = p->pad_right;
	}
	V->y = (dimg){p->h, 0, kh, sh, dh, pt, pb, (kh - 1) * dh + 1};
	V->x = (dimg){p->w, 0, kw, sw, dw, pl, pr, (kw - 1) * dw + 1};
	dimg *d[2] = {&V->y, &V->x};
	for (int i = 0; i < 2; i++) {
		if (d[i]->plo >= d[i]->ek || d[i]->phi >= d[i]->ek)
			return fail(err, len, "%s: padding %u/%u must be smaller than the dilated window extent %u", nm,
				    d[i]->plo, d[i]->phi, d[i]->ek);
		uint64_t span = (uint64_t)d[i]->in + d[i]->plo + d[i]->phi;
		if (span < d[i]->ek)
			return fail(err, len, "%s: the padded input (%llu) is smaller than the window extent %u", nm,
				    (unsigned long long)span, d[i]->ek);
		d[i]->out = (uint32_t)((span - d[i]->ek) / d[i]->s + 1);
	}
	V->R = cfg->array_rows;
	V->c = p->c;
	V->cbytes = round4(p->c);
	V->ncb = cdiv(p->c, V->R);
	V->lastb = V->cbytes - (V->ncb - 1) * V->R;
	V->kk = kh * kw;
	V->in_stride = p->in_stride ? p->in_stride : V->cbytes;
	V->out_stride = p->out_stride ? p->out_stride : V->cbytes;
	V->in2_stride = p->in2_stride ? p->in2_stride : V->cbytes;
	if (V->in_stride % 4 || V->in_stride < p->c)
		return fail(err, len, "%s: in_stride %u must be a multiple of 4 and >= c %u", nm, V->in_stride, p->c);
	if (V->out_stride % 4 || V->out_stride < p->c)
		return fail(err, len, "%s: out_stride %u must be a multiple of 4 and >= c %u", nm, V->out_stride, p->c);
	if (p->clip_lo > p->clip_hi)
		return fail(err, len, "%s: clip_lo %d > clip_hi %d", nm, p->clip_lo, p->clip_hi);
	int requant = 0;
	switch (p->kind) {
	case LOOM_VEC_POOL:
		if (p->func != LOOM_POOL_MAX && p->func != LOOM_POOL_AVG)
			return fail(err, len, "pool: func %d is neither MAX nor AVG", p->func);
		requant = p->func == LOOM_POOL_AVG;
		break;
	case LOOM_VEC_DWCONV:
		V->wlines = V->ncb * V->kk;
		V->const_lines = V->wlines + LOOM_DW_PARAM_LINES * V->ncb;
		break;
	case LOOM_VEC_ELTWISE:
		if (p->func != LOOM_ELT_ADD && p->func != LOOM_ELT_MUL)
			return fail(err, len, "eltwise: func %d is neither ADD nor MUL", p->func);
		if (p->bcast != LOOM_BCAST_NONE && p->bcast != LOOM_BCAST_CHANNEL)
			return fail(err, len, "eltwise: bcast %d unknown", p->bcast);
		if (p->func == LOOM_ELT_ADD && (p->mult_a < INT16_MIN || p->mult_a > INT16_MAX ||
						p->mult_b < INT16_MIN || p->mult_b > INT16_MAX))
			return fail(err, len, "eltwise: mult_a %d / mult_b %d outside int16", p->mult_a, p->mult_b);
		if (p->bcast == LOOM_BCAST_NONE && (V->in2_stride % 4 || V->in2_stride < p->c))
			return fail(err, len, "eltwise: in2_stride %u must be a multiple of 4 and >= c %u",
				    V->in2_stride, p->c);
		V->full_b = p->bcast == LOOM_BCAST_NONE;
		if (!V->full_b)
			V->const_lines = V->ncb;
		requant = 1;
		break;
	default: /* LUT */
		V->const_lines = cdiv(LOOM_LUT_ENTRIES, V->R);
		break;
	}
	if (requant && (p->shift < 0 || p->shift > 31))
		return fail(err, len, "%s: shift %d outside 0..31", nm, p->shift);
	uint64_t inb = (uint64_t)p->h * p->w * V->in_stride, outb = (uint64_t)V->y.out * V->x.out * V->out_stride;
	if (inb > cfg->dram_bytes || outb > cfg->dram_bytes ||
	    (V->full_b && (uint64_t)p->h * p->w * V->in2_stride > cfg->dram_bytes))
		return fail(err, len, "%s: tensors larger than DRAM", nm);
	return 0;
}

static int vec_try(const loom_hwcfg *cfg, const vlayer *V, uint32_t th, uint32_t tw, uint32_t kc, int nbuf,
		   int inplace, loom_vec_plan *pl)
{
	if (!kc || kc > 255 || kc > V->ncb || !th || th > V->y.out || !tw || tw > V->x.out || th > 4095 || tw > 4095)
		return -1;
	if (inplace && nbuf != 2)
		return -1;
	uint32_t ih = dim_tin(&V->y, th), iw = dim_tin(&V->x, tw);
	if (ih > 4095 || iw > 4095)
		return -1;
	uint64_t P = (uint64_t)th * tw;
	if ((uint64_t)kc * P > 0xffffffu)
		return -1; /* ELTWISE.PLANE_LINES, LUT.LINES */
	uint64_t inl = (uint64_t)kc * ih * iw + (V->full_b ? kc * P : 0);
	uint64_t outl = inplace ? 0 : kc * P;
	uint64_t BL = cfg->sp_bank_lines, SL = cfg->sp_lines;
	/* buffers in0, in1, out0, out1 each from a bank boundary, the constants
	 * after them; or, when that does not fit, all packed */
	uint64_t reg[4], at[4];
	int nreg = 0;
	for (int b = 0; b < nbuf; b++)
		reg[nreg++] = inl;
	if (!inplace)
		for (int b = 0; b < nbuf; b++)
			reg[nreg++] = outl;
	int found = 0;
	for (int aligned = 1; aligned >= 0 && !found; aligned--) {
		uint64_t pos = 0;
		for (int i = 0; i < nreg; i++) {
			if (aligned)
				pos = (pos + BL - 1) / BL * BL;
			at[i] = pos;
			pos += reg[i];
		}
		if (pos + V->const_lines <= SL) {
			found = 1;
			pl->banks = aligned;
			pl->const_sp = (uint32_t)pos;
		}
	}
	if (!found)
		return -1;
	for (int b = 0; b < 2; b++) {
		pl->in_sp[b] = (uint32_t)at[b % nbuf];
		pl->out_sp[b] = inplace ? pl->in_sp[b] : (uint32_t)at[nbuf + b % nbuf];
	}
	pl->in_lines = (uint32_t)inl;
	pl->out_lines = (uint32_t)(inplace ? kc * P : outl);
	pl->const_lines = V->const_lines;
	pl->th = th;
	pl->tw = tw;
	pl->ntiles = cdiv(V->y.out, th) * cdiv(V->x.out, tw);
	pl->kc = kc;
	pl->nk = cdiv(V->ncb, kc);
	pl->nsteps = pl->ntiles * pl->nk;
	pl->nbuf = nbuf;
	pl->inplace = inplace;

	/* cost (cycles): the timing model's (common/timing.h) */
	static const unsigned opcode[] = {
		[LOOM_VEC_POOL] = LOOM_OP_POOL, [LOOM_VEC_DWCONV] = LOOM_OP_DWCONV,
		[LOOM_VEC_ELTWISE] = LOOM_OP_ELTWISE, [LOOM_VEC_LUT] = LOOM_OP_LUT,
	};
	loom_timing tm;
	loom_timing_init(&tm, cfg, 0, 0);
	loom_vec_est e = {
		.opcode = opcode[V->kind], .oh = V->y.out, .ow = V->x.out, .ih = V->y.in, .iw = V->x.in,
		.ncb = V->ncb, .kk = V->kk, .const_lines = V->const_lines, .full_b = V->full_b,
		.tile_ih = ih, .tile_iw = iw, .ntiles = pl->ntiles, .nk = pl->nk, .nbuf = nbuf,
		.inplace = inplace, .banks = pl->banks,
	};
	double total = loom_est_vec(&tm, &e);
	pl->est_cycles = (uint64_t)total;
	return 0;
}

static int vec_plan(const loom_hwcfg *cfg, const loom_vec_params *p, vlayer *V, loom_vec_plan *plan, char *err,
		    size_t len)
{
	if (vlayer_check(cfg, p, V, err, len))
		return -1;
	const loom_vec_hints *h = p->hints;
	loom_vec_hints none;
	memset(&none, 0, sizeof none);
	if (!h)
		h = &none;
	enum { CAP = 512 };
	uint32_t *ths = malloc(3 * CAP * sizeof *ths);
	if (!ths)
		return fail(err, len, "out of memory");
	uint32_t *tws = ths + CAP, *kcs = ths + 2 * CAP;
	int nth = distinct_sizes(V->y.out, 4095, umin(umin(h->th, V->y.out), 4095), ths, CAP);
	int ntw = distinct_sizes(V->x.out, 4095, umin(umin(h->tw, V->x.out), 4095), tws, CAP);
	int nkc = distinct_sizes(V->ncb, 255, umin(umin(h->kc, V->ncb), 255), kcs, CAP);
	int can_inplace = V->kind == LOOM_VEC_ELTWISE || V->kind == LOOM_VEC_LUT;
	loom_vec_plan best, c;
	int have = 0;
	memset(&best, 0, sizeof best);
	for (int nbuf = 2; nbuf >= 1; nbuf--) {
		if (h->nbuf && nbuf != h->nbuf)
			continue;
		for (int ip = 0; ip <= 1; ip++) {
			if (ip && !can_inplace)
				continue;
			if (h->inplace && ip != h->inplace - 1)
				continue;
			for (int a = 0; a < nth; a++)
				for (int b = 0; b < ntw; b++)
					for (int k = 0; k < nkc; k++) {
						memset(&c, 0, sizeof c);
						if (vec_try(cfg, V, ths[a], tws[b], kcs[k], nbuf, ip, &c))
							continue;
						if (!have || c.est_cycles < best.est_cycles ||
						    (c.est_cycles == best.est_cycles && c.nsteps < best.nsteps)) {
							best = c;
							have = 1;
						}
					}
		}
	}
	free(ths);
	if (!have)
		return fail(err, len, "%s %ux%ux%u (window %ux%u): no tiling fits configuration %s (sp %u lines)",
			    vec_names[p->kind], p->h, p->w, p->c, V->y.k, V->x.k, cfg->name, cfg->sp_lines);
	best.oh = V->y.out;
	best.ow = V->x.out;
	best.ncb = V->ncb;
	best.in_stride = V->in_stride;
	best.in2_stride = V->full_b ? V->in2_stride : 0;
	best.out_stride = V->out_stride;
	best.in_bytes = (uint64_t)p->h * p->w * V->in_stride;
	best.in2_bytes = p->kind != LOOM_VEC_ELTWISE ? 0 : V->full_b ? (uint64_t)p->h * p->w * V->in2_stride : V->cbytes;
	best.out_bytes = (uint64_t)best.oh * best.ow * V->out_stride;
	best.const_bytes = p->kind == LOOM_VEC_DWCONV || p->kind == LOOM_VEC_LUT ? (uint64_t)V->const_lines * V->R : 0;
	best.insns = 0;
	*plan = best;
	return 0;
}

int loom_vec_plan_make(const loom_hwcfg *cfg, const loom_vec_params *p, loom_vec_plan *plan, char *err,
		       size_t errlen)
{
	vlayer V;
	return vec_plan(cfg, p, &V, plan, err, errlen);
}

typedef struct vstep {
	dtile ty, tx;
	uint32_t buf, cb0, kck, nfull; /* nfull: blocks of R bytes (the rest: one of lastb bytes) */
} vstep;

static void vec_step(const vlayer *V, const loom_vec_plan *pl, uint32_t s, vstep *st)
{
	uint32_t t = s / pl->nk, k = s % pl->nk;
	uint32_t ntc = cdiv(V->x.out, pl->tw), oy0 = t / ntc * pl->th, ox0 = t % ntc * pl->tw;
	dim_tile(&V->y, oy0, umin(pl->th, V->y.out - oy0), &st->ty);
	dim_tile(&V->x, ox0, umin(pl->tw, V->x.out - ox0), &st->tx);
	st->buf = s % pl->nbuf;
	st->cb0 = k * pl->kc;
	st->kck = umin(pl->kc, V->ncb - st->cb0);
	st->nfull = st->kck;
	if (st->cb0 + st->kck == V->ncb && V->lastb < V->R)
		st->nfull--;
}

/* The input tile of a step from a tensor at dram with `stride` bytes a pixel
 * into SP lines [cb][y][x] from sp (padding lines hold pad). */
static void vec_tile_load(emitter *e, const vlayer *V, const vstep *st, uint32_t dram, uint32_t stride,
			  uint32_t sp, uint8_t pad)
{
	const dtile *ty = &st->ty, *tx = &st->tx;
	uint32_t R = V->R, plane = ty->tin * tx->tin;
	uint64_t base = dram + ((uint64_t)ty->first * V->x.in + tx->first) * stride + (uint64_t)st->cb0 * R;
	xfer x = {.mem = LOOM_MEM_SP, .row_bytes = R, .dram = (uint32_t)base, .addr = sp,
		  .s1 = stride * (V->x.k == 1 ? V->x.s : 1), .s2 = V->x.in * stride * (V->y.k == 1 ? V->y.s : 1),
		  .s3 = R, .n1 = tx->valid, .n2 = ty->valid, .n3 = st->nfull,
		  .pt = ty->pl, .pb = ty->ph, .pl = tx->pl, .pr = tx->ph, .pad = pad};
	if (st->nfull)
		emit_load(e, &x);
	if (st->nfull < st->kck) {
		x.row_bytes = V->lastb;
		x.dram = (uint32_t)(base + (uint64_t)st->nfull * R);
		x.addr = sp + st->nfull * plane;
		x.n3 = 1;
		x.s3 = 0;
		emit_load(e, &x);
	}
}

static void vec_loads(emitter *e, const vlayer *V, const loom_vec_params *p, const loom_vec_plan *pl,
		      const loom_vec_layout *lay, uint32_t s, int pop)
{
	vstep st;
	vec_step(V, pl, s, &st);
	size_t first = e->prog->n;
	uint8_t pad = V->kind == LOOM_VEC_POOL && p->func == LOOM_POOL_MAX ? 0x80 : (uint8_t)p->in_zp;
	vec_tile_load(e, V, &st, lay->in_addr, V->in_stride, pl->in_sp[st.buf], pad);
	if (V->full_b)
		vec_tile_load(e, V, &st, lay->in2_addr, V->in2_stride,
			      pl->in_sp[st.buf] + st.kck * st.ty.tin * st.tx.tin, 0);
	if (e->oom || e->prog->n == first)
		return;
	if (pop)
		e->prog->insn[first].w[0] |= 1u << 9;          /* LOAD.POP_NEXT */
	e->prog->insn[e->prog->n - 1].w[0] |= 1u << 11;        /* LOAD.PUSH_NEXT */
}

static void vec_compute(emitter *e, const vlayer *V, const loom_vec_params *p, const loom_vec_plan *pl, uint32_t s,
			int pop_prev, int pop_next, int push_prev, int push_next)
{
	vstep st;
	vec_step(V, pl, s, &st);
	uint32_t src = pl->in_sp[st.buf], dst = pl->out_sp[st.buf];
	uint32_t P = st.ty.t * st.tx.t;
	uint32_t sw = V->x.k == 1 ? 1 : V->x.s, sh = V->y.k == 1 ? 1 : V->y.s;
	uint8_t lo = (uint8_t)p->clip_lo, hi = (uint8_t)p->clip_hi;
	loom_insn in;
	memset(&in, 0, sizeof in);
	switch (V->kind) {
	case LOOM_VEC_POOL: {
		int avg = p->func == LOOM_POOL_AVG;
		in.w[0] = LOOM_OP_POOL;
		fset(e, &in, LOOM_F_POOL_FUNC, avg);
		fset(e, &in, LOOM_F_POOL_SHIFT, avg ? (uint32_t)p->shift : 0);
		fset(e, &in, LOOM_F_POOL_ZP_OUT, avg ? (uint8_t)p->out_zp : 0);
		fset(e, &in, LOOM_F_POOL_SRC, src);
		fset(e, &in, LOOM_F_POOL_ZP_IN, avg ? (uint8_t)p->in_zp : 0);
		fset(e, &in, LOOM_F_POOL_DST, dst);
		fset(e, &in, LOOM_F_POOL_CLIP_LO, lo);
		fset(e, &in, LOOM_F_POOL_CLIP_HI, hi);
		fset(e, &in, LOOM_F_POOL_IN_W, st.tx.tin);
		fset(e, &in, LOOM_F_POOL_IN_H, st.ty.tin);
		fset(e, &in, LOOM_F_POOL_OUT_W, st.tx.t);
		fset(e, &in, LOOM_F_POOL_OUT_H, st.ty.t);
		fset(e, &in, LOOM_F_POOL_NCB, st.kck);
		fset(e, &in, LOOM_F_POOL_KW, V->x.k);
		fset(e, &in, LOOM_F_POOL_KH, V->y.k);
		fset(e, &in, LOOM_F_POOL_SW, sw);
		fset(e, &in, LOOM_F_POOL_SH, sh);
		fset(e, &in, LOOM_F_POOL_DW, V->x.d);
		fset(e, &in, LOOM_F_POOL_DH, V->y.d);
		fset(e, &in, LOOM_F_POOL_MULT, avg ? (uint32_t)p->mult : 0);
		break;
	}
	case LOOM_VEC_DWCONV:
		in.w[0] = LOOM_OP_DWCONV;
		fset(e, &in, LOOM_F_DWCONV_ZP_IN, (uint8_t)p->in_zp);
		fset(e, &in, LOOM_F_DWCONV_ZP_OUT, (uint8_t)p->out_zp);
		fset(e, &in, LOOM_F_DWCONV_SRC, src);
		fset(e, &in, LOOM_F_DWCONV_CLIP_LO, lo);
		fset(e, &in, LOOM_F_DWCONV_WGT, pl->const_sp + st.cb0 * V->kk);
		fset(e, &in, LOOM_F_DWCONV_CLIP_HI, hi);
		fset(e, &in, LOOM_F_DWCONV_PARAM, pl->const_sp + V->wlines + LOOM_DW_PARAM_LINES * st.cb0);
		fset(e, &in, LOOM_F_DWCONV_DST, dst);
		fset(e, &in, LOOM_F_DWCONV_NCB, st.kck);
		fset(e, &in, LOOM_F_DWCONV_IN_W, st.tx.tin);
		fset(e, &in, LOOM_F_DWCONV_IN_H, st.ty.tin);
		fset(e, &in, LOOM_F_DWCONV_KW, V->x.k);
		fset(e, &in, LOOM_F_DWCONV_KH, V->y.k);
		fset(e, &in, LOOM_F_DWCONV_OUT_W, st.tx.t);
		fset(e, &in, LOOM_F_DWCONV_OUT_H, st.ty.t);
		fset(e, &in, LOOM_F_DWCONV_SW, sw);
		fset(e, &in, LOOM_F_DWCONV_SH, sh);
		fset(e, &in, LOOM_F_DWCONV_DW, V->x.d);
		fset(e, &in, LOOM_F_DWCONV_DH, V->y.d);
		break;
	case LOOM_VEC_ELTWISE: {
		int add = p->func == LOOM_ELT_ADD;
		unsigned bm = V->full_b ? LOOM_BMODE_LINE : st.kck == 1 ? LOOM_BMODE_ONE : LOOM_BMODE_PLANE;
		in.w[0] = LOOM_OP_ELTWISE;
		fset(e, &in, LOOM_F_ELTWISE_FUNC, add ? LOOM_ELT_ADD : LOOM_ELT_MUL);
		fset(e, &in, LOOM_F_ELTWISE_B_MODE, bm);
		fset(e, &in, LOOM_F_ELTWISE_SHIFT, (uint32_t)p->shift);
		fset(e, &in, LOOM_F_ELTWISE_ZP_OUT, (uint8_t)p->out_zp);
		fset(e, &in, LOOM_F_ELTWISE_SRC_A, src);
		fset(e, &in, LOOM_F_ELTWISE_ZP_A, (uint8_t)p->in_zp);
		fset(e, &in, LOOM_F_ELTWISE_SRC_B, V->full_b ? src + st.kck * P : pl->const_sp + st.cb0);
		fset(e, &in, LOOM_F_ELTWISE_ZP_B, (uint8_t)p->in2_zp);
		fset(e, &in, LOOM_F_ELTWISE_DST, dst);
		fset(e, &in, LOOM_F_ELTWISE_CLIP_LO, lo);
		fset(e, &in, LOOM_F_ELTWISE_PLANE_LINES, P);
		fset(e, &in, LOOM_F_ELTWISE_CLIP_HI, hi);
		fset(e, &in, LOOM_F_ELTWISE_PLANES, st.kck);
		fset(e, &in, LOOM_F_ELTWISE_MULT_A, add ? (uint16_t)p->mult_a : 0);
		fset(e, &in, LOOM_F_ELTWISE_MULT_B, add ? (uint16_t)p->mult_b : 0);
		fset(e, &in, LOOM_F_ELTWISE_MULT, (uint32_t)p->mult);
		break;
	}
	default:
		in.w[0] = LOOM_OP_LUT;
		fset(e, &in, LOOM_F_LUT_SRC, src);
		fset(e, &in, LOOM_F_LUT_DST, dst);
		fset(e, &in, LOOM_F_LUT_TABLE, pl->const_sp);
		fset(e, &in, LOOM_F_LUT_LINES, st.kck * P);
		break;
	}
	/* the compute queue's token bits, the same for every opcode of it */
	in.w[0] |= (uint32_t)!!pop_prev << 8 | (uint32_t)!!pop_next << 9 | (uint32_t)!!push_prev << 10 |
		   (uint32_t)!!push_next << 11;
	emit(e, &in);
}

static void vec_store(emitter *e, const vlayer *V, const loom_vec_plan *pl, const loom_vec_layout *lay, uint32_t s,
		      int push)
{
	vstep st;
	vec_step(V, pl, s, &st);
	uint32_t R = V->R, P = st.ty.t * st.tx.t;
	uint64_t dram = lay->out_addr + ((uint64_t)st.ty.o0 * V->x.out + st.tx.o0) * V->out_stride +
			(uint64_t)st.cb0 * R;
	size_t first = e->prog->n;
	for (int part = 0; part < 2; part++) {
		uint32_t n3 = part ? st.kck - st.nfull : st.nfull;
		if (!n3)
			continue;
		loom_insn in;
		memset(&in, 0, sizeof in);
		in.w[0] = LOOM_OP_STORE;
		fset(e, &in, LOOM_F_STORE_SOURCE, LOOM_MEM_SP);
		fset(e, &in, LOOM_F_STORE_ROW_WORDS, (part ? V->lastb : R) / 4);
		fset(e, &in, LOOM_F_STORE_DRAM_ADDR, (uint32_t)(dram + (part ? (uint64_t)st.nfull * R : 0)));
		fset(e, &in, LOOM_F_STORE_MEM_ADDR, pl->out_sp[st.buf] + (part ? st.nfull * P : 0));
		fset(e, &in, LOOM_F_STORE_STRIDE1, V->out_stride);
		fset(e, &in, LOOM_F_STORE_STRIDE2, V->x.out * V->out_stride);
		fset(e, &in, LOOM_F_STORE_STRIDE3, part ? 0 : R);
		fset(e, &in, LOOM_F_STORE_N1, st.tx.t);
		fset(e, &in, LOOM_F_STORE_N2, st.ty.t);
		fset(e, &in, LOOM_F_STORE_N3, n3);
		emit(e, &in);
	}
	if (e->oom || e->prog->n == first)
		return;
	e->prog->insn[first].w[0] |= 1u << 8;                 /* STORE.POP_PREV */
	if (push)
		e->prog->insn[e->prog->n - 1].w[0] |= 1u << 10; /* STORE.PUSH_PREV */
}

int loom_build_vec(const loom_hwcfg *cfg, const loom_vec_params *p, const loom_vec_layout *lay, loom_prog *prog,
		   loom_vec_plan *plan, char *err, size_t errlen)
{
	vlayer V;
	loom_vec_plan pl;
	if (vec_plan(cfg, p, &V, &pl, err, errlen))
		return -1;
	const char *nm = vec_names[p->kind];
	if ((lay->in_addr | lay->in2_addr | lay->const_addr | lay->out_addr | lay->mark_addr) & 3u)
		return fail(err, errlen, "%s: DRAM addresses must be multiples of 4", nm);
	emitter e = {.cfg = cfg, .prog = prog};
	size_t n0 = prog->n;
	loom_insn ld[8];
	int n = 0;
	/* resident constants */
	if (V.kind == LOOM_VEC_DWCONV || V.kind == LOOM_VEC_LUT) {
		lin_load(&e, ld, &n, LOOM_MEM_SP, lay->const_addr, pl.const_sp, pl.const_lines, V.R);
	} else if (V.kind == LOOM_VEC_ELTWISE && !V.full_b) {
		/* per-channel b: line cb = channels cb*R.. */
		uint32_t nfull = V.lastb < V.R ? V.ncb - 1 : V.ncb;
		lin_load(&e, ld, &n, LOOM_MEM_SP, lay->in2_addr, pl.const_sp, nfull, V.R);
		if (nfull < V.ncb && n < 8) {
			xfer x = {.mem = LOOM_MEM_SP, .row_bytes = V.lastb, .dram = lay->in2_addr + nfull * V.R,
				  .addr = pl.const_sp + nfull, .s1 = V.lastb, .n1 = 1, .n2 = 1, .n3 = 1};
			ld[n++] = mk_load(&e, &x);
		}
	}
	for (int i = 0; i < n; i++)
		emit(&e, &ld[i]);
	uint32_t S = pl.nsteps, nb = (uint32_t)pl.nbuf;
	if (!pl.inplace) {
		for (uint32_t s = 0; s + 1 < nb && s < S; s++)
			vec_loads(&e, &V, p, &pl, lay, s, 0);
		for (uint32_t s = 0; s < S; s++) {
			uint32_t l = s + nb - 1;
			if (l < S)
				vec_loads(&e, &V, p, &pl, lay, l, l >= nb);
			vec_compute(&e, &V, p, &pl, s, 1, s >= nb, s + nb < S, 1);
			vec_store(&e, &V, &pl, lay, s, s + nb < S);
		}
	} else {
		vec_loads(&e, &V, p, &pl, lay, 0, 0);
		if (S > 1)
			vec_loads(&e, &V, p, &pl, lay, 1, 0);
		for (uint32_t s = 0; s < S; s++) {
			/* STORE(s-1) -> COMPUTE(s) -> LOAD(s+1), both tokens only when LOAD(s+1) exists */
			int relay = s >= 1 && s + 1 < S;
			vec_compute(&e, &V, p, &pl, s, 1, relay, relay, 1);
			if (relay)
				vec_loads(&e, &V, p, &pl, lay, s + 1, 1);
			vec_store(&e, &V, &pl, lay, s, s + 2 < S);
		}
	}
	loom_insn mk;
	memset(&mk, 0, sizeof mk);
	mk.w[0] = LOOM_OP_MARK;
	fset(&e, &mk, LOOM_F_MARK_DRAM_ADDR, lay->mark_addr);
	fset(&e, &mk, LOOM_F_MARK_MARK_ID, lay->mark_id);
	emit(&e, &mk);
	if (e.oom)
		return fail(err, errlen, "%s: out of memory", nm);
	if (e.bad) {
		prog->n = n0;
		return fail(err, errlen, "%s: internal error: a value does not fit field %s", nm,
			    e.badf < LOOM_F_COUNT ? loom_field_name(e.badf) : "?");
	}
	pl.insns = (uint32_t)(prog->n - n0);
	pl.dram_rd_est = e.rd_bytes;
	if (plan)
		*plan = pl;
	return 0;
}

int loom_vec_pack(const loom_hwcfg *cfg, const loom_vec_params *p, const int8_t *w, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, const int8_t *lut, uint8_t *buf, char *err, size_t errlen)
{
	vlayer V;
	if (vlayer_check(cfg, p, &V, err, errlen))
		return -1;
	const uint32_t R = V.R;
	if (V.kind == LOOM_VEC_LUT) {
		if (!lut)
			return fail(err, errlen, "lut: the table is required");
		memset(buf, 0, (size_t)V.const_lines * R);
		memcpy(buf, lut, LOOM_LUT_ENTRIES);
		return 0;
	}
	if (V.kind != LOOM_VEC_DWCONV)
		return 0;
	if (!w || !bias || !mult || !shift)
		return fail(err, errlen, "dwconv: weights, bias, mult and shift are required");
	size_t o = 0;
	for (uint32_t cb = 0; cb < V.ncb; cb++)
		for (uint32_t kk = 0; kk < V.kk; kk++)
			for (uint32_t r = 0; r < R; r++) {
				uint32_t ch = cb * R + r;
				buf[o++] = ch < V.c ? (uint8_t)w[(size_t)kk * V.c + ch] : 0;
			}
	/* parameter block of a channel block: bias int32[R], mult int32[R]
	 * (little-endian, R/4 a line), shift byte[R] */
	for (uint32_t cb = 0; cb < V.ncb; cb++) {
		uint8_t *blk = buf + o;
		memset(blk, 0, (size_t)LOOM_DW_PARAM_LINES * R);
		for (uint32_t r = 0; r < R; r++) {
			uint32_t ch = cb * R + r;
			if (ch >= V.c)
				continue;
			for (int b = 0; b < 4; b++) {
				blk[4 * r + b] = (uint8_t)((uint32_t)bias[ch] >> (8 * b));
				blk[4 * R + 4 * r + b] = (uint8_t)((uint32_t)mult[ch] >> (8 * b));
			}
			blk[8 * R + r] = (uint8_t)((uint32_t)shift[ch] & 31u);
		}
		o += (size_t)LOOM_DW_PARAM_LINES * R;
	}
	return 0;
}

int loom_vec_stage(loom_hw *hw, const loom_vec_params *p, loom_vec_plan *plan, const int8_t *in, const int8_t *in2,
		   const int8_t *w, const int32_t *bias, const int32_t *mult, const int32_t *shift, const int8_t *lut,
		   uint32_t mark_id, uint32_t out_guard, loom_vec_layout *lay, loom_prog *prog, uint64_t *prog_addr,
		   char *e, size_t elen)
{
	const loom_hwcfg *cfg = &hw->cfg;
	char msg[512] = "out of memory";
	uint64_t at = 0x1000;
	memset(lay, 0, sizeof *lay);
	lay->mark_addr = (uint32_t)stage_place(&at, 64);
	lay->mark_id = mark_id;
	lay->in_addr = (uint32_t)stage_place(&at, plan->in_bytes);
	lay->in2_addr = (uint32_t)stage_place(&at, plan->in2_bytes);
	lay->const_addr = (uint32_t)stage_place(&at, plan->const_bytes);
	lay->out_addr = (uint32_t)(stage_place(&at, plan->out_bytes + 2ull * out_guard) + out_guard);
	if (at > cfg->dram_bytes)
		return fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_build_vec(cfg, p, lay, prog, plan, msg, sizeof msg) || loom_prog_finish(prog))
		return fail(e, elen, "build: %s", msg);
	*prog_addr = (at + 31) & ~31ull;
	if (*prog_addr + loom_prog_bytes(prog) > cfg->dram_bytes)
		return fail(e, elen, "does not fit DRAM (%u MiB)", cfg->dram_mib);
	if (loom_prog_verify(cfg, prog, msg, sizeof msg))
		return fail(e, elen, "verify: %s", msg);
	if (plan->const_bytes) {
		uint8_t *cb = malloc(plan->const_bytes);
		if (!cb)
			return fail(e, elen, "consts: out of memory");
		int rc = loom_vec_pack(cfg, p, w, bias, mult, shift, lut, cb, msg, sizeof msg);
		if (!rc && loom_hw_dram_write(hw, lay->const_addr, cb, plan->const_bytes))
			rc = fail(msg, sizeof msg, "%s", loom_hw_error(hw));
		free(cb);
		if (rc)
			return fail(e, elen, "consts: %s", msg);
	}
	if (loom_hw_dram_write(hw, lay->in_addr, in, plan->in_bytes) ||
	    (plan->in2_bytes && loom_hw_dram_write(hw, lay->in2_addr, in2, plan->in2_bytes)) ||
	    loom_prog_write(hw, prog, *prog_addr))
		return fail(e, elen, "dram write: %s", loom_hw_error(hw));
	return 0;
}

int loom_quant_mult(double scale, int32_t *mult, int32_t *shift)
{
	*mult = 0;
	*shift = 0;
	if (!(scale > 0) || scale >= 1)
		return scale == 0 ? 0 : -1;
	int ex;
	double q = frexp(scale, &ex); /* scale = q * 2^ex, q in [0.5, 1) */
	long long m = llround(q * 2147483648.0);
	if (m == 2147483648ll) {
		m = 1ll << 30;
		ex++;
	}
	if (ex > 0)
		return -1;
	if (-ex > 31) {
		/* below 2^-32: a smaller multiplier at the largest shift */
		m = llround(scale * 2147483648.0 * 2147483648.0);
		ex = -31;
	}
	*mult = (int32_t)m;
	*shift = -ex;
	return 0;
}

int loom_quant_add(double sa, double sb, double so, loom_vec_params *p)
{
	if (!(sa > 0) || !(sb > 0) || !(so > 0))
		return -1;
	double big = sa >= sb ? sa : sb, small = sa >= sb ? sb : sa;
	int32_t ms = (int32_t)lround(16384.0 * small / big);
	p->mult_a = sa >= sb ? 16384 : ms;
	p->mult_b = sa >= sb ? ms : 16384;
	return loom_quant_mult(big / (16384.0 * so), &p->mult, &p->shift);
}
