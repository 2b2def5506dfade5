/* verify.c - the static program verifier (loom_prog_verify): every
 * instruction passes the decoder's checks, the dependency tokens balance,
 * and no two instructions that may run at the same time touch the same
 * scratchpad / accumulator lines with a write between them (docs/ISA.md). */
#include "compiler/npu/npu_internal.h"

#include <stdio.h>
#include <stdlib.h>

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
		if (GF(in, STORE_SOURCE) != LOOM_MEM_ACC_RESADD) /* SOURCE 3: N3 is a step */
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
		unsigned src = GF(in, STORE_SOURCE), res = src == LOOM_MEM_ACC_RESADD;
		uint64_t n = (uint64_t)GF(in, STORE_N1) * GF(in, STORE_N2) * (res ? 1 : GF(in, STORE_N3));
		if (!n)
			return;
		add_range(v, src ? SPC_ACC : SPC_SP, 0, GF(in, STORE_MEM_ADDR), n);
		if (src == LOOM_MEM_ACC_REQUANT)
			add_range(v, SPC_ACC, 0, GF(in, STORE_PARAM_ADDR), 3);
		if (src == LOOM_MEM_ACC_RESADD) { /* 4 parameter lines, the residual's SP lines */
			add_range(v, SPC_ACC, 0, GF(in, STORE_PARAM_ADDR), LOOM_RESADD_PARAM_LINES);
			add_range(v, SPC_SP, 0, GF(in, STORE_STRIDE3), (n - 1) * GF(in, STORE_N3) + 1);
		}
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
		npu_fail(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && !finished; i++) {
		const loom_insn *in = &p->insn[i];
		uint32_t field;
		unsigned e = loom_insn_check(cfg, in, &field);
		if (e) {
			loom_insn_disasm(in, d1, sizeof d1);
			npu_fail(err, errlen, "insn %zu (%s): %s, field %s", i, d1, loom_err_name(e),
			     loom_field_name(field));
			goto out;
		}
		unsigned op = loom_insn_opcode(in);
		if (op == LOOM_OP_MARK || op == LOOM_OP_FINISH) {
			static const char *tn[4] = {"L->C", "C->L", "C->S", "S->C"};
			for (int c = 0; c < 4; c++)
				if (npush[c] != npop[c]) {
					npu_fail(err, errlen, "insn %zu (%s): token counter %s holds %zu at the barrier", i,
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
				npu_fail(err, errlen, "insn %zu (%s) pops a token no earlier instruction pushes", i, d1);
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
					npu_fail(err, errlen, "insn %zu: token counter overflow", i);
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
			npu_fail(err, errlen, "race between insn %zu (%s) and insn %zu (%s)", j, d1, i, d2);
			goto out;
		}
	}
	if (!finished) {
		npu_fail(err, errlen, "the program does not end with FINISH");
		goto out;
	}
	rc = 0;
out:
	free(v);
	for (int c = 0; c < 4; c++)
		free(push[c]);
	return rc;
}

