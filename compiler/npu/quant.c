/* quant.c - requantization parameters: a real scale as a 31-bit
 * multiplier and a shift (loom_quant_mult), an elementwise ADD's input
 * multipliers (loom_quant_add). */
#include "compiler/npu/npu_internal.h"

#include <math.h>

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

