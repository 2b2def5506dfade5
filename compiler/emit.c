/* emit.c - emission (compile_internal.h): each NPU job's layers built
 * with the NPU back end (compiler/npu/) at their final addresses, the MARK
 * records, FINISH, and the static verifier over every job. */
#include "compiler/compile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cc_emit(cc *c)
{
	loom_model *m = c->m;
	loom_prog all;
	loom_prog_init(&all);
	uint64_t text = m->mark_base + align64((uint64_t)LOOM_MARK_BYTES * (m->nlayers ? m->nlayers : 1));
	m->text_bytes = 0;
	for (uint32_t s = 0; s < m->nsteps; s++) {
		loom_step *st = &m->steps[s];
		if (st->kind != LOOM_STEP_NPU)
			continue;
		loom_prog p;
		loom_prog_init(&p);
		for (uint32_t li = st->layer; li < st->layer + st->nlayers; li++) {
			lw *l = &c->lo.lws[li];
			loom_layer *L = &m->layers[li];
			uint32_t before = (uint32_t)p.n;
			int rc;
			uint64_t cb = m->const_base + l->const_off;
			uint32_t mark = (uint32_t)(m->mark_base + (uint64_t)LOOM_MARK_BYTES * li);
			if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM) {
				loom_dram_layout lay = {
					.in_addr = (uint32_t)(m->mt[l->in[0]].addr + l->in_off),
					.wgt_addr = (uint32_t)cb,
					.param_addr = (uint32_t)(cb + l->wbytes),
					.out_addr = (uint32_t)(m->mt[l->out].addr + l->out_off),
					.mark_addr = mark,
					.mark_id = li,
				};
				rc = l->kind == LOOM_LAYER_GEMM
					     ? loom_emit_gemm(c->cfg, &l->gp, &l->cplan, &lay, &p, c->err, c->errlen)
					     : loom_emit_conv(c->cfg, &l->cp, &l->cplan, &lay, &p, c->err, c->errlen);
			} else {
				loom_vec_layout lay = {
					.in_addr = (uint32_t)(m->mt[l->in[0]].addr + l->in_off),
					.in2_addr = l->in[1] >= 0 ? (uint32_t)m->mt[l->in[1]].addr : 0,
					.const_addr = (uint32_t)cb,
					.out_addr = (uint32_t)(m->mt[l->out].addr + l->out_off),
					.mark_addr = mark,
					.mark_id = li,
				};
				rc = loom_emit_vec(c->cfg, &l->vp, &l->vplan, &lay, &p, c->err, c->errlen);
			}
			if (rc) {
				loom_prog_free(&p);
				loom_prog_free(&all);
				return cc_fail(c, "node '%s': emission: %.*s", L->name, 200, c->err);
			}
			L->insn_first = (uint32_t)(all.n + before);
			L->insn_count = (uint32_t)(p.n - before);
			L->mark_id = li;
			if (l->kind == LOOM_LAYER_CONV || l->kind == LOOM_LAYER_GEMM) {
				const loom_conv_plan *pl = &l->cplan;
				L->macs = pl->macs;
				/* a job's first layer: timed from the job's START */
				L->est_cycles = li != st->layer ? pl->est_cycles
						: pl->est_first	 ? pl->est_first
								 : loom_conv_plan_first(c->cfg, &l->cp, pl);
				L->dram_bytes = pl->dram_rd_est + pl->out_bytes;
				L->tile_h = pl->th, L->tile_w = pl->tw, L->tile_c = pl->kc * c->cfg->array_rows;
				L->sp_bytes = (uint32_t)(loom_conv_plan_sp_lines(pl) * c->cfg->sp_line_bytes);
			} else {
				const loom_vec_plan *pl = &l->vplan;
				L->macs = l->kind == LOOM_LAYER_DWCONV
						  ? (uint64_t)pl->oh * pl->ow * l->vp.c * l->vp.kh * l->vp.kw
						  : 0;
				L->est_cycles = li != st->layer ? pl->est_cycles
						: pl->est_first	 ? pl->est_first
								 : loom_vec_plan_first(c->cfg, &l->vp, pl);
				L->dram_bytes = pl->dram_rd_est + pl->out_bytes;
				L->tile_h = pl->th, L->tile_w = pl->tw, L->tile_c = pl->kc * c->cfg->array_rows;
				L->sp_bytes = (uint32_t)(loom_vec_plan_sp_lines(pl) * c->cfg->sp_line_bytes);
			}
		}
		if (loom_prog_finish(&p) || loom_prog_verify(c->cfg, &p, c->err, c->errlen)) {
			char e2[200];
			snprintf(e2, sizeof e2, "%s", c->err);
			loom_prog_free(&p);
			loom_prog_free(&all);
			return cc_fail(c, "job of layers %u..%u: %s", st->layer, st->layer + st->nlayers - 1, e2);
		}
		st->insn_addr = text + (uint64_t)all.n * LOOM_INSN_BYTES;
		for (size_t i = 0; i < p.n; i++)
			if (loom_prog_add(&all, &p.insn[i])) {
				loom_prog_free(&p);
				loom_prog_free(&all);
				return cc_fail(c, "out of memory");
			}
		loom_prog_free(&p);
	}
	m->insn = all.insn;
	m->ninsn = (uint32_t)all.n;
	m->base = m->const_base;
	m->text_base = text;
	m->text_bytes = (uint64_t)all.n * LOOM_INSN_BYTES;
	m->dram_end = text + align64(m->text_bytes);
	if (m->dram_end > c->cfg->dram_bytes)
		return cc_fail(c, "the model needs %llu bytes of device DRAM up to 0x%llx; configuration %s has %llu",
			    (unsigned long long)(m->dram_end - m->base), (unsigned long long)m->dram_end, c->cfg->name,
			    (unsigned long long)c->cfg->dram_bytes);
	return 0;
}
