/* golden.c - the golden (plain C reference) layers of Loom's int8 conv2d, GEMM and the
 * vector-unit layers (pooling, depthwise conv, elementwise, LUT)
 * (cosim/golden.h): deliberately naive loops over the mathematical
 * definition, sharing nothing with the program builders but the layer
 * description and loom_requant(). */
#include "cosim/golden.h"

#include <string.h>

#include "loom/isa.h"

uint32_t loom_golden_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t d, uint32_t pad_lo, uint32_t pad_hi)
{
	int64_t ext = (int64_t)(k - 1) * d + 1;
	int64_t span = (int64_t)in + pad_lo + pad_hi;
	if (s == 0 || span < ext)
		return 0;
	return (uint32_t)((span - ext) / s + 1);
}

int loom_golden_conv(const loom_conv_params *p, const int8_t *in, const int8_t *w, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, void *out)
{
	uint32_t oh = loom_golden_out_size(p->h, p->kh, p->sh, p->dh, p->pad_top, p->pad_bottom);
	uint32_t ow = loom_golden_out_size(p->w, p->kw, p->sw, p->dw, p->pad_left, p->pad_right);
	if (!oh || !ow)
		return -1;
	size_t is = p->in_stride ? p->in_stride : (p->cin + 3) / 4 * 4;
	size_t os = p->out_stride ? p->out_stride : p->raw ? 4 * (size_t)p->cout : (p->cout + 3) / 4 * 4;
	for (uint32_t oy = 0; oy < oh; oy++)
		for (uint32_t ox = 0; ox < ow; ox++)
			for (uint32_t co = 0; co < p->cout; co++) {
				int64_t acc = 0;
				for (uint32_t ky = 0; ky < p->kh; ky++)
					for (uint32_t kx = 0; kx < p->kw; kx++) {
						int64_t iy = (int64_t)oy * p->sh + (int64_t)ky * p->dh - p->pad_top;
						int64_t ix = (int64_t)ox * p->sw + (int64_t)kx * p->dw - p->pad_left;
						int inside = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w;
						for (uint32_t ci = 0; ci < p->cin; ci++) {
							int32_t x = inside ? in[((size_t)iy * p->w + (size_t)ix) * is + ci]
									   : p->in_zp;
							if (!p->raw)
								x -= p->in_zp;
							int32_t wv = w[(((size_t)co * p->kh + ky) * p->kw + kx) * p->cin + ci];
							acc += (int64_t)x * wv;
						}
					}
				size_t px = (size_t)oy * ow + ox;
				if (p->raw) {
					int32_t v = (int32_t)(uint32_t)(uint64_t)acc;
					memcpy((uint8_t *)out + px * os + 4 * (size_t)co, &v, 4);
				} else {
					((int8_t *)out)[px * os + co] =
						loom_requant((int32_t)(uint32_t)(uint64_t)acc, bias[co], mult[co], shift[co],
							     p->out_zp, p->clip_lo, p->clip_hi);
				}
			}
	return 0;
}

int loom_golden_gemm(const loom_gemm_params *g, const int8_t *a, const int8_t *b, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, void *out)
{
	if (!g->m || !g->k || !g->n)
		return -1;
	size_t as = g->a_stride ? g->a_stride : (g->k + 3) / 4 * 4;
	size_t os = g->out_stride ? g->out_stride : g->raw ? 4 * (size_t)g->n : (g->n + 3) / 4 * 4;
	for (uint32_t m = 0; m < g->m; m++)
		for (uint32_t n = 0; n < g->n; n++) {
			int64_t acc = 0;
			for (uint32_t k = 0; k < g->k; k++) {
				int32_t x = a[(size_t)m * as + k];
				if (!g->raw)
					x -= g->a_zp;
				acc += (int64_t)x * b[(size_t)k * g->n + n];
			}
			if (g->raw) {
				int32_t v = (int32_t)(uint32_t)(uint64_t)acc;
				memcpy((uint8_t *)out + m * os + 4 * (size_t)n, &v, 4);
			} else {
				((int8_t *)out)[m * os + n] = loom_requant((int32_t)(uint32_t)(uint64_t)acc, bias[n],
									   mult[n], shift[n], g->out_zp,
									   g->clip_lo, g->clip_hi);
			}
		}
	return 0;
}

/* ---- vector-unit layers ---- */

static size_t vstride(uint32_t s, uint32_t c) { return s ? s : (c + 3) / 4 * 4; }

/* The input byte under window tap (ky, kx) of output (oy, ox), channel ch;
 * *inside = 0 when the tap falls in the padding. */
static int32_t tap(const loom_vec_params *p, const int8_t *in, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx,
		   uint32_t ch, int *inside)
{
	int64_t iy = (int64_t)oy * p->sh + (int64_t)ky * p->dh - p->pad_top;
	int64_t ix = (int64_t)ox * p->sw + (int64_t)kx * p->dw - p->pad_left;
	*inside = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w;
	if (!*inside)
		return 0;
	return in[((size_t)iy * p->w + (size_t)ix) * vstride(p->in_stride, p->c) + ch];
}

int loom_golden_pool(const loom_vec_params *p, const int8_t *in, int8_t *out)
{
	uint32_t oh = loom_golden_out_size(p->h, p->kh, p->sh, p->dh, p->pad_top, p->pad_bottom);
	uint32_t ow = loom_golden_out_size(p->w, p->kw, p->sw, p->dw, p->pad_left, p->pad_right);
	if (!oh || !ow)
		return -1;
	size_t os = vstride(p->out_stride, p->c);
	for (uint32_t oy = 0; oy < oh; oy++)
		for (uint32_t ox = 0; ox < ow; ox++)
			for (uint32_t ch = 0; ch < p->c; ch++) {
				int32_t best = INT32_MIN;
				int64_t sum = 0;
				for (uint32_t ky = 0; ky < p->kh; ky++)
					for (uint32_t kx = 0; kx < p->kw; kx++) {
						int inside;
						int32_t x = tap(p, in, oy, ox, ky, kx, ch, &inside);
						if (p->func == LOOM_POOL_MAX) {
							if (!inside)
								x = -128; /* max pooling pads with the int8 minimum */
							if (x > best)
								best = x;
						} else if (inside) {
							sum += x - p->in_zp; /* padding is the zero point: adds 0 */
						}
					}
				int8_t v;
				if (p->func == LOOM_POOL_MAX)
					v = (int8_t)(best < p->clip_lo ? p->clip_lo : best > p->clip_hi ? p->clip_hi : best);
				else
					v = loom_requant((int32_t)sum, 0, p->mult, p->shift, p->out_zp, p->clip_lo, p->clip_hi);
				out[((size_t)oy * ow + ox) * os + ch] = v;
			}
	return 0;
}

int loom_golden_dwconv(const loom_vec_params *p, const int8_t *in, const int8_t *w, const int32_t *bias,
		    const int32_t *mult, const int32_t *shift, int8_t *out)
{
	uint32_t oh = loom_golden_out_size(p->h, p->kh, p->sh, p->dh, p->pad_top, p->pad_bottom);
	uint32_t ow = loom_golden_out_size(p->w, p->kw, p->sw, p->dw, p->pad_left, p->pad_right);
	if (!oh || !ow)
		return -1;
	size_t os = vstride(p->out_stride, p->c);
	for (uint32_t oy = 0; oy < oh; oy++)
		for (uint32_t ox = 0; ox < ow; ox++)
			for (uint32_t ch = 0; ch < p->c; ch++) {
				int64_t acc = 0;
				for (uint32_t ky = 0; ky < p->kh; ky++)
					for (uint32_t kx = 0; kx < p->kw; kx++) {
						int inside;
						int32_t x = tap(p, in, oy, ox, ky, kx, ch, &inside);
						if (!inside)
							continue; /* padding is the zero point */
						acc += (int64_t)(x - p->in_zp) * w[((size_t)ky * p->kw + kx) * p->c + ch];
					}
				out[((size_t)oy * ow + ox) * os + ch] = loom_requant(
					(int32_t)acc, bias[ch], mult[ch], shift[ch], p->out_zp, p->clip_lo, p->clip_hi);
			}
	return 0;
}

int loom_golden_eltwise(const loom_vec_params *p, const int8_t *a, const int8_t *b, int8_t *out)
{
	if (!p->h || !p->w || !p->c)
		return -1;
	size_t as = vstride(p->in_stride, p->c), bs = vstride(p->in2_stride, p->c), os = vstride(p->out_stride, p->c);
	for (size_t px = 0; px < (size_t)p->h * p->w; px++)
		for (uint32_t ch = 0; ch < p->c; ch++) {
			int32_t da = a[px * as + ch] - p->in_zp;
			int32_t bv = p->bcast == LOOM_BCAST_CHANNEL ? b[ch] : b[px * bs + ch];
			int32_t db = bv - p->in2_zp;
			int64_t x = p->func == LOOM_ELT_ADD ? (int64_t)p->mult_a * da + (int64_t)p->mult_b * db
							    : (int64_t)da * db;
			out[px * os + ch] = loom_requant((int32_t)x, 0, p->mult, p->shift, p->out_zp, p->clip_lo, p->clip_hi);
		}
	return 0;
}

int loom_golden_lut(const loom_vec_params *p, const int8_t *in, const int8_t *lut, int8_t *out)
{
	if (!p->h || !p->w || !p->c)
		return -1;
	size_t is = vstride(p->in_stride, p->c), os = vstride(p->out_stride, p->c);
	for (size_t px = 0; px < (size_t)p->h * p->w; px++)
		for (uint32_t ch = 0; ch < p->c; ch++)
			out[px * os + ch] = lut[in[px * is + ch] + 128];
	return 0;
}
