/* gen_dump.c - a generated co-simulation program afterwards (cosim/cosim.h):
 * freeing it, the instruction at a pc, the region holding an address,
 * which bytes are compared, who wrote a DRAM byte, the cycle bound of a
 * run, and the dump of its regions and instructions. */
#include "cosim/gen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ utilities */

void loom_cosim_free(loom_cosim_prog *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nregions; i++)
		free(p->regions[i].init);
	free(p->regions);
	free(p->insns);
	free(p->roles);
	p->regions = NULL;
	p->insns = NULL;
	p->roles = NULL;
	p->nregions = p->ninsns = 0;
}

long loom_cosim_insn_at(const loom_cosim_prog *p, uint64_t pc)
{
	if (pc < p->insn_addr || (pc - p->insn_addr) % 32)
		return -1;
	uint64_t i = (pc - p->insn_addr) / 32;
	return i < p->ninsns ? (long)i : -1;
}

long loom_cosim_region_at(const loom_cosim_prog *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nregions; i++)
		if (addr >= p->regions[i].addr && addr < p->regions[i].addr + p->regions[i].len)
			return (long)i;
	return -1;
}

int loom_cosim_compared(const loom_cosim_region *r, uint32_t off)
{
	if (!r->word_mask)
		return 1;
	return off < LOOM_MARK_BYTES && (r->word_mask >> (off / 4) & 1);
}

struct writer_ctx {
	uint64_t addr;
	int hit;
};

static void writer_cb(void *vc, int space, uint64_t lo, uint64_t hi, int write)
{
	struct writer_ctx *c = vc;
	if (space == DRAM_SPACE && write && c->addr >= lo && c->addr < hi)
		c->hit = 1;
}

long loom_cosim_writer(const loom_cosim_prog *p, uint64_t addr)
{
	/* the configuration only matters for MATMUL footprints, which never
	 * touch DRAM: any valid one will do */
	loom_hwcfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.array_rows = cfg.array_cols = 4;
	for (size_t i = p->ninsns; i-- > 0;) {
		unsigned o = loom_insn_opcode(&p->insns[i]);
		if (o != LOOM_OP_STORE && o != LOOM_OP_MARK)
			continue;
		struct writer_ctx c = {addr, 0};
		gen_footprint(&cfg, &p->insns[i], writer_cb, &c);
		if (c.hit)
			return (long)i;
	}
	return -1;
}

uint64_t loom_cosim_max_cycles(const loom_cosim_prog *p)
{
	uint64_t c = 10 * p->est_cycles;
	return c < 1000000 ? 1000000 : c > 5000000 ? 5000000 : c;
}

const char *loom_cosim_region_kind_name(unsigned kind)
{
	static const char *const n[] = {"code", "input", "output", "mark"};
	return kind < 4 ? n[kind] : "?";
}

const char *loom_cosim_role_name(unsigned role)
{
	static const char *const n[] = {"data", "token", "sync", "ctrl", "bad"};
	return role < 5 ? n[role] : "?";
}

void loom_cosim_dump(const loom_cosim_prog *p, FILE *f)
{
	fprintf(f, "program seed %llu: %zu instructions at 0x%llx, %zu regions, ~%llu cycles (serial estimate)\n",
		(unsigned long long)p->seed, p->ninsns, (unsigned long long)p->insn_addr, p->nregions,
		(unsigned long long)p->est_cycles);
	if (p->bad) {
		if (p->expect_done)
			fprintf(f, "bad program '%s': a legal boundary case, must finish\n", p->what);
		else
			fprintf(f, "bad program '%s': expect %s pc 0x%x info %s\n", p->what, loom_err_name(p->expect_cause),
				p->expect_pc, p->expect_info == LOOM_INFO_NONE ? "0xffff" : loom_field_name(p->expect_info));
	}
	for (size_t i = 0; i < p->nregions; i++) {
		const loom_cosim_region *r = &p->regions[i];
		fprintf(f, "  region %2zu %-6s 0x%08llx..0x%08llx %6u bytes", i, loom_cosim_region_kind_name(r->kind),
			(unsigned long long)r->addr, (unsigned long long)(r->addr + r->len), r->len);
		if (r->word_mask)
			fprintf(f, " words 0x%04x", r->word_mask);
		fprintf(f, "\n");
	}
	char d[256];
	for (size_t i = 0; i < p->ninsns; i++) {
		loom_insn_disasm(&p->insns[i], d, sizeof d);
		fprintf(f, "  %4zu 0x%08llx %-5s %s\n", i, (unsigned long long)loom_cosim_pc(p, i),
			loom_cosim_role_name(p->roles[i]), d);
	}
}
