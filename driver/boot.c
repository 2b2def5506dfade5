/* boot.c - firmware loading, boot handshake and reset (include/loom/loom.h,
 * docs/FIRMWARE.md): the validated image (fw_elf.c) goes into the TCMs
 * through TCM_ADDR/TCM_DATA and is read back; the boot block and fresh
 * rings go to DRAM; the core is released and its reply checked (ready
 * magic, ABI major, the configuration's fingerprint and array). Reset is a
 * boot with the last options. The steps are here; the device (dev.c) runs
 * them in turn with the jobs' (job.c), declaring every job in flight lost
 * first. */
#include "boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bo.h"
#include "hwio.h"
#include "loom/core.h"
#include "loom/isa.h"

#define DEFAULT_RING_ENTRIES 64u
#define DEFAULT_BOOT_TIMEOUT 2000000ull
#define DEFAULT_SUBMIT_WAIT 1000000000ull
#define DRAIN_ROUNDS 1000
#define DRAIN_CYCLES 100

void loom_boot_init(struct loom_boot *b, struct loom_hwio *io, struct loom_mem *mem)
{
	b->io = io;
	b->mem = mem;
}

void loom_boot_fini(struct loom_boot *b) { loom_fw_image_free(&b->fw); }

void loom_boot_hold(struct loom_boot *b)
{
	loom_hwio_wr32(b->io, LOOM_REG_CORE_CTRL, 0);
	loom_hwio_wr32(b->io, LOOM_REG_IRQ_MASK, 0);
	loom_hwio_wr32(b->io, LOOM_REG_HOST_IRQ_STATUS, 0xffffffffu);
	loom_hwio_wr32(b->io, LOOM_REG_HOST_IRQ_MASK, 0xffffffffu);
	loom_hwio_wr32(b->io, LOOM_REG_MBOX_H2F0, 0);
	loom_hwio_wr32(b->io, LOOM_REG_CTRL, LOOM_CTRL_ABORT);
	/* the abort drains the bus: a bounded wait */
	for (int i = 0; i < DRAIN_ROUNDS && (loom_hwio_rd32(b->io, LOOM_REG_STATUS) & LOOM_STATUS_BUSY); i++)
		loom_hw_run(b->io->hw, DRAIN_CYCLES);
	loom_hwio_wr32(b->io, LOOM_REG_IRQ_STATUS, LOOM_IRQ_DONE | LOOM_IRQ_ERROR);
	loom_hwio_wr32(b->io, LOOM_REG_WIN_CTRL, 0);
	b->booted = 0;
}

/* ---- firmware image ---- */

static int load_image(struct loom_boot *b, const void *elf, size_t len, const char *what)
{
	loom_fw_image img;
	char msg[400];
	int rc = loom_fw_parse(elf, len, &img, msg, sizeof msg);
	if (rc)
		return loom_hwio_fail(b->io, rc, "%s: %s", what, msg);
	loom_fw_image_free(&b->fw);
	b->fw = img;
	return LOOM_OK;
}

int loom_boot_fw_mem(struct loom_boot *b, const void *elf, size_t len)
{
	if (!b)
		return LOOM_EINVAL;
	if (!elf)
		return loom_hwio_fail(b->io, LOOM_EINVAL, "loom_load_firmware_mem: NULL image");
	return load_image(b, elf, len, "firmware image");
}

int loom_boot_fw_file(struct loom_boot *b, const char *path)
{
	if (!b)
		return LOOM_EINVAL;
	if (!path)
		return loom_hwio_fail(b->io, LOOM_EINVAL, "loom_load_firmware: NULL path");
	FILE *f = fopen(path, "rb");
	if (!f)
		return loom_hwio_fail(b->io, LOOM_EIO, "firmware %s: can not open it", path);
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap);
	for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += n;
		if (len == cap) {
			unsigned char *nb = cap < (64u << 20) ? realloc(buf, 2 * cap) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	int rerr = ferror(f);
	fclose(f);
	if (!buf)
		return loom_hwio_fail(b->io, LOOM_ENOMEM, "firmware %s: too large or out of memory", path);
	if (rerr) {
		free(buf);
		return loom_hwio_fail(b->io, LOOM_EIO, "firmware %s: read error", path);
	}
	int rc = load_image(b, buf, len, path);
	free(buf);
	return rc;
}

/* ---- TCMs ---- */

/* The words of one TCM that the image covers, [lo, hi), built in host
 * memory (zero-filled bss and gaps) and written through TCM_DATA, then
 * read back word by word. */
static int write_tcm(struct loom_boot *b, uint32_t tbase)
{
	uint32_t lo = UINT32_MAX, hi = 0, base, size;
	for (unsigned i = 0; i < b->fw.nseg; i++) {
		const loom_fw_seg *g = &b->fw.seg[i];
		if (!loom_fw_tcm_of(g->addr, g->memsz, &base, &size) || base != tbase)
			continue;
		if (g->addr < lo)
			lo = g->addr;
		if (g->addr + g->memsz > hi)
			hi = g->addr + g->memsz;
	}
	if (lo >= hi)
		return LOOM_OK;
	lo &= ~3u;
	hi = (hi + 3) & ~3u;
	uint8_t *img = calloc(1, hi - lo);
	if (!img)
		return loom_hwio_fail(b->io, LOOM_ENOMEM, "firmware: out of memory");
	for (unsigned i = 0; i < b->fw.nseg; i++) {
		const loom_fw_seg *g = &b->fw.seg[i];
		if (g->addr >= lo && g->addr < hi)
			memcpy(img + (g->addr - lo), g->data, g->filesz);
	}
	loom_hwio_wr32(b->io, LOOM_REG_TCM_ADDR, lo);
	for (uint32_t a = 0; a < hi - lo; a += 4)
		loom_hwio_wr32(b->io, LOOM_REG_TCM_DATA,
			       img[a] | (uint32_t)img[a + 1] << 8 | (uint32_t)img[a + 2] << 16 | (uint32_t)img[a + 3] << 24);
	int rc = LOOM_OK;
	for (uint32_t a = 0; a < hi - lo && rc == LOOM_OK; a += 4) {
		uint32_t want = img[a] | (uint32_t)img[a + 1] << 8 | (uint32_t)img[a + 2] << 16 |
				(uint32_t)img[a + 3] << 24;
		loom_hwio_wr32(b->io, LOOM_REG_TCM_ADDR, lo + a);
		uint32_t got = loom_hwio_rd32(b->io, LOOM_REG_TCM_DATA);
		if (got != want)
			rc = loom_hwio_fail(b->io, LOOM_EHW, "firmware: TCM word %#x reads back %#010x, wrote %#010x", lo + a,
					    got, want);
	}
	free(img);
	return rc;
}

/* ---- boot block and rings ---- */

static uint64_t area_bytes(uint32_t n)
{
	return sizeof(loom_fw_boot) + sizeof(loom_ring_hdr) + (uint64_t)n * sizeof(loom_job) +
	       sizeof(loom_ring_hdr) + (uint64_t)n * sizeof(loom_completion);
}

static int place_area(struct loom_boot *b, uint32_t n)
{
	if (b->area && b->entries == n)
		return LOOM_OK;
	loom_bo_free(b->area);
	b->area = NULL;
	int rc = loom_mem_alloc(b->mem, area_bytes(n), 64, 1, 1, &b->area);
	if (rc) {
		char why[sizeof b->io->err];
		memcpy(why, b->io->err, sizeof why);
		return loom_hwio_fail(b->io, rc, "boot: no room for the boot block and rings (%llu bytes): %s",
				      (unsigned long long)area_bytes(n), why);
	}
	b->entries = n;
	b->boot_addr = b->area->addr;
	b->sq_addr = b->boot_addr + sizeof(loom_fw_boot);
	b->cq_addr = b->sq_addr + sizeof(loom_ring_hdr) + (uint64_t)n * sizeof(loom_job);
	return LOOM_OK;
}

/* The block (host fields) and the rings, zeroed. */
static int write_area(struct loom_boot *b)
{
	uint8_t *z = calloc(1, area_bytes(b->entries));
	if (!z)
		return loom_hwio_fail(b->io, LOOM_ENOMEM, "boot: out of memory");
	loom_fw_boot blk;
	memset(&blk, 0, sizeof blk);
	blk.magic = LOOM_FW_BOOT_MAGIC;
	blk.abi_major = (uint16_t)(LOOM_FW_ABI_MAJOR + (b->opts.test & LOOM_BOOT_TEST_ABI_PLUS1 ? 1 : 0));
	blk.abi_minor = LOOM_FW_ABI_MINOR;
	blk.size = sizeof blk;
	blk.sq_entries = b->entries;
	blk.cq_entries = b->entries;
	blk.sq_addr = (uint32_t)b->sq_addr;
	blk.cq_addr = (uint32_t)b->cq_addr;
	blk.watchdog_cycles = b->opts.watchdog_cycles;
	memcpy(z, &blk, sizeof blk);
	int rc = loom_hwio_dram_write(b->io, b->boot_addr, z, area_bytes(b->entries));
	free(z);
	return rc;
}

/* Run until the firmware raises LOOM_HOST_IRQ_BOOT, at most the boot timeout. */
static int await_reply(struct loom_boot *b, uint64_t *took)
{
	uint64_t c0 = loom_hwio_cycles(b->io), bound = b->opts.boot_timeout_cycles;
	int idle = 0;
	for (;;) {
		uint32_t st = loom_hwio_rd32(b->io, LOOM_REG_HOST_IRQ_STATUS);
		uint64_t used = loom_hwio_cycles(b->io) - c0;
		if (st & LOOM_HOST_IRQ_BOOT) {
			loom_hwio_wr32(b->io, LOOM_REG_HOST_IRQ_STATUS, 0xffffffffu);
			*took = used;
			return LOOM_OK;
		}
		if (used >= bound || idle > 1000)
			return loom_hwio_fail(b->io, LOOM_EBOOT,
					      "boot: no reply from the firmware within %llu cycles (core pc %#x, "
					      "CORE_STATUS %#x, MBOX_F2H0 %#x, CORE_TOHOST %#x)",
					      (unsigned long long)used, loom_hwio_rd32(b->io, LOOM_REG_CORE_PC),
					      loom_hwio_rd32(b->io, LOOM_REG_CORE_STATUS),
					      loom_hwio_rd32(b->io, LOOM_REG_MBOX_F2H0),
					      loom_hwio_rd32(b->io, LOOM_REG_CORE_TOHOST));
		if (st)
			loom_hwio_wr32(b->io, LOOM_REG_HOST_IRQ_STATUS, st);
		int rc = loom_hwio_run(b->io, bound - used, &idle, "boot");
		if (rc)
			return rc;
	}
}

static const char *boot_status_name(uint32_t s)
{
	switch (s) {
	case LOOM_FW_BOOT_OK: return "OK";
	case LOOM_FW_BOOT_BAD_MAGIC: return "BAD_MAGIC";
	case LOOM_FW_BOOT_BAD_ABI: return "BAD_ABI";
	case LOOM_FW_BOOT_BAD_BLOCK: return "BAD_BLOCK";
	default: return "unknown";
	}
}

/* MBOX_F2H0 and the reply fields of the block. */
static int check_reply(struct loom_boot *b)
{
	loom_fw_boot *r = &b->reply;
	uint32_t f2h = loom_hwio_rd32(b->io, LOOM_REG_MBOX_F2H0);
	int rc = loom_hwio_dram_read(b->io, b->boot_addr, r, sizeof *r);
	if (rc)
		return rc;
	if (b->opts.test & LOOM_BOOT_TEST_REPLY_ABI)
		r->fw_abi_major++;
	if (f2h != LOOM_FW_READY_MAGIC)
		return loom_hwio_fail(b->io, f2h == LOOM_FW_BOOT_BAD_ABI ? LOOM_EVERSION : LOOM_EBOOT,
				      "boot: the firmware refused the boot block: MBOX_F2H0 %#x (%s); driver ABI %u.%u, "
				      "block abi_major %u, firmware ABI %u.%u",
				      f2h, boot_status_name(f2h), LOOM_FW_ABI_MAJOR, LOOM_FW_ABI_MINOR,
				      LOOM_FW_ABI_MAJOR + (b->opts.test & LOOM_BOOT_TEST_ABI_PLUS1 ? 1 : 0),
				      r->fw_abi_major, r->fw_abi_minor);
	if (r->fw_abi_major != LOOM_FW_ABI_MAJOR)
		return loom_hwio_fail(b->io, LOOM_EVERSION,
				      "boot: firmware ABI %u.%u, driver ABI %u.%u: major versions differ",
				      r->fw_abi_major, r->fw_abi_minor, LOOM_FW_ABI_MAJOR, LOOM_FW_ABI_MINOR);
	if (r->status != LOOM_FW_BOOT_OK)
		return loom_hwio_fail(b->io, LOOM_EBOOT, "boot: ready magic but block status %u (%s)", r->status,
				      boot_status_name(r->status));
	const loom_hwcfg *cfg = loom_hwio_cfg(b->io);
	if (r->hw_fingerprint != cfg->fingerprint)
		return loom_hwio_fail(b->io, LOOM_EBOOT, "boot: the firmware sees fingerprint %08x, configuration %s is %08x",
				      r->hw_fingerprint, cfg->name, cfg->fingerprint);
	uint32_t arr = loom_hwio_rd32(b->io, LOOM_REG_HW_ARRAY);
	if (r->hw_array != arr)
		return loom_hwio_fail(b->io, LOOM_EBOOT, "boot: the firmware sees HW_ARRAY %#x, the host %#x", r->hw_array,
				      arr);
	return LOOM_OK;
}

int loom_boot_have_fw(struct loom_boot *b)
{
	if (!b->fw.nseg)
		return loom_hwio_fail(b->io, LOOM_ESTATE, "boot: no firmware loaded (loom_load_firmware)");
	return LOOM_OK;
}

int loom_boot_load(struct loom_boot *b)
{
	loom_boot_hold(b);
	int rc = place_area(b, b->opts.ring_entries);
	if (!rc)
		rc = write_tcm(b, LOOM_CORE_ITCM_BASE);
	if (!rc)
		rc = write_tcm(b, LOOM_CORE_DTCM_BASE);
	if (!rc)
		rc = write_area(b);
	return rc;
}

int loom_boot_handshake(struct loom_boot *b)
{
	loom_hwio_wr32(b->io, LOOM_REG_MBOX_H2F1, (uint32_t)b->boot_addr);
	loom_hwio_wr32(b->io, LOOM_REG_MBOX_H2F0, LOOM_FW_BOOT_MAGIC);
	loom_hwio_wr32(b->io, LOOM_REG_CORE_CTRL, 1);
	int rc = await_reply(b, &b->boot_cycles);
	if (!rc)
		rc = check_reply(b);
	if (rc) {
		loom_boot_hold(b);
		return rc;
	}
	b->booted = 1;
	return LOOM_OK;
}

static int is_pow2(uint32_t x) { return x && !(x & (x - 1)); }

int loom_boot_set_opts(struct loom_boot *b, const loom_boot_opts *opts)
{
	loom_boot_opts o;
	memset(&o, 0, sizeof o);
	if (opts)
		o = *opts;
	if (!o.ring_entries)
		o.ring_entries = DEFAULT_RING_ENTRIES;
	if (!o.boot_timeout_cycles)
		o.boot_timeout_cycles = DEFAULT_BOOT_TIMEOUT;
	if (!o.submit_wait_cycles)
		o.submit_wait_cycles = DEFAULT_SUBMIT_WAIT;
	if (!is_pow2(o.ring_entries) || o.ring_entries > LOOM_FW_RING_MAX)
		return loom_hwio_fail(b->io, LOOM_EINVAL, "loom_boot: ring_entries %u is not a power of two in 1..%u",
				      o.ring_entries, LOOM_FW_RING_MAX);
	if (o.test & ~(LOOM_BOOT_TEST_ABI_PLUS1 | LOOM_BOOT_TEST_REPLY_ABI))
		return loom_hwio_fail(b->io, LOOM_EINVAL, "loom_boot: unknown test hook bits %#x", o.test);
	b->opts = o;
	b->have_opts = 1;
	return LOOM_OK;
}

int loom_boot_info(struct loom_boot *b, loom_dev_info *info)
{
	if (!b)
		return LOOM_EINVAL;
	if (!info)
		return loom_hwio_fail(b->io, LOOM_EINVAL, "loom_dev_get_info: NULL info");
	memset(info, 0, sizeof *info);
	info->booted = b->booted;
	info->fw_abi_major = b->reply.fw_abi_major;
	info->fw_abi_minor = b->reply.fw_abi_minor;
	info->fw_version = b->reply.fw_version;
	info->caps = b->reply.caps;
	info->hw_array = b->reply.hw_array;
	info->hw_fingerprint = b->reply.hw_fingerprint;
	info->ring_entries = b->entries;
	info->boot_cycles = b->boot_cycles;
	info->boot_addr = (uint32_t)b->boot_addr;
	return LOOM_OK;
}
