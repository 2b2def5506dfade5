/* prog.c - NPU programs (compiler/npu/npu.h): a growing list of
 * instructions, writing one into device DRAM, printing it, and the cycles
 * of one layer's instructions by the timing model (common/tsim.h). */
#include "compiler/npu/npu_internal.h"
#include "common/tsim.h"

#include <stdio.h>
#include <stdlib.h>

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


uint64_t loom_prog_layer_cycles(const loom_hwcfg *cfg, const loom_insn *in, size_t n, int after_mark)
{
	/* [the MARK before] + the layer + FINISH; the layer's cycles are from
	 * that MARK's record (or the job's START) to its own last record */
	loom_insn *p = malloc((n + 2) * sizeof *p);
	size_t nm = 0, k = 0, mark = n;
	for (size_t i = 0; i < n; i++)
		if (loom_insn_opcode(&in[i]) == LOOM_OP_MARK)
			nm++, mark = i;
	uint64_t *marks = calloc(nm + 2, sizeof *marks), r = 0;
	if (!p || !marks || !nm)
		goto out;
	if (after_mark)
		p[k++] = in[mark];
	for (size_t i = 0; i < n; i++)
		p[k++] = in[i];
	memset(&p[k], 0, sizeof p[k]);
	p[k++].w[0] = LOOM_OP_FINISH;
	loom_timing t;
	loom_timing_init(&t, cfg, 0, 0);
	if (loom_tsim_run(&t, p, k, marks, nm + 1) != LOOM_TDMA_NEVER)
		r = marks[nm - !after_mark] - (after_mark ? marks[0] : 0);
out:
	free(p);
	free(marks);
	return r;
}
