/* objdump.c - the text form of a compiled model (loom_model_dump): the
 * header (format version, source, options, configuration, DRAM map), the
 * tensor table, the layers, the steps and the disassembly of every NPU
 * job. `loom objdump` prints it (cmd_objdump.c); the model-file tests and
 * the fuzzer call it on every model they read. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loom/hwcfg.h"
#include "loom/isa.h"
#include "ir/model.h"

static void dump_shape(FILE *f, const loom_tensor *t)
{
	fputc('[', f);
	for (int d = 0; d < t->rank && d < LOOM_MAX_RANK; d++)
		fprintf(f, "%s%" PRId64, d ? "," : "", t->dims[d]);
	fputc(']', f);
}

static const char *tname(const loom_model *m, int t)
{
	if (t < 0 || !m->graph || t >= m->graph->ntensors)
		return "-";
	return m->graph->tensors[t].name ? m->graph->tensors[t].name : "?";
}

static const char *nname(const loom_model *m, int n)
{
	if (n < 0 || !m->graph || n >= m->graph->nnodes)
		return "-";
	return m->graph->nodes[n].name ? m->graph->nodes[n].name : "?";
}

static void dump_header(const loom_model *m, FILE *f)
{
	const loom_graph *g = m->graph;
	fprintf(f, "loom model, format version %" PRIu32 "\n", m->version);
	fprintf(f, "  source:   %s\n", m->source ? m->source : "-");
	fprintf(f, "  options:  %s\n", m->options ? m->options : "-");
	fprintf(f, "  config:   %s (fingerprint %08" PRIx32 "):", m->cfg.name, m->cfg.fingerprint);
#define LOOM_HWPARAM(n, sv, lo, hi, doc) fprintf(f, " %s=%" PRIu32, #n, (uint32_t)m->cfg.n);
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
	fprintf(f, "\n  DRAM:     base   0x%08" PRIx64 "\n", m->base);
	fprintf(f, "            const  [0x%08" PRIx64 ", 0x%08" PRIx64 ") %10" PRIu64 " bytes\n", m->const_base,
		m->const_base + m->const_bytes, m->const_bytes);
	fprintf(f, "            arena  [0x%08" PRIx64 ", 0x%08" PRIx64 ") %10" PRIu64 " bytes (%" PRIu64 " without reuse)\n",
		m->arena_base, m->arena_base + m->arena_bytes, m->arena_bytes, m->arena_bytes_noreuse);
	fprintf(f, "            marks  [0x%08" PRIx64 ", 0x%08" PRIx64 ") %10" PRIu64 " bytes\n", m->mark_base,
		m->mark_base + (uint64_t)LOOM_MARK_BYTES * m->nlayers, (uint64_t)LOOM_MARK_BYTES * m->nlayers);
	fprintf(f, "            text   [0x%08" PRIx64 ", 0x%08" PRIx64 ") %10" PRIu64 " bytes (%" PRIu32 " instructions)\n",
		m->text_base, m->text_base + m->text_bytes, m->text_bytes, m->ninsn);
	fprintf(f, "            end    0x%08" PRIx64 " (%" PRIu64 " bytes from base)\n", m->dram_end, m->dram_end - m->base);
	if (!g)
		return;
	int ncpu = 0;
	for (int k = 0; k < g->nnodes; k++)
		ncpu += g->nodes[k].op_type && strcmp(g->nodes[k].op_type, LOOM_NPU_OP);
	fprintf(f, "  graph:    %s, opset %" PRId64 ", %d tensors, %d nodes (%d on the CPU)\n", g->name ? g->name : "-",
		g->opset, g->ntensors, g->nnodes, ncpu);
	fprintf(f, "  inputs: ");
	for (int i = 0; i < g->ninputs; i++)
		fprintf(f, " %s", tname(m, g->inputs[i]));
	fprintf(f, "\n  outputs:");
	for (int i = 0; i < g->noutputs; i++)
		fprintf(f, " %s", tname(m, g->outputs[i]));
	fprintf(f, "\n");
}

static void dump_tensors(const loom_model *m, FILE *f)
{
	const loom_graph *g = m->graph;
	fprintf(f, "\ntensors:\n  %4s  %-24s %-18s %-7s %-5s %-22s %-12s %4s  %s\n", "idx", "name", "shape", "dtype", "where",
		"image hxwxc/stride", "scale", "zp", "addr");
	for (int i = 0; g && i < g->ntensors; i++) {
		const loom_tensor *t = &g->tensors[i];
		const loom_mtensor *mt = &m->mt[i];
		char shape[128], img[64];
		FILE *s = fmemopen(shape, sizeof shape, "w");
		if (s) {
			dump_shape(s, t);
			fclose(s);
		} else {
			snprintf(shape, sizeof shape, "?");
		}
		const char *where = mt->dev ? (mt->host ? "both" : "dev") : "host";
		fprintf(f, "  %4d  %-24s %-18s %-7s %s", i, t->name ? t->name : "?", shape, loom_dtype_name(t->dtype),
			where);
		if (mt->dev) {
			snprintf(img, sizeof img, "%" PRIu32 "x%" PRIu32 "x%" PRIu32 "/%" PRIu32 "%s", mt->h, mt->w, mt->c,
				 mt->stride, mt->raw ? " int32" : mt->rows ? " rows" : "");
			fprintf(f, "%*s%-22s %-12g %4" PRId32 "  0x%08" PRIx64, 6 - (int)strlen(where), "", img,
				(double)mt->scale, mt->zp, mt->addr);
		}
		if (t->is_const)
			fprintf(f, "  const%s", t->data ? " (data)" : "");
		fprintf(f, "\n");
	}
}

static void dump_layers(const loom_model *m, FILE *f)
{
	fprintf(f, "\nlayers:\n");
	for (uint32_t i = 0; i < m->nlayers; i++) {
		const loom_layer *l = &m->layers[i];
		const char *kn = loom_layer_kind_name(l->kind);
		fprintf(f, "  %3" PRIu32 "  %-7s %s\n", i, kn ? kn : "?", l->name ? l->name : "?");
		fprintf(f, "       nodes:");
		for (int k = 0; k < LOOM_LAYER_MAX_NODES; k++)
			if (l->nodes[k] >= 0)
				fprintf(f, " %s", nname(m, l->nodes[k]));
		fprintf(f, "\n       tensors: %s", tname(m, l->in[0]));
		if (l->in[1] >= 0)
			fprintf(f, ", %s", tname(m, l->in[1]));
		fprintf(f, " -> %s\n", tname(m, l->out));
		fprintf(f, "       insns %" PRIu32 "..%" PRIu32 " (%" PRIu32 "), mark %" PRIu32 ", tile %" PRIu32 "x%" PRIu32
			   "x%" PRIu32 ", sp %" PRIu32 " bytes, const [+0x%" PRIx64 ", %" PRIu64 " bytes]\n",
			l->insn_first, l->insn_first + l->insn_count - (l->insn_count > 0), l->insn_count, l->mark_id,
			l->tile_h, l->tile_w, l->tile_c, l->sp_bytes, l->const_off, l->const_bytes);
		fprintf(f, "       %" PRIu64 " MACs, est %" PRIu64 " cycles, %" PRIu64 " DRAM bytes\n", l->macs,
			l->est_cycles, l->dram_bytes);
	}
}

static void dump_steps(const loom_model *m, FILE *f)
{
	fprintf(f, "\nsteps:\n");
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const loom_step *s = &m->steps[i];
		fprintf(f, "  %3" PRIu32 "  ", i);
		switch (s->kind) {
		case LOOM_STEP_CPU:
			fprintf(f, "cpu     %s (%s)\n", nname(m, s->node),
				s->node >= 0 && m->graph && s->node < m->graph->nnodes ? m->graph->nodes[s->node].op_type : "?");
			break;
		case LOOM_STEP_QUANT:
			if (s->dst >= 0)
				fprintf(f,
					"quant   %s -> dev %s (padded top %" PRIu32 " left %" PRIu32 " bottom %" PRIu32
					" right %" PRIu32 ", border %" PRId32 ")\n",
					tname(m, s->tensor), tname(m, s->dst), s->pad[0], s->pad[1], s->pad[2], s->pad[3],
					s->fill);
			else
				fprintf(f, "quant   %s -> dev\n", tname(m, s->tensor));
			break;
		case LOOM_STEP_DEQUANT:
			fprintf(f, "dequant %s -> host\n", tname(m, s->tensor));
			break;
		case LOOM_STEP_NPU:
			fprintf(f, "npu     job layers %" PRIu32 "..%" PRIu32 " @0x%" PRIx64 "\n", s->layer,
				s->layer + s->nlayers - (s->nlayers > 0), s->insn_addr);
			break;
		default:
			fprintf(f, "?       kind %d\n", s->kind);
			break;
		}
	}
}

/* The instructions of each NPU job: from its address to the next job's (or
 * the end), the layer names as labels. */
static void dump_disasm(const loom_model *m, FILE *f)
{
	char buf[256];
	fprintf(f, "\ndisassembly:\n");
	for (uint32_t i = 0; i < m->nsteps; i++) {
		const loom_step *s = &m->steps[i];
		if (s->kind != LOOM_STEP_NPU || s->insn_addr < m->text_base)
			continue;
		uint64_t first = (s->insn_addr - m->text_base) / LOOM_INSN_BYTES, end = m->ninsn;
		for (uint32_t j = 0; j < m->nsteps; j++) {
			const loom_step *o = &m->steps[j];
			if (o->kind != LOOM_STEP_NPU || o->insn_addr < m->text_base)
				continue;
			uint64_t st = (o->insn_addr - m->text_base) / LOOM_INSN_BYTES;
			if (st > first && st < end)
				end = st;
		}
		fprintf(f, "\njob (step %" PRIu32 ", layers %" PRIu32 "..%" PRIu32 ") @0x%" PRIx64 ":\n", i, s->layer,
			s->layer + s->nlayers - (s->nlayers > 0), s->insn_addr);
		for (uint64_t k = first; k < end; k++) {
			for (uint32_t l = 0; l < m->nlayers; l++)
				if (m->layers[l].insn_first == k && m->layers[l].insn_count)
					fprintf(f, "%s:\n", m->layers[l].name ? m->layers[l].name : "?");
			loom_insn_disasm(&m->insn[k], buf, sizeof buf);
			fprintf(f, "  %08" PRIx64 ":  %s\n", m->text_base + LOOM_INSN_BYTES * k, buf);
		}
	}
}

void loom_model_dump(const loom_model *m, FILE *f)
{
	if (!m || !f)
		return;
	dump_header(m, f);
	dump_tensors(m, f);
	dump_layers(m, f);
	dump_steps(m, f);
	dump_disasm(m, f);
}


