/* model.c - the compiled model in memory (ir/model.h): names of layer and
 * step kinds, the device image geometry of a tensor (loom_mt_geom), the
 * conversions between a tensor's host float form (ONNX order) and its
 * device int8 image (loom_mt_quantize / loom_mt_dequantize, used by the
 * compiler for constant operands and by the runtime; loom_step_quantize,
 * a QUANT step's, into a padded image too), freeing. */
#include "ir/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* element index of logical tensor t for pixel (y, x), channel ch; rank 3
 * and 4 images stack the batch's images vertically (y = n * H + yy); row
 * layouts (rank <= 2, or mt->rows) are row-major */
static int64_t logical_index(const loom_tensor *t, const loom_mtensor *mt, uint32_t y, uint32_t x, uint32_t ch)
{
	if (t->rank >= 3 && !mt->rows) {
		int64_t hs = t->rank == 4 ? t->dims[2] : 1;
		int64_t n = y / hs, yy = y % hs;
		return ((n * mt->c + ch) * hs + yy) * mt->w + x;
	}
	return ((int64_t)y * mt->w + x) * mt->c + ch;
}

static int8_t quant1(float v, float inv, int32_t zp)
{
	float q = nearbyintf(v * inv) + (float)zp;
	if (!(q >= -128.0f)) /* NaN too */
		q = q != q ? (float)zp : -128.0f;
	return (int8_t)(q > 127.0f ? 127 : (int)q);
}

void loom_mt_quantize(const loom_tensor *t, const loom_mtensor *mt, const float *src, int8_t *img)
{
	float inv = 1.0f / mt->scale;
	for (uint32_t y = 0; y < mt->h; y++)
		for (uint32_t x = 0; x < mt->w; x++) {
			int8_t *px = img + ((size_t)y * mt->w + x) * mt->stride;
			for (uint32_t ch = 0; ch < mt->stride; ch++)
				px[ch] = ch < mt->c ? quant1(src[logical_index(t, mt, y, x, ch)], inv, mt->zp)
						    : (int8_t)mt->zp;
		}
}

void loom_step_quantize(const loom_model *m, const loom_step *s, const float *src, int8_t *img)
{
	const loom_tensor *t = &m->graph->tensors[s->tensor];
	const loom_mtensor *mt = &m->mt[loom_step_dev(s)];
	if (s->dst < 0) {
		loom_mt_quantize(t, mt, src, img);
		return;
	}
	/* [N,C,H,W] into image rows of N padded images (model_read checked the
	 * geometry: mt->h = N * (H + pad[0] + pad[2]), mt->w = W + pad[1] + pad[3]) */
	float inv = 1.0f / mt->scale;
	uint32_t H = (uint32_t)t->dims[2], W = (uint32_t)t->dims[3], hp = H + s->pad[0] + s->pad[2];
	for (uint32_t y = 0; y < mt->h; y++) {
		uint32_t n = y / hp, yy = y % hp;
		int row = yy >= s->pad[0] && yy - s->pad[0] < H;
		for (uint32_t x = 0; x < mt->w; x++) {
			int8_t *px = img + ((size_t)y * mt->w + x) * mt->stride;
			int in = row && x >= s->pad[1] && x - s->pad[1] < W;
			for (uint32_t ch = 0; ch < mt->stride; ch++)
				px[ch] = ch >= mt->c ? (int8_t)mt->zp
					 : !in	     ? (int8_t)s->fill
						     : quant1(src[(((size_t)n * mt->c + ch) * H + yy - s->pad[0]) * W + x -
								  s->pad[1]],
							      inv, mt->zp);
		}
	}
}

void loom_mt_dequantize(const loom_tensor *t, const loom_mtensor *mt, const int8_t *img, float *dst)
{
	for (uint32_t y = 0; y < mt->h; y++)
		for (uint32_t x = 0; x < mt->w; x++) {
			const int8_t *px = img + ((size_t)y * mt->w + x) * mt->stride;
			const uint8_t *pu = (const uint8_t *)px;
			for (uint32_t ch = 0; ch < mt->c; ch++) {
				int64_t v = px[ch];
				if (mt->raw) /* int32, little endian */
					v = (int32_t)((uint32_t)pu[4 * ch] | (uint32_t)pu[4 * ch + 1] << 8 |
						      (uint32_t)pu[4 * ch + 2] << 16 | (uint32_t)pu[4 * ch + 3] << 24);
				dst[logical_index(t, mt, y, x, ch)] = mt->scale * (float)(v - mt->zp);
			}
		}
}

const char *loom_layer_kind_name(int kind)
{
	switch (kind) {
	case LOOM_LAYER_CONV: return "conv";
	case LOOM_LAYER_GEMM: return "gemm";
	case LOOM_LAYER_POOL: return "pool";
	case LOOM_LAYER_DWCONV: return "dwconv";
	case LOOM_LAYER_ELTWISE: return "eltwise";
	case LOOM_LAYER_LUT: return "lut";
	default: return NULL;
	}
}

const char *loom_step_kind_name(int kind)
{
	switch (kind) {
	case LOOM_STEP_CPU: return "cpu";
	case LOOM_STEP_QUANT: return "quant";
	case LOOM_STEP_DEQUANT: return "dequant";
	case LOOM_STEP_NPU: return "npu";
	default: return NULL;
	}
}

int loom_mt_geom(int rank, const int64_t *dims, uint32_t *h, uint32_t *w, uint32_t *c)
{
	int64_t d[3] = {1, 1, 1}; /* h, w, c */
	uint64_t sz;
	if (rank < 0 || rank > 4 || (rank && !dims))
		return -1;
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0 || (uint64_t)dims[i] > UINT32_MAX)
			return -1;
	switch (rank) {
	case 4: /* the batch's images stacked vertically */
		d[0] = dims[0] * dims[2], d[1] = dims[3], d[2] = dims[1];
		break;
	case 3:
		d[0] = dims[0], d[1] = dims[2], d[2] = dims[1];
		break;
	case 2:
		d[1] = dims[0], d[2] = dims[1];
		break;
	case 1:
		d[2] = dims[0];
		break;
	default:
		break;
	}
	/* the image, channels rounded up to a 4-byte stride, must have a size */
	if ((uint64_t)d[0] > UINT32_MAX || __builtin_mul_overflow((uint64_t)d[0], (uint64_t)d[1], &sz) ||
	    __builtin_mul_overflow(sz, (uint64_t)d[2] + 3, &sz))
		return -1;
	if (h)
		*h = (uint32_t)d[0];
	if (w)
		*w = (uint32_t)d[1];
	if (c)
		*c = (uint32_t)d[2];
	return 0;
}

/* ------------------------------------------------------------------ freeing */

void loom_model_free(loom_model *m)
{
	if (!m)
		return;
	loom_graph_free(m->graph);
	free(m->options);
	free(m->source);
	free(m->mt);
	if (m->layers)
		for (uint32_t i = 0; i < m->nlayers; i++)
			free(m->layers[i].name);
	free(m->layers);
	free(m->steps);
	free(m->insn);
	free(m->consts);
	free(m);
}
