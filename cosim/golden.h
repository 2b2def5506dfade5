/* golden.h - the golden (plain C reference) layers of the Loom layers (cosim/golden.c): int8
 * conv2d, GEMM and the vector-unit layers (pooling, depthwise conv,
 * elementwise, LUT) with the exact requantization of docs/ISA.md, written as
 * naive loops straight from the definitions in compiler/npu/npu.h and
 * independent of the program builders, to check the NPU's results. */
#ifndef LOOM_REF_H
#define LOOM_REF_H

#include <stdint.h>

#include "compiler/npu/npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* in: [h][w][in_stride] int8; w: [cout][kh][kw][cin]; bias/mult/shift: cout
 * entries (unused when raw). out: [oh][ow][out_stride bytes], int8 (only
 * channels 0..cout-1 written) or, raw, int32 native-endian words. Strides of
 * 0 take the defaults of loom_conv_params. Returns -1 on invalid shapes. */
int loom_golden_conv(const loom_conv_params *p, const int8_t *in, const int8_t *w, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, void *out);

/* a: [m][a_stride]; b: [k][n]; out: [m][out_stride bytes]. */
int loom_golden_gemm(const loom_gemm_params *g, const int8_t *a, const int8_t *b, const int32_t *bias,
		  const int32_t *mult, const int32_t *shift, void *out);

/* Output size of a convolution (0 if the shape is invalid). */
uint32_t loom_golden_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t d, uint32_t pad_lo, uint32_t pad_hi);


/* Vector-unit layers (compiler/npu/npu.h, loom_vec_params): in [h][w]
 * [in_stride], out [oh][ow][out_stride] int8, channels 0..c-1 written.
 * Strides of 0 take the defaults of loom_vec_params. -1 on invalid shapes. */
int loom_golden_pool(const loom_vec_params *p, const int8_t *in, int8_t *out);
/* w: [kh][kw][c]; bias, mult, shift: c entries */
int loom_golden_dwconv(const loom_vec_params *p, const int8_t *in, const int8_t *w, const int32_t *bias,
		    const int32_t *mult, const int32_t *shift, int8_t *out);
/* b: [h][w][in2_stride], or c bytes with bcast LOOM_BCAST_CHANNEL */
int loom_golden_eltwise(const loom_vec_params *p, const int8_t *a, const int8_t *b, int8_t *out);
/* lut[256]: entry x + 128 */
int loom_golden_lut(const loom_vec_params *p, const int8_t *in, const int8_t *lut, int8_t *out);

#ifdef __cplusplus
}
#endif
#endif
