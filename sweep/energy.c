/* energy.c - energy from activity counters (sweep/energy.h). Every event
 * the energy model uses is counted exactly by both backends (docs/ISA.md:
 * MACS, DRAM_*_BYTES and the EVT_* counters); each gets a per-event
 * energy built from the technology file's figures (Horowitz, ISSCC 2014,
 * in configs/tech/45nm.txt) and the configuration's macro sizes:
 *   MAC          an 8-bit multiply and a 32-bit add (the PE's psum adder);
 *   SP line      R bytes from one bank macro of sp_bytes / sp_banks;
 *   ACC line     C 32-bit words, one from each lane macro of acc_lines words;
 *   DRAM byte    an eighth of a 64-bit access;
 *   vector line  R lanes of a multiply and a 32-bit add;
 *   requantized  a 32x32-bit multiply (srdhm) and three 32-bit adds (bias,
 *   value        rounding, zero point).
 * Writes cost what reads cost (the source gives reads only). Not modelled:
 * clock tree, pipeline registers, leakage, the control core. */
#include "sweep/energy.h"

#include <math.h>

void sweep_events_add_job(sweep_events *ev, const uint32_t ctr[LOOM_FW_CTRS], const uint32_t evt[LOOM_FW_EVTS])
{
	ev->macs += (uint64_t)ctr[LOOM_CTR_MACS_HI] << 32 | ctr[LOOM_CTR_MACS_LO];
	ev->dram_rd += ctr[LOOM_CTR_DRAM_RD_BYTES];
	ev->dram_wr += ctr[LOOM_CTR_DRAM_WR_BYTES];
	ev->sp_rd += evt[LOOM_EVT_SP_RD];
	ev->sp_wr += evt[LOOM_EVT_SP_WR];
	ev->acc_rd += evt[LOOM_EVT_ACC_RD];
	ev->acc_wr += evt[LOOM_EVT_ACC_WR];
	ev->vec_lines += evt[LOOM_EVT_VEC_LINES];
	ev->rq_values += evt[LOOM_EVT_RQ_VALUES];
	ev->jobs++;
}

void sweep_events_add(sweep_events *a, const sweep_events *b)
{
	a->macs += b->macs;
	a->dram_rd += b->dram_rd;
	a->dram_wr += b->dram_wr;
	a->sp_rd += b->sp_rd;
	a->sp_wr += b->sp_wr;
	a->acc_rd += b->acc_rd;
	a->acc_wr += b->acc_wr;
	a->vec_lines += b->vec_lines;
	a->rq_values += b->rq_values;
	a->jobs += b->jobs;
}

void sweep_events_add_run(sweep_events *ev, const loom_model *m, const loom_exec_stats *st)
{
	for (uint32_t i = 0; i < m->nsteps; i++)
		if (m->steps[i].kind == LOOM_STEP_NPU)
			sweep_events_add_job(ev, st->steps[i].ctr, st->steps[i].evt);
}

double sweep_sram_e64(const sweep_tech *t, double bytes)
{
	const double s0 = 8192, s1 = 32768, s2 = 1048576;
	double x = log(bytes > 1 ? bytes : 1);
	double x0 = log(s0), y0 = log(t->sram64_8k), x1 = log(s1), y1 = log(t->sram64_32k), x2 = log(s2),
	       y2 = log(t->sram64_1m);
	double y = bytes < s1 ? y0 + (x - x0) * (y1 - y0) / (x1 - x0) : y1 + (x - x1) * (y2 - y1) / (x2 - x1);
	return exp(y);
}

void sweep_energy_of(const sweep_tech *t, const loom_hwcfg *cfg, const sweep_events *ev, sweep_energy *o)
{
	const double R = cfg->array_rows, C = cfg->array_cols;
	o->e_mac = t->mul8 + t->add32;
	o->e_sp_line = 8.0 * R / 64.0 * sweep_sram_e64(t, (double)cfg->sp_bytes / cfg->sp_banks);
	o->e_acc_line = C * 32.0 / 64.0 * sweep_sram_e64(t, 4.0 * cfg->acc_lines);
	o->e_dram_byte = t->dram64 / 8.0;
	o->e_vec_line = R * (t->mul8 + t->add32);
	o->e_rq_value = t->mul32 + 3 * t->add32;
	o->mac = (double)ev->macs * o->e_mac;
	o->sp = (double)(ev->sp_rd + ev->sp_wr) * o->e_sp_line;
	o->acc = (double)(ev->acc_rd + ev->acc_wr) * o->e_acc_line;
	o->sram = o->sp + o->acc;
	o->dram = (double)(ev->dram_rd + ev->dram_wr) * o->e_dram_byte;
	o->vec = (double)ev->vec_lines * o->e_vec_line;
	o->rq = (double)ev->rq_values * o->e_rq_value;
	o->other = o->vec + o->rq;
	o->total = o->mac + o->sram + o->dram + o->other;
}
