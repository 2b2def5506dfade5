/* cm_exec.c - the C model's data path: the functional semantics of each
 * tensor-engine instruction (docs/ISA.md), applied atomically when the
 * instruction starts (cmodel/cmodel.c's event model says when).
 *
 * Three sets of kernels give the same bytes: the generic one, plain C
 * loops straight from the definitions below; the AVX2 one (cm_avx2.c) for
 * MATMUL, STORE's requantization, ELTWISE and POOL; and the AVX-512 one
 * (cm_avx512.c: MATMUL on VNNI, STORE's requantization; the AVX2 kernels for
 * the rest). The best the host's CPU has is chosen at run time
 * (cm_dp_pick). LOOM_CMODEL_SIMD=generic forces the generic kernels, =avx2
 * or =avx512 that set (an error naming the variable on a CPU without it);
 * unset or auto picks. Integer arithmetic makes them exact: MATMUL's
 * int8 x int8 products are summed as int32 modulo 2^32 in any order (the
 * accumulator wraps), requantization is computed lane by lane with the same
 * integer steps as loom_requant (common/isa.c). `loom cosim --a
 * cmodel-generic --b cmodel`, tests/unit/test_cmodel_paths.c and the model
 * tests check that they agree.
 *
 * DRAM_RD_BYTES / DRAM_WR_BYTES count whole beats of each row (the beat
 * is a power of two: shifts). */
#include "cmodel/cmodel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(op, f) loom_insn_get(in, LOOM_F_##op##_##f)

int cm_dp_pick(int force_generic, char *err, size_t errlen)
{
	/* indexed by the paths (CM_SIMD_*) */
	static const char *const names[CM_SIMD_AVX512 + 1] = {"generic", "avx2", "avx512"};
	static const char *const needs[CM_SIMD_AVX512 + 1] = {"", "AVX2", "AVX-512 F, BW, VL and VNNI"};
	const char *e = getenv("LOOM_CMODEL_SIMD");
	int have = CM_SIMD_GENERIC; /* the best path this CPU has */
#if CM_HAVE_AVX2
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		have = CM_SIMD_AVX2;
	if (have && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
		have = CM_SIMD_AVX512;
#endif
	if (force_generic)
		return CM_SIMD_GENERIC;
	if (!e || !*e || !strcmp(e, "auto"))
		return have;
	for (int k = CM_SIMD_GENERIC; k <= CM_SIMD_AVX512; k++) {
		if (strcmp(e, names[k]))
			continue;
		if (k <= have)
			return k;
		snprintf(err, errlen, "cmodel: LOOM_CMODEL_SIMD=%s but this CPU has no %s (use generic, %sauto)", e,
			 needs[k], have == CM_SIMD_AVX2 ? "avx2 or " : "or ");
		return -1;
	}
	snprintf(err, errlen, "cmodel: LOOM_CMODEL_SIMD=%s is not one of generic, avx2, avx512, auto", e);
	return -1;
}

void cm_dp_set(cm_dp *d, int path)
{
	d->avx2 = path >= CM_SIMD_AVX2;
	d->avx512 = path == CM_SIMD_AVX512;
}

void cm_dp_free(cm_dp *d)
{
	free(d->wt);
	free(d->act);
	for (int i = 0; i < CM_WCONV; i++) {
		free(d->wc[i].raw);
		free(d->wc[i].wq);
		free(d->wc[i].kl);
		free(d->wc[i].nk);
	}
	free(d->foff);
	memset(d, 0, sizeof *d);
}

void cm_sp_written(cm_dp *d, uint64_t l0, uint64_t n)
{
	if (d->act_valid && l0 < d->act_l0 + d->act_nl && d->act_l0 < l0 + n)
		d->act_valid = 0;
}

/* ---- what the SIMD MATMULs share (cm_avx2.c, cm_avx512.c) ---- */

int cm_grow(void **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = need + need / 2 + 64;
	void *q = aligned_alloc(64, (n + 63) & ~(size_t)63);
	if (!q)
		return -1;
	free(*p);
	*p = q;
	*cap = n;
	return 0;
}

int cm_mm_folds(cm_dp *d, const cm_mm *x, uint64_t *nf, uint64_t *nl)
{
	const uint32_t R = d->R;
	const uint64_t n = x->ncb * x->kh * x->kw;
	if (n > d->fold_cap) {
		uint64_t *fo = realloc(d->foff, (n + 64) * sizeof *fo);
		if (!fo)
			return -1;
		d->foff = fo;
		d->fold_cap = n + 64;
	}
	uint64_t f = 0;
	for (uint64_t cb = 0; cb < x->ncb; cb++)
		for (uint64_t ky = 0; ky < x->kh; ky++)
			for (uint64_t kx = 0; kx < x->kw; kx++, f++)
				d->foff[f] = (cb * x->inh * x->inw + ky * x->dh * x->inw + kx * x->dw) * R;
	*nf = n;
	*nl = d->foff[n - 1] / R + (x->oh - 1) * x->sh * x->inw + (x->ow - 1) * x->sw + 1;
	return 0;
}

const void *cm_act_lines(cm_dp *d, uint64_t l0, uint64_t nl, size_t elem,
			 void (*conv)(void *dst, const int8_t *src, size_t n))
{
	const uint32_t R = d->R;
	if (!d->act_valid || l0 < d->act_l0 || l0 + nl > d->act_l0 + d->act_nl) {
		d->act_valid = 0;
		if (cm_grow(&d->act, &d->act_cap, nl * R * elem))
			return NULL;
		conv(d->act, d->sp + l0 * R, nl * R);
		d->act_l0 = l0;
		d->act_nl = nl;
		d->act_valid = 1;
	}
	return (const uint8_t *)d->act + (l0 - d->act_l0) * R * elem;
}

struct cm_wconv *cm_wconv_get(cm_dp *d, const cm_mm *x, uint64_t nf, uint32_t K, uint32_t Cp, cm_fold_fn fold,
			      void *ctx, int *fresh)
{
	const int8_t *src = d->sp + x->wgt * d->R;
	const size_t raw = nf * d->C * d->R, fwords = (size_t)K * Cp;
	struct cm_wconv *w = &d->wc[0];
	for (unsigned i = 0; i < CM_WCONV; i++) {
		struct cm_wconv *e = &d->wc[i];
		if (e->nf == nf && !memcmp(e->raw, src, raw)) {
			e->used = ++d->wc_clock;
			*fresh = 0;
			return e;
		}
		if (e->used < w->used)
			w = e;
	}
	w->nf = 0;
	if (nf > w->fcap) {
		size_t n = nf + 16;
		int8_t *r = realloc(w->raw, n * d->C * d->R);
		if (r)
			w->raw = r;
		uint16_t *kl = realloc(w->kl, n * K * sizeof *kl);
		if (kl)
			w->kl = kl;
		uint32_t *nk = realloc(w->nk, n * sizeof *nk);
		if (nk)
			w->nk = nk;
		uint32_t *wq = aligned_alloc(64, (n * fwords * sizeof(uint32_t) + 63) & ~(size_t)63);
		if (wq) {
			free(w->wq);
			w->wq = wq;
		}
		if (!r || !kl || !nk || !wq)
			return NULL;
		w->fcap = n;
	}
	memcpy(w->raw, src, raw);
	for (uint64_t f = 0; f < nf; f++)
		fold(src + f * d->C * d->R, d->R, d->C, Cp, w->wq + f * fwords, w->kl + f * K, w->nk + f, ctx);
	w->nf = nf;
	w->used = ++d->wc_clock;
	*fresh = 1;
	return w;
}

/* 16 bytes (two 8-byte moves: the compiler must not merge this with a copy
 * of a variable size into a call) */
static inline void copy16(void *o, const void *s)
{
	uint64_t a, b;
	memcpy(&a, s, 8);
	memcpy(&b, (const uint8_t *)s + 8, 8);
	memcpy(o, &a, 8);
	memcpy((uint8_t *)o + 8, &b, 8);
}

/* beats of n rows of n0 bytes from a, stride s */
static uint64_t rows_beats(const cm_dp *d, uint64_t a, uint64_t n, uint64_t s, uint64_t n0)
{
	const unsigned b = d->bshift;
	const uint64_t m = d->B - 1;
	if (!((a | s | n0) & m))
		return n * (n0 >> b);
	uint64_t beats = 0;
	for (uint64_t i = 0; i < n; i++, a += s)
		beats += ((a + n0 - 1) >> b) - (a >> b) + 1;
	return beats;
}

/* ---- LOAD, STORE ---- */

/* A LOAD into SP whose n3 rows of a position are contiguous in DRAM
 * (STRIDE3 = the row, STRIDE1 beyond: an NHWC tensor's channel blocks):
 * the rows are copied position by position, so DRAM is read in address
 * order. A LOAD's reads and writes never overlap (DRAM to SP) and its SP
 * lines are distinct, so the order changes no byte. */
static void load_sp_by_position(cm_dp *d, uint64_t base, uint64_t n1, uint64_t n2, uint64_t n3, uint64_t s1,
				uint64_t s2, uint64_t s3, uint64_t line, uint64_t h, uint64_t w, uint32_t pt,
				uint32_t pl, uint8_t padv)
{
	const uint32_t R = d->R;
	const uint64_t plane = h * w;
	for (uint64_t i3 = 0; i3 < n3; i3++) {
		int8_t *p = d->sp + (line + i3 * plane) * R;
		/* the padding: rows above and below, columns left and right */
		memset(p, padv, (size_t)R * w * pt);
		memset(p + (pt + n2) * w * R, padv, (size_t)R * w * (h - pt - n2));
		if (w > n1)
			for (uint64_t y = pt; y < pt + n2; y++) {
				memset(p + y * w * R, padv, (size_t)R * pl);
				memset(p + (y * w + pl + n1) * R, padv, (size_t)R * (w - pl - n1));
			}
	}
	for (uint64_t y = 0; y < n2; y++) {
		for (uint64_t x = 0; x < n1; x++) {
			const uint8_t *s = d->dram + base + y * s2 + x * s1;
			int8_t *o = d->sp + (line + (y + pt) * w + pl + x) * R;
			if (R == 16)
				for (uint64_t i3 = 0; i3 < n3; i3++, s += s3, o += plane * 16)
					copy16(o, s);
			else
				for (uint64_t i3 = 0; i3 < n3; i3++, s += s3, o += plane * R)
					memcpy(o, s, R);
		}
	}
}

/* lint: long function: one loop nest, the SP and the ACC target and padding side by side */
uint64_t cm_load(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R, C = d->C;
	uint64_t n1 = F(LOAD, N1), n2 = F(LOAD, N2), n3 = F(LOAD, N3);
	if (!n1 || !n2 || !n3)
		return 0;
	int acc = F(LOAD, TARGET) == LOOM_MEM_ACC;
	uint64_t base = F(LOAD, DRAM_ADDR), s1 = F(LOAD, STRIDE1), s2 = F(LOAD, STRIDE2),
		 s3 = F(LOAD, STRIDE3);
	uint32_t pt = F(LOAD, PAD_TOP), pb = F(LOAD, PAD_BOTTOM), pl = F(LOAD, PAD_LEFT),
		 pr = F(LOAD, PAD_RIGHT);
	uint8_t padv = (uint8_t)F(LOAD, PAD_VALUE);
	uint32_t rw = F(LOAD, ROW_WORDS), n0 = 4 * rw;
	uint64_t h = pt + n2 + pb, w = pl + n1 + pr, line = F(LOAD, MEM_ADDR);
	uint64_t beats = 0;
	if (!acc)
		cm_sp_written(d, line, n3 * h * w);
	/* a row of n1 lines that are contiguous in DRAM and fill whole SP lines */
	const int bulk = !acc && n0 == R && s1 == n0;
	if (!acc && n0 == R && n3 > 1 && s3 == n0 && s1 > s3) {
		for (uint64_t i3 = 0; i3 < n3; i3++)
			for (uint64_t y = 0; y < n2; y++)
				beats += rows_beats(d, base + i3 * s3 + y * s2, n1, s1, n0);
		load_sp_by_position(d, base, n1, n2, n3, s1, s2, s3, line, h, w, pt, pl, padv);
		return beats * d->B;
	}

	for (uint64_t i3 = 0; i3 < n3; i3++) {
		for (uint64_t y = 0; y < h; y++) {
			if (y < pt || y >= pt + n2) {
				if (acc)
					memset(d->acc + line * C, 0, 4u * C * w);
				else
					memset(d->sp + line * R, padv, (size_t)R * w);
				line += w;
				continue;
			}
			uint64_t src = base + i3 * s3 + (y - pt) * s2;
			beats += rows_beats(d, src, n1, s1, n0);
			if (acc) {
				memset(d->acc + line * C, 0, 4u * C * pl);
				line += pl;
				for (uint64_t x = 0; x < n1; x++, line++, src += s1) {
					const uint8_t *s = d->dram + src;
					int32_t *o = d->acc + line * C;
					uint32_t k;
					for (k = 0; k < rw; k++)
						o[k] = (int32_t)get_le32(s + 4 * k);
					for (; k < C; k++)
						o[k] = 0;
				}
				memset(d->acc + line * C, 0, 4u * C * pr);
				line += pr;
				continue;
			}
			memset(d->sp + line * R, padv, (size_t)R * pl);
			line += pl;
			if (bulk) {
				memcpy(d->sp + line * R, d->dram + src, n1 * R);
				line += n1;
			} else if (n0 == R && (R == 16 || R == 32)) {
				/* whole lines of the common widths: copies of a constant size */
				int8_t *o = d->sp + line * R;
				const uint8_t *s = d->dram + src;
				if (R == 16)
					for (uint64_t x = 0; x < n1; x++, o += 16, s += s1)
						copy16(o, s);
				else
					for (uint64_t x = 0; x < n1; x++, o += 32, s += s1) {
						copy16(o, s);
						copy16(o + 16, s + 16);
					}
				line += n1;
			} else {
				for (uint64_t x = 0; x < n1; x++, line++, src += s1) {
					int8_t *o = d->sp + line * R;
					memcpy(o, d->dram + src, n0);
					memset(o + n0, 0, R - n0);
				}
			}
			memset(d->sp + line * R, padv, (size_t)R * pr);
			line += pr;
		}
	}
	return beats * d->B;
}

static void requant_row(const cm_dp *d, int8_t *o, const int32_t *a, const cm_rq *q, uint32_t n)
{
#if CM_HAVE_AVX2
	if (d->avx2) {
		cm_requant_avx2(o, a, q, n);
		return;
	}
#else
	(void)d;
#endif
	for (uint32_t c = 0; c < n; c++)
		o[c] = loom_requant(a[c], q->bias[c], q->mult[c], q->shift[c], q->zp, q->lo, q->hi);
}

uint64_t cm_store(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R, C = d->C;
	uint64_t n1 = F(STORE, N1), n2 = F(STORE, N2), n3 = F(STORE, N3);
	if (!n1 || !n2 || !n3)
		return 0;
	uint32_t src = F(STORE, SOURCE);
	uint64_t base = F(STORE, DRAM_ADDR), s1 = F(STORE, STRIDE1), s2 = F(STORE, STRIDE2),
		 s3 = F(STORE, STRIDE3);
	uint32_t rw = F(STORE, ROW_WORDS), n0 = 4 * rw;
	uint64_t line = F(STORE, MEM_ADDR), beats = 0;
	cm_rq q;
	q.zp = (int8_t)F(STORE, ZERO_POINT);
	q.lo = (int8_t)F(STORE, CLIP_LO);
	q.hi = (int8_t)F(STORE, CLIP_HI);
	q.bias = d->acc + (uint64_t)F(STORE, PARAM_ADDR) * C;
	q.mult = q.bias + C;
	q.shift = q.bias + 2 * C;
	/* SOURCE 3: the ELTWISE ADD of parameter line PARAM_ADDR+3 with
	 * residual row k in SP line STRIDE3 + k*N3, N1 x N2 rows (N3 is the
	 * step) */
	loom_eltadd_param ep;
#if CM_HAVE_AVX2
	cm_elt ea;
#endif
	uint64_t res = s3, step = n3;
	if (src == LOOM_MEM_ACC_RESADD) {
		uint32_t w[LOOM_RESADD_WORDS];
		for (uint32_t k = 0; k < LOOM_RESADD_WORDS; k++)
			w[k] = (uint32_t)q.bias[3 * C + k];
		loom_eltadd_unpack(w, &ep);
#if CM_HAVE_AVX2
		ea = (cm_elt){.zpa = ep.zp_a, .zpb = ep.zp_b, .ma = ep.mult_a, .mb = ep.mult_b, .mult = ep.mult,
			      .shift = ep.shift & 31, .zp = ep.zp_out, .lo = ep.lo, .hi = ep.hi, .mul = 0};
#endif
		n3 = 1;
		s3 = 0;
	}

#if CM_HAVE_AVX2
	if (d->avx2 && (src == LOOM_MEM_ACC_REQUANT || src == LOOM_MEM_ACC_RESADD)) {
		for (uint64_t i3 = 0; i3 < n3; i3++)
			for (uint64_t i2 = 0; i2 < n2; i2++)
				beats += rows_beats(d, base + i3 * s3 + i2 * s2, n1, s1, n0);
		const int ra = src == LOOM_MEM_ACC_RESADD;
		(d->avx512 ? cm_store_rq_avx512 : cm_store_rq_avx2)(d->dram, d->acc + line * C, C, &q, n0, base, n1, n2,
								      n3, s1, s2, s3, ra ? d->sp + res * R : NULL,
								      step * R, ra ? &ea : NULL);
		return beats * d->B;
	}
#endif
	for (uint64_t i3 = 0; i3 < n3; i3++) {
		for (uint64_t i2 = 0; i2 < n2; i2++) {
			uint64_t dst = base + i3 * s3 + i2 * s2;
			beats += rows_beats(d, dst, n1, s1, n0);
			for (uint64_t i1 = 0; i1 < n1; i1++, line++, dst += s1) {
				uint8_t *o = d->dram + dst;
				if (src == LOOM_MEM_SP) {
					if (n0 == 16)
						copy16(o, d->sp + line * R);
					else
						memcpy(o, d->sp + line * R, n0);
				} else if (src == LOOM_MEM_ACC) {
					const int32_t *a = d->acc + line * C;
					for (uint32_t k = 0; k < rw; k++)
						put_le32(o + 4 * k, (uint32_t)a[k]);
				} else if (src == LOOM_MEM_ACC_REQUANT) {
					requant_row(d, (int8_t *)o, d->acc + line * C, &q, n0);
				} else {
					const int8_t *r = d->sp + (res + (line - F(STORE, MEM_ADDR)) * step) * R;
					int8_t v[4 * 255];
					requant_row(d, v, d->acc + line * C, &q, n0);
					for (uint32_t c = 0; c < n0; c++)
						o[c] = (uint8_t)loom_eltadd(&ep, v[c], r[c]);
				}
			}
		}
	}
	return beats * d->B;
}

/* ---- MATMUL ---- */

static uint64_t matmul(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R, C = d->C;
	cm_mm x;
	x.act = F(MATMUL, ACT_ADDR), x.wgt = F(MATMUL, WGT_ADDR), x.accp = F(MATMUL, ACC_ADDR);
	x.inw = F(MATMUL, IN_W), x.inh = F(MATMUL, IN_H), x.ow = F(MATMUL, OUT_W), x.oh = F(MATMUL, OUT_H);
	x.ncb = F(MATMUL, NCB), x.kw = F(MATMUL, KW), x.kh = F(MATMUL, KH), x.sw = F(MATMUL, SW);
	x.sh = F(MATMUL, SH), x.dw = F(MATMUL, DW), x.dh = F(MATMUL, DH);
	x.accumulate = F(MATMUL, ACCUMULATE);
	const uint64_t folds = x.ncb * x.kh * x.kw;
	if (!folds || !x.oh || !x.ow)
		return 0;
#if CM_HAVE_AVX2
	if (d->avx512 ? !cm_matmul_avx512(d, &x) : d->avx2 && !cm_matmul_avx2(d, &x))
		return folds * x.oh * x.ow * R * C;
#endif
	int32_t *wt = d->wt;
	int32_t s[64];
	uint64_t f = 0;

	for (uint64_t cb = 0; cb < x.ncb; cb++) {
		for (uint64_t ky = 0; ky < x.kh; ky++) {
			for (uint64_t kx = 0; kx < x.kw; kx++, f++) {
				const int8_t *wl = d->sp + (x.wgt + f * C) * R;
				for (uint32_t c = 0; c < C; c++)
					for (uint32_t r = 0; r < R; r++)
						wt[r * C + c] = wl[c * R + r];
				const int over = f == 0 && !x.accumulate;
				for (uint64_t oy = 0; oy < x.oh; oy++) {
					const int8_t *arow = d->sp + (x.act + cb * x.inh * x.inw +
								      (oy * x.sh + ky * x.dh) * x.inw + kx * x.dw) * R;
					int32_t *prow = d->acc + (x.accp + oy * x.ow) * C;
					for (uint64_t ox = 0; ox < x.ow; ox++) {
						const int8_t *a = arow + ox * x.sw * R;
						int32_t *p = prow + ox * C;
						for (uint32_t c = 0; c < C; c++)
							s[c] = 0;
						for (uint32_t r = 0; r < R; r++) {
							const int32_t av = a[r];
							const int32_t *w = wt + r * C;
							for (uint32_t c = 0; c < C; c++)
								s[c] += av * w[c];
						}
						if (over)
							memcpy(p, s, 4u * C);
						else
							for (uint32_t c = 0; c < C; c++)
								p[c] = (int32_t)((uint32_t)p[c] + (uint32_t)s[c]);
					}
				}
			}
		}
	}
	return f * x.oh * x.ow * R * C;
}

/* ---- vector unit (docs/ISA.md "Vector unit"); no MACS ---- */

static inline int8_t clamp8(int32_t v, int8_t lo, int8_t hi)
{
	return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

static void eltwise(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R;
	const uint64_t planes = F(ELTWISE, PLANES), pl = F(ELTWISE, PLANE_LINES);
	if (!planes || !pl)
		return;
	const uint64_t sa = F(ELTWISE, SRC_A), sb = F(ELTWISE, SRC_B), dst = F(ELTWISE, DST);
	cm_sp_written(d, dst, planes * pl);
	const unsigned fn = F(ELTWISE, FUNC), bm = F(ELTWISE, B_MODE);
	const int32_t zpa = (int8_t)F(ELTWISE, ZP_A), zpb = (int8_t)F(ELTWISE, ZP_B);
	const int32_t ma = (int16_t)F(ELTWISE, MULT_A), mb = (int16_t)F(ELTWISE, MULT_B);
	const int32_t mult = (int32_t)F(ELTWISE, MULT), shift = (int32_t)F(ELTWISE, SHIFT);
	const int8_t zp = (int8_t)F(ELTWISE, ZP_OUT), lo = (int8_t)F(ELTWISE, CLIP_LO),
		     hi = (int8_t)F(ELTWISE, CLIP_HI);
	int8_t a[64], b[64];

#if CM_HAVE_AVX2
	if (d->avx2) {
		const cm_elt e = {zpa, zpb, ma, mb, mult, shift, zp, lo, hi, fn != LOOM_ELT_ADD};
		for (uint64_t cb = 0; cb < planes; cb++) {
			uint64_t b0 = bm == LOOM_BMODE_LINE ? cb * pl : bm == LOOM_BMODE_PLANE ? cb : 0;
			cm_eltwise_avx2(d->sp, R, sa + cb * pl, sb + b0, bm == LOOM_BMODE_LINE, dst + cb * pl, pl, &e);
		}
		return;
	}
#endif
	for (uint64_t cb = 0; cb < planes; cb++) {
		for (uint64_t i = 0; i < pl; i++) {
			uint64_t lb = bm == LOOM_BMODE_LINE ? cb * pl + i : bm == LOOM_BMODE_PLANE ? cb : 0;
			/* both inputs of a line are read before it is written (in place) */
			memcpy(a, d->sp + (sa + cb * pl + i) * R, R);
			memcpy(b, d->sp + (sb + lb) * R, R);
			int8_t *o = d->sp + (dst + cb * pl + i) * R;
			for (uint32_t r = 0; r < R; r++) {
				int32_t da = a[r] - zpa, db = b[r] - zpb;
				int32_t x = fn == LOOM_ELT_ADD ? ma * da + mb * db : da * db;
				o[r] = loom_requant(x, 0, mult, shift, zp, lo, hi);
			}
		}
	}
}

static void pool(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R;
	const uint64_t src = F(POOL, SRC), dst = F(POOL, DST);
	const uint64_t inw = F(POOL, IN_W), inh = F(POOL, IN_H), ow = F(POOL, OUT_W), oh = F(POOL, OUT_H),
		       ncb = F(POOL, NCB), kw = F(POOL, KW), kh = F(POOL, KH), sw = F(POOL, SW),
		       sh = F(POOL, SH), dw = F(POOL, DW), dh = F(POOL, DH);
	const int avg = F(POOL, FUNC) == LOOM_POOL_AVG;
	const int32_t zpi = (int8_t)F(POOL, ZP_IN), mult = (int32_t)F(POOL, MULT), shift = (int32_t)F(POOL, SHIFT);
	const int8_t zp = (int8_t)F(POOL, ZP_OUT), lo = (int8_t)F(POOL, CLIP_LO), hi = (int8_t)F(POOL, CLIP_HI);
	int32_t s[64];

	cm_sp_written(d, dst, ncb * oh * ow);
#if CM_HAVE_AVX2
	if (d->avx2 && R % 16 == 0) {
		const cm_pool p = {src, dst, inw, inh, ow, oh, ncb, kw, kh, sw, sh, dw, dh, avg, zpi, mult, shift, zp, lo, hi};
		cm_pool_avx2(d->sp, R, &p);
		return;
	}
#endif
	for (uint64_t cb = 0; cb < ncb; cb++) {
		const int8_t *plane = d->sp + (src + cb * inh * inw) * R;
		int8_t *out = d->sp + (dst + cb * oh * ow) * R;
		for (uint64_t oy = 0; oy < oh; oy++) {
			for (uint64_t ox = 0; ox < ow; ox++, out += R) {
				for (uint32_t r = 0; r < R; r++)
					s[r] = avg ? 0 : INT8_MIN;
				for (uint64_t ky = 0; ky < kh; ky++) {
					for (uint64_t kx = 0; kx < kw; kx++) {
						const int8_t *l = plane + ((oy * sh + ky * dh) * inw + ox * sw + kx * dw) * R;
						for (uint32_t r = 0; r < R; r++) {
							if (avg)
								s[r] += l[r] - zpi;
							else if (l[r] > s[r])
								s[r] = l[r];
						}
					}
				}
				for (uint32_t r = 0; r < R; r++)
					out[r] = avg ? loom_requant(s[r], 0, mult, shift, zp, lo, hi) : clamp8(s[r], lo, hi);
			}
		}
	}
}

static void dwconv(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R, q = R / 4;
	const uint64_t src = F(DWCONV, SRC), wgt = F(DWCONV, WGT), par = F(DWCONV, PARAM), dst = F(DWCONV, DST);
	const uint64_t inw = F(DWCONV, IN_W), inh = F(DWCONV, IN_H), ow = F(DWCONV, OUT_W),
		       oh = F(DWCONV, OUT_H), ncb = F(DWCONV, NCB), kw = F(DWCONV, KW), kh = F(DWCONV, KH),
		       sw = F(DWCONV, SW), sh = F(DWCONV, SH), dw = F(DWCONV, DW), dh = F(DWCONV, DH);
	const int32_t zpi = (int8_t)F(DWCONV, ZP_IN);
	cm_rq rq;
	rq.zp = (int8_t)F(DWCONV, ZP_OUT), rq.lo = (int8_t)F(DWCONV, CLIP_LO), rq.hi = (int8_t)F(DWCONV, CLIP_HI);
	int32_t bias[64], mult[64], shift[64], s[64];
	rq.bias = bias, rq.mult = mult, rq.shift = shift;
	cm_sp_written(d, dst, ncb * oh * ow);

	for (uint64_t cb = 0; cb < ncb; cb++) {
		/* parameter block: bias lines p..p+3, mult p+4..p+7, shift p+8 */
		const uint8_t *p = (const uint8_t *)d->sp + (par + cb * LOOM_DW_PARAM_LINES) * R;
		for (uint32_t r = 0; r < R; r++) {
			bias[r] = (int32_t)get_le32(p + (r / q) * R + 4 * (r % q));
			mult[r] = (int32_t)get_le32(p + (4 + r / q) * R + 4 * (r % q));
			shift[r] = p[8 * R + r] & 31;
		}
		const int8_t *plane = d->sp + (src + cb * inh * inw) * R;
		const int8_t *wl = d->sp + (wgt + cb * kh * kw) * R;
		int8_t *out = d->sp + (dst + cb * oh * ow) * R;
		for (uint64_t oy = 0; oy < oh; oy++) {
			for (uint64_t ox = 0; ox < ow; ox++, out += R) {
				memset(s, 0, sizeof s);
				for (uint64_t ky = 0; ky < kh; ky++) {
					for (uint64_t kx = 0; kx < kw; kx++) {
						const int8_t *l = plane + ((oy * sh + ky * dh) * inw + ox * sw + kx * dw) * R;
						const int8_t *w = wl + (ky * kw + kx) * R;
						for (uint32_t r = 0; r < R; r++)
							s[r] += (l[r] - zpi) * w[r];
					}
				}
				requant_row(d, out, s, &rq, R);
			}
		}
	}
}

static void lut(cm_dp *d, const loom_insn *in)
{
	const uint32_t R = d->R;
	const uint64_t n = F(LUT, LINES), src = F(LUT, SRC), dst = F(LUT, DST), tab = F(LUT, TABLE);
	if (!n)
		return;
	cm_sp_written(d, dst, n);
	int8_t table[LOOM_LUT_ENTRIES];
	memcpy(table, d->sp + tab * R, LOOM_LUT_ENTRIES);
	for (uint64_t i = 0; i < n; i++) {
		const int8_t *a = d->sp + (src + i) * R;
		int8_t *o = d->sp + (dst + i) * R;
		for (uint32_t r = 0; r < R; r++) /* in place: each byte read before it is written */
			o[r] = table[a[r] + 128];
	}
}

uint64_t cm_compute(cm_dp *d, const loom_insn *in)
{
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_ELTWISE: eltwise(d, in); return 0;
	case LOOM_OP_POOL: pool(d, in); return 0;
	case LOOM_OP_DWCONV: dwconv(d, in); return 0;
	case LOOM_OP_LUT: lut(d, in); return 0;
	default: return matmul(d, in);
	}
}
