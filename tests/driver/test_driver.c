/* test_driver.c - libloom's own tests, needing no firmware: the firmware
 * ELF validation (driver/fw_elf.c) on hand-made ELF files - good ones, one
 * per rule of docs/FIRMWARE.md step 2 broken, every truncation of a good
 * file, and random byte corruption (never a crash, always OK or LOOM_EFW
 * with a message) - and, on the cmodel backend, the device-level paths
 * that need no firmware: a refused image keeps the old one, booting
 * without firmware, a firmware that never answers, buffer objects.
 * Usage: test_driver; ends with "N passed, M failed". */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/fw_elf.h"
#include "loom/core.h"
#include "loom/loom.h"
#include "tests/unit/check.h"

/* ---- hand-made ELF files ---- */

typedef struct seg_spec {
	uint32_t type, addr, filesz, memsz;
} seg_spec;

typedef struct elf_buf {
	uint8_t b[4096];
	size_t len;
} elf_buf;

/* ELF32 LE RISC-V ET_EXEC, entry 0, the given program headers, segment
 * data (bytes i+1) one after the other behind them. */
static void make_elf(elf_buf *e, const seg_spec *s, unsigned n)
{
	Elf32_Ehdr eh;
	memset(e, 0, sizeof *e);
	memset(&eh, 0, sizeof eh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_RISCV;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof eh;
	eh.e_ehsize = sizeof eh;
	eh.e_phentsize = sizeof(Elf32_Phdr);
	eh.e_phnum = (Elf32_Half)n;
	memcpy(e->b, &eh, sizeof eh);
	size_t off = sizeof eh + n * sizeof(Elf32_Phdr);
	for (unsigned i = 0; i < n; i++) {
		Elf32_Phdr ph;
		memset(&ph, 0, sizeof ph);
		ph.p_type = s[i].type;
		ph.p_offset = (Elf32_Off)off;
		ph.p_vaddr = ph.p_paddr = s[i].addr;
		ph.p_filesz = s[i].filesz;
		ph.p_memsz = s[i].memsz;
		ph.p_flags = PF_R | PF_W | PF_X;
		memcpy(e->b + sizeof eh + i * sizeof ph, &ph, sizeof ph);
		for (uint32_t k = 0; k < s[i].filesz && off + k < sizeof e->b; k++)
			e->b[off + k] = (uint8_t)(i + 1);
		off += s[i].filesz;
	}
	e->len = off;
}

static Elf32_Ehdr *ehdr(elf_buf *e) { return (Elf32_Ehdr *)e->b; }
static Elf32_Phdr *phdr(elf_buf *e, unsigned i) { return (Elf32_Phdr *)(e->b + sizeof(Elf32_Ehdr)) + i; }

/* Parse; LOOM_EFW expected with needle in the message (NULL: LOOM_OK). */
static void expect(elf_buf *e, const char *needle, const char *what)
{
	loom_fw_image img;
	char err[512] = "";
	int rc = loom_fw_parse(e->b, e->len, &img, err, sizeof err);
	if (!needle)
		CHECK(rc == LOOM_OK, "elf: %s: accepted (%u segments)%s%s", what, img.nseg, rc ? " - " : "", err);
	else
		CHECK(rc == LOOM_EFW && strstr(err, needle) && img.nseg == 0, "elf: %s: %s", what,
		      rc ? err : "accepted");
	loom_fw_image_free(&img);
}

static const seg_spec good2[] = {
	{PT_LOAD, 0x0, 64, 64},
	{PT_LOAD, LOOM_CORE_DTCM_BASE, 16, 256}, /* data and bss */
};

static void t_good(void)
{
	elf_buf e;
	make_elf(&e, good2, 2);
	loom_fw_image img;
	char err[256] = "";
	int rc = loom_fw_parse(e.b, e.len, &img, err, sizeof err);
	CHECK(rc == LOOM_OK && img.nseg == 2 && img.seg[0].addr == 0 && img.seg[0].filesz == 64 &&
		      img.seg[1].addr == LOOM_CORE_DTCM_BASE && img.seg[1].filesz == 16 && img.seg[1].memsz == 256 &&
		      img.seg[1].data[0] == 2,
	      "elf: code in ITCM, data+bss in DTCM: two segments as in the file %s", err);
	loom_fw_image_free(&img);
	seg_spec edge[] = {{PT_LOAD, LOOM_CORE_ITCM_SIZE - 8, 8, 8}, {PT_LOAD, 0, 8, 8},
			   {PT_LOAD, LOOM_CORE_DTCM_BASE + LOOM_CORE_DTCM_SIZE - 4, 0, 4},
			   {PT_LOAD, 8, 8, 8} /* adjacent to the second */};
	make_elf(&e, edge, 4);
	expect(&e, NULL, "segments ending exactly at the end of ITCM and DTCM, adjacent ones");
	seg_spec other[] = {{PT_LOAD, 0, 8, 8}, {PT_NOTE, 0x40000000u, 8, 8}, {0x70000003u, 0, 4, 0},
			    {PT_LOAD, 0x20000000u, 0, 0}};
	make_elf(&e, other, 4);
	expect(&e, NULL, "non-PT_LOAD headers and an empty PT_LOAD anywhere are ignored");
}

static void t_header(void)
{
	elf_buf e;
	make_elf(&e, good2, 2);
	e.len = 0;
	expect(&e, "not an ELF", "empty file");
	make_elf(&e, good2, 2);
	e.b[1] = 'X';
	expect(&e, "not an ELF", "bad magic");
	make_elf(&e, good2, 2);
	e.b[EI_CLASS] = ELFCLASS64;
	expect(&e, "EI_CLASS", "ELFCLASS64");
	make_elf(&e, good2, 2);
	e.b[EI_CLASS] = 7;
	expect(&e, "EI_CLASS", "invalid class");
	make_elf(&e, good2, 2);
	e.b[EI_DATA] = ELFDATA2MSB;
	expect(&e, "EI_DATA", "big endian");
	make_elf(&e, good2, 2);
	e.b[EI_VERSION] = 0;
	expect(&e, "EI_VERSION", "EI_VERSION 0");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_machine = EM_ARM;
	expect(&e, "e_machine", "EM_ARM");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_type = ET_REL;
	expect(&e, "e_type", "ET_REL");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_entry = 0x10000000u;
	expect(&e, "e_entry", "entry in DTCM");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_phnum = 0;
	expect(&e, "no program headers", "e_phnum 0");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_phentsize = 40;
	expect(&e, "e_phentsize", "e_phentsize 40");
	make_elf(&e, good2, 2);
	ehdr(&e)->e_phoff = 0xfffffff0u;
	expect(&e, "program headers", "e_phoff past the end");
	seg_spec none[] = {{PT_NOTE, 0, 4, 4}};
	make_elf(&e, none, 1);
	expect(&e, "no PT_LOAD", "no PT_LOAD segment");
}

static void t_segments(void)
{
	elf_buf e;
	seg_spec s[2];
	memcpy(s, good2, sizeof s);
	s[0].addr = LOOM_CORE_NPU_BASE;
	make_elf(&e, s, 2);
	expect(&e, "segment 0: p_paddr 0x20000000", "segment in the NPU registers");
	memcpy(s, good2, sizeof s);
	s[1].addr = LOOM_CORE_DRAM_BASE;
	make_elf(&e, s, 2);
	expect(&e, "segment 1", "segment in DRAM");
	memcpy(s, good2, sizeof s);
	s[0].addr = LOOM_CORE_ITCM_SIZE - 32;
	make_elf(&e, s, 2);
	expect(&e, "not inside the ITCM", "segment straddling the end of ITCM");
	memcpy(s, good2, sizeof s);
	s[1].addr = LOOM_CORE_DTCM_BASE + LOOM_CORE_DTCM_SIZE - 128;
	make_elf(&e, s, 2);
	expect(&e, "DTCM", "bss straddling the end of DTCM");
	memcpy(s, good2, sizeof s);
	s[1].addr = 0xfffffff0u;
	make_elf(&e, s, 2);
	expect(&e, "segment 1", "segment wrapping around 2^32");
	memcpy(s, good2, sizeof s);
	s[1].addr = 32;
	make_elf(&e, s, 2);
	expect(&e, "segments 0 [0, 0x40) and 1 [0x20, 0x120) overlap", "overlapping segments");
	seg_spec same[] = {{PT_LOAD, 0x100, 4, 4}, {PT_LOAD, 0x100, 4, 4}};
	make_elf(&e, same, 2);
	expect(&e, "overlap", "two segments at one address");
	memcpy(s, good2, sizeof s);
	s[1].filesz = 300;
	make_elf(&e, s, 2);
	expect(&e, "p_filesz 0x12c is larger than p_memsz 0x100", "p_filesz > p_memsz");
	make_elf(&e, good2, 2);
	phdr(&e, 1)->p_offset = 0xfffffff0u;
	expect(&e, "segment 1: p_offset", "p_offset past the end of the file");
	make_elf(&e, good2, 2);
	phdr(&e, 0)->p_filesz = phdr(&e, 0)->p_memsz = 0x10000;
	expect(&e, "segment 0: p_offset", "p_filesz past the end of the file");
}

/* Every proper prefix of a good file is refused; random corruption never
 * crashes and gives LOOM_OK or LOOM_EFW with a message. */
static void t_truncate_fuzz(void)
{
	elf_buf e;
	make_elf(&e, good2, 2);
	unsigned refused = 0;
	for (size_t n = 0; n < e.len; n++) {
		loom_fw_image img;
		char err[256] = "";
		refused += loom_fw_parse(e.b, n, &img, err, sizeof err) == LOOM_EFW && err[0];
		loom_fw_image_free(&img);
	}
	CHECK(refused == e.len, "elf: every truncation of a %zu-byte file refused (%u)", e.len, refused);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned ok = 0, efw = 0, other = 0;
	for (int t = 0; t < 5000; t++) {
		elf_buf m;
		make_elf(&m, good2, 2);
		for (int k = 0; k < 1 + t % 4; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t at = (x >> 8) % (t % 2 ? 52 + 64 : m.len); /* headers mostly */
			m.b[at] ^= (uint8_t)(1u << (x % 8));
		}
		loom_fw_image img;
		char err[256] = "";
		int rc = loom_fw_parse(m.b, m.len, &img, err, sizeof err);
		if (rc == LOOM_OK)
			ok++;
		else if (rc == LOOM_EFW && err[0])
			efw++;
		else
			other++;
		loom_fw_image_free(&img);
	}
	CHECK(other == 0 && efw > 0, "elf: 5000 corrupted files: %u accepted, %u refused with a message, %u other",
	      ok, efw, other);
	CHECK(loom_fw_parse(NULL, 10, &(loom_fw_image){0}, NULL, 0) == LOOM_EINVAL &&
		      loom_fw_parse(e.b, e.len, NULL, NULL, 0) == LOOM_EINVAL,
	      "elf: NULL buffer or image: LOOM_EINVAL (and a NULL message buffer is fine)");
}

/* ---- device paths without firmware (cmodel) ---- */

static void t_device(void)
{
	loom_dev *d = NULL;
	char err[512] = "";
	int rc = loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "small"}, &d, err, sizeof err);
	CHECK(rc == LOOM_OK && d, "device: open cmodel/small %s", err);
	if (!d)
		return;
	CHECK(loom_boot(d, NULL) == LOOM_ESTATE && strstr(loom_errmsg(d), "no firmware"),
	      "device: boot without firmware: %s", loom_errmsg(d));
	elf_buf e;
	/* `j .` at 0: valid, never answers */
	seg_spec spin[] = {{PT_LOAD, 0, 4, 4}};
	make_elf(&e, spin, 1);
	const uint32_t j_self = 0x0000006fu;
	memcpy(e.b + phdr(&e, 0)->p_offset, &j_self, 4);
	CHECK(loom_load_firmware_mem(d, e.b, e.len) == LOOM_OK, "device: load a spinning one-instruction image");
	seg_spec bad[] = {{PT_LOAD, 0x30000000u, 4, 4}};
	elf_buf b;
	make_elf(&b, bad, 1);
	rc = loom_load_firmware_mem(d, b.b, b.len);
	CHECK(rc == LOOM_EFW && strstr(loom_errmsg(d), "segment 0"), "device: a bad image is refused: %s",
	      loom_errmsg(d));
	rc = loom_boot(d, &(loom_boot_opts){.boot_timeout_cycles = 20000, .ring_entries = 2});
	CHECK(rc == LOOM_EBOOT && strstr(loom_errmsg(d), "no reply"),
	      "device: the old (spinning) image is what boots, and gets no reply: %s", loom_errmsg(d));
	uint64_t id;
	loom_job_desc jd = {.insn_addr = 0};
	CHECK(loom_submit(d, &jd, 0, &id) == LOOM_ESTATE, "device: no submission after a failed boot");
	CHECK(loom_reset(d) == LOOM_EBOOT, "device: reset boots the same image again (no reply again)");
	loom_bo *bos[8];
	int n = 0;
	while (n < 8 && loom_bo_alloc(d, 1000, 256, &bos[n]) == LOOM_OK)
		n++;
	int sorted = n == 8;
	for (int i = 1; i < n; i++)
		sorted &= loom_bo_addr(bos[i]) >= loom_bo_addr(bos[i - 1]) + 1000 && loom_bo_addr(bos[i]) % 256 == 0;
	CHECK(sorted, "device: 8 buffers of 1000 bytes aligned to 256, first fit, no overlap");
	loom_bo_free(bos[3]);
	loom_bo *again = NULL;
	rc = loom_bo_alloc(d, 1000, 256, &again);
	CHECK(rc == LOOM_OK && again && loom_bo_addr(again) == 3 * 1024, "device: a freed gap is reused (at %#llx)",
	      (unsigned long long)loom_bo_addr(again));
	uint8_t w[1000], r[1000];
	for (int i = 0; i < 1000; i++)
		w[i] = (uint8_t)(i * 7);
	CHECK(again && loom_bo_write(again, 0, w, sizeof w) == LOOM_OK && loom_bo_read(again, 0, r, sizeof r) == LOOM_OK &&
		      !memcmp(w, r, sizeof w),
	      "device: buffer write and read back");
	/* buffers left allocated are freed by loom_close (ASan checks) */
	loom_close(d);
	loom_dev *two[2] = {NULL, NULL};
	for (int i = 0; i < 2; i++)
		loom_open(&(loom_open_opts){.backend = "cmodel", .hw = "default"}, &two[i], err, sizeof err);
	loom_bo *x = NULL, *y = NULL;
	int ok = two[0] && two[1] && !loom_bo_alloc_at(two[0], 0x4000, 64, &x) && !loom_bo_alloc_at(two[1], 0x4000, 64, &y);
	ok = ok && !loom_bo_write(x, 0, "first device", 13) && !loom_bo_write(y, 0, "second device", 14);
	char bx[16] = "", by[16] = "";
	ok = ok && !loom_bo_read(x, 0, bx, 13) && !loom_bo_read(y, 0, by, 14) && !strcmp(bx, "first device") &&
	     !strcmp(by, "second device");
	CHECK(ok, "device: two devices in one process keep their own DRAM and allocations");
	loom_close(two[0]);
	loom_close(two[1]);
}

int main(void)
{
	check_init(0);
	t_good();
	t_header();
	t_segments();
	t_truncate_fuzz();
	t_device();
	return check_report();
}
