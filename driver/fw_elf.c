/* fw_elf.c - reading and validating a control-core firmware ELF with
 * libelf (docs/FIRMWARE.md, step 2): ELF32, little endian, EM_RISCV,
 * ET_EXEC, entry point 0, every PT_LOAD segment inside the ITCM or the
 * DTCM (include/loom/core.def), no two overlapping, file offsets and sizes
 * inside the file, p_filesz <= p_memsz. The raw header is checked before
 * libelf sees it, so a truncated or foreign file gets a precise message.
 * Any violation is LOOM_EFW with a message naming the segment and field. */
#include "fw_elf.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/core.h"
#include "loom/loom.h"

static int efail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int efail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen) {
		int n = snprintf(err, errlen, "firmware ELF: ");
		if (n > 0 && (size_t)n < errlen)
			vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	}
	va_end(ap);
	return code;
}

int loom_fw_tcm_of(uint64_t addr, uint64_t len, uint32_t *base, uint32_t *size)
{
	static const uint32_t tcm[2][2] = {
		{LOOM_CORE_ITCM_BASE, LOOM_CORE_ITCM_SIZE},
		{LOOM_CORE_DTCM_BASE, LOOM_CORE_DTCM_SIZE},
	};
	for (int i = 0; i < 2; i++)
		if (addr >= tcm[i][0] && addr - tcm[i][0] <= tcm[i][1] && len <= tcm[i][1] - (addr - tcm[i][0])) {
			*base = tcm[i][0];
			*size = tcm[i][1];
			return 1;
		}
	return 0;
}

void loom_fw_image_free(loom_fw_image *img)
{
	if (!img)
		return;
	for (unsigned i = 0; i < img->nseg; i++)
		free(img->seg[i].data);
	free(img->seg);
	img->seg = NULL;
	img->nseg = 0;
}

/* The identification and the fixed fields of the ELF header, from the raw
 * bytes (before libelf, which would accept a 64-bit or big-endian file). */
static int check_ident(const unsigned char *b, size_t len, char *err, size_t errlen)
{
	if (len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
		return efail(err, errlen, LOOM_EFW, "not an ELF file (%zu bytes, no \\177ELF magic)", len);
	if (b[EI_CLASS] != ELFCLASS32)
		return efail(err, errlen, LOOM_EFW, "e_ident[EI_CLASS] is %u (%s), expected ELFCLASS32", b[EI_CLASS],
			     b[EI_CLASS] == ELFCLASS64 ? "ELFCLASS64" : "invalid");
	if (b[EI_DATA] != ELFDATA2LSB)
		return efail(err, errlen, LOOM_EFW, "e_ident[EI_DATA] is %u (%s), expected ELFDATA2LSB (little endian)",
			     b[EI_DATA], b[EI_DATA] == ELFDATA2MSB ? "big endian" : "invalid");
	if (b[EI_VERSION] != EV_CURRENT)
		return efail(err, errlen, LOOM_EFW, "e_ident[EI_VERSION] is %u, expected %u", b[EI_VERSION], EV_CURRENT);
	if (len < sizeof(Elf32_Ehdr))
		return efail(err, errlen, LOOM_EFW, "truncated: %zu bytes, the ELF header alone is %zu", len,
			     sizeof(Elf32_Ehdr));
	return LOOM_OK;
}

static int check_ehdr(const GElf_Ehdr *eh, size_t len, char *err, size_t errlen)
{
	if (eh->e_machine != EM_RISCV)
		return efail(err, errlen, LOOM_EFW, "e_machine is %u, expected EM_RISCV (%u)", eh->e_machine, EM_RISCV);
	if (eh->e_type != ET_EXEC)
		return efail(err, errlen, LOOM_EFW, "e_type is %u, expected ET_EXEC (%u)", eh->e_type, ET_EXEC);
	if (eh->e_entry != 0)
		return efail(err, errlen, LOOM_EFW, "e_entry is %#llx, expected 0 (the core starts at 0)",
			     (unsigned long long)eh->e_entry);
	if (eh->e_phnum == 0)
		return efail(err, errlen, LOOM_EFW, "no program headers (e_phnum 0)");
	if (eh->e_phentsize != sizeof(Elf32_Phdr))
		return efail(err, errlen, LOOM_EFW, "e_phentsize is %u, expected %zu", eh->e_phentsize, sizeof(Elf32_Phdr));
	if (eh->e_phoff > len || (uint64_t)eh->e_phnum * eh->e_phentsize > len - eh->e_phoff)
		return efail(err, errlen, LOOM_EFW,
			     "truncated: program headers [e_phoff %#llx, +%u x %u bytes) pass the end of the %zu-byte file",
			     (unsigned long long)eh->e_phoff, eh->e_phnum, eh->e_phentsize, len);
	return LOOM_OK;
}

/* One PT_LOAD header against the file and the memory map. */
static int check_phdr(unsigned i, const GElf_Phdr *ph, size_t len, char *err, size_t errlen)
{
	uint32_t base, size;
	if (ph->p_offset > len || ph->p_filesz > len - ph->p_offset)
		return efail(err, errlen, LOOM_EFW,
			     "segment %u: p_offset %#llx + p_filesz %#llx passes the end of the %zu-byte file (truncated?)",
			     i, (unsigned long long)ph->p_offset, (unsigned long long)ph->p_filesz, len);
	if (ph->p_filesz > ph->p_memsz)
		return efail(err, errlen, LOOM_EFW, "segment %u: p_filesz %#llx is larger than p_memsz %#llx", i,
			     (unsigned long long)ph->p_filesz, (unsigned long long)ph->p_memsz);
	if (ph->p_memsz && !loom_fw_tcm_of(ph->p_paddr, ph->p_memsz, &base, &size))
		return efail(err, errlen, LOOM_EFW,
			     "segment %u: p_paddr %#llx + p_memsz %#llx is not inside the ITCM [%#x, %#x) or the DTCM "
			     "[%#x, %#x)",
			     i, (unsigned long long)ph->p_paddr, (unsigned long long)ph->p_memsz, LOOM_CORE_ITCM_BASE,
			     LOOM_CORE_ITCM_BASE + LOOM_CORE_ITCM_SIZE, LOOM_CORE_DTCM_BASE,
			     LOOM_CORE_DTCM_BASE + LOOM_CORE_DTCM_SIZE);
	return LOOM_OK;
}

/* Segments a and b (file indices ia, ib) must not overlap. */
static int check_overlap(const loom_fw_image *img, const unsigned *idx, char *err, size_t errlen)
{
	for (unsigned a = 0; a < img->nseg; a++)
		for (unsigned b = a + 1; b < img->nseg; b++) {
			const loom_fw_seg *x = &img->seg[a], *y = &img->seg[b];
			if (x->addr < y->addr + y->memsz && y->addr < x->addr + x->memsz)
				return efail(err, errlen, LOOM_EFW,
					     "segments %u [%#x, %#x) and %u [%#x, %#x) overlap", idx[a], x->addr,
					     x->addr + x->memsz, idx[b], y->addr, y->addr + y->memsz);
		}
	return LOOM_OK;
}

static int add_seg(loom_fw_image *img, const GElf_Phdr *ph, const unsigned char *file)
{
	loom_fw_seg *s = &img->seg[img->nseg];
	s->addr = (uint32_t)ph->p_paddr;
	s->filesz = (uint32_t)ph->p_filesz;
	s->memsz = (uint32_t)ph->p_memsz;
	s->data = malloc(s->filesz ? s->filesz : 1);
	if (!s->data)
		return -1;
	memcpy(s->data, file + ph->p_offset, s->filesz);
	img->nseg++;
	return 0;
}

/* Every program header: checked, PT_LOAD segments kept. */
static int read_segments(Elf *e, const GElf_Ehdr *eh, const unsigned char *file, size_t len, loom_fw_image *img,
			 char *err, size_t errlen)
{
	unsigned *idx = calloc(eh->e_phnum, sizeof *idx);
	img->seg = calloc(eh->e_phnum, sizeof *img->seg);
	int rc = LOOM_OK;
	if (!idx || !img->seg)
		rc = efail(err, errlen, LOOM_ENOMEM, "out of memory");
	for (unsigned i = 0; rc == LOOM_OK && i < eh->e_phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph)) {
			rc = efail(err, errlen, LOOM_EFW, "segment %u: unreadable program header: %s", i, elf_errmsg(-1));
			break;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		rc = check_phdr(i, &ph, len, err, errlen);
		if (rc == LOOM_OK && ph.p_memsz) {
			idx[img->nseg] = i;
			if (add_seg(img, &ph, file))
				rc = efail(err, errlen, LOOM_ENOMEM, "out of memory");
		}
	}
	if (rc == LOOM_OK && img->nseg == 0)
		rc = efail(err, errlen, LOOM_EFW, "no PT_LOAD segment with p_memsz > 0");
	if (rc == LOOM_OK)
		rc = check_overlap(img, idx, err, errlen);
	free(idx);
	return rc;
}

int loom_fw_parse(const void *elf, size_t len, loom_fw_image *img, char *err, size_t errlen)
{
	if (!img)
		return efail(err, errlen, LOOM_EINVAL, "NULL image");
	memset(img, 0, sizeof *img);
	if (!elf)
		return efail(err, errlen, LOOM_EINVAL, "NULL buffer");
	int rc = check_ident(elf, len, err, errlen);
	if (rc)
		return rc;
	/* libelf's one process-wide setting; always the same value */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return efail(err, errlen, LOOM_EFW, "libelf: %s", elf_errmsg(-1));
	/* elf_memory wants a writable image; it is only read */
	unsigned char *copy = malloc(len);
	if (!copy)
		return efail(err, errlen, LOOM_ENOMEM, "out of memory");
	memcpy(copy, elf, len);
	Elf *e = elf_memory((char *)copy, len);
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		rc = efail(err, errlen, LOOM_EFW, "libelf can not read it: %s", elf_errmsg(-1));
	else if (gelf_getclass(e) != ELFCLASS32)
		rc = efail(err, errlen, LOOM_EFW, "not ELFCLASS32");
	else
		rc = check_ehdr(&eh, len, err, errlen);
	if (rc == LOOM_OK)
		rc = read_segments(e, &eh, copy, len, img, err, errlen);
	if (e)
		elf_end(e);
	free(copy);
	if (rc)
		loom_fw_image_free(img);
	return rc;
}
