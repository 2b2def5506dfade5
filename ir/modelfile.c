/* modelfile.c - the .loom model file (ir/model.h): a compiled model
 * written (model_write.c) to and read (model_read.c) from an ELF container
 * with libelf. This file holds the format's description and the tables the
 * writer and the reader share (modelfile.h).
 *
 * The file is ELF64, little endian, ET_REL (nothing is linked or loaded by
 * an ELF loader: the runtime places the sections itself), e_machine EM_NONE
 * (the NPU has no ELF machine number). No program headers. Sections:
 *
 *   .loom.text     PROGBITS  the instructions, 32 bytes each (8 little-endian
 *                            words), every job back to back; sh_addr =
 *                            text_base
 *   .loom.const    PROGBITS  the const region's bytes; sh_addr = const_base
 *   .loom.tensors  PROGBITS  the tensor table (per graph tensor: the tensor
 *                            and its device image, loom_mtensor)
 *   .loom.graph    PROGBITS  the CPU graph: name, path, opset, inputs,
 *                            outputs, nodes with their attributes
 *   .loom.cdata    PROGBITS  the values of the graph tensors that have data,
 *                            in tensor order
 *   .loom.layers   PROGBITS  the layers
 *   .loom.steps    PROGBITS  the steps
 *   .note.loom     NOTE      owner "Loom": the format version, the hardware
 *                            configuration, the compile options, the source
 *                            file, the DRAM map
 *   .shstrtab      STRTAB
 *
 * The payload of the .loom.* sections is a plain little-endian byte stream
 * (no host struct is ever dumped): u8/u32/u64 integers, i32/i64 in two's
 * complement, f32 as its IEEE bits, strings as a u32 length and the bytes
 * (no NUL; length 0xffffffff = a NULL pointer), tensor values element by
 * element in their data type's size. Every section is parsed to its last
 * byte: trailing bytes are an error. Records:
 *
 *   tensors   u32 n; n x { tensor; mtensor }
 *   tensor    str name, u32 dtype, u32 rank, i64 dims[rank], u8 is_const,
 *             u8 has_data (values: in .loom.cdata for graph tensors, inline
 *             after the head for tensor attributes)
 *   mtensor   u8 dev, u8 host, u8 raw, u8 rows, u32 h, w, c, stride, f32 scale, i32 zp, u64 addr
 *   graph     str name, str path, i64 opset, u32 n + i32 inputs[n],
 *             u32 n + i32 outputs[n], u32 nnodes; per node: str name,
 *             op_type, domain, u32 n + i32 inputs[n] (-1: omitted),
 *             u32 n + i32 outputs[n], u32 nattrs; per attribute: str name,
 *             u32 type, the value of that type (f32 | i64 | str |
 *             u8 present + tensor | u32 n + n x f32 / i64 / str)
 *   layers    u32 n; per layer: u32 kind, str name, i32 nodes[4], i32 in[2],
 *             i32 out, u32 insn_first, insn_count, mark_id, u64 macs,
 *             est_cycles, dram_bytes, u32 tile_h, tile_w, tile_c, sp_bytes,
 *             u64 const_off, const_bytes
 *   steps     u32 n; per step: u32 kind, i32 node, i32 tensor, u32 layer,
 *             nlayers, u64 insn_addr, i32 dst, u32 pad[4], i32 fill (a
 *             QUANT into a padded image, loom_step; -1, 0s, 0 otherwise)
 *
 * The notes (owner "Loom", types 0x4c4f0001..5) are readable text where
 * they can be ("key=value" lines): 1 the format version (u32,
 * LOOM_MODEL_VERSION: 2 added the steps' dst, pad and fill; a file of
 * another version is refused naming both), 2 the
 * configuration (config=NAME, fingerprint=0xHEX, then every parameter of
 * hwparams.def by name), 3 the compile options, 4 the source file name (3
 * and 4 absent for NULL), 5 the DRAM map (base, const_base, const_bytes,
 * arena_base, arena_bytes, mark_base, text_base, text_bytes, dram_end,
 * arena_bytes_noreuse). On reading, the configuration is rebuilt with
 * loom_hwcfg_finish and its fingerprint must match the stored one.
 *
 * The reader trusts nothing: the raw ELF header is checked before libelf
 * sees it, every section's type, offset and size, every count against the
 * bytes left (no allocation larger than the file can justify), every index,
 * data type, rank, dim, size, enum and address; a failure is -1 and one
 * message "FILE: SECTION: ITEM: what is wrong". */
#include "ir/modelfile.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const mf_sec mf_sec_info[S_COUNT] = {
	[S_TEXT] = {".loom.text", SHT_PROGBITS},     [S_CONST] = {".loom.const", SHT_PROGBITS},
	[S_TENSORS] = {".loom.tensors", SHT_PROGBITS}, [S_GRAPH] = {".loom.graph", SHT_PROGBITS},
	[S_CDATA] = {".loom.cdata", SHT_PROGBITS},   [S_LAYERS] = {".loom.layers", SHT_PROGBITS},
	[S_STEPS] = {".loom.steps", SHT_PROGBITS},   [S_NOTE] = {".note.loom", SHT_NOTE},
};

const mf_hwparam mf_hwparams[MF_NHWPARAMS] = {
#define LOOM_HWPARAM(n, sv, lo, hi, doc) {#n, offsetof(loom_hwcfg, n)},
#include "loom/hwparams.def"
#undef LOOM_HWPARAM
};

uint32_t mf_hw_get(const loom_hwcfg *c, size_t i)
{
	uint32_t v;
	memcpy(&v, (const char *)c + mf_hwparams[i].off, sizeof v);
	return v;
}

void mf_hw_set(loom_hwcfg *c, size_t i, uint32_t v) { memcpy((char *)c + mf_hwparams[i].off, &v, sizeof v); }

int mf_hw_program(size_t i)
{
	return strcmp(mf_hwparams[i].name, "dram_latency") && strcmp(mf_hwparams[i].name, "dram_bw");
}

const char *const mf_dram_keys[MF_NDRAM_KEYS] = {
#define X(k) #k,
	MF_DRAM_KEYS(X)
#undef X
};

uint64_t *mf_dram_slot(loom_model *m, size_t i)
{
	uint64_t *s[] = {
#define X(k) &m->k,
		MF_DRAM_KEYS(X)
#undef X
	};
	return s[i];
}

int mf_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
