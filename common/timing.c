/* timing.c - the one timing model of Loom (common/timing.h): the cycle cost
 * of every instruction (the C model's durations) and the tile planners'
 * layer estimates, written once.
 *
 * Instructions (lat = DRAM latency, bw = bytes per cycle, B = beat bytes,
 * xfer(n) = ceil(n / bw), beats = sum over the rows moved of
 * (a + n - 1) / B - a / B + 1):
 *   fetch of one instruction   lat + xfer(max(1, 32 / B) * B)
 *   LOAD                       lat + xfer(beats * B) + padding lines
 *   STORE                      lat + xfer(beats * B)
 *   LOAD / STORE of no rows    1 (only moves tokens)
 *   MATMUL                     folds * max(P, R + C + 1) + R + C,
 *                              folds = NCB * KH * KW, P = OUT_H * OUT_W
 *   vector unit: per plane, the P output positions in groups of up to
 *   T = LOOM_VEC_GROUP (raster order, a group never spans planes); a group
 *   of g costs taps * (g + w) + g + 4, plus 2 per instruction:
 *     ELTWISE   planes PLANES, P = PLANE_LINES, taps 2, w 0
 *     POOL      planes NCB, P = OUT_H * OUT_W, taps KH * KW, w 0
 *     DWCONV    planes NCB, P = OUT_H * OUT_W, taps KH * KW, w 1,
 *               + LOOM_DW_PARAM_LINES per plane
 *     LUT       one plane, P = LINES, taps 1, w 0, + ceil(256 / R) table lines
 *     ELTWISE or LUT of no lines: 1
 *   MARK record write          lat + xfer(beats of the 64-byte record * B)
 *
 * Layers: see loom_est_conv and loom_est_vec; both model the steady state
 * of the planners' double-buffered schedules, DMA with dma_outstanding
 * bursts in flight, and a small tie-breaker on DRAM traffic. */
#include "common/timing.h"

#include <math.h>

void loom_timing_init(loom_timing *t, const loom_hwcfg *cfg, uint32_t lat, uint32_t bw)
{
	t->rows = cfg->array_rows;
	t->cols = cfg->array_cols;
	t->beat = cfg->dram_beat_bytes;
	t->lat = lat ? lat : cfg->dram_latency;
	t->bw = bw ? bw : cfg->dram_bw;
	if (!t->bw)
		t->bw = 1;
	t->outstanding = cfg->dma_outstanding;
	t->bank_lines = cfg->sp_bank_lines;
	t->banks = cfg->sp_banks;
}

/* ------------------------------------------------------------------ instructions */

uint64_t loom_row_beats(const loom_timing *t, uint64_t a, uint64_t n)
{
	return (a + n - 1) / t->beat - a / t->beat + 1;
}

uint64_t loom_cyc_dma(const loom_timing *t, uint64_t beats, uint64_t pads)
{
	return t->lat + (beats * t->beat + t->bw - 1) / t->bw + pads;
}

uint64_t loom_fetch_beats(const loom_timing *t)
{
	return LOOM_INSN_BYTES / t->beat ? LOOM_INSN_BYTES / t->beat : 1;
}

double loom_cyc_matmul(const loom_timing *t, double folds, double P)
{
	double R = t->rows, C = t->cols;
	if (folds < 1)
		folds = 1;
	/* a fold every max(P, C) cycles, a pair every P + R + C - 2 at least
	 * (a weight buffer is reused R - 2 cycles after its fold streamed) */
	double per = fmax(fmax(P, C), (P + R + C - 2) / 2);
	double second = fmax(P, C); /* fold 1 has its own buffer */
	return C + 1 + (folds >= 2 ? second + (folds - 2) * per : 0) + P + R + C + LOOM_MM_TAIL;
}

uint64_t loom_cyc_matmul_insn(const loom_timing *t, uint64_t folds, uint64_t P)
{
	const uint64_t R = t->rows, C = t->cols;
	if (!folds || !P)
		return LOOM_MM_TAIL + 2;
	/* s: first activation read of a fold; w: its last weight column read
	 * (npu_compute: two weight buffers, the loader may refill a buffer
	 * R - 2 cycles after the last read of the fold before the last) */
	uint64_t w1 = C, s1 = C + 1, s2 = 0, w;
	for (uint64_t k = 1; k < folds; k++) {
		w = k == 1 ? w1 + C : w1 + C > s2 + P + R + C - 3 ? w1 + C : s2 + P + R + C - 3;
		uint64_t s = s1 + P > w + 1 ? s1 + P : w + 1;
		s2 = s1;
		s1 = s;
		w1 = w;
	}
	return s1 + P + R + C + LOOM_MM_TAIL;
}

double loom_cyc_vec(double planes, double P, double taps, double w, double per_plane)
{
	double g = ceil(P / LOOM_VEC_GROUP);
	return planes * (taps * (P + w * g) + P + 4 * g + 1 + per_plane) + LOOM_VEC_FIXED;
}

/* LOAD and STORE: beats over every row, padding lines of a LOAD */
static uint64_t dma_insn(const loom_timing *t, const loom_insn *in, int st)
{
#define G(f) (st ? loom_insn_get(in, LOOM_F_STORE_##f) : loom_insn_get(in, LOOM_F_LOAD_##f))
	uint64_t n1 = G(N1), n2 = G(N2), n3 = G(N3);
	if (!n1 || !n2 || !n3)
		return 1;
	uint64_t a0 = G(DRAM_ADDR), s1 = G(STRIDE1), s2 = G(STRIDE2), s3 = G(STRIDE3);
	uint64_t n0 = 4u * G(ROW_WORDS), nb = 0, pads = 0;
	for (uint64_t i3 = 0; i3 < n3; i3++)
		for (uint64_t i2 = 0; i2 < n2; i2++)
			for (uint64_t i1 = 0; i1 < n1; i1++)
				nb += loom_row_beats(t, a0 + i3 * s3 + i2 * s2 + i1 * s1, n0);
#undef G
	if (!st) {
#define L(f) loom_insn_get(in, LOOM_F_LOAD_##f)
		pads = n3 * (L(PAD_TOP) + n2 + L(PAD_BOTTOM)) * (L(PAD_LEFT) + n1 + L(PAD_RIGHT)) - n1 * n2 * n3;
#undef L
	}
	return loom_cyc_dma(t, nb, pads);
}

uint64_t loom_insn_cycles(const loom_timing *t, const loom_insn *in)
{
#define G(op, f) loom_insn_get(in, LOOM_F_##op##_##f)
	switch (loom_insn_opcode(in)) {
	case LOOM_OP_LOAD: return dma_insn(t, in, 0);
	case LOOM_OP_STORE: return dma_insn(t, in, 1);
	case LOOM_OP_MATMUL:
		return loom_cyc_matmul_insn(t, (uint64_t)G(MATMUL, NCB) * G(MATMUL, KH) * G(MATMUL, KW),
					    (uint64_t)G(MATMUL, OUT_H) * G(MATMUL, OUT_W));
	case LOOM_OP_ELTWISE: {
		uint64_t planes = G(ELTWISE, PLANES), pl = G(ELTWISE, PLANE_LINES);
		return planes && pl ? (uint64_t)loom_cyc_vec(planes, pl, 2, 0, 0) : LOOM_VEC_EMPTY;
	}
	case LOOM_OP_POOL:
		return (uint64_t)loom_cyc_vec(G(POOL, NCB), (double)G(POOL, OUT_H) * G(POOL, OUT_W),
					      (double)G(POOL, KH) * G(POOL, KW), 0, 0);
	case LOOM_OP_DWCONV:
		return (uint64_t)loom_cyc_vec(G(DWCONV, NCB), (double)G(DWCONV, OUT_H) * G(DWCONV, OUT_W),
					      (double)G(DWCONV, KH) * G(DWCONV, KW), 1, LOOM_DW_PARAM_LINES);
	case LOOM_OP_LUT: {
		uint64_t n = G(LUT, LINES), tl = (LOOM_LUT_ENTRIES + t->rows - 1) / t->rows;
		return n ? (uint64_t)loom_cyc_vec(1, n, 1, 0, 0) + tl : LOOM_VEC_EMPTY;
	}
	case LOOM_OP_MARK: return loom_cyc_dma(t, loom_row_beats(t, G(MARK, DRAM_ADDR), LOOM_MARK_BYTES), 0);
	default: return 1;
	}
#undef G
}

/* ------------------------------------------------------------------ layers */

double loom_est_xfer(const loom_timing *t, double n, double row_bytes, double outstanding)
{
	double B = t->beat, beats = ceil(row_bytes / B);
	return n * fmax(beats * B / t->bw, (t->lat + beats) / outstanding);
}

/* one step in steady state: compute, loads and stores overlap when the
 * input buffers and the weights sit in distinct banks */
static double step_cycles(int banks, double comp, double wpen, double ld, double ldw, double st)
{
	switch (banks) {
	case 3: return fmax(comp, ld + st);
	case 2: return fmax(comp + 0.5 * wpen, ld + st) + 0.5 * ldw;
	default: return comp + ld + st;
	}
}

/* A CONV / GEMM tiling: the C model's timing plus what the RTL adds
 * (one-line DMA bursts with dma_outstanding in flight, bank priority). */
double loom_est_conv(const loom_timing *t, const loom_conv_est *e)
{
	const uint32_t R = t->rows, C = t->cols, KK = e->kk;
	const uint32_t nk = e->nk, nky = e->nky, npass = e->npass;
	double lat = t->lat;
	double Pavg = (double)e->oh * e->ow / e->ntiles;
	double folds = (double)e->ncb * KK / (nk * nky);
	double mm = loom_cyc_matmul(t, folds, Pavg);
	double gavg = (double)e->nob / npass;
	double spp = (double)e->ntiles * nk * nky; /* steps per pass */
	/* activation reads win over weight reads (a fold then waits C cycles
	 * for its weights) and over load writes in a shared bank */
	double wpen = gavg * folds * C;
	if (e->banks == 0)
		mm += folds * C;
	double comp = gavg * mm;
	double vr = fmin(e->tile_ih, e->ih), vc = fmin(e->tile_iw, e->iw);
	double ldin = loom_est_xfer(t, vr * vc * ((double)e->ncb / nk), R, t->outstanding);
	double ldw = e->wchunk ? loom_est_xfer(t, gavg * folds * C, R, t->outstanding) : 0;
	double wpass = e->wchunk ? 0 : loom_est_xfer(t, gavg * e->ncb * KK * C, R, t->outstanding);
	double obytes = e->raw ? 4.0 * C : C;
	double st = loom_est_xfer(t, gavg * Pavg / (nk * nky), obytes, 32);
	double prefetch = e->chained && !e->wchunk && npass > 1 && spp >= 2; /* next pass's weights spread */
	double ld = ldin + ldw + lat + (prefetch ? wpass / spp : 0);
	double chk = (double)nk * nky;
	double step = step_cycles(e->banks, comp, wpen, ld, ldw, st);
	/* the first tile of a pass that is not prefetched also loads its weights */
	double step1 = step_cycles(e->banks, comp, wpen, ld + wpass / chk, ldw, st);
	double nfirst = chk * (prefetch ? 1 : npass);
	double S = spp * npass;
	double parl = e->raw ? 0 : loom_est_xfer(t, 3 * gavg, 4.0 * C, t->outstanding) + lat;
	double nseg = e->chained ? 1 : npass;
	/* a job's STORE must finish before the MATMUL nslots jobs later starts */
	double stjob = loom_est_xfer(t, Pavg, obytes, 32) + lat;
	double jobs = (double)e->ntiles * e->nob;
	/* start of a segment: params, the first input, the first block's part
	 * of the weights; the end: the last STORE and the MARK */
	double total = (S - nfirst) * step + nfirst * step1;
	total += nseg * (parl + ldin + lat + wpass / (gavg * chk) + stjob + 2 * lat);
	total += jobs * fmax(0, stjob - (double)(e->nslots - 1) * mm);
	if (e->chained && !e->wchunk && npass > 1 && !prefetch)
		total += (npass - 1) * fmax(0, wpass - comp);
	total += S * (2 + 2 * gavg) * 2; /* instruction fetch, roughly */
	/* tie-breaker: DRAM traffic (weights resident rather than re-read,
	 * input read once rather than once per pass) */
	total += 0.02 * S * (ldin + ldw + st);
	return total;
}

/* One vector-unit instruction over `planes` channel blocks of P output
 * lines each (loom_insn_cycles' formulas, over averages). */
static double vec_comp(const loom_vec_est *e, double planes, double P)
{
	switch (e->opcode) {
	case LOOM_OP_POOL: return loom_cyc_vec(planes, P, e->kk, 0, 0) + 2;
	case LOOM_OP_DWCONV: return loom_cyc_vec(planes, P, e->kk, 1, LOOM_DW_PARAM_LINES) + 2;
	case LOOM_OP_ELTWISE: return loom_cyc_vec(planes, P, 2, 0, 0) + 2;
	default: return loom_cyc_vec(1, planes * P, 1, 0, 0) + e->const_lines + 2;
	}
}

/* A vector-unit tiling: DMA rows of R bytes, the vector unit, token
 * hand-offs. */
double loom_est_vec(const loom_timing *t, const loom_vec_est *e)
{
	const uint32_t R = t->rows;
	double lat = t->lat;
	double S = (double)e->ntiles * e->nk;
	double Pavg = (double)e->oh * e->ow / e->ntiles, kcavg = (double)e->ncb / e->nk;
	double vr = fmin(e->tile_ih, e->ih), vc = fmin(e->tile_iw, e->iw);
	double ldl = kcavg * vr * vc + (e->full_b ? kcavg * Pavg : 0);
	double ld = loom_est_xfer(t, ldl, R, t->outstanding) + lat;
	double st = loom_est_xfer(t, kcavg * Pavg, R, 32) + lat;
	double comp = vec_comp(e, kcavg, Pavg);
	if (!e->banks)
		comp *= 1.25;
	double step = e->nbuf == 1 ? ld + comp + st : e->inplace ? fmax(ld + st, st + comp) : fmax(comp, ld + st);
	double total = S * step + (e->nbuf == 1 ? 0 : ld + st);
	total += loom_est_xfer(t, e->const_lines, R, t->outstanding) + 2 * lat;
	total += S * 3 * 4;          /* instruction fetch, roughly */
	total += 0.02 * S * ld;      /* tie-breaker: DRAM traffic (halos re-read) */
	return total;
}
