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
 *   of g costs 1 + taps * (g + w) while its reads do not wait for the
 *   previous group's finish, which runs beside them (loom_cyc_vec counts
 *   the waits: short groups, one tap, a plane's parameters), plus the
 *   last group's finish and about 4 per instruction:
 *     ELTWISE   planes PLANES, P = PLANE_LINES, taps 2, w 0
 *     POOL      planes NCB, P = OUT_H * OUT_W, taps KH * KW, w 0
 *     DWCONV    planes NCB, P = OUT_H * OUT_W, taps KH * KW, w 1,
 *               + LOOM_DW_PARAM_LINES per plane; with its input reuse
 *               loom_cyc_dw: per group and kernel row, passes of up to
 *               vec_macs taps, mc weight lines and per output row
 *               of the group (s positions) the distinct columns
 *               j * SW + m * DW (j < s, m < mc) its taps touch
 *     LUT       one plane, P = LINES, taps 1, w 0, + ceil(256 / R) table lines
 *     ELTWISE or LUT of no lines: 1
 *   MARK record write          lat + xfer(beats of the 64-byte record * B)
 *
 * Layers: see loom_est_conv and loom_est_vec; both model the steady state
 * of the planners' double-buffered schedules, DMA with dma_outstanding
 * read bursts in flight and dma_wr_outstanding write bursts waiting for
 * their response, and a small tie-breaker on DRAM traffic. */
#include "common/timing.h"

#include <math.h>
#include <stdint.h>

/* max, min and remainder of the non-negative, finite quantities below,
 * inline (the libm calls were a tenth of `loom sweep --fast`'s time) */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }
/* x mod y of whole numbers, y > 0 */
static inline double dmod(double x, double y) { return (double)((uint64_t)x % (uint64_t)y); }

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
	t->wr_outstanding = cfg->dma_wr_outstanding;
	t->vec_macs = cfg->vec_macs;
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
	double per = dmax(dmax(P, C), (P + R + C - 2) / 2);
	double second = dmax(P, C); /* fold 1 has its own buffer */
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

/* npu_vector's reads when no bank is contended (common/tsim.c): the
 * finish being handed over (its last tap's first read in cycle L, fg
 * positions, none yet: fg 0) */
typedef struct vec_fin {
	double L, fg;
} vec_fin;

/* a group of g positions whose SGroup is in cycle c: the cycle of the
 * state after its last read. Line t of a finish leaves the lanes in
 * L + t + 3, so a first tap (not the last) starts at L + 4 at the
 * earliest, a last tap or the parameters at L + fg + 3. */
static double vec_group(vec_fin *f, double c, double g, double taps, double w)
{
	double x = c + 1 + w;
	if (taps > 1) {
		if (f->fg)
			x = dmax(x, f->L + 4);
		x += g + (taps - 2) * (g + w) + w;
	}
	if (f->fg)
		x = dmax(x, f->L + f->fg + 3);
	f->L = x, f->fg = g;
	return x + g;
}

/* a plane whose SPlane is in cycle s: the next plane's SPlane */
static double vec_plane(vec_fin *f, double s, double P, double taps, double w, double per_plane)
{
	double T = LOOM_VEC_GROUP, G = ceil(P / T), gl = P - (G - 1) * T;
	double c = s + 1;
	if (per_plane) /* the parameter lines, after the last finish */
		c = (f->fg ? dmax(c, f->L + f->fg + 3) : c) + per_plane;
	if (G > 1)
		c = vec_group(f, c, T, taps, w);
	if (G > 2) {
		/* the groups after a whole group are alike: G - 2 of them */
		double c2 = vec_group(f, c, T, taps, w), D = c2 - c;
		c = c2 + (G - 3) * D;
		f->L += (G - 3) * D;
	}
	return vec_group(f, c, gl, taps, w);
}

double loom_cyc_vec(double planes, double P, double taps, double w, double per_plane)
{
	if (planes < 1 || P < 1)
		return planes * (1 + per_plane) + LOOM_VEC_FIXED;
	/* the first plane, the second (the same as every later one), then the
	 * last line written 4 cycles after it leaves the lanes, done a cycle
	 * later */
	vec_fin f = {0, 0};
	double s = vec_plane(&f, 2, P, taps, w, per_plane);
	if (planes > 1) {
		double s2 = vec_plane(&f, s, P, taps, w, per_plane), D = s2 - s;
		f.L += (planes - 2) * D;
	}
	return f.L + f.fg + 7;
}

uint64_t loom_dw_seg_lines(uint64_t s, uint64_t mc, uint64_t sw, uint64_t dw)
{
	loom_dw_seg q;
	uint64_t n = 0, c;
	unsigned mask;
	loom_dw_init(&q, s, mc, sw, dw);
	while ((mask = loom_dw_peek(&q, &c)))
		loom_dw_adv(&q, mask), n++;
	return n;
}

/* DWCONV with input reuse: the finish of the last group (fg
 * lines, line t leaving the lanes in fire[t], the next last pass or
 * parameters from foff on) */
typedef struct dw_fin {
	double fire[LOOM_VEC_GROUP], foff;
	uint64_t fg;
} dw_fin;

/* a group of g positions from position p0 of its plane whose SGroup is in
 * cycle c, read as common/tsim.c's vr_step does (passes of up to
 * M taps of a kernel row, one segment per output row, its
 * reads loom_dw_peek's): the cycle of the state after its last read */
static double dw_group(dw_fin *f, uint64_t M, double c, uint64_t p0, uint64_t g, uint64_t ow, uint64_t kh, uint64_t kw,
		       uint64_t sw, uint64_t dw)
{
	double x = c + 1, L = 0, rdy[LOOM_VEC_GROUP];
	uint64_t taps = kh * kw, col;
	for (uint64_t tp = 0; tp < taps;) {
		uint64_t mc = kw - tp % kw < M ? kw - tp % kw : M;
		int last = tp + mc == taps;
		x += (double)mc; /* the pass's weight lines */
		for (uint64_t t = 0, sl; t < g; t += sl) {
			sl = g - t < ow - (p0 + t) % ow ? g - t : ow - (p0 + t) % ow;
			loom_dw_seg q;
			unsigned mask;
			loom_dw_init(&q, sl, mc, sw, dw);
			for (int first = 1; (mask = loom_dw_peek(&q, &col)); first = 0, x++) {
				if (last && !t && first) {
					if (f->fg)
						x = dmax(x, f->foff);
					L = x;
				} else if (!tp && !last && (mask & 1) && t + q.j[0] < f->fg) {
					x = dmax(x, f->fire[t + q.j[0]] + 1);
				}
				if (last && mask >> (mc - 1) & 1)
					rdy[t + q.j[mc - 1]] = x + 3;
				loom_dw_adv(&q, mask);
			}
		}
		tp += mc;
	}
	for (uint64_t k = 0; k < g; k++)
		f->fire[k] = dmax(rdy[k], k ? f->fire[k - 1] + 1 : L + 1);
	f->fg = g;
	f->foff = f->fire[g - 1] + 1;
	return x;
}

/* a plane of DWCONV whose SPlane is in cycle s: the next plane's SPlane */
static double dw_plane(dw_fin *f, uint64_t M, double s, uint64_t P, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw,
		       uint64_t dw)
{
	double c = (f->fg ? dmax(s + 1, f->foff) : s + 1) + LOOM_DW_PARAM_LINES;
	for (uint64_t p0 = 0; p0 < P; p0 += LOOM_VEC_GROUP)
		c = dw_group(f, M, c, p0, P - p0 < LOOM_VEC_GROUP ? P - p0 : LOOM_VEC_GROUP, ow, kh, kw, sw, dw);
	return c;
}

double loom_cyc_dw(uint64_t macs, uint64_t planes, uint64_t oh, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw,
		   uint64_t dw)
{
	uint64_t P = oh * ow;
	if (!planes || !P)
		return (double)planes * (1 + LOOM_DW_PARAM_LINES) + LOOM_VEC_FIXED;
	/* the first plane, the second (the same as every later one), then the
	 * last line written 4 cycles after it leaves the lanes, done a cycle
	 * later */
	dw_fin f = {{0}, 0, 0};
	double s = dw_plane(&f, macs, 2, P, ow, kh, kw, sw, dw), D = 0;
	if (planes > 1)
		D = dw_plane(&f, macs, s, P, ow, kh, kw, sw, dw) - s;
	return f.foff + (double)(planes > 2 ? planes - 2 : 0) * D + 4;
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
		return (uint64_t)loom_cyc_dw(t->vec_macs, G(DWCONV, NCB), G(DWCONV, OUT_H), G(DWCONV, OUT_W), G(DWCONV, KH),
					     G(DWCONV, KW), G(DWCONV, SW), G(DWCONV, DW));
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
	return n * dmax(beats * B / t->bw, (t->lat + beats) / outstanding);
}

/* ---- the closed form of tsim.c's engines, for the planners ----
 * (per instruction or per step, in steady state; tsim.c has the detail) */

/* cycles of the fetch of one instruction: its address, dram_latency, its
 * beats, decode and push */
static double est_fetch(const loom_timing *t)
{
	return t->lat + (double)loom_fetch_beats(t) * t->beat / t->bw + 3;
}

/* a LOAD's transfer of n lines of r bytes (pad lines more): the walker's
 * line a cycle, bursts of a line (of up to 16 beats when the rows are
 * contiguous and beat aligned) with dma_outstanding in flight, the DRAM's
 * bandwidth; without its latency */
static double est_load(const loom_timing *t, double n, double r, int contig, double pads)
{
	double B = t->beat, bpr = ceil(r / B), bpb = bpr;
	if (contig && dmod(r, B) == 0)
		bpb = dmax(bpr, floor(16 / bpr) * bpr);
	double bursts = n * bpr / bpb;
	double walk = n + pads, inflight = bursts * (t->lat + 3 + bpb) / t->outstanding;
	return dmax(dmax(walk, inflight), n * bpr * B / t->bw);
}

/* a STORE's n rows of r bytes: a row a cycle, its beats, wr_outstanding
 * writes waiting for their response; without its latency */
static double est_store(const loom_timing *t, double n, double r)
{
	double bpr = ceil(r / t->beat), wo = t->wr_outstanding ? t->wr_outstanding : 1;
	return dmax(dmax(n, n * (t->lat + 3) / wo), n * bpr * t->beat / t->bw);
}

double loom_est_conv_floor(const loom_timing *t, const loom_conv_est *e)
{
	/* the same terms as loom_est_conv's S * comp, which its total exceeds */
	const double KK = e->kk, nk = e->nk, nky = e->nky, npass = e->npass;
	double P = (double)e->oh * e->ow / e->ntiles;
	double kc = (double)e->ncb / nk, folds = kc * KK / nky, g = (double)e->nob / npass;
	double S = (double)e->ntiles * (nk * nky) * npass;
	return S * (g * (loom_cyc_matmul(t, folds, P) + 1));
}

/* lint: long function: one formula over the steps of the planners' schedule, written out term by term */
/* A CONV / GEMM tiling (compiler/npu/conv_emit.c's program): per step
 * (tile, channel chunk, pass) the LOAD of the input chunk (and streamed
 * weights), the pass's MATMULs, on the last chunk its STOREs, each
 * instruction fetched; a step takes the longest of its engines, the
 * fetch and the DRAM; the first LOAD and the last STOREs are not
 * overlapped; the MARK before the layer. */
double loom_est_conv(const loom_timing *t, const loom_conv_est *e)
{
	const double R = t->rows, C = t->cols, B = t->beat, lat = t->lat, KK = e->kk;
	const double nk = e->nk, nky = e->nky, npass = e->npass, chk = nk * nky;
	double P = (double)e->oh * e->ow / e->ntiles;
	double kc = (double)e->ncb / nk, folds = kc * KK / nky, g = (double)e->nob / npass;
	double spp = (double)e->ntiles * chk, S = spp * npass;
	double F = est_fetch(t);
	/* compute: a MATMUL per block of the pass; a fold waits for its
	 * weights behind the activation reads when they share a bank */
	double mm = loom_cyc_matmul(t, folds, P) + (e->banks == 0 ? folds * C : 0);
	double comp = g * (mm + 1);
	/* the input chunk: lines of R bytes (the tile's padding lines too);
	 * rows of a tile row are contiguous when pixels are R bytes apart */
	double vr = dmin(e->tile_ih, e->ih), vc = dmin(e->tile_iw, e->iw);
	double lines = kc * vr * vc, pads = kc * ((double)e->tile_ih * e->tile_iw - vr * vc);
	int contig = e->in_stride == R && (e->kw > 1 || e->sw == 1) && !e->xpack;
	double ldin = est_load(t, lines, R, contig, pads);
	/* weights: C lines per fold, contiguous; streamed per step, or
	 * resident: loaded by the steps of a pass's first tile */
	double wstep = g * folds * C;
	double ldw = e->wchunk ? est_load(t, wstep, R, 1, 0) : 0;
	double ldres = e->wchunk ? 0 : est_load(t, wstep, R, 1, 0);
	/* outputs: a row per position of C bytes (raw: 4C) per block */
	double rb = e->raw ? 4 * C : C;
	double st = g * est_store(t, P, rb) / chk;
	/* instructions per step: the input LOAD(s), streamed or resident
	 * weights, the MATMULs, the STOREs on the last chunk */
	double nld = 1 + (e->cin > R && dmod(e->cin, R) != 0 ? 1 : 0) + (e->wchunk ? 1 : 0);
	double ni = nld + g + g / chk;
	/* a fetch behind the load's burst backlog in the in-order DRAM: at
	 * most dma_outstanding bursts, and no more than a step's loads have */
	double bpb = dmod(R, B) == 0 ? dmax(1, floor(16 / ceil(R / B))) * ceil(R / B) : ceil(R / B);
	double stepb = dmax(1, (lines + (e->wchunk ? wstep : 0)) * ceil(R / B) / bpb);
	double backlog = dmax(0, dmin(t->outstanding, stepb) * bpb * B / t->bw - lat);
	double ldbusy = ldin + ldw;
	double beats = (lines * ceil(R / B) + (e->wchunk ? wstep : 0) * ceil(R / B) + g * P * ceil(rb / B) / chk +
			ni * loom_fetch_beats(t)) * B / t->bw;
	/* the load's SP writes wait for the compute engine's reads of their
	 * bank: the streamed weights (written first) for the weight reads, and
	 * (not with the weight regions in banks of their own, banks 4), and
	 * for the activation reads when all is packed (banks 0) or on the steps
	 * computing from buffer 0 (banks 2); the input chunk for the
	 * activation reads when the buffers share banks (banks 0, 1) and for the
	 * weight reads when its buffer shares the weights' banks */
	double actrd = g * folds * P, wgtrd = g * folds * C;
	double fw = ((e->banks == 4 ? 0 : wgtrd) + (e->banks == 0 ? actrd : e->banks == 2 ? 0.5 * actrd : 0)) /
		    dmax(comp, 1);
	double fin = ((e->banks <= 1 ? actrd : 0) + (e->banks == 0 ? wgtrd : e->banks == 2 ? 0.5 * wgtrd : 0)) /
		     dmax(comp, 1);
	double wr = 0, left = comp;
	double want[2] = {e->wchunk ? wstep : 0, lines}, frac[2] = {dmin(fw, 0.95), dmin(fin, 0.95)};
	for (int k = 0; k < 2; k++) {
		double during = dmin(want[k], left * (1 - frac[k]));
		wr += during / (1 - frac[k]) + (want[k] - during);
		left = dmax(0, left - during / (1 - frac[k]));
	}
	double base = dmax(dmax(comp, dmax(ldbusy, wr) + 0.5 * lat), dmax(st, beats));
	if (e->banks == 2)
		base += 0.5 * folds * C * g; /* steps on buffer 0: weights wait behind activations */
	double fetch = ni * F + ni * backlog * dmin(1, ldbusy / dmax(base, 1)) * (ldw > 0 || contig ? 1 : 0);
	double step = dmax(base, fetch);
	/* the steps of each pass's first tile also load its resident weights */
	double step1 = dmax(step, dmax(comp, ldbusy + ldres + 0.5 * lat) + g * F);
	double nfirst = e->wchunk ? 0 : chk * npass;
	double total = (S - nfirst) * step + nfirst * step1;
	/* an ACC slot is reused nslots jobs later: its STORE must be done */
	double stjob = est_store(t, P, rb) + lat + 2;
	total += (double)e->ntiles * e->nob * dmax(0, stjob - (double)(e->nslots - 1) * (mm + 1));
	/* per segment: the parameters, the first input chunk and weights, the
	 * last MATMUL's STORE and its latency, the MARK */
	double nseg = e->chained ? 1 : npass;
	double parl = e->raw ? 0 : est_load(t, 3 * g, 4 * C, 1, 0) + lat + 6;
	total += nseg * (parl + ldin + ldw + lat + 6 + stjob + 2 * F);
	/* the MARK record before the layer */
	total += lat + ceil(LOOM_MARK_BYTES / B) * B / t->bw + 6;
	return total;
}

/* loom_cyc_dw for `planes` (an average) planes of P positions in rows of
 * ow (DW 1): exact up to 512 positions a plane, else a plane of r rows
 * and one of 2r (r rows about 256 positions) extrapolated per row, so that
 * a planner's estimate loops over at most 1024 positions */
static double est_dw(uint64_t M, double planes, double P, uint64_t ow, uint64_t kh, uint64_t kw, uint64_t sw)
{
	double rows = dmax(1, P / (double)ow);
	uint64_t r1 = rows * (double)ow <= 512 ? (uint64_t)ceil(rows) : (uint64_t)ceil(256.0 / (double)ow);
	double c1 = loom_cyc_dw(M, 1, r1, ow, kh, kw, sw, 1), d1 = loom_cyc_dw(M, 2, r1, ow, kh, kw, sw, 1) - c1;
	if (rows * (double)ow <= 512)
		return c1 + (planes - 1) * d1;
	double c2 = loom_cyc_dw(M, 1, 2 * r1, ow, kh, kw, sw, 1), d2 = loom_cyc_dw(M, 2, 2 * r1, ow, kh, kw, sw, 1) - c2;
	double row = (d2 - d1) / (double)r1;
	return c1 + (rows - (double)r1) * row + (planes - 1) * (d1 + (rows - (double)r1) * row);
}

/* One vector-unit instruction over `planes` channel blocks of P output
 * lines each (loom_insn_cycles' formulas, over averages). */
static double vec_comp(const loom_timing *t, const loom_vec_est *e, double planes, double P)
{
	switch (e->opcode) {
	case LOOM_OP_POOL: return loom_cyc_vec(planes, P, e->kk, 0, 0) + 2;
	case LOOM_OP_DWCONV:
		if (e->sw && e->kw && e->ow)
			return est_dw(t->vec_macs, planes, P, e->ow, e->kk / e->kw, e->kw, e->sw) + 2;
		return loom_cyc_vec(planes, P, e->kk, 1, LOOM_DW_PARAM_LINES) + 2;
	case LOOM_OP_ELTWISE: return loom_cyc_vec(planes, P, 2, 0, 0) + 2;
	default: return loom_cyc_vec(1, planes * P, 1, 0, 0) + e->const_lines + 2;
	}
}

/* lint: long function: one formula over the steps of the planners' schedule, written out term by term */
/* A vector-unit tiling (compiler/npu/vec_emit.c's program): per step
 * (tile, channel chunk) the LOAD of the input tile (ELTWISE: and the b
 * tile), the vector instruction, the STORE of the output lines, each
 * fetched; with two buffers a step takes the longest of its engines, the
 * fetch and the DRAM, with one buffer their sum; the constants first, the
 * last STORE and the MARK before the layer. */
double loom_est_vec(const loom_timing *t, const loom_vec_est *e)
{
	const double R = t->rows, B = t->beat, lat = t->lat;
	double S = (double)e->ntiles * e->nk, F = est_fetch(t);
	double P = (double)e->oh * e->ow / e->ntiles, kc = (double)e->ncb / e->nk;
	double vr = dmin(e->tile_ih, e->ih), vc = dmin(e->tile_iw, e->iw);
	double lines = kc * vr * vc + (e->full_b ? kc * P : 0);
	double pads = kc * ((double)e->tile_ih * e->tile_iw - vr * vc);
	int contig = e->in_stride == R && (e->kw > 1 || e->sw == 1);
	double ld = est_load(t, lines, R, contig, pads);
	double outl = kc * P;
	double st = est_store(t, outl, R);
	double comp = vec_comp(t, e, kc, P);
	/* instructions per step: the LOAD(s) (a narrower last block: one
	 * more), the vector instruction, the STORE(s) */
	double extra = e->c > R && e->c % (uint32_t)R ? 1 : 0;
	double ni = (1 + extra) * (e->full_b ? 2 : 1) + 1 + (1 + extra);
	double beats = (lines * ceil(R / B) + outl * ceil(R / B) + ni * loom_fetch_beats(t)) * B / t->bw;
	/* the vector unit's reads and writes hold the banks the load writes
	 * and the store reads when the buffers share them */
	double conflict = e->banks ? 0 : 0.5 * (lines + outl);
	double step;
	if (e->nbuf == 1)
		step = ld + lat + comp + st + lat + conflict;
	else if (e->inplace)
		step = dmax(dmax(ld + st + lat, comp + st), beats) + conflict;
	else
		step = dmax(dmax(comp, ld + 0.5 * lat), dmax(st, beats)) + conflict;
	step = dmax(step, ni * F);
	double total = S * step + (e->nbuf == 1 ? 0 : ld + lat + st + lat);
	total += e->const_lines ? est_load(t, e->const_lines, R, 1, 0) + lat + F : 0;
	total += 2 * F + lat + ceil(LOOM_MARK_BYTES / B) * B / t->bw + 6;
	return total;
}
