/* ops_conv.c - Loom's CPU kernels for the operators that are a matrix
 * product (their rows are in runtime/ops.def): Gemm, MatMul (batched,
 * broadcast, 1-D), Conv and ConvTranspose (1 to 3 spatial dims, groups,
 * strides, dilations, pads, auto_pad, output_padding / output_shape); and
 * the spatial geometry that the pools, the integer convolutions
 * (runtime/ops_quant.c) and the compiler share, loom_cpu_geo_fwd
 * (runtime/cpu_ops.h).
 *
 * Float32 with float accumulation: the convolutions are im2col (col2im for
 * ConvTranspose) around the blocked GEMM of runtime/gemm.c.
 *
 * Errors: "node 'NAME' (OP, opset N): problem" (loom_cpu_fail). No global
 * state. */
#include "ops_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================== Gemm, MatMul */

int loom_cpu_gemm_infer(KARGS)
{
	const loom_tensor *a, *b, *c;
	int ta = (int)loom_attr_int(n, "transA", 0), tb = (int)loom_attr_int(n, "transB", 0);
	int64_t M, K, K2, N;
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	a = IN(0);
	b = IN(1);
	c = n->ninputs > 2 ? IN(2) : NULL;
	if (need_float(g, n, err, errlen, a, "A") || need_float(g, n, err, errlen, b, "B") ||
	    (c && need_float(g, n, err, errlen, c, "C")))
		return -1;
	if (a->rank != 2 || b->rank != 2)
		return FAIL("A and B must be 2-D (ranks %d, %d)", a->rank, b->rank);
	M = ta ? a->dims[1] : a->dims[0];
	K = ta ? a->dims[0] : a->dims[1];
	K2 = tb ? b->dims[1] : b->dims[0];
	N = tb ? b->dims[0] : b->dims[1];
	if (K != K2)
		return FAIL("inner dimensions differ (A gives K=%lld, B gives K=%lld; transA=%d transB=%d)",
			    (long long)K, (long long)K2, ta, tb);
	{
		int64_t dims[2] = {M, N};
		loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, 2, dims);
		if (c) {
			loom_cpu_bcast it;
			if (loom_cpu_bcast_init(&it, 1, &c, 2, dims)) {
				char s[96];
				shape_str(c, s, sizeof s);
				return FAIL("C of shape %s does not broadcast to [%lld,%lld]", s, (long long)M,
					    (long long)N);
			}
		}
	}
	return 0;
}

int loom_cpu_gemm_run(KARGS)
{
	const loom_tensor *a = IN(0), *b = IN(1), *c = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int ta = (int)loom_attr_int(n, "transA", 0), tb = (int)loom_attr_int(n, "transB", 0);
	float alpha = loom_attr_float(n, "alpha", 1.0f), beta = loom_attr_float(n, "beta", 1.0f);
	int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1];
	float *py = y->data;
	memset(py, 0, (size_t)(M * N) * sizeof(float));
	gemm_f(g, ta, tb, M, N, K, fdata(a), a->dims[1], fdata(b), b->dims[1], py, N);
	if (alpha != 1.0f)
		for (int64_t i = 0; i < M * N; i++)
			py[i] *= alpha;
	if (c && beta != 0.0f) {
		loom_cpu_bcast it;
		const float *pc = fdata(c);
		if (loom_cpu_bcast_init(&it, 1, &c, 2, y->dims))
			return FAIL("C does not broadcast to the output");
		for (int64_t i = 0; i < it.numel; i++, loom_cpu_bcast_next(&it))
			py[i] += beta * pc[it.off[0]];
	}
	return 0;
}

/* MatMul shapes: the batch shapes of A and B (as tensors for the
 * broadcasting helpers) and M, K, N */
struct mm {
	loom_tensor ba, bb;
	int64_t M, K, N;
	int rank;
	int64_t dims[LOOM_MAX_RANK]; /* the batch shape */
};

static int matmul_shapes(KARGS, struct mm *s, int *orank, int64_t *odims)
{
	const loom_tensor *a = IN(0), *b = IN(1);
	int ra = a->rank, rb = b->rank, r = 0;
	int64_t K2;
	const loom_tensor *bt[2];
	if (ra < 1 || rb < 1)
		return FAIL("inputs must have rank >= 1 (ranks %d, %d)", ra, rb);
	memset(s, 0, sizeof *s);
	s->M = ra == 1 ? 1 : a->dims[ra - 2];
	s->K = a->dims[ra - 1];
	K2 = rb == 1 ? b->dims[0] : b->dims[rb - 2];
	s->N = rb == 1 ? 1 : b->dims[rb - 1];
	if (s->K != K2) {
		char sa[96], sb[96];
		shape_str(a, sa, sizeof sa);
		shape_str(b, sb, sizeof sb);
		return FAIL("inner dimensions differ: %s x %s", sa, sb);
	}
	s->ba.rank = ra > 2 ? ra - 2 : 0;
	memcpy(s->ba.dims, a->dims, sizeof(int64_t) * (size_t)s->ba.rank);
	s->bb.rank = rb > 2 ? rb - 2 : 0;
	memcpy(s->bb.dims, b->dims, sizeof(int64_t) * (size_t)s->bb.rank);
	bt[0] = &s->ba;
	bt[1] = &s->bb;
	if (loom_cpu_bcast_shape(2, bt, &s->rank, s->dims)) {
		char sa[96], sb[96];
		shape_str(a, sa, sizeof sa);
		shape_str(b, sb, sizeof sb);
		return FAIL("batch dimensions of %s and %s do not broadcast", sa, sb);
	}
	for (int d = 0; d < s->rank; d++)
		odims[r++] = s->dims[d];
	if (ra > 1)
		odims[r++] = s->M;
	if (rb > 1)
		odims[r++] = s->N;
	if (r > LOOM_MAX_RANK)
		return FAIL("output rank %d too large", r);
	*orank = r;
	return 0;
}

int loom_cpu_matmul_infer(KARGS)
{
	struct mm s;
	int rank;
	int64_t dims[LOOM_MAX_RANK + 2];
	const loom_tensor *a, *b;
	if (need_io(g, n, err, errlen, 2, 2))
		return -1;
	a = IN(0);
	b = IN(1);
	if (a->dtype != b->dtype)
		return FAIL("inputs have different types (%s, %s)", loom_dtype_name(a->dtype),
			    loom_dtype_name(b->dtype));
	if (!loom_cpu_is_numeric(a->dtype))
		return FAIL("inputs of type %s are not supported", loom_dtype_name(a->dtype));
	if (matmul_shapes(g, n, err, errlen, &s, &rank, dims))
		return -1;
	loom_cpu_set_shape(OUT(0), a->dtype, rank, dims);
	return 0;
}

int loom_cpu_matmul_run(KARGS)
{
	const loom_tensor *a = IN(0), *b = IN(1);
	loom_tensor *y = OUT(0);
	struct mm s;
	int rank;
	int64_t dims[LOOM_MAX_RANK + 2];
	loom_cpu_bcast it;
	const loom_tensor *bt[2];
	if (matmul_shapes(g, n, err, errlen, &s, &rank, dims))
		return -1;
	bt[0] = &s.ba;
	bt[1] = &s.bb;
	if (loom_cpu_bcast_init(&it, 2, bt, s.rank, s.dims))
		return FAIL("batch dimensions do not broadcast");
	if (loom_tensor_bytes(y))
		memset(y->data, 0, loom_tensor_bytes(y));
	for (int64_t bi = 0; bi < it.numel; bi++, loom_cpu_bcast_next(&it)) {
		int64_t oa = it.off[0] * s.M * s.K, ob = it.off[1] * s.K * s.N, oy = bi * s.M * s.N;
		if (a->dtype == LOOM_DT_FLOAT) {
			gemm_f(g, 0, 0, s.M, s.N, s.K, fdata(a) + oa, s.K, fdata(b) + ob, s.N,
			       (float *)y->data + oy, s.N);
			continue;
		}
		for (int64_t i = 0; i < s.M; i++)
			for (int64_t j = 0; j < s.N; j++) {
				if (loom_cpu_is_float(a->dtype)) {
					double acc = 0;
					for (int64_t k = 0; k < s.K; k++)
						acc += loom_cpu_get_f(a->data, a->dtype, oa + i * s.K + k) *
						       loom_cpu_get_f(b->data, b->dtype, ob + k * s.N + j);
					loom_cpu_set_f(y->data, y->dtype, oy + i * s.N + j, acc);
				} else {
					uint64_t acc = 0;
					for (int64_t k = 0; k < s.K; k++)
						acc += (uint64_t)loom_cpu_get_i(a->data, a->dtype, oa + i * s.K + k) *
						       (uint64_t)loom_cpu_get_i(b->data, b->dtype, ob + k * s.N + j);
					loom_cpu_set_i(y->data, y->dtype, oy + i * s.N + j, (int64_t)acc);
				}
			}
	}
	return 0;
}

/* ================================================================== spatial attributes */

static void geo_vols(struct loom_cpu_geo *p)
{
	p->invol = p->in[0] * p->in[1] * p->in[2];
	p->kvol = p->k[0] * p->k[1] * p->k[2];
	p->outvol = p->out[0] * p->out[1] * p->out[2];
}

/* loom_cpu_geo_fwd (cpu_ops.h): the shared spatial geometry */
int loom_cpu_geo_fwd(KARGS, const loom_tensor *x, const int64_t *ks, int pool, struct loom_cpu_geo *p)
{
	int nd = x->rank - 2, cs, cd, cp;
	const int64_t *st = loom_attr_ints(n, "strides", &cs);
	const int64_t *dl = loom_attr_ints(n, "dilations", &cd);
	const int64_t *pd = loom_attr_ints(n, "pads", &cp);
	const char *ap = loom_attr_str(n, "auto_pad", "NOTSET");
	int ceil_mode = pool ? (int)loom_attr_int(n, "ceil_mode", 0) : 0;
	if (nd < 1 || nd > 3)
		return FAIL("input '%s' has rank %d; 1 to 3 spatial dimensions are supported", x->name,
			    x->rank);
	if ((st && cs != nd) || (dl && cd != nd) || (pd && cp != 2 * nd))
		return FAIL("strides/dilations/pads have %d/%d/%d values for %d spatial dims", st ? cs : nd,
			    dl ? cd : nd, pd ? cp : 2 * nd, nd);
	if (strcmp(ap, "NOTSET") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") &&
	    strcmp(ap, "VALID"))
		return FAIL("auto_pad='%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
	p->nd = nd;
	for (int j = 0; j < 3; j++) {
		int i = j - (3 - nd);
		int64_t dk, span;
		if (i < 0) {
			p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
			p->pb[j] = p->pe[j] = 0;
			continue;
		}
		p->in[j] = x->dims[2 + i];
		p->k[j] = ks[i];
		p->s[j] = st ? st[i] : 1;
		p->d[j] = dl ? dl[i] : 1;
		p->pb[j] = pd ? pd[i] : 0;
		p->pe[j] = pd ? pd[nd + i] : 0;
		if (p->k[j] < 1 || p->s[j] < 1 || p->d[j] < 1 || p->pb[j] < 0 || p->pe[j] < 0)
			return FAIL("spatial dim %d: kernel %lld, stride %lld, dilation %lld, pads %lld/%lld "
				    "out of range",
				    i, (long long)p->k[j], (long long)p->s[j], (long long)p->d[j],
				    (long long)p->pb[j], (long long)p->pe[j]);
		dk = (p->k[j] - 1) * p->d[j] + 1;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t tot;
			p->out[j] = (p->in[j] + p->s[j] - 1) / p->s[j];
			tot = (p->out[j] - 1) * p->s[j] + dk - p->in[j];
			if (tot < 0)
				tot = 0;
			if (!strcmp(ap, "SAME_UPPER")) {
				p->pb[j] = tot / 2;
				p->pe[j] = tot - tot / 2;
			} else {
				p->pe[j] = tot / 2;
				p->pb[j] = tot - tot / 2;
			}
			continue;
		}
		if (!strcmp(ap, "VALID"))
			p->pb[j] = p->pe[j] = 0;
		span = p->in[j] + p->pb[j] + p->pe[j] - dk;
		if (span < 0)
			return FAIL("spatial dim %d: the kernel extent %lld exceeds the padded input %lld", i,
				    (long long)dk, (long long)(p->in[j] + p->pb[j] + p->pe[j]));
		if (ceil_mode && strcmp(ap, "VALID")) {
			p->out[j] = (span + p->s[j] - 1) / p->s[j] + 1;
			if ((p->out[j] - 1) * p->s[j] >= p->in[j] + p->pb[j])
				p->out[j]--;
		} else {
			p->out[j] = span / p->s[j] + 1;
		}
	}
	geo_vols(p);
	return 0;
}

/* Conv and ConvTranspose: X, W and the optional B, float, X and W of the
 * same rank >= 3 */
static int conv_operands(loom_graph *g, const loom_node *n, char *err, size_t errlen, const loom_tensor **x,
			 const loom_tensor **w, const loom_tensor **b)
{
	if (need_io(g, n, err, errlen, 2, 3))
		return -1;
	*x = IN(0);
	*w = IN(1);
	*b = n->ninputs > 2 ? IN(2) : NULL;
	if (need_float(g, n, err, errlen, *x, "X") || need_float(g, n, err, errlen, *w, "W") ||
	    (*b && need_float(g, n, err, errlen, *b, "B")))
		return -1;
	if ((*x)->rank < 3 || (*w)->rank != (*x)->rank)
		return FAIL("X (rank %d) and W (rank %d) must have the same rank >= 3", (*x)->rank, (*w)->rank);
	return 0;
}

/* kernel_shape, when given, equal to W's spatial dims; B one value per
 * output channel (M) */
static int conv_kernel_bias(loom_graph *g, const loom_node *n, char *err, size_t errlen, const loom_tensor *x,
			    const loom_tensor *w, const loom_tensor *b, int64_t M)
{
	int cks;
	const int64_t *ks = loom_attr_ints(n, "kernel_shape", &cks);
	if (ks) {
		if (cks != x->rank - 2)
			return FAIL("kernel_shape has %d values for %d spatial dims", cks, x->rank - 2);
		for (int i = 0; i < cks; i++)
			if (ks[i] != w->dims[2 + i])
				return FAIL("kernel_shape[%d]=%lld differs from W's dim %lld", i,
					    (long long)ks[i], (long long)w->dims[2 + i]);
	}
	if (b && loom_tensor_numel(b) != M)
		return FAIL("B has %lld values for %lld output channels", (long long)loom_tensor_numel(b),
			    (long long)M);
	return 0;
}

/* ================================================================== Conv */

int loom_cpu_conv_infer(KARGS)
{
	const loom_tensor *x, *w, *b;
	int64_t G = loom_attr_int(n, "group", 1), C, M;
	struct loom_cpu_geo p;
	int64_t dims[LOOM_MAX_RANK];
	if (conv_operands(g, n, err, errlen, &x, &w, &b))
		return -1;
	C = x->dims[1];
	M = w->dims[0];
	if (G < 1 || C % G || M % G || w->dims[1] * G != C)
		return FAIL("group=%lld does not fit X's %lld channels and W's [%lld, %lld, ...]",
			    (long long)G, (long long)C, (long long)M, (long long)w->dims[1]);
	if (conv_kernel_bias(g, n, err, errlen, x, w, b, M))
		return -1;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, &p))
		return -1;
	geo_out_dims(&p, x, M, dims);
	loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, x->rank, dims);
	return 0;
}

/* the outputs o in [*lo, *hi) of n whose input index o*s - pb + off lies
 * in [0, in) (the rest read padding) */
static void valid_range(int64_t n, int64_t s, int64_t pb, int64_t off, int64_t in, int64_t *lo, int64_t *hi)
{
	int64_t a = pb - off;             /* o*s >= a */
	int64_t b = in + pb - off;        /* o*s < b */
	*lo = a <= 0 ? 0 : (a + s - 1) / s;
	*hi = b <= 0 ? 0 : (b + s - 1) / s;
	if (*lo > n)
		*lo = n;
	if (*hi > n)
		*hi = n;
	if (*hi < *lo)
		*hi = *lo;
}

/* im2col of one group of one image: col[(c, kz, ky, kx)][(oz, oy, ox)];
 * a row of outputs at a time: its padding zeros, its inputs copied (a
 * stride of 1) or gathered */
static void im2col(const float *x, int64_t Cg, const struct loom_cpu_geo *p, float *col)
{
	const int64_t n2 = p->out[2];
	for (int64_t c = 0; c < Cg; c++) {
		const float *xc = x + c * p->invol;
		for (int64_t k0 = 0; k0 < p->k[0]; k0++)
			for (int64_t k1 = 0; k1 < p->k[1]; k1++)
				for (int64_t k2 = 0; k2 < p->k[2]; k2++) {
					int64_t lo, hi, s2 = p->s[2], off2 = k2 * p->d[2] - p->pb[2];
					valid_range(n2, s2, p->pb[2], k2 * p->d[2], p->in[2], &lo, &hi);
					for (int64_t o0 = 0; o0 < p->out[0]; o0++) {
						int64_t i0 = o0 * p->s[0] - p->pb[0] + k0 * p->d[0];
						for (int64_t o1 = 0; o1 < p->out[1]; o1++, col += n2) {
							int64_t i1 = o1 * p->s[1] - p->pb[1] + k1 * p->d[1];
							if (!(i0 >= 0 && i0 < p->in[0] && i1 >= 0 && i1 < p->in[1])) {
								memset(col, 0, (size_t)n2 * sizeof *col);
								continue;
							}
							const float *row = xc + (i0 * p->in[1] + i1) * p->in[2];
							if (lo)
								memset(col, 0, (size_t)lo * sizeof *col);
							if (s2 == 1) {
								memcpy(col + lo, row + lo + off2, (size_t)(hi - lo) * sizeof *col);
							} else {
								for (int64_t o2 = lo; o2 < hi; o2++)
									col[o2] = row[o2 * s2 + off2];
							}
							if (hi < n2)
								memset(col + hi, 0, (size_t)(n2 - hi) * sizeof *col);
						}
					}
				}
	}
}

int loom_cpu_conv_run(KARGS)
{
	const loom_tensor *x = IN(0), *w = IN(1), *b = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int64_t G = loom_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1], M = w->dims[0];
	int64_t Cg = C / G, Mg = M / G, K;
	struct loom_cpu_geo p;
	int direct = 1;
	float *col = NULL;
	if (loom_cpu_geo_fwd(g, n, err, errlen, x, w->dims + 2, 0, &p))
		return -1;
	K = Cg * p.kvol;
	for (int j = 0; j < 3; j++)
		if (p.k[j] != 1 || p.s[j] != 1 || p.pb[j] || p.pe[j])
			direct = 0;
	if (!direct) {
		col = falloc(K * p.outvol);
		if (!col)
			return FAIL("out of memory for the im2col buffer (%lld floats)",
				    (long long)(K * p.outvol));
	}
	for (int64_t in = 0; in < N; in++)
		for (int64_t gi = 0; gi < G; gi++) {
			const float *xg = fdata(x) + (in * C + gi * Cg) * p.invol;
			float *yg = (float *)y->data + (in * M + gi * Mg) * p.outvol;
			for (int64_t m = 0; m < Mg; m++) {
				float bv = b ? fdata(b)[gi * Mg + m] : 0.0f;
				for (int64_t o = 0; o < p.outvol; o++)
					yg[m * p.outvol + o] = bv;
			}
			if (!direct)
				im2col(xg, Cg, &p, col);
			gemm_f(g, 0, 0, Mg, p.outvol, K, fdata(w) + gi * Mg * K, K, direct ? xg : col, p.outvol,
			       yg, p.outvol);
		}
	free(col);
	return 0;
}

/* ================================================================== ConvTranspose */

static int convt_geo(KARGS, struct loom_cpu_geo *p)
{
	const loom_tensor *x = IN(0), *w = IN(1);
	int nd = x->rank - 2, cs, cd, cp, cop, cos_;
	const int64_t *st = loom_attr_ints(n, "strides", &cs);
	const int64_t *dl = loom_attr_ints(n, "dilations", &cd);
	const int64_t *pd = loom_attr_ints(n, "pads", &cp);
	const int64_t *op = loom_attr_ints(n, "output_padding", &cop);
	const int64_t *os = loom_attr_ints(n, "output_shape", &cos_);
	const char *ap = loom_attr_str(n, "auto_pad", "NOTSET");
	int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
	if (nd < 1 || nd > 3)
		return FAIL("input '%s' has rank %d; 1 to 3 spatial dimensions are supported", x->name,
			    x->rank);
	if ((st && cs != nd) || (dl && cd != nd) || (pd && cp != 2 * nd) || (op && cop != nd) ||
	    (os && cos_ != nd && cos_ != nd + 2))
		return FAIL("strides/dilations/pads/output_padding/output_shape have the wrong number of "
			    "values for %d spatial dims",
			    nd);
	if (os && cos_ == nd + 2)
		os += 2;
	if (strcmp(ap, "NOTSET") && !same && strcmp(ap, "VALID"))
		return FAIL("auto_pad='%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
	p->nd = nd;
	for (int j = 0; j < 3; j++) {
		int i = j - (3 - nd);
		int64_t dk, full, adj;
		if (i < 0) {
			p->in[j] = p->k[j] = p->s[j] = p->d[j] = p->out[j] = 1;
			p->pb[j] = p->pe[j] = 0;
			continue;
		}
		p->in[j] = x->dims[2 + i];
		p->k[j] = w->dims[2 + i];
		p->s[j] = st ? st[i] : 1;
		p->d[j] = dl ? dl[i] : 1;
		p->pb[j] = pd ? pd[i] : 0;
		p->pe[j] = pd ? pd[nd + i] : 0;
		adj = op ? op[i] : 0;
		if (p->s[j] < 1 || p->d[j] < 1 || p->pb[j] < 0 || p->pe[j] < 0 || adj < 0)
			return FAIL("spatial dim %d: stride, dilation, pads or output_padding out of range", i);
		dk = (p->k[j] - 1) * p->d[j] + 1;
		full = p->s[j] * (p->in[j] - 1) + adj + dk;
		if (os || same) {
			int64_t tot;
			p->out[j] = os ? os[i] : p->in[j] * p->s[j];
			tot = full - p->out[j];
			if (tot < 0)
				tot = 0;
			if (!strcmp(ap, "SAME_UPPER")) {
				p->pb[j] = tot / 2;
				p->pe[j] = tot - tot / 2;
			} else {
				p->pb[j] = tot - tot / 2;
				p->pe[j] = tot / 2;
			}
		} else {
			if (!strcmp(ap, "VALID"))
				p->pb[j] = p->pe[j] = 0;
			p->out[j] = full - p->pb[j] - p->pe[j];
		}
		if (p->out[j] < 0)
			return FAIL("spatial dim %d: output size %lld < 0", i, (long long)p->out[j]);
	}
	geo_vols(p);
	return 0;
}

int loom_cpu_convt_infer(KARGS)
{
	const loom_tensor *x, *w, *b;
	int64_t G = loom_attr_int(n, "group", 1), C, M;
	struct loom_cpu_geo p;
	int64_t dims[LOOM_MAX_RANK];
	if (conv_operands(g, n, err, errlen, &x, &w, &b))
		return -1;
	C = x->dims[1];
	if (G < 1 || C % G || w->dims[0] != C)
		return FAIL("group=%lld does not fit X's %lld channels and W's [%lld, %lld, ...]",
			    (long long)G, (long long)C, (long long)w->dims[0], (long long)w->dims[1]);
	M = w->dims[1] * G;
	if (conv_kernel_bias(g, n, err, errlen, x, w, b, M))
		return -1;
	if (convt_geo(g, n, err, errlen, &p))
		return -1;
	geo_out_dims(&p, x, M, dims);
	loom_cpu_set_shape(OUT(0), LOOM_DT_FLOAT, x->rank, dims);
	return 0;
}

int loom_cpu_convt_run(KARGS)
{
	const loom_tensor *x = IN(0), *w = IN(1), *b = n->ninputs > 2 ? IN(2) : NULL;
	loom_tensor *y = OUT(0);
	int64_t G = loom_attr_int(n, "group", 1), N = x->dims[0], C = x->dims[1];
	int64_t Cg = C / G, Mg = w->dims[1], M = Mg * G, R;
	struct loom_cpu_geo p;
	float *col;
	if (convt_geo(g, n, err, errlen, &p))
		return -1;
	R = Mg * p.kvol;
	col = falloc(R * p.invol);
	if (!col)
		return FAIL("out of memory for the col2im buffer (%lld floats)", (long long)(R * p.invol));
	for (int64_t in = 0; in < N; in++)
		for (int64_t gi = 0; gi < G; gi++) {
			const float *xg = fdata(x) + (in * C + gi * Cg) * p.invol;
			float *yg = (float *)y->data + (in * M + gi * Mg) * p.outvol;
			memset(col, 0, (size_t)(R * p.invol) * sizeof *col);
			/* col[(m, k)][i] = sum_c W[c][(m, k)] X[c][i] */
			gemm_f(g, 1, 0, R, p.invol, Cg, fdata(w) + gi * Cg * R, R, xg, p.invol, col, p.invol);
			for (int64_t m = 0; m < Mg; m++) {
				float bv = b ? fdata(b)[gi * Mg + m] : 0.0f;
				float *ym = yg + m * p.outvol;
				const float *cm = col + m * p.kvol * p.invol;
				for (int64_t o = 0; o < p.outvol; o++)
					ym[o] = bv;
				for (int64_t k0 = 0; k0 < p.k[0]; k0++)
					for (int64_t k1 = 0; k1 < p.k[1]; k1++)
						for (int64_t k2 = 0; k2 < p.k[2]; k2++, cm += p.invol) {
							const float *c = cm;
							for (int64_t i0 = 0; i0 < p.in[0]; i0++) {
								int64_t o0 = i0 * p.s[0] - p.pb[0] + k0 * p.d[0];
								for (int64_t i1 = 0; i1 < p.in[1]; i1++) {
									int64_t o1 = i1 * p.s[1] - p.pb[1] + k1 * p.d[1];
									int ok = o0 >= 0 && o0 < p.out[0] && o1 >= 0 &&
										 o1 < p.out[1];
									float *row = ym + (o0 * p.out[1] + o1) * p.out[2];
									for (int64_t i2 = 0; i2 < p.in[2]; i2++, c++) {
										int64_t o2 = i2 * p.s[2] - p.pb[2] +
											     k2 * p.d[2];
										if (ok && o2 >= 0 && o2 < p.out[2])
											row[o2] += *c;
									}
								}
							}
						}
			}
		}
	free(col);
	return 0;
}
